//! The client side of the protocol, as much as a replica needs: connect and log in with
//! `mysql_native_password` (following an auth switch), run text queries, send commands,
//! and read a binlog dump stream.
//!
//! Replies to a query: an OK packet, an ERR packet, or a text result set (column count,
//! column definitions, EOF, rows of length-encoded strings or 0xFB for NULL, EOF). The
//! client does not announce CLIENT_DEPRECATE_EOF. For TLS ([`Client::login_with`]) it sends
//! the SSLRequest packet (`flags u32 | max_packet u32 | charset u8 | 23 zero bytes`, with
//! CLIENT_SSL) after the server's handshake, lets the caller switch the stream to TLS, and
//! sends the real handshake response inside it (the next sequence id).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use onelog_types::SqlError;

use crate::codec::{put_null_str, put_u32, Reader};
use crate::error::ProtocolError;
use crate::handshake::{capability as caps, native_password_token, NATIVE_PASSWORD_PLUGIN};
use crate::packet::PacketStream;

/// What can go wrong on the client side.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// The server answered with an error.
    #[error("{0}")]
    Server(SqlError),
}

impl From<std::io::Error> for ClientError {
    fn from(e: std::io::Error) -> Self {
        ClientError::Protocol(ProtocolError::Io(e))
    }
}

pub type ClientResult<T> = std::result::Result<T, ClientError>;

/// A text result set: rows of optional byte strings.
pub type Rows = Vec<Vec<Option<Vec<u8>>>>;

/// One packet of a binlog dump.
#[derive(Debug)]
pub enum DumpPacket {
    /// An event (the packet without its leading 0x00).
    Event(Vec<u8>),
    /// The end of a non-blocking dump.
    Eof,
}

/// Decodes an ERR packet (`0xff | code u16 | '#' sqlstate[5] | message`).
pub fn decode_err(p: &[u8]) -> SqlError {
    let code = if p.len() >= 3 {
        u16::from_le_bytes([p[1], p[2]])
    } else {
        0
    };
    let rest = p.get(3..).unwrap_or_default();
    let msg = match rest.first() {
        Some(b'#') if rest.len() >= 6 => &rest[6..],
        _ => rest,
    };
    SqlError::from_code(code, String::from_utf8_lossy(msg).into_owned())
}

/// A logged-in connection.
pub struct Client<S> {
    ps: PacketStream<S>,
    /// The server's version string (`5.5.5-10.11.x-MariaDB` for MariaDB).
    pub server_version: String,
    pub connection_id: u32,
    /// The dump carries the semi-sync header (the client set `@rpl_semi_sync_slave`).
    semi_sync: bool,
    /// The last event read asked for a semi-sync ACK.
    needs_ack: bool,
}

impl Client<TcpStream> {
    /// Connects over TCP and logs in; `timeout` bounds the connect and every read.
    pub fn connect(
        host: &str,
        port: u16,
        user: &str,
        password: &str,
        timeout: Duration,
    ) -> ClientResult<Client<TcpStream>> {
        use std::net::ToSocketAddrs;
        let addr = (host, port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| std::io::Error::other(format!("unknown host '{host}'")))?;
        let s = TcpStream::connect_timeout(&addr, timeout)?;
        s.set_read_timeout(Some(timeout))?;
        s.set_nodelay(true)?;
        Client::login(s, user, password)
    }

    /// How long a read may wait (None: forever).
    pub fn set_read_timeout(&self, d: Option<Duration>) -> ClientResult<()> {
        self.ps.get_ref().set_read_timeout(d)?;
        Ok(())
    }
}

impl<S: Read + Write> Client<S> {
    /// Logs in on an open stream.
    pub fn login(stream: S, user: &str, password: &str) -> ClientResult<Client<S>> {
        Self::login_with(stream, user, password, None)
    }

    /// Logs in, first switching the stream to TLS with `tls` (given the stream after the
    /// SSLRequest packet, it returns the TLS stream over it) when given. A server that
    /// does not offer TLS is refused with 2026 (the client library's SSL error).
    pub fn login_with(
        stream: S,
        user: &str,
        password: &str,
        tls: Option<&mut dyn FnMut(S) -> std::io::Result<S>>,
    ) -> ClientResult<Client<S>> {
        let mut ps = PacketStream::new(stream);
        ps.set_max_allowed_packet(1 << 30);
        let hello = ps.read_packet()?;
        if hello.first() == Some(&0xff) {
            return Err(ClientError::Server(decode_err(&hello)));
        }
        let mut r = Reader::new(&hello);
        let _protocol = r.u8()?;
        let server_version = String::from_utf8_lossy(r.null_terminated()?).into_owned();
        let connection_id = r.u32()?;
        let mut scramble = r.take(8)?.to_vec();
        r.skip(1)?;
        let caps_low = r.u16()?;
        let _charset = r.u8()?;
        let _status = r.u16()?;
        let caps_high = r.u16()?;
        let server_caps = caps_low as u64 | (caps_high as u64) << 16;
        let auth_len = r.u8()? as usize;
        r.skip(10)?;
        let more = auth_len.saturating_sub(9).max(12);
        scramble.extend_from_slice(r.take(more.min(r.remaining()))?);
        let plugin = String::from_utf8_lossy(r.null_terminated_or_rest()).into_owned();
        let token = if plugin.is_empty() || plugin == NATIVE_PASSWORD_PLUGIN {
            native_password_token(password.as_bytes(), &scramble[..20.min(scramble.len())])
        } else {
            Vec::new()
        };
        let mut flags = caps::CLIENT_PROTOCOL_41
            | caps::CLIENT_SECURE_CONNECTION
            | caps::CLIENT_PLUGIN_AUTH
            | caps::CLIENT_TRANSACTIONS
            | caps::CLIENT_MULTI_RESULTS;
        if let Some(upgrade) = tls {
            if server_caps & caps::CLIENT_SSL == 0 {
                return Err(ClientError::Server(SqlError::from_code(
                    2026,
                    "SSL connection error: SSL is required, but the server does not support it",
                )));
            }
            flags |= caps::CLIENT_SSL;
            let mut req = Vec::new();
            put_u32(&mut req, flags as u32);
            put_u32(&mut req, 1 << 30);
            req.push(45);
            req.extend_from_slice(&[0; 23]);
            ps.write_packet(&req)?;
            ps.flush()?;
            let seq = ps.seq();
            let (plain, _) = ps.into_inner();
            let secure = upgrade(plain).map_err(|e| {
                ClientError::Server(SqlError::from_code(
                    2026,
                    format!("SSL connection error: {e}"),
                ))
            })?;
            ps = PacketStream::new(secure);
            ps.set_max_allowed_packet(1 << 30);
            ps.set_seq(seq);
        }
        let mut p = Vec::new();
        put_u32(&mut p, flags as u32);
        put_u32(&mut p, 1 << 30);
        p.push(45); // utf8mb4_general_ci
        p.extend_from_slice(&[0; 23]);
        put_null_str(&mut p, user.as_bytes());
        p.push(token.len() as u8);
        p.extend_from_slice(&token);
        put_null_str(&mut p, NATIVE_PASSWORD_PLUGIN.as_bytes());
        ps.write_packet(&p)?;
        ps.flush()?;
        loop {
            let reply = ps.read_packet()?;
            match reply.first() {
                Some(0x00) => break,
                Some(0xff) => return Err(ClientError::Server(decode_err(&reply))),
                Some(0xfe) => {
                    // Auth switch: plugin name, then its data (the scramble).
                    let mut r = Reader::new(&reply[1..]);
                    let plugin = String::from_utf8_lossy(r.null_terminated()?).into_owned();
                    if plugin != NATIVE_PASSWORD_PLUGIN {
                        return Err(ProtocolError::Malformed("unsupported auth plugin").into());
                    }
                    let data = r.rest();
                    let data = &data[..data.len().min(20)];
                    ps.write_packet(&native_password_token(password.as_bytes(), data))?;
                    ps.flush()?;
                }
                _ => return Err(ProtocolError::Malformed("unexpected login reply").into()),
            }
        }
        Ok(Client {
            ps,
            server_version,
            connection_id,
            semi_sync: false,
            needs_ack: false,
        })
    }

    /// The underlying stream.
    pub fn stream(&self) -> &S {
        self.ps.get_ref()
    }

    /// Sends a command packet and reads the first packet of its reply.
    pub fn command(&mut self, payload: &[u8]) -> ClientResult<Vec<u8>> {
        self.send(payload)?;
        Ok(self.ps.read_packet()?)
    }

    /// Sends a command packet without reading a reply.
    pub fn send(&mut self, payload: &[u8]) -> ClientResult<()> {
        self.ps.reset_seq();
        self.ps.write_packet(payload)?;
        self.ps.flush()?;
        Ok(())
    }

    /// Runs a text query: its rows (empty for a statement without a result set).
    pub fn query(&mut self, sql: &str) -> ClientResult<Rows> {
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        let first = self.command(&p)?;
        match first.first() {
            Some(0x00) => return Ok(Vec::new()),
            Some(0xff) => return Err(ClientError::Server(decode_err(&first))),
            _ => {}
        }
        let ncols = Reader::new(&first).lenenc_int()? as usize;
        // Column definitions up to EOF.
        loop {
            let p = self.ps.read_packet()?;
            if p.first() == Some(&0xfe) && p.len() < 9 {
                break;
            }
        }
        let mut rows = Vec::new();
        loop {
            let p = self.ps.read_packet()?;
            match p.first() {
                Some(0xfe) if p.len() < 9 => break,
                Some(0xff) => return Err(ClientError::Server(decode_err(&p))),
                _ => {}
            }
            let mut r = Reader::new(&p);
            let mut row = Vec::with_capacity(ncols);
            for _ in 0..ncols {
                if r.peek() == Some(0xfb) {
                    r.skip(1)?;
                    row.push(None);
                } else {
                    row.push(Some(r.lenenc_bytes()?.to_vec()));
                }
            }
            rows.push(row);
        }
        Ok(rows)
    }

    /// The first column of the first row of a query, as text.
    pub fn query_value(&mut self, sql: &str) -> ClientResult<Option<String>> {
        let rows = self.query(sql)?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten())
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    /// COM_REGISTER_SLAVE.
    pub fn register_slave(&mut self, server_id: u32, host: &str, port: u16) -> ClientResult<()> {
        let mut p = vec![0x15];
        put_u32(&mut p, server_id);
        p.push(host.len().min(255) as u8);
        p.extend_from_slice(&host.as_bytes()[..host.len().min(255)]);
        p.push(0); // user
        p.push(0); // password
        p.extend_from_slice(&port.to_le_bytes());
        put_u32(&mut p, 0); // replication rank
        put_u32(&mut p, 0); // master id: filled in by the primary
        let reply = self.command(&p)?;
        match reply.first() {
            Some(0xff) => Err(ClientError::Server(decode_err(&reply))),
            _ => Ok(()),
        }
    }

    /// Sends COM_BINLOG_DUMP; read the stream with [`Client::read_dump`].
    pub fn binlog_dump(
        &mut self,
        position: u32,
        flags: u16,
        server_id: u32,
        file: &str,
    ) -> ClientResult<()> {
        let mut p = vec![0x12];
        put_u32(&mut p, position);
        p.extend_from_slice(&flags.to_le_bytes());
        put_u32(&mut p, server_id);
        p.extend_from_slice(file.as_bytes());
        self.send(&p)
    }

    /// Reads the dump as a semi-sync replica: every event packet then starts with the
    /// semi-sync header (`0xEF | flags`), and the primary restarts its packet numbers
    /// after an event that needs an ACK (see [`Client::send_semi_sync_ack`]).
    pub fn set_semi_sync(&mut self, on: bool) {
        self.semi_sync = on;
    }

    pub fn is_semi_sync(&self) -> bool {
        self.semi_sync
    }

    /// Whether the last event [`Client::read_dump`] returned asked for an ACK.
    pub fn needs_ack(&self) -> bool {
        self.needs_ack
    }

    /// Acknowledges the primary's binlog up to `pos` in `file` (`0xEF | pos u64 LE |
    /// file`), as packet 0; the dump's numbering goes on where it was.
    pub fn send_semi_sync_ack(&mut self, file: &str, pos: u64) -> ClientResult<()> {
        let next = self.ps.seq();
        let mut p = vec![0xEF];
        p.extend_from_slice(&pos.to_le_bytes());
        p.extend_from_slice(file.as_bytes());
        self.ps.reset_seq();
        self.ps.write_packet(&p)?;
        self.ps.flush()?;
        self.ps.set_seq(next);
        self.needs_ack = false;
        Ok(())
    }

    /// The next packet of a binlog dump.
    pub fn read_dump(&mut self) -> ClientResult<DumpPacket> {
        let p = self.ps.read_packet()?;
        self.needs_ack = false;
        match p.first() {
            Some(0x00) if self.semi_sync => {
                if p.len() < 3 || p[1] != 0xEF {
                    return Err(ProtocolError::Malformed(
                        "Missing magic number for semi-sync packet",
                    )
                    .into());
                }
                if p[2] & 0x01 != 0 {
                    self.needs_ack = true;
                    // The primary numbers its next packet 1 (after its flush of this one).
                    self.ps.set_seq(1);
                }
                Ok(DumpPacket::Event(p[3..].to_vec()))
            }
            Some(0x00) => Ok(DumpPacket::Event(p[1..].to_vec())),
            Some(0xfe) if p.len() < 9 => Ok(DumpPacket::Eof),
            Some(0xff) => Err(ClientError::Server(decode_err(&p))),
            _ => Err(ProtocolError::Malformed("unexpected packet in a binlog dump").into()),
        }
    }
}
