//! `onelog backup --out DIR [--datadir DIR] [connection options]`: asks a running onelogd
//! for a consistent backup of itself (`BACKUP SERVER TO 'DIR'`, RELOAD privilege) and
//! prints the position it holds.
//!
//! The server writes the backup (it owns RocksDB and the binlog; see the engine's
//! `backup.rs`), so DIR must be on a file system the server can write, normally on its
//! own host (table files are hard-linked when DIR is on the data directory's file system).
//! Connection options are the `mariadb` client's: `-S/--socket`, `-h/--host`, `-P/--port`,
//! `-u/--user`, `-p/--password` (or `MYSQL_PWD`). With `--datadir`, the server reached
//! must be the one using that data directory.

use std::path::{Path, PathBuf};

use mysql::prelude::Queryable;
use onelog_binlog::backup_info::{BackupInfo, INFO_FILE};

const USAGE: &str = "usage: onelog backup --out DIR [--datadir DIR] [-S SOCKET | -h HOST -P PORT] \
[-u USER] [-pPASSWORD]
  --out DIR       the backup directory to write (new, or empty)
  --datadir DIR   check that the server reached uses this data directory
  -S, --socket    the server's unix socket (default: TCP)
  -h, --host      default 127.0.0.1;  -P, --port  default 3306
  -u, --user      default root;       -p, --password (also MYSQL_PWD)";

/// How to reach the server, with the `mariadb` client's option names.
#[derive(Clone, Debug, Default)]
pub struct Connect {
    pub socket: Option<String>,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub password: Option<String>,
}

impl Connect {
    /// Takes a connection option at `args[*i]` (and its value), advancing `i`. Ok(false):
    /// not a connection option.
    pub fn take(&mut self, args: &[String], i: &mut usize) -> Result<bool, String> {
        let a = args[*i].as_str();
        // (long name, short name): `--name=v`, `--name v`, `-Xv`, `-X v`.
        let opts: [(&str, &str); 5] = [
            ("socket", "S"),
            ("host", "h"),
            ("port", "P"),
            ("user", "u"),
            ("password", "p"),
        ];
        for (long, short) in opts {
            let value: Option<String> = if let Some(v) = a.strip_prefix(&format!("--{long}=")) {
                Some(v.to_string())
            } else if a == format!("--{long}") || a == format!("-{short}") {
                if long == "password" {
                    // `-p` alone: the value is not the next argument (as in `mariadb`).
                    Some(read_password()?)
                } else {
                    *i += 1;
                    Some(
                        args.get(*i)
                            .cloned()
                            .ok_or_else(|| format!("{a} needs a value"))?,
                    )
                }
            } else {
                a.strip_prefix(&format!("-{short}"))
                    .filter(|v| !v.is_empty() && !a.starts_with("--"))
                    .map(str::to_string)
            };
            let Some(v) = value else { continue };
            match long {
                "socket" => self.socket = Some(v),
                "host" => self.host = Some(v),
                "port" => self.port = Some(v.parse().map_err(|_| format!("bad port '{v}'"))?),
                "user" => self.user = Some(v),
                _ => self.password = Some(v),
            }
            *i += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// Where the connection goes, for messages.
    pub fn target(&self) -> String {
        match &self.socket {
            Some(s) => format!("socket {s}"),
            None => format!(
                "{}:{}",
                self.host.as_deref().unwrap_or("127.0.0.1"),
                self.port.unwrap_or(3306)
            ),
        }
    }

    pub fn connect(&self) -> Result<mysql::Conn, String> {
        let password = self
            .password
            .clone()
            .or_else(|| std::env::var("MYSQL_PWD").ok());
        let mut o = mysql::OptsBuilder::new()
            .user(Some(self.user.clone().unwrap_or_else(|| "root".into())))
            .pass(password)
            .prefer_socket(false);
        o = match &self.socket {
            Some(s) => o.socket(Some(s.clone())),
            None => o
                .ip_or_hostname(Some(
                    self.host.clone().unwrap_or_else(|| "127.0.0.1".into()),
                ))
                .tcp_port(self.port.unwrap_or(3306)),
        };
        mysql::Conn::new(o)
            .map_err(|e| format!("cannot connect to the server at {}: {e}", self.target()))
    }
}

/// A password from standard input (`-p` without a value).
fn read_password() -> Result<String, String> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| format!("reading the password from standard input: {e}"))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

/// `path` made absolute against the current directory (the server runs elsewhere).
fn absolute(path: &Path) -> Result<PathBuf, String> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    Ok(cwd.join(path))
}

/// A directory that exists and holds something.
pub(crate) fn non_empty_dir(path: &Path) -> bool {
    std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_some())
}

/// Entry point of `onelog backup ...`; `args` are the arguments after `backup`.
pub fn main(args: &[String]) -> i32 {
    match run(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("onelog backup: {e}");
            1
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let mut out = None;
    let mut datadir = None;
    let mut conn = Connect::default();
    let mut i = 0;
    while i < args.len() {
        if conn.take(args, &mut i)? {
            continue;
        }
        let a = args[i].as_str();
        let mut value = |name: &str| -> Result<String, String> {
            if let Some(v) = a.strip_prefix(&format!("{name}=")) {
                return Ok(v.to_string());
            }
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        if a == "--out" || a.starts_with("--out=") {
            out = Some(PathBuf::from(value("--out")?));
        } else if a == "--datadir" || a.starts_with("--datadir=") {
            datadir = Some(PathBuf::from(value("--datadir")?));
        } else if a == "--help" {
            println!("{USAGE}");
            return Ok(());
        } else {
            return Err(format!("unknown option {a}\n{USAGE}"));
        }
        i += 1;
    }
    let out = absolute(&out.ok_or_else(|| format!("--out is required\n{USAGE}"))?)?;
    if non_empty_dir(&out) {
        return Err(format!(
            "{} exists and is not empty (a backup needs a new or empty directory)",
            out.display()
        ));
    }
    if out.exists() && !out.is_dir() {
        return Err(format!("{} exists and is not a directory", out.display()));
    }
    let mut c = conn.connect()?;
    if let Some(dir) = &datadir {
        let theirs: Option<String> = c
            .query_first("SELECT @@datadir")
            .map_err(|e| format!("SELECT @@datadir: {e}"))?;
        let theirs = theirs.unwrap_or_default();
        let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        };
        if !same(dir, Path::new(&theirs)) {
            return Err(format!(
                "the server at {} uses the data directory '{theirs}', not {}",
                conn.target(),
                dir.display()
            ));
        }
    }
    let quoted = out
        .to_str()
        .ok_or_else(|| format!("{} is not valid UTF-8", out.display()))?
        .replace('\\', "\\\\")
        .replace('\'', "\\'");
    let row: Option<(String, u64, String)> = c
        .query_first(format!("BACKUP SERVER TO '{quoted}'"))
        .map_err(|e| format!("BACKUP SERVER failed: {e}"))?;
    let (file, pos, gtid) = row.ok_or("BACKUP SERVER returned no position")?;
    // The info file is what makes the directory a backup; the server wrote it last.
    let info = BackupInfo::read(&out).map_err(|e| {
        format!("the server reported a backup, but {INFO_FILE} cannot be read here: {e}")
    })?;
    if info.binlog_file != file || info.binlog_pos != pos {
        return Err(format!(
            "{INFO_FILE} names {}:{}, the server reported {file}:{pos}",
            info.binlog_file, info.binlog_pos
        ));
    }
    println!("backup: {}", out.display());
    println!("binlog position: {file}:{pos}");
    println!("GTID position: {gtid}");
    println!(
        "start it with: onelogd --datadir={} (as a replica: SET GLOBAL gtid_slave_pos = \
         '{gtid}'; CHANGE MASTER TO ..., MASTER_USE_GTID=slave_pos; START SLAVE)",
        out.display()
    );
    Ok(())
}
