//! Primitive encodings: fixed-width little-endian integers, length-encoded integers and
//! strings, NUL-terminated strings, and a bounds-checked reader over a payload.
//!
//! Length-encoded integer (`lenenc`):
//! ```text
//! value < 0xFB          1 byte: the value
//! value < 2^16          0xFC + u16
//! value < 2^24          0xFD + u24
//! otherwise             0xFE + u64
//! ```
//! 0xFB stands for NULL in text rows; 0xFF starts an ERR packet; neither is a valid
//! length prefix, and [`Reader::lenenc_int`] rejects them.

use crate::error::{ProtocolError, Result};

/// Appends `v` as a length-encoded integer.
pub fn put_lenenc_int(buf: &mut Vec<u8>, v: u64) {
    if v < 0xFB {
        buf.push(v as u8);
    } else if v < 1 << 16 {
        buf.push(0xFC);
        buf.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v < 1 << 24 {
        buf.push(0xFD);
        buf.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        buf.push(0xFE);
        buf.extend_from_slice(&v.to_le_bytes());
    }
}

/// Number of bytes [`put_lenenc_int`] writes for `v`.
pub fn lenenc_int_len(v: u64) -> usize {
    if v < 0xFB {
        1
    } else if v < 1 << 16 {
        3
    } else if v < 1 << 24 {
        4
    } else {
        9
    }
}

/// Appends a length-encoded string: lenenc length, then the bytes.
pub fn put_lenenc_bytes(buf: &mut Vec<u8>, b: &[u8]) {
    put_lenenc_int(buf, b.len() as u64);
    buf.extend_from_slice(b);
}

/// Appends the bytes followed by a NUL.
pub fn put_null_str(buf: &mut Vec<u8>, b: &[u8]) {
    buf.extend_from_slice(b);
    buf.push(0);
}

pub fn put_u16(buf: &mut Vec<u8>, v: u16) {
    buf.extend_from_slice(&v.to_le_bytes());
}

pub fn put_u24(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_le_bytes()[..3]);
}

pub fn put_u32(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_le_bytes());
}

pub fn put_u64(buf: &mut Vec<u8>, v: u64) {
    buf.extend_from_slice(&v.to_le_bytes());
}

/// A cursor over a payload. Every read checks bounds and returns
/// [`ProtocolError::Malformed`] instead of panicking.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

const TRUNCATED: ProtocolError = ProtocolError::Malformed("truncated packet");

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next byte, without consuming it.
    pub fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(TRUNCATED);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn skip(&mut self, n: usize) -> Result<()> {
        self.take(n).map(|_| ())
    }

    /// Everything left (the "string<EOF>" of the protocol docs).
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    pub fn u24(&mut self) -> Result<u32> {
        let a = self.array::<3>()?;
        Ok(u32::from_le_bytes([a[0], a[1], a[2], 0]))
    }

    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    pub fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_le_bytes(self.array()?))
    }

    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// A length-encoded integer. 0xFB (NULL) and 0xFF are rejected.
    pub fn lenenc_int(&mut self) -> Result<u64> {
        match self.u8()? {
            v @ 0..=0xFA => Ok(v as u64),
            0xFC => Ok(self.u16()? as u64),
            0xFD => Ok(self.u24()? as u64),
            0xFE => self.u64(),
            _ => Err(ProtocolError::Malformed("invalid length-encoded integer")),
        }
    }

    /// A length-encoded string.
    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8]> {
        let len = self.lenenc_int()?;
        if len > self.remaining() as u64 {
            return Err(TRUNCATED);
        }
        self.take(len as usize)
    }

    /// A string prefixed by a one-byte length.
    pub fn u8_prefixed(&mut self) -> Result<&'a [u8]> {
        let len = self.u8()? as usize;
        self.take(len)
    }

    /// A NUL-terminated string (the NUL is consumed, not returned).
    pub fn null_terminated(&mut self) -> Result<&'a [u8]> {
        let rest = &self.buf[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(i) => {
                self.pos += i + 1;
                Ok(&rest[..i])
            }
            None => Err(ProtocolError::Malformed("missing NUL terminator")),
        }
    }

    /// A NUL-terminated string, or the rest of the payload when no NUL follows (some
    /// clients omit the last terminator).
    pub fn null_terminated_or_rest(&mut self) -> &'a [u8] {
        match self.null_terminated() {
            Ok(s) => s,
            Err(_) => self.rest(),
        }
    }
}

/// Bytes as a `String`, replacing invalid UTF-8.
pub(crate) fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_int_boundaries() {
        let cases: &[(u64, &[u8])] = &[
            (0, &[0x00]),
            (250, &[0xFA]),
            (251, &[0xFC, 0xFB, 0x00]),
            (0xFFFF, &[0xFC, 0xFF, 0xFF]),
            (0x1_0000, &[0xFD, 0x00, 0x00, 0x01]),
            (0xFF_FFFF, &[0xFD, 0xFF, 0xFF, 0xFF]),
            (0x100_0000, &[0xFE, 0, 0, 0, 1, 0, 0, 0, 0]),
            (
                u64::MAX,
                &[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            ),
        ];
        for &(v, bytes) in cases {
            let mut buf = Vec::new();
            put_lenenc_int(&mut buf, v);
            assert_eq!(buf, bytes, "encode {v}");
            assert_eq!(lenenc_int_len(v), bytes.len());
            let mut r = Reader::new(bytes);
            assert_eq!(r.lenenc_int().unwrap(), v);
            assert!(r.is_empty());
        }
    }

    #[test]
    fn lenenc_int_rejects_null_and_err_markers() {
        assert!(Reader::new(&[0xFB]).lenenc_int().is_err());
        assert!(Reader::new(&[0xFF]).lenenc_int().is_err());
    }

    #[test]
    fn truncated_inputs_are_errors() {
        assert!(Reader::new(&[]).u8().is_err());
        assert!(Reader::new(&[1]).u16().is_err());
        assert!(Reader::new(&[1, 2]).u24().is_err());
        assert!(Reader::new(&[1, 2, 3]).u32().is_err());
        assert!(Reader::new(&[0xFC, 1]).lenenc_int().is_err());
        assert!(Reader::new(&[0xFD, 1, 2]).lenenc_int().is_err());
        assert!(Reader::new(&[0xFE, 1, 2, 3, 4, 5, 6, 7])
            .lenenc_int()
            .is_err());
        assert!(Reader::new(&[3, b'a', b'b']).lenenc_bytes().is_err());
        // A huge declared length must not overflow or allocate.
        let huge = [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF];
        assert!(Reader::new(&huge).lenenc_bytes().is_err());
        assert!(Reader::new(b"abc").null_terminated().is_err());
        assert!(Reader::new(&[5, 1]).u8_prefixed().is_err());
    }

    #[test]
    fn strings() {
        let mut buf = Vec::new();
        put_lenenc_bytes(&mut buf, b"abc");
        put_null_str(&mut buf, b"root");
        buf.extend_from_slice(b"tail");
        assert_eq!(buf, b"\x03abcroot\0tail");
        let mut r = Reader::new(&buf);
        assert_eq!(r.lenenc_bytes().unwrap(), b"abc");
        assert_eq!(r.null_terminated().unwrap(), b"root");
        assert_eq!(r.position(), 9);
        assert_eq!(r.null_terminated_or_rest(), b"tail");
        assert!(r.is_empty());
    }

    #[test]
    fn fixed_ints() {
        let mut buf = Vec::new();
        put_u16(&mut buf, 0x0201);
        put_u24(&mut buf, 0x050403);
        put_u32(&mut buf, 0x09080706);
        put_u64(&mut buf, 0x1110_0F0E_0D0C_0B0A);
        assert_eq!(buf, (1u8..=17).collect::<Vec<_>>());
        let mut r = Reader::new(&buf);
        assert_eq!(r.u16().unwrap(), 0x0201);
        assert_eq!(r.u24().unwrap(), 0x050403);
        assert_eq!(r.u32().unwrap(), 0x09080706);
        assert_eq!(r.u64().unwrap(), 0x1110_0F0E_0D0C_0B0A);
        assert!(r.u8().is_err());
    }
}
