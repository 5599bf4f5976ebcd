//! Foreign key cascades and replication, with the real servers and clients: a MariaDB
//! 10.11 replica of onelogd makes the cascades itself (onelog logs the rows a cascade
//! changed only in its ignorable row-redo events, as MariaDB never logs them), onelogd
//! replicas of a onelogd and of a MariaDB primary make them themselves too, a statement
//! (DML or DDL) run with `foreign_key_checks=0` replicates with the checks off, `mariadb-binlog` output
//! replayed into a fresh onelogd gives the same tables, and SIGKILL recovery redoes the
//! cascaded rows.

mod common;

use std::time::Duration;

use common::replica::{add_repl_user, catch_up, follow, mariadb_primary, Replica};
use common::{have, Server};
use mysql::prelude::Queryable;

const SCHEMA: &[&str] = &[
    "CREATE DATABASE fk",
    "CREATE TABLE fk.dept (id INT PRIMARY KEY, name VARCHAR(20))",
    "CREATE TABLE fk.emp (id INT PRIMARY KEY, dept_id INT, boss INT, name VARCHAR(20),
       FOREIGN KEY (dept_id) REFERENCES fk.dept (id) ON DELETE CASCADE ON UPDATE CASCADE,
       FOREIGN KEY (boss) REFERENCES fk.emp (id) ON DELETE SET NULL)",
    "CREATE TABLE fk.task (id INT PRIMARY KEY, emp_id INT, title VARCHAR(20),
       FOREIGN KEY (emp_id) REFERENCES fk.emp (id) ON DELETE CASCADE ON UPDATE CASCADE)",
    // No primary key: rows are found by their whole image.
    "CREATE TABLE fk.tag (task_id INT, label VARCHAR(10),
       FOREIGN KEY (task_id) REFERENCES fk.task (id) ON DELETE CASCADE)",
    "INSERT INTO fk.dept VALUES (1, 'eng'), (2, 'ops'), (3, 'law')",
    "INSERT INTO fk.emp VALUES (10, 1, NULL, 'ann'), (11, 1, 10, 'bo'), (12, 1, 11, 'cy'),
       (20, 2, NULL, 'di'), (21, 2, 20, 'ed'), (30, 3, NULL, 'fay')",
    "INSERT INTO fk.task VALUES (100, 10, 'plan'), (101, 11, 'code'), (102, 12, 'test'),
       (200, 20, 'ship'), (201, 21, 'fix'), (300, 30, 'sign')",
    "INSERT INTO fk.tag VALUES (100, 'a'), (101, 'b'), (101, 'c'), (102, 'd'), (200, 'e'),
       (201, 'f'), (300, 'g')",
];

/// Statements whose cascades reach two and three tables deep, through a self-reference,
/// inside a multi-statement transaction, by REPLACE and by ON DUPLICATE KEY UPDATE.
const CASCADES: &[&str] = &[
    "UPDATE fk.dept SET id = 4 WHERE id = 1",
    "DELETE FROM fk.emp WHERE id = 11",
    "UPDATE fk.emp SET id = 13 WHERE id = 12",
    "BEGIN",
    "DELETE FROM fk.dept WHERE id = 2",
    "INSERT INTO fk.dept VALUES (2, 'ops again')",
    "INSERT INTO fk.emp VALUES (22, 2, NULL, 'gil')",
    "INSERT INTO fk.task VALUES (202, 22, 'run')",
    "COMMIT",
    "REPLACE INTO fk.dept VALUES (3, 'legal')",
    "INSERT INTO fk.task VALUES (202, 22, 'x') ON DUPLICATE KEY UPDATE id = 203",
    // Checks off: an orphan is accepted, and a parent goes without its cascade.
    "SET foreign_key_checks = 0",
    "INSERT INTO fk.task VALUES (900, 777, 'orphan')",
    "DELETE FROM fk.emp WHERE id = 22",
    // A child created before its parent (as a `mariadb-dump` file does it).
    "CREATE TABLE fk.note (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fk.later (id))",
    "SET foreign_key_checks = 1",
];

fn run_all(c: &mut mysql::Conn, stmts: &[&str]) {
    for s in stmts {
        c.query_drop(*s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
}

/// Every table of `fk` with its rows, in a fixed order.
fn tables(c: &mut mysql::Conn) -> String {
    let q: Vec<(String, String)> = ["dept", "emp", "task", "tag"]
        .iter()
        .map(|t| (t.to_string(), format!("SELECT * FROM fk.{t} ORDER BY 1, 2")))
        .collect();
    common::clients::rows_text(c, &q)
}

const EXPECTED: &str = "dept: ('2','ops again') ('3','legal') ('4','eng')\n\
    emp: ('10','4',NULL,'ann') ('13','4',NULL,'cy')\n\
    task: ('100','10','plan') ('102','13','test') ('203','22','run') ('900','777','orphan')\n\
    tag: ('100','a') ('102','d')\n";

#[test]
fn replicas_make_the_cascades_and_recovery_redoes_them() {
    let test = "replicas_make_the_cascades_and_recovery_redoes_them";
    let mut primary = Server::start(&["--server-id=1"]);
    add_repl_user(&primary);
    let mariadb = Replica::start(test, &primary, 2);
    let mut onelog = Server::start(&["--server-id=3"]);
    follow(&mut onelog.conn(None), primary.port);

    let mut c = primary.conn(None);
    run_all(&mut c, SCHEMA);
    run_all(&mut c, CASCADES);
    let want = tables(&mut c);
    assert_eq!(want, EXPECTED);

    if let Some(r) = &mariadb {
        r.wait_for(&primary, Duration::from_secs(30));
        assert_eq!(tables(&mut r.db.conn(None)), want, "the MariaDB replica");
    }
    let mut oc = onelog.conn(None);
    catch_up(&mut oc, &mut c);
    assert_eq!(tables(&mut oc), want, "the onelogd replica");

    if have("mariadb-binlog", test) {
        // The cascaded rows are not rows events (a replica reads only the named rows).
        let log = common::clients::binlog_text(&primary, true);
        let at = log.find("UPDATE fk.dept SET id = 4").expect("the UPDATE");
        let txn = &log[at..at + log[at..].find("COMMIT").unwrap()];
        assert!(txn.contains("### UPDATE `fk`.`dept`"), "{txn}");
        assert!(!txn.contains("### UPDATE `fk`.`emp`"), "{txn}");
        // The checks-off statement's rows events say so: the replicas accepted the orphan.
        let raw = replay_into_fresh_server(&primary);
        assert_eq!(
            raw, want,
            "mariadb-binlog output replayed into a fresh onelogd"
        );
    }
    // A cascade in an XA transaction left prepared.
    run_all(
        &mut c,
        &[
            "XA START 'cx'",
            "DELETE FROM fk.dept WHERE id = 4",
            "XA END 'cx'",
            "XA PREPARE 'cx'",
        ],
    );
    drop(c);

    // SIGKILL: recovery redoes the cascaded rows from the row-redo events, and keeps the
    // prepared transaction's, which its XA COMMIT then makes.
    primary.kill9();
    primary.restart();
    let mut c = primary.conn(None);
    assert_eq!(tables(&mut c), want, "after SIGKILL");
    run_all(
        &mut c,
        &["XA COMMIT 'cx'", "UPDATE fk.task SET emp_id = NULL"],
    );
    let want = tables(&mut c);
    assert_eq!(
        want,
        "dept: ('2','ops again') ('3','legal')\nemp:\n\
         task: ('203',NULL,'run') ('900',NULL,'orphan')\ntag:\n"
    );
    if let Some(r) = &mariadb {
        r.point_at(&primary);
        r.wait_for(&primary, Duration::from_secs(30));
        assert_eq!(tables(&mut r.db.conn(None)), want, "the MariaDB replica");
    }
    let mut oc = onelog.conn(None);
    oc.query_drop("STOP SLAVE").unwrap();
    follow(&mut oc, primary.port);
    catch_up(&mut oc, &mut c);
    assert_eq!(tables(&mut oc), want, "the onelogd replica");
    // The replica's own log (its cascades in row-redo events) survives its SIGKILL.
    drop(oc);
    onelog.kill9();
    onelog.restart();
    assert_eq!(
        tables(&mut onelog.conn(None)),
        want,
        "the replica after SIGKILL"
    );
    primary.assert_no_panic();
    onelog.assert_no_panic();
}

/// The binlog of `srv` as `mariadb-binlog` prints it, run by `mariadb` on a fresh
/// onelogd (BINLOG statements: the rows, with the cascades made there); its `fk` tables.
fn replay_into_fresh_server(srv: &Server) -> String {
    let log = common::clients::binlog_text(srv, false);
    let fresh = Server::start(&[]);
    let out = fresh.mariadb(&[], &log);
    assert!(
        out.status.success(),
        "replay failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = tables(&mut fresh.conn(None));
    fresh.assert_no_panic();
    t
}

#[test]
fn onelog_replica_makes_a_mariadb_primarys_cascades() {
    let test = "onelog_replica_makes_a_mariadb_primarys_cascades";
    let Some((primary, port)) = mariadb_primary(test, 1) else {
        return;
    };
    let mut pc = primary.conn(None);
    let mut replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    follow(&mut rc, port);
    run_all(&mut pc, SCHEMA);
    run_all(&mut pc, CASCADES);
    let want = tables(&mut pc);
    assert_eq!(want, EXPECTED, "MariaDB itself");
    catch_up(&mut rc, &mut pc);
    assert_eq!(tables(&mut rc), want);
    drop(rc);
    replica.kill9();
    replica.restart();
    assert_eq!(tables(&mut replica.conn(None)), want, "after SIGKILL");
    replica.assert_no_panic();
}
