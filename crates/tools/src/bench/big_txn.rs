//! `big-txn`: how long one large transaction's COMMIT stalls small commits beside it.
//!
//! One connection commits single-row autocommit inserts into `bt_small` in a loop. After
//! about a second a second connection opens a transaction, inserts `big_mib` MiB of 500-byte
//! rows into `bt_big` (about 1 MiB per statement) and times its COMMIT; small commits go on
//! for about a second more. Small commits whose interval overlaps the big COMMIT are "during",
//! the rest "outside".

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use rand::{Rng, SeedableRng};

use super::report::percentile_sorted;
use super::systems::{Server, SystemKind};

/// Bytes of `data` per big-transaction row.
pub const ROW_BYTES: usize = 500;
/// Rows per multi-row INSERT of the big transaction (about 1 MiB of SQL text).
pub const ROWS_PER_STATEMENT: usize = 2000;
/// Small commits before and after the work they run beside (see [`beside_small_commits`]).
const SIDE_SECS: f64 = 1.0;

/// Latency summary of a set of small commits (µs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatStats {
    pub count: usize,
    pub p50_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

impl LatStats {
    pub fn of(lat: &mut [u64]) -> LatStats {
        lat.sort_unstable();
        LatStats {
            count: lat.len(),
            p50_us: percentile_sorted(lat, 50.0),
            p99_us: percentile_sorted(lat, 99.0),
            max_us: lat.last().copied().unwrap_or(0),
        }
    }
}

#[derive(Clone, Debug)]
pub struct BtPoint {
    pub system: SystemKind,
    pub delay_us: u64,
    /// Row data inserted by the big transaction, MiB.
    pub big_mib: f64,
    /// Rows of the big transaction.
    pub big_rows: u64,
    /// Time to insert the rows (BEGIN to the last INSERT), seconds.
    pub load_secs: f64,
    /// The big COMMIT, seconds.
    pub commit_secs: f64,
    /// Small commits overlapping the big COMMIT.
    pub during: LatStats,
    /// All other small commits.
    pub outside: LatStats,
}

impl BtPoint {
    /// The headline: the longest small commit that overlapped the big COMMIT, ms.
    pub fn stall_ms(&self) -> f64 {
        self.during.max_us as f64 / 1000.0
    }
}

/// Splits small commits `(start, latency µs)` into those overlapping `[c0, c1]` and the rest.
pub fn split_overlap(small: &[(Instant, u64)], c0: Instant, c1: Instant) -> (Vec<u64>, Vec<u64>) {
    let mut during = Vec::new();
    let mut outside = Vec::new();
    for &(s, lat) in small {
        let e = s + Duration::from_micros(lat);
        if s < c1 && e > c0 {
            during.push(lat);
        } else {
            outside.push(lat);
        }
    }
    (during, outside)
}

/// Creates `table` (auto-increment id, `v`) in the connection's database and commits
/// single-row autocommit inserts into it on `conn` in a loop while `work` runs, for about [`SIDE_SECS`] before and after it. `work`
/// returns its result and the span the small commits are split by: (result, small commits
/// overlapping the span, all others).
pub fn beside_small_commits<T>(
    mut conn: mysql::Conn,
    table: &'static str,
    work: impl FnOnce() -> Result<(T, Instant, Instant), String>,
) -> Result<(T, LatStats, LatStats), String> {
    conn.query_drop(format!(
        "CREATE TABLE IF NOT EXISTS {table} (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, \
         v INT NOT NULL)"
    ))
    .map_err(|e| format!("create {table}: {e}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let small = std::thread::spawn(move || -> Result<Vec<(Instant, u64)>, String> {
        let mut out = Vec::with_capacity(1 << 16);
        let mut n: u64 = 0;
        while !stop2.load(Ordering::Relaxed) {
            let sql = format!("INSERT INTO {table} (v) VALUES ({})", n % 1_000_000);
            let t = Instant::now();
            conn.query_drop(sql)
                .map_err(|e| format!("small insert: {e}"))?;
            out.push((t, t.elapsed().as_micros() as u64));
            n += 1;
        }
        Ok(out)
    });
    let worked = (|| {
        std::thread::sleep(Duration::from_secs_f64(SIDE_SECS));
        let r = work()?;
        std::thread::sleep(Duration::from_secs_f64(SIDE_SECS));
        Ok::<_, String>(r)
    })();
    stop.store(true, Ordering::Relaxed);
    let small = small.join().map_err(|_| "small-commit thread panicked")?;
    let (r, c0, c1) = worked?;
    let (mut during, mut outside) = split_overlap(&small?, c0, c1);
    Ok((r, LatStats::of(&mut during), LatStats::of(&mut outside)))
}

/// The small commits' latencies, for the progress log.
pub fn small_summary(during: &LatStats, outside: &LatStats) -> String {
    format!(
        "small during: n={} p50={}us p99={}us max={}us; outside: p50={}us p99={}us max={}us",
        during.count,
        during.p50_us,
        during.p99_us,
        during.max_us,
        outside.p50_us,
        outside.p99_us,
        outside.max_us,
    )
}

/// Random lower-case letters and digits (SQL-safe in a quoted string, hard to compress).
fn random_text(rng: &mut impl Rng, n: usize) -> Vec<u8> {
    const A: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..n).map(|_| A[rng.gen_range(0..A.len())]).collect()
}

/// One multi-row INSERT of `rows` rows into bt_big with ids from `first_id`, data taken from
/// `pool` at pseudo-random offsets.
fn big_insert(pool: &[u8], rng: &mut impl Rng, first_id: u64, rows: usize) -> String {
    let mut sql = String::with_capacity(rows * (ROW_BYTES + 32) + 64);
    sql.push_str("INSERT INTO bt_big (id, data) VALUES ");
    for i in 0..rows {
        if i > 0 {
            sql.push(',');
        }
        let off = rng.gen_range(0..pool.len() - ROW_BYTES);
        let data = std::str::from_utf8(&pool[off..off + ROW_BYTES]).unwrap_or("");
        sql.push_str(&format!("({},'{data}')", first_id + i as u64));
    }
    sql
}

pub fn run(server: &mut Server, big_mib: u64) -> Result<BtPoint, String> {
    server.exec(
        "CREATE TABLE IF NOT EXISTS bench.bt_big (id BIGINT NOT NULL PRIMARY KEY, \
         data VARBINARY(1000) NOT NULL)",
    )?;
    let small_conn = server.conn()?;
    let mut big = server.conn()?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xb16 ^ server.delay_us);
    let pool = random_text(&mut rng, 1 << 20);
    let total_rows = (big_mib * 1024 * 1024).div_ceil(ROW_BYTES as u64);

    let ((load_secs, commit_secs), during, outside) =
        beside_small_commits(small_conn, "bt_small", || {
            let t0 = Instant::now();
            big.query_drop("BEGIN")
                .map_err(|e| format!("big BEGIN: {e}"))?;
            let mut id = 1u64;
            while id <= total_rows {
                let rows = ROWS_PER_STATEMENT.min((total_rows - id + 1) as usize);
                let sql = big_insert(&pool, &mut rng, id, rows);
                big.query_drop(sql)
                    .map_err(|e| format!("big insert: {e}"))?;
                id += rows as u64;
            }
            let load_secs = t0.elapsed().as_secs_f64();
            let c0 = Instant::now();
            big.query_drop("COMMIT")
                .map_err(|e| format!("big COMMIT: {e}"))?;
            let c1 = Instant::now();
            Ok(((load_secs, c1.duration_since(c0).as_secs_f64()), c0, c1))
        })?;
    let p = BtPoint {
        system: server.kind,
        delay_us: server.delay_us,
        big_mib: (total_rows * ROW_BYTES as u64) as f64 / (1024.0 * 1024.0),
        big_rows: total_rows,
        load_secs,
        commit_secs,
        during,
        outside,
    };
    eprintln!(
        "  big-txn      {:<16} delay={}us {:.0} MiB load={:.2}s COMMIT={:.0}ms; {}",
        p.system.name(),
        p.delay_us,
        p.big_mib,
        p.load_secs,
        p.commit_secs * 1000.0,
        small_summary(&p.during, &p.outside),
    );
    // Leave the server small for anything that runs after.
    server.exec("DROP TABLE IF EXISTS bench.bt_big")?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_split_and_stats() {
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        // Big COMMIT from 100 ms to 200 ms.
        let small = vec![
            (at(0), 1_000),    // 0-1 ms: outside
            (at(90), 20_000),  // 90-110 ms: overlaps the start
            (at(150), 1_000),  // inside
            (at(195), 50_000), // overlaps the end
            (at(200), 1_000),  // starts at the end: outside
            (at(300), 2_000),  // outside
        ];
        let (mut d, mut o) = split_overlap(&small, at(100), at(200));
        let d = LatStats::of(&mut d);
        let o = LatStats::of(&mut o);
        assert_eq!(d.count, 3);
        assert_eq!((d.p50_us, d.max_us), (20_000, 50_000));
        assert_eq!(o.count, 3);
        assert_eq!((o.p50_us, o.p99_us, o.max_us), (1_000, 2_000, 2_000));
        assert_eq!(LatStats::of(&mut []), LatStats::default());
    }

    #[test]
    fn big_statement_fits_a_packet() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let pool = random_text(&mut rng, 1 << 16);
        let sql = big_insert(&pool, &mut rng, 1, ROWS_PER_STATEMENT);
        assert!(
            sql.len() > 1_000_000 && sql.len() < 4 << 20,
            "{}",
            sql.len()
        );
        assert!(sql.starts_with("INSERT INTO bt_big (id, data) VALUES (1,'"));
        assert!(sql.ends_with("')"));
    }
}
