//! Engine errors, with the MariaDB error each one becomes at the SQL edge.

use onelog_types::{code, SqlError};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("Duplicate entry '{value}' for key '{key}'")]
    DuplicateKey { key: String, value: String },
    #[error("Lock wait timeout exceeded; try restarting transaction")]
    LockWaitTimeout,
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,
    #[error("Unknown database '{0}'")]
    NoSuchDatabase(String),
    #[error("Can't create database '{0}'; database exists")]
    DatabaseExists(String),
    #[error("Can't drop database '{0}'; database doesn't exist")]
    DropMissingDatabase(String),
    #[error("Table '{db}.{table}' doesn't exist")]
    NoSuchTable { db: String, table: String },
    #[error("Table '{0}' already exists")]
    TableExists(String),
    #[error("Unknown table '{0}'")]
    UnknownTable(String),
    #[error("'{0}' is a view")]
    IsView(String),
    #[error("{}", object_exists(*.kind, .db, .name))]
    ObjectExists {
        kind: crate::ObjectKind,
        db: String,
        name: String,
    },
    #[error("{}", no_such_object(*.kind, .names))]
    NoSuchObject {
        kind: crate::ObjectKind,
        names: Vec<(String, String)>,
    },
    #[error("Duplicate key name '{0}'")]
    DuplicateIndexName(String),
    #[error("Can't DROP INDEX `{0}`; check that it exists")]
    NoSuchIndex(String),
    #[error("Duplicate column name '{0}'")]
    DuplicateColumn(String),
    #[error("Can't DROP COLUMN `{0}`; check that it exists")]
    NoSuchColumn(String),
    #[error("Key column '{0}' doesn't exist in table")]
    KeyColumnMissing(String),
    #[error("Multiple primary key defined")]
    MultiplePrimaryKey,
    /// The binlog could not be made durable: the server refuses writes from now on.
    #[error("Binary log is unusable after a failed write or sync ({0}); the server refuses writes until restarted")]
    LogFailed(String),
    #[error("Disk full writing the binary log ({0}); the commit was not made")]
    DiskFull(String),
    #[error("Error writing binary log: {0}")]
    Binlog(String),
    #[error("Storage error: {0}")]
    Storage(String),
    #[error("Corrupt data: {0}")]
    Corrupt(String),
    #[error("Server is shutting down")]
    ShuttingDown,
    #[error("Query execution was interrupted")]
    Interrupted,
    #[error("{0}")]
    Other(String),
    /// An error raised by the SQL layer inside the engine (a conversion during ALTER TABLE).
    #[error("{}", .0.message)]
    Sql(SqlError),
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;

fn object_exists(kind: crate::ObjectKind, db: &str, name: &str) -> String {
    use crate::ObjectKind as K;
    match kind {
        K::View => format!("Table '{name}' already exists"),
        K::Function | K::Procedure => format!("{} {name} already exists", kind.keyword()),
        K::Trigger => format!("Trigger '{db}.{name}' already exists"),
        K::Event => format!("Event '{name}' already exists"),
    }
}

fn no_such_object(kind: crate::ObjectKind, names: &[(String, String)]) -> String {
    use crate::ObjectKind as K;
    let (db, name) = names
        .first()
        .map(|(d, n)| (d.as_str(), n.as_str()))
        .unwrap_or_default();
    match kind {
        K::View => {
            let list: Vec<String> = names.iter().map(|(d, n)| format!("{d}.{n}")).collect();
            format!("Unknown VIEW: '{}'", list.join(","))
        }
        K::Function | K::Procedure => format!("{} {db}.{name} does not exist", kind.keyword()),
        K::Trigger => "Trigger does not exist".to_string(),
        K::Event => format!("Unknown event '{name}'"),
    }
}

impl From<rocksdb::Error> for EngineError {
    fn from(e: rocksdb::Error) -> Self {
        EngineError::Storage(e.to_string())
    }
}

impl EngineError {
    /// The error as a MariaDB client sees it.
    pub fn to_sql_error(&self) -> SqlError {
        if let EngineError::Sql(e) = self {
            return e.clone();
        }
        let c = match self {
            EngineError::DuplicateKey { .. } => code::ER_DUP_ENTRY,
            EngineError::LockWaitTimeout => code::ER_LOCK_WAIT_TIMEOUT,
            EngineError::Deadlock => code::ER_LOCK_DEADLOCK,
            EngineError::NoSuchDatabase(_) => code::ER_BAD_DB_ERROR,
            EngineError::DatabaseExists(_) => code::ER_DB_CREATE_EXISTS,
            EngineError::DropMissingDatabase(_) => code::ER_DB_DROP_EXISTS,
            EngineError::NoSuchTable { .. } => code::ER_NO_SUCH_TABLE,
            EngineError::TableExists(_) => code::ER_TABLE_EXISTS_ERROR,
            EngineError::UnknownTable(_) => code::ER_BAD_TABLE_ERROR,
            EngineError::DuplicateIndexName(_) => code::ER_DUP_KEYNAME,
            EngineError::IsView(_) => code::ER_IT_IS_A_VIEW,
            EngineError::ObjectExists { kind, .. } => match kind {
                crate::ObjectKind::View => code::ER_TABLE_EXISTS_ERROR,
                crate::ObjectKind::Function | crate::ObjectKind::Procedure => {
                    code::ER_SP_ALREADY_EXISTS
                }
                crate::ObjectKind::Trigger => code::ER_TRG_ALREADY_EXISTS,
                crate::ObjectKind::Event => code::ER_EVENT_ALREADY_EXISTS,
            },
            EngineError::NoSuchObject { kind, .. } => match kind {
                crate::ObjectKind::View => code::ER_UNKNOWN_VIEW,
                crate::ObjectKind::Function | crate::ObjectKind::Procedure => {
                    code::ER_SP_DOES_NOT_EXIST
                }
                crate::ObjectKind::Trigger => code::ER_TRG_DOES_NOT_EXIST,
                crate::ObjectKind::Event => code::ER_EVENT_DOES_NOT_EXIST,
            },
            EngineError::NoSuchIndex(_) | EngineError::NoSuchColumn(_) => {
                code::ER_CANT_DROP_FIELD_OR_KEY
            }
            EngineError::DuplicateColumn(_) => code::ER_DUP_FIELDNAME,
            EngineError::KeyColumnMissing(_) => code::ER_KEY_COLUMN_DOES_NOT_EXIST,
            EngineError::MultiplePrimaryKey => code::ER_MULTIPLE_PRI_KEY,
            EngineError::LogFailed(_) | EngineError::Binlog(_) => code::ER_ERROR_ON_WRITE,
            EngineError::DiskFull(_) => code::ER_DISK_FULL,
            EngineError::ShuttingDown => code::ER_SERVER_SHUTDOWN,
            EngineError::Interrupted => code::ER_QUERY_INTERRUPTED,
            _ => code::ER_UNKNOWN_ERROR,
        };
        SqlError::from_code(c, self.to_string())
    }
}
