//! Temporary tables on the real onelogd: private to their connection, gone after it
//! disconnects and after SIGKILL + restart, never in the binlog (only the base-table rows
//! an `INSERT ... SELECT` from one writes), never on a MariaDB 10.11 replica, and created
//! only with the CREATE TEMPORARY TABLES privilege.

mod common;

use std::time::Duration;

use common::replica::{add_repl_user, Replica};
use common::{have, Server};
use mysql::prelude::Queryable;

fn err_code(r: Result<(), mysql::Error>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn rows(c: &mut mysql::Conn, sql: &str) -> Vec<(i64, String)> {
    c.query(sql).unwrap()
}

#[test]
fn temporary_tables_are_private_unlogged_and_gone_after_restart() {
    let mut primary = Server::start(&["--server-id=1"]);
    add_repl_user(&primary);
    let replica = Replica::start("temporary_tables_replica", &primary, 2);

    let mut a = primary.conn(None);
    a.query_drop("CREATE DATABASE tt").unwrap();
    a.query_drop("USE tt").unwrap();
    a.query_drop("CREATE TABLE base (id INT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    a.query_drop("INSERT INTO base VALUES (1, 'base row')")
        .unwrap();
    a.query_drop("CREATE TEMPORARY TABLE scratch_tmp (id INT PRIMARY KEY, v VARCHAR(20), KEY (v))")
        .unwrap();
    a.query_drop("INSERT INTO scratch_tmp VALUES (10, 'secret_a'), (11, 'secret_b')")
        .unwrap();
    a.query_drop("UPDATE scratch_tmp SET v = 'secret_c' WHERE id = 11")
        .unwrap();
    a.query_drop("DELETE FROM scratch_tmp WHERE id = 10")
        .unwrap();
    // A temporary table shadowing the base table, for this connection only.
    a.query_drop("CREATE TEMPORARY TABLE base (id INT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    a.query_drop("INSERT INTO base VALUES (99, 'shadow_row')")
        .unwrap();

    // Another connection sees neither.
    let mut b = primary.conn(Some("tt"));
    assert_eq!(
        err_code(b.query_drop("SELECT * FROM scratch_tmp")),
        1146,
        "another connection sees the temporary table"
    );
    assert_eq!(
        rows(&mut b, "SELECT id, v FROM base"),
        vec![(1, "base row".into())]
    );
    // Its own temporary table of the same name is another table.
    b.query_drop("CREATE TEMPORARY TABLE scratch_tmp (id INT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    b.query_drop("INSERT INTO scratch_tmp VALUES (20, 'secret_b2')")
        .unwrap();
    assert_eq!(
        rows(&mut b, "SELECT id, v FROM scratch_tmp"),
        vec![(20, "secret_b2".into())]
    );
    assert_eq!(
        rows(&mut a, "SELECT id, v FROM scratch_tmp"),
        vec![(11, "secret_c".into())]
    );
    assert_eq!(
        rows(&mut a, "SELECT id, v FROM base"),
        vec![(99, "shadow_row".into())]
    );
    let tables: Vec<String> = b.query("SHOW TABLES").unwrap();
    assert_eq!(tables, vec!["base".to_string()]);
    // CREATE TABLE ... LIKE a temporary table is logged as the table it creates.
    b.query_drop("CREATE TABLE base_copy LIKE scratch_tmp")
        .unwrap();

    // INSERT ... SELECT from a temporary table into a base table logs the base rows.
    a.query_drop("DROP TEMPORARY TABLE base").unwrap();
    a.query_drop("INSERT INTO base SELECT id, CONCAT('copied ', id) FROM scratch_tmp")
        .unwrap();
    assert_eq!(
        rows(&mut b, "SELECT id, v FROM base ORDER BY id"),
        vec![(1, "base row".into()), (11, "copied 11".into())]
    );

    // Disconnecting drops them.
    drop(a);
    let mut c = primary.conn(Some("tt"));
    assert_eq!(err_code(c.query_drop("SELECT * FROM scratch_tmp")), 1146);
    assert_eq!(
        rows(&mut b, "SELECT id, v FROM scratch_tmp"),
        vec![(20, "secret_b2".into())]
    );

    if have("mariadb-binlog", "temporary_tables_are_private_unlogged") {
        let log = common::clients::binlog_text(&primary, true);
        assert!(
            log.contains("### INSERT INTO `tt`.`base`") && log.contains("'copied 11'"),
            "the base rows are not logged:\n{log}"
        );
        assert!(
            log.contains("CREATE TABLE `base_copy` (\n  `id` int(11) NOT NULL,"),
            "CREATE TABLE ... LIKE is not logged as a CREATE TABLE:\n{log}"
        );
        // (The INSERT ... SELECT's annotation names the temporary table, as MariaDB's.)
        for absent in [
            "`scratch_tmp`",
            "secret",
            "shadow_row",
            "TEMPORARY TABLE ",
            "crash_tmp",
        ] {
            assert!(
                !log.contains(absent),
                "the binlog mentions {absent}:\n{log}"
            );
        }
    }
    if let Some(r) = &replica {
        r.wait_for(&primary, Duration::from_secs(30));
        let mut rc = r.db.conn(Some("tt"));
        assert_eq!(
            rows(&mut rc, "SELECT id, v FROM base ORDER BY id"),
            vec![(1, "base row".into()), (11, "copied 11".into())]
        );
        let tables: Vec<String> = rc.query("SHOW TABLES").unwrap();
        assert_eq!(tables, vec!["base".to_string(), "base_copy".to_string()]);
    }

    // SIGKILL while a connection holds a temporary table: none after the restart.
    c.query_drop("CREATE TEMPORARY TABLE crash_tmp (id INT PRIMARY KEY)")
        .unwrap();
    c.query_drop("INSERT INTO crash_tmp VALUES (1), (2), (3)")
        .unwrap();
    // OPTIMIZE TABLE flushes the memtables: the temporary rows reach table files.
    b.query_drop("OPTIMIZE TABLE base").unwrap();
    drop(b);
    primary.kill9();
    let log_before = primary.log_text().len();
    primary.restart();
    let log = primary.log_text()[log_before..].to_string();
    assert!(
        log.contains("cleared the data of"),
        "the temporary rows were not cleared at start-up:\n{log}"
    );
    let mut d = primary.conn(Some("tt"));
    assert_eq!(err_code(d.query_drop("SELECT * FROM crash_tmp")), 1146);
    assert_eq!(err_code(d.query_drop("SELECT * FROM scratch_tmp")), 1146);
    assert_eq!(
        rows(&mut d, "SELECT id, v FROM base ORDER BY id"),
        vec![(1, "base row".into()), (11, "copied 11".into())]
    );
    let tables: Vec<String> = d.query("SHOW TABLES").unwrap();
    assert_eq!(tables, vec!["base".to_string(), "base_copy".to_string()]);
    // A new temporary table of the same name starts empty.
    d.query_drop("CREATE TEMPORARY TABLE crash_tmp (id INT PRIMARY KEY)")
        .unwrap();
    let n: Option<i64> = d.query_first("SELECT COUNT(*) FROM crash_tmp").unwrap();
    assert_eq!(n, Some(0));
    primary.assert_no_panic();
}

#[test]
fn creating_a_temporary_table_needs_its_privilege() {
    let srv = Server::start(&[]);
    let mut root = srv.conn(None);
    root.query_drop("CREATE DATABASE p").unwrap();
    root.query_drop("CREATE USER u@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    root.query_drop("GRANT SELECT ON p.* TO u@'%'").unwrap();
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(srv.port)
        .user(Some("u"))
        .pass(Some("pw"))
        .db_name(Some("p"));
    let mut u = mysql::Conn::new(opts.clone()).unwrap();
    assert_eq!(
        err_code(u.query_drop("CREATE TEMPORARY TABLE t (a INT)")),
        1044
    );
    root.query_drop("GRANT CREATE TEMPORARY TABLES ON p.* TO u@'%'")
        .unwrap();
    let mut u = mysql::Conn::new(opts).unwrap();
    u.query_drop("CREATE TEMPORARY TABLE t (a INT)").unwrap();
    // Its creator may then use it without other privileges (as MariaDB).
    u.query_drop("INSERT INTO t VALUES (1), (2)").unwrap();
    u.query_drop("DELETE FROM t WHERE a = 1").unwrap();
    let n: Option<i64> = u.query_first("SELECT SUM(a) FROM t").unwrap();
    assert_eq!(n, Some(2));
    assert_eq!(
        err_code(u.query_drop("CREATE TABLE base_t (a INT)")),
        1142,
        "CREATE TEMPORARY TABLES does not allow CREATE TABLE"
    );
    u.query_drop("DROP TEMPORARY TABLE t").unwrap();
    srv.assert_no_panic();
}
