//! Transactions: buffered writes, snapshot reads, row locks, statement rollback, savepoints.
//!
//! A transaction buffers its key/value changes in `overlay` (every index entry it writes)
//! and its row changes in `changes` (the binlog's row events). Reads merge the overlay
//! over RocksDB: a consistent snapshot for plain reads (taken at the first read for
//! REPEATABLE READ, per statement for READ COMMITTED), the latest committed version for
//! locking reads and writes, which lock the row first (as InnoDB does).
//!
//! Statement rollback and named savepoints share one undo log of overlay entries: rolling
//! back restores the overlay entries and truncates `changes`, so the event group written at
//! commit holds exactly the surviving row changes.
//!
//! Commit hands the overlay (as one WriteBatch) and the row changes (as one binlog event
//! group) to the log writer; locks are released only after the commit is durable and
//! applied, so conflicting transactions reach the binlog in the order they commit.

use std::collections::BTreeMap;
use std::sync::Arc;

use onelog_types::Value;
use parking_lot::Mutex;
use rocksdb::{ReadOptions, SnapshotWithThreadMode, DB};

use crate::catalog::{Catalog, TableDef};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::keys;
use crate::locks::{Mode, TxnId};
use crate::rowcodec;
use crate::scan::{self, KeyRange, RowCursor, ScanOptions};

/// One row: values in table column order. Rows of tables without a primary key carry one
/// extra trailing value, the hidden row id (`Value::UInt`), as returned by reads; pass such
/// rows back unchanged to [`Txn::update`] and [`Txn::delete`].
pub type Row = Vec<Value>;

/// Row changes not yet encoded after which a statement end encodes them (see
/// [`Txn::statement_end`]).
const ENCODE_AHEAD_CHANGES: usize = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Isolation {
    ReadCommitted,
    #[default]
    RepeatableRead,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    /// Consistent (snapshot) read, no locks.
    None,
    /// `LOCK IN SHARE MODE`: reads the latest committed version and share-locks it.
    Shared,
    /// `FOR UPDATE` and every write: reads the latest committed version, locks it exclusively.
    Exclusive,
}

#[derive(Clone, Debug, Default)]
pub struct CommitInfo {
    /// `domain-server-seq` of the commit, when the binlog is on and the transaction wrote.
    pub gtid: Option<String>,
}

/// How a transaction is logged when replicas get it as a statement rather than as row
/// events (account statements: MariaDB replicas keep their accounts in their own tables):
/// `ROW_REDO GTID QUERY`, the QUERY event built from this, its row changes nested in
/// onelog's private row-redo event, which recovery replays exactly like rows events and
/// replicas skip.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoggedStatement {
    /// The session's current database ("" for none): the QUERY event's db.
    pub db: String,
    /// The statement as replicas execute it.
    pub sql: String,
    /// The session's connection id (the QUERY event's thread id).
    pub thread_id: u32,
    /// The error the statement ended with (0: none): a replica expects the same one.
    pub error_code: u16,
    /// Q_INVOKER: the account (user, host) that ran the statement, for statements whose
    /// effect depends on it.
    pub invoker: Option<(String, String)>,
}

/// A RocksDB snapshot kept alive with the database it belongs to.
pub(crate) struct Snap {
    // Declared before `_db`: dropped first.
    snap: SnapshotWithThreadMode<'static, DB>,
    _db: Arc<DB>,
    /// RocksDB's last sequence number when the snapshot was taken (orders snapshots).
    pub(crate) seq: u64,
}

impl Snap {
    pub(crate) fn new(db: &Arc<DB>) -> Arc<Snap> {
        let seq = db.latest_sequence_number();
        let snap = db.snapshot();
        // SAFETY: the snapshot borrows the DB, which `_db` keeps alive for as long as the
        // snapshot exists (fields drop in declaration order).
        let snap: SnapshotWithThreadMode<'static, DB> = unsafe { std::mem::transmute(snap) };
        Arc::new(Snap {
            snap,
            _db: db.clone(),
            seq,
        })
    }

    pub(crate) fn read_opts(&self) -> ReadOptions {
        let mut ro = ReadOptions::default();
        ro.set_snapshot(&self.snap);
        ro
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChangeKind {
    Insert,
    Update,
    Delete,
}

/// One row change, for the binlog.
pub(crate) struct RowChange {
    pub table: Arc<TableDef>,
    pub kind: ChangeKind,
    pub before: Option<Row>,
    pub after: Option<Row>,
    /// Made by a foreign key cascade: replicas make it themselves (see `wal.rs`).
    pub cascaded: bool,
}

/// A statement's changes: `changes[first..]` up to the next statement.
pub(crate) struct Statement {
    pub first: usize,
    pub sql: Option<String>,
    /// Run with `foreign_key_checks=0` (its rows events say so to replicas).
    pub no_fk_checks: bool,
}

pub(crate) type Overlay = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// A named savepoint: the undo log position and number of row changes when it was set.
struct NamedSavepoint {
    name: String,
    undo: usize,
    changes: usize,
}
type UndoEntry = (Vec<u8>, Option<Option<Vec<u8>>>);

pub struct Txn {
    engine: Arc<Engine>,
    id: TxnId,
    isolation: Isolation,
    catalog: Arc<Catalog>,
    snapshot: Option<Arc<Snap>>,
    pub(crate) overlay: Overlay,
    pub(crate) changes: Vec<RowChange>,
    pub(crate) statements: Vec<Statement>,
    /// Lock names held, shared with cursors that lock as they scan.
    pub(crate) held: Arc<Mutex<Vec<Vec<u8>>>>,
    /// Statement savepoint: (undo position, changes length).
    savepoint: Option<(usize, usize)>,
    /// Named savepoints (`SAVEPOINT name`), oldest first.
    named: Vec<NamedSavepoint>,
    /// Undo log: (key, overlay entry before it was changed). Kept for the current statement
    /// and, while named savepoints exist, since the oldest of them.
    undo: Vec<UndoEntry>,
    finished: bool,
    /// Completed statements already encoded as binlog events (large transactions).
    pub(crate) ahead: Option<crate::wal::Ahead>,
    lock_timeout: std::time::Duration,
    interrupt: Option<Arc<std::sync::atomic::AtomicBool>>,
    /// Logged under this GTID instead of the next one of this server (replication).
    pub(crate) gtid: Option<onelog_binlog::Gtid>,
    /// The order this transaction's commit must keep (see `commit_order.rs`).
    pub(crate) commit_order: Option<Arc<dyn crate::CommitOrder>>,
    /// Sequences whose row this transaction wrote, forgotten by NEXTVAL's cache once it
    /// commits (None: written by the cache itself, see `sequence.rs`).
    sequences_written: Option<Vec<u32>>,
    /// What INNODB_TRX shows of it (`active.rs`).
    shared: Arc<crate::active::Shared>,
    /// The table it creates (CREATE TABLE ... SELECT, `ddl/create_select.rs`).
    pub(crate) create: Option<Arc<crate::ddl::create_select::PendingCreate>>,
    /// Foreign key cascades running (nested): the rows changed now are cascaded.
    cascading: u32,
    /// The session runs its statements with `foreign_key_checks=0`.
    no_fk_checks: bool,
}

fn lock_name(kind: u8, key: &[u8]) -> Vec<u8> {
    let mut n = Vec::with_capacity(key.len() + 1);
    n.push(kind);
    n.extend_from_slice(key);
    n
}

pub(crate) fn mdl_name(db: &str, table: &str) -> Vec<u8> {
    let mut n = vec![b'm'];
    n.extend_from_slice(db.as_bytes());
    n.push(0);
    n.extend_from_slice(table.as_bytes());
    n
}

impl Txn {
    pub(crate) fn new(engine: Arc<Engine>, id: TxnId, isolation: Isolation) -> Txn {
        let catalog = engine.catalog();
        let engine_timeout = engine.lock_timeout();
        let held = Arc::new(Mutex::new(Vec::new()));
        let shared = engine.active.register(id, isolation, held.clone());
        Txn {
            engine,
            id,
            isolation,
            catalog,
            snapshot: None,
            overlay: BTreeMap::new(),
            changes: Vec::new(),
            statements: Vec::new(),
            held,
            savepoint: None,
            named: Vec::new(),
            undo: Vec::new(),
            finished: false,
            gtid: None,
            commit_order: None,
            create: None,
            ahead: None,
            lock_timeout: engine_timeout,
            interrupt: None,
            sequences_written: Some(Vec::new()),
            shared,
            cascading: 0,
            no_fk_checks: false,
        }
    }

    /// This transaction writes sequence rows for NEXTVAL's cache, which stays valid.
    pub(crate) fn keep_sequences_cached(&mut self) {
        self.sequences_written = None;
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// `innodb_lock_wait_timeout` for this transaction's lock waits.
    pub fn set_lock_wait_timeout(&mut self, d: std::time::Duration) {
        self.lock_timeout = d;
    }

    pub(crate) fn lock_wait_timeout(&self) -> std::time::Duration {
        self.lock_timeout
    }

    /// A flag that, when set (KILL QUERY), makes a blocked lock wait fail with
    /// [`EngineError::Interrupted`].
    pub fn set_interrupt(&mut self, flag: Arc<std::sync::atomic::AtomicBool>) {
        self.interrupt = Some(flag);
    }

    pub(crate) fn interrupt_flag(&self) -> Option<Arc<std::sync::atomic::AtomicBool>> {
        self.interrupt.clone()
    }

    /// The catalog as this transaction sees it (refreshed at each statement start).
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.clone()
    }

    /// Opens a table for use in this transaction: takes a shared metadata lock on it (held
    /// until the transaction ends, so DDL on the table waits) and returns its definition.
    pub fn open_table(&mut self, db: &str, name: &str) -> Result<Arc<TableDef>> {
        self.open_table_in(db, name, Mode::Shared)
    }

    fn open_table_in(&mut self, db: &str, name: &str, mode: Mode) -> Result<Arc<TableDef>> {
        self.lock(mdl_name(db, name), mode)?;
        // DDL may have changed the table before we got the lock: read the current catalog.
        self.catalog = self.engine.catalog();
        self.catalog
            .table(db, name)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchTable {
                db: db.to_string(),
                table: name.to_string(),
            })
    }

    /// [`open_table`](Self::open_table) for a table the statement writes: the metadata lock
    /// is taken in write mode, so `LOCK TABLES ... READ` of another session keeps the
    /// transaction waiting, and waits for it to end.
    pub fn open_table_for_write(&mut self, db: &str, name: &str) -> Result<Arc<TableDef>> {
        self.open_table_in(db, name, Mode::Write)
    }

    /// Opens a table the session holds a `LOCK TABLES` lock on ([`crate::TableLocks`]):
    /// that lock already keeps the table as the session needs it, so no metadata lock is
    /// taken (the transaction's own would conflict with its session's WRITE lock).
    pub fn open_table_covered(&mut self, db: &str, name: &str) -> Result<Arc<TableDef>> {
        self.catalog = self.engine.catalog();
        self.catalog
            .table(db, name)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchTable {
                db: db.to_string(),
                table: name.to_string(),
            })
    }

    pub(crate) fn lock(&self, name: Vec<u8>, mode: Mode) -> Result<()> {
        match self.engine.locks.acquire(
            self.id,
            &name,
            mode,
            self.lock_timeout,
            self.interrupt.as_deref(),
        ) {
            Ok(true) => {
                self.held.lock().push(name);
                Ok(())
            }
            Ok(false) => Ok(()),
            Err(e) => {
                self.engine.count_lock_error(&e);
                Err(e)
            }
        }
    }

    pub(crate) fn lock_row(&self, pk_key: &[u8], mode: LockMode) -> Result<()> {
        match mode {
            LockMode::None => Ok(()),
            LockMode::Shared => self.lock(lock_name(b'r', pk_key), Mode::Shared),
            LockMode::Exclusive => self.lock(lock_name(b'r', pk_key), Mode::Exclusive),
        }
    }

    /// Takes the read view now (`START TRANSACTION WITH CONSISTENT SNAPSHOT`) instead of
    /// at the first consistent read.
    pub fn take_snapshot(&mut self) {
        self.snapshot();
    }

    fn snapshot(&mut self) -> Arc<Snap> {
        self.snapshot
            .get_or_insert_with(|| self.engine.committer.read_snapshot())
            .clone()
    }

    /// Reads a key through the overlay; from the snapshot, or the latest version.
    fn read(&mut self, key: &[u8], latest: bool) -> Result<Option<Vec<u8>>> {
        if let Some(v) = self.overlay.get(key) {
            return Ok(v.clone());
        }
        if latest {
            self.engine.get_latest(key)
        } else {
            let snap = self.snapshot();
            Ok(self.engine.db.get_opt(key, &snap.read_opts())?)
        }
    }

    fn pk_key(&self, t: &TableDef, pk: &[Value]) -> Result<Vec<u8>> {
        keys::encode_tuple(t.primary().id, &keys::pk_types(t), pk)
    }

    /// Point lookup by the full primary key (for hidden-pk tables: the row id).
    pub fn get(&mut self, t: &TableDef, pk: &[Value], lock: LockMode) -> Result<Option<Row>> {
        let key = self.pk_key(t, pk)?;
        self.lock_row(&key, lock)?;
        // A temporary table's committed rows are not in the read snapshot (see `ddl/temp.rs`).
        let raw = self.read(&key, lock != LockMode::None || crate::ddl::is_temp(t))?;
        raw.map(|v| decode_stored_row(t, &v, pk)).transpose()
    }

    /// Scans an index range. See [`KeyRange`] and [`ScanOptions`].
    pub fn scan(
        &mut self,
        t: &Arc<TableDef>,
        index: usize,
        range: KeyRange,
        opts: ScanOptions,
    ) -> Result<RowCursor> {
        let snap = if opts.lock == LockMode::None && !crate::ddl::is_temp(t) {
            Some(self.snapshot())
        } else {
            None
        };
        scan::open_cursor(self, t.clone(), index, range, opts, snap)
    }

    pub(crate) fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub(crate) fn txn_id(&self) -> TxnId {
        self.id
    }

    fn put(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) {
        let prev = self.overlay.insert(key.clone(), value);
        if self.savepoint.is_some() || !self.named.is_empty() {
            self.undo.push((key, prev));
        }
    }

    /// Whether a primary key (locked by this transaction, about to be written) is above
    /// every key the table may hold, so that it cannot be a duplicate.
    fn pk_is_new(&self, t: &TableDef, key: &[u8]) -> Result<bool> {
        crate::autoinc::raise_pk_bound(&self.engine, t, key)
    }

    fn exists_latest(&mut self, key: &[u8]) -> Result<bool> {
        Ok(self.read(key, true)?.is_some())
    }

    /// Whether any key starting with `prefix` exists (latest committed + own writes).
    fn prefix_exists_latest(&self, prefix: &[u8], ignore: Option<&[u8]>) -> Result<bool> {
        let end = crate::keycode::prefix_successor(prefix);
        // Own writes first: a live entry or a deletion that hides a committed one.
        let mut hidden = Vec::new();
        let upper = end.clone().unwrap_or_else(|| vec![0xFF; prefix.len() + 1]);
        for (k, v) in self.overlay.range(prefix.to_vec()..upper) {
            if Some(&k[..]) == ignore {
                continue;
            }
            match v {
                Some(_) => return Ok(true),
                None => hidden.push(k.clone()),
            }
        }
        let mut ro = ReadOptions::default();
        if let Some(end) = end {
            ro.set_iterate_upper_bound(end);
        }
        let mut it = self.engine.db.raw_iterator_opt(ro);
        it.seek(prefix);
        while it.valid() {
            let k = it.key().unwrap();
            if Some(k) != ignore && !hidden.iter().any(|h| h[..] == *k) {
                return Ok(true);
            }
            it.next();
        }
        it.status()?;
        Ok(false)
    }

    fn dup_error(index_name: &str, vals: &[Value]) -> EngineError {
        let value = vals
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join("-");
        let key = index_name.to_string();
        EngineError::DuplicateKey { key, value }
    }

    /// The primary key values of a row (the hidden row id for tables without a pk).
    fn pk_of(&self, t: &TableDef, row: &[Value]) -> Result<Vec<Value>> {
        if t.hidden_pk {
            match row.get(t.columns.len()) {
                Some(v @ Value::UInt(_)) => Ok(vec![v.clone()]),
                _ => Err(EngineError::Other(
                    "row of a table without primary key lacks its row id".into(),
                )),
            }
        } else {
            Ok(keys::pk_values(t, row))
        }
    }

    /// Locks and checks the unique secondary key `idx` would get for `row` (`ignore`: the
    /// row's own current entry). Writes nothing.
    fn check_unique(
        &mut self,
        t: &TableDef,
        idx: &crate::catalog::IndexDef,
        row: &[Value],
        ignore: Option<&[u8]>,
    ) -> Result<()> {
        let vals = keys::secondary_values(t, idx, row);
        if vals.iter().any(Value::is_null) {
            return Ok(());
        }
        let prefix = keys::encode_tuple(idx.id, &keys::index_types(t, idx), &vals)?;
        self.lock(lock_name(b'u', &prefix), Mode::Exclusive)?;
        if self.prefix_exists_latest(&prefix, ignore)? {
            return Err(Self::dup_error(&idx.name, &vals));
        }
        Ok(())
    }

    /// Adds the secondary index entries of `row` (unique ones checked first: on a
    /// duplicate nothing has been written).
    fn add_secondary(&mut self, t: &TableDef, row: &[Value], pk: &[Value]) -> Result<()> {
        for idx in t.indexes[1..].iter().filter(|i| i.unique) {
            self.check_unique(t, idx, row, None)?;
        }
        for idx in &t.indexes[1..] {
            let key = keys::secondary_key(t, idx, row, pk)?;
            self.put(key, Some(Vec::new()));
        }
        Ok(())
    }

    fn remove_secondary(&mut self, t: &TableDef, row: &[Value], pk: &[Value]) -> Result<()> {
        for idx in &t.indexes[1..] {
            let key = keys::secondary_key(t, idx, row, pk)?;
            self.put(key, None);
        }
        Ok(())
    }

    fn check_row_width(t: &TableDef, row: &[Value]) -> Result<()> {
        if row.len() < t.columns.len() {
            return Err(EngineError::Other(format!(
                "row has {} values, table {} has {} columns",
                row.len(),
                t.name,
                t.columns.len()
            )));
        }
        Ok(())
    }

    /// Inserts a row (for hidden-pk tables, without the row id: one is assigned).
    /// Fails with [`EngineError::DuplicateKey`] if the primary key or a unique key exists.
    pub fn insert(&mut self, t: &TableDef, mut row: Row) -> Result<()> {
        Self::check_row_width(t, &row)?;
        row.truncate(t.columns.len());
        let pk = if t.sequence {
            // The one row of a sequence: every write replaces it.
            if let Some(w) = &mut self.sequences_written {
                w.push(t.id);
            }
            vec![Value::UInt(crate::sequence::ROW_ID)]
        } else if t.hidden_pk {
            vec![Value::UInt(crate::autoinc::next_rowid(&self.engine, t)?)]
        } else {
            keys::pk_values(t, &row)
        };
        let key = self.pk_key(t, &pk)?;
        self.lock_row(&key, LockMode::Exclusive)?;
        if !t.hidden_pk && !self.pk_is_new(t, &key)? && self.exists_latest(&key)? {
            return Err(Self::dup_error("PRIMARY", &pk));
        }
        self.add_secondary(t, &row, &pk)?;
        self.put(key, Some(rowcodec::encode_row(&row)));
        if t.hidden_pk {
            row.push(pk[0].clone());
        }
        self.record(t, ChangeKind::Insert, None, Some(row));
        Ok(())
    }

    /// Replaces `old` (as read, locked) by `new`.
    pub fn update(&mut self, t: &TableDef, old: &Row, new: Row) -> Result<()> {
        Self::check_row_width(t, old)?;
        Self::check_row_width(t, &new)?;
        let old_pk = self.pk_of(t, old)?;
        let mut new = new;
        new.truncate(t.columns.len());
        let new_pk = if t.hidden_pk {
            old_pk.clone()
        } else {
            keys::pk_values(t, &new)
        };
        let old_key = self.pk_key(t, &old_pk)?;
        self.lock_row(&old_key, LockMode::Exclusive)?;
        let new_key = self.pk_key(t, &new_pk)?;
        if new_key != old_key {
            self.lock_row(&new_key, LockMode::Exclusive)?;
            if !self.pk_is_new(t, &new_key)? && self.exists_latest(&new_key)? {
                return Err(Self::dup_error("PRIMARY", &new_pk));
            }
        }
        let old_vis = &old[..t.columns.len()];
        // Secondary entries that change: check the unique ones first (nothing is written
        // on a duplicate), then remove the old entries and add the new ones.
        let mut changed = Vec::new();
        for idx in &t.indexes[1..] {
            let ok = keys::secondary_key(t, idx, old_vis, &old_pk)?;
            let nk = keys::secondary_key(t, idx, &new, &new_pk)?;
            if ok != nk {
                if idx.unique {
                    self.check_unique(t, idx, &new, Some(&ok))?;
                }
                changed.push((ok, nk));
            }
        }
        for (ok, nk) in changed {
            self.put(ok, None);
            self.put(nk, Some(Vec::new()));
        }
        if new_key != old_key {
            self.put(old_key, None);
        }
        self.put(new_key, Some(rowcodec::encode_row(&new)));
        let mut before = old_vis.to_vec();
        if t.hidden_pk {
            before.push(old_pk[0].clone());
            new.push(old_pk[0].clone());
        }
        self.record(t, ChangeKind::Update, Some(before), Some(new));
        Ok(())
    }

    /// Deletes `old` (as read).
    pub fn delete(&mut self, t: &TableDef, old: &Row) -> Result<()> {
        Self::check_row_width(t, old)?;
        let pk = self.pk_of(t, old)?;
        let key = self.pk_key(t, &pk)?;
        self.lock_row(&key, LockMode::Exclusive)?;
        self.remove_secondary(t, &old[..t.columns.len()], &pk)?;
        self.put(key, None);
        self.record(t, ChangeKind::Delete, Some(old.clone()), None);
        Ok(())
    }

    fn record(&mut self, t: &TableDef, kind: ChangeKind, before: Option<Row>, after: Option<Row>) {
        if crate::ddl::is_temp(t) {
            // Not logged: see `ddl/temp.rs`.
            return;
        }
        let table = match (self.catalog.table(&t.db, &t.name), &self.create) {
            (Some(a), _) if a.id == t.id => a.clone(),
            (_, Some(c)) if c.def.id == t.id => c.def.clone(),
            _ => Arc::new(t.clone()),
        };
        if self.statements.is_empty() {
            self.statements.push(Statement {
                first: self.changes.len(),
                sql: None,
                no_fk_checks: self.no_fk_checks,
            });
        }
        self.changes.push(RowChange {
            table,
            kind,
            before,
            after,
            cascaded: self.cascading > 0,
        });
        self.shared.set_rows_modified(self.changes.len());
    }

    /// Reserves `count` consecutive AUTO_INCREMENT values and returns the first.
    pub fn next_auto_increment(&mut self, t: &TableDef, count: u64) -> Result<u64> {
        crate::autoinc::reserve(&self.engine, t, count)
    }

    /// Notes an explicitly given AUTO_INCREMENT value so later generated ones exceed it.
    pub fn observe_auto_increment(&mut self, t: &TableDef, value: u64) -> Result<()> {
        crate::autoinc::observe(&self.engine, t, value)
    }

    /// Starts a statement: a savepoint that [`Txn::statement_rollback`] returns to.
    pub fn statement_begin(&mut self) {
        if self.isolation == Isolation::ReadCommitted {
            self.snapshot = None;
        }
        self.catalog = self.engine.catalog();
        if self.named.is_empty() {
            self.undo.clear();
        }
        self.savepoint = Some((self.undo.len(), self.changes.len()));
        self.cascading = 0;
        self.statements.push(Statement {
            first: self.changes.len(),
            sql: None,
            no_fk_checks: self.no_fk_checks,
        });
    }

    /// Whether the statements from now on run with `foreign_key_checks` on (their rows
    /// events carry NO_FOREIGN_KEY_CHECKS_F when not, as MariaDB's do). Changed inside a
    /// statement (a replica applying events flagged differently), the rows from now on
    /// are logged as a new statement.
    pub fn set_foreign_key_checks(&mut self, on: bool) {
        self.no_fk_checks = !on;
        let len = self.changes.len();
        match self.statements.last_mut() {
            Some(s) if s.first == len => s.no_fk_checks = !on,
            Some(s) if s.no_fk_checks == on => self.statements.push(Statement {
                first: len,
                sql: None,
                no_fk_checks: !on,
            }),
            _ => {}
        }
    }

    /// A foreign key cascade starts: the rows changed until [`Txn::end_cascade`] are
    /// logged as rows a replica changes itself (cascades nest).
    pub fn begin_cascade(&mut self) {
        self.cascading += 1;
    }

    pub fn end_cascade(&mut self) {
        self.cascading = self.cascading.saturating_sub(1);
    }

    /// Ends a statement successfully; `sql` is logged as its ANNOTATE_ROWS text.
    pub fn statement_end(&mut self, sql: Option<&str>) {
        self.savepoint = None;
        if self.named.is_empty() {
            self.undo.clear();
        }
        if let Some(s) = self.statements.last_mut() {
            s.sql = sql.map(str::to_string);
        }
        self.drop_empty_statements();
        // A large transaction encodes its completed statements now rather than all at
        // COMMIT (a failure leaves them for COMMIT, which reports it).
        let encoded = self.ahead.as_ref().map_or(0, |a| a.changes);
        if self.changes.len() - encoded >= ENCODE_AHEAD_CHANGES {
            let ahead = self.ahead.take();
            self.ahead = self.engine.wal.encode_ahead(self, ahead).ok().flatten();
        }
    }

    /// Drops trailing statements that have no (remaining) row changes.
    fn drop_empty_statements(&mut self) {
        while let Some(s) = self.statements.last() {
            if s.first >= self.changes.len() {
                self.statements.pop();
            } else {
                break;
            }
        }
        if self
            .ahead
            .as_ref()
            .is_some_and(|a| a.statements > self.statements.len())
        {
            self.ahead = None;
        }
    }

    /// Restores the overlay and the row changes to an undo position and change count.
    fn undo_to(&mut self, undo: usize, changes: usize) {
        while self.undo.len() > undo {
            let (k, prev) = self.undo.pop().unwrap();
            match prev {
                Some(v) => {
                    self.overlay.insert(k, v);
                }
                None => {
                    self.overlay.remove(&k);
                }
            }
        }
        self.changes.truncate(changes);
        // Rolled back below what was encoded ahead: encode again at COMMIT.
        if self.ahead.as_ref().is_some_and(|a| a.changes > changes) {
            self.ahead = None;
        }
    }

    /// Undoes the changes of the current statement (its locks stay held, as in InnoDB).
    pub fn statement_rollback(&mut self) {
        if let Some((u, c)) = self.savepoint.take() {
            self.undo_to(u, c);
        }
        if self.named.is_empty() {
            self.undo.clear();
        }
        self.drop_empty_statements();
    }

    /// `SAVEPOINT name`: marks the current state of the transaction (between statements).
    /// A savepoint of the same name (case-insensitive, as MariaDB) is replaced.
    pub fn savepoint(&mut self, name: &str) {
        self.named.retain(|s| !s.name.eq_ignore_ascii_case(name));
        self.named.push(NamedSavepoint {
            name: name.to_string(),
            undo: self.undo.len(),
            changes: self.changes.len(),
        });
    }

    /// Position of the named savepoint (names are case-insensitive).
    fn savepoint_index(&self, name: &str) -> Option<usize> {
        self.named
            .iter()
            .position(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// `ROLLBACK TO SAVEPOINT name`: undoes every change made after the savepoint (row
    /// changes for the binlog included) and removes the savepoints set after it; the
    /// savepoint itself stays. Row locks stay held, as in InnoDB. False if there is no
    /// such savepoint.
    pub fn rollback_to_savepoint(&mut self, name: &str) -> bool {
        let Some(i) = self.savepoint_index(name) else {
            return false;
        };
        let (u, c) = (self.named[i].undo, self.named[i].changes);
        self.undo_to(u, c);
        self.named.truncate(i + 1);
        self.drop_empty_statements();
        true
    }

    /// `RELEASE SAVEPOINT name`: removes the savepoint and every later one, keeping the
    /// changes. False if there is no such savepoint.
    pub fn release_savepoint(&mut self, name: &str) -> bool {
        let Some(i) = self.savepoint_index(name) else {
            return false;
        };
        self.named.truncate(i);
        if self.named.is_empty() && self.savepoint.is_none() {
            self.undo.clear();
        }
        true
    }

    pub fn has_writes(&self) -> bool {
        !self.changes.is_empty()
    }

    /// Logs the transaction under `gtid` (a replicated transaction keeps its primary's
    /// GTID); it is then logged even without changes, so the GTID position moves on.
    pub fn set_gtid(&mut self, gtid: Option<onelog_binlog::Gtid>) {
        self.gtid = gtid;
    }

    /// Makes the commit wait for its turn in `order` before it is queued (see
    /// [`CommitOrder`](crate::CommitOrder)).
    pub fn set_commit_order(&mut self, order: Option<Arc<dyn crate::CommitOrder>>) {
        self.commit_order = order;
    }

    /// Commits: durable (per `sync_binlog`) and visible when this returns Ok.
    pub fn commit(self) -> Result<CommitInfo> {
        self.finish(None)
    }

    /// Commits, logging the transaction as the statement `stmt` that replicas execute (see
    /// [`LoggedStatement`]); logged even when it changed no rows.
    pub fn commit_logged(self, stmt: &LoggedStatement) -> Result<CommitInfo> {
        self.finish(Some(stmt))
    }

    fn finish(mut self, stmt: Option<&LoggedStatement>) -> Result<CommitInfo> {
        self.finished = true;
        let temp = self.take_temp_writes();
        let logged = !self.changes.is_empty() || stmt.is_some() || self.gtid.is_some();
        let mut result = if !logged && self.create.is_none() {
            Ok(CommitInfo::default())
        } else {
            crate::commit::commit_txn(&mut self, stmt)
        };
        if let (Ok(_), Some(batch)) = (&result, temp) {
            // Temporary tables' rows, outside the log (see `ddl/temp.rs`).
            if let Err(e) = self.engine.write_unnamed(batch) {
                result = Err(e);
            }
        }
        self.release();
        if result.is_ok() && !self.changes.is_empty() {
            let mut last = None;
            let ids = self.changes.iter().filter_map(|c| {
                let id = c.table.id;
                (last.replace(id) != Some(id)).then_some(id)
            });
            self.engine.note_updated(ids);
        }
        if result.is_ok() {
            for id in self.sequences_written.take().unwrap_or_default() {
                self.engine.sequence_forget(id);
            }
        }
        match &result {
            Ok(_) => self
                .engine
                .counters
                .commits
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            Err(_) => self
                .engine
                .counters
                .rollbacks
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        result
    }

    pub fn rollback(mut self) {
        self.finished = true;
        self.engine
            .counters
            .rollbacks
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.release();
    }

    /// Ends a transaction whose outcome was made durable elsewhere (an XA transaction's
    /// commit or rollback): counts it and releases its locks.
    pub(crate) fn close(mut self, committed: bool) {
        self.finished = true;
        let c = &self.engine.counters;
        let n = if committed { &c.commits } else { &c.rollbacks };
        n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.release();
    }

    fn release(&mut self) {
        let held = std::mem::take(&mut *self.held.lock());
        self.engine.locks.release_all(self.id, &held);
        self.snapshot = None;
        self.engine.active.remove(self.id);
    }

    /// Names the connection running this transaction (INNODB_TRX's trx_mysql_thread_id).
    pub fn set_connection(&self, id: u32) {
        self.shared.set_connection(id);
    }
}

impl Drop for Txn {
    fn drop(&mut self) {
        if !self.finished {
            self.release();
        }
    }
}

/// Decodes a stored primary-index value into a row (filling columns added since it was
/// written with their defaults; appending the row id for hidden-pk tables).
pub(crate) fn decode_stored_row(t: &TableDef, raw: &[u8], pk: &[Value]) -> Result<Row> {
    let mut row = rowcodec::decode_row(raw)?;
    if row.len() < t.columns.len() {
        for c in &t.columns[row.len()..] {
            row.push(crate::catalog::implicit_default(c));
        }
    }
    row.truncate(t.columns.len());
    if t.hidden_pk {
        row.push(pk[0].clone());
    }
    Ok(row)
}

impl Txn {
    /// Takes the writes to temporary tables out of the overlay, as one batch (None: none).
    fn take_temp_writes(&mut self) -> Option<rocksdb::WriteBatch> {
        let start = crate::keys::index_prefix(crate::ddl::TEMP_ID_BASE);
        let temp = self.overlay.split_off(&start);
        // Keys after the index range ('T' tail records are never in an overlay).
        let (temp, rest): (Overlay, Overlay) = temp
            .into_iter()
            .partition(|(k, _)| crate::ddl::is_temp_key(k));
        self.overlay.extend(rest);
        if temp.is_empty() {
            return None;
        }
        let mut batch = rocksdb::WriteBatch::default();
        for (k, v) in &temp {
            match v {
                Some(v) => batch.put(k, v),
                None => batch.delete(k),
            }
        }
        Some(batch)
    }

    /// The transaction's buffered changes as one RocksDB batch.
    pub(crate) fn overlay_batch(&self) -> rocksdb::WriteBatch {
        let mut batch = rocksdb::WriteBatch::default();
        self.overlay_into(&mut batch);
        batch
    }

    /// Adds the transaction's buffered changes to `batch`.
    pub(crate) fn overlay_into(&self, batch: &mut rocksdb::WriteBatch) {
        for (k, v) in &self.overlay {
            match v {
                Some(v) => batch.put(k, v),
                None => batch.delete(k),
            }
        }
    }

    /// Recovery: applies the transaction's writes directly (its events are already in the
    /// binlog), recording `end` as the applied position.
    pub(crate) fn commit_replayed(self, end: crate::wal::LogPos) -> Result<()> {
        self.commit_replayed_onto(rocksdb::WriteBatch::default(), end)
    }

    /// [`commit_replayed`](Self::commit_replayed) in one write with `batch` before the
    /// transaction's changes (a replayed CREATE TABLE ... SELECT's catalog change).
    pub(crate) fn commit_replayed_onto(
        mut self,
        mut batch: rocksdb::WriteBatch,
        end: crate::wal::LogPos,
    ) -> Result<()> {
        self.finished = true;
        self.overlay_into(&mut batch);
        batch.put(keys::APPLIED, end.encode());
        let r = self.engine.write_direct(batch);
        self.release();
        r
    }
}
