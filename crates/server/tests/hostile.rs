//! Hostile and huge statements against the real onelogd, while other connections run a
//! workload: deep expressions, long boolean chains, long UNIONs, huge IN lists, nested
//! parentheses, subqueries, CASEs and JSON, at sizes 10 to 1,000,000. Every statement gets
//! an answer (a result or one of MariaDB's errors), the server never exits, the workload
//! sees no error. KILL QUERY and max_statement_time stop long statements promptly.

mod common;
use common::*;
use mysql::prelude::Queryable;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The tests of this file run one at a time: the corpus keeps both cores busy, and the
/// KILL / max_statement_time test measures how soon statements stop.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// One adversarial statement of a kind at a size.
fn statement(kind: &str, n: usize) -> String {
    let rep = |s: &str, sep: &str| vec![s; n].join(sep);
    match kind {
        "plus" => format!("SELECT {}", rep("1", "+")),
        "or" => format!(
            "SELECT count(*) FROM h.t WHERE {}",
            (0..n)
                .map(|i| format!("id={i}"))
                .collect::<Vec<_>>()
                .join(" OR ")
        ),
        "and" => format!("SELECT count(*) FROM h.t WHERE {}", rep("id>0", " AND ")),
        "union" => rep("SELECT 1", " UNION ALL "),
        "in" => format!(
            "SELECT count(*) FROM h.t WHERE id IN ({})",
            (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
        ),
        "row_in" => format!(
            "SELECT count(*) FROM h.t WHERE (id, k) IN ({})",
            (0..n)
                .map(|i| format!("({i},{i})"))
                .collect::<Vec<_>>()
                .join(",")
        ),
        "paren" => format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n)),
        "subquery" => format!("SELECT {}1{}", "(SELECT ".repeat(n), ")".repeat(n)),
        "neg" => format!("SELECT {}1", "-".repeat(n)),
        "not" => format!("SELECT {}1", "NOT ".repeat(n)),
        "func" => format!("SELECT {}1{}", "abs(".repeat(n), ")".repeat(n)),
        "case" => format!(
            "SELECT {}1{}",
            "CASE WHEN 1 THEN ".repeat(n),
            " END".repeat(n)
        ),
        "json" => format!("SELECT JSON_VALID('{}{}')", "[".repeat(n), "]".repeat(n)),
        "json_array" => format!("SELECT {}1{}", "JSON_ARRAY(".repeat(n), ")".repeat(n)),
        "concat" => format!("SELECT {}", rep("'a'", " || ")),
        "is_null" => format!("SELECT 1{}", " IS NULL".repeat(n)),
        other => panic!("unknown kind {other}"),
    }
}

const KINDS: &[&str] = &[
    "plus",
    "or",
    "and",
    "union",
    "in",
    "row_in",
    "paren",
    "subquery",
    "neg",
    "not",
    "func",
    "case",
    "json",
    "json_array",
    "concat",
    "is_null",
];

/// Errors an adversarial statement may get: MariaDB's for too deep (1436), too nested
/// (1473), unparsable (1064), too big for max_allowed_packet (1153), an operand count
/// (1241), a wrong argument (1582), too many query blocks for a statement's memory (1037),
/// and the statement-time limit set here (1969).
const ALLOWED: &[u16] = &[1436, 1473, 1064, 1153, 1241, 1582, 1037, 1969];

#[test]
fn adversarial_statements_get_answers_and_the_server_stays_up() {
    let _one = serial();
    let srv = Server::start(&["--max-allowed-packet=64M"]);
    let mut c = srv.conn(None);
    c.query_drop("CREATE DATABASE h").unwrap();
    c.query_drop("CREATE TABLE h.t (id INT PRIMARY KEY, k INT, v VARCHAR(20))")
        .unwrap();
    c.query_drop("INSERT INTO h.t VALUES (1,1,'a'),(2,2,'b'),(3,3,'c'),(5,5,'e'),(800,800,'x')")
        .unwrap();

    // The workload: autocommit inserts and reads on their own connections.
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let opts = srv.opts(None);
            let (stop, done) = (stop.clone(), done.clone());
            std::thread::spawn(move || -> Result<(), String> {
                let mut c = mysql::Conn::new(opts).map_err(|e| e.to_string())?;
                c.query_drop(format!("CREATE TABLE h.w{w} (id INT PRIMARY KEY, v INT)"))
                    .map_err(|e| e.to_string())?;
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    i += 1;
                    c.query_drop(format!("INSERT INTO h.w{w} VALUES ({i}, {i})"))
                        .map_err(|e| format!("insert {i}: {e}"))?;
                    let n: Option<u64> = c
                        .query_first(format!("SELECT count(*) FROM h.w{w}"))
                        .map_err(|e| format!("select {i}: {e}"))?;
                    if n != Some(i) {
                        return Err(format!("worker {w} counted {n:?} rows after {i} inserts"));
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok(())
            })
        })
        .collect();

    // Keep any one statement from running for long (answers are what is checked).
    c.query_drop("SET max_statement_time = 60").unwrap();
    let mut report = Vec::new();
    for kind in KINDS {
        for n in [10usize, 1_000, 100_000, 1_000_000] {
            let sql = statement(kind, n);
            let t0 = Instant::now();
            let r: Result<Vec<mysql::Row>, _> = c.query(&sql);
            let took = t0.elapsed();
            let outcome = match r {
                Ok(rows) => format!("{} row(s)", rows.len()),
                Err(mysql::Error::MySqlError(e)) => {
                    assert!(
                        ALLOWED.contains(&e.code),
                        "{kind} x {n}: unexpected error {} {}",
                        e.code,
                        e.message
                    );
                    format!("error {}", e.code)
                }
                Err(e) => panic!(
                    "{kind} x {n}: no answer ({e}); server log:\n{}",
                    srv.log_text()
                ),
            };
            report.push(format!("{kind:>10} x {n:>9}: {outcome:<12} {took:?}"));
            // The connection still works.
            let one: Option<i64> = c.query_first("SELECT 1").unwrap();
            assert_eq!(one, Some(1));
        }
    }
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap().unwrap();
    }
    eprintln!("{}", report.join("\n"));
    assert!(done.load(Ordering::Relaxed) > 0);

    // What MariaDB answers too: long OR and AND chains, long UNION ALLs and IN lists
    // give results; only expressions nested past the stack give 1436.
    let count = |c: &mut mysql::Conn, sql: &str| -> Option<u64> { c.query_first(sql).unwrap() };
    assert_eq!(count(&mut c, &statement("or", 100_000)), Some(5));
    assert_eq!(count(&mut c, &statement("in", 1_000_000)), Some(5));
    assert_eq!(count(&mut c, &statement("and", 100_000)), Some(5));
    let rows: Vec<i64> = c.query(statement("union", 10_000)).unwrap();
    assert_eq!(rows.len(), 10_000);
    let e = c.query_drop(statement("plus", 1_000_000)).unwrap_err();
    assert!(
        matches!(e, mysql::Error::MySqlError(ref e) if e.code == 1436),
        "{e}"
    );
    srv.assert_no_panic();
}

/// `thread_stack` sets how deep a statement may nest, as in MariaDB.
#[test]
fn thread_stack_sets_the_depth_limit() {
    let _one = serial();
    let small = Server::start(&["--thread-stack=1M"]);
    let big = Server::start(&["--thread-stack=64M"]);
    let depth = |srv: &Server| -> usize {
        let mut c = srv.conn(None);
        let mut n = 100;
        while n < 1_000_000 {
            if c.query_drop(statement("plus", n)).is_err() {
                break;
            }
            n *= 2;
        }
        n
    };
    let (d_small, d_big) = (depth(&small), depth(&big));
    assert!(d_small < d_big, "1M stack: {d_small}, 64M stack: {d_big}");
    let v: Option<u64> = big.conn(None).query_first("SELECT @@thread_stack").unwrap();
    assert_eq!(v, Some(64 << 20));
}

/// The outcome of a statement run on its own connection, and when it arrived.
type Outcome = std::sync::mpsc::Receiver<(Result<(), mysql::Error>, Instant)>;

/// Starts `sql` on its own connection and returns the connection id, a channel with the
/// statement's outcome, and when it was sent.
fn start_long(srv: &Server, sql: &str, prepare: &[&str]) -> (u64, Outcome) {
    let mut c = srv.conn(None);
    for p in prepare {
        c.query_drop(p).unwrap();
    }
    let id: Option<u64> = c.query_first("SELECT CONNECTION_ID()").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let sql = sql.to_string();
    std::thread::spawn(move || {
        let r = c.query_drop(&sql);
        let _ = tx.send((r, Instant::now()));
    });
    (id.unwrap(), rx)
}

fn code_of(r: &Result<(), mysql::Error>) -> Option<u16> {
    match r {
        Err(mysql::Error::MySqlError(e)) => Some(e.code),
        _ => None,
    }
}

/// Long statements of each kind (joins, sorts, grouping, long IN lists, recursive CTEs,
/// window functions, SLEEP) stop soon after KILL QUERY (1317) and after their
/// max_statement_time (1969); the connection stays usable.
#[test]
fn kill_query_and_max_statement_time_stop_long_statements() {
    let _one = serial();
    let srv = Server::start(&["--max-allowed-packet=64M"]);
    let mut c = srv.conn(None);
    c.query_drop("CREATE DATABASE k").unwrap();
    c.query_drop("CREATE TABLE k.t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    let values: Vec<String> = (0..2000).map(|i| format!("({i},{})", i % 97)).collect();
    c.query_drop(format!("INSERT INTO k.t VALUES {}", values.join(",")))
        .unwrap();
    let in_list = format!(
        "SELECT count(*) FROM k.t a, k.t b WHERE a.v + b.v IN ({})",
        (0..20_000)
            .map(|i| (i * 7 + 1000).to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let long: Vec<(&str, String)> = vec![
        ("join", "SELECT count(*) FROM k.t a, k.t b, k.t c".into()),
        (
            "sort",
            "SELECT a.id, b.id FROM k.t a, k.t b ORDER BY a.v * b.v, a.id DESC LIMIT 1".into(),
        ),
        (
            "group",
            "SELECT a.v, b.v, count(*) FROM k.t a, k.t b GROUP BY a.v, b.v".into(),
        ),
        ("in_list", in_list),
        (
            "recursive",
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) \
             SELECT count(*) FROM r"
                .into(),
        ),
        (
            // A MIN over a wide frame with two moving ends is recomputed per row.
            "window",
            "SELECT MAX(m) FROM (SELECT MIN(a.v) OVER (ORDER BY a.id, b.id \
             ROWS BETWEEN 5000 PRECEDING AND 5000 FOLLOWING) AS m \
             FROM k.t a, k.t b WHERE a.id < 200) x"
                .into(),
        ),
        ("sleep", "SELECT SLEEP(100)".into()),
    ];
    let mut report = Vec::new();
    for (kind, sql) in &long {
        // KILL QUERY.
        let (id, rx) = start_long(&srv, sql, &[]);
        std::thread::sleep(Duration::from_millis(400));
        assert!(rx.try_recv().is_err(), "{kind} ended before the KILL");
        let killed_at = Instant::now();
        c.query_drop(format!("KILL QUERY {id}")).unwrap();
        let (r, at) = rx.recv_timeout(Duration::from_secs(30)).unwrap();
        let after_kill = at.duration_since(killed_at);
        if *kind == "sleep" {
            assert!(r.is_ok(), "SLEEP returns 1 when killed: {r:?}");
        } else {
            assert_eq!(code_of(&r), Some(1317), "{kind}: {r:?}");
        }
        // max_statement_time.
        let (_, rx) = start_long(&srv, sql, &["SET max_statement_time = 0.3"]);
        let t0 = Instant::now();
        let (r, at) = rx.recv_timeout(Duration::from_secs(30)).unwrap();
        let took = at.duration_since(t0);
        // As in MariaDB, SLEEP too: it returns 1 to KILL QUERY but the statement reports
        // the timeout.
        assert_eq!(code_of(&r), Some(1969), "{kind}: {r:?}");
        report.push(format!(
            "{kind:>10}: stopped {after_kill:?} after KILL QUERY, \
             after {took:?} with max_statement_time 0.3"
        ));
        assert!(
            after_kill < Duration::from_millis(100),
            "{kind}: {after_kill:?} after KILL QUERY"
        );
        assert!(
            took < Duration::from_millis(300 + 100),
            "{kind}: {took:?} with max_statement_time 0.3"
        );
    }
    eprintln!("{}", report.join("\n"));
    // The limit is per session and per statement; 0 means none.
    c.query_drop("SET max_statement_time = 0.2").unwrap();
    let e = c.query_drop("SELECT count(*) FROM k.t a, k.t b, k.t c");
    assert_eq!(code_of(&e), Some(1969));
    let e = c.query_drop("SELECT 1");
    assert!(e.is_ok());
    c.query_drop("SET max_statement_time = 0").unwrap();
    let v: Option<f64> = c.query_first("SELECT @@max_statement_time").unwrap();
    assert_eq!(v, Some(0.0));
    srv.assert_no_panic();
}
