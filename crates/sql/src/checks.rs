//! Enforcing CHECK constraints: a table's conditions are bound once per statement and
//! evaluated for every row it writes (INSERT, REPLACE, UPDATE, INSERT ... ON DUPLICATE KEY
//! UPDATE, LOAD DATA, ALTER TABLE ADD CONSTRAINT over the existing rows). A row fails a
//! constraint whose condition is false (NULL passes): error 4025, or with IGNORE a warning
//! and the row is skipped. Column constraints are checked first, then table ones.

use std::sync::Arc;

use onelog_engine::{Catalog, CheckDef, TableDef};
use onelog_types::{SqlError, Value};

use crate::binder::{self, Select};
use crate::database::PlainEnv;
use crate::executor::ExecCtx;
use crate::expr::{self, Ctx, Expr};

/// The bound conditions of one table.
pub(crate) struct TableChecks {
    table: Arc<TableDef>,
    items: Vec<(CheckDef, Expr)>,
}

impl TableChecks {
    /// Binds the constraints of `t` (None when it has none, or they are switched off by
    /// `check_constraint_checks = 0`).
    pub(crate) fn bind(t: &Arc<TableDef>, enabled: bool) -> Result<Option<TableChecks>, SqlError> {
        if t.checks.is_empty() || !enabled {
            return Ok(None);
        }
        Self::bind_these(t, &t.checks).map(Some)
    }

    /// Binds the given constraints of `t`.
    pub(crate) fn bind_these(
        t: &Arc<TableDef>,
        checks: &[CheckDef],
    ) -> Result<TableChecks, SqlError> {
        let env = PlainEnv {
            db: Some(t.db.clone()),
            catalog: Arc::new(Catalog::default()),
        };
        let items = checks
            .iter()
            .map(|c| Ok((c.clone(), binder::bind_check(&env, t, c)?)))
            .collect::<Result<_, SqlError>>()?;
        Ok(TableChecks {
            table: t.clone(),
            items,
        })
    }

    /// The first constraint `row` fails, as error 4025.
    pub(crate) fn verify(&self, row: &[Value]) -> Result<(), SqlError> {
        for (c, e) in &self.items {
            let v = expr::eval(e, &Ctx::new(row))?;
            if expr::truth(&v) == Some(false) {
                return Err(binder::check_failed(&self.table, c));
            }
        }
        Ok(())
    }
}

/// Verifies `row` against `checks` when there are any: Ok(true) if it may be written; a
/// failure is the statement's error, or with IGNORE a warning and Ok(false) (the row is
/// skipped).
pub(crate) fn admit(
    cx: &mut ExecCtx,
    checks: &Option<TableChecks>,
    row: &[Value],
    ignore: bool,
) -> Result<bool, SqlError> {
    let Some(c) = checks else {
        return Ok(true);
    };
    match c.verify(row) {
        Ok(()) => Ok(true),
        Err(e) if ignore => {
            cx.warn(e);
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// The bound constraints of each written source of an UPDATE (indexed by source).
pub(crate) fn bind_targets(
    sel: &Select,
    targets: &[usize],
    enabled: bool,
) -> Result<Vec<Option<TableChecks>>, SqlError> {
    let mut out: Vec<Option<TableChecks>> = sel.sources.iter().map(|_| None).collect();
    for &si in targets {
        if let Some(t) = sel.sources[si].table() {
            out[si] = TableChecks::bind(t, enabled)?;
        }
    }
    Ok(out)
}

/// ALTER TABLE ... ADD CONSTRAINT ... CHECK: the table's rows must satisfy each new table
/// constraint (4025 for the first that one fails, and nothing is changed).
pub(crate) fn verify_existing(
    sess: &mut crate::Session,
    ddl: &onelog_engine::Ddl,
) -> Result<(), SqlError> {
    let onelog_engine::Ddl::AlterTable { db, table, ops, .. } = ddl else {
        return Ok(());
    };
    for op in ops {
        let onelog_engine::AlterOp::AddCheck(c) = op else {
            continue;
        };
        if c.column_level {
            continue;
        }
        let q = |s: &str| s.replace('`', "``");
        let sql = format!(
            "SELECT 1 FROM `{}`.`{}` WHERE NOT ({}) LIMIT 1",
            q(db),
            q(table),
            c.expr
        );
        if let crate::QueryResult::Rows { rows, .. } = sess.query(&sql)? {
            if !rows.is_empty() {
                return Err(crate::sql_err(
                    crate::codes::ER_CONSTRAINT_FAILED,
                    format!("CONSTRAINT `{}` failed for `{db}`.`{table}`", c.name),
                ));
            }
        }
    }
    Ok(())
}
