//! DDL: catalog changes logged as query events, index builds, table rewrites.
//!
//! A DDL statement runs under the DDL mutex with exclusive metadata locks on the tables it
//! touches (so no transaction is using them). It then
//! 1. builds what must exist before the catalog names it (secondary index entries, or a
//!    rewritten copy of the table under new index ids), written straight into RocksDB, not
//!    into the binlog;
//! 2. commits the new catalog records (and range deletions of dropped data) through group
//!    commit together with the statement's QUERY event;
//! 3. swaps the in-memory catalog.
//!
//! Crash safety: until step 2 is durable the new index ids are unreferenced garbage. If the
//! QUERY event is durable but the RocksDB changes are not, recovery re-runs the statement
//! (through the SQL layer's [`crate::DdlReplayer`]); ids are allocated deterministically
//! from the persisted catalog counters, and each build starts by deleting whatever a
//! crashed earlier attempt left under its new ids.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use onelog_types::{code, SqlError, Value};
use rocksdb::{ReadOptions, WriteBatch, DB};

use crate::autoinc;
use crate::catalog::{Catalog, ColumnDef, DatabaseDef, IndexDef, TableDef};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::keycode;
use crate::keys;
use crate::locks::Mode;
use crate::rowcodec;
use crate::txn::{decode_stored_row, mdl_name};

/// One DDL statement, already bound by the SQL layer. The SQL text goes into the binlog as
/// a QUERY event; during recovery the SQL layer re-parses it (see [`crate::DdlReplayer`]).
#[derive(Clone, Debug)]
pub enum Ddl {
    CreateDatabase {
        name: String,
        if_not_exists: bool,
    },
    DropDatabase {
        name: String,
        if_exists: bool,
    },
    /// `def.id` and the index ids are assigned by the engine. A table without a primary
    /// key has `hidden_pk` set and `indexes[0]` is a primary index with no columns.
    CreateTable {
        def: TableDef,
        if_not_exists: bool,
    },
    DropTables {
        tables: Vec<(String, String)>,
        if_exists: bool,
    },
    TruncateTable {
        db: String,
        table: String,
    },
    RenameTables {
        renames: Vec<((String, String), (String, String))>,
    },
    AlterTable {
        db: String,
        table: String,
        ops: Vec<AlterOp>,
    },
}

#[derive(Clone, Debug)]
pub enum AlterOp {
    /// `index.id` is assigned by the engine; `index.columns` are positions in the table as
    /// it is after the preceding ops of the same statement.
    AddIndex(IndexDef),
    DropIndex(String),
    /// Adds a column at `position` (None: at the end).
    AddColumn {
        def: ColumnDef,
        position: Option<usize>,
    },
    DropColumn(String),
}

/// What a DDL statement did, for the OK packet.
#[derive(Clone, Debug, Default)]
pub struct DdlOutcome {
    pub affected_rows: u64,
    /// Notes such as 1007 "Can't create database 'x'; database exists" (IF NOT EXISTS).
    pub warnings: Vec<SqlError>,
}

const CATALOG_DB: u8 = b'd';

/// Loads the catalog from its RocksDB records.
pub(crate) fn load_catalog(db: &DB) -> Result<Catalog> {
    let mut cat = Catalog {
        next_table_id: 1,
        next_index_id: 1,
        ..Default::default()
    };
    if let Some(v) = db.get(keys::CATALOG_NEXT)? {
        if v.len() == 8 {
            cat.next_table_id = u32::from_le_bytes(v[0..4].try_into().unwrap());
            cat.next_index_id = u32::from_le_bytes(v[4..8].try_into().unwrap());
        }
    }
    let mut ro = ReadOptions::default();
    ro.set_iterate_lower_bound(b"Cd".to_vec());
    ro.set_iterate_upper_bound(b"Cu".to_vec());
    let mut it = db.raw_iterator_opt(ro);
    it.seek_to_first();
    while it.valid() {
        let k = it.key().unwrap();
        let v = it.value().unwrap();
        let bad = |e: serde_json::Error| EngineError::Corrupt(format!("catalog record: {e}"));
        if k[1] == CATALOG_DB {
            let d: DatabaseDef = serde_json::from_slice(v).map_err(bad)?;
            cat.databases.insert(d.name.clone(), d);
        } else if k[1] == b't' {
            let t: TableDef = serde_json::from_slice(v).map_err(bad)?;
            cat.tables
                .insert((t.db.clone(), t.name.clone()), Arc::new(t));
        }
        it.next();
    }
    it.status()?;
    Ok(cat)
}

/// The catalog being changed by one statement, with the batch that persists the change.
struct Change {
    cat: Catalog,
    batch: WriteBatch,
    outcome: DdlOutcome,
    /// Tables whose auto-increment counters must be reloaded.
    reset: Vec<u32>,
}

impl Change {
    fn put_table(&mut self, t: TableDef) {
        self.batch.put(
            keys::table_key(t.id),
            serde_json::to_vec(&t).expect("serialise table"),
        );
        self.cat
            .tables
            .insert((t.db.clone(), t.name.clone()), Arc::new(t));
    }

    fn drop_table_data(&mut self, t: &TableDef) {
        for idx in &t.indexes {
            self.batch
                .delete_range(keys::index_prefix(idx.id), keys::index_end(idx.id));
        }
    }

    fn remove_table(&mut self, t: &TableDef) {
        self.drop_table_data(t);
        self.batch.delete(keys::table_key(t.id));
        self.cat.tables.remove(&(t.db.clone(), t.name.clone()));
        self.reset.push(t.id);
    }

    fn note(&mut self, c: u16, msg: String) {
        self.outcome.warnings.push(SqlError::from_code(c, msg));
    }

    fn table(&self, db: &str, name: &str) -> Result<Arc<TableDef>> {
        self.cat
            .table(db, name)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchTable {
                db: db.into(),
                table: name.into(),
            })
    }
}

fn tables_touched(ddl: &Ddl, cat: &Catalog) -> Vec<(String, String)> {
    match ddl {
        Ddl::CreateDatabase { .. } => vec![],
        Ddl::DropDatabase { name, .. } => cat
            .tables_in(name)
            .map(|t| (t.db.clone(), t.name.clone()))
            .collect(),
        Ddl::CreateTable { def, .. } => vec![(def.db.clone(), def.name.clone())],
        Ddl::DropTables { tables, .. } => tables.clone(),
        Ddl::TruncateTable { db, table } | Ddl::AlterTable { db, table, .. } => {
            vec![(db.clone(), table.clone())]
        }
        Ddl::RenameTables { renames } => renames
            .iter()
            .flat_map(|(a, b)| [a.clone(), b.clone()])
            .collect(),
    }
}

pub(crate) fn run(
    engine: &Engine,
    db: &str,
    sql: &str,
    ddl: Ddl,
    replay: bool,
) -> Result<DdlOutcome> {
    let _serial = engine.ddl_lock.lock();
    let lock_owner = engine.next_txn.fetch_add(1, Ordering::Relaxed);
    let mut held = Vec::new();
    let result = (|| {
        if !replay {
            for (d, t) in tables_touched(&ddl, &engine.catalog()) {
                let name = mdl_name(&d, &t);
                if engine.locks.acquire(
                    lock_owner,
                    &name,
                    Mode::Exclusive,
                    engine.lock_timeout(),
                    None,
                )? {
                    held.push(name);
                }
            }
        }
        let mut ch = Change {
            cat: (*engine.catalog()).clone(),
            batch: WriteBatch::default(),
            outcome: DdlOutcome::default(),
            reset: Vec::new(),
        };
        apply(engine, &mut ch, ddl)?;
        let mut next = Vec::with_capacity(8);
        next.extend_from_slice(&ch.cat.next_table_id.to_le_bytes());
        next.extend_from_slice(&ch.cat.next_index_id.to_le_bytes());
        ch.batch.put(keys::CATALOG_NEXT, next);
        if replay {
            let mut batch = ch.batch;
            if let Some(pos) = *engine.replay_pos.lock() {
                batch.put(keys::APPLIED, pos.encode());
            }
            engine.write_direct(batch)?;
        } else {
            let group = engine.wal.ddl_group(db, sql)?;
            let xid = engine.wal.next_xid();
            engine.committer.submit(Some(ch.batch), group, xid)?;
        }
        *engine.catalog.write() = Arc::new(ch.cat);
        for id in ch.reset {
            autoinc::reset(engine, id);
        }
        Ok(ch.outcome)
    })();
    engine.locks.release_all(lock_owner, &held);
    result
}

fn apply(engine: &Engine, ch: &mut Change, ddl: Ddl) -> Result<()> {
    match ddl {
        Ddl::CreateDatabase {
            name,
            if_not_exists,
        } => {
            if ch.cat.has_database(&name) {
                if !if_not_exists {
                    return Err(EngineError::DatabaseExists(name));
                }
                ch.note(
                    code::ER_DB_CREATE_EXISTS,
                    format!("Can't create database '{name}'; database exists"),
                );
                return Ok(());
            }
            let d = DatabaseDef { name: name.clone() };
            ch.batch
                .put(keys::db_key(&name), serde_json::to_vec(&d).unwrap());
            ch.cat.databases.insert(name, d);
            ch.outcome.affected_rows = 1;
        }
        Ddl::DropDatabase { name, if_exists } => {
            if !ch.cat.has_database(&name) {
                if !if_exists {
                    return Err(EngineError::DropMissingDatabase(name));
                }
                ch.note(
                    code::ER_DB_DROP_EXISTS,
                    format!("Can't drop database '{name}'; database doesn't exist"),
                );
                return Ok(());
            }
            let tables: Vec<Arc<TableDef>> = ch.cat.tables_in(&name).cloned().collect();
            for t in &tables {
                ch.remove_table(t);
            }
            ch.batch.delete(keys::db_key(&name));
            ch.cat.databases.remove(&name);
            ch.outcome.affected_rows = tables.len() as u64;
        }
        Ddl::CreateTable {
            mut def,
            if_not_exists,
        } => {
            if !ch.cat.has_database(&def.db) {
                return Err(EngineError::NoSuchDatabase(def.db));
            }
            if ch.cat.table(&def.db, &def.name).is_some() {
                if !if_not_exists {
                    return Err(EngineError::TableExists(def.name));
                }
                ch.note(
                    code::ER_TABLE_EXISTS_ERROR,
                    format!("Table '{}' already exists", def.name),
                );
                return Ok(());
            }
            if def.indexes.first().is_none_or(|i| !i.primary) {
                def.hidden_pk = true;
                def.indexes.insert(
                    0,
                    IndexDef {
                        id: 0,
                        name: "PRIMARY".into(),
                        columns: vec![],
                        prefix_lens: vec![],
                        unique: true,
                        primary: true,
                    },
                );
            }
            validate(&def)?;
            def.id = ch.cat.next_table_id;
            ch.cat.next_table_id += 1;
            for idx in &mut def.indexes {
                idx.id = ch.cat.next_index_id;
                ch.cat.next_index_id += 1;
            }
            // Nothing may linger under the new ids (a crashed attempt).
            ch.drop_table_data(&def);
            ch.reset.push(def.id);
            ch.put_table(def);
        }
        Ddl::DropTables { tables, if_exists } => {
            let mut missing = Vec::new();
            for (d, t) in &tables {
                if ch.cat.table(d, t).is_none() {
                    missing.push(format!("{d}.{t}"));
                }
            }
            if !missing.is_empty() {
                if !if_exists {
                    return Err(EngineError::UnknownTable(missing.join(",")));
                }
                for m in &missing {
                    ch.note(code::ER_BAD_TABLE_ERROR, format!("Unknown table '{m}'"));
                }
            }
            for (d, t) in &tables {
                if let Some(def) = ch.cat.table(d, t).cloned() {
                    ch.remove_table(&def);
                }
            }
        }
        Ddl::TruncateTable { db, table } => {
            let t = ch.table(&db, &table)?;
            ch.drop_table_data(&t);
            ch.reset.push(t.id);
        }
        Ddl::RenameTables { renames } => {
            for ((fd, ft), (td, tt)) in renames {
                let t = ch.table(&fd, &ft)?;
                if !ch.cat.has_database(&td) {
                    return Err(EngineError::NoSuchDatabase(td));
                }
                if ch.cat.table(&td, &tt).is_some() {
                    return Err(EngineError::TableExists(tt));
                }
                ch.cat.tables.remove(&(fd, ft));
                let mut nt = (*t).clone();
                nt.db = td;
                nt.name = tt;
                ch.put_table(nt);
            }
        }
        Ddl::AlterTable { db, table, ops } => alter(engine, ch, &db, &table, ops)?,
    }
    Ok(())
}

fn validate(t: &TableDef) -> Result<()> {
    if t.indexes.iter().filter(|i| i.primary).count() > 1 {
        return Err(EngineError::MultiplePrimaryKey);
    }
    for (i, c) in t.columns.iter().enumerate() {
        if t.columns[..i]
            .iter()
            .any(|o| o.name.eq_ignore_ascii_case(&c.name))
        {
            return Err(EngineError::DuplicateColumn(c.name.clone()));
        }
    }
    for (i, idx) in t.indexes.iter().enumerate() {
        if t.indexes[..i]
            .iter()
            .any(|o| o.name.eq_ignore_ascii_case(&idx.name))
        {
            return Err(EngineError::DuplicateIndexName(idx.name.clone()));
        }
        if let Some(&c) = idx.columns.iter().find(|&&c| c >= t.columns.len()) {
            return Err(EngineError::KeyColumnMissing(format!("#{c}")));
        }
    }
    Ok(())
}

fn alter(engine: &Engine, ch: &mut Change, db: &str, table: &str, ops: Vec<AlterOp>) -> Result<()> {
    let old = ch.table(db, table)?;
    let mut new = (*old).clone();
    // For each column of the new table: its position in the old one (None: added).
    let mut origin: Vec<Option<usize>> = (0..old.columns.len()).map(Some).collect();
    let mut rewrite = false;
    let mut added_indexes = Vec::new();
    for op in ops {
        match op {
            AlterOp::AddIndex(mut idx) => {
                if new.index_by_name(&idx.name).is_some() {
                    return Err(EngineError::DuplicateIndexName(idx.name));
                }
                if idx.primary {
                    if !new.hidden_pk {
                        return Err(EngineError::MultiplePrimaryKey);
                    }
                    // Replacing the hidden primary key: the table is rebuilt.
                    new.hidden_pk = false;
                    new.indexes[0] = idx;
                    rewrite = true;
                    continue;
                }
                idx.id = 0;
                added_indexes.push(idx.name.clone());
                new.indexes.push(idx);
            }
            AlterOp::DropIndex(name) => {
                let Some((pos, idx)) = new.index_by_name(&name) else {
                    return Err(EngineError::NoSuchIndex(name));
                };
                if idx.primary {
                    new.hidden_pk = true;
                    new.indexes[0].columns.clear();
                    new.indexes[0].prefix_lens.clear();
                    rewrite = true;
                } else {
                    new.indexes.remove(pos);
                    added_indexes.retain(|n| !n.eq_ignore_ascii_case(&name));
                }
            }
            AlterOp::AddColumn { def, position } => {
                if new.column_index(&def.name).is_some() {
                    return Err(EngineError::DuplicateColumn(def.name));
                }
                let pos = position.unwrap_or(new.columns.len()).min(new.columns.len());
                new.columns.insert(pos, def);
                origin.insert(pos, None);
                for idx in &mut new.indexes {
                    for c in &mut idx.columns {
                        if *c >= pos {
                            *c += 1;
                        }
                    }
                }
                rewrite = true;
            }
            AlterOp::DropColumn(name) => {
                let Some(pos) = new.column_index(&name) else {
                    return Err(EngineError::NoSuchColumn(name));
                };
                if new.columns.len() == 1 {
                    return Err(EngineError::Other(
                        "You can't delete all columns with ALTER TABLE; use DROP TABLE instead"
                            .into(),
                    ));
                }
                new.columns.remove(pos);
                origin.remove(pos);
                // As MariaDB: the column leaves every index; an index left empty is dropped.
                for idx in &mut new.indexes {
                    if let Some(i) = idx.columns.iter().position(|&c| c == pos) {
                        idx.columns.remove(i);
                        if i < idx.prefix_lens.len() {
                            idx.prefix_lens.remove(i);
                        }
                    }
                    for c in &mut idx.columns {
                        if *c > pos {
                            *c -= 1;
                        }
                    }
                }
                if new.indexes[0].primary && new.indexes[0].columns.is_empty() {
                    new.hidden_pk = true;
                }
                let keep: Vec<IndexDef> = new
                    .indexes
                    .iter()
                    .enumerate()
                    .filter(|(i, idx)| *i == 0 || !idx.columns.is_empty())
                    .map(|(_, idx)| idx.clone())
                    .collect();
                new.indexes = keep;
                rewrite = true;
            }
        }
    }
    validate(&new)?;
    // Allocate ids: every index when rewriting, else only the added ones.
    for idx in &mut new.indexes {
        let fresh = rewrite
            || added_indexes
                .iter()
                .any(|n| n.eq_ignore_ascii_case(&idx.name));
        if fresh {
            idx.id = ch.cat.next_index_id;
            ch.cat.next_index_id += 1;
        }
    }
    let build: Vec<usize> = (0..new.indexes.len())
        .filter(|&i| rewrite || !old.indexes.iter().any(|o| o.id == new.indexes[i].id))
        .collect();
    build_indexes(engine, &old, &new, &origin, rewrite, &build)?;
    // Drop the data of indexes that no longer exist.
    for idx in &old.indexes {
        if !new.indexes.iter().any(|n| n.id == idx.id) {
            ch.batch
                .delete_range(keys::index_prefix(idx.id), keys::index_end(idx.id));
        }
    }
    ch.reset.push(new.id);
    ch.put_table(new);
    Ok(())
}

/// Writes the entries of `new.indexes[build]` from the rows of `old` (rewriting the rows
/// too when `rewrite`), directly into RocksDB. Checks unique indexes; on failure removes
/// what it wrote.
fn build_indexes(
    engine: &Engine,
    old: &TableDef,
    new: &TableDef,
    origin: &[Option<usize>],
    rewrite: bool,
    build: &[usize],
) -> Result<()> {
    if build.is_empty() {
        return Ok(());
    }
    let clear = |engine: &Engine| -> Result<()> {
        let mut b = WriteBatch::default();
        for &i in build {
            let id = new.indexes[i].id;
            b.delete_range(keys::index_prefix(id), keys::index_end(id));
        }
        engine.write_direct(b)
    };
    clear(engine)?;
    let result = (|| {
        let pid = old.primary().id;
        let mut ro = ReadOptions::default();
        ro.set_iterate_lower_bound(keys::index_prefix(pid));
        ro.set_iterate_upper_bound(keys::index_end(pid));
        let mut it = engine.db.raw_iterator_opt(ro);
        it.seek_to_first();
        let old_pk_types = keys::pk_types(old);
        let mut batch = WriteBatch::default();
        let mut rowid = 0u64;
        while it.valid() {
            // Rows hold every column; only a hidden row id comes from the key.
            let mut rest = &it.key().unwrap()[5..];
            let mut pk = Vec::new();
            if old.hidden_pk {
                for ty in &old_pk_types {
                    pk.push(keycode::decode(&mut rest, ty)?);
                }
            }
            let old_row = decode_stored_row(old, it.value().unwrap(), &pk)?;
            let row: Vec<Value> = if rewrite {
                origin
                    .iter()
                    .zip(&new.columns)
                    .map(|(o, c)| match o {
                        Some(i) => old_row[*i].clone(),
                        None => crate::catalog::implicit_default(c),
                    })
                    .collect()
            } else {
                old_row[..old.columns.len()].to_vec()
            };
            let new_pk = if new.hidden_pk {
                if old.hidden_pk {
                    pk.clone()
                } else {
                    rowid += 1;
                    vec![Value::UInt(rowid)]
                }
            } else {
                keys::pk_values(new, &row)
            };
            if rewrite {
                let k = keys::encode_tuple(new.primary().id, &keys::pk_types(new), &new_pk)?;
                batch.put(k, rowcodec::encode_row(&row));
            }
            for &i in build {
                let idx = &new.indexes[i];
                if !idx.primary {
                    batch.put(keys::secondary_key(new, idx, &row, &new_pk)?, b"");
                }
            }
            if batch.size_in_bytes() > 4 << 20 {
                engine.write_direct(std::mem::take(&mut batch))?;
            }
            it.next();
        }
        it.status()?;
        engine.write_direct(batch)?;
        if rewrite && !new.hidden_pk {
            check_unique(engine, new, 0)?;
        }
        for &i in build {
            if new.indexes[i].unique && !new.indexes[i].primary {
                check_unique(engine, new, i)?;
            }
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = clear(engine);
    }
    result
}

/// Fails with a duplicate-key error if two entries of a unique index share key values.
/// (Rewrites of the primary key collapse duplicates into one key: compare row counts.)
fn check_unique(engine: &Engine, t: &TableDef, i: usize) -> Result<()> {
    let idx = &t.indexes[i];
    let types = keys::index_types(t, idx);
    let mut ro = ReadOptions::default();
    ro.set_iterate_lower_bound(keys::index_prefix(idx.id));
    ro.set_iterate_upper_bound(keys::index_end(idx.id));
    let mut it = engine.db.raw_iterator_opt(ro);
    it.seek_to_first();
    let mut prev: Option<Vec<u8>> = None;
    while it.valid() {
        let key = it.key().unwrap();
        let mut rest = &key[5..];
        let mut has_null = false;
        for ty in &types {
            has_null |= keycode::is_null(rest);
            keycode::skip(&mut rest, ty)?;
        }
        let prefix_len = key.len() - rest.len();
        let prefix = key[..prefix_len].to_vec();
        if !has_null && prev.as_deref() == Some(&prefix[..]) {
            return Err(EngineError::DuplicateKey {
                key: idx.name.clone(),
                value: duplicate_value(engine, t, idx, it.value().unwrap(), rest)?
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join("-"),
            });
        }
        prev = Some(prefix);
        it.next();
    }
    it.status()?;
    Ok(())
}

/// The key values of a duplicate entry for the error message, as stored in its row (keys of
/// general_ci columns hold weights): `value` is the entry's value, `pk` the encoded primary
/// key that ends a secondary entry.
fn duplicate_value(
    engine: &Engine,
    t: &TableDef,
    idx: &IndexDef,
    value: &[u8],
    mut pk: &[u8],
) -> Result<Vec<Value>> {
    let raw = if idx.primary {
        Some(value.to_vec())
    } else {
        let mut key = keys::index_prefix(t.primary().id);
        key.extend_from_slice(pk);
        engine.db.get(&key)?
    };
    let Some(raw) = raw else {
        return Err(EngineError::Corrupt(format!(
            "index {} of {} has an entry without a row",
            idx.name, t.name
        )));
    };
    let rowid = if t.hidden_pk && !idx.primary {
        vec![keycode::decode(&mut pk, &keys::ROWID_TYPE)?]
    } else {
        vec![Value::Null]
    };
    let row = decode_stored_row(t, &raw, &rowid)?;
    Ok(if idx.primary {
        keys::pk_values(t, &row)
    } else {
        keys::secondary_values(t, idx, &row)
    })
}
