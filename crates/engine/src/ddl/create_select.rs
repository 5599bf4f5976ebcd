//! CREATE TABLE ... SELECT: a table created by the transaction that fills it.
//!
//! [`Txn::create_table`] takes the new table's exclusive metadata lock for the transaction
//! and its table and index ids from the published catalog's counters (as ALTER TABLE
//! does, so no other DDL takes them), and returns the definition: the SQL layer binds its
//! INSERT ... SELECT against it and inserts through the transaction like into any table,
//! while the catalog does not name it yet. At commit the transaction's group is the one
//! MariaDB 10.11 logs (`GTID(DDL) QUERY("CREATE TABLE ...") rows... XID`, or a `COMMIT`
//! QUERY instead of XID without rows; see `EventGroup::create_select`) and its one
//! WriteBatch holds the catalog records (the table, the counters, a replaced table's
//! removal) followed by the rows, so a crash leaves either nothing or the table with all
//! its rows. Recovery replays such a group by re-running the CREATE TABLE through the
//! SQL layer with its catalog batch held back, and writes that batch with the redone rows
//! (`recovery.rs`). A rollback leaves nothing: the rows were only in the overlay, and the
//! ids are never used again.

use std::sync::Arc;

use rocksdb::WriteBatch;

use super::{validate, Change, DdlOutcome};
use crate::autoinc;
use crate::catalog::{IndexDef, ObjectKind, TableDef};
use crate::error::{EngineError, Result};
use crate::keys;
use crate::locks::Mode;
use crate::txn::{mdl_name, CommitInfo, Txn};

/// The table a transaction creates (see the module documentation).
pub(crate) struct PendingCreate {
    /// With its ids.
    pub def: Arc<TableDef>,
    /// CREATE OR REPLACE: the table it replaces.
    pub replaced: Option<Arc<TableDef>>,
    /// The session's current database and the CREATE TABLE statement, for the QUERY event.
    pub db: String,
    pub sql: String,
}

impl Txn {
    /// Creates table `def` in this transaction (which must not have written anything):
    /// the catalog names it once the transaction commits, logged as `sql` in database
    /// `db` followed by the transaction's rows. `or_replace`: an existing table of that
    /// name is dropped by the same commit (otherwise it is an error). Returns the
    /// definition to insert into.
    pub fn create_table(
        &mut self,
        mut def: TableDef,
        or_replace: bool,
        db: &str,
        sql: &str,
    ) -> Result<Arc<TableDef>> {
        if self.create.is_some() || self.has_writes() {
            return Err(EngineError::Other(
                "CREATE TABLE ... SELECT in a transaction that already changed data".into(),
            ));
        }
        self.lock(mdl_name(&def.db, &def.name), Mode::Exclusive)?;
        let engine = self.engine().clone();
        let _serial = engine.ddl_lock.lock();
        let mut cat = (*engine.catalog()).clone();
        if !cat.has_database(&def.db) {
            return Err(EngineError::NoSuchDatabase(def.db));
        }
        if cat.object(ObjectKind::View, &def.db, &def.name).is_some() {
            return Err(EngineError::TableExists(def.name));
        }
        let replaced = cat.table(&def.db, &def.name).cloned();
        if replaced.is_some() && !or_replace {
            return Err(EngineError::TableExists(def.name));
        }
        if def.indexes.first().is_none_or(|i| !i.primary) {
            def.hidden_pk = true;
            def.indexes.insert(0, IndexDef::hidden_primary());
        }
        validate(&def)?;
        def.id = cat.next_table_id;
        cat.next_table_id += 1;
        for idx in &mut def.indexes {
            idx.id = cat.next_index_id;
            cat.next_index_id += 1;
        }
        // The ids are taken now: the next DDL's catalog starts past them.
        *engine.catalog.write() = Arc::new(cat);
        let def = Arc::new(def);
        self.create = Some(Arc::new(PendingCreate {
            def: def.clone(),
            replaced,
            db: db.to_string(),
            sql: sql.to_string(),
        }));
        Ok(def)
    }

    /// The table this transaction creates, if any.
    pub fn created_table(&self) -> Option<Arc<TableDef>> {
        self.create.as_ref().map(|c| c.def.clone())
    }
}

/// Commits a transaction that creates a table: the catalog change and the rows in one
/// batch, the CREATE TABLE and the rows in one event group; the catalog names the table
/// once that is durable.
pub(crate) fn commit(txn: &mut Txn) -> Result<CommitInfo> {
    let engine = txn.engine().clone();
    if let Some(why) = engine.committer.failure() {
        return Err(EngineError::LogFailed(why));
    }
    let pc = txn.create.clone().expect("a table to create");
    let serial = engine.ddl_lock.lock();
    let mut ch = Change {
        cat: (*engine.catalog()).clone(),
        batch: WriteBatch::default(),
        outcome: DdlOutcome::default(),
        reset: Vec::new(),
    };
    let (tdb, name) = (&pc.def.db, &pc.def.name);
    // The metadata lock held since `create_table` keeps the name as it was then.
    match (ch.cat.table(tdb, name).cloned(), &pc.replaced) {
        (Some(old), Some(r)) if old.id == r.id => ch.remove_table(&old),
        (None, None) => {}
        _ => return Err(EngineError::TableExists(name.clone())),
    }
    if !ch.cat.has_database(tdb) {
        return Err(EngineError::NoSuchDatabase(tdb.clone()));
    }
    ch.drop_table_data(&pc.def);
    ch.reset.push(pc.def.id);
    ch.put_table((*pc.def).clone());
    let mut next = Vec::with_capacity(8);
    next.extend_from_slice(&ch.cat.next_table_id.to_le_bytes());
    next.extend_from_slice(&ch.cat.next_index_id.to_le_bytes());
    ch.batch.put(keys::CATALOG_NEXT, next);
    let mut batch = std::mem::take(&mut ch.batch);
    txn.overlay_into(&mut batch);
    let xid = engine.wal.next_xid();
    let ahead = txn.ahead.take();
    let group = engine.wal.txn_group(txn, ahead, xid)?;
    let info = crate::commit::submit_in_order(txn, batch, group, xid)?;
    *engine.catalog.write() = Arc::new(ch.cat);
    for id in ch.reset {
        autoinc::reset(&engine, id);
    }
    drop(serial);
    Ok(info)
}
