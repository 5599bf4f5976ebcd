//! Packet framing over a blocking stream.
//!
//! Format of one wire packet:
//! ```text
//! payload_length u24 | sequence_id u8 | payload [payload_length]
//! ```
//! A payload of 16 MiB - 1 (0xFFFFFF) bytes or more is sent as consecutive packets of
//! 0xFFFFFF bytes each, followed by one shorter packet (possibly empty); the reader joins them.
//! Sequence ids count up (wrapping) across every packet of one exchange, in both directions:
//! the server resets them to 0 before reading each new command.
//!
//! Writes are buffered: a whole result set goes out in one `write` when [`PacketStream::flush`]
//! is called (or in large chunks when the buffer grows past [`WRITE_SPILL`]).
//! Reads may be buffered too ("read-ahead", on by default); when the stream is switched to TLS
//! after an SSLRequest, the bytes already read ahead must be handed to the TLS layer:
//! [`PacketStream::map_stream`] does that.

use crate::error::{ProtocolError, Result};
use std::io::{self, Read, Write};

/// Largest payload of one wire packet; longer payloads are split.
pub const MAX_PACKET_CHUNK: usize = 0xFF_FFFF;
/// MariaDB's default `max_allowed_packet` (16 MiB).
pub const DEFAULT_MAX_ALLOWED_PACKET: usize = 16 * 1024 * 1024;
/// The write buffer is written out (without flushing the stream) once it exceeds this size.
pub const WRITE_SPILL: usize = 256 * 1024;
/// Read-ahead buffer size.
const READ_CHUNK: usize = 16 * 1024;
/// Chunks at least this long are written straight to the stream instead of being copied.
const DIRECT_WRITE: usize = 64 * 1024;

/// A packet reader/writer over any stream.
pub struct PacketStream<S> {
    stream: S,
    seq: u8,
    max_allowed_packet: usize,
    read_ahead: bool,
    skip_oversized: bool,
    rbuf: Box<[u8]>,
    rpos: usize,
    rend: usize,
    wbuf: Vec<u8>,
}

impl<S> PacketStream<S> {
    pub fn new(stream: S) -> PacketStream<S> {
        PacketStream {
            stream,
            seq: 0,
            max_allowed_packet: DEFAULT_MAX_ALLOWED_PACKET,
            read_ahead: true,
            skip_oversized: false,
            rbuf: vec![0u8; READ_CHUNK].into_boxed_slice(),
            rpos: 0,
            rend: 0,
            wbuf: Vec::with_capacity(16 * 1024),
        }
    }

    /// The sequence id the next packet (read or written) must carry.
    pub fn seq(&self) -> u8 {
        self.seq
    }

    pub fn set_seq(&mut self, seq: u8) {
        self.seq = seq;
    }

    /// Starts a new command exchange: the next packet read must carry sequence id 0.
    pub fn reset_seq(&mut self) {
        self.seq = 0;
    }

    pub fn max_allowed_packet(&self) -> usize {
        self.max_allowed_packet
    }

    /// Largest joined payload [`PacketStream::read_packet`] accepts.
    pub fn set_max_allowed_packet(&mut self, max: usize) {
        self.max_allowed_packet = max;
    }

    /// Whether a packet larger than `max_allowed_packet` is read to its end and discarded
    /// (so that the connection can go on after the error) instead of being left unread.
    /// MariaDB turns this on once the client is authenticated: it then answers
    /// ER_NET_PACKET_TOO_LARGE and keeps the connection. Off by default.
    pub fn set_skip_oversized(&mut self, on: bool) {
        self.skip_oversized = on;
    }

    /// Turns read-ahead on or off. With it off, reads never consume bytes past the end of
    /// the packet being read (two `read` calls per packet).
    pub fn set_read_ahead(&mut self, on: bool) {
        self.read_ahead = on;
    }

    pub fn get_ref(&self) -> &S {
        &self.stream
    }

    pub fn get_mut(&mut self) -> &mut S {
        &mut self.stream
    }

    /// Bytes read from the stream but not yet consumed as packets.
    pub fn unread(&self) -> &[u8] {
        &self.rbuf[self.rpos..self.rend]
    }

    /// Bytes written but not yet sent.
    pub fn pending_write(&self) -> usize {
        self.wbuf.len()
    }

    /// Gives back the stream and the bytes read ahead from it but not consumed. Unsent
    /// buffered writes are dropped: call [`PacketStream::flush`] first.
    pub fn into_inner(self) -> (S, Vec<u8>) {
        let unread = self.unread().to_vec();
        (self.stream, unread)
    }
}

impl<S: Read> PacketStream<S> {
    fn read_some(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.rpos < self.rend {
            let n = out.len().min(self.rend - self.rpos);
            out[..n].copy_from_slice(&self.rbuf[self.rpos..self.rpos + n]);
            self.rpos += n;
            return Ok(n);
        }
        if !self.read_ahead || out.len() >= READ_CHUNK {
            return self.stream.read(out);
        }
        let n = self.stream.read(&mut self.rbuf)?;
        self.rpos = 0;
        self.rend = n;
        let n = out.len().min(n);
        out[..n].copy_from_slice(&self.rbuf[..n]);
        self.rpos = n;
        Ok(n)
    }

    /// Fills `out` completely; returns how many bytes were read before end of stream.
    fn read_full(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut done = 0;
        while done < out.len() {
            match self.read_some(&mut out[done..]) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    fn read_header(&mut self, first: bool) -> Result<(usize, u8)> {
        let mut h = [0u8; 4];
        let n = self.read_full(&mut h)?;
        if n == 0 && first {
            return Err(ProtocolError::Closed);
        }
        if n < 4 {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
        }
        Ok((u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize, h[3]))
    }

    /// Discards the `len` payload bytes of the current chunk and every following chunk of
    /// the same logical packet. Returns the packet's total length.
    fn skip_rest(&mut self, mut total: usize, mut len: usize) -> Result<usize> {
        let mut scratch = [0u8; 8192];
        loop {
            let mut left = len;
            while left > 0 {
                let n = left.min(scratch.len());
                if self.read_full(&mut scratch[..n])? < n {
                    return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
                }
                left -= n;
            }
            if len < MAX_PACKET_CHUNK {
                return Ok(total);
            }
            let (next, seq) = self.read_header(false)?;
            if seq != self.seq {
                return Err(ProtocolError::OutOfOrder {
                    expected: self.seq,
                    got: seq,
                });
            }
            self.seq = seq.wrapping_add(1);
            total += next;
            len = next;
        }
    }

    /// Reads one logical packet (joining split packets) and returns its payload.
    pub fn read_packet(&mut self) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.read_packet_into(&mut buf)?;
        Ok(buf)
    }

    /// Like [`PacketStream::read_packet`], into a caller-owned buffer (cleared first).
    ///
    /// Errors: [`ProtocolError::Closed`] when the peer closed the connection before a new
    /// packet; [`ProtocolError::OutOfOrder`] on a wrong sequence id;
    /// [`ProtocolError::PacketTooLarge`] when the joined payload exceeds
    /// `max_allowed_packet`. With [`PacketStream::set_skip_oversized`] the rest of the packet
    /// has then been read and discarded (`skipped: true`): reply ER_NET_PACKET_TOO_LARGE
    /// and go on, as MariaDB does after authentication. Otherwise the stream is out of sync:
    /// reply and close. Either way the sequence id is ready for the reply.
    pub fn read_packet_into(&mut self, buf: &mut Vec<u8>) -> Result<()> {
        buf.clear();
        let mut first = true;
        loop {
            let (len, seq) = self.read_header(first)?;
            if seq != self.seq {
                return Err(ProtocolError::OutOfOrder {
                    expected: self.seq,
                    got: seq,
                });
            }
            self.seq = seq.wrapping_add(1);
            let total = buf.len() + len;
            if total > self.max_allowed_packet {
                let max = self.max_allowed_packet;
                buf.clear();
                if !self.skip_oversized {
                    return Err(ProtocolError::PacketTooLarge {
                        len: total,
                        max,
                        skipped: false,
                    });
                }
                let total = self.skip_rest(total, len)?;
                return Err(ProtocolError::PacketTooLarge {
                    len: total,
                    max,
                    skipped: true,
                });
            }
            let start = buf.len();
            buf.resize(total, 0);
            let n = self.read_full(&mut buf[start..])?;
            if n < len {
                return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
            }
            if len < MAX_PACKET_CHUNK {
                return Ok(());
            }
            first = false;
        }
    }
}

impl<S: Write> PacketStream<S> {
    fn push_header(&mut self, len: usize) {
        let l = (len as u32).to_le_bytes();
        self.wbuf.extend_from_slice(&[l[0], l[1], l[2], self.seq]);
        self.seq = self.seq.wrapping_add(1);
    }

    fn spill(&mut self) -> io::Result<()> {
        if !self.wbuf.is_empty() {
            self.stream.write_all(&self.wbuf)?;
            self.wbuf.clear();
        }
        Ok(())
    }

    /// Queues one logical packet, splitting it when needed. Nothing is sent before
    /// [`PacketStream::flush`] unless the buffer grows past [`WRITE_SPILL`].
    pub fn write_packet(&mut self, payload: &[u8]) -> Result<()> {
        let mut rest = payload;
        loop {
            let n = rest.len().min(MAX_PACKET_CHUNK);
            self.push_header(n);
            if n >= DIRECT_WRITE {
                self.spill()?;
                self.stream.write_all(&rest[..n])?;
            } else {
                self.wbuf.extend_from_slice(&rest[..n]);
            }
            rest = &rest[n..];
            if n < MAX_PACKET_CHUNK {
                break;
            }
        }
        if self.wbuf.len() > WRITE_SPILL {
            self.spill()?;
        }
        Ok(())
    }

    /// Queues one packet whose payload `f` appends to the given buffer, without an
    /// intermediate copy for packets shorter than 16 MiB - 1.
    pub fn write_packet_with<F: FnOnce(&mut Vec<u8>)>(&mut self, f: F) -> Result<()> {
        let start = self.wbuf.len();
        self.wbuf.extend_from_slice(&[0; 4]);
        f(&mut self.wbuf);
        let len = self.wbuf.len() - start - 4;
        if len >= MAX_PACKET_CHUNK {
            let payload = self.wbuf.split_off(start + 4);
            self.wbuf.truncate(start);
            return self.write_packet(&payload);
        }
        let l = (len as u32).to_le_bytes();
        self.wbuf[start..start + 4].copy_from_slice(&[l[0], l[1], l[2], self.seq]);
        self.seq = self.seq.wrapping_add(1);
        if self.wbuf.len() > WRITE_SPILL {
            self.spill()?;
        }
        Ok(())
    }

    /// Sends everything queued and flushes the stream.
    pub fn flush(&mut self) -> Result<()> {
        self.spill()?;
        self.stream.flush()?;
        Ok(())
    }

    /// Flushes, then replaces the stream by `f(stream, unread)`, keeping the sequence id
    /// and settings. `unread` holds the bytes already read ahead from the old stream (for
    /// TLS: the start of the client's handshake, to feed to the TLS session first).
    ///
    /// ```ignore
    /// let ps = ps.map_stream(|tcp, unread| {
    ///     let mut conn = rustls::ServerConnection::new(cfg)?;
    ///     conn.read_tls(&mut &unread[..])?;
    ///     Ok(rustls::StreamOwned::new(conn, tcp))
    /// })?;
    /// ```
    pub fn map_stream<T, F>(mut self, f: F) -> Result<PacketStream<T>>
    where
        F: FnOnce(S, &[u8]) -> io::Result<T>,
    {
        self.flush()?;
        let (seq, max, ahead) = (self.seq, self.max_allowed_packet, self.read_ahead);
        let (stream, unread) = self.into_inner();
        let mut ps = PacketStream::new(f(stream, &unread)?);
        ps.seq = seq;
        ps.max_allowed_packet = max;
        ps.read_ahead = ahead;
        Ok(ps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        v.push(seq);
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn write_small_packets_buffered() {
        let mut ps = PacketStream::new(Vec::new());
        ps.write_packet(b"\x03SELECT 1").unwrap();
        ps.write_packet_with(|b| b.extend_from_slice(b"ab"))
            .unwrap();
        assert!(ps.get_ref().is_empty(), "nothing sent before flush");
        ps.flush().unwrap();
        let mut want = frame(0, b"\x03SELECT 1");
        want.extend(frame(1, b"ab"));
        assert_eq!(ps.get_ref(), &want);
        assert_eq!(ps.seq(), 2);
    }

    #[test]
    fn read_checks_sequence() {
        let mut wire = frame(0, b"\x0e");
        wire.extend(frame(5, b"x"));
        let mut ps = PacketStream::new(&wire[..]);
        assert_eq!(ps.read_packet().unwrap(), b"\x0e");
        match ps.read_packet() {
            Err(ProtocolError::OutOfOrder {
                expected: 1,
                got: 5,
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn clean_close_and_truncation() {
        let mut ps = PacketStream::new(&[][..]);
        assert!(matches!(ps.read_packet(), Err(ProtocolError::Closed)));
        let mut ps = PacketStream::new(&[5, 0][..]);
        assert!(matches!(ps.read_packet(), Err(ProtocolError::Io(_))));
        let mut ps = PacketStream::new(&[5, 0, 0, 0, b'a'][..]);
        assert!(matches!(ps.read_packet(), Err(ProtocolError::Io(_))));
    }

    #[test]
    fn split_and_join_large_packets() {
        for len in [
            MAX_PACKET_CHUNK - 1,
            MAX_PACKET_CHUNK,
            MAX_PACKET_CHUNK + 1,
            2 * MAX_PACKET_CHUNK + 10,
        ] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut ps = PacketStream::new(Vec::new());
            ps.write_packet(&payload).unwrap();
            ps.flush().unwrap();
            let wire = ps.into_inner().0;
            let chunks = len / MAX_PACKET_CHUNK + 1;
            assert_eq!(wire.len(), len + 4 * chunks, "len {len}");
            // Headers: full chunks then one shorter (maybe empty) packet.
            for c in 0..chunks {
                let off = c * (MAX_PACKET_CHUNK + 4);
                let want = if c + 1 < chunks {
                    MAX_PACKET_CHUNK
                } else {
                    len % MAX_PACKET_CHUNK
                };
                let got = u32::from_le_bytes([wire[off], wire[off + 1], wire[off + 2], 0]);
                assert_eq!(got as usize, want);
                assert_eq!(wire[off + 3], c as u8);
            }
            let mut rd = PacketStream::new(&wire[..]);
            rd.set_max_allowed_packet(64 << 20);
            assert_eq!(rd.read_packet().unwrap(), payload);
            assert_eq!(rd.seq() as usize, chunks);

            // Same through write_packet_with.
            let mut ps = PacketStream::new(Vec::new());
            ps.write_packet_with(|b| b.extend_from_slice(&payload))
                .unwrap();
            ps.flush().unwrap();
            assert_eq!(ps.into_inner().0, wire);
        }
    }

    #[test]
    fn max_allowed_packet_enforced() {
        let wire = frame(0, &[7u8; 100]);
        let mut ps = PacketStream::new(&wire[..]);
        ps.set_max_allowed_packet(99);
        match ps.read_packet() {
            Err(
                e @ ProtocolError::PacketTooLarge {
                    len: 100,
                    max: 99,
                    skipped: false,
                },
            ) => {
                assert_eq!(e.to_sql_error().code, 1153);
                assert_eq!(e.to_sql_error().state, "08S01");
            }
            other => panic!("{other:?}"),
        }
        // The reply goes out with the next sequence id.
        assert_eq!(ps.seq(), 1);
        let mut ps = PacketStream::new(&wire[..]);
        ps.set_max_allowed_packet(100);
        assert_eq!(ps.read_packet().unwrap().len(), 100);
    }

    #[test]
    fn oversized_packet_is_skipped() {
        // A split packet of MAX_PACKET_CHUNK + 5 bytes, then a small one.
        let big = vec![1u8; MAX_PACKET_CHUNK + 5];
        let mut ps = PacketStream::new(Vec::new());
        ps.write_packet(&big).unwrap();
        ps.reset_seq();
        ps.write_packet(b"\x0e").unwrap();
        ps.flush().unwrap();
        let wire = ps.into_inner().0;
        let mut rd = PacketStream::new(&wire[..]);
        rd.set_skip_oversized(true);
        rd.set_max_allowed_packet(1000);
        match rd.read_packet() {
            Err(e @ ProtocolError::PacketTooLarge { skipped: true, .. }) => {
                assert!(e.is_recoverable());
                if let ProtocolError::PacketTooLarge { len, .. } = e {
                    assert_eq!(len, MAX_PACKET_CHUNK + 5);
                }
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(rd.seq(), 2);
        rd.reset_seq();
        assert_eq!(rd.read_packet().unwrap(), b"\x0e");
    }

    #[test]
    fn map_stream_hands_over_read_ahead_bytes() {
        let mut wire = frame(1, b"ssl-request");
        wire.extend_from_slice(b"\x16\x03\x01TLS-HELLO");
        let mut ps = PacketStream::new(crate::testutil::Duplex::new(wire.clone()));
        ps.set_seq(1);
        assert_eq!(ps.read_packet().unwrap(), b"ssl-request");
        let mut handed = Vec::new();
        let ps2 = ps
            .map_stream(|s, unread| {
                handed = unread.to_vec();
                Ok(s)
            })
            .unwrap();
        assert_eq!(handed, b"\x16\x03\x01TLS-HELLO");
        assert_eq!(ps2.seq(), 2);

        // Without read-ahead nothing past the packet is consumed.
        let mut ps = PacketStream::new(&wire[..]);
        ps.set_read_ahead(false);
        ps.set_seq(1);
        ps.read_packet().unwrap();
        let (rest, unread) = ps.into_inner();
        assert!(unread.is_empty());
        assert_eq!(rest, b"\x16\x03\x01TLS-HELLO");
    }
}
