//! Result sets: column definitions, text rows and binary rows, and the prepare response.
//!
//! A result set on the wire (classic EOF mode, CLIENT_DEPRECATE_EOF not announced):
//! ```text
//! column_count lenenc | column definition x N | EOF | row x M | EOF (or ERR)
//! ```

use crate::codec::{put_lenenc_bytes, put_lenenc_int, put_u16, put_u32};
use crate::error::Result;
use crate::packet::PacketStream;
use crate::response::encode_eof;
use onelog_types::{
    format_double, type_code as tc, ColumnType, Date, DateTime, Time, Value, COLLATION_BINARY,
    COLLATION_UTF8MB4_GENERAL_CI, UTF8MB4_MAXLEN,
};
use std::io::Write;

pub use onelog_types::column_flag;

/// `decimals` of floating-point and string expressions whose scale is not fixed (MariaDB's
/// NOT_FIXED_DEC for fields).
pub const NOT_FIXED_DEC: u8 = 31;
/// `decimals` MariaDB reports for string-valued expressions.
pub const NOT_FIXED_DEC_EXPR: u8 = 39;

/// What a column definition says about a column's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireType {
    /// Protocol type code (TIMESTAMP 7, DATETIME 12, TIME 11 on the wire, never the
    /// binlog-only *2 codes).
    pub type_code: u8,
    /// Display length in bytes.
    pub length: u32,
    /// Scale of decimals, fsp of temporal types, [`NOT_FIXED_DEC`] for doubles.
    pub decimals: u8,
    pub collation: u16,
    /// Flags implied by the type (UNSIGNED, BINARY, BLOB, NUM, TIMESTAMP).
    pub flags: u16,
}

/// The type of a result column: a declared column type, or spelled out for computed
/// expressions.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldType {
    Column(ColumnType),
    /// The NULL literal.
    Null,
    Raw(WireType),
}

impl FieldType {
    /// An integer expression, as MariaDB types integer literals and integer results:
    /// INT (LONG) when fewer than 11 characters are needed, BIGINT (LONGLONG) otherwise.
    pub fn expr_int(char_len: u32, unsigned: bool) -> FieldType {
        use column_flag::*;
        FieldType::Raw(WireType {
            type_code: if char_len < 11 {
                tc::LONG
            } else {
                tc::LONGLONG
            },
            length: char_len,
            decimals: 0,
            collation: COLLATION_BINARY,
            flags: BINARY | NUM | if unsigned { UNSIGNED } else { 0 },
        })
    }

    /// A BIGINT expression such as COUNT(*) (length 21).
    pub fn expr_bigint() -> FieldType {
        FieldType::expr_int(21, false)
    }

    /// A DOUBLE expression.
    pub fn expr_double() -> FieldType {
        FieldType::Raw(WireType {
            type_code: tc::DOUBLE,
            length: 22,
            decimals: NOT_FIXED_DEC,
            collation: COLLATION_BINARY,
            flags: column_flag::BINARY | column_flag::NUM,
        })
    }

    /// A DECIMAL expression (e.g. SUM of integers: DECIMAL(precision, 0)).
    pub fn expr_decimal(precision: u8, scale: u8) -> FieldType {
        let mut w = wire_type(&ColumnType::Decimal { precision, scale });
        w.flags |= column_flag::BINARY;
        FieldType::Raw(w)
    }

    /// A utf8mb4 string expression of at most `max_chars` characters (VAR_STRING).
    pub fn expr_string(max_chars: u32) -> FieldType {
        FieldType::Raw(WireType {
            type_code: tc::VAR_STRING,
            length: max_chars.saturating_mul(UTF8MB4_MAXLEN),
            decimals: NOT_FIXED_DEC_EXPR,
            collation: COLLATION_UTF8MB4_GENERAL_CI,
            flags: 0,
        })
    }

    /// The wire metadata for this type.
    pub fn wire(&self) -> WireType {
        match self {
            FieldType::Column(t) => wire_type(t),
            FieldType::Null => WireType {
                type_code: tc::NULL,
                length: 0,
                decimals: 0,
                collation: COLLATION_BINARY,
                flags: column_flag::BINARY,
            },
            FieldType::Raw(w) => *w,
        }
    }
}

fn temporal_len(base: u32, fsp: u8) -> u32 {
    if fsp == 0 {
        base
    } else {
        base + 1 + fsp as u32
    }
}

/// Wire metadata of a declared column type, as MariaDB reports it with a utf8mb4
/// connection: INT 11, INT UNSIGNED 10, BIGINT 20, DECIMAL(p,s) p+1(+1 if s>0),
/// CHAR/VARCHAR(n) 4n (n for binary), TEXT 4 x max bytes (capped at 2^32-1), DATE 10,
/// DATETIME(fsp)/TIMESTAMP(fsp) 19(+1+fsp), TIME(fsp) 10(+1+fsp).
pub fn wire_type(t: &ColumnType) -> WireType {
    use column_flag::*;
    let bin = COLLATION_BINARY;
    // utf8mb4_bin columns carry the BINARY flag too (MariaDB sets it for every collation
    // that sorts bytewise).
    let text = |binary: bool| match t.collation() {
        _ if binary => (COLLATION_BINARY, BINARY, 1u64),
        Some(c) if !c.is_ci() => (c.id(), BINARY, UTF8MB4_MAXLEN as u64),
        _ => (COLLATION_UTF8MB4_GENERAL_CI, 0, UTF8MB4_MAXLEN as u64),
    };
    let w = |type_code, length: u32, decimals, collation, flags| WireType {
        type_code,
        length,
        decimals,
        collation,
        flags,
    };
    match *t {
        ColumnType::Int { bytes, unsigned } => {
            let (code, len) = match (bytes, unsigned) {
                (1, false) => (tc::TINY, 4),
                (1, true) => (tc::TINY, 3),
                (2, false) => (tc::SHORT, 6),
                (2, true) => (tc::SHORT, 5),
                (3, false) => (tc::INT24, 9),
                (3, true) => (tc::INT24, 8),
                (4, false) => (tc::LONG, 11),
                (4, true) => (tc::LONG, 10),
                _ => (tc::LONGLONG, 20),
            };
            w(code, len, 0, bin, NUM | if unsigned { UNSIGNED } else { 0 })
        }
        ColumnType::Float => w(tc::FLOAT, 12, NOT_FIXED_DEC, bin, NUM),
        ColumnType::Double => w(tc::DOUBLE, 22, NOT_FIXED_DEC, bin, NUM),
        ColumnType::Decimal { precision, scale } => w(
            tc::NEWDECIMAL,
            precision as u32 + 1 + (scale > 0) as u32,
            scale,
            bin,
            NUM,
        ),
        ColumnType::Char { len, binary, .. } => {
            let (coll, f, mul) = text(binary);
            w(tc::STRING, clamp(len as u64 * mul), 0, coll, f)
        }
        ColumnType::Varchar { len, binary, .. } => {
            let (coll, f, mul) = text(binary);
            w(tc::VAR_STRING, clamp(len as u64 * mul), 0, coll, f)
        }
        ColumnType::Blob {
            len_bytes, binary, ..
        } => {
            let (coll, f, mul) = text(binary);
            let max = (1u64 << (8 * len_bytes.clamp(1, 4) as u64)) - 1;
            w(tc::BLOB, clamp(max * mul), 0, coll, f | BLOB)
        }
        ColumnType::Date => w(tc::DATE, 10, 0, bin, BINARY),
        ColumnType::Time { fsp } => w(tc::TIME, temporal_len(10, fsp), fsp, bin, BINARY),
        ColumnType::DateTime { fsp } => w(tc::DATETIME, temporal_len(19, fsp), fsp, bin, BINARY),
        ColumnType::Timestamp { fsp } => w(
            tc::TIMESTAMP,
            temporal_len(19, fsp),
            fsp,
            bin,
            BINARY | TIMESTAMP,
        ),
        ColumnType::Enum { .. } | ColumnType::Set { .. } => {
            let (coll, f, _) = text(false);
            let kind = if matches!(t, ColumnType::Enum { .. }) {
                ENUM
            } else {
                SET
            };
            w(
                tc::STRING,
                clamp(t.max_bytes().unwrap_or(0)),
                0,
                coll,
                f | kind,
            )
        }
        ColumnType::Bit { bits } => w(tc::BIT, bits as u32, 0, bin, UNSIGNED),
        ColumnType::Year => w(tc::YEAR, 4, 0, bin, UNSIGNED | ZEROFILL | NUM),
        // MariaDB sends UUID/INET6 as text in the result's character set, flagged
        // UNSIGNED BINARY.
        ColumnType::Uuid | ColumnType::Inet6 => {
            let (coll, _, mul) = text(false);
            let chars = t.fixed_bin().map_or(0, |f| f.char_len());
            w(
                tc::STRING,
                clamp(chars as u64 * mul),
                0,
                coll,
                UNSIGNED | BINARY,
            )
        }
    }
}

fn clamp(v: u64) -> u32 {
    v.min(u32::MAX as u64) as u32
}

/// One column of a result set.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnInfo {
    /// Schema of the underlying table ("" for expressions).
    pub db: String,
    /// Table name or alias as written in the query.
    pub table: String,
    pub org_table: String,
    /// Column name or alias (for expressions, the expression text).
    pub name: String,
    pub org_name: String,
    pub ty: FieldType,
    pub nullable: bool,
    /// Flags beyond those implied by the type and nullability: PRI_KEY, UNIQUE_KEY,
    /// MULTIPLE_KEY, PART_KEY, AUTO_INCREMENT, ZEROFILL, NO_DEFAULT_VALUE...
    pub flags: u16,
}

impl ColumnInfo {
    /// A column read from a table.
    pub fn table_column(db: &str, table: &str, name: &str, ty: ColumnType, nullable: bool) -> Self {
        ColumnInfo {
            db: db.into(),
            table: table.into(),
            org_table: table.into(),
            name: name.into(),
            org_name: name.into(),
            ty: FieldType::Column(ty),
            nullable,
            flags: 0,
        }
    }

    /// A computed column (no table).
    pub fn expr(name: &str, ty: FieldType, nullable: bool) -> Self {
        ColumnInfo {
            db: String::new(),
            table: String::new(),
            org_table: String::new(),
            name: name.into(),
            org_name: String::new(),
            ty,
            nullable,
            flags: 0,
        }
    }

    pub fn with_flags(mut self, flags: u16) -> Self {
        self.flags |= flags;
        self
    }

    /// Wire metadata with every flag (type, nullability, extra flags).
    pub fn wire(&self) -> WireType {
        let mut w = self.ty.wire();
        w.flags |= self.flags;
        if !self.nullable {
            w.flags |= column_flag::NOT_NULL;
        }
        w
    }

    /// Encodes a ColumnDefinition41 payload.
    /// ```text
    /// catalog lenenc ("def") | schema lenenc | table lenenc | org_table lenenc |
    /// name lenenc | org_name lenenc | 0x0C lenenc | collation u16 | column_length u32 |
    /// type u8 | flags u16 | decimals u8 | 0x00 0x00
    /// [default value lenenc or 0xFB, only in COM_FIELD_LIST responses]
    /// ```
    pub fn encode_definition(&self, buf: &mut Vec<u8>, field_list: bool) {
        let w = self.wire();
        put_lenenc_bytes(buf, b"def");
        put_lenenc_bytes(buf, self.db.as_bytes());
        put_lenenc_bytes(buf, self.table.as_bytes());
        put_lenenc_bytes(buf, self.org_table.as_bytes());
        put_lenenc_bytes(buf, self.name.as_bytes());
        put_lenenc_bytes(buf, self.org_name.as_bytes());
        buf.push(0x0C);
        put_u16(buf, w.collation);
        put_u32(buf, w.length);
        buf.push(w.type_code);
        put_u16(buf, w.flags);
        buf.push(w.decimals);
        buf.extend_from_slice(&[0, 0]);
        if field_list {
            buf.push(0xFB);
        }
    }
}

/// Appends the decimal digits of `v`.
fn put_int_text(buf: &mut Vec<u8>, neg: bool, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if neg {
        buf.push(b'-');
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// FLOAT values print with 6 significant digits (FLT_DIG), as MariaDB does.
fn format_float(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return format_double(v);
    }
    let rounded: f64 = format!("{:.5e}", v as f32).parse().unwrap_or(v);
    format_double(rounded)
}

fn is_temporal(code: u8) -> bool {
    matches!(
        code,
        tc::DATE | tc::DATETIME | tc::TIMESTAMP | tc::TIME | tc::NEWDATE
    )
}

/// Appends the text form of a non-NULL value as MariaDB's text protocol sends it for a
/// column of wire type `w` (no length prefix).
pub fn put_text_value(buf: &mut Vec<u8>, v: &Value, w: &WireType) {
    // ZEROFILL (YEAR carries the flag but has a form of its own): the number padded with
    // zeros on the left to the column's display length.
    if w.flags & column_flag::ZEROFILL != 0
        && w.type_code != tc::YEAR
        && matches!(
            v,
            Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_)
        )
    {
        let plain = WireType {
            flags: w.flags & !column_flag::ZEROFILL,
            ..*w
        };
        let start = buf.len();
        put_text_value(buf, v, &plain);
        let n = buf.len() - start;
        if n < w.length as usize {
            let pad = w.length as usize - n;
            buf.splice(start..start, std::iter::repeat_n(b'0', pad));
        }
        return;
    }
    let fsp = if is_temporal(w.type_code) {
        w.decimals.min(6) as usize
    } else {
        6
    };
    match v {
        Value::Null => buf.extend_from_slice(b"NULL"),
        // BIT: the value's bytes, big-endian, as many as the column has bits for.
        Value::UInt(u) if w.type_code == tc::BIT => {
            let n = (w.length as usize).div_ceil(8).clamp(1, 8);
            buf.extend_from_slice(&u.to_be_bytes()[8 - n..]);
        }
        // YEAR: four digits (`0000`).
        Value::UInt(u) if w.type_code == tc::YEAR => {
            buf.extend_from_slice(format!("{u:04}").as_bytes())
        }
        Value::Int(i) => put_int_text(buf, *i < 0, i.unsigned_abs()),
        Value::UInt(u) => put_int_text(buf, false, *u),
        Value::Double(d) => {
            let s = if w.type_code == tc::FLOAT && w.decimals >= NOT_FIXED_DEC {
                format_float(*d)
            } else if matches!(w.type_code, tc::FLOAT | tc::DOUBLE | tc::NEWDECIMAL)
                && w.decimals < NOT_FIXED_DEC
                && d.is_finite()
            {
                format!("{:.*}", w.decimals as usize, d)
            } else {
                format_double(*d)
            };
            buf.extend_from_slice(s.as_bytes());
        }
        Value::Decimal(d) => {
            let d = if w.type_code == tc::NEWDECIMAL && w.decimals <= 30 {
                d.rescale(w.decimals).unwrap_or(*d)
            } else {
                *d
            };
            buf.extend_from_slice(d.to_string().as_bytes());
        }
        Value::Bytes(b) => buf.extend_from_slice(b),
        Value::Date(d) => buf.extend_from_slice(d.to_string().as_bytes()),
        Value::DateTime(dt) => {
            let s = if is_temporal(w.type_code) {
                format!("{dt:.fsp$}")
            } else {
                dt.to_string()
            };
            buf.extend_from_slice(s.as_bytes());
        }
        Value::Time(t) => {
            let s = if is_temporal(w.type_code) {
                format!("{t:.fsp$}")
            } else {
                t.to_string()
            };
            buf.extend_from_slice(s.as_bytes());
        }
    }
}

/// Appends a lenenc string holding `put_text_value`'s output.
fn put_lenenc_text(buf: &mut Vec<u8>, v: &Value, w: &WireType) {
    if let Value::Bytes(b) = v {
        put_lenenc_bytes(buf, b);
        return;
    }
    // Short values: reserve one length byte and patch it.
    let start = buf.len();
    buf.push(0);
    put_text_value(buf, v, w);
    let len = buf.len() - start - 1;
    if len < 0xFB {
        buf[start] = len as u8;
    } else {
        let text = buf.split_off(start + 1);
        buf.truncate(start);
        put_lenenc_bytes(buf, &text);
    }
}

/// Encodes a text-protocol row: each value a lenenc string, NULL as 0xFB.
pub fn encode_text_row(buf: &mut Vec<u8>, values: &[Value], columns: &[WireType]) {
    for (i, v) in values.iter().enumerate() {
        if v.is_null() {
            buf.push(0xFB);
        } else {
            let w = columns.get(i).copied().unwrap_or(VAR_STRING_WIRE);
            put_lenenc_text(buf, v, &w);
        }
    }
}

const VAR_STRING_WIRE: WireType = WireType {
    type_code: tc::VAR_STRING,
    length: 0,
    decimals: 0,
    collation: COLLATION_BINARY,
    flags: 0,
};

fn to_i64(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::UInt(u) => *u as i64,
        Value::Double(d) => d.round() as i64,
        Value::Decimal(d) => d
            .rescale(0)
            .and_then(|d| d.narrow())
            .map(|m| m as i64)
            .unwrap_or(0),
        Value::Bytes(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .unwrap_or(0),
        _ => 0,
    }
}

fn to_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        Value::Double(d) => *d,
        Value::Decimal(d) => d.to_f64(),
        Value::Bytes(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Binary DATE/DATETIME/TIMESTAMP:
/// `len u8 (0, 4, 7 or 11) | year u16 | month u8 | day u8 | hour u8 | minute u8 |
/// second u8 | micro u32` (fields beyond `len` omitted).
fn put_binary_datetime(
    buf: &mut Vec<u8>,
    d: Date,
    h: u8,
    m: u8,
    s: u8,
    micro: u32,
    date_only: bool,
) {
    let len = if micro != 0 && !date_only {
        11
    } else if (h | m | s) != 0 && !date_only {
        7
    } else if d.year == 0 && d.month == 0 && d.day == 0 {
        0
    } else {
        4
    };
    buf.push(len);
    if len >= 4 {
        put_u16(buf, d.year);
        buf.push(d.month);
        buf.push(d.day);
    }
    if len >= 7 {
        buf.extend_from_slice(&[h, m, s]);
    }
    if len == 11 {
        put_u32(buf, micro);
    }
}

/// Binary TIME: `len u8 (0, 8 or 12) | negative u8 | days u32 | hour u8 | minute u8 |
/// second u8 | micro u32`.
fn put_binary_time(buf: &mut Vec<u8>, t: &Time) {
    let zero = t.hours == 0 && t.minute == 0 && t.second == 0 && t.micro == 0;
    if zero {
        buf.push(0);
        return;
    }
    buf.push(if t.micro != 0 { 12 } else { 8 });
    buf.push(t.negative as u8);
    put_u32(buf, t.hours / 24);
    buf.extend_from_slice(&[(t.hours % 24) as u8, t.minute, t.second]);
    if t.micro != 0 {
        put_u32(buf, t.micro);
    }
}

/// Encodes a binary-protocol row.
/// ```text
/// 0x00 | NULL bitmap [(N + 7 + 2) / 8] (column i is bit i + 2) | non-NULL values
/// ```
/// Values by the column's wire type: TINY 1 byte, SHORT/YEAR 2, LONG/INT24 4, LONGLONG 8,
/// FLOAT f32, DOUBLE f64 (little-endian); DATE/DATETIME/TIMESTAMP and TIME in their
/// length-prefixed forms; everything else (DECIMAL, strings, blobs) as a lenenc string of
/// the text form.
pub fn encode_binary_row(buf: &mut Vec<u8>, values: &[Value], columns: &[WireType]) {
    buf.push(0x00);
    let bitmap_start = buf.len();
    let bitmap_len = (values.len() + 7 + 2) / 8;
    buf.resize(bitmap_start + bitmap_len, 0);
    for (i, v) in values.iter().enumerate() {
        if v.is_null() {
            let bit = i + 2;
            buf[bitmap_start + bit / 8] |= 1 << (bit % 8);
            continue;
        }
        let w = columns.get(i).copied().unwrap_or(VAR_STRING_WIRE);
        match w.type_code {
            tc::TINY => buf.push(to_i64(v) as u8),
            tc::SHORT | tc::YEAR => put_u16(buf, to_i64(v) as u16),
            tc::LONG | tc::INT24 => put_u32(buf, to_i64(v) as u32),
            tc::LONGLONG => buf.extend_from_slice(&to_i64(v).to_le_bytes()),
            tc::FLOAT => buf.extend_from_slice(&(to_f64(v) as f32).to_le_bytes()),
            tc::DOUBLE => buf.extend_from_slice(&to_f64(v).to_le_bytes()),
            tc::DATE | tc::DATETIME | tc::TIMESTAMP | tc::NEWDATE => {
                let date_only = w.type_code == tc::DATE;
                match v {
                    Value::Date(d) => put_binary_datetime(buf, *d, 0, 0, 0, 0, true),
                    Value::DateTime(DateTime {
                        date,
                        hour,
                        minute,
                        second,
                        micro,
                    }) => {
                        put_binary_datetime(buf, *date, *hour, *minute, *second, *micro, date_only)
                    }
                    _ => buf.push(0),
                }
            }
            tc::TIME => match v {
                Value::Time(t) => put_binary_time(buf, t),
                _ => buf.push(0),
            },
            _ => put_lenenc_text(buf, v, &w),
        }
    }
}

/// Wire types of a column list (compute once per result set, use for every row).
pub fn wire_types(columns: &[ColumnInfo]) -> Vec<WireType> {
    columns.iter().map(ColumnInfo::wire).collect()
}

/// The placeholder definition sent for each parameter of a prepared statement.
pub fn param_definition() -> ColumnInfo {
    ColumnInfo::expr(
        "?",
        FieldType::Raw(WireType {
            type_code: tc::VAR_STRING,
            length: 0,
            decimals: 0,
            collation: COLLATION_BINARY,
            flags: column_flag::BINARY,
        }),
        true,
    )
}

/// COM_STMT_PREPARE OK payload:
/// `0x00 | statement_id u32 | num_columns u16 | num_params u16 | 0x00 | warnings u16`.
pub fn encode_prepare_ok(
    buf: &mut Vec<u8>,
    stmt_id: u32,
    num_columns: u16,
    num_params: u16,
    warnings: u16,
) {
    buf.push(0x00);
    put_u32(buf, stmt_id);
    put_u16(buf, num_columns);
    put_u16(buf, num_params);
    buf.push(0x00);
    put_u16(buf, warnings);
}

impl<S: Write> PacketStream<S> {
    /// Queues the head of a result set: column count, definitions, EOF.
    pub fn write_result_header(&mut self, columns: &[ColumnInfo], status: u16) -> Result<()> {
        self.write_packet_with(|b| put_lenenc_int(b, columns.len() as u64))?;
        self.write_column_definitions(columns, status)
    }

    /// Queues column definitions followed by EOF (no count). Nothing when `columns` is
    /// empty.
    pub fn write_column_definitions(&mut self, columns: &[ColumnInfo], status: u16) -> Result<()> {
        if columns.is_empty() {
            return Ok(());
        }
        for c in columns {
            self.write_packet_with(|b| c.encode_definition(b, false))?;
        }
        self.write_packet_with(|b| encode_eof(b, 0, status))
    }

    /// Queues a text-protocol row.
    pub fn write_text_row(&mut self, values: &[Value], columns: &[WireType]) -> Result<()> {
        self.write_packet_with(|b| encode_text_row(b, values, columns))
    }

    /// Queues a binary-protocol row.
    pub fn write_binary_row(&mut self, values: &[Value], columns: &[WireType]) -> Result<()> {
        self.write_packet_with(|b| encode_binary_row(b, values, columns))
    }

    /// Queues the COM_STMT_PREPARE response: OK, `num_params` parameter definitions + EOF,
    /// column definitions + EOF.
    pub fn write_prepare_ok(
        &mut self,
        stmt_id: u32,
        num_params: u16,
        columns: &[ColumnInfo],
        warnings: u16,
        status: u16,
    ) -> Result<()> {
        let ncols = columns.len().min(u16::MAX as usize) as u16;
        self.write_packet_with(|b| encode_prepare_ok(b, stmt_id, ncols, num_params, warnings))?;
        if num_params > 0 {
            let p = param_definition();
            for _ in 0..num_params {
                self.write_packet_with(|b| p.encode_definition(b, false))?;
            }
            self.write_packet_with(|b| encode_eof(b, 0, status))?;
        }
        self.write_column_definitions(columns, status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use onelog_types::Decimal;

    fn text(v: &Value, t: ColumnType) -> String {
        let mut b = Vec::new();
        put_text_value(&mut b, v, &wire_type(&t));
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn column_definition_layout() {
        let c = ColumnInfo::table_column(
            "test",
            "t",
            "id",
            ColumnType::Int {
                bytes: 4,
                unsigned: false,
            },
            false,
        )
        .with_flags(column_flag::PRI_KEY | column_flag::AUTO_INCREMENT);
        let mut b = Vec::new();
        c.encode_definition(&mut b, false);
        let mut want = b"\x03def\x04test\x01t\x01t\x02id\x02id\x0c".to_vec();
        want.extend_from_slice(&[63, 0]); // collation binary
        want.extend_from_slice(&[11, 0, 0, 0]); // length 11
        want.push(3); // LONG
        let flags = 1u16 | 2 | 512 | 32768;
        want.extend_from_slice(&flags.to_le_bytes());
        want.extend_from_slice(&[0, 0, 0]);
        assert_eq!(b, want);
    }

    #[test]
    fn column_lengths_as_mariadb() {
        let len = |t| wire_type(&t).length;
        assert_eq!(
            len(ColumnType::Int {
                bytes: 8,
                unsigned: false
            }),
            20
        );
        assert_eq!(
            len(ColumnType::Int {
                bytes: 4,
                unsigned: true
            }),
            10
        );
        assert_eq!(
            len(ColumnType::Varchar {
                len: 100,
                binary: false,
                collation: onelog_types::Collation::Utf8mb4GeneralCi,
            }),
            400
        );
        assert_eq!(
            len(ColumnType::Varchar {
                len: 100,
                binary: true,
                collation: onelog_types::Collation::Binary,
            }),
            100
        );
        assert_eq!(
            len(ColumnType::Char {
                len: 120,
                binary: false,
                collation: onelog_types::Collation::Utf8mb4GeneralCi,
            }),
            480
        );
        assert_eq!(
            len(ColumnType::Decimal {
                precision: 10,
                scale: 2
            }),
            12
        );
        assert_eq!(
            len(ColumnType::Decimal {
                precision: 10,
                scale: 0
            }),
            11
        );
        assert_eq!(len(ColumnType::DateTime { fsp: 0 }), 19);
        assert_eq!(len(ColumnType::DateTime { fsp: 6 }), 26);
        assert_eq!(len(ColumnType::Time { fsp: 3 }), 14);
        assert_eq!(
            len(ColumnType::Blob {
                len_bytes: 2,
                binary: true,
                collation: onelog_types::Collation::Binary,
            }),
            65535
        );
        assert_eq!(
            len(ColumnType::Blob {
                len_bytes: 4,
                binary: false,
                collation: onelog_types::Collation::Utf8mb4GeneralCi,
            }),
            u32::MAX
        );
        let w = wire_type(&ColumnType::Timestamp { fsp: 3 });
        assert_eq!((w.type_code, w.decimals), (7, 3));
        assert_eq!(wire_type(&ColumnType::DateTime { fsp: 0 }).type_code, 12);
        assert_eq!(wire_type(&ColumnType::Time { fsp: 0 }).type_code, 11);
        assert_eq!(wire_type(&ColumnType::Double).decimals, 31);
        assert_eq!(
            wire_type(&ColumnType::Varchar {
                len: 1,
                binary: false,
                collation: onelog_types::Collation::Utf8mb4GeneralCi,
            })
            .type_code,
            253
        );
        assert_eq!(
            wire_type(&ColumnType::Varchar {
                len: 1,
                binary: false,
                collation: onelog_types::Collation::Utf8mb4GeneralCi,
            })
            .collation,
            45
        );
        let w = FieldType::expr_int(1, false).wire();
        assert_eq!((w.type_code, w.length), (tc::LONG, 1));
        assert_eq!(FieldType::expr_bigint().wire().type_code, tc::LONGLONG);
    }

    #[test]
    fn text_values() {
        let dt = DateTime {
            date: Date {
                year: 2024,
                month: 2,
                day: 29,
            },
            hour: 13,
            minute: 5,
            second: 9,
            micro: 120_000,
        };
        assert_eq!(
            text(&Value::DateTime(dt), ColumnType::DateTime { fsp: 0 }),
            "2024-02-29 13:05:09"
        );
        assert_eq!(
            text(&Value::DateTime(dt), ColumnType::DateTime { fsp: 3 }),
            "2024-02-29 13:05:09.120"
        );
        assert_eq!(
            text(&Value::DateTime(dt), ColumnType::Timestamp { fsp: 6 }),
            "2024-02-29 13:05:09.120000"
        );
        let t = Time {
            negative: true,
            hours: 100,
            minute: 2,
            second: 3,
            micro: 0,
        };
        assert_eq!(
            text(&Value::Time(t), ColumnType::Time { fsp: 2 }),
            "-100:02:03.00"
        );
        let d = Decimal::new(15, 1);
        assert_eq!(
            text(
                &Value::Decimal(d),
                ColumnType::Decimal {
                    precision: 10,
                    scale: 3
                }
            ),
            "1.500"
        );
        assert_eq!(text(&Value::Double(0.1), ColumnType::Double), "0.1");
        assert_eq!(text(&Value::Double(1e20), ColumnType::Double), "1e20");
        assert_eq!(
            text(&Value::Double(1.2345678), ColumnType::Float),
            "1.23457"
        );
        assert_eq!(
            text(&Value::Double(0.1f32 as f64), ColumnType::Float),
            "0.1"
        );
        assert_eq!(
            text(
                &Value::Int(-42),
                ColumnType::Int {
                    bytes: 4,
                    unsigned: false
                }
            ),
            "-42"
        );
        assert_eq!(
            text(
                &Value::Int(i64::MIN),
                ColumnType::Int {
                    bytes: 8,
                    unsigned: false
                }
            ),
            "-9223372036854775808"
        );
        assert_eq!(
            text(
                &Value::UInt(u64::MAX),
                ColumnType::Int {
                    bytes: 8,
                    unsigned: true
                }
            ),
            "18446744073709551615"
        );
    }

    #[test]
    fn text_row_layout() {
        let cols = [
            FieldType::expr_int(1, false).wire(),
            FieldType::expr_string(10).wire(),
            FieldType::Null.wire(),
        ];
        let mut b = Vec::new();
        encode_text_row(
            &mut b,
            &[Value::Int(1), Value::str("ab"), Value::Null],
            &cols,
        );
        assert_eq!(b, b"\x011\x02ab\xfb");
        let long = "x".repeat(300);
        let mut b = Vec::new();
        encode_text_row(&mut b, &[Value::str(&long)], &[]);
        assert_eq!(&b[..3], &[0xFC, 0x2C, 0x01]);
        assert_eq!(b.len(), 303);
    }

    #[test]
    fn binary_row_layout() {
        let cols: Vec<WireType> = [
            ColumnType::Int {
                bytes: 4,
                unsigned: false,
            },
            ColumnType::Varchar {
                len: 10,
                binary: false,
                collation: onelog_types::Collation::Utf8mb4GeneralCi,
            },
            ColumnType::Int {
                bytes: 8,
                unsigned: false,
            },
            ColumnType::Double,
            ColumnType::DateTime { fsp: 6 },
            ColumnType::Date,
            ColumnType::Time { fsp: 0 },
            ColumnType::Decimal {
                precision: 5,
                scale: 2,
            },
            ColumnType::Int {
                bytes: 1,
                unsigned: false,
            },
            ColumnType::Int {
                bytes: 2,
                unsigned: false,
            },
        ]
        .iter()
        .map(wire_type)
        .collect();
        let dt = DateTime {
            date: Date {
                year: 2010,
                month: 10,
                day: 17,
            },
            hour: 19,
            minute: 27,
            second: 30,
            micro: 1,
        };
        let values = [
            Value::Int(-2),
            Value::Null,
            Value::Int(1 << 40),
            Value::Double(1.5),
            Value::DateTime(dt),
            Value::Date(Date {
                year: 2010,
                month: 10,
                day: 17,
            }),
            Value::Time(Time {
                negative: true,
                hours: 49,
                minute: 1,
                second: 2,
                micro: 0,
            }),
            Value::Decimal(Decimal::new(12345, 2)),
            Value::Int(-1),
            Value::Int(300),
        ];
        let mut b = Vec::new();
        encode_binary_row(&mut b, &values, &cols);
        let mut want = vec![0x00];
        // 10 columns: (10 + 9) / 8 = 2 bitmap bytes; column 1 NULL -> bit 3.
        want.extend_from_slice(&[0b0000_1000, 0]);
        want.extend_from_slice(&(-2i32).to_le_bytes());
        want.extend_from_slice(&(1i64 << 40).to_le_bytes());
        want.extend_from_slice(&1.5f64.to_le_bytes());
        want.extend_from_slice(&[11, 0xDA, 0x07, 10, 17, 19, 27, 30, 1, 0, 0, 0]);
        want.extend_from_slice(&[4, 0xDA, 0x07, 10, 17]);
        want.extend_from_slice(&[8, 1, 2, 0, 0, 0, 1, 1, 2]);
        want.extend_from_slice(b"\x06123.45");
        want.push(0xFF);
        want.extend_from_slice(&300u16.to_le_bytes());
        assert_eq!(b, want);
    }

    #[test]
    fn prepare_ok_layout() {
        let mut b = Vec::new();
        encode_prepare_ok(&mut b, 1, 2, 3, 0);
        assert_eq!(b, [0, 1, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0]);

        let mut ps = PacketStream::new(Vec::new());
        ps.set_seq(1);
        let cols = [ColumnInfo::expr("c", FieldType::expr_string(1), true)];
        ps.write_prepare_ok(7, 2, &cols, 0, 2).unwrap();
        ps.flush().unwrap();
        let wire = ps.into_inner().0;
        // OK, 2 params, EOF, 1 column, EOF = 6 packets.
        let mut n = 0;
        let mut off = 0;
        while off < wire.len() {
            let len = u32::from_le_bytes([wire[off], wire[off + 1], wire[off + 2], 0]) as usize;
            assert_eq!(wire[off + 3], 1 + n as u8);
            off += 4 + len;
            n += 1;
        }
        assert_eq!(n, 6);
    }
}
