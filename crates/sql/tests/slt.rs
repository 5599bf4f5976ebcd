//! sqllogictest-style files under `tests/slt/*.slt`, run against the embedded engine and
//! (same files, same expectations) against a private MariaDB 10.11 instance.
//!
//! Record syntax (a subset of sqllogictest, plus MariaDB error codes):
//! ```text
//! statement ok | statement count <affected> | statement error <code> [message prefix]
//! <sql, up to an empty line>
//!
//! query <column letters> [rowsort]
//! <sql>
//! ----
//! <rows: values separated by one space; NULL for null, (empty) for '', newlines as \n>
//!
//! query error <code> [message prefix]
//! skipif onelog|mariadb   /   onlyif onelog|mariadb   (applies to the next record)
//!
//! columns
//! <sql>
//! ----
//! <one line per result column: its type (the column definition's type code, as named in
//!  MariaDB's mysql_com.h without MYSQL_TYPE_) and its name>
//! ```
//! Each file runs in a fresh database `slt_<file stem>`; `ONELOG_SLT=<stem>` runs one file.

mod common;

use std::path::{Path, PathBuf};

use onelog_engine::EngineOptions;
use onelog_sql::{Database, QueryResult, Session};

#[derive(Debug)]
enum Outcome {
    Ok {
        affected: u64,
    },
    /// Rows, and the columns as `TYPE name`.
    Rows(Vec<Vec<Option<String>>>, Vec<String>),
    Err {
        code: u16,
        message: String,
    },
}

/// The name of a column definition's type code.
fn type_name(code: u8) -> String {
    match code {
        1 => "TINY",
        2 => "SHORT",
        3 => "LONG",
        4 => "FLOAT",
        5 => "DOUBLE",
        6 => "NULL",
        7 | 17 => "TIMESTAMP",
        8 => "LONGLONG",
        9 => "INT24",
        10 => "DATE",
        11 | 19 => "TIME",
        12 | 18 => "DATETIME",
        13 => "YEAR",
        15 => "VARCHAR",
        16 => "BIT",
        246 => "NEWDECIMAL",
        247 => "ENUM",
        248 => "SET",
        249..=252 => "BLOB",
        253 => "VAR_STRING",
        254 => "STRING",
        _ => return format!("TYPE{code}"),
    }
    .to_string()
}

/// The type code onelog's server sends for a result column.
fn onelog_type_code(c: &onelog_sql::ResultColumn) -> u8 {
    use onelog_types::ColumnType as T;
    if c.null_type {
        return 6;
    }
    match c.ty {
        T::Int { bytes: 1, .. } => 1,
        T::Int { bytes: 2, .. } => 2,
        T::Int { bytes: 3, .. } => 9,
        T::Int { bytes: 4, .. } => 3,
        T::Int { .. } => 8,
        T::Float => 4,
        T::Double => 5,
        T::Decimal { .. } => 246,
        T::Char { .. } => 254,
        T::Varchar { .. } => 253,
        T::Blob { .. } => 252,
        T::Date => 10,
        T::Time { .. } => 11,
        T::DateTime { .. } => 12,
        T::Timestamp { .. } => 7,
        T::Enum { .. } | T::Set { .. } => 254,
        T::Bit { .. } => 16,
        T::Year => 13,
        T::Uuid | T::Inet6 => 254,
    }
}

trait Backend {
    fn name(&self) -> &'static str;
    fn run(&mut self, sql: &str) -> Outcome;
}

/// The fraction digits a temporal column shows (for a value in a column of another type:
/// six if it has a fraction, else none).
struct Embedded {
    s: Session,
}

impl Backend for Embedded {
    fn name(&self) -> &'static str {
        "onelog"
    }
    fn run(&mut self, sql: &str) -> Outcome {
        // A CALL's results: its first result set (or error), else the final result.
        let mut all = self.s.execute(sql);
        let pick = all.iter().position(|r| r.is_err()).or_else(|| {
            all.iter()
                .position(|r| matches!(r, Ok(QueryResult::Rows { .. })))
        });
        let r = match pick {
            Some(i) => all.swap_remove(i),
            None => all.pop().unwrap_or(Ok(QueryResult::ok())),
        };
        match r {
            Ok(QueryResult::Ok { affected_rows, .. }) => Outcome::Ok {
                affected: affected_rows,
            },
            Ok(QueryResult::Rows { rows, columns }) => Outcome::Rows(
                rows.into_iter()
                    .map(|r| {
                        r.into_iter()
                            .zip(&columns)
                            .map(|(v, c)| match v {
                                onelog_types::Value::Null => None,
                                onelog_types::Value::Bytes(b) => {
                                    Some(String::from_utf8_lossy(&b).to_string())
                                }
                                // Every other value as the server's text protocol sends it.
                                v => {
                                    let mut buf = Vec::new();
                                    onelog_protocol::put_text_value(&mut buf, &v, &c.wire());
                                    Some(String::from_utf8_lossy(&buf).to_string())
                                }
                            })
                            .collect()
                    })
                    .collect(),
                columns
                    .iter()
                    .map(|c| format!("{} {}", type_name(onelog_type_code(c)), c.name))
                    .collect(),
            ),
            Err(e) => Outcome::Err {
                code: e.code,
                message: e.message,
            },
        }
    }
}

struct Maria {
    c: common::mariadb::Client,
}

impl Backend for Maria {
    fn name(&self) -> &'static str {
        "mariadb"
    }
    fn run(&mut self, sql: &str) -> Outcome {
        match self.c.query(sql) {
            common::mariadb::Reply::Ok { affected } => Outcome::Ok { affected },
            common::mariadb::Reply::Rows(r, cols) => Outcome::Rows(
                r,
                cols.into_iter()
                    .map(|(name, code)| format!("{} {name}", type_name(code)))
                    .collect(),
            ),
            common::mariadb::Reply::Err { code, message } => Outcome::Err { code, message },
        }
    }
}

#[derive(Debug)]
enum Expect {
    Ok,
    Count(u64),
    Error(u16, String),
    Rows { sort: bool, rows: Vec<String> },
    Columns(Vec<String>),
}

#[derive(Debug)]
struct Record {
    line: usize,
    sql: String,
    expect: Expect,
    skip: Vec<String>,
    only: Vec<String>,
}

fn parse_file(text: &str) -> Vec<Record> {
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    let mut out = Vec::new();
    let mut skip = Vec::new();
    let mut only = Vec::new();
    while i < lines.len() {
        let l = lines[i].trim_end();
        if l.is_empty() || l.starts_with('#') {
            i += 1;
            continue;
        }
        let words: Vec<&str> = l.split_whitespace().collect();
        if words[0] == "skipif" {
            skip.push(words[1].to_string());
            i += 1;
            continue;
        }
        if words[0] == "onlyif" {
            only.push(words[1].to_string());
            i += 1;
            continue;
        }
        if words[0] == "halt" {
            break;
        }
        let line = i + 1;
        let head = l.to_string();
        i += 1;
        let mut sql = Vec::new();
        while i < lines.len() && !lines[i].trim().is_empty() && lines[i].trim() != "----" {
            sql.push(lines[i]);
            i += 1;
        }
        let sql = sql.join("\n");
        let error_of = |ws: &[&str]| -> Expect {
            let code: u16 = ws.get(2).and_then(|c| c.parse().ok()).unwrap_or(0);
            let msg = head
                .splitn(4, ' ')
                .nth(3)
                .map(str::to_string)
                .unwrap_or_default();
            Expect::Error(code, msg)
        };
        let expect = match (words[0], words.get(1).copied()) {
            ("statement", Some("ok")) => Expect::Ok,
            ("statement", Some("count")) => Expect::Count(words[2].parse().unwrap()),
            ("statement", Some("error")) | ("query", Some("error")) => error_of(&words),
            ("columns", _) => {
                let mut cols = Vec::new();
                if i < lines.len() && lines[i].trim() == "----" {
                    i += 1;
                    while i < lines.len() && !lines[i].trim().is_empty() {
                        cols.push(lines[i].trim().to_string());
                        i += 1;
                    }
                }
                Expect::Columns(cols)
            }
            ("query", _) => {
                let sort = words.contains(&"rowsort");
                let mut rows = Vec::new();
                if i < lines.len() && lines[i].trim() == "----" {
                    i += 1;
                    while i < lines.len() && !lines[i].trim().is_empty() {
                        rows.push(lines[i].trim().to_string());
                        i += 1;
                    }
                }
                Expect::Rows { sort, rows }
            }
            _ => panic!("line {line}: bad record header: {l}"),
        };
        out.push(Record {
            line,
            sql,
            expect,
            skip: std::mem::take(&mut skip),
            only: std::mem::take(&mut only),
        });
    }
    out
}

fn render(rows: &[Vec<Option<String>>]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    None => "NULL".to_string(),
                    Some(s) if s.is_empty() => "(empty)".to_string(),
                    // Multi-line values (SHOW CREATE TABLE) stay on one line.
                    Some(s) => s.replace('\n', "\\n"),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn run_file(b: &mut dyn Backend, path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let stem = path.file_stem().unwrap().to_string_lossy().to_string();
    let dbname = format!("slt_{stem}");
    for s in [
        format!("DROP DATABASE IF EXISTS {dbname}"),
        format!("CREATE DATABASE {dbname}"),
        format!("USE {dbname}"),
    ] {
        if let Outcome::Err { message, .. } = b.run(&s) {
            return vec![format!("{}: setup failed: {message}", b.name())];
        }
    }
    let mut failures = Vec::new();
    for r in parse_file(&text) {
        if r.skip.iter().any(|s| s == b.name()) {
            continue;
        }
        if !r.only.is_empty() && !r.only.iter().any(|s| s == b.name()) {
            continue;
        }
        let got = b.run(&r.sql);
        let where_ = format!("{}:{} [{}]", path.display(), r.line, b.name());
        let fail = match (&r.expect, &got) {
            (Expect::Ok, Outcome::Ok { .. }) => None,
            (Expect::Ok, Outcome::Rows(..)) => None,
            (Expect::Columns(want), Outcome::Rows(_, got)) => {
                if want == got {
                    None
                } else {
                    Some(format!(
                        "expected columns:\n{}\ngot:\n{}",
                        want.join("\n"),
                        got.join("\n")
                    ))
                }
            }
            (Expect::Count(n), Outcome::Ok { affected }) if n == affected => None,
            (Expect::Error(code, msg), Outcome::Err { code: c, message }) => {
                if (*code == 0 || code == c) && message.starts_with(msg.as_str()) {
                    None
                } else {
                    Some(format!(
                        "expected error {code} {msg:?}, got {c} {message:?}"
                    ))
                }
            }
            (Expect::Rows { sort, rows }, Outcome::Rows(got, _)) => {
                let mut g = render(got);
                let mut e = rows.clone();
                if *sort {
                    g.sort();
                    e.sort();
                }
                if g == e {
                    None
                } else {
                    Some(format!(
                        "expected rows:\n{}\ngot:\n{}",
                        e.join("\n"),
                        g.join("\n")
                    ))
                }
            }
            (e, g) => Some(format!("expected {e:?}, got {g:?}")),
        };
        if let Some(f) = fail {
            failures.push(format!("{where_}: {}\n  {f}", r.sql));
        }
    }
    failures
}

/// The `.slt` files (only `$ONELOG_SLT.slt` when that is set).
fn slt_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slt");
    let only = std::env::var("ONELOG_SLT").ok();
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .filter(|p| {
            only.as_deref()
                .is_none_or(|o| p.file_stem().is_some_and(|s| s == o))
        })
        .collect();
    v.sort();
    v
}

fn open_embedded(dir: &Path) -> std::sync::Arc<Database> {
    let opts = EngineOptions {
        datadir: dir.to_path_buf(),
        sync_binlog: 0,
        lock_wait_timeout: std::time::Duration::from_secs(2),
        block_cache_size: 8 << 20,
        ..Default::default()
    };
    Database::open(opts).expect("open database")
}

#[test]
fn slt_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_embedded(dir.path());
    let mut failures = Vec::new();
    let files = slt_files();
    assert!(!files.is_empty());
    for f in &files {
        let s = Session::new(
            db.clone(),
            "root".into(),
            "localhost".into(),
            db.next_connection_id(),
        );
        let mut b = Embedded { s };
        failures.extend(run_file(&mut b, f));
    }
    if !failures.is_empty() {
        panic!("{} slt failures:\n{}", failures.len(), failures.join("\n"));
    }
}

#[test]
fn slt_mariadb_cross_check() {
    let Some(server) = common::mariadb::Server::start() else {
        return;
    };
    // Files that need grant tables: without them MariaDB disables the event scheduler
    // and refuses event statements (1577).
    let with_grants = ["events"];
    let mut granted: Option<common::mariadb::Server> = None;
    let mut failures = Vec::new();
    for f in &slt_files() {
        let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let socket = if with_grants.contains(&stem) {
            let g = granted.get_or_insert_with(|| {
                common::mariadb::Server::start_with(&[]).expect("start mariadbd")
            });
            g.socket.clone()
        } else {
            server.socket.clone()
        };
        let c = common::mariadb::Client::connect(&socket).expect("connect to mariadb");
        let mut b = Maria { c };
        failures.extend(run_file(&mut b, f));
    }
    if !failures.is_empty() {
        panic!(
            "{} slt expectations disagree with MariaDB:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}
