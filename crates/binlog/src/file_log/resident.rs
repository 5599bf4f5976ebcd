//! How much of a binlog file is in the operating system's page cache: `mincore(2)` over a
//! read-only shared mapping of the file's used bytes. A replica or a `mariadb-binlog` that
//! reads a cached file reads memory; one that reads an evicted file reads the disk.

use std::os::fd::AsRawFd;
use std::path::Path;

/// Bytes of the first `len` bytes of the file at `path` that are in the page cache (whole
/// pages, so at most `len` rounded up to a page).
pub fn resident_bytes(path: &Path, len: u64) -> std::io::Result<u64> {
    if len == 0 {
        return Ok(0);
    }
    let file = std::fs::File::open(path)?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    let pages = len.div_ceil(page) as usize;
    // SAFETY: a fresh read-only shared mapping of an open file; checked for failure
    // below and unmapped before returning. Nothing reads through it.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let mut vec = vec![0u8; pages];
    // SAFETY: `addr` maps `len` bytes (page aligned), `vec` has one byte per page.
    let r = unsafe { libc::mincore(addr, len as usize, vec.as_mut_ptr()) };
    let err = std::io::Error::last_os_error();
    // SAFETY: the mapping made above, of that length.
    unsafe { libc::munmap(addr, len as usize) };
    if r != 0 {
        return Err(err);
    }
    let cached = vec.iter().filter(|&&b| b & 1 != 0).count() as u64;
    Ok(cached * page)
}

/// One binlog file as `information_schema.ONELOG_BINLOG_FILES` shows it.
#[derive(Clone, Debug)]
pub struct FileDetail {
    pub name: String,
    /// Used bytes (the active file's end so far).
    pub size: u64,
    /// Its GTID_LIST: the binlog's GTID state when the file started.
    pub start_state: Vec<crate::Gtid>,
    /// Bytes of it in the page cache (None: the file could not be examined).
    pub cached: Option<u64>,
}

impl super::Binlog {
    /// Every file, oldest first, with its starting GTID state and how much of it is cached.
    pub fn file_details(&self) -> Vec<FileDetail> {
        self.list_files()
            .into_iter()
            .map(|(name, size)| {
                let start_state = self
                    .file_no(&name)
                    .and_then(|no| self.file_start_state(no))
                    .unwrap_or_default();
                let cached = resident_bytes(&self.dir().join(&name), size).ok();
                FileDetail {
                    name,
                    size,
                    start_state,
                    cached,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_just_written_is_cached() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&vec![7u8; 64 * 1024]).unwrap();
        f.sync_all().unwrap();
        let n = resident_bytes(&path, 64 * 1024).unwrap();
        assert!(n > 0 && n <= 64 * 1024, "{n}");
        assert_eq!(resident_bytes(&path, 0).unwrap(), 0);
        assert!(resident_bytes(&dir.path().join("missing"), 10).is_err());
    }
}
