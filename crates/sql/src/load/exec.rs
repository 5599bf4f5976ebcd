//! LOAD DATA's row loop, as MariaDB's `read_sep_field` and `write_record`: each line's
//! fields go to their columns (converted as INSERT converts strings) or user variables,
//! missing fields leave their column empty (1261), extra ones are dropped (1262), NULL
//! into a NOT NULL column stores the type's zero value (1263), SET expressions run over
//! the row and the variables, then the row is written: a duplicate key fails the
//! statement (1062), is skipped with a warning (IGNORE, LOCAL), or replaces the stored
//! row (REPLACE: an update when the key is the last unique one, else delete and insert).
//! Outside IGNORE and LOCAL, strict mode turns every warning into the statement's error.

use std::io::Read;
use std::sync::Arc;

use onelog_engine::TableDef;
use onelog_types::{code, Collation, ColumnType, SqlError, Value};

use super::reader::FieldReader;
use crate::executor::{engine_err, find_conflict_at, store, zero_value, ExecCtx};
use crate::expr::{self, eval, Ctx, Expr};
use crate::parser::LoadDup;
use crate::sql_err;

/// Where one field of a line goes.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    Column(usize),
    /// Index into the statement's user variables.
    Var(usize),
}

/// The file's character set, as far as the conversion into utf8mb4 goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileCharset {
    /// utf8mb4, utf8mb3, binary, ascii: the bytes as they are.
    AsIs,
    /// latin1 (MariaDB's latin1 is Windows-1252).
    Latin1,
}

pub struct LoadPlan {
    pub table: Arc<TableDef>,
    pub targets: Vec<Target>,
    pub vars: Vec<String>,
    /// `SET col = expr` (None: DEFAULT), the expressions bound over the table's columns
    /// followed by the variables.
    pub set: Vec<(usize, Option<Expr>)>,
    pub dup: LoadDup,
    /// IGNORE, or LOCAL without REPLACE: duplicates and conversion problems are warnings.
    pub ignore: bool,
    /// An unenclosed `NULL` is NULL (the statement has ENCLOSED BY).
    pub null_word: bool,
    pub charset: FileCharset,
    /// Lines to skip after the pre-skip (IGNORE n LINES without a line terminator).
    pub skip_rows: u64,
    /// The table's expression defaults (`binder::table_defaults`), computed for the
    /// columns not `written` after each line is read and SET is applied.
    pub defaults: Vec<(usize, Expr)>,
    /// The columns the field list or SET give a value.
    pub written: Vec<bool>,
}

#[derive(Default)]
pub struct LoadOutcome {
    pub records: u64,
    pub copied: u64,
    pub deleted: u64,
    /// Every warning of the statement (SHOW WARNINGS keeps at most 65535).
    pub warnings: u64,
    pub last_insert_id: Option<u64>,
    /// The user variables' values after the last line.
    pub vars: Vec<Value>,
}

const WIN1252_HIGH: [char; 32] = [
    '\u{20AC}', '\u{81}', '\u{201A}', '\u{192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{2C6}', '\u{2030}', '\u{160}', '\u{2039}', '\u{152}', '\u{8D}', '\u{17D}', '\u{8F}',
    '\u{90}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{2DC}', '\u{2122}', '\u{161}', '\u{203A}', '\u{153}', '\u{9D}', '\u{17E}', '\u{178}',
];

fn to_utf8(cs: FileCharset, b: &[u8]) -> Vec<u8> {
    match cs {
        FileCharset::AsIs => b.to_vec(),
        FileCharset::Latin1 => {
            let s: String = b
                .iter()
                .map(|&c| match c {
                    0x80..=0x9F => WIN1252_HIGH[(c - 0x80) as usize],
                    _ => c as char,
                })
                .collect();
            s.into_bytes()
        }
    }
}

struct Loader<'p> {
    plan: &'p LoadPlan,
    strict: bool,
    out: LoadOutcome,
    /// Each column's value before the line is read (MariaDB's default record).
    defaults: Vec<Value>,
    auto_col: Option<usize>,
    checks: Option<crate::checks::TableChecks>,
}

impl Loader<'_> {
    /// A warning, or the statement's error in strict mode.
    fn warn(&mut self, cx: &mut ExecCtx, e: SqlError) -> Result<(), SqlError> {
        if self.strict {
            return Err(e);
        }
        self.out.warnings += 1;
        cx.warn(e);
        Ok(())
    }

    /// A conversion through `store`, counting the warning it may leave.
    fn store(
        &mut self,
        cx: &mut ExecCtx,
        c: usize,
        v: Value,
        rowno: u64,
    ) -> Result<Value, SqlError> {
        let before = cx.warnings.len();
        let plan = self.plan;
        let col = &plan.table.columns[c];
        let rounded = match col.ty {
            ColumnType::Decimal { scale, .. } => expr::decimal_rounded(&v, scale),
            _ => false,
        };
        let r = store(cx, &plan.table, c, v, rowno, self.strict)?;
        if rounded && cx.warnings.len() == before {
            cx.warn(SqlError::note(
                code::WARN_DATA_TRUNCATED,
                format!("Data truncated for column '{}' at row {rowno}", col.name),
            ));
        }
        self.out.warnings += (cx.warnings.len() - before) as u64;
        Ok(r)
    }

    /// NULL read for column `c`.
    fn null_into(
        &mut self,
        cx: &mut ExecCtx,
        row: &mut [Value],
        c: usize,
        rowno: u64,
    ) -> Result<(), SqlError> {
        let col = &self.plan.table.columns[c];
        row[c] = if col.nullable || col.auto_increment {
            Value::Null
        } else if matches!(col.ty, ColumnType::Timestamp { .. }) {
            now_value(cx, &col.ty)
        } else {
            let e = sql_err(
                code::ER_WARN_NULL_TO_NOTNULL,
                format!(
                    "Column set to default value; NULL supplied to NOT NULL column '{}' at row {rowno}",
                    col.name
                ),
            );
            self.warn(cx, e)?;
            zero_value(&col.ty)
        };
        Ok(())
    }

    /// Column `c` had no field on its line.
    fn missing(&self, cx: &ExecCtx, row: &mut [Value], c: usize) {
        let col = &self.plan.table.columns[c];
        row[c] = if !col.nullable && matches!(col.ty, ColumnType::Timestamp { .. }) {
            now_value(cx, &col.ty)
        } else if row[c].is_null() {
            Value::Null
        } else {
            zero_value(&col.ty)
        };
    }
}

fn now_value(cx: &ExecCtx, ty: &ColumnType) -> Value {
    expr::convert_for_column(&Value::DateTime(cx.now), ty).unwrap_or(Value::Null)
}

/// The value each column holds before a line is read.
fn default_row(cx: &ExecCtx, t: &TableDef) -> Vec<Value> {
    t.columns
        .iter()
        .map(|col| {
            if col.default_now {
                now_value(cx, &col.ty)
            } else if let Some(d) = &col.default {
                d.clone()
            } else if col.nullable || col.auto_increment {
                Value::Null
            } else {
                zero_value(&col.ty)
            }
        })
        .collect()
}

/// Runs the load over `reader`: one row per line until the input ends.
pub fn run<R: Read>(
    cx: &mut ExecCtx,
    plan: &LoadPlan,
    reader: &mut FieldReader<R>,
) -> Result<LoadOutcome, SqlError> {
    let t = plan.table.clone();
    let mut ld = Loader {
        plan,
        strict: cx.strict && !plan.ignore,
        out: LoadOutcome {
            vars: vec![Value::Null; plan.vars.len()],
            ..Default::default()
        },
        defaults: default_row(cx, &t),
        auto_col: t.auto_increment_column(),
        checks: crate::checks::TableChecks::bind(&t, cx.check_constraints, &[])?,
    };
    let ncols = t.columns.len();
    let mut skip = plan.skip_rows;
    let mut rowno = 1u64;
    let mut n = 0u64;
    loop {
        if n.is_multiple_of(256) {
            cx.check_interrupt()?;
        }
        n += 1;
        let mut row = ld.defaults.clone();
        let mut vars = vec![Value::Null; plan.vars.len()];
        let mut got = 0;
        for (i, target) in plan.targets.iter().enumerate() {
            let Some(f) = reader.read_field() else {
                break;
            };
            got = i + 1;
            if skip > 0 {
                continue;
            }
            let is_null = f.null_escape || (plan.null_word && !f.enclosed && f.data == b"NULL");
            match *target {
                Target::Var(v) => {
                    vars[v] = if is_null {
                        Value::Null
                    } else {
                        Value::Bytes(to_utf8(plan.charset, f.data))
                    };
                }
                Target::Column(c) => {
                    if is_null {
                        ld.null_into(cx, &mut row, c, rowno)?;
                    } else {
                        let bytes = if t.columns[c].ty.collation() == Some(Collation::Binary) {
                            f.data.to_vec()
                        } else {
                            to_utf8(plan.charset, f.data)
                        };
                        row[c] = ld.store(cx, c, Value::Bytes(bytes), rowno)?;
                    }
                }
            }
        }
        if let Some(e) = reader.error.take() {
            return Err(read_error(e));
        }
        if got == 0 {
            break;
        }
        if skip > 0 {
            skip -= 1;
            if !reader.next_line() {
                break;
            }
            continue;
        }
        for target in &plan.targets[got..] {
            if let Target::Column(c) = *target {
                ld.missing(cx, &mut row, c);
                let e = sql_err(
                    code::ER_WARN_TOO_FEW_RECORDS,
                    format!("Row {rowno} doesn't contain data for all columns"),
                );
                ld.warn(cx, e)?;
            }
        }
        if !plan.set.is_empty() {
            let mut joined = row.clone();
            joined.extend(vars.iter().cloned());
            for (c, e) in &plan.set {
                let col = &t.columns[*c];
                let v = match e {
                    Some(e) => eval(e, &Ctx::new(&joined))?,
                    None => ld.defaults[*c].clone(),
                };
                let v = if v.is_null() {
                    if col.nullable || col.auto_increment {
                        Value::Null
                    } else {
                        let e = sql_err(
                            code::ER_BAD_NULL_ERROR,
                            format!("Column '{}' cannot be null", col.name),
                        );
                        ld.warn(cx, e)?;
                        zero_value(&col.ty)
                    }
                } else {
                    ld.store(cx, *c, v, rowno)?
                };
                row[*c] = v.clone();
                joined[*c] = v;
            }
        }
        debug_assert_eq!(row.len(), ncols);
        let strict = ld.strict;
        crate::defaults::fill(
            cx,
            &t,
            &plan.defaults,
            &mut row,
            &plan.written,
            rowno,
            strict,
            true,
        )?;
        ld.out.records += 1;
        write_record(cx, &mut ld, row)?;
        ld.out.vars = vars;
        if !reader.next_line() {
            break;
        }
        if reader.line_cut {
            let e = sql_err(
                code::ER_WARN_TOO_MANY_RECORDS,
                format!(
                    "Row {rowno} was truncated; it contained more data than there were input columns"
                ),
            );
            ld.warn(cx, e)?;
        }
        rowno += 1;
    }
    if let Some(e) = reader.error.take() {
        return Err(read_error(e));
    }
    Ok(ld.out)
}

fn read_error(e: std::io::Error) -> SqlError {
    sql_err(
        code::ER_NET_READ_ERROR,
        format!("Error reading the file of LOAD DATA: {e}"),
    )
}

/// Writes one row (MariaDB's `write_record` for LOAD DATA).
fn write_record(cx: &mut ExecCtx, ld: &mut Loader, mut row: Vec<Value>) -> Result<(), SqlError> {
    let t = ld.plan.table.clone();
    if let Some(ac) = ld.auto_col {
        let v = &row[ac];
        if v.is_null() || (!cx.no_auto_value_on_zero && expr::to_f64(v) == 0.0) {
            let id = cx.txn.next_auto_increment(&t, 1).map_err(engine_err)?;
            row[ac] =
                expr::convert_for_column(&Value::UInt(id), &t.columns[ac].ty).map_err(|_| {
                    sql_err(
                        167,
                        format!(
                            "Out of range value for column '{}' at row {}",
                            t.columns[ac].name, ld.out.records
                        ),
                    )
                })?;
            ld.out.last_insert_id.get_or_insert(id);
        } else {
            let x = expr::to_i128(v);
            if x > 0 {
                cx.txn
                    .observe_auto_increment(&t, x as u64)
                    .map_err(engine_err)?;
            }
        }
    }
    if !crate::checks::admit(cx, &ld.checks, &row, ld.plan.ignore)? {
        ld.out.warnings += 1;
        return Ok(());
    }
    match ld.plan.dup {
        LoadDup::Replace => loop {
            let Some((ii, old)) = find_conflict_at(cx, &t, &row)? else {
                crate::routines::trigger::insert(cx, &t, row)?;
                break;
            };
            // As MariaDB: a row that foreign keys reference is deleted and inserted again.
            let last_unique = !t.indexes[ii + 1..].iter().any(|i| i.unique)
                && !crate::foreign_keys::is_referenced(cx, &t);
            if last_unique {
                // MariaDB updates the row in place; an identical row is not counted.
                if !same_row(&old[..t.columns.len()], &row) {
                    crate::foreign_keys::update_parent(cx, &t, &old, row)?;
                    ld.out.deleted += 1;
                }
                break;
            }
            crate::foreign_keys::delete_parent(cx, &t, &old)?;
            ld.out.deleted += 1;
        },
        _ if ld.plan.ignore => {
            if let Some((ii, old)) = find_conflict_at(cx, &t, &row)? {
                let _ = old;
                let e = duplicate(&t, ii, &row);
                ld.out.warnings += 1;
                cx.warn(e);
                return Ok(());
            }
            crate::routines::trigger::insert(cx, &t, row)?;
        }
        _ => crate::routines::trigger::insert(cx, &t, row)?,
    }
    ld.out.copied += 1;
    Ok(())
}

fn same_row(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Value::Null, Value::Null) => true,
            (Value::Bytes(p), Value::Bytes(q)) => p == q,
            _ => x == y,
        })
}

/// MariaDB's 1062 for `row` on index `ii` of `t`.
fn duplicate(t: &TableDef, ii: usize, row: &[Value]) -> SqlError {
    let idx = &t.indexes[ii];
    let vals: Vec<String> = idx.columns.iter().map(|&c| row[c].to_string()).collect();
    sql_err(
        code::ER_DUP_ENTRY,
        format!(
            "Duplicate entry '{}' for key '{}'",
            vals.join("-"),
            idx.name
        ),
    )
}
