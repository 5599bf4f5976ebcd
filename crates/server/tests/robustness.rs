//! Robustness of onelogd against bad clients: malformed, truncated and random packets
//! before and after authentication, clients vanishing mid-statement and mid-transaction,
//! thousands of short connections, oversized packets (1153), max_connections (1040).
//! The server must stay up, keep serving normal clients, and never panic.

mod common;
use common::*;
use mysql::prelude::Queryable;
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn read_packet(s: &mut TcpStream) -> std::io::Result<(u8, Vec<u8>)> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h)?;
    let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
    let mut p = vec![0u8; len];
    s.read_exact(&mut p)?;
    Ok((h[3], p))
}

fn write_packet(s: &mut TcpStream, seq: u8, payload: &[u8]) -> std::io::Result<()> {
    let l = (payload.len() as u32).to_le_bytes();
    let mut b = vec![l[0], l[1], l[2], seq];
    b.extend_from_slice(payload);
    s.write_all(&b)
}

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Connects and reads the server greeting.
fn greet(port: u16) -> TcpStream {
    let mut s = connect(port);
    let (seq, p) = read_packet(&mut s).unwrap();
    assert_eq!(seq, 0);
    assert_eq!(p[0], 10, "protocol version 10 greeting");
    s
}

/// A handshake response for `user` with an empty password.
fn hello(user: &str) -> Vec<u8> {
    // LONG_PASSWORD | PROTOCOL_41 | TRANSACTIONS | SECURE_CONNECTION | MULTI_STATEMENTS |
    // MULTI_RESULTS | PLUGIN_AUTH
    let caps: u32 = 1 | 0x200 | 0x2000 | 0x8000 | 0x10000 | 0x20000 | 0x80000;
    let mut p = Vec::new();
    p.extend_from_slice(&caps.to_le_bytes());
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0u8; 23]);
    p.extend_from_slice(user.as_bytes());
    p.push(0);
    p.push(0); // empty auth response
    p.extend_from_slice(b"mysql_native_password\0");
    p
}

/// Connects and logs in as root (no password) with a hand-written handshake.
fn login(port: u16) -> TcpStream {
    let mut s = greet(port);
    write_packet(&mut s, 1, &hello("root")).unwrap();
    let (_, p) = read_packet(&mut s).unwrap();
    assert_eq!(p[0], 0, "OK after login, got {p:?}");
    s
}

/// Reads answers until the server is quiet for `quiet`: returns the first byte of each
/// packet, and whether the connection was closed.
fn drain(s: &mut TcpStream, quiet: Duration) -> (Vec<u8>, bool) {
    s.set_read_timeout(Some(quiet)).unwrap();
    let mut firsts = Vec::new();
    loop {
        match read_packet(s) {
            Ok((_, p)) => firsts.push(p.first().copied().unwrap_or(0)),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return (firsts, false)
            }
            Err(_) => return (firsts, true),
        }
    }
}

/// A normal client still works.
fn healthy(srv: &mut Server) {
    assert!(srv.is_running(), "onelogd died:\n{}", srv.log_text());
    let mut c = srv.conn(None);
    let v: Option<i64> = c.query_first("SELECT 40 + 2").unwrap();
    assert_eq!(v, Some(42));
    srv.assert_no_panic();
}

fn threads_connected(c: &mut mysql::Conn) -> u64 {
    let r: Option<(String, u64)> = c
        .query_first("SHOW STATUS LIKE 'Threads_connected'")
        .unwrap();
    r.unwrap().1
}

#[test]
fn bad_packets() {
    let mut srv = Server::start(&["--max-allowed-packet=1M"]);
    let port = srv.port;
    let mut rng = StdRng::seed_from_u64(onelog_types::seed::test_seed("bad_packets"));

    // --- before authentication -----------------------------------------------------------
    // Connect and hang up at once, or after the greeting.
    for _ in 0..20 {
        drop(connect(port));
        drop(greet(port));
    }
    // Garbage that is not even framed correctly.
    for _ in 0..30 {
        let mut s = greet(port);
        let mut junk = vec![0u8; rng.gen_range(1..300)];
        rng.fill_bytes(&mut junk);
        let _ = s.write_all(&junk);
        drain(&mut s, Duration::from_millis(100));
    }
    // Well-framed packets with garbage payloads: "Bad handshake" (1043) or close. Now and
    // then random bytes read as a handshake response naming an authentication plugin,
    // which the server answers with an auth switch request (0xFE) as MariaDB does; never
    // with OK.
    for _ in 0..30 {
        let mut s = greet(port);
        let mut junk = vec![0u8; rng.gen_range(0..100)];
        rng.fill_bytes(&mut junk);
        write_packet(&mut s, 1, &junk).unwrap();
        let (answers, _) = drain(&mut s, Duration::from_millis(200));
        assert!(
            answers.iter().all(|&b| b == 0xff || b == 0xfe),
            "{junk:?}: {answers:?}"
        );
    }
    // Truncated handshake responses: every prefix of a valid one.
    let h = hello("root");
    for cut in 0..h.len() {
        let mut s = greet(port);
        write_packet(&mut s, 1, &h[..cut]).unwrap();
        let (answers, _) = drain(&mut s, Duration::from_millis(100));
        assert!(answers.len() <= 1, "{answers:?}");
    }
    // A header that promises more than is sent, then hang up.
    let mut s = greet(port);
    s.write_all(&[0xff, 0xff, 0x00, 1, 1, 2, 3]).unwrap();
    drop(s);
    // A packet with the wrong sequence number.
    let mut s = greet(port);
    write_packet(&mut s, 7, &h).unwrap();
    let (answers, _) = drain(&mut s, Duration::from_millis(200));
    assert!(
        answers.len() <= 1 && answers.iter().all(|&b| b == 0xff),
        "{answers:?}"
    );
    // A huge length before authentication.
    let mut s = greet(port);
    let _ = s.write_all(&[0xff, 0xff, 0xff, 1]);
    let _ = s.write_all(&vec![b'a'; 100_000]);
    drop(s);
    healthy(&mut srv);

    // --- after authentication ------------------------------------------------------------
    let mut s = login(port);
    let probes: Vec<Vec<u8>> = vec![
        vec![],                                 // empty packet
        vec![0xff],                             // unknown command
        vec![0x1f, 1, 2, 3],                    // unknown command
        vec![0x17],                             // COM_STMT_EXECUTE, no statement id
        vec![0x17, 1, 0, 0],                    // truncated statement id
        vec![0x17, 99, 0, 0, 0, 0, 1, 0, 0, 0], // unknown statement
        vec![0x16],                             // COM_STMT_PREPARE with empty text
        vec![0x19, 1],                          // COM_STMT_CLOSE truncated (no answer)
        vec![0x1a, 1, 0],                       // COM_STMT_RESET truncated
        vec![0x18, 1, 0, 0, 0],                 // COM_STMT_SEND_LONG_DATA truncated
        vec![0x04],                             // COM_FIELD_LIST, no table
        vec![0x02],                             // COM_INIT_DB, empty name
        vec![0x02, b'n', b'o', b'p', b'e'],     // COM_INIT_DB, unknown database
        vec![0x03],                             // COM_QUERY, empty
        vec![0x03, 0xff, 0xfe, 0xfd],           // COM_QUERY, not UTF-8
        vec![0x03, b'S', b'E', b'L', 0],        // COM_QUERY with a NUL
        vec![0x11],                             // COM_CHANGE_USER truncated
        vec![0x1b],                             // COM_SET_OPTION truncated
        vec![0x1b, 9, 9],                       // COM_SET_OPTION bad option
        vec![0x12, 1],                          // COM_BINLOG_DUMP truncated
        vec![0x0d, 0xff],                       // COM_DEBUG
    ];
    for p in &probes {
        if write_packet(&mut s, 0, p).is_err() {
            s = login(port);
            continue;
        }
        let (_, closed) = drain(&mut s, Duration::from_millis(100));
        if closed {
            s = login(port);
        }
    }
    // A prepared statement, then executes with malformed parameter blocks.
    write_packet(&mut s, 0, b"\x16SELECT ?, ?").unwrap();
    let (answers, closed) = drain(&mut s, Duration::from_millis(200));
    assert!(!closed && answers.first() == Some(&0), "{answers:?}");
    for _ in 0..100 {
        let mut p = vec![0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0];
        let mut tail = vec![0u8; rng.gen_range(0..40)];
        rng.fill_bytes(&mut tail);
        p.extend_from_slice(&tail);
        if write_packet(&mut s, 0, &p).is_err() {
            break;
        }
        let (_, closed) = drain(&mut s, Duration::from_millis(30));
        if closed {
            break;
        }
    }
    // Random commands with random payloads (not SHUTDOWN or KILL).
    let mut s = login(port);
    for _ in 0..300 {
        let cmd = loop {
            let c = rng.gen_range(0u8..0x20);
            if c != 0x08 && c != 0x0c && c != 0x01 {
                break c;
            }
        };
        let mut p = vec![cmd];
        let mut tail = vec![0u8; rng.gen_range(0..64)];
        rng.fill_bytes(&mut tail);
        p.extend_from_slice(&tail);
        let seq = if rng.gen_bool(0.9) { 0 } else { rng.gen() };
        if write_packet(&mut s, seq, &p).is_err() {
            s = login(port);
            continue;
        }
        let (_, closed) = drain(&mut s, Duration::from_millis(20));
        if closed {
            s = login(port);
        }
    }
    drop(s);
    healthy(&mut srv);

    // --- oversized packets: 1153, the server survives ------------------------------------
    assert_eq!(srv.sql("SELECT @@max_allowed_packet"), "1048576\n");
    let mut s = login(port);
    let mut q = b"\x03SELECT '".to_vec();
    q.resize(2 << 20, b'x');
    q.extend_from_slice(b"'");
    write_packet(&mut s, 0, &q).unwrap();
    let (_, p) = read_packet(&mut s).unwrap();
    assert_eq!(p[0], 0xff, "expected an error packet");
    assert_eq!(
        u16::from_le_bytes([p[1], p[2]]),
        1153,
        "{:?}",
        String::from_utf8_lossy(&p)
    );
    drop(s);
    // Through a real client as well.
    let big = format!("SELECT LENGTH('{}')", "y".repeat(1_100_000));
    let o = srv.mariadb(&["-N", "-B", "--max-allowed-packet=16M"], &big);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("1153") || err.contains("2006") || err.contains("2013"),
        "{err}"
    );
    // Just under the limit works.
    let ok = format!("SELECT LENGTH('{}')", "z".repeat(1_000_000));
    let o = srv.mariadb(&["-N", "-B"], &ok);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "1000000\n",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    healthy(&mut srv);
    srv.stop();
}

#[test]
fn disconnects_and_connection_churn() {
    let mut srv = Server::start(&[]);
    let port = srv.port;
    let mut c = srv.conn(None);
    c.query_drop("CREATE DATABASE r").unwrap();
    c.query_drop("CREATE TABLE r.t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    c.query_drop("INSERT INTO r.t VALUES (1, 0), (2, 0)")
        .unwrap();
    c.query_drop("CREATE TABLE r.big (id INT PRIMARY KEY, b LONGBLOB)")
        .unwrap();
    for i in 0..20 {
        c.exec_drop("INSERT INTO r.big VALUES (?, REPEAT('b', 500000))", (i,))
            .unwrap();
    }

    // Hang up in the middle of sending a statement.
    for _ in 0..20 {
        let mut s = login(port);
        let q = b"\x03UPDATE r.t SET v = v + 1 WHERE id = 1";
        let l = ((q.len() + 100) as u32).to_le_bytes();
        s.write_all(&[l[0], l[1], l[2], 0]).unwrap();
        s.write_all(q).unwrap();
        drop(s);
    }
    // Hang up while a statement with a large result runs.
    for _ in 0..10 {
        let mut s = login(port);
        write_packet(&mut s, 0, b"\x03SELECT * FROM r.big").unwrap();
        let mut b = [0u8; 100];
        let _ = s.read(&mut b);
        drop(s);
    }
    // Hang up in the middle of a transaction holding a row lock: rolled back, lock freed.
    {
        let mut s = login(port);
        write_packet(&mut s, 0, b"\x03BEGIN").unwrap();
        read_packet(&mut s).unwrap();
        write_packet(&mut s, 0, b"\x03UPDATE r.t SET v = 100 WHERE id = 2").unwrap();
        let (_, p) = read_packet(&mut s).unwrap();
        assert_eq!(p[0], 0);
        drop(s);
    }
    let t = Instant::now();
    c.query_drop("SET SESSION innodb_lock_wait_timeout = 5")
        .ok();
    c.query_drop("UPDATE r.t SET v = v + 1 WHERE id = 2")
        .unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "lock of a dead session held"
    );
    let v: Vec<(i32, i32)> = c.query("SELECT id, v FROM r.t ORDER BY id").unwrap();
    assert_eq!(v, vec![(1, 0), (2, 1)]);

    // 2000 connections opened and closed: half polite (COM_QUIT), half hang-ups at
    // random points of the handshake.
    let mut rng = StdRng::seed_from_u64(onelog_types::seed::test_seed(
        "disconnects_and_connection_churn",
    ));
    let t = Instant::now();
    for i in 0..2000 {
        match i % 4 {
            0 => {
                let mut k = mysql::Conn::new(srv.opts(None)).unwrap();
                if i % 40 == 0 {
                    k.query_drop("SELECT 1").unwrap();
                }
            }
            1 => {
                let mut s = login(port);
                write_packet(&mut s, 0, &[0x01]).unwrap(); // COM_QUIT
            }
            2 => drop(login(port)),
            _ => {
                let mut s = greet(port);
                if rng.gen_bool(0.5) {
                    let h = hello("root");
                    let _ = write_packet(&mut s, 1, &h[..rng.gen_range(0..h.len())]);
                }
            }
        }
    }
    println!("2000 connections in {:.2} s", t.elapsed().as_secs_f64());
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let n = threads_connected(&mut c);
        if n == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "Threads_connected stays at {n}");
        std::thread::sleep(Duration::from_millis(50));
    }
    healthy(&mut srv);
    drop(c);
    srv.stop();
}

#[test]
fn max_connections() {
    let mut srv = Server::start(&["--max-connections=5"]);
    // MariaDB admits max_connections + 1 (the extra one is for a SUPER user).
    let mut held = Vec::new();
    for _ in 0..6 {
        held.push(srv.conn(None));
    }
    match mysql::Conn::new(srv.opts(None)) {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1040, "{e}"),
        Err(e) => panic!("expected 1040, got {e:?}"),
        Ok(_) => panic!("connection beyond max_connections admitted"),
    }
    let o = srv.mariadb(&["-e", "SELECT 1"], "");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("1040"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    held.pop();
    // The slot is free again once the server has seen the hang-up.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut c = loop {
        match mysql::Conn::new(srv.opts(None)) {
            Ok(c) => break c,
            Err(e) => {
                assert!(Instant::now() < deadline, "slot not freed: {e}");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    };
    assert_eq!(threads_connected(&mut c), 6);
    // SET GLOBAL max_connections applies to the next connections, both ways.
    c.query_drop("SET GLOBAL max_connections = 8").unwrap();
    for _ in 0..3 {
        held.push(srv.conn(None));
    }
    assert!(
        mysql::Conn::new(srv.opts(None)).is_err(),
        "a 10th connection"
    );
    c.query_drop("SET GLOBAL max_connections = 3").unwrap();
    drop(held);
    std::thread::sleep(Duration::from_millis(300));
    let few: Vec<_> = (0..3).map(|_| srv.conn(None)).collect();
    match mysql::Conn::new(srv.opts(None)) {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1040, "{e}"),
        Err(e) => panic!("expected 1040, got {e:?}"),
        Ok(_) => panic!("connection beyond the lowered max_connections admitted"),
    }
    drop(few);
    drop(c);
    srv.stop();
}

/// SET GLOBAL max_allowed_packet: sessions that connect afterwards get the new limit.
#[test]
fn max_allowed_packet_runtime() {
    let mut srv = Server::start(&[]);
    let mut c = srv.conn(None);
    let len = |c: &mut mysql::Conn, n: usize| -> Result<Option<u64>, mysql::Error> {
        c.query_first(format!("SELECT LENGTH('{}')", "a".repeat(n)))
    };
    assert_eq!(len(&mut c, 2_000_000).unwrap(), Some(2_000_000));
    c.query_drop("SET GLOBAL max_allowed_packet = 1048576")
        .unwrap();
    let mut d = srv.conn(None);
    assert_eq!(
        d.query_first::<u64, _>("SELECT @@max_allowed_packet")
            .unwrap(),
        Some(1048576)
    );
    // The Rust client refuses by itself (it sizes packets by @@max_allowed_packet); speak
    // the protocol by hand to see the server enforce it.
    assert!(len(&mut d, 2_000_000).is_err());
    let mut s = login(srv.port);
    let mut q = b"\x03SELECT '".to_vec();
    q.resize(2 << 20, b'x');
    q.extend_from_slice(b"'");
    write_packet(&mut s, 0, &q).unwrap();
    let (_, p) = read_packet(&mut s).unwrap();
    assert_eq!(p[0], 0xff, "expected an error packet");
    assert_eq!(u16::from_le_bytes([p[1], p[2]]), 1153);
    drop(s);
    c.query_drop("SET GLOBAL max_allowed_packet = 16777216")
        .unwrap();
    let mut e = srv.conn(None);
    assert_eq!(len(&mut e, 2_000_000).unwrap(), Some(2_000_000));
    drop((c, d, e));
    srv.stop();
}

/// COM_STMT_SEND_LONG_DATA in chunks, then COM_STMT_EXECUTE (no client library sends long
/// data by default, so this speaks the protocol by hand).
#[test]
fn long_data() {
    let mut srv = Server::start(&[]);
    let mut s = login(srv.port);
    write_packet(&mut s, 0, b"\x16SELECT LENGTH(?), ? + 1").unwrap();
    let (_, ok) = read_packet(&mut s).unwrap();
    assert_eq!(ok[0], 0, "prepare: {ok:?}");
    let id = [ok[1], ok[2], ok[3], ok[4]];
    let (ncols, nparams) = (
        u16::from_le_bytes([ok[5], ok[6]]),
        u16::from_le_bytes([ok[7], ok[8]]),
    );
    assert_eq!((ncols, nparams), (2, 2));
    // Parameter definitions + EOF, column definitions + EOF.
    for _ in 0..(nparams + 1 + ncols + 1) {
        read_packet(&mut s).unwrap();
    }
    for chunk in 0..3u8 {
        let mut p = vec![0x18];
        p.extend_from_slice(&id);
        p.extend_from_slice(&0u16.to_le_bytes());
        p.extend(std::iter::repeat_n(b'a' + chunk, 100_000));
        write_packet(&mut s, 0, &p).unwrap();
    }
    let mut p = vec![0x17];
    p.extend_from_slice(&id);
    p.push(0); // no cursor
    p.extend_from_slice(&1u32.to_le_bytes());
    p.push(0); // null bitmap
    p.push(1); // new params bound
    p.extend_from_slice(&[0xfc, 0, 0x08, 0]); // BLOB, LONGLONG
    p.extend_from_slice(&41i64.to_le_bytes()); // param 1 (param 0 came as long data)
    write_packet(&mut s, 0, &p).unwrap();
    let (_, h) = read_packet(&mut s).unwrap();
    assert_eq!(
        h,
        vec![2],
        "column count, got {:?}",
        String::from_utf8_lossy(&h)
    );
    read_packet(&mut s).unwrap();
    read_packet(&mut s).unwrap();
    read_packet(&mut s).unwrap(); // EOF
    let (_, row) = read_packet(&mut s).unwrap();
    assert_eq!(row[0], 0, "binary row");
    let len = i64::from_le_bytes(row[2..10].try_into().unwrap());
    let v = i64::from_le_bytes(row[10..18].try_into().unwrap());
    assert_eq!((len, v), (300_000, 42));
    drop(s);
    srv.stop();
}

/// SLEEP() sleeps, and KILL QUERY from another connection ends it early with 1, as in
/// MariaDB; the connection stays usable.
#[test]
fn kill_query_ends_sleep() {
    let srv = Server::start(&[]);
    let mut a = srv.conn(None);
    let t0 = Instant::now();
    let r: Option<i64> = a.query_first("SELECT SLEEP(0.2)").unwrap();
    assert_eq!(r, Some(0));
    assert!(t0.elapsed() >= Duration::from_millis(200));
    let id: Option<u64> = a.query_first("SELECT CONNECTION_ID()").unwrap();
    let id = id.unwrap();
    let sleeper = std::thread::spawn(move || {
        let t0 = Instant::now();
        let r: Option<i64> = a.query_first("SELECT SLEEP(60)").unwrap();
        let after: Option<i64> = a.query_first("SELECT 7").unwrap();
        (r, t0.elapsed(), after)
    });
    std::thread::sleep(Duration::from_millis(300));
    let mut b = srv.conn(None);
    b.query_drop(format!("KILL QUERY {id}")).unwrap();
    let (r, took, after) = sleeper.join().unwrap();
    assert_eq!(r, Some(1));
    assert!(took < Duration::from_secs(10), "SLEEP ended after {took:?}");
    assert_eq!(after, Some(7));
}
