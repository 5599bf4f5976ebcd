//! Text output in the style of `mariadb-binlog -v` (used by `onelog binlog dump FILE...`).
//!
//! ```text
//! # at 256
//! #240102  3:04:05 server id 1  end_log_pos 298 CRC32 0x1a2b3c4d    GTID 0-1-5 trans
//! ### INSERT INTO `db`.`t`
//! ### SET
//! ###   @1=1
//! ```

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use onelog_types::{type_code, DateTime, Value};

use crate::error::{BinlogError, Result};
use crate::event::{gtid_flags, rows_flags, Event, RowsEvent, RowsKind, TableMap};
use crate::file_log::{FileEvents, ReadEvent};
use crate::fs::FileSystem;
use crate::gtid::format_gtid_list;
use crate::rows::{decode_rows, ColumnSpec, RowChange};

/// Formats unix seconds as mariadb-binlog does (`yymmdd hh:mm:ss`, hour space-padded), UTC.
fn short_time(ts: u32) -> String {
    let dt = DateTime::from_unix(ts as i64, 0);
    format!(
        "{:02}{:02}{:02} {:2}:{:02}:{:02}",
        dt.date.year % 100,
        dt.date.month,
        dt.date.day,
        dt.hour,
        dt.minute,
        dt.second
    )
}

fn quote_bytes(b: &[u8]) -> String {
    let mut s = String::from("'");
    for &c in b {
        match c {
            b'\'' => s.push_str("\\'"),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push('\'');
    s
}

fn format_value(v: &Value, spec: &ColumnSpec) -> String {
    let fsp = match spec.type_code {
        type_code::TIME2 | type_code::DATETIME2 | type_code::TIMESTAMP2 => {
            spec.meta.min(6) as usize
        }
        _ => 0,
    };
    match v {
        Value::DateTime(d) => format!("'{d:.fsp$}'"),
        Value::Time(t) => format!("'{t:.fsp$}'"),
        Value::Null => "NULL".into(),
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) if !s.chars().any(|c| c.is_control()) => {
                format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
            }
            _ => quote_bytes(b),
        },
        Value::Date(_) => format!("'{v}'"),
        _ => v.to_string(),
    }
}

/// Writes the dump of a stream of events; table maps are remembered to decode rows events.
pub struct Dumper<W: Write> {
    out: W,
    maps: HashMap<u64, TableMap>,
}

impl<W: Write> Dumper<W> {
    pub fn new(out: W) -> Dumper<W> {
        Dumper {
            out,
            maps: HashMap::new(),
        }
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    fn io(e: std::io::Error) -> BinlogError {
        BinlogError::io("write", "dump output", e)
    }

    pub fn begin(&mut self) -> Result<()> {
        writeln!(self.out, "DELIMITER /*!*/;").map_err(Self::io)
    }

    pub fn end(&mut self) -> Result<()> {
        writeln!(self.out, "# End of log file\nDELIMITER ;").map_err(Self::io)
    }

    /// Dumps one event.
    pub fn event(&mut self, e: &ReadEvent) -> Result<()> {
        let h = &e.header;
        let crc = e
            .raw
            .len()
            .checked_sub(4)
            .map(|i| u32::from_le_bytes(e.raw[i..].try_into().unwrap()))
            .unwrap_or(0);
        let mut text = format!(
            "# at {}\n#{} server id {}  end_log_pos {} CRC32 {:#010x} \t",
            e.pos.offset,
            short_time(h.timestamp),
            h.server_id,
            h.log_pos,
            crc
        );
        match &e.event {
            Event::FormatDescription(f) => text.push_str(&format!(
                "Start: binlog v {}, server v {} created {}\n",
                f.binlog_version,
                f.server_version,
                short_time(f.create_timestamp)
            )),
            Event::GtidList(l) => {
                text.push_str(&format!("Gtid list [{}]\n", format_gtid_list(&l.gtids)))
            }
            Event::BinlogCheckpoint(n) => text.push_str(&format!("Binlog checkpoint {n}\n")),
            Event::Gtid(g) => {
                let kind = if g.flags2 & gtid_flags::DDL != 0 {
                    "ddl"
                } else if g.flags2 & gtid_flags::STANDALONE == 0 {
                    "trans"
                } else {
                    ""
                };
                text.push_str(&format!(
                    "GTID {}-{}-{} {kind}",
                    g.domain, h.server_id, g.seq
                ));
                if let Some(c) = g.commit_id {
                    text.push_str(&format!(" cid={c}"));
                }
                text.push_str(&format!(
                    "\n/*M!100001 SET @@session.gtid_domain_id={}*//*!*/;\n\
                     /*M!100001 SET @@session.server_id={}*//*!*/;\n\
                     /*M!100001 SET @@session.gtid_seq_no={}*//*!*/;\n",
                    g.domain, h.server_id, g.seq
                ));
                match (g.xa, g.flags2 & gtid_flags::PREPARED_XA != 0) {
                    (Some(x), true) => text.push_str(&format!("XA START {}/*!*/;\n", x.to_sql())),
                    _ if g.flags2 & gtid_flags::STANDALONE == 0 => {
                        text.push_str("START TRANSACTION\n/*!*/;\n")
                    }
                    _ => {}
                }
            }
            Event::Query(q) => {
                text.push_str(&format!(
                    "Query\tthread_id={}\texec_time={}\terror_code={}\n",
                    q.thread_id, q.exec_time, q.error_code
                ));
                if !q.db.is_empty() {
                    text.push_str(&format!("use `{}`/*!*/;\n", q.db));
                }
                text.push_str(&format!(
                    "SET TIMESTAMP={}/*!*/;\n{}\n/*!*/;\n",
                    h.timestamp,
                    String::from_utf8_lossy(&q.query)
                ));
            }
            Event::AnnotateRows(q) => {
                text.push_str("Annotate_rows:\n");
                for line in String::from_utf8_lossy(q).lines() {
                    text.push_str(&format!("#Q> {line}\n"));
                }
            }
            Event::TableMap(t) => {
                text.push_str(&format!(
                    "Table_map: `{}`.`{}` mapped to number {}\n",
                    t.db, t.table, t.table_id
                ));
                self.maps.insert(t.table_id, t.clone());
            }
            Event::Rows(r) => {
                let name = match r.kind {
                    RowsKind::Write => "Write_rows",
                    RowsKind::Update => "Update_rows",
                    RowsKind::Delete => "Delete_rows",
                };
                text.push_str(&format!("{name}: table id {}", r.table_id));
                if r.flags & rows_flags::STMT_END != 0 {
                    text.push_str(" flags: STMT_END_F");
                }
                text.push('\n');
                self.rows(r, &mut text)?;
            }
            // As mariadb-binlog shows an event it skips as ignorable; then the row changes
            // it holds, as for rows events.
            Event::RowRedo(redo) => {
                text.push_str(&format!(
                    "Ignorable\n# Ignorable event type {} (Unknown)\n# onelog row redo, xid {}\n",
                    h.type_code, redo.xid
                ));
                let mut maps = std::mem::take(&mut self.maps);
                for ev in redo.events()? {
                    match ev {
                        Event::TableMap(t) => {
                            self.maps.insert(t.table_id, t);
                        }
                        Event::Rows(r) => self.rows(&r, &mut text)?,
                        _ => {}
                    }
                }
                std::mem::swap(&mut self.maps, &mut maps);
            }
            Event::Xid(x) => text.push_str(&format!("Xid = {x}\nCOMMIT/*!*/;\n")),
            Event::XaPrepare(p) => {
                let x = p.xid.to_sql();
                text.push_str(&format!("XID = {x}\nXA PREPARE {x}\n/*!*/;\n"))
            }
            Event::Rotate(r) => {
                text.push_str(&format!("Rotate to {}  pos: {}\n", r.next_file, r.position))
            }
            Event::Heartbeat(n) => text.push_str(&format!("Heartbeat {n}\n")),
            Event::Stop => text.push_str("Stop\n"),
            Event::Unknown { type_code, body } => text.push_str(&format!(
                "Unknown event type {type_code} ({} bytes)\n",
                body.len()
            )),
        }
        self.out.write_all(text.as_bytes()).map_err(Self::io)
    }
}

impl<W: Write> Dumper<W> {
    /// The `###` lines of a rows event's changes (`mariadb-binlog -v`).
    fn rows(&mut self, r: &RowsEvent, text: &mut String) -> Result<()> {
        match self.maps.get(&r.table_id) {
            None => text.push_str("### (no table map for this table id)\n"),
            Some(tm) => {
                let table = format!("`{}`.`{}`", tm.db, tm.table);
                let specs = tm.column_specs();
                let image = |text: &mut String, vals: &[Value]| {
                    for (i, (v, s)) in vals.iter().zip(&specs).enumerate() {
                        text.push_str(&format!("###   @{}={}\n", i + 1, format_value(v, s)));
                    }
                };
                let changes = decode_rows(r, &specs)?;
                for ch in &changes {
                    match ch {
                        RowChange::Insert(v) => {
                            text.push_str(&format!("### INSERT INTO {table}\n### SET\n"));
                            image(text, v);
                        }
                        RowChange::Delete(v) => {
                            text.push_str(&format!("### DELETE FROM {table}\n### WHERE\n"));
                            image(text, v);
                        }
                        RowChange::Update { before, after } => {
                            text.push_str(&format!("### UPDATE {table}\n### WHERE\n"));
                            image(text, before);
                            text.push_str("### SET\n");
                            image(text, after);
                        }
                    }
                }
                text.push_str(&format!("# Number of rows: {}\n", changes.len()));
            }
        }
        if r.flags & rows_flags::STMT_END != 0 {
            self.maps.clear();
        }
        Ok(())
    }
}

/// Dumps one binlog file (engine or classic) to `out`.
pub fn dump_file(fs: &dyn FileSystem, path: &Path, out: &mut dyn Write) -> Result<()> {
    let mut d = Dumper::new(out);
    d.begin()?;
    for e in FileEvents::open(fs, path)? {
        d.event(&e?)?;
    }
    d.end()
}
