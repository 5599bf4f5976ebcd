//! Applying row changes read from another server's binlog (a replica's SQL thread): binlog
//! row images in table column order, converted to the table's column types, each before
//! image found by the row's primary key (or, without one, by comparing every column).

use std::sync::Arc;

use onelog_types::{ColumnType, Value};

use crate::catalog::TableDef;
use crate::error::{EngineError, Result};
use crate::scan::{KeyRange, ScanOptions};
use crate::txn::{LockMode, Row, Txn};

/// Converts logged values to the column types of the table (signedness: a binlog without
/// optional metadata does not say which integer columns are unsigned; ENUM and SET are
/// logged as their number, kept as their text; UUID and INET6 are logged as their 16-byte
/// memory form without trailing zero bytes, kept as their text).
pub(crate) fn conform(t: &TableDef, mut row: Row) -> Row {
    for (v, c) in row.iter_mut().zip(&t.columns) {
        *v = match (c.ty, std::mem::replace(v, Value::Null)) {
            (ty @ (ColumnType::Enum { .. } | ColumnType::Set { .. }), Value::UInt(n)) => {
                onelog_types::enum_set_text(&ty, n).unwrap_or(Value::Null)
            }
            (ColumnType::Bit { .. } | ColumnType::Year, Value::Int(i)) => Value::UInt(i as u64),
            (ty @ (ColumnType::Uuid | ColumnType::Inet6), Value::Bytes(b)) => {
                let f = ty.fixed_bin().expect("matched");
                match onelog_types::FixedBin::from_logged(&b) {
                    Some(m) => Value::Bytes(f.format(&m).into_bytes()),
                    None => Value::Bytes(b),
                }
            }
            (ColumnType::Int { unsigned: true, .. }, Value::Int(i)) => Value::UInt(i as u64),
            (
                ColumnType::Int {
                    unsigned: false, ..
                },
                Value::UInt(u),
            ) => Value::Int(u as i64),
            (_, other) => other,
        };
    }
    row
}

/// One row change of a binlog rows event: (before image, after image); an insert has no
/// before image, a delete no after image.
pub type LoggedChange = (Option<Row>, Option<Row>);

fn not_found(t: &TableDef) -> EngineError {
    EngineError::Other(format!(
        "Can't find record in '{}' (a row the primary changed is not on this replica)",
        t.name
    ))
}

impl Txn {
    /// Applies one row change of a binlog rows event: an insert (`after` only), update
    /// (both) or delete (`before` only). The stored row an image names is looked up and
    /// locked; a missing row is an error (MariaDB's 1032 situation).
    pub fn apply_logged_change(
        &mut self,
        t: &Arc<TableDef>,
        before: Option<Row>,
        after: Option<Row>,
    ) -> Result<()> {
        match self.resolve_logged_change(t, before, after)? {
            (None, Some(new)) => self.insert(t, new),
            (Some(stored), Some(new)) => self.update(t, &stored, new),
            (Some(stored), None) => self.delete(t, &stored),
            (None, None) => Ok(()),
        }
    }

    /// What one row change of a binlog rows event does here: the stored row its before
    /// image names (looked up and locked; missing: MariaDB's 1032 situation) and the row
    /// its after image becomes (converted to the column types, keeping the stored row's
    /// hidden row id). The caller makes the change (with its foreign keys enforced).
    pub fn resolve_logged_change(
        &mut self,
        t: &Arc<TableDef>,
        before: Option<Row>,
        after: Option<Row>,
    ) -> Result<(Option<Row>, Option<Row>)> {
        let n = t.columns.len();
        for img in [&before, &after].into_iter().flatten() {
            if img.len() != n {
                return Err(EngineError::Other(format!(
                    "a row image of {} columns does not fit table '{}' of {n} columns",
                    img.len(),
                    t.name
                )));
            }
        }
        let before = before.map(|r| conform(t, r));
        let after = after.map(|r| conform(t, r));
        let Some(old) = before else {
            return Ok((None, after));
        };
        let stored = self.stored_row(t, &old)?.ok_or_else(|| not_found(t))?;
        let after = after.map(|mut new| {
            // The hidden row id (tables without a primary key) stays.
            new.extend(stored[n..].iter().cloned());
            new
        });
        Ok((Some(stored), after))
    }

    /// Applies the row changes of one binlog rows event (see
    /// [`apply_logged_change`](Self::apply_logged_change)). A table without a primary key
    /// is scanned once for the whole event, not once per row: each before image takes an
    /// equal stored row of that scan, which is then locked by its row id and read again
    /// (still equal, or the row is not found).
    pub fn apply_logged_changes(
        &mut self,
        t: &Arc<TableDef>,
        changes: Vec<LoggedChange>,
    ) -> Result<()> {
        let lookups = changes.iter().filter(|c| c.0.is_some()).count();
        if !t.hidden_pk || lookups < 2 {
            return changes
                .into_iter()
                .try_for_each(|(before, after)| self.apply_logged_change(t, before, after));
        }
        let n = t.columns.len();
        let key = |r: &[Value]| format!("{r:?}");
        let mut stored: std::collections::HashMap<String, Vec<Row>> = Default::default();
        let cursor = self.scan(t, 0, KeyRange::all(), ScanOptions::default())?;
        for row in cursor {
            let row = row?;
            stored.entry(key(&row[..n])).or_default().push(row);
        }
        for (before, after) in changes {
            let Some(before) = before else {
                self.apply_logged_change(t, None, after)?;
                continue;
            };
            if before.len() != n || after.as_ref().is_some_and(|a| a.len() != n) {
                return self.apply_logged_change(t, Some(before), after);
            }
            let before = conform(t, before);
            let found = stored.get_mut(&key(&before)).and_then(|v| v.pop());
            let row = match found {
                Some(r) => self.get(t, &r[n..], LockMode::Exclusive)?,
                None => None,
            };
            let stored_row = row
                .filter(|r| r[..n] == before[..])
                .ok_or_else(|| not_found(t))?;
            match after {
                Some(new) => {
                    let mut new = conform(t, new);
                    new.extend(stored_row[n..].iter().cloned());
                    self.update(t, &stored_row, new)?
                }
                None => self.delete(t, &stored_row)?,
            }
        }
        Ok(())
    }

    /// The stored row a before image names, locked.
    pub(crate) fn stored_row(&mut self, t: &Arc<TableDef>, image: &Row) -> Result<Option<Row>> {
        if !t.hidden_pk {
            let pk: Vec<Value> = t
                .primary()
                .columns
                .iter()
                .map(|&c| image[c].clone())
                .collect();
            return self.get(t, &pk, LockMode::Exclusive);
        }
        let cursor = self.scan(
            t,
            0,
            KeyRange::all(),
            ScanOptions {
                lock: LockMode::Exclusive,
                ..Default::default()
            },
        )?;
        for row in cursor {
            let row = row?;
            if row[..t.columns.len()] == image[..] {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}
