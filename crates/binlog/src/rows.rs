//! MySQL/MariaDB binary row format: table-map column types and metadata, and the packing of
//! each value in row images.
//!
//! Format (row image): `null bitmap over the present columns [(present+7)/8] |
//! packed non-NULL values in column order`. Packed values, by table-map type:
//! - TINY/SHORT/INT24/LONG/LONGLONG: 1/2/3/4/8 bytes little-endian (two's complement).
//! - FLOAT: f32 LE; DOUBLE: f64 LE.
//! - NEWDECIMAL: MySQL's binary decimal (big-endian groups of 9 digits in 4 bytes, leftover
//!   digits in 1..4 bytes, sign folded into the top bit, negatives bit-inverted).
//! - STRING (CHAR/BINARY), VARCHAR: length in 1 byte (max bytes <= 255) or 2 bytes LE, then
//!   the bytes.
//! - BLOB: length in `len_bytes` bytes LE, then the bytes.
//! - DATE: 3 bytes LE `day | month << 5 | year << 9`.
//! - DATETIME2: 5 bytes BE `((year*13+month) << 22 | day << 17 | hour << 12 | min << 6 | sec)
//!   + 0x80_0000_0000`, then the fraction.
//! - TIMESTAMP2: 4 bytes BE unix seconds, then the fraction.
//! - TIME2: 3 bytes BE `0x800000 + (hour << 12 | min << 6 | sec)` (two's complement of the
//!   whole value for negative times), then the fraction; 6 bytes BE for fsp 5 and 6.
//! - Fractions: fsp 1-2 one byte (1/100 s), 3-4 two bytes BE (1/10000 s), 5-6 three bytes BE
//!   (microseconds).
//! - YEAR: 1 byte, `year - 1900` (0 for year 0).
//! - ENUM/SET (table-map type STRING) and BIT: see `rows_enum.rs`.

use onelog_types::{type_code as tc, ColumnType, Date, DateTime, Decimal, Time, Value};

use crate::codec::{be_uint, bit, bitmap_from_fn, put_uint_be, put_uint_le, Cursor};
pub use crate::decimal_bin::decimal_bin_size;
use crate::decimal_bin::{pack_decimal, unpack_decimal};
use crate::error::{BinlogError, Result};
use crate::event::{RowsEvent, RowsKind, TableMap};

/// JSON's type code in MySQL (MariaDB logs JSON as LONGTEXT, but reads it).
const JSON: u8 = 245;

/// The collation of a character column that names none.
const COLLATION_UTF8MB4_GENERAL_CI: u32 = 45;

/// Whether the type counts as numeric for table-map SIGNEDNESS metadata.
pub fn is_numeric_type(ty: u8) -> bool {
    matches!(
        ty,
        tc::TINY
            | tc::SHORT
            | tc::INT24
            | tc::LONG
            | tc::LONGLONG
            | tc::FLOAT
            | tc::DOUBLE
            | tc::NEWDECIMAL
            | tc::DECIMAL
    )
}

/// Whether the type counts as a character column for DEFAULT_CHARSET metadata.
pub fn is_character_type(ty: u8) -> bool {
    matches!(
        ty,
        tc::STRING
            | tc::VARCHAR
            | tc::VAR_STRING
            | tc::BLOB
            | tc::TINY_BLOB
            | tc::MEDIUM_BLOB
            | tc::LONG_BLOB
    )
}

fn meta_size(ty: u8) -> usize {
    match ty {
        tc::FLOAT
        | tc::DOUBLE
        | tc::BLOB
        | tc::TINY_BLOB
        | tc::MEDIUM_BLOB
        | tc::LONG_BLOB
        | tc::GEOMETRY
        | JSON
        | tc::TIME2
        | tc::DATETIME2
        | tc::TIMESTAMP2 => 1,
        tc::VARCHAR
        | tc::VAR_STRING
        | tc::STRING
        | tc::ENUM
        | tc::SET
        | tc::NEWDECIMAL
        | tc::BIT => 2,
        _ => 0,
    }
}

/// Writes one column's table-map metadata.
// Format: 1-byte types: the byte. VARCHAR: u16 LE max bytes. STRING/ENUM/SET/NEWDECIMAL/BIT:
// two bytes `meta >> 8, meta & 0xff` (STRING: real_type, length; NEWDECIMAL: precision,
// scale; BIT: bits % 8, bytes).
pub fn write_meta(out: &mut Vec<u8>, ty: u8, meta: u16) {
    match (ty, meta_size(ty)) {
        (_, 1) => out.push(meta as u8),
        (tc::VARCHAR | tc::VAR_STRING, 2) => out.extend_from_slice(&meta.to_le_bytes()),
        (_, 2) => out.extend_from_slice(&meta.to_be_bytes()),
        _ => {}
    }
}

/// Reads one column's table-map metadata (see [`write_meta`]).
pub(crate) fn read_meta(c: &mut Cursor<'_>, ty: u8) -> Result<u16> {
    Ok(match (ty, meta_size(ty)) {
        (_, 1) => c.u8()? as u16,
        (tc::VARCHAR | tc::VAR_STRING, 2) => c.u16()?,
        (_, 2) => u16::from_be_bytes([c.u8()?, c.u8()?]),
        _ => 0,
    })
}

/// How one column is described in a table map: what unpacking a value needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnSpec {
    pub type_code: u8,
    pub meta: u16,
    pub unsigned: bool,
    /// An ENUM/SET column's values (from the catalog): packing maps text to the number.
    pub elems: Option<onelog_types::Elements>,
    /// A UUID/INET6 column (from the catalog): packing logs the text's 16-byte form.
    pub fixed: Option<onelog_types::FixedBin>,
}

impl ColumnSpec {
    /// The table-map description of a column type.
    pub fn from_type(ty: &ColumnType) -> ColumnSpec {
        let (type_code, meta) = match *ty {
            ColumnType::Int { .. } => (ty.type_code(), 0),
            ColumnType::Float => (tc::FLOAT, 4),
            ColumnType::Double => (tc::DOUBLE, 8),
            ColumnType::Decimal { precision, scale } => {
                (tc::NEWDECIMAL, (precision as u16) << 8 | scale as u16)
            }
            ColumnType::Char { .. } => {
                // Max bytes above 255 fold bits 8-9 into the real-type byte (XOR 0x30).
                let max = ty.max_bytes().unwrap_or(0).min(1023) as u16;
                let b0 = tc::STRING ^ ((max & 0x300) >> 4) as u8;
                (tc::STRING, (b0 as u16) << 8 | (max & 0xff))
            }
            ColumnType::Varchar { .. } => {
                (tc::VARCHAR, ty.max_bytes().unwrap_or(0).min(65535) as u16)
            }
            ColumnType::Blob { len_bytes, .. } => (tc::BLOB, len_bytes.clamp(1, 4) as u16),
            ColumnType::Date => (tc::DATE, 0),
            ColumnType::Time { fsp } => (tc::TIME2, fsp.min(6) as u16),
            ColumnType::DateTime { fsp } => (tc::DATETIME2, fsp.min(6) as u16),
            ColumnType::Timestamp { fsp } => (tc::TIMESTAMP2, fsp.min(6) as u16),
            ColumnType::Enum { elems, .. } => (
                tc::STRING,
                (tc::ENUM as u16) << 8 | elems.enum_pack_len() as u16,
            ),
            ColumnType::Set { elems, .. } => (
                tc::STRING,
                (tc::SET as u16) << 8 | elems.set_pack_len() as u16,
            ),
            ColumnType::Bit { bits } => (tc::BIT, ((bits % 8) as u16) << 8 | (bits / 8) as u16),
            ColumnType::Year => (tc::YEAR, 0),
            ColumnType::Uuid | ColumnType::Inet6 => (tc::STRING, (tc::STRING as u16) << 8 | 16),
        };
        ColumnSpec {
            type_code,
            meta,
            unsigned: ty.is_unsigned() && !matches!(ty, ColumnType::Bit { .. } | ColumnType::Year),
            elems: ty.elements(),
            fixed: ty.fixed_bin(),
        }
    }

    /// For STRING columns: the real type (STRING, ENUM or SET) and the length.
    pub(crate) fn string_real_type(&self) -> (u8, u16) {
        let b0 = (self.meta >> 8) as u8;
        let b1 = self.meta & 0xff;
        if b0 & 0x30 != 0x30 {
            (b0 | 0x30, b1 | ((((b0 & 0x30) ^ 0x30) as u16) << 4))
        } else {
            (b0, b1)
        }
    }

    fn fsp(&self) -> u8 {
        self.meta.min(6) as u8
    }
}

/// A column of a table as the binlog describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: ColumnType,
    pub nullable: bool,
}

/// A table as the binlog describes it in TABLE_MAP events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableDef {
    pub db: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// Column indexes of the primary key, in key order (empty: none).
    pub primary_key: Vec<u32>,
}

impl TableDef {
    pub fn specs(&self) -> Vec<ColumnSpec> {
        self.columns
            .iter()
            .map(|c| ColumnSpec::from_type(&c.ty))
            .collect()
    }

    /// The TABLE_MAP event for this table with the optional metadata `binlog_row_metadata`
    /// asks for, as MariaDB's `Table_map_log_event::init_metadata_fields` writes it:
    /// MINIMAL has SIGNEDNESS and the character columns' collations (DEFAULT_CHARSET, or
    /// COLUMN_CHARSET when that is shorter); FULL adds COLUMN_NAME and SIMPLE_PRIMARY_KEY.
    pub fn table_map(&self, table_id: u64, meta: RowMetadata) -> TableMap {
        let specs = self.specs();
        let full = meta == RowMetadata::Full;
        let (default_charset, column_charset) = self.charsets(&specs);
        TableMap {
            table_id,
            flags: 1, // TM_BIT_LEN_EXACT_F
            db: self.db.clone(),
            table: self.name.clone(),
            column_types: specs.iter().map(|s| s.type_code).collect(),
            column_meta: specs.iter().map(|s| s.meta).collect(),
            nullable: self.columns.iter().map(|c| c.nullable).collect(),
            unsigned: Some(specs.iter().map(|s| s.unsigned).collect()),
            default_charset,
            column_charset,
            column_names: full.then(|| self.columns.iter().map(|c| c.name.clone()).collect()),
            primary_key: (full && !self.primary_key.is_empty()).then(|| self.primary_key.clone()),
        }
    }

    /// The collations of the character columns as MariaDB logs them: the most used one
    /// (the lowest id among equals) as DEFAULT_CHARSET with (character-column index,
    /// collation) for the others, unless one collation id per column is shorter
    /// (COLUMN_CHARSET); neither when the table has no character column.
    #[allow(clippy::type_complexity)]
    fn charsets(&self, specs: &[ColumnSpec]) -> (Option<(u32, Vec<(u32, u32)>)>, Option<Vec<u32>>) {
        let colls: Vec<u32> = self
            .columns
            .iter()
            .zip(specs)
            .filter(|(_, s)| is_character_type(s.type_code))
            .map(|(c, _)| {
                c.ty.collation()
                    .map_or(COLLATION_UTF8MB4_GENERAL_CI, |coll| coll.id() as u32)
            })
            .collect();
        if colls.is_empty() {
            return (None, None);
        }
        let mut counts: std::collections::BTreeMap<u32, usize> = Default::default();
        for &c in &colls {
            *counts.entry(c).or_default() += 1;
        }
        let (mut default, mut most) = (0, 0);
        for (&c, &n) in &counts {
            if n > most {
                (default, most) = (c, n);
            }
        }
        if colls.len() < 1 + (colls.len() - most) * 2 {
            return (None, Some(colls));
        }
        let exceptions = colls
            .iter()
            .enumerate()
            .filter(|(_, &c)| c != default)
            .map(|(k, &c)| (k as u32, c))
            .collect();
        (Some((default, exceptions)), None)
    }
}

/// `binlog_row_metadata`: the optional metadata of TABLE_MAP events. MariaDB's NO_LOG is
/// not offered: recovery and `onelog binlog dump` read signedness from the binlog.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RowMetadata {
    /// Signedness and collations.
    Minimal,
    /// Also column names and the primary key (what CDC clients name row values with).
    #[default]
    Full,
}

impl RowMetadata {
    /// The variable's value as MariaDB shows it.
    pub fn name(self) -> &'static str {
        match self {
            RowMetadata::Minimal => "MINIMAL",
            RowMetadata::Full => "FULL",
        }
    }

    /// MINIMAL or FULL, in any case (None for anything else, NO_LOG included).
    pub fn parse(s: &str) -> Option<RowMetadata> {
        match s.to_ascii_uppercase().as_str() {
            "MINIMAL" => Some(RowMetadata::Minimal),
            "FULL" => Some(RowMetadata::Full),
            _ => None,
        }
    }
}

impl TableMap {
    /// What unpacking this table's rows needs; signedness from the optional metadata.
    pub fn column_specs(&self) -> Vec<ColumnSpec> {
        (0..self.column_types.len())
            .map(|i| ColumnSpec {
                type_code: self.column_types[i],
                meta: self.column_meta[i],
                unsigned: self
                    .unsigned
                    .as_ref()
                    .and_then(|u| u.get(i).copied())
                    .unwrap_or(false),
                elems: None,
                fixed: None,
            })
            .collect()
    }
}

pub(crate) fn bad(spec: &ColumnSpec, v: &Value, why: &str) -> BinlogError {
    BinlogError::Value(format!(
        "{why}: value {v:?} for column type {} (meta {:#x})",
        spec.type_code, spec.meta
    ))
}

pub(crate) fn int_of(spec: &ColumnSpec, v: &Value) -> Result<i128> {
    match v {
        Value::Int(i) => Ok(*i as i128),
        Value::UInt(u) => Ok(*u as i128),
        Value::Decimal(d) if d.rescale(0).is_some_and(|r| r == *d) => d
            .rescale(0)
            .and_then(|r| r.narrow())
            .ok_or_else(|| bad(spec, v, "integer out of range")),
        _ => Err(bad(spec, v, "not an integer")),
    }
}

fn f64_of(spec: &ColumnSpec, v: &Value) -> Result<f64> {
    match v {
        Value::Double(f) => Ok(*f),
        Value::Int(i) => Ok(*i as f64),
        Value::UInt(u) => Ok(*u as f64),
        Value::Decimal(d) => Ok(d.to_f64()),
        _ => Err(bad(spec, v, "not a number")),
    }
}

fn int_width(ty: u8) -> Option<usize> {
    Some(match ty {
        tc::TINY => 1,
        tc::SHORT => 2,
        tc::INT24 => 3,
        tc::LONG => 4,
        tc::LONGLONG => 8,
        _ => return None,
    })
}

fn frac_bytes(fsp: u8) -> usize {
    (fsp as usize).div_ceil(2)
}

/// Microseconds truncated to `fsp` digits.
fn trunc_micro(micro: u32, fsp: u8) -> u32 {
    let unit = 10u32.pow(6 - fsp.min(6) as u32);
    micro.min(999_999) / unit * unit
}

fn put_frac(out: &mut Vec<u8>, micro: u32, fsp: u8) {
    match frac_bytes(fsp) {
        1 => out.push((micro / 10_000) as u8),
        2 => put_uint_be(out, (micro / 100) as u64, 2),
        3 => put_uint_be(out, micro as u64, 3),
        _ => {}
    }
}

fn get_frac(c: &mut Cursor<'_>, fsp: u8) -> Result<u32> {
    Ok(match frac_bytes(fsp) {
        1 => c.u8()? as u32 * 10_000,
        2 => be_uint(c.bytes(2)?) as u32 * 100,
        3 => be_uint(c.bytes(3)?) as u32,
        _ => 0,
    })
}

const TIMEF_INT_OFS: i64 = 0x80_0000;
const TIMEF_OFS: i64 = 0x8000_0000_0000;
const DATETIMEF_INT_OFS: u64 = 0x80_0000_0000;

fn pack_time2(out: &mut Vec<u8>, t: &Time, fsp: u8) -> Result<()> {
    if t.hours > 1023 || t.minute > 59 || t.second > 59 {
        return Err(BinlogError::Value(format!("TIME {t} out of range")));
    }
    let micro = trunc_micro(t.micro, fsp) as i64;
    let hms = (t.hours as i64) << 12 | (t.minute as i64) << 6 | t.second as i64;
    let mut nr = (hms << 24) + micro;
    if t.negative {
        nr = -nr;
    }
    // The integer part is the floor (>> 24); the fraction the truncated remainder, stored
    // in two's complement: together they are the two's complement of the whole value.
    let int_part = (TIMEF_INT_OFS + (nr >> 24)) as u64;
    let frac = nr % (1 << 24);
    match fsp {
        0 => put_uint_be(out, int_part, 3),
        1 | 2 => {
            put_uint_be(out, int_part, 3);
            out.push((frac / 10_000) as i8 as u8);
        }
        3 | 4 => {
            put_uint_be(out, int_part, 3);
            put_uint_be(out, (frac / 100) as i16 as u16 as u64, 2);
        }
        _ => put_uint_be(out, (nr + TIMEF_OFS) as u64, 6),
    }
    Ok(())
}

fn unpack_time2(c: &mut Cursor<'_>, fsp: u8) -> Result<Time> {
    let nr: i64 = match fsp {
        0 => (be_uint(c.bytes(3)?) as i64 - TIMEF_INT_OFS) << 24,
        1..=4 => {
            let mut int_part = be_uint(c.bytes(3)?) as i64 - TIMEF_INT_OFS;
            let (mut frac, wrap, unit) = if fsp <= 2 {
                (c.u8()? as i64, 0x100, 10_000)
            } else {
                (be_uint(c.bytes(2)?) as i64, 0x10000, 100)
            };
            if int_part < 0 && frac != 0 {
                int_part += 1;
                frac -= wrap;
            }
            (int_part << 24) + frac * unit
        }
        _ => be_uint(c.bytes(6)?) as i64 - TIMEF_OFS,
    };
    let a = nr.unsigned_abs();
    let hms = a >> 24;
    Ok(Time {
        negative: nr < 0,
        hours: ((hms >> 12) & 0x3ff) as u32,
        minute: ((hms >> 6) & 0x3f) as u8,
        second: (hms & 0x3f) as u8,
        micro: (a % (1 << 24)) as u32,
    })
}

fn pack_datetime2(out: &mut Vec<u8>, dt: &DateTime, fsp: u8) -> Result<()> {
    let d = &dt.date;
    if d.year > 9999
        || d.month > 12
        || d.day > 31
        || dt.hour > 23
        || dt.minute > 59
        || dt.second > 59
    {
        return Err(BinlogError::Value(format!("DATETIME {dt} out of range")));
    }
    let ym = d.year as u64 * 13 + d.month as u64;
    let ymd = ym << 5 | d.day as u64;
    let hms = (dt.hour as u64) << 12 | (dt.minute as u64) << 6 | dt.second as u64;
    put_uint_be(out, (ymd << 17 | hms) + DATETIMEF_INT_OFS, 5);
    put_frac(out, trunc_micro(dt.micro, fsp), fsp);
    Ok(())
}

fn unpack_datetime2(c: &mut Cursor<'_>, fsp: u8) -> Result<DateTime> {
    let v = be_uint(c.bytes(5)?).wrapping_sub(DATETIMEF_INT_OFS);
    let ymd = v >> 17;
    let ym = ymd >> 5;
    let hms = v & 0x1ffff;
    Ok(DateTime {
        date: Date {
            year: (ym / 13) as u16,
            month: (ym % 13) as u8,
            day: (ymd & 31) as u8,
        },
        hour: (hms >> 12) as u8,
        minute: ((hms >> 6) & 63) as u8,
        second: (hms & 63) as u8,
        micro: get_frac(c, fsp)?,
    })
}

fn is_zero_datetime(dt: &DateTime) -> bool {
    dt.date.year == 0 && dt.date.month == 0 && dt.date.day == 0
}

/// Appends one non-NULL value packed for a column.
pub fn pack_value(out: &mut Vec<u8>, spec: &ColumnSpec, v: &Value) -> Result<()> {
    if let Some(w) = int_width(spec.type_code) {
        let i = int_of(spec, v)?;
        let bits = 8 * w as u32;
        let (lo, hi) = if spec.unsigned {
            (0, (1i128 << bits) - 1)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        };
        if i < lo || i > hi {
            return Err(bad(spec, v, "integer out of range"));
        }
        put_uint_le(out, i as u64, w);
        return Ok(());
    }
    match spec.type_code {
        tc::FLOAT => out.extend_from_slice(&(f64_of(spec, v)? as f32).to_le_bytes()),
        tc::DOUBLE => out.extend_from_slice(&f64_of(spec, v)?.to_le_bytes()),
        tc::NEWDECIMAL => {
            let d = match v {
                Value::Decimal(d) => *d,
                Value::Int(i) => Decimal::from_i64(*i),
                Value::UInt(u) => Decimal::new(*u as i128, 0),
                _ => return Err(bad(spec, v, "not a decimal")),
            };
            pack_decimal(out, &d, (spec.meta >> 8) as u8, spec.meta as u8)?;
        }
        tc::STRING if v.as_bytes().is_none() || spec.fixed.is_some() => {
            crate::rows_enum::pack_enum_set(out, spec, v)?
        }
        tc::STRING
        | tc::VARCHAR
        | tc::VAR_STRING
        | tc::BLOB
        | tc::TINY_BLOB
        | tc::MEDIUM_BLOB
        | tc::LONG_BLOB
        | tc::GEOMETRY
        | JSON => {
            let b = v.as_bytes().ok_or_else(|| bad(spec, v, "not a string"))?;
            let (max, len_bytes) = match spec.type_code {
                tc::STRING => {
                    let (real, len) = spec.string_real_type();
                    if real != tc::STRING {
                        return crate::rows_enum::pack_enum_set(out, spec, v);
                    }
                    (len as u64, if len > 255 { 2 } else { 1 })
                }
                tc::VARCHAR | tc::VAR_STRING => {
                    (spec.meta as u64, if spec.meta > 255 { 2 } else { 1 })
                }
                _ => {
                    let lb = spec.meta.clamp(1, 4) as usize;
                    ((1u64 << (8 * lb)) - 1, lb)
                }
            };
            if b.len() as u64 > max {
                return Err(bad(spec, v, &format!("longer than {max} bytes")));
            }
            crate::codec::put_len_and_bytes(out, b, len_bytes);
        }
        tc::DATE | tc::NEWDATE => {
            let d = match v {
                Value::Date(d) => *d,
                Value::DateTime(dt) => dt.date,
                _ => return Err(bad(spec, v, "not a date")),
            };
            if d.year > 9999 || d.month > 12 || d.day > 31 {
                return Err(bad(spec, v, "date out of range"));
            }
            let n = d.day as u64 | (d.month as u64) << 5 | (d.year as u64) << 9;
            put_uint_le(out, n, 3);
        }
        tc::TIME2 => match v {
            Value::Time(t) => pack_time2(out, t, spec.fsp())?,
            _ => return Err(bad(spec, v, "not a time")),
        },
        tc::DATETIME2 => match v {
            Value::DateTime(dt) => pack_datetime2(out, dt, spec.fsp())?,
            Value::Date(d) => pack_datetime2(
                out,
                &DateTime {
                    date: *d,
                    hour: 0,
                    minute: 0,
                    second: 0,
                    micro: 0,
                },
                spec.fsp(),
            )?,
            _ => return Err(bad(spec, v, "not a datetime")),
        },
        tc::TIMESTAMP2 => {
            let Value::DateTime(dt) = v else {
                return Err(bad(spec, v, "not a timestamp"));
            };
            let secs = if is_zero_datetime(dt) {
                0
            } else {
                dt.unix_seconds()
            };
            if !(0..=u32::MAX as i64).contains(&secs) {
                return Err(bad(spec, v, "timestamp out of range"));
            }
            put_uint_be(out, secs as u64, 4);
            put_frac(out, trunc_micro(dt.micro, spec.fsp()), spec.fsp());
        }
        tc::YEAR => {
            let y = int_of(spec, v)?;
            let b = match y {
                0 => 0,
                1901..=2155 => y - 1900,
                _ => return Err(bad(spec, v, "year out of range")),
            };
            out.push(b as u8);
        }
        tc::BIT => crate::rows_enum::pack_bit(out, spec, v)?,
        _ => return Err(bad(spec, v, "unsupported column type")),
    }
    Ok(())
}

/// Reads one non-NULL value of a column.
pub(crate) fn unpack_value(c: &mut Cursor<'_>, spec: &ColumnSpec) -> Result<Value> {
    if let Some(w) = int_width(spec.type_code) {
        let raw = c.uint_le(w)?;
        return Ok(if spec.unsigned {
            Value::UInt(raw)
        } else {
            let shift = 64 - 8 * w as u32;
            Value::Int(((raw << shift) as i64) >> shift)
        });
    }
    let len_prefixed = |c: &mut Cursor<'_>, n: usize| -> Result<Value> {
        let len = c.uint_le(n)? as usize;
        Ok(Value::Bytes(c.bytes(len)?.to_vec()))
    };
    Ok(match spec.type_code {
        tc::FLOAT => Value::Double(f32::from_le_bytes(c.bytes(4)?.try_into().unwrap()) as f64),
        tc::DOUBLE => Value::Double(f64::from_le_bytes(c.bytes(8)?.try_into().unwrap())),
        tc::NEWDECIMAL => {
            Value::Decimal(unpack_decimal(c, (spec.meta >> 8) as u8, spec.meta as u8)?)
        }
        tc::STRING => {
            let (real, len) = spec.string_real_type();
            match real {
                tc::ENUM | tc::SET => Value::UInt(c.uint_le(len as usize)?),
                _ => len_prefixed(c, if len > 255 { 2 } else { 1 })?,
            }
        }
        tc::VARCHAR | tc::VAR_STRING => len_prefixed(c, if spec.meta > 255 { 2 } else { 1 })?,
        tc::BLOB | tc::TINY_BLOB | tc::MEDIUM_BLOB | tc::LONG_BLOB | tc::GEOMETRY | JSON => {
            len_prefixed(c, spec.meta.clamp(1, 4) as usize)?
        }
        tc::ENUM | tc::SET => Value::UInt(c.uint_le((spec.meta & 0xff).clamp(1, 8) as usize)?),
        tc::DATE | tc::NEWDATE => {
            let n = c.uint_le(3)?;
            Value::Date(Date {
                year: (n >> 9) as u16,
                month: ((n >> 5) & 15) as u8,
                day: (n & 31) as u8,
            })
        }
        tc::TIME2 => Value::Time(unpack_time2(c, spec.fsp())?),
        tc::DATETIME2 => Value::DateTime(unpack_datetime2(c, spec.fsp())?),
        tc::TIMESTAMP2 => {
            let secs = be_uint(c.bytes(4)?) as i64;
            let micro = get_frac(c, spec.fsp())?;
            Value::DateTime(timestamp_value(secs, micro))
        }
        tc::TIMESTAMP => Value::DateTime(timestamp_value(c.u32()? as i64, 0)),
        tc::YEAR => {
            let y = c.u8()?;
            Value::UInt(if y == 0 { 0 } else { 1900 + y as u64 })
        }
        tc::BIT => {
            let n = (spec.meta & 0xff) as usize + usize::from(spec.meta >> 8 != 0);
            if n > 8 {
                return Err(BinlogError::decode("BIT wider than 64 bits"));
            }
            Value::UInt(be_uint(c.bytes(n)?))
        }
        t => {
            return Err(BinlogError::decode(format!(
                "cannot decode column type {t} in a row image"
            )))
        }
    })
}

fn timestamp_value(secs: i64, micro: u32) -> DateTime {
    if secs == 0 && micro == 0 {
        // TIMESTAMP 0 is MariaDB's zero timestamp '0000-00-00 00:00:00'.
        return DateTime {
            date: Date {
                year: 0,
                month: 0,
                day: 0,
            },
            hour: 0,
            minute: 0,
            second: 0,
            micro: 0,
        };
    }
    DateTime::from_unix(secs, micro)
}

/// Appends a full row image (every column present): NULL bitmap, then the packed values.
pub fn pack_row(out: &mut Vec<u8>, specs: &[ColumnSpec], row: &[Value]) -> Result<()> {
    if specs.len() != row.len() {
        return Err(BinlogError::Value(format!(
            "row has {} values for {} columns",
            row.len(),
            specs.len()
        )));
    }
    // Unused trailing bits of the NULL bitmap are set, as MariaDB writes them.
    let n = row.len();
    out.extend_from_slice(&bitmap_from_fn(n.div_ceil(8) * 8, |i| {
        i >= n || row[i].is_null()
    }));
    for (spec, v) in specs.iter().zip(row) {
        if !v.is_null() {
            pack_value(out, spec, v)?;
        }
    }
    Ok(())
}

/// Reads one row image over the columns set in `present`; absent columns come back NULL.
pub(crate) fn unpack_row(
    c: &mut Cursor<'_>,
    specs: &[ColumnSpec],
    present: &[u8],
) -> Result<Vec<Value>> {
    let n_present = (0..specs.len()).filter(|&i| bit(present, i)).count();
    let nulls = c.bytes(n_present.div_ceil(8))?;
    let mut row = Vec::with_capacity(specs.len());
    let mut k = 0;
    for (i, spec) in specs.iter().enumerate() {
        if !bit(present, i) {
            row.push(Value::Null);
            continue;
        }
        let is_null = bit(nulls, k);
        k += 1;
        row.push(if is_null {
            Value::Null
        } else {
            unpack_value(c, spec)?
        });
    }
    Ok(row)
}

/// One row change of a rows event.
#[derive(Clone, Debug, PartialEq)]
pub enum RowChange {
    Insert(Vec<Value>),
    Update {
        before: Vec<Value>,
        after: Vec<Value>,
    },
    Delete(Vec<Value>),
}

/// Decodes every row of a rows event, given its table's column specs (from the table map,
/// [`TableMap::column_specs`], or the catalog, [`TableDef::specs`]).
pub fn decode_rows(ev: &RowsEvent, specs: &[ColumnSpec]) -> Result<Vec<RowChange>> {
    if ev.width as usize != specs.len() {
        return Err(BinlogError::decode(format!(
            "rows event has {} columns, table map {}",
            ev.width,
            specs.len()
        )));
    }
    let mut c = Cursor::new(&ev.rows);
    let mut out = Vec::new();
    while !c.is_empty() {
        let row = unpack_row(&mut c, specs, &ev.columns_present)?;
        out.push(match ev.kind {
            RowsKind::Write => RowChange::Insert(row),
            RowsKind::Delete => RowChange::Delete(row),
            RowsKind::Update => {
                let after_bits = ev.columns_after.as_deref().unwrap_or(&ev.columns_present);
                let after = unpack_row(&mut c, specs, after_bits)?;
                RowChange::Update { before: row, after }
            }
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{decode_event, Event};

    fn dt(y: u16, mo: u8, d: u8, h: u8, mi: u8, s: u8, micro: u32) -> DateTime {
        DateTime {
            date: Date {
                year: y,
                month: mo,
                day: d,
            },
            hour: h,
            minute: mi,
            second: s,
            micro,
        }
    }

    fn time(negative: bool, hours: u32, minute: u8, second: u8, micro: u32) -> Time {
        Time {
            negative,
            hours,
            minute,
            second,
            micro,
        }
    }

    fn round_trip(ty: ColumnType, v: Value) {
        let spec = ColumnSpec::from_type(&ty);
        let mut out = Vec::new();
        pack_value(&mut out, &spec, &v).unwrap_or_else(|e| panic!("{ty:?} {v:?}: {e}"));
        let mut c = Cursor::new(&out);
        let back = unpack_value(&mut c, &spec).unwrap();
        assert!(c.is_empty(), "{ty:?} {v:?}: trailing bytes");
        assert_eq!(back, v, "{ty:?}");
    }

    fn dec(s: &str) -> Value {
        Value::Decimal(s.parse().unwrap())
    }

    #[test]
    fn integers() {
        for (bytes, unsigned) in [
            (1, false),
            (1, true),
            (2, false),
            (2, true),
            (3, false),
            (3, true),
            (4, false),
            (4, true),
            (8, false),
            (8, true),
        ] {
            let ty = ColumnType::Int { bytes, unsigned };
            let (lo, hi) = ty.int_range().unwrap();
            for v in [lo, hi, 0, 1, lo + 1, hi - 1] {
                let v = if unsigned {
                    Value::UInt(v as u64)
                } else {
                    Value::Int(v as i64)
                };
                round_trip(ty, v);
            }
            let spec = ColumnSpec::from_type(&ty);
            let over = if unsigned {
                Value::Int(-1)
            } else {
                Value::UInt(hi as u64 + 1)
            };
            assert!(pack_value(&mut Vec::new(), &spec, &over).is_err());
        }
        round_trip(
            ColumnType::Int {
                bytes: 8,
                unsigned: true,
            },
            Value::UInt(u64::MAX),
        );
    }

    #[test]
    fn floats() {
        for v in [0.0, 1.5, -2.25, f32::MAX as f64, f32::MIN_POSITIVE as f64] {
            round_trip(ColumnType::Float, Value::Double(v));
        }
        for v in [
            0.0,
            -2.25,
            f64::MAX,
            f64::MIN_POSITIVE,
            1e-300,
            std::f64::consts::PI,
        ] {
            round_trip(ColumnType::Double, Value::Double(v));
        }
    }

    #[test]
    fn decimals() {
        let cases: &[(u8, u8, &[&str])] = &[
            (
                20,
                6,
                &[
                    "-1234.567891",
                    "0.000000",
                    "99999999999999.999999",
                    "-99999999999999.999999",
                    "0.000001",
                    "-0.000001",
                ],
            ),
            (10, 0, &["0", "1", "-1", "9999999999", "-9999999999"]),
            (5, 5, &["0.12345", "-0.99999"]),
            (1, 0, &["7", "-9"]),
            (
                38,
                10,
                &[
                    "1234567890123456789012345678.0123456789",
                    "-1234567890123456789012345678.0123456789",
                ],
            ),
            (
                38,
                30,
                &[
                    "12345678.123456789012345678901234567890",
                    "-0.000000000000000000000000000001",
                ],
            ),
            (18, 9, &["123456789.123456789", "-123456789.123456789"]),
            (9, 2, &["-1234567.89"]),
        ];
        for (p, s, vals) in cases {
            let ty = ColumnType::Decimal {
                precision: *p,
                scale: *s,
            };
            assert_eq!(decimal_bin_size(*p, *s), {
                let mut out = Vec::new();
                pack_value(&mut out, &ColumnSpec::from_type(&ty), &dec("0")).unwrap();
                out.len()
            });
            for v in *vals {
                round_trip(ty, dec(v));
            }
        }
        // Values are rescaled to the column's scale; too many digits fail.
        let spec = ColumnSpec::from_type(&ColumnType::Decimal {
            precision: 5,
            scale: 2,
        });
        assert!(pack_value(&mut Vec::new(), &spec, &dec("1000.1")).is_err());
        let mut out = Vec::new();
        pack_value(&mut out, &spec, &Value::Int(12)).unwrap();
        assert_eq!(
            unpack_value(&mut Cursor::new(&out), &spec).unwrap(),
            dec("12.00")
        );
    }

    #[test]
    fn strings() {
        for binary in [false, true] {
            round_trip(
                ColumnType::Char {
                    len: 10,
                    binary,
                    collation: if binary {
                        onelog_types::Collation::Binary
                    } else {
                        onelog_types::Collation::Utf8mb4GeneralCi
                    },
                },
                Value::str("abc"),
            );
            round_trip(
                ColumnType::Char {
                    len: 255,
                    binary,
                    collation: if binary {
                        onelog_types::Collation::Binary
                    } else {
                        onelog_types::Collation::Utf8mb4GeneralCi
                    },
                },
                Value::Bytes(vec![b'x'; 255]),
            );
            round_trip(
                ColumnType::Varchar {
                    len: 60,
                    binary,
                    collation: if binary {
                        onelog_types::Collation::Binary
                    } else {
                        onelog_types::Collation::Utf8mb4GeneralCi
                    },
                },
                Value::str(""),
            );
            round_trip(
                ColumnType::Varchar {
                    len: 300,
                    binary,
                    collation: if binary {
                        onelog_types::Collation::Binary
                    } else {
                        onelog_types::Collation::Utf8mb4GeneralCi
                    },
                },
                Value::Bytes(vec![0xff; 300]),
            );
            round_trip(
                ColumnType::Varchar {
                    len: 16000,
                    binary,
                    collation: if binary {
                        onelog_types::Collation::Binary
                    } else {
                        onelog_types::Collation::Utf8mb4GeneralCi
                    },
                },
                Value::Bytes(vec![7; 16000]),
            );
            for len_bytes in 1..=4u8 {
                round_trip(
                    ColumnType::Blob {
                        len_bytes,
                        binary,
                        collation: if binary {
                            onelog_types::Collation::Binary
                        } else {
                            onelog_types::Collation::Utf8mb4GeneralCi
                        },
                    },
                    Value::Bytes(vec![1, 0, 2]),
                );
            }
            round_trip(
                ColumnType::Blob {
                    len_bytes: 3,
                    binary,
                    collation: if binary {
                        onelog_types::Collation::Binary
                    } else {
                        onelog_types::Collation::Utf8mb4GeneralCi
                    },
                },
                Value::Bytes(vec![9; 70_000]),
            );
            round_trip(
                ColumnType::Blob {
                    len_bytes: 4,
                    binary,
                    collation: if binary {
                        onelog_types::Collation::Binary
                    } else {
                        onelog_types::Collation::Utf8mb4GeneralCi
                    },
                },
                Value::Bytes(vec![9; 70_000]),
            );
        }
        // utf8mb4 CHAR(255) is 1020 bytes: the length trick in the metadata's first byte.
        let ty = ColumnType::Char {
            len: 255,
            binary: false,
            collation: onelog_types::Collation::Utf8mb4GeneralCi,
        };
        let spec = ColumnSpec::from_type(&ty);
        assert_eq!(spec.meta, 0xcefc);
        assert_eq!(spec.string_real_type(), (tc::STRING, 1020));
        round_trip(ty, Value::Bytes("é".repeat(510).into_bytes()));
        // Too long.
        let spec = ColumnSpec::from_type(&ColumnType::Blob {
            len_bytes: 1,
            binary: true,
            collation: onelog_types::Collation::Binary,
        });
        assert!(pack_value(&mut Vec::new(), &spec, &Value::Bytes(vec![0; 256])).is_err());
        let spec = ColumnSpec::from_type(&ColumnType::Varchar {
            len: 3,
            binary: true,
            collation: onelog_types::Collation::Binary,
        });
        assert!(pack_value(&mut Vec::new(), &spec, &Value::Bytes(vec![0; 4])).is_err());
        assert!(pack_value(&mut Vec::new(), &spec, &Value::Int(1)).is_err());
    }

    #[test]
    fn temporal() {
        round_trip(
            ColumnType::Date,
            Value::Date(Date {
                year: 2024,
                month: 2,
                day: 29,
            }),
        );
        round_trip(
            ColumnType::Date,
            Value::Date(Date {
                year: 0,
                month: 0,
                day: 0,
            }),
        );
        round_trip(
            ColumnType::Date,
            Value::Date(Date {
                year: 9999,
                month: 12,
                day: 31,
            }),
        );
        for fsp in 0..=6u8 {
            let unit = 10u32.pow(6 - fsp as u32);
            let micro = 123_456 / unit * unit;
            let max_micro = 999_999 / unit * unit;
            for v in [
                dt(2024, 1, 2, 3, 4, 5, micro),
                dt(1000, 1, 1, 0, 0, 0, 0),
                dt(9999, 12, 31, 23, 59, 59, max_micro),
                dt(0, 0, 0, 0, 0, 0, 0),
            ] {
                round_trip(ColumnType::DateTime { fsp }, Value::DateTime(v));
            }
            for v in [
                dt(2024, 1, 2, 3, 4, 5, micro),
                dt(1970, 1, 1, 0, 0, 1, 0),
                dt(2038, 1, 19, 3, 14, 7, max_micro),
                dt(2106, 2, 7, 6, 28, 15, 0),
                dt(0, 0, 0, 0, 0, 0, 0),
            ] {
                round_trip(ColumnType::Timestamp { fsp }, Value::DateTime(v));
            }
            for v in [
                time(false, 0, 0, 0, 0),
                time(false, 838, 59, 59, max_micro),
                time(true, 838, 59, 59, max_micro),
                time(true, 0, 0, 1, 0),
                time(true, 0, 0, 0, micro),
                time(true, 12, 34, 56, micro),
                time(false, 12, 34, 56, micro),
                time(true, 1, 0, 0, if fsp == 0 { 0 } else { unit }),
            ] {
                if v.micro == 0 && v.hours == 0 && v.minute == 0 && v.second == 0 && v.negative {
                    continue; // -00:00:00 is not a value
                }
                round_trip(ColumnType::Time { fsp }, Value::Time(v));
            }
        }
        // Fractions beyond the column's precision are truncated.
        let spec = ColumnSpec::from_type(&ColumnType::DateTime { fsp: 2 });
        let mut out = Vec::new();
        pack_value(
            &mut out,
            &spec,
            &Value::DateTime(dt(2024, 1, 2, 3, 4, 5, 123_456)),
        )
        .unwrap();
        assert_eq!(
            unpack_value(&mut Cursor::new(&out), &spec).unwrap(),
            Value::DateTime(dt(2024, 1, 2, 3, 4, 5, 120_000))
        );
    }

    #[test]
    fn rows_with_nulls() {
        let specs: Vec<_> = [
            ColumnType::Int {
                bytes: 4,
                unsigned: false,
            },
            ColumnType::Varchar {
                len: 10,
                binary: false,
                collation: onelog_types::Collation::Utf8mb4GeneralCi,
            },
            ColumnType::Double,
            ColumnType::Blob {
                len_bytes: 2,
                binary: true,
                collation: onelog_types::Collation::Binary,
            },
        ]
        .iter()
        .map(ColumnSpec::from_type)
        .collect();
        let rows = vec![
            vec![Value::Int(1), Value::Null, Value::Double(2.0), Value::Null],
            vec![Value::Null, Value::Null, Value::Null, Value::Null],
            vec![
                Value::Int(-3),
                Value::str("x"),
                Value::Null,
                Value::Bytes(vec![1]),
            ],
        ];
        let mut data = Vec::new();
        for r in &rows {
            pack_row(&mut data, &specs, r).unwrap();
        }
        let ev = RowsEvent {
            kind: RowsKind::Write,
            table_id: 1,
            flags: 1,
            width: 4,
            columns_present: vec![0x0f],
            columns_after: None,
            rows: data,
        };
        let back = decode_rows(&ev, &specs).unwrap();
        assert_eq!(
            back,
            rows.into_iter().map(RowChange::Insert).collect::<Vec<_>>()
        );
        assert!(pack_row(&mut Vec::new(), &specs, &[Value::Int(1)]).is_err());
    }

    /// Decodes the rows mariadbd wrote, re-packs them, and expects the same bytes.
    #[test]
    fn mariadb_rows_decode_and_repack_identically() {
        let mut maps = std::collections::HashMap::new();
        let mut checked = 0;
        for (_, raw) in crate::event::tests::sample_events() {
            match decode_event(raw, true).unwrap().1 {
                Event::TableMap(tm) => {
                    assert_eq!(tm.column_names.as_ref().unwrap()[0], "id");
                    assert_eq!(tm.primary_key, Some(vec![0]));
                    maps.insert(tm.table_id, tm);
                }
                Event::Rows(ev) => {
                    let specs = maps[&ev.table_id].column_specs();
                    let changes = decode_rows(&ev, &specs).unwrap();
                    let mut again = Vec::new();
                    for ch in &changes {
                        match ch {
                            RowChange::Insert(r) | RowChange::Delete(r) => {
                                pack_row(&mut again, &specs, r).unwrap()
                            }
                            RowChange::Update { before, after } => {
                                pack_row(&mut again, &specs, before).unwrap();
                                pack_row(&mut again, &specs, after).unwrap();
                            }
                        }
                    }
                    assert_eq!(again, ev.rows);
                    if let RowChange::Insert(r) = &changes[0] {
                        assert_eq!(r[0], Value::Int(1));
                        assert_eq!(r[1], Value::Int(-5));
                        assert_eq!(r[2], Value::UInt(65535));
                        assert_eq!(r[3], Value::Int(-8388608));
                        assert_eq!(r[4], Value::UInt(u64::MAX));
                        assert_eq!(r[5], Value::Double(1.5));
                        assert_eq!(r[6], Value::Double(-2.25));
                        assert_eq!(r[7], dec("-1234.567891"));
                        assert_eq!(r[8], Value::str("abc"));
                        assert_eq!(r[10], Value::Bytes(vec![0, 0xff]));
                        assert_eq!(
                            r[13],
                            Value::Date(Date {
                                year: 2024,
                                month: 2,
                                day: 29
                            })
                        );
                        assert_eq!(r[14], Value::Time(time(true, 838, 59, 59, 999_000)));
                        assert_eq!(r[15], Value::DateTime(dt(2024, 1, 2, 3, 4, 5, 123_456)));
                        assert_eq!(r[16], Value::DateTime(dt(2024, 1, 2, 3, 4, 5, 120_000)));
                    }
                    checked += 1;
                }
                _ => {}
            }
        }
        assert_eq!(checked, 3);
    }

    #[test]
    fn table_map_from_def_round_trips() {
        let def = TableDef {
            db: "d".into(),
            name: "t".into(),
            columns: vec![
                ColumnDef {
                    name: "id".into(),
                    ty: ColumnType::Int {
                        bytes: 8,
                        unsigned: true,
                    },
                    nullable: false,
                },
                ColumnDef {
                    name: "c".into(),
                    ty: ColumnType::Char {
                        len: 255,
                        binary: false,
                        collation: onelog_types::Collation::Utf8mb4GeneralCi,
                    },
                    nullable: true,
                },
                ColumnDef {
                    name: "b".into(),
                    ty: ColumnType::Blob {
                        len_bytes: 2,
                        binary: true,
                        collation: onelog_types::Collation::Binary,
                    },
                    nullable: true,
                },
                ColumnDef {
                    name: "d".into(),
                    ty: ColumnType::Decimal {
                        precision: 10,
                        scale: 2,
                    },
                    nullable: true,
                },
                ColumnDef {
                    name: "t".into(),
                    ty: ColumnType::Time { fsp: 3 },
                    nullable: true,
                },
            ],
            primary_key: vec![0],
        };
        let round_trip = |tm: &TableMap| {
            let raw = crate::event::encode_event(0, 1, 0, 100, &Event::TableMap(tm.clone()));
            let Event::TableMap(back) = decode_event(&raw, true).unwrap().1 else {
                panic!()
            };
            back
        };
        let full = round_trip(&def.table_map(42, RowMetadata::Full));
        assert_eq!(full, def.table_map(42, RowMetadata::Full));
        assert_eq!(full.column_specs(), def.specs());
        // Two character columns of two collations: one id each is shorter than a default
        // plus an exception (MariaDB's choice).
        assert_eq!(full.default_charset, None);
        assert_eq!(full.column_charset, Some(vec![45, 63]));
        assert_eq!(
            full.column_names,
            Some(vec![
                "id".into(),
                "c".into(),
                "b".into(),
                "d".into(),
                "t".into()
            ])
        );
        assert_eq!(full.primary_key, Some(vec![0]));
        let minimal = round_trip(&def.table_map(42, RowMetadata::Minimal));
        assert_eq!(minimal.column_specs(), def.specs());
        assert_eq!(minimal.column_charset, Some(vec![45, 63]));
        assert_eq!(minimal.column_names, None);
        assert_eq!(minimal.primary_key, None);
    }

    #[test]
    fn table_map_charsets_as_mariadb_chooses() {
        let col = |name: &str, c: onelog_types::Collation| ColumnDef {
            name: name.into(),
            ty: ColumnType::varchar(10, c),
            nullable: true,
        };
        use onelog_types::Collation::{Utf8mb4Bin as Bin, Utf8mb4GeneralCi as Ci};
        let def = |colls: &[onelog_types::Collation]| TableDef {
            db: "d".into(),
            name: "t".into(),
            columns: colls
                .iter()
                .enumerate()
                .map(|(i, &c)| col(&format!("c{i}"), c))
                .collect(),
            primary_key: vec![],
        };
        let tm = def(&[Ci, Ci, Bin, Ci]).table_map(1, RowMetadata::Minimal);
        assert_eq!(tm.default_charset, Some((45, vec![(2, 46)])));
        assert_eq!(tm.column_charset, None);
        let tm = def(&[Bin, Bin, Bin]).table_map(1, RowMetadata::Minimal);
        assert_eq!(tm.default_charset, Some((46, vec![])));
        let tm = def(&[Bin]).table_map(1, RowMetadata::Full);
        assert_eq!(tm.default_charset, Some((46, vec![])));
        assert_eq!(tm.primary_key, None);
        let tm = def(&[]).table_map(1, RowMetadata::Full);
        assert_eq!((tm.default_charset, tm.column_charset), (None, None));
    }
}
