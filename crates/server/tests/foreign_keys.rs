//! FOREIGN KEY constraints on the real onelogd: kept across a clean restart and SIGKILL
//! recovery (also constraints created under `foreign_key_checks=0` whose parent does not
//! exist yet, and an ALTER TABLE ADD FOREIGN KEY redone from the binlog), cascaded rows
//! logged in the row-redo events of the statement's transaction, not as rows events (read
//! back with `mariadb-binlog -v`), and a `mariadb-dump` of tables whose children sort
//! before their parents restoring with the constraints.

mod common;

use common::{have, Server};
use mysql::prelude::Queryable;

const SETUP: &str = "
CREATE DATABASE shop;
USE shop;
CREATE TABLE customer (id INT PRIMARY KEY, name VARCHAR(20));
CREATE TABLE address (id INT PRIMARY KEY, customer_id INT NOT NULL, city VARCHAR(20),
  CONSTRAINT addr_customer FOREIGN KEY (customer_id) REFERENCES customer (id) ON DELETE CASCADE);
CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT,
  FOREIGN KEY (customer_id) REFERENCES customer (id) ON DELETE SET NULL ON UPDATE CASCADE);
CREATE TABLE line (order_id INT, n INT, qty INT, PRIMARY KEY (order_id, n),
  FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE ON UPDATE CASCADE);
INSERT INTO customer VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');
INSERT INTO address VALUES (10, 1, 'oslo'), (11, 1, 'rome'), (20, 2, 'lima');
INSERT INTO orders VALUES (100, 1), (200, 2), (300, 3);
INSERT INTO line VALUES (100, 1, 5), (100, 2, 6), (200, 1, 7), (300, 1, 8);
";

/// The MariaDB error code of a failed statement.
fn error_code(r: Result<(), mysql::Error>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn show_create(c: &mut mysql::Conn, table: &str) -> String {
    let (_, create): (String, String) = c
        .query_first(format!("SHOW CREATE TABLE {table}"))
        .unwrap()
        .unwrap();
    create
}

/// Every table of `shop` with its rows, in a fixed order.
fn rows(c: &mut mysql::Conn) -> String {
    let queries: Vec<(String, String)> = ["address", "customer", "line", "orders"]
        .iter()
        .map(|t| {
            (
                t.to_string(),
                format!("SELECT * FROM shop.{t} ORDER BY 1, 2"),
            )
        })
        .collect();
    common::clients::rows_text(c, &queries)
}

/// The constraints are enforced: an orphan is refused, a referenced row is protected or
/// cascades.
fn assert_enforced(c: &mut mysql::Conn) {
    assert_eq!(
        error_code(c.query_drop("INSERT INTO shop.address VALUES (99, 42, 'nowhere')")),
        1452
    );
    assert_eq!(
        error_code(c.query_drop("INSERT INTO shop.line VALUES (999, 1, 1)")),
        1452
    );
}

#[test]
fn constraints_survive_sigkill_and_cascades_are_redone() {
    let mut srv = Server::start(&[]);
    let out = srv.mariadb(&[], SETUP);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut c = srv.conn(Some("shop"));
    assert_enforced(&mut c);
    // Cascades: addresses go, orders lose their customer; a key update reaches the lines.
    c.query_drop("DELETE FROM customer WHERE id = 1").unwrap();
    c.query_drop("UPDATE orders SET id = 201 WHERE id = 200")
        .unwrap();
    let before = rows(&mut c);
    assert_eq!(
        before,
        "address: ('20','2','lima')\n\
         customer: ('2','bob') ('3','cy')\n\
         line: ('100','1','5') ('100','2','6') ('201','1','7') ('300','1','8')\n\
         orders: ('100',NULL) ('201','2') ('300','3')\n"
    );
    // Created with the checks off before its parent exists; and an ALTER TABLE right
    // before the kill: both are redone from the binlog.
    c.query_drop("SET foreign_key_checks = 0").unwrap();
    c.query_drop(
        "CREATE TABLE note (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES later (id))",
    )
    .unwrap();
    c.query_drop("INSERT INTO note VALUES (1, 5)").unwrap();
    c.query_drop("SET foreign_key_checks = 1").unwrap();
    c.query_drop(
        "ALTER TABLE address ADD CONSTRAINT addr_again FOREIGN KEY (customer_id) \
         REFERENCES customer (id) ON UPDATE CASCADE",
    )
    .unwrap();
    let address = show_create(&mut c, "address");
    assert!(
        address.contains(
            "CONSTRAINT `addr_again` FOREIGN KEY (`customer_id`) REFERENCES `customer` (`id`) ON UPDATE CASCADE"
        ),
        "{address}"
    );
    let orders = show_create(&mut c, "orders");
    drop(c);

    if have(
        "mariadb-binlog",
        "constraints_survive_sigkill_and_cascades_are_redone",
    ) {
        let out = common::clients::binlog_text(&srv, true);
        // The DELETE's transaction holds the parent's row and every cascaded one.
        let start = out
            .find("DELETE FROM customer WHERE id = 1")
            .expect("the DELETE's annotation");
        let end = start + out[start..].find("COMMIT").expect("its COMMIT");
        let txn = &out[start..end];
        // The parent's row is a rows event; the rows its cascades changed are only in
        // onelog's row-redo events, which a replica never receives (it makes them itself,
        // as MariaDB's does).
        assert!(txn.contains("### DELETE FROM `shop`.`customer`"), "{txn}");
        for absent in [
            "### DELETE FROM `shop`.`address`",
            "### UPDATE `shop`.`orders`",
        ] {
            assert!(!txn.contains(absent), "{absent} in:\n{txn}");
        }
        let start = out
            .find("UPDATE orders SET id = 201")
            .expect("the UPDATE's annotation");
        let end = start + out[start..].find("COMMIT").expect("its COMMIT");
        let txn = &out[start..end];
        assert!(txn.contains("### UPDATE `shop`.`orders`"), "{txn}");
        assert!(!txn.contains("### UPDATE `shop`.`line`"), "{txn}");
    }

    srv.kill9();
    srv.restart();
    let mut c = srv.conn(Some("shop"));
    assert_eq!(rows(&mut c), before);
    assert_eq!(show_create(&mut c, "address"), address);
    assert_eq!(show_create(&mut c, "orders"), orders);
    assert!(show_create(&mut c, "note").contains("REFERENCES `later` (`id`)"));
    assert_enforced(&mut c);
    assert_eq!(
        error_code(c.query_drop("INSERT INTO note VALUES (2, 5)")),
        1452
    );
    assert_eq!(error_code(c.query_drop("DROP TABLE customer")), 1451);
    // Cascades keep working after recovery.
    c.query_drop("DELETE FROM orders WHERE id = 100").unwrap();
    let n: Option<i64> = c
        .query_first("SELECT COUNT(*) FROM line WHERE order_id = 100")
        .unwrap();
    assert_eq!(n, Some(0));
    drop(c);

    // And after a clean restart.
    srv.stop();
    srv.restart();
    let mut c = srv.conn(Some("shop"));
    assert_eq!(show_create(&mut c, "address"), address);
    assert_enforced(&mut c);
    srv.assert_no_panic();
}

#[test]
fn a_dump_restores_with_its_constraints() {
    if !have(
        "/usr/bin/mariadb-dump",
        "a_dump_restores_with_its_constraints",
    ) {
        return;
    }
    let source = Server::start(&[]);
    let out = source.mariadb(&[], SETUP);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut c = source.conn(None);
    let want = rows(&mut c);
    let creates: Vec<String> = ["address", "customer", "line", "orders"]
        .iter()
        .map(|t| show_create(&mut c, &format!("shop.{t}")))
        .collect();
    drop(c);
    let text = common::clients::dump_database(&source.socket, "shop");
    // `address` is dumped (and its rows loaded) before `customer`: the dump turns the
    // checks off.
    assert!(text.contains("FOREIGN_KEY_CHECKS=0"), "{text}");
    assert!(
        text.find("CREATE TABLE `address`").unwrap()
            < text.find("CREATE TABLE `customer`").unwrap()
    );
    let fresh = Server::start(&[]);
    let out = fresh.mariadb(&[], &text);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut c = fresh.conn(None);
    assert_eq!(rows(&mut c), want);
    let got: Vec<String> = ["address", "customer", "line", "orders"]
        .iter()
        .map(|t| show_create(&mut c, &format!("shop.{t}")))
        .collect();
    assert_eq!(got, creates);
    assert_enforced(&mut c);
    c.query_drop("DELETE FROM shop.customer WHERE id = 2")
        .unwrap();
    let n: Option<i64> = c
        .query_first("SELECT COUNT(*) FROM shop.address WHERE customer_id = 2")
        .unwrap();
    assert_eq!(n, Some(0));
    fresh.assert_no_panic();
}
