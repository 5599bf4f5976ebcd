//! `mariadb-admin` (Debian's 10.11 binary) against onelogd: status, refresh,
//! flush-engine-log, shutdown; `SET GLOBAL` values that new sessions take; RETURNING
//! through the binary protocol and PyMySQL; `@@binlog_storage_engine`.

mod common;

use std::time::{Duration, Instant};

use common::{have, run, Server};
use mysql::prelude::Queryable;

const ADMIN: &str = "/usr/bin/mariadb-admin";

fn admin(s: &Server, user: &str, args: &[&str]) -> (bool, String, String) {
    let mut all = vec![
        "--no-defaults".to_string(),
        format!("--socket={}", s.socket.display()),
        format!("-u{user}"),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    run(ADMIN, &all, Duration::from_secs(60))
}

#[test]
fn mariadb_admin_status_refresh_flush_and_shutdown() {
    let t = "mariadb_admin_status_refresh_flush_and_shutdown";
    if !have(ADMIN, t) {
        return;
    }
    let mut s = Server::start(&[]);
    s.sql("CREATE DATABASE a; CREATE TABLE a.t (id INT PRIMARY KEY); INSERT INTO a.t VALUES (1)");
    for _ in 0..200 {
        s.sql("SELECT 1");
    }
    std::thread::sleep(Duration::from_millis(1100));
    let (ok, out, err) = admin(&s, "root", &["status"]);
    assert!(ok, "{err}");
    // "Uptime: N  Threads: N  Questions: N  ... Queries per second avg: X.YYY"
    let field = |name: &str| -> f64 {
        let at = out.find(name).unwrap_or_else(|| panic!("{name} in {out}"));
        out[at + name.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (uptime, questions, qps) = (
        field("Uptime: "),
        field("Questions: "),
        field("Queries per second avg: "),
    );
    assert!(questions >= 200.0, "{out}");
    assert!(uptime >= 1.0, "{out}");
    let want = questions / uptime;
    assert!((qps - want).abs() <= want * 0.5 + 1.0, "{out}");
    assert!(qps > 0.0, "{out}");

    // refresh rotates the binary log (REFRESH_LOG) and reloads nothing else visible.
    let files_before = s.sql("SHOW BINARY LOGS").lines().count();
    let (ok, _, err) = admin(&s, "root", &["refresh"]);
    assert!(ok, "{err}");
    assert_eq!(s.sql("SHOW BINARY LOGS").lines().count(), files_before + 1);
    let (ok, _, err) = admin(&s, "root", &["flush-engine-log"]);
    assert!(ok, "{err}");
    let (ok, _, err) = admin(
        &s,
        "root",
        &["flush-logs", "flush-privileges", "flush-tables"],
    );
    assert!(ok, "{err}");

    // Without the SHUTDOWN or RELOAD privilege: MariaDB's errors, and the server goes on.
    s.sql("CREATE USER plain@localhost; GRANT SELECT ON *.* TO plain@localhost");
    let (ok, out, err) = admin(&s, "plain", &["shutdown"]);
    assert!(!ok, "{out}");
    assert!(
        err.contains("you need (at least one of) the SHUTDOWN privilege(s)"),
        "{err}"
    );
    let (ok, _, err) = admin(&s, "plain", &["refresh"]);
    assert!(!ok);
    assert!(err.contains("RELOAD privilege"), "{err}");
    let o = s.mariadb(&["-uplain", "-e", "SHUTDOWN"], "");
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("1227"));
    assert!(s.is_running());

    // root stops it cleanly: no recovery needed, the data is there after a restart.
    let (ok, _, err) = admin(&s, "root", &["shutdown"]);
    assert!(ok, "{err}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.is_running() {
        assert!(Instant::now() < deadline, "onelogd did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
    let log = s.log_text();
    assert!(log.contains("shutdown requested by a client"), "{log}");
    assert!(log.contains("shutdown complete"), "{log}");
    // (Collects the exit status, which must be 0.)
    s.stop();
    s.restart();
    assert_eq!(s.sql("SELECT COUNT(*) FROM a.t").trim(), "1");
    // SQL SHUTDOWN does the same.
    let o = s.mariadb(&["-e", "SHUTDOWN"], "");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.is_running() {
        assert!(Instant::now() < deadline, "onelogd did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
    s.stop();
}

#[test]
fn set_global_values_reach_new_sessions() {
    let s = Server::start(&[]);
    s.sql("CREATE DATABASE g; CREATE TABLE g.t (id INT PRIMARY KEY, v INT); INSERT INTO g.t VALUES (1, 0)");
    s.sql("SET GLOBAL innodb_lock_wait_timeout = 2");
    let mut a = s.conn(Some("g"));
    let v: u64 = a
        .query_first("SELECT @@innodb_lock_wait_timeout")
        .unwrap()
        .unwrap();
    assert_eq!(v, 2);
    // ... and it is the wait a new session's lock waits get.
    a.query_drop("BEGIN").unwrap();
    a.query_drop("UPDATE t SET v = 1 WHERE id = 1").unwrap();
    let mut b = s.conn(Some("g"));
    let t0 = Instant::now();
    let r = b.query_drop("UPDATE t SET v = 2 WHERE id = 1");
    let waited = t0.elapsed();
    match r {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1205),
        other => panic!("{other:?}"),
    }
    assert!(
        waited >= Duration::from_millis(1900) && waited < Duration::from_secs(20),
        "{waited:?}"
    );
    a.query_drop("ROLLBACK").unwrap();
    // A session's own value and DEFAULT (back to the global value).
    b.query_drop("SET SESSION innodb_lock_wait_timeout = 7")
        .unwrap();
    let v: u64 = b
        .query_first("SELECT @@innodb_lock_wait_timeout")
        .unwrap()
        .unwrap();
    assert_eq!(v, 7);
    b.query_drop("SET SESSION innodb_lock_wait_timeout = DEFAULT")
        .unwrap();
    let v: u64 = b
        .query_first("SELECT @@innodb_lock_wait_timeout")
        .unwrap()
        .unwrap();
    assert_eq!(v, 2);
    s.sql("SET GLOBAL innodb_lock_wait_timeout = DEFAULT");
    let v = s.sql("SELECT @@global.innodb_lock_wait_timeout");
    assert_eq!(v.trim(), "50");
    // A global onelog has no use for is refused instead of answering OK.
    let o = s.mariadb(&["-e", "SET GLOBAL general_log = 1"], "");
    assert!(String::from_utf8_lossy(&o.stderr).contains("1238"));
    // MariaDB 12.3's variable: the binlog is onelog's storage log in the default mode.
    assert_eq!(s.sql("SELECT @@binlog_storage_engine").trim(), "onelog");
    let f = Server::start(&["--binlog-storage=file"]);
    assert_eq!(f.sql("SELECT @@binlog_storage_engine").trim(), "");
}

#[test]
fn returning_through_the_binary_protocol() {
    let s = Server::start(&[]);
    s.sql("CREATE DATABASE r; CREATE TABLE r.t (id INT AUTO_INCREMENT PRIMARY KEY, a VARCHAR(10), b BLOB)");
    let mut c = s.conn(Some("r"));
    let rows: Vec<(u32, String, Vec<u8>)> = c
        .exec(
            "INSERT INTO t (a, b) VALUES (?, ?), (?, ?) RETURNING id, a, b",
            ("x", vec![0u8, 255], "y", vec![1u8]),
        )
        .unwrap();
    assert_eq!(
        rows,
        vec![(1, "x".into(), vec![0, 255]), (2, "y".into(), vec![1])]
    );
    let rows: Vec<(u32, String)> = c
        .exec(
            "REPLACE INTO t (id, a) VALUES (?, ?) RETURNING id, a",
            (1, "z"),
        )
        .unwrap();
    assert_eq!(rows, vec![(1, "z".into())]);
    let rows: Vec<u32> = c
        .exec("DELETE FROM t WHERE id >= ? RETURNING id", (1,))
        .unwrap();
    assert_eq!(rows, vec![1, 2]);
    let n: u32 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 0);
}

#[test]
fn pymysql_insert_returning() {
    let t = "pymysql_insert_returning";
    if !common::have_python_module("pymysql", t) {
        return;
    }
    let s = Server::start(&[]);
    s.sql("CREATE DATABASE p; CREATE TABLE p.t (id INT AUTO_INCREMENT PRIMARY KEY, a VARCHAR(10))");
    let script = format!(
        r#"
import pymysql
c = pymysql.connect(host="127.0.0.1", port={}, user="root", database="p", autocommit=True)
cur = c.cursor()
cur.execute("INSERT INTO t (a) VALUES (%s), (%s) RETURNING id, a", ("x", "it's"))
print(cur.fetchall())
cur.execute("DELETE FROM t WHERE a = %s RETURNING id", ("x",))
print(cur.fetchall())
"#,
        s.port
    );
    let (ok, out, err) = run(
        common::PYTHON,
        &["-c".to_string(), script],
        Duration::from_secs(60),
    );
    assert!(ok, "{err}");
    assert_eq!(out, "((1, 'x'), (2, \"it's\"))\n((1,),)\n");
}
