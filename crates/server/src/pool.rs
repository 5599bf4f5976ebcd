//! `thread_handling=pool-of-threads`: a limit on the statements that run at once.
//!
//! MariaDB's thread pool keeps the number of running statements near the number of CPUs,
//! so that a crowd of queries does not starve the threads that finish work (commits, lock
//! holders) of CPU. onelog keeps its thread per connection and puts the limit on
//! *execution*: a connection takes a turn ([`Pool::enter`]) when a command arrives and
//! gives it back ([`Pool::leave`]) when the command is answered. Reading the next command
//! holds no turn, so idle connections cost nothing.
//!
//! - A statement that blocks (row or metadata lock wait, group commit) gives its turn away
//!   while it waits and, when the wait ends, runs on without queueing again (the pool is
//!   briefly over its limit). The engine announces those waits (`onelog_engine::wait`), as
//!   MariaDB's storage engines call `thd_wait_begin`/`thd_wait_end`.
//! - Two priorities. High: statements inside a transaction (MariaDB's
//!   `thread_pool_priority=auto`: they hold locks others may wait for), and, in onelog,
//!   every command that is not a query returning rows: writes are short, hold row locks
//!   and feed group commit, and behind a crowd of `SELECT`s they would miss any rate they
//!   are meant to keep. Low: queries.
//! - Queries run while fewer than `thread_pool_size` statements run. High-priority
//!   statements run while fewer than `thread_pool_size * (1 + thread_pool_oversubscribe)`
//!   do, so they start at once in all but a write storm, and queries get the turns they
//!   leave. Waiting high-priority statements go before waiting queries, except a query
//!   that has waited `thread_pool_prio_kickup_timer` ms, which counts as high priority.
//! - If no statement has started for `thread_pool_stall_limit` ms while some wait, the
//!   first waiter starts anyway (a long query or a client that does not read its results
//!   cannot block the server).
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

/// MariaDB's upper bound for `thread_pool_size`.
pub const MAX_SIZE: usize = 256;
/// MariaDB's upper bound for `thread_pool_oversubscribe`.
pub const MAX_OVERSUBSCRIBE: usize = 1000;

struct Waiter {
    thread: Thread,
    since: Instant,
}

#[derive(Default)]
struct State {
    /// Statements running (not waiting) now; may exceed the limits after waits end.
    running: usize,
    high: VecDeque<Arc<Waiter>>,
    low: VecDeque<Arc<Waiter>>,
    /// Turns taken so far: the progress a stalled waiter looks for.
    started: u64,
}

impl State {
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
    oversubscribe: AtomicUsize,
    stall_limit_ms: AtomicU64,
    kickup_ms: AtomicU64,
    state: Mutex<State>,
    /// Statements that started because the pool stalled.
    stalls: AtomicU64,
}

/// The pool's settings (MariaDB's variables of the same names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolOptions {
    pub size: usize,
    pub oversubscribe: usize,
    pub stall_limit: Duration,
    pub prio_kickup_timer: Duration,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            // MariaDB's defaults: the number of CPUs, 3, 500 ms, 1000 ms.
            size: std::thread::available_parallelism().map_or(1, |n| n.get()),
            oversubscribe: 3,
            stall_limit: Duration::from_millis(500),
            prio_kickup_timer: Duration::from_millis(1000),
        }
    }
}

impl Pool {
    pub fn new(o: PoolOptions) -> Pool {
        let p = Pool {
            size: AtomicUsize::new(1),
            oversubscribe: AtomicUsize::new(0),
            stall_limit_ms: AtomicU64::new(1),
            kickup_ms: AtomicU64::new(0),
            state: Mutex::new(State::default()),
            stalls: AtomicU64::new(0),
        };
        p.set_size(o.size);
        p.set_oversubscribe(o.oversubscribe);
        p.set_stall_limit(o.stall_limit);
        p.set_kickup_timer(o.prio_kickup_timer);
        p
    }

    /// `SET GLOBAL thread_pool_size`: a larger pool lets waiters in at once.
    pub fn set_size(&self, n: usize) {
        self.size.store(n.clamp(1, MAX_SIZE), Ordering::Relaxed);
        self.wake_next(&self.state.lock());
    }

    pub fn set_oversubscribe(&self, n: usize) {
        self.oversubscribe
            .store(n.min(MAX_OVERSUBSCRIBE), Ordering::Relaxed);
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

    pub fn stalls(&self) -> u64 {
        self.stalls.load(Ordering::Relaxed)
    }

    /// Statements running and statements queued.
    pub fn load(&self) -> (usize, usize) {
        let st = self.state.lock();
        (st.running, st.high.len() + st.low.len())
    }

    /// How many may run for a statement of this priority to start.
    fn limit(&self, high: bool) -> usize {
        let size = self.size.load(Ordering::Relaxed);
        if high {
            size * (1 + self.oversubscribe.load(Ordering::Relaxed))
        } else {
            size
        }
    }

    /// The waiter whose turn is next, and whether it counts as high priority: the first
    /// high-priority one, unless the first query has waited the kickup time.
    fn next<'a>(&self, st: &'a State) -> Option<(&'a Arc<Waiter>, bool)> {
        let kickup = Duration::from_millis(self.kickup_ms.load(Ordering::Relaxed));
        match (st.high.front(), st.low.front()) {
            (_, Some(l)) if l.since.elapsed() >= kickup => Some((l, true)),
            (Some(h), _) => Some((h, true)),
            (None, l) => l.map(|l| (l, false)),
        }
    }

    /// Waits for a turn.
    ///
    /// A free turn goes to whoever asks first: a connection that arrives while one is
    /// free takes it at once, even past sleeping waiters of its priority or lower, rather
    /// than the turn being handed to a thread that still has to be scheduled. Handing
    /// turns over costs a context switch per statement, which on a busy 2-core machine
    /// halved the query rate. Waiters are woken one at a time, in priority order.
    pub fn enter(&self, high: bool) {
        let mut st = self.state.lock();
        if st.running < self.limit(high) && st.high.is_empty() {
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
            let turn = match self.next(&st) {
                Some((n, as_high)) if Arc::ptr_eq(n, &w) => st.running < self.limit(as_high),
                _ => false,
            };
            if turn {
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

    /// A wait ended: run on at once, over the limit if need be.
    pub fn resume(&self) {
        self.state.lock().take();
    }

    fn wake_next(&self, st: &State) {
        if let Some((w, high)) = self.next(st) {
            if st.running < self.limit(high) {
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

    /// A pool of `size` with no oversubscription (so priorities only order the queue).
    fn pool(size: usize, stall_limit: Duration) -> Arc<Pool> {
        Arc::new(Pool::new(PoolOptions {
            size,
            oversubscribe: 0,
            stall_limit,
            prio_kickup_timer: Duration::from_secs(60),
        }))
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
        let pool = pool(1, Duration::from_secs(60));
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
        let pool = pool(1, Duration::from_secs(60));
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
        let pool = pool(1, Duration::from_millis(100));
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
        let pool = pool(1, Duration::from_secs(60));
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
    fn writes_run_past_the_size_up_to_the_oversubscription() {
        let pool = pool(1, Duration::from_secs(60));
        pool.set_oversubscribe(2);
        pool.enter(false);
        pool.enter(true);
        pool.enter(true);
        assert_eq!(pool.load(), (3, 0));
        let (tx, rx) = mpsc::channel();
        spawn_enter(&pool, true, 1, &tx);
        until_queued(&pool, 1);
        spawn_enter(&pool, false, 2, &tx);
        until_queued(&pool, 2);
        pool.leave();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 1);
        // The query waits until fewer than the size (1) run.
        pool.leave();
        pool.leave();
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
        pool.leave();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 2);
        assert_eq!(pool.load(), (1, 0));
    }

    #[test]
    fn growing_the_pool_lets_waiters_in() {
        let pool = pool(1, Duration::from_secs(60));
        pool.enter(false);
        let (tx, rx) = mpsc::channel();
        spawn_enter(&pool, false, 1, &tx);
        until_queued(&pool, 1);
        pool.set_size(2);
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 1);
    }
}
