//! `I256`: a 256-bit two's-complement integer, the mantissa of a DECIMAL (up to 76 digits,
//! enough for MariaDB's 65-digit columns and the wider intermediate results of arithmetic).
//!
//! Four `u64` limbs (least significant first) keep the type 8-byte aligned, so a
//! [`crate::Decimal`] stays 40 bytes and a `Value` does not grow. Every operation first
//! tries `i128`, which covers the common (narrow) case without touching the limbs.

use std::cmp::Ordering;
use std::fmt;

type Limbs = [u64; 4];

/// A signed 256-bit integer.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct I256(Limbs);

/// The decimal digits an `I256` can always hold: 10^76 < 2^255.
pub const MAX_DIGITS: u32 = 76;

const fn mul_small(a: Limbs, m: u64) -> Limbs {
    let mut out = [0u64; 4];
    let mut carry = 0u128;
    let mut i = 0;
    while i < 4 {
        let t = a[i] as u128 * m as u128 + carry;
        out[i] = t as u64;
        carry = t >> 64;
        i += 1;
    }
    out
}

const fn pow10_table() -> [Limbs; 77] {
    let mut t = [[0u64; 4]; 77];
    t[0] = [1, 0, 0, 0];
    let mut i = 1;
    while i < 77 {
        t[i] = mul_small(t[i - 1], 10);
        i += 1;
    }
    t
}

static POW10: [Limbs; 77] = pow10_table();

fn cmp_u(a: &Limbs, b: &Limbs) -> Ordering {
    for i in (0..4).rev() {
        match a[i].cmp(&b[i]) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    Ordering::Equal
}

fn add_u(a: &Limbs, b: &Limbs) -> (Limbs, bool) {
    let mut out = [0u64; 4];
    let mut carry = false;
    for i in 0..4 {
        let (s, c1) = a[i].overflowing_add(b[i]);
        let (s, c2) = s.overflowing_add(carry as u64);
        out[i] = s;
        carry = c1 || c2;
    }
    (out, carry)
}

fn sub_u(a: &Limbs, b: &Limbs) -> Limbs {
    let mut out = [0u64; 4];
    let mut borrow = false;
    for i in 0..4 {
        let (s, b1) = a[i].overflowing_sub(b[i]);
        let (s, b2) = s.overflowing_sub(borrow as u64);
        out[i] = s;
        borrow = b1 || b2;
    }
    out
}

fn neg_u(a: &Limbs) -> Limbs {
    sub_u(&[0; 4], a)
}

/// Product of two magnitudes, None when it needs more than 256 bits.
fn mul_u(a: &Limbs, b: &Limbs) -> Option<Limbs> {
    let mut out = [0u64; 8];
    for i in 0..4 {
        if a[i] == 0 {
            continue;
        }
        let mut carry = 0u128;
        for j in 0..4 {
            let t = a[i] as u128 * b[j] as u128 + out[i + j] as u128 + carry;
            out[i + j] = t as u64;
            carry = t >> 64;
        }
        out[i + 4] = carry as u64;
    }
    if out[4..].iter().any(|&l| l != 0) {
        return None;
    }
    Some([out[0], out[1], out[2], out[3]])
}

/// Quotient and remainder of a magnitude by a single limb.
fn divrem_small(a: &Limbs, d: u64) -> (Limbs, u64) {
    let mut q = [0u64; 4];
    let mut r = 0u128;
    for i in (0..4).rev() {
        let cur = (r << 64) | a[i] as u128;
        q[i] = (cur / d as u128) as u64;
        r = cur % d as u128;
    }
    (q, r as u64)
}

fn bits(a: &Limbs) -> u32 {
    for i in (0..4).rev() {
        if a[i] != 0 {
            return 64 * i as u32 + 64 - a[i].leading_zeros();
        }
    }
    0
}

fn shl1(a: &mut Limbs, bit: u64) {
    for i in (1..4).rev() {
        a[i] = (a[i] << 1) | (a[i - 1] >> 63);
    }
    a[0] = (a[0] << 1) | bit;
}

/// Quotient and remainder of magnitudes (`d` non-zero).
fn divrem_u(a: &Limbs, d: &Limbs) -> (Limbs, Limbs) {
    if d[1] == 0 && d[2] == 0 && d[3] == 0 {
        let (q, r) = divrem_small(a, d[0]);
        return (q, [r, 0, 0, 0]);
    }
    let mut q = [0u64; 4];
    let mut r = [0u64; 4];
    for i in (0..bits(a)).rev() {
        let bit = (a[(i / 64) as usize] >> (i % 64)) & 1;
        shl1(&mut r, bit);
        shl1(&mut q, 0);
        if cmp_u(&r, d) != Ordering::Less {
            r = sub_u(&r, d);
            q[0] |= 1;
        }
    }
    (q, r)
}

impl I256 {
    pub const ZERO: I256 = I256([0; 4]);
    pub const ONE: I256 = I256([1, 0, 0, 0]);

    pub const fn from_i128(v: i128) -> I256 {
        let u = v as u128;
        let ext = if v < 0 { u64::MAX } else { 0 };
        I256([u as u64, (u >> 64) as u64, ext, ext])
    }

    /// The value as an `i128`, when it fits.
    #[inline]
    pub fn to_i128(self) -> Option<i128> {
        let v = (self.0[0] as u128 | (self.0[1] as u128) << 64) as i128;
        let ext = if v < 0 { u64::MAX } else { 0 };
        (self.0[2] == ext && self.0[3] == ext).then_some(v)
    }

    /// 10^n for n up to [`MAX_DIGITS`].
    pub fn pow10(n: u32) -> Option<I256> {
        POW10.get(n as usize).map(|l| I256(*l))
    }

    pub fn is_negative(self) -> bool {
        (self.0[3] as i64) < 0
    }

    pub fn is_zero(self) -> bool {
        self.0 == [0; 4]
    }

    /// -1, 0 or 1.
    pub fn signum(self) -> i32 {
        if self.is_negative() {
            -1
        } else if self.is_zero() {
            0
        } else {
            1
        }
    }

    fn magnitude(self) -> Limbs {
        if self.is_negative() {
            neg_u(&self.0)
        } else {
            self.0
        }
    }

    fn from_magnitude(neg: bool, m: Limbs) -> Option<I256> {
        let top = m[3] >> 63 == 1;
        if !top {
            return Some(I256(if neg { neg_u(&m) } else { m }));
        }
        // Only -2^255 has the top bit set in its magnitude.
        (neg && m == [0, 0, 0, 1 << 63]).then_some(I256(m))
    }

    /// |self|, None only for the minimum value.
    pub fn checked_abs(self) -> Option<I256> {
        I256::from_magnitude(false, self.magnitude())
    }

    pub fn checked_neg(self) -> Option<I256> {
        I256::from_magnitude(!self.is_negative(), self.magnitude())
    }

    pub fn checked_add(self, o: I256) -> Option<I256> {
        if let (Some(a), Some(b)) = (self.to_i128(), o.to_i128()) {
            if let Some(s) = a.checked_add(b) {
                return Some(I256::from_i128(s));
            }
        }
        let (s, _) = add_u(&self.0, &o.0);
        let s = I256(s);
        let same = self.is_negative() == o.is_negative();
        (!same || s.is_negative() == self.is_negative()).then_some(s)
    }

    pub fn checked_sub(self, o: I256) -> Option<I256> {
        if let (Some(a), Some(b)) = (self.to_i128(), o.to_i128()) {
            if let Some(s) = a.checked_sub(b) {
                return Some(I256::from_i128(s));
            }
        }
        let s = I256(sub_u(&self.0, &o.0));
        let differ = self.is_negative() != o.is_negative();
        (!differ || s.is_negative() == self.is_negative()).then_some(s)
    }

    pub fn checked_mul(self, o: I256) -> Option<I256> {
        if let (Some(a), Some(b)) = (self.to_i128(), o.to_i128()) {
            if let Some(p) = a.checked_mul(b) {
                return Some(I256::from_i128(p));
            }
        }
        let m = mul_u(&self.magnitude(), &o.magnitude())?;
        I256::from_magnitude(self.is_negative() != o.is_negative(), m)
    }

    /// Quotient and remainder, truncating toward zero (the remainder has the dividend's
    /// sign). None when `o` is zero or the quotient overflows.
    pub fn checked_div_rem(self, o: I256) -> Option<(I256, I256)> {
        if o.is_zero() {
            return None;
        }
        if let (Some(a), Some(b)) = (self.to_i128(), o.to_i128()) {
            if let (Some(q), Some(r)) = (a.checked_div(b), a.checked_rem(b)) {
                return Some((I256::from_i128(q), I256::from_i128(r)));
            }
        }
        let (q, r) = divrem_u(&self.magnitude(), &o.magnitude());
        let neg = self.is_negative();
        Some((
            I256::from_magnitude(neg != o.is_negative(), q)?,
            I256::from_magnitude(neg, r)?,
        ))
    }

    pub fn checked_div(self, o: I256) -> Option<I256> {
        self.checked_div_rem(o).map(|(q, _)| q)
    }

    pub fn checked_rem(self, o: I256) -> Option<I256> {
        self.checked_div_rem(o).map(|(_, r)| r)
    }

    /// Number of decimal digits of |self| (0 for zero).
    pub fn digits(self) -> u32 {
        if let Some(v) = self.to_i128() {
            let u = v.unsigned_abs();
            return if u == 0 { 0 } else { u.ilog10() + 1 };
        }
        let m = self.magnitude();
        POW10
            .iter()
            .position(|p| cmp_u(&m, p) == Ordering::Less)
            .unwrap_or(POW10.len()) as u32
    }

    /// Big-endian two's-complement bytes.
    pub fn to_be_bytes(self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for i in 0..4 {
            out[i * 8..i * 8 + 8].copy_from_slice(&self.0[3 - i].to_be_bytes());
        }
        out
    }

    pub fn from_be_bytes(b: [u8; 32]) -> I256 {
        let mut l = [0u64; 4];
        for (i, limb) in l.iter_mut().enumerate() {
            *limb = u64::from_be_bytes(b[(3 - i) * 8..(3 - i) * 8 + 8].try_into().unwrap());
        }
        I256(l)
    }

    /// Little-endian two's-complement bytes.
    pub fn to_le_bytes(self) -> [u8; 32] {
        let mut b = self.to_be_bytes();
        b.reverse();
        b
    }

    pub fn from_le_bytes(mut b: [u8; 32]) -> I256 {
        b.reverse();
        I256::from_be_bytes(b)
    }

    /// Parses an optional sign followed by ASCII digits. None on overflow or bad input.
    pub fn parse_digits(s: &str) -> Option<I256> {
        let (neg, digits) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if digits.len() <= 38 {
            let v: i128 = digits.parse().ok()?;
            return Some(I256::from_i128(if neg { -v } else { v }));
        }
        let mut m = [0u64; 4];
        for chunk in digits.as_bytes().chunks(19) {
            let n: u64 = std::str::from_utf8(chunk).ok()?.parse().ok()?;
            let scaled = mul_u(&m, &POW10[chunk.len()])?;
            let (sum, carry) = add_u(&scaled, &[n, 0, 0, 0]);
            if carry {
                return None;
            }
            m = sum;
        }
        I256::from_magnitude(neg, m)
    }
}

impl From<i128> for I256 {
    fn from(v: i128) -> I256 {
        I256::from_i128(v)
    }
}

impl From<i64> for I256 {
    fn from(v: i64) -> I256 {
        I256::from_i128(v as i128)
    }
}

impl From<i32> for I256 {
    fn from(v: i32) -> I256 {
        I256::from_i128(v as i128)
    }
}

impl From<u64> for I256 {
    fn from(v: u64) -> I256 {
        I256::from_i128(v as i128)
    }
}

impl Ord for I256 {
    fn cmp(&self, o: &I256) -> Ordering {
        match (self.0[3] as i64).cmp(&(o.0[3] as i64)) {
            Ordering::Equal => {}
            ord => return ord,
        }
        for i in (0..3).rev() {
            match self.0[i].cmp(&o.0[i]) {
                Ordering::Equal => {}
                ord => return ord,
            }
        }
        Ordering::Equal
    }
}

impl PartialOrd for I256 {
    fn partial_cmp(&self, o: &I256) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl fmt::Display for I256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(v) = self.to_i128() {
            return write!(f, "{v}");
        }
        let mut m = self.magnitude();
        let mut chunks = Vec::with_capacity(5);
        while m != [0; 4] {
            let (q, r) = divrem_small(&m, 10_000_000_000_000_000_000);
            chunks.push(r);
            m = q;
        }
        if self.is_negative() {
            f.write_str("-")?;
        }
        let mut it = chunks.iter().rev();
        if let Some(first) = it.next() {
            write!(f, "{first}")?;
        }
        for c in it {
            write!(f, "{c:019}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for I256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> I256 {
        I256::parse_digits(s).unwrap()
    }

    #[test]
    fn round_trips_text_and_bytes() {
        for s in [
            "0",
            "-1",
            "170141183460469231731687303715884105727",
            "-170141183460469231731687303715884105729",
            "99999999999999999999999999999999999999999999999999999999999999999",
            "-99999999999999999999999999999999999999999999999999999999999999999",
            "9999999999999999999999999999999999999999999999999999999999999999999999999999",
        ] {
            let v = p(s);
            assert_eq!(v.to_string(), s);
            assert_eq!(I256::from_be_bytes(v.to_be_bytes()), v);
            assert_eq!(I256::from_le_bytes(v.to_le_bytes()), v);
        }
        assert!(I256::parse_digits(&"9".repeat(78)).is_none());
    }

    #[test]
    fn arithmetic_matches_i128_and_goes_wider() {
        let a = p("12345678901234567890123456789012345678901234567890");
        let b = p("98765432109876543210");
        let prod = a.checked_mul(b).unwrap();
        assert_eq!(
            prod.to_string(),
            "1219326311370217952249657064224965706422496570642237463801111263526900"
        );
        let (q, r) = prod
            .checked_add(I256::from(7i64))
            .unwrap()
            .checked_div_rem(b)
            .unwrap();
        assert_eq!(q, a);
        assert_eq!(r, I256::from(7i64));
        let n = prod.checked_neg().unwrap();
        let (q, r) = n
            .checked_sub(I256::from(7i64))
            .unwrap()
            .checked_div_rem(b)
            .unwrap();
        assert_eq!(q, a.checked_neg().unwrap());
        assert_eq!(r, I256::from(-7i64));
        assert!(n < a && a < prod);
        assert_eq!(p(&"9".repeat(65)).digits(), 65);
        assert_eq!(I256::pow10(65).unwrap().digits(), 66);
        assert!(I256::pow10(76)
            .unwrap()
            .checked_mul(I256::from(10i64))
            .is_none());
        let big = p(&"9".repeat(76));
        assert!(big.checked_add(big).is_some());
        assert!(big.checked_mul(I256::from(6i64)).is_none());
    }
}
