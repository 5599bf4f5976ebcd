//! `group-commit`: small durable single-row autocommit inserts at rising client counts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use super::report::percentile;
use super::systems::{Delta, Server, SystemKind};

#[derive(Clone, Debug)]
pub struct GcPoint {
    pub system: SystemKind,
    pub delay_us: u64,
    pub clients: usize,
    pub commits: u64,
    pub tps: f64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub delta: Delta,
}

impl GcPoint {
    /// Commits per durability call seen by the shim (every file of the server counts).
    pub fn commits_per_fsync(&self) -> f64 {
        if self.delta.fsyncs == 0 {
            f64::NAN
        } else {
            self.commits as f64 / self.delta.fsyncs as f64
        }
    }

    /// Binlog_commits / Binlog_group_commits, where the server has a binlog.
    pub fn commits_per_group(&self) -> f64 {
        let g = self.delta.stat("Binlog_group_commits");
        if g == 0 {
            f64::NAN
        } else {
            self.delta.stat("Binlog_commits") as f64 / g as f64
        }
    }

    /// onelog's own counter: commits per log sync (Onelog_commits / Onelog_log_syncs).
    pub fn onelog_commits_per_sync(&self) -> f64 {
        let s = self.delta.stat("Onelog_log_syncs");
        if s == 0 {
            f64::NAN
        } else {
            self.delta.stat("Onelog_commits") as f64 / s as f64
        }
    }
}

pub fn setup(server: &mut Server) -> Result<(), String> {
    server.exec(
        "CREATE TABLE IF NOT EXISTS bench.gc (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, \
         k INT NOT NULL, pad VARCHAR(100) NOT NULL)",
    )
}

/// Runs `clients` connections inserting one row per autocommit transaction for `secs`.
pub fn run_point(server: &mut Server, clients: usize, secs: f64) -> Result<GcPoint, String> {
    let mut conns = Vec::with_capacity(clients);
    for _ in 0..clients {
        conns.push(server.conn()?);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(clients + 1));
    let mut handles = Vec::new();
    for (i, mut c) in conns.into_iter().enumerate() {
        let stop = stop.clone();
        let barrier = barrier.clone();
        handles.push(std::thread::spawn(move || -> Result<Vec<u64>, String> {
            let mut lat = Vec::with_capacity(4096);
            barrier.wait();
            let mut n: u64 = 0;
            while !stop.load(Ordering::Relaxed) {
                let sql = format!(
                    "INSERT INTO gc (k, pad) VALUES ({}, 'client-{i}-row-{n}-padpadpadpadpadpadpadpad')",
                    (n * 7919 + i as u64) % 100_000
                );
                let t = Instant::now();
                c.query_drop(sql).map_err(|e| format!("insert: {e}"))?;
                lat.push(t.elapsed().as_micros() as u64);
                n += 1;
            }
            Ok(lat)
        }));
    }
    let before = server.snapshot();
    barrier.wait();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let mut lat = Vec::new();
    let mut err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(v)) => lat.extend(v),
            Ok(Err(e)) => err = Some(e),
            Err(_) => err = Some("client thread panicked".into()),
        }
    }
    let after = server.snapshot();
    if let Some(e) = err {
        return Err(e);
    }
    let delta = Delta::between(&before, &after);
    let commits = lat.len() as u64;
    lat.sort_unstable();
    Ok(GcPoint {
        system: server.kind,
        delay_us: server.delay_us,
        clients,
        commits,
        tps: commits as f64 / delta.secs.max(1e-9),
        p50_us: super::report::percentile_sorted(&lat, 50.0),
        p99_us: percentile(&lat, 99.0),
        delta,
    })
}

/// All client counts, each repeated `repeat` times; the median run (by throughput) is kept.
pub fn run(
    server: &mut Server,
    clients: &[usize],
    secs: f64,
    repeat: usize,
) -> Result<Vec<GcPoint>, String> {
    setup(server)?;
    let mut out = Vec::new();
    for &c in clients {
        let mut runs = Vec::new();
        for _ in 0..repeat.max(1) {
            runs.push(run_point(server, c, secs)?);
        }
        let i = super::report::median_index(&runs, |p| p.tps);
        let p = runs.swap_remove(i);
        eprintln!(
            "  group-commit {:<16} delay={}us clients={:<3} {:>8.0} commits/s p50={}us p99={}us commits/fsync={:.2}",
            p.system.name(),
            p.delay_us,
            c,
            p.tps,
            p.p50_us,
            p.p99_us,
            p.commits_per_fsync()
        );
        out.push(p);
    }
    Ok(out)
}
