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

use super::MANY;

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
    /// JSON_SET / JSON_INSERT / JSON_REPLACE (doc, path, value, ...): bit i set when
    /// argument i is JSON.
    Set(Write, u64),
    Remove,
    /// JSON_ARRAY_APPEND (doc, path, value, ...), bit i as for Set.
    ArrayAppend(u64),
    Contains,
    ContainsPath,
    Depth,
    MergePatch,
}

/// Which writes JSON_SET (both), JSON_INSERT (new paths) and JSON_REPLACE (existing
/// paths) make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    Set,
    Insert,
    Replace,
}

impl JsonFn {
    /// By name: (function, min args, max args).
    pub fn lookup(name: &str) -> Option<(JsonFn, usize, usize)> {
        use JsonFn::*;
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
            "json_set" => (Set(Write::Set, 0), 3, MANY),
            "json_insert" => (Set(Write::Insert, 0), 3, MANY),
            "json_replace" => (Set(Write::Replace, 0), 3, MANY),
            "json_remove" => (Remove, 2, MANY),
            "json_array_append" => (ArrayAppend(0), 3, MANY),
            "json_contains" => (Contains, 2, 3),
            "json_contains_path" => (ContainsPath, 3, MANY),
            "json_depth" => (Depth, 1, 1),
            "json_merge_patch" => (MergePatch, 2, MANY),
            _ => return None,
        })
    }

    /// Whether the result is JSON text (so JSON_OBJECT / JSON_ARRAY embed it).
    pub fn gives_json(self) -> bool {
        matches!(
            self,
            JsonFn::Extract
                | JsonFn::Object(_)
                | JsonFn::Array(_)
                | JsonFn::Keys
                | JsonFn::Set(..)
                | JsonFn::Remove
                | JsonFn::ArrayAppend(_)
                | JsonFn::MergePatch
        )
    }

    /// The function with `mask` marking its JSON arguments, for those that embed JSON
    /// arguments as JSON (None for the others).
    pub fn with_json_args(self, mask: u64) -> Option<JsonFn> {
        Some(match self {
            JsonFn::Object(_) => JsonFn::Object(mask),
            JsonFn::Array(_) => JsonFn::Array(mask),
            JsonFn::Set(w, _) => JsonFn::Set(w, mask),
            JsonFn::ArrayAppend(_) => JsonFn::ArrayAppend(mask),
            _ => return None,
        })
    }

    /// Whether NULL arguments are values (JSON_OBJECT / JSON_ARRAY write `null`).
    pub fn takes_null(self) -> bool {
        // (JSON_SET and JSON_ARRAY_APPEND: a NULL document or path reads as invalid.)
        matches!(
            self,
            JsonFn::Object(_)
                | JsonFn::Array(_)
                | JsonFn::Element(_)
                | JsonFn::Set(..)
                | JsonFn::ArrayAppend(_)
        )
    }
}

pub fn json_type(f: JsonFn) -> ColumnType {
    match f {
        JsonFn::Valid
        | JsonFn::Length
        | JsonFn::Contains
        | JsonFn::ContainsPath
        | JsonFn::Depth => ColumnType::Int {
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
        Extract => extract(a),
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
        Set(..) | Remove | ArrayAppend(_) | MergePatch => modify(f, a),
        Contains => json_contains(a),
        ContainsPath => contains_path(a),
        Depth => match parse(&text(0)) {
            Some(root) => Value::Int(Tree::of(&root).depth()),
            None => Value::Null,
        },
        Object(json) => object(json, a),
        Array(json) => {
            let items: Vec<String> = a
                .iter()
                .enumerate()
                .map(|(i, v)| scalar(v, is_json(json, i)))
                .collect();
            Value::str(&format!("[{}]", items.join(", ")))
        }
        Length | Type | Keys => describe(f, a),
    }
}

/// JSON_EXTRACT(doc, path, ...): one match as itself, several (or a wildcard path) as
/// an array.
fn extract(a: &[Value]) -> Value {
    let text = |i: usize| to_string(&a[i]);
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

/// JSON_SET / JSON_INSERT / JSON_REPLACE, JSON_ARRAY_APPEND, JSON_REMOVE and
/// JSON_MERGE_PATCH: the document rewritten.
fn modify(f: JsonFn, a: &[Value]) -> Value {
    use JsonFn::*;
    let text = |i: usize| to_string(&a[i]);
    let src = text(0);
    let Some(root) = parse(&src) else {
        return Value::Null;
    };
    let mut doc = Tree::of(&root);
    let json = match f {
        Set(_, m) | ArrayAppend(m) => m,
        _ => 0,
    };
    if matches!(f, Set(..) | ArrayAppend(_)) {
        // (path, value) pairs after the document.
        if a.len().is_multiple_of(2) {
            return Value::Null;
        }
        for k in (1..a.len()).step_by(2) {
            let Some(path) = parse_path(&to_string(&a[k])) else {
                return Value::Null;
            };
            let v = Tree::value(&a[k + 1], is_json(json, k + 1));
            let ok = match f {
                Set(w, _) => doc.write(&path, v, w),
                _ => doc.append(&path, v),
            };
            if !ok {
                return Value::Null;
            }
        }
    }
    if f == Remove {
        for p in &a[1..] {
            match parse_path(&to_string(p)) {
                Some(path) if !path.is_empty() => doc.remove(&path),
                _ => return Value::Null,
            }
        }
    }
    if f == MergePatch {
        for p in &a[1..] {
            let text = to_string(p);
            let Some(patch) = parse(&text) else {
                return Value::Null;
            };
            doc = doc.merge_patch(Tree::of(&patch));
        }
    }
    Value::str(&doc.to_string())
}

/// JSON_CONTAINS(doc, candidate [, path]).
fn json_contains(a: &[Value]) -> Value {
    let text = |i: usize| to_string(&a[i]);
    let (doc, candidate) = (text(0), text(1));
    let (Some(root), Some(cand)) = (parse(&doc), parse(&candidate)) else {
        return Value::Null;
    };
    let mut found = Vec::new();
    match a.get(2) {
        None => found.push(&root),
        Some(p) => match parse_path(&to_string(p)) {
            Some(path) => select(&root, &path, &mut found),
            None => return Value::Null,
        },
    }
    match found.first() {
        Some(t) => Value::Int(contains(&Tree::of(t), &Tree::of(&cand)) as i64),
        None => Value::Null,
    }
}

/// JSON_CONTAINS_PATH(doc, 'one' | 'all', path, ...).
fn contains_path(a: &[Value]) -> Value {
    let text = |i: usize| to_string(&a[i]);
    let doc = text(0);
    let Some(root) = parse(&doc) else {
        return Value::Null;
    };
    let all = match text(1).to_ascii_lowercase().as_str() {
        "all" => true,
        "one" => false,
        _ => return Value::Null,
    };
    let mut hits = 0;
    for p in &a[2..] {
        let Some(path) = parse_path(&to_string(p)) else {
            return Value::Null;
        };
        let mut found = Vec::new();
        select(&root, &path, &mut found);
        hits += !found.is_empty() as usize;
    }
    Value::Int(if all { hits == a.len() - 2 } else { hits > 0 } as i64)
}

/// JSON_OBJECT(key, value, ...); `json`: the arguments that are JSON already.
fn object(json: u64, a: &[Value]) -> Value {
    let mut out = String::from("{");
    for (k, pair) in a.chunks(2).enumerate() {
        if k > 0 {
            out += ", ";
        }
        out += &quote(&to_string(&pair[0]));
        out += ": ";
        out += &scalar(
            pair.get(1).unwrap_or(&Value::Null),
            is_json(json, 2 * k + 1),
        );
    }
    out.push('}');
    Value::str(&out)
}

/// JSON_LENGTH, JSON_TYPE and JSON_KEYS of the document or of the value at a path.
fn describe(f: JsonFn, a: &[Value]) -> Value {
    use JsonFn::*;
    let text = |i: usize| to_string(&a[i]);
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

/// Whether argument `i` is marked as JSON in `mask` (arguments past 64 never are).
fn is_json(mask: u64, i: usize) -> bool {
    u32::try_from(i)
        .ok()
        .and_then(|i| mask.checked_shr(i))
        .is_some_and(|m| m & 1 == 1)
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

/// An owned JSON value, for the functions that change documents; scalars keep their text.
#[derive(Clone)]
enum Tree {
    Raw(String),
    Arr(Vec<Tree>),
    Obj(Vec<(String, Tree)>),
}

impl Tree {
    fn of(n: &Node) -> Tree {
        match &n.kind {
            Kind::Arr(v) => Tree::Arr(v.iter().map(Tree::of).collect()),
            Kind::Obj(m) => Tree::Obj(m.iter().map(|(k, v)| (k.clone(), Tree::of(v))).collect()),
            _ => Tree::Raw(n.raw.to_string()),
        }
    }

    /// A SQL value to put into a document (`json`: it is JSON text already).
    fn value(v: &Value, json: bool) -> Tree {
        let text = scalar(v, json);
        match parse(&text) {
            Some(n) if json => Tree::of(&n),
            _ => Tree::Raw(text),
        }
    }

    fn depth(&self) -> i64 {
        let deepest = |it: &mut dyn Iterator<Item = &Tree>| it.map(Tree::depth).max();
        match self {
            Tree::Arr(v) => deepest(&mut v.iter()).map_or(1, |d| d + 1),
            Tree::Obj(m) => deepest(&mut m.iter().map(|(_, v)| v)).map_or(1, |d| d + 1),
            Tree::Raw(_) => 1,
        }
    }

    fn get_mut(&mut self, path: &[Step]) -> Option<&mut Tree> {
        let Some((step, rest)) = path.split_first() else {
            return Some(self);
        };
        let next = match (step, self) {
            (Step::Key(k), Tree::Obj(m)) => {
                m.iter_mut().find(|(key, _)| key == k).map(|e| &mut e.1)
            }
            (Step::Index(i), Tree::Arr(v)) => v.get_mut(*i),
            (Step::Index(0), t) => Some(t),
            _ => None,
        };
        next?.get_mut(rest)
    }

    /// JSON_SET / INSERT / REPLACE at one path; false for a wildcard path (MariaDB: an
    /// error). A missing parent leaves the document as it is.
    fn write(&mut self, path: &[Step], v: Tree, w: Write) -> bool {
        if path
            .iter()
            .any(|s| matches!(s, Step::AnyKey | Step::AnyIndex))
        {
            return false;
        }
        let Some((last, parent)) = path.split_last() else {
            if w != Write::Insert {
                *self = v;
            }
            return true;
        };
        let Some(parent) = self.get_mut(parent) else {
            return true;
        };
        match (last, parent) {
            (Step::Key(k), Tree::Obj(m)) => match m.iter_mut().find(|(key, _)| key == k) {
                Some((_, slot)) if w != Write::Insert => *slot = v,
                None if w != Write::Replace => m.push((k.clone(), v)),
                _ => {}
            },
            (Step::Index(i), Tree::Arr(items)) => {
                if *i < items.len() {
                    if w != Write::Insert {
                        items[*i] = v;
                    }
                } else if w != Write::Replace {
                    items.push(v);
                }
            }
            // `$[0]` of a non-array is the value itself; a later index wraps it.
            (Step::Index(0), slot) if w != Write::Insert => *slot = v,
            (Step::Index(i), slot) if *i > 0 && w != Write::Replace => {
                let old = std::mem::replace(slot, Tree::Arr(Vec::new()));
                *slot = Tree::Arr(vec![old, v]);
            }
            _ => {}
        }
        true
    }

    /// JSON_ARRAY_APPEND: onto the array at `path`, or wrapping what is there.
    fn append(&mut self, path: &[Step], v: Tree) -> bool {
        if path
            .iter()
            .any(|s| matches!(s, Step::AnyKey | Step::AnyIndex))
        {
            return false;
        }
        match self.get_mut(path) {
            Some(Tree::Arr(items)) => items.push(v),
            Some(slot) => {
                let old = std::mem::replace(slot, Tree::Arr(Vec::new()));
                *slot = Tree::Arr(vec![old, v]);
            }
            None => {}
        }
        true
    }

    fn remove(&mut self, path: &[Step]) {
        let Some((last, parent)) = path.split_last() else {
            return;
        };
        match (last, self.get_mut(parent)) {
            (Step::Key(k), Some(Tree::Obj(m))) => m.retain(|(key, _)| key != k),
            (Step::Index(i), Some(Tree::Arr(v))) if *i < v.len() => {
                v.remove(*i);
            }
            _ => {}
        }
    }

    /// RFC 7396: objects merge member by member, `null` removes, anything else replaces.
    fn merge_patch(self, patch: Tree) -> Tree {
        let Tree::Obj(pm) = patch else {
            return patch;
        };
        let mut m = match self {
            Tree::Obj(m) => m,
            _ => Vec::new(),
        };
        for (k, v) in pm {
            if matches!(&v, Tree::Raw(t) if t == "null") {
                m.retain(|(key, _)| *key != k);
                continue;
            }
            match m.iter().position(|(key, _)| *key == k) {
                Some(i) => {
                    let old = std::mem::replace(&mut m[i].1, Tree::Arr(Vec::new()));
                    m[i].1 = old.merge_patch(v);
                }
                None => m.push((k, Tree::Raw("null".into()).merge_patch(v))),
            }
        }
        Tree::Obj(m)
    }
}

impl std::fmt::Display for Tree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tree::Raw(t) => f.write_str(t),
            Tree::Arr(v) => {
                f.write_str("[")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str("]")
            }
            Tree::Obj(m) => {
                f.write_str("{")?;
                for (i, (k, x)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {x}", quote(k))?;
                }
                f.write_str("}")
            }
        }
    }
}

/// JSON_CONTAINS: every member of an object candidate is in the target with a contained
/// value, every element of an array candidate is contained in some element of the target,
/// a scalar is contained in an equal scalar or an array holding one.
fn contains(target: &Tree, cand: &Tree) -> bool {
    match (target, cand) {
        (Tree::Obj(t), Tree::Obj(c)) => c.iter().all(|(k, cv)| {
            t.iter()
                .find(|(key, _)| key == k)
                .is_some_and(|(_, tv)| contains(tv, cv))
        }),
        (Tree::Arr(t), Tree::Arr(c)) => c.iter().all(|cv| t.iter().any(|tv| contains(tv, cv))),
        (Tree::Arr(t), c) => t.iter().any(|tv| contains(tv, c)),
        (Tree::Raw(a), Tree::Raw(b)) => scalar_eq(a, b),
        _ => false,
    }
}

/// Scalars as JSON values: numbers by value, strings by their unescaped text.
fn scalar_eq(a: &str, b: &str) -> bool {
    match (parse(a).map(|n| n.kind), parse(b).map(|n| n.kind)) {
        (Some(Kind::Num), Some(Kind::Num)) => a.parse::<f64>().ok() == b.parse::<f64>().ok(),
        (Some(Kind::Str(x)), Some(Kind::Str(y))) => x == y,
        _ => a == b,
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
