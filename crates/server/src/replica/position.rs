//! The replica's position in the primary's binlog file (`MASTER_USE_GTID=no`), and the
//! filter that makes resuming from it exact.
//!
//! `master.pos` holds the primary's file and the end position of the last group this
//! server committed (what SHOW SLAVE STATUS calls `Relay_Master_Log_File` and
//! `Exec_Master_Log_Pos`), rewritten after every commit. It is written only once the
//! group is committed, so it is never ahead of the tables (with `sync_binlog=1` a commit
//! returns once durable); it is not synced per group, so after a power loss it may be
//! behind. Resuming from a position that is behind is exact anyway: every group a MariaDB
//! or onelog primary logs has a GTID, the groups this server applied keep their GTIDs in
//! its own binlog (`@@gtid_slave_pos`, exact after any crash), and [`Duplicates`] drops a
//! group whose GTID is not after that position in its domain.
//!
//! Layout: two 512-byte slots, written alternately, so a torn write leaves the other one.
//! A slot is `seq: u64 LE | pos: u64 LE | name_len: u16 LE | name (UTF-8, at most 480
//! bytes) | zeros | crc32: u32 LE` (the CRC-32 of bytes 0..508); the valid slot with the
//! higher `seq` holds the position.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use onelog_binlog::event::Event;
use onelog_binlog::Gtid;
use parking_lot::Mutex;

use super::feed::{group_event, GroupEvent};

const FILE: &str = "master.pos";
const SLOT: usize = 512;
const MAX_NAME: usize = 480;

/// `master.pos` of a data directory.
pub struct PosFile {
    file: Mutex<(File, u64)>,
}

fn decode(slot: &[u8]) -> Option<(u64, String, u64)> {
    let crc = u32::from_le_bytes(slot[SLOT - 4..].try_into().ok()?);
    if crc != crc32fast::hash(&slot[..SLOT - 4]) {
        return None;
    }
    let seq = u64::from_le_bytes(slot[0..8].try_into().ok()?);
    let pos = u64::from_le_bytes(slot[8..16].try_into().ok()?);
    let len = u16::from_le_bytes(slot[16..18].try_into().ok()?) as usize;
    let name = std::str::from_utf8(slot.get(18..18 + len.min(MAX_NAME))?).ok()?;
    Some((seq, name.to_string(), pos))
}

impl PosFile {
    /// Opens (creating) `datadir/master.pos`; the position it holds, if any.
    pub fn open(datadir: &Path) -> Result<(PosFile, Option<(String, u64)>), String> {
        let path = datadir.join(FILE);
        let io = |e: std::io::Error| format!("{}: {e}", path.display());
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        let mut buf = vec![0u8; 2 * SLOT];
        let n = file.read_at(&mut buf, 0).map_err(io)?;
        buf.truncate(n);
        let best = buf
            .chunks_exact(SLOT)
            .filter_map(decode)
            .max_by_key(|(seq, ..)| *seq);
        let seq = best.as_ref().map_or(0, |b| b.0);
        let pos = best.map(|(_, name, pos)| (name, pos));
        Ok((
            PosFile {
                file: Mutex::new((file, seq)),
            },
            pos,
        ))
    }

    /// Records `pos` in the primary's file `name`; `sync`: durably (CHANGE MASTER, RESET
    /// SLAVE), else for the page cache (after each committed group).
    pub fn record(&self, name: &str, pos: u64, sync: bool) -> std::io::Result<()> {
        let mut g = self.file.lock();
        let seq = g.1 + 1;
        let mut cut = name.len().min(MAX_NAME);
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut slot = [0u8; SLOT];
        slot[0..8].copy_from_slice(&seq.to_le_bytes());
        slot[8..16].copy_from_slice(&pos.to_le_bytes());
        slot[16..18].copy_from_slice(&(cut as u16).to_le_bytes());
        slot[18..18 + cut].copy_from_slice(&name.as_bytes()[..cut]);
        let crc = crc32fast::hash(&slot[..SLOT - 4]);
        slot[SLOT - 4..].copy_from_slice(&crc.to_le_bytes());
        g.0.write_all_at(&slot, (seq % 2) * SLOT as u64)?;
        if sync {
            g.0.sync_data()?;
        }
        g.1 = seq;
        Ok(())
    }
}

/// What [`Duplicates::filter`] says of an event.
#[derive(Debug, PartialEq, Eq)]
pub enum Filtered {
    /// Apply it.
    Apply,
    /// Drop it: part of a group applied before.
    Drop,
    /// Drop it, and it ended such a group (the position moves past it).
    DropEnd,
}

/// Drops the groups of a file-and-position stream that this server has applied already:
/// those whose GTID's sequence number is not after `@@gtid_slave_pos` in its domain.
pub struct Duplicates {
    applied: HashMap<u32, u64>,
    /// Inside a dropped group: whether it is standalone.
    skipping: Option<bool>,
}

impl Duplicates {
    pub fn new(slave_pos: &[Gtid]) -> Duplicates {
        Duplicates {
            applied: slave_pos.iter().map(|g| (g.domain, g.seq)).collect(),
            skipping: None,
        }
    }

    pub fn filter(&mut self, ev: &Event) -> Filtered {
        if let Event::Gtid(g) = ev {
            let done = self.applied.get(&g.domain).is_some_and(|&s| g.seq <= s);
            self.skipping = done.then_some(g.is_standalone());
            return if done {
                Filtered::Drop
            } else {
                Filtered::Apply
            };
        }
        let Some(standalone) = self.skipping else {
            return Filtered::Apply;
        };
        let ends = match group_event(ev) {
            GroupEvent::End => true,
            GroupEvent::Statement => standalone,
            GroupEvent::Begin | GroupEvent::Other => false,
        };
        if ends {
            self.skipping = None;
            Filtered::DropEnd
        } else {
            Filtered::Drop
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newer_whole_slot_wins() {
        let dir = tempfile::tempdir().unwrap();
        let (p, pos) = PosFile::open(dir.path()).unwrap();
        assert_eq!(pos, None);
        p.record("mb.000001", 400, false).unwrap();
        p.record("mb.000002", 4, true).unwrap();
        drop(p);
        let (p, pos) = PosFile::open(dir.path()).unwrap();
        assert_eq!(pos, Some(("mb.000002".into(), 4)));
        p.record("mb.000002", 900, false).unwrap();
        drop(p);
        // A torn write of the newest slot leaves the one before it.
        let path = dir.path().join(FILE);
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all_at(&[0xff; 40], SLOT as u64).unwrap();
        let (_, pos) = PosFile::open(dir.path()).unwrap();
        assert_eq!(pos, Some(("mb.000002".into(), 4)));
    }
}
