//! The systems under test: onelogd in its three commit modes and MariaDB 10.11 in three
//! configurations, each started by the harness in its own temporary directory with the
//! fsync-delay shim preloaded.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder};

/// Buffer pool / block cache size given to every server unless `--cache-size` says
/// otherwise.
pub const CACHE_SIZE: &str = "256M";

#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum SystemKind {
    /// onelogd, binlog is the WAL (`--binlog-storage=engine`).
    OnelogEngine,
    /// onelogd, classic 2PC between RocksDB WAL and a binlog file.
    OnelogFile,
    /// onelogd `--skip-log-bin`: RocksDB WAL only.
    OnelogOff,
    /// MariaDB, log-bin + sync_binlog=1 + innodb_flush_log_at_trx_commit=1.
    MariadbBinlog,
    /// MariaDB, binlog off, innodb_flush_log_at_trx_commit=1.
    MariadbNoBinlog,
    /// MariaDB, log-bin with sync_binlog=0 and innodb_flush_log_at_trx_commit=2.
    MariadbNoSync,
}

impl SystemKind {
    pub const ALL: [SystemKind; 6] = [
        SystemKind::OnelogEngine,
        SystemKind::OnelogFile,
        SystemKind::OnelogOff,
        SystemKind::MariadbBinlog,
        SystemKind::MariadbNoBinlog,
        SystemKind::MariadbNoSync,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SystemKind::OnelogEngine => "onelog-engine",
            SystemKind::OnelogFile => "onelog-file",
            SystemKind::OnelogOff => "onelog-nobinlog",
            SystemKind::MariadbBinlog => "mariadb-binlog",
            SystemKind::MariadbNoBinlog => "mariadb-nobinlog",
            SystemKind::MariadbNoSync => "mariadb-nosync",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            SystemKind::OnelogEngine => "onelogd --binlog-storage=engine --sync-binlog=1 (binlog is the only WAL)",
            SystemKind::OnelogFile => "onelogd --binlog-storage=file --sync-binlog=1 (RocksDB WAL + binlog file, 2PC)",
            SystemKind::OnelogOff => "onelogd --skip-log-bin (RocksDB WAL only, synced per group)",
            SystemKind::MariadbBinlog => "mariadbd --log-bin --sync-binlog=1 --innodb-flush-log-at-trx-commit=1",
            SystemKind::MariadbNoBinlog => "mariadbd --skip-log-bin --innodb-flush-log-at-trx-commit=1",
            SystemKind::MariadbNoSync => "mariadbd --log-bin --sync-binlog=0 --innodb-flush-log-at-trx-commit=2 (not durable)",
        }
    }

    pub fn parse(s: &str) -> Option<SystemKind> {
        let s = s.trim();
        Self::ALL.into_iter().find(|k| k.name() == s).or(match s {
            "engine" | "onelog" => Some(SystemKind::OnelogEngine),
            "file" => Some(SystemKind::OnelogFile),
            "onelog-off" | "off" => Some(SystemKind::OnelogOff),
            "mariadb" => Some(SystemKind::MariadbBinlog),
            _ => None,
        })
    }

    pub fn is_mariadb(self) -> bool {
        matches!(
            self,
            SystemKind::MariadbBinlog | SystemKind::MariadbNoBinlog | SystemKind::MariadbNoSync
        )
    }

    /// Whether a commit is durable when acknowledged.
    pub fn durable(self) -> bool {
        self != SystemKind::MariadbNoSync
    }

    /// Whether the system writes a binlog (so `sync_binlog` means something).
    pub fn has_binlog(self) -> bool {
        !matches!(self, SystemKind::OnelogOff | SystemKind::MariadbNoBinlog)
    }
}

/// Where binaries and scratch space are.
pub struct Env {
    pub onelogd: PathBuf,
    pub mariadbd: PathBuf,
    pub install_db: PathBuf,
    /// The fsync-delay shim (built at start-up).
    pub shim: PathBuf,
    /// Scratch directory: datadirs, sockets, the MariaDB template.
    pub root: PathBuf,
    /// InnoDB buffer pool / RocksDB block cache size of every server (`256M`, `16M`, ...).
    pub cache_size: String,
    /// onelogd reads table files with O_DIRECT (`--rocksdb-use-direct-reads`).
    pub direct_reads: bool,
    mariadb_template: std::cell::RefCell<Option<PathBuf>>,
}

impl Env {
    pub fn new(
        root: PathBuf,
        shim: PathBuf,
        onelogd: Option<PathBuf>,
        cache_size: String,
        direct_reads: bool,
    ) -> Env {
        let onelogd = onelogd.unwrap_or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(|d| d.join("onelogd")))
                .unwrap_or_else(|| PathBuf::from("onelogd"))
        });
        Env {
            onelogd,
            mariadbd: PathBuf::from("/usr/sbin/mariadbd"),
            install_db: PathBuf::from("mariadb-install-db"),
            shim,
            root,
            cache_size,
            direct_reads,
            mariadb_template: std::cell::RefCell::new(None),
        }
    }

    /// A MariaDB data directory initialised once, copied for every start.
    pub(crate) fn mariadb_template(&self) -> Result<PathBuf, String> {
        if let Some(p) = self.mariadb_template.borrow().as_ref() {
            return Ok(p.clone());
        }
        let dir = self.root.join("mariadb-template");
        let _ = std::fs::remove_dir_all(&dir);
        let out = Command::new(&self.install_db)
            .arg("--no-defaults")
            .arg("--user=root")
            .arg(format!("--datadir={}", dir.display()))
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db")
            .output()
            .map_err(|e| format!("mariadb-install-db: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mariadb-install-db failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        *self.mariadb_template.borrow_mut() = Some(dir.clone());
        Ok(dir)
    }
}

/// A running server; stopped and its directory removed on drop.
pub struct Server {
    pub kind: SystemKind,
    pub delay_us: u64,
    child: Child,
    pub socket: PathBuf,
    /// The TCP port (127.0.0.1) replicas connect to.
    pub port: u16,
    dir: PathBuf,
    count_file: PathBuf,
    monitor: Option<Conn>,
}

/// Counters sampled at one moment.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub at: Option<Instant>,
    pub status: HashMap<String, u64>,
    /// Durability calls seen by the shim (fsync, fdatasync, O_DSYNC writes...).
    pub fsyncs: u64,
    /// User + system CPU seconds of the server process.
    pub cpu_secs: f64,
    /// Bytes the server process caused to be written to storage.
    pub write_bytes: u64,
}

/// The difference between two snapshots.
#[derive(Clone, Debug, Default)]
pub struct Delta {
    pub secs: f64,
    pub fsyncs: u64,
    pub cpu_secs: f64,
    pub write_bytes: u64,
    pub status: HashMap<String, u64>,
}

impl Delta {
    pub fn between(a: &Snapshot, b: &Snapshot) -> Delta {
        let secs = match (a.at, b.at) {
            (Some(x), Some(y)) => y.duration_since(x).as_secs_f64(),
            _ => 0.0,
        };
        let status = b
            .status
            .iter()
            .map(|(k, v)| (k.clone(), v.saturating_sub(*a.status.get(k).unwrap_or(&0))))
            .collect();
        Delta {
            secs,
            fsyncs: b.fsyncs.saturating_sub(a.fsyncs),
            cpu_secs: (b.cpu_secs - a.cpu_secs).max(0.0),
            write_bytes: b.write_bytes.saturating_sub(a.write_bytes),
            status,
        }
    }

    pub fn stat(&self, name: &str) -> u64 {
        *self.status.get(name).unwrap_or(&0)
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(3399)
}

impl Server {
    pub fn start(env: &Env, kind: SystemKind, delay_us: u64) -> Result<Server, String> {
        Self::start_with(env, kind, delay_us, &[])
    }

    /// [`start`](Self::start) with `extra` options after the harness's (a later option
    /// wins in both servers: `--server-id=2` makes a replica).
    pub fn start_with(
        env: &Env,
        kind: SystemKind,
        delay_us: u64,
        extra: &[String],
    ) -> Result<Server, String> {
        static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = env.root.join(format!("{}-{}-{n}", kind.name(), delay_us));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let datadir = dir.join("data");
        let socket = dir.join("s.sock");
        let count_file = dir.join("fsync.count");
        std::fs::write(&count_file, vec![0u8; 4096]).map_err(|e| e.to_string())?;
        let port = free_port();
        let log = std::fs::File::create(dir.join("server.log")).map_err(|e| e.to_string())?;
        let mut cmd;
        if kind.is_mariadb() {
            let tpl = env.mariadb_template()?;
            let st = Command::new("cp")
                .arg("-a")
                .arg(&tpl)
                .arg(&datadir)
                .status()
                .map_err(|e| e.to_string())?;
            if !st.success() {
                return Err("cp of the MariaDB template failed".into());
            }
            cmd = Command::new(&env.mariadbd);
            cmd.arg("--no-defaults")
                .arg("--user=root")
                .arg(format!("--datadir={}", datadir.display()))
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--port={port}"))
                .arg("--bind-address=127.0.0.1")
                .arg(format!("--pid-file={}", dir.join("mariadbd.pid").display()))
                .arg(format!("--log-error={}", dir.join("error.log").display()))
                .arg("--skip-grant-tables")
                .arg("--skip-name-resolve")
                .arg("--max-connections=500")
                .arg("--server-id=1")
                .arg(format!("--innodb-buffer-pool-size={}", env.cache_size))
                .arg("--innodb-log-file-size=256M")
                .arg("--binlog-format=ROW");
            if let Ok(extra) = std::env::var("MARIADBD_EXTRA_ARGS") {
                cmd.args(extra.split_whitespace());
            }
            match kind {
                SystemKind::MariadbBinlog => {
                    cmd.arg(format!("--log-bin={}", dir.join("binlog").display()))
                        .arg("--sync-binlog=1")
                        .arg("--innodb-flush-log-at-trx-commit=1");
                }
                SystemKind::MariadbNoBinlog => {
                    cmd.arg("--skip-log-bin")
                        .arg("--innodb-flush-log-at-trx-commit=1");
                }
                _ => {
                    cmd.arg(format!("--log-bin={}", dir.join("binlog").display()))
                        .arg("--sync-binlog=0")
                        .arg("--innodb-flush-log-at-trx-commit=2");
                }
            }
        } else {
            cmd = Command::new(&env.onelogd);
            cmd.arg(format!("--datadir={}", datadir.display()))
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--port={port}"))
                .arg("--server-id=1")
                .arg("--sync-binlog=1")
                .arg("--max-connections=500")
                .arg(format!("--block-cache-size={}", env.cache_size));
            if env.direct_reads {
                cmd.arg("--rocksdb-use-direct-reads");
            }
            if let Ok(extra) = std::env::var("ONELOGD_EXTRA_ARGS") {
                cmd.args(extra.split_whitespace());
            }
            match kind {
                SystemKind::OnelogEngine => cmd.arg("--binlog-storage=engine"),
                SystemKind::OnelogFile => cmd.arg("--binlog-storage=file"),
                _ => cmd.arg("--skip-log-bin"),
            };
        }
        cmd.args(extra);
        cmd.env("LD_PRELOAD", &env.shim)
            .env("FSYNC_DELAY_US", delay_us.to_string())
            .env("FSYNC_COUNT_FILE", &count_file)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log);
        let child = cmd
            .spawn()
            .map_err(|e| format!("starting {}: {e}", kind.name()))?;
        let mut srv = Server {
            kind,
            delay_us,
            child,
            socket,
            port,
            dir,
            count_file,
            monitor: None,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(Some(st)) = srv.child.try_wait() {
                return Err(format!(
                    "{} exited at start-up ({st}); log: {}",
                    kind.name(),
                    srv.log_tail()
                ));
            }
            if srv.socket.exists() {
                if let Ok(mut c) = srv.connect_db(None) {
                    c.query_drop("CREATE DATABASE IF NOT EXISTS bench")
                        .map_err(|e| e.to_string())?;
                    break;
                }
            }
            if Instant::now() > deadline {
                return Err(format!("{} did not start: {}", kind.name(), srv.log_tail()));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        srv.monitor = Some(srv.connect_db(None).map_err(|e| e.to_string())?);
        Ok(srv)
    }

    fn log_tail(&self) -> String {
        let mut s = String::new();
        for f in ["server.log", "error.log"] {
            if let Ok(t) = std::fs::read_to_string(self.dir.join(f)) {
                let lines: Vec<&str> = t.lines().collect();
                let from = lines.len().saturating_sub(10);
                s.push_str(&lines[from..].join("\n"));
            }
        }
        s
    }

    fn connect_db(&self, db: Option<&str>) -> Result<Conn, mysql::Error> {
        let opts = OptsBuilder::new()
            .socket(Some(self.socket.to_string_lossy().into_owned()))
            .user(Some("root"))
            .prefer_socket(false)
            .db_name(db);
        Conn::new(opts)
    }

    /// A new connection to the `bench` database.
    pub fn conn(&self) -> Result<Conn, String> {
        self.connect_db(Some("bench"))
            .map_err(|e| format!("connecting to {}: {e}", self.kind.name()))
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Runs a statement on the monitoring connection.
    pub fn exec(&mut self, sql: &str) -> Result<(), String> {
        let m = self.monitor.as_mut().ok_or("no monitor connection")?;
        m.query_drop(sql)
            .map_err(|e| format!("{}: {sql}: {e}", self.kind.name()))
    }

    pub fn snapshot(&mut self) -> Snapshot {
        let mut status = HashMap::new();
        if let Some(m) = self.monitor.as_mut() {
            if let Ok(rows) = m.query::<(String, String), _>("SHOW GLOBAL STATUS") {
                for (k, v) in rows {
                    if let Ok(n) = v.trim().parse::<u64>() {
                        status.insert(k, n);
                    }
                }
            }
        }
        let (cpu_secs, write_bytes) = proc_usage(self.pid());
        Snapshot {
            at: Some(Instant::now()),
            status,
            fsyncs: read_counter(&self.count_file),
            cpu_secs,
            write_bytes,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.monitor = None;
        let pid = self.child.id() as i32;
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if Instant::now() > deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Reads the shim's shared counter.
pub fn read_counter(path: &Path) -> u64 {
    std::fs::read(path)
        .ok()
        .and_then(|b| {
            b.get(..8)
                .map(|s| u64::from_ne_bytes(s.try_into().unwrap()))
        })
        .unwrap_or(0)
}

/// (CPU seconds, write_bytes) of a process from /proc.
pub fn proc_usage(pid: u32) -> (f64, u64) {
    let cpu = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| parse_proc_stat_cpu(&s))
        .map(|ticks| {
            // SAFETY: sysconf has no preconditions.
            let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
            ticks as f64 / hz
        })
        .unwrap_or(0.0);
    let wb = std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|s| parse_proc_io_write_bytes(&s))
        .unwrap_or(0);
    (cpu, wb)
}

/// utime + stime (clock ticks) from the text of /proc/PID/stat.
pub fn parse_proc_stat_cpu(s: &str) -> Option<u64> {
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); utime is field 14, stime field 15.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// `write_bytes` from the text of /proc/PID/io.
pub fn parse_proc_io_write_bytes(s: &str) -> Option<u64> {
    s.lines()
        .find_map(|l| l.strip_prefix("write_bytes:"))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_parsers() {
        let stat = "1234 (on elog) d) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 9 0";
        assert_eq!(parse_proc_stat_cpu(stat), Some(300));
        let io = "rchar: 1\nwchar: 2\nread_bytes: 3\nwrite_bytes: 4096\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_proc_io_write_bytes(io), Some(4096));
    }

    #[test]
    fn system_names_round_trip() {
        for k in SystemKind::ALL {
            assert_eq!(SystemKind::parse(k.name()), Some(k));
        }
        assert_eq!(SystemKind::parse("bogus"), None);
    }
}
