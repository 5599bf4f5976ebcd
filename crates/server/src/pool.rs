//! `thread_handling=pool-of-threads`: at most `thread_pool_size` statements run at once.
//!
//! MariaDB's thread pool keeps the number of running statements near the number of CPUs,
//! so that a burst of queries does not starve the threads that finish work (commits,
//! lock holders) of CPU. onelog keeps its thread per connection and puts the same limit on
//! *execution*: a connection takes a turn ([`Pool::enter`]) when a command arrives and
//! gives it back ([`Pool::leave`]) when the command is answered. Reading the next command
//! holds no turn, so idle connections cost nothing.
//!
//! As in MariaDB:
//! - A statement that blocks (row or metadata lock wait, group commit) gives its turn away
//!   while it waits and, when the wait ends, runs on without queueing again (the pool is
//!   briefly over its size). The engine announces those waits (`onelog_engine::wait`).
//! - High-priority statements queue ahead of the others (MariaDB's `thread_pool_priority=
//!   auto` puts connections inside a transaction there: they hold locks others may wait
//!   for). onelog also puts there every command that is not a query returning rows:
//!   writes are short, hold row locks and feed group commit, and queued behind a crowd of
//!   `SELECT`s they would miss any rate they are meant to keep. A low-priority statement
//!   that has waited `thread_pool_prio_kickup_timer` ms goes first (no starvation).
//! - If no statement has started for `thread_pool_stall_limit` milliseconds while some
//!   wait, the first waiter starts anyway (a long query or a client that does not read its
//!   results cannot block the server).
//!
//! Waiters are woken one at a time, in arrival order within each priority (no thundering
//! herd); a connection that arrives while a turn is free takes it at once (see
//! [`Pool::enter`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// MariaDB's bounds for `thread_pool_size`.
pub const MAX_SIZE: usize = 256;

struct Waiter {
    thread: Thread,
    since: Instant,
}

#[derive(Default)]
struct State {
    /// Statements running (not waiting) now; may exceed the size after waits end.
    running: usize,
    high: VecDeque<Arc<Waiter>>,
    low: VecDeque<Arc<Waiter>>,
    /// Turns taken so far: the progress a stalled waiter looks for.
    started: u64,
}

impl State {
    /// The waiter whose turn is next: the first high-priority one, unless the first
    /// low-priority one has waited `kickup` or more.
    fn next(&self, kickup: Duration) -> Option<&Arc<Waiter>> {
        match (self.high.front(), self.low.front()) {
            (_, Some(l)) if l.since.elapsed() >= kickup => Some(l),
            (Some(h), _) => Some(h),
            (None, l) => l,
        }
    }

    fn take(&mut self) {
        self.running += 1;
        self.started += 1;
    }

    fn remove(&mut self, w: &Arc<Waiter>) {
        self.high.retain(|x| !Arc::ptr_eq(x, w));
        self.low.retain(|x| !Arc::ptr_eq(x, w));
    }
}

pub struct Pool {
    size: AtomicUsize,
    stall_limit_ms: AtomicU64,
    kickup_ms: AtomicU64,
    state: Mutex<State>,
    /// Statements that started because the pool stalled.
    stalls: AtomicU64,
}

impl Pool {
    pub fn new(size: usize, stall_limit: Duration) -> Pool {
        Pool {
            size: AtomicUsize::new(size.clamp(1, MAX_SIZE)),
            stall_limit_ms: AtomicU64::new(stall_limit.as_millis().max(1) as u64),
            kickup_ms: AtomicU64::new(1000),
            state: Mutex::new(State::default()),
            stalls: AtomicU64::new(0),
        }
    }

    pub fn size(&self) -> usize {
        self.size.load(Ordering::Relaxed)
    }

    /// `SET GLOBAL thread_pool_size`: a larger pool lets waiters in at once.
    pub fn set_size(&self, n: usize) {
        self.size.store(n.clamp(1, MAX_SIZE), Ordering::Relaxed);
        self.wake_next(&self.state.lock());
    }

    pub fn set_stall_limit(&self, d: Duration) {
        self.stall_limit_ms
            .store(d.as_millis().max(1) as u64, Ordering::Relaxed);
    }

    /// `thread_pool_prio_kickup_timer`.
    pub fn set_kickup_timer(&self, d: Duration) {
        self.kickup_ms
            .store(d.as_millis() as u64, Ordering::Relaxed);
    }

    fn kickup(&self) -> Duration {
        Duration::from_millis(self.kickup_ms.load(Ordering::Relaxed))
    }

    pub fn stalls(&self) -> u64 {
        self.stalls.load(Ordering::Relaxed)
    }

    /// Statements running and statements queued.
    pub fn load(&self) -> (usize, usize) {
        let st = self.state.lock();
        (st.running, st.high.len() + st.low.len())
    }

    /// Waits for a turn; `high` goes ahead of the others.
    ///
    /// A free turn goes to whoever asks first: a connection that arrives while one is
    /// free takes it at once, even past sleeping waiters (of its priority or lower), rather
    /// than the turn being handed to a thread that still has to be scheduled. Handing
    /// turns over costs a context switch per statement, which on a busy 2-core machine
    /// halved the query rate. Waiters are woken one at a time, in priority order.
    pub fn enter(&self, high: bool) {
        let mut st = self.state.lock();
        if st.running < self.size() && (high || st.high.is_empty()) {
            st.take();
            return;
        }
        let w = Arc::new(Waiter {
            thread: std::thread::current(),
            since: Instant::now(),
        });
        if high {
            st.high.push_back(w.clone());
        } else {
            st.low.push_back(w.clone());
        }
        let mut seen = st.started;
        let mut since = Instant::now();
        loop {
            let limit = Duration::from_millis(self.stall_limit_ms.load(Ordering::Relaxed));
            let deadline = since + limit;
            drop(st);
            let now = Instant::now();
            if now < deadline {
                std::thread::park_timeout(deadline - now);
            }
            st = self.state.lock();
            let mine = st.next(self.kickup()).is_some_and(|n| Arc::ptr_eq(n, &w));
            if mine && st.running < self.size() {
                st.remove(&w);
                st.take();
                // Another turn may be free too (the pool grew, or several left at once).
                self.wake_next(&st);
                return;
            }
            if Instant::now() < deadline {
                continue; // woken early, or someone else was quicker
            }
            if st.started == seen {
                // Nothing started for a whole stall limit: run anyway.
                st.remove(&w);
                st.take();
                self.stalls.fetch_add(1, Ordering::Relaxed);
                return;
            }
            seen = st.started;
            since = Instant::now();
        }
    }

    /// Gives the turn back (the statement is answered, or it starts waiting).
    pub fn leave(&self) {
        let mut st = self.state.lock();
        st.running = st.running.saturating_sub(1);
        self.wake_next(&st);
    }

    /// A wait ended: run on at once, over the size if need be.
    pub fn resume(&self) {
        self.state.lock().take();
    }

    fn wake_next(&self, st: &State) {
        if st.running < self.size() {
            if let Some(w) = st.next(self.kickup()) {
                w.thread.unpark();
            }
        }
    }
}

/// Whether a `COM_QUERY` text is a query returning rows (low priority): it starts with
/// `SELECT`, `WITH`, `SHOW`, `DESC[RIBE]`, `EXPLAIN`, `VALUES`, `TABLE` or `(`, after
/// blanks and comments.
pub fn is_read_query(sql: &[u8]) -> bool {
    let mut s = sql;
    loop {
        s = s.trim_ascii_start();
        if let Some(rest) = s.strip_prefix(b"/*") {
            if rest.first() == Some(&b'!') || rest.first() == Some(&b'M') {
                return false; // executable comment: look no further
            }
            match rest.windows(2).position(|w| w == b"*/") {
                Some(i) => s = &rest[i + 2..],
                None => return false,
            }
        } else if s.starts_with(b"#") || s.starts_with(b"-- ") {
            match s.iter().position(|&c| c == b'\n') {
                Some(i) => s = &s[i + 1..],
                None => return false,
            }
        } else {
            break;
        }
    }
    if s.first() == Some(&b'(') {
        return true;
    }
    let word: Vec<u8> = s
        .iter()
        .take_while(|c| c.is_ascii_alphabetic())
        .map(|c| c.to_ascii_uppercase())
        .collect();
    matches!(
        &word[..],
        b"SELECT" | b"WITH" | b"SHOW" | b"DESC" | b"DESCRIBE" | b"EXPLAIN" | b"VALUES" | b"TABLE"
    )
}

/// One connection's turn, told of the engine's waits.
pub struct Turn {
    pool: Arc<Pool>,
    held: std::cell::Cell<bool>,
    /// Whether the current wait gave a turn back (and must take one again).
    gave: std::cell::Cell<bool>,
}

impl Turn {
    pub fn new(pool: Arc<Pool>) -> Turn {
        Turn {
            pool,
            held: false.into(),
            gave: false.into(),
        }
    }

    pub fn enter(&self, high: bool) {
        if !self.held.get() {
            self.pool.enter(high);
            self.held.set(true);
        }
    }

    pub fn leave(&self) {
        if self.held.replace(false) {
            self.pool.leave();
        }
    }
}

impl onelog_engine::wait::WaitObserver for Turn {
    fn wait_begin(&self) {
        let held = self.held.replace(false);
        self.gave.set(held);
        if held {
            self.pool.leave();
        }
    }
    fn wait_end(&self) {
        if self.gave.replace(false) {
            self.pool.resume();
            self.held.set(true);
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn spawn_enter(pool: &Arc<Pool>, high: bool, tag: u32, tx: &mpsc::Sender<u32>) {
        let (p, tx) = (pool.clone(), tx.clone());
        std::thread::spawn(move || {
            p.enter(high);
            tx.send(tag).unwrap();
        });
    }

    /// Waits until `n` statements are queued.
    fn until_queued(pool: &Pool, n: usize) {
        let t = Instant::now();
        while pool.load().1 < n {
            assert!(t.elapsed() < Duration::from_secs(10), "never queued");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn turns_go_in_order_with_transactions_first() {
        let pool = Arc::new(Pool::new(1, Duration::from_secs(60)));
        pool.enter(false);
        let (tx, rx) = mpsc::channel();
        spawn_enter(&pool, false, 1, &tx);
        until_queued(&pool, 1);
        spawn_enter(&pool, false, 2, &tx);
        until_queued(&pool, 2);
        spawn_enter(&pool, true, 3, &tx);
        until_queued(&pool, 3);
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
        for want in [3, 1, 2] {
            pool.leave();
            assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), want);
        }
        assert_eq!(pool.load(), (1, 0));
        assert_eq!(pool.stalls(), 0);
    }

    #[test]
    fn a_waiting_statement_lets_another_run_and_resumes_over_the_size() {
        use onelog_engine::wait::WaitObserver;
        let pool = Arc::new(Pool::new(1, Duration::from_secs(60)));
        let turn = Turn::new(pool.clone());
        turn.enter(false);
        let (tx, rx) = mpsc::channel();
        spawn_enter(&pool, false, 1, &tx);
        until_queued(&pool, 1);
        turn.wait_begin();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 1);
        turn.wait_end();
        assert_eq!(pool.load(), (2, 0));
        turn.leave();
        pool.leave();
        assert_eq!(pool.load(), (0, 0));
    }

    #[test]
    fn a_stalled_pool_lets_one_waiter_in_per_stall_limit() {
        let pool = Arc::new(Pool::new(1, Duration::from_millis(100)));
        pool.enter(false);
        let (tx, rx) = mpsc::channel();
        let t = Instant::now();
        spawn_enter(&pool, false, 1, &tx);
        spawn_enter(&pool, false, 2, &tx);
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let first = t.elapsed();
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let second = t.elapsed();
        assert!(first >= Duration::from_millis(100), "{first:?}");
        assert!(second >= Duration::from_millis(200), "{second:?}");
        assert_eq!(pool.stalls(), 2);
        assert_eq!(pool.load(), (3, 0));
    }

    #[test]
    fn a_low_priority_waiter_goes_first_after_the_kickup_timer() {
        let pool = Arc::new(Pool::new(1, Duration::from_secs(60)));
        pool.set_kickup_timer(Duration::from_millis(50));
        pool.enter(false);
        let (tx, rx) = mpsc::channel();
        spawn_enter(&pool, false, 1, &tx);
        until_queued(&pool, 1);
        std::thread::sleep(Duration::from_millis(60));
        spawn_enter(&pool, true, 2, &tx);
        until_queued(&pool, 2);
        pool.leave();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 1);
        pool.leave();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 2);
    }

    #[test]
    fn read_queries_are_told_from_the_rest() {
        for q in [
            "SELECT 1",
            "  select * from t",
            "/* hint */ SELECT 1",
            "-- c\nSELECT 1",
            "(SELECT 1) UNION (SELECT 2)",
            "WITH x AS (SELECT 1) SELECT * FROM x",
            "show tables",
            "EXPLAIN SELECT 1",
        ] {
            assert!(is_read_query(q.as_bytes()), "{q}");
        }
        for q in [
            "INSERT INTO t VALUES (1)",
            "UPDATE t SET a = 1",
            "delete from t",
            "COMMIT",
            "SELECTED",
            "/*!40101 SET NAMES utf8 */",
            "/* unterminated",
            "",
        ] {
            assert!(!is_read_query(q.as_bytes()), "{q}");
        }
    }

    #[test]
    fn growing_the_pool_lets_waiters_in() {
        let pool = Arc::new(Pool::new(1, Duration::from_secs(60)));
        pool.enter(false);
        let (tx, rx) = mpsc::channel();
        spawn_enter(&pool, false, 1, &tx);
        until_queued(&pool, 1);
        pool.set_size(2);
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 1);
    }
}
