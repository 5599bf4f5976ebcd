//! Session: one per connection. Runs statements in transactions (autocommit, BEGIN/COMMIT,
//! savepoints, statement-level rollback on error, whole-transaction rollback on deadlock,
//! implicit commit before DDL), keeps session variables, user variables, warnings and
//! prepared statements (COM_STMT_PREPARE by id, `PREPARE name` by name), checks
//! privileges, and dispatches each statement to its stage.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use onelog_engine::{Isolation, Txn};
use onelog_types::{code, DateTime, SqlError, Value};
use parking_lot::Mutex;
use sqlparser::ast as sq;

use crate::binder::{self, Binder, InsertTemplate, Select, SelectTemplate, VirtualColumn};
use crate::database::{now, Database, ProcEntry, ProcState};
use crate::executor::{self, engine_err, ExecCtx};
use crate::parser::{self, Admin, Parsed, Scope as VarScope, Stmt};
use crate::prepared_count::SessionCount;
use crate::users::{self, Priv};
use crate::vars;
use crate::watchdog::StmtControl;
use crate::{sql_err, status_flags, QueryResult, ResultColumn};

mod bind_env;
mod binlog_stmt;
mod bulk;
mod prepared_exec;
mod track;
mod txn;
mod xa;
use bind_env::Env;
mod variables;

/// What COM_STMT_PREPARE answers.
#[derive(Clone, Debug)]
pub struct PreparedInfo {
    pub id: u32,
    pub params: u16,
    pub columns: Vec<ResultColumn>,
}

/// A statement kept parsed to run again: prepared, or a statement shape.
struct Prepared {
    parsed: Parsed,
    kept: Kept,
}

impl Prepared {
    fn new(parsed: Parsed) -> Self {
        Prepared {
            parsed,
            kept: Kept::default(),
        }
    }
}

/// The binding kept with a statement that runs again.
#[derive(Default)]
struct Kept {
    /// When it is an INSERT / REPLACE ... VALUES that ran (see `binder::InsertTemplate`).
    insert: Option<InsertTemplate>,
    /// When it is a SELECT (see `binder::SelectTemplate`).
    select: SelectKept,
}

/// A kept SELECT's template, with the number of templates made for it so far.
pub(crate) enum SelectKept {
    Ready(Box<SelectTemplate>, u8),
    /// None yet, or it no longer applies: the statement binds afresh, and tries to make
    /// one while fewer than [`SELECT_TEMPLATES`] were made (a statement that cannot
    /// have one is set to that number).
    Unbound(u8),
}

impl Default for SelectKept {
    fn default() -> Self {
        SelectKept::Unbound(0)
    }
}

/// Templates a kept SELECT makes at most (making one binds twice; a client that keeps
/// changing the kinds of its values would pay that at each run).
const SELECT_TEMPLATES: u8 = 8;

/// Statement shapes a session keeps parsed (it forgets them all when full).
const SHAPE_CACHE: usize = 32;

pub struct Session {
    pub(crate) db: Arc<Database>,
    pub(crate) user: String,
    pub(crate) host: String,
    /// The account privileges apply from (`user`@`host pattern`).
    pub(crate) account_host: String,
    pub(crate) conn_id: u32,
    pub(crate) current_db: Option<String>,
    pub(crate) txn: Option<Txn>,
    in_explicit: bool,
    read_only_txn: bool,
    /// The GTID the next commit or DDL is logged under (replication applies keep their
    /// primary's GTIDs).
    pub(crate) next_gtid: Option<onelog_engine::Gtid>,
    /// `SET gtid_seq_no`: the sequence number of the next GTID this session logs (0: the
    /// binlog's next), as mariadb-binlog's output replays transactions under their GTIDs.
    pub(crate) gtid_seq_no: u64,
    /// What this session's `BINLOG` statements set up (see `session/binlog_stmt.rs`).
    binlog_replay: Option<Box<binlog_stmt::Replay>>,
    pub(crate) vars: HashMap<String, Value>,
    pub(crate) user_vars: HashMap<String, Value>,
    pub(crate) warnings: Vec<SqlError>,
    last_insert_id: u64,
    /// `@@last_gtid`: the GTID of this session's last logged commit.
    last_gtid: String,
    pub(crate) row_count: i64,
    prepared: HashMap<u32, Prepared>,
    /// Text-protocol prepared statements (`PREPARE name FROM ...`), by lower-case name.
    named_prepared: HashMap<String, Prepared>,
    /// This session's share of the server's prepared statements.
    prepared_count: SessionCount,
    next_stmt: u32,
    pub(crate) control: Arc<StmtControl>,
    killed: Arc<AtomicBool>,
    proc: Option<Arc<ProcEntry>>,
    next_isolation: Option<Isolation>,
    /// Bypasses privilege checks (bootstrap and account maintenance).
    pub(crate) internal: bool,
    /// Tables a statement may use without privileges of its own: those of the
    /// `SQL SECURITY DEFINER` views it writes through (see `view_dml.rs`).
    pub(crate) view_base_ok: Vec<(String, String)>,
    /// CHECK OPTION conditions of the views the statement writes through.
    pub(crate) view_checks: Vec<crate::checks::ViewCheck>,
    stmt_now: DateTime,
    /// `SET TIMESTAMP`: NOW() of every statement until reset (replication applies a
    /// statement at its primary's time).
    pub(crate) fixed_now: Option<DateTime>,
    pub(crate) params: Vec<Value>,
    /// Parsed statement shapes by their text (see `crate::shape`).
    shapes: HashMap<String, Prepared>,
    /// The connection's TLS session (None: not TLS), for `Ssl_cipher` / `Ssl_version`.
    tls: Option<crate::PeerTls>,
    /// The client set CLIENT_FOUND_ROWS: UPDATE reports matched rows as affected rows.
    client_found_rows: bool,
    /// Session state changes to report (CLIENT_SESSION_TRACK).
    track: track::Tracker,
    /// Where the OUT values of the prepared CALL being run go (`routines::prepared_call`).
    pub(crate) call_out: Option<crate::routines::CallOut>,
    /// LOCK TABLES and FLUSH TABLES WITH READ LOCK (`crate::locks`).
    pub(crate) locks: crate::locks::SessionLocks,
    /// Stored programs running (`crate::routines`).
    pub(crate) sp: crate::routines::SpState,
    /// LASTVAL's values (`crate::sequences`).
    pub(crate) seq_last: crate::sequences::LastValues,
    /// The session's XA transaction (`session/xa.rs`).
    xa: Option<xa::XaSession>,
    /// Temporary tables (`crate::temp_tables`).
    pub(crate) temp: crate::temp_tables::TempTables,
}

pub(crate) fn ok(affected: u64, last_insert_id: u64, warnings: usize, info: String) -> QueryResult {
    QueryResult::Ok {
        affected_rows: affected,
        last_insert_id,
        warnings: warnings.min(65535) as u16,
        info,
    }
}

/// Tables a plan reads (for privilege checks and metadata locks).
fn tables_of(sel: &Select, out: &mut Vec<(String, String)>) {
    binder::tables_read(sel, out)
}

impl Session {
    pub fn new(db: Arc<Database>, user: String, host: String, connection_id: u32) -> Session {
        let control = StmtControl::new();
        let killed = Arc::new(AtomicBool::new(false));
        let proc = Arc::new(ProcEntry {
            id: connection_id,
            user: user.clone(),
            host: host.clone(),
            state: Mutex::new(ProcState {
                db: None,
                command: "Sleep",
                info: None,
                since: Instant::now(),
            }),
            control: control.clone(),
            killed: killed.clone(),
        });
        db.procs.lock().insert(connection_id, proc.clone());
        let account_host = db
            .account(&user, &host)
            .map(|a| a.host)
            .unwrap_or_else(|| host.clone());
        Session {
            db,
            user,
            host,
            account_host,
            conn_id: connection_id,
            current_db: None,
            txn: None,
            in_explicit: false,
            read_only_txn: false,
            next_gtid: None,
            gtid_seq_no: 0,
            binlog_replay: None,
            vars: HashMap::new(),
            user_vars: HashMap::new(),
            warnings: Vec::new(),
            last_insert_id: 0,
            last_gtid: String::new(),
            row_count: -1,
            prepared: HashMap::new(),
            named_prepared: HashMap::new(),
            prepared_count: SessionCount::default(),
            next_stmt: 1,
            control,
            killed,
            proc: Some(proc),
            next_isolation: None,
            internal: false,
            view_base_ok: Vec::new(),
            view_checks: Vec::new(),
            stmt_now: now(),
            fixed_now: None,
            params: Vec::new(),
            shapes: HashMap::new(),
            tls: None,
            client_found_rows: false,
            track: Default::default(),
            call_out: None,
            locks: Default::default(),
            sp: Default::default(),
            seq_last: Default::default(),
            xa: None,
            temp: Default::default(),
        }
    }

    pub(crate) fn new_internal(db: Arc<Database>) -> Session {
        Session {
            db,
            user: "root".into(),
            host: "localhost".into(),
            account_host: "localhost".into(),
            conn_id: 0,
            current_db: None,
            txn: None,
            in_explicit: false,
            read_only_txn: false,
            next_gtid: None,
            gtid_seq_no: 0,
            binlog_replay: None,
            vars: HashMap::new(),
            user_vars: HashMap::new(),
            warnings: Vec::new(),
            last_insert_id: 0,
            last_gtid: String::new(),
            row_count: -1,
            prepared: HashMap::new(),
            named_prepared: HashMap::new(),
            prepared_count: SessionCount::default(),
            next_stmt: 1,
            control: StmtControl::new(),
            killed: Arc::new(AtomicBool::new(false)),
            proc: None,
            next_isolation: None,
            internal: true,
            view_base_ok: Vec::new(),
            view_checks: Vec::new(),
            stmt_now: now(),
            fixed_now: None,
            params: Vec::new(),
            shapes: HashMap::new(),
            tls: None,
            client_found_rows: false,
            track: Default::default(),
            call_out: None,
            locks: Default::default(),
            sp: Default::default(),
            seq_last: Default::default(),
            xa: None,
            temp: Default::default(),
        }
    }

    pub fn database(&self) -> &Arc<Database> {
        &self.db
    }

    pub fn connection_id(&self) -> u32 {
        self.conn_id
    }

    pub fn current_db(&self) -> Option<&str> {
        self.current_db.as_deref()
    }

    /// Records the connection's TLS session (the server does, after login).
    pub fn set_tls(&mut self, tls: Option<crate::PeerTls>) {
        self.tls = tls;
    }

    /// Records whether the client set CLIENT_FOUND_ROWS at login (the server does): then
    /// UPDATE's affected rows (and ROW_COUNT()) count the rows matched, changed or not.
    pub fn set_client_found_rows(&mut self, on: bool) {
        self.client_found_rows = on;
    }

    pub(crate) fn tls(&self) -> Option<&crate::PeerTls> {
        self.tls.as_ref()
    }

    /// SERVER_STATUS_IN_TRANS / SERVER_STATUS_AUTOCOMMIT for OK/EOF packets.
    pub fn status_flags(&self) -> u16 {
        let mut f = 0;
        if self.autocommit() {
            f |= status_flags::AUTOCOMMIT;
        }
        if self.in_explicit || (self.txn.is_some() && !self.autocommit()) {
            f |= status_flags::IN_TRANS;
            if self.read_only_txn {
                f |= status_flags::IN_TRANS_READONLY;
            }
        }
        let opts = self.parse_options();
        if opts.no_backslash_escapes {
            f |= status_flags::NO_BACKSLASH_ESCAPES;
        }
        if opts.ansi_quotes {
            f |= status_flags::ANSI_QUOTES;
        }
        f
    }

    /// The flag KILL QUERY sets; statements check it while they run.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.control.interrupt.clone()
    }

    /// Whether KILL [CONNECTION] was issued for this session (the server closes it).
    pub fn is_killed(&self) -> bool {
        self.killed.load(Ordering::SeqCst)
    }

    pub fn kill_query(&self) {
        self.control.interrupt();
    }

    /// A statement (or a multi-statement string) starts: a KILL QUERY that came before it
    /// does not stop it, and `max_statement_time` starts counting.
    fn begin_statement(&self) {
        if self.internal {
            // Statements the server runs inside a user's statement are part of it.
            return;
        }
        const NAME: &str = "max_statement_time";
        let set = match self.vars.get(NAME) {
            Some(v) => Some(v.clone()),
            None => self.db.globals.read().get(NAME).cloned(),
        };
        let limit = set
            .map(|v| crate::expr::to_f64(&v))
            .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
            .map(std::time::Duration::from_secs_f64);
        self.control.begin(limit);
    }

    /// LAST_INSERT_ID() after a statement that generated `id`.
    pub(crate) fn set_last_insert_id(&mut self, id: u64) {
        self.last_insert_id = id;
    }

    /// Number of warnings of the last statement.
    pub fn warning_count(&self) -> u16 {
        self.warnings.len().min(65535) as u16
    }

    /// COM_RESET_CONNECTION: rolls back, releases table locks and the global read lock,
    /// forgets variables and prepared statements.
    pub fn reset(&mut self) {
        self.xa_disconnect();
        self.rollback_txn();
        self.drop_locks();
        self.vars.clear();
        self.user_vars.clear();
        self.prepared.clear();
        self.named_prepared.clear();
        self.count_prepared();
        self.warnings.clear();
        self.last_insert_id = 0;
        self.row_count = -1;
        self.next_isolation = None;
    }

    /// COM_INIT_DB
    pub fn use_database(&mut self, db: &str) -> Result<(), SqlError> {
        if !self.db.engine.catalog().has_database(db)
            && !db.eq_ignore_ascii_case("information_schema")
        {
            return Err(sql_err(
                code::ER_BAD_DB_ERROR,
                format!("Unknown database '{db}'"),
            ));
        }
        if !self.internal && !db.eq_ignore_ascii_case("information_schema") {
            let acc = self.account();
            if !users::any_db_privilege(&acc, db) {
                return Err(sql_err(
                    code::ER_DBACCESS_DENIED_ERROR,
                    format!(
                        "Access denied for user '{}'@'{}' to database '{db}'",
                        self.user, self.account_host
                    ),
                ));
            }
        }
        self.current_db = Some(db.to_string());
        self.track_schema();
        if let Some(p) = &self.proc {
            p.state.lock().db = Some(db.to_string());
        }
        Ok(())
    }

    pub(crate) fn account(&self) -> users::Account {
        if self.internal {
            return users::Account::superuser();
        }
        self.db
            .account(&self.user, &self.host)
            .unwrap_or_else(|| users::Account::nobody(&self.user, &self.host))
    }

    /// NOW() of the statement running.
    pub(crate) fn statement_time(&self) -> DateTime {
        self.stmt_now
    }

    pub(crate) fn autocommit(&self) -> bool {
        self.vars
            .get("autocommit")
            .map(expr_truth)
            .unwrap_or_else(|| {
                self.db
                    .globals
                    .read()
                    .get("autocommit")
                    .map(expr_truth)
                    .unwrap_or(true)
            })
    }

    fn isolation(&self) -> Isolation {
        let v = self.get_var(None, "transaction_isolation").ok();
        match v.map(|v| crate::expr::to_string(&v)) {
            Some(s) if s == "READ-COMMITTED" || s == "READ-UNCOMMITTED" => Isolation::ReadCommitted,
            _ => Isolation::RepeatableRead,
        }
    }

    /// How statement text is read under the session's sql_mode.
    pub(crate) fn parse_options(&self) -> parser::ParseOptions {
        parser::ParseOptions::from_sql_mode(&self.sql_mode())
    }

    pub(crate) fn sql_mode(&self) -> String {
        crate::expr::to_string(
            &self
                .get_var(None, "sql_mode")
                .unwrap_or(Value::str(vars::SQL_MODE_DEFAULT)),
        )
    }

    // -------------------------------------------------------------- entry points

    /// Runs a (multi-)statement string; results in order, stopping at the first error.
    pub fn execute(&mut self, sql: &str) -> Vec<Result<QueryResult, SqlError>> {
        let mut c = crate::load::Collect::default();
        self.execute_with(sql, &mut c);
        c.0
    }

    /// [`Self::execute`] for a connection: each statement's result goes to `client` as
    /// soon as the statement ends (before the next one runs, which may ask the client for
    /// a file: LOAD DATA LOCAL).
    pub fn execute_with(&mut self, sql: &str, client: &mut dyn crate::Client) {
        self.db.questions.fetch_add(1, Ordering::Relaxed);
        self.set_proc("Query", Some(sql));
        self.begin_statement();
        let opts = self.parse_options();
        if let Some(r) = self.run_shaped(sql, opts) {
            self.set_proc("Sleep", None);
            let r = self.control.finish(r);
            client.result(self, r, false);
            return;
        }
        match parser::with_options(opts, || parser::parse_multi(sql)) {
            Err(e) => {
                self.warnings.clear();
                client.result(self, Err(e), false);
            }
            Ok(stmts) => {
                let n = stmts.len();
                for (i, p) in stmts.into_iter().enumerate() {
                    if i > 0 {
                        self.begin_statement();
                    }
                    let r = match p {
                        Ok(p) => {
                            self.params.clear();
                            let r = self.run_stmt(&p, None, Some(&mut *client));
                            self.control.finish(r)
                        }
                        Err(e) => {
                            self.warnings.clear();
                            Err(e)
                        }
                    };
                    let stop = r.is_err();
                    let more = !stop && i + 1 < n;
                    if !client.result(self, r, more) || stop {
                        break;
                    }
                }
            }
        }
        self.set_proc("Sleep", None);
    }

    /// Runs an INSERT/REPLACE ... VALUES as its shape, parsed once per session, with its
    /// literals as parameters (see `crate::shape`). None: the statement has no such shape
    /// (or the shape does not parse); it takes the ordinary path.
    fn run_shaped(
        &mut self,
        sql: &str,
        opts: parser::ParseOptions,
    ) -> Option<Result<QueryResult, SqlError>> {
        if opts != parser::ParseOptions::default() {
            // The shape cache reads literals and operators the default way.
            return None;
        }
        let shape = crate::shape::shape_of(sql)?;
        let mut kept = match self.shapes.remove(&shape.text) {
            Some(p) => p,
            None => {
                let p = parser::parse_one(&shape.text).ok()?;
                if p.params != shape.literals.len() || !matches!(p.stmt, Stmt::Sql(_)) {
                    return None;
                }
                Prepared::new(p)
            }
        };
        // What the binlog annotates and the process list shows is the statement as sent.
        kept.parsed.text = sql.trim().to_string();
        let r = self.run_with_params(&kept.parsed, shape.literals, Some(&mut kept.kept), None);
        if self.shapes.len() >= SHAPE_CACHE {
            self.shapes.clear();
        }
        self.shapes.insert(shape.text, kept);
        Some(r)
    }

    /// Convenience: runs one statement string and returns its (last) result.
    pub fn query(&mut self, sql: &str) -> Result<QueryResult, SqlError> {
        let mut v = self.execute(sql);
        v.pop().unwrap_or_else(|| Ok(QueryResult::ok()))
    }

    /// Error 1461 unless the server takes one more prepared statement.
    fn room_for_prepared(&self) -> Result<(), SqlError> {
        let max = match self.get_var(Some(VarScope::Global), "max_prepared_stmt_count") {
            Ok(v) => crate::expr::to_i64(&v).max(0) as usize,
            Err(_) => usize::MAX,
        };
        self.db.prepared.room_for_one(max)
    }

    /// Reports this session's prepared statements to the server's count.
    fn count_prepared(&mut self) {
        let n = self.prepared.len() + self.named_prepared.len();
        self.prepared_count.set(&self.db.prepared, n);
    }

    /// COM_STMT_PREPARE: parses once, records the placeholders and result columns.
    pub fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError> {
        self.room_for_prepared()?;
        let (parsed, columns) = self.prepare_parsed(sql)?;
        let params = parsed.params;
        let id = self.next_stmt;
        self.next_stmt += 1;
        self.prepared.insert(id, Prepared::new(parsed));
        self.count_prepared();
        Ok(PreparedInfo {
            id,
            params: params as u16,
            columns,
        })
    }

    /// Parses a statement to prepare and binds a query once (so unknown tables and columns
    /// fail at prepare time, as in MariaDB); returns its result columns.
    fn prepare_parsed(&mut self, sql: &str) -> Result<(Parsed, Vec<ResultColumn>), SqlError> {
        let parsed = parser::with_options(self.parse_options(), || parser::parse_one(sql))?;
        if let Stmt::Admin(
            Admin::Prepare { .. }
            | Admin::Execute { .. }
            | Admin::Deallocate(_)
            | Admin::LoadData(_),
        ) = &parsed.stmt
        {
            return Err(sql_err(
                code::ER_UNSUPPORTED_PS,
                "This command is not supported in the prepared statement protocol yet",
            ));
        }
        self.params = vec![Value::Null; parsed.params];
        self.stmt_now = self.fixed_now.unwrap_or_else(now);
        let columns = match &parsed.stmt {
            Stmt::Sql(s) => match s.as_ref() {
                sq::Statement::Query(q) => {
                    let sel = self.bind(&parsed.text, |b| b.bind_query(q));
                    self.params.clear();
                    let sel = sel?;
                    self.check_read(&sel)?;
                    sel.columns
                }
                _ => {
                    let r = self.check_prepared(&parsed);
                    self.params.clear();
                    r?
                }
            },
            Stmt::Admin(_) => vec![],
        };
        self.params.clear();
        Ok((parsed, columns))
    }

    /// `PREPARE name FROM source`: a statement with the same name is deallocated first, even
    /// if the new one fails to prepare (MariaDB).
    fn prepare_named(&mut self, name: &str, source: &sq::Expr) -> Result<QueryResult, SqlError> {
        let text = match self.eval_const(source)? {
            Value::Null => "NULL".to_string(),
            v => crate::decode_query(&crate::expr::to_bytes(&v)).into_owned(),
        };
        // A statement of the same name is replaced (and is gone even if this one fails).
        if self.named_prepared.remove(&name.to_lowercase()).is_some() {
            self.count_prepared();
        }
        self.room_for_prepared()?;
        let (parsed, _) = self.prepare_parsed(&text)?;
        self.named_prepared
            .insert(name.to_lowercase(), Prepared::new(parsed));
        self.count_prepared();
        Ok(QueryResult::Ok {
            affected_rows: 0,
            last_insert_id: 0,
            warnings: 0,
            info: "Statement prepared".into(),
        })
    }

    pub fn close_prepared(&mut self, stmt_id: u32) {
        self.prepared.remove(&stmt_id);
        self.count_prepared();
    }

    pub(crate) fn set_proc(&self, command: &'static str, info: Option<&str>) {
        if let Some(p) = &self.proc {
            let mut s = p.state.lock();
            s.command = command;
            s.info = info.map(|i| i.chars().take(1024).collect());
            s.since = Instant::now();
        }
    }

    /// Runs one statement; `client`: the connection, for LOAD DATA LOCAL.
    /// Runs a parsed statement of a stored program (`crate::routines`).
    pub(crate) fn run_parsed(&mut self, p: &Parsed) -> Result<QueryResult, SqlError> {
        self.run_stmt(p, None, None)
    }

    fn run_stmt(
        &mut self,
        p: &Parsed,
        kept: Option<&mut Kept>,
        client: Option<&mut dyn crate::Client>,
    ) -> Result<QueryResult, SqlError> {
        // A stored program's statements keep the time and warnings of its CALL.
        let in_program = self.sp.depth > 0;
        if !in_program {
            self.stmt_now = self.fixed_now.unwrap_or_else(now);
        }
        let keeps_warnings =
            in_program || matches!(&p.stmt, Stmt::Admin(Admin::ShowWarnings { .. }));
        if !keeps_warnings {
            self.warnings.clear();
        }
        self.view_base_ok.clear();
        self.view_checks.clear();
        self.xa_gate(&p.stmt)?;
        let r = match &p.stmt {
            Stmt::Admin(Admin::Xa(x)) => self.run_xa(x),
            Stmt::Admin(Admin::Sequence(q)) => crate::sequences::run(self, q, &p.text),
            Stmt::Admin(Admin::CreateView(v)) => self.create_view(v),
            Stmt::Admin(Admin::DropView { names, if_exists }) => {
                self.drop_view(names, *if_exists, p)
            }
            Stmt::Admin(Admin::ShowCreateView { db, name }) => self.show_create_view(db, name),
            Stmt::Admin(Admin::LoadData(l)) => self.run_load(l, p, client),
            Stmt::Admin(Admin::SelectInto {
                query,
                into,
                after_from,
            }) => self.run_select_into(query, into, *after_from, p),
            Stmt::Admin(Admin::TableMaint(m)) => self.run_table_maint(m, p),
            Stmt::Admin(Admin::Routine(r)) => crate::routines::run(self, r, &p.text, client),
            Stmt::Admin(Admin::Event(e)) => crate::events::run(self, e),
            Stmt::Admin(Admin::Execute { name, args }) => self.execute_named(name, args, client),
            Stmt::Admin(a) => self.run_admin(a, p),
            Stmt::Sql(s) => self.run_sql(s, p, kept),
        };
        match &r {
            Ok(QueryResult::Ok { affected_rows, .. }) => {
                if !matches!(&p.stmt, Stmt::Admin(Admin::ShowWarnings { .. })) {
                    self.row_count = *affected_rows as i64;
                }
            }
            Ok(QueryResult::Rows { .. }) => self.row_count = -1,
            Err(_) => self.row_count = -1,
        }
        r
    }

    pub(crate) fn bind<T>(
        &self,
        text: &str,
        f: impl FnOnce(Binder) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        self.bind_noting_reads(text, f).0
    }

    /// [`Self::bind`], and whether the binder read the session or the clock.
    fn bind_noting_reads<T>(
        &self,
        text: &str,
        f: impl FnOnce(Binder) -> Result<T, SqlError>,
    ) -> (Result<T, SqlError>, bool) {
        let env = Env {
            s: self,
            catalog: self.bind_catalog(),
            read_session: Cell::new(false),
        };
        let r = f(Binder::new(&env, text));
        (r, env.read_session.get())
    }

    pub(crate) fn select_result(
        &mut self,
        text: &str,
        q: &sq::Query,
        kept: Option<&mut SelectKept>,
    ) -> Result<QueryResult, SqlError> {
        self.db.count_com("Com_select");
        let mut sel = match kept {
            Some(k) => self.select_bound(text, q, k)?,
            None => self.bind(text, |b| b.bind_query(q))?,
        };
        let mut tables = Vec::new();
        tables_of(&sel, &mut tables);
        self.check_read(&sel)?;
        if self.has_locked_tables() {
            let mut refs = Vec::new();
            crate::locks::table_refs(&sel, &mut refs);
            self.check_locked_tables(&refs, &[])?;
        }
        let columns = sel.columns.clone();
        let rows = if tables.is_empty()
            && sel.subqueries.is_empty()
            && self.txn.is_none()
            && !crate::routines::calls_functions(&sel)
        {
            // No table: no transaction needed.
            let mut dummy = self.db.engine.begin(Isolation::ReadCommitted);
            let r = {
                let mut cx = ExecCtx {
                    txn: &mut dummy,
                    interrupt: &self.control.interrupt,
                    warnings: &mut self.warnings,
                    strict: false,
                    no_auto_value_on_zero: false,
                    check_constraints: true,
                    foreign_key_checks: true,
                    view_checks: &[],
                    now: self.stmt_now,
                    host: None,
                };
                executor::run_select(&mut cx, &mut sel)
            };
            dummy.rollback();
            r?
        } else {
            self.in_statement(text, &tables, &[], |cx| executor::run_select(cx, &mut sel))?
        };
        Ok(QueryResult::Rows { columns, rows })
    }

    /// Binds a SELECT that is kept to run again: from its template, or afresh (making the
    /// template on the first run that can, see `binder::SelectTemplate`).
    fn select_bound(
        &mut self,
        text: &str,
        q: &sq::Query,
        kept: &mut SelectKept,
    ) -> Result<Select, SqlError> {
        if let SelectKept::Ready(t, made) = kept {
            if t.valid(
                &self.bind_catalog(),
                self.current_db.as_deref(),
                &self.params,
            ) {
                return Ok(t.select(&self.params));
            }
            *kept = SelectKept::Unbound(*made);
        }
        let made = match kept {
            SelectKept::Unbound(n) if *n < SELECT_TEMPLATES => *n,
            _ => return self.bind(text, |b| b.bind_query(q)),
        };
        let Some(changed) = binder::changed_params(&self.params) else {
            return self.bind(text, |b| b.bind_query(q));
        };
        let (a, read_session) = self.bind_noting_reads(text, |b| b.bind_query(q));
        let a = a?;
        *kept = SelectKept::Unbound(SELECT_TEMPLATES);
        if !read_session {
            let params = std::mem::replace(&mut self.params, changed);
            let b = self.bind(text, |b| b.bind_query(q));
            let changed = std::mem::replace(&mut self.params, params);
            if let Some(t) = b.ok().and_then(|b| {
                SelectTemplate::new(&a, &b, &self.params, &changed, self.current_db.as_deref())
            }) {
                *kept = SelectKept::Ready(Box::new(t), made + 1);
            }
        }
        Ok(a)
    }

    /// Runs a statement built by the server (CREATE ... SELECT's INSERT), as written.
    pub(crate) fn run_built(
        &mut self,
        s: &sq::Statement,
        p: &Parsed,
    ) -> Result<QueryResult, SqlError> {
        self.run_sql(s, p, None)
    }

    fn run_sql(
        &mut self,
        s: &sq::Statement,
        p: &Parsed,
        kept: Option<&mut Kept>,
    ) -> Result<QueryResult, SqlError> {
        use sq::Statement as S;
        let text = p.text.as_str();
        let unfolded = match s {
            S::Insert(_) | S::Update(_) | S::Delete(_) => self.unfold_views(s)?,
            _ => None,
        };
        let (s, kept) = match &unfolded {
            Some(u) => (u, None),
            None => (s, kept),
        };
        match s {
            S::Query(q) => self.select_result(text, q, kept.map(|k| &mut k.select)),
            S::Insert(ins) => {
                self.db.count_com(if ins.replace_into {
                    "Com_replace"
                } else {
                    "Com_insert"
                });
                let mut plan = self.insert_plan(text, ins, kept.map(|k| &mut k.insert))?;
                if plan.table.columns.iter().any(|c| c.default_expr.is_some()) {
                    plan.defaults = self.bind(text, |b| b.defaults_of(&plan.table))?;
                }
                let tables = self.check_insert(&plan)?;
                let (used, written) = crate::locks::insert_refs(&plan);
                self.check_locked_tables(&used, &written)?;
                let written = crate::locks::pairs(&written);
                self.check_writes_allowed(&written)?;
                let r = self.as_write_statement(|s| {
                    s.in_statement(text, &tables, &written, |cx| {
                        executor::run_insert(cx, &mut plan)
                    })
                })?;
                if let Some(id) = r.last_insert_id {
                    self.last_insert_id = id;
                }
                if let Some(rows) = r.returned {
                    return Ok(QueryResult::Rows {
                        columns: plan.returning.map(|x| x.columns).unwrap_or_default(),
                        rows,
                    });
                }
                let unchanged = if self.client_found_rows { r.matched } else { 0 };
                Ok(ok(
                    r.affected + unchanged,
                    r.last_insert_id.unwrap_or(0),
                    self.warnings.len(),
                    r.info,
                ))
            }
            S::Update(u) => {
                self.db.count_com("Com_update");
                let mut plan = self.bind(text, |b| b.bind_update(u))?;
                let tables = self.check_update(&plan)?;
                let (used, written) = crate::locks::update_refs(&plan);
                self.check_locked_tables(&used, &written)?;
                let written = crate::locks::pairs(&written);
                self.check_writes_allowed(&written)?;
                let r = self.as_write_statement(|s| {
                    s.in_statement(text, &tables, &written, |cx| {
                        executor::run_update(cx, &mut plan)
                    })
                })?;
                let affected = if self.client_found_rows {
                    r.matched
                } else {
                    r.affected
                };
                Ok(ok(affected, 0, self.warnings.len(), r.info))
            }
            S::Delete(d) => {
                self.db.count_com("Com_delete");
                let mut plan = self.bind(text, |b| b.bind_delete(d))?;
                let tables = self.check_delete(&plan)?;
                let (used, written) = crate::locks::delete_refs(&plan);
                self.check_locked_tables(&used, &written)?;
                let written = crate::locks::pairs(&written);
                self.check_writes_allowed(&written)?;
                let r = self.as_write_statement(|s| {
                    s.in_statement(text, &tables, &written, |cx| {
                        executor::run_delete(cx, &mut plan)
                    })
                })?;
                if let Some(rows) = r.returned {
                    return Ok(QueryResult::Rows {
                        columns: plan.returning.map(|x| x.columns).unwrap_or_default(),
                        rows,
                    });
                }
                Ok(ok(r.affected, 0, self.warnings.len(), r.info))
            }
            S::Explain { statement, .. } => self.explain(text, statement),
            S::StartTransaction { .. } => self.run_admin(
                &Admin::Begin {
                    read_only: false,
                    snapshot: false,
                },
                p,
            ),
            S::Commit { .. } => self.run_admin(&Admin::Commit, p),
            S::Rollback {
                savepoint: None, ..
            } => self.run_admin(&Admin::Rollback, p),
            S::UnlockTables => self.run_admin(&Admin::UnlockTables, p),
            _ => {
                if let Some(r) = self.run_temp_statement(s, p)? {
                    return Ok(r);
                }
                let ddl = self.bind(text, |b| binder::bind_ddl(&b, s))?;
                match ddl {
                    Some((ddl, warnings)) => self.run_ddl(text, ddl, warnings),
                    None => Err(binder::unsupported(&first_words(text))),
                }
            }
        }
    }

    /// Binds an INSERT, through its kept binding when it has a valid one (and keeps the
    /// binding of one that is kept to run again).
    fn insert_plan(
        &mut self,
        text: &str,
        ins: &sq::Insert,
        kept: Option<&mut Option<InsertTemplate>>,
    ) -> Result<binder::Insert, SqlError> {
        let Some(kept) = kept else {
            return self.bind(text, |b| b.bind_insert(ins));
        };
        if let Some(t) = kept.as_ref() {
            if t.valid(&self.bind_catalog(), self.current_db.as_deref()) {
                let bound = if t.binds() {
                    self.bind(text, |mut b| t.bind_rest(&mut b, ins))?
                } else {
                    vec![]
                };
                let mut params = std::mem::take(&mut self.params);
                let plan = t.plan(&mut params, bound);
                self.params = params;
                return Ok(plan);
            }
        }
        let plan = self.bind(text, |b| b.bind_insert(ins))?;
        *kept = InsertTemplate::new(ins, &plan, self.current_db.as_deref());
        Ok(plan)
    }

    pub(crate) fn check_read_only(&self) -> Result<(), SqlError> {
        self.check_server_read_only()?;
        if self.read_only_txn {
            return Err(sql_err(
                code::ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION,
                "Cannot execute statement in a READ ONLY transaction",
            ));
        }
        Ok(())
    }

    fn explain(&mut self, text: &str, s: &sq::Statement) -> Result<QueryResult, SqlError> {
        let mut sel = match s {
            sq::Statement::Query(q) => self.bind(text, |b| b.bind_query(q))?,
            sq::Statement::Update(u) => self.bind(text, |b| b.bind_update(u))?.select,
            sq::Statement::Delete(d) => self.bind(text, |b| b.bind_delete(d))?.select,
            _ => return Err(binder::unsupported("EXPLAIN of this statement")),
        };
        let mut tables = Vec::new();
        tables_of(&sel, &mut tables);
        self.check_read(&sel)?;
        let rows = self.in_statement(text, &tables, &[], |cx| {
            executor::explain_select(cx, &mut sel)
        })?;
        let columns = crate::planner::EXPLAIN_COLUMNS
            .iter()
            .map(|c| {
                if *c == "id" || *c == "rows" {
                    ResultColumn::uint(c)
                } else {
                    ResultColumn::text(c)
                }
            })
            .collect();
        Ok(QueryResult::Rows { columns, rows })
    }

    pub(crate) fn run_ddl(
        &mut self,
        text: &str,
        ddl: onelog_engine::Ddl,
        warnings: Vec<SqlError>,
    ) -> Result<QueryResult, SqlError> {
        use onelog_engine::Ddl as D;
        let mut ddl = ddl;
        if let Some(r) = self.run_temp_ddl(&mut ddl)? {
            return Ok(r);
        }
        self.check_server_read_only()?;
        self.check_ddl(&ddl)?;
        if let D::DropDatabase { name, .. } | D::CreateDatabase { name, .. } = &ddl {
            if name.eq_ignore_ascii_case("information_schema") {
                return Err(sql_err(
                    code::ER_DBACCESS_DENIED_ERROR,
                    format!(
                        "Access denied for user '{}'@'{}' to database 'information_schema'",
                        self.user, self.account_host
                    ),
                ));
            }
        }
        self.check_ddl_locked_tables(&ddl)?;
        self.db.count_com("Com_ddl");
        self.implicit_commit()?;
        crate::checks::verify_existing(self, &ddl)?;
        crate::foreign_keys::verify_ddl(self, &ddl)?;
        let dropped_db = match &ddl {
            D::DropDatabase { name, .. } => Some(name.clone()),
            _ => None,
        };
        // ALTER TABLE converts changed columns with this session's strict mode.
        let mut ddl = ddl;
        let converter = match &mut ddl {
            D::AlterTable {
                db, table, convert, ..
            } => {
                let mode = self.sql_mode();
                let strict =
                    mode.contains("STRICT_TRANS_TABLES") || mode.contains("STRICT_ALL_TABLES");
                let c = Arc::new(crate::alter::AlterConverter::new(strict, db, table));
                *convert = Some(onelog_engine::Converter(c.clone()));
                Some(c)
            }
            _ => None,
        };
        let db = self.current_db.clone().unwrap_or_default();
        let log = onelog_engine::DdlLog {
            gtid: self.next_gtid.take().or_else(|| self.take_seq_no_gtid()),
            no_foreign_key_checks: !crate::foreign_keys::session_checks(self),
        };
        let out = self.as_write_statement(|s| {
            Ok(match s.table_lock_owner() {
                Some(owner) => s.db.engine.ddl_owned(&db, text, ddl, log, owner),
                None => s.db.engine.ddl_as(&db, text, ddl, log),
            })
        })?;
        if let Some(c) = &converter {
            self.warnings.extend(c.take_warnings());
        }
        let out = out.map_err(|e| {
            let mut s = engine_err(e);
            if s.message.starts_with("Can't drop database") {
                s = sql_err(crate::codes::ER_CANT_DROP_DB, s.message);
            }
            s
        })?;
        self.warnings.extend(warnings);
        self.warnings.extend(out.warnings);
        if let Some(d) = dropped_db {
            if self.current_db.as_deref() == Some(d.as_str()) {
                self.current_db = None;
            }
        }
        let info = if converter.is_some() {
            format!(
                "Records: {}  Duplicates: 0  Warnings: {}",
                out.affected_rows,
                self.warnings.len()
            )
        } else {
            String::new()
        };
        Ok(ok(out.affected_rows, 0, self.warnings.len(), info))
    }

    fn eval_const(&mut self, e: &sq::Expr) -> Result<Value, SqlError> {
        let text = String::new();
        let (mut expr, mut subs) = self.bind(&text, |b| b.bind_const(e))?;
        let mut host_calls = false;
        expr.walk(&mut |x| {
            host_calls |= matches!(x, crate::expr::Expr::Routine(..))
                || matches!(x, crate::expr::Expr::Func(f, _) if f.needs_host())
        });
        if !subs.is_empty() || host_calls {
            let mut tables = Vec::new();
            for s in &subs {
                tables_of(s, &mut tables);
                self.check_read(s)?;
            }
            return self.in_statement("", &tables, &[], |cx| {
                executor::resolve_subqueries(cx, &mut subs, &mut [&mut expr])?;
                executor::eval_in_statement(cx, &subs, &expr)
            });
        }
        crate::expr::eval(&expr, &crate::expr::Ctx::new(&[]))
    }

    fn run_admin(&mut self, a: &Admin, p: &Parsed) -> Result<QueryResult, SqlError> {
        match a {
            Admin::Use(d) => {
                self.use_database(d)?;
                Ok(QueryResult::ok())
            }
            Admin::Begin {
                read_only,
                snapshot,
            } => self.begin(*read_only, *snapshot),
            Admin::Savepoint(name) => self.savepoint(name),
            Admin::RollbackTo(name) => self.rollback_to_savepoint(name),
            Admin::ReleaseSavepoint(name) => self.release_savepoint(name),
            Admin::Set(items) => self.run_set(items),
            Admin::SetTransaction {
                scope,
                isolation,
                read_only,
            } => self.set_transaction(*scope, isolation.as_deref(), *read_only),
            Admin::Commit => {
                self.commit_txn()?;
                Ok(QueryResult::ok())
            }
            Admin::Rollback => {
                self.rollback_txn();
                Ok(QueryResult::ok())
            }
            Admin::Prepare { name, source } => self.prepare_named(name, source),
            Admin::Execute { name, args } => self.execute_named(name, args, None),
            Admin::Deallocate(name) => {
                let gone = self.named_prepared.remove(&name.to_lowercase()).is_some();
                self.count_prepared();
                if !gone {
                    return Err(sql_err(
                        code::ER_UNKNOWN_STMT_HANDLER,
                        format!(
                            "Unknown prepared statement handler ({name}) given to DEALLOCATE PREPARE"
                        ),
                    ));
                }
                Ok(QueryResult::ok())
            }
            Admin::Kill { query, id } => {
                let id32 = *id as u32;
                let target = self.db.procs.lock().get(&id32).cloned();
                match target {
                    None => Err(sql_err(
                        code::ER_NO_SUCH_THREAD,
                        format!("Unknown thread id: {id}"),
                    )),
                    Some(t) => {
                        self.check_kill(&t.user, *id)?;
                        self.db.kill(id32, *query);
                        Ok(QueryResult::ok())
                    }
                }
            }
            Admin::Do(exprs) => {
                for e in exprs {
                    self.eval_const(e)?;
                }
                Ok(QueryResult::ok())
            }
            Admin::UnlockTables => self.unlock_tables(),
            Admin::LockTables(items) => self.lock_tables(items),
            Admin::Flush(what) => self.flush(what),
            Admin::Shutdown => self.shutdown(),
            Admin::AlterKeys { db, table, .. } => self.alter_keys(db.as_deref(), table),
            Admin::PurgeTo(f) => {
                self.require_global(Priv::SUPER)?;
                self.db.engine.purge_binary_logs_to(f).map_err(engine_err)?;
                Ok(QueryResult::ok())
            }
            Admin::PurgeBefore(e) => {
                self.require_global(Priv::SUPER)?;
                let v = self.eval_const(e)?;
                let Value::DateTime(dt) =
                    crate::expr::cast(v.clone(), crate::expr::CastType::DateTime(6))?
                else {
                    return Err(sql_err(
                        code::ER_WRONG_ARGUMENTS,
                        "Incorrect arguments to PURGE LOGS BEFORE",
                    ));
                };
                self.db
                    .engine
                    .purge_binary_logs_before(dt.unix_seconds())
                    .map_err(engine_err)?;
                Ok(QueryResult::ok())
            }
            Admin::ResetMaster => {
                self.require_global(Priv::RELOAD)?;
                self.implicit_commit()?;
                self.db.engine.reset_master().map_err(engine_err)?;
                Ok(QueryResult::ok())
            }
            Admin::BackupServer(dir) => self.backup_server(dir),
            Admin::Binlog(parts) => self.binlog_statement(parts),
            Admin::Empty => Ok(QueryResult::ok()),
            Admin::Replica(r) => crate::replication::run_replica_stmt(self, r),
            Admin::Account(a) => {
                self.implicit_commit()?;
                if self.has_locked_tables() {
                    return Err(locked_tables_active());
                }
                self.as_write_statement(|s| crate::account_stmt::run(s, a, &p.text))
            }
            _ => crate::show::run_show(self, a, p),
        }
    }

    /// Runs SQL with privilege checks off (account maintenance).
    pub(crate) fn run_internal(&mut self, sql: &str) -> Result<QueryResult, SqlError> {
        let was = self.internal;
        self.internal = true;
        let r = self.query(sql);
        self.internal = was;
        r
    }

    /// Evaluates `SHOW ... WHERE expr` over rows with the given columns.
    pub(crate) fn filter_rows(
        &self,
        cols: &[VirtualColumn],
        rows: Vec<Vec<Value>>,
        e: &sq::Expr,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let expr = self.bind("", |b| b.bind_over_columns(cols, e))?;
        let mut out = Vec::new();
        for r in rows {
            if crate::expr::truth(&crate::expr::eval(&expr, &crate::expr::Ctx::new(&r))?)
                == Some(true)
            {
                out.push(r);
            }
        }
        Ok(out)
    }
}

/// 1305 for ROLLBACK TO / RELEASE of an unknown savepoint.
pub(super) fn no_savepoint(name: &str) -> SqlError {
    sql_err(
        code::ER_SP_DOES_NOT_EXIST,
        format!("SAVEPOINT {name} does not exist"),
    )
}

fn is_note_or_warning(code: u16) -> bool {
    matches!(
        code,
        1003 | 1007
            | 1008
            | 1031
            | 1050
            | 1051
            | 1062
            | 1264
            | 1265
            | 1292
            | 1366
            | 1406
            | 1048
            | 1364
            | 1235
    )
}

fn expr_truth(v: &Value) -> bool {
    crate::expr::truth(v) == Some(true)
        || matches!(v, Value::Bytes(b) if b.eq_ignore_ascii_case(b"ON"))
}

fn first_words(text: &str) -> String {
    text.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// 1192: a statement that cannot run while the session holds LOCK TABLES.
pub(crate) fn locked_tables_active() -> SqlError {
    sql_err(
        1192,
        "Can't execute the given command because you have active locked tables or an active transaction",
    )
}

impl Drop for Session {
    fn drop(&mut self) {
        self.xa_disconnect();
        self.rollback_txn();
        self.drop_locks();
        self.prepared_count.set(&self.db.prepared, 0);
        self.db.replicas().forget(self.conn_id);
        if let Some(p) = &self.proc {
            let mut procs = self.db.procs.lock();
            if procs.get(&self.conn_id).is_some_and(|x| Arc::ptr_eq(x, p)) {
                procs.remove(&self.conn_id);
            }
        }
    }
}
