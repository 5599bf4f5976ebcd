//! COM_STMT_BULK_EXECUTE: one prepared statement run for many parameter rows (MariaDB's
//! array binding, announced with MARIADB_CLIENT_STMT_BULK_OPERATIONS).
//!
//! ```text
//! 0xFA | stmt_id u32 (0xFFFFFFFF: the statement prepared last) | flags u16 |
//! [if flags & SEND_TYPES_TO_SERVER: (type u8, flags u8 (0x80 = unsigned)) x num_params] |
//! rows until the end of the packet, each: num_params x
//!     (indicator u8: 0 NONE, 1 NULL, 2 DEFAULT, 3 IGNORE | [if NONE: binary value])
//! ```
//! The answer is one OK packet for all rows (or an ERR); the flag SEND_UNIT_RESULTS (64: a
//! result set of per-row results) needs MARIADB_CLIENT_BULK_UNIT_RESULTS, which onelog
//! does not announce, and is ignored.

use onelog_types::Value;

use crate::codec::Reader;
use crate::command::{com, decode_binary_value, ParamTypes};
use crate::error::{ProtocolError, Result};

/// Bulk flag: the parameter types precede the rows.
pub const SEND_TYPES_TO_SERVER: u16 = 128;
/// The statement id that names the statement prepared last on the connection.
pub const LAST_PREPARED: u32 = u32::MAX;

/// One parameter of one row.
#[derive(Clone, Debug, PartialEq)]
pub enum BulkParam {
    /// A value (NULL included).
    Value(Value),
    /// The column's default (INSERT and UPDATE).
    Default,
    /// The column's default in an INSERT; the column is left unchanged in an UPDATE.
    Ignore,
}

/// A decoded COM_STMT_BULK_EXECUTE.
#[derive(Clone, Debug, PartialEq)]
pub struct BulkExecute {
    pub stmt_id: u32,
    pub flags: u16,
    pub rows: Vec<Vec<BulkParam>>,
}

/// The statement id and flags of a COM_STMT_BULK_EXECUTE packet.
pub fn bulk_header(payload: &[u8]) -> Result<(u32, u16)> {
    let mut r = Reader::new(payload);
    if r.u8()? != com::STMT_BULK_EXECUTE {
        return Err(ProtocolError::Malformed(
            "not a COM_STMT_BULK_EXECUTE packet",
        ));
    }
    Ok((r.u32()?, r.u16()?))
}

/// Decodes the rows of a COM_STMT_BULK_EXECUTE for a statement of `num_params`
/// parameters. Types sent with the packet replace `types` (the statement's types from an
/// earlier execute, used otherwise).
pub fn decode_bulk(payload: &[u8], num_params: u16, types: &mut ParamTypes) -> Result<BulkExecute> {
    let (stmt_id, flags) = bulk_header(payload)?;
    let mut r = Reader::new(payload);
    r.skip(7)?;
    let n = num_params as usize;
    if n == 0 {
        return Err(ProtocolError::Malformed(
            "bulk execute of a statement without parameters",
        ));
    }
    if flags & SEND_TYPES_TO_SERVER != 0 {
        let mut t = Vec::with_capacity(n);
        for _ in 0..n {
            let code = r.u8()?;
            let flag = r.u8()?;
            t.push((code, flag & 0x80 != 0));
        }
        *types = t;
    }
    if types.len() != n {
        return Err(ProtocolError::Malformed("parameter types were never sent"));
    }
    let mut rows = Vec::new();
    while !r.is_empty() {
        let mut row = Vec::with_capacity(n);
        for &(code, unsigned) in types.iter() {
            row.push(match r.u8()? {
                0 => BulkParam::Value(decode_binary_value(&mut r, code, unsigned)?),
                1 => BulkParam::Value(Value::Null),
                2 => BulkParam::Default,
                3 => BulkParam::Ignore,
                _ => return Err(ProtocolError::Malformed("bad bulk parameter indicator")),
            });
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(ProtocolError::Malformed("bulk execute without rows"));
    }
    Ok(BulkExecute {
        stmt_id,
        flags,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use onelog_types::type_code as tc;

    #[test]
    fn rows_with_types_and_indicators() {
        let mut p = vec![com::STMT_BULK_EXECUTE];
        p.extend_from_slice(&7u32.to_le_bytes());
        p.extend_from_slice(&SEND_TYPES_TO_SERVER.to_le_bytes());
        p.extend_from_slice(&[tc::LONG, 0x80, tc::VAR_STRING, 0]);
        // (5, 'ab'), (NULL, DEFAULT), (IGNORE, '')
        p.push(0);
        p.extend_from_slice(&5u32.to_le_bytes());
        p.extend_from_slice(&[0, 2, b'a', b'b']);
        p.extend_from_slice(&[1, 2]);
        p.extend_from_slice(&[3, 0, 0]);
        let mut types = Vec::new();
        let b = decode_bulk(&p, 2, &mut types).unwrap();
        assert_eq!(b.stmt_id, 7);
        assert_eq!(types, vec![(tc::LONG, true), (tc::VAR_STRING, false)]);
        assert_eq!(
            b.rows,
            vec![
                vec![
                    BulkParam::Value(Value::UInt(5)),
                    BulkParam::Value(Value::Bytes(b"ab".to_vec()))
                ],
                vec![BulkParam::Value(Value::Null), BulkParam::Default],
                vec![
                    BulkParam::Ignore,
                    BulkParam::Value(Value::Bytes(Vec::new()))
                ],
            ]
        );
        // Types remembered from before; a truncated row is malformed.
        let mut q = vec![com::STMT_BULK_EXECUTE];
        q.extend_from_slice(&7u32.to_le_bytes());
        q.extend_from_slice(&0u16.to_le_bytes());
        q.extend_from_slice(&[1, 0, 1]);
        assert!(decode_bulk(&q, 2, &mut types).is_err());
        q.extend_from_slice(&[0]);
        assert_eq!(decode_bulk(&q, 2, &mut types).unwrap().rows.len(), 1);
    }
}
