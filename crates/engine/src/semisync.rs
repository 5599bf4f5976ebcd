//! Semi-synchronous replication, primary side: a commit is answered only once a replica
//! has received its group (MariaDB's `rpl_semi_sync_master_*`).
//!
//! The committer calls [`SemiSync::wait_acked`] for each durable group, with the group's
//! end position in the binlog, before it answers the group's sessions; with the wait point
//! AFTER_SYNC it also publishes the group's read snapshot only after that (see
//! `commit.rs`), so no other session sees a change that no replica has. One ACK covers
//! every group up to the position it names, so a whole commit group waits for one round
//! trip.
//!
//! Dump threads of replicas that asked for semi-sync (`SET @rpl_semi_sync_slave = 1`)
//! register with [`SemiSync::add_client`], ask [`SemiSync::needs_ack`] whether the last
//! event of a batch must carry the "needs ACK" flag, and report the replica's ACKs with
//! [`SemiSync::report_ack`].
//!
//! As in MariaDB: enabling puts the status ON; a commit that waits longer than
//! `rpl_semi_sync_master_timeout` switches it OFF (later commits do not wait), and an ACK
//! at or past the last committed position switches it ON again. With
//! `rpl_semi_sync_master_wait_no_slave` OFF, commits do not wait while no semi-sync
//! replica is connected.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use onelog_binlog::LogPos;
use parking_lot::{Condvar, Mutex};

/// Where the commit waits for the ACK (`rpl_semi_sync_master_wait_point`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitPoint {
    /// After the binlog sync, before the group is visible or answered (lossless).
    AfterSync,
    /// After the group is visible to other sessions, before it is answered.
    AfterCommit,
}

impl WaitPoint {
    pub fn name(self) -> &'static str {
        match self {
            WaitPoint::AfterSync => "AFTER_SYNC",
            WaitPoint::AfterCommit => "AFTER_COMMIT",
        }
    }

    pub fn parse(s: &str) -> Option<WaitPoint> {
        if s.eq_ignore_ascii_case("AFTER_SYNC") {
            Some(WaitPoint::AfterSync)
        } else if s.eq_ignore_ascii_case("AFTER_COMMIT") {
            Some(WaitPoint::AfterCommit)
        } else {
            None
        }
    }
}

#[derive(Default)]
struct State {
    /// `Rpl_semi_sync_master_status` (while enabled).
    on: bool,
    clients: u64,
    /// The furthest position a replica acknowledged.
    reply: Option<LogPos>,
    /// The end of the last group a commit waited for (or would have).
    committed: Option<LogPos>,
    /// Ends of the groups written while ON and not acknowledged yet: the events a dump
    /// flags (each waiting group gets its ACK as soon as the replica has it, not with a
    /// later group's).
    waiting: std::collections::BTreeSet<LogPos>,
    yes_tx: u64,
    no_tx: u64,
    off_times: u64,
    acks: u64,
    tx_wait_us: u64,
    tx_waits: u64,
    net_wait_us: u64,
    net_waits: u64,
}

/// The primary's semi-sync state (see the module docs).
pub struct SemiSync {
    /// `rpl_semi_sync_slave_enabled`: this server's replica asks its primary for
    /// semi-sync.
    pub slave_enabled: AtomicBool,
    /// `Rpl_semi_sync_slave_status`: the replica is connected with semi-sync.
    pub slave_status: AtomicBool,
    enabled: AtomicBool,
    after_sync: AtomicBool,
    timeout_ms: AtomicU64,
    wait_no_slave: AtomicBool,
    state: Mutex<State>,
    acked: Condvar,
}

/// `SHOW STATUS` values (MariaDB's `Rpl_semi_sync_master_*`).
#[derive(Clone, Debug, Default)]
pub struct SemiSyncStatus {
    pub on: bool,
    pub clients: u64,
    pub yes_tx: u64,
    pub no_tx: u64,
    pub off_times: u64,
    pub acks: u64,
    pub tx_avg_wait_us: u64,
    pub tx_waits: u64,
    pub net_avg_wait_us: u64,
    pub net_waits: u64,
}

impl Default for SemiSync {
    fn default() -> Self {
        SemiSync {
            slave_enabled: AtomicBool::new(false),
            slave_status: AtomicBool::new(false),
            enabled: AtomicBool::new(false),
            after_sync: AtomicBool::new(true),
            timeout_ms: AtomicU64::new(10_000),
            wait_no_slave: AtomicBool::new(true),
            state: Mutex::new(State::default()),
            acked: Condvar::new(),
        }
    }
}

impl SemiSync {
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    /// `rpl_semi_sync_master_enabled`: turning it on puts the status ON; off releases every
    /// waiting commit.
    pub fn set_enabled(&self, on: bool) {
        let mut st = self.state.lock();
        if on == self.enabled() {
            return;
        }
        self.enabled.store(on, Ordering::Release);
        st.on = on;
        st.reply = None;
        st.committed = None;
        st.waiting.clear();
        self.acked.notify_all();
    }

    pub fn wait_point(&self) -> WaitPoint {
        if self.after_sync.load(Ordering::Relaxed) {
            WaitPoint::AfterSync
        } else {
            WaitPoint::AfterCommit
        }
    }

    pub fn set_wait_point(&self, p: WaitPoint) {
        self.after_sync
            .store(p == WaitPoint::AfterSync, Ordering::Relaxed);
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms.load(Ordering::Relaxed))
    }

    pub fn set_timeout(&self, d: Duration) {
        self.timeout_ms
            .store(d.as_millis() as u64, Ordering::Relaxed);
    }

    pub fn wait_no_slave(&self) -> bool {
        self.wait_no_slave.load(Ordering::Relaxed)
    }

    pub fn set_wait_no_slave(&self, on: bool) {
        self.wait_no_slave.store(on, Ordering::Relaxed);
        self.acked.notify_all();
    }

    /// Waits until a replica acknowledged the binlog up to `end` (the end of a durable
    /// group of `commits` transactions), the timeout passes (status OFF), or semi-sync is
    /// off. Returns at once when semi-sync is disabled.
    pub(crate) fn wait_acked(&self, end: LogPos, commits: u64) {
        if !self.enabled() || commits == 0 {
            return;
        }
        let started = Instant::now();
        let deadline = started + self.timeout();
        let mut st = self.state.lock();
        if st.committed.is_none_or(|c| c < end) {
            st.committed = Some(end);
        }
        loop {
            if !self.enabled() || !st.on || (st.clients == 0 && !self.wait_no_slave()) {
                st.no_tx += commits;
                return;
            }
            if st.reply.is_some_and(|r| r >= end) {
                st.yes_tx += commits;
                st.tx_waits += 1;
                st.tx_wait_us += started.elapsed().as_micros() as u64;
                return;
            }
            if self.acked.wait_until(&mut st, deadline).timed_out()
                && st.reply.is_none_or(|r| r < end)
                && st.on
            {
                st.on = false;
                st.off_times += 1;
                st.waiting.clear();
                st.no_tx += commits;
                onelog_types::warning!(
                    "timeout waiting for a semi-sync reply of binlog position \
                     {}:{}; semi-sync switched OFF",
                    end.file_no,
                    end.offset
                );
                self.acked.notify_all();
                return;
            }
        }
    }

    /// A replica's dump asked for semi-sync.
    pub fn add_client(&self) {
        self.state.lock().clients += 1;
        self.acked.notify_all();
    }

    pub fn remove_client(&self) {
        let mut st = self.state.lock();
        st.clients = st.clients.saturating_sub(1);
        self.acked.notify_all();
    }

    /// A group ending at `end` was written to the binlog (before its sync, so that a
    /// dump sending it knows that a commit will wait for it).
    pub(crate) fn note_written(&self, end: LogPos) {
        if !self.enabled() {
            return;
        }
        let mut st = self.state.lock();
        if st.committed.is_none_or(|c| c < end) {
            st.committed = Some(end);
        }
        if st.on && st.reply.is_none_or(|r| r < end) {
            st.waiting.insert(end);
        }
    }

    /// Whether the event that ends a group at `end` asks the replica for an ACK: while ON,
    /// when a commit waits for that group; while OFF, when it is the last group written
    /// (its ACK switches semi-sync ON again).
    pub fn needs_ack(&self, end: LogPos) -> bool {
        if !self.enabled() {
            return false;
        }
        let st = self.state.lock();
        if st.on {
            // Only a group some commit waits for (no ACKs while a replica catches up).
            st.waiting.contains(&end)
        } else {
            st.committed.is_none_or(|c| end >= c)
        }
    }

    /// A replica acknowledged the binlog up to `pos`; `net_wait`: how long after the
    /// flagged event was sent.
    pub fn report_ack(&self, pos: LogPos, net_wait: Option<Duration>) {
        if !self.enabled() {
            return;
        }
        let mut st = self.state.lock();
        st.acks += 1;
        if let Some(w) = net_wait {
            st.net_waits += 1;
            st.net_wait_us += w.as_micros() as u64;
        }
        if st.reply.is_none_or(|r| r < pos) {
            st.reply = Some(pos);
        }
        st.waiting = st.waiting.split_off(&LogPos {
            file_no: pos.file_no,
            offset: pos.offset + 1,
        });
        if !st.on && st.committed.is_none_or(|c| pos >= c) {
            st.on = true;
            onelog_types::note!(
                "semi-sync switched ON at binlog position {}:{}",
                pos.file_no,
                pos.offset
            );
        }
        self.acked.notify_all();
    }

    pub fn status(&self) -> SemiSyncStatus {
        let st = self.state.lock();
        let avg = |total: u64, n: u64| total.checked_div(n).unwrap_or(0);
        SemiSyncStatus {
            on: self.enabled() && st.on,
            clients: st.clients,
            yes_tx: st.yes_tx,
            no_tx: st.no_tx,
            off_times: st.off_times,
            acks: st.acks,
            tx_avg_wait_us: avg(st.tx_wait_us, st.tx_waits),
            tx_waits: st.tx_waits,
            net_avg_wait_us: avg(st.net_wait_us, st.net_waits),
            net_waits: st.net_waits,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(o: u64) -> LogPos {
        LogPos {
            file_no: 1,
            offset: o,
        }
    }

    #[test]
    fn an_ack_releases_the_groups_it_covers_and_a_timeout_switches_off() {
        let s = std::sync::Arc::new(SemiSync::default());
        s.set_enabled(true);
        s.set_timeout(Duration::from_millis(50));
        s.add_client();
        assert!(!s.needs_ack(pos(100)), "no commit waits for it");
        s.note_written(pos(100));
        assert!(s.needs_ack(pos(100)));
        s.note_written(pos(110));
        assert!(
            s.needs_ack(pos(110)) && !s.needs_ack(pos(105)),
            "only written group ends"
        );
        let s2 = s.clone();
        let t = std::thread::spawn(move || s2.wait_acked(pos(100), 3));
        std::thread::sleep(Duration::from_millis(10));
        s.report_ack(pos(120), None);
        t.join().unwrap();
        assert_eq!(s.status().yes_tx, 3);
        assert!(!s.needs_ack(pos(110)), "acknowledged already");
        // No ACK: the wait ends at the timeout, OFF, counted as not acknowledged.
        s.wait_acked(pos(200), 1);
        let st = s.status();
        assert!(!st.on);
        assert_eq!((st.no_tx, st.off_times), (1, 1));
        // While OFF, commits do not wait; an ACK at the last commit switches ON again.
        let t0 = Instant::now();
        s.wait_acked(pos(300), 1);
        assert!(t0.elapsed() < Duration::from_millis(40));
        assert!(!s.needs_ack(pos(250)) && s.needs_ack(pos(300)));
        s.report_ack(pos(250), None);
        assert!(!s.status().on);
        s.report_ack(pos(300), None);
        assert!(s.status().on);
    }

    #[test]
    fn without_replicas_commits_wait_only_if_told_to() {
        let s = SemiSync::default();
        s.set_enabled(true);
        s.set_timeout(Duration::from_millis(30));
        s.set_wait_no_slave(false);
        let t0 = Instant::now();
        s.wait_acked(pos(10), 1);
        assert!(t0.elapsed() < Duration::from_millis(25));
        assert!(s.status().on, "not waiting is not a timeout");
        s.set_wait_no_slave(true);
        s.wait_acked(pos(20), 1);
        assert!(!s.status().on);
    }
}
