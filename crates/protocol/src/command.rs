//! Client commands (the first byte of a packet after the handshake) and the binary
//! parameters of COM_STMT_EXECUTE.

use crate::codec::{lossy, Reader};
use crate::error::{ProtocolError, Result};
use crate::handshake::capability::*;
use onelog_types::{type_code as tc, Date, DateTime, Decimal, Time, Value};
use std::collections::HashMap;

/// Command bytes (`COM_*`).
pub mod com {
    pub const SLEEP: u8 = 0x00;
    pub const QUIT: u8 = 0x01;
    pub const INIT_DB: u8 = 0x02;
    pub const QUERY: u8 = 0x03;
    pub const FIELD_LIST: u8 = 0x04;
    pub const CREATE_DB: u8 = 0x05;
    pub const DROP_DB: u8 = 0x06;
    pub const REFRESH: u8 = 0x07;
    pub const SHUTDOWN: u8 = 0x08;
    pub const STATISTICS: u8 = 0x09;
    pub const PROCESS_INFO: u8 = 0x0A;
    pub const CONNECT: u8 = 0x0B;
    pub const PROCESS_KILL: u8 = 0x0C;
    pub const DEBUG: u8 = 0x0D;
    pub const PING: u8 = 0x0E;
    pub const TIME: u8 = 0x0F;
    pub const DELAYED_INSERT: u8 = 0x10;
    pub const CHANGE_USER: u8 = 0x11;
    pub const BINLOG_DUMP: u8 = 0x12;
    pub const TABLE_DUMP: u8 = 0x13;
    pub const CONNECT_OUT: u8 = 0x14;
    pub const REGISTER_SLAVE: u8 = 0x15;
    pub const STMT_PREPARE: u8 = 0x16;
    pub const STMT_EXECUTE: u8 = 0x17;
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    pub const STMT_CLOSE: u8 = 0x19;
    pub const STMT_RESET: u8 = 0x1A;
    pub const SET_OPTION: u8 = 0x1B;
    pub const STMT_FETCH: u8 = 0x1C;
    pub const STMT_BULK_EXECUTE: u8 = 0xFA;
    pub const DAEMON: u8 = 0x1D;
    pub const BINLOG_DUMP_GTID: u8 = 0x1E;
    pub const RESET_CONNECTION: u8 = 0x1F;
}

/// COM_SET_OPTION values.
pub const MYSQL_OPTION_MULTI_STATEMENTS_ON: u16 = 0;
pub const MYSQL_OPTION_MULTI_STATEMENTS_OFF: u16 = 1;

/// COM_STMT_EXECUTE cursor flags.
pub mod cursor {
    pub const NO_CURSOR: u8 = 0;
    pub const READ_ONLY: u8 = 1;
    pub const FOR_UPDATE: u8 = 2;
    pub const SCROLLABLE: u8 = 4;
}

/// COM_CHANGE_USER body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeUser {
    pub user: String,
    pub auth_response: Vec<u8>,
    pub database: Option<String>,
    pub collation: Option<u16>,
    pub auth_plugin: Option<String>,
    pub attributes: Vec<(String, String)>,
}

/// COM_REGISTER_SLAVE body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterSlave {
    pub server_id: u32,
    pub host: String,
    pub user: String,
    pub password: String,
    pub port: u16,
    pub rank: u32,
    pub master_id: u32,
}

/// A parsed client command, borrowing from the packet payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command<'a> {
    Quit,
    InitDb(&'a [u8]),
    /// Query text as sent (usually UTF-8, but binary literals may make it otherwise).
    Query(&'a [u8]),
    FieldList {
        table: &'a [u8],
        wildcard: &'a [u8],
    },
    Statistics,
    /// COM_REFRESH: `REFRESH_*` option bits (one byte).
    Refresh(u8),
    /// COM_SHUTDOWN: the shutdown level (ignored; absent in old clients).
    Shutdown,
    ProcessKill(u32),
    Ping,
    ChangeUser(ChangeUser),
    BinlogDump {
        position: u32,
        flags: u16,
        server_id: u32,
        file: &'a [u8],
    },
    /// MySQL's COM_BINLOG_DUMP_GTID (MariaDB replicas use COM_BINLOG_DUMP with
    /// @slave_connect_state instead).
    BinlogDumpGtid {
        flags: u16,
        server_id: u32,
        file: &'a [u8],
        position: u64,
        data: &'a [u8],
    },
    RegisterSlave(RegisterSlave),
    StmtPrepare(&'a [u8]),
    /// Parameters are decoded separately with [`decode_execute_params`], which needs the
    /// statement's parameter count.
    StmtExecute {
        stmt_id: u32,
        flags: u8,
        iteration_count: u32,
    },
    StmtSendLongData {
        stmt_id: u32,
        param_id: u16,
        data: &'a [u8],
    },
    /// COM_STMT_BULK_EXECUTE; rows are decoded separately with
    /// [`decode_bulk`](crate::decode_bulk), which needs the statement's parameter count.
    StmtBulkExecute {
        stmt_id: u32,
        flags: u16,
    },
    StmtClose(u32),
    StmtReset(u32),
    SetOption(u16),
    StmtFetch {
        stmt_id: u32,
        num_rows: u32,
    },
    ResetConnection,
    /// Any other command byte (the server answers ER_UNKNOWN_COM_ERROR 1047).
    Unknown(u8),
}

impl Command<'_> {
    /// Whether the server must not send any reply (COM_QUIT, COM_STMT_CLOSE,
    /// COM_STMT_SEND_LONG_DATA).
    pub fn expects_no_reply(&self) -> bool {
        matches!(
            self,
            Command::Quit | Command::StmtClose(_) | Command::StmtSendLongData { .. }
        )
    }
}

/// Parses a command packet. `client_capabilities` (from the handshake response) decides
/// the layout of COM_CHANGE_USER.
pub fn parse_command(payload: &[u8], client_capabilities: u64) -> Result<Command<'_>> {
    let mut r = Reader::new(payload);
    let cmd = r
        .u8()
        .map_err(|_| ProtocolError::Malformed("empty command packet"))?;
    Ok(match cmd {
        com::QUIT => Command::Quit,
        com::INIT_DB => Command::InitDb(r.rest()),
        com::QUERY => Command::Query(r.rest()),
        com::FIELD_LIST => {
            let table = r.null_terminated_or_rest();
            Command::FieldList {
                table,
                wildcard: r.rest(),
            }
        }
        com::STATISTICS => Command::Statistics,
        com::REFRESH => Command::Refresh(r.u8()?),
        com::SHUTDOWN => Command::Shutdown,
        com::PROCESS_KILL => Command::ProcessKill(r.u32()?),
        com::PING => Command::Ping,
        com::CHANGE_USER => Command::ChangeUser(parse_change_user(&mut r, client_capabilities)?),
        com::BINLOG_DUMP => Command::BinlogDump {
            position: r.u32()?,
            flags: r.u16()?,
            server_id: r.u32()?,
            file: r.rest(),
        },
        com::BINLOG_DUMP_GTID => {
            let flags = r.u16()?;
            let server_id = r.u32()?;
            let name_len = r.u32()? as usize;
            let file = r.take(name_len)?;
            let position = r.u64()?;
            let data = if r.is_empty() {
                &[][..]
            } else {
                let n = r.u32()? as usize;
                r.take(n)?
            };
            Command::BinlogDumpGtid {
                flags,
                server_id,
                file,
                position,
                data,
            }
        }
        com::REGISTER_SLAVE => Command::RegisterSlave(RegisterSlave {
            server_id: r.u32()?,
            host: lossy(r.u8_prefixed()?),
            user: lossy(r.u8_prefixed()?),
            password: lossy(r.u8_prefixed()?),
            port: r.u16()?,
            rank: if r.is_empty() { 0 } else { r.u32()? },
            master_id: if r.is_empty() { 0 } else { r.u32()? },
        }),
        com::STMT_PREPARE => Command::StmtPrepare(r.rest()),
        com::STMT_EXECUTE => Command::StmtExecute {
            stmt_id: r.u32()?,
            flags: r.u8()?,
            iteration_count: r.u32()?,
        },
        com::STMT_BULK_EXECUTE => Command::StmtBulkExecute {
            stmt_id: r.u32()?,
            flags: r.u16()?,
        },
        com::STMT_SEND_LONG_DATA => Command::StmtSendLongData {
            stmt_id: r.u32()?,
            param_id: r.u16()?,
            data: r.rest(),
        },
        com::STMT_CLOSE => Command::StmtClose(r.u32()?),
        com::STMT_RESET => Command::StmtReset(r.u32()?),
        com::SET_OPTION => Command::SetOption(r.u16()?),
        com::STMT_FETCH => Command::StmtFetch {
            stmt_id: r.u32()?,
            num_rows: r.u32()?,
        },
        com::RESET_CONNECTION => Command::ResetConnection,
        other => Command::Unknown(other),
    })
}

/// COM_CHANGE_USER:
/// ```text
/// user NUL | auth: u8 len + data (SECURE_CONNECTION) or NUL-terminated | database NUL |
/// [collation u16 | [plugin NUL if PLUGIN_AUTH] | [attrs if CONNECT_ATTRS]]
/// ```
fn parse_change_user(r: &mut Reader<'_>, caps: u64) -> Result<ChangeUser> {
    let user = lossy(r.null_terminated_or_rest());
    let auth_response = if r.is_empty() {
        Vec::new()
    } else if caps & CLIENT_SECURE_CONNECTION != 0 {
        r.u8_prefixed()?.to_vec()
    } else {
        r.null_terminated_or_rest().to_vec()
    };
    let database = if r.is_empty() {
        None
    } else {
        Some(lossy(r.null_terminated_or_rest())).filter(|d| !d.is_empty())
    };
    let collation = if r.remaining() >= 2 {
        Some(r.u16()?)
    } else {
        None
    };
    let auth_plugin = if caps & CLIENT_PLUGIN_AUTH != 0 && !r.is_empty() {
        Some(lossy(r.null_terminated_or_rest()))
    } else {
        None
    };
    let attributes = crate::handshake::connect_attributes(r, caps)?;
    Ok(ChangeUser {
        user,
        auth_response,
        database,
        collation,
        auth_plugin,
        attributes,
    })
}

/// Parameter types remembered per statement: `(type code, unsigned)`.
pub type ParamTypes = Vec<(u8, bool)>;

/// Decodes the parameters of a COM_STMT_EXECUTE packet (the full payload, command byte
/// included).
/// ```text
/// 0x17 | stmt_id u32 | flags u8 | iteration_count u32 |
/// [if num_params > 0:
///    NULL bitmap [(num_params + 7) / 8] (parameter i is bit i) |
///    new_params_bound u8 |
///    [if new_params_bound == 1: (type u8, flags u8 (0x80 = unsigned)) x num_params] |
///    values of the non-NULL parameters without long data]
/// ```
/// Types are sent only when `new_params_bound` is 1 (normally on the first execute):
/// they are stored into `types` and reused later. Parameters that received
/// COM_STMT_SEND_LONG_DATA take their value from `long_data` (which is drained: long data
/// is consumed by the execute).
///
/// Values: TINY/SHORT/YEAR/LONG/INT24/LONGLONG as `Int` (`UInt` when unsigned); FLOAT
/// and DOUBLE as `Double`; DECIMAL/NEWDECIMAL as `Decimal` (`Bytes` when not parseable);
/// DATE as `Date`, DATETIME/TIMESTAMP as `DateTime`, TIME as `Time`; NULL type as
/// `Null`; strings, blobs, ENUM, SET, BIT, JSON, GEOMETRY as `Bytes`.
pub fn decode_execute_params(
    payload: &[u8],
    num_params: u16,
    types: &mut ParamTypes,
    long_data: &mut HashMap<u16, Vec<u8>>,
) -> Result<Vec<Value>> {
    let mut r = Reader::new(payload);
    if r.u8()? != com::STMT_EXECUTE {
        return Err(ProtocolError::Malformed("not a COM_STMT_EXECUTE packet"));
    }
    r.skip(9)?;
    let n = num_params as usize;
    if n == 0 {
        return Ok(Vec::new());
    }
    let null_bitmap = r.take(n.div_ceil(8))?;
    let bound = r.u8()?;
    if bound == 1 {
        let mut t = Vec::with_capacity(n);
        for _ in 0..n {
            let code = r.u8()?;
            let flag = r.u8()?;
            t.push((code, flag & 0x80 != 0));
        }
        *types = t;
    } else if bound != 0 {
        return Err(ProtocolError::Malformed("bad new-params-bound flag"));
    }
    if types.len() != n {
        return Err(ProtocolError::Malformed("parameter types were never sent"));
    }
    let mut values = Vec::with_capacity(n);
    for (i, &(code, unsigned)) in types.iter().enumerate() {
        if let Some(data) = long_data.remove(&(i as u16)) {
            values.push(Value::Bytes(data));
            continue;
        }
        if null_bitmap[i / 8] & (1 << (i % 8)) != 0 {
            values.push(Value::Null);
            continue;
        }
        values.push(decode_binary_value(&mut r, code, unsigned)?);
    }
    long_data.clear();
    Ok(values)
}

fn int_value(v: i64, unsigned_v: u64, unsigned: bool) -> Value {
    if unsigned {
        Value::UInt(unsigned_v)
    } else {
        Value::Int(v)
    }
}

/// Decodes one binary-protocol value of type `code`.
pub fn decode_binary_value(r: &mut Reader<'_>, code: u8, unsigned: bool) -> Result<Value> {
    Ok(match code {
        tc::NULL => Value::Null,
        tc::TINY => {
            let b = r.u8()?;
            int_value(b as i8 as i64, b as u64, unsigned)
        }
        tc::SHORT | tc::YEAR => {
            let v = r.u16()?;
            int_value(v as i16 as i64, v as u64, unsigned)
        }
        tc::LONG | tc::INT24 => {
            let v = r.u32()?;
            int_value(v as i32 as i64, v as u64, unsigned)
        }
        tc::LONGLONG => {
            let v = r.u64()?;
            int_value(v as i64, v, unsigned)
        }
        tc::FLOAT => Value::Double(r.f32()? as f64),
        tc::DOUBLE => Value::Double(r.f64()?),
        tc::DECIMAL | tc::NEWDECIMAL => {
            let b = r.lenenc_bytes()?;
            match std::str::from_utf8(b)
                .ok()
                .and_then(|s| s.parse::<Decimal>().ok())
            {
                Some(d) => Value::Decimal(d),
                None => Value::Bytes(b.to_vec()),
            }
        }
        tc::DATE | tc::DATETIME | tc::TIMESTAMP | tc::NEWDATE => {
            let len = r.u8()?;
            let mut dt = DateTime {
                date: Date {
                    year: 0,
                    month: 0,
                    day: 0,
                },
                hour: 0,
                minute: 0,
                second: 0,
                micro: 0,
            };
            match len {
                0 | 4 | 7 | 11 => {}
                _ => return Err(ProtocolError::Malformed("bad binary date length")),
            }
            if len >= 4 {
                dt.date.year = r.u16()?;
                dt.date.month = r.u8()?;
                dt.date.day = r.u8()?;
            }
            if len >= 7 {
                dt.hour = r.u8()?;
                dt.minute = r.u8()?;
                dt.second = r.u8()?;
            }
            if len == 11 {
                dt.micro = r.u32()?;
            }
            if code == tc::DATE || code == tc::NEWDATE {
                Value::Date(dt.date)
            } else {
                Value::DateTime(dt)
            }
        }
        tc::TIME | tc::TIME2 => {
            let len = r.u8()?;
            match len {
                0 => Value::Time(Time {
                    negative: false,
                    hours: 0,
                    minute: 0,
                    second: 0,
                    micro: 0,
                }),
                8 | 12 => {
                    let negative = r.u8()? != 0;
                    let days = r.u32()?;
                    let hour = r.u8()?;
                    let minute = r.u8()?;
                    let second = r.u8()?;
                    let micro = if len == 12 { r.u32()? } else { 0 };
                    Value::Time(Time {
                        negative,
                        hours: days.saturating_mul(24).saturating_add(hour as u32),
                        minute,
                        second,
                        micro,
                    })
                }
                _ => return Err(ProtocolError::Malformed("bad binary time length")),
            }
        }
        tc::VARCHAR
        | tc::BIT
        | tc::ENUM
        | tc::SET
        | tc::TINY_BLOB
        | tc::MEDIUM_BLOB
        | tc::LONG_BLOB
        | tc::BLOB
        | tc::VAR_STRING
        | tc::STRING
        | tc::GEOMETRY
        | 245 => Value::Bytes(r.lenenc_bytes()?.to_vec()),
        _ => return Err(ProtocolError::Malformed("unknown parameter type")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{put_lenenc_bytes, put_null_str, put_u16, put_u32};

    #[test]
    fn simple_commands() {
        assert_eq!(parse_command(b"\x01", 0).unwrap(), Command::Quit);
        assert_eq!(
            parse_command(b"\x03SELECT 1", 0).unwrap(),
            Command::Query(b"SELECT 1")
        );
        assert_eq!(
            parse_command(b"\x02test", 0).unwrap(),
            Command::InitDb(b"test")
        );
        assert_eq!(parse_command(b"\x0e", 0).unwrap(), Command::Ping);
        assert_eq!(parse_command(b"\x09", 0).unwrap(), Command::Statistics);
        assert_eq!(parse_command(b"\x1f", 0).unwrap(), Command::ResetConnection);
        assert_eq!(
            parse_command(b"\x0c\x05\x00\x00\x00", 0).unwrap(),
            Command::ProcessKill(5)
        );
        assert_eq!(
            parse_command(b"\x04t1\0%", 0).unwrap(),
            Command::FieldList {
                table: b"t1",
                wildcard: b"%"
            }
        );
        assert_eq!(
            parse_command(b"\x1b\x01\x00", 0).unwrap(),
            Command::SetOption(1)
        );
        assert_eq!(
            parse_command(b"\x16SELECT ?", 0).unwrap(),
            Command::StmtPrepare(b"SELECT ?")
        );
        assert_eq!(
            parse_command(b"\x19\x07\x00\x00\x00", 0).unwrap(),
            Command::StmtClose(7)
        );
        assert_eq!(
            parse_command(b"\x1a\x07\x00\x00\x00", 0).unwrap(),
            Command::StmtReset(7)
        );
        assert_eq!(
            parse_command(b"\x1c\x07\x00\x00\x00\x0a\x00\x00\x00", 0).unwrap(),
            Command::StmtFetch {
                stmt_id: 7,
                num_rows: 10
            }
        );
        assert_eq!(
            parse_command(b"\x18\x01\x00\x00\x00\x02\x00abc", 0).unwrap(),
            Command::StmtSendLongData {
                stmt_id: 1,
                param_id: 2,
                data: b"abc"
            }
        );
        assert_eq!(parse_command(b"\x1d", 0).unwrap(), Command::Unknown(0x1d));
        assert!(parse_command(b"", 0).is_err());
        assert!(parse_command(b"\x0c\x05", 0).is_err());
        assert!(parse_command(b"\x19\x07", 0).is_err());
        assert!(Command::Quit.expects_no_reply());
        assert!(!Command::Ping.expects_no_reply());
    }

    #[test]
    fn replication_commands() {
        let mut b = vec![com::BINLOG_DUMP];
        put_u32(&mut b, 4);
        put_u16(&mut b, 2);
        put_u32(&mut b, 9);
        b.extend_from_slice(b"mysql-bin.000001");
        assert_eq!(
            parse_command(&b, 0).unwrap(),
            Command::BinlogDump {
                position: 4,
                flags: 2,
                server_id: 9,
                file: b"mysql-bin.000001"
            }
        );
        let mut b = vec![com::REGISTER_SLAVE];
        put_u32(&mut b, 2);
        b.extend_from_slice(b"\x04host\x04repl\x00");
        put_u16(&mut b, 3306);
        put_u32(&mut b, 0);
        put_u32(&mut b, 1);
        let Command::RegisterSlave(rs) = parse_command(&b, 0).unwrap() else {
            panic!()
        };
        assert_eq!(
            (rs.server_id, rs.host.as_str(), rs.user.as_str()),
            (2, "host", "repl")
        );
        assert_eq!((rs.port, rs.rank, rs.master_id), (3306, 0, 1));
        assert!(parse_command(&b[..8], 0).is_err());

        let mut b = vec![com::BINLOG_DUMP_GTID];
        put_u16(&mut b, 0);
        put_u32(&mut b, 3);
        put_u32(&mut b, 3);
        b.extend_from_slice(b"bin");
        b.extend_from_slice(&4u64.to_le_bytes());
        put_u32(&mut b, 2);
        b.extend_from_slice(b"xy");
        assert_eq!(
            parse_command(&b, 0).unwrap(),
            Command::BinlogDumpGtid {
                flags: 0,
                server_id: 3,
                file: b"bin",
                position: 4,
                data: b"xy"
            }
        );
    }

    #[test]
    fn change_user() {
        let caps = CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH;
        let mut b = vec![com::CHANGE_USER];
        put_null_str(&mut b, b"bob");
        b.push(3);
        b.extend_from_slice(b"xyz");
        put_null_str(&mut b, b"db1");
        put_u16(&mut b, 45);
        put_null_str(&mut b, b"mysql_native_password");
        let Command::ChangeUser(cu) = parse_command(&b, caps).unwrap() else {
            panic!()
        };
        assert_eq!(cu.user, "bob");
        assert_eq!(cu.auth_response, b"xyz");
        assert_eq!(cu.database.as_deref(), Some("db1"));
        assert_eq!(cu.collation, Some(45));
        assert_eq!(cu.auth_plugin.as_deref(), Some("mysql_native_password"));
    }

    fn execute_header(stmt: u32) -> Vec<u8> {
        let mut b = vec![com::STMT_EXECUTE];
        put_u32(&mut b, stmt);
        b.push(0);
        put_u32(&mut b, 1);
        b
    }

    #[test]
    fn execute_params_all_types() {
        let mut b = execute_header(1);
        let types: &[(u8, u8)] = &[
            (tc::TINY, 0),
            (tc::TINY, 0x80),
            (tc::SHORT, 0),
            (tc::LONG, 0),
            (tc::LONGLONG, 0x80),
            (tc::FLOAT, 0),
            (tc::DOUBLE, 0),
            (tc::NEWDECIMAL, 0),
            (tc::VAR_STRING, 0),
            (tc::DATE, 0),
            (tc::DATETIME, 0),
            (tc::TIME, 0),
            (tc::NULL, 0),
            (tc::BLOB, 0),
        ];
        let n = types.len();
        // NULL bitmap: param 12 (NULL type) and 13 (NULL value).
        let mut bitmap = vec![0u8; n.div_ceil(8)];
        bitmap[1] |= 1 << 4 | 1 << 5;
        b.extend_from_slice(&bitmap);
        b.push(1);
        for &(t, f) in types {
            b.push(t);
            b.push(f);
        }
        b.push(0xFE); // -2
        b.push(0xFE); // 254 unsigned
        b.extend_from_slice(&(-300i16).to_le_bytes());
        b.extend_from_slice(&(-70000i32).to_le_bytes());
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        b.extend_from_slice(&1.5f32.to_le_bytes());
        b.extend_from_slice(&2.25f64.to_le_bytes());
        put_lenenc_bytes(&mut b, b"-12.50");
        put_lenenc_bytes(&mut b, b"hello");
        b.extend_from_slice(&[4, 0xE8, 0x07, 1, 31]);
        b.extend_from_slice(&[11, 0xE8, 0x07, 1, 31, 23, 59, 58, 0x40, 0xE2, 0x01, 0x00]);
        b.extend_from_slice(&[8, 1, 1, 0, 0, 0, 2, 3, 4]);
        let mut remembered = Vec::new();
        let mut long = HashMap::new();
        let v = decode_execute_params(&b, n as u16, &mut remembered, &mut long).unwrap();
        assert_eq!(v[0], Value::Int(-2));
        assert_eq!(v[1], Value::UInt(254));
        assert_eq!(v[2], Value::Int(-300));
        assert_eq!(v[3], Value::Int(-70000));
        assert_eq!(v[4], Value::UInt(u64::MAX));
        assert_eq!(v[5], Value::Double(1.5));
        assert_eq!(v[6], Value::Double(2.25));
        assert_eq!(v[7], Value::Decimal("-12.50".parse().unwrap()));
        assert_eq!(v[8], Value::str("hello"));
        assert_eq!(
            v[9],
            Value::Date(Date {
                year: 2024,
                month: 1,
                day: 31
            })
        );
        assert_eq!(
            v[10],
            Value::DateTime(DateTime {
                date: Date {
                    year: 2024,
                    month: 1,
                    day: 31
                },
                hour: 23,
                minute: 59,
                second: 58,
                micro: 123_456
            })
        );
        assert_eq!(
            v[11],
            Value::Time(Time {
                negative: true,
                hours: 26,
                minute: 3,
                second: 4,
                micro: 0
            })
        );
        assert_eq!(v[12], Value::Null);
        assert_eq!(v[13], Value::Null);
        assert_eq!(remembered.len(), n);
        assert_eq!(remembered[1], (tc::TINY, true));

        // Truncating the packet anywhere in the values is an error, never a panic.
        for cut in 0..b.len() {
            let _ = decode_execute_params(&b[..cut], n as u16, &mut remembered.clone(), &mut long);
        }
        assert!(
            decode_execute_params(&b[..b.len() - 1], n as u16, &mut remembered, &mut long).is_err()
        );
    }

    #[test]
    fn execute_reuses_remembered_types_and_long_data() {
        // First execute: types bound.
        let mut b = execute_header(3);
        b.push(0); // bitmap for 2 params
        b.push(1);
        b.extend_from_slice(&[tc::LONG, 0, tc::BLOB, 0]);
        b.extend_from_slice(&7i32.to_le_bytes());
        put_lenenc_bytes(&mut b, b"x");
        let mut types = Vec::new();
        let mut long = HashMap::new();
        let v = decode_execute_params(&b, 2, &mut types, &mut long).unwrap();
        assert_eq!(v, vec![Value::Int(7), Value::str("x")]);

        // Second execute: no types; param 1 sent as long data.
        let mut b = execute_header(3);
        b.push(0);
        b.push(0);
        b.extend_from_slice(&8i32.to_le_bytes());
        long.insert(1u16, b"long value".to_vec());
        let v = decode_execute_params(&b, 2, &mut types, &mut long).unwrap();
        assert_eq!(v, vec![Value::Int(8), Value::str("long value")]);
        assert!(long.is_empty());

        // Without remembered types the packet is malformed.
        let mut none = Vec::new();
        assert!(decode_execute_params(&b, 2, &mut none, &mut long).is_err());
        // No parameters: nothing after the header is needed.
        assert_eq!(
            decode_execute_params(&execute_header(1), 0, &mut none, &mut long).unwrap(),
            vec![]
        );
        assert_eq!(
            parse_command(&execute_header(9), 0).unwrap(),
            Command::StmtExecute {
                stmt_id: 9,
                flags: 0,
                iteration_count: 1
            }
        );
    }
}
