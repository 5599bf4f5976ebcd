//! Table locks and the global read lock: `LOCK TABLES`, `UNLOCK TABLES`, `FLUSH TABLES
//! WITH READ LOCK`, as MariaDB 10.11 has them.
//!
//! `LOCK TABLES` holds the tables' metadata locks for the session (`onelog_engine::
//! TableLocks`): READ keeps other sessions' writers waiting (and waits for open
//! transactions that wrote the table), WRITE keeps every other session out. While it holds
//! them the session may use only those tables (1100) and write only the WRITE-locked ones
//! (1099); `information_schema` stays readable. UNLOCK TABLES, a new LOCK TABLES, BEGIN and
//! the end of the connection release them (UNLOCK and LOCK commit the open transaction
//! first, as MariaDB does).
//!
//! The global read lock ([`GlobalReadLock`], `FLUSH TABLES WITH READ LOCK`) works in MariaDB's
//! two phases: it first keeps new write statements (DML, DDL, account statements) of other
//! sessions waiting and waits for the running ones to end; then it keeps commits waiting
//! and waits for the commits in progress. Once it returns, nothing commits until UNLOCK
//! TABLES, so `@@gtid_binlog_pos` and a consistent snapshot taken under it describe the
//! same state (what `mariadb-dump --master-data --single-transaction` relies on). The
//! holder's own writes fail with 1223. Waits end after `lock_wait_timeout` (1205) or on
//! KILL (1317).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use onelog_engine::{TableLockMode, TableLocks};
use onelog_types::{code, SqlError, Value};
use parking_lot::{Condvar, Mutex};

use crate::binder::{Select, SourceKind};
use crate::parser::{LockItem, LockKind};
use crate::session::Session;
use crate::users::Priv;
use crate::{sql_err, QueryResult};

/// 1205, as MariaDB reports a metadata or backup lock wait that timed out.
fn lock_timeout() -> SqlError {
    sql_err(
        code::ER_LOCK_WAIT_TIMEOUT,
        "Lock wait timeout exceeded; try restarting transaction",
    )
}

fn interrupted() -> SqlError {
    sql_err(
        code::ER_QUERY_INTERRUPTED,
        "Query execution was interrupted",
    )
}

/// 1223: a session holding the global read lock tried to write.
fn conflicting_read_lock() -> SqlError {
    sql_err(
        1223,
        "Can't execute the query because you have a conflicting read lock",
    )
}

#[derive(Default)]
struct GrlState {
    /// Sessions (connection ids) holding the lock or taking it: new write statements of
    /// other sessions wait.
    holders: Vec<u32>,
    /// Those past the first phase: commits of other sessions wait.
    blocking_commits: Vec<u32>,
    /// Write statements running.
    statements: usize,
    /// Commits in progress.
    commits: usize,
}

#[derive(Default)]
pub(crate) struct GrlInner {
    state: Mutex<GrlState>,
    cv: Condvar,
}

/// The server's global read lock (`FLUSH TABLES WITH READ LOCK`).
#[derive(Default)]
pub(crate) struct GlobalReadLock(std::sync::Arc<GrlInner>);

impl std::ops::Deref for GlobalReadLock {
    type Target = GrlInner;
    fn deref(&self) -> &GrlInner {
        &self.0
    }
}

/// A running write statement or commit, counted until dropped.
pub(crate) struct Pass {
    grl: std::sync::Arc<GrlInner>,
    commit: bool,
}

impl Drop for Pass {
    fn drop(&mut self) {
        let mut st = self.grl.state.lock();
        if self.commit {
            st.commits -= 1;
        } else {
            st.statements -= 1;
        }
        self.grl.cv.notify_all();
    }
}

impl GrlInner {
    /// Waits on the condition variable until `done` holds, `deadline` passes (1205) or
    /// `interrupt` is set (1317); a blocking wait for the thread pool.
    fn wait_until(
        &self,
        st: &mut parking_lot::MutexGuard<'_, GrlState>,
        deadline: Instant,
        interrupt: &AtomicBool,
        done: impl Fn(&GrlState) -> bool,
    ) -> Result<(), SqlError> {
        if done(st) {
            return Ok(());
        }
        onelog_engine::wait::blocking(|| loop {
            if done(st) {
                return Ok(());
            }
            if interrupt.load(Ordering::Relaxed) {
                return Err(interrupted());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(lock_timeout());
            }
            let step = (deadline - now).min(Duration::from_millis(100));
            self.cv.wait_for(st, step);
        })
    }
}

impl GlobalReadLock {
    /// Lets a write statement of session `me` run (waiting while another session holds
    /// or takes the lock); 1223 if `me` holds it.
    pub(crate) fn write_statement(
        &self,
        me: u32,
        timeout: Duration,
        interrupt: &AtomicBool,
    ) -> Result<Pass, SqlError> {
        let mut st = self.state.lock();
        if st.holders.contains(&me) {
            return Err(conflicting_read_lock());
        }
        self.wait_until(&mut st, Instant::now() + timeout, interrupt, |s| {
            s.holders.is_empty()
        })?;
        st.statements += 1;
        Ok(Pass {
            grl: self.0.clone(),
            commit: false,
        })
    }

    /// Lets a commit with changes of session `me` go on (waiting while another session
    /// holds the lock past its first phase).
    pub(crate) fn commit(
        &self,
        me: u32,
        timeout: Duration,
        interrupt: &AtomicBool,
    ) -> Result<Pass, SqlError> {
        let mut st = self.state.lock();
        if st.blocking_commits.contains(&me) {
            return Err(conflicting_read_lock());
        }
        self.wait_until(&mut st, Instant::now() + timeout, interrupt, |s| {
            s.blocking_commits.is_empty()
        })?;
        st.commits += 1;
        Ok(Pass {
            grl: self.0.clone(),
            commit: true,
        })
    }

    /// Takes the lock for session `me` (both phases); on a timeout or KILL nothing stays
    /// taken.
    fn acquire(&self, me: u32, timeout: Duration, interrupt: &AtomicBool) -> Result<(), SqlError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.state.lock();
        if st.holders.contains(&me) {
            return Ok(());
        }
        st.holders.push(me);
        let r = self
            .wait_until(&mut st, deadline, interrupt, |s| s.statements == 0)
            .and_then(|()| {
                st.blocking_commits.push(me);
                self.wait_until(&mut st, deadline, interrupt, |s| s.commits == 0)
            });
        if r.is_err() {
            st.holders.retain(|&h| h != me);
            st.blocking_commits.retain(|&h| h != me);
            self.cv.notify_all();
        }
        r
    }

    /// Releases session `me`'s lock (if it holds it).
    pub(crate) fn release(&self, me: u32) {
        let mut st = self.state.lock();
        let before = st.holders.len();
        st.holders.retain(|&h| h != me);
        st.blocking_commits.retain(|&h| h != me);
        if st.holders.len() != before {
            self.cv.notify_all();
        }
    }

    /// Whether another session than `me` holds or takes the lock.
    fn held_by_other(&self, me: u32) -> bool {
        self.state.lock().holders.iter().any(|&h| h != me)
    }
}

/// One table a session locked.
struct Locked {
    db: String,
    table: String,
    /// The name statements use for it (its alias, else its name).
    alias: String,
    write: bool,
}

/// What `LOCK TABLES` gave a session.
pub(crate) struct HeldTables {
    /// Released when dropped.
    locks: TableLocks,
    tables: Vec<Locked>,
}

/// A table a statement uses: (database, table, the name it is used by).
pub(crate) type TableRef = (String, String, String);

/// The tables a query reads, with the names it uses them by.
pub(crate) fn table_refs(sel: &Select, out: &mut Vec<TableRef>) {
    crate::binder::walk_sources(sel, &mut |s| {
        if let SourceKind::Table(t) = &s.kind {
            out.push((t.db.clone(), t.name.clone(), s.alias.clone()));
        }
        true
    });
}

/// A table used by its own name.
pub(crate) fn plain_ref(db: &str, table: &str) -> TableRef {
    (db.to_string(), table.to_string(), table.to_string())
}

impl Session {
    /// The session's `lock_wait_timeout` (metadata and global read lock waits).
    fn metadata_wait(&self) -> Duration {
        match self.get_var(None, "lock_wait_timeout") {
            Ok(Value::Int(i)) => Duration::from_secs(i.max(0) as u64),
            Ok(Value::UInt(u)) => Duration::from_secs(u),
            _ => Duration::from_secs(86400),
        }
    }

    /// Whether this session holds LOCK TABLES.
    pub(crate) fn has_locked_tables(&self) -> bool {
        self.locks.tables.is_some()
    }

    /// Whether the session's LOCK TABLES covers `db`.`table` (its statements then open it
    /// without a metadata lock of their own).
    pub(crate) fn covered(&self, db: &str, table: &str) -> bool {
        self.locks
            .tables
            .as_ref()
            .is_some_and(|h| h.tables.iter().any(|l| l.db == db && l.table == table))
    }

    /// The id the session's table locks are held under (its DDL runs under it).
    pub(crate) fn table_lock_owner(&self) -> Option<u64> {
        self.locks.tables.as_ref().map(|h| h.locks.owner())
    }

    /// Under LOCK TABLES, every table a statement uses must be locked by the name it uses
    /// (1100), and every table it writes WRITE-locked (1099).
    pub(crate) fn check_locked_tables(
        &self,
        used: &[TableRef],
        written: &[TableRef],
    ) -> Result<(), SqlError> {
        let Some(h) = &self.locks.tables else {
            return Ok(());
        };
        if self.internal {
            return Ok(());
        }
        let find = |(db, t, alias): &TableRef| {
            h.tables
                .iter()
                .find(|l| &l.db == db && &l.table == t && &l.alias == alias)
        };
        for r in used.iter().chain(written) {
            if r.0.eq_ignore_ascii_case("information_schema") || self.is_temp_table(&r.0, &r.1) {
                continue;
            }
            if find(r).is_none() {
                return Err(sql_err(
                    1100,
                    format!("Table '{}' was not locked with LOCK TABLES", r.2),
                ));
            }
        }
        for r in written {
            if find(r).is_some_and(|l| !l.write) {
                return Err(sql_err(
                    1099,
                    format!(
                        "Table '{}' was locked with a READ lock and can't be updated",
                        r.2
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Runs `f` as a write statement: waits while another session holds the global read
    /// lock (1223 if this one does).
    pub(crate) fn as_write_statement<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        if self.locks.writing {
            // A statement an account statement runs inside itself: that one passed.
            return f(self);
        }
        let db = self.db.clone();
        let interrupt = self.control.interrupt.clone();
        let _pass =
            db.global_read
                .write_statement(self.conn_id, self.metadata_wait(), &interrupt)?;
        self.locks.writing = true;
        let r = f(self);
        self.locks.writing = false;
        r
    }

    /// Waits, before a commit with changes, while another session holds the global read
    /// lock past its first phase; the commit must happen while the pass lives.
    pub(crate) fn commit_pass(&self) -> Result<Pass, SqlError> {
        self.db
            .global_read
            .commit(self.conn_id, self.metadata_wait(), &self.control.interrupt)
    }

    /// Under LOCK TABLES, DDL may change only WRITE-locked tables (1100, 1099) and no
    /// database (1192).
    pub(crate) fn check_ddl_locked_tables(&self, ddl: &onelog_engine::Ddl) -> Result<(), SqlError> {
        use onelog_engine::Ddl as D;
        if !self.has_locked_tables() {
            return Ok(());
        }
        let touched: Vec<(String, String)> = match ddl {
            D::CreateDatabase { .. } | D::DropDatabase { .. } => {
                return Err(crate::session::locked_tables_active())
            }
            D::CreateTable { def, .. } | D::CreateSequence { def, .. } => {
                vec![(def.db.clone(), def.name.clone())]
            }
            D::SetSequenceRow { db, table, .. } => vec![(db.clone(), table.clone())],
            D::DropTables { tables, .. } => tables.clone(),
            D::TruncateTable { db, table } | D::AlterTable { db, table, .. } => {
                vec![(db.clone(), table.clone())]
            }
            D::RenameTables { renames } => renames
                .iter()
                .flat_map(|(a, b)| [a.clone(), b.clone()])
                .collect(),
            D::CreateObject { obj, .. } => match (obj.kind, &obj.table) {
                (onelog_engine::ObjectKind::View, _) => vec![(obj.db.clone(), obj.name.clone())],
                (_, Some(t)) => vec![(obj.db.clone(), t.clone())],
                _ => vec![],
            },
            D::AlterObject { .. } => vec![],
            D::DropObjects { kind, names, .. } => match kind {
                onelog_engine::ObjectKind::View => names.clone(),
                _ => vec![],
            },
            D::LogOnly => vec![],
        };
        let refs: Vec<TableRef> = touched.iter().map(|(d, t)| plain_ref(d, t)).collect();
        self.check_locked_tables(&[], &refs)
    }

    /// `LOCK TABLES`.
    pub(crate) fn lock_tables(&mut self, items: &[LockItem]) -> Result<QueryResult, SqlError> {
        let mut wanted = Vec::with_capacity(items.len());
        for it in items {
            let db = match &it.db {
                Some(d) => d.clone(),
                None => self
                    .current_db
                    .clone()
                    .ok_or_else(|| sql_err(code::ER_NO_DB_ERROR, "No database selected"))?,
            };
            if db.eq_ignore_ascii_case("information_schema") {
                return Err(sql_err(
                    code::ER_DBACCESS_DENIED_ERROR,
                    format!(
                        "Access denied for user '{}'@'{}' to database 'information_schema'",
                        self.user, self.account_host
                    ),
                ));
            }
            self.check_db(&db, Priv::LOCK_TABLES)?;
            self.check_tables(&[(db.clone(), it.table.clone())], Priv::SELECT)?;
            // A view locks the tables it reads, in the same mode.
            let cat = self.db.engine.catalog();
            if cat.table(&db, &it.table).is_none() {
                if let Some(v) = cat.object(onelog_engine::ObjectKind::View, &db, &it.table) {
                    let def = crate::views::ViewDef::decode(v)?;
                    let (sel, _) = self.bind(&def.query, |b| {
                        crate::binder::bind_view_query(b.env(), &db, &def.query, &def.columns)
                    })?;
                    let mut read = Vec::new();
                    crate::binder::tables_read(&sel, &mut read);
                    for (d, t) in read {
                        if !wanted.iter().any(|l: &Locked| l.db == d && l.alias == t) {
                            wanted.push(Locked {
                                db: d,
                                table: t.clone(),
                                alias: t,
                                write: it.kind == LockKind::Write,
                            });
                        }
                    }
                    continue;
                }
            }
            let alias = it.alias.clone().unwrap_or_else(|| it.table.clone());
            wanted.push(Locked {
                db,
                table: it.table.clone(),
                alias,
                write: it.kind == LockKind::Write,
            });
        }
        // A new LOCK TABLES ends the session's transaction and its previous table locks.
        self.implicit_commit()?;
        self.locks.tables = None;
        if wanted.iter().any(|l| l.write) && self.db.global_read.held_by_other(self.conn_id) {
            // MariaDB's LOCK TABLES ... WRITE waits for another session's global read lock.
            let interrupt = self.control.interrupt.clone();
            let db = self.db.clone();
            drop(
                db.global_read
                    .write_statement(self.conn_id, self.metadata_wait(), &interrupt)?,
            );
        }
        let spec: Vec<(String, String, TableLockMode)> = wanted
            .iter()
            .map(|l| {
                let m = if l.write {
                    TableLockMode::Write
                } else {
                    TableLockMode::Read
                };
                (l.db.clone(), l.table.clone(), m)
            })
            .collect();
        let locks = self
            .db
            .engine
            .lock_tables(&spec, self.metadata_wait(), Some(&self.control.interrupt))
            .map_err(|e| match e {
                onelog_engine::EngineError::LockWaitTimeout => lock_timeout(),
                e => crate::executor::engine_err(e),
            })?;
        self.locks.tables = Some(HeldTables {
            locks,
            tables: wanted,
        });
        Ok(QueryResult::ok())
    }

    /// `UNLOCK TABLES`: commits the transaction if tables were locked, releases the table
    /// locks and the global read lock.
    pub(crate) fn unlock_tables(&mut self) -> Result<QueryResult, SqlError> {
        if self.locks.tables.is_some() {
            self.implicit_commit()?;
            self.locks.tables = None;
        }
        if self.locks.global_read {
            self.db.global_read.release(self.conn_id);
            self.locks.global_read = false;
        }
        Ok(QueryResult::ok())
    }

    /// Table locks end when a transaction begins (BEGIN / START TRANSACTION).
    pub(crate) fn release_table_locks(&mut self) {
        self.locks.tables = None;
    }

    /// `FLUSH TABLES WITH READ LOCK`.
    pub(crate) fn flush_with_read_lock(&mut self) -> Result<(), SqlError> {
        if self.locks.tables.is_some() {
            return Err(sql_err(
                1192,
                "Can't execute the given command because you have active locked tables or an active transaction",
            ));
        }
        self.implicit_commit()?;
        let interrupt = self.control.interrupt.clone();
        let db = self.db.clone();
        db.global_read
            .acquire(self.conn_id, self.metadata_wait(), &interrupt)?;
        self.locks.global_read = true;
        Ok(())
    }

    /// Releases everything at the end of the session.
    pub(crate) fn drop_locks(&mut self) {
        self.locks.tables = None;
        self.db.user_locks.release_all(self.conn_id);
        if self.locks.global_read {
            self.db.global_read.release(self.conn_id);
            self.locks.global_read = false;
        }
    }
}

/// A session's LOCK TABLES and global read lock.
#[derive(Default)]
pub(crate) struct SessionLocks {
    tables: Option<HeldTables>,
    global_read: bool,
    /// A write statement of the session is running (it passed the global read lock).
    writing: bool,
}

/// The tables of `sel`'s sources `idx` (those an UPDATE or DELETE writes).
fn source_refs(sel: &Select, idx: &[usize]) -> Vec<TableRef> {
    idx.iter()
        .filter_map(|&i| sel.sources.get(i))
        .filter_map(|s| {
            s.table()
                .map(|t| (t.db.clone(), t.name.clone(), s.alias.clone()))
        })
        .collect()
}

/// The tables an INSERT uses (its target first) and writes.
pub(crate) fn insert_refs(plan: &crate::binder::Insert) -> (Vec<TableRef>, Vec<TableRef>) {
    let target = plain_ref(&plan.table.db, &plan.table.name);
    let mut used = vec![target.clone()];
    if let crate::binder::InsertSource::Select(sel) = &plan.source {
        table_refs(sel, &mut used);
    }
    for q in &plan.subqueries {
        table_refs(q, &mut used);
    }
    (used, vec![target])
}

/// The tables an UPDATE uses and writes.
pub(crate) fn update_refs(plan: &crate::binder::Update) -> (Vec<TableRef>, Vec<TableRef>) {
    let mut used = Vec::new();
    table_refs(&plan.select, &mut used);
    let targets: Vec<usize> = plan
        .sets
        .iter()
        .filter_map(|(p, _)| {
            plan.select
                .sources
                .iter()
                .position(|s| *p >= s.offset && *p < s.offset + s.ncols)
        })
        .collect();
    (used, source_refs(&plan.select, &targets))
}

/// The tables a DELETE uses and writes.
pub(crate) fn delete_refs(plan: &crate::binder::Delete) -> (Vec<TableRef>, Vec<TableRef>) {
    let mut used = Vec::new();
    table_refs(&plan.select, &mut used);
    let targets = if plan.targets.is_empty() {
        vec![0]
    } else {
        plan.targets.clone()
    };
    (used, source_refs(&plan.select, &targets))
}

/// (database, table) pairs of table references.
pub(crate) fn pairs(refs: &[TableRef]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = refs.iter().map(|r| (r.0.clone(), r.1.clone())).collect();
    v.dedup();
    v
}
