//! `BINLOG 'base64'`: binlog events as `mariadb-binlog` prints them (its default
//! `--base64-output=auto`), so that its output piped into `mariadb` replays a binlog.
//!
//! The first such statement carries a FORMAT_DESCRIPTION event (whether events end with a
//! CRC32); later ones carry TABLE_MAP and rows events, which are applied as the replica
//! applies them (`Session::apply_row_change`: full row images, the stored row found by
//! primary key, foreign keys enforced and cascades made unless the event is flagged
//! NO_FOREIGN_KEY_CHECKS_F) inside the session's transaction, one statement each (a failure rolls
//! back that statement only; in autocommit mode it commits). The surrounding
//! `START TRANSACTION` / `COMMIT`, `SET gtid_seq_no` and DDL come as ordinary statements.
//! Rows of `mysql.onelog_*` (a onelog server's own account tables) are skipped, as the
//! replica skips them: accounts come as their statements. SUPER (MariaDB: BINLOG REPLAY).

use std::collections::HashMap;

use onelog_binlog::event::{
    decode_event, event_type, header_flags, rows_flags, Event, TableMap, CHECKSUM_CRC32,
};
use onelog_binlog::rows::{decode_rows, RowChange};
use onelog_types::{code, SqlError};
use sqlparser::ast as sq;

use super::Session;
use crate::users::Priv;
use crate::{sql_err, QueryResult};

/// What the session's BINLOG statements set up: the format description, the table maps.
#[derive(Default)]
pub(crate) struct Replay {
    checksum: bool,
    maps: HashMap<u64, TableMap>,
}

/// MariaDB's `base64_decode` with `MY_BASE64_DECODE_ALLOW_MULTIPLE_CHUNKS`: whitespace is
/// skipped, and padding ends one chunk (one event) and another may follow.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    let mut padding = false;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => {
                padding = true;
                continue;
            }
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        if padding {
            // A new chunk after the padding of the last one.
            padding = false;
            acc = 0;
            bits = 0;
        }
        acc = acc << 6 | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Cuts the decoded bytes into whole events by their length fields.
fn split_events(mut b: &[u8]) -> Result<Vec<&[u8]>, SqlError> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let len = b
            .get(9..13)
            .map(|l| u32::from_le_bytes(l.try_into().unwrap()) as usize)
            .filter(|&l| l >= 19 && l <= b.len())
            .ok_or_else(|| sql_err(1575, "Decoding of base64 string failed"))?;
        out.push(&b[..len]);
        b = &b[len..];
    }
    Ok(out)
}

impl Session {
    /// `BINLOG 'str'` or `BINLOG @fragment_0, @fragment_1` (see the module docs).
    pub(super) fn binlog_statement(&mut self, parts: &[sq::Expr]) -> Result<QueryResult, SqlError> {
        if !self.internal && !self.account().has_global(Priv::SUPER) {
            return Err(sql_err(
                code::ER_SPECIFIC_ACCESS_DENIED_ERROR,
                "Access denied; you need (at least one of) the SUPER, BINLOG REPLAY \
                 privilege(s) for this operation",
            ));
        }
        let mut text = String::new();
        for e in parts {
            let v = self.eval_const(e)?;
            text.push_str(&crate::expr::to_string(&v));
        }
        let bytes = decode_base64(&text)
            .ok_or_else(|| sql_err(1575, "Decoding of base64 string failed"))?;
        let events = split_events(&bytes)?;
        let mut rows = Vec::new();
        for raw in events {
            let type_code = raw[4];
            if type_code == event_type::FORMAT_DESCRIPTION {
                let (_, ev) = decode_event(raw, false).map_err(decode_error)?;
                let Event::FormatDescription(f) = ev else {
                    return Err(decode_error("not a format description"));
                };
                self.binlog_replay = Some(Box::new(Replay {
                    checksum: f.checksum_alg == CHECKSUM_CRC32,
                    maps: HashMap::new(),
                }));
                continue;
            }
            let Some(replay) = self.binlog_replay.as_mut() else {
                return Err(sql_err(
                    1609,
                    format!(
                        "The BINLOG statement of type `{}` was not preceded by a format \
                         description BINLOG statement.",
                        type_name(type_code)
                    ),
                ));
            };
            let (h, ev) = decode_event(raw, replay.checksum).map_err(decode_error)?;
            match ev {
                Event::TableMap(m) => {
                    replay.maps.insert(m.table_id, m);
                }
                Event::Rows(r) => {
                    let m = replay.maps.get(&r.table_id).ok_or_else(|| {
                        decode_error(format!(
                            "a rows event for table id {} without its table map",
                            r.table_id
                        ))
                    })?;
                    if m.db == "mysql" && m.table.starts_with("onelog_") {
                        continue;
                    }
                    let changes = decode_rows(&r, &m.column_specs()).map_err(decode_error)?;
                    let fk_checks = r.flags & rows_flags::NO_FOREIGN_KEY_CHECKS == 0;
                    rows.push((m.db.clone(), m.table.clone(), changes, fk_checks));
                }
                // Ignorable events (onelog's row redo) carry nothing to apply here.
                _ if h.flags & header_flags::IGNORABLE != 0 => {}
                other => {
                    return Err(sql_err(
                        1730,
                        format!(
                            "Only Format_description_log_event and row events are allowed in \
                             BINLOG statements (but {} was provided)",
                            other.type_name()
                        ),
                    ))
                }
            }
        }
        if !rows.is_empty() {
            self.apply_binlog_rows(rows)?;
        }
        Ok(QueryResult::ok())
    }

    /// Applies decoded row changes as one statement of the session's transaction.
    fn apply_binlog_rows(
        &mut self,
        rows: Vec<(String, String, Vec<RowChange>, bool)>,
    ) -> Result<(), SqlError> {
        self.ensure_txn().statement_begin();
        let mut r = Ok(());
        for (db, table, changes, fk_checks) in rows {
            r = self
                .apply_row_changes(&db, &table, changes, fk_checks)
                .map_err(|e| {
                    sql_err(
                        e.code,
                        format!(
                            "Could not execute a rows event on table {db}.{table}; {}",
                            e.message
                        ),
                    )
                });
            if r.is_err() {
                break;
            }
        }
        let autocommit = self.autocommit() && !self.in_explicit;
        match r {
            Ok(()) => {
                if let Some(t) = self.txn.as_mut() {
                    t.statement_end(None);
                }
                if autocommit {
                    self.commit_txn()?;
                }
                Ok(())
            }
            Err(e) => {
                if e.code == code::ER_LOCK_DEADLOCK || autocommit {
                    self.rollback_txn();
                } else if let Some(t) = self.txn.as_mut() {
                    t.statement_rollback();
                    t.statement_end(None);
                }
                Err(e)
            }
        }
    }
}

fn decode_error(e: impl std::fmt::Display) -> SqlError {
    sql_err(
        code::ER_UNKNOWN_ERROR,
        format!("Error executing BINLOG statement: {e}"),
    )
}

fn type_name(t: u8) -> &'static str {
    match t {
        event_type::TABLE_MAP => "Table_map",
        event_type::WRITE_ROWS_V1 => "Write_rows_v1",
        event_type::UPDATE_ROWS_V1 => "Update_rows_v1",
        event_type::DELETE_ROWS_V1 => "Delete_rows_v1",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_chunks_decode_one_after_another() {
        // "ab" (padded) then "cde".
        assert_eq!(decode_base64("YWI=\nY2Rl").unwrap(), b"abcde");
        assert_eq!(decode_base64(" YWJj ").unwrap(), b"abc");
        assert_eq!(decode_base64("YQ==YQ==").unwrap(), b"aa");
        assert!(decode_base64("YW!j").is_none());
    }
}
