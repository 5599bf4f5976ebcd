//! A raw protocol client for the tests that send what no client library sends.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A raw protocol connection (no client library): for requests a library would not send.
pub struct Raw {
    pub s: TcpStream,
    pub seq: u8,
}

impl Raw {
    pub fn connect(port: u16, user: &str) -> Raw {
        Raw::connect_with(port, user, 0, None).0
    }

    /// Logs in (no password) with `caps` added to CLIENT_LONG_PASSWORD | PROTOCOL_41 |
    /// SECURE_CONNECTION | PLUGIN_AUTH, into `db` if given; also returns the login's OK.
    pub fn connect_with(port: u16, user: &str, caps: u32, db: Option<&str>) -> (Raw, Vec<u8>) {
        Raw::connect_ext(port, user, caps, 0, db)
    }

    /// As [`connect_with`](Self::connect_with), also announcing MariaDB extended
    /// capabilities `ext` (bits 32..63 shifted down; the client then does not claim
    /// CLIENT_MYSQL, bit 0, so that they are read).
    pub fn connect_ext(
        port: u16,
        user: &str,
        caps: u32,
        ext: u32,
        db: Option<&str>,
    ) -> (Raw, Vec<u8>) {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut r = Raw { s, seq: 0 };
        let _greeting = r.read();
        let with_db = if db.is_some() { 0x8 } else { 0 };
        let mysql = if ext == 0 { 0x1 } else { 0 };
        let caps: u32 = mysql | 0x200 | 0x8000 | 0x80000 | with_db | caps;
        let mut p = caps.to_le_bytes().to_vec();
        p.extend_from_slice(&(16u32 << 20).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&[0; 19]);
        p.extend_from_slice(&ext.to_le_bytes());
        p.extend_from_slice(user.as_bytes());
        p.push(0);
        p.push(0);
        if let Some(d) = db {
            p.extend_from_slice(d.as_bytes());
            p.push(0);
        }
        p.extend_from_slice(b"mysql_native_password\0");
        r.write(&p);
        let ok = r.read();
        assert_eq!(ok[0], 0, "login failed: {}", String::from_utf8_lossy(&ok));
        (r, ok)
    }

    pub fn write(&mut self, payload: &[u8]) {
        let mut b = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        b.push(self.seq);
        b.extend_from_slice(payload);
        self.s.write_all(&b).unwrap();
        self.seq = self.seq.wrapping_add(1);
    }

    pub fn read(&mut self) -> Vec<u8> {
        let mut h = [0u8; 4];
        self.s.read_exact(&mut h).unwrap();
        self.seq = h[3].wrapping_add(1);
        let n = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        let mut b = vec![0; n];
        self.s.read_exact(&mut b).unwrap();
        b
    }

    pub fn command(&mut self, payload: &[u8]) -> Vec<u8> {
        self.seq = 0;
        self.write(payload);
        self.read()
    }

    pub fn query(&mut self, sql: &str) {
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        let r = self.command(&p);
        assert_eq!(r[0], 0, "{sql}: {}", String::from_utf8_lossy(&r));
    }
}

/// (code, message) of an ERR packet.
pub fn err_of(p: &[u8]) -> (u16, String) {
    assert_eq!(p[0], 0xff, "not an error: {p:?}");
    let code = u16::from_le_bytes([p[1], p[2]]);
    (code, String::from_utf8_lossy(&p[9..]).into_owned())
}

/// A COM_BINLOG_DUMP packet.
pub fn dump_packet(pos: u32, flags: u16, server_id: u32, file: &str) -> Vec<u8> {
    let mut p = vec![0x12];
    p.extend_from_slice(&pos.to_le_bytes());
    p.extend_from_slice(&flags.to_le_bytes());
    p.extend_from_slice(&server_id.to_le_bytes());
    p.extend_from_slice(file.as_bytes());
    p
}
