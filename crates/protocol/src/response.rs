//! Generic responses: OK, ERR and EOF packets, and the server status flags.

use crate::codec::{put_lenenc_bytes, put_lenenc_int, put_u16};
use crate::error::Result;
use crate::packet::PacketStream;
use onelog_types::SqlError;
use std::io::Write;

/// Server status flags (`SERVER_STATUS_*`, `SERVER_*`) sent in OK and EOF packets.
pub mod status {
    pub const SERVER_STATUS_IN_TRANS: u16 = 1;
    pub const SERVER_STATUS_AUTOCOMMIT: u16 = 2;
    pub const SERVER_MORE_RESULTS_EXISTS: u16 = 8;
    pub const SERVER_QUERY_NO_GOOD_INDEX_USED: u16 = 16;
    pub const SERVER_QUERY_NO_INDEX_USED: u16 = 32;
    pub const SERVER_STATUS_CURSOR_EXISTS: u16 = 64;
    pub const SERVER_STATUS_LAST_ROW_SENT: u16 = 128;
    pub const SERVER_STATUS_DB_DROPPED: u16 = 256;
    pub const SERVER_STATUS_NO_BACKSLASH_ESCAPES: u16 = 512;
    pub const SERVER_STATUS_METADATA_CHANGED: u16 = 1024;
    pub const SERVER_QUERY_WAS_SLOW: u16 = 2048;
    pub const SERVER_PS_OUT_PARAMS: u16 = 4096;
    pub const SERVER_STATUS_IN_TRANS_READONLY: u16 = 8192;
    pub const SERVER_SESSION_STATE_CHANGED: u16 = 16384;
}

/// Longest error message MariaDB sends (MYSQL_ERRMSG_SIZE - 1).
pub const MAX_ERROR_MESSAGE: usize = 511;

/// An OK packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OkPacket {
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub status: u16,
    pub warnings: u16,
    /// Human-readable info, e.g. "Rows matched: 1  Changed: 1  Warnings: 0".
    pub info: String,
    /// Session state changes for a client with CLIENT_SESSION_TRACK: the tracker entries
    /// (`type u8 | data lenenc string`, one after the other); empty when nothing changed.
    pub session_state: Vec<u8>,
}

impl OkPacket {
    /// An OK with no rows, no id and no info.
    pub fn with_status(status: u16) -> OkPacket {
        OkPacket {
            status,
            ..OkPacket::default()
        }
    }

    /// Encodes the payload. The info string is length-encoded, as MariaDB's server writes
    /// it (`net_store_data`) and libmariadb reads it, and omitted when empty and no session
    /// state changed. With session state, SERVER_SESSION_STATE_CHANGED is set and the info
    /// is followed by the state as one length-encoded string.
    /// ```text
    /// 0x00 | affected_rows lenenc | last_insert_id lenenc | status u16 | warnings u16 |
    /// [info lenenc string [session_state lenenc string]]
    /// ```
    pub fn encode(&self, buf: &mut Vec<u8>) {
        buf.push(0x00);
        put_lenenc_int(buf, self.affected_rows);
        put_lenenc_int(buf, self.last_insert_id);
        let changed = !self.session_state.is_empty();
        let status = if changed {
            self.status | status::SERVER_SESSION_STATE_CHANGED
        } else {
            self.status
        };
        put_u16(buf, status);
        put_u16(buf, self.warnings);
        if changed || !self.info.is_empty() {
            put_lenenc_bytes(buf, self.info.as_bytes());
        }
        if changed {
            put_lenenc_bytes(buf, &self.session_state);
        }
    }
}

/// Encodes an ERR packet payload (CLIENT_PROTOCOL_41 form).
/// ```text
/// 0xFF | error_code u16 | '#' | sqlstate [5] | message string<EOF>
/// ```
/// The message is cut to [`MAX_ERROR_MESSAGE`] bytes at a UTF-8 boundary.
pub fn encode_err(buf: &mut Vec<u8>, err: &SqlError) {
    buf.push(0xFF);
    put_u16(buf, err.code);
    buf.push(b'#');
    let mut state = [b'H', b'Y', b'0', b'0', b'0'];
    for (d, s) in state.iter_mut().zip(err.state.bytes()) {
        *d = s;
    }
    buf.extend_from_slice(&state);
    let msg = err.message.as_str();
    let mut end = msg.len().min(MAX_ERROR_MESSAGE);
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    buf.extend_from_slice(&msg.as_bytes()[..end]);
}

/// Encodes an EOF packet payload: `0xFE | warnings u16 | status u16`.
pub fn encode_eof(buf: &mut Vec<u8>, warnings: u16, status: u16) {
    buf.push(0xFE);
    put_u16(buf, warnings);
    put_u16(buf, status);
}

impl<S: Write> PacketStream<S> {
    /// Queues an OK packet.
    pub fn write_ok(&mut self, ok: &OkPacket) -> Result<()> {
        self.write_packet_with(|b| ok.encode(b))
    }

    /// Queues an ERR packet.
    pub fn write_err(&mut self, err: &SqlError) -> Result<()> {
        self.write_packet_with(|b| encode_err(b, err))
    }

    /// Queues an EOF packet.
    pub fn write_eof(&mut self, warnings: u16, status: u16) -> Result<()> {
        self.write_packet_with(|b| encode_eof(b, warnings, status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_packet_layout() {
        let mut b = Vec::new();
        OkPacket::with_status(status::SERVER_STATUS_AUTOCOMMIT).encode(&mut b);
        assert_eq!(b, [0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00]);

        let mut b = Vec::new();
        OkPacket {
            affected_rows: 300,
            last_insert_id: 1,
            status: 3,
            warnings: 1,
            info: "Rows matched: 1".into(),
            session_state: Vec::new(),
        }
        .encode(&mut b);
        // The info string is length-encoded (15 bytes).
        let mut want = vec![0x00, 0xFC, 0x2C, 0x01, 0x01, 0x03, 0x00, 0x01, 0x00, 15];
        want.extend_from_slice(b"Rows matched: 1");
        assert_eq!(b, want);

        // Session state: the flag, an empty info, then the entries as one string (as
        // MariaDB 10.11 answers `USE mysql`: schema entry `01 06 05 'mysql'`).
        let mut b = Vec::new();
        OkPacket {
            status: status::SERVER_STATUS_AUTOCOMMIT,
            session_state: b"\x01\x06\x05mysql".to_vec(),
            ..OkPacket::default()
        }
        .encode(&mut b);
        let mut want = vec![0x00, 0x00, 0x00, 0x02, 0x40, 0x00, 0x00, 0x00, 8];
        want.extend_from_slice(b"\x01\x06\x05mysql");
        assert_eq!(b, want);
    }

    #[test]
    fn err_packet_layout() {
        let mut b = Vec::new();
        encode_err(
            &mut b,
            &SqlError::new(1146, "42S02", "Table 'test.t' doesn't exist"),
        );
        let mut want = vec![0xFF, 0x7A, 0x04, b'#'];
        want.extend_from_slice(b"42S02Table 'test.t' doesn't exist");
        assert_eq!(b, want);

        let mut b = Vec::new();
        let long = "é".repeat(400);
        encode_err(&mut b, &SqlError::new(1064, "42000", long));
        assert_eq!(b.len(), 9 + 510);
        assert!(std::str::from_utf8(&b[9..]).is_ok());
    }

    #[test]
    fn eof_packet_layout() {
        let mut b = Vec::new();
        encode_eof(&mut b, 0, status::SERVER_STATUS_AUTOCOMMIT);
        assert_eq!(b, [0xFE, 0x00, 0x00, 0x02, 0x00]);
    }
}
