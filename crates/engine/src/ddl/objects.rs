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

pub(super) fn alter_object(
    ch: &mut Change,
    from: (String, String),
    obj: StoredObject,
) -> Result<()> {
    let Some(old) = ch.cat.object(obj.kind, &from.0, &from.1).cloned() else {
        return Err(EngineError::NoSuchObject {
            kind: obj.kind,
            names: vec![from],
        });
    };
    if !ch.cat.has_database(&obj.db) {
        return Err(EngineError::NoSuchDatabase(obj.db));
    }
    let same =
        old.db == obj.db && obj.kind.lookup_name(&old.name) == obj.kind.lookup_name(&obj.name);
    if !same && ch.cat.object(obj.kind, &obj.db, &obj.name).is_some() {
        return Err(EngineError::ObjectExists {
            kind: obj.kind,
            db: obj.db.clone(),
            name: obj.name.clone(),
        });
    }
    ch.remove_object(&old);
    ch.put_object(obj);
    Ok(())
}

impl crate::engine::Engine {
    /// Replaces stored object `old` by `new` (same kind, database and name) in the catalog
    /// without logging anything: state the SQL layer keeps beside a definition, such as an
    /// event's last execution time, which MariaDB does not log either. Written with this
    /// mode's WAL setting (in `engine` mode it persists with the next memtable flush or a
    /// clean shutdown). False when the object is no longer `old` (changed or dropped).
    pub fn update_object_unlogged(&self, old: &StoredObject, new: StoredObject) -> Result<bool> {
        let serial = self.ddl_lock.lock();
        let cat = self.catalog();
        if cat.object(old.kind, &old.db, &old.name).map(|o| &**o) != Some(old) {
            return Ok(false);
        }
        let mut ch = Change {
            cat: (*cat).clone(),
            batch: rocksdb::WriteBatch::default(),
            outcome: Default::default(),
            reset: Vec::new(),
        };
        ch.remove_object(old);
        ch.put_object(new);
        self.write_direct(ch.batch)?;
        *self.catalog.write() = Arc::new(ch.cat);
        drop(serial);
        Ok(true)
    }
}
