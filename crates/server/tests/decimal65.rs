//! DECIMAL(65,30) and other wide decimals end to end: values survive SIGKILL and recovery,
//! read back identically through the text and binary protocols, `mariadb-binlog --verbose`
//! prints onelogd's row events exactly as it prints MariaDB's for the same writes, and a
//! MariaDB primary's wide decimals apply on a onelogd replica.

mod common;
use common::mariadb::MariaDb;
use common::*;
use mysql::prelude::Queryable;
use std::time::Duration;

const TABLE: &str = "CREATE TABLE dd.t (id INT PRIMARY KEY, a DECIMAL(65,30), \
     b DECIMAL(65,0), c DECIMAL(40,38), KEY ka (a))";

const WRITES: &[&str] = &[
    "INSERT INTO dd.t VALUES (1, 99999999999999999999999999999999999.999999999999999999999999999999, \
     -99999999999999999999999999999999999999999999999999999999999999999, \
     1.12345678901234567890123456789012345678)",
    "INSERT INTO dd.t VALUES (2, -12345678901234567890123456789012345.123456789012345678901234567890, \
     170141183460469231731687303715884105728, -0.00000000000000000000000000000000000001)",
    "INSERT INTO dd.t VALUES (3, 0.000000000000000000000000000001, 0, NULL)",
    "UPDATE dd.t SET a = a / 3, b = b - 1 WHERE id = 2",
    "DELETE FROM dd.t WHERE id = 3",
];

const SELECT: &str = "SELECT id, a, b, c FROM dd.t ORDER BY a";

fn text(v: mysql::Value) -> String {
    match v {
        mysql::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
        mysql::Value::NULL => "NULL".into(),
        mysql::Value::Int(i) => i.to_string(),
        v => format!("{v:?}"),
    }
}

fn join(rows: Vec<mysql::Row>) -> Vec<String> {
    rows.into_iter()
        .map(|r| {
            r.unwrap()
                .into_iter()
                .map(text)
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

/// The rows through the text protocol and through a prepared statement (binary protocol).
fn rows(c: &mut mysql::Conn) -> (Vec<String>, Vec<String>) {
    let t = join(c.query(SELECT).unwrap());
    let b = join(c.exec(SELECT, ()).unwrap());
    (t, b)
}

const EXPECTED: &[&str] = &[
    "2|-4115226300411522630041152263004115.041152263004115226300411522630|\
     170141183460469231731687303715884105727|-0.00000000000000000000000000000000000001",
    "1|99999999999999999999999999999999999.999999999999999999999999999999|\
     -99999999999999999999999999999999999999999999999999999999999999999|\
     1.12345678901234567890123456789012345678",
];

/// The `###` lines of `mariadb-binlog --verbose` for the server at `port`, from its first
/// row event on (the table map's and rows' decoded values).
fn binlog_rows(port: u16, first: &str) -> Option<Vec<String>> {
    if !have("mariadb-binlog", "decimal65") {
        return None;
    }
    let (ok, out, err) = run(
        "mariadb-binlog",
        &[
            "--read-from-remote-server".into(),
            "--host=127.0.0.1".into(),
            format!("--port={port}"),
            "--user=root".into(),
            "--verbose".into(),
            "--base64-output=decode-rows".into(),
            "--to-last-log".into(),
            first.into(),
        ],
        Duration::from_secs(30),
    );
    assert!(ok, "mariadb-binlog failed: {err}");
    assert!(!err.contains("ERROR"), "{err}");
    Some(
        out.lines()
            .filter(|l| l.starts_with("###"))
            .skip_while(|l| !l.contains("`dd`.`t`"))
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn decimal65_survives_sigkill_and_decodes_as_mariadbs() {
    let mut s = Server::start(&["--server-id=1"]);
    let mut c = s.conn(None);
    c.query_drop("CREATE DATABASE dd").unwrap();
    c.query_drop(TABLE).unwrap();
    for w in WRITES {
        c.query_drop(w).unwrap();
    }
    let (t, b) = rows(&mut c);
    assert_eq!(t, EXPECTED);
    assert_eq!(b, EXPECTED);
    // Strict mode refuses a value past DECIMAL(65,30)'s 35 integer digits.
    let err = c
        .query_drop("INSERT INTO dd.t (id, a) VALUES (9, 1e35)")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("1264") && err.contains("Out of range value for column 'a' at row 1"),
        "{err}"
    );
    drop(c);
    s.kill9();
    s.restart();
    let mut c = s.conn(None);
    let (t, b) = rows(&mut c);
    assert_eq!(t, EXPECTED, "after SIGKILL and recovery");
    assert_eq!(b, EXPECTED);
    // The index on `a` still orders and finds the wide values.
    let ids: Vec<i32> = c
        .query("SELECT id FROM dd.t FORCE INDEX (ka) WHERE a < 0 ORDER BY a")
        .unwrap();
    assert_eq!(ids, vec![2]);

    let Some(ours) = binlog_rows(s.port, "binlog-000000") else {
        return;
    };
    assert!(
        ours.iter()
            .any(|l| l
                .contains("@2=99999999999999999999999999999999999.999999999999999999999999999999")),
        "{ours:#?}"
    );
    let port = free_port();
    let Some(m) = MariaDb::start_with(
        "decimal65_survives_sigkill_and_decodes_as_mariadbs",
        &[
            format!("--port={port}"),
            "--server-id=5".into(),
            "--log-bin=mb".into(),
            "--binlog-format=ROW".into(),
        ],
    ) else {
        return;
    };
    let mut mc = m.conn(None);
    mc.query_drop("CREATE DATABASE dd").unwrap();
    mc.query_drop(TABLE).unwrap();
    for w in WRITES {
        mc.query_drop(w).unwrap();
    }
    assert_eq!(rows(&mut mc).0, EXPECTED);
    let theirs = binlog_rows(port, "mb.000001").unwrap();
    assert_eq!(ours, theirs);
    s.assert_no_panic();
}

#[test]
fn mariadb_primary_decimal65_applies_on_onelog() {
    let Some((m, port)) =
        replica::mariadb_primary("mariadb_primary_decimal65_applies_on_onelog", 7)
    else {
        return;
    };
    // Row events (connections made after this take the global format).
    m.conn(None)
        .query_drop("SET GLOBAL binlog_format = ROW")
        .unwrap();
    let mut mc = m.conn(None);
    let replica = Server::start(&["--server-id=8"]);
    let mut oc = replica.conn(None);
    replica::follow(&mut oc, port);
    mc.query_drop("CREATE DATABASE dd").unwrap();
    mc.query_drop(TABLE).unwrap();
    for w in WRITES {
        mc.query_drop(w).unwrap();
    }
    let want: String = mc.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    replica::wait_gtid(&mut oc, &want);
    assert_eq!(rows(&mut oc).0, EXPECTED);
    assert_eq!(rows(&mut oc), rows(&mut mc));
    replica.assert_no_panic();
}
