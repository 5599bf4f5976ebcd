//! Random joins (INNER, CROSS, LEFT, RIGHT, nested), correlated and uncorrelated
//! subqueries (EXISTS, IN, NOT IN, ALL, scalar), set operations, window functions and
//! multi-table UPDATE/DELETE over small tables with NULLs, run on onelog and on a private
//! MariaDB 10.11:
//! results (sorted), affected rows, error codes and the tables after each (rolled back)
//! write must agree. Deterministic; `SEED` and `N` (queries per kind) override the defaults.
//!
//! The generator avoids what MariaDB leaves unspecified: a multi-table UPDATE writes only
//! the column `v` (read by no condition), at most one alias per table, from that alias's
//! own columns. A window function whose value depends on the order of rows that are peers
//! (ROW_NUMBER, NTILE, LAG/LEAD, FIRST/LAST/NTH_VALUE, ROWS frames) orders by every column
//! of the joined row after its own keys, so that no two rows are peers; the window
//! functions of one query share one window.

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

    /// Window calls over one window of the columns of `aliases`. (MariaDB 10.11 computes
    /// some functions over the wrong order when one query has windows of different
    /// PARTITION BY / ORDER BY, so a query has one; their frames differ.)
    fn windows(&mut self, aliases: &[(String, usize)]) -> Vec<String> {
        let mut part = Vec::new();
        for _ in 0..self.r.below(3) {
            let c = self.col(aliases);
            if !part.contains(&c) {
                part.push(c);
            }
        }
        // Each column once (a second mention adds nothing to the order).
        let mut order: Vec<String> = Vec::new();
        for _ in 0..self.r.below(3) {
            let c = self.col(aliases);
            if !order.iter().any(|o| o.split(' ').next() == Some(&c)) {
                let dir = if self.r.chance(30) { " DESC" } else { "" };
                order.push(format!("{c}{dir}"));
            }
        }
        // 0: the order is made total (every column of the joined row follows), so
        // functions that depend on the order among peers are deterministic; 1: functions
        // that treat peers alike; 2: RANGE frames with offsets over one key.
        let mode = self.r.below(3);
        if mode == 0 {
            for (a, t) in aliases {
                for c in TABLES[*t].1 {
                    let c = format!("{a}.{c}");
                    if !order.iter().any(|o| o.split(' ').next() == Some(&c)) {
                        order.push(c);
                    }
                }
            }
        }
        if mode == 2 {
            order.truncate(1);
            if order.is_empty() {
                order.push(self.col(aliases));
            }
        }
        let mut spec = Vec::new();
        if !part.is_empty() {
            spec.push(format!("PARTITION BY {}", part.join(", ")));
        }
        if !order.is_empty() {
            spec.push(format!("ORDER BY {}", order.join(", ")));
        }
        let spec = spec.join(" ");
        let mut out = Vec::new();
        for _ in 0..1 + self.r.below(3) {
            let c = self.col(aliases);
            let k = 1 + self.r.below(3);
            // (Not BIT_XOR/BIT_OR: MariaDB 10.11 keeps values that have left a frame.)
            let agg = ["SUM", "COUNT", "AVG", "MIN", "MAX"][self.r.below(5)];
            let (f, frame) = match (mode, self.r.below(6)) {
                (0, 0) => ("ROW_NUMBER()".to_string(), String::new()),
                (0, 1) => (format!("NTILE({k})"), String::new()),
                (0, 2) => (
                    format!("{}({c}, {k})", ["LAG", "LEAD"][self.r.below(2)]),
                    String::new(),
                ),
                (0, 3) => {
                    let f = match self.r.below(3) {
                        0 => format!("FIRST_VALUE({c})"),
                        1 => format!("LAST_VALUE({c})"),
                        _ => format!("NTH_VALUE({c}, {k})"),
                    };
                    (f, self.frame(true))
                }
                (0, _) => (format!("{agg}({c})"), self.frame(true)),
                (1, 0..=3) if !order.is_empty() => {
                    let f = ["RANK()", "DENSE_RANK()", "PERCENT_RANK()", "CUME_DIST()"]
                        [self.r.below(4)];
                    (f.to_string(), String::new())
                }
                (2, 0..=3) => (format!("{agg}({c})"), self.frame(false)),
                _ => (format!("{agg}({c})"), String::new()),
            };
            let sp = [spec.as_str(), frame.as_str()]
                .iter()
                .filter(|x| !x.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            out.push(format!("{f} OVER ({sp})"));
        }
        out
    }

    /// A ROWS or RANGE frame whose bounds MariaDB accepts.
    fn frame(&mut self, rows: bool) -> String {
        let bound = |g: &mut Self| match g.r.below(5) {
            0 => "UNBOUNDED PRECEDING".to_string(),
            1 => format!("{} PRECEDING", g.r.below(15)),
            2 => "CURRENT ROW".to_string(),
            3 => format!("{} FOLLOWING", g.r.below(15)),
            _ => "UNBOUNDED FOLLOWING".to_string(),
        };
        let rank = |b: &str| {
            [
                "UNBOUNDED PRECEDING",
                "PRECEDING",
                "CURRENT",
                "FOLLOWING",
                "UNBOUNDED FOLLOWING",
            ]
            .iter()
            .position(|k| b.ends_with(k) && (k.starts_with("UNB") == b.starts_with("UNB")))
            .unwrap_or(2)
        };
        let (mut a, mut b) = (bound(self), bound(self));
        let offset = |x: &str| x.split(' ').next().and_then(|n| n.parse::<i64>().ok());
        // No frame that ends before it starts (MariaDB's RANGE cursors give such frames
        // rows).
        let key = |x: &str| {
            let n = offset(x).unwrap_or(0);
            (rank(x), if x.ends_with("PRECEDING") { -n } else { n })
        };
        if key(&a) > key(&b) {
            std::mem::swap(&mut a, &mut b);
        }
        if a == "UNBOUNDED FOLLOWING" {
            a = "CURRENT ROW".into();
        }
        if b == "UNBOUNDED PRECEDING" {
            b = "CURRENT ROW".into();
        }
        let units = if rows { "ROWS" } else { "RANGE" };
        format!("{units} BETWEEN {a} AND {b}")
    }

    /// A SELECT with window functions over one table or a join of two.
    fn window_query(&mut self) -> String {
        self.n = 0;
        let (mut from, mut aliases) = self.leaf();
        if self.r.chance(40) {
            let (rt, ra) = self.leaf();
            let kind = ["JOIN", "LEFT JOIN"][self.r.below(2)];
            let c = self.cond(&aliases, &ra);
            from = format!("{from} {kind} {rt} ON {c}");
            aliases.extend(ra);
        }
        let mut items = vec![self.col(&aliases)];
        items.extend(self.windows(&aliases));
        let mut q = format!("SELECT {} FROM {from}", items.join(", "));
        if self.r.chance(30) {
            q = format!("{q} WHERE {} > {}", self.col(&aliases), self.r.below(25));
        }
        q
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
        Gen {
            r: Rng(seed ^ 0x2545_F491),
            n: 0,
        },
    ];
    let mut bad = 0;
    let mut errs = 0;
    let mut window_errs = 0;
    for (kind, _) in (0..3).flat_map(|k| (0..n).map(move |i| (k, i))) {
        let g = &mut gens[kind];
        let dml = kind == 1;
        let q = match kind {
            0 => g.query(),
            1 => g.dml(),
            _ => g.window_query(),
        };
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
            Ok(QueryResult::Rows { rows, columns }) => Ok(render(
                rows.into_iter()
                    .map(|r| {
                        r.into_iter()
                            .zip(&columns)
                            .map(|(v, c)| match v {
                                onelog_types::Value::Null => None,
                                onelog_types::Value::Bytes(b) => {
                                    Some(String::from_utf8_lossy(&b).to_string())
                                }
                                // A DOUBLE of fixed decimals as the text protocol sends it.
                                onelog_types::Value::Double(d) if c.decimals < 31 => {
                                    Some(format!("{d:.p$}", p = c.decimals as usize))
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
            window_errs += (kind == 2) as usize;
        }
        if a != b {
            bad += 1;
            if bad <= 15 {
                eprintln!("MISMATCH {q}\n  onelog:  {a:?}\n  mariadb: {b:?}");
            }
        }
    }
    eprintln!(
        "{} statements, {errs} with errors ({window_errs} of the window queries), {bad} mismatches",
        3 * n
    );
    assert_eq!(bad, 0);
}
