//! Listeners and the server's life cycle.
//!
//! Each accepted connection gets its own thread (the engine's calls block; MariaDB does the
//! same with its one-thread-per-connection scheduler); with `--thread-handling=pool-of-threads`
//! only `thread_pool_size` of them execute a statement at a time (`pool.rs`). SIGTERM or SIGINT stops accepting,
//! flushes the engine (a clean shutdown needs no recovery) and exits.

use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use onelog_sql::Database;
use onelog_types::Value;

use crate::config::Config;
use crate::conn::{self, Stream};
use crate::pool::Pool;

pub struct Server {
    pub cfg: Config,
    pub db: Arc<Database>,
    pub connections: AtomicUsize,
    pub stopping: AtomicBool,
    /// TLS configuration when `--ssl-cert` and `--ssl-key` are given (with `--ssl-ca`,
    /// client certificates are verified).
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The statement limit of `--thread-handling=pool-of-threads`.
    pub pool: Option<Arc<Pool>>,
}

fn spawn_conn(server: &Arc<Server>, stream: Stream, host: String) {
    let s = server.clone();
    let _ = std::thread::Builder::new()
        .name("onelog-conn".into())
        .stack_size(server.cfg.thread_stack)
        .spawn(move || conn::serve(&s, stream, host));
}

/// Opens the database, listens, serves until SIGTERM/SIGINT.
pub fn run(cfg: Config) -> Result<(), String> {
    let tls = match (&cfg.ssl_cert, &cfg.ssl_key) {
        (Some(c), Some(k)) => Some(crate::tls::server_config(c, k, cfg.ssl_ca.as_deref())?),
        (None, None) if cfg.ssl_ca.is_some() => {
            return Err("--ssl-ca needs --ssl-cert and --ssl-key".into())
        }
        (None, None) => None,
        _ => return Err("--ssl-cert and --ssl-key must be given together".into()),
    };
    let db = Database::open(cfg.engine.clone()).map_err(|e| e.message)?;
    apply_settings(&db, &cfg, tls.is_some())?;
    let po = &cfg.pool;
    let pool = cfg.thread_pool.then(|| Arc::new(Pool::new(*po)));
    if let Some(p) = pool.clone() {
        db.on_global_set(Box::new(move |name, v| {
            let n = match v {
                Value::UInt(n) => *n,
                Value::Int(n) => (*n).max(0) as u64,
                _ => return,
            };
            let ms = std::time::Duration::from_millis(n);
            match name {
                "thread_pool_size" => p.set_size(n as usize),
                "thread_pool_oversubscribe" => p.set_oversubscribe(n as usize),
                "thread_pool_stall_limit" => p.set_stall_limit(ms),
                "thread_pool_prio_kickup_timer" => p.set_kickup_timer(ms),
                _ => {}
            }
        }));
    }
    let server = Arc::new(Server {
        cfg,
        db,
        connections: AtomicUsize::new(0),
        stopping: AtomicBool::new(false),
        tls,
        pool,
    });
    let cfg = &server.cfg;
    listen(&server)?;
    // The replica statements act on this server's replica; it resumes at start-up when
    // `master.info` names a primary.
    let replica = crate::replica::Replica::open(server.db.clone(), &cfg.engine.datadir)?;
    server.db.replicas().set_control(replica.clone());
    if replica.configured() && !cfg.skip_slave_start {
        use onelog_sql::ReplicaControl;
        if let Err(e) = replica.start() {
            onelog_types::error!("replica not started: {}", e.message);
        }
    }
    onelog_types::note!(
        "onelogd: ready for connections. Version: '{}'  socket: '{}'  port: {}  binlog: {:?}",
        onelog_protocol::DEFAULT_SERVER_VERSION.trim_start_matches("5.5.5-"),
        cfg.socket
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        if cfg.skip_networking { 0 } else { cfg.port },
        cfg.engine.mode,
    );
    let fatal = wait_for_stop(&server)?;
    server.stopping.store(true, Ordering::Relaxed);
    replica.shutdown();
    let r = server.db.shutdown().map_err(|e| e.message);
    if let Some(path) = &server.cfg.socket {
        let _ = std::fs::remove_file(path);
    }
    onelog_types::note!("shutdown complete");
    match fatal {
        Some(why) => Err(format!("stopped: {why}")),
        None => r,
    }
}

/// Sets what the options say on the opened database: semi-sync and parallel-apply
/// settings, the event scheduler, and the read-only globals that describe this server
/// (`@@port`, `@@socket`, ...; clients read some of them: the Rust mysql crate sizes its
/// packets by @@max_allowed_packet).
fn apply_settings(db: &Arc<Database>, cfg: &Config, tls: bool) -> Result<(), String> {
    {
        let ss = db.engine().semisync();
        for (name, v) in &cfg.semi_sync {
            match *name {
                "rpl_semi_sync_master_enabled" => ss.set_enabled(v == "1"),
                "rpl_semi_sync_slave_enabled" => {
                    ss.slave_enabled.store(v == "1", Ordering::Relaxed)
                }
                "rpl_semi_sync_master_wait_no_slave" => ss.set_wait_no_slave(v == "1"),
                "rpl_semi_sync_master_timeout" => ss.set_timeout(std::time::Duration::from_millis(
                    v.parse().unwrap_or(10_000),
                )),
                _ => {
                    if let Some(p) = onelog_engine::WaitPoint::parse(v) {
                        ss.set_wait_point(p)
                    }
                }
            }
        }
    }
    for (name, v) in &cfg.replica_parallel {
        db.set_server_variable(name, v.clone());
    }
    if let Some(mode) = &cfg.event_scheduler {
        db.set_event_scheduler(mode)?;
    }
    let socket = cfg.socket.as_ref().map(|p| p.display().to_string());
    let port = if cfg.skip_networking { 0 } else { cfg.port };
    db.set_server_variable("port", Value::UInt(port as u64));
    db.set_server_variable("socket", Value::str(socket.as_deref().unwrap_or("")));
    db.set_server_variable("skip_networking", Value::Int(cfg.skip_networking as i64));
    db.set_server_variable("max_connections", Value::UInt(cfg.max_connections as u64));
    db.set_server_variable(
        "max_allowed_packet",
        Value::UInt(cfg.max_allowed_packet as u64),
    );
    db.set_server_variable("wait_timeout", Value::UInt(cfg.wait_timeout.as_secs()));
    db.set_server_variable("thread_stack", Value::UInt(cfg.thread_stack as u64));
    db.set_server_variable("local_infile", Value::Int(cfg.local_infile as i64));
    if let Some(dir) = &cfg.secure_file_priv {
        let dir = onelog_sql::normalize_secure_file_priv(dir).map_err(|e| {
            format!("Failed to normalize the argument for --secure-file-priv ({dir}): {e}")
        })?;
        db.set_server_variable("secure_file_priv", Value::str(&dir));
    }
    db.set_server_variable("have_ssl", Value::str(if tls { "YES" } else { "DISABLED" }));
    db.set_server_variable(
        "thread_handling",
        Value::str(if cfg.thread_pool {
            "pool-of-threads"
        } else {
            "one-thread-per-connection"
        }),
    );
    for (name, v) in [
        ("thread_pool_size", cfg.pool.size as u64),
        ("thread_pool_oversubscribe", cfg.pool.oversubscribe as u64),
        (
            "thread_pool_stall_limit",
            cfg.pool.stall_limit.as_millis() as u64,
        ),
        (
            "thread_pool_prio_kickup_timer",
            cfg.pool.prio_kickup_timer.as_millis() as u64,
        ),
    ] {
        db.set_server_variable(name, Value::UInt(v));
    }
    Ok(())
}

/// Accepts connections on the TCP port (unless networking is off) and the Unix socket,
/// each on a thread of its own.
fn listen(server: &Arc<Server>) -> Result<(), String> {
    let cfg = &server.cfg;
    if !cfg.skip_networking {
        let addr = format!("{}:{}", cfg.bind_address, cfg.port);
        let l = TcpListener::bind(&addr).map_err(|e| format!("can't bind {addr}: {e}"))?;
        let s = Arc::clone(server);
        std::thread::spawn(move || {
            for c in l.incoming() {
                if s.stopping.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(c) = c else { continue };
                let _ = c.set_nodelay(true);
                let host = match c.peer_addr() {
                    Ok(a) if a.ip().is_loopback() => "localhost".to_string(),
                    Ok(a) => a.ip().to_string(),
                    Err(_) => "unknown".into(),
                };
                spawn_conn(&s, Stream::Tcp(c), host);
            }
        });
    }
    if let Some(path) = &cfg.socket {
        let _ = std::fs::remove_file(path);
        let l = UnixListener::bind(path).map_err(|e| format!("can't bind {path:?}: {e}"))?;
        let s = Arc::clone(server);
        std::thread::spawn(move || {
            for c in l.incoming() {
                if s.stopping.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(c) = c else { continue };
                spawn_conn(&s, Stream::Unix(c), "localhost".into());
            }
        });
    }
    Ok(())
}

/// Waits for SIGTERM/SIGINT, a client's SHUTDOWN, or a fatal commit failure; returns the
/// latter's reason.
fn wait_for_stop(server: &Arc<Server>) -> Result<Option<String>, String> {
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ])
    .map_err(|e| e.to_string())?;
    // SHUTDOWN and COM_SHUTDOWN stop the server as SIGTERM does.
    {
        let handle = signals.handle();
        server.db.set_shutdown_hook(Box::new(move || {
            eprintln!("onelogd: shutdown requested by a client");
            handle.close();
        }));
    }
    // A commit that is in the binlog but could not be applied to the tables stops the
    // server as a signal would: its client was told it committed, and only recovery (a
    // restart) applies it.
    let fatal = Arc::new(parking_lot::Mutex::new(None::<String>));
    {
        let (db, fatal, handle) = (server.db.clone(), fatal.clone(), signals.handle());
        std::thread::Builder::new()
            .name("onelog-fatal".into())
            .spawn(move || {
                let why = db.engine().wait_fatal();
                *fatal.lock() = Some(why);
                handle.close();
            })
            .map_err(|e| e.to_string())?;
    }
    if let Some(sig) = signals.forever().next() {
        onelog_types::note!("got signal {sig}, shutting down");
    }
    let fatal = fatal.lock().clone();
    if let Some(why) = &fatal {
        onelog_types::error!("stopping: {why}");
    }
    Ok(fatal)
}
