//! UUID and INET6: MariaDB's 16-byte fixed binary types.
//!
//! A value of either type is held as its canonical text (`Value::Bytes`): UUID as 36
//! lowercase characters `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, INET6 as MariaDB prints
//! an IPv6 address; rows store that text. Two byte forms exist beside it:
//!
//! - memory form: the 16 bytes in text order (UUID) or network order (INET6). The binlog
//!   logs it as a binary `CHAR(16)` (MYSQL_TYPE_STRING, meta 0xfe10, trailing zero bytes
//!   stripped), as MariaDB does;
//! - sort form (UUID only): for a time-based UUID (version 1..5, variant bit set) the
//!   segments reversed, `nnnnnnnnnnnn-vsss-Vhhh-mmmm-llllllll`, so that index order follows
//!   time; other UUIDs keep the memory form. Keys hold it and comparisons compare it;
//! - INET6's sort form is its memory form.

use std::fmt::Write;

/// Which of the two types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FixedBin {
    Uuid,
    Inet6,
}

/// (memory position, sort position, length) of UUID's five segments.
const UUID_SEGMENTS: [(usize, usize, usize); 5] =
    [(0, 12, 4), (4, 10, 2), (6, 8, 2), (8, 6, 2), (10, 0, 6)];

impl FixedBin {
    /// The type's SQL name, as error messages and SHOW CREATE TABLE spell it.
    pub fn name(self) -> &'static str {
        match self {
            FixedBin::Uuid => "uuid",
            FixedBin::Inet6 => "inet6",
        }
    }

    /// Characters of the longest text form (the result-set column length).
    pub fn char_len(self) -> u32 {
        match self {
            FixedBin::Uuid => 36,
            FixedBin::Inet6 => 39,
        }
    }

    /// The memory form of a value given as text (or, for a 16-byte string that is not
    /// valid text, as its memory form already), None when it is neither.
    pub fn parse(self, b: &[u8]) -> Option<[u8; 16]> {
        let text = match self {
            FixedBin::Uuid => parse_uuid(b),
            FixedBin::Inet6 => parse_inet6(b),
        };
        text.or_else(|| <[u8; 16]>::try_from(b).ok())
    }

    /// The memory form of a value given as text only.
    pub fn parse_text(self, b: &[u8]) -> Option<[u8; 16]> {
        match self {
            FixedBin::Uuid => parse_uuid(b),
            FixedBin::Inet6 => parse_inet6(b),
        }
    }

    /// The canonical text of a memory form.
    pub fn format(self, m: &[u8; 16]) -> String {
        match self {
            FixedBin::Uuid => format_uuid(m),
            FixedBin::Inet6 => format_inet6(m),
        }
    }

    /// The canonical text of a value given as text or memory form (None when invalid).
    pub fn canonical(self, b: &[u8]) -> Option<String> {
        self.parse(b).map(|m| self.format(&m))
    }

    /// The sort form of a memory form (see the module comment).
    pub fn sort_form(self, m: &[u8; 16]) -> [u8; 16] {
        match self {
            FixedBin::Uuid if uuid_needs_swap(m) => {
                let mut out = [0u8; 16];
                for (mem, rec, len) in UUID_SEGMENTS {
                    out[rec..rec + len].copy_from_slice(&m[mem..mem + len]);
                }
                out
            }
            _ => *m,
        }
    }

    /// The memory form of a sort form.
    pub fn from_sort_form(self, s: &[u8; 16]) -> [u8; 16] {
        match self {
            FixedBin::Uuid if (s[6] as i8 as i32) & -(s[8] as i8 as i32) & 0x80 != 0 => {
                let mut out = [0u8; 16];
                for (mem, rec, len) in UUID_SEGMENTS {
                    out[mem..mem + len].copy_from_slice(&s[rec..rec + len]);
                }
                out
            }
            _ => *s,
        }
    }

    /// The memory form padded from a binlog image (trailing zero bytes are not logged).
    pub fn from_logged(b: &[u8]) -> Option<[u8; 16]> {
        if b.len() > 16 {
            return None;
        }
        let mut m = [0u8; 16];
        m[..b.len()].copy_from_slice(b);
        Some(m)
    }
}

/// A time-based UUID (version 1..5 with the variant bit set) sorts by its swapped form.
fn uuid_needs_swap(m: &[u8; 16]) -> bool {
    m[6] > 0 && m[6] < 0x60 && m[8] & 0x80 != 0
}

fn hex_digit(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// UUID text: 32 hex digits; hyphens anywhere, any number of them, but not first or last.
fn parse_uuid(b: &[u8]) -> Option<[u8; 16]> {
    if b.len() < 32 {
        return None;
    }
    let mut out = [0u8; 16];
    let mut i = 0;
    let skip = |i: &mut usize| {
        while *i < b.len() && b[*i] == b'-' {
            *i += 1;
        }
    };
    for (k, o) in out.iter_mut().enumerate() {
        let hi = hex_digit(*b.get(i)?)?;
        i += 1;
        skip(&mut i);
        let lo = hex_digit(*b.get(i)?)?;
        i += 1;
        *o = hi << 4 | lo;
        if k + 1 < 16 {
            skip(&mut i);
        }
    }
    // Trailing input, or the impossible combination version >= 8 with variant 0.
    if i < b.len() || (out[6] as i8 as i32) & -(out[8] as i8 as i32) & 0x80 != 0 {
        return None;
    }
    Some(out)
}

fn format_uuid(m: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in m.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Dotted-quad IPv4 text (7 to 15 characters) as MariaDB's INET6 parser reads it.
fn parse_ipv4(b: &[u8]) -> Option<[u8; 4]> {
    if !(7..=15).contains(&b.len()) {
        return None;
    }
    let mut out = [0u8; 4];
    let (mut value, mut digits, mut dots) = (0u32, 0, 0);
    for &c in b.iter().take_while(|&&c| c != 0) {
        match c {
            b'0'..=b'9' => {
                digits += 1;
                value = value * 10 + (c - b'0') as u32;
                if digits > 3 || value > 255 {
                    return None;
                }
            }
            b'.' => {
                if digits == 0 || dots == 3 {
                    return None;
                }
                out[dots] = value as u8;
                dots += 1;
                (value, digits) = (0, 0);
            }
            _ => return None,
        }
    }
    if dots != 3 || digits == 0 {
        return None;
    }
    out[3] = value as u8;
    Some(out)
}

/// IPv6 text (2 to 39 characters): hex groups, one `::` gap, an optional trailing IPv4.
fn parse_inet6(b: &[u8]) -> Option<[u8; 16]> {
    if !(2..=39).contains(&b.len()) {
        return None;
    }
    let mut out = [0u8; 16];
    let mut dst = 0usize;
    let mut gap: Option<usize> = None;
    let mut p = 0;
    if b[0] == b':' {
        if b[1] != b':' {
            return None;
        }
        p = 1;
    }
    let (mut group_start, mut chars, mut value) = (p, 0, 0u16);
    while p < b.len() && b[p] != 0 {
        let c = b[p];
        p += 1;
        match c {
            b':' => {
                group_start = p;
                if chars == 0 {
                    if gap.is_some() {
                        return None;
                    }
                    gap = Some(dst);
                    continue;
                }
                if p >= b.len() || b[p] == 0 || dst + 2 > 16 {
                    return None;
                }
                out[dst..dst + 2].copy_from_slice(&value.to_be_bytes());
                dst += 2;
                (chars, value) = (0, 0);
            }
            b'.' => {
                if dst + 4 > 16 {
                    return None;
                }
                out[dst..dst + 4].copy_from_slice(&parse_ipv4(&b[group_start..])?);
                dst += 4;
                chars = 0;
                break;
            }
            _ => {
                let d = hex_digit(c)?;
                if chars >= 4 {
                    return None;
                }
                value = value << 4 | d as u16;
                chars += 1;
            }
        }
    }
    if chars > 0 {
        if dst + 2 > 16 {
            return None;
        }
        out[dst..dst + 2].copy_from_slice(&value.to_be_bytes());
        dst += 2;
    }
    if let Some(g) = gap {
        if dst == 16 {
            return None;
        }
        let moved = dst - g;
        for i in 1..=moved {
            out[16 - i] = out[dst - i];
            out[dst - i] = 0;
        }
        dst = 16;
    }
    (dst == 16).then_some(out)
}

/// IPv6 text as MariaDB prints it: the longest run of zero groups (even a single one, the
/// first of equals) as `::`, and IPv4-compatible / IPv4-mapped addresses with a dotted
/// IPv4 tail.
fn format_inet6(m: &[u8; 16]) -> String {
    let words: Vec<u16> = m
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    let (mut gap_pos, mut gap_len) = (usize::MAX, 0);
    let (mut run_pos, mut run_len) = (usize::MAX, 0);
    for (i, &w) in words.iter().enumerate() {
        if w != 0 {
            if run_pos != usize::MAX && run_len > gap_len {
                (gap_pos, gap_len) = (run_pos, run_len);
            }
            (run_pos, run_len) = (usize::MAX, 0);
        } else if run_pos != usize::MAX {
            run_len += 1;
        } else {
            (run_pos, run_len) = (i, 1);
        }
    }
    if run_pos != usize::MAX && run_len > gap_len {
        (gap_pos, gap_len) = (run_pos, run_len);
    }
    let mut s = String::with_capacity(39);
    let mut i = 0;
    while i < 8 {
        if i == gap_pos {
            if i == 0 {
                s.push(':');
            }
            s.push(':');
            i += gap_len;
            continue;
        }
        if i == 6 && gap_pos == 0 && (gap_len == 6 || (gap_len == 5 && words[5] == 0xffff)) {
            let _ = write!(s, "{}.{}.{}.{}", m[12], m[13], m[14], m[15]);
            break;
        }
        let _ = write!(s, "{:x}", words[i]);
        if i + 1 != 8 {
            s.push(':');
        }
        i += 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inet(s: &str) -> Option<String> {
        FixedBin::Inet6
            .parse_text(s.as_bytes())
            .map(|m| format_inet6(&m))
    }

    #[test]
    fn uuid_text_forms() {
        let u = FixedBin::Uuid;
        let want = Some("123e4567-e89b-12d3-a456-426655440000".to_string());
        assert_eq!(u.canonical(b"123E4567E89B12D3A456426655440000"), want);
        assert_eq!(u.canonical(b"123e4567e89b-12d3-a456-4266554400-00"), want);
        assert_eq!(u.canonical(b"1-23e4567e89b12d3a456426655440000"), want);
        assert_eq!(u.canonical(b"-123e4567e89b12d3a456426655440000"), None);
        assert_eq!(u.canonical(b"123e4567e89b12d3a456426655440000-"), None);
        assert_eq!(u.canonical(b"{123e4567-e89b-12d3-a456-426655440000}"), None);
        assert_eq!(u.canonical(b"123e4567-e89b-12d3-a456-42665544000"), None);
    }

    #[test]
    fn uuid_sort_form_round_trips() {
        let u = FixedBin::Uuid;
        let m = u
            .parse_text(b"11223344-5566-1788-99aa-bbccddeeff00")
            .unwrap();
        let s = u.sort_form(&m);
        assert_eq!(hex(&s), "bbccddeeff0099aa1788556611223344");
        assert_eq!(u.from_sort_form(&s), m);
        // Not time-based: unchanged.
        let m = u
            .parse_text(b"11223344-5566-7788-19aa-bbccddeeff00")
            .unwrap();
        assert_eq!(u.sort_form(&m), m);
        assert_eq!(u.from_sort_form(&m), m);
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn inet6_text_forms() {
        assert_eq!(inet("::1").as_deref(), Some("::1"));
        assert_eq!(inet("::").as_deref(), Some("::"));
        assert_eq!(
            inet("2001:DB8::FF00:42:8329").as_deref(),
            Some("2001:db8::ff00:42:8329")
        );
        assert_eq!(inet("1:0:3:4:5:6:7:8").as_deref(), Some("1::3:4:5:6:7:8"));
        assert_eq!(inet("::ffff:1.2.3.4").as_deref(), Some("::ffff:1.2.3.4"));
        assert_eq!(inet("::1.2.3.4").as_deref(), Some("::1.2.3.4"));
        assert_eq!(inet("192.0.2.1"), None);
        assert_eq!(inet("1::2::3"), None);
        assert_eq!(inet(":1::2"), None);
        assert_eq!(inet("1:2:3:4:5:6:7:8:9"), None);
        assert_eq!(inet("1:2:3:4:5:6:7:8::"), None);
        assert_eq!(inet("12345::"), None);
        assert_eq!(inet("1::3:4:5:6:7:8 "), None);
    }
}
