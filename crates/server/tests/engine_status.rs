//! SHOW ENGINE INNODB STATUS and onelog's information_schema tables on the real onelogd:
//! a lock wait with the lock described, the latest deadlock with both statements and the
//! victim, the commit path's counters and histograms agreeing with SHOW GLOBAL STATUS,
//! the binlog files with SHOW BINARY LOGS, and MariaDB's errors (1227 without PROCESS,
//! 1286 for an unknown engine).

mod common;

use std::time::{Duration, Instant};

use common::Server;
use mysql::prelude::Queryable;

fn status_text(c: &mut mysql::Conn) -> String {
    let rows: Vec<(String, String, String)> = c.query("SHOW ENGINE INNODB STATUS").unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].0.as_str(), rows[0].1.as_str()), ("InnoDB", ""));
    rows[0].2.clone()
}

fn error_code(r: Result<Vec<mysql::Row>, mysql::Error>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn global_status(c: &mut mysql::Conn, name: &str) -> u64 {
    let row: Option<(String, u64)> = c
        .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .unwrap();
    row.unwrap_or_else(|| panic!("no status {name}")).1
}

/// Waits until SHOW ENGINE INNODB STATUS contains `want`.
fn wait_for_text(c: &mut mysql::Conn, want: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = status_text(c);
        if text.contains(want) {
            return text;
        }
        assert!(Instant::now() < deadline, "no '{want}' in:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn innodb_status_shows_waits_deadlocks_and_the_commit_path() {
    let srv = Server::start(&[]);
    let mut admin = srv.conn(None);
    admin.query_drop("CREATE DATABASE es").unwrap();
    admin
        .query_drop("CREATE TABLE es.t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    for i in 1..=20 {
        admin
            .query_drop(format!("INSERT INTO es.t VALUES ({i}, 0)"))
            .unwrap();
    }
    let text = status_text(&mut admin);
    for want in [
        "INNODB MONITOR OUTPUT",
        "\nTRANSACTIONS\n",
        "Trx id counter ",
        "\nLOG\n",
        "Durable up to binlog-",
        "\nGROUP COMMIT\n",
        "\nLOG SYNCS\n",
        "Sync duration ",
        "Commits per group 1: ",
        "\nROCKSDB\n",
        "Estimated keys ",
        "END OF INNODB MONITOR OUTPUT",
    ] {
        assert!(text.contains(want), "no '{want}' in:\n{text}");
    }
    assert!(!text.contains("LATEST DETECTED DEADLOCK"), "{text}");

    // The histograms count every sync and group that SHOW GLOBAL STATUS counts.
    let syncs: Option<u64> = admin
        .query_first("SELECT SUM(SYNCS) FROM information_schema.ONELOG_SYNC_HISTOGRAM")
        .unwrap();
    assert_eq!(syncs, Some(global_status(&mut admin, "Onelog_log_syncs")));
    let groups: Option<u64> = admin
        .query_first("SELECT SUM(GROUPS) FROM information_schema.ONELOG_GROUP_COMMIT_HISTOGRAM")
        .unwrap();
    assert_eq!(
        groups,
        Some(global_status(&mut admin, "Binlog_group_commits"))
    );
    assert!(global_status(&mut admin, "Onelog_log_sync_micros_p99") > 0);
    assert!(global_status(&mut admin, "Onelog_group_commit_size_avg") >= 1);
    // ONELOG_BINLOG_FILES has SHOW BINARY LOGS' files and sizes; the active one is cached.
    admin.query_drop("FLUSH BINARY LOGS").unwrap();
    let logs: Vec<(String, u64)> = admin.query("SHOW BINARY LOGS").unwrap();
    let files: Vec<(String, u64, String, Option<u64>)> = admin
        .query(
            "SELECT LOG_NAME, FILE_SIZE, START_GTID_LIST, CACHED_BYTES \
             FROM information_schema.ONELOG_BINLOG_FILES",
        )
        .unwrap();
    assert_eq!(
        files.iter().map(|f| (f.0.clone(), f.1)).collect::<Vec<_>>(),
        logs
    );
    let last = files.last().unwrap();
    let pos: String = admin
        .query_first("SELECT @@gtid_binlog_pos")
        .unwrap()
        .unwrap();
    assert_eq!(
        last.2, pos,
        "the new file starts at the binlog's GTID state"
    );
    assert!(files[0].3.unwrap() > 0, "{files:?}");

    // A lock wait: the waiting transaction, its statement and the row lock it wants.
    let mut a = srv.conn(Some("es"));
    a.query_drop("BEGIN").unwrap();
    a.query_drop("UPDATE t SET v = 1 WHERE id = 1").unwrap();
    let opts = srv.opts(Some("es"));
    let blocked = std::thread::spawn(move || {
        let mut b = mysql::Conn::new(opts).unwrap();
        b.query_drop("UPDATE t SET v = 2 WHERE id = 1").unwrap();
    });
    let text = wait_for_text(&mut admin, "FOR THIS LOCK TO BE GRANTED");
    for want in [
        " LOCK WAIT\n",
        "UPDATE t SET v = 2 WHERE id = 1\n",
        "RECORD LOCK on index PRIMARY of table `es`.`t`, key (1) waiting",
        "undo log entries 1",
    ] {
        assert!(text.contains(want), "no '{want}' in:\n{text}");
    }
    a.query_drop("COMMIT").unwrap();
    blocked.join().unwrap();

    // A deadlock: A holds row 2 and waits for row 3; B holds row 3 and asks for row 2.
    a.query_drop("BEGIN").unwrap();
    a.query_drop("UPDATE t SET v = 3 WHERE id = 2").unwrap();
    let opts = srv.opts(Some("es"));
    let (tx, rx) = std::sync::mpsc::channel();
    let other = std::thread::spawn(move || {
        let mut b = mysql::Conn::new(opts).unwrap();
        b.query_drop("BEGIN").unwrap();
        b.query_drop("UPDATE t SET v = 4 WHERE id = 3").unwrap();
        tx.send(()).unwrap();
        // Waits for A, which then asks for row 3: one of the two is rolled back.
        let r = b.query_drop("UPDATE t SET v = 4 WHERE id = 2");
        let _ = b.query_drop("COMMIT");
        r.err().map(|e| e.to_string())
    });
    rx.recv().unwrap();
    wait_for_text(&mut admin, "LOCK WAIT");
    let ra = a.query_drop("UPDATE t SET v = 3 WHERE id = 3");
    let _ = a.query_drop("COMMIT");
    let rb = other.join().unwrap();
    let victims = usize::from(ra.is_err()) + usize::from(rb.is_some());
    assert!(victims >= 1, "A: {ra:?}, B: {rb:?}");
    let text = status_text(&mut admin);
    let at = text
        .find("LATEST DETECTED DEADLOCK")
        .unwrap_or_else(|| panic!("no deadlock in:\n{text}"));
    let dl = &text[at..];
    for want in [
        "*** (1) TRANSACTION:",
        "*** (2) TRANSACTION:",
        "UPDATE t SET v = 3 WHERE id = 3\n",
        "UPDATE t SET v = 4 WHERE id = 2\n",
        "*** (1) HOLDS THE LOCK(S):",
        "RECORD LOCK on index PRIMARY of table `es`.`t`, key (2)",
        "RECORD LOCK on index PRIMARY of table `es`.`t`, key (3)",
        "*** WE ROLL BACK TRANSACTION (1)",
    ] {
        assert!(dl.contains(want), "no '{want}' in:\n{dl}");
    }
    // The rolled-back statement is transaction (1)'s.
    let victim_stmt = if ra.is_err() {
        "UPDATE t SET v = 3 WHERE id = 3"
    } else {
        "UPDATE t SET v = 4 WHERE id = 2"
    };
    let first = &dl[..dl.find("*** (2) TRANSACTION:").unwrap()];
    assert!(victims > 1 || first.contains(victim_stmt), "{dl}");

    // MUTEX is empty; another engine is unknown; PROCESS is required.
    let mutex: Vec<mysql::Row> = admin.query("SHOW ENGINE INNODB MUTEX").unwrap();
    assert!(mutex.is_empty());
    assert_eq!(error_code(admin.query("SHOW ENGINE foo STATUS")), 1286);
    admin
        .query_drop("CREATE USER plain@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    admin
        .query_drop("GRANT SELECT ON *.* TO plain@'%'")
        .unwrap();
    let opts = mysql::OptsBuilder::from_opts(srv.opts(None))
        .user(Some("plain"))
        .pass(Some("pw"));
    let mut plain = mysql::Conn::new(opts).unwrap();
    assert_eq!(error_code(plain.query("SHOW ENGINE INNODB STATUS")), 1227);
    let n: Option<u64> = plain
        .query_first("SELECT COUNT(*) FROM information_schema.ONELOG_BINLOG_FILES")
        .unwrap();
    assert_eq!(n, Some(0), "without PROCESS the table is empty");
    srv.assert_no_panic();
}
