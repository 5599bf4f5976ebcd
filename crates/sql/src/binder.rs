//! Binder: resolves names in sqlparser's AST against the catalog (databases, tables,
//! columns, aliases), binds placeholders, folds per-statement constants (NOW(),
//! DATABASE(), @@variables, @user variables) and produces typed plans for the planner and
//! executor, and `Ddl` values for the engine. Join trees are in [`joins`], set operations in
//! [`setop`]; a subquery's binder sees the enclosing queries' columns as outer references.
//! INSERTs that run again with new parameters keep their binding in [`template`].

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

pub(crate) mod joins;
mod logic;
mod select_template;
mod setop;
mod template;

pub use select_template::{changed_params, SelectTemplate};
pub use setop::{coerce as setop_coerce, SetNode, SetOp, SetOpKind, NULL_TYPE};
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

fn col_flags(t: &TableDef, c: usize) -> u16 {
    let def = &t.columns[c];
    let mut f = 0;
    if !def.nullable {
        f |= cf::NOT_NULL;
    }
    if def.ty.is_unsigned() {
        f |= cf::UNSIGNED;
    }
    if def.ty.is_binary() || matches!(def.ty, ColumnType::Blob { binary: true, .. }) {
        f |= cf::BINARY;
    }
    if matches!(def.ty, ColumnType::Blob { .. }) {
        f |= cf::BLOB;
    }
    if def.auto_increment {
        f |= cf::AUTO_INCREMENT;
    }
    if matches!(
        def.ty,
        ColumnType::Int { .. }
            | ColumnType::Decimal { .. }
            | ColumnType::Float
            | ColumnType::Double
    ) {
        f |= cf::NUM;
    }
    if matches!(def.ty, ColumnType::Timestamp { .. }) {
        f |= cf::TIMESTAMP;
    }
    for idx in &t.indexes {
        if idx.columns.first() == Some(&c) {
            if idx.primary {
                f |= cf::PRI_KEY;
            } else if idx.unique && idx.columns.len() == 1 {
                f |= cf::UNIQUE_KEY;
            } else {
                f |= cf::MULTIPLE_KEY;
            }
        } else if idx.primary && idx.columns.contains(&c) {
            f |= cf::PRI_KEY;
        }
    }
    if def.default.is_none() && !def.nullable && !def.auto_increment && !def.default_now {
        f |= cf::NO_DEFAULT_VALUE;
    }
    f
}

/// The declared length MariaDB reports for an expression type (in bytes for strings).
pub fn display_len(ty: &ColumnType) -> u32 {
    match *ty {
        ColumnType::Int { bytes, unsigned } => match (bytes, unsigned) {
            (1, _) => 4,
            (2, _) => 6,
            (3, _) => 9,
            (4, _) => 11,
            (_, true) => 20,
            _ => 20,
        },
        ColumnType::Float => 12,
        ColumnType::Double => 22,
        ColumnType::Decimal { precision, scale } => precision as u32 + (scale > 0) as u32 + 1,
        ColumnType::Char { .. } | ColumnType::Varchar { .. } | ColumnType::Blob { .. } => {
            ty.max_bytes().unwrap_or(0).min(u32::MAX as u64) as u32
        }
        ColumnType::Date => 10,
        ColumnType::Time { fsp } => 10 + if fsp > 0 { fsp as u32 + 1 } else { 0 },
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => {
            19 + if fsp > 0 { fsp as u32 + 1 } else { 0 }
        }
    }
}

pub fn decimals_of(ty: &ColumnType) -> u8 {
    match *ty {
        ColumnType::Decimal { scale, .. } => scale,
        ColumnType::Float | ColumnType::Double => 31,
        ColumnType::Time { fsp } | ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => {
            fsp
        }
        ColumnType::Char { .. } | ColumnType::Varchar { .. } | ColumnType::Blob { .. } => 39,
        _ => 0,
    }
}

fn bigint() -> ColumnType {
    ColumnType::Int {
        bytes: 8,
        unsigned: false,
    }
}

fn varchar(len: u32) -> ColumnType {
    ColumnType::varchar(len, Collation::DEFAULT)
}

/// The type of a literal value.
pub fn value_type(v: &Value) -> ColumnType {
    match v {
        Value::Null => ColumnType::varchar(0, Collation::Binary),
        Value::Int(i) => ColumnType::Int {
            bytes: if i.unsigned_abs() < (1 << 31) { 4 } else { 8 },
            unsigned: false,
        },
        Value::UInt(_) => ColumnType::Int {
            bytes: 8,
            unsigned: true,
        },
        Value::Double(_) => ColumnType::Double,
        Value::Decimal(d) => ColumnType::Decimal {
            precision: (d.int_digits() as u8 + d.scale).clamp(1, 38),
            scale: d.scale,
        },
        Value::Bytes(b) => varchar(String::from_utf8_lossy(b).chars().count() as u32),
        Value::Date(_) => ColumnType::Date,
        Value::DateTime(d) => ColumnType::DateTime {
            fsp: if d.micro != 0 { 6 } else { 0 },
        },
        Value::Time(t) => ColumnType::Time {
            fsp: if t.micro != 0 { 6 } else { 0 },
        },
    }
}

fn is_numeric_ty(t: &ColumnType) -> bool {
    matches!(
        t,
        ColumnType::Int { .. }
            | ColumnType::Decimal { .. }
            | ColumnType::Float
            | ColumnType::Double
    )
}

/// Combines two types for arithmetic results.
fn arith_type(a: ColumnType, b: ColumnType, op: BinOp) -> ColumnType {
    use ColumnType::*;
    match (a, b) {
        (Float | Double, _) | (_, Float | Double) => Double,
        _ if !is_numeric_ty(&a) || !is_numeric_ty(&b) => Double,
        (Int { unsigned: ua, .. }, Int { unsigned: ub, .. }) if op != BinOp::Div => Int {
            bytes: 8,
            unsigned: ua || ub,
        },
        _ => {
            let (pa, sa) = dec_ps(a);
            let (pb, sb) = dec_ps(b);
            let (p, s) = match op {
                BinOp::Div => (pa + sb + 4, sa + 4),
                BinOp::Mul => (pa + pb, sa + sb),
                _ => ((pa - sa).max(pb - sb) + sa.max(sb) + 1, sa.max(sb)),
            };
            Decimal {
                precision: p.min(65) as u8,
                scale: s.min(30) as u8,
            }
        }
    }
}

fn dec_ps(t: ColumnType) -> (u32, u32) {
    match t {
        ColumnType::Decimal { precision, scale } => (precision as u32, scale as u32),
        ColumnType::Int { bytes, .. } => (
            match bytes {
                1 => 3,
                2 => 5,
                3 => 8,
                4 => 10,
                _ => 20,
            },
            0,
        ),
        _ => (20, 0),
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

/// The tables a query reads, with those of its derived tables, set operations and
/// subqueries.
pub fn tables_read(sel: &Select, out: &mut Vec<(String, String)>) {
    for s in &sel.sources {
        match &s.kind {
            SourceKind::Table(t) => out.push((t.db.clone(), t.name.clone())),
            SourceKind::Derived(d) => tables_read(d, out),
            SourceKind::Recursive(r) => {
                tables_read(&r.anchor, out);
                tables_read(&r.step, out);
            }
            SourceKind::SetOp(op) => {
                for l in op.root.leaves() {
                    tables_read(l, out);
                }
            }
            SourceKind::Rows(_) | SourceKind::Working => {}
        }
    }
    for q in &sel.subqueries {
        tables_read(q, out);
    }
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
        }
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

    /// The text of an AST node as the user wrote it (for column names).
    fn text_of(&self, span: sqlparser::tokenizer::Span) -> Option<String> {
        let (a, b) = self.span_offsets(span)?;
        Some(self.sql[a..b].trim().to_string())
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

    /// Binds a recursive CTE where it is used: `anchor UNION [ALL] step`, the step seeing
    /// the CTE's name as the previous iteration's rows. Returns it with its columns.
    #[allow(clippy::type_complexity)]
    fn bind_recursive(
        &self,
        cte: &Cte,
    ) -> Result<(Recursive, Vec<(String, ColumnType, bool, u16)>), SqlError> {
        let q = &cte.query;
        let sq::SetExpr::SetOperation {
            op: sq::SetOperator::Union,
            set_quantifier,
            left,
            right,
        } = q.body.as_ref()
        else {
            return Err(unsupported(
                "a recursive WITH that is not anchor UNION step",
            ));
        };
        if q.order_by.is_some() || q.limit_clause.is_some() || mentions_table(left, &cte.name) {
            return Err(unsupported("this form of recursive WITH"));
        }
        let sq::SetExpr::Select(step_sel) = right.as_ref() else {
            return Err(unsupported("a recursive WITH with several recursive parts"));
        };
        let distinct = !matches!(set_quantifier, sq::SetQuantifier::All);
        let mut b = self.sibling();
        b.ctes.truncate(cte.visible);
        let anchor = b.bind_set_query(left, &[], None, 0)?;
        if !cte.columns.is_empty() && cte.columns.len() != anchor.columns.len() {
            return Err(err(
                crate::codes::ER_WITH_COL_WRONG_LIST,
                "WITH column list and SELECT field list have different column counts",
            ));
        }
        let cols: Vec<(String, ColumnType, bool, u16)> = anchor
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let ty = if c.null_type {
                    setop::NULL_STORED
                } else {
                    c.ty
                };
                let name = cte
                    .columns
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| c.name.clone());
                (name, ty, true, 0u16)
            })
            .collect();
        let mut b = self.sibling();
        b.ctes.truncate(cte.visible);
        b.ctes.push(Arc::new(Cte {
            name: cte.name.clone(),
            query: q.clone(),
            columns: Vec::new(),
            visible: cte.visible,
            recursive: false,
            working: Some(cols.clone()),
        }));
        let step = b.bind_select(step_sel, &[])?;
        if step.columns.len() != cols.len() {
            return Err(err(
                crate::codes::ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT,
                "The used SELECT statements have a different number of columns",
            ));
        }
        let types = cols.iter().map(|c| c.1).collect();
        Ok((
            Recursive {
                anchor,
                step,
                distinct,
                types,
            },
            cols,
        ))
    }

    /// Adds a materialised query (a derived table or a CTE) as a source, its columns
    /// renamed to `names` when given.
    fn add_derived(
        &mut self,
        sources: &mut Vec<Source>,
        alias: String,
        sel: Select,
        names: &[String],
    ) -> Result<(), SqlError> {
        if !names.is_empty() && names.len() != sel.columns.len() {
            return Err(err(
                crate::codes::ER_WITH_COL_WRONG_LIST,
                "WITH column list and SELECT field list have different column counts",
            ));
        }
        // A derived table is materialised: NULL-typed columns become BINARY(0).
        let cols: Vec<_> = sel
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let ty = if c.null_type {
                    setop::NULL_STORED
                } else {
                    c.ty
                };
                let name = names.get(i).cloned().unwrap_or_else(|| c.name.clone());
                (name, ty, c.nullable, 0u16)
            })
            .collect();
        let n = cols.len();
        self.add_source(
            sources,
            alias,
            String::new(),
            SourceKind::Derived(Box::new(sel)),
            cols,
            n,
            IndexHints::default(),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn add_source(
        &mut self,
        sources: &mut Vec<Source>,
        alias: String,
        db: String,
        kind: SourceKind,
        cols: Vec<(String, ColumnType, bool, u16)>,
        width: usize,
        hints: IndexHints,
    ) -> Result<(), SqlError> {
        if sources.iter().any(|s| s.alias == alias && s.db == db) {
            return Err(err(
                code::ER_NONUNIQ_TABLE,
                format!("Not unique table/alias: '{alias}'"),
            ));
        }
        let offset = self.types.len();
        let table_name = match &kind {
            SourceKind::Table(t) => t.name.clone(),
            _ => alias.clone(),
        };
        for (i, (name, _ty, nullable, flags)) in cols.iter().enumerate() {
            self.scope.push(ScopeCol {
                alias: alias.clone(),
                db: db.clone(),
                table: table_name.clone(),
                name: name.clone(),
                pos: offset + i,
                nullable: *nullable,
                flags: *flags,
                using_hidden: false,
            });
        }
        let ncols = cols.len();
        for (_, ty, nullable, _) in &cols {
            self.types.push((*ty, *nullable));
        }
        for _ in ncols..width {
            self.types.push((bigint(), false));
        }
        sources.push(Source {
            alias,
            db,
            kind,
            offset,
            width,
            ncols,
            join: JoinKind::Inner,
            group_end: 0,
            on: Vec::new(),
            post: Vec::new(),
            hints,
            lock: None,
            access: Access::default(),
            filters: Vec::new(),
        });
        Ok(())
    }

    /// Binds one FROM item: adds its sources; returns its join tree and `SELECT *` columns
    /// (None for DUAL).
    fn bind_table_factor(
        &mut self,
        sources: &mut Vec<Source>,
        tf: &sq::TableFactor,
    ) -> Result<Option<joins::Item>, SqlError> {
        stack::check()?;
        match tf {
            sq::TableFactor::Table {
                name,
                alias,
                args,
                index_hints,
                ..
            } => {
                if args.is_some() {
                    return Err(unsupported("table functions"));
                }
                let parts = name_parts(name);
                if parts.len() == 1 && parts[0].eq_ignore_ascii_case("dual") && alias.is_none() {
                    // FROM DUAL: no table.
                    return Ok(None);
                }
                if parts.len() == 1 {
                    if let Some(cte) = self.ctes.iter().rev().find(|c| c.name == parts[0]) {
                        let cte = cte.clone();
                        let alias_name = alias
                            .as_ref()
                            .map_or_else(|| cte.name.clone(), |a| a.name.value.clone());
                        if let Some(cols) = &cte.working {
                            let n = cols.len();
                            self.add_source(
                                sources,
                                alias_name,
                                String::new(),
                                SourceKind::Working,
                                cols.clone(),
                                n,
                                IndexHints::default(),
                            )?;
                            return Ok(Some(joins::Item::leaf(sources)));
                        }
                        if cte.recursive {
                            let (r, cols) = self.bind_recursive(&cte)?;
                            let n = cols.len();
                            self.add_source(
                                sources,
                                alias_name,
                                String::new(),
                                SourceKind::Recursive(Box::new(r)),
                                cols,
                                n,
                                IndexHints::default(),
                            )?;
                            return Ok(Some(joins::Item::leaf(sources)));
                        }
                        let mut b = self.sibling();
                        b.ctes.truncate(cte.visible);
                        let sel = b.bind_query(&cte.query)?;
                        self.add_derived(sources, alias_name, sel, &cte.columns)?;
                        return Ok(Some(joins::Item::leaf(sources)));
                    }
                }
                let (db, tname) = self.table_name(name)?;
                let alias_name = alias
                    .as_ref()
                    .map(|a| a.name.value.clone())
                    .unwrap_or_else(|| tname.clone());
                let mut hints = IndexHints::default();
                for h in index_hints {
                    let names: Vec<String> =
                        h.index_names.iter().map(|i| i.value.clone()).collect();
                    match h.hint_type {
                        sq::TableIndexHintType::Ignore => hints.ignore.extend(names),
                        sq::TableIndexHintType::Use | sq::TableIndexHintType::Force => {
                            hints.force |= h.hint_type == sq::TableIndexHintType::Force;
                            hints.only.get_or_insert_with(Vec::new).extend(names);
                        }
                    }
                }
                if db.eq_ignore_ascii_case("information_schema") {
                    let Some((cols, rows)) = self.env.info_schema(&tname.to_uppercase()) else {
                        return Err(err(
                            code::ER_UNKNOWN_TABLE,
                            format!("Unknown table '{tname}' in information_schema"),
                        ));
                    };
                    let n = cols.len();
                    let cols = cols.into_iter().map(|c| (c.name, c.ty, true, 0)).collect();
                    self.add_source(
                        sources,
                        alias_name,
                        "information_schema".into(),
                        SourceKind::Rows(Arc::new(rows)),
                        cols,
                        n,
                        hints,
                    )?;
                    return Ok(Some(joins::Item::leaf(sources)));
                }
                let cat = self.env.catalog();
                if !cat.has_database(&db) {
                    return Err(err(
                        code::ER_NO_SUCH_TABLE,
                        format!("Table '{db}.{tname}' doesn't exist"),
                    ));
                }
                let t = self.resolve_table(&db, &tname)?;
                for n in hints.only.iter().flatten().chain(hints.ignore.iter()) {
                    if t.index_by_name(n).is_none() {
                        return Err(err(
                            code::ER_KEY_DOES_NOT_EXISTS,
                            format!("Key '{n}' doesn't exist in table '{}'", t.name),
                        ));
                    }
                }
                let cols = t
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.name.clone(), c.ty, c.nullable, col_flags(&t, i)))
                    .collect();
                let width = t.columns.len() + t.hidden_pk as usize;
                self.add_source(
                    sources,
                    alias_name,
                    db,
                    SourceKind::Table(t),
                    cols,
                    width,
                    hints,
                )?;
                Ok(Some(joins::Item::leaf(sources)))
            }
            sq::TableFactor::Derived {
                subquery, alias, ..
            } => {
                let Some(alias) = alias else {
                    return Err(err(1248, "Every derived table must have its own alias"));
                };
                let sel = self.sibling().bind_query(subquery)?;
                let names: Vec<String> =
                    alias.columns.iter().map(|c| c.name.value.clone()).collect();
                self.add_derived(sources, alias.name.value.clone(), sel, &names)?;
                Ok(Some(joins::Item::leaf(sources)))
            }
            sq::TableFactor::NestedJoin {
                table_with_joins, ..
            } => self.bind_from_item(sources, table_with_joins),
            other => Err(unsupported(&format!("{other}"))),
        }
    }

    // ---------------------------------------------------------------- queries

    pub fn bind_query(mut self, q: &sq::Query) -> Result<Select, SqlError> {
        stack::check()?;
        if self.nest >= MAX_SELECT_NESTING {
            return Err(err(
                crate::codes::ER_TOO_HIGH_LEVEL_OF_NESTING_FOR_SELECT,
                "Too high level of nesting for select",
            ));
        }
        if let Some(with) = &q.with {
            let first = self.ctes.len();
            for c in &with.cte_tables {
                let name = c.alias.name.value.clone();
                if self.ctes[first..].iter().any(|x| x.name == name) {
                    return Err(err(
                        crate::codes::ER_DUP_QUERY_NAME,
                        format!("Duplicate query name `{name}` in WITH clause"),
                    ));
                }
                let visible = self.ctes.len();
                let recursive = with.recursive && mentions_table(&c.query.body, &name);
                self.ctes.push(Arc::new(Cte {
                    name,
                    query: (*c.query).clone(),
                    columns: c
                        .alias
                        .columns
                        .iter()
                        .map(|x| x.name.value.clone())
                        .collect(),
                    visible,
                    recursive,
                    working: None,
                }));
            }
        }
        let lock = match q.locks.first().map(|l| l.lock_type) {
            Some(sq::LockType::Update) => LockMode::Exclusive,
            Some(sq::LockType::Share) => LockMode::Shared,
            None => LockMode::None,
        };
        let (limit, offset) = self.bind_limit(q.limit_clause.as_ref())?;
        let order_by: Vec<sq::OrderByExpr> = match &q.order_by {
            Some(ob) => match &ob.kind {
                sq::OrderByKind::Expressions(v) => v.clone(),
                sq::OrderByKind::All(_) => return Err(unsupported("ORDER BY ALL")),
            },
            None => Vec::new(),
        };
        match q.body.as_ref() {
            sq::SetExpr::Select(s) => {
                let mut sel = self.bind_select(s, &order_by)?;
                sel.limit = limit;
                sel.offset = offset;
                sel.lock = lock;
                Ok(sel)
            }
            sq::SetExpr::Query(inner) if order_by.is_empty() && limit.is_none() => {
                let mut sel = self.bind_query(inner)?;
                if lock != LockMode::None {
                    sel.lock = lock;
                }
                Ok(sel)
            }
            sq::SetExpr::SetOperation { .. } | sq::SetExpr::Query(_) => {
                let mut sel = self.bind_set_query(&q.body, &order_by, limit, offset)?;
                // FOR UPDATE / LOCK IN SHARE MODE after a set operation locks the rows of
                // its last part.
                if lock != LockMode::None {
                    if let Some(SourceKind::SetOp(op)) =
                        sel.sources.first_mut().map(|s| &mut s.kind)
                    {
                        if let Some(last) = op.root.leaves_mut().pop() {
                            last.lock = lock;
                        }
                    }
                }
                Ok(sel)
            }
            sq::SetExpr::Values(_) => Err(unsupported("VALUES as a query")),
            _ => Err(unsupported("this query form")),
        }
    }

    fn const_u64(&mut self, e: &sq::Expr) -> Result<u64, SqlError> {
        // `LIMIT ?` while the statement is prepared (parameters are all NULL then): the
        // value comes with each execute. (A NULL bound at execute also reads as 0.)
        if let sq::Expr::Value(v) = e {
            if let sq::Value::Placeholder(p) = &v.value {
                let i: usize = p.trim_start_matches('?').parse().unwrap_or(0);
                let bound = self.env.params().get(i.wrapping_sub(1));
                if bound.is_none_or(|v| v.is_null()) {
                    return Ok(0);
                }
            }
        }
        let b = self.bind_expr(e, Clause::Field)?;
        if !b.is_const() {
            return Err(crate::parser::syntax_error(&e.to_string(), 0));
        }
        let v = expr::eval(&b, &expr::Ctx::new(&[]))?;
        match v {
            Value::Int(i) if i >= 0 => Ok(i as u64),
            Value::UInt(u) => Ok(u),
            Value::Bytes(_) | Value::Decimal(_) | Value::Double(_) => {
                Ok(expr::to_i64(&v).max(0) as u64)
            }
            _ => Err(err(
                code::ER_WRONG_ARGUMENTS,
                "Incorrect arguments to LIMIT",
            )),
        }
    }

    fn bind_limit(&mut self, l: Option<&sq::LimitClause>) -> Result<(Option<u64>, u64), SqlError> {
        Ok(match l {
            None => (None, 0),
            Some(sq::LimitClause::LimitOffset { limit, offset, .. }) => {
                let lim = match limit {
                    Some(e) => Some(self.const_u64(e)?),
                    None => None,
                };
                let off = match offset {
                    Some(o) => self.const_u64(&o.value)?,
                    None => 0,
                };
                (lim, off)
            }
            Some(sq::LimitClause::OffsetCommaLimit { offset, limit }) => {
                (Some(self.const_u64(limit)?), self.const_u64(offset)?)
            }
        })
    }

    fn item_name(&self, e: &sq::Expr) -> String {
        if let sq::Expr::Subquery(_) = e {
            // The span covers the query inside the parentheses.
            if let Some((a, b)) = self.span_offsets(e.span()) {
                let before = self.sql[..a].trim_end();
                let after = self.sql[b..].trim_start();
                if before.ends_with('(') && after.starts_with(')') {
                    let a = before.len() - 1;
                    let b = self.sql.len() - after.len() + 1;
                    return self.sql[a..b].to_string();
                }
            }
        }
        match e {
            sq::Expr::Identifier(i) => i.value.clone(),
            sq::Expr::CompoundIdentifier(v) if !v[0].value.starts_with('@') => {
                v.last().map(|i| i.value.clone()).unwrap_or_default()
            }
            _ => self
                .text_of(e.span())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| e.to_string()),
        }
    }

    fn result_column(&self, e: &Expr, name: String) -> ResultColumn {
        if self.is_null_type(e) {
            return ResultColumn::null(name);
        }
        let (ty, nullable) = self.type_of(e);
        let mut rc = ResultColumn::expr(name, ty, nullable);
        if let Expr::Col(p) = e {
            if let Some(sc) = self.scope.iter().find(|s| s.pos == *p) {
                rc.org_name = sc.name.clone();
                rc.table = sc.alias.clone();
                rc.org_table = sc.table.clone();
                rc.db = sc.db.clone();
                rc.flags = sc.flags;
                if sc.nullable {
                    rc.flags &= !cf::NOT_NULL;
                }
            }
        }
        rc
    }

    fn bind_select(
        &mut self,
        s: &sq::Select,
        order_by: &[sq::OrderByExpr],
    ) -> Result<Select, SqlError> {
        if s.into.is_some() {
            return Err(unsupported("SELECT INTO"));
        }
        let sources = self.bind_from(&s.from)?;
        let mut filter = Vec::new();
        if let Some(w) = &s.selection {
            let b = self.bind_expr(w, Clause::Where)?;
            conjuncts(b, &mut filter);
        }
        // Select list.
        self.allow_agg = true;
        let mut items = Vec::new();
        let mut columns = Vec::new();
        for item in &s.projection {
            match item {
                sq::SelectItem::Wildcard(_) => {
                    if sources.is_empty() {
                        return Err(err(crate::codes::ER_NO_TABLES_USED, "No tables used"));
                    }
                    for p in self.star.clone() {
                        let e = Expr::Col(p);
                        let name = self.scope_name(p);
                        columns.push(self.result_column(&e, name));
                        items.push(e);
                    }
                }
                sq::SelectItem::QualifiedWildcard(kind, _) => {
                    let name = match kind {
                        sq::SelectItemQualifiedWildcardKind::ObjectName(n) => name_parts(n),
                        sq::SelectItemQualifiedWildcardKind::Expr(e) => vec![e.to_string()],
                    };
                    let alias = name.last().cloned().unwrap_or_default();
                    let src = sources
                        .iter()
                        .find(|s| s.alias == alias)
                        .ok_or_else(|| {
                            err(code::ER_BAD_TABLE_ERROR, format!("Unknown table '{alias}'"))
                        })?
                        .clone();
                    self.push_source_columns(&src, &mut items, &mut columns);
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
                    self.aliases.push((alias.value.clone(), b.clone()));
                    items.push(b);
                }
                other => return Err(unsupported(&other.to_string())),
            }
        }
        for (i, c) in columns.iter().enumerate() {
            if !self.aliases.iter().any(|(a, _)| ident_eq(a, &c.name)) {
                self.aliases.push((c.name.clone(), items[i].clone()));
            }
        }
        // GROUP BY
        let mut group_by = Vec::new();
        match &s.group_by {
            sq::GroupByExpr::Expressions(exprs, mods) => {
                if !mods.is_empty() {
                    return Err(unsupported("GROUP BY modifiers"));
                }
                self.allow_agg = false;
                for e in exprs {
                    group_by.push(self.bind_order_item(e, &items, Clause::Group)?);
                }
                self.allow_agg = true;
            }
            sq::GroupByExpr::All(_) => return Err(unsupported("GROUP BY ALL")),
        }
        let having = match &s.having {
            Some(h) => Some(self.bind_expr(h, Clause::Having)?),
            None => None,
        };
        let mut order = Vec::new();
        for o in order_by {
            let desc = matches!(o.options.sort, Some(sq::OrderBySort::Desc));
            order.push((self.bind_order_item(&o.expr, &items, Clause::Order)?, desc));
        }
        let aggregate = !group_by.is_empty() || !self.aggs.is_empty();
        let distinct = matches!(s.distinct, Some(sq::Distinct::Distinct));
        if matches!(s.distinct, Some(sq::Distinct::On(_))) {
            return Err(unsupported("DISTINCT ON"));
        }
        // (Before the aggregates move into the plan: ORDER BY may name them.)
        let order_colls = order.iter().map(|(e, _)| self.coll_of(e).0).collect();
        let group_colls = group_by.iter().map(|e| self.coll_of(e).0).collect();
        let derivs = items.iter().map(|e| self.coll_of(e).1).collect();
        Ok(Select {
            sources,
            filter,
            group_by,
            aggs: std::mem::take(&mut self.aggs),
            having,
            items,
            columns,
            distinct,
            order_colls,
            group_colls,
            derivs,
            order_by: order,
            limit: None,
            offset: 0,
            lock: LockMode::None,
            aggregate,
            subqueries: std::mem::take(&mut self.subqueries),
            width: self.types.len(),
            ordered: false,
            params: Vec::new(),
        })
    }

    fn push_source_columns(
        &self,
        src: &Source,
        items: &mut Vec<Expr>,
        cols: &mut Vec<ResultColumn>,
    ) {
        for i in 0..src.ncols {
            let e = Expr::Col(src.offset + i);
            let name = self
                .scope
                .iter()
                .find(|s| s.pos == src.offset + i)
                .map(|s| s.name.clone())
                .unwrap_or_default();
            cols.push(self.result_column(&e, name));
            items.push(e);
        }
    }

    /// ORDER BY / GROUP BY item: a position, a select-list alias, or an expression.
    fn bind_order_item(
        &mut self,
        e: &sq::Expr,
        items: &[Expr],
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        if let Some(item) = positional(e, items, clause.name()) {
            return item;
        }
        if let sq::Expr::Identifier(id) = e {
            // A real column wins over an alias in GROUP BY; an alias wins in ORDER BY.
            let col = self.lookup_column(std::slice::from_ref(&id.value), clause);
            if clause == Clause::Order || !matches!(col, Ok(Expr::Col(_))) {
                if let Some((_, x)) = self.aliases.iter().find(|(a, _)| ident_eq(a, &id.value)) {
                    return Ok(x.clone());
                }
            }
        }
        self.bind_expr(e, clause)
    }

    // ---------------------------------------------------------------- names

    fn lookup_column(&self, parts: &[String], clause: Clause) -> Result<Expr, SqlError> {
        let (db, tbl, col) = match parts.len() {
            1 => (None, None, &parts[0]),
            2 => (None, Some(&parts[0]), &parts[1]),
            3 => (Some(&parts[0]), Some(&parts[1]), &parts[2]),
            _ => {
                return Err(err(
                    code::ER_BAD_FIELD_ERROR,
                    format!(
                        "Unknown column '{}' in '{}'",
                        parts.join("."),
                        clause.name()
                    ),
                ))
            }
        };
        let find = |scope: &[ScopeCol]| -> Vec<usize> {
            scope
                .iter()
                .filter(|s| {
                    ident_eq(&s.name, col)
                        && tbl.is_none_or(|t| s.alias == *t)
                        && db.is_none_or(|d| s.db == *d)
                        && !(tbl.is_none() && s.using_hidden)
                })
                .map(|s| s.pos)
                .collect()
        };
        let ambiguous = || {
            err(
                code::ER_NON_UNIQ_ERROR,
                format!(
                    "Column '{}' in {} is ambiguous",
                    parts.join("."),
                    clause.name()
                ),
            )
        };
        let matches = find(&self.scope);
        match matches.len() {
            0 => {}
            1 => return Ok(Expr::Col(matches[0])),
            _ => return Err(ambiguous()),
        }
        // An enclosing query's column (correlated subquery).
        for (d, o) in self.outer.iter().enumerate() {
            let m = find(&o.scope);
            match m.len() {
                0 => {}
                1 => return Ok(Expr::Outer(d + 1, m[0])),
                _ => return Err(ambiguous()),
            }
        }
        // `CURRENT_USER` without parentheses is the function (a reserved word in MariaDB).
        if parts.len() == 1 && col.eq_ignore_ascii_case("current_user") {
            return Ok(Expr::Lit(Value::str(&self.env.current_user())));
        }
        Err(err(
            code::ER_BAD_FIELD_ERROR,
            format!(
                "Unknown column '{}' in '{}'",
                parts.join("."),
                clause.name()
            ),
        ))
    }

    // ---------------------------------------------------------------- expressions

    pub fn bind_value(&self, v: &sq::Value) -> Result<Value, SqlError> {
        Ok(match v {
            sq::Value::Number(n, _) => parse_number(n),
            sq::Value::SingleQuotedString(s)
            | sq::Value::DoubleQuotedString(s)
            | sq::Value::NationalStringLiteral(s)
            | sq::Value::EscapedStringLiteral(s)
            | sq::Value::TripleSingleQuotedString(s)
            | sq::Value::TripleDoubleQuotedString(s) => Value::Bytes(crate::literal_bytes(s)),
            sq::Value::SingleQuotedByteStringLiteral(s)
            | sq::Value::DoubleQuotedByteStringLiteral(s) => {
                // b'0101'
                let mut n: u64 = 0;
                for c in s.chars() {
                    n = (n << 1) | (c == '1') as u64;
                }
                Value::UInt(n)
            }
            sq::Value::HexStringLiteral(h) => {
                let h = if h.len() % 2 == 1 {
                    format!("0{h}")
                } else {
                    h.clone()
                };
                let mut out = Vec::with_capacity(h.len() / 2);
                for i in (0..h.len()).step_by(2) {
                    out.push(
                        u8::from_str_radix(&h[i..i + 2], 16)
                            .map_err(|_| crate::parser::syntax_error(&h, 0))?,
                    );
                }
                Value::Bytes(out)
            }
            sq::Value::Boolean(b) => Value::Int(*b as i64),
            sq::Value::Null => Value::Null,
            sq::Value::Placeholder(p) => {
                let i: usize = p.trim_start_matches('?').parse().unwrap_or(0);
                self.env
                    .params()
                    .get(i.wrapping_sub(1))
                    .cloned()
                    .unwrap_or(Value::Null)
            }
            other => return Err(unsupported(&other.to_string())),
        })
    }

    fn sub(&mut self, e: &sq::Expr, clause: Clause) -> Result<Box<Expr>, SqlError> {
        Ok(Box::new(self.bind_expr(e, clause)?))
    }

    fn bind_subquery(&mut self, q: &sq::Query) -> Result<usize, SqlError> {
        let mut sel = self.child().bind_query(q)?;
        // The columns of this query the subquery (or one nested in it) reads.
        let mut params = Vec::new();
        visit_exprs(&sel, 0, &mut |e, depth| {
            e.walk(&mut |x| {
                if let Expr::Outer(d, p) = x {
                    if *d == depth + 1 && !params.contains(p) {
                        params.push(*p);
                    }
                }
            })
        });
        params.sort_unstable();
        sel.params = params;
        self.subqueries.push(sel);
        Ok(self.subqueries.len() - 1)
    }

    /// The collation comparing `a` with the one column of subquery `i`.
    fn subquery_coll(&self, a: &Expr, i: usize) -> Collation {
        let sub = match self.subqueries[i].columns[0].ty.collation() {
            Some(c) => (c, Derivation::Implicit),
            None => (Collation::DEFAULT, Derivation::Numeric),
        };
        Collation::aggregate(self.coll_of(a), sub).0
    }

    /// A subquery used as a one-column operand (IN, ANY/ALL, scalar).
    fn bind_column_subquery(&mut self, q: &sq::Query, with_limit: bool) -> Result<usize, SqlError> {
        if !with_limit && q.limit_clause.is_some() {
            return Err(unsupported("LIMIT & IN/ALL/ANY/SOME subquery"));
        }
        let i = self.bind_subquery(q)?;
        if self.subqueries[i].columns.len() != 1 {
            return Err(err(
                code::ER_OPERAND_COLUMNS,
                "Operand should contain 1 column(s)",
            ));
        }
        Ok(i)
    }

    pub fn bind_expr(&mut self, e: &sq::Expr, clause: Clause) -> Result<Expr, SqlError> {
        stack::check()?;
        if self.env.interrupted() {
            return Err(err(
                code::ER_QUERY_INTERRUPTED,
                "Query execution was interrupted",
            ));
        }
        use sq::Expr as E;
        Ok(match e {
            E::Identifier(id) => {
                if id.quote_style.is_none() && id.value.starts_with('@') {
                    return self.bind_variable(std::slice::from_ref(&id.value));
                }
                if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT") {
                    return Err(unsupported("DEFAULT in this position"));
                }
                self.lookup_column(std::slice::from_ref(&id.value), clause)?
            }
            E::CompoundIdentifier(ids) => {
                let parts: Vec<String> = ids.iter().map(|i| i.value.clone()).collect();
                if ids[0].quote_style.is_none() && parts[0].starts_with('@') {
                    return self.bind_variable(&parts);
                }
                self.lookup_column(&parts, clause)?
            }
            E::Value(v) => {
                let lit = Expr::Lit(self.bind_value(&v.value)?);
                if matches!(v.value, sq::Value::HexStringLiteral(_)) {
                    // X'..' is a binary string.
                    Expr::Collate(Box::new(lit), Collation::Binary, Derivation::Coercible)
                } else {
                    lit
                }
            }
            E::Nested(inner) => self.bind_expr(inner, clause)?,
            E::BinaryOp { left, op, right }
                if matches!(left.as_ref(), E::Tuple(_))
                    || matches!(right.as_ref(), E::Tuple(_)) =>
            {
                let Some(op) = comparison(op) else {
                    return Err(err(
                        code::ER_OPERAND_COLUMNS,
                        "Operand should contain 1 column(s)",
                    ));
                };
                self.bind_row_cmp(op, left, right, clause)?
            }
            // `date + INTERVAL n unit`, `INTERVAL n unit + date`, `date - INTERVAL n unit`.
            E::BinaryOp {
                left,
                op: op @ (sq::BinaryOperator::Plus | sq::BinaryOperator::Minus),
                right,
            } if matches!(right.as_ref(), E::Interval(_))
                || (matches!(left.as_ref(), E::Interval(_))
                    && matches!(op, sq::BinaryOperator::Plus)) =>
            {
                let subtract = matches!(op, sq::BinaryOperator::Minus);
                match (left.as_ref(), right.as_ref()) {
                    (date, E::Interval(iv)) => {
                        self.bind_add_interval(date, iv, subtract, clause)?
                    }
                    (E::Interval(iv), date) => self.bind_add_interval(date, iv, false, clause)?,
                    _ => unreachable!("guarded above"),
                }
            }
            E::BinaryOp { left, op, right } => {
                let l = self.sub(left, clause)?;
                let r = self.sub(right, clause)?;
                use sq::BinaryOperator as O;
                let o = match op {
                    // Long chains arrive balanced (`syntax_depth`).
                    O::And => return Ok(Expr::And(l, r)),
                    O::Or | O::StringConcat => return Ok(Expr::Or(l, r)),
                    O::Xor => return Ok(Expr::Xor(l, r)),
                    O::Plus => BinOp::Add,
                    O::Minus => BinOp::Sub,
                    O::Multiply => BinOp::Mul,
                    O::Divide => BinOp::Div,
                    O::Modulo => BinOp::Mod,
                    O::MyIntegerDivide | O::DuckIntegerDivide => BinOp::IntDiv,
                    o if comparison(o).is_some() => comparison(o).expect("matched"),
                    O::BitwiseAnd => BinOp::BitAnd,
                    O::BitwiseOr => BinOp::BitOr,
                    O::BitwiseXor => BinOp::BitXor,
                    O::PGBitwiseShiftLeft => BinOp::Shl,
                    O::PGBitwiseShiftRight => BinOp::Shr,
                    O::Regexp => return Ok(Expr::Regexp(l, r, false)),
                    other => return Err(unsupported(&format!("operator {other}"))),
                };
                let coll = self.agg_coll(&[&l, &r]);
                Expr::Bin(o, l, r, coll)
            }
            E::UnaryOp { op, expr } => {
                let a = self.sub(expr, clause)?;
                match op {
                    sq::UnaryOperator::Minus => match *a {
                        Expr::Lit(v) => Expr::Lit(match v {
                            Value::UInt(u) if u == 1u64 << 63 => Value::Int(i64::MIN),
                            other => expr::eval(
                                &Expr::Neg(Box::new(Expr::Lit(other))),
                                &expr::Ctx::new(&[]),
                            )?,
                        }),
                        other => Expr::Neg(Box::new(other)),
                    },
                    sq::UnaryOperator::Plus => *a,
                    sq::UnaryOperator::Not | sq::UnaryOperator::BangNot => Expr::Not(a),
                    sq::UnaryOperator::BitwiseNot => Expr::BitNot(a),
                    other => return Err(unsupported(&format!("operator {other}"))),
                }
            }
            E::IsNull(a) => Expr::IsNull(self.sub(a, clause)?, false),
            E::IsNotNull(a) => Expr::IsNull(self.sub(a, clause)?, true),
            E::IsTrue(a) => Expr::IsBool(self.sub(a, clause)?, true, false),
            E::IsNotTrue(a) => Expr::IsBool(self.sub(a, clause)?, true, true),
            E::IsFalse(a) => Expr::IsBool(self.sub(a, clause)?, false, false),
            E::IsNotFalse(a) => Expr::IsBool(self.sub(a, clause)?, false, true),
            E::IsUnknown(a) => Expr::IsNull(self.sub(a, clause)?, false),
            E::IsNotUnknown(a) => Expr::IsNull(self.sub(a, clause)?, true),
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let (a, l, h) = (
                    self.sub(expr, clause)?,
                    self.sub(low, clause)?,
                    self.sub(high, clause)?,
                );
                let coll = self.agg_coll(&[&a, &l, &h]);
                Expr::Between(a, l, h, *negated, coll)
            }
            E::InList {
                expr,
                list,
                negated,
            } if matches!(expr.as_ref(), E::Tuple(_)) => {
                // (a, b) IN ((1, 2), (3, 4)): one row comparison per item.
                let mut eqs = Vec::with_capacity(list.len());
                for x in list {
                    eqs.push(self.bind_row_cmp(BinOp::Eq, expr, x, clause)?);
                }
                let any = if eqs.is_empty() {
                    Expr::Lit(expr::bool_val(false))
                } else {
                    Logic::Or.balanced(eqs)
                };
                if *negated {
                    Expr::Not(Box::new(any))
                } else {
                    any
                }
            }
            E::InSubquery {
                expr,
                subquery,
                negated,
            } if matches!(expr.as_ref(), E::Tuple(_)) => {
                let E::Tuple(items) = expr.as_ref() else {
                    unreachable!()
                };
                let mut xs = Vec::with_capacity(items.len());
                for x in items {
                    xs.push(self.bind_expr(x, clause)?);
                }
                let i = self.bind_subquery(subquery)?;
                if self.subqueries[i].columns.len() != xs.len() {
                    return Err(err(
                        code::ER_OPERAND_COLUMNS,
                        format!("Operand should contain {} column(s)", xs.len()),
                    ));
                }
                let colls = xs
                    .iter()
                    .enumerate()
                    .map(|(k, x)| {
                        let sub = match self.subqueries[i].columns[k].ty.collation() {
                            Some(c) => (c, Derivation::Implicit),
                            None => (Collation::DEFAULT, Derivation::Numeric),
                        };
                        Collation::aggregate(self.coll_of(x), sub).0
                    })
                    .collect();
                Expr::RowInSubquery(xs, i, *negated, colls)
            }
            E::InList {
                expr,
                list,
                negated,
            } => {
                let a = self.sub(expr, clause)?;
                let mut l = Vec::with_capacity(list.len());
                for x in list {
                    l.push(self.bind_expr(x, clause)?);
                }
                let coll = self.agg_coll(&std::iter::once(&*a).chain(&l).collect::<Vec<_>>());
                match sorted_list(&l, coll) {
                    Some(list) => Expr::InSorted(a, Arc::new(list), *negated),
                    None => Expr::InList(a, l, *negated, coll),
                }
            }
            E::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let a = self.sub(expr, clause)?;
                let i = self.bind_column_subquery(subquery, false)?;
                let coll = self.subquery_coll(&a, i);
                Expr::InSubquery(a, i, *negated, coll)
            }
            E::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | E::AllOp {
                left,
                compare_op,
                right,
            } => {
                let all = matches!(e, E::AllOp { .. });
                let sq::Expr::Subquery(q) = right.as_ref() else {
                    return Err(unsupported("ANY/ALL over a list"));
                };
                use sq::BinaryOperator as O;
                let op = match compare_op {
                    O::Eq => BinOp::Eq,
                    O::NotEq => BinOp::Ne,
                    O::Lt => BinOp::Lt,
                    O::LtEq => BinOp::Le,
                    O::Gt => BinOp::Gt,
                    O::GtEq => BinOp::Ge,
                    other => return Err(unsupported(&format!("operator {other} with ANY/ALL"))),
                };
                let a = self.sub(left, clause)?;
                let i = self.bind_column_subquery(q, false)?;
                let coll = self.subquery_coll(&a, i);
                Expr::Quantified(a, op, i, all, coll)
            }
            E::Subquery(q) => {
                let i = self.bind_column_subquery(q, true)?;
                Expr::Subquery(i)
            }
            E::Exists { subquery, negated } => {
                let i = self.bind_subquery(subquery)?;
                Expr::Exists(i, *negated)
            }
            E::Like {
                negated,
                any,
                expr,
                pattern,
                escape_char,
            } => {
                if *any {
                    return Err(unsupported("LIKE ANY"));
                }
                let esc = match escape_char.as_deref() {
                    Some(sq::Expr::Value(v)) => match &v.value {
                        sq::Value::SingleQuotedString(s) if s.len() == 1 => Some(s.as_bytes()[0]),
                        _ => {
                            return Err(err(
                                code::ER_WRONG_ARGUMENTS,
                                "Incorrect arguments to ESCAPE",
                            ))
                        }
                    },
                    Some(_) => {
                        return Err(err(
                            code::ER_WRONG_ARGUMENTS,
                            "Incorrect arguments to ESCAPE",
                        ))
                    }
                    None => None,
                };
                let (a, p) = (self.sub(expr, clause)?, self.sub(pattern, clause)?);
                let coll = self.agg_coll(&[&a, &p]);
                Expr::Like(a, p, esc, *negated, coll)
            }
            E::ILike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let (a, p) = (self.sub(expr, clause)?, self.sub(pattern, clause)?);
                Expr::Like(a, p, None, *negated, Collation::Utf8mb4GeneralCi)
            }
            E::RLike {
                negated,
                expr,
                pattern,
                ..
            } => Expr::Regexp(
                self.sub(expr, clause)?,
                self.sub(pattern, clause)?,
                *negated,
            ),
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let op = match operand {
                    Some(o) => Some(self.sub(o, clause)?),
                    None => None,
                };
                let mut whens = Vec::new();
                for c in conditions {
                    whens.push((
                        self.bind_expr(&c.condition, clause)?,
                        self.bind_expr(&c.result, clause)?,
                    ));
                }
                let els = match else_result {
                    Some(e) => Some(self.sub(e, clause)?),
                    None => None,
                };
                let coll = match &op {
                    Some(o) => self.agg_coll(
                        &std::iter::once(&**o)
                            .chain(whens.iter().map(|(w, _)| w))
                            .collect::<Vec<_>>(),
                    ),
                    None => Collation::DEFAULT,
                };
                Expr::Case(op, whens, els, coll)
            }
            E::Cast {
                expr, data_type, ..
            } => {
                // `BINARY a = b` is `(BINARY a) = b` in MariaDB, not `BINARY (a = b)`.
                if matches!(data_type, sq::DataType::Binary(None))
                    && self.after_binary_keyword(expr)
                {
                    let mut fixed = (**expr).clone();
                    if binary_onto_leftmost(&mut fixed) {
                        return self.bind_expr(&fixed, clause);
                    }
                }
                Expr::Cast(self.sub(expr, clause)?, cast_type(data_type, expr)?)
            }
            E::Convert {
                expr, data_type, ..
            } => match data_type {
                Some(t) => Expr::Cast(self.sub(expr, clause)?, cast_type(t, expr)?),
                None => self.bind_expr(expr, clause)?,
            },
            E::Collate { expr, collation } => {
                let name = name_parts(collation).join(".");
                let Some(c) = Collation::from_name(&name) else {
                    return Err(err(
                        crate::codes::ER_UNKNOWN_COLLATION,
                        format!("Unknown collation: '{name}'"),
                    ));
                };
                Expr::Collate(self.sub(expr, clause)?, c, Derivation::Explicit)
            }
            E::Prefixed { prefix, value } => {
                let v = self.sub(value, clause)?;
                // `_binary 'x'`: a binary string literal; other introducers name text
                // charsets stored as utf8mb4.
                if prefix.value.eq_ignore_ascii_case("_binary") {
                    Expr::Collate(v, Collation::Binary, Derivation::Coercible)
                } else {
                    *v
                }
            }
            E::Extract { field, expr, .. } => {
                let unit = single_unit(field).ok_or_else(|| {
                    crate::parser::syntax_error(&format!("{field} FROM {expr})"), 0)
                })?;
                let f = Func::Cal(dates::CalFn::Extract(unit));
                Expr::Func(f, vec![self.bind_expr(expr, clause)?])
            }
            E::TypedString(ts) => {
                let v = self.bind_value(&ts.value.value)?;
                // TIME '...' and TIMESTAMP '...' have the precision their text shows.
                let digits = match &v {
                    Value::Bytes(b) => {
                        let s = String::from_utf8_lossy(b);
                        // The fraction follows the seconds (dots may separate date parts).
                        let s = &s[s.rfind(':').unwrap_or(0)..];
                        s.find('.').map_or(0, |dot| {
                            s[dot + 1..]
                                .bytes()
                                .take_while(u8::is_ascii_digit)
                                .count()
                                .min(6)
                        }) as u8
                    }
                    _ => 0,
                };
                let ty = match cast_type(&ts.data_type, e)? {
                    CastType::DateTime(_) => CastType::DateTime(digits),
                    CastType::Time(_) => CastType::Time(digits),
                    other => other,
                };
                Expr::Cast(Box::new(Expr::Lit(v)), ty)
            }
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.bind_expr(expr, clause)?];
                args.push(match substring_from {
                    Some(f) => self.bind_expr(f, clause)?,
                    None => Expr::Lit(Value::Int(1)),
                });
                if let Some(f) = substring_for {
                    args.push(self.bind_expr(f, clause)?);
                }
                Expr::Func(Func::Substring, args)
            }
            E::Trim {
                expr,
                trim_where,
                trim_what,
                ..
            } => {
                if trim_what.is_some() {
                    return Err(unsupported("TRIM(... FROM ...)"));
                }
                let f = match trim_where {
                    Some(sq::TrimWhereField::Leading) => Func::LTrim,
                    Some(sq::TrimWhereField::Trailing) => Func::RTrim,
                    _ => Func::Trim,
                };
                Expr::Func(f, vec![self.bind_expr(expr, clause)?])
            }
            E::Ceil { expr, .. } => Expr::Func(Func::Ceil, vec![self.bind_expr(expr, clause)?]),
            E::Floor { expr, .. } => Expr::Func(Func::Floor, vec![self.bind_expr(expr, clause)?]),
            E::Position { expr, r#in } => Expr::Func(
                Func::Instr,
                vec![self.bind_expr(r#in, clause)?, self.bind_expr(expr, clause)?],
            ),
            E::Function(f) => self.bind_function(f, clause)?,
            E::Tuple(_) => {
                return Err(err(
                    code::ER_OPERAND_COLUMNS,
                    "Operand should contain 1 column(s)",
                ))
            }
            other => return Err(unsupported(&format!("expression {other}"))),
        })
    }

    /// A comparison of two row constructors (`(a, b) = (1, 2)`), expanded into comparisons
    /// of their elements: `=` and `<=>` hold when every pair does, `<>` is NOT `=`, and the
    /// orderings compare lexicographically (the first unequal pair decides; a NULL pair
    /// before it makes the result NULL), as MariaDB compares rows.
    fn bind_row_cmp(
        &mut self,
        op: BinOp,
        l: &sq::Expr,
        r: &sq::Expr,
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        let width = |e: &sq::Expr| match e {
            sq::Expr::Tuple(v) => v.len(),
            _ => 1,
        };
        let (sq::Expr::Tuple(a), sq::Expr::Tuple(b)) = (l, r) else {
            if matches!(l, sq::Expr::Subquery(_)) || matches!(r, sq::Expr::Subquery(_)) {
                return Err(unsupported("row constructors compared with a subquery"));
            }
            if width(l) != width(r) {
                // A row against a scalar: MariaDB's type error.
                let (row_left, scalar) = if width(l) > 1 { (true, r) } else { (false, l) };
                let t = self.bind_expr(scalar, clause)?;
                let name = match self.type_of(&t).0 {
                    ColumnType::Int { bytes: 8, .. } => "bigint",
                    ColumnType::Int { .. } => "int",
                    ColumnType::Decimal { .. } => "decimal",
                    ColumnType::Float => "float",
                    ColumnType::Double => "double",
                    ColumnType::Date => "date",
                    ColumnType::DateTime { .. } => "datetime",
                    ColumnType::Timestamp { .. } => "timestamp",
                    ColumnType::Time { .. } => "time",
                    _ => "varchar",
                };
                let (a, b) = if row_left {
                    ("row", name)
                } else {
                    (name, "row")
                };
                return Err(err(
                    code::ER_ILLEGAL_PARAMETER_DATA_TYPES2_FOR_OPERATION,
                    format!(
                        "Illegal parameter data types {a} and {b} for operation '{}'",
                        match op {
                            BinOp::Eq => "=",
                            BinOp::Ne => "<>",
                            BinOp::Lt => "<",
                            BinOp::Le => "<=",
                            BinOp::Gt => ">",
                            BinOp::Ge => ">=",
                            _ => "<=>",
                        }
                    ),
                ));
            }
            let x = self.sub(l, clause)?;
            let y = self.sub(r, clause)?;
            let coll = self.agg_coll(&[&x, &y]);
            return Ok(Expr::Bin(op, x, y, coll));
        };
        if a.len() != b.len() || a.is_empty() {
            return Err(err(
                code::ER_OPERAND_COLUMNS,
                format!("Operand should contain {} column(s)", a.len()),
            ));
        }
        let and = |x: Expr, y: Expr| Expr::And(Box::new(x), Box::new(y));
        Ok(match op {
            BinOp::Eq | BinOp::NullSafeEq => {
                let mut eqs = Vec::with_capacity(a.len());
                for (x, y) in a.iter().zip(b) {
                    eqs.push(self.bind_row_cmp(op, x, y, clause)?);
                }
                Logic::And.balanced(eqs)
            }
            BinOp::Ne => Expr::Not(Box::new(self.bind_row_cmp(BinOp::Eq, l, r, clause)?)),
            _ => {
                let strict = match op {
                    BinOp::Le => BinOp::Lt,
                    BinOp::Ge => BinOp::Gt,
                    o => o,
                };
                let n = a.len();
                // The comparison nests two levels per column.
                stack::check_room(n * 2 * ROW_CMP_BYTES_PER_LEVEL)?;
                let mut acc = self.bind_row_cmp(op, &a[n - 1], &b[n - 1], clause)?;
                for i in (0..n - 1).rev() {
                    let lt = self.bind_row_cmp(strict, &a[i], &b[i], clause)?;
                    let eq = self.bind_row_cmp(BinOp::Eq, &a[i], &b[i], clause)?;
                    acc = Expr::Or(Box::new(lt), Box::new(and(eq, acc)));
                }
                acc
            }
        })
    }

    fn bind_variable(&mut self, parts: &[String]) -> Result<Expr, SqlError> {
        let first = &parts[0];
        if let Some(rest) = first.strip_prefix("@@") {
            let (scope, name) = if parts.len() == 2 {
                let s = match rest.to_lowercase().as_str() {
                    "global" => Some(VarScope::Global),
                    "session" | "local" => Some(VarScope::Session),
                    _ => {
                        return Err(err(
                            code::ER_UNKNOWN_SYSTEM_VARIABLE,
                            format!("Unknown system variable '{rest}'"),
                        ))
                    }
                };
                (s, parts[1].clone())
            } else {
                (None, rest.to_string())
            };
            return Ok(Expr::Lit(self.env.sys_var(scope, &name.to_lowercase())?));
        }
        let name = first.trim_start_matches('@');
        Ok(Expr::Lit(self.env.user_var(&name.to_lowercase())))
    }

    fn fn_args(
        &mut self,
        f: &sq::Function,
        clause: Clause,
    ) -> Result<(Vec<Expr>, bool, bool), SqlError> {
        // (args, star, distinct)
        match &f.args {
            sq::FunctionArguments::None => Ok((vec![], false, false)),
            sq::FunctionArguments::Subquery(_) => Err(unsupported("subquery as function argument")),
            sq::FunctionArguments::List(l) => {
                let distinct = matches!(
                    l.duplicate_treatment,
                    Some(sq::DuplicateTreatment::Distinct)
                );
                let mut out = Vec::new();
                let mut star = false;
                for a in &l.args {
                    match a {
                        sq::FunctionArg::Unnamed(sq::FunctionArgExpr::Expr(e)) => {
                            out.push(self.bind_expr(e, clause)?)
                        }
                        sq::FunctionArg::Unnamed(sq::FunctionArgExpr::Wildcard) => star = true,
                        _ => return Err(unsupported("named function arguments")),
                    }
                }
                Ok((out, star, distinct))
            }
        }
    }

    /// `GROUP_CONCAT(... [ORDER BY e [ASC|DESC], ...] [SEPARATOR 'str'])`: an ORDER BY
    /// position names an argument (MariaDB).
    fn group_concat_clauses(
        &mut self,
        f: &sq::Function,
        args: &[Expr],
        clause: Clause,
    ) -> Result<(AggOrder, Vec<u8>), SqlError> {
        let mut order = Vec::new();
        let mut separator = DEFAULT_SEPARATOR.to_vec();
        let sq::FunctionArguments::List(l) = &f.args else {
            return Ok((order, separator));
        };
        for c in &l.clauses {
            match c {
                sq::FunctionArgumentClause::OrderBy(items) => {
                    for o in items {
                        let desc = matches!(o.options.sort, Some(sq::OrderBySort::Desc));
                        let e = match positional(&o.expr, args, "ORDER BY") {
                            Some(e) => e?,
                            None => self.bind_expr(&o.expr, clause)?,
                        };
                        let coll = self.coll_of(&e).0;
                        order.push((e, desc, coll));
                    }
                }
                sq::FunctionArgumentClause::Separator(v) => {
                    separator = match self.bind_value(&v.value)? {
                        Value::Bytes(b) => b,
                        other => crate::expr::to_bytes(&other),
                    };
                }
                other => return Err(unsupported(&format!("{other} in GROUP_CONCAT"))),
            }
        }
        Ok((order, separator))
    }

    fn bind_function(&mut self, f: &sq::Function, clause: Clause) -> Result<Expr, SqlError> {
        // Window functions are not there yet: refuse rather than compute something else
        // (`SUM(v) OVER (...)` is not `SUM(v)`).
        if f.over.is_some() {
            return Err(unsupported("window functions (OVER)"));
        }
        if f.filter.is_some() || !f.within_group.is_empty() || f.null_treatment.is_some() {
            return Err(crate::parser::syntax_error(&f.to_string(), 0));
        }
        let parts = name_parts(&f.name);
        let name = parts.last().cloned().unwrap_or_default().to_lowercase();
        if parts.len() > 1 {
            return Err(err(
                code::ER_FUNCTION_NOT_DEFINED,
                format!("FUNCTION {} does not exist", parts.join(".")),
            ));
        }
        // Aggregates.
        let agg = match name.as_str() {
            "count" => Some(AggKind::Count),
            "sum" => Some(AggKind::Sum),
            "min" => Some(AggKind::Min),
            "max" => Some(AggKind::Max),
            "avg" => Some(AggKind::Avg),
            "group_concat" => Some(AggKind::GroupConcat),
            "bit_and" => Some(AggKind::BitAnd),
            "bit_or" => Some(AggKind::BitOr),
            "bit_xor" => Some(AggKind::BitXor),
            "std" | "stddev" | "stddev_pop" => Some(AggKind::StdPop),
            "stddev_samp" => Some(AggKind::StdSamp),
            "variance" | "var_pop" => Some(AggKind::VarPop),
            "var_samp" => Some(AggKind::VarSamp),
            "json_arrayagg" => Some(AggKind::JsonArrayAgg),
            _ => None,
        };
        if let Some(mut kind) = agg {
            if !self.allow_agg || matches!(clause, Clause::Where | Clause::On | Clause::Group) {
                return Err(err(1111, "Invalid use of group function"));
            }
            // Aggregate arguments are evaluated per row: no nested aggregates.
            self.allow_agg = false;
            let r = self.fn_args(f, clause).and_then(|(args, star, distinct)| {
                let concat = matches!(kind, AggKind::GroupConcat | AggKind::JsonArrayAgg);
                let clauses = if concat && !star {
                    self.group_concat_clauses(f, &args, clause)?
                } else {
                    (Vec::new(), DEFAULT_SEPARATOR.to_vec())
                };
                Ok((args, star, distinct, clauses))
            });
            self.allow_agg = true;
            let (args, star, distinct, (order, separator)) = r?;
            if star {
                if kind != AggKind::Count {
                    return Err(crate::parser::syntax_error("*)", 0));
                }
                kind = AggKind::CountStar;
            } else if args.len() != 1 && kind != AggKind::GroupConcat {
                return Err(err(
                    code::ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
                    format!("Incorrect parameter count in the call to native function '{name}'"),
                ));
            }
            let mut arg = if kind == AggKind::GroupConcat && args.len() > 1 {
                Expr::Func(Func::Concat, args)
            } else {
                args.into_iter().next().unwrap_or(Expr::Lit(Value::Int(1)))
            };
            let mut separator = separator;
            if kind == AggKind::JsonArrayAgg {
                // Each value as JSON text (NULL as `null`), joined by `,`.
                let json = matches!(&arg, Expr::Func(Func::Json(g), _) if g.gives_json());
                arg = Expr::Func(Func::Json(functions::JsonFn::Element(json)), vec![arg]);
                separator = b",".to_vec();
            }
            let arg_type = self.type_of(&arg).0;
            self.aggs.push(AggCall {
                kind,
                arg,
                distinct,
                arg_type,
                order,
                separator,
            });
            return Ok(Expr::Agg(self.aggs.len() - 1));
        }
        // VALUES(col) in ON DUPLICATE KEY UPDATE.
        if name == "values" || name == "value" {
            if let Some(off) = self.values_offset {
                let (args, _, _) = self.fn_args(f, clause)?;
                if let [Expr::Col(p)] = args.as_slice() {
                    return Ok(Expr::Col(off + p));
                }
            }
        }
        if let Some(e) = self.bind_date_arith(&name, f, clause)? {
            return Ok(e);
        }
        if name == "mod" {
            // MOD(a, b) is `a % b`.
            let (mut args, _, _) = self.fn_args(f, clause)?;
            if args.len() != 2 {
                return Err(err(
                    code::ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
                    "Incorrect parameter count in the call to native function 'mod'",
                ));
            }
            let (b, a) = (args.pop().unwrap(), args.pop().unwrap());
            let coll = self.agg_coll(&[&a, &b]);
            return Ok(Expr::Bin(BinOp::Mod, Box::new(a), Box::new(b), coll));
        }
        let (args, _, _) = self.fn_args(f, clause)?;
        let now = self.env.now();
        let nargs = args.len();
        let folded = match name.as_str() {
            // NOW() has no fraction, NOW(p) p digits of it (MariaDB: DATETIME(p)); CURTIME
            // likewise (TIME(p)).
            "now" | "current_timestamp" | "localtime" | "localtimestamp" | "sysdate"
            | "utc_timestamp" | "curtime" | "current_time" | "utc_time" => {
                let p = match args.first() {
                    Some(Expr::Lit(v)) => expr::to_i64(v),
                    _ => 0,
                };
                if !(0..=6).contains(&p) {
                    // MariaDB names NOW and its synonyms by their SQL-standard name.
                    let what = match name.as_str() {
                        "now" | "localtime" | "localtimestamp" => "current_timestamp",
                        "curtime" => "current_time",
                        other => other,
                    };
                    return Err(err(
                        code::ER_TOO_BIG_PRECISION,
                        format!("Too big precision specified for '{what}'. Maximum is 6"),
                    ));
                }
                let micro = now.micro - now.micro % 10u32.pow(6 - p as u32);
                let (v, ty) = if matches!(name.as_str(), "curtime" | "current_time" | "utc_time") {
                    let t = onelog_types::Time {
                        negative: false,
                        hours: now.hour as u32,
                        minute: now.minute,
                        second: now.second,
                        micro,
                    };
                    (Value::Time(t), CastType::Time(p as u8))
                } else {
                    let dt = onelog_types::DateTime { micro, ..now };
                    (Value::DateTime(dt), CastType::DateTime(p as u8))
                };
                if p > 0 {
                    // Typed with p digits, so it shows them.
                    return Ok(Expr::Cast(Box::new(Expr::Lit(v)), ty));
                }
                Some(v)
            }
            "curdate" | "current_date" | "utc_date" => Some(Value::Date(now.date)),
            "unix_timestamp" if nargs == 0 => Some(Value::Int(now.unix_seconds())),
            "database" | "schema" => Some(match self.env.current_db() {
                Some(d) => Value::str(d),
                None => Value::Null,
            }),
            "version" => Some(Value::str(&self.env.version())),
            "connection_id" => Some(Value::UInt(self.env.connection_id() as u64)),
            "last_insert_id" if nargs == 0 => Some(Value::UInt(self.env.last_insert_id())),
            "row_count" => Some(Value::Int(self.env.row_count())),
            "found_rows" => Some(Value::Int(0)),
            "user" | "session_user" | "system_user" => Some(Value::str(&self.env.user())),
            "current_user" => Some(Value::str(&self.env.current_user())),
            "pi" => Some(Value::Double(std::f64::consts::PI)),
            _ => None,
        };
        if let Some(v) = folded {
            return Ok(Expr::Lit(v));
        }
        let Some((func, min, max)) = functions::lookup(&name) else {
            // MariaDB names the current database, if any.
            let written = parts.last().cloned().unwrap_or_default();
            let qualified = match self.env.current_db() {
                Some(db) => format!("{db}.{written}"),
                None => written,
            };
            return Err(err(
                code::ER_FUNCTION_NOT_DEFINED,
                format!("FUNCTION {qualified} does not exist"),
            ));
        };
        if nargs < min || nargs > max {
            return Err(err(
                code::ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
                format!("Incorrect parameter count in the call to native function '{name}'"),
            ));
        }
        // STR_TO_DATE's type follows its format, when that is a constant.
        let func = match (func, args.get(1)) {
            (Func::Cal(dates::CalFn::StrToDate(_)), Some(Expr::Lit(f))) if !f.is_null() => {
                Func::Cal(dates::CalFn::StrToDate(dates::parts_of_format(
                    &expr::to_string(f),
                )))
            }
            // JSON_OBJECT, JSON_ARRAY, JSON_SET, ... embed the results of JSON functions as
            // JSON.
            (Func::Json(j), _) if j.with_json_args(0).is_some() => {
                let mut mask = 0u64;
                for (i, a) in args.iter().enumerate().take(64) {
                    if matches!(a, Expr::Func(Func::Json(g), _) if g.gives_json()) {
                        mask |= 1 << i;
                    }
                }
                Func::Json(j.with_json_args(mask).unwrap_or(j))
            }
            (f, _) => f,
        };
        Ok(Expr::Func(func, args))
    }

    /// `date ± INTERVAL amount unit` as a call of [`Func::AddInterval`].
    fn bind_add_interval(
        &mut self,
        date: &sq::Expr,
        iv: &sq::Interval,
        subtract: bool,
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        let unit = interval_unit(iv)?;
        let d = self.bind_expr(date, clause)?;
        let n = self.bind_expr(&iv.value, clause)?;
        Ok(self.add_interval_call(unit, subtract, d, n))
    }

    fn add_interval_call(&self, unit: dates::Unit, subtract: bool, d: Expr, n: Expr) -> Expr {
        let six = !matches!(d, Expr::Lit(_)) && self.type_of(&d).0.is_string();
        let op = dates::AddOp {
            unit,
            subtract,
            six,
        };
        Expr::Func(Func::AddInterval(op), vec![d, n])
    }

    /// The date functions whose arguments are not plain expressions: DATE_ADD/DATE_SUB
    /// (an INTERVAL), ADDDATE/SUBDATE (an INTERVAL or a number of days),
    /// TIMESTAMPADD/TIMESTAMPDIFF (a unit name first). None for any other function.
    fn bind_date_arith(
        &mut self,
        name: &str,
        f: &sq::Function,
        clause: Clause,
    ) -> Result<Option<Expr>, SqlError> {
        if !matches!(
            name,
            "date_add" | "date_sub" | "adddate" | "subdate" | "timestampadd" | "timestampdiff"
        ) {
            return Ok(None);
        }
        let mut raw: Vec<&sq::Expr> = Vec::new();
        if let sq::FunctionArguments::List(l) = &f.args {
            for a in &l.args {
                match a {
                    sq::FunctionArg::Unnamed(sq::FunctionArgExpr::Expr(e)) => raw.push(e),
                    _ => return Err(crate::parser::syntax_error(&f.to_string(), 0)),
                }
            }
        }
        // Part of MariaDB's grammar: a wrong argument count is a syntax error.
        let want = if name.starts_with("timestamp") { 3 } else { 2 };
        if raw.len() != want {
            return Err(crate::parser::syntax_error(&f.to_string(), 0));
        }
        let subtract = name.contains("sub");
        Ok(Some(match name {
            "timestampadd" | "timestampdiff" => {
                let unit = match raw[0] {
                    sq::Expr::Identifier(id) if id.quote_style.is_none() => {
                        dates::Unit::single(&id.value)
                    }
                    _ => None,
                }
                .ok_or_else(|| crate::parser::syntax_error(&raw[0].to_string(), 0))?;
                let a = self.bind_expr(raw[1], clause)?;
                let b = self.bind_expr(raw[2], clause)?;
                if name == "timestampadd" {
                    self.add_interval_call(unit, false, b, a)
                } else {
                    Expr::Func(Func::TimestampDiff(unit), vec![a, b])
                }
            }
            _ => match raw[1] {
                sq::Expr::Interval(iv) => self.bind_add_interval(raw[0], iv, subtract, clause)?,
                // ADDDATE(d, n) / SUBDATE(d, n): n days.
                days if name.ends_with("date") => {
                    let d = self.bind_expr(raw[0], clause)?;
                    let n = self.bind_expr(days, clause)?;
                    self.add_interval_call(dates::Unit::Day, subtract, d, n)
                }
                other => return Err(crate::parser::syntax_error(&other.to_string(), 0)),
            },
        }))
    }

    // ---------------------------------------------------------------- types

    pub fn type_of(&self, e: &Expr) -> (ColumnType, bool) {
        let (ty, nullable) = self.base_type_of(e);
        // String results carry the collation the expression compares with.
        match self.coll_of(e) {
            (c, d) if ty.is_string() && d < Derivation::Numeric => (ty.with_collation(c), nullable),
            _ => (ty, nullable),
        }
    }

    /// The collation of an expression's string value and how strongly it binds
    /// (MariaDB's coercibility): `COLLATE` is explicit, a column implicit, a literal
    /// coercible; a function of strings takes the aggregate of its string arguments.
    pub fn coll_of(&self, e: &Expr) -> (Collation, Derivation) {
        self.type_memo
            .cached(|m| &m.colls, e, || self.coll_of_node(e))
    }

    fn coll_of_node(&self, e: &Expr) -> (Collation, Derivation) {
        let numeric = (Collation::DEFAULT, Derivation::Numeric);
        let of_type = |t: &ColumnType| match t.collation() {
            Some(c) => (c, Derivation::Implicit),
            None => numeric,
        };
        match e {
            Expr::Lit(Value::Null) => (Collation::DEFAULT, Derivation::Ignorable),
            Expr::Lit(Value::Bytes(_)) => (Collation::DEFAULT, Derivation::Coercible),
            Expr::Lit(_) => numeric,
            Expr::Col(p) => self.types.get(*p).map_or(numeric, |(t, _)| of_type(t)),
            Expr::Collate(_, c, d) => (*c, *d),
            Expr::Agg(i) => {
                let a = &self.aggs[*i];
                match a.kind {
                    AggKind::Min | AggKind::Max => self.coll_of(&a.arg),
                    AggKind::GroupConcat => match self.coll_of(&a.arg) {
                        (_, Derivation::Numeric | Derivation::Ignorable) => {
                            (Collation::DEFAULT, Derivation::Coercible)
                        }
                        c => c,
                    },
                    _ => numeric,
                }
            }
            Expr::Func(f, args) => {
                let ts: Vec<ColumnType> = args.iter().map(|a| self.base_type_of(a).0).collect();
                if !functions::result_type(*f, &ts).is_string() {
                    return numeric;
                }
                let args = match f {
                    Func::If => args.get(1..).unwrap_or(&[]),
                    _ => &args[..],
                };
                self.agg_args(args)
                    .unwrap_or((Collation::DEFAULT, Derivation::Coercible))
            }
            Expr::Case(_, whens, els, _) => whens
                .iter()
                .map(|(_, r)| r)
                .chain(els.as_deref())
                .map(|r| self.coll_of(r))
                .filter(|(_, d)| *d < Derivation::Numeric)
                .reduce(Collation::aggregate)
                .unwrap_or(numeric),
            Expr::Cast(_, CastType::Char(_)) => (Collation::DEFAULT, Derivation::Implicit),
            Expr::Cast(_, CastType::Binary) => (Collation::Binary, Derivation::Implicit),
            Expr::Subquery(i) => of_type(&self.subqueries[*i].columns[0].ty),
            _ => numeric,
        }
    }

    /// The aggregated collation of the string-valued expressions among `args` (None: none
    /// is a string).
    fn agg_args(&self, args: &[Expr]) -> Option<(Collation, Derivation)> {
        args.iter()
            .map(|a| self.coll_of(a))
            .filter(|(_, d)| *d < Derivation::Numeric)
            .reduce(Collation::aggregate)
    }

    /// The collation a comparison of `args` uses (MariaDB's aggregation rules).
    fn agg_coll(&self, args: &[&Expr]) -> Collation {
        args.iter()
            .map(|a| self.coll_of(a))
            .reduce(Collation::aggregate)
            .map_or(Collation::DEFAULT, |c| c.0)
    }

    fn base_type_of(&self, e: &Expr) -> (ColumnType, bool) {
        self.type_memo
            .cached(|m| &m.types, e, || self.base_type_of_node(e))
    }

    fn base_type_of_node(&self, e: &Expr) -> (ColumnType, bool) {
        match e {
            Expr::Collate(a, c, _) => {
                let (t, n) = self.base_type_of(a);
                (t.with_collation(*c), n)
            }
            Expr::Lit(v) => (value_type(v), v.is_null()),
            Expr::Col(p) => self.types.get(*p).copied().unwrap_or((bigint(), true)),
            Expr::Agg(i) => {
                let a = &self.aggs[*i];
                match a.kind {
                    AggKind::Count | AggKind::CountStar => (bigint(), false),
                    AggKind::Sum | AggKind::Avg => {
                        let t = match a.arg_type {
                            ColumnType::Float | ColumnType::Double => ColumnType::Double,
                            t if !is_numeric_ty(&t) => ColumnType::Double,
                            ColumnType::Decimal { precision, scale } => ColumnType::Decimal {
                                precision: (precision + 22).min(65),
                                scale: if a.kind == AggKind::Avg {
                                    (scale + 4).min(30)
                                } else {
                                    scale
                                },
                            },
                            _ => ColumnType::Decimal {
                                precision: if a.kind == AggKind::Avg { 14 } else { 32 },
                                scale: if a.kind == AggKind::Avg { 4 } else { 0 },
                            },
                        };
                        (t, true)
                    }
                    AggKind::Min | AggKind::Max => (a.arg_type, true),
                    AggKind::GroupConcat | AggKind::JsonArrayAgg => {
                        (ColumnType::text(2, Collation::DEFAULT), true)
                    }
                    AggKind::StdPop | AggKind::StdSamp | AggKind::VarPop | AggKind::VarSamp => {
                        (stat_type(&a.arg_type), true)
                    }
                    AggKind::BitAnd | AggKind::BitOr | AggKind::BitXor => (
                        ColumnType::Int {
                            bytes: 8,
                            unsigned: true,
                        },
                        false,
                    ),
                }
            }
            Expr::Neg(a) => {
                let (t, n) = self.base_type_of(a);
                (
                    match t {
                        ColumnType::Int { .. } => bigint(),
                        t if is_numeric_ty(&t) => t,
                        _ => ColumnType::Double,
                    },
                    n,
                )
            }
            Expr::Bin(op, a, b, _) => {
                let (ta, na) = self.base_type_of(a);
                let (tb, nb) = self.base_type_of(b);
                match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                        (arith_type(ta, tb, *op), na || nb || *op == BinOp::Div)
                    }
                    BinOp::IntDiv => (bigint(), true),
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => (
                        ColumnType::Int {
                            bytes: 8,
                            unsigned: true,
                        },
                        na || nb,
                    ),
                    BinOp::NullSafeEq => (
                        ColumnType::Int {
                            bytes: 1,
                            unsigned: false,
                        },
                        false,
                    ),
                    _ => (
                        ColumnType::Int {
                            bytes: 1,
                            unsigned: false,
                        },
                        na || nb,
                    ),
                }
            }
            Expr::BitNot(_) => (
                ColumnType::Int {
                    bytes: 8,
                    unsigned: true,
                },
                false,
            ),
            Expr::Not(_)
            | Expr::And(..)
            | Expr::Or(..)
            | Expr::Xor(..)
            | Expr::Between(..)
            | Expr::InList(..)
            | Expr::InSet(..)
            | Expr::InSorted(..)
            | Expr::InSubquery(..)
            | Expr::RowInSubquery(..)
            | Expr::RowInSet(..)
            | Expr::Quantified(..)
            | Expr::QuantSet(..)
            | Expr::Like(..)
            | Expr::Regexp(..) => (
                ColumnType::Int {
                    bytes: 1,
                    unsigned: false,
                },
                true,
            ),
            Expr::IsNull(..) | Expr::IsBool(..) | Expr::Exists(..) => (
                ColumnType::Int {
                    bytes: 1,
                    unsigned: false,
                },
                false,
            ),
            Expr::Case(_, whens, els, _) => {
                let mut t = whens.first().map(|(_, r)| self.type_of(r).0);
                if let (None, Some(e)) = (&t, els) {
                    t = Some(self.type_of(e).0);
                }
                (t.unwrap_or(varchar(0)), true)
            }
            Expr::Func(f, args) => {
                let ts: Vec<ColumnType> = args.iter().map(|a| self.type_of(a).0).collect();
                let mut t = functions::result_type(*f, &ts);
                // ROUND(x[, d]) / TRUNCATE(x, d) of a DECIMAL have d digits (a constant d).
                if let (Func::Round | Func::Truncate, ColumnType::Decimal { precision, scale }) =
                    (f, t)
                {
                    let d = match args.get(1) {
                        None => Some(0),
                        Some(Expr::Lit(v)) if !v.is_null() => Some(expr::to_i64(v)),
                        _ => None,
                    };
                    if let Some(d) = d {
                        let s = d.clamp(0, 30) as u8;
                        t = ColumnType::Decimal {
                            precision: (precision.saturating_sub(scale) + s + 1).min(65),
                            scale: s,
                        };
                    }
                }
                if matches!(
                    f,
                    Func::Concat | Func::ConcatWs | Func::Repeat | Func::Upper | Func::Lower
                ) {
                    let len: u32 = ts
                        .iter()
                        .map(|t| match t {
                            ColumnType::Char { len, .. } | ColumnType::Varchar { len, .. } => *len,
                            t => display_len(t),
                        })
                        .fold(0u32, |a, b| a.saturating_add(b));
                    t = varchar(len.clamp(1, 16383));
                }
                (t, true)
            }
            Expr::Cast(_, c) => (
                match c {
                    CastType::Signed => bigint(),
                    CastType::Unsigned => ColumnType::Int {
                        bytes: 8,
                        unsigned: true,
                    },
                    CastType::Char(n) => varchar(n.unwrap_or(255)),
                    CastType::Binary => ColumnType::varchar(255, Collation::Binary),
                    CastType::Double => ColumnType::Double,
                    CastType::Decimal(p, s) => ColumnType::Decimal {
                        precision: *p,
                        scale: *s,
                    },
                    CastType::Date => ColumnType::Date,
                    CastType::DateTime(fsp) => ColumnType::DateTime { fsp: *fsp },
                    CastType::Time(fsp) => ColumnType::Time { fsp: *fsp },
                },
                true,
            ),
            Expr::Subquery(i) => {
                let c = &self.subqueries[*i].columns[0];
                (c.ty, true)
            }
            Expr::Outer(d, p) => self
                .outer
                .get(d.wrapping_sub(1))
                .and_then(|o| o.types.get(*p))
                .copied()
                .unwrap_or((bigint(), true)),
        }
    }

    /// Whether `e` has MariaDB's NULL type (MYSQL_TYPE_NULL): a NULL literal, and functions
    /// and subqueries that return only NULL-typed values.
    fn is_null_type(&self, e: &Expr) -> bool {
        match e {
            Expr::Lit(Value::Null) => true,
            Expr::Subquery(i) => self.subqueries[*i].columns[0].null_type,
            Expr::Func(Func::Coalesce | Func::IfNull | Func::Greatest | Func::Least, args) => {
                args.iter().all(|a| self.is_null_type(a))
            }
            Expr::Func(Func::NullIf, args) => args.first().is_some_and(|a| self.is_null_type(a)),
            Expr::Case(_, whens, els, _) => {
                whens.iter().all(|(_, r)| self.is_null_type(r))
                    && els.as_ref().is_none_or(|e| self.is_null_type(e))
            }
            _ => false,
        }
    }

    // ---------------------------------------------------------------- DML

    pub fn bind_insert(mut self, ins: &sq::Insert) -> Result<Insert, SqlError> {
        let sq::TableObject::TableName(name) = &ins.table else {
            return Err(unsupported("INSERT INTO TABLE FUNCTION"));
        };
        let (db, tname) = self.table_name(name)?;
        let t = self.resolve_table(&db, &tname)?;
        let mut columns = Vec::new();
        for c in &ins.columns {
            let parts = name_parts(c);
            let cname = parts.last().cloned().unwrap_or_default();
            let Some(i) = t.column_index(&cname) else {
                return Err(err(
                    code::ER_BAD_FIELD_ERROR,
                    format!("Unknown column '{cname}' in 'INSERT INTO'"),
                ));
            };
            if columns.contains(&i) {
                return Err(err(
                    1110,
                    format!("Column '{}' specified twice", t.columns[i].name),
                ));
            }
            columns.push(i);
        }
        let source = if !ins.assignments.is_empty() {
            // INSERT ... SET a=1, b=2
            let mut row = Vec::new();
            for a in &ins.assignments {
                let sq::AssignmentTarget::ColumnName(n) = &a.target else {
                    return Err(unsupported("tuple assignment"));
                };
                let cname = name_parts(n).pop().unwrap_or_default();
                let Some(i) = t.column_index(&cname) else {
                    return Err(err(
                        code::ER_BAD_FIELD_ERROR,
                        format!("Unknown column '{cname}' in 'field list'"),
                    ));
                };
                columns.push(i);
                row.push(self.bind_insert_value(&a.value)?);
            }
            InsertSource::Values(vec![row])
        } else {
            if columns.is_empty() {
                columns = (0..t.columns.len()).collect();
            }
            let Some(src) = &ins.source else {
                return Err(unsupported("INSERT without VALUES"));
            };
            match src.body.as_ref() {
                sq::SetExpr::Values(v) if src.order_by.is_none() && src.limit_clause.is_none() => {
                    let mut rows = Vec::with_capacity(v.rows.len());
                    for (n, r) in v.rows.iter().enumerate() {
                        let r = &r.content;
                        if r.len() != columns.len() && !(r.is_empty() && ins.columns.is_empty()) {
                            return Err(err(
                                crate::codes::ER_WRONG_VALUE_COUNT_ON_ROW,
                                format!("Column count doesn't match value count at row {}", n + 1),
                            ));
                        }
                        let mut row = Vec::with_capacity(r.len());
                        for e in r {
                            row.push(self.bind_insert_value(e)?);
                        }
                        if row.is_empty() {
                            row = vec![None; columns.len()];
                        }
                        rows.push(row);
                    }
                    InsertSource::Values(rows)
                }
                _ => {
                    let sel = self.child().bind_query(src)?;
                    if sel.columns.len() != columns.len() {
                        return Err(err(
                            crate::codes::ER_WRONG_VALUE_COUNT_ON_ROW,
                            "Column count doesn't match value count at row 1",
                        ));
                    }
                    InsertSource::Select(Box::new(sel))
                }
            }
        };
        let mut on_dup = Vec::new();
        if let Some(on) = &ins.on {
            match on {
                sq::OnInsert::DuplicateKeyUpdate(assigns) => {
                    // Scope: the existing row; VALUES(c) refers to the new row.
                    let mut sources = Vec::new();
                    self.bind_table_factor(
                        &mut sources,
                        &sq::TableFactor::Table {
                            name: name.clone(),
                            alias: None,
                            args: None,
                            with_hints: vec![],
                            version: None,
                            with_ordinality: false,
                            partitions: vec![],
                            json_path: None,
                            sample: None,
                            index_hints: vec![],
                        },
                    )?;
                    self.values_offset = Some(t.columns.len() + t.hidden_pk as usize);
                    for a in assigns {
                        let sq::AssignmentTarget::ColumnName(n) = &a.target else {
                            return Err(unsupported("tuple assignment"));
                        };
                        let cname = name_parts(n).pop().unwrap_or_default();
                        let Some(i) = t.column_index(&cname) else {
                            return Err(err(
                                code::ER_BAD_FIELD_ERROR,
                                format!("Unknown column '{cname}' in 'field list'"),
                            ));
                        };
                        let e = self.bind_expr(&a.value, Clause::Field)?;
                        on_dup.push((i, e));
                    }
                }
                _ => return Err(unsupported("ON CONFLICT")),
            }
        }
        Ok(Insert {
            table: t,
            columns,
            source,
            ignore: ins.ignore,
            replace: ins.replace_into,
            on_dup,
            subqueries: std::mem::take(&mut self.subqueries),
        })
    }

    pub(crate) fn bind_insert_value(&mut self, e: &sq::Expr) -> Result<Option<Expr>, SqlError> {
        if let sq::Expr::Identifier(id) = e {
            if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT") {
                return Ok(None);
            }
        }
        Ok(Some(self.bind_expr(e, Clause::Field)?))
    }

    fn bind_single_table_dml(
        &mut self,
        from: &sq::TableWithJoins,
        selection: Option<&sq::Expr>,
        order_by: &[sq::OrderByExpr],
        limit: Option<&sq::Expr>,
    ) -> Result<Select, SqlError> {
        let mut sources = Vec::new();
        if self
            .bind_table_factor(&mut sources, &from.relation)?
            .is_none()
        {
            // DUAL
            let at = self.sql.to_ascii_lowercase().find("dual").unwrap_or(0);
            return Err(crate::parser::syntax_error(self.sql, at));
        }
        if sources.first().is_none_or(|s| s.table().is_none()) {
            let name = sources.first().map(|s| s.alias.clone()).unwrap_or_default();
            return Err(err(
                crate::codes::ER_NON_UPDATABLE_TABLE,
                format!("The target table {name} of the UPDATE/DELETE is not updatable"),
            ));
        }
        let mut filter = Vec::new();
        if let Some(w) = selection {
            let b = self.bind_expr(w, Clause::Where)?;
            conjuncts(b, &mut filter);
        }
        let mut order = Vec::new();
        for o in order_by {
            order.push((
                self.bind_expr(&o.expr, Clause::Order)?,
                matches!(o.options.sort, Some(sq::OrderBySort::Desc)),
            ));
        }
        let limit = match limit {
            Some(e) => Some(self.const_u64(e)?),
            None => None,
        };
        let src = &sources[0];
        let items: Vec<Expr> = (0..src.width).map(|i| Expr::Col(src.offset + i)).collect();
        Ok(Select {
            sources,
            filter,
            group_by: vec![],
            aggs: vec![],
            having: None,
            columns: vec![],
            items,
            distinct: false,
            order_colls: order.iter().map(|(e, _)| self.coll_of(e).0).collect(),
            group_colls: vec![],
            derivs: vec![],
            order_by: order,
            limit,
            offset: 0,
            lock: LockMode::Exclusive,
            aggregate: false,
            subqueries: vec![],
            width: self.types.len(),
            ordered: false,
            params: Vec::new(),
        })
    }

    pub fn bind_update(mut self, u: &sq::Update) -> Result<Update, SqlError> {
        if u.from.is_some() {
            return Err(unsupported("UPDATE ... FROM"));
        }
        if !u.table.joins.is_empty() {
            return self.bind_multi_update(u);
        }
        let mut select = self.bind_single_table_dml(
            &u.table,
            u.selection.as_ref(),
            &u.order_by,
            u.limit.as_ref(),
        )?;
        let mut sets = Vec::new();
        for a in &u.assignments {
            let pos = self.set_target(&a.target)?;
            let e = self.bind_expr(&a.value, Clause::Set)?;
            sets.push((pos, e));
        }
        select.subqueries = std::mem::take(&mut self.subqueries);
        Ok(Update {
            select,
            sets,
            ignore: false,
            multi: false,
        })
    }

    /// The row position a SET assignment writes.
    fn set_target(&self, target: &sq::AssignmentTarget) -> Result<usize, SqlError> {
        let sq::AssignmentTarget::ColumnName(n) = target else {
            return Err(unsupported("tuple assignment"));
        };
        match self.lookup_column(&name_parts(n), Clause::Set)? {
            Expr::Col(pos) => Ok(pos),
            _ => Err(unsupported("assignment to an outer column")),
        }
    }

    /// `UPDATE t1 JOIN t2 ... SET t1.a = ..., t2.b = ... [WHERE] [ORDER BY] [LIMIT]`.
    fn bind_multi_update(mut self, u: &sq::Update) -> Result<Update, SqlError> {
        let mut sources = self.bind_from(std::slice::from_ref(&u.table))?;
        let mut sets = Vec::new();
        let mut targets = Vec::new();
        for a in &u.assignments {
            let pos = self.set_target(&a.target)?;
            let si = sources
                .iter()
                .position(|s| pos >= s.offset && pos < s.offset + s.ncols)
                .ok_or_else(|| unsupported("this UPDATE target"))?;
            if sources[si].table().is_none() {
                return Err(err(
                    crate::codes::ER_NON_UPDATABLE_TABLE,
                    format!(
                        "The target table {} of the UPDATE is not updatable",
                        sources[si].alias
                    ),
                ));
            }
            if !targets.contains(&si) {
                targets.push(si);
            }
            let e = self.bind_expr(&a.value, Clause::Set)?;
            sets.push((pos, e));
        }
        for (i, s) in sources.iter_mut().enumerate() {
            s.lock = Some(if targets.contains(&i) {
                LockMode::Exclusive
            } else {
                LockMode::Shared
            });
        }
        let select =
            self.bind_dml_select(sources, u.selection.as_ref(), &u.order_by, u.limit.as_ref())?;
        Ok(Update {
            select,
            sets,
            ignore: false,
            multi: true,
        })
    }

    /// The WHERE / ORDER BY / LIMIT of a multi-table UPDATE or DELETE over `sources`.
    fn bind_dml_select(
        &mut self,
        sources: Vec<Source>,
        selection: Option<&sq::Expr>,
        order_by: &[sq::OrderByExpr],
        limit: Option<&sq::Expr>,
    ) -> Result<Select, SqlError> {
        let mut filter = Vec::new();
        if let Some(w) = selection {
            conjuncts(self.bind_expr(w, Clause::Where)?, &mut filter);
        }
        let mut order = Vec::new();
        for o in order_by {
            order.push((
                self.bind_expr(&o.expr, Clause::Order)?,
                matches!(o.options.sort, Some(sq::OrderBySort::Desc)),
            ));
        }
        let limit = match limit {
            Some(e) => Some(self.const_u64(e)?),
            None => None,
        };
        let order_colls = order.iter().map(|(e, _)| self.coll_of(e).0).collect();
        Ok(Select {
            sources,
            filter,
            group_by: vec![],
            aggs: vec![],
            having: None,
            columns: vec![],
            items: vec![],
            distinct: false,
            order_by: order,
            limit,
            offset: 0,
            lock: LockMode::Exclusive,
            aggregate: false,
            subqueries: std::mem::take(&mut self.subqueries),
            width: self.types.len(),
            ordered: false,
            params: Vec::new(),
            order_colls,
            group_colls: vec![],
            derivs: vec![],
        })
    }

    pub fn bind_delete(mut self, d: &sq::Delete) -> Result<Delete, SqlError> {
        let from = match &d.from {
            sq::FromTable::WithFromKeyword(v) | sq::FromTable::WithoutKeyword(v) => v,
        };
        let multi = !d.tables.is_empty()
            || d.using.is_some()
            || from.len() != 1
            || !from[0].joins.is_empty();
        if multi {
            return self.bind_multi_delete(d, from);
        }
        let mut select = self.bind_single_table_dml(
            &from[0],
            d.selection.as_ref(),
            &d.order_by,
            d.limit.as_ref(),
        )?;
        select.subqueries = std::mem::take(&mut self.subqueries);
        Ok(Delete {
            select,
            targets: vec![],
        })
    }

    /// `DELETE t1, t2 FROM <join> ...` / `DELETE FROM t1, t2 USING <join> ...`.
    fn bind_multi_delete(
        mut self,
        d: &sq::Delete,
        from: &[sq::TableWithJoins],
    ) -> Result<Delete, SqlError> {
        if !d.order_by.is_empty() || d.limit.is_some() {
            let at = self.sql.to_ascii_uppercase().rfind(
                if d.limit.is_some() && d.order_by.is_empty() {
                    "LIMIT"
                } else {
                    "ORDER"
                },
            );
            return Err(crate::parser::syntax_error(
                self.sql,
                at.unwrap_or(self.sql.len()),
            ));
        }
        let (names, join): (Vec<Vec<String>>, &[sq::TableWithJoins]) = match &d.using {
            Some(using) => {
                let mut names = Vec::new();
                for t in from {
                    match &t.relation {
                        sq::TableFactor::Table { name, .. } if t.joins.is_empty() => {
                            names.push(name_parts(name))
                        }
                        _ => return Err(crate::parser::syntax_error(self.sql, 0)),
                    }
                }
                (names, using)
            }
            None => (d.tables.iter().map(name_parts).collect(), from),
        };
        let mut sources = self.bind_from(join)?;
        let mut targets = Vec::new();
        for parts in &names {
            let name = parts.last().cloned().unwrap_or_default();
            let db = if parts.len() > 1 {
                Some(parts[0].clone())
            } else {
                None
            };
            let Some(si) = sources
                .iter()
                .position(|s| s.alias == name && db.as_ref().is_none_or(|d| *d == s.db))
            else {
                return Err(err(
                    code::ER_UNKNOWN_TABLE,
                    format!("Unknown table '{name}' in MULTI DELETE"),
                ));
            };
            if sources[si].table().is_none() {
                return Err(err(
                    crate::codes::ER_NON_UPDATABLE_TABLE,
                    format!("The target table {name} of the DELETE is not updatable"),
                ));
            }
            if !targets.contains(&si) {
                targets.push(si);
            }
        }
        for (i, s) in sources.iter_mut().enumerate() {
            s.lock = Some(if targets.contains(&i) {
                LockMode::Exclusive
            } else {
                LockMode::Shared
            });
        }
        let select = self.bind_dml_select(sources, d.selection.as_ref(), &[], None)?;
        // A subquery may not read a table rows are deleted from.
        let mut read = Vec::new();
        for q in &select.subqueries {
            tables_read(q, &mut read);
        }
        for &si in &targets {
            let src = &select.sources[si];
            if let Some(t) = src.table() {
                if read.iter().any(|(d, n)| *d == t.db && *n == t.name) {
                    return Err(err(
                        crate::codes::ER_UPDATE_TABLE_USED,
                        format!(
                            "Table '{}' is specified twice, both as a target for 'DELETE' and as a separate source for data",
                            src.alias
                        ),
                    ));
                }
            }
        }
        Ok(Delete { select, targets })
    }

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

pub fn parse_number(n: &str) -> Value {
    if n.contains(['e', 'E']) {
        return Value::Double(n.parse().unwrap_or(0.0));
    }
    if n.contains('.') {
        return match n.parse::<Decimal>() {
            Ok(d) => Value::Decimal(d),
            Err(_) => Value::Double(n.parse().unwrap_or(0.0)),
        };
    }
    if let Ok(i) = n.parse::<i64>() {
        return Value::Int(i);
    }
    if let Ok(u) = n.parse::<u64>() {
        return Value::UInt(u);
    }
    match n.parse::<Decimal>() {
        Ok(d) => Value::Decimal(d),
        Err(_) => Value::Double(n.parse().unwrap_or(0.0)),
    }
}

/// The type of `CAST(what AS t)`.
fn cast_type(t: &sq::DataType, what: &sq::Expr) -> Result<CastType, SqlError> {
    let fsp_of = |p: Option<u64>| fsp_of(p, what);
    use sq::DataType as D;
    Ok(match t {
        D::Signed | D::SignedInteger | D::Int(_) | D::Integer(_) | D::BigInt(_) => CastType::Signed,
        D::Unsigned | D::UnsignedInteger | D::IntUnsigned(_) | D::BigIntUnsigned(_) => {
            CastType::Unsigned
        }
        D::Char(len) | D::Varchar(len) | D::Nvarchar(len) | D::Character(len) => {
            CastType::Char(match len {
                Some(sq::CharacterLength::IntegerLength { length, .. }) => {
                    Some((*length).min(u32::MAX as u64) as u32)
                }
                _ => None,
            })
        }
        D::Text => CastType::Char(None),
        D::Binary(_) | D::Varbinary(_) | D::Blob(_) => CastType::Binary,
        D::Double(_) | D::DoublePrecision | D::Float(_) | D::Real => CastType::Double,
        D::Decimal(info) | D::Numeric(info) | D::Dec(info) => {
            let (p, s) = exact_info(info, 10, 0);
            CastType::Decimal(p, s)
        }
        D::Date => CastType::Date,
        D::Datetime(p) | D::Timestamp(p, _) => CastType::DateTime(fsp_of(*p)?),
        D::Time(p, _) => CastType::Time(fsp_of(*p)?),
        other => return Err(unsupported(&format!("CAST AS {other}"))),
    })
}

/// A fractional-seconds precision, 0-6 (MariaDB: error 1426 above 6, naming the value).
fn fsp_of(p: Option<u64>, what: &sq::Expr) -> Result<u8, SqlError> {
    match p {
        None => Ok(0),
        Some(p) if p <= 6 => Ok(p as u8),
        Some(_) => {
            let name = match what {
                sq::Expr::Value(v) => match &v.value {
                    sq::Value::SingleQuotedString(t) | sq::Value::DoubleQuotedString(t) => {
                        t.clone()
                    }
                    other => other.to_string(),
                },
                other => other.to_string(),
            };
            Err(err(
                code::ER_TOO_BIG_PRECISION,
                format!("Too big precision specified for '{name}'. Maximum is 6"),
            ))
        }
    }
}

fn exact_info(info: &sq::ExactNumberInfo, dp: u8, ds: u8) -> (u8, u8) {
    match info {
        sq::ExactNumberInfo::None => (dp, ds),
        sq::ExactNumberInfo::Precision(p) => (*p as u8, 0),
        sq::ExactNumberInfo::PrecisionAndScale(p, s) => (*p as u8, (*s).max(0) as u8),
    }
}

// ---------------------------------------------------------------- DDL

fn char_len(l: &Option<sq::CharacterLength>, default: u32) -> u32 {
    match l {
        Some(sq::CharacterLength::IntegerLength { length, .. }) => *length as u32,
        Some(sq::CharacterLength::Max) => 65535,
        None => default,
    }
}

/// Moves a `BINARY` cast onto the leftmost operand of `e` (see the binder's `E::Cast`
/// arm); false when `e` has no operand to descend into.
fn binary_onto_leftmost(e: &mut sq::Expr) -> bool {
    use sq::Expr as E;
    let inner = match e {
        E::BinaryOp { left, .. } => left,
        E::Like { expr, .. }
        | E::ILike { expr, .. }
        | E::RLike { expr, .. }
        | E::InList { expr, .. }
        | E::InSubquery { expr, .. }
        | E::Between { expr, .. }
        | E::IsNull(expr)
        | E::IsNotNull(expr) => expr,
        _ => return false,
    };
    if !binary_onto_leftmost(inner) {
        let leaf = (**inner).clone();
        **inner = E::Cast {
            kind: sq::CastKind::Cast,
            expr: Box::new(leaf),
            data_type: sq::DataType::Binary(None),
            format: None,
        };
    }
    true
}

/// Maps a declared SQL type to a column type.
pub fn column_type(t: &sq::DataType, name: &str) -> Result<ColumnType, SqlError> {
    use sq::DataType as D;
    let int = |bytes, unsigned| ColumnType::Int { bytes, unsigned };
    let ty = match t {
        D::TinyInt(_) | D::Bool | D::Boolean => int(1, false),
        D::TinyIntUnsigned(_) | D::UTinyInt => int(1, true),
        D::SmallInt(_) | D::Int2(_) => int(2, false),
        D::SmallIntUnsigned(_) | D::Int2Unsigned(_) | D::USmallInt => int(2, true),
        D::MediumInt(_) => int(3, false),
        D::MediumIntUnsigned(_) => int(3, true),
        D::Int(_) | D::Integer(_) | D::Int4(_) => int(4, false),
        D::IntUnsigned(_) | D::IntegerUnsigned(_) | D::Int4Unsigned(_) => int(4, true),
        D::BigInt(_) | D::Int8(_) => int(8, false),
        D::BigIntUnsigned(_) | D::Int8Unsigned(_) | D::UBigInt => int(8, true),
        D::Float(info) => match info {
            sq::ExactNumberInfo::Precision(p) if *p > 24 => ColumnType::Double,
            _ => ColumnType::Float,
        },
        D::FloatUnsigned(_) => ColumnType::Float,
        D::Real | D::Double(_) | D::DoublePrecision | D::DoubleUnsigned(_) | D::Float8 => {
            ColumnType::Double
        }
        D::Decimal(info)
        | D::Numeric(info)
        | D::Dec(info)
        | D::DecimalUnsigned(info)
        | D::DecUnsigned(info) => {
            let (p, s) = exact_info(info, 10, 0);
            if p > Decimal::MAX_PRECISION {
                return Err(err(
                    1426,
                    format!(
                        "Too big precision {p} specified for '{name}'. Maximum is {}",
                        Decimal::MAX_PRECISION
                    ),
                ));
            }
            if s > p || s > Decimal::MAX_SCALE {
                return Err(err(
                    1427,
                    format!("For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{name}')"),
                ));
            }
            ColumnType::Decimal {
                precision: p.max(1),
                scale: s,
            }
        }
        D::Char(l) | D::Character(l) => ColumnType::char(char_len(l, 1), Collation::DEFAULT),
        D::Varchar(l) | D::CharacterVarying(l) | D::CharVarying(l) | D::Nvarchar(l) => {
            if l.is_none() {
                return Err(crate::parser::syntax_error("", 0));
            }
            ColumnType::varchar(char_len(l, 0), Collation::DEFAULT)
        }
        D::Binary(l) => ColumnType::char(l.unwrap_or(1) as u32, Collation::Binary),
        D::Varbinary(l) => ColumnType::varchar(
            match l {
                Some(sq::BinaryLength::IntegerLength { length }) => *length as u32,
                _ => 65535,
            },
            Collation::Binary,
        ),
        D::TinyText => ColumnType::text(1, Collation::DEFAULT),
        D::Text => ColumnType::text(2, Collation::DEFAULT),
        D::MediumText => ColumnType::text(3, Collation::DEFAULT),
        D::LongText => ColumnType::text(4, Collation::DEFAULT),
        D::TinyBlob => ColumnType::text(1, Collation::Binary),
        D::Blob(_) => ColumnType::text(2, Collation::Binary),
        D::MediumBlob => ColumnType::text(3, Collation::Binary),
        D::LongBlob => ColumnType::text(4, Collation::Binary),
        D::Date => ColumnType::Date,
        D::Datetime(p) => ColumnType::DateTime {
            fsp: p.unwrap_or(0).min(6) as u8,
        },
        D::Timestamp(p, _) => ColumnType::Timestamp {
            fsp: p.unwrap_or(0).min(6) as u8,
        },
        D::Time(p, _) => ColumnType::Time {
            fsp: p.unwrap_or(0).min(6) as u8,
        },
        other => return Err(unsupported(&format!("data type {other}"))),
    };
    if let ColumnType::Varchar { len, binary, .. } | ColumnType::Char { len, binary, .. } = ty {
        let max = if matches!(ty, ColumnType::Char { .. }) {
            255
        } else if binary {
            65532
        } else {
            16383
        };
        if len > max {
            return Err(err(
                1074,
                format!(
                    "Column length too big for column '{name}' (max = {max}); use BLOB or TEXT instead"
                ),
            ));
        }
    }
    Ok(ty)
}

fn default_value(
    e: &sq::Expr,
    col: &str,
    ty: &ColumnType,
) -> Result<(Option<Value>, bool), SqlError> {
    let invalid = || {
        err(
            code::ER_INVALID_DEFAULT,
            format!("Invalid default value for '{col}'"),
        )
    };
    // CURRENT_TIMESTAMP / NOW()
    if let sq::Expr::Function(f) = e {
        let n = name_parts(&f.name).join(".").to_lowercase();
        if matches!(
            n.as_str(),
            "current_timestamp" | "now" | "localtimestamp" | "localtime"
        ) {
            if !matches!(
                ty,
                ColumnType::DateTime { .. } | ColumnType::Timestamp { .. }
            ) {
                return Err(invalid());
            }
            return Ok((None, true));
        }
    }
    let v = match e {
        sq::Expr::Value(v) => match &v.value {
            sq::Value::Number(n, _) => parse_number(n),
            sq::Value::SingleQuotedString(s) | sq::Value::DoubleQuotedString(s) => {
                Value::Bytes(crate::literal_bytes(s))
            }
            sq::Value::Null => Value::Null,
            sq::Value::Boolean(b) => Value::Int(*b as i64),
            sq::Value::HexStringLiteral(_) => return Err(unsupported("hex DEFAULT")),
            _ => return Err(invalid()),
        },
        sq::Expr::UnaryOp {
            op: sq::UnaryOperator::Minus,
            expr,
        } => match default_value(expr, col, &ColumnType::Double)? {
            (Some(v), _) => expr::binary(BinOp::Sub, Value::Int(0), v)?,
            _ => return Err(invalid()),
        },
        sq::Expr::Nested(inner) => return default_value(inner, col, ty),
        _ => return Err(unsupported("expression DEFAULT values")),
    };
    if v.is_null() {
        return Ok((Some(Value::Null), false));
    }
    match expr::convert_for_column(&v, ty) {
        Ok(c) => Ok((Some(c), false)),
        Err(_) => Err(invalid()),
    }
}

/// A column definition bound to the engine's form, plus the keys declared inline.
struct BoundColumn {
    def: ColumnDef,
    primary: bool,
    unique: bool,
}

/// The collation named by `CHARACTER SET cs` and/or `COLLATE name` (None when neither is
/// given). `latin1`, `utf8mb3`/`utf8` and `ascii` are stored as utf8mb4: their `_ci`
/// collations map to utf8mb4_general_ci and their `_bin`/`_cs` ones to utf8mb4_bin (see
/// `onelog_types::collation`).
pub fn charset_collation(
    charset: Option<&str>,
    collation: Option<&str>,
) -> Result<Option<Collation>, SqlError> {
    let cs = match charset {
        Some(cs) => Some(Collation::charset_default(cs).ok_or_else(|| {
            err(
                crate::codes::ER_UNKNOWN_CHARACTER_SET,
                format!("Unknown character set: '{cs}'"),
            )
        })?),
        None => None,
    };
    let Some(name) = collation else {
        return Ok(cs);
    };
    let c = Collation::from_name(name).ok_or_else(|| {
        err(
            crate::codes::ER_UNKNOWN_COLLATION,
            format!("Unknown collation: '{name}'"),
        )
    })?;
    if let Some(cs_name) = charset {
        let of = Collation::charset_of_name(name);
        let same = of.eq_ignore_ascii_case(cs_name)
            || (matches!(of.as_str(), "utf8" | "utf8mb3")
                && matches!(cs_name.to_ascii_lowercase().as_str(), "utf8" | "utf8mb3"));
        if !same {
            return Err(err(
                crate::codes::ER_COLLATION_CHARSET_MISMATCH,
                format!(
                    "COLLATION '{name}' is not valid for CHARACTER SET '{}'",
                    cs_name.to_lowercase()
                ),
            ));
        }
    }
    Ok(Some(c))
}

/// Binds a column definition; text columns without CHARACTER SET / COLLATE get
/// `table_coll`, the table's default collation.
fn bind_column(c: &sq::ColumnDef, table_coll: Collation) -> Result<BoundColumn, SqlError> {
    let name = c.name.value.clone();
    if name.is_empty() || name.len() > 64 {
        return Err(err(
            code::ER_WRONG_COLUMN_NAME,
            format!("Incorrect column name '{name}'"),
        ));
    }
    let mut ty = column_type(&c.data_type, &name)?;
    let mut charset = None;
    let mut collation = None;
    for o in &c.options {
        match &o.option {
            sq::ColumnOption::CharacterSet(n) => charset = Some(name_parts(n).join(".")),
            sq::ColumnOption::Collation(n) => collation = Some(name_parts(n).join(".")),
            _ => {}
        }
    }
    if ty.is_string() && !ty.is_binary() {
        let coll = charset_collation(charset.as_deref(), collation.as_deref())?;
        ty = ty.with_collation(coll.unwrap_or(table_coll));
    }
    let mut def = ColumnDef {
        name: name.clone(),
        ty,
        nullable: true,
        default: None,
        auto_increment: false,
        default_now: false,
        on_update_now: false,
        comment: String::new(),
    };
    let mut primary = false;
    let mut unique = false;
    let mut explicit_null = false;
    let mut default_null = false;
    for o in &c.options {
        match &o.option {
            sq::ColumnOption::Null => {
                def.nullable = true;
                explicit_null = true;
            }
            sq::ColumnOption::NotNull => def.nullable = false,
            sq::ColumnOption::Default(e) => {
                let (v, now) = default_value(e, &name, &ty)?;
                def.default_now = now;
                if let Some(Value::Null) = v {
                    default_null = true;
                    def.default = None;
                } else {
                    def.default = v;
                }
            }
            sq::ColumnOption::PrimaryKey(_) => primary = true,
            sq::ColumnOption::Unique(_) => unique = true,
            sq::ColumnOption::DialectSpecific(toks) => {
                let s: String = toks
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" ");
                if s.eq_ignore_ascii_case("AUTO_INCREMENT") {
                    def.auto_increment = true;
                } else {
                    return Err(unsupported(&format!("column option {s}")));
                }
            }
            sq::ColumnOption::Comment(s) => def.comment = s.clone(),
            sq::ColumnOption::CharacterSet(_) | sq::ColumnOption::Collation(_) => {}
            sq::ColumnOption::OnUpdate(e) => {
                let (_, now) = default_value(e, &name, &ty)?;
                if !now {
                    return Err(err(
                        crate::codes::ER_INVALID_ON_UPDATE,
                        format!("Invalid ON UPDATE clause for '{name}' column"),
                    ));
                }
                def.on_update_now = true;
            }
            other => return Err(unsupported(&format!("column option {other}"))),
        }
    }
    if primary {
        def.nullable = false;
    }
    if default_null && !def.nullable {
        return Err(err(
            code::ER_INVALID_DEFAULT,
            format!("Invalid default value for '{name}'"),
        ));
    }
    let _ = explicit_null;
    if def.auto_increment
        && !matches!(
            ty,
            ColumnType::Int { .. } | ColumnType::Float | ColumnType::Double
        )
    {
        return Err(err(
            code::ER_WRONG_FIELD_SPEC,
            format!("Incorrect column specifier for column '{name}'"),
        ));
    }
    Ok(BoundColumn {
        def,
        primary,
        unique,
    })
}

/// Index columns: positions and prefix lengths.
fn index_columns(
    cols: &[ColumnDef],
    ics: &[sq::IndexColumn],
) -> Result<(Vec<usize>, Vec<Option<u32>>), SqlError> {
    let mut pos = Vec::new();
    let mut prefix = Vec::new();
    for ic in ics {
        let (name, plen) = match &ic.column.expr {
            sq::Expr::Identifier(i) => (i.value.clone(), None),
            sq::Expr::Function(f) => {
                // `c(10)` parses as a function call.
                let n = name_parts(&f.name).pop().unwrap_or_default();
                let len = match &f.args {
                    sq::FunctionArguments::List(l) if l.args.len() == 1 => match &l.args[0] {
                        sq::FunctionArg::Unnamed(sq::FunctionArgExpr::Expr(sq::Expr::Value(v))) => {
                            match &v.value {
                                sq::Value::Number(n, _) => n.parse::<u32>().ok(),
                                _ => None,
                            }
                        }
                        _ => None,
                    },
                    _ => None,
                };
                (n, Some(len.ok_or_else(|| unsupported("functional index"))?))
            }
            other => return Err(unsupported(&format!("index on {other}"))),
        };
        let Some(i) = cols.iter().position(|c| ident_eq(&c.name, &name)) else {
            return Err(err(
                code::ER_KEY_COLUMN_DOES_NOT_EXIST,
                format!("Key column '{name}' doesn't exist in table"),
            ));
        };
        // TEXT/BLOB keys without a length get a 768-character prefix (MariaDB 10.11
        // accepts them the same way for non-unique keys).
        let plen = if plen.is_none() && matches!(cols[i].ty, ColumnType::Blob { .. }) {
            Some(768)
        } else {
            plen
        };
        pos.push(i);
        prefix.push(plen);
    }
    Ok((pos, prefix))
}

fn unique_index_name(existing: &[IndexDef], base: &str) -> String {
    if !existing.iter().any(|i| ident_eq(&i.name, base)) {
        return base.to_string();
    }
    for n in 2.. {
        let cand = format!("{base}_{n}");
        if !existing.iter().any(|i| ident_eq(&i.name, &cand)) {
            return cand;
        }
    }
    unreachable!()
}

fn make_index(
    cols: &[ColumnDef],
    existing: &[IndexDef],
    name: Option<String>,
    ics: &[sq::IndexColumn],
    unique: bool,
    primary: bool,
) -> Result<IndexDef, SqlError> {
    let (columns, prefix_lens) = index_columns(cols, ics)?;
    let name = if primary {
        "PRIMARY".to_string()
    } else {
        match name {
            Some(n) => {
                if ident_eq(&n, "PRIMARY") {
                    return Err(err(1280, format!("Incorrect index name '{n}'")));
                }
                n
            }
            None => unique_index_name(existing, &cols[columns[0]].name),
        }
    };
    Ok(IndexDef {
        id: 0,
        name,
        columns,
        prefix_lens,
        unique: unique || primary,
        primary,
    })
}

/// Binds an index from a table constraint (PRIMARY KEY, UNIQUE, KEY/INDEX). Foreign keys
/// and CHECK constraints yield None (accepted and not enforced).
fn constraint_index(
    cols: &[ColumnDef],
    existing: &[IndexDef],
    c: &sq::TableConstraint,
) -> Result<Option<IndexDef>, SqlError> {
    Ok(Some(match c {
        sq::TableConstraint::PrimaryKey(pk) => {
            make_index(cols, existing, None, &pk.columns, true, true)?
        }
        sq::TableConstraint::Unique(u) => make_index(
            cols,
            existing,
            u.index_name
                .as_ref()
                .or(u.name.as_ref())
                .map(|i| i.value.clone()),
            &u.columns,
            true,
            false,
        )?,
        sq::TableConstraint::Index(i) => make_index(
            cols,
            existing,
            i.name.as_ref().map(|n| n.value.clone()),
            &i.columns,
            false,
            false,
        )?,
        sq::TableConstraint::ForeignKey(_) | sq::TableConstraint::Check(_) => return Ok(None),
        other => return Err(unsupported(&format!("constraint {other}"))),
    }))
}

/// ENGINE, AUTO_INCREMENT, COMMENT and the default collation (DEFAULT CHARSET / COLLATE)
/// of a table's options.
struct TableOptions {
    engine: String,
    auto_increment: Option<u64>,
    comment: String,
    collation: Collation,
}

fn table_options(opts: &sq::CreateTableOptions) -> Result<TableOptions, SqlError> {
    let list: &[sq::SqlOption] = match opts {
        sq::CreateTableOptions::None => &[],
        sq::CreateTableOptions::With(v)
        | sq::CreateTableOptions::Options(v)
        | sq::CreateTableOptions::Plain(v)
        | sq::CreateTableOptions::TableProperties(v) => v,
    };
    let mut engine = "InnoDB".to_string();
    let mut autoinc = None;
    let mut comment = String::new();
    let mut charset = None;
    let mut collation = None;
    for o in list {
        match o {
            sq::SqlOption::KeyValue { key, value } => {
                let k = key.value.to_uppercase();
                let v = value.to_string().trim_matches(['\'', '"']).to_string();
                match k.as_str() {
                    "AUTO_INCREMENT" => autoinc = v.parse().ok(),
                    "COMMENT" => comment = v,
                    "DEFAULT CHARSET" | "CHARSET" | "DEFAULT CHARACTER SET" | "CHARACTER SET" => {
                        charset = Some(v)
                    }
                    "DEFAULT COLLATE" | "COLLATE" => collation = Some(v),
                    _ => {}
                }
            }
            sq::SqlOption::NamedParenthesizedList(l) => {
                if l.key.value.eq_ignore_ascii_case("ENGINE") {
                    if let Some(n) = &l.name {
                        engine = n.value.clone();
                    }
                }
            }
            other => {
                let s = other.to_string();
                if let Some(rest) = s.strip_prefix("ENGINE") {
                    engine = rest.trim_start_matches([' ', '=']).to_string();
                }
            }
        }
    }
    let collation =
        charset_collation(charset.as_deref(), collation.as_deref())?.unwrap_or(Collation::DEFAULT);
    Ok(TableOptions {
        engine,
        auto_increment: autoinc,
        comment,
        collation,
    })
}

/// Binds CREATE TABLE into the engine's table definition.
pub fn bind_create_table(
    b: &Binder,
    ct: &sq::CreateTable,
) -> Result<(Ddl, Vec<SqlError>), SqlError> {
    if ct.temporary {
        return Err(unsupported("CREATE TEMPORARY TABLE"));
    }
    if ct.query.is_some() {
        return Err(unsupported("CREATE TABLE ... SELECT"));
    }
    let (db, name) = b.table_name(&ct.name)?;
    if name.is_empty() || name.len() > 64 {
        return Err(err(
            code::ER_WRONG_TABLE_NAME,
            format!("Incorrect table name '{name}'"),
        ));
    }
    if let Some(like) = &ct.like {
        let src_name = match like {
            sq::CreateTableLikeKind::Parenthesized(l) | sq::CreateTableLikeKind::Plain(l) => {
                &l.name
            }
        };
        let (sdb, sname) = b.table_name(src_name)?;
        let src = b.resolve_table(&sdb, &sname)?;
        let mut def = (*src).clone();
        def.id = 0;
        def.db = db;
        def.name = name;
        if def.hidden_pk {
            def.indexes.remove(0);
            def.hidden_pk = false;
        }
        for i in &mut def.indexes {
            i.id = 0;
        }
        return Ok((
            Ddl::CreateTable {
                def,
                if_not_exists: ct.if_not_exists,
            },
            vec![],
        ));
    }
    if ct.columns.is_empty() {
        return Err(err(
            code::ER_TABLE_MUST_HAVE_COLUMNS,
            "A table must have at least 1 column",
        ));
    }
    let opts = table_options(&ct.table_options)?;
    let mut columns = Vec::new();
    let mut inline_pk = Vec::new();
    let mut inline_unique = Vec::new();
    for c in &ct.columns {
        let bc = bind_column(c, opts.collation)?;
        if columns
            .iter()
            .any(|x: &ColumnDef| ident_eq(&x.name, &bc.def.name))
        {
            return Err(err(
                code::ER_DUP_FIELDNAME,
                format!("Duplicate column name '{}'", bc.def.name),
            ));
        }
        if bc.primary {
            inline_pk.push(columns.len());
        }
        if bc.unique {
            inline_unique.push(columns.len());
        }
        columns.push(bc.def);
    }
    let mut warnings = Vec::new();
    let mut indexes: Vec<IndexDef> = Vec::new();
    if inline_pk.len() > 1 {
        return Err(err(
            code::ER_MULTIPLE_PRI_KEY,
            "Multiple primary key defined",
        ));
    }
    if let Some(&c) = inline_pk.first() {
        indexes.push(IndexDef {
            id: 0,
            name: "PRIMARY".into(),
            columns: vec![c],
            prefix_lens: vec![None],
            unique: true,
            primary: true,
        });
    }
    for c in &ct.constraints {
        match constraint_index(&columns, &indexes, c)? {
            Some(idx) => {
                if idx.primary {
                    if indexes.iter().any(|i| i.primary) {
                        return Err(err(code::ER_MULTIPLE_PRI_KEY, "Multiple primary key defined"));
                    }
                    for &col in &idx.columns {
                        columns[col].nullable = false;
                        if columns[col].default.is_none() {
                            // keep
                        }
                    }
                    indexes.insert(0, idx);
                } else {
                    if indexes.iter().any(|i| ident_eq(&i.name, &idx.name)) {
                        return Err(err(
                            code::ER_DUP_KEYNAME,
                            format!("Duplicate key name '{}'", idx.name),
                        ));
                    }
                    indexes.push(idx);
                }
            }
            None => warnings.push(crate::sql_err(
                code::ER_NOT_SUPPORTED_YET,
                "onelog does not enforce FOREIGN KEY and CHECK constraints; the constraint was ignored",
            )),
        }
    }
    for &c in &inline_unique {
        let name = unique_index_name(&indexes, &columns[c].name);
        indexes.push(IndexDef {
            id: 0,
            name,
            columns: vec![c],
            prefix_lens: vec![None],
            unique: true,
            primary: false,
        });
    }
    check_auto_key(&columns, &indexes)?;
    let def = TableDef {
        id: 0,
        db,
        name,
        columns,
        indexes,
        hidden_pk: false,
        comment: opts.comment,
        engine_name: opts.engine,
        auto_increment_start: opts.auto_increment,
        collation: opts.collation,
    };
    Ok((
        Ddl::CreateTable {
            def,
            if_not_exists: ct.if_not_exists,
        },
        warnings,
    ))
}

/// Binds ALTER TABLE operations (and CREATE/DROP INDEX) against the table's current
/// definition.
pub fn bind_alter(t: &TableDef, ops: &[sq::AlterTableOperation]) -> Result<Vec<AlterOp>, SqlError> {
    let mut cols: Vec<ColumnDef> = t.columns.clone();
    let mut idx: Vec<IndexDef> = t.indexes.clone();
    if t.hidden_pk {
        idx.remove(0);
    }
    let mut out = Vec::new();
    for op in ops {
        use sq::AlterTableOperation as A;
        match op {
            A::AddConstraint { constraint, .. } => {
                let Some(i) = constraint_index(&cols, &idx, constraint)? else {
                    continue;
                };
                if i.primary && idx.iter().any(|x| x.primary) {
                    return Err(err(
                        code::ER_MULTIPLE_PRI_KEY,
                        "Multiple primary key defined",
                    ));
                }
                if idx.iter().any(|x| ident_eq(&x.name, &i.name)) {
                    return Err(err(
                        code::ER_DUP_KEYNAME,
                        format!("Duplicate key name '{}'", i.name),
                    ));
                }
                idx.push(i.clone());
                out.push(AlterOp::AddIndex(i));
            }
            A::AddColumn {
                column_def,
                column_position,
                if_not_exists,
                ..
            } => {
                let bc = bind_column(column_def, t.collation)?;
                if cols.iter().any(|c| ident_eq(&c.name, &bc.def.name)) {
                    if *if_not_exists {
                        continue;
                    }
                    return Err(err(
                        code::ER_DUP_FIELDNAME,
                        format!("Duplicate column name '{}'", bc.def.name),
                    ));
                }
                // Existing rows get the DEFAULT, else NULL, else (NOT NULL without DEFAULT)
                // the type's zero value, as in MariaDB; an AUTO_INCREMENT column numbers
                // them 1, 2, ... in primary key order.
                let pos = match column_position {
                    None => None,
                    Some(sq::MySQLColumnPosition::First) => Some(0),
                    Some(sq::MySQLColumnPosition::After(a)) => {
                        match cols.iter().position(|c| ident_eq(&c.name, &a.value)) {
                            Some(p) => Some(p + 1),
                            None => {
                                return Err(err(
                                    code::ER_BAD_FIELD_ERROR,
                                    format!("Unknown column '{}' in '{}'", a.value, t.name),
                                ))
                            }
                        }
                    }
                };
                let p = pos.unwrap_or(cols.len());
                cols.insert(p, bc.def.clone());
                for i in &mut idx {
                    for c in &mut i.columns {
                        if *c >= p {
                            *c += 1;
                        }
                    }
                }
                out.push(AlterOp::AddColumn {
                    def: bc.def.clone(),
                    position: pos,
                });
                column_keys(&bc, p, &mut idx, &mut out)?;
            }
            A::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for n in column_names {
                    let Some(p) = cols.iter().position(|c| ident_eq(&c.name, &n.value)) else {
                        if *if_exists {
                            continue;
                        }
                        return Err(err(
                            code::ER_CANT_DROP_FIELD_OR_KEY,
                            format!("Can't DROP COLUMN `{}`; check that it exists", n.value),
                        ));
                    };
                    cols.remove(p);
                    for i in &mut idx {
                        i.columns.retain(|&c| c != p);
                        for c in &mut i.columns {
                            if *c > p {
                                *c -= 1;
                            }
                        }
                    }
                    idx.retain(|i| !i.columns.is_empty());
                    out.push(AlterOp::DropColumn(n.value.clone()));
                }
            }
            A::DropIndex { name } => {
                if !idx.iter().any(|i| ident_eq(&i.name, &name.value)) {
                    return Err(err(
                        code::ER_CANT_DROP_FIELD_OR_KEY,
                        format!("Can't DROP INDEX `{}`; check that it exists", name.value),
                    ));
                }
                idx.retain(|i| !ident_eq(&i.name, &name.value));
                out.push(AlterOp::DropIndex(name.value.clone()));
            }
            A::DropPrimaryKey { .. } => {
                if !idx.iter().any(|i| i.primary) {
                    return Err(err(
                        code::ER_CANT_DROP_FIELD_OR_KEY,
                        "Can't DROP INDEX `PRIMARY`; check that it exists",
                    ));
                }
                idx.retain(|i| !i.primary);
                out.push(AlterOp::DropIndex("PRIMARY".into()));
            }
            A::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => change_column(
                t,
                &mut cols,
                &mut idx,
                &mut out,
                &col_name.value,
                &sq::ColumnDef {
                    name: col_name.clone(),
                    data_type: data_type.clone(),
                    options: column_options(options),
                },
                column_position.as_ref(),
            )?,
            A::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => change_column(
                t,
                &mut cols,
                &mut idx,
                &mut out,
                &old_name.value,
                &sq::ColumnDef {
                    name: new_name.clone(),
                    data_type: data_type.clone(),
                    options: column_options(options),
                },
                column_position.as_ref(),
            )?,
            A::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let pos = find_column(t, &cols, &old_column_name.value)?;
                let to = &new_column_name.value;
                check_new_column_name(&cols, pos, to)?;
                let mut def = cols[pos].clone();
                def.name = to.clone();
                cols[pos] = def.clone();
                out.push(AlterOp::ChangeColumn {
                    name: old_column_name.value.clone(),
                    def,
                    position: None,
                });
            }
            A::AlterColumn { column_name, op } => {
                let pos = find_column(t, &cols, &column_name.value)?;
                let mut def = cols[pos].clone();
                match op {
                    sq::AlterColumnOperation::SetDefault { value } => {
                        let (v, now) = default_value(value, &def.name, &def.ty)?;
                        match v {
                            Some(Value::Null) if !def.nullable => {
                                return Err(err(
                                    code::ER_INVALID_DEFAULT,
                                    format!("Invalid default value for '{}'", def.name),
                                ))
                            }
                            Some(Value::Null) => def.default = None,
                            v => def.default = v,
                        }
                        def.default_now = now;
                    }
                    sq::AlterColumnOperation::DropDefault => {
                        def.default = None;
                        def.default_now = false;
                    }
                    other => return Err(unsupported(&format!("ALTER COLUMN ... {other}"))),
                }
                cols[pos] = def.clone();
                out.push(AlterOp::ChangeColumn {
                    name: column_name.value.clone(),
                    def,
                    position: None,
                });
            }
            // onelog picks its own algorithm and always holds an exclusive metadata lock.
            A::Algorithm { .. } | A::Lock { .. } => {}
            other => return Err(unsupported(&format!("ALTER TABLE {other}"))),
        }
    }
    check_auto_key(&cols, &idx)?;
    Ok(out)
}

/// AUTO_INCREMENT: one column at most, and it must lead a key (error 1075).
fn check_auto_key(columns: &[ColumnDef], indexes: &[IndexDef]) -> Result<(), SqlError> {
    let autos: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i].auto_increment)
        .collect();
    if autos.len() > 1
        || autos
            .first()
            .is_some_and(|&a| !indexes.iter().any(|i| i.columns.first() == Some(&a)))
    {
        return Err(err(
            code::ER_WRONG_AUTO_KEY,
            "Incorrect table definition; there can be only one auto column and it must be defined as a key",
        ));
    }
    Ok(())
}

/// Column options of MODIFY / CHANGE as CREATE TABLE has them.
fn column_options(options: &[sq::ColumnOption]) -> Vec<sq::ColumnOptionDef> {
    options
        .iter()
        .map(|o| sq::ColumnOptionDef {
            name: None,
            option: o.clone(),
        })
        .collect()
}

/// The position of column `name` among `cols` (1054 if there is none).
fn find_column(t: &TableDef, cols: &[ColumnDef], name: &str) -> Result<usize, SqlError> {
    cols.iter()
        .position(|c| ident_eq(&c.name, name))
        .ok_or_else(|| {
            err(
                code::ER_BAD_FIELD_ERROR,
                format!("Unknown column '{name}' in '{}'", t.name),
            )
        })
}

/// 1060 if renaming the column at `pos` to `name` would duplicate another column.
fn check_new_column_name(cols: &[ColumnDef], pos: usize, name: &str) -> Result<(), SqlError> {
    if name.is_empty() || name.len() > 64 {
        return Err(err(
            code::ER_WRONG_COLUMN_NAME,
            format!("Incorrect column name '{name}'"),
        ));
    }
    if cols
        .iter()
        .enumerate()
        .any(|(i, c)| i != pos && ident_eq(&c.name, name))
    {
        return Err(err(
            code::ER_DUP_FIELDNAME,
            format!("Duplicate column name '{name}'"),
        ));
    }
    Ok(())
}

/// MODIFY / CHANGE: replaces column `old` of the simulated table (`cols`, `idx`) by `new`,
/// moved to `position`, and records the operations (plus the keys `new` declares).
#[allow(clippy::too_many_arguments)]
fn change_column(
    t: &TableDef,
    cols: &mut Vec<ColumnDef>,
    idx: &mut Vec<IndexDef>,
    out: &mut Vec<AlterOp>,
    old: &str,
    new: &sq::ColumnDef,
    position: Option<&sq::MySQLColumnPosition>,
) -> Result<(), SqlError> {
    let pos = find_column(t, cols, old)?;
    let mut bc = bind_column(new, t.collation)?;
    check_new_column_name(cols, pos, &bc.def.name)?;
    // Columns of the primary key are NOT NULL.
    if idx.iter().any(|i| i.primary && i.columns.contains(&pos)) {
        bc.def.nullable = false;
    }
    let mut rest: Vec<ColumnDef> = cols.clone();
    rest.remove(pos);
    let target = match position {
        None => None,
        Some(sq::MySQLColumnPosition::First) => Some(0),
        Some(sq::MySQLColumnPosition::After(a)) => {
            match rest.iter().position(|c| ident_eq(&c.name, &a.value)) {
                Some(p) => Some(p + 1),
                None => {
                    return Err(err(
                        code::ER_BAD_FIELD_ERROR,
                        format!("Unknown column '{}' in '{}'", a.value, t.name),
                    ))
                }
            }
        }
    };
    let to = target.unwrap_or(pos);
    rest.insert(to, bc.def.clone());
    *cols = rest;
    for i in idx.iter_mut() {
        for c in &mut i.columns {
            *c = if *c == pos {
                to
            } else {
                let c1 = if *c > pos { *c - 1 } else { *c };
                if c1 >= to {
                    c1 + 1
                } else {
                    c1
                }
            };
        }
    }
    out.push(AlterOp::ChangeColumn {
        name: old.to_string(),
        def: bc.def.clone(),
        position: target,
    });
    column_keys(&bc, to, idx, out)?;
    Ok(())
}

/// The keys a column definition of ADD / MODIFY / CHANGE declares (`PRIMARY KEY`,
/// `UNIQUE`) on the column now at `pos`.
fn column_keys(
    bc: &BoundColumn,
    pos: usize,
    idx: &mut Vec<IndexDef>,
    out: &mut Vec<AlterOp>,
) -> Result<(), SqlError> {
    let to = pos;
    if bc.primary {
        if idx.iter().any(|i| i.primary) {
            return Err(err(
                code::ER_MULTIPLE_PRI_KEY,
                "Multiple primary key defined",
            ));
        }
        let i = IndexDef {
            id: 0,
            name: "PRIMARY".into(),
            columns: vec![to],
            prefix_lens: vec![None],
            unique: true,
            primary: true,
        };
        idx.insert(0, i.clone());
        out.push(AlterOp::AddIndex(i));
    }
    if bc.unique {
        let i = IndexDef {
            id: 0,
            name: unique_index_name(idx, &bc.def.name),
            columns: vec![to],
            prefix_lens: vec![None],
            unique: true,
            primary: false,
        };
        idx.push(i.clone());
        out.push(AlterOp::AddIndex(i));
    }
    Ok(())
}

/// Binds a DDL statement into the engine's form; Ok(None) if `stmt` is not DDL.
pub fn bind_ddl(
    b: &Binder,
    stmt: &sq::Statement,
) -> Result<Option<(Ddl, Vec<SqlError>)>, SqlError> {
    use sq::Statement as S;
    let db_name = |n: &sq::ObjectName| -> Result<String, SqlError> {
        let p = name_parts(n);
        if p.len() != 1 || p[0].is_empty() || p[0].len() > 64 {
            return Err(err(
                code::ER_WRONG_DB_NAME,
                format!("Incorrect database name '{n}'"),
            ));
        }
        Ok(p[0].clone())
    };
    Ok(Some(match stmt {
        S::CreateDatabase {
            db_name: n,
            if_not_exists,
            ..
        } => (
            Ddl::CreateDatabase {
                name: db_name(n)?,
                if_not_exists: *if_not_exists,
            },
            vec![],
        ),
        S::CreateSchema {
            schema_name,
            if_not_exists,
            ..
        } => {
            let sq::SchemaName::Simple(n) = schema_name else {
                return Err(unsupported("CREATE SCHEMA AUTHORIZATION"));
            };
            (
                Ddl::CreateDatabase {
                    name: db_name(n)?,
                    if_not_exists: *if_not_exists,
                },
                vec![],
            )
        }
        S::Drop {
            object_type,
            if_exists,
            names,
            table,
            temporary,
            ..
        } => {
            if *temporary {
                return Err(unsupported("DROP TEMPORARY TABLE"));
            }
            match object_type {
                sq::ObjectType::Table => {
                    let mut tables = Vec::new();
                    for n in names {
                        tables.push(b.table_name(n)?);
                    }
                    (
                        Ddl::DropTables {
                            tables,
                            if_exists: *if_exists,
                        },
                        vec![],
                    )
                }
                sq::ObjectType::Database | sq::ObjectType::Schema => {
                    if names.len() != 1 {
                        return Err(crate::parser::syntax_error("", 0));
                    }
                    (
                        Ddl::DropDatabase {
                            name: db_name(&names[0])?,
                            if_exists: *if_exists,
                        },
                        vec![],
                    )
                }
                sq::ObjectType::Index => {
                    let Some(t) = table else {
                        return Err(crate::parser::syntax_error("", 0));
                    };
                    let (db, tname) = b.table_name(t)?;
                    let def = b.resolve_table(&db, &tname)?;
                    let name = name_parts(&names[0]).pop().unwrap_or_default();
                    let op = if ident_eq(&name, "PRIMARY") {
                        sq::AlterTableOperation::DropPrimaryKey {
                            drop_behavior: None,
                        }
                    } else {
                        sq::AlterTableOperation::DropIndex {
                            name: sq::Ident::new(name),
                        }
                    };
                    let ops = bind_alter(&def, &[op])?;
                    (
                        Ddl::AlterTable {
                            db,
                            table: tname,
                            ops,
                            convert: None,
                        },
                        vec![],
                    )
                }
                other => return Err(unsupported(&format!("DROP {other}"))),
            }
        }
        S::CreateTable(ct) => bind_create_table(b, ct)?,
        S::AlterTable(at) => {
            let (db, tname) = b.table_name(&at.name)?;
            let def = b.resolve_table(&db, &tname)?;
            // ALTER TABLE t RENAME TO u
            if let [sq::AlterTableOperation::RenameTable { table_name }] = at.operations.as_slice()
            {
                let n = match table_name {
                    sq::RenameTableNameKind::As(n) | sq::RenameTableNameKind::To(n) => n,
                };
                let to = b.table_name(n)?;
                return Ok(Some((
                    Ddl::RenameTables {
                        renames: vec![((db, tname), to)],
                    },
                    vec![],
                )));
            }
            let ops = bind_alter(&def, &at.operations)?;
            (
                Ddl::AlterTable {
                    db,
                    table: tname,
                    ops,
                    convert: None,
                },
                vec![],
            )
        }
        S::CreateIndex(ci) => {
            let (db, tname) = b.table_name(&ci.table_name)?;
            let def = b.resolve_table(&db, &tname)?;
            let Some(name) = &ci.name else {
                return Err(crate::parser::syntax_error("", 0));
            };
            let iname = name_parts(name).pop().unwrap_or_default();
            let c = if ci.unique {
                sq::TableConstraint::Unique(sq::UniqueConstraint {
                    name: None,
                    index_name: Some(sq::Ident::new(iname)),
                    index_type_display: sq::KeyOrIndexDisplay::None,
                    index_type: None,
                    columns: ci.columns.clone(),
                    include: vec![],
                    index_options: vec![],
                    characteristics: None,
                    nulls_distinct: sq::NullsDistinctOption::None,
                })
            } else {
                sq::TableConstraint::Index(sq::IndexConstraint {
                    display_as_key: false,
                    name: Some(sq::Ident::new(iname)),
                    index_type: None,
                    columns: ci.columns.clone(),
                    index_options: vec![],
                })
            };
            let ops = bind_alter(
                &def,
                &[sq::AlterTableOperation::AddConstraint {
                    constraint: c,
                    not_valid: false,
                }],
            )?;
            (
                Ddl::AlterTable {
                    db,
                    table: tname,
                    ops,
                    convert: None,
                },
                vec![],
            )
        }
        S::Truncate(t) => {
            if t.table_names.len() != 1 {
                return Err(crate::parser::syntax_error("", 0));
            }
            let (db, tname) = b.table_name(&t.table_names[0].name)?;
            b.resolve_table(&db, &tname)?;
            (Ddl::TruncateTable { db, table: tname }, vec![])
        }
        S::RenameTable(rs) => {
            let mut renames = Vec::new();
            for r in rs {
                renames.push((b.table_name(&r.old_name)?, b.table_name(&r.new_name)?));
            }
            (Ddl::RenameTables { renames }, vec![])
        }
        _ => return Ok(None),
    }))
}

/// A single unit (of INTERVAL or EXTRACT).
fn single_unit(f: &sq::DateTimeField) -> Option<dates::Unit> {
    use dates::Unit as U;
    use sq::DateTimeField as F;
    Some(match f {
        F::Microsecond => U::Microsecond,
        F::Second => U::Second,
        F::Minute => U::Minute,
        F::Hour => U::Hour,
        F::Day => U::Day,
        F::Week(None) => U::Week,
        F::Month => U::Month,
        F::Quarter => U::Quarter,
        F::Year => U::Year,
        _ => return None,
    })
}

/// The unit of an INTERVAL as sqlparser gives it: one field, or a range `a TO b` for
/// MariaDB's composite units (which the parser rewrites into that form; see parser.rs,
/// `rewrite_interval_units`).
fn interval_unit(iv: &sq::Interval) -> Result<dates::Unit, SqlError> {
    use dates::Unit as U;
    use sq::DateTimeField as F;
    let unit = match (&iv.leading_field, &iv.last_field) {
        _ if iv.leading_precision.is_some() || iv.fractional_seconds_precision.is_some() => None,
        (Some(f), None) => single_unit(f),
        (Some(a), Some(b)) => match (a, b) {
            // SECOND_MICROSECOND (sqlparser reads `SECOND TO ...` as something else).
            (F::Millisecond, F::Microsecond) => Some(U::SecondMicrosecond),
            (F::Minute, F::Microsecond) => Some(U::MinuteMicrosecond),
            (F::Minute, F::Second) => Some(U::MinuteSecond),
            (F::Hour, F::Microsecond) => Some(U::HourMicrosecond),
            (F::Hour, F::Second) => Some(U::HourSecond),
            (F::Hour, F::Minute) => Some(U::HourMinute),
            (F::Day, F::Microsecond) => Some(U::DayMicrosecond),
            (F::Day, F::Second) => Some(U::DaySecond),
            (F::Day, F::Minute) => Some(U::DayMinute),
            (F::Day, F::Hour) => Some(U::DayHour),
            (F::Year, F::Month) => Some(U::YearMonth),
            _ => None,
        },
        _ => None,
    };
    unit.ok_or_else(|| crate::parser::syntax_error(&iv.to_string(), 0))
}
