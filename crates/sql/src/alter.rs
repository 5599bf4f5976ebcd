//! ALTER TABLE column conversions: how the stored values of a column become values of its
//! new definition (MODIFY / CHANGE with another type, or NOT NULL added), following what
//! MariaDB 10.11 does when it copies a table:
//! - NULL into a NOT NULL column: 1265 "Data truncated"; the type's zero value otherwise.
//! - A string into a number is first read as a number (MariaDB's `val_int` / `val_real` /
//!   `val_decimal`): an integer takes the leading digits (`'3.7'` gives 3, `'1e3'` gives 1),
//!   decimals and doubles the leading number; anything after it gives 1292 "Truncated
//!   incorrect INTEGER value: '...'" (a note only when all that follows is spaces).
//! - A double becomes an integer rounded half to even (1916 on overflow), a decimal half
//!   away from zero.
//! - The rest is stored as INSERT stores it, with 1264 for out-of-range numbers and 1265
//!   for strings cut to the new length (where INSERT says 1406).
//!
//! In strict mode (STRICT_TRANS_TABLES / STRICT_ALL_TABLES) the first warning is an error
//! and the table is left unchanged; notes never are. Recovery re-runs a logged ALTER in
//! non-strict mode: the statement succeeded, so either no warning occurred (and the values
//! are the same) or it ran non-strict.

use std::sync::Arc;

use onelog_engine::{ColumnConverter, ColumnDef, TableDef};
use onelog_types::{code, ColumnType, Decimal, SqlError, Value};
use parking_lot::Mutex;

use crate::expr::{self, ConvIssue};
use crate::sql_err;

pub(crate) struct AlterConverter {
    strict: bool,
    db: String,
    table: String,
    warnings: Mutex<Vec<SqlError>>,
    /// The expression defaults of the new table, bound on first use (see `added`).
    defaults: Mutex<Option<Vec<(usize, expr::Expr)>>>,
}

/// How a string read as a number ended.
#[derive(PartialEq, Eq)]
enum Rest {
    /// Nothing after the number.
    Clean,
    /// Only spaces after the number: a note.
    Spaces,
    /// Anything else (or no number at all, or an overflow): a warning.
    Junk,
}

/// Splits `s` (leading whitespace skipped) into the longest prefix accepted by `len` and
/// classifies what follows it.
fn number_prefix(s: &[u8], len: impl Fn(&str) -> usize) -> (String, Rest) {
    let txt = String::from_utf8_lossy(s);
    let t = txt.trim_start_matches([' ', '\t', '\n', '\r']);
    let n = len(t);
    let rest = &t[n..];
    let kind = if n == 0 {
        Rest::Junk
    } else if rest.is_empty() {
        Rest::Clean
    } else if rest.trim_end_matches([' ', '\t', '\n', '\r']).is_empty() {
        Rest::Spaces
    } else {
        Rest::Junk
    };
    (t[..n].to_string(), kind)
}

/// Length of an optionally signed run of digits at the start of `t` (0 without digits).
fn int_len(t: &str) -> usize {
    let b = t.as_bytes();
    let sign = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = b[sign..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        0
    } else {
        sign + digits
    }
}

/// Length of the number (sign, digits, fraction, exponent) at the start of `t`.
fn num_len(t: &str) -> usize {
    let (p, _) = expr::numeric_prefix(t.as_bytes());
    p.len()
}

fn zero_value(ty: &ColumnType) -> Value {
    onelog_engine::catalog::implicit_default(&ColumnDef {
        name: String::new(),
        ty: *ty,
        nullable: false,
        default: None,
        auto_increment: false,
        default_now: false,
        on_update_now: false,
        default_expr: None,
        comment: String::new(),
        display_width: None,
        num: Default::default(),
    })
}

impl AlterConverter {
    pub(crate) fn new(strict: bool, db: &str, table: &str) -> AlterConverter {
        AlterConverter {
            strict,
            db: db.to_string(),
            table: table.to_string(),
            warnings: Mutex::new(Vec::new()),
            defaults: Mutex::new(None),
        }
    }

    /// The warnings of the conversions so far.
    pub(crate) fn take_warnings(&self) -> Vec<SqlError> {
        std::mem::take(&mut *self.warnings.lock())
    }

    /// A conversion problem: an error in strict mode (unless a note), else a warning.
    fn issue(&self, e: SqlError, note: bool) -> Result<(), SqlError> {
        if self.strict && !note {
            return Err(e);
        }
        let mut w = self.warnings.lock();
        if w.len() < 65535 {
            w.push(e);
        }
        Ok(())
    }

    fn truncated(col: &str, row: u64) -> SqlError {
        sql_err(
            1265,
            format!("Data truncated for column '{col}' at row {row}"),
        )
    }

    /// 1292 "Truncated incorrect KIND value" for a string read as a number.
    fn read_number(&self, kind: &str, s: &[u8], rest: Rest) -> Result<(), SqlError> {
        if rest == Rest::Clean {
            return Ok(());
        }
        let e = sql_err(
            code::ER_TRUNCATED_WRONG_VALUE,
            format!(
                "Truncated incorrect {kind} value: '{}'",
                String::from_utf8_lossy(s)
            ),
        );
        self.issue(e, rest == Rest::Spaces)
    }

    /// The value as MariaDB reads it before storing it in a column of type `ty`.
    fn as_source(&self, v: Value, ty: &ColumnType) -> Result<Value, SqlError> {
        Ok(match (v, ty) {
            (Value::Bytes(b), ColumnType::Int { .. }) => {
                let (p, mut rest) = number_prefix(&b, int_len);
                let n = match p.parse::<i64>() {
                    Ok(n) => n,
                    Err(_) if p.is_empty() => 0,
                    Err(_) => {
                        rest = Rest::Junk;
                        if p.starts_with('-') {
                            i64::MIN
                        } else {
                            i64::MAX
                        }
                    }
                };
                self.read_number("INTEGER", &b, rest)?;
                Value::Int(n)
            }
            (Value::Bytes(b), ColumnType::Decimal { .. }) => {
                let (p, rest) = number_prefix(&b, num_len);
                self.read_number("DECIMAL", &b, rest)?;
                let d = if p.contains(['e', 'E']) {
                    expr::to_decimal(&Value::Double(p.parse().unwrap_or(0.0)))
                } else {
                    p.parse::<Decimal>().ok()
                };
                Value::Decimal(d.unwrap_or(Decimal::new(0, 0)))
            }
            (Value::Bytes(b), ColumnType::Float | ColumnType::Double) => {
                let (p, rest) = number_prefix(&b, num_len);
                self.read_number("DOUBLE", &b, rest)?;
                Value::Double(p.parse().unwrap_or(0.0))
            }
            (Value::Double(f), ColumnType::Int { .. }) => {
                let r = f.round_ties_even();
                // 2^63: the first double above i64::MAX.
                const LIMIT: f64 = 9_223_372_036_854_775_808.0;
                if !(-LIMIT..LIMIT).contains(&r) {
                    let e = sql_err(
                        1916,
                        format!(
                            "Got overflow when converting '{}' to INT. Value truncated",
                            onelog_types::format_double(f)
                        ),
                    );
                    self.issue(e, false)?;
                }
                Value::Int(r as i64)
            }
            (v, _) => v,
        })
    }
}

impl ColumnConverter for AlterConverter {
    /// An added column's expression DEFAULT, evaluated for each existing row (as MariaDB
    /// does, so `uuid()` gives each row its own value) and stored as ALTER stores values.
    fn added(
        &self,
        new: &TableDef,
        col: usize,
        row: &[Value],
        n: u64,
    ) -> Result<Option<Value>, SqlError> {
        let mut cache = self.defaults.lock();
        if cache.is_none() {
            let env = crate::database::PlainEnv {
                db: Some(new.db.clone()),
                catalog: Arc::new(onelog_engine::Catalog::default()),
            };
            *cache = Some(crate::binder::table_defaults(&env, &Arc::new(new.clone()))?);
        }
        let Some(e) = cache
            .as_ref()
            .and_then(|d| d.iter().find(|(c, _)| *c == col))
            .map(|(_, e)| e)
        else {
            return Ok(None);
        };
        let v = expr::eval(e, &expr::Ctx::new(row))?;
        let to = &new.columns[col];
        if v.is_null() {
            return self.convert(to, to, v, n).map(Some);
        }
        match expr::convert_for_column(&v, &to.ty) {
            Ok(x) => Ok(Some(x)),
            Err((issue, adjusted)) => {
                let e = issue.error(&to.ty, &self.db, &self.table, &to.name, &v, n);
                self.issue(e, false)?;
                Ok(Some(adjusted))
            }
        }
    }

    fn convert(
        &self,
        from: &ColumnDef,
        to: &ColumnDef,
        v: Value,
        row: u64,
    ) -> Result<Value, SqlError> {
        if v.is_null() {
            if to.nullable {
                return Ok(Value::Null);
            }
            self.issue(Self::truncated(&to.name, row), false)?;
            return Ok(zero_value(&to.ty));
        }
        if from.ty == to.ty && (from.num == to.num || to.num.is_plain()) {
            return Ok(v);
        }
        let at = (self.db.as_str(), self.table.as_str(), to.name.as_str());
        let v = expr::alter_fixed_bin(&from.ty, &to.ty, v, at)?;
        let src = self.as_source(v, &to.ty)?;
        match expr::convert_for_column(&src, &to.ty)
            .and_then(|x| crate::num_attrs::check_value(to, x))
        {
            Ok(out) => {
                // Digits or a time of day dropped: a note.
                let dropped = match (&src, &out) {
                    (Value::Decimal(a), Value::Decimal(b)) => a.rescale(b.scale) != Some(*a),
                    (Value::Double(a), Value::Decimal(b)) => b.to_f64() != *a,
                    (Value::DateTime(a), Value::Date(_)) => {
                        a.hour != 0 || a.minute != 0 || a.second != 0 || a.micro != 0
                    }
                    _ => false,
                };
                if dropped {
                    self.issue(Self::truncated(&to.name, row), true)?;
                }
                Ok(out)
            }
            Err((issue, adjusted)) => {
                let e = match issue {
                    ConvIssue::OutOfRange => sql_err(
                        code::ER_WARN_DATA_OUT_OF_RANGE,
                        format!("Out of range value for column '{}' at row {row}", to.name),
                    ),
                    ConvIssue::TooLong | ConvIssue::Truncated => Self::truncated(&to.name, row),
                    ConvIssue::BadValue => {
                        let kind = match to.ty {
                            ColumnType::Time { .. } => "time",
                            ColumnType::Date
                            | ColumnType::DateTime { .. }
                            | ColumnType::Timestamp { .. } => "datetime",
                            _ => {
                                return self
                                    .issue(
                                        issue.error(
                                            &to.ty,
                                            &self.db,
                                            &self.table,
                                            &to.name,
                                            &src,
                                            row,
                                        ),
                                        false,
                                    )
                                    .map(|_| adjusted)
                            }
                        };
                        sql_err(
                            code::ER_TRUNCATED_WRONG_VALUE,
                            format!(
                                "Incorrect {kind} value: '{}' for column `{}`.`{}`.`{}` at row {row}",
                                expr::to_string(&src),
                                self.db,
                                self.table,
                                to.name
                            ),
                        )
                    }
                };
                self.issue(e, false)?;
                Ok(adjusted)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(name: &str, ty: ColumnType, nullable: bool) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty,
            nullable,
            default: None,
            auto_increment: false,
            default_now: false,
            on_update_now: false,
            default_expr: None,
            comment: String::new(),
            display_width: None,
            num: Default::default(),
        }
    }

    const VC: ColumnType = ColumnType::Varchar {
        len: 20,
        binary: false,
        collation: onelog_types::Collation::Utf8mb4GeneralCi,
    };
    const INT: ColumnType = ColumnType::Int {
        bytes: 4,
        unsigned: false,
    };

    #[test]
    fn strings_into_integers() {
        let c = AlterConverter::new(false, "d", "t");
        let (f, t) = (col("c", VC, true), col("c", INT, true));
        let conv = |s: &str| c.convert(&f, &t, Value::str(s), 1).unwrap();
        assert_eq!(conv("12"), Value::Int(12));
        assert_eq!(conv(" 12"), Value::Int(12));
        assert_eq!(conv("3.7"), Value::Int(3));
        assert_eq!(conv("1e3"), Value::Int(1));
        assert_eq!(conv("ab"), Value::Int(0));
        assert_eq!(conv("99999999999"), Value::Int(2147483647));
        let w = c.take_warnings();
        let codes: Vec<u16> = w.iter().map(|e| e.code).collect();
        assert_eq!(codes, vec![1292, 1292, 1292, 1264]);
        assert_eq!(w[2].message, "Truncated incorrect INTEGER value: 'ab'");

        let strict = AlterConverter::new(true, "d", "t");
        assert_eq!(
            strict.convert(&f, &t, Value::str("12 "), 1).unwrap(),
            Value::Int(12),
            "trailing spaces are only a note"
        );
        let e = strict.convert(&f, &t, Value::str("x"), 1).unwrap_err();
        assert_eq!(e.code, 1292);
    }

    #[test]
    fn nulls_numbers_and_strings() {
        let c = AlterConverter::new(false, "d", "t");
        let nn = col("n", INT, false);
        assert_eq!(
            c.convert(&col("n", INT, true), &nn, Value::Null, 2)
                .unwrap(),
            Value::Int(0)
        );
        let dbl = col("f", ColumnType::Double, true);
        assert_eq!(
            c.convert(&dbl, &col("f", INT, true), Value::Double(2.5), 1)
                .unwrap(),
            Value::Int(2)
        );
        let short = col(
            "s",
            ColumnType::Varchar {
                len: 3,
                binary: false,
                collation: onelog_types::Collation::Utf8mb4GeneralCi,
            },
            true,
        );
        assert_eq!(
            c.convert(&col("s", INT, true), &short, Value::Int(12345), 4)
                .unwrap(),
            Value::str("123")
        );
        let w = c.take_warnings();
        assert_eq!(w[0].message, "Data truncated for column 'n' at row 2");
        assert_eq!(w[1].message, "Data truncated for column 's' at row 4");
        let strict = AlterConverter::new(true, "d", "t");
        let e = strict
            .convert(&col("n", INT, true), &nn, Value::Null, 7)
            .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (1265, "Data truncated for column 'n' at row 7")
        );
    }
}
