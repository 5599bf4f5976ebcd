//! Packing ENUM, SET and BIT values into row images.
//!
//! Format: ENUM and SET columns are `STRING` in the table map with the real type in the
//! first metadata byte and the packed length in the second; the value is the ENUM's 1-based
//! index (1 or 2 bytes) or the SET's bitmap (1, 2, 3, 4 or 8 bytes), little-endian. BIT(n)
//! has metadata `n % 8, n / 8` and its value is `(n + 7) / 8` bytes big-endian. Values come
//! as the number (`UInt`) or, for ENUM/SET, as the text, mapped through the column's list.
//! UUID and INET6 are `STRING` with metadata `0xfe, 16` (BINARY(16)): the value is the
//! 16-byte memory form (`onelog_types::FixedBin`) without its trailing zero bytes.

use onelog_types::{type_code as tc, Collation, Value};

use crate::codec::{put_uint_be, put_uint_le};
use crate::error::Result;
use crate::rows::{bad, int_of, ColumnSpec};

/// Packs an ENUM or SET value of a STRING column whose real type is ENUM or SET.
/// (A UUID/INET6 column's value goes to [`pack_fixed_bin`].)
pub(crate) fn pack_enum_set(out: &mut Vec<u8>, spec: &ColumnSpec, v: &Value) -> Result<()> {
    if spec.fixed.is_some() {
        return pack_fixed_bin(out, spec, v);
    }
    let (real, len) = spec.string_real_type();
    let n = match v {
        Value::Bytes(b) => {
            let Some(elems) = spec.elems else {
                return Err(bad(spec, v, "ENUM/SET text without the column's values"));
            };
            // The stored text is made of the column's own values, byte for byte.
            if real == tc::ENUM {
                elems.enum_number(b, Collation::Utf8mb4Bin)
            } else {
                elems.set_number(b, Collation::Utf8mb4Bin)
            }
        }
        _ => int_of(spec, v)? as u64,
    };
    if !matches!(real, tc::ENUM | tc::SET) || !matches!(len, 1..=4 | 8) {
        return Err(bad(spec, v, "not an ENUM or SET column"));
    }
    put_uint_le(out, n, len as usize);
    Ok(())
}

/// Packs a BIT value.
pub(crate) fn pack_bit(out: &mut Vec<u8>, spec: &ColumnSpec, v: &Value) -> Result<()> {
    let n = (spec.meta & 0xff) as usize + usize::from(spec.meta >> 8 != 0);
    let bits = (spec.meta & 0xff) as u32 * 8 + (spec.meta >> 8) as u32;
    let x = match v {
        Value::Bytes(b) if b.len() <= 8 => b.iter().fold(0u64, |a, &c| a << 8 | c as u64),
        _ => int_of(spec, v)? as u64,
    };
    if !(1..=8).contains(&n) || (bits < 64 && x >> bits != 0) {
        return Err(bad(spec, v, "BIT value wider than the column"));
    }
    put_uint_be(out, x, n);
    Ok(())
}

/// Packs a UUID or INET6 value (its canonical text) as MariaDB logs it: the 16-byte memory
/// form as a BINARY(16) string, trailing zero bytes stripped, after a one-byte length.
pub(crate) fn pack_fixed_bin(out: &mut Vec<u8>, spec: &ColumnSpec, v: &Value) -> Result<()> {
    let (Some(f), Some(b)) = (spec.fixed, v.as_bytes()) else {
        return Err(bad(spec, v, "not a UUID/INET6 value"));
    };
    let m = f
        .parse_text(b)
        .ok_or_else(|| bad(spec, v, "not a UUID/INET6 value"))?;
    let len = m.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
    out.push(len as u8);
    out.extend_from_slice(&m[..len]);
    Ok(())
}
