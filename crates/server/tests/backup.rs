//! `onelog backup` (`BACKUP SERVER TO 'dir'`) of a running onelogd: taken under a write
//! load, the backup starts as a server holding exactly the transactions up to its GTID
//! position, and provisions a replica that ends identical to the primary. Bad input gets
//! clear errors and leaves nothing that looks like a backup.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use mysql::prelude::Queryable;

/// The `key=value` lines of a backup's `onelog_backup_info`.
fn backup_info(dir: &Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(dir.join("onelog_backup_info"))
        .unwrap_or_else(|e| panic!("{}/onelog_backup_info: {e}", dir.display()));
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Polls until `cond` holds (at most `secs`), with `what` in the failure message.
fn wait_until(secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Once the writer (counting its commits in `done`) is under way, takes `onelog backup`s
/// of `primary` into `dir/backupN` until one ran while the writer committed (on a busy
/// machine the writer may not get to run for a whole backup: then another one, five at
/// most), waits for 100 commits after it and stops the writer. Returns the backup, the
/// tool's output, the commits before it and those during it.
fn backup_during_writes(
    primary: &Server,
    dir: &Path,
    (done, stop, writer): (&AtomicUsize, &AtomicBool, std::thread::JoinHandle<()>),
) -> (std::path::PathBuf, String, usize, usize) {
    wait_until(60, "the writer's first commits", || {
        done.load(Ordering::Relaxed) >= 200
    });
    let datadir = primary.datadir.display().to_string();
    let mut attempt = 0;
    let (bdir, out, before, during) = loop {
        attempt += 1;
        let bdir = dir.join(format!("backup{attempt}"));
        let before = done.load(Ordering::Relaxed);
        let o = run_tool(&[
            "backup",
            "--out",
            bdir.to_str().unwrap(),
            "-S",
            primary.socket.to_str().unwrap(),
            "-u",
            "root",
            "--datadir",
            &datadir,
        ]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "onelog backup failed:\n{out}\n{err}");
        let during = done.load(Ordering::Relaxed) - before;
        if during > 0 || attempt == 5 {
            break (bdir, out, before, during);
        }
    };
    assert!(during > 0, "no commit ran while the backup was taken");
    wait_until(60, "commits after the backup", || {
        done.load(Ordering::Relaxed) >= before + during + 100
    });
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    (bdir, out, before, during)
}

/// A replication account, and table `app.t` with rows 0..10 that the writer updates.
fn setup_app(c: &mut mysql::Conn) {
    for sql in [
        "CREATE USER repl@'%' IDENTIFIED BY 'pw'",
        "GRANT REPLICATION SLAVE ON *.* TO repl@'%'",
        "CREATE DATABASE app",
        "CREATE TABLE app.t (id INT PRIMARY KEY, n INT NOT NULL, note VARCHAR(40), KEY (n))",
    ] {
        c.query_drop(sql).unwrap();
    }
    for j in 0..10 {
        c.query_drop(format!("INSERT INTO app.t VALUES ({j}, 0, 'seed')"))
            .unwrap();
    }
}

/// Makes the server of `rc` a replica of `primary` (its connection `c`) from GTID
/// position `gtid`, waits until it has all of the primary's binlog, checks that the tables
/// are identical and stops it.
fn follow_from(primary: &Server, c: &mut mysql::Conn, rc: &mut mysql::Conn, gtid: &str) {
    rc.query_drop(format!("SET GLOBAL gtid_slave_pos = '{gtid}'"))
        .unwrap();
    rc.query_drop(format!(
        "CHANGE MASTER TO master_host='127.0.0.1', master_port={}, master_user='repl', \
         master_password='pw', master_use_gtid=slave_pos, master_connect_retry=1",
        primary.port
    ))
    .unwrap();
    rc.query_drop("START SLAVE").unwrap();
    let want: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    wait_until(60, "the replica to catch up", || {
        let at: String = rc.query_first("SELECT @@gtid_slave_pos").unwrap().unwrap();
        at == want
    });
    assert_eq!(dump_tables(c), dump_tables(rc));
    rc.query_drop("STOP SLAVE").unwrap();
}

fn seq_of(gtid: &str) -> u64 {
    gtid.rsplit('-').next().unwrap().parse().unwrap()
}

/// Writer transaction `k`: inserts row 1000+k and adds one to row k % 10, so the table
/// tells exactly which of the writer's transactions it holds.
fn writer_txn(c: &mut mysql::Conn, k: usize) -> String {
    let mut t = c.start_transaction(mysql::TxOpts::default()).unwrap();
    t.query_drop(format!(
        "INSERT INTO app.t VALUES ({}, 0, 'w{k}')",
        1000 + k
    ))
    .unwrap();
    t.query_drop(format!("UPDATE app.t SET n = n + 1 WHERE id = {}", k % 10))
        .unwrap();
    t.commit().unwrap();
    c.query_first("SELECT @@last_gtid").unwrap().unwrap()
}

#[test]
fn backup_under_load_starts_and_provisions_a_replica() {
    backup_under_load(&[]);
}

/// With `sync_binlog=0` RocksDB may hold groups whose binlog bytes are not synced yet (and
/// their tail records): the backup syncs before it copies.
#[test]
fn backup_under_load_with_sync_binlog_0() {
    backup_under_load(&["--sync-binlog=0"]);
}

fn backup_under_load(args: &[&str]) {
    let mut args = args.to_vec();
    args.push("--server-id=1");
    let mut primary = Server::start(&args);
    let mut c = primary.conn(None);
    for sql in [
        // Replica settings of the primary's own, which a backup must not carry.
        "CHANGE MASTER TO master_host='127.0.0.1', master_port=1, master_use_gtid=slave_pos",
        "SET GLOBAL gtid_slave_pos = '7-9-5'",
    ] {
        c.query_drop(sql).unwrap();
    }
    setup_app(&mut c);
    // Persist the tables up to here (PURGE flushes the memtables first), so that the
    // backup's checkpoint holds a prefix and the rest comes from its binlog.
    c.query_drop("FLUSH BINARY LOGS").unwrap();
    let active: String = c
        .query_first::<mysql::Row, _>("SHOW MASTER STATUS")
        .unwrap()
        .unwrap()
        .get(0)
        .unwrap();
    c.query_drop(format!("PURGE BINARY LOGS TO '{active}'"))
        .unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let log: Arc<Mutex<Vec<(u64, usize)>>> = Arc::default();
    let writer = {
        let (stop, done, log) = (stop.clone(), done.clone(), log.clone());
        let opts = primary.opts(None);
        std::thread::spawn(move || {
            let mut c = mysql::Conn::new(opts).unwrap();
            let mut k = 0;
            while !stop.load(Ordering::Relaxed) {
                let gtid = writer_txn(&mut c, k);
                log.lock().unwrap().push((seq_of(&gtid), k));
                k += 1;
                done.store(k, Ordering::Relaxed);
                if k % 150 == 0 {
                    c.query_drop("FLUSH BINARY LOGS").unwrap();
                }
                if k % 97 == 0 {
                    c.query_drop(format!("CREATE TABLE app.x{k} (a INT PRIMARY KEY)"))
                        .unwrap();
                    c.query_drop(format!("INSERT INTO app.x{k} VALUES ({k})"))
                        .unwrap();
                }
            }
        })
    };
    let tmp = tempfile::tempdir().unwrap();
    let (bdir, out, before, _) = backup_during_writes(&primary, tmp.path(), (&done, &stop, writer));

    // The backup: a checkpoint, the binlog from its applied position, the info file.
    let info = backup_info(&bdir);
    let gtid = info["gtid_binlog_pos"].clone();
    assert!(out.contains(&format!("GTID position: {gtid}")), "{out}");
    assert!(
        (
            &info["applied_file"],
            info["applied_pos"].parse::<u64>().unwrap()
        ) < (
            &info["binlog_file"],
            info["binlog_pos"].parse::<u64>().unwrap()
        ),
        "the backup's binlog adds nothing to its checkpoint: {info:?}"
    );
    assert!(bdir.join("rocksdb").join("CURRENT").exists());
    assert!(bdir.join(&info["binlog_file"]).exists());
    assert!(primary.datadir.join("master.info").exists());
    assert!(primary.datadir.join("gtid_slave_pos").exists());
    for f in ["master.info", "gtid_slave_pos"] {
        assert!(!bdir.join(f).exists(), "the backup carries {f}");
    }
    assert_eq!(info["gtid_slave_pos"], "7-9-5");

    // Started, it holds exactly the writer's transactions up to its GTID position.
    let rdir = tempfile::tempdir().unwrap();
    let mut replica = Server::start_in(rdir.path(), &bdir, &["--server-id=2"]);
    assert!(
        replica.log_text().contains("recovery replayed"),
        "{}",
        replica.log_text()
    );
    // Started, the directory is a data directory, no longer a backup.
    assert!(!bdir.join("onelog_backup_info").exists());
    assert!(bdir.join("onelog_backup_info.started").exists());
    let again = tmp.path().join("again");
    let o = run_tool(&[
        "restore",
        "--backup",
        bdir.to_str().unwrap(),
        "--until-gtid",
        &gtid,
        "--datadir",
        again.to_str().unwrap(),
    ]);
    let (so, se) = text(&o);
    assert!(
        !o.status.success() && se.contains("was started as a server"),
        "{so}{se}"
    );
    assert!(!again.exists());
    let mut rc = replica.conn(None);
    let pos: String = rc.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    assert_eq!(pos, gtid);
    let upto = seq_of(&gtid);
    let kept: Vec<usize> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|(s, _)| *s <= upto)
        .map(|(_, k)| *k)
        .collect();
    let n = kept.len();
    assert!(
        n >= before,
        "the backup lacks commits made before it started"
    );
    assert_eq!(kept, (0..n).collect::<Vec<_>>());
    let rows: Vec<(i64, i64)> = rc.query("SELECT id, n FROM app.t ORDER BY id").unwrap();
    let mut want: Vec<(i64, i64)> = (0..10)
        .map(|j| (j, (0..n).filter(|k| k % 10 == j as usize).count() as i64))
        .collect();
    want.extend((0..n).map(|k| (1000 + k as i64, 0)));
    assert_eq!(rows, want, "the backup is not the state at {gtid}");

    // As a replica from that position it ends identical to the primary.
    follow_from(&primary, &mut c, &mut rc, &gtid);
    replica.stop();
    primary.stop();
}

/// `--binlog-storage=file`: the backup is taken at a point where no group commits, so it
/// needs no replay; started, it holds a prefix of the writer's transactions matching its
/// GTID position, and provisions a replica that ends identical to the primary.
#[test]
fn file_mode_backup_starts_and_provisions_a_replica() {
    backup_without_replay(&["--binlog-storage=file"], true);
}

/// `--skip-log-bin`: the checkpoint is the whole backup; started, it holds a prefix of the
/// writer's transactions.
#[test]
fn skip_log_bin_backup_starts_with_a_prefix_of_the_commits() {
    backup_without_replay(&["--skip-log-bin"], false);
}

fn backup_without_replay(mode: &[&str], binlog: bool) {
    let mut args = mode.to_vec();
    args.push("--server-id=1");
    let mut primary = Server::start(&args);
    let mut c = primary.conn(None);
    setup_app(&mut c);
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (stop, done) = (stop.clone(), done.clone());
        let opts = primary.opts(None);
        std::thread::spawn(move || {
            let mut c = mysql::Conn::new(opts).unwrap();
            let mut k = 0;
            while !stop.load(Ordering::Relaxed) {
                writer_txn(&mut c, k);
                k += 1;
                done.store(k, Ordering::Relaxed);
            }
        })
    };
    let tmp = tempfile::tempdir().unwrap();
    let (bdir, _, before, during) =
        backup_during_writes(&primary, tmp.path(), (&done, &stop, writer));

    let info = backup_info(&bdir);
    assert!(bdir.join("rocksdb").join("CURRENT").exists());
    if binlog {
        assert!(bdir.join(&info["binlog_file"]).exists(), "{info:?}");
        assert_eq!(
            (&info["applied_file"], &info["applied_pos"]),
            (&info["binlog_file"], &info["binlog_pos"]),
            "a backup without replay applies all of its binlog"
        );
    } else {
        assert_eq!(info["binlog_file"], "", "{info:?}");
        assert_eq!(info["gtid_binlog_pos"], "", "{info:?}");
    }

    // Started in the same mode, it holds the writer's transactions 0..n, whole.
    let rdir = tempfile::tempdir().unwrap();
    let mut rargs = mode.to_vec();
    rargs.push("--server-id=2");
    let mut replica = Server::start_in(rdir.path(), &bdir, &rargs);
    let mut rc = replica.conn(None);
    let ids: Vec<i64> = rc
        .query("SELECT id FROM app.t WHERE id >= 1000 ORDER BY id")
        .unwrap();
    let n = ids.len();
    assert!(
        n >= before,
        "the backup lacks commits made before it: {n} < {before}"
    );
    assert!(n <= before + during, "the backup has commits made after it");
    assert_eq!(ids, (0..n as i64).map(|k| 1000 + k).collect::<Vec<_>>());
    let counts: Vec<(i64, i64)> = rc
        .query("SELECT id, n FROM app.t WHERE id < 10 ORDER BY id")
        .unwrap();
    let want: Vec<(i64, i64)> = (0..10)
        .map(|j| (j, (0..n).filter(|k| k % 10 == j as usize).count() as i64))
        .collect();
    assert_eq!(counts, want, "a transaction is half in the backup");
    if binlog {
        // Its binlog position is the backup's, and a replica from it ends identical.
        let gtid = info["gtid_binlog_pos"].clone();
        let pos: String = rc.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
        assert_eq!(pos, gtid);
        // The seed and setup statements, then one GTID per writer transaction.
        let setup = seq_of(&gtid) as usize - n;
        let primary_seq: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
        assert_eq!(
            seq_of(&primary_seq) as usize - done.load(Ordering::Relaxed),
            setup
        );
        follow_from(&primary, &mut c, &mut rc, &gtid);
    }
    replica.stop();
    primary.stop();
}

#[test]
fn backup_refuses_bad_input_and_leaves_no_backup() {
    let mut srv = Server::start(&[]);
    srv.sql(
        "CREATE DATABASE app; CREATE TABLE app.t (id INT PRIMARY KEY, b LONGBLOB); \
         INSERT INTO app.t VALUES (1, REPEAT('x', 400000)); \
         CREATE USER weak@'%' IDENTIFIED BY 'pw'; GRANT SELECT ON *.* TO weak@'%'",
    );
    let tmp = tempfile::tempdir().unwrap();
    let sock = srv.socket.to_str().unwrap().to_string();
    let backup = |out: &Path, extra: &[&str]| {
        let mut args = vec!["backup", "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = run_tool(&args);
        let (so, se) = text(&o);
        (o.status.success(), format!("{so}{se}"))
    };

    // The out directory exists and is not empty: refused, left as it was.
    let full = tmp.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("keep"), "x").unwrap();
    let (ok, msg) = backup(&full, &["-S", &sock]);
    assert!(!ok && msg.contains("not empty"), "{msg}");
    let left: Vec<_> = std::fs::read_dir(&full).unwrap().collect();
    assert_eq!(left.len(), 1);
    // The statement refuses it too (1086), and a relative path (1004).
    let o = srv.mariadb(
        &["-e", &format!("BACKUP SERVER TO '{}'", full.display())],
        "",
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("ERROR 1086"));
    let o = srv.mariadb(&["-e", "BACKUP SERVER TO 'relative/dir'"], "");
    assert!(String::from_utf8_lossy(&o.stderr).contains("ERROR 1004"));

    // No server there.
    let out = tmp.path().join("nobody");
    let gone = tmp.path().join("no.sock");
    let (ok, msg) = backup(&out, &["-S", gone.to_str().unwrap()]);
    assert!(!ok && msg.contains("cannot connect"), "{msg}");
    assert!(!out.exists());

    // A server, but not the one using --datadir.
    let (ok, msg) = backup(
        &out,
        &["-S", &sock, "--datadir", tmp.path().to_str().unwrap()],
    );
    assert!(!ok && msg.contains("uses the data directory"), "{msg}");
    assert!(!out.exists());

    // An account without RELOAD.
    let (ok, msg) = backup(&out, &["-S", &sock, "-u", "weak", "-ppw"]);
    assert!(
        !ok && msg.contains("1227") && msg.contains("RELOAD"),
        "{msg}"
    );
    assert!(!out.exists());
    // Wrong password.
    let (ok, msg) = backup(&out, &["-S", &sock, "-u", "weak", "-pnot"]);
    assert!(!ok && msg.contains("1045"), "{msg}");

    // The server cannot write there: nothing is left behind.
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let (ok, msg) = backup(&file.join("sub"), &["-S", &sock]);
    assert!(!ok && msg.contains("BACKUP SERVER failed"), "{msg}");

    // Disk full while the backup is written (a small tmpfs; needs root to mount).
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=128k", "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if mounted {
        let out = mnt.join("b");
        let (ok, msg) = backup(&out, &["-S", &sock]);
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&mnt)
            .status();
        assert!(!ok && msg.contains("BACKUP SERVER failed"), "{msg}");
        assert!(!out.exists(), "a failed backup left {}", out.display());
    } else {
        eprintln!("backup_refuses_bad_input: disk-full case skipped (cannot mount a tmpfs)");
    }

    // After all that, a backup into an empty directory works and starts.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (ok, msg) = backup(&empty, &["-S", &sock]);
    assert!(ok, "{msg}");
    let mut b = Server::start_in(tmp.path(), &empty, &[]);
    assert_eq!(b.sql("SELECT LENGTH(b) FROM app.t").trim(), "400000");
    b.stop();
    srv.stop();
}
