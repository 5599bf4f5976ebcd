//! Expression DEFAULTs on the real onelogd: values computed from nondeterministic defaults
//! (UUID(), NOW(6), RAND()) are logged in the row events as values, so that a SIGKILL and
//! the replay of the binlog give back exactly the values read before the kill (also for
//! the rows a deterministic ALTER TABLE ADD COLUMN filled); `mariadb-binlog -v` shows
//! them; the table definitions survive the restart; and a `mariadb-dump` of such a table
//! restores into onelogd with the same SHOW CREATE TABLE and rows.

mod common;

use common::{have, Server};
use mysql::prelude::Queryable;

const TABLE: &str = "CREATE TABLE dx.t (
    id INT PRIMARY KEY,
    u VARCHAR(36) DEFAULT (uuid()),
    ts DATETIME(6) DEFAULT now(6),
    n INT DEFAULT (id * 2),
    r DOUBLE DEFAULT (rand()),
    j TEXT DEFAULT (json_object('id', id)),
    b BLOB DEFAULT 'blob'
)";

fn show_create(c: &mut mysql::Conn, t: &str) -> String {
    let row: (String, String) = c
        .query_first(format!("SHOW CREATE TABLE {t}"))
        .unwrap()
        .unwrap();
    row.1
}

/// Every row of dx.t as text, in id order.
fn rows(c: &mut mysql::Conn) -> Vec<String> {
    let rows: Vec<mysql::Row> = c.query("SELECT * FROM dx.t ORDER BY id").unwrap();
    rows.into_iter()
        .map(|r| {
            let vals: Vec<String> = r.unwrap().into_iter().map(|v| v.as_sql(true)).collect();
            vals.join(",")
        })
        .collect()
}

fn setup(srv: &Server) -> mysql::Conn {
    let mut c = srv.conn(None);
    c.query_drop("CREATE DATABASE dx").unwrap();
    c.query_drop(TABLE).unwrap();
    c.query_drop("INSERT INTO dx.t (id) VALUES (1), (2), (3)")
        .unwrap();
    c.query_drop("INSERT INTO dx.t (id, n) VALUES (4, 40)")
        .unwrap();
    c.query_drop("INSERT INTO dx.t SET id = 5, u = DEFAULT")
        .unwrap();
    c
}

#[test]
fn computed_defaults_survive_kill9_and_are_logged_as_values() {
    let test = "computed_defaults_survive_kill9_and_are_logged_as_values";
    let mut srv = Server::start(&[]);
    let mut c = setup(&srv);
    let uuids: Vec<String> = c.query("SELECT u FROM dx.t ORDER BY id").unwrap();
    assert_eq!(uuids.len(), 5);
    let mut distinct = uuids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 5, "{uuids:?}");
    assert!(uuids.iter().all(|u| u.len() == 36), "{uuids:?}");
    let ns: Vec<i64> = c.query("SELECT n FROM dx.t ORDER BY id").unwrap();
    assert_eq!(ns, vec![2, 4, 6, 40, 10]);
    let fractions: Vec<i64> = c
        .query("SELECT MICROSECOND(ts) FROM dx.t ORDER BY id")
        .unwrap();
    assert_eq!(fractions.len(), 5);
    // A column added with a deterministic expression default is filled row by row.
    c.query_drop("ALTER TABLE dx.t ADD COLUMN w INT DEFAULT (n + 1)")
        .unwrap();
    let ws: Vec<i64> = c.query("SELECT w FROM dx.t ORDER BY id").unwrap();
    assert_eq!(ws, vec![3, 5, 7, 41, 11]);
    let before = rows(&mut c);
    let create = show_create(&mut c, "dx.t");
    assert!(
        create.contains("`u` varchar(36) DEFAULT uuid(),")
            && create.contains("`ts` datetime(6) DEFAULT current_timestamp(6),")
            && create.contains("`n` int(11) DEFAULT (`id` * 2),")
            && create.contains("`j` text DEFAULT json_object('id',`id`),")
            && create.contains("`b` blob DEFAULT 'blob',"),
        "{create}"
    );
    drop(c);

    srv.kill9();
    srv.restart();
    let mut c = srv.conn(None);
    assert_eq!(rows(&mut c), before);
    assert_eq!(show_create(&mut c, "dx.t"), create);
    // The defaults still work after the restart.
    c.query_drop("INSERT INTO dx.t (id) VALUES (6)").unwrap();
    let (u, n): (String, i64) = c
        .query_first("SELECT u, n FROM dx.t WHERE id = 6")
        .unwrap()
        .unwrap();
    assert!(u.len() == 36 && !uuids.contains(&u), "{u}");
    assert_eq!(n, 12);
    // A nondeterministic default gives each existing row its own value.
    c.query_drop("ALTER TABLE dx.t ADD COLUMN v VARCHAR(36) DEFAULT (uuid())")
        .unwrap();
    let mut vs: Vec<String> = c.query("SELECT v FROM dx.t").unwrap();
    vs.sort();
    vs.dedup();
    assert_eq!(vs.len(), 6, "{vs:?}");
    // Those values are what the rows keep after a crash right after the ALTER (recovery
    // must not run the statement again: it would draw other values).
    let added: Vec<(i64, String)> = c.query("SELECT id, v FROM dx.t ORDER BY id").unwrap();
    drop(c);
    srv.kill9();
    srv.restart();
    let mut c = srv.conn(None);
    let again: Vec<(i64, String)> = c.query("SELECT id, v FROM dx.t ORDER BY id").unwrap();
    assert_eq!(again, added, "uuid() values changed across a crash");

    if have("mariadb-binlog", test) {
        let log = common::clients::binlog_text(&srv, true);
        for u in &uuids {
            assert!(
                log.contains(&format!("'{u}'")),
                "{u} not in the binlog:\n{log}"
            );
        }
        assert!(log.contains("###   @4=2\n"), "{log}");
        assert!(log.contains("###   @4=40\n"), "{log}");
    }
    srv.stop();
}

#[test]
fn dump_of_expression_defaults_restores() {
    let test = "dump_of_expression_defaults_restores";
    if !have("/usr/bin/mariadb-dump", test) {
        return;
    }
    let source = Server::start(&[]);
    let mut c = setup(&source);
    let create = show_create(&mut c, "dx.t");
    let want = rows(&mut c);
    drop(c);
    let text = common::clients::dump_database(&source.socket, "dx");
    let fresh = Server::start(&[]);
    let out = fresh.mariadb(&[], &text);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut c = fresh.conn(None);
    assert_eq!(show_create(&mut c, "dx.t"), create);
    assert_eq!(rows(&mut c), want);
}
