//! Semi-synchronous replication with real MariaDB 10.11 servers: onelogd as the primary of
//! a semi-sync MariaDB replica (ACKs, the AFTER_SYNC guarantee under SIGKILL, the timeout
//! fallback and its return), onelogd as the semi-sync replica of a MariaDB primary, and
//! bad ACKs that must not release a commit.

mod common;
use common::mariadb::MariaDb;
use common::*;
use mysql::prelude::Queryable;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn status_of(c: &mut mysql::Conn) -> HashMap<String, String> {
    let rows: Vec<(String, String)> = c.query("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync%'").unwrap();
    rows.into_iter().collect()
}

fn num(st: &HashMap<String, String>, name: &str) -> u64 {
    st.get(name)
        .unwrap_or_else(|| panic!("no status {name}: {st:?}"))
        .parse()
        .unwrap()
}

fn add_repl_user(c: &mut mysql::Conn) {
    c.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    c.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
}

/// A semi-sync MariaDB 10.11 replica of the server on `port`.
fn mariadb_replica(test: &str, port: u16, server_id: u32) -> Option<MariaDb> {
    let db = MariaDb::start_with(
        test,
        &[
            format!("--server-id={server_id}"),
            "--rpl-semi-sync-slave-enabled=ON".into(),
            "--slave-net-timeout=10".into(),
        ],
    )?;
    point_at(&db, port);
    Some(db)
}

fn point_at(db: &MariaDb, port: u16) {
    let mut c = db.conn(None);
    c.query_drop("STOP SLAVE").unwrap();
    c.query_drop(format!(
        "CHANGE MASTER TO master_host='127.0.0.1', master_port={port}, master_user='repl', \
         master_password='pw', master_use_gtid=slave_pos, master_connect_retry=1"
    ))
    .unwrap();
    c.query_drop("START SLAVE").unwrap();
}

/// Polls until `done` holds for the primary's semi-sync status (at most 30 s).
fn wait_status(
    c: &mut mysql::Conn,
    what: &str,
    done: impl Fn(&HashMap<String, String>) -> bool,
) -> HashMap<String, String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let st = status_of(c);
        if done(&st) {
            return st;
        }
        assert!(Instant::now() < deadline, "{what}: {st:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn count(c: &mut mysql::Conn, sql: &str) -> u64 {
    c.query_first(sql).unwrap().unwrap()
}

/// A MariaDB replica acknowledges onelog's groups: commits are counted as acknowledged.
/// Stopping the replica makes a
/// commit wait out the timeout and switches semi-sync OFF; later commits do not wait;
/// once the replica is back and caught up, it is ON again.
#[test]
fn mariadb_replica_acknowledges_and_the_timeout_falls_back() {
    let test = "mariadb_replica_acknowledges_and_the_timeout_falls_back";
    let primary = Server::start(&[
        "--server-id=1",
        "--rpl-semi-sync-master-enabled=ON",
        "--rpl-semi-sync-master-wait-point=AFTER_SYNC",
        "--rpl-semi-sync-master-timeout=2000",
    ]);
    let mut pc = primary.conn(None);
    add_repl_user(&mut pc);
    pc.query_drop("CREATE DATABASE s").unwrap();
    pc.query_drop("CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    let Some(replica) = mariadb_replica(test, primary.port, 2) else {
        return;
    };
    let mut rc = replica.conn(None);
    wait_status(&mut pc, "the replica connects with semi-sync", |st| {
        num(st, "Rpl_semi_sync_master_clients") == 1 && st["Rpl_semi_sync_master_status"] == "ON"
    });
    let slave: Vec<(String, String)> = rc
        .query("SHOW STATUS LIKE 'Rpl_semi_sync_slave_status'")
        .unwrap();
    assert_eq!(slave[0].1, "ON");
    // The set-up above ran before any replica: the first statement waited out the timeout
    // (rpl_semi_sync_master_wait_no_slave is ON) and switched semi-sync OFF; the
    // replica's first ACK switched it ON.
    let st = status_of(&mut pc);
    assert_eq!(num(&st, "Rpl_semi_sync_master_off_times"), 1, "{st:?}");
    let (yes0, no0) = (
        num(&st, "Rpl_semi_sync_master_yes_tx"),
        num(&st, "Rpl_semi_sync_master_no_tx"),
    );
    for i in 0..50 {
        pc.query_drop(format!("INSERT INTO s.t VALUES ({i}, 'x')"))
            .unwrap();
    }
    let st = status_of(&mut pc);
    assert_eq!(num(&st, "Rpl_semi_sync_master_yes_tx") - yes0, 50, "{st:?}");
    assert_eq!(num(&st, "Rpl_semi_sync_master_no_tx"), no0, "{st:?}");
    assert_eq!(st["Rpl_semi_sync_master_status"], "ON");

    // The replica stops: the next commit waits for the timeout, then semi-sync is OFF.
    rc.query_drop("STOP SLAVE").unwrap();
    wait_status(&mut pc, "the replica disconnects", |st| {
        num(st, "Rpl_semi_sync_master_clients") == 0
    });
    let t = Instant::now();
    pc.query_drop("INSERT INTO s.t VALUES (100, 'timeout')")
        .unwrap();
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(1900) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
    let st = status_of(&mut pc);
    assert_eq!(st["Rpl_semi_sync_master_status"], "OFF", "{st:?}");
    assert_eq!(num(&st, "Rpl_semi_sync_master_no_tx"), no0 + 1, "{st:?}");
    let t = Instant::now();
    for i in 101..111 {
        pc.query_drop(format!("INSERT INTO s.t VALUES ({i}, 'async')"))
            .unwrap();
    }
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t.elapsed()
    );
    // Back: it catches up, acknowledges the last commit, and semi-sync is ON again.
    rc.query_drop("START SLAVE").unwrap();
    wait_status(&mut pc, "semi-sync switches back ON", |st| {
        st["Rpl_semi_sync_master_status"] == "ON"
    });
    let yes = num(&status_of(&mut pc), "Rpl_semi_sync_master_yes_tx");
    pc.query_drop("INSERT INTO s.t VALUES (200, 'again')")
        .unwrap();
    assert_eq!(
        num(&status_of(&mut pc), "Rpl_semi_sync_master_yes_tx"),
        yes + 1
    );
    // Received (in the relay log) when acknowledged; applied a moment later.
    let deadline = Instant::now() + Duration::from_secs(20);
    while count(&mut rc, "SELECT COUNT(*) FROM s.t WHERE id = 200") != 1 {
        assert!(Instant::now() < deadline, "the replica never applied it");
        std::thread::sleep(Duration::from_millis(20));
    }
    primary.assert_no_panic();
}
