//! Database: opens the engine, bootstraps the account tables on first open, re-runs DDL
//! from the binlog during recovery (the engine's `DdlReplayer`), and keeps what sessions
//! share: global variables, the account cache and the process list (for SHOW
//! PROCESSLIST and KILL).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use onelog_engine::{Catalog, DdlReplayer, Engine, EngineError, EngineOptions, Result as EResult};
use onelog_types::{code, DateTime, SqlError, Value};
use parking_lot::{Mutex, RwLock};

use crate::binder::{BindEnv, VirtualColumn};
use crate::parser::{self, Scope as VarScope, Stmt};
use crate::users::{Account, Accounts};
use crate::{sql_err, Session};

/// One row of SHOW PROCESSLIST.
#[derive(Clone, Debug)]
pub struct ProcessInfo {
    pub id: u32,
    pub user: String,
    pub host: String,
    pub db: Option<String>,
    pub command: String,
    pub time: u64,
    pub state: String,
    pub info: Option<String>,
}

pub(crate) struct ProcState {
    pub db: Option<String>,
    pub command: &'static str,
    pub info: Option<String>,
    pub since: Instant,
}

pub(crate) struct ProcEntry {
    pub id: u32,
    pub user: String,
    pub host: String,
    pub state: Mutex<ProcState>,
    pub control: Arc<crate::watchdog::StmtControl>,
    pub killed: Arc<AtomicBool>,
}

pub struct Database {
    pub(crate) engine: Arc<Engine>,
    pub(crate) started: Instant,
    pub(crate) globals: RwLock<HashMap<String, Value>>,
    pub(crate) accounts: RwLock<Accounts>,
    pub(crate) procs: Mutex<BTreeMap<u32, Arc<ProcEntry>>>,
    pub(crate) questions: AtomicU64,
    pub(crate) next_conn: AtomicU32,
    pub(crate) com_counters: Mutex<HashMap<&'static str, u64>>,
    /// Prepared statements of all sessions (`Prepared_stmt_count`).
    pub(crate) prepared: crate::prepared_count::PreparedCount,
    /// Told of every `SET GLOBAL` (the server applies `thread_pool_size` this way).
    pub(crate) global_hook: RwLock<Option<GlobalHook>>,
    pub(crate) conn_stats: crate::ConnStats,
    replicas: crate::replication::Replicas,
    /// FLUSH TABLES WITH READ LOCK.
    pub(crate) global_read: crate::locks::GlobalReadLock,
    /// GET_LOCK and the other user-level locks.
    pub(crate) user_locks: crate::user_locks::UserLocks,
    /// Stops the server (`SHUTDOWN`, COM_SHUTDOWN); set by the server.
    shutdown_hook: RwLock<Option<ShutdownHook>>,
    /// A session asked for a shutdown; the server runs the hook once it has answered.
    shutdown_requested: AtomicBool,
    /// The event scheduler (`crate::events`).
    pub(crate) events: crate::events::Scheduler,
    /// What SHOW ENGINE INNODB STATUS keeps between printouts.
    pub(crate) monitor: crate::engine_status::Monitor,
}

/// Asks the server to stop cleanly (as SIGTERM does).
pub type ShutdownHook = Box<dyn Fn() + Send + Sync>;

/// Called with a global variable's name and new value after `SET GLOBAL`.
pub type GlobalHook = Box<dyn Fn(&str, &Value) + Send + Sync>;

/// Re-runs DDL statements found in the binlog (recovery).
struct Replayer;

/// A binder environment with only a catalog and a current database (recovery, bootstrap).
pub(crate) struct PlainEnv {
    pub(crate) db: Option<String>,
    pub(crate) catalog: Arc<Catalog>,
}

impl BindEnv for PlainEnv {
    fn current_db(&self) -> Option<&str> {
        self.db.as_deref()
    }
    fn catalog(&self) -> Arc<Catalog> {
        self.catalog.clone()
    }
    fn params(&self) -> &[Value] {
        &[]
    }
    fn now(&self) -> DateTime {
        now()
    }
    fn connection_id(&self) -> u32 {
        0
    }
    fn last_insert_id(&self) -> u64 {
        0
    }
    fn row_count(&self) -> i64 {
        0
    }
    fn user(&self) -> String {
        "root@localhost".into()
    }
    fn version(&self) -> String {
        String::new()
    }
    fn sys_var(&self, _scope: Option<VarScope>, name: &str) -> Result<Value, SqlError> {
        Err(sql_err(
            code::ER_UNKNOWN_SYSTEM_VARIABLE,
            format!("Unknown system variable '{name}'"),
        ))
    }
    fn user_var(&self, _name: &str) -> Value {
        Value::Null
    }
    fn info_schema(&self, _table: &str) -> Option<(Vec<VirtualColumn>, Vec<Vec<Value>>)> {
        None
    }
}

/// The current time as a UTC datetime with microseconds.
pub fn now() -> DateTime {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    DateTime::from_unix(d.as_secs() as i64, d.subsec_micros())
}

impl DdlReplayer for Replayer {
    fn replay(&self, engine: &Engine, db: &str, sql: &str) -> EResult<()> {
        let parsed = parser::parse_one(sql).map_err(|e| EngineError::Other(e.message))?;
        // ANALYZE / OPTIMIZE / REPAIR TABLE: logged for replicas, nothing to redo.
        if let Stmt::Admin(parser::Admin::TableMaint(_)) = &parsed.stmt {
            return engine.ddl_replay(db, sql, onelog_engine::Ddl::LogOnly);
        }
        match &parsed.stmt {
            Stmt::Admin(parser::Admin::CreateView(v)) => {
                let view_db = v.db.clone().unwrap_or_else(|| db.to_string());
                let definer = match &v.definer {
                    Some(Some(d)) => d.clone(),
                    _ => ("root".to_string(), "localhost".to_string()),
                };
                let charset = ("utf8mb4".to_string(), "utf8mb4_general_ci".to_string());
                let def = crate::views::view_def(v, definer, charset);
                let (ddl, _) = crate::views::create_ddl(v, &view_db, &def);
                return engine.ddl_replay(db, sql, ddl);
            }
            Stmt::Admin(parser::Admin::DropView { names, if_exists }) => {
                let current = (!db.is_empty()).then_some(db);
                let ddl = crate::views::drop_ddl(names, *if_exists, current)
                    .map_err(|e| EngineError::Other(e.message))?;
                return engine.ddl_replay(db, sql, ddl);
            }
            Stmt::Admin(parser::Admin::Sequence(q)) => {
                let ddl = crate::sequences::replay_ddl(q, db, engine)
                    .map_err(|e| EngineError::Other(e.message))?;
                return engine.ddl_replay(db, sql, ddl);
            }
            Stmt::Admin(parser::Admin::Event(e)) => {
                let server_id = engine.options().server_id;
                let ddl = crate::events::replay_ddl(e, db, &engine.catalog(), server_id)
                    .map_err(|e| EngineError::Other(e.message))?;
                return engine.ddl_replay(db, sql, ddl);
            }
            Stmt::Admin(parser::Admin::Routine(r)) => {
                let ddl = crate::routines::replay_ddl(r, db, &engine.catalog())
                    .map_err(|e| EngineError::Other(e.message))?;
                return engine.ddl_replay(db, sql, ddl);
            }
            _ => {}
        }
        let Stmt::Sql(stmt) = parsed.stmt else {
            return Err(EngineError::Other(format!("not a DDL statement: {sql}")));
        };
        let env = PlainEnv {
            db: (!db.is_empty()).then(|| db.to_string()),
            catalog: engine.catalog(),
        };
        let b = crate::binder::Binder::new(&env, &parsed.text);
        match crate::binder::bind_ddl(&b, &stmt) {
            Ok(Some((mut ddl, _))) => {
                // The logged statement succeeded: converting without strict mode gives the
                // same values (see `alter.rs`).
                if let onelog_engine::Ddl::AlterTable {
                    db: d,
                    table,
                    convert,
                    ..
                } = &mut ddl
                {
                    *convert = Some(onelog_engine::Converter(Arc::new(
                        crate::alter::AlterConverter::new(false, d, table),
                    )));
                }
                engine.ddl_replay(db, sql, ddl)
            }
            Ok(None) => Err(EngineError::Other(format!("not a DDL statement: {sql}"))),
            Err(e) => Err(EngineError::Other(e.message)),
        }
    }
}

impl DdlReplayer for Database {
    fn replay(&self, engine: &Engine, db: &str, sql: &str) -> EResult<()> {
        Replayer.replay(engine, db, sql)
    }
}

fn engine_sql_err(e: EngineError) -> SqlError {
    crate::executor::engine_err(e)
}

impl Database {
    /// Opens (creating if needed) the data directory: recovers the engine, creates the
    /// account tables and `root@localhost` on first open.
    pub fn open(opts: EngineOptions) -> Result<Arc<Database>, SqlError> {
        let engine = Engine::open(opts, &Replayer).map_err(engine_sql_err)?;
        Self::with_engine(engine)
    }

    /// Builds the SQL layer over an engine that is already open.
    pub fn with_engine(engine: Arc<Engine>) -> Result<Arc<Database>, SqlError> {
        let db = Arc::new(Database {
            engine,
            started: Instant::now(),
            // NULL: no --secure-file-priv (the server sets it when given).
            globals: RwLock::new(HashMap::from([(
                "secure_file_priv".to_string(),
                Value::Null,
            )])),
            accounts: RwLock::new(Accounts::default()),
            procs: Mutex::new(BTreeMap::new()),
            questions: AtomicU64::new(0),
            next_conn: AtomicU32::new(1),
            com_counters: Mutex::new(HashMap::new()),
            prepared: Default::default(),
            global_hook: RwLock::new(None),
            conn_stats: crate::ConnStats::default(),
            replicas: Default::default(),
            global_read: Default::default(),
            user_locks: Default::default(),
            shutdown_hook: RwLock::new(None),
            shutdown_requested: AtomicBool::new(false),
            events: Default::default(),
            monitor: Default::default(),
        });
        crate::users::bootstrap(&db)?;
        crate::users::reload(&db)?;
        Ok(db)
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// A fresh connection id (for the server's handshake).
    pub fn next_connection_id(&self) -> u32 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// Sets a read-only global variable the server knows (`port`, `socket`, `hostname`,
    /// `datadir`, `pid_file`, `max_connections` ...).
    pub fn set_server_variable(&self, name: &str, value: Value) {
        self.globals
            .write()
            .insert(name.to_ascii_lowercase(), value);
    }

    /// Installs the function told of every `SET GLOBAL` (one; a later call replaces it).
    pub fn on_global_set(&self, hook: GlobalHook) {
        *self.global_hook.write() = Some(hook);
    }

    /// The current value of a global variable, as `SET GLOBAL` or the server left it (None
    /// when it still has its built-in default).
    pub fn global_variable(&self, name: &str) -> Option<Value> {
        self.globals.read().get(&name.to_ascii_lowercase()).cloned()
    }

    /// Checks a mysql_native_password login: `auth_response` is the client's scrambled
    /// password (empty for no password), `tls` what the connection's TLS session
    /// established (None: not TLS), checked against the account's `REQUIRE`. Returns the
    /// matched account; any failure is MariaDB's 1045.
    pub fn authenticate(
        &self,
        user: &str,
        host: &str,
        scramble: &[u8],
        auth_response: &[u8],
        tls: Option<&crate::PeerTls>,
    ) -> Result<Account, SqlError> {
        let denied = || {
            sql_err(
                code::ER_ACCESS_DENIED_ERROR,
                format!(
                    "Access denied for user '{user}'@'{host}' (using password: {})",
                    if auth_response.is_empty() {
                        "NO"
                    } else {
                        "YES"
                    }
                ),
            )
        };
        let acc = self
            .accounts
            .read()
            .find(user, host)
            .cloned()
            .ok_or_else(denied)?;
        if crate::users::check_scramble(&acc.password_hash, scramble, auth_response)
            && acc.ssl.admits(tls)
        {
            Ok(acc)
        } else {
            Err(denied())
        }
    }

    /// The stored password hash (`*HEX(SHA1(SHA1(pw)))`, empty for none) of the account
    /// that `user` connecting from `host` maps to.
    pub fn password_hash(&self, user: &str, host: &str) -> Option<String> {
        self.accounts
            .read()
            .find(user, host)
            .map(|a| a.password_hash.clone())
    }

    pub fn account(&self, user: &str, host: &str) -> Option<Account> {
        self.accounts.read().find(user, host).cloned()
    }

    pub fn process_list(&self) -> Vec<ProcessInfo> {
        let cat = self.engine.catalog();
        let events = cat
            .objects_of(onelog_engine::ObjectKind::Event)
            .next()
            .is_some();
        self.procs
            .lock()
            .values()
            .map(|p| {
                let s = p.state.lock();
                ProcessInfo {
                    id: p.id,
                    user: p.user.clone(),
                    host: p.host.clone(),
                    db: s.db.clone(),
                    command: s.command.to_string(),
                    time: s.since.elapsed().as_secs(),
                    state: match s.command {
                        "Query" => "executing".into(),
                        "Daemon" if !events => "Waiting on empty queue".into(),
                        "Daemon" => "Waiting for next activation".into(),
                        _ => String::new(),
                    },
                    info: s.info.clone(),
                }
            })
            .collect()
    }

    /// KILL [QUERY] id: false if no such connection.
    pub fn kill(&self, id: u32, query_only: bool) -> bool {
        match self.procs.lock().get(&id) {
            Some(p) => {
                if !query_only {
                    p.killed.store(true, Ordering::SeqCst);
                }
                p.control.interrupt();
                true
            }
            None => false,
        }
    }

    /// Replicas registered and dumps running (the primary side of replication).
    pub fn replicas(&self) -> &crate::replication::Replicas {
        &self.replicas
    }

    /// The connection counters the server keeps (Aborted_connects, Ssl_accepts, ...).
    pub fn conn_stats(&self) -> &crate::ConnStats {
        &self.conn_stats
    }

    pub fn threads_connected(&self) -> usize {
        self.procs.lock().len()
    }

    pub fn uptime(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// Sets what `SHUTDOWN` and COM_SHUTDOWN do (the server stops as on SIGTERM).
    pub fn set_shutdown_hook(&self, hook: ShutdownHook) {
        *self.shutdown_hook.write() = Some(hook);
    }

    /// Asks for a clean shutdown, which starts once the asking session has been answered
    /// ([`run_requested_shutdown`](Self::run_requested_shutdown)); false when nothing can
    /// stop the server (an embedded database).
    pub(crate) fn request_shutdown(&self) -> bool {
        let hooked = self.shutdown_hook.read().is_some();
        if hooked {
            self.shutdown_requested.store(true, Ordering::SeqCst);
        }
        hooked
    }

    /// Starts the shutdown a session asked for, if one did (the server calls this after
    /// sending each answer).
    pub fn run_requested_shutdown(&self) {
        if self.shutdown_requested.swap(false, Ordering::SeqCst) {
            if let Some(h) = self.shutdown_hook.read().as_ref() {
                h();
            }
        }
    }

    /// The statements received so far (`Questions`).
    pub fn questions(&self) -> u64 {
        self.questions.load(Ordering::Relaxed)
    }

    /// Flushes and stops the engine (clean shutdown).
    pub fn shutdown(&self) -> Result<(), SqlError> {
        self.events.stop();
        self.engine.shutdown().map_err(engine_sql_err)
    }

    /// A session for internal work (bootstrap, account changes, the replica's applier):
    /// no privilege checks, no process entry.
    pub fn system_session(self: &Arc<Self>) -> Session {
        Session::new_internal(self.clone())
    }

    pub(crate) fn count_com(&self, name: &'static str) {
        *self.com_counters.lock().entry(name).or_insert(0) += 1;
    }
}
