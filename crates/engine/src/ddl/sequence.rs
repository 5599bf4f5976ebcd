//! CREATE SEQUENCE and ALTER SEQUENCE in the catalog: the table and its row change in the
//! statement's batch, logged as the statement (MariaDB logs both as QUERY events only), so
//! recovery re-runs the statement and gets the same row.

use onelog_types::Value;

use super::{create::create_table, Change};
use crate::catalog::TableDef;
use crate::error::{EngineError, Result};
use crate::keys;
use crate::rowcodec;
use crate::sequence::{SeqDef, ROW_ID};

/// The key of a sequence's row.
fn row_key(t: &TableDef) -> Result<Vec<u8>> {
    keys::encode_tuple(t.primary().id, &keys::pk_types(t), &[Value::UInt(ROW_ID)])
}

/// Creates sequence `def` with first row `row`; `or_replace` drops a table of that name
/// first.
pub(super) fn create(
    ch: &mut Change,
    mut def: TableDef,
    row: &SeqDef,
    or_replace: bool,
    if_not_exists: bool,
) -> Result<()> {
    def.sequence = true;
    if or_replace {
        if let Some(old) = ch.cat.table(&def.db, &def.name).cloned() {
            ch.remove_table(&old);
        }
    }
    if let Some(t) = create_table(ch, def, if_not_exists)? {
        ch.batch
            .put(row_key(&t)?, rowcodec::encode_row(&row.to_row()));
    }
    Ok(())
}

/// Replaces the row of sequence `db.table` (ALTER SEQUENCE).
pub(super) fn set_row(ch: &mut Change, db: &str, table: &str, row: &SeqDef) -> Result<()> {
    let t = ch.table(db, table)?;
    if !t.sequence {
        return Err(EngineError::Other(format!(
            "'{db}.{table}' is not a SEQUENCE"
        )));
    }
    ch.batch
        .put(row_key(&t)?, rowcodec::encode_row(&row.to_row()));
    Ok(())
}
