//! Storing a value into a column: MariaDB's conversions, with the issue (truncation, out of
//! range, bad value) each conversion reports, and exact index keys.

use super::*;

/// What went wrong converting a value for a column; the caller turns it into an error
/// (strict mode) or a warning (and uses the adjusted value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvIssue {
    /// 1264
    OutOfRange,
    /// 1406
    TooLong,
    /// 1366 (numbers) / 1292 (dates): the value is not of the type at all.
    BadValue,
    /// 1265: part of the value was dropped (`'12abc'` into an INT column).
    Truncated,
}

impl ConvIssue {
    /// The MariaDB error for this issue, for column `col` of `db`.`table`, at `row` (1-based).
    pub fn error(
        self,
        ty: &ColumnType,
        db: &str,
        table: &str,
        col: &str,
        value: &Value,
        row: u64,
    ) -> SqlError {
        match self {
            ConvIssue::OutOfRange => crate::sql_err(
                code::ER_WARN_DATA_OUT_OF_RANGE,
                format!("Out of range value for column '{col}' at row {row}"),
            ),
            ConvIssue::TooLong => crate::sql_err(
                code::ER_DATA_TOO_LONG,
                format!("Data too long for column '{col}' at row {row}"),
            ),
            ConvIssue::Truncated => crate::sql_err(
                1265,
                format!("Data truncated for column '{col}' at row {row}"),
            ),
            ConvIssue::BadValue => {
                let (c, kind) = match ty {
                    ColumnType::Date => (code::ER_TRUNCATED_WRONG_VALUE, "date"),
                    ColumnType::DateTime { .. } => (code::ER_TRUNCATED_WRONG_VALUE, "datetime"),
                    ColumnType::Timestamp { .. } => (code::ER_TRUNCATED_WRONG_VALUE, "datetime"),
                    ColumnType::Time { .. } => (code::ER_TRUNCATED_WRONG_VALUE, "time"),
                    ColumnType::Uuid => (code::ER_TRUNCATED_WRONG_VALUE, "uuid"),
                    ColumnType::Inet6 => (code::ER_TRUNCATED_WRONG_VALUE, "inet6"),
                    ColumnType::Decimal { .. } => {
                        (code::ER_TRUNCATED_WRONG_VALUE_FOR_FIELD, "decimal")
                    }
                    ColumnType::Float | ColumnType::Double => {
                        (code::ER_TRUNCATED_WRONG_VALUE_FOR_FIELD, "double")
                    }
                    _ => (code::ER_TRUNCATED_WRONG_VALUE_FOR_FIELD, "integer"),
                };
                crate::sql_err(
                    c,
                    format!(
                        "Incorrect {kind} value: '{}' for column `{db}`.`{table}`.`{col}` at row {row}",
                        to_string(value)
                    ),
                )
            }
        }
    }
}

impl ConvIssue {
    /// The warning MariaDB gives for this issue outside strict mode, where it stores the
    /// adjusted value: a value cut to the column's length, and a date or time that is not
    /// one, are "Data truncated" (1265); the rest as [`ConvIssue::error`].
    pub fn warning(
        self,
        ty: &ColumnType,
        db: &str,
        table: &str,
        col: &str,
        value: &Value,
        row: u64,
    ) -> SqlError {
        let temporal = matches!(
            ty,
            ColumnType::Date
                | ColumnType::DateTime { .. }
                | ColumnType::Timestamp { .. }
                | ColumnType::Time { .. }
        );
        match self {
            ConvIssue::TooLong | ConvIssue::Truncated => ConvIssue::Truncated,
            ConvIssue::BadValue if temporal => ConvIssue::Truncated,
            other => other,
        }
        .error(ty, db, table, col, value, row)
    }
}

/// Whether storing string `v` into a DECIMAL of scale `scale` drops non-zero fraction
/// digits (MariaDB then notes 1265 "Data truncated", at level Note).
pub fn decimal_rounded(v: &Value, scale: u8) -> bool {
    let Value::Bytes(b) = v else {
        return false;
    };
    let (p, _) = numeric_prefix(b);
    match p.parse::<Decimal>() {
        Ok(d) if d.scale > scale => d
            .rescale(scale)
            .and_then(|r| r.rescale(d.scale))
            .is_some_and(|back| back != d),
        _ => false,
    }
}

/// Converts `v` to the representation of a column of type `ty`. On an issue, also returns
/// the value MariaDB stores in non-strict mode.
pub fn convert_for_column(v: &Value, ty: &ColumnType) -> Result<Value, (ConvIssue, Value)> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    match *ty {
        ColumnType::Int { .. } => to_int_column(v, ty),
        ColumnType::Float | ColumnType::Double => {
            let (f, issue) = match v {
                Value::Bytes(b) => {
                    let (p, whole) = numeric_prefix(b);
                    if p.is_empty() {
                        (0.0, Some(ConvIssue::BadValue))
                    } else {
                        (
                            p.parse().unwrap_or(0.0),
                            if whole {
                                None
                            } else {
                                Some(ConvIssue::Truncated)
                            },
                        )
                    }
                }
                other => (to_f64(other), None),
            };
            let f = if *ty == ColumnType::Float {
                let r = f as f32;
                if r.is_infinite() {
                    return Err((
                        ConvIssue::OutOfRange,
                        Value::Double(if f > 0.0 { f32::MAX } else { f32::MIN } as f64),
                    ));
                }
                r as f64
            } else {
                f
            };
            match issue {
                Some(i) => Err((i, Value::Double(f))),
                None => Ok(Value::Double(f)),
            }
        }
        ColumnType::Decimal { precision, scale } => to_decimal_column(v, precision, scale),
        ColumnType::Char { len, binary, .. } | ColumnType::Varchar { len, binary, .. } => {
            to_string_column(v, ty, len, binary)
        }
        ColumnType::Blob { .. } => {
            let b = to_bytes(v);
            let max = ty.max_bytes().unwrap() as usize;
            if b.len() > max {
                return Err((ConvIssue::TooLong, Value::Bytes(b[..max].to_vec())));
            }
            Ok(Value::Bytes(b))
        }
        ColumnType::Date => match v {
            Value::Date(d) => Ok(Value::Date(*d)),
            Value::DateTime(dt) => Ok(Value::Date(dt.date)),
            _ => match datetime_of(v) {
                // A time part is dropped (MariaDB notes it with 1265).
                Some(dt) => Ok(Value::Date(dt.date)),
                None => Err((ConvIssue::BadValue, Value::Date(zero_date()))),
            },
        },
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => match datetime_of(v) {
            Some(mut dt) => {
                dt.micro = round_micro(dt.micro, fsp);
                Ok(Value::DateTime(dt))
            }
            None => Err((
                ConvIssue::BadValue,
                Value::DateTime(DateTime {
                    date: zero_date(),
                    hour: 0,
                    minute: 0,
                    second: 0,
                    micro: 0,
                }),
            )),
        },
        ColumnType::Time { fsp } => {
            let t = match v {
                Value::Time(t) => Some(*t),
                Value::DateTime(dt) => Some(Time {
                    negative: false,
                    hours: dt.hour as u32,
                    minute: dt.minute,
                    second: dt.second,
                    micro: dt.micro,
                }),
                other => parse_time(&to_string(other)),
            };
            match t {
                Some(mut t) => {
                    t.micro = round_micro(t.micro, fsp);
                    Ok(Value::Time(t))
                }
                None => Err((ConvIssue::BadValue, Value::Time(Time::from_micros(0)))),
            }
        }
        ColumnType::Enum { .. } | ColumnType::Set { .. } => coltypes::convert_enum_set(v, ty),
        ColumnType::Bit { bits } => coltypes::convert_bit(v, bits),
        ColumnType::Year => coltypes::convert_year(v),
        ColumnType::Uuid | ColumnType::Inet6 => coltypes::convert_fixed_bin(v, ty),
    }
}

/// To an integer column: clamped to its range (1264), a string's numeric prefix (1265,
/// 1366 for none).
fn to_int_column(v: &Value, ty: &ColumnType) -> Result<Value, (ConvIssue, Value)> {
    let (lo, hi) = ty.int_range().unwrap();
    let mut issue = None;
    let n: i128 = match v {
        Value::Bytes(b) => {
            let (p, whole) = numeric_prefix(b);
            if p.is_empty() {
                issue = Some(ConvIssue::BadValue);
                0
            } else {
                if !whole {
                    issue = Some(ConvIssue::Truncated);
                }
                match p.parse::<i128>() {
                    Ok(i) => i,
                    Err(_) => {
                        let f: f64 = p.parse().unwrap_or(0.0);
                        round_f64(f)
                    }
                }
            }
        }
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) => to_f64(v).round() as i128,
        other => to_i128(other),
    };
    if n < lo || n > hi {
        let clamped = n.clamp(lo, hi);
        return Err((ConvIssue::OutOfRange, int_value(clamped, ty)));
    }
    let out = int_value(n, ty);
    match issue {
        Some(i) => Err((i, out)),
        None => Ok(out),
    }
}

/// To a DECIMAL(precision, scale) column: rounded to the scale, the largest value of the
/// type when it does not fit (1264).
fn to_decimal_column(v: &Value, precision: u8, scale: u8) -> Result<Value, (ConvIssue, Value)> {
    let (d, issue) = match v {
        Value::Bytes(b) => {
            let (p, whole) = numeric_prefix(b);
            if p.is_empty() {
                (Decimal::new(0, 0), Some(ConvIssue::BadValue))
            } else {
                match p.parse::<Decimal>() {
                    Ok(d) => (
                        d,
                        if whole {
                            None
                        } else {
                            Some(ConvIssue::Truncated)
                        },
                    ),
                    Err(_) => (Decimal::new(0, 0), Some(ConvIssue::BadValue)),
                }
            }
        }
        other => match to_decimal(other) {
            Some(d) => (d, None),
            None => (Decimal::new(0, 0), Some(ConvIssue::OutOfRange)),
        },
    };
    let max = || Decimal::max_of(precision, scale, d.is_negative());
    match d.rescale(scale) {
        Some(r) if r.fits(precision, scale) => match issue {
            Some(i) => Err((i, Value::Decimal(r))),
            None => Ok(Value::Decimal(r)),
        },
        _ => Err((ConvIssue::OutOfRange, Value::Decimal(max()))),
    }
}

/// To a CHAR or VARCHAR column of `len` characters (bytes when binary): cut to the
/// length (1406 unless only spaces go), CHAR without trailing spaces (binary: padded).
fn to_string_column(
    v: &Value,
    ty: &ColumnType,
    len: u32,
    binary: bool,
) -> Result<Value, (ConvIssue, Value)> {
    let mut b = to_bytes(v);
    if let Value::Double(_) = v {
        b = to_string(v).into_bytes();
    }
    if !binary && std::str::from_utf8(&b).is_err() {
        return Err((ConvIssue::BadValue, Value::Bytes(Vec::new())));
    }
    let n = if binary {
        b.len()
    } else {
        String::from_utf8_lossy(&b).chars().count()
    };
    let mut issue = None;
    if n > len as usize {
        // Trailing spaces beyond the length are dropped silently (with a note).
        let keep: Vec<u8> = if binary {
            b[..len as usize].to_vec()
        } else {
            String::from_utf8_lossy(&b)
                .chars()
                .take(len as usize)
                .collect::<String>()
                .into_bytes()
        };
        let rest_spaces = b[keep.len()..].iter().all(|&c| c == b' ');
        if !rest_spaces || binary {
            issue = Some(ConvIssue::TooLong);
        }
        b = keep;
    }
    if matches!(ty, ColumnType::Char { .. }) {
        if binary {
            b.resize(len as usize, 0);
        } else {
            while b.last() == Some(&b' ') {
                b.pop();
            }
        }
    }
    match issue {
        Some(i) => Err((i, Value::Bytes(b))),
        None => Ok(Value::Bytes(b)),
    }
}

pub(super) fn round_micro(micro: u32, fsp: u8) -> u32 {
    let div = 10u32.pow(6 - fsp.min(6) as u32);
    micro / div * div
}

pub fn zero_date() -> Date {
    Date {
        year: 0,
        month: 0,
        day: 0,
    }
}

pub(super) fn int_value(n: i128, ty: &ColumnType) -> Value {
    if ty.is_unsigned() {
        Value::UInt(n as u64)
    } else {
        Value::Int(n as i64)
    }
}

/// Converts a value for use as a key of a column of type `ty`, only when the conversion is
/// exact (so an index range built from it selects exactly the rows the comparison would).
pub fn exact_key(v: &Value, ty: &ColumnType) -> Option<Value> {
    match (ty, v) {
        (_, Value::Null) => None,
        (
            ColumnType::Enum { .. }
            | ColumnType::Set { .. }
            | ColumnType::Bit { .. }
            | ColumnType::Year
            | ColumnType::Uuid
            | ColumnType::Inet6,
            _,
        ) => coltypes::exact_key_coltype(v, ty),
        (ColumnType::Int { .. }, Value::Int(_) | Value::UInt(_)) => {
            let (lo, hi) = ty.int_range()?;
            let n = to_i128(v);
            (n >= lo && n <= hi).then(|| int_value(n, ty))
        }
        (ColumnType::Int { .. }, Value::Decimal(d)) => {
            let r = d.rescale(0)?;
            if Decimal::new(r.mantissa, 0) == *d {
                exact_key(&Value::Int(i64::try_from(r.narrow()?).ok()?), ty)
            } else {
                None
            }
        }
        (ColumnType::Int { .. }, Value::Double(f)) => {
            if f.fract() == 0.0 && f.abs() < 9e18 {
                exact_key(&Value::Int(*f as i64), ty)
            } else {
                None
            }
        }
        (ColumnType::Int { .. }, Value::Bytes(b)) => {
            let s = std::str::from_utf8(b).ok()?.trim();
            let n: i64 = s.parse().ok()?;
            exact_key(&Value::Int(n), ty)
        }
        // A FLOAT column holds the double of its single-precision value, and compares as
        // such (MariaDB's `f = 2.1` is false for a stored 2.1): the double is the key.
        (ColumnType::Double | ColumnType::Float, _) if is_num(v) => Some(Value::Double(to_f64(v))),
        (ColumnType::Decimal { precision, scale }, _) if is_num(v) => {
            let d = to_decimal(v)?;
            let r = d.rescale(*scale)?;
            (r == d && r.fits(*precision, *scale)).then_some(Value::Decimal(r))
        }
        (t, Value::Bytes(_)) if t.is_string() => Some(v.clone()),
        (ColumnType::Date, _) if !is_int(v) && !matches!(v, Value::Time(_)) => {
            let dt = datetime_of(v)?;
            (dt.hour == 0 && dt.minute == 0 && dt.second == 0 && dt.micro == 0)
                .then_some(Value::Date(dt.date))
        }
        (ColumnType::DateTime { .. } | ColumnType::Timestamp { .. }, _)
            if !is_int(v) && !matches!(v, Value::Time(_)) =>
        {
            datetime_of(v).map(Value::DateTime)
        }
        (ColumnType::Time { .. }, Value::Time(t)) => Some(Value::Time(*t)),
        _ => None,
    }
}
