//! Disk full while committing: on a small tmpfs, commits that need a new binlog file fail
//! with 1021 (nothing half-written, the server keeps serving); once space is back, commits
//! succeed again without a restart, and everything acknowledged survives a restart.
//! Needs root to mount a tmpfs; skipped with a notice otherwise.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn mount_tmpfs(at: &Path, size: &str) -> Option<Mount> {
    std::fs::create_dir_all(at).ok()?;
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(at)
        .status()
        .ok()?
        .success();
    ok.then(|| Mount(at.to_path_buf()))
}

fn avail_bytes(p: &Path) -> u64 {
    let o = Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(p)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .last()
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn disk_full_fails_commits_cleanly_and_recovers() {
    if !have(MARIADB, "disk_full") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("mnt");
    let Some(_mount) = mount_tmpfs(&mnt, "40m") else {
        eprintln!("disk_full: skipped (cannot mount a tmpfs here)");
        return;
    };
    let mut srv = Server::start_in(tmp.path(), &mnt.join("data"), &["--max-binlog-size=4M"]);
    srv.sql("CREATE DATABASE s; CREATE TABLE s.t (id INT PRIMARY KEY AUTO_INCREMENT, b LONGBLOB)");
    // Leave about 6 MB: room for one more 4 MB binlog file, not two.
    let filler = mnt.join("filler");
    let free = avail_bytes(&mnt);
    std::fs::write(&filler, vec![0u8; (free - (6 << 20)) as usize]).unwrap();

    let insert = "INSERT INTO s.t (b) VALUES (REPEAT('x', 300000))";
    let (mut ok, mut full) = (0, 0);
    for _ in 0..40 {
        let o = srv.mariadb(&["-e", insert], "");
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        if o.status.success() {
            ok += 1;
        } else {
            assert!(err.contains("ERROR 1021"), "unexpected error: {err}");
            full += 1;
            if full == 3 {
                break;
            }
        }
    }
    assert!(full == 3, "the disk never filled up ({ok} inserts)");
    // Reads and the server itself are unaffected.
    assert_eq!(srv.sql("SELECT COUNT(*) FROM s.t").trim(), ok.to_string());

    // Space is back: commits work again, no restart needed.
    std::fs::remove_file(&filler).unwrap();
    srv.sql(insert);
    ok += 1;
    assert_eq!(srv.sql("SELECT COUNT(*) FROM s.t").trim(), ok.to_string());
    srv.stop();
    srv.restart();
    assert_eq!(srv.sql("SELECT COUNT(*) FROM s.t").trim(), ok.to_string());
    srv.assert_no_panic();
    srv.stop();
}

/// The disk fills up while RocksDB flushes a memtable, after the binlog already holds the
/// commits (its file is preallocated): a commit that is in the binlog is never answered
/// with an error. Either it is answered OK, or the server stops (it cannot apply what it
/// logged) and a restart with space again applies it. Every commit answered OK is there
/// after the restart, and nothing answered with an error is.
#[test]
fn disk_full_while_applying_never_fails_a_logged_commit() {
    if !have(MARIADB, "disk_full_while_applying") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("mnt");
    let Some(_mount) = mount_tmpfs(&mnt, "64m") else {
        eprintln!("disk_full_while_applying: skipped (cannot mount a tmpfs here)");
        return;
    };
    // Small memtables flush often; one large preallocated binlog file never needs space.
    let mut srv = Server::start_in(
        tmp.path(),
        &mnt.join("data"),
        &["--max-binlog-size=40M", "--rocksdb-write-buffer-size=1M"],
    );
    srv.sql("CREATE DATABASE s; CREATE TABLE s.t (id INT PRIMARY KEY, b LONGBLOB)");
    let filler = mnt.join("filler");
    let free = avail_bytes(&mnt);
    std::fs::write(&filler, vec![0u8; free.saturating_sub(3 << 20) as usize]).unwrap();

    let mut acked = Vec::new();
    let mut failed = Vec::new();
    let mut stopped = false;
    for id in 0..300 {
        let o = srv.mariadb(
            &[
                "-e",
                &format!("INSERT INTO s.t VALUES ({id}, REPEAT('x', 100000))"),
            ],
            "",
        );
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        if o.status.success() {
            acked.push(id);
            continue;
        }
        // Refused before it reached the log: 1021 (no space for the log) or 1026 (the
        // log is unusable after a failure). Anything else: the server is stopping.
        if !(err.contains("ERROR 1021") || err.contains("ERROR 1026")) {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while srv.is_running() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            assert!(!srv.is_running(), "unexpected error: {err}");
            stopped = true;
            break;
        }
        failed.push(id);
        if failed.len() >= 5 {
            break;
        }
    }
    eprintln!(
        "disk_full_while_applying: {} acknowledged, {} refused, server stopped itself: {stopped}",
        acked.len(),
        failed.len()
    );
    std::fs::remove_file(&filler).unwrap();
    if stopped {
        let log = srv.log_text();
        assert!(
            log.contains("stopping:") && log.contains("a restart applies them"),
            "the server stopped without saying why:\n{log}"
        );
        srv.kill9();
    } else {
        srv.stop();
    }
    srv.restart();
    let ids: Vec<i64> = srv
        .sql("SELECT id FROM s.t ORDER BY id")
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    for id in &acked {
        assert!(ids.contains(id), "acknowledged commit {id} lost");
    }
    for id in &failed {
        assert!(
            !ids.contains(id),
            "commit {id} was answered with an error but survived"
        );
    }
    srv.assert_no_panic();
    srv.stop();
}
