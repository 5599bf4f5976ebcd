//! Building one transaction's event group before it is placed in the log.
//!
//! An [`EventGroup`] holds the group's events, encoded but not yet placed: `log_pos` is 0
//! and the CRC is a placeholder. The GTID event is not part of it: the binlog assigns the
//! GTID when it appends the group (in commit order) and [`EventGroup::finalize_into`]
//! prepends the GTID event, sets every event's `log_pos` and computes every CRC in one pass.
//!
//! Format (transactional DML): `GTID(TRANSACTIONAL) { [ANNOTATE_ROWS] TABLE_MAP+ ROWS+ }*
//! XID`, the last rows event of each statement flagged STMT_END_F. The rows a foreign key
//! cascade changed sit between them in ignorable `ROW_REDO` events (xid 0), in the order
//! they happened: replicas make those changes themselves, onelog's recovery redoes them.
//! Format (DDL): `GTID(STANDALONE|DDL) QUERY`.
//! Format (CREATE TABLE ... SELECT): `GTID(DDL) QUERY { [ANNOTATE_ROWS] TABLE_MAP+ ROWS+ }*
//! XID`, or `GTID(DDL) QUERY QUERY("COMMIT")` without rows (as MariaDB 10.11 logs it).
//! Format (a statement replicas execute while onelog redoes its rows, e.g. CREATE USER):
//! `ROW_REDO GTID(STANDALONE|DDL) QUERY`, the private row-redo event (see [`crate::redo`])
//! *before* the GTID event: it holds the transaction's TABLE_MAP and rows events.
//! Formats of XA transactions: see [`crate::xa`].

use std::collections::HashMap;

use onelog_types::Value;

use crate::error::{BinlogError, Result};
use crate::event::{
    event_type, gtid_flags, header_flags, rows_flags, seal_event, write_event_unsealed, Event,
    GtidEvent, Query, RowsEvent, RowsKind, TableMap, CHECKSUM_LEN, HEADER_LEN,
};
use crate::gtid::Gtid;
use crate::redo::RowRedo;
use crate::rows::{pack_row, ColumnSpec, RowMetadata, TableDef};
use crate::xa::{XaPrepare, XaXid};

/// A QUERY event of an XA statement, with the engine's transaction id in Q_XID.
fn xa_query(db: &str, sql: &str, thread_id: u32, xid: u64) -> Query {
    let status = crate::event::QueryStatus {
        xid: Some(xid),
        ..Default::default()
    };
    Query::with_status(db, sql, thread_id, &status, 0)
}

/// Adds an event body of the group to `redo`; a nested row-redo event (rows a cascade
/// changed) adds the events it holds, in place.
fn push_flat(redo: &mut RowRedo, ty: u8, body: &[u8]) -> Result<()> {
    if ty != event_type::ROW_REDO {
        redo.push(ty, body);
        return Ok(());
    }
    let nested = RowRedo::decode_body(body)
        .ok_or_else(|| BinlogError::decode("a row redo event onelog cannot read"))?;
    for ev in nested.events()? {
        redo.push_event(&ev);
    }
    Ok(())
}

/// MariaDB's default `binlog_row_event_max_size`: rows events are cut at about this size
/// (each holds whole rows; a single larger row gets an event of its own).
pub const DEFAULT_ROWS_EVENT_MAX_SIZE: usize = 8192;

/// What closes a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupKind {
    /// Row events of a transaction, ended by XID.
    Transaction,
    /// A standalone DDL statement: one QUERY event.
    Ddl,
    /// A standalone statement replicas execute (QUERY), preceded by onelog's row redo of
    /// its changes.
    Statement,
    /// Row events of an XA transaction, ended by `XA END` and XA_PREPARE (see [`crate::xa`]).
    XaPrepare,
    /// `XA COMMIT` or `XA ROLLBACK` of a prepared XA transaction: one QUERY.
    XaComplete,
    /// CREATE TABLE ... SELECT: the CREATE TABLE as a QUERY, then the rows, in one group.
    CreateSelect,
}

struct PendingRows {
    kind: RowsKind,
    table_id: u64,
    width: u32,
    data: Vec<u8>,
}

/// One transaction's events, ready to be appended to the binlog.
pub struct EventGroup {
    kind: GroupKind,
    server_id: u32,
    timestamp: u32,
    explicit_gtid: Option<Gtid>,
    /// The XA transaction of an `XaPrepare` or `XaComplete` group.
    xa: Option<XaXid>,
    /// Encoded events before the GTID event (the row redo of a `Statement` group): log_pos
    /// 0, CRC placeholder.
    lead: Vec<u8>,
    /// Encoded events after the GTID event: log_pos 0, CRC placeholder.
    buf: Vec<u8>,
    closed: bool,
    rows_event_max_size: usize,
    row_metadata: RowMetadata,
    row_count: u64,
    // The statement being built. Its events are written at `end_statement`, so that every
    // TABLE_MAP precedes every rows event of the statement, as MariaDB writes them.
    stmt_annotate: Option<Vec<u8>>,
    stmt_maps: Vec<TableMap>,
    stmt_specs: HashMap<u64, Vec<ColumnSpec>>,
    stmt_rows: Vec<PendingRows>,
    /// Rows flags of the rows events (see [`EventGroup::set_rows_flags`]).
    rows_flags: u16,
    /// Rows logged now go into a nested row-redo event ([`EventGroup::begin_redo`]).
    in_redo: bool,
}

impl EventGroup {
    /// An empty transactional group; add statements, then [`commit`](Self::commit).
    pub fn transaction(server_id: u32, timestamp: u32) -> EventGroup {
        EventGroup {
            kind: GroupKind::Transaction,
            server_id,
            timestamp,
            explicit_gtid: None,
            xa: None,
            lead: Vec::new(),
            buf: Vec::new(),
            closed: false,
            rows_event_max_size: DEFAULT_ROWS_EVENT_MAX_SIZE,
            row_metadata: RowMetadata::default(),
            row_count: 0,
            stmt_annotate: None,
            stmt_maps: Vec::new(),
            stmt_specs: HashMap::new(),
            stmt_rows: Vec::new(),
            rows_flags: 0,
            in_redo: false,
        }
    }

    /// A standalone DDL group: `GTID(STANDALONE|DDL) QUERY`. `db` is the session's current
    /// database ("" for none).
    pub fn ddl(server_id: u32, timestamp: u32, thread_id: u32, db: &str, sql: &str) -> EventGroup {
        EventGroup::ddl_query(server_id, timestamp, Query::new(db, sql, thread_id))
    }

    /// A standalone DDL group of this QUERY event (its status variables as the session
    /// that ran it had them).
    pub fn ddl_query(server_id: u32, timestamp: u32, query: Query) -> EventGroup {
        let mut g = EventGroup::transaction(server_id, timestamp);
        g.kind = GroupKind::Ddl;
        write_event_unsealed(&mut g.buf, timestamp, server_id, 0, &Event::Query(query));
        g.closed = true;
        g
    }

    /// The group of CREATE TABLE ... SELECT: `sql` (the CREATE TABLE statement) as its
    /// first event; add the rows as statements, then [`commit`](Self::commit), which ends
    /// the group with XID, or with a `COMMIT` QUERY when no row was logged.
    pub fn create_select(
        server_id: u32,
        timestamp: u32,
        thread_id: u32,
        db: &str,
        sql: &str,
    ) -> EventGroup {
        let mut g = EventGroup::transaction(server_id, timestamp);
        g.kind = GroupKind::CreateSelect;
        let q = Event::Query(Query::new(db, sql, thread_id));
        write_event_unsealed(&mut g.buf, timestamp, server_id, 0, &q);
        g
    }

    /// Logs the group under this GTID instead of the next one of the binlog's own domain
    /// (for replicated transactions). The binlog's GTID state follows it.
    pub fn set_gtid(&mut self, gtid: Option<Gtid>) {
        self.explicit_gtid = gtid;
    }

    pub fn explicit_gtid(&self) -> Option<Gtid> {
        self.explicit_gtid
    }

    pub fn set_rows_event_max_size(&mut self, n: usize) {
        self.rows_event_max_size = n.max(256);
    }

    /// The optional metadata of the TABLE_MAP events mapped from now on
    /// (`binlog_row_metadata`; FULL by default).
    pub fn set_row_metadata(&mut self, meta: RowMetadata) {
        self.row_metadata = meta;
    }

    pub fn kind(&self) -> GroupKind {
        self.kind
    }

    pub fn server_id(&self) -> u32 {
        self.server_id
    }

    pub fn timestamp(&self) -> u32 {
        self.timestamp
    }

    /// Whether the group is complete (committed, or DDL) and may be appended.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Rows logged so far.
    pub fn row_count(&self) -> u64 {
        self.row_count
    }

    /// Encoded size without the GTID event.
    pub fn body_len(&self) -> usize {
        self.lead.len() + self.buf.len()
    }

    fn check_open(&self) -> Result<()> {
        if self.closed {
            return Err(BinlogError::InvalidArgument(
                "event group is already closed".into(),
            ));
        }
        Ok(())
    }

    /// Reserves room for about `bytes` more bytes of events: a large transaction then
    /// encodes into one allocation instead of doubling its buffer (each doubling copies
    /// everything and touches fresh memory, which dominated a 100 MB commit's encoding).
    pub fn reserve(&mut self, bytes: usize) {
        self.buf.reserve(bytes);
    }

    /// Logs the statement text as ANNOTATE_ROWS before the statement's row events.
    pub fn annotate(&mut self, sql: &str) -> Result<()> {
        self.check_open()?;
        self.stmt_annotate = Some(sql.as_bytes().to_vec());
        Ok(())
    }

    /// Whether `table_id` is mapped in the current statement (then [`EventGroup::map_table`]
    /// is a no-op, and its definition need not be built).
    pub fn is_mapped(&self, table_id: u64) -> bool {
        self.stmt_specs.contains_key(&table_id)
    }

    /// Maps a table for the current statement (a no-op if already mapped in it).
    /// `table_id` must be below 2^48 and stable for the table while the statement runs.
    pub fn map_table(&mut self, table_id: u64, def: &TableDef) -> Result<()> {
        self.check_open()?;
        if table_id >= 1 << 48 {
            return Err(BinlogError::InvalidArgument(format!(
                "table id {table_id} does not fit 48 bits"
            )));
        }
        if self.stmt_specs.contains_key(&table_id) {
            return Ok(());
        }
        self.stmt_specs.insert(table_id, def.specs());
        self.stmt_maps
            .push(def.table_map(table_id, self.row_metadata));
        Ok(())
    }

    fn add_row(&mut self, kind: RowsKind, table_id: u64, images: &[&[Value]]) -> Result<()> {
        self.check_open()?;
        let specs = self.stmt_specs.get(&table_id).ok_or_else(|| {
            BinlogError::InvalidArgument(format!("table {table_id} not mapped in this statement"))
        })?;
        let width = specs.len() as u32;
        let max = self.rows_event_max_size;
        // The row is packed straight into the statement's last rows event when it is of
        // the same kind and table, and moved to a new one if that event would outgrow
        // `rows_event_max_size`.
        let same =
            matches!(self.stmt_rows.last(), Some(p) if p.kind == kind && p.table_id == table_id);
        if !same {
            self.stmt_rows.push(PendingRows {
                kind,
                table_id,
                width,
                data: Vec::new(),
            });
        }
        let p = self.stmt_rows.last_mut().expect("a rows event");
        let start = p.data.len();
        let packed = images
            .iter()
            .try_for_each(|img| pack_row(&mut p.data, specs, img));
        if let Err(e) = packed {
            p.data.truncate(start);
            if p.data.is_empty() {
                self.stmt_rows.pop();
            }
            return Err(e);
        }
        if start > 0 && p.data.len() > max {
            let data = p.data.split_off(start);
            self.stmt_rows.push(PendingRows {
                kind,
                table_id,
                width,
                data,
            });
        }
        self.row_count += 1;
        Ok(())
    }

    /// Logs an inserted row (full image, every column).
    pub fn insert(&mut self, table_id: u64, row: &[Value]) -> Result<()> {
        self.add_row(RowsKind::Write, table_id, &[row])
    }

    /// Logs an updated row: full before and after images.
    pub fn update(&mut self, table_id: u64, before: &[Value], after: &[Value]) -> Result<()> {
        self.add_row(RowsKind::Update, table_id, &[before, after])
    }

    /// Logs a deleted row (full image).
    pub fn delete(&mut self, table_id: u64, row: &[Value]) -> Result<()> {
        self.add_row(RowsKind::Delete, table_id, &[row])
    }

    /// Ends the current statement: writes its ANNOTATE_ROWS, TABLE_MAPs and rows events, the
    /// last one flagged STMT_END_F. A statement that changed no rows writes nothing.
    /// Inside a nested redo ([`EventGroup::begin_redo`]) it ends the redo first.
    pub fn end_statement(&mut self) -> Result<()> {
        self.check_open()?;
        if self.in_redo {
            self.end_redo()?;
        }
        let (ts, sid) = (self.timestamp, self.server_id);
        for ev in self.take_statement() {
            write_event_unsealed(&mut self.buf, ts, sid, 0, &ev);
        }
        Ok(())
    }

    /// The rows flags of the rows events written from now on (besides STMT_END_F, which
    /// marks a statement's last one): NO_FOREIGN_KEY_CHECKS_F for a statement run with
    /// `foreign_key_checks=0`, as MariaDB flags it for its replicas.
    pub fn set_rows_flags(&mut self, flags: u16) {
        self.rows_flags = flags & !rows_flags::STMT_END;
    }

    /// The current statement's events (its ANNOTATE_ROWS, TABLE_MAPs of the tables it
    /// changed, rows events, the last flagged STMT_END_F), taken from it: empty when it
    /// changed no rows (the annotation is then kept).
    fn take_statement(&mut self) -> Vec<Event> {
        let maps = std::mem::take(&mut self.stmt_maps);
        self.stmt_specs.clear();
        let rows = std::mem::take(&mut self.stmt_rows);
        if rows.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(maps.len() + rows.len() + 1);
        if let Some(q) = self.stmt_annotate.take() {
            out.push(Event::AnnotateRows(q));
        }
        for tm in maps {
            if rows.iter().any(|r| r.table_id == tm.table_id) {
                out.push(Event::TableMap(tm));
            }
        }
        let n = rows.len();
        for (i, p) in rows.into_iter().enumerate() {
            let mut bitmap = vec![0xffu8; (p.width as usize).div_ceil(8)];
            if p.width % 8 != 0 {
                *bitmap.last_mut().unwrap() = (1u8 << (p.width % 8)) - 1;
            }
            let end = if i + 1 == n { rows_flags::STMT_END } else { 0 };
            out.push(Event::Rows(RowsEvent {
                kind: p.kind,
                table_id: p.table_id,
                flags: self.rows_flags | end,
                width: p.width,
                columns_after: (p.kind == RowsKind::Update).then(|| bitmap.clone()),
                columns_present: bitmap,
                rows: p.data,
            }));
        }
        out
    }

    /// Starts a nested redo inside the current statement: the rows logged until
    /// [`EventGroup::end_redo`] go into one row-redo event (see [`crate::redo`]) placed
    /// where they happened, between the statement's rows events. They are changes a
    /// replica makes itself (the rows a foreign key cascade changes: InnoDB makes them on a
    /// MariaDB replica as it applies the parent row's change), which onelog still redoes
    /// after a crash. The statement's rows events so far are written first, the last one
    /// flagged STMT_END_F, so the row-redo event sits between statements as a replica sees
    /// them; the statement's later rows events map their tables again.
    pub fn begin_redo(&mut self) -> Result<()> {
        self.check_open()?;
        if self.in_redo {
            return Ok(());
        }
        // An annotation not written yet (no rows so far) stays for the statement's rows.
        self.end_statement()?;
        self.in_redo = true;
        Ok(())
    }

    /// Ends a nested redo: writes the rows logged since [`EventGroup::begin_redo`] as one
    /// ignorable row-redo event (nothing when there were none).
    pub fn end_redo(&mut self) -> Result<()> {
        self.check_open()?;
        if !self.in_redo {
            return Ok(());
        }
        self.in_redo = false;
        let annotate = self.stmt_annotate.take();
        let events = self.take_statement();
        self.stmt_annotate = annotate;
        if events.is_empty() {
            return Ok(());
        }
        let mut redo = RowRedo::new(0);
        for ev in &events {
            redo.push_event(ev);
        }
        let (ts, sid) = (self.timestamp, self.server_id);
        let ev = Event::RowRedo(redo);
        write_event_unsealed(&mut self.buf, ts, sid, header_flags::IGNORABLE, &ev);
        Ok(())
    }

    /// Ends the transaction with an XID event (ending the open statement first).
    pub fn commit(&mut self, xid: u64) -> Result<()> {
        self.end_statement()?;
        let (ts, sid) = (self.timestamp, self.server_id);
        if self.kind == GroupKind::CreateSelect && self.row_count == 0 {
            // MariaDB ends a CREATE ... SELECT that inserted nothing with a COMMIT QUERY
            // carrying the transaction's id (Q_XID).
            let status = crate::event::QueryStatus {
                xid: Some(xid),
                ..Default::default()
            };
            let q = Query::with_status("", "COMMIT", 0, &status, 0);
            write_event_unsealed(&mut self.buf, ts, sid, 0, &Event::Query(q));
            self.closed = true;
            return Ok(());
        }
        write_event_unsealed(&mut self.buf, ts, sid, 0, &Event::Xid(xid));
        self.closed = true;
        Ok(())
    }

    /// Ends the transaction as one statement that replicas execute: its row changes go
    /// into a row-redo event placed before the GTID event, then comes `query` (MariaDB logs
    /// account statements so, with the GTID flags of DDL). The statements' ANNOTATE_ROWS
    /// events are left out.
    pub fn commit_statement(&mut self, xid: u64, query: Query) -> Result<()> {
        self.end_statement()?;
        let mut redo = RowRedo::new(xid);
        let mut i = 0;
        while i < self.buf.len() {
            let len = u32::from_le_bytes(self.buf[i + 9..i + 13].try_into().unwrap()) as usize;
            let ty = self.buf[i + 4];
            if ty != event_type::ANNOTATE_ROWS {
                push_flat(
                    &mut redo,
                    ty,
                    &self.buf[i + HEADER_LEN..i + len - CHECKSUM_LEN],
                )?;
            }
            i += len;
        }
        let (ts, sid) = (self.timestamp, self.server_id);
        self.lead.clear();
        let redo = Event::RowRedo(redo);
        write_event_unsealed(&mut self.lead, ts, sid, header_flags::IGNORABLE, &redo);
        self.buf.clear();
        write_event_unsealed(&mut self.buf, ts, sid, 0, &Event::Query(query));
        self.kind = GroupKind::Statement;
        self.closed = true;
        Ok(())
    }

    /// The group's TABLE_MAP and rows events (its statements must be ended) as a row redo:
    /// what a prepared XA transaction keeps to be redone after a restart.
    pub fn rows_redo(&self, xid: u64) -> Result<RowRedo> {
        let mut redo = RowRedo::new(xid);
        let mut i = 0;
        while i < self.buf.len() {
            let len = u32::from_le_bytes(self.buf[i + 9..i + 13].try_into().unwrap()) as usize;
            let ty = self.buf[i + 4];
            if matches!(
                ty,
                event_type::TABLE_MAP
                    | event_type::WRITE_ROWS_V1
                    | event_type::UPDATE_ROWS_V1
                    | event_type::DELETE_ROWS_V1
                    | event_type::ROW_REDO
            ) {
                push_flat(
                    &mut redo,
                    ty,
                    &self.buf[i + HEADER_LEN..i + len - CHECKSUM_LEN],
                )?;
            }
            i += len;
        }
        Ok(redo)
    }

    /// Ends an XA transaction's prepare: `QUERY "XA END <xid>"` and XA_PREPARE (ending the
    /// open statement first). `xid` is the engine's transaction id, kept in the QUERY's
    /// Q_XID (file-mode recovery matches prepared transactions against it).
    pub fn xa_prepare(&mut self, xa: XaXid, xid: u64, db: &str, thread_id: u32) -> Result<()> {
        self.end_statement()?;
        let (ts, sid) = (self.timestamp, self.server_id);
        let q = xa_query(db, &format!("XA END {}", xa.to_sql()), thread_id, xid);
        write_event_unsealed(&mut self.buf, ts, sid, 0, &Event::Query(q));
        let prepare = Event::XaPrepare(XaPrepare {
            one_phase: false,
            xid: xa,
        });
        write_event_unsealed(&mut self.buf, ts, sid, 0, &prepare);
        self.kind = GroupKind::XaPrepare;
        self.xa = Some(xa);
        self.closed = true;
        Ok(())
    }

    /// The group of `XA COMMIT <xid>` (`commit`) or `XA ROLLBACK <xid>` of a prepared XA
    /// transaction; `xid` as in [`xa_prepare`](Self::xa_prepare).
    pub fn xa_complete(
        server_id: u32,
        timestamp: u32,
        thread_id: u32,
        db: &str,
        xa: XaXid,
        commit: bool,
        xid: u64,
    ) -> EventGroup {
        let mut g = EventGroup::transaction(server_id, timestamp);
        let verb = if commit { "XA COMMIT" } else { "XA ROLLBACK" };
        let q = xa_query(db, &format!("{verb} {}", xa.to_sql()), thread_id, xid);
        write_event_unsealed(&mut g.buf, timestamp, server_id, 0, &Event::Query(q));
        g.kind = GroupKind::XaComplete;
        g.xa = Some(xa);
        g.closed = true;
        g
    }

    fn gtid_event(&self, gtid: Gtid, commit_id: Option<u64>) -> Event {
        let flags2 = match self.kind {
            GroupKind::Transaction => gtid_flags::TRANSACTIONAL | gtid_flags::ALLOW_PARALLEL,
            // MariaDB 10.11 flags account statements (CREATE USER, GRANT, ...) like DDL.
            GroupKind::Ddl | GroupKind::Statement => {
                gtid_flags::STANDALONE | gtid_flags::ALLOW_PARALLEL | gtid_flags::DDL
            }
            GroupKind::XaPrepare => {
                gtid_flags::TRANSACTIONAL | gtid_flags::ALLOW_PARALLEL | gtid_flags::PREPARED_XA
            }
            // MariaDB 10.11: neither standalone nor transactional.
            GroupKind::CreateSelect => gtid_flags::ALLOW_PARALLEL | gtid_flags::DDL,
            GroupKind::XaComplete => {
                gtid_flags::STANDALONE
                    | gtid_flags::TRANSACTIONAL
                    | gtid_flags::ALLOW_PARALLEL
                    | gtid_flags::COMPLETED_XA
            }
        };
        Event::Gtid(GtidEvent {
            seq: gtid.seq,
            domain: gtid.domain,
            flags2,
            commit_id,
            xa: self.xa,
        })
    }

    /// Bytes the group takes in the log, GTID event included.
    pub fn finalized_len(&self, with_commit_id: bool) -> usize {
        // GTID body: seq, domain, flags (13 bytes), a commit id (8), the XA XID, at least
        // 19 bytes; plus header and CRC.
        let body = 13 + if with_commit_id { 8 } else { 0 } + self.xa.map_or(0, |x| x.gtid_len());
        let gtid_len = HEADER_LEN + body.max(19) + 4;
        self.lead.len() + gtid_len + self.buf.len()
    }

    /// [`finalize_into`](Self::finalize_into) without copying the body: appends only the
    /// events up to the GTID event to `out` and seals the group's own events in place for a
    /// write straight from [`body`](Self::body). Sealing again (a retried append) just
    /// overwrites.
    pub(crate) fn finalize_in_place(
        &mut self,
        gtid: Gtid,
        commit_id: Option<u64>,
        start: u64,
        out: &mut Vec<u8>,
    ) -> Result<u64> {
        assert!(self.closed, "finalizing an open event group");
        let end = start + self.finalized_len(commit_id.is_some()) as u64;
        if end > u32::MAX as u64 {
            return Err(BinlogError::InvalidArgument(format!(
                "event group would end at offset {end}, beyond 4 GiB"
            )));
        }
        let pos = self.put_gtid_event(gtid, commit_id, start, out);
        let pos = seal_events(&mut self.buf, pos);
        debug_assert_eq!(pos, end);
        Ok(end)
    }

    /// Appends the sealed events up to the GTID event (the row redo of a `Statement`
    /// group, then the GTID event) of the group placed at file offset `start`; returns the
    /// offset after them.
    fn put_gtid_event(
        &self,
        gtid: Gtid,
        commit_id: Option<u64>,
        start: u64,
        out: &mut Vec<u8>,
    ) -> u64 {
        let lead = out.len();
        out.extend_from_slice(&self.lead);
        let start = seal_events(&mut out[lead..], start);
        let first = out.len();
        let n = write_event_unsealed(
            out,
            self.timestamp,
            gtid.server,
            0,
            &self.gtid_event(gtid, commit_id),
        );
        let pos = start + n as u64;
        seal_event(&mut out[first..], pos as u32);
        pos
    }

    /// The encoded events after the GTID event (sealed by
    /// [`finalize_in_place`](Self::finalize_in_place)).
    pub(crate) fn body(&self) -> &[u8] {
        &self.buf
    }

    /// Appends the placed group to `out`: the row redo of a `Statement` group, the GTID
    /// event, then every event with its `log_pos` (end offset in the file, the group
    /// starting at file offset `start`) and CRC32. Returns the file offset just past the
    /// group.
    ///
    /// Ordering: log_pos values must be set before the CRC is computed (the CRC covers the
    /// header), which `seal_event` does per event.
    pub(crate) fn finalize_into(
        &self,
        gtid: Gtid,
        commit_id: Option<u64>,
        start: u64,
        out: &mut Vec<u8>,
    ) -> Result<u64> {
        assert!(self.closed, "finalizing an open event group");
        let end = start + self.finalized_len(commit_id.is_some()) as u64;
        if end > u32::MAX as u64 {
            return Err(BinlogError::InvalidArgument(format!(
                "event group would end at offset {end}, beyond 4 GiB"
            )));
        }
        let pos = self.put_gtid_event(gtid, commit_id, start, out);
        let body = out.len();
        out.extend_from_slice(&self.buf);
        let pos = seal_events(&mut out[body..], pos);
        debug_assert_eq!(pos, end);
        Ok(end)
    }
}

/// Seals consecutive events placed right after file offset `pos` (each one's `log_pos`
/// and CRC32); returns the offset after the last.
fn seal_events(buf: &mut [u8], mut pos: u64) -> u64 {
    let mut i = 0;
    while i < buf.len() {
        let len = u32::from_le_bytes(buf[i + 9..i + 13].try_into().unwrap()) as usize;
        pos += len as u64;
        seal_event(&mut buf[i..i + len], pos as u32);
        i += len;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{decode_event, event_type};
    use crate::rows::{decode_rows, ColumnDef, RowChange};
    use onelog_types::ColumnType;

    fn table() -> TableDef {
        TableDef {
            db: "d".into(),
            name: "t".into(),
            columns: vec![
                ColumnDef {
                    name: "id".into(),
                    ty: ColumnType::Int {
                        bytes: 4,
                        unsigned: false,
                    },
                    nullable: false,
                },
                ColumnDef {
                    name: "v".into(),
                    ty: ColumnType::Blob {
                        len_bytes: 3,
                        binary: true,
                        collation: onelog_types::Collation::Binary,
                    },
                    nullable: true,
                },
            ],
            primary_key: vec![0],
        }
    }

    fn events(bytes: &[u8]) -> Vec<(crate::event::EventHeader, Event)> {
        let mut v = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            let len = u32::from_le_bytes(bytes[i + 9..i + 13].try_into().unwrap()) as usize;
            v.push(decode_event(&bytes[i..i + len], true).unwrap());
            i += len;
        }
        v
    }

    #[test]
    fn transaction_layout_and_positions() {
        let t = table();
        let mut g = EventGroup::transaction(1, 100);
        g.annotate("insert into t values (1,'a'),(2,'b')").unwrap();
        g.map_table(7, &t).unwrap();
        g.insert(7, &[Value::Int(1), Value::str("a")]).unwrap();
        g.insert(7, &[Value::Int(2), Value::Null]).unwrap();
        g.end_statement().unwrap();
        g.map_table(7, &t).unwrap();
        g.update(
            7,
            &[Value::Int(1), Value::str("a")],
            &[Value::Int(1), Value::str("z")],
        )
        .unwrap();
        g.delete(7, &[Value::Int(2), Value::Null]).unwrap();
        assert!(!g.is_closed());
        g.commit(55).unwrap();
        assert!(g.insert(7, &[Value::Int(3), Value::Null]).is_err());
        let mut out = vec![0u8; 4];
        let end = g
            .finalize_into(Gtid::new(0, 1, 9), None, 4, &mut out)
            .unwrap();
        assert_eq!(end as usize, out.len());
        let evs = events(&out[4..]);
        let types: Vec<u8> = evs.iter().map(|(h, _)| h.type_code).collect();
        use event_type::*;
        assert_eq!(
            types,
            [
                GTID,
                ANNOTATE_ROWS,
                TABLE_MAP,
                WRITE_ROWS_V1,
                TABLE_MAP,
                UPDATE_ROWS_V1,
                DELETE_ROWS_V1,
                XID
            ]
        );
        let mut pos = 4;
        for (h, ev) in &evs {
            pos += h.event_len;
            assert_eq!(h.log_pos, pos);
            if let Event::Rows(r) = ev {
                let stmt_end = r.flags & rows_flags::STMT_END != 0;
                assert_eq!(
                    stmt_end,
                    r.kind != RowsKind::Update,
                    "STMT_END_F on last rows event only"
                );
                let rows = decode_rows(r, &t.specs()).unwrap();
                if r.kind == RowsKind::Write {
                    assert_eq!(rows[1], RowChange::Insert(vec![Value::Int(2), Value::Null]));
                }
            }
        }
        let Event::Gtid(ge) = &evs[0].1 else { panic!() };
        assert_eq!(
            ge.flags2,
            gtid_flags::TRANSACTIONAL | gtid_flags::ALLOW_PARALLEL
        );
        assert_eq!(evs.last().unwrap().1, Event::Xid(55));
    }

    #[test]
    fn ddl_layout() {
        let g = EventGroup::ddl(3, 1, 9, "d", "CREATE TABLE t (a INT)");
        let mut out = Vec::new();
        g.finalize_into(Gtid::new(2, 3, 1), Some(1), 0, &mut out)
            .unwrap();
        let evs = events(&out);
        assert_eq!(evs.len(), 2);
        let Event::Gtid(ge) = &evs[0].1 else { panic!() };
        assert!(ge.is_standalone());
        assert_eq!(ge.commit_id, Some(1));
        assert_eq!(evs[0].0.server_id, 3);
        let Event::Query(q) = &evs[1].1 else { panic!() };
        assert_eq!(q.query, b"CREATE TABLE t (a INT)");
        assert_eq!(out.len(), g.finalized_len(true));
    }

    #[test]
    fn statement_layout_puts_the_row_redo_before_the_gtid() {
        let t = table();
        let mut g = EventGroup::transaction(4, 77);
        g.annotate("INSERT INTO mysql.onelog_user ...").unwrap();
        g.map_table(7, &t).unwrap();
        g.insert(7, &[Value::Int(1), Value::str("a")]).unwrap();
        g.end_statement().unwrap();
        g.map_table(7, &t).unwrap();
        g.delete(7, &[Value::Int(2), Value::Null]).unwrap();
        let status = crate::event::QueryStatus {
            invoker: Some(("root".into(), "localhost".into())),
            ..Default::default()
        };
        let q = Query::with_status("d", "GRANT SELECT ON d.* TO u", 12, &status, 0);
        g.commit_statement(99, q.clone()).unwrap();
        assert!(g.is_closed());
        assert_eq!(g.kind(), GroupKind::Statement);
        for cid in [None, Some(5)] {
            let mut out = vec![0u8; 100];
            let end = g
                .finalize_into(Gtid::new(0, 4, 8), cid, 100, &mut out)
                .unwrap();
            assert_eq!(end as usize, out.len());
            assert_eq!(out.len() - 100, g.finalized_len(cid.is_some()));
            let evs = events(&out[100..]);
            let types: Vec<u8> = evs.iter().map(|(h, _)| h.type_code).collect();
            use event_type::*;
            assert_eq!(types, [ROW_REDO, GTID, QUERY]);
            let mut pos = 100;
            for (h, _) in &evs {
                pos += h.event_len;
                assert_eq!(h.log_pos, pos);
                assert_eq!(h.server_id, 4);
            }
            assert_eq!(evs[0].0.flags, header_flags::IGNORABLE);
            let Event::RowRedo(r) = &evs[0].1 else {
                panic!()
            };
            assert_eq!(r.xid, 99);
            let nested = r.events().unwrap();
            let kinds: Vec<u8> = nested.iter().map(Event::type_code).collect();
            assert_eq!(kinds, [TABLE_MAP, WRITE_ROWS_V1, TABLE_MAP, DELETE_ROWS_V1]);
            let Event::Rows(del) = &nested[3] else {
                panic!()
            };
            assert_eq!(
                decode_rows(del, &t.specs()).unwrap(),
                vec![RowChange::Delete(vec![Value::Int(2), Value::Null])]
            );
            let Event::Gtid(ge) = &evs[1].1 else { panic!() };
            assert_eq!(
                ge.flags2 & !gtid_flags::GROUP_COMMIT_ID,
                gtid_flags::STANDALONE | gtid_flags::ALLOW_PARALLEL | gtid_flags::DDL
            );
            assert_eq!(evs[2].1, Event::Query(q.clone()));
        }
        // In place: the redo and GTID events go to `out`, the QUERY stays in the body.
        let mut out = Vec::new();
        let end = g
            .finalize_in_place(Gtid::new(0, 4, 8), None, 4, &mut out)
            .unwrap();
        let mut whole = vec![0u8; 4];
        g.finalize_into(Gtid::new(0, 4, 8), None, 4, &mut whole)
            .unwrap();
        out.extend_from_slice(g.body());
        assert_eq!(out, whole[4..]);
        assert_eq!(end as usize, whole.len());
    }

    #[test]
    fn cascaded_rows_sit_in_row_redo_events_between_statements() {
        use crate::file_log::{Feed, GroupScanner};
        use event_type::*;
        let t = table();
        let mut g = EventGroup::transaction(3, 9);
        g.set_rows_flags(rows_flags::NO_FOREIGN_KEY_CHECKS);
        g.annotate("DELETE FROM p").unwrap();
        g.map_table(7, &t).unwrap();
        g.delete(7, &[Value::Int(1), Value::str("a")]).unwrap();
        // The cascade: a child row, then a grandchild row (the redo maps its own tables).
        g.begin_redo().unwrap();
        g.map_table(8, &t).unwrap();
        g.delete(8, &[Value::Int(10), Value::str("b")]).unwrap();
        g.map_table(9, &t).unwrap();
        g.delete(9, &[Value::Int(20), Value::Null]).unwrap();
        g.end_redo().unwrap();
        // The statement goes on: its table is mapped again.
        assert!(!g.is_mapped(7));
        g.map_table(7, &t).unwrap();
        g.delete(7, &[Value::Int(2), Value::str("c")]).unwrap();
        // A redo still open when the transaction ends is written first.
        g.begin_redo().unwrap();
        g.map_table(8, &t).unwrap();
        g.delete(8, &[Value::Int(11), Value::Null]).unwrap();
        g.commit(5).unwrap();
        let mut out = Vec::new();
        g.finalize_into(Gtid::new(0, 3, 1), None, 4, &mut out)
            .unwrap();
        let evs = events(&out);
        let types: Vec<u8> = evs.iter().map(|(h, _)| h.type_code).collect();
        assert_eq!(
            types,
            [
                GTID,
                ANNOTATE_ROWS,
                TABLE_MAP,
                DELETE_ROWS_V1,
                ROW_REDO,
                TABLE_MAP,
                DELETE_ROWS_V1,
                ROW_REDO,
                XID
            ]
        );
        for (h, ev) in &evs {
            match ev {
                Event::RowRedo(r) => {
                    assert_eq!(h.flags, header_flags::IGNORABLE);
                    assert_eq!(r.xid, 0);
                }
                // Every statement's rows events end it and carry its flags.
                Event::Rows(r) => assert_eq!(
                    r.flags,
                    rows_flags::STMT_END | rows_flags::NO_FOREIGN_KEY_CHECKS
                ),
                _ => assert_eq!(h.flags, 0),
            }
        }
        let Event::RowRedo(first) = &evs[4].1 else {
            panic!()
        };
        let nested = first.events().unwrap();
        let kinds: Vec<u8> = nested.iter().map(Event::type_code).collect();
        assert_eq!(
            kinds,
            [TABLE_MAP, TABLE_MAP, DELETE_ROWS_V1, DELETE_ROWS_V1]
        );
        let Event::Rows(grandchild) = &nested[3] else {
            panic!()
        };
        assert_eq!(grandchild.table_id, 9);
        // A group reader takes the row-redo events as part of the transaction.
        let mut scan = GroupScanner::default();
        let fed: Vec<Feed> = evs.iter().map(|(h, e)| scan.feed(h, e)).collect();
        assert!(matches!(fed.last(), Some(Feed::Complete(_))), "{fed:?}");
        assert!(fed[..fed.len() - 1]
            .iter()
            .all(|f| matches!(f, Feed::Inside)));
        // The flattened redo (a prepared XA transaction's record) has every row in order.
        let flat = g.rows_redo(0).unwrap().events().unwrap();
        let tables: Vec<u64> = flat
            .iter()
            .filter_map(|e| match e {
                Event::Rows(r) => Some(r.table_id),
                _ => None,
            })
            .collect();
        assert_eq!(tables, [7, 8, 9, 7, 8]);
    }

    #[test]
    fn big_statements_split_into_whole_row_events() {
        let t = table();
        let mut g = EventGroup::transaction(1, 1);
        g.map_table(1, &t).unwrap();
        for i in 0..100 {
            g.insert(1, &[Value::Int(i), Value::Bytes(vec![b'x'; 500])])
                .unwrap();
        }
        g.insert(1, &[Value::Int(100), Value::Bytes(vec![b'y'; 70_000])])
            .unwrap();
        g.insert(1, &[Value::Int(101), Value::Null]).unwrap();
        g.commit(1).unwrap();
        let mut out = Vec::new();
        g.finalize_into(Gtid::new(0, 1, 1), None, 0, &mut out)
            .unwrap();
        let evs = events(&out);
        let rows_events: Vec<&RowsEvent> = evs
            .iter()
            .filter_map(|(_, e)| match e {
                Event::Rows(r) => Some(r),
                _ => None,
            })
            .collect();
        assert!(rows_events.len() >= 8);
        let mut ids = Vec::new();
        for (i, r) in rows_events.iter().enumerate() {
            assert_eq!(
                r.flags & rows_flags::STMT_END != 0,
                i + 1 == rows_events.len()
            );
            let rows = decode_rows(r, &t.specs()).unwrap();
            if rows.len() > 1 {
                assert!(r.rows.len() <= DEFAULT_ROWS_EVENT_MAX_SIZE);
            }
            for ch in rows {
                let RowChange::Insert(v) = ch else { panic!() };
                ids.push(v[0].clone());
            }
        }
        assert_eq!(ids, (0..102).map(Value::Int).collect::<Vec<_>>());
    }

    #[test]
    fn empty_statement_writes_nothing_and_unmapped_table_fails() {
        let mut g = EventGroup::transaction(1, 1);
        g.annotate("update t set a=1 where 0").unwrap();
        g.map_table(1, &table()).unwrap();
        g.end_statement().unwrap();
        assert!(g.insert(1, &[Value::Int(1), Value::Null]).is_err());
        g.commit(1).unwrap();
        assert_eq!(g.body_len(), 19 + 8 + 4);
    }
}
