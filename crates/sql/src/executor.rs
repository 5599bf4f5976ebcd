//! Executor: runs planned statements against a transaction. Joins are nested loops over
//! the chosen access paths (index lookups use values from the outer rows); aggregation is
//! hash-based; sorting is in memory. INSERT/UPDATE/DELETE convert values to column types
//! under the session's sql_mode and report MariaDB's affected-row counts.

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

type RowIter = Box<dyn Iterator<Item = Result<Vec<Value>, SqlError>>>;
type RowSink<'a> = dyn FnMut(&mut ExecCtx, &[Value]) -> Result<bool, SqlError> + 'a;

/// What a statement needs from its session while it runs.
pub struct ExecCtx<'a> {
    pub txn: &'a mut Txn,
    pub interrupt: &'a AtomicBool,
    pub warnings: &'a mut Vec<SqlError>,
    /// STRICT_TRANS_TABLES / STRICT_ALL_TABLES in sql_mode.
    pub strict: bool,
    /// NO_AUTO_VALUE_ON_ZERO in sql_mode.
    pub no_auto_value_on_zero: bool,
    pub now: DateTime,
}

pub fn engine_err(e: EngineError) -> SqlError {
    let mut s = e.to_sql_error();
    if s.code == code::ER_DUP_ENTRY {
        s.state = "23000";
    }
    s
}

impl ExecCtx<'_> {
    fn check_interrupt(&self) -> Result<(), SqlError> {
        if self.interrupt.load(AtOrd::Relaxed) {
            return Err(sql_err(
                code::ER_QUERY_INTERRUPTED,
                "Query execution was interrupted",
            ));
        }
        Ok(())
    }

    fn warn(&mut self, e: SqlError) {
        if self.warnings.len() < 65535 {
            self.warnings.push(e);
        }
    }
}

// ------------------------------------------------------------------ subqueries

/// Runs the uncorrelated subqueries of a statement and replaces their references with
/// values.
pub fn resolve_subqueries(
    cx: &mut ExecCtx,
    subs: &mut [Select],
    exprs: &mut [&mut Expr],
) -> Result<(), SqlError> {
    if subs.is_empty() {
        return Ok(());
    }
    let mut results: Vec<Option<Vec<Vec<Value>>>> = vec![None; subs.len()];
    let mut needed = vec![false; subs.len()];
    for e in exprs.iter() {
        e.walk(&mut |x| match x {
            Expr::Subquery(i) | Expr::InSubquery(_, i, ..) | Expr::Exists(i, _) => {
                needed[*i] = true
            }
            _ => {}
        });
    }
    for (i, s) in subs.iter_mut().enumerate() {
        if needed[i] {
            results[i] = Some(run_select(cx, s)?);
        }
    }
    for e in exprs.iter_mut() {
        let mut error = None;
        e.walk_mut(&mut |x| {
            let rep = match x {
                Expr::Subquery(i) => {
                    let rows = results[*i].as_ref().unwrap();
                    if rows.len() > 1 {
                        error = Some(sql_err(
                            code::ER_SUBQUERY_NO_1_ROW,
                            "Subquery returns more than 1 row",
                        ));
                        return;
                    }
                    Some(Expr::Lit(
                        rows.first().map(|r| r[0].clone()).unwrap_or(Value::Null),
                    ))
                }
                Expr::Exists(i, neg) => {
                    let rows = results[*i].as_ref().unwrap();
                    Some(Expr::Lit(expr::bool_val(rows.is_empty() == *neg)))
                }
                Expr::InSubquery(a, i, neg, coll) => {
                    let rows = results[*i].as_ref().unwrap();
                    let mut vals: Vec<Value> = Vec::new();
                    let mut has_null = false;
                    for r in rows {
                        if r[0].is_null() {
                            has_null = true;
                        } else {
                            vals.push(r[0].clone());
                        }
                    }
                    let coll = *coll;
                    vals.sort_by(|a, b| sort_cmp(a, b, coll));
                    vals.dedup_by(|a, b| sort_cmp(a, b, coll) == Ordering::Equal);
                    Some(Expr::InSet(a.clone(), Arc::new(vals), has_null, *neg, coll))
                }
                _ => None,
            };
            if let Some(r) = rep {
                *x = r;
            }
        });
        if let Some(e) = error {
            return Err(e);
        }
    }
    Ok(())
}

fn prepare_select(cx: &mut ExecCtx, sel: &mut Select) -> Result<(), SqlError> {
    let mut subs = std::mem::take(&mut sel.subqueries);
    {
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
        }
        for s in sel.sources.iter_mut() {
            exprs.extend(s.on.iter_mut());
        }
        resolve_subqueries(cx, &mut subs, &mut exprs)?;
    }
    // Derived tables are materialised.
    for s in sel.sources.iter_mut() {
        if let SourceKind::Derived(d) = &mut s.kind {
            let rows = run_select(cx, d)?;
            s.kind = SourceKind::Rows(Arc::new(rows));
        }
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
    match &src.kind {
        SourceKind::Rows(r) => {
            let r = r.clone();
            Ok(Box::new((0..r.len()).map(move |i| Ok(r[i].clone()))))
        }
        SourceKind::Derived(_) => Err(sql_err(
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
                        if let Some(row) = cx.txn.get(t, &pk, sel.lock).map_err(engine_err)? {
                            out.push(Ok(row));
                        }
                    }
                }
                return Ok(Box::new(out.into_iter()));
            }
            let opts = ScanOptions {
                reverse: a.reverse,
                lock: sel.lock,
                covering: a.covering && sel.lock == LockMode::None,
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

fn passes(conds: &[Expr], row: &[Value]) -> Result<bool, SqlError> {
    let cx = Ctx::new(row);
    for c in conds {
        if truth(&eval(c, &cx)?) != Some(true) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Nested-loop join: calls `out` for every joined row passing the filters; `out` returns
/// false to stop.
fn join(
    cx: &mut ExecCtx,
    sel: &Select,
    level: usize,
    row: &mut Vec<Value>,
    out: &mut RowSink,
) -> Result<bool, SqlError> {
    if level == sel.sources.len() {
        return out(cx, row);
    }
    let src = &sel.sources[level];
    let (off, width) = (src.offset, src.width);
    let mut matched = false;
    let it = source_rows(cx, sel, level, row, sel.limit)?;
    let mut n = 0u64;
    for r in it {
        let r = r?;
        n += 1;
        if n.is_multiple_of(1024) {
            cx.check_interrupt()?;
        }
        for (i, v) in r.into_iter().take(width).enumerate() {
            row[off + i] = v;
        }
        if !passes(&src.on, row)? {
            continue;
        }
        matched = true;
        if !passes(&src.filters, row)? {
            continue;
        }
        if !join(cx, sel, level + 1, row, out)? {
            return Ok(false);
        }
    }
    if !matched && src.join == JoinKind::Left {
        for v in &mut row[off..off + width] {
            *v = Value::Null;
        }
        if passes(&src.filters, row)? && !join(cx, sel, level + 1, row, out)? {
            return Ok(false);
        }
    }
    Ok(true)
}

// ------------------------------------------------------------------ aggregation

#[derive(Clone)]
enum AggState {
    Count(i64),
    Sum(Option<Value>),
    MinMax(Option<Value>),
    Avg(Option<Value>, i64),
    Concat(Vec<Vec<u8>>),
    Bits(u64),
}

fn agg_init(k: AggKind) -> AggState {
    match k {
        AggKind::Count | AggKind::CountStar => AggState::Count(0),
        AggKind::Sum => AggState::Sum(None),
        AggKind::Min | AggKind::Max => AggState::MinMax(None),
        AggKind::Avg => AggState::Avg(None, 0),
        AggKind::GroupConcat => AggState::Concat(Vec::new()),
        AggKind::BitAnd => AggState::Bits(u64::MAX),
        AggKind::BitOr => AggState::Bits(0),
    }
}

fn sum_value(v: &Value) -> Value {
    match v {
        Value::Int(_) | Value::UInt(_) => Value::Decimal(expr::to_decimal(v).unwrap()),
        Value::Decimal(_) | Value::Double(_) => v.clone(),
        other => Value::Double(expr::to_f64(other)),
    }
}

/// Adds a row's value to an aggregate (MIN/MAX compare strings under `coll`).
fn agg_add(st: &mut AggState, kind: AggKind, v: Value, coll: Collation) -> Result<(), SqlError> {
    if kind == AggKind::CountStar {
        if let AggState::Count(n) = st {
            *n += 1;
        }
        return Ok(());
    }
    if v.is_null() {
        return Ok(());
    }
    match st {
        AggState::Count(n) => *n += 1,
        AggState::Sum(s) | AggState::Avg(s, _) => {
            let v = sum_value(&v);
            *s = Some(match s.take() {
                None => v,
                Some(acc) => expr::binary(expr::BinOp::Add, acc, v)?,
            });
            if let AggState::Avg(_, n) = st {
                *n += 1;
            }
        }
        AggState::MinMax(m) => {
            let better = match m {
                None => true,
                Some(cur) => {
                    let o = sort_cmp(&v, cur, coll);
                    if kind == AggKind::Min {
                        o == Ordering::Less
                    } else {
                        o == Ordering::Greater
                    }
                }
            };
            if better {
                *m = Some(v);
            }
        }
        AggState::Concat(parts) => parts.push(expr::to_bytes(&v)),
        AggState::Bits(b) => {
            let x = match &v {
                Value::UInt(u) => *u,
                o => expr::to_i128(o) as u64,
            };
            if kind == AggKind::BitAnd {
                *b &= x;
            } else {
                *b |= x;
            }
        }
    }
    Ok(())
}

fn agg_final(st: &AggState) -> Value {
    match st {
        AggState::Count(n) => Value::Int(*n),
        AggState::Sum(s) => s.clone().unwrap_or(Value::Null),
        AggState::MinMax(m) => m.clone().unwrap_or(Value::Null),
        AggState::Avg(s, n) => match s {
            None => Value::Null,
            Some(Value::Double(d)) => Value::Double(d / *n as f64),
            Some(v) => {
                let d = expr::to_decimal(v).unwrap_or(Decimal::new(0, 0));
                match expr::binary(expr::BinOp::Div, Value::Decimal(d), Value::Int(*n)) {
                    Ok(r) => r,
                    Err(_) => Value::Double(d.to_f64() / *n as f64),
                }
            }
        },
        AggState::Concat(parts) => {
            if parts.is_empty() {
                Value::Null
            } else {
                Value::Bytes(parts.join(&b","[..]))
            }
        }
        AggState::Bits(b) => Value::UInt(*b),
    }
}

struct Group {
    row: Vec<Value>,
    states: Vec<AggState>,
    seen: Vec<HashSet<Vec<u8>>>,
}

// ------------------------------------------------------------------ SELECT

/// Runs a SELECT; returns the result rows.
pub fn run_select(cx: &mut ExecCtx, sel: &mut Select) -> Result<Vec<Vec<Value>>, SqlError> {
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
    // Constant WHERE conjuncts with no sources.
    if sel.sources.is_empty() && !sel.aggregate && !passes(&sel.filter, &[])? {
        return Ok(vec![]);
    }
    if sel.sources.first().is_some_and(|s| s.access.minmax) {
        let aggs = minmax_from_index(cx, sel)?;
        let row = vec![Value::Null; sel.width];
        return finish(cx, sel, vec![(row, aggs)]);
    }
    let early_limit = if !sel.aggregate && !sel.distinct && (sel.order_by.is_empty() || sel.ordered)
    {
        sel.limit.map(|l| l.saturating_add(sel.offset))
    } else {
        None
    };
    if early_limit == Some(0) {
        return Ok(vec![]);
    }
    let mut row = vec![Value::Null; sel.width];
    if !sel.aggregate {
        let mut rows: Vec<(Vec<Value>, Vec<Value>)> = Vec::new();
        if sel.sources.is_empty() {
            if passes(&sel.filter, &row)? {
                rows.push((row, vec![]));
            }
        } else {
            join(cx, sel, 0, &mut row, &mut |_, r| {
                rows.push((r.to_vec(), vec![]));
                Ok(early_limit.is_none_or(|l| (rows.len() as u64) < l))
            })?;
        }
        return finish(cx, sel, rows);
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
        let cxr = Ctx::new(r);
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
            agg_add(&mut g.states[ai], a.kind, v, coll)?;
        }
        Ok(true)
    };
    if sel.sources.is_empty() {
        if passes(&sel.filter, &row)? {
            add(&mut groups, &row)?;
        }
    } else {
        join(cx, sel, 0, &mut row, &mut |_, r| add(&mut groups, r))?;
    }
    if groups.is_empty() && sel.group_by.is_empty() {
        groups.push(new_group(&vec![Value::Null; sel.width]));
    }
    let mut out: Vec<(Vec<Value>, Vec<Value>)> = groups
        .into_iter()
        .map(|g| {
            let aggs = g.states.iter().map(agg_final).collect();
            (g.row, aggs)
        })
        .collect();
    // MariaDB sorts GROUP BY results by the grouping expressions unless ORDER BY is given.
    if sel.order_by.is_empty() && !sel.group_by.is_empty() {
        let mut keyed = Vec::with_capacity(out.len());
        for (r, a) in out {
            let c = Ctx { row: &r, aggs: &a };
            let mut k = Vec::new();
            for g in &sel.group_by {
                k.push(eval(g, &c)?);
            }
            keyed.push((k, (r, a)));
        }
        keyed.sort_by(|x, y| cmp_keys(&x.0, &y.0, &[], &sel.group_colls));
        out = keyed.into_iter().map(|x| x.1).collect();
    }
    finish(cx, sel, out)
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

/// HAVING, ORDER BY, projection, DISTINCT, OFFSET/LIMIT.
fn finish(
    cx: &mut ExecCtx,
    sel: &Select,
    rows: Vec<(Vec<Value>, Vec<Value>)>,
) -> Result<Vec<Vec<Value>>, SqlError> {
    cx.check_interrupt()?;
    let mut rows = rows;
    if let Some(h) = &sel.having {
        let mut kept = Vec::with_capacity(rows.len());
        for (r, a) in rows {
            if truth(&eval(h, &Ctx { row: &r, aggs: &a })?) == Some(true) {
                kept.push((r, a));
            }
        }
        rows = kept;
    }
    if !sel.order_by.is_empty() && !sel.ordered {
        let desc: Vec<bool> = sel.order_by.iter().map(|(_, d)| *d).collect();
        let mut keyed = Vec::with_capacity(rows.len());
        for (r, a) in rows {
            let c = Ctx { row: &r, aggs: &a };
            let mut k = Vec::with_capacity(sel.order_by.len());
            for (e, _) in &sel.order_by {
                k.push(eval(e, &c)?);
            }
            keyed.push((k, (r, a)));
        }
        keyed.sort_by(|x, y| cmp_keys(&x.0, &y.0, &desc, &sel.order_colls));
        rows = keyed.into_iter().map(|x| x.1).collect();
    }
    let mut out = Vec::with_capacity(rows.len());
    let mut seen = HashSet::new();
    let mut skipped = 0u64;
    for (r, a) in rows {
        let c = Ctx { row: &r, aggs: &a };
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

/// Rows matched by a single-table UPDATE/DELETE (locked), in ORDER BY order, limited.
fn matching_rows(cx: &mut ExecCtx, sel: &mut Select) -> Result<Vec<Vec<Value>>, SqlError> {
    prepare_select(cx, sel)?;
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
    join(cx, sel, 0, &mut row, &mut |_, r| {
        rows.push(r.to_vec());
        Ok(early.is_none_or(|l| (rows.len() as u64) < l))
    })?;
    if !sel.order_by.is_empty() && !sel.ordered {
        let desc: Vec<bool> = sel.order_by.iter().map(|(_, d)| *d).collect();
        let mut keyed = Vec::with_capacity(rows.len());
        for r in rows {
            let c = Ctx::new(&r);
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
fn store(
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
    match expr::convert_for_column(&v, &col.ty) {
        Ok(x) => Ok(x),
        Err((issue, adjusted)) => {
            let e = issue.error(&col.ty, &t.db, &t.name, &col.name, &v, rowno);
            if strict {
                Err(e)
            } else {
                cx.warn(e);
                Ok(adjusted)
            }
        }
    }
}

/// The implicit value MariaDB stores for a NOT NULL column given NULL in non-strict mode.
fn zero_value(ty: &ColumnType) -> Value {
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
        _ => Value::Bytes(Vec::new()),
    }
}

pub struct WriteResult {
    pub affected: u64,
    pub last_insert_id: Option<u64>,
    pub info: String,
    pub records: u64,
    pub duplicates: u64,
}

fn find_conflict(
    cx: &mut ExecCtx,
    t: &Arc<TableDef>,
    row: &[Value],
) -> Result<Option<Vec<Value>>, SqlError> {
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
                return Ok(Some(r));
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
                return Ok(Some(r.map_err(engine_err)?));
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
    let input: Vec<Vec<Option<Value>>> = match &mut ins.source {
        InsertSource::Values(rows) => {
            let mut out = Vec::with_capacity(rows.len());
            for r in rows.iter() {
                let mut o = Vec::with_capacity(r.len());
                for e in r {
                    o.push(match e {
                        Some(e) => Some(eval(e, &Ctx::new(&[]))?),
                        None => None,
                    });
                }
                out.push(o);
            }
            out
        }
        InsertSource::Select(sel) => run_select(cx, sel)?
            .into_iter()
            .map(|r| r.into_iter().map(Some).collect())
            .collect(),
    };
    let multi = input.len() > 1 || matches!(ins.source, InsertSource::Select(_));
    let auto_col = t.auto_increment_column();
    let mut res = WriteResult {
        affected: 0,
        last_insert_id: None,
        info: String::new(),
        records: 0,
        duplicates: 0,
    };
    let warnings_before = cx.warnings.len();
    for (n, vals) in input.into_iter().enumerate() {
        if n.is_multiple_of(256) {
            cx.check_interrupt()?;
        }
        let rowno = n as u64 + 1;
        let mut explicit = vec![false; t.columns.len()];
        let mut row: Vec<Value> = vec![Value::Null; t.columns.len()];
        for (i, &c) in ins.columns.iter().enumerate() {
            if let Some(Some(v)) = vals.get(i) {
                explicit[c] = true;
                row[c] = store(cx, &t, c, v.clone(), rowno, strict)?;
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
                } else if col.nullable || col.auto_increment {
                    Value::Null
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
        if let Some(ac) = auto_col {
            let v = &row[ac];
            let generate = v.is_null() || (!cx.no_auto_value_on_zero && expr::to_f64(v) == 0.0);
            if generate {
                let id = cx.txn.next_auto_increment(&t, 1).map_err(engine_err)?;
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
                if res.last_insert_id.is_none() {
                    res.last_insert_id = Some(id);
                }
            } else {
                let x = expr::to_i128(v);
                if x > 0 {
                    cx.txn
                        .observe_auto_increment(&t, x as u64)
                        .map_err(engine_err)?;
                }
            }
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
                    cx.txn.delete(&t, &old).map_err(engine_err)?;
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
                        let v = eval(e, &Ctx::new(&ctx_row))?;
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
                    if !rows_equal(&new[..t.columns.len()], &old[..t.columns.len()]) {
                        cx.txn.update(&t, &old, new).map_err(engine_err)?;
                        res.affected += 2;
                    }
                    res.duplicates += 1;
                } else {
                    // IGNORE
                    let idx_name = t
                        .indexes
                        .iter()
                        .find(|i| {
                            i.unique
                                && !i.columns.is_empty()
                                && i.columns.iter().all(|&c| {
                                    let coll = t.columns[c].ty.collation();
                                    expr::compare(
                                        &row[c],
                                        &old[c],
                                        coll.unwrap_or(Collation::DEFAULT),
                                    ) == Some(Ordering::Equal)
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
                    res.duplicates += 1;
                }
                row.clear();
                break;
            }
            if row.is_empty() {
                continue;
            }
        }
        cx.txn.insert(&t, row).map_err(engine_err)?;
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

pub fn run_update(cx: &mut ExecCtx, up: &mut Update) -> Result<WriteResult, SqlError> {
    let t = up.select.sources[0].table().unwrap().clone();
    let strict = cx.strict && !up.ignore;
    let mut subs = std::mem::take(&mut up.select.subqueries);
    {
        let mut exprs: Vec<&mut Expr> = up.sets.iter_mut().map(|(_, e)| e).collect();
        resolve_subqueries(cx, &mut subs, &mut exprs)?;
    }
    up.select.subqueries = subs;
    let rows = matching_rows(cx, &mut up.select)?;
    let warnings_before = cx.warnings.len();
    let mut changed = 0u64;
    let ncols = t.columns.len();
    for (n, old) in rows.iter().enumerate() {
        if n.is_multiple_of(256) {
            cx.check_interrupt()?;
        }
        let mut new = old.clone();
        let mut set_cols = vec![false; ncols];
        for (c, e) in &up.sets {
            let v = eval(e, &Ctx::new(&new))?;
            let v = store(cx, &t, *c, v, n as u64 + 1, strict)?;
            if v.is_null() && !t.columns[*c].nullable {
                let e = sql_err(
                    code::ER_BAD_NULL_ERROR,
                    format!("Column '{}' cannot be null", t.columns[*c].name),
                );
                if strict {
                    return Err(e);
                }
                cx.warn(e);
                new[*c] = zero_value(&t.columns[*c].ty);
            } else {
                new[*c] = v;
            }
            set_cols[*c] = true;
        }
        if rows_equal(&new[..ncols], &old[..ncols]) {
            continue;
        }
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
                        .observe_auto_increment(&t, x as u64)
                        .map_err(engine_err)?;
                }
            }
        }
        cx.txn.update(&t, old, new).map_err(engine_err)?;
        changed += 1;
    }
    Ok(WriteResult {
        affected: changed,
        last_insert_id: None,
        info: format!(
            "Rows matched: {}  Changed: {}  Warnings: {}",
            rows.len(),
            changed,
            cx.warnings.len() - warnings_before
        ),
        records: 0,
        duplicates: 0,
    })
}

pub fn run_delete(cx: &mut ExecCtx, del: &mut Delete) -> Result<WriteResult, SqlError> {
    let t = del.select.sources[0].table().unwrap().clone();
    let rows = matching_rows(cx, &mut del.select)?;
    for (n, r) in rows.iter().enumerate() {
        if n.is_multiple_of(256) {
            cx.check_interrupt()?;
        }
        cx.txn.delete(&t, r).map_err(engine_err)?;
    }
    Ok(WriteResult {
        affected: rows.len() as u64,
        last_insert_id: None,
        info: String::new(),
        records: 0,
        duplicates: 0,
    })
}
