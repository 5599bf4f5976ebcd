//! MariaDB errors as clients see them: error number, SQLSTATE and message.
//!
//! Every layer keeps its own error type; at the SQL/protocol edge they become a
//! [`SqlError`], which the server sends as an ERR packet.

use std::fmt;

/// An error as MariaDB reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    pub code: u16,
    pub state: &'static str,
    pub message: String,
    /// As a condition of a statement that succeeded: a note, not a warning (SHOW WARNINGS
    /// shows its level as `Note`).
    pub note: bool,
}

impl SqlError {
    pub fn new(code: u16, state: &'static str, message: impl Into<String>) -> SqlError {
        SqlError {
            code,
            state,
            message: message.into(),
            note: false,
        }
    }

    /// A note (a condition of level Note, such as 1265 for a DECIMAL value rounded).
    pub fn note(code: u16, message: impl Into<String>) -> SqlError {
        SqlError {
            note: true,
            ..SqlError::from_code(code, message)
        }
    }

    /// An error whose SQLSTATE is the usual one for `code` (see [`sqlstate`]).
    pub fn from_code(code: u16, message: impl Into<String>) -> SqlError {
        SqlError::new(code, sqlstate(code), message)
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ERROR {} ({}): {}", self.code, self.state, self.message)
    }
}

impl std::error::Error for SqlError {}

/// MariaDB error numbers used by onelog (names as in `mysqld_error.h`).
pub mod code {
    pub const ER_CON_COUNT_ERROR: u16 = 1040;
    pub const ER_HANDSHAKE_ERROR: u16 = 1043;
    pub const ER_DBACCESS_DENIED_ERROR: u16 = 1044;
    pub const ER_ACCESS_DENIED_ERROR: u16 = 1045;
    pub const ER_NO_DB_ERROR: u16 = 1046;
    pub const ER_UNKNOWN_COM_ERROR: u16 = 1047;
    pub const ER_BAD_NULL_ERROR: u16 = 1048;
    pub const ER_BAD_DB_ERROR: u16 = 1049;
    pub const ER_TABLE_EXISTS_ERROR: u16 = 1050;
    pub const ER_BAD_TABLE_ERROR: u16 = 1051;
    pub const ER_NON_UNIQ_ERROR: u16 = 1052;
    pub const ER_BAD_FIELD_ERROR: u16 = 1054;
    pub const ER_WRONG_FIELD_WITH_GROUP: u16 = 1055;
    pub const ER_WRONG_GROUP_FIELD: u16 = 1056;
    pub const ER_WRONG_VALUE_COUNT: u16 = 1058;
    pub const ER_WRONG_VALUE_COUNT_ON_ROW: u16 = 1136;
    pub const ER_DUP_FIELDNAME: u16 = 1060;
    pub const ER_DUP_KEYNAME: u16 = 1061;
    pub const ER_DUP_ENTRY: u16 = 1062;
    pub const ER_WRONG_FIELD_SPEC: u16 = 1063;
    pub const ER_PARSE_ERROR: u16 = 1064;
    pub const ER_EMPTY_QUERY: u16 = 1065;
    pub const ER_NONUNIQ_TABLE: u16 = 1066;
    pub const ER_INVALID_DEFAULT: u16 = 1067;
    pub const ER_MULTIPLE_PRI_KEY: u16 = 1068;
    pub const ER_TOO_LONG_KEY: u16 = 1071;
    pub const ER_KEY_COLUMN_DOES_NOT_EXIST: u16 = 1072;
    pub const ER_WRONG_AUTO_KEY: u16 = 1075;
    pub const ER_CANT_DROP_FIELD_OR_KEY: u16 = 1091;
    pub const ER_NO_SUCH_THREAD: u16 = 1094;
    pub const ER_KILL_DENIED_ERROR: u16 = 1095;
    pub const ER_DUP_ARGUMENT: u16 = 1225;
    pub const ER_UNKNOWN_SYSTEM_VARIABLE: u16 = 1193;
    pub const ER_TABLE_MUST_HAVE_COLUMNS: u16 = 1113;
    pub const ER_UNKNOWN_TABLE: u16 = 1109;
    pub const ER_TOO_BIG_ROWSIZE: u16 = 1118;
    pub const ER_WRONG_COLUMN_NAME: u16 = 1166;
    pub const ER_NO_SUCH_TABLE: u16 = 1146;
    pub const ER_NONEXISTING_GRANT: u16 = 1141;
    pub const ER_TABLEACCESS_DENIED_ERROR: u16 = 1142;
    pub const ER_NOT_ALLOWED_COMMAND: u16 = 1148;
    pub const ER_NET_PACKET_TOO_LARGE: u16 = 1153;
    pub const ER_NET_READ_ERROR: u16 = 1158;
    pub const ER_TOO_LONG_IDENT: u16 = 1059;
    pub const ER_UNSUPPORTED_PS: u16 = 1295;
    pub const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
    pub const ER_READ_ONLY_TRANSACTION: u16 = 1207;
    pub const ER_LOCK_DEADLOCK: u16 = 1213;
    pub const ER_DB_CREATE_EXISTS: u16 = 1007;
    pub const ER_DB_DROP_EXISTS: u16 = 1008;
    pub const ER_CANT_CREATE_DB: u16 = 1006;
    pub const ER_DISK_FULL: u16 = 1021;
    pub const ER_ERROR_ON_WRITE: u16 = 1026;
    pub const ER_GET_ERRNO: u16 = 1030;
    pub const ER_OUT_OF_RESOURCES: u16 = 1041;
    pub const ER_QUERY_INTERRUPTED: u16 = 1317;
    pub const ER_STACK_OVERRUN_NEED_MORE: u16 = 1436;
    pub const ER_STATEMENT_TIMEOUT: u16 = 1969;
    pub const ER_SPECIFIC_ACCESS_DENIED_ERROR: u16 = 1227;
    pub const ER_WRONG_VALUE_FOR_VAR: u16 = 1231;
    pub const ER_WRONG_TYPE_FOR_VAR: u16 = 1232;
    pub const ER_VAR_CANT_BE_READ: u16 = 1233;
    pub const ER_INCORRECT_GLOBAL_LOCAL_VAR: u16 = 1238;
    pub const ER_GLOBAL_VARIABLE: u16 = 1229;
    pub const ER_LOCAL_VARIABLE: u16 = 1228;
    pub const ER_NOT_SUPPORTED_YET: u16 = 1235;
    pub const ER_MASTER_FATAL_ERROR_READING_BINLOG: u16 = 1236;
    pub const ER_INCORRECT_GTID_STATE: u16 = 1941;
    pub const ER_OUTOFMEMORY: u16 = 1037;
    pub const ER_GTID_STRICT_OUT_OF_ORDER: u16 = 1950;
    pub const ER_SLAVE_MUST_STOP: u16 = 1198;
    pub const ER_WARN_OPTION_IGNORED: u16 = 1618;
    pub const ER_CHANGE_MASTER_IMPLICIT_USE_GTID: u16 = 4190;
    pub const ER_BAD_SLAVE: u16 = 1200;
    pub const ER_SLAVE_FATAL_ERROR: u16 = 1593;
    pub const ER_WRONG_ARGUMENTS: u16 = 1210;
    pub const ER_UNKNOWN_STMT_HANDLER: u16 = 1243;
    pub const ER_OPERAND_COLUMNS: u16 = 1241;
    pub const ER_SUBQUERY_NO_1_ROW: u16 = 1242;
    pub const ER_WARN_DATA_OUT_OF_RANGE: u16 = 1264;
    pub const ER_TRUNCATED_WRONG_VALUE: u16 = 1292;
    pub const ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: u16 = 1366;
    pub const ER_DATA_TOO_LONG: u16 = 1406;
    pub const ER_DIVISION_BY_ZERO: u16 = 1365;
    pub const ER_NO_DEFAULT_FOR_FIELD: u16 = 1364;
    pub const ER_CANNOT_USER: u16 = 1396;
    pub const ER_PASSWORD_NO_MATCH: u16 = 1133;
    pub const ER_KEY_DOES_NOT_EXISTS: u16 = 1176;
    pub const ER_FUNCTION_NOT_DEFINED: u16 = 1305;
    pub const ER_SP_DOES_NOT_EXIST: u16 = 1305;
    pub const ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT: u16 = 1582;
    pub const ER_TOO_BIG_PRECISION: u16 = 1426;
    pub const ER_ILLEGAL_PARAMETER_DATA_TYPES2_FOR_OPERATION: u16 = 4078;
    pub const ER_SECURE_TRANSPORT_REQUIRED: u16 = 3159;
    pub const ER_UNKNOWN_ERROR: u16 = 1105;
    pub const ER_WRONG_DB_NAME: u16 = 1102;
    pub const ER_WRONG_TABLE_NAME: u16 = 1103;
    pub const ER_BINLOG_PURGE_FATAL_ERR: u16 = 1377;
    pub const ER_LOG_IN_USE: u16 = 1378;
    pub const ER_UNKNOWN_TARGET_BINLOG: u16 = 1373;
    pub const ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION: u16 = 1792;
    pub const ER_INVALID_USE_OF_NULL: u16 = 1138;
    pub const ER_NOT_SUPPORTED_AUTH_MODE: u16 = 1251;
    pub const ER_WARN_FIELD_RESOLVED: u16 = 1276;
    pub const ER_NO_SUCH_INDEX: u16 = 1082;
    pub const ER_UNKNOWN_CHARACTER_SET: u16 = 1115;
    pub const ER_CANT_DO_THIS_DURING_AN_TRANSACTION: u16 = 1179;
    pub const ER_ERROR_DURING_COMMIT: u16 = 1180;
    pub const ER_SERVER_SHUTDOWN: u16 = 1053;
    pub const ER_ABORTING_CONNECTION: u16 = 1152;
    pub const ER_NET_PACKETS_OUT_OF_ORDER: u16 = 1156;
    pub const ER_MALFORMED_PACKET: u16 = 1835;
    // Files: LOAD DATA, SELECT ... INTO OUTFILE / DUMPFILE.
    pub const EE_CANTCREATEFILE: u16 = 1;
    pub const EE_FILENOTFOUND: u16 = 29;
    pub const EE_READ: u16 = 2;
    pub const EE_WRITE: u16 = 3;
    pub const EE_STAT: u16 = 13;
    pub const ER_WRONG_FIELD_TERMINATORS: u16 = 1083;
    pub const ER_BLOBS_AND_NO_TERMINATED: u16 = 1084;
    pub const ER_TEXTFILE_NOT_READABLE: u16 = 1085;
    pub const ER_FILE_EXISTS_ERROR: u16 = 1086;
    pub const ER_TOO_MANY_ROWS: u16 = 1172;
    pub const ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT: u16 = 1222;
    pub const ER_WARN_TOO_FEW_RECORDS: u16 = 1261;
    pub const ER_WARN_TOO_MANY_RECORDS: u16 = 1262;
    pub const ER_WARN_NULL_TO_NOTNULL: u16 = 1263;
    pub const WARN_DATA_TRUNCATED: u16 = 1265;
    pub const ER_OPTION_PREVENTS_STATEMENT: u16 = 1290;
    pub const ER_SP_FETCH_NO_DATA: u16 = 1329;
    pub const ER_NON_UPDATABLE_TABLE: u16 = 1288;
    pub const ER_SP_ALREADY_EXISTS: u16 = 1304;
    pub const ER_SP_NOT_VAR_ARG: u16 = 1414;
    pub const ER_WRONG_OBJECT: u16 = 1347;
    pub const ER_NONUPDATEABLE_COLUMN: u16 = 1348;
    pub const ER_VIEW_SELECT_DERIVED: u16 = 1349;
    pub const ER_VIEW_WRONG_LIST: u16 = 1353;
    pub const ER_VIEW_INVALID: u16 = 1356;
    pub const ER_TRG_ALREADY_EXISTS: u16 = 1359;
    pub const ER_TRG_DOES_NOT_EXIST: u16 = 1360;
    pub const ER_VIEW_NONUPD_CHECK: u16 = 1368;
    pub const ER_WRONG_VALUE_FOR_TYPE: u16 = 1411;
    pub const ER_VIEW_CHECK_FAILED: u16 = 1369;
    pub const ER_NON_INSERTABLE_TABLE: u16 = 1471;
    pub const ER_VIEW_NO_INSERT_FIELD_LIST: u16 = 1394;
    pub const ER_VIEW_DELETE_MERGE_VIEW: u16 = 1395;
    pub const ER_VIEW_MULTIUPDATE: u16 = 1393;
    pub const ER_VIEW_RECURSIVE: u16 = 1462;
    pub const ER_EVENT_ALREADY_EXISTS: u16 = 1537;
    pub const ER_EVENT_DOES_NOT_EXIST: u16 = 1539;
    pub const ER_IT_IS_A_VIEW: u16 = 1965;
    pub const ER_UNKNOWN_VIEW: u16 = 4092;
    pub const ER_NOT_SEQUENCE: u16 = 4089;
    pub const ER_NOT_SEQUENCE2: u16 = 4090;
    pub const ER_UNKNOWN_SEQUENCES: u16 = 4091;
    pub const ER_LOAD_FROM_FIXED_SIZE_ROWS_TO_VAR: u16 = 1409;
    pub const WARN_NON_ASCII_SEPARATOR_NOT_IMPLEMENTED: u16 = 1638;
    pub const ER_LOAD_INFILE_CAPABILITY_DISABLED: u16 = 4166;
    pub const ER_UNKNOWN_STORAGE_ENGINE: u16 = 1286;
    pub const ER_ILLEGAL_HA_CREATE_OPTION: u16 = 1478;
}

/// The SQLSTATE MariaDB sends with an error number.
pub fn sqlstate(code: u16) -> &'static str {
    use code::*;
    match code {
        ER_CON_COUNT_ERROR => "08004",
        ER_HANDSHAKE_ERROR
        | ER_NET_READ_ERROR
        | ER_NET_PACKETS_OUT_OF_ORDER
        | ER_ABORTING_CONNECTION => "08S01",
        ER_NET_PACKET_TOO_LARGE => "08S01",
        ER_ACCESS_DENIED_ERROR => "28000",
        ER_DBACCESS_DENIED_ERROR
        | ER_TABLEACCESS_DENIED_ERROR
        | ER_SPECIFIC_ACCESS_DENIED_ERROR => "42000",
        ER_NO_DB_ERROR => "3D000",
        ER_UNKNOWN_COM_ERROR => "08S01",
        ER_BAD_NULL_ERROR => "23000",
        ER_BAD_DB_ERROR => "42000",
        ER_TABLE_EXISTS_ERROR => "42S01",
        ER_BAD_TABLE_ERROR | ER_UNKNOWN_TABLE | ER_NO_SUCH_TABLE | ER_IT_IS_A_VIEW
        | ER_UNKNOWN_VIEW | ER_NOT_SEQUENCE | ER_NOT_SEQUENCE2 | ER_UNKNOWN_SEQUENCES => "42S02",
        ER_SP_ALREADY_EXISTS | ER_SP_NOT_VAR_ARG => "42000",
        ER_VIEW_CHECK_FAILED => "44000",
        ER_NON_UNIQ_ERROR => "23000",
        ER_BAD_FIELD_ERROR => "42S22",
        ER_DUP_FIELDNAME => "42S21",
        ER_DUP_KEYNAME => "42000",
        ER_DUP_ENTRY => "23000",
        ER_PARSE_ERROR
        | ER_EMPTY_QUERY
        | ER_NONUNIQ_TABLE
        | ER_INVALID_DEFAULT
        | ER_MULTIPLE_PRI_KEY
        | ER_TOO_LONG_KEY
        | ER_KEY_COLUMN_DOES_NOT_EXIST
        | ER_WRONG_AUTO_KEY
        | ER_CANT_DROP_FIELD_OR_KEY
        | ER_WRONG_FIELD_SPEC
        | ER_WRONG_VALUE_FOR_VAR
        | ER_WRONG_TYPE_FOR_VAR
        | ER_TABLE_MUST_HAVE_COLUMNS
        | ER_TOO_BIG_ROWSIZE
        | ER_DB_CREATE_EXISTS
        | ER_DB_DROP_EXISTS
        | ER_WRONG_VALUE_COUNT
        | ER_TOO_LONG_IDENT
        | ER_WRONG_DB_NAME
        | ER_WRONG_TABLE_NAME
        | ER_WRONG_COLUMN_NAME
        | ER_NONEXISTING_GRANT
        | ER_NOT_SUPPORTED_YET
        | ER_WRONG_GROUP_FIELD
        | ER_WRONG_FIELD_WITH_GROUP
        | ER_NOT_SUPPORTED_AUTH_MODE
        | ER_NO_SUCH_INDEX
        | ER_FUNCTION_NOT_DEFINED
        | ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT
        | ER_TOO_BIG_PRECISION
        | ER_KEY_DOES_NOT_EXISTS
        | ER_UNKNOWN_STORAGE_ENGINE
        | ER_UNKNOWN_CHARACTER_SET => "42000",
        ER_UNKNOWN_SYSTEM_VARIABLE
        | ER_VAR_CANT_BE_READ
        | ER_INCORRECT_GLOBAL_LOCAL_VAR
        | ER_GLOBAL_VARIABLE
        | ER_LOCAL_VARIABLE => "HY000",
        ER_LOCK_WAIT_TIMEOUT | ER_MASTER_FATAL_ERROR_READING_BINLOG => "HY000",
        ER_LOCK_DEADLOCK => "40001",
        ER_OPERAND_COLUMNS | ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT => "21000",
        ER_WARN_TOO_FEW_RECORDS | ER_WARN_TOO_MANY_RECORDS | WARN_DATA_TRUNCATED => "01000",
        ER_WARN_NULL_TO_NOTNULL => "22004",
        ER_SP_FETCH_NO_DATA => "02000",
        ER_WRONG_FIELD_TERMINATORS | ER_BLOBS_AND_NO_TERMINATED | ER_TOO_MANY_ROWS => "42000",
        ER_SUBQUERY_NO_1_ROW => "21000",
        ER_WARN_DATA_OUT_OF_RANGE => "22003",
        ER_DATA_TOO_LONG => "22001",
        ER_WRONG_VALUE_COUNT_ON_ROW => "21S01",
        ER_TRUNCATED_WRONG_VALUE | ER_TRUNCATED_WRONG_VALUE_FOR_FIELD => "22007",
        ER_DIVISION_BY_ZERO => "22012",
        ER_INVALID_USE_OF_NULL => "22004",
        ER_CANT_DO_THIS_DURING_AN_TRANSACTION => "25000",
        ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION | ER_READ_ONLY_TRANSACTION => "25006",
        ER_QUERY_INTERRUPTED | ER_STATEMENT_TIMEOUT => "70100",
        ER_SERVER_SHUTDOWN => "08S01",
        ER_OUTOFMEMORY => "HY001",
        _ => "HY000",
    }
}
