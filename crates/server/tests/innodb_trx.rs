//! information_schema.INNODB_TRX on the real onelogd: a transaction holding a row lock is
//! RUNNING with its connection and changed rows, one blocked on that lock is LOCK WAIT
//! with its statement and the time it began waiting, and both are gone once they end.

mod common;

use std::time::{Duration, Instant};

use common::Server;
use mysql::prelude::Queryable;

type TrxRow = (String, u64, Option<String>, u64, Option<String>, String);

fn trx(c: &mut mysql::Conn) -> Vec<TrxRow> {
    c.query(
        "SELECT trx_state, trx_mysql_thread_id, trx_query, trx_rows_modified, \
         CAST(trx_wait_started AS CHAR), trx_isolation_level \
         FROM information_schema.INNODB_TRX ORDER BY trx_started, trx_id",
    )
    .unwrap()
}

#[test]
fn innodb_trx_shows_running_and_waiting_transactions() {
    let srv = Server::start(&[]);
    let mut admin = srv.conn(None);
    admin.query_drop("CREATE DATABASE it").unwrap();
    admin
        .query_drop("CREATE TABLE it.t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    admin
        .query_drop("INSERT INTO it.t VALUES (1, 0), (2, 0)")
        .unwrap();
    assert!(trx(&mut admin).is_empty(), "no transaction is open yet");

    let mut a = srv.conn(Some("it"));
    let a_id: u64 = a.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    a.query_drop("BEGIN").unwrap();
    a.query_drop("UPDATE t SET v = v + 1 WHERE id IN (1, 2)")
        .unwrap();
    let rows = trx(&mut admin);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, "RUNNING");
    assert_eq!(rows[0].1, a_id);
    assert_eq!(rows[0].3, 2, "rows modified");
    assert_eq!(rows[0].4, None);
    assert_eq!(rows[0].5, "REPEATABLE READ");

    let opts = srv.opts(Some("it"));
    let blocked = std::thread::spawn(move || {
        let mut b = mysql::Conn::new(opts).unwrap();
        let id: u64 = b.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
        b.query_drop("UPDATE t SET v = v + 10 WHERE id = 1")
            .unwrap();
        id
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let rows = loop {
        let rows = trx(&mut admin);
        if rows.iter().any(|r| r.0 == "LOCK WAIT") {
            break rows;
        }
        assert!(Instant::now() < deadline, "no LOCK WAIT seen: {rows:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let waiting = rows.iter().find(|r| r.0 == "LOCK WAIT").unwrap();
    assert_eq!(
        waiting.2.as_deref(),
        Some("UPDATE t SET v = v + 10 WHERE id = 1")
    );
    assert!(waiting.4.is_some(), "no wait start: {waiting:?}");
    assert_ne!(waiting.1, a_id);
    a.query_drop("COMMIT").unwrap();
    let b_id = blocked.join().unwrap();
    assert_eq!(waiting.1, b_id);
    let v: Option<i64> = admin
        .query_first("SELECT v FROM it.t WHERE id = 1")
        .unwrap();
    assert_eq!(v, Some(11));
    assert!(trx(&mut admin).is_empty(), "{:?}", trx(&mut admin));
    srv.assert_no_panic();
}
