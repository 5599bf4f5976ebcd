//! The runway of `Preallocate::ZeroFill` binlogs: zeros written and synced ahead of the
//! end of the active file, so that a commit's fdatasync lands on blocks that already hold
//! data and commits no metadata (no unwritten-extent conversion).
//!
//! A background thread (`onelog-runway`) keeps the runway [`AHEAD`] bytes long: once less
//! than [`RUNWAY`] is left after an append, it writes the next stretch of zeros and syncs
//! them while commits go on in front of it. Only when an append would pass the end of the
//! zeros (the first append into a file, a large transaction, or a thread that fell
//! behind) are the zeros written inline, under the binlog's lock, as before the thread
//! existed. Measured here (16 clients, +1 ms per sync, Insert Benchmark rate-1000 steps):
//! the inline extension's fdatasync took up to 593 ms while compactions wrote, and every
//! commit waited behind it.
//!
//! Correctness never depends on the runway: an fdatasync after writing into blocks that
//! were never zeroed also makes their metadata durable; it is only slower. So the state
//! here may lag (a job's result is dropped when the active file changed under it) but
//! must never let a zero be written over bytes the log has written: the thread writes only
//! at or beyond the end of the zeros, and appends write only before it.

use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::fs::LogFile;

/// How far ahead of the log's end an inline extension writes zeros.
pub const RUNWAY: u64 = 4 << 20;

/// How far ahead of the log's end the background thread keeps zeros written.
pub const AHEAD: u64 = 2 * RUNWAY;

fn round_up(x: u64) -> u64 {
    x.div_ceil(4096) * 4096
}

struct Job {
    file: Arc<dyn LogFile>,
    from: u64,
    to: u64,
}

#[derive(Default)]
struct State {
    /// The file the runway belongs to (the active file when last used).
    file: Option<Arc<dyn LogFile>>,
    /// Zeros are written and synced up to here in `file`.
    zeroed: u64,
    /// A job for the thread, not yet taken.
    queued: Option<Job>,
    /// The thread is writing zeros (in the file of `zeroed` when it took the job).
    busy: bool,
    /// The thread's last job failed; further extensions are done inline (where a failure
    /// is reported and poisons the binlog).
    failed: bool,
    stop: bool,
}

struct Shared {
    st: Mutex<State>,
    cv: Condvar,
}

/// The runway of one binlog, with its background thread.
pub(super) struct Runway {
    shared: Arc<Shared>,
    /// None: no thread, every extension is inline.
    thread: Option<JoinHandle<()>>,
}

impl Runway {
    /// `background`: start the thread (else every extension is inline).
    pub(super) fn new(background: bool) -> Runway {
        let shared = Arc::new(Shared {
            st: Mutex::new(State::default()),
            cv: Condvar::new(),
        });
        let thread = if background {
            let s = shared.clone();
            std::thread::Builder::new()
                .name("onelog-runway".into())
                .spawn(move || worker(&s))
                .ok()
        } else {
            None
        };
        Runway { shared, thread }
    }

    /// Drops a job not yet taken and waits for the one in flight, if any: afterwards
    /// nothing writes zeros until a new job is queued.
    fn settle(&self, st: &mut MutexGuard<'_, State>) {
        st.queued = None;
        while st.busy {
            self.shared.cv.wait(st);
        }
    }

    /// Before `file` is written in `[end, to)` (`end` its current end, `max` its size):
    /// makes sure zeros are durable up to `to`, inline if they are not, and asks the thread
    /// for more once less than [`RUNWAY`] would be left. Called with the binlog's lock held.
    pub(super) fn ensure(
        &self,
        file: &Arc<dyn LogFile>,
        end: u64,
        to: u64,
        max: u64,
    ) -> std::io::Result<()> {
        let mut st = self.shared.st.lock();
        if !st.file.as_ref().is_some_and(|f| Arc::ptr_eq(f, file)) {
            // A new active file (or the first use): whatever a job in flight does belongs
            // to the old one.
            self.settle(&mut st);
            st.file = Some(file.clone());
            st.zeroed = end;
        }
        if st.zeroed < end {
            st.zeroed = end;
        }
        if to > st.zeroed && st.zeroed < max {
            // Out of zeros: let a job in flight finish (it may cover `to`), else write
            // them here (instead of a job not yet taken).
            self.settle(&mut st);
            if to > st.zeroed {
                let mut from = st.zeroed;
                // A write reaching far beyond the runway (a large transaction) covers that
                // space with its own bytes: zeros are needed only after it. Writing and
                // syncing zeros it is about to overwrite would double its cost (and stall
                // every commit queued behind it).
                if to > from + RUNWAY {
                    from = to & !4095;
                }
                let target = round_up(to + RUNWAY).min(max);
                file.write_zeros(from, target)?;
                file.sync_data()?;
                st.zeroed = target;
            }
        }
        if self.thread.is_some()
            && !st.failed
            && !st.busy
            && st.queued.is_none()
            && st.zeroed < max
            && st.zeroed.saturating_sub(to) < RUNWAY
        {
            st.queued = Some(Job {
                file: file.clone(),
                from: st.zeroed,
                to: round_up(to + AHEAD).min(max),
            });
            self.shared.cv.notify_all();
        }
        Ok(())
    }

    /// The active file is about to be cut or replaced: waits for a job writing into it and
    /// forgets it (nothing may be written past a cut file's end).
    pub(super) fn retire(&self) {
        let mut st = self.shared.st.lock();
        self.settle(&mut st);
        st.file = None;
        st.zeroed = 0;
    }
}

impl Drop for Runway {
    fn drop(&mut self) {
        {
            let mut st = self.shared.st.lock();
            st.stop = true;
            st.queued = None;
            self.shared.cv.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn worker(shared: &Shared) {
    loop {
        let job = {
            let mut st = shared.st.lock();
            loop {
                if st.stop {
                    return;
                }
                if let Some(job) = st.queued.take() {
                    st.busy = true;
                    break job;
                }
                shared.cv.wait(&mut st);
            }
        };
        let r = job
            .file
            .write_zeros(job.from, job.to)
            .and_then(|()| job.file.sync_data());
        let mut st = shared.st.lock();
        st.busy = false;
        match r {
            Ok(()) => {
                let same = st.file.as_ref().is_some_and(|f| Arc::ptr_eq(f, &job.file));
                if same && st.zeroed == job.from {
                    st.zeroed = job.to;
                }
            }
            Err(e) => {
                onelog_types::warning!("binlog runway: zero-filling ahead of the log failed ({e}); extending it inline from now on");
                st.failed = true;
            }
        }
        shared.cv.notify_all();
    }
}
