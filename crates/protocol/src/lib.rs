//! onelog-protocol: the MariaDB client/server protocol, server side (and the client side a
//! replica needs, [`Client`]), over any blocking `Read + Write` stream.
//!
//! - [`PacketStream`]: framing, sequence ids, split/join of 16 MiB packets,
//!   `max_allowed_packet`, buffered writes with explicit flush, stream switch for TLS.
//! - `codec`: length-encoded integers and strings, the bounds-checked [`Reader`].
//! - `handshake`: Initial Handshake v10, SSLRequest, HandshakeResponse41, AuthSwitchRequest,
//!   `mysql_native_password`.
//! - `response`: OK, ERR and EOF packets, status flags.
//! - `resultset`: column definitions, text and binary rows, the prepare response.
//! - `command`: client commands and COM_STMT_EXECUTE parameters.
//! - `client`: log in, text queries, COM_REGISTER_SLAVE, COM_BINLOG_DUMP and its stream.
//!
//! Classic EOF packets are used throughout (CLIENT_DEPRECATE_EOF is never announced).

mod bulk;
mod client;
mod codec;
mod command;
mod error;
#[cfg(test)]
mod fuzz_tests;
mod handshake;
mod packet;
mod response;
mod resultset;
#[cfg(test)]
mod testutil;

pub use bulk::{decode_bulk, BulkExecute, BulkParam, LAST_PREPARED};
pub use client::{decode_err, Client, ClientError, ClientResult, DumpPacket, Rows};
pub use codec::{
    lenenc_int_len, put_lenenc_bytes, put_lenenc_int, put_null_str, put_u16, put_u24, put_u32,
    put_u64, Reader,
};
pub use command::{
    com, cursor, decode_binary_value, decode_execute_params, parse_command, ChangeUser, Command,
    ParamTypes, RegisterSlave, MYSQL_OPTION_MULTI_STATEMENTS_OFF, MYSQL_OPTION_MULTI_STATEMENTS_ON,
};
pub use error::{ProtocolError, Result};
pub use handshake::{
    access_denied_error, capability, encode_auth_switch_request, native_auth_switch_request,
    native_password_token, new_scramble, parse_handshake_response, password_hash,
    server_capabilities, verify_native_password, ClientHello, HandshakeResponse, InitialHandshake,
    DEFAULT_SERVER_VERSION, NATIVE_PASSWORD_PLUGIN, SCRAMBLE_LEN,
};
pub use packet::{PacketStream, DEFAULT_MAX_ALLOWED_PACKET, MAX_PACKET_CHUNK, WRITE_SPILL};
pub use response::{encode_eof, encode_err, status, OkPacket, MAX_ERROR_MESSAGE};
pub use resultset::{
    column_flag, encode_binary_row, encode_prepare_ok, encode_text_row, param_definition,
    put_text_value, wire_type, wire_types, ColumnInfo, FieldType, WireType, NOT_FIXED_DEC,
    NOT_FIXED_DEC_EXPR,
};

/// Decoders exposed for fuzzing: each must return (an error) and never panic on any input.
#[doc(hidden)]
pub mod fuzz {
    use super::*;
    use std::collections::HashMap;

    /// Runs every decoder over `data`.
    pub fn all_decoders(data: &[u8]) {
        let _ = parse_command(data, u64::MAX);
        let _ = parse_command(data, 0);
        let _ = parse_handshake_response(data);
        let mut long = HashMap::new();
        if data.len() > 2 {
            let n = data[0] as u16;
            let mut types = Vec::new();
            let mut payload = vec![com::STMT_EXECUTE];
            payload.extend_from_slice(&data[1..]);
            let _ = decode_execute_params(&payload, n, &mut types, &mut long);
            long.insert(0, data.to_vec());
            let _ = decode_execute_params(&payload, n, &mut types, &mut long);
        }
        let mut r = Reader::new(data);
        while !r.is_empty() {
            let code = r.u8().unwrap_or(0);
            if decode_binary_value(&mut r, code, code & 1 == 1).is_err() {
                break;
            }
        }
        let mut ps = PacketStream::new(data);
        ps.set_max_allowed_packet(1 << 20);
        while ps.read_packet().is_ok() {}
    }
}
