//! Expression DEFAULTs at run time: a statement that writes rows binds the table's
//! default expressions once (`binder::table_defaults`, in the session's environment, so
//! that `NOW()` is the statement's time and `@v` the session's variable) and evaluates
//! them for each row, after the values given explicitly and the constant defaults, in
//! column order (as MariaDB does), so that a default sees the columns before it. The
//! values computed are stored in the row, which the binlog logs as it is: replicas and
//! crash recovery replay the values, never the expressions.

use onelog_engine::TableDef;
use onelog_types::{code, SqlError, Value};

use crate::executor::{store, zero_value, ExecCtx};
use crate::expr::{self, Ctx, Expr};

/// Evaluates the bound `defaults` of `t` for the columns of `row` not given explicitly,
/// storing each value as an explicit one is stored (conversions, strict mode). A NULL
/// into a NOT NULL column is 1048, or with `lenient` (IGNORE, non-strict multi-row) a
/// warning and the type's zero value.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fill(
    cx: &mut ExecCtx,
    t: &TableDef,
    defaults: &[(usize, Expr)],
    row: &mut [Value],
    explicit: &[bool],
    rowno: u64,
    strict: bool,
    lenient: bool,
) -> Result<(), SqlError> {
    for (c, e) in defaults {
        let c = *c;
        if explicit[c] {
            continue;
        }
        let v = expr::eval(e, &Ctx::new(row))?;
        let v = store(cx, t, c, v, rowno, strict)?;
        let col = &t.columns[c];
        row[c] = if v.is_null() && !col.nullable && !col.auto_increment {
            let e = crate::sql_err(
                code::ER_BAD_NULL_ERROR,
                format!("Column '{}' cannot be null", col.name),
            );
            if strict || !lenient {
                return Err(e);
            }
            cx.warn(e);
            zero_value(&col.ty)
        } else {
            v
        };
    }
    Ok(())
}

/// The row an INSERT's values see while they are computed, before any is stored: each
/// column's constant default (CURRENT_TIMESTAMP as the statement's time), NULL for a
/// column with an expression default or none. A value naming a column reads it here.
pub(crate) fn row_before_values(cx: &ExecCtx, t: &TableDef) -> Vec<Value> {
    let mut row: Vec<Value> = t
        .columns
        .iter()
        .map(|c| {
            if c.default_now {
                expr::convert_for_column(&Value::DateTime(cx.now), &c.ty).unwrap_or(Value::Null)
            } else {
                c.default.clone().unwrap_or(Value::Null)
            }
        })
        .collect();
    row.resize(t.columns.len() + t.hidden_pk as usize, Value::Null);
    row
}

/// Stores `v`, the value computed for column `c`, into the row the next values see.
pub(crate) fn set_seen(t: &TableDef, seen: &mut [Value], c: usize, v: &Value) {
    if let Some(slot) = seen.get_mut(c) {
        *slot = expr::convert_for_column(v, &t.columns[c].ty).unwrap_or_else(|_| v.clone());
    }
}
