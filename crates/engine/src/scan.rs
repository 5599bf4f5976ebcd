//! Index range scans over the merged view of RocksDB and a transaction's own writes.
//!
//! A [`RowCursor`] owns everything it reads: a RocksDB iterator (over the transaction's
//! snapshot, or the latest state for locking reads), a copy of the transaction's buffered
//! writes inside the range, and for locking scans a handle on the lock table. It does not
//! borrow the transaction, so a statement can hold several cursors at once (joins).

use std::ops::Bound;
use std::sync::Arc;

use onelog_types::{ColumnType, Value};
use parking_lot::Mutex;
use rocksdb::{DBRawIteratorWithThreadMode, ReadOptions, DB};

use crate::catalog::TableDef;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::keycode;
use crate::keys;
use crate::locks::{Mode, TxnId};
use crate::txn::{decode_stored_row, LockMode, Row, Snap, Txn};

/// A range over prefixes of an index's key columns. `lower: Included(vec![5])` on an index
/// over (a, b) means every key with `a >= 5`; `upper: Included(vec![5, 7])` means every key
/// with `(a, b) <= (5, 7)` where keys sharing the prefix (5, 7) are all included.
#[derive(Clone, Debug)]
pub struct KeyRange {
    pub lower: Bound<Vec<Value>>,
    pub upper: Bound<Vec<Value>>,
}

impl KeyRange {
    pub fn all() -> KeyRange {
        KeyRange {
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
        }
    }

    /// Every key whose leading columns equal `prefix`.
    pub fn prefix(prefix: Vec<Value>) -> KeyRange {
        KeyRange {
            lower: Bound::Included(prefix.clone()),
            upper: Bound::Included(prefix),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct ScanOptions {
    pub reverse: bool,
    pub lock: LockMode,
    /// Return only the index's columns and the primary key columns (others are NULL),
    /// without reading the row: a covering index scan. Ignored for the primary index, and
    /// when a key column is general_ci text (its key holds weights: the row is read).
    pub covering: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            reverse: false,
            lock: LockMode::None,
            covering: false,
        }
    }
}

/// A RocksDB raw iterator kept alive with the database (and snapshot) it reads.
struct Iter {
    // Declared first: dropped before what it borrows.
    it: DBRawIteratorWithThreadMode<'static, DB>,
    _snap: Option<Arc<Snap>>,
    _db: Arc<DB>,
}

impl Iter {
    fn new(db: &Arc<DB>, snap: Option<Arc<Snap>>, lower: Vec<u8>, upper: Vec<u8>) -> Iter {
        let mut ro = match &snap {
            Some(s) => s.read_opts(),
            None => ReadOptions::default(),
        };
        ro.set_iterate_lower_bound(lower);
        ro.set_iterate_upper_bound(upper);
        let it = db.raw_iterator_opt(ro);
        // SAFETY: the iterator borrows the DB and reads the snapshot; both are owned by
        // this struct and outlive `it` (fields drop in declaration order).
        let it: DBRawIteratorWithThreadMode<'static, DB> = unsafe { std::mem::transmute(it) };
        Iter {
            it,
            _snap: snap,
            _db: db.clone(),
        }
    }
}

/// One entry of a scan's merged view.
struct Entry {
    key: Vec<u8>,
    value: Vec<u8>,
    /// One of the transaction's own (buffered) writes.
    own: bool,
}

/// Rows of a scan, in index order.
pub struct RowCursor {
    engine: Arc<Engine>,
    table: Arc<TableDef>,
    index: usize,
    opts: ScanOptions,
    iter: Iter,
    /// RocksDB's last sequence number when `iter` was opened: while it has not moved, the
    /// iterator's view is the latest state and a locking read need not read the row again.
    iter_seq: u64,
    started: bool,
    /// The transaction's own writes inside the range, in key order.
    overlay: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// Next overlay entry (forward: index from the front; reverse: count from the back).
    ov_pos: usize,
    /// Full copy of the transaction's overlay for primary-row lookups of secondary entries.
    pk_overlay: Arc<crate::txn::Overlay>,
    snap: Option<Arc<Snap>>,
    txn_id: TxnId,
    held: Arc<Mutex<Vec<Vec<u8>>>>,
    lock_timeout: std::time::Duration,
    interrupt: Option<Arc<std::sync::atomic::AtomicBool>>,
    pk_types: Vec<ColumnType>,
    idx_types: Vec<ColumnType>,
    /// Whether every key column decodes from the key (no general_ci text): covering scans
    /// need it, otherwise they read the row.
    key_decodable: bool,
    done: bool,
}

fn bounds(id: u32, types: &[ColumnType], range: &KeyRange) -> Result<(Vec<u8>, Vec<u8>)> {
    let enc = |vals: &Vec<Value>| keys::encode_tuple(id, types, vals);
    let end_of = |k: Vec<u8>| keycode::prefix_successor(&k).unwrap_or_else(|| keys::index_end(id));
    let lower = match &range.lower {
        Bound::Unbounded => keys::index_prefix(id),
        Bound::Included(v) => enc(v)?,
        Bound::Excluded(v) => end_of(enc(v)?),
    };
    let upper = match &range.upper {
        Bound::Unbounded => keys::index_end(id),
        Bound::Included(v) => end_of(enc(v)?),
        Bound::Excluded(v) => enc(v)?,
    };
    Ok((lower, upper))
}

pub(crate) fn open_cursor(
    txn: &mut Txn,
    table: Arc<TableDef>,
    index: usize,
    mut range: KeyRange,
    opts: ScanOptions,
    snap: Option<Arc<Snap>>,
) -> Result<RowCursor> {
    let idx = table
        .indexes
        .get(index)
        .ok_or_else(|| EngineError::Other(format!("no index #{index} on {}", table.name)))?;
    let idx_types = keys::index_types(&table, idx);
    if !idx.primary && idx.prefix_lens.iter().any(Option::is_some) {
        // Apply column prefixes to the bounds as to the keys.
        let fix = |b: &mut Bound<Vec<Value>>| {
            if let Bound::Included(v) | Bound::Excluded(v) = b {
                for (i, val) in v.iter_mut().enumerate() {
                    if let Some(&c) = idx.columns.get(i) {
                        *val = keys::apply_prefix(
                            val,
                            &table.columns[c].ty,
                            idx.prefix_lens.get(i).copied().flatten(),
                        );
                    }
                }
            }
        };
        fix(&mut range.lower);
        fix(&mut range.upper);
        if let Bound::Excluded(v) = &range.lower {
            range.lower = Bound::Included(v.clone());
        }
        if let Bound::Excluded(v) = &range.upper {
            range.upper = Bound::Included(v.clone());
        }
    }
    let (lower, upper) = bounds(idx.id, &idx_types, &range)?;
    let overlay: Vec<_> = if lower < upper {
        txn.overlay
            .range(lower.clone()..upper.clone())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    } else {
        Vec::new()
    };
    let engine = txn.engine().clone();
    // Read before the iterator is opened: the iterator's view is at least this recent.
    let iter_seq = engine.db.latest_sequence_number();
    let iter = Iter::new(&engine.db, snap.clone(), lower, upper);
    let pk_types = keys::pk_types(&table);
    let key_decodable = idx_types.iter().chain(&pk_types).all(keycode::decodable);
    // Same condition as `produce`'s covering scans, which read no row.
    let reads_rows = !(opts.covering && opts.lock == LockMode::None && key_decodable);
    let pk_overlay = if idx.primary || !reads_rows {
        Arc::new(Default::default())
    } else {
        Arc::new(txn.overlay.clone())
    };
    Ok(RowCursor {
        key_decodable,
        pk_types,
        idx_types,
        engine,
        index,
        opts,
        iter,
        iter_seq,
        started: false,
        overlay,
        ov_pos: 0,
        pk_overlay,
        snap,
        txn_id: txn.txn_id(),
        held: txn.held.clone(),
        lock_timeout: txn.lock_wait_timeout(),
        interrupt: txn.interrupt_flag(),
        table,
        done: false,
    })
}

impl RowCursor {
    /// The next entry of the merged view, skipping deletions, and whether it is one of the
    /// transaction's own writes.
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        let rev = self.opts.reverse;
        if !self.started {
            self.started = true;
            if rev {
                self.iter.it.seek_to_last();
            } else {
                self.iter.it.seek_to_first();
            }
        }
        loop {
            let db_key = if self.iter.it.valid() {
                self.iter.it.key().map(|k| k.to_vec())
            } else {
                self.iter.it.status()?;
                None
            };
            let ov = if self.ov_pos < self.overlay.len() {
                let i = if rev {
                    self.overlay.len() - 1 - self.ov_pos
                } else {
                    self.ov_pos
                };
                Some(i)
            } else {
                None
            };
            let take_overlay = match (&db_key, ov) {
                (None, None) => return Ok(None),
                (None, Some(_)) => true,
                (Some(_), None) => false,
                (Some(dk), Some(i)) => {
                    let ok = &self.overlay[i].0;
                    if rev {
                        ok >= dk
                    } else {
                        ok <= dk
                    }
                }
            };
            if take_overlay {
                let i = ov.unwrap();
                self.ov_pos += 1;
                let (k, v) = self.overlay[i].clone();
                // The overlay shadows the same key in RocksDB.
                if db_key.as_deref() == Some(&k[..]) {
                    self.advance_db();
                }
                match v {
                    Some(value) => {
                        return Ok(Some(Entry {
                            key: k,
                            value,
                            own: true,
                        }))
                    }
                    None => continue,
                }
            } else {
                let key = db_key.unwrap();
                let value = self.iter.it.value().unwrap_or_default().to_vec();
                self.advance_db();
                return Ok(Some(Entry {
                    key,
                    value,
                    own: false,
                }));
            }
        }
    }

    fn advance_db(&mut self) {
        if self.opts.reverse {
            self.iter.it.prev();
        } else {
            self.iter.it.next();
        }
    }

    fn lock(&self, pk_key: &[u8]) -> Result<()> {
        let mode = match self.opts.lock {
            LockMode::None => return Ok(()),
            LockMode::Shared => Mode::Shared,
            LockMode::Exclusive => Mode::Exclusive,
        };
        let mut name = vec![b'r'];
        name.extend_from_slice(pk_key);
        match self.engine.locks.acquire(
            self.txn_id,
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

    /// Reads a primary row by key: own writes first, then the snapshot, or the latest
    /// version (`latest`: locking reads, whatever the snapshot).
    fn read_pk(&self, key: &[u8], latest: bool) -> Result<Option<Vec<u8>>> {
        if let Some(v) = self.pk_overlay.get(key) {
            return Ok(v.clone());
        }
        Ok(match &self.snap {
            Some(s) if !latest => self.engine.db.get_opt(key, &s.read_opts())?,
            _ => self.engine.db.get(key)?,
        })
    }

    fn produce(&mut self, entry: Entry) -> Result<Option<Row>> {
        let Entry { key, value, own } = entry;
        let t = self.table.clone();
        let idx = &t.indexes[self.index];
        let mut rest = &key[5..];
        if idx.primary {
            // The row holds every column; only a hidden row id comes from the key.
            let pk = if t.hidden_pk {
                vec![keycode::decode(&mut rest, &keys::ROWID_TYPE)?]
            } else {
                Vec::new()
            };
            if self.opts.lock != LockMode::None {
                // Lock, then read the latest version (it may have changed or gone since the
                // iterator was opened). The entry is that version when it is the
                // transaction's own write, or when nothing was written since (a commit that
                // changed the row held its lock until it was applied).
                self.lock(&key)?;
                let current = own
                    || (self.snap.is_none()
                        && self.engine.db.latest_sequence_number() == self.iter_seq);
                if !current {
                    return match self.engine.db.get(&key)? {
                        Some(v) => Ok(Some(decode_stored_row(&t, &v, &pk)?)),
                        None => Ok(None),
                    };
                }
            }
            return Ok(Some(decode_stored_row(&t, &value, &pk)?));
        }
        // A secondary entry `enc(index cols) enc(pk cols)`. Values come from the key only for
        // a covering scan whose key columns all decode (general_ci keys hold weights).
        let covering = self.opts.covering && self.opts.lock == LockMode::None && self.key_decodable;
        let mut idx_vals = Vec::with_capacity(self.idx_types.len());
        for ty in &self.idx_types {
            if covering {
                idx_vals.push(keycode::decode(&mut rest, ty)?);
            } else {
                keycode::skip(&mut rest, ty)?;
            }
        }
        let mut pk_key = keys::index_prefix(t.primary().id);
        pk_key.extend_from_slice(rest);
        let mut pk = Vec::with_capacity(self.pk_types.len());
        if covering || t.hidden_pk {
            for ty in &self.pk_types {
                pk.push(keycode::decode(&mut rest, ty)?);
            }
        }
        if covering {
            let mut row = vec![Value::Null; t.columns.len()];
            for (&c, v) in idx.columns.iter().zip(idx_vals) {
                row[c] = v;
            }
            if t.hidden_pk {
                row.push(pk[0].clone());
            } else {
                for (&c, v) in t.primary().columns.iter().zip(pk) {
                    row[c] = v;
                }
            }
            return Ok(Some(row));
        }
        let locking = self.opts.lock != LockMode::None;
        if locking {
            self.lock(&pk_key)?;
        }
        let raw = self.read_pk(&pk_key, locking)?;
        let Some(raw) = raw else {
            return Ok(None);
        };
        let row = decode_stored_row(&t, &raw, &pk)?;
        if self.opts.lock != LockMode::None {
            // The row may have changed since the index entry was read: keep it only if it
            // still has this entry.
            let vis = &row[..t.columns.len()];
            let pk = if t.hidden_pk {
                pk
            } else {
                keys::pk_values(&t, vis)
            };
            let now = keys::secondary_key(&t, idx, vis, &pk)?;
            if now != key {
                return Ok(None);
            }
        }
        Ok(Some(row))
    }
}

impl Iterator for RowCursor {
    type Item = Result<Row>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        loop {
            let entry = match self.next_entry() {
                Ok(Some(e)) => e,
                Ok(None) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            match self.produce(entry) {
                Ok(Some(row)) => return Some(Ok(row)),
                Ok(None) => continue,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
