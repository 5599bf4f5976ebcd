//! Test helpers.

use std::io::{self, Cursor, Read, Write};

/// An in-memory stream: reads come from `input`, writes go to `output`.
pub struct Duplex {
    pub input: Cursor<Vec<u8>>,
    pub output: Vec<u8>,
}

impl Duplex {
    pub fn new(input: Vec<u8>) -> Duplex {
        Duplex {
            input: Cursor::new(input),
            output: Vec::new(),
        }
    }
}

impl Read for Duplex {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for Duplex {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.output.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
