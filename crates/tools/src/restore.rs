//! `onelog restore --backup B [--binlogs DIR] (--until-gtid G | --until-time T) --datadir NEW`:
//! point-in-time recovery from a backup made by `onelog backup`.
//!
//! The restore writes no data itself: it lays out a data directory that ordinary crash
//! recovery finishes. NEW gets the backup's RocksDB checkpoint (table files hard-linked
//! when possible) and a binlog that starts with the backup's files, goes on with the files
//! of DIR that continue them, and ends right after the chosen group: the file holding it
//! is cut there, later files are left out. `onelogd --datadir=NEW` then replays the
//! groups after the checkpoint's applied position, and its `@@gtid_binlog_pos` and next
//! GTIDs follow from that binlog as after any crash.
//!
//! The chosen group: the one with GTID G (its group included), or the last of the groups
//! committed at or before T ('YYYY-MM-DD HH:MM:SS' in the server's time zone, which is
//! UTC; the first group after T ends the walk, as `mariadb-binlog --stop-datetime` stops
//! at the first event after it).
//!
//! DIR continues the backup when it holds the backup's last file with the backup's copy
//! as its exact prefix, or starts with the next file and that file's GTID_LIST is the
//! backup's GTID state.

use std::path::{Path, PathBuf};

use onelog_binlog::backup_info::{BackupInfo, INFO_FILE};
use onelog_binlog::event::{encode_event, seal_event, Event, Rotate};
use onelog_binlog::{BinlogError, Gtid, GtidState, LogDir, LogPos, ReadGroup};

const USAGE: &str = "usage: onelog restore --backup DIR [--binlogs DIR] \
(--until-gtid D-S-N | --until-time 'YYYY-MM-DD HH:MM:SS') --datadir NEW
  --backup DIR    a backup written by onelog backup
  --binlogs DIR   binlog files that continue it (the primary's data directory, or a copy)
  --until-gtid    keep every group up to and including this GTID
  --until-time    keep every group committed at or before this time (UTC)
  --datadir NEW   the data directory to create (must not exist)";

#[derive(Clone, Copy, Debug)]
enum Until {
    Gtid(Gtid),
    /// Unix seconds.
    Time(u32),
}

/// Entry point of `onelog restore ...`; `args` are the arguments after `restore`.
pub fn main(args: &[String]) -> i32 {
    match run(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("onelog restore: {e}");
            1
        }
    }
}

/// 'YYYY-MM-DD HH:MM:SS' (UTC) as Unix seconds.
fn parse_time(s: &str) -> Result<u32, String> {
    let bad = || format!("--until-time '{s}' is not 'YYYY-MM-DD HH:MM:SS'");
    let (date, time) = s.trim().split_once(' ').ok_or_else(bad)?;
    let d: Vec<u32> = date
        .split('-')
        .map(|x| x.parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let t: Vec<u32> = time
        .trim()
        .split(':')
        .map(|x| x.parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let (&[y, mo, day], &[h, mi, sec]) = (d.as_slice(), t.as_slice()) else {
        return Err(bad());
    };
    if !(1970..=2105).contains(&y) || !(1..=12).contains(&mo) || !(1..=31).contains(&day) {
        return Err(bad());
    }
    if h > 23 || mi > 59 || sec > 59 {
        return Err(bad());
    }
    let days = onelog_types::days_from_civil(y as i64, mo, day);
    let secs = days * 86400 + (h * 3600 + mi * 60 + sec) as i64;
    u32::try_from(secs).map_err(|_| bad())
}

fn show_time(secs: u32) -> String {
    let dt = onelog_types::DateTime::from_unix(secs as i64, 0);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        dt.date.year, dt.date.month, dt.date.day, dt.hour, dt.minute, dt.second
    )
}

fn group_time(g: &ReadGroup) -> u32 {
    g.events.first().map_or(0, |e| e.header.timestamp)
}

fn run(args: &[String]) -> Result<(), String> {
    let mut backup = None;
    let mut binlogs = None;
    let mut until = None;
    let mut datadir = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a, None),
        };
        let mut value = || -> Result<String, String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name {
            "--backup" => backup = Some(PathBuf::from(value()?)),
            "--binlogs" => binlogs = Some(PathBuf::from(value()?)),
            "--datadir" => datadir = Some(PathBuf::from(value()?)),
            "--until-gtid" | "--until-time" if until.is_some() => {
                return Err("give one of --until-gtid and --until-time".into())
            }
            "--until-gtid" => {
                let v = value()?;
                let g = v
                    .trim()
                    .parse::<Gtid>()
                    .map_err(|_| format!("--until-gtid '{v}' is not a GTID (domain-server-seq)"))?;
                until = Some(Until::Gtid(g));
            }
            "--until-time" => until = Some(Until::Time(parse_time(&value()?)?)),
            "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ => return Err(format!("unknown option {a}\n{USAGE}")),
        }
        i += 1;
    }
    let (Some(backup), Some(until), Some(datadir)) = (backup, until, datadir) else {
        return Err(format!(
            "--backup, --datadir and one of --until-gtid / --until-time are required\n{USAGE}"
        ));
    };
    if datadir.exists() {
        return Err(format!(
            "{} exists (the restore creates a new data directory)",
            datadir.display()
        ));
    }
    let plan = plan(&backup, binlogs.as_deref(), until)?;
    std::fs::create_dir_all(&datadir).map_err(|e| format!("{}: {e}", datadir.display()))?;
    let state = match write(&plan, &datadir) {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&datadir);
            return Err(e);
        }
    };
    let pos = onelog_binlog::format_gtid_list(&state.binlog_pos());
    match plan.last {
        Some((g, ts)) => println!(
            "restored the backup's checkpoint and {} binlog group(s) after it, the last {g} \
             committed at {}",
            plan.kept,
            show_time(ts)
        ),
        None => println!("restored the backup's checkpoint, no binlog group after it"),
    }
    if let (Until::Time(t), true) = (until, plan.exhausted) {
        println!(
            "note: the binlogs end before {}; every group in them was kept",
            show_time(t)
        );
    }
    println!(
        "binlog ends at {}:{}",
        plan.backup_dir.name(plan.cut.file_no),
        plan.cut.offset
    );
    println!("GTID position: {pos}");
    println!("start it with: onelogd --datadir={}", datadir.display());
    Ok(())
}

/// Where the bytes of one binlog file of the result come from.
struct Piece {
    no: u32,
    src: PathBuf,
    len: u64,
    /// Append a ROTATE naming the next file (the backup's last file, continued by DIR's
    /// next file).
    rotate: bool,
}

struct Plan {
    backup: PathBuf,
    backup_dir: LogDir,
    pieces: Vec<Piece>,
    /// Where the result's binlog ends.
    cut: LogPos,
    /// Groups kept after the applied position, and the last one kept.
    kept: u64,
    last: Option<(Gtid, u32)>,
    /// The binlogs ended before a group past the target was seen (--until-time).
    exhausted: bool,
}

/// What the walk over the groups after the applied position decided.
enum Step {
    Keep,
    /// The target: keep it and stop.
    KeepAndStop,
    /// Past the target: stop before this group.
    Stop,
}

fn decide(until: Until, g: &ReadGroup) -> Step {
    match until {
        Until::Gtid(want) if g.gtid == want => Step::KeepAndStop,
        Until::Gtid(_) => Step::Keep,
        Until::Time(t) if group_time(g) > t => Step::Stop,
        Until::Time(_) => Step::Keep,
    }
}

fn berr(e: BinlogError) -> String {
    e.to_string()
}

/// Whether `a` holds the first `len` bytes of `b` exactly.
fn same_prefix(a: &Path, b: &Path, len: u64) -> Result<bool, String> {
    use std::io::Read;
    let open = |p: &Path| std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()));
    let (mut fa, mut fb) = (open(a)?.take(len), open(b)?.take(len));
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    let mut done = 0;
    while done < len {
        let n = (len - done).min(ba.len() as u64) as usize;
        let ra = fa.read_exact(&mut ba[..n]);
        let rb = fb.read_exact(&mut bb[..n]);
        if ra.is_err() || rb.is_err() || ba[..n] != bb[..n] {
            return Ok(false);
        }
        done += n as u64;
    }
    Ok(true)
}

fn file_len(p: &Path) -> Result<u64, String> {
    std::fs::metadata(p)
        .map(|m| m.len())
        .map_err(|e| format!("{}: {e}", p.display()))
}

/// Finds the cut and where each file of the result comes from.
fn plan(backup: &Path, binlogs: Option<&Path>, until: Until) -> Result<Plan, String> {
    if !backup.join(INFO_FILE).exists() && backup.join(format!("{INFO_FILE}.started")).exists() {
        return Err(format!(
            "{} was started as a server ({INFO_FILE}.started): it is a data directory now, \
             not the backup it was",
            backup.display()
        ));
    }
    let info = BackupInfo::read(backup).map_err(|e| {
        format!(
            "{} is not a complete backup ({INFO_FILE}: {e})",
            backup.display()
        )
    })?;
    let bdir = LogDir::open(backup).map_err(berr)?;
    let file_no = |name: &str| {
        bdir.file_no(name)
            .filter(|n| bdir.files().contains(n))
            .ok_or_else(|| format!("the backup has no binlog file {name}"))
    };
    let mut applied = LogPos::new(file_no(&info.applied_file)?, info.applied_pos);
    let end = LogPos::new(file_no(&info.binlog_file)?, info.binlog_pos);

    // The groups of the applied position's file before it: the state at the applied
    // position and its last group. (Offset 0: from the first group of the file.)
    let start = bdir.file_start(applied.file_no).map_err(berr)?;
    applied.offset = applied.offset.max(start.header_end);
    let mut applied_state = GtidState::from_list(&start.start_state);
    let mut before: Option<(Gtid, u32)> = None;
    let from = LogPos::new(applied.file_no, 0);
    if applied.offset > start.header_end {
        for g in bdir.groups(from, Some(applied)) {
            let g = g.map_err(berr)?;
            applied_state.record(g.gtid);
            before = Some((g.gtid, group_time(&g)));
        }
    }
    let at_applied = || -> Result<(), String> {
        match until {
            Until::Gtid(want) => {
                let last = before.map(|b| b.0).or_else(|| {
                    let pos = applied_state.binlog_pos();
                    (pos.len() == 1).then(|| pos[0])
                });
                if last == Some(want) {
                    return Ok(());
                }
                Err(format!(
                    "GTID {want} is before the backup's checkpoint (GTID state {}): restore \
                     from an older backup",
                    onelog_binlog::format_gtid_list(&applied_state.binlog_pos())
                ))
            }
            Until::Time(t) => {
                let at = before.map_or(start.created, |b| b.1);
                if at <= t {
                    return Ok(());
                }
                Err(format!(
                    "{} is before the backup's checkpoint (its last commit is of {}): restore \
                     from an older backup",
                    show_time(t),
                    show_time(at)
                ))
            }
        }
    };
    // The target may be the checkpoint itself (a GTID it holds as its last group).
    let at_checkpoint = match until {
        Until::Gtid(want) => applied_state
            .seq_of(want.domain, want.server)
            .is_some_and(|s| s >= want.seq),
        Until::Time(_) => false,
    };
    if at_checkpoint {
        at_applied()?;
    }
    let mut kept = 0u64;
    let mut last: Option<(Gtid, u32)> = None;
    let mut cut = applied;
    // None: the groups ran out before the target; Some(true): the target group was kept;
    // Some(false): a group past the target ended the walk.
    let mut stopped = None;
    let mut continuation: Option<(LogDir, bool)> = None;
    let mut keep = |g: &ReadGroup| {
        kept += 1;
        last = Some((g.gtid, group_time(g)));
        cut = g.end;
    };
    if !at_checkpoint {
        // 1. The backup's own groups after the applied position, 2. DIR's after its end.
        stopped = walk(bdir.groups(applied, Some(end)), None, until, &mut keep)?;
        if let (None, Some(dir)) = (stopped, binlogs) {
            let ddir = LogDir::open(dir).map_err(berr)?;
            let from = continues(&bdir, &ddir, end, &info)?;
            let last_name = ddir.files().last().map(|&n| ddir.name(n));
            stopped = walk(ddir.groups(from, None), last_name, until, &mut keep)?;
            let has_end_file = ddir.files().contains(&end.file_no);
            continuation = Some((ddir, has_end_file));
        }
    }
    if kept == 0 && stopped == Some(false) {
        // The first group after the checkpoint is already past the target.
        at_applied()?;
    }
    if let (Until::Gtid(want), false, None) = (until, at_checkpoint, stopped) {
        let searched = match binlogs {
            Some(d) => format!("the backup and {}", d.display()),
            None => "the backup's binlog (give --binlogs DIR for the files after it)".into(),
        };
        return Err(format!(
            "GTID {want} is not in {searched} after the backup's checkpoint"
        ));
    }

    // Where each file of the result comes from.
    let mut pieces = Vec::new();
    for no in applied.file_no..=cut.file_no {
        let from_backup = match &continuation {
            None => true,
            Some((_, has_end_file)) => no < end.file_no || (no == end.file_no && !has_end_file),
        } || cut <= end;
        let src = match (&continuation, from_backup) {
            (Some((ddir, _)), false) => ddir.path(no),
            _ => bdir.path(no),
        };
        let whole = file_len(&src)?;
        let len = if no == cut.file_no { cut.offset } else { whole };
        // The backup's last file ends without its ROTATE when DIR goes on in the next one.
        let rotate = from_backup && no == end.file_no && no < cut.file_no;
        pieces.push(Piece {
            no,
            src,
            len,
            rotate,
        });
    }
    Ok(Plan {
        backup: backup.to_path_buf(),
        backup_dir: bdir,
        pieces,
        cut,
        kept,
        last,
        exhausted: stopped.is_none(),
    })
}

/// Walks groups, calling `keep` for each one kept. Returns None when the groups ran out,
/// Some(true) when the target group was kept, Some(false) when a group past the target
/// ended the walk. A torn or unfinished tail in `tolerate_tail` (the last file of a live
/// server's binlog) ends the walk like the end of the log.
fn walk(
    groups: onelog_binlog::GroupReader,
    tolerate_tail: Option<String>,
    until: Until,
    keep: &mut impl FnMut(&ReadGroup),
) -> Result<Option<bool>, String> {
    for g in groups {
        let g = match g {
            Ok(g) => g,
            Err(BinlogError::Corrupt { file, .. })
                if tolerate_tail.as_deref().is_some_and(|t| file.ends_with(t)) =>
            {
                return Ok(None)
            }
            Err(e) => return Err(berr(e)),
        };
        match decide(until, &g) {
            Step::Keep => keep(&g),
            Step::KeepAndStop => {
                keep(&g);
                return Ok(Some(true));
            }
            Step::Stop => return Ok(Some(false)),
        }
    }
    Ok(None)
}

/// Checks that DIR continues the backup, which ends at `end`; returns where DIR's groups
/// after it start.
fn continues(
    bdir: &LogDir,
    ddir: &LogDir,
    end: LogPos,
    info: &BackupInfo,
) -> Result<LogPos, String> {
    let files = ddir.files();
    let range = match (files.first(), files.last()) {
        (Some(a), Some(b)) => format!("{} .. {}", ddir.name(*a), ddir.name(*b)),
        _ => "no binlog files".into(),
    };
    let gap = |why: &str| {
        format!(
            "the binlogs in {} do not continue the backup ({why}): the backup ends in {} at {}, \
             {} holds {range}",
            ddir.dir().display(),
            bdir.name(end.file_no),
            end.offset,
            ddir.dir().display()
        )
    };
    if files.contains(&end.file_no) {
        let ours = bdir.path(end.file_no);
        let theirs = ddir.path(end.file_no);
        if !same_prefix(&ours, &theirs, end.offset)? {
            return Err(gap(&format!(
                "{} is not the file the backup copied",
                theirs.display()
            )));
        }
        return Ok(end);
    }
    if files.first() == Some(&(end.file_no + 1)) {
        let next = ddir.file_start(end.file_no + 1).map_err(berr)?;
        let mut theirs = next.start_state.clone();
        let mut ours = info.gtid_binlog_state.clone();
        theirs.sort_by_key(|g| (g.domain, g.server));
        ours.sort_by_key(|g| (g.domain, g.server));
        if theirs != ours {
            return Err(gap(&format!(
                "{} starts at GTID state {}, the backup ends at {}",
                ddir.name(end.file_no + 1),
                onelog_binlog::format_gtid_list(&theirs),
                onelog_binlog::format_gtid_list(&ours)
            )));
        }
        return Ok(LogPos::new(end.file_no + 1, 0));
    }
    Err(gap("files are missing between them"))
}

/// Copies a file, or hard-links it when `link` and the file system allows.
fn copy_or_link(src: &Path, dst: &Path, link: bool) -> Result<(), String> {
    if link && std::fs::hard_link(src, dst).is_ok() {
        return Ok(());
    }
    std::fs::copy(src, dst)
        .map(|_| ())
        .map_err(|e| format!("copying {} to {}: {e}", src.display(), dst.display()))
}

fn sync_path(p: &Path) -> Result<(), String> {
    std::fs::File::open(p)
        .and_then(|f| f.sync_all())
        .map_err(|e| format!("fsync {}: {e}", p.display()))
}

/// Lays out NEW (see the module docs); returns the GTID state its binlog ends with.
fn write(plan: &Plan, new: &Path) -> Result<GtidState, String> {
    use std::io::Write;
    // The checkpoint: table files are immutable (hard links are safe), the rest is copied.
    let src = plan.backup.join("rocksdb");
    let dst = new.join("rocksdb");
    std::fs::create_dir(&dst).map_err(|e| format!("{}: {e}", dst.display()))?;
    let entries = std::fs::read_dir(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    for e in entries {
        let e = e.map_err(|e| format!("{}: {e}", src.display()))?;
        let name = e.file_name();
        let is_sst = name.to_string_lossy().ends_with(".sst");
        copy_or_link(&e.path(), &dst.join(&name), is_sst)?;
        sync_path(&dst.join(&name))?;
    }
    sync_path(&dst)?;
    for p in &plan.pieces {
        let name = plan.backup_dir.name(p.no);
        let out = new.join(&name);
        let err = |e: std::io::Error| format!("{}: {e}", out.display());
        let mut f = std::fs::File::create_new(&out).map_err(err)?;
        let mut from = std::fs::File::open(&p.src).map_err(err)?;
        let n = std::io::copy(&mut std::io::Read::take(&mut from, p.len), &mut f).map_err(err)?;
        if n != p.len {
            return Err(format!(
                "{} holds {n} bytes, {} expected",
                p.src.display(),
                p.len
            ));
        }
        if p.rotate {
            let ev = Event::Rotate(Rotate {
                position: 4,
                next_file: plan.backup_dir.name(p.no + 1),
            });
            let mut raw = encode_event(0, 0, 0, 0, &ev);
            let end = (p.len + raw.len() as u64) as u32;
            seal_event(&mut raw, end);
            f.write_all(&raw).map_err(err)?;
        }
        f.sync_all().map_err(err)?;
    }
    sync_path(new)?;
    // Read the result back: it must be a valid log ending at the cut.
    let ndir = LogDir::open(new).map_err(berr)?;
    let start = ndir.file_start(plan.cut.file_no).map_err(berr)?;
    let mut state = GtidState::from_list(&start.start_state);
    for g in ndir.groups(LogPos::new(plan.cut.file_no, 0), Some(plan.cut)) {
        state.record(g.map_err(berr)?.gtid);
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_as_utc() {
        assert_eq!(parse_time("1970-01-01 00:00:00"), Ok(0));
        assert_eq!(parse_time("2024-02-29 12:34:56"), Ok(1_709_210_096));
        assert_eq!(show_time(1_709_210_096), "2024-02-29 12:34:56");
        assert!(parse_time("2024-02-29").is_err());
        assert!(parse_time("2024-13-01 00:00:00").is_err());
        assert!(parse_time("2024-01-01 24:00:00").is_err());
    }
}
