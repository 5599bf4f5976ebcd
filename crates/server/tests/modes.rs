//! The same deterministic workload in the three commit modes (`engine`, `file`,
//! `--skip-log-bin`) leaves identical tables, before and after a restart and after a
//! crash (SIGKILL) with recovery.

mod common;
use common::*;
use mysql::prelude::Queryable;

fn workload(c: &mut mysql::Conn) {
    let stmts = [
        "CREATE DATABASE w",
        "USE w",
        "CREATE TABLE a (id INT PRIMARY KEY, k INT NOT NULL, s VARCHAR(50), d DECIMAL(12,3), \
         f DOUBLE, dt DATETIME(6), b VARBINARY(64), KEY ik (k))",
        "CREATE TABLE b (id BIGINT AUTO_INCREMENT PRIMARY KEY, a_id INT, note TEXT, \
         u BIGINT UNSIGNED, UNIQUE KEY un (u))",
        "INSERT INTO a VALUES (1, 10, 'one', 1.5, 0.1, '2024-01-01 00:00:00.000001', X'00FF'), \
         (2, 20, NULL, -2.25, NULL, NULL, NULL), (3, 30, 'three', 0, 1e100, '1999-12-31 23:59:59', '')",
        "INSERT INTO b (a_id, note, u) VALUES (1, 'x', 18446744073709551615), (2, NULL, 0), (3, 'héllo 😀', 7)",
        "UPDATE a SET k = k + 1, s = CONCAT(IFNULL(s, 'null'), '!') WHERE id >= 2",
        "DELETE FROM b WHERE u = 0",
        "INSERT INTO b (a_id, note, u) VALUES (4, 'after delete', 8)",
        "BEGIN",
        "INSERT INTO a VALUES (4, 40, 'four', 4, 4, '2004-04-04 04:04:04', X'04')",
        "UPDATE a SET d = d * 10 WHERE id = 1",
        "COMMIT",
        "BEGIN",
        "DELETE FROM a WHERE id = 1",
        "INSERT INTO a VALUES (5, 50, 'rolled back', 5, 5, NULL, NULL)",
        "ROLLBACK",
        "SET autocommit = 0",
        "UPDATE a SET f = 2.5 WHERE id = 2",
        "INSERT INTO b (a_id, note, u) VALUES (5, 'autocommit off', 9)",
        "COMMIT",
        "UPDATE a SET f = 99 WHERE id = 2",
        "ROLLBACK",
        "SET autocommit = 1",
        "CREATE TABLE c (k VARCHAR(20) PRIMARY KEY, n INT)",
        "INSERT INTO c SELECT CONCAT('key', id), k FROM a",
        "CREATE INDEX in_n ON c (n)",
        "REPLACE INTO c VALUES ('key1', 1000)",
        "INSERT INTO c VALUES ('key2', 0) ON DUPLICATE KEY UPDATE n = n + 1",
        "ALTER TABLE a ADD COLUMN extra INT DEFAULT 7",
        "UPDATE a SET extra = id * 100 WHERE id > 2",
        "CREATE TABLE gone (x INT PRIMARY KEY)",
        "INSERT INTO gone VALUES (1)",
        "DROP TABLE gone",
        "TRUNCATE TABLE c",
        "INSERT INTO c VALUES ('after truncate', 1)",
    ];
    for s in stmts {
        c.query_drop(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    // A larger batch through a prepared statement, with deletes and updates.
    for i in 0..500i64 {
        c.exec_drop(
            "INSERT INTO b (a_id, note, u) VALUES (?, ?, ?)",
            (i % 7, format!("row {i}"), 1000 + i as u64),
        )
        .unwrap();
    }
    c.query_drop("DELETE FROM b WHERE u % 3 = 0 AND u >= 1000")
        .unwrap();
    c.query_drop("UPDATE b SET note = CONCAT(note, '*') WHERE a_id = 3")
        .unwrap();
    // Errors leave no trace.
    assert!(c
        .query_drop("INSERT INTO a VALUES (1, 1, 'dup', 0, 0, NULL, NULL, 0)")
        .is_err());
    assert!(c
        .query_drop("INSERT INTO b (a_id, u) VALUES (1, 7)")
        .is_err());
    c.query_drop("INSERT INTO b (a_id, note, u) VALUES (9, 'last', 99)")
        .unwrap();
}

fn run_mode(args: &[&str]) -> String {
    let mut srv = Server::start(args);
    let mut c = srv.conn(None);
    workload(&mut c);
    let d1 = dump_tables(&mut c);
    drop(c);
    srv.stop();
    srv.restart();
    let d2 = srv.dump_tables();
    assert_eq!(d1, d2, "{args:?}: contents changed by a clean restart");
    // A crash right after the last commit changes nothing either.
    srv.sql("INSERT INTO w.c VALUES ('crash', 1)");
    let d3 = srv.dump_tables();
    srv.kill9();
    srv.restart();
    assert_eq!(
        d3,
        srv.dump_tables(),
        "{args:?}: contents changed by crash recovery"
    );
    srv.sql("DELETE FROM w.c WHERE k = 'crash'");
    let d4 = srv.dump_tables();
    srv.stop();
    assert_eq!(d1, d4);
    d1
}

#[test]
fn same_tables_in_all_modes() {
    let engine = run_mode(&[]);
    let file = run_mode(&["--binlog-storage=file"]);
    let off = run_mode(&["--skip-log-bin"]);
    assert!(
        engine.contains("== w.b (") && engine.lines().count() > 300,
        "{engine}"
    );
    assert_eq!(engine, file, "engine vs file mode");
    assert_eq!(engine, off, "engine vs --skip-log-bin");
}
