//! The latest deadlock, as `SHOW ENGINE INNODB STATUS` reports it: the transactions of the
//! wait-for cycle, each with the lock it waited for, and the one rolled back (the
//! transaction whose wait closed the cycle, see `locks.rs`). Recorded by the victim's
//! thread as the deadlock is found, while every transaction of the cycle is still open.

use std::sync::atomic::Ordering;

use onelog_types::Value;

use crate::engine::Engine;
use crate::keys;

/// One transaction of a deadlock's cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadlockTxn {
    pub id: u64,
    /// The connection running it (0: the server's own).
    pub connection: u32,
    /// Microseconds since the Unix epoch.
    pub started: i64,
    pub rows_modified: u64,
    /// Locks it held.
    pub locks: u64,
    /// The lock it waited for, described (see [`Engine::describe_lock`]).
    pub waiting_for: String,
}

/// The latest deadlock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadlockReport {
    /// Microseconds since the Unix epoch.
    pub at: i64,
    /// The cycle: each waits for a lock the next one holds, the last for one the first
    /// holds. The first is the one rolled back.
    pub transactions: Vec<DeadlockTxn>,
}

fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

impl Engine {
    /// Records the deadlock the lock manager just found (called by its victim).
    pub(crate) fn note_deadlock(&self) {
        let Some(cycle) = self.locks.take_cycle() else {
            return;
        };
        let open = self.active.open.lock();
        let transactions = cycle
            .iter()
            .map(|(id, key)| {
                let s = open.get(id);
                DeadlockTxn {
                    id: *id,
                    connection: s.map_or(0, |s| s.connection.load(Ordering::Relaxed)),
                    started: s.map_or(0, |s| s.started),
                    rows_modified: s.map_or(0, |s| s.rows_modified.load(Ordering::Relaxed)),
                    locks: s.map_or(0, |s| s.held.lock().len() as u64),
                    waiting_for: self.describe_lock(key),
                }
            })
            .collect();
        drop(open);
        *self.latest_deadlock.lock() = Some(DeadlockReport {
            at: now_micros(),
            transactions,
        });
    }

    /// The latest deadlock since the server started (None: none yet).
    pub fn latest_deadlock(&self) -> Option<DeadlockReport> {
        self.latest_deadlock.lock().clone()
    }

    /// A lock's name as a person reads it: `RECORD LOCK on index PRIMARY of table
    /// `db`.`t`, key (1, 'a')` for a row (its primary key, or its hidden row id), `TABLE
    /// LOCK on `db`.`t`` for a table's metadata lock; other names in hex.
    pub fn describe_lock(&self, name: &[u8]) -> String {
        let hex = || name.iter().map(|b| format!("{b:02x}")).collect::<String>();
        match name.split_first() {
            Some((b'r', key)) => self.describe_row_key(key).unwrap_or_else(hex),
            Some((b'm', rest)) => {
                let mut parts = rest.splitn(2, |&b| b == 0);
                let db = String::from_utf8_lossy(parts.next().unwrap_or_default());
                let table = String::from_utf8_lossy(parts.next().unwrap_or_default());
                format!("TABLE LOCK on table `{db}`.`{table}`")
            }
            _ => format!("lock {}", hex()),
        }
    }

    fn describe_row_key(&self, key: &[u8]) -> Option<String> {
        let prefix = keys::index_prefix(0);
        let id_at = prefix.len() - 4;
        if key.len() < prefix.len() || key[..id_at] != prefix[..id_at] {
            return None;
        }
        let index = u32::from_be_bytes(key[id_at..prefix.len()].try_into().ok()?);
        let cat = self.catalog();
        let t = cat.tables.values().find(|t| t.primary().id == index)?;
        let mut rest = &key[prefix.len()..];
        let values: Vec<String> = keys::pk_types(t)
            .iter()
            .map(|ty| crate::keycode::decode(&mut rest, ty).map(|v| show(&v)))
            .collect::<crate::error::Result<_>>()
            .ok()?;
        let index_name = if t.hidden_pk {
            "GEN_CLUST_INDEX"
        } else {
            "PRIMARY"
        };
        Some(format!(
            "RECORD LOCK on index {index_name} of table `{}`.`{}`, key ({})",
            t.db,
            t.name,
            values.join(", ")
        ))
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Bytes(b) => format!("'{}'", String::from_utf8_lossy(b).replace('\'', "''")),
        other => other.to_string(),
    }
}
