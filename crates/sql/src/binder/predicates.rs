//! Binding predicates: BETWEEN, IN (lists, sorted constant lists, subqueries, row
//! constructors), ANY/ALL/SOME over subqueries, LIKE, ILIKE and REGEXP/RLIKE.

use super::*;

impl<'a> Binder<'a> {
    /// BETWEEN, IN, ANY/ALL, LIKE, ILIKE, RLIKE.
    pub(super) fn bind_predicate(
        &mut self,
        e: &sq::Expr,
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        use sq::Expr as E;
        Ok(match e {
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let (a, l, h) = (
                    self.sub(expr, clause)?,
                    self.sub(low, clause)?,
                    self.sub(high, clause)?,
                );
                let (mut a, mut l, mut h) = (self.numeric_subject(a, &[&l, &h]), l, h);
                self.fixed_bin_operands("between", &mut [&mut a, &mut l, &mut h])?;
                let coll = self.agg_coll_checked(&[&a, &l, &h], "between")?;
                Expr::Between(a, l, h, *negated, coll)
            }
            E::InList {
                expr,
                list,
                negated,
            } if matches!(expr.as_ref(), E::Tuple(_)) => {
                // (a, b) IN ((1, 2), (3, 4)): one row comparison per item.
                let mut eqs = Vec::with_capacity(list.len());
                for x in list {
                    eqs.push(self.bind_row_cmp(BinOp::Eq, expr, x, clause)?);
                }
                let any = if eqs.is_empty() {
                    Expr::Lit(expr::bool_val(false))
                } else {
                    Logic::Or.balanced(eqs)
                };
                if *negated {
                    Expr::Not(Box::new(any))
                } else {
                    any
                }
            }
            E::InSubquery {
                expr,
                subquery,
                negated,
            } if matches!(expr.as_ref(), E::Tuple(_)) => {
                let E::Tuple(items) = expr.as_ref() else {
                    unreachable!()
                };
                let mut xs = Vec::with_capacity(items.len());
                for x in items {
                    xs.push(self.bind_expr(x, clause)?);
                }
                let i = self.bind_subquery(subquery)?;
                if self.subqueries[i].columns.len() != xs.len() {
                    return Err(err(
                        code::ER_OPERAND_COLUMNS,
                        format!("Operand should contain {} column(s)", xs.len()),
                    ));
                }
                let colls = xs
                    .iter()
                    .enumerate()
                    .map(|(k, x)| {
                        let sub = match self.subqueries[i].columns[k].ty.collation() {
                            Some(c) => (c, Derivation::Implicit),
                            None => (Collation::DEFAULT, Derivation::Numeric),
                        };
                        Collation::aggregate(self.coll_of(x), sub).0
                    })
                    .collect();
                Expr::RowInSubquery(xs, i, *negated, colls)
            }
            E::InList {
                expr,
                list,
                negated,
            } => {
                let a = self.sub(expr, clause)?;
                let mut l = Vec::with_capacity(list.len());
                for x in list {
                    l.push(self.bind_expr(x, clause)?);
                }
                let mut a = self.numeric_subject(a, &l.iter().collect::<Vec<_>>());
                self.fixed_bin_in_list(&mut a, &mut l)?;
                let args = std::iter::once(&*a).chain(&l).collect::<Vec<_>>();
                let op = if l.len() == 1 { "=" } else { "in" };
                let coll = self.agg_coll_checked(&args, op)?;
                match sorted_list(&l, coll) {
                    Some(list) => Expr::InSorted(a, Arc::new(list), *negated),
                    None => Expr::InList(a, l, *negated, coll),
                }
            }
            E::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let a = self.sub(expr, clause)?;
                let i = self.bind_column_subquery(subquery, false)?;
                let coll = self.subquery_coll(&a, i);
                Expr::InSubquery(a, i, *negated, coll)
            }
            E::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | E::AllOp {
                left,
                compare_op,
                right,
            } => {
                let all = matches!(e, E::AllOp { .. });
                let sq::Expr::Subquery(q) = right.as_ref() else {
                    return Err(unsupported("ANY/ALL over a list"));
                };
                use sq::BinaryOperator as O;
                let op = match compare_op {
                    O::Eq => BinOp::Eq,
                    O::NotEq => BinOp::Ne,
                    O::Lt => BinOp::Lt,
                    O::LtEq => BinOp::Le,
                    O::Gt => BinOp::Gt,
                    O::GtEq => BinOp::Ge,
                    other => return Err(unsupported(&format!("operator {other} with ANY/ALL"))),
                };
                let a = self.sub(left, clause)?;
                let i = self.bind_column_subquery(q, false)?;
                let coll = self.subquery_coll(&a, i);
                Expr::Quantified(a, op, i, all, coll)
            }
            E::Like {
                negated,
                any,
                expr,
                pattern,
                escape_char,
            } => {
                if *any {
                    return Err(unsupported("LIKE ANY"));
                }
                let esc = match escape_char.as_deref() {
                    Some(sq::Expr::Value(v)) => match &v.value {
                        sq::Value::SingleQuotedString(s) if s.len() == 1 => Some(s.as_bytes()[0]),
                        _ => {
                            return Err(err(
                                code::ER_WRONG_ARGUMENTS,
                                "Incorrect arguments to ESCAPE",
                            ))
                        }
                    },
                    Some(_) => {
                        return Err(err(
                            code::ER_WRONG_ARGUMENTS,
                            "Incorrect arguments to ESCAPE",
                        ))
                    }
                    None => None,
                };
                let (a, p) = (self.sub(expr, clause)?, self.sub(pattern, clause)?);
                let a = Box::new(self.zerofill_text(*a));
                let coll = self.agg_coll_checked(&[&a, &p], "like")?;
                Expr::Like(a, p, esc, *negated, coll)
            }
            E::ILike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let (a, p) = (self.sub(expr, clause)?, self.sub(pattern, clause)?);
                Expr::Like(a, p, None, *negated, Collation::Utf8mb4GeneralCi)
            }
            E::RLike {
                negated,
                expr,
                pattern,
                ..
            } => Expr::Regexp(
                self.sub(expr, clause)?,
                self.sub(pattern, clause)?,
                *negated,
            ),
            _ => unreachable!("not a predicate"),
        })
    }
}
