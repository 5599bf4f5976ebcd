//! ENUM, SET, BIT, YEAR and JSON columns and CHECK constraints through the binlog: rows
//! written on onelogd decode with `mariadb-binlog -v` and apply on a MariaDB 10.11 replica
//! with identical results, a MariaDB primary's rows apply on a onelogd replica, and the
//! catalog (the constraints included) survives SIGKILL and recovery.

mod common;
use common::mariadb::MariaDb;
use common::*;
use mysql::prelude::Queryable;
use std::time::{Duration, Instant};

const TABLE: &str = "CREATE TABLE ct.t (id INT PRIMARY KEY, a ENUM('x','y','z') NOT NULL, \
     s SET('a','b','c'), b BIT(10), y YEAR, j JSON, n INT CHECK (n >= 0), \
     CONSTRAINT small CHECK (n < 1000))";

const WRITES: &[&str] = &[
    "INSERT INTO ct.t VALUES (1, 'y', 'a,c', b'1000000001', 1999, '[1, {\"k\": \"v\"}]', 5)",
    "INSERT INTO ct.t VALUES (2, 'x', '', 0, 0, NULL, 0), (3, 'z', 'b', 1023, 2155, '{}', NULL)",
    "INSERT INTO ct.t VALUES (4, 2, 7, 65, '69', 'null', 999)",
    "UPDATE ct.t SET a = 'z', s = 'c,b', y = 1901 WHERE id = 1",
    "DELETE FROM ct.t WHERE id = 3",
];

fn gtid(c: &mut mysql::Conn, var: &str) -> String {
    c.query_first::<String, _>(format!("SELECT @@{var}"))
        .unwrap()
        .unwrap_or_default()
}

/// Waits until `replica` has applied `want`, failing on a replication error.
fn wait_applied(replica: &mut mysql::Conn, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while gtid(replica, "gtid_slave_pos") != want {
        let row: mysql::Row = replica.query_first("SHOW SLAVE STATUS").unwrap().unwrap();
        let err: String = row
            .get_opt::<String, _>("Last_SQL_Error")
            .and_then(Result::ok)
            .unwrap_or_default();
        assert!(err.is_empty(), "replica stopped: {err}");
        assert!(
            Instant::now() < deadline,
            "replica did not catch up to {want}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn point_replica(c: &mut mysql::Conn, port: u16) {
    c.query_drop(format!(
        "CHANGE MASTER TO master_host='127.0.0.1', master_port={port}, master_user='repl', \
         master_password='pw', master_use_gtid=slave_pos, master_connect_retry=1"
    ))
    .unwrap();
    c.query_drop("START SLAVE").unwrap();
}

fn add_repl_user(c: &mut mysql::Conn) {
    c.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    c.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
}

/// The rows as both servers show them, through the text protocol.
fn rows(c: &mut mysql::Conn) -> Vec<String> {
    let rows: Vec<mysql::Row> = c
        .query("SELECT id, a, a+0, s, s+0, HEX(b), b+0, y, j, n FROM ct.t ORDER BY id")
        .unwrap();
    rows.into_iter()
        .map(|r| {
            r.unwrap()
                .into_iter()
                .map(|v| match v {
                    mysql::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
                    mysql::Value::NULL => "NULL".into(),
                    v => format!("{v:?}"),
                })
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

#[test]
fn onelog_rows_decode_and_replicate_to_mariadb() {
    let primary = Server::start(&["--server-id=1"]);
    let mut c = primary.conn(None);
    add_repl_user(&mut c);
    c.query_drop("CREATE DATABASE ct").unwrap();
    c.query_drop(TABLE).unwrap();
    for w in WRITES {
        c.query_drop(w).unwrap();
    }
    let err = c
        .query_drop("INSERT INTO ct.t (id, n) VALUES (9, 1000)")
        .unwrap_err();
    assert!(
        err.to_string().contains("CONSTRAINT `small` failed"),
        "{err}"
    );
    let expected = vec![
        "1|z|3|b,c|6|201|513|1901|[1, {\"k\": \"v\"}]|5",
        "2|x|1||0|0|0|0000|NULL|0",
        "4|y|2|a,b,c|7|41|65|2069|null|999",
    ];
    assert_eq!(rows(&mut c), expected);

    if have(
        "mariadb-binlog",
        "onelog_rows_decode_and_replicate_to_mariadb",
    ) {
        let (ok, out, err) = run(
            "mariadb-binlog",
            &[
                "--read-from-remote-server".into(),
                "--host=127.0.0.1".into(),
                format!("--port={}", primary.port),
                "--user=root".into(),
                "--verbose".into(),
                "--base64-output=decode-rows".into(),
                "--to-last-log".into(),
                "binlog-000000".into(),
            ],
            Duration::from_secs(30),
        );
        assert!(ok, "mariadb-binlog failed: {err}");
        // ENUM as its index, SET and BIT as bits, YEAR as the year, JSON as text.
        for want in [
            "### INSERT INTO `ct`.`t`",
            "###   @2=2",
            "###   @3=b'00000101'",
            "###   @4=b'1000000001'",
            "###   @5=1999",
            "###   @6='[1, {\"k\": \"v\"}]'",
            "###   @4=b'1111111111'",
            "###   @5=2155",
            "### UPDATE `ct`.`t`",
            "###   @3=b'00000110'",
            "###   @5=1901",
            "### DELETE FROM `ct`.`t`",
        ] {
            assert!(
                out.contains(want),
                "mariadb-binlog output lacks {want:?}:\n{out}"
            );
        }
        assert!(!err.contains("ERROR"), "{err}");
    }

    let Some(replica) = MariaDb::start_with(
        "onelog_rows_decode_and_replicate_to_mariadb",
        &["--server-id=2".into()],
    ) else {
        return;
    };
    let mut rc = replica.conn(None);
    point_replica(&mut rc, primary.port);
    let want = gtid(&mut c, "gtid_binlog_pos");
    wait_applied(&mut rc, &want);
    assert_eq!(rows(&mut rc), rows(&mut c));
    // The replica has the same definition, constraints included.
    let show = |c: &mut mysql::Conn| -> String {
        let r: (String, String) = c.query_first("SHOW CREATE TABLE ct.t").unwrap().unwrap();
        r.1
    };
    assert_eq!(show(&mut rc), show(&mut c));
    primary.assert_no_panic();
}

#[test]
fn mariadb_primary_rows_apply_on_onelog() {
    let port = free_port();
    let Some(m) = MariaDb::start_with(
        "mariadb_primary_rows_apply_on_onelog",
        &[
            format!("--port={port}"),
            "--server-id=7".into(),
            "--log-bin=mb".into(),
            "--binlog-format=ROW".into(),
        ],
    ) else {
        return;
    };
    let mut mc = m.conn(None);
    add_repl_user(&mut mc);
    let replica = Server::start(&["--server-id=8"]);
    let mut oc = replica.conn(None);
    point_replica(&mut oc, port);
    mc.query_drop("CREATE DATABASE ct").unwrap();
    mc.query_drop(TABLE).unwrap();
    for w in WRITES {
        mc.query_drop(w).unwrap();
    }
    let want = gtid(&mut mc, "gtid_binlog_pos");
    wait_applied(&mut oc, &want);
    assert_eq!(rows(&mut oc), rows(&mut mc));
    replica.assert_no_panic();
}

#[test]
fn check_constraints_survive_sigkill() {
    let mut s = Server::start(&[]);
    let mut c = s.conn(None);
    c.query_drop("CREATE DATABASE ct").unwrap();
    c.query_drop(TABLE).unwrap();
    c.query_drop("ALTER TABLE ct.t ADD CONSTRAINT even CHECK (id MOD 2 = 0 OR id < 10)")
        .unwrap();
    c.query_drop(WRITES[0]).unwrap();
    let show = |c: &mut mysql::Conn| -> String {
        let r: (String, String) = c.query_first("SHOW CREATE TABLE ct.t").unwrap().unwrap();
        r.1
    };
    let before = show(&mut c);
    assert!(before.contains("CONSTRAINT `even` CHECK"), "{before}");
    drop(c);
    s.kill9();
    s.restart();
    let mut c = s.conn(None);
    assert_eq!(show(&mut c), before);
    for (sql, name) in [
        ("INSERT INTO ct.t (id, a) VALUES (11, 'x')", "even"),
        ("INSERT INTO ct.t (id, a, n) VALUES (12, 'x', -1)", "t.n"),
        ("INSERT INTO ct.t (id, a, j) VALUES (12, 'x', '{')", "t.j"),
    ] {
        let err = c.query_drop(sql).unwrap_err().to_string();
        assert!(
            err.contains(&format!("CONSTRAINT `{name}` failed for `ct`.`t`")),
            "{sql}: {err}"
        );
    }
    c.query_drop("INSERT INTO ct.t (id, a) VALUES (12, 'x')")
        .unwrap();
    assert_eq!(rows(&mut c).len(), 2);
    s.assert_no_panic();
}
