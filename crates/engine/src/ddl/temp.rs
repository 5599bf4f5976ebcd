//! Temporary tables (`CREATE TEMPORARY TABLE`): tables private to one session, whose
//! definitions the session keeps (never the catalog) and whose rows live in RocksDB under
//! index ids of a range reserved for them, [`TEMP_ID_BASE`] and up.
//!
//! Nothing of a temporary table is logged: a transaction drops its row changes to them
//! from the binlog event group and applies their index entries with
//! [`Engine::write_unnamed`] once its commit succeeded (`txn.rs`). Their data is never
//! named by a catalog record, so whatever a memtable flush persisted of it is deleted when
//! the engine opens (`sweep_unnamed_indexes`), and a session drops its tables' data when
//! it ends. Reads of a temporary table always see the latest state (its committed rows
//! are written outside group commit, after the read snapshot was published).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use super::{build_alter, clear_indexes, plan_alter, validate, AlterOp, Converter};
use crate::autoinc;
use crate::catalog::{Catalog, IndexDef, TableDef};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::keys;

/// The first table and index id of temporary tables. Ids of the catalog's tables stay
/// below it (the catalog's counters would need 4 billion DDL statements to reach it).
pub const TEMP_ID_BASE: u32 = 0xF000_0000;

/// The next temporary table or index id of this process. Ids are not reused while the
/// process runs; data under them never outlives it (see the module documentation).
static NEXT_TEMP_ID: AtomicU32 = AtomicU32::new(TEMP_ID_BASE);

fn next_temp_id() -> Result<u32> {
    let id = NEXT_TEMP_ID.fetch_add(1, Ordering::Relaxed);
    if id < TEMP_ID_BASE {
        return Err(EngineError::Other(
            "temporary table ids of this process are exhausted".into(),
        ));
    }
    Ok(id)
}

/// Whether a table is a temporary table.
pub fn is_temp(t: &TableDef) -> bool {
    t.id >= TEMP_ID_BASE
}

/// Whether a RocksDB key is an index entry of a temporary table.
pub(crate) fn is_temp_key(k: &[u8]) -> bool {
    k.len() >= 5
        && k[0] == keys::INDEX_PREFIX
        && u32::from_be_bytes([k[1], k[2], k[3], k[4]]) >= TEMP_ID_BASE
}

impl Engine {
    /// Gives a temporary table definition its ids (a hidden primary key when it declares
    /// none, as CREATE TABLE does). Nothing is stored until rows are committed.
    pub fn create_temp_table(&self, mut def: TableDef) -> Result<Arc<TableDef>> {
        if def.indexes.first().is_none_or(|i| !i.primary) {
            def.hidden_pk = true;
            def.indexes.insert(0, IndexDef::hidden_primary());
        }
        validate(&def)?;
        def.id = next_temp_id()?;
        for idx in &mut def.indexes {
            idx.id = next_temp_id()?;
        }
        Ok(Arc::new(def))
    }

    /// Deletes a temporary table's rows (DROP, TRUNCATE and the end of its session). The
    /// session has no transaction writing to it.
    pub fn clear_temp_table(&self, t: &TableDef) -> Result<()> {
        if !is_temp(t) {
            return Err(EngineError::Other(format!(
                "{}.{} is not a temporary table",
                t.db, t.name
            )));
        }
        let ids: Vec<u32> = t.indexes.iter().map(|i| i.id).collect();
        autoinc::reset(self, t.id);
        clear_indexes(self, &ids)
    }

    /// ALTER TABLE of a temporary table (its rows committed, no transaction writing to
    /// it): builds the indexes that change under new temporary ids, as ALTER TABLE of a
    /// catalog table does, and deletes those the new definition no longer has. Returns the
    /// new definition and the rows to report as affected, if any.
    pub fn alter_temp_table(
        &self,
        t: &Arc<TableDef>,
        ops: Vec<AlterOp>,
        convert: Option<Converter>,
    ) -> Result<(Arc<TableDef>, Option<u64>)> {
        if !is_temp(t) {
            return Err(EngineError::Other(format!(
                "{}.{} is not a temporary table",
                t.db, t.name
            )));
        }
        // A catalog of this table alone, whose index counter hands out temporary ids.
        let mut cat = Catalog::default();
        cat.tables.insert((t.db.clone(), t.name.clone()), t.clone());
        cat.next_index_id = NEXT_TEMP_ID.load(Ordering::Relaxed);
        let planned_from = cat.next_index_id;
        let plan = plan_alter(&mut cat, &t.db, &t.name, ops, convert)?;
        // Take the ids the plan used from the process's counter.
        let used = cat.next_index_id - planned_from;
        let first = NEXT_TEMP_ID.fetch_add(used, Ordering::Relaxed);
        let mut plan = plan;
        if first != planned_from {
            // Another session took ids meanwhile: renumber the indexes to build.
            for (k, &i) in plan.build.iter().enumerate() {
                plan.new.indexes[i].id = first + k as u32;
            }
        }
        if first < TEMP_ID_BASE || first.checked_add(used).is_none() {
            return Err(EngineError::Other(
                "temporary table ids of this process are exhausted".into(),
            ));
        }
        let affected = build_alter(self, &plan)?;
        let dropped: Vec<u32> = t
            .indexes
            .iter()
            .filter(|o| !plan.new.indexes.iter().any(|n| n.id == o.id))
            .map(|o| o.id)
            .collect();
        if !dropped.is_empty() {
            clear_indexes(self, &dropped)?;
        }
        autoinc::reset(self, t.id);
        Ok((Arc::new(plan.new), affected))
    }
}
