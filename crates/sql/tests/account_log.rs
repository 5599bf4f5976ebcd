//! Account statements in the binlog: each is logged as MariaDB 10.11 logs it (a QUERY
//! event replicas execute, after onelog's private row-redo event and the GTID event), never
//! as rows events on `mysql.onelog_*`; and the accounts come back exactly after a crash
//! (SIGKILL) and from the binlog alone, replayed from the row-redo events.
//!
//! The expected QUERY events are what a real MariaDB 10.11 wrote for the same statements;
//! when `mariadbd` is installed the test also runs them on a scratch MariaDB with its
//! binlog on and compares the QUERY events field by field.

#[allow(dead_code)]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use onelog_binlog::event::{gtid_flags, header_flags, Event, Query, QueryStatus};
use onelog_binlog::{FileEvents, RealFs};
use onelog_engine::EngineOptions;
use onelog_sql::{Database, QueryResult, Session};
use onelog_types::Value;

/// How MariaDB 10.11 logs a statement.
#[derive(Clone, Copy, Debug)]
enum Log {
    /// Not an account statement (DDL, USE): logged as usual or not at all.
    Other,
    /// Not logged; the statement fails with this error (0: succeeds).
    No(u16),
    /// Logged as sent, with Q_INVOKER or not, and this error code.
    Sent { invoker: bool, err: u16 },
    /// Logged as this text (SET PASSWORD), with Q_INVOKER or not.
    As(&'static str, bool),
}

use Log::*;

const HASH: &str = "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19";

/// Every kind of account statement, with what MariaDB 10.11.19 logged for it (its binlog
/// read with `mariadb-binlog -vv`): texts as sent except SET PASSWORD, the session's
/// database, Q_INVOKER for GRANT, REVOKE ... ON and SET PASSWORD without FOR, error codes
/// of statements that failed for some users.
const SCRIPT: &[(&str, Log)] = &[
    ("CREATE DATABASE d", Other),
    (
        "CREATE USER 'u1'@'%' IDENTIFIED BY 'pw1'",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    (
        "CREATE USER u2@localhost IDENTIFIED BY PASSWORD '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    (
        "CREATE USER 'u3'@'h3' REQUIRE SSL",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    (
        "CREATE USER IF NOT EXISTS 'u3'@'h3'",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    (
        "CREATE USER IF NOT EXISTS 'u4'@'%' IDENTIFIED BY 'pw4'",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    (
        "create user   u5,   'u6'@'%' identified by 'x' require x509",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    ("CREATE USER 'u1'@'%'", No(1396)),
    (
        "CREATE USER 'u1'@'%', 'u7'@'%'",
        Sent {
            invoker: false,
            err: 1396,
        },
    ),
    ("USE d", Other),
    (
        "GRANT SELECT, INSERT ON d.* TO 'u1'@'%'",
        Sent {
            invoker: true,
            err: 0,
        },
    ),
    (
        "GRANT ALL PRIVILEGES ON *.* TO 'u2'@'localhost' WITH GRANT OPTION",
        Sent {
            invoker: true,
            err: 0,
        },
    ),
    (
        "GRANT SELECT ON * TO u1",
        Sent {
            invoker: true,
            err: 0,
        },
    ),
    (
        "grant usage on *.* to u1 identified by 'newpw'",
        Sent {
            invoker: true,
            err: 0,
        },
    ),
    (
        "GRANT RELOAD ON *.* TO 'u3'@'h3' REQUIRE X509",
        Sent {
            invoker: true,
            err: 0,
        },
    ),
    ("GRANT SELECT ON d.* TO 'nosuch'@'%'", No(1133)),
    (
        "GRANT SELECT ON d.* TO 'u8'@'%' IDENTIFIED BY PASSWORD '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'",
        Sent {
            invoker: true,
            err: 0,
        },
    ),
    (
        "REVOKE INSERT ON d.* FROM 'u1'@'%'",
        Sent {
            invoker: true,
            err: 0,
        },
    ),
    (
        "REVOKE GRANT OPTION ON *.* FROM u2@localhost",
        Sent {
            invoker: true,
            err: 0,
        },
    ),
    (
        "REVOKE ALL PRIVILEGES, GRANT OPTION FROM 'u2'@'localhost'",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    (
        "REVOKE ALL PRIVILEGES, GRANT OPTION FROM 'ghost'@'%'",
        Sent {
            invoker: false,
            err: 1269,
        },
    ),
    (
        "ALTER USER 'u1'@'%' IDENTIFIED BY 'pw2'",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    (
        "ALTER USER u3@h3 REQUIRE NONE",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    ("ALTER USER IF EXISTS 'ghost'@'%' IDENTIFIED BY 'zz'", No(0)),
    (
        "ALTER USER 'u5'@'%', 'ghost'@'%' IDENTIFIED BY 'x'",
        Sent {
            invoker: false,
            err: 1396,
        },
    ),
    (
        "SET PASSWORD FOR 'u1'@'%' = PASSWORD('pw3')",
        As(
            "SET PASSWORD FOR 'u1'@'%'='*77B4A70CEFD76DB9415F36D291E74C110D2738E0'",
            false,
        ),
    ),
    (
        "SET PASSWORD FOR u4 = '*2470c0c06dee42fd1618bb99005adca2ec9d1e19'",
        As(
            "SET PASSWORD FOR 'u4'@'%'='*2470c0c06dee42fd1618bb99005adca2ec9d1e19'",
            false,
        ),
    ),
    (
        "SET PASSWORD = PASSWORD('')",
        As("SET PASSWORD FOR 'root'@'localhost'=''", true),
    ),
    (
        "RENAME USER 'u4'@'%' TO 'u44'@'%', 'u6'@'%' TO 'u66'@'%'",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    ("RENAME USER 'ghost'@'%' TO 'g2'@'%'", No(1396)),
    (
        "RENAME USER 'u66'@'%' TO 'u6'@'%', 'ghost'@'%' TO 'g2'@'%'",
        Sent {
            invoker: false,
            err: 1396,
        },
    ),
    (
        "DROP USER 'u44'@'%'",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    (
        "DROP USER IF EXISTS 'u5'@'%', nobody",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    (
        "DROP USER IF EXISTS nobody2",
        Sent {
            invoker: false,
            err: 0,
        },
    ),
    ("DROP USER 'ghost'@'%'", No(1396)),
    (
        "DROP USER 'u7'@'%', 'ghost'@'%'",
        Sent {
            invoker: false,
            err: 1396,
        },
    ),
];

/// The users the script leaves, for SHOW GRANTS.
const USERS: &[&str] = &[
    "'u1'@'%'",
    "'u2'@'localhost'",
    "'u3'@'h3'",
    "'u6'@'%'",
    "'u8'@'%'",
];

fn open(dir: &Path) -> Arc<Database> {
    Database::open(EngineOptions {
        datadir: dir.to_path_buf(),
        lock_wait_timeout: Duration::from_secs(5),
        block_cache_size: 8 << 20,
        ..Default::default()
    })
    .expect("open")
}

fn root(db: &Arc<Database>) -> Session {
    Session::new(
        db.clone(),
        "root".into(),
        "localhost".into(),
        db.next_connection_id(),
    )
}

/// Runs the script, checking each statement's outcome.
fn run_script(s: &mut Session) {
    for (sql, log) in SCRIPT {
        let r = s.query(sql);
        let want = match log {
            No(e) | Sent { err: e, .. } => *e,
            Other | As(..) => 0,
        };
        match r {
            Ok(_) if want == 0 => {}
            Err(e) if e.code == want => {}
            other => panic!("{sql}: expected error {want}, got {other:?}"),
        }
    }
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match s.query(sql) {
        Ok(QueryResult::Rows { rows, .. }) => rows,
        other => panic!("{sql}: {other:?}"),
    }
}

/// The account tables and every remaining user's grants.
fn account_state(s: &mut Session) -> Vec<Vec<Value>> {
    let mut out = rows(s, "SELECT * FROM mysql.onelog_user ORDER BY Host, User");
    out.extend(rows(
        s,
        "SELECT * FROM mysql.onelog_db ORDER BY Host, Db, User",
    ));
    for u in USERS {
        out.extend(rows(s, &format!("SHOW GRANTS FOR {u}")));
    }
    out
}

/// The events of the binlog files of `dir` whose names start with `prefix`.
fn binlog_events(dir: &Path, prefix: &str) -> Vec<(onelog_binlog::EventHeader, Event)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|f| f.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(prefix) && !n.ends_with(".index")
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        for e in FileEvents::open(&RealFs, &f).unwrap() {
            let e = e.unwrap();
            out.push((e.header, e.event));
        }
    }
    out
}

/// The account statements' QUERY events (every QUERY event that is not DDL of the script
/// or of onelog's bootstrap), with the flags of their GTID events.
fn account_queries(events: &[(onelog_binlog::EventHeader, Event)]) -> Vec<(Query, u8)> {
    let mut out = Vec::new();
    let mut flags2 = 0;
    for (h, e) in events {
        match e {
            Event::Gtid(g) => flags2 = g.flags2,
            Event::Query(q) => {
                let text = String::from_utf8_lossy(&q.query);
                if !text.starts_with("CREATE DATABASE") && !text.contains("mysql.onelog_") {
                    assert_eq!(h.flags, 0, "QUERY header flags of {text}");
                    out.push((q.clone(), flags2));
                }
            }
            _ => {}
        }
    }
    out
}

#[test]
fn account_statements_log_what_mariadb_logs() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = root(&db);
    let thread = s.connection_id();
    run_script(&mut s);
    // SHOW BINLOG EVENTS shows the row redo as MariaDB shows an ignorable event.
    let shown = rows(&mut s, "SHOW BINLOG EVENTS");
    let text = |v: &Value| v.to_string();
    let at = shown
        .iter()
        .position(|r| text(&r[5]) == "use `d`; GRANT SELECT, INSERT ON d.* TO 'u1'@'%'")
        .expect("the GRANT in SHOW BINLOG EVENTS");
    assert_eq!(text(&shown[at][2]), "Query");
    assert_eq!(text(&shown[at - 1][2]), "Gtid");
    assert!(text(&shown[at - 1][5]).starts_with("GTID 0-1-"));
    assert_eq!(text(&shown[at - 2][2]), "Ignorable log event");
    assert_eq!(
        text(&shown[at - 2][5]),
        "# Ignorable event type 111 (Unknown)"
    );
    drop(s);
    db.shutdown().unwrap();

    let events = binlog_events(dir.path(), "binlog-");
    // The expected QUERY events, from the script.
    let mut expected = Vec::new();
    let mut cur_db = "";
    for (sql, log) in SCRIPT {
        if let Some(d) = sql.strip_prefix("USE ") {
            cur_db = d;
        }
        let (text, invoker, err) = match log {
            Sent { invoker, err } => (*sql, *invoker, *err),
            As(text, invoker) => (*text, *invoker, 0),
            Other | No(_) => continue,
        };
        let status = QueryStatus {
            invoker: invoker.then(|| ("root".to_string(), "localhost".to_string())),
            ..QueryStatus::default()
        };
        expected.push(Query::with_status(cur_db, text, thread, &status, err));
    }
    let got = account_queries(&events);
    let got_queries: Vec<Query> = got.iter().map(|(q, _)| q.clone()).collect();
    assert_eq!(got_queries, expected);
    let ddl = gtid_flags::STANDALONE | gtid_flags::ALLOW_PARALLEL | gtid_flags::DDL;
    assert!(got.iter().all(|(_, f)| *f == ddl), "{got:?}");

    // Every account statement's group is ROW_REDO GTID QUERY, and no rows event outside a
    // row redo touches mysql.onelog_* after the bootstrap's root row.
    let mut account_groups = 0;
    let mut onelog_maps = 0;
    for (i, (h, e)) in events.iter().enumerate() {
        match e {
            Event::RowRedo(r) => {
                assert_eq!(h.flags, header_flags::IGNORABLE);
                assert!(matches!(events[i + 1].1, Event::Gtid(_)));
                assert!(matches!(events[i + 2].1, Event::Query(_)));
                for nested in r.events().unwrap() {
                    if let Event::TableMap(t) = nested {
                        assert_eq!(t.db, "mysql");
                        assert!(t.table.starts_with("onelog_"), "{}", t.table);
                    }
                }
                account_groups += 1;
            }
            Event::TableMap(t) if t.db == "mysql" => onelog_maps += 1,
            _ => {}
        }
    }
    assert_eq!(account_groups, expected.len());
    assert_eq!(
        onelog_maps, 1,
        "only the bootstrap's root row is a rows event"
    );

    // A real MariaDB 10.11 logs the same QUERY events for the same statements.
    let Some(m) = common::mariadb::Server::start_with(&["--log-bin=mb", "--server-id=1"]) else {
        return;
    };
    let mut c = common::mariadb::Client::connect(&m.socket).unwrap();
    for (sql, _) in SCRIPT {
        c.query(sql);
    }
    // A closed file (the active one's FORMAT_DESCRIPTION is marked in use, outside its CRC).
    c.query("FLUSH BINARY LOGS");
    let theirs = binlog_events(&m.data, "mb.000001");
    let theirs = account_queries(&theirs);
    assert_eq!(theirs.len(), got.len(), "{theirs:?}");
    for ((mine, f1), (their, f2)) in got.iter().zip(&theirs) {
        let mut their = their.clone();
        their.thread_id = mine.thread_id;
        assert_eq!(*mine, their, "MariaDB logs it differently");
        assert_eq!(f1, f2);
    }
}

const CHILD_ENV: &str = "ONELOG_ACCOUNT_CRASH_CHILD";

/// The child of `accounts_survive_sigkill_and_replay`: runs the script, says so, waits to
/// be killed.
#[test]
#[ignore = "the child process of accounts_survive_sigkill_and_replay"]
fn account_crash_child() {
    let dir = std::env::var(CHILD_ENV).unwrap_or_else(|_| {
        panic!("a child process of another test: run by it, with {CHILD_ENV} set")
    });
    let dir = Path::new(&dir);
    let db = open(&dir.join("data"));
    let mut s = root(&db);
    run_script(&mut s);
    std::fs::write(dir.join("done"), b"done").unwrap();
    std::thread::sleep(Duration::from_secs(120));
}

#[test]
fn accounts_survive_sigkill_and_replay() {
    // What the script leaves, on a database shut down cleanly.
    let reference = tempfile::tempdir().unwrap();
    let want = {
        let db = open(reference.path());
        let mut s = root(&db);
        run_script(&mut s);
        let state = account_state(&mut s);
        drop(s);
        db.shutdown().unwrap();
        state
    };
    assert!(want.len() > 10, "{want:?}");

    // The same statements in a process killed with SIGKILL once they are acknowledged.
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "account_crash_child", "--nocapture"])
        .env(CHILD_ENV, dir.path())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !dir.path().join("done").exists() {
        assert!(child.try_wait().unwrap().is_none(), "the child exited");
        assert!(Instant::now() < deadline, "the child did not finish");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let data = dir.path().join("data");
    let db = open(&data);
    let mut s = root(&db);
    assert_eq!(account_state(&mut s), want, "after SIGKILL");
    // Logins use the recovered accounts.
    assert_eq!(
        db.password_hash("u1", "%").as_deref(),
        Some("*77B4A70CEFD76DB9415F36D291E74C110D2738E0")
    );
    assert_eq!(db.password_hash("u8", "%").as_deref(), Some(HASH));
    drop(s);
    db.shutdown().unwrap();

    // From the binlog alone: every group replayed into an empty data directory.
    let replay = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(&data).unwrap() {
        let f = f.unwrap();
        if f.file_name().to_string_lossy().starts_with("binlog") {
            std::fs::copy(f.path(), replay.path().join(f.file_name())).unwrap();
        }
    }
    let db = open(replay.path());
    let mut s = root(&db);
    assert_eq!(account_state(&mut s), want, "replayed from the binlog");
    drop(s);
    db.shutdown().unwrap();
}
