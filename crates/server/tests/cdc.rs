//! Change data capture from onelogd's binlog dump: python-mysql-replication
//! (tests/py/cdc.py) and `mariadb-binlog --read-from-remote-server` rebuild a table from
//! the stream alone, and the result must equal the server's own SELECT. Also
//! `binlog_row_metadata`: FULL by default, MINIMAL on request, NO_LOG refused.

mod common;
use common::mariadb::MariaDb;
use common::*;
use mysql::prelude::Queryable;
use std::time::Duration;

const TABLE_DDL: &str = "CREATE TABLE t (
    id INT PRIMARY KEY,
    u TINYINT UNSIGNED,
    big BIGINT UNSIGNED,
    i BIGINT,
    name VARCHAR(40),
    code VARCHAR(20) COLLATE utf8mb4_bin,
    d DECIMAL(12,3),
    dt DATETIME(6),
    day DATE,
    tm TIME,
    f DOUBLE,
    b BLOB,
    txt TEXT,
    c CHAR(10)
)";

/// Inserts, updates and deletes in multi-statement transactions, a rollback (whole and to
/// a savepoint), NULLs, unicode, DECIMAL, DATETIME, BLOB, unsigned extremes, a key change
/// and rows events larger than one event (cut at 8 KiB).
fn workload(c: &mut mysql::Conn) {
    let blob: String = (0..=255u8).map(|b| format!("{b:02x}")).collect();
    let stmts = [
        "CREATE DATABASE cdc".to_string(),
        "USE cdc".into(),
        TABLE_DDL.into(),
        "CREATE TABLE m (id INT UNSIGNED PRIMARY KEY, v VARCHAR(10))".into(),
        "INSERT INTO t VALUES (1, 255, 18446744073709551615, -9223372036854775808, \
         'Ünïcødé ✓ 😀', 'Case', -123456789.125, '2024-02-29 23:59:59.123456', \
         '1999-12-31', '-838:59:59', 2.5, NULL, 'τέλος', 'x')"
            .into(),
        "INSERT INTO t (id, name) VALUES (2, NULL), (3, 'three')".into(),
        "BEGIN".into(),
        format!(
            "INSERT INTO t VALUES (4, 0, 0, 0, '', '', 0.000, '1000-01-01 00:00:00', \
             '1000-01-01', '00:00:00', -0.5, X'{blob}', '', '')"
        ),
        "UPDATE t SET name = CONCAT(IFNULL(name, 'null'), ' upd'), d = 1.5 WHERE id <= 3".into(),
        "DELETE FROM t WHERE id = 2".into(),
        "COMMIT".into(),
        "BEGIN".into(),
        "INSERT INTO t (id, name) VALUES (100, 'rolled back')".into(),
        "UPDATE t SET u = 1".into(),
        "ROLLBACK".into(),
        "BEGIN".into(),
        "INSERT INTO t (id, name, dt) VALUES (5, 'five', NOW(6))".into(),
        "SAVEPOINT s1".into(),
        "INSERT INTO t (id, name) VALUES (6, 'undone')".into(),
        "ROLLBACK TO SAVEPOINT s1".into(),
        "UPDATE t SET id = 50, big = 42 WHERE id = 5".into(),
        "COMMIT".into(),
        "INSERT INTO m VALUES (4294967295, 'full')".into(),
    ];
    for s in &stmts {
        c.query_drop(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    // Many rows in one statement: several rows events in one group.
    let values: Vec<String> = (1000..1400)
        .map(|i| format!("({i}, 'row {i}', {i}.5, REPEAT('z', {}))", i % 97))
        .collect();
    c.query_drop(format!(
        "INSERT INTO t (id, name, d, txt) VALUES {}",
        values.join(", ")
    ))
    .unwrap();
    c.query_drop("BEGIN").unwrap();
    c.query_drop("UPDATE t SET i = id * -3, c = 'upd' WHERE id >= 1200")
        .unwrap();
    c.query_drop("DELETE FROM t WHERE id BETWEEN 1300 AND 1349")
        .unwrap();
    c.query_drop("COMMIT").unwrap();
}

fn table_dump(c: &mut mysql::Conn) -> String {
    let rows: Vec<mysql::Row> = c.query("SELECT * FROM cdc.t ORDER BY id").unwrap();
    let mut out = format!("{} rows\n", rows.len());
    for r in rows {
        let vals: Vec<String> = r.unwrap().into_iter().map(|v| format!("{v:?}")).collect();
        out.push_str(&vals.join("|"));
        out.push('\n');
    }
    out
}

#[test]
fn binlog_row_metadata_variable() {
    let srv = Server::start(&[]);
    let mut c = srv.conn(None);
    let v: String = c
        .query_first("SELECT @@binlog_row_metadata")
        .unwrap()
        .unwrap();
    assert_eq!(v, "FULL");
    let e = c
        .query_drop("SET GLOBAL binlog_row_metadata = NO_LOG")
        .unwrap_err();
    assert!(
        matches!(&e, mysql::Error::MySqlError(m) if m.code == 1231
            && m.message == "Variable 'binlog_row_metadata' can't be set to the value of 'NO_LOG'"),
        "{e}"
    );
    let e = c
        .query_drop("SET binlog_row_metadata = MINIMAL")
        .unwrap_err();
    assert!(
        matches!(&e, mysql::Error::MySqlError(m) if m.code == 1229),
        "{e}"
    );
    c.query_drop("SET GLOBAL binlog_row_metadata = minimal")
        .unwrap();
    let v: String = c
        .query_first("SELECT @@global.binlog_row_metadata")
        .unwrap()
        .unwrap();
    assert_eq!(v, "MINIMAL");
    // MariaDB's numbering: 2 is FULL.
    c.query_drop("SET GLOBAL binlog_row_metadata = 2").unwrap();
    let v: Vec<(String, String)> = c
        .query("SHOW VARIABLES LIKE 'binlog_row_metadata'")
        .unwrap();
    assert_eq!(v, vec![("binlog_row_metadata".into(), "FULL".into())]);
    // @@last_gtid: this session's last logged commit.
    let none: String = c.query_first("SELECT @@last_gtid").unwrap().unwrap();
    assert_eq!(none, "");
    c.query_drop("CREATE DATABASE g").unwrap();
    c.query_drop("CREATE TABLE g.t (id INT PRIMARY KEY)")
        .unwrap();
    c.query_drop("INSERT INTO g.t VALUES (1)").unwrap();
    let (last, pos): (String, String) = c
        .query_first("SELECT @@last_gtid, @@gtid_binlog_pos")
        .unwrap()
        .unwrap();
    assert_eq!(last, pos);
    assert!(last.starts_with("0-1-"), "{last}");
    drop(c);
    let mut srv = srv;
    srv.stop();
    // The start-up option, and NO_LOG refused there too.
    let srv = Server::start(&["--binlog-row-metadata=MINIMAL"]);
    let mut c = srv.conn(None);
    let v: String = c
        .query_first("SELECT @@binlog_row_metadata")
        .unwrap()
        .unwrap();
    assert_eq!(v, "MINIMAL");
    let (ok, _, err) = run(
        ONELOGD,
        &[
            "--binlog-row-metadata=NO_LOG".into(),
            "--datadir=/nonexistent".into(),
        ],
        Duration::from_secs(30),
    );
    assert!(!ok && err.contains("binlog-row-metadata"), "{err}");
}

#[test]
fn python_mysql_replication_rebuilds_the_table() {
    let Some(py) = python_with(
        "pymysqlreplication",
        "python_mysql_replication_rebuilds_the_table",
    ) else {
        return;
    };
    let mut srv = Server::start(&[]);
    let mut c = srv.conn(None);
    workload(&mut c);
    // A table logged with MINIMAL metadata: signedness and charsets, no names, no key.
    c.query_drop("SET GLOBAL binlog_row_metadata = MINIMAL")
        .unwrap();
    c.query_drop("INSERT INTO cdc.m VALUES (7, 'minimal')")
        .unwrap();
    c.query_drop("SET GLOBAL binlog_row_metadata = FULL")
        .unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/py/cdc.py");
    let (ok, out, err) = run(
        &py,
        &[
            script.into(),
            srv.port.to_string(),
            "root".into(),
            "".into(),
            "cdc".into(),
            "t".into(),
            "m".into(),
        ],
        Duration::from_secs(180),
    );
    assert!(
        ok && out.contains("OK cdc"),
        "cdc.py failed:\n{out}\n{err}\nserver log:\n{}",
        srv.log_text()
    );
    eprintln!("{}", out.trim());
    srv.stop();
}

/// `mariadb-binlog -R` output piped into a fresh MariaDB: the table must come out equal.
fn replay_into(db: &MariaDb, sql: &str) {
    let o = run_with_stdin(
        MARIADB,
        &[
            "--no-defaults".into(),
            format!("--socket={}", db.socket.display()),
            "-uroot".into(),
        ],
        sql,
    );
    assert!(
        o.status.success(),
        "replaying mariadb-binlog output into MariaDB failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn remote_binlog(srv: &Server, args: &[&str]) -> String {
    let mut all = vec![
        "--no-defaults".to_string(),
        "--read-from-remote-server".into(),
        "--host=127.0.0.1".into(),
        format!("--port={}", srv.port),
        "--user=root".into(),
        "--to-last-log".into(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    let (ok, out, err) = run("mariadb-binlog", &all, Duration::from_secs(120));
    assert!(
        ok,
        "mariadb-binlog {args:?} failed: {err}\nserver log:\n{}",
        srv.log_text()
    );
    assert!(!err.contains("ERROR") && !err.contains("Warning"), "{err}");
    out
}

#[test]
fn mariadb_binlog_remote_reproduces_the_table() {
    if !have(
        "mariadb-binlog",
        "mariadb_binlog_remote_reproduces_the_table",
    ) {
        return;
    }
    let Some(from_file) = MariaDb::start("mariadb_binlog_remote_reproduces_the_table") else {
        return;
    };
    let from_gtid = MariaDb::start("mariadb_binlog_remote_reproduces_the_table").unwrap();
    let mut srv = Server::start(&[]);
    let mut c = srv.conn(None);
    workload(&mut c);
    // A GTID inside the first file (the dump from it must leave out the groups up to it),
    // and two files (the resume must cross a rotation).
    c.query_drop("INSERT INTO cdc.t (id, name) VALUES (8, 'up to the mid point')")
        .unwrap();
    let mid: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    c.query_drop("INSERT INTO cdc.t (id, name) VALUES (9, 'after the mid point')")
        .unwrap();
    c.query_drop("FLUSH BINARY LOGS").unwrap();
    c.query_drop("INSERT INTO cdc.t (id, name, d) VALUES (7, 'after rotation', 7.125)")
        .unwrap();
    c.query_drop("UPDATE cdc.t SET name = 'changed after rotation' WHERE id = 1")
        .unwrap();
    let want = table_dump(&mut c);
    let files: Vec<(String, u64)> = c.query("SHOW BINARY LOGS").unwrap();
    assert!(files.len() >= 2, "{files:?}");
    let first = files[0].0.clone();

    // 1. The whole log, from the first file on.
    let sql = remote_binlog(&srv, &[&first]);
    replay_into(&from_file, &sql);
    assert_eq!(table_dump(&mut from_file.conn(None)), want, "from {first}");

    // 2. Up to a GTID, then from that GTID on (the dump's @slave_connect_state).
    let upto = remote_binlog(&srv, &[&format!("--stop-position={mid}"), &first]);
    replay_into(&from_gtid, &upto);
    let upto_ids: Vec<u32> = from_gtid
        .conn(None)
        .query("SELECT id FROM cdc.t WHERE id IN (7, 8, 9) ORDER BY id")
        .unwrap();
    assert_eq!(upto_ids, vec![8], "--stop-position={mid}");
    let rest = remote_binlog(&srv, &[&format!("--start-position={mid}"), &first]);
    assert!(
        !rest.contains("CREATE TABLE"),
        "resuming from {mid} sent earlier groups again"
    );
    replay_into(&from_gtid, &rest);
    assert_eq!(
        table_dump(&mut from_gtid.conn(None)),
        want,
        "from GTID {mid}"
    );

    // 3. From a byte offset inside the second file: only what follows it.
    let second = files[1].0.clone();
    let events: Vec<mysql::Row> = c
        .query(format!("SHOW BINLOG EVENTS IN '{second}'"))
        .unwrap();
    let xid_end: Vec<u64> = events
        .iter()
        .filter(|r| r.get::<String, _>(2).unwrap() == "Xid")
        .map(|r| r.get::<u64, _>(4).unwrap())
        .collect();
    assert_eq!(xid_end.len(), 2, "{second}: {events:?}");
    let tail = remote_binlog(
        &srv,
        &["-v", &format!("--start-position={}", xid_end[0]), &second],
    );
    assert!(tail.contains("changed after rotation"));
    assert!(!tail.contains("after rotation', 7.125") && !tail.contains("@2='after rotation'"));
    srv.stop();
}
