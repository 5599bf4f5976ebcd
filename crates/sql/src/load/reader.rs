//! Splitting a text file into lines and fields as MariaDB's LOAD DATA does (its
//! `READ_INFO`): field and line terminators of any length, an optional enclosing
//! character (doubled inside a field to stand for itself), an escape character (`\N` is
//! NULL, `\n`, `\t`, `\r`, `\b`, `\0`, `\Z` the control characters, anything else itself),
//! and a line prefix (`LINES STARTING BY`) before which a line's bytes are skipped.
//!
//! The input is read in 64 KiB pieces; only the field being read is held, so a file of
//! any size is parsed in constant memory (plus its longest field).

use std::io::{self, Read};

use crate::parser::FileFormat;

const CHUNK: usize = 64 * 1024;

/// One field read from the input.
pub struct Field<'a> {
    /// The field's bytes after unescaping (without its enclosing characters).
    pub data: &'a [u8],
    /// It was enclosed (`"..."`).
    pub enclosed: bool,
    /// It was `\N` (NULL).
    pub null_escape: bool,
}

pub struct FieldReader<R: Read> {
    src: R,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Bytes given back (read again first; the last pushed is read first).
    stack: Vec<u8>,
    field_term: Vec<u8>,
    line_term: Vec<u8>,
    line_start: Vec<u8>,
    enclosed: Option<u8>,
    escape: Option<u8>,
    data: Vec<u8>,
    found_end_of_line: bool,
    start_of_line: bool,
    eof: bool,
    found_null: bool,
    /// `next_line` skipped bytes that belonged to no field (1262).
    pub line_cut: bool,
    /// The first read error (the input then ends).
    pub error: Option<io::Error>,
}

impl<R: Read> FieldReader<R> {
    /// `escape`: the escape character in effect (None: escaping off).
    pub fn new(src: R, f: &FileFormat, escape: Option<u8>) -> FieldReader<R> {
        let mut line_term = f.line_term.clone();
        // A line terminator equal to the field terminator is not used as one.
        if line_term == f.field_term {
            line_term.clear();
        }
        FieldReader {
            src,
            buf: vec![0u8; CHUNK].into_boxed_slice(),
            pos: 0,
            end: 0,
            stack: Vec::new(),
            field_term: f.field_term.clone(),
            line_term,
            start_of_line: !f.line_start.is_empty(),
            line_start: f.line_start.clone(),
            enclosed: f.enclosed.first().copied(),
            escape,
            data: Vec::new(),
            found_end_of_line: false,
            eof: false,
            found_null: false,
            line_cut: false,
            error: None,
        }
    }

    /// The next byte, or None at the end of the input.
    #[inline]
    fn get(&mut self) -> Option<u8> {
        if let Some(b) = self.stack.pop() {
            return Some(b);
        }
        if self.pos == self.end && !self.fill() {
            return None;
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Some(b)
    }

    fn fill(&mut self) -> bool {
        if self.error.is_some() {
            return false;
        }
        loop {
            match self.src.read(&mut self.buf) {
                Ok(0) => return false,
                Ok(n) => {
                    self.pos = 0;
                    self.end = n;
                    return true;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.error = Some(e);
                    return false;
                }
            }
        }
    }

    #[inline]
    fn push(&mut self, b: u8) {
        self.stack.push(b);
    }

    /// Whether the rest of terminator `term` (its first byte already read) follows; if not,
    /// what was read is given back.
    fn rest_of(&mut self, term: &[u8]) -> bool {
        let mut got = Vec::new();
        for &want in &term[1..] {
            match self.get() {
                Some(b) if b == want => got.push(b),
                other => {
                    if let Some(b) = other {
                        self.push(b);
                    }
                    while let Some(b) = got.pop() {
                        self.push(b);
                    }
                    return false;
                }
            }
        }
        true
    }

    /// Whether `b` starts terminator `term` and the rest follows.
    fn at_term(&mut self, b: u8, term_is_line: bool) -> bool {
        let term = if term_is_line {
            &self.line_term
        } else {
            &self.field_term
        };
        if term.first() != Some(&b) {
            return false;
        }
        let term = term.clone();
        self.rest_of(&term)
    }

    fn unescape(&mut self, c: u8) -> u8 {
        match c {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'b' => 8,
            b'0' => 0,
            b'Z' => 26,
            b'N' => {
                self.found_null = true;
                b'N'
            }
            other => other,
        }
    }

    /// Skips to just after the line prefix; false at the end of the input.
    fn find_line_start(&mut self) -> bool {
        while let Some(b) = self.get() {
            if self.line_start.first() == Some(&b) {
                let ls = self.line_start.clone();
                if self.rest_of(&ls) {
                    return true;
                }
            }
        }
        self.found_end_of_line = true;
        self.eof = true;
        false
    }

    /// Reads the next field of the current line; None when the line (or the input) has
    /// no more fields.
    pub fn read_field(&mut self) -> Option<Field<'_>> {
        self.found_null = false;
        if self.found_end_of_line {
            return None;
        }
        if self.start_of_line {
            self.start_of_line = false;
            if !self.find_line_start() {
                return None;
            }
        }
        let Some(first) = self.get() else {
            self.found_end_of_line = true;
            self.eof = true;
            return None;
        };
        self.data.clear();
        // The enclosing character that opened this field (it stays in `data` until the
        // field ends, so that an unterminated one reads as written).
        let opened = if Some(first) == self.enclosed {
            self.data.push(first);
            Some(first)
        } else {
            self.push(first);
            None
        };
        loop {
            let Some(c) = self.get() else {
                // End of input: the field (and line) ends here, whatever was open.
                self.found_end_of_line = true;
                self.eof = true;
                return Some(self.field(0, false));
            };
            if Some(c) == self.escape {
                let Some(next) = self.get() else {
                    self.data.push(c);
                    self.found_end_of_line = true;
                    self.eof = true;
                    return Some(self.field(0, false));
                };
                // With the escape character equal to the enclosing one it only escapes
                // itself (`""` inside `"..."`, as in SQL strings).
                if self.escape != self.enclosed || next == c {
                    let u = self.unescape(next);
                    self.data.push(u);
                    continue;
                }
                self.push(next);
            }
            if opened.is_none() && self.at_term(c, true) {
                self.found_end_of_line = true;
                return Some(self.field(0, false));
            }
            if Some(c) == opened {
                match self.get() {
                    Some(n) if Some(n) == opened => {
                        // Doubled: the character itself.
                        self.data.push(n);
                        continue;
                    }
                    None => {
                        self.found_end_of_line = true;
                        self.eof = true;
                        return Some(self.field(1, true));
                    }
                    Some(n) => {
                        if self.at_term(n, true) {
                            self.found_end_of_line = true;
                            return Some(self.field(1, true));
                        }
                        if self.at_term(n, false) {
                            return Some(self.field(1, true));
                        }
                        // Not the end of the field: the character is data.
                        self.push(n);
                    }
                }
            } else if opened.is_none() && self.at_term(c, false) {
                return Some(self.field(0, false));
            }
            self.data.push(c);
        }
    }

    fn field(&self, skip: usize, enclosed: bool) -> Field<'_> {
        let data = &self.data[skip.min(self.data.len())..];
        Field {
            data,
            enclosed,
            null_escape: self.found_null && data.len() == 1,
        }
    }

    /// Moves to the next line: skips what is left of the current one (setting `line_cut`
    /// if that was anything). Returns false at the end of the input.
    pub fn next_line(&mut self) -> bool {
        self.line_cut = false;
        self.start_of_line = !self.line_start.is_empty();
        if self.found_end_of_line || self.eof {
            self.found_end_of_line = false;
            return !self.eof;
        }
        if self.line_term.is_empty() {
            return true;
        }
        loop {
            let Some(b) = self.get() else {
                self.eof = true;
                return false;
            };
            if Some(b) == self.escape {
                self.line_cut = true;
                if self.get().is_none() {
                    self.eof = true;
                    return false;
                }
                continue;
            }
            if self.at_term(b, true) {
                return true;
            }
            self.line_cut = true;
        }
    }

    /// Reads the rest of the input (a LOCAL file must be read to its end whatever happens).
    pub fn drain(&mut self) {
        while self.get().is_some() {
            self.stack.clear();
            self.pos = self.end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of fields: Some(bytes) or None for NULL-like markers, as text.
    fn split(input: &str, f: &FileFormat) -> Vec<Vec<String>> {
        let esc = f.escaped.first().copied();
        let mut r = FieldReader::new(input.as_bytes(), f, esc);
        let mut lines = Vec::new();
        loop {
            let mut fields = Vec::new();
            while let Some(x) = r.read_field() {
                let mut s = String::from_utf8_lossy(x.data).into_owned();
                if x.null_escape {
                    s = "<NULL>".into();
                } else if x.enclosed {
                    s = format!("[{s}]");
                }
                fields.push(s);
            }
            if fields.is_empty() {
                break;
            }
            lines.push(fields);
            if !r.next_line() {
                break;
            }
        }
        lines
    }

    #[test]
    fn defaults() {
        let f = FileFormat::default();
        assert_eq!(
            split("a\tb\n\\N\tc\\td\n\n", &f),
            vec![vec!["a", "b"], vec!["<NULL>", "c\td"], vec![""]]
        );
        // No final newline; an escaped newline is data.
        assert_eq!(split("x\\\ny", &f), vec![vec!["x\ny"]]);
    }

    #[test]
    fn csv() {
        let f = FileFormat {
            field_term: b",".to_vec(),
            enclosed: b"\"".to_vec(),
            opt_enclosed: true,
            line_term: b"\r\n".to_vec(),
            ..FileFormat::default()
        };
        assert_eq!(
            split("1,\"a,b\",\"say \"\"hi\"\"\"\r\n2,x\"y,\"\"\r\n", &f),
            vec![vec!["1", "[a,b]", "[say \"hi\"]"], vec!["2", "x\"y", "[]"]]
        );
        // An enclosed field may hold the line terminator.
        assert_eq!(split("\"a\r\nb\",c\r\n", &f), vec![vec!["[a\r\nb]", "c"]]);
    }

    #[test]
    fn line_prefix_and_long_terminators() {
        let f = FileFormat {
            field_term: b"||".to_vec(),
            line_start: b"xx".to_vec(),
            line_term: b"##".to_vec(),
            ..FileFormat::default()
        };
        assert_eq!(
            split("junk xx1||a|b##no prefix##x xx2||c##", &f),
            vec![vec!["1", "a|b"], vec!["2", "c"]]
        );
    }

    #[test]
    fn too_many_fields_cut() {
        let f = FileFormat::default();
        let mut r = FieldReader::new(&b"1\t2\t3\n4\n"[..], &f, Some(b'\\'));
        assert_eq!(r.read_field().unwrap().data, b"1");
        assert!(r.next_line());
        assert!(r.line_cut);
        assert_eq!(r.read_field().unwrap().data, b"4");
        assert!(r.read_field().is_none());
        assert!(r.next_line());
        assert!(!r.line_cut);
        assert!(r.read_field().is_none());
    }
}
