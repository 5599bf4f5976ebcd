//! Binlog management statements: SHOW BINARY LOGS, SHOW MASTER STATUS, FLUSH/PURGE BINARY
//! LOGS, RESET MASTER, SHOW BINLOG EVENTS, GTID positions.

use crate::engine::Engine;
use crate::error::Result;

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

impl Engine {
    /// (name, size) of every binlog file, oldest first. Empty when the binlog is off.
    pub fn binlog_files(&self) -> Vec<(String, u64)> {
        todo!()
    }
    /// (current file, position) for SHOW MASTER STATUS; None when the binlog is off.
    pub fn master_status(&self) -> Option<(String, u64)> {
        todo!()
    }
    pub fn flush_binary_logs(&self) -> Result<()> {
        todo!()
    }
    pub fn purge_binary_logs_to(&self, _name: &str) -> Result<()> {
        todo!()
    }
    pub fn purge_binary_logs_before(&self, _unix_time: i64) -> Result<()> {
        todo!()
    }
    pub fn reset_master(&self) -> Result<()> {
        todo!()
    }
    pub fn binlog_events(
        &self,
        _file: Option<&str>,
        _from_pos: u64,
        _offset: u64,
        _limit: Option<u64>,
    ) -> Result<Vec<BinlogEventRow>> {
        todo!()
    }
    pub fn gtid_binlog_pos(&self) -> String {
        todo!()
    }
    pub fn gtid_binlog_state(&self) -> String {
        todo!()
    }
}
