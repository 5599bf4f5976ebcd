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
//! - `session`: transactions (autocommit, statement rollback, savepoints), variables,
//!   warnings, prepared statements (protocol and `PREPARE`/`EXECUTE`), dispatch, and the
//!   `BINLOG` statement of `mariadb-binlog` output (`session/binlog_stmt.rs`).
//! - `alter`: how ALTER TABLE converts existing values when a column changes type.
//! - `show`: SHOW statements; `info_schema`: the read-only `information_schema`.
//! - `users`: accounts, passwords (mysql_native_password) and privileges.
//! - `database`: open, bootstrap, DDL replay for recovery, the process list.
//! - `replication`: the primary side: registered replicas, what a binlog dump asks for.
//! - `locks`: LOCK TABLES and the global read lock (FLUSH TABLES WITH READ LOCK).
//! - `server_admin`: FLUSH, COM_REFRESH, SHUTDOWN, BACKUP SERVER.
//! - `load`: LOAD DATA [LOCAL] INFILE and SELECT ... INTO OUTFILE / DUMPFILE / @var, the
//!   server's own files and `secure_file_priv`; [`Client`] is what a statement needs from
//!   its connection (results as they come, LOCAL's file).
//! - `maintenance` / `checksum`: CHECK, ANALYZE, OPTIMIZE, REPAIR and CHECKSUM TABLE.
//! - `temp_tables`: CREATE TEMPORARY TABLE and the session's temporary tables (private,
//!   never logged, dropped at disconnect).
//! - `checks` / `check_print`: CHECK constraints (enforcement; MariaDB's printing of a
//!   condition, which is also the stored text evaluated).
//! - `foreign_keys`: FOREIGN KEY constraints (binding, InnoDB's enforcement and cascades,
//!   the DDL they refuse, their information_schema rows).
//!
//! Differences from MariaDB worth knowing:
//! - Strings compare under MariaDB's collations: text columns default to
//!   utf8mb4_general_ci (case- and accent-insensitive, PAD SPACE) or are utf8mb4_bin, binary
//!   strings compare bytewise; the same order holds in expressions and in index keys (see
//!   `expr` and `onelog_types::collation`). Other charsets and collations (latin1,
//!   utf8mb3, utf8mb4_unicode_ci, ...) map to these, and columns of catalogs written before
//!   collations were recorded compare as utf8mb4_bin.
//! - Queries: UNION / INTERSECT / EXCEPT (ALL / DISTINCT), correlated subqueries (EXISTS,
//!   scalar, IN, ANY / ALL) run per outer row with results cached per outer value, INNER /
//!   CROSS / LEFT / RIGHT / NATURAL / USING joins, multi-table UPDATE and DELETE, WITH
//!   and WITH RECURSIVE (anchor UNION [ALL] one recursive SELECT), row constructors in
//!   comparisons, IN lists and IN (SELECT ...), window functions (ranking, LAG/LEAD,
//!   FIRST/LAST/NTH_VALUE and aggregates OVER partitions, orders, ROWS/RANGE frames and
//!   named windows; see `binder/window.rs`), views (`views.rs`, `view_dml.rs`). Not
//!   supported (error 1235): FULL JOIN, `GROUP BY ... WITH ROLLUP`, a LAG/LEAD offset
//!   that is not a constant, sequences (CREATE SEQUENCE, NEXTVAL).
//! - Stored functions, procedures and triggers (`routines/`) run their bodies' statements
//!   through the ordinary path; known gaps: GET DIAGNOSTICS, SQLWARNING handlers for
//!   statement warnings, BEFORE INSERT triggers see the generated AUTO_INCREMENT value,
//!   REPLACE and ON DUPLICATE KEY UPDATE fire no DELETE/UPDATE triggers, and a routine runs
//!   under the session's sql_mode rather than the one it was created with.
//! - A table written through two aliases of one multi-table UPDATE gets the changes of the
//!   alias written first in FROM, then the other's (MariaDB leaves the order unspecified);
//!   a row matched several times takes its values from the first joined row in onelog's
//!   join order, which need not be MariaDB's.
//! - The session time zone is UTC (`time_zone = '+00:00'`).
//! - CHECK constraints print as MariaDB prints them for the usual operators and functions;
//!   MariaDB rewrites some conditions further (`length` to `octet_length` is done, but not
//!   e.g. `false` to `0` inside functions or CAST's charset), and a column constraint's
//!   text keeps the column's old name after a rename.
//! - ALTER TABLE: partitions are not supported;
//!   `ALGORITHM`/`LOCK` clauses are accepted and ignored
//!   (every ALTER holds an exclusive metadata lock); a unique key on a TEXT column is
//!   unique on its first 768 characters (MariaDB uses a hash of the whole value); notes
//!   such as 1292 for trailing spaces show in SHOW WARNINGS with level Warning.
//! - Accounts live in `mysql.onelog_user` and `mysql.onelog_db`; account statements are
//!   logged as MariaDB 10.11 logs them, their row changes as onelog's private row redo
//!   beside the statement, and are crash-safe like any data (`account_stmt.rs`).

pub mod parser;

mod access;
mod account_stmt;
mod alter;
mod binder;
mod check_print;
mod checks;
mod checksum;
mod conn_stats;
mod create_select;
mod database;
mod dates;
mod defaults;
mod engine_status;
mod events;
mod executor;
mod expr;
mod foreign_keys;
mod functions;
mod info_schema;
mod inlist;
mod load;
mod locks;
mod maintenance;
mod num_attrs;
mod planner;
mod prepared_count;
mod replication;
mod routines;
mod sequences;
mod server_admin;
mod session;
mod shape;
mod show;
mod ssl_require;
mod syntax_depth;
mod temp_tables;
mod user_locks;
mod users;
mod vars;
mod view_dml;
mod views;
mod watchdog;

pub use conn_stats::ConnStats;
pub use database::{Database, ProcessInfo};
pub use load::files::normalize_secure_dir as normalize_secure_file_priv;
pub use load::Client;
pub use parser::ReplicaStmt;
pub use replication::{DumpVars, ReplicaControl, ReplicaHost, Replicas};
pub use server_admin::refresh;
pub use session::{PreparedInfo, Session};
pub use ssl_require::{CertNames, PeerTls, SslRequire};
pub use users::Account;

use onelog_types::{sqlstate, ColumnType, SqlError};

/// Column flags sent in result set column definitions (`*_FLAG` in mysql_com.h).
pub use onelog_types::column_flag as column_flags;

/// Server status flags (`SERVER_STATUS_*`).
pub mod status_flags {
    pub const IN_TRANS: u16 = 0x0001;
    pub const AUTOCOMMIT: u16 = 0x0002;
    pub const MORE_RESULTS_EXISTS: u16 = 0x0008;
    pub const NO_INDEX_USED: u16 = 0x0020;
    pub const NO_BACKSLASH_ESCAPES: u16 = 0x0200;
    pub const IN_TRANS_READONLY: u16 = 0x2000;
    pub const ANSI_QUOTES: u16 = 0x8000;
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
    /// MariaDB's NULL type (MYSQL_TYPE_NULL, sent instead of `ty`'s code): a bare NULL and
    /// expressions of only NULLs. `ty` is then a zero-length binary string.
    pub null_type: bool,
}

impl ResultColumn {
    /// The column's wire metadata (type code, length, decimals, flags), from which the
    /// text protocol also formats its values.
    pub fn wire(&self) -> onelog_protocol::WireType {
        let mut w = onelog_protocol::wire_type(&self.ty);
        if self.null_type {
            w.type_code = onelog_types::type_code::NULL;
        }
        w.length = self.length;
        w.decimals = self.decimals;
        w.flags |= self.flags;
        w
    }

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
            null_type: false,
        }
    }

    /// A column of MariaDB's NULL type (`SELECT NULL`).
    pub fn null(name: String) -> ResultColumn {
        let mut rc = ResultColumn::expr(name, binder::NULL_TYPE, true);
        rc.null_type = true;
        rc.flags |= column_flags::NUM;
        rc.decimals = 0;
        rc.length = 0;
        rc
    }

    /// A text column as SHOW statements return them.
    pub fn text(name: &str) -> ResultColumn {
        ResultColumn::expr(
            name.to_string(),
            ColumnType::varchar(64, onelog_types::Collation::DEFAULT),
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
        1461 => "42000",
        1170 => "42000",
        1074 => "42000",
        1110 => "42000",
        1412 => "HY000",
        1222 => "21000",
        1250 => "42000",
        1288 => "HY000",
        1093 => "HY000",
        4025 => "23000",
        1091 => "42000",
        1826 => "HY000",
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
    pub const ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT: u16 = 1222;
    pub const ER_TABLENAME_NOT_ALLOWED_HERE: u16 = 1250;
    pub const ER_NON_UPDATABLE_TABLE: u16 = 1288;
    pub const ER_UPDATE_TABLE_USED: u16 = 1093;
    pub const ER_UNKNOWN_CHARACTER_SET: u16 = 1115;
    pub const ER_COLLATION_CHARSET_MISMATCH: u16 = 1253;
    pub const ER_UNKNOWN_COLLATION: u16 = 1273;
    pub const ER_WITH_COL_WRONG_LIST: u16 = 4002;
    pub const ER_WRONG_WINDOW_SPEC_NAME: u16 = 4009;
    pub const ER_DUP_WINDOW_NAME: u16 = 4010;
    pub const ER_PARTITION_LIST_IN_REFERENCING_WINDOW_SPEC: u16 = 4011;
    pub const ER_ORDER_LIST_IN_REFERENCING_WINDOW_SPEC: u16 = 4012;
    pub const ER_WINDOW_FRAME_IN_REFERENCED_WINDOW_SPEC: u16 = 4013;
    pub const ER_BAD_COMBINATION_OF_WINDOW_FRAME_BOUND_SPECS: u16 = 4014;
    pub const ER_WRONG_PLACEMENT_OF_WINDOW_FUNCTION: u16 = 4015;
    pub const ER_NOT_ALLOWED_WINDOW_FRAME: u16 = 4017;
    pub const ER_NO_ORDER_LIST_IN_WINDOW_SPEC: u16 = 4018;
    pub const ER_RANGE_FRAME_NEEDS_SIMPLE_ORDERBY: u16 = 4019;
    pub const ER_WRONG_TYPE_FOR_ROWS_FRAME: u16 = 4020;
    pub const ER_WRONG_TYPE_FOR_RANGE_FRAME: u16 = 4021;
    pub const ER_INVALID_NTILE_ARGUMENT: u16 = 4024;
    pub const ER_SUM_FUNC_WITH_WINDOW_FUNC_AS_ARG: u16 = 4074;
    pub const ER_DUP_QUERY_NAME: u16 = 4004;
    pub const ER_TOO_HIGH_LEVEL_OF_NESTING_FOR_SELECT: u16 = 1473;
    pub const ER_DUP_CONSTRAINT_NAME: u16 = 1826;
    pub const ER_CONSTRAINT_FAILED: u16 = 4025;
    pub const ER_GENERATED_COLUMN_FUNCTION_IS_NOT_ALLOWED: u16 = 1901;
    pub const ER_CANT_DROP_FIELD_OR_KEY: u16 = 1091;
}

/// First of the 256 code points (U+10FF00..=U+10FFFF, supplementary private use area B)
/// that stand for the bytes of a query that are not valid UTF-8.
const RAW_BYTE_BASE: u32 = 0x10FF00;

/// Turns a query's bytes into text for the parser without losing binary data: connectors
/// (mysqlclient, PyMySQL, libmariadb's `mysql_real_escape_string`) send BLOB values as
/// `_binary'...'` literals whose bytes need not be UTF-8. Valid UTF-8 is kept; every
/// other byte, and every byte of a valid character in U+10FF00..=U+10FFFF itself, becomes
/// the code point U+10FF00 + byte, which [`literal_bytes`] maps back when a string literal
/// becomes a value, so every literal's bytes survive exactly.
pub fn decode_query(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    let is_raw = |c: char| c as u32 >= RAW_BYTE_BASE;
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !s.chars().any(is_raw) {
            return std::borrow::Cow::Borrowed(s);
        }
    }
    let raw = |out: &mut String, bs: &[u8]| {
        for &b in bs {
            out.push(char::from_u32(RAW_BYTE_BASE + b as u32).unwrap());
        }
    };
    let good = |out: &mut String, s: &str| {
        let mut buf = [0u8; 4];
        for c in s.chars() {
            if is_raw(c) {
                raw(out, c.encode_utf8(&mut buf).as_bytes());
            } else {
                out.push(c);
            }
        }
    };
    let mut rest = bytes;
    let mut out = String::with_capacity(bytes.len() + 16);
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                good(&mut out, s);
                break;
            }
            Err(e) => {
                let ok = e.valid_up_to();
                good(&mut out, std::str::from_utf8(&rest[..ok]).unwrap());
                let bad = e.error_len().unwrap_or(rest.len() - ok);
                raw(&mut out, &rest[ok..ok + bad]);
                rest = &rest[ok + bad..];
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The bytes of a string literal's text, undoing [`decode_query`].
pub fn literal_bytes(s: &str) -> Vec<u8> {
    if !s.chars().any(|c| c as u32 >= RAW_BYTE_BASE) {
        return s.as_bytes().to_vec();
    }
    let mut out = Vec::with_capacity(s.len());
    let mut buf = [0u8; 4];
    for c in s.chars() {
        let n = c as u32;
        if n >= RAW_BYTE_BASE {
            out.push((n - RAW_BYTE_BASE) as u8);
        } else {
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}

#[cfg(test)]
mod raw_bytes_tests {
    #[test]
    fn binary_query_bytes_round_trip() {
        let q: &[u8] = b"INSERT INTO t VALUES (_binary'\xff\xfe\x00a\xc3\xa9\xe2\x82')";
        let s = super::decode_query(q);
        let lit = &s[s.find('\'').unwrap() + 1..s.rfind('\'').unwrap()];
        assert_eq!(
            super::literal_bytes(lit),
            b"\xff\xfe\x00a\xc3\xa9\xe2\x82".to_vec()
        );
        assert_eq!(super::decode_query(b"SELECT 1"), "SELECT 1");
        // A valid character from the escape range itself survives too.
        let q = "SELECT '\u{10FF41}\u{e9}'";
        let s = super::decode_query(q.as_bytes());
        let lit = &s[s.find('\'').unwrap() + 1..s.rfind('\'').unwrap()];
        assert_eq!(super::literal_bytes(lit), "\u{10FF41}\u{e9}".as_bytes());
    }
}
