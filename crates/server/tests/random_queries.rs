//! Random queries on onelogd and MariaDB 10.11 side by side: a seeded grammar
//! (`common/randq.rs`) generates SELECTs over the same small tables on both servers, and
//! every one must give the same rows (as text; sorted unless the ORDER BY is total) or an
//! error on both (the same code where MariaDB's code is one onelog has). Every statement
//! runs under `max_statement_time`: a 1969 or a statement slower than the limit fails the
//! test, and onelogd must still run, without a panic, at the end.
//!
//! `ONELOG_RANDQ_SEED` (default 1) and `ONELOG_RANDQ_N` (default 1500) choose the queries;
//! the seed is printed first and in every failure. `ONELOG_RANDQ_KEEP_GOING=1` reports all
//! differences instead of stopping at the first. `make soak` runs 20,000 with a time seed.
//! The test is ignored by `make test` while onelog still differs from MariaDB on queries
//! it generates (see the reason on the test).

mod common;
#[path = "common/randq.rs"]
mod randq;

use common::mariadb::MariaDb;
use common::*;
use mysql::prelude::Queryable;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// `max_statement_time` on both servers, in seconds.
const LIMIT_S: u64 = 10;
/// How much longer than the limit a statement may take before it counts as a hang.
const MARGIN: Duration = Duration::from_secs(5);

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

/// The error codes onelog defines (`ER_*` constants in `onelog-types`).
fn onelog_codes() -> HashSet<u16> {
    include_str!("../../types/src/error.rs")
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("pub const ER_")?;
            let v = rest.split(": u16 = ").nth(1)?;
            v.trim_end_matches(';').parse().ok()
        })
        .collect()
}

/// A statement's outcome, as text.
#[derive(Debug, PartialEq)]
enum Outcome {
    Rows(Vec<Vec<Option<String>>>),
    Err(u16, String),
}

fn run(c: &mut mysql::Conn, sql: &str) -> Result<Outcome, String> {
    match c.query_iter(sql) {
        Ok(mut res) => {
            let mut rows = Vec::new();
            let set = match res.iter() {
                Some(set) => set,
                None => return Ok(Outcome::Rows(rows)),
            };
            for row in set {
                match row {
                    Ok(row) => rows.push(row.unwrap().into_iter().map(text).collect()),
                    Err(mysql::Error::MySqlError(e)) => return Ok(Outcome::Err(e.code, e.message)),
                    Err(e) => return Err(e.to_string()),
                }
            }
            Ok(Outcome::Rows(rows))
        }
        Err(mysql::Error::MySqlError(e)) => Ok(Outcome::Err(e.code, e.message)),
        Err(e) => Err(e.to_string()),
    }
}

/// A text-protocol value as the text the server sent (NULL as None).
fn text(v: mysql::Value) -> Option<String> {
    match v {
        mysql::Value::NULL => None,
        mysql::Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        other => Some(format!("{other:?}")),
    }
}

fn show(o: &Outcome) -> String {
    match o {
        Outcome::Err(code, msg) => format!("ERROR {code}: {msg}"),
        Outcome::Rows(rows) => {
            let mut s = format!("{} rows", rows.len());
            for r in rows.iter().take(30) {
                let cells: Vec<&str> = r.iter().map(|c| c.as_deref().unwrap_or("NULL")).collect();
                s += &format!("\n  {}", cells.join(" | "));
            }
            if rows.len() > 30 {
                s += "\n  ...";
            }
            s
        }
    }
}

#[test]
#[ignore = "finds 11 differences from MariaDB at seed 1 that onelog does not fix yet \
            (wrong results: DECIMAL precision of division, DOUBLE display, row counts); \
            run by `make soak`"]
fn random_queries_match_mariadb() {
    let Some(mut maria) = MariaDb::start("random_queries_match_mariadb") else {
        return;
    };
    let seed = env_u64(
        "ONELOG_RANDQ_SEED",
        1, // a fixed default keeps `make test` repeatable; `make soak` varies it
    );
    let n = env_u64("ONELOG_RANDQ_N", 1500);
    let keep_going = std::env::var("ONELOG_RANDQ_KEEP_GOING").is_ok_and(|v| v == "1");
    println!("random queries: ONELOG_RANDQ_SEED={seed} ONELOG_RANDQ_N={n}");

    let mut onelog = Server::start(&[]);
    let mut oc = onelog.conn(None);
    let mut mc = maria.conn(None);
    for c in [&mut oc, &mut mc] {
        c.query_drop(format!("SET max_statement_time = {LIMIT_S}"))
            .unwrap();
        for sql in randq::setup(seed) {
            if std::env::var("RQ_DUMP").is_ok() {
                println!("{sql};");
            }
            c.query_drop(&sql)
                .unwrap_or_else(|e| panic!("seed {seed}: set-up {sql}: {e}"));
        }
    }
    let codes = onelog_codes();
    let limit = Duration::from_secs(LIMIT_S) + MARGIN;
    let mut g = randq::Gen::new(seed);
    let mut failures = Vec::new();
    let mut errors_both = 0;
    let started = Instant::now();
    let mut ran = 0;
    for k in 0..n {
        ran += 1;
        let q = g.query();
        let fail = |what: String| {
            format!(
                "ONELOG_RANDQ_SEED={seed} query #{k}: {what}\n  SQL: {}",
                q.sql
            )
        };
        let t = Instant::now();
        let o = run(&mut oc, &q.sql);
        let to = t.elapsed();
        let t = Instant::now();
        let m = run(&mut mc, &q.sql);
        let tm = t.elapsed();
        let (mut o, mut m) = match (o, m) {
            (Ok(o), Ok(m)) => (o, m),
            (o, m) => {
                let o = o.map(|o| show(&o)).unwrap_or_else(|e| e);
                let m = m.map(|m| show(&m)).unwrap_or_else(|e| e);
                panic!(
                    "{}\n  onelog: {o}\n  mariadb: {m}\nonelogd log:\n{}",
                    fail("a connection failed (crash?)".into()),
                    onelog.log_text()
                );
            }
        };
        if to > limit || tm > limit {
            failures.push(fail(format!(
                "took {to:?} on onelog, {tm:?} on MariaDB (limit {LIMIT_S} s)"
            )));
        }
        for (side, out) in [("onelog", &o), ("mariadb", &m)] {
            if matches!(out, Outcome::Err(1969, _)) {
                failures.push(fail(format!("{side} hit max_statement_time")));
            }
        }
        if !q.ordered {
            for out in [&mut o, &mut m] {
                if let Outcome::Rows(rows) = out {
                    rows.sort();
                }
            }
        }
        match (&o, &m) {
            (Outcome::Err(co, _), Outcome::Err(cm, _)) => {
                errors_both += 1;
                if co != cm {
                    let what = format!(
                        "error codes differ\n  onelog: {}\n  mariadb: {}",
                        show(&o),
                        show(&m)
                    );
                    if codes.contains(cm) {
                        failures.push(fail(what));
                    } else {
                        println!(
                            "{}",
                            fail(format!("{what}\n  (MariaDB's code is not one onelog has)"))
                        );
                    }
                }
            }
            _ if o == m => {}
            _ => failures.push(fail(format!(
                "results differ\n  onelog: {}\n  mariadb: {}",
                show(&o),
                show(&m)
            ))),
        }
        if !failures.is_empty() && !keep_going {
            break;
        }
    }
    println!(
        "random queries: {ran} of {n} in {:?}, {errors_both} errors on both sides",
        started.elapsed()
    );
    assert!(
        onelog.is_running(),
        "onelogd exited:\n{}",
        onelog.log_text()
    );
    assert!(maria.is_running(), "mariadbd exited");
    onelog.assert_no_panic();
    assert!(
        failures.is_empty(),
        "{} of the random queries differ (ONELOG_RANDQ_SEED={seed}):\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
