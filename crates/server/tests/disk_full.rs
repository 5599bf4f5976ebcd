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
