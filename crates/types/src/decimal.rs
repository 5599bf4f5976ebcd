//! Fixed-point decimals: `mantissa * 10^-scale`, up to 65 significant digits in columns
//! (MariaDB's limit) and up to 76 in intermediate results (the mantissa is an [`I256`]).

use crate::wide::I256;
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// A DECIMAL value. Two decimals with different scales compare by numeric value.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
#[serde(from = "DecimalRepr", into = "DecimalRepr")]
pub struct Decimal {
    pub mantissa: I256,
    pub scale: u8,
}

/// The stored (JSON) form: `mantissa` as an i128 number, as it always was, and `wide` with
/// the digits of a mantissa that does not fit in i128.
#[derive(serde::Serialize, serde::Deserialize)]
struct DecimalRepr {
    mantissa: i128,
    scale: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    wide: Option<String>,
}

impl From<DecimalRepr> for Decimal {
    fn from(r: DecimalRepr) -> Decimal {
        let m = r
            .wide
            .and_then(|w| I256::parse_digits(&w))
            .unwrap_or(I256::from_i128(r.mantissa));
        Decimal::new(m, r.scale)
    }
}

impl From<Decimal> for DecimalRepr {
    fn from(d: Decimal) -> DecimalRepr {
        match d.mantissa.to_i128() {
            Some(m) => DecimalRepr {
                mantissa: m,
                scale: d.scale,
                wide: None,
            },
            None => DecimalRepr {
                mantissa: 0,
                scale: d.scale,
                wide: Some(d.mantissa.to_string()),
            },
        }
    }
}

impl Decimal {
    /// The largest precision of a DECIMAL column or CAST (MariaDB's).
    pub const MAX_PRECISION: u8 = 65;
    /// The largest scale of a DECIMAL column, CAST or arithmetic result (MariaDB's).
    pub const MAX_SCALE: u8 = 38;
    /// The most fractional digits a decimal literal keeps (MariaDB truncates the rest).
    pub const MAX_LITERAL_SCALE: u8 = 72;

    pub fn new(mantissa: impl Into<I256>, scale: u8) -> Decimal {
        Decimal {
            mantissa: mantissa.into(),
            scale,
        }
    }

    pub fn from_i64(v: i64) -> Decimal {
        Decimal::new(v, 0)
    }

    /// The mantissa as an i128, when it fits (every value of a DECIMAL(38) or narrower).
    pub fn narrow(&self) -> Option<i128> {
        self.mantissa.to_i128()
    }

    /// Rescales, rounding half away from zero when digits are dropped. None on overflow.
    pub fn rescale(&self, scale: u8) -> Option<Decimal> {
        match scale.cmp(&self.scale) {
            Ordering::Equal => Some(*self),
            Ordering::Greater => {
                let f = I256::pow10((scale - self.scale) as u32)?;
                Some(Decimal::new(self.mantissa.checked_mul(f)?, scale))
            }
            Ordering::Less => {
                let (q, r) = self.mantissa.checked_div_rem(self.pow10_of(scale)?)?;
                let half = r.checked_abs()?.checked_mul(I256::from(2i64))?;
                let q = if half >= self.pow10_of(scale)? {
                    q.checked_add(I256::from(self.mantissa.signum() as i64))?
                } else {
                    q
                };
                Some(Decimal::new(q, scale))
            }
        }
    }

    /// Drops digits below `scale` without rounding (toward zero).
    pub fn truncate_to(&self, scale: u8) -> Decimal {
        if scale >= self.scale {
            return *self;
        }
        match self
            .pow10_of(scale)
            .and_then(|f| self.mantissa.checked_div(f))
        {
            Some(q) => Decimal::new(q, scale),
            None => Decimal::new(0, scale),
        }
    }

    fn pow10_of(&self, scale: u8) -> Option<I256> {
        I256::pow10(self.scale.checked_sub(scale)? as u32)
    }

    /// Number of digits before the decimal point (at least 1 is not implied: 0.5 has 0).
    pub fn int_digits(&self) -> u32 {
        self.mantissa.digits().saturating_sub(self.scale as u32)
    }

    /// Whether the value fits DECIMAL(precision, scale) after rescaling to `scale`.
    pub fn fits(&self, precision: u8, scale: u8) -> bool {
        match self.rescale(scale) {
            Some(d) => d.int_digits() <= (precision - scale) as u32,
            None => false,
        }
    }

    /// The largest magnitude of DECIMAL(precision, scale), with the given sign.
    pub fn max_of(precision: u8, scale: u8, negative: bool) -> Decimal {
        let m = I256::pow10(precision as u32)
            .and_then(|p| p.checked_sub(I256::ONE))
            .unwrap_or(I256::ZERO);
        let m = if negative {
            m.checked_neg().unwrap_or(m)
        } else {
            m
        };
        Decimal::new(m, scale)
    }

    /// The nearest double (correctly rounded, as strtod gives it: a DECIMAL literal
    /// converted to DOUBLE reads back as the same text).
    pub fn to_f64(&self) -> f64 {
        // Both operands exact: one IEEE division rounds correctly.
        if let Some(m) = self.narrow() {
            if m.unsigned_abs() < 1 << 53 && self.scale <= 22 {
                return m as f64 / 10f64.powi(self.scale as i32);
            }
        }
        self.to_string().parse().unwrap_or(f64::NAN)
    }

    pub fn is_zero(&self) -> bool {
        self.mantissa.is_zero()
    }

    pub fn is_negative(&self) -> bool {
        self.mantissa.is_negative()
    }

    /// -self (a decimal's mantissa never reaches the minimum I256).
    pub fn neg(&self) -> Decimal {
        Decimal::new(
            self.mantissa.checked_neg().unwrap_or(self.mantissa),
            self.scale,
        )
    }

    /// |self|.
    pub fn abs(&self) -> Decimal {
        if self.is_negative() {
            self.neg()
        } else {
            *self
        }
    }

    fn cmp_value(&self, other: &Decimal) -> Ordering {
        if self.scale == other.scale {
            return self.mantissa.cmp(&other.mantissa);
        }
        let scale = self.scale.max(other.scale);
        match (self.rescale(scale), other.rescale(scale)) {
            (Some(a), Some(b)) => a.mantissa.cmp(&b.mantissa),
            _ => self.to_f64().total_cmp(&other.to_f64()),
        }
    }
}

impl PartialEq for Decimal {
    fn eq(&self, other: &Self) -> bool {
        self.cmp_value(other) == Ordering::Equal
    }
}

impl Eq for Decimal {}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_value(other)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.mantissa.to_string();
        let (neg, digits) = match text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, text.as_str()),
        };
        let scale = self.scale as usize;
        if neg {
            f.write_str("-")?;
        }
        if digits.len() > scale {
            let (int, frac) = digits.split_at(digits.len() - scale);
            f.write_str(int)?;
            if scale > 0 {
                write!(f, ".{frac}")?;
            }
        } else {
            write!(f, "0.{digits:0>scale$}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseDecimalError;

impl FromStr for Decimal {
    type Err = ParseDecimalError;

    /// Parses `[+-]digits[.digits][e[+-]digits]`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (neg, rest) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (num, exp) = match rest.find(['e', 'E']) {
            Some(i) => (
                &rest[..i],
                rest[i + 1..]
                    .parse::<i32>()
                    .map_err(|_| ParseDecimalError)?,
            ),
            None => (rest, 0),
        };
        let (int, frac) = match num.find('.') {
            Some(i) => (&num[..i], &num[i + 1..]),
            None => (num, ""),
        };
        if int.is_empty() && frac.is_empty() {
            return Err(ParseDecimalError);
        }
        if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return Err(ParseDecimalError);
        }
        let mut all = format!("{int}{frac}");
        let mut scale = frac.len() as i32 - exp;
        // Fraction digits past the literal limit, or past what the mantissa holds, are
        // dropped (truncated, as MariaDB reads long literals).
        let lead = all.len() - all.trim_start_matches('0').len();
        while scale > 0
            && (scale > Decimal::MAX_LITERAL_SCALE as i32
                || all.len().saturating_sub(lead) > crate::wide::MAX_DIGITS as usize)
        {
            all.pop();
            scale -= 1;
        }
        let all = all.trim_start_matches('0');
        let mut mantissa = if all.is_empty() {
            I256::ZERO
        } else {
            I256::parse_digits(all).ok_or(ParseDecimalError)?
        };
        if scale < 0 {
            let f = I256::pow10((-scale) as u32).ok_or(ParseDecimalError)?;
            mantissa = mantissa.checked_mul(f).ok_or(ParseDecimalError)?;
            scale = 0;
        }
        if neg {
            mantissa = mantissa.checked_neg().ok_or(ParseDecimalError)?;
        }
        Ok(Decimal::new(mantissa, scale as u8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        for (s, out) in [
            ("1.50", "1.50"),
            ("-0.05", "-0.05"),
            ("12", "12"),
            ("1e2", "100"),
            ("1.5e-1", "0.15"),
        ] {
            assert_eq!(s.parse::<Decimal>().unwrap().to_string(), out);
        }
        assert!("abc".parse::<Decimal>().is_err());
    }

    #[test]
    fn to_f64_is_correctly_rounded() {
        for s in [
            "0.9868781887887996",
            "0.1",
            "-123456789012345678.25",
            "0.30000000000000004",
            "9007199254740993",
        ] {
            let d: Decimal = s.parse().unwrap();
            assert_eq!(d.to_f64(), s.parse::<f64>().unwrap(), "{s}");
        }
    }

    #[test]
    fn rescale_rounds_half_away() {
        let d: Decimal = "2.345".parse().unwrap();
        assert_eq!(d.rescale(2).unwrap().to_string(), "2.35");
        let d: Decimal = "-2.345".parse().unwrap();
        assert_eq!(d.rescale(2).unwrap().to_string(), "-2.35");
        assert!("123.4".parse::<Decimal>().unwrap().fits(4, 1));
        assert!(!"1234.5".parse::<Decimal>().unwrap().fits(4, 1));
    }
}
