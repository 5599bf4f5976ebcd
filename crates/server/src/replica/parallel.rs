//! Parallel apply (`slave_parallel_threads` > 0): whole event groups go to a pool of
//! workers, each with its own session; they apply concurrently and commit in the
//! primary's order.
//!
//! Every group gets a sequence number in the order the primary logged it. Two watermarks
//! order the pool: `queued` (every group before it has entered onelog's commit queue) and
//! `committed` (every group before it is committed: durable and visible). A worker
//! applies its group's rows, then waits for `queued` to reach its group before queueing
//! the commit ([`CommitOrder`]); the group it follows may still be in its sync, so the
//! groups of several workers share one sync, and onelog's binlog (the replica's position)
//! always holds a prefix of the primary's order.
//!
//! When a group may start applying is `slave_parallel_mode`'s choice ([`Planner`]):
//! - `minimal`: once the group before it is queued (apply is serial, syncs are shared);
//! - `conservative`: groups the primary committed together (same commit id in their GTID
//!   events) start together, once the groups before them are queued;
//! - `optimistic`: at once, except a group the primary flagged as having waited for a row
//!   lock or as not safe in parallel, which starts like `minimal`;
//! - `aggressive`: at once.
//!
//! DDL, account statements, non-transactional groups and groups carrying SQL statements
//! rather than row events run alone: after every group before them is committed, and
//! before any group after them starts.
//!
//! Conflicts: a group that fails while an earlier one is not committed yet may have run
//! ahead of a change it depends on (a row not inserted yet, a duplicate key about to be
//! deleted); it is rolled back and retried alone (no other group applying rows) once
//! every group before it is queued: those hold their row locks until they are visible,
//! so the retry waits for what it depends on. If that fails too, the next retry waits
//! until every group before it is committed. A group waiting for its commit turn that
//! holds a lock an earlier group waits for gives its locks up the same way (the lock
//! manager tells the pool when any transaction starts waiting). A group that fails in an
//! attempt that started with every group before it committed fails for real: the SQL
//! thread stops with its error,
//! and no later group commits (a deadlock or lock wait timeout with a client's
//! transaction is retried up to 10 times first).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use onelog_binlog::event::{gtid_flags, Event, GtidEvent};
use onelog_binlog::EventHeader;
use onelog_engine::{CommitOrder, EngineError};
use onelog_sql::Database;
use onelog_types::code;
use parking_lot::{Condvar, Mutex};

use super::apply::Applier;
use super::Status;

/// Times the first uncommitted group is retried after a deadlock or lock wait timeout
/// (MariaDB's `slave_transaction_retries` default).
const LOCK_RETRIES: u32 = 10;

/// `slave_parallel_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    None,
    Minimal,
    Conservative,
    Optimistic,
    Aggressive,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s.to_ascii_lowercase().as_str() {
            "none" => Mode::None,
            "minimal" => Mode::Minimal,
            "conservative" => Mode::Conservative,
            "optimistic" => Mode::Optimistic,
            "aggressive" => Mode::Aggressive,
            _ => return None,
        })
    }
}

/// When a group may start applying: once every group before `committed` is committed and
/// every group before `queued` is queued for commit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Start {
    pub committed: u64,
    pub queued: u64,
}

/// Decides each group's [`Start`] from `slave_parallel_mode` and the GTID event's flags.
pub struct Planner {
    mode: Mode,
    /// Groups from here on start after every group before it is committed (the last
    /// group that runs alone, plus one).
    barrier: u64,
    /// Conservative mode: the commit id of the primary's group being dispatched, and the
    /// first of its groups here.
    commit_group: Option<(u64, u64)>,
}

impl Planner {
    pub fn new(mode: Mode) -> Planner {
        Planner {
            mode,
            barrier: 0,
            commit_group: None,
        }
    }

    /// The start of group `seq`; `statements`: it carries SQL statements (not only rows).
    pub fn plan(&mut self, seq: u64, g: &GtidEvent, statements: bool) -> Start {
        let alone = g.is_standalone()
            || g.flags2 & gtid_flags::DDL != 0
            || g.flags2 & gtid_flags::TRANSACTIONAL == 0
            || statements
            || self.mode == Mode::None;
        if alone {
            self.barrier = seq + 1;
            self.commit_group = None;
            return Start {
                committed: seq,
                queued: seq,
            };
        }
        let queued = match self.mode {
            Mode::None | Mode::Minimal => seq,
            Mode::Conservative => match (g.commit_id, self.commit_group) {
                (Some(c), Some((current, first))) if c == current => first,
                (Some(c), _) => {
                    self.commit_group = Some((c, seq));
                    seq
                }
                (None, _) => {
                    self.commit_group = None;
                    seq
                }
            },
            Mode::Optimistic => {
                let waited = g.flags2 & gtid_flags::WAITED != 0;
                if waited || g.flags2 & gtid_flags::ALLOW_PARALLEL == 0 {
                    seq
                } else {
                    0
                }
            }
            Mode::Aggressive => 0,
        };
        Start {
            committed: self.barrier,
            queued: queued.max(self.barrier),
        }
    }
}

/// One group for a worker.
pub struct Job {
    pub seq: u64,
    pub start: Start,
    pub events: Vec<(EventHeader, Event)>,
    /// The events' size on the wire.
    pub bytes: usize,
    /// Where the group ends in the primary's binlog (file, position) and the primary's
    /// timestamp of its last event (SHOW SLAVE STATUS).
    pub end: (String, u64),
    pub timestamp: u32,
}

#[derive(Clone, Copy)]
enum Need {
    Queued(u64),
    Committed(u64),
    /// A group's start (and no retry running alone).
    Start(Start),
    /// No other group applying (a retry runs alone).
    Alone,
}

struct Waiter {
    need: Need,
    /// Waiting for its commit turn (re-checks its locks when a lock wait starts).
    turn: bool,
    cv: Arc<Condvar>,
}

#[derive(Default)]
struct State {
    /// Every group before this one is queued for commit.
    queued: u64,
    /// Every group before this one is committed.
    committed: u64,
    /// Groups committed ahead of `committed`.
    done: BTreeSet<u64>,
    jobs: VecDeque<Job>,
    job_bytes: usize,
    /// Jobs taken by workers and not finished.
    busy: usize,
    /// The group that failed for real, with its error: no group after it commits.
    failed: Option<(u64, u16, String)>,
    /// STOP SLAVE: every wait ends, nothing not yet queued commits.
    abandoned: bool,
    shutdown: bool,
    waiters: Vec<Waiter>,
    /// Per group not committed yet: its end in the primary's binlog and timestamp.
    ends: BTreeMap<u64, ((String, u64), u32)>,
    /// Groups applying rows (started, not yet at their commit turn or done).
    applying: usize,
    /// A group retried alone: no other group starts until it is done.
    alone: Option<u64>,
}

impl State {
    fn satisfied(&self, need: Need) -> bool {
        match need {
            Need::Queued(n) => self.queued >= n,
            Need::Committed(n) => self.committed >= n,
            Need::Start(s) => {
                self.committed >= s.committed && self.queued >= s.queued && self.alone.is_none()
            }
            Need::Alone => self.applying == 0,
        }
    }

    fn cut(&self, seq: u64) -> bool {
        self.abandoned || self.failed.as_ref().is_some_and(|f| seq > f.0)
    }

    fn wake(&self) {
        let all = self.abandoned || self.failed.is_some();
        for w in &self.waiters {
            if all || self.satisfied(w.need) {
                w.cv.notify_one();
            }
        }
    }
}

/// The worker pool of one START SLAVE (see the module docs).
pub struct Pool {
    st: Mutex<State>,
    /// Workers wait here for jobs.
    jobs_cv: Condvar,
    /// The coordinator waits here for room in the queue and for the pool to drain.
    room_cv: Condvar,
    max_jobs: usize,
    max_bytes: usize,
    db: Arc<Database>,
    status: Arc<Mutex<Status>>,
    /// The connection to the primary, shut down when a group fails (wakes the reader).
    socket: Arc<Mutex<Option<TcpStream>>>,
    interrupts: Mutex<Vec<Arc<AtomicBool>>>,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

/// A group's place in the commit order.
struct Turn {
    pool: Arc<Pool>,
    seq: u64,
    cv: Arc<Condvar>,
    used: AtomicBool,
    /// Counted in `State::applying` still.
    applying: AtomicBool,
}

impl CommitOrder for Turn {
    fn wait_turn(&self, blocking: &dyn Fn() -> bool) -> onelog_engine::Result<()> {
        self.pool.done_applying(self);
        self.pool
            .wait(self.seq, Need::Queued(self.seq), &self.cv, Some(blocking))
    }

    fn queued(&self) {
        self.used.store(true, Ordering::Relaxed);
        self.pool.mark_queued(self.seq);
    }
}

impl Pool {
    /// Starts `threads` workers. `max_queued`: bytes of events queued per worker
    /// (`slave_parallel_max_queued`).
    pub fn start(
        db: Arc<Database>,
        threads: usize,
        max_queued: usize,
        status: Arc<Mutex<Status>>,
        socket: Arc<Mutex<Option<TcpStream>>>,
    ) -> Arc<Pool> {
        let pool = Arc::new(Pool {
            st: Mutex::new(State::default()),
            jobs_cv: Condvar::new(),
            room_cv: Condvar::new(),
            max_jobs: threads * 2,
            max_bytes: max_queued.saturating_mul(threads),
            db: db.clone(),
            status,
            socket,
            interrupts: Mutex::new(Vec::new()),
            threads: Mutex::new(Vec::new()),
        });
        let weak: Weak<Pool> = Arc::downgrade(&pool);
        db.engine().set_lock_wait_hook(Some(Arc::new(move || {
            if let Some(p) = weak.upgrade() {
                p.wake_turns();
            }
        })));
        for i in 0..threads {
            let p = pool.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("onelog-rpl-{i}"))
                .spawn(move || p.work());
            match spawned {
                Ok(h) => pool.threads.lock().push(h),
                Err(e) => onelog_types::error!("cannot start a replica worker: {e}"),
            }
        }
        pool
    }

    fn work(self: Arc<Pool>) {
        let mut applier = Applier::new(self.db.system_session());
        self.interrupts.lock().push(applier.interrupt_flag());
        let cv = Arc::new(Condvar::new());
        while let Some(job) = self.take() {
            self.run(&mut applier, &cv, job);
        }
        applier.abandon();
    }

    fn take(&self) -> Option<Job> {
        let mut st = self.st.lock();
        loop {
            if st.shutdown {
                return None;
            }
            if let Some(j) = st.jobs.pop_front() {
                st.job_bytes -= j.bytes;
                st.busy += 1;
                self.room_cv.notify_all();
                return Some(j);
            }
            self.jobs_cv.wait(&mut st);
        }
    }

    /// Waits until `need` holds; fails when the group `seq` is cut off (STOP SLAVE, an
    /// earlier failure), or, waiting for the commit turn, when `blocking()` says another
    /// transaction waits for one of the group's locks.
    fn wait(
        &self,
        seq: u64,
        need: Need,
        cv: &Arc<Condvar>,
        blocking: Option<&dyn Fn() -> bool>,
    ) -> onelog_engine::Result<()> {
        let mut st = self.st.lock();
        loop {
            if st.cut(seq) {
                return Err(EngineError::Interrupted);
            }
            if st.satisfied(need) {
                if matches!(need, Need::Start(_) | Need::Alone) {
                    st.applying += 1;
                }
                return Ok(());
            }
            if blocking.is_some_and(|b| b()) {
                return Err(EngineError::Deadlock);
            }
            st.waiters.push(Waiter {
                need,
                turn: blocking.is_some(),
                cv: cv.clone(),
            });
            cv.wait(&mut st);
            st.waiters.retain(|w| !Arc::ptr_eq(&w.cv, cv));
        }
    }

    /// A transaction started waiting for a lock: groups waiting for their turn check
    /// whether they hold it.
    fn wake_turns(&self) {
        let st = self.st.lock();
        for w in st.waiters.iter().filter(|w| w.turn) {
            w.cv.notify_one();
        }
    }

    /// The group of `turn` stops applying rows (it reached its commit turn or ended).
    fn done_applying(&self, turn: &Turn) {
        if turn.applying.swap(false, Ordering::Relaxed) {
            let mut st = self.st.lock();
            st.applying -= 1;
            st.wake();
        }
    }

    fn mark_queued(&self, seq: u64) {
        let mut st = self.st.lock();
        st.queued = st.queued.max(seq + 1);
        st.wake();
    }

    /// Applies one job, retrying it after a conflict (see the module docs). A retry runs
    /// while no other group applies rows, so it can only meet earlier groups that are
    /// queued (their locks go at their commit) and later groups at their commit turn
    /// (which give their locks up).
    fn run(self: &Arc<Pool>, applier: &mut Applier, cv: &Arc<Condvar>, job: Job) {
        let seq = job.seq;
        if self.wait(seq, Need::Start(job.start), cv, None).is_err() {
            return self.finish(seq, false);
        }
        let mut lock_retries = 0;
        let mut attempts = 0;
        loop {
            // Whether every earlier group was visible when this attempt started: only then
            // is a failure this group's own (an earlier group may become visible while
            // this one reads past it).
            let alone_in_time = self.st.lock().committed >= seq;
            let turn = Arc::new(Turn {
                pool: self.clone(),
                seq,
                cv: cv.clone(),
                used: AtomicBool::new(false),
                applying: AtomicBool::new(true),
            });
            applier.set_commit_order(Some(turn.clone()));
            let result = job
                .events
                .iter()
                .try_for_each(|(h, ev)| applier.apply(h, ev).map(|_| ()));
            applier.set_commit_order(None);
            self.done_applying(&turn);
            let e = match result {
                Ok(()) if applier.in_group() => {
                    // Jobs are whole groups: this is a bug, and nothing after it commits.
                    applier.abandon();
                    let msg = format!("the replicated group {seq} did not end");
                    self.fail(seq, code::ER_UNKNOWN_ERROR, msg);
                    return self.finish(seq, false);
                }
                Ok(()) => {
                    if !turn.used.load(Ordering::Relaxed) {
                        // Committed outside the commit queue (DDL) or not at all (a group
                        // the primary rolled back): still in order.
                        if self.wait(seq, Need::Queued(seq), cv, None).is_err() {
                            return self.finish(seq, false);
                        }
                        self.mark_queued(seq);
                    }
                    return self.finish(seq, true);
                }
                Err(e) => e,
            };
            applier.abandon();
            let retry = {
                let st = self.st.lock();
                if st.cut(seq) {
                    drop(st);
                    return self.finish(seq, false);
                }
                // A lock conflict with a client's transaction on this server is retried
                // a few times, as MariaDB does.
                let lock_conflict =
                    matches!(e.code, code::ER_LOCK_DEADLOCK | code::ER_LOCK_WAIT_TIMEOUT);
                if alone_in_time && lock_conflict {
                    lock_retries += 1;
                }
                !alone_in_time || (lock_conflict && lock_retries <= LOCK_RETRIES)
            };
            if !retry {
                self.fail(seq, e.code, e.message);
                return self.finish(seq, false);
            }
            attempts += 1;
            self.status.lock().retried += 1;
            // First once every earlier group is queued: they hold their row locks until
            // they are visible, so this one waits for what it depends on instead of
            // missing it. Then, if that failed too, once they are committed.
            let after = if attempts == 1 {
                Need::Queued(seq)
            } else {
                Need::Committed(seq)
            };
            let alone = self.wait(seq, after, cv, None).and_then(|()| {
                self.st.lock().alone = Some(seq);
                self.wait(seq, Need::Alone, cv, None)
            });
            if alone.is_err() {
                return self.finish(seq, false);
            }
        }
    }

    fn finish(&self, seq: u64, ok: bool) {
        let mut st = self.st.lock();
        st.busy -= 1;
        if st.alone == Some(seq) {
            st.alone = None;
        }
        if ok {
            st.done.insert(seq);
            let before = st.committed;
            let st = &mut *st;
            while st.done.remove(&st.committed) {
                st.committed += 1;
            }
            if st.committed > before {
                let later = st.ends.split_off(&st.committed);
                let ends = std::mem::replace(&mut st.ends, later);
                if let Some((_, ((file, pos), ts))) = ends.into_iter().next_back() {
                    let mut s = self.status.lock();
                    s.groups += st.committed - before;
                    s.executed(file, pos);
                    s.behind = Some(super::now_secs().saturating_sub(ts as u64));
                }
            }
        }
        st.wake();
        self.room_cv.notify_all();
    }

    /// Group `seq` failed for real: nothing after it commits, the replica stops.
    fn fail(&self, seq: u64, code: u16, msg: String) {
        {
            let mut st = self.st.lock();
            if st.failed.is_none() {
                st.failed = Some((seq, code, msg.clone()));
            }
            st.job_bytes = 0;
            st.jobs.clear();
            st.wake();
        }
        self.room_cv.notify_all();
        if let Some(s) = self.socket.lock().as_ref() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }

    /// The error of the group that failed, if one did.
    pub fn failure(&self) -> Option<(u16, String)> {
        self.st
            .lock()
            .failed
            .as_ref()
            .map(|(_, c, m)| (*c, m.clone()))
    }

    /// Queues a group for the workers, waiting for room (`slave_parallel_max_queued`).
    pub fn dispatch(&self, job: Job) -> Result<(), (u16, String)> {
        let mut st = self.st.lock();
        loop {
            if let Some((_, c, m)) = &st.failed {
                return Err((*c, m.clone()));
            }
            if st.abandoned {
                return Err((0, String::new()));
            }
            let full = st.jobs.len() >= self.max_jobs
                || (!st.jobs.is_empty() && st.job_bytes + job.bytes > self.max_bytes);
            if !full {
                break;
            }
            self.room_cv.wait(&mut st);
        }
        st.ends.insert(job.seq, (job.end.clone(), job.timestamp));
        st.job_bytes += job.bytes;
        st.jobs.push_back(job);
        self.jobs_cv.notify_one();
        Ok(())
    }

    /// Waits until every group before `n` is committed.
    pub fn wait_committed(&self, n: u64) -> Result<(), (u16, String)> {
        let cv = Arc::new(Condvar::new());
        // Cut off by any failure.
        self.wait(u64::MAX, Need::Committed(n), &cv, None)
            .map_err(|_| self.failure().unwrap_or((0, String::new())))
    }

    /// Waits until every queued group is committed (or one failed).
    pub fn drain(&self) -> Result<(), (u16, String)> {
        let mut st = self.st.lock();
        loop {
            if let Some((_, c, m)) = &st.failed {
                return Err((*c, m.clone()));
            }
            if st.jobs.is_empty() && st.busy == 0 {
                return Ok(());
            }
            self.room_cv.wait(&mut st);
        }
    }

    /// Whether nothing is queued or being applied.
    pub fn idle(&self) -> bool {
        let st = self.st.lock();
        st.jobs.is_empty() && st.busy == 0
    }

    /// Stops the workers: groups already queued for commit commit, the others are rolled
    /// back (their lock waits interrupted).
    pub fn stop(&self) {
        {
            let mut st = self.st.lock();
            st.abandoned = true;
            st.shutdown = true;
            st.jobs.clear();
            st.job_bytes = 0;
            st.wake();
        }
        for f in self.interrupts.lock().iter() {
            f.store(true, Ordering::SeqCst);
        }
        self.jobs_cv.notify_all();
        self.room_cv.notify_all();
        let threads = std::mem::take(&mut *self.threads.lock());
        for t in threads {
            let _ = t.join();
        }
        self.db.engine().set_lock_wait_hook(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gtid(flags2: u8, commit_id: Option<u64>) -> GtidEvent {
        GtidEvent {
            seq: 1,
            domain: 0,
            flags2,
            commit_id,
            xa: None,
        }
    }

    const TRX: u8 = gtid_flags::TRANSACTIONAL | gtid_flags::ALLOW_PARALLEL;

    #[test]
    fn conservative_starts_a_primary_group_together() {
        let mut p = Planner::new(Mode::Conservative);
        assert_eq!(p.plan(0, &gtid(TRX, Some(7)), false).queued, 0);
        assert_eq!(p.plan(1, &gtid(TRX, Some(7)), false).queued, 0);
        assert_eq!(p.plan(2, &gtid(TRX, Some(7)), false).queued, 0);
        // The next primary group waits for this one to be queued.
        assert_eq!(p.plan(3, &gtid(TRX, Some(8)), false).queued, 3);
        assert_eq!(p.plan(4, &gtid(TRX, Some(8)), false).queued, 3);
        // No commit id: alone in its group.
        assert_eq!(p.plan(5, &gtid(TRX, None), false).queued, 5);
    }

    #[test]
    fn ddl_and_statements_run_alone() {
        let mut p = Planner::new(Mode::Optimistic);
        assert_eq!(p.plan(0, &gtid(TRX, None), false), Start::default());
        let ddl = gtid_flags::STANDALONE | gtid_flags::DDL | gtid_flags::ALLOW_PARALLEL;
        assert_eq!(
            p.plan(1, &gtid(ddl, None), false),
            Start {
                committed: 1,
                queued: 1
            }
        );
        // After it: once it is committed.
        assert_eq!(
            p.plan(2, &gtid(TRX, None), false),
            Start {
                committed: 2,
                queued: 2
            }
        );
        assert_eq!(p.plan(3, &gtid(TRX, None), true).committed, 3);
        // Waited on the primary: after the group before it is queued.
        let waited = TRX | gtid_flags::WAITED;
        assert_eq!(p.plan(5, &gtid(waited, None), false).queued, 5);
        assert_eq!(p.plan(6, &gtid(TRX, None), false).queued, 4);
    }
}
