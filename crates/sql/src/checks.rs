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

/// The condition of a view `WITH CHECK OPTION` that a statement writes through: rows it
/// writes into table `db`.`table` must satisfy `cond` (over the table's columns), or the
/// statement fails with 1369 naming the view.
#[derive(Clone, Debug)]
pub(crate) struct ViewCheck {
    pub db: String,
    pub table: String,
    /// `` `db`.`view` ``
    pub view: String,
    pub cond: String,
}

/// The bound conditions of one table.
pub(crate) struct TableChecks {
    table: Arc<TableDef>,
    items: Vec<(CheckDef, Expr)>,
    /// The CHECK OPTION conditions of views written through: (view, condition).
    views: Vec<(String, Expr)>,
}

impl TableChecks {
    /// Binds the constraints of `t` (unless switched off by `check_constraint_checks =
    /// 0`) and the CHECK OPTION conditions of `views` over it (None when there are none).
    pub(crate) fn bind(
        t: &Arc<TableDef>,
        enabled: bool,
        views: &[ViewCheck],
    ) -> Result<Option<TableChecks>, SqlError> {
        let views: Vec<&ViewCheck> = views
            .iter()
            .filter(|v| v.db == t.db && v.table == t.name)
            .collect();
        if (t.checks.is_empty() || !enabled) && views.is_empty() {
            return Ok(None);
        }
        let mut c = Self::bind_these(t, if enabled { &t.checks } else { &[] })?;
        let env = PlainEnv {
            db: Some(t.db.clone()),
            catalog: Arc::new(Catalog::default()),
        };
        for v in views {
            let def = CheckDef {
                name: v.view.clone(),
                expr: v.cond.clone(),
                column_level: false,
            };
            c.views
                .push((v.view.clone(), binder::bind_check(&env, t, &def)?));
        }
        Ok(Some(c))
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
            views: Vec::new(),
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
        // A row written through a view must be one the view shows.
        for (view, e) in &self.views {
            let v = expr::eval(e, &Ctx::new(row))?;
            if expr::truth(&v) != Some(true) {
                return Err(crate::sql_err(
                    onelog_types::code::ER_VIEW_CHECK_FAILED,
                    format!("CHECK OPTION failed {view}"),
                ));
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
        // IGNORE does not cover a view's CHECK OPTION (MariaDB).
        Err(e) if ignore && e.code != onelog_types::code::ER_VIEW_CHECK_FAILED => {
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
    views: &[ViewCheck],
) -> Result<Vec<Option<TableChecks>>, SqlError> {
    let mut out: Vec<Option<TableChecks>> = sel.sources.iter().map(|_| None).collect();
    for &si in targets {
        if let Some(t) = sel.sources[si].table() {
            out[si] = TableChecks::bind(t, enabled, views)?;
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
