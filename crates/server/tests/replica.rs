//! onelogd as a replica: it follows a real MariaDB 10.11 primary (row and statement
//! events, DDL, accounts) and another onelogd, chains to a MariaDB replica of its own,
//! survives SIGKILL mid-stream without applying anything twice or losing anything, and
//! reports what MariaDB reports in SHOW SLAVE STATUS.

mod common;
use common::mariadb::MariaDb;
use common::replica::mariadb_primary;
use common::*;
use mysql::prelude::Queryable;
use std::time::{Duration, Instant};

fn change_master(c: &mut mysql::Conn, port: u16) {
    c.query_drop(format!(
        "CHANGE MASTER TO master_host='127.0.0.1', master_port={port}, master_user='repl', \
         master_password='pw', master_use_gtid=slave_pos, master_connect_retry=1, \
         master_heartbeat_period=0.5"
    ))
    .unwrap();
}

fn status(c: &mut mysql::Conn) -> Status {
    let row: Option<mysql::Row> = c.query_first("SHOW SLAVE STATUS").unwrap();
    let row = row.expect("SHOW SLAVE STATUS has a row");
    row.columns_ref()
        .iter()
        .enumerate()
        .map(|(i, col)| {
            let v = match &row[i] {
                mysql::Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                mysql::Value::NULL => "NULL".into(),
                v => format!("{v:?}").trim_matches('\'').to_string(),
            };
            (col.name_str().to_string(), v)
        })
        .collect()
}

type Status = std::collections::HashMap<String, String>;

/// Polls SHOW SLAVE STATUS until `done` holds (at most 20 s); returns that status.
fn wait_status(c: &mut mysql::Conn, done: impl Fn(&Status) -> bool) -> Status {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let st = status(c);
        if done(&st) {
            return st;
        }
        assert!(Instant::now() < deadline, "{st:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A onelogd primary with a `repl` account.
fn onelog_primary(server_id: u32) -> Server {
    let primary = Server::start(&[&format!("--server-id={server_id}")]);
    let mut c = primary.conn(None);
    c.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    c.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
    primary
}

fn gtid_pos(c: &mut mysql::Conn, var: &str) -> String {
    c.query_first::<String, _>(format!("SELECT @@{var}"))
        .unwrap()
        .unwrap_or_default()
}

/// Waits until the replica (`r`, a onelogd or MariaDB) has applied `want`.
fn wait_for(r: &mut mysql::Conn, want: &str, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    loop {
        if gtid_pos(r, "gtid_slave_pos") == want {
            return;
        }
        let st = status(r);
        assert!(
            st["Last_SQL_Error"].is_empty(),
            "replica stopped: {}",
            st["Last_SQL_Error"]
        );
        assert!(
            Instant::now() < deadline,
            "replica at '{}', want '{want}'; IO: {} {}",
            gtid_pos(r, "gtid_slave_pos"),
            st["Slave_IO_Running"],
            st["Last_IO_Error"]
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The workload every primary runs: statement- and row-based DML, transactions, a
/// rollback, DDL, NOW(), a counter whose double application would show, an account.
fn workload(c: &mut mysql::Conn, mariadb: bool) {
    let mut stmts = vec![
        "CREATE DATABASE app",
        "CREATE TABLE app.item (id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2), \
         made DATETIME, note TEXT, big BIGINT UNSIGNED, d DOUBLE, KEY (name))",
        "CREATE TABLE app.counter (k INT PRIMARY KEY, n INT NOT NULL)",
        "CREATE TABLE app.nokey (a INT, b VARCHAR(10))",
        "INSERT INTO app.counter VALUES (1, 0)",
        "INSERT INTO app.item VALUES (1, 'kettle', 19.99, '2024-01-02 03:04:05', NULL, 18446744073709551615, 0.5)",
        "INSERT INTO app.item VALUES (2, 'héllo ☃', -5.00, NOW(), REPEAT('x', 3000), 0, -1e300)",
        "BEGIN",
        "INSERT INTO app.item (id, name) VALUES (3, 'a'), (4, 'b'), (5, 'c')",
        "UPDATE app.item SET price = price * 2 WHERE id <= 2",
        "DELETE FROM app.item WHERE id = 4",
        "UPDATE app.counter SET n = n + 1",
        "COMMIT",
        "BEGIN",
        "INSERT INTO app.item (id, name) VALUES (100, 'rolled back')",
        "ROLLBACK",
        "INSERT INTO app.nokey VALUES (1, 'x'), (1, 'x'), (2, 'y')",
        "UPDATE app.nokey SET b = 'z' WHERE a = 2",
        "DELETE FROM app.nokey WHERE a = 1 LIMIT 1",
        "ALTER TABLE app.item ADD COLUMN stock INT NOT NULL DEFAULT 7",
        "UPDATE app.counter SET n = n + 1",
        "CREATE USER appuser@'%' IDENTIFIED BY 'secret'",
        "GRANT SELECT ON app.* TO appuser@'%'",
    ];
    if mariadb {
        // Statement events (MariaDB's default MIXED format logs these as statements).
        stmts.insert(0, "SET SESSION binlog_format = 'STATEMENT'");
        stmts.push("SET SESSION binlog_format = 'ROW'");
        stmts.push("UPDATE app.counter SET n = n + 10");
        stmts.push("INSERT INTO app.item (id, name, made) VALUES (6, 'row', NOW())");
    }
    for sql in stmts {
        c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

fn counter(c: &mut mysql::Conn) -> i64 {
    c.query_first("SELECT n FROM app.counter WHERE k = 1")
        .unwrap()
        .unwrap()
}

#[test]
fn onelog_follows_mariadb_and_chains_to_a_mariadb_replica() {
    let test = "onelog_follows_mariadb_and_chains_to_a_mariadb_replica";
    let Some((primary, pport)) = mariadb_primary(test, 1) else {
        return;
    };
    let mut pc = primary.conn(None);
    workload(&mut pc, true);
    let mut replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    change_master(&mut rc, pport);
    rc.query_drop("START SLAVE").unwrap();
    let want = gtid_pos(&mut pc, "gtid_binlog_pos");
    wait_for(&mut rc, &want, Duration::from_secs(30));
    assert_eq!(dump_tables(&mut pc), dump_tables(&mut rc));
    let st = status(&mut rc);
    assert_eq!(st["Slave_IO_Running"], "Yes");
    assert_eq!(st["Slave_SQL_Running"], "Yes");
    assert_eq!(st["Using_Gtid"], "Slave_Pos");
    assert_eq!(st["Master_Server_Id"], "1");
    assert_eq!(st["Gtid_IO_Pos"], want);
    // The account arrived as a statement.
    let n: Option<i64> = rc
        .query_first("SELECT COUNT(*) FROM mysql.onelog_user WHERE User = 'appuser'")
        .unwrap();
    assert_eq!(n, Some(1));
    // onelog logged the primary's GTIDs: a MariaDB replica of onelog gets the same rows.
    rc.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        .ok();
    rc.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
    let Some(down) = MariaDb::start_with(test, &["--server-id=3".into()]) else {
        return;
    };
    let mut dc = down.conn(None);
    change_master(&mut dc, replica.port);
    dc.query_drop("START SLAVE").unwrap();
    // SIGKILL the onelog replica while the primary writes; it resumes from its own binlog.
    let writer = {
        let opts = common::mariadb::socket_opts(&primary.socket, None);
        std::thread::spawn(move || {
            let mut w = mysql::Conn::new(opts).unwrap();
            for i in 0..300 {
                w.query_drop(format!(
                    "INSERT INTO app.item (id, name) VALUES ({}, 'load')",
                    1000 + i
                ))
                .unwrap();
                w.query_drop("UPDATE app.counter SET n = n + 1").unwrap();
            }
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    replica.kill9();
    replica.restart(); // master.info: the replica starts again by itself
    writer.join().unwrap();
    let mut rc = replica.conn(None);
    let want = gtid_pos(&mut pc, "gtid_binlog_pos");
    wait_for(&mut rc, &want, Duration::from_secs(60));
    assert_eq!(
        counter(&mut rc),
        counter(&mut pc),
        "a group applied twice or lost"
    );
    assert_eq!(dump_tables(&mut pc), dump_tables(&mut rc));
    // The restarted onelogd listens on another port: point its MariaDB replica at it.
    dc.query_drop("STOP SLAVE").unwrap();
    change_master(&mut dc, replica.port);
    dc.query_drop("START SLAVE").unwrap();
    wait_for(&mut dc, &want, Duration::from_secs(60));
    assert_eq!(dump_tables(&mut pc), dump_tables(&mut dc));
    replica.assert_no_panic();
}

#[test]
fn onelog_follows_onelog() {
    let primary = onelog_primary(1);
    let mut pc = primary.conn(None);
    workload(&mut pc, false);
    let replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    change_master(&mut rc, primary.port);
    rc.query_drop("START SLAVE").unwrap();
    let want = gtid_pos(&mut pc, "gtid_binlog_pos");
    wait_for(&mut rc, &want, Duration::from_secs(30));
    assert_eq!(dump_tables(&mut pc), dump_tables(&mut rc));
    // Streaming: a later change arrives without a reconnect.
    pc.query_drop("UPDATE app.counter SET n = n + 5").unwrap();
    let want = gtid_pos(&mut pc, "gtid_binlog_pos");
    wait_for(&mut rc, &want, Duration::from_secs(30));
    assert_eq!(counter(&mut rc), counter(&mut pc));
    // STOP SLAVE, changes meanwhile, START SLAVE: it picks up where it stopped.
    rc.query_drop("STOP SLAVE").unwrap();
    assert_eq!(status(&mut rc)["Slave_IO_Running"], "No");
    pc.query_drop("UPDATE app.counter SET n = n + 5").unwrap();
    pc.query_drop("FLUSH BINARY LOGS").unwrap();
    pc.query_drop("UPDATE app.counter SET n = n + 5").unwrap();
    rc.query_drop("START SLAVE").unwrap();
    let want = gtid_pos(&mut pc, "gtid_binlog_pos");
    wait_for(&mut rc, &want, Duration::from_secs(30));
    assert_eq!(dump_tables(&mut pc), dump_tables(&mut rc));
    // The chain goes on to a MariaDB 10.11 replica of the onelogd replica (the `repl`
    // account came from the primary).
    if let Some(down) = MariaDb::start_with("onelog_follows_onelog", &["--server-id=3".into()]) {
        let mut dc = down.conn(None);
        change_master(&mut dc, replica.port);
        dc.query_drop("START SLAVE").unwrap();
        pc.query_drop("UPDATE app.counter SET n = n + 5").unwrap();
        let want = gtid_pos(&mut pc, "gtid_binlog_pos");
        wait_for(&mut rc, &want, Duration::from_secs(30));
        let want = gtid_pos(&mut rc, "gtid_binlog_pos");
        wait_for(&mut dc, &want, Duration::from_secs(30));
        assert_eq!(dump_tables(&mut pc), dump_tables(&mut dc));
    }
    primary.assert_no_panic();
    replica.assert_no_panic();
}

#[test]
fn replica_statements_report_mariadb_errors() {
    let primary = Server::start(&["--server-id=1"]);
    let replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    let e = rc.query_drop("START SLAVE").unwrap_err().to_string();
    assert!(e.contains("1200"), "{e}");
    let rows: Vec<mysql::Row> = rc.query("SHOW SLAVE STATUS").unwrap();
    assert!(rows.is_empty());
    // A wrong password: the IO thread reports it and keeps retrying.
    rc.query_drop(format!(
        "CHANGE MASTER TO master_host='127.0.0.1', master_port={}, master_user='nobody', \
         master_password='x', master_connect_retry=1",
        primary.port
    ))
    .unwrap();
    rc.query_drop("START SLAVE").unwrap();
    let st = wait_status(&mut rc, |st| st["Last_IO_Error"].contains("Access denied"));
    assert_eq!(st["Slave_SQL_Running"], "Yes");
    let e = rc
        .query_drop("CHANGE MASTER TO master_port=1")
        .unwrap_err()
        .to_string();
    assert!(e.contains("1198"), "{e}");
    rc.query_drop("STOP SLAVE").unwrap();
    let e = rc
        .query_drop("CHANGE MASTER TO relay_log_pos=4")
        .unwrap_err()
        .to_string();
    assert!(e.contains("1235"), "{e}");
    // Equal server ids: the replica stops with 1593.
    let twin = Server::start(&["--server-id=1"]);
    let mut tc = twin.conn(None);
    tc.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    tc.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
    let mut pc = primary.conn(None);
    pc.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    pc.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
    let mut twin_replica = twin.conn(None);
    change_master(&mut twin_replica, primary.port);
    twin_replica.query_drop("START SLAVE").unwrap();
    let st = wait_status(&mut twin_replica, |st| st["Slave_IO_Running"] == "No");
    assert!(
        st["Last_IO_Error"].contains("equal MariaDB server ids"),
        "{st:?}"
    );
    assert_eq!(st["Last_IO_Errno"], "1593");
    rc.query_drop("RESET SLAVE ALL").unwrap();
    let rows: Vec<mysql::Row> = rc.query("SHOW SLAVE STATUS").unwrap();
    assert!(rows.is_empty());
    // read_only: writes of users without SUPER fail with 1290; root's do not.
    rc.query_drop("CREATE DATABASE ro").unwrap();
    rc.query_drop("CREATE TABLE ro.t (a INT PRIMARY KEY)")
        .unwrap();
    rc.query_drop("CREATE USER w@'%'").unwrap();
    rc.query_drop("GRANT ALL ON ro.* TO w@'%'").unwrap();
    rc.query_drop("SET GLOBAL read_only = ON").unwrap();
    let mut w = mysql::Conn::new(mysql::OptsBuilder::from_opts(replica.opts(None)).user(Some("w")))
        .unwrap();
    for sql in ["INSERT INTO ro.t VALUES (1)", "CREATE TABLE ro.u (a INT)"] {
        let e = w.query_drop(sql).unwrap_err().to_string();
        assert!(
            e.contains("1290") && e.contains("--read-only"),
            "{sql}: {e}"
        );
    }
    let n: Option<i64> = w.query_first("SELECT COUNT(*) FROM ro.t").unwrap();
    assert_eq!(n, Some(0));
    rc.query_drop("INSERT INTO ro.t VALUES (2)").unwrap();
    rc.query_drop("SET GLOBAL read_only = OFF").unwrap();
    w.query_drop("INSERT INTO ro.t VALUES (3)").unwrap();
}

/// An event the replica cannot apply stops it with Last_SQL_Error, nothing of the group
/// applied; once the cause is removed, START SLAVE resumes and the replica ends identical.
/// A primary that no longer has the replica's position refuses it with 1236.
#[test]
fn apply_error_stops_and_resumes_and_purged_position_is_refused() {
    let primary = onelog_primary(1);
    let mut pc = primary.conn(None);
    pc.query_drop("CREATE DATABASE e").unwrap();
    pc.query_drop("CREATE TABLE e.t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    let replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    change_master(&mut rc, primary.port);
    rc.query_drop("START SLAVE").unwrap();
    wait_for(
        &mut rc,
        &gtid_pos(&mut pc, "gtid_binlog_pos"),
        Duration::from_secs(30),
    );
    // A row only the replica has, in the way of the primary's next transaction.
    rc.query_drop("INSERT INTO e.t VALUES (5, -1)").unwrap();
    pc.query_drop("BEGIN").unwrap();
    pc.query_drop("INSERT INTO e.t VALUES (4, 4)").unwrap();
    pc.query_drop("INSERT INTO e.t VALUES (5, 5)").unwrap();
    pc.query_drop("COMMIT").unwrap();
    let st = wait_status(&mut rc, |st| st["Slave_SQL_Running"] == "No");
    assert!(
        st["Last_SQL_Error"].contains("Duplicate entry '5'"),
        "{st:?}"
    );
    assert_eq!(st["Last_SQL_Errno"], "1062");
    // Nothing of that transaction was applied.
    let n: Option<i64> = rc
        .query_first("SELECT COUNT(*) FROM e.t WHERE id = 4")
        .unwrap();
    assert_eq!(n, Some(0));
    rc.query_drop("DELETE FROM e.t WHERE id = 5").unwrap();
    rc.query_drop("START SLAVE").unwrap();
    wait_for(
        &mut rc,
        &gtid_pos(&mut pc, "gtid_binlog_pos"),
        Duration::from_secs(30),
    );
    assert_eq!(dump_tables(&mut pc), dump_tables(&mut rc));
    // A new replica whose position the primary purged.
    pc.query_drop("FLUSH BINARY LOGS").unwrap();
    let files: Vec<(String, u64)> = pc.query("SHOW BINARY LOGS").unwrap();
    rc.query_drop("STOP SLAVE").unwrap();
    // PURGE keeps a file a dump thread still reads (as MariaDB does), and the primary's
    // dump thread for the stopped replica ends when it notices the closed connection.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        pc.query_drop(format!(
            "PURGE BINARY LOGS TO '{}'",
            files.last().unwrap().0
        ))
        .unwrap();
        let left: Vec<(String, u64)> = pc.query("SHOW BINARY LOGS").unwrap();
        if left.len() == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "PURGE kept {left:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let fresh = Server::start(&["--server-id=3"]);
    let mut fc = fresh.conn(None);
    change_master(&mut fc, primary.port);
    fc.query_drop("START SLAVE").unwrap();
    let st = wait_status(&mut fc, |st| st["Slave_IO_Running"] == "No");
    assert_eq!(st["Last_IO_Errno"], "1236", "{st:?}");
    assert!(
        st["Last_IO_Error"].contains("Could not find GTID state"),
        "{st:?}"
    );
}

/// SIGKILL the replica ten times while it applies a stream of transactions: it ends
/// identical, every counter increment applied exactly once.
#[test]
fn replica_killed_ten_times_ends_identical() {
    let primary = onelog_primary(1);
    let mut pc = primary.conn(None);
    pc.query_drop("CREATE DATABASE app").unwrap();
    pc.query_drop("CREATE TABLE app.counter (k INT PRIMARY KEY, n INT NOT NULL)")
        .unwrap();
    pc.query_drop("CREATE TABLE app.log (id INT PRIMARY KEY, pad VARCHAR(100))")
        .unwrap();
    pc.query_drop("INSERT INTO app.counter VALUES (1, 0)")
        .unwrap();
    let mut replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    change_master(&mut rc, primary.port);
    rc.query_drop("START SLAVE").unwrap();
    drop(rc);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (opts, stop) = (primary.opts(None), stop.clone());
        std::thread::spawn(move || {
            let mut w = mysql::Conn::new(opts).unwrap();
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                w.query_drop("BEGIN").unwrap();
                w.query_drop(format!("INSERT INTO app.log VALUES ({i}, REPEAT('p', 90))"))
                    .unwrap();
                w.query_drop("UPDATE app.counter SET n = n + 1").unwrap();
                w.query_drop("COMMIT").unwrap();
                i += 1;
            }
        })
    };
    for round in 0..10 {
        std::thread::sleep(Duration::from_millis(150 + 40 * round));
        replica.kill9();
        replica.restart();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    let mut rc = replica.conn(None);
    wait_for(
        &mut rc,
        &gtid_pos(&mut pc, "gtid_binlog_pos"),
        Duration::from_secs(60),
    );
    let rows: i64 = pc
        .query_first("SELECT COUNT(*) FROM app.log")
        .unwrap()
        .unwrap();
    assert!(rows > 10, "the writer made {rows} transactions");
    assert_eq!(counter(&mut rc), rows, "an increment applied twice or lost");
    assert_eq!(dump_tables(&mut pc), dump_tables(&mut rc));
    replica.assert_no_panic();
}

/// `SET GLOBAL gtid_slave_pos` (what a dump made with `--master-data --gtid` runs, and how
/// a replica provisioned from a backup is told where it is): it survives a restart, the
/// replica then starts after it, and the applied transactions move it on. Refused while
/// the replica runs (1198) and for a malformed list (1941).
#[test]
fn set_gtid_slave_pos_tells_a_new_replica_where_to_start() {
    let primary = onelog_primary(1);
    let mut pc = primary.conn(None);
    pc.query_drop("CREATE DATABASE g").unwrap();
    pc.query_drop("CREATE TABLE g.t (id INT PRIMARY KEY)")
        .unwrap();
    for i in 0..5 {
        pc.query_drop(format!("INSERT INTO g.t VALUES ({i})"))
            .unwrap();
    }
    let skip_to = gtid_pos(&mut pc, "gtid_binlog_pos");
    for i in 5..8 {
        pc.query_drop(format!("INSERT INTO g.t VALUES ({i})"))
            .unwrap();
    }
    // The replica has the database and the first five rows already (as from a backup).
    let mut replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    rc.query_drop("CREATE DATABASE g").unwrap();
    rc.query_drop("CREATE TABLE g.t (id INT PRIMARY KEY)")
        .unwrap();
    rc.query_drop("INSERT INTO g.t VALUES (0), (1), (2), (3), (4)")
        .unwrap();
    let e = rc
        .query_drop("SET GLOBAL gtid_slave_pos = '0-1'")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("1941") && e.contains("Could not parse GTID list"),
        "{e}"
    );
    rc.query_drop(format!("SET GLOBAL gtid_slave_pos = '{skip_to}'"))
        .unwrap();
    assert_eq!(gtid_pos(&mut rc, "gtid_slave_pos"), skip_to);
    replica.kill9();
    replica.restart();
    let mut rc = replica.conn(None);
    assert_eq!(
        gtid_pos(&mut rc, "gtid_slave_pos"),
        skip_to,
        "kept across a crash"
    );
    change_master(&mut rc, primary.port);
    rc.query_drop("START SLAVE").unwrap();
    let e = rc
        .query_drop("SET GLOBAL gtid_slave_pos = ''")
        .unwrap_err()
        .to_string();
    assert!(e.contains("1198"), "{e}");
    wait_for(
        &mut rc,
        &gtid_pos(&mut pc, "gtid_binlog_pos"),
        Duration::from_secs(30),
    );
    assert_eq!(dump_tables(&mut pc), dump_tables(&mut rc));
    replica.assert_no_panic();
}
