//! CHECK constraints in DDL: the constraints of CREATE TABLE (column and table ones, and
//! JSON's implicit `json_valid`), ALTER TABLE ADD / DROP CONSTRAINT, and binding a
//! table's conditions against its row for enforcement (`crate::checks`).

use super::*;
use crate::check_print;
use onelog_engine::CheckDef;

/// The JSON type's implicit constraint on column `col`.
pub fn json_check(col: &str) -> CheckDef {
    CheckDef {
        name: col.to_string(),
        expr: format!("json_valid(`{}`)", col.replace('`', "``")),
        column_level: true,
    }
}

/// A column constraint (`a INT CHECK (a > 0)`): named after its column.
pub(super) fn column_check(col: &str, e: &sq::Expr) -> CheckDef {
    CheckDef {
        name: col.to_string(),
        expr: check_print::print(e),
        column_level: true,
    }
}

/// Adds a table constraint (`[CONSTRAINT name] CHECK (expr)`) to `checks`; an unnamed one
/// gets the first free `CONSTRAINT_n`, as MariaDB names them.
pub(super) fn add_table_check(
    checks: &mut Vec<CheckDef>,
    name: Option<&str>,
    e: &sq::Expr,
) -> Result<(), SqlError> {
    let taken = |n: &str, checks: &[CheckDef]| {
        checks
            .iter()
            .any(|c| !c.column_level && c.name.eq_ignore_ascii_case(n))
    };
    let name = match name {
        Some(n) => {
            if taken(n, checks) {
                return Err(err(
                    crate::codes::ER_DUP_CONSTRAINT_NAME,
                    format!("Duplicate CHECK constraint name '{n}'"),
                ));
            }
            n.to_string()
        }
        None => (1..)
            .map(|i| format!("CONSTRAINT_{i}"))
            .find(|n| !taken(n, checks))
            .expect("a free name"),
    };
    checks.push(CheckDef {
        name,
        expr: check_print::print(e),
        column_level: false,
    });
    Ok(())
}

/// Puts column constraints first (in column order), then table constraints, as MariaDB
/// lists and checks them.
pub(super) fn order_checks(columns: &[ColumnDef], checks: &mut [CheckDef]) {
    let rank = |c: &CheckDef| match c.column_level {
        true => columns
            .iter()
            .position(|x| x.name.eq_ignore_ascii_case(&c.name))
            .unwrap_or(columns.len()),
        false => usize::MAX,
    };
    checks.sort_by_key(rank);
}

/// The name a failed constraint has in error 4025: `table.column` for a column
/// constraint, the name for a table one.
pub fn check_error_name(t: &TableDef, c: &CheckDef) -> String {
    if c.column_level {
        format!("{}.{}", t.name, c.name)
    } else {
        c.name.clone()
    }
}

/// 4025 `CONSTRAINT `name` failed for `db`.`table``.
pub fn check_failed(t: &TableDef, c: &CheckDef) -> SqlError {
    err(
        crate::codes::ER_CONSTRAINT_FAILED,
        format!(
            "CONSTRAINT `{}` failed for `{}`.`{}`",
            check_error_name(t, c),
            t.db,
            t.name
        ),
    )
}

/// Binds the condition of `c` against a row of `t` (column `i` at position `i`).
pub fn bind_check(env: &dyn BindEnv, t: &Arc<TableDef>, c: &CheckDef) -> Result<Expr, SqlError> {
    let e = check_print::parse(&c.expr)?;
    let mut b = Binder::new(env, &c.expr);
    b.enter_row_of(t)?;
    let bound = b.bind_expr(&e, Clause::Check)?;
    if !b.aggs.is_empty() || !b.subqueries.is_empty() {
        return Err(err(
            crate::codes::ER_GENERATED_COLUMN_FUNCTION_IS_NOT_ALLOWED,
            format!(
                "Function or expression '{}' cannot be used in the CHECK clause of `{}`",
                c.expr, c.name
            ),
        ));
    }
    Ok(bound)
}

/// ENUM or SET of these values (MariaDB's limits: 65535 ENUM values, 64 SET members, no
/// `,` in a SET member).
pub(super) fn enum_set_type(
    col: &str,
    values: &[String],
    set: bool,
) -> Result<ColumnType, SqlError> {
    if set {
        if values.len() > 64 {
            return Err(err(
                1097,
                format!("Too many strings for column {col} and SET"),
            ));
        }
        if let Some(v) = values.iter().find(|v| v.contains(',')) {
            return Err(err(
                1367,
                format!("Illegal set '{v}' value found during parsing"),
            ));
        }
    } else if values.len() > 65535 {
        return Err(err(
            1097,
            format!("Too many strings for column {col} and ENUM"),
        ));
    }
    let elems = onelog_types::Elements::new(values);
    let collation = Collation::DEFAULT;
    Ok(if set {
        ColumnType::Set { elems, collation }
    } else {
        ColumnType::Enum { elems, collation }
    })
}
