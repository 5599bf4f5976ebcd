//! Converting values to UUID/INET6 (`CAST(x AS UUID)`, comparisons): a string is read as
//! the type's text or, when 16 bytes long, as its memory form; anything else is NULL with
//! warning 1292 "Incorrect uuid value: 'x'".

use onelog_types::FixedBin;

use super::*;

/// `v` as a value of type `f`: its canonical text, or (`key`) its 16-byte sort form.
pub(super) fn cast(v: Value, f: FixedBin, key: bool, cx: &Ctx<'_>) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    let parsed = match &v {
        Value::Bytes(b) => f.parse(b),
        _ => None,
    };
    match parsed {
        Some(m) if key => Value::Bytes(f.sort_form(&m).to_vec()),
        Some(m) => Value::Bytes(f.format(&m).into_bytes()),
        None => {
            if let Some(s) = cx.subs {
                s.warn(crate::sql_err(
                    code::ER_TRUNCATED_WRONG_VALUE,
                    format!("Incorrect {} value: '{}'", f.name(), to_string(&v)),
                ));
            }
            Value::Null
        }
    }
}

/// The canonical text of sort form `v` (NULL stays NULL).
pub(super) fn from_key(v: Value, f: FixedBin) -> Value {
    match v {
        Value::Bytes(b) => match <[u8; 16]>::try_from(b.as_slice()) {
            Ok(s) => Value::Bytes(f.format(&f.from_sort_form(&s)).into_bytes()),
            Err(_) => Value::Bytes(b),
        },
        other => other,
    }
}

/// The 16-byte memory form of UUID/INET6 text `v` (NULL stays NULL).
pub(super) fn memory(v: Value, f: FixedBin) -> Value {
    match &v {
        Value::Bytes(b) => match f.parse(b) {
            Some(m) => Value::Bytes(m.to_vec()),
            None => v,
        },
        _ => v,
    }
}

/// A type's name as MariaDB's errors 4078 spell it.
pub fn sql_type_name(t: &ColumnType) -> &'static str {
    match t {
        ColumnType::Int { bytes: 1, .. } => "tinyint",
        ColumnType::Int { bytes: 2, .. } => "smallint",
        ColumnType::Int { bytes: 3, .. } => "mediumint",
        ColumnType::Int { bytes: 4, .. } => "int",
        ColumnType::Int { .. } => "bigint",
        ColumnType::Decimal { .. } => "decimal",
        ColumnType::Float => "float",
        ColumnType::Double => "double",
        ColumnType::Date => "date",
        ColumnType::DateTime { .. } => "datetime",
        ColumnType::Timestamp { .. } => "timestamp",
        ColumnType::Time { .. } => "time",
        ColumnType::Year => "year",
        ColumnType::Bit { .. } => "bit",
        ColumnType::Enum { .. } => "enum",
        ColumnType::Set { .. } => "set",
        ColumnType::Uuid => "uuid",
        ColumnType::Inet6 => "inet6",
        ColumnType::Blob { .. } => "blob",
        ColumnType::Char { .. } => "char",
        ColumnType::Varchar { .. } => "varchar",
    }
}

/// MariaDB's error 4078 for storing a value of type `from` into a UUID/INET6 column or a
/// UUID/INET6 value into a column of type `to`, when either side is not a string.
pub fn cannot_cast(from: &str, to: &str, db: &str, table: &str, col: &str) -> SqlError {
    crate::sql_err(
        code::ER_ILLEGAL_PARAMETER_DATA_TYPES2_FOR_OPERATION,
        format!("Cannot cast '{from}' as '{to}' in assignment of `{db}`.`{table}`.`{col}`"),
    )
}

/// The type name of a value that cannot be stored into a UUID/INET6 column (None: a
/// string, which can).
pub fn uncastable_value_type(v: &Value) -> Option<&'static str> {
    Some(match v {
        Value::Null | Value::Bytes(_) => return None,
        Value::Int(_) | Value::UInt(_) => "int",
        Value::Double(_) => "double",
        Value::Decimal(_) => "decimal",
        Value::Date(_) => "date",
        Value::DateTime(_) => "datetime",
        Value::Time(_) => "time",
    })
}

/// A value of column type `from` converted for column type `to` by ALTER TABLE when one
/// of them is UUID/INET6: a binary string gets the memory form, a text string the text;
/// the error names the types when the other side is not a string.
pub fn alter_fixed_bin(
    from: &ColumnType,
    to: &ColumnType,
    v: Value,
    at: (&str, &str, &str),
) -> Result<Value, SqlError> {
    let (db, table, col) = at;
    match (from.fixed_bin(), to.fixed_bin()) {
        (Some(f), None) if to.is_string() && !to.is_enum_or_set() => {
            Ok(if to.is_binary() { memory(v, f) } else { v })
        }
        (Some(_), None) => Err(cannot_cast(
            sql_type_name(from),
            sql_type_name(to),
            db,
            table,
            col,
        )),
        (None, Some(_)) if !from.is_string() || from.is_enum_or_set() => Err(cannot_cast(
            sql_type_name(from),
            sql_type_name(to),
            db,
            table,
            col,
        )),
        _ => Ok(v),
    }
}
