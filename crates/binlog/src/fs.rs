//! The file layer under the binlog: real files, or a simulated disk for power-loss tests.
//!
//! [`SimFs`] keeps every file's *written* bytes (what reads see) apart from its *durable*
//! bytes (what survives [`SimFs::crash`]); directory entries likewise become durable only at
//! `sync_dir`. It can tear the last unsynced write and inject I/O errors.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

/// How a file is opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenMode {
    pub write: bool,
    /// Create the file; fail if it exists.
    pub create_new: bool,
    /// O_DSYNC: every write is durable when it returns (no separate fdatasync needed).
    pub write_through: bool,
}

impl OpenMode {
    pub const READ: OpenMode = OpenMode {
        write: false,
        create_new: false,
        write_through: false,
    };
    pub const WRITE: OpenMode = OpenMode {
        write: true,
        create_new: false,
        write_through: false,
    };
    pub const CREATE: OpenMode = OpenMode {
        write: true,
        create_new: true,
        write_through: false,
    };

    pub fn write_through(mut self, on: bool) -> OpenMode {
        self.write_through = on;
        self
    }
}

/// One open file.
pub trait LogFile: Send + Sync {
    /// Writes all of `buf` at `offset`, extending the file if needed.
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Reads up to `buf.len()` bytes at `offset`; fewer only at end of file.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    fn len(&self) -> io::Result<u64>;
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Truncates or extends (with zeros) to `len`.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Reserves space so the file is at least `len` bytes (fallocate; new bytes read as 0).
    fn preallocate(&self, len: u64) -> io::Result<()>;
    /// fdatasync: makes the data and the size durable.
    fn sync_data(&self) -> io::Result<()>;
    /// Whether writes are durable when they return (opened with O_DSYNC).
    fn is_write_through(&self) -> bool;
    /// Writes zeros over `[from, to)` (not made durable). One page per write: the page
    /// cache sizes its folios by the writes that create them, and a commit's small write
    /// into a 1 MiB folio makes fdatasync write back the whole MiB (measured: 1024 KiB per
    /// 246-byte commit after 1 MiB zero writes, 4 KiB after 4 KiB writes, on this ext4).
    fn write_zeros(&self, from: u64, to: u64) -> io::Result<()> {
        zero_pages(self, from, to)
    }
}

/// A directory tree of files.
pub trait FileSystem: Send + Sync {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn LogFile>>;
    fn remove(&self, path: &Path) -> io::Result<()>;
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Names of the files directly in `dir`.
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>>;
    fn exists(&self, path: &Path) -> bool;
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// fsync of the directory: makes creations, renames and removals in it durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;

    /// Reads a whole (small) file.
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        let f = self.open(path, OpenMode::READ)?;
        let mut buf = vec![0u8; f.len()? as usize];
        let n = f.read_at(&mut buf, 0)?;
        buf.truncate(n);
        Ok(buf)
    }
}

/// The real file system (std + libc).
#[derive(Clone, Copy, Debug, Default)]
pub struct RealFs;

struct RealFile {
    file: std::fs::File,
    write_through: bool,
    /// The same file opened again with O_DIRECT, for `write_zeros` (None: not supported
    /// here, e.g. tmpfs; opened on first use).
    direct: std::sync::OnceLock<Option<std::fs::File>>,
}

/// Bytes of zeros per O_DIRECT write in `RealFile::write_zeros`.
const DIRECT_PIECE: usize = 1 << 20;

/// Zeros aligned as O_DIRECT wants the memory (a static: no allocation per write).
#[repr(align(4096))]
struct AlignedZeros([u8; DIRECT_PIECE]);
static DIRECT_ZEROS: AlignedZeros = AlignedZeros([0; DIRECT_PIECE]);

impl RealFile {
    fn direct(&self) -> Option<&std::fs::File> {
        self.direct
            .get_or_init(|| {
                // Reopening through /proc gives a second open file of the same inode with
                // its own flags; the commits' descriptor stays buffered.
                let path = format!("/proc/self/fd/{}", self.file.as_raw_fd());
                OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_DIRECT)
                    .open(path)
                    .ok()
            })
            .as_ref()
    }
}

impl LogFile for RealFile {
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.file.write_all_at(buf, offset)
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }

    fn preallocate(&self, len: u64) -> io::Result<()> {
        if len <= self.len()? {
            return Ok(());
        }
        // SAFETY: fallocate on a file descriptor we own; no memory is passed.
        let r = unsafe { libc::fallocate(self.file.as_raw_fd(), 0, 0, len as libc::off_t) };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            // File systems without fallocate: extend the size instead.
            Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => self.file.set_len(len),
            _ => Err(e),
        }
    }

    fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn is_write_through(&self) -> bool {
        self.write_through
    }

    /// The page-aligned middle of the range goes through O_DIRECT where the file system
    /// takes it: written zeros that never sit dirty in the page cache, so an fdatasync of
    /// commits running meanwhile does not write them out (nor the extent conversion they
    /// cause) on the commits' time. The unaligned ends, and everything on file systems
    /// without O_DIRECT, are written in pages as usual.
    fn write_zeros(&self, from: u64, to: u64) -> io::Result<()> {
        let start = from.div_ceil(4096) * 4096;
        let stop = to & !4095;
        let Some(direct) = self.direct().filter(|_| start < stop) else {
            return zero_pages(self, from, to);
        };
        zero_pages(self, from, start)?;
        let zeros = &DIRECT_ZEROS.0;
        let mut off = start;
        while off < stop {
            let n = (stop - off).min(DIRECT_PIECE as u64) as usize;
            if let Err(e) = direct.write_all_at(&zeros[..n], off) {
                if e.raw_os_error() != Some(libc::EINVAL) {
                    return Err(e);
                }
                // O_DIRECT refused after all (alignment rules of this device): in pages.
                zero_pages(self, off, stop)?;
                break;
            }
            off += n as u64;
        }
        zero_pages(self, stop.max(start), to)
    }
}

/// `LogFile::write_zeros`' default (one page per write), for any file.
fn zero_pages<F: LogFile + ?Sized>(f: &F, from: u64, to: u64) -> io::Result<()> {
    let zeros = [0u8; 4096];
    let mut off = from;
    while off < to {
        let n = (to - off).min(zeros.len() as u64) as usize;
        f.write_at(&zeros[..n], off)?;
        off += n as u64;
    }
    Ok(())
}

impl FileSystem for RealFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn LogFile>> {
        let mut o = OpenOptions::new();
        o.read(true).write(mode.write);
        if mode.create_new {
            o.create_new(true);
        }
        if mode.write_through {
            o.custom_flags(libc::O_DSYNC);
        }
        Ok(Arc::new(RealFile {
            file: o.open(path)?,
            write_through: mode.write_through,
            direct: std::sync::OnceLock::new(),
        }))
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut v = Vec::new();
        for e in std::fs::read_dir(dir)? {
            let e = e?;
            if e.file_type()?.is_file() {
                v.push(e.file_name().to_string_lossy().into_owned());
            }
        }
        v.sort();
        Ok(v)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        std::fs::File::open(dir)?.sync_all()
    }
}

// ---------------------------------------------------------------------------------------
// Simulated disk.

#[derive(Default)]
struct Inode {
    written: Vec<u8>,
    durable: Vec<u8>,
}

struct PendingWrite {
    ino: u64,
    offset: u64,
    data: Vec<u8>,
}

#[derive(Default)]
struct SimState {
    inodes: HashMap<u64, Inode>,
    next_ino: u64,
    names: BTreeMap<PathBuf, u64>,
    durable_names: BTreeMap<PathBuf, u64>,
    dirs: BTreeSet<PathBuf>,
    /// Writes not yet made durable, in order.
    pending: Vec<PendingWrite>,
    /// Bumped by `crash`: handles from before are dead.
    generation: u64,
    syncs: u64,
    writes: u64,
    fail_sync_at: Option<u64>,
    fail_write_at: Option<u64>,
    disk_full: bool,
    /// While set, `sync_data` waits (see `SimFs::hold_syncs`).
    hold_syncs: bool,
    /// Added to every `sync_data` (a slow disk).
    sync_delay: std::time::Duration,
    /// `sync_data` calls waiting for `hold_syncs` to clear.
    held_syncs: u64,
    rng: u64,
}

impl SimState {
    fn rand(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn apply(buf: &mut Vec<u8>, offset: u64, data: &[u8]) {
        let end = offset as usize + data.len();
        if buf.len() < end {
            buf.resize(end, 0);
        }
        buf[offset as usize..end].copy_from_slice(data);
    }
}

/// An in-memory disk that loses what was not synced when it "loses power".
#[derive(Clone)]
pub struct SimFs {
    st: Arc<Mutex<SimState>>,
}

impl Default for SimFs {
    fn default() -> Self {
        SimFs::with_seed(0x5eed)
    }
}

struct SimFile {
    st: Arc<Mutex<SimState>>,
    ino: u64,
    generation: u64,
    write_through: bool,
}

fn err(kind: io::ErrorKind, msg: &str) -> io::Error {
    io::Error::new(kind, msg.to_string())
}

fn enospc() -> io::Error {
    io::Error::from_raw_os_error(libc::ENOSPC)
}

impl SimFs {
    pub fn new() -> SimFs {
        SimFs::default()
    }

    /// A simulated disk whose random choices (torn-write lengths) follow `seed`.
    pub fn with_seed(seed: u64) -> SimFs {
        SimFs {
            st: Arc::new(Mutex::new(SimState {
                rng: seed | 1,
                next_ino: 1,
                ..SimState::default()
            })),
        }
    }

    /// Power loss: every file goes back to its durable bytes, the directory to its synced
    /// entries; open handles stop working; injected faults not yet fired are cleared.
    pub fn crash(&self) {
        let mut st = self.st.lock();
        st.generation += 1;
        st.fail_sync_at = None;
        st.fail_write_at = None;
        st.disk_full = false;
        st.pending.clear();
        st.names = st.durable_names.clone();
        let live: BTreeSet<u64> = st.names.values().copied().collect();
        st.inodes.retain(|ino, _| live.contains(ino));
        for inode in st.inodes.values_mut() {
            inode.written = inode.durable.clone();
        }
    }

    /// Makes a random prefix (possibly empty or whole) of the last unsynced write durable,
    /// as a power loss in the middle of that write would. Returns the bytes kept.
    pub fn tear_last_write(&self) -> Option<usize> {
        let mut st = self.st.lock();
        let w = st.pending.pop()?;
        let keep = (st.rand() % (w.data.len() as u64 + 1)) as usize;
        if let Some(inode) = st.inodes.get_mut(&w.ino) {
            SimState::apply(&mut inode.durable, w.offset, &w.data[..keep]);
        }
        Some(keep)
    }

    /// Makes a random number of the oldest unsynced writes durable, in order, then tears
    /// the next one: a power loss while the disk was writing back. Returns how many writes
    /// were kept whole.
    pub fn persist_random_prefix_of_pending(&self) -> usize {
        let mut st = self.st.lock();
        let n = st.pending.len();
        let whole = (st.rand() % (n as u64 + 1)) as usize;
        let pending = std::mem::take(&mut st.pending);
        for (i, w) in pending.into_iter().enumerate() {
            let keep = if i < whole {
                w.data.len()
            } else if i == whole {
                (st.rand() % (w.data.len() as u64 + 1)) as usize
            } else {
                break;
            };
            if let Some(inode) = st.inodes.get_mut(&w.ino) {
                SimState::apply(&mut inode.durable, w.offset, &w.data[..keep]);
            }
        }
        whole
    }

    /// Overwrites durable (and written) bytes of a file: garbage for recovery tests.
    pub fn scribble(&self, path: &Path, offset: u64, data: &[u8]) {
        let mut st = self.st.lock();
        if let Some(&ino) = st.names.get(path) {
            let inode = st.inodes.get_mut(&ino).unwrap();
            SimState::apply(&mut inode.durable, offset, data);
            SimState::apply(&mut inode.written, offset, data);
        }
    }

    /// The `n`-th `sync_data` from now (1 = the next) fails with EIO.
    pub fn fail_nth_sync(&self, n: u64) {
        let mut st = self.st.lock();
        st.fail_sync_at = Some(st.syncs + n);
    }

    /// The `n`-th `write_at` from now (1 = the next) fails with EIO.
    pub fn fail_nth_write(&self, n: u64) {
        let mut st = self.st.lock();
        st.fail_write_at = Some(st.writes + n);
    }

    /// While set, writes that would allocate space fail with ENOSPC.
    pub fn set_disk_full(&self, full: bool) {
        self.st.lock().disk_full = full;
    }

    /// While set, `sync_data` calls wait (a slow disk held still), until cleared.
    pub fn hold_syncs(&self, hold: bool) {
        self.st.lock().hold_syncs = hold;
    }

    /// Every `sync_data` from now takes `delay` longer (a slow disk).
    pub fn set_sync_delay(&self, delay: std::time::Duration) {
        self.st.lock().sync_delay = delay;
    }

    /// `sync_data` calls waiting because of `hold_syncs`.
    pub fn held_syncs(&self) -> u64 {
        self.st.lock().held_syncs
    }

    /// `sync_data` calls so far.
    pub fn sync_count(&self) -> u64 {
        self.st.lock().syncs
    }

    /// `write_at` calls so far.
    pub fn write_count(&self) -> u64 {
        self.st.lock().writes
    }

    /// The durable bytes of a file, if its name is durable.
    pub fn durable_contents(&self, path: &Path) -> Option<Vec<u8>> {
        let st = self.st.lock();
        let ino = st.durable_names.get(path)?;
        st.inodes.get(ino).map(|i| i.durable.clone())
    }
}

impl SimFile {
    fn check(&self, st: &SimState) -> io::Result<()> {
        if st.generation != self.generation {
            return Err(err(
                io::ErrorKind::Other,
                "stale handle after simulated crash",
            ));
        }
        Ok(())
    }
}

impl LogFile for SimFile {
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut st = self.st.lock();
        self.check(&st)?;
        st.writes += 1;
        if st.fail_write_at == Some(st.writes) {
            st.fail_write_at = None;
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        let full = st.disk_full;
        let inode = st.inodes.get_mut(&self.ino).unwrap();
        if full && offset + buf.len() as u64 > inode.written.len() as u64 {
            return Err(enospc());
        }
        SimState::apply(&mut inode.written, offset, buf);
        if self.write_through {
            SimState::apply(&mut inode.durable, offset, buf);
        } else {
            st.pending.push(PendingWrite {
                ino: self.ino,
                offset,
                data: buf.to_vec(),
            });
        }
        Ok(())
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let st = self.st.lock();
        self.check(&st)?;
        let data = &st.inodes[&self.ino].written;
        if offset as usize >= data.len() {
            return Ok(0);
        }
        let n = buf.len().min(data.len() - offset as usize);
        buf[..n].copy_from_slice(&data[offset as usize..offset as usize + n]);
        Ok(n)
    }

    fn len(&self) -> io::Result<u64> {
        let st = self.st.lock();
        self.check(&st)?;
        Ok(st.inodes[&self.ino].written.len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut st = self.st.lock();
        self.check(&st)?;
        let full = st.disk_full;
        let inode = st.inodes.get_mut(&self.ino).unwrap();
        if full && len > inode.written.len() as u64 {
            return Err(enospc());
        }
        inode.written.resize(len as usize, 0);
        // A size change is durable at the next sync (fdatasync commits the size); pending
        // writes beyond the new end are gone.
        let ino = self.ino;
        st.pending.retain(|w| w.ino != ino || w.offset < len);
        for w in st.pending.iter_mut().filter(|w| w.ino == ino) {
            let keep = (len - w.offset).min(w.data.len() as u64) as usize;
            w.data.truncate(keep);
        }
        Ok(())
    }

    fn preallocate(&self, len: u64) -> io::Result<()> {
        let mut st = self.st.lock();
        self.check(&st)?;
        let full = st.disk_full;
        let inode = st.inodes.get_mut(&self.ino).unwrap();
        if (inode.written.len() as u64) < len {
            if full {
                return Err(enospc());
            }
            inode.written.resize(len as usize, 0);
        }
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut st = self.st.lock();
        if !st.sync_delay.is_zero() {
            let d = st.sync_delay;
            drop(st);
            std::thread::sleep(d);
            st = self.st.lock();
        }
        if st.hold_syncs {
            st.held_syncs += 1;
            while st.hold_syncs {
                drop(st);
                std::thread::sleep(std::time::Duration::from_millis(1));
                st = self.st.lock();
            }
            st.held_syncs -= 1;
        }
        self.check(&st)?;
        st.syncs += 1;
        if st.fail_sync_at == Some(st.syncs) {
            st.fail_sync_at = None;
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        let ino = self.ino;
        st.pending.retain(|w| w.ino != ino);
        let inode = st.inodes.get_mut(&ino).unwrap();
        inode.durable = inode.written.clone();
        Ok(())
    }

    fn is_write_through(&self) -> bool {
        self.write_through
    }
}

impl FileSystem for SimFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn LogFile>> {
        let mut st = self.st.lock();
        let ino = match st.names.get(path) {
            Some(_) if mode.create_new => {
                return Err(err(io::ErrorKind::AlreadyExists, "file exists"))
            }
            Some(&ino) => ino,
            None if mode.create_new => {
                let parent = path.parent().unwrap_or(Path::new("")).to_path_buf();
                if !st.dirs.contains(&parent) {
                    return Err(err(io::ErrorKind::NotFound, "no such directory"));
                }
                let ino = st.next_ino;
                st.next_ino += 1;
                st.inodes.insert(ino, Inode::default());
                st.names.insert(path.to_path_buf(), ino);
                ino
            }
            None => return Err(err(io::ErrorKind::NotFound, "no such file")),
        };
        Ok(Arc::new(SimFile {
            st: self.st.clone(),
            ino,
            generation: st.generation,
            write_through: mode.write_through,
        }))
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut st = self.st.lock();
        st.names
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| err(io::ErrorKind::NotFound, "no such file"))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = self.st.lock();
        let ino = st
            .names
            .remove(from)
            .ok_or_else(|| err(io::ErrorKind::NotFound, "no such file"))?;
        st.names.insert(to.to_path_buf(), ino);
        Ok(())
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let st = self.st.lock();
        if !st.dirs.contains(dir) {
            return Err(err(io::ErrorKind::NotFound, "no such directory"));
        }
        Ok(st
            .names
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect())
    }

    fn exists(&self, path: &Path) -> bool {
        let st = self.st.lock();
        st.names.contains_key(path) || st.dirs.contains(path)
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut st = self.st.lock();
        let mut p = Some(dir);
        while let Some(d) = p {
            st.dirs.insert(d.to_path_buf());
            p = d.parent();
        }
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut st = self.st.lock();
        let in_dir = |p: &PathBuf| p.parent() == Some(dir);
        let now: Vec<(PathBuf, u64)> = st
            .names
            .iter()
            .filter(|(p, _)| in_dir(p))
            .map(|(p, &i)| (p.clone(), i))
            .collect();
        st.durable_names.retain(|p, _| !in_dir(p));
        st.durable_names.extend(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sim_crash_keeps_only_synced_state() {
        let fs = SimFs::new();
        let dir = Path::new("/d");
        fs.create_dir_all(dir).unwrap();
        let a = dir.join("a");
        let f = fs.open(&a, OpenMode::CREATE).unwrap();
        f.write_at(b"hello", 0).unwrap();
        f.sync_data().unwrap();
        // Not in the directory durably yet.
        fs.crash();
        assert!(!fs.exists(&a));
        assert!(f.write_at(b"x", 0).is_err(), "stale handle");

        let f = fs.open(&a, OpenMode::CREATE).unwrap();
        f.write_at(b"hello", 0).unwrap();
        f.sync_data().unwrap();
        fs.sync_dir(dir).unwrap();
        f.write_at(b" world", 5).unwrap();
        assert_eq!(fs.read_all(&a).unwrap(), b"hello world");
        fs.crash();
        assert_eq!(fs.read_all(&a).unwrap(), b"hello");

        // Torn write keeps a prefix.
        let f = fs.open(&a, OpenMode::WRITE).unwrap();
        f.write_at(b" world", 5).unwrap();
        let kept = fs.tear_last_write().unwrap();
        fs.crash();
        assert_eq!(
            fs.read_all(&a).unwrap(),
            b"hello world"[..5 + kept].to_vec()
        );

        // Renames and removals need sync_dir too.
        fs.rename(&a, &dir.join("b")).unwrap();
        fs.crash();
        assert!(fs.exists(&a));
        fs.remove(&a).unwrap();
        fs.sync_dir(dir).unwrap();
        fs.crash();
        assert!(!fs.exists(&a));
    }

    #[test]
    fn sim_write_through_and_faults() {
        let fs = SimFs::new();
        let dir = Path::new("/d");
        fs.create_dir_all(dir).unwrap();
        let p = dir.join("f");
        let f = fs.open(&p, OpenMode::CREATE.write_through(true)).unwrap();
        fs.sync_dir(dir).unwrap();
        f.write_at(b"abc", 0).unwrap();
        fs.crash();
        assert_eq!(fs.read_all(&p).unwrap(), b"abc");

        let f = fs.open(&p, OpenMode::WRITE).unwrap();
        fs.fail_nth_sync(2);
        f.sync_data().unwrap();
        assert!(f.sync_data().is_err());
        f.sync_data().unwrap();
        fs.fail_nth_write(1);
        assert!(f.write_at(b"x", 0).is_err());
        f.write_at(b"x", 0).unwrap();
        fs.set_disk_full(true);
        assert_eq!(
            f.write_at(b"long", 2).unwrap_err().raw_os_error(),
            Some(libc::ENOSPC)
        );
        f.write_at(b"y", 1).unwrap(); // no new space
        assert!(f.preallocate(100).is_err());
        fs.set_disk_full(false);
        f.preallocate(100).unwrap();
        assert_eq!(f.len().unwrap(), 100);
    }

    #[test]
    fn real_fs_write_zeros_covers_unaligned_ends() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let f = RealFs.open(&p, OpenMode::CREATE).unwrap();
        let len = 3 << 20;
        f.write_at(&vec![0xffu8; len], 0).unwrap();
        // Through O_DIRECT where the file system takes it, in pages around it.
        let (from, to) = (100u64, (2 << 20) + 4096 * 3 + 5);
        f.write_zeros(from, to).unwrap();
        // Reads through the buffered descriptor see the zeros (no stale cached pages).
        let mut back = vec![0u8; len];
        assert_eq!(f.read_at(&mut back, 0).unwrap(), len);
        for (i, &b) in back.iter().enumerate() {
            let want = if (from..to).contains(&(i as u64)) {
                0
            } else {
                0xff
            };
            assert_eq!(b, want, "byte {i}");
        }
        // Only in pages, and an empty range.
        f.write_zeros(10, 20).unwrap();
        f.write_zeros(30, 30).unwrap();
        f.read_at(&mut back[..64], 0).unwrap();
        assert_eq!(&back[..10], &[0xff; 10]);
        assert_eq!(&back[10..20], &[0; 10]);
    }

    #[test]
    fn real_fs_basics() {
        let dir = tempfile::tempdir().unwrap();
        let fs = RealFs;
        let p = dir.path().join("f");
        let f = fs.open(&p, OpenMode::CREATE.write_through(true)).unwrap();
        f.preallocate(1 << 16).unwrap();
        assert_eq!(f.len().unwrap(), 1 << 16);
        f.write_at(b"abc", 10).unwrap();
        f.sync_data().unwrap();
        let mut b = [0u8; 3];
        assert_eq!(f.read_at(&mut b, 10).unwrap(), 3);
        assert_eq!(&b, b"abc");
        f.set_len(13).unwrap();
        fs.sync_dir(dir.path()).unwrap();
        assert_eq!(fs.list_dir(dir.path()).unwrap(), vec!["f".to_string()]);
        assert!(fs.open(&p, OpenMode::CREATE).is_err());
        fs.rename(&p, &dir.path().join("g")).unwrap();
        assert!(!fs.exists(&p));
        fs.remove(&dir.path().join("g")).unwrap();
    }
}
