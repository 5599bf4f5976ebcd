//! UNION / INTERSECT / EXCEPT at run time: the parts run in order, their values are
//! converted to the result column types, and DISTINCT operations keep the first occurrence
//! of each row (MariaDB's order: a temporary table with a unique key, read in insertion
//! order). ALL variants of INTERSECT and EXCEPT are multiset operations.

use std::collections::{HashMap, HashSet};

use onelog_types::{Collation, ColumnType, SqlError, Value};

use super::{run_select, ExecCtx};
use crate::binder::setop_coerce;
use crate::binder::{Recursive, Select, SetNode, SetOpKind, SourceKind};
use crate::expr;

/// A row's identity for DISTINCT and the set operations: strings compare under their
/// column's collation ('a' and 'A' are one row under utf8mb4_general_ci).
fn key(r: &[Value], colls: &[Collation]) -> Vec<u8> {
    let mut k = Vec::new();
    for (i, v) in r.iter().enumerate() {
        expr::group_key(
            v,
            colls.get(i).copied().unwrap_or(Collation::Binary),
            &mut k,
        );
    }
    k
}

fn distinct(rows: Vec<Vec<Value>>, colls: &[Collation]) -> Vec<Vec<Value>> {
    let mut seen = HashSet::new();
    rows.into_iter()
        .filter(|r| seen.insert(key(r, colls)))
        .collect()
}

fn counts(rows: &[Vec<Value>], colls: &[Collation]) -> HashMap<Vec<u8>, usize> {
    let mut m = HashMap::new();
    for r in rows {
        *m.entry(key(r, colls)).or_insert(0) += 1;
    }
    m
}

/// The rows of a set-operation tree, converted to `types`.
pub fn run_setop(
    cx: &mut ExecCtx,
    node: &mut SetNode,
    types: &[ColumnType],
) -> Result<Vec<Vec<Value>>, SqlError> {
    onelog_types::stack::check()?;
    match node {
        SetNode::Leaf(sel) => {
            let rows = run_select(cx, sel)?;
            Ok(rows
                .into_iter()
                .map(|r| {
                    r.into_iter()
                        .zip(types)
                        .map(|(v, t)| setop_coerce(v, t))
                        .collect()
                })
                .collect())
        }
        SetNode::Op {
            kind,
            all,
            left,
            right,
        } => {
            let mut a = run_setop(cx, left, types)?;
            let b = run_setop(cx, right, types)?;
            cx.check_interrupt()?;
            let colls: Vec<Collation> = types
                .iter()
                .map(|t| t.collation().unwrap_or(Collation::Binary))
                .collect();
            let colls = &colls[..];
            Ok(match (kind, *all) {
                (SetOpKind::Union, true) => {
                    a.extend(b);
                    a
                }
                (SetOpKind::Union, false) => {
                    a.extend(b);
                    distinct(a, colls)
                }
                (SetOpKind::Intersect, false) => {
                    let other: HashSet<Vec<u8>> = b.iter().map(|r| key(r, colls)).collect();
                    distinct(a, colls)
                        .into_iter()
                        .filter(|r| other.contains(&key(r, colls)))
                        .collect()
                }
                (SetOpKind::Except, false) => {
                    let other: HashSet<Vec<u8>> = b.iter().map(|r| key(r, colls)).collect();
                    distinct(a, colls)
                        .into_iter()
                        .filter(|r| !other.contains(&key(r, colls)))
                        .collect()
                }
                (SetOpKind::Intersect, true) => {
                    let mut left = counts(&b, colls);
                    a.into_iter()
                        .filter(|r| match left.get_mut(&key(r, colls)) {
                            Some(n) if *n > 0 => {
                                *n -= 1;
                                true
                            }
                            _ => false,
                        })
                        .collect()
                }
                (SetOpKind::Except, true) => {
                    let mut left = counts(&b, colls);
                    a.into_iter()
                        .filter(|r| match left.get_mut(&key(r, colls)) {
                            Some(n) if *n > 0 => {
                                *n -= 1;
                                false
                            }
                            _ => true,
                        })
                        .collect()
                }
            })
        }
    }
}

/// Gives the recursive part of a CTE the previous iteration's rows.
fn set_working(sel: &mut Select, rows: &std::sync::Arc<Vec<Vec<Value>>>) {
    for s in sel.sources.iter_mut() {
        match &mut s.kind {
            SourceKind::Working => s.kind = SourceKind::Rows(rows.clone()),
            SourceKind::Derived(d) => set_working(d, rows),
            _ => {}
        }
    }
}

/// The rows of a recursive CTE: the anchor's, then the step's over the rows the previous
/// iteration added, until an iteration adds none (UNION DISTINCT: rows seen before are not
/// added). As in MariaDB (whose `max_recursive_iterations` defaults to 2^32 - 1), a step
/// that never runs dry runs until the query is killed.
pub fn run_recursive(cx: &mut ExecCtx, r: &mut Recursive) -> Result<Vec<Vec<Value>>, SqlError> {
    let colls: Vec<Collation> = r
        .types
        .iter()
        .map(|t| t.collation().unwrap_or(Collation::Binary))
        .collect();
    let types = r.types.clone();
    let convert = |rows: Vec<Vec<Value>>| -> Vec<Vec<Value>> {
        rows.into_iter()
            .map(|row| {
                row.into_iter()
                    .zip(&types)
                    .map(|(v, t)| setop_coerce(v, t))
                    .collect()
            })
            .collect()
    };
    let mut seen = HashSet::new();
    let mut fresh = |rows: Vec<Vec<Value>>| -> Vec<Vec<Value>> {
        if r.distinct {
            rows.into_iter()
                .filter(|row| seen.insert(key(row, &colls)))
                .collect()
        } else {
            rows
        }
    };
    let mut all = fresh(convert(run_select(cx, &mut r.anchor)?));
    let mut delta = all.clone();
    while !delta.is_empty() {
        cx.check_interrupt()?;
        let mut step = r.step.clone();
        set_working(&mut step, &std::sync::Arc::new(delta));
        delta = fresh(convert(run_select(cx, &mut step)?));
        all.extend(delta.iter().cloned());
    }
    Ok(all)
}
