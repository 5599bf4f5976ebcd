//! Table locks a session holds across its transactions: `LOCK TABLES` (READ or WRITE).
//!
//! They are the tables' metadata locks (`locks.rs`), held under an owner id of their own
//! (taken from the transaction id counter) instead of a transaction's: READ takes
//! [`Mode::ReadOnly`] (writers wait, readers go on), WRITE takes [`Mode::Exclusive`] (every
//! other session waits). Taking them waits, as MariaDB's metadata locks do, for the
//! transactions still open that read (WRITE) or wrote (READ and WRITE) the table, so a
//! table READ-locked has no uncommitted change in flight. The session's own statements
//! open a table it locked without a metadata lock of their own ([`Txn::open_table_covered`]),
//! and its DDL runs under the owner id ([`Engine::ddl_owned`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::locks::{Mode, TxnId};
use crate::txn::mdl_name;

/// How a table is locked by `LOCK TABLES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableLockMode {
    Read,
    Write,
}

/// Locks taken by one `LOCK TABLES` statement; released when dropped.
pub struct TableLocks {
    engine: Arc<Engine>,
    owner: TxnId,
    held: Vec<Vec<u8>>,
}

impl TableLocks {
    /// The id the locks are held under (DDL of the session runs under it).
    pub fn owner(&self) -> TxnId {
        self.owner
    }
}

impl Drop for TableLocks {
    fn drop(&mut self) {
        self.engine.locks.release_all(self.owner, &self.held);
    }
}

impl Engine {
    /// Locks `tables` (db, table, mode) for a session: in name order (so two sessions
    /// never wait for each other in a cycle here), each table once in the strongest mode
    /// asked. Each wait ends after `timeout`, or when `interrupt` is set. Fails with
    /// [`EngineError::NoSuchTable`] for a table that does not exist (after its lock is
    /// taken, so a concurrent DROP is seen), releasing what it took.
    pub fn lock_tables(
        self: &Arc<Self>,
        tables: &[(String, String, TableLockMode)],
        timeout: Duration,
        interrupt: Option<&AtomicBool>,
    ) -> Result<TableLocks> {
        let mut want: Vec<(Vec<u8>, &str, &str, Mode)> = Vec::new();
        for (db, t, m) in tables {
            let name = mdl_name(db, t);
            let mode = match m {
                TableLockMode::Read => Mode::ReadOnly,
                TableLockMode::Write => Mode::Exclusive,
            };
            match want.iter_mut().find(|w| w.0 == name) {
                Some(w) if mode == Mode::Exclusive => w.3 = mode,
                Some(_) => {}
                None => want.push((name, db, t, mode)),
            }
        }
        want.sort_by(|a, b| a.0.cmp(&b.0));
        let mut locks = TableLocks {
            engine: self.clone(),
            owner: self.next_txn.fetch_add(1, Ordering::Relaxed),
            held: Vec::with_capacity(want.len()),
        };
        for (name, db, t, mode) in want {
            if self
                .locks
                .acquire(locks.owner, &name, mode, timeout, interrupt)
                .inspect_err(|e| self.count_lock_error(e))?
            {
                locks.held.push(name);
            }
            if self.catalog().table(db, t).is_none() {
                return Err(EngineError::NoSuchTable {
                    db: db.to_string(),
                    table: t.to_string(),
                });
            }
        }
        Ok(locks)
    }
}
