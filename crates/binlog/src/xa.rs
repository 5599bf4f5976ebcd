//! XA transaction ids and the XA parts of MariaDB 10.5+'s binlog.
//!
//! An XA transaction is logged in two groups:
//! ```text
//! GTID(TRANSACTIONAL|ALLOW_PARALLEL|PREPARED_XA, xid) {ANNOTATE_ROWS TABLE_MAP+ ROWS+}*
//!      QUERY "XA END X'..',X'..',n" XA_PREPARE(xid)
//! GTID(STANDALONE|TRANSACTIONAL|ALLOW_PARALLEL|COMPLETED_XA, xid) QUERY "XA COMMIT X'..',X'..',n"
//! ```
//! (or `XA ROLLBACK ...` in the second group). `XA COMMIT ... ONE PHASE` is logged as an
//! ordinary transaction.
//!
//! Formats:
//! - the XID after a GTID event's `flags2` (and its commit id, when there is one):
//!   `formatID u32 | gtrid_len u8 | bqual_len u8 | gtrid | bqual`;
//! - XA_PREPARE_LOG_EVENT (type 38) body:
//!   `one_phase u8 | formatID u32 | gtrid_len u32 | bqual_len u32 | gtrid | bqual`.

use crate::codec::Cursor;
use crate::error::{BinlogError, Result};

/// The longest gtrid and bqual (`MAXGTRIDSIZE`, `MAXBQUALSIZE`).
pub const MAX_PART: usize = 64;

/// An X/Open XID: format id, global transaction id (1 to 64 bytes) and branch qualifier
/// (0 to 64 bytes). Fixed-size, so that events holding one stay `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct XaXid {
    pub format_id: u32,
    gtrid_len: u8,
    bqual_len: u8,
    data: [u8; 2 * MAX_PART],
}

impl std::fmt::Debug for XaXid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_sql())
    }
}

impl XaXid {
    /// None when a part is too long or the gtrid is empty.
    pub fn new(format_id: u32, gtrid: &[u8], bqual: &[u8]) -> Option<XaXid> {
        if gtrid.is_empty() || gtrid.len() > MAX_PART || bqual.len() > MAX_PART {
            return None;
        }
        let mut data = [0u8; 2 * MAX_PART];
        data[..gtrid.len()].copy_from_slice(gtrid);
        data[gtrid.len()..gtrid.len() + bqual.len()].copy_from_slice(bqual);
        Some(XaXid {
            format_id,
            gtrid_len: gtrid.len() as u8,
            bqual_len: bqual.len() as u8,
            data,
        })
    }

    pub fn gtrid(&self) -> &[u8] {
        &self.data[..self.gtrid_len as usize]
    }

    pub fn bqual(&self) -> &[u8] {
        &self.data[self.gtrid_len as usize..self.data_len()]
    }

    /// gtrid then bqual.
    pub fn data(&self) -> &[u8] {
        &self.data[..self.data_len()]
    }

    fn data_len(&self) -> usize {
        self.gtrid_len as usize + self.bqual_len as usize
    }

    /// The XID as MariaDB writes it in the statements it logs: `X'hex',X'hex',formatID`.
    pub fn to_sql(&self) -> String {
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        format!(
            "X'{}',X'{}',{}",
            hex(self.gtrid()),
            hex(self.bqual()),
            self.format_id
        )
    }

    /// Bytes the XID takes after a GTID event's flags.
    pub fn gtid_len(&self) -> usize {
        6 + self.data_len()
    }

    // Format: formatID u32 | gtrid_len u8 | bqual_len u8 | gtrid | bqual
    pub fn encode_in_gtid(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.format_id.to_le_bytes());
        out.push(self.gtrid_len);
        out.push(self.bqual_len);
        out.extend_from_slice(self.data());
    }

    pub(crate) fn decode_in_gtid(c: &mut Cursor) -> Result<XaXid> {
        let format_id = c.u32()?;
        let g = c.u8()? as usize;
        let b = c.u8()? as usize;
        let data = c.bytes(g + b)?;
        XaXid::new(format_id, &data[..g], &data[g..])
            .ok_or_else(|| BinlogError::decode("GTID: malformed XA XID"))
    }

    /// A key that sorts and compares like the XID: `formatID u32 BE | gtrid_len u8 |
    /// bqual_len u8 | gtrid | bqual`.
    pub fn key_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(6 + self.data_len());
        v.extend_from_slice(&self.format_id.to_be_bytes());
        v.push(self.gtrid_len);
        v.push(self.bqual_len);
        v.extend_from_slice(self.data());
        v
    }

    pub fn from_key_bytes(k: &[u8]) -> Option<XaXid> {
        if k.len() < 6 {
            return None;
        }
        let format_id = u32::from_be_bytes(k[..4].try_into().ok()?);
        let (g, b) = (k[4] as usize, k[5] as usize);
        let data = k.get(6..6 + g + b)?;
        XaXid::new(format_id, &data[..g], &data[g..])
    }
}

/// XA_PREPARE_LOG_EVENT (38).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XaPrepare {
    pub one_phase: bool,
    pub xid: XaXid,
}

impl XaPrepare {
    // Format: one_phase u8 | formatID u32 | gtrid_len u32 | bqual_len u32 | gtrid | bqual
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.one_phase as u8);
        out.extend_from_slice(&self.xid.format_id.to_le_bytes());
        out.extend_from_slice(&(self.xid.gtrid_len as u32).to_le_bytes());
        out.extend_from_slice(&(self.xid.bqual_len as u32).to_le_bytes());
        out.extend_from_slice(self.xid.data());
    }

    pub(crate) fn decode(c: &mut Cursor) -> Result<XaPrepare> {
        let one_phase = c.u8()? != 0;
        let format_id = c.u32()?;
        let g = c.u32()? as usize;
        let b = c.u32()? as usize;
        if g > MAX_PART || b > MAX_PART {
            return Err(BinlogError::decode("XA_PREPARE: XID part too long"));
        }
        let data = c.bytes(g + b)?;
        let xid = XaXid::new(format_id, &data[..g], &data[g..])
            .ok_or_else(|| BinlogError::decode("XA_PREPARE: malformed XID"))?;
        Ok(XaPrepare { one_phase, xid })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_form_and_key_round_trip() {
        let x = XaXid::new(7, b"x2", b"b2").unwrap();
        assert_eq!(x.to_sql(), "X'7832',X'6232',7");
        assert_eq!(XaXid::from_key_bytes(&x.key_bytes()), Some(x));
        assert_eq!(x.gtrid(), b"x2");
        assert_eq!(x.bqual(), b"b2");
        assert!(XaXid::new(1, b"", b"").is_none());
        assert!(XaXid::new(1, &[b'a'; 65], b"").is_none());
    }

    #[test]
    fn prepare_event_body_matches_mariadb() {
        // XA_PREPARE body of `XA PREPARE 'x2','b2',7` as mariadbd 10.11 wrote it.
        let want = [
            0u8, 7, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, b'x', b'2', b'b', b'2',
        ];
        let p = XaPrepare {
            one_phase: false,
            xid: XaXid::new(7, b"x2", b"b2").unwrap(),
        };
        let mut out = Vec::new();
        p.encode(&mut out);
        assert_eq!(out, want);
        assert_eq!(XaPrepare::decode(&mut Cursor::new(&want)).unwrap(), p);
    }
}
