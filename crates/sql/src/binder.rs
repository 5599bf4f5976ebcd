//! Binder: resolves names in sqlparser's AST against the catalog (databases, tables,
//! columns, aliases), binds placeholders, folds per-statement constants (NOW(),
//! DATABASE(), @@variables, @user variables) and produces typed plans for the planner and
//! executor, and `Ddl` values for the engine. A subquery's binder sees the enclosing
//! queries' columns as outer references. This file holds the binder's state, scopes and the
//! bound plan types; the work is split by what is bound:
//! - `query`: FROM items, SELECT and its clauses; [`joins`]: join trees; [`setop`]: set
//!   operations; `logic`: balanced AND/OR chains of row comparisons.
//! - `scalar`: expressions; `types`: their types and collations.
//! - `dml`: INSERT, UPDATE, DELETE; `ddl`: CREATE/ALTER/DROP and the other DDL.
//! - [`template`], `select_template`: bindings kept to run again with new parameters.

use std::sync::Arc;

use onelog_engine::{AlterOp, Catalog, ColumnDef, Ddl, IndexDef, LockMode, TableDef};
use onelog_types::{
    code, stack, Collation, ColumnType, DateTime, Decimal, Derivation, SqlError, Value,
};
use sqlparser::ast as sq;
use sqlparser::ast::Spanned;

use crate::dates;
use crate::expr::{self, BinOp, CastType, Expr};
use crate::functions::{self, Func};
use crate::inlist::{self, SortedList};
use crate::parser::{name_parts, Scope as VarScope};
use crate::planner::Access;
use crate::{column_flags as cf, ResultColumn};
use logic::Logic;

/// Stack a level of a bound expression may take where it is walked, cloned or dropped
/// without a stack check.
const ROW_CMP_BYTES_PER_LEVEL: usize = 256;

/// The comparison a binary operator stands for, if it is one.
fn comparison(op: &sq::BinaryOperator) -> Option<BinOp> {
    use sq::BinaryOperator as O;
    Some(match op {
        O::Eq => BinOp::Eq,
        O::NotEq => BinOp::Ne,
        O::Lt => BinOp::Lt,
        O::LtEq => BinOp::Le,
        O::Gt => BinOp::Gt,
        O::GtEq => BinOp::Ge,
        O::Spaceship => BinOp::NullSafeEq,
        _ => return None,
    })
}

/// A long IN list of constants of one kind, sorted (`crate::inlist`).
fn sorted_list(items: &[Expr], coll: Collation) -> Option<SortedList> {
    if items.len() <= inlist::SORTED_FROM {
        return None;
    }
    let values = items
        .iter()
        .map(|e| match e {
            Expr::Lit(v) => Some(v.clone()),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    SortedList::new(values, coll)
}

/// The type and collation of each node met during one outermost `type_of` / `coll_of`
/// call, by address: a node's type depends on its arguments' types and collations, and
/// asking each of them again at every level made nested calls (`ABS(ABS(...))`, nested
/// CASE) take exponential time. The tree is borrowed, so unchanged and in place, for the
/// whole outermost call; the memo is emptied when that call returns, so an address is
/// never looked up after its node could have moved or been freed.
#[derive(Default)]
struct TypeMemo {
    depth: std::cell::Cell<usize>,
    types: MemoTable<(ColumnType, bool)>,
    colls: MemoTable<(Collation, Derivation)>,
}

type MemoTable<T> = std::cell::RefCell<std::collections::HashMap<usize, T>>;

impl TypeMemo {
    /// `e`'s entry in `table`, computed by `compute` when missing. Results are kept while
    /// an outermost call runs; everything is forgotten when the outermost call returns.
    fn cached<T: Copy>(
        &self,
        table: impl Fn(&Self) -> &MemoTable<T>,
        e: &Expr,
        compute: impl FnOnce() -> T,
    ) -> T {
        let key = e as *const Expr as usize;
        if let Some(v) = table(self).borrow().get(&key) {
            return *v;
        }
        self.depth.set(self.depth.get() + 1);
        let v = compute();
        self.depth.set(self.depth.get() - 1);
        if self.depth.get() > 0 {
            table(self).borrow_mut().insert(key, v);
        } else {
            self.types.borrow_mut().clear();
            self.colls.borrow_mut().clear();
        }
        v
    }
}

/// Queries that may enclose a query (MariaDB's limit: 64 levels in all).
const MAX_SELECT_NESTING: usize = 64;

/// What the binder needs from the session.
pub trait BindEnv {
    fn current_db(&self) -> Option<&str>;
    fn catalog(&self) -> Arc<Catalog>;
    fn params(&self) -> &[Value];
    fn now(&self) -> DateTime;
    fn connection_id(&self) -> u32;
    fn last_insert_id(&self) -> u64;
    fn row_count(&self) -> i64;
    fn user(&self) -> String;
    /// `CURRENT_USER()`: the account privileges come from (`user@host pattern`).
    fn current_user(&self) -> String {
        self.user()
    }
    fn version(&self) -> String;
    fn sys_var(&self, scope: Option<VarScope>, name: &str) -> Result<Value, SqlError>;
    fn user_var(&self, name: &str) -> Value;
    /// Rows of an `information_schema` table (columns, rows), None if unknown.
    fn info_schema(&self, table: &str) -> Option<(Vec<VirtualColumn>, Vec<Vec<Value>>)>;
    /// Whether the statement was killed (binding a huge statement takes time too).
    fn interrupted(&self) -> bool {
        false
    }
    /// `MASTER_GTID_WAIT(pos, timeout)`: 0 once the replica has applied `pos`, -1 after
    /// `timeout` seconds (None or negative: no limit).
    fn master_gtid_wait(&self, _pos: &str, _timeout: Option<f64>) -> Result<Value, SqlError> {
        Err(SqlError::from_code(
            onelog_types::code::ER_NOT_SUPPORTED_YET,
            "This version of MariaDB doesn't yet support 'MASTER_GTID_WAIT here'",
        ))
    }
}

/// A column of a virtual (information_schema or derived) table.
#[derive(Clone, Debug)]
pub struct VirtualColumn {
    pub name: String,
    pub ty: ColumnType,
}

impl VirtualColumn {
    /// A text column: utf8mb4_general_ci, except database and table names, which compare
    /// case-sensitively (as MariaDB's information_schema lookups by name do on Linux,
    /// where database and table names are case-sensitive).
    pub fn text(name: &str) -> Self {
        let names = ["TABLE_SCHEMA", "TABLE_NAME", "SCHEMA_NAME", "INDEX_SCHEMA"];
        let coll = if names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            Collation::Utf8mb4Bin
        } else {
            Collation::DEFAULT
        };
        VirtualColumn {
            name: name.to_string(),
            ty: ColumnType::varchar(64, coll),
        }
    }
    pub fn int(name: &str) -> Self {
        VirtualColumn {
            name: name.to_string(),
            ty: ColumnType::Int {
                bytes: 8,
                unsigned: true,
            },
        }
    }
}

pub fn err(c: u16, msg: impl Into<String>) -> SqlError {
    crate::sql_err(c, msg)
}

pub fn unsupported(what: &str) -> SqlError {
    err(
        code::ER_NOT_SUPPORTED_YET,
        format!("This version of MariaDB doesn't yet support '{what}'"),
    )
}

mod alter;
mod calls;
mod check;
mod ddl;
mod default_expr;
mod dml;
mod fixedbin;
mod insert_row;
pub(crate) mod joins;
mod logic;
mod numeric;
mod operators;
mod predicates;
mod query;
mod returning;
mod scalar;
mod select_template;
mod sequence_call;
mod setop;
mod special_forms;
mod table_options;
mod template;
mod types;
mod views;
mod window;
mod zerofill;
pub(crate) use setop::NULL_STORED;
pub(crate) use views::{
    bind_view_query, binding_view, invalid_view, tables_checked, views_read, ViewRef,
};

pub use alter::*;
pub use check::*;
pub use ddl::*;
pub use default_expr::{now_text, table_defaults};
pub use scalar::*;
pub use types::*;
pub use window::{ntile_error, FrameBound, WinCall, WinFunc};

pub use returning::Returning;
pub use select_template::{changed_params, SelectTemplate};
pub use setop::{coerce as setop_coerce, union_type, SetNode, SetOp, SetOpKind, NULL_TYPE};
pub use template::InsertTemplate;

/// How a source joins the sources before it (in execution order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    /// The first source of an outer-joined group `sources[i..group_end]` (the right side of
    /// a LEFT JOIN or the left side of a RIGHT JOIN): when no row of the group matches, the
    /// group's columns are NULL.
    Left,
}

#[derive(Clone, Debug, Default)]
pub struct IndexHints {
    /// USE/FORCE INDEX: only these (None: no restriction).
    pub only: Option<Vec<String>>,
    pub force: bool,
    pub ignore: Vec<String>,
}

#[derive(Clone, Debug)]
pub enum SourceKind {
    Table(Arc<TableDef>),
    /// Materialised rows (information_schema tables).
    Rows(Arc<Vec<Vec<Value>>>),
    /// A subquery in FROM, run before the statement.
    Derived(Box<Select>),
    /// UNION / INTERSECT / EXCEPT, materialised before the statement.
    SetOp(Box<SetOp>),
    /// A recursive common table expression, materialised before the statement.
    Recursive(Box<Recursive>),
    /// The rows of the previous iteration of a recursive CTE, inside its recursive part
    /// (replaced by them before each run).
    Working,
}

/// `WITH RECURSIVE r AS (anchor UNION [ALL] step)`: the anchor runs once; the step runs
/// again and again over the rows the previous run added (the `Working` source) until it
/// adds none (UNION DISTINCT drops rows seen before).
#[derive(Clone, Debug)]
pub struct Recursive {
    pub anchor: Select,
    pub step: Select,
    pub distinct: bool,
    /// Column types: the anchor's; every row is converted to them.
    pub types: Vec<ColumnType>,
}

#[derive(Clone, Debug)]
pub struct Source {
    pub alias: String,
    pub db: String,
    pub kind: SourceKind,
    /// First position of this source's columns in the joined row.
    pub offset: usize,
    /// Number of positions (table columns, plus the hidden row id for tables without a
    /// primary key).
    pub width: usize,
    pub ncols: usize,
    pub join: JoinKind,
    /// End (exclusive source index) of the outer-joined group this source starts
    /// (`join == Left`).
    pub group_end: usize,
    /// ON conditions (conjuncts), evaluated when this source is joined.
    pub on: Vec<Expr>,
    /// Conditions checked once the outer-joined group this source starts is complete or
    /// NULL-extended (WHERE conjuncts over its columns, ON conditions of joins around it).
    pub post: Vec<Expr>,
    pub hints: IndexHints,
    /// Row locks for this source (None: the statement's).
    pub lock: Option<LockMode>,
    /// Chosen by the planner.
    pub access: Access,
    /// WHERE conjuncts checked after this source is joined (assigned by the planner).
    pub filters: Vec<Expr>,
    /// The view this (derived) source is.
    pub view: Option<Box<ViewRef>>,
}

impl Source {
    pub fn table(&self) -> Option<&Arc<TableDef>> {
        match &self.kind {
            SourceKind::Table(t) => Some(t),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggKind {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
    GroupConcat,
    BitAnd,
    BitOr,
    BitXor,
    /// STD, STDDEV, STDDEV_POP
    StdPop,
    StdSamp,
    /// VARIANCE, VAR_POP
    VarPop,
    VarSamp,
    /// JSON_ARRAYAGG: a GROUP_CONCAT of the values as JSON (see `functions/json.rs`).
    JsonArrayAgg,
}

/// The type of STD/VARIANCE over `arg`: MariaDB shows 4 more digits than an exact
/// argument has (a DOUBLE whose decimals are fixed; a DECIMAL here), all of a DOUBLE's.
pub fn stat_type(arg: &ColumnType) -> ColumnType {
    match arg {
        ColumnType::Int { .. } => ColumnType::Decimal {
            precision: 30,
            scale: 4,
        },
        ColumnType::Decimal { scale, .. } => ColumnType::Decimal {
            precision: 38,
            scale: (scale + 4).min(30),
        },
        _ => ColumnType::Double,
    }
}

/// (expression, descending, collation) per ORDER BY item of an aggregate.
pub type AggOrder = Vec<(Expr, bool, Collation)>;

/// GROUP_CONCAT's separator when none is given.
const DEFAULT_SEPARATOR: &[u8] = b",";

/// An ORDER BY / GROUP BY position (`ORDER BY 2`): the item of `items` it names, or 1054
/// naming `clause`. None: `e` is not an integer literal (`GROUP BY 0.5` or `1e1` is a
/// constant, as in MariaDB).
fn positional(e: &sq::Expr, items: &[Expr], clause: &str) -> Option<Result<Expr, SqlError>> {
    let sq::Expr::Value(v) = e else { return None };
    let sq::Value::Number(n, _) = &v.value else {
        return None;
    };
    if !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let i: usize = n.parse().unwrap_or(0);
    Some(if i == 0 || i > items.len() {
        Err(err(
            code::ER_BAD_FIELD_ERROR,
            format!("Unknown column '{n}' in '{clause}'"),
        ))
    } else {
        Ok(items[i - 1].clone())
    })
}

#[derive(Clone, Debug)]
pub struct AggCall {
    pub kind: AggKind,
    pub arg: Expr,
    pub distinct: bool,
    pub arg_type: ColumnType,
    /// GROUP_CONCAT's `ORDER BY`, evaluated per row.
    pub order: AggOrder,
    /// GROUP_CONCAT's `SEPARATOR` (default `,`).
    pub separator: Vec<u8>,
}

#[derive(Clone, Debug)]
pub struct Select {
    pub sources: Vec<Source>,
    /// WHERE conjuncts.
    pub filter: Vec<Expr>,
    pub group_by: Vec<Expr>,
    pub aggs: Vec<AggCall>,
    pub having: Option<Expr>,
    pub items: Vec<Expr>,
    pub columns: Vec<ResultColumn>,
    pub distinct: bool,
    pub order_by: Vec<(Expr, bool)>,
    /// The collations ORDER BY and GROUP BY items sort and group strings by.
    pub order_colls: Vec<Collation>,
    pub group_colls: Vec<Collation>,
    /// How strongly each result column's collation binds (a set operation aggregates its
    /// parts' collations by it: a column beats a literal, `_bin` beats `_ci`).
    pub derivs: Vec<Derivation>,
    pub limit: Option<u64>,
    pub offset: u64,
    pub lock: LockMode,
    pub aggregate: bool,
    pub subqueries: Vec<Select>,
    pub width: usize,
    /// Set by the planner: rows come out of the access path already in ORDER BY order.
    pub ordered: bool,
    /// For a subquery: the positions of the enclosing query's row it depends on (empty:
    /// uncorrelated).
    pub params: Vec<usize>,
    /// Window functions, computed after HAVING; call `i` is `Expr::Agg(aggs.len() + i)`.
    pub windows: Vec<WinCall>,
}

impl Select {
    /// The expressions the window functions evaluate.
    pub fn window_exprs(&self) -> impl Iterator<Item = &Expr> {
        self.windows.iter().flat_map(|w| w.exprs())
    }
}

#[derive(Clone, Debug)]
pub enum InsertSource {
    /// Rows of expressions; None is DEFAULT.
    Values(Vec<Vec<Option<Expr>>>),
    Select(Box<Select>),
}

#[derive(Clone, Debug)]
pub struct Insert {
    pub table: Arc<TableDef>,
    pub columns: Vec<usize>,
    pub source: InsertSource,
    pub ignore: bool,
    pub replace: bool,
    /// ON DUPLICATE KEY UPDATE: (column, expr over existing row ++ new row).
    pub on_dup: Vec<(usize, Expr)>,
    pub subqueries: Vec<Select>,
    /// `RETURNING ...`, over the row written.
    pub returning: Option<Returning>,
    /// The table's expression defaults, in column order (bound for each run, see
    /// [`table_defaults`]).
    pub defaults: Vec<(usize, Expr)>,
}

#[derive(Clone, Debug)]
pub struct Update {
    pub select: Select,
    /// (position in the joined row, value).
    pub sets: Vec<(usize, Expr)>,
    pub ignore: bool,
    /// Multi-table UPDATE: every SET value is computed from the joined row as read, and
    /// each row of a target table is updated at most once.
    pub multi: bool,
}

#[derive(Clone, Debug)]
pub struct Delete {
    pub select: Select,
    /// Multi-table DELETE: the sources whose rows are deleted (empty: single-table, the
    /// only source).
    pub targets: Vec<usize>,
    /// `RETURNING ...` (single-table), over the row deleted.
    pub returning: Option<Returning>,
}

/// A column visible to name resolution.
#[derive(Clone, Debug)]
struct ScopeCol {
    alias: String,
    db: String,
    table: String,
    name: String,
    pos: usize,
    nullable: bool,
    flags: u16,
    /// A table column's declared display width (the result column's length).
    display_width: Option<u16>,
    /// A table column's FLOAT(M,D)/DOUBLE(M,D) digits (the result column's length and
    /// decimals).
    digits: Option<(u8, u8)>,
    /// The right-hand copy of a `USING`/`NATURAL` join column: only found qualified.
    using_hidden: bool,
}

/// The names and types of an enclosing query, for correlated subqueries.
#[derive(Clone, Debug)]
struct OuterScope {
    scope: Vec<ScopeCol>,
    types: Vec<(ColumnType, bool)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Clause {
    Field,
    Where,
    On,
    Order,
    Group,
    Having,
    Set,
    Check,
    Default,
    /// The values of INSERT ... VALUES / SET.
    Values,
}

impl Clause {
    fn name(self) -> &'static str {
        match self {
            Clause::Field => "SELECT",
            Clause::Where => "WHERE",
            Clause::On => "ON",
            Clause::Order => "ORDER BY",
            Clause::Group => "GROUP BY",
            Clause::Having => "HAVING",
            Clause::Set => "SET",
            Clause::Check => "CHECK",
            Clause::Default => "DEFAULT",
            Clause::Values => "VALUES",
        }
    }
}

pub struct Binder<'a> {
    env: &'a dyn BindEnv,
    sql: &'a str,
    scope: Vec<ScopeCol>,
    types: Vec<(ColumnType, bool)>,
    aggs: Vec<AggCall>,
    subqueries: Vec<Select>,
    allow_agg: bool,
    /// Select-list aliases usable in ORDER BY / HAVING / GROUP BY.
    aliases: Vec<(String, Expr)>,
    /// ON DUPLICATE KEY UPDATE: VALUES(col) → Col(offset + pos).
    values_offset: Option<usize>,
    /// Types and collations found during one outermost type inference (see [`TypeMemo`]).
    type_memo: TypeMemo,
    /// Where each line of `sql` starts (shared by the binders of one statement).
    line_starts: Arc<[usize]>,
    /// `sql` is ASCII: a column is a byte offset in its line.
    ascii: bool,
    /// Queries around this one (subqueries, derived tables): MariaDB refuses a 65th level
    /// with error 1473.
    nest: usize,
    /// Enclosing queries, innermost first (a column found in `outer[d]` binds as
    /// `Expr::Outer(d + 1, pos)`).
    outer: Vec<OuterScope>,
    /// Columns of `SELECT *` in order (USING/NATURAL join columns once).
    star: Vec<usize>,
    /// Common table expressions in scope (WITH), innermost last.
    ctes: Vec<Arc<Cte>>,
    /// Window calls of the SELECT being bound (see `window.rs`).
    windows: Vec<WinCall>,
    /// Its `WINDOW name AS (...)` definitions.
    named_windows: Vec<(String, sq::WindowSpec)>,
    /// Window functions may appear here (select list, ORDER BY).
    win_ok: bool,
    /// Binding a window call's arguments or specification.
    in_window: bool,
    /// Binding a window function's arguments (a window function there is an argument of an
    /// aggregate to MariaDB: 4074).
    win_in_agg: bool,
}

/// A common table expression: `name [(columns)] AS (query)`. It is bound where it is
/// used, as a derived table, seeing only the CTEs defined before it.
struct Cte {
    name: String,
    query: sq::Query,
    columns: Vec<String>,
    /// Number of CTEs in scope at its definition (those it may refer to).
    visible: usize,
    /// It refers to itself (WITH RECURSIVE).
    recursive: bool,
    /// Inside its own recursive part: the columns of the previous iteration's rows.
    working: Option<Vec<(String, ColumnType, bool, u16)>>,
}

/// Whether a query body reads table `name` (unqualified) in a FROM clause, its joins or
/// derived tables.
fn mentions_table(body: &sq::SetExpr, name: &str) -> bool {
    fn factor(tf: &sq::TableFactor, name: &str) -> bool {
        match tf {
            sq::TableFactor::Table { name: n, .. } => {
                let p = name_parts(n);
                p.len() == 1 && p[0] == name
            }
            sq::TableFactor::Derived { subquery, .. } => mentions_table(&subquery.body, name),
            sq::TableFactor::NestedJoin {
                table_with_joins, ..
            } => from(table_with_joins, name),
            _ => false,
        }
    }
    fn from(t: &sq::TableWithJoins, name: &str) -> bool {
        factor(&t.relation, name) || t.joins.iter().any(|j| factor(&j.relation, name))
    }
    match body {
        sq::SetExpr::Select(s) => s.from.iter().any(|t| from(t, name)),
        sq::SetExpr::Query(q) => mentions_table(&q.body, name),
        sq::SetExpr::SetOperation { left, right, .. } => {
            mentions_table(left, name) || mentions_table(right, name)
        }
        _ => false,
    }
}

/// Splits an expression into AND-ed conjuncts.
pub fn conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(a, b) => {
            conjuncts(*a, out);
            conjuncts(*b, out);
        }
        other => out.push(other),
    }
}

/// Calls `f(expr, depth)` on every expression of `sel` and of the queries nested in it;
/// `depth` counts the scope levels between `sel` and the expression's query (a subquery
/// adds one; derived tables and UNION parts are at the level of the query containing them).
pub fn visit_exprs(sel: &Select, depth: usize, f: &mut dyn FnMut(&Expr, usize)) {
    for e in sel
        .filter
        .iter()
        .chain(&sel.items)
        .chain(&sel.group_by)
        .chain(sel.order_by.iter().map(|(e, _)| e))
        .chain(&sel.having)
        .chain(sel.aggs.iter().map(|a| &a.arg))
        .chain(
            sel.aggs
                .iter()
                .flat_map(|a| a.order.iter().map(|(e, _, _)| e)),
        )
        .chain(sel.window_exprs())
    {
        f(e, depth);
    }
    for s in &sel.sources {
        for e in s.on.iter().chain(&s.post).chain(&s.filters) {
            f(e, depth);
        }
        match &s.kind {
            SourceKind::Derived(d) => visit_exprs(d, depth, f),
            SourceKind::Recursive(r) => {
                visit_exprs(&r.anchor, depth, f);
                visit_exprs(&r.step, depth, f);
            }
            SourceKind::SetOp(op) => {
                for l in op.root.leaves() {
                    visit_exprs(l, depth, f);
                }
            }
            _ => {}
        }
    }
    for q in &sel.subqueries {
        visit_exprs(q, depth + 1, f);
    }
}

/// [`visit_exprs`] with mutable expressions.
pub fn visit_exprs_mut(sel: &mut Select, depth: usize, f: &mut dyn FnMut(&mut Expr, usize)) {
    for e in
        sel.filter
            .iter_mut()
            .chain(&mut sel.items)
            .chain(&mut sel.group_by)
            .chain(sel.order_by.iter_mut().map(|(e, _)| e))
            .chain(&mut sel.having)
            .chain(sel.aggs.iter_mut().flat_map(|a| {
                std::iter::once(&mut a.arg).chain(a.order.iter_mut().map(|(e, _, _)| e))
            }))
            .chain(sel.windows.iter_mut().flat_map(|w| w.exprs_mut()))
    {
        f(e, depth);
    }
    for s in &mut sel.sources {
        for e in s.on.iter_mut().chain(&mut s.post).chain(&mut s.filters) {
            f(e, depth);
        }
        match &mut s.kind {
            SourceKind::Derived(d) => visit_exprs_mut(d, depth, f),
            SourceKind::Recursive(r) => {
                visit_exprs_mut(&mut r.anchor, depth, f);
                visit_exprs_mut(&mut r.step, depth, f);
            }
            SourceKind::SetOp(op) => {
                for l in op.root.leaves_mut() {
                    visit_exprs_mut(l, depth, f);
                }
            }
            _ => {}
        }
    }
    for q in &mut sel.subqueries {
        visit_exprs_mut(q, depth + 1, f);
    }
}

/// Calls `f` on every source of `sel` and of the queries nested in it (derived tables,
/// set operations, recursive CTEs, subqueries); `f` says whether to look inside the source.
pub fn walk_sources(sel: &Select, f: &mut dyn FnMut(&Source) -> bool) {
    for s in &sel.sources {
        if !f(s) {
            continue;
        }
        match &s.kind {
            SourceKind::Derived(d) => walk_sources(d, f),
            SourceKind::Recursive(r) => {
                walk_sources(&r.anchor, f);
                walk_sources(&r.step, f);
            }
            SourceKind::SetOp(op) => {
                for l in op.root.leaves() {
                    walk_sources(l, f);
                }
            }
            SourceKind::Table(_) | SourceKind::Rows(_) | SourceKind::Working => {}
        }
    }
    for q in &sel.subqueries {
        walk_sources(q, f);
    }
}

/// The tables a query reads, with those of its derived tables, set operations and
/// subqueries.
pub fn tables_read(sel: &Select, out: &mut Vec<(String, String)>) {
    walk_sources(sel, &mut |s| {
        if let SourceKind::Table(t) = &s.kind {
            out.push((t.db.clone(), t.name.clone()));
        }
        true
    });
}

pub fn ident_eq(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

impl<'a> Binder<'a> {
    pub fn new(env: &'a dyn BindEnv, sql: &'a str) -> Self {
        let mut line_starts = vec![0];
        for (i, b) in sql.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        Binder::with_lines(env, sql, line_starts.into(), sql.is_ascii())
    }

    fn with_lines(
        env: &'a dyn BindEnv,
        sql: &'a str,
        line_starts: Arc<[usize]>,
        ascii: bool,
    ) -> Self {
        Binder {
            env,
            sql,
            scope: Vec::new(),
            types: Vec::new(),
            aggs: Vec::new(),
            subqueries: Vec::new(),
            allow_agg: false,
            aliases: Vec::new(),
            values_offset: None,
            line_starts,
            ascii,
            type_memo: TypeMemo::default(),
            nest: 0,
            outer: Vec::new(),
            star: Vec::new(),
            ctes: Vec::new(),
            windows: Vec::new(),
            named_windows: Vec::new(),
            win_ok: false,
            in_window: false,
            win_in_agg: false,
        }
    }

    /// The environment names are bound in.
    pub(crate) fn env(&self) -> &'a dyn BindEnv {
        self.env
    }

    /// A fresh binder for a query nested in this one.
    fn inner(&self) -> Binder<'a> {
        let mut b = Binder::with_lines(self.env, self.sql, self.line_starts.clone(), self.ascii);
        b.nest = self.nest + 1;
        b
    }

    /// A binder for a subquery: this query's columns are its outer references.
    fn child(&self) -> Binder<'a> {
        let mut b = self.inner();
        b.outer.push(OuterScope {
            scope: self.scope.clone(),
            types: self.types.clone(),
        });
        b.outer.extend(self.outer.iter().cloned());
        b.ctes = self.ctes.clone();
        b
    }

    /// A binder for a query at the same level as this one (a derived table, a part of a
    /// UNION): it sees the same enclosing queries, not this query's columns.
    fn sibling(&self) -> Binder<'a> {
        let mut b = self.inner();
        b.outer = self.outer.clone();
        b.ctes = self.ctes.clone();
        b
    }

    /// Whether the SQL text right before `e` is the keyword BINARY (the `BINARY x`
    /// operator, which sqlparser turns into a cast of everything that follows it).
    fn after_binary_keyword(&self, e: &sq::Expr) -> bool {
        let Some(start) = self.offset_of(e.span().start) else {
            return false;
        };
        let before = self.sql[..start].trim_end();
        before.len() >= 6
            && before[before.len() - 6..].eq_ignore_ascii_case("binary")
            && !before[..before.len() - 6].ends_with(|c: char| c.is_alphanumeric() || c == '_')
    }

    /// The byte offset of a location in the SQL text.
    fn offset_of(&self, l: sqlparser::tokenizer::Location) -> Option<usize> {
        if l.line == 0 {
            return None;
        }
        let start = *self.line_starts.get(l.line as usize - 1)?;
        let line = self.sql.get(start..)?;
        let col = l.column.saturating_sub(1) as usize;
        if self.ascii {
            return Some(start + col.min(line.len()));
        }
        Some(
            start
                + line
                    .char_indices()
                    .nth(col)
                    .map(|(i, _)| i)
                    .unwrap_or(line.len()),
        )
    }

    /// Byte offsets of an AST node's text.
    fn span_offsets(&self, span: sqlparser::tokenizer::Span) -> Option<(usize, usize)> {
        let a = self.offset_of(span.start)?;
        let b = self.offset_of(span.end)?;
        if b <= a || b > self.sql.len() {
            return None;
        }
        let b = self.complete_span(a, b);
        Some((a, b))
    }

    /// The text of a select item's expression. sqlparser's spans of the special call forms
    /// (CAST, CONVERT, SUBSTRING, TRIM, POSITION, EXTRACT, ...) cover their operands only,
    /// and an operator's span is the union of its operands': the start moves left to the
    /// name of every call the text closes but does not open (and, for a special form, of
    /// the call around it), then the end is completed.
    fn item_text(&self, e: &sq::Expr) -> Option<String> {
        let a = self.offset_of(e.span().start)?;
        let b = self.offset_of(e.span().end)?;
        if b <= a || b > self.sql.len() {
            return None;
        }
        let bytes = self.sql.as_bytes();
        let (mut depth, mut min, mut quote) = (0i32, 0i32, None::<u8>);
        for &c in &bytes[a..b] {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None => match c {
                    b'\'' | b'"' | b'`' => quote = Some(c),
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        min = min.min(depth);
                    }
                    _ => {}
                },
            }
        }
        let special = matches!(
            e,
            sq::Expr::Cast { .. }
                | sq::Expr::Convert { .. }
                | sq::Expr::Substring { .. }
                | sq::Expr::Trim { .. }
                | sq::Expr::Position { .. }
                | sq::Expr::Extract { .. }
                | sq::Expr::Ceil { .. }
                | sq::Expr::Floor { .. }
                | sq::Expr::Overlay { .. }
        );
        let before = self.sql[..a].trim_end();
        let mut need = if min == 0 && special && before.ends_with('(') {
            1
        } else {
            -min
        };
        let mut start = a;
        let mut d = 0i32;
        while need > 0 && start > 0 {
            start -= 1;
            match bytes[start] {
                b')' => d += 1,
                b'(' if d > 0 => d -= 1,
                b'(' => {
                    need -= 1;
                    let name = self.sql[..start].trim_end();
                    let word = name
                        .bytes()
                        .rev()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
                        .count();
                    start = name.len() - word;
                }
                _ => {}
            }
        }
        let end = self.complete_span(start, b.max(start));
        Some(self.sql[start..end].trim().to_string())
    }

    /// sqlparser's spans of function calls stop early (`COUNT(*)` spans `COUNT`,
    /// `SUM(price)` spans `SUM(price`): extends `a..b` to close every parenthesis it opens
    /// and to include an argument list that directly follows a trailing name.
    fn complete_span(&self, a: usize, b: usize) -> usize {
        let bytes = self.sql.as_bytes();
        let mut depth = 0i32;
        let mut quote: Option<u8> = None;
        let mut i = a;
        while i < bytes.len() {
            if i >= b && depth <= 0 && quote.is_none() {
                let last = bytes[i - 1];
                let mut k = i;
                while k < bytes.len() && bytes[k].is_ascii_whitespace() {
                    k += 1;
                }
                let call = (last.is_ascii_alphanumeric() || last == b'_')
                    && k < bytes.len()
                    && bytes[k] == b'(';
                if !call {
                    return i;
                }
                i = k;
            }
            let c = bytes[i];
            match quote {
                Some(q) if c == q => quote = None,
                Some(b'\'') | Some(b'"') if c == b'\\' => i += 1,
                Some(_) => {}
                None => match c {
                    b'\'' | b'"' | b'`' => quote = Some(c),
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    _ => {}
                },
            }
            i += 1;
        }
        if depth == 0 && quote.is_none() {
            bytes.len()
        } else {
            b
        }
    }

    pub fn db_or_current(&self, db: Option<String>) -> Result<String, SqlError> {
        match db {
            Some(d) => Ok(d),
            None => self
                .env
                .current_db()
                .map(str::to_string)
                .ok_or_else(|| err(code::ER_NO_DB_ERROR, "No database selected")),
        }
    }

    /// `[db.]table` of an object name.
    pub fn table_name(&self, n: &sq::ObjectName) -> Result<(String, String), SqlError> {
        let parts = name_parts(n);
        match parts.len() {
            1 => Ok((self.db_or_current(None)?, parts[0].clone())),
            2 => Ok((parts[0].clone(), parts[1].clone())),
            _ => Err(err(
                code::ER_WRONG_TABLE_NAME,
                format!("Incorrect table name '{n}'"),
            )),
        }
    }

    pub fn resolve_table(&self, db: &str, name: &str) -> Result<Arc<TableDef>, SqlError> {
        let cat = self.env.catalog();
        match cat.table(db, name) {
            Some(t) => Ok(t.clone()),
            None => Err(err(
                code::ER_NO_SUCH_TABLE,
                format!("Table '{db}.{name}' doesn't exist"),
            )),
        }
    }

    // ---------------------------------------------------------------- sources

    // ---------------------------------------------------------------- expressions

    // ---------------------------------------------------------------- types

    // ---------------------------------------------------------------- DML

    /// A constant expression (SET values, DO, PURGE BEFORE ...).
    pub fn bind_const(mut self, e: &sq::Expr) -> Result<(Expr, Vec<Select>), SqlError> {
        let b = self.bind_expr(e, Clause::Field)?;
        Ok((b, std::mem::take(&mut self.subqueries)))
    }

    /// A SELECT without FROM over virtual rows (SHOW ... WHERE): binds `e` against the
    /// given column names.
    pub fn bind_over_columns(
        mut self,
        cols: &[VirtualColumn],
        e: &sq::Expr,
    ) -> Result<Expr, SqlError> {
        let mut sources = Vec::new();
        let c = cols
            .iter()
            .map(|c| (c.name.clone(), c.ty, true, 0))
            .collect();
        self.add_source(
            &mut sources,
            "show".into(),
            String::new(),
            SourceKind::Rows(Arc::new(vec![])),
            c,
            cols.len(),
            IndexHints::default(),
        )?;
        self.bind_expr(e, Clause::Where)
    }
}
