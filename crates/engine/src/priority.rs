//! Scheduling priority of the commit path (`--commit-nice`).
//!
//! A group commit passes through several threads in turn: the session that leads writes
//! and syncs, the apply thread applies while the sync runs, the leader publishes and hands
//! leadership to the next session, and each session in the group is woken to answer its
//! client. On a machine whose cores are all busy with queries, every one of those wake-ups
//! waits for a time slice behind the query threads. Measured (Insert Benchmark, 16
//! clients, qp500, +1 ms per sync, two cores): a group took ~20 ms instead of ~1.5 (the
//! sync 4.5 ms from its wake-up, waiting for the preempted apply thread 6.2 ms, the next
//! leader's wake-up 9.1 ms), so the background inserts fell short of their rate.
//!
//! With a commit nice value below the server's own, the apply thread always runs at it,
//! and a session runs at it while it leads a group: from becoming the leader (a session
//! handed the lead is raised by the previous leader before it is woken) until it has
//! answered its group. Followers keep the normal priority: raising every committing
//! session (two `setpriority` calls per commit) cost 5-12% of group-commit throughput at
//! 16-64 clients. Raising a priority needs `CAP_SYS_NICE` (or an `RLIMIT_NICE` that
//! allows it); without it the first attempt says so once on stderr and the commit path
//! runs at the normal priority.

use std::sync::atomic::{AtomicBool, Ordering};

/// The commit path's nice value and whether raising to it is allowed here.
pub(crate) struct CommitPriority {
    /// Nice value of the commit path (only used when below `base`).
    nice: i32,
    /// The nice value threads return to (the process's when started).
    base: i32,
    on: AtomicBool,
}

/// Restores the thread's nice value when dropped.
pub(crate) struct Raised<'a>(&'a CommitPriority);

impl Drop for Raised<'_> {
    fn drop(&mut self) {
        // Lowering a priority never needs a privilege.
        set_nice(self.0.base);
    }
}

fn set_nice(nice: i32) -> bool {
    set_thread_nice(0, nice)
}

/// `tid` 0: the calling thread (on Linux, PRIO_PROCESS takes a thread id).
fn set_thread_nice(tid: libc::pid_t, nice: i32) -> bool {
    unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) == 0 }
}

/// The calling thread's id (cached: `gettid` is a system call).
pub(crate) fn thread_id() -> libc::pid_t {
    thread_local! {
        static TID: libc::pid_t = unsafe { libc::gettid() };
    }
    TID.with(|t| *t)
}

fn current_nice() -> i32 {
    // getpriority may return -1 as a valid value: errno tells.
    unsafe {
        *libc::__errno_location() = 0;
        let n = libc::getpriority(libc::PRIO_PROCESS, 0);
        if n == -1 && *libc::__errno_location() != 0 {
            0
        } else {
            n
        }
    }
}

impl CommitPriority {
    /// `nice`: the commit path's nice value (-20..=19); a value not below the calling
    /// thread's current one turns the feature off.
    pub(crate) fn new(nice: i32) -> CommitPriority {
        let base = current_nice();
        CommitPriority {
            nice,
            base,
            on: AtomicBool::new(nice < base),
        }
    }

    fn raise_here(&self) -> bool {
        self.raise_tid(0)
    }

    fn raise_tid(&self, tid: libc::pid_t) -> bool {
        if !self.on.load(Ordering::Relaxed) {
            return false;
        }
        if set_thread_nice(tid, self.nice) {
            return true;
        }
        let e = std::io::Error::last_os_error();
        if self.on.swap(false, Ordering::Relaxed) {
            onelog_types::warning!(
                "--commit-nice={} not applied ({e}; it needs CAP_SYS_NICE or an \
                 RLIMIT_NICE of at least {}): commits run at the normal priority",
                self.nice,
                20 - self.nice
            );
        }
        false
    }

    /// Raises the calling thread to the commit priority until the guard is dropped.
    pub(crate) fn raise(&self) -> Option<Raised<'_>> {
        self.raise_here().then_some(Raised(self))
    }

    /// The guard of a thread that another raised ([`CommitPriority::raise_thread`]): no
    /// system call now, lowered when dropped.
    pub(crate) fn held(&self) -> Option<Raised<'_>> {
        self.on.load(Ordering::Relaxed).then_some(Raised(self))
    }

    /// Raises another thread of this process (one about to be woken to lead); it lowers
    /// itself again through its own [`CommitPriority::raise`] guard.
    pub(crate) fn raise_thread(&self, tid: libc::pid_t) {
        self.raise_tid(tid);
    }

    /// Raises the calling thread for good (the apply thread).
    pub(crate) fn raise_for_good(&self) {
        self.raise_here();
    }

    /// Whether raising works here (false until tried, when off, or once refused).
    #[cfg(test)]
    fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on a fresh thread (nice values are per thread on Linux) and returns its
    /// result.
    fn on_thread<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        std::thread::spawn(f).join().unwrap()
    }

    #[test]
    fn off_when_not_below_the_base() {
        on_thread(|| {
            let p = CommitPriority::new(current_nice());
            assert!(p.raise().is_none());
            assert_eq!(current_nice(), p.base);
        });
    }

    #[test]
    fn raises_and_restores_or_turns_itself_off() {
        on_thread(|| {
            let base = current_nice();
            let p = CommitPriority::new(base - 5);
            match p.raise() {
                Some(g) => {
                    // Privileged (as root in CI): the thread runs at the commit priority
                    // until the guard goes.
                    assert_eq!(current_nice(), base - 5);
                    drop(g);
                    assert_eq!(current_nice(), base);
                    assert!(p.is_on());
                }
                None => {
                    // Refused: off for good, the thread unchanged.
                    assert!(!p.is_on());
                    assert_eq!(current_nice(), base);
                    assert!(p.raise().is_none());
                }
            };
        });
    }

    #[test]
    fn raises_another_thread_which_lowers_itself() {
        let p = std::sync::Arc::new(CommitPriority::new(current_nice() - 4));
        let (tx, rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let q = p.clone();
        let t = std::thread::spawn(move || {
            tx.send(thread_id()).unwrap();
            go_rx.recv().unwrap();
            let raised = current_nice();
            // Leading: the guard lowers the thread back when it goes.
            drop(q.held());
            (raised, current_nice())
        });
        let tid = rx.recv().unwrap();
        p.raise_thread(tid);
        go_tx.send(()).unwrap();
        let (raised, after) = t.join().unwrap();
        if p.is_on() {
            assert_eq!(raised, p.nice);
        } else {
            assert_eq!(raised, p.base);
        }
        assert_eq!(after, p.base);
    }

    #[test]
    fn a_lower_priority_is_always_allowed() {
        on_thread(|| {
            let base = current_nice();
            // Not a raise: the feature is off, and the thread keeps its nice value.
            let p = CommitPriority::new(base + 3);
            assert!(!p.is_on());
            p.raise_for_good();
            assert_eq!(current_nice(), base);
        });
    }
}
