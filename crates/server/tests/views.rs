//! Views on the real onelogd: they survive SIGKILL (the CREATE VIEW is redone from the
//! binlog), reach a real MariaDB 10.11 replica as MariaDB logs them, round-trip through
//! `mariadb-dump` in both directions, and give a user the rights of their definer.

mod common;

use std::time::Duration;

use common::mariadb::MariaDb;
use common::replica::{add_repl_user, Replica};
use common::{have, Server};
use mysql::prelude::Queryable;

const SETUP: &str = "
CREATE DATABASE shop;
USE shop;
CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2), stock INT);
INSERT INTO item VALUES (1, 'apple', 0.50, 10), (2, 'pear', 0.75, 0), (3, 'plum', 1.20, 5);
CREATE VIEW in_stock AS SELECT id, name, price FROM item WHERE stock > 0;
CREATE VIEW priced (label, cents) AS SELECT UPPER(name), price * 100 FROM in_stock;
CREATE SQL SECURITY INVOKER VIEW totals AS SELECT COUNT(*) AS n, SUM(stock) AS s FROM item;
";

/// Every view of `shop` with its rows, in a fixed order.
fn view_rows(c: &mut mysql::Conn) -> String {
    let views: Vec<(String, String)> = c
        .query("SHOW FULL TABLES FROM shop WHERE Table_type = 'VIEW'")
        .unwrap();
    let queries: Vec<(String, String)> = views
        .into_iter()
        .map(|(v, _)| (v.clone(), format!("SELECT * FROM shop.`{v}` ORDER BY 1")))
        .collect();
    common::clients::rows_text(c, &queries)
}

#[test]
fn views_survive_sigkill_and_reach_a_mariadb_replica() {
    let mut primary = Server::start(&["--server-id=1"]);
    add_repl_user(&primary);
    let replica = Replica::start("views_reach_a_mariadb_replica", &primary, 2);
    let out = primary.mariadb(&[], SETUP);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut c = primary.conn(Some("shop"));
    // Writes through the views land in the table.
    c.query_drop("UPDATE in_stock SET price = price + 1 WHERE name = 'plum'")
        .unwrap();
    c.query_drop("INSERT INTO in_stock (id, name, price) VALUES (4, 'fig', 0.30)")
        .unwrap();
    c.query_drop("DELETE FROM in_stock WHERE id = 1").unwrap();
    let (n, s): (u64, Option<i64>) = c.query_first("SELECT * FROM totals").unwrap().unwrap();
    assert_eq!((n, s), (3, Some(5)));
    c.query_drop("CREATE VIEW scratch AS SELECT 1 AS one")
        .unwrap();
    c.query_drop("DROP VIEW scratch").unwrap();
    let before = view_rows(&mut c);
    assert!(before.contains("priced: ('PLUM','220.00')\n"), "{before}");
    drop(c);

    if let Some(r) = &replica {
        r.wait_for(&primary, Duration::from_secs(30));
        let mut rc = r.db.conn(None);
        assert_eq!(view_rows(&mut rc), before, "the replica's views differ");
        let (_, create, _, _): (String, String, String, String) = rc
            .query_first("SHOW CREATE VIEW shop.totals")
            .unwrap()
            .unwrap();
        assert!(create.contains("SQL SECURITY INVOKER"), "{create}");
    }

    // The DDL was durable before the answer: after SIGKILL it is redone from the binlog.
    let mut c = primary.conn(Some("shop"));
    c.query_drop("CREATE OR REPLACE VIEW cheap AS SELECT name FROM item WHERE price < 1")
        .unwrap();
    drop(c);
    primary.kill9();
    primary.restart();
    let mut c = primary.conn(Some("shop"));
    let mut after = view_rows(&mut c);
    assert!(after.contains("cheap: ('fig') ('pear')\n"), "{after}");
    after = after.replace("cheap: ('fig') ('pear')\n", "");
    assert_eq!(after, before);
    let (_, create, _, _): (String, String, String, String) =
        c.query_first("SHOW CREATE VIEW priced").unwrap().unwrap();
    assert!(
        create.starts_with("CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `priced` (`label`,`cents`) AS SELECT UPPER(name)"),
        "{create}"
    );
    primary.assert_no_panic();
}

#[test]
fn views_round_trip_through_mariadb_dump() {
    if !have(
        "/usr/bin/mariadb-dump",
        "views_round_trip_through_mariadb_dump",
    ) {
        return;
    }
    let Some(maria) = MariaDb::start("views_round_trip_through_mariadb_dump") else {
        return;
    };
    let source = Server::start(&[]);
    let out = source.mariadb(&[], SETUP);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = view_rows(&mut source.conn(None));

    // onelogd's dump restores into MariaDB and into a fresh onelogd.
    let text = common::clients::dump_database(&source.socket, "shop");
    let mut m = maria.conn(None);
    m.query_drop("DROP DATABASE IF EXISTS shop").unwrap();
    let restored = common::run_with_stdin(
        common::MARIADB,
        &[
            "--no-defaults".into(),
            format!("--socket={}", maria.socket.display()),
            "-uroot".into(),
        ],
        &text,
    );
    assert!(
        restored.status.success(),
        "into MariaDB: {}",
        String::from_utf8_lossy(&restored.stderr)
    );
    assert_eq!(view_rows(&mut m), want);
    let fresh = Server::start(&[]);
    let out = fresh.mariadb(&[], &text);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(view_rows(&mut fresh.conn(None)), want);

    // MariaDB's own dump (its canonical view text) restores into onelogd.
    let text = common::clients::dump_database(&maria.socket, "shop");
    let again = Server::start(&[]);
    let out = again.mariadb(&[], &text);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(view_rows(&mut again.conn(None)), want);
}

#[test]
fn a_definer_view_gives_its_definers_rights() {
    let server = Server::start(&[]);
    let setup = "
CREATE DATABASE secret;
CREATE TABLE secret.salary (who VARCHAR(10) PRIMARY KEY, amount INT);
INSERT INTO secret.salary VALUES ('ann', 100), ('bob', 200);
CREATE DATABASE pub;
CREATE VIEW pub.names AS SELECT who FROM secret.salary;
CREATE SQL SECURITY INVOKER VIEW pub.leak AS SELECT who, amount FROM secret.salary;
CREATE USER reader@'%' IDENTIFIED BY 'pw';
GRANT SELECT, UPDATE ON pub.* TO reader@'%';
";
    let out = server.mariadb(&[], setup);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(server.port)
        .user(Some("reader"))
        .pass(Some("pw"));
    let mut c = mysql::Conn::new(opts).unwrap();
    let names: Vec<String> = c.query("SELECT who FROM pub.names ORDER BY who").unwrap();
    assert_eq!(names, ["ann", "bob"]);
    let e = c.query_drop("SELECT * FROM pub.leak").unwrap_err();
    assert!(e.to_string().contains("1142"), "{e}");
    let e = c.query_drop("SELECT * FROM secret.salary").unwrap_err();
    assert!(e.to_string().contains("1142"), "{e}");
    // Writing through the definer's view needs UPDATE on the view only.
    c.query_drop("UPDATE pub.names SET who = 'cat' WHERE who = 'bob'")
        .unwrap();
    let e = c.query_drop("UPDATE pub.leak SET amount = 0").unwrap_err();
    assert!(e.to_string().contains("1142"), "{e}");
    let mut root = server.conn(None);
    let rows: Vec<(String, i32)> = root
        .query("SELECT who, amount FROM secret.salary ORDER BY who")
        .unwrap();
    assert_eq!(rows, [("ann".to_string(), 100), ("cat".to_string(), 200)]);
    server.assert_no_panic();
}
