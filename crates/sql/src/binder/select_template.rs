//! SELECT bound once and run again with new parameters.
//!
//! A session runs a statement shape (see `crate::shape`) or a prepared SELECT many times
//! with different values in its WHERE clause. Binding it again each time resolved the
//! same tables and columns and built the same expressions: in a point query by primary
//! key that was about a third of the statement's own CPU (bind, then the planner). A
//! [`SelectTemplate`] keeps the bound statement, before planning, and where in its WHERE
//! conjuncts each parameter's value went; a run clones it, puts the new values there, and
//! plans and runs it as usual (the planner sees the values, as it would have).
//!
//! Where the values went is found by binding the statement twice: with the parameters as
//! given and with each parameter changed (differently per parameter, same kind). The two
//! bindings must be the same statement but for literals of the WHERE conjuncts, and every
//! literal that differs must be exactly the parameter in the first binding and exactly
//! its changed value in the second: a value the binder transformed (`-?`, a string
//! converted to a date) or that reached anything else (`LIMIT ?`, the select list, join
//! conditions) makes no template, nor does a parameter that reached nothing. A binding
//! that read the session or the clock (`NOW()`, `@v`, `@@var`, `LAST_INSERT_ID()`, ...:
//! see `Session`'s `Env`) makes none either, as do subqueries and sources other than
//! base tables.
//!
//! A template is used only while it still means what it meant: the catalog holds the very
//! same definitions of its tables, the current database is the one it was bound in, and
//! each parameter has the kind it had (the binder types literals by kind, and integers by
//! size). Otherwise the statement binds afresh.

use std::sync::Arc;

use onelog_engine::{Catalog, TableDef};
use onelog_types::Value;

use super::template::unchanged;
use super::{Select, SourceKind};
use crate::expr::Expr;

/// What a parameter's value must look like for a template to take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Integers that bind as a 4-byte type, and the others.
    SmallInt,
    BigInt,
    UInt,
    Double,
    Bytes,
}

fn kind_of(v: &Value) -> Option<Kind> {
    Some(match v {
        Value::Int(i) if i.unsigned_abs() < (1 << 31) => Kind::SmallInt,
        Value::Int(_) => Kind::BigInt,
        Value::UInt(_) => Kind::UInt,
        Value::Double(d) if d.is_finite() => Kind::Double,
        Value::Bytes(_) => Kind::Bytes,
        _ => return None,
    })
}

/// The parameters changed for the second binding: each differently (by its position), of
/// the same kind. None: some parameter has a kind templates do not take.
pub fn changed_params(params: &[Value]) -> Option<Vec<Value>> {
    params
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let d = k as u64 + 1;
            let c = match v {
                Value::Int(i) => Value::Int(*i ^ d as i64),
                Value::UInt(u) => Value::UInt(*u ^ d),
                Value::Double(x) => Value::Double(*x + d as f64),
                Value::Bytes(b) => {
                    let mut b = b.clone();
                    b.extend_from_slice(format!("~{k}").as_bytes());
                    Value::Bytes(b)
                }
                _ => return None,
            };
            (kind_of(v).is_some() && kind_of(&c) == kind_of(v)).then_some(c)
        })
        .collect()
}

#[derive(Debug)]
pub struct SelectTemplate {
    /// Bound, not planned; parameter sites hold the first binding's values.
    sel: Select,
    tables: Vec<Arc<TableDef>>,
    current_db: Option<String>,
    /// (position among the literals of `sel.filter` in walk order, parameter index).
    sites: Vec<(usize, usize)>,
    kinds: Vec<Kind>,
}

/// The literals of the WHERE conjuncts, in walk order.
fn filter_lits(sel: &Select) -> Vec<Value> {
    let mut out = Vec::new();
    for e in &sel.filter {
        e.walk(&mut |x| {
            if let Expr::Lit(v) = x {
                out.push(v.clone());
            }
        });
    }
    out
}

/// `sel` with every literal of its WHERE conjuncts replaced by NULL, printed: two bindings
/// with the same text are the same statement but for those literals.
fn without_filter_lits(sel: &Select) -> String {
    let mut s = sel.clone();
    for e in s.filter.iter_mut() {
        e.walk_mut(&mut |x| {
            if let Expr::Lit(v) = x {
                *v = Value::Null;
            }
        });
    }
    format!("{s:?}")
}

impl SelectTemplate {
    /// The template of a statement bound as `a` with `params` and as `b` with
    /// `changed` (from [`changed_params`]), in `current_db`; None when it has none.
    pub fn new(
        a: &Select,
        b: &Select,
        params: &[Value],
        changed: &[Value],
        current_db: Option<&str>,
    ) -> Option<Self> {
        if !a.subqueries.is_empty()
            || a.sources.is_empty()
            || a.sources
                .iter()
                .any(|s| !matches!(s.kind, SourceKind::Table(_)))
            || params.len() != changed.len()
        {
            return None;
        }
        let kinds: Vec<Kind> = params.iter().map(kind_of).collect::<Option<_>>()?;
        if without_filter_lits(a) != without_filter_lits(b) {
            return None;
        }
        let (la, lb) = (filter_lits(a), filter_lits(b));
        if la.len() != lb.len() {
            return None;
        }
        let mut sites = Vec::new();
        let mut used = vec![false; params.len()];
        let is_site = |k: usize, x: &Value, y: &Value| *x == params[k] && *y == changed[k];
        // Parameters are numbered in text order and usually reach the conjuncts in that
        // order: the one after the last match is tried first, so long lists stay linear.
        let mut next = 0;
        for (i, (x, y)) in la.iter().zip(&lb).enumerate() {
            if x == y {
                continue; // a literal of the statement's own
            }
            let k = if next < params.len() && is_site(next, x, y) {
                next
            } else {
                (0..params.len()).find(|&k| is_site(k, x, y))?
            };
            next = k + 1;
            used[k] = true;
            sites.push((i, k));
        }
        if used.contains(&false) {
            return None;
        }
        Some(SelectTemplate {
            sel: a.clone(),
            tables: a
                .sources
                .iter()
                .filter_map(|s| s.table().cloned())
                .collect(),
            current_db: current_db.map(str::to_string),
            sites,
            kinds,
        })
    }

    /// Whether the template binds as the statement would now with `params`: same table
    /// definitions in the catalog, same current database, parameters of the same kinds.
    pub fn valid(&self, catalog: &Catalog, current_db: Option<&str>, params: &[Value]) -> bool {
        self.current_db.as_deref() == current_db
            && params.len() == self.kinds.len()
            && params
                .iter()
                .zip(&self.kinds)
                .all(|(v, k)| kind_of(v) == Some(*k))
            && self.tables.iter().all(|t| unchanged(catalog, t))
    }

    /// The bound statement for one run with `params`.
    pub fn select(&self, params: &[Value]) -> Select {
        let mut sel = self.sel.clone();
        let mut i = 0;
        let mut sites = self.sites.iter().peekable();
        for e in sel.filter.iter_mut() {
            e.walk_mut(&mut |x| {
                if let Expr::Lit(v) = x {
                    if let Some(&&(pos, k)) = sites.peek() {
                        if pos == i {
                            *v = params[k].clone();
                            sites.next();
                        }
                    }
                    i += 1;
                }
            });
        }
        sel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_parameters_keep_their_kinds_and_differ_from_each_other() {
        let p = vec![
            Value::Int(5),
            Value::Int(5),
            Value::Int((1 << 31) - 1),
            Value::Int(-(1 << 40)),
            Value::UInt(u64::MAX),
            Value::Double(1.5),
            Value::Bytes(b"x".to_vec()),
            Value::Bytes(vec![]),
        ];
        let c = changed_params(&p).unwrap();
        for (a, b) in p.iter().zip(&c) {
            assert_ne!(a, b);
            assert_eq!(kind_of(a), kind_of(b), "{a:?} -> {b:?}");
        }
        // Equal values are told apart by where they went.
        assert_ne!(c[0], c[1]);
    }

    #[test]
    fn kinds_the_binder_types_differently_are_not_taken() {
        for v in [
            Value::Null,
            Value::Double(f64::INFINITY),
            crate::binder::parse_number("2.50"),
        ] {
            assert!(
                changed_params(&[Value::Int(1), v.clone()]).is_none(),
                "{v:?}"
            );
        }
        // A small integer whose change would make it a large one.
        assert_eq!(kind_of(&Value::Int(1 << 31)), Some(Kind::BigInt));
        assert_eq!(kind_of(&Value::Int((1 << 31) - 1)), Some(Kind::SmallInt));
    }
}
