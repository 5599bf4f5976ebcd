//! A binlog directory read on its own: [`LogDir`].
//!
//! Backups and point-in-time restores read binlog files that no [`Binlog`](super::Binlog)
//! of this process owns (a backup's copy, another server's data directory, possibly while
//! that server appends to its last file). Opening them as a log would run recovery, which
//! writes; a `LogDir` only reads: file headers, and the complete groups between two
//! positions.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::naming::Naming;
use super::reader::{read_header, EventReader, FileCursor, GroupReader, Location};
use super::LogPos;
use crate::error::{BinlogError, Result};
use crate::fs::{FileSystem, OpenMode, RealFs};
use crate::gtid::Gtid;

/// What a file starts with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStart {
    /// The FORMAT_DESCRIPTION's create time: when the file was started (the previous file
    /// then got its ROTATE, after its last group).
    pub created: u32,
    /// The GTID_LIST: the binlog state when the file was started.
    pub start_state: Vec<Gtid>,
    /// Where the first group may start.
    pub header_end: u64,
    /// The file's length on disk (preallocated files included).
    pub len: u64,
}

/// The numbered binlog files of one directory, read only.
pub struct LogDir {
    loc: Location,
    files: Vec<u32>,
}

impl LogDir {
    /// The engine-style files (`binlog-000000`, ...) of `dir` on the real file system.
    pub fn open(dir: &Path) -> Result<LogDir> {
        LogDir::open_with(Arc::new(RealFs), dir, "binlog", Naming::Engine)
    }

    /// The files `base` in `naming` style of `dir`. Errors if a number is missing between
    /// the first and the last (a file missing from the middle).
    pub fn open_with(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        base: &str,
        naming: Naming,
    ) -> Result<LogDir> {
        let mut files: Vec<u32> = fs
            .list_dir(dir)
            .map_err(|e| BinlogError::io("list", dir.display(), e))?
            .iter()
            .filter_map(|n| naming.parse(base, n))
            .collect();
        files.sort_unstable();
        let loc = Location {
            fs,
            dir: dir.to_path_buf(),
            naming,
            base: base.to_string(),
        };
        if let Some(w) = files.windows(2).find(|w| w[1] != w[0] + 1) {
            return Err(BinlogError::Corrupt {
                file: loc.path(w[0] + 1).display().to_string(),
                offset: 0,
                reason: "binlog file missing from the middle of the set".into(),
            });
        }
        Ok(LogDir { loc, files })
    }

    /// The file numbers, oldest first.
    pub fn files(&self) -> &[u32] {
        &self.files
    }

    pub fn dir(&self) -> &Path {
        &self.loc.dir
    }

    pub fn path(&self, no: u32) -> PathBuf {
        self.loc.path(no)
    }

    pub fn name(&self, no: u32) -> String {
        self.loc.name(no)
    }

    /// The file number of a file name of this set.
    pub fn file_no(&self, name: &str) -> Option<u32> {
        self.loc.naming.parse(&self.loc.base, name)
    }

    /// Reads and checks the header of file `no`.
    pub fn file_start(&self, no: u32) -> Result<FileStart> {
        let path = self.path(no);
        let file = self
            .loc
            .fs
            .open(&path, OpenMode::READ)
            .map_err(|e| BinlogError::io("open", path.display(), e))?;
        let len = file
            .len()
            .map_err(|e| BinlogError::io("stat", path.display(), e))?;
        let mut cur = FileCursor::new(file, u64::MAX)
            .map_err(|e| BinlogError::io("stat", path.display(), e))?;
        let h = read_header(&mut cur)
            .map_err(|e| BinlogError::io("read", path.display(), e))?
            .map_err(|reason| BinlogError::Corrupt {
                file: path.display().to_string(),
                offset: 0,
                reason,
            })?;
        Ok(FileStart {
            created: h.fde.create_timestamp,
            start_state: h.start_state,
            header_end: h.end,
            len,
        })
    }

    /// Complete event groups from `from` (a group boundary, or offset 0 of a file) up to
    /// `limit` (`None`: the end of the last file). A group cut off by the limit, or by the
    /// end of the last file, is not returned; a torn or unfinished tail of the last file
    /// comes back as an error after the last complete group (see [`BinlogError::Corrupt`]).
    pub fn groups(&self, from: LogPos, limit: Option<LogPos>) -> GroupReader {
        let end = self.files.last().map_or(0, |&n| n + 1);
        GroupReader::new(EventReader::new(
            self.loc.clone(),
            from,
            limit.unwrap_or(LogPos::new(end, 0)),
        ))
    }
}
