//! DECIMAL arithmetic as MariaDB does it: exact sums, differences, products and remainders
//! (products keep at most 38 fractional digits, rounded half away from zero), quotients at
//! the dividend's scale plus `div_precision_increment` (4), at most 38. Mantissas are
//! 256-bit, so results of up to 76 digits are exact; wider ones are out of range (1690).

use onelog_types::{Decimal, SqlError, Value, I256};

/// Fractional digits `/` adds to the dividend's (MariaDB's div_precision_increment).
const DIV_PRECISION_INCREMENT: u8 = 4;

pub(crate) fn overflow() -> SqlError {
    crate::sql_err(1690, "DECIMAL value is out of range")
}

/// Both mantissas at the larger scale.
fn align(a: Decimal, b: Decimal) -> Result<(I256, I256, u8), SqlError> {
    let s = a.scale.max(b.scale);
    match (a.rescale(s), b.rescale(s)) {
        (Some(x), Some(y)) => Ok((x.mantissa, y.mantissa, s)),
        _ => Err(overflow()),
    }
}

pub(crate) fn add(a: Decimal, b: Decimal) -> Result<Decimal, SqlError> {
    let (x, y, s) = align(a, b)?;
    x.checked_add(y)
        .map(|m| Decimal::new(m, s))
        .ok_or_else(overflow)
}

pub(crate) fn sub(a: Decimal, b: Decimal) -> Result<Decimal, SqlError> {
    let (x, y, s) = align(a, b)?;
    x.checked_sub(y)
        .map(|m| Decimal::new(m, s))
        .ok_or_else(overflow)
}

pub(crate) fn mul(a: Decimal, b: Decimal) -> Result<Decimal, SqlError> {
    let s = a.scale as u16 + b.scale as u16;
    let m = a.mantissa.checked_mul(b.mantissa).ok_or_else(overflow)?;
    // The exact product's scale fits u8 whenever both operands' scales do (≤ 76 + 76).
    let d = Decimal::new(m, s.min(u8::MAX as u16) as u8);
    if s > Decimal::MAX_SCALE as u16 {
        d.rescale(Decimal::MAX_SCALE).ok_or_else(overflow)
    } else {
        Ok(d)
    }
}

/// `a % b` (the sign of `a`), at the larger scale; None when `b` is zero.
pub(crate) fn rem(a: Decimal, b: Decimal) -> Result<Option<Decimal>, SqlError> {
    let (x, y, s) = align(a, b)?;
    if y.is_zero() {
        return Ok(None);
    }
    Ok(x.checked_rem(y).map(|r| Decimal::new(r, s)))
}

/// `floor(n * 10^shift / d)` for non-negative `n` and positive `d`, by long division in
/// steps small enough that no intermediate overflows.
fn div_shifted(n: I256, shift: u32, d: I256) -> Option<I256> {
    let (mut q, mut r) = n.checked_div_rem(d)?;
    let room = onelog_types::wide::MAX_DIGITS
        .saturating_sub(d.digits())
        .max(1);
    let mut left = shift;
    while left > 0 {
        let step = left.min(room);
        let p = I256::pow10(step)?;
        let (q2, r2) = r.checked_mul(p)?.checked_div_rem(d)?;
        q = q.checked_mul(p)?.checked_add(q2)?;
        r = r2;
        left -= step;
    }
    Some(q)
}

/// `a / b` with `a`'s scale + 4 fractional digits (at most 38), rounded half away from
/// zero; None when `b` is zero.
pub(crate) fn div(a: Decimal, b: Decimal) -> Result<Option<Decimal>, SqlError> {
    if b.is_zero() {
        return Ok(None);
    }
    let scale = (a.scale.saturating_add(DIV_PRECISION_INCREMENT)).min(Decimal::MAX_SCALE);
    // |a| / |b| at scale + 1 digits: |a.m| * 10^(scale + 1 - a.s + b.s) / |b.m|.
    let shift = scale as i32 + 1 - a.scale as i32 + b.scale as i32;
    let (mut n, d) = (a.abs().mantissa, b.abs().mantissa);
    let mut shift_by = shift;
    if shift < 0 {
        n = n
            .checked_div(I256::pow10((-shift) as u32).ok_or_else(overflow)?)
            .ok_or_else(overflow)?;
        shift_by = 0;
    }
    let q = div_shifted(n, shift_by as u32, d).ok_or_else(overflow)?;
    let (q, last) = q.checked_div_rem(I256::from(10i64)).ok_or_else(overflow)?;
    let q = if last >= I256::from(5i64) {
        q.checked_add(I256::ONE).ok_or_else(overflow)?
    } else {
        q
    };
    let r = Decimal::new(q, scale);
    Ok(Some(if a.is_negative() != b.is_negative() {
        r.neg()
    } else {
        r
    }))
}

/// `a DIV b` of decimals: the quotient truncated to an integer; None when `b` is zero.
pub(crate) fn int_div(a: Decimal, b: Decimal) -> Result<Option<I256>, SqlError> {
    let (x, y, _) = align(a, b)?;
    if y.is_zero() {
        return Ok(None);
    }
    Ok(x.checked_div(y))
}

/// FLOOR / CEIL of a decimal: an integer-valued decimal of scale 0.
pub(crate) fn floor_ceil(d: Decimal, ceil: bool) -> Decimal {
    let t = d.truncate_to(0);
    let exact = t == d;
    let step = match (exact, d.is_negative(), ceil) {
        (true, _, _) => 0,
        (false, true, false) => -1,
        (false, false, true) => 1,
        _ => 0,
    };
    match t.mantissa.checked_add(I256::from(step as i64)) {
        Some(m) => Decimal::new(m, 0),
        None => t,
    }
}

/// ROUND / TRUNCATE of a decimal to `digits` places (negative: to tens, hundreds, ...):
/// the result has max(digits, 0) fractional digits (never more than 38).
pub(crate) fn round_to(d: Decimal, digits: i64, trunc: bool) -> Result<Decimal, SqlError> {
    let s = digits.clamp(0, Decimal::MAX_SCALE as i64) as u8;
    if digits >= 0 {
        if trunc {
            return Ok(d.truncate_to(s).rescale(s).unwrap_or(d));
        }
        return d.rescale(s).ok_or_else(overflow);
    }
    let shift = (-digits).min(onelog_types::wide::MAX_DIGITS as i64) as u8;
    // Round to 10^shift: scale the value down by `shift`, round to an integer, scale back.
    let down = Decimal::new(d.mantissa, d.scale.saturating_add(shift));
    let int = if trunc {
        down.truncate_to(0)
    } else {
        down.rescale(0).ok_or_else(overflow)?
    };
    let m = I256::pow10(shift as u32)
        .and_then(|p| int.mantissa.checked_mul(p))
        .unwrap_or(I256::ZERO);
    Ok(Decimal::new(m, 0))
}

/// A decimal with the trailing zero digits of its fraction removed (for grouping keys).
pub(crate) fn normalized(d: Decimal) -> Decimal {
    let mut d = d;
    let ten = I256::from(10i64);
    while d.scale > 0 {
        match d.mantissa.checked_div_rem(ten) {
            Some((q, r)) if r.is_zero() => d = Decimal::new(q, d.scale - 1),
            _ => break,
        }
    }
    d
}

/// The value of an arithmetic result: the decimal, or 1690 when it did not fit.
pub(crate) fn value(r: Result<Decimal, SqlError>) -> Result<Value, SqlError> {
    r.map(Value::Decimal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn wide_division_and_products() {
        let x = d("12345678901234567890123456789012345678901234567890123456789012345");
        assert_eq!(
            div(x, d("7")).unwrap().unwrap().to_string(),
            "1763668414462081127160493827001763668414462081127160493827001763.5714"
        );
        assert_eq!(
            div(d("1.0000000000000000000000000000"), d("3"))
                .unwrap()
                .unwrap()
                .to_string(),
            "0.33333333333333333333333333333333"
        );
        assert_eq!(
            mul(d("0.00000000000000000005"), d("0.0000000000000000005"))
                .unwrap()
                .to_string(),
            "0.00000000000000000000000000000000000003"
        );
        let nines = d(&"9".repeat(65));
        assert!(mul(nines, nines).is_err());
        assert_eq!(
            add(nines, d("1")).unwrap().to_string(),
            format!("1{}", "0".repeat(65))
        );
        assert_eq!(
            round_to(
                d("-12345678901234567890123456789012345678901234567890.55"),
                -3,
                true
            )
            .unwrap()
            .to_string(),
            "-12345678901234567890123456789012345678901234567000"
        );
        assert_eq!(floor_ceil(d("-2.5"), false).to_string(), "-3");
        assert_eq!(floor_ceil(d("2.5"), true).to_string(), "3");
        assert_eq!(normalized(d("1.500")).to_string(), "1.5");
    }
}
