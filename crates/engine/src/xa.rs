//! XA transactions: prepared transactions that outlive their connection and a crash.
//!
//! `XA PREPARE` is one commit group like any other, so it costs one sync shared with the
//! group: its binlog group (`GTID(PREPARED_XA) rows... QUERY "XA END" XA_PREPARE`, see
//! `onelog_binlog::xa`) holds the row changes, and its RocksDB batch holds only the `B`
//! record of the transaction (`keys::xa_key`: its row changes as a row-redo body), not the
//! changes themselves: the tables do not change. The transaction stays open in the
//! [`Registry`], holding its locks and its buffered changes, owned by the connection that
//! prepared it until that connection ends (then any connection may end it, as in MariaDB).
//!
//! `XA COMMIT` is a group whose binlog part is the `XA COMMIT` query and whose batch is the
//! transaction's changes plus the deletion of its record; `XA ROLLBACK` deletes the record
//! only. The record and the changes are in one batch, so a memtable flush persists both or
//! neither, and the applied position in the same batch says which.
//!
//! At open, every record is redone into an open transaction (taking its locks again), and
//! in engine mode recovery then replays the groups after the applied position, which may
//! prepare and end more (`replay_prepare`, `replay_end`). A prepared transaction that
//! changed nothing is logged nowhere and does not survive a restart.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use onelog_binlog::{Gtid, RowRedo, XaXid};
use onelog_types::SqlError;
use parking_lot::Mutex;
use rocksdb::WriteBatch;

use crate::engine::{range_iter, Engine};
use crate::error::{EngineError, Result};
use crate::keys;
use crate::txn::{CommitInfo, Isolation, Txn};
use crate::wal::{LogPos, ReplayChange};

/// The XA transactions of the server: those between `XA START` and `XA PREPARE` (claimed,
/// so that no two connections use one XID) and the prepared ones.
#[derive(Default)]
pub(crate) struct Registry {
    active: Mutex<HashSet<XaXid>>,
    prepared: Mutex<HashMap<XaXid, Prepared>>,
}

struct Prepared {
    txn: Txn,
    /// The connection that prepared it, while it is connected.
    owner: Option<u32>,
    /// Whether its prepare was logged (it changed rows).
    logged: bool,
}

impl Registry {
    /// Drops every prepared transaction (shutdown: they are durable in their records).
    pub(crate) fn clear(&self) {
        let all: Vec<Prepared> = self.prepared.lock().drain().map(|(_, p)| p).collect();
        drop(all);
    }
}

/// `XAER_NOTA` (1397).
pub fn unknown_xid() -> EngineError {
    EngineError::Sql(SqlError::new(1397, "XAE04", "XAER_NOTA: Unknown XID"))
}

/// `XAER_DUPID` (1440).
pub fn duplicate_xid() -> EngineError {
    EngineError::Sql(SqlError::new(
        1440,
        "XAE08",
        "XAER_DUPID: The XID already exists",
    ))
}

impl Txn {
    /// `XA PREPARE`: makes the transaction's changes durable as prepared (one commit group,
    /// per `sync_binlog`) without applying them. It stays open, holding its locks, owned by
    /// connection `owner` until [`Engine::xa_detach`]. `db` is the session's database (the
    /// logged `XA END` names it). On error the transaction is rolled back.
    pub fn xa_prepare(mut self, xa: XaXid, owner: u32, db: &str) -> Result<CommitInfo> {
        let engine = self.engine().clone();
        let logged = !self.changes.is_empty();
        let info = if logged {
            prepare_logged(&mut self, xa, db)?
        } else {
            CommitInfo::default()
        };
        engine.xa.active.lock().remove(&xa);
        engine.xa.prepared.lock().insert(
            xa,
            Prepared {
                txn: self,
                owner: Some(owner),
                logged,
            },
        );
        Ok(info)
    }
}

fn prepare_logged(txn: &mut Txn, xa: XaXid, db: &str) -> Result<CommitInfo> {
    let engine = txn.engine().clone();
    if let Some(why) = engine.committer.failure() {
        return Err(EngineError::LogFailed(why));
    }
    let mut batch = WriteBatch::default();
    batch.put(keys::xa_key(&xa), engine.wal.redo_record(txn)?);
    let xid = engine.wal.next_xid();
    let ahead = txn.ahead.take();
    let group = engine.wal.xa_prepare_group(txn, ahead, xid, xa, db)?;
    crate::commit::submit_in_order(txn, batch, group, xid)
}

impl Engine {
    /// `XA START`: claims `xa` for a new transaction (1440 if it is in use or prepared).
    pub fn xa_claim(&self, xa: XaXid) -> Result<()> {
        let prepared = self.xa.prepared.lock();
        if prepared.contains_key(&xa) || !self.xa.active.lock().insert(xa) {
            return Err(duplicate_xid());
        }
        Ok(())
    }

    /// Gives up a claim (the transaction was rolled back or committed in one phase).
    pub fn xa_unclaim(&self, xa: &XaXid) {
        self.xa.active.lock().remove(xa);
    }

    /// `XA RECOVER`: the prepared transactions.
    pub fn xa_recover(&self) -> Vec<XaXid> {
        let mut v: Vec<XaXid> = self.xa.prepared.lock().keys().copied().collect();
        v.sort_by_key(|x| x.key_bytes());
        v
    }

    /// Connection `owner` ended: the transactions it prepared stay prepared, for anyone.
    pub fn xa_detach(&self, owner: u32) {
        for p in self.xa.prepared.lock().values_mut() {
            if p.owner == Some(owner) {
                p.owner = None;
            }
        }
    }

    /// `XA COMMIT xid` of a prepared transaction, by connection `requester` (1397 if it is
    /// not prepared, or prepared by another connection that is still there). Logged under
    /// `gtid` when given (replication).
    pub fn xa_commit(
        &self,
        xa: &XaXid,
        requester: u32,
        db: &str,
        gtid: Option<Gtid>,
    ) -> Result<CommitInfo> {
        self.xa_end(xa, requester, db, gtid, true)
    }

    /// `XA ROLLBACK xid` of a prepared transaction (see [`xa_commit`](Self::xa_commit)).
    pub fn xa_rollback(
        &self,
        xa: &XaXid,
        requester: u32,
        db: &str,
        gtid: Option<Gtid>,
    ) -> Result<CommitInfo> {
        self.xa_end(xa, requester, db, gtid, false)
    }

    fn xa_end(
        &self,
        xa: &XaXid,
        requester: u32,
        db: &str,
        gtid: Option<Gtid>,
        commit: bool,
    ) -> Result<CommitInfo> {
        let p = {
            let mut prepared = self.xa.prepared.lock();
            match prepared.get(xa) {
                Some(p) if p.owner.is_none_or(|o| o == requester) => prepared.remove(xa),
                _ => None,
            }
        }
        .ok_or_else(unknown_xid)?;
        if !p.logged {
            p.txn.close(commit);
            return Ok(CommitInfo::default());
        }
        let outcome = self.committer.failure().map_or_else(
            || {
                let mut batch = if commit {
                    p.txn.overlay_batch()
                } else {
                    WriteBatch::default()
                };
                batch.delete(keys::xa_key(xa));
                let xid = self.wal.next_xid();
                let group = self.wal.xa_complete_group(*xa, commit, xid, db, gtid);
                self.committer.submit(Some(batch), group, xid)
            },
            |why| Err(EngineError::LogFailed(why)),
        );
        match outcome {
            Ok(info) => {
                p.txn.close(commit);
                Ok(info)
            }
            Err(e) => {
                // Still prepared.
                self.xa.prepared.lock().insert(*xa, p);
                Err(e)
            }
        }
    }
}

/// Redoes every prepared XA transaction the tables hold a record of into an open
/// transaction (at open, before anything else runs).
pub(crate) fn restore_prepared(engine: &Arc<Engine>) -> Result<()> {
    let mut records = Vec::new();
    let mut it = range_iter(&engine.db, vec![keys::XA_PREFIX], vec![keys::XA_PREFIX + 1]);
    it.seek_to_first();
    while it.valid() {
        let k = it.key().unwrap();
        let xa = XaXid::from_key_bytes(&k[1..])
            .ok_or_else(|| EngineError::Corrupt(format!("malformed XA record key {k:?}")))?;
        records.push((xa, it.value().unwrap().to_vec()));
        it.next();
    }
    it.status()?;
    drop(it);
    for (xa, record) in &records {
        let changes = record_changes(record)
            .map_err(|e| EngineError::Corrupt(format!("XA record of {xa:?}: {e}")))?;
        let txn = redo(engine, changes)?;
        register_recovered(engine, *xa, txn);
    }
    if !records.is_empty() {
        onelog_types::note!(
            "recovery restored {} prepared XA transaction(s)",
            records.len()
        );
    }
    Ok(())
}

/// Recovery: an `XA PREPARE` group after the applied position.
pub(crate) fn replay_prepare(
    engine: &Arc<Engine>,
    xa: XaXid,
    changes: Vec<ReplayChange>,
    record: Vec<u8>,
    end: LogPos,
) -> Result<()> {
    let txn = redo(engine, changes)?;
    let mut batch = WriteBatch::default();
    batch.put(keys::xa_key(&xa), record);
    batch.put(keys::APPLIED, end.encode());
    engine.write_direct(batch)?;
    register_recovered(engine, xa, txn);
    Ok(())
}

/// Recovery: an `XA COMMIT` or `XA ROLLBACK` group after the applied position. One of a
/// transaction that was never logged as prepared (it changed nothing) changes nothing.
pub(crate) fn replay_end(engine: &Arc<Engine>, xa: XaXid, commit: bool, end: LogPos) -> Result<()> {
    let p = engine.xa.prepared.lock().remove(&xa);
    let mut batch = match (&p, commit) {
        (Some(p), true) => p.txn.overlay_batch(),
        _ => WriteBatch::default(),
    };
    batch.delete(keys::xa_key(&xa));
    batch.put(keys::APPLIED, end.encode());
    engine.write_direct(batch)?;
    if let Some(p) = p {
        p.txn.close(commit);
    }
    Ok(())
}

fn redo(engine: &Arc<Engine>, changes: Vec<ReplayChange>) -> Result<Txn> {
    let mut txn = engine.begin(Isolation::RepeatableRead);
    crate::recovery::redo_changes(engine, &mut txn, changes)?;
    Ok(txn)
}

fn register_recovered(engine: &Engine, xa: XaXid, txn: Txn) {
    engine.xa.prepared.lock().insert(
        xa,
        Prepared {
            txn,
            owner: None,
            logged: true,
        },
    );
}

fn record_changes(record: &[u8]) -> Result<Vec<ReplayChange>> {
    let redo = RowRedo::decode_body(record)
        .ok_or_else(|| EngineError::Corrupt("not a row-redo body".into()))?;
    let mut maps = HashMap::new();
    let mut changes = Vec::new();
    let events = redo
        .events()
        .map_err(|e| EngineError::Corrupt(e.to_string()))?;
    for ev in events {
        crate::wal::collect_rows(ev, &mut maps, &mut changes, Default::default())?;
    }
    Ok(changes)
}
