//! Stored functions, procedures and triggers through real clients: the published
//! sync_binlog benchmark case (a `delimiter //` script through the `mariadb` client, then
//! mysqlslap calling the function), a procedure's result sets read by the `mariadb`
//! client and the Rust `mysql` crate, the function's rows as row events for
//! `mariadb-binlog -v`, routines and triggers kept across SIGKILL, and a MariaDB 10.11
//! replica receiving them.

mod common;
use common::mariadb::MariaDb;
use common::*;
use mysql::prelude::Queryable;
use std::time::{Duration, Instant};

const CASE_9: &str =
    "DROP DATABASE IF EXISTS test_case_9; CREATE DATABASE test_case_9; USE test_case_9;
CREATE TABLE t1 (id int NOT NULL AUTO_INCREMENT, name varchar(100) DEFAULT NULL, PRIMARY KEY (id));
DROP FUNCTION IF EXISTS insert_data;
delimiter //
CREATE FUNCTION insert_data() RETURNS int DETERMINISTIC
BEGIN
  INSERT INTO t1 (name) VALUES ('test');
  RETURN ROW_COUNT();
END//
delimiter ;
";

fn case_9(srv: &Server) {
    let out = srv.mariadb(&[], CASE_9);
    assert!(
        out.status.success(),
        "mariadb script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sync_binlog_case_runs_through_client_and_mysqlslap() {
    if !have(
        "mysqlslap",
        "sync_binlog_case_runs_through_client_and_mysqlslap",
    ) {
        return;
    }
    let srv = Server::start(&[]);
    case_9(&srv);
    let (ok, out, err) = run(
        "mysqlslap",
        &[
            "--no-defaults".into(),
            "-uroot".into(),
            "--host=127.0.0.1".into(),
            format!("--port={}", srv.port),
            "--create-schema=test_case_9".into(),
            "--query=select test_case_9.insert_data();".into(),
            "--concurrency=4".into(),
            "--iterations=2".into(),
            "--number-of-queries=400".into(),
        ],
        Duration::from_secs(180),
    );
    assert!(ok, "mysqlslap failed:\n{out}\n{err}\n{}", srv.log_text());
    assert!(
        out.contains("Number of clients running queries: 4"),
        "{out}"
    );
    // 400 queries per iteration, two iterations (MariaDB 10.11 leaves 800 rows too).
    assert_eq!(
        srv.sql("SELECT COUNT(*), COUNT(DISTINCT id) FROM test_case_9.t1"),
        "800\t800\n"
    );
    let show = srv.sql("SHOW CREATE FUNCTION test_case_9.insert_data");
    assert!(
        show.contains(
            "CREATE DEFINER=`root`@`localhost` FUNCTION `insert_data`() RETURNS int(11)\\n    DETERMINISTIC\\nBEGIN"
        ),
        "{show}"
    );
    srv.assert_no_panic();
}

#[test]
fn procedure_result_sets_reach_clients() {
    let srv = Server::start(&[]);
    let script = "CREATE DATABASE pr; USE pr;
CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10));
INSERT INTO t VALUES (1, 'one'), (2, 'two');
delimiter //
CREATE PROCEDURE two(IN n INT, OUT c INT)
BEGIN
  SELECT n AS first_set;
  SELECT id, v FROM t WHERE id <= n ORDER BY id;
  SELECT COUNT(*) INTO c FROM t;
END//
delimiter ;
CALL two(2, @c);
SELECT @c AS out_value;
";
    let out = srv.mariadb(&["--batch"], script);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        text, "first_set\n2\nid\tv\n1\tone\n2\ttwo\nout_value\n2\n",
        "mariadb client output"
    );
    // The Rust client reads each result set, then the final OK.
    let mut c = srv.conn(Some("pr"));
    let mut res = c.query_iter("CALL two(1, @x)").unwrap();
    let mut sets = Vec::new();
    while let Some(set) = res.iter() {
        let rows: Vec<Vec<String>> = set
            .map(|r| {
                let r = r.unwrap();
                (0..r.len())
                    .map(|i| r.get::<String, _>(i).unwrap_or_default())
                    .collect()
            })
            .collect();
        sets.push(rows);
    }
    drop(res);
    assert_eq!(
        sets[..2],
        [
            vec![vec!["1".to_string()]],
            vec![vec!["1".into(), "one".into()]]
        ]
    );
    let x: Option<i64> = c.query_first("SELECT @x").unwrap();
    assert_eq!(x, Some(2));
    // A body sent in one COM_QUERY with other statements is one statement.
    c.query_drop(
        "CREATE FUNCTION f(a INT) RETURNS INT DETERMINISTIC BEGIN DECLARE b INT DEFAULT a; \
         SET b = b * 10; RETURN b; END; SELECT 1",
    )
    .unwrap();
    let v: Option<i64> = c.query_first("SELECT f(4)").unwrap();
    assert_eq!(v, Some(40));
    srv.assert_no_panic();
}

#[test]
fn function_rows_are_row_events_and_programs_survive_sigkill() {
    if !have(
        "mariadb-binlog",
        "function_rows_are_row_events_and_programs_survive_sigkill",
    ) {
        return;
    }
    let mut srv = Server::start(&[]);
    case_9(&srv);
    let trigger = "USE test_case_9;
CREATE TABLE log (n INT AUTO_INCREMENT PRIMARY KEY, id INT);
delimiter //
CREATE TRIGGER t1_ai AFTER INSERT ON t1 FOR EACH ROW
BEGIN
  INSERT INTO log (id) VALUES (NEW.id);
END//
delimiter ;
SELECT insert_data();
";
    let out = srv.mariadb(&[], trigger);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = common::clients::binlog_text(&srv, true);
    for want in [
        "CREATE DEFINER=`root`@`localhost` FUNCTION `insert_data`() RETURNS int(11)",
        "CREATE DEFINER=`root`@`localhost` TRIGGER t1_ai AFTER INSERT ON t1",
        "### INSERT INTO `test_case_9`.`t1`",
        "### INSERT INTO `test_case_9`.`log`",
        "###   @2='test'",
    ] {
        assert!(out.contains(want), "missing {want} in:\n{out}");
    }
    srv.kill9();
    srv.restart();
    assert_eq!(srv.sql("SELECT test_case_9.insert_data()"), "1\n");
    assert_eq!(
        srv.sql("SELECT COUNT(*) FROM test_case_9.t1; SELECT COUNT(*) FROM test_case_9.log"),
        "2\n2\n"
    );
    assert!(srv
        .sql("SHOW TRIGGERS FROM test_case_9")
        .contains("t1_ai\tINSERT\tt1"));
    srv.assert_no_panic();
}

#[test]
fn mariadb_replica_receives_routines_triggers_and_rows() {
    let primary = Server::start(&["--server-id=1"]);
    let Some(replica) = MariaDb::start_with(
        "mariadb_replica_receives_routines_triggers_and_rows",
        &["--server-id=2".to_string()],
    ) else {
        return;
    };
    {
        let mut c = primary.conn(None);
        c.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
            .unwrap();
        c.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
            .unwrap();
    }
    case_9(&primary);
    let out = primary.mariadb(
        &[],
        "USE test_case_9;
CREATE TABLE log (n INT AUTO_INCREMENT PRIMARY KEY, id INT);
CREATE TRIGGER t1_ai AFTER INSERT ON t1 FOR EACH ROW INSERT INTO log (id) VALUES (NEW.id);
SELECT insert_data(); SELECT insert_data();
",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut r = replica.conn(None);
    r.query_drop(format!(
        "CHANGE MASTER TO master_host='127.0.0.1', master_port={}, master_user='repl', \
         master_password='pw', master_use_gtid=slave_pos, master_connect_retry=1",
        primary.port
    ))
    .unwrap();
    r.query_drop("START SLAVE").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let n: Option<(i64, i64)> = r
            .query_first("SELECT (SELECT COUNT(*) FROM test_case_9.t1), (SELECT COUNT(*) FROM test_case_9.log)")
            .ok()
            .flatten();
        if n == Some((2, 2)) {
            break;
        }
        let row: Option<mysql::Row> = r.query_first("SHOW SLAVE STATUS").unwrap();
        assert!(
            Instant::now() < deadline,
            "replica did not catch up: {n:?}\n{row:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let names: Vec<String> = r
        .query("SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'test_case_9'")
        .unwrap();
    assert_eq!(names, ["insert_data"]);
    let trg: Vec<String> = r
        .query("SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = 'test_case_9'")
        .unwrap();
    assert_eq!(trg, ["t1_ai"]);
    // The function runs on the replica too.
    let v: Option<i64> = r.query_first("SELECT test_case_9.insert_data()").unwrap();
    assert_eq!(v, Some(1));
    primary.assert_no_panic();
}
