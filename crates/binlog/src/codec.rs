//! Little helpers to read and write the integer encodings MariaDB's binlog uses.

use crate::error::{BinlogError, Result};

/// A read cursor over a byte slice; every read checks bounds.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.remaining() < n {
            return Err(BinlogError::decode(format!(
                "need {n} bytes at offset {}, have {}",
                self.pos,
                self.remaining()
            )));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.bytes(1)?[0])
    }

    pub fn uint_le(&mut self, n: usize) -> Result<u64> {
        Ok(le_uint(self.bytes(n)?))
    }

    pub fn u16(&mut self) -> Result<u16> {
        Ok(self.uint_le(2)? as u16)
    }

    pub fn u32(&mut self) -> Result<u32> {
        Ok(self.uint_le(4)? as u32)
    }

    pub fn u64(&mut self) -> Result<u64> {
        self.uint_le(8)
    }

    /// A length-encoded integer (`< 251` in one byte, `0xfc` u16, `0xfd` u24, `0xfe` u64).
    pub fn lenenc(&mut self) -> Result<u64> {
        match self.u8()? {
            v @ 0..=250 => Ok(v as u64),
            0xfc => self.uint_le(2),
            0xfd => self.uint_le(3),
            0xfe => self.uint_le(8),
            b => Err(BinlogError::decode(format!(
                "bad length-encoded integer prefix {b:#x}"
            ))),
        }
    }
}

pub(crate) fn le_uint(b: &[u8]) -> u64 {
    b.iter().rev().fold(0u64, |acc, &x| (acc << 8) | x as u64)
}

pub(crate) fn be_uint(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |acc, &x| (acc << 8) | x as u64)
}

pub(crate) fn put_uint_le(out: &mut Vec<u8>, v: u64, n: usize) {
    out.extend_from_slice(&v.to_le_bytes()[..n]);
}

pub(crate) fn put_uint_be(out: &mut Vec<u8>, v: u64, n: usize) {
    out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
}

/// A string after its length in `len_bytes` bytes, little-endian.
pub(crate) fn put_len_and_bytes(out: &mut Vec<u8>, b: &[u8], len_bytes: usize) {
    put_uint_le(out, b.len() as u64, len_bytes);
    out.extend_from_slice(b);
}

pub(crate) fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    if v < 251 {
        out.push(v as u8);
    } else if v < 1 << 16 {
        out.push(0xfc);
        put_uint_le(out, v, 2);
    } else if v < 1 << 24 {
        out.push(0xfd);
        put_uint_le(out, v, 3);
    } else {
        out.push(0xfe);
        put_uint_le(out, v, 8);
    }
}

/// Bitmap of `n` bits, bit `i` in byte `i / 8` at position `i % 8` (LSB first).
pub(crate) fn bitmap_from_fn(n: usize, f: impl Fn(usize) -> bool) -> Vec<u8> {
    let mut b = vec![0u8; n.div_ceil(8)];
    for i in 0..n {
        if f(i) {
            b[i / 8] |= 1 << (i % 8);
        }
    }
    b
}

pub(crate) fn bit(bitmap: &[u8], i: usize) -> bool {
    bitmap.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trip() {
        for v in [
            0u64,
            250,
            251,
            65535,
            65536,
            (1 << 24) - 1,
            1 << 24,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc(&mut out, v);
            assert_eq!(Cursor::new(&out).lenenc().unwrap(), v);
        }
    }
}
