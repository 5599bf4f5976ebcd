//! `mariadb-dump` and `mariadb` (the Debian 10.11 client binaries) against onelogd: every
//! dump mode restores into a fresh onelogd and into a real MariaDB 10.11 with the same
//! table contents; a dump made by MariaDB restores into onelogd; the `--master-data` dump's
//! GTID position matches its data while a writer runs (FLUSH TABLES WITH READ LOCK); LOCK
//! TABLES errors and waits.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::mariadb::MariaDb;
use common::{have, Server};
use mysql::prelude::Queryable;

const DUMP: &str = "/usr/bin/mariadb-dump";

/// The tables every round trip carries: integers, decimals, floats that print exactly,
/// strings with quotes, backslashes and 4-byte UTF-8, dates and times, blobs with every
/// byte value, NULLs, AUTO_INCREMENT, unique and secondary indexes, a table without a
/// primary key and an empty one; ZEROFILL, UNSIGNED DECIMAL/FLOAT and DOUBLE(M,D) columns.
const FILL: &str = r#"
CREATE TABLE kinds (
  id INT AUTO_INCREMENT PRIMARY KEY,
  tiny TINYINT, small SMALLINT UNSIGNED, big BIGINT, ubig BIGINT UNSIGNED,
  dec1 DECIMAL(12,4), dec2 DECIMAL(30,10) UNSIGNED, dbl DOUBLE,
  name VARCHAR(100) NOT NULL DEFAULT '', fixed CHAR(5), body TEXT,
  bin VARBINARY(64), data BLOB,
  d DATE, dt DATETIME(6), t TIME, ts TIMESTAMP NULL,
  UNIQUE KEY uq_big (big), KEY k_name (name), KEY k_d_dt (d, dt)
);
INSERT INTO kinds (tiny, small, big, ubig, dec1, dec2, dbl, name, fixed, body, bin, data, d, dt, t, ts) VALUES
 (-128, 65535, -9223372036854775808, 18446744073709551615, -12345678.1234, 12345678901234567890.0123456789, 1.5,
  'it''s', 'ab', 'line1\nline2\ttab', X'00FF7F80', X'000102FEFF', '2024-02-29', '2024-02-29 23:59:59.123456', '-838:59:59', '2024-01-01 00:00:01'),
 (127, 0, 9223372036854775807, 0, 0.0001, 0, -2.25,
  'back\\slash "dq" 😀 ünïcödé', 'x', REPEAT('long text ', 500), '', '', '1000-01-01', '9999-12-31 23:59:59.999999', '00:00:00', NULL),
 (NULL, NULL, NULL, NULL, NULL, NULL, NULL, '', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (0, 1, 42, 42, 99999999.9999, 1.5, 0, 'semi;colon /* not a comment */ -- nor this', 'abcde',
  'multi\r\nline', X'5C27', X'27225C0D0A1A', '1999-12-31', '2000-01-01 00:00:00', '12:34:56', '2038-01-19 03:14:07');
INSERT INTO kinds (name) VALUES ('after a gap');
CREATE TABLE nokey (a INT, b VARCHAR(20), c BLOB);
INSERT INTO nokey VALUES (1, 'one', X'01'), (1, 'one', X'01'), (NULL, NULL, NULL), (2, 'two', '');
CREATE TABLE empty_t (id BIGINT UNSIGNED PRIMARY KEY, v VARCHAR(5));
CREATE TABLE wide (id INT PRIMARY KEY, v VARCHAR(300));
CREATE TABLE legacy (
  id INT(6) UNSIGNED ZEROFILL NOT NULL AUTO_INCREMENT PRIMARY KEY,
  code SMALLINT(4) ZEROFILL, amount DECIMAL(8,2) UNSIGNED ZEROFILL,
  price DOUBLE(10,2), ratio FLOAT(5,3) UNSIGNED, qty MEDIUMINT ZEROFILL DEFAULT 7
);
INSERT INTO legacy (code, amount, price, ratio, qty) VALUES
 (7, 12.5, 1234.5, 0.25, 3), (NULL, NULL, NULL, NULL, NULL),
 (9999, 999999.99, -99999999.99, 99.999, 16777215);
INSERT INTO legacy (code) VALUES (42);
"#;

/// Rows for `wide`, enough for mariadb-dump to split its extended INSERTs.
fn wide_rows() -> String {
    let rows: Vec<String> = (1..=3000)
        .map(|i| format!("({i}, REPEAT('w{}', 40))", i % 97))
        .collect();
    format!("INSERT INTO wide VALUES {};", rows.join(","))
}

/// A canonical digest of every table of `db`: each row in primary key (or all-column)
/// order, each value as its bytes in hex (NULL as `N`), through the text protocol.
fn digest(c: &mut mysql::Conn, db: &str) -> String {
    let tables: Vec<String> = c.query(format!("SHOW TABLES FROM `{db}`")).unwrap();
    let mut out = String::new();
    for t in tables {
        let ncols: usize = c
            .query_first(format!(
                "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = '{t}'"
            ))
            .unwrap()
            .unwrap();
        let order: Vec<String> = (1..=ncols).map(|i| i.to_string()).collect();
        let rows: Vec<mysql::Row> = c
            .query(format!(
                "SELECT * FROM `{db}`.`{t}` ORDER BY {}",
                order.join(",")
            ))
            .unwrap();
        out.push_str(&format!("== {t} ({} rows)\n", rows.len()));
        for r in rows {
            let vals: Vec<String> = r
                .unwrap()
                .into_iter()
                .map(|v| match v {
                    mysql::Value::NULL => "N".to_string(),
                    mysql::Value::Bytes(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
                    other => panic!("text protocol value {other:?}"),
                })
                .collect();
            out.push_str(&vals.join("|"));
            out.push('\n');
        }
    }
    assert!(out.contains("== kinds (5 rows)"), "{out}");
    out
}

/// Runs `prog` with `args`, feeding `stdin` (a dump holds any bytes, not only UTF-8).
fn run_bytes(prog: &str, args: &[String], stdin: &[u8]) -> Output {
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {prog}: {e}"));
    let mut si = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let w = std::thread::spawn(move || {
        let _ = si.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    w.join().unwrap();
    out
}

/// The standard output of a program that must have succeeded.
fn check(o: &Output, what: &str) -> Vec<u8> {
    assert!(
        o.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
            .chars()
            .take(2000)
            .collect::<String>()
    );
    o.stdout.clone()
}

/// The text of a dump (its binary values shown lossily).
fn text_of(dump: &[u8]) -> String {
    String::from_utf8_lossy(dump).into_owned()
}

/// `mariadb-dump` over onelogd's socket with `args`.
fn dump_onelog(s: &Server, args: &[&str]) -> Vec<u8> {
    let mut all = vec![
        "--no-defaults".to_string(),
        format!("--socket={}", s.socket.display()),
        "-uroot".to_string(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    check(
        &run_bytes(DUMP, &all, b""),
        &format!("mariadb-dump {args:?}"),
    )
}

/// `mariadb` over a socket (root, no password, utf8mb4) with `args`, reading `stdin`.
fn client(socket: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut all = vec![
        "--no-defaults".to_string(),
        format!("--socket={}", socket.display()),
        "-uroot".to_string(),
        "--default-character-set=utf8mb4".to_string(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    run_bytes(common::MARIADB, &all, stdin)
}

/// Loads the test data into `db` (created) through the `mariadb` client.
fn fill(socket: &Path, db: &str) {
    let sql = format!("CREATE DATABASE {db}; USE {db}; {FILL} {}", wide_rows());
    check(&client(socket, &[], sql.as_bytes()), "filling the tables");
}

#[test]
fn every_dump_mode_restores_into_onelogd_and_mariadb() {
    let t = "every_dump_mode_restores_into_onelogd_and_mariadb";
    if !have(DUMP, t) || !have(common::MARIADB, t) {
        return;
    }
    // With grant tables: MariaDB 10.11.19 under --skip-grant-tables crashed (SIGSEGV) once
    // in mariadb-dump's information_schema.COLUMNS query.
    let Some(maria) = MariaDb::start_with(t, &[]) else {
        return;
    };
    let src = Server::start(&[]);
    fill(&src.socket, "src");
    let want = digest(&mut src.conn(None), "src");
    let modes: [&[&str]; 3] = [
        &[],
        &["--single-transaction"],
        &["--single-transaction", "--gtid", "--master-data=2"],
    ];
    for (i, mode) in modes.iter().enumerate() {
        let mut args = mode.to_vec();
        args.push("src");
        let dump = dump_onelog(&src, &args);
        let text = text_of(&dump);
        assert!(text.contains("INSERT INTO `kinds` VALUES"), "{text}");
        if mode.contains(&"--master-data=2") {
            assert!(
                text.contains("-- SET GLOBAL gtid_slave_pos='0-1-"),
                "{text}"
            );
        }
        // Into a fresh onelogd ...
        let dst = Server::start(&[]);
        let db = format!("copy{i}");
        check(
            &client(&dst.socket, &["-e", &format!("CREATE DATABASE {db}")], b""),
            "create",
        );
        check(&client(&dst.socket, &[&db], &dump), "restore into onelogd");
        assert_eq!(
            digest(&mut dst.conn(None), &db),
            want,
            "mode {mode:?} -> onelogd"
        );
        // ... and into MariaDB 10.11.
        check(
            &client(
                &maria.socket,
                &["-e", &format!("CREATE DATABASE {db}")],
                b"",
            ),
            "create",
        );
        check(
            &client(&maria.socket, &[&db], &dump),
            "restore into MariaDB",
        );
        assert_eq!(
            digest(&mut maria.conn(None), &db),
            want,
            "mode {mode:?} -> MariaDB"
        );
    }
    // --all-databases: every database with its CREATE DATABASE, and the mysql schema
    // (with MariaDB's general_log and slow_log definitions, which it copies from every
    // server).
    let dump = dump_onelog(&src, &["--all-databases"]);
    let text = text_of(&dump);
    assert!(
        text.contains("CREATE TABLE IF NOT EXISTS `general_log`"),
        "{text}"
    );
    assert!(
        text.contains("CREATE TABLE IF NOT EXISTS `slow_log`"),
        "{text}"
    );
    assert!(text.contains("USE `src`;"), "{text}");
    let dst = Server::start(&[]);
    check(
        &client(&dst.socket, &[], &dump),
        "restore --all-databases into onelogd",
    );
    assert_eq!(
        digest(&mut dst.conn(None), "src"),
        want,
        "--all-databases -> onelogd"
    );
    // The accounts came along and the server still serves them.
    check(
        &client(&dst.socket, &["-e", "SELECT 1"], b""),
        "login after restore",
    );
    check(
        &client(&maria.socket, &[], &dump),
        "restore --all-databases into MariaDB",
    );
    assert_eq!(
        digest(&mut maria.conn(None), "src"),
        want,
        "--all-databases -> MariaDB"
    );
    src.assert_no_panic();
    dst.assert_no_panic();
}

#[test]
fn a_mariadb_dump_restores_into_onelogd() {
    let t = "a_mariadb_dump_restores_into_onelogd";
    if !have(DUMP, t) || !have(common::MARIADB, t) {
        return;
    }
    let Some(maria) = MariaDb::start_with(t, &[]) else {
        return;
    };
    fill(&maria.socket, "src");
    let want = digest(&mut maria.conn(None), "src");
    let dst = Server::start(&[]);
    for (i, mode) in [&[][..], &["--single-transaction"][..], &["--databases"][..]]
        .iter()
        .enumerate()
    {
        let mut args = vec![
            "--no-defaults".to_string(),
            format!("--socket={}", maria.socket.display()),
            "-uroot".to_string(),
        ];
        args.extend(mode.iter().map(|a| a.to_string()));
        args.push("src".into());
        let dump = check(&run_bytes(DUMP, &args, b""), "mariadb-dump from MariaDB");
        assert!(text_of(&dump).contains("DISABLE KEYS"));
        if mode.contains(&"--databases") {
            // Creates and uses `src` itself (onelogd has none yet).
            check(&client(&dst.socket, &[], &dump), "restore into onelogd");
            assert_eq!(digest(&mut dst.conn(None), "src"), want);
        } else {
            let db = format!("m{i}");
            check(
                &client(&dst.socket, &["-e", &format!("CREATE DATABASE {db}")], b""),
                "create",
            );
            // No --force: every statement of the dump must run.
            check(&client(&dst.socket, &[&db], &dump), "restore into onelogd");
            assert_eq!(digest(&mut dst.conn(None), &db), want);
        }
    }
    dst.assert_no_panic();
}

/// The GTID of `SET GLOBAL gtid_slave_pos='0-1-N'` in a `--gtid --master-data=2` dump.
fn dump_gtid_seq(text: &str) -> u64 {
    let at = text
        .find("SET GLOBAL gtid_slave_pos='")
        .unwrap_or_else(|| panic!("no gtid_slave_pos in the dump:\n{text}"));
    let rest = &text[at + "SET GLOBAL gtid_slave_pos='".len()..];
    let gtid = &rest[..rest.find('\'').unwrap()];
    gtid.rsplit('-').next().unwrap().parse().unwrap()
}

#[test]
fn master_data_position_matches_the_dumped_rows_under_writes() {
    let t = "master_data_position_matches_the_dumped_rows_under_writes";
    if !have(DUMP, t) || !have(common::MARIADB, t) {
        return;
    }
    let s = Server::start(&[]);
    s.sql("CREATE DATABASE w; CREATE TABLE w.seq (id INT PRIMARY KEY, pad VARCHAR(100))");
    // A writer commits one row per transaction and notes the GTID each got.
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(Mutex::new(Vec::<(u32, u64)>::new()));
    let writer = {
        let (stop, written, opts) = (stop.clone(), written.clone(), s.opts(Some("w")));
        std::thread::spawn(move || {
            let mut c = mysql::Conn::new(opts).unwrap();
            let mut id = 0u32;
            while !stop.load(Ordering::Relaxed) {
                id += 1;
                c.exec_drop("INSERT INTO seq VALUES (?, REPEAT('p', 50))", (id,))
                    .unwrap();
                let g: String = c.query_first("SELECT @@last_gtid").unwrap().unwrap();
                let seq: u64 = g.rsplit('-').next().unwrap().parse().unwrap();
                written.lock().unwrap().push((id, seq));
            }
        })
    };
    let wait_rows = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while written.lock().unwrap().len() < n {
            assert!(Instant::now() < deadline, "the writer is stuck");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    let mut dumps = Vec::new();
    for round in 0..5 {
        wait_rows(50 * (round + 1));
        dumps.push(dump_onelog(
            &s,
            &["--single-transaction", "--gtid", "--master-data=2", "w"],
        ));
    }
    let n = written.lock().unwrap().len();
    wait_rows(n + 50);
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let written = written.lock().unwrap().clone();
    for (n, dump) in dumps.iter().enumerate() {
        let pos = dump_gtid_seq(&text_of(dump));
        let db = format!("r{n}");
        s.sql(&format!("CREATE DATABASE {db}"));
        check(&client(&s.socket, &[&db], dump), "restore");
        let got: Vec<u32> = s
            .conn(Some(&db))
            .query("SELECT id FROM seq ORDER BY id")
            .unwrap();
        let want: Vec<u32> = written
            .iter()
            .filter(|(_, g)| *g <= pos)
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(got, want, "dump {n} at GTID 0-1-{pos}");
        // The writer kept committing during the dumps: rows after the position exist.
        assert!(written.iter().any(|(_, g)| *g > pos), "dump {n}");
    }
    s.assert_no_panic();
}

fn err_code(r: mysql::Result<()>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// Runs `sql` on a new connection in a thread; the receiver gets its result when it ends.
fn in_thread(opts: mysql::Opts, sql: &'static str) -> std::sync::mpsc::Receiver<mysql::Result<()>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut c = mysql::Conn::new(opts).unwrap();
        for stmt in sql.split(';') {
            let r = c.query_drop(stmt);
            if r.is_err() {
                let _ = tx.send(r);
                return;
            }
        }
        let _ = tx.send(Ok(()));
    });
    rx
}

#[test]
fn lock_tables_and_the_global_read_lock() {
    let s = Server::start(&[]);
    s.sql(
        "CREATE DATABASE l; CREATE TABLE l.t (id INT PRIMARY KEY, v INT); \
         CREATE TABLE l.u (id INT PRIMARY KEY); INSERT INTO l.t VALUES (1, 1)",
    );
    let opts = s.opts(Some("l"));
    let mut a = s.conn(Some("l"));
    // READ: the holder may read its tables only, and write none.
    a.query_drop("LOCK TABLES t READ").unwrap();
    let e = a.query_drop("INSERT INTO t VALUES (2, 2)");
    assert_eq!(err_code(e), 1099);
    let e = a.query_drop("UPDATE t SET v = 5");
    assert_eq!(err_code(e), 1099);
    let e = a.query_drop("SELECT * FROM u");
    assert_eq!(err_code(e), 1100);
    let e = a.query_drop("SELECT * FROM t AS x");
    assert_eq!(err_code(e), 1100);
    assert_eq!(
        err_code(a.query_drop("ALTER TABLE t ADD COLUMN w INT")),
        1099
    );
    let n: u32 = a.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 1);
    // Another session's writer waits for UNLOCK TABLES; its readers do not.
    let writer = in_thread(opts.clone(), "INSERT INTO t VALUES (3, 3)");
    let reader = in_thread(opts.clone(), "SELECT * FROM t");
    reader
        .recv_timeout(Duration::from_secs(30))
        .unwrap()
        .unwrap();
    assert!(
        writer.recv_timeout(Duration::from_millis(500)).is_err(),
        "the writer did not wait"
    );
    a.query_drop("UNLOCK TABLES").unwrap();
    writer
        .recv_timeout(Duration::from_secs(30))
        .unwrap()
        .unwrap();
    // WRITE: the holder writes; everyone else waits, readers too.
    a.query_drop("LOCK TABLES t WRITE, u READ").unwrap();
    a.query_drop("INSERT INTO t VALUES (4, 4)").unwrap();
    assert_eq!(err_code(a.query_drop("INSERT INTO u VALUES (1)")), 1099);
    a.query_drop("ALTER TABLE t DISABLE KEYS").unwrap();
    let reader = in_thread(opts.clone(), "SELECT * FROM t");
    assert!(
        reader.recv_timeout(Duration::from_millis(500)).is_err(),
        "the reader did not wait"
    );
    a.query_drop("UNLOCK TABLES").unwrap();
    reader
        .recv_timeout(Duration::from_secs(30))
        .unwrap()
        .unwrap();
    // LOCK TABLES waits for a transaction that wrote the table to end.
    let mut b = s.conn(Some("l"));
    b.query_drop("BEGIN").unwrap();
    b.query_drop("UPDATE t SET v = 10 WHERE id = 1").unwrap();
    let locker = in_thread(opts.clone(), "LOCK TABLES t READ; UNLOCK TABLES");
    assert!(
        locker.recv_timeout(Duration::from_millis(500)).is_err(),
        "LOCK TABLES did not wait"
    );
    b.query_drop("COMMIT").unwrap();
    locker
        .recv_timeout(Duration::from_secs(30))
        .unwrap()
        .unwrap();
    // FLUSH TABLES WITH READ LOCK: the holder's writes fail, another session's write
    // statements and commits wait until UNLOCK TABLES.
    b.query_drop("BEGIN").unwrap();
    b.query_drop("INSERT INTO t VALUES (5, 5)").unwrap();
    a.query_drop("FLUSH TABLES WITH READ LOCK").unwrap();
    assert_eq!(err_code(a.query_drop("INSERT INTO u VALUES (9)")), 1223);
    assert_eq!(err_code(a.query_drop("CREATE TABLE z (a INT)")), 1223);
    let writer = in_thread(opts.clone(), "INSERT INTO u VALUES (7)");
    let committer = std::thread::spawn(move || {
        b.query_drop("COMMIT").unwrap();
        b
    });
    assert!(
        writer.recv_timeout(Duration::from_millis(500)).is_err(),
        "the writer did not wait"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(!committer.is_finished(), "the commit did not wait");
    let before: String = a.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    let n: u32 = a.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 3, "the waiting commit is not visible");
    a.query_drop("UNLOCK TABLES").unwrap();
    writer
        .recv_timeout(Duration::from_secs(30))
        .unwrap()
        .unwrap();
    committer.join().unwrap();
    let after: String = a.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    assert_ne!(before, after);
    let n: u32 = a.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 4);
    // A waiting writer gives up after lock_wait_timeout with 1205.
    a.query_drop("FLUSH TABLES WITH READ LOCK").unwrap();
    let timed = in_thread(
        opts.clone(),
        "SET SESSION lock_wait_timeout = 1; INSERT INTO u VALUES (8)",
    );
    let r = timed.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(err_code(r), 1205);
    // The end of the holder's connection releases everything.
    drop(a);
    let writer = in_thread(opts, "INSERT INTO u VALUES (8)");
    writer
        .recv_timeout(Duration::from_secs(30))
        .unwrap()
        .unwrap();
    s.assert_no_panic();
}
