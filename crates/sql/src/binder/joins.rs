//! FROM clauses: join trees (INNER, CROSS, LEFT, RIGHT, NATURAL, USING, nested joins),
//! their `SELECT *` column order, and their linearisation into the executor's sequence of
//! nested-loop sources: a RIGHT JOIN runs as a LEFT JOIN with its sides swapped, and the
//! outer-joined side of a join is a group of sources that is NULL-extended as a whole.

use onelog_types::{code, SqlError};
use sqlparser::ast as sq;

use super::{conjuncts, err, ident_eq, unsupported, Binder, Clause, JoinKind, Source};
use crate::expr::{BinOp, Expr};
use crate::parser::name_parts;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TreeJoin {
    Inner,
    Left,
    Right,
}

#[derive(Debug)]
pub(super) enum JoinTree {
    /// A source, by its index in binding (textual) order.
    Leaf(usize),
    Join {
        kind: TreeJoin,
        left: Box<JoinTree>,
        right: Box<JoinTree>,
        on: Vec<Expr>,
    },
}

/// A bound FROM item: its join tree and the positions of its `SELECT *` columns.
#[derive(Debug)]
pub(super) struct Item {
    pub tree: JoinTree,
    pub star: Vec<usize>,
}

impl Item {
    /// The source just added.
    pub fn leaf(sources: &[Source]) -> Item {
        let i = sources.len() - 1;
        let s = &sources[i];
        Item {
            tree: JoinTree::Leaf(i),
            star: (s.offset..s.offset + s.ncols).collect(),
        }
    }
}

/// Where a condition is evaluated.
pub enum Place {
    /// While the source at this index is joined (its `on`).
    Level(usize),
    /// After the outer-joined group starting at this index (its `post`).
    Post(usize),
}

/// The execution index of the source owning each row position.
pub fn level_of(sources: &[Source], width: usize) -> Vec<usize> {
    let mut v = vec![0; width];
    for (i, s) in sources.iter().enumerate() {
        for p in v.iter_mut().skip(s.offset).take(s.width) {
            *p = i;
        }
    }
    v
}

/// The last source (execution index) whose columns `e` reads, counting the outer columns
/// of the correlated subqueries it contains (`params` of `subqueries[i]`).
pub fn max_level(
    e: &Expr,
    level_of: &[usize],
    params: &dyn Fn(usize) -> Vec<usize>,
) -> Option<usize> {
    let mut m: Option<usize> = None;
    let mut see = |p: usize| {
        let l = level_of.get(p).copied().unwrap_or(0);
        m = Some(m.map_or(l, |x| x.max(l)));
    };
    e.walk(&mut |x| match x {
        Expr::Col(p) => see(*p),
        Expr::Subquery(i)
        | Expr::Exists(i, _)
        | Expr::InSubquery(_, i, ..)
        | Expr::RowInSubquery(_, i, ..)
        | Expr::Quantified(_, _, i, ..) => {
            for p in params(*i) {
                see(p)
            }
        }
        _ => {}
    });
    m
}

/// Where to evaluate a condition that reads sources up to `level` and belongs to a join
/// whose inner side starts at `span_start`: at `level` (not before `span_start`), unless
/// that is inside an outer-joined group nested in the join, in which case after the
/// outermost such group.
pub fn place(sources: &[Source], level: Option<usize>, span_start: usize) -> Place {
    let level = level.unwrap_or(span_start).max(span_start);
    for (i, s) in sources
        .iter()
        .enumerate()
        .take(level + 1)
        .skip(span_start + 1)
    {
        if s.join == JoinKind::Left && level < s.group_end {
            return Place::Post(i);
        }
    }
    Place::Level(level)
}

/// Appends the execution order of `t`'s sources to `order`; records outer-joined groups
/// (start, end) and each join condition with the start of its join's inner side.
fn linearize(
    t: JoinTree,
    order: &mut Vec<usize>,
    groups: &mut Vec<(usize, usize)>,
    conds: &mut Vec<(Expr, usize)>,
) {
    match t {
        JoinTree::Leaf(i) => order.push(i),
        JoinTree::Join {
            kind,
            left,
            right,
            on,
        } => {
            let (first, second) = if kind == TreeJoin::Right {
                (right, left)
            } else {
                (left, right)
            };
            linearize(*first, order, groups, conds);
            let s = order.len();
            linearize(*second, order, groups, conds);
            let e = order.len();
            if kind != TreeJoin::Inner {
                groups.push((s, e));
            }
            conds.extend(on.into_iter().map(|c| (c, s)));
        }
    }
}

impl Binder<'_> {
    /// Binds `relation JOIN ... JOIN ...`.
    pub(super) fn bind_from_item(
        &mut self,
        sources: &mut Vec<Source>,
        twj: &sq::TableWithJoins,
    ) -> Result<Option<Item>, SqlError> {
        let mut acc = self.bind_table_factor(sources, &twj.relation)?;
        for j in &twj.joins {
            let (kind, constraint) = match &j.join_operator {
                sq::JoinOperator::Join(c)
                | sq::JoinOperator::Inner(c)
                | sq::JoinOperator::StraightJoin(c)
                | sq::JoinOperator::CrossJoin(c) => (TreeJoin::Inner, c),
                sq::JoinOperator::Left(c) | sq::JoinOperator::LeftOuter(c) => (TreeJoin::Left, c),
                sq::JoinOperator::Right(c) | sq::JoinOperator::RightOuter(c) => {
                    (TreeJoin::Right, c)
                }
                sq::JoinOperator::FullOuter(_) => return Err(unsupported("FULL OUTER JOIN")),
                _ => return Err(unsupported("this join")),
            };
            let right = self.bind_table_factor(sources, &j.relation)?;
            let (Some(left), Some(right)) = (acc, right) else {
                return Err(crate::parser::syntax_error("", 0));
            };
            let (on, star) = match constraint {
                sq::JoinConstraint::On(e) => {
                    let mut on = Vec::new();
                    conjuncts(self.bind_expr(e, Clause::On)?, &mut on);
                    (on, [left.star.as_slice(), right.star.as_slice()].concat())
                }
                sq::JoinConstraint::Using(cols) => {
                    let names: Vec<String> = cols
                        .iter()
                        .map(|c| name_parts(c).pop().unwrap_or_default())
                        .collect();
                    self.using_join(kind, &names, &left.star, &right.star)?
                }
                sq::JoinConstraint::Natural => {
                    let mut names: Vec<String> = Vec::new();
                    for &p in &left.star {
                        let n = self.scope_name(p);
                        if right
                            .star
                            .iter()
                            .any(|&q| ident_eq(&self.scope_name(q), &n))
                            && !names.iter().any(|x| ident_eq(x, &n))
                        {
                            names.push(n);
                        }
                    }
                    self.using_join(kind, &names, &left.star, &right.star)?
                }
                sq::JoinConstraint::None => {
                    if kind != TreeJoin::Inner {
                        return Err(crate::parser::syntax_error("", 0));
                    }
                    (
                        Vec::new(),
                        [left.star.as_slice(), right.star.as_slice()].concat(),
                    )
                }
            };
            acc = Some(Item {
                tree: JoinTree::Join {
                    kind,
                    left: Box::new(left.tree),
                    right: Box::new(right.tree),
                    on,
                },
                star,
            });
        }
        Ok(acc)
    }

    pub(super) fn scope_name(&self, pos: usize) -> String {
        self.scope
            .iter()
            .find(|s| s.pos == pos)
            .map(|s| s.name.clone())
            .unwrap_or_default()
    }

    /// The one column named `name` among `star` (error 1052 if several, 1054 if none).
    fn using_column(&self, star: &[usize], name: &str) -> Result<usize, SqlError> {
        let found: Vec<usize> = star
            .iter()
            .copied()
            .filter(|&p| ident_eq(&self.scope_name(p), name))
            .collect();
        match found.len() {
            1 => Ok(found[0]),
            0 => Err(err(
                code::ER_BAD_FIELD_ERROR,
                format!("Unknown column '{name}' in 'FROM'"),
            )),
            _ => Err(err(
                code::ER_NON_UNIQ_ERROR,
                format!("Column '{name}' in FROM is ambiguous"),
            )),
        }
    }

    /// `USING (names)`: equality conditions, the coalesced columns first in `SELECT *`
    /// (the preserved side's for outer joins), and the other side's copies hidden from
    /// unqualified names.
    fn using_join(
        &mut self,
        kind: TreeJoin,
        names: &[String],
        left: &[usize],
        right: &[usize],
    ) -> Result<(Vec<Expr>, Vec<usize>), SqlError> {
        let mut on = Vec::new();
        let mut lcols = Vec::new();
        let mut rcols = Vec::new();
        for n in names {
            let l = self.using_column(left, n)?;
            let r = self.using_column(right, n)?;
            let (lc, rc) = (Expr::Col(l), Expr::Col(r));
            let coll = self.agg_coll(&[&lc, &rc]);
            on.push(Expr::Bin(BinOp::Eq, Box::new(lc), Box::new(rc), coll));
            lcols.push(l);
            rcols.push(r);
        }
        let (keep, hide, first, second) = if kind == TreeJoin::Right {
            (&rcols, &lcols, right, left)
        } else {
            (&lcols, &rcols, left, right)
        };
        for s in self.scope.iter_mut() {
            if hide.contains(&s.pos) {
                s.using_hidden = true;
            }
        }
        let mut star = keep.clone();
        star.extend(first.iter().filter(|p| !keep.contains(p)));
        star.extend(second.iter().filter(|p| !hide.contains(p)));
        Ok((on, star))
    }

    /// Binds a FROM clause (comma-separated items): the sources in execution order with
    /// their join conditions placed; remembers the `SELECT *` columns.
    pub(super) fn bind_from(
        &mut self,
        from: &[sq::TableWithJoins],
    ) -> Result<Vec<Source>, SqlError> {
        let mut sources = Vec::new();
        let mut tree: Option<JoinTree> = None;
        let mut star = Vec::new();
        for twj in from {
            let Some(item) = self.bind_from_item(&mut sources, twj)? else {
                continue;
            };
            star.extend(item.star);
            tree = Some(match tree {
                None => item.tree,
                Some(t) => JoinTree::Join {
                    kind: TreeJoin::Inner,
                    left: Box::new(t),
                    right: Box::new(item.tree),
                    on: Vec::new(),
                },
            });
        }
        self.star = star;
        let Some(tree) = tree else {
            return Ok(sources);
        };
        let mut order = Vec::new();
        let mut groups = Vec::new();
        let mut conds = Vec::new();
        linearize(tree, &mut order, &mut groups, &mut conds);
        let mut slots: Vec<Option<Source>> = sources.into_iter().map(Some).collect();
        let mut sources: Vec<Source> = order.iter().map(|&i| slots[i].take().unwrap()).collect();
        for &(s, e) in &groups {
            sources[s].join = JoinKind::Left;
            sources[s].group_end = e;
            // Outer-joined columns may be NULL.
            for src in &sources[s..e] {
                let range = src.offset..src.offset + src.width;
                for c in self.scope.iter_mut().filter(|c| range.contains(&c.pos)) {
                    c.nullable = true;
                }
                for t in &mut self.types[range] {
                    t.1 = true;
                }
            }
        }
        let levels = level_of(&sources, self.types.len());
        for (c, span_start) in conds {
            let subs = &self.subqueries;
            let params = |i: usize| subs.get(i).map(|s| s.params.clone()).unwrap_or_default();
            match place(&sources, max_level(&c, &levels, &params), span_start) {
                Place::Level(l) => sources[l].on.push(c),
                Place::Post(g) => sources[g].post.push(c),
            }
        }
        Ok(sources)
    }
}
