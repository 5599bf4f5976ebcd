//! MariaDB's IPv6 address functions: INET6_ATON, INET6_NTOA, IS_IPV4, IS_IPV6,
//! IS_IPV4_COMPAT and IS_IPV4_MAPPED, with the address text rules of the INET6 type
//! (`onelog_types::FixedBin`).

use onelog_types::{FixedBin, Value};

use crate::expr::to_bytes;

use super::text::TextFn;

/// IPv4 dotted-quad text (as INET6 reads an IPv4 tail).
fn ipv4(b: &[u8]) -> Option<[u8; 4]> {
    // `::a.b.c.d` is the IPv4-compatible address; its last 4 bytes are the IPv4 one.
    let mut text = b"::".to_vec();
    text.extend_from_slice(b);
    if b.contains(&b':') {
        return None;
    }
    let m = FixedBin::Inet6.parse_text(&text)?;
    Some([m[12], m[13], m[14], m[15]])
}

fn ipv6(b: &[u8]) -> Option<[u8; 16]> {
    FixedBin::Inet6.parse_text(b)
}

/// Calls one of the functions; `v` is the argument (NULL allowed: the IS_ functions give
/// 0 for it, the others NULL).
pub(super) fn call(f: TextFn, v: &Value) -> Value {
    let b = (!v.is_null()).then(|| to_bytes(v));
    let bool_of = |x: bool| Value::Int(x as i64);
    match f {
        TextFn::Inet6Aton => match b {
            Some(b) => match (ipv4(&b), ipv6(&b)) {
                (Some(a), _) => Value::Bytes(a.to_vec()),
                (None, Some(a)) => Value::Bytes(a.to_vec()),
                _ => Value::Null,
            },
            None => Value::Null,
        },
        TextFn::Inet6Ntoa => match b.as_deref() {
            Some(&[a, b, c, d]) => Value::str(&format!("{a}.{b}.{c}.{d}")),
            Some(x) if x.len() == 16 => {
                let m: [u8; 16] = x.try_into().expect("16 bytes");
                Value::str(&FixedBin::Inet6.format(&m))
            }
            _ => Value::Null,
        },
        TextFn::IsIpv4 => bool_of(b.is_some_and(|b| ipv4(&b).is_some())),
        TextFn::IsIpv6 => bool_of(b.is_some_and(|b| ipv6(&b).is_some())),
        // Binary 16-byte arguments (INET6_ATON results): ::a.b.c.d (not :: or ::1) and
        // ::ffff:a.b.c.d.
        TextFn::IsIpv4Compat => bool_of(b.is_some_and(|b| {
            b.len() == 16
                && b[..12].iter().all(|&x| x == 0)
                && u32::from_be_bytes([b[12], b[13], b[14], b[15]]) > 1
        })),
        TextFn::IsIpv4Mapped => bool_of(b.is_some_and(|b| {
            b.len() == 16 && b[..10].iter().all(|&x| x == 0) && b[10] == 0xff && b[11] == 0xff
        })),
        _ => Value::Null,
    }
}
