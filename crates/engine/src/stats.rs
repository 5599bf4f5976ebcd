//! Table statistics for SHOW TABLE STATUS, information_schema.TABLES and index cardinality
//! (SHOW INDEX, information_schema.STATISTICS), read from the latest state of RocksDB.
//!
//! A table of up to [`EXACT_ROWS`] rows is counted exactly; a larger one is estimated from
//! the bytes of the rows counted and RocksDB's approximate size of the table's key range.
//! A non-unique index's cardinality is the number of distinct key prefixes among its first
//! [`SAMPLE`] entries, scaled to the table. Statistics are kept [`FRESH`] before they are
//! read again, so listing many tables costs little.

use std::time::{Duration, Instant};

use crate::catalog::{IndexDef, TableDef, TableId};
use crate::engine::{range_iter, Engine};
use crate::error::Result;
use crate::keycode;
use crate::keys;

/// Rows counted one by one before the count becomes an estimate.
pub const EXACT_ROWS: u64 = 20_000;
/// Index entries sampled for a non-unique index's cardinality.
const SAMPLE: u64 = 5_000;
/// How long statistics are reused.
const FRESH: Duration = Duration::from_secs(10);

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableStats {
    pub rows: u64,
    /// Bytes of the primary index (the rows).
    pub data_length: u64,
    /// Bytes of the secondary indexes.
    pub index_length: u64,
    /// The next AUTO_INCREMENT value, for a table with such a column.
    pub auto_increment: Option<u64>,
    /// Estimated distinct values of each prefix of each index's key columns (in
    /// `TableDef::indexes` and `IndexDef::columns` order).
    pub cardinality: Vec<Vec<u64>>,
    /// When a transaction last changed the table's rows (Unix seconds), since the server
    /// started (as InnoDB keeps it: in memory).
    pub update_time: Option<i64>,
}

/// Statistics of one table, with when they were read.
pub(crate) type Cached = (Instant, TableStats);

impl Engine {
    /// Statistics of table `t` (at most [`FRESH`] old).
    pub fn table_stats(&self, t: &TableDef) -> Result<TableStats> {
        let cached = match self.stats.lock().get(&t.id) {
            Some((at, s)) if at.elapsed() < FRESH => Some(s.clone()),
            _ => None,
        };
        let mut s = match cached {
            Some(s) => s,
            None => {
                let s = self.read_stats(t)?;
                self.stats.lock().insert(t.id, (Instant::now(), s.clone()));
                s
            }
        };
        s.update_time = self.update_times.lock().get(&t.id).copied();
        Ok(s)
    }

    /// Notes that a committed transaction changed the rows of these tables now.
    pub(crate) fn note_updated(&self, tables: impl Iterator<Item = TableId>) {
        let now = crate::table_options::now_secs();
        let mut m = self.update_times.lock();
        for id in tables {
            m.insert(id, now);
        }
    }

    /// Forgets table `id`'s statistics (ANALYZE TABLE reads them again).
    pub fn forget_stats(&self, id: TableId) {
        self.stats.lock().remove(&id);
    }

    fn read_stats(&self, t: &TableDef) -> Result<TableStats> {
        let pid = t.primary().id;
        let (counted, bytes, next) = self.count(pid, EXACT_ROWS)?;
        let (rows, data_length) = match next {
            None => (counted, bytes),
            Some(next) => {
                // The counted rows' share of the table files' size scales the count (both
                // sizes compressed alike); rows only in memtables count as counted.
                let whole = self.approximate_size(&keys::index_prefix(pid), &keys::index_end(pid));
                let part = self.approximate_size(&keys::index_prefix(pid), &next);
                if part > 0 && whole > part {
                    let scale = |x: u64| (x as u128 * whole as u128 / part as u128) as u64;
                    (scale(counted), scale(bytes))
                } else {
                    let data = whole.max(bytes);
                    (data / (bytes / counted.max(1)).max(1), data)
                }
            }
        };
        let mut index_length = 0;
        let mut cardinality = Vec::with_capacity(t.indexes.len());
        for idx in &t.indexes {
            if !idx.primary {
                index_length +=
                    self.approximate_size(&keys::index_prefix(idx.id), &keys::index_end(idx.id));
            }
            let mut card = if idx.primary || idx.unique {
                vec![rows; idx.columns.len()]
            } else {
                self.distinct_prefixes(t, idx, rows)?
            };
            // A unique key's shorter prefixes are estimated like a non-unique index's.
            if idx.unique && idx.columns.len() > 1 && !idx.primary {
                let sampled = self.distinct_prefixes(t, idx, rows)?;
                card[..idx.columns.len() - 1].copy_from_slice(&sampled[..idx.columns.len() - 1]);
            }
            cardinality.push(card);
        }
        let auto_increment = match t.auto_increment_column() {
            Some(_) => Some(crate::autoinc::peek(self, t)?),
            None => None,
        };
        Ok(TableStats {
            rows,
            data_length,
            index_length,
            auto_increment,
            cardinality,
            update_time: None,
        })
    }

    /// Entries of index `id` counted up to `limit`, their bytes, and the first key not
    /// counted (None: all were).
    fn count(&self, id: u32, limit: u64) -> Result<(u64, u64, Option<Vec<u8>>)> {
        let mut it = range_iter(&self.db, keys::index_prefix(id), keys::index_end(id));
        it.seek_to_first();
        let (mut n, mut bytes) = (0u64, 0u64);
        while it.valid() && n < limit {
            bytes += (it.key().map_or(0, |k| k.len()) + it.value().map_or(0, |v| v.len())) as u64;
            n += 1;
            it.next();
        }
        let next = if it.valid() {
            it.key().map(|k| k.to_vec())
        } else {
            None
        };
        it.status()?;
        Ok((n, bytes, next))
    }

    /// RocksDB's estimate of the bytes keys `from..to` take in table files.
    fn approximate_size(&self, from: &[u8], to: &[u8]) -> u64 {
        let range = rocksdb::Range::new(from, to);
        self.db
            .get_approximate_sizes(&[range])
            .first()
            .copied()
            .unwrap_or(0)
    }

    /// Distinct prefixes (of 1, 2, ... key columns) among the first [`SAMPLE`] entries of
    /// a secondary index, scaled to `rows`.
    fn distinct_prefixes(&self, t: &TableDef, idx: &IndexDef, rows: u64) -> Result<Vec<u64>> {
        let head = keys::index_prefix(idx.id).len();
        let mut it = range_iter(
            &self.db,
            keys::index_prefix(idx.id),
            keys::index_end(idx.id),
        );
        it.seek_to_first();
        let ncols = idx.columns.len();
        let mut n = 0u64;
        let mut distinct = vec![0u64; ncols];
        let mut last: Vec<u8> = Vec::new();
        let mut last_ends: Vec<usize> = Vec::new();
        while it.valid() && n < SAMPLE {
            let key = it.key().unwrap_or_default();
            let mut rest = &key[head..];
            let mut ends = Vec::with_capacity(ncols);
            for &c in &idx.columns {
                keycode::skip(&mut rest, &t.columns[c].ty)?;
                ends.push(key.len() - rest.len());
            }
            for (i, &end) in ends.iter().enumerate() {
                if n == 0 || last_ends[i] != end || last[..end] != key[..end] {
                    distinct[i] += 1;
                }
            }
            last = key.to_vec();
            last_ends = ends;
            n += 1;
            it.next();
        }
        it.status()?;
        if n == 0 {
            return Ok(vec![0; ncols]);
        }
        Ok(distinct
            .into_iter()
            .map(|d| (d * rows.max(n) / n).clamp(1, rows.max(1)))
            .collect())
    }
}
