//! Power cuts for a real process's files: `shim.c` (LD_PRELOAD) journals every sync, name
//! change and directory sync under a watched directory; after a SIGKILL, [`PowerFail::cut`]
//! rewrites the directory to what a disk could hold after losing power at that moment.
//!
//! The model, per file (named by inode while the process runs):
//! - Content: a file keeps the bytes below its size at its last successful
//!   fsync/fdatasync (files present when the process started count as synced at their
//!   size then); a file never synced keeps nothing. Appends past that size are lost: the
//!   model for RocksDB's table files, MANIFEST, CURRENT and OPTIONS files, which are
//!   written once from the start. Overwrites of existing bytes (the binlog writes into
//!   zeros it preallocated and synced) that started after the file's last sync started
//!   are undone with the bytes they replaced (the shim journals them before each write);
//!   of all such writes a random prefix, in the order they started, survives. Truncations
//!   are taken as durable at once (the bytes cut off are gone from the real file system,
//!   so the model cannot bring them back). `sync_file_range` makes nothing durable (it
//!   syncs no metadata, see its man page).
//! - Names: a creation, rename, link or unlink is durable once a later fsync of its
//!   directory (of both directories, for a rename across two) returned. Of the name
//!   changes no directory sync covers, a random prefix (in the order they happened)
//!   survives: the order a journaling file system commits metadata in, so each outcome is
//!   one a real disk can show. A name that does not survive is undone: a new file vanishes,
//!   a renamed file gets its old name back (and the file it replaced comes back, from the
//!   shim's graveyard of hard links), an unlinked file comes back.
//! - Directories themselves are taken as durable (none is created or removed under the
//!   watched directory during a run, other than RocksDB's and the binlog's own at start-up).
//!
//! Not modelled: torn writes, unsynced appends that happen to reach the disk (a file keeps
//! less, never more, than its synced size), unsynced overwrites reaching the disk out of
//! order, writes through `writev`/`mmap`, and I/O errors.
#![allow(dead_code)]

use rand::Rng;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the shim into `dir`; None (with a notice naming `test`) without a C compiler.
pub fn build_shim(dir: &Path, test: &str) -> Option<PathBuf> {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/powerfail/shim.c");
    let out = dir.join("powerfail.so");
    let ok = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o"])
        .arg(&out)
        .arg(src)
        .args(["-ldl", "-lpthread"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED {test}: no C compiler to build the power-cut shim");
    }
    ok.then_some(out)
}

/// A watched directory and the files the shim keeps about it.
pub struct PowerFail {
    /// The watched directory (canonical path).
    pub root: PathBuf,
    shim: PathBuf,
    journal: PathBuf,
    grave: PathBuf,
    stage: PathBuf,
    /// Regular files under `root` when the current run started: relative path -> (inode,
    /// size). They count as durable at that size.
    baseline: HashMap<PathBuf, (u64, u64)>,
}

/// What one power cut did to the directory.
#[derive(Debug, Default)]
pub struct CutReport {
    pub events: usize,
    pub files_kept: usize,
    /// Files whose last bytes were not synced, and how many bytes they lost in all.
    pub files_shortened: usize,
    pub bytes_dropped: u64,
    /// Names that existed in the process's view and are gone after the cut.
    pub names_dropped: Vec<String>,
    /// Names that the process had removed or replaced and that are back after the cut.
    pub names_restored: Vec<String>,
    /// Name changes no directory sync covered, and how many of them survived.
    pub uncovered: usize,
    pub uncovered_kept: usize,
    pub syncs: usize,
    pub dir_syncs: usize,
    pub range_syncs: usize,
    pub msyncs: usize,
    /// Overwrites no sync covered, how many survived, and the bytes put back.
    pub overwrites: usize,
    pub overwrites_kept: usize,
    pub bytes_undone: u64,
}

/// An overwrite journaled by the shim: ticket, inode, offset, the bytes it replaced.
struct Overwrite {
    ticket: u64,
    ino: u64,
    off: u64,
    old: Vec<u8>,
}

/// Per inode: (ticket, size) of the last sync (by ticket) that returned.
type Synced = HashMap<u64, (u64, u64)>;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

#[derive(Debug, Clone)]
enum NameOp {
    /// A new name for inode `ino`.
    Create {
        ino: u64,
        path: PathBuf,
    },
    Rename {
        ino: u64,
        from: PathBuf,
        to: PathBuf,
    },
    Link {
        ino: u64,
        to: PathBuf,
    },
    Unlink {
        ino: u64,
        path: PathBuf,
    },
}

impl NameOp {
    /// The directories whose sync makes this change durable.
    fn dirs(&self) -> Vec<PathBuf> {
        let parent = |p: &Path| p.parent().unwrap_or(Path::new("/")).to_path_buf();
        match self {
            NameOp::Create { path, .. } | NameOp::Unlink { path, .. } => vec![parent(path)],
            NameOp::Link { to, .. } => vec![parent(to)],
            NameOp::Rename { from, to, .. } => {
                let (a, b) = (parent(from), parent(to));
                if a == b {
                    vec![a]
                } else {
                    vec![a, b]
                }
            }
        }
    }

    /// Applies the change to a namespace (absolute path -> inode).
    fn apply(&self, ns: &mut BTreeMap<PathBuf, u64>) {
        match self {
            NameOp::Create { ino, path } => {
                ns.insert(path.clone(), *ino);
            }
            NameOp::Rename { ino, from, to } => {
                if ns.get(from) == Some(ino) {
                    ns.remove(from);
                }
                ns.insert(to.clone(), *ino);
            }
            NameOp::Link { ino, to } => {
                ns.insert(to.clone(), *ino);
            }
            NameOp::Unlink { ino, path } => {
                if ns.get(path) == Some(ino) {
                    ns.remove(path);
                }
            }
        }
    }
}

enum Event {
    Name(NameOp),
    DirSync(PathBuf),
}

/// Regular files under `dir`, recursively: absolute path -> (inode, size).
fn scan(dir: &Path, out: &mut BTreeMap<PathBuf, (u64, u64)>) {
    use std::os::unix::fs::MetadataExt;
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd {
        let e = e.unwrap();
        let m = std::fs::symlink_metadata(e.path()).unwrap();
        if m.is_dir() {
            scan(&e.path(), out);
        } else if m.is_file() {
            out.insert(e.path(), (m.ino(), m.len()));
        }
    }
}

impl PowerFail {
    /// Watches `root` (created if missing); the journal, graveyard and staging area go into
    /// `work`, outside `root`.
    pub fn new(shim: &Path, root: &Path, work: &Path) -> PowerFail {
        std::fs::create_dir_all(root).unwrap();
        let root = root.canonicalize().unwrap();
        let work = work.canonicalize().unwrap();
        let pf = PowerFail {
            root,
            shim: shim.to_path_buf(),
            journal: work.join("powerfail.journal"),
            grave: work.join("powerfail.grave"),
            stage: work.join("powerfail.stage"),
            baseline: HashMap::new(),
        };
        std::fs::create_dir_all(&pf.grave).unwrap();
        pf
    }

    /// The environment that loads the shim into a process and points it at this directory.
    pub fn env(&self) -> Vec<(String, String)> {
        let s = |p: &Path| p.to_string_lossy().into_owned();
        vec![
            ("LD_PRELOAD".into(), s(&self.shim)),
            ("POWERFAIL_DIR".into(), s(&self.root)),
            ("POWERFAIL_JOURNAL".into(), s(&self.journal)),
            ("POWERFAIL_GRAVE".into(), s(&self.grave)),
        ]
    }

    /// Starts a new run: the directory as it is now is what the disk holds.
    pub fn arm(&mut self) {
        let _ = std::fs::remove_file(&self.journal);
        let _ = std::fs::remove_dir_all(&self.grave);
        std::fs::create_dir_all(&self.grave).unwrap();
        let mut now = BTreeMap::new();
        scan(&self.root, &mut now);
        self.baseline = now
            .into_iter()
            .map(|(p, v)| (p.strip_prefix(&self.root).unwrap().to_path_buf(), v))
            .collect();
    }

    /// The journal's lines, parsed; sizes synced per inode are folded into `synced`.
    fn read_journal(
        &self,
        synced: &mut Synced,
        writes: &mut Vec<Overwrite>,
        rep: &mut CutReport,
    ) -> Vec<Event> {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.journal) {
            f.read_to_string(&mut text).unwrap();
        }
        // Names as the process saw them, to tell a new name from a reopened one.
        let mut live: BTreeMap<PathBuf, u64> = self
            .baseline
            .iter()
            .map(|(p, (ino, _))| (self.root.join(p), *ino))
            .collect();
        let mut events = Vec::new();
        for line in text.lines() {
            rep.events += 1;
            let (kind, rest) = line.split_at(1);
            let rest = rest.trim_start();
            let mut it = rest.splitn(2, ' ');
            let first = it.next().unwrap_or("");
            let tail = it.next().unwrap_or("");
            // The numbers leading the line (a hex dump after them may look like one too).
            let nums: Vec<u64> = rest
                .split(' ')
                .take(4)
                .map_while(|w| w.parse().ok())
                .collect();
            let num = |s: &str| -> u64 {
                s.split(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap_or_else(|_| panic!("bad journal line {line:?}"))
            };
            let pair = || {
                let (a, b) = tail.split_once('\t').expect("two paths");
                (PathBuf::from(a), PathBuf::from(b))
            };
            let op = match kind {
                "S" => {
                    let (ino, size, ticket) = (nums[0], nums[1], nums[2]);
                    let e = synced.entry(ino).or_insert((0, 0));
                    if ticket >= e.0 {
                        *e = (ticket, size);
                    }
                    rep.syncs += 1;
                    None
                }
                "Z" | "X" => {
                    let (ino, off, len, ticket) = (nums[0], nums[1], nums[2], nums[3]);
                    let old = if kind == "Z" {
                        vec![0; len as usize]
                    } else {
                        unhex(rest.rsplit(' ').next().unwrap())
                    };
                    assert_eq!(old.len() as u64, len, "bad journal line {line:?}");
                    writes.push(Overwrite {
                        ticket,
                        ino,
                        off,
                        old,
                    });
                    None
                }
                "D" => {
                    rep.dir_syncs += 1;
                    events.push(Event::DirSync(PathBuf::from(rest)));
                    None
                }
                "O" => {
                    let (ino, path) = (num(first), PathBuf::from(tail));
                    (live.get(&path) != Some(&ino)).then_some(NameOp::Create { ino, path })
                }
                "R" => {
                    let (from, to) = pair();
                    Some(NameOp::Rename {
                        ino: num(first),
                        from,
                        to,
                    })
                }
                "L" => Some(NameOp::Link {
                    ino: num(first),
                    to: pair().1,
                }),
                "U" => Some(NameOp::Unlink {
                    ino: num(first),
                    path: PathBuf::from(tail),
                }),
                "W" => {
                    rep.range_syncs += 1;
                    None
                }
                "M" => {
                    rep.msyncs += 1;
                    None
                }
                "T" => None,
                _ => panic!("bad journal line {line:?}"),
            };
            if let Some(op) = op {
                op.apply(&mut live);
                events.push(Event::Name(op));
            }
        }
        events
    }

    /// After the process was killed: rewrites the directory to a state a disk could hold
    /// after a power cut now, choosing among the legal ones with `rng`.
    pub fn cut(&mut self, rng: &mut impl Rng) -> CutReport {
        let mut rep = CutReport::default();
        // Files present at the start count as synced then (ticket 0, before any write).
        let mut synced: Synced = self
            .baseline
            .values()
            .map(|(ino, size)| (*ino, (0, *size)))
            .collect();
        let mut writes = Vec::new();
        let events = self.read_journal(&mut synced, &mut writes, &mut rep);

        // Overwrites that started after their file's last sync started: a random prefix
        // (by ticket) survives, the rest is undone.
        writes.retain(|w| synced.get(&w.ino).is_none_or(|s| w.ticket > s.0));
        writes.sort_by_key(|w| w.ticket);
        rep.overwrites = writes.len();
        let keep_writes = match rng.gen_range(0..3) {
            0 => 0,
            1 => writes.len(),
            _ => rng.gen_range(0..=writes.len()),
        };
        rep.overwrites_kept = keep_writes;
        writes.drain(..keep_writes);

        // Which name changes a later directory sync covers.
        let mut synced_later: std::collections::HashSet<PathBuf> = Default::default();
        let mut covered = vec![false; events.len()];
        for (i, e) in events.iter().enumerate().rev() {
            match e {
                Event::DirSync(d) => {
                    synced_later.insert(d.clone());
                }
                Event::Name(op) => covered[i] = op.dirs().iter().all(|d| synced_later.contains(d)),
            }
        }
        let uncovered: Vec<usize> = (0..events.len())
            .filter(|&i| matches!(events[i], Event::Name(_)) && !covered[i])
            .collect();
        rep.uncovered = uncovered.len();
        let keep = match rng.gen_range(0..3) {
            0 => 0,
            1 => uncovered.len(),
            _ => rng.gen_range(0..=uncovered.len()),
        };
        rep.uncovered_kept = keep;
        let kept: std::collections::HashSet<usize> = uncovered[..keep].iter().copied().collect();

        // The durable namespace, and the process's own view for the report.
        let start: BTreeMap<PathBuf, u64> = self
            .baseline
            .iter()
            .map(|(p, (ino, _))| (self.root.join(p), *ino))
            .collect();
        let (mut durable, mut live) = (start.clone(), start);
        for (i, e) in events.iter().enumerate() {
            if let Event::Name(op) = e {
                op.apply(&mut live);
                if covered[i] || kept.contains(&i) {
                    op.apply(&mut durable);
                }
            }
        }
        self.rewrite(&durable, &live, &synced, &writes, &mut rep);
        rep
    }

    /// Replaces every regular file under the root by the durable namespace's files, each
    /// cut to its synced size.
    fn rewrite(
        &mut self,
        durable: &BTreeMap<PathBuf, u64>,
        live: &BTreeMap<PathBuf, u64>,
        synced: &Synced,
        undo: &[Overwrite],
        rep: &mut CutReport,
    ) {
        // Where each inode's bytes are now: under the root, or in the graveyard.
        let mut real = BTreeMap::new();
        scan(&self.root, &mut real);
        scan(&self.grave, &mut real);
        let mut by_ino: HashMap<u64, (PathBuf, u64)> = HashMap::new();
        for (p, (ino, size)) in &real {
            by_ino.entry(*ino).or_insert((p.clone(), *size));
        }
        let _ = std::fs::remove_dir_all(&self.stage);
        std::fs::create_dir_all(&self.stage).unwrap();
        let mut staged = Vec::new();
        let mut undone = std::collections::HashSet::new();
        for (path, ino) in durable {
            let (src, now) = by_ino.get(ino).unwrap_or_else(|| {
                panic!("power cut: the bytes of {path:?} (inode {ino}) are gone")
            });
            let keep = synced.get(ino).map_or(0, |s| s.1).min(*now);
            if keep < *now {
                rep.files_shortened += 1;
                rep.bytes_dropped += now - keep;
            }
            let tmp = self.stage.join(format!("f{}", staged.len()));
            // A hard link keeps the file's holes (the binlog's files are preallocated); every
            // name of an inode gets the same synced size.
            std::fs::hard_link(src, &tmp).unwrap();
            let f = std::fs::OpenOptions::new().write(true).open(&tmp).unwrap();
            f.set_len(keep).unwrap();
            if undone.insert(*ino) {
                rep.bytes_undone += undo_writes(&f, *ino, keep, undo);
            }
            staged.push((tmp, path.clone()));
            if live.get(path) != Some(ino) {
                rep.names_restored.push(self.rel(path));
            }
        }
        for path in live.keys() {
            if !durable.contains_key(path) {
                rep.names_dropped.push(self.rel(path));
            }
        }
        for p in real.keys().filter(|p| p.starts_with(&self.root)) {
            std::fs::remove_file(p).unwrap();
        }
        for (tmp, path) in &staged {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::rename(tmp, path).unwrap();
        }
        rep.files_kept = staged.len();
        let _ = std::fs::remove_dir_all(&self.grave);
        std::fs::create_dir_all(&self.grave).unwrap();
    }

    fn rel(&self, p: &Path) -> String {
        p.strip_prefix(&self.root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    }
}

/// Puts back, newest first, the bytes the writes in `undo` to inode `ino` replaced (below
/// `size`, the file's length after the cut); returns how many bytes.
fn undo_writes(f: &std::fs::File, ino: u64, size: u64, undo: &[Overwrite]) -> u64 {
    use std::os::unix::fs::FileExt;
    let mut n = 0;
    for w in undo.iter().rev().filter(|w| w.ino == ino && w.off < size) {
        let len = (size - w.off).min(w.old.len() as u64) as usize;
        f.write_all_at(&w.old[..len], w.off).unwrap();
        n += len as u64;
    }
    n
}
