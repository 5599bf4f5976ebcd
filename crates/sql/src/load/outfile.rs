//! `SELECT ... INTO OUTFILE | DUMPFILE | @var, ...`.
//!
//! OUTFILE writes MariaDB's format (its `select_export`), which LOAD DATA with the same
//! FIELDS / LINES options reads back: each value as the text protocol sends it; NULL as
//! `\N` (`NULL` without an escape character); strings (and, with a field separator that
//! could be part of a number, numbers too) with the escape character before the escape
//! character itself, the enclosing (or, without one, the field-terminating) character,
//! the line terminator's first byte and NUL (written `\0`); `ENCLOSED BY` around every
//! value, `OPTIONALLY ENCLOSED BY` around strings only. DUMPFILE writes one row's values
//! back to back, unescaped (a second row is error 1172, the file keeping the first). The file is created new (1086 if it exists, also checked
//! before the query runs) and readable by all; the FILE privilege is needed (1227) and
//! `secure_file_priv` applies (1290). The query's rows are materialised before writing, as
//! every result is (see the architecture's notes on memory).

use std::io::{BufWriter, Write};
use std::path::Path;

use onelog_protocol::{put_text_value, wire_type, WireType};
use onelog_types::{code, ColumnType, SqlError, Value};
use sqlparser::ast as sq;

use super::files;
use crate::parser::{FileFormat, IntoTarget, Parsed};
use crate::session::Session;
use crate::users::Priv;
use crate::{sql_err, QueryResult, ResultColumn};

const ESCAPE_CHARS: &[u8] = b"ntrb0ZN";
const NUMERIC_CHARS: &[u8] = b".0123456789e+-";

/// How each field is written (MariaDB's `select_export::prepare`).
struct Export {
    field_term: Vec<u8>,
    enclosed: Vec<u8>,
    opt_enclosed: bool,
    line_start: Vec<u8>,
    line_term: Vec<u8>,
    escape: Option<u8>,
    field_term_char: Option<u8>,
    field_sep_char: Option<u8>,
    line_sep_char: Option<u8>,
    ambiguous_field_sep: bool,
    unsafe_field_sep: bool,
    ambiguous_field_term: bool,
    latin1: bool,
}

impl Export {
    fn new(
        f: &FileFormat,
        sql_mode: &str,
        non_string_results: bool,
        latin1: bool,
    ) -> (Export, Option<SqlError>) {
        let line_term = if f.line_term.is_empty() {
            f.field_term.clone()
        } else {
            f.line_term.clone()
        };
        let field_term_char = f.field_term.first().copied();
        let field_sep_char = f.enclosed.first().copied().or(field_term_char);
        let escape = super::escape_char(f, sql_mode);
        let ambiguous_field_sep = field_sep_char.is_some_and(|c| ESCAPE_CHARS.contains(&c));
        let unsafe_field_sep = field_sep_char.is_some_and(|c| NUMERIC_CHARS.contains(&c));
        let mut opt_enclosed = f.opt_enclosed;
        if f.field_term.is_empty() {
            opt_enclosed = false;
        }
        if f.enclosed.is_empty() {
            opt_enclosed = true;
        }
        let ambiguous_field_term = (ambiguous_field_sep
            && f.enclosed.is_empty()
            && (opt_enclosed || f.field_term.is_empty()))
            || (opt_enclosed
                && non_string_results
                && field_term_char.is_some_and(|c| NUMERIC_CHARS.contains(&c)));
        let warning = ambiguous_field_term.then(|| {
            sql_err(
                1475,
                "First character of the FIELDS TERMINATED string is ambiguous; please use non-optional and non-empty FIELDS ENCLOSED BY",
            )
        });
        (
            Export {
                field_term: f.field_term.clone(),
                enclosed: f.enclosed.clone(),
                opt_enclosed,
                line_start: f.line_start.clone(),
                line_sep_char: line_term.first().copied(),
                line_term,
                escape,
                field_term_char,
                field_sep_char,
                ambiguous_field_sep,
                unsafe_field_sep,
                ambiguous_field_term,
                latin1,
            },
            warning,
        )
    }

    fn row(&self, out: &mut Vec<u8>, row: &[Value], cols: &[(WireType, bool)]) {
        out.extend_from_slice(&self.line_start);
        let mut text = Vec::new();
        for (i, (v, (w, string))) in row.iter().zip(cols).enumerate() {
            let enclosed = !self.enclosed.is_empty() && (!self.opt_enclosed || *string);
            if v.is_null() {
                match self.escape {
                    Some(e) => out.extend_from_slice(&[e, b'N']),
                    None => out.extend_from_slice(b"NULL"),
                }
            } else {
                text.clear();
                put_text_value(&mut text, v, w);
                if self.latin1 {
                    text = to_latin1(&text);
                }
                if enclosed {
                    out.extend_from_slice(&self.enclosed);
                }
                match self.escape {
                    Some(esc) if *string || self.unsafe_field_sep => {
                        self.escaped(out, &text, esc, enclosed)
                    }
                    _ => out.extend_from_slice(&text),
                }
                if enclosed {
                    out.extend_from_slice(&self.enclosed);
                }
            }
            if i + 1 < row.len() {
                out.extend_from_slice(&self.field_term);
            }
        }
        out.extend_from_slice(&self.line_term);
    }

    fn escaped(&self, out: &mut Vec<u8>, text: &[u8], esc: u8, enclosed: bool) {
        for &c in text {
            let special = c == esc
                || Some(c)
                    == if enclosed {
                        self.field_sep_char
                    } else {
                        self.field_term_char
                    }
                || Some(c) == self.line_sep_char
                || c == 0;
            // The field terminator is not escaped when that would be ambiguous (MariaDB
            // gives warning 1475 instead).
            let skip = !enclosed && self.ambiguous_field_term && Some(c) == self.field_term_char;
            if special && !skip {
                let first = if Some(c) == self.field_sep_char && self.ambiguous_field_sep {
                    c
                } else {
                    esc
                };
                out.push(first);
                out.push(if c == 0 { b'0' } else { c });
            } else {
                out.push(c);
            }
        }
    }
}

/// UTF-8 text as latin1 (characters latin1 lacks become `?`).
fn to_latin1(b: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(b)
        .chars()
        .map(|c| if (c as u32) < 256 { c as u8 } else { b'?' })
        .collect()
}

/// A result column's wire type (as the connection would send it) and whether MariaDB
/// counts it a string (strings and temporal values: enclosed by OPTIONALLY ENCLOSED BY).
fn column_kind(c: &ResultColumn) -> (WireType, bool) {
    let mut w = wire_type(&c.ty);
    w.length = c.length;
    w.decimals = c.decimals;
    w.flags |= c.flags;
    let string = c.null_type
        || !matches!(
            c.ty,
            ColumnType::Int { .. }
                | ColumnType::Float
                | ColumnType::Double
                | ColumnType::Decimal { .. }
        );
    (w, string)
}

fn too_many_rows() -> SqlError {
    sql_err(
        code::ER_TOO_MANY_ROWS,
        "Result consisted of more than one row",
    )
}

impl Session {
    /// `SELECT ... INTO target`.
    pub(crate) fn run_select_into(
        &mut self,
        query: &sq::Statement,
        into: &IntoTarget,
        after_from: bool,
        p: &Parsed,
    ) -> Result<QueryResult, SqlError> {
        let sq::Statement::Query(q) = query else {
            return Err(crate::binder::unsupported("INTO here"));
        };
        let mut latin1 = false;
        if let IntoTarget::Outfile {
            charset, format, ..
        } = into
        {
            super::check_format(format, &mut self.warnings)?;
            latin1 = match charset.as_deref() {
                None | Some("binary" | "utf8mb4" | "utf8mb3" | "utf8" | "ascii") => false,
                Some("latin1") => true,
                Some(other) => {
                    return Err(sql_err(
                        code::ER_UNKNOWN_CHARACTER_SET,
                        format!("Unknown character set: '{other}'"),
                    ))
                }
            };
        }
        let (path, name) = match into {
            IntoTarget::Vars(_) => (None, ""),
            IntoTarget::Outfile { file, .. } | IntoTarget::Dumpfile(file) => {
                self.require_global(Priv::FILE)?;
                let path = files::resolve(
                    &self.db.engine.options().datadir,
                    self.current_db.as_deref().unwrap_or(""),
                    file,
                );
                files::check_secure(self, &path)?;
                files::check_absent(&path, file)?;
                (Some(path), file.as_str())
            }
        };
        if after_from {
            self.warnings.push(sql_err(
                1287,
                "'<select expression> INTO <destination>;' is deprecated and will be removed in a future release. Please use 'SELECT <select list> INTO <destination> FROM...' instead",
            ));
        }
        let (columns, rows) = match self.select_result(&p.text, q, None)? {
            QueryResult::Rows { columns, rows } => (columns, rows),
            QueryResult::Ok { .. } => (Vec::new(), Vec::new()),
        };
        match into {
            IntoTarget::Vars(vars) => {
                if vars.len() != columns.len() {
                    return Err(sql_err(
                        code::ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT,
                        "The used SELECT statements have a different number of columns",
                    ));
                }
                let n = rows.len();
                let Some(row) = rows.into_iter().next() else {
                    self.warnings.push(sql_err(
                        code::ER_SP_FETCH_NO_DATA,
                        "No data - zero rows fetched, selected, or processed",
                    ));
                    return Ok(QueryResult::Ok {
                        affected_rows: 0,
                        last_insert_id: 0,
                        warnings: self.warning_count(),
                        info: String::new(),
                    });
                };
                // A second row is an error once the first is assigned (as in MariaDB).
                for (name, v) in vars.iter().zip(row) {
                    self.user_vars.insert(name.clone(), v);
                }
                if n > 1 {
                    return Err(too_many_rows());
                }
                Ok(ok_rows(self, 1))
            }
            IntoTarget::Dumpfile(_) => {
                let path = path.expect("a file");
                let kinds: Vec<(WireType, bool)> = columns.iter().map(column_kind).collect();
                let mut data = Vec::new();
                // A second row is an error once the first is written (MariaDB leaves the
                // file with it).
                for row in rows.iter().take(1) {
                    for (v, (w, _)) in row.iter().zip(&kinds) {
                        if !v.is_null() {
                            put_text_value(&mut data, v, w);
                        }
                    }
                }
                write_file(&path, name, |out| out.write_all(&data))?;
                if rows.len() > 1 {
                    return Err(too_many_rows());
                }
                Ok(ok_rows(self, rows.len() as u64))
            }
            IntoTarget::Outfile { format, .. } => {
                let kinds: Vec<(WireType, bool)> = columns.iter().map(column_kind).collect();
                let non_string = kinds.iter().any(|(_, s)| !s);
                let mode = self.sql_mode();
                let (ex, warning) = Export::new(format, &mode, non_string, latin1);
                self.warnings.extend(warning);
                let path = path.expect("a file");
                let n = rows.len() as u64;
                write_file(&path, name, |out| {
                    let mut buf = Vec::with_capacity(64 * 1024);
                    for row in &rows {
                        ex.row(&mut buf, row, &kinds);
                        if buf.len() >= 60 * 1024 {
                            out.write_all(&buf)?;
                            buf.clear();
                        }
                    }
                    out.write_all(&buf)
                })?;
                Ok(ok_rows(self, n))
            }
        }
    }
}

fn ok_rows(s: &Session, n: u64) -> QueryResult {
    QueryResult::Ok {
        affected_rows: n,
        last_insert_id: 0,
        warnings: s.warning_count(),
        info: String::new(),
    }
}

/// Creates `path` and writes it with `f`; on failure the file is removed.
fn write_file(
    path: &Path,
    name: &str,
    f: impl FnOnce(&mut BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<(), SqlError> {
    let file = files::create_output(path, name)?;
    let mut out = BufWriter::with_capacity(64 * 1024, file);
    let r = f(&mut out).and_then(|_| out.flush());
    if let Err(e) = r {
        drop(out);
        let _ = std::fs::remove_file(path);
        return Err(files::write_error(path, &e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(f: &FileFormat, row: &[Value], kinds: &[(WireType, bool)]) -> String {
        let (ex, _) = Export::new(f, "", kinds.iter().any(|k| !k.1), false);
        let mut out = Vec::new();
        ex.row(&mut out, row, kinds);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_as_mariadb() {
        let s = (
            wire_type(&ColumnType::varchar(10, onelog_types::Collation::DEFAULT)),
            true,
        );
        let n = (
            wire_type(&ColumnType::Int {
                bytes: 4,
                unsigned: false,
            }),
            false,
        );
        let d = FileFormat::default();
        assert_eq!(
            line(
                &d,
                &[Value::Int(-1), Value::str("a\tb\\c\nd\0"), Value::Null],
                &[n, s, s]
            ),
            "-1\ta\\\tb\\\\c\\\nd\\0\t\\N\n"
        );
        let csv = FileFormat {
            field_term: b",".to_vec(),
            enclosed: b"\"".to_vec(),
            opt_enclosed: true,
            ..FileFormat::default()
        };
        assert_eq!(
            line(
                &csv,
                &[Value::Int(5), Value::str("x,\"y\""), Value::Null],
                &[n, s, s]
            ),
            "5,\"x,\\\"y\\\"\",\\N\n"
        );
        let no_escape = FileFormat {
            escaped: Vec::new(),
            escaped_given: true,
            ..csv
        };
        assert_eq!(
            line(&no_escape, &[Value::str("a\"b"), Value::Null], &[s, s]),
            "\"a\"b\",NULL\n"
        );
    }
}
