//! `semisync`: single-row autocommit inserts on a primary (onelogd or MariaDB 10.11) with
//! one real MariaDB 10.11 replica, with and without semi-synchronous replication
//! (`rpl_semi_sync_master_wait_point = AFTER_SYNC`: a commit is answered once the replica
//! has acknowledged it).
//!
//! Every server runs with the fsync-delay shim; the replica reaches the primary through a
//! proxy of this program that delays every chunk of bytes by `--net-delay-us` in each
//! direction (a network round trip on loopback). Physical bounds at one client, with `d`
//! the sync delay and `n` the one-way delay: onelog with semi-sync pays one sync and one
//! round trip per commit, at most `1 / (d + 2n)` commits per second; MariaDB pays its two
//! syncs (InnoDB's redo and the binlog) and the round trip, `1 / (2d + 2n)`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use super::group_commit;
use super::replication::Replica;
use super::systems::{Env, Server, SystemKind};

/// One measured point.
#[derive(Clone, Debug)]
pub struct SemiPoint {
    pub system: SystemKind,
    pub semi_sync: bool,
    pub clients: usize,
    pub tps: f64,
    pub p50_us: u64,
    pub p99_us: u64,
    /// Commits the primary counted as acknowledged / not acknowledged during the point.
    pub yes_tx: u64,
    pub no_tx: u64,
}

/// A TCP proxy to `127.0.0.1:target` that holds every chunk `delay` before passing it on,
/// in both directions. Stops accepting on drop (open connections end with their peers).
pub struct DelayProxy {
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl DelayProxy {
    pub fn start(target: u16, delay: Duration) -> Result<DelayProxy, String> {
        let l = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let port = l.local_addr().map_err(|e| e.to_string())?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        std::thread::spawn(move || {
            for c in l.incoming() {
                if s.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(client) = c else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                for (from, to) in [
                    (client.try_clone(), server.try_clone()),
                    (server.try_clone(), client.try_clone()),
                ] {
                    if let (Ok(from), Ok(to)) = (from, to) {
                        std::thread::spawn(move || pump(from, to, delay));
                    }
                }
            }
        });
        Ok(DelayProxy { port, stop })
    }
}

impl Drop for DelayProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Copies `from` to `to`, each chunk sent `delay` after it was read.
fn pump(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let writer = std::thread::spawn(move || {
        for (read_at, bytes) in rx {
            let due = read_at + delay;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        }
    }
    drop(tx);
    let _ = writer.join();
}

fn semi_status(server: &Server) -> Result<(String, u64, u64, u64), String> {
    let mut c = server.conn()?;
    let rows: Vec<(String, String)> = c
        .query("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_%'")
        .map_err(|e| e.to_string())?;
    let get = |n: &str| {
        rows.iter()
            .find(|r| r.0.eq_ignore_ascii_case(n))
            .map(|r| r.1.clone())
            .unwrap_or_default()
    };
    let num = |n: &str| get(n).parse::<u64>().unwrap_or(0);
    Ok((
        get("Rpl_semi_sync_master_status"),
        num("Rpl_semi_sync_master_clients"),
        num("Rpl_semi_sync_master_yes_tx"),
        num("Rpl_semi_sync_master_no_tx"),
    ))
}

/// Waits until `done` holds for the primary's semi-sync status (at most 60 s).
fn wait_for(
    server: &Server,
    what: &str,
    done: impl Fn(&(String, u64, u64, u64)) -> bool,
) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let st = semi_status(server)?;
        if done(&st) {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("{what}: status {st:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The client counts on one primary with one replica behind the delay proxy; semi-sync
/// on or off (fresh servers).
pub fn run_setup(
    env: &Env,
    kind: SystemKind,
    delay_us: u64,
    net_delay: Duration,
    semi_sync: bool,
    clients: &[usize],
    secs: f64,
) -> Result<Vec<SemiPoint>, String> {
    let mut server = Server::start(env, kind, delay_us)?;
    if !kind.is_mariadb() {
        server.exec("CREATE USER 'repl'@'%' IDENTIFIED BY 'pw'")?;
        server.exec("GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'")?;
    }
    group_commit::setup(&mut server)?;
    let replica = Replica::start(env, 2, delay_us)?;
    if semi_sync {
        replica
            .conn()?
            .query_drop("SET GLOBAL rpl_semi_sync_slave_enabled = ON")
            .map_err(|e| format!("replica: {e}"))?;
    }
    let proxy = DelayProxy::start(server.port, net_delay)?;
    replica.follow(proxy.port, true)?;
    if semi_sync {
        server.exec("SET GLOBAL rpl_semi_sync_master_wait_point = AFTER_SYNC")?;
        server.exec("SET GLOBAL rpl_semi_sync_master_timeout = 10000")?;
        server.exec("SET GLOBAL rpl_semi_sync_master_enabled = ON")?;
        wait_for(&server, "the replica connects with semi-sync", |st| {
            st.0 == "ON" && st.1 == 1
        })?;
    }
    let mut out = Vec::new();
    for &c in clients {
        let (_, _, yes0, no0) = semi_status(&server)?;
        let gc = group_commit::run_point(&mut server, c, secs)?;
        let (_, _, yes1, no1) = semi_status(&server)?;
        let p = SemiPoint {
            system: kind,
            semi_sync,
            clients: c,
            tps: gc.tps,
            p50_us: gc.p50_us,
            p99_us: gc.p99_us,
            yes_tx: yes1 - yes0,
            no_tx: no1 - no0,
        };
        eprintln!(
            "  semisync {:<15} semi-sync={:<3} clients={c:<3} {:>7.0} commits/s p50={}us \
             p99={}us yes_tx={} no_tx={}",
            kind.name(),
            if semi_sync { "on" } else { "off" },
            p.tps,
            p.p50_us,
            p.p99_us,
            p.yes_tx,
            p.no_tx
        );
        out.push(p);
    }
    drop(replica);
    drop(proxy);
    Ok(out)
}

/// The Markdown table of the points, with the verdicts against the targets.
pub fn report(points: &[SemiPoint], delay_us: u64, net_delay: Duration) -> String {
    let mut s = String::new();
    let n_us = net_delay.as_micros() as f64;
    let d_us = delay_us as f64;
    s.push_str(&format!(
        "Single-row autocommit inserts, one MariaDB 10.11 replica behind a proxy adding {} us \
         each way, +{} us on every sync of every server. Bounds at 1 client: one sync and one \
         round trip per commit = {:.0}/s (onelog, semi-sync); two syncs and one round trip = \
         {:.0}/s (MariaDB, semi-sync).\n\n",
        n_us,
        delay_us,
        1e6 / (d_us + 2.0 * n_us),
        1e6 / (2.0 * d_us + 2.0 * n_us),
    ));
    s.push_str(
        "| primary | semi-sync (AFTER_SYNC) | clients | commits/s | p50 us | p99 us | \
         acknowledged | not acknowledged |\n|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for p in points {
        s.push_str(&format!(
            "| {} | {} | {} | {:.0} | {} | {} | {} | {} |\n",
            p.system.name(),
            if p.semi_sync { "on" } else { "off" },
            p.clients,
            p.tps,
            p.p50_us,
            p.p99_us,
            p.yes_tx,
            p.no_tx
        ));
    }
    let tps = |k: SystemKind, semi: bool, c: usize| {
        points
            .iter()
            .find(|p| p.system == k && p.semi_sync == semi && p.clients == c)
            .map(|p| p.tps)
    };
    s.push('\n');
    if let (Some(o), Some(m)) = (
        tps(SystemKind::OnelogEngine, true, 1),
        tps(SystemKind::MariadbBinlog, true, 1),
    ) {
        s.push_str(&format!(
            "- 1 client, both with semi-sync: onelog / MariaDB = {:.2}x (target: at least 2x).\n",
            o / m
        ));
    }
    let most = points.iter().map(|p| p.clients).max().unwrap_or(0);
    if let (Some(on), Some(off)) = (
        tps(SystemKind::OnelogEngine, true, most),
        tps(SystemKind::OnelogEngine, false, most),
    ) {
        s.push_str(&format!(
            "- {most} clients, onelog with / without semi-sync = {:.2} (target: at least 0.90).\n",
            on / off
        ));
    }
    s
}

/// `onelog bench semisync`: both primaries, semi-sync off and on.
pub fn run(
    env: &Env,
    delay_us: u64,
    net_delay: Duration,
    clients: &[usize],
    secs: f64,
) -> Result<Vec<SemiPoint>, String> {
    let mut points = Vec::new();
    for kind in [SystemKind::OnelogEngine, SystemKind::MariadbBinlog] {
        for semi in [false, true] {
            points.extend(run_setup(
                env, kind, delay_us, net_delay, semi, clients, secs,
            )?);
        }
    }
    Ok(points)
}
