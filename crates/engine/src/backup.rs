//! `BACKUP SERVER TO 'dir'`: a consistent copy of the running server.
//!
//! The copy is what a crash would leave, taken without stopping commits:
//! 1. every binlog file is kept from purging until the copy is done;
//! 2. a RocksDB checkpoint (`dir/rocksdb`: table files hard-linked when on the same file
//!    system, MANIFEST and the rest copied) *without* a memtable flush: it holds what
//!    RocksDB has persisted, a prefix of the applied groups ending at its applied
//!    position, all of them durable (memtables are switched only between durable groups).
//!    A flush here would persist groups whose sync is still running, which the live
//!    server must never do;
//! 3. the binlog is synced, and its files from the one holding the checkpoint's applied
//!    position up to the synced end (a group boundary at or after it) are copied; the
//!    last file ends there, without the preallocated tail;
//! 4. `onelog_backup_info` is written last, with that end, its GTID position (read back
//!    from the copied files) and the applied position.
//!
//! With `--binlog-storage=file` and `--skip-log-bin` RocksDB's WAL holds every commit: the
//! checkpoint is taken, and the binlog's end read, while no group commits (see
//! `backup_quiesced`), and nothing is left to replay.
//!
//! Starting `onelogd --datadir=dir` then runs ordinary crash recovery: the groups after
//! the applied position are replayed from the copied binlog (and `onelog_backup_info`
//! becomes `onelog_backup_info.started`: the directory is a data directory from then on). The data directory's other
//! files are left out: `master.info` and `gtid_slave_pos` are the source's replica
//! configuration (a replica provisioned from the backup gets its own), the error log and
//! index-build spill files are the source's own.

use std::path::Path;

use onelog_binlog::backup_info::{BackupInfo, INFO_FILE};
use onelog_binlog::{GtidState, LogDir};
use onelog_types::SqlError;

use crate::engine::{Engine, LogMode};
use crate::error::{EngineError, Result};
use crate::keys;
use crate::wal::LogPos;

/// A backup started as a server stops being a backup: its tables and binlog move on from
/// the position `onelog_backup_info` names. The file is renamed (its positions kept), so
/// that `onelog restore` refuses the directory.
pub(crate) fn retire_backup_info(datadir: &Path) -> Result<()> {
    let info = datadir.join(INFO_FILE);
    if !info.exists() {
        return Ok(());
    }
    let to = datadir.join(format!("{INFO_FILE}.started"));
    std::fs::rename(&info, &to)
        .and_then(|_| std::fs::File::open(datadir)?.sync_all())
        .map_err(|e| EngineError::Storage(format!("renaming {}: {e}", info.display())))?;
    onelog_types::note!(
        "starting from a backup: {} is now {}",
        info.display(),
        to.display()
    );
    Ok(())
}

fn sql(code: u16, msg: String) -> EngineError {
    EngineError::Sql(SqlError::from_code(code, msg))
}

/// MariaDB's "Can't create/write to file" family: 1004 (create), 1026 (write).
fn io_error(code: u16, what: &str, path: &Path, e: &std::io::Error) -> EngineError {
    let verb = if code == 1004 { "create" } else { "write" };
    sql(
        code,
        format!(
            "Can't {verb} file '{}' ({what}; errno: {} \"{e}\")",
            path.display(),
            e.raw_os_error().unwrap_or(0)
        ),
    )
}

fn binlog_err(e: onelog_binlog::BinlogError) -> EngineError {
    match e {
        onelog_binlog::BinlogError::Io { op, path, source } => {
            let code = if op == "read" || op == "open" {
                1026
            } else {
                1004
            };
            io_error(code, op, Path::new(&path), &source)
        }
        e => EngineError::Binlog(e.to_string()),
    }
}

/// Makes `out` an empty directory. Returns whether it was created (else it existed, empty).
fn prepare_dir(out: &Path) -> Result<bool> {
    if !out.is_absolute() {
        return Err(sql(
            1004,
            format!(
                "Can't create backup directory '{}': the path must be absolute",
                out.display()
            ),
        ));
    }
    match std::fs::read_dir(out) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(sql(
                    1086,
                    format!(
                        "File '{}' already exists (the backup directory must be new or empty)",
                        out.display()
                    ),
                ));
            }
            Ok(false)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(out).map_err(|e| io_error(1004, "mkdir", out, &e))?;
            Ok(true)
        }
        Err(e) => Err(io_error(1004, "open", out, &e)),
    }
}

/// Removes what a failed backup wrote (the directory itself when it made it).
fn clean_up(out: &Path, created: bool) {
    if created {
        let _ = std::fs::remove_dir_all(out);
        return;
    }
    if let Ok(entries) = std::fs::read_dir(out) {
        for e in entries.flatten() {
            let p = e.path();
            let _ = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
        }
    }
}

/// The applied position a checkpoint holds (None: nothing flushed yet, replay from the
/// start of the binlog).
fn checkpoint_applied(dir: &Path) -> Result<Option<LogPos>> {
    let db = rocksdb::DB::open_for_read_only(&rocksdb::Options::default(), dir, false)?;
    let v = db.get(keys::APPLIED)?;
    v.map(|v| LogPos::decode(&v)).transpose()
}

impl Engine {
    /// `BACKUP SERVER TO 'out'` (see the module docs). `out` must be an absolute path to a
    /// new or empty directory; on failure it is left as it was found.
    pub fn backup(&self, out: &Path) -> Result<BackupInfo> {
        let created = prepare_dir(out)?;
        let r = crate::wait::blocking(|| match self.opts.mode {
            LogMode::Engine => self.backup_into(out),
            LogMode::File | LogMode::Off => self.backup_quiesced(out),
        });
        if r.is_err() {
            clean_up(out, created);
        }
        r
    }

    /// A RocksDB checkpoint in `dir`, without a memtable flush (its WAL, when it has one,
    /// is copied).
    fn checkpoint_into(&self, dir: &Path) -> Result<()> {
        rocksdb::checkpoint::Checkpoint::new(&self.db)?
            .create_checkpoint_with_log_size(dir, u64::MAX)
            .map_err(|e| {
                sql(
                    1026,
                    format!(
                        "Error writing file '{}' (RocksDB checkpoint: {e})",
                        dir.display()
                    ),
                )
            })
    }

    fn backup_into(&self, out: &Path) -> Result<BackupInfo> {
        let b = self.wal.binlog.as_ref().expect("engine mode has a binlog");
        let hold = b.retain_files();
        self.checkpoint_into(&out.join("rocksdb"))?;
        // Nothing applied yet: from the start. A position in a file PURGE removed: that
        // file's groups were all applied (see `Wal::for_each_group`), the next file's on.
        let first = crate::wal::Wal::first_pos(b);
        let applied =
            checkpoint_applied(&out.join("rocksdb"))?.map_or(first, |p| p.to_binlog().max(first));
        // Everything appended is made durable, so the end reached covers every group the
        // checkpoint holds (with sync_binlog != 1 RocksDB may hold groups not synced yet).
        self.committer.barrier()?;
        self.wal.sync()?;
        let end = b.synced_pos();
        hold.check().map_err(binlog_err)?;
        if end < applied {
            return Err(EngineError::Corrupt(format!(
                "the checkpoint's applied position {applied} is beyond the binlog's end {end}"
            )));
        }
        copy_binlog(b, applied, end, out)?;
        hold.check().map_err(binlog_err)?;
        drop(hold);
        self.finish_backup(out, Some((b, applied, end)))
    }

    /// The backup with `--binlog-storage=file` and `--skip-log-bin`, where RocksDB's own
    /// WAL holds every committed transaction: the checkpoint is taken, and the binlog's end
    /// read, while no group commits, so the two are the same point. The binlog file that
    /// end is in is copied up to it (for the GTID position and for replicas); nothing is
    /// left to replay. Without a binlog the checkpoint is the whole backup.
    fn backup_quiesced(&self, out: &Path) -> Result<BackupInfo> {
        let b = self.wal.binlog.as_ref();
        let hold = b.map(|b| b.retain_files());
        let end = self.committer.quiesced(|| -> Result<_> {
            self.checkpoint_into(&out.join("rocksdb"))?;
            self.wal.sync()?;
            Ok(b.map(|b| b.synced_pos()))
        })?;
        let (Some(b), Some(end), Some(hold)) = (b, end, hold) else {
            return self.finish_backup(out, None);
        };
        let start = onelog_binlog::LogPos::new(end.file_no, 0);
        copy_binlog(b, start, end, out)?;
        hold.check().map_err(binlog_err)?;
        drop(hold);
        // Applied: all of it (a backup in these modes needs no replay).
        self.finish_backup(out, Some((b, end, end)))
    }

    /// Syncs the backup directory and writes `onelog_backup_info` last: the binlog's end,
    /// its GTID position (read back from the copied files, which checks them too) and the
    /// applied position; without a binlog, the replica position only.
    fn finish_backup(
        &self,
        out: &Path,
        log: Option<(
            &onelog_binlog::Binlog,
            onelog_binlog::LogPos,
            onelog_binlog::LogPos,
        )>,
    ) -> Result<BackupInfo> {
        std::fs::File::open(out)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_error(1026, "fsync", out, &e))?;
        let mut info = BackupInfo {
            server_id: self.opts.server_id,
            gtid_slave_pos: onelog_binlog::parse_gtid_list(&self.gtid_slave_pos())
                .unwrap_or_default(),
            ..BackupInfo::default()
        };
        if let Some((b, applied, end)) = log {
            let o = b.options();
            let dir = LogDir::open_with(
                std::sync::Arc::new(onelog_binlog::RealFs),
                out,
                &o.base_name,
                o.naming,
            )
            .map_err(binlog_err)?;
            let start = dir.file_start(applied.file_no).map_err(binlog_err)?;
            let mut state = GtidState::from_list(&start.start_state);
            let from = onelog_binlog::LogPos::new(applied.file_no, 0);
            for g in dir.groups(from, Some(end)) {
                state.record(g.map_err(binlog_err)?.gtid);
            }
            info.binlog_file = b.file_name(end.file_no);
            info.binlog_pos = end.offset;
            info.gtid_binlog_pos = state.binlog_pos();
            info.gtid_binlog_state = state.binlog_state();
            info.applied_file = b.file_name(applied.file_no);
            info.applied_pos = applied.offset;
        }
        info.write(out).map_err(binlog_err)?;
        onelog_types::note!(
            "backup written to {}: binlog {}:{}, GTID position '{}'",
            out.display(),
            info.binlog_file,
            info.binlog_pos,
            onelog_binlog::format_gtid_list(&info.gtid_binlog_pos)
        );
        Ok(info)
    }
}

/// Copies the binlog files from the one holding `from` to the one holding `end`, the last
/// one up to `end` (without its preallocated tail).
fn copy_binlog(
    b: &onelog_binlog::Binlog,
    from: onelog_binlog::LogPos,
    end: onelog_binlog::LogPos,
    out: &Path,
) -> Result<()> {
    let sizes: std::collections::HashMap<String, u64> = b.list_files().into_iter().collect();
    for no in from.file_no..=end.file_no {
        let name = b.file_name(no);
        let len = if no == end.file_no {
            end.offset
        } else {
            *sizes
                .get(&name)
                .ok_or_else(|| EngineError::Binlog(format!("binlog file {name} is gone")))?
        };
        b.copy_prefix(no, len, &out.join(&name))
            .map_err(binlog_err)?;
    }
    Ok(())
}
