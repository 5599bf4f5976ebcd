//! Account statements reach a real MariaDB 10.11 the way replication would bring them: a
//! data directory written through the SQL layer is exported to classic binlog files, and
//! 1. `mariadb-binlog FILE | mariadb` runs them on a scratch MariaDB;
//! 2. a scratch MariaDB replica's SQL thread applies the exported file as its relay log,
//!    serially and with parallel workers: it stops at a statement that fails there with
//!    the GTID position *before* that statement's group (the row-redo event precedes the
//!    GTID event, so it never ends a group early), then, once the conflict is removed,
//!    applies everything and reaches onelog's GTID position.
//!
//! Either way MariaDB ends with the accounts onelog has (SHOW GRANTS compared). Skipped when
//! MariaDB is not installed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use onelog_binlog::event::{encode_event, header_flags, Event, Rotate, HEADER_LEN};
use onelog_binlog::export::export_dir;
use onelog_binlog::{FileEvents, Naming, RealFs};
use onelog_engine::EngineOptions;
use onelog_sql::{Database, QueryResult, Session};

const MARIADBD: &str = "/usr/sbin/mariadbd";

/// The statements onelog runs; each is an account statement but `CREATE DATABASE` and
/// `USE`. One fails for one of its users and is logged with that error (a replica expects
/// it).
const STATEMENTS: &[&str] = &[
    "CREATE DATABASE shop",
    "CREATE USER 'r1'@'%' IDENTIFIED BY 'pw1'",
    "CREATE USER r2@localhost IDENTIFIED BY PASSWORD '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'",
    "CREATE USER IF NOT EXISTS 'r3'@'h3' REQUIRE SSL",
    "USE shop",
    "GRANT SELECT, INSERT ON shop.* TO 'r1'@'%'",
    "GRANT SELECT ON * TO r2@localhost",
    "GRANT ALL PRIVILEGES ON *.* TO 'r3'@'h3' WITH GRANT OPTION",
    "GRANT RELOAD ON *.* TO 'r4'@'%' IDENTIFIED BY 'pw4'",
    "REVOKE INSERT ON shop.* FROM 'r1'@'%'",
    "REVOKE GRANT OPTION ON *.* FROM 'r3'@'h3'",
    "ALTER USER 'r1'@'%' IDENTIFIED BY 'pw2' REQUIRE X509",
    "SET PASSWORD FOR r2@localhost = PASSWORD('pw3')",
    "CREATE USER 'r5'@'%', 'r1'@'%'",
    "RENAME USER 'r5'@'%' TO 'r6'@'%'",
    "CREATE USER 'gone'@'%'",
    "DROP USER 'gone'@'%'",
    "DROP USER IF EXISTS 'nobody'@'%'",
];

const USERS: &[&str] = &[
    "'r1'@'%'",
    "r2@localhost",
    "'r3'@'h3'",
    "'r4'@'%'",
    "'r6'@'%'",
];

/// A data directory after [`STATEMENTS`]: its path, every user's SHOW GRANTS and
/// `@@gtid_binlog_pos`.
fn make_datadir(dir: &Path) -> (Vec<Vec<String>>, String) {
    let db = Database::open(EngineOptions {
        datadir: dir.to_path_buf(),
        ..Default::default()
    })
    .unwrap();
    let mut s = Session::new(db.clone(), "root".into(), "localhost".into(), 1);
    for sql in STATEMENTS {
        match s.query(sql) {
            Ok(_) => {}
            Err(e) if e.code == 1396 && sql.contains("'r5'") => {}
            Err(e) => panic!("{sql}: {e}"),
        }
    }
    let mut grants = Vec::new();
    for u in USERS {
        match s.query(&format!("SHOW GRANTS FOR {u}")).unwrap() {
            QueryResult::Rows { rows, .. } => {
                grants.push(rows.iter().map(|r| r[0].to_string()).collect())
            }
            other => panic!("{other:?}"),
        }
    }
    let pos = match s.query("SELECT @@gtid_binlog_pos").unwrap() {
        QueryResult::Rows { rows, .. } => rows[0][0].to_string(),
        other => panic!("{other:?}"),
    };
    drop(s);
    db.shutdown().unwrap();
    (grants, pos)
}

/// A scratch mariadbd (grant tables on) on a unix socket; killed on drop.
struct Scratch {
    child: Child,
    socket: PathBuf,
    data: PathBuf,
    _dir: tempfile::TempDir,
}

impl Scratch {
    /// Installs a data directory, lets `prepare` add files to it, starts the server.
    #[allow(clippy::zombie_processes)] // reaped on drop
    fn start(options: &[&str], prepare: impl FnOnce(&Path)) -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let socket = dir.path().join("sock");
        // Retried on a fresh directory: under load an install has failed once in a while.
        let mut failures = Vec::new();
        for _ in 0..3 {
            let _ = std::fs::remove_dir_all(&data);
            let out = Command::new("mariadb-install-db")
                .arg("--no-defaults")
                .arg(format!("--datadir={}", data.display()))
                .args(["--auth-root-authentication-method=normal", "--user=root"])
                .output()
                .unwrap();
            if out.status.success() {
                failures.clear();
                break;
            }
            failures.push(format!(
                "{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        assert!(
            failures.is_empty(),
            "mariadb-install-db failed:\n{}",
            failures.join("\n---\n")
        );
        prepare(&data);
        let log = dir.path().join("err.log");
        let child = Command::new(MARIADBD)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--log-error={}", log.display()))
            .arg(format!("--pid-file={}", dir.path().join("pid").display()))
            .args([
                "--skip-networking",
                "--user=root",
                "--innodb-buffer-pool-size=32M",
            ])
            .args(options)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Killed on drop, also when it does not come up.
        let mut s = Scratch {
            child,
            socket,
            data,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !(s.socket.exists() && mysql::Conn::new(opts(&s.socket)).is_ok()) {
            if let Some(st) = s.child.try_wait().unwrap() {
                panic!(
                    "mariadbd exited ({st}):\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            assert!(Instant::now() < deadline, "mariadbd did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        s
    }

    fn conn(&self) -> mysql::Conn {
        mysql::Conn::new(opts(&self.socket)).unwrap()
    }

    fn grants(&self) -> Vec<Vec<String>> {
        let mut c = self.conn();
        USERS
            .iter()
            .map(|u| c.query(format!("SHOW GRANTS FOR {u}")).unwrap())
            .collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn opts(socket: &Path) -> mysql::Opts {
    mysql::OptsBuilder::new()
        .socket(Some(socket.to_str().unwrap()))
        .user(Some("root"))
        .into()
}

fn have_mariadb(test: &str) -> bool {
    let ok = Path::new(MARIADBD).exists() && Path::new("/usr/bin/mariadb-binlog").exists();
    if !ok {
        eprintln!("SKIPPED {test}: MariaDB is not installed");
    }
    ok
}

/// Writes onelog's data directory, exports it; returns the exported files, the grants and
/// the GTID position.
fn exported(dir: &Path) -> (Vec<PathBuf>, Vec<Vec<String>>, String) {
    let data = dir.join("data");
    let (grants, pos) = make_datadir(&data);
    let files = export_dir(
        &RealFs,
        &data,
        "binlog",
        Naming::Engine,
        &dir.join("export"),
        "onelog-bin",
    )
    .unwrap();
    assert_eq!(files.len(), 1);
    (files, grants, pos)
}

#[test]
fn mariadb_client_runs_the_exported_account_statements() {
    if !have_mariadb("mariadb_client_runs_the_exported_account_statements") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (files, grants, _) = exported(dir.path());
    let m = Scratch::start(&[], |_| {});
    let text = Command::new("/usr/bin/mariadb-binlog")
        .args(&files)
        .output()
        .unwrap();
    assert!(text.status.success());
    let mut client = Command::new("/usr/bin/mariadb")
        .arg(format!("--socket={}", m.socket.display()))
        .args(["-uroot", "--force"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    client
        .stdin
        .take()
        .unwrap()
        .write_all(&text.stdout)
        .unwrap();
    let out = client.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // The one statement logged with an error fails here too; nothing else does.
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("ERROR")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains("Operation CREATE USER failed for 'r1'@'%'"),
        "{err}"
    );
    assert_eq!(m.grants(), grants);
}

/// `file` with an artificial ROTATE naming the primary's file after its
/// FORMAT_DESCRIPTION, as a replica's relay log has.
fn relay_log(file: &Path) -> Vec<u8> {
    let src = std::fs::read(file).unwrap();
    let fde_end = 4 + u32::from_le_bytes(src[4 + 9..4 + 13].try_into().unwrap()) as usize;
    let rotate = Event::Rotate(Rotate {
        position: 4,
        next_file: "binlog.000001".into(),
    });
    let rotate = encode_event(0, 1, header_flags::ARTIFICIAL, 0, &rotate);
    let mut out = src[..fde_end].to_vec();
    out.extend_from_slice(&rotate);
    out.extend_from_slice(&src[fde_end..]);
    out
}

/// The GTID of the group before the first row-redo event, and the file's end position.
fn before_first_redo(file: &Path) -> (String, u64) {
    let (mut last, mut before, mut end) = (String::new(), None, 0);
    for e in FileEvents::open(&RealFs, file).unwrap() {
        let e = e.unwrap();
        match &e.event {
            Event::Gtid(g) => last = g.gtid(e.header.server_id).to_string(),
            Event::RowRedo(_) if before.is_none() => before = Some(last.clone()),
            _ => {}
        }
        end = e.end.offset;
    }
    assert!(end > HEADER_LEN as u64);
    (before.expect("a row redo event"), end)
}

fn slave_status(c: &mut mysql::Conn) -> (String, u64, u64, String) {
    let row: mysql::Row = c.query_first("SHOW SLAVE STATUS").unwrap().unwrap();
    (
        row.get::<String, _>("Slave_SQL_Running").unwrap(),
        row.get::<u64, _>("Exec_Master_Log_Pos").unwrap(),
        row.get::<u64, _>("Last_SQL_Errno").unwrap(),
        row.get::<String, _>("Last_SQL_Error").unwrap(),
    )
}

/// Waits until the SQL thread stopped or executed up to `end`.
fn wait_sql_thread(c: &mut mysql::Conn, end: u64) -> (String, u64, u64, String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let st = slave_status(c);
        if st.0 != "Yes" || st.1 >= end {
            return st;
        }
        assert!(Instant::now() < deadline, "SQL thread stuck: {st:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn mariadb_replica_applies_the_account_statements() {
    if !have_mariadb("mariadb_replica_applies_the_account_statements") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (files, grants, pos) = exported(dir.path());
    let (before, end) = before_first_redo(&files[0]);
    let relay = relay_log(&files[0]);
    for threads in ["0", "4"] {
        let m = Scratch::start(
            &[
                "--server-id=2",
                "--relay-log=relay-bin",
                "--skip-slave-start",
                &format!("--slave-parallel-threads={threads}"),
            ],
            |data| {
                std::fs::write(data.join("relay-bin.000001"), &relay).unwrap();
                std::fs::write(data.join("relay-bin.index"), "./relay-bin.000001\n").unwrap();
            },
        );
        assert!(m.data.join("relay-bin.000001").exists());
        let mut c = m.conn();
        // The first account statement (CREATE USER 'r1'@'%') fails on this replica.
        c.query_drop("CREATE USER 'r1'@'%'").unwrap();
        c.query_drop(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=1, MASTER_USER='root', \
             MASTER_USE_GTID=no, RELAY_LOG_FILE='relay-bin.000001', RELAY_LOG_POS=4",
        )
        .unwrap();
        c.query_drop("START SLAVE SQL_THREAD").unwrap();
        let st = wait_sql_thread(&mut c, end);
        assert_eq!((st.0.as_str(), st.2), ("No", 1396), "{threads}: {st:?}");
        let at: String = c.query_first("SELECT @@gtid_slave_pos").unwrap().unwrap();
        assert_eq!(
            at, before,
            "{threads} threads: GTID position after the failure"
        );
        // Without the conflict the replica goes on from that statement to the end.
        c.query_drop("DROP USER 'r1'@'%'").unwrap();
        c.query_drop("START SLAVE SQL_THREAD").unwrap();
        let st = wait_sql_thread(&mut c, end);
        assert_eq!((st.0.as_str(), st.1, st.2), ("Yes", end, 0), "{st:?}");
        let at: String = c.query_first("SELECT @@gtid_slave_pos").unwrap().unwrap();
        assert_eq!(at, pos, "{threads} threads");
        assert_eq!(m.grants(), grants, "{threads} threads");
    }
}
