//! AUTO_INCREMENT counters, hidden row ids and primary key bounds.
//!
//! Counters live in memory and are loaded on first use from the largest value stored in the
//! table (as InnoDB did before MariaDB 10.2.4), so they need no logging: after recovery the
//! data, and therefore the counter, are exactly what the binlog describes.
//!
//! A table's primary key bound is the largest primary key it may hold, committed or written
//! by an open transaction (loaded the same way, raised by every insert and key change). A
//! key above it cannot be a duplicate, so inserts in key order (AUTO_INCREMENT values,
//! timestamps) skip the duplicate lookup, which otherwise probes every memtable and the
//! filter of every overlapping SST file.

use onelog_types::Value;

use crate::catalog::TableDef;
use crate::engine::{range_iter, Engine};
use crate::error::Result;
use crate::keycode;
use crate::keys;
use crate::txn::decode_stored_row;

fn as_u64(v: &Value) -> u64 {
    match v {
        Value::Int(i) => (*i).max(0) as u64,
        Value::UInt(u) => *u,
        Value::Double(d) if *d > 0.0 => *d as u64,
        Value::Decimal(d) => d.to_f64().max(0.0) as u64,
        _ => 0,
    }
}

/// The last key of an index, latest committed state.
fn last_key(engine: &Engine, index_id: u32) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    let mut it = range_iter(
        &engine.db,
        keys::index_prefix(index_id),
        keys::index_end(index_id),
    );
    it.seek_to_last();
    if it.valid() {
        return Ok(Some((
            it.key().unwrap().to_vec(),
            it.value().unwrap().to_vec(),
        )));
    }
    it.status()?;
    Ok(None)
}

/// Largest stored value of column `col` (0 for an empty table).
fn load_max(engine: &Engine, t: &TableDef, col: usize) -> Result<u64> {
    // An index led by the column gives the maximum with one seek.
    for idx in &t.indexes {
        if idx.columns.first() == Some(&col) && idx.prefix_lens.first().copied().flatten().is_none()
        {
            let Some((key, _)) = last_key(engine, idx.id)? else {
                return Ok(0);
            };
            let mut rest = &key[5..];
            let v = keycode::decode(&mut rest, &t.columns[col].ty)?;
            return Ok(as_u64(&v));
        }
    }
    let mut max = 0;
    let pid = t.primary().id;
    let mut it = range_iter(&engine.db, keys::index_prefix(pid), keys::index_end(pid));
    it.seek_to_first();
    while it.valid() {
        let row = decode_stored_row(t, it.value().unwrap(), &[Value::UInt(0)])?;
        max = max.max(as_u64(&row[col]));
        it.next();
    }
    it.status()?;
    Ok(max)
}

fn initial(engine: &Engine, t: &TableDef) -> Result<u64> {
    let col = t.auto_increment_column();
    let from_data = match col {
        Some(c) => load_max(engine, t, c)? + 1,
        None => 1,
    };
    Ok(from_data.max(t.auto_increment_start.unwrap_or(1)))
}

/// Reserves `count` values; returns the first.
pub(crate) fn reserve(engine: &Engine, t: &TableDef, count: u64) -> Result<u64> {
    let mut map = engine.autoinc.lock();
    let next = match map.get(&t.id) {
        Some(&n) => n,
        None => initial(engine, t)?,
    };
    map.insert(t.id, next + count);
    Ok(next)
}

/// The next value, without reserving it.
pub(crate) fn peek(engine: &Engine, t: &TableDef) -> Result<u64> {
    if let Some(&n) = engine.autoinc.lock().get(&t.id) {
        return Ok(n);
    }
    initial(engine, t)
}

impl Engine {
    /// The value the next AUTO_INCREMENT insert into `t` would get (what SHOW CREATE TABLE
    /// shows as `AUTO_INCREMENT=`); None for a table without an AUTO_INCREMENT column.
    pub fn auto_increment_next(&self, t: &TableDef) -> Result<Option<u64>> {
        match t.auto_increment_column() {
            Some(_) => peek(self, t).map(Some),
            None => Ok(None),
        }
    }
}

/// Makes sure later values exceed `value`.
pub(crate) fn observe(engine: &Engine, t: &TableDef, value: u64) -> Result<()> {
    let mut map = engine.autoinc.lock();
    let next = match map.get(&t.id) {
        Some(&n) => n,
        None => initial(engine, t)?,
    };
    map.insert(t.id, next.max(value.saturating_add(1)));
    Ok(())
}

/// Forgets a table's counters and bound (TRUNCATE, DROP, ALTER, under the table's exclusive
/// metadata lock, so no open transaction holds writes to it): reloaded from the data on
/// next use.
pub(crate) fn reset(engine: &Engine, table_id: u32) {
    engine.autoinc.lock().remove(&table_id);
    engine.rowids.lock().remove(&table_id);
    engine.pk_bounds.lock().remove(&table_id);
}

/// Whether primary key `key` of `t` lies above every primary key the table may hold; if so
/// it becomes the new bound. The caller holds the key's row lock and writes the key (or
/// gives up, which leaves the bound merely high): when this says yes, no committed row and
/// no open transaction has the key, and the duplicate lookup can be skipped.
///
/// Every write of a primary key outside DDL passes here (inserts and key-changing updates,
/// also when replayed or replicated), and DDL resets the bound under its exclusive lock, so
/// the bound is never below a key that exists or is being written.
pub(crate) fn raise_pk_bound(engine: &Engine, t: &TableDef, key: &[u8]) -> Result<bool> {
    let pid = t.primary().id;
    let mut map = engine.pk_bounds.lock();
    let bound = match map.get_mut(&t.id) {
        Some((id, bound)) if *id == pid => bound,
        _ => {
            // Index keys are never empty: an empty bound means an empty table.
            let last = last_key(engine, pid)?.map(|(k, _)| k).unwrap_or_default();
            &mut map.entry(t.id).insert_entry((pid, last)).into_mut().1
        }
    };
    if !bound.is_empty() && key <= &bound[..] {
        return Ok(false);
    }
    bound.clear();
    bound.extend_from_slice(key);
    Ok(true)
}

/// The next hidden row id of a table without a primary key.
pub(crate) fn next_rowid(engine: &Engine, t: &TableDef) -> Result<u64> {
    let mut map = engine.rowids.lock();
    let next = match map.get(&t.id) {
        Some(&n) => n,
        None => match last_key(engine, t.primary().id)? {
            Some((key, _)) => {
                let mut rest = &key[5..];
                as_u64(&keycode::decode(&mut rest, &keys::ROWID_TYPE)?) + 1
            }
            None => 1,
        },
    };
    map.insert(t.id, next + 1);
    Ok(next)
}
