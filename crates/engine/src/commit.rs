//! Group commit: whole groups of commits are made durable at once.
//!
//! Committing sessions encode their own event group and WriteBatch (in parallel), queue a
//! [`Request`] and wait. One of them leads (see [`Committer`]): it takes everything
//! queued, and per mode:
//!
//! - `engine`: 1. append every group to the binlog with one write; 2. one fdatasync (per
//!   `sync_binlog`) while the [`Applier`] thread applies each WriteBatch to RocksDB, WAL
//!   off, in binlog order, each carrying the binlog position it was applied up to
//!   (`keys::APPLIED`) (after the sync instead, by the leader, for a while after the
//!   thread got no CPU during a sync); 3. publish the read snapshot; 4. answer.
//!   Two rules make applying before the sync has finished safe:
//!   - *Nothing applied is persisted before it is durable.* RocksDB persists data only
//!     by flushing a memtable, and in this mode it never switches memtables on its own
//!     (its write buffer is set beyond reach); the committer switches them, only while it
//!     holds the writer (see [`Committer::quiesced`]), when everything applied is
//!     durable (or, with `sync_binlog` != 1, covered by tail records).
//!   - *Nothing applied is visible before it is durable.* Consistent reads use the
//!     snapshot the committer publishes after each group's sync
//!     ([`Committer::read_snapshot`]). Locking reads read the latest state, which may
//!     hold the group being synced: its rows are locked by their writers until they are
//!     answered, so a locking reader waits for them and sees them only once durable.
//!   - *A failed sync after the apply* leaves changes in the memtable that the binlog
//!     does not have: the failure is sticky, and the memtable is never switched or
//!     flushed again (a restart recovers from the binlog).
//! - `file` (classic two-phase commit): 1. prepare: each WriteBatch is stored as a
//!   prepared record `P xid` through RocksDB's WAL, one WAL sync for the group; 2. append
//!   the groups to the binlog, one sync; 3. commit: apply each WriteBatch and delete its
//!   prepared record (WAL, no sync). Recovery commits prepared records whose XID is in the
//!   binlog and discards the rest.
//! - `off`: write every WriteBatch through RocksDB's WAL, then one WAL sync.
//!
//! A failed log write or sync is sticky (fsyncgate): the writer refuses every later commit
//! with [`EngineError::LogFailed`] instead of retrying as if nothing happened. A binlog
//! append that fails for lack of space is not sticky: the binlog rolls the append back and
//! the group's sessions get [`EngineError::DiskFull`].

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};
use rocksdb::{FlushOptions, WriteBatch, WriteOptions, DB};

use crate::engine::{write_opts, Counters, LogMode};
use crate::error::{EngineError, Result};
use crate::keys;
use crate::priority::{CommitPriority, Raised};
use crate::semisync::{SemiSync, WaitPoint};
use crate::txn::{CommitInfo, LoggedStatement, Snap, Txn};
use crate::wal::{Appended, Chunk, Group, LogPos, Wal};

/// Whether the active memtable has reached `switch_at` (0: RocksDB switches on its own).
fn memtable_full(db: &DB, switch_at: u64) -> bool {
    switch_at != 0
        && db
            .property_int_value("rocksdb.cur-size-active-mem-table")
            .ok()
            .flatten()
            .unwrap_or(0)
            >= switch_at
}

/// Unsynced binlog bytes kept as tail records beyond which the writer syncs anyway
/// (`sync_binlog` = 0 or N: bounds the records and what a power loss can take).
const TAIL_LIMIT: u64 = 16 << 20;

/// A leader waits for more commits only when syncs take at least this long (a wait costs
/// up to half a sync).
const MIN_SYNC_NS_TO_WAIT: u64 = 100_000;

/// The next typical sync duration, given the current one (`old`, 0: none yet) and a sync
/// that took `ns`: a moving average (weight 1/8) of the durations, each counted as at most
/// twice the current value. A leader waits up to half of it for more commits (see
/// [`Committer::lead`]), and the group after a sync the device held up for seconds (a
/// compaction's writeback queued ahead of it) is large, so with the last sync's duration
/// instead the next leaders waited up to a second for commits that were not coming
/// (16-client Insert Benchmark at 1000 rows/s per client: groups of 20-32 commits that
/// each waited 1.0 s, in runs that missed the background inserts' rate). A device that
/// really got slower raises it by up to 12.5% per sync.
fn sync_estimate(old: u64, ns: u64) -> u64 {
    if old == 0 {
        return ns;
    }
    let counted = ns.min(old.saturating_mul(2));
    old - old / 8 + counted / 8
}

/// Upper bound of the number of commits a leader waits for.
const MAX_EXPECTED: usize = 256;

/// Groups the leader applies after the sync itself once the apply thread got no CPU
/// during a sync (see `Writer::commit_engine`).
const APPLY_HERE_GROUPS: u64 = 16;

pub(crate) struct Reply {
    slot: Mutex<ReplySlot>,
    cv: Condvar,
}

#[derive(Default)]
struct ReplySlot {
    result: Option<Result<CommitInfo>>,
    /// The previous leader handed group-commit leadership to this waiting session.
    lead: bool,
}

impl Reply {
    fn new() -> Arc<Reply> {
        Arc::new(Reply {
            slot: Mutex::new(ReplySlot::default()),
            cv: Condvar::new(),
        })
    }

    fn set(&self, r: Result<CommitInfo>) {
        self.slot.lock().result = Some(r);
        self.cv.notify_one();
    }

    fn hand_lead(&self) {
        self.slot.lock().lead = true;
        self.cv.notify_one();
    }
}

pub(crate) struct Request {
    pub batch: Option<WriteBatch>,
    pub group: Option<Group>,
    pub xid: u64,
    reply: Arc<Reply>,
    /// The committing session's thread (raised to the commit priority when it is handed
    /// the lead, before it is woken).
    tid: libc::pid_t,
}

struct Queue {
    pending: VecDeque<Request>,
    stop: bool,
    /// A session is leading: it (or the session it hands over to) will take what is queued.
    leader: bool,
    /// The leader waits for more commits to join its group (see `Committer::lead`), until
    /// `wait_for` are queued.
    leader_waiting: bool,
    wait_for: usize,
    /// Numbers the leaders' waits; `taken` is the last one that an arrival ended by taking
    /// the lead over.
    wait_round: u64,
    taken: u64,
}

struct Shared {
    queue: Mutex<Queue>,
    /// A leader waiting for its group to fill sleeps on it until its deadline (an arrival
    /// that fills the group leads it instead of waking the leader); signalled on shutdown.
    arrived: Condvar,
    /// Commits expected in the next group: the last group plus those that queued while it
    /// was written and synced (the sessions that commit concurrently).
    expected: std::sync::atomic::AtomicUsize,
    /// A log sync's typical duration in nanoseconds (see [`sync_estimate`]).
    sync_ns: AtomicU64,
    sync_binlog: AtomicU32,
    failed: Mutex<Option<String>>,
    /// Set when a group that is already in the log could not be applied to RocksDB: its
    /// commits are answered as committed (they are), and the server must stop so that
    /// recovery applies them from the binlog (see [`Committer::wait_fatal`]).
    fatal: Mutex<Option<String>>,
    fatal_cv: Condvar,
    stopped: AtomicBool,
    /// Ticket of the last group applied to RocksDB and answered (groups are numbered in
    /// log order by the writer; see [`finish_in_order`]).
    applied: Mutex<u64>,
    applied_cv: Condvar,
    /// The snapshot consistent reads start from: everything durable, nothing that is not
    /// (see the module docs).
    published: Mutex<Arc<Snap>>,
    /// Semi-sync replication: a group is answered (and, AFTER_SYNC, published) once a
    /// replica acknowledged it.
    semisync: Arc<SemiSync>,
}

/// The thread that applies a group's WriteBatches to RocksDB while the leader syncs the
/// binlog, one batch at a time. When the leader's sync returns, it takes over: it waits
/// for the batch in progress, if any, and applies the rest itself (on a busy machine the
/// thread may still be waiting for its time slice).
struct Applier {
    state: Mutex<ApplyState>,
    cv: Condvar,
}

#[derive(Default)]
struct ApplyState {
    /// Batches not applied yet, in binlog order.
    queue: VecDeque<WriteBatch>,
    /// The thread is applying a batch.
    running: bool,
    /// The leader took over: the thread takes no more batches.
    taken_over: bool,
    /// The thread took a batch of the current job.
    started: bool,
    error: Option<String>,
    stop: bool,
}

impl Applier {
    fn run(&self, db: &DB) {
        let wo = write_opts(LogMode::Engine);
        let mut st = self.state.lock();
        loop {
            if st.stop {
                return;
            }
            let next = if st.taken_over || st.error.is_some() {
                None
            } else {
                st.queue.pop_front()
            };
            let Some(batch) = next else {
                self.cv.wait(&mut st);
                continue;
            };
            st.running = true;
            st.started = true;
            drop(st);
            let r = db.write_opt(batch, &wo);
            st = self.state.lock();
            st.running = false;
            if let Err(e) = r {
                st.error = Some(apply_error(e));
            }
            self.cv.notify_all();
        }
    }

    fn start(&self, job: Vec<WriteBatch>) {
        let mut st = self.state.lock();
        st.queue = job.into();
        st.taken_over = false;
        st.started = false;
        st.error = None;
        self.cv.notify_all();
    }

    /// Takes the job over: waits for the batch in progress, then applies what is left
    /// (`apply`: false drops it instead). Returns whether the thread had started.
    fn finish(&self, db: &DB, apply: bool) -> std::result::Result<bool, String> {
        let mut st = self.state.lock();
        st.taken_over = true;
        let started = st.started;
        while st.running {
            self.cv.wait(&mut st);
        }
        let rest: Vec<WriteBatch> = st.queue.drain(..).collect();
        if let Some(e) = st.error.take() {
            return Err(e);
        }
        drop(st);
        if apply {
            apply_batches(db, rest)?;
        }
        Ok(started)
    }

    fn stop(&self) {
        self.state.lock().stop = true;
        self.cv.notify_all();
    }
}

fn apply_error(e: rocksdb::Error) -> String {
    format!("applying a durable commit to RocksDB failed: {e}")
}

/// Applies batches in order, WAL off (engine mode).
fn apply_batches(db: &DB, batches: Vec<WriteBatch>) -> std::result::Result<(), String> {
    let wo = write_opts(LogMode::Engine);
    for b in batches {
        db.write_opt(b, &wo).map_err(apply_error)?;
    }
    Ok(())
}

/// Group commit by leader and followers: the first committing session that finds no
/// leader becomes it, takes everything queued, and writes it with one write and one sync.
/// Then, if others queued meanwhile, it hands leadership to the first of them (who writes
/// and syncs the next group) while it applies its own group to RocksDB and answers it, in
/// log order after the groups before. A lone client thus commits with no thread switch at
/// all, and no commit ever waits for a dedicated thread to be scheduled (on a busy
/// machine, a single applier thread was one runnable thread among many and made every
/// commit wait for its time slice).
pub(crate) struct Committer {
    shared: Arc<Shared>,
    /// The commit path's scheduling priority (see `priority.rs`).
    priority: Arc<CommitPriority>,
    /// The log writer's state, used by the leader; None once stopped.
    writer: Mutex<Option<Writer>>,
    applier: Arc<Applier>,
    applier_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    db: Arc<DB>,
    switch_at: u64,
}

impl Committer {
    /// `switch_at`: in `engine` mode, the active memtable size at which the committer
    /// switches to a new memtable (RocksDB's own switching is off there).
    pub fn start(
        db: Arc<DB>,
        wal: Arc<Wal>,
        mode: LogMode,
        counters: Arc<Counters>,
        switch_at: u64,
        commit_nice: i32,
        semisync: Arc<SemiSync>,
    ) -> Committer {
        let priority = Arc::new(CommitPriority::new(commit_nice));
        let applier = Arc::new(Applier {
            state: Mutex::new(ApplyState::default()),
            cv: Condvar::new(),
        });
        let applier_thread = (mode == LogMode::Engine).then(|| {
            let (a, db, p) = (applier.clone(), db.clone(), priority.clone());
            std::thread::Builder::new()
                .name("onelog-apply".into())
                .spawn(move || {
                    p.raise_for_good();
                    a.run(&db)
                })
                .expect("spawn the apply thread")
        });
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                pending: VecDeque::new(),
                stop: false,
                leader: false,
                leader_waiting: false,
                wait_for: 0,
                wait_round: 0,
                taken: 0,
            }),
            arrived: Condvar::new(),
            expected: std::sync::atomic::AtomicUsize::new(1),
            sync_ns: AtomicU64::new(0),
            sync_binlog: AtomicU32::new(1),
            failed: Mutex::new(None),
            fatal: Mutex::new(None),
            fatal_cv: Condvar::new(),
            stopped: AtomicBool::new(false),
            applied: Mutex::new(0),
            applied_cv: Condvar::new(),
            published: Mutex::new(Snap::new(&db)),
            semisync,
        });
        let writer = Writer {
            shared: shared.clone(),
            db: db.clone(),
            wal,
            mode,
            counters,
            applier: applier.clone(),
            switch_at,
            groups: 0,
            apply_here_until: 0,
            groups_since_sync: 0,
            tail: Vec::new(),
            tail_bytes: 0,
            last_ticket: 0,
            group_end: None,
            panic_at: std::env::var("ONELOG_TEST_PANIC_AT_GROUP")
                .ok()
                .and_then(|v| v.parse().ok()),
        };
        Committer {
            shared,
            priority,
            writer: Mutex::new(Some(writer)),
            applier,
            applier_thread: Mutex::new(applier_thread),
            db,
            switch_at,
        }
    }

    /// The snapshot a consistent read starts from (see the module docs).
    pub fn read_snapshot(&self) -> Arc<Snap> {
        self.shared.published.lock().clone()
    }

    /// Runs `f` while no group is being written (nothing applied is short of durable),
    /// then publishes what `f` wrote and switches the memtable if it is full. For writes
    /// outside group commit and for memtable flushes.
    pub fn quiesced<R>(&self, f: impl FnOnce() -> R) -> R {
        let w = self.writer.lock();
        if let Some(w) = w.as_ref() {
            // A group waiting for its semi-sync ACK is applied but not visible yet: what
            // this publishes must not show it early.
            let mut applied = self.shared.applied.lock();
            while *applied < w.last_ticket {
                self.shared.applied_cv.wait(&mut applied);
            }
        }
        let r = f();
        if let Some(w) = w.as_ref() {
            w.publish();
            w.maybe_switch_memtable();
        }
        r
    }

    /// Switches the memtable (under the writer, as [`Self::quiesced`] does) if it is
    /// full; for writes that bypass group commit and so miss its check after each group.
    pub fn switch_memtable_if_full(&self) {
        if memtable_full(&self.db, self.switch_at) {
            self.quiesced(|| ());
        }
    }

    pub fn set_sync_binlog(&self, n: u32) {
        self.shared.sync_binlog.store(n, Ordering::Relaxed);
    }

    /// Queues a request, leads the group commit if nobody does, and waits for the answer.
    /// All of it counts as a wait for the thread pool (see `wait.rs`): a leader's work is
    /// the group's, not its statement's.
    pub fn submit(
        &self,
        batch: Option<WriteBatch>,
        group: Option<Group>,
        xid: u64,
    ) -> Result<CommitInfo> {
        self.submit_ordered(batch, group, xid, None)
    }

    /// [`submit`](Self::submit), telling `order` once the request is queued.
    pub(crate) fn submit_ordered(
        &self,
        batch: Option<WriteBatch>,
        group: Option<Group>,
        xid: u64,
        order: Option<&dyn crate::CommitOrder>,
    ) -> Result<CommitInfo> {
        crate::wait::blocking(|| self.submit_and_wait(batch, group, xid, order))
    }

    fn submit_and_wait(
        &self,
        batch: Option<WriteBatch>,
        group: Option<Group>,
        xid: u64,
        order: Option<&dyn crate::CommitOrder>,
    ) -> Result<CommitInfo> {
        let reply = Reply::new();
        let lead = {
            let mut q = self.shared.queue.lock();
            if q.stop {
                return Err(EngineError::ShuttingDown);
            }
            q.pending.push_back(Request {
                batch,
                group,
                xid,
                reply: reply.clone(),
                tid: crate::priority::thread_id(),
            });
            if q.leader_waiting && q.pending.len() >= q.wait_for {
                // This commit completes the group the leader waits for: lead it from here
                // rather than wake the leader (a thread switch on the commit's path). The
                // leader finds its wait taken over and waits for its answer instead.
                q.leader_waiting = false;
                q.taken = q.wait_round;
                true
            } else {
                !std::mem::replace(&mut q.leader, true)
            }
        };
        if let Some(o) = order {
            o.queued();
        }
        if lead {
            self.lead(self.priority.raise());
        }
        loop {
            let mut slot = reply.slot.lock();
            while slot.result.is_none() && !slot.lead {
                reply.cv.wait(&mut slot);
            }
            if let Some(r) = slot.result.take() {
                return r;
            }
            slot.lead = false;
            drop(slot);
            // Raised already by the leader that handed over.
            self.lead(self.priority.held());
        }
    }

    /// One round as leader: takes everything queued (its own request among it) and
    /// processes it; then hands leadership to the first session queued meanwhile, or
    /// gives it up.
    ///
    /// When fewer commits are queued than committed concurrently last time, the leader
    /// first waits for the others (up to half a sync's typical duration, see
    /// [`sync_estimate`]): two clients that alternate would otherwise each get a group,
    /// and a sync, of their own. The commit that completes the group does not wake the
    /// leader: it takes the round over and leads it from its own thread, while the waiting
    /// leader becomes a follower. A wake-up costs tens of microseconds on a VM, on every
    /// commit's path.
    ///
    /// `_raised`: the leader runs at the commit priority until it has answered its group
    /// (see `priority.rs`).
    fn lead(&self, _raised: Option<Raised<'_>>) {
        let sh = &self.shared;
        let mut q = sh.queue.lock();
        let expected = sh.expected.load(Ordering::Relaxed);
        let sync_ns = sh.sync_ns.load(Ordering::Relaxed);
        let mut timed_out = false;
        if q.pending.len() < expected && sync_ns >= MIN_SYNC_NS_TO_WAIT {
            let deadline = std::time::Instant::now() + std::time::Duration::from_nanos(sync_ns / 2);
            q.wait_round += 1;
            let round = q.wait_round;
            q.leader_waiting = true;
            q.wait_for = expected;
            loop {
                if q.taken >= round {
                    // The commit that completed the group leads it. (A later round may
                    // have been taken over meanwhile: rounds are numbered in order, and
                    // one can start only after this one was taken.)
                    return;
                }
                if q.pending.len() >= expected || q.stop || timed_out {
                    break;
                }
                timed_out = sh.arrived.wait_until(&mut q, deadline).timed_out();
            }
            q.leader_waiting = false;
        }
        let reqs: Vec<Request> = q.pending.drain(..).collect();
        drop(q);
        let mut w = self.writer.lock();
        let n = reqs.len();
        let done = match w.as_mut() {
            Some(w) => w.process(reqs),
            None => {
                answer_error(reqs, EngineError::ShuttingDown);
                None
            }
        };
        drop(w);
        {
            let mut q = sh.queue.lock();
            let next = if timed_out { n } else { n + q.pending.len() };
            sh.expected
                .store(next.clamp(1, MAX_EXPECTED), Ordering::Relaxed);
            match q.pending.front() {
                Some(next) => {
                    self.priority.raise_thread(next.tid);
                    next.reply.hand_lead()
                }
                None => q.leader = false,
            }
        }
        if let Some(f) = done {
            finish_in_order(sh, f);
        }
    }

    /// Waits until everything queued before this call has been processed.
    pub fn barrier(&self) -> Result<()> {
        if self.shared.stopped.load(Ordering::Acquire) {
            return Ok(());
        }
        match self.submit(None, None, 0) {
            Ok(_) | Err(EngineError::ShuttingDown) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The reason the log is unusable, if a write or sync failed.
    pub fn failure(&self) -> Option<String> {
        self.shared.failed.lock().clone()
    }

    /// Blocks until a commit that is durable in the binlog could not be applied to
    /// RocksDB, and returns why. Its commits were answered as committed; the tables lack
    /// them until a restart recovers them from the binlog, so the server stops.
    pub fn wait_fatal(&self) -> String {
        let mut f = self.shared.fatal.lock();
        loop {
            if let Some(why) = f.clone() {
                return why;
            }
            self.shared.fatal_cv.wait(&mut f);
        }
    }

    /// Refuses new commits, lets the current leader finish, and waits until every
    /// written group is applied.
    pub fn stop(&self) {
        self.shared.queue.lock().stop = true;
        self.shared.arrived.notify_all();
        // Commits waiting for a replica's ACK are answered without it.
        self.shared.semisync.set_enabled(false);
        // Waits for a leader in the middle of a round.
        let writer = self.writer.lock().take();
        self.applier.stop();
        if let Some(t) = self.applier_thread.lock().take() {
            let _ = t.join();
        }
        if let Some(w) = writer {
            let mut applied = self.shared.applied.lock();
            while *applied < w.last_ticket {
                self.shared.applied_cv.wait(&mut applied);
            }
        }
        // Requests queued after the last round (their sessions wait for a leader).
        let left: Vec<Request> = self.shared.queue.lock().pending.drain(..).collect();
        answer_error(left, EngineError::ShuttingDown);
        self.shared.stopped.store(true, Ordering::Release);
    }
}

impl Shared {
    /// Makes `snap` the snapshot of consistent reads unless a later one is (groups
    /// published after their semi-sync ACK may finish after a later quiesced write).
    fn publish(&self, snap: Arc<Snap>) {
        let mut p = self.published.lock();
        if snap.seq >= p.seq {
            *p = snap;
        }
    }

    fn record_sync(&self, took: std::time::Duration) {
        let old = self.sync_ns.load(Ordering::Relaxed);
        let new = sync_estimate(old, took.as_nanos() as u64);
        self.sync_ns.store(new, Ordering::Relaxed);
    }
}

struct Writer {
    shared: Arc<Shared>,
    db: Arc<DB>,
    wal: Arc<Wal>,
    mode: LogMode,
    counters: Arc<Counters>,
    applier: Arc<Applier>,
    /// See [`Committer::start`]; 0: RocksDB switches memtables itself.
    switch_at: u64,
    /// Groups written (engine mode).
    groups: u64,
    /// Until `groups` reaches this, the leader applies after the sync itself.
    apply_here_until: u64,
    groups_since_sync: u32,
    /// Tail records in RocksDB (key, end of their bytes in the log, length) whose bytes
    /// are not known to be durable in the binlog yet (`sync_binlog` != 1).
    tail: Vec<(Vec<u8>, LogPos, u64)>,
    tail_bytes: u64,
    /// Ticket of the last group processed (groups are numbered from 1 in log order).
    last_ticket: u64,
    /// Where the group being processed ends in the binlog (set by the log modes).
    group_end: Option<LogPos>,
    /// Test hook: the engine-mode group (numbered from 1 since start-up) whose commit
    /// panics before it is applied (`ONELOG_TEST_PANIC_AT_GROUP`).
    panic_at: Option<u64>,
}

/// A processed group (written, synced per `sync_binlog`, applied, published) on its way
/// to be answered.
struct Finish {
    ticket: u64,
    reqs: Vec<Request>,
    result: Result<Vec<CommitInfo>>,
    /// Semi-sync: the group's end in the binlog and its commits, to wait for an ACK of.
    ack: Option<(LogPos, u64)>,
    /// The group's read snapshot, published once it is acknowledged (AFTER_SYNC).
    publish: Option<Arc<Snap>>,
}

/// Answers a processed group once every group before it is answered. The leader that
/// wrote the group does this after handing leadership on.
fn finish_in_order(shared: &Shared, f: Finish) {
    let mut applied = shared.applied.lock();
    while *applied + 1 != f.ticket {
        shared.applied_cv.wait(&mut applied);
    }
    drop(applied);
    let Finish {
        ticket,
        reqs,
        result,
        ack,
        publish,
    } = f;
    if let Some((end, commits)) = ack {
        shared.semisync.wait_acked(end.to_binlog(), commits);
    }
    if let Some(snap) = publish {
        shared.publish(snap);
    }
    match result {
        Ok(infos) => {
            for (r, info) in reqs.into_iter().zip(infos) {
                r.reply.set(Ok(info));
            }
        }
        Err(e) => answer_error(reqs, e),
    }
    *shared.applied.lock() = ticket;
    shared.applied_cv.notify_all();
}

/// Makes the log unusable (sticky, see the module docs) unless it already is; returns the
/// reason that stands.
fn record_failure(shared: &Shared, why: String) -> String {
    let mut failed = shared.failed.lock();
    if failed.is_none() {
        onelog_types::error!("log failure, refusing further commits: {why}");
        *failed = Some(why);
    }
    failed.clone().unwrap()
}

fn answer_error(reqs: Vec<Request>, e: EngineError) {
    let msg = e.to_string();
    for r in reqs {
        r.reply.set(Err(match &e {
            EngineError::DiskFull(s) => EngineError::DiskFull(s.clone()),
            EngineError::LogFailed(s) => EngineError::LogFailed(s.clone()),
            _ => EngineError::Storage(msg.clone()),
        }));
    }
}

impl Writer {
    fn fail(&self, why: String) -> EngineError {
        EngineError::LogFailed(record_failure(&self.shared, why))
    }

    /// A group in the log could not be applied: refuse every later commit (sticky, so
    /// nothing more is applied, published or flushed) and ask the server to stop. The
    /// group's own commits are committed: recovery applies them from the binlog.
    fn fail_applying_durable(&self, why: String) {
        let why = format!(
            "{why}; the committed transactions are in the binlog and a restart applies them"
        );
        record_failure(&self.shared, why.clone());
        let mut f = self.shared.fatal.lock();
        if f.is_none() {
            *f = Some(why);
            self.shared.fatal_cv.notify_all();
        }
    }

    /// Writes and syncs a group; returns it to be finished in order (None: answered
    /// already because the log has failed).
    fn process(&mut self, mut reqs: Vec<Request>) -> Option<Finish> {
        if let Some(why) = self.shared.failed.lock().clone() {
            for r in reqs {
                r.reply.set(Err(EngineError::LogFailed(why.clone())));
            }
            return None;
        }
        // Barriers carry nothing; they are answered in order with the rest.
        let work: Vec<usize> = (0..reqs.len())
            .filter(|&i| reqs[i].batch.is_some())
            .collect();
        let result = if work.is_empty() {
            Ok(vec![CommitInfo::default(); reqs.len()])
        } else {
            // A panic here must not leave the group unanswered and the committer led by
            // nobody: it is a failure of the log (sticky: every later commit gets an error)
            // and the server stops; a restart recovers from the binlog.
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match self.mode {
                LogMode::Engine => self.commit_engine(&mut reqs, &work),
                LogMode::File => self.commit_file(&mut reqs, &work),
                LogMode::Off => self.commit_off(&mut reqs, &work),
            }));
            ran.unwrap_or_else(|p| {
                let msg = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(no message)".into());
                let why = format!("a commit panicked: {msg}");
                self.fail_applying_durable(why.clone());
                Err(EngineError::LogFailed(why))
            })
        };
        // After a failure nothing more is published: the memtable may hold a part of
        // a group (a group that could not be applied is answered, not made visible).
        let mut ack = None;
        let mut publish = None;
        if result.is_ok() && !work.is_empty() && self.shared.failed.lock().is_none() {
            let semisync = &self.shared.semisync;
            match self.group_end.take().filter(|_| semisync.enabled()) {
                Some(end) => {
                    ack = Some((end, work.len() as u64));
                    if semisync.wait_point() == WaitPoint::AfterSync {
                        // Taken now (nothing of the next group applied yet), made
                        // visible once a replica has the group.
                        publish = Some(Snap::new(&self.db));
                    } else {
                        self.publish();
                    }
                }
                None => self.publish(),
            }
            self.maybe_switch_memtable();
        }
        self.last_ticket += 1;
        Some(Finish {
            ticket: self.last_ticket,
            reqs,
            result,
            ack,
            publish,
        })
    }

    /// Makes everything applied so far visible to consistent reads.
    fn publish(&self) {
        self.shared.publish(Snap::new(&self.db));
    }

    /// Switches to a new memtable once the active one reaches `switch_at` (engine mode;
    /// called only while nothing applied is short of durable). Never after a log failure:
    /// the memtable may hold changes the binlog does not have.
    fn maybe_switch_memtable(&self) {
        if self.shared.failed.lock().is_some() {
            return;
        }
        if memtable_full(&self.db, self.switch_at) {
            let mut fo = FlushOptions::default();
            fo.set_wait(false);
            if let Err(e) = self.db.flush_opt(&fo) {
                onelog_types::error!("memtable switch failed: {e}");
            }
        }
    }

    /// Appends the groups of `work` to the binlog and says whether a sync is due, per
    /// `sync_binlog`. With `capture`, also returns the bytes written (for tail records),
    /// and a sync is due anyway once more than [`TAIL_LIMIT`] bytes would be unsynced.
    fn append(
        &mut self,
        reqs: &mut [Request],
        work: &[usize],
        capture: bool,
    ) -> Result<(Vec<Appended>, Vec<Chunk>, bool)> {
        let mut groups: Vec<Group> = work
            .iter()
            .map(|&i| reqs[i].group.take().expect("binlog group"))
            .collect();
        let r = if capture {
            self.wal.append_capture(&mut groups)
        } else {
            self.wal.append(&mut groups).map(|a| (a, Vec::new()))
        };
        let (appended, chunks) = match r {
            Ok(a) => a,
            Err(EngineError::DiskFull(s)) => return Err(EngineError::DiskFull(s)),
            Err(e) => return Err(self.fail(format!("binlog write failed: {e}"))),
        };
        self.groups_since_sync += 1;
        let n = self.shared.sync_binlog.load(Ordering::Relaxed);
        let unsynced = self.tail_bytes + chunks.iter().map(|c| c.1.len() as u64).sum::<u64>();
        let due = (n != 0 && self.groups_since_sync >= n) || (capture && unsynced > TAIL_LIMIT);
        Ok((appended, chunks, due))
    }

    fn sync(&mut self) -> Result<()> {
        let t = std::time::Instant::now();
        if let Err(e) = self.wal.sync() {
            return Err(self.fail(format!("binlog sync failed: {e}")));
        }
        self.record_sync(t.elapsed());
        self.groups_since_sync = 0;
        Ok(())
    }

    /// Counts a log sync that took `took`.
    fn record_sync(&self, took: std::time::Duration) {
        self.shared.record_sync(took);
        self.counters.log_syncs.fetch_add(1, Ordering::Relaxed);
        self.counters.sync_micros.record(took.as_micros() as u64);
    }

    fn count_group(&self, commits: usize) {
        self.counters.group_sizes.record(commits as u64);
        self.counters.group_commits.fetch_add(1, Ordering::Relaxed);
        self.counters
            .binlog_commits
            .fetch_add(commits as u64, Ordering::Relaxed);
    }

    /// Tail records for the first batch of an append: deletes for the records whose bytes
    /// are durable now, and the bytes of this append that are not (as one record per
    /// chunk). The first batch, because RocksDB persists a prefix of the batches applied:
    /// whatever of this append it persists comes with these records.
    fn tail_records(&mut self, batch: &mut WriteBatch, chunks: Vec<Chunk>) {
        let synced = self.wal.synced_pos();
        let mut freed = 0;
        self.tail.retain(|(key, end, len)| {
            if *end <= synced {
                batch.delete(key);
                freed += len;
                false
            } else {
                true
            }
        });
        self.tail_bytes -= freed;
        for (pos, bytes) in chunks {
            let len = bytes.len() as u64;
            let end = LogPos {
                file: pos.file,
                offset: pos.offset + len,
            };
            if end > synced {
                let key = keys::tail_key(pos.file, pos.offset);
                batch.put(&key, &bytes);
                self.tail.push((key, end, len));
                self.tail_bytes += len;
            }
        }
    }

    fn infos(reqs: &[Request], work: &[usize], appended: &[Appended]) -> Vec<CommitInfo> {
        let mut infos = vec![CommitInfo::default(); reqs.len()];
        for (&i, a) in work.iter().zip(appended) {
            infos[i].gtid = Some(a.gtid.clone());
        }
        infos
    }

    /// Appends; applies the batches (each carrying its applied position) on the apply
    /// thread while the binlog is synced (see the module docs).
    fn commit_engine(&mut self, reqs: &mut [Request], work: &[usize]) -> Result<Vec<CommitInfo>> {
        // sync_binlog != 1: appended bytes may stay unsynced while RocksDB (WAL off) flushes
        // the changes; keep the bytes beside the changes (see `tail_records`).
        let capture = self.shared.sync_binlog.load(Ordering::Relaxed) != 1 || !self.tail.is_empty();
        let (appended, chunks, due) = self.append(reqs, work, capture)?;
        self.group_end = appended.last().map(|a| a.end);
        if let Some(end) = self.group_end {
            self.shared.semisync.note_written(end.to_binlog());
        }
        let mut chunks = capture.then_some(chunks);
        let mut batches = Vec::with_capacity(work.len());
        for (&i, a) in work.iter().zip(&appended) {
            let mut batch = reqs[i].batch.take().unwrap();
            if let Some(chunks) = chunks.take() {
                self.tail_records(&mut batch, chunks);
            }
            batch.put(keys::APPLIED, a.end.encode());
            batches.push(batch);
        }
        self.groups += 1;
        if self.panic_at == Some(self.groups) {
            // The test hook of the panic test (`ONELOG_TEST_PANIC_AT_GROUP`).
            panic!("ONELOG_TEST_PANIC_AT_GROUP={}", self.groups);
        }
        // Once the group is in the log (synced, or appended when `sync_binlog` != 1), it
        // is committed: a failure to apply it does not make its commits fail.
        if due && self.groups >= self.apply_here_until {
            self.applier.start(batches);
            let synced = self.sync();
            let started = self.applier.finish(&self.db, synced.is_ok());
            synced?;
            match started {
                Ok(true) => {}
                // The thread got no CPU for a whole sync: the machine is busy, and a
                // thread that does get to run may be preempted while the leader waits
                // for it. Apply after the sync for a while.
                Ok(false) => self.apply_here_until = self.groups + APPLY_HERE_GROUPS,
                Err(why) => self.fail_applying_durable(why),
            }
        } else {
            if due {
                self.sync()?;
            }
            if let Err(why) = apply_batches(&self.db, batches) {
                self.fail_applying_durable(why);
            }
        }
        self.count_group(work.len());
        Ok(Self::infos(reqs, work, &appended))
    }

    fn commit_file(&mut self, reqs: &mut [Request], work: &[usize]) -> Result<Vec<CommitInfo>> {
        let wo = WriteOptions::default();
        // 1. Prepare: the transaction's changes, kept aside, durable in RocksDB's WAL.
        for &i in work {
            let r = &reqs[i];
            let mut pb = WriteBatch::default();
            pb.put(keys::prepared_key(r.xid), r.batch.as_ref().unwrap().data());
            self.db.write_opt(pb, &wo)?;
        }
        let t = std::time::Instant::now();
        if let Err(e) = self.db.flush_wal(true) {
            return Err(self.fail(format!("RocksDB WAL sync failed: {e}")));
        }
        self.counters.log_syncs.fetch_add(1, Ordering::Relaxed);
        self.counters
            .sync_micros
            .record(t.elapsed().as_micros() as u64);
        // 2. The binlog decides: a transaction whose XID is in the binlog is committed.
        let logged = self.append(reqs, work, false).and_then(|(a, _, due)| {
            if due {
                self.sync()?;
            }
            Ok(a)
        });
        let appended = match logged {
            Ok(a) => {
                self.group_end = a.last().map(|a| a.end);
                if let Some(end) = self.group_end {
                    self.shared.semisync.note_written(end.to_binlog());
                }
                a
            }
            Err(e) => {
                // Roll the prepared records back.
                let mut rb = WriteBatch::default();
                for &i in work {
                    rb.delete(keys::prepared_key(reqs[i].xid));
                }
                let _ = self.db.write_opt(rb, &wo);
                return Err(e);
            }
        };
        // 3. Commit in the engine (no sync: recovery redoes it from the prepared record).
        // The transactions are committed now: a failure here does not fail them.
        for &i in work {
            let mut batch = reqs[i].batch.take().unwrap();
            batch.delete(keys::prepared_key(reqs[i].xid));
            if let Err(e) = self.db.write_opt(batch, &wo) {
                self.fail_applying_durable(format!("committing in RocksDB failed: {e}"));
                break;
            }
        }
        self.count_group(work.len());
        Ok(Self::infos(reqs, work, &appended))
    }

    fn commit_off(&mut self, reqs: &mut [Request], work: &[usize]) -> Result<Vec<CommitInfo>> {
        let wo = WriteOptions::default();
        for &i in work {
            let batch = reqs[i].batch.take().unwrap();
            if let Err(e) = self.db.write_opt(batch, &wo) {
                return Err(self.fail(format!("RocksDB write failed: {e}")));
            }
        }
        let t = std::time::Instant::now();
        if let Err(e) = self.db.flush_wal(true) {
            return Err(self.fail(format!("RocksDB WAL sync failed: {e}")));
        }
        self.record_sync(t.elapsed());
        self.counters.group_sizes.record(reqs.len() as u64);
        self.counters.group_commits.fetch_add(1, Ordering::Relaxed);
        Ok(vec![CommitInfo::default(); reqs.len()])
    }
}

/// Commits a transaction that wrote (or that is logged as `stmt`): encode (in the caller's
/// thread), queue, wait.
pub(crate) fn commit_txn(txn: &mut Txn, stmt: Option<&LoggedStatement>) -> Result<CommitInfo> {
    if txn.create.is_some() {
        return crate::ddl::create_select::commit(txn);
    }
    let engine = txn.engine().clone();
    if let Some(why) = engine.committer.failure() {
        return Err(EngineError::LogFailed(why));
    }
    let batch = txn.overlay_batch();
    let xid = engine.wal.next_xid();
    let ahead = txn.ahead.take();
    let group = match stmt {
        None => engine.wal.txn_group(txn, ahead, xid)?,
        Some(s) => engine.wal.statement_group(txn, ahead, xid, s)?,
    };
    submit_in_order(txn, batch, group, xid)
}

/// Queues a transaction's batch and event group, after waiting for its turn in its
/// commit order (if it has one), and waits for the answer.
pub(crate) fn submit_in_order(
    txn: &mut Txn,
    batch: WriteBatch,
    group: Option<Group>,
    xid: u64,
) -> Result<CommitInfo> {
    let engine = txn.engine().clone();
    let order = txn.commit_order.take();
    if let Some(o) = &order {
        let id = txn.txn_id();
        crate::wait::blocking(|| o.wait_turn(&|| engine.locks.waited_on(id)))?;
    }
    engine
        .committer
        .submit_ordered(Some(batch), group, xid, order.as_deref())
}

#[cfg(test)]
mod tests {
    use super::sync_estimate;

    const MS: u64 = 1_000_000;

    #[test]
    fn one_slow_sync_barely_moves_the_estimate() {
        let mut e = 0;
        for _ in 0..20 {
            e = sync_estimate(e, 14 * MS / 10);
        }
        assert_eq!(e, 14 * MS / 10);
        // A sync the device held up for 2 s: the next leaders still wait ~0.8 ms at most.
        let after = sync_estimate(e, 2_000 * MS);
        assert!(after <= e + e / 8, "{after}");
        assert!(after / 2 < MS);
        // Back to normal syncs, back to the normal estimate.
        let mut e = after;
        for _ in 0..40 {
            e = sync_estimate(e, 14 * MS / 10);
        }
        assert!(e.abs_diff(14 * MS / 10) < MS / 100, "{e}");
    }

    #[test]
    fn a_device_that_got_slower_raises_it() {
        let mut e = sync_estimate(0, MS);
        assert_eq!(e, MS);
        for _ in 0..60 {
            e = sync_estimate(e, 10 * MS);
        }
        assert!(e > 9 * MS && e <= 10 * MS, "{e}");
    }
}
