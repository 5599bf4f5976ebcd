//! Planner: chooses each FROM source's access path (primary-key point lookup, index
//! prefix/range scan, covering index scan, index-ordered scan for ORDER BY ... LIMIT, full
//! scan), assigns WHERE conjuncts to join levels, and renders EXPLAIN rows.
//!
//! Sources are joined in the binder's order (FROM order, the preserved side of a RIGHT JOIN
//! first; no join reordering). Conditions used for an access
//! path are still evaluated as filters, so a range only has to be a superset of the
//! matching rows; values that do not convert exactly to the key column's type (for
//! example `int_col = 1.5` or `varchar_col = 5`) make the executor fall back to the whole
//! index range.

use onelog_engine::TableDef;
use onelog_types::{Collation, ColumnType, Value};

use crate::binder::joins::{level_of, max_level, place, Place};
use crate::binder::{AggKind, JoinKind, Select, Source, SourceKind};
use crate::expr::{self, BinOp, Expr};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AccessKind {
    /// Full table scan (or rows of a virtual table).
    #[default]
    All,
    /// Full primary-key (or unique) match with constants: at most one row.
    Const,
    /// Full primary/unique key match with values from an earlier table.
    EqRef,
    /// Equality on a non-unique index prefix.
    Ref,
    /// Range on an index.
    Range,
    /// Whole index read in order (ORDER BY ... LIMIT or covering).
    Index,
}

impl AccessKind {
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::All => "ALL",
            AccessKind::Const => "const",
            AccessKind::EqRef => "eq_ref",
            AccessKind::Ref => "ref",
            AccessKind::Range => "range",
            AccessKind::Index => "index",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Access {
    pub kind: AccessKind,
    /// Index position in `TableDef::indexes` (None: primary-key order full scan).
    pub index: Option<usize>,
    /// Values for the leading index columns.
    pub eq: Vec<Expr>,
    /// Alternatives for the column after `eq` (`col IN (...)`).
    pub in_list: Option<Vec<Expr>>,
    /// Bounds on the column after `eq`: (value, inclusive).
    pub lower: Option<(Expr, bool)>,
    pub upper: Option<(Expr, bool)>,
    pub covering: bool,
    pub reverse: bool,
    pub possible_keys: Vec<String>,
    pub rows: u64,
    /// MIN/MAX answered from the ends of an index (the query reads no rows otherwise).
    pub minmax: bool,
}

/// A condition on one column of the source: `col op value`.
struct ColCond {
    col: usize,
    op: BinOp,
    value: Expr,
    /// IN list alternatives (op == Eq).
    list: Option<Vec<Expr>>,
}

fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        o => o,
    }
}

/// Whether `e` only depends on columns of sources joined before source `si` (by `levels`,
/// the source of each row position) or constants.
fn is_outer(e: &Expr, levels: &[usize], si: usize) -> bool {
    let mut ok = true;
    e.walk(&mut |x| match x {
        Expr::Col(c) if levels.get(*c).is_none_or(|l| *l >= si) => ok = false,
        Expr::Agg(_)
        | Expr::Subquery(_)
        | Expr::InSubquery(..)
        | Expr::RowInSubquery(..)
        | Expr::Exists(..)
        | Expr::Quantified(..)
        | Expr::Outer(..)
        | Expr::Routine(..) => ok = false,
        Expr::Func(f, _) if f.volatile() => ok = false,
        _ => {}
    });
    ok
}

/// Whether an index on a column of type `ty` (ordered by the column's collation) can serve
/// a comparison made under `coll`: always for the same collation; for equality also when
/// the column's collation is coarser (strings equal under `coll` are equal under the
/// column's, so the index range is a superset; the condition is still checked).
fn coll_ok(ty: &ColumnType, coll: Collation, equality: bool) -> bool {
    match ty.collation() {
        None => true,
        Some(c) if c == coll => true,
        Some(Collation::Utf8mb4GeneralCi) => equality,
        Some(Collation::Utf8mb4Bin) => equality && coll == Collation::Binary,
        Some(_) => false,
    }
}

/// Whether a constant value is usable against a column of type `ty` through the index.
fn value_ok(e: &Expr, ty: &ColumnType) -> bool {
    match e {
        Expr::Lit(v) => !v.is_null() && expr::exact_key(v, ty).is_some(),
        // Values from other tables: checked at run time.
        _ => true,
    }
}

fn col_conditions(
    conds: &[Expr],
    src: &Source,
    t: &TableDef,
    levels: &[usize],
    si: usize,
) -> Vec<ColCond> {
    let is_outer = |e: &Expr| is_outer(e, levels, si);
    let lo = src.offset;
    let hi = src.offset + t.columns.len();
    let own = |e: &Expr| match e {
        Expr::Col(c) if *c >= lo && *c < hi => Some(*c - lo),
        _ => None,
    };
    let mut out = Vec::new();
    for c in conds {
        let stripped = strip_fixed_bin_keys(c);
        let c = stripped.as_ref().unwrap_or(c);
        match c {
            Expr::Bin(op, a, b, coll)
                if matches!(
                    op,
                    BinOp::Eq | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
                ) =>
            {
                let eq = *op == BinOp::Eq;
                if let Some(col) = own(a).filter(|&c| coll_ok(&t.columns[c].ty, *coll, eq)) {
                    if is_outer(b) && value_ok(b, &t.columns[col].ty) {
                        out.push(ColCond {
                            col,
                            op: *op,
                            value: (**b).clone(),
                            list: None,
                        });
                    }
                } else if let Some(col) = own(b).filter(|&c| coll_ok(&t.columns[c].ty, *coll, eq)) {
                    if is_outer(a) && value_ok(a, &t.columns[col].ty) {
                        out.push(ColCond {
                            col,
                            op: flip(*op),
                            value: (**a).clone(),
                            list: None,
                        });
                    }
                }
            }
            Expr::Between(a, l, h, false, coll) => {
                if let Some(col) = own(a).filter(|&c| coll_ok(&t.columns[c].ty, *coll, false)) {
                    let ty = &t.columns[col].ty;
                    if is_outer(l) && is_outer(h) && value_ok(l, ty) && value_ok(h, ty) {
                        out.push(ColCond {
                            col,
                            op: BinOp::Ge,
                            value: (**l).clone(),
                            list: None,
                        });
                        out.push(ColCond {
                            col,
                            op: BinOp::Le,
                            value: (**h).clone(),
                            list: None,
                        });
                    }
                }
            }
            Expr::InList(a, list, false, coll) => {
                if let Some(col) = own(a).filter(|&c| coll_ok(&t.columns[c].ty, *coll, true)) {
                    let ty = &t.columns[col].ty;
                    if !list.is_empty()
                        && list.len() <= crate::inlist::SORTED_FROM
                        && list.iter().all(|e| e.is_const() && value_ok(e, ty))
                    {
                        if list.len() == 1 {
                            out.push(ColCond {
                                col,
                                op: BinOp::Eq,
                                value: list[0].clone(),
                                list: None,
                            });
                        } else {
                            out.push(ColCond {
                                col,
                                op: BinOp::Eq,
                                value: list[0].clone(),
                                list: Some(list.clone()),
                            });
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A comparison of UUID/INET6 sort forms (`Cast(x, FixedBinKey)` on every operand) as the
/// comparison of the values themselves, which index keys order the same way (None: `e`
/// is not one).
fn strip_fixed_bin_keys(e: &Expr) -> Option<Expr> {
    use crate::expr::CastType::FixedBinKey;
    let un = |x: &Expr| match x {
        Expr::Cast(inner, FixedBinKey(_)) => Some((**inner).clone()),
        _ => None,
    };
    Some(match e {
        Expr::Bin(op, a, b, coll) => Expr::Bin(*op, Box::new(un(a)?), Box::new(un(b)?), *coll),
        Expr::Between(a, l, h, neg, coll) => Expr::Between(
            Box::new(un(a)?),
            Box::new(un(l)?),
            Box::new(un(h)?),
            *neg,
            *coll,
        ),
        Expr::InList(a, list, neg, coll) => Expr::InList(
            Box::new(un(a)?),
            list.iter().map(un).collect::<Option<Vec<_>>>()?,
            *neg,
            *coll,
        ),
        _ => return None,
    })
}

/// Columns of `src` the statement references anywhere (for covering index decisions).
fn referenced_columns(sel: &Select, src: &Source) -> Vec<usize> {
    let mut cols = Vec::new();
    let mut visit = |e: &Expr| {
        e.walk(&mut |x| {
            let mut see = |c: usize| {
                if c >= src.offset
                    && c < src.offset + src.width
                    && !cols.contains(&(c - src.offset))
                {
                    cols.push(c - src.offset);
                }
            };
            match x {
                Expr::Col(c) => see(*c),
                // The outer columns a correlated subquery reads.
                Expr::Subquery(i)
                | Expr::Exists(i, _)
                | Expr::InSubquery(_, i, ..)
                | Expr::RowInSubquery(_, i, ..)
                | Expr::Quantified(_, _, i, ..) => {
                    for p in sel
                        .subqueries
                        .get(*i)
                        .map(|s| s.params.as_slice())
                        .unwrap_or(&[])
                    {
                        see(*p);
                    }
                }
                _ => {}
            }
        })
    };
    sel.filter.iter().for_each(&mut visit);
    sel.items.iter().for_each(&mut visit);
    sel.group_by.iter().for_each(&mut visit);
    sel.order_by.iter().for_each(|(e, _)| visit(e));
    if let Some(h) = &sel.having {
        visit(h);
    }
    sel.aggs.iter().for_each(|a| visit(&a.arg));
    sel.window_exprs().for_each(&mut visit);
    for s in &sel.sources {
        s.on.iter().for_each(&mut visit);
        s.post.iter().for_each(&mut visit);
    }
    cols
}

struct Candidate {
    access: Access,
    score: u64,
}

fn index_allowed(src: &Source, name: &str) -> bool {
    if src
        .hints
        .ignore
        .iter()
        .any(|n| n.eq_ignore_ascii_case(name))
    {
        return false;
    }
    match &src.hints.only {
        Some(list) => list.iter().any(|n| n.eq_ignore_ascii_case(name)),
        None => true,
    }
}

/// The ORDER BY as (column of `src`, desc) pairs, if it is only plain columns of it.
fn order_columns(sel: &Select, src: &Source) -> Option<Vec<(usize, bool)>> {
    let mut out = Vec::new();
    for (e, desc) in &sel.order_by {
        match e {
            Expr::Col(c) if *c >= src.offset && *c < src.offset + src.ncols => {
                out.push((*c - src.offset, *desc))
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Whether scanning `idx` after an equality prefix of `eq_len` columns yields rows in
/// ORDER BY order; Some(reverse) if so.
fn order_matches(
    t: &TableDef,
    index: usize,
    eq_len: usize,
    order: &[(usize, bool)],
) -> Option<bool> {
    if order.is_empty() {
        return Some(false);
    }
    let idx = &t.indexes[index];
    let mut key_cols: Vec<usize> = idx.columns.clone();
    if !idx.primary {
        // Secondary keys end with the primary key columns.
        key_cols.extend(t.primary().columns.iter().copied());
    }
    if idx.prefix_lens.iter().any(Option::is_some) {
        return None;
    }
    let desc = order[0].1;
    if order.iter().any(|(_, d)| *d != desc) {
        return None;
    }
    let rest = key_cols.get(eq_len..)?;
    // ORDER BY columns may also skip columns fixed by equality.
    let mut k = 0;
    for (c, _) in order {
        if key_cols[..eq_len].contains(c) {
            continue;
        }
        if rest.get(k) != Some(c) {
            return None;
        }
        k += 1;
    }
    Some(desc)
}

fn plan_source(sel: &Select, si: usize, conds: &[Expr], levels: &[usize]) -> Access {
    let src = &sel.sources[si];
    let t = match &src.kind {
        SourceKind::Table(t) => t.clone(),
        _ => return Access::default(),
    };
    let cc = col_conditions(conds, src, &t, levels, si);
    let referenced = referenced_columns(sel, src);
    let order = if si == 0 && sel.sources.len() == 1 && !sel.aggregate {
        order_columns(sel, src)
    } else {
        None
    };
    let mut possible = Vec::new();
    let mut best: Option<Candidate> = None;
    for (ii, idx) in t.indexes.iter().enumerate() {
        if idx.columns.is_empty() || (!idx.primary && !index_allowed(src, &idx.name)) {
            continue;
        }
        if idx.primary
            && src.hints.only.is_some()
            && !index_allowed(src, "PRIMARY")
            && src.hints.force
        {
            continue;
        }
        let mut eq = Vec::new();
        let mut in_list = None;
        let mut lower = None;
        let mut upper = None;
        for &c in &idx.columns {
            if let Some(x) = cc
                .iter()
                .find(|x| x.col == c && x.op == BinOp::Eq && x.list.is_none())
            {
                eq.push(x.value.clone());
                continue;
            }
            if let Some(x) = cc.iter().find(|x| x.col == c && x.list.is_some()) {
                in_list = x.list.clone();
                break;
            }
            for x in cc.iter().filter(|x| x.col == c) {
                match x.op {
                    BinOp::Gt | BinOp::Ge if lower.is_none() => {
                        lower = Some((x.value.clone(), x.op == BinOp::Ge))
                    }
                    BinOp::Lt | BinOp::Le if upper.is_none() => {
                        upper = Some((x.value.clone(), x.op == BinOp::Le))
                    }
                    _ => {}
                }
            }
            break;
        }
        let full_eq = eq.len() == idx.columns.len();
        let has_range = lower.is_some() || upper.is_some() || in_list.is_some();
        if eq.is_empty() && !has_range {
            // No condition: maybe an ordered scan for ORDER BY ... LIMIT, or covering.
            let covering = !idx.primary
                && referenced
                    .iter()
                    .all(|c| idx.columns.contains(c) || t.primary().columns.contains(c))
                && !t.hidden_pk
                && idx.prefix_lens.iter().all(Option::is_none);
            let ordered = order.as_ref().and_then(|o| {
                (!o.is_empty())
                    .then(|| order_matches(&t, ii, 0, o))
                    .flatten()
            });
            let useful =
                (ordered.is_some() && sel.limit.is_some()) || (covering && src.hints.force);
            if useful || (src.hints.force && src.hints.only.is_some()) {
                let score = if ordered.is_some() { 500_000 } else { 900_000 };
                let a = Access {
                    kind: AccessKind::Index,
                    index: Some(ii),
                    covering: covering && sel.lock == onelog_engine::LockMode::None,
                    reverse: ordered.unwrap_or(false),
                    rows: 1000,
                    ..Default::default()
                };
                if best.as_ref().is_none_or(|b| score < b.score) {
                    best = Some(Candidate { access: a, score });
                }
            }
            continue;
        }
        possible.push(idx.name.clone());
        let outer_refs = eq.iter().any(|e| !e.is_const());
        let (kind, rows) = if full_eq && idx.unique && in_list.is_none() && !has_range {
            (
                if outer_refs {
                    AccessKind::EqRef
                } else {
                    AccessKind::Const
                },
                1,
            )
        } else if !has_range {
            (AccessKind::Ref, 10)
        } else if let Some(l) = &in_list {
            (
                AccessKind::Range,
                l.len() as u64
                    * if idx.unique && eq.len() + 1 == idx.columns.len() {
                        1
                    } else {
                        10
                    },
            )
        } else {
            (AccessKind::Range, 100 / (eq.len() as u64 + 1))
        };
        let covering = !idx.primary
            && !t.hidden_pk
            && idx.prefix_lens.iter().all(Option::is_none)
            && referenced
                .iter()
                .all(|c| idx.columns.contains(c) || t.primary().columns.contains(c));
        let reverse_order = order
            .as_ref()
            .filter(|_| in_list.is_none())
            .and_then(|o| order_matches(&t, ii, eq.len(), o));
        // Cost: rows read, with a penalty for secondary lookups.
        let mut score = rows * 10;
        if !idx.primary && !covering {
            score += rows * 5;
        }
        if !idx.primary {
            score += 1;
        }
        let a = Access {
            kind,
            index: Some(ii),
            eq,
            in_list,
            lower,
            upper,
            covering: covering && sel.lock == onelog_engine::LockMode::None,
            reverse: reverse_order.unwrap_or(false),
            possible_keys: vec![],
            rows,
            minmax: false,
        };
        if best.as_ref().is_none_or(|b| score < b.score) {
            best = Some(Candidate { access: a, score });
        }
    }
    let mut access = match best {
        Some(c) => c.access,
        None => Access {
            rows: 1000,
            ..Default::default()
        },
    };
    access.possible_keys = possible;
    access
}

/// Chooses access paths, assigns filters to join levels and decides whether the output is
/// already ordered.
pub fn plan(sel: &mut Select) {
    let n = sel.sources.len();
    if n == 0 {
        return;
    }
    // Assign WHERE conjuncts to the first level at which all their columns (and those the
    // correlated subqueries in them read) are bound; conjuncts over outer-joined columns
    // are checked after the outer join.
    let levels = level_of(&sel.sources, sel.width);
    let mut level_filters: Vec<Vec<Expr>> = vec![Vec::new(); n];
    let subs = &sel.subqueries;
    let params = |i: usize| subs.get(i).map(|s| s.params.clone()).unwrap_or_default();
    let mut posts = Vec::new();
    for c in &sel.filter {
        let lvl = max_level(c, &levels, &params);
        match place(&sel.sources, lvl, 0) {
            Place::Level(l) => level_filters[l.min(n - 1)].push(c.clone()),
            Place::Post(g) => posts.push((g, c.clone())),
        }
    }
    for (g, c) in posts {
        sel.sources[g].post.push(c);
    }
    for (i, lf) in level_filters.iter_mut().enumerate() {
        sel.sources[i].filters = std::mem::take(lf);
        let conds: Vec<Expr> = sel.sources[i]
            .on
            .iter()
            .chain(sel.sources[i].filters.iter())
            .cloned()
            .collect();
        let access = plan_source(sel, i, &conds, &levels);
        sel.sources[i].access = access;
    }
    // A constant-false or filter-less single source: done. Decide ordering.
    if n == 1 && !sel.aggregate && !sel.order_by.is_empty() {
        let src = &sel.sources[0];
        if let (Some(t), Some(ii)) = (src.table(), src.access.index) {
            if let Some(o) = order_columns(sel, src) {
                let eq_len = src.access.eq.len();
                if src.access.in_list.is_none() {
                    if let Some(rev) = order_matches(t, ii, eq_len, &o) {
                        sel.ordered = true;
                        sel.sources[0].access.reverse = rev;
                    }
                }
            }
        } else if let (Some(t), None) = (src.table(), src.access.index) {
            // Full scan in primary key order.
            if let Some(o) = order_columns(sel, src) {
                if !t.hidden_pk {
                    if let Some(rev) = order_matches(t, 0, 0, &o) {
                        sel.ordered = true;
                        sel.sources[0].access.reverse = rev;
                    }
                }
            }
        }
    }
    // MIN/MAX without GROUP BY or WHERE over columns leading an index.
    if n == 1
        && sel.group_by.is_empty()
        && sel.filter.is_empty()
        && !sel.aggs.is_empty()
        && sel.windows.is_empty()
    {
        if let Some(t) = sel.sources[0].table() {
            let ok = sel.aggs.iter().all(|a| {
                matches!(a.kind, AggKind::Min | AggKind::Max)
                    && !a.distinct
                    && match a.arg {
                        Expr::Col(c) => {
                            let c = c - sel.sources[0].offset;
                            t.indexes.iter().any(|i| {
                                i.columns.first() == Some(&c)
                                    && i.prefix_lens.first().copied().flatten().is_none()
                            })
                        }
                        _ => false,
                    }
            }) && sel.items.iter().all(|e| !matches!(e, Expr::Col(_)));
            if ok && sel.lock == onelog_engine::LockMode::None {
                sel.sources[0].access.minmax = true;
            }
        }
    }
}

/// MariaDB's EXPLAIN columns.
pub const EXPLAIN_COLUMNS: [&str; 10] = [
    "id",
    "select_type",
    "table",
    "type",
    "possible_keys",
    "key",
    "key_len",
    "ref",
    "rows",
    "Extra",
];

fn key_len(t: &TableDef, index: usize, parts: usize) -> u64 {
    let idx = &t.indexes[index];
    let mut n = 0u64;
    for (i, &c) in idx.columns.iter().take(parts).enumerate() {
        let col = &t.columns[c];
        let base = match col.ty {
            ColumnType::Int { bytes, .. } => bytes as u64,
            ColumnType::Float => 4,
            ColumnType::Double => 8,
            ColumnType::Decimal { precision, scale } => {
                let ip = (precision - scale) as u64;
                let s = scale as u64;
                (ip / 9 * 4 + [0, 1, 1, 2, 2, 3, 3, 4, 4, 4][(ip % 9) as usize])
                    + (s / 9 * 4 + [0, 1, 1, 2, 2, 3, 3, 4, 4, 4][(s % 9) as usize])
            }
            ColumnType::Date => 3,
            ColumnType::Time { .. } => 3,
            ColumnType::DateTime { .. } => 5,
            ColumnType::Timestamp { .. } => 4,
            ColumnType::Year => 1,
            ColumnType::Uuid | ColumnType::Inet6 => 16,
            ColumnType::Bit { bits } => (bits as u64).div_ceil(8),
            ColumnType::Enum { elems, .. } => elems.enum_pack_len() as u64,
            ColumnType::Set { elems, .. } => elems.set_pack_len() as u64,
            ColumnType::Char { .. } | ColumnType::Varchar { .. } | ColumnType::Blob { .. } => {
                let chars = idx
                    .prefix_lens
                    .get(i)
                    .copied()
                    .flatten()
                    .map(u64::from)
                    .unwrap_or(match col.ty {
                        ColumnType::Char { len, .. } | ColumnType::Varchar { len, .. } => {
                            len as u64
                        }
                        _ => 255,
                    });
                let per = if col.ty.is_binary() { 1 } else { 4 };
                chars * per
                    + if matches!(col.ty, ColumnType::Char { .. }) {
                        0
                    } else {
                        2
                    }
            }
        };
        n += base + col.nullable as u64;
    }
    n
}

/// EXPLAIN rows for a planned select.
pub fn explain(sel: &Select) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    if sel.sources.is_empty() {
        rows.push(vec![
            Value::Int(1),
            Value::str("SIMPLE"),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::str("No tables used"),
        ]);
        return rows;
    }
    for (i, s) in sel.sources.iter().enumerate() {
        let a = &s.access;
        let t = s.table();
        if a.minmax {
            rows.push(vec![
                Value::Int(1),
                Value::str("SIMPLE"),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::str("Select tables optimized away"),
            ]);
            continue;
        }
        let key = match (t, a.index) {
            (Some(t), Some(ii)) => Some(t.indexes[ii].name.clone()),
            _ => None,
        };
        let parts =
            a.eq.len() + (a.in_list.is_some() || a.lower.is_some() || a.upper.is_some()) as usize;
        let klen = match (t, a.index) {
            (Some(t), Some(ii)) => {
                let p = if a.kind == AccessKind::Index {
                    t.indexes[ii].columns.len()
                } else {
                    parts
                };
                Some(key_len(t, ii, p))
            }
            _ => None,
        };
        let reference = if matches!(
            a.kind,
            AccessKind::Const | AccessKind::EqRef | AccessKind::Ref
        ) {
            let r: Vec<String> =
                a.eq.iter()
                    .map(|e| match e {
                        Expr::Col(c) => {
                            let src = sel
                                .sources
                                .iter()
                                .find(|x| *c >= x.offset && *c < x.offset + x.width);
                            match src {
                                Some(x) => {
                                    let cname = x
                                        .table()
                                        .and_then(|t| t.columns.get(*c - x.offset))
                                        .map(|c| c.name.clone())
                                        .unwrap_or_default();
                                    format!("{}.{}.{}", x.db, x.alias, cname)
                                }
                                None => "func".into(),
                            }
                        }
                        e if e.is_const() => "const".into(),
                        _ => "func".into(),
                    })
                    .collect();
            Some(r.join(","))
        } else {
            None
        };
        let mut extra = Vec::new();
        let consumed = |f: &Expr| -> bool {
            // A condition the access path fully applies: `key_col op value` on a used column.
            let (Some(t), Some(ii)) = (t, a.index) else {
                return false;
            };
            let used = a.eq.len()
                + (a.lower.is_some() || a.upper.is_some() || a.in_list.is_some()) as usize;
            let cols = &t.indexes[ii].columns[..used.min(t.indexes[ii].columns.len())];
            let is_key_col = |e: &Expr| matches!(e, Expr::Col(c) if *c >= s.offset && cols.contains(&(*c - s.offset)));
            match f {
                Expr::Bin(_, l, r, _) => {
                    (is_key_col(l) && r.is_const()) || (is_key_col(r) && l.is_const())
                }
                Expr::Between(x, l, h, false, _) => is_key_col(x) && l.is_const() && h.is_const(),
                Expr::InList(x, l, false, _) => is_key_col(x) && l.iter().all(Expr::is_const),
                _ => false,
            }
        };
        let needs_where = s.filters.iter().any(|f| !consumed(f))
            || !s.post.is_empty()
            || (s.join == JoinKind::Left && s.on.iter().any(|f| !consumed(f)));
        if needs_where || a.kind == AccessKind::Range {
            extra.push("Using where");
        }
        if a.covering {
            extra.push("Using index");
        }
        if i == 0 && !sel.order_by.is_empty() && !sel.ordered && !sel.aggregate {
            extra.push("Using filesort");
        }
        if i == 0 && sel.aggregate && !sel.group_by.is_empty() {
            extra.push("Using temporary; Using filesort");
        }
        if i > 0 && a.kind == AccessKind::All {
            extra.push("Using join buffer (flat, BNL join)");
        }
        let rows_est = match &s.kind {
            SourceKind::Rows(r) => r.len() as u64,
            _ => a.rows,
        };
        rows.push(vec![
            Value::Int(1),
            Value::str(if matches!(s.kind, SourceKind::Derived(_)) {
                "DERIVED"
            } else {
                "SIMPLE"
            }),
            Value::str(&s.alias),
            Value::str(a.kind.name()),
            if a.possible_keys.is_empty() {
                Value::Null
            } else {
                Value::str(&a.possible_keys.join(","))
            },
            key.map(|k| Value::str(&k)).unwrap_or(Value::Null),
            klen.map(|k| Value::str(&k.to_string()))
                .unwrap_or(Value::Null),
            reference.map(|r| Value::str(&r)).unwrap_or(Value::Null),
            Value::UInt(rows_est),
            Value::str(&extra.join("; ")),
        ]);
    }
    rows
}
