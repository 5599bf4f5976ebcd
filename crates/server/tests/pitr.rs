//! Point-in-time recovery from a backup: rows, a backup, more commits, a `DELETE` by
//! mistake, more commits. `onelog restore --until-gtid` / `--until-time` (the backup plus
//! the primary's binlog, cut before the DELETE) starts as a server with exactly the
//! deleted rows back and nothing committed after the DELETE, and goes on committing after
//! the restored GTID; so does the classic route, `mariadb-binlog --stop-position` /
//! `--stop-datetime` piped into `mariadb` against a server started from the backup. Bad
//! input gets clear errors and creates nothing.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::*;
use mysql::prelude::Queryable;

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn info_value(dir: &Path, key: &str) -> String {
    let text = std::fs::read_to_string(dir.join("onelog_backup_info")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {text}"))
        .to_string()
}

fn query_str(c: &mut mysql::Conn, sql: &str) -> String {
    c.query_first::<String, _>(sql).unwrap().unwrap_or_default()
}

/// What the scenario left to check against.
struct Scenario {
    primary: Server,
    _tmp: tempfile::TempDir,
    backup: PathBuf,
    /// The tables just before the DELETE.
    before_delete: String,
    /// The last GTID before the DELETE, and its commit time ('YYYY-MM-DD HH:MM:SS').
    last_good: String,
    last_good_time: String,
    /// Where the DELETE's group starts in the binlog file the backup ends in.
    delete_pos: u64,
    /// The DELETE's time: the first second after `last_good_time`.
    delete_time: String,
}

/// Rows 1..=20, a backup, rows 21..=30 and an update (good), a DELETE of rows 1..=15 by
/// mistake in a later second, then more commits (one in a new binlog file).
fn scenario() -> Scenario {
    let primary = Server::start(&["--server-id=1"]);
    let mut c = primary.conn(None);
    c.query_drop("CREATE DATABASE app").unwrap();
    c.query_drop("CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(20), n INT, KEY (v))")
        .unwrap();
    for i in 1..=20 {
        c.query_drop(format!("INSERT INTO app.t VALUES ({i}, 'row{i}', {i})"))
            .unwrap();
        if i == 10 {
            // The tables so far go into RocksDB's files (PURGE flushes first): the
            // backup's checkpoint starts there, after the purged file.
            c.query_drop("FLUSH BINARY LOGS").unwrap();
            let active: String = c
                .query_first::<mysql::Row, _>("SHOW MASTER STATUS")
                .unwrap()
                .unwrap()
                .get(0)
                .unwrap();
            c.query_drop(format!("PURGE BINARY LOGS TO '{active}'"))
                .unwrap();
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let backup = tmp.path().join("backup");
    let o = run_tool(&[
        "backup",
        "--out",
        backup.to_str().unwrap(),
        "-S",
        primary.socket.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    for i in 21..=30 {
        c.query_drop(format!("INSERT INTO app.t VALUES ({i}, 'row{i}', {i})"))
            .unwrap();
    }
    c.query_drop("CREATE TABLE app.u (a INT PRIMARY KEY)")
        .unwrap();
    c.query_drop("UPDATE app.t SET n = n * 100 WHERE id % 3 = 0")
        .unwrap();
    let last_good = query_str(&mut c, "SELECT @@last_gtid");
    let last_good_time = query_str(&mut c, "SELECT CAST(NOW() AS CHAR)");
    let before_delete = dump_tables(&mut c);
    let delete_pos: u64 = c
        .query_first::<mysql::Row, _>("SHOW MASTER STATUS")
        .unwrap()
        .unwrap()
        .get(1)
        .unwrap();
    // The DELETE goes into a later second than every good commit.
    let deadline = Instant::now() + Duration::from_secs(5);
    let delete_time = loop {
        let now = query_str(&mut c, "SELECT CAST(NOW() AS CHAR)");
        if now > last_good_time {
            break now;
        }
        assert!(Instant::now() < deadline, "the clock does not move");
        std::thread::sleep(Duration::from_millis(20));
    };
    c.query_drop("DELETE FROM app.t WHERE id <= 15").unwrap();
    c.query_drop("INSERT INTO app.t VALUES (31, 'after', 31)")
        .unwrap();
    c.query_drop("FLUSH BINARY LOGS").unwrap();
    c.query_drop("INSERT INTO app.u VALUES (1)").unwrap();
    c.query_drop("UPDATE app.t SET v = 'late' WHERE id = 20")
        .unwrap();
    Scenario {
        primary,
        _tmp: tmp,
        backup,
        before_delete,
        last_good,
        last_good_time,
        delete_pos,
        delete_time,
    }
}

/// Starts a server on `datadir`, checks it holds `want`, then commits once more.
fn check_restored(datadir: &Path, want: &str, gtid: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(dir.path(), datadir, &["--server-id=1"]);
    let mut c = s.conn(None);
    assert_eq!(dump_tables(&mut c), want);
    assert_eq!(query_str(&mut c, "SELECT @@gtid_binlog_pos"), gtid);
    // It goes on from there.
    c.query_drop("INSERT INTO app.t VALUES (99, 'new', 99)")
        .unwrap();
    let (d, srv, seq) = {
        let p: Vec<u64> = gtid.split('-').map(|x| x.parse().unwrap()).collect();
        (p[0], p[1], p[2])
    };
    assert_eq!(
        query_str(&mut c, "SELECT @@gtid_binlog_pos"),
        format!("{d}-{srv}-{}", seq + 1)
    );
    s.stop();
    s.restart();
    let mut c = s.conn(None);
    assert_eq!(query_str(&mut c, "SELECT n FROM app.t WHERE id = 99"), "99");
    s.stop();
}

#[test]
fn restore_until_gtid_and_until_time_undo_a_mistaken_delete() {
    let sc = scenario();
    let tmp = tempfile::tempdir().unwrap();
    let binlogs = sc.primary.datadir.to_str().unwrap();
    let backup = sc.backup.to_str().unwrap();

    let by_gtid = tmp.path().join("by-gtid");
    let o = run_tool(&[
        "restore",
        "--backup",
        backup,
        "--binlogs",
        binlogs,
        "--until-gtid",
        &sc.last_good,
        "--datadir",
        by_gtid.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("GTID position: {}", sc.last_good)),
        "{}",
        text(&o)
    );
    check_restored(&by_gtid, &sc.before_delete, &sc.last_good);

    let by_time = tmp.path().join("by-time");
    let o = run_tool(&[
        "restore",
        "--backup",
        backup,
        "--binlogs",
        binlogs,
        "--until-time",
        &sc.last_good_time,
        "--datadir",
        by_time.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    check_restored(&by_time, &sc.before_delete, &sc.last_good);

    // Up to the last commit: everything, the second binlog file included.
    let mut c = sc.primary.conn(None);
    let all = dump_tables(&mut c);
    let last = query_str(&mut c, "SELECT @@gtid_binlog_pos");
    let latest = tmp.path().join("latest");
    let o = run_tool(&[
        "restore",
        "--backup",
        backup,
        "--binlogs",
        binlogs,
        "--until-gtid",
        &last,
        "--datadir",
        latest.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    check_restored(&latest, &all, &last);
}

#[test]
fn mariadb_binlog_replays_into_a_server_started_from_a_backup() {
    if !have("mariadb-binlog", "mariadb_binlog_replays") || !have(MARIADB, "mariadb_binlog") {
        return;
    }
    let sc = scenario();
    let tmp = tempfile::tempdir().unwrap();
    // The primary's binlog as classic files, numbered from 1.
    let export = tmp.path().join("export");
    let o = run_tool(&[
        "binlog",
        "export",
        "--datadir",
        sc.primary.datadir.to_str().unwrap(),
        "--out",
        export.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let file = info_value(&sc.backup, "binlog_file");
    let number = |name: &str| -> Option<u32> { name.strip_prefix("binlog-")?.parse().ok() };
    let first = std::fs::read_dir(&sc.primary.datadir)
        .unwrap()
        .filter_map(|f| number(&f.unwrap().file_name().to_string_lossy()))
        .min()
        .unwrap();
    let classic = export.join(format!(
        "mariadb-bin.{:06}",
        number(&file).unwrap() - first + 1
    ));
    let start = info_value(&sc.backup, "binlog_pos");

    for (name, stop) in [
        (
            "stop-position",
            format!("--stop-position={}", sc.delete_pos),
        ),
        (
            "stop-datetime",
            format!("--stop-datetime={}", sc.delete_time),
        ),
    ] {
        // A server started from a copy of the backup.
        let datadir = tmp.path().join(name);
        let ok = Command::new("cp")
            .arg("-a")
            .arg(&sc.backup)
            .arg(&datadir)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let dir = tempfile::tempdir().unwrap();
        let mut s = Server::start_in(dir.path(), &datadir, &["--server-id=2"]);
        let events = Command::new("mariadb-binlog")
            .env("TZ", "UTC")
            .arg(format!("--start-position={start}"))
            .arg(&stop)
            .arg(&classic)
            .output()
            .unwrap();
        assert!(events.status.success(), "{}", text(&events));
        let sql = String::from_utf8_lossy(&events.stdout).into_owned();
        assert!(sql.contains("BINLOG '"), "no row events to replay:\n{sql}");
        let o = s.mariadb(&[], &sql);
        assert!(o.status.success(), "{name}: {}", text(&o));
        let mut c = s.conn(None);
        assert_eq!(dump_tables(&mut c), sc.before_delete, "{name}");
        // The replayed transactions keep their GTIDs (SET SESSION server_id, gtid_seq_no).
        assert_eq!(query_str(&mut c, "SELECT @@gtid_binlog_pos"), sc.last_good);
        s.stop();
    }
}

#[test]
fn restore_refuses_bad_input_and_creates_nothing() {
    let sc = scenario();
    let tmp = tempfile::tempdir().unwrap();
    let backup = sc.backup.to_str().unwrap();
    let binlogs = sc.primary.datadir.to_str().unwrap();
    let new = tmp.path().join("new");
    let restore = |extra: &[&str]| {
        let mut args = vec!["restore"];
        args.extend_from_slice(extra);
        let o = run_tool(&args);
        (o.status.success(), text(&o))
    };
    let nd = new.to_str().unwrap();

    // A GTID that is in neither the backup nor the binlogs.
    let (ok, msg) = restore(&[
        "--backup",
        backup,
        "--binlogs",
        binlogs,
        "--until-gtid",
        "0-1-9999",
        "--datadir",
        nd,
    ]);
    assert!(!ok && msg.contains("0-1-9999 is not in"), "{msg}");
    assert!(!new.exists());
    // One the backup's checkpoint is already past.
    let (ok, msg) = restore(&[
        "--backup",
        backup,
        "--binlogs",
        binlogs,
        "--until-gtid",
        "0-1-2",
        "--datadir",
        nd,
    ]);
    assert!(!ok && msg.contains("before the backup"), "{msg}");
    // A time before the backup.
    let (ok, msg) = restore(&[
        "--backup",
        backup,
        "--binlogs",
        binlogs,
        "--until-time",
        "2001-01-01 00:00:00",
        "--datadir",
        nd,
    ]);
    assert!(!ok && msg.contains("before the backup"), "{msg}");
    assert!(!new.exists());
    // Malformed values.
    let (ok, msg) = restore(&[
        "--backup",
        backup,
        "--until-time",
        "yesterday",
        "--datadir",
        nd,
    ]);
    assert!(!ok && msg.contains("YYYY-MM-DD HH:MM:SS"), "{msg}");
    let (ok, msg) = restore(&["--backup", backup, "--until-gtid", "x", "--datadir", nd]);
    assert!(!ok && msg.contains("not a GTID"), "{msg}");

    // --datadir exists.
    let (ok, msg) = restore(&[
        "--backup",
        backup,
        "--binlogs",
        binlogs,
        "--until-gtid",
        &sc.last_good,
        "--datadir",
        binlogs,
    ]);
    assert!(!ok && msg.contains("exists"), "{msg}");

    // Not a (complete) backup.
    let (ok, msg) = restore(&[
        "--backup",
        binlogs,
        "--binlogs",
        binlogs,
        "--until-gtid",
        &sc.last_good,
        "--datadir",
        nd,
    ]);
    assert!(!ok && msg.contains("not a complete backup"), "{msg}");

    // Binlogs that do not continue the backup: another server's, and a gap (the files
    // after the backup's end purged).
    let mut other = Server::start(&["--server-id=1"]);
    other
        .sql("CREATE DATABASE x; CREATE TABLE x.t (a INT PRIMARY KEY); INSERT INTO x.t VALUES (1)");
    let (ok, msg) = restore(&[
        "--backup",
        backup,
        "--binlogs",
        other.datadir.to_str().unwrap(),
        "--until-gtid",
        &sc.last_good,
        "--datadir",
        nd,
    ]);
    assert!(!ok && msg.contains("do not continue the backup"), "{msg}");
    assert!(!new.exists());
    other.stop();
    let mut c = sc.primary.conn(None);
    c.query_drop("FLUSH BINARY LOGS").unwrap();
    c.query_drop("INSERT INTO app.u VALUES (2)").unwrap();
    c.query_drop("FLUSH BINARY LOGS").unwrap();
    let active: String = c
        .query_first::<mysql::Row, _>("SHOW MASTER STATUS")
        .unwrap()
        .unwrap()
        .get(0)
        .unwrap();
    c.query_drop(format!("PURGE BINARY LOGS TO '{active}'"))
        .unwrap();
    let last = query_str(&mut c, "SELECT @@gtid_binlog_pos");
    let (ok, msg) = restore(&[
        "--backup",
        backup,
        "--binlogs",
        binlogs,
        "--until-gtid",
        &last,
        "--datadir",
        nd,
    ]);
    assert!(
        !ok && msg.contains("do not continue the backup") && msg.contains("missing"),
        "{msg}"
    );
    assert!(!new.exists());
}
