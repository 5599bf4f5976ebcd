//! Crash recovery.
//!
//! - `engine` mode: RocksDB holds everything applied up to the position stored under
//!   `keys::APPLIED` (written atomically with each group's data; with the WAL off, a
//!   memtable flush persists a prefix of the groups, position included). The binlog was
//!   already cut back to its last complete group when it was opened. Every group after the
//!   applied position is replayed: row events through a transaction (full row images make
//!   them exact redo), and likewise the rows events nested in a row-redo event (a statement
//!   logged for replicas, whose QUERY is not run again), DDL through the SQL layer's
//!   [`DdlReplayer`]. A CREATE TABLE ... SELECT group re-runs its CREATE TABLE with the
//!   catalog batch held back and writes it together with the redone rows. Afterwards the tables equal a replay of the whole binlog.
//! - `file` mode: RocksDB recovered itself from its WAL. Each prepared record `P xid` is
//!   committed if the binlog holds its XID event and discarded otherwise.
//! - `off`: nothing to do beyond RocksDB's own WAL recovery.
//!
//! In every mode the prepared XA transactions (`X` records, see `xa.rs`) are then redone
//! into open transactions that hold their locks until a client commits or rolls them back.

use std::sync::Arc;

use rocksdb::WriteBatch;

use crate::catalog::TableDef;
use crate::engine::{range_iter, DdlReplayer, Engine, LogMode};
use crate::error::{EngineError, Result};
use crate::keys;
use crate::replicate::conform;
use crate::txn::{ChangeKind, Isolation, Row, Txn};
use crate::wal::{LogPos, ReplayChange, ReplayGroup};

pub(crate) fn recover(engine: &Arc<Engine>, replayer: &dyn DdlReplayer) -> Result<()> {
    match engine.opts.mode {
        LogMode::Engine => {
            // The XA transactions prepared up to the applied position, then the groups
            // after it (which may prepare or end more).
            crate::xa::restore_prepared(engine)?;
            recover_engine(engine, replayer)
        }
        LogMode::File => {
            recover_file(engine)?;
            crate::xa::restore_prepared(engine)
        }
        LogMode::Off => crate::xa::restore_prepared(engine),
    }
}

fn recover_engine(engine: &Arc<Engine>, replayer: &dyn DdlReplayer) -> Result<()> {
    let applied = engine
        .db
        .get(keys::APPLIED)?
        .map(|v| LogPos::decode(&v))
        .transpose()?;
    let mut replayed = 0u64;
    engine.wal.for_each_group(applied, &mut |group| {
        replayed += 1;
        match group {
            ReplayGroup::Ddl { db, sql, end } => {
                *engine.replay_pos.lock() = Some(end);
                let r = replayer.replay(engine, &db, &sql);
                *engine.replay_pos.lock() = None;
                r.map_err(|e| {
                    EngineError::Corrupt(format!(
                        "replaying DDL `{sql}` from the binlog failed: {e}"
                    ))
                })
            }
            ReplayGroup::Rows { changes, end } => {
                let mut txn = engine.begin(Isolation::RepeatableRead);
                redo_changes(engine, &mut txn, changes)?;
                txn.commit_replayed(end)
            }
            // CREATE TABLE ... SELECT: the table and its rows in one write, as committed.
            ReplayGroup::DdlRows {
                db,
                sql,
                changes,
                end,
            } => {
                *engine.replay_hold.lock() = Some(WriteBatch::default());
                let r = replayer.replay(engine, &db, &sql);
                let held = engine.replay_hold.lock().take().unwrap_or_default();
                r.map_err(|e| {
                    EngineError::Corrupt(format!(
                        "replaying DDL `{sql}` from the binlog failed: {e}"
                    ))
                })?;
                let mut txn = engine.begin(Isolation::RepeatableRead);
                redo_changes(engine, &mut txn, changes)?;
                txn.commit_replayed_onto(held, end)
            }
            ReplayGroup::XaPrepare {
                xa,
                changes,
                record,
                end,
            } => crate::xa::replay_prepare(engine, xa, changes, record, end),
            ReplayGroup::XaEnd { xa, commit, end } => {
                crate::xa::replay_end(engine, xa, commit, end)
            }
        }
    })?;
    if replayed > 0 {
        onelog_types::note!("recovery replayed {replayed} binlog event groups");
        engine.db.flush()?;
    }
    Ok(())
}

/// Redoes logged row changes in `txn` (full row images make them exact redo).
pub(crate) fn redo_changes(
    engine: &Arc<Engine>,
    txn: &mut Txn,
    changes: Vec<ReplayChange>,
) -> Result<()> {
    for c in changes {
        let t = engine
            .catalog()
            .table(&c.db, &c.table)
            .cloned()
            .ok_or_else(|| {
                EngineError::Corrupt(format!(
                    "binlog names table {}.{} that does not exist at that point",
                    c.db, c.table
                ))
            })?;
        let before = c.before.map(|r| conform(&t, r));
        let after = c.after.map(|r| conform(&t, r));
        match c.kind {
            ChangeKind::Insert => txn.insert(&t, after.unwrap_or_default())?,
            ChangeKind::Update => {
                let old = locate(txn, &t, before.unwrap_or_default())?;
                txn.update(&t, &old, after.unwrap_or_default())?
            }
            ChangeKind::Delete => {
                let old = locate(txn, &t, before.unwrap_or_default())?;
                txn.delete(&t, &old)?
            }
        }
    }
    Ok(())
}

/// For a before image: the stored row (with its hidden row id for tables without a primary
/// key, found by comparing all columns).
fn locate(txn: &mut Txn, t: &Arc<TableDef>, before: Row) -> Result<Row> {
    if !t.hidden_pk {
        return Ok(before);
    }
    txn.stored_row(t, &before)?.ok_or_else(|| {
        EngineError::Corrupt(format!(
            "binlog row of {}.{} not found during recovery",
            t.db, t.name
        ))
    })
}

fn recover_file(engine: &Arc<Engine>) -> Result<()> {
    let mut it = range_iter(
        &engine.db,
        vec![keys::PREPARED_PREFIX],
        vec![keys::PREPARED_PREFIX + 1],
    );
    it.seek_to_first();
    let mut prepared = Vec::new();
    while it.valid() {
        let k = it.key().unwrap();
        let xid = u64::from_be_bytes(k[1..9].try_into().unwrap());
        prepared.push((k.to_vec(), xid, it.value().unwrap().to_vec()));
        it.next();
    }
    it.status()?;
    drop(it);
    if prepared.is_empty() {
        return Ok(());
    }
    let logged = engine.wal.logged_xids()?;
    let (mut committed, mut rolled_back) = (0, 0);
    for (key, xid, data) in prepared {
        let mut batch = if logged.contains(&xid) {
            committed += 1;
            WriteBatch::from_data(&data)
        } else {
            rolled_back += 1;
            WriteBatch::default()
        };
        batch.delete(&key);
        engine.db.write(batch)?;
    }
    engine.db.flush_wal(true)?;
    onelog_types::note!(
        "recovery committed {committed} and rolled back {rolled_back} prepared transactions"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineOptions;
    use crate::txn::LoggedStatement;

    struct NoDdl;

    impl DdlReplayer for NoDdl {
        fn replay(&self, _: &Engine, _: &str, sql: &str) -> Result<()> {
            Err(EngineError::Other(format!("no DDL expected: {sql}")))
        }
    }

    /// File mode: a prepared transaction whose XID is only in a row-redo event (a logged
    /// statement has no XID event) is committed at recovery, one whose XID is nowhere in
    /// the binlog is rolled back.
    #[test]
    fn file_mode_finds_xids_in_row_redo_events() {
        let dir = tempfile::tempdir().unwrap();
        let opts = EngineOptions {
            datadir: dir.path().to_path_buf(),
            mode: LogMode::File,
            ..Default::default()
        };
        let e = Engine::open(opts.clone(), &NoDdl).unwrap();
        let t = e.begin(Isolation::RepeatableRead);
        t.commit_logged(&LoggedStatement {
            sql: "CREATE USER u".into(),
            ..Default::default()
        })
        .unwrap();
        let b = e.wal.binlog.as_ref().unwrap();
        let first = b.file_no(&b.list_files()[0].0).unwrap();
        let xid = b
            .read_events(onelog_binlog::LogPos::new(first, 0))
            .find_map(|ev| match ev.unwrap().event {
                onelog_binlog::Event::RowRedo(r) => Some(r.xid),
                _ => None,
            })
            .expect("a row redo event");
        assert!(e.wal.logged_xids().unwrap().contains(&xid));
        // What a crash between the binlog write and the commit leaves: prepared records.
        let mut kept = WriteBatch::default();
        kept.put(b"Zkept", b"1");
        let mut gone = WriteBatch::default();
        gone.put(b"Zgone", b"1");
        e.db.put(keys::prepared_key(xid), kept.data()).unwrap();
        e.db.put(keys::prepared_key(xid ^ (1 << 62)), gone.data())
            .unwrap();
        e.db.flush_wal(true).unwrap();
        drop(e);
        let e = Engine::open(opts, &NoDdl).unwrap();
        assert_eq!(e.db.get(b"Zkept").unwrap().as_deref(), Some(&b"1"[..]));
        assert_eq!(e.db.get(b"Zgone").unwrap(), None);
        e.shutdown().unwrap();
    }
}
