//! User-level locks: GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK and
//! IS_USED_LOCK, as MariaDB has them. A lock is held by a connection, any number of times
//! (each GET_LOCK counts, each RELEASE_LOCK uncounts one), until it releases it or
//! disconnects. A GET_LOCK that would close a cycle of connections waiting for each
//! other's locks fails with 1213, as MariaDB's metadata locks do.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use onelog_types::{code, SqlError, Value};
use parking_lot::{Condvar, Mutex};

use crate::sql_err;

/// The user-level lock functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UserLockFn {
    Get,
    Release,
    ReleaseAll,
    IsFree,
    IsUsed,
}

#[derive(Default)]
struct State {
    /// Lock name -> (holding connection, times taken).
    held: HashMap<String, (u32, u64)>,
    /// Connection -> the lock it waits for.
    waiting: HashMap<u32, String>,
}

/// The server's user-level locks.
#[derive(Default)]
pub struct UserLocks {
    state: Mutex<State>,
    freed: Condvar,
}

/// The key a lock name is known by (MariaDB compares them byte for byte).
fn key(name: &str) -> String {
    name.to_string()
}

impl UserLocks {
    /// Runs `f` for connection `conn`: `name` is the first argument (None: NULL),
    /// `timeout` GET_LOCK's second (negative: no limit).
    pub fn call(
        &self,
        f: UserLockFn,
        conn: u32,
        name: Option<&str>,
        timeout: f64,
        interrupt: &AtomicBool,
    ) -> Result<Value, SqlError> {
        if f == UserLockFn::ReleaseAll {
            return Ok(Value::Int(self.release_all(conn) as i64));
        }
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            return Ok(Value::Null);
        };
        let k = key(name);
        match f {
            UserLockFn::Get => self.get(conn, k, timeout, interrupt),
            UserLockFn::Release => Ok(self.release(conn, &k)),
            UserLockFn::IsFree => Ok(Value::Int(!self.state.lock().held.contains_key(&k) as i64)),
            UserLockFn::IsUsed => Ok(match self.state.lock().held.get(&k) {
                Some((owner, _)) => Value::UInt(*owner as u64),
                None => Value::Null,
            }),
            UserLockFn::ReleaseAll => unreachable!("handled above"),
        }
    }

    fn get(
        &self,
        conn: u32,
        k: String,
        timeout: f64,
        interrupt: &AtomicBool,
    ) -> Result<Value, SqlError> {
        let deadline = (timeout >= 0.0 && timeout.is_finite())
            .then(|| Instant::now() + Duration::from_secs_f64(timeout.min(31_536_000.0)));
        let mut st = self.state.lock();
        loop {
            match st.held.get_mut(&k) {
                None => {
                    st.held.insert(k, (conn, 1));
                    st.waiting.remove(&conn);
                    return Ok(Value::Int(1));
                }
                Some((owner, n)) if *owner == conn => {
                    *n += 1;
                    st.waiting.remove(&conn);
                    return Ok(Value::Int(1));
                }
                Some(_) => {}
            }
            if closes_cycle(&st, conn, &k) {
                st.waiting.remove(&conn);
                return Err(sql_err(
                    code::ER_LOCK_DEADLOCK,
                    "Deadlock found when trying to get lock; try restarting transaction",
                ));
            }
            // A killed wait returns NULL (MariaDB).
            if interrupt.load(Ordering::Relaxed) {
                st.waiting.remove(&conn);
                return Ok(Value::Null);
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                st.waiting.remove(&conn);
                return Ok(Value::Int(0));
            }
            st.waiting.insert(conn, k.clone());
            // Wakes at least every 10 ms to notice a kill.
            let wait = deadline.map_or(Duration::from_millis(10), |d| {
                (d - now).min(Duration::from_millis(10))
            });
            onelog_engine::wait::blocking(|| self.freed.wait_for(&mut st, wait));
        }
    }

    fn release(&self, conn: u32, k: &str) -> Value {
        let mut st = self.state.lock();
        let Some((owner, n)) = st.held.get_mut(k) else {
            return Value::Null;
        };
        if *owner != conn {
            return Value::Int(0);
        }
        *n -= 1;
        if *n == 0 {
            st.held.remove(k);
            self.freed.notify_all();
        }
        Value::Int(1)
    }

    /// Releases every lock of `conn` (RELEASE_ALL_LOCKS, disconnect); returns how many
    /// times they had been taken.
    pub fn release_all(&self, conn: u32) -> u64 {
        let mut st = self.state.lock();
        let mut count = 0;
        st.held.retain(|_, (owner, n)| {
            if *owner == conn {
                count += *n;
                false
            } else {
                true
            }
        });
        st.waiting.remove(&conn);
        if count > 0 {
            self.freed.notify_all();
        }
        count
    }
}

/// Whether `conn` waiting for lock `k` would wait, through the holders' own waits, for
/// itself.
fn closes_cycle(st: &State, conn: u32, k: &str) -> bool {
    let mut lock = k.to_string();
    for _ in 0..st.waiting.len() + 1 {
        let Some((holder, _)) = st.held.get(&lock) else {
            return false;
        };
        if *holder == conn {
            return true;
        }
        match st.waiting.get(holder) {
            Some(next) => lock = next.clone(),
            None => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(l: &UserLocks, f: UserLockFn, conn: u32, name: &str, t: f64) -> Value {
        let stop = AtomicBool::new(false);
        l.call(f, conn, Some(name), t, &stop).unwrap()
    }

    #[test]
    fn counts_owners_and_timeouts() {
        use UserLockFn::*;
        let l = UserLocks::default();
        assert_eq!(call(&l, Get, 1, "a", 0.0), Value::Int(1));
        assert_eq!(call(&l, Get, 1, "a", 0.0), Value::Int(1));
        assert_eq!(call(&l, IsFree, 2, "A", 0.0), Value::Int(1));
        assert_eq!(call(&l, Get, 2, "a", 0.05), Value::Int(0));
        assert_eq!(call(&l, IsUsed, 2, "a", 0.0), Value::UInt(1));
        assert_eq!(call(&l, Release, 2, "a", 0.0), Value::Int(0));
        assert_eq!(call(&l, Release, 1, "a", 0.0), Value::Int(1));
        assert_eq!(call(&l, IsFree, 2, "a", 0.0), Value::Int(0));
        assert_eq!(call(&l, Release, 1, "a", 0.0), Value::Int(1));
        assert_eq!(call(&l, IsFree, 2, "a", 0.0), Value::Int(1));
        assert_eq!(call(&l, Release, 1, "a", 0.0), Value::Null);
        assert_eq!(call(&l, Get, 1, "b", 0.0), Value::Int(1));
        assert_eq!(call(&l, Get, 1, "c", 0.0), Value::Int(1));
        assert_eq!(call(&l, ReleaseAll, 1, "", 0.0), Value::Int(2));
        assert_eq!(call(&l, Get, 1, "", 0.0), Value::Null);
    }

    #[test]
    fn a_wait_cycle_is_a_deadlock() {
        use UserLockFn::*;
        let l = std::sync::Arc::new(UserLocks::default());
        assert_eq!(call(&l, Get, 1, "x", 0.0), Value::Int(1));
        assert_eq!(call(&l, Get, 2, "y", 0.0), Value::Int(1));
        let l2 = l.clone();
        let waiter = std::thread::spawn(move || call(&l2, Get, 1, "y", 10.0));
        while !l.state.lock().waiting.contains_key(&1) {
            std::thread::yield_now();
        }
        let stop = AtomicBool::new(false);
        let e = l.call(Get, 2, Some("x"), 10.0, &stop).unwrap_err();
        assert_eq!(e.code, code::ER_LOCK_DEADLOCK);
        assert_eq!(call(&l, Release, 2, "y", 0.0), Value::Int(1));
        assert_eq!(waiter.join().unwrap(), Value::Int(1));
    }
}
