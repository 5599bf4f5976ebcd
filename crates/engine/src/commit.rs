//! Group commit: whole groups of commits are made durable at once.
//!
//! Committing sessions encode their own event group and WriteBatch (in parallel), queue a
//! [`Request`] and wait. One of them leads (see [`Committer`]): it takes everything
//! queued, and per mode:
//!
//! - `engine`: 1. append every group to the binlog with one write; 2. one fdatasync (per
//!   `sync_binlog`); 3. answer: the commits are durable; 4. apply each WriteBatch to
//!   RocksDB, WAL off, in binlog order, each carrying the binlog position it was applied up
//!   to (`keys::APPLIED`), on the applier thread (see [`Applier`]), then release the
//!   transaction's locks. Ordering rule: step 4 never starts before step 2 finished, so
//!   RocksDB never holds a change the binlog could lose (with `sync_binlog=1`).
//!   Visibility rule: a commit is answered before it is applied, so every read waits until
//!   the groups answered before its statement started are applied ([`Committer::acked`],
//!   [`Committer::wait_applied`]), and a committed transaction's locks are held until its
//!   changes are applied (a transaction that waited for one of them reads them).
//! - `file` (classic two-phase commit): 1. prepare: each WriteBatch is stored as a
//!   prepared record `P xid` through RocksDB's WAL, one WAL sync for the group; 2. append
//!   the groups to the binlog, one sync; 3. commit: apply each WriteBatch and delete its
//!   prepared record (WAL, no sync). Recovery commits prepared records whose XID is in the
//!   binlog and discards the rest.
//! - `off`: write every WriteBatch through RocksDB's WAL, then one WAL sync.
//!
//! In `file` and `off` modes the changes are in RocksDB before the answer and the locks
//! are released right away.
//!
//! A failed log write or sync is sticky (fsyncgate): the writer refuses every later commit
//! with [`EngineError::LogFailed`] instead of retrying as if nothing happened. A binlog
//! append that fails for lack of space is not sticky: the binlog rolls the append back and
//! the group's sessions get [`EngineError::DiskFull`].

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, MutexGuard};
use rocksdb::{WriteBatch, WriteOptions, DB};

use crate::engine::{write_opts, Counters, LogMode};
use crate::error::{EngineError, Result};
use crate::keys;
use crate::locks::{LockManager, TxnId};
use crate::txn::{CommitInfo, Overlay, Txn};
use crate::wal::{Appended, Chunk, Group, LogPos, Wal};

/// Unsynced binlog bytes kept as tail records beyond which the writer syncs anyway
/// (`sync_binlog` = 0 or N: bounds the records and what a power loss can take).
const TAIL_LIMIT: u64 = 16 << 20;

/// A leader waits for more commits only when syncs take at least this long (a wait costs
/// up to half a sync).
const MIN_SYNC_NS_TO_WAIT: u64 = 100_000;

/// Upper bound of the number of commits a leader waits for.
const MAX_EXPECTED: usize = 256;

/// Answered groups that may wait to be applied; beyond this a leader applies them itself
/// (the applier thread may get too little CPU on a busy machine).
const MAX_UNAPPLIED: u64 = 8;

/// The locks a committing transaction holds until its changes are applied.
pub(crate) type HeldLocks = (TxnId, Vec<Vec<u8>>);

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
    /// The keys the batch writes (a transaction's overlay), for readers of some keys only.
    writes: Option<Overlay>,
    locks: Option<HeldLocks>,
    reply: Arc<Reply>,
}

struct Queue {
    pending: VecDeque<Request>,
    stop: bool,
    /// A session is leading: it (or the session it hands over to) will take what is queued.
    leader: bool,
    /// The leader waits for more commits to join its group (see `Committer::lead`).
    leader_waiting: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Signalled on a new request while the leader waits for its group to fill.
    arrived: Condvar,
    /// Commits expected in the next group: the last group plus those that queued while it
    /// was written and synced (the sessions that commit concurrently).
    expected: std::sync::atomic::AtomicUsize,
    /// Duration of the last log sync, in nanoseconds.
    last_sync_ns: AtomicU64,
    sync_binlog: AtomicU32,
    failed: Mutex<Option<String>>,
    /// Applying a durable commit to RocksDB failed: reads would miss it (see `failed`).
    apply_failed: AtomicBool,
    stopped: AtomicBool,
    /// Durable, answered groups waiting to be applied (numbered from 1 in log order).
    apply: Mutex<ApplyQueue>,
    /// Signalled when a group is queued for the applier thread.
    work_cv: Condvar,
    /// Ticket of the last group answered (queued for applying before its answers).
    acked: AtomicU64,
    /// Ticket of the last group applied (`ApplyQueue::applied`, readable without the lock).
    applied: AtomicU64,
}

#[derive(Default)]
struct ApplyQueue {
    /// Answered groups not applied yet, in log order (the front one may be being applied).
    groups: VecDeque<Applying>,
    /// A thread is applying the front group.
    busy: bool,
    applied: u64,
    stop: bool,
    /// Threads waiting for a group to be applied, by the ticket they wait for (woken only
    /// when it is applied: many readers wait at once on a busy server).
    waiting: std::collections::BTreeMap<u64, Arc<Condvar>>,
}

impl ApplyQueue {
    /// Wakes the threads waiting for groups up to `ticket` (all of them: None).
    fn wake(&mut self, ticket: Option<u64>) {
        let done = match ticket {
            Some(t) => {
                let later = self.waiting.split_off(&(t + 1));
                std::mem::replace(&mut self.waiting, later)
            }
            None => std::mem::take(&mut self.waiting),
        };
        for cv in done.values() {
            cv.notify_all();
        }
    }
}

/// Per commit of a group (in binlog order): its batch and its locks.
type ApplyWork = Vec<(Option<WriteBatch>, Option<HeldLocks>)>;

/// A durable group to apply.
struct Applying {
    ticket: u64,
    /// Taken by the thread that applies the group.
    work: Option<ApplyWork>,
    /// The keys each of its commits writes.
    writes: Vec<Overlay>,
}

impl Applying {
    /// Whether the group writes a key in `[lo, hi)` (`hi` None: no upper bound).
    fn writes_in(&self, lo: &[u8], hi: Option<&[u8]>) -> bool {
        use std::ops::Bound;
        let upper = hi.map_or(Bound::Unbounded, Bound::Excluded);
        self.writes.iter().any(|w| {
            w.range::<[u8], _>((Bound::Included(lo), upper))
                .next()
                .is_some()
        })
    }
}

/// Applies durable groups to RocksDB in log order and releases their locks: the applier
/// thread, woken per queued group, and any thread that needs a group applied before the
/// applier got to it (a read, a leader far ahead) does the same work itself.
#[derive(Clone)]
struct Applier {
    shared: Arc<Shared>,
    db: Arc<DB>,
    locks: Arc<LockManager>,
}

/// Group commit by leader and followers: the first committing session that finds no
/// leader becomes it, takes everything queued, and writes it with one write and one sync.
/// Then it queues the group for applying, hands leadership to the first session queued
/// meanwhile (who writes and syncs the next group) and answers its own group. A lone
/// client thus commits with no thread switch before its answer, and no answer waits for a
/// dedicated thread to be scheduled. Applying to RocksDB (memtable inserts: for a
/// transaction that writes secondary indexes, as long as the sync itself) happens after
/// the answer, on the applier thread, overlapped with the clients' next statements and
/// the next group's sync; only reads that need it wait for it.
pub(crate) struct Committer {
    shared: Arc<Shared>,
    /// The log writer's state, used by the leader; None once stopped.
    writer: Mutex<Option<Writer>>,
    applier: Applier,
    applier_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Committer {
    pub fn start(
        db: Arc<DB>,
        wal: Arc<Wal>,
        mode: LogMode,
        counters: Arc<Counters>,
        locks: Arc<LockManager>,
    ) -> Committer {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                pending: VecDeque::new(),
                stop: false,
                leader: false,
                leader_waiting: false,
            }),
            arrived: Condvar::new(),
            expected: std::sync::atomic::AtomicUsize::new(1),
            last_sync_ns: AtomicU64::new(0),
            sync_binlog: AtomicU32::new(1),
            failed: Mutex::new(None),
            apply_failed: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            apply: Mutex::new(ApplyQueue::default()),
            work_cv: Condvar::new(),
            acked: AtomicU64::new(0),
            applied: AtomicU64::new(0),
        });
        let applier = Applier {
            shared: shared.clone(),
            db: db.clone(),
            locks,
        };
        let writer = Writer {
            shared: shared.clone(),
            db,
            wal,
            mode,
            counters,
            applier: applier.clone(),
            groups_since_sync: 0,
            tail: Vec::new(),
            tail_bytes: 0,
            last_ticket: 0,
        };
        let thread = {
            let a = applier.clone();
            std::thread::Builder::new()
                .name("onelog-apply".into())
                .spawn(move || a.run())
                .expect("spawn the applier thread")
        };
        Committer {
            shared,
            writer: Mutex::new(Some(writer)),
            applier,
            applier_thread: Mutex::new(Some(thread)),
        }
    }

    pub fn set_sync_binlog(&self, n: u32) {
        self.shared.sync_binlog.store(n, Ordering::Relaxed);
    }

    /// Queues a request, leads the group commit if nobody does, and waits for the answer.
    /// `locks` are released once the commit is applied (engine mode: after the answer; see
    /// the module docs), or when it fails.
    pub fn submit(
        &self,
        batch: Option<WriteBatch>,
        group: Option<Group>,
        xid: u64,
        locks: Option<HeldLocks>,
        writes: Option<Overlay>,
    ) -> Result<CommitInfo> {
        let reply = Reply::new();
        let lead = {
            let mut q = self.shared.queue.lock();
            if q.stop {
                drop(q);
                self.applier.release(locks);
                return Err(EngineError::ShuttingDown);
            }
            q.pending.push_back(Request {
                batch,
                group,
                xid,
                writes,
                locks,
                reply: reply.clone(),
            });
            if q.leader_waiting {
                self.shared.arrived.notify_one();
            }
            !std::mem::replace(&mut q.leader, true)
        };
        if lead {
            self.lead();
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
            self.lead();
        }
    }

    /// One round as leader: takes everything queued (its own request among it) and
    /// processes it; then hands leadership to the first session queued meanwhile, or
    /// gives it up.
    ///
    /// When fewer commits are queued than committed concurrently last time, the leader
    /// first waits for the others (up to half the last sync's duration): two clients that
    /// alternate would otherwise each get a group, and a sync, of their own.
    fn lead(&self) {
        let mut w = self.writer.lock();
        let sh = &self.shared;
        let mut q = sh.queue.lock();
        let mut reqs: Vec<Request> = q.pending.drain(..).collect();
        let expected = sh.expected.load(Ordering::Relaxed);
        let sync_ns = sh.last_sync_ns.load(Ordering::Relaxed);
        let mut timed_out = false;
        if reqs.len() < expected && sync_ns >= MIN_SYNC_NS_TO_WAIT {
            let deadline = std::time::Instant::now() + std::time::Duration::from_nanos(sync_ns / 2);
            q.leader_waiting = true;
            while reqs.len() + q.pending.len() < expected && !q.stop {
                if sh.arrived.wait_until(&mut q, deadline).timed_out() {
                    timed_out = true;
                    break;
                }
            }
            q.leader_waiting = false;
            reqs.extend(q.pending.drain(..));
        }
        drop(q);
        let n = reqs.len();
        let answers = match w.as_mut() {
            Some(w) => w.process(reqs),
            None => {
                self.applier.answer_error(reqs, EngineError::ShuttingDown);
                Vec::new()
            }
        };
        drop(w);
        {
            let mut q = sh.queue.lock();
            let next = if timed_out { n } else { n + q.pending.len() };
            sh.expected
                .store(next.clamp(1, MAX_EXPECTED), Ordering::Relaxed);
            match q.pending.front() {
                Some(next) => next.reply.hand_lead(),
                None => q.leader = false,
            }
        }
        for (reply, r) in answers {
            reply.set(r);
        }
        // Backpressure: a leader far ahead of the applier helps it.
        let acked = sh.acked.load(Ordering::Acquire);
        if acked > sh.applied.load(Ordering::Acquire) + MAX_UNAPPLIED {
            let _ = self.wait_applied(acked - MAX_UNAPPLIED);
        }
    }

    /// Ticket of the last answered group: a read that must see every commit answered so
    /// far waits for it with [`Committer::wait_applied`].
    pub fn acked(&self) -> u64 {
        self.shared.acked.load(Ordering::Acquire)
    }

    /// Waits until the groups up to `ticket` are applied to RocksDB (applying them itself
    /// if the applier thread is not at it). Fails if applying a durable commit failed.
    pub fn wait_applied(&self, ticket: u64) -> Result<()> {
        let sh = &self.shared;
        if sh.applied.load(Ordering::Acquire) < ticket {
            let mut q = sh.apply.lock();
            // (Nothing queued and nobody applying: every answered group is applied.)
            while q.applied < ticket && (q.busy || !q.groups.is_empty()) {
                if q.busy {
                    let cv = q.waiting.entry(ticket).or_default().clone();
                    cv.wait(&mut q);
                } else {
                    self.applier.apply_queued(&mut q, ticket);
                }
            }
        }
        if sh.apply_failed.load(Ordering::Acquire) {
            return Err(EngineError::LogFailed(
                self.failure()
                    .unwrap_or_else(|| "applying a commit failed".into()),
            ));
        }
        Ok(())
    }

    /// For a reader of the keys in `[lo, hi)` only (`hi` None: no upper bound): waits
    /// until the groups up to `ticket` that write one of them are applied. Returns whether
    /// every group up to `ticket` is applied.
    pub fn wait_applied_range(&self, ticket: u64, lo: &[u8], hi: Option<&[u8]>) -> Result<bool> {
        let sh = &self.shared;
        if sh.applied.load(Ordering::Acquire) < ticket {
            let last_writer = {
                let q = sh.apply.lock();
                q.groups
                    .iter()
                    .take_while(|g| g.ticket <= ticket)
                    .filter(|g| g.writes_in(lo, hi))
                    .map(|g| g.ticket)
                    .last()
            };
            if let Some(t) = last_writer {
                self.wait_applied(t)?;
            }
        }
        self.wait_applied(0)?;
        Ok(sh.applied.load(Ordering::Acquire) >= ticket)
    }

    /// Waits until everything committed before this call is durable and applied.
    pub fn barrier(&self) -> Result<()> {
        if self.shared.stopped.load(Ordering::Acquire) {
            return Ok(());
        }
        match self.submit(None, None, 0, None, None) {
            Ok(_) | Err(EngineError::ShuttingDown) => {}
            Err(e) => return Err(e),
        }
        self.wait_applied(self.acked())
    }

    /// The reason the log is unusable, if a write or sync failed.
    pub fn failure(&self) -> Option<String> {
        self.shared.failed.lock().clone()
    }

    /// Refuses new commits, lets the current leader finish, and waits until every
    /// written group is applied.
    pub fn stop(&self) {
        self.shared.queue.lock().stop = true;
        // Waits for a leader in the middle of a round.
        let writer = self.writer.lock().take();
        if let Some(w) = writer {
            let _ = self.wait_applied(w.last_ticket);
        }
        // Requests queued after the last round (their sessions wait for a leader).
        let left: Vec<Request> = self.shared.queue.lock().pending.drain(..).collect();
        self.applier.answer_error(left, EngineError::ShuttingDown);
        self.shared.apply.lock().stop = true;
        self.shared.work_cv.notify_all();
        if let Some(t) = self.applier_thread.lock().take() {
            let _ = t.join();
        }
        self.shared.stopped.store(true, Ordering::Release);
    }
}

impl Applier {
    /// The applier thread: applies queued groups until stopped.
    fn run(self) {
        let mut q = self.shared.apply.lock();
        loop {
            if !q.busy && !q.groups.is_empty() {
                self.apply_queued(&mut q, u64::MAX);
            } else if q.stop {
                return;
            } else {
                self.shared.work_cv.wait(&mut q);
            }
        }
    }

    /// Applies queued groups in order, up to `until` (a ticket) or all of them; called with
    /// the queue locked and not busy, returns with it locked.
    fn apply_queued(&self, q: &mut MutexGuard<'_, ApplyQueue>, until: u64) {
        q.busy = true;
        while q.applied < until {
            let Some(front) = q.groups.front_mut() else {
                break;
            };
            let ticket = front.ticket;
            let work = front.work.take().expect("one thread applies a group");
            MutexGuard::unlocked(q, || self.apply_group(work));
            q.groups.pop_front();
            q.applied = ticket;
            self.shared.applied.store(ticket, Ordering::Release);
            q.wake(Some(ticket));
        }
        q.busy = false;
        if !q.groups.is_empty() {
            // Work left (this was a helper that stopped early): the applier thread, or a
            // waiting thread, takes it on.
            self.shared.work_cv.notify_one();
            q.wake(None);
        }
    }

    fn apply_group(&self, work: ApplyWork) {
        let wo = write_opts(LogMode::Engine);
        for (batch, locks) in work {
            if let Some(batch) = batch {
                if !self.shared.apply_failed.load(Ordering::Relaxed) {
                    if let Err(e) = self.db.write_opt(batch, &wo) {
                        record_failure(
                            &self.shared,
                            format!("applying a durable commit to RocksDB failed: {e}"),
                        );
                        self.shared.apply_failed.store(true, Ordering::Release);
                    }
                }
            }
            self.release(locks);
        }
    }

    /// Queues a durable group for applying; it counts as answered from here on.
    fn push(&self, g: Applying) {
        let ticket = g.ticket;
        let mut q = self.shared.apply.lock();
        q.groups.push_back(g);
        self.shared.acked.store(ticket, Ordering::Release);
        drop(q);
        self.shared.work_cv.notify_one();
    }

    fn release(&self, locks: Option<HeldLocks>) {
        if let Some((txn, names)) = locks {
            self.locks.release_all(txn, &names);
        }
    }

    /// Answers every request with `e` and releases their locks.
    fn answer_error(&self, reqs: Vec<Request>, e: EngineError) {
        let msg = e.to_string();
        for mut r in reqs {
            self.release(r.locks.take());
            r.reply.set(Err(match &e {
                EngineError::DiskFull(s) => EngineError::DiskFull(s.clone()),
                EngineError::LogFailed(s) => EngineError::LogFailed(s.clone()),
                _ => EngineError::Storage(msg.clone()),
            }));
        }
    }
}

struct Writer {
    shared: Arc<Shared>,
    db: Arc<DB>,
    wal: Arc<Wal>,
    mode: LogMode,
    counters: Arc<Counters>,
    applier: Applier,
    groups_since_sync: u32,
    /// Tail records in RocksDB (key, end of their bytes in the log, length) whose bytes
    /// are not known to be durable in the binlog yet (`sync_binlog` != 1).
    tail: Vec<(Vec<u8>, LogPos, u64)>,
    tail_bytes: u64,
    /// Ticket of the last group queued for applying (numbered from 1 in log order).
    last_ticket: u64,
}

/// Makes the log unusable (sticky, see the module docs) unless it already is; returns the
/// reason that stands.
fn record_failure(shared: &Shared, why: String) -> String {
    let mut failed = shared.failed.lock();
    if failed.is_none() {
        eprintln!("onelog: log failure, refusing further commits: {why}");
        *failed = Some(why);
    }
    failed.clone().unwrap()
}

impl Writer {
    fn fail(&self, why: String) -> EngineError {
        EngineError::LogFailed(record_failure(&self.shared, why))
    }

    /// Writes and syncs a group and, in engine mode, queues it for applying; returns the
    /// answers (in `file` and `off` modes the changes are applied and the locks released
    /// already).
    fn process(&mut self, mut reqs: Vec<Request>) -> Vec<(Arc<Reply>, Result<CommitInfo>)> {
        if let Some(why) = self.shared.failed.lock().clone() {
            self.applier.answer_error(reqs, EngineError::LogFailed(why));
            return Vec::new();
        }
        // Barriers carry nothing; they are answered with the rest.
        let work: Vec<usize> = (0..reqs.len())
            .filter(|&i| reqs[i].batch.is_some())
            .collect();
        let result = if work.is_empty() {
            Ok(vec![CommitInfo::default(); reqs.len()])
        } else {
            match self.mode {
                LogMode::Engine => self.commit_engine(&mut reqs, &work),
                LogMode::File => self.commit_file(&mut reqs, &work),
                LogMode::Off => self.commit_off(&mut reqs, &work),
            }
        };
        let infos = match result {
            Ok(infos) => infos,
            Err(e) => {
                self.applier.answer_error(reqs, e);
                return Vec::new();
            }
        };
        let work: ApplyWork = reqs
            .iter_mut()
            .map(|r| (r.batch.take(), r.locks.take()))
            .filter(|(b, l)| b.is_some() || l.is_some())
            .collect();
        if self.mode == LogMode::Engine && !work.is_empty() {
            self.last_ticket += 1;
            self.applier.push(Applying {
                ticket: self.last_ticket,
                work: Some(work),
                writes: reqs.iter_mut().filter_map(|r| r.writes.take()).collect(),
            });
        } else {
            for (_, locks) in work {
                self.applier.release(locks);
            }
        }
        reqs.into_iter()
            .zip(infos)
            .map(|(r, info)| (r.reply, Ok(info)))
            .collect()
    }

    /// Appends the groups of `work` to the binlog and syncs per `sync_binlog`. With
    /// `capture`, also returns the bytes written (for tail records), and syncs anyway once
    /// more than [`TAIL_LIMIT`] bytes would be unsynced.
    fn append_and_sync(
        &mut self,
        reqs: &mut [Request],
        work: &[usize],
        capture: bool,
    ) -> Result<(Vec<Appended>, Vec<Chunk>)> {
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
        if (n != 0 && self.groups_since_sync >= n) || (capture && unsynced > TAIL_LIMIT) {
            let t = std::time::Instant::now();
            if let Err(e) = self.wal.sync() {
                return Err(self.fail(format!("binlog sync failed: {e}")));
            }
            self.shared
                .last_sync_ns
                .store(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
            self.groups_since_sync = 0;
            self.counters.log_syncs.fetch_add(1, Ordering::Relaxed);
        }
        self.counters.group_commits.fetch_add(1, Ordering::Relaxed);
        self.counters
            .binlog_commits
            .fetch_add(work.len() as u64, Ordering::Relaxed);
        Ok((appended, chunks))
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

    /// Appends and syncs; the batches (each now carrying its applied position) stay in
    /// their requests, to be applied after this group is durable.
    fn commit_engine(&mut self, reqs: &mut [Request], work: &[usize]) -> Result<Vec<CommitInfo>> {
        // sync_binlog != 1: appended bytes may stay unsynced while RocksDB (WAL off) flushes
        // the changes; keep the bytes beside the changes (see `tail_records`).
        let capture = self.shared.sync_binlog.load(Ordering::Relaxed) != 1 || !self.tail.is_empty();
        let (appended, chunks) = self.append_and_sync(reqs, work, capture)?;
        let mut chunks = capture.then_some(chunks);
        for (&i, a) in work.iter().zip(&appended) {
            let batch = reqs[i].batch.as_mut().unwrap();
            if let Some(chunks) = chunks.take() {
                self.tail_records(batch, chunks);
            }
            batch.put(keys::APPLIED, a.end.encode());
        }
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
        if let Err(e) = self.db.flush_wal(true) {
            return Err(self.fail(format!("RocksDB WAL sync failed: {e}")));
        }
        self.counters.log_syncs.fetch_add(1, Ordering::Relaxed);
        // 2. The binlog decides: a transaction whose XID is in the binlog is committed.
        let (appended, _) = match self.append_and_sync(reqs, work, false) {
            Ok(a) => a,
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
        for &i in work {
            let mut batch = reqs[i].batch.take().unwrap();
            batch.delete(keys::prepared_key(reqs[i].xid));
            if let Err(e) = self.db.write_opt(batch, &wo) {
                return Err(self.fail(format!("committing in RocksDB failed: {e}")));
            }
        }
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
        self.shared
            .last_sync_ns
            .store(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        self.counters.log_syncs.fetch_add(1, Ordering::Relaxed);
        self.counters.group_commits.fetch_add(1, Ordering::Relaxed);
        Ok(vec![CommitInfo::default(); reqs.len()])
    }
}

/// Commits a transaction that wrote: encode (in the caller's thread), queue, wait.
pub(crate) fn commit_txn(txn: &mut Txn) -> Result<CommitInfo> {
    let engine = txn.engine().clone();
    if let Some(why) = engine.committer.failure() {
        return Err(EngineError::LogFailed(why));
    }
    let batch = txn.overlay_batch();
    let xid = engine.wal.next_xid();
    let ahead = txn.ahead.take();
    let group = engine.wal.txn_group(txn, ahead, xid)?;
    let locks = (txn.txn_id(), std::mem::take(&mut *txn.held.lock()));
    let writes = std::mem::take(&mut txn.overlay);
    engine
        .committer
        .submit(Some(batch), group, xid, Some(locks), Some(writes))
}
