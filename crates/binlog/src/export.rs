//! Export to classic binlog files that `mariadb-binlog` and MariaDB tools read: the valid
//! events of a file without the preallocated zero tail and without a torn or unfinished
//! tail, every `log_pos` and CRC correct.

use std::path::{Path, PathBuf};

use crate::error::{BinlogError, Result};
use crate::event::{encode_event, Event, Rotate};
use crate::file_log::{Feed, FileEvents, GroupScanner, Naming};
use crate::fs::{FileSystem, OpenMode};

/// What an export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportInfo {
    pub bytes: u64,
    pub events: u64,
    pub groups: u64,
    /// Bytes of the source after the last complete group that were left out.
    pub dropped_tail: u64,
}

/// Copies `src` (an Engine or Classic binlog file) to the new classic file `dst`. Events after
/// the last complete group are left out. With `rotate_to`, a trailing ROTATE event is
/// rewritten to name that file instead.
pub fn export_file(
    fs: &dyn FileSystem,
    src: &Path,
    dst: &Path,
    rotate_to: Option<&str>,
) -> Result<ExportInfo> {
    let mut out: Vec<u8> = crate::event::BINLOG_MAGIC.to_vec();
    let mut keep = 4usize; // bytes of `out` ending with the last complete unit
    let mut info = ExportInfo::default();
    let mut pending_events = 0;
    let mut scanner = GroupScanner::default();
    let mut events = FileEvents::open(fs, src)?;
    for e in events.by_ref() {
        let e = match e {
            Ok(e) => e,
            Err(BinlogError::Corrupt { .. }) => break, // a torn tail ends the export
            Err(err) => return Err(err),
        };
        let raw = match (&e.event, rotate_to) {
            (Event::Rotate(r), Some(name)) => encode_event(
                e.header.timestamp,
                e.header.server_id,
                e.header.flags,
                (out.len() + 19 + 8 + name.len() + 4) as u32,
                &Event::Rotate(Rotate {
                    position: r.position,
                    next_file: name.to_string(),
                }),
            ),
            _ => e.raw,
        };
        out.extend_from_slice(&raw);
        pending_events += 1;
        match scanner.feed(&e.header, &e.event) {
            Feed::Outside => {
                keep = out.len();
                info.events += pending_events;
                pending_events = 0;
            }
            Feed::Complete(_) => {
                keep = out.len();
                info.events += pending_events;
                pending_events = 0;
                info.groups += 1;
            }
            Feed::Inside => {}
            Feed::Error(_) => break,
        }
        if matches!(e.event, Event::Rotate(_)) {
            break;
        }
    }
    out.truncate(keep);
    let src_len = fs
        .open(src, OpenMode::READ)
        .and_then(|f| f.len())
        .map_err(|e| BinlogError::io("stat", src.display(), e))?;
    info.dropped_tail = crate::file_log::nonzero_after(fs, src, keep as u64, src_len)?;
    info.bytes = keep as u64;
    if fs.exists(dst) {
        fs.remove(dst)
            .map_err(|e| BinlogError::io("remove", dst.display(), e))?;
    }
    let f = fs
        .open(dst, OpenMode::CREATE)
        .map_err(|e| BinlogError::io("create", dst.display(), e))?;
    f.write_at(&out, 0)
        .map_err(|e| BinlogError::io("write", dst.display(), e))?;
    f.sync_data()
        .map_err(|e| BinlogError::io("fdatasync", dst.display(), e))?;
    Ok(info)
}

/// Exports every file of the binlog in `src_dir` (files `src_base` in `naming` style) into
/// `dst_dir` as classic files `<dst_base>.000001`, ... with `<dst_base>.index`, rewriting the
/// ROTATE events to the new names. Returns the files written.
pub fn export_dir(
    fs: &dyn FileSystem,
    src_dir: &Path,
    src_base: &str,
    naming: Naming,
    dst_dir: &Path,
    dst_base: &str,
) -> Result<Vec<PathBuf>> {
    let mut nos: Vec<u32> = fs
        .list_dir(src_dir)
        .map_err(|e| BinlogError::io("list", src_dir.display(), e))?
        .iter()
        .filter_map(|n| naming.parse(src_base, n))
        .collect();
    nos.sort_unstable();
    fs.create_dir_all(dst_dir)
        .map_err(|e| BinlogError::io("create directory", dst_dir.display(), e))?;
    let mut written = Vec::new();
    let mut index = String::new();
    for (i, no) in nos.iter().enumerate() {
        let name = Naming::Classic.file_name(dst_base, i as u32 + 1);
        let next = Naming::Classic.file_name(dst_base, i as u32 + 2);
        let src = src_dir.join(naming.file_name(src_base, *no));
        let dst = dst_dir.join(&name);
        export_file(fs, &src, &dst, Some(&next))?;
        index.push_str(&format!("./{name}\n"));
        written.push(dst);
    }
    let index_path = dst_dir.join(Naming::index_name(dst_base));
    if fs.exists(&index_path) {
        fs.remove(&index_path)
            .map_err(|e| BinlogError::io("remove", index_path.display(), e))?;
    }
    let f = fs
        .open(&index_path, OpenMode::CREATE)
        .map_err(|e| BinlogError::io("create", index_path.display(), e))?;
    f.write_at(index.as_bytes(), 0)
        .map_err(|e| BinlogError::io("write", index_path.display(), e))?;
    fs.sync_dir(dst_dir)
        .map_err(|e| BinlogError::io("fsync", dst_dir.display(), e))?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file_log::{Binlog, BinlogOptions, FileEvents};
    use crate::fs::SimFs;
    use crate::group::EventGroup;
    use std::sync::Arc;

    #[test]
    fn export_drops_zero_tail_and_unfinished_group() {
        let fs = SimFs::new();
        let mut o = BinlogOptions::new("/e");
        o.max_binlog_size = 1 << 16;
        let b = Binlog::open_with_fs(Arc::new(fs.clone()), o).unwrap();
        let ddl = |i: u32| EventGroup::ddl(1, 1, 1, "", &format!("CREATE DATABASE d{i}"));
        b.append(&mut [ddl(1), ddl(2)]).unwrap();
        let good_end = b.sync().unwrap();
        let info = b.append(&mut [ddl(3)]).unwrap();
        // Damage the last event of the third group: it becomes an unfinished group.
        let src = Path::new("/e/binlog-000000");
        fs.scribble(src, info.groups[0].end.offset - 5, &[0xee; 5]);
        let dst = Path::new("/e/out.000001");
        let x = export_file(&fs, src, dst, None).unwrap();
        assert_eq!(x.groups, 2);
        assert_eq!(x.bytes, good_end.offset);
        assert!(x.dropped_tail > 0);
        assert_eq!(fs.read_all(dst).unwrap().len() as u64, good_end.offset);
        let evs: Vec<_> = FileEvents::open(&fs, dst)
            .unwrap()
            .collect::<Result<_>>()
            .unwrap();
        let n = evs.len();
        assert_eq!(n, 2 + 4);
    }
}
