//! The binding environment of a session's statements: its current database, catalog,
//! parameters, clock, identity and variables, as the binder reads them.

use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use onelog_types::{code, DateTime, SqlError, Value};

use super::Session;
use crate::binder::{BindEnv, VirtualColumn};
use crate::parser::Scope as VarScope;

/// The binder's view of a session for one statement.
pub(super) struct Env<'a> {
    pub(super) s: &'a Session,
    pub(super) catalog: Arc<onelog_engine::Catalog>,
    /// Set when the binder read the session or the clock (a binding that did cannot be
    /// kept to run again, see `binder::SelectTemplate`).
    pub(super) read_session: Cell<bool>,
}

impl BindEnv for Env<'_> {
    fn current_db(&self) -> Option<&str> {
        self.s.current_db.as_deref()
    }
    fn catalog(&self) -> Arc<onelog_engine::Catalog> {
        self.catalog.clone()
    }
    fn params(&self) -> &[Value] {
        &self.s.params
    }
    fn now(&self) -> DateTime {
        self.read_session.set(true);
        self.s.stmt_now
    }
    fn connection_id(&self) -> u32 {
        self.read_session.set(true);
        self.s.conn_id
    }
    fn last_insert_id(&self) -> u64 {
        self.read_session.set(true);
        self.s.last_insert_id
    }
    fn row_count(&self) -> i64 {
        self.read_session.set(true);
        self.s.row_count
    }
    fn user(&self) -> String {
        self.read_session.set(true);
        format!("{}@{}", self.s.user, self.s.host)
    }
    fn current_user(&self) -> String {
        self.read_session.set(true);
        format!("{}@{}", self.s.user, self.s.account_host)
    }
    fn version(&self) -> String {
        self.read_session.set(true);
        self.s.db.engine.options().server_version.clone()
    }
    fn sys_var(&self, scope: Option<VarScope>, name: &str) -> Result<Value, SqlError> {
        self.read_session.set(true);
        self.s.get_var(scope, name)
    }
    fn user_var(&self, name: &str) -> Value {
        self.read_session.set(true);
        self.s.user_vars.get(name).cloned().unwrap_or(Value::Null)
    }
    fn info_schema(&self, table: &str) -> Option<(Vec<VirtualColumn>, Vec<Vec<Value>>)> {
        self.read_session.set(true);
        // Temporary tables are not listed (MariaDB 10.11).
        crate::info_schema::info_schema(self.s, &self.s.db.engine.catalog(), table)
    }
    fn interrupted(&self) -> bool {
        self.s.control.interrupt.load(Ordering::Relaxed)
    }
    fn master_gtid_wait(&self, pos: &str, timeout: Option<f64>) -> Result<Value, SqlError> {
        self.read_session.set(true);
        let engine = &self.s.db.engine;
        let deadline = timeout
            .filter(|t| *t >= 0.0)
            .map(|t| std::time::Instant::now() + std::time::Duration::from_secs_f64(t.min(3e7)));
        onelog_engine::wait::blocking(|| loop {
            if engine
                .slave_pos_reached(pos)
                .map_err(crate::executor::engine_err)?
            {
                return Ok(Value::Int(0));
            }
            if self.interrupted() {
                return Err(crate::sql_err(
                    code::ER_QUERY_INTERRUPTED,
                    "Query execution was interrupted",
                ));
            }
            let now = std::time::Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Ok(Value::Int(-1));
            }
            let left = deadline.map_or(std::time::Duration::from_millis(5), |d| d - now);
            std::thread::sleep(left.min(std::time::Duration::from_millis(5)));
        })
    }
}
