//! Opening the binlog: find the files, check their headers, scan the last file and cut it
//! after its last complete group, rebuild the GTID state.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use super::naming::Naming;
use super::reader::{read_header, Feed, FileCursor, FileHeader, GroupScanner, Location, Outcome};
use super::{now, Active, Binlog, BinlogOptions, Counters, FileInfo, Inner, LogPos, Preallocate};
use crate::error::{BinlogError, Result};
use crate::event::Event;
use crate::fs::{FileSystem, LogFile, OpenMode};
use crate::gtid::{Gtid, GtidState};

/// What `Binlog::open` found and repaired.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// The binlog did not exist and was created.
    pub created: bool,
    /// The file the log continues in.
    pub active_file: String,
    /// The end of the log after recovery.
    pub end: LogPos,
    /// Complete groups found in the scanned (last) file.
    pub groups_scanned: u64,
    /// Bytes after the end that held data (torn events, an unfinished group, garbage) and
    /// were cut off or zeroed.
    pub truncated_bytes: u64,
    /// Why the scan stopped before the end of the file, if it did.
    pub stop_reason: Option<String>,
    /// The GTID of an unfinished group that was discarded.
    pub discarded_group: Option<Gtid>,
    /// Files removed: a last file whose header never became durable, leftovers of RESET.
    pub removed_files: Vec<String>,
    /// Whether an interrupted RESET MASTER was completed.
    pub completed_reset: bool,
}

fn io_err<'a>(op: &'static str, path: &'a Path) -> impl Fn(std::io::Error) -> BinlogError + 'a {
    move |e| BinlogError::io(op, path.display(), e)
}

/// Removes every numbered file and renames the prepared reset file to the first name.
pub(super) fn finish_reset(loc: &Location, tmp: &Path, nos: &[u32]) -> Result<()> {
    let fs = &loc.fs;
    for &no in nos.iter().rev() {
        let p = loc.path(no);
        if fs.exists(&p) {
            fs.remove(&p).map_err(io_err("remove", &p))?;
        }
    }
    let first = loc.path(loc.naming.first_number());
    fs.rename(tmp, &first).map_err(io_err("rename", tmp))?;
    fs.sync_dir(&loc.dir).map_err(io_err("fsync", &loc.dir))?;
    Ok(())
}

fn numbered_files(fs: &dyn FileSystem, opts: &BinlogOptions) -> Result<Vec<u32>> {
    let mut nos: Vec<u32> = fs
        .list_dir(&opts.dir)
        .map_err(io_err("list", &opts.dir))?
        .iter()
        .filter_map(|n| opts.naming.parse(&opts.base_name, n))
        .collect();
    nos.sort_unstable();
    Ok(nos)
}

/// The result of scanning the last file.
struct Scan {
    /// End of the last complete group (or of the header / a non-group event).
    end: u64,
    state: GtidState,
    ended_with_rotate: bool,
    groups: u64,
    stop_reason: Option<String>,
    discarded: Option<Gtid>,
}

fn scan_file(cur: &mut FileCursor, header_end: u64, start: &[Gtid], path: &Path) -> Result<Scan> {
    let mut scan = Scan {
        end: header_end,
        state: GtidState::from_list(start),
        ended_with_rotate: false,
        groups: 0,
        stop_reason: None,
        discarded: None,
    };
    let mut scanner = GroupScanner::default();
    let mut off = header_end;
    loop {
        match cur.event_at(off, true).map_err(io_err("read", path))? {
            Outcome::End => break,
            Outcome::Invalid(r) => {
                scan.stop_reason = Some(r);
                break;
            }
            Outcome::Event(h, ev, _) => {
                let next = h.log_pos as u64;
                match scanner.feed(&h, &ev) {
                    Feed::Inside => {}
                    Feed::Outside => {
                        match ev {
                            Event::FormatDescription(_) | Event::GtidList(_) => {
                                scan.stop_reason =
                                    Some(format!("unexpected {} event", ev.type_name()));
                                break;
                            }
                            Event::Rotate(_) => scan.ended_with_rotate = true,
                            _ => {}
                        }
                        scan.end = next;
                        if scan.ended_with_rotate {
                            break;
                        }
                    }
                    Feed::Complete(g) => {
                        scan.state.record(g);
                        scan.groups += 1;
                        scan.end = next;
                    }
                    Feed::Error(r) => {
                        scan.stop_reason = Some(r);
                        break;
                    }
                }
                off = next;
            }
        }
    }
    scan.discarded = scanner.open_group();
    if scanner.unfinished() && scan.stop_reason.is_none() {
        scan.stop_reason = Some("unfinished event group at the end".into());
    }
    Ok(scan)
}

/// Where non-zero bytes end after `from`: scans until 1 MiB of zeros or the end of the file.
fn data_high_water(file: &dyn LogFile, from: u64, len: u64, path: &Path) -> Result<u64> {
    const CHUNK: usize = 64 * 1024;
    let mut buf = vec![0u8; CHUNK];
    let mut off = from;
    let mut high = from;
    while off < len && off - high < (1 << 20) {
        let n = file.read_at(&mut buf, off).map_err(io_err("read", path))?;
        if n == 0 {
            break;
        }
        if let Some(i) = buf[..n].iter().rposition(|&b| b != 0) {
            high = off + i as u64 + 1;
        }
        off += n as u64;
    }
    Ok(high)
}

pub(super) fn open(fs: Arc<dyn FileSystem>, opts: BinlogOptions) -> Result<Binlog> {
    fs.create_dir_all(&opts.dir)
        .map_err(io_err("create directory", &opts.dir))?;
    let loc = Location {
        fs: fs.clone(),
        dir: opts.dir.clone(),
        naming: opts.naming,
        base: opts.base_name.clone(),
    };
    let mut report = RecoveryReport::default();
    let wt = opts.sync_method == super::SyncMethod::WriteThrough;

    finish_interrupted_reset(&fs, &loc, &opts, &mut report)?;

    let (nos, mut files, headers) = read_headers(&fs, &loc, &opts, &mut report)?;

    let mut binlog = unopened(&loc, &opts);

    let Some(&last) = nos.last() else {
        return create_first(binlog, &loc, &opts, report);
    };

    // Scan the last file.
    let path = loc.path(last);
    let file = fs
        .open(&path, OpenMode::WRITE.write_through(wt))
        .map_err(io_err("open", &path))?;
    let len = file.len().map_err(io_err("stat", &path))?;
    let header = headers[&last].clone();
    let mut cur = FileCursor::new(file.clone(), u64::MAX).map_err(io_err("stat", &path))?;
    let scan = scan_file(&mut cur, header.end, &header.start_state, &path)?;
    report.groups_scanned = scan.groups;
    report.stop_reason = scan.stop_reason.clone();
    report.discarded_group = scan.discarded;

    cut_tail(&file, &scan, len, &opts, &path, &mut report)?;
    // What recovery accepts must be durable before anyone acts on it: after a process
    // crash (no power loss) the bytes may still be only in the page cache.
    file.sync_data().map_err(io_err("fdatasync", &path))?;

    files.get_mut(&last).unwrap().size = scan.end;
    {
        let inner = binlog.inner.get_mut();
        inner.files = files;
        inner.state = scan.state;
        inner.active = Active {
            no: last,
            file,
            end: scan.end,
            header_end: header.end,
        };
        inner.synced = LogPos::new(last, scan.end);
    }
    if scan.ended_with_rotate {
        // Crashed between finishing a file and creating the next (rule 2): create it now.
        let mut inner = binlog.inner.lock();
        let next = last + 1;
        let state = inner.state.binlog_state();
        let ts = now();
        let (file, header_end) = binlog.create_file(&loc.path(next), &state, ts)?;
        inner.files.insert(
            next,
            FileInfo {
                created: ts,
                start_state: state,
                size: header_end,
            },
        );
        binlog.write_index(inner.files.keys().copied())?;
        binlog.sync_dir()?;
        inner.active = Active {
            no: next,
            file,
            end: header_end,
            header_end,
        };
        inner.synced = LogPos::new(next, header_end);
    } else if opts.naming == Naming::Classic && !report.removed_files.is_empty() {
        let inner = binlog.inner.lock();
        binlog.write_index(inner.files.keys().copied())?;
    }
    {
        let inner = binlog.inner.lock();
        report.active_file = loc.name(inner.active.no);
        report.end = LogPos::new(inner.active.no, inner.active.end);
    }
    binlog.recovery = report;
    Ok(binlog)
}

/// An interrupted RESET MASTER: completes it if its new first file is whole, else drops
/// that file.
fn finish_interrupted_reset(
    fs: &Arc<dyn FileSystem>,
    loc: &Location,
    opts: &BinlogOptions,
    report: &mut RecoveryReport,
) -> Result<()> {
    let tmp = opts.dir.join(opts.naming.reset_temp_name(&opts.base_name));
    if fs.exists(&tmp) {
        let f = fs
            .open(&tmp, OpenMode::READ)
            .map_err(io_err("open", &tmp))?;
        let mut c = FileCursor::new(f, u64::MAX).map_err(io_err("stat", &tmp))?;
        let valid = read_header(&mut c).map_err(io_err("read", &tmp))?.is_ok();
        if valid {
            let nos = numbered_files(fs.as_ref(), opts)?;
            finish_reset(loc, &tmp, &nos)?;
            report.completed_reset = true;
        } else {
            fs.remove(&tmp).map_err(io_err("remove", &tmp))?;
            fs.sync_dir(&opts.dir).map_err(io_err("fsync", &opts.dir))?;
            report.removed_files.push(tmp.display().to_string());
        }
    }
    Ok(())
}

/// The numbers of the binlog files (checked for gaps), their headers, and the sizes of all
/// but the last; a last file without a durable header is removed (rule 1).
#[allow(clippy::type_complexity)]
fn read_headers(
    fs: &Arc<dyn FileSystem>,
    loc: &Location,
    opts: &BinlogOptions,
    report: &mut RecoveryReport,
) -> Result<(Vec<u32>, BTreeMap<u32, FileInfo>, BTreeMap<u32, FileHeader>)> {
    let mut nos = numbered_files(fs.as_ref(), opts)?;
    for w in nos.windows(2) {
        if w[1] != w[0] + 1 {
            return Err(BinlogError::Corrupt {
                file: opts.naming.file_name(&opts.base_name, w[0] + 1),
                offset: 0,
                reason: "binlog file missing from the middle of the set".into(),
            });
        }
    }

    // Headers of every file but the last (rule 2: they are complete).
    let mut files = BTreeMap::new();
    let mut headers = BTreeMap::new();
    while let Some(&last) = nos.last() {
        let path = loc.path(last);
        let f = fs
            .open(&path, OpenMode::READ)
            .map_err(io_err("open", &path))?;
        let mut c = FileCursor::new(f, u64::MAX).map_err(io_err("stat", &path))?;
        match read_header(&mut c).map_err(io_err("read", &path))? {
            Ok(h) => {
                headers.insert(last, h);
                break;
            }
            Err(reason) => {
                // Rule 1: a file without a durable header holds no group; it was being
                // created when the power went. Drop it.
                if c.cap() > (1 << 16) && !opts.preallocates() {
                    return Err(BinlogError::Corrupt {
                        file: loc.name(last),
                        offset: 0,
                        reason,
                    });
                }
                fs.remove(&path).map_err(io_err("remove", &path))?;
                fs.sync_dir(&opts.dir).map_err(io_err("fsync", &opts.dir))?;
                report.removed_files.push(loc.name(last));
                nos.pop();
            }
        }
    }
    for &no in nos.iter().rev().skip(1) {
        let path = loc.path(no);
        let f = fs
            .open(&path, OpenMode::READ)
            .map_err(io_err("open", &path))?;
        let mut c = FileCursor::new(f, u64::MAX).map_err(io_err("stat", &path))?;
        let h = read_header(&mut c)
            .map_err(io_err("read", &path))?
            .map_err(|reason| BinlogError::Corrupt {
                file: loc.name(no),
                offset: 0,
                reason,
            })?;
        headers.insert(no, h);
        files.insert(
            no,
            FileInfo {
                created: 0,
                start_state: Vec::new(),
                size: c.cap(),
            },
        );
    }
    for (no, h) in &headers {
        let e = files.entry(*no).or_insert(FileInfo {
            created: 0,
            start_state: Vec::new(),
            size: 0,
        });
        e.created = h.fde.create_timestamp;
        e.start_state = h.start_state.clone();
    }
    Ok((nos, files, headers))
}

/// A binlog with no file open yet.
fn unopened(loc: &Location, opts: &BinlogOptions) -> Binlog {
    Binlog {
        loc: loc.clone(),
        opts: opts.clone(),
        inner: Mutex::new(Inner {
            files: BTreeMap::new(),
            active: Active {
                no: 0,
                file: Arc::new(NoFile),
                end: 0,
                header_end: 0,
            },
            state: GtidState::new(),
            synced: LogPos::default(),
            generation: 0,
        }),
        poison: Mutex::new(None),
        counters: Counters::default(),
        recovery: RecoveryReport::default(),
        runway: super::runway::Runway::new(opts.zero_fills()),
        moved: parking_lot::Condvar::new(),
        followers: Default::default(),
    }
}

/// A new binlog: its first file, created and synced.
fn create_first(
    mut binlog: Binlog,
    loc: &Location,
    opts: &BinlogOptions,
    mut report: RecoveryReport,
) -> Result<Binlog> {
    let first = opts.naming.first_number();
    let ts = now();
    let (file, header_end) = binlog.create_file(&loc.path(first), &[], ts)?;
    binlog.write_index(std::iter::once(first))?;
    binlog.sync_dir()?;
    let inner = binlog.inner.get_mut();
    inner.files.insert(
        first,
        FileInfo {
            created: ts,
            start_state: Vec::new(),
            size: header_end,
        },
    );
    inner.active = Active {
        no: first,
        file,
        end: header_end,
        header_end,
    };
    inner.synced = LogPos::new(first, header_end);
    report.created = true;
    report.active_file = loc.name(first);
    report.end = inner.synced;
    binlog.recovery = report;
    Ok(binlog)
}

/// Cuts everything after the scan's end. Engine files keep their preallocated size: the
/// bytes that held data are zeroed (so a later scan cannot mistake old bytes for events).
fn cut_tail(
    file: &Arc<dyn LogFile>,
    scan: &Scan,
    len: u64,
    opts: &BinlogOptions,
    path: &Path,
    report: &mut RecoveryReport,
) -> Result<()> {
    let keep_size = opts.preallocates() && !scan.ended_with_rotate;
    if keep_size {
        let high = data_high_water(file.as_ref(), scan.end, len, path)?;
        if high > scan.end {
            let zeros = vec![0u8; (high - scan.end).min(1 << 20) as usize];
            let mut off = scan.end;
            while off < high {
                let n = (high - off).min(zeros.len() as u64) as usize;
                file.write_at(&zeros[..n], off)
                    .map_err(io_err("write", path))?;
                off += n as u64;
            }
            report.truncated_bytes = high - scan.end;
        }
        if len < opts.max_binlog_size && opts.preallocate != Preallocate::Off {
            file.preallocate(opts.max_binlog_size)
                .map_err(io_err("fallocate", path))?;
        }
    } else if len > scan.end {
        report.truncated_bytes = data_high_water(file.as_ref(), scan.end, len, path)? - scan.end;
        file.set_len(scan.end).map_err(io_err("truncate", path))?;
    }
    Ok(())
}

/// Placeholder file before the real active file is known.
struct NoFile;

impl LogFile for NoFile {
    fn write_at(&self, _: &[u8], _: u64) -> std::io::Result<()> {
        Err(std::io::Error::other("no file"))
    }
    fn read_at(&self, _: &mut [u8], _: u64) -> std::io::Result<usize> {
        Ok(0)
    }
    fn len(&self) -> std::io::Result<u64> {
        Ok(0)
    }
    fn set_len(&self, _: u64) -> std::io::Result<()> {
        Err(std::io::Error::other("no file"))
    }
    fn preallocate(&self, _: u64) -> std::io::Result<()> {
        Err(std::io::Error::other("no file"))
    }
    fn sync_data(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn is_write_through(&self) -> bool {
        false
    }
}

/// How many bytes after `from` (up to `len`) hold data: the extent of non-zero bytes.
pub(crate) fn nonzero_after(fs: &dyn FileSystem, path: &Path, from: u64, len: u64) -> Result<u64> {
    let f = fs
        .open(path, OpenMode::READ)
        .map_err(io_err("open", path))?;
    Ok(data_high_water(f.as_ref(), from, len, path)? - from)
}
