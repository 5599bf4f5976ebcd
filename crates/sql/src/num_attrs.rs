//! Numeric column attributes beyond the type: ZEROFILL, UNSIGNED on DECIMAL, FLOAT and
//! DOUBLE, and the (M,D) of FLOAT(M,D)/DOUBLE(M,D).
//!
//! ZEROFILL implies UNSIGNED. A ZEROFILL integer without a display width gets the width
//! of its unsigned type (`int zerofill` is `int(10) unsigned zerofill`). Values keep their
//! numeric representation everywhere (keys, the binlog, arithmetic); the padding is how a
//! column reference is shown: the text protocol pads every ZEROFILL column to its display
//! length, the binary protocol pads DECIMAL (sent as text) only, as MariaDB does. Negative
//! values are out of range for an unsigned DECIMAL/FLOAT/DOUBLE (stored as 0 with warning
//! 1264, or error 1264 in strict mode). A FLOAT(M,D)/DOUBLE(M,D) value is rounded to D
//! decimals (half to even, as MariaDB's rint) and clipped to ±(10^(M-D) - 10^-D).

use onelog_engine::ColumnDef;
use onelog_types::{ColumnType, Value};
use sqlparser::ast as sq;

use crate::expr::ConvIssue;
use crate::parser::zerofill::ZEROFILL_MARK;
use crate::{sql_err, SqlError};

/// Whether a column's CHARACTER SET option is the parser's ZEROFILL mark.
pub(crate) fn is_mark(n: &sq::ObjectName) -> bool {
    crate::parser::name_parts(n).join(".") == ZEROFILL_MARK
}

/// The display width MariaDB gives an unsigned integer of `bytes` bytes (its digits).
pub(crate) fn unsigned_width(bytes: u8) -> u16 {
    match bytes {
        1 => 3,
        2 => 5,
        3 => 8,
        4 => 10,
        _ => 20,
    }
}

/// The (M,D) of a FLOAT(M,D)/DOUBLE(M,D) declaration, checked as MariaDB checks it.
fn float_digits(declared: &sq::DataType, name: &str) -> Result<Option<(u8, u8)>, SqlError> {
    use sq::DataType as D;
    let (m, d) = match declared {
        D::Float(sq::ExactNumberInfo::PrecisionAndScale(m, d))
        | D::FloatUnsigned(sq::ExactNumberInfo::PrecisionAndScale(m, d))
        | D::Double(sq::ExactNumberInfo::PrecisionAndScale(m, d))
        | D::DoubleUnsigned(sq::ExactNumberInfo::PrecisionAndScale(m, d)) => (*m, *d),
        _ => return Ok(None),
    };
    let d = u64::try_from(d).unwrap_or(u64::MAX);
    if m < d {
        return Err(sql_err(
            1427,
            format!(
                "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{name}')"
            ),
        ));
    }
    if m > 255 {
        return Err(sql_err(
            1439,
            format!("Display width out of range for '{name}' (max = 255)"),
        ));
    }
    if d > 30 {
        return Err(sql_err(
            1425,
            format!("Too big scale {d} specified for '{name}'. Maximum is 30"),
        ));
    }
    Ok(Some((m as u8, d as u8)))
}

/// Records the declared numeric attributes of `def`: UNSIGNED (DECIMAL/FLOAT/DOUBLE),
/// ZEROFILL, and FLOAT(M,D)/DOUBLE(M,D).
pub(crate) fn apply(
    def: &mut ColumnDef,
    declared: &sq::DataType,
    zerofill: bool,
) -> Result<(), SqlError> {
    use sq::DataType as D;
    let real = matches!(
        def.ty,
        ColumnType::Decimal { .. } | ColumnType::Float | ColumnType::Double
    );
    if real
        && matches!(
            declared,
            D::DecimalUnsigned(_)
                | D::DecUnsigned(_)
                | D::FloatUnsigned(_)
                | D::RealUnsigned
                | D::DoubleUnsigned(_)
                | D::DoublePrecisionUnsigned
        )
    {
        def.num.unsigned = true;
    }
    if matches!(def.ty, ColumnType::Float | ColumnType::Double) {
        def.num.digits = float_digits(declared, &def.name)?;
    }
    if !zerofill {
        return Ok(());
    }
    match def.ty {
        ColumnType::Int { bytes, .. } => {
            def.num.zerofill = true;
            def.display_width = Some(def.display_width.unwrap_or(unsigned_width(bytes)));
        }
        _ if real => {
            def.num.zerofill = true;
            def.num.unsigned = true;
        }
        _ => {}
    }
    Ok(())
}

/// The type as SHOW CREATE TABLE and COLUMN_TYPE show it after the integer display width
/// is applied: `(M,D)` of a FLOAT/DOUBLE, ` unsigned` of a DECIMAL/FLOAT/DOUBLE,
/// ` zerofill`.
pub(crate) fn decorate(c: &ColumnDef, name: String) -> String {
    let mut name = name;
    if let Some((m, d)) = c.num.digits {
        name = format!("{name}({m},{d})");
    }
    if c.num.unsigned {
        name.push_str(" unsigned");
    }
    if c.num.zerofill {
        name.push_str(" zerofill");
    }
    name
}

/// A converted value for column `c`: negative values are out of range for an unsigned
/// DECIMAL/FLOAT/DOUBLE (checked before rounding, as MariaDB does), and a FLOAT(M,D)/
/// DOUBLE(M,D) value is rounded to D decimals and range-checked.
pub(crate) fn check_value(c: &ColumnDef, v: Value) -> Result<Value, (ConvIssue, Value)> {
    if c.num.unsigned {
        match &v {
            Value::Double(d) if *d < 0.0 => {
                return Err((ConvIssue::OutOfRange, Value::Double(0.0)));
            }
            Value::Decimal(d) if d.is_negative() => {
                return Err((
                    ConvIssue::OutOfRange,
                    Value::Decimal(onelog_types::Decimal::new(0, d.scale)),
                ));
            }
            _ => {}
        }
    }
    let (Some((m, d)), Value::Double(x)) = (c.num.digits, &v) else {
        return Ok(v);
    };
    if !x.is_finite() {
        return Ok(v);
    }
    let scale = 10f64.powi(d as i32);
    let mut r = (x * scale).round_ties_even() / scale;
    let mut max = 10f64.powi(m as i32 - d as i32) - 1.0 / scale;
    if c.ty == ColumnType::Float {
        // Compared as stored: in single precision.
        r = r as f32 as f64;
        max = max as f32 as f64;
    }
    if r.abs() > max {
        return clip_sign(c, (ConvIssue::OutOfRange, Value::Double(max.copysign(r))));
    }
    Ok(Value::Double(r))
}

/// An out-of-range issue whose adjusted value is negative, for an unsigned column: 0.
fn clip_sign(c: &ColumnDef, (issue, v): (ConvIssue, Value)) -> Result<Value, (ConvIssue, Value)> {
    match v {
        Value::Double(d) if c.num.unsigned && d < 0.0 => Err((issue, Value::Double(0.0))),
        v => Err((issue, v)),
    }
}

/// The width ZEROFILL pads a column's values to: an integer's display width, a DECIMAL's
/// digits and point, a FLOAT(M,D)/DOUBLE(M,D)'s M, else the type's display length.
pub(crate) fn zerofill_width(
    ty: &ColumnType,
    display_width: Option<u16>,
    digits: Option<(u8, u8)>,
) -> u32 {
    decimal_length(ty)
        .or(display_width.map(u32::from))
        .or(digits.map(|(m, _)| m as u32))
        .unwrap_or_else(|| crate::binder::display_len(ty))
}

/// The display length of a ZEROFILL DECIMAL result column: the digits and the point, no
/// sign.
pub(crate) fn decimal_length(ty: &ColumnType) -> Option<u32> {
    match *ty {
        ColumnType::Decimal { precision, scale } => Some(precision as u32 + u32::from(scale > 0)),
        _ => None,
    }
}

/// A numeric value of column `c` as MariaDB shows the column's values (its DEFAULT in SHOW
/// CREATE TABLE and COLUMN_DEFAULT): with a FLOAT(M,D)/DOUBLE(M,D)'s D decimals, padded
/// to the display width if ZEROFILL. None when the attributes change nothing.
pub(crate) fn shown(c: &ColumnDef, v: &Value) -> Option<String> {
    if !c.num.zerofill && c.num.digits.is_none() {
        return None;
    }
    let text = match (c.num.digits, v) {
        (Some((_, d)), Value::Double(x)) => format!("{x:.*}", d as usize),
        (_, Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_)) => {
            crate::expr::to_string(v)
        }
        _ => return None,
    };
    if !c.num.zerofill {
        return Some(text);
    }
    let width = zerofill_width(&c.ty, c.display_width, c.num.digits) as usize;
    Some(format!(
        "{}{text}",
        "0".repeat(width.saturating_sub(text.len()))
    ))
}
