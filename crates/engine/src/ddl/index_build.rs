//! Index builds: the secondary index entries (and the rewritten primary index) an ALTER
//! TABLE or CREATE INDEX writes before the catalog names them, sorted into ingested table
//! files or written through the memtable; the unique checks and row counts they need; and
//! the sweep of index data no table names (after recovery).

use super::*;

/// Removes everything stored under index ids `ids`.
pub(super) fn clear_indexes(engine: &Engine, ids: &[u32]) -> Result<()> {
    let mut b = WriteBatch::default();
    for &id in ids {
        b.delete_range(keys::index_prefix(id), keys::index_end(id));
    }
    engine.write_unnamed(b)
}

/// Bytes per write batch of an index build that goes through the memtable.
const BUILD_BATCH_BYTES: usize = 4 << 20;

/// Adds secondary index entries (empty values) to `batch` in key order.
fn write_sorted(batch: &mut WriteBatch, entries: &mut Vec<Vec<u8>>) {
    entries.sort_unstable();
    for k in entries.drain(..) {
        batch.put(&k, b"");
    }
}

/// Writes the entries of `new.indexes[build]` from the rows of `old` (rewriting the rows
/// too when `rewrite`: then `build` includes the primary index), directly into RocksDB:
/// as ingested table files (`bulk.rs`) where it can, else through the memtable. Checks
/// unique indexes; on failure removes what it wrote. Returns the number of rows.
pub(super) fn build_indexes(
    engine: &Engine,
    old: &TableDef,
    new: &TableDef,
    map: &RowMap,
    rewrite: bool,
    pk_same: bool,
    build: &[usize],
) -> Result<u64> {
    if build.is_empty() {
        return Ok(0);
    }
    let ids: Vec<u32> = build.iter().map(|&i| new.indexes[i].id).collect();
    // A changed primary key may collide: checked as the rows are written, which needs
    // the memtable path (keys of the unwritten batch, and a lookup of the written ones).
    let check_pk = rewrite && !new.hidden_pk && !pk_same;
    let result = (|| {
        let mut n = None;
        // Data under the new ids (left by an attempt cut short by a crash) must be
        // cleared first, and ingested files would then overlap the range deletion.
        if !check_pk && !has_data(engine, &ids)? {
            // Rows of a rewrite come in the order of the old primary key, which is the
            // new one's when the key is unchanged.
            let mut sink = Sink::Bulk(BulkLoad::new(engine, ids[0], rewrite && pk_same)?);
            let rows = scan_rows(engine, old, new, map, rewrite, false, build, &mut sink)?;
            if sink.finish(engine)? {
                n = Some(rows);
            }
        }
        let n = match n {
            Some(n) => n,
            None => {
                clear_indexes(engine, &ids)?;
                let mut sink = Sink::Batch {
                    batch: WriteBatch::default(),
                    entries: Vec::new(),
                    entries_len: 0,
                    pending: HashSet::new(),
                };
                let n = scan_rows(engine, old, new, map, rewrite, check_pk, build, &mut sink)?;
                sink.finish(engine)?;
                n
            }
        };
        for &i in build {
            if new.indexes[i].unique && !new.indexes[i].primary {
                check_unique(engine, new, i)?;
            }
        }
        Ok(n)
    })();
    if result.is_err() {
        let _ = clear_indexes(engine, &ids);
    }
    result
}

/// Whether anything is stored under index ids `ids`.
fn has_data(engine: &Engine, ids: &[u32]) -> Result<bool> {
    for &id in ids {
        let mut it = range_iter(&engine.db, keys::index_prefix(id), keys::index_end(id));
        it.seek_to_first();
        if it.valid() {
            return Ok(true);
        }
        it.status()?;
    }
    Ok(false)
}

/// Where an index build's rows and entries go.
enum Sink<'e> {
    /// Table files ingested at the end.
    Bulk(BulkLoad<'e>),
    /// Write batches of up to [`BUILD_BATCH_BYTES`] through the memtable. Secondary
    /// entries of a batch go in key order: the memtable inserts a sorted run next to its
    /// previous key instead of searching for each (the index's values come in primary
    /// key order, that is at random). `pending`: the batch's new primary keys, when
    /// they are checked for duplicates.
    Batch {
        batch: WriteBatch,
        entries: Vec<Vec<u8>>,
        entries_len: usize,
        pending: HashSet<Vec<u8>>,
    },
}

impl Sink<'_> {
    fn row(&mut self, k: &[u8], v: &[u8]) -> Result<()> {
        match self {
            Sink::Bulk(b) => b.add_in_order(k, v),
            Sink::Batch { batch, .. } => {
                batch.put(k, v);
                Ok(())
            }
        }
    }

    fn entry(&mut self, k: Vec<u8>) -> Result<()> {
        match self {
            Sink::Bulk(b) => b.add(&k, b""),
            Sink::Batch {
                entries,
                entries_len,
                ..
            } => {
                *entries_len += k.len();
                entries.push(k);
                Ok(())
            }
        }
    }

    /// Whether primary key `k` is taken, in the batch or in what was written (batch only).
    fn pk_taken(&mut self, engine: &Engine, k: &[u8]) -> Result<bool> {
        match self {
            Sink::Bulk(_) => Ok(false),
            Sink::Batch { pending, .. } => {
                if pending.contains(k) || engine.db.get(k)?.is_some() {
                    return Ok(true);
                }
                pending.insert(k.to_vec());
                Ok(false)
            }
        }
    }

    /// Writes a full batch.
    fn row_done(&mut self, engine: &Engine) -> Result<()> {
        if let Sink::Batch {
            batch,
            entries,
            entries_len,
            pending,
        } = self
        {
            if batch.size_in_bytes() + *entries_len > BUILD_BATCH_BYTES {
                write_sorted(batch, entries);
                *entries_len = 0;
                engine.write_unnamed(std::mem::take(batch))?;
                pending.clear();
            }
        }
        Ok(())
    }

    /// Writes what is left; false if RocksDB refused the ingestion (nothing written).
    fn finish(self, engine: &Engine) -> Result<bool> {
        match self {
            Sink::Bulk(b) => b.finish(),
            Sink::Batch {
                mut batch,
                mut entries,
                ..
            } => {
                write_sorted(&mut batch, &mut entries);
                engine.write_unnamed(batch)?;
                Ok(true)
            }
        }
    }
}

/// Reads every row of `old` and gives `sink` what `new.indexes[build]` hold for it.
#[allow(clippy::too_many_arguments)]
fn scan_rows(
    engine: &Engine,
    old: &TableDef,
    new: &TableDef,
    map: &RowMap,
    rewrite: bool,
    check_pk: bool,
    build: &[usize],
    sink: &mut Sink,
) -> Result<u64> {
    let pid = old.primary().id;
    let mut it = range_iter(&engine.db, keys::index_prefix(pid), keys::index_end(pid));
    it.seek_to_first();
    let old_pk_types = keys::pk_types(old);
    let new_pk_types = keys::pk_types(new);
    let mut rowid = 0u64;
    let mut n = 0u64;
    while it.valid() {
        n += 1;
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
            map.row(old, new, &old_row, n)?
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
            let k = keys::encode_tuple(new.primary().id, &new_pk_types, &new_pk)?;
            if check_pk && sink.pk_taken(engine, &k)? {
                return Err(EngineError::DuplicateKey {
                    key: "PRIMARY".into(),
                    value: new_pk
                        .iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join("-"),
                });
            }
            sink.row(&k, &rowcodec::encode_row(&row))?;
        }
        for &i in build {
            let idx = &new.indexes[i];
            if !idx.primary {
                sink.entry(keys::secondary_key(new, idx, &row, &new_pk)?)?;
            }
        }
        sink.row_done(engine)?;
        it.next();
    }
    it.status()?;
    Ok(n)
}

/// Removes index data that no table names: what an ALTER TABLE's build left when the server
/// stopped before the statement committed, under ids that the committed counter of a DDL
/// on another table had already passed (such DDL goes on during a build), so that no later
/// build clears them. Runs once recovery is done; returns the number of ids cleared.
pub(crate) fn sweep_unnamed_indexes(engine: &Engine) -> Result<usize> {
    let cat = engine.catalog();
    let named: HashSet<u32> = cat
        .tables
        .values()
        .flat_map(|t| t.indexes.iter().map(|i| i.id))
        .collect();
    let mut it = range_iter(
        &engine.db,
        vec![keys::INDEX_PREFIX],
        vec![keys::INDEX_PREFIX + 1],
    );
    it.seek_to_first();
    let mut unnamed = Vec::new();
    while let Some(k) = it.key() {
        let Some(id) = k
            .get(1..5)
            .map(|b| u32::from_be_bytes(b.try_into().unwrap()))
        else {
            return Err(EngineError::Corrupt(format!("index key too short: {k:?}")));
        };
        if !named.contains(&id) {
            unnamed.push(id);
        }
        if id == u32::MAX {
            break;
        }
        it.seek(keys::index_end(id));
    }
    it.status()?;
    if !unnamed.is_empty() {
        clear_indexes(engine, &unnamed)?;
    }
    Ok(unnamed.len())
}

/// The number of rows of a table (latest committed state).
pub(super) fn count_rows(engine: &Engine, t: &TableDef) -> Result<u64> {
    let pid = t.primary().id;
    let mut it = range_iter(&engine.db, keys::index_prefix(pid), keys::index_end(pid));
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status()?;
    Ok(n)
}

/// Fails with a duplicate-key error if two entries of a unique secondary index share key
/// values.
fn check_unique(engine: &Engine, t: &TableDef, i: usize) -> Result<()> {
    let idx = &t.indexes[i];
    let types = keys::index_types(t, idx);
    let mut it = range_iter(
        &engine.db,
        keys::index_prefix(idx.id),
        keys::index_end(idx.id),
    );
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
