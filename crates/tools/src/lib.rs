//! onelog tools: the `onelog` binary's subcommands (benchmarks, binlog dump/export).

pub mod bench;
pub mod binlog_cmd;
