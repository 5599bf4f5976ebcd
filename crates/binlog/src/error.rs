//! The binlog layer's error type.

use std::io;

/// Errors of the binlog layer. Converted to a MariaDB `SqlError` at the SQL edge.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BinlogError {
    /// An I/O call failed; `op` names the operation (`"fdatasync"`, `"write"`, ...).
    #[error("binlog I/O error: {op} {path}: {source}")]
    Io {
        op: &'static str,
        path: String,
        #[source]
        source: io::Error,
    },
    /// The binlog refuses work after an earlier failure it cannot retry safely (a failed
    /// fsync, a failed write of a group). Restarting runs recovery.
    #[error("binlog is unusable after an earlier failure, restart to recover: {0}")]
    Poisoned(String),
    /// Bytes on disk that are not a valid binlog where one is required.
    #[error("corrupt binlog {file} at offset {offset}: {reason}")]
    Corrupt {
        file: String,
        offset: u64,
        reason: String,
    },
    /// An event that does not parse.
    #[error("malformed binlog event: {0}")]
    Decode(String),
    /// A value that cannot be encoded for its column.
    #[error("cannot encode value for binlog: {0}")]
    Value(String),
    /// A GTID position that cannot be served (purged, or never logged).
    #[error("{0}")]
    GtidNotFound(String),
    /// A file name that is not part of the binlog.
    #[error("binlog file not found: {0}")]
    UnknownFile(String),
    /// A caller error (bad option, wrong API use).
    #[error("{0}")]
    InvalidArgument(String),
}

pub type Result<T, E = BinlogError> = std::result::Result<T, E>;

impl BinlogError {
    pub(crate) fn io(op: &'static str, path: impl std::fmt::Display, source: io::Error) -> Self {
        BinlogError::Io {
            op,
            path: path.to_string(),
            source,
        }
    }

    pub(crate) fn decode(msg: impl Into<String>) -> Self {
        BinlogError::Decode(msg.into())
    }
}
