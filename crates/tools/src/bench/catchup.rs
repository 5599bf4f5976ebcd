//! `catchup`: how fast a replica applies a primary's backlog, and how far it lags under a
//! steady load.
//!
//! Per workload and primary (onelogd or MariaDB 10.11, +`delay_us` on every sync of every
//! server): 16 clients write a backlog of `txns` transactions with no replica attached;
//! then each replica configuration starts empty, follows the primary from the start
//! (`master_use_gtid=slave_pos`) and is timed until its `@@gtid_slave_pos` covers the
//! primary's `@@gtid_binlog_pos`. Measured: catch-up time, applied transactions per
//! second, the replica's syncs (the fsync shim's count) and transactions per sync, its CPU.
//! Then, with the replica attached, the clients write for `lag_secs` while a probe reads
//! the primary's `@@gtid_binlog_pos` every 200 ms and times until the replica covers it
//! (the lag). Workloads:
//! - `insert`: sysbench oltp_insert-like single-row autocommit inserts (a 120-byte and a
//!   60-byte CHAR, a secondary index on an integer column);
//! - `l.i1`: Insert Benchmark l.i1-like transactions, one table per client with the
//!   benchmark's three secondary indexes: 10 rows inserted and the 10 oldest deleted per
//!   transaction.
//!
//! Replicas: onelogd (`--slave-parallel-threads=N`, optimistic) and MariaDB 10.11
//! (`--slave-parallel-threads=4 --slave-parallel-mode=optimistic --log-slave-updates
//! --sync-binlog=1 --innodb-flush-log-at-trx-commit=1`), both durable per transaction.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::Conn;

use super::systems::{Delta, Env, Server, SystemKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    Insert,
    Li1,
}

impl Workload {
    pub fn name(self) -> &'static str {
        match self {
            Workload::Insert => "insert",
            Workload::Li1 => "l.i1",
        }
    }
}

/// A replica configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaKind {
    /// onelogd with this many workers.
    Onelog(u32),
    Mariadb,
}

impl ReplicaKind {
    pub fn label(self) -> String {
        match self {
            ReplicaKind::Onelog(t) => format!("onelogd, {t} workers"),
            ReplicaKind::Mariadb => "MariaDB 10.11, 4 workers".into(),
        }
    }

    fn start(self, env: &Env, delay_us: u64) -> Result<Server, String> {
        match self {
            ReplicaKind::Onelog(t) => Server::start_with(
                env,
                SystemKind::OnelogEngine,
                delay_us,
                &[
                    "--server-id=2".into(),
                    format!("--slave-parallel-threads={t}"),
                    "--slave-parallel-mode=optimistic".into(),
                ],
            ),
            ReplicaKind::Mariadb => Server::start_with(
                env,
                SystemKind::MariadbBinlog,
                delay_us,
                &[
                    "--server-id=3".into(),
                    "--log-slave-updates".into(),
                    "--slave-parallel-threads=4".into(),
                    "--slave-parallel-mode=optimistic".into(),
                    "--skip-slave-start".into(),
                ],
            ),
        }
    }
}

/// One (workload, primary, replica) measurement.
#[derive(Clone, Debug)]
pub struct CatchupPoint {
    pub workload: Workload,
    pub primary: SystemKind,
    pub replica: ReplicaKind,
    pub backlog: u64,
    /// The primary's rate while writing the backlog.
    pub primary_tps: f64,
    pub catchup_secs: f64,
    pub replica_syncs: u64,
    pub replica_cpu: f64,
    /// Under the steady load: the primary's rate and the probe's lags (ms).
    pub steady_tps: f64,
    pub lag_p50_ms: f64,
    pub lag_max_ms: f64,
}

impl CatchupPoint {
    pub fn applied_tps(&self) -> f64 {
        self.backlog as f64 / self.catchup_secs
    }
}

fn q(c: &mut Conn, sql: &str) -> Result<(), String> {
    c.query_drop(sql).map_err(|e| format!("{sql}: {e}"))
}

fn text(c: &mut Conn, sql: &str) -> Result<String, String> {
    c.query_first::<String, _>(sql)
        .map(|v| v.unwrap_or_default())
        .map_err(|e| format!("{sql}: {e}"))
}

/// Whether position `have` (a GTID list) covers every domain of `want`.
pub fn covers(have: &str, want: &str) -> bool {
    let parse = |s: &str| -> Vec<(u64, u64)> {
        s.split(',')
            .filter_map(|g| {
                let p: Vec<u64> = g.trim().split('-').filter_map(|x| x.parse().ok()).collect();
                (p.len() == 3).then(|| (p[0], p[2]))
            })
            .collect()
    };
    let have = parse(have);
    parse(want)
        .into_iter()
        .all(|(d, n)| have.iter().any(|&(hd, hn)| hd == d && hn >= n))
}

fn setup(primary: &mut Server, w: Workload, clients: usize) -> Result<(), String> {
    if !primary.kind.is_mariadb() {
        primary.exec("CREATE USER 'repl'@'%' IDENTIFIED BY 'pw'")?;
        primary.exec("GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'")?;
    }
    match w {
        Workload::Insert => primary.exec(
            "CREATE TABLE bench.sbtest (id BIGINT NOT NULL PRIMARY KEY, k INT NOT NULL, \
             c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, KEY k_1 (k))",
        ),
        Workload::Li1 => (0..clients).try_for_each(|i| {
            primary.exec(&format!(
                "CREATE TABLE bench.pi{i} (transactionid BIGINT NOT NULL PRIMARY KEY, \
                 dateandtime DATETIME, cashregisterid INT NOT NULL, customerid INT NOT NULL, \
                 productid INT NOT NULL, price FLOAT NOT NULL, data VARCHAR(4000), \
                 KEY marketsegment (price, customerid), \
                 KEY registersegment (cashregisterid, price, customerid), \
                 KEY pdc (price, dateandtime, customerid))"
            ))
        }),
    }
}

/// One client's transactions from its `from`-th on, until `count` are done or `stop`.
fn client(
    mut c: Conn,
    w: Workload,
    id: usize,
    from: u64,
    count: u64,
    stop: &AtomicBool,
    done: &AtomicU64,
) -> Result<(), String> {
    let mut rng = (id as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ from;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let base = (id as u64) << 40;
    for i in from..from + count {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        match w {
            Workload::Insert => q(
                &mut c,
                &format!(
                    "INSERT INTO bench.sbtest VALUES ({}, {}, REPEAT('{}', 120), REPEAT('p', 60))",
                    base + i,
                    next() % 1_000_000,
                    (b'a' + (next() % 26) as u8) as char
                ),
            )?,
            Workload::Li1 => {
                let rows: Vec<String> = (0..10)
                    .map(|r| {
                        format!(
                            "({}, NOW(), {}, {}, {}, {}, REPEAT('d', {}))",
                            i * 10 + r,
                            next() % 1000,
                            next() % 100_000,
                            next() % 10_000,
                            (next() % 50_000) as f64 / 100.0,
                            10 + next() % 20
                        )
                    })
                    .collect();
                q(&mut c, "BEGIN")?;
                q(
                    &mut c,
                    &format!("INSERT INTO bench.pi{id} VALUES {}", rows.join(",")),
                )?;
                if i >= 200 {
                    let lo = (i - 200) * 10;
                    q(
                        &mut c,
                        &format!(
                            "DELETE FROM bench.pi{id} WHERE transactionid >= {lo} AND \
                             transactionid < {}",
                            lo + 10
                        ),
                    )?;
                }
                q(&mut c, "COMMIT")?;
            }
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// `clients` clients, each from its `from`-th transaction: `per_client` each, or until
/// `secs` pass. Returns (transactions, seconds).
fn drive(
    primary: &Server,
    w: Workload,
    clients: usize,
    from: u64,
    per_client: u64,
    secs: Option<f64>,
) -> Result<(u64, f64), String> {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|id| {
            let c = primary.conn()?;
            let (stop, done) = (stop.clone(), done.clone());
            Ok(std::thread::spawn(move || {
                client(c, w, id, from, per_client, &stop, &done)
            }))
        })
        .collect::<Result<_, String>>()?;
    if let Some(s) = secs {
        std::thread::sleep(Duration::from_secs_f64(s));
        stop.store(true, Ordering::Relaxed);
    }
    for t in threads {
        t.join().map_err(|_| "a client panicked".to_string())??;
    }
    Ok((done.load(Ordering::Relaxed), t0.elapsed().as_secs_f64()))
}

/// Polls the replica until it covers `want`, failing on a stopped SQL thread.
fn wait_covered(r: &mut Conn, want: &str, limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    let mut checked = Instant::now();
    loop {
        if covers(&text(r, "SELECT @@gtid_slave_pos")?, want) {
            return Ok(());
        }
        if checked.elapsed() > Duration::from_secs(2) {
            checked = Instant::now();
            let row: Option<mysql::Row> = r
                .query_first("SHOW SLAVE STATUS")
                .map_err(|e| e.to_string())?;
            if let Some(row) = row {
                let err: Option<String> = row.get("Last_SQL_Error");
                let io: Option<String> = row.get("Last_IO_Error");
                if let Some(e) = err.filter(|e| !e.is_empty()) {
                    return Err(format!("the replica stopped: {e}"));
                }
                if let Some(e) = io.filter(|e| !e.is_empty()) {
                    eprintln!("    replica IO error (retrying): {e}");
                }
            }
        }
        if Instant::now() > deadline {
            return Err(format!("the replica did not reach {want} in {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// One primary with its backlog, then each replica in turn.
#[allow(clippy::too_many_arguments)]
fn run_primary(
    env: &Env,
    w: Workload,
    primary_kind: SystemKind,
    replicas: &[ReplicaKind],
    delay_us: u64,
    txns: u64,
    clients: usize,
    lag_secs: f64,
) -> Result<Vec<CatchupPoint>, String> {
    let mut primary = Server::start(env, primary_kind, delay_us)?;
    setup(&mut primary, w, clients)?;
    let per_client = txns.div_ceil(clients as u64);
    let (backlog, secs) = drive(&primary, w, clients, 0, per_client, None)?;
    let primary_tps = backlog as f64 / secs;
    let mut pc = primary.conn()?;
    let want = text(&mut pc, "SELECT @@gtid_binlog_pos")?;
    eprintln!(
        "  catchup {} {}: backlog of {backlog} transactions at {primary_tps:.0}/s, up to {want}",
        w.name(),
        primary_kind.name()
    );
    // Every replica catches up with the same backlog (stopped afterwards) ...
    let mut started = Vec::new();
    for &rk in replicas {
        let mut replica = rk.start(env, delay_us)?;
        let mut rc = replica.conn()?;
        let before = replica.snapshot();
        q(
            &mut rc,
            &format!(
                "CHANGE MASTER TO master_host='127.0.0.1', master_port={}, master_user='repl', \
                 master_password='pw', master_use_gtid=slave_pos",
                primary.port
            ),
        )?;
        let t0 = Instant::now();
        q(&mut rc, "START SLAVE")?;
        wait_covered(&mut rc, &want, Duration::from_secs(3600))?;
        let catchup_secs = t0.elapsed().as_secs_f64();
        let d = Delta::between(&before, &replica.snapshot());
        q(&mut rc, "STOP SLAVE")?;
        eprintln!(
            "  catchup {} {} -> {}: {:.1} s ({:.0}/s), {} syncs ({:.1} per sync), CPU {:.1} s",
            w.name(),
            primary_kind.name(),
            rk.label(),
            catchup_secs,
            backlog as f64 / catchup_secs,
            d.fsyncs,
            backlog as f64 / d.fsyncs.max(1) as f64,
            d.cpu_secs,
        );
        started.push((
            replica,
            CatchupPoint {
                workload: w,
                primary: primary_kind,
                replica: rk,
                backlog,
                primary_tps,
                catchup_secs,
                replica_syncs: d.fsyncs,
                replica_cpu: d.cpu_secs,
                steady_tps: 0.0,
                lag_p50_ms: 0.0,
                lag_max_ms: 0.0,
            },
        ));
    }
    // ... then follows the steady load alone, once it has caught up again.
    let mut out = Vec::new();
    let mut from = per_client;
    for (replica, mut p) in started {
        let mut rc = replica.conn()?;
        q(&mut rc, "START SLAVE")?;
        let now = text(&mut pc, "SELECT @@gtid_binlog_pos")?;
        wait_covered(&mut rc, &now, Duration::from_secs(3600))?;
        let stop = Arc::new(AtomicBool::new(false));
        let probe = {
            let (mut p, mut r, stop) = (primary.conn()?, replica.conn()?, stop.clone());
            std::thread::spawn(move || -> Result<Vec<f64>, String> {
                let mut lags = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    let pos = text(&mut p, "SELECT @@gtid_binlog_pos")?;
                    wait_covered(&mut r, &pos, Duration::from_secs(600))?;
                    lags.push(t.elapsed().as_secs_f64() * 1000.0);
                    std::thread::sleep(Duration::from_millis(200).saturating_sub(t.elapsed()));
                }
                Ok(lags)
            })
        };
        let (steady, ssecs) = drive(&primary, w, clients, from, u64::MAX / 4, Some(lag_secs))?;
        from += steady.div_ceil(clients as u64) + 1_000_000;
        stop.store(true, Ordering::Relaxed);
        let mut lags = probe
            .join()
            .map_err(|_| "the probe panicked".to_string())??;
        p.lag_max_ms = lags.iter().cloned().fold(0.0, f64::max);
        p.lag_p50_ms = median(&mut lags);
        p.steady_tps = steady as f64 / ssecs;
        eprintln!(
            "  catchup {} {} -> {}: steady {:.0}/s, lag p50 {:.0} ms max {:.0} ms",
            w.name(),
            primary_kind.name(),
            p.replica.label(),
            p.steady_tps,
            p.lag_p50_ms,
            p.lag_max_ms
        );
        q(&mut rc, "STOP SLAVE")?;
        out.push(p);
    }
    Ok(out)
}

/// Every workload, primary and replica (see the module docs).
pub fn run(
    env: &Env,
    delay_us: u64,
    txns: u64,
    clients: usize,
    threads: &[u32],
    lag_secs: f64,
) -> Result<Vec<CatchupPoint>, String> {
    let onelog: Vec<ReplicaKind> = threads.iter().map(|&t| ReplicaKind::Onelog(t)).collect();
    let mut of_mariadb = vec![ReplicaKind::Mariadb];
    of_mariadb.extend(onelog.iter().copied());
    let mut points = Vec::new();
    for w in [Workload::Insert, Workload::Li1] {
        for (primary, replicas) in [
            (SystemKind::MariadbBinlog, &of_mariadb),
            (SystemKind::OnelogEngine, &onelog),
        ] {
            points.extend(run_primary(
                env, w, primary, replicas, delay_us, txns, clients, lag_secs,
            )?);
        }
    }
    Ok(points)
}

/// The Markdown table, with the verdicts against the targets.
pub fn report(points: &[CatchupPoint], delay_us: u64, clients: usize, lag_secs: f64) -> String {
    let mut s = format!(
        "{clients} clients write the backlog on the primary (no replica attached), +{delay_us} us \
         on every sync of every server; then each replica starts empty and is timed until it \
         has applied it. Steady: the same clients for {lag_secs:.0} s with the replica \
         attached, the lag probed every 200 ms. A replica that syncs once per applied \
         transaction applies at most {:.0}/s; one sync per group of N, N times that.\n\n",
        1e6 / delay_us.max(1) as f64
    );
    s.push_str(
        "| workload | primary | replica | backlog | primary txn/s | catch-up s | applied txn/s | \
         replica syncs | txns per sync | replica CPU s | steady primary txn/s | lag p50 ms | \
         lag max ms |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for p in points {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.0} | {:.1} | {:.0} | {} | {:.1} | {:.1} | {:.0} | {:.0} | \
             {:.0} |\n",
            p.workload.name(),
            p.primary.name(),
            p.replica.label(),
            p.backlog,
            p.primary_tps,
            p.catchup_secs,
            p.applied_tps(),
            p.replica_syncs,
            p.backlog as f64 / p.replica_syncs.max(1) as f64,
            p.replica_cpu,
            p.steady_tps,
            p.lag_p50_ms,
            p.lag_max_ms
        ));
    }
    s.push('\n');
    for w in [Workload::Insert, Workload::Li1] {
        let of = |primary: SystemKind, r: ReplicaKind| {
            points
                .iter()
                .find(|p| p.workload == w && p.primary == primary && p.replica == r)
        };
        let Some(m) = of(SystemKind::MariadbBinlog, ReplicaKind::Mariadb) else {
            continue;
        };
        for p in points
            .iter()
            .filter(|p| p.workload == w && matches!(p.replica, ReplicaKind::Onelog(_)))
        {
            let speed = if p.primary == SystemKind::MariadbBinlog {
                format!(
                    "catch-up {:.2}x the MariaDB replica's speed (target: at least 2x); ",
                    p.applied_tps() / m.applied_tps()
                )
            } else {
                String::new()
            };
            s.push_str(&format!(
                "- {}, {} primary, {}: {speed}{:.1} transactions per sync (target: at least \
                 8); steady lag p50 {:.0} ms, max {:.0} ms (target: under 1 s).\n",
                w.name(),
                p.primary.name(),
                p.replica.label(),
                p.backlog as f64 / p.replica_syncs.max(1) as f64,
                p.lag_p50_ms,
                p.lag_max_ms
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::covers;

    #[test]
    fn positions_cover_per_domain() {
        assert!(covers("0-1-10", "0-1-10"));
        assert!(covers("0-2-11,1-1-3", "0-1-10"));
        assert!(!covers("0-1-9", "0-1-10"));
        assert!(!covers("0-1-10", "0-1-10,1-1-1"));
        assert!(covers("", ""));
    }
}
