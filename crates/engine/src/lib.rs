//! onelog-engine: transactional tables on RocksDB whose only write-ahead log is a
//! MariaDB-format binary log.
//!
//! The front door is [`Engine`]: open a data directory, [`Engine::begin`] a [`Txn`], read and
//! write rows and index ranges, commit through group commit. DDL goes through
//! [`Engine::ddl`]. The SQL layer (`onelog-sql`) is built on this API.
//!
//! Parts, one file each:
//! - `catalog.rs`: databases, tables, indexes (immutable snapshots); `foreign_keys.rs`:
//!   FOREIGN KEY constraints in the catalog (kept consistent across renames).
//! - `keys.rs`: the RocksDB key layout; `keycode.rs`: order-preserving key encoding;
//!   `rowcodec.rs`: row value encoding.
//! - `locks.rs`: row and metadata locks, lock waits, deadlock detection.
//! - `table_locks.rs`: the metadata locks `LOCK TABLES` holds for a session.
//! - `txn.rs`: transactions: buffered writes, snapshot reads, statement rollback, savepoints.
//! - `commit.rs`: the group-commit log writer (one write + one sync per group);
//!   `commit_order.rs`: a commit order imposed from outside (parallel replica apply).
//! - `recovery.rs`: replay of the binlog after the applied position.
//! - `ddl.rs`: catalog changes, index builds, table rewrites (with column conversions);
//!   `ddl/temp.rs`: temporary tables (session-private, never logged).
//! - `admin.rs`: binlog management (SHOW BINARY LOGS, PURGE, RESET MASTER, ...).
//! - `backup.rs`: BACKUP SERVER (a checkpoint and the binlog tail after it).
//! - `layout.rs`: the index and filter layout of new table files, by the data's size.
//! - `wait.rs`: announces blocking waits to the server's thread pool.

pub mod catalog;
mod error;
mod foreign_keys;
mod keycode;
mod keys;
mod locks;
mod rowcodec;

mod active;
mod admin;
mod autoinc;
mod backup;
mod bulk;
mod check;
mod commit;
mod commit_order;
mod ddl;
mod deadlock;
mod engine;
mod histogram;
mod layout;
mod priority;
mod recovery;
mod replicate;
mod scan;
mod semisync;
mod sequence;
mod slave_pos;
mod stats;
mod table_locks;
mod table_options;
mod txn;
pub mod wait;
mod wal;
mod xa;

pub use active::OpenTxn;
pub use admin::BinlogEventRow;
pub use catalog::{
    Catalog, CheckDef, ColumnDef, DatabaseDef, IndexDef, IndexId, NumAttrs, ObjectKind,
    StoredObject, TableDef, TableId,
};
pub use check::CheckReport;
pub use commit_order::CommitOrder;
pub use ddl::{
    is_temp as is_temp_table, AlterOp, ColumnConverter, Converter, Ddl, DdlLog, DdlOutcome,
};
pub use deadlock::{DeadlockReport, DeadlockTxn};
pub use engine::{
    BinlogFs, CommitHistograms, DdlReplayer, Engine, EngineOptions, EngineStatus, LogMode,
};
pub use error::{EngineError, Result};
pub use foreign_keys::{ibfk_number, FkAction, ForeignKeyDef};
pub use histogram::{Bucket, HistogramSnapshot};
pub use onelog_binlog::{Gtid, Preallocate, RowMetadata, XaXid};
pub use replicate::LoggedChange;
pub use scan::{KeyRange, RowCursor, ScanOptions};
pub use semisync::{SemiSync, SemiSyncStatus, WaitPoint};
pub use sequence::{used as seq_used, AutoInc, NextValue, SeqDef, SetValue};
pub use stats::TableStats;
pub use table_locks::{TableLockMode, TableLocks};
pub use table_options::{TableOptionSet, CREATE_OPTION_ORDER};
pub use txn::{CommitInfo, Isolation, LockMode, LoggedStatement, Row, Txn};
