//! The `mariadb` command-line client against the real onelogd: socket and TCP, a
//! multi-statement script with errors, `\s`, and password authentication.

mod common;
use common::*;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn mariadb_cli() {
    if !have(MARIADB, "mariadb_cli") {
        return;
    }
    let mut srv = Server::start(&[]);

    // Socket and TCP both answer.
    let o = srv.mariadb(&["-N", "-B", "-e", "SELECT 1+1, @@version_comment"], "");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("2\t"), "{}", stdout(&o));
    let o = srv.mariadb_tcp(&["-uroot", "-N", "-B", "-e", "SELECT 'tcp'"], "");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "tcp\n");

    // The server describes itself with its real settings.
    let o = srv.mariadb(
        &[
            "-N",
            "-B",
            "-e",
            "SELECT @@port, @@socket, @@max_connections, @@version LIKE '%MariaDB%'",
        ],
        "",
    );
    assert_eq!(
        stdout(&o),
        format!("{}\t{}\t151\t1\n", srv.port, srv.socket.display())
    );

    // A multi-statement script, batch mode (stops at the first error).
    let script = r#"
CREATE DATABASE shop;
USE shop;
CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2), qty INT DEFAULT 0);
INSERT INTO item VALUES (1,'apple',0.50,10),(2,'pear',0.75,5);
INSERT INTO item (id,name,price) VALUES (3,'plum',1.25);
UPDATE item SET qty = qty + 1 WHERE id = 3;
DELETE FROM item WHERE id = 2;
SELECT id, name, price, qty FROM item ORDER BY id;
SELECT COUNT(*), SUM(price) FROM item;
"#;
    let o = srv.mariadb(&["-B"], script);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "id\tname\tprice\tqty\n1\tapple\t0.50\t10\n3\tplum\t1.25\t1\nCOUNT(*)\tSUM(price)\n2\t1.75\n"
    );

    // Window functions as MariaDB sends them: PERCENT_RANK is a DOUBLE of 10 decimals.
    let o = srv.mariadb(
        &["-N", "-B", "shop"],
        "SELECT id, RANK() OVER (ORDER BY price DESC), PERCENT_RANK() OVER (ORDER BY price), \
         SUM(price) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM item ORDER BY id;",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "1\t2\t0.0000000000\t0.50\n3\t1\t1.0000000000\t1.75\n"
    );
    let o = srv.mariadb(
        &["-t", "--column-type-info", "shop"],
        "SELECT PERCENT_RANK() OVER (ORDER BY price) AS pr FROM item;",
    );
    let info = stdout(&o);
    assert!(info.contains("Type:       DOUBLE"), "{info}");
    assert!(info.contains("Decimals:   10"), "{info}");

    // Errors with the right codes; --force keeps going after each.
    let script = r#"
USE shop;
INSERT INTO item VALUES (1,'dup',1,1);
SELECT * FROM nosuchtable;
SELEC 1;
INSERT INTO item (id) VALUES (9);
SELECT 'still here';
"#;
    let o = srv.mariadb(&["-B", "--force"], script);
    let err = stderr(&o);
    // (with --force the client exits 0 even after errors)
    assert!(err.contains("ERROR 1062 (23000)"), "{err}");
    assert!(err.contains("ERROR 1146 (42S02)"), "{err}");
    assert!(err.contains("ERROR 1064 (42000)"), "{err}");
    assert!(err.contains("ERROR 1364 (HY000)"), "{err}");
    assert!(stdout(&o).contains("still here"), "{}", stdout(&o));

    // Several statements in one COM_QUERY (CLIENT_MULTI_STATEMENTS).
    let o = srv.mariadb(
        &[
            "-N",
            "-B",
            "shop",
            "-e",
            "SELECT 1; SELECT 2; SELECT name FROM item WHERE id=3",
        ],
        "",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "1\n2\nplum\n");

    // \s status output, over the socket and TCP.
    let o = srv.mariadb(&["shop"], "\\s\n");
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("Current database:\tshop"), "{s}");
    assert!(s.contains("Current user:\t\troot@localhost"), "{s}");
    assert!(s.contains("MariaDB"), "{s}");
    assert!(s.contains("UNIX socket:"), "{s}");
    assert!(s.contains("Uptime:"), "{s}");
    let o = srv.mariadb_tcp(&["-uroot"], "status\n");
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("TCP port:"), "{s}");

    // Users and passwords.
    srv.sql("CREATE USER 'app'@'localhost' IDENTIFIED BY 's3cret'");
    srv.sql("GRANT ALL PRIVILEGES ON shop.* TO 'app'@'localhost'");
    let o = srv.mariadb_tcp(
        &[
            "-uapp",
            "-ps3cret",
            "-N",
            "-B",
            "shop",
            "-e",
            "SELECT COUNT(*) FROM item",
        ],
        "",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "2\n");
    let o = srv.mariadb_tcp(&["-uapp", "-pwrong", "-e", "SELECT 1"], "");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("ERROR 1045 (28000)"), "{}", stderr(&o));
    let o = srv.mariadb_tcp(&["-uapp", "-e", "SELECT 1"], "");
    assert!(stderr(&o).contains("ERROR 1045 (28000)"), "{}", stderr(&o));
    let o = run_with_stdin(
        MARIADB,
        &[
            "--no-defaults".into(),
            format!("--socket={}", srv.socket.display()),
            "-uapp".into(),
            "-pwrong".into(),
            "-e".into(),
            "SELECT 1".into(),
        ],
        "",
    );
    assert!(stderr(&o).contains("ERROR 1045 (28000)"), "{}", stderr(&o));
    let o = srv.mariadb_tcp(&["-unobody", "-e", "SELECT 1"], "");
    assert!(stderr(&o).contains("ERROR 1045 (28000)"), "{}", stderr(&o));
    // The user has no rights outside shop.
    let o = srv.mariadb_tcp(&["-uapp", "-ps3cret", "-e", "CREATE DATABASE other"], "");
    assert!(stderr(&o).contains("ERROR 1044 (42000)"), "{}", stderr(&o));

    // Data survives a clean restart.
    srv.stop();
    srv.restart();
    assert_eq!(
        srv.sql("SELECT name FROM shop.item ORDER BY id"),
        "apple\nplum\n"
    );
    srv.stop();
}

/// RocksDB's C++ allocations go to mimalloc too, not only Rust's: onelogd defines (and so
/// interposes) `malloc`, `free` and `operator new`/`delete`. With glibc's malloc the apply
/// thread waited up to 0.65 s in `free` for an arena lock held by a preempted thread
/// (perf sched_switch stacks).
#[test]
fn onelogd_overrides_the_c_allocator() {
    if !have("nm", "onelogd_overrides_the_c_allocator") {
        return;
    }
    let o = std::process::Command::new("nm")
        .args(["-D", "--defined-only", ONELOGD])
        .output()
        .expect("run nm");
    assert!(o.status.success(), "{}", stderr(&o));
    let defined: Vec<String> = stdout(&o)
        .lines()
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect();
    for sym in ["malloc", "free", "calloc", "realloc", "_Znwm", "_ZdlPv"] {
        assert!(
            defined.iter().any(|d| d == sym),
            "onelogd does not define {sym}: C and C++ allocations would use glibc's malloc"
        );
    }
}

/// `--log-error` (no file: `onelogd.err` in the data directory) gets the error log in
/// MariaDB's format: `YYYY-MM-DD HH:MM:SS 0 [Note] ...`, from start-up to shutdown.
#[test]
fn error_log_in_mariadbs_format_goes_to_the_log_error_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut child = std::process::Command::new(ONELOGD)
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--port={}", free_port()))
        .arg(format!("--socket={}", dir.path().join("s.sock").display()))
        .arg("--log-error")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let log = data.join("onelogd.err");
    let read = || std::fs::read_to_string(&log).unwrap_or_default();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !read().contains("ready for connections") {
        assert!(
            child.try_wait().unwrap().is_none(),
            "onelogd exited:\n{}",
            read()
        );
        assert!(
            std::time::Instant::now() < deadline,
            "not ready:\n{}",
            read()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    assert!(child.wait().unwrap().success());
    let text = read();
    let ready = text
        .lines()
        .find(|l| l.contains("ready for connections"))
        .unwrap();
    // `2026-11-27  2:05:09 0 [Note] onelogd: ready for connections. ...`
    let b = ready.as_bytes();
    assert!(
        b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[7] == b'-' && b[13] == b':',
        "{ready}"
    );
    assert_eq!(&ready[19..29], " 0 [Note] ", "{ready}");
    assert!(text.contains("[Note] shutdown complete"), "{text}");
}
