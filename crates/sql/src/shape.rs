//! Statement shapes: `INSERT`/`REPLACE ... VALUES` statements with their literals taken
//! out, so that a session parses each shape once and runs it again with the literals as
//! parameters (the way a prepared statement runs).
//!
//! Loads send the same INSERT over and over with different values; parsing was the largest
//! single cost of a 100-row INSERT. [`shape_of`] scans the text once (much cheaper than
//! sqlparser's tokenizer and parser) and returns the text with every number and string
//! literal of the VALUES list replaced by `?`, plus the literals as values, converted
//! exactly as the binder converts them ([`parse_number`], [`literal_bytes`]): a
//! placeholder binds to the same constant the literal would, so the statement means the
//! same thing.
//!
//! Anything the scanner is not sure about makes it decline (None), and the statement takes
//! the ordinary path: comments, `;`, `?`, backslash escapes, double-quoted strings,
//! introducers and hex/bit literals (`_binary'..'`, `x'..'`, `0x..`), numbers with
//! exponents or without digits on one side of the point, adjacent string literals (MariaDB
//! concatenates them), and any SELECT (INSERT ... SELECT, subqueries). Literals after
//! `ON DUPLICATE KEY UPDATE` stay in the text.

use onelog_types::Value;

use crate::binder::parse_number;
use crate::literal_bytes;

/// A statement's shape: its text with literals replaced by `?`, and the literals.
#[derive(Debug, PartialEq)]
pub struct Shape {
    pub text: String,
    pub literals: Vec<Value>,
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// The shape of an INSERT or REPLACE ... VALUES statement, or None.
pub fn shape_of(sql: &str) -> Option<Shape> {
    let b = sql.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    let first_end = b[i..]
        .iter()
        .position(|&c| !c.is_ascii_alphabetic())
        .map_or(b.len(), |n| i + n);
    let first = &sql[i..first_end];
    if !first.eq_ignore_ascii_case("INSERT") && !first.eq_ignore_ascii_case("REPLACE") {
        return None;
    }
    let mut text = String::with_capacity(sql.len());
    let mut literals = Vec::new();
    // Inside the VALUES list (after VALUES/VALUE, before ON DUPLICATE KEY UPDATE).
    let mut in_values = false;
    let mut seen_values = false;
    // The last significant token was a string literal / a word.
    let mut after_string = false;
    let mut after_word = false;
    let mut copied = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b';' | b'?' | b'#' | b'"' | b'\\' => return None,
            b'-' if b.get(i + 1) == Some(&b'-') => return None,
            b'/' if b.get(i + 1) == Some(&b'*') => return None,
            b'`' => {
                let end = sql[i + 1..].find('`')? + i + 1;
                i = end + 1;
                after_string = false;
                after_word = true;
                continue;
            }
            b'\'' => {
                // 'text' with '' for a quote; a backslash declines (escapes depend on
                // sql_mode).
                let mut j = i + 1;
                let mut value = String::new();
                loop {
                    let k = sql[j..].find(['\'', '\\'])? + j;
                    if b[k] == b'\\' {
                        return None;
                    }
                    value.push_str(&sql[j..k]);
                    if b.get(k + 1) == Some(&b'\'') {
                        value.push('\'');
                        j = k + 2;
                    } else {
                        j = k + 1;
                        break;
                    }
                }
                // DATE '...', TIMESTAMP '...', _utf8mb4 '...': typed literals stay literals.
                if !in_values || after_string || after_word {
                    return None;
                }
                text.push_str(&sql[copied..i]);
                text.push('?');
                copied = j;
                literals.push(Value::Bytes(literal_bytes(&value)));
                i = j;
                after_string = true;
                after_word = false;
                continue;
            }
            b'0'..=b'9' | b'.' if i == 0 || !is_ident_char(b[i - 1]) => {
                if c == b'.' && !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                    after_string = false;
                    after_word = false;
                    continue;
                }
                if c == b'.' {
                    return None; // .5
                }
                let mut j = i;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if j < b.len() && b[j] == b'.' {
                    j += 1;
                    let d = j;
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                    if j == d {
                        return None; // 1.
                    }
                }
                if j < b.len() && (is_ident_char(b[j]) || b[j] == b'.') {
                    return None; // 1e5, 0x1f, 1abc (an identifier), 1.2.3
                }
                if in_values {
                    text.push_str(&sql[copied..i]);
                    text.push('?');
                    copied = j;
                    literals.push(parse_number(&sql[i..j]));
                }
                i = j;
            }
            c if is_ident_char(c) => {
                let mut j = i;
                while j < b.len() && is_ident_char(b[j]) {
                    j += 1;
                }
                if j < b.len() && b[j] == b'\'' {
                    return None; // _binary'..', x'..', b'..', N'..'
                }
                let word = &sql[i..j];
                if word.eq_ignore_ascii_case("SELECT") {
                    return None;
                }
                if word.eq_ignore_ascii_case("VALUES") || word.eq_ignore_ascii_case("VALUE") {
                    if seen_values {
                        return None; // VALUES() in ON DUPLICATE KEY UPDATE: keep it simple
                    }
                    in_values = true;
                    seen_values = true;
                } else if word.eq_ignore_ascii_case("ON") && in_values {
                    in_values = false;
                }
                i = j;
                after_string = false;
                after_word = true;
                continue;
            }
            _ => i += 1,
        }
        after_string = false;
        after_word = false;
    }
    if literals.is_empty() {
        return None;
    }
    text.push_str(&sql[copied..]);
    Some(Shape { text, literals })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(s: &str) -> Option<(String, Vec<Value>)> {
        shape_of(s).map(|s| (s.text, s.literals))
    }

    #[test]
    fn inserts_lose_their_literals() {
        let (t, v) =
            shape("INSERT INTO t1 (a, b2, `c 3`) VALUES (1, 'x''y', -2.50), (NOW(), NULL, 'é')")
                .unwrap();
        assert_eq!(
            t,
            "INSERT INTO t1 (a, b2, `c 3`) VALUES (?, ?, -?), (NOW(), NULL, ?)"
        );
        assert_eq!(
            v,
            vec![
                Value::Int(1),
                Value::Bytes(b"x'y".to_vec()),
                parse_number("2.50"),
                Value::Bytes("é".as_bytes().to_vec()),
            ]
        );
        let (t, v) =
            shape("replace into t values (18446744073709551615) on duplicate key update a = 5")
                .unwrap();
        assert_eq!(t, "replace into t values (?) on duplicate key update a = 5");
        assert_eq!(v, vec![Value::UInt(u64::MAX)]);
    }

    #[test]
    fn anything_unsure_declines() {
        for s in [
            "SELECT 1",
            "UPDATE t SET a = 1",
            "INSERT INTO t VALUES ('a\\'b')",
            "INSERT INTO t VALUES (\"a\")",
            "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)",
            "INSERT INTO t VALUES (?)",
            "INSERT INTO t VALUES (1) -- c",
            "INSERT INTO t VALUES (1) # c",
            "INSERT INTO t VALUES (/* c */ 1)",
            "INSERT INTO t VALUES (_binary'a')",
            "INSERT INTO t VALUES (x'41')",
            "INSERT INTO t VALUES (0x41)",
            "INSERT INTO t VALUES (1e3)",
            "INSERT INTO t VALUES (.5)",
            "INSERT INTO t VALUES (5.)",
            "INSERT INTO t VALUES ('a' 'b')",
            "INSERT INTO t SELECT 1",
            "INSERT INTO t VALUES ((SELECT 1))",
            "INSERT INTO t SET a = 1",
            "INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = VALUES(a)",
            "INSERT INTO t VALUES ('unterminated)",
            "INSERT INTO t VALUES (DATE '2020-01-01')",
            "INSERT INTO t VALUES (_utf8mb4 'a')",
        ] {
            assert_eq!(shape(s), None, "{s}");
        }
    }

    #[test]
    fn digits_inside_names_stay() {
        let (t, v) = shape("INSERT INTO db1.t2 (c3) VALUES (4)").unwrap();
        assert_eq!(t, "INSERT INTO db1.t2 (c3) VALUES (?)");
        assert_eq!(v, vec![Value::Int(4)]);
    }
}
