//! The replica's applier: the primary's events, in order, through one session.
//!
//! A transactional group (`GTID` ... `XID` or `COMMIT`) runs as one transaction: row events
//! become row changes (`Session::apply_row_changes`, one call per rows event, foreign keys
//! enforced and cascades made here unless the event says the primary had them off),
//! statement events run as SQL. It commits
//! under the primary's GTID (`Session::set_next_gtid`), so onelog's own binlog holds the
//! GTID in the same group as the rows: `@@gtid_slave_pos` is read back from there, exact
//! after any crash. A standalone group (DDL, account statements) runs its one statement
//! under the GTID; a group that changes nothing is logged empty, so the position moves on.
//! A CREATE TABLE inside a transactional group (CREATE ... SELECT) creates the table in
//! the group's transaction, committed and logged with its rows as one group.
//! An XA transaction's prepare group runs between `XA START` and `XA PREPARE` and leaves
//! it prepared, detached from the session; its `XA COMMIT` / `XA ROLLBACK` group ends it.

use std::collections::HashMap;
use std::sync::Arc;

use onelog_binlog::event::{gtid_flags, option_flags, rows_flags, Event, TableMap};
use onelog_binlog::rows::decode_rows;
use onelog_binlog::{EventHeader, Gtid};
use onelog_engine::CommitOrder;
use onelog_sql::Session;
use onelog_types::{code, SqlError};

/// What applying one event did.
#[derive(Debug, PartialEq, Eq)]
pub enum Applied {
    /// Nothing that ends a group.
    Event,
    /// A group ended and is committed (durable) under this GTID.
    Group(Gtid),
}

pub struct Applier {
    session: Session,
    maps: HashMap<u64, TableMap>,
    /// The open group: its GTID and whether it is standalone.
    group: Option<(Gtid, bool)>,
    /// The order the next commit keeps (parallel apply, see `parallel.rs`).
    order: Option<Arc<dyn CommitOrder>>,
    /// The session's `foreign_key_checks`, as the last QUERY event's Q_FLAGS2 set it.
    fk_checks: bool,
}

fn sql_error(code: u16, msg: String) -> SqlError {
    SqlError::from_code(code, msg)
}

impl Applier {
    pub fn new(session: Session) -> Applier {
        Applier {
            session,
            maps: HashMap::new(),
            group: None,
            order: None,
            fk_checks: true,
        }
    }

    /// The commit order the group's commit waits for its turn in.
    pub fn set_commit_order(&mut self, order: Option<Arc<dyn CommitOrder>>) {
        self.order = order;
    }

    /// The session's KILL QUERY flag (interrupts a lock wait of the group).
    pub fn interrupt_flag(&self) -> Arc<std::sync::atomic::AtomicBool> {
        self.session.interrupt_flag()
    }

    /// Whether a group is open (partly applied).
    pub fn in_group(&self) -> bool {
        self.group.is_some()
    }

    /// Drops a partly applied group (the connection broke inside it): nothing of it is
    /// committed, and the primary sends it again.
    pub fn abandon(&mut self) {
        if self.group.take().is_some() {
            self.session.rollback_replicated();
        }
        self.maps.clear();
    }

    fn run(&mut self, sql: &str) -> Result<(), SqlError> {
        for r in self.session.execute(sql) {
            r?;
        }
        Ok(())
    }

    fn end_group(&mut self) -> Result<Applied, SqlError> {
        let Some((gtid, _)) = self.group.take() else {
            return Ok(Applied::Event);
        };
        // Still set when the group logged nothing itself (a statement that changed nothing).
        self.session.commit_replicated(self.order.clone())?;
        self.maps.clear();
        Ok(Applied::Group(gtid))
    }

    /// Applies one event of the primary's stream.
    pub fn apply(&mut self, h: &EventHeader, ev: &Event) -> Result<Applied, SqlError> {
        match ev {
            Event::Gtid(g) => {
                if self.group.is_some() {
                    self.abandon();
                }
                let gtid = g.gtid(h.server_id);
                let standalone = g.is_standalone();
                self.group = Some((gtid, standalone));
                self.session.set_next_gtid(Some(gtid));
                match g.xa {
                    // An XA transaction's prepare: its `XA END` comes as a QUERY event.
                    Some(x) if g.flags2 & gtid_flags::PREPARED_XA != 0 => {
                        self.run(&format!("XA START {}", x.to_sql()))?
                    }
                    _ if !standalone => self.run("BEGIN")?,
                    _ => {}
                }
                Ok(Applied::Event)
            }
            Event::Query(q) => {
                let text = String::from_utf8_lossy(&q.query).into_owned();
                let t = text.trim();
                if t.eq_ignore_ascii_case("BEGIN") {
                    return Ok(Applied::Event);
                }
                if t.eq_ignore_ascii_case("COMMIT") {
                    return self.end_group();
                }
                if t.eq_ignore_ascii_case("ROLLBACK") {
                    self.abandon();
                    return Ok(Applied::Event);
                }
                // The primary's session ran it with these checks (Q_FLAGS2), as a MariaDB
                // replica runs it.
                if let Some(flags2) = q.status_flags2() {
                    let on = flags2 & option_flags::NO_FOREIGN_KEY_CHECKS == 0;
                    if on != self.fk_checks {
                        self.run(&format!("SET SESSION foreign_key_checks = {}", on as u8))?;
                        self.fk_checks = on;
                    }
                }
                if !q.db.is_empty() {
                    // The statement's database; it may not exist yet (CREATE DATABASE).
                    let _ = self.session.use_database(&q.db);
                }
                self.session.set_fixed_time(Some(h.timestamp as i64));
                let wrap = |e: SqlError| {
                    sql_error(
                        e.code,
                        format!(
                            "Error '{}' on query. Default database: '{}'. Query: '{}'",
                            e.message, q.db, text
                        ),
                    )
                };
                // CREATE TABLE ... SELECT: the table is created by the group's transaction.
                if matches!(self.group, Some((_, false)))
                    && self.session.create_table_in_group(&text).map_err(wrap)?
                {
                    return Ok(Applied::Event);
                }
                self.run(&text).map_err(|e| {
                    sql_error(
                        e.code,
                        format!(
                            "Error '{}' on query. Default database: '{}'. Query: '{}'",
                            e.message, q.db, text
                        ),
                    )
                })?;
                match self.group {
                    Some((_, true)) => self.end_group(),
                    _ => Ok(Applied::Event),
                }
            }
            Event::TableMap(m) => {
                self.maps.insert(m.table_id, m.clone());
                Ok(Applied::Event)
            }
            Event::Rows(r) => {
                let m = self.maps.get(&r.table_id).ok_or_else(|| {
                    sql_error(
                        code::ER_UNKNOWN_ERROR,
                        format!(
                            "a rows event for table id {} without its table map",
                            r.table_id
                        ),
                    )
                })?;
                let (db, table) = (m.db.clone(), m.table.clone());
                if db == "mysql" && table.starts_with("onelog_") {
                    // A onelog primary's own account tables (its bootstrap): accounts
                    // replicate as the statements that change them, never as rows.
                    return Ok(Applied::Event);
                }
                let changes = decode_rows(r, &m.column_specs()).map_err(|e| {
                    sql_error(
                        code::ER_UNKNOWN_ERROR,
                        format!("cannot decode a rows event of `{db}`.`{table}`: {e}"),
                    )
                })?;
                let fk_checks = r.flags & rows_flags::NO_FOREIGN_KEY_CHECKS == 0;
                self.session
                    .apply_row_changes(&db, &table, changes, fk_checks)
                    .map_err(|e| {
                        sql_error(
                            e.code,
                            format!(
                                "Could not execute a rows event on table {db}.{table}; {}",
                                e.message
                            ),
                        )
                    })?;
                Ok(Applied::Event)
            }
            Event::Xid(_) => self.end_group(),
            // Prepared under the primary's GTID and left prepared for anyone: its
            // `XA COMMIT` or `XA ROLLBACK` comes as a later group.
            Event::XaPrepare(p) => {
                let Some((gtid, _)) = self.group.take() else {
                    return Ok(Applied::Event);
                };
                self.session
                    .xa_prepare_replicated(p.xid, self.order.clone())?;
                self.maps.clear();
                Ok(Applied::Group(gtid))
            }
            // FORMAT_DESCRIPTION, ROTATE, GTID_LIST, ANNOTATE_ROWS, BINLOG_CHECKPOINT,
            // HEARTBEAT, STOP and ignorable events change no data.
            _ => Ok(Applied::Event),
        }
    }
}
