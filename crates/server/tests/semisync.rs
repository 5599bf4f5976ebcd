//! Semi-synchronous replication with real MariaDB 10.11 servers: onelogd as the primary of
//! a semi-sync MariaDB replica (ACKs, the AFTER_SYNC guarantee under SIGKILL, the timeout
//! fallback and its return), onelogd as the semi-sync replica of a MariaDB primary, and
//! bad ACKs that must not release a commit.

mod common;
use common::mariadb::MariaDb;
use common::raw::{dump_packet, Raw};
use common::*;
use mysql::prelude::Queryable;
use std::collections::HashMap;
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

/// AFTER_SYNC is lossless: under 8 writers, SIGKILL the primary at a random moment; every
/// commit a client saw answered is on the replica (from its relay log, the primary being
/// dead). Three rounds, the primary restarted between them; the replica ends identical.
#[test]
fn after_sync_loses_no_acknowledged_commit_when_the_primary_is_killed() {
    let test = "after_sync_loses_no_acknowledged_commit_when_the_primary_is_killed";
    let mut primary = Server::start(&[
        "--server-id=1",
        "--rpl-semi-sync-master-enabled=ON",
        "--rpl-semi-sync-master-wait-point=AFTER_SYNC",
        "--rpl-semi-sync-master-timeout=60000",
        "--rpl-semi-sync-master-wait-no-slave=OFF",
    ]);
    let mut pc = primary.conn(None);
    add_repl_user(&mut pc);
    pc.query_drop("CREATE DATABASE k").unwrap();
    pc.query_drop("CREATE TABLE k.t (id INT PRIMARY KEY, w INT, pad VARCHAR(100))")
        .unwrap();
    let Some(replica) = mariadb_replica(test, primary.port, 2) else {
        return;
    };
    let mut rc = replica.conn(None);
    for round in 0..3u32 {
        wait_status(&mut pc, "the replica connects with semi-sync", |st| {
            num(st, "Rpl_semi_sync_master_clients") == 1
                && st["Rpl_semi_sync_master_status"] == "ON"
        });
        let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u32>::new()));
        let writers: Vec<_> = (0..8u32)
            .map(|w| {
                let opts = primary.opts(None);
                let acked = acked.clone();
                std::thread::spawn(move || {
                    let Ok(mut c) = mysql::Conn::new(opts) else {
                        return;
                    };
                    for i in 0.. {
                        let id = round * 10_000_000 + w * 1_000_000 + i;
                        let ok = c
                            .query_drop(format!(
                                "INSERT INTO k.t VALUES ({id}, {w}, REPEAT('p', 100))"
                            ))
                            .is_ok();
                        if !ok {
                            return;
                        }
                        acked.lock().unwrap().push(id);
                    }
                })
            })
            .collect();
        let ms = 300 + (std::process::id() as u64 * 7919 + round as u64 * 104_729) % 1200;
        std::thread::sleep(Duration::from_millis(ms));
        primary.kill9();
        for w in writers {
            w.join().unwrap();
        }
        let acked = acked.lock().unwrap().clone();
        assert!(
            acked.len() > 10,
            "round {round}: only {} commits",
            acked.len()
        );
        // Every answered commit reaches the replica's tables from its relay log.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let have: Vec<u32> = rc
                .query(format!(
                    "SELECT id FROM k.t WHERE id >= {} AND id < {}",
                    round * 10_000_000,
                    (round + 1) * 10_000_000
                ))
                .unwrap();
            let have: std::collections::HashSet<u32> = have.into_iter().collect();
            let missing: Vec<u32> = acked
                .iter()
                .copied()
                .filter(|i| !have.contains(i))
                .collect();
            if missing.is_empty() {
                eprintln!(
                    "round {round}: killed after {ms} ms, {} commits answered, all on the replica",
                    acked.len()
                );
                break;
            }
            assert!(
                Instant::now() < deadline,
                "round {round}: {} answered commits missing on the replica, e.g. {:?}",
                missing.len(),
                &missing[..missing.len().min(5)]
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        primary.restart();
        pc = primary.conn(None);
        point_at(&replica, primary.port);
    }
    // The replica has exactly what the primary has (nothing the primary lost).
    let want: String = pc.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let have: String = rc.query_first("SELECT @@gtid_slave_pos").unwrap().unwrap();
        if have == want {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "replica at {have}, primary at {want}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let q = "SELECT COUNT(*), COALESCE(SUM(id), 0) FROM k.t";
    let p: (u64, u64) = pc.query_first(q).unwrap().unwrap();
    let r: (u64, u64) = rc.query_first(q).unwrap().unwrap();
    assert_eq!(p, r);
    primary.assert_no_panic();
}

/// onelogd as the semi-sync replica of a MariaDB 10.11 primary and of another onelogd:
/// its ACKs (sent once the group is committed here) release the primaries' commits.
#[test]
fn onelog_replica_acknowledges_mariadb_and_onelog_primaries() {
    let test = "onelog_replica_acknowledges_mariadb_and_onelog_primaries";
    let port = free_port();
    let Some(mprimary) = MariaDb::start_with(
        test,
        &[
            format!("--port={port}"),
            "--server-id=1".into(),
            "--log-bin=mb".into(),
        ],
    ) else {
        return;
    };
    let oprimary = Server::start(&["--server-id=3"]);
    for (name, mut pc, pport) in [
        ("MariaDB", mprimary.conn(None), port),
        ("onelogd", oprimary.conn(None), oprimary.port),
    ] {
        add_repl_user(&mut pc);
        pc.query_drop("CREATE DATABASE r").unwrap();
        pc.query_drop("CREATE TABLE r.t (id INT PRIMARY KEY, v INT)")
            .unwrap();
        // Turned on at run time (the set-up above did not wait for a replica).
        pc.query_drop("SET GLOBAL rpl_semi_sync_master_timeout = 5000")
            .unwrap();
        pc.query_drop("SET GLOBAL rpl_semi_sync_master_wait_point = AFTER_SYNC")
            .unwrap();
        pc.query_drop("SET GLOBAL rpl_semi_sync_master_enabled = ON")
            .unwrap();
        let replica = Server::start(&["--server-id=2", "--rpl-semi-sync-slave-enabled=ON"]);
        let mut rc = replica.conn(None);
        rc.query_drop(format!(
            "CHANGE MASTER TO master_host='127.0.0.1', master_port={pport}, \
             master_user='repl', master_password='pw', master_use_gtid=slave_pos, \
             master_connect_retry=1"
        ))
        .unwrap();
        rc.query_drop("START SLAVE").unwrap();
        wait_status(&mut pc, &format!("{name}: the replica connects"), |st| {
            num(st, "Rpl_semi_sync_master_clients") == 1
                && st["Rpl_semi_sync_master_status"] == "ON"
        });
        let slave: Vec<(String, String)> = rc
            .query("SHOW STATUS LIKE 'Rpl_semi_sync_slave_status'")
            .unwrap();
        assert_eq!(slave[0].1, "ON", "{name}");
        let yes0 = num(&status_of(&mut pc), "Rpl_semi_sync_master_yes_tx");
        let no0 = num(&status_of(&mut pc), "Rpl_semi_sync_master_no_tx");
        for i in 0..30 {
            pc.query_drop(format!("INSERT INTO r.t VALUES ({i}, {i})"))
                .unwrap();
            // Committed on the replica before the primary answered.
            assert_eq!(
                count(&mut rc, &format!("SELECT COUNT(*) FROM r.t WHERE id = {i}")),
                1,
                "{name}: commit {i} answered before the replica had it"
            );
        }
        let st = status_of(&mut pc);
        assert_eq!(
            num(&st, "Rpl_semi_sync_master_yes_tx") - yes0,
            30,
            "{name}: {st:?}"
        );
        assert_eq!(
            num(&st, "Rpl_semi_sync_master_no_tx"),
            no0,
            "{name}: {st:?}"
        );
        rc.query_drop("STOP SLAVE").unwrap();
        replica.assert_no_panic();
    }
    oprimary.assert_no_panic();
}

/// Bad ACKs release nothing: from a semi-sync dump, an ACK for a position the dump never
/// sent, one naming an unknown file and a packet that is no ACK are ignored (a commit waits
/// out the timeout), while a true ACK of the last event sent switches semi-sync back ON.
/// A 0xEF command on an ordinary connection is an unknown command.
#[test]
fn bad_acks_release_no_commit() {
    let primary = Server::start(&["--server-id=1"]);
    let mut pc = primary.conn(None);
    pc.query_drop("CREATE DATABASE b").unwrap();
    pc.query_drop("CREATE TABLE b.t (id INT PRIMARY KEY)")
        .unwrap();
    pc.query_drop("SET GLOBAL rpl_semi_sync_master_timeout = 1500")
        .unwrap();
    pc.query_drop("SET GLOBAL rpl_semi_sync_master_wait_point = AFTER_SYNC")
        .unwrap();
    pc.query_drop("SET GLOBAL rpl_semi_sync_master_enabled = ON")
        .unwrap();
    let mut r = Raw::connect(primary.port, "root");
    r.query("SET @master_binlog_checksum = 'CRC32'");
    r.query("SET @slave_connect_state = ''");
    r.query("SET @rpl_semi_sync_slave = 1");
    r.seq = 0;
    r.write(&dump_packet(4, 0, 9, ""));
    wait_status(&mut pc, "the raw replica registers", |st| {
        num(st, "Rpl_semi_sync_master_clients") == 1
    });
    // Reads events until one asks for an ACK; returns (file, end position) of it.
    let mut file = String::new();
    let mut read_until_flagged = |r: &mut Raw| loop {
        let p = r.read();
        assert_eq!(&p[..2], &[0x00, 0xEF], "semi-sync header");
        let ev = &p[3..];
        if ev[4] == 4 {
            // ROTATE: position u64, then the file name (CRC32 last).
            file = String::from_utf8_lossy(&ev[19 + 8..ev.len() - 4]).into_owned();
        }
        if p[2] & 1 != 0 {
            r.seq = 1;
            return (
                file.clone(),
                u32::from_le_bytes(ev[13..17].try_into().unwrap()) as u64,
            );
        }
    };
    let ack = |r: &mut Raw, payload: &[u8]| {
        let next = r.seq;
        r.seq = 0;
        r.write(payload);
        r.seq = next;
    };
    let mk_ack = |file: &str, pos: u64| {
        let mut a = vec![0xEF];
        a.extend_from_slice(&pos.to_le_bytes());
        a.extend_from_slice(file.as_bytes());
        a
    };
    let yes0 = num(&status_of(&mut pc), "Rpl_semi_sync_master_yes_tx");
    let writer = {
        let opts = primary.opts(None);
        std::thread::spawn(move || {
            let mut c = mysql::Conn::new(opts).unwrap();
            let t = Instant::now();
            c.query_drop("INSERT INTO b.t VALUES (1)").unwrap();
            t.elapsed()
        })
    };
    let (f, pos) = read_until_flagged(&mut r);
    ack(&mut r, &mk_ack(&f, pos + 1_000_000));
    ack(&mut r, &mk_ack("nope.000001", pos));
    ack(&mut r, &[0x03, b'x']);
    let waited = writer.join().unwrap();
    assert!(
        waited >= Duration::from_millis(1400),
        "released early: {waited:?}"
    );
    let st = status_of(&mut pc);
    assert_eq!(st["Rpl_semi_sync_master_status"], "OFF", "{st:?}");
    assert_eq!(num(&st, "Rpl_semi_sync_master_yes_tx"), yes0, "{st:?}");
    // While OFF, the next commit is flagged; its true ACK switches ON.
    pc.query_drop("INSERT INTO b.t VALUES (2)").unwrap();
    let (f, pos) = read_until_flagged(&mut r);
    ack(&mut r, &mk_ack(&f, pos));
    wait_status(&mut pc, "a true ACK switches ON", |st| {
        st["Rpl_semi_sync_master_status"] == "ON"
    });
    let log = primary.log_text();
    assert!(log.contains("which this dump has not sent"), "{log}");
    assert!(log.contains("unknown binlog file 'nope.000001'"), "{log}");
    assert!(log.contains("not a semi-sync ACK"), "{log}");
    // A 0xEF command on an ordinary connection.
    let mut o = Raw::connect(primary.port, "root");
    let p = o.command(&mk_ack(&f, pos));
    assert_eq!(p[0], 0xff);
    assert_eq!(u16::from_le_bytes([p[1], p[2]]), 1047);
    o.query("DO 1");
    drop(r);
    wait_status(&mut pc, "the raw replica is gone", |st| {
        num(st, "Rpl_semi_sync_master_clients") == 0
    });
    primary.assert_no_panic();
}
