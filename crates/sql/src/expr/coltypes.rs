//! Storing values into ENUM, SET, BIT, YEAR, UUID and INET6 columns with MariaDB's conversions, and the
//! number an ENUM or SET value stands for in numeric context.

use super::*;

/// The number of an ENUM (index, 0 for `''`) or SET (bitmap) value of type `ty`; other
/// values as integers.
pub fn enum_set_number(v: &Value, ty: &ColumnType) -> Value {
    match (ty, v) {
        (_, Value::Null) => Value::Null,
        (ColumnType::Enum { elems, collation }, Value::Bytes(b)) => {
            Value::UInt(elems.enum_number(b, *collation))
        }
        (ColumnType::Set { elems, collation }, Value::Bytes(b)) => {
            Value::UInt(elems.set_number(b, *collation))
        }
        (_, other) => other.clone(),
    }
}

/// An integer given as text, for ENUM/SET (`'2'` is the second value when no value is `2`).
fn integer_text(b: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(b).ok()?.trim();
    s.parse().ok()
}

/// The number a non-text value gives (rounded), for ENUM/SET/BIT/YEAR.
fn number_of(v: &Value) -> i128 {
    match v {
        Value::Double(d) => round_f64(*d),
        other => to_i128(other),
    }
}

/// Converts `v` for an ENUM or SET column (see [`convert_for_column`]).
pub(super) fn convert_enum_set(v: &Value, ty: &ColumnType) -> Result<Value, (ConvIssue, Value)> {
    let (elems, coll, is_set) = match *ty {
        ColumnType::Enum { elems, collation } => (elems, collation, false),
        ColumnType::Set { elems, collation } => (elems, collation, true),
        _ => unreachable!("ENUM or SET"),
    };
    let truncated = |v: Vec<u8>| Err((ConvIssue::Truncated, Value::Bytes(v)));
    let from_number = |n: i128| {
        if is_set {
            let all = if elems.len() >= 64 {
                u64::MAX
            } else {
                (1u64 << elems.len()) - 1
            };
            let bits = n as u64;
            if n < 0 || bits & !all != 0 {
                truncated(elems.set_text(bits & all))
            } else {
                Ok(Value::Bytes(elems.set_text(bits)))
            }
        } else if n >= 1 && n <= elems.len() as i128 {
            Ok(Value::Bytes(elems.enum_text(n as u64)))
        } else {
            truncated(Vec::new())
        }
    };
    match v {
        Value::Bytes(b) if is_set => match elems.set_bits(b, coll) {
            (bits, true) => Ok(Value::Bytes(elems.set_text(bits))),
            (bits, false) => match integer_text(b) {
                Some(n) => from_number(n as i128),
                None => truncated(elems.set_text(bits)),
            },
        },
        Value::Bytes(b) => match elems.position(b, coll) {
            Some(p) => Ok(Value::Bytes(elems.enum_text(p as u64))),
            None => match integer_text(b) {
                Some(n) => from_number(n as i128),
                None => truncated(Vec::new()),
            },
        },
        Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_) => {
            from_number(number_of(v))
        }
        other => convert_enum_set(&Value::Bytes(to_bytes(other)), ty),
    }
}

/// Converts `v` for a BIT(bits) column: numbers as they are, strings as big-endian bytes;
/// too wide a value is 1406 (stored as all ones).
pub(super) fn convert_bit(v: &Value, bits: u8) -> Result<Value, (ConvIssue, Value)> {
    let max = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let too_long = Err((ConvIssue::TooLong, Value::UInt(max)));
    let n = match v {
        Value::Bytes(b) => {
            let b = &b[b.iter().take_while(|&&c| c == 0).count()..];
            if b.len() > 8 {
                return too_long;
            }
            b.iter().fold(0u64, |a, &c| a << 8 | c as u64)
        }
        Value::UInt(u) => *u,
        Value::Int(i) => *i as u64,
        other => {
            let n = number_of(other);
            if n < 0 {
                n as i64 as u64
            } else if n > u64::MAX as i128 {
                return too_long;
            } else {
                n as u64
            }
        }
    };
    if n > max {
        return too_long;
    }
    Ok(Value::UInt(n))
}

/// Converts `v` for a YEAR column: 1901..=2155 and 0; two-digit years 0-69 are 2000-2069
/// and 70-99 are 1970-1999 (a number 0 stays 0, the text `'0'` or `'00'` is 2000);
/// anything else is out of range (1264, stored as 0).
pub(super) fn convert_year(v: &Value) -> Result<Value, (ConvIssue, Value)> {
    let out_of_range = Err((ConvIssue::OutOfRange, Value::UInt(0)));
    let (n, text_len, issue) = match v {
        Value::Bytes(b) => {
            let (p, whole) = numeric_prefix(b);
            if p.is_empty() {
                return Err((ConvIssue::BadValue, Value::UInt(0)));
            }
            let f: f64 = p.parse().unwrap_or(0.0);
            let digits = p.trim_start_matches(['-', '+']).len();
            (
                round_f64(f),
                Some(digits),
                (!whole).then_some(ConvIssue::Truncated),
            )
        }
        Value::Date(d) => (d.year as i128, None, None),
        Value::DateTime(dt) => (dt.date.year as i128, None, None),
        other => (number_of(other), None, None),
    };
    let year = match (n, text_len) {
        (0, Some(4)) | (0, None) => 0,
        (0..=69, _) => 2000 + n,
        (70..=99, _) => 1900 + n,
        (1901..=2155, _) => n,
        _ => return out_of_range,
    };
    match issue {
        Some(i) => Err((i, Value::UInt(year as u64))),
        None => Ok(Value::UInt(year as u64)),
    }
}

/// The key value of `v` for an ENUM/SET/BIT/YEAR column when the comparison would select
/// exactly the rows holding it (None: no index lookup).
pub(super) fn exact_key_coltype(v: &Value, ty: &ColumnType) -> Option<Value> {
    match (ty, v) {
        (ColumnType::Enum { elems, collation }, Value::Bytes(b)) => elems
            .position(b, *collation)
            .map(|p| Value::Bytes(elems.enum_text(p as u64))),
        (ColumnType::Set { elems, collation }, Value::Bytes(b)) => {
            match elems.set_bits(b, *collation) {
                // Only a text in the canonical order compares equal as a string.
                (bits, true) if elems.set_text(bits).eq_ignore_ascii_case(b) => {
                    Some(Value::Bytes(elems.set_text(bits)))
                }
                _ => None,
            }
        }
        (ColumnType::Uuid | ColumnType::Inet6, Value::Bytes(b)) => ty
            .fixed_bin()?
            .canonical(b)
            .map(|t| Value::Bytes(t.into_bytes())),
        (ColumnType::Bit { .. } | ColumnType::Year, Value::UInt(u)) => Some(Value::UInt(*u)),
        (ColumnType::Bit { .. } | ColumnType::Year, Value::Int(i)) if *i >= 0 => {
            Some(Value::UInt(*i as u64))
        }
        _ => None,
    }
}

/// To a UUID/INET6 column: the canonical text of a string (text or 16-byte memory form);
/// anything else is a bad value (NULL outside strict mode).
pub(super) fn convert_fixed_bin(v: &Value, ty: &ColumnType) -> Result<Value, (ConvIssue, Value)> {
    let f = ty.fixed_bin().expect("a UUID/INET6 column");
    match v {
        Value::Bytes(b) => match f.canonical(b) {
            Some(t) => Ok(Value::Bytes(t.into_bytes())),
            None => Err((ConvIssue::BadValue, Value::Null)),
        },
        _ => Err((ConvIssue::BadValue, Value::Null)),
    }
}
