//! CREATE TABLE in the catalog: the checks, the ids and the new record.

use std::sync::Arc;

use onelog_types::code;

use super::{validate, Change};
use crate::catalog::{IndexDef, ObjectKind, TableDef};
use crate::error::{EngineError, Result};

/// Creates table `def` (ids assigned here); None when it exists and `if_not_exists` made
/// that a note.
pub(super) fn create_table(
    ch: &mut Change,
    mut def: TableDef,
    if_not_exists: bool,
) -> Result<Option<Arc<TableDef>>> {
    if !ch.cat.has_database(&def.db) {
        return Err(EngineError::NoSuchDatabase(def.db));
    }
    if ch.cat.table(&def.db, &def.name).is_some()
        || ch
            .cat
            .object(ObjectKind::View, &def.db, &def.name)
            .is_some()
    {
        if !if_not_exists {
            return Err(EngineError::TableExists(def.name));
        }
        ch.note(
            code::ER_TABLE_EXISTS_ERROR,
            format!("Table '{}' already exists", def.name),
        );
        return Ok(None);
    }
    if def.indexes.first().is_none_or(|i| !i.primary) {
        def.hidden_pk = true;
        def.indexes.insert(0, IndexDef::hidden_primary());
    }
    validate(&def)?;
    def.id = ch.cat.next_table_id;
    ch.cat.next_table_id += 1;
    def.create_time = Some(crate::table_options::now_secs());
    for idx in &mut def.indexes {
        idx.id = ch.cat.next_index_id;
        ch.cat.next_index_id += 1;
    }
    // Nothing may linger under the new ids (a crashed attempt).
    ch.drop_table_data(&def);
    ch.reset.push(def.id);
    let (db, name) = (def.db.clone(), def.name.clone());
    ch.put_table(def);
    Ok(ch.cat.table(&db, &name).cloned())
}
