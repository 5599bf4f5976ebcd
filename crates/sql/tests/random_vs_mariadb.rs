//! Random joins (INNER, CROSS, LEFT, RIGHT, nested), correlated and uncorrelated
//! subqueries (EXISTS, IN, NOT IN, ALL, scalar), set operations and multi-table
//! UPDATE/DELETE over small tables with NULLs, run on onelog and on a private MariaDB 10.11:
//! results (sorted), affected rows, error codes and the tables after each (rolled back)
//! write must agree. Deterministic; `SEED` and `N` (queries per kind) override the defaults.
//!
//! The generator avoids what MariaDB leaves unspecified: a multi-table UPDATE writes only
//! the column `v` (read by no condition), at most one alias per table, from that alias's
//! own columns.

#[allow(dead_code)]
mod common;

use onelog_engine::EngineOptions;
use onelog_sql::{Database, QueryResult, Session};

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
    fn chance(&mut self, p: u32) -> bool {
        self.below(100) < p as usize
    }
}

const TABLES: &[(&str, &[&str])] = &[
    ("ja", &["id", "x"]),
    ("jb", &["id", "aid", "y"]),
    ("jc", &["bid", "k"]),
    ("jd", &["id", "x"]),
];

struct Gen {
    r: Rng,
    n: usize,
}

impl Gen {
    fn alias(&mut self) -> String {
        self.n += 1;
        format!("t{}", self.n)
    }
    fn col(&mut self, aliases: &[(String, usize)]) -> String {
        let (a, t) = &aliases[self.r.below(aliases.len())];
        let cols = TABLES[*t].1;
        format!("{a}.{}", cols[self.r.below(cols.len())])
    }
    fn leaf(&mut self) -> (String, Vec<(String, usize)>) {
        let t = self.r.below(TABLES.len());
        let a = self.alias();
        (format!("{} {a}", TABLES[t].0), vec![(a, t)])
    }
    fn cond(&mut self, left: &[(String, usize)], right: &[(String, usize)]) -> String {
        let mut c = format!("{} = {}", self.col(right), self.col(left));
        if self.r.chance(30) {
            let all: Vec<_> = left.iter().chain(right).cloned().collect();
            c = format!("{c} AND {} > {}", self.col(&all), self.r.below(30));
        }
        if self.r.chance(10) {
            c = format!("{c} OR {} IS NULL", self.col(right));
        }
        c
    }
    fn from(&mut self, depth: usize) -> (String, Vec<(String, usize)>) {
        let (mut text, mut aliases) = self.leaf();
        let joins = 1 + self.r.below(3);
        for _ in 0..joins {
            let (rt, ra) = if depth < 1 && self.r.chance(25) {
                let (t, a) = self.from(depth + 1);
                (format!("({t})"), a)
            } else {
                self.leaf()
            };
            let kind = [
                "JOIN",
                "LEFT JOIN",
                "RIGHT JOIN",
                "CROSS JOIN",
                "LEFT JOIN",
                "RIGHT JOIN",
            ][self.r.below(6)];
            if kind == "CROSS JOIN" {
                text = format!("{text} CROSS JOIN {rt}");
            } else {
                let c = self.cond(&aliases, &ra);
                text = format!("{text} {kind} {rt} ON {c}");
            }
            aliases.extend(ra);
        }
        (text, aliases)
    }
    fn subquery_pred(&mut self, aliases: &[(String, usize)]) -> String {
        let t = self.r.below(TABLES.len());
        let a = self.alias();
        let inner = vec![(a.clone(), t)];
        let corr = if self.r.chance(70) {
            format!(" WHERE {} = {}", self.col(&inner), self.col(aliases))
        } else {
            String::new()
        };
        let c = self.col(&inner);
        match self.r.below(6) {
            0 => format!("EXISTS (SELECT 1 FROM {} {a}{corr})", TABLES[t].0),
            1 => format!("NOT EXISTS (SELECT 1 FROM {} {a}{corr})", TABLES[t].0),
            2 => format!(
                "{} IN (SELECT {c} FROM {} {a}{corr})",
                self.col(aliases),
                TABLES[t].0
            ),
            3 => format!(
                "{} NOT IN (SELECT {c} FROM {} {a}{corr})",
                self.col(aliases),
                TABLES[t].0
            ),
            4 => format!(
                "{} > ALL (SELECT {c} FROM {} {a}{corr})",
                self.col(aliases),
                TABLES[t].0
            ),
            _ => format!(
                "(SELECT COUNT(*) FROM {} {a}{corr}) > {}",
                TABLES[t].0,
                self.r.below(3)
            ),
        }
    }
    fn select(&mut self, ncols: usize) -> String {
        let (from, aliases) = self.from(0);
        let mut items = Vec::new();
        for _ in 0..ncols {
            if self.r.chance(15) {
                let t = self.r.below(TABLES.len());
                let a = self.alias();
                let inner = vec![(a.clone(), t)];
                items.push(format!(
                    "(SELECT COUNT(*) FROM {} {a} WHERE {} = {})",
                    TABLES[t].0,
                    self.col(&inner),
                    self.col(&aliases)
                ));
            } else {
                items.push(self.col(&aliases));
            }
        }
        let mut q = format!("SELECT {} FROM {from}", items.join(", "));
        let mut preds = Vec::new();
        for _ in 0..self.r.below(3) {
            preds.push(match self.r.below(4) {
                0 => format!("{} + 0 IS NULL", self.col(&aliases)),
                1 => format!("{} > {}", self.col(&aliases), self.r.below(25)),
                _ => self.subquery_pred(&aliases),
            });
        }
        if !preds.is_empty() {
            q = format!(
                "{q} WHERE {}",
                preds.join(if self.r.chance(70) { " AND " } else { " OR " })
            );
        }
        q
    }
    fn dml(&mut self) -> String {
        self.n = 0;
        let (from, aliases) = self.from(0);
        let mut preds = Vec::new();
        for _ in 0..self.r.below(3) {
            preds.push(match self.r.below(4) {
                0 => format!("{} + 0 IS NULL", self.col(&aliases)),
                1 => format!("{} > {}", self.col(&aliases), self.r.below(25)),
                _ => self.subquery_pred(&aliases),
            });
        }
        let w = if preds.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", preds.join(" AND "))
        };
        if self.r.chance(50) {
            let mut sets = Vec::new();
            let mut used_tables = Vec::new();
            for _ in 0..1 + self.r.below(3) {
                let (a, t) = aliases[self.r.below(aliases.len())].clone();
                // One alias per table (the order of two aliases' writes is unspecified),
                // and only `v`, read by no condition (MariaDB updates the first table
                // while it still reads the join).
                if used_tables.contains(&t) {
                    continue;
                }
                used_tables.push(t);
                let v = match self.r.below(3) {
                    0 => format!("{}", self.r.below(9)),
                    // The value must not depend on which joined row updates the row.
                    1 => format!("{} + 1", self.col(&[(a.clone(), t)])),
                    _ => "NULL".to_string(),
                };
                sets.push(format!("{a}.v = {v}"));
            }
            format!("UPDATE {from} SET {}{w}", sets.join(", "))
        } else {
            let mut targets: Vec<String> = Vec::new();
            for _ in 0..1 + self.r.below(2) {
                let a = aliases[self.r.below(aliases.len())].0.clone();
                if !targets.contains(&a) {
                    targets.push(a);
                }
            }
            format!("DELETE {} FROM {from}{w}", targets.join(", "))
        }
    }

    fn query(&mut self) -> String {
        self.n = 0;
        let ncols = 1 + self.r.below(3);
        let mut q = self.select(ncols);
        if self.r.chance(25) {
            let op = ["UNION", "UNION ALL", "INTERSECT", "EXCEPT"][self.r.below(4)];
            q = format!("{q} {op} {}", self.select(ncols));
        }
        q
    }
}

fn render(rows: Vec<Vec<Option<String>>>) -> Vec<String> {
    let mut v: Vec<String> = rows
        .into_iter()
        .map(|r| {
            r.into_iter()
                .map(|c| c.unwrap_or_else(|| "NULL".into()))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn random_queries_agree_with_mariadb() {
    let Some(server) = common::mariadb::Server::start() else {
        return;
    };
    let mut m = common::mariadb::Client::connect(&server.socket).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(EngineOptions {
        datadir: dir.path().to_path_buf(),
        sync_binlog: 0,
        block_cache_size: 8 << 20,
        ..Default::default()
    })
    .unwrap();
    let mut s = Session::new(db.clone(), "root".into(), "localhost".into(), 1);
    for q in [
        "CREATE DATABASE dz",
        "USE dz",
        "CREATE TABLE ja (id INT PRIMARY KEY, x INT, v INT)",
        "CREATE TABLE jb (id INT PRIMARY KEY, aid INT, y INT, v INT, KEY k_aid (aid))",
        "CREATE TABLE jc (bid INT, k INT, v INT)",
        "CREATE TABLE jd (id INT PRIMARY KEY, x INT, v INT, KEY kx (x))",
        "INSERT INTO ja (id, x) VALUES (1, 10), (2, 20), (3, NULL), (4, 1)",
        "INSERT INTO jb (id, aid, y) VALUES (1, 1, 100), (2, 1, 200), (3, 2, 3), (4, 5, NULL), (10, NULL, 1)",
        "INSERT INTO jc (bid, k) VALUES (1, 1), (3, 30), (3, 33), (9, NULL), (NULL, 2)",
        "INSERT INTO jd (id, x) VALUES (1, 10), (2, 99), (4, 4), (5, NULL), (6, 2)",
    ] {
        s.query(q).unwrap();
        m.query(q);
    }
    let seed: u64 = std::env::var("SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(99);
    let n: usize = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    let mut gens = [
        Gen { r: Rng(seed), n: 0 },
        Gen {
            r: Rng(seed ^ 0x5DEE_CE66),
            n: 0,
        },
    ];
    let mut bad = 0;
    let mut errs = 0;
    for (dml, _) in [false, true]
        .into_iter()
        .flat_map(|d| (0..n).map(move |i| (d, i)))
    {
        let g = &mut gens[dml as usize];
        let q = if dml { g.dml() } else { g.query() };
        if dml {
            s.query("BEGIN").unwrap();
            m.query("BEGIN");
            let a = match s.query(&q) {
                Ok(QueryResult::Ok { affected_rows, .. }) => Ok(affected_rows),
                Ok(_) => Err(0),
                Err(e) => Err(e.code),
            };
            let b = match m.query(&q) {
                common::mariadb::Reply::Ok { affected } => Ok(affected),
                common::mariadb::Reply::Rows(..) => Err(0),
                common::mariadb::Reply::Err { code, .. } => Err(code),
            };
            let mut sa = Vec::new();
            let mut sb = Vec::new();
            for t in ["ja", "jb", "jc", "jd"] {
                let sel = format!("SELECT * FROM {t}");
                if let Ok(QueryResult::Rows { rows, .. }) = s.query(&sel) {
                    sa.push(render(
                        rows.into_iter()
                            .map(|r| {
                                r.into_iter()
                                    .map(|v| {
                                        if v.is_null() {
                                            None
                                        } else {
                                            Some(v.to_string())
                                        }
                                    })
                                    .collect()
                            })
                            .collect(),
                    ));
                }
                if let common::mariadb::Reply::Rows(r, _) = m.query(&sel) {
                    sb.push(render(r));
                }
            }
            s.query("ROLLBACK").unwrap();
            m.query("ROLLBACK");
            if a.is_err() || b.is_err() {
                errs += 1;
            }
            if a != b || sa != sb {
                bad += 1;
                if bad <= 10 {
                    eprintln!("MISMATCH {q}\n  onelog:  {a:?} {sa:?}\n  mariadb: {b:?} {sb:?}");
                }
            }
            continue;
        }
        let a = match s.query(&q) {
            Ok(QueryResult::Rows { rows, .. }) => Ok(render(
                rows.into_iter()
                    .map(|r| {
                        r.into_iter()
                            .map(|v| match v {
                                onelog_types::Value::Null => None,
                                onelog_types::Value::Bytes(b) => {
                                    Some(String::from_utf8_lossy(&b).to_string())
                                }
                                o => Some(o.to_string()),
                            })
                            .collect()
                    })
                    .collect(),
            )),
            Ok(_) => Err(0),
            Err(e) => Err(e.code),
        };
        let b = match m.query(&q) {
            common::mariadb::Reply::Rows(r, _) => Ok(render(r)),
            common::mariadb::Reply::Ok { .. } => Err(0),
            common::mariadb::Reply::Err { code, .. } => Err(code),
        };
        if a.is_err() || b.is_err() {
            errs += 1;
        }
        if a != b {
            bad += 1;
            if bad <= 15 {
                eprintln!("MISMATCH {q}\n  onelog:  {a:?}\n  mariadb: {b:?}");
            }
        }
    }
    eprintln!("{} statements, {errs} with errors, {bad} mismatches", 2 * n);
    assert_eq!(bad, 0);
}
