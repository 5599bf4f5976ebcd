//! Views, routines, triggers and events in the catalog: created, replaced and dropped as
//! whole records (the SQL layer owns their definitions); a trigger goes with its table.

use std::sync::Arc;

use super::Change;
use crate::catalog::{ObjectKind, StoredObject};
use crate::error::{EngineError, Result};
use crate::keys;

impl Change {
    pub(super) fn put_object(&mut self, o: StoredObject) {
        let name = o.kind.lookup_name(&o.name);
        self.batch.put(
            keys::object_key(o.kind.tag(), &o.db, &name),
            serde_json::to_vec(&o).expect("serialise object"),
        );
        self.cat
            .objects
            .insert((o.kind, o.db.clone(), name), Arc::new(o));
    }

    pub(super) fn remove_object(&mut self, o: &StoredObject) {
        let name = o.kind.lookup_name(&o.name);
        self.batch
            .delete(keys::object_key(o.kind.tag(), &o.db, &name));
        self.cat.objects.remove(&(o.kind, o.db.clone(), name));
    }

    /// The triggers of table `db`.`table`.
    pub(super) fn triggers_of(&self, db: &str, table: &str) -> Vec<Arc<StoredObject>> {
        self.cat
            .objects_in(ObjectKind::Trigger, db)
            .filter(|o| o.table.as_deref() == Some(table))
            .cloned()
            .collect()
    }
}

pub(super) fn create_object(
    ch: &mut Change,
    obj: StoredObject,
    or_replace: bool,
    if_not_exists: bool,
) -> Result<()> {
    if !ch.cat.has_database(&obj.db) {
        return Err(EngineError::NoSuchDatabase(obj.db));
    }
    if let Some(t) = &obj.table {
        if ch.cat.table(&obj.db, t).is_none() {
            return Err(EngineError::NoSuchTable {
                db: obj.db.clone(),
                table: t.clone(),
            });
        }
    }
    let taken_by_table = obj.kind == ObjectKind::View && ch.cat.table(&obj.db, &obj.name).is_some();
    let existing = ch.cat.object(obj.kind, &obj.db, &obj.name).cloned();
    if taken_by_table || (existing.is_some() && !or_replace) {
        let err = if taken_by_table {
            EngineError::TableExists(obj.name.clone())
        } else {
            EngineError::ObjectExists {
                kind: obj.kind,
                db: obj.db.clone(),
                name: obj.name.clone(),
            }
        };
        if !if_not_exists {
            return Err(err);
        }
        let e = err.to_sql_error();
        ch.note(e.code, e.message);
        return Ok(());
    }
    if let Some(o) = existing {
        ch.remove_object(&o);
    }
    ch.put_object(obj);
    Ok(())
}

pub(super) fn drop_objects(
    ch: &mut Change,
    kind: ObjectKind,
    names: Vec<(String, String)>,
    if_exists: bool,
) -> Result<()> {
    let mut missing = Vec::new();
    for (d, n) in &names {
        match ch.cat.object(kind, d, n).cloned() {
            Some(o) => ch.remove_object(&o),
            None => missing.push((d.clone(), n.clone())),
        }
    }
    if !missing.is_empty() {
        let err = EngineError::NoSuchObject {
            kind,
            names: missing,
        };
        if !if_exists {
            return Err(err);
        }
        let e = err.to_sql_error();
        ch.note(e.code, e.message);
    }
    Ok(())
}
