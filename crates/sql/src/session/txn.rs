//! The session's transactions: starting one, running a statement inside it (statement
//! rollback on error, whole-transaction rollback on deadlock, commit in autocommit mode),
//! commit and rollback; and the transaction an account statement runs in, committed as the
//! statement MariaDB logs (see `account_stmt.rs`).

use onelog_engine::{LoggedStatement, Txn};
use onelog_types::{code, SqlError, Value};

use super::{no_savepoint, Session};
use crate::executor::{engine_err, ExecCtx};
use crate::parser::Scope as VarScope;
use crate::sql_err;
use crate::QueryResult;
use onelog_engine::Isolation;

impl Session {
    pub(crate) fn commit_txn(&mut self) -> Result<(), SqlError> {
        if self.sp.in_stmt > 0 {
            return Err(crate::sql_err(
                1422,
                "Explicit or implicit commit is not allowed in stored function or trigger",
            ));
        }
        // A commit with changes waits while another session holds the global read lock
        // (FLUSH TABLES WITH READ LOCK); if the wait fails the transaction stays open.
        let _pass = match &self.txn {
            Some(t) if t.has_writes() => Some(self.commit_pass()?),
            _ => None,
        };
        self.in_explicit = false;
        self.read_only_txn = false;
        if let Some(mut t) = self.txn.take() {
            // `gtid_seq_no` waits for a transaction that is logged (one that writes).
            let gtid = match self.next_gtid.take() {
                None if t.has_writes() => self.take_seq_no_gtid(),
                g => g,
            };
            t.set_gtid(gtid);
            if let Some(g) = t.commit().map_err(engine_err)?.gtid {
                self.last_gtid = g;
            }
        }
        Ok(())
    }

    /// The GTID `SET gtid_seq_no` asked for, once (MariaDB resets the variable when a
    /// transaction is logged under it).
    pub(crate) fn take_seq_no_gtid(&mut self) -> Option<onelog_engine::Gtid> {
        let seq = std::mem::take(&mut self.gtid_seq_no);
        let (domain, server) = self.gtid_domain_and_server();
        (seq != 0).then(|| onelog_engine::Gtid::new(domain, server, seq))
    }

    /// The domain and server id `gtid_seq_no` logs under: the session's `SET SESSION
    /// gtid_domain_id / server_id` (what `mariadb-binlog` output sets), else the server's.
    pub(crate) fn gtid_domain_and_server(&self) -> (u32, u32) {
        let o = self.db.engine.options();
        let session = |name: &str, default: u32| match self.vars.get(name) {
            Some(Value::UInt(n)) => u32::try_from(*n).unwrap_or(default),
            _ => default,
        };
        (
            session("gtid_domain_id", o.gtid_domain_id),
            session("server_id", o.server_id),
        )
    }

    pub(super) fn rollback_txn(&mut self) {
        self.in_explicit = false;
        self.read_only_txn = false;
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
    }

    pub(crate) fn ensure_txn(&mut self) -> &mut Txn {
        if self.txn.is_none() {
            let iso = self
                .next_isolation
                .take()
                .unwrap_or_else(|| self.isolation());
            let mut txn = self.db.engine.begin(iso);
            txn.set_connection(self.conn_id);
            txn.set_interrupt(self.control.interrupt.clone());
            if let Ok(v) = self.get_var(None, "innodb_lock_wait_timeout") {
                let secs = match v {
                    Value::Int(i) => i.max(0) as u64,
                    Value::UInt(u) => u,
                    _ => 50,
                };
                txn.set_lock_wait_timeout(std::time::Duration::from_secs(secs));
            }
            self.txn = Some(txn);
        }
        self.txn.as_mut().unwrap()
    }

    /// Runs `f` as one statement of the current transaction (starting one if needed):
    /// statement savepoint, rollback of the statement (or of the whole transaction on
    /// deadlock) on error, commit at the end in autocommit mode. `tables` are the tables
    /// it uses, `written` those it writes (opened with a write-mode metadata lock).
    pub(crate) fn in_statement<T>(
        &mut self,
        sql: &str,
        tables: &[(String, String)],
        written: &[(String, String)],
        f: impl FnOnce(&mut ExecCtx) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        let covered: Vec<bool> = tables.iter().map(|(d, t)| self.covered(d, t)).collect();
        // Temporary tables take no metadata locks (nobody else sees them).
        let temp: Vec<(&String, &String)> = tables
            .iter()
            .filter(|(d, t)| self.is_temp_table(d, t) || self.is_created_table(d, t))
            .map(|(d, t)| (d, t))
            .collect();
        let mode = self.sql_mode();
        let strict = mode.contains("STRICT_TRANS_TABLES") || mode.contains("STRICT_ALL_TABLES");
        let no_auto_value_on_zero = mode.contains("NO_AUTO_VALUE_ON_ZERO");
        let check_constraints = self
            .get_var(None, "check_constraint_checks")
            .map_or(true, |v| crate::expr::truth(&v) != Some(false));
        let foreign_key_checks = crate::foreign_keys::session_checks(self);
        // Tables reached through foreign keys get the metadata locks their checks and
        // cascades need.
        let fk_tables: Vec<(String, String, bool, bool)> = if foreign_key_checks {
            crate::foreign_keys::related_tables(&self.db.engine.catalog(), written)
                .into_iter()
                .filter(|(d, t, _)| !tables.iter().any(|(x, y)| x == d && y == t))
                .map(|(d, t, w)| {
                    let covered = self.covered(&d, &t);
                    (d, t, w, covered)
                })
                .collect()
        } else {
            Vec::new()
        };
        let stmt_now = self.stmt_now;
        // Inside a stored function or trigger the statement is part of the one that called
        // it: no statement boundary, commit or rollback of its own.
        let nested = self.sp.in_stmt > 0;
        crate::routines::check_in_use(self, written)?;
        self.ensure_txn();
        let mut txn = self.txn.take().unwrap();
        if !nested {
            txn.statement_begin();
            txn.set_foreign_key_checks(foreign_key_checks);
        }
        let mut warnings = std::mem::take(&mut self.warnings);
        let view_checks = std::mem::take(&mut self.view_checks);
        let control = self.control.clone();
        let in_use = self.sp.in_use.len();
        self.sp.in_use.extend(tables.iter().cloned());
        let host: &mut dyn crate::routines::RoutineHost = self;
        let txn_ref = &mut txn;
        let mut result = (|| {
            let txn = txn_ref;
            for ((d, t), covered) in tables.iter().zip(covered) {
                if d.eq_ignore_ascii_case("information_schema") || temp.contains(&(d, t)) {
                    continue;
                }
                let table = (d.clone(), t.clone());
                if covered {
                    txn.open_table_covered(d, t)
                } else if written.contains(&table) {
                    txn.open_table_for_write(d, t)
                } else {
                    txn.open_table(d, t)
                }
                .map_err(engine_err)?;
            }
            for (d, t, write, covered) in &fk_tables {
                let r = if *covered {
                    txn.open_table_covered(d, t)
                } else if *write {
                    txn.open_table_for_write(d, t)
                } else {
                    txn.open_table(d, t)
                };
                // A parent that does not exist (yet) fails the check that needs it.
                match r {
                    Ok(_) | Err(onelog_engine::EngineError::NoSuchTable { .. }) => {}
                    Err(e) => return Err(engine_err(e)),
                }
            }
            let mut cx = ExecCtx {
                txn,
                interrupt: &control.interrupt,
                warnings: &mut warnings,
                strict,
                no_auto_value_on_zero,
                check_constraints,
                foreign_key_checks,
                view_checks: &view_checks,
                now: stmt_now,
                host: Some(host),
            };
            f(&mut cx)
        })();
        self.sp.in_use.truncate(in_use);
        self.view_checks = view_checks;
        self.txn = Some(txn);
        warnings.append(&mut self.warnings);
        self.warnings = warnings;
        if nested {
            return result;
        }
        let autocommit = self.autocommit() && !self.in_explicit;
        match &result {
            Ok(_) => {
                let txn = self.txn.as_mut().unwrap();
                txn.statement_end(Some(sql));
                if autocommit {
                    if let Err(e) = self.commit_txn() {
                        result = Err(e);
                    }
                }
            }
            Err(e) => {
                if e.code == code::ER_LOCK_DEADLOCK {
                    crate::engine_status::note_deadlock(self);
                    self.rollback_txn();
                } else {
                    let txn = self.txn.as_mut().unwrap();
                    txn.statement_rollback();
                    txn.statement_end(None);
                    if autocommit {
                        self.rollback_txn();
                    }
                }
            }
        }
        result
    }

    /// Implicit commit (DDL, account statements, BEGIN).
    pub(crate) fn implicit_commit(&mut self) -> Result<(), SqlError> {
        self.xa_before_implicit_commit()?;
        self.commit_txn()
    }

    /// Starts the transaction an account statement runs in: the internal statements it
    /// runs (`run_internal`) join it instead of committing one by one.
    pub(crate) fn begin_internal_txn(&mut self) {
        self.in_explicit = true;
        self.ensure_txn();
    }

    /// Commits the transaction begun by [`begin_internal_txn`](Self::begin_internal_txn),
    /// logged as `stmt` (`ROW_REDO GTID QUERY`, see `onelog_engine::LoggedStatement`).
    pub(crate) fn commit_logged(&mut self, stmt: &LoggedStatement) -> Result<(), SqlError> {
        self.in_explicit = false;
        self.read_only_txn = false;
        match self.txn.take() {
            Some(mut t) => {
                let _pass = self.commit_pass()?;
                let gtid = self.next_gtid.take().or_else(|| self.take_seq_no_gtid());
                t.set_gtid(gtid);
                t.commit_logged(stmt).map(|_| ()).map_err(engine_err)
            }
            // An internal statement's deadlock rolled it back: that error was returned.
            None => Err(crate::sql_err(
                code::ER_LOCK_DEADLOCK,
                "Deadlock found when trying to get lock; try restarting transaction",
            )),
        }
    }

    /// Rolls back the transaction begun by [`begin_internal_txn`](Self::begin_internal_txn).
    pub(crate) fn rollback_internal_txn(&mut self) {
        self.rollback_txn();
    }

    /// `BEGIN` / `START TRANSACTION [READ ONLY] [WITH CONSISTENT SNAPSHOT]`: commits the
    /// open transaction and starts an explicit one.
    pub(super) fn begin(
        &mut self,
        read_only: bool,
        snapshot: bool,
    ) -> Result<QueryResult, SqlError> {
        self.implicit_commit()?;
        self.release_table_locks();
        self.in_explicit = true;
        self.read_only_txn = read_only;
        let txn = self.ensure_txn();
        if snapshot {
            txn.take_snapshot();
        }
        Ok(QueryResult::ok())
    }

    /// `SAVEPOINT name`.
    pub(super) fn savepoint(&mut self, name: &str) -> Result<QueryResult, SqlError> {
        // Outside a transaction in autocommit mode SAVEPOINT is accepted and does
        // nothing (MariaDB); with autocommit off it belongs to the transaction the
        // session is in, starting it if needed.
        if self.in_explicit || !self.autocommit() {
            self.ensure_txn().savepoint(name);
        }
        Ok(QueryResult::ok())
    }

    /// `ROLLBACK TO [SAVEPOINT] name` (1305 for an unknown one).
    pub(super) fn rollback_to_savepoint(&mut self, name: &str) -> Result<QueryResult, SqlError> {
        let found = self
            .txn
            .as_mut()
            .is_some_and(|t| t.rollback_to_savepoint(name));
        if !found {
            return Err(no_savepoint(name));
        }
        Ok(QueryResult::ok())
    }

    /// `RELEASE SAVEPOINT name` (1305 for an unknown one).
    pub(super) fn release_savepoint(&mut self, name: &str) -> Result<QueryResult, SqlError> {
        let found = self.txn.as_mut().is_some_and(|t| t.release_savepoint(name));
        if !found {
            return Err(no_savepoint(name));
        }
        Ok(QueryResult::ok())
    }

    /// `SET [GLOBAL | SESSION] TRANSACTION ISOLATION LEVEL ... | READ ONLY | READ WRITE`;
    /// without a scope it applies to the next transaction only (1568 inside one).
    pub(super) fn set_transaction(
        &mut self,
        scope: Option<VarScope>,
        isolation: Option<&str>,
        read_only: Option<bool>,
    ) -> Result<QueryResult, SqlError> {
        if let Some(i) = isolation {
            match scope {
                None => {
                    if self.in_explicit {
                        return Err(sql_err(
                            1568,
                            "Transaction characteristics can't be changed while a transaction is in progress",
                        ));
                    }
                    self.next_isolation =
                        Some(if i == "READ-COMMITTED" || i == "READ-UNCOMMITTED" {
                            Isolation::ReadCommitted
                        } else {
                            Isolation::RepeatableRead
                        });
                }
                Some(s) => self.set_var(s, "transaction_isolation", Value::str(i))?,
            }
        }
        if let (Some(ro), Some(s)) = (read_only, scope) {
            self.set_var(s, "transaction_read_only", Value::Int(ro as i64))?;
        }
        Ok(QueryResult::ok())
    }
}
