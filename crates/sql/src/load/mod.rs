//! LOAD DATA [LOCAL] INFILE (this file: the statement around the row loop of `exec.rs`,
//! which reads through `reader.rs`) and SELECT ... INTO (`outfile.rs`).
//!
//! Without LOCAL the server reads the file itself: the FILE privilege is needed (1045 as
//! MariaDB), and with `secure_file_priv` set the file must lie under it (1290; `files.rs`).
//! With LOCAL the connection asks the client for it (see [`Client::local_file`]): the
//! client must have announced CLIENT_LOCAL_FILES and `local_infile` must be ON (4166), and
//! as MariaDB cannot stop a client in the middle of a file, duplicate keys and conversion
//! problems are then warnings (unless REPLACE). The load is one statement of the session's
//! transaction, so its rows reach the binlog as row events of one transaction (MariaDB
//! logs LOAD DATA the same way under `binlog_format=ROW`), annotated with the statement.

pub(crate) mod exec;
pub(crate) mod files;
mod outfile;
pub(crate) mod reader;

use std::io::{self, Read};
use std::ops::ControlFlow;

use onelog_types::{code, ColumnType, SqlError};
use sqlparser::ast as sq;

use onelog_engine::TableDef;

use crate::binder::VirtualColumn;
use crate::parser::{FileFormat, LoadData, LoadDup, LoadTarget, Parsed};
use crate::session::Session;
use crate::users::Priv;
use crate::{sql_err, QueryResult};
use exec::{FileCharset, LoadPlan, Target};
use reader::FieldReader;

/// What a statement may need from the connection it runs for: each result of a
/// multi-statement as soon as it is complete (the protocol's order when a later statement
/// asks the client for a file), and LOAD DATA LOCAL's file.
pub trait Client {
    /// One statement's result; `more`: another result follows. Returns false when the
    /// connection failed (the remaining statements are not run).
    fn result(&mut self, session: &Session, r: Result<QueryResult, SqlError>, more: bool) -> bool;

    /// The OUT parameters result set of a CALL run by COM_STMT_EXECUTE (see
    /// `routines::prepared_call`); the final result of the CALL follows it. The protocol
    /// flags it SERVER_PS_OUT_PARAMS.
    fn out_params(&mut self, session: &Session, r: QueryResult) -> bool {
        self.result(session, Ok(r), true)
    }

    /// Whether the client accepts LOAD DATA LOCAL requests (CLIENT_LOCAL_FILES).
    fn local_files(&self) -> bool {
        false
    }

    /// Asks the client for the contents of `name` (the protocol's LOCAL INFILE request);
    /// the reader yields them to their end. It must be read to the end whatever happens.
    fn local_file(&mut self, name: &str) -> io::Result<Box<dyn Read + '_>> {
        let _ = name;
        Err(io::Error::other("no client to ask for the file"))
    }
}

/// A [`Client`] that keeps the results (the embedded API: [`Session::execute`]).
#[derive(Default)]
pub(crate) struct Collect(pub Vec<Result<QueryResult, SqlError>>);

impl Client for Collect {
    fn result(&mut self, _: &Session, r: Result<QueryResult, SqlError>, _: bool) -> bool {
        self.0.push(r);
        true
    }
}

/// MariaDB's 1054 for a column of LOAD DATA's field list or SET.
fn unknown_column(c: &str) -> SqlError {
    sql_err(
        code::ER_BAD_FIELD_ERROR,
        format!("Unknown column '{c}' in 'SELECT'"),
    )
}

fn capability_disabled() -> SqlError {
    sql_err(
        code::ER_LOAD_INFILE_CAPABILITY_DISABLED,
        "The used command is not allowed because the MariaDB server or client has disabled the local infile capability",
    )
}

/// The escape character in effect: ESCAPED BY's, unless it is empty, or not written and
/// NO_BACKSLASH_ESCAPES is on.
pub(crate) fn escape_char(f: &FileFormat, sql_mode: &str) -> Option<u8> {
    if f.escaped.is_empty() || (!f.escaped_given && sql_mode.contains("NO_BACKSLASH_ESCAPES")) {
        None
    } else {
        Some(f.escaped[0])
    }
}

/// Checks FIELDS / LINES as MariaDB does before reading or writing: 1083 for an escape or
/// enclosing string longer than one byte, 1638 (a warning) for non-ASCII separators.
/// Fixed-size rows (no field terminator and no enclosure) are not supported.
pub(crate) fn check_format(f: &FileFormat, warnings: &mut Vec<SqlError>) -> Result<(), SqlError> {
    if f.escaped.len() > 1 || f.enclosed.len() > 1 {
        return Err(sql_err(
            code::ER_WRONG_FIELD_TERMINATORS,
            "Field separator argument is not what is expected; check the manual",
        ));
    }
    if f.field_term.is_empty() && f.enclosed.is_empty() {
        return Err(crate::binder::unsupported(
            "fixed-size rows (FIELDS TERMINATED BY '' without ENCLOSED BY)",
        ));
    }
    let parts = [
        &f.escaped,
        &f.enclosed,
        &f.field_term,
        &f.line_term,
        &f.line_start,
    ];
    if parts.iter().any(|p| !p.is_ascii()) {
        warnings.push(sql_err(
            code::WARN_NON_ASCII_SEPARATOR_NOT_IMPLEMENTED,
            "Non-ASCII separator arguments are not fully supported",
        ));
    }
    Ok(())
}

/// The character set a file is read in (`CHARACTER SET`, else `character_set_database`).
fn file_charset(name: &str) -> Result<FileCharset, SqlError> {
    match name.to_ascii_lowercase().as_str() {
        "utf8mb4" | "utf8mb3" | "utf8" | "binary" | "ascii" | "default" => Ok(FileCharset::AsIs),
        "latin1" => Ok(FileCharset::Latin1),
        other => Err(sql_err(
            code::ER_UNKNOWN_CHARACTER_SET,
            format!("Unknown character set: '{other}'"),
        )),
    }
}

/// Rewrites the references to the statement's variables (`@v` of the field list) in a SET
/// expression into references to the virtual columns named `@v`.
fn vars_to_columns(e: &mut sq::Expr, vars: &[String]) {
    let _ = sq::visit_expressions_mut(e, |x| {
        if let sq::Expr::Identifier(id) = x {
            if id.quote_style.is_none() {
                if let Some(name) = id.value.strip_prefix('@') {
                    let name = name.to_lowercase();
                    if !name.starts_with('@') && vars.contains(&name) {
                        *id = sq::Ident::with_quote('`', format!("@{name}"));
                    }
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

fn has_subquery(e: &mut sq::Expr) -> bool {
    let mut found = false;
    let _ = sq::visit_expressions_mut(e, |x| {
        if matches!(
            x,
            sq::Expr::Subquery(_) | sq::Expr::Exists { .. } | sq::Expr::InSubquery { .. }
        ) {
            found = true;
        }
        ControlFlow::<()>::Continue(())
    });
    found
}

impl Session {
    /// `LOAD DATA ...`; `client` is the connection (None: the embedded API, which has no
    /// client to send a file).
    pub(crate) fn run_load(
        &mut self,
        l: &LoadData,
        p: &Parsed,
        client: Option<&mut dyn Client>,
    ) -> Result<QueryResult, SqlError> {
        self.db.count_com("Com_load");
        self.check_load_access(l, client.as_deref())?;
        let db = match l.db.clone().or_else(|| self.current_db.clone()) {
            Some(d) => d,
            None => return Err(sql_err(code::ER_NO_DB_ERROR, "No database selected")),
        };
        let mut mask = Priv::INSERT.0;
        if l.dup == LoadDup::Replace {
            mask |= Priv::DELETE.0;
        }
        let tables = vec![(db.clone(), l.table.clone())];
        self.check_table_privs(&tables, mask)?;
        self.check_read_only()?;
        let cat = self.bind_catalog();
        let Some(t) = cat.table(&db, &l.table).cloned() else {
            return Err(sql_err(
                code::ER_NO_SUCH_TABLE,
                format!("Table '{db}.{}' doesn't exist", l.table),
            ));
        };
        let refs = vec![crate::locks::plain_ref(&db, &l.table)];
        self.check_locked_tables(&refs, &refs)?;
        let mut pre_warnings = Vec::new();
        check_format(&l.format, &mut pre_warnings)?;
        let (vars, targets, mut written) = field_targets(&t, l)?;
        let set = self.bind_load_set(l, &t, &vars, &mut written, p)?;
        if t.columns
            .iter()
            .any(|c| matches!(c.ty, ColumnType::Blob { .. }))
            && l.format.line_term.is_empty()
            && l.format.field_term.is_empty()
        {
            return Err(sql_err(
                code::ER_BLOBS_AND_NO_TERMINATED,
                "You can't use fixed rowlength with BLOBs; please use 'fields terminated by'",
            ));
        }
        let charset = match &l.charset {
            Some(cs) => file_charset(cs)?,
            None => {
                let cs = self
                    .get_var(None, "character_set_database")
                    .map(|v| crate::expr::to_string(&v))
                    .unwrap_or_default();
                file_charset(&cs).unwrap_or(FileCharset::AsIs)
            }
        };
        let ignore = l.dup == LoadDup::Ignore || (l.local && l.dup == LoadDup::Error);
        let mode = self.sql_mode();
        let escape = escape_char(&l.format, &mode);
        if !l.targets.is_empty() {
            missing_defaults(&t, &written, &mut pre_warnings);
        }
        let skip_pre = if l.format.line_term.is_empty() {
            0
        } else {
            l.ignore_lines
        };
        let plan = LoadPlan {
            table: t.clone(),
            targets,
            vars,
            set,
            dup: l.dup,
            ignore,
            null_word: !l.format.enclosed.is_empty(),
            charset,
            skip_rows: l.ignore_lines - skip_pre,
            defaults: if t.columns.iter().any(|c| c.default_expr.is_some()) {
                self.bind(&p.text, |b| b.defaults_of(&t))?
            } else {
                Vec::new()
            },
            written,
        };
        let input = self.open_load_input(l, &db, client)?;
        let mut reader = FieldReader::new(input, &l.format, escape);
        for _ in 0..skip_pre {
            if !reader.next_line() {
                break;
            }
        }
        self.warnings.extend(pre_warnings.iter().cloned());
        let pre = pre_warnings.len() as u64;
        let text = p.text.clone();
        let result = self.as_write_statement(|s| {
            s.in_statement(&text, &tables, &tables, |cx| {
                exec::run(cx, &plan, &mut reader)
            })
        });
        // A client's file is read to its end, whatever happened (the server's own file is
        // simply closed).
        if l.local {
            reader.drain();
        }
        drop(reader);
        let out = result?;
        if let Some(id) = out.last_insert_id {
            self.set_last_insert_id(id);
        }
        for (name, v) in plan.vars.iter().zip(out.vars) {
            self.user_vars.insert(name.clone(), v);
        }
        let warnings = out.warnings + pre;
        Ok(QueryResult::Ok {
            affected_rows: out.copied + out.deleted,
            last_insert_id: out.last_insert_id.unwrap_or(0),
            warnings: warnings.min(65535) as u16,
            info: format!(
                "Records: {}  Deleted: {}  Skipped: {}  Warnings: {warnings}",
                out.records,
                out.deleted,
                out.records - out.copied
            ),
        })
    }

    /// LOAD DATA LOCAL needs `local_infile` and a client that offers files (1148); LOAD
    /// DATA of a server file needs FILE.
    fn check_load_access(&self, l: &LoadData, client: Option<&dyn Client>) -> Result<(), SqlError> {
        if l.local {
            let on = self
                .db
                .global_variable("local_infile")
                .is_none_or(|v| crate::expr::to_i64(&v) != 0);
            if !on || !client.is_some_and(|c| c.local_files()) {
                return Err(capability_disabled());
            }
        } else if !self.internal && !self.account().has_global(Priv::FILE) {
            let acc = self.account();
            return Err(sql_err(
                code::ER_ACCESS_DENIED_ERROR,
                format!(
                    "Access denied for user '{}'@'{}' (using password: {})",
                    self.user,
                    self.account_host,
                    if acc.password_hash.is_empty() {
                        "NO"
                    } else {
                        "YES"
                    }
                ),
            ));
        }
        Ok(())
    }

    /// The file to read: the client's (LOCAL) or the server's, checked against
    /// `secure_file_priv`.
    fn open_load_input<'c>(
        &self,
        l: &LoadData,
        db: &str,
        client: Option<&'c mut dyn Client>,
    ) -> Result<Box<dyn Read + 'c>, SqlError> {
        if l.local {
            let client = client.expect("checked above");
            Ok(client.local_file(&l.file).map_err(|e| {
                sql_err(
                    code::ER_NET_READ_ERROR,
                    format!("Got an error reading communication packets: {e}"),
                )
            })?)
        } else {
            let path = files::resolve(
                &self.db.engine.options().datadir,
                self.current_db.as_deref().unwrap_or(db),
                &l.file,
            );
            files::check_secure(self, &path)?;
            Ok(Box::new(files::open_input(&path)?))
        }
    }

    /// The SET clause, bound over the table's columns followed by the variables; marks the
    /// columns it writes.
    fn bind_load_set(
        &mut self,
        l: &LoadData,
        t: &TableDef,
        vars: &[String],
        written: &mut [bool],
        p: &Parsed,
    ) -> Result<Vec<(usize, Option<crate::expr::Expr>)>, SqlError> {
        let mut cols: Vec<VirtualColumn> = t
            .columns
            .iter()
            .map(|c| VirtualColumn {
                name: c.name.clone(),
                ty: c.ty,
            })
            .collect();
        cols.extend(vars.iter().map(|v| VirtualColumn {
            name: format!("@{v}"),
            ty: ColumnType::Blob {
                len_bytes: 4,
                binary: false,
                collation: onelog_types::Collation::DEFAULT,
            },
        }));
        let mut set = Vec::new();
        for (c, e) in &l.set {
            let Some(i) = t.column_index(c) else {
                return Err(unknown_column(c));
            };
            written[i] = true;
            let bound = match e {
                None => None,
                Some(e) => {
                    let mut e = e.clone();
                    if has_subquery(&mut e) {
                        return Err(crate::binder::unsupported(
                            "subqueries in LOAD DATA ... SET",
                        ));
                    }
                    vars_to_columns(&mut e, vars);
                    let b = self.bind(&p.text, |b| b.bind_over_columns(&cols, &e));
                    Some(b.map_err(|mut e| {
                        // MariaDB names the clause so for LOAD DATA.
                        if e.code == code::ER_BAD_FIELD_ERROR {
                            if let Some(i) = e.message.rfind(" in '") {
                                e.message = format!("{} in 'SELECT'", &e.message[..i]);
                            }
                        }
                        e
                    })?)
                }
            };
            set.push((i, bound));
        }
        Ok(set)
    }
}

/// The field list: the variables it names, where each field goes, and the columns it
/// writes (every column in order when no list is given).
#[allow(clippy::type_complexity)]
fn field_targets(
    t: &TableDef,
    l: &LoadData,
) -> Result<(Vec<String>, Vec<Target>, Vec<bool>), SqlError> {
    let mut vars: Vec<String> = Vec::new();
    let mut targets = Vec::new();
    let mut written = vec![false; t.columns.len()];
    if l.targets.is_empty() {
        targets = (0..t.columns.len()).map(Target::Column).collect();
        written.iter_mut().for_each(|w| *w = true);
    }
    for target in &l.targets {
        match target {
            LoadTarget::Column(c) => {
                let Some(i) = t.column_index(c) else {
                    return Err(unknown_column(c));
                };
                written[i] = true;
                targets.push(Target::Column(i));
            }
            LoadTarget::Var(v) => {
                let i = match vars.iter().position(|x| x == v) {
                    Some(i) => i,
                    None => {
                        vars.push(v.clone());
                        vars.len() - 1
                    }
                };
                targets.push(Target::Var(i));
            }
        }
    }
    Ok((vars, targets, written))
}

/// Columns outside the field list and SET that need a value: one warning for the
/// statement (MariaDB checks this before strict mode applies).
fn missing_defaults(t: &TableDef, written: &[bool], warnings: &mut Vec<SqlError>) {
    for (i, c) in t.columns.iter().enumerate() {
        if !written[i]
            && !c.nullable
            && c.default.is_none()
            && !c.auto_increment
            && !c.default_now
            && c.default_expr.is_none()
        {
            warnings.push(sql_err(
                code::ER_NO_DEFAULT_FOR_FIELD,
                format!("Field '{}' doesn't have a default value", c.name),
            ));
        }
    }
}
