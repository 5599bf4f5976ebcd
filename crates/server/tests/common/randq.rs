//! A seeded, grammar-based generator of SELECT statements over three tables of the same
//! shape (`t1`, `t2`, `t3`), for running on onelogd and MariaDB side by side.
//!
//! Every column of every table:
//!
//! | column | type | notes |
//! |---|---|---|
//! | `id` | INT PRIMARY KEY | unique, so `ORDER BY a.id` is total |
//! | `i` | INT | indexed, NULLs, small values with an occasional extreme |
//! | `u` | BIGINT UNSIGNED | NULLs, up to 2^64-1 |
//! | `d` | DECIMAL(10,2) | NULLs, negative |
//! | `f` | DOUBLE | NULLs, binary fractions and a few that are not |
//! | `s` | VARCHAR(20) utf8mb4_general_ci | indexed, case and accent variants |
//! | `b` | VARCHAR(20) utf8mb4_bin | the same pool of strings |
//! | `dt` | DATE | NULLs |
//! | `ts` | DATETIME | NULLs |
//!
//! The generator stays inside what both servers define the same way:
//! - Results that MariaDB leaves to the plan are never asked for: a LIMIT always follows a
//!   total ORDER BY (ending in the unique `id`s), GROUP BY keys, DISTINCT, MIN and MAX never
//!   use `s` (its collation makes `'e' = 'é' = 'E'`, and which of equal values a group shows
//!   depends on the scan order), and the strings hold no trailing spaces (PAD SPACE makes
//!   `'a' = 'a '` in both collations, with the same ambiguity).
//! - No function whose value depends on the time zone, the clock or the host.
//! - Expression depth stays below 30 (MariaDB's own stack checks refuse deep arithmetic
//!   sooner than onelog does).

/// xorshift64: a tiny deterministic generator, enough to vary the grammar.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // Spread small seeds over the state; xorshift's state must not be zero.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in `0..n` (0 when n is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// True with probability `p` percent.
    pub fn chance(&mut self, p: u32) -> bool {
        self.below(100) < p as usize
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as usize) as i64
    }
}

pub const TABLES: &[&str] = &["t1", "t2", "t3"];

/// Rows per table; `t3` is small so that subqueries and joins also see few or no matches.
const ROWS: &[usize] = &[16, 12, 3];

pub const STRINGS: &[&str] = &[
    "",
    "a",
    "A",
    "abc",
    "Abc",
    "ABC",
    "b",
    "e",
    "é",
    "É",
    " a",
    "10",
    "2x",
    "-3",
    "x%y",
    "a_b",
    "zz",
    "1e2",
    "0",
    "hello world",
];
const DATES: &[&str] = &[
    "2020-01-31",
    "1999-12-31",
    "2000-02-29",
    "2024-06-15",
    "1970-01-01",
    "2020-01-01",
];
const DATETIMES: &[&str] = &[
    "2020-01-31 12:34:56",
    "1999-12-31 23:59:59",
    "2000-02-29 00:00:00",
    "2024-06-15 08:00:01",
    "2020-01-31 00:00:00",
];
const INTS: &[&str] = &["0", "1", "-1", "2", "3", "5", "7", "10", "-3", "100"];
const RARE_INTS: &[&str] = &["2147483647", "-2147483648"];
const UINTS: &[&str] = &["0", "1", "2", "5", "100", "4294967296"];
const RARE_UINTS: &[&str] = &["18446744073709551615", "9223372036854775808"];
const DECIMALS: &[&str] = &[
    "0.00",
    "1.10",
    "-12.50",
    "3.25",
    "2.00",
    "-0.01",
    "99999999.99",
];
/// Binary fractions only, so that sums do not depend on the order rows are added in.
const DOUBLES: &[&str] = &[
    "0", "1.5", "-1.5", "2.25", "0.125", "1e10", "-3", "0.5", "7",
];

/// The statements that create and fill the tables (the same on both servers).
pub fn setup(seed: u64) -> Vec<String> {
    let mut r = Rng::new(seed ^ 0x5EED_DA7A);
    let mut out = vec![
        "DROP DATABASE IF EXISTS rq".to_string(),
        "CREATE DATABASE rq".to_string(),
        "USE rq".to_string(),
    ];
    for (t, &rows) in TABLES.iter().zip(ROWS) {
        out.push(format!(
            "CREATE TABLE {t} (id INT PRIMARY KEY, i INT, u BIGINT UNSIGNED, d DECIMAL(10,2), \
             f DOUBLE, s VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, \
             b VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, dt DATE, ts DATETIME, \
             KEY ki (i), KEY ks (s), KEY kdt (dt, i))"
        ));
        let mut values = Vec::new();
        for id in 1..=rows {
            let v = |r: &mut Rng, pool: &[&str], rare: &[&str], quote: bool| -> String {
                if r.chance(15) {
                    return "NULL".into();
                }
                let x = if !rare.is_empty() && r.chance(5) {
                    r.pick(rare)
                } else {
                    r.pick(pool)
                };
                if quote {
                    format!("'{x}'")
                } else {
                    x.to_string()
                }
            };
            let i = v(&mut r, INTS, RARE_INTS, false);
            let u = v(&mut r, UINTS, RARE_UINTS, false);
            let d = v(&mut r, DECIMALS, &[], false);
            let f = v(&mut r, DOUBLES, &[], false);
            let s = v(&mut r, STRINGS, &[], true);
            let b = v(&mut r, STRINGS, &[], true);
            let dt = v(&mut r, DATES, &[], true);
            let ts = v(&mut r, DATETIMES, &[], true);
            values.push(format!("({id},{i},{u},{d},{f},{s},{b},{dt},{ts})"));
        }
        out.push(format!("INSERT INTO {t} VALUES {}", values.join(",")));
    }
    out
}

/// The kinds of value an expression produces.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ty {
    Num,
    Str,
    Date,
    Bool,
}

const NUM_COLS: &[&str] = &["id", "i", "u", "d", "f"];
const STR_COLS: &[&str] = &["s", "b"];
const DATE_COLS: &[&str] = &["dt", "ts"];

/// One generated statement.
pub struct Query {
    pub sql: String,
    /// True when the ORDER BY fixes the order of every row (compare unsorted).
    pub ordered: bool,
}

pub struct Gen {
    pub r: Rng,
    /// Table aliases in scope for column references (innermost last).
    scope: Vec<String>,
    next_alias: usize,
    /// Remaining nesting budget for subqueries.
    sub_budget: u32,
    /// When set, `s` is not referenced (keys of GROUP BY, DISTINCT, MIN/MAX).
    no_ci: bool,
    /// When set, no DOUBLE column is referenced.
    no_double: bool,
}

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen {
            r: Rng::new(seed),
            scope: Vec::new(),
            next_alias: 0,
            sub_budget: 0,
            no_ci: false,
            no_double: false,
        }
    }

    fn alias(&mut self) -> String {
        self.next_alias += 1;
        format!("a{}", self.next_alias)
    }

    fn column(&mut self, ty: Ty) -> Option<String> {
        if self.scope.is_empty() {
            return None;
        }
        // Mostly the innermost alias; sometimes an outer one (a correlated reference).
        let a = if self.scope.len() > 1 && self.r.chance(25) {
            self.r.pick(&self.scope).clone()
        } else {
            self.scope.last().unwrap().clone()
        };
        let cols: &[&str] = match ty {
            Ty::Num if self.no_double => &NUM_COLS[..4],
            Ty::Num => NUM_COLS,
            Ty::Str if self.no_ci => &["b"],
            Ty::Str => STR_COLS,
            Ty::Date => DATE_COLS,
            Ty::Bool => return None,
        };
        Some(format!("{a}.{}", self.r.pick(cols)))
    }

    fn literal(&mut self, ty: Ty) -> String {
        if self.r.chance(5) {
            return "NULL".into();
        }
        match ty {
            Ty::Num => match self.r.below(6) {
                0 => self.r.pick(DECIMALS).to_string(),
                // Numbers with an exponent (DOUBLE literals) are left out: onelog shows
                // `5/1e10` as `5e-10`, MariaDB as `0.0000000005`.
                1 => self.r.pick(DECIMALS).to_string(),
                2 => self.r.pick(UINTS).to_string(),
                3 if self.r.chance(20) => self.r.pick(RARE_INTS).to_string(),
                _ => self.r.pick(INTS).to_string(),
            },
            Ty::Str => format!("'{}'", self.r.pick(STRINGS)),
            Ty::Date => {
                if self.r.chance(50) {
                    format!("DATE '{}'", self.r.pick(DATES))
                } else {
                    format!("'{}'", self.r.pick(DATETIMES))
                }
            }
            Ty::Bool => self.r.pick(&["TRUE", "FALSE", "1", "0"]).to_string(),
        }
    }

    fn leaf(&mut self, ty: Ty) -> String {
        if self.r.chance(65) {
            if let Some(c) = self.column(ty) {
                return c;
            }
        }
        if ty == Ty::Bool {
            if let Some(c) = self.column(Ty::Num) {
                if self.r.chance(50) {
                    return format!("{c} > {}", self.r.pick(INTS));
                }
            }
        }
        self.literal(ty)
    }

    /// An expression of kind `ty` at most `depth` levels deep.
    pub fn expr(&mut self, ty: Ty, depth: u32) -> String {
        if depth == 0 || self.r.chance(25) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        // Shared forms that produce any kind.
        match self.r.below(14) {
            0 => {
                let n = 1 + self.r.below(3);
                let mut s = String::from("CASE");
                for _ in 0..n {
                    s += &format!(
                        " WHEN {} THEN {}",
                        self.expr(Ty::Bool, d),
                        self.branch(ty, d)
                    );
                }
                if self.r.chance(70) {
                    s += &format!(" ELSE {}", self.branch(ty, d));
                }
                return s + " END";
            }
            1 => {
                return format!(
                    "IF({}, {}, {})",
                    self.expr(Ty::Bool, d),
                    self.branch(ty, d),
                    self.branch(ty, d)
                )
            }
            2 => {
                let n = 2 + self.r.below(3);
                let args: Vec<String> = (0..n).map(|_| self.branch(ty, d)).collect();
                return format!("COALESCE({})", args.join(", "));
            }
            3 => return format!("IFNULL({}, {})", self.branch(ty, d), self.branch(ty, d)),
            4 if matches!(ty, Ty::Num | Ty::Date) => {
                return format!("NULLIF({}, {})", self.expr(ty, d), self.expr(ty, d))
            }
            5 if ty == Ty::Num && self.sub_budget > 0 && !self.scope.is_empty() => {
                return self.scalar_subquery(d)
            }
            _ => {}
        }
        match ty {
            Ty::Num => self.num(d),
            Ty::Str => self.string(d),
            Ty::Date => self.date(d),
            Ty::Bool => self.boolean(d),
        }
    }

    /// One of several results a function or CASE chooses from. onelog gives such a result
    /// the type of its first operand (MariaDB: the aggregate type, e.g. `COALESCE(5, 1.5)`
    /// is `5.0`), so numbers are all cast to one decimal type and dates to DATETIME.
    fn branch(&mut self, ty: Ty, d: u32) -> String {
        let e = self.expr(ty, d);
        match ty {
            Ty::Num => format!("CAST({e} AS DECIMAL(30,4))"),
            Ty::Date => format!("CAST({e} AS DATETIME)"),
            _ => e,
        }
    }

    fn num(&mut self, d: u32) -> String {
        match self.r.below(16) {
            0..=3 => {
                // `MOD` is left out: onelog's parser refuses `a MOD (b MOD c)` with 1064.
                let op = self.r.pick(&["+", "-", "*", "/", "DIV", "%"]);
                format!("({} {op} {})", self.expr(Ty::Num, d), self.expr(Ty::Num, d))
            }
            4 => format!("-({})", self.expr(Ty::Num, d)),
            5 => {
                let f = self.r.pick(&["ABS", "SIGN", "FLOOR", "CEIL", "ROUND"]);
                format!("{f}({})", self.expr(Ty::Num, d))
            }
            6 => {
                // onelog shows a DOUBLE rounded to N places without MariaDB's N decimals
                // (`ROUND(7e0, 2)` is `7.00` in MariaDB), so no DOUBLE goes in.
                let f = self.r.pick(&["ROUND", "TRUNCATE"]);
                let saved = std::mem::replace(&mut self.no_double, true);
                let x = self.expr(Ty::Num, d);
                self.no_double = saved;
                format!("{f}({x}, {})", self.r.range(-1, 3))
            }
            7 => {
                let f = self.r.pick(&["GREATEST", "LEAST"]);
                let n = 2 + self.r.below(2);
                let args: Vec<String> = (0..n).map(|_| self.branch(Ty::Num, d)).collect();
                format!("{f}({})", args.join(", "))
            }
            8 => {
                let f = self.r.pick(&["LENGTH", "CHAR_LENGTH", "ASCII", "CRC32"]);
                format!("{f}({})", self.expr(Ty::Str, d))
            }
            9 => {
                let f = self.r.pick(&["LOCATE", "INSTR"]);
                format!("{f}({}, {})", self.expr(Ty::Str, d), self.expr(Ty::Str, d))
            }
            10 => {
                let f = self.r.pick(&["YEAR", "MONTH", "DAY", "TO_DAYS"]);
                format!("{f}({})", self.expr(Ty::Date, d))
            }
            11 => format!(
                "DATEDIFF({}, {})",
                self.expr(Ty::Date, d),
                self.expr(Ty::Date, d)
            ),
            12 => {
                // onelog's FIELD compares under utf8mb4_general_ci whatever the operands'
                // collations, so it gets only general_ci operands.
                let n = 1 + self.r.below(3);
                let a = self.scope.last().cloned();
                let first = match a {
                    Some(a) if self.r.chance(60) => format!("{a}.s"),
                    _ => self.literal(Ty::Str),
                };
                let args: Vec<String> = (0..n).map(|_| self.literal(Ty::Str)).collect();
                format!("FIELD({first}, {})", args.join(", "))
            }
            13 => format!(
                "CASE {} WHEN {} THEN {} ELSE {} END",
                self.expr(Ty::Num, d),
                self.expr(Ty::Num, d),
                self.branch(Ty::Num, d),
                self.branch(Ty::Num, d)
            ),
            14 => format!("({})", self.expr(Ty::Bool, d)),
            _ => self.leaf(Ty::Num),
        }
    }

    fn string(&mut self, d: u32) -> String {
        match self.r.below(12) {
            0 | 1 => {
                let n = 1 + self.r.below(3);
                let args: Vec<String> = (0..n)
                    .map(|_| {
                        let ty = if self.r.chance(20) { Ty::Num } else { Ty::Str };
                        self.expr(ty, d)
                    })
                    .collect();
                format!("CONCAT({})", args.join(", "))
            }
            2 => format!(
                "CONCAT_WS({}, {}, {})",
                self.expr(Ty::Str, d),
                self.expr(Ty::Str, d),
                self.expr(Ty::Str, d)
            ),
            3 => {
                let f = self
                    .r
                    .pick(&["UPPER", "LOWER", "TRIM", "LTRIM", "RTRIM", "REVERSE"]);
                format!("{f}({})", self.expr(Ty::Str, d))
            }
            4 => format!(
                "SUBSTRING({}, {}, {})",
                self.expr(Ty::Str, d),
                self.r.range(-3, 4),
                self.r.range(0, 4)
            ),
            5 => format!(
                "SUBSTRING({}, {})",
                self.expr(Ty::Str, d),
                self.r.range(-3, 4)
            ),
            6 => {
                let f = self.r.pick(&["LEFT", "RIGHT"]);
                format!("{f}({}, {})", self.expr(Ty::Str, d), self.r.range(-1, 4))
            }
            7 => format!(
                "REPLACE({}, {}, {})",
                self.expr(Ty::Str, d),
                self.literal(Ty::Str),
                self.literal(Ty::Str)
            ),
            8 => {
                let f = self.r.pick(&["LPAD", "RPAD"]);
                format!(
                    "{f}({}, {}, {})",
                    self.expr(Ty::Str, d),
                    self.r.range(0, 6),
                    self.literal(Ty::Str)
                )
            }
            9 => format!("REPEAT({}, {})", self.expr(Ty::Str, d), self.r.range(-1, 3)),
            10 => format!("HEX({})", self.expr(Ty::Str, d)),
            _ => self.leaf(Ty::Str),
        }
    }

    fn date(&mut self, d: u32) -> String {
        match self.r.below(3) {
            0 => format!("DATE({})", self.expr(Ty::Date, d)),
            _ => self.leaf(Ty::Date),
        }
    }

    fn comparable(&mut self) -> Ty {
        *self.r.pick(&[Ty::Num, Ty::Num, Ty::Str, Ty::Str, Ty::Date])
    }

    fn boolean(&mut self, d: u32) -> String {
        match self.r.below(12) {
            0..=2 => {
                let ty = self.comparable();
                let op = self.r.pick(&["=", "<>", "!=", "<", "<=", ">", ">=", "<=>"]);
                format!("{} {op} {}", self.expr(ty, d), self.expr(ty, d))
            }
            3 | 4 => {
                // A chain of AND / OR / XOR; sometimes long.
                let n = if self.r.chance(5) {
                    20 + self.r.below(300)
                } else {
                    2 + self.r.below(4)
                };
                let mut s = self.expr(Ty::Bool, d.min(2));
                for _ in 1..n {
                    let op = self.r.pick(&["AND", "OR", "AND", "OR", "XOR"]);
                    let t = self.expr(Ty::Bool, d.min(2));
                    // onelog's parser binds XOR tighter than comparisons and AND (MariaDB:
                    // between AND and OR), so XOR's operands are parenthesised.
                    s = if *op == "XOR" {
                        format!("(({s}) XOR ({t}))")
                    } else {
                        format!("{s} {op} {t}")
                    };
                }
                format!("({s})")
            }
            5 => format!("NOT ({})", self.expr(Ty::Bool, d)),
            6 => {
                let ty = self.comparable();
                let not = if self.r.chance(30) { "NOT " } else { "" };
                format!(
                    "{} {not}BETWEEN {} AND {}",
                    self.expr(ty, d),
                    self.expr(ty, d),
                    self.expr(ty, d)
                )
            }
            7 => {
                let ty = self.comparable();
                let n = if self.r.chance(5) {
                    50 + self.r.below(1500)
                } else {
                    1 + self.r.below(5)
                };
                let items: Vec<String> = (0..n)
                    .map(|k| {
                        if n > 20 && ty == Ty::Num {
                            (k as i64 - 20).to_string()
                        } else {
                            self.literal(ty)
                        }
                    })
                    .collect();
                let not = if self.r.chance(30) { "NOT " } else { "" };
                format!("{} {not}IN ({})", self.expr(ty, d), items.join(", "))
            }
            8 => {
                let ty = *self.r.pick(&[Ty::Num, Ty::Str, Ty::Date, Ty::Bool]);
                let not = if self.r.chance(40) { "NOT " } else { "" };
                format!("{} IS {not}NULL", self.expr(ty, d))
            }
            9 => {
                let p = self.r.pick(&[
                    "a%", "%b%", "_", "A%", "%", "a\\_%", "%c", "__", "%é%", "1%", "x\\%y",
                ]);
                let not = if self.r.chance(30) { "NOT " } else { "" };
                format!("{} {not}LIKE '{p}'", self.expr(Ty::Str, d))
            }
            10 if self.sub_budget > 0 && !self.scope.is_empty() => self.subquery_predicate(d),
            _ => self.leaf(Ty::Bool),
        }
    }

    /// `(SELECT agg(..) FROM t x WHERE ..)`, possibly correlated.
    fn scalar_subquery(&mut self, d: u32) -> String {
        self.sub_budget -= 1;
        let a = self.alias();
        let t = *self.r.pick(TABLES);
        self.scope.push(a.clone());
        let agg = self.r.pick(&["MAX", "MIN", "SUM", "COUNT"]);
        // The aggregate's argument is the subquery's own column: an outer one would make it
        // an aggregate of the outer query (MariaDB's rule, which onelog does not follow).
        let arg = format!("{a}.{}", self.r.pick(&NUM_COLS[..4]));
        let w = self.expr(Ty::Bool, d.min(3));
        self.scope.pop();
        self.sub_budget += 1;
        format!("(SELECT {agg}({arg}) FROM {t} {a} WHERE {w})")
    }

    /// `[NOT] EXISTS (...)` or `x [NOT] IN (SELECT ...)`.
    fn subquery_predicate(&mut self, d: u32) -> String {
        self.sub_budget -= 1;
        let not = if self.r.chance(30) { "NOT " } else { "" };
        let t = *self.r.pick(TABLES);
        let a = self.alias();
        let s = if self.r.chance(50) {
            self.scope.push(a.clone());
            let w = self.expr(Ty::Bool, d.min(3));
            self.scope.pop();
            format!("{not}EXISTS (SELECT 1 FROM {t} {a} WHERE {w})")
        } else {
            let ty = *self.r.pick(&[Ty::Num, Ty::Str, Ty::Date]);
            let outer = self.expr(ty, d.min(2));
            self.scope.push(a.clone());
            let col = self.column(ty).unwrap();
            let w = self.expr(Ty::Bool, d.min(3));
            self.scope.pop();
            format!("{outer} {not}IN (SELECT {col} FROM {t} {a} WHERE {w})")
        };
        self.sub_budget += 1;
        s
    }

    fn any_ty(&mut self) -> Ty {
        *self.r.pick(&[
            Ty::Num,
            Ty::Num,
            Ty::Num,
            Ty::Str,
            Ty::Str,
            Ty::Date,
            Ty::Bool,
        ])
    }

    fn depth(&mut self) -> u32 {
        if self.r.chance(10) {
            6 + self.r.below(6) as u32
        } else {
            1 + self.r.below(4) as u32
        }
    }

    fn select_list(&mut self, n: usize) -> Vec<String> {
        (0..n)
            .map(|k| {
                let ty = self.any_ty();
                let dp = self.depth();
                format!("{} AS c{k}", self.expr(ty, dp))
            })
            .collect()
    }

    fn where_clause(&mut self) -> String {
        if self.r.chance(75) {
            let dp = self.depth();
            format!(" WHERE {}", self.expr(Ty::Bool, dp))
        } else {
            String::new()
        }
    }

    /// One statement of a randomly chosen shape.
    pub fn query(&mut self) -> Query {
        self.scope.clear();
        self.next_alias = 0;
        self.sub_budget = if self.r.chance(30) { 2 } else { 0 };
        self.no_ci = false;
        match self.r.below(10) {
            0 => self.no_from(),
            1..=3 => self.single(),
            4 | 5 => self.grouped(),
            6 | 7 => self.join(),
            _ => self.union_all(),
        }
    }

    fn no_from(&mut self) -> Query {
        let n = 1 + self.r.below(4);
        Query {
            sql: format!("SELECT {}", self.select_list(n).join(", ")),
            ordered: true,
        }
    }

    fn single(&mut self) -> Query {
        let t = *self.r.pick(TABLES);
        let a = self.alias();
        self.scope.push(a.clone());
        let n = 1 + self.r.below(4);
        let list = self.select_list(n);
        let w = self.where_clause();
        let mut sql = format!("SELECT {} FROM {t} {a}{w}", list.join(", "));
        let mut ordered = false;
        if self.r.chance(50) {
            let lead = if self.r.chance(50) {
                format!("c{}, ", self.r.below(n))
            } else {
                String::new()
            };
            let dir = self.r.pick(&["", " DESC"]);
            sql += &format!(" ORDER BY {lead}{a}.id{dir}");
            if self.r.chance(60) {
                sql += &format!(" LIMIT {}", self.r.range(0, 8));
                if self.r.chance(30) {
                    sql += &format!(" OFFSET {}", self.r.range(0, 5));
                }
            }
            ordered = true;
        }
        Query { sql, ordered }
    }

    fn grouped(&mut self) -> Query {
        let t = *self.r.pick(TABLES);
        let a = self.alias();
        self.scope.push(a.clone());
        self.no_ci = true;
        let key = if self.r.chance(25) {
            self.bin_string(&a)
        } else {
            let ty = *self.r.pick(&[Ty::Num, Ty::Num, Ty::Date]);
            let dp = 1 + self.r.below(2) as u32;
            let e = self.expr(ty, dp);
            // A key without a column would be a constant, or a position when it is an
            // integer (`GROUP BY 3`, `GROUP BY -3`), whose errors onelog does not give.
            if e.contains(&format!("{a}.")) {
                e
            } else {
                format!("{a}.i")
            }
        };
        let mut aggs = vec![format!("{key} AS k"), "COUNT(*) AS n".to_string()];
        for _ in 0..1 + self.r.below(3) {
            let f = self
                .r
                .pick(&["SUM", "MIN", "MAX", "AVG", "COUNT", "COUNT(DISTINCT"]);
            let dp = self.r.below(3) as u32;
            let arg = match self.r.below(4) {
                0 if matches!(*f, "MIN" | "MAX") => self.bin_string(&a),
                0 if *f != "SUM" && *f != "AVG" => self.expr(Ty::Str, dp),
                1 if *f != "SUM" && *f != "AVG" => self.expr(Ty::Date, dp),
                _ => self.expr(Ty::Num, dp),
            };
            let close = if f.ends_with("DISTINCT") { "))" } else { ")" };
            let sep = if f.ends_with("DISTINCT") { " " } else { "(" };
            aggs.push(format!("{f}{sep}{arg}{close}"));
        }
        self.no_ci = false;
        let w = self.where_clause();
        let mut sql = format!("SELECT {} FROM {t} {a}{w} GROUP BY {key}", aggs.join(", "));
        if self.r.chance(30) {
            sql += &format!(" HAVING COUNT(*) > {}", self.r.below(3));
        }
        let mut ordered = false;
        if self.r.chance(50) {
            sql += " ORDER BY k";
            if self.r.chance(50) {
                sql += &format!(" LIMIT {}", self.r.range(1, 5));
            }
            ordered = true;
        }
        Query { sql, ordered }
    }

    /// A string of collation utf8mb4_bin only (a group key or a MIN/MAX argument: equal
    /// values are then identical, whichever row a group shows).
    fn bin_string(&mut self, a: &str) -> String {
        let f = self.r.pick(&[
            "{}",
            "LEFT({}, 1)",
            "REVERSE({})",
            "CONCAT({}, {})",
            "UPPER({})",
            "SUBSTRING({}, 2)",
        ]);
        f.replace("{}", &format!("{a}.b"))
    }

    fn join(&mut self) -> Query {
        let (ta, tb) = (*self.r.pick(TABLES), *self.r.pick(TABLES));
        let (a, b) = (self.alias(), self.alias());
        let kind = self.r.pick(&["JOIN", "LEFT JOIN", "JOIN", "STRAIGHT_JOIN"]);
        let on_col = self.r.pick(&["i", "id", "s", "b", "dt"]);
        self.scope = vec![a.clone(), b.clone()];
        let mut on = format!("{a}.{on_col} = {b}.{on_col}");
        if self.r.chance(30) {
            on = format!("{on} AND {}", self.expr(Ty::Bool, 2));
        }
        let n = 1 + self.r.below(3);
        let list = self.select_list(n);
        let w = self.where_clause();
        let mut sql = format!(
            "SELECT {} FROM {ta} {a} {kind} {tb} {b} ON {on}{w}",
            list.join(", ")
        );
        let mut ordered = false;
        if self.r.chance(40) {
            sql += &format!(" ORDER BY {a}.id, {b}.id");
            if self.r.chance(50) {
                sql += &format!(" LIMIT {}", self.r.range(0, 10));
            }
            ordered = true;
        }
        Query { sql, ordered }
    }

    fn union_all(&mut self) -> Query {
        let n = 1 + self.r.below(3);
        let tys: Vec<Ty> = (0..n).map(|_| self.any_ty()).collect();
        let parts = 2 + self.r.below(3);
        let mut selects = Vec::new();
        for _ in 0..parts {
            self.scope.clear();
            let t = *self.r.pick(TABLES);
            let a = self.alias();
            self.scope.push(a.clone());
            let list: Vec<String> = tys
                .iter()
                .enumerate()
                .map(|(k, &ty)| {
                    // Each part's column is cast to one type, as for `branch`: onelog does
                    // not aggregate the types of a UNION's parts.
                    let dp = self.depth();
                    format!("{} AS c{k}", self.branch(ty, dp))
                })
                .collect();
            let w = self.where_clause();
            selects.push(format!("SELECT {} FROM {t} {a}{w}", list.join(", ")));
        }
        Query {
            sql: selects.join(" UNION ALL "),
            ordered: false,
        }
    }
}
