//! CHECK / ANALYZE / OPTIMIZE / REPAIR / CHECKSUM TABLE against onelogd: `mariadb-check`
//! (Debian's 10.11 binary) in each of its modes; what is logged; CHECKSUM TABLE equal to a
//! real MariaDB 10.11's over many random rows; CHECK and OPTIMIZE while other connections
//! write the table (no false alarm, no lost row); recovery replays a logged ANALYZE.
//! The checksum of each column type against MariaDB is in `sql/tests/slt/maintenance.slt`,
//! and CHECK finding broken indexes in the engine's unit tests (`engine/src/check.rs`).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::mariadb::{socket_opts, MariaDb};
use common::{have, run, Server};
use mysql::prelude::Queryable;
use rand::{Rng, SeedableRng};

const CHECK: &str = "/usr/bin/mariadb-check";

fn check_tool(s: &Server, args: &[&str]) -> String {
    let mut all = vec![
        "--no-defaults".to_string(),
        format!("--socket={}", s.socket.display()),
        "-uroot".to_string(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    let (ok, out, err) = run(CHECK, &all, Duration::from_secs(120));
    assert!(ok, "mariadb-check {args:?}: {out}\n{err}\n{}", s.log_text());
    assert!(err.trim().is_empty(), "mariadb-check {args:?}: {err}");
    out
}

#[test]
fn mariadb_check_in_each_mode() {
    let t = "mariadb_check_in_each_mode";
    if !have(CHECK, t) {
        return;
    }
    let s = Server::start(&[]);
    s.sql(
        "CREATE DATABASE mc; CREATE TABLE mc.a (id INT PRIMARY KEY, v VARCHAR(10), KEY (v)); \
         CREATE TABLE mc.b (x INT, y TEXT); INSERT INTO mc.a VALUES (1, 'one'), (2, 'two'); \
         INSERT INTO mc.b VALUES (1, 'x'), (NULL, NULL)",
    );
    let before = s.sql("SELECT @@gtid_binlog_pos");
    for (args, want) in [
        (vec!["mc"], "OK"),
        (vec!["--analyze", "mc"], "OK"),
        (vec!["--optimize", "mc"], "OK"),
        (vec!["--repair", "mc"], "doesn't support repair"),
        (vec!["--check", "--extended", "mc", "a"], "OK"),
        (vec!["--all-databases"], "OK"),
    ] {
        let out = check_tool(&s, &args);
        for table in ["mc.a", "mc.b"] {
            if args.contains(&"a") && table == "mc.b" {
                continue;
            }
            assert!(out.contains(table), "{args:?}: {out}");
        }
        assert!(out.contains(want), "{args:?}: {out}");
        assert!(!out.contains("error"), "{args:?}: {out}");
    }
    // ANALYZE, OPTIMIZE and REPAIR are logged (one QUERY event per statement the tool
    // sent); CHECK is not.
    let events = s.sql("SHOW BINLOG EVENTS");
    let queries: Vec<&str> = events
        .lines()
        .filter(|l| l.contains("\tQuery\t"))
        .filter(|l| {
            let l = l.to_ascii_uppercase();
            l.contains("ANALYZE") || l.contains("OPTIMIZE") || l.contains("REPAIR")
        })
        .collect();
    assert!(queries.len() >= 3, "{events}");
    assert!(
        !events.to_ascii_uppercase().contains("CHECK TABLE"),
        "{events}"
    );
    s.sql("ANALYZE NO_WRITE_TO_BINLOG TABLE mc.a; OPTIMIZE LOCAL TABLE mc.b; CHECKSUM TABLE mc.a");
    let after = s.sql("SHOW BINLOG EVENTS");
    assert_eq!(after.lines().count(), events.lines().count(), "not logged");
    assert_ne!(before, s.sql("SELECT @@gtid_binlog_pos"));
    s.assert_no_panic();
}

/// Random rows of several types, the same on both servers: the same CHECKSUM TABLE.
#[test]
fn checksum_equals_mariadb() {
    let test = "checksum_equals_mariadb";
    let Some(maria) = MariaDb::start(test) else {
        return;
    };
    let s = Server::start(&[]);
    let mut m = mysql::Conn::new(socket_opts(&maria.socket, None)).unwrap();
    let mut o = s.conn(None);
    let ddl = [
        "SET time_zone = '+00:00'",
        "CREATE DATABASE cs",
        "CREATE TABLE cs.t (id INT PRIMARY KEY, i BIGINT, u INT UNSIGNED, d DECIMAL(12,4), \
         f DOUBLE, c CHAR(8), v VARCHAR(30), b VARBINARY(16), dt DATETIME(6), ts TIMESTAMP NULL, \
         tm TIME(3), dd DATE, KEY (v), KEY (dt))",
        "CREATE TABLE cs.fixed (a SMALLINT, b INT NOT NULL, c DATE, d CHAR(2))",
    ];
    for sql in ddl {
        m.query_drop(sql).unwrap();
        o.query_drop(sql).unwrap();
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(20240229);
    let mut nulls = rand::rngs::StdRng::seed_from_u64(7);
    let mut null = move |v: String| {
        if nulls.gen_ratio(1, 6) {
            "NULL".to_string()
        } else {
            v
        }
    };
    let mut batch = Vec::new();
    let mut fixed = Vec::new();
    for id in 0..3000 {
        let word: String = (0..rng.gen_range(0..20))
            .map(|_| char::from(b'a' + rng.gen_range(0..26u8)))
            .collect();
        let row = [
            id.to_string(),
            null(rng.gen::<i64>().to_string()),
            null(rng.gen::<u32>().to_string()),
            null(format!(
                "{}.{:04}",
                rng.gen_range(-99_999_999..99_999_999),
                rng.gen_range(0..10000)
            )),
            null(format!("{:e}", rng.gen::<f64>() * 1e10 - 5e9)),
            null(format!("'{}'", &word[..word.len().min(8)])),
            null(format!("'{word} é'")),
            null(format!("X'{:08X}'", rng.gen::<u32>())),
            null(format!(
                "'{}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}'",
                rng.gen_range(1000..9999),
                rng.gen_range(1..13),
                rng.gen_range(1..29),
                rng.gen_range(0..24),
                rng.gen_range(0..60),
                rng.gen_range(0..60),
                rng.gen_range(0..1_000_000)
            )),
            null(format!(
                "FROM_UNIXTIME({})",
                rng.gen_range(1..2_000_000_000u32)
            )),
            null(format!(
                "'{}:{:02}:{:02}.{:03}'",
                rng.gen_range(-838..838),
                rng.gen_range(0..60),
                rng.gen_range(0..60),
                rng.gen_range(0..1000)
            )),
            null(format!(
                "'{}-{:02}-{:02}'",
                rng.gen_range(1000..9999),
                rng.gen_range(1..13),
                rng.gen_range(1..29)
            )),
        ];
        batch.push(format!("({})", row.join(",")));
        fixed.push(format!(
            "({}, {}, {}, {})",
            null(rng.gen::<i16>().to_string()),
            rng.gen::<i32>(),
            null(format!(
                "'2001-{:02}-{:02}'",
                rng.gen_range(1..13),
                rng.gen_range(1..29)
            )),
            null(format!("'{}'", &word[..word.len().min(2)])),
        ));
        if batch.len() == 500 {
            for c in [&mut m, &mut o] {
                c.query_drop(format!("INSERT INTO cs.t VALUES {}", batch.join(",")))
                    .unwrap();
                c.query_drop(format!("INSERT INTO cs.fixed VALUES {}", fixed.join(",")))
                    .unwrap();
            }
            batch.clear();
            fixed.clear();
        }
    }
    for c in [&mut m, &mut o] {
        c.query_drop("UPDATE cs.t SET v = CONCAT(v, '!') WHERE id % 7 = 0")
            .unwrap();
        c.query_drop("DELETE FROM cs.t WHERE id % 11 = 0").unwrap();
    }
    let q = "CHECKSUM TABLE cs.t, cs.fixed";
    let want: Vec<(String, Option<u64>)> = m.query(q).unwrap();
    let got: Vec<(String, Option<u64>)> = o.query(q).unwrap();
    assert_eq!(want, got);
    assert!(
        want.iter().all(|(_, v)| v.is_some_and(|v| v != 0)),
        "{want:?}"
    );
    // The tables themselves are equal too (so a difference above is the checksum's).
    assert_eq!(common::dump_tables(&mut m), common::dump_tables(&mut o));
    s.assert_no_panic();
}

/// CHECK and OPTIMIZE beside writers that keep changing indexed columns: CHECK reads one
/// consistent state (no false alarm), OPTIMIZE waits for the table's writers and they for
/// it, and nothing is lost; a logged ANALYZE is replayed after a crash.
#[test]
fn check_and_optimize_under_writes() {
    let mut s = Server::start(&[]);
    s.sql(
        "CREATE DATABASE w; CREATE TABLE w.t (id INT PRIMARY KEY, k INT, v VARCHAR(20), \
         KEY (k), KEY (v, k))",
    );
    let mut c = s.conn(Some("w"));
    let rows: Vec<String> = (0..2000)
        .map(|i| format!("({i}, {}, 'v{}')", i % 50, i % 13))
        .collect();
    c.query_drop(format!("INSERT INTO t VALUES {}", rows.join(",")))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let stop = stop.clone();
            let opts = s.opts(Some("w"));
            std::thread::spawn(move || {
                let mut c = mysql::Conn::new(opts).unwrap();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let id = (n * 7 + w) % 2000;
                    c.query_drop(format!(
                        "UPDATE t SET k = k + 1, v = CONCAT('u', k) WHERE id = {id}"
                    ))
                    .unwrap();
                    c.query_drop(format!(
                        "INSERT INTO t VALUES ({}, {n}, 'new')",
                        10_000 + n * 2 + w
                    ))
                    .unwrap();
                    n += 1;
                }
                n
            })
        })
        .collect();
    for _ in 0..5 {
        let check: Vec<(String, String, String, String)> = c.query("CHECK TABLE t").unwrap();
        assert_eq!(
            check,
            vec![("w.t".into(), "check".into(), "status".into(), "OK".into())]
        );
        let opt: Vec<(String, String, String, String)> = c.query("OPTIMIZE TABLE t").unwrap();
        assert_eq!(opt[0].3, "OK", "{opt:?}");
    }
    stop.store(true, Ordering::Relaxed);
    let inserted: u64 = writers.into_iter().map(|h| h.join().unwrap()).sum();
    let n: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 2000 + inserted);
    let check: Vec<(String, String, String, String)> = c.query("CHECK TABLE t EXTENDED").unwrap();
    assert_eq!(check[0].3, "OK", "{check:?}");
    // A crash right after a logged ANALYZE: recovery replays its QUERY event.
    c.query_drop("ANALYZE TABLE t").unwrap();
    drop(c);
    s.kill9();
    s.restart();
    assert_eq!(
        s.sql("SELECT COUNT(*) FROM w.t").trim(),
        (2000 + inserted).to_string()
    );
    assert_eq!(s.sql("CHECK TABLE w.t").trim(), "w.t\tcheck\tstatus\tOK");
    s.assert_no_panic();
}
