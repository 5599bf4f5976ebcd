//! The binlog file set: [`Binlog`].
//!
//! Layout of every file:
//! `magic "\xfebin" | FORMAT_DESCRIPTION (ends at 256) | GTID_LIST (state at file start) |
//!  event groups ... | [ROTATE, when the log moved on to the next file]`,
//! then, in preallocated (Engine) files, zeros up to `max_binlog_size`.
//!
//! Durability rules (numbered where the code relies on them):
//! 1. A file's header is durable, and its directory entry too, before any group is written
//!    into it. So every file holding a group has a valid header.
//! 2. A file is complete (ROTATE written, preallocated tail cut) and durable before the next
//!    file is created. So only the last file can have a torn tail.
//! 3. A group never spans files; groups are written in GTID order, each once.
//! 4. After a failed write or fdatasync the binlog refuses appends (fsyncgate): the state
//!    of the unsynced bytes is unknown, and only recovery at the next open can tell.

mod dir;
mod follow;
mod naming;
mod reader;
mod recovery;
mod resident;
mod runway;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

pub use dir::{FileStart, LogDir};
pub use follow::{Follower, Next, Retained, SYNC_AFTER as FOLLOW_SYNC_AFTER};
pub use naming::Naming;
pub use reader::{EventReader, FileEvents, GroupReader, ReadEvent, ReadGroup};
pub(crate) use reader::{Feed, GroupScanner};
pub(crate) use recovery::nonzero_after;
pub use recovery::RecoveryReport;
pub use resident::FileDetail;

use crate::error::{BinlogError, Result};
use crate::event::{
    encode_event, Event, FormatDescription, GtidList, Rotate, BINLOG_MAGIC, DEFAULT_SERVER_VERSION,
    HEADER_LEN,
};
use crate::fs::{FileSystem, LogFile, OpenMode, RealFs};
use crate::group::{EventGroup, GroupKind};
use crate::gtid::{format_gtid_list, Gtid, GtidState};
use reader::Location;

/// A position in the binlog: file number and byte offset in that file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogPos {
    pub file_no: u32,
    pub offset: u64,
}

impl LogPos {
    pub fn new(file_no: u32, offset: u64) -> LogPos {
        LogPos { file_no, offset }
    }
}

impl fmt::Display for LogPos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file_no, self.offset)
    }
}

/// How appended bytes are made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMethod {
    /// Buffered writes; `sync` calls fdatasync.
    Fdatasync,
    /// Files opened with O_DSYNC: each write is durable when it returns; `sync` is free.
    WriteThrough,
}

/// How Engine-style files reserve their space when created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preallocate {
    /// Files grow as they are written (fdatasync then also commits the size).
    Off,
    /// fallocate to `max_binlog_size` (unwritten extents: ext4/xfs still journal their
    /// conversion on first write).
    Fallocate,
    /// fallocate to `max_binlog_size` (space reserved), then keep a runway of written
    /// zeros ahead of the end of the log, extended as the log grows by a background
    /// thread, ahead of need (see `runway.rs`). fdatasync after writing into blocks that
    /// already hold zeros commits no metadata. Measured on ext4 here (8 KiB write +
    /// fdatasync, one thread): growing file 4250/s, fallocate'd 4420/s, zero-filled
    /// 7170/s, O_DSYNC 4140/s.
    ZeroFill,
}

#[cfg(test)]
use runway::RUNWAY;

/// Event groups at least this large are written from their own buffer, not copied.
const LARGE_GROUP: usize = 1 << 20;

/// Largest single write to a binlog file (see `Binlog::write_locked`).
const WRITE_PIECE: usize = 1 << 20;

/// Options of a binlog.
#[derive(Clone, Debug)]
pub struct BinlogOptions {
    pub dir: PathBuf,
    /// `binlog` gives `binlog-000000` (Engine) or `binlog.000001` (Classic).
    pub base_name: String,
    pub naming: Naming,
    /// A file is rotated before a group would take it past this size (a group larger than
    /// this gets a file of its own). Between 4 KiB and 4 GiB - 1.
    pub max_binlog_size: u64,
    /// Engine style only; Classic files always grow.
    pub preallocate: Preallocate,
    pub server_id: u32,
    /// The domain of the GTIDs this server assigns.
    pub domain_id: u32,
    pub server_version: String,
    pub sync_method: SyncMethod,
}

impl BinlogOptions {
    pub fn new(dir: impl Into<PathBuf>) -> BinlogOptions {
        BinlogOptions {
            dir: dir.into(),
            base_name: "binlog".into(),
            naming: Naming::Engine,
            max_binlog_size: 1 << 30,
            preallocate: Preallocate::Fallocate,
            server_id: 1,
            domain_id: 0,
            server_version: DEFAULT_SERVER_VERSION.into(),
            sync_method: SyncMethod::Fdatasync,
        }
    }

    fn preallocates(&self) -> bool {
        self.naming == Naming::Engine && self.preallocate != Preallocate::Off
    }

    /// Whether files keep a runway of written zeros (see `runway.rs`).
    fn zero_fills(&self) -> bool {
        self.preallocates() && self.preallocate == Preallocate::ZeroFill
    }

    fn validate(&self) -> Result<()> {
        if !(4096..=u32::MAX as u64).contains(&self.max_binlog_size) {
            return Err(BinlogError::InvalidArgument(format!(
                "max_binlog_size {} is not between 4096 and {}",
                self.max_binlog_size,
                u32::MAX
            )));
        }
        if self.base_name.is_empty() || self.base_name.contains('/') {
            return Err(BinlogError::InvalidArgument(format!(
                "bad binlog base name '{}'",
                self.base_name
            )));
        }
        Ok(())
    }
}

/// Bytes written to the log starting at a position.
pub type Chunk = (LogPos, Vec<u8>);

/// One appended group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppendedGroup {
    pub gtid: Gtid,
    pub start: LogPos,
    pub end: LogPos,
}

/// What `append` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppendInfo {
    /// Per group, in the order given.
    pub groups: Vec<AppendedGroup>,
    /// The end of the log after the append.
    pub end: LogPos,
}

/// Counters (for `SHOW STATUS`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BinlogStats {
    /// `Binlog_bytes_written`.
    pub bytes_written: u64,
    /// fdatasync calls on binlog files.
    pub syncs: u64,
    /// Groups appended (`Binlog_commits`).
    pub groups: u64,
    /// `append` calls (`Binlog_group_commits`).
    pub appends: u64,
    pub rotations: u64,
}

#[derive(Default)]
struct Counters {
    bytes_written: AtomicU64,
    syncs: AtomicU64,
    groups: AtomicU64,
    appends: AtomicU64,
    rotations: AtomicU64,
}

/// A file of the set.
#[derive(Clone, Debug)]
struct FileInfo {
    /// FORMAT_DESCRIPTION create time: when the file was started.
    created: u32,
    /// Its GTID_LIST: the binlog state when it was started.
    start_state: Vec<Gtid>,
    /// Bytes used (end of the last event); for the active file see `Active::end`.
    size: u64,
}

struct Active {
    no: u32,
    file: Arc<dyn LogFile>,
    /// End of the last event written.
    end: u64,
    /// End of the file header (the first group starts here).
    header_end: u64,
}

struct Inner {
    files: std::collections::BTreeMap<u32, FileInfo>,
    active: Active,
    state: GtidState,
    /// Everything before this is durable.
    synced: LogPos,
    /// Counts RESET MASTERs: positions of an older generation mean nothing.
    generation: u64,
}

/// The binlog: a set of MariaDB-format files in one directory.
pub struct Binlog {
    loc: Location,
    opts: BinlogOptions,
    inner: Mutex<Inner>,
    /// Set by a failed write or sync; then appends are refused (rule 4).
    poison: Mutex<Option<String>>,
    counters: Counters,
    recovery: RecoveryReport,
    /// ZeroFill: the zeros ahead of the log's end.
    runway: runway::Runway,
    /// Notified whenever the end or the durable end of the log moves (see [`Follower`]).
    moved: Condvar,
    /// The file each [`Follower`] is reading: purging keeps them.
    followers: follow::Registry,
}

pub(crate) fn now() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as u32)
        .unwrap_or(0)
}

/// Bytes a ROTATE event naming `next` takes.
fn rotate_len(next: &str) -> u64 {
    (HEADER_LEN + 8 + next.len() + 4) as u64
}

/// Format: magic | FORMAT_DESCRIPTION (log_pos 256) | GTID_LIST.
pub(crate) fn file_header(server_id: u32, version: &str, created: u32, state: &[Gtid]) -> Vec<u8> {
    let mut out = BINLOG_MAGIC.to_vec();
    let fde = Event::FormatDescription(FormatDescription::new(version, created));
    let mut ev = encode_event(created, server_id, 0, 0, &fde);
    let end = (out.len() + ev.len()) as u32;
    crate::event::seal_event(&mut ev, end);
    out.extend_from_slice(&ev);
    let list = Event::GtidList(GtidList {
        gtids: state.to_vec(),
        flags: 0,
    });
    let mut ev = encode_event(created, server_id, 0, 0, &list);
    let end = (out.len() + ev.len()) as u32;
    crate::event::seal_event(&mut ev, end);
    out.extend_from_slice(&ev);
    out
}

impl Binlog {
    /// Opens (recovering) or creates the binlog in `opts.dir` on the real file system.
    pub fn open(opts: BinlogOptions) -> Result<Binlog> {
        Binlog::open_with_fs(Arc::new(RealFs), opts)
    }

    /// Opens (recovering) or creates the binlog on a given file system. Recovery scans the
    /// last file, cuts off anything after the last complete group and rebuilds the GTID
    /// state; see [`Binlog::recovery_report`].
    pub fn open_with_fs(fs: Arc<dyn FileSystem>, opts: BinlogOptions) -> Result<Binlog> {
        opts.validate()?;
        recovery::open(fs, opts)
    }

    fn path(&self, no: u32) -> PathBuf {
        self.loc.path(no)
    }

    /// The file name of file number `no`.
    pub fn file_name(&self, no: u32) -> String {
        self.loc.name(no)
    }

    /// The file number of a file name (`None` if the name is not of this binlog).
    pub fn file_no(&self, name: &str) -> Option<u32> {
        let name = Path::new(name).file_name()?.to_str()?;
        self.opts.naming.parse(&self.opts.base_name, name)
    }

    pub fn options(&self) -> &BinlogOptions {
        &self.opts
    }

    pub fn dir(&self) -> &Path {
        &self.opts.dir
    }

    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.recovery
    }

    fn check_poison(&self) -> Result<()> {
        match &*self.poison.lock() {
            Some(why) => Err(BinlogError::Poisoned(why.clone())),
            None => Ok(()),
        }
    }

    /// Why the binlog refuses writes, if it does.
    pub fn poisoned(&self) -> Option<String> {
        self.poison.lock().clone()
    }

    fn set_poison(&self, why: String) {
        let mut p = self.poison.lock();
        if p.is_none() {
            *p = Some(why);
        }
    }

    /// Wraps an I/O failure of a write path: poisons the binlog (rule 4).
    fn fail(&self, op: &'static str, no: u32, e: std::io::Error) -> BinlogError {
        let name = self.file_name(no);
        self.set_poison(format!("{op} on binlog file {name} failed: {e}"));
        BinlogError::io(op, name, e)
    }

    /// Where the next file's space is reserved ahead of rotation (preallocated files only).
    fn reserved_path(&self, no: u32) -> PathBuf {
        self.opts.dir.join(format!(".{}.new", self.file_name(no)))
    }

    /// Creates and preallocates the next file under a temporary name. A failure (a full
    /// disk) removes it and does not poison the binlog: nothing of the log was touched.
    fn reserve_next(&self, inner: &Inner) -> Result<()> {
        if !self.opts.preallocates() {
            return Ok(());
        }
        let fs = &self.loc.fs;
        let tmp = self.reserved_path(inner.active.no + 1);
        if fs.exists(&tmp) {
            return Ok(());
        }
        let name = tmp.display().to_string();
        let r = fs
            .open(&tmp, OpenMode::CREATE)
            .and_then(|f| f.preallocate(self.opts.max_binlog_size));
        if let Err(e) = r {
            let _ = fs.remove(&tmp);
            return Err(BinlogError::io("fallocate", name, e));
        }
        Ok(())
    }

    /// Creates the file at `path` with its header (and preallocation), durably (rule 1).
    fn create_file(
        &self,
        path: &Path,
        state: &[Gtid],
        created: u32,
    ) -> Result<(Arc<dyn LogFile>, u64)> {
        let fs = &self.loc.fs;
        let wt = self.opts.sync_method == SyncMethod::WriteThrough;
        let name = path.display().to_string();
        // A file reserved by `reserve_next` is moved into place (the old file is already
        // complete and durable here, rule 2) and reused.
        let reserved = path
            .file_name()
            .map(|n| self.opts.dir.join(format!(".{}.new", n.to_string_lossy())))
            .filter(|r| self.opts.preallocates() && fs.exists(r));
        let mode = match &reserved {
            Some(r) if fs.rename(r, path).is_ok() => OpenMode::WRITE,
            _ => OpenMode::CREATE,
        };
        let file = fs
            .open(path, mode.write_through(wt))
            .map_err(|e| BinlogError::io("create", &name, e))?;
        let header = file_header(
            self.opts.server_id,
            &self.opts.server_version,
            created,
            state,
        );
        let wrap = |op, e| {
            self.set_poison(format!("{op} on new binlog file {name} failed: {e}"));
            BinlogError::io(op, &name, e)
        };
        file.write_at(&header, 0).map_err(|e| wrap("write", e))?;
        if self.opts.preallocates() {
            let max = self.opts.max_binlog_size;
            // ZeroFill also reserves the space here; zeros are written as the log grows.
            file.preallocate(max).map_err(|e| wrap("fallocate", e))?;
        }
        file.sync_data().map_err(|e| wrap("fdatasync", e))?;
        Ok((file, header.len() as u64))
    }

    fn sync_dir(&self) -> Result<()> {
        self.loc.fs.sync_dir(&self.opts.dir).map_err(|e| {
            self.set_poison(format!("fsync of binlog directory failed: {e}"));
            BinlogError::io("fsync", self.opts.dir.display(), e)
        })
    }

    /// Rewrites `<base>.index` (Classic style) atomically.
    fn write_index(&self, files: impl Iterator<Item = u32>) -> Result<()> {
        if self.opts.naming != Naming::Classic {
            return Ok(());
        }
        let fs = &self.loc.fs;
        let index = self.opts.dir.join(Naming::index_name(&self.opts.base_name));
        let tmp = self
            .opts
            .dir
            .join(format!("{}.tmp", Naming::index_name(&self.opts.base_name)));
        let mut text = String::new();
        for no in files {
            text.push_str(&format!("./{}\n", self.file_name(no)));
        }
        let name = index.display().to_string();
        let io = |op, e| BinlogError::io(op, &name, e);
        if fs.exists(&tmp) {
            fs.remove(&tmp).map_err(|e| io("remove", e))?;
        }
        let f = fs
            .open(&tmp, OpenMode::CREATE)
            .map_err(|e| io("create", e))?;
        f.write_at(text.as_bytes(), 0).map_err(|e| io("write", e))?;
        f.sync_data().map_err(|e| io("fdatasync", e))?;
        fs.rename(&tmp, &index).map_err(|e| io("rename", e))?;
        Ok(())
    }

    /// Appends closed event groups, in order: assigns each the next GTID of the server's
    /// domain (or its explicit GTID), places it, and writes every group with one write per
    /// file touched. Rotates first when a group would not fit the current file. Not
    /// durable until [`sync`](Self::sync) (unless write-through).
    ///
    /// If the next file's space cannot be reserved (a full disk), the call fails before
    /// writing anything and the binlog stays usable. On any other error the binlog is
    /// poisoned, and the groups of this call are in doubt: some may be in the log after
    /// recovery (e.g. written before a rotation that failed).
    pub fn append(&self, groups: &mut [EventGroup]) -> Result<AppendInfo> {
        self.append_impl(groups, None)
    }

    /// [`append`](Self::append), also handing back the bytes written: one `(start, bytes)`
    /// chunk per file touched, groups only (no ROTATE event; a rotation makes everything
    /// before it durable). The engine keeps unsynced chunks beside its data so that a
    /// memtable flush never persists changes whose log bytes a power loss could take.
    pub fn append_capture(&self, groups: &mut [EventGroup]) -> Result<(AppendInfo, Vec<Chunk>)> {
        let mut chunks = Vec::new();
        let info = self.append_impl(groups, Some(&mut chunks))?;
        Ok((info, chunks))
    }

    fn append_impl(
        &self,
        groups: &mut [EventGroup],
        mut capture: Option<&mut Vec<Chunk>>,
    ) -> Result<AppendInfo> {
        self.check_poison()?;
        for g in groups.iter() {
            if !g.is_closed() {
                return Err(BinlogError::InvalidArgument(
                    "appending an event group that was not committed".into(),
                ));
            }
            if g.finalized_len(true) as u64 > u32::MAX as u64 - 4096 {
                return Err(BinlogError::InvalidArgument(format!(
                    "event group of {} bytes exceeds the 4 GiB limit of a binlog file",
                    g.body_len()
                )));
            }
        }
        let mut inner = self.inner.lock();
        // A rotation this call may need: reserve the next file's space before anything is
        // written, so that a full disk fails the whole call cleanly (nothing written, the
        // binlog not poisoned) and appends work again once space is back.
        let total: u64 = groups.iter().map(|g| g.finalized_len(true) as u64).sum();
        let reserve = rotate_len(&self.file_name(inner.active.no + 1));
        if inner.active.end + total + reserve > self.opts.max_binlog_size
            && inner.active.end > inner.active.header_end
        {
            self.reserve_next(&inner)?;
        }
        // Groups committed together share a commit id (MariaDB's group commit id: the seq of
        // the first), which lets parallel replicas apply them concurrently.
        let first_seq = inner.state.next_seq(self.opts.domain_id);
        let commit_id = (groups.len() > 1).then_some(first_seq);
        let max = self.opts.max_binlog_size;
        // Small groups are gathered into one buffer and written with one write; a large
        // group is written straight from its own buffer (no copy, no allocation while the
        // log is locked: growing a buffer to tens of MiB cost more than the write itself).
        let mut buf: Vec<u8> = Vec::with_capacity(
            groups
                .iter()
                .map(|g| g.finalized_len(true))
                .filter(|&n| n < LARGE_GROUP)
                .sum(),
        );
        let mut buf_start = inner.active.end;
        let mut out = Vec::with_capacity(groups.len());
        for g in groups.iter_mut() {
            let gtid = match g.explicit_gtid() {
                Some(x) => x,
                None => Gtid::new(
                    self.opts.domain_id,
                    g.server_id(),
                    inner.state.next_seq(self.opts.domain_id),
                ),
            };
            let cid = commit_id
                .filter(|_| g.kind() == GroupKind::Transaction && g.explicit_gtid().is_none());
            let len = g.finalized_len(cid.is_some()) as u64;
            let at = buf_start + buf.len() as u64;
            let reserve = rotate_len(&self.file_name(inner.active.no + 1));
            if at + len + reserve > max && at > inner.active.header_end {
                // Rule 3: the group goes whole into the next file.
                self.write_locked(&mut inner, &buf, buf_start)?;
                if let Some(c) = capture.as_deref_mut() {
                    if !buf.is_empty() {
                        c.push((LogPos::new(inner.active.no, buf_start), buf.clone()));
                    }
                }
                buf.clear();
                self.rotate_locked(&mut inner)?;
                buf_start = inner.active.end;
            }
            let start = buf_start + buf.len() as u64;
            let end = if len as usize >= LARGE_GROUP {
                let end = g.finalize_in_place(gtid, cid, start, &mut buf)?;
                self.write_locked(&mut inner, &buf, buf_start)?;
                let body_at = inner.active.end;
                self.write_locked(&mut inner, g.body(), body_at)?;
                if let Some(c) = capture.as_deref_mut() {
                    let mut bytes = std::mem::take(&mut buf);
                    bytes.extend_from_slice(g.body());
                    c.push((LogPos::new(inner.active.no, buf_start), bytes));
                }
                buf.clear();
                buf_start = inner.active.end;
                end
            } else {
                g.finalize_into(gtid, cid, start, &mut buf)?
            };
            inner.state.record(gtid);
            let no = inner.active.no;
            out.push(AppendedGroup {
                gtid,
                start: LogPos::new(no, start),
                end: LogPos::new(no, end),
            });
        }
        self.write_locked(&mut inner, &buf, buf_start)?;
        if let Some(c) = capture {
            if !buf.is_empty() {
                c.push((LogPos::new(inner.active.no, buf_start), buf));
            }
        }
        self.counters.appends.fetch_add(1, Ordering::Relaxed);
        self.counters
            .groups
            .fetch_add(groups.len() as u64, Ordering::Relaxed);
        Ok(AppendInfo {
            groups: out,
            end: LogPos::new(inner.active.no, inner.active.end),
        })
    }

    /// ZeroFill: makes sure zeros are written (durably) ahead of `to` in the active file
    /// (see `runway.rs`).
    fn extend_runway(&self, inner: &Inner, to: u64) -> Result<()> {
        if !self.opts.zero_fills() {
            return Ok(());
        }
        let a = &inner.active;
        self.runway
            .ensure(&a.file, a.end, to, self.opts.max_binlog_size)
            .map_err(|e| self.fail("write", a.no, e))
    }

    fn write_locked(&self, inner: &mut Inner, buf: &[u8], at: u64) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        assert_eq!(at, inner.active.end, "binlog writes must be contiguous");
        self.extend_runway(inner, at + buf.len() as u64)?;
        let no = inner.active.no;
        // In pieces: one huge write makes the page cache allocate large folios for it, and
        // on this VM that took 330 ms for a 107 MB transaction (compaction, fresh pages);
        // 1 MiB writes took 33-43 ms (4 MiB: 140 ms), measured with `onelog bench big-txn`.
        let mut done = 0;
        while done < buf.len() {
            let n = (buf.len() - done).min(WRITE_PIECE);
            inner
                .active
                .file
                .write_at(&buf[done..done + n], at + done as u64)
                .map_err(|e| self.fail("write", no, e))?;
            done += n;
        }
        inner.active.end += buf.len() as u64;
        self.counters
            .bytes_written
            .fetch_add(buf.len() as u64, Ordering::Relaxed);
        if inner.active.file.is_write_through() {
            inner.synced = LogPos::new(no, inner.active.end);
            self.moved.notify_all();
        } else if self.followers.want_writes() {
            self.moved.notify_all();
        }
        Ok(())
    }

    /// Makes everything appended so far durable (fdatasync; nothing in write-through mode).
    /// Returns the durable end. A failed sync poisons the binlog (rule 4).
    pub fn sync(&self) -> Result<LogPos> {
        self.check_poison()?;
        let (file, pos) = {
            let inner = self.inner.lock();
            let end = LogPos::new(inner.active.no, inner.active.end);
            if inner.synced >= end {
                return Ok(end);
            }
            (inner.active.file.clone(), end)
        };
        // The lock is not held: appends proceed while the disk syncs.
        file.sync_data()
            .map_err(|e| self.fail("fdatasync", pos.file_no, e))?;
        self.counters.syncs.fetch_add(1, Ordering::Relaxed);
        let mut inner = self.inner.lock();
        if pos > inner.synced {
            inner.synced = pos;
            self.moved.notify_all();
        }
        Ok(pos)
    }

    /// fdatasync of the active file even when everything counts as synced: after a restart
    /// the recovered bytes may still be only in the page cache (a process crash).
    pub fn sync_active_file(&self) -> Result<()> {
        self.check_poison()?;
        let (file, no) = {
            let inner = self.inner.lock();
            (inner.active.file.clone(), inner.active.no)
        };
        file.sync_data()
            .map_err(|e| self.fail("fdatasync", no, e))?;
        self.counters.syncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// FLUSH BINARY LOGS: ends the current file with a ROTATE event, cuts it to its used
    /// size and starts the next file. Returns the new file's name.
    pub fn rotate(&self) -> Result<String> {
        self.check_poison()?;
        let mut inner = self.inner.lock();
        self.rotate_locked(&mut inner)?;
        Ok(self.file_name(inner.active.no))
    }

    fn rotate_locked(&self, inner: &mut Inner) -> Result<()> {
        let old = inner.active.no;
        let next = old + 1;
        let next_name = self.file_name(next);
        let ts = now();
        // Rule 2: the old file is complete and durable before the next one exists.
        let end = inner.active.end + rotate_len(&next_name);
        let rot = Event::Rotate(Rotate {
            position: 4,
            next_file: next_name,
        });
        let ev = encode_event(ts, self.opts.server_id, 0, end as u32, &rot);
        self.write_locked(inner, &ev, inner.active.end)?;
        let file = inner.active.file.clone();
        self.runway.retire();
        if self.opts.preallocates() || file.len().map_err(|e| self.fail("stat", old, e))? > end {
            file.set_len(end)
                .map_err(|e| self.fail("truncate", old, e))?;
        }
        file.sync_data()
            .map_err(|e| self.fail("fdatasync", old, e))?;
        self.counters.syncs.fetch_add(1, Ordering::Relaxed);
        if let Some(f) = inner.files.get_mut(&old) {
            f.size = end;
        }
        let state = inner.state.binlog_state();
        let (file, header_end) = self.create_file(&self.path(next), &state, ts)?;
        inner.files.insert(
            next,
            FileInfo {
                created: ts,
                start_state: state,
                size: header_end,
            },
        );
        self.write_index(inner.files.keys().copied())?;
        self.sync_dir()?;
        inner.active = Active {
            no: next,
            file,
            end: header_end,
            header_end,
        };
        inner.synced = LogPos::new(next, header_end);
        self.moved.notify_all();
        self.counters.rotations.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// The end of the log (where the next group goes).
    pub fn end_pos(&self) -> LogPos {
        let inner = self.inner.lock();
        LogPos::new(inner.active.no, inner.active.end)
    }

    /// Everything before this position is durable.
    pub fn synced_pos(&self) -> LogPos {
        self.inner.lock().synced
    }

    /// The active file's name.
    pub fn active_file(&self) -> String {
        self.file_name(self.inner.lock().active.no)
    }

    /// The GTID state after the last appended group.
    pub fn state(&self) -> GtidState {
        self.inner.lock().state.clone()
    }

    /// `@@gtid_binlog_pos`.
    pub fn gtid_binlog_pos(&self) -> String {
        format_gtid_list(&self.inner.lock().state.binlog_pos())
    }

    /// `@@gtid_binlog_state`.
    pub fn gtid_binlog_state(&self) -> String {
        format_gtid_list(&self.inner.lock().state.binlog_state())
    }

    pub fn stats(&self) -> BinlogStats {
        let c = &self.counters;
        BinlogStats {
            bytes_written: c.bytes_written.load(Ordering::Relaxed),
            syncs: c.syncs.load(Ordering::Relaxed),
            groups: c.groups.load(Ordering::Relaxed),
            appends: c.appends.load(Ordering::Relaxed),
            rotations: c.rotations.load(Ordering::Relaxed),
        }
    }

    /// Copies the first `len` bytes of file `no` into the new file `dst` (on the real file
    /// system) and syncs it. Those bytes must not change meanwhile: a completed file, or
    /// the durable part of the active one (appends only go further).
    pub fn copy_prefix(&self, no: u32, len: u64, dst: &Path) -> Result<()> {
        use std::io::Write;
        let src = self.path(no);
        let file = self
            .loc
            .fs
            .open(&src, OpenMode::READ)
            .map_err(|e| BinlogError::io("open", src.display(), e))?;
        let dst_err = |op, e| BinlogError::io(op, dst.display(), e);
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dst)
            .map_err(|e| dst_err("create", e))?;
        let mut buf = vec![0u8; WRITE_PIECE];
        let mut off = 0;
        while off < len {
            let want = (len - off).min(buf.len() as u64) as usize;
            let n = file
                .read_at(&mut buf[..want], off)
                .map_err(|e| BinlogError::io("read", src.display(), e))?;
            if n == 0 {
                return Err(BinlogError::Corrupt {
                    file: self.file_name(no),
                    offset: off,
                    reason: format!("file ends before {len}"),
                });
            }
            out.write_all(&buf[..n]).map_err(|e| dst_err("write", e))?;
            off += n as u64;
        }
        out.sync_all().map_err(|e| dst_err("fsync", e))?;
        Ok(())
    }

    /// `SHOW BINARY LOGS`: every file with its used size, oldest first.
    pub fn list_files(&self) -> Vec<(String, u64)> {
        let inner = self.inner.lock();
        inner
            .files
            .iter()
            .map(|(&no, f)| {
                let size = if no == inner.active.no {
                    inner.active.end
                } else {
                    f.size
                };
                (self.file_name(no), size)
            })
            .collect()
    }

    /// The GTID_LIST (state at start) of file `no`.
    pub fn file_start_state(&self, no: u32) -> Option<Vec<Gtid>> {
        self.inner
            .lock()
            .files
            .get(&no)
            .map(|f| f.start_state.clone())
    }

    /// PURGE BINARY LOGS TO 'name': removes the files before `name`, never the active file
    /// nor any file at or after `keep_from` (the oldest position still needed, e.g. for
    /// crash recovery of the engine or by a replica). Returns the removed names.
    pub fn purge_to(&self, name: &str, keep_from: Option<LogPos>) -> Result<Vec<String>> {
        let target = self
            .file_no(name)
            .ok_or_else(|| BinlogError::UnknownFile(name.to_string()))?;
        let mut inner = self.inner.lock();
        if !inner.files.contains_key(&target) {
            return Err(BinlogError::UnknownFile(name.to_string()));
        }
        let victims: Vec<u32> = inner.files.range(..target).map(|(&n, _)| n).collect();
        self.purge_locked(&mut inner, victims, keep_from)
    }

    /// PURGE BINARY LOGS BEFORE: removes the files whose last write happened before
    /// `unix_time` (a file was last written when the next one was started), with the same
    /// limits as [`purge_to`](Self::purge_to).
    pub fn purge_before(&self, unix_time: u32, keep_from: Option<LogPos>) -> Result<Vec<String>> {
        let mut inner = self.inner.lock();
        let nos: Vec<u32> = inner.files.keys().copied().collect();
        let victims = nos
            .windows(2)
            .take_while(|w| inner.files[&w[1]].created < unix_time)
            .map(|w| w[0])
            .collect();
        self.purge_locked(&mut inner, victims, keep_from)
    }

    fn purge_locked(
        &self,
        inner: &mut Inner,
        victims: Vec<u32>,
        keep_from: Option<LogPos>,
    ) -> Result<Vec<String>> {
        let limit = keep_from
            .map(|p| p.file_no)
            .unwrap_or(u32::MAX)
            .min(inner.active.no)
            .min(self.followers.oldest().unwrap_or(u32::MAX));
        let mut removed = Vec::new();
        // Oldest first, so that a crash midway leaves a contiguous set.
        for no in victims.into_iter().filter(|&n| n < limit) {
            let path = self.path(no);
            self.loc
                .fs
                .remove(&path)
                .map_err(|e| BinlogError::io("remove", path.display(), e))?;
            inner.files.remove(&no);
            removed.push(self.file_name(no));
        }
        if !removed.is_empty() {
            self.write_index(inner.files.keys().copied())?;
            self.sync_dir()?;
        }
        Ok(removed)
    }

    /// RESET MASTER: removes every file and starts again at the first file number with the
    /// GTID state `state` (empty by default). Atomic across crashes: the new first file is
    /// prepared under a temporary name, and its presence at open completes the reset.
    /// Returns the new end of the log.
    pub fn reset(&self, state: Option<&[Gtid]>) -> Result<LogPos> {
        self.check_poison()?;
        let mut inner = self.inner.lock();
        let state = GtidState::from_list(state.unwrap_or(&[]));
        let first = self.opts.naming.first_number();
        let tmp = self
            .opts
            .dir
            .join(self.opts.naming.reset_temp_name(&self.opts.base_name));
        let fs = &self.loc.fs;
        if fs.exists(&tmp) {
            fs.remove(&tmp)
                .map_err(|e| BinlogError::io("remove", tmp.display(), e))?;
        }
        let ts = now();
        let list = state.binlog_state();
        let (file, header_end) = self.create_file(&tmp, &list, ts)?;
        self.runway.retire();
        self.sync_dir()?; // decision point: from here on the reset completes even after a crash
        let nos: Vec<u32> = inner.files.keys().copied().collect();
        recovery::finish_reset(&self.loc, &tmp, &nos)?;
        inner.files.clear();
        inner.files.insert(
            first,
            FileInfo {
                created: ts,
                start_state: list,
                size: header_end,
            },
        );
        self.write_index(std::iter::once(first))?;
        self.sync_dir()?;
        inner.active = Active {
            no: first,
            file,
            end: header_end,
            header_end,
        };
        inner.state = state;
        inner.synced = LogPos::new(first, header_end);
        inner.generation += 1;
        self.moved.notify_all();
        Ok(LogPos::new(first, header_end))
    }

    fn location(&self) -> Location {
        self.loc.clone()
    }

    /// Events from `from` (offset 0 or 4 = start of that file) to the current end of the log.
    pub fn read_events(&self, from: LogPos) -> EventReader {
        EventReader::new(self.location(), from, self.end_pos())
    }

    /// Events from `from` to `limit`.
    pub fn read_events_until(&self, from: LogPos, limit: LogPos) -> EventReader {
        EventReader::new(self.location(), from, limit)
    }

    /// Complete event groups from `from` to the current end of the log.
    pub fn read_groups(&self, from: LogPos) -> GroupReader {
        GroupReader::new(self.read_events(from))
    }

    /// Where a reader at GTID position `pos` (`@@gtid_slave_pos`-style: last GTID per domain)
    /// must start: the start of the newest file whose starting GTID_LIST the position
    /// covers in every domain. Errors if the needed files were purged, or if the position
    /// is ahead of this binlog.
    pub fn find_gtid_start(&self, pos: &[Gtid]) -> Result<LogPos> {
        self.find_gtid_start_with(pos, false)
    }

    /// [`find_gtid_start`](Self::find_gtid_start); with `ignore_duplicates`
    /// (`@slave_gtid_ignore_duplicates`), a position ahead of the binlog's last GTID in its
    /// domain is accepted, as MariaDB does: the reader may have those transactions from
    /// another primary of a multi-path topology.
    pub fn find_gtid_start_with(&self, pos: &[Gtid], ignore_duplicates: bool) -> Result<LogPos> {
        let inner = self.inner.lock();
        for g in pos {
            // A domain this binlog never logged is fine; in a known domain the GTID must
            // be one this binlog has (MariaDB's texts).
            let Some(last) = inner.state.last_in_domain(g.domain) else {
                continue;
            };
            if ignore_duplicates && last.seq < g.seq {
                continue;
            }
            if inner
                .state
                .seq_of(g.domain, g.server)
                .is_none_or(|s| s < g.seq)
            {
                let mut msg = format!(
                    "Error: connecting slave requested to start from GTID {g}, which is not in \
                     the master's binlog"
                );
                if last.seq >= g.seq {
                    msg.push_str(
                        ". Since the master's binlog contains GTIDs with higher sequence \
                         numbers, it probably means that the slave has diverged due to \
                         executing extra erroneous transactions",
                    );
                }
                return Err(BinlogError::GtidNotFound(msg));
            }
        }
        for (&no, f) in inner.files.iter().rev() {
            let covered = f.start_state.iter().all(|s| {
                pos.iter()
                    .find(|g| g.domain == s.domain)
                    .is_some_and(|g| g.seq >= s.seq)
            });
            if covered {
                return Ok(LogPos::new(no, 0));
            }
        }
        Err(BinlogError::GtidNotFound(
            "Could not find GTID state requested by slave in any binlog files. Probably the \
             slave state is too old and required binlog files have been purged."
                .into(),
        ))
    }

    /// Groups after GTID position `pos`: from [`find_gtid_start`](Self::find_gtid_start),
    /// skipping the groups the position already includes.
    pub fn read_groups_after_gtid(&self, pos: &[Gtid]) -> Result<GroupReader> {
        let start = self.find_gtid_start(pos)?;
        let mut r = self.read_groups(start);
        r.skip_through(pos);
        Ok(r)
    }
}

#[cfg(test)]
mod tests;
