//! onelog-binlog: the MariaDB-format binary log that is onelog's write-ahead log.
//!
//! - [`event`]: binlog v4 events (framing, CRC32, typed bodies).
//! - [`rows`]: the binary row format of rows events.
//! - [`gtid`]: GTIDs and the binlog's GTID state.
//! - [`group`]: building one transaction's event group before it is placed in the log.
//! - [`redo`]: onelog's private row-redo event (row changes of statements replicas get
//!   as QUERY events).
//! - [`fs`]: the file layer (real files, and a simulated disk for power-loss tests).
//! - `file_log`: the set of binlog files, [`Binlog`]: append, sync, rotate, purge, read,
//!   recover.
//! - [`dump`]: `mariadb-binlog -v`-style text; [`export`]: classic-format copies.
//! - [`stream`]: the event stream of a replica's binlog dump.
//! - [`backup_info`]: the position file of a backup; [`LogDir`] reads a directory of
//!   binlog files without opening it as a log (backups, point-in-time restores).

pub mod backup_info;
mod codec;
mod decimal_bin;
pub mod dump;
mod error;
pub mod event;
pub mod export;
mod file_log;
pub mod fs;
pub mod group;
pub mod gtid;
pub mod redo;
pub mod rows;
mod rows_enum;
pub mod stream;
pub mod xa;

pub use error::{BinlogError, Result};
pub use event::{Event, EventHeader};
pub use file_log::{
    AppendInfo, AppendedGroup, Binlog, BinlogOptions, BinlogStats, Chunk, EventReader, FileDetail,
    FileEvents, FileStart, Follower, GroupReader, LogDir, LogPos, Naming, Next, Preallocate,
    ReadEvent, ReadGroup, RecoveryReport, Retained, SyncMethod, FOLLOW_SYNC_AFTER,
};
pub use fs::{FileSystem, LogFile, OpenMode, RealFs, SimFs};
pub use group::{EventGroup, GroupKind};
pub use gtid::{format_gtid_list, parse_gtid_list, Gtid, GtidState};
pub use redo::RowRedo;
pub use rows::{ColumnDef, ColumnSpec, RowChange, RowMetadata, TableDef};
pub use xa::{XaPrepare, XaXid};
