//! JSON functions on JSON text, as MariaDB's: JSON_VALID, JSON_EXTRACT, JSON_VALUE,
//! JSON_UNQUOTE, JSON_QUOTE, JSON_OBJECT, JSON_ARRAY, JSON_LENGTH, JSON_TYPE, JSON_KEYS.
//!
//! MariaDB has no JSON type of its own: documents are strings, and JSON_EXTRACT gives back
//! matched scalars as written (`1.50`, `"x\u0041"`) and objects and arrays with its own
//! separators, so the parser here keeps each value's text. Paths: `$`, `.key`, `."quoted key"`, `.*`, `[n]`, `[*]`; a path with
//! a wildcard, or several paths, gives an array of the matches. JSON_OBJECT and JSON_ARRAY
//! write `"key": value` and `, ` as MariaDB does; an argument that is itself the result of
//! a JSON function is embedded as JSON, anything else as a scalar (onelog has no boolean
//! type: TRUE is written as 1, where MariaDB writes `true`). Invalid documents or paths
//! give NULL (MariaDB adds a warning).

use onelog_types::{Collation, ColumnType, Value};

use crate::expr::{self, to_string};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonFn {
    Valid,
    Extract,
    /// JSON_VALUE
    Scalar,
    Unquote,
    Quote,
    /// JSON_OBJECT: bit i set when argument i is JSON (embedded as is).
    Object(u64),
    /// JSON_ARRAY: bit i set when argument i is JSON.
    Array(u64),
    Length,
    Type,
    Keys,
    /// One element of JSON_ARRAYAGG as JSON (true: the value is JSON already).
    Element(bool),
}

impl JsonFn {
    /// By name: (function, min args, max args).
    pub fn lookup(name: &str) -> Option<(JsonFn, usize, usize)> {
        use JsonFn::*;
        const MANY: usize = usize::MAX;
        Some(match name {
            "json_valid" => (Valid, 1, 1),
            "json_extract" => (Extract, 2, MANY),
            "json_value" => (Scalar, 2, 2),
            "json_unquote" => (Unquote, 1, 1),
            "json_quote" => (Quote, 1, 1),
            "json_object" => (Object(0), 0, MANY),
            "json_array" => (Array(0), 0, MANY),
            "json_length" => (Length, 1, 2),
            "json_type" => (Type, 1, 1),
            "json_keys" => (Keys, 1, 2),
            _ => return None,
        })
    }

    /// Whether the result is JSON text (so JSON_OBJECT / JSON_ARRAY embed it).
    pub fn gives_json(self) -> bool {
        matches!(
            self,
            JsonFn::Extract | JsonFn::Object(_) | JsonFn::Array(_) | JsonFn::Keys
        )
    }

    /// Whether NULL arguments are values (JSON_OBJECT / JSON_ARRAY write `null`).
    pub fn takes_null(self) -> bool {
        matches!(
            self,
            JsonFn::Object(_) | JsonFn::Array(_) | JsonFn::Element(_)
        )
    }
}

pub fn json_type(f: JsonFn) -> ColumnType {
    match f {
        JsonFn::Valid | JsonFn::Length => ColumnType::Int {
            bytes: 4,
            unsigned: false,
        },
        _ => ColumnType::varchar(255, Collation::DEFAULT),
    }
}

/// Calls `f` (NULL arguments reach it only for JSON_OBJECT / JSON_ARRAY).
pub fn call_json(f: JsonFn, a: &[Value]) -> Value {
    use JsonFn::*;
    let text = |i: usize| to_string(&a[i]);
    let opt = |v: Option<String>| v.map_or(Value::Null, |s| Value::str(&s));
    match f {
        Valid => Value::Int(parse(&text(0)).is_some() as i64),
        Extract => {
            let doc = text(0);
            let Some(root) = parse(&doc) else {
                return Value::Null;
            };
            let mut found = Vec::new();
            let mut wild = a.len() > 2;
            for p in &a[1..] {
                let Some(path) = parse_path(&to_string(p)) else {
                    return Value::Null;
                };
                wild |= path
                    .iter()
                    .any(|s| matches!(s, Step::AnyKey | Step::AnyIndex));
                select(&root, &path, &mut found);
            }
            match (found.len(), wild) {
                (0, _) => Value::Null,
                (1, false) => Value::str(&normal(found[0])),
                _ => Value::str(&format!(
                    "[{}]",
                    found
                        .iter()
                        .map(|n| normal(n))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        }
        Scalar => {
            let doc = text(0);
            let root = parse(&doc);
            let path = parse_path(&text(1));
            let mut found = Vec::new();
            if let (Some(root), Some(path)) = (&root, &path) {
                select(root, path, &mut found);
            }
            opt(found.first().and_then(|n| match &n.kind {
                Kind::Str(s) => Some(s.clone()),
                Kind::Num | Kind::Bool => Some(n.raw.to_string()),
                _ => None,
            }))
        }
        Unquote => {
            let s = text(0);
            match parse(&s) {
                Some(Node {
                    kind: Kind::Str(v), ..
                }) => Value::str(&v),
                _ => Value::str(&s),
            }
        }
        Quote => Value::str(&quote(&text(0))),
        Element(json) => Value::str(&scalar(&a[0], json)),
        Object(json) => {
            let mut out = String::from("{");
            for (k, pair) in a.chunks(2).enumerate() {
                if k > 0 {
                    out += ", ";
                }
                out += &quote(&to_string(&pair[0]));
                out += ": ";
                out += &scalar(
                    pair.get(1).unwrap_or(&Value::Null),
                    json >> (2 * k + 1) & 1 == 1,
                );
            }
            out.push('}');
            Value::str(&out)
        }
        Array(json) => {
            let items: Vec<String> = a
                .iter()
                .enumerate()
                .map(|(i, v)| scalar(v, json >> i & 1 == 1))
                .collect();
            Value::str(&format!("[{}]", items.join(", ")))
        }
        Length | Type | Keys => {
            let doc = text(0);
            let Some(root) = parse(&doc) else {
                return Value::Null;
            };
            let node = match a.get(1) {
                None => Some(&root),
                Some(p) => {
                    let Some(path) = parse_path(&to_string(p)) else {
                        return Value::Null;
                    };
                    let mut found = Vec::new();
                    select(&root, &path, &mut found);
                    found.first().copied()
                }
            };
            let Some(n) = node else {
                return Value::Null;
            };
            match f {
                Length => Value::Int(match &n.kind {
                    Kind::Arr(v) => v.len() as i64,
                    Kind::Obj(v) => v.len() as i64,
                    _ => 1,
                }),
                Type => Value::str(match &n.kind {
                    Kind::Obj(_) => "OBJECT",
                    Kind::Arr(_) => "ARRAY",
                    Kind::Str(_) => "STRING",
                    Kind::Bool => "BOOLEAN",
                    Kind::Null => "NULL",
                    Kind::Num if n.raw.contains(['.', 'e', 'E']) => "DOUBLE",
                    Kind::Num => "INTEGER",
                }),
                _ => match &n.kind {
                    Kind::Obj(v) => {
                        let keys: Vec<String> = v.iter().map(|(k, _)| quote(k)).collect();
                        Value::str(&format!("[{}]", keys.join(", ")))
                    }
                    _ => Value::Null,
                },
            }
        }
    }
}

/// A matched value as JSON_EXTRACT gives it: scalars as written, objects and arrays
/// with MariaDB's `, ` and `": "` separators.
fn normal(n: &Node) -> String {
    match &n.kind {
        Kind::Obj(m) => {
            let members: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", quote(k), normal(v)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        Kind::Arr(v) => {
            let items: Vec<String> = v.iter().map(normal).collect();
            format!("[{}]", items.join(", "))
        }
        _ => n.raw.to_string(),
    }
}

/// A value as JSON_OBJECT / JSON_ARRAY write it.
fn scalar(v: &Value, json: bool) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => to_string(v),
        Value::Double(d) => expr::to_string(&Value::Double(*d)),
        other if json => to_string(other),
        other => quote(&to_string(other)),
    }
}

/// A JSON string literal of `s`.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out += "\\\"",
            '\\' => out += "\\\\",
            '\n' => out += "\\n",
            '\r' => out += "\\r",
            '\t' => out += "\\t",
            '\u{8}' => out += "\\b",
            '\u{c}' => out += "\\f",
            c if (c as u32) < 0x20 => out += &format!("\\u{:04x}", c as u32),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

enum Kind<'a> {
    Null,
    Bool,
    Num,
    Str(String),
    Arr(Vec<Node<'a>>),
    Obj(Vec<(String, Node<'a>)>),
}

/// A parsed value and its text as written.
struct Node<'a> {
    raw: &'a str,
    kind: Kind<'a>,
}

/// The whole text as one JSON value (surrounding white space allowed), or None.
fn parse(s: &str) -> Option<Node<'_>> {
    let mut p = Parser { s, i: 0 };
    let n = p.value(0)?;
    p.ws();
    (p.i == s.len()).then_some(n)
}

struct Parser<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        let b = self.s.as_bytes();
        while self.i < b.len() && matches!(b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    fn value(&mut self, depth: usize) -> Option<Node<'a>> {
        if depth > 64 {
            return None;
        }
        self.ws();
        let start = self.i;
        let kind = match self.peek()? {
            b'{' => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        let key = self.string()?;
                        self.ws();
                        if self.peek()? != b':' {
                            return None;
                        }
                        self.i += 1;
                        members.push((key, self.value(depth + 1)?));
                        self.ws();
                        match self.peek()? {
                            b',' => self.i += 1,
                            b'}' => {
                                self.i += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                Kind::Obj(members)
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                } else {
                    loop {
                        items.push(self.value(depth + 1)?);
                        self.ws();
                        match self.peek()? {
                            b',' => self.i += 1,
                            b']' => {
                                self.i += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                Kind::Arr(items)
            }
            b'"' => Kind::Str(self.string()?),
            b't' => self.word("true", Kind::Bool)?,
            b'f' => self.word("false", Kind::Bool)?,
            b'n' => self.word("null", Kind::Null)?,
            _ => {
                let b = self.s.as_bytes();
                let from = self.i;
                while self.i < b.len()
                    && matches!(b[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    self.i += 1;
                }
                self.s[from..self.i].parse::<f64>().ok()?;
                Kind::Num
            }
        };
        Some(Node {
            raw: &self.s[start..self.i],
            kind,
        })
    }

    fn word(&mut self, w: &str, k: Kind<'a>) -> Option<Kind<'a>> {
        self.s[self.i..].starts_with(w).then(|| {
            self.i += w.len();
            k
        })
    }

    fn string(&mut self) -> Option<String> {
        if self.peek()? != b'"' {
            return None;
        }
        self.i += 1;
        let mut out = String::new();
        let mut chars = self.s[self.i..].char_indices();
        while let Some((k, c)) = chars.next() {
            match c {
                '"' => {
                    self.i += k + 1;
                    return Some(out);
                }
                '\\' => {
                    let (_, e) = chars.next()?;
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'u' => {
                            let hex: String =
                                (0..4).filter_map(|_| chars.next().map(|x| x.1)).collect();
                            out.push(
                                char::from_u32(u32::from_str_radix(&hex, 16).ok()?)
                                    .unwrap_or('\u{fffd}'),
                            );
                        }
                        other => out.push(other),
                    }
                }
                c => out.push(c),
            }
        }
        None
    }
}

enum Step {
    Key(String),
    AnyKey,
    Index(usize),
    AnyIndex,
}

fn parse_path(p: &str) -> Option<Vec<Step>> {
    let p = p.trim();
    let mut rest = p.strip_prefix('$')?;
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            if let Some(r) = r.strip_prefix('*') {
                steps.push(Step::AnyKey);
                rest = r;
            } else if let Some(r) = r.strip_prefix('"') {
                let end = r.find('"')?;
                steps.push(Step::Key(r[..end].to_string()));
                rest = &r[end + 1..];
            } else {
                let end = r.find(['.', '[']).unwrap_or(r.len());
                if end == 0 {
                    return None;
                }
                steps.push(Step::Key(r[..end].to_string()));
                rest = &r[end..];
            }
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let inner = r[..end].trim();
            steps.push(if inner == "*" {
                Step::AnyIndex
            } else {
                Step::Index(inner.parse().ok()?)
            });
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(steps)
}

fn select<'n, 'a>(n: &'n Node<'a>, path: &[Step], out: &mut Vec<&'n Node<'a>>) {
    let Some((step, rest)) = path.split_first() else {
        out.push(n);
        return;
    };
    match (step, &n.kind) {
        (Step::Key(k), Kind::Obj(m)) => {
            if let Some((_, v)) = m.iter().find(|(key, _)| key == k) {
                select(v, rest, out);
            }
        }
        (Step::AnyKey, Kind::Obj(m)) => m.iter().for_each(|(_, v)| select(v, rest, out)),
        (Step::Index(i), Kind::Arr(v)) => {
            if let Some(x) = v.get(*i) {
                select(x, rest, out);
            }
        }
        // `$[0]` of a scalar is the scalar itself.
        (Step::Index(0), _) => select(n, rest, out),
        (Step::AnyIndex, Kind::Arr(v)) => v.iter().for_each(|x| select(x, rest, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::str(x)
    }

    #[test]
    fn extract_keeps_the_text_as_written() {
        let doc = s(r#"{"a":{"b": 1}, "c":[1,2], "d e": "x"}"#);
        let ex = |p: &str| to_string(&call_json(JsonFn::Extract, &[doc.clone(), s(p)]));
        assert_eq!(ex("$.a"), r#"{"b": 1}"#);
        assert_eq!(ex("$"), r#"{"a": {"b": 1}, "c": [1, 2], "d e": "x"}"#);
        assert_eq!(ex("$.c[1]"), "2");
        assert_eq!(ex(r#"$."d e""#), r#""x""#);
        assert_eq!(ex("$.c[*]"), "[1, 2]");
        assert_eq!(ex("$.z"), "NULL");
        assert_eq!(ex("a"), "NULL");
    }

    #[test]
    fn building_and_inspecting() {
        let obj = call_json(
            JsonFn::Object(0),
            &[
                s("a"),
                Value::Int(1),
                s("b"),
                s("x\"y"),
                s("c"),
                Value::Null,
            ],
        );
        assert_eq!(to_string(&obj), r#"{"a": 1, "b": "x\"y", "c": null}"#);
        let arr = call_json(JsonFn::Array(0b10), &[s("x"), s("[1, 2]")]);
        assert_eq!(to_string(&arr), r#"["x", [1, 2]]"#);
        assert_eq!(to_string(&call_json(JsonFn::Type, &[s("1.5")])), "DOUBLE");
        assert_eq!(
            to_string(&call_json(JsonFn::Keys, &[s(r#"{"a":1,"b":2}"#)])),
            r#"["a", "b"]"#
        );
        assert_eq!(to_string(&call_json(JsonFn::Valid, &[s(r#"{"a":1"#)])), "0");
        assert_eq!(
            to_string(&call_json(JsonFn::Unquote, &[s(r#""a\nb""#)])),
            "a\nb"
        );
    }
}
