//! Binding operators: arithmetic, comparison (also of row constructors), logical and bitwise
//! binary operators, date +/- INTERVAL, and the unary ones.

use super::scalar::cmp_symbol;
use super::*;

impl<'a> Binder<'a> {
    /// A binary or unary operator.
    pub(super) fn bind_operator(&mut self, e: &sq::Expr, clause: Clause) -> Result<Expr, SqlError> {
        use sq::Expr as E;
        Ok(match e {
            E::BinaryOp { left, op, right }
                if matches!(left.as_ref(), E::Tuple(_))
                    || matches!(right.as_ref(), E::Tuple(_)) =>
            {
                let Some(op) = comparison(op) else {
                    return Err(err(
                        code::ER_OPERAND_COLUMNS,
                        "Operand should contain 1 column(s)",
                    ));
                };
                self.bind_row_cmp(op, left, right, clause)?
            }
            // `date + INTERVAL n unit`, `INTERVAL n unit + date`, `date - INTERVAL n unit`.
            E::BinaryOp {
                left,
                op: op @ (sq::BinaryOperator::Plus | sq::BinaryOperator::Minus),
                right,
            } if matches!(right.as_ref(), E::Interval(_))
                || (matches!(left.as_ref(), E::Interval(_))
                    && matches!(op, sq::BinaryOperator::Plus)) =>
            {
                let subtract = matches!(op, sq::BinaryOperator::Minus);
                match (left.as_ref(), right.as_ref()) {
                    (date, E::Interval(iv)) => {
                        self.bind_add_interval(date, iv, subtract, clause)?
                    }
                    (E::Interval(iv), date) => self.bind_add_interval(date, iv, false, clause)?,
                    _ => unreachable!("guarded above"),
                }
            }
            E::BinaryOp { left, op, right } => {
                let l = self.sub(left, clause)?;
                let r = self.sub(right, clause)?;
                use sq::BinaryOperator as O;
                let o = match op {
                    // Long chains arrive balanced (`syntax_depth`).
                    O::And => return Ok(Expr::And(l, r)),
                    O::Or | O::StringConcat => return Ok(Expr::Or(l, r)),
                    O::Xor => return Ok(Expr::Xor(l, r)),
                    O::Plus => BinOp::Add,
                    O::Minus => BinOp::Sub,
                    O::Multiply => BinOp::Mul,
                    O::Divide => BinOp::Div,
                    O::Modulo => BinOp::Mod,
                    O::MyIntegerDivide | O::DuckIntegerDivide => BinOp::IntDiv,
                    o if comparison(o).is_some() => comparison(o).expect("matched"),
                    O::BitwiseAnd => BinOp::BitAnd,
                    O::BitwiseOr => BinOp::BitOr,
                    O::BitwiseXor => BinOp::BitXor,
                    O::PGBitwiseShiftLeft => BinOp::Shl,
                    O::PGBitwiseShiftRight => BinOp::Shr,
                    O::Regexp => return Ok(Expr::Regexp(l, r, false)),
                    other => return Err(unsupported(&format!("operator {other}"))),
                };
                let (mut l, mut r) = self.numeric_operands(o, l, r);
                if fixedbin::is_comparison(o) {
                    let sym = cmp_symbol(o).unwrap_or("<=>");
                    self.fixed_bin_operands(sym, &mut [&mut l, &mut r])?;
                } else {
                    fixedbin::check_no_arith(self, o, &l, &r)?;
                }
                let coll = match cmp_symbol(o) {
                    Some(sym) => self.agg_coll_checked(&[&l, &r], sym)?,
                    None => self.agg_coll(&[&l, &r]),
                };
                Expr::Bin(o, l, r, coll)
            }
            E::UnaryOp { op, expr } => {
                let a = self.sub(expr, clause)?;
                match op {
                    sq::UnaryOperator::Minus => match *a {
                        Expr::Lit(v) => Expr::Lit(match v {
                            Value::UInt(u) if u == 1u64 << 63 => Value::Int(i64::MIN),
                            other => expr::eval(
                                &Expr::Neg(Box::new(Expr::Lit(other))),
                                &expr::Ctx::new(&[]),
                            )?,
                        }),
                        other => Expr::Neg(Box::new(other)),
                    },
                    sq::UnaryOperator::Plus => *a,
                    sq::UnaryOperator::Not | sq::UnaryOperator::BangNot => Expr::Not(a),
                    sq::UnaryOperator::BitwiseNot => Expr::BitNot(a),
                    other => return Err(unsupported(&format!("operator {other}"))),
                }
            }
            _ => unreachable!("not an operator"),
        })
    }
}
