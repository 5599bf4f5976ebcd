//! System variables: the registry of names connectors and tools read, their scopes,
//! defaults (MariaDB 10.11 values where onelog behaves the same) and value checks.

use onelog_types::{code, SqlError, Value};

use crate::sql_err;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarScope {
    Global,
    Session,
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Bool,
    Int,
    /// A non-negative number of seconds with a fraction (`max_statement_time`).
    Seconds,
    Str,
    /// One of a fixed set (stored upper-case).
    Enum(&'static [&'static str]),
}

pub struct VarDef {
    pub name: &'static str,
    pub kind: Kind,
    pub scope: VarScope,
    pub read_only: bool,
    pub default: &'static str,
}

const fn v(
    name: &'static str,
    kind: Kind,
    scope: VarScope,
    read_only: bool,
    default: &'static str,
) -> VarDef {
    VarDef {
        name,
        kind,
        scope,
        read_only,
        default,
    }
}

use Kind::*;
use VarScope::*;

const ISOLATIONS: &[&str] = &[
    "READ-UNCOMMITTED",
    "READ-COMMITTED",
    "REPEATABLE-READ",
    "SERIALIZABLE",
];

/// `binlog_row_metadata`, numbered as in MariaDB (`SET GLOBAL binlog_row_metadata = 2` is
/// FULL).
const ROW_METADATA: &[&str] = &["NO_LOG", "MINIMAL", "FULL"];

pub const SQL_MODE_DEFAULT: &str =
    "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION";

/// Every variable onelog knows, sorted by name (SHOW VARIABLES order). A global variable
/// onelog has no use for is read-only (SET GLOBAL gets 1238) rather than answering OK
/// without effect: `connect_timeout`, `general_log`, `init_connect`,
/// `innodb_flush_log_at_trx_commit` (every commit is durable as `sync_binlog` says),
/// `query_cache_size`.
/// Values marked "dynamic" in `Database::dynamic_var` are computed when read.
pub static VARS: &[VarDef] = &[
    v("auto_increment_increment", Int, Both, false, "1"),
    v("auto_increment_offset", Int, Both, false, "1"),
    v("autocommit", Bool, Both, false, "1"),
    v("basedir", Str, Global, true, "/usr"),
    v("big_tables", Bool, Both, false, "0"),
    v("binlog_annotate_row_events", Bool, Both, false, "1"),
    v("binlog_checksum", Str, Global, true, "CRC32"),
    v("binlog_expire_logs_seconds", Int, Global, true, "0"),
    v("binlog_format", Str, Both, true, "ROW"),
    v("binlog_row_image", Str, Both, true, "FULL"),
    // MINIMAL or FULL; NO_LOG is refused (see `Session::set_var`).
    v(
        "binlog_row_metadata",
        Enum(ROW_METADATA),
        Global,
        false,
        "FULL",
    ),
    v("binlog_storage", Str, Global, true, "engine"),
    v("binlog_storage_engine", Str, Global, true, ""),
    v("character_set_client", Str, Both, false, "utf8mb4"),
    v("character_set_connection", Str, Both, false, "utf8mb4"),
    v("character_set_database", Str, Both, false, "utf8mb4"),
    v("character_set_filesystem", Str, Both, false, "binary"),
    v("character_set_results", Str, Both, false, "utf8mb4"),
    v("character_set_server", Str, Both, false, "utf8mb4"),
    v("character_set_system", Str, Global, true, "utf8mb3"),
    v("check_constraint_checks", Bool, Both, false, "1"),
    v(
        "collation_connection",
        Str,
        Both,
        false,
        "utf8mb4_general_ci",
    ),
    v("collation_database", Str, Both, false, "utf8mb4_general_ci"),
    v("check_constraint_checks", Bool, Both, false, "1"),
    v("collation_server", Str, Both, false, "utf8mb4_general_ci"),
    v("completion_type", Str, Both, false, "NO_CHAIN"),
    v("connect_timeout", Int, Global, true, "10"),
    v("datadir", Str, Global, true, ""),
    v("default_storage_engine", Str, Both, false, "InnoDB"),
    v("default_tmp_storage_engine", Str, Both, false, ""),
    v("default_week_format", Int, Both, false, "0"),
    v("div_precision_increment", Int, Both, true, "4"),
    v("error_count", Int, Session, true, "0"),
    // ON / OFF by SET GLOBAL; DISABLED only by --event-scheduler (`events::scheduler`).
    v(
        "event_scheduler",
        Enum(&["OFF", "ON", "DISABLED"]),
        Global,
        false,
        "OFF",
    ),
    v("explicit_defaults_for_timestamp", Bool, Both, true, "1"),
    v("foreign_key_checks", Bool, Both, false, "1"),
    // No general query log: read-only OFF (setting it would answer OK without effect).
    v("general_log", Bool, Global, true, "0"),
    v("group_concat_max_len", Int, Both, false, "1048576"),
    v("gtid_binlog_pos", Str, Global, true, ""),
    v("gtid_binlog_state", Str, Global, true, ""),
    v("gtid_current_pos", Str, Global, true, ""),
    v("gtid_domain_id", Int, Both, true, "0"),
    v("gtid_seq_no", Int, Session, false, "0"),
    v("gtid_slave_pos", Str, Global, false, ""),
    v("gtid_strict_mode", Bool, Global, false, "0"),
    v("have_ssl", Str, Global, true, "DISABLED"),
    v("hostname", Str, Global, true, "localhost"),
    v("identity", Int, Session, false, "0"),
    v("in_transaction", Int, Session, true, "0"),
    v("init_connect", Str, Global, true, ""),
    v("innodb_autoinc_lock_mode", Int, Global, true, "2"),
    v("innodb_buffer_pool_size", Int, Global, true, "134217728"),
    v("innodb_flush_log_at_trx_commit", Int, Global, true, "1"),
    v("innodb_lock_wait_timeout", Int, Both, false, "50"),
    v("innodb_version", Str, Global, true, "10.11.99"),
    v("insert_id", Int, Session, false, "0"),
    v("interactive_timeout", Int, Both, false, "28800"),
    v("last_gtid", Str, Session, true, ""),
    v("last_insert_id", Int, Session, false, "0"),
    v("lc_messages", Str, Both, false, "en_US"),
    v("lc_time_names", Str, Both, false, "en_US"),
    v("license", Str, Global, true, "GPL"),
    v("local_infile", Bool, Global, false, "1"),
    v("lock_wait_timeout", Int, Both, false, "86400"),
    v("log_bin", Bool, Global, true, "1"),
    v("log_bin_basename", Str, Global, true, ""),
    v("log_bin_trust_function_creators", Bool, Global, false, "0"),
    v("log_slave_updates", Bool, Global, true, "0"),
    v("lower_case_file_system", Bool, Global, true, "0"),
    v("lower_case_table_names", Int, Global, true, "0"),
    v("max_allowed_packet", Int, Both, false, "16777216"),
    v("max_binlog_size", Int, Global, true, "1073741824"),
    v("max_connections", Int, Global, false, "151"),
    v("max_delayed_threads", Int, Both, false, "20"),
    v("max_execution_time", Int, Both, false, "0"),
    v("max_prepared_stmt_count", Int, Global, false, "16382"),
    v("max_sp_recursion_depth", Int, Both, false, "0"),
    v("max_statement_time", Seconds, Both, false, "0"),
    v("net_buffer_length", Int, Both, false, "16384"),
    v("net_read_timeout", Int, Both, false, "30"),
    v("net_write_timeout", Int, Both, false, "60"),
    v("old_passwords", Bool, Both, false, "0"),
    v("performance_schema", Bool, Global, true, "0"),
    v("pid_file", Str, Global, true, ""),
    v("port", Int, Global, true, "3306"),
    v("protocol_version", Int, Global, true, "10"),
    // Set by `mariadb-binlog` output; no effect (onelog applies row events alike anyway).
    v("pseudo_slave_mode", Bool, Session, false, "0"),
    v("pseudo_thread_id", Int, Session, false, "0"),
    v("query_cache_size", Int, Global, true, "0"),
    v("query_cache_type", Str, Both, false, "OFF"),
    v("read_only", Bool, Global, false, "0"),
    v("rpl_semi_sync_master_enabled", Bool, Global, false, "0"),
    v("rpl_semi_sync_master_timeout", Int, Global, false, "10000"),
    v(
        "rpl_semi_sync_master_wait_no_slave",
        Bool,
        Global,
        false,
        "1",
    ),
    v(
        "rpl_semi_sync_master_wait_point",
        Enum(&["AFTER_SYNC", "AFTER_COMMIT"]),
        Global,
        false,
        "AFTER_COMMIT",
    ),
    v("rpl_semi_sync_slave_enabled", Bool, Global, false, "0"),
    // NULL (no restriction) unless --secure-file-priv is given (`Database::with_engine`).
    v("secure_file_priv", Str, Global, true, ""),
    v("server_id", Int, Both, true, "1"),
    v("session_track_schema", Bool, Both, false, "1"),
    v("session_track_state_change", Bool, Both, false, "0"),
    v(
        "session_track_system_variables",
        Str,
        Both,
        false,
        "autocommit,character_set_client,character_set_connection,character_set_results,time_zone",
    ),
    v("session_track_transaction_info", Str, Both, false, "OFF"),
    v("skip_name_resolve", Bool, Global, true, "0"),
    v("slave_parallel_max_queued", Int, Global, false, "131072"),
    v(
        "slave_parallel_mode",
        Enum(&[
            "none",
            "minimal",
            "conservative",
            "optimistic",
            "aggressive",
        ]),
        Global,
        false,
        "optimistic",
    ),
    v("slave_parallel_threads", Int, Global, false, "0"),
    v("skip_networking", Bool, Global, true, "0"),
    v("skip_parallel_replication", Bool, Session, false, "0"),
    v("socket", Str, Global, true, ""),
    v("sql_auto_is_null", Bool, Both, false, "0"),
    v("sql_if_exists", Bool, Both, false, "0"),
    v("sql_log_bin", Bool, Session, false, "1"),
    v("sql_mode", Str, Both, false, SQL_MODE_DEFAULT),
    v("sql_notes", Bool, Both, false, "1"),
    v("sql_quote_show_create", Bool, Both, false, "1"),
    v("sql_safe_updates", Bool, Both, false, "0"),
    v("sql_select_limit", Int, Both, false, "18446744073709551615"),
    v("sql_warnings", Bool, Both, false, "0"),
    v("storage_engine", Str, Both, false, "InnoDB"),
    v("sync_binlog", Int, Global, false, "1"),
    v("system_time_zone", Str, Global, true, "UTC"),
    v("system_versioning_alter_history", Str, Both, false, "ERROR"),
    v("system_versioning_insert_history", Bool, Both, false, "0"),
    v(
        "thread_handling",
        Str,
        Global,
        true,
        "one-thread-per-connection",
    ),
    v("thread_pool_oversubscribe", Int, Global, false, "3"),
    v("thread_pool_prio_kickup_timer", Int, Global, false, "1000"),
    v("thread_pool_size", Int, Global, false, "1"),
    v("thread_pool_stall_limit", Int, Global, false, "500"),
    v("thread_stack", Int, Global, true, "8388608"),
    v("time_zone", Str, Both, false, "SYSTEM"),
    v("timestamp", Int, Session, false, "0"),
    v("tmpdir", Str, Global, true, "/tmp"),
    v(
        "transaction_isolation",
        Enum(ISOLATIONS),
        Both,
        false,
        "REPEATABLE-READ",
    ),
    v("transaction_read_only", Bool, Both, false, "0"),
    v(
        "tx_isolation",
        Enum(ISOLATIONS),
        Both,
        false,
        "REPEATABLE-READ",
    ),
    v("tx_read_only", Bool, Both, false, "0"),
    v("unique_checks", Bool, Both, false, "1"),
    v("version", Str, Global, true, ""),
    v("version_comment", Str, Global, true, "onelog"),
    v("version_compile_machine", Str, Global, true, "x86_64"),
    v("version_compile_os", Str, Global, true, "Linux"),
    v("wait_timeout", Int, Both, false, "28800"),
    v("warning_count", Int, Session, true, "0"),
];

pub fn find(name: &str) -> Option<&'static VarDef> {
    let n = name.to_ascii_lowercase();
    VARS.iter().find(|d| d.name == n)
}

pub fn default_value(d: &VarDef) -> Value {
    match d.kind {
        Bool => Value::Int(d.default.parse().unwrap_or(0)),
        Int => match d.default.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => Value::UInt(d.default.parse().unwrap_or(0)),
        },
        Seconds => Value::Decimal(onelog_types::Decimal::new(
            (d.default.parse::<f64>().unwrap_or(0.0) * 1e6) as i128,
            6,
        )),
        Str | Enum(_) => Value::str(d.default),
    }
}

/// Checks and normalises a value for `SET var = value`.
pub fn check_value(d: &VarDef, v: &Value) -> Result<Value, SqlError> {
    let bad = || {
        sql_err(
            code::ER_WRONG_VALUE_FOR_VAR,
            format!(
                "Variable '{}' can't be set to the value of '{}'",
                d.name,
                crate::expr::to_string(v)
            ),
        )
    };
    match d.kind {
        Bool => match v {
            Value::Int(0) | Value::UInt(0) => Ok(Value::Int(0)),
            Value::Int(1) | Value::UInt(1) => Ok(Value::Int(1)),
            Value::Bytes(b) => match String::from_utf8_lossy(b).to_uppercase().as_str() {
                "ON" | "TRUE" | "1" => Ok(Value::Int(1)),
                "OFF" | "FALSE" | "0" => Ok(Value::Int(0)),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        },
        Int => match v {
            Value::Int(_) | Value::UInt(_) => Ok(v.clone()),
            Value::Decimal(_) | Value::Double(_) => Err(sql_err(
                code::ER_WRONG_TYPE_FOR_VAR,
                format!("Incorrect argument type to variable '{}'", d.name),
            )),
            Value::Bytes(b) => match String::from_utf8_lossy(b).trim().parse::<i64>() {
                Ok(i) => Ok(Value::Int(i)),
                Err(_) => Err(sql_err(
                    code::ER_WRONG_TYPE_FOR_VAR,
                    format!("Incorrect argument type to variable '{}'", d.name),
                )),
            },
            _ => Err(bad()),
        },
        Seconds => {
            let secs = match v {
                Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) => {
                    crate::expr::to_f64(v)
                }
                Value::Bytes(b) => {
                    String::from_utf8_lossy(b)
                        .trim()
                        .parse::<f64>()
                        .map_err(|_| {
                            sql_err(
                                code::ER_WRONG_TYPE_FOR_VAR,
                                format!("Incorrect argument type to variable '{}'", d.name),
                            )
                        })?
                }
                _ => return Err(bad()),
            };
            if secs.is_nan() {
                return Err(bad());
            }
            // Shown with microseconds, as MariaDB shows it; negative values become 0.
            let micros = (secs.clamp(0.0, 31_536_000.0) * 1e6).round() as i128;
            Ok(Value::Decimal(onelog_types::Decimal::new(micros, 6)))
        }
        Str => match v {
            Value::Null => Ok(Value::str("")),
            other => Ok(Value::Bytes(crate::expr::to_bytes(other))),
        },
        Enum(opts) => {
            let s = crate::expr::to_string(v).to_uppercase().replace(' ', "-");
            match opts.iter().find(|o| o.eq_ignore_ascii_case(&s)) {
                Some(o) => Ok(Value::str(o)),
                None => match v {
                    Value::Int(i) if (*i as usize) < opts.len() && *i >= 0 => {
                        Ok(Value::str(opts[*i as usize]))
                    }
                    _ => Err(bad()),
                },
            }
        }
    }
}

/// The names of MariaDB's `sql_mode` flags, in the order of their bits.
const SQL_MODES: &[&str] = &[
    "REAL_AS_FLOAT",
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "IGNORE_BAD_TABLE_OPTIONS",
    "ONLY_FULL_GROUP_BY",
    "NO_UNSIGNED_SUBTRACTION",
    "NO_DIR_IN_CREATE",
    "POSTGRESQL",
    "ORACLE",
    "MSSQL",
    "DB2",
    "MAXDB",
    "NO_KEY_OPTIONS",
    "NO_TABLE_OPTIONS",
    "NO_FIELD_OPTIONS",
    "MYSQL323",
    "MYSQL40",
    "ANSI",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ALLOW_INVALID_DATES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "TRADITIONAL",
    "NO_AUTO_CREATE_USER",
    "HIGH_NOT_PRECEDENCE",
    "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH",
    "EMPTY_STRING_IS_NULL",
    "SIMULTANEOUS_ASSIGNMENT",
    "TIME_ROUND_FRACTIONAL",
];

/// The modes a combination mode sets (itself included), as MariaDB 10.11 expands them:
/// whether it sets the portable-SQL flags (`||` concatenation, "quoted" names, no engine
/// options in SHOW CREATE), and its other flags.
fn sql_mode_combination(mode: &str) -> Option<(bool, &'static [&'static str])> {
    Some(match mode {
        "ANSI" => (
            false,
            &[
                "REAL_AS_FLOAT",
                "PIPES_AS_CONCAT",
                "ANSI_QUOTES",
                "IGNORE_SPACE",
                "ANSI",
            ],
        ),
        "TRADITIONAL" => (
            false,
            &[
                "STRICT_TRANS_TABLES",
                "STRICT_ALL_TABLES",
                "NO_ZERO_IN_DATE",
                "NO_ZERO_DATE",
                "ERROR_FOR_DIVISION_BY_ZERO",
                "TRADITIONAL",
                "NO_AUTO_CREATE_USER",
                "NO_ENGINE_SUBSTITUTION",
            ],
        ),
        "ORACLE" => (
            true,
            &["ORACLE", "NO_AUTO_CREATE_USER", "SIMULTANEOUS_ASSIGNMENT"],
        ),
        "MAXDB" => (true, &["MAXDB", "NO_AUTO_CREATE_USER"]),
        "MSSQL" => (true, &["MSSQL"]),
        "DB2" => (true, &["DB2"]),
        "POSTGRESQL" => (true, &["POSTGRESQL"]),
        "MYSQL323" => (false, &["MYSQL323", "HIGH_NOT_PRECEDENCE"]),
        "MYSQL40" => (false, &["MYSQL40", "HIGH_NOT_PRECEDENCE"]),
        _ => return None,
    })
}

/// The flags the portable-SQL combination modes (ORACLE, MSSQL, DB2, ...) all set.
const PORTABLE_SQL_MODES: [&str; 6] = [
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "NO_KEY_OPTIONS",
    "NO_TABLE_OPTIONS",
    "NO_FIELD_OPTIONS",
];

/// Normalises a sql_mode value as MariaDB stores it: its flags in the order of their bits,
/// upper case, comma-separated, with the combination modes (ANSI, TRADITIONAL, ORACLE,
/// ...) expanded. A number is the flags' bit set, as MariaDB takes it (`mariadb-binlog`
/// writes `SET @@session.sql_mode=1411383296`). Err: the first unknown name.
pub fn normalize_sql_mode(s: &str) -> Result<String, String> {
    let bit = |name: &str| SQL_MODES.iter().position(|m| *m == name);
    let mut bits: u64 = match s.trim().parse::<u64>() {
        Ok(b) if b >> SQL_MODES.len() != 0 => return Err(s.to_string()),
        Ok(b) => b,
        Err(_) => {
            // Names as written: only trailing spaces of the whole value are dropped (` A`
            // is refused, as in MariaDB).
            let mut b = 0u64;
            for part in s.trim_end_matches(' ').split(',') {
                if part.is_empty() {
                    continue;
                }
                let i = bit(&part.to_uppercase()).ok_or_else(|| part.to_string())?;
                b |= 1 << i;
            }
            b
        }
    };
    for (i, m) in SQL_MODES.iter().enumerate() {
        if bits >> i & 1 == 1 {
            if let Some((portable, extra)) = sql_mode_combination(m) {
                let common: &[&str] = if portable { &PORTABLE_SQL_MODES } else { &[] };
                for x in common.iter().chain(extra) {
                    bits |= 1 << bit(x).expect("a known mode");
                }
            }
        }
    }
    let names: Vec<&str> = (0..SQL_MODES.len())
        .filter(|i| bits >> i & 1 == 1)
        .map(|i| SQL_MODES[i])
        .collect();
    Ok(names.join(","))
}

/// SHOW VARIABLES prints booleans as ON/OFF.
pub fn show_value(d: &VarDef, v: &Value) -> Value {
    match (d.kind, v) {
        (Bool, Value::Int(i)) => Value::str(if *i != 0 { "ON" } else { "OFF" }),
        _ => v.clone(),
    }
}
