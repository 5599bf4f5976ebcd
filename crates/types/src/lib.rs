//! onelog-types: the values and column types shared by every layer.
//!
//! A [`Value`] is one SQL value as the engine stores it and the binlog logs it; a
//! [`ColumnType`] is a column's declared type. Both are deliberately small: conversions
//! between SQL text and values live in the SQL layer, byte encodings live beside their
//! encoders (`onelog-engine::keycode` for order-preserving keys, `onelog-binlog::rows` for
//! MariaDB's binary row format).

pub mod collation;
mod decimal;
mod elements;
mod error;
mod fixedbin;
pub mod log;
pub mod seed;
pub mod stack;
mod time;
pub mod wide;

pub use collation::{Collation, Derivation};
pub use decimal::Decimal;
pub use elements::Elements;
pub use error::{code, sqlstate, SqlError};
pub use fixedbin::FixedBin;
pub use time::{civil_from_days, days_from_civil, Date, DateTime, Time};
pub use wide::I256;

use std::fmt;

/// MySQL/MariaDB field type codes (`enum_field_types`), as used in the binlog and the wire
/// protocol.
pub mod type_code {
    pub const DECIMAL: u8 = 0;
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const NULL: u8 = 6;
    pub const TIMESTAMP: u8 = 7;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const TIME: u8 = 11;
    pub const DATETIME: u8 = 12;
    pub const YEAR: u8 = 13;
    pub const NEWDATE: u8 = 14;
    pub const VARCHAR: u8 = 15;
    pub const BIT: u8 = 16;
    pub const TIMESTAMP2: u8 = 17;
    pub const DATETIME2: u8 = 18;
    pub const TIME2: u8 = 19;
    pub const NEWDECIMAL: u8 = 246;
    pub const ENUM: u8 = 247;
    pub const SET: u8 = 248;
    pub const TINY_BLOB: u8 = 249;
    pub const MEDIUM_BLOB: u8 = 250;
    pub const LONG_BLOB: u8 = 251;
    pub const BLOB: u8 = 252;
    pub const VAR_STRING: u8 = 253;
    pub const STRING: u8 = 254;
    pub const GEOMETRY: u8 = 255;
}

/// Column definition flags (`*_FLAG` in mysql_com.h), sent in result-set column
/// definitions.
pub mod column_flag {
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
    pub const PART_KEY: u16 = 16384;
    pub const NUM: u16 = 32768;
}

/// A column's declared type.
///
/// Character types are utf8mb4 (`binary == false`, up to 4 bytes per character) or binary
/// (`binary == true`: BINARY, VARBINARY, BLOB). Lengths are in characters for text types and
/// bytes for binary types, as in SQL. Text types carry their [`Collation`]
/// (`utf8mb4_general_ci` or `utf8mb4_bin`; binary types have `Collation::Binary`); catalogs
/// written before collations were recorded read as [`Collation::LEGACY`] (utf8mb4_bin, the
/// bytewise order their index keys were built in).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ColumnType {
    /// TINYINT (1), SMALLINT (2), MEDIUMINT (3), INT (4), BIGINT (8).
    Int {
        bytes: u8,
        unsigned: bool,
    },
    Float,
    Double,
    /// DECIMAL(precision, scale); precision at most [`Decimal::MAX_PRECISION`].
    Decimal {
        precision: u8,
        scale: u8,
    },
    /// CHAR(len) / BINARY(len).
    Char {
        len: u32,
        binary: bool,
        #[serde(default = "Collation::legacy")]
        collation: Collation,
    },
    /// VARCHAR(len) / VARBINARY(len).
    Varchar {
        len: u32,
        binary: bool,
        #[serde(default = "Collation::legacy")]
        collation: Collation,
    },
    /// TINYTEXT/TEXT/MEDIUMTEXT/LONGTEXT (or the BLOB family when `binary`): the value length
    /// is stored in `len_bytes` bytes (1, 2, 3 or 4).
    Blob {
        len_bytes: u8,
        binary: bool,
        #[serde(default = "Collation::legacy")]
        collation: Collation,
    },
    Date,
    /// TIME(fsp)
    Time {
        fsp: u8,
    },
    /// DATETIME(fsp)
    DateTime {
        fsp: u8,
    },
    /// TIMESTAMP(fsp); values are kept as UTC date-times.
    Timestamp {
        fsp: u8,
    },
    /// ENUM('a', ...): values are the element's text (see [`Elements`]); keys and the
    /// binlog hold the 1-based index.
    Enum {
        elems: Elements,
        collation: Collation,
    },
    /// SET('a', ...): values are the members' text joined by `,`; keys and the binlog hold
    /// the bitmap.
    Set {
        elems: Elements,
        collation: Collation,
    },
    /// BIT(bits), 1..=64 bits: values are `UInt`.
    Bit {
        bits: u8,
    },
    /// YEAR (YEAR(4)): values are `UInt`, 0 or 1901..=2155.
    Year,
    /// UUID: values are the canonical text (see [`FixedBin`]); rows, keys and the binlog
    /// hold 16 bytes.
    Uuid,
    /// INET6: values are the canonical IPv6 text (see [`FixedBin`]); rows, keys and the
    /// binlog hold the 16-byte address.
    Inet6,
}

/// Bytes per character of utf8mb4, the only text character set onelog stores.
pub const UTF8MB4_MAXLEN: u32 = 4;
/// Collation ids sent to clients: utf8mb4_general_ci, utf8mb4_bin and binary.
pub const COLLATION_UTF8MB4_GENERAL_CI: u16 = 45;
pub const COLLATION_UTF8MB4_BIN: u16 = 46;
pub const COLLATION_BINARY: u16 = 63;

impl ColumnType {
    /// VARCHAR(len) of the given collation (VARBINARY for `Collation::Binary`).
    pub fn varchar(len: u32, collation: Collation) -> ColumnType {
        ColumnType::Varchar {
            len,
            binary: collation == Collation::Binary,
            collation,
        }
    }

    /// CHAR(len) of the given collation (BINARY for `Collation::Binary`).
    pub fn char(len: u32, collation: Collation) -> ColumnType {
        ColumnType::Char {
            len,
            binary: collation == Collation::Binary,
            collation,
        }
    }

    /// A TEXT type (`len_bytes`: 1 TINYTEXT, 2 TEXT, 3 MEDIUMTEXT, 4 LONGTEXT) of the given
    /// collation (the BLOB type for `Collation::Binary`).
    pub fn text(len_bytes: u8, collation: Collation) -> ColumnType {
        ColumnType::Blob {
            len_bytes,
            binary: collation == Collation::Binary,
            collation,
        }
    }

    /// The collation of a string type (`Binary` for binary types), None for other types.
    pub fn collation(&self) -> Option<Collation> {
        match *self {
            ColumnType::Char {
                binary, collation, ..
            }
            | ColumnType::Varchar {
                binary, collation, ..
            }
            | ColumnType::Blob {
                binary, collation, ..
            } => Some(if binary { Collation::Binary } else { collation }),
            ColumnType::Enum { collation, .. } | ColumnType::Set { collation, .. } => {
                Some(collation)
            }
            _ => None,
        }
    }

    /// UUID or INET6 (16-byte fixed binary types shown as text).
    pub fn fixed_bin(&self) -> Option<FixedBin> {
        match self {
            ColumnType::Uuid => Some(FixedBin::Uuid),
            ColumnType::Inet6 => Some(FixedBin::Inet6),
            _ => None,
        }
    }

    /// The value list of an ENUM or SET type.
    pub fn elements(&self) -> Option<Elements> {
        match *self {
            ColumnType::Enum { elems, .. } | ColumnType::Set { elems, .. } => Some(elems),
            _ => None,
        }
    }

    /// Whether this is an ENUM or SET type (text values with a numeric stored form).
    pub fn is_enum_or_set(&self) -> bool {
        matches!(self, ColumnType::Enum { .. } | ColumnType::Set { .. })
    }

    /// The same type with another collation (a binary type for `Collation::Binary`); other
    /// types are returned unchanged.
    pub fn with_collation(self, c: Collation) -> ColumnType {
        match self {
            ColumnType::Char { len, .. } => ColumnType::char(len, c),
            ColumnType::Varchar { len, .. } => ColumnType::varchar(len, c),
            ColumnType::Blob { len_bytes, .. } => ColumnType::text(len_bytes, c),
            ColumnType::Enum { elems, .. } => ColumnType::Enum {
                elems,
                collation: c,
            },
            ColumnType::Set { elems, .. } => ColumnType::Set {
                elems,
                collation: c,
            },
            t => t,
        }
    }

    /// Whether values of this type compare case-insensitively (index keys hold weights,
    /// not the values).
    pub fn is_ci(&self) -> bool {
        self.collation().is_some_and(Collation::is_ci)
    }

    /// The type code written in binlog table maps and column definitions.
    pub fn type_code(&self) -> u8 {
        use type_code::*;
        match *self {
            ColumnType::Int { bytes: 1, .. } => TINY,
            ColumnType::Int { bytes: 2, .. } => SHORT,
            ColumnType::Int { bytes: 3, .. } => INT24,
            ColumnType::Int { bytes: 4, .. } => LONG,
            ColumnType::Int { .. } => LONGLONG,
            ColumnType::Float => FLOAT,
            ColumnType::Double => DOUBLE,
            ColumnType::Decimal { .. } => NEWDECIMAL,
            ColumnType::Char { .. } => STRING,
            ColumnType::Varchar { .. } => VARCHAR,
            ColumnType::Blob { .. } => BLOB,
            ColumnType::Date => DATE,
            ColumnType::Time { .. } => TIME2,
            ColumnType::DateTime { .. } => DATETIME2,
            ColumnType::Timestamp { .. } => TIMESTAMP2,
            ColumnType::Enum { .. } | ColumnType::Set { .. } => STRING,
            ColumnType::Bit { .. } => BIT,
            ColumnType::Year => YEAR,
            ColumnType::Uuid | ColumnType::Inet6 => STRING,
        }
    }

    pub fn is_unsigned(&self) -> bool {
        matches!(
            self,
            ColumnType::Int { unsigned: true, .. } | ColumnType::Bit { .. } | ColumnType::Year
        )
    }

    pub fn is_binary(&self) -> bool {
        match self {
            ColumnType::Char { binary, .. }
            | ColumnType::Varchar { binary, .. }
            | ColumnType::Blob { binary, .. } => *binary,
            _ => false,
        }
    }

    pub fn is_string(&self) -> bool {
        matches!(
            self,
            ColumnType::Char { .. }
                | ColumnType::Varchar { .. }
                | ColumnType::Blob { .. }
                | ColumnType::Enum { .. }
                | ColumnType::Set { .. }
        )
    }

    /// Largest number of bytes a value of this string type may hold (None for non-strings).
    pub fn max_bytes(&self) -> Option<u64> {
        let per_char = |binary: bool| if binary { 1 } else { UTF8MB4_MAXLEN as u64 };
        match *self {
            ColumnType::Char { len, binary, .. } | ColumnType::Varchar { len, binary, .. } => {
                Some(len as u64 * per_char(binary))
            }
            ColumnType::Blob { len_bytes, .. } => Some((1u64 << (8 * len_bytes as u64)) - 1),
            ColumnType::Enum { elems, .. } => Some(
                elems
                    .values()
                    .iter()
                    .map(|e| e.chars().count() as u64)
                    .max()
                    .unwrap_or(0)
                    * UTF8MB4_MAXLEN as u64,
            ),
            ColumnType::Set { elems, .. } => Some(
                (elems
                    .values()
                    .iter()
                    .map(|e| e.chars().count() as u64)
                    .sum::<u64>()
                    + elems.len().saturating_sub(1) as u64)
                    * UTF8MB4_MAXLEN as u64,
            ),
            _ => None,
        }
    }

    /// Inclusive range of an integer type.
    pub fn int_range(&self) -> Option<(i128, i128)> {
        match *self {
            ColumnType::Int { bytes, unsigned } => {
                let bits = 8 * bytes as u32;
                Some(if unsigned {
                    (0, (1i128 << bits) - 1)
                } else {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                })
            }
            _ => None,
        }
    }

    /// The SQL spelling, as `SHOW CREATE TABLE` prints it.
    pub fn sql_name(&self) -> String {
        match *self {
            ColumnType::Int { bytes, unsigned } => {
                let (name, width) = match (bytes, unsigned) {
                    (1, false) => ("tinyint", 4),
                    (1, true) => ("tinyint", 3),
                    (2, false) => ("smallint", 6),
                    (2, true) => ("smallint", 5),
                    (3, false) => ("mediumint", 9),
                    (3, true) => ("mediumint", 8),
                    (4, false) => ("int", 11),
                    (4, true) => ("int", 10),
                    (_, false) => ("bigint", 20),
                    (_, true) => ("bigint", 20),
                };
                format!("{name}({width}){}", if unsigned { " unsigned" } else { "" })
            }
            ColumnType::Float => "float".into(),
            ColumnType::Double => "double".into(),
            ColumnType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
            ColumnType::Char {
                len, binary: false, ..
            } => format!("char({len})"),
            ColumnType::Char {
                len, binary: true, ..
            } => format!("binary({len})"),
            ColumnType::Varchar {
                len, binary: false, ..
            } => format!("varchar({len})"),
            ColumnType::Varchar {
                len, binary: true, ..
            } => format!("varbinary({len})"),
            ColumnType::Blob {
                len_bytes, binary, ..
            } => {
                let size = match len_bytes {
                    1 => "tiny",
                    2 => "",
                    3 => "medium",
                    _ => "long",
                };
                format!("{size}{}", if binary { "blob" } else { "text" })
            }
            ColumnType::Date => "date".into(),
            ColumnType::Time { fsp } => with_fsp("time", fsp),
            ColumnType::DateTime { fsp } => with_fsp("datetime", fsp),
            ColumnType::Timestamp { fsp } => with_fsp("timestamp", fsp),
            ColumnType::Enum { elems, .. } => format!("enum({})", elems.sql_list()),
            ColumnType::Set { elems, .. } => format!("set({})", elems.sql_list()),
            ColumnType::Bit { bits } => format!("bit({bits})"),
            ColumnType::Year => "year(4)".into(),
            ColumnType::Uuid => "uuid".into(),
            ColumnType::Inet6 => "inet6".into(),
        }
    }
}

/// The number an ENUM (1-based index, 0 for `''`) or SET (bitmap) value of column type
/// `ty` is stored as in keys and binlog row images; None for other types.
pub fn enum_set_number(ty: &ColumnType, v: &Value) -> Option<u64> {
    match (ty, v) {
        (ColumnType::Enum { elems, collation }, Value::Bytes(b)) => {
            Some(elems.enum_number(b, *collation))
        }
        (ColumnType::Set { elems, collation }, Value::Bytes(b)) => {
            Some(elems.set_number(b, *collation))
        }
        (ColumnType::Enum { .. } | ColumnType::Set { .. }, Value::UInt(u)) => Some(*u),
        (ColumnType::Enum { .. } | ColumnType::Set { .. }, Value::Int(i)) => Some(*i as u64),
        _ => None,
    }
}

/// The text of an ENUM index or SET bitmap of column type `ty` (None for other types).
pub fn enum_set_text(ty: &ColumnType, n: u64) -> Option<Value> {
    match ty {
        ColumnType::Enum { elems, .. } => Some(Value::Bytes(elems.enum_text(n))),
        ColumnType::Set { elems, .. } => Some(Value::Bytes(elems.set_text(n))),
        _ => None,
    }
}

fn with_fsp(name: &str, fsp: u8) -> String {
    if fsp == 0 {
        name.to_string()
    } else {
        format!("{name}({fsp})")
    }
}

/// One SQL value.
///
/// Integers are `Int` (signed columns) or `UInt` (unsigned columns); FLOAT and DOUBLE are
/// both kept as `Double` (FLOAT columns round to f32 on store); strings and binary strings
/// are `Bytes` (utf8mb4 text is valid UTF-8).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Value {
    Null,
    Int(i64),
    UInt(u64),
    Double(f64),
    Decimal(Decimal),
    Bytes(Vec<u8>),
    Date(Date),
    DateTime(DateTime),
    Time(Time),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Convenience constructor for text values.
    pub fn str(s: &str) -> Value {
        Value::Bytes(s.as_bytes().to_vec())
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// Formats the value the way MariaDB's text protocol sends it (NULL prints as `NULL`).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Int(v) => write!(f, "{v}"),
            Value::UInt(v) => write!(f, "{v}"),
            Value::Double(v) => f.write_str(&format_double(*v)),
            Value::Decimal(d) => write!(f, "{d}"),
            Value::Bytes(b) => f.write_str(&String::from_utf8_lossy(b)),
            Value::Date(d) => write!(f, "{d}"),
            Value::DateTime(d) => write!(f, "{d}"),
            Value::Time(t) => write!(f, "{t}"),
        }
    }
}

/// Formats a double as MariaDB does in text results: shortest round-trip digits, no
/// trailing `.0`, exponent form for very large or small magnitudes.
pub fn format_double(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return "0".into();
    }
    let abs = v.abs();
    if (1e-5..1e15).contains(&abs) {
        let s = format!("{v}");
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    } else {
        let s = format!("{v:e}");
        // Rust prints `1e20`; MariaDB prints `1e20` too, and `1.5e-7` as `1.5e-7`.
        s
    }
}
