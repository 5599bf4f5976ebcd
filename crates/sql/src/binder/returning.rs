//! `RETURNING` of INSERT, REPLACE and single-table DELETE (MariaDB 10.5+): a select list
//! over the row written or deleted, sent back as a result set.

use onelog_types::{code, SqlError};
use sqlparser::ast as sq;

use super::{err, unsupported, Binder, Clause, Expr, Source};
use crate::parser::name_parts;
use crate::ResultColumn;

/// A bound RETURNING list: its expressions over the table's row, and the result columns.
#[derive(Clone, Debug)]
pub struct Returning {
    pub items: Vec<Expr>,
    pub columns: Vec<ResultColumn>,
}

impl Binder<'_> {
    /// Binds `list` over `sources` (one table, already in this binder's scope): `*`,
    /// `t.*` and expressions of the row; no aggregates (1111), no subqueries.
    pub(super) fn bind_returning(
        &mut self,
        sources: &[Source],
        list: &[sq::SelectItem],
    ) -> Result<Returning, SqlError> {
        let subqueries = self.subqueries.len();
        let allow_agg = std::mem::replace(&mut self.allow_agg, false);
        let mut items = Vec::new();
        let mut columns = Vec::new();
        let r = (|| {
            for item in list {
                match item {
                    sq::SelectItem::Wildcard(_) => {
                        for src in sources {
                            self.push_source_columns(src, &mut items, &mut columns);
                        }
                    }
                    sq::SelectItem::QualifiedWildcard(kind, _) => {
                        let name = match kind {
                            sq::SelectItemQualifiedWildcardKind::ObjectName(n) => name_parts(n),
                            sq::SelectItemQualifiedWildcardKind::Expr(e) => vec![e.to_string()],
                        };
                        let alias = name.last().cloned().unwrap_or_default();
                        let src = sources.iter().find(|s| s.alias == alias).ok_or_else(|| {
                            err(code::ER_BAD_TABLE_ERROR, format!("Unknown table '{alias}'"))
                        })?;
                        self.push_source_columns(src, &mut items, &mut columns);
                    }
                    sq::SelectItem::UnnamedExpr(e) => {
                        let b = self.bind_expr(e, Clause::Field)?;
                        let name = self.item_name(e);
                        columns.push(self.result_column(&b, name));
                        items.push(b);
                    }
                    sq::SelectItem::ExprWithAlias { expr, alias } => {
                        let b = self.bind_expr(expr, Clause::Field)?;
                        columns.push(self.result_column(&b, alias.value.clone()));
                        items.push(b);
                    }
                    other => return Err(unsupported(&other.to_string())),
                }
            }
            Ok(())
        })();
        self.allow_agg = allow_agg;
        r?;
        if self.subqueries.len() != subqueries {
            return Err(unsupported("subqueries in RETURNING"));
        }
        Ok(Returning { items, columns })
    }
}
