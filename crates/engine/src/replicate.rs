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
/// optional metadata does not say which integer columns are unsigned).
pub(crate) fn conform(t: &TableDef, mut row: Row) -> Row {
    for (v, c) in row.iter_mut().zip(&t.columns) {
        *v = match (c.ty, std::mem::replace(v, Value::Null)) {
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
        match (before, after) {
            (None, Some(new)) => self.insert(t, new),
            (Some(old), new) => {
                let stored = self.stored_row(t, &old)?.ok_or_else(|| not_found(t))?;
                match new {
                    Some(mut new) => {
                        // The hidden row id (tables without a primary key) stays.
                        new.extend(stored[n..].iter().cloned());
                        self.update(t, &stored, new)
                    }
                    None => self.delete(t, &stored),
                }
            }
            (None, None) => Ok(()),
        }
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
