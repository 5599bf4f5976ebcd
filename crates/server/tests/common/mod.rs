//! Shared helpers for the server integration tests: start the real `onelogd` binary on a
//! temporary data directory, run real client programs against it, stop or kill it.
#![allow(dead_code)]

pub mod clients;
pub mod mariadb;
pub mod raw;
pub mod replica;

use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const ONELOGD: &str = env!("CARGO_BIN_EXE_onelogd");
pub const MARIADB: &str = "/usr/bin/mariadb";
pub const PYTHON: &str = "/usr/bin/python3";

/// A port nobody listens on right now (the kernel picks it; start-up retries on a race),
/// never one this test process handed out before. Tests run in parallel and kill and
/// restart servers: a port freed by a killed server must not go to another test's server,
/// or a client (or a replica) still pointed at the old one reaches the wrong server.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap();
    loop {
        let port = TcpListener::bind(("127.0.0.1", 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// The `onelog` tools binary, built beside onelogd (`cargo build --release --workspace
/// --bins`, which `make test` runs first).
pub fn onelog_tool() -> PathBuf {
    let p = Path::new(ONELOGD).with_file_name("onelog");
    assert!(
        p.exists(),
        "{} is missing: build it with cargo build --release --workspace --bins",
        p.display()
    );
    p
}

/// Runs `onelog args...` and returns its output.
pub fn run_tool(args: &[&str]) -> Output {
    Command::new(onelog_tool())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run onelog")
}

/// True if `prog` exists; otherwise prints a notice that the test is skipped.
pub fn have(prog: &str, test: &str) -> bool {
    let ok = if prog.contains('/') {
        Path::new(prog).exists()
    } else {
        Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {prog}"))
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if !ok {
        eprintln!("SKIPPED {test}: client program '{prog}' is not installed");
    }
    ok
}

/// True if /usr/bin/python3 can import `module`; otherwise prints a skip notice.
pub fn have_python_module(module: &str, test: &str) -> bool {
    if !have(PYTHON, test) {
        return false;
    }
    let ok = Command::new(PYTHON)
        .arg("-c")
        .arg(format!("import {module}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("SKIPPED {test}: python module '{module}' is not installed");
    }
    ok
}

/// Builds the benchmark's fsync-delay shim (`crates/tools/shim`) into `dir`; None, with a
/// notice naming `test`, without a C compiler.
pub fn build_shim(dir: &Path, test: &str) -> Option<PathBuf> {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/shim/fsync_delay.c");
    let out = dir.join("fsync_delay.so");
    let ok = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&out)
        .arg(src)
        .arg("-ldl")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP {test}: no C compiler to build the fsync shim");
    }
    ok.then_some(out)
}

/// The virtualenv `scripts/install-deps.sh` makes over /usr/bin/python3 for PyPI-only
/// modules (python-mysql-replication); it sees Debian's Python packages too.
pub fn pyenv_python() -> PathBuf {
    let home = std::env::var_os("HOME").unwrap_or_default();
    PathBuf::from(home).join(".cache/onelog/pyenv/bin/python")
}

/// The interpreter that can import `module`: the project's virtualenv, else
/// /usr/bin/python3; None (with a skip notice) when neither can.
pub fn python_with(module: &str, test: &str) -> Option<String> {
    let venv = pyenv_python();
    for py in [venv.to_string_lossy().into_owned(), PYTHON.to_string()] {
        let ok = Path::new(&py).exists()
            && Command::new(&py)
                .arg("-c")
                .arg(format!("import {module}"))
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false);
        if ok {
            return Some(py);
        }
    }
    eprintln!(
        "SKIPPED {test}: python module '{module}' is not installed (scripts/install-deps.sh \
         installs it into {})",
        venv.display()
    );
    None
}

/// A running `onelogd`.
pub struct Server {
    pub dir: PathBuf,
    pub datadir: PathBuf,
    pub socket: PathBuf,
    pub port: u16,
    pub args: Vec<String>,
    /// Environment variables of the server process (e.g. LD_PRELOAD).
    pub env: Vec<(String, String)>,
    pub log: PathBuf,
    child: Option<Child>,
    _tmp: Option<tempfile::TempDir>,
}

impl Server {
    /// Starts onelogd on a fresh temporary datadir with extra `args`.
    pub fn start(args: &[&str]) -> Server {
        Server::start_with_env(args, &[])
    }

    /// Like [`Server::start`], with extra environment variables for the server process.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Server {
        let tmp = tempfile::Builder::new()
            .prefix("onelog-srv")
            .tempdir()
            .unwrap();
        let dir = tmp.path().to_path_buf();
        let mut s = Server::new(&dir, &dir.join("data"), args, env);
        s._tmp = Some(tmp);
        s.spawn();
        s
    }

    /// Starts onelogd with its datadir at `datadir`; the socket and log go into `dir`.
    pub fn start_in(dir: &Path, datadir: &Path, args: &[&str]) -> Server {
        let mut s = Server::new(dir, datadir, args, &[]);
        s.spawn();
        s
    }

    /// Like [`Server::start_in`], with extra environment variables for the server process.
    pub fn start_in_with_env(
        dir: &Path,
        datadir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        let mut s = Server::new(dir, datadir, args, env);
        s.spawn();
        s
    }

    fn new(dir: &Path, datadir: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        Server {
            dir: dir.to_path_buf(),
            datadir: datadir.to_path_buf(),
            socket: dir.join("onelogd.sock"),
            port: 0,
            args: args.iter().map(|s| s.to_string()).collect(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            log: dir.join("onelogd.err"),
            child: None,
            _tmp: None,
        }
    }

    fn spawn(&mut self) {
        assert!(self.child.is_none());
        for _ in 0..5 {
            self.port = free_port();
            // The log and the socket file outlive a killed server: only this start's own
            // "ready" line says that the server on the port is this one.
            let log_start = self.log_text().len();
            let log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.log)
                .unwrap();
            let mut cmd = Command::new(ONELOGD);
            cmd.arg(format!("--datadir={}", self.datadir.display()))
                .arg(format!("--port={}", self.port))
                .arg(format!("--socket={}", self.socket.display()))
                .args(&self.args)
                .envs(self.env.iter().map(|(k, v)| (k, v)))
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log);
            let mut child = cmd.spawn().expect("spawn onelogd");
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                if let Some(st) = child.try_wait().unwrap() {
                    let log = self.log_text();
                    if log.contains("can't bind") {
                        break; // port race: try another one
                    }
                    panic!("onelogd exited at start-up ({st}):\n{log}");
                }
                let ready = self
                    .log_text()
                    .get(log_start..)
                    .is_some_and(|l| l.contains("ready for connections"));
                if ready && TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                    self.child = Some(child);
                    return;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    panic!("onelogd did not start in 60 s:\n{}", self.log_text());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("could not start onelogd:\n{}", self.log_text());
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("server running").id()
    }

    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => c.try_wait().unwrap().is_none(),
            None => false,
        }
    }

    /// Everything the server wrote to stdout/stderr so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Panics if the server log mentions a panic.
    pub fn assert_no_panic(&self) {
        let log = self.log_text();
        assert!(!log.contains("panicked"), "onelogd panicked:\n{log}");
    }

    /// Clean shutdown with SIGTERM; asserts a zero exit status and no panics.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            unsafe {
                libc::kill(c.id() as i32, libc::SIGTERM);
            }
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                if let Some(st) = c.try_wait().unwrap() {
                    assert!(
                        st.success(),
                        "onelogd exit status {st}:\n{}",
                        self.log_text()
                    );
                    break;
                }
                if Instant::now() > deadline {
                    let _ = c.kill();
                    let _ = c.wait();
                    panic!("onelogd did not stop in 60 s:\n{}", self.log_text());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        self.assert_no_panic();
    }

    /// SIGKILL, no cleanup at all.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_file(&self.socket);
    }

    /// Starts the server again on the same datadir (with a new port).
    pub fn restart(&mut self) {
        self.spawn();
    }

    pub fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:{}", self.port)
    }

    /// Rust `mysql` crate options for TCP as root.
    pub fn opts(&self, db: Option<&str>) -> mysql::Opts {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(self.port)
            .user(Some("root"))
            .db_name(db)
            .prefer_socket(false)
            .into()
    }

    pub fn conn(&self, db: Option<&str>) -> mysql::Conn {
        mysql::Conn::new(self.opts(db))
            .unwrap_or_else(|e| panic!("connect: {e}\nserver log:\n{}", self.log_text()))
    }

    /// Runs `mariadb` over the unix socket with `args`, feeding `stdin`.
    pub fn mariadb(&self, args: &[&str], stdin: &str) -> Output {
        let mut all = vec![
            "--no-defaults".to_string(),
            format!("--socket={}", self.socket.display()),
            "-uroot".to_string(),
        ];
        all.extend(args.iter().map(|s| s.to_string()));
        run_with_stdin(MARIADB, &all, stdin)
    }

    /// Runs `mariadb` over TCP with `args`, feeding `stdin`.
    pub fn mariadb_tcp(&self, args: &[&str], stdin: &str) -> Output {
        let mut all = vec![
            "--no-defaults".to_string(),
            "--protocol=tcp".to_string(),
            "-h127.0.0.1".to_string(),
            format!("-P{}", self.port),
        ];
        all.extend(args.iter().map(|s| s.to_string()));
        run_with_stdin(MARIADB, &all, stdin)
    }

    /// Runs one statement through `mariadb -N -B` over the socket, returns stdout; panics
    /// on failure.
    pub fn sql(&self, sql: &str) -> String {
        let o = self.mariadb(&["-N", "-B", "-e", sql], "");
        assert!(
            o.status.success(),
            "mariadb -e {sql:?} failed: {}\nserver log:\n{}",
            String::from_utf8_lossy(&o.stderr),
            self.log_text()
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The value of a global status variable.
    pub fn status_var(&self, name: &str) -> u64 {
        let out = self.sql(&format!("SHOW GLOBAL STATUS LIKE '{name}'"));
        let v = out
            .split_whitespace()
            .nth(1)
            .unwrap_or_else(|| panic!("no status variable {name}: {out:?}"));
        v.parse().unwrap()
    }

    /// `SELECT * FROM t ORDER BY 1..n` for every table of every user database, as text.
    pub fn dump_tables(&self) -> String {
        let mut c = self.conn(None);
        dump_tables(&mut c)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Every user table's contents in a canonical text form.
pub fn dump_tables(c: &mut mysql::Conn) -> String {
    use mysql::prelude::Queryable;
    let dbs: Vec<String> = c.query("SHOW DATABASES").unwrap();
    let mut out = String::new();
    for db in dbs {
        if matches!(
            db.as_str(),
            "information_schema" | "mysql" | "performance_schema" | "sys"
        ) {
            continue;
        }
        let tables: Vec<String> = c.query(format!("SHOW TABLES FROM `{db}`")).unwrap();
        for t in tables {
            let rows: Vec<mysql::Row> = c.query(format!("SELECT * FROM `{db}`.`{t}`")).unwrap();
            let ncols = rows.first().map(|r| r.len()).unwrap_or(0);
            let order: Vec<String> = (1..=ncols.max(1)).map(|i| i.to_string()).collect();
            let rows: Vec<mysql::Row> = c
                .query(format!(
                    "SELECT * FROM `{db}`.`{t}` ORDER BY {}",
                    order.join(",")
                ))
                .unwrap();
            out.push_str(&format!("== {db}.{t} ({} rows)\n", rows.len()));
            for r in rows {
                let vals: Vec<String> = r.unwrap().into_iter().map(|v| format!("{v:?}")).collect();
                out.push_str(&vals.join("|"));
                out.push('\n');
            }
        }
    }
    out
}

pub fn run_with_stdin(prog: &str, args: &[String], stdin: &str) -> Output {
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {prog}: {e}"));
    let mut si = child.stdin.take().unwrap();
    let input = stdin.as_bytes().to_vec();
    let w = std::thread::spawn(move || {
        let _ = si.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    w.join().unwrap();
    out
}

/// Runs a program with a timeout, returns (status ok, stdout, stderr).
pub fn run(prog: &str, args: &[String], timeout: Duration) -> (bool, String, String) {
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {prog}: {e}"));
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let t2 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let ok = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st.success();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (ok, t1.join().unwrap(), t2.join().unwrap())
}

/// Copies the binlog files of `from` into `to` under the names an engine-mode datadir
/// uses (`binlog-000000`, ...): engine mode keeps MariaDB event streams in preallocated
/// files named that way, file mode writes `binlog.000001`, ... plus `binlog.index`; the
/// events are the same, so an engine-mode server replays either.
pub fn copy_binlogs(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(from)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.strip_prefix("binlog-")
                .or_else(|| n.strip_prefix("binlog."))
                .is_some_and(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    names.sort_by_key(|n| n[7..].parse::<u64>().unwrap());
    assert!(!names.is_empty(), "no binlog files in {from:?}");
    for (i, name) in names.iter().enumerate() {
        // The logs may be preallocated sparse files: keep the holes.
        let st = std::process::Command::new("cp")
            .arg("--sparse=always")
            .arg(from.join(name))
            .arg(to.join(format!("binlog-{i:06}")))
            .status()
            .unwrap();
        assert!(st.success());
    }
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    File::create(&p)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    p
}
