//! information_schema.TABLES.CREATE_TIME / UPDATE_TIME and SHOW TABLE STATUS's Create_time
//! / Update_time, as MariaDB 10.11 keeps them for InnoDB: the create time is when CREATE,
//! ALTER or RENAME TABLE last wrote the definition (kept across restarts); the update time
//! is when a committed transaction last changed the rows, kept in memory (NULL after a
//! restart, and until the first change).

mod common;

use common::*;
use mysql::prelude::Queryable;

type Times = (Option<String>, Option<String>);

fn times(c: &mut mysql::Conn) -> Times {
    c.query_first(
        "SELECT CREATE_TIME, UPDATE_TIME FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 't'",
    )
    .unwrap()
    .unwrap()
}

#[test]
fn create_and_update_times() {
    let mut srv = Server::start(&[]);
    let mut c = srv.conn(None);
    c.query_drop("CREATE DATABASE d").unwrap();
    let before: String = c.query_first("SELECT NOW()").unwrap().unwrap();
    c.query_drop("CREATE TABLE d.t (a INT PRIMARY KEY)")
        .unwrap();
    let (created, updated) = times(&mut c);
    let created = created.expect("a create time");
    assert!(created >= before, "{created} < {before}");
    assert_eq!(updated, None);

    // A commit sets the update time; a rolled-back transaction does not.
    c.query_drop("INSERT INTO d.t VALUES (1)").unwrap();
    let (_, updated) = times(&mut c);
    let updated = updated.expect("an update time");
    assert!(updated >= created);
    let status: mysql::Row = c
        .query_first("SHOW TABLE STATUS FROM d LIKE 't'")
        .unwrap()
        .unwrap();
    assert_eq!(
        status.get::<Option<String>, _>("Create_time").unwrap(),
        Some(created.clone())
    );
    assert_eq!(
        status.get::<Option<String>, _>("Update_time").unwrap(),
        Some(updated.clone())
    );
    std::thread::sleep(std::time::Duration::from_millis(1100));
    c.query_drop("BEGIN").unwrap();
    c.query_drop("INSERT INTO d.t VALUES (2)").unwrap();
    c.query_drop("ROLLBACK").unwrap();
    assert_eq!(
        times(&mut c),
        (Some(created.clone()), Some(updated.clone()))
    );

    // ALTER TABLE writes the definition anew.
    c.query_drop("ALTER TABLE d.t ADD COLUMN b INT").unwrap();
    let (altered, _) = times(&mut c);
    let altered = altered.unwrap();
    assert!(altered > created, "{altered} <= {created}");

    // After a restart: the create time stays, the update time is gone until a change.
    // (A clean restart: after a crash, a CREATE or ALTER replayed from the binlog takes
    // the time of the recovery.)
    drop(c);
    srv.stop();
    srv.restart();
    let mut c = srv.conn(None);
    assert_eq!(times(&mut c), (Some(altered.clone()), None));
    c.query_drop("UPDATE d.t SET b = 1").unwrap();
    assert!(times(&mut c).1.is_some());
    srv.stop();
}
