//! Stopping statements: KILL QUERY / KILL, and `max_statement_time`.
//!
//! Each connection has a [`StmtControl`]: the interrupt flag that long work polls (scans,
//! joins, sorts' inputs, the binder, lock waits, SLEEP), the statement's serial number and
//! whether the statement ran out of time. KILL sets the flag. A statement with a
//! `max_statement_time` is armed with one process-wide timer thread, which sets the flag
//! when the time is up, and only if the same statement is still running: the serial is
//! compared under the lock that starting a statement takes, so a timer can never stop the
//! statement after the one it was armed for. The statement then fails with 1969 instead
//! of KILL's 1317.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use onelog_types::{code, SqlError};
use parking_lot::{Condvar, Mutex};

use crate::QueryResult;

/// A connection's statement interruption state.
pub(crate) struct StmtControl {
    /// Polled by running work; shared with the engine's transaction (lock waits).
    pub interrupt: Arc<AtomicBool>,
    serial: Mutex<u64>,
    timed_out: AtomicBool,
}

impl StmtControl {
    pub fn new() -> Arc<StmtControl> {
        Arc::new(StmtControl {
            interrupt: Arc::new(AtomicBool::new(false)),
            serial: Mutex::new(0),
            timed_out: AtomicBool::new(false),
        })
    }

    /// A statement starts: clears a KILL QUERY that came between statements and arms the
    /// timer when `max_time` is set.
    pub fn begin(self: &Arc<Self>, max_time: Option<Duration>) {
        let serial = {
            let mut s = self.serial.lock();
            *s += 1;
            self.timed_out.store(false, Ordering::SeqCst);
            self.interrupt.store(false, Ordering::SeqCst);
            *s
        };
        if let Some(t) = max_time.filter(|t| !t.is_zero()) {
            timer().arm(Instant::now() + t, Arc::downgrade(self), serial);
        }
    }

    /// KILL QUERY (and KILL): the running statement stops at its next poll.
    pub fn interrupt(&self) {
        self.interrupt.store(true, Ordering::SeqCst);
    }

    /// The answer of a statement that was stopped: 1969 when its time ran out, whether it
    /// failed with 1317 or returned rows anyway (as `SLEEP()` does; MariaDB reports the
    /// timeout for it). A statement that changed data and succeeded keeps its OK: it is
    /// committed, and an error would say it was not.
    pub fn finish(&self, r: Result<QueryResult, SqlError>) -> Result<QueryResult, SqlError> {
        if !self.timed_out.load(Ordering::SeqCst) {
            return r;
        }
        match r {
            Err(e) if e.code != code::ER_QUERY_INTERRUPTED => Err(e),
            Err(_) | Ok(QueryResult::Rows { .. }) => Err(SqlError::from_code(
                code::ER_STATEMENT_TIMEOUT,
                "Query execution was interrupted (max_statement_time exceeded)",
            )),
            ok => ok,
        }
    }

    fn expire(&self, serial: u64) {
        let s = self.serial.lock();
        if *s == serial {
            self.timed_out.store(true, Ordering::SeqCst);
            self.interrupt.store(true, Ordering::SeqCst);
        }
    }
}

struct Armed {
    at: Instant,
    control: Weak<StmtControl>,
    serial: u64,
}

impl PartialEq for Armed {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at
    }
}
impl Eq for Armed {}
impl PartialOrd for Armed {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Armed {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.at.cmp(&o.at)
    }
}

/// The timer thread's queue: earliest deadline first.
struct Timer {
    queue: Mutex<BinaryHeap<Reverse<Armed>>>,
    wake: Condvar,
}

fn timer() -> &'static Timer {
    static TIMER: OnceLock<&'static Timer> = OnceLock::new();
    TIMER.get_or_init(|| {
        let t: &'static Timer = Box::leak(Box::new(Timer {
            queue: Mutex::new(BinaryHeap::new()),
            wake: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("onelog-stmt-timer".into())
            .spawn(move || t.run())
            .expect("start the statement timer thread");
        t
    })
}

impl Timer {
    fn arm(&self, at: Instant, control: Weak<StmtControl>, serial: u64) {
        let mut q = self.queue.lock();
        let earliest = q.peek().is_none_or(|Reverse(a)| at < a.at);
        q.push(Reverse(Armed {
            at,
            control,
            serial,
        }));
        if earliest {
            self.wake.notify_one();
        }
    }

    fn run(&self) {
        let mut q = self.queue.lock();
        loop {
            let now = Instant::now();
            match q.peek() {
                None => self.wake.wait(&mut q),
                Some(Reverse(a)) if a.at > now => {
                    let at = a.at;
                    self.wake.wait_until(&mut q, at);
                }
                Some(_) => {
                    let Reverse(a) = q.pop().expect("peeked");
                    if let Some(c) = a.control.upgrade() {
                        // Not under the queue's lock: expire takes the statement's.
                        parking_lot::MutexGuard::unlocked(&mut q, || c.expire(a.serial));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stopped(c: &StmtControl) -> bool {
        c.interrupt.load(Ordering::SeqCst)
    }

    #[test]
    fn the_timer_stops_only_the_statement_it_was_armed_for() {
        let c = StmtControl::new();
        c.begin(Some(Duration::from_millis(30)));
        std::thread::sleep(Duration::from_millis(200));
        assert!(stopped(&c));
        let e = c
            .finish(Err(SqlError::from_code(code::ER_QUERY_INTERRUPTED, "x")))
            .unwrap_err();
        assert_eq!((e.code, e.state), (1969, "70100"));
        assert!(c.finish(Ok(QueryResult::ok())).is_ok());

        // A statement that ends before its time: the next one is not stopped by it.
        c.begin(Some(Duration::from_millis(50)));
        c.begin(None);
        std::thread::sleep(Duration::from_millis(200));
        assert!(!stopped(&c));
        let e = c
            .finish(Err(SqlError::from_code(code::ER_QUERY_INTERRUPTED, "x")))
            .unwrap_err();
        assert_eq!(e.code, 1317);
    }

    #[test]
    fn a_kill_between_statements_does_not_stop_the_next() {
        let c = StmtControl::new();
        c.interrupt();
        c.begin(None);
        assert!(!stopped(&c));
    }
}
