//! The value lists of ENUM and SET columns, and the conversions between their text and
//! MariaDB's stored form (an ENUM's 1-based index, a SET's bitmap).
//!
//! [`ColumnType`](crate::ColumnType) is `Copy`, so a list is interned: [`Elements`] is a
//! handle to one process-wide copy of each distinct list (kept for the life of the process,
//! one per distinct list ever declared). It serialises as the list of strings, so catalog
//! records hold the values themselves.
//!
//! Values: in rows, expressions and results an ENUM or SET value is its text (`Bytes`):
//! the element as declared, or for a SET the members in declaration order joined by `,`;
//! `''` is ENUM's error value (index 0) and SET's empty set. Keys and binlog row images
//! hold the number ([`Elements::enum_number`], [`Elements::set_number`]).

use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, OnceLock};

use crate::Collation;

/// An interned ENUM/SET value list (see the module documentation).
#[derive(Clone, Copy)]
pub struct Elements(&'static [Box<str>]);

fn interned() -> &'static Mutex<HashSet<&'static [Box<str>]>> {
    static SET: OnceLock<Mutex<HashSet<&'static [Box<str>]>>> = OnceLock::new();
    SET.get_or_init(Default::default)
}

impl Elements {
    /// The interned list holding these values.
    pub fn new<S: AsRef<str>>(values: &[S]) -> Elements {
        let list: Vec<Box<str>> = values.iter().map(|s| s.as_ref().into()).collect();
        let mut set = interned().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&found) = set.get(list.as_slice()) {
            return Elements(found);
        }
        let leaked: &'static [Box<str>] = Box::leak(list.into_boxed_slice());
        set.insert(leaked);
        Elements(leaked)
    }

    pub fn values(&self) -> &'static [Box<str>] {
        self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The 1-based position of the element equal to `s` under `coll` (trailing spaces
    /// ignored, as MariaDB's PAD SPACE comparison), None if there is none.
    pub fn position(&self, s: &[u8], coll: Collation) -> Option<usize> {
        let s = crate::collation::trim_trailing_spaces(s);
        self.0
            .iter()
            .position(|e| coll.equal(crate::collation::trim_trailing_spaces(e.as_bytes()), s))
            .map(|i| i + 1)
    }

    /// The text of ENUM index `n` (`''` for 0 or an index past the list).
    pub fn enum_text(&self, n: u64) -> Vec<u8> {
        match n.checked_sub(1).and_then(|i| self.0.get(i as usize)) {
            Some(e) => e.as_bytes().to_vec(),
            None => Vec::new(),
        }
    }

    /// The text of SET bitmap `bits`: the members in declaration order joined by `,`.
    pub fn set_text(&self, bits: u64) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, e) in self.0.iter().enumerate().take(64) {
            if bits & (1 << i) != 0 {
                if !out.is_empty() {
                    out.push(b',');
                }
                out.extend_from_slice(e.as_bytes());
            }
        }
        out
    }

    /// The ENUM index of a stored text (0 for `''`, the error value, or an unknown text).
    pub fn enum_number(&self, s: &[u8], coll: Collation) -> u64 {
        if s.is_empty() {
            return 0;
        }
        self.position(s, coll).unwrap_or(0) as u64
    }

    /// The SET bitmap of a text (`a,b`), and whether every member was in the list.
    pub fn set_bits(&self, s: &[u8], coll: Collation) -> (u64, bool) {
        let mut bits = 0u64;
        let mut all = true;
        if s.is_empty() {
            return (0, true);
        }
        for part in s.split(|&c| c == b',') {
            match self.position(part, coll) {
                Some(p) if p <= 64 => bits |= 1 << (p - 1),
                _ => all = false,
            }
        }
        (bits, all)
    }

    /// The SET bitmap of a stored text (unknown members are dropped).
    pub fn set_number(&self, s: &[u8], coll: Collation) -> u64 {
        self.set_bits(s, coll).0
    }

    /// Bytes of an ENUM's stored number (1 up to 255 elements, else 2).
    pub fn enum_pack_len(&self) -> u8 {
        if self.0.len() < 256 {
            1
        } else {
            2
        }
    }

    /// Bytes of a SET's stored bitmap: 1, 2, 3, 4 or 8 for up to 8, 16, 24, 32, 64 members.
    pub fn set_pack_len(&self) -> u8 {
        match self.0.len().div_ceil(8) {
            0 | 1 => 1,
            2 => 2,
            3 => 3,
            4 => 4,
            _ => 8,
        }
    }

    /// `'a','b'` as SHOW CREATE TABLE lists the values (quotes doubled).
    pub fn sql_list(&self) -> String {
        self.0
            .iter()
            .map(|e| format!("'{}'", e.replace('\'', "''")))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl PartialEq for Elements {
    fn eq(&self, other: &Elements) -> bool {
        std::ptr::eq(self.0, other.0) || self.0 == other.0
    }
}

impl Eq for Elements {}

impl Hash for Elements {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.hash(h)
    }
}

impl fmt::Debug for Elements {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

impl serde::Serialize for Elements {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for e in self.0 {
            seq.serialize_element(&**e)?;
        }
        seq.end()
    }
}

impl<'de> serde::Deserialize<'de> for Elements {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Elements, D::Error> {
        let v: Vec<String> = Vec::deserialize(d)?;
        Ok(Elements::new(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interned_and_converted() {
        let a = Elements::new(&["x", "y"]);
        let b = Elements::new(&["x".to_string(), "y".to_string()]);
        assert!(std::ptr::eq(a.values(), b.values()));
        let ci = Collation::Utf8mb4GeneralCi;
        assert_eq!(a.position(b"Y ", ci), Some(2));
        assert_eq!(a.enum_number(b"", ci), 0);
        assert_eq!(a.enum_text(2), b"y");
        assert_eq!(a.enum_text(3), b"");
        let s = Elements::new(&["a", "b", "c"]);
        assert_eq!(s.set_bits(b"c,A", ci), (5, true));
        assert_eq!(s.set_bits(b"a,z", ci), (1, false));
        assert_eq!(s.set_text(5), b"a,c");
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"["a","b","c"]"#);
        let back: Elements = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        assert_eq!(Elements::new(&["it's"]).sql_list(), "'it''s'");
    }
}
