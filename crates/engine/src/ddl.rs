//! DDL: catalog changes logged as query events, index builds, table rewrites.
//!
//! A DDL statement takes exclusive metadata locks on the tables it touches (so no
//! transaction is using them), in name order, then the DDL mutex, which serialises catalog
//! changes. It then
//! 1. builds what must exist before the catalog names it (secondary index entries, or a
//!    rewritten copy of the table under new index ids), written straight into RocksDB, not
//!    into the binlog: sorted into table files that RocksDB ingests whole (`bulk.rs`), so
//!    that commits elsewhere do not queue behind the build's writes; through the memtable
//!    when the new primary key must be checked for duplicates as rows are written, or when
//!    something is already stored under the new ids;
//! 2. commits the new catalog records (and range deletions of dropped data) through group
//!    commit together with the statement's QUERY event;
//! 3. swaps the in-memory catalog.
//!
//! ALTER TABLE leaves the DDL mutex during step 1, which can take long (every row of the
//! table is read): it takes the ids to build under from the published catalog's counter
//! first, builds under its metadata lock alone, and takes the mutex again for steps 2-3.
//! DDL on other tables goes on meanwhile.
//!
//! ALTER TABLE rewrites the table (its primary index under a new id) when the stored rows
//! change: columns added, dropped or moved, a column's type changed in a way that changes
//! its stored values, a primary key added or dropped. Values of changed columns go through
//! the statement's [`ColumnConverter`] (the SQL layer's conversions and strict-mode
//! errors). Secondary indexes whose key columns and primary key are unchanged keep their
//! entries; the others are rebuilt under new ids. Renames and default changes only change
//! the catalog.
//!
//! Crash safety: until step 2 is durable the new index ids are unreferenced garbage. If the
//! QUERY event is durable but the RocksDB changes are not, recovery re-runs the statement
//! (through the SQL layer's [`crate::DdlReplayer`]); ids are allocated deterministically
//! from the persisted catalog counters, and each build starts by deleting whatever a
//! crashed earlier attempt left under its new ids. A build cut short by a crash after
//! another DDL committed a higher counter leaves data under ids nobody takes again; the
//! engine clears index data that no table names once recovery is done
//! ([`sweep_unnamed_indexes`]).

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use onelog_types::{code, ColumnType, SqlError, Value};
use rocksdb::{WriteBatch, DB};

use crate::autoinc;
use crate::bulk::BulkLoad;
use crate::catalog::{
    Catalog, ColumnDef, DatabaseDef, IndexDef, ObjectKind, StoredObject, TableDef,
};
use crate::engine::{range_iter, Engine};
use crate::error::{EngineError, Result};
use crate::keycode;
use crate::keys;
use crate::locks::Mode;
use crate::rowcodec;
use crate::txn::{decode_stored_row, mdl_name};

mod create;
pub(crate) mod create_select;
mod index_build;
mod objects;
mod sequence;
mod temp;
use create::create_table;
pub(crate) use index_build::sweep_unnamed_indexes;
use index_build::{build_indexes, clear_indexes, count_rows};
use objects::{alter_object, create_object, drop_objects};
pub(crate) use temp::is_temp_key;
pub use temp::{is_temp, TEMP_ID_BASE};

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
    /// `or_replace`: an existing table of that name is dropped first (CREATE OR REPLACE).
    CreateTable {
        def: TableDef,
        if_not_exists: bool,
        or_replace: bool,
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
        /// Converts the values of columns whose type changes (needed only then).
        convert: Option<Converter>,
    },
    /// Creates a view, routine, trigger or event (`or_replace`: replacing one of the same
    /// kind and name; `if_not_exists`: a note instead of an error when it exists).
    CreateObject {
        obj: StoredObject,
        or_replace: bool,
        if_not_exists: bool,
    },
    /// Replaces object `from` (db, name) of `obj`'s kind by `obj`, which may have another
    /// name or database (ALTER EVENT ... RENAME TO).
    AlterObject {
        from: (String, String),
        obj: StoredObject,
    },
    /// Drops objects of one kind: (db, name) each.
    DropObjects {
        kind: ObjectKind,
        names: Vec<(String, String)>,
        if_exists: bool,
    },
    /// CREATE [OR REPLACE] SEQUENCE: the table (`def` with MariaDB's sequence columns) and
    /// its first row.
    CreateSequence {
        def: TableDef,
        row: crate::SeqDef,
        or_replace: bool,
        if_not_exists: bool,
    },
    /// ALTER SEQUENCE: the sequence's row replaced.
    SetSequenceRow {
        db: String,
        table: String,
        row: crate::SeqDef,
    },
    /// A statement that changes no catalog or data but is logged as DDL is, for replicas:
    /// ANALYZE, OPTIMIZE and REPAIR TABLE (MariaDB logs them as QUERY events).
    LogOnly,
}

/// Converts stored values when ALTER TABLE changes a column's type or makes it NOT NULL.
/// Supplied by the SQL layer, which knows MariaDB's conversions and strict mode.
pub trait ColumnConverter: Send + Sync {
    /// The value of old column `from` as new column `to` holds it, for row number `row`
    /// (1-based, in primary key order, for messages). An error aborts the statement.
    fn convert(
        &self,
        from: &ColumnDef,
        to: &ColumnDef,
        value: Value,
        row: u64,
    ) -> Result<Value, SqlError>;

    /// The value added column `col` of `new` takes in row number `n`, whose other columns
    /// are in `row` (positions of `new`): its expression DEFAULT computed for this row.
    /// None: the column's implicit default.
    fn added(
        &self,
        _new: &TableDef,
        _col: usize,
        _row: &[Value],
        _n: u64,
    ) -> Result<Option<Value>, SqlError> {
        Ok(None)
    }
}

/// A shared [`ColumnConverter`].
#[derive(Clone)]
pub struct Converter(pub Arc<dyn ColumnConverter>);

impl std::fmt::Debug for Converter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Converter")
    }
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
    /// Replaces column `name` by `def` (MODIFY / CHANGE / RENAME COLUMN / ALTER COLUMN ...
    /// SET|DROP DEFAULT), moving it to index `position` of the resulting column list when
    /// given (FIRST / AFTER). Index column positions follow the move.
    ChangeColumn {
        name: String,
        def: ColumnDef,
        position: Option<usize>,
    },
    /// Adds a CHECK constraint (the SQL layer has checked the rows and the name).
    AddCheck(crate::CheckDef),
    /// Drops the CHECK constraint of this name.
    DropCheck(String),
    /// Adds a FOREIGN KEY constraint (the SQL layer has checked its definition and rows).
    AddForeignKey(crate::ForeignKeyDef),
    /// Drops the FOREIGN KEY constraint of this name.
    DropForeignKey(String),
    /// Changes table options (ENGINE=, COMMENT=, AUTO_INCREMENT=, DEFAULT CHARSET=,
    /// ROW_FORMAT=, ...): the definition only, no row is rewritten.
    SetOptions(crate::TableOptionSet),
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
        if v.len() != 8 {
            return Err(EngineError::Corrupt(format!(
                "catalog id record of {} bytes",
                v.len()
            )));
        }
        cat.next_table_id = u32::from_le_bytes(v[0..4].try_into().unwrap());
        cat.next_index_id = u32::from_le_bytes(v[4..8].try_into().unwrap());
    }
    let mut it = range_iter(db, b"Cd".to_vec(), b"Cu".to_vec());
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
        } else if k[1] == b'o' {
            let o: StoredObject = serde_json::from_slice(v).map_err(bad)?;
            let key = (o.kind, o.db.clone(), o.kind.lookup_name(&o.name));
            cat.objects.insert(key, Arc::new(o));
        }
        it.next();
    }
    it.status()?;
    Ok(cat)
}

/// The catalog being changed by one statement, with the batch that persists the change.
pub(crate) struct Change {
    pub(crate) cat: Catalog,
    batch: WriteBatch,
    outcome: DdlOutcome,
    /// Tables whose auto-increment counters must be reloaded.
    reset: Vec<u32>,
}

impl Change {
    pub(crate) fn put_table(&mut self, t: TableDef) {
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
        for trg in self.triggers_of(&t.db, &t.name) {
            self.remove_object(&trg);
        }
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
        Ddl::CreateTable { def, .. } | Ddl::CreateSequence { def, .. } => {
            vec![(def.db.clone(), def.name.clone())]
        }
        Ddl::SetSequenceRow { db, table, .. } => vec![(db.clone(), table.clone())],
        Ddl::DropTables { tables, .. } => tables.clone(),
        Ddl::TruncateTable { db, table } | Ddl::AlterTable { db, table, .. } => {
            vec![(db.clone(), table.clone())]
        }
        Ddl::RenameTables { renames } => renames
            .iter()
            .flat_map(|(a, b)| [a.clone(), b.clone()])
            .collect(),
        Ddl::CreateObject { obj, .. } => match (obj.kind, &obj.table) {
            (ObjectKind::View, _) => vec![(obj.db.clone(), obj.name.clone())],
            (_, Some(t)) => vec![(obj.db.clone(), t.clone())],
            _ => vec![],
        },
        Ddl::AlterObject { .. } => vec![],
        Ddl::DropObjects { kind, names, .. } => match kind {
            ObjectKind::View => names.clone(),
            ObjectKind::Trigger => names
                .iter()
                .filter_map(|(d, n)| cat.object(*kind, d, n))
                .filter_map(|o| Some((o.db.clone(), o.table.clone()?)))
                .collect(),
            _ => vec![],
        },
        Ddl::LogOnly => vec![],
    }
}

/// How a DDL statement is logged.
#[derive(Clone, Copy, Debug, Default)]
pub struct DdlLog {
    /// The GTID to log it under instead of the next one of this server (a statement
    /// applied by replication keeps its primary's).
    pub gtid: Option<onelog_binlog::Gtid>,
    /// Its session ran with `foreign_key_checks=0`: the QUERY event's Q_FLAGS2 says so,
    /// and a replica runs it with the checks off too (a CREATE TABLE naming a parent that
    /// does not exist yet, as `mariadb-dump` output has).
    pub no_foreign_key_checks: bool,
}

pub(crate) fn run(
    engine: &Engine,
    db: &str,
    sql: &str,
    ddl: Ddl,
    replay: bool,
    log: DdlLog,
) -> Result<DdlOutcome> {
    let lock_owner = engine.next_txn.fetch_add(1, Ordering::Relaxed);
    let mut held = Vec::new();
    let result = run_holding(engine, db, sql, ddl, (replay, log), lock_owner, &mut held);
    engine.locks.release_all(lock_owner, &held);
    result
}

/// [`run`] with the metadata locks taken under `owner` (a session's `LOCK TABLES` id):
/// those it already holds exclusively are neither waited for nor released.
pub(crate) fn run_owned(
    engine: &Engine,
    db: &str,
    sql: &str,
    ddl: Ddl,
    log: DdlLog,
    owner: u64,
) -> Result<DdlOutcome> {
    let mut held = Vec::new();
    let result = run_holding(engine, db, sql, ddl, (false, log), owner, &mut held);
    engine.locks.release_all(owner, &held);
    result
}

/// Takes the exclusive metadata locks of the tables `ddl` touches (adding what it takes to
/// `held`), then the DDL mutex, which it returns. The locks come first and in name order,
/// so a DDL waiting for a table keeps no other DDL waiting, and DDLs never wait for each
/// other in a cycle. A table that appeared meanwhile (DROP DATABASE beside CREATE TABLE)
/// is locked on another round.
fn lock_tables<'e>(
    engine: &'e Engine,
    ddl: &Ddl,
    replay: bool,
    owner: u64,
    held: &mut Vec<Vec<u8>>,
) -> Result<parking_lot::MutexGuard<'e, ()>> {
    // Locks `owner` held before (a session's LOCK TABLES): taken, but not released here.
    let mut owned: Vec<Vec<u8>> = Vec::new();
    loop {
        let missing = |held: &Vec<Vec<u8>>, owned: &Vec<Vec<u8>>| -> Vec<Vec<u8>> {
            let mut names: Vec<Vec<u8>> = tables_touched(ddl, &engine.catalog())
                .iter()
                .map(|(d, t)| mdl_name(d, t))
                .filter(|n| !held.contains(n) && !owned.contains(n))
                .collect();
            names.sort();
            names.dedup();
            names
        };
        if !replay {
            for name in missing(held, &owned) {
                if engine.locks.acquire(
                    owner,
                    &name,
                    Mode::Exclusive,
                    engine.lock_timeout(),
                    None,
                )? {
                    held.push(name);
                } else {
                    owned.push(name);
                }
            }
        }
        let serial = engine.ddl_lock.lock();
        if replay || missing(held, &owned).is_empty() {
            return Ok(serial);
        }
    }
}

/// `log`: (replaying from the binlog, how the statement is logged).
fn run_holding(
    engine: &Engine,
    db: &str,
    sql: &str,
    ddl: Ddl,
    log: (bool, DdlLog),
    owner: u64,
    held: &mut Vec<Vec<u8>>,
) -> Result<DdlOutcome> {
    let (replay, log) = log;
    let mut serial = lock_tables(engine, &ddl, replay, owner, held)?;
    let change = |engine: &Engine| Change {
        cat: (*engine.catalog()).clone(),
        batch: WriteBatch::default(),
        outcome: DdlOutcome::default(),
        reset: Vec::new(),
    };
    let mut ch;
    let mut persist_before_publish = false;
    if let Ddl::AlterTable {
        db: tdb,
        table,
        ops,
        convert,
    } = ddl
    {
        // The long part of ALTER TABLE (building indexes, rewriting rows) runs without the
        // DDL mutex, under the table's exclusive metadata lock only: DDL on other tables
        // goes on meanwhile. The index ids it builds under are taken from the published
        // catalog's counter first, so no concurrent DDL takes them too.
        let plan = {
            let mut cat = (*engine.catalog()).clone();
            let plan = plan_alter(&mut cat, &tdb, &table, ops, convert)?;
            *engine.catalog.write() = Arc::new(cat);
            plan
        };
        drop(serial);
        let affected = build_alter(engine, &plan)?;
        // Values of added columns with an expression DEFAULT (`uuid()`, `rand()`) would
        // come out different if recovery re-ran the statement: they are made durable
        // before anyone can read them (below).
        persist_before_publish = !replay
            && plan.rewrite
            && plan
                .new
                .columns
                .iter()
                .zip(&plan.origin)
                .any(|(c, o)| o.is_none() && c.default_expr.is_some());
        serial = engine.ddl_lock.lock();
        ch = change(engine);
        // Its metadata lock keeps the table as planned; anything else is a bug, and the
        // built indexes are removed.
        if !ch
            .cat
            .table(&plan.old.db, &plan.old.name)
            .is_some_and(|t| Arc::ptr_eq(t, &plan.old))
        {
            let built: Vec<u32> = plan.build.iter().map(|&i| plan.new.indexes[i].id).collect();
            let _ = clear_indexes(engine, &built);
            let why = format!("table {}.{} changed during ALTER TABLE", tdb, table);
            return Err(EngineError::Other(why));
        }
        finish_alter(&mut ch, plan, affected);
    } else {
        ch = change(engine);
        apply(&mut ch, ddl)?;
    }
    let mut next = Vec::with_capacity(8);
    next.extend_from_slice(&ch.cat.next_table_id.to_le_bytes());
    next.extend_from_slice(&ch.cat.next_index_id.to_le_bytes());
    ch.batch.put(keys::CATALOG_NEXT, next);
    if replay {
        let mut batch = ch.batch;
        let mut held = engine.replay_hold.lock();
        if let Some(h) = held.as_mut() {
            // The catalog change of a replayed CREATE TABLE ... SELECT: written with its
            // rows (`recovery.rs`).
            *h = batch;
        } else {
            if let Some(pos) = *engine.replay_pos.lock() {
                batch.put(keys::APPLIED, pos.encode());
            }
            engine.write_direct(batch)?;
        }
    } else {
        let group = engine.wal.ddl_group(db, sql, log)?;
        let xid = engine.wal.next_xid();
        engine.committer.submit(Some(ch.batch), group, xid)?;
        if persist_before_publish {
            engine.checkpoint()?;
        }
    }
    *engine.catalog.write() = Arc::new(ch.cat);
    for id in ch.reset {
        autoinc::reset(engine, id);
    }
    drop(serial);
    Ok(ch.outcome)
}

fn apply(ch: &mut Change, ddl: Ddl) -> Result<()> {
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
            let objects: Vec<Arc<StoredObject>> = ch
                .cat
                .objects
                .values()
                .filter(|o| o.db == name)
                .cloned()
                .collect();
            for o in &objects {
                ch.remove_object(o);
            }
            ch.batch.delete(keys::db_key(&name));
            ch.cat.databases.remove(&name);
            ch.outcome.affected_rows = tables.len() as u64;
        }
        Ddl::CreateTable {
            def,
            if_not_exists,
            or_replace,
        } => {
            if or_replace && ch.cat.has_database(&def.db) {
                if let Some(old) = ch.cat.table(&def.db, &def.name).cloned() {
                    ch.remove_table(&old);
                }
            }
            create_table(ch, def, if_not_exists)?;
        }
        Ddl::CreateSequence {
            def,
            row,
            or_replace,
            if_not_exists,
        } => sequence::create(ch, def, &row, or_replace, if_not_exists)?,
        Ddl::SetSequenceRow { db, table, row } => sequence::set_row(ch, &db, &table, &row)?,
        Ddl::DropTables { tables, if_exists } => {
            let mut missing = Vec::new();
            for (d, t) in &tables {
                if ch.cat.table(d, t).is_none() {
                    if ch.cat.object(ObjectKind::View, d, t).is_some() {
                        let e = EngineError::IsView(format!("{d}.{t}"));
                        if !if_exists {
                            return Err(e);
                        }
                        let e = e.to_sql_error();
                        ch.note(e.code, e.message);
                        continue;
                    }
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
        Ddl::LogOnly => {}
        Ddl::RenameTables { renames } => {
            for ((fd, ft), (td, tt)) in renames {
                if !ch.cat.has_database(&td) {
                    return Err(EngineError::NoSuchDatabase(td));
                }
                if ch.cat.table(&td, &tt).is_some()
                    || ch.cat.object(ObjectKind::View, &td, &tt).is_some()
                {
                    return Err(EngineError::TableExists(tt));
                }
                if ch.cat.table(&fd, &ft).is_none() {
                    if let Some(v) = ch.cat.object(ObjectKind::View, &fd, &ft).cloned() {
                        ch.remove_object(&v);
                        let mut nv = (*v).clone();
                        nv.db = td;
                        nv.name = tt;
                        ch.put_object(nv);
                        continue;
                    }
                }
                let t = ch.table(&fd, &ft)?;
                for trg in ch.triggers_of(&fd, &ft) {
                    ch.remove_object(&trg);
                    let mut nt = (*trg).clone();
                    nt.db = td.clone();
                    nt.table = Some(tt.clone());
                    ch.put_object(nt);
                }
                ch.cat.tables.remove(&(fd.clone(), ft.clone()));
                let mut nt = (*t).clone();
                nt.db = td.clone();
                nt.name = tt.clone();
                // Its definition file renamed: MariaDB shows that as its create time.
                nt.create_time = Some(crate::table_options::now_secs());
                crate::foreign_keys::rename_table(&mut nt, (&fd, &ft), (&td, &tt), true);
                ch.put_table(nt);
                crate::foreign_keys::follow_table_rename(ch, (&fd, &ft), (&td, &tt));
            }
        }
        Ddl::CreateObject {
            obj,
            or_replace,
            if_not_exists,
        } => create_object(ch, obj, or_replace, if_not_exists)?,
        Ddl::AlterObject { from, obj } => alter_object(ch, from, obj)?,
        Ddl::DropObjects {
            kind,
            names,
            if_exists,
        } => drop_objects(ch, kind, names, if_exists)?,
        // Built in phases by `run_holding`.
        Ddl::AlterTable { .. } => unreachable!("ALTER TABLE goes through plan_alter"),
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

/// Whether values of a column of type `from` are stored unchanged, with the same key
/// encoding, in a column of type `to` (a widening of the same kind).
fn same_storage(from: &ColumnType, to: &ColumnType) -> bool {
    use ColumnType as T;
    match (from, to) {
        _ if from == to => true,
        (
            T::Int {
                bytes: a,
                unsigned: ua,
            },
            T::Int {
                bytes: b,
                unsigned: ub,
            },
        ) => ua == ub && b >= a,
        // Index keys of text depend on the collation (general_ci keys hold weights).
        (
            T::Varchar {
                len: a,
                binary: ba,
                collation: ca,
            },
            T::Varchar {
                len: b,
                binary: bb,
                collation: cb,
            },
        ) => ba == bb && ca == cb && b >= a,
        (
            T::Decimal {
                precision: pa,
                scale: sa,
            },
            T::Decimal {
                precision: pb,
                scale: sb,
            },
        ) => sa == sb && pb >= pa,
        _ => false,
    }
}

/// Whether ALTER TABLE must convert the stored values of column `from` becoming `to`.
fn needs_conversion(from: &ColumnDef, to: &ColumnDef) -> bool {
    !same_storage(&from.ty, &to.ty) || (from.nullable && !to.nullable)
}

/// The new position of column `c` when the column at `from` moves to `to`.
fn moved(c: usize, from: usize, to: usize) -> usize {
    if c == from {
        return to;
    }
    let c = if c > from { c - 1 } else { c };
    if c >= to {
        c + 1
    } else {
        c
    }
}

/// How a rewrite builds each column of the new table from a row of the old one.
struct RowMap<'a> {
    /// For each new column: its position in the old table (None: added).
    origin: Vec<Option<usize>>,
    /// For each new column: whether its values go through the converter.
    conv: Vec<bool>,
    convert: Option<&'a dyn ColumnConverter>,
}

impl RowMap<'_> {
    fn row(&self, old: &TableDef, new: &TableDef, old_row: &[Value], n: u64) -> Result<Vec<Value>> {
        let mut row = Vec::with_capacity(new.columns.len());
        for (j, c) in new.columns.iter().enumerate() {
            let v = match self.origin[j] {
                // An added AUTO_INCREMENT column numbers the rows in primary key order
                // (saturating at the type's maximum, so that overflow ends in a duplicate
                // key, as in MariaDB).
                None if c.auto_increment => match c.ty {
                    ColumnType::Int { bytes, unsigned } => {
                        let bits = 8 * bytes as u32 - !unsigned as u32;
                        let max = if bits >= 64 {
                            u64::MAX
                        } else {
                            (1u64 << bits) - 1
                        };
                        if unsigned {
                            Value::UInt(n.min(max))
                        } else {
                            Value::Int(n.min(max) as i64)
                        }
                    }
                    _ => Value::Double(n as f64),
                },
                None => crate::catalog::implicit_default(c),
                Some(i) if self.conv[j] => {
                    let Some(cv) = self.convert else {
                        return Err(EngineError::Other(format!(
                            "changing column '{}' needs a value converter",
                            c.name
                        )));
                    };
                    cv.convert(&old.columns[i], c, old_row[i].clone(), n)
                        .map_err(EngineError::Sql)?
                }
                Some(i) => old_row[i].clone(),
            };
            row.push(v);
        }
        // Added columns with an expression DEFAULT, in column order, once the others are
        // in place (the expression may name them).
        if let Some(cv) = self.convert {
            for (j, c) in new.columns.iter().enumerate() {
                if self.origin[j].is_none() && !c.auto_increment && c.default_expr.is_some() {
                    if let Some(v) = cv.added(new, j, &row, n).map_err(EngineError::Sql)? {
                        row[j] = v;
                    }
                }
            }
        }
        Ok(row)
    }
}

/// An ALTER TABLE worked out against the catalog: the new definition, with ids for the
/// indexes to build.
struct AlterPlan {
    old: Arc<TableDef>,
    new: TableDef,
    /// For each new column: its position in the old table (None: added).
    origin: Vec<Option<usize>>,
    /// For each new column: whether its values go through the converter.
    conv: Vec<bool>,
    convert: Option<Converter>,
    rewrite: bool,
    pk_same: bool,
    /// Positions in `new.indexes` of the indexes to build.
    build: Vec<usize>,
    /// Whether MariaDB would report the rows copied.
    copied: bool,
}

/// Works out an ALTER TABLE against `cat`, taking ids for the indexes to build from its
/// counter.
fn plan_alter(
    cat: &mut Catalog,
    db: &str,
    table: &str,
    ops: Vec<AlterOp>,
    convert: Option<Converter>,
) -> Result<AlterPlan> {
    let old = cat
        .table(db, table)
        .cloned()
        .ok_or_else(|| EngineError::NoSuchTable {
            db: db.into(),
            table: table.into(),
        })?;
    let mut new = (*old).clone();
    // As with MariaDB's InnoDB, PAGE_CHECKSUM lasts only until the next ALTER that does
    // not set it again.
    new.create_options.retain(|(n, _)| n != "PAGE_CHECKSUM");
    // MariaDB writes the table's definition anew: its create time is now.
    new.create_time = Some(crate::table_options::now_secs());
    // For each column of the new table: its position in the old one (None: added).
    let mut origin: Vec<Option<usize>> = (0..old.columns.len()).map(Some).collect();
    let mut rewrite = false;
    for op in ops {
        match op {
            AlterOp::AddIndex(mut idx) => {
                // (The hidden primary key's name is not taken.)
                if new
                    .index_by_name(&idx.name)
                    .is_some_and(|(i, _)| i != 0 || !new.hidden_pk)
                {
                    return Err(EngineError::DuplicateIndexName(idx.name));
                }
                // Index ids are assigned below: 0 marks an index to build.
                idx.id = 0;
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
            AlterOp::AddCheck(c) => new.checks.push(c),
            AlterOp::DropCheck(name) => new.checks.retain(|c| !c.name.eq_ignore_ascii_case(&name)),
            AlterOp::AddForeignKey(fk) => new.foreign_keys.push(fk),
            AlterOp::DropForeignKey(name) => new.foreign_keys.retain(|f| f.name != name),
            AlterOp::SetOptions(o) => o.apply(&mut new),
            AlterOp::DropColumn(name) => {
                drop_column(&mut new, &mut origin, name)?;
                rewrite = true;
            }
            AlterOp::ChangeColumn {
                name,
                def,
                position,
            } => rewrite |= change_column(&mut new, &mut origin, name, def, position)?,
        }
    }
    validate(&new)?;
    // Columns whose stored values change go through the converter.
    let conv: Vec<bool> = new
        .columns
        .iter()
        .zip(&origin)
        .map(|(c, o)| o.is_some_and(|i| needs_conversion(&old.columns[i], c)))
        .collect();
    rewrite |= conv.iter().any(|&c| c);
    // An index keeps its entries if its key columns come unconverted from the same old
    // columns (and, for a secondary index, the primary key is unchanged too).
    let same_index = |o: &IndexDef, n: &IndexDef| -> bool {
        o.unique == n.unique
            && o.columns.len() == n.columns.len()
            && n.columns
                .iter()
                .zip(&o.columns)
                .all(|(&nc, &oc)| origin[nc] == Some(oc) && !conv[nc])
            && (0..n.columns.len()).all(|k| {
                o.prefix_lens.get(k).copied().flatten() == n.prefix_lens.get(k).copied().flatten()
            })
    };
    let pk_same = old.hidden_pk == new.hidden_pk && same_index(old.primary(), new.primary());
    // Allocate ids to the indexes to build: added ones, the primary index of a rewrite,
    // and secondary indexes whose entries change.
    let mut build = Vec::new();
    for (i, idx) in new.indexes.iter_mut().enumerate() {
        let kept = idx.id != 0
            && old
                .indexes
                .iter()
                .find(|o| o.id == idx.id)
                .is_some_and(|o| same_index(o, idx) && if i == 0 { !rewrite } else { pk_same });
        if !kept {
            idx.id = cat.next_index_id;
            cat.next_index_id += 1;
            build.push(i);
        }
    }
    // MariaDB copies the table (and reports the rows copied) when a column's type changes,
    // except for a longer VARCHAR.
    let copied = new.columns.iter().zip(&origin).any(|(c, o)| {
        o.is_some_and(|i| {
            let from = &old.columns[i].ty;
            from != &c.ty
                && !matches!((from, &c.ty), (ColumnType::Varchar { .. }, ColumnType::Varchar { .. })
                    if same_storage(from, &c.ty))
        })
    });
    Ok(AlterPlan {
        old,
        new,
        origin,
        conv,
        convert,
        rewrite,
        pk_same,
        build,
        copied,
    })
}

/// ALTER TABLE ... DROP COLUMN `name`: it leaves every index (an index left empty is
/// dropped, as MariaDB does), and its own CHECK constraint goes with it.
fn drop_column(new: &mut TableDef, origin: &mut Vec<Option<usize>>, name: String) -> Result<()> {
    let Some(pos) = new.column_index(&name) else {
        return Err(EngineError::NoSuchColumn(name));
    };
    // The column's own constraint goes with it.
    new.checks
        .retain(|c| !(c.column_level && c.name.eq_ignore_ascii_case(&name)));
    if new.columns.len() == 1 {
        return Err(EngineError::Other(
            "You can't delete all columns with ALTER TABLE; use DROP TABLE instead".into(),
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
    Ok(())
}

/// ALTER TABLE ... CHANGE / MODIFY column `name` to `def` (moved to `position`); true when
/// the move rewrites the table.
fn change_column(
    new: &mut TableDef,
    origin: &mut Vec<Option<usize>>,
    name: String,
    def: ColumnDef,
    position: Option<usize>,
) -> Result<bool> {
    let Some(pos) = new.column_index(&name) else {
        return Err(EngineError::NoSuchColumn(name));
    };
    if new.column_index(&def.name).is_some_and(|o| o != pos) {
        return Err(EngineError::DuplicateColumn(def.name));
    }
    // A key prefix longer than the new column, or on a column that is no longer
    // a string, covers the whole column; a TEXT/BLOB column gets a 768-character
    // prefix if it had none (MariaDB).
    let prefix = |p: Option<u32>| match (def.ty, p) {
        (ColumnType::Char { len, .. } | ColumnType::Varchar { len, .. }, Some(p)) => {
            (p < len).then_some(p)
        }
        (ColumnType::Blob { .. }, None) => Some(768),
        (ColumnType::Blob { .. }, p) => p,
        _ => None,
    };
    for idx in &mut new.indexes {
        if let Some(k) = idx.columns.iter().position(|&c| c == pos) {
            if idx.prefix_lens.len() <= k {
                idx.prefix_lens.resize(idx.columns.len(), None);
            }
            idx.prefix_lens[k] = prefix(idx.prefix_lens[k]);
        }
    }
    let from = new.columns[pos].name.clone();
    crate::foreign_keys::rename_column(new, &from, &def.name);
    new.columns.remove(pos);
    let o = origin.remove(pos);
    let to = position.unwrap_or(pos).min(new.columns.len());
    new.columns.insert(to, def);
    origin.insert(to, o);
    if to != pos {
        for idx in &mut new.indexes {
            for c in &mut idx.columns {
                *c = moved(*c, pos, to);
            }
        }
        return Ok(true);
    }
    Ok(false)
}

/// Builds the plan's indexes (directly into RocksDB; nothing names them yet). Returns the
/// rows to report as affected, if any.
fn build_alter(engine: &Engine, p: &AlterPlan) -> Result<Option<u64>> {
    let map = RowMap {
        origin: p.origin.clone(),
        conv: p.conv.clone(),
        convert: p.convert.as_ref().map(|c| &*c.0),
    };
    let rows = build_indexes(engine, &p.old, &p.new, &map, p.rewrite, p.pk_same, &p.build)?;
    Ok(match (p.copied, p.rewrite) {
        (false, _) => None,
        (true, true) => Some(rows),
        (true, false) => Some(count_rows(engine, &p.old)?),
    })
}

/// Puts the altered table into `ch` and drops the data of indexes that no longer exist.
fn finish_alter(ch: &mut Change, p: AlterPlan, affected: Option<u64>) {
    if let Some(n) = affected {
        ch.outcome.affected_rows = n;
    }
    for idx in &p.old.indexes {
        if !p.new.indexes.iter().any(|n| n.id == idx.id) {
            ch.batch
                .delete_range(keys::index_prefix(idx.id), keys::index_end(idx.id));
        }
    }
    ch.reset.push(p.new.id);
    crate::foreign_keys::follow_column_renames(ch, &p.old, &p.new, &p.origin);
    ch.put_table(p.new);
}
