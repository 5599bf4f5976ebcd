//! The protocol layer's error type, and how each error becomes a MariaDB error.

use onelog_types::{code, SqlError};
use std::io;

/// Everything that can go wrong while reading, decoding or writing packets.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The underlying stream failed.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The peer closed the connection cleanly between packets.
    #[error("connection closed by peer")]
    Closed,
    /// A (joined) packet is larger than `max_allowed_packet`; answer
    /// ER_NET_PACKET_TOO_LARGE (1153). When `skipped`, the rest of the packet was read and
    /// discarded and the connection can go on (MariaDB's behaviour once a client is
    /// authenticated); otherwise the stream is out of sync and must be closed after the
    /// error is sent. `len` is the packet's length (as far as it was read).
    #[error("Got a packet bigger than 'max_allowed_packet' bytes")]
    PacketTooLarge {
        len: usize,
        max: usize,
        skipped: bool,
    },
    /// A packet arrived with an unexpected sequence id.
    #[error("Got packets out of order (expected sequence id {expected}, got {got})")]
    OutOfOrder { expected: u8, got: u8 },
    /// A payload is truncated or otherwise does not follow the protocol.
    #[error("Malformed communication packet: {0}")]
    Malformed(&'static str),
}

impl ProtocolError {
    /// The error a MariaDB server would report for this condition.
    pub fn to_sql_error(&self) -> SqlError {
        match self {
            ProtocolError::PacketTooLarge { .. } => SqlError::from_code(
                code::ER_NET_PACKET_TOO_LARGE,
                "Got a packet bigger than 'max_allowed_packet' bytes",
            ),
            ProtocolError::OutOfOrder { .. } => SqlError::from_code(
                code::ER_NET_PACKETS_OUT_OF_ORDER,
                "Got packets out of order",
            ),
            ProtocolError::Malformed(_) => SqlError::new(
                code::ER_MALFORMED_PACKET,
                "HY000",
                "Malformed communication packet",
            ),
            ProtocolError::Io(_) | ProtocolError::Closed => SqlError::from_code(
                code::ER_NET_READ_ERROR,
                "Got an error reading communication packets",
            ),
        }
    }

    /// Whether the connection can go on after this error (answered with an ERR packet):
    /// a malformed payload inside a well-framed packet, or an oversized packet that was
    /// skipped, leave the stream in sync.
    pub fn is_recoverable(&self) -> bool {
        matches!(
            self,
            ProtocolError::Malformed(_) | ProtocolError::PacketTooLarge { skipped: true, .. }
        )
    }
}

pub type Result<T, E = ProtocolError> = std::result::Result<T, E>;
