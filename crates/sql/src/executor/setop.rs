//! UNION / INTERSECT / EXCEPT at run time: the parts run in order, their values are
//! converted to the result column types, and DISTINCT operations keep the first occurrence
//! of each row (MariaDB's order: a temporary table with a unique key, read in insertion
//! order). ALL variants of INTERSECT and EXCEPT are multiset operations.

use std::collections::{HashMap, HashSet};

use onelog_types::{ColumnType, SqlError, Value};

use super::{run_select, ExecCtx};
use crate::binder::setop_coerce;
use crate::binder::{SetNode, SetOpKind};
use crate::expr;

fn key(r: &[Value]) -> Vec<u8> {
    let mut k = Vec::new();
    for v in r {
        expr::group_key(v, &mut k);
    }
    k
}

fn distinct(rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    let mut seen = HashSet::new();
    rows.into_iter().filter(|r| seen.insert(key(r))).collect()
}

fn counts(rows: &[Vec<Value>]) -> HashMap<Vec<u8>, usize> {
    let mut m = HashMap::new();
    for r in rows {
        *m.entry(key(r)).or_insert(0) += 1;
    }
    m
}

/// The rows of a set-operation tree, converted to `types`.
pub fn run_setop(
    cx: &mut ExecCtx,
    node: &mut SetNode,
    types: &[ColumnType],
) -> Result<Vec<Vec<Value>>, SqlError> {
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
            Ok(match (kind, *all) {
                (SetOpKind::Union, true) => {
                    a.extend(b);
                    a
                }
                (SetOpKind::Union, false) => {
                    a.extend(b);
                    distinct(a)
                }
                (SetOpKind::Intersect, false) => {
                    let other: HashSet<Vec<u8>> = b.iter().map(|r| key(r)).collect();
                    distinct(a)
                        .into_iter()
                        .filter(|r| other.contains(&key(r)))
                        .collect()
                }
                (SetOpKind::Except, false) => {
                    let other: HashSet<Vec<u8>> = b.iter().map(|r| key(r)).collect();
                    distinct(a)
                        .into_iter()
                        .filter(|r| !other.contains(&key(r)))
                        .collect()
                }
                (SetOpKind::Intersect, true) => {
                    let mut left = counts(&b);
                    a.into_iter()
                        .filter(|r| match left.get_mut(&key(r)) {
                            Some(n) if *n > 0 => {
                                *n -= 1;
                                true
                            }
                            _ => false,
                        })
                        .collect()
                }
                (SetOpKind::Except, true) => {
                    let mut left = counts(&b);
                    a.into_iter()
                        .filter(|r| match left.get_mut(&key(r)) {
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
