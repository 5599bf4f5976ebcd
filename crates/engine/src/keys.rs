//! The RocksDB key layout. Everything lives in the default column family, so one memtable
//! flush persists data, catalog and the applied binlog position atomically.
//!
//! | key                                   | value                                   |
//! |---------------------------------------|-----------------------------------------|
//! | `A` `applied`                         | applied log position: file u32 LE, offset u64 LE |
//! | `C` `d` db-name                       | DatabaseDef (JSON)                      |
//! | `C` `t` table-id u32 BE               | TableDef (JSON)                         |
//! | `C` `n`                               | next table id u32 LE, next index id u32 LE |
//! | `C` `o` kind db-name 0x00 lookup-name | StoredObject (JSON): view, routine, trigger, event |
//! | `C` `v`                               | format version u32 LE (see [`upgrade`]) |
//! | `B` XA xid (`XaXid::key_bytes`)       | prepared XA transaction: its row changes as a row-redo body |
//! | `P` xid u64 BE                        | prepared transaction (file mode): its WriteBatch |
//! | `T` file u32 BE offset u64 BE         | binlog bytes written there and not yet synced (`sync_binlog` != 1) |
//! | `I` index-id u32 BE key...            | primary: the row (rowcodec); secondary: empty |
//!
//! Index keys: primary `I id enc(pk cols)`; secondary `I id enc(index cols) enc(pk cols)`,
//! with `enc` from `keycode.rs`. Tables without a declared primary key use a hidden
//! unsigned row id as their primary key. `enc` of utf8mb4_general_ci text is its collation
//! weight string, not decodable: readers take column values from the row (which every
//! primary entry holds whole), never from a key, except for covering scans over decodable
//! key columns.

use onelog_types::{ColumnType, Value};

use crate::catalog::{IndexDef, IndexId, TableDef};
use crate::error::{EngineError, Result};
use crate::keycode;

/// The applied log position, written with every commit group, so every memtable and
/// level-0 file holds it. It sorts before every index key (`A` < `C` < `I`): a level-0
/// file's key range then ends at the highest index key written to it, below the ids that
/// index builds take next (ids only grow), and a build's files (`bulk.rs`) go straight to
/// the last level at ingestion. (A key after the indexes would make every level-0 file's
/// range cover a new index, and an index build ingested while level 0 holds files would
/// land in level 0.)
pub const APPLIED: &[u8] = b"Aapplied";
pub const CATALOG_NEXT: &[u8] = b"Cn";
/// The data directory's format version (u32 LE).
pub const FORMAT_VERSION_KEY: &[u8] = b"Cv";
/// The format this build writes. Each version's change and the upgrade to it:
/// - 1: the applied position at `Mapplied` (after every index key);
/// - 2: the applied position at [`APPLIED`]; the upgrade moves it.
pub const FORMAT_VERSION: u32 = 2;
/// Where format 1 keeps the applied position.
const APPLIED_V1: &[u8] = b"Mapplied";
pub const PREPARED_PREFIX: u8 = b'P';
/// Prepared XA transactions; before the index keys, like [`APPLIED`].
pub const XA_PREFIX: u8 = b'B';
pub const INDEX_PREFIX: u8 = b'I';
pub const TAIL_PREFIX: u8 = b'T';
/// Table files are cut where this many leading key bytes change: `I` and the index id, so
/// each index's entries have files of their own (see `Engine::open`). Other keys are cut
/// at the same length (a few small files of catalog and log-position entries).
pub const PARTITION_PREFIX_LEN: usize = 5;

/// Brings a data directory to [`FORMAT_VERSION`]: runs the numbered upgrades from its
/// stored version (none stored: 1) in one batch with the new version, flushed before
/// anything reads the data (with RocksDB's WAL off, a crash before the flush leaves the
/// old version, and the next open upgrades again). Returns the version upgraded from. A
/// data directory of a newer format than this build's is refused.
pub fn upgrade(db: &rocksdb::DB) -> Result<Option<u32>> {
    let stored = match db.get(FORMAT_VERSION_KEY)? {
        None => 1,
        Some(v) => u32::from_le_bytes(v.as_slice().try_into().map_err(|_| {
            EngineError::Corrupt(format!("format version record of {} bytes", v.len()))
        })?),
    };
    if stored == FORMAT_VERSION {
        return Ok(None);
    }
    if stored > FORMAT_VERSION {
        return Err(EngineError::Corrupt(format!(
            "the data directory has format version {stored}; this onelogd reads versions up \
             to {FORMAT_VERSION}"
        )));
    }
    let mut batch = rocksdb::WriteBatch::default();
    let mut changed = false;
    for from in stored..FORMAT_VERSION {
        if from == 1 {
            if let Some(pos) = db.get(APPLIED_V1)? {
                if db.get(APPLIED)?.is_none() {
                    batch.put(APPLIED, pos);
                }
                batch.delete(APPLIED_V1);
                changed = true;
            }
        }
    }
    batch.put(FORMAT_VERSION_KEY, FORMAT_VERSION.to_le_bytes());
    let mut wo = rocksdb::WriteOptions::default();
    wo.disable_wal(true);
    db.write_opt(batch, &wo)?;
    if !changed {
        // A new data directory (or one no step changes): the record reaches the table
        // files with the first flush, and until then the next open writes it again.
        return Ok(None);
    }
    db.flush()?;
    Ok(Some(stored))
}

/// Key of a binlog tail record: the unsynced log bytes starting at `file`/`offset`.
pub fn tail_key(file: u32, offset: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(13);
    k.push(TAIL_PREFIX);
    k.extend_from_slice(&file.to_be_bytes());
    k.extend_from_slice(&offset.to_be_bytes());
    k
}

/// The position a tail record's key names.
pub fn decode_tail_key(k: &[u8]) -> Option<(u32, u64)> {
    if k.len() != 13 || k[0] != TAIL_PREFIX {
        return None;
    }
    Some((
        u32::from_be_bytes(k[1..5].try_into().ok()?),
        u64::from_be_bytes(k[5..13].try_into().ok()?),
    ))
}

/// Type of the hidden row id of tables without a primary key.
pub const ROWID_TYPE: ColumnType = ColumnType::Int {
    bytes: 8,
    unsigned: true,
};

pub fn db_key(name: &str) -> Vec<u8> {
    let mut k = b"Cd".to_vec();
    k.extend_from_slice(name.as_bytes());
    k
}

/// The catalog key of a stored object (`kind` is [`crate::ObjectKind::tag`], `name` its
/// lookup name).
pub fn object_key(kind: u8, db: &str, name: &str) -> Vec<u8> {
    let mut k = vec![b'C', b'o', kind];
    k.extend_from_slice(db.as_bytes());
    k.push(0);
    k.extend_from_slice(name.as_bytes());
    k
}

pub fn table_key(id: u32) -> Vec<u8> {
    let mut k = b"Ct".to_vec();
    k.extend_from_slice(&id.to_be_bytes());
    k
}

pub fn prepared_key(xid: u64) -> Vec<u8> {
    let mut k = vec![PREPARED_PREFIX];
    k.extend_from_slice(&xid.to_be_bytes());
    k
}

pub fn xa_key(xa: &onelog_binlog::XaXid) -> Vec<u8> {
    let mut k = vec![XA_PREFIX];
    k.extend_from_slice(&xa.key_bytes());
    k
}

pub fn index_prefix(id: IndexId) -> Vec<u8> {
    let mut k = Vec::with_capacity(32);
    k.push(INDEX_PREFIX);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// First key after every key of index `id`.
pub fn index_end(id: IndexId) -> Vec<u8> {
    index_prefix(id + 1)
}

/// The types of the primary key columns (the hidden row id for tables without one).
pub fn pk_types(t: &TableDef) -> Vec<ColumnType> {
    if t.hidden_pk {
        vec![ROWID_TYPE]
    } else {
        t.primary()
            .columns
            .iter()
            .map(|&c| t.columns[c].ty)
            .collect()
    }
}

/// Encodes the primary key values of `row`; for hidden-pk tables `rowid` must be given.
pub fn pk_values(t: &TableDef, row: &[Value]) -> Vec<Value> {
    t.primary()
        .columns
        .iter()
        .map(|&c| row[c].clone())
        .collect()
}

/// `I id enc(values)` for a tuple of values of the given types (a full key or a prefix).
pub fn encode_tuple(id: IndexId, types: &[ColumnType], values: &[Value]) -> Result<Vec<u8>> {
    let mut k = index_prefix(id);
    for (ty, v) in types.iter().zip(values) {
        keycode::encode(&mut k, ty, v)?;
    }
    Ok(k)
}

/// The column types of an index's own key columns, in key order.
pub fn index_types(t: &TableDef, idx: &IndexDef) -> Vec<ColumnType> {
    if idx.primary {
        return pk_types(t);
    }
    idx.columns.iter().map(|&c| t.columns[c].ty).collect()
}

/// Applies an index column prefix length (`KEY (c(10))`) to a value.
pub fn apply_prefix(v: &Value, ty: &ColumnType, prefix: Option<u32>) -> Value {
    match (v, prefix) {
        (Value::Bytes(b), Some(n)) => {
            if ty.is_binary() {
                Value::Bytes(b[..b.len().min(n as usize)].to_vec())
            } else {
                // n characters of UTF-8.
                let s = String::from_utf8_lossy(b);
                Value::Bytes(s.chars().take(n as usize).collect::<String>().into_bytes())
            }
        }
        _ => v.clone(),
    }
}

/// The values of a secondary index's columns taken from a row (prefixes applied).
pub fn secondary_values(t: &TableDef, idx: &IndexDef, row: &[Value]) -> Vec<Value> {
    idx.columns
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            apply_prefix(
                &row[c],
                &t.columns[c].ty,
                idx.prefix_lens.get(i).copied().flatten(),
            )
        })
        .collect()
}

/// The full key of a secondary index entry: `I id enc(index cols) enc(pk)`.
pub fn secondary_key(t: &TableDef, idx: &IndexDef, row: &[Value], pk: &[Value]) -> Result<Vec<u8>> {
    let mut k = encode_tuple(idx.id, &index_types(t, idx), &secondary_values(t, idx, row))?;
    for (ty, v) in pk_types(t).iter().zip(pk) {
        keycode::encode(&mut k, ty, v)?;
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_files_are_cut_exactly_at_index_boundaries() {
        // Every key of an index starts with its whole prefix, and no two indexes share one.
        assert_eq!(index_prefix(7).len(), PARTITION_PREFIX_LEN);
        assert_ne!(
            index_prefix(7)[..PARTITION_PREFIX_LEN],
            index_prefix(8)[..PARTITION_PREFIX_LEN]
        );
        let mut k = index_prefix(7);
        k.extend_from_slice(b"anything");
        assert_eq!(k[..PARTITION_PREFIX_LEN], index_prefix(7)[..]);
    }
}
