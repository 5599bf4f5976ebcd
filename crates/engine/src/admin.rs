//! Binlog management statements: SHOW BINARY LOGS, SHOW MASTER STATUS, FLUSH/PURGE BINARY
//! LOGS, RESET MASTER, SHOW BINLOG EVENTS, GTID positions.
//!
//! Purging never removes the active file nor a file still needed for crash recovery: it
//! first checkpoints (all applied changes flushed into RocksDB), so only files wholly
//! before the applied position can go.

use crate::engine::{Engine, LogMode};
use crate::error::{EngineError, Result};
use crate::keys;
use crate::wal::LogPos;

/// One row of SHOW BINLOG EVENTS.
#[derive(Clone, Debug)]
pub struct BinlogEventRow {
    pub log_name: String,
    pub pos: u64,
    pub event_type: String,
    pub server_id: u32,
    pub end_log_pos: u64,
    pub info: String,
}

fn no_binlog() -> EngineError {
    EngineError::Other("You are not using binary logging".into())
}

impl Engine {
    fn binlog(&self) -> Result<&onelog_binlog::Binlog> {
        self.wal.binlog.as_ref().ok_or_else(no_binlog)
    }

    /// The binlog, for readers that follow it (replication dumps); None when it is off.
    /// Writing to it is the committer's alone.
    pub fn binlog_log(&self) -> Option<&onelog_binlog::Binlog> {
        self.wal.binlog.as_ref()
    }

    /// (name, size) of every binlog file, oldest first. Empty when the binlog is off.
    pub fn binlog_files(&self) -> Vec<(String, u64)> {
        match &self.wal.binlog {
            Some(b) => b.list_files(),
            None => Vec::new(),
        }
    }

    /// Every binlog file with its starting GTID state and how much of it is in the page
    /// cache (none when the binlog is off).
    pub fn binlog_file_details(&self) -> Vec<onelog_binlog::FileDetail> {
        match &self.wal.binlog {
            Some(b) => b.file_details(),
            None => Vec::new(),
        }
    }

    /// (current file, position) for SHOW MASTER STATUS; None when the binlog is off.
    pub fn master_status(&self) -> Option<(String, u64)> {
        self.wal.binlog.as_ref().map(|b| {
            let end = b.end_pos();
            (b.active_file(), end.offset)
        })
    }

    /// (file, position) up to which the binlog is durable; None when the binlog is off.
    pub fn binlog_synced(&self) -> Option<(String, u64)> {
        self.wal.binlog.as_ref().map(|b| {
            let p = b.synced_pos();
            (b.file_name(p.file_no), p.offset)
        })
    }

    /// FLUSH BINARY LOGS: closes the current file at its used size and starts the next.
    pub fn flush_binary_logs(&self) -> Result<()> {
        let b = self.binlog()?;
        self.committer.barrier()?;
        b.rotate().map_err(|e| EngineError::Binlog(e.to_string()))?;
        self.expire_logs()
    }

    /// FLUSH ENGINE LOGS: makes every commit made so far durable in the engine's log: the
    /// binlog is synced (in `engine` mode it is that log; with `sync_binlog` 0 or N > 1
    /// the last groups may not be yet), and in the other modes RocksDB's WAL as well.
    pub fn flush_engine_logs(&self) -> Result<()> {
        self.committer.barrier()?;
        self.wal.sync()?;
        if self.opts.mode != LogMode::Engine {
            self.db.flush_wal(true)?;
        }
        Ok(())
    }

    /// The oldest position recovery may still need.
    fn recovery_floor(&self) -> Result<Option<onelog_binlog::LogPos>> {
        self.committer.barrier()?;
        // Read with the flush, before another group is applied.
        let applied = self.committer.quiesced(|| -> Result<Option<Vec<u8>>> {
            self.flush_memtables()?;
            Ok(self.db.get(keys::APPLIED)?)
        })?;
        match self.opts.mode {
            LogMode::Engine => {
                let b = self.binlog()?;
                let applied = applied.map(|v| LogPos::decode(&v)).transpose()?;
                let Some(applied) = applied else {
                    return Ok(Some(onelog_binlog::LogPos::new(0, 0)));
                };
                // Recovery needs the files from the first group not yet applied on (a
                // purged file's groups were all applied: see `Wal::for_each_group`).
                let from = onelog_binlog::LogPos::new(applied.file, applied.offset)
                    .max(crate::wal::Wal::first_pos(b));
                match b.read_groups(from).next() {
                    Some(Ok(g)) => Ok(Some(g.start)),
                    Some(Err(e)) => Err(EngineError::Binlog(e.to_string())),
                    None => Ok(Some(b.end_pos())),
                }
            }
            // File mode: prepared transactions are resolved against the active file, which
            // is never purged.
            _ => Ok(None),
        }
    }

    pub fn purge_binary_logs_to(&self, name: &str) -> Result<()> {
        let b = self.binlog()?;
        if !b.list_files().iter().any(|(n, _)| n == name) {
            return Err(EngineError::Other(format!(
                "Target log not found in binlog index: {name}"
            )));
        }
        let floor = self.recovery_floor()?;
        b.purge_to(name, floor)
            .map(|_| ())
            .map_err(|e| EngineError::Binlog(e.to_string()))
    }

    pub fn purge_binary_logs_before(&self, unix_time: i64) -> Result<()> {
        let b = self.binlog()?;
        let floor = self.recovery_floor()?;
        b.purge_before(unix_time.clamp(0, u32::MAX as i64) as u32, floor)
            .map(|_| ())
            .map_err(|e| EngineError::Binlog(e.to_string()))
    }

    /// Purges files older than `binlog_expire_logs_seconds` (called at rotation).
    pub(crate) fn expire_logs(&self) -> Result<()> {
        let secs = self.opts.binlog_expire_logs_seconds;
        if secs == 0 || self.wal.binlog.is_none() {
            return Ok(());
        }
        let now = crate::table_options::now_secs();
        self.purge_binary_logs_before(now - secs as i64)
    }

    /// RESET MASTER: removes every binlog file and starts again with an empty GTID state.
    pub fn reset_master(&self) -> Result<()> {
        let b = self.binlog()?;
        self.committer.barrier()?;
        self.committer.quiesced(|| {
            // Everything must be in RocksDB before the log that could redo it goes.
            self.flush_memtables()?;
            let end = b
                .reset(None)
                .map_err(|e| EngineError::Binlog(e.to_string()))?;
            if self.opts.mode == LogMode::Engine {
                let mut batch = rocksdb::WriteBatch::default();
                let pos = LogPos {
                    file: end.file_no,
                    offset: end.offset,
                };
                batch.put(keys::APPLIED, pos.encode());
                self.db
                    .write_opt(batch, &crate::engine::write_opts(LogMode::Engine))?;
                self.db.flush()?;
            }
            Ok(())
        })
    }

    /// SHOW BINLOG EVENTS [IN file] [FROM pos] [LIMIT offset, count].
    pub fn binlog_events(
        &self,
        file: Option<&str>,
        from_pos: u64,
        offset: u64,
        limit: Option<u64>,
    ) -> Result<Vec<BinlogEventRow>> {
        let b = self.binlog()?;
        self.committer.barrier()?;
        let name = match file {
            Some(f) => f.to_string(),
            None => match b.list_files().first() {
                Some((n, _)) => n.clone(),
                None => return Ok(Vec::new()),
            },
        };
        let no = b.file_no(&name).ok_or_else(|| {
            EngineError::Other(
                "Error when executing command SHOW BINLOG EVENTS: Could not find target log".into(),
            )
        })?;
        if !b.list_files().iter().any(|(n, _)| *n == name) {
            return Err(EngineError::Other(
                "Error when executing command SHOW BINLOG EVENTS: Could not find target log".into(),
            ));
        }
        let limit_pos = onelog_binlog::LogPos::new(no + 1, 0).min(b.end_pos());
        let mut out = Vec::new();
        let mut skipped = 0;
        for ev in b.read_events_until(onelog_binlog::LogPos::new(no, 0), limit_pos) {
            let ev = ev.map_err(|e| EngineError::Other(e.to_string()))?;
            if ev.pos.file_no != no || ev.pos.offset < from_pos {
                continue;
            }
            if skipped < offset {
                skipped += 1;
                continue;
            }
            if limit.is_some_and(|l| out.len() as u64 >= l) {
                break;
            }
            out.push(BinlogEventRow {
                log_name: name.clone(),
                pos: ev.pos.offset,
                event_type: ev.event.type_name().to_string(),
                server_id: ev.header.server_id,
                end_log_pos: ev.end.offset,
                info: event_info(&ev),
            });
        }
        Ok(out)
    }

    pub fn gtid_binlog_pos(&self) -> String {
        self.wal
            .binlog
            .as_ref()
            .map_or(String::new(), |b| b.gtid_binlog_pos())
    }

    /// Semi-synchronous replication's primary side (see `semisync.rs`).
    pub fn semisync(&self) -> &std::sync::Arc<crate::semisync::SemiSync> {
        &self.semisync
    }

    /// Installs (None: removes) the function told each time a transaction starts waiting
    /// for a row or metadata lock: a parallel replica re-checks then whether a
    /// transaction waiting for its commit turn holds what an earlier one waits for (see
    /// [`CommitOrder`](crate::CommitOrder)).
    pub fn set_lock_wait_hook(&self, hook: Option<std::sync::Arc<dyn Fn() + Send + Sync>>) {
        self.locks.set_wait_hook(hook);
    }

    /// The last GTID the binlog logged in `domain`.
    pub fn last_gtid_in_domain(&self, domain: u32) -> Option<onelog_binlog::Gtid> {
        self.wal.binlog.as_ref()?.state().last_in_domain(domain)
    }

    pub fn gtid_binlog_state(&self) -> String {
        self.wal
            .binlog
            .as_ref()
            .map_or(String::new(), |b| b.gtid_binlog_state())
    }
}

/// The Info column of SHOW BINLOG EVENTS, as MariaDB prints it.
fn event_info(ev: &onelog_binlog::ReadEvent) -> String {
    use onelog_binlog::Event;
    match &ev.event {
        Event::FormatDescription(f) => {
            format!(
                "Server ver: {}, Binlog ver: {}",
                f.server_version, f.binlog_version
            )
        }
        Event::GtidList(l) => format!("[{}]", onelog_binlog::format_gtid_list(&l.gtids)),
        Event::Gtid(g) => {
            let gtid = g.gtid(ev.header.server_id);
            if g.is_standalone() {
                format!("GTID {gtid}")
            } else {
                format!("BEGIN GTID {gtid}")
            }
        }
        Event::AnnotateRows(q) => String::from_utf8_lossy(q).into_owned(),
        Event::TableMap(t) => format!("table_id: {} ({}.{})", t.table_id, t.db, t.table),
        Event::Rows(r) => {
            if r.flags & 1 != 0 {
                format!("table_id: {} flags: STMT_END_F", r.table_id)
            } else {
                format!("table_id: {}", r.table_id)
            }
        }
        Event::Xid(x) => format!("COMMIT /* xid={x} */"),
        Event::Query(q) => {
            let sql = String::from_utf8_lossy(&q.query);
            if q.db.is_empty() {
                sql.into_owned()
            } else {
                format!("use `{}`; {sql}", q.db)
            }
        }
        Event::Rotate(r) => format!("{};pos={}", r.next_file, r.position),
        Event::BinlogCheckpoint(f) => f.clone(),
        // As MariaDB shows an event it skips as ignorable.
        Event::RowRedo(_) => format!("# Ignorable event type {} (Unknown)", ev.header.type_code),
        _ => String::new(),
    }
}
