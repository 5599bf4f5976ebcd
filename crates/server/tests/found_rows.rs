//! CLIENT_FOUND_ROWS (what PyMySQL, mysqlclient and SQLAlchemy set): UPDATE reports the
//! rows it matched, and INSERT ... ON DUPLICATE KEY UPDATE counts a duplicate it left
//! unchanged as 1; without the flag they report changed rows only. The same statements on
//! onelogd and on MariaDB 10.11, with and without the flag, report the same counts.

mod common;
use common::mariadb::MariaDb;
use common::*;
use mysql::consts::CapabilityFlags;
use mysql::prelude::Queryable;

fn counts(opts: mysql::OptsBuilder, found_rows: bool) -> Vec<u64> {
    let flags = if found_rows {
        CapabilityFlags::CLIENT_FOUND_ROWS
    } else {
        CapabilityFlags::empty()
    };
    let mut c = mysql::Conn::new(opts.additional_capabilities(flags)).unwrap();
    c.query_drop("DROP DATABASE IF EXISTS fr").unwrap();
    c.query_drop("CREATE DATABASE fr").unwrap();
    c.query_drop("CREATE TABLE fr.t (id INT PRIMARY KEY, v INT, u INT UNIQUE)")
        .unwrap();
    let stmts = [
        "INSERT INTO fr.t VALUES (1, 10, 100), (2, 20, 200), (3, 30, 300)",
        // Matches 3, changes 1.
        "UPDATE fr.t SET v = 20 WHERE id <= 3 AND id >= 2 OR id = 1 AND v = 99",
        "UPDATE fr.t SET v = v WHERE id IN (1, 2)",
        "UPDATE fr.t SET v = 11 WHERE id IN (1, 2)",
        // A duplicate left unchanged, one changed, one new row.
        "INSERT INTO fr.t VALUES (1, 0, 0) ON DUPLICATE KEY UPDATE v = v",
        "INSERT INTO fr.t VALUES (2, 0, 0) ON DUPLICATE KEY UPDATE v = v + 1",
        "INSERT INTO fr.t VALUES (4, 40, 400), (1, 0, 0), (2, 0, 0) \
         ON DUPLICATE KEY UPDATE v = 12",
        "REPLACE INTO fr.t VALUES (3, 30, 300)",
        "DELETE FROM fr.t WHERE id > 3",
    ];
    stmts
        .iter()
        .map(|s| {
            c.query_iter(*s)
                .unwrap_or_else(|e| panic!("{s}: {e}"))
                .affected_rows()
        })
        .collect()
}

#[test]
fn found_rows_as_mariadb() {
    let srv = Server::start(&[]);
    let Some(m) = MariaDb::start_with("found_rows_as_mariadb", &[]) else {
        return;
    };
    let ours = |f| counts(mysql::OptsBuilder::from_opts(srv.opts(None)), f);
    let theirs = |f| {
        counts(
            mysql::OptsBuilder::new()
                .socket(Some(m.socket.to_str().unwrap()))
                .user(Some("root")),
            f,
        )
    };
    for f in [false, true] {
        assert_eq!(ours(f), theirs(f), "CLIENT_FOUND_ROWS {f}");
    }
    // The flag changes what is reported.
    assert_ne!(ours(false), ours(true));
}
