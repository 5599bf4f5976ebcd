//! Subqueries at run time. Uncorrelated ones run once before their statement and are
//! replaced by their values ([`resolve_subqueries`]). Correlated ones run per outer row
//! through a [`SubHost`]: the subquery is copied with its outer references replaced by the
//! row's values (so the planner sees constants and can use indexes), run, and its result
//! cached under those values.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use onelog_types::{code, Collation, SqlError, Value};

use super::{run_select, ExecCtx};
use crate::binder::{visit_exprs_mut, Select};
use crate::expr::{self, sort_cmp, EvalResult, Expr, SubqueryEval};
use crate::sql_err;

/// Most cached results kept per subquery host before the cache starts over.
const CACHE_LIMIT: usize = 65_536;

fn too_many_rows() -> SqlError {
    sql_err(
        code::ER_SUBQUERY_NO_1_ROW,
        "Subquery returns more than 1 row",
    )
}

/// Sorted distinct (under `coll`) non-NULL first-column values, and whether a NULL was
/// seen.
fn value_set(rows: Vec<Vec<Value>>, coll: Collation) -> (Vec<Value>, bool) {
    let mut vals = Vec::with_capacity(rows.len());
    let mut has_null = false;
    for r in rows {
        match r.into_iter().next() {
            Some(Value::Null) | None => has_null = true,
            Some(v) => vals.push(v),
        }
    }
    vals.sort_by(|a, b| sort_cmp(a, b, coll));
    vals.dedup_by(|a, b| sort_cmp(a, b, coll) == Ordering::Equal);
    (vals, has_null)
}

/// Replaces the references of `sel` (a subquery of the query whose row is `row`) to that
/// row by its values.
pub fn bind_outer_row(sel: &mut Select, row: &[Value]) {
    visit_exprs_mut(sel, 0, &mut |e, depth| {
        e.walk_mut(&mut |x| {
            if let Expr::Outer(d, p) = x {
                if *d == depth + 1 {
                    *x = Expr::Lit(row.get(*p).cloned().unwrap_or(Value::Null));
                }
            }
        })
    });
}

/// Runs the uncorrelated subqueries `exprs` use and replaces their references with values;
/// correlated ones are left for a [`SubHost`].
pub fn resolve_subqueries(
    cx: &mut ExecCtx,
    subs: &mut [Select],
    exprs: &mut [&mut Expr],
) -> Result<(), SqlError> {
    if subs.is_empty() {
        return Ok(());
    }
    let mut needed = vec![false; subs.len()];
    for e in exprs.iter() {
        e.walk(&mut |x| match x {
            Expr::Subquery(i)
            | Expr::InSubquery(_, i, ..)
            | Expr::RowInSubquery(_, i, ..)
            | Expr::Exists(i, _)
            | Expr::Quantified(_, _, i, ..) => {
                if let Some(n) = needed.get_mut(*i) {
                    *n = subs[*i].params.is_empty();
                }
            }
            _ => {}
        });
    }
    let mut results: Vec<Option<Vec<Vec<Value>>>> = vec![None; subs.len()];
    for (i, s) in subs.iter_mut().enumerate() {
        if needed[i] {
            results[i] = Some(run_select(cx, s)?);
        }
    }
    for e in exprs.iter_mut() {
        let mut error = None;
        e.walk_mut(&mut |x| {
            let rows = match x {
                Expr::Subquery(i)
                | Expr::Exists(i, _)
                | Expr::InSubquery(_, i, ..)
                | Expr::RowInSubquery(_, i, ..)
                | Expr::Quantified(_, _, i, ..) => match results.get(*i) {
                    Some(Some(r)) => r,
                    _ => return,
                },
                _ => return,
            };
            let rep = match x {
                Expr::Subquery(_) => {
                    if rows.len() > 1 {
                        error = Some(too_many_rows());
                        return;
                    }
                    Expr::Lit(rows.first().map(|r| r[0].clone()).unwrap_or(Value::Null))
                }
                Expr::Exists(_, neg) => Expr::Lit(expr::bool_val(rows.is_empty() == *neg)),
                Expr::RowInSubquery(xs, _, neg, colls) => Expr::RowInSet(
                    std::mem::take(xs),
                    Arc::new(rows.clone()),
                    *neg,
                    std::mem::take(colls),
                ),
                Expr::InSubquery(a, _, neg, coll) => {
                    let (vals, has_null) = value_set(rows.clone(), *coll);
                    Expr::InSet(a.clone(), Arc::new(vals), has_null, *neg, *coll)
                }
                Expr::Quantified(a, op, _, all, coll) => {
                    let (vals, has_null) = value_set(rows.clone(), *coll);
                    Expr::QuantSet(a.clone(), *op, Arc::new(vals), has_null, *all, *coll)
                }
                _ => return,
            };
            *x = rep;
        });
        if let Some(e) = error {
            return Err(e);
        }
    }
    Ok(())
}

#[derive(Clone)]
enum Cached {
    Scalar(Value),
    Exists(bool),
    Values(Rc<(Vec<Value>, bool)>),
    Rows(Rc<Vec<Vec<Value>>>),
}

/// Evaluates the correlated subqueries of one query for its rows, and gives the executor
/// access to the statement's context while doing so.
pub struct SubHost<'h, 'c> {
    cx: RefCell<&'h mut ExecCtx<'c>>,
    /// The statement's kill flag (readable while `cx` is borrowed).
    interrupt: &'c std::sync::atomic::AtomicBool,
    subs: &'h [Select],
    cache: RefCell<HashMap<(usize, Vec<u8>), Cached>>,
}

impl<'h, 'c> SubHost<'h, 'c> {
    pub fn new(cx: &'h mut ExecCtx<'c>, subs: &'h [Select]) -> Self {
        SubHost {
            interrupt: cx.interrupt,
            cx: RefCell::new(cx),
            subs,
            cache: RefCell::new(HashMap::new()),
        }
    }

    /// Runs `f` with the statement context (not while a subquery runs).
    pub fn with_cx<T>(&self, f: impl FnOnce(&mut ExecCtx<'c>) -> T) -> T {
        f(&mut self.cx.borrow_mut())
    }

    fn lookup(
        &self,
        i: usize,
        row: &[Value],
        limit: Option<u64>,
        make: impl FnOnce(Vec<Vec<Value>>) -> Result<Cached, SqlError>,
    ) -> EvalResult<Cached> {
        let Some(t) = self.subs.get(i) else {
            return Err(sql_err(code::ER_UNKNOWN_ERROR, "unknown subquery"));
        };
        let mut key = Vec::new();
        for p in &t.params {
            // Exact values (binary): the result may depend on more than equality.
            expr::group_key(
                row.get(*p).unwrap_or(&Value::Null),
                Collation::Binary,
                &mut key,
            );
        }
        if let Some(c) = self.cache.borrow().get(&(i, key.clone())) {
            return Ok(c.clone());
        }
        let mut inst = t.clone();
        bind_outer_row(&mut inst, row);
        if let Some(l) = limit {
            inst.limit = Some(inst.limit.map_or(l, |x| x.min(l)));
        }
        let rows = {
            let mut cx = self.cx.borrow_mut();
            cx.check_interrupt()?;
            run_select(&mut cx, &mut inst)?
        };
        let c = make(rows)?;
        let mut cache = self.cache.borrow_mut();
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert((i, key), c.clone());
        Ok(c)
    }
}

impl SubqueryEval for SubHost<'_, '_> {
    fn call_routine(&self, f: &crate::routines::FnRef, args: Vec<Value>) -> EvalResult<Value> {
        let mut cx = self.cx.borrow_mut();
        let cx = &mut **cx;
        match cx.host.as_deref_mut() {
            Some(h) => h.call_function(f, args, cx.txn, cx.warnings),
            None => Err(sql_err(
                code::ER_NOT_SUPPORTED_YET,
                "This version of MariaDB doesn't yet support 'stored functions here'",
            )),
        }
    }

    fn interrupted(&self) -> bool {
        self.interrupt.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn warn(&self, e: SqlError) {
        self.cx.borrow_mut().warn(e);
    }

    fn user_lock(
        &self,
        f: crate::user_locks::UserLockFn,
        name: Option<&str>,
        timeout: f64,
    ) -> EvalResult<Value> {
        let mut cx = self.cx.borrow_mut();
        match cx.host.as_deref_mut() {
            Some(h) => h.user_lock(f, name, timeout, self.interrupt),
            None => Err(sql_err(
                code::ER_NOT_SUPPORTED_YET,
                "This version of MariaDB doesn't yet support 'user-level locks here'",
            )),
        }
    }

    fn sequence(&self, f: crate::sequences::SeqFn, args: &[Value]) -> EvalResult<Value> {
        let mut cx = self.cx.borrow_mut();
        match cx.host.as_deref_mut() {
            Some(h) => h.sequence(f, args),
            None => Err(sql_err(
                code::ER_NOT_SUPPORTED_YET,
                "This version of MariaDB doesn't yet support 'sequences here'",
            )),
        }
    }

    fn scalar(&self, i: usize, row: &[Value]) -> EvalResult<Value> {
        let c = self.lookup(i, row, Some(2), |rows| {
            if rows.len() > 1 {
                return Err(too_many_rows());
            }
            Ok(Cached::Scalar(
                rows.into_iter()
                    .next()
                    .and_then(|r| r.into_iter().next())
                    .unwrap_or(Value::Null),
            ))
        })?;
        match c {
            Cached::Scalar(v) => Ok(v),
            _ => Err(sql_err(code::ER_UNKNOWN_ERROR, "subquery kind")),
        }
    }

    fn exists(&self, i: usize, row: &[Value]) -> EvalResult<bool> {
        match self.lookup(i, row, Some(1), |rows| Ok(Cached::Exists(!rows.is_empty())))? {
            Cached::Exists(b) => Ok(b),
            _ => Err(sql_err(code::ER_UNKNOWN_ERROR, "subquery kind")),
        }
    }

    fn rows(&self, i: usize, row: &[Value]) -> EvalResult<Rc<Vec<Vec<Value>>>> {
        match self.lookup(i, row, None, |rows| Ok(Cached::Rows(Rc::new(rows))))? {
            Cached::Rows(r) => Ok(r),
            _ => Err(sql_err(code::ER_UNKNOWN_ERROR, "subquery kind")),
        }
    }

    fn values(
        &self,
        i: usize,
        row: &[Value],
        coll: Collation,
    ) -> EvalResult<Rc<(Vec<Value>, bool)>> {
        match self.lookup(i, row, None, |rows| {
            Ok(Cached::Values(Rc::new(value_set(rows, coll))))
        })? {
            Cached::Values(v) => Ok(v),
            _ => Err(sql_err(code::ER_UNKNOWN_ERROR, "subquery kind")),
        }
    }
}
