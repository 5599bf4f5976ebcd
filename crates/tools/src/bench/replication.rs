//! `replication`: single-row autocommit inserts on a primary (onelogd or MariaDB 10.11)
//! with 0, 1 or 4 real MariaDB 10.11 replicas attached, started by the harness
//! (`mariadbd --server-id=2..`, `CHANGE MASTER TO ... master_use_gtid=slave_pos`).
//!
//! Measured per point: the primary's commit throughput and latency (the same clients as
//! `group-commit`), its CPU, the replicas' CPU, and each replica's lag, by a probe thread
//! beside the clients: every `PROBE_EVERY` it inserts a row into `bench.probe` on the
//! primary (autocommit), takes the acknowledgement time and the commit's `@@last_gtid`,
//! and hands both to two threads per replica:
//! - *receipt*: from the moment the probe sends its commit, reads the replica's relay log
//!   as it grows (the IO thread writes each event through to the file as it arrives) and
//!   notes when each group's XID event was first seen complete; lag = when the probe's
//!   group was (the GTID covering the probe's) minus the ack. Negative: the replica had
//!   the group before the client had its answer (a dump thread sends a group once it is
//!   durable, which can be before the commit is answered). The relay log is read by file,
//!   every 50 µs: no load on the replica, resolution about 0.1 ms.
//! - *apply*: `SELECT MASTER_GTID_WAIT(gtid)` on the replica returns once its SQL thread
//!   has committed the group (the row is there); lag = that moment - the ack.
//!
//! A fourth configuration attaches 4 replicas with only their IO threads running (receiving
//! into relay logs, applying nothing): what the dump threads alone cost the primary, without
//! four appliers competing for the same cores.
//!
//! Replicas run with the same fsync-delay shim as the primary, `--skip-log-bin` and
//! `--innodb-flush-log-at-trx-commit=2` (a replica's usual setting: a single SQL thread that
//! synced every transaction at +1 ms could not apply more than ~900 per second), and ignore
//! the `mysql` schema (onelog logs its accounts as rows of `mysql.onelog_user`, a table a
//! MariaDB replica does not have).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder};

use super::group_commit;
use super::systems::{proc_usage, Env, Server, SystemKind};

/// How often the probe commits a row.
pub const PROBE_EVERY: Duration = Duration::from_millis(100);

/// One configuration of replicas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setup {
    pub replicas: usize,
    /// SQL threads running (false: IO threads only).
    pub applying: bool,
}

impl Setup {
    pub fn label(self) -> String {
        match (self.replicas, self.applying) {
            (0, _) => "none".into(),
            (n, true) => format!("{n}"),
            (n, false) => format!("{n}, receiving only"),
        }
    }
}

/// The configurations measured: none, 1 and 4 applying, 4 receiving only.
pub const SETUPS: [Setup; 4] = [
    Setup {
        replicas: 0,
        applying: true,
    },
    Setup {
        replicas: 1,
        applying: true,
    },
    Setup {
        replicas: 4,
        applying: true,
    },
    Setup {
        replicas: 4,
        applying: false,
    },
];

/// Lag samples of one replica, in microseconds after the probe's acknowledgement
/// (negative: the replica had the group before the client had its answer).
#[derive(Clone, Debug, Default)]
pub struct LagStats {
    pub samples: Vec<i64>,
    /// Probes the replica had not received (or applied) within the timeout.
    pub missing: usize,
}

impl LagStats {
    /// Nearest-rank percentile (`pct` in 0..=100); None without samples.
    pub fn p(&self, pct: f64) -> Option<i64> {
        if self.samples.is_empty() {
            return None;
        }
        let mut v = self.samples.clone();
        v.sort_unstable();
        let rank = ((pct.clamp(0.0, 100.0) / 100.0) * v.len() as f64).ceil() as usize;
        Some(v[rank.clamp(1, v.len()) - 1])
    }

    /// The share of samples below zero (received before the acknowledgement).
    pub fn before_ack(&self) -> Option<f64> {
        (!self.samples.is_empty()).then(|| {
            self.samples.iter().filter(|&&x| x < 0).count() as f64 / self.samples.len() as f64
        })
    }

    /// Every replica's samples together.
    pub fn merged<'a>(all: impl Iterator<Item = &'a LagStats>) -> LagStats {
        let mut m = LagStats::default();
        for l in all {
            m.samples.extend_from_slice(&l.samples);
            m.missing += l.missing;
        }
        m
    }
}

/// One replica's lag at one point.
#[derive(Clone, Debug)]
pub struct ReplicaLag {
    pub server_id: u32,
    pub receipt: LagStats,
    pub apply: Option<LagStats>,
}

#[derive(Clone, Debug)]
pub struct ReplPoint {
    pub primary: SystemKind,
    pub delay_us: u64,
    pub setup: Setup,
    pub clients: usize,
    pub commits: u64,
    pub tps: f64,
    pub p50_us: u64,
    pub p99_us: u64,
    /// Binlog_commits / Binlog_group_commits on the primary.
    pub commits_per_group: f64,
    /// The primary's CPU, in cores (CPU seconds per second).
    pub primary_cpu: f64,
    /// All replicas' CPU together, in cores.
    pub replicas_cpu: f64,
    /// Seconds the replicas needed after the load to apply everything (applying setups).
    pub catch_up_secs: Option<f64>,
    pub lags: Vec<ReplicaLag>,
}

impl ReplPoint {
    pub fn receipt(&self) -> LagStats {
        LagStats::merged(self.lags.iter().map(|l| &l.receipt))
    }

    pub fn apply(&self) -> Option<LagStats> {
        let v: Vec<&LagStats> = self.lags.iter().filter_map(|l| l.apply.as_ref()).collect();
        (!v.is_empty()).then(|| LagStats::merged(v.into_iter()))
    }
}

/// A MariaDB replica started by the harness; stopped and removed on drop.
pub struct Replica {
    pub server_id: u32,
    child: Child,
    socket: PathBuf,
    dir: PathBuf,
}

impl Replica {
    pub fn start(env: &Env, server_id: u32, delay_us: u64) -> Result<Replica, String> {
        let dir = env
            .root
            .join(format!("replica-{server_id}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let datadir = dir.join("data");
        let st = Command::new("cp")
            .arg("-a")
            .arg(env.mariadb_template()?)
            .arg(&datadir)
            .status()
            .map_err(|e| e.to_string())?;
        if !st.success() {
            return Err("cp of the MariaDB template failed".into());
        }
        let count_file = dir.join("fsync.count");
        std::fs::write(&count_file, vec![0u8; 4096]).map_err(|e| e.to_string())?;
        let socket = dir.join("s.sock");
        let child = Command::new(&env.mariadbd)
            .arg("--no-defaults")
            .arg("--user=root")
            .arg(format!("--datadir={}", datadir.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg("--skip-networking")
            .arg(format!("--pid-file={}", dir.join("mariadbd.pid").display()))
            .arg(format!("--log-error={}", dir.join("error.log").display()))
            .arg("--skip-grant-tables")
            .arg(format!("--server-id={server_id}"))
            .arg("--skip-log-bin")
            .arg(format!("--relay-log={}", dir.join("relay").display()))
            .arg("--skip-slave-start")
            .arg("--replicate-wild-ignore-table=mysql.%")
            .arg("--innodb-flush-log-at-trx-commit=2")
            .arg("--innodb-buffer-pool-size=64M")
            .arg("--innodb-log-file-size=64M")
            .env("LD_PRELOAD", &env.shim)
            .env("FSYNC_DELAY_US", delay_us.to_string())
            .env("FSYNC_COUNT_FILE", &count_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting replica {server_id}: {e}"))?;
        let mut r = Replica {
            server_id,
            child,
            socket,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        while r.conn().is_err() {
            if let Ok(Some(st)) = r.child.try_wait() {
                return Err(format!("replica {server_id} exited at start-up ({st})"));
            }
            if Instant::now() > deadline {
                return Err(format!("replica {server_id} did not start"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(r)
    }

    pub fn conn(&self) -> Result<Conn, String> {
        let opts = OptsBuilder::new()
            .socket(Some(self.socket.to_string_lossy().into_owned()))
            .user(Some("root"))
            .prefer_socket(false);
        Conn::new(opts).map_err(|e| format!("replica {}: {e}", self.server_id))
    }

    /// CHANGE MASTER TO the primary at `port`, GTID positioning from the start; starts
    /// both threads, or the IO thread only.
    pub fn follow(&self, port: u16, applying: bool) -> Result<(), String> {
        let mut c = self.conn()?;
        let run = |c: &mut Conn, sql: &str| {
            c.query_drop(sql)
                .map_err(|e| format!("replica {}: {sql}: {e}", self.server_id))
        };
        run(
            &mut c,
            &format!(
                "CHANGE MASTER TO master_host='127.0.0.1', master_port={port}, \
                 master_user='repl', master_password='pw', master_use_gtid=slave_pos"
            ),
        )?;
        run(
            &mut c,
            if applying {
                "START SLAVE"
            } else {
                "START SLAVE IO_THREAD"
            },
        )
    }

    /// A reader of this replica's relay log from its first file.
    pub fn relay_log(&self) -> RelayLog {
        RelayLog::new(self.dir.clone(), "relay")
    }

    pub fn cpu_secs(&self) -> f64 {
        proc_usage(self.child.id()).0
    }

    fn error_log(&self) -> String {
        let t = std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default();
        let lines: Vec<&str> = t.lines().collect();
        lines[lines.len().saturating_sub(8)..].join("\n")
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if let Ok(mut c) = self.conn() {
            let _ = c.query_drop("STOP SLAVE");
        }
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The sequence number of `domain`'s GTID in a GTID list such as `0-1-42,1-2-7`.
pub fn seq_in(list: &str, domain: u32) -> Option<u64> {
    list.split(',').find_map(|g| {
        let mut it = g.trim().split('-');
        let d: u32 = it.next()?.parse().ok()?;
        let _server: u32 = it.next()?.parse().ok()?;
        let seq: u64 = it.next()?.parse().ok()?;
        (d == domain).then_some(seq)
    })
}

fn parse_gtid(g: &str) -> Option<(u32, u64)> {
    let mut it = g.trim().split('-');
    let d = it.next()?.parse().ok()?;
    let _server: u32 = it.next()?.parse().ok()?;
    Some((d, it.next()?.parse().ok()?))
}

/// `Gtid_IO_Pos` of the replica's SHOW SLAVE STATUS.
fn io_pos(c: &mut Conn) -> Result<String, String> {
    let row: Option<mysql::Row> = c
        .query_first("SHOW SLAVE STATUS")
        .map_err(|e| e.to_string())?;
    let row = row.ok_or("no replication configured")?;
    let i = row
        .columns_ref()
        .iter()
        .position(|c| c.name_str() == "Gtid_IO_Pos")
        .ok_or("no Gtid_IO_Pos column")?;
    Ok(row
        .get_opt::<String, _>(i)
        .and_then(|r| r.ok())
        .unwrap_or_default())
}

/// Reads a replica's relay log as its IO thread appends to it: the sequence number of each
/// complete event group (GTID ... XID) received, in order. Files are `<base>.000001`,
/// `<base>.000002`, ...; the reader moves to the next file once it exists and the current
/// one has nothing more.
pub struct RelayLog {
    dir: PathBuf,
    base: String,
    file_no: u32,
    offset: u64,
    buf: Vec<u8>,
    /// Sequence number of the GTID event whose group is being read.
    open_seq: Option<u64>,
}

/// Binlog event types the relay log reader looks at.
const GTID_EVENT: u8 = 162;
const XID_EVENT: u8 = 16;

impl RelayLog {
    pub fn new(dir: PathBuf, base: &str) -> RelayLog {
        RelayLog {
            dir,
            base: base.to_string(),
            file_no: 1,
            offset: 4,
            buf: Vec::new(),
            open_seq: None,
        }
    }

    /// The lowest relay log file number above the current one.
    fn next_existing(&self) -> Option<u32> {
        let prefix = format!("{}.", self.base);
        std::fs::read_dir(&self.dir)
            .ok()?
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                name.strip_prefix(&prefix)?.parse::<u32>().ok()
            })
            .filter(|&n| n > self.file_no)
            .min()
    }

    fn path(&self, no: u32) -> PathBuf {
        self.dir.join(format!("{}.{no:06}", self.base))
    }

    /// Sequence numbers of the groups completed since the last call (in the replica's
    /// GTID domain 0 order of arrival).
    pub fn poll(&mut self) -> Vec<u64> {
        use std::io::{Read, Seek, SeekFrom};
        let mut done = Vec::new();
        loop {
            let Ok(mut f) = std::fs::File::open(self.path(self.file_no)) else {
                // Not there yet, or purged once applied: go on with the next file there is.
                match self.next_existing() {
                    Some(no) => {
                        (self.file_no, self.offset) = (no, 4);
                        self.buf.clear();
                        continue;
                    }
                    None => return done,
                }
            };
            let mut chunk = Vec::new();
            if f.seek(SeekFrom::Start(self.offset + self.buf.len() as u64))
                .and_then(|_| f.read_to_end(&mut chunk))
                .is_err()
            {
                return done;
            }
            self.buf.extend_from_slice(&chunk);
            // Whole events only: header `timestamp u32 | type u8 | server_id u32 | len u32
            // | log_pos u32 | flags u16`, GTID body `seq u64 | domain u32 | ...`.
            let mut at = 0;
            while self.buf.len() - at >= 19 {
                let len =
                    u32::from_le_bytes(self.buf[at + 9..at + 13].try_into().unwrap()) as usize;
                if len < 19 || self.buf.len() - at < len {
                    break;
                }
                match self.buf[at + 4] {
                    GTID_EVENT if len >= 27 => {
                        self.open_seq = Some(u64::from_le_bytes(
                            self.buf[at + 19..at + 27].try_into().unwrap(),
                        ));
                    }
                    XID_EVENT => done.extend(self.open_seq.take()),
                    _ => {}
                }
                at += len;
            }
            self.offset += at as u64;
            self.buf.drain(..at);
            if chunk.is_empty() && self.path(self.file_no + 1).exists() {
                self.file_no += 1;
                self.offset = 4;
                self.buf.clear();
                continue;
            }
            return done;
        }
    }
}

/// A probe: its GTID and when its commit was acknowledged.
#[derive(Clone, Copy)]
struct Probe {
    seq: u64,
    gtid_text: [u8; 48],
    acked: Instant,
}

impl Probe {
    fn gtid(&self) -> &str {
        let end = self.gtid_text.iter().position(|&b| b == 0).unwrap_or(48);
        std::str::from_utf8(&self.gtid_text[..end]).unwrap_or("")
    }
}

/// What the probe tells a receipt thread.
enum ProbeMsg {
    /// The probe's commit is about to be sent: start looking.
    Sending,
    /// It was acknowledged, with this GTID.
    Acked(Probe),
}

const WAIT_LIMIT: Duration = Duration::from_secs(20);

/// Receipt lags of one replica: from the probe's send until its group is in the relay log,
/// reads the relay log every 50 µs and keeps when each group was first seen.
fn receipt_thread(mut relay: RelayLog, rx: mpsc::Receiver<ProbeMsg>) -> LagStats {
    let mut s = LagStats::default();
    // When each received group was first seen (seq, time), kept while a probe is open.
    let mut seen: Vec<(u64, Instant)> = Vec::new();
    while let Ok(msg) = rx.recv() {
        let ProbeMsg::Sending = msg else {
            continue;
        };
        seen.clear();
        let mut probe: Option<Probe> = None;
        let started = Instant::now();
        loop {
            if probe.is_none() {
                match rx.try_recv() {
                    Ok(ProbeMsg::Acked(p)) => probe = Some(p),
                    Ok(ProbeMsg::Sending) | Err(mpsc::TryRecvError::Empty) => {}
                    Err(mpsc::TryRecvError::Disconnected) => return s,
                }
            }
            let now = Instant::now();
            seen.extend(relay.poll().into_iter().map(|q| (q, now)));
            if let Some(p) = &probe {
                if let Some(&(_, at)) = seen.iter().find(|(q, _)| *q >= p.seq) {
                    let lag = if at >= p.acked {
                        at.duration_since(p.acked).as_micros() as i64
                    } else {
                        -(p.acked.duration_since(at).as_micros() as i64)
                    };
                    s.samples.push(lag);
                    break;
                }
            }
            if now.duration_since(started) > WAIT_LIMIT {
                s.missing += 1;
                break;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    s
}

/// Apply lags of one replica: MASTER_GTID_WAIT for each probe.
fn apply_thread(mut c: Conn, rx: mpsc::Receiver<Probe>) -> LagStats {
    let mut s = LagStats::default();
    for p in rx {
        let left = WAIT_LIMIT.saturating_sub(p.acked.elapsed()).as_secs_f64();
        let r: Option<i64> = c
            .query_first(format!(
                "SELECT MASTER_GTID_WAIT('{}', {left:.3})",
                p.gtid()
            ))
            .ok()
            .flatten();
        if r == Some(0) {
            s.samples.push(p.acked.elapsed().as_micros() as i64);
        } else {
            s.missing += 1;
        }
    }
    s
}

/// Waits until every replica has applied (or, receiving only, received) `pos`; returns
/// the seconds it took.
fn wait_caught_up(replicas: &[Replica], applying: bool, pos: &str) -> Result<f64, String> {
    let t = Instant::now();
    let domain_seq: Vec<(u32, u64)> = pos.split(',').filter_map(parse_gtid).collect();
    for r in replicas {
        let mut c = r.conn()?;
        if applying {
            let ok: Option<i64> = c
                .query_first(format!("SELECT MASTER_GTID_WAIT('{pos}', 600)"))
                .map_err(|e| e.to_string())?;
            if ok != Some(0) {
                return Err(format!(
                    "replica {} did not apply {pos} in 600 s: {}",
                    r.server_id,
                    r.error_log()
                ));
            }
        } else {
            loop {
                let p = io_pos(&mut c)?;
                if domain_seq
                    .iter()
                    .all(|&(d, q)| seq_in(&p, d).is_some_and(|have| have >= q))
                {
                    break;
                }
                if t.elapsed() > Duration::from_secs(600) {
                    return Err(format!(
                        "replica {} did not receive {pos}: {}",
                        r.server_id,
                        r.error_log()
                    ));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
    Ok(t.elapsed().as_secs_f64())
}

fn binlog_pos(server: &Server) -> Result<String, String> {
    let mut c = server.conn()?;
    let v: Option<String> = c
        .query_first("SELECT @@gtid_binlog_pos")
        .map_err(|e| e.to_string())?;
    Ok(v.unwrap_or_default())
}

/// One measured point: `clients` inserting for `secs` with the probe running.
fn run_point(
    server: &mut Server,
    replicas: &[Replica],
    setup: Setup,
    clients: usize,
    secs: f64,
) -> Result<ReplPoint, String> {
    let mut probe_conn = server.conn()?;
    let mut receipt_tx = Vec::new();
    let mut apply_tx = Vec::new();
    let mut threads = Vec::new();
    for r in replicas {
        let (tx, rx) = mpsc::channel();
        let mut relay = r.relay_log();
        relay.poll(); // skip to the end: everything before this point is received
        receipt_tx.push(tx);
        let receipt = std::thread::spawn(move || receipt_thread(relay, rx));
        let apply = if setup.applying {
            let (tx, rx) = mpsc::channel();
            let c = r.conn()?;
            apply_tx.push(tx);
            Some(std::thread::spawn(move || apply_thread(c, rx)))
        } else {
            None
        };
        threads.push((r.server_id, receipt, apply));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let probe = std::thread::spawn(move || -> Result<(), String> {
        while !stop2.load(Ordering::Relaxed) {
            for tx in &receipt_tx {
                let _ = tx.send(ProbeMsg::Sending);
            }
            probe_conn
                .query_drop("INSERT INTO probe (t) VALUES (NOW(6))")
                .map_err(|e| format!("probe: {e}"))?;
            let acked = Instant::now();
            let g: Option<String> = probe_conn
                .query_first("SELECT @@last_gtid")
                .map_err(|e| format!("probe: {e}"))?;
            let g = g.unwrap_or_default();
            let (_domain, seq) =
                parse_gtid(&g).ok_or_else(|| format!("probe: no @@last_gtid ({g:?})"))?;
            let mut gtid_text = [0u8; 48];
            gtid_text[..g.len().min(47)].copy_from_slice(&g.as_bytes()[..g.len().min(47)]);
            let p = Probe {
                seq,
                gtid_text,
                acked,
            };
            for tx in &receipt_tx {
                let _ = tx.send(ProbeMsg::Acked(p));
            }
            for tx in &apply_tx {
                let _ = tx.send(p);
            }
            std::thread::sleep(PROBE_EVERY.saturating_sub(acked.elapsed()));
        }
        Ok(())
    });
    let cpu0: f64 = replicas.iter().map(Replica::cpu_secs).sum();
    let t0 = Instant::now();
    let gc = group_commit::run_point(server, clients, secs);
    let replicas_cpu =
        (replicas.iter().map(Replica::cpu_secs).sum::<f64>() - cpu0) / t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let probe_result = probe.join().map_err(|_| "probe thread panicked")?;
    let mut lags = Vec::new();
    for (server_id, receipt, apply) in threads {
        let receipt = receipt.join().map_err(|_| "receipt thread panicked")?;
        let apply = match apply {
            Some(h) => Some(h.join().map_err(|_| "apply thread panicked")?),
            None => None,
        };
        lags.push(ReplicaLag {
            server_id,
            receipt,
            apply,
        });
    }
    let gc = gc?;
    probe_result?;
    let catch_up_secs = if replicas.is_empty() {
        None
    } else {
        let pos = binlog_pos(server)?;
        let s = wait_caught_up(replicas, setup.applying, &pos)?;
        setup.applying.then_some(s)
    };
    Ok(ReplPoint {
        primary: server.kind,
        delay_us: server.delay_us,
        setup,
        clients,
        commits: gc.commits,
        tps: gc.tps,
        p50_us: gc.p50_us,
        p99_us: gc.p99_us,
        commits_per_group: gc.commits_per_group(),
        primary_cpu: gc.delta.cpu_secs / gc.delta.secs.max(1e-9),
        replicas_cpu,
        catch_up_secs,
        lags,
    })
}

/// Every client count on one primary with one replica setup (fresh servers).
pub fn run_setup(
    env: &Env,
    kind: SystemKind,
    delay_us: u64,
    setup: Setup,
    clients: &[usize],
    secs: f64,
) -> Result<Vec<ReplPoint>, String> {
    let mut server = Server::start(env, kind, delay_us)?;
    if !kind.is_mariadb() {
        // MariaDB runs with --skip-grant-tables (any account logs in); onelogd checks.
        server.exec("CREATE USER 'repl'@'%' IDENTIFIED BY 'pw'")?;
        server.exec("GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'")?;
    }
    group_commit::setup(&mut server)?;
    server.exec(
        "CREATE TABLE bench.probe (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, \
         t DATETIME(6) NOT NULL)",
    )?;
    let mut replicas = Vec::new();
    for i in 0..setup.replicas {
        let r = Replica::start(env, 2 + i as u32, delay_us)?;
        r.follow(server.port, setup.applying)?;
        replicas.push(r);
    }
    if !replicas.is_empty() {
        wait_caught_up(&replicas, setup.applying, &binlog_pos(&server)?)?;
    }
    let mut out = Vec::new();
    for &c in clients {
        let p = run_point(&mut server, &replicas, setup, c, secs)?;
        let rc = p.receipt();
        let ap = p.apply();
        eprintln!(
            "  replication {:<15} replicas={:<18} clients={c:<3} {:>7.0} commits/s p50={}us \
             p99={}us c/group={:.1} cpu={:.2}+{:.2} receipt p50/p99={:?}/{:?}us apply p50/p99={:?}/{:?}us \
             catch-up={:?}s",
            kind.name(),
            setup.label(),
            p.tps,
            p.p50_us,
            p.p99_us,
            p.commits_per_group,
            p.primary_cpu,
            p.replicas_cpu,
            rc.p(50.0),
            rc.p(99.0),
            ap.as_ref().and_then(|a| a.p(50.0)),
            ap.as_ref().and_then(|a| a.p(99.0)),
            p.catch_up_secs,
        );
        out.push(p);
    }
    drop(replicas);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gtid_positions() {
        assert_eq!(seq_in("0-1-42", 0), Some(42));
        assert_eq!(seq_in("1-2-7,0-1-42", 0), Some(42));
        assert_eq!(seq_in("1-2-7", 0), None);
        assert_eq!(seq_in("", 0), None);
        assert_eq!(parse_gtid("0-1-99"), Some((0, 99)));
        assert_eq!(parse_gtid("x"), None);
    }

    fn event(ty: u8, body: &[u8]) -> Vec<u8> {
        let len = (19 + body.len() + 4) as u32;
        let mut e = vec![0u8; 4];
        e.push(ty);
        e.extend_from_slice(&1u32.to_le_bytes());
        e.extend_from_slice(&len.to_le_bytes());
        e.extend_from_slice(&[0; 6]);
        e.extend_from_slice(body);
        e.extend_from_slice(&[0; 4]);
        e
    }

    fn gtid(seq: u64) -> Vec<u8> {
        let mut b = seq.to_le_bytes().to_vec();
        b.extend_from_slice(&[0; 11]);
        event(GTID_EVENT, &b)
    }

    #[test]
    fn relay_log_groups_as_they_arrive() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("onelog-relay-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = RelayLog::new(dir.clone(), "relay");
        assert!(r.poll().is_empty(), "no file yet");
        let mut f1 = std::fs::File::create(dir.join("relay.000001")).unwrap();
        f1.write_all(b"\xfebin").unwrap();
        f1.write_all(&event(15, &[0; 80])).unwrap();
        let (g, rows, xid) = (gtid(7), event(23, &[1; 30]), event(XID_EVENT, &[0; 8]));
        f1.write_all(&g).unwrap();
        f1.write_all(&rows[..10]).unwrap(); // torn: the group is not complete
        assert!(r.poll().is_empty());
        f1.write_all(&rows[10..]).unwrap();
        f1.write_all(&xid).unwrap();
        assert_eq!(r.poll(), vec![7]);
        assert!(r.poll().is_empty());
        // The next file; the first one purged once applied.
        let mut f2 = std::fs::File::create(dir.join("relay.000002")).unwrap();
        f2.write_all(b"\xfebin").unwrap();
        for seq in [8, 9] {
            f2.write_all(&gtid(seq)).unwrap();
            f2.write_all(&xid).unwrap();
        }
        std::fs::remove_file(dir.join("relay.000001")).unwrap();
        assert_eq!(r.poll(), vec![8, 9]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn merged_lags() {
        let a = LagStats {
            samples: vec![100, -300],
            missing: 1,
        };
        let b = LagStats {
            samples: vec![200],
            missing: 0,
        };
        let m = LagStats::merged([&a, &b].into_iter());
        assert_eq!(m.samples.len(), 3);
        assert_eq!(m.missing, 1);
        assert_eq!(m.p(50.0), Some(100));
        assert_eq!(m.p(1.0), Some(-300));
        assert_eq!(m.p(100.0), Some(200));
        assert_eq!(m.before_ack(), Some(1.0 / 3.0));
        assert_eq!(LagStats::default().p(50.0), None);
    }
}
