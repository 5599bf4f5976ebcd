//! Fixed-point decimals: `mantissa * 10^-scale`, up to 38 significant digits.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// A DECIMAL value. Two decimals with different scales compare by numeric value.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Decimal {
    pub mantissa: i128,
    pub scale: u8,
}

impl Decimal {
    /// The largest precision onelog supports (MariaDB allows 65; i128 holds 38 digits).
    pub const MAX_PRECISION: u8 = 38;
    pub const MAX_SCALE: u8 = 30;

    pub fn new(mantissa: i128, scale: u8) -> Decimal {
        Decimal { mantissa, scale }
    }

    pub fn from_i64(v: i64) -> Decimal {
        Decimal::new(v as i128, 0)
    }

    /// Rescales, rounding half away from zero when digits are dropped. None on overflow.
    pub fn rescale(&self, scale: u8) -> Option<Decimal> {
        match scale.cmp(&self.scale) {
            Ordering::Equal => Some(*self),
            Ordering::Greater => {
                let f = 10i128.checked_pow((scale - self.scale) as u32)?;
                Some(Decimal::new(self.mantissa.checked_mul(f)?, scale))
            }
            Ordering::Less => {
                let f = 10i128.checked_pow((self.scale - scale) as u32)?;
                let q = self.mantissa / f;
                let r = self.mantissa % f;
                let adj = if r.abs() * 2 >= f {
                    self.mantissa.signum()
                } else {
                    0
                };
                Some(Decimal::new(q + adj, scale))
            }
        }
    }

    /// Number of digits before the decimal point (at least 1 is not implied: 0.5 has 0).
    pub fn int_digits(&self) -> u32 {
        let int_part = (self.mantissa / 10i128.pow(self.scale as u32)).unsigned_abs();
        if int_part == 0 {
            0
        } else {
            int_part.ilog10() + 1
        }
    }

    /// Whether the value fits DECIMAL(precision, scale) after rescaling to `scale`.
    pub fn fits(&self, precision: u8, scale: u8) -> bool {
        match self.rescale(scale) {
            Some(d) => d.int_digits() <= (precision - scale) as u32,
            None => false,
        }
    }

    /// The nearest double (correctly rounded, as strtod gives it: a DECIMAL literal
    /// converted to DOUBLE reads back as the same text).
    pub fn to_f64(&self) -> f64 {
        // Both operands exact: one IEEE division rounds correctly.
        if self.mantissa.unsigned_abs() < 1 << 53 && self.scale <= 22 {
            return self.mantissa as f64 / 10f64.powi(self.scale as i32);
        }
        self.to_string().parse().unwrap_or(f64::NAN)
    }

    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    fn cmp_value(&self, other: &Decimal) -> Ordering {
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
        let neg = self.mantissa < 0;
        let digits = self.mantissa.unsigned_abs().to_string();
        let scale = self.scale as usize;
        let (int, frac) = if digits.len() > scale {
            let (a, b) = digits.split_at(digits.len() - scale);
            (a.to_string(), b.to_string())
        } else {
            ("0".to_string(), format!("{digits:0>scale$}"))
        };
        if neg {
            f.write_str("-")?;
        }
        f.write_str(&int)?;
        if scale > 0 {
            write!(f, ".{frac}")?;
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
        let all = format!("{int}{frac}");
        let all = all.trim_start_matches('0');
        let mut scale = frac.len() as i32 - exp;
        let mut mantissa: i128 = if all.is_empty() {
            0
        } else {
            all.parse().map_err(|_| ParseDecimalError)?
        };
        if scale < 0 {
            mantissa = mantissa
                .checked_mul(
                    10i128
                        .checked_pow((-scale) as u32)
                        .ok_or(ParseDecimalError)?,
                )
                .ok_or(ParseDecimalError)?;
            scale = 0;
        }
        while scale > Decimal::MAX_SCALE as i32 {
            mantissa /= 10;
            scale -= 1;
        }
        Ok(Decimal::new(
            if neg { -mantissa } else { mantissa },
            scale as u8,
        ))
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
