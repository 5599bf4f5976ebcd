//! CHECK TABLE and OPTIMIZE TABLE.
//!
//! `check_table` reads one consistent state (the published read snapshot) and checks that
//! the table's indexes agree: every stored row's key is the encoding of its primary key
//! columns, every row has the entry it should have in each secondary index, and every
//! secondary entry is one that an existing row should have (so no index has entries for
//! rows that are gone, or stale entries for old values). It reads every row once plus one
//! point lookup per row and index, and again per secondary entry, in constant memory.
//!
//! `optimize_table` compacts the key ranges of the table's indexes in RocksDB (dropping
//! the deleted and overwritten versions they still hold). RocksDB's manual compaction
//! flushes the memtable first when the memtable holds keys of the range, and in `engine`
//! mode a flush outside the commit path could persist changes the binlog has not made
//! durable yet. So writers of the table wait meanwhile (a read-only metadata lock, as
//! `LOCK TABLES t READ` takes), everything applied is flushed while no group is in flight
//! (as a checkpoint does), and the compaction then finds no key of the table in the
//! memtable: it never flushes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use onelog_types::Value;

use crate::catalog::TableDef;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::keycode;
use crate::keys;
use crate::table_locks::TableLockMode;
use crate::txn::decode_stored_row;

/// What CHECK TABLE found.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    pub rows: u64,
    /// Descriptions of the inconsistencies found (at most a few per index).
    pub problems: Vec<String>,
}

/// Problems described per index before the rest are only counted.
const DESCRIBED: usize = 3;

fn interrupted(flag: Option<&AtomicBool>) -> Result<()> {
    if flag.is_some_and(|f| f.load(Ordering::Relaxed)) {
        return Err(EngineError::Interrupted);
    }
    Ok(())
}

fn show_key(k: &[u8]) -> String {
    k.iter().map(|b| format!("{b:02x}")).collect()
}

impl Engine {
    /// Checks the indexes of `t` against each other (see the module comment). `quick`:
    /// only the primary index and the number of entries of each secondary index.
    pub fn check_table(
        &self,
        t: &TableDef,
        quick: bool,
        interrupt: Option<&AtomicBool>,
    ) -> Result<CheckReport> {
        let snap = self.committer.read_snapshot();
        let mut report = CheckReport::default();
        let primary = t.primary();
        let pk_types = keys::pk_types(t);
        let secondary: Vec<_> = t.indexes.iter().filter(|i| !i.primary).collect();
        let mut missing = vec![0u64; secondary.len()];
        let get = |key: &[u8]| -> Result<Option<Vec<u8>>> {
            Ok(self.db.get_opt(key, &snap.read_opts())?)
        };
        // Every row: its key, and its entry in each secondary index.
        let mut ro = snap.read_opts();
        ro.set_iterate_lower_bound(keys::index_prefix(primary.id));
        ro.set_iterate_upper_bound(keys::index_end(primary.id));
        let mut it = self.db.raw_iterator_opt(ro);
        it.seek_to_first();
        let mut bad_rows = 0u64;
        while it.valid() {
            if report.rows.is_multiple_of(1024) {
                interrupted(interrupt)?;
            }
            let (k, v) = (it.key().unwrap(), it.value().unwrap());
            report.rows += 1;
            let suffix = &k[5..];
            let pk: Vec<Value> = if t.hidden_pk {
                let mut rest = suffix;
                vec![keycode::decode(&mut rest, &pk_types[0])?]
            } else {
                Vec::new()
            };
            let row = match decode_stored_row(t, v, &pk) {
                Ok(r) => r,
                Err(e) => {
                    bad_rows += 1;
                    if bad_rows as usize <= DESCRIBED {
                        report
                            .problems
                            .push(format!("Row with key {} does not decode: {e}", show_key(k)));
                    }
                    it.next();
                    continue;
                }
            };
            if !t.hidden_pk {
                let own = keys::encode_tuple(primary.id, &pk_types, &keys::pk_values(t, &row))?;
                if own != k {
                    bad_rows += 1;
                    if bad_rows as usize <= DESCRIBED {
                        report.problems.push(format!(
                            "Row with key {} holds the primary key of key {}",
                            show_key(k),
                            show_key(&own)
                        ));
                    }
                }
            }
            if !quick {
                for (n, idx) in secondary.iter().enumerate() {
                    let mut key = keys::encode_tuple(
                        idx.id,
                        &keys::index_types(t, idx),
                        &keys::secondary_values(t, idx, &row),
                    )?;
                    key.extend_from_slice(suffix);
                    if get(&key)?.is_none() {
                        missing[n] += 1;
                        if missing[n] as usize <= DESCRIBED {
                            report.problems.push(format!(
                                "Index '{}' has no entry for the row with key {}",
                                idx.name,
                                show_key(k)
                            ));
                        }
                    }
                }
            }
            it.next();
        }
        it.status()?;
        if bad_rows as usize > DESCRIBED {
            report.problems.push(format!(
                "{bad_rows} rows of the primary index are inconsistent"
            ));
        }
        // Every secondary entry: a row that should have it.
        for (n, idx) in secondary.iter().enumerate() {
            let types = keys::index_types(t, idx);
            let mut ro = snap.read_opts();
            ro.set_iterate_lower_bound(keys::index_prefix(idx.id));
            ro.set_iterate_upper_bound(keys::index_end(idx.id));
            let mut it = self.db.raw_iterator_opt(ro);
            it.seek_to_first();
            let (mut entries, mut stray) = (0u64, 0u64);
            while it.valid() {
                if entries.is_multiple_of(1024) {
                    interrupted(interrupt)?;
                }
                entries += 1;
                let k = it.key().unwrap();
                if !quick {
                    let mut rest = &k[5..];
                    for ty in &types {
                        keycode::skip(&mut rest, ty)?;
                    }
                    let mut pk_key = keys::index_prefix(primary.id);
                    pk_key.extend_from_slice(rest);
                    let expected = match get(&pk_key)? {
                        None => None,
                        Some(raw) => {
                            let pk: Vec<Value> = if t.hidden_pk {
                                let mut r = rest;
                                vec![keycode::decode(&mut r, &pk_types[0])?]
                            } else {
                                Vec::new()
                            };
                            let row = decode_stored_row(t, &raw, &pk)?;
                            let mut key = keys::encode_tuple(
                                idx.id,
                                &types,
                                &keys::secondary_values(t, idx, &row),
                            )?;
                            key.extend_from_slice(rest);
                            Some(key)
                        }
                    };
                    if expected.as_deref() != Some(k) {
                        stray += 1;
                        if stray as usize <= DESCRIBED {
                            report.problems.push(match expected {
                                None => format!(
                                    "Index '{}' has an entry for a row that does not exist (entry {})",
                                    idx.name,
                                    show_key(k)
                                ),
                                Some(_) => format!(
                                    "Index '{}' has an entry that does not match its row (entry {})",
                                    idx.name,
                                    show_key(k)
                                ),
                            });
                        }
                    }
                }
                it.next();
            }
            it.status()?;
            if entries != report.rows || stray > 0 || missing[n] > 0 {
                report.problems.push(format!(
                    "Index '{}' contains {entries} entries, should be {}.",
                    idx.name, report.rows
                ));
            }
        }
        Ok(report)
    }

    /// Compacts the key ranges of `t`'s indexes (see the module comment). Waits for the
    /// table's writers (`timeout`, `interrupt` as for LOCK TABLES); `locked`: the caller
    /// already keeps writers out (its own LOCK TABLES).
    pub fn optimize_table(
        self: &Arc<Self>,
        t: &TableDef,
        locked: bool,
        timeout: Duration,
        interrupt: Option<&AtomicBool>,
    ) -> Result<()> {
        let _locks = if locked {
            None
        } else {
            Some(self.lock_tables(
                &[(t.db.clone(), t.name.clone(), TableLockMode::Read)],
                timeout,
                interrupt,
            )?)
        };
        self.checkpoint()?;
        let mut opts = rocksdb::CompactOptions::default();
        opts.set_exclusive_manual_compaction(false);
        for idx in &t.indexes {
            interrupted(interrupt)?;
            self.db.compact_range_opt(
                Some(keys::index_prefix(idx.id)),
                Some(keys::index_end(idx.id)),
                &opts,
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{ColumnDef, IndexDef};
    use crate::ddl::Ddl;
    use crate::engine::{DdlReplayer, EngineOptions};
    use crate::txn::Isolation;
    use onelog_types::{Collation, ColumnType};

    struct NoDdl;

    impl DdlReplayer for NoDdl {
        fn replay(&self, _: &Engine, _: &str, sql: &str) -> Result<()> {
            Err(EngineError::Other(format!("no DDL expected: {sql}")))
        }
    }

    fn col(name: &str, ty: ColumnType) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty,
            nullable: true,
            default: None,
            auto_increment: false,
            default_now: false,
            on_update_now: false,
            default_expr: None,
            comment: String::new(),
            display_width: None,
            num: Default::default(),
        }
    }

    fn index(name: &str, columns: Vec<usize>, primary: bool) -> IndexDef {
        IndexDef {
            id: 0,
            name: name.into(),
            columns,
            prefix_lens: vec![],
            unique: primary,
            primary,
        }
    }

    /// Writes outside group commit, then published (what a check reads).
    fn raw(e: &Engine) -> Raw<'_> {
        Raw(e)
    }

    struct Raw<'a>(&'a Engine);

    impl Raw<'_> {
        fn put(&self, k: impl AsRef<[u8]>, v: impl AsRef<[u8]>) -> Result<()> {
            let mut b = rocksdb::WriteBatch::default();
            b.put(k, v);
            self.0.write_direct(b)
        }
        fn delete(&self, k: impl AsRef<[u8]>) -> Result<()> {
            let mut b = rocksdb::WriteBatch::default();
            b.delete(k);
            self.0.write_direct(b)
        }
    }

    /// A healthy table checks OK; a missing, a stray and a stale secondary entry and a row
    /// stored under the wrong key are each found.
    #[test]
    fn finds_each_kind_of_inconsistency() {
        let dir = tempfile::tempdir().unwrap();
        let opts = EngineOptions {
            datadir: dir.path().to_path_buf(),
            ..Default::default()
        };
        let e = Engine::open(opts, &NoDdl).unwrap();
        let int = ColumnType::Int {
            bytes: 4,
            unsigned: false,
        };
        let ci = ColumnType::varchar(10, Collation::Utf8mb4GeneralCi);
        e.ddl(
            "",
            "CREATE DATABASE d",
            Ddl::CreateDatabase {
                name: "d".into(),
                if_not_exists: false,
            },
        )
        .unwrap();
        let def = TableDef {
            id: 0,
            db: "d".into(),
            name: "t".into(),
            columns: vec![col("id", int), col("name", ci), col("n", int)],
            indexes: vec![
                index("PRIMARY", vec![0], true),
                index("name", vec![1], false),
                index("n", vec![2, 1], false),
            ],
            hidden_pk: false,
            comment: String::new(),
            engine_name: "InnoDB".into(),
            auto_increment_start: None,
            collation: Collation::Utf8mb4GeneralCi,
            checks: Vec::new(),
            foreign_keys: Vec::new(),
            sequence: false,
            create_options: Vec::new(),
            create_time: None,
        };
        e.ddl(
            "d",
            "CREATE TABLE t",
            Ddl::CreateTable {
                def,
                if_not_exists: false,
                or_replace: false,
            },
        )
        .unwrap();
        let t = e.catalog().table("d", "t").unwrap().clone();
        let mut txn = e.begin(Isolation::RepeatableRead);
        txn.open_table_for_write("d", "t").unwrap();
        for i in 0..100 {
            let row = vec![
                Value::Int(i),
                Value::str(&format!("Name {i}")),
                Value::Int(i % 7),
            ];
            txn.insert(&t, row).unwrap();
        }
        txn.commit().unwrap();
        let report = e.check_table(&t, false, None).unwrap();
        assert_eq!(report.rows, 100);
        assert!(report.problems.is_empty(), "{:?}", report.problems);

        let row = |i: i64, name: &str, n: i64| vec![Value::Int(i), Value::str(name), Value::Int(n)];
        let entry = |idx: usize, r: &[Value]| {
            let pk = keys::pk_values(&t, r);
            keys::secondary_key(&t, &t.indexes[idx], r, &pk).unwrap()
        };
        // A row without its entry in `name`.
        raw(&e).delete(entry(1, &row(5, "Name 5", 5))).unwrap();
        let r = e.check_table(&t, false, None).unwrap();
        assert!(
            r.problems
                .iter()
                .any(|p| p.starts_with("Index 'name' has no entry")),
            "{:?}",
            r.problems
        );
        assert!(
            r.problems
                .iter()
                .any(|p| p == "Index 'name' contains 99 entries, should be 100."),
            "{:?}",
            r.problems
        );
        // QUICK sees the count only.
        let q = e.check_table(&t, true, None).unwrap();
        assert_eq!(q.problems.len(), 1, "{:?}", q.problems);
        raw(&e).put(entry(1, &row(5, "Name 5", 5)), b"").unwrap();
        assert!(e.check_table(&t, false, None).unwrap().problems.is_empty());
        // An entry for a row that does not exist.
        raw(&e).put(entry(2, &row(500, "x", 1)), b"").unwrap();
        let r = e.check_table(&t, false, None).unwrap();
        assert!(
            r.problems
                .iter()
                .any(|p| p.starts_with("Index 'n' has an entry for a row that does not exist")),
            "{:?}",
            r.problems
        );
        raw(&e).delete(entry(2, &row(500, "x", 1))).unwrap();
        // A stale entry: the row's old value is still indexed beside the new one.
        raw(&e).put(entry(2, &row(6, "Name 6", 3)), b"").unwrap();
        let r = e.check_table(&t, false, None).unwrap();
        assert!(
            r.problems
                .iter()
                .any(|p| p.starts_with("Index 'n' has an entry that does not match its row")),
            "{:?}",
            r.problems
        );
        raw(&e).delete(entry(2, &row(6, "Name 6", 3))).unwrap();
        assert!(e.check_table(&t, false, None).unwrap().problems.is_empty());
        // A row stored under another row's key.
        let k7 =
            keys::encode_tuple(t.indexes[0].id, &keys::pk_types(&t), &[Value::Int(7)]).unwrap();
        let v8 =
            e.db.get(
                keys::encode_tuple(t.indexes[0].id, &keys::pk_types(&t), &[Value::Int(8)]).unwrap(),
            )
            .unwrap()
            .unwrap();
        raw(&e).put(&k7, &v8).unwrap();
        let r = e.check_table(&t, false, None).unwrap();
        assert!(
            r.problems
                .iter()
                .any(|p| p.contains("holds the primary key of key")),
            "{:?}",
            r.problems
        );
        e.shutdown().unwrap();
    }
}
