//! The transactions open in the engine, as information_schema.INNODB_TRX lists them: when
//! each started, which connection runs it, how many rows it changed, the locks it holds
//! and whether it waits for one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::engine::Engine;
use crate::txn::Isolation;

/// Microseconds since the Unix epoch.
fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// What a transaction shares with [`Engine::open_transactions`].
pub(crate) struct Shared {
    pub(crate) started: i64,
    isolation: Isolation,
    pub(crate) connection: AtomicU32,
    pub(crate) rows_modified: AtomicU64,
    pub(crate) held: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Shared {
    pub(crate) fn set_connection(&self, id: u32) {
        self.connection.store(id, Ordering::Relaxed);
    }

    pub(crate) fn set_rows_modified(&self, n: usize) {
        self.rows_modified.store(n as u64, Ordering::Relaxed);
    }
}

/// The open transactions, by id.
#[derive(Default)]
pub(crate) struct Registry {
    pub(crate) open: Mutex<HashMap<u64, Arc<Shared>>>,
}

impl Registry {
    pub(crate) fn register(
        &self,
        id: u64,
        isolation: Isolation,
        held: Arc<Mutex<Vec<Vec<u8>>>>,
    ) -> Arc<Shared> {
        let s = Arc::new(Shared {
            started: now_micros(),
            isolation,
            connection: AtomicU32::new(0),
            rows_modified: AtomicU64::new(0),
            held,
        });
        self.open.lock().insert(id, s.clone());
        s
    }

    pub(crate) fn remove(&self, id: u64) {
        self.open.lock().remove(&id);
    }
}

/// One open transaction (a row of INNODB_TRX).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenTxn {
    pub id: u64,
    /// Microseconds since the Unix epoch.
    pub started: i64,
    /// The connection running it (0: the server's own: replication, NEXTVAL's writes).
    pub connection: u32,
    pub isolation: Isolation,
    pub rows_modified: u64,
    /// Locks held, of them on rows, and the bytes of their names.
    pub locks: u64,
    pub row_locks: u64,
    pub lock_bytes: u64,
    /// When it began waiting for the lock it waits for, and that lock's name (a row's
    /// lock: `r` and the row's primary key as stored).
    pub waiting: Option<(i64, Vec<u8>)>,
}

impl Engine {
    /// The id the next transaction gets (InnoDB's "Trx id counter").
    pub fn transaction_id_counter(&self) -> u64 {
        self.next_txn.load(Ordering::Relaxed)
    }

    /// The transactions that hold locks or changed rows (or wait for a lock), oldest first.
    pub fn open_transactions(&self) -> Vec<OpenTxn> {
        let open: Vec<(u64, Arc<Shared>)> = self
            .active
            .open
            .lock()
            .iter()
            .map(|(id, s)| (*id, s.clone()))
            .collect();
        let mut out: Vec<OpenTxn> = open
            .into_iter()
            .filter_map(|(id, s)| {
                let (locks, row_locks, lock_bytes) = {
                    let held = s.held.lock();
                    let rows = held.iter().filter(|k| k.first() == Some(&b'r')).count();
                    let bytes: usize = held.iter().map(Vec::len).sum();
                    (held.len() as u64, rows as u64, bytes as u64)
                };
                let waiting = self.locks.wait_of(id).map(|(key, since)| (since, key));
                let rows_modified = s.rows_modified.load(Ordering::Relaxed);
                if locks == 0 && rows_modified == 0 && waiting.is_none() {
                    return None;
                }
                Some(OpenTxn {
                    id,
                    started: s.started,
                    connection: s.connection.load(Ordering::Relaxed),
                    isolation: s.isolation,
                    rows_modified,
                    locks,
                    row_locks,
                    lock_bytes,
                    waiting,
                })
            })
            .collect();
        out.sort_by_key(|t| (t.started, t.id));
        out
    }
}
