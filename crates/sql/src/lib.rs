//! onelog-sql: the SQL layer and the embedded-database face of onelog.
//!
//! Open a data directory with [`Database::open`], create a [`Session`] per connection and
//! [`Session::execute`] SQL text (multi-statements allowed) or prepare statements. The
//! server crate puts the MariaDB wire protocol on top of this API.
//!
//! The lifecycle of a statement, one module per stage:
//! - [`parser`](crate::parser): text → sqlparser AST (or onelog's own AST for MariaDB
//!   administration statements); 1064 syntax errors.
//! - `binder`: names → catalog objects and column positions, types, folded constants.
//! - `planner`: access paths (point/range/covering/ordered index scans), EXPLAIN.
//! - `executor`: runs plans against an engine transaction.
//! - `expr` / `functions`: evaluation, MariaDB conversions and comparisons, functions.
//! - `session`: transactions (autocommit, statement rollback), variables, warnings,
//!   prepared statements, dispatch.
//! - `show`: SHOW statements and the read-only `information_schema`.
//! - `users`: accounts, passwords (mysql_native_password) and privileges.
//! - `database`: open, bootstrap, DDL replay for recovery, the process list.
//!
//! Differences from MariaDB worth knowing:
//! - Strings compare bytewise with trailing spaces ignored (utf8mb4_bin semantics), in
//!   expressions and in index order; MariaDB's default utf8mb4_general_ci is
//!   case-insensitive.
//! - Subqueries must be uncorrelated; UNION, views, stored routines, triggers, foreign key
//!   enforcement, RIGHT JOIN and multi-table UPDATE/DELETE are not supported (errors 1235).
//! - The session time zone is UTC (`time_zone = '+00:00'`).
//! - Accounts live in `mysql.onelog_user` and `mysql.onelog_db` (ordinary tables, so they
//!   are logged and crash-safe like any data).

pub mod parser;

mod binder;
mod database;
mod executor;
mod expr;
mod functions;
mod planner;
mod session;
mod show;
mod users;
mod vars;

pub use database::{Database, ProcessInfo};
pub use session::{PreparedInfo, Session};
pub use users::Account;

use onelog_types::{sqlstate, ColumnType, SqlError};

/// Column flags sent in result set column definitions (`*_FLAG` in mysql_com.h).
pub mod column_flags {
    pub const NOT_NULL: u16 = 1;
    pub const PRI_KEY: u16 = 2;
    pub const UNIQUE_KEY: u16 = 4;
    pub const MULTIPLE_KEY: u16 = 8;
    pub const BLOB: u16 = 16;
    pub const UNSIGNED: u16 = 32;
    pub const ZEROFILL: u16 = 64;
    pub const BINARY: u16 = 128;
    pub const ENUM: u16 = 256;
    pub const AUTO_INCREMENT: u16 = 512;
    pub const TIMESTAMP: u16 = 1024;
    pub const SET: u16 = 2048;
    pub const NO_DEFAULT_VALUE: u16 = 4096;
    pub const ON_UPDATE_NOW: u16 = 8192;
    pub const NUM: u16 = 32768;
}

/// Server status flags (`SERVER_STATUS_*`).
pub mod status_flags {
    pub const IN_TRANS: u16 = 0x0001;
    pub const AUTOCOMMIT: u16 = 0x0002;
    pub const MORE_RESULTS_EXISTS: u16 = 0x0008;
    pub const NO_INDEX_USED: u16 = 0x0020;
    pub const IN_TRANS_READONLY: u16 = 0x2000;
}

/// One column of a result set.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultColumn {
    pub name: String,
    pub org_name: String,
    pub table: String,
    pub org_table: String,
    pub db: String,
    pub ty: ColumnType,
    pub nullable: bool,
    /// [`column_flags`].
    pub flags: u16,
    /// Fractional digits (DECIMAL scale, fsp of temporal types; 31 for FLOAT/DOUBLE, 39
    /// for strings as MariaDB sends them).
    pub decimals: u8,
    /// Display length in bytes (the column definition's `column_length`).
    pub length: u32,
}

impl ResultColumn {
    /// A computed column (no table).
    pub fn expr(name: String, ty: ColumnType, nullable: bool) -> ResultColumn {
        let mut flags = if nullable { 0 } else { column_flags::NOT_NULL };
        if ty.is_unsigned() {
            flags |= column_flags::UNSIGNED;
        }
        if ty.is_binary() {
            flags |= column_flags::BINARY;
        }
        if matches!(
            ty,
            ColumnType::Int { .. }
                | ColumnType::Decimal { .. }
                | ColumnType::Double
                | ColumnType::Float
        ) {
            flags |= column_flags::NUM;
        }
        ResultColumn {
            org_name: String::new(),
            table: String::new(),
            org_table: String::new(),
            db: String::new(),
            decimals: binder::decimals_of(&ty),
            length: binder::display_len(&ty),
            name,
            ty,
            nullable,
            flags,
        }
    }

    /// A text column as SHOW statements return them.
    pub fn text(name: &str) -> ResultColumn {
        ResultColumn::expr(
            name.to_string(),
            ColumnType::Varchar {
                len: 64,
                binary: false,
            },
            true,
        )
    }

    /// An unsigned integer column as SHOW statements return them.
    pub fn uint(name: &str) -> ResultColumn {
        ResultColumn::expr(
            name.to_string(),
            ColumnType::Int {
                bytes: 8,
                unsigned: true,
            },
            true,
        )
    }
}

/// The outcome of one statement.
#[derive(Clone, Debug, PartialEq)]
pub enum QueryResult {
    Ok {
        affected_rows: u64,
        last_insert_id: u64,
        warnings: u16,
        info: String,
    },
    Rows {
        columns: Vec<ResultColumn>,
        rows: Vec<Vec<onelog_types::Value>>,
    },
}

impl QueryResult {
    pub fn ok() -> QueryResult {
        QueryResult::Ok {
            affected_rows: 0,
            last_insert_id: 0,
            warnings: 0,
            info: String::new(),
        }
    }
}

/// A MariaDB error with the SQLSTATE MariaDB sends for `code` (onelog's own corrections
/// over [`sqlstate`] for a few codes).
pub fn sql_err(code: u16, message: impl Into<String>) -> SqlError {
    let state = match code {
        1264 => "22003",
        1136 => "21S01",
        1265 => "01000",
        1366 => "22007",
        1690 => "22003",
        1111 => "HY000",
        1248 => "42000",
        1170 => "42000",
        1074 => "42000",
        1110 => "42000",
        1412 => "HY000",
        c => sqlstate(c),
    };
    SqlError::new(code, state, message)
}

/// MariaDB error numbers onelog needs that `onelog_types::code` lacks.
pub mod codes {
    pub const ER_NO_TABLES_USED: u16 = 1096;
    pub const ER_WRONG_VALUE_COUNT_ON_ROW: u16 = 1136;
    pub const ER_INVALID_ON_UPDATE: u16 = 1294;
    pub const ER_TABLE_DEF_CHANGED: u16 = 1412;
    pub const ER_CANT_DROP_DB: u16 = 1008;
}
