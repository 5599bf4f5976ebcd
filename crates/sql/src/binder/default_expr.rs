//! Column DEFAULTs in DDL, as MariaDB 10.11 takes them: constants (`DEFAULT 1`,
//! `DEFAULT (1.0)`, which MariaDB folds into the literal), CURRENT_TIMESTAMP with a
//! precision for any temporal column, and expressions (`DEFAULT (a * 2)`,
//! `DEFAULT uuid()`), kept as MariaDB prints them and evaluated for each row written
//! without a value for the column (`crate::defaults`).
//!
//! An expression may not contain a subquery, an aggregate, a stored function or a
//! function MariaDB refuses there (1901); it may refer to columns, but not to an
//! AUTO_INCREMENT one (1901), nor to itself or a later column with an expression default
//! (4029); a constant one must fit the column (1067).

use super::*;
use crate::check_print;
use onelog_engine::TableDef;
use sqlparser::ast::Visit;

/// 4029 (SQLSTATE 01000, as MariaDB sends it).
const ER_EXPRESSION_REFERS_TO_UNINIT_FIELD: u16 = 4029;

/// Functions MariaDB refuses in a DEFAULT (their values depend on the statement or they
/// act on the server), as they are named in error 1901.
const FORBIDDEN: &[&str] = &[
    "last_insert_id",
    "row_count",
    "found_rows",
    "benchmark",
    "sleep",
    "get_lock",
    "release_lock",
    "release_all_locks",
    "is_free_lock",
    "is_used_lock",
    "master_pos_wait",
    "master_gtid_wait",
    "load_file",
];

/// Aggregates (1901 `'sum()'`).
const AGGREGATES: &[&str] = &[
    "sum",
    "count",
    "avg",
    "min",
    "max",
    "group_concat",
    "bit_and",
    "bit_or",
    "bit_xor",
    "std",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "variance",
    "var_pop",
    "var_samp",
    "json_arrayagg",
    "json_objectagg",
];

/// Functions whose value changes between rows or statements: an expression using one is
/// not checked against the column when the table is created.
const VOLATILE: &[&str] = &[
    "uuid",
    "uuid_short",
    "sys_guid",
    "rand",
    "now",
    "current_timestamp",
    "localtime",
    "localtimestamp",
    "sysdate",
    "curdate",
    "current_date",
    "curtime",
    "current_time",
    "utc_date",
    "utc_time",
    "utc_timestamp",
    "unix_timestamp",
    "user",
    "current_user",
    "session_user",
    "system_user",
    "current_role",
    "database",
    "schema",
    "connection_id",
    "nextval",
    "lastval",
];

fn gen_col_err(what: &str, col: &str) -> SqlError {
    err(
        crate::codes::ER_GENERATED_COLUMN_FUNCTION_IS_NOT_ALLOWED,
        format!("Function or expression '{what}' cannot be used in the DEFAULT clause of `{col}`"),
    )
}

fn invalid(col: &str) -> SqlError {
    err(
        code::ER_INVALID_DEFAULT,
        format!("Invalid default value for '{col}'"),
    )
}

/// The lower-case name of a function call.
fn fn_name(f: &sq::Function) -> String {
    name_parts(&f.name).join(".").to_ascii_lowercase()
}

/// `CURRENT_TIMESTAMP`, `NOW()`, `LOCALTIME`, ...: its precision argument (Some(None)
/// without one), None for any other expression.
fn now_call(e: &sq::Expr) -> Option<Option<u32>> {
    let sq::Expr::Function(f) = e else {
        return None;
    };
    if !matches!(
        fn_name(f).as_str(),
        "current_timestamp" | "now" | "localtimestamp" | "localtime"
    ) {
        return None;
    }
    match &f.args {
        sq::FunctionArguments::None => Some(None),
        sq::FunctionArguments::List(l) if l.args.is_empty() => Some(None),
        sq::FunctionArguments::List(l) if l.args.len() == 1 => match &l.args[0] {
            sq::FunctionArg::Unnamed(sq::FunctionArgExpr::Expr(sq::Expr::Value(v))) => {
                match &v.value {
                    sq::Value::Number(n, _) => n.parse::<u32>().ok().map(Some),
                    _ => None,
                }
            }
            _ => None,
        },
        _ => None,
    }
}

/// Whether `e` is a literal MariaDB keeps as a constant default (`1`, `-1`, `'x'`,
/// `NULL`, `TRUE`, `X'41'`, `DATE '2020-01-01'`).
fn basic_constant(e: &sq::Expr) -> bool {
    match e {
        sq::Expr::Value(_) => true,
        sq::Expr::UnaryOp {
            op: sq::UnaryOperator::Minus | sq::UnaryOperator::Plus,
            expr,
        } => {
            matches!(expr.as_ref(), sq::Expr::Value(v) if matches!(v.value, sq::Value::Number(..)))
        }
        sq::Expr::TypedString(_) => true,
        sq::Expr::Nested(inner) => basic_constant(inner),
        _ => false,
    }
}

/// Whether MariaDB shows the expression in parentheses in SHOW CREATE TABLE: operators
/// yes; function calls, columns and variables no.
fn shown_in_parentheses(e: &sq::Expr) -> bool {
    !matches!(
        e,
        sq::Expr::Function(_)
            | sq::Expr::Identifier(_)
            | sq::Expr::CompoundIdentifier(_)
            | sq::Expr::Trim { .. }
            | sq::Expr::Substring { .. }
            | sq::Expr::Ceil { .. }
            | sq::Expr::Floor { .. }
            | sq::Expr::Position { .. }
    )
}

/// The constructs MariaDB refuses in a DEFAULT expression: 1901 for the first found.
fn check_constructs(e: &sq::Expr, col: &str) -> Result<(), SqlError> {
    let mut found: Option<String> = None;
    let _ = e.visit(&mut ConstructVisitor(&mut found));
    match found {
        Some(what) => Err(gen_col_err(&what, col)),
        None => Ok(()),
    }
}

struct ConstructVisitor<'a>(&'a mut Option<String>);

impl sqlparser::ast::Visitor for ConstructVisitor<'_> {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &sq::Expr) -> std::ops::ControlFlow<()> {
        let what = match e {
            sq::Expr::Subquery(_) | sq::Expr::Exists { .. } | sq::Expr::InSubquery { .. } => {
                Some("select ...".to_string())
            }
            sq::Expr::Function(f) => {
                let n = fn_name(f);
                if n == "values" {
                    Some("select ...".to_string())
                } else if FORBIDDEN.contains(&n.as_str()) || AGGREGATES.contains(&n.as_str()) {
                    Some(format!("{n}()"))
                } else {
                    None
                }
            }
            _ => None,
        };
        match what {
            Some(w) => {
                *self.0 = Some(w);
                std::ops::ControlFlow::Break(())
            }
            None => std::ops::ControlFlow::Continue(()),
        }
    }
}

/// Whether an expression can change from row to row or statement to statement (it uses
/// a column, a variable or a volatile function).
fn varies(e: &sq::Expr) -> bool {
    struct V(bool);
    impl sqlparser::ast::Visitor for V {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &sq::Expr) -> std::ops::ControlFlow<()> {
            let v = match e {
                sq::Expr::Identifier(_) | sq::Expr::CompoundIdentifier(_) => true,
                sq::Expr::Function(f) => {
                    let n = fn_name(f);
                    VOLATILE.contains(&n.as_str()) || crate::functions::lookup(&n).is_none()
                }
                _ => false,
            };
            if v {
                self.0 = true;
                return std::ops::ControlFlow::Break(());
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let mut v = V(false);
    let _ = e.visit(&mut v);
    v.0
}

/// Sets the DEFAULT of column `def` from the expression of its DEFAULT clause. Returns
/// true for `DEFAULT NULL` (which a NOT NULL column refuses).
pub(super) fn apply_default(def: &mut ColumnDef, e: &sq::Expr) -> Result<bool, SqlError> {
    let mut inner = e;
    while let sq::Expr::Nested(x) = inner {
        inner = x;
    }
    def.default = None;
    def.default_now = false;
    def.default_expr = None;
    if let Some(prec) = now_call(inner) {
        return now_default(def, prec).map(|_| false);
    }
    if basic_constant(inner) {
        let v = match default_value(inner, &def.name, &def.ty) {
            Ok((v, _)) => v,
            Err(e) if e.code == code::ER_INVALID_DEFAULT => return Err(e),
            // X'41', DATE '2020-01-01', ...: the literal's value.
            Err(_) => Some(literal_value(inner, def)?),
        };
        return Ok(match v {
            Some(Value::Null) => true,
            v => {
                def.default = v;
                false
            }
        });
    }
    check_constructs(inner, &def.name)?;
    let text = check_print::print(inner);
    def.default_expr = Some(if shown_in_parentheses(inner) {
        format!("({text})")
    } else {
        text
    });
    Ok(false)
}

/// The value of a literal for column `def` (NULL as `Value::Null`); 1067 when it does not
/// fit.
fn literal_value(e: &sq::Expr, def: &ColumnDef) -> Result<Value, SqlError> {
    let env = crate::database::PlainEnv {
        db: None,
        catalog: Arc::new(onelog_engine::Catalog::default()),
    };
    let mut b = Binder::new(&env, "");
    let x = b.bind_expr(e, Clause::Default)?;
    let v = crate::expr::eval(&x, &crate::expr::Ctx::new(&[]))?;
    if v.is_null() {
        return Ok(v);
    }
    crate::expr::convert_for_column(&v, &def.ty).map_err(|_| invalid(&def.name))
}

/// `DEFAULT CURRENT_TIMESTAMP[(p)]`: on DATETIME and TIMESTAMP columns of the same
/// precision the classic form (`default_now`, also ON UPDATE's); otherwise, and on DATE
/// and TIME columns, the expression `current_timestamp(p)`. MariaDB takes the column's
/// precision when none is given, and never more than it.
fn now_default(def: &mut ColumnDef, prec: Option<u32>) -> Result<(), SqlError> {
    let p = match def.ty {
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => {
            let fsp = fsp as u32;
            let p = prec.map_or(fsp, |p| p.min(fsp));
            if p == fsp {
                def.default_now = true;
                return Ok(());
            }
            p
        }
        ColumnType::Date | ColumnType::Time { .. } => prec.unwrap_or(0).min(6),
        _ => return Err(invalid(&def.name)),
    };
    def.default_expr = Some(match p {
        0 => "current_timestamp()".into(),
        p => format!("current_timestamp({p})"),
    });
    Ok(())
}

/// The SHOW CREATE TABLE text of `current_timestamp` for a `default_now` column.
pub fn now_text(ty: &ColumnType) -> String {
    match ty {
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } if *fsp > 0 => {
            format!("current_timestamp({fsp})")
        }
        _ => "current_timestamp()".into(),
    }
}

/// The column names an expression refers to (variables excluded).
fn referenced_columns(e: &sq::Expr) -> Vec<String> {
    struct V(Vec<String>);
    impl sqlparser::ast::Visitor for V {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &sq::Expr) -> std::ops::ControlFlow<()> {
            let name = match e {
                sq::Expr::Identifier(i) => Some(i.clone()),
                sq::Expr::CompoundIdentifier(ids) => ids.last().cloned(),
                _ => None,
            };
            if let Some(i) = name {
                if i.quote_style.is_some() || !i.value.starts_with('@') {
                    self.0.push(i.value);
                }
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let mut v = V(Vec::new());
    let _ = e.visit(&mut v);
    v.0
}

/// Checks the expression defaults of a table being created or altered (see the module
/// documentation): the columns they name, what they call, and a constant one's value.
pub fn check_table_defaults(env: &dyn BindEnv, t: &Arc<TableDef>) -> Result<(), SqlError> {
    for (i, c) in t.columns.iter().enumerate() {
        let Some(text) = &c.default_expr else {
            continue;
        };
        let e = check_print::parse(text)?;
        for name in referenced_columns(&e) {
            let Some(j) = t.column_index(&name) else {
                return Err(err(
                    code::ER_BAD_FIELD_ERROR,
                    format!("Unknown column '{name}' in 'DEFAULT'"),
                ));
            };
            let other = &t.columns[j];
            if other.auto_increment {
                return Err(gen_col_err("AUTO_INCREMENT", &other.name));
            }
            if j == i || (j > i && other.default_expr.is_some()) {
                return Err(SqlError {
                    state: "01000",
                    ..err(
                        ER_EXPRESSION_REFERS_TO_UNINIT_FIELD,
                        format!(
                            "Expression for field `{}` is referring to uninitialized field `{}`",
                            c.name, other.name
                        ),
                    )
                });
            }
        }
        let bound = bind_default(env, t, i)?;
        let mut routine = None;
        bound.walk(&mut |x| {
            if let Expr::Routine(f, _) = x {
                routine.get_or_insert_with(|| format!("`{}`()", f.name));
            }
        });
        if let Some(r) = routine {
            return Err(gen_col_err(&r, &c.name));
        }
        if !varies(&e) {
            let v = crate::expr::eval(&bound, &crate::expr::Ctx::new(&[]))?;
            if v.is_null() && !c.nullable {
                return Err(invalid(&c.name));
            }
            if !v.is_null() && crate::expr::convert_for_column(&v, &c.ty).is_err() {
                return Err(invalid(&c.name));
            }
        }
    }
    Ok(())
}

/// Binds the default expression of column `col` of `t` against a row of `t`.
pub fn bind_default(env: &dyn BindEnv, t: &Arc<TableDef>, col: usize) -> Result<Expr, SqlError> {
    let text = t.columns[col].default_expr.as_deref().unwrap_or("NULL");
    let e = check_print::parse(text)?;
    let mut b = Binder::new(env, text);
    b.enter_row_of(t)?;
    let bound = b.bind_expr(&e, Clause::Default)?;
    if !b.aggs.is_empty() || !b.subqueries.is_empty() {
        return Err(gen_col_err(text, &t.columns[col].name));
    }
    Ok(bound)
}

/// The bound expression defaults of `t`, in column order, for a statement that writes
/// rows into it (empty when it has none).
pub fn table_defaults(
    env: &dyn BindEnv,
    t: &Arc<TableDef>,
) -> Result<Vec<(usize, Expr)>, SqlError> {
    let mut out = Vec::new();
    for (i, c) in t.columns.iter().enumerate() {
        if c.default_expr.is_some() {
            out.push((i, bind_default(env, t, i)?));
        }
    }
    Ok(out)
}

impl Binder<'_> {
    /// [`table_defaults`] in this binder's environment.
    pub fn defaults_of(&self, t: &Arc<TableDef>) -> Result<Vec<(usize, Expr)>, SqlError> {
        table_defaults(self.env, t)
    }
}

/// Whether `e` is the keyword DEFAULT standing for a value (`SET c = DEFAULT`).
pub(crate) fn is_default_keyword(e: &sq::Expr) -> bool {
    matches!(e, sq::Expr::Identifier(id)
        if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT"))
}

impl Binder<'_> {
    /// `DEFAULT(col)`: the default of a column of a table in scope, computed over the
    /// current row.
    pub(super) fn bind_default_call(
        &mut self,
        f: &sq::Function,
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        let arg = match &f.args {
            sq::FunctionArguments::List(l) if l.args.len() == 1 => match &l.args[0] {
                sq::FunctionArg::Unnamed(sq::FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            },
            _ => None,
        };
        let parts = match arg {
            Some(sq::Expr::Identifier(i)) => vec![i.value.clone()],
            Some(sq::Expr::CompoundIdentifier(ids)) => {
                ids.iter().map(|i| i.value.clone()).collect()
            }
            _ => return Err(crate::parser::syntax_error(&f.to_string(), 0)),
        };
        match self.lookup_column(&parts, clause)? {
            Expr::Col(pos) => self.default_at(pos, clause),
            _ => Err(unsupported("DEFAULT() of an outer column")),
        }
    }

    /// The default of the table column at row position `pos` (`SET c = DEFAULT`,
    /// `DEFAULT(c)`): its constant, CURRENT_TIMESTAMP, expression (bound in this scope),
    /// NULL for a nullable column; 1364 for a NOT NULL column without one.
    pub(super) fn default_at(&mut self, pos: usize, clause: Clause) -> Result<Expr, SqlError> {
        let Some(sc) = self.scope.iter().find(|s| s.pos == pos).cloned() else {
            return Err(unsupported("DEFAULT of this column"));
        };
        let t = self.resolve_table(&sc.db, &sc.table)?;
        let Some(i) = t.column_index(&sc.name) else {
            return Err(unsupported("DEFAULT of this column"));
        };
        let c = &t.columns[i];
        if c.default_now {
            let now = Value::DateTime(self.env.now());
            return Ok(Expr::Lit(
                crate::expr::convert_for_column(&now, &c.ty).unwrap_or(Value::Null),
            ));
        }
        if let Some(text) = &c.default_expr {
            let e = check_print::parse(text)?;
            return self.bind_expr(&e, clause);
        }
        if let Some(v) = &c.default {
            return Ok(Expr::Lit(v.clone()));
        }
        if c.nullable || c.auto_increment {
            return Ok(Expr::Lit(Value::Null));
        }
        if let ColumnType::Enum { elems, .. } = c.ty {
            return Ok(Expr::Lit(Value::Bytes(elems.enum_text(1))));
        }
        Err(err(
            code::ER_NO_DEFAULT_FOR_FIELD,
            format!("Field '{}' doesn't have a default value", c.name),
        ))
    }
}

impl Binder<'_> {
    /// The value of an UPDATE assignment to row position `pos`: its expression, or the
    /// column's default for `DEFAULT`.
    pub(super) fn bind_set_value(&mut self, pos: usize, e: &sq::Expr) -> Result<Expr, SqlError> {
        if is_default_keyword(e) {
            return self.default_at(pos, Clause::Set);
        }
        self.bind_expr(e, Clause::Set)
    }
}
