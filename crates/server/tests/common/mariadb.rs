//! A private MariaDB 10.11 for cross-checking onelogd: `mariadb-install-db` on a temporary
//! data directory, then `mariadbd` listening on a unix socket only (by default without
//! grant tables).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const MARIADBD: &str = "/usr/sbin/mariadbd";

/// A running private mariadbd; killed and its directory removed on drop.
pub struct MariaDb {
    child: Child,
    pub socket: PathBuf,
    pub log: PathBuf,
    _tmp: tempfile::TempDir,
}

impl MariaDb {
    /// None, with a printed notice naming `test`, when mariadbd is not installed.
    pub fn start(test: &str) -> Option<MariaDb> {
        MariaDb::start_with(test, &["--skip-grant-tables".to_string()])
    }

    /// [`MariaDb::start`] with other options (`--skip-grant-tables` is not implied: root
    /// logs in over the socket without a password). With a `--port=N` option it also
    /// listens on 127.0.0.1:N.
    pub fn start_with(test: &str, args: &[String]) -> Option<MariaDb> {
        if !Path::new(MARIADBD).exists() {
            eprintln!("SKIPPED {test}: {MARIADBD} is not installed");
            return None;
        }
        let tmp = tempfile::Builder::new()
            .prefix("onelog-mariadb")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        let data = dir.join("data");
        let socket = dir.join("mariadbd.sock");
        let log = dir.join("error.log");
        // Retried on a fresh directory: under load an install has failed once in a while.
        let mut failures = Vec::new();
        for _ in 0..3 {
            let _ = std::fs::remove_dir_all(&data);
            let out = Command::new("mariadb-install-db")
                .arg("--no-defaults")
                .arg(format!("--datadir={}", data.display()))
                .arg("--auth-root-authentication-method=normal")
                .arg("--skip-test-db")
                .arg("--user=root")
                .output()
                .expect("run mariadb-install-db");
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
        let mut child = Command::new(MARIADBD)
            .arg("--no-defaults")
            .arg("--user=root")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", socket.display()))
            .args(if args.iter().any(|a| a.starts_with("--port=")) {
                &["--bind-address=127.0.0.1"][..]
            } else {
                &["--skip-networking"][..]
            })
            .args(args)
            .arg("--innodb-buffer-pool-size=32M")
            .arg("--innodb-log-file-size=16M")
            .arg("--character-set-server=utf8mb4")
            .arg("--collation-server=utf8mb4_general_ci")
            .arg(format!("--pid-file={}", dir.join("mariadbd.pid").display()))
            .arg(format!("--log-error={}", log.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mariadbd");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if socket.exists() && mysql::Conn::new(socket_opts(&socket, None)).is_ok() {
                return Some(MariaDb {
                    child,
                    socket,
                    log,
                    _tmp: tmp,
                });
            }
            if let Some(st) = child.try_wait().unwrap() {
                panic!(
                    "mariadbd exited at start-up ({st}):\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("mariadbd did not start in 60 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    pub fn conn(&self, db: Option<&str>) -> mysql::Conn {
        mysql::Conn::new(socket_opts(&self.socket, db)).expect("connect to mariadbd")
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Rust `mysql` crate options for root over a unix socket.
pub fn socket_opts(socket: &Path, db: Option<&str>) -> mysql::Opts {
    mysql::OptsBuilder::new()
        .socket(Some(socket.to_str().unwrap()))
        .user(Some("root"))
        .db_name(db)
        .into()
}
