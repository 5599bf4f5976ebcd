//! Following the log as it grows: what a replica's dump thread reads.
//!
//! A [`Follower`] yields the events of the log in order, from a position up to the
//! *durable* end only: a group leaves the server after its fdatasync, never before, so no
//! replica can hold a transaction that a crash of this server takes back. Followers wait on
//! the binlog's condition variable, which every sync, rotation and reset notifies (every
//! write too while a follower waits with a sync-after delay), so a follower that keeps up
//! wakes once on each synced group. Reads go through the page cache
//! with positional reads of the open file, buffered in 256 KiB pieces.
//!
//! With `sync_binlog` = 0 or N > 1 the committer leaves appended groups unsynced for a
//! while; a follower that has waited [`SYNC_AFTER`] for such bytes syncs them itself
//! (see [`Follower::set_sync_after`]).
//!
//! Each follower registers the file it reads, and purging never removes it or a later file.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::{Binlog, EventReader, LogPos, ReadEvent};
use crate::error::{BinlogError, Result};

/// How long appended bytes may wait for the committer's own sync before a waiting follower
/// syncs them.
pub const SYNC_AFTER: Duration = Duration::from_millis(5);

/// The file each follower reads (follower id -> file number), and how many followers wait
/// for appended bytes, not only synced ones.
#[derive(Default)]
pub(crate) struct Registry {
    next_id: AtomicU64,
    files: Mutex<HashMap<u64, u32>>,
    /// Followers waiting that would sync stale bytes themselves (changed under the
    /// binlog's lock): a write wakes the followers only when this is not zero, so with
    /// `sync_binlog=1` each follower wakes once per group, on its sync.
    write_waiters: AtomicUsize,
}

impl Registry {
    fn add(&self, no: u32) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.files.lock().insert(id, no);
        id
    }

    fn set(&self, id: u64, no: u32) {
        self.files.lock().insert(id, no);
    }

    fn remove(&self, id: u64) {
        self.files.lock().remove(&id);
    }

    /// Whether a write must wake the followers (read under the binlog's lock).
    pub(crate) fn want_writes(&self) -> bool {
        self.write_waiters.load(Ordering::Relaxed) > 0
    }

    /// The oldest file a follower reads.
    pub(crate) fn oldest(&self) -> Option<u32> {
        self.files.lock().values().copied().min()
    }
}

/// What [`Follower::next`] found.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Next {
    /// The next durable event.
    Event(ReadEvent),
    /// Nothing new became durable within the wait.
    Idle,
}

/// Reads the log from a position on, following it as it grows (see the module docs).
pub struct Follower<'a> {
    log: &'a Binlog,
    reader: EventReader,
    id: u64,
    /// The file registered for this follower.
    registered: u32,
    generation: u64,
    sync_after: Option<Duration>,
}

impl Binlog {
    /// Follows the log from `from` (offset 0 or 4: the start of that file). Fails with
    /// [`BinlogError::UnknownFile`] when the file is not in the log, and
    /// [`BinlogError::InvalidArgument`] when the offset lies beyond the file's end.
    pub fn follow(&self, from: LogPos) -> Result<Follower<'_>> {
        let inner = self.inner.lock();
        let size = if from.file_no == inner.active.no {
            inner.active.end
        } else {
            match inner.files.get(&from.file_no) {
                Some(f) => f.size,
                None => return Err(BinlogError::UnknownFile(self.file_name(from.file_no))),
            }
        };
        if from.offset > size {
            return Err(BinlogError::InvalidArgument(format!(
                "position {} is beyond the end of {} ({size})",
                from.offset,
                self.file_name(from.file_no)
            )));
        }
        let id = self.followers.add(from.file_no);
        let reader = EventReader::new(self.location(), from, inner.synced.max(from));
        Ok(Follower {
            log: self,
            reader,
            id,
            registered: from.file_no,
            generation: inner.generation,
            sync_after: Some(SYNC_AFTER),
        })
    }
}

impl Follower<'_> {
    /// Where the next event starts.
    pub fn position(&self) -> LogPos {
        self.reader.position()
    }

    /// How long appended bytes wait for another sync before this follower syncs them
    /// (`None`: never; right when the committer syncs every group).
    pub fn set_sync_after(&mut self, after: Option<Duration>) {
        self.sync_after = after;
    }

    /// From now on, decode only the events that delimit files and groups
    /// (FORMAT_DESCRIPTION, ROTATE, GTID, GTID_LIST, XID, QUERY, ROW_REDO): the others come as
    /// [`crate::Event::Unknown`] with their raw bytes, their CRC32 unchecked (what a dump
    /// needs: it sends raw bytes, and the replica checks them).
    pub fn delimiters_only(&mut self) {
        self.reader.delimiters_only();
    }

    /// The next durable event, waiting up to `wait` for one.
    pub fn next(&mut self, wait: Duration) -> Result<Next> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(ev) = self.reader.next() {
                let ev = ev?;
                let no = self.reader.position().file_no;
                if no != self.registered {
                    self.log.followers.set(self.id, no);
                    self.registered = no;
                }
                return Ok(Next::Event(ev));
            }
            // Caught up with the durable end known to the reader: wait for it to move.
            let mut since_unsynced: Option<Instant> = None;
            loop {
                let mut inner = self.log.inner.lock();
                if inner.generation != self.generation {
                    return Err(BinlogError::InvalidArgument(
                        "the binary log was reset (RESET MASTER)".into(),
                    ));
                }
                if inner.synced > self.reader.limit() {
                    let synced = inner.synced;
                    drop(inner);
                    self.reader.set_limit(synced);
                    break;
                }
                let now = Instant::now();
                if now >= deadline {
                    return Ok(Next::Idle);
                }
                let end = LogPos::new(inner.active.no, inner.active.end);
                let mut until = deadline;
                if let (true, Some(after)) = (end > inner.synced, self.sync_after) {
                    let first = *since_unsynced.get_or_insert(now);
                    if now >= first + after {
                        drop(inner);
                        self.log.sync()?;
                        since_unsynced = None;
                        continue;
                    }
                    until = until.min(first + after);
                } else {
                    since_unsynced = None;
                }
                // Registered under the lock the writer holds when it decides to notify.
                let waits_for_writes = self.sync_after.is_some();
                if waits_for_writes {
                    self.log
                        .followers
                        .write_waiters
                        .fetch_add(1, Ordering::Relaxed);
                }
                let _ = self.log.moved.wait_until(&mut inner, until);
                if waits_for_writes {
                    self.log
                        .followers
                        .write_waiters
                        .fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
    }
}

impl Drop for Follower<'_> {
    fn drop(&mut self) {
        self.log.followers.remove(self.id);
    }
}

/// Keeps every file of the log from being purged while it lives (a backup copying files);
/// see [`Binlog::retain_files`].
pub struct Retained<'a> {
    log: &'a Binlog,
    id: u64,
    generation: u64,
}

impl Binlog {
    /// Registers a reader of the oldest file: PURGE and expiry remove no file until the
    /// returned guard is dropped. RESET MASTER still may; [`Retained::check`] tells.
    pub fn retain_files(&self) -> Retained<'_> {
        let inner = self.inner.lock();
        let oldest = inner
            .files
            .keys()
            .next()
            .copied()
            .unwrap_or(inner.active.no);
        Retained {
            log: self,
            id: self.followers.add(oldest),
            generation: inner.generation,
        }
    }
}

impl Retained<'_> {
    /// Fails if RESET MASTER ran since the guard was taken (the files are not the same).
    pub fn check(&self) -> Result<()> {
        if self.log.inner.lock().generation != self.generation {
            return Err(BinlogError::InvalidArgument(
                "the binary log was reset (RESET MASTER)".into(),
            ));
        }
        Ok(())
    }
}

impl Drop for Retained<'_> {
    fn drop(&mut self) {
        self.log.followers.remove(self.id);
    }
}
