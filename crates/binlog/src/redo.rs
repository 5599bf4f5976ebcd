//! onelog's private row-redo event: the exact row changes of a statement that replicas
//! receive as a QUERY event (account statements: CREATE USER, GRANT, ...), so that recovery
//! replays the rows while a MariaDB replica executes the statement.
//!
//! It uses MariaDB's forward-compatibility rule (`Log_event::read_log_event`): an event
//! whose common header carries `LOG_EVENT_IGNORABLE_F` (0x80) and whose type is within the
//! FORMAT_DESCRIPTION's event types (onelog's describes 171) becomes an
//! `Ignorable_log_event`, which replicas skip and `mariadb-binlog` prints as
//! `# Ignorable event type 111 (Unknown)`. Type 111 is used neither by MariaDB (types 1-39,
//! and 160 up: its own events are numbered from 160) nor by MySQL (up to 42), and
//! python-mysql-replication skips it as an event type it does not know.
//!
//! Format (body of event type [`ROW_REDO`], header flags [`IGNORABLE`]):
//! ```text
//! magic "onelog" [6] | version u8 = 1 | xid u64 |
//! { type u8 | body_len u32 | body [body_len] }*
//! ```
//! Each nested entry is the body (no common header, no CRC) of a TABLE_MAP (19) or a
//! WRITE/UPDATE/DELETE_ROWS_V1 (23/24/25) event exactly as onelog writes those events in a
//! transaction's group: the table maps of a statement, then its rows events, the last one
//! flagged STMT_END_F. `xid` identifies the transaction as an XID event would (file-mode
//! recovery matches prepared transactions against it).
//!
//! Such a group is `ROW_REDO GTID(STANDALONE|ALLOW_PARALLEL|DDL) QUERY`: the redo event
//! comes *before* the GTID event. A MariaDB replica ends a standalone group at the first
//! event that is not part of one (`Log_event::is_part_of_group`), and an ignorable event is
//! not: placed between the GTID and the QUERY it made a 10.11 replica record the GTID as
//! applied before running the statement (serial apply) or run the statement outside its
//! group, after later groups (parallel apply). Before the GTID it is an event between
//! groups, which replicas step over; for onelog it opens the group, which is complete only
//! once its QUERY is in the log (see `file_log::reader::GroupScanner`).
//!
//! The same event (xid 0) also sits *inside* a transaction's group, between its rows
//! events: it holds the rows a foreign key cascade changed (see
//! [`crate::EventGroup::begin_redo`]). A MariaDB replica's InnoDB makes those changes
//! itself when it applies the parent row's change (MariaDB never logs cascaded rows), so
//! they must not reach it as rows events; inside a transactional group (not standalone)
//! an ignorable event only moves a 10.11 replica's position within the group. Dumps to
//! replicas leave every row-redo event out all the same.

use crate::codec::Cursor;
use crate::error::{BinlogError, Result};
use crate::event::Event;

/// The event type of the row-redo event.
pub const ROW_REDO: u8 = 111;
/// `LOG_EVENT_IGNORABLE_F`: readers that do not know the event type skip the event.
pub const IGNORABLE: u16 = 0x80;

const MAGIC: &[u8; 6] = b"onelog";
const VERSION: u8 = 1;

/// The body of a row-redo event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowRedo {
    pub xid: u64,
    /// The nested events, encoded (see the module docs).
    nested: Vec<u8>,
}

impl RowRedo {
    pub fn new(xid: u64) -> RowRedo {
        RowRedo {
            xid,
            nested: Vec::new(),
        }
    }

    /// Appends a nested event: its type and its body (no header, no CRC).
    pub fn push(&mut self, type_code: u8, body: &[u8]) {
        self.nested.push(type_code);
        self.nested
            .extend_from_slice(&(body.len() as u32).to_le_bytes());
        self.nested.extend_from_slice(body);
    }

    /// Appends a nested event.
    pub fn push_event(&mut self, ev: &Event) {
        let mut body = Vec::new();
        ev.encode_body(&mut body);
        self.push(ev.type_code(), &body);
    }

    /// The nested events, decoded (TABLE_MAP and rows events).
    pub fn events(&self) -> Result<Vec<Event>> {
        let mut c = Cursor::new(&self.nested);
        let mut out = Vec::new();
        while !c.is_empty() {
            let ty = c.u8()?;
            let len = c.u32()? as usize;
            let ev = Event::decode_body(ty, c.bytes(len)?)?;
            if !matches!(ev, Event::TableMap(_) | Event::Rows(_)) {
                return Err(BinlogError::decode(format!(
                    "row redo event holds an event of type {ty}"
                )));
            }
            out.push(ev);
        }
        Ok(out)
    }

    pub(crate) fn encode_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        out.extend_from_slice(&self.xid.to_le_bytes());
        out.extend_from_slice(&self.nested);
    }

    /// Decodes a body of type [`ROW_REDO`]; None when it is not onelog's (another writer's
    /// event of the same type, or a later version).
    pub fn decode_body(body: &[u8]) -> Option<RowRedo> {
        let rest = body.strip_prefix(MAGIC.as_slice())?;
        let (&version, rest) = rest.split_first()?;
        if version != VERSION || rest.len() < 8 {
            return None;
        }
        Some(RowRedo {
            xid: u64::from_le_bytes(rest[..8].try_into().unwrap()),
            nested: rest[8..].to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{decode_event, encode_event, RowsEvent, RowsKind};
    use crate::rows::{ColumnDef, TableDef};
    use onelog_types::ColumnType;

    #[test]
    fn nested_events_round_trip_with_the_ignorable_flag() {
        let t = TableDef {
            db: "mysql".into(),
            name: "onelog_user".into(),
            columns: vec![ColumnDef {
                name: "User".into(),
                ty: ColumnType::Int {
                    bytes: 4,
                    unsigned: false,
                },
                nullable: false,
            }],
            primary_key: vec![0],
        };
        let tm = Event::TableMap(t.table_map(9, crate::rows::RowMetadata::Full));
        let rows = Event::Rows(RowsEvent {
            kind: RowsKind::Write,
            table_id: 9,
            flags: 1,
            width: 1,
            columns_present: vec![1],
            columns_after: None,
            rows: vec![0, 7, 0, 0, 0],
        });
        let mut r = RowRedo::new(42);
        r.push_event(&tm);
        r.push_event(&rows);
        let raw = encode_event(5, 1, IGNORABLE, 100, &Event::RowRedo(r.clone()));
        let (h, back) = decode_event(&raw, true).unwrap();
        assert_eq!(h.type_code, ROW_REDO);
        assert_eq!(h.flags, IGNORABLE);
        let Event::RowRedo(back) = back else {
            panic!("{back:?}")
        };
        assert_eq!(back, r);
        assert_eq!(back.xid, 42);
        // The nested events decode to what was pushed (compared encoded: decoding leaves
        // out optional metadata that was not written).
        let body = |e: &Event| {
            let mut v = Vec::new();
            e.encode_body(&mut v);
            (e.type_code(), v)
        };
        let nested: Vec<_> = back.events().unwrap().iter().map(body).collect();
        assert_eq!(nested, vec![body(&tm), body(&rows)]);
        assert_eq!(back.events().unwrap()[1], rows);
        // Body: magic, version, xid, then (type, length, body) per nested event.
        let body = &raw[19..raw.len() - 4];
        assert_eq!(&body[..7], b"onelog\x01");
        assert_eq!(body[7..15], 42u64.to_le_bytes());
        assert_eq!(body[15], 19);
    }

    #[test]
    fn foreign_bodies_of_the_type_are_unknown_events() {
        for body in [
            &b"other"[..],
            b"onelog\x02\0\0\0\0\0\0\0\0",
            b"onelog\x01\0",
        ] {
            let ev = Event::decode_body(ROW_REDO, body).unwrap();
            assert!(matches!(ev, Event::Unknown { .. }), "{ev:?}");
        }
        let mut bad = RowRedo::new(1);
        bad.push(2, b"not a table map");
        assert!(bad.events().is_err());
        let mut cut = RowRedo::new(1);
        cut.push(19, &[1, 2, 3]);
        cut.nested.truncate(6);
        assert!(cut.events().is_err());
    }
}
