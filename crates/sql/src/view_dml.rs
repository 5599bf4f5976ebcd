//! Changing rows through a view. INSERT, UPDATE and DELETE naming an updatable view become
//! the same statement on the view's table (MariaDB's MERGE algorithm): the view's columns
//! are replaced by the expressions they stand for, the view's WHERE is added to the
//! statement's, and a view over a view is unfolded again. A view is updatable when its
//! query reads one table (or one updatable view), without grouping, aggregates, DISTINCT,
//! LIMIT, window functions or set operations; a column is updatable (and insertable) when
//! it is a column of that table.

use std::ops::ControlFlow;

use onelog_engine::ObjectKind;
use onelog_types::{code, SqlError};
use sqlparser::ast as sq;
use sqlparser::ast::{VisitMut, VisitorMut};

use crate::binder::{Select, SourceKind};
use crate::parser::name_parts;
use crate::session::Session;
use crate::sql_err;
use crate::users::Priv;
use crate::views::ViewDef;

/// Views inside views deeper than this are refused (see `binder/views.rs`).
const MAX_UNFOLD: usize = 32;

/// Whether a bound view query is updatable: one table or updatable view, no grouping,
/// aggregates, DISTINCT, LIMIT or window functions, at least one plain column.
pub(crate) fn updatable_target(sel: &Select) -> Option<()> {
    if sel.sources.len() != 1
        || sel.aggregate
        || !sel.group_by.is_empty()
        || sel.having.is_some()
        || sel.distinct
        || sel.limit.is_some()
        || !sel.windows.is_empty()
    {
        return None;
    }
    let src = &sel.sources[0];
    let plain = match &src.kind {
        SourceKind::Table(_) => true,
        SourceKind::Derived(d) => src.view.is_some() && updatable_target(d).is_some(),
        _ => false,
    };
    let has_column = sel
        .items
        .iter()
        .any(|e| matches!(e, crate::expr::Expr::Col(_)));
    (plain && has_column).then_some(())
}

/// One updatable view unfolded: its table and what its columns stand for.
struct Merge {
    db: String,
    name: String,
    invoker: bool,
    /// The view's FROM item, its table qualified with the view's database.
    relation: sq::TableFactor,
    /// (db, table) of that item (a table or another view).
    base: (String, String),
    /// Each view column's name and expression over the table.
    columns: Vec<(String, sq::Expr)>,
    filter: Option<sq::Expr>,
    /// NONE, CASCADED or LOCAL.
    check_option: String,
}

impl Merge {
    fn column(&self, name: &str) -> Option<&sq::Expr> {
        self.columns
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, e)| e)
    }

    /// The table column a view column is, or 1348 / the insert error.
    fn plain_column(&self, name: &str, unknown_in: &str) -> Result<sq::Ident, SqlError> {
        match self.column(name) {
            Some(sq::Expr::Identifier(i)) => Ok(i.clone()),
            Some(sq::Expr::CompoundIdentifier(parts)) => Ok(parts.last().cloned().unwrap()),
            Some(_) => Err(sql_err(
                code::ER_NONUPDATEABLE_COLUMN,
                format!("Column '{name}' is not updatable"),
            )),
            None => Err(sql_err(
                code::ER_BAD_FIELD_ERROR,
                format!("Unknown column '{name}' in '{unknown_in}'"),
            )),
        }
    }

    fn not_updatable(&self, verb: &str) -> SqlError {
        sql_err(
            code::ER_NON_UPDATABLE_TABLE,
            format!(
                "The target table {} of the {verb} is not updatable",
                self.name
            ),
        )
    }
}

impl Session {
    /// The view `db`.`name` unfolded, if it is one (None: not a view). `verb` names the
    /// statement for 1288 when the view is not updatable.
    fn merge_view(&self, db: &str, name: &str, verb: &str) -> Result<Option<Merge>, SqlError> {
        let cat = self.db.engine.catalog();
        if cat.table(db, name).is_some() {
            return Ok(None);
        }
        let Some(obj) = cat.object(ObjectKind::View, db, name) else {
            return Ok(None);
        };
        let def = ViewDef::decode(obj)?;
        let not_updatable = || {
            sql_err(
                code::ER_NON_UPDATABLE_TABLE,
                format!("The target table {name} of the {verb} is not updatable"),
            )
        };
        let (sel, names) = self
            .bind(&def.query, |b| {
                crate::binder::bind_view_query(b.env(), db, &def.query, &def.columns)
            })
            .map_err(|_| crate::binder::invalid_view(db, name))?;
        if updatable_target(&sel).is_none() {
            return Err(not_updatable());
        }
        let parsed = crate::parser::parse_one(&def.query)?;
        let crate::parser::Stmt::Sql(stmt) = parsed.stmt else {
            return Err(not_updatable());
        };
        let sq::Statement::Query(q) = *stmt else {
            return Err(not_updatable());
        };
        let sq::SetExpr::Select(s) = *q.body else {
            return Err(not_updatable());
        };
        if s.from.len() != 1 || !s.from[0].joins.is_empty() {
            return Err(not_updatable());
        }
        let mut relation = s.from[0].relation.clone();
        let sq::TableFactor::Table {
            name: tname, alias, ..
        } = &mut relation
        else {
            return Err(not_updatable());
        };
        let mut parts = name_parts(tname);
        let table = parts.pop().unwrap_or_default();
        let base_db = parts.pop().unwrap_or_else(|| db.to_string());
        *tname = sq::ObjectName::from(vec![
            sq::Ident::with_quote('`', base_db.clone()),
            sq::Ident::with_quote('`', table.clone()),
        ]);
        let qualifier = alias
            .as_ref()
            .map(|a| a.name.value.clone())
            .unwrap_or_else(|| table.clone());
        // The view's expressions, `*` spelled out as the table's columns.
        let mut exprs = Vec::new();
        for item in &s.projection {
            match item {
                sq::SelectItem::UnnamedExpr(e) | sq::SelectItem::ExprWithAlias { expr: e, .. } => {
                    exprs.push(e.clone())
                }
                sq::SelectItem::ExprWithAliases { .. } => return Err(not_updatable()),
                sq::SelectItem::Wildcard(_) | sq::SelectItem::QualifiedWildcard(..) => {
                    for c in self.columns_of(&base_db, &table)? {
                        exprs.push(sq::Expr::CompoundIdentifier(vec![
                            sq::Ident::with_quote('`', qualifier.clone()),
                            sq::Ident::with_quote('`', c),
                        ]));
                    }
                }
            }
        }
        if exprs.len() != names.len() {
            return Err(not_updatable());
        }
        Ok(Some(Merge {
            db: db.to_string(),
            name: name.to_string(),
            invoker: def.security == "INVOKER",
            relation,
            base: (base_db, table),
            columns: names.into_iter().zip(exprs).collect(),
            filter: s.selection.clone(),
            check_option: def.check_option.clone(),
        }))
    }

    /// Column names of a table or view.
    fn columns_of(&self, db: &str, name: &str) -> Result<Vec<String>, SqlError> {
        let cat = self.db.engine.catalog();
        if let Some(t) = cat.table(db, name) {
            return Ok(t.columns.iter().map(|c| c.name.clone()).collect());
        }
        if let Some(obj) = cat.object(ObjectKind::View, db, name) {
            let def = ViewDef::decode(obj)?;
            let (_, names) = self.bind(&def.query, |b| {
                crate::binder::bind_view_query(b.env(), db, &def.query, &def.columns)
            })?;
            return Ok(names);
        }
        Err(sql_err(
            code::ER_NO_SUCH_TABLE,
            format!("Table '{db}.{name}' doesn't exist"),
        ))
    }

    /// Checks the privilege `p` on the view, and lets the statement on its table pass when
    /// the view runs with its definer's rights.
    fn grant_through_view(&mut self, m: &Merge, p: Priv) -> Result<(), SqlError> {
        if !self.view_base_ok.contains(&(m.db.clone(), m.name.clone())) {
            self.check_tables(&[(m.db.clone(), m.name.clone())], p)?;
        }
        if !m.invoker {
            self.view_base_ok.push(m.base.clone());
        }
        Ok(())
    }

    /// The statement with every view it writes through unfolded (None: it writes no view).
    /// Privileges on the views are checked here.
    pub(crate) fn unfold_views(
        &mut self,
        stmt: &sq::Statement,
    ) -> Result<Option<sq::Statement>, SqlError> {
        let mut out: Option<sq::Statement> = None;
        // CHECK OPTION: the first view written through decides. LOCAL checks its own WHERE,
        // CASCADED also those of the views under it (MariaDB). Each condition is carried
        // down to the table as the views unfold: (view, condition, what it reads).
        let mut cascaded = false;
        // A failed check names the view written through.
        let mut first = String::new();
        let mut checks: Vec<(String, sq::Expr, (String, String))> = Vec::new();
        for depth in 0..MAX_UNFOLD {
            let cur = out.as_ref().unwrap_or(stmt);
            let writes_rows = !matches!(cur, sq::Statement::Delete(_));
            let next = match cur {
                sq::Statement::Update(u) => self
                    .unfold_update(u)?
                    .map(|(s, m)| (sq::Statement::Update(s), m)),
                sq::Statement::Delete(d) => self
                    .unfold_delete(d)?
                    .map(|(s, m)| (sq::Statement::Delete(s), m)),
                sq::Statement::Insert(i) => self
                    .unfold_insert(i)?
                    .map(|(s, m)| (sq::Statement::Insert(s), m)),
                _ => None,
            };
            let Some((s, m)) = next else {
                for (view, mut cond, (db, table)) in checks {
                    unqualify(&mut cond);
                    self.view_checks.push(crate::checks::ViewCheck {
                        db,
                        table,
                        view,
                        cond: cond.to_string(),
                    });
                }
                return Ok(out);
            };
            for (_, cond, reads) in checks.iter_mut() {
                if *reads == (m.db.clone(), m.name.clone()) {
                    substitute(cond, &m, &m.name);
                    *reads = m.base.clone();
                }
            }
            if depth == 0 {
                cascaded = m.check_option == "CASCADED";
                first = format!("`{}`.`{}`", m.db, m.name);
            }
            let checked = if depth == 0 {
                m.check_option != "NONE"
            } else {
                cascaded
            };
            if let (true, true, Some(cond)) = (writes_rows, checked, &m.filter) {
                checks.push((first.clone(), cond.clone(), m.base.clone()));
            }
            out = Some(s);
        }
        Err(sql_err(
            code::ER_VIEW_RECURSIVE,
            "the views written through contain view recursion",
        ))
    }

    fn target_name(&self, name: &sq::ObjectName) -> Result<(String, String), SqlError> {
        let mut parts = name_parts(name);
        let t = parts.pop().unwrap_or_default();
        let d = match parts.pop() {
            Some(d) => d,
            None => self
                .current_db()
                .ok_or_else(|| sql_err(code::ER_NO_DB_ERROR, "No database selected"))?
                .to_string(),
        };
        Ok((d, t))
    }

    fn unfold_update(&mut self, u: &sq::Update) -> Result<Option<(sq::Update, Merge)>, SqlError> {
        let sq::TableFactor::Table { name, alias, .. } = &u.table.relation else {
            return Ok(None);
        };
        let (db, t) = self.target_name(name)?;
        let Some(m) = self.merge_view(&db, &t, "UPDATE")? else {
            return Ok(None);
        };
        if !u.table.joins.is_empty() || u.from.is_some() {
            return Err(m.not_updatable("UPDATE"));
        }
        self.grant_through_view(&m, Priv::UPDATE)?;
        let qual = alias.as_ref().map_or(t.clone(), |a| a.name.value.clone());
        let mut out = u.clone();
        out.table.relation = m.relation.clone();
        for a in &mut out.assignments {
            if let sq::AssignmentTarget::ColumnName(n) = &mut a.target {
                let col = name_parts(n).pop().unwrap_or_default();
                *n = sq::ObjectName::from(vec![m.plain_column(&col, "field list")?]);
            }
            substitute(&mut a.value, &m, &qual);
        }
        out.selection = with_filter(u.selection.clone(), &m, &qual);
        for o in &mut out.order_by {
            substitute(&mut o.expr, &m, &qual);
        }
        Ok(Some((out, m)))
    }

    fn unfold_delete(&mut self, d: &sq::Delete) -> Result<Option<(sq::Delete, Merge)>, SqlError> {
        let from = match &d.from {
            sq::FromTable::WithFromKeyword(f) | sq::FromTable::WithoutKeyword(f) => f,
        };
        if from.len() != 1 {
            return Ok(None);
        }
        let sq::TableFactor::Table { name, alias, .. } = &from[0].relation else {
            return Ok(None);
        };
        let (db, t) = self.target_name(name)?;
        let Some(m) = self.merge_view(&db, &t, "DELETE")? else {
            return Ok(None);
        };
        if !from[0].joins.is_empty() || !d.tables.is_empty() || d.using.is_some() {
            return Err(m.not_updatable("DELETE"));
        }
        self.grant_through_view(&m, Priv::DELETE)?;
        let qual = alias.as_ref().map_or(t.clone(), |a| a.name.value.clone());
        let mut out = d.clone();
        let relation = sq::TableWithJoins {
            relation: m.relation.clone(),
            joins: vec![],
        };
        out.from = match &d.from {
            sq::FromTable::WithFromKeyword(_) => sq::FromTable::WithFromKeyword(vec![relation]),
            sq::FromTable::WithoutKeyword(_) => sq::FromTable::WithoutKeyword(vec![relation]),
        };
        out.selection = with_filter(d.selection.clone(), &m, &qual);
        for o in &mut out.order_by {
            substitute(&mut o.expr, &m, &qual);
        }
        Ok(Some((out, m)))
    }

    fn unfold_insert(&mut self, i: &sq::Insert) -> Result<Option<(sq::Insert, Merge)>, SqlError> {
        let sq::TableObject::TableName(name) = &i.table else {
            return Ok(None);
        };
        let (db, t) = self.target_name(name)?;
        let Some(m) = self.merge_view(&db, &t, "INSERT").map_err(|e| {
            if e.code == code::ER_NON_UPDATABLE_TABLE {
                not_insertable(&t)
            } else {
                e
            }
        })?
        else {
            return Ok(None);
        };
        let p = if i.replace_into {
            Priv(Priv::INSERT.0 | Priv::DELETE.0)
        } else {
            Priv::INSERT
        };
        self.grant_through_view(&m, p)?;
        let sq::TableFactor::Table { name: base, .. } = &m.relation else {
            return Err(not_insertable(&t));
        };
        let insertable = |n: &str| {
            m.plain_column(n, "field list").map_err(|e| {
                if e.code == code::ER_NONUPDATEABLE_COLUMN {
                    not_insertable(&t)
                } else {
                    e
                }
            })
        };
        let mut out = i.clone();
        out.table = sq::TableObject::TableName(base.clone());
        out.table_alias = None;
        let listed: Vec<String> = if i.columns.is_empty() && i.assignments.is_empty() {
            m.columns.iter().map(|(n, _)| n.clone()).collect()
        } else {
            i.columns
                .iter()
                .map(|c| name_parts(c).pop().unwrap_or_default())
                .collect()
        };
        if !i.assignments.is_empty() {
            out.columns.clear();
        } else {
            out.columns = listed
                .iter()
                .map(|n| insertable(n).map(|id| sq::ObjectName::from(vec![id])))
                .collect::<Result<_, _>>()?;
        }
        for a in &mut out.assignments {
            if let sq::AssignmentTarget::ColumnName(n) = &mut a.target {
                let col = name_parts(n).pop().unwrap_or_default();
                *n = sq::ObjectName::from(vec![insertable(&col)?]);
            }
        }
        if let Some(sq::OnInsert::DuplicateKeyUpdate(sets)) = &mut out.on {
            for a in sets {
                if let sq::AssignmentTarget::ColumnName(n) = &mut a.target {
                    let col = name_parts(n).pop().unwrap_or_default();
                    *n = sq::ObjectName::from(vec![m.plain_column(&col, "field list")?]);
                }
                substitute(&mut a.value, &m, &t);
            }
        }
        Ok(Some((out, m)))
    }
}

fn not_insertable(name: &str) -> SqlError {
    sql_err(
        code::ER_NON_INSERTABLE_TABLE,
        format!("The target table {name} of the INSERT is not insertable-into"),
    )
}

/// The statement's WHERE over the view, and the view's own, over the table.
fn with_filter(selection: Option<sq::Expr>, m: &Merge, qual: &str) -> Option<sq::Expr> {
    let mine = selection.map(|mut e| {
        substitute(&mut e, m, qual);
        e
    });
    let nest = |e: sq::Expr| sq::Expr::Nested(Box::new(e));
    match (mine, m.filter.clone()) {
        (Some(a), Some(b)) => Some(sq::Expr::BinaryOp {
            left: Box::new(nest(a)),
            op: sq::BinaryOperator::And,
            right: Box::new(nest(b)),
        }),
        (a, b) => a.or(b),
    }
}

/// `e` with its column names unqualified (a CHECK OPTION condition is evaluated over the
/// view's one table).
fn unqualify(e: &mut sq::Expr) {
    struct U(usize);
    impl VisitorMut for U {
        type Break = ();
        fn pre_visit_query(&mut self, _q: &mut sq::Query) -> ControlFlow<()> {
            self.0 += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _q: &mut sq::Query) -> ControlFlow<()> {
            self.0 -= 1;
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, e: &mut sq::Expr) -> ControlFlow<()> {
            if self.0 == 0 {
                if let sq::Expr::CompoundIdentifier(parts) = e {
                    if let Some(last) = parts.last().cloned() {
                        *e = sq::Expr::Identifier(last);
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let _ = e.visit(&mut U(0));
}

/// Replaces the view's columns in `e` (by name, or qualified by `qual`, the name the
/// statement gives the view) with their expressions; subqueries keep their own names.
fn substitute(e: &mut sq::Expr, m: &Merge, qual: &str) {
    struct Sub<'a> {
        m: &'a Merge,
        qual: &'a str,
        depth: usize,
    }
    impl VisitorMut for Sub<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, _q: &mut sq::Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _q: &mut sq::Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, e: &mut sq::Expr) -> ControlFlow<()> {
            if self.depth > 0 {
                return ControlFlow::Continue(());
            }
            let col = match e {
                sq::Expr::Identifier(i) => Some(i.value.clone()),
                sq::Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
                    let q = &parts[parts.len() - 2].value;
                    (*q == self.qual).then(|| parts[parts.len() - 1].value.clone())
                }
                _ => None,
            };
            if let Some(r) = col.and_then(|c| self.m.column(&c)) {
                *e = sq::Expr::Nested(Box::new(r.clone()));
            }
            ControlFlow::Continue(())
        }
    }
    let _ = e.visit(&mut Sub { m, qual, depth: 0 });
}
