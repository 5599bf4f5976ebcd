//! Statement shapes: statements with their literals taken out, so that a session parses
//! each shape once and runs it again with the literals as parameters (the way a prepared
//! statement runs). Literals are taken from the VALUES list of INSERT / REPLACE and from
//! the WHERE clause of SELECT / UPDATE / DELETE, nowhere else (a select-list literal names
//! its column, ORDER BY 1 is a position, LIMIT and type lengths must be numbers).
//!
//! Loads and benchmarks send the same statements over and over with different values;
//! parsing was the largest single cost of a 100-row INSERT and a large part of a point
//! query. [`shape_of`] scans the text once (much cheaper than sqlparser's tokenizer and
//! parser) and returns the text with every number and string literal of its region
//! replaced by `?`, plus the literals as values, converted
//! exactly as the binder converts them ([`parse_number`], [`literal_bytes`]): a
//! placeholder binds to the same constant the literal would, so the statement means the
//! same thing.
//!
//! Anything the scanner is not sure about makes it decline (None), and the statement takes
//! the ordinary path: comments, `;`, `?`, backslash escapes, double-quoted strings,
//! introducers and hex/bit literals (`_binary'..'`, `x'..'`, `0x..`), numbers with
//! exponents or without digits on one side of the point, adjacent string literals (MariaDB
//! concatenates them), typed literals (`DATE '...'`), user variables, `ESCAPE`, `INTERVAL`, and any
//! SELECT in an INSERT or a second SELECT (INSERT ... SELECT, subqueries). Literals after
//! `ON DUPLICATE KEY UPDATE` stay in the text. A shape that does not parse (a `?` where
//! sqlparser wants a number, as in `CAST(x AS CHAR(10))`) is not used either.

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

/// Which statements have shapes, and where their literals are taken from.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// INSERT / REPLACE: the VALUES list (up to ON DUPLICATE KEY UPDATE).
    Insert,
    /// SELECT / UPDATE / DELETE: the WHERE clause (up to ORDER BY, LIMIT, ...).
    Filter,
}

/// Words that end a WHERE clause.
const AFTER_WHERE: &[&str] = &[
    "ORDER",
    "GROUP",
    "LIMIT",
    "HAVING",
    "FOR",
    "LOCK",
    "UNION",
    "INTERSECT",
    "EXCEPT",
    "WINDOW",
    "INTO",
    "PROCEDURE",
    "RETURNING",
];

/// Words before a string that make it a typed literal or give it a character set.
fn types_a_string(word: &str) -> bool {
    word.starts_with('_')
        || ["DATE", "TIME", "TIMESTAMP", "N"]
            .iter()
            .any(|w| word.eq_ignore_ascii_case(w))
}

/// The shape of an INSERT/REPLACE ... VALUES or a SELECT/UPDATE/DELETE with a WHERE
/// clause, or None.
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
    let kind = if first.eq_ignore_ascii_case("INSERT") || first.eq_ignore_ascii_case("REPLACE") {
        Kind::Insert
    } else if ["SELECT", "UPDATE", "DELETE"]
        .iter()
        .any(|w| first.eq_ignore_ascii_case(w))
    {
        Kind::Filter
    } else {
        return None;
    };
    let mut text = String::with_capacity(sql.len());
    let mut literals = Vec::new();
    // Inside the region whose literals become parameters; the region was seen.
    let mut in_region = false;
    let mut seen_region = false;
    let mut selects = 0;
    // The last significant token was a string literal / this word.
    let mut after_string = false;
    let mut prev_word: Option<&str> = None;
    let mut copied = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b';' | b'?' | b'#' | b'"' | b'\\' | b'@' => return None,
            b'-' if b.get(i + 1) == Some(&b'-') => return None,
            b'/' if b.get(i + 1) == Some(&b'*') => return None,
            b'`' => {
                let end = sql[i + 1..].find('`')? + i + 1;
                i = end + 1;
                after_string = false;
                prev_word = Some("`");
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
                if after_string || prev_word.is_some_and(types_a_string) {
                    return None;
                }
                if in_region {
                    text.push_str(&sql[copied..i]);
                    text.push('?');
                    copied = j;
                    literals.push(Value::Bytes(literal_bytes(&value)));
                }
                i = j;
                after_string = true;
                prev_word = None;
                continue;
            }
            b'0'..=b'9' | b'.' if i == 0 || !is_ident_char(b[i - 1]) => {
                if c == b'.' && !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                    after_string = false;
                    prev_word = None;
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
                if in_region {
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
                let is = |w: &str| word.eq_ignore_ascii_case(w);
                if is("ESCAPE") || is("INTERVAL") {
                    return None; // LIKE ... ESCAPE and INTERVAL n unit want a literal
                }
                if is("SELECT") {
                    selects += 1;
                    if kind == Kind::Insert || selects > 1 {
                        return None; // INSERT ... SELECT, subqueries
                    }
                }
                let starts = match kind {
                    Kind::Insert => is("VALUES") || is("VALUE"),
                    Kind::Filter => is("WHERE"),
                };
                if starts {
                    if seen_region {
                        return None; // VALUES() in ON DUPLICATE KEY UPDATE, ...
                    }
                    in_region = true;
                    seen_region = true;
                } else if in_region {
                    let ends = match kind {
                        Kind::Insert => is("ON"),
                        Kind::Filter => AFTER_WHERE.iter().any(|w| is(w)),
                    };
                    if ends {
                        in_region = false;
                    }
                }
                i = j;
                after_string = false;
                prev_word = Some(word);
                continue;
            }
            _ => i += 1,
        }
        after_string = false;
        prev_word = None;
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
            "SELECT 'a', 1 FROM t",
            "UPDATE t SET a = 1",
            "SELECT * FROM t WHERE a IN (SELECT 1)",
            "SELECT * FROM t WHERE a = @v",
            "SELECT * FROM t WHERE a LIKE 'x!%' ESCAPE '!'",
            "SELECT * FROM t WHERE d > NOW() - INTERVAL 1 DAY",
            "SELECT * FROM t WHERE d = DATE '2020-01-01'",
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
    fn where_clauses_lose_their_literals() {
        let (t, v) =
            shape("SELECT 1, 'x' FROM t WHERE a = 5 AND b LIKE 'q%' ORDER BY 1 LIMIT 10").unwrap();
        assert_eq!(
            t,
            "SELECT 1, 'x' FROM t WHERE a = ? AND b LIKE ? ORDER BY 1 LIMIT 10"
        );
        assert_eq!(v, vec![Value::Int(5), Value::Bytes(b"q%".to_vec())]);
        let (t, v) = shape("UPDATE t SET a = 1 WHERE id BETWEEN 2 AND 3.5").unwrap();
        assert_eq!(t, "UPDATE t SET a = 1 WHERE id BETWEEN ? AND ?");
        assert_eq!(v, vec![Value::Int(2), parse_number("3.5")]);
        let (t, _) = shape("DELETE FROM t WHERE id >= 10 AND id < 20").unwrap();
        assert_eq!(t, "DELETE FROM t WHERE id >= ? AND id < ?");
    }

    #[test]
    fn digits_inside_names_stay() {
        let (t, v) = shape("INSERT INTO db1.t2 (c3) VALUES (4)").unwrap();
        assert_eq!(t, "INSERT INTO db1.t2 (c3) VALUES (?)");
        assert_eq!(v, vec![Value::Int(4)]);
    }
}
