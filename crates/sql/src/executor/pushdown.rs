//! WHERE conditions pushed into derived tables and views before they are materialised:
//! `SELECT ... FROM v WHERE v.id = 5` reads the row of `id = 5` through the view's table's
//! index instead of materialising the whole view. A conjunct moves in (it also stays out,
//! where it is true of every row that comes back) when it reads only the derived table's
//! columns, no subquery, aggregate or outer column of its own and nothing volatile, the
//! derived query is a plain filter (no grouping, DISTINCT, LIMIT or window functions),
//! and no outer join can NULL-extend the derived table.

use crate::binder::{JoinKind, Select, SourceKind};
use crate::expr::Expr;

/// Pushes `sel`'s movable WHERE conjuncts into its derived source `si`.
pub(super) fn push_into_derived(sel: &mut Select, si: usize) {
    if sel.sources.iter().any(|s| s.join != JoinKind::Inner) {
        return;
    }
    let (offset, ncols) = (sel.sources[si].offset, sel.sources[si].ncols);
    let SourceKind::Derived(d) = &sel.sources[si].kind else {
        return;
    };
    if d.aggregate
        || !d.group_by.is_empty()
        || d.having.is_some()
        || d.distinct
        || d.limit.is_some()
        || d.offset != 0
        || !d.windows.is_empty()
        || d.items.len() < ncols
    {
        return;
    }
    let mut moved = Vec::new();
    for c in &sel.filter {
        if !movable(c, offset, ncols) {
            continue;
        }
        // Columns become placeholders first: the expressions put in for them read the
        // derived query's own row, whose positions must not be replaced again.
        let mut inner = c.clone();
        inner.walk_mut(&mut |x| {
            if let Expr::Col(p) = x {
                *x = Expr::Outer(usize::MAX, *p - offset);
            }
        });
        inner.walk_mut(&mut |x| {
            if let Expr::Outer(usize::MAX, i) = x {
                *x = d.items[*i].clone();
            }
        });
        moved.push(inner);
    }
    if moved.is_empty() {
        return;
    }
    if let SourceKind::Derived(d) = &mut sel.sources[si].kind {
        d.filter.extend(moved);
    }
}

/// Whether conjunct `c` reads only columns `offset..offset + ncols` (at least one) and
/// nothing else of the query around it.
fn movable(c: &Expr, offset: usize, ncols: usize) -> bool {
    let mut ok = true;
    let mut reads = false;
    c.walk(&mut |x| match x {
        Expr::Col(p) => {
            if *p < offset || *p >= offset + ncols {
                ok = false;
            }
            reads = true;
        }
        Expr::Agg(_)
        | Expr::Outer(..)
        | Expr::Subquery(_)
        | Expr::InSubquery(..)
        | Expr::RowInSubquery(..)
        | Expr::Exists(..)
        | Expr::Quantified(..) => ok = false,
        Expr::Func(f, _) if f.volatile() => ok = false,
        _ => {}
    });
    ok && reads
}
