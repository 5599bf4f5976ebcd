//! Views where a query names them: the view's query is bound on its own (in the view's
//! database, seeing nothing of the query around it) and joins as a derived table named
//! after the view. Its source remembers the view, for privileges (a `SQL SECURITY
//! DEFINER` view needs SELECT on the view only) and for updates through it.

use std::cell::Cell;

use super::*;
use crate::views::ViewDef;

/// Views deeper than this inside each other are taken for a cycle (MariaDB refuses
/// recursive views with 1462; a cycle can only come from `CREATE OR REPLACE`).
const MAX_VIEW_DEPTH: usize = 32;

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Whether this thread is binding a view's query.
pub(crate) fn binding_view() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// The view a source was bound from.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewRef {
    pub db: String,
    pub name: String,
    /// `SQL SECURITY INVOKER`: the user needs privileges on the view's tables too.
    pub invoker: bool,
    pub def: Arc<ViewDef>,
}

/// The binding environment of a view's query: the session's, in the view's database and
/// without parameters.
struct ViewEnv<'e> {
    inner: &'e dyn BindEnv,
    db: String,
}

impl BindEnv for ViewEnv<'_> {
    fn current_db(&self) -> Option<&str> {
        Some(&self.db)
    }
    fn catalog(&self) -> Arc<Catalog> {
        self.inner.catalog()
    }
    fn params(&self) -> &[Value] {
        &[]
    }
    fn now(&self) -> DateTime {
        self.inner.now()
    }
    fn connection_id(&self) -> u32 {
        self.inner.connection_id()
    }
    fn last_insert_id(&self) -> u64 {
        self.inner.last_insert_id()
    }
    fn row_count(&self) -> i64 {
        self.inner.row_count()
    }
    fn user(&self) -> String {
        self.inner.user()
    }
    fn current_user(&self) -> String {
        self.inner.current_user()
    }
    fn version(&self) -> String {
        self.inner.version()
    }
    fn sys_var(&self, scope: Option<VarScope>, name: &str) -> Result<Value, SqlError> {
        self.inner.sys_var(scope, name)
    }
    fn user_var(&self, name: &str) -> Value {
        self.inner.user_var(name)
    }
    fn info_schema(&self, table: &str) -> Option<(Vec<VirtualColumn>, Vec<Vec<Value>>)> {
        self.inner.info_schema(table)
    }
    fn interrupted(&self) -> bool {
        self.inner.interrupted()
    }
}

/// Binds a view's query text in database `db` (also what `CREATE VIEW` checks): the
/// bound query and its column names (`columns` when given: 1353 if their count differs).
pub(crate) fn bind_view_query(
    env: &dyn BindEnv,
    db: &str,
    text: &str,
    columns: &[String],
) -> Result<(Select, Vec<String>), SqlError> {
    let parsed = crate::parser::parse_one(text)?;
    let q = match parsed.stmt {
        crate::parser::Stmt::Sql(s) => match *s {
            sq::Statement::Query(q) => q,
            _ => return Err(unsupported("a view that is not a query")),
        },
        _ => return Err(unsupported("a view that is not a query")),
    };
    let venv = ViewEnv {
        inner: env,
        db: db.to_string(),
    };
    let depth = DEPTH.with(|d| d.get());
    if depth >= MAX_VIEW_DEPTH {
        return Err(err(
            code::ER_VIEW_RECURSIVE,
            "view nesting too deep: the views contain view recursion",
        ));
    }
    DEPTH.with(|d| d.set(depth + 1));
    let r = Binder::new(&venv, text).bind_query(&q);
    DEPTH.with(|d| d.set(depth));
    let sel = r?;
    if !columns.is_empty() && columns.len() != sel.columns.len() {
        return Err(err(
            code::ER_VIEW_WRONG_LIST,
            "View's SELECT and view's field list have different column counts",
        ));
    }
    let names = if columns.is_empty() {
        sel.columns.iter().map(|c| c.name.clone()).collect()
    } else {
        columns.to_vec()
    };
    Ok((sel, names))
}

impl Binder<'_> {
    /// Adds view `db`.`name` as a source named `alias`.
    pub(super) fn bind_view(
        &mut self,
        sources: &mut Vec<Source>,
        db: &str,
        name: &str,
        alias: String,
        def: Arc<ViewDef>,
    ) -> Result<(), SqlError> {
        let (sel, names) =
            bind_view_query(self.env, db, &def.query, &def.columns).map_err(|e| match e.code {
                code::ER_VIEW_RECURSIVE => err(
                    code::ER_VIEW_RECURSIVE,
                    format!("`{db}`.`{name}` contains view recursion"),
                ),
                code::ER_QUERY_INTERRUPTED
                | code::ER_OUTOFMEMORY
                | code::ER_STACK_OVERRUN_NEED_MORE => e,
                _ => invalid_view(db, name),
            })?;
        self.add_derived_in(sources, alias, db.to_string(), sel, &names)?;
        let src = sources.last_mut().expect("just added");
        src.view = Some(Box::new(ViewRef {
            db: db.to_string(),
            name: name.to_string(),
            invoker: def.security == "INVOKER",
            def,
        }));
        Ok(())
    }
}

/// MariaDB's 1356 for a view whose query no longer binds.
pub(crate) fn invalid_view(db: &str, name: &str) -> SqlError {
    err(
        code::ER_VIEW_INVALID,
        format!(
            "View '{db}.{name}' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them"
        ),
    )
}

/// The tables and views whose privileges a query needs: a view, and its tables too when
/// it is `SQL SECURITY INVOKER`; the tables of everything else it reads.
pub fn tables_checked(sel: &Select, out: &mut Vec<(String, String)>) {
    walk_sources(sel, &mut |s| {
        if let Some(v) = &s.view {
            out.push((v.db.clone(), v.name.clone()));
            if !v.invoker {
                return false;
            }
        }
        if let SourceKind::Table(t) = &s.kind {
            out.push((t.db.clone(), t.name.clone()));
        }
        true
    });
}

/// Every view a query reads, directly or through other views.
pub fn views_read(sel: &Select, out: &mut Vec<(String, String)>) {
    walk_sources(sel, &mut |s| {
        if let Some(v) = &s.view {
            out.push((v.db.clone(), v.name.clone()));
        }
        true
    });
}
