//! LOAD DATA LOCAL INFILE on the wire. The server sends a packet `0xFB filename` in place of
//! a result; the client answers with the file's contents in packets of any size (the
//! sequence ids going on from the request) and an empty packet at the end (also when it
//! cannot or will not read the file: the load then sees an empty file); the statement's
//! result follows. The file is read as the load goes, never whole: [`ClientFile`] is the
//! reader, and it reads what the client sends to the end even when the statement fails,
//! so that the connection stays in step.

use std::io::{self, Read};

use onelog_protocol::PacketStream;

use crate::conn::Stream;

/// The client's file, as it arrives.
pub struct ClientFile<'a> {
    ps: &'a mut PacketStream<Stream>,
    buf: Vec<u8>,
    pos: usize,
    /// The empty packet came (or the connection failed).
    done: bool,
}

/// Sends the LOCAL INFILE request for `name` and returns the reader of the answer.
pub fn request<'a>(ps: &'a mut PacketStream<Stream>, name: &str) -> io::Result<Box<dyn Read + 'a>> {
    let err = |e: onelog_protocol::ProtocolError| io::Error::other(e.to_string());
    ps.write_packet_with(|b| {
        b.push(0xFB);
        b.extend_from_slice(name.as_bytes());
    })
    .map_err(err)?;
    ps.flush().map_err(err)?;
    Ok(Box::new(ClientFile {
        ps,
        buf: Vec::new(),
        pos: 0,
        done: false,
    }))
}

impl ClientFile<'_> {
    /// The next packet (an announced wait: the client may be slow).
    fn next_packet(&mut self) -> io::Result<()> {
        let (ps, buf) = (&mut *self.ps, &mut self.buf);
        let r = onelog_engine::wait::blocking(|| ps.read_packet_into(buf));
        self.pos = 0;
        match r {
            Ok(()) => {
                if self.buf.is_empty() {
                    self.done = true;
                }
                Ok(())
            }
            Err(e) => {
                self.done = true;
                self.buf.clear();
                Err(io::Error::other(e.to_string()))
            }
        }
    }
}

impl Read for ClientFile<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.buf.len() {
            if self.done {
                return Ok(0);
            }
            self.next_packet()?;
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl Drop for ClientFile<'_> {
    fn drop(&mut self) {
        while !self.done {
            if self.next_packet().is_err() {
                break;
            }
        }
    }
}
