//! String functions beyond the basic ones in `mod.rs`, as MariaDB's: FIND_IN_SET,
//! SUBSTRING_INDEX, FORMAT, ELT, STRCMP, ORD, CHAR, UNHEX, TO_BASE64, FROM_BASE64, QUOTE,
//! BIT_LENGTH, REGEXP_REPLACE / REGEXP_SUBSTR / REGEXP_INSTR, UUID, SHA2, INET_ATON,
//! INET_NTOA, CONV, BIN, OCT, and (in `inet6.rs`) the IPv6 address functions. Arguments are non-NULL here unless said otherwise.

use onelog_types::{Collation, ColumnType, Value};

use super::MANY;

use crate::expr::{self, to_bytes, to_string, EvalResult};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextFn {
    FindInSet,
    SubstringIndex,
    Format,
    Elt,
    Strcmp,
    Ord,
    Char,
    Unhex,
    ToBase64,
    FromBase64,
    /// Takes NULL (gives the word NULL).
    Quote,
    BitLength,
    RegexpReplace,
    RegexpSubstr,
    RegexpInstr,
    Uuid,
    Sha2,
    InetAton,
    InetNtoa,
    /// The IPv6 functions (`functions/inet6.rs`); the IS_ ones take NULL.
    Inet6Aton,
    Inet6Ntoa,
    IsIpv4,
    IsIpv6,
    IsIpv4Compat,
    IsIpv4Mapped,
    Conv,
    Bin,
    Oct,
}

impl TextFn {
    /// By name: (function, min args, max args).
    pub fn lookup(name: &str) -> Option<(TextFn, usize, usize)> {
        use TextFn::*;
        Some(match name {
            "find_in_set" => (FindInSet, 2, 2),
            "substring_index" => (SubstringIndex, 3, 3),
            "format" => (Format, 2, 3),
            "elt" => (Elt, 2, MANY),
            "strcmp" => (Strcmp, 2, 2),
            "ord" => (Ord, 1, 1),
            "char" => (Char, 1, MANY),
            "unhex" => (Unhex, 1, 1),
            "to_base64" => (ToBase64, 1, 1),
            "from_base64" => (FromBase64, 1, 1),
            "quote" => (Quote, 1, 1),
            "bit_length" => (BitLength, 1, 1),
            "regexp_replace" => (RegexpReplace, 3, 3),
            "regexp_substr" => (RegexpSubstr, 2, 2),
            "regexp_instr" => (RegexpInstr, 2, 2),
            "uuid" => (Uuid, 0, 0),
            "sha2" => (Sha2, 2, 2),
            "inet_aton" => (InetAton, 1, 1),
            "inet_ntoa" => (InetNtoa, 1, 1),
            "inet6_aton" => (Inet6Aton, 1, 1),
            "inet6_ntoa" => (Inet6Ntoa, 1, 1),
            "is_ipv4" => (IsIpv4, 1, 1),
            "is_ipv6" => (IsIpv6, 1, 1),
            "is_ipv4_compat" => (IsIpv4Compat, 1, 1),
            "is_ipv4_mapped" => (IsIpv4Mapped, 1, 1),
            "conv" => (Conv, 3, 3),
            "bin" => (Bin, 1, 1),
            "oct" => (Oct, 1, 1),
            _ => return None,
        })
    }

    /// Whether each call may give another value (never folded).
    pub fn volatile(self) -> bool {
        self == TextFn::Uuid
    }
}

pub fn text_type(f: TextFn) -> ColumnType {
    use TextFn::*;
    let bigint = ColumnType::Int {
        bytes: 8,
        unsigned: false,
    };
    let int = ColumnType::Int {
        bytes: 4,
        unsigned: false,
    };
    match f {
        FindInSet | Strcmp | Ord | RegexpInstr | IsIpv4 | IsIpv6 | IsIpv4Compat | IsIpv4Mapped => {
            int
        }
        Inet6Aton => ColumnType::varchar(16, Collation::Binary),
        Inet6Ntoa => ColumnType::varchar(39, Collation::DEFAULT),
        BitLength | InetAton => bigint,
        Char | Unhex | FromBase64 => ColumnType::varchar(255, Collation::Binary),
        Uuid => ColumnType::char(36, Collation::DEFAULT),
        Sha2 => ColumnType::varchar(128, Collation::DEFAULT),
        _ => ColumnType::varchar(255, Collation::DEFAULT),
    }
}

/// Calls `f`; `a` holds the argument values (NULL only for QUOTE).
pub fn call_text(f: TextFn, a: &[Value]) -> EvalResult<Value> {
    use TextFn::*;
    let s = |i: usize| to_string(&a[i]);
    let int = |i: usize| expr::to_i64(&a[i]);
    Ok(match f {
        FindInSet => {
            let (needle, list) = (s(0), s(1));
            if needle.contains(',') {
                Value::Int(0)
            } else {
                let pos = list.split(',').position(|x| x == needle);
                Value::Int(pos.map_or(0, |p| p as i64 + 1))
            }
        }
        SubstringIndex => {
            let (text, delim, n) = (s(0), s(1), int(2));
            Value::str(&substring_index(&text, &delim, n))
        }
        Format => Value::str(&format_number(&a[0], int(1))),
        Elt => {
            let n = int(0);
            match usize::try_from(n).ok().filter(|&n| n >= 1 && n < a.len()) {
                Some(n) => a[n].clone(),
                None => Value::Null,
            }
        }
        Strcmp => Value::Int(match expr::compare(&a[0], &a[1], Collation::DEFAULT) {
            Some(std::cmp::Ordering::Less) => -1,
            Some(std::cmp::Ordering::Greater) => 1,
            _ => 0,
        }),
        Ord => {
            let b = to_bytes(&a[0]);
            let first = s(0).chars().next().map_or(0, |c| c.len_utf8()).min(b.len());
            let first = if first == 0 { b.len().min(1) } else { first };
            Value::Int(b[..first].iter().fold(0i64, |acc, &x| acc * 256 + x as i64))
        }
        Char => {
            let mut out = Vec::new();
            for v in a {
                let n = expr::to_i64(v) as u32;
                let bytes = n.to_be_bytes();
                let skip = bytes.iter().take_while(|&&x| x == 0).count().min(3);
                out.extend_from_slice(&bytes[skip..]);
            }
            Value::Bytes(out)
        }
        Unhex => match unhex(&s(0)) {
            Some(b) => Value::Bytes(b),
            None => Value::Null,
        },
        ToBase64 => Value::str(&to_base64(&to_bytes(&a[0]))),
        FromBase64 => match from_base64(&s(0)) {
            Some(b) => Value::Bytes(b),
            None => Value::Null,
        },
        Quote => match &a[0] {
            Value::Null => Value::str("NULL"),
            v => {
                let mut out = vec![b'\''];
                for &c in to_bytes(v).iter() {
                    match c {
                        b'\\' | b'\'' => out.extend_from_slice(&[b'\\', c]),
                        0 => out.extend_from_slice(b"\\0"),
                        26 => out.extend_from_slice(b"\\Z"),
                        c => out.push(c),
                    }
                }
                out.push(b'\'');
                Value::Bytes(out)
            }
        },
        BitLength => Value::Int(to_bytes(&a[0]).len() as i64 * 8),
        RegexpReplace | RegexpSubstr | RegexpInstr => {
            let re = regex::Regex::new(&s(1)).map_err(|e| {
                crate::sql_err(
                    onelog_types::code::ER_WRONG_ARGUMENTS,
                    format!("Got error '{e}' from regexp"),
                )
            })?;
            let text = s(0);
            match f {
                RegexpReplace => {
                    // MariaDB's (PCRE's) \\N back references are regex's ${N}.
                    let rep = backrefs(&s(2));
                    Value::str(&re.replace_all(&text, rep.as_str()))
                }
                RegexpSubstr => Value::str(re.find(&text).map_or("", |m| m.as_str())),
                _ => Value::Int(
                    re.find(&text)
                        .map_or(0, |m| text[..m.start()].chars().count() as i64 + 1),
                ),
            }
        }
        Uuid => Value::str(&uuid_v1()),
        Sha2 => {
            use sha2::Digest;
            let data = to_bytes(&a[0]);
            let hex = |d: &[u8]| crate::functions::hex(d);
            match int(1) {
                0 | 256 => Value::str(&hex(&sha2::Sha256::digest(&data))),
                224 => Value::str(&hex(&sha2::Sha224::digest(&data))),
                384 => Value::str(&hex(&sha2::Sha384::digest(&data))),
                512 => Value::str(&hex(&sha2::Sha512::digest(&data))),
                _ => Value::Null,
            }
        }
        InetAton => match inet_aton(&s(0)) {
            Some(n) => Value::Int(n as i64),
            None => Value::Null,
        },
        InetNtoa => {
            let n = expr::to_i128(&a[0]);
            if !(0..=u32::MAX as i128).contains(&n) {
                Value::Null
            } else {
                let b = (n as u32).to_be_bytes();
                Value::str(&format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3]))
            }
        }
        Inet6Aton | Inet6Ntoa | IsIpv4 | IsIpv6 | IsIpv4Compat | IsIpv4Mapped => {
            super::inet6::call(f, &a[0])
        }
        Conv => conv(&s(0), int(1), int(2)),
        Bin => conv(&s(0), 10, 2),
        Oct => conv(&s(0), 10, 8),
    })
}

fn substring_index(text: &str, delim: &str, n: i64) -> String {
    if delim.is_empty() || n == 0 {
        return String::new();
    }
    if n > 0 {
        let mut end = 0;
        for (count, (i, _)) in text.match_indices(delim).enumerate() {
            if count as i64 + 1 == n {
                return text[..i].to_string();
            }
            end = i;
        }
        let _ = end;
        text.to_string()
    } else {
        let idx: Vec<usize> = text.match_indices(delim).map(|(i, _)| i).collect();
        let k = usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX);
        if k > idx.len() {
            text.to_string()
        } else {
            text[idx[idx.len() - k] + delim.len()..].to_string()
        }
    }
}

/// FORMAT(x, d): rounded to `d` decimals (at most 38), with thousands separators.
fn format_number(x: &Value, d: i64) -> String {
    let d = d.clamp(0, 38) as u8;
    let dec = match x {
        Value::Double(f) => format!("{f:.p$}", p = d as usize).parse().ok(),
        other => expr::to_decimal(other),
    };
    let Some(dec) = dec.and_then(|v| v.rescale(d)) else {
        return String::new();
    };
    let text = dec.to_string();
    let (neg, digits) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.as_str()),
    };
    let (int, frac) = match digits.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (digits, None),
    };
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out += &grouped;
    if let Some(f) = frac {
        out.push('.');
        out += f;
    }
    out
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = s
        .chars()
        .map(|c| c.to_digit(16).map(|d| d as u8))
        .collect::<Option<_>>()?;
    // An odd count has a leading zero nibble.
    let mut out = Vec::with_capacity(digits.len().div_ceil(2));
    let mut it = digits.iter();
    if digits.len() % 2 == 1 {
        out.push(*it.next()?);
    }
    while let (Some(h), Some(l)) = (it.next(), it.next()) {
        out.push(h << 4 | l);
    }
    Some(out)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Base64 with a newline after every 76 characters, as MariaDB writes it.
fn to_base64(data: &[u8]) -> String {
    let mut out = String::new();
    let mut line = 0;
    for chunk in data.chunks(3) {
        if line == 76 {
            out.push('\n');
            line = 0;
        }
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(B64[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
        line += 4;
    }
    out
}

fn from_base64(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes() {
        let v = match c {
            b'=' => break,
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => B64.iter().position(|&x| x == c)? as u32,
        };
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// `\\N` back references → `${N}`; a literal `$` kept literal.
fn backrefs(rep: &str) -> String {
    let mut out = String::new();
    let mut it = rep.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\\' if it.peek().is_some_and(|d| d.is_ascii_digit()) => {
                out += &format!("${{{}}}", it.next().unwrap());
            }
            '$' => out += "$$",
            c => out.push(c),
        }
    }
    out
}

/// A version 1 (time-based) UUID as MariaDB's UUID() makes: 100 ns ticks since
/// 1582-10-15, a random clock sequence and a random node id with the multicast bit set.
fn uuid_v1() -> String {
    use rand::Rng;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let ticks = now.as_nanos() as u64 / 100 + 0x01B2_1DD2_1381_4000;
    let mut rng = rand::thread_rng();
    let clock: u16 = rng.gen::<u16>() & 0x3FFF | 0x8000;
    let node: u64 = rng.gen::<u64>() & 0xFFFF_FFFF_FFFF | 0x0100_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        ticks & 0xFFFF_FFFF,
        (ticks >> 32) & 0xFFFF,
        (ticks >> 48) & 0x0FFF | 0x1000,
        clock,
        node
    )
}

/// MySQL's INET_ATON: up to four dotted numbers of 0-255; fewer than four leave the last
/// one in the lowest byte (`127.1` is 127.0.0.1).
fn inet_aton(s: &str) -> Option<u32> {
    let (mut result, mut byte, mut dots) = (0u64, 0u64, 0);
    let mut last = ' ';
    for c in s.chars() {
        last = c;
        match c {
            '0'..='9' => {
                byte = byte * 10 + c.to_digit(10)? as u64;
                if byte > 255 {
                    return None;
                }
            }
            '.' => {
                dots += 1;
                if dots > 3 {
                    return None;
                }
                result = (result << 8) + byte;
                byte = 0;
            }
            _ => return None,
        }
    }
    if s.is_empty() || last == '.' {
        return None;
    }
    result <<= 8 * (3 - dots);
    Some(((result << 8) + byte) as u32)
}

/// CONV(n, from, to): `n` read in base |from| (a leading `-` negates, as a 64-bit two's
/// complement), written in base |to| (negative: signed), upper-case digits; bases 2-36.
fn conv(n: &str, from: i64, to: i64) -> Value {
    let (fb, tb) = (from.unsigned_abs(), to.unsigned_abs());
    if !(2..=36).contains(&fb) || !(2..=36).contains(&tb) {
        return Value::Null;
    }
    let t = n.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let mut v: u64 = 0;
    for c in digits.chars() {
        match c.to_digit(fb as u32) {
            Some(d) => v = v.wrapping_mul(fb).wrapping_add(d as u64),
            None => break,
        }
    }
    let (out_neg, mut mag) = if neg {
        if to < 0 {
            (true, v)
        } else {
            (false, v.wrapping_neg())
        }
    } else if to < 0 && (v as i64) < 0 {
        (true, (v as i64).unsigned_abs())
    } else {
        (false, v)
    };
    if mag == 0 {
        return Value::str("0");
    }
    let mut out = Vec::new();
    while mag > 0 {
        out.push(
            std::char::from_digit((mag % tb) as u32, tb as u32)
                .unwrap()
                .to_ascii_uppercase(),
        );
        mag /= tb;
    }
    if out_neg {
        out.push('-');
    }
    Value::str(&out.iter().rev().collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces() {
        assert_eq!(substring_index("a.b.c", ".", 2), "a.b");
        assert_eq!(substring_index("a.b.c", ".", -2), "b.c");
        assert_eq!(substring_index("a.b.c", ".", 5), "a.b.c");
        assert_eq!(
            format_number(&Value::Double(1234567.891), 2),
            "1,234,567.89"
        );
        assert_eq!(format_number(&Value::Int(-1234), 0), "-1,234");
        assert_eq!(unhex("4142"), Some(b"AB".to_vec()));
        assert_eq!(unhex("zz"), None);
        assert_eq!(to_base64(b"abc"), "YWJj");
        assert_eq!(from_base64("YWJjZA=="), Some(b"abcd".to_vec()));
        assert_eq!(inet_aton("10.0.0.1"), Some(167772161));
        assert_eq!(inet_aton("127.1"), Some(2130706433));
        assert_eq!(inet_aton("1.2.3."), None);
        assert_eq!(to_string(&conv("ff", 16, 10)), "255");
        assert_eq!(to_string(&conv("-1", 10, 16)), "FFFFFFFFFFFFFFFF");
        assert_eq!(to_string(&conv("5", 10, 2)), "101");
        assert_eq!(uuid_v1().len(), 36);
    }
}
