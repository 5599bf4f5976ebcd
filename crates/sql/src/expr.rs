//! Expressions: the bound expression tree, its evaluation, and MariaDB's value conversions
//! and comparisons (numeric contexts, string/number/date coercions, storing into columns
//! under strict or non-strict sql_mode).
//!
//! Strings compare under a collation ([`Collation`]: utf8mb4_general_ci, MariaDB's default,
//! case- and accent-insensitive with PAD SPACE; utf8mb4_bin; binary), the same order the
//! engine's index keys use for the column's collation. The binder decides each comparison's
//! collation from its operands (MariaDB's coercibility rules: an explicit COLLATE beats a
//! column, a column beats a literal or a function of literals, and at equal strength
//! `binary` beats `utf8mb4_bin` beats `utf8mb4_general_ci`) and stores it in the comparing
//! node (`=`/`<`/..., BETWEEN, IN, LIKE, simple CASE); ORDER BY, GROUP BY, DISTINCT and
//! MIN/MAX get theirs from the binder too. Functions that compare internally (NULLIF,
//! FIELD, GREATEST, LEAST, INSTR, LOCATE) use the connection collation utf8mb4_general_ci.

use std::cmp::Ordering;
use std::sync::Arc;

use onelog_types::{code, ColumnType, Date, DateTime, Decimal, SqlError, Time, Value};
pub use onelog_types::{Collation, Derivation};

use crate::functions::Func;
use crate::inlist::SortedList;

mod coltypes;
mod datetime;
pub(crate) mod decimal_ops;
mod fixed_bin;
mod store;

pub use coltypes::enum_set_number;
pub use datetime::*;
pub use fixed_bin::{alter_fixed_bin, cannot_cast, sql_type_name, uncastable_value_type};
pub use store::*;

/// Errors raised while evaluating (for example BIGINT overflow).
pub type EvalResult<T> = Result<T, SqlError>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Mod,
    Eq,
    NullSafeEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastType {
    Signed,
    Unsigned,
    /// CHAR[(n)]: at most n characters.
    Char(Option<u32>),
    Binary,
    Double,
    Decimal(u8, u8),
    Date,
    /// DATETIME(fsp): the fraction is cut to `fsp` digits.
    DateTime(u8),
    /// TIME(fsp)
    Time(u8),
    /// The number an ENUM or SET value of this type stands for (its index or bitmap), as
    /// numeric context reads it.
    Number(ColumnType),
    /// CAST(x AS UUID) / CAST(x AS INET6): the canonical text, NULL with warning 1292 for
    /// a string that is not one.
    FixedBin(onelog_types::FixedBin),
    /// The sort form of a UUID/INET6 value (binary, 16 bytes) that comparisons and ORDER BY
    /// use; NULL with warning 1292 as above.
    FixedBinKey(onelog_types::FixedBin),
    /// The canonical text of a sort form (the value of MIN/MAX over sort forms).
    FixedBinFromKey(onelog_types::FixedBin),
    /// The 16-byte memory form of a UUID/INET6 value (what HEX() and CAST(... AS BINARY)
    /// see).
    FixedBinMemory(onelog_types::FixedBin),
}

/// A bound expression. Column references are positions in the row being evaluated (the
/// concatenation of the rows of the FROM sources); aggregates are slots computed by the
/// executor.
#[derive(Clone, Debug)]
pub enum Expr {
    Lit(Value),
    Col(usize),
    Agg(usize),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    BitNot(Box<Expr>),
    /// Binary operator; comparisons compare strings under the collation.
    Bin(BinOp, Box<Expr>, Box<Expr>, Collation),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Xor(Box<Expr>, Box<Expr>),
    IsNull(Box<Expr>, bool),
    /// `e IS [NOT] TRUE/FALSE`: (expr, value, negated)
    IsBool(Box<Expr>, bool, bool),
    Between(Box<Expr>, Box<Expr>, Box<Expr>, bool, Collation),
    InList(Box<Expr>, Vec<Expr>, bool, Collation),
    /// Materialised `IN (subquery)`: sorted distinct values (under the collation), whether
    /// the set held a NULL, negated.
    InSet(Box<Expr>, Arc<Vec<Value>>, bool, bool, Collation),
    /// A long IN list of constants, sorted (see `crate::inlist`): (expr, items, negated).
    InSorted(Box<Expr>, Arc<SortedList>, bool),
    Like(Box<Expr>, Box<Expr>, Option<u8>, bool, Collation),
    Regexp(Box<Expr>, Box<Expr>, bool),
    /// CASE [operand] WHEN ... (the operand is compared with the WHEN values under the
    /// collation).
    Case(
        Option<Box<Expr>>,
        Vec<(Expr, Expr)>,
        Option<Box<Expr>>,
        Collation,
    ),
    /// The value of `e` with a collation the binder gave it (which it has already applied
    /// to the comparisons above): `e COLLATE name` (explicit), `_binary 'x'` and `X'..'`
    /// (coercible binary strings).
    Collate(Box<Expr>, Collation, Derivation),
    Func(Func, Vec<Expr>),
    Cast(Box<Expr>, CastType),
    /// A scalar subquery (index into the statement's subqueries). Uncorrelated ones are
    /// replaced by their value before the enclosing statement runs; correlated ones are
    /// evaluated per row through [`Ctx::subs`].
    Subquery(usize),
    InSubquery(Box<Expr>, usize, bool, Collation),
    /// `(a, b) [NOT] IN (SELECT x, y ...)`: the row, the subquery, negated, the collation
    /// of each column pair.
    RowInSubquery(Vec<Expr>, usize, bool, Vec<Collation>),
    /// Materialised [`RowInSubquery`](Expr::RowInSubquery): the subquery's rows.
    RowInSet(Vec<Expr>, Arc<Vec<Vec<Value>>>, bool, Vec<Collation>),
    Exists(usize, bool),
    /// `x op ANY (subquery)` / `x op ALL (subquery)`: (x, op, subquery, all, collation of
    /// the comparison).
    Quantified(Box<Expr>, BinOp, usize, bool, Collation),
    /// Materialised `x op ANY/ALL (subquery)`: sorted distinct values, whether the
    /// subquery returned a NULL, all, collation.
    QuantSet(Box<Expr>, BinOp, Arc<Vec<Value>>, bool, bool, Collation),
    /// A column of an enclosing query: (levels up, position in that query's row). Replaced
    /// by the outer row's value before a correlated subquery runs.
    Outer(usize, usize),
    /// A stored function call (run through [`Ctx::subs`]).
    Routine(Arc<crate::routines::FnRef>, Vec<Expr>),
}

impl Expr {
    /// Calls `f` on every sub-expression (pre-order).
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Lit(_)
            | Expr::Col(_)
            | Expr::Agg(_)
            | Expr::Subquery(_)
            | Expr::Exists(..)
            | Expr::Outer(..) => {}
            Expr::Neg(a)
            | Expr::Not(a)
            | Expr::BitNot(a)
            | Expr::IsNull(a, _)
            | Expr::IsBool(a, _, _)
            | Expr::Cast(a, _)
            | Expr::Collate(a, ..)
            | Expr::InSet(a, ..)
            | Expr::InSorted(a, ..)
            | Expr::InSubquery(a, ..)
            | Expr::Quantified(a, ..)
            | Expr::QuantSet(a, ..) => a.walk(f),
            Expr::RowInSubquery(xs, ..) | Expr::RowInSet(xs, ..) => {
                for x in xs {
                    x.walk(f);
                }
            }
            Expr::Bin(_, a, b, _)
            | Expr::And(a, b)
            | Expr::Or(a, b)
            | Expr::Xor(a, b)
            | Expr::Like(a, b, ..)
            | Expr::Regexp(a, b, _) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::Between(a, b, c, ..) => {
                a.walk(f);
                b.walk(f);
                c.walk(f);
            }
            Expr::InList(a, l, ..) => {
                a.walk(f);
                l.iter().for_each(|e| e.walk(f));
            }
            Expr::Case(o, w, e, _) => {
                if let Some(o) = o {
                    o.walk(f);
                }
                for (a, b) in w {
                    a.walk(f);
                    b.walk(f);
                }
                if let Some(e) = e {
                    e.walk(f);
                }
            }
            Expr::Func(_, args) | Expr::Routine(_, args) => args.iter().for_each(|e| e.walk(f)),
        }
    }

    /// Mutable pre-order rewrite.
    pub fn walk_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        f(self);
        match self {
            Expr::Lit(_)
            | Expr::Col(_)
            | Expr::Agg(_)
            | Expr::Subquery(_)
            | Expr::Exists(..)
            | Expr::Outer(..) => {}
            Expr::Neg(a)
            | Expr::Not(a)
            | Expr::BitNot(a)
            | Expr::IsNull(a, _)
            | Expr::IsBool(a, _, _)
            | Expr::Cast(a, _)
            | Expr::Collate(a, ..)
            | Expr::InSet(a, ..)
            | Expr::InSorted(a, ..)
            | Expr::InSubquery(a, ..)
            | Expr::Quantified(a, ..)
            | Expr::QuantSet(a, ..) => a.walk_mut(f),
            Expr::RowInSubquery(xs, ..) | Expr::RowInSet(xs, ..) => {
                for x in xs {
                    x.walk_mut(f);
                }
            }
            Expr::Bin(_, a, b, _)
            | Expr::And(a, b)
            | Expr::Or(a, b)
            | Expr::Xor(a, b)
            | Expr::Like(a, b, ..)
            | Expr::Regexp(a, b, _) => {
                a.walk_mut(f);
                b.walk_mut(f);
            }
            Expr::Between(a, b, c, ..) => {
                a.walk_mut(f);
                b.walk_mut(f);
                c.walk_mut(f);
            }
            Expr::InList(a, l, ..) => {
                a.walk_mut(f);
                l.iter_mut().for_each(|e| e.walk_mut(f));
            }
            Expr::Case(o, w, e, _) => {
                if let Some(o) = o {
                    o.walk_mut(f);
                }
                for (a, b) in w {
                    a.walk_mut(f);
                    b.walk_mut(f);
                }
                if let Some(e) = e {
                    e.walk_mut(f);
                }
            }
            Expr::Func(_, args) | Expr::Routine(_, args) => {
                args.iter_mut().for_each(|e| e.walk_mut(f))
            }
        }
    }

    pub fn is_const(&self) -> bool {
        let mut c = true;
        self.walk(&mut |e| {
            if matches!(
                e,
                Expr::Col(_)
                    | Expr::Agg(_)
                    | Expr::Subquery(_)
                    | Expr::InSubquery(..)
                    | Expr::RowInSubquery(..)
                    | Expr::Exists(..)
                    | Expr::Quantified(..)
                    | Expr::Outer(..)
                    | Expr::Routine(..)
            ) || matches!(e, Expr::Func(f, _) if f.volatile())
            {
                c = false;
            }
        });
        c
    }
}

/// Runs the correlated subqueries of a statement for the row being evaluated.
pub trait SubqueryEval {
    /// The value of scalar subquery `i` (error 1242 if it returns more than one row).
    fn scalar(&self, i: usize, row: &[Value]) -> EvalResult<Value>;
    /// Whether subquery `i` returns a row.
    fn exists(&self, i: usize, row: &[Value]) -> EvalResult<bool>;
    /// The first column of subquery `i`: non-NULL values sorted and made distinct under
    /// `coll`, and whether a NULL was among them.
    /// Every row of subquery `i`.
    fn rows(&self, i: usize, row: &[Value]) -> EvalResult<std::rc::Rc<Vec<Vec<Value>>>>;
    fn values(
        &self,
        i: usize,
        row: &[Value],
        coll: Collation,
    ) -> EvalResult<std::rc::Rc<(Vec<Value>, bool)>>;
    /// Whether the statement was killed (SLEEP() polls it).
    fn interrupted(&self) -> bool {
        false
    }
    /// Adds a warning to the statement's.
    fn warn(&self, e: SqlError) {
        let _ = e;
    }
    /// A user-level lock function for the statement's connection (`crate::user_locks`).
    fn user_lock(
        &self,
        f: crate::user_locks::UserLockFn,
        name: Option<&str>,
        timeout: f64,
    ) -> EvalResult<Value> {
        let _ = (f, name, timeout);
        Err(crate::sql_err(
            code::ER_NOT_SUPPORTED_YET,
            "This version of MariaDB doesn't yet support 'user-level locks here'",
        ))
    }
    /// NEXTVAL / LASTVAL / SETVAL for the statement's session (`crate::sequences`):
    /// `args` are the sequence's database and name, then SETVAL's values.
    fn sequence(&self, f: crate::sequences::SeqFn, args: &[Value]) -> EvalResult<Value> {
        let _ = (f, args);
        Err(crate::sql_err(
            code::ER_NOT_SUPPORTED_YET,
            "This version of MariaDB doesn't yet support 'sequences here'",
        ))
    }
    /// Calls stored function `f` (see `crate::routines`).
    fn call_routine(&self, f: &crate::routines::FnRef, args: Vec<Value>) -> EvalResult<Value> {
        let _ = (f, args);
        Err(crate::sql_err(
            code::ER_NOT_SUPPORTED_YET,
            "This version of MariaDB doesn't yet support 'stored functions here'",
        ))
    }
}

/// Evaluation context: the current row, the aggregate values of its group, and the runner
/// of correlated subqueries (None where there are none).
pub struct Ctx<'a> {
    pub row: &'a [Value],
    pub aggs: &'a [Value],
    pub subs: Option<&'a dyn SubqueryEval>,
}

impl<'a> Ctx<'a> {
    pub fn new(row: &'a [Value]) -> Self {
        Ctx {
            row,
            aggs: &[],
            subs: None,
        }
    }

    pub(crate) fn subs(&self) -> EvalResult<&'a dyn SubqueryEval> {
        self.subs.ok_or_else(|| {
            crate::sql_err(
                code::ER_UNKNOWN_ERROR,
                "subquery evaluated outside of its statement",
            )
        })
    }
}

/// `x IN (set)` with SQL NULL semantics: an empty set gives FALSE even for a NULL `x`.
pub fn in_set(x: &Value, set: &[Value], has_null: bool, neg: bool, coll: Collation) -> Value {
    if set.is_empty() && !has_null {
        return bool_val(neg);
    }
    if x.is_null() {
        return Value::Null;
    }
    let found = set.binary_search_by(|v| sort_cmp(v, x, coll)).is_ok()
        || set
            .iter()
            .any(|v| compare(x, v, coll) == Some(Ordering::Equal));
    if found {
        bool_val(!neg)
    } else if has_null {
        Value::Null
    } else {
        bool_val(neg)
    }
}

/// `(x, ...) IN (rows)`: TRUE if a row equals it column by column; otherwise NULL if a row
/// might (its only differences are NULLs), else FALSE.
pub fn row_in(xs: &[Value], rows: &[Vec<Value>], neg: bool, colls: &[Collation]) -> Value {
    let mut unknown = false;
    'rows: for r in rows {
        let mut null = false;
        for (k, x) in xs.iter().enumerate() {
            let v = r.get(k).unwrap_or(&Value::Null);
            if x.is_null() || v.is_null() {
                null = true;
                continue;
            }
            let c = colls.get(k).copied().unwrap_or(Collation::DEFAULT);
            match compare(x, v, c) {
                Some(Ordering::Equal) => {}
                None => null = true,
                _ => continue 'rows,
            }
        }
        if !null {
            return bool_val(!neg);
        }
        unknown = true;
    }
    if unknown {
        Value::Null
    } else {
        bool_val(neg)
    }
}

/// `x op ANY (set)` / `x op ALL (set)` with SQL NULL semantics (ANY of an empty set is
/// FALSE, ALL of an empty set TRUE, whatever `x` is).
pub fn quantified(
    x: &Value,
    op: BinOp,
    set: &[Value],
    has_null: bool,
    all: bool,
    coll: Collation,
) -> EvalResult<Value> {
    if set.is_empty() && !has_null {
        return Ok(bool_val(all));
    }
    if x.is_null() {
        return Ok(Value::Null);
    }
    for v in set {
        let r = truth(&binary_coll(op, x.clone(), v.clone(), coll)?);
        match (all, r) {
            (false, Some(true)) => return Ok(bool_val(true)),
            (true, Some(false)) => return Ok(bool_val(false)),
            _ => {}
        }
    }
    Ok(if has_null { Value::Null } else { bool_val(all) })
}

pub fn eval(e: &Expr, cx: &Ctx) -> EvalResult<Value> {
    match e {
        Expr::Lit(v) => return Ok(v.clone()),
        Expr::Col(i) => return Ok(cx.row.get(*i).cloned().unwrap_or(Value::Null)),
        _ => {}
    }
    // Deeper nodes recurse: a tree deeper than the stack takes is refused (1436).
    onelog_types::stack::check()?;
    Ok(match e {
        Expr::Lit(v) => v.clone(),
        Expr::Col(i) => cx.row.get(*i).cloned().unwrap_or(Value::Null),
        Expr::Agg(i) => cx.aggs.get(*i).cloned().unwrap_or(Value::Null),
        Expr::Neg(a) => negate(eval(a, cx)?)?,
        Expr::Not(a) => match truth(&eval(a, cx)?) {
            None => Value::Null,
            Some(b) => bool_val(!b),
        },
        Expr::BitNot(a) => match eval(a, cx)? {
            Value::Null => Value::Null,
            v => Value::UInt(!to_u64_wrapping(&v)),
        },
        Expr::Bin(op, a, b, coll) => {
            let x = eval(a, cx)?;
            let y = eval(b, cx)?;
            binary_coll(*op, x, y, *coll)?
        }
        Expr::Collate(a, ..) => eval(a, cx)?,
        Expr::And(a, b) => {
            let x = truth(&eval(a, cx)?);
            if x == Some(false) {
                return Ok(bool_val(false));
            }
            let y = truth(&eval(b, cx)?);
            match (x, y) {
                (_, Some(false)) => bool_val(false),
                (Some(true), Some(true)) => bool_val(true),
                _ => Value::Null,
            }
        }
        Expr::Or(a, b) => {
            let x = truth(&eval(a, cx)?);
            if x == Some(true) {
                return Ok(bool_val(true));
            }
            let y = truth(&eval(b, cx)?);
            match (x, y) {
                (_, Some(true)) => bool_val(true),
                (Some(false), Some(false)) => bool_val(false),
                _ => Value::Null,
            }
        }
        Expr::Xor(a, b) => match (truth(&eval(a, cx)?), truth(&eval(b, cx)?)) {
            (Some(x), Some(y)) => bool_val(x != y),
            _ => Value::Null,
        },
        Expr::IsNull(a, neg) => bool_val(eval(a, cx)?.is_null() != *neg),
        Expr::IsBool(a, v, neg) => {
            let t = truth(&eval(a, cx)?);
            bool_val((t == Some(*v)) != *neg)
        }
        Expr::Between(a, lo, hi, neg, coll) => {
            let x = eval(a, cx)?;
            let l = eval(lo, cx)?;
            let h = eval(hi, cx)?;
            let ge = compare(&x, &l, *coll).map(|o| o != Ordering::Less);
            let le = compare(&x, &h, *coll).map(|o| o != Ordering::Greater);
            let r = match (ge, le) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
            match r {
                None => Value::Null,
                Some(b) => bool_val(b != *neg),
            }
        }
        Expr::InList(a, list, neg, coll) => {
            let x = eval(a, cx)?;
            if x.is_null() {
                return Ok(Value::Null);
            }
            let mut saw_null = false;
            let mut found = false;
            for item in list {
                let v = eval(item, cx)?;
                match compare(&x, &v, *coll) {
                    Some(Ordering::Equal) => {
                        found = true;
                        break;
                    }
                    None => saw_null = true,
                    _ => {}
                }
            }
            if found {
                bool_val(!*neg)
            } else if saw_null {
                Value::Null
            } else {
                bool_val(*neg)
            }
        }
        Expr::InSet(a, set, has_null, neg, coll) => {
            in_set(&eval(a, cx)?, set, *has_null, *neg, *coll)
        }
        Expr::InSorted(a, list, neg) => list.contains(&eval(a, cx)?, *neg),
        Expr::QuantSet(a, op, set, has_null, all, coll) => {
            quantified(&eval(a, cx)?, *op, set, *has_null, *all, *coll)?
        }
        Expr::Like(a, p, esc, neg, coll) => {
            let x = eval(a, cx)?;
            let pat = eval(p, cx)?;
            if x.is_null() || pat.is_null() {
                return Ok(Value::Null);
            }
            let r = like(&to_bytes(&x), &to_bytes(&pat), esc.unwrap_or(b'\\'), *coll);
            bool_val(r != *neg)
        }
        Expr::Regexp(a, p, neg) => {
            let x = eval(a, cx)?;
            let pat = eval(p, cx)?;
            if x.is_null() || pat.is_null() {
                return Ok(Value::Null);
            }
            let r = crate::functions::simple_regexp(&to_string(&x), &to_string(&pat))?;
            bool_val(r != *neg)
        }
        Expr::Case(op, whens, els, coll) => {
            let base = match op {
                Some(o) => Some(eval(o, cx)?),
                None => None,
            };
            for (w, t) in whens {
                let c = eval(w, cx)?;
                let hit = match &base {
                    Some(b) => compare(b, &c, *coll) == Some(Ordering::Equal),
                    None => truth(&c) == Some(true),
                };
                if hit {
                    return eval(t, cx);
                }
            }
            match els {
                Some(e) => eval(e, cx)?,
                None => Value::Null,
            }
        }
        Expr::Func(f, args) => crate::functions::call(*f, args, cx)?,
        Expr::Routine(f, args) => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(eval(a, cx)?);
            }
            cx.subs()?.call_routine(f, vals)?
        }
        Expr::Cast(a, CastType::FixedBin(f)) => fixed_bin::cast(eval(a, cx)?, *f, false, cx),
        Expr::Cast(a, CastType::FixedBinKey(f)) => fixed_bin::cast(eval(a, cx)?, *f, true, cx),
        Expr::Cast(a, t) => cast(eval(a, cx)?, *t)?,
        Expr::Subquery(i) => cx.subs()?.scalar(*i, cx.row)?,
        Expr::Exists(i, neg) => bool_val(cx.subs()?.exists(*i, cx.row)? != *neg),
        Expr::RowInSubquery(xs, i, neg, colls) => {
            let vals = xs
                .iter()
                .map(|x| eval(x, cx))
                .collect::<EvalResult<Vec<_>>>()?;
            let rows = cx.subs()?.rows(*i, cx.row)?;
            row_in(&vals, &rows, *neg, colls)
        }
        Expr::RowInSet(xs, rows, neg, colls) => {
            let vals = xs
                .iter()
                .map(|x| eval(x, cx))
                .collect::<EvalResult<Vec<_>>>()?;
            row_in(&vals, rows, *neg, colls)
        }
        Expr::InSubquery(a, i, neg, coll) => {
            let x = eval(a, cx)?;
            let set = cx.subs()?.values(*i, cx.row, *coll)?;
            in_set(&x, &set.0, set.1, *neg, *coll)
        }
        Expr::Quantified(a, op, i, all, coll) => {
            let x = eval(a, cx)?;
            let set = cx.subs()?.values(*i, cx.row, *coll)?;
            quantified(&x, *op, &set.0, set.1, *all, *coll)?
        }
        Expr::Outer(..) => {
            return Err(crate::sql_err(
                code::ER_UNKNOWN_ERROR,
                "outer column reference evaluated outside of its subquery",
            ))
        }
    })
}

pub fn bool_val(b: bool) -> Value {
    Value::Int(b as i64)
}

/// SQL truth of a value (NULL: unknown).
pub fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(*i != 0),
        Value::UInt(u) => Some(*u != 0),
        Value::Double(d) => Some(*d != 0.0),
        Value::Decimal(d) => Some(!d.is_zero()),
        Value::Bytes(_) => Some(to_f64(v) != 0.0),
        Value::Date(_) | Value::DateTime(_) => Some(true),
        Value::Time(t) => Some(t.to_micros() != 0),
    }
}

// ---- conversions ----

pub fn to_string(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_string(),
    }
}

pub fn to_bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.clone(),
        other => other.to_string().into_bytes(),
    }
}

/// The longest numeric prefix of a string (MariaDB's string-to-number rule) and whether
/// the whole string (ignoring surrounding spaces) was numeric.
pub fn numeric_prefix(s: &[u8]) -> (&str, bool) {
    let txt = std::str::from_utf8(s).unwrap_or("");
    let t = txt.trim_start_matches([' ', '\t', '\n', '\r']);
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let ds = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - ds;
    if i < b.len() && b[i] == b'.' {
        let j = i + 1;
        let mut k = j;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        digits += k - j;
        if digits > 0 {
            i = k;
        }
    }
    if digits == 0 {
        return ("", false);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut k = i + 1;
        if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
            k += 1;
        }
        let es = k;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        if k > es {
            i = k;
        }
    }
    let whole = t[i..].trim().is_empty();
    (&t[..i], whole)
}

pub fn to_f64(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        Value::Double(d) => *d,
        Value::Decimal(d) => d.to_f64(),
        Value::Bytes(b) => numeric_prefix(b).0.parse().unwrap_or(0.0),
        Value::Date(d) => (d.year as f64) * 10000.0 + (d.month as f64) * 100.0 + d.day as f64,
        Value::DateTime(dt) => {
            let d = &dt.date;
            ((d.year as f64) * 10000.0 + (d.month as f64) * 100.0 + d.day as f64) * 1e6
                + (dt.hour as f64) * 1e4
                + (dt.minute as f64) * 100.0
                + dt.second as f64
                + dt.micro as f64 / 1e6
        }
        Value::Time(t) => {
            let s = (t.hours as f64) * 1e4 + (t.minute as f64) * 100.0 + t.second as f64;
            let s = s + t.micro as f64 / 1e6;
            if t.negative {
                -s
            } else {
                s
            }
        }
    }
}

/// Integer value, rounding (MariaDB rounds doubles and decimals half away from zero when
/// converting to integers). Saturates.
pub fn to_i128(v: &Value) -> i128 {
    match v {
        Value::Int(i) => *i as i128,
        Value::UInt(u) => *u as i128,
        Value::Decimal(d) => match d.rescale(0) {
            Some(r) => r.narrow().unwrap_or(if r.is_negative() {
                i128::MIN
            } else {
                i128::MAX
            }),
            None => 0,
        },
        Value::Bytes(b) => {
            let (p, _) = numeric_prefix(b);
            if let Ok(i) = p.parse::<i128>() {
                i
            } else {
                round_f64(p.parse::<f64>().unwrap_or(0.0))
            }
        }
        other => round_f64(to_f64(other)),
    }
}

fn round_f64(d: f64) -> i128 {
    let r = d.round();
    if r >= i128::MAX as f64 {
        i128::MAX
    } else if r <= i128::MIN as f64 {
        i128::MIN
    } else {
        r as i128
    }
}

pub fn to_i64(v: &Value) -> i64 {
    to_i128(v).clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

fn to_u64_wrapping(v: &Value) -> u64 {
    match v {
        Value::UInt(u) => *u,
        other => to_i128(other) as u64,
    }
}

pub fn to_decimal(v: &Value) -> Option<Decimal> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(Decimal::from_i64(*i)),
        Value::UInt(u) => Some(Decimal::new(*u as i128, 0)),
        Value::Decimal(d) => Some(*d),
        Value::Double(d) => format!("{d}").parse().ok(),
        Value::Bytes(b) => {
            let (p, _) = numeric_prefix(b);
            if p.is_empty() {
                Some(Decimal::new(0, 0))
            } else {
                p.parse().ok()
            }
        }
        other => format!("{}", to_f64(other)).parse().ok(),
    }
}

fn is_int(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::UInt(_))
}

fn is_num(v: &Value) -> bool {
    matches!(
        v,
        Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_)
    )
}

// ---- comparison ----

fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// Compares two values as MariaDB does for `=`/`<` (None when either is NULL), strings
/// under `coll`.
pub fn compare(a: &Value, b: &Value, coll: Collation) -> Option<Ordering> {
    use Value::*;
    Some(match (a, b) {
        (Null, _) | (_, Null) => return None,
        (Int(x), Int(y)) => x.cmp(y),
        (UInt(x), UInt(y)) => x.cmp(y),
        (Int(x), UInt(y)) => (*x as i128).cmp(&(*y as i128)),
        (UInt(x), Int(y)) => (*x as i128).cmp(&(*y as i128)),
        (Decimal(x), Decimal(y)) => x.cmp(y),
        (Decimal(x), Int(_) | UInt(_)) => x.cmp(&to_decimal(b)?),
        (Int(_) | UInt(_), Decimal(y)) => to_decimal(a)?.cmp(y),
        (Bytes(x), Bytes(y)) => coll.compare(x, y),
        (Date(x), Date(y)) => x.cmp(y),
        (Time(x), Time(y)) => x.cmp(y),
        (Date(_) | DateTime(_), Date(_) | DateTime(_)) => datetime_of(a)?.cmp(&datetime_of(b)?),
        (Date(_) | DateTime(_), Bytes(_)) => match datetime_of(b) {
            Some(y) => datetime_of(a)?.cmp(&y),
            None => coll.compare(&to_bytes(a), &to_bytes(b)),
        },
        (Bytes(_), Date(_) | DateTime(_)) => return compare(b, a, coll).map(Ordering::reverse),
        (Time(x), Bytes(y)) => match parse_time(&String::from_utf8_lossy(y)) {
            Some(t) => x.cmp(&t),
            None => cmp_f64(to_f64(a), to_f64(b)),
        },
        (Bytes(_), Time(_)) => return compare(b, a, coll).map(Ordering::reverse),
        _ => cmp_f64(to_f64(a), to_f64(b)),
    })
}

/// A total order for sorting: NULL first, then [`compare`].
pub fn sort_cmp(a: &Value, b: &Value, coll: Collation) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => compare(a, b, coll).unwrap_or(Ordering::Equal),
    }
}

/// A canonical byte form of a value for GROUP BY / DISTINCT / UNION: values that compare
/// equal (strings: under `coll`) get the same key.
pub fn group_key(v: &Value, coll: Collation, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(0),
        Value::Int(_) | Value::UInt(_) => {
            out.push(1);
            out.extend_from_slice(&to_i128(v).to_be_bytes());
        }
        Value::Decimal(d) => {
            // Normalise: strip trailing zero digits of the fraction. Integers share the
            // integers' form; fractions a double holds exactly share the doubles'.
            let n = decimal_ops::normalized(*d);
            match n.narrow() {
                Some(m) if n.scale == 0 => {
                    out.push(1);
                    out.extend_from_slice(&m.to_be_bytes());
                }
                _ if n.mantissa.digits() <= 15 => {
                    out.push(2);
                    out.extend_from_slice(format!("{}", to_f64(v)).as_bytes());
                }
                _ => {
                    out.push(5);
                    out.extend_from_slice(n.to_string().as_bytes());
                }
            }
        }
        Value::Double(d) => {
            if d.fract() == 0.0 && d.abs() < 1e30 {
                out.push(1);
                out.extend_from_slice(&(*d as i128).to_be_bytes());
            } else {
                out.push(2);
                out.extend_from_slice(format!("{d}").as_bytes());
            }
        }
        Value::Bytes(b) => {
            out.push(3);
            let mut k = Vec::with_capacity(b.len() * 2);
            coll.fold_key(b, &mut k);
            out.extend_from_slice(&(k.len() as u32).to_be_bytes());
            out.extend_from_slice(&k);
        }
        other => {
            out.push(4);
            let s = other.to_string();
            out.extend_from_slice(&(s.len() as u32).to_be_bytes());
            out.extend_from_slice(s.as_bytes());
        }
    }
}

// ---- arithmetic ----

fn overflow(signed: bool) -> SqlError {
    crate::sql_err(
        1690,
        format!(
            "BIGINT{} value is out of range",
            if signed { "" } else { " UNSIGNED" }
        ),
    )
}

fn int_result(r: i128, unsigned: bool) -> EvalResult<Value> {
    if unsigned {
        if r < 0 || r > u64::MAX as i128 {
            return Err(overflow(false));
        }
        return Ok(Value::UInt(r as u64));
    }
    if r >= i64::MIN as i128 && r <= i64::MAX as i128 {
        Ok(Value::Int(r as i64))
    } else {
        Err(overflow(true))
    }
}

fn negate(v: Value) -> EvalResult<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Int(i) => match i.checked_neg() {
            Some(n) => Value::Int(n),
            None => return Err(overflow(true)),
        },
        Value::UInt(u) => int_result(-(u as i128), false)?,
        Value::Decimal(d) => Value::Decimal(d.neg()),
        Value::Double(d) => Value::Double(-d),
        other => Value::Double(-to_f64(&other)),
    })
}

/// A numeric value as used in arithmetic: int-like, decimal or double.
enum Num {
    Int(i128, bool),
    Dec,
    Dbl,
}

fn num(v: &Value) -> Num {
    match v {
        Value::Int(i) => Num::Int(*i as i128, false),
        Value::UInt(u) => Num::Int(*u as i128, true),
        Value::Decimal(_) => Num::Dec,
        Value::Double(_) => Num::Dbl,
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) => {
            let f = to_f64(v);
            if f.fract() == 0.0 {
                Num::Int(f as i128, false)
            } else {
                Num::Dbl
            }
        }
        _ => Num::Dbl,
    }
}

/// A binary operator on two values (comparisons under the connection collation).
pub fn binary(op: BinOp, a: Value, b: Value) -> EvalResult<Value> {
    binary_coll(op, a, b, Collation::DEFAULT)
}

/// A binary operator on two values, comparing strings under `coll`.
pub fn binary_coll(op: BinOp, a: Value, b: Value, coll: Collation) -> EvalResult<Value> {
    use BinOp::*;
    if op == NullSafeEq {
        return Ok(bool_val(match (a.is_null(), b.is_null()) {
            (true, true) => true,
            (false, false) => compare(&a, &b, coll) == Some(Ordering::Equal),
            _ => false,
        }));
    }
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    match op {
        Eq | Ne | Lt | Le | Gt | Ge => {
            let o = compare(&a, &b, coll).unwrap();
            Ok(bool_val(match op {
                Eq => o == Ordering::Equal,
                Ne => o != Ordering::Equal,
                Lt => o == Ordering::Less,
                Le => o != Ordering::Greater,
                Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            }))
        }
        BitAnd | BitOr | BitXor | Shl | Shr => {
            let x = to_u64_wrapping(&a);
            let y = to_u64_wrapping(&b);
            Ok(Value::UInt(match op {
                BitAnd => x & y,
                BitOr => x | y,
                BitXor => x ^ y,
                Shl => {
                    if y >= 64 {
                        0
                    } else {
                        x << y
                    }
                }
                _ => {
                    if y >= 64 {
                        0
                    } else {
                        x >> y
                    }
                }
            }))
        }
        Add | Sub | Mul => arith(op, &a, &b),
        Div => divide(&a, &b),
        IntDiv => {
            if to_f64(&b) == 0.0 {
                return Ok(Value::Null);
            }
            match (num(&a), num(&b)) {
                (Num::Int(x, ux), Num::Int(y, uy)) => int_result(x / y, ux || uy),
                _ => {
                    let q = match (&a, &b) {
                        (Value::Double(_) | Value::Bytes(_), _)
                        | (_, Value::Double(_) | Value::Bytes(_)) => {
                            to_f64(&divide(&a, &b)?).trunc() as i128
                        }
                        _ => match decimal_ops::int_div(
                            to_decimal(&a).unwrap(),
                            to_decimal(&b).unwrap(),
                        )? {
                            Some(q) => q.to_i128().ok_or_else(|| overflow(true))?,
                            None => return Ok(Value::Null),
                        },
                    };
                    // As MariaDB's: unsigned when either operand is.
                    let unsigned = matches!(a, Value::UInt(_)) || matches!(b, Value::UInt(_));
                    int_result(q, unsigned)
                }
            }
        }
        Mod => {
            if to_f64(&b) == 0.0 {
                return Ok(Value::Null);
            }
            match (num(&a), num(&b)) {
                (Num::Int(x, ux), Num::Int(y, _)) => int_result(x % y, ux),
                (Num::Dbl, _) | (_, Num::Dbl) => Ok(Value::Double(to_f64(&a) % to_f64(&b))),
                _ => Ok(
                    match decimal_ops::rem(to_decimal(&a).unwrap(), to_decimal(&b).unwrap())? {
                        Some(d) => Value::Decimal(d),
                        None => Value::Null,
                    },
                ),
            }
        }
        NullSafeEq => unreachable!(),
    }
}

fn arith(op: BinOp, a: &Value, b: &Value) -> EvalResult<Value> {
    match (num(a), num(b)) {
        (Num::Int(x, ux), Num::Int(y, uy)) => {
            let r = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                _ => x.checked_mul(y).ok_or_else(|| overflow(true))?,
            };
            int_result(r, ux || uy)
        }
        (Num::Dbl, _) | (_, Num::Dbl) => {
            let (x, y) = (to_f64(a), to_f64(b));
            let r = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                _ => x * y,
            };
            if r.is_finite() {
                Ok(Value::Double(r))
            } else {
                Err(crate::sql_err(1690, "DOUBLE value is out of range"))
            }
        }
        _ => {
            let x = to_decimal(a).unwrap();
            let y = to_decimal(b).unwrap();
            decimal_ops::value(match op {
                BinOp::Add => decimal_ops::add(x, y),
                BinOp::Sub => decimal_ops::sub(x, y),
                _ => decimal_ops::mul(x, y),
            })
        }
    }
}

/// `/`: decimal result with 4 more fractional digits than the dividend (at most 38),
/// double when either side is a double or string; NULL on division by zero.
fn divide(a: &Value, b: &Value) -> EvalResult<Value> {
    match (num(a), num(b)) {
        (Num::Dbl, _) | (_, Num::Dbl) => {
            let y = to_f64(b);
            if y == 0.0 {
                return Ok(Value::Null);
            }
            Ok(Value::Double(to_f64(a) / y))
        }
        _ => Ok(
            match decimal_ops::div(to_decimal(a).unwrap(), to_decimal(b).unwrap())? {
                Some(d) => Value::Decimal(d),
                None => Value::Null,
            },
        ),
    }
}

// ---- LIKE ----

/// SQL LIKE with `%`, `_` and an escape character; characters match under `coll`
/// (general_ci: by weight, so `'Ä' LIKE 'a'`). No padding: `'a ' LIKE 'a'` is false.
pub fn like(s: &[u8], p: &[u8], esc: u8, coll: Collation) -> bool {
    // Iterative matcher with backtracking on the last '%'.
    let s: Vec<char> = String::from_utf8_lossy(s).chars().collect();
    let pat: Vec<char> = String::from_utf8_lossy(p).chars().collect();
    let esc = esc as char;
    let (mut i, mut j) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if j < pat.len() {
            let c = pat[j];
            if c == '%' {
                star = Some((j, i));
                j += 1;
                continue;
            }
            if c == esc && j + 1 < pat.len() {
                if coll.char_eq(s[i], pat[j + 1]) {
                    i += 1;
                    j += 2;
                    continue;
                }
            } else if c == '_' || coll.char_eq(c, s[i]) {
                i += 1;
                j += 1;
                continue;
            }
        }
        match star {
            Some((sj, si)) => {
                j = sj + 1;
                i = si + 1;
                star = Some((sj, si + 1));
            }
            None => return false,
        }
    }
    while j < pat.len() && pat[j] == '%' {
        j += 1;
    }
    j == pat.len()
}

// ---- CAST ----

pub fn cast(v: Value, t: CastType) -> EvalResult<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    Ok(match t {
        CastType::Signed => Value::Int(to_i64(&v)),
        CastType::Unsigned => match &v {
            Value::UInt(u) => Value::UInt(*u),
            other => Value::UInt(to_i128(other) as u64),
        },
        CastType::Char(None) | CastType::Binary => Value::Bytes(to_bytes(&v)),
        CastType::Char(Some(n)) => {
            let b = to_bytes(&v);
            match std::str::from_utf8(&b) {
                Ok(s) => Value::str(&s.chars().take(n as usize).collect::<String>()),
                Err(_) => Value::Bytes(b.into_iter().take(n as usize).collect()),
            }
        }
        CastType::Double => Value::Double(to_f64(&v)),
        // Out of DECIMAL(p, s)'s range: its largest value of that sign, as MariaDB's.
        CastType::Decimal(p, s) => match to_decimal(&v) {
            Some(d) => match d.rescale(s) {
                Some(r) if r.fits(p, s) => Value::Decimal(r),
                _ => Value::Decimal(Decimal::max_of(p, s, d.is_negative())),
            },
            None => Value::Null,
        },
        CastType::Date => match datetime_of(&v) {
            Some(dt) => Value::Date(dt.date),
            None => Value::Null,
        },
        CastType::DateTime(fsp) => match datetime_of(&v) {
            Some(dt) => Value::DateTime(DateTime {
                micro: cut_micro(dt.micro, fsp),
                ..dt
            }),
            None => Value::Null,
        },
        CastType::Time(fsp) => match cast_time(&v) {
            Some(t) => Value::Time(Time {
                micro: cut_micro(t.micro, fsp),
                ..t
            }),
            None => Value::Null,
        },
        CastType::Number(ty) => enum_set_number(&v, &ty),
        CastType::FixedBinFromKey(f) => fixed_bin::from_key(v, f),
        CastType::FixedBinMemory(f) => fixed_bin::memory(v, f),
        CastType::FixedBin(f) | CastType::FixedBinKey(f) => {
            fixed_bin::cast(v, f, matches!(t, CastType::FixedBinKey(_)), &Ctx::new(&[]))
        }
    })
}

/// Microseconds cut to `fsp` digits (MariaDB truncates unless `TIME_ROUND_FRACTIONAL`).
fn cut_micro(micro: u32, fsp: u8) -> u32 {
    let unit = 10u32.pow(6 - u32::from(fsp.min(6)));
    micro - micro % unit
}

fn cast_time(v: &Value) -> Option<Time> {
    Some(match v {
        Value::Time(t) => *t,
        Value::DateTime(dt) => Time {
            negative: false,
            hours: dt.hour as u32,
            minute: dt.minute,
            second: dt.second,
            micro: dt.micro,
        },
        other => parse_time(&to_string(other))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_matches() {
        let bin = Collation::Utf8mb4Bin;
        let ci = Collation::Utf8mb4GeneralCi;
        assert!(like(b"hello", b"h%o", b'\\', bin));
        assert!(like(b"hello", b"_ello", b'\\', bin));
        assert!(!like(b"hello", b"h%x", b'\\', bin));
        assert!(like(b"a%b", b"a\\%b", b'\\', bin));
        assert!(like(b"", b"%", b'\\', bin));
        assert!(!like(b"Hello", b"h%", b'\\', bin));
        assert!(like(b"Hello", b"h%", b'\\', ci));
        assert!(like("été".as_bytes(), "_TE".as_bytes(), b'\\', ci));
        assert!(!like(b"a ", b"a", b'\\', ci));
    }

    #[test]
    fn division() {
        let v = binary(BinOp::Div, Value::Int(1), Value::Int(3)).unwrap();
        assert_eq!(v.to_string(), "0.3333");
        let v = binary(BinOp::Div, Value::Int(10), Value::Int(4)).unwrap();
        assert_eq!(v.to_string(), "2.5000");
        assert!(binary(BinOp::Div, Value::Int(1), Value::Int(0))
            .unwrap()
            .is_null());
    }

    #[test]
    fn compare_mixed() {
        let ci = Collation::Utf8mb4GeneralCi;
        assert_eq!(
            compare(&Value::Int(5), &Value::str("5"), ci),
            Some(Ordering::Equal)
        );
        assert_eq!(
            compare(&Value::str("a "), &Value::str("A"), ci),
            Some(Ordering::Equal)
        );
        assert_eq!(
            compare(&Value::str("a "), &Value::str("A"), Collation::Utf8mb4Bin),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(&Value::str("a "), &Value::str("a"), Collation::Binary),
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn store_int() {
        let ty = ColumnType::Int {
            bytes: 1,
            unsigned: false,
        };
        assert!(matches!(
            convert_for_column(&Value::Int(300), &ty),
            Err((ConvIssue::OutOfRange, Value::Int(127)))
        ));
        assert!(matches!(
            convert_for_column(&Value::str("abc"), &ty),
            Err((ConvIssue::BadValue, _))
        ));
        assert_eq!(
            convert_for_column(&Value::str(" 42 "), &ty),
            Ok(Value::Int(42))
        );
    }
}
