//! `sync-binlog`: 4 clients inserting 35 KB rows with sync_binlog = 0, 1, 2, 3, 4.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use rand::{Rng, SeedableRng};

use super::report::percentile;
use super::systems::{Delta, Server, SystemKind};

pub const ROW_BYTES: usize = 35 * 1024;

#[derive(Clone, Debug)]
pub struct SbPoint {
    pub system: SystemKind,
    pub delay_us: u64,
    pub sync_binlog: u32,
    pub commits: u64,
    pub tps: f64,
    pub p99_us: u64,
    pub delta: Delta,
}

impl SbPoint {
    pub fn fsyncs_per_commit(&self) -> f64 {
        if self.commits == 0 {
            f64::NAN
        } else {
            self.delta.fsyncs as f64 / self.commits as f64
        }
    }
    pub fn mb_per_sec(&self) -> f64 {
        self.tps * ROW_BYTES as f64 / 1e6
    }
}

fn payload(rng: &mut impl Rng) -> String {
    const A: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..ROW_BYTES)
        .map(|_| A[rng.gen_range(0..A.len())] as char)
        .collect()
}

pub fn run(
    server: &mut Server,
    values: &[u32],
    clients: usize,
    secs: f64,
) -> Result<Vec<SbPoint>, String> {
    server.exec(
        "CREATE TABLE IF NOT EXISTS bench.sb (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, \
         data MEDIUMBLOB NOT NULL)",
    )?;
    let mut out = Vec::new();
    for &n in values {
        server.exec(&format!("SET GLOBAL sync_binlog={n}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let barrier = Arc::new(Barrier::new(clients + 1));
        let mut handles = Vec::new();
        for i in 0..clients {
            let mut c = server.conn()?;
            let stop = stop.clone();
            let barrier = barrier.clone();
            handles.push(std::thread::spawn(move || -> Result<Vec<u64>, String> {
                let mut rng = rand::rngs::StdRng::seed_from_u64(i as u64 * 31 + n as u64);
                let rows: Vec<String> = (0..4)
                    .map(|_| format!("INSERT INTO sb (data) VALUES ('{}')", payload(&mut rng)))
                    .collect();
                let mut lat = Vec::new();
                barrier.wait();
                let mut k = 0;
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    c.query_drop(&rows[k % rows.len()])
                        .map_err(|e| format!("insert: {e}"))?;
                    lat.push(t.elapsed().as_micros() as u64);
                    k += 1;
                }
                Ok(lat)
            }));
        }
        let before = server.snapshot();
        barrier.wait();
        std::thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        let mut lat = Vec::new();
        for h in handles {
            lat.extend(h.join().map_err(|_| "client thread panicked")??);
        }
        let after = server.snapshot();
        let delta = Delta::between(&before, &after);
        let p = SbPoint {
            system: server.kind,
            delay_us: server.delay_us,
            sync_binlog: n,
            commits: lat.len() as u64,
            tps: lat.len() as f64 / delta.secs.max(1e-9),
            p99_us: percentile(&lat, 99.0),
            delta,
        };
        eprintln!(
            "  sync-binlog  {:<16} delay={}us sync_binlog={} {:>7.0} commits/s fsyncs/commit={:.2}",
            p.system.name(),
            p.delay_us,
            n,
            p.tps,
            p.fsyncs_per_commit()
        );
        out.push(p);
    }
    server.exec("SET GLOBAL sync_binlog=1")?;
    Ok(out)
}
