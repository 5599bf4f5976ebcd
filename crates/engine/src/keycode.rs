//! Order-preserving ("memcomparable") key encoding of values.
//!
//! Encoded keys compare bytewise in the same order as the values compare in SQL under the
//! column's collation, with NULL first. Every encoding is prefix-free, so a tuple of columns
//! can be encoded by concatenation and a prefix of columns is a byte prefix of the full key.
//!
//! Format of one value:
//! - NULL: `0x00`
//! - non-NULL: `0x01` followed by the payload:
//!   - signed integer: 8 bytes big-endian of `v XOR 1<<63`
//!   - unsigned integer: 8 bytes big-endian
//!   - FLOAT/DOUBLE: 8 bytes big-endian of the f64 bits, sign bit flipped for positives,
//!     all bits flipped for negatives (-0.0 is normalised to 0.0)
//!   - DECIMAL(p,s): the mantissa rescaled to s, 16 bytes big-endian of `m XOR 1<<127`
//!   - binary strings (BINARY, VARBINARY, BLOB) and utf8mb4_bin text: the bytes (for
//!     utf8mb4_bin without trailing spaces: PAD SPACE) in groups of 8 bytes (zero padded),
//!     each followed by a marker byte: `0xFF` after a full group when more data follows,
//!     `0xFF - pad` after the last group (`0xF7` for an empty tail group). Decodable.
//!   - utf8mb4_general_ci text: the collation weights (`onelog_types::collation`, 16 bits
//!     big-endian per character) of the value without trailing spaces, in groups of 4
//!     weights padded with space weights (0x0020), each followed by a marker comparing the
//!     rest of the string with spaces: `0x01` rest sorts before spaces, `0x03` after them,
//!     `0x02` nothing left (the last group). So `'a' = 'A' = 'a  '`, and `'a\t' < 'a'` as in
//!     MariaDB's PAD SPACE comparison. Not decodable: the key holds weights, not the value
//!     (readers take such values from the row, see [`decodable`]).
//!   - DATE: 4 bytes big-endian of `year << 9 | month << 5 | day`
//!   - DATETIME/TIMESTAMP: 8 bytes big-endian of the packed value
//!     `((((year*13+month)*32+day)*24+hour)*60+minute)*60+second)*10^6 + micro`
//!   - TIME: 8 bytes big-endian of signed microseconds `XOR 1<<63`
//!   - ENUM: the 1-based index, SET: the bitmap, BIT and YEAR: the value; 8 bytes
//!     big-endian (so an ENUM index orders as MariaDB sorts ENUMs). Decodable through the
//!     column's value list.
//!   - UUID and INET6: the 16 bytes of the sort form (`onelog_types::FixedBin`: a
//!     time-based UUID with its segments reversed, as MariaDB orders UUIDs). Decodable.

use onelog_types::{Collation, ColumnType, Date, DateTime, Decimal, Time, Value, I256};

/// The widest DECIMAL precision whose keys hold an i128 (16 bytes); wider ones take 32.
const NARROW_DECIMAL: u8 = 38;

use crate::error::{EngineError, Result};

const NULL_TAG: u8 = 0x00;
const VALUE_TAG: u8 = 0x01;
const GROUP: usize = 8;
const MARKER: u8 = 0xFF;
/// Weights per group of a general_ci value, and the group markers.
const CI_GROUP: usize = 4;
const CI_LESS: u8 = 0x01;
const CI_END: u8 = 0x02;
const CI_GREATER: u8 = 0x03;
const SPACE_WEIGHT: u16 = 0x20;

/// Appends the encoding of `v` (a value of column type `ty`) to `out`.
pub fn encode(out: &mut Vec<u8>, ty: &ColumnType, v: &Value) -> Result<()> {
    if v.is_null() {
        out.push(NULL_TAG);
        return Ok(());
    }
    out.push(VALUE_TAG);
    if let Some(n) = onelog_types::enum_set_number(ty, v) {
        out.extend_from_slice(&n.to_be_bytes());
        return Ok(());
    }
    match (ty, v) {
        (ColumnType::Uuid | ColumnType::Inet6, Value::Bytes(b)) => {
            let f = ty.fixed_bin().expect("matched");
            let m = f.parse_text(b).ok_or_else(|| bad(ty, v))?;
            out.extend_from_slice(&f.sort_form(&m))
        }
        (ColumnType::Bit { .. } | ColumnType::Year, Value::UInt(u)) => {
            out.extend_from_slice(&u.to_be_bytes())
        }
        (ColumnType::Bit { .. } | ColumnType::Year, Value::Int(i)) => {
            let u = u64::try_from(*i).map_err(|_| bad(ty, v))?;
            out.extend_from_slice(&u.to_be_bytes())
        }
        (
            ColumnType::Int {
                unsigned: false, ..
            },
            Value::Int(i),
        ) => out.extend_from_slice(&((*i as u64) ^ (1 << 63)).to_be_bytes()),
        (
            ColumnType::Int {
                unsigned: false, ..
            },
            Value::UInt(u),
        ) => {
            let i = i64::try_from(*u).map_err(|_| bad(ty, v))?;
            out.extend_from_slice(&((i as u64) ^ (1 << 63)).to_be_bytes())
        }
        (ColumnType::Int { unsigned: true, .. }, Value::UInt(u)) => {
            out.extend_from_slice(&u.to_be_bytes())
        }
        (ColumnType::Int { unsigned: true, .. }, Value::Int(i)) => {
            let u = u64::try_from(*i).map_err(|_| bad(ty, v))?;
            out.extend_from_slice(&u.to_be_bytes())
        }
        (ColumnType::Float | ColumnType::Double, Value::Double(d)) => {
            let d = if *d == 0.0 { 0.0 } else { *d };
            let bits = d.to_bits();
            let enc = if bits >> 63 == 1 {
                !bits
            } else {
                bits | (1 << 63)
            };
            out.extend_from_slice(&enc.to_be_bytes())
        }
        (ColumnType::Decimal { precision, scale }, Value::Decimal(d)) => {
            // DECIMAL(38) and narrower: 16 bytes; wider: 32. Two's complement with the
            // sign bit flipped sorts bytewise in numeric order.
            let m = d.rescale(*scale).ok_or_else(|| bad(ty, v))?.mantissa;
            if *precision <= NARROW_DECIMAL {
                let m = m.to_i128().ok_or_else(|| bad(ty, v))?;
                out.extend_from_slice(&((m as u128) ^ (1 << 127)).to_be_bytes())
            } else {
                let mut b = m.to_be_bytes();
                b[0] ^= 0x80;
                out.extend_from_slice(&b)
            }
        }
        (t, Value::Bytes(b)) if t.is_string() => match t.collation() {
            Some(Collation::Utf8mb4GeneralCi) => encode_weights(out, trim_trailing_spaces(b)),
            Some(Collation::Binary) => encode_bytes(out, b),
            _ => encode_bytes(out, trim_trailing_spaces(b)),
        },
        (ColumnType::Date, Value::Date(d)) => out.extend_from_slice(&pack_date(d).to_be_bytes()),
        (ColumnType::DateTime { .. } | ColumnType::Timestamp { .. }, Value::DateTime(dt)) => {
            out.extend_from_slice(&pack_datetime(dt).to_be_bytes())
        }
        (ColumnType::Time { .. }, Value::Time(t)) => {
            out.extend_from_slice(&((t.to_micros() as u64) ^ (1 << 63)).to_be_bytes())
        }
        _ => return Err(bad(ty, v)),
    }
    Ok(())
}

fn bad(ty: &ColumnType, v: &Value) -> EngineError {
    EngineError::Other(format!("value {v:?} does not match column type {ty:?}"))
}

pub use onelog_types::collation::trim_trailing_spaces;

/// Whether values of type `ty` can be decoded from their key (all but general_ci text).
pub fn decodable(ty: &ColumnType) -> bool {
    !ty.is_ci() || ty.is_enum_or_set()
}

/// general_ci: groups of `CI_GROUP` weights, space padded, each followed by how the rest of
/// the string compares with spaces (see the module documentation).
fn encode_weights(out: &mut Vec<u8>, b: &[u8]) {
    let w: Vec<u16> = Collation::weights(b).collect();
    let mut i = 0;
    loop {
        for k in i..i + CI_GROUP {
            out.extend_from_slice(&w.get(k).copied().unwrap_or(SPACE_WEIGHT).to_be_bytes());
        }
        i += CI_GROUP;
        // `b` has no trailing spaces, so a non-empty rest holds a non-space weight.
        match w
            .get(i..)
            .and_then(|r| r.iter().find(|&&x| x != SPACE_WEIGHT))
        {
            None => {
                out.push(CI_END);
                return;
            }
            Some(&x) if x < SPACE_WEIGHT => out.push(CI_LESS),
            Some(_) => out.push(CI_GREATER),
        }
    }
}

fn encode_bytes(out: &mut Vec<u8>, b: &[u8]) {
    let mut chunks = b.chunks_exact(GROUP);
    for c in chunks.by_ref() {
        out.extend_from_slice(c);
        out.push(MARKER);
    }
    let rest = chunks.remainder();
    out.extend_from_slice(rest);
    let pad = GROUP - rest.len();
    out.extend(std::iter::repeat_n(0u8, pad));
    out.push(MARKER - pad as u8);
}

fn pack_date(d: &Date) -> u32 {
    (d.year as u32) << 9 | (d.month as u32) << 5 | d.day as u32
}

fn pack_datetime(dt: &DateTime) -> u64 {
    let d = &dt.date;
    let secs =
        ((((d.year as u64 * 13 + d.month as u64) * 32 + d.day as u64) * 24 + dt.hour as u64) * 60
            + dt.minute as u64)
            * 60
            + dt.second as u64;
    secs * 1_000_000 + dt.micro as u64
}

fn unpack_datetime(p: u64) -> DateTime {
    let micro = (p % 1_000_000) as u32;
    let mut s = p / 1_000_000;
    let second = (s % 60) as u8;
    s /= 60;
    let minute = (s % 60) as u8;
    s /= 60;
    let hour = (s % 24) as u8;
    s /= 24;
    let day = (s % 32) as u8;
    s /= 32;
    let month = (s % 13) as u8;
    let year = (s / 13) as u16;
    DateTime {
        date: Date { year, month, day },
        hour,
        minute,
        second,
        micro,
    }
}

/// Decodes one value of type `ty` from the front of `input`, advancing it.
pub fn decode(input: &mut &[u8], ty: &ColumnType) -> Result<Value> {
    let tag = take(input, 1)?[0];
    if tag == NULL_TAG {
        return Ok(Value::Null);
    }
    if tag != VALUE_TAG {
        return Err(corrupt());
    }
    Ok(match ty {
        ColumnType::Int {
            unsigned: false, ..
        } => Value::Int((be_u64(take(input, 8)?) ^ (1 << 63)) as i64),
        ColumnType::Int { unsigned: true, .. } | ColumnType::Bit { .. } | ColumnType::Year => {
            Value::UInt(be_u64(take(input, 8)?))
        }
        ColumnType::Uuid | ColumnType::Inet6 => {
            let f = ty.fixed_bin().expect("matched");
            let s: [u8; 16] = take(input, 16)?.try_into().unwrap();
            Value::Bytes(f.format(&f.from_sort_form(&s)).into_bytes())
        }
        ColumnType::Enum { .. } | ColumnType::Set { .. } => {
            let n = be_u64(take(input, 8)?);
            onelog_types::enum_set_text(ty, n).unwrap_or(Value::Null)
        }
        ColumnType::Float | ColumnType::Double => {
            let enc = be_u64(take(input, 8)?);
            let bits = if enc >> 63 == 1 {
                enc & !(1 << 63)
            } else {
                !enc
            };
            Value::Double(f64::from_bits(bits))
        }
        ColumnType::Decimal { precision, scale } if *precision <= NARROW_DECIMAL => {
            let b: [u8; 16] = take(input, 16)?.try_into().unwrap();
            let m = (u128::from_be_bytes(b) ^ (1 << 127)) as i128;
            Value::Decimal(Decimal::new(m, *scale))
        }
        ColumnType::Decimal { scale, .. } => {
            let mut b: [u8; 32] = take(input, 32)?.try_into().unwrap();
            b[0] ^= 0x80;
            Value::Decimal(Decimal::new(I256::from_be_bytes(b), *scale))
        }
        t if t.is_ci() => {
            return Err(EngineError::Other(
                "general_ci keys hold weights: the value is not decodable".into(),
            ))
        }
        t if t.is_string() => {
            let mut out = Vec::new();
            loop {
                let g = take(input, GROUP + 1)?;
                let marker = g[GROUP];
                if marker == MARKER {
                    out.extend_from_slice(&g[..GROUP]);
                } else {
                    let pad = (MARKER - marker) as usize;
                    if pad > GROUP {
                        return Err(corrupt());
                    }
                    out.extend_from_slice(&g[..GROUP - pad]);
                    break;
                }
            }
            Value::Bytes(out)
        }
        ColumnType::Date => {
            let p = u32::from_be_bytes(take(input, 4)?.try_into().unwrap());
            Value::Date(Date {
                year: (p >> 9) as u16,
                month: ((p >> 5) & 15) as u8,
                day: (p & 31) as u8,
            })
        }
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            Value::DateTime(unpack_datetime(be_u64(take(input, 8)?)))
        }
        ColumnType::Time { .. } => Value::Time(Time::from_micros(
            (be_u64(take(input, 8)?) ^ (1 << 63)) as i64,
        )),
        _ => return Err(corrupt()),
    })
}

/// Whether the encoded value at the front of `input` is NULL.
pub fn is_null(input: &[u8]) -> bool {
    input.first() == Some(&NULL_TAG)
}

/// Skips one encoded value of type `ty` at the front of `input` (any type, including
/// general_ci text, whose values [`decode`] cannot return).
pub fn skip(input: &mut &[u8], ty: &ColumnType) -> Result<()> {
    if decodable(ty) {
        return decode(input, ty).map(|_| ());
    }
    if take(input, 1)?[0] == NULL_TAG {
        return Ok(());
    }
    loop {
        match take(input, CI_GROUP * 2 + 1)?[CI_GROUP * 2] {
            CI_END => return Ok(()),
            CI_LESS | CI_GREATER => {}
            _ => return Err(corrupt()),
        }
    }
}

fn be_u64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b.try_into().unwrap())
}

fn take<'a>(input: &mut &'a [u8], n: usize) -> Result<&'a [u8]> {
    if input.len() < n {
        return Err(corrupt());
    }
    let (a, b) = input.split_at(n);
    *input = b;
    Ok(a)
}

fn corrupt() -> EngineError {
    EngineError::Corrupt("bad key encoding".into())
}

/// The smallest byte string greater than every string that starts with `prefix`
/// (None when there is none: all bytes 0xFF).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut v = prefix.to_vec();
    while let Some(last) = v.pop() {
        if last != 0xFF {
            v.push(last + 1);
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    fn enc(ty: ColumnType, v: Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode(&mut out, &ty, &v).unwrap();
        let mut s = &out[..];
        skip(&mut s, &ty).unwrap();
        assert!(s.is_empty());
        if !decodable(&ty) {
            return out;
        }
        let mut s = &out[..];
        let back = decode(&mut s, &ty).unwrap();
        assert!(s.is_empty());
        if let (Value::Bytes(a), Value::Bytes(b)) = (&v, &back) {
            if ty.is_binary() {
                assert_eq!(a, b);
            } else {
                assert_eq!(trim_trailing_spaces(a), &b[..]);
            }
        } else {
            assert_eq!(v, back);
        }
        out
    }

    #[test]
    fn integers_order() {
        let ty = ColumnType::Int {
            bytes: 8,
            unsigned: false,
        };
        let mut rng = StdRng::seed_from_u64(onelog_types::seed::test_seed("integers_order"));
        let mut vals: Vec<i64> = (0..500).map(|_| rng.gen()).collect();
        vals.extend([i64::MIN, -1, 0, 1, i64::MAX]);
        for w in vals.windows(2) {
            let (a, b) = (enc(ty, Value::Int(w[0])), enc(ty, Value::Int(w[1])));
            assert_eq!(a.cmp(&b), w[0].cmp(&w[1]));
        }
        assert!(enc(ty, Value::Null) < enc(ty, Value::Int(i64::MIN)));
    }

    #[test]
    fn doubles_order() {
        let vals = [
            f64::NEG_INFINITY,
            -1e10,
            -1.5,
            -0.0,
            0.0,
            1e-300,
            2.5,
            1e300,
        ];
        for w in vals.windows(2) {
            let a = enc(ColumnType::Double, Value::Double(w[0]));
            let b = enc(ColumnType::Double, Value::Double(w[1]));
            assert!(a <= b, "{} {}", w[0], w[1]);
        }
    }

    #[test]
    fn strings_order_and_prefix_free() {
        let ty = ColumnType::varchar(100, Collation::Binary);
        let words: Vec<&[u8]> = vec![
            b"",
            b"\0",
            b"a",
            b"a\0",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefghi",
            b"b",
        ];
        for w in words.windows(2) {
            let a = enc(ty, Value::Bytes(w[0].to_vec()));
            let b = enc(ty, Value::Bytes(w[1].to_vec()));
            assert!(a < b, "{:?} {:?}", w[0], w[1]);
            assert!(!b.starts_with(&a));
        }
        let text = ColumnType::char(10, Collation::Utf8mb4Bin);
        assert_eq!(enc(text, Value::str("ab  ")), enc(text, Value::str("ab")));
    }

    #[test]
    fn general_ci_keys_order_as_the_collation_compares() {
        let ty = ColumnType::varchar(100, Collation::Utf8mb4GeneralCi);
        let alphabet = [
            "a", "A", "á", "b", " ", "\t", "ß", "s", "😀", "\u{fffd}", "z",
        ];
        let mut rng = StdRng::seed_from_u64(onelog_types::seed::test_seed(
            "general_ci_keys_order_as_the_collation_compares",
        ));
        let mut words: Vec<String> = vec![String::new(), " ".into(), "a".into(), "a\t".into()];
        for _ in 0..300 {
            let n = rng.gen_range(0..12);
            words.push(
                (0..n)
                    .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                    .collect(),
            );
        }
        let keys: Vec<Vec<u8>> = words.iter().map(|w| enc(ty, Value::str(w))).collect();
        for (i, a) in words.iter().enumerate() {
            for (j, b) in words.iter().enumerate() {
                let want = Collation::Utf8mb4GeneralCi.compare(a.as_bytes(), b.as_bytes());
                assert_eq!(keys[i].cmp(&keys[j]), want, "{a:?} {b:?}");
                if i != j && keys[i] != keys[j] {
                    assert!(!keys[j].starts_with(&keys[i]), "{a:?} {b:?}");
                }
            }
        }
        assert_eq!(
            enc(ty, Value::str("Straße ")),
            enc(ty, Value::str("STRASE"))
        );
        assert!(enc(ty, Value::str("a\t")) < enc(ty, Value::str("a")));
        assert!(enc(ty, Value::Null) < enc(ty, Value::str("")));
        let mut s = &enc(ty, Value::str("x"))[..];
        assert!(decode(&mut s, &ty).is_err());
    }

    #[test]
    fn decimals_and_temporals() {
        let ty = ColumnType::Decimal {
            precision: 10,
            scale: 2,
        };
        let a = enc(ty, Value::Decimal("-3.5".parse().unwrap()));
        let b = enc(ty, Value::Decimal("2.25".parse().unwrap()));
        assert!(a < b);
        let d1 = DateTime::from_unix(1_000_000, 1);
        let d2 = DateTime::from_unix(1_000_000, 2);
        assert!(
            enc(ColumnType::DateTime { fsp: 6 }, Value::DateTime(d1))
                < enc(ColumnType::DateTime { fsp: 6 }, Value::DateTime(d2))
        );
        let t1 = Time::from_micros(-5);
        let t2 = Time::from_micros(3);
        assert!(
            enc(ColumnType::Time { fsp: 6 }, Value::Time(t1))
                < enc(ColumnType::Time { fsp: 6 }, Value::Time(t2))
        );
        enc(ColumnType::Date, Value::Date(d1.date));
    }

    #[test]
    fn successor() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"\xff"), None);
    }
}
