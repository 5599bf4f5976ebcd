//! XA transactions through real clients: a prepared transaction survives SIGKILL (its locks
//! too) and is committed or rolled back after the restart; the binlog, replayed by
//! `mariadb-binlog` into a real MariaDB 10.11, gives the same tables; a MariaDB 10.11
//! replica of onelogd and a onelogd replica of MariaDB 10.11 (killed while a transaction
//! is prepared) both end with the primary's tables.

mod common;
use common::mariadb::MariaDb;
use common::replica::{add_repl_user, mariadb_primary, Replica};
use common::*;
use mysql::prelude::Queryable;
use std::time::Duration;

fn err_code(r: Result<(), mysql::Error>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn recovered(c: &mut mysql::Conn) -> Vec<String> {
    let rows: Vec<(i64, i64, i64, Vec<u8>)> = c.query("XA RECOVER").unwrap();
    rows.into_iter()
        .map(|(_, _, _, d)| String::from_utf8_lossy(&d).into_owned())
        .collect()
}

fn ids(c: &mut mysql::Conn) -> Vec<(i64, String)> {
    c.query("SELECT id, v FROM xt.a ORDER BY id").unwrap()
}

fn prepare(c: &mut mysql::Conn, xid: &str, stmts: &[&str]) {
    c.query_drop(format!("XA START '{xid}'")).unwrap();
    for s in stmts {
        c.query_drop(*s).unwrap();
    }
    c.query_drop(format!("XA END '{xid}'")).unwrap();
    c.query_drop(format!("XA PREPARE '{xid}'")).unwrap();
}

#[test]
fn prepared_xa_survives_sigkill_and_is_committed_or_rolled_back_after_restart() {
    let mut srv = Server::start(&[]);
    let mut c = srv.conn(None);
    c.query_drop("CREATE DATABASE xt").unwrap();
    c.query_drop("CREATE TABLE xt.a (id INT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    c.query_drop("INSERT INTO xt.a VALUES (1, 'one')").unwrap();
    let mut a = srv.conn(None);
    prepare(
        &mut a,
        "x1",
        &[
            "INSERT INTO xt.a VALUES (2, 'two')",
            "UPDATE xt.a SET v = 'uno' WHERE id = 1",
        ],
    );
    // Prepared and owned by `a`: others see it, cannot end it, and wait for its rows.
    assert_eq!(recovered(&mut c), vec!["x1"]);
    assert_eq!(err_code(c.query_drop("XA COMMIT 'x1'")), 1397);
    c.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    assert_eq!(
        err_code(c.query_drop("UPDATE xt.a SET v = 'x' WHERE id = 1")),
        1205
    );
    assert_eq!(ids(&mut c), vec![(1, "one".to_string())]);
    // The preparing session may not go on with other work.
    assert_eq!(
        err_code(a.query_drop("INSERT INTO xt.a VALUES (9, 'nine')")),
        1399
    );
    let mut b = srv.conn(None);
    prepare(&mut b, "x2", &["INSERT INTO xt.a VALUES (10, 'ten')"]);
    drop((a, b, c));

    srv.kill9();
    srv.restart();
    let mut c = srv.conn(None);
    let mut found = recovered(&mut c);
    found.sort();
    assert_eq!(found, vec!["x1", "x2"]);
    assert_eq!(ids(&mut c), vec![(1, "one".to_string())]);
    // Its locks were taken again.
    c.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    assert_eq!(
        err_code(c.query_drop("DELETE FROM xt.a WHERE id = 1")),
        1205
    );
    assert_eq!(err_code(c.query_drop("XA COMMIT 'x1' ONE PHASE")), 1397);
    c.query_drop("XA COMMIT 'x1'").unwrap();
    c.query_drop("XA ROLLBACK 'x2'").unwrap();
    assert_eq!(err_code(c.query_drop("XA COMMIT 'x2'")), 1397);
    let want = vec![(1, "uno".to_string()), (2, "two".to_string())];
    assert_eq!(ids(&mut c), want);
    drop(c);

    // Once more through a crash: the outcome stays, nothing is prepared.
    srv.kill9();
    srv.restart();
    let mut c = srv.conn(None);
    assert!(recovered(&mut c).is_empty());
    assert_eq!(ids(&mut c), want);
    // A prepare after a clean shutdown comes back from the tables' own record.
    prepare(&mut c, "x3", &["DELETE FROM xt.a WHERE id = 2"]);
    drop(c);
    srv.stop();
    srv.restart();
    let mut c = srv.conn(None);
    assert_eq!(recovered(&mut c), vec!["x3"]);
    c.query_drop("XA COMMIT 'x3'").unwrap();
    let want = vec![(1, "uno".to_string())];
    assert_eq!(ids(&mut c), want);

    // MariaDB 10.11 replaying onelog's binlog ends with the same table.
    if !have(
        "mariadb-binlog",
        "prepared_xa_survives_sigkill_and_is_committed_or_rolled_back_after_restart",
    ) {
        return;
    }
    let script = common::clients::binlog_text(&srv, false);
    for want in ["XA START X'7831',X'',1", "XA PREPARE X'7832',X'',1"] {
        assert!(script.contains(want), "no `{want}` in:\n{script}");
    }
    let Some(m) = MariaDb::start("xa_binlog_replay") else {
        return;
    };
    let out = run_with_stdin(
        "mariadb",
        &[
            "--no-defaults".into(),
            format!("--socket={}", m.socket.display()),
            "-uroot".into(),
        ],
        &script,
    );
    assert!(
        out.status.success(),
        "MariaDB refused onelog's binlog: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut mc = m.conn(None);
    assert_eq!(ids(&mut mc), want);
    assert!(recovered(&mut mc).is_empty());
    srv.assert_no_panic();
}

#[test]
fn xa_replicates_to_a_mariadb_replica() {
    let primary = Server::start(&["--server-id=1"]);
    add_repl_user(&primary);
    let mut c = primary.conn(None);
    c.query_drop("CREATE DATABASE xt").unwrap();
    c.query_drop("CREATE TABLE xt.a (id INT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    let Some(replica) = Replica::start("xa_replicates_to_a_mariadb_replica", &primary, 2) else {
        return;
    };
    prepare(
        &mut c,
        "r1",
        &["INSERT INTO xt.a VALUES (1, 'a'), (2, 'b')"],
    );
    // One that changed nothing is logged nowhere.
    let mut e = primary.conn(None);
    prepare(&mut e, "r2", &["SELECT * FROM xt.a"]);
    e.query_drop("XA ROLLBACK 'r2'").unwrap();
    let mut d = primary.conn(None);
    prepare(&mut d, "r3", &["INSERT INTO xt.a VALUES (3, 'c')"]);
    replica.wait_for(&primary, Duration::from_secs(30));
    let mut rc = replica.db.conn(None);
    // The replica holds the prepared transactions as prepared.
    let mut found = recovered(&mut rc);
    found.sort();
    assert_eq!(found, vec!["r1", "r3"]);
    assert!(ids(&mut rc).is_empty());
    c.query_drop("XA COMMIT 'r1'").unwrap();
    d.query_drop("XA ROLLBACK 'r3'").unwrap();
    replica.wait_for(&primary, Duration::from_secs(30));
    assert_eq!(ids(&mut rc), ids(&mut c));
    assert!(recovered(&mut rc).is_empty());
    primary.assert_no_panic();
}

#[test]
fn onelog_replica_of_mariadb_keeps_a_prepared_xa_through_sigkill() {
    let test = "onelog_replica_of_mariadb_keeps_a_prepared_xa_through_sigkill";
    let Some((primary, port)) = mariadb_primary(test, 1) else {
        return;
    };
    let mut pc = primary.conn(None);
    pc.query_drop("CREATE DATABASE xt").unwrap();
    pc.query_drop("CREATE TABLE xt.a (id INT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    prepare(&mut pc, "m1", &["INSERT INTO xt.a VALUES (1, 'a')"]);
    let mut replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    common::replica::follow(&mut rc, port);
    let want: String = pc.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    common::replica::wait_gtid(&mut rc, &want);
    assert_eq!(recovered(&mut rc), vec!["m1"]);
    assert!(ids(&mut rc).is_empty());
    drop(rc);
    replica.kill9();
    replica.restart();
    let mut rc = replica.conn(None);
    assert_eq!(recovered(&mut rc), vec!["m1"]);
    pc.query_drop("XA COMMIT 'm1'").unwrap();
    prepare(&mut pc, "m2", &["INSERT INTO xt.a VALUES (2, 'b')"]);
    pc.query_drop("XA ROLLBACK 'm2'").unwrap();
    let want: String = pc.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    common::replica::wait_gtid(&mut rc, &want);
    assert_eq!(ids(&mut rc), ids(&mut pc));
    assert!(recovered(&mut rc).is_empty());
    replica.assert_no_panic();
}
