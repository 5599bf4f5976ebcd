//! A private MariaDB instance for cross-checking SQL behaviour, and a minimal text-protocol
//! client for it (handshake without password, COM_QUERY, text result sets).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const MARIADBD: &str = "/usr/sbin/mariadbd";

/// A mariadbd started on a temporary data directory, listening only on a unix socket.
pub struct Server {
    child: Child,
    pub socket: PathBuf,
    /// The data directory.
    #[allow(dead_code)] // read by the tests that look at MariaDB's files
    pub data: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    /// None (with a printed notice) when mariadbd is not installed. Without grant tables.
    pub fn start() -> Option<Server> {
        Self::start_with(&["--skip-grant-tables"])
    }

    /// [`start`](Self::start) with these server options instead of `--skip-grant-tables`.
    #[allow(clippy::zombie_processes)] // the Server owns the child and reaps it on drop
    pub fn start_with(options: &[&str]) -> Option<Server> {
        if !Path::new(MARIADBD).exists() {
            eprintln!("NOTICE: {MARIADBD} not found; skipping the MariaDB cross-check");
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("data");
        let socket = dir.path().join("mysqld.sock");
        let install = Command::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db")
            .arg("--user=root")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run mariadb-install-db");
        assert!(install.success(), "mariadb-install-db failed");
        let child = Command::new(MARIADBD)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg("--skip-networking")
            .args(options)
            .arg("--user=root")
            .arg("--innodb-buffer-pool-size=32M")
            .arg("--innodb-log-file-size=16M")
            .arg("--character-set-server=utf8mb4")
            .arg(format!("--pid-file={}", dir.path().join("pid").display()))
            .arg(format!(
                "--log-error={}",
                dir.path().join("err.log").display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mariadbd");
        let mut child = child;
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if socket.exists() && Client::connect(&socket).is_ok() {
                return Some(Server {
                    child,
                    socket,
                    data,
                    _dir: dir,
                });
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("mariadbd did not come up");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A MariaDB error or a result.
#[derive(Debug)]
pub enum Reply {
    Ok {
        affected: u64,
    },
    /// Rows, and each column's name and type code.
    Rows(Vec<Vec<Option<String>>>, Vec<(String, u8)>),
    Err {
        code: u16,
        message: String,
    },
}

/// Name and type code of a column definition packet.
fn column_def(p: &[u8]) -> (String, u8) {
    let mut i = 0;
    let mut name = String::new();
    for k in 0..6 {
        let l = lenenc(p, &mut i).unwrap_or(0) as usize;
        if k == 4 {
            name = String::from_utf8_lossy(&p[i..i + l]).to_string();
        }
        i += l;
    }
    // Length of the fixed fields, character set (2), column length (4), then the type.
    let _ = lenenc(p, &mut i);
    (name, p[i + 6])
}

pub struct Client {
    s: UnixStream,
    seq: u8,
}

fn lenenc(b: &[u8], i: &mut usize) -> Option<u64> {
    let f = b[*i];
    *i += 1;
    Some(match f {
        0xfb => return None,
        0xfc => {
            let v = u16::from_le_bytes([b[*i], b[*i + 1]]) as u64;
            *i += 2;
            v
        }
        0xfd => {
            let v = u32::from_le_bytes([b[*i], b[*i + 1], b[*i + 2], 0]) as u64;
            *i += 3;
            v
        }
        0xfe => {
            let v = u64::from_le_bytes(b[*i..*i + 8].try_into().unwrap());
            *i += 8;
            v
        }
        x => x as u64,
    })
}

impl Client {
    pub fn connect(path: &Path) -> std::io::Result<Client> {
        let s = UnixStream::connect(path)?;
        s.set_read_timeout(Some(Duration::from_secs(120)))?;
        let mut c = Client { s, seq: 0 };
        let _greeting = c.read_packet()?;
        // HandshakeResponse41: CLIENT_LONG_PASSWORD | PROTOCOL_41 | TRANSACTIONS |
        // SECURE_CONNECTION | MULTI_RESULTS
        let caps: u32 = 0x1 | 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x4;
        let mut p = Vec::new();
        p.extend_from_slice(&caps.to_le_bytes());
        p.extend_from_slice(&(16u32 << 20).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&[0u8; 23]);
        p.extend_from_slice(b"root\0");
        p.push(0); // empty auth response
        c.write_packet(&p)?;
        let r = c.read_packet()?;
        if r.first() == Some(&0xff) {
            return Err(std::io::Error::other(
                String::from_utf8_lossy(&r[9..]).to_string(),
            ));
        }
        Ok(c)
    }

    fn read_packet(&mut self) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let mut h = [0u8; 4];
            self.s.read_exact(&mut h)?;
            let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            self.seq = h[3].wrapping_add(1);
            let mut buf = vec![0u8; len];
            self.s.read_exact(&mut buf)?;
            out.extend_from_slice(&buf);
            if len < 0xff_ffff {
                return Ok(out);
            }
        }
    }

    fn write_packet(&mut self, p: &[u8]) -> std::io::Result<()> {
        let mut h = (p.len() as u32).to_le_bytes();
        h[3] = self.seq;
        self.s.write_all(&h)?;
        self.s.write_all(p)?;
        self.seq = self.seq.wrapping_add(1);
        Ok(())
    }

    /// Sends a query and reads all its results (a CALL's result sets, then its OK): the
    /// first result set or error, else the final result.
    pub fn query(&mut self, sql: &str) -> Reply {
        self.seq = 0;
        let mut p = vec![3u8];
        p.extend_from_slice(sql.as_bytes());
        self.write_packet(&p).expect("write");
        let mut picked: Option<Reply> = None;
        loop {
            let (r, more) = self.read_result();
            let keep = matches!(
                (&picked, &r),
                (None, _) | (Some(Reply::Ok { .. }), Reply::Rows(..) | Reply::Err { .. })
            );
            if keep {
                picked = Some(r);
            }
            if !more {
                return picked.unwrap();
            }
        }
    }

    /// One result and whether another follows (SERVER_MORE_RESULTS_EXISTS).
    fn read_result(&mut self) -> (Reply, bool) {
        let first = self.read_packet().expect("read");
        match first[0] {
            0x00 => {
                let mut i = 1;
                let affected = lenenc(&first, &mut i).unwrap_or(0);
                let _ = lenenc(&first, &mut i);
                let status = u16::from_le_bytes([first[i], first[i + 1]]);
                (Reply::Ok { affected }, status & 0x0008 != 0)
            }
            0xff => {
                let code = u16::from_le_bytes([first[1], first[2]]);
                let message = String::from_utf8_lossy(&first[9..]).to_string();
                (Reply::Err { code, message }, false)
            }
            _ => {
                let mut i = 0;
                let n = lenenc(&first, &mut i).unwrap_or(0);
                let mut columns = Vec::new();
                for _ in 0..n {
                    columns.push(column_def(&self.read_packet().expect("coldef")));
                }
                let eof = self.read_packet().expect("eof");
                assert_eq!(eof[0], 0xfe);
                let mut rows = Vec::new();
                let more;
                loop {
                    let r = self.read_packet().expect("row");
                    if r[0] == 0xfe && r.len() < 9 {
                        more = r.len() >= 5 && u16::from_le_bytes([r[3], r[4]]) & 0x0008 != 0;
                        break;
                    }
                    if r[0] == 0xff {
                        let code = u16::from_le_bytes([r[1], r[2]]);
                        let e = Reply::Err {
                            code,
                            message: String::from_utf8_lossy(&r[9..]).to_string(),
                        };
                        return (e, false);
                    }
                    let mut i = 0;
                    let mut row = Vec::new();
                    for _ in 0..n {
                        match lenenc(&r, &mut i) {
                            None => row.push(None),
                            Some(l) => {
                                let l = l as usize;
                                row.push(Some(String::from_utf8_lossy(&r[i..i + l]).to_string()));
                                i += l;
                            }
                        }
                    }
                    rows.push(row);
                }
                (Reply::Rows(rows, columns), more)
            }
        }
    }
}
