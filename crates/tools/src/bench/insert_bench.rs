//! `insert-benchmark`: the steps of the Insert Benchmark (mdcallag's iibench.py), one table
//! and one set of connections per client, plain text SQL, autocommit.
//!
//! Steps: l.i0 (load in PK order, 100-row inserts), l.x (three secondary indexes), l.i1 (50
//! rows per commit, deletes of the oldest rows at the same rate), l.i2 (5 rows per commit,
//! same), then qr100, qp100, qr500, qp500, qr1000, qp1000: range queries on a covering
//! secondary index (qr) or PK point queries (qp) as fast as possible while a second
//! connection inserts and a third deletes at 100/500/1000 rows/s per client.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::Conn;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::systems::{Delta, Server, SystemKind};

#[derive(Clone, Debug)]
pub struct IbOpts {
    pub clients: usize,
    pub rows_i0: u64,
    pub rows_i1: u64,
    pub rows_i2: u64,
    pub query_secs: f64,
    pub rates: Vec<u64>,
    /// Rows per insert statement in the query steps' background inserts.
    pub bg_rows_per_commit: u64,
    /// Seconds of idle wait between l.i2 and the query steps (None: [`IbOpts::settle_secs`]'s
    /// default, a function of the table size).
    pub settle_secs: Option<f64>,
}

impl IbOpts {
    /// The wait after l.i2. The public benchmark waits "S seconds after the step finishes to
    /// reduce variance during the read-write benchmark steps that follow", S a function of
    /// the table size: the time MVCC GC (InnoDB's purge), page write-back and compaction get
    /// to pay the load steps' debt before queries are measured. Here: 5 s plus 1 s per
    /// 100,000 rows loaded across all tables, at most 1200 s.
    pub fn settle_secs(&self) -> f64 {
        self.settle_secs_at(self.clients)
    }

    /// [`IbOpts::settle_secs`] with `clients` tables.
    pub fn settle_secs_at(&self, clients: usize) -> f64 {
        self.settle_secs.unwrap_or_else(|| {
            (5.0 + (self.rows_i0 * clients as u64) as f64 / 100_000.0).min(1200.0)
        })
    }
}

#[derive(Clone, Debug)]
pub struct StepResult {
    pub system: SystemKind,
    pub delay_us: u64,
    pub clients: usize,
    pub step: String,
    /// Rows inserted (l.i0, l.i1, l.i2), rows indexed (l.x), or queries (qr*, qp*).
    pub ops: u64,
    pub secs: f64,
    /// Background insert target per client (query steps).
    pub target_rate: Option<u64>,
    /// Achieved background insert rate per client (query steps).
    pub bg_insert_rate: Option<f64>,
    pub delta: Delta,
}

impl StepResult {
    pub fn rate(&self) -> f64 {
        self.ops as f64 / self.secs.max(1e-9)
    }
    /// The background insert rate met 95% of its target.
    pub fn sla_met(&self) -> Option<bool> {
        match (self.target_rate, self.bg_insert_rate) {
            (Some(t), Some(r)) => Some(r >= 0.95 * t as f64),
            _ => None,
        }
    }
    pub fn fsyncs_per_op(&self) -> f64 {
        self.delta.fsyncs as f64 / self.ops.max(1) as f64
    }
    pub fn cpu_us_per_op(&self) -> f64 {
        self.delta.cpu_secs * 1e6 / self.ops.max(1) as f64
    }
    pub fn kb_written_per_op(&self) -> f64 {
        self.delta.write_bytes as f64 / 1024.0 / self.ops.max(1) as f64
    }
}

/// The step names in order.
pub fn step_names(rates: &[u64]) -> Vec<String> {
    let mut v: Vec<String> = ["l.i0", "l.x", "l.i1", "l.i2"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for r in rates {
        v.push(format!("qr{r}"));
        v.push(format!("qp{r}"));
    }
    v
}

/// iibench-style row values for `n` rows.
pub fn row_values(rng: &mut impl Rng, n: u64) -> String {
    let mut s = String::with_capacity(n as usize * 64);
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        let data: String = (0..10)
            .map(|_| (b'a' + rng.gen_range(0..26u8)) as char)
            .collect();
        s.push_str(&format!(
            "(NOW(),{},{},{},{},'{}')",
            rng.gen_range(0..1000),
            rng.gen_range(0..100_000),
            rng.gen_range(0..10_000),
            rng.gen_range(0..500_000),
            data
        ));
    }
    s
}

fn insert_sql(t: usize, rng: &mut impl Rng, n: u64) -> String {
    format!(
        "INSERT INTO ib{t} (dateandtime, cashregisterid, customerid, productid, price, data) VALUES {}",
        row_values(rng, n)
    )
}

/// Inserts one batch; returns the largest id it created.
fn insert_batch(c: &mut Conn, t: usize, rng: &mut impl Rng, n: u64) -> Result<u64, String> {
    c.query_drop(insert_sql(t, rng, n))
        .map_err(|e| format!("insert into ib{t}: {e}"))?;
    Ok(c.last_insert_id() + n - 1)
}

/// Per-table shared state between the inserter, the deleter and the querier.
struct TableState {
    max_id: AtomicU64,
    min_id: AtomicU64,
    inserted_batches: AtomicU64,
    inserted_rows: AtomicU64,
    inserter_done: AtomicBool,
    /// Wakes the deleter when a batch is inserted (it deletes at the inserter's pace).
    wake: (std::sync::Mutex<()>, std::sync::Condvar),
}

impl TableState {
    /// Counts an inserted batch and wakes the deleter.
    fn batch_inserted(&self) {
        self.inserted_batches.fetch_add(1, Ordering::Relaxed);
        self.wake_deleter();
    }

    fn inserter_finished(&self) {
        self.inserter_done.store(true, Ordering::Relaxed);
        self.wake_deleter();
    }

    fn wake_deleter(&self) {
        let _g = self.wake.0.lock().unwrap();
        self.wake.1.notify_all();
    }
}

fn progress(label: &str, done: &AtomicU64, total: Option<u64>, start: Instant, last: &mut Instant) {
    if last.elapsed() >= Duration::from_secs(5) {
        *last = Instant::now();
        let d = done.load(Ordering::Relaxed);
        let rate = d as f64 / start.elapsed().as_secs_f64().max(1e-9);
        match total {
            Some(t) => eprintln!("    {label}: {d}/{t} rows, {rate:.0}/s"),
            None => eprintln!("    {label}: {d} ops, {rate:.0}/s"),
        }
    }
}

/// Runs every step on a fresh set of tables.
pub fn run(server: &mut Server, o: &IbOpts) -> Result<Vec<StepResult>, String> {
    let states = create_tables(server, o)?;
    let mut out = Vec::new();
    let mut record = |server: &Server, step: &str, ops: u64, delta: Delta, target, bg| {
        let r = StepResult {
            system: server.kind,
            delay_us: server.delay_us,
            clients: o.clients,
            step: step.to_string(),
            ops,
            secs: delta.secs,
            target_rate: target,
            bg_insert_rate: bg,
            delta,
        };
        say(&r);
        out.push(r);
    };
    let (ops, delta) = step_i0(server, o, &states)?;
    record(server, "l.i0", ops, delta, None, None);
    for (t, st) in states.iter().enumerate() {
        let mut c = server.conn()?;
        let min: Option<u64> = c
            .query_first(format!("SELECT MIN(transactionid) FROM ib{t}"))
            .map_err(|e| e.to_string())?
            .flatten();
        st.min_id.store(min.unwrap_or(1), Ordering::Relaxed);
    }
    let delta = step_create_indexes(server, o)?;
    record(
        server,
        "l.x",
        o.rows_i0 * o.clients as u64,
        delta,
        None,
        None,
    );
    for (step, rows, per) in [("l.i1", o.rows_i1, 50u64), ("l.i2", o.rows_i2, 5u64)] {
        let (ops, delta) = step_insert_delete(server, o, &states, step, rows, per)?;
        record(server, step, ops, delta, None, None);
    }
    if !o.rates.is_empty() {
        settle(server, o.settle_secs());
    }
    for &rate in &o.rates {
        for kindq in ["qr", "qp"] {
            let step = format!("{kindq}{rate}");
            let (ops, delta, bg) = step_query(server, o, &states, &step, rate, kindq == "qp")?;
            record(server, &step, ops, delta, Some(rate), Some(bg));
        }
    }
    Ok(out)
}

/// Creates one table per client (dropping an old one) and the state its workers share.
fn create_tables(server: &mut Server, o: &IbOpts) -> Result<Vec<Arc<TableState>>, String> {
    for t in 0..o.clients {
        server.exec(&format!("DROP TABLE IF EXISTS bench.ib{t}"))?;
        server.exec(&format!(
            "CREATE TABLE bench.ib{t} (transactionid BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, \
             dateandtime DATETIME, cashregisterid INT, customerid INT, productid INT, price INT, \
             data VARCHAR(4000))"
        ))?;
    }
    Ok((0..o.clients)
        .map(|_| {
            Arc::new(TableState {
                max_id: AtomicU64::new(0),
                min_id: AtomicU64::new(1),
                inserted_batches: AtomicU64::new(0),
                inserted_rows: AtomicU64::new(0),
                inserter_done: AtomicBool::new(false),
                wake: Default::default(),
            })
        })
        .collect())
}

/// Prints a step's line of results.
fn say(r: &StepResult) {
    let extra = match (r.bg_insert_rate, r.sla_met()) {
        (Some(b), Some(ok)) => format!(
            " bg inserts {b:.0}/s/client (SLA {})",
            if ok { "met" } else { "FAILED" }
        ),
        _ => String::new(),
    };
    eprintln!(
        "  insert-bench {:<16} delay={}us clients={} {:<7} {:>9.0}/s fsync/op={:.3} cpu_us/op={:.0} KB/op={:.2}{extra}",
        r.system.name(),
        r.delay_us,
        r.clients,
        r.step,
        r.rate(),
        r.fsyncs_per_op(),
        r.cpu_us_per_op(),
        r.kb_written_per_op()
    );
}

/// l.i0: each client loads its table in batches of 100 rows, in primary-key order.
fn step_i0(
    server: &mut Server,
    o: &IbOpts,
    states: &[Arc<TableState>],
) -> Result<(u64, Delta), String> {
    let done = Arc::new(AtomicU64::new(0));
    let (before, after) = parallel(
        server,
        o.clients,
        |t, mut c, _| {
            let st = states[t].clone();
            let done = done.clone();
            let rows = o.rows_i0;
            move || -> Result<(), String> {
                let mut rng = StdRng::seed_from_u64(t as u64);
                let mut n = 0;
                while n < rows {
                    let b = (rows - n).min(100);
                    let max = insert_batch(&mut c, t, &mut rng, b)?;
                    st.max_id.store(max, Ordering::Relaxed);
                    n += b;
                    done.fetch_add(b, Ordering::Relaxed);
                }
                Ok(())
            }
        },
        Some((&*done, o.rows_i0 * o.clients as u64, "l.i0")),
    )?;
    Ok((
        done.load(Ordering::Relaxed),
        Delta::between(&before, &after),
    ))
}

/// l.x: each client creates three secondary indexes on its table.
fn step_create_indexes(server: &mut Server, o: &IbOpts) -> Result<Delta, String> {
    let (before, after) = parallel(
        server,
        o.clients,
        |t, mut c, _| {
            move || -> Result<(), String> {
                for sql in [
                    format!("CREATE INDEX marketsegment ON ib{t} (productid, customerid, price)"),
                    format!(
                        "CREATE INDEX registersegment ON ib{t} (cashregisterid, customerid, price)"
                    ),
                    format!("CREATE INDEX pdc ON ib{t} (price, dateandtime, customerid)"),
                ] {
                    c.query_drop(&sql).map_err(|e| format!("{sql}: {e}"))?;
                }
                Ok(())
            }
        },
        None,
    )?;
    Ok(Delta::between(&before, &after))
}

/// l.i1 / l.i2: per table, one client inserts `rows` rows `per` to a commit while another
/// deletes as many from the old end.
fn step_insert_delete(
    server: &mut Server,
    o: &IbOpts,
    states: &[Arc<TableState>],
    step: &str,
    rows: u64,
    per: u64,
) -> Result<(u64, Delta), String> {
    let done = Arc::new(AtomicU64::new(0));
    for st in states {
        st.inserted_batches.store(0, Ordering::Relaxed);
        st.inserter_done.store(false, Ordering::Relaxed);
    }
    let (before, after) = parallel(
        server,
        o.clients * 2,
        |i, mut c, _| {
            let t = i / 2;
            let st = states[t].clone();
            let done = done.clone();
            move || -> Result<(), String> {
                if i % 2 == 0 {
                    let mut rng = StdRng::seed_from_u64(1000 + i as u64);
                    let mut n = 0;
                    while n < rows {
                        let max = insert_batch(&mut c, t, &mut rng, per)?;
                        st.max_id.store(max, Ordering::Relaxed);
                        st.batch_inserted();
                        n += per;
                        done.fetch_add(per, Ordering::Relaxed);
                    }
                    st.inserter_finished();
                    Ok(())
                } else {
                    deleter(&mut c, t, &st, per, None)
                }
            }
        },
        Some((&*done, rows * o.clients as u64, step)),
    )?;
    Ok((
        done.load(Ordering::Relaxed),
        Delta::between(&before, &after),
    ))
}

/// qr / qp at `rate`: per table, one client queries (range or point) as fast as it can
/// for the step's time while another inserts at `rate` rows/s and a third deletes; returns
/// the queries, the counters and the background insert rate per client.
fn step_query(
    server: &mut Server,
    o: &IbOpts,
    states: &[Arc<TableState>],
    step: &str,
    rate: u64,
    point: bool,
) -> Result<(u64, Delta, f64), String> {
    let queries = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    for st in states {
        st.inserted_batches.store(0, Ordering::Relaxed);
        st.inserted_rows.store(0, Ordering::Relaxed);
        st.inserter_done.store(false, Ordering::Relaxed);
    }
    let per = o.bg_rows_per_commit.max(1);
    let secs = o.query_secs;
    let (before, after) = parallel(
        server,
        o.clients * 3,
        |i, mut c, start| {
            let t = i / 3;
            let st = states[t].clone();
            let queries = queries.clone();
            let stop = stop.clone();
            move || -> Result<(), String> {
                let mut rng = StdRng::seed_from_u64(7000 + i as u64);
                match i % 3 {
                    0 => {
                        // Queries as fast as possible until the time is up.
                        let deadline = start + Duration::from_secs_f64(secs);
                        while Instant::now() < deadline {
                            let sql = if point {
                                let lo = st.min_id.load(Ordering::Relaxed);
                                let hi = st.max_id.load(Ordering::Relaxed).max(lo);
                                format!(
                                    "SELECT * FROM ib{t} WHERE transactionid = {}",
                                    rng.gen_range(lo..=hi)
                                )
                            } else {
                                format!(
                                "SELECT price, dateandtime, customerid FROM ib{t} FORCE INDEX (pdc) \
                                 WHERE price >= {} ORDER BY price, dateandtime, customerid LIMIT 10",
                                rng.gen_range(0..500_000)
                            )
                            };
                            let _rows: Vec<mysql::Row> =
                                c.query(&sql).map_err(|e| format!("{sql}: {e}"))?;
                            queries.fetch_add(1, Ordering::Relaxed);
                        }
                        stop.store(true, Ordering::Relaxed);
                        Ok(())
                    }
                    1 => {
                        // Rate-limited inserts: batch k is due at start + k*per/rate.
                        let mut k: u64 = 0;
                        let end = start + Duration::from_secs_f64(secs);
                        loop {
                            let due = start
                                + Duration::from_secs_f64(k as f64 * per as f64 / rate as f64);
                            if due >= end || stop.load(Ordering::Relaxed) {
                                break;
                            }
                            let now = Instant::now();
                            if due > now {
                                std::thread::sleep(due - now);
                            }
                            let max = insert_batch(&mut c, t, &mut rng, per)?;
                            st.max_id.store(max, Ordering::Relaxed);
                            st.batch_inserted();
                            st.inserted_rows.fetch_add(per, Ordering::Relaxed);
                            k += 1;
                        }
                        st.inserter_finished();
                        Ok(())
                    }
                    _ => deleter(&mut c, t, &st, per, Some(&stop)),
                }
            }
        },
        Some((&*queries, 0, step)),
    )?;
    let delta = Delta::between(&before, &after);
    let ins: u64 = states
        .iter()
        .map(|s| s.inserted_rows.load(Ordering::Relaxed))
        .sum();
    // The inserters' window is the step's nominal duration.
    let bg = ins as f64 / o.query_secs.max(1e-9) / o.clients as f64;
    Ok((queries.load(Ordering::Relaxed), delta, bg))
}

/// Waits `secs` with no client work (between l.i2 and the query steps) and says how much CPU
/// the server used meanwhile, in all and in the last second: what was left of the load
/// steps' background work.
fn settle(server: &mut Server, secs: f64) {
    if secs <= 0.0 {
        return;
    }
    let pid = server.pid();
    let start = Instant::now();
    let (cpu0, _) = super::systems::proc_usage(pid);
    let mut last = cpu0;
    let mut last_second = 0.0;
    while start.elapsed().as_secs_f64() < secs {
        let left = secs - start.elapsed().as_secs_f64();
        std::thread::sleep(Duration::from_secs_f64(left.clamp(0.0, 1.0)));
        let (cpu, _) = super::systems::proc_usage(pid);
        last_second = cpu - last;
        last = cpu;
    }
    eprintln!(
        "  insert-bench settle {secs:.0} s after l.i2: server CPU {:.1} s (last second {last_second:.2})",
        last - cpu0
    );
}

/// Deletes the oldest rows, one batch of `per` per inserted batch, until the inserter is done
/// and the deleter has caught up (or `stop` is set).
fn deleter(
    c: &mut Conn,
    t: usize,
    st: &TableState,
    per: u64,
    stop: Option<&AtomicBool>,
) -> Result<(), String> {
    let mut deleted: u64 = 0;
    loop {
        let ins = st.inserted_batches.load(Ordering::Relaxed);
        if deleted < ins {
            let lo = st.min_id.load(Ordering::Relaxed);
            let sql = format!(
                "DELETE FROM ib{t} WHERE transactionid >= {lo} AND transactionid < {}",
                lo + per
            );
            c.query_drop(&sql).map_err(|e| format!("{sql}: {e}"))?;
            st.min_id.store(lo + per, Ordering::Relaxed);
            deleted += 1;
            continue;
        }
        // Checked under the lock the inserter notifies with, so no wake-up is missed.
        let g = st.wake.0.lock().unwrap();
        if st.inserted_batches.load(Ordering::Relaxed) > deleted {
            continue;
        }
        if st.inserter_done.load(Ordering::Relaxed)
            || stop.is_some_and(|s| s.load(Ordering::Relaxed))
        {
            return Ok(());
        }
        // The timeout only bounds how late `stop` is noticed.
        drop(st.wake.1.wait_timeout(g, Duration::from_millis(5)).unwrap());
    }
}

/// Runs `n` workers, each with its own connection, from a common start; returns the server
/// snapshots taken just before the start and after the last worker finished.
fn parallel<F, W>(
    server: &mut Server,
    n: usize,
    make: F,
    progress_of: Option<(&AtomicU64, u64, &str)>,
) -> Result<(super::systems::Snapshot, super::systems::Snapshot), String>
where
    F: Fn(usize, Conn, Instant) -> W,
    W: FnOnce() -> Result<(), String> + Send + 'static,
{
    let barrier = Arc::new(Barrier::new(n + 1));
    let mut conns = Vec::new();
    for _ in 0..n {
        conns.push(server.conn()?);
    }
    // Workers learn the common start through the barrier; give them a start slightly ahead.
    let start = Instant::now() + Duration::from_millis(20);
    let mut handles = Vec::new();
    for (i, c) in conns.into_iter().enumerate() {
        let w = make(i, c, start);
        let b = barrier.clone();
        handles.push(std::thread::spawn(move || {
            b.wait();
            let now = Instant::now();
            if start > now {
                std::thread::sleep(start - now);
            }
            w()
        }));
    }
    let before = server.snapshot();
    barrier.wait();
    let t0 = Instant::now();
    let mut last = Instant::now();
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(20));
        if let Some((done, total, label)) = progress_of {
            progress(label, done, (total > 0).then_some(total), t0, &mut last);
        }
    }
    let mut err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => err = Some(e),
            Err(_) => err = Some("worker thread panicked".into()),
        }
    }
    let after = server.snapshot();
    match err {
        Some(e) => Err(e),
        None => Ok((before, after)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_in_order() {
        assert_eq!(
            step_names(&[100, 500]),
            vec!["l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500"]
        );
    }

    #[test]
    fn settle_grows_with_the_rows_loaded() {
        let o = |clients, rows_i0, settle_secs| IbOpts {
            clients,
            rows_i0,
            rows_i1: 0,
            rows_i2: 0,
            query_secs: 1.0,
            rates: vec![100],
            bg_rows_per_commit: 10,
            settle_secs,
        };
        assert_eq!(o(1, 100_000, None).settle_secs(), 6.0);
        assert_eq!(o(16, 100_000, None).settle_secs(), 21.0);
        assert_eq!(o(16, 100_000_000, None).settle_secs(), 1200.0);
        assert_eq!(o(16, 100_000, Some(0.0)).settle_secs(), 0.0);
    }

    #[test]
    fn values_shape() {
        let mut rng = StdRng::seed_from_u64(1);
        let v = row_values(&mut rng, 3);
        assert_eq!(v.matches("(NOW(),").count(), 3);
        assert_eq!(v.matches("),(").count(), 2);
    }
}
