//! MariaDB's binary DECIMAL in row images: big-endian groups of 9 digits in 4 bytes, the
//! leftover digits of the integer and fraction parts in 1..4 bytes, the sign folded into
//! the top bit and negative values bit-inverted.

use onelog_types::{Decimal, I256};

use crate::codec::{be_uint, put_uint_be, Cursor};
use crate::error::{BinlogError, Result};

const DIG2BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];
const DIGITS_PER_WORD: u32 = 9;

/// Bytes of a DECIMAL(precision, scale) in binary form.
pub fn decimal_bin_size(precision: u8, scale: u8) -> usize {
    let intg = precision.saturating_sub(scale) as usize;
    let frac = scale as usize;
    intg / 9 * 4 + DIG2BYTES[intg % 9] + frac / 9 * 4 + DIG2BYTES[frac % 9]
}

fn pow10(n: u32) -> I256 {
    I256::pow10(n).expect("at most 65 digits")
}

/// `(v / 10^shift) % 10^digits` of a non-negative value, as a word.
fn word(v: I256, shift: u32, digits: u32) -> u64 {
    let q = v.checked_div(pow10(shift)).unwrap_or(I256::ZERO);
    let w = q.checked_rem(pow10(digits)).unwrap_or(I256::ZERO);
    w.to_i128().unwrap_or(0) as u64
}

// Format: [leftover integer digits: DIG2BYTES[intg % 9] bytes BE] [intg / 9 words of 9
// digits, 4 bytes BE each, most significant first] [frac / 9 words] [leftover fraction
// digits: DIG2BYTES[frac % 9] bytes BE]; then negative values have every byte inverted, and
// the top bit of the first byte is flipped (set for non-negative values).
pub(crate) fn pack_decimal(out: &mut Vec<u8>, d: &Decimal, precision: u8, scale: u8) -> Result<()> {
    let r = d
        .rescale(scale)
        .filter(|r| r.fits(precision, scale))
        .ok_or_else(|| {
            BinlogError::Value(format!("{d} does not fit DECIMAL({precision},{scale})"))
        })?;
    let neg = r.is_negative();
    let abs = r.abs().mantissa;
    let (int_part, frac_part) = abs
        .checked_div_rem(pow10(scale as u32))
        .unwrap_or((I256::ZERO, I256::ZERO));
    let intg = (precision - scale) as u32;
    let (intg0, intg0x) = (intg / DIGITS_PER_WORD, intg % DIGITS_PER_WORD);
    let (frac0, frac0x) = (
        scale as u32 / DIGITS_PER_WORD,
        scale as u32 % DIGITS_PER_WORD,
    );
    let start = out.len();
    if intg0x > 0 {
        let lead = word(int_part, DIGITS_PER_WORD * intg0, intg0x);
        put_uint_be(out, lead, DIG2BYTES[intg0x as usize]);
    }
    for i in (0..intg0).rev() {
        put_uint_be(out, word(int_part, DIGITS_PER_WORD * i, DIGITS_PER_WORD), 4);
    }
    for i in 0..frac0 {
        let shift = scale as u32 - DIGITS_PER_WORD * (i + 1);
        put_uint_be(out, word(frac_part, shift, DIGITS_PER_WORD), 4);
    }
    if frac0x > 0 {
        let w = word(frac_part, 0, frac0x);
        put_uint_be(out, w, DIG2BYTES[frac0x as usize]);
    }
    if neg {
        for b in &mut out[start..] {
            *b = !*b;
        }
    }
    if out.len() > start {
        out[start] ^= 0x80;
    }
    Ok(())
}

pub(crate) fn unpack_decimal(c: &mut Cursor<'_>, precision: u8, scale: u8) -> Result<Decimal> {
    if scale > precision {
        return Err(BinlogError::decode("DECIMAL scale above precision"));
    }
    let size = decimal_bin_size(precision, scale);
    let mut b = c.bytes(size)?.to_vec();
    if b.is_empty() {
        return Ok(Decimal::new(0, scale));
    }
    let neg = b[0] & 0x80 == 0;
    b[0] ^= 0x80;
    if neg {
        for x in &mut b {
            *x = !*x;
        }
    }
    let intg = (precision - scale) as u32;
    let (intg0, intg0x) = (intg / DIGITS_PER_WORD, intg % DIGITS_PER_WORD);
    let (frac0, frac0x) = (
        scale as u32 / DIGITS_PER_WORD,
        scale as u32 % DIGITS_PER_WORD,
    );
    let overflow = || BinlogError::decode("DECIMAL value exceeds 76 digits");
    let mut bc = Cursor::new(&b);
    let mut m = I256::ZERO;
    let push = |m: &mut I256, v: u64, digits: u32| -> Result<()> {
        *m = m
            .checked_mul(pow10(digits))
            .and_then(|x| x.checked_add(I256::from(v)))
            .ok_or_else(overflow)?;
        Ok(())
    };
    if intg0x > 0 {
        let v = be_uint(bc.bytes(DIG2BYTES[intg0x as usize])?);
        push(&mut m, v, intg0x)?;
    }
    for _ in 0..intg0 {
        let v = be_uint(bc.bytes(4)?);
        push(&mut m, v, DIGITS_PER_WORD)?;
    }
    for _ in 0..frac0 {
        let v = be_uint(bc.bytes(4)?);
        push(&mut m, v, DIGITS_PER_WORD)?;
    }
    if frac0x > 0 {
        let v = be_uint(bc.bytes(DIG2BYTES[frac0x as usize])?);
        push(&mut m, v, frac0x)?;
    }
    let d = Decimal::new(m, scale);
    Ok(if neg { d.neg() } else { d })
}
