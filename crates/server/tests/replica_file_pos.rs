//! onelogd as a replica positioned by the primary's binlog file and position
//! (`CHANGE MASTER TO MASTER_LOG_FILE=..., MASTER_LOG_POS=...`, `MASTER_USE_GTID=no`):
//! CHANGE MASTER TO gives MariaDB's notes and SHOW SLAVE STATUS MariaDB's fields; it
//! starts exactly at the position, follows a MariaDB 10.11 primary and a onelogd primary,
//! and after SIGKILLs at any moment resumes with nothing applied twice or lost.

mod common;
use common::mariadb::MariaDb;
use common::replica::{mariadb_primary, slave_status};
use common::*;
use mysql::prelude::Queryable;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The statements of `run_change_masters`, each with the notes it gave and the position
/// fields of SHOW SLAVE STATUS after it.
fn run_change_masters(c: &mut mysql::Conn) -> Vec<String> {
    let fields = [
        "Master_Log_File",
        "Read_Master_Log_Pos",
        "Relay_Master_Log_File",
        "Exec_Master_Log_Pos",
        "Using_Gtid",
    ];
    let stmts = [
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=3999, MASTER_USER='r', \
         MASTER_LOG_FILE='mb.000002', MASTER_LOG_POS=1234",
        "CHANGE MASTER TO MASTER_LOG_POS=100",
        "CHANGE MASTER TO MASTER_LOG_POS=2",
        "CHANGE MASTER TO MASTER_USE_GTID=slave_pos",
        "CHANGE MASTER TO MASTER_USE_GTID=current_pos, MASTER_LOG_FILE='x.000001', \
         MASTER_LOG_POS=4",
        "CHANGE MASTER TO MASTER_LOG_FILE='a.000003'",
        "CHANGE MASTER TO MASTER_PORT=4000",
        "CHANGE MASTER TO MASTER_USE_GTID=no, MASTER_LOG_FILE='b.000007', MASTER_LOG_POS=77",
        "RESET SLAVE",
    ];
    let mut out = Vec::new();
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (a INT)").unwrap();
    for sql in stmts {
        // A statement that reads a table clears the notes (one that does not, like CHANGE
        // MASTER TO itself, leaves the last statement's in MariaDB).
        c.query_drop("SELECT * FROM d.t").unwrap();
        c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        let notes: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
        let status: Vec<String> = fields
            .iter()
            .map(|f| format!("{f}={}", slave_status(c, f)))
            .collect();
        out.push(format!("{sql}\n  {notes:?}\n  {}", status.join(" ")));
    }
    out
}

#[test]
fn change_master_positions_as_mariadb() {
    let srv = Server::start(&["--server-id=2"]);
    let Some(m) = MariaDb::start_with("change_master_positions_as_mariadb", &[]) else {
        return;
    };
    let ours = run_change_masters(&mut srv.conn(None));
    let theirs = run_change_masters(&mut m.conn(None));
    assert_eq!(ours.join("\n"), theirs.join("\n"));
    // The position a CHANGE MASTER TO set survives a restart.
    let mut srv = srv;
    let mut c = srv.conn(None);
    c.query_drop(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=3999, MASTER_USER='r', \
         MASTER_LOG_FILE='mb.000009', MASTER_LOG_POS=555",
    )
    .unwrap();
    drop(c);
    srv.kill9();
    srv.args.push("--skip-slave-start".into());
    srv.restart();
    let mut c = srv.conn(None);
    assert_eq!(slave_status(&mut c, "Relay_Master_Log_File"), "mb.000009");
    assert_eq!(slave_status(&mut c, "Exec_Master_Log_Pos"), "555");
    assert_eq!(slave_status(&mut c, "Using_Gtid"), "No");
    // Relay-log positions have no meaning here: refused, as an unsupported option.
    let e = c
        .query_drop("CHANGE MASTER TO RELAY_LOG_FILE='r.000001', RELAY_LOG_POS=4")
        .unwrap_err();
    assert!(e.to_string().contains("1235"), "{e}");
}

/// The primary's `SHOW MASTER STATUS`: its current file and position.
fn master_status(c: &mut mysql::Conn) -> (String, u64) {
    let row: mysql::Row = c.query_first("SHOW MASTER STATUS").unwrap().unwrap();
    (row.get(0).unwrap(), row.get(1).unwrap())
}

const SCHEMA: [&str; 4] = [
    "CREATE DATABASE app",
    "CREATE TABLE app.counter (k INT PRIMARY KEY, n INT NOT NULL)",
    "CREATE TABLE app.log (id INT PRIMARY KEY, pad VARCHAR(100))",
    "INSERT INTO app.counter VALUES (1, 0)",
];

/// A writer on the primary: transactions of one insert and one increment until `stop`.
fn writer(opts: mysql::Opts, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<i64> {
    std::thread::spawn(move || {
        let mut w = mysql::Conn::new(opts).unwrap();
        let mut i = 0;
        while !stop.load(Ordering::Relaxed) {
            w.query_drop("BEGIN").unwrap();
            w.query_drop(format!("INSERT INTO app.log VALUES ({i}, REPEAT('p', 90))"))
                .unwrap();
            w.query_drop("UPDATE app.counter SET n = n + 1").unwrap();
            w.query_drop("COMMIT").unwrap();
            i += 1;
        }
        i
    })
}

/// The rows both sides must have: the counter and the log rows the writer made.
fn replicated(c: &mut mysql::Conn) -> (i64, Vec<(i64, String)>) {
    let n = c
        .query_first("SELECT n FROM app.counter WHERE k = 1")
        .unwrap()
        .unwrap();
    let rows = c
        .query("SELECT id, pad FROM app.log WHERE id >= 0 ORDER BY id")
        .unwrap();
    (n, rows)
}

/// Waits until the onelogd replica behind `rc` has executed up to `(file, pos)`.
fn wait_executed(rc: &mut mysql::Conn, file: &str, pos: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let at = (
            slave_status(rc, "Relay_Master_Log_File"),
            slave_status(rc, "Exec_Master_Log_Pos"),
        );
        if at == (file.to_string(), pos.to_string()) {
            return;
        }
        let err = slave_status(rc, "Last_SQL_Error");
        assert!(err.is_empty(), "replica stopped: {err}");
        assert!(
            Instant::now() < deadline,
            "replica at {at:?}, primary at {file}:{pos}; IO: {}",
            slave_status(rc, "Last_IO_Error")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Follows the primary on `port` from its position `at`, SIGKILLed `kills` times while a
/// writer runs there; ends with the replica at the primary's position and the same rows,
/// and without the row the primary wrote before `at`.
fn follow_from_position(primary: &mut mysql::Conn, opts: mysql::Opts, port: u16, kills: u64) {
    for sql in SCHEMA {
        primary.query_drop(sql).unwrap();
    }
    // Before the position: the replica must never see this row.
    primary
        .query_drop("INSERT INTO app.log VALUES (-1, 'before the position')")
        .unwrap();
    let (file, pos) = master_status(primary);
    let mut replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    for sql in SCHEMA {
        rc.query_drop(sql).unwrap();
    }
    rc.query_drop(format!(
        "CHANGE MASTER TO master_host='127.0.0.1', master_port={port}, master_user='repl', \
         master_password='pw', master_log_file='{file}', master_log_pos={pos}, \
         master_connect_retry=1, master_heartbeat_period=0.5"
    ))
    .unwrap();
    assert_eq!(slave_status(&mut rc, "Using_Gtid"), "No");
    rc.query_drop("START SLAVE").unwrap();
    drop(rc);
    let stop = Arc::new(AtomicBool::new(false));
    let w = writer(opts, stop.clone());
    for round in 0..kills {
        std::thread::sleep(Duration::from_millis(150 + 40 * round));
        replica.kill9();
        replica.restart();
    }
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let made = w.join().unwrap();
    assert!(made > 10, "the writer made {made} transactions");
    let (file, pos) = master_status(primary);
    let mut rc = replica.conn(None);
    wait_executed(&mut rc, &file, pos);
    assert_eq!(slave_status(&mut rc, "Using_Gtid"), "No");
    assert_eq!(slave_status(&mut rc, "Slave_SQL_Running"), "Yes");
    let ours = replicated(&mut rc);
    assert_eq!(ours.0, made, "an increment applied twice or lost");
    assert_eq!(ours, replicated(primary));
    let before: Option<i64> = rc
        .query_first("SELECT COUNT(*) FROM app.log WHERE id = -1")
        .unwrap();
    assert_eq!(
        before,
        Some(0),
        "a row from before the position was applied"
    );
    replica.assert_no_panic();
}

#[test]
fn onelog_follows_mariadb_from_a_file_and_position_through_kills() {
    let test = "onelog_follows_mariadb_from_a_file_and_position_through_kills";
    let Some((m, port)) = mariadb_primary(test, 1) else {
        return;
    };
    let opts: mysql::Opts = mysql::OptsBuilder::new()
        .socket(Some(m.socket.to_str().unwrap()))
        .user(Some("root"))
        .into();
    follow_from_position(&mut m.conn(None), opts, port, 6);
}

#[test]
fn onelog_follows_onelog_from_a_file_and_position_through_kills() {
    let primary = Server::start(&["--server-id=1"]);
    let mut pc = primary.conn(None);
    pc.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    pc.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
    follow_from_position(&mut pc, primary.opts(None), primary.port, 4);
}
