//! onelog tools: the `onelog` binary's subcommands (benchmarks, binlog dump/export,
//! backup and point-in-time restore).

pub mod backup_cmd;
pub mod bench;
pub mod binlog_cmd;
pub mod restore;
