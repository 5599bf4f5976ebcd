//! Semi-sync on a dump connection: the packet header and the replica's ACKs.
//!
//! A replica that set `@rpl_semi_sync_slave = 1` before COM_BINLOG_DUMP gets every event
//! packet as `0x00 | 0xEF | flags | event`, flags bit 0 ("needs ACK") on the last event of
//! the last group written so far (see `onelog_engine::SemiSync::needs_ack`). The primary
//! flushes such a packet at once and restarts the packet sequence at 1 after it (the
//! replica's ACK restarts its own at 0, as MariaDB's `net_clear` does on both sides).
//!
//! The replica answers on the same connection, while the dump thread keeps writing: a
//! reader thread beside it takes the ACK packets, `0xEF | position u64 LE | file name`,
//! and reports them. An ACK naming a position this dump has not sent yet, an unknown file
//! or anything else than an ACK is logged and ignored: it cannot release a commit.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Instant;

use onelog_binlog::LogPos;
use onelog_engine::{Engine, SemiSync};
use parking_lot::Mutex;

/// The semi-sync magic byte, in the event packet header and in ACKs.
pub const MAGIC: u8 = 0xEF;
/// Flags bit: the replica must acknowledge this event.
pub const NEED_ACK: u8 = 0x01;

/// A second handle on a connection's socket (for the ACK reader; TLS has none).
pub(crate) enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Socket {
    fn try_clone(&self) -> io::Result<Socket> {
        Ok(match self {
            Socket::Tcp(s) => Socket::Tcp(s.try_clone()?),
            Socket::Unix(s) => Socket::Unix(s.try_clone()?),
        })
    }

    fn shutdown(&self) {
        let _ = match self {
            Socket::Tcp(s) => s.shutdown(Shutdown::Both),
            Socket::Unix(s) => s.shutdown(Shutdown::Both),
        };
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
        }
    }
}

/// What the dump thread and its ACK reader share.
#[derive(Default)]
struct Sent {
    /// The furthest event end this dump has sent.
    furthest: Option<LogPos>,
    /// Events sent with the "needs ACK" flag and when, oldest first.
    flagged: VecDeque<(LogPos, Instant)>,
    /// The replica closed the connection (the reader saw its end).
    closed: bool,
}

/// One semi-sync replica's dump: registered with [`SemiSync`] while it lives. Dropping
/// it shuts the socket down (the reader ends) and unregisters.
pub(crate) struct AckSession {
    semisync: Arc<SemiSync>,
    sent: Arc<Mutex<Sent>>,
    socket: Socket,
}

impl AckSession {
    /// Registers the dump and starts its ACK reader; `server_id`: the replica's, for the
    /// log. `unread`: bytes the connection read ahead of the dump request.
    pub fn start(
        engine: Arc<Engine>,
        socket: Socket,
        unread: Vec<u8>,
        server_id: u32,
    ) -> io::Result<AckSession> {
        let reader = socket.try_clone()?;
        let semisync = engine.semisync().clone();
        let sent = Arc::new(Mutex::new(Sent::default()));
        let s = sent.clone();
        std::thread::Builder::new()
            .name("onelog-semisync-ack".into())
            .spawn(move || {
                read_acks(&engine, reader, unread, server_id, &s);
                s.lock().closed = true;
            })?;
        semisync.add_client();
        Ok(AckSession {
            semisync,
            sent,
            socket,
        })
    }

    /// Whether the replica closed the connection: the dump ends (an idle dump without
    /// heartbeats would only notice at its next write).
    pub fn closed(&self) -> bool {
        self.sent.lock().closed
    }

    /// An event ending at `end` was written to the replica; `group_end`: it ends a
    /// group. Returns the flags of its semi-sync header.
    pub fn flags_for(&self, group_end: Option<LogPos>) -> u8 {
        let Some(end) = group_end else {
            return 0;
        };
        let mut sent = self.sent.lock();
        if sent.furthest.is_none_or(|f| f < end) {
            sent.furthest = Some(end);
        }
        if self.semisync.needs_ack(end) {
            sent.flagged.push_back((end, Instant::now()));
            if sent.flagged.len() > 1024 {
                sent.flagged.pop_front();
            }
            NEED_ACK
        } else {
            0
        }
    }
}

impl Drop for AckSession {
    fn drop(&mut self) {
        self.socket.shutdown();
        self.semisync.remove_client();
    }
}

/// Reads ACK packets until the connection ends.
fn read_acks(
    engine: &Engine,
    mut sock: Socket,
    unread: Vec<u8>,
    server_id: u32,
    sent: &Mutex<Sent>,
) {
    let mut input = unread;
    let mut buf = [0u8; 4096];
    loop {
        // One packet: 3-byte length, sequence number, payload.
        while input.len() < 4
            || input.len() < 4 + u32::from_le_bytes([input[0], input[1], input[2], 0]) as usize
        {
            match sock.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => input.extend_from_slice(&buf[..n]),
            }
        }
        let len = u32::from_le_bytes([input[0], input[1], input[2], 0]) as usize;
        let packet: Vec<u8> = input.drain(..4 + len).skip(4).collect();
        if packet == [0x01] {
            return; // COM_QUIT: the replica's IO thread stops.
        }
        if packet.len() < 9 || packet[0] != MAGIC {
            onelog_types::warning!(
                "ignored a packet that is not a semi-sync ACK from the replica with \
                 server_id {server_id} (first byte {:#04x}, length {})",
                packet.first().copied().unwrap_or(0),
                packet.len()
            );
            continue;
        }
        let offset = u64::from_le_bytes(packet[1..9].try_into().unwrap());
        let name = String::from_utf8_lossy(&packet[9..]).into_owned();
        let Some(pos) = engine
            .binlog_log()
            .and_then(|log| log.file_no(&name))
            .map(|file_no| LogPos { file_no, offset })
        else {
            onelog_types::warning!(
                "ignored a semi-sync ACK from server_id {server_id} for unknown \
                 binlog file '{name}'"
            );
            continue;
        };
        let net_wait = {
            let mut s = sent.lock();
            if s.furthest.is_none_or(|f| pos > f) {
                onelog_types::warning!(
                    "ignored a semi-sync ACK from server_id {server_id} for {name}:{offset}, \
                     which this dump has not sent"
                );
                continue;
            }
            let mut at = None;
            while s.flagged.front().is_some_and(|&(p, _)| p <= pos) {
                at = s.flagged.pop_front().map(|(_, t)| t);
            }
            at.map(|t| t.elapsed())
        };
        engine.semisync().report_ack(pos, net_wait);
    }
}
