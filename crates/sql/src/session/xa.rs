//! XA transactions in a session, with MariaDB 10.11's states and errors.
//!
//! `XA START` begins an explicit transaction under a claimed XID (ACTIVE); `XA END` makes
//! it IDLE (no more statements on tables); `XA PREPARE` hands it to the engine
//! (`onelog_engine::Txn::xa_prepare`: durable, still holding its locks) and the session
//! stays in PREPARED until it commits or rolls it back. When the connection ends, a
//! prepared transaction stays prepared for any connection to end (`XA RECOVER` lists it);
//! an ACTIVE or IDLE one is rolled back. `XA COMMIT ... ONE PHASE` of an IDLE transaction
//! commits it as an ordinary transaction.

use onelog_engine::XaXid;
use onelog_types::{SqlError, Value};

use super::Session;
use crate::executor::engine_err;
use crate::parser::xa::XaStmt;
use crate::parser::{Admin, Stmt};
use crate::{QueryResult, ResultColumn};

/// The session's XA transaction.
#[derive(Debug, Clone, Copy)]
pub(crate) struct XaSession {
    xid: XaXid,
    phase: Phase,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Active,
    Idle,
    Prepared,
}

fn rmfail(state: &str) -> SqlError {
    SqlError::new(
        1399,
        "XAE07",
        format!(
            "XAER_RMFAIL: The command cannot be executed when global transaction is in the  {state} state"
        ),
    )
}

fn state_error(x: Option<XaSession>) -> SqlError {
    rmfail(match x.map(|x| x.phase) {
        None => "NON-EXISTING",
        Some(Phase::Active) => "ACTIVE",
        Some(Phase::Idle) => "IDLE",
        Some(Phase::Prepared) => "PREPARED",
    })
}

fn nota() -> SqlError {
    SqlError::new(1397, "XAE04", "XAER_NOTA: Unknown XID")
}

fn inval() -> SqlError {
    SqlError::new(
        1398,
        "XAE05",
        "XAER_INVAL: Invalid arguments (or unsupported command)",
    )
}

fn outside() -> SqlError {
    SqlError::new(
        1400,
        "XAE09",
        "XAER_OUTSIDE: Some work is done outside global transaction",
    )
}

impl Session {
    /// Refuses what the session's XA state does not allow (before a statement runs):
    /// transaction control while an XA transaction is open, and statements on tables once
    /// it is ended or prepared. DDL is refused by [`Self::xa_before_implicit_commit`].
    pub(super) fn xa_gate(&self, stmt: &Stmt) -> Result<(), SqlError> {
        use sqlparser::ast::{SetExpr, Statement as S};
        let Some(x) = self.xa else {
            return Ok(());
        };
        let txn_control = match stmt {
            Stmt::Admin(Admin::Begin { .. } | Admin::Commit | Admin::Rollback) => true,
            Stmt::Sql(s) => matches!(
                **s,
                S::StartTransaction { .. } | S::Commit { .. } | S::Rollback { .. }
            ),
            _ => false,
        };
        if txn_control {
            return Err(state_error(Some(x)));
        }
        if x.phase == Phase::Active {
            return Ok(());
        }
        let on_tables = match stmt {
            Stmt::Sql(s) => match &**s {
                S::Query(q) => !matches!(&*q.body, SetExpr::Select(sel) if sel.from.is_empty()),
                _ => true,
            },
            Stmt::Admin(
                Admin::LoadData(_)
                | Admin::SelectInto { .. }
                | Admin::TableMaint(_)
                | Admin::Routine(_)
                | Admin::Do(_),
            ) => true,
            _ => false,
        };
        if on_tables {
            return Err(state_error(Some(x)));
        }
        Ok(())
    }

    /// A statement that commits implicitly (DDL, LOCK TABLES, ...) is refused while an XA
    /// transaction is open.
    pub(super) fn xa_before_implicit_commit(&self) -> Result<(), SqlError> {
        match self.xa {
            Some(x) => Err(state_error(Some(x))),
            None => Ok(()),
        }
    }

    /// The connection ends or is reset: an open XA transaction is rolled back (the caller
    /// rolls back the session's transaction), a prepared one stays prepared for anyone.
    pub(super) fn xa_disconnect(&mut self) {
        if let Some(x) = self.xa.take() {
            if x.phase != Phase::Prepared {
                self.db.engine.xa_unclaim(&x.xid);
            }
        }
        self.db.engine.xa_detach(self.conn_id);
    }

    pub(crate) fn run_xa(&mut self, stmt: &XaStmt) -> Result<QueryResult, SqlError> {
        if self.sp.depth > 0 {
            // MariaDB: XA statements are not allowed in stored programs.
            return Err(crate::sql_err(
                1314,
                "XA is not allowed in stored procedures",
            ));
        }
        match stmt {
            XaStmt::Start { xid, join_resume } => {
                self.db.count_com("Com_xa_start");
                if *join_resume {
                    return Err(inval());
                }
                if self.xa.is_some() {
                    return Err(state_error(self.xa));
                }
                if self.in_explicit || self.txn.as_ref().is_some_and(|t| t.has_writes()) {
                    return Err(outside());
                }
                self.db.engine.xa_claim(*xid).map_err(engine_err)?;
                self.rollback_txn();
                self.release_table_locks();
                self.in_explicit = true;
                self.ensure_txn();
                self.xa = Some(XaSession {
                    xid: *xid,
                    phase: Phase::Active,
                });
            }
            XaStmt::End { xid, suspend } => {
                self.db.count_com("Com_xa_end");
                if *suspend {
                    return Err(inval());
                }
                match self.xa {
                    Some(x) if x.phase == Phase::Active && x.xid == *xid => {
                        self.xa = Some(XaSession {
                            phase: Phase::Idle,
                            ..x
                        });
                    }
                    Some(x) if x.phase == Phase::Active => return Err(nota()),
                    other => return Err(state_error(other)),
                }
            }
            XaStmt::Prepare(xid) => {
                self.db.count_com("Com_xa_prepare");
                match self.xa {
                    Some(x) if x.xid != *xid => return Err(nota()),
                    Some(x) if x.phase == Phase::Idle => self.xa_prepare(x)?,
                    other => return Err(state_error(other)),
                }
            }
            XaStmt::Commit { xid, one_phase } => {
                self.db.count_com("Com_xa_commit");
                match self.xa {
                    Some(x) if x.xid == *xid => match (x.phase, one_phase) {
                        (Phase::Idle, true) => {
                            self.xa = None;
                            self.db.engine.xa_unclaim(xid);
                            self.commit_txn()?;
                        }
                        (Phase::Prepared, false) => self.xa_end_prepared(xid, true)?,
                        (Phase::Prepared, true) => return Err(inval()),
                        _ => return Err(state_error(Some(x))),
                    },
                    Some(x) if x.phase != Phase::Prepared => return Err(outside()),
                    Some(x) => return Err(state_error(Some(x))),
                    None if *one_phase => return Err(nota()),
                    None => self.xa_end_prepared(xid, true)?,
                }
            }
            XaStmt::Rollback(xid) => {
                self.db.count_com("Com_xa_rollback");
                match self.xa {
                    Some(x) if x.xid == *xid => match x.phase {
                        Phase::Idle => {
                            self.xa = None;
                            self.db.engine.xa_unclaim(xid);
                            self.rollback_txn();
                        }
                        Phase::Prepared => self.xa_end_prepared(xid, false)?,
                        Phase::Active => return Err(state_error(Some(x))),
                    },
                    Some(x) if x.phase != Phase::Prepared => return Err(outside()),
                    Some(x) => return Err(state_error(Some(x))),
                    None => self.xa_end_prepared(xid, false)?,
                }
            }
            XaStmt::Recover(format) => {
                self.db.count_com("Com_xa_recover");
                return self.xa_recover(format.as_deref());
            }
        }
        Ok(QueryResult::ok())
    }

    /// Replication: `XA PREPARE` of the XA transaction the applier started, its commit
    /// keeping `order`; it is then left prepared for any connection (the primary's
    /// `XA COMMIT` or `XA ROLLBACK` group ends it), and the session is free again.
    pub fn xa_prepare_replicated(
        &mut self,
        xid: XaXid,
        order: Option<std::sync::Arc<dyn onelog_engine::CommitOrder>>,
    ) -> Result<(), SqlError> {
        let x = match self.xa {
            Some(x) if x.xid == xid && x.phase == Phase::Idle => x,
            Some(x) if x.xid != xid => return Err(nota()),
            other => return Err(state_error(other)),
        };
        if let Some(t) = self.txn.as_mut() {
            t.set_commit_order(order);
        }
        self.xa_prepare(x)?;
        self.xa = None;
        self.db.engine.xa_detach(self.conn_id);
        Ok(())
    }

    fn xa_prepare(&mut self, x: XaSession) -> Result<(), SqlError> {
        let _pass = match &self.txn {
            Some(t) if t.has_writes() => Some(self.commit_pass()?),
            _ => None,
        };
        self.in_explicit = false;
        self.read_only_txn = false;
        let Some(mut txn) = self.txn.take() else {
            self.xa = None;
            self.db.engine.xa_unclaim(&x.xid);
            return Err(nota());
        };
        let gtid = match self.next_gtid.take() {
            None if txn.has_writes() => self.take_seq_no_gtid(),
            g => g,
        };
        txn.set_gtid(gtid);
        let db = self.current_db.clone().unwrap_or_default();
        match txn.xa_prepare(x.xid, self.conn_id, &db) {
            Ok(info) => {
                if let Some(g) = info.gtid {
                    self.last_gtid = g;
                }
                self.xa = Some(XaSession {
                    phase: Phase::Prepared,
                    ..x
                });
                Ok(())
            }
            Err(e) => {
                // Rolled back, as MariaDB does when the prepare fails.
                self.xa = None;
                self.db.engine.xa_unclaim(&x.xid);
                Err(engine_err(e))
            }
        }
    }

    /// `XA COMMIT` / `XA ROLLBACK` of a prepared transaction (this session's or one whose
    /// connection ended).
    fn xa_end_prepared(&mut self, xid: &XaXid, commit: bool) -> Result<(), SqlError> {
        let _pass = if commit {
            Some(self.commit_pass()?)
        } else {
            None
        };
        let gtid = self.next_gtid.take().or_else(|| self.take_seq_no_gtid());
        let db = self.current_db.clone().unwrap_or_default();
        let engine = self.db.engine.clone();
        let r = if commit {
            engine.xa_commit(xid, self.conn_id, &db, gtid)
        } else {
            engine.xa_rollback(xid, self.conn_id, &db, gtid)
        };
        let info = r.map_err(engine_err)?;
        if let Some(g) = info.gtid {
            self.last_gtid = g;
        }
        if self.xa.is_some_and(|x| x.xid == *xid) {
            self.xa = None;
        }
        Ok(())
    }

    /// `XA RECOVER [FORMAT='RAW'|'SQL']`.
    fn xa_recover(&self, format: Option<&str>) -> Result<QueryResult, SqlError> {
        let sql = match format.map(str::to_ascii_uppercase).as_deref() {
            None | Some("RAW") => false,
            Some("SQL") => true,
            Some(_) => {
                return Err(crate::sql_err(
                    1791,
                    format!(
                        "Unknown XA RECOVER format name: '{}'",
                        format.unwrap_or_default()
                    ),
                ))
            }
        };
        let int = |n: u64| Value::Int(n as i64);
        let rows = self
            .db
            .engine
            .xa_recover()
            .into_iter()
            .map(|x| {
                let data = if sql {
                    Value::str(&sql_form(&x))
                } else {
                    Value::Bytes(x.data().to_vec())
                };
                vec![
                    int(x.format_id as u64),
                    int(x.gtrid().len() as u64),
                    int(x.bqual().len() as u64),
                    data,
                ]
            })
            .collect();
        Ok(QueryResult::Rows {
            columns: vec![
                ResultColumn::uint("formatID"),
                ResultColumn::uint("gtrid_length"),
                ResultColumn::uint("bqual_length"),
                ResultColumn::text("data"),
            ],
            rows,
        })
    }
}

/// `'gtrid','bqual',formatID` (bqual left out when empty) when every byte is printable
/// ASCII, else `X'hex',X'hex',formatID`, as MariaDB's `XA RECOVER FORMAT='SQL'` shows it.
fn sql_form(x: &XaXid) -> String {
    let printable = x
        .data()
        .iter()
        .all(|b| (0x20..0x7f).contains(b) && *b != b'\'' && *b != b'\\');
    if !printable {
        return x.to_sql();
    }
    let q = |b: &[u8]| format!("'{}'", String::from_utf8_lossy(b));
    match (x.bqual().is_empty(), x.format_id) {
        (true, 1) => q(x.gtrid()),
        (_, 1) => format!("{},{}", q(x.gtrid()), q(x.bqual())),
        (_, f) => format!("{},{},{f}", q(x.gtrid()), q(x.bqual())),
    }
}
