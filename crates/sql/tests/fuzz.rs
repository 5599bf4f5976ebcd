//! Random and mutated SQL through parse, bind, plan and execute: errors are fine, panics
//! are not. Seeds are the statements of the slt corpus; mutations flip, delete, duplicate
//! and splice bytes and tokens. Deterministic (fixed seed) and bounded in time.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

use onelog_engine::EngineOptions;
use onelog_sql::{Database, Session};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn corpus() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slt");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        let mut cur = Vec::new();
        let mut in_stmt = false;
        for l in text.lines() {
            if l.starts_with("statement") || l.starts_with("query") || l.starts_with("columns") {
                in_stmt = true;
                cur.clear();
                continue;
            }
            if in_stmt && (l.trim().is_empty() || l.trim() == "----") {
                if !cur.is_empty() {
                    out.push(cur.join("\n"));
                }
                in_stmt = false;
                continue;
            }
            if in_stmt {
                cur.push(l.to_string());
            }
        }
    }
    out
}

const TOKENS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "(",
    ")",
    ",",
    "'",
    "`",
    "?",
    "NULL",
    "1",
    "-1",
    "1e308",
    "99999999999999999999999999",
    "0.0000000001",
    "AND",
    "OR",
    "NOT",
    "=",
    "<=>",
    "LIKE",
    "IN",
    "BETWEEN",
    "ORDER BY",
    "GROUP BY",
    "LIMIT",
    "@@",
    "@",
    "/*!",
    "*/",
    ";",
    "JOIN",
    "ON",
    "INSERT",
    "UPDATE",
    "DELETE",
    "CREATE TABLE",
    "DROP",
    "INDEX",
    "KEY",
    "t",
    "x",
    "COUNT(*)",
    "SUM(",
    "CASE",
    "WHEN",
    "END",
    "\\",
    "\"",
    "\n",
    "--",
    "#",
];

fn mutate(r: &mut Rng, s: &str, corpus: &[String]) -> String {
    let mut b: Vec<u8> = s.as_bytes().to_vec();
    for _ in 0..1 + r.below(4) {
        match r.below(6) {
            0 if !b.is_empty() => {
                let i = r.below(b.len());
                b[i] = (r.next() & 0x7f) as u8;
            }
            1 if !b.is_empty() => {
                let i = r.below(b.len());
                let n = r.below(8).min(b.len() - i);
                b.drain(i..i + n);
            }
            2 => {
                let i = r.below(b.len() + 1);
                let t = TOKENS[r.below(TOKENS.len())];
                let ins = format!(" {t} ");
                b.splice(i..i, ins.bytes());
            }
            3 => {
                let other = &corpus[r.below(corpus.len())];
                let i = r.below(b.len() + 1);
                let j = r.below(other.len() + 1);
                b.truncate(i);
                b.extend_from_slice(&other.as_bytes()[j..]);
            }
            4 if !b.is_empty() => {
                let i = r.below(b.len());
                let n = r.below(16).min(b.len() - i);
                let dup = b[i..i + n].to_vec();
                b.splice(i..i, dup);
            }
            _ => {
                let depth = r.below(200);
                let mut x = "(".repeat(depth);
                x.push('1');
                x.push_str(&")".repeat(depth));
                let i = r.below(b.len() + 1);
                b.splice(i..i, x.bytes());
            }
        }
    }
    String::from_utf8_lossy(&b).to_string()
}

#[test]
fn mutated_sql_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(EngineOptions {
        datadir: dir.path().to_path_buf(),
        sync_binlog: 0,
        lock_wait_timeout: Duration::from_millis(200),
        block_cache_size: 8 << 20,
        ..Default::default()
    })
    .unwrap();
    let mut s = Session::new(db.clone(), "root".into(), "localhost".into(), 1);
    for setup in [
        "CREATE DATABASE fz",
        "USE fz",
        "CREATE TABLE t (id INT PRIMARY KEY, x VARCHAR(20), y DECIMAL(6,2), KEY kx (x))",
        "INSERT INTO t VALUES (1, 'a', 1.5), (2, 'b', NULL), (3, NULL, -2)",
        // Tables of union.slt, subquery.slt and join.slt, so mutations of their statements
        // get past name resolution.
        "CREATE TABLE u1 (id INT PRIMARY KEY, name VARCHAR(10), score DECIMAL(5,2))",
        "CREATE TABLE u2 (id INT PRIMARY KEY, label VARCHAR(20), n BIGINT)",
        "INSERT INTO u1 VALUES (1, 'ann', 1.50), (2, 'bob', 2.00), (3, 'cid', NULL)",
        "INSERT INTO u2 VALUES (2, 'bob', 20), (3, 'dan', 30), (4, 'eve', NULL)",
        "CREATE TABLE dep (id INT PRIMARY KEY, dname VARCHAR(20), budget INT)",
        "CREATE TABLE emp (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, dept INT, salary INT, boss INT, KEY k_dept (dept))",
        "INSERT INTO dep VALUES (10, 'eng', 5000), (20, 'ops', 1000), (30, 'hr', NULL)",
        "INSERT INTO emp VALUES (1, 'ann', 10, 3000, NULL), (2, 'bob', 10, 2000, 1), (3, 'cid', 20, NULL, 1)",
        "CREATE TABLE ja (id INT PRIMARY KEY, x INT, s VARCHAR(10))",
        "CREATE TABLE jb (id INT PRIMARY KEY, aid INT, y INT, KEY k_aid (aid))",
        "CREATE TABLE jc (bid INT, z VARCHAR(10))",
        "INSERT INTO ja VALUES (1, 10, 'p'), (2, 20, 'q'), (3, NULL, 'r')",
        "INSERT INTO jb VALUES (1, 1, 100), (2, 1, 200), (3, 2, 300), (4, 5, 400)",
        "INSERT INTO jc VALUES (1, 'c1'), (3, 'c3'), (9, 'c9')",
    ] {
        s.query(setup).unwrap();
    }
    let corpus = corpus();
    assert!(!corpus.is_empty());
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut n = 0;
    while n < 4000 && Instant::now() < deadline {
        let base = &corpus[r.below(corpus.len())];
        let sql = mutate(&mut r, base, &corpus);
        let res = catch_unwind(AssertUnwindSafe(|| {
            let _ = s.execute(&sql);
            let _ = s.prepare(&sql);
        }));
        if res.is_err() {
            panic!("panic on input: {sql:?}");
        }
        if n % 100 == 0 {
            let _ = s.query("ROLLBACK");
            let _ = s.query("USE fz");
        }
        n += 1;
    }
    eprintln!("{n} mutated statements ran without a panic");
}
