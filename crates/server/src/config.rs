//! Server options from the command line and a my.cnf-style option file.
//!
//! Names follow MariaDB: `--datadir=DIR`, `--port=N`, `--sync_binlog=1` and `--sync-binlog=1`
//! are the same option; `--loose-` prefixed unknown options are ignored; an option file
//! given with `--defaults-file` contributes its `[mariadbd]`, `[mysqld]`, `[server]` and
//! `[onelogd]` sections, overridden by the command line.

use std::path::PathBuf;
use std::time::Duration;

use onelog_engine::{EngineOptions, LogMode};

#[derive(Clone, Debug)]
pub struct Config {
    pub engine: EngineOptions,
    pub port: u16,
    pub socket: Option<PathBuf>,
    pub bind_address: String,
    pub max_connections: usize,
    pub wait_timeout: Duration,
    pub max_allowed_packet: usize,
    /// Stack of each connection thread (MariaDB's `thread_stack`): how deep a statement
    /// may nest before it gets error 1436.
    pub thread_stack: usize,
    pub ssl_cert: Option<PathBuf>,
    pub ssl_key: Option<PathBuf>,
    /// CA certificates client certificates are verified against (`--ssl-ca`).
    pub ssl_ca: Option<PathBuf>,
    pub require_secure_transport: bool,
    pub skip_networking: bool,
    /// `--skip-slave-start`: do not resume replication at start-up.
    pub skip_slave_start: bool,
    /// `--thread-handling=pool-of-threads`: limit running statements (see `pool.rs`).
    pub thread_pool: bool,
    pub pool: crate::pool::PoolOptions,
    /// `--rpl-semi-sync-*`: set as the global variables of the same names at start-up.
    pub semi_sync: Vec<(&'static str, String)>,
    /// `--slave-parallel-threads`, `--slave-parallel-mode`, `--slave-parallel-max-queued`:
    /// the global variables of the same names at start-up.
    pub replica_parallel: Vec<(&'static str, onelog_types::Value)>,
    /// `--log-error[=FILE]`: the error log goes to FILE (relative: in the data directory;
    /// empty: `onelogd.err` there) instead of stderr.
    pub log_error: Option<PathBuf>,
    /// `--secure-file-priv=DIR`: the only directory LOAD DATA INFILE and SELECT ... INTO
    /// OUTFILE may use (None: any; MariaDB's default).
    pub secure_file_priv: Option<String>,
    /// `--local-infile` (default ON; `--skip-local-infile`): LOAD DATA LOCAL is allowed.
    pub local_infile: bool,
    /// `--event-scheduler[=ON|OFF|DISABLED]` (None: OFF, as in MariaDB).
    pub event_scheduler: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            engine: EngineOptions::default(),
            port: 3306,
            socket: None,
            bind_address: "127.0.0.1".into(),
            max_connections: 151,
            wait_timeout: Duration::from_secs(28800),
            max_allowed_packet: 16 << 20,
            thread_stack: DEFAULT_THREAD_STACK,
            ssl_cert: None,
            ssl_key: None,
            ssl_ca: None,
            require_secure_transport: false,
            skip_networking: false,
            skip_slave_start: false,
            semi_sync: Vec::new(),
            replica_parallel: Vec::new(),
            log_error: None,
            secure_file_priv: None,
            local_infile: true,
            event_scheduler: None,
            thread_pool: false,
            pool: Default::default(),
        }
    }
}

/// Default `thread_stack`: 8 MiB (only the pages a statement touches are ever resident).
pub const DEFAULT_THREAD_STACK: usize = 8 << 20;
/// Smallest `thread_stack` taken: below it even simple statements would hit the guard's
/// reserve.
pub const MIN_THREAD_STACK: usize = 512 << 10;

/// Parses sizes like `16M`, `1G`, `4096`.
pub fn parse_size(v: &str) -> Result<u64, String> {
    let v = v.trim();
    let (num, mult) = match v.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&v[..v.len() - 1], 1u64 << 10),
        Some('M') => (&v[..v.len() - 1], 1 << 20),
        Some('G') => (&v[..v.len() - 1], 1 << 30),
        Some('T') => (&v[..v.len() - 1], 1 << 40),
        _ => (v, 1),
    };
    num.parse::<u64>()
        .map(|n| n * mult)
        .map_err(|_| format!("invalid size '{v}'"))
}

fn parse_bool(v: Option<&str>) -> Result<bool, String> {
    match v.map(|s| s.to_ascii_lowercase()) {
        None => Ok(true),
        Some(s) if s == "1" || s == "on" || s == "true" => Ok(true),
        Some(s) if s == "0" || s == "off" || s == "false" => Ok(false),
        Some(s) => Err(format!("invalid boolean '{s}'")),
    }
}

impl Config {
    /// Where `--log-error` sends the error log, if it was given.
    pub fn log_error_file(&self) -> Option<PathBuf> {
        let f = self.log_error.as_ref()?;
        Some(if f.as_os_str().is_empty() {
            self.engine.datadir.join("onelogd.err")
        } else if f.is_relative() {
            self.engine.datadir.join(f)
        } else {
            f.clone()
        })
    }

    /// Builds the configuration from `args` (without the program name).
    pub fn from_args(args: &[String]) -> Result<Config, String> {
        let mut cfg = Config::default();
        let mut opts: Vec<(String, Option<String>)> = Vec::new();
        // --defaults-file must come first, as in MariaDB, but accept it anywhere.
        for a in args {
            if let Some(path) = a.strip_prefix("--defaults-file=") {
                opts.extend(read_option_file(path)?);
            } else if a == "--no-defaults" {
            }
        }
        for a in args {
            if a.starts_with("--defaults-file=") || a == "--no-defaults" {
                continue;
            }
            let Some(body) = a.strip_prefix("--") else {
                return Err(format!("unexpected argument '{a}'"));
            };
            let (k, v) = match body.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (body.to_string(), None),
            };
            opts.push((k, v));
        }
        for (k, v) in opts {
            cfg.set(&k, v.as_deref())?;
        }
        Ok(cfg)
    }

    fn set(&mut self, key: &str, v: Option<&str>) -> Result<(), String> {
        let key = key.replace('_', "-");
        let (loose, key) = match key.strip_prefix("loose-") {
            Some(k) => (true, k.to_string()),
            None => (false, key),
        };
        let known = self.set_engine_option(&key, v)?
            || self.set_connection_option(&key, v)?
            || self.set_replication_option(&key, v)?
            || self.set_server_option(&key, v)?;
        if known || loose {
            Ok(())
        } else {
            Err(format!("unknown variable '{key}'"))
        }
    }

    /// The engine's options: data directory, binlog, RocksDB, commit path. False: not one
    /// of them.
    fn set_engine_option(&mut self, key: &str, v: Option<&str>) -> Result<bool, String> {
        let val = || v.ok_or_else(|| format!("option '--{key}' requires an argument"));
        let num = || -> Result<u64, String> { parse_size(val()?) };
        let e = &mut self.engine;
        match key {
            "datadir" => e.datadir = PathBuf::from(val()?),
            "server-id" => e.server_id = num()? as u32,
            "gtid-domain-id" => e.gtid_domain_id = num()? as u32,
            "log-bin" => {
                if e.mode == LogMode::Off {
                    e.mode = LogMode::Engine;
                }
            }
            "skip-log-bin" | "disable-log-bin" => e.mode = LogMode::Off,
            "binlog-storage" => {
                e.mode = match val()? {
                    "engine" => LogMode::Engine,
                    "file" => LogMode::File,
                    other => {
                        return Err(format!(
                            "invalid --binlog-storage '{other}' (expected engine or file)"
                        ))
                    }
                }
            }
            "sync-binlog" => e.sync_binlog = num()? as u32,
            "binlog-row-metadata" => {
                let v = val()?;
                e.binlog_row_metadata = onelog_engine::RowMetadata::parse(v).ok_or_else(|| {
                    format!(
                        "invalid --binlog-row-metadata '{v}' (expected MINIMAL or FULL; NO_LOG \
                         is not offered: recovery reads signedness from the binlog)"
                    )
                })?
            }
            "max-binlog-size" => e.max_binlog_size = num()?.max(4096),
            "binlog-expire-logs-seconds" => e.binlog_expire_logs_seconds = num()?,
            "expire-logs-days" => e.binlog_expire_logs_seconds = num()? * 86400,
            "innodb-lock-wait-timeout" | "lock-wait-timeout" => {
                e.lock_wait_timeout = Duration::from_secs(num()?)
            }
            "block-cache-size" | "innodb-buffer-pool-size" | "rocksdb-block-cache-size" => {
                e.block_cache_size = num()? as usize
            }
            // At least 64K: small enough for tests that want flushes all the time.
            "rocksdb-write-buffer-size" => e.write_buffer_size = num()?.max(64 << 10) as usize,
            "rocksdb-use-direct-reads" => e.use_direct_reads = parse_bool(v)?,
            "rocksdb-merge-buf-size" => e.merge_buf_size = num()?.max(1024) as usize,
            "rocksdb-default-cf-options" => e.rocksdb_options = Some(val()?.to_string()),
            "commit-nice" => {
                e.commit_nice = val()?
                    .parse::<i32>()
                    .ok()
                    .filter(|n| (-20..=19).contains(n))
                    .ok_or_else(|| {
                        format!(
                            "invalid --commit-nice '{}' (expected -20..19)",
                            v.unwrap_or("")
                        )
                    })?
            }
            "binlog-write-through" => e.binlog_write_through = parse_bool(v)?,
            "binlog-preallocate" => {
                e.binlog_preallocate = match val()? {
                    "zerofill" => onelog_engine::Preallocate::ZeroFill,
                    "fallocate" => onelog_engine::Preallocate::Fallocate,
                    "off" => onelog_engine::Preallocate::Off,
                    other => {
                        return Err(format!(
                    "invalid --binlog-preallocate '{other}' (expected zerofill, fallocate or off)"
                ))
                    }
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Listening, connections, threads and TLS. False: not one of them.
    fn set_connection_option(&mut self, key: &str, v: Option<&str>) -> Result<bool, String> {
        let val = || v.ok_or_else(|| format!("option '--{key}' requires an argument"));
        let num = || -> Result<u64, String> { parse_size(val()?) };
        match key {
            "port" => self.port = num()? as u16,
            "socket" => self.socket = Some(PathBuf::from(val()?)),
            "bind-address" => self.bind_address = val()?.to_string(),
            "skip-networking" => self.skip_networking = parse_bool(v)?,
            "max-connections" => self.max_connections = num()? as usize,
            "wait-timeout" => self.wait_timeout = Duration::from_secs(num()?),
            "max-allowed-packet" => self.max_allowed_packet = num()? as usize,
            "thread-stack" => {
                self.thread_stack = (num()? as usize).clamp(MIN_THREAD_STACK, 1 << 30)
            }
            "thread-handling" => {
                self.thread_pool = match val()? {
                    "pool-of-threads" => true,
                    "one-thread-per-connection" => false,
                    other => {
                        return Err(format!(
                            "invalid --thread-handling '{other}' \
                             (expected one-thread-per-connection or pool-of-threads)"
                        ))
                    }
                }
            }
            "thread-pool-size" => {
                self.pool.size = (num()? as usize).clamp(1, crate::pool::MAX_SIZE)
            }
            "thread-pool-oversubscribe" => {
                self.pool.oversubscribe = (num()? as usize).clamp(1, crate::pool::MAX_OVERSUBSCRIBE)
            }
            "thread-pool-stall-limit" => {
                self.pool.stall_limit = Duration::from_millis(num()?.max(1))
            }
            "thread-pool-prio-kickup-timer" => {
                self.pool.prio_kickup_timer = Duration::from_millis(num()?)
            }
            "ssl-cert" => self.ssl_cert = Some(PathBuf::from(val()?)),
            "ssl-key" => self.ssl_key = Some(PathBuf::from(val()?)),
            "ssl-ca" => self.ssl_ca = Some(PathBuf::from(val()?)),
            "require-secure-transport" => self.require_secure_transport = parse_bool(v)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Replica start, semi-synchronous replication and parallel apply. False: not one of
    /// them.
    fn set_replication_option(&mut self, key: &str, v: Option<&str>) -> Result<bool, String> {
        let val = || v.ok_or_else(|| format!("option '--{key}' requires an argument"));
        let num = || -> Result<u64, String> { parse_size(val()?) };
        match key {
            "skip-slave-start" | "skip-replica-start" => self.skip_slave_start = parse_bool(v)?,
            "rpl-semi-sync-master-enabled" | "rpl-semi-sync-slave-enabled" => {
                let name = if key.contains("master") {
                    "rpl_semi_sync_master_enabled"
                } else {
                    "rpl_semi_sync_slave_enabled"
                };
                let on = parse_bool(v)?;
                self.semi_sync.push((name, (on as u8).to_string()));
            }
            "rpl-semi-sync-master-timeout" => self
                .semi_sync
                .push(("rpl_semi_sync_master_timeout", num()?.to_string())),
            "rpl-semi-sync-master-wait-no-slave" => {
                let on = parse_bool(v)?;
                self.semi_sync
                    .push(("rpl_semi_sync_master_wait_no_slave", (on as u8).to_string()));
            }
            "rpl-semi-sync-master-wait-point" => {
                let p = val()?;
                onelog_engine::WaitPoint::parse(p).ok_or_else(|| {
                    format!(
                        "invalid --rpl-semi-sync-master-wait-point '{p}' (expected AFTER_SYNC \
                         or AFTER_COMMIT)"
                    )
                })?;
                self.semi_sync
                    .push(("rpl_semi_sync_master_wait_point", p.to_string()));
            }
            "slave-parallel-threads" | "slave-parallel-workers" => self.replica_parallel.push((
                "slave_parallel_threads",
                onelog_types::Value::UInt(num()?.min(16383)),
            )),
            "slave-parallel-max-queued" => self.replica_parallel.push((
                "slave_parallel_max_queued",
                onelog_types::Value::UInt(num()?.clamp(100, i32::MAX as u64)),
            )),
            "slave-parallel-mode" => {
                let m = val()?.to_ascii_lowercase();
                if ![
                    "none",
                    "minimal",
                    "conservative",
                    "optimistic",
                    "aggressive",
                ]
                .contains(&m.as_str())
                {
                    return Err(format!(
                        "invalid --slave-parallel-mode '{m}' (expected none, minimal, \
                         conservative, optimistic or aggressive)"
                    ));
                }
                self.replica_parallel
                    .push(("slave_parallel_mode", onelog_types::Value::str(&m)));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The error log, files, the event scheduler, and MariaDB options accepted without
    /// effect. False: not one of them.
    fn set_server_option(&mut self, key: &str, v: Option<&str>) -> Result<bool, String> {
        let val = || v.ok_or_else(|| format!("option '--{key}' requires an argument"));
        match key {
            "log-error" => {
                self.log_error = Some(match v {
                    Some(f) if !f.is_empty() => PathBuf::from(f),
                    _ => PathBuf::new(),
                })
            }
            "secure-file-priv" => self.secure_file_priv = Some(val()?.to_string()),
            "local-infile" => self.local_infile = parse_bool(v)?,
            "event-scheduler" => {
                let m = v.unwrap_or("ON").to_ascii_uppercase();
                if !["ON", "OFF", "DISABLED", "1", "0", "TRUE", "FALSE"].contains(&m.as_str()) {
                    return Err(format!(
                        "invalid --event-scheduler '{m}' (expected ON, OFF or DISABLED)"
                    ));
                }
                self.event_scheduler = Some(m);
            }
            "skip-local-infile" => self.local_infile = !parse_bool(v)?,
            // Accepted for compatibility with MariaDB option files; no effect here.
            "user"
            | "pid-file"
            | "basedir"
            | "tmpdir"
            | "lc-messages-dir"
            | "skip-name-resolve"
            | "binlog-format"
            | "character-set-server"
            | "collation-server"
            | "innodb-flush-log-at-trx-commit"
            | "default-storage-engine"
            | "log-basename"
            | "binlog-checksum"
            | "binlog-row-image" => {}

            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Reads the option groups onelogd uses from a my.cnf-style file.
fn read_option_file(path: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("could not open '{path}': {e}"))?;
    let mut out = Vec::new();
    let mut in_group = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(g) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_group = matches!(
                g.trim(),
                "mariadbd" | "mysqld" | "server" | "onelogd" | "mariadb"
            );
            continue;
        }
        if !in_group {
            continue;
        }
        let (k, v) = match line.split_once('=') {
            Some((k, v)) => (
                k.trim().to_string(),
                Some(v.trim().trim_matches('"').to_string()),
            ),
            None => (line.to_string(), None),
        };
        out.push((k, v));
    }
    Ok(out)
}

pub const USAGE: &str = "\
Usage: onelogd [OPTIONS]
  --defaults-file=FILE        read [mariadbd]/[mysqld]/[server]/[onelogd] groups of FILE
  --datadir=DIR               data directory (created and initialised if new)
  --port=N                    TCP port (default 3306)
  --bind-address=ADDR         address to listen on (default 127.0.0.1)
  --socket=PATH               unix socket path
  --skip-networking           no TCP listener
  --server-id=N               server id written in binlog events
  --gtid-domain-id=N          GTID domain of this server
  --binlog-storage=engine|file  engine: the binlog is the WAL (default); file: classic 2PC
  --skip-log-bin              no binlog; RocksDB WAL only
  --skip-slave-start          do not resume replication (master.info) at start-up
  --sync-binlog=N             fdatasync every N group commits (0: never)
  --max-binlog-size=SIZE      rotate binlog files at SIZE (default 1G)
  --binlog-expire-logs-seconds=N  purge binlog files older than N seconds at rotation
  --binlog-write-through      sync the binlog with O_DSYNC writes instead of fdatasync
  --binlog-preallocate=zerofill|fallocate|off  how binlog files reserve space (default zerofill)
  --binlog-row-metadata=FULL|MINIMAL  table-map metadata: FULL (default) adds column names
                              and the primary key to signedness and charsets
  --max-connections=N  --wait-timeout=SECS  --max-allowed-packet=SIZE
  --thread-stack=SIZE         stack of each connection thread (default 8M, at least 512K);
                              deeper statements get error 1436
  --ssl-cert=FILE --ssl-key=FILE  PEM certificate chain and private key: TLS for clients
  --ssl-ca=FILE               PEM CA certificates; client certificates are asked for and
                              verified against them (REQUIRE X509/ISSUER/SUBJECT accounts)
  --require-secure-transport  refuse TCP connections without TLS
  --secure-file-priv=DIR      LOAD DATA INFILE and SELECT ... INTO OUTFILE only in DIR
                              (default: anywhere the server may read and write)
  --skip-local-infile         refuse LOAD DATA LOCAL INFILE (default: allowed)
  --event-scheduler[=ON|OFF|DISABLED]  run events (default OFF; DISABLED: SET GLOBAL
                              event_scheduler is refused)
  --log-error[=FILE]          write the error log to FILE (default onelogd.err in the datadir)
  --rpl-semi-sync-master-enabled  commits wait for a semi-sync replica's ACK
  --rpl-semi-sync-master-wait-point=AFTER_SYNC|AFTER_COMMIT  AFTER_SYNC: a group is visible
                              and answered only once acknowledged (default AFTER_COMMIT)
  --rpl-semi-sync-master-timeout=MS  --rpl-semi-sync-master-wait-no-slave=ON|OFF
  --rpl-semi-sync-slave-enabled   as a replica, ask the primary for semi-sync
  --slave-parallel-threads=N  as a replica, apply with N workers (default 0: one thread)
  --slave-parallel-mode=none|minimal|conservative|optimistic|aggressive  which groups apply
                              in parallel (default optimistic)
  --slave-parallel-max-queued=BYTES  events queued per worker (default 131072)
  --innodb-lock-wait-timeout=SECS  --block-cache-size=SIZE
  --rocksdb-write-buffer-size=SIZE  RocksDB memtable size (default 16M, at least 64K)
  --rocksdb-use-direct-reads  read table files with O_DIRECT (the block cache is the only cache)
  --rocksdb-default-cf-options=STR  RocksDB options over onelog's (RocksDB's options-string
                              syntax, e.g. compression_per_level=kNoCompression:kLZ4Compression)
  --commit-nice=N             nice value of the commit path (default -10; needs CAP_SYS_NICE,
                              otherwise commits run at the normal priority; 0: off)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_file() {
        let dir = std::env::temp_dir().join(format!("onelog-cnf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("my.cnf");
        std::fs::write(
            &f,
            "[client]\nport=1\n[mariadbd]\nport=3310\nsync_binlog = 0\nloose-foo=1\nssl_ca=/etc/ca.pem\nrequire_secure_transport=ON\n[onelogd]\nbinlog-storage=file\n",
        )
        .unwrap();
        let args: Vec<String> = [
            format!("--defaults-file={}", f.display()),
            "--server-id=7".into(),
            "--max-binlog-size=1M".into(),
            "--rocksdb_write_buffer_size=32M".into(),
            "--rocksdb-default-cf-options=compression_per_level=kNoCompression".into(),
            "--rocksdb-use-direct-reads".into(),
            "--rocksdb-merge-buf-size=8K".into(),
            "--commit-nice=-5".into(),
        ]
        .into();
        let c = Config::from_args(&args).unwrap();
        assert_eq!(c.port, 3310);
        assert_eq!(
            c.ssl_ca.as_deref(),
            Some(std::path::Path::new("/etc/ca.pem"))
        );
        assert!(c.require_secure_transport);
        for opt in [
            "--ssl-ca=",
            "--ssl-cert=",
            "--ssl-key=",
            "--require-secure-transport",
        ] {
            assert!(USAGE.contains(opt), "{opt} missing from --help");
        }
        assert_eq!(c.engine.sync_binlog, 0);
        assert_eq!(c.engine.server_id, 7);
        assert_eq!(c.engine.mode, LogMode::File);
        assert_eq!(c.engine.max_binlog_size, 1 << 20);
        assert_eq!(c.engine.write_buffer_size, 32 << 20);
        assert_eq!(
            c.engine.rocksdb_options.as_deref(),
            Some("compression_per_level=kNoCompression")
        );
        assert!(c.engine.use_direct_reads);
        assert_eq!(c.engine.merge_buf_size, 8 << 10);
        assert_eq!(c.engine.commit_nice, -5);
        assert!(Config::from_args(&["--commit-nice=-21".to_string()]).is_err());
        assert!(Config::from_args(&["--bogus=1".to_string()]).is_err());
        let pool = Config::from_args(&[
            "--thread_handling=pool-of-threads".to_string(),
            "--thread-pool-size=1000".to_string(),
            "--thread-pool-stall-limit=20".to_string(),
        ])
        .unwrap();
        assert!(pool.thread_pool);
        assert_eq!(pool.pool.size, crate::pool::MAX_SIZE);
        assert_eq!(pool.pool.stall_limit, Duration::from_millis(20));
        assert_eq!(pool.pool.oversubscribe, 3);
        assert!(Config::from_args(&["--thread-handling=no-threads".to_string()]).is_err());
        assert_eq!(
            Config::from_args(&["--skip-log-bin".to_string()])
                .unwrap()
                .engine
                .mode,
            LogMode::Off
        );
    }
}
