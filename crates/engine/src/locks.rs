//! Row and metadata locks with lock waits, timeouts and deadlock detection.
//!
//! A lock is named by bytes: `r` + primary key (a row), `u` + unique index prefix (a unique
//! value being inserted), `m` + db `\0` table (a metadata lock, held by a transaction that
//! uses the table until it ends; DDL takes it exclusively). Locks are held until the
//! transaction ends (strict two-phase locking; for commits, until the commit is durable
//! and applied).
//!
//! A metadata lock has MariaDB's four table modes: a reader holds it [`Mode::Shared`], a
//! writer [`Mode::Write`], `LOCK TABLES ... READ` [`Mode::ReadOnly`] (it keeps writers
//! out, readers in) and DDL or `LOCK TABLES ... WRITE` [`Mode::Exclusive`]. Row and
//! unique-value locks use Shared and Exclusive only.
//!
//! Deadlock detection runs when a transaction is about to wait: it follows the wait-for
//! edges (waiter -> holders) from the requester; a cycle back to the requester means a
//! deadlock, and the requester is chosen as the victim (error 1213).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::error::{EngineError, Result};

pub type TxnId = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Readers (MariaDB's MDL_SHARED_READ; S for a row).
    Shared,
    /// A transaction that writes the table (MDL_SHARED_WRITE): compatible with readers
    /// and other writers.
    Write,
    /// `LOCK TABLES ... READ` (MDL_SHARED_READ_ONLY): compatible with readers only.
    ReadOnly,
    /// DDL, `LOCK TABLES ... WRITE`, X for a row: compatible with nothing.
    Exclusive,
}

impl Mode {
    /// Whether a holder in `held` lets another transaction hold `self`.
    fn compatible_with(self, held: Mode) -> bool {
        use Mode::*;
        matches!(
            (self, held),
            (Shared, Shared | Write | ReadOnly)
                | (Write, Shared | Write)
                | (ReadOnly, Shared | ReadOnly)
        )
    }

    /// The weakest mode that grants both `self` and `other`.
    fn join(self, other: Mode) -> Mode {
        use Mode::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Shared, m) | (m, Shared) => m,
            _ => Exclusive,
        }
    }
}

#[derive(Default)]
struct Entry {
    /// Holders and the strongest mode each holds (nearly always one: kept inline).
    holders: SmallVec<[(TxnId, Mode); 2]>,
    waiters: usize,
}

impl Entry {
    fn compatible(&self, txn: TxnId, mode: Mode) -> bool {
        self.holders
            .iter()
            .all(|&(h, m)| h == txn || mode.compatible_with(m))
    }
}

/// Every row a statement writes takes a lock and gives it back at commit, so the maps use
/// a fast non-cryptographic hash (the keys are the server's own lock names).
#[derive(Default)]
struct State {
    locks: FxHashMap<Vec<u8>, Entry>,
    /// waiter -> the lock it waits for, and when it began waiting (microseconds since the
    /// Unix epoch).
    waiting: FxHashMap<TxnId, (Vec<u8>, i64)>,
}

pub struct LockManager {
    shards: Vec<Mutex<State>>,
    // One condvar for all; waiters re-check on wake-up. Lock waits are rare on the fast path.
    cv: Condvar,
    wait_lock: Mutex<()>,
    /// Told each time a transaction starts waiting for a lock (see `set_wait_hook`).
    wait_hook: parking_lot::RwLock<Option<WaitHook>>,
    /// The wait-for cycle of the latest deadlock (see [`LockManager::take_cycle`]).
    last_cycle: Mutex<Option<Cycle>>,
}

/// A deadlock's wait-for cycle: each transaction with the lock it waits for.
pub(crate) type Cycle = Vec<(TxnId, Vec<u8>)>;

/// See [`LockManager::set_wait_hook`].
pub type WaitHook = Arc<dyn Fn() + Send + Sync>;

/// Deadlock detection looks at every shard, so waits take all shard locks in order.
const SHARDS: usize = 16;

impl LockManager {
    pub fn new() -> LockManager {
        LockManager {
            shards: (0..SHARDS).map(|_| Mutex::new(State::default())).collect(),
            cv: Condvar::new(),
            wait_lock: Mutex::new(()),
            wait_hook: parking_lot::RwLock::new(None),
            last_cycle: Mutex::new(None),
        }
    }

    fn shard(&self, key: &[u8]) -> usize {
        let mut h: u32 = 2166136261;
        for &b in key {
            h = (h ^ b as u32).wrapping_mul(16777619);
        }
        h as usize % SHARDS
    }

    /// Acquires `key` in `mode` for `txn`; returns true if newly acquired (the caller
    /// remembers it to release later), false if `txn` already held it in that mode or
    /// stronger.
    pub fn acquire(
        &self,
        txn: TxnId,
        key: &[u8],
        mode: Mode,
        timeout: Duration,
        interrupt: Option<&AtomicBool>,
    ) -> Result<bool> {
        let s = self.shard(key);
        let mut mode = mode;
        {
            let mut st = self.shards[s].lock();
            let e = st.locks.entry(key.to_vec()).or_default();
            if let Some(pos) = e.holders.iter().position(|&(h, _)| h == txn) {
                let held = e.holders[pos].1;
                mode = held.join(mode);
                if mode == held {
                    return Ok(false);
                }
                if e.compatible(txn, mode) {
                    e.holders[pos].1 = mode;
                    return Ok(false);
                }
            } else if e.compatible(txn, mode) && e.waiters == 0 {
                e.holders.push((txn, mode));
                return Ok(true);
            }
        }
        crate::wait::blocking(|| self.wait(txn, key, mode, s, timeout, interrupt))
    }

    fn wait(
        &self,
        txn: TxnId,
        key: &[u8],
        mode: Mode,
        s: usize,
        timeout: Duration,
        interrupt: Option<&AtomicBool>,
    ) -> Result<bool> {
        let deadline = Instant::now() + timeout;
        {
            let mut st = self.shards[s].lock();
            let since = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as i64);
            st.waiting.insert(txn, (key.to_vec(), since));
            st.locks.entry(key.to_vec()).or_default().waiters += 1;
        }
        if let Some(hook) = self.wait_hook.read().clone() {
            hook();
        }
        let mut guard = self.wait_lock.lock();
        let result = loop {
            // Try to take it.
            {
                let mut st = self.shards[s].lock();
                let e = st.locks.entry(key.to_vec()).or_default();
                if e.compatible(txn, mode) {
                    let newly = match e.holders.iter().position(|&(h, _)| h == txn) {
                        Some(pos) => {
                            e.holders[pos].1 = e.holders[pos].1.join(mode);
                            false
                        }
                        None => {
                            e.holders.push((txn, mode));
                            true
                        }
                    };
                    break Ok(newly);
                }
            }
            if let Some(cycle) = self.deadlock_cycle(txn) {
                *self.last_cycle.lock() = Some(cycle);
                break Err(EngineError::Deadlock);
            }
            if interrupt.is_some_and(|i| i.load(Ordering::Relaxed)) {
                break Err(EngineError::Interrupted);
            }
            let now = Instant::now();
            if now >= deadline {
                break Err(EngineError::LockWaitTimeout);
            }
            // Wake up periodically too: releases in other shards notify the same condvar.
            let wait = (deadline - now).min(Duration::from_millis(100));
            self.cv.wait_for(&mut guard, wait);
        };
        let mut st = self.shards[s].lock();
        st.waiting.remove(&txn);
        if let Some(e) = st.locks.get_mut(key) {
            e.waiters -= 1;
            if e.holders.is_empty() && e.waiters == 0 {
                st.locks.remove(key);
            }
        }
        result
    }

    /// The cycle, if following wait-for edges from `start` leads back to it: each
    /// transaction of it with the lock it waits for (held by the next one; the last one's
    /// by `start`), `start` first.
    fn deadlock_cycle(&self, start: TxnId) -> Option<Cycle> {
        let mut seen = HashSet::new();
        // Who each transaction reached was found waiting behind.
        let mut behind: HashMap<TxnId, TxnId> = HashMap::new();
        let mut stack = vec![start];
        while let Some(t) = stack.pop() {
            let Some(key) = self.waiting_for(t) else {
                continue;
            };
            let holders: Vec<TxnId> = {
                let st = self.shards[self.shard(&key)].lock();
                st.locks
                    .get(&key)
                    .map(|e| {
                        e.holders
                            .iter()
                            .map(|&(h, _)| h)
                            .filter(|&h| h != t)
                            .collect()
                    })
                    .unwrap_or_default()
            };
            for h in holders {
                if h == start {
                    let mut path = vec![t];
                    while let Some(&p) = behind.get(path.last().unwrap()) {
                        path.push(p);
                    }
                    path.reverse();
                    return Some(
                        path.into_iter()
                            .map(|x| (x, self.waiting_for(x).unwrap_or_default()))
                            .collect(),
                    );
                }
                if seen.insert(h) {
                    behind.insert(h, t);
                    stack.push(h);
                }
            }
        }
        None
    }

    /// The wait-for cycle of the latest deadlock (taken: None until the next one), the
    /// victim first.
    pub(crate) fn take_cycle(&self) -> Option<Cycle> {
        self.last_cycle.lock().take()
    }

    /// The name of the lock transaction `t` waits for.
    fn waiting_for(&self, t: TxnId) -> Option<Vec<u8>> {
        self.wait_of(t).map(|(key, _)| key)
    }

    /// The lock transaction `t` waits for, and when it began waiting.
    pub(crate) fn wait_of(&self, t: TxnId) -> Option<(Vec<u8>, i64)> {
        self.shards
            .iter()
            .find_map(|s| s.lock().waiting.get(&t).cloned())
    }

    /// Installs (or with None removes) the function told each time a transaction starts
    /// waiting for a lock, after [`waited_on`](Self::waited_on) can see the wait.
    pub fn set_wait_hook(&self, hook: Option<WaitHook>) {
        *self.wait_hook.write() = hook;
    }

    /// Whether another transaction waits for a lock `txn` holds.
    pub fn waited_on(&self, txn: TxnId) -> bool {
        self.shards.iter().any(|s| {
            let st = s.lock();
            st.waiting.iter().any(|(&w, (key, _))| {
                w != txn
                    && st
                        .locks
                        .get(key)
                        .is_some_and(|e| e.holders.iter().any(|&(h, _)| h == txn))
            })
        })
    }

    /// Releases every lock in `keys` held by `txn`, taking each shard's mutex once.
    pub fn release_all(&self, txn: TxnId, keys: &[Vec<u8>]) {
        if keys.is_empty() {
            return;
        }
        let mut by_shard: Vec<(usize, &[u8])> =
            keys.iter().map(|k| (self.shard(k), k.as_slice())).collect();
        by_shard.sort_unstable_by_key(|&(s, _)| s);
        let mut any_waiters = false;
        for run in by_shard.chunk_by(|a, b| a.0 == b.0) {
            let mut st = self.shards[run[0].0].lock();
            for &(_, key) in run {
                if let Some(e) = st.locks.get_mut(key) {
                    e.holders.retain(|&mut (h, _)| h != txn);
                    any_waiters |= e.waiters > 0;
                    if e.holders.is_empty() && e.waiters == 0 {
                        st.locks.remove(key);
                    }
                }
            }
        }
        if any_waiters {
            let _g = self.wait_lock.lock();
            self.cv.notify_all();
        }
    }

    /// Number of lock entries (for tests: no leaks).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().locks.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn shared_and_exclusive() {
        let lm = LockManager::new();
        let t = Duration::from_millis(50);
        assert!(lm.acquire(1, b"a", Mode::Shared, t, None).unwrap());
        assert!(lm.acquire(2, b"a", Mode::Shared, t, None).unwrap());
        assert!(matches!(
            lm.acquire(3, b"a", Mode::Exclusive, t, None),
            Err(EngineError::LockWaitTimeout)
        ));
        lm.release_all(1, &[b"a".to_vec()]);
        lm.release_all(2, &[b"a".to_vec()]);
        assert!(lm.acquire(3, b"a", Mode::Exclusive, t, None).unwrap());
        lm.release_all(3, &[b"a".to_vec()]);
        assert_eq!(lm.len(), 0);
    }

    #[test]
    fn table_modes() {
        let lm = LockManager::new();
        let t = Duration::from_millis(30);
        let timeout = |r: Result<bool>| matches!(r, Err(EngineError::LockWaitTimeout));
        // Two LOCK TABLES READ and a reader together; a writer waits for them.
        assert!(lm.acquire(1, b"m", Mode::ReadOnly, t, None).unwrap());
        assert!(lm.acquire(2, b"m", Mode::ReadOnly, t, None).unwrap());
        assert!(lm.acquire(3, b"m", Mode::Shared, t, None).unwrap());
        assert!(timeout(lm.acquire(4, b"m", Mode::Write, t, None)));
        // A reader that starts writing waits as well, and keeps its read lock.
        assert!(timeout(lm.acquire(3, b"m", Mode::Write, t, None)));
        lm.release_all(1, &[b"m".to_vec()]);
        lm.release_all(2, &[b"m".to_vec()]);
        assert!(!lm.acquire(3, b"m", Mode::Write, t, None).unwrap());
        assert!(lm.acquire(4, b"m", Mode::Write, t, None).unwrap());
        // Writers keep LOCK TABLES READ and WRITE out, not readers.
        assert!(timeout(lm.acquire(5, b"m", Mode::ReadOnly, t, None)));
        assert!(timeout(lm.acquire(5, b"m", Mode::Exclusive, t, None)));
        assert!(lm.acquire(5, b"m", Mode::Shared, t, None).unwrap());
        lm.release_all(3, &[b"m".to_vec()]);
        lm.release_all(4, &[b"m".to_vec()]);
        lm.release_all(5, &[b"m".to_vec()]);
        assert_eq!(lm.len(), 0);
        assert_eq!(Mode::Write.join(Mode::ReadOnly), Mode::Exclusive);
        assert_eq!(Mode::Shared.join(Mode::Write), Mode::Write);
    }

    #[test]
    fn deadlock_is_detected() {
        let lm = Arc::new(LockManager::new());
        let t = Duration::from_secs(5);
        lm.acquire(1, b"x", Mode::Exclusive, t, None).unwrap();
        lm.acquire(2, b"y", Mode::Exclusive, t, None).unwrap();
        let lm2 = lm.clone();
        let h = std::thread::spawn(move || lm2.acquire(1, b"y", Mode::Exclusive, t, None));
        // Once 1 waits for y (held by 2), 2 asking for x (held by 1) closes the cycle.
        while !lm.waited_on(2) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let r = lm.acquire(2, b"x", Mode::Exclusive, t, None);
        assert!(matches!(r, Err(EngineError::Deadlock)));
        lm.release_all(2, &[b"y".to_vec()]);
        assert!(h.join().unwrap().unwrap());
        lm.release_all(1, &[b"x".to_vec(), b"y".to_vec()]);
        assert_eq!(lm.len(), 0);
    }

    #[test]
    fn a_wait_is_announced_and_its_holder_known() {
        let lm = Arc::new(LockManager::new());
        let t = Duration::from_secs(5);
        let (tx, rx) = std::sync::mpsc::channel();
        let tx = parking_lot::Mutex::new(tx);
        lm.set_wait_hook(Some(Arc::new(move || tx.lock().send(()).unwrap())));
        lm.acquire(1, b"x", Mode::Exclusive, t, None).unwrap();
        assert!(!lm.waited_on(1));
        let lm2 = lm.clone();
        let h = std::thread::spawn(move || lm2.acquire(2, b"x", Mode::Exclusive, t, None));
        // Told once the wait is visible: the holder is waited on, the waiter is not.
        rx.recv_timeout(t).unwrap();
        assert!(lm.waited_on(1));
        assert!(!lm.waited_on(2));
        lm.release_all(1, &[b"x".to_vec()]);
        assert!(h.join().unwrap().unwrap());
        assert!(!lm.waited_on(2));
        lm.set_wait_hook(None);
        lm.release_all(2, &[b"x".to_vec()]);
        assert_eq!(lm.len(), 0);
    }
}
