//! Sequences on the real onelogd: NEXTVAL from several connections never gives a value
//! twice, not even across a SIGKILL in the middle of it; the row writes are in the binlog
//! as MariaDB writes them (WRITE_ROWS of the whole row) and a MariaDB 10.11 replica keeps
//! the same sequence; onelog as a replica applies a MariaDB primary's sequence writes; and
//! `mariadb-dump` output restores them.

mod common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::replica::{add_repl_user, mariadb_primary, Replica};
use common::{have, Server};
use mysql::prelude::Queryable;

/// The row of sequence `name`, as text.
fn seq_row(c: &mut mysql::Conn, name: &str) -> String {
    let row: mysql::Row = c
        .query_first(format!("SELECT * FROM {name}"))
        .unwrap()
        .expect("a sequence has a row");
    (0..row.len())
        .map(|i| row.get::<String, _>(i).unwrap_or_default())
        .collect::<Vec<_>>()
        .join(" ")
}

fn nextval(c: &mut mysql::Conn, name: &str) -> Result<i64, mysql::Error> {
    c.query_first(format!("SELECT nextval({name})"))
        .map(|v| v.expect("a value"))
}

#[test]
fn nextval_is_unique_across_connections_and_sigkill() {
    let mut primary = Server::start(&["--server-id=1"]);
    add_repl_user(&primary);
    let replica = Replica::start("sequences_replica", &primary, 2);
    let mut c = primary.conn(None);
    c.query_drop("CREATE DATABASE sq").unwrap();
    c.query_drop("USE sq").unwrap();
    // A small cache: the row is rewritten (one durable group) every 5 values.
    c.query_drop("CREATE SEQUENCE s CACHE 5").unwrap();
    c.query_drop(
        "CREATE SEQUENCE down START WITH 100 MAXVALUE 100 INCREMENT BY -7 MINVALUE 1 CYCLE CACHE 3",
    )
    .unwrap();
    let down: Vec<i64> = (0..20).map(|_| nextval(&mut c, "down").unwrap()).collect();
    let mut want = Vec::new();
    let mut v = 100;
    for _ in 0..20 {
        want.push(v);
        v = if v - 7 < 1 { 100 } else { v - 7 };
    }
    assert_eq!(down, want, "a cycling descending sequence");

    // Four connections take values until the server is killed under them.
    let acked = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let opts = primary.opts(Some("sq"));
            let acked = acked.clone();
            std::thread::spawn(move || {
                let mut c = mysql::Conn::new(opts).unwrap();
                while let Ok(v) = nextval(&mut c, "s") {
                    acked.lock().unwrap().push(v);
                }
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while acked.lock().unwrap().len() < 300 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    primary.kill9();
    for t in threads {
        t.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.len() >= 300,
        "only {} values before the kill",
        acked.len()
    );
    let distinct: HashSet<i64> = acked.iter().copied().collect();
    assert_eq!(distinct.len(), acked.len(), "a value was given twice");
    let max = *acked.iter().max().unwrap();

    primary.restart();
    let mut c = primary.conn(Some("sq"));
    let after = nextval(&mut c, "s").unwrap();
    assert!(
        after > max,
        "after the restart {after}, before it up to {max}"
    );
    // Nothing a kill could leave half-written: the row is one of the reserved ranges.
    let row = seq_row(&mut c, "s");
    assert!(row.ends_with("1 1 5 0 0"), "{row}");

    if have(
        "mariadb-binlog",
        "nextval_is_unique_across_connections_and_sigkill",
    ) {
        let log = common::clients::binlog_text(&primary, true);
        assert!(
            log.contains("### INSERT INTO `sq`.`s`\n### SET\n###   @1=6\n###   @2=1\n"),
            "the first reservation is not a WRITE_ROWS of the whole row:\n{log}"
        );
    }
    if let Some(r) = &replica {
        // The restarted primary listens on a new port.
        r.point_at(&primary);
        r.wait_for(&primary, Duration::from_secs(30));
        let mut rc = r.db.conn(Some("sq"));
        assert_eq!(seq_row(&mut rc, "s"), row);
        assert_eq!(seq_row(&mut rc, "down"), seq_row(&mut c, "down"));
        let shown: (String, String) = rc
            .query_first("SHOW CREATE SEQUENCE down")
            .unwrap()
            .unwrap();
        assert!(
            shown
                .1
                .contains("start with 100 minvalue 1 maxvalue 100 increment by -7 cache 3 cycle"),
            "{}",
            shown.1
        );
    }
    primary.assert_no_panic();
}

#[test]
fn mariadb_dump_of_sequences_restores() {
    if !have("mariadb-dump", "mariadb_dump_of_sequences_restores") {
        return;
    }
    let a = Server::start(&[]);
    let mut c = a.conn(None);
    c.query_drop("CREATE DATABASE dq").unwrap();
    c.query_drop("USE dq").unwrap();
    c.query_drop("CREATE SEQUENCE s START WITH 10 INCREMENT BY 10 CACHE 2 COMMENT 'ids'")
        .unwrap();
    for _ in 0..5 {
        nextval(&mut c, "s").unwrap();
    }
    let dump = common::clients::dump_database(&a.socket, "dq");
    assert!(dump.contains("DO SETVAL(`s`, 70, 0);"), "{dump}");
    let b = Server::start(&[]);
    let out = b.mariadb(&[], &dump);
    assert!(
        out.status.success(),
        "restore failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut d = b.conn(Some("dq"));
    assert_eq!(seq_row(&mut d, "s"), seq_row(&mut c, "s"));
    assert_eq!(nextval(&mut d, "s").unwrap(), 70);
    let shown: (String, String) = d.query_first("SHOW CREATE SEQUENCE s").unwrap().unwrap();
    assert!(
        shown.1.ends_with("ENGINE=InnoDB COMMENT='ids'"),
        "{}",
        shown.1
    );
}

#[test]
fn onelog_replica_applies_a_mariadb_primarys_sequences() {
    let test = "onelog_replica_applies_a_mariadb_primarys_sequences";
    let Some((primary, port)) = mariadb_primary(test, 1) else {
        return;
    };
    let mut pc = primary.conn(None);
    pc.query_drop("CREATE DATABASE mq").unwrap();
    pc.query_drop("USE mq").unwrap();
    pc.query_drop("CREATE SEQUENCE s CACHE 3").unwrap();
    for _ in 0..7 {
        nextval(&mut pc, "s").unwrap();
    }
    pc.query_drop("SELECT setval(s, 500)").unwrap();
    pc.query_drop("ALTER SEQUENCE s INCREMENT BY 2").unwrap();
    let mut replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    common::replica::follow(&mut rc, port);
    common::replica::catch_up(&mut rc, &mut pc);
    assert_eq!(seq_row(&mut rc, "mq.s"), seq_row(&mut pc, "s"));
    drop(rc);
    // The applied row survives SIGKILL, and later writes still apply.
    replica.kill9();
    replica.restart();
    let mut rc = replica.conn(None);
    for _ in 0..5 {
        nextval(&mut pc, "s").unwrap();
    }
    common::replica::catch_up(&mut rc, &mut pc);
    assert_eq!(seq_row(&mut rc, "mq.s"), seq_row(&mut pc, "s"));
    replica.assert_no_panic();
}
