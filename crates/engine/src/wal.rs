//! The engine's view of its log: the binlog (in `engine` and `file` modes) behind a narrow
//! interface: append groups, sync, replay from a position, look up XIDs.
//!
//! This is also where a transaction's row changes become a MariaDB event group:
//! `[ANNOTATE_ROWS] TABLE_MAP... WRITE/UPDATE/DELETE_ROWS... XID` (the GTID event is added
//! by the binlog when it places the group, in commit order), DDL a `QUERY` event, and a
//! transaction committed as a [`LoggedStatement`] (account statements) its statement as a
//! `QUERY` event, preceded by its TABLE_MAP and rows events nested in onelog's private
//! row-redo event (`onelog_binlog::redo`), which recovery replays like rows events.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use onelog_binlog as binlog;
use onelog_binlog::Event;
use rocksdb::DB;

use crate::catalog::TableDef;
use crate::engine::{EngineOptions, LogMode};
use crate::error::{EngineError, Result};
use crate::keys;
use crate::txn::{ChangeKind, LoggedStatement, Row, Txn};

pub(crate) type Group = binlog::EventGroup;

/// A position in the log: file number and byte offset (the end of a group).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct LogPos {
    pub file: u32,
    pub offset: u64,
}

impl LogPos {
    /// Format: `file u32 LE | offset u64 LE` (the value of `keys::APPLIED`).
    pub fn encode(&self) -> [u8; 12] {
        let mut b = [0u8; 12];
        b[..4].copy_from_slice(&self.file.to_le_bytes());
        b[4..].copy_from_slice(&self.offset.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Result<LogPos> {
        if b.len() != 12 {
            return Err(EngineError::Corrupt("bad applied position".into()));
        }
        Ok(LogPos {
            file: u32::from_le_bytes(b[..4].try_into().unwrap()),
            offset: u64::from_le_bytes(b[4..].try_into().unwrap()),
        })
    }

    pub(crate) fn to_binlog(self) -> binlog::LogPos {
        binlog::LogPos {
            file_no: self.file,
            offset: self.offset,
        }
    }

    fn from_binlog(p: binlog::LogPos) -> LogPos {
        LogPos {
            file: p.file_no,
            offset: p.offset,
        }
    }
}

/// Bytes written to the log starting at a position.
pub(crate) type Chunk = (LogPos, Vec<u8>);

/// Where one group landed.
pub(crate) struct Appended {
    pub gtid: String,
    pub end: LogPos,
}

/// A row change read back from the log.
pub(crate) struct ReplayChange {
    pub db: String,
    pub table: String,
    pub kind: ChangeKind,
    pub before: Option<Row>,
    pub after: Option<Row>,
}

pub(crate) enum ReplayGroup {
    Ddl {
        db: String,
        sql: String,
        end: LogPos,
    },
    Rows {
        changes: Vec<ReplayChange>,
        end: LogPos,
    },
    /// CREATE TABLE ... SELECT: the statement, then the rows it inserted.
    DdlRows {
        db: String,
        sql: String,
        changes: Vec<ReplayChange>,
        end: LogPos,
    },
    /// `XA PREPARE`: the changes stay prepared; `record` is what the engine keeps of them.
    XaPrepare {
        xa: binlog::XaXid,
        changes: Vec<ReplayChange>,
        record: Vec<u8>,
        end: LogPos,
    },
    /// `XA COMMIT` (`commit`) or `XA ROLLBACK` of a prepared XA transaction.
    XaEnd {
        xa: binlog::XaXid,
        commit: bool,
        end: LogPos,
    },
}

pub(crate) struct Wal {
    pub(crate) binlog: Option<binlog::Binlog>,
    next_xid: AtomicU64,
    /// `binlog_row_metadata`: FULL (true) or MINIMAL.
    full_metadata: AtomicBool,
}

fn berr(e: binlog::BinlogError) -> EngineError {
    match &e {
        binlog::BinlogError::Io { source, .. } if source.raw_os_error() == Some(libc::ENOSPC) => {
            EngineError::DiskFull(e.to_string())
        }
        _ => EngineError::Binlog(e.to_string()),
    }
}

fn now() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as u32)
        .unwrap_or(0)
}

/// A transaction's event group encoded ahead of its commit: the group, and how many of the
/// transaction's statements and row changes it holds.
pub(crate) struct Ahead {
    pub group: Group,
    pub statements: usize,
    pub changes: usize,
}

/// About the size of a transaction's event group: statement texts (ANNOTATE_ROWS) and row
/// images, plus per-row and per-statement overhead. Only a capacity hint.
fn estimated_group_len(txn: &Txn) -> usize {
    let value_len = |v: &onelog_types::Value| match v {
        onelog_types::Value::Bytes(b) => b.len() + 4,
        _ => 8,
    };
    let image = |r: &Option<Row>| {
        r.as_ref()
            .map_or(0, |r| r.iter().map(value_len).sum::<usize>())
    };
    let rows: usize = txn
        .changes
        .iter()
        .map(|c| image(&c.before) + image(&c.after) + 8)
        .sum();
    let texts: usize = txn
        .statements
        .iter()
        .map(|s| s.sql.as_ref().map_or(0, |q| q.len()) + 256)
        .sum();
    rows + texts + 1024
}

impl Wal {
    pub fn open(opts: &EngineOptions, db: &DB) -> Result<Wal> {
        let binlog = match opts.mode {
            LogMode::Off => None,
            mode => {
                let fs = opts.binlog_fs.0.clone();
                let mut bo = binlog::BinlogOptions::new(opts.datadir.clone());
                bo.naming = if mode == LogMode::Engine {
                    binlog::Naming::Engine
                } else {
                    binlog::Naming::Classic
                };
                bo.max_binlog_size = opts.max_binlog_size.clamp(4096, u32::MAX as u64);
                bo.server_id = opts.server_id;
                bo.preallocate = opts.binlog_preallocate;
                bo.domain_id = opts.gtid_domain_id;
                bo.server_version = opts.server_version.clone();
                bo.sync_method = if opts.binlog_write_through {
                    binlog::SyncMethod::WriteThrough
                } else {
                    binlog::SyncMethod::Fdatasync
                };
                let mut b = binlog::Binlog::open_with_fs(fs.clone(), bo.clone()).map_err(berr)?;
                if mode == LogMode::Engine && restore_tail(&b, fs.as_ref(), db)? {
                    drop(b);
                    b = binlog::Binlog::open_with_fs(fs, bo).map_err(berr)?;
                }
                let r = b.recovery_report();
                if r.truncated_bytes > 0 || r.discarded_group.is_some() {
                    onelog_types::note!(
                        "binlog recovery: cut {} bytes after {} ({})",
                        r.truncated_bytes,
                        r.end,
                        r.stop_reason.clone().unwrap_or_default()
                    );
                }
                Some(b)
            }
        };
        // XIDs must not repeat across restarts (file mode matches prepared records to XID
        // events): start from the clock.
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(1);
        Ok(Wal {
            binlog,
            next_xid: AtomicU64::new(start),
            full_metadata: AtomicBool::new(opts.binlog_row_metadata == binlog::RowMetadata::Full),
        })
    }

    pub fn set_row_metadata(&self, meta: binlog::RowMetadata) {
        self.full_metadata
            .store(meta == binlog::RowMetadata::Full, Ordering::Relaxed);
    }

    pub fn row_metadata(&self) -> binlog::RowMetadata {
        if self.full_metadata.load(Ordering::Relaxed) {
            binlog::RowMetadata::Full
        } else {
            binlog::RowMetadata::Minimal
        }
    }

    /// A transaction's empty event group, sized for it; its events carry `server` (a
    /// replicated transaction's primary) or this server's id.
    fn new_group(&self, b: &binlog::Binlog, txn: &Txn, server: Option<u32>) -> Group {
        let server = server.unwrap_or(b.options().server_id);
        let mut g = match &txn.create {
            // CREATE TABLE ... SELECT: the statement first, then the rows.
            Some(c) => binlog::EventGroup::create_select(server, now(), 0, &c.db, &c.sql),
            None => binlog::EventGroup::transaction(server, now()),
        };
        g.reserve(estimated_group_len(txn));
        g.set_row_metadata(self.row_metadata());
        g
    }

    pub fn next_xid(&self) -> u64 {
        self.next_xid.fetch_add(1, Ordering::Relaxed)
    }

    pub fn append(&self, groups: &mut [Group]) -> Result<Vec<Appended>> {
        let b = self.binlog.as_ref().expect("binlog on");
        let info = b.append(groups).map_err(berr)?;
        Ok(info
            .groups
            .into_iter()
            .map(|g| Appended {
                gtid: g.gtid.to_string(),
                end: LogPos::from_binlog(g.end),
            })
            .collect())
    }

    /// [`append`](Self::append), also returning the bytes written (see
    /// `Binlog::append_capture`).
    pub fn append_capture(&self, groups: &mut [Group]) -> Result<(Vec<Appended>, Vec<Chunk>)> {
        let b = self.binlog.as_ref().expect("binlog on");
        let (info, chunks) = b.append_capture(groups).map_err(berr)?;
        Ok((
            info.groups
                .into_iter()
                .map(|g| Appended {
                    gtid: g.gtid.to_string(),
                    end: LogPos::from_binlog(g.end),
                })
                .collect(),
            chunks
                .into_iter()
                .map(|(p, bytes): binlog::Chunk| (LogPos::from_binlog(p), bytes))
                .collect(),
        ))
    }

    /// Everything before this position is durable in the binlog.
    pub fn synced_pos(&self) -> LogPos {
        self.binlog
            .as_ref()
            .map_or(LogPos { file: 0, offset: 0 }, |b| {
                LogPos::from_binlog(b.synced_pos())
            })
    }

    pub fn sync(&self) -> Result<()> {
        match &self.binlog {
            Some(b) => b.sync().map(|_| ()).map_err(berr),
            None => Ok(()),
        }
    }

    pub fn bytes_written(&self) -> u64 {
        self.binlog.as_ref().map_or(0, |b| b.stats().bytes_written)
    }

    /// Encodes the transaction's statements from index `from` on into `g`.
    fn encode_statements(g: &mut Group, txn: &Txn, from: usize) -> Result<()> {
        for (si, stmt) in txn.statements.iter().enumerate().skip(from) {
            let end = txn
                .statements
                .get(si + 1)
                .map_or(txn.changes.len(), |s| s.first);
            if stmt.first >= end {
                continue;
            }
            if let Some(sql) = &stmt.sql {
                g.annotate(sql).map_err(berr)?;
            }
            let flags = if stmt.no_fk_checks {
                binlog::event::rows_flags::NO_FOREIGN_KEY_CHECKS
            } else {
                0
            };
            g.set_rows_flags(flags);
            let mut in_redo = false;
            for c in &txn.changes[stmt.first..end] {
                // Rows a foreign key cascade changed go into row-redo events: replicas
                // make those changes themselves as they apply the parent row's.
                if c.cascaded != in_redo {
                    in_redo = c.cascaded;
                    if in_redo {
                        g.begin_redo().map_err(berr)?;
                    } else {
                        g.end_redo().map_err(berr)?;
                    }
                }
                let id = c.table.id as u64;
                if !g.is_mapped(id) {
                    g.map_table(id, &table_map(&c.table)).map_err(berr)?;
                }
                let n = c.table.columns.len();
                let r = match c.kind {
                    ChangeKind::Insert => g.insert(id, &c.after.as_ref().unwrap()[..n]),
                    ChangeKind::Update => g.update(
                        id,
                        &c.before.as_ref().unwrap()[..n],
                        &c.after.as_ref().unwrap()[..n],
                    ),
                    ChangeKind::Delete => g.delete(id, &c.before.as_ref().unwrap()[..n]),
                };
                r.map_err(berr)?;
            }
            g.end_statement().map_err(berr)?;
        }
        Ok(())
    }

    /// Encodes a large transaction's completed statements ahead of its commit (at
    /// statement end, as MariaDB fills its binlog cache), continuing `ahead`. None when
    /// the binlog is off.
    pub fn encode_ahead(&self, txn: &Txn, ahead: Option<Ahead>) -> Result<Option<Ahead>> {
        let Some(b) = &self.binlog else {
            return Ok(None);
        };
        let mut a = match ahead {
            Some(a) => a,
            None => Ahead {
                group: self.new_group(b, txn, None),
                statements: 0,
                changes: 0,
            },
        };
        Self::encode_statements(&mut a.group, txn, a.statements)?;
        a.statements = txn.statements.len();
        a.changes = txn.changes.len();
        Ok(Some(a))
    }

    /// The events of a transaction's row changes, continuing what was encoded ahead (None
    /// when the binlog is off).
    fn rows_group(&self, txn: &Txn, ahead: Option<Ahead>) -> Result<Option<Group>> {
        let Some(b) = &self.binlog else {
            return Ok(None);
        };
        let (mut g, from) = match (ahead, txn.gtid) {
            (Some(a), None) => (a.group, a.statements),
            // A replicated transaction: every event carries its primary's server id.
            (_, gtid) => (self.new_group(b, txn, gtid.map(|g| g.server)), 0),
        };
        Self::encode_statements(&mut g, txn, from)?;
        g.set_gtid(txn.gtid);
        Ok(Some(g))
    }

    /// The event group of a transaction's row changes, continuing what was encoded ahead
    /// (None when the binlog is off).
    pub fn txn_group(&self, txn: &Txn, ahead: Option<Ahead>, xid: u64) -> Result<Option<Group>> {
        let Some(mut g) = self.rows_group(txn, ahead)? else {
            return Ok(None);
        };
        g.commit(xid).map_err(berr)?;
        Ok(Some(g))
    }

    /// The event group of a transaction committed as a statement that replicas execute:
    /// `ROW_REDO GTID QUERY`, the row changes nested in the row-redo event (None when the
    /// binlog is off).
    pub fn statement_group(
        &self,
        txn: &Txn,
        ahead: Option<Ahead>,
        xid: u64,
        stmt: &LoggedStatement,
    ) -> Result<Option<Group>> {
        let Some(mut g) = self.rows_group(txn, ahead)? else {
            return Ok(None);
        };
        let status = binlog::event::QueryStatus {
            invoker: stmt.invoker.clone(),
            ..Default::default()
        };
        let q = binlog::event::Query::with_status(
            &stmt.db,
            &stmt.sql,
            stmt.thread_id,
            &status,
            stmt.error_code,
        );
        g.commit_statement(xid, q).map_err(berr)?;
        Ok(Some(g))
    }

    /// The event group of an `XA PREPARE` of the transaction (None when the binlog is off).
    pub fn xa_prepare_group(
        &self,
        txn: &Txn,
        ahead: Option<Ahead>,
        xid: u64,
        xa: binlog::XaXid,
        db: &str,
    ) -> Result<Option<Group>> {
        let Some(mut g) = self.rows_group(txn, ahead)? else {
            return Ok(None);
        };
        g.xa_prepare(xa, xid, db, 0).map_err(berr)?;
        Ok(Some(g))
    }

    /// The event group of `XA COMMIT` (`commit`) or `XA ROLLBACK` of a prepared XA
    /// transaction (None when the binlog is off), under `gtid` when given.
    pub fn xa_complete_group(
        &self,
        xa: binlog::XaXid,
        commit: bool,
        xid: u64,
        db: &str,
        gtid: Option<binlog::Gtid>,
    ) -> Option<Group> {
        let b = self.binlog.as_ref()?;
        let server = gtid.map_or(b.options().server_id, |g| g.server);
        let mut g = binlog::EventGroup::xa_complete(server, now(), 0, db, xa, commit, xid);
        g.set_gtid(gtid);
        Some(g)
    }

    /// The row changes of a transaction as a row-redo body (the TABLE_MAP and rows events
    /// its binlog group has): what the engine keeps of a prepared XA transaction.
    pub fn redo_record(&self, txn: &Txn) -> Result<Vec<u8>> {
        let mut g = binlog::EventGroup::transaction(0, 0);
        Self::encode_statements(&mut g, txn, 0)?;
        let mut out = Vec::new();
        Event::RowRedo(g.rows_redo(0).map_err(berr)?).encode_body(&mut out);
        Ok(out)
    }

    /// The event group of a DDL statement (None when the binlog is off), under `log.gtid`
    /// when given (a replicated statement keeps its primary's GTID and server id).
    pub fn ddl_group(&self, db: &str, sql: &str, log: crate::DdlLog) -> Result<Option<Group>> {
        let Some(b) = &self.binlog else {
            return Ok(None);
        };
        let gtid = log.gtid;
        let server = gtid.map_or(b.options().server_id, |g| g.server);
        let mut status = binlog::event::QueryStatus::default();
        if log.no_foreign_key_checks {
            status.flags2 |= binlog::event::option_flags::NO_FOREIGN_KEY_CHECKS;
        }
        let q = binlog::event::Query::with_status(db, sql, 0, &status, 0);
        let mut g = binlog::EventGroup::ddl_query(server, now(), q);
        g.set_gtid(gtid);
        Ok(Some(g))
    }

    pub(crate) fn first_pos(b: &binlog::Binlog) -> binlog::LogPos {
        let first = b
            .list_files()
            .first()
            .and_then(|(n, _)| b.file_no(n))
            .unwrap_or(0);
        binlog::LogPos::new(first, 0)
    }

    /// Calls `f` for every complete group after `from` (from the start when None), in order.
    pub fn for_each_group(
        &self,
        from: Option<LogPos>,
        f: &mut dyn FnMut(ReplayGroup) -> Result<()>,
    ) -> Result<()> {
        let Some(b) = &self.binlog else {
            return Ok(());
        };
        // A file PURGE removed held no group after the applied position (it purges only
        // files wholly applied, see `admin.rs`), so the position may name a file that is
        // gone: the first file there is holds everything after it.
        let start = from
            .map(LogPos::to_binlog)
            .map_or_else(|| Self::first_pos(b), |p| p.max(Self::first_pos(b)));
        for g in b.read_groups(start) {
            let g = g.map_err(berr)?;
            let end = LogPos::from_binlog(g.end);
            let mut maps: HashMap<u64, binlog::event::TableMap> = HashMap::new();
            let mut changes = Vec::new();
            let mut ddl = None;
            // A row-redo event holds the group's row changes; its QUERY is for replicas.
            let mut redo = false;
            // The XA transaction a group prepares or ends, and the redo record of a prepare.
            let mut xa = None;
            let mut xa_end = None;
            let mut record = binlog::RowRedo::new(0);
            for ev in g.events {
                match ev.event {
                    Event::Gtid(ge) if ge.flags2 & binlog::event::gtid_flags::PREPARED_XA != 0 => {
                        xa = ge.xa;
                    }
                    Event::Gtid(ge) if ge.flags2 & binlog::event::gtid_flags::COMPLETED_XA != 0 => {
                        xa_end = ge.xa;
                    }
                    Event::Query(q) if xa.is_some() || xa_end.is_some() => {
                        if xa_end.is_some() {
                            ddl = Some((q.db.clone(), String::from_utf8_lossy(&q.query).into()));
                        }
                    }
                    e @ (Event::TableMap(_) | Event::Rows(_)) if xa.is_some() => {
                        record.push_event(&e);
                        collect_rows(e, &mut maps, &mut changes, ev.pos)?;
                    }
                    // The rows of a foreign key cascade in an XA transaction's prepare.
                    Event::RowRedo(r) if xa.is_some() => {
                        for nested in r.events().map_err(berr)? {
                            record.push_event(&nested);
                            collect_rows(nested, &mut maps, &mut changes, ev.pos)?;
                        }
                    }
                    Event::Query(q) => {
                        let sql = String::from_utf8_lossy(&q.query).into_owned();
                        if !matches!(sql.as_str(), "BEGIN" | "COMMIT") {
                            ddl = Some((q.db.clone(), sql));
                        }
                    }
                    Event::RowRedo(r) => {
                        redo = true;
                        for nested in r.events().map_err(berr)? {
                            collect_rows(nested, &mut maps, &mut changes, ev.pos)?;
                        }
                    }
                    other => collect_rows(other, &mut maps, &mut changes, ev.pos)?,
                }
            }
            let rg = match (xa, xa_end, ddl) {
                (Some(xa), _, _) => {
                    let mut bytes = Vec::new();
                    Event::RowRedo(record).encode_body(&mut bytes);
                    ReplayGroup::XaPrepare {
                        xa,
                        changes,
                        record: bytes,
                        end,
                    }
                }
                (None, Some(xa), ddl) => ReplayGroup::XaEnd {
                    xa,
                    commit: ddl.is_some_and(|(_, sql)| sql.starts_with("XA COMMIT")),
                    end,
                },
                (None, None, Some((db, sql))) if changes.is_empty() && !redo => {
                    ReplayGroup::Ddl { db, sql, end }
                }
                (None, None, Some((db, sql))) if !redo => ReplayGroup::DdlRows {
                    db,
                    sql,
                    changes,
                    end,
                },
                _ => ReplayGroup::Rows { changes, end },
            };
            f(rg)?;
        }
        Ok(())
    }

    /// XIDs of the transactions in the binlog's last two files (file-mode recovery: a
    /// prepared transaction is always in the file that was active when it prepared).
    pub fn logged_xids(&self) -> Result<HashSet<u64>> {
        let mut out = HashSet::new();
        let Some(b) = &self.binlog else {
            return Ok(out);
        };
        let files = b.list_files();
        let from = files
            .len()
            .checked_sub(2)
            .and_then(|i| files.get(i))
            .and_then(|(n, _)| b.file_no(n))
            .map_or_else(|| Self::first_pos(b), |no| binlog::LogPos::new(no, 0));
        for ev in b.read_events(from) {
            match ev.map_err(berr)?.event {
                Event::Xid(x) => {
                    out.insert(x);
                }
                // xid 0: the rows of a foreign key cascade, inside a group.
                Event::RowRedo(r) if r.xid != 0 => {
                    out.insert(r.xid);
                }
                // XA PREPARE, XA COMMIT and XA ROLLBACK carry it in a QUERY's Q_XID.
                Event::Query(q) => {
                    out.extend(q.status_xid());
                }
                _ => {}
            }
        }
        Ok(out)
    }
}

/// Engine mode with `sync_binlog` != 1: RocksDB may have persisted (by a memtable flush)
/// changes whose binlog bytes a power loss then took. Their bytes are in RocksDB too, as
/// tail records (`keys::tail_key`, written in the first batch of each unsynced append):
/// when the applied position lies beyond the recovered end of the binlog, write them back
/// and sync. Returns whether the binlog changed (it is then reopened). Afterwards every
/// tail record is redundant and deleted.
fn restore_tail(b: &binlog::Binlog, fs: &dyn binlog::FileSystem, db: &DB) -> Result<bool> {
    let mut chunks: Vec<(u32, u64, Vec<u8>)> = Vec::new();
    let mut ro = rocksdb::ReadOptions::default();
    ro.set_iterate_lower_bound(vec![keys::TAIL_PREFIX]);
    ro.set_iterate_upper_bound(vec![keys::TAIL_PREFIX + 1]);
    for kv in db.iterator_opt(rocksdb::IteratorMode::Start, ro) {
        let (k, v) = kv?;
        if let Some((file, offset)) = keys::decode_tail_key(&k) {
            chunks.push((file, offset, v.to_vec()));
        }
    }
    if chunks.is_empty() {
        return Ok(false);
    }
    let applied = db
        .get(keys::APPLIED)?
        .map(|v| LogPos::decode(&v))
        .transpose()?;
    let end = LogPos::from_binlog(b.end_pos());
    let mut changed = false;
    if let Some(applied) = applied.filter(|a| *a > end) {
        if applied.file != end.file {
            return Err(EngineError::Corrupt(format!(
                "the tables are applied up to {applied:?} but the binlog ends in file {}",
                end.file
            )));
        }
        // The records from the recovered end on, contiguous, up to the applied position.
        let mut need = end.offset;
        let mut restore = Vec::new();
        for (_, offset, bytes) in chunks.iter().filter(|c| c.0 == applied.file) {
            let stop = offset + bytes.len() as u64;
            if stop <= need {
                continue;
            }
            if *offset > need {
                break;
            }
            restore.push((*offset, bytes.as_slice()));
            need = stop;
        }
        if need < applied.offset {
            return Err(EngineError::Corrupt(format!(
                "the tables are applied up to {applied:?}, the binlog ends at {end:?} and \
                 the saved tail reaches only offset {need}"
            )));
        }
        let path = b.dir().join(b.file_name(applied.file));
        let io = |e: std::io::Error| EngineError::Binlog(format!("restoring {path:?}: {e}"));
        let f = fs.open(&path, binlog::OpenMode::WRITE).map_err(io)?;
        for (offset, bytes) in &restore {
            f.write_at(bytes, *offset).map_err(io)?;
        }
        f.sync_data().map_err(io)?;
        onelog_types::note!(
            "binlog recovery: restored {} bytes of {} from the saved tail",
            need - end.offset,
            b.file_name(applied.file)
        );
        changed = true;
    } else {
        // The binlog holds everything applied; make sure what was read is on disk before
        // the records that could rebuild it go.
        b.sync_active_file().map_err(berr)?;
    }
    let mut batch = rocksdb::WriteBatch::default();
    for (file, offset, _) in &chunks {
        batch.delete(keys::tail_key(*file, *offset));
    }
    db.write_opt(batch, &crate::engine::write_opts(LogMode::Engine))?;
    Ok(changed)
}

/// Collects a TABLE_MAP (remembered for the rows events after it) or the row changes of a
/// rows event (at `pos` in the log).
pub(crate) fn collect_rows(
    ev: Event,
    maps: &mut HashMap<u64, binlog::event::TableMap>,
    changes: &mut Vec<ReplayChange>,
    pos: binlog::LogPos,
) -> Result<()> {
    match ev {
        Event::TableMap(tm) => {
            maps.insert(tm.table_id, tm);
        }
        Event::Rows(r) => {
            let tm = maps.get(&r.table_id).ok_or_else(|| {
                EngineError::Corrupt(format!("rows event at {pos} without its table map"))
            })?;
            for rc in binlog::rows::decode_rows(&r, &tm.column_specs()).map_err(berr)? {
                let (kind, before, after) = match rc {
                    binlog::RowChange::Insert(a) => (ChangeKind::Insert, None, Some(a)),
                    binlog::RowChange::Update { before, after } => {
                        (ChangeKind::Update, Some(before), Some(after))
                    }
                    binlog::RowChange::Delete(b) => (ChangeKind::Delete, Some(b), None),
                };
                changes.push(ReplayChange {
                    db: tm.db.clone(),
                    table: tm.table.clone(),
                    kind,
                    before,
                    after,
                });
            }
        }
        _ => {}
    }
    Ok(())
}

/// The table map of a table (db, name, column types, nullability, names).
fn table_map(t: &TableDef) -> binlog::TableDef {
    binlog::TableDef {
        db: t.db.clone(),
        name: t.name.clone(),
        columns: t
            .columns
            .iter()
            .map(|c| binlog::ColumnDef {
                name: c.name.clone(),
                ty: c.ty,
                nullable: c.nullable,
            })
            .collect(),
        primary_key: if t.hidden_pk {
            vec![]
        } else {
            t.primary().columns.iter().map(|&c| c as u32).collect()
        },
    }
}
