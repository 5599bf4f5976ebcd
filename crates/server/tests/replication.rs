//! onelogd as a replication primary: real MariaDB 10.11 replicas follow it through a mixed
//! workload, rotations, purges and a SIGKILL of the primary; groups leave only once
//! durable; `mariadb-binlog --read-from-remote-server` decodes the stream; bad dump and
//! register requests get MariaDB's errors while the server keeps running.

mod common;
use common::mariadb::MariaDb;
use common::raw::{dump_packet, err_of, Raw};
use common::replica::{add_repl_user, primary_pos, seq_of, Replica};
use common::*;
use mysql::prelude::Queryable;
use std::time::{Duration, Instant};

#[test]
fn mariadb_replica_follows_mixed_workload() {
    let primary = Server::start(&["--server-id=1"]);
    add_repl_user(&primary);
    let Some(replica) = Replica::start("mariadb_replica_follows_mixed_workload", &primary, 2)
    else {
        return;
    };
    let mut c = primary.conn(None);
    for sql in [
        "CREATE DATABASE shop",
        "CREATE TABLE shop.item (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2), \
         made DATETIME(3), note TEXT, flag TINYINT UNSIGNED, big BIGINT UNSIGNED, d DOUBLE)",
        "INSERT INTO shop.item VALUES (1, 'kettle', 19.99, '2024-01-02 03:04:05.678', NULL, 1, 18446744073709551615, 0.5)",
        "INSERT INTO shop.item VALUES (2, 'héllo ünïcode ☃', -5.00, NULL, REPEAT('x', 3000), 255, 0, -1e300)",
        "BEGIN",
        "INSERT INTO shop.item (id, name) VALUES (3, 'a'), (4, 'b'), (5, 'c')",
        "UPDATE shop.item SET price = price * 2 WHERE id <= 2",
        "DELETE FROM shop.item WHERE id = 4",
        "COMMIT",
        "BEGIN",
        "INSERT INTO shop.item (id, name) VALUES (100, 'rolled back')",
        "ROLLBACK",
        "CREATE TABLE shop.log (k INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(20), KEY (msg))",
        "INSERT INTO shop.log (msg) VALUES ('one'), ('two'), ('three')",
        "ALTER TABLE shop.item ADD COLUMN stock INT NOT NULL DEFAULT 7",
        "CREATE INDEX by_name ON shop.item (name)",
        "UPDATE shop.item SET stock = id * 10",
    ] {
        c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    // Statements on unqualified names: the QUERY events carry the session's database.
    let mut u = primary.conn(Some("shop"));
    u.query_drop("CREATE TABLE local_t (a INT PRIMARY KEY, b VARCHAR(10) DEFAULT 'dflt')")
        .unwrap();
    u.query_drop("INSERT INTO local_t (a) VALUES (1), (2)")
        .unwrap();
    u.query_drop("ALTER TABLE local_t ADD COLUMN c INT")
        .unwrap();
    u.query_drop("RENAME TABLE local_t TO local_u").unwrap();
    replica.wait_for(&primary, Duration::from_secs(30));
    // Rotation and purge while the replica streams.
    c.query_drop("FLUSH BINARY LOGS").unwrap();
    c.query_drop("INSERT INTO shop.log (msg) VALUES ('after flush')")
        .unwrap();
    c.query_drop("FLUSH BINARY LOGS").unwrap();
    replica.wait_for(&primary, Duration::from_secs(30));
    let files: Vec<(String, u64)> = c.query("SHOW BINARY LOGS").unwrap();
    let last = files.last().unwrap().0.clone();
    c.query_drop(format!("PURGE BINARY LOGS TO '{last}'"))
        .unwrap();
    let files: Vec<(String, u64)> = c.query("SHOW BINARY LOGS").unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    for i in 0..50 {
        c.query_drop(format!("INSERT INTO shop.log (msg) VALUES ('bulk {i}')"))
            .unwrap();
    }
    c.query_drop("DELETE FROM shop.log WHERE k % 3 = 0")
        .unwrap();
    c.query_drop("CREATE TABLE shop.gone (a INT PRIMARY KEY)")
        .unwrap();
    c.query_drop("DROP TABLE shop.gone").unwrap();
    // Account statements reach the replica as the statements MariaDB logs.
    c.query_drop("CREATE USER app@'%' IDENTIFIED BY 'secret'")
        .unwrap();
    c.query_drop("GRANT SELECT, INSERT ON shop.* TO app@'%'")
        .unwrap();
    c.query_drop("SET PASSWORD FOR app@'%' = PASSWORD('other')")
        .unwrap();
    replica.wait_for(&primary, Duration::from_secs(30));
    let mut rc = replica.db.conn(None);
    assert_eq!(primary.dump_tables(), dump_tables(&mut rc));
    let grants =
        |c: &mut mysql::Conn| -> Vec<String> { c.query("SHOW GRANTS FOR app@'%'").unwrap() };
    assert_eq!(grants(&mut c), grants(&mut rc));
    let n: Option<i64> = rc
        .query_first("SELECT COUNT(*) FROM mysql.user WHERE User IN ('repl', 'app')")
        .unwrap();
    assert_eq!(n, Some(2));
    // The primary lists its replica.
    let hosts: Vec<(u32, String, u32, u32)> = c.query("SHOW SLAVE HOSTS").unwrap();
    assert_eq!(hosts.len(), 1, "{hosts:?}");
    assert_eq!((hosts[0].0, hosts[0].3), (2, 1));
    primary.assert_no_panic();
}

/// A replica with the primary's server id stops with MariaDB's error 1593.
#[test]
fn replica_with_the_primarys_server_id_is_refused() {
    let primary = Server::start(&["--server-id=5"]);
    add_repl_user(&primary);
    let Some(replica) = Replica::start(
        "replica_with_the_primarys_server_id_is_refused",
        &primary,
        5,
    ) else {
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (io, _, io_err, _) = replica.status();
        if io == "No" && !io_err.is_empty() {
            assert!(io_err.contains("equal MariaDB server ids"), "{io_err}");
            break;
        }
        assert!(Instant::now() < deadline, "IO thread still {io}: {io_err}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// With every sync taking 400 ms, a row reaches the replica only after the sync that makes
/// it durable: with sync_binlog=1 not before the commit returns, and with sync_binlog=0
/// (the commit returns at once) only after the dump thread's own sync.
#[test]
fn groups_reach_replicas_only_once_durable() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(shim) = build_shim(tmp.path(), "groups_reach_replicas_only_once_durable") else {
        return;
    };
    let shim = shim.display().to_string();
    const DELAY: Duration = Duration::from_millis(400);
    let primary = Server::start_with_env(
        &["--server-id=1"],
        &[("LD_PRELOAD", &shim), ("FSYNC_DELAY_US", "400000")],
    );
    add_repl_user(&primary);
    let mut c = primary.conn(None);
    c.query_drop("CREATE DATABASE dur").unwrap();
    c.query_drop("CREATE TABLE dur.t (id INT PRIMARY KEY)")
        .unwrap();
    let Some(replica) = Replica::start("groups_reach_replicas_only_once_durable", &primary, 2)
    else {
        return;
    };
    replica.wait_for(&primary, Duration::from_secs(60));
    for (sync_binlog, id) in [(1, 1), (0, 2)] {
        c.query_drop(format!("SET GLOBAL sync_binlog = {sync_binlog}"))
            .unwrap();
        let socket = replica.db.socket.clone();
        let t0 = Instant::now();
        let watcher = std::thread::spawn(move || {
            let mut rc = mysql::Conn::new(common::mariadb::socket_opts(&socket, None)).unwrap();
            loop {
                let n: Option<i64> = rc
                    .query_first(format!("SELECT COUNT(*) FROM dur.t WHERE id = {id}"))
                    .unwrap();
                if n == Some(1) {
                    return t0.elapsed();
                }
                assert!(
                    t0.elapsed() < Duration::from_secs(30),
                    "row {id} never arrived"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        c.query_drop(format!("INSERT INTO dur.t VALUES ({id})"))
            .unwrap();
        let acked = t0.elapsed();
        let arrived = watcher.join().unwrap();
        println!("sync_binlog={sync_binlog}: acknowledged after {acked:?}, on the replica after {arrived:?}");
        if sync_binlog == 1 {
            assert!(
                acked >= DELAY,
                "the commit did not wait for its sync: {acked:?}"
            );
        } else {
            assert!(acked < DELAY, "sync_binlog=0 waited for a sync: {acked:?}");
        }
        assert!(
            arrived >= DELAY,
            "the replica had row {id} after {arrived:?}, before any sync could end"
        );
    }
}

/// SIGKILL of the primary while clients commit and the replica streams: after recovery the
/// replica holds no GTID the primary lacks, every acknowledged row is on both, and the
/// replica resumes and ends identical.
#[test]
fn primary_killed_while_replica_streams() {
    let mut primary = Server::start(&["--server-id=1"]);
    add_repl_user(&primary);
    let mut c = primary.conn(None);
    c.query_drop("CREATE DATABASE k").unwrap();
    c.query_drop("CREATE TABLE k.t (client INT, n INT, pad VARCHAR(200), PRIMARY KEY (client, n))")
        .unwrap();
    let Some(replica) = Replica::start("primary_killed_while_replica_streams", &primary, 2) else {
        return;
    };
    replica.wait_for(&primary, Duration::from_secs(30));
    let acked: Vec<_> = (0..4)
        .map(|client| {
            let opts = primary.opts(None);
            std::thread::spawn(move || {
                let mut k = mysql::Conn::new(opts).unwrap();
                let mut done = Vec::new();
                for n in 0.. {
                    let r = k.exec_drop(
                        "INSERT INTO k.t VALUES (?, ?, REPEAT('p', 150))",
                        (client, n),
                    );
                    if r.is_err() {
                        break;
                    }
                    done.push(n);
                }
                (client, done)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    primary.kill9();
    let acked: Vec<(i32, Vec<i32>)> = acked.into_iter().map(|h| h.join().unwrap()).collect();
    let replica_before = seq_of(&replica.gtid_pos());
    primary.restart();
    let primary_after = seq_of(&primary_pos(&primary));
    assert!(
        replica_before <= primary_after,
        "the replica holds seq {replica_before}, the recovered primary only {primary_after}"
    );
    replica.point_at(&primary);
    replica.wait_for(&primary, Duration::from_secs(60));
    let mut rc = replica.db.conn(None);
    for (client, done) in &acked {
        let n: i64 = rc
            .query_first(format!("SELECT COUNT(*) FROM k.t WHERE client = {client}"))
            .unwrap()
            .unwrap();
        assert!(
            n as usize >= done.len(),
            "client {client}: {n} rows < {} acknowledged",
            done.len()
        );
    }
    assert_eq!(primary.dump_tables(), dump_tables(&mut rc));
    primary.assert_no_panic();
}

/// `mariadb-binlog --read-from-remote-server` decodes the whole stream, across files.
#[test]
fn mariadb_binlog_reads_from_the_server() {
    if !have("mariadb-binlog", "mariadb_binlog_reads_from_the_server") {
        return;
    }
    let primary = Server::start(&["--server-id=1"]);
    let mut c = primary.conn(None);
    c.query_drop("CREATE DATABASE rb").unwrap();
    c.query_drop("CREATE TABLE rb.t (id INT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    c.query_drop("INSERT INTO rb.t VALUES (1, 'first')")
        .unwrap();
    c.query_drop("FLUSH BINARY LOGS").unwrap();
    c.query_drop("INSERT INTO rb.t VALUES (2, 'second')")
        .unwrap();
    let files: Vec<(String, u64)> = c.query("SHOW BINARY LOGS").unwrap();
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = vec![
            "--read-from-remote-server".into(),
            "--host=127.0.0.1".into(),
            format!("--port={}", primary.port),
            "--user=root".into(),
            "--verbose".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let (ok, out, err) = run(
        "mariadb-binlog",
        &args(&["--to-last-log", &files[0].0]),
        Duration::from_secs(30),
    );
    assert!(
        ok && err.trim().is_empty(),
        "mariadb-binlog failed: {err}\n{out}"
    );
    for want in ["'first'", "'second'", "CREATE TABLE rb.t", "Rotate to"] {
        assert!(out.contains(want), "missing {want} in:\n{out}");
    }
    // From a position inside the second file: only what follows it.
    let (ok, out, err) = run(
        "mariadb-binlog",
        &args(&["--start-position=4", &files[1].0]),
        Duration::from_secs(30),
    );
    assert!(
        ok && err.trim().is_empty(),
        "mariadb-binlog failed: {err}\n{out}"
    );
    assert!(
        out.contains("'second'") && !out.contains("'first'"),
        "{out}"
    );
}

// ---- a raw client, for the requests no real tool sends ----

#[test]
fn bad_dump_and_register_requests_get_mariadb_errors() {
    let mut primary = Server::start(&["--server-id=1"]);
    {
        let mut c = primary.conn(None);
        c.query_drop("CREATE USER plain@'%'").unwrap();
        c.query_drop("CREATE DATABASE big").unwrap();
        c.query_drop("CREATE TABLE big.t (id INT PRIMARY KEY, v TEXT)")
            .unwrap();
        for i in 0..200 {
            c.query_drop(format!("INSERT INTO big.t VALUES ({i}, REPEAT('v', 5000))"))
                .unwrap();
        }
    }
    let checksum = "SET @master_binlog_checksum = 'CRC32'";
    // Unknown file.
    let mut r = Raw::connect(primary.port, "root");
    r.query(checksum);
    let (code, msg) = err_of(&r.command(&dump_packet(4, 0, 7, "nope-000009")));
    assert_eq!(code, 1236);
    assert!(msg.contains("Could not find first log file name"), "{msg}");
    // A position past the file's end.
    let mut r = Raw::connect(primary.port, "root");
    r.query(checksum);
    let (code, msg) = err_of(&r.command(&dump_packet(1 << 30, 0, 7, "binlog-000000")));
    assert_eq!(code, 1236);
    assert!(msg.contains("impossible position"), "{msg}");
    // A GTID position ahead of the binlog, and one of a server this binlog never had.
    for (state, want) in [
        ("0-1-999999", "which is not in the master's binlog"),
        ("0-77-3", "probably means that the slave has diverged"),
    ] {
        let mut r = Raw::connect(primary.port, "root");
        r.query(checksum);
        r.query(&format!("SET @slave_connect_state = '{state}'"));
        let (code, msg) = err_of(&r.command(&dump_packet(4, 0, 7, "")));
        assert_eq!(code, 1236, "{msg}");
        assert!(msg.contains(want), "{state}: {msg}");
    }
    // A client that does not know about checksums.
    let mut r = Raw::connect(primary.port, "root");
    let (code, msg) = err_of(&r.command(&dump_packet(4, 0, 7, "binlog-000000")));
    assert_eq!(code, 1236);
    assert!(
        msg.contains("can not handle replication events with the checksum"),
        "{msg}"
    );
    // Without REPLICATION SLAVE.
    let mut r = Raw::connect(primary.port, "plain");
    r.query(checksum);
    let (code, _) = err_of(&r.command(&dump_packet(4, 0, 7, "binlog-000000")));
    assert_eq!(code, 1227);
    let mut r = Raw::connect(primary.port, "plain");
    let mut reg = vec![0x15];
    reg.extend_from_slice(&9u32.to_le_bytes());
    reg.extend_from_slice(&[0, 0, 0]);
    reg.extend_from_slice(&3306u16.to_le_bytes());
    reg.extend_from_slice(&[0; 8]);
    let (code, _) = err_of(&r.command(&reg));
    assert_eq!(code, 1045);
    // Garbage and truncated packets: an error, and the connection and server go on.
    let mut r = Raw::connect(primary.port, "root");
    for bad in [
        &[0x12u8, 1, 2][..],
        &[0x15, 1],
        &[0x15, 9, 0, 0, 0, 200, b'x'],
    ] {
        let p = r.command(bad);
        assert_eq!(p[0], 0xff, "{bad:?} got {p:?}");
    }
    r.query("DO 1");
    // A client that reads a few events of a large stream and goes away.
    for _ in 0..3 {
        let mut r = Raw::connect(primary.port, "root");
        r.query(checksum);
        r.seq = 0;
        r.write(&dump_packet(4, 0, 9, "binlog-000000"));
        for _ in 0..5 {
            let p = r.read();
            assert_eq!(p[0], 0);
        }
        drop(r);
    }
    // A full non-blocking dump still works, and ends with EOF.
    let mut r = Raw::connect(primary.port, "root");
    r.query(checksum);
    r.seq = 0;
    r.write(&dump_packet(4, 1, 9, "binlog-000000"));
    let mut events = 0;
    loop {
        let p = r.read();
        if p[0] == 0xfe && p.len() < 9 {
            break;
        }
        assert_eq!(p[0], 0, "{p:?}");
        events += 1;
    }
    assert!(events > 400, "{events} events");
    assert!(primary.is_running());
    primary.assert_no_panic();
}

/// onelog's own protocol client (what a onelog replica connects with) logs in, queries,
/// registers and reads a whole non-blocking dump, from onelogd and from a real MariaDB.
#[test]
fn protocol_client_reads_dumps_from_onelogd_and_mariadb() {
    use onelog_protocol::{Client, DumpPacket};
    let primary = Server::start(&["--server-id=1"]);
    add_repl_user(&primary);
    primary.conn(None).query_drop("CREATE DATABASE cl").unwrap();
    let port = free_port();
    let Some(m) = MariaDb::start_with(
        "protocol_client_reads_dumps_from_onelogd_and_mariadb",
        &[
            format!("--port={port}"),
            "--server-id=3".into(),
            "--log-bin=mb".into(),
            "--binlog-format=ROW".into(),
        ],
    ) else {
        return;
    };
    let mut mc = m.conn(None);
    mc.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    mc.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
    mc.query_drop("CREATE DATABASE cl").unwrap();
    for (port, server_id) in [(primary.port, "1"), (port, "3")] {
        let mut c = Client::connect("127.0.0.1", port, "repl", "pw", Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("connect to {port}: {e}"));
        assert!(c.server_version.contains("MariaDB"), "{}", c.server_version);
        assert_eq!(
            c.query_value("SELECT @@server_id").unwrap().as_deref(),
            Some(server_id)
        );
        let err = c.query("SELECT * FROM no_such_db.t").unwrap_err();
        assert!(
            err.to_string().contains("no_such_db") || err.to_string().contains("denied"),
            "{err}"
        );
        c.query("SET @master_binlog_checksum = @@global.binlog_checksum")
            .unwrap();
        c.query("SET @mariadb_slave_capability = 4").unwrap();
        c.query("SET @slave_connect_state = ''").unwrap();
        c.register_slave(42, "", 0).unwrap();
        c.binlog_dump(4, 1, 42, "").unwrap();
        let mut types = Vec::new();
        while let DumpPacket::Event(ev) = c.read_dump().unwrap() {
            types.push(ev[4]);
        }
        // fake ROTATE, FORMAT_DESCRIPTION, GTID_LIST, and the CREATE DATABASE's GTID + QUERY.
        assert_eq!(&types[..2], &[4, 15], "{port}: {types:?}");
        assert!(
            types.contains(&162) && types.contains(&2),
            "{port}: {types:?}"
        );
        // A wrong password.
        let e = Client::connect("127.0.0.1", port, "repl", "bad", Duration::from_secs(10))
            .err()
            .unwrap();
        assert!(e.to_string().contains("Access denied"), "{e}");
    }
}

/// The sequence numbers of the GTID events a whole non-blocking dump from `state` sends,
/// or the error that refused it.
fn dump_gtid_seqs(port: u16, state: &str, session: &[&str]) -> Result<Vec<u64>, (u16, String)> {
    let mut r = Raw::connect(port, "root");
    r.query("SET @master_binlog_checksum = 'CRC32'");
    r.query(&format!("SET @slave_connect_state = '{state}'"));
    for s in session {
        r.query(s);
    }
    let mut p = r.command(&dump_packet(4, 1, 7, ""));
    let mut seqs = Vec::new();
    loop {
        match p[0] {
            0xff => return Err(err_of(&p)),
            0xfe if p.len() < 9 => return Ok(seqs),
            _ => {
                // OK byte, then the event: its type at header offset 4, a GTID's
                // sequence number first in its body.
                if p[1 + 4] == 162 {
                    seqs.push(u64::from_le_bytes(p[1 + 19..1 + 27].try_into().unwrap()));
                }
            }
        }
        p = r.read();
    }
}

/// `@slave_gtid_strict_mode` refuses a position in a hole of the binlog (a later GTID of
/// the same server exists, the requested one not); without it the dump starts after the
/// hole. `@slave_gtid_ignore_duplicates` accepts a position ahead of the binlog. `SET
/// gtid_seq_no` (how the hole is made, as mariadb-binlog's output replays GTIDs) obeys
/// `gtid_strict_mode`.
#[test]
fn gtid_strict_mode_and_ignore_duplicates_in_the_dump() {
    let primary = Server::start(&["--server-id=1"]);
    let mut c = primary.conn(None);
    c.query_drop("CREATE DATABASE h").unwrap();
    c.query_drop("CREATE TABLE h.t (id INT PRIMARY KEY)")
        .unwrap();
    c.query_drop("INSERT INTO h.t VALUES (1)").unwrap();
    let last: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    let last: u64 = last.rsplit('-').next().unwrap().parse().unwrap();
    // A statement that logs nothing keeps the number for the next transaction that does.
    c.query_drop(format!("SET gtid_seq_no = {}", last + 10))
        .unwrap();
    let pending: u64 = c.query_first("SELECT @@gtid_seq_no").unwrap().unwrap();
    assert_eq!(pending, last + 10);
    c.query_drop("SELECT * FROM h.t").unwrap();
    c.query_drop("INSERT INTO h.t VALUES (2)").unwrap();
    let pos: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    assert_eq!(pos, format!("0-1-{}", last + 10));
    let reset: u64 = c.query_first("SELECT @@gtid_seq_no").unwrap().unwrap();
    assert_eq!(reset, 0);
    c.query_drop("INSERT INTO h.t VALUES (3)").unwrap();
    let pos: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    assert_eq!(
        pos,
        format!("0-1-{}", last + 11),
        "numbering goes on after the jump"
    );

    let hole = format!("0-1-{}", last + 5);
    let (code, msg) = dump_gtid_seqs(primary.port, &hole, &["SET @slave_gtid_strict_mode = 1"])
        .expect_err("strict mode refuses a position in a hole");
    assert_eq!(code, 1236);
    assert_eq!(
        msg,
        format!(
            "The binlog on the master is missing the GTID {hole} requested by the slave (even \
             though a subsequent sequence number does exist), and GTID strict mode is enabled"
        )
    );
    let seqs = dump_gtid_seqs(primary.port, &hole, &[]).unwrap();
    assert_eq!(
        seqs,
        vec![last + 10, last + 11],
        "without strict mode: after the hole"
    );
    let seqs = dump_gtid_seqs(
        primary.port,
        &format!("0-1-{last}"),
        &["SET @slave_gtid_strict_mode = 1"],
    )
    .unwrap();
    assert_eq!(
        seqs,
        vec![last + 10, last + 11],
        "strict, from an existing GTID"
    );

    let ahead = format!("0-1-{}", last + 100);
    let (code, msg) = dump_gtid_seqs(primary.port, &ahead, &[]).unwrap_err();
    assert_eq!(code, 1236);
    assert!(msg.contains("which is not in the master's binlog"), "{msg}");
    let seqs = dump_gtid_seqs(
        primary.port,
        &ahead,
        &["SET @slave_gtid_ignore_duplicates = 1"],
    )
    .unwrap();
    assert!(seqs.is_empty(), "{seqs:?}");
    // A domain position behind the last GTID of another server is still refused.
    let (code, _) = dump_gtid_seqs(
        primary.port,
        "0-77-3",
        &["SET @slave_gtid_ignore_duplicates = 1"],
    )
    .unwrap_err();
    assert_eq!(code, 1236);

    // gtid_seq_no under gtid_strict_mode: at or below the domain's last number is refused.
    c.query_drop("SET GLOBAL gtid_strict_mode = 1").unwrap();
    let e = c
        .query_drop(format!("SET gtid_seq_no = {}", last + 11))
        .unwrap_err()
        .to_string();
    assert!(e.contains("1950"), "{e}");
    assert!(e.contains("out-of-order sequence number"), "{e}");
    c.query_drop(format!("SET gtid_seq_no = {}", last + 20))
        .unwrap();
    c.query_drop("SET GLOBAL gtid_strict_mode = 0").unwrap();
    c.query_drop("CREATE USER nobody@'%'").unwrap();
    let opts = mysql::OptsBuilder::from_opts(primary.opts(None)).user(Some("nobody"));
    let mut n = mysql::Conn::new(opts).unwrap();
    let e = n.query_drop("SET gtid_seq_no = 5").unwrap_err().to_string();
    assert!(e.contains("1227"), "{e}");
    primary.assert_no_panic();
}

/// Times `n` autocommit inserts of 64 KiB rows, ids from `from`.
fn insert_big_rows(c: &mut mysql::Conn, from: u32, n: u32) -> Duration {
    let t = Instant::now();
    for i in from..from + n {
        c.query_drop(format!(
            "INSERT INTO s.t VALUES ({i}, REPEAT(CHAR(65 + {i} % 26), 65536))"
        ))
        .unwrap();
    }
    t.elapsed()
}

/// A replica that stops reading holds its dump thread in a blocked send, and nothing
/// else: commits go on at the rate they had without it, and once the replica reads
/// again it gets every transaction.
#[test]
fn a_replica_that_stops_reading_does_not_slow_commits() {
    let primary = Server::start(&["--server-id=1"]);
    let mut c = primary.conn(None);
    c.query_drop("CREATE DATABASE s").unwrap();
    c.query_drop("CREATE TABLE s.t (id INT PRIMARY KEY, v MEDIUMTEXT)")
        .unwrap();
    let n = 150;
    // Warm-up, and enough binlog (10 MB) to fill the socket buffers of a stalled dump.
    insert_big_rows(&mut c, 0, n);
    let before = insert_big_rows(&mut c, n, n);
    // A replica that asks for everything, then reads nothing.
    let mut stalled = Raw::connect(primary.port, "root");
    stalled.query("SET @master_binlog_checksum = 'CRC32'");
    stalled.query("SET @slave_connect_state = ''");
    stalled.seq = 0;
    stalled.write(&dump_packet(4, 0, 9, ""));
    std::thread::sleep(Duration::from_millis(500));
    let during = insert_big_rows(&mut c, 2 * n, n);
    let last: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    eprintln!(
        "{n} commits of 64 KiB: {:.0} ms without a stalled replica, {:.0} ms with one",
        before.as_secs_f64() * 1e3,
        during.as_secs_f64() * 1e3
    );
    // The machine is shared and noisy: twice the time is far from "waits for the replica".
    assert!(
        during < before * 2 + Duration::from_millis(500),
        "commits slowed by a stalled replica: {before:?} before, {during:?} with it"
    );
    // The replica reads again: every transaction arrives, the last one last.
    let last_seq: u64 = last.rsplit('-').next().unwrap().parse().unwrap();
    let mut got = 0u64;
    let deadline = Instant::now() + Duration::from_secs(60);
    while got != last_seq {
        assert!(Instant::now() < deadline, "dump stopped at GTID seq {got}");
        let p = stalled.read();
        assert_ne!(p[0], 0xff, "{:?}", err_of(&p));
        if p[1 + 4] == 162 {
            got = u64::from_le_bytes(p[1 + 19..1 + 27].try_into().unwrap());
        }
    }
    primary.assert_no_panic();
}
