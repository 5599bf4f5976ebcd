//! INSERT / REPLACE ... VALUES bound once and run again with new parameters.
//!
//! A session runs a statement shape (see `crate::shape`) or a prepared INSERT many times
//! with different values. Binding it again each time resolved the same table and columns
//! and turned every `?` into the same kind of constant: for a 100-row INSERT that was about
//! a tenth of the server's CPU in a 16-client load. An [`InsertTemplate`] keeps what the
//! first binding found (the table definition, the column list, IGNORE / REPLACE) and, for
//! each VALUES position, where its value comes from: a parameter as is, DEFAULT, or an
//! expression that is bound again at each run (`NOW()`, `-?`, `@v`, ...: anything that
//! reads the session or the clock).
//!
//! A template is used only while it still means what it meant: the catalog must hold the
//! very same table definition (any ALTER, DROP or CREATE of it makes a new one) and the
//! current database must be the one it was bound in (unqualified names). Otherwise the
//! statement binds afresh, with the errors that gives, and the template is rebuilt.
//! Statements with ON DUPLICATE KEY UPDATE, INSERT ... SET, INSERT ... SELECT or
//! subqueries have no template.

use std::sync::Arc;

use onelog_engine::{Catalog, TableDef};
use onelog_types::{SqlError, Value};
use sqlparser::ast as sq;

use super::{Binder, Insert, InsertSource};
use crate::expr::Expr;

/// Whether the catalog still holds this very definition of the table (any DDL on it makes
/// a new one). Kept bindings (INSERT and SELECT templates) are used only while it does.
pub(super) fn unchanged(catalog: &Catalog, table: &Arc<TableDef>) -> bool {
    catalog
        .table(&table.db, &table.name)
        .is_some_and(|t| Arc::ptr_eq(t, table))
}

/// Where one VALUES position gets its value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Slot {
    /// The statement's parameter with this index, as is.
    Param(usize),
    /// DEFAULT.
    Default,
    /// Any other expression, bound at each run.
    Bind,
}

#[derive(Debug)]
pub struct InsertTemplate {
    table: Arc<TableDef>,
    current_db: Option<String>,
    columns: Vec<usize>,
    ignore: bool,
    replace: bool,
    /// Row-major, `columns.len()` per row.
    slots: Vec<Slot>,
}

/// The VALUES list of a plain INSERT / REPLACE ... VALUES.
fn values_of(ins: &sq::Insert) -> Option<&sq::Values> {
    let src = ins.source.as_ref()?;
    match src.body.as_ref() {
        sq::SetExpr::Values(v) if src.order_by.is_none() && src.limit_clause.is_none() => Some(v),
        _ => None,
    }
}

fn slot_of(e: &sq::Expr) -> Slot {
    match e {
        sq::Expr::Value(v) => match &v.value {
            sq::Value::Placeholder(p) => match p.trim_start_matches('?').parse::<usize>() {
                Ok(k) if k > 0 => Slot::Param(k - 1),
                _ => Slot::Bind,
            },
            _ => Slot::Bind,
        },
        sq::Expr::Identifier(id)
            if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT") =>
        {
            Slot::Default
        }
        _ => Slot::Bind,
    }
}

impl InsertTemplate {
    /// The template of `ins`, just bound to `plan` in `current_db`; None when the statement
    /// is not a plain INSERT / REPLACE ... VALUES.
    pub fn new(ins: &sq::Insert, plan: &Insert, current_db: Option<&str>) -> Option<Self> {
        if !ins.assignments.is_empty()
            || ins.on.is_some()
            || ins.returning.is_some()
            || !plan.on_dup.is_empty()
            || !plan.subqueries.is_empty()
            || !matches!(plan.source, InsertSource::Values(_))
        {
            return None;
        }
        let width = plan.columns.len();
        let mut slots = Vec::new();
        for row in &values_of(ins)?.rows {
            if row.content.len() != width {
                return None; // `VALUES ()`: every column DEFAULT
            }
            slots.extend(row.content.iter().map(slot_of));
        }
        Some(InsertTemplate {
            table: plan.table.clone(),
            current_db: current_db.map(str::to_string),
            columns: plan.columns.clone(),
            ignore: plan.ignore,
            replace: plan.replace,
            slots,
        })
    }

    /// Whether the template still binds as `ins` would now: same table definition in
    /// the catalog, same current database.
    pub fn valid(&self, catalog: &Catalog, current_db: Option<&str>) -> bool {
        self.current_db.as_deref() == current_db && unchanged(catalog, &self.table)
    }

    /// Whether some positions need the binder at each run.
    pub fn binds(&self) -> bool {
        self.slots.contains(&Slot::Bind)
    }

    /// Binds the positions that are neither a parameter nor DEFAULT, in order.
    pub fn bind_rest(
        &self,
        b: &mut Binder,
        ins: &sq::Insert,
    ) -> Result<Vec<Option<Expr>>, SqlError> {
        let mut out = Vec::new();
        b.enter_row_of(&self.table)?;
        let exprs = values_of(ins)
            .into_iter()
            .flat_map(|v| v.rows.iter().flat_map(|r| r.content.iter()));
        for (e, slot) in exprs.zip(&self.slots) {
            if *slot == Slot::Bind {
                out.push(b.bind_insert_value(e)?);
            }
        }
        Ok(out)
    }

    /// The plan for one run: parameters are moved out of `params` (left NULL), the other
    /// positions take `bound` (from [`bind_rest`](Self::bind_rest)) in order.
    pub fn plan(&self, params: &mut [Value], bound: Vec<Option<Expr>>) -> Insert {
        let width = self.columns.len().max(1);
        let mut bound = bound.into_iter();
        let mut rows = Vec::with_capacity(self.slots.len() / width);
        for chunk in self.slots.chunks(width) {
            let row = chunk
                .iter()
                .map(|s| match *s {
                    Slot::Param(k) => Some(Expr::Lit(
                        params
                            .get_mut(k)
                            .map_or(Value::Null, |v| std::mem::replace(v, Value::Null)),
                    )),
                    Slot::Default => None,
                    Slot::Bind => bound.next().flatten(),
                })
                .collect();
            rows.push(row);
        }
        Insert {
            table: self.table.clone(),
            columns: self.columns.clone(),
            source: InsertSource::Values(rows),
            ignore: self.ignore,
            replace: self.replace,
            on_dup: vec![],
            subqueries: vec![],
            returning: None,
            defaults: vec![],
        }
    }
}
