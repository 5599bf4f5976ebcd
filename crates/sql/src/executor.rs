//! Executor: runs planned statements against a transaction. Joins are nested loops over
//! the chosen access paths (index lookups use values from the outer rows), with
//! outer-joined groups NULL-extended when they match nothing; correlated subqueries run per
//! row through a [`subquery::SubHost`]; set operations and derived tables are materialised;
//! aggregation is hash-based; sorting is in memory. INSERT/UPDATE/DELETE (also multi-table)
//! convert values to column types under the session's sql_mode and report MariaDB's
//! affected-row counts.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering as AtOrd};
use std::sync::Arc;

use onelog_engine::{EngineError, KeyRange, LockMode, ScanOptions, TableDef, Txn};
use onelog_types::{code, Collation, ColumnType, DateTime, Decimal, SqlError, Value};

use crate::binder::{AggKind, Delete, Insert, InsertSource, JoinKind, Select, SourceKind, Update};
use crate::expr::{self, eval, sort_cmp, truth, Ctx, Expr};
use crate::planner::{self, Access};
use crate::sql_err;

mod aggregate;
mod pushdown;
mod setop;
mod sort;
mod subquery;
mod window;

use aggregate::{agg_add, agg_final, agg_init, sum_value, AggState, Group};
pub use subquery::resolve_subqueries;
use subquery::SubHost;

type RowIter = Box<dyn Iterator<Item = Result<Vec<Value>, SqlError>>>;
/// Receives each joined row; returns false to stop.
type RowSink<'a> = dyn FnMut(&mut Vec<Value>) -> Result<bool, SqlError> + 'a;

/// What a statement needs from its session while it runs.
pub struct ExecCtx<'a> {
    pub txn: &'a mut Txn,
    pub interrupt: &'a AtomicBool,
    pub warnings: &'a mut Vec<SqlError>,
    /// STRICT_TRANS_TABLES / STRICT_ALL_TABLES in sql_mode.
    pub strict: bool,
    /// NO_AUTO_VALUE_ON_ZERO in sql_mode.
    pub no_auto_value_on_zero: bool,
    /// `check_constraint_checks`: CHECK constraints are enforced.
    pub check_constraints: bool,
    /// `foreign_key_checks`: FOREIGN KEY constraints are enforced (`foreign_keys`).
    pub foreign_key_checks: bool,
    /// CHECK OPTION conditions of the views the statement writes through.
    pub view_checks: &'a [crate::checks::ViewCheck],
    pub now: DateTime,
    /// Runs the stored functions and triggers of the statement (the session).
    pub host: Option<&'a mut dyn crate::routines::RoutineHost>,
}

pub fn engine_err(e: EngineError) -> SqlError {
    let mut s = e.to_sql_error();
    if s.code == code::ER_DUP_ENTRY {
        s.state = "23000";
    }
    s
}

impl ExecCtx<'_> {
    pub(crate) fn check_interrupt(&self) -> Result<(), SqlError> {
        if self.interrupt.load(AtOrd::Relaxed) {
            return Err(sql_err(
                code::ER_QUERY_INTERRUPTED,
                "Query execution was interrupted",
            ));
        }
        Ok(())
    }

    pub(crate) fn warn(&mut self, e: SqlError) {
        if self.warnings.len() < 65535 {
            self.warnings.push(e);
        }
    }
}

// ------------------------------------------------------------------ subqueries

/// Runs the uncorrelated subqueries, materialises derived tables and set operations, and
/// plans the select.
fn prepare_select(cx: &mut ExecCtx, sel: &mut Select) -> Result<(), SqlError> {
    let mut subs = std::mem::take(&mut sel.subqueries);
    let r = {
        let mut exprs: Vec<&mut Expr> = Vec::new();
        exprs.extend(sel.filter.iter_mut());
        exprs.extend(sel.items.iter_mut());
        exprs.extend(sel.group_by.iter_mut());
        exprs.extend(sel.order_by.iter_mut().map(|(e, _)| e));
        if let Some(h) = &mut sel.having {
            exprs.push(h);
        }
        for a in sel.aggs.iter_mut() {
            exprs.push(&mut a.arg);
            exprs.extend(a.order.iter_mut().map(|(e, _, _)| e));
        }
        for w in sel.windows.iter_mut() {
            exprs.extend(w.exprs_mut());
        }
        for s in sel.sources.iter_mut() {
            exprs.extend(s.on.iter_mut());
            exprs.extend(s.post.iter_mut());
        }
        resolve_subqueries(cx, &mut subs, &mut exprs)
    };
    sel.subqueries = subs;
    r?;
    for si in 0..sel.sources.len() {
        pushdown::push_into_derived(sel, si);
    }
    for s in sel.sources.iter_mut() {
        let rows = match &mut s.kind {
            SourceKind::Derived(d) => run_select(cx, d)?,
            SourceKind::SetOp(op) => setop::run_setop(cx, &mut op.root, &op.types)?,
            SourceKind::Recursive(r) => setop::run_recursive(cx, r)?,
            _ => continue,
        };
        s.kind = SourceKind::Rows(Arc::new(rows));
    }
    planner::plan(sel);
    Ok(())
}

// ------------------------------------------------------------------ scans

fn key_value(v: &Value, ty: &ColumnType) -> Option<Value> {
    expr::exact_key(v, ty)
}

/// The key range (or ranges) for a source's access path, given the row so far.
fn ranges(a: &Access, t: &TableDef, row: &[Value]) -> Result<Option<Vec<KeyRange>>, SqlError> {
    let Some(ii) = a.index else {
        return Ok(Some(vec![KeyRange::all()]));
    };
    let idx = &t.indexes[ii];
    let cx = Ctx::new(row);
    let mut prefix = Vec::with_capacity(a.eq.len());
    for (k, e) in a.eq.iter().enumerate() {
        let v = eval(e, &cx)?;
        if v.is_null() {
            // `col = NULL` matches nothing.
            return Ok(None);
        }
        match key_value(&v, &t.columns[idx.columns[k]].ty) {
            Some(kv) => prefix.push(kv),
            None => {
                // Not exactly representable: use what we have so far (a superset).
                return Ok(Some(vec![if prefix.is_empty() {
                    KeyRange::all()
                } else {
                    KeyRange::prefix(prefix)
                }]));
            }
        }
    }
    let next_ty = idx.columns.get(a.eq.len()).map(|&c| t.columns[c].ty);
    if let (Some(list), Some(ty)) = (&a.in_list, next_ty) {
        let mut out = Vec::new();
        let mut vals = Vec::new();
        for e in list {
            let v = eval(e, &cx)?;
            if v.is_null() {
                continue;
            }
            match key_value(&v, &ty) {
                Some(kv) => vals.push(kv),
                None => {
                    return Ok(Some(vec![if prefix.is_empty() {
                        KeyRange::all()
                    } else {
                        KeyRange::prefix(prefix)
                    }]))
                }
            }
        }
        // One range per distinct key: values equal under the column's collation share one.
        let coll = ty.collation().unwrap_or(Collation::Binary);
        vals.sort_by(|a, b| sort_cmp(a, b, coll));
        vals.dedup_by(|a, b| sort_cmp(a, b, coll) == Ordering::Equal);
        if a.reverse {
            vals.reverse();
        }
        for v in vals {
            let mut p = prefix.clone();
            p.push(v);
            out.push(KeyRange::prefix(p));
        }
        return Ok(Some(out));
    }
    let bound =
        |b: &Option<(Expr, bool)>, lower: bool| -> Result<Option<Bound<Vec<Value>>>, SqlError> {
            let Some((e, incl)) = b else {
                return Ok(Some(if prefix.is_empty() {
                    Bound::Unbounded
                } else {
                    Bound::Included(prefix.clone())
                }));
            };
            let v = eval(e, &cx)?;
            if v.is_null() {
                return Ok(None);
            }
            let Some(kv) = next_ty.and_then(|ty| key_value(&v, &ty)) else {
                let _ = lower;
                return Ok(Some(if prefix.is_empty() {
                    Bound::Unbounded
                } else {
                    Bound::Included(prefix.clone())
                }));
            };
            let mut p = prefix.clone();
            p.push(kv);
            Ok(Some(if *incl {
                Bound::Included(p)
            } else {
                Bound::Excluded(p)
            }))
        };
    let (Some(lower), Some(upper)) = (bound(&a.lower, true)?, bound(&a.upper, false)?) else {
        return Ok(None);
    };
    // NULLs sort first in keys: `col < x` must not return NULLs. A lower bound of
    // "after NULL" is expressed as Excluded(prefix + [NULL]).
    let lower = match (&lower, &a.lower, &a.upper) {
        (Bound::Unbounded | Bound::Included(_), None, Some(_)) => {
            let mut p = prefix.clone();
            p.push(Value::Null);
            Bound::Excluded(p)
        }
        _ => lower,
    };
    Ok(Some(vec![KeyRange { lower, upper }]))
}

/// Rows of one source for the current outer row.
fn source_rows(
    cx: &mut ExecCtx,
    sel: &Select,
    si: usize,
    row: &[Value],
    limit_hint: Option<u64>,
) -> Result<RowIter, SqlError> {
    let src = &sel.sources[si];
    let lock = src.lock.unwrap_or(sel.lock);
    match &src.kind {
        SourceKind::Rows(r) => {
            let r = r.clone();
            Ok(Box::new((0..r.len()).map(move |i| Ok(r[i].clone()))))
        }
        SourceKind::Derived(_)
        | SourceKind::SetOp(_)
        | SourceKind::Recursive(_)
        | SourceKind::Working => Err(sql_err(
            code::ER_UNKNOWN_ERROR,
            "derived table not materialised",
        )),
        SourceKind::Table(t) => {
            let a = &src.access;
            let Some(rs) = ranges(a, t, row)? else {
                return Ok(Box::new(std::iter::empty()));
            };
            let ii = a.index.unwrap_or(0);
            let idx = &t.indexes[ii];
            // Point lookup on the full primary key.
            if idx.primary && rs.iter().all(|r| matches!((&r.lower, &r.upper), (Bound::Included(l), Bound::Included(u)) if l.len() == idx.columns.len() && l == u)) && !t.hidden_pk {
                let mut out = Vec::new();
                for r in rs {
                    if let Bound::Included(pk) = r.lower {
                        if let Some(row) = cx.txn.get(t, &pk, lock).map_err(engine_err)? {
                            out.push(Ok(row));
                        }
                    }
                }
                return Ok(Box::new(out.into_iter()));
            }
            let opts = ScanOptions {
                reverse: a.reverse,
                lock,
                covering: a.covering && lock == LockMode::None,
            };
            let _ = limit_hint;
            let mut cursors = Vec::new();
            for r in rs {
                cursors.push(cx.txn.scan(t, ii, r, opts).map_err(engine_err)?);
            }
            Ok(Box::new(
                cursors.into_iter().flatten().map(|r| r.map_err(engine_err)),
            ))
        }
    }
}

fn passes(h: &SubHost, conds: &[Expr], row: &[Value]) -> Result<bool, SqlError> {
    let cx = Ctx {
        row,
        aggs: &[],
        subs: Some(h),
    };
    for c in conds {
        if truth(&eval(c, &cx)?) != Some(true) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Nested-loop join of `sources[level..end]`: calls `out` for every joined row passing the
/// conditions; `out` returns false to stop. An outer-joined group that matches no row is
/// NULL-extended once.
fn join(
    h: &SubHost,
    sel: &Select,
    level: usize,
    end: usize,
    row: &mut Vec<Value>,
    out: &mut RowSink,
) -> Result<bool, SqlError> {
    if level >= end {
        return out(row);
    }
    let src = &sel.sources[level];
    if src.join != JoinKind::Left {
        return scan(h, sel, level, end, row, out);
    }
    let g = src.group_end.clamp(level + 1, end);
    let mut matched = false;
    let go = {
        let mut inner = |row: &mut Vec<Value>| -> Result<bool, SqlError> {
            matched = true;
            if passes(h, &src.post, row)? {
                join(h, sel, g, end, row, &mut *out)
            } else {
                Ok(true)
            }
        };
        scan(h, sel, level, g, row, &mut inner)?
    };
    if !go {
        return Ok(false);
    }
    if !matched {
        for s in &sel.sources[level..g] {
            for v in &mut row[s.offset..s.offset + s.width] {
                *v = Value::Null;
            }
        }
        if passes(h, &src.post, row)? {
            return join(h, sel, g, end, row, out);
        }
    }
    Ok(true)
}

/// The rows of `sources[level]` passing its conditions, each joined with the sources after
/// it up to `end`.
fn scan(
    h: &SubHost,
    sel: &Select,
    level: usize,
    end: usize,
    row: &mut Vec<Value>,
    out: &mut RowSink,
) -> Result<bool, SqlError> {
    let src = &sel.sources[level];
    let (off, width) = (src.offset, src.width);
    let it = h.with_cx(|cx| source_rows(cx, sel, level, row, sel.limit))?;
    let mut n = 0u64;
    for r in it {
        let r = r?;
        n += 1;
        if n.is_multiple_of(1024) {
            h.with_cx(|cx| cx.check_interrupt())?;
        }
        for (i, v) in r.into_iter().take(width).enumerate() {
            row[off + i] = v;
        }
        if !passes(h, &src.on, row)? || !passes(h, &src.filters, row)? {
            continue;
        }
        if !join(h, sel, level + 1, end, row, out)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Evaluates a constant expression inside a statement (stored functions and user-level
/// locks reach the session through it; `subs` are the subqueries it names).
pub fn eval_in_statement(cx: &mut ExecCtx, subs: &[Select], e: &Expr) -> Result<Value, SqlError> {
    let host = SubHost::new(cx, subs);
    let ctx = Ctx {
        row: &[],
        aggs: &[],
        subs: Some(&host),
    };
    eval(e, &ctx)
}

// ------------------------------------------------------------------ SELECT

/// Runs a SELECT; returns the result rows.
pub fn run_select(cx: &mut ExecCtx, sel: &mut Select) -> Result<Vec<Vec<Value>>, SqlError> {
    onelog_types::stack::check()?;
    prepare_select(cx, sel)?;
    run_planned(cx, sel)
}

fn minmax_from_index(cx: &mut ExecCtx, sel: &Select) -> Result<Vec<Value>, SqlError> {
    let src = &sel.sources[0];
    let t = src.table().unwrap().clone();
    let mut vals = Vec::new();
    for a in &sel.aggs {
        let Expr::Col(c) = a.arg else { unreachable!() };
        let c = c - src.offset;
        let ii = t
            .indexes
            .iter()
            .position(|i| i.columns.first() == Some(&c))
            .unwrap();
        let mut v = Value::Null;
        let range = if a.kind == AggKind::Min {
            // Skip NULLs: they sort first.
            KeyRange {
                lower: Bound::Excluded(vec![Value::Null]),
                upper: Bound::Unbounded,
            }
        } else {
            KeyRange::all()
        };
        let opts = ScanOptions {
            reverse: a.kind == AggKind::Max,
            lock: LockMode::None,
            covering: !t.indexes[ii].primary,
        };
        for r in cx.txn.scan(&t, ii, range, opts).map_err(engine_err)? {
            let r = r.map_err(engine_err)?;
            if !r[c].is_null() {
                v = r[c].clone();
                break;
            }
        }
        vals.push(v);
    }
    Ok(vals)
}

fn run_planned(cx: &mut ExecCtx, sel: &Select) -> Result<Vec<Vec<Value>>, SqlError> {
    if sel.sources.first().is_some_and(|s| s.access.minmax) {
        let aggs = minmax_from_index(cx, sel)?;
        let row = vec![Value::Null; sel.width];
        let h = SubHost::new(cx, &sel.subqueries);
        return finish(&h, sel, vec![(row, aggs)]);
    }
    let h = SubHost::new(cx, &sel.subqueries);
    let h = &h;
    // Constant WHERE conjuncts with no sources.
    if sel.sources.is_empty() && !sel.aggregate && !passes(h, &sel.filter, &[])? {
        return Ok(vec![]);
    }
    let early_limit = if !sel.aggregate
        && !sel.distinct
        && sel.windows.is_empty()
        && (sel.order_by.is_empty() || sel.ordered)
    {
        sel.limit.map(|l| l.saturating_add(sel.offset))
    } else {
        None
    };
    if early_limit == Some(0) {
        return Ok(vec![]);
    }
    let mut row = vec![Value::Null; sel.width];
    let n = sel.sources.len();
    if !sel.aggregate {
        let mut rows: Vec<(Vec<Value>, Vec<Value>)> = Vec::new();
        if sel.sources.is_empty() {
            if passes(h, &sel.filter, &row)? {
                rows.push((row, vec![]));
            }
        } else {
            join(h, sel, 0, n, &mut row, &mut |r| {
                rows.push((r.to_vec(), vec![]));
                Ok(early_limit.is_none_or(|l| (rows.len() as u64) < l))
            })?;
        }
        return finish(h, sel, rows);
    }
    // Aggregation.
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    let new_group = |r: &[Value]| Group {
        row: r.to_vec(),
        states: sel.aggs.iter().map(|a| agg_init(a.kind)).collect(),
        seen: sel.aggs.iter().map(|_| HashSet::new()).collect(),
    };
    let mut add = |groups: &mut Vec<Group>, r: &[Value]| -> Result<bool, SqlError> {
        let cxr = Ctx {
            row: r,
            aggs: &[],
            subs: Some(h),
        };
        let mut key = Vec::new();
        for (g, coll) in sel.group_by.iter().zip(&sel.group_colls) {
            expr::group_key(&eval(g, &cxr)?, *coll, &mut key);
        }
        let gi = match index.get(&key) {
            Some(&i) => i,
            None => {
                groups.push(new_group(r));
                index.insert(key, groups.len() - 1);
                groups.len() - 1
            }
        };
        let g = &mut groups[gi];
        for (ai, a) in sel.aggs.iter().enumerate() {
            let v = if a.kind == AggKind::CountStar {
                Value::Null
            } else {
                eval(&a.arg, &cxr)?
            };
            let coll = a.arg_type.collation().unwrap_or(Collation::DEFAULT);
            if a.distinct {
                if v.is_null() {
                    continue;
                }
                let mut k = Vec::new();
                expr::group_key(&v, coll, &mut k);
                if !g.seen[ai].insert(k) {
                    continue;
                }
            }
            let keys = a
                .order
                .iter()
                .map(|(e, _, _)| eval(e, &cxr))
                .collect::<Result<Vec<_>, _>>()?;
            agg_add(&mut g.states[ai], a.kind, v, coll, keys)?;
        }
        Ok(true)
    };
    if sel.sources.is_empty() {
        if passes(h, &sel.filter, &row)? {
            add(&mut groups, &row)?;
        }
    } else {
        join(h, sel, 0, n, &mut row, &mut |r| add(&mut groups, r))?;
    }
    if groups.is_empty() && sel.group_by.is_empty() {
        groups.push(new_group(&vec![Value::Null; sel.width]));
    }
    let mut out: Vec<(Vec<Value>, Vec<Value>)> = groups
        .into_iter()
        .map(|g| {
            let aggs = g
                .states
                .iter()
                .zip(&sel.aggs)
                .map(|(st, a)| agg_final(st, a))
                .collect();
            (g.row, aggs)
        })
        .collect();
    // MariaDB sorts GROUP BY results by the grouping expressions unless ORDER BY is given.
    if sel.order_by.is_empty() && !sel.group_by.is_empty() {
        let mut keyed = Vec::with_capacity(out.len());
        for (r, a) in out {
            let c = Ctx {
                row: &r,
                aggs: &a,
                subs: Some(h),
            };
            let mut k = Vec::new();
            for g in &sel.group_by {
                k.push(eval(g, &c)?);
            }
            keyed.push((k, (r, a)));
        }
        sort::sort_polled(
            &mut keyed,
            |x, y| cmp_keys(&x.0, &y.0, &[], &sel.group_colls),
            || h.with_cx(|cx| cx.check_interrupt()),
        )?;
        out = keyed.into_iter().map(|x| x.1).collect();
    }
    finish(h, sel, out)
}

/// Compares sort keys: `desc` per key (missing: ascending), strings under `colls`.
fn cmp_keys(a: &[Value], b: &[Value], desc: &[bool], colls: &[Collation]) -> Ordering {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let o = sort_cmp(x, y, colls.get(i).copied().unwrap_or(Collation::DEFAULT));
        let o = if desc.get(i).copied().unwrap_or(false) {
            o.reverse()
        } else {
            o
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// HAVING, window functions, ORDER BY, projection, DISTINCT, OFFSET/LIMIT.
fn finish(
    h: &SubHost,
    sel: &Select,
    rows: Vec<(Vec<Value>, Vec<Value>)>,
) -> Result<Vec<Vec<Value>>, SqlError> {
    h.with_cx(|cx| cx.check_interrupt())?;
    fn ctx<'a>(h: &'a SubHost, row: &'a [Value], aggs: &'a [Value]) -> Ctx<'a> {
        Ctx {
            row,
            aggs,
            subs: Some(h),
        }
    }
    let mut rows = rows;
    if let Some(hv) = &sel.having {
        let mut kept = Vec::with_capacity(rows.len());
        for (r, a) in rows {
            if truth(&eval(hv, &ctx(h, &r, &a))?) == Some(true) {
                kept.push((r, a));
            }
        }
        rows = kept;
    }
    if !sel.windows.is_empty() {
        window::compute(h, sel, &mut rows)?;
    }
    if !sel.order_by.is_empty() && !sel.ordered {
        let desc: Vec<bool> = sel.order_by.iter().map(|(_, d)| *d).collect();
        let mut keyed = Vec::with_capacity(rows.len());
        for (r, a) in rows {
            let c = ctx(h, &r, &a);
            let mut k = Vec::with_capacity(sel.order_by.len());
            for (e, _) in &sel.order_by {
                k.push(eval(e, &c)?);
            }
            keyed.push((k, (r, a)));
        }
        sort::sort_polled(
            &mut keyed,
            |x, y| cmp_keys(&x.0, &y.0, &desc, &sel.order_colls),
            || h.with_cx(|cx| cx.check_interrupt()),
        )?;
        rows = keyed.into_iter().map(|x| x.1).collect();
    }
    let mut out = Vec::with_capacity(rows.len());
    let mut seen = HashSet::new();
    let mut skipped = 0u64;
    for (r, a) in rows {
        let c = ctx(h, &r, &a);
        let mut o = Vec::with_capacity(sel.items.len());
        for e in &sel.items {
            o.push(eval(e, &c)?);
        }
        if sel.distinct {
            let mut k = Vec::new();
            for (i, v) in o.iter().enumerate() {
                let coll = sel.columns.get(i).and_then(|c| c.ty.collation());
                expr::group_key(v, coll.unwrap_or(Collation::DEFAULT), &mut k);
            }
            if !seen.insert(k) {
                continue;
            }
        }
        if skipped < sel.offset {
            skipped += 1;
            continue;
        }
        if sel.limit.is_some_and(|l| out.len() as u64 >= l) {
            break;
        }
        out.push(o);
    }
    Ok(out)
}

/// Plans a select and returns its EXPLAIN rows.
pub fn explain_select(cx: &mut ExecCtx, sel: &mut Select) -> Result<Vec<Vec<Value>>, SqlError> {
    prepare_select(cx, sel)?;
    Ok(planner::explain(sel))
}

/// Rows matched by an UPDATE/DELETE (locked; joined rows for multi-table statements), in
/// ORDER BY order, limited. The select must be prepared.
fn matching_rows(h: &SubHost, sel: &Select) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut rows = Vec::new();
    let early = if sel.order_by.is_empty() || sel.ordered {
        sel.limit
    } else {
        None
    };
    if early == Some(0) {
        return Ok(rows);
    }
    let mut row = vec![Value::Null; sel.width];
    join(h, sel, 0, sel.sources.len(), &mut row, &mut |r| {
        rows.push(r.to_vec());
        Ok(early.is_none_or(|l| (rows.len() as u64) < l))
    })?;
    if !sel.order_by.is_empty() && !sel.ordered {
        let desc: Vec<bool> = sel.order_by.iter().map(|(_, d)| *d).collect();
        let mut keyed = Vec::with_capacity(rows.len());
        for r in rows {
            let c = Ctx {
                row: &r,
                aggs: &[],
                subs: Some(h),
            };
            let mut k = Vec::new();
            for (e, _) in &sel.order_by {
                k.push(eval(e, &c)?);
            }
            keyed.push((k, r));
        }
        keyed.sort_by(|x, y| cmp_keys(&x.0, &y.0, &desc, &sel.order_colls));
        rows = keyed.into_iter().map(|x| x.1).collect();
    }
    if let Some(l) = sel.limit {
        rows.truncate(l as usize);
    }
    Ok(rows)
}

// ------------------------------------------------------------------ writes

/// Converts a value for column `c` of `t` (row number `rowno` for messages), applying
/// strict mode: an error, or a warning and the adjusted value.
pub(crate) fn store(
    cx: &mut ExecCtx,
    t: &TableDef,
    c: usize,
    v: Value,
    rowno: u64,
    strict: bool,
) -> Result<Value, SqlError> {
    let col = &t.columns[c];
    if v.is_null() {
        if col.nullable || col.auto_increment {
            return Ok(Value::Null);
        }
        return Ok(Value::Null); // NOT NULL checked by the caller
    }
    if let (Some(f), Some(from)) = (col.ty.fixed_bin(), expr::uncastable_value_type(&v)) {
        // A number or temporal into UUID/INET6: an error in every mode.
        return Err(expr::cannot_cast(from, f.name(), &t.db, &t.name, &col.name));
    }
    match expr::convert_for_column(&v, &col.ty).and_then(|x| crate::num_attrs::check_value(col, x))
    {
        Ok(x) => Ok(x),
        Err((issue, adjusted)) => {
            if strict {
                Err(issue.error(&col.ty, &t.db, &t.name, &col.name, &v, rowno))
            } else {
                cx.warn(issue.warning(&col.ty, &t.db, &t.name, &col.name, &v, rowno));
                // (A bad UUID/INET6 is NULL, or the zero value in a NOT NULL column.)
                Ok(if adjusted.is_null() && !col.nullable {
                    zero_value(&col.ty)
                } else {
                    adjusted
                })
            }
        }
    }
}

/// The implicit value MariaDB stores for a NOT NULL column given NULL in non-strict mode.
pub(crate) fn zero_value(ty: &ColumnType) -> Value {
    match ty {
        ColumnType::Int { unsigned: true, .. } => Value::UInt(0),
        ColumnType::Int { .. } => Value::Int(0),
        ColumnType::Float | ColumnType::Double => Value::Double(0.0),
        ColumnType::Decimal { scale, .. } => Value::Decimal(Decimal::new(0, *scale)),
        ColumnType::Date => Value::Date(expr::zero_date()),
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => Value::DateTime(DateTime {
            date: expr::zero_date(),
            hour: 0,
            minute: 0,
            second: 0,
            micro: 0,
        }),
        ColumnType::Time { .. } => Value::Time(onelog_types::Time::from_micros(0)),
        ColumnType::Uuid | ColumnType::Inet6 => {
            let f = ty.fixed_bin().expect("matched");
            Value::Bytes(f.format(&[0; 16]).into_bytes())
        }
        _ => Value::Bytes(Vec::new()),
    }
}

#[derive(Default)]
pub struct WriteResult {
    pub affected: u64,
    pub last_insert_id: Option<u64>,
    pub info: String,
    pub records: u64,
    pub duplicates: u64,
    /// UPDATE: the rows the statement matched, changed or not. INSERT ... ON DUPLICATE KEY
    /// UPDATE: the duplicates it left unchanged (1 each with CLIENT_FOUND_ROWS).
    pub matched: u64,
    /// The RETURNING rows (when the statement has RETURNING).
    pub returned: Option<Vec<Vec<Value>>>,
}

/// Evaluates a RETURNING list over a row written or deleted, adding it to `out`.
fn returning_row(
    ret: &Option<crate::binder::Returning>,
    row: &[Value],
    out: &mut Option<Vec<Vec<Value>>>,
) -> Result<(), SqlError> {
    if let (Some(r), Some(out)) = (ret, out) {
        let cx = Ctx::new(row);
        out.push(
            r.items
                .iter()
                .map(|e| eval(e, &cx))
                .collect::<Result<_, _>>()?,
        );
    }
    Ok(())
}

fn find_conflict(
    cx: &mut ExecCtx,
    t: &Arc<TableDef>,
    row: &[Value],
) -> Result<Option<Vec<Value>>, SqlError> {
    Ok(find_conflict_at(cx, t, row)?.map(|(_, r)| r))
}

/// The first unique index (in the table's order) on which `row` meets a stored row, and
/// that row (read with an exclusive lock).
pub(crate) fn find_conflict_at(
    cx: &mut ExecCtx,
    t: &Arc<TableDef>,
    row: &[Value],
) -> Result<Option<(usize, Vec<Value>)>, SqlError> {
    for (ii, idx) in t.indexes.iter().enumerate() {
        if !idx.unique || idx.columns.is_empty() {
            continue;
        }
        let vals: Vec<Value> = idx.columns.iter().map(|&c| row[c].clone()).collect();
        if vals.iter().any(Value::is_null) {
            continue;
        }
        if idx.primary {
            if let Some(r) = cx
                .txn
                .get(t, &vals, LockMode::Exclusive)
                .map_err(engine_err)?
            {
                return Ok(Some((ii, r)));
            }
        } else {
            let opts = ScanOptions {
                reverse: false,
                lock: LockMode::Exclusive,
                covering: false,
            };
            let mut cur = cx
                .txn
                .scan(t, ii, KeyRange::prefix(vals), opts)
                .map_err(engine_err)?;
            if let Some(r) = cur.next() {
                return Ok(Some((ii, r.map_err(engine_err)?)));
            }
        }
    }
    Ok(None)
}

fn rows_equal(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Value::Null, Value::Null) => true,
            (Value::Bytes(p), Value::Bytes(q)) => p == q,
            _ => x == y,
        })
}

pub fn run_insert(cx: &mut ExecCtx, ins: &mut Insert) -> Result<WriteResult, SqlError> {
    let t = ins.table.clone();
    let strict = cx.strict && !ins.ignore;
    // Source rows.
    let mut subs = std::mem::take(&mut ins.subqueries);
    {
        let mut exprs: Vec<&mut Expr> = Vec::new();
        if let InsertSource::Values(rows) = &mut ins.source {
            for r in rows.iter_mut() {
                exprs.extend(r.iter_mut().flatten());
            }
        }
        exprs.extend(ins.on_dup.iter_mut().map(|(_, e)| e));
        resolve_subqueries(cx, &mut subs, &mut exprs)?;
    }
    let input = insert_input(cx, ins)?;
    let multi = input.len() > 1 || matches!(ins.source, InsertSource::Select(_));
    let auto_col = t.auto_increment_column();
    let checks = crate::checks::TableChecks::bind(&t, cx.check_constraints, cx.view_checks)?;
    let mut res = WriteResult {
        returned: ins.returning.as_ref().map(|_| Vec::new()),
        ..Default::default()
    };
    let warnings_before = cx.warnings.len();
    for (n, vals) in input.into_iter().enumerate() {
        if n.is_multiple_of(256) {
            cx.check_interrupt()?;
        }
        let rowno = n as u64 + 1;
        let mut explicit = vec![false; t.columns.len()];
        let mut row: Vec<Value> = vec![Value::Null; t.columns.len()];
        for (&c, v) in ins.columns.iter().zip(vals) {
            if let Some(v) = v {
                explicit[c] = true;
                row[c] = store(cx, &t, c, v, rowno, strict)?;
            }
        }
        // Defaults and NOT NULL.
        for (c, col) in t.columns.iter().enumerate() {
            if !explicit[c] {
                row[c] = if col.default_now {
                    expr::convert_for_column(&Value::DateTime(cx.now), &col.ty)
                        .unwrap_or(Value::Null)
                } else if let Some(d) = &col.default {
                    d.clone()
                } else if col.nullable || col.auto_increment || col.default_expr.is_some() {
                    // (An expression default is computed below.)
                    Value::Null
                } else if let ColumnType::Enum { elems, .. } = col.ty {
                    // A NOT NULL ENUM defaults to its first value.
                    Value::Bytes(elems.enum_text(1))
                } else {
                    let e = sql_err(
                        code::ER_NO_DEFAULT_FOR_FIELD,
                        format!("Field '{}' doesn't have a default value", col.name),
                    );
                    if strict {
                        return Err(e);
                    }
                    cx.warn(e);
                    zero_value(&col.ty)
                };
            } else if row[c].is_null() && !col.nullable && !col.auto_increment {
                let e = sql_err(
                    code::ER_BAD_NULL_ERROR,
                    format!("Column '{}' cannot be null", col.name),
                );
                if strict || (!multi && !ins.ignore) {
                    return Err(e);
                }
                cx.warn(e);
                row[c] = zero_value(&col.ty);
            }
        }
        let lenient = multi || ins.ignore;
        crate::defaults::fill(
            cx,
            &t,
            &ins.defaults,
            &mut row,
            &explicit,
            rowno,
            strict,
            lenient,
        )?;
        if let Some(ac) = auto_col {
            auto_increment(cx, &t, ac, &mut row, rowno, &mut res.last_insert_id)?;
        }
        if !crate::checks::admit(cx, &checks, &row, ins.ignore)? {
            continue;
        }
        if t.sequence {
            crate::sequences::check_row(&t, &row)?;
        }
        res.records += 1;
        let special = ins.ignore || ins.replace || !ins.on_dup.is_empty();
        if special {
            // Look for conflicts first so the engine never sees a failing insert that
            // continues the statement.
            let mut attempts = 0;
            loop {
                attempts += 1;
                let Some(old) = find_conflict(cx, &t, &row)? else {
                    break;
                };
                if ins.replace {
                    crate::foreign_keys::delete_parent(cx, &t, &old)?;
                    res.affected += 1;
                    res.duplicates += 1;
                    if attempts > t.indexes.len() + 1 {
                        break;
                    }
                    continue;
                }
                if !ins.on_dup.is_empty() {
                    let w = t.columns.len() + t.hidden_pk as usize;
                    let mut ctx_row = old.clone();
                    ctx_row.resize(w, Value::Null);
                    ctx_row.extend(row.iter().cloned());
                    let mut new = old.clone();
                    for (c, e) in &ins.on_dup {
                        let v = {
                            let h = SubHost::new(cx, &subs);
                            let c = Ctx {
                                row: &ctx_row,
                                aggs: &[],
                                subs: Some(&h),
                            };
                            eval(e, &c)?
                        };
                        let v = store(cx, &t, *c, v, rowno, strict)?;
                        if v.is_null() && !t.columns[*c].nullable {
                            return Err(sql_err(
                                code::ER_BAD_NULL_ERROR,
                                format!("Column '{}' cannot be null", t.columns[*c].name),
                            ));
                        }
                        new[*c] = v.clone();
                        ctx_row[*c] = v;
                    }
                    crate::checks::admit(cx, &checks, &new, false)?;
                    returning_row(&ins.returning, &new, &mut res.returned)?;
                    if !rows_equal(&new[..t.columns.len()], &old[..t.columns.len()]) {
                        crate::foreign_keys::update_parent(cx, &t, &old, new)?;
                        res.affected += 2;
                    } else {
                        // Counted only for a client that asks for found rows.
                        res.matched += 1;
                    }
                    res.duplicates += 1;
                } else {
                    // IGNORE
                    warn_duplicate(cx, &t, &row, &old);
                    res.duplicates += 1;
                }
                row.clear();
                break;
            }
            if row.is_empty() {
                continue;
            }
        }
        returning_row(&ins.returning, &row, &mut res.returned)?;
        match crate::routines::trigger::insert(cx, &t, row) {
            // INSERT IGNORE skips a row without its parent, with a warning.
            Err(e) if ins.ignore && e.code == 1452 => {
                cx.warn(e);
                continue;
            }
            r => r?,
        }
        res.affected += 1;
    }
    if multi {
        res.info = format!(
            "Records: {}  Duplicates: {}  Warnings: {}",
            res.records,
            res.duplicates,
            cx.warnings.len() - warnings_before
        );
    }
    Ok(res)
}

/// Column `ac`'s AUTO_INCREMENT: a NULL or 0 (unless NO_AUTO_VALUE_ON_ZERO) takes the
/// next value (the statement's first such value is its LAST_INSERT_ID), a given value moves
/// the counter past it.
fn auto_increment(
    cx: &mut ExecCtx,
    t: &Arc<TableDef>,
    ac: usize,
    row: &mut [Value],
    rowno: u64,
    last_insert_id: &mut Option<u64>,
) -> Result<(), SqlError> {
    let v = &row[ac];
    let generate = v.is_null() || (!cx.no_auto_value_on_zero && expr::to_f64(v) == 0.0);
    if generate {
        let id = cx.txn.next_auto_increment(t, 1).map_err(engine_err)?;
        row[ac] = match expr::convert_for_column(&Value::UInt(id), &t.columns[ac].ty) {
            Ok(v) => v,
            Err(_) => {
                return Err(sql_err(
                    167,
                    format!(
                        "Out of range value for column '{}' at row {rowno}",
                        t.columns[ac].name
                    ),
                ))
            }
        };
        if last_insert_id.is_none() {
            *last_insert_id = Some(id);
        }
    } else {
        let x = expr::to_i128(v);
        if x > 0 {
            cx.txn
                .observe_auto_increment(t, x as u64)
                .map_err(engine_err)?;
        }
    }
    Ok(())
}

/// The rows an INSERT writes: its VALUES evaluated (None: a column given DEFAULT) or its
/// SELECT run.
fn insert_input(cx: &mut ExecCtx, ins: &mut Insert) -> Result<Vec<Vec<Option<Value>>>, SqlError> {
    Ok(match &mut ins.source {
        InsertSource::Values(rows) => {
            // A value may name a column of the row (see `binder::insert_row`).
            let named = rows
                .iter()
                .flatten()
                .flatten()
                .any(|e| !matches!(e, Expr::Lit(_)));
            let base = if named {
                crate::defaults::row_before_values(cx, &ins.table)
            } else {
                Vec::new()
            };
            let mut out = Vec::with_capacity(rows.len());
            for r in rows.iter_mut() {
                let mut seen = base.clone();
                let mut o = Vec::with_capacity(r.len());
                for (k, e) in r.iter_mut().enumerate() {
                    let v = match e {
                        // The plan runs once: its constants move into the rows.
                        Some(Expr::Lit(v)) => Some(std::mem::replace(v, Value::Null)),
                        Some(e) => Some(eval(e, &Ctx::new(&seen))?),
                        None => None,
                    };
                    if let (true, Some(v), Some(&c)) = (named, &v, ins.columns.get(k)) {
                        crate::defaults::set_seen(&ins.table, &mut seen, c, v);
                    }
                    o.push(v);
                }
                out.push(o);
            }
            out
        }
        InsertSource::Select(sel) => run_select(cx, sel)?
            .into_iter()
            .map(|r| r.into_iter().map(Some).collect())
            .collect(),
    })
}

/// INSERT IGNORE of a row that duplicates `old`: the 1062 warning naming the first unique
/// key they share.
fn warn_duplicate(cx: &mut ExecCtx, t: &TableDef, row: &[Value], old: &[Value]) {
    let idx_name = t
        .indexes
        .iter()
        .find(|i| {
            i.unique
                && !i.columns.is_empty()
                && i.columns.iter().all(|&c| {
                    let coll = t.columns[c].ty.collation();
                    expr::compare(&row[c], &old[c], coll.unwrap_or(Collation::DEFAULT))
                        == Some(Ordering::Equal)
                })
        })
        .map(|i| i.name.clone())
        .unwrap_or_else(|| "PRIMARY".into());
    let vals: Vec<String> = t
        .indexes
        .iter()
        .find(|i| i.name == idx_name)
        .map(|i| i.columns.iter().map(|&c| row[c].to_string()).collect())
        .unwrap_or_default();
    cx.warn(sql_err(
        code::ER_DUP_ENTRY,
        format!("Duplicate entry '{}' for key '{idx_name}'", vals.join("-")),
    ));
}

/// Whether the part of a joined row belonging to table `t` is a NULL-extended (missing) row.
fn absent(t: &TableDef, part: &[Value]) -> bool {
    if t.hidden_pk {
        part.get(t.columns.len()).is_none_or(Value::is_null)
    } else {
        t.primary().columns.iter().any(|&c| part[c].is_null())
    }
}

/// The identity of a table row (its primary key) for "each row once" in multi-table
/// statements.
fn row_key(t: &TableDef, part: &[Value]) -> (u64, Vec<u8>) {
    let mut k = Vec::new();
    if t.hidden_pk {
        expr::group_key(&part[t.columns.len()], Collation::Binary, &mut k);
    } else {
        for &c in &t.primary().columns {
            expr::group_key(&part[c], Collation::Binary, &mut k);
        }
    }
    (t.id as u64, k)
}

pub fn run_update(cx: &mut ExecCtx, up: &mut Update) -> Result<WriteResult, SqlError> {
    let strict = cx.strict && !up.ignore;
    let mut subs = std::mem::take(&mut up.select.subqueries);
    let r = {
        let mut exprs: Vec<&mut Expr> = up.sets.iter_mut().map(|(_, e)| e).collect();
        resolve_subqueries(cx, &mut subs, &mut exprs)
    };
    up.select.subqueries = subs;
    r?;
    prepare_select(cx, &mut up.select)?;
    let warnings_before = cx.warnings.len();
    let sel = &up.select;
    let h = SubHost::new(cx, &sel.subqueries);
    let rows = matching_rows(&h, sel)?;
    // The sources written, in FROM order.
    let mut targets: Vec<usize> = Vec::new();
    for (pos, _) in &up.sets {
        if let Some(si) = sel
            .sources
            .iter()
            .position(|s| *pos >= s.offset && *pos < s.offset + s.ncols)
        {
            if !targets.contains(&si) {
                targets.push(si);
            }
        }
    }
    targets.sort_by_key(|&si| sel.sources[si].offset);
    let (enabled, views) = h.with_cx(|cx| (cx.check_constraints, cx.view_checks.to_vec()));
    let checks = crate::checks::bind_targets(sel, &targets, enabled, &views)?;
    // First every new value is computed (so subqueries see the rows as they were before
    // the statement, as in MariaDB), then the rows are written.
    struct Pending {
        si: usize,
        key: Option<(u64, Vec<u8>)>,
        read: Vec<Value>,
        sets: Vec<(usize, Value)>,
    }
    let mut pending = Vec::new();
    let mut seen = HashSet::new();
    for (n, joined) in rows.iter().enumerate() {
        if n.is_multiple_of(256) {
            h.with_cx(|cx| cx.check_interrupt())?;
        }
        let rowno = n as u64 + 1;
        // Multi-table: every value is computed from the joined row as read.
        let mut values = Vec::new();
        if up.multi {
            let c = Ctx {
                row: joined,
                aggs: &[],
                subs: Some(&h),
            };
            for (_, e) in &up.sets {
                values.push(eval(e, &c)?);
            }
        }
        for &si in &targets {
            let src = &sel.sources[si];
            let Some(t) = src.table() else { continue };
            let read = &joined[src.offset..src.offset + src.width];
            let key = if up.multi {
                if absent(t, read) {
                    continue;
                }
                let key = row_key(t, read);
                if !seen.insert((si, key.clone())) {
                    continue;
                }
                Some(key)
            } else {
                None
            };
            let ncols = t.columns.len();
            // Single-table: later assignments see earlier ones.
            let mut new = read.to_vec();
            let mut sets = Vec::new();
            for (k, (pos, e)) in up.sets.iter().enumerate() {
                if *pos < src.offset || *pos >= src.offset + ncols {
                    continue;
                }
                let c = *pos - src.offset;
                let v = if up.multi {
                    values[k].clone()
                } else {
                    eval(
                        e,
                        &Ctx {
                            row: &new,
                            aggs: &[],
                            subs: Some(&h),
                        },
                    )?
                };
                let v = h.with_cx(|cx| store(cx, t, c, v, rowno, strict))?;
                let v = if v.is_null() && !t.columns[c].nullable {
                    let e = sql_err(
                        code::ER_BAD_NULL_ERROR,
                        format!("Column '{}' cannot be null", t.columns[c].name),
                    );
                    if strict {
                        return Err(e);
                    }
                    h.with_cx(|cx| cx.warn(e));
                    zero_value(&t.columns[c].ty)
                } else {
                    v
                };
                new[c] = v.clone();
                sets.push((c, v));
            }
            pending.push(Pending {
                si,
                key,
                read: read.to_vec(),
                sets,
            });
        }
    }
    let matched = pending.len() as u64;
    let mut changed = 0u64;
    // A table written through two aliases gets the second alias's changes on top of the
    // first's.
    let mut written: HashMap<(u64, Vec<u8>), Vec<Value>> = HashMap::new();
    for (n, p) in pending.into_iter().enumerate() {
        if n.is_multiple_of(256) {
            h.with_cx(|cx| cx.check_interrupt())?;
        }
        let Some(t) = sel.sources[p.si].table() else {
            continue;
        };
        let ncols = t.columns.len();
        let old = match p.key.as_ref().and_then(|k| written.get(k)) {
            Some(w) => w.clone(),
            None => p.read,
        };
        let mut new = old.clone();
        let mut set_cols = vec![false; ncols];
        for (c, v) in p.sets {
            new[c] = v;
            set_cols[c] = true;
        }
        if rows_equal(&new[..ncols], &old[..ncols]) {
            continue;
        }
        h.with_cx(|cx| -> Result<(), SqlError> {
            for (c, col) in t.columns.iter().enumerate() {
                if col.on_update_now && !set_cols[c] {
                    new[c] = expr::convert_for_column(&Value::DateTime(cx.now), &col.ty)
                        .unwrap_or(Value::Null);
                }
            }
            if let Some(ac) = t.auto_increment_column() {
                if set_cols[ac] {
                    let x = expr::to_i128(&new[ac]);
                    if x > 0 {
                        cx.txn
                            .observe_auto_increment(t, x as u64)
                            .map_err(engine_err)?;
                    }
                }
            }
            if !crate::checks::admit(cx, &checks[p.si], &new, up.ignore)? {
                return Ok(());
            }
            if let Some(k) = p.key {
                written.insert(k, new.clone());
            }
            crate::routines::trigger::update(cx, t, &old, new)
        })?;
        changed += 1;
    }
    let warnings = h.with_cx(|cx| cx.warnings.len()) - warnings_before;
    Ok(WriteResult {
        affected: changed,
        last_insert_id: None,
        info: format!("Rows matched: {matched}  Changed: {changed}  Warnings: {warnings}"),
        matched,
        ..Default::default()
    })
}

pub fn run_delete(cx: &mut ExecCtx, del: &mut Delete) -> Result<WriteResult, SqlError> {
    prepare_select(cx, &mut del.select)?;
    let sel = &del.select;
    let h = SubHost::new(cx, &sel.subqueries);
    let rows = matching_rows(&h, sel)?;
    let multi = !del.targets.is_empty();
    let targets = if multi { del.targets.clone() } else { vec![0] };
    let mut seen = HashSet::new();
    let mut deleted = 0u64;
    let mut returned = del.returning.as_ref().map(|_| Vec::new());
    for (n, r) in rows.iter().enumerate() {
        if n.is_multiple_of(256) {
            h.with_cx(|cx| cx.check_interrupt())?;
        }
        for &si in &targets {
            let src = &sel.sources[si];
            let Some(t) = src.table() else { continue };
            let part = &r[src.offset..src.offset + src.width];
            if multi && (absent(t, part) || !seen.insert(row_key(t, part))) {
                continue;
            }
            returning_row(&del.returning, r, &mut returned)?;
            h.with_cx(|cx| crate::routines::trigger::delete(cx, t, &part.to_vec()))?;
            deleted += 1;
        }
    }
    Ok(WriteResult {
        affected: deleted,
        returned,
        ..Default::default()
    })
}
