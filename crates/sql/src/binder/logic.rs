//! AND and OR trees built from lists (row comparisons, `(a, b) IN ((1, 2), ...)`):
//! [`Logic::balanced`] joins any number of operands as a balanced tree, so evaluating,
//! walking and dropping it recurse only as deep as the logarithm of its length. Both are
//! associative under SQL's three-valued logic, and the balanced tree keeps the
//! operands in order, so it evaluates them in the same order and stops at the same one.

use crate::expr::Expr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logic {
    And,
    Or,
}

impl Logic {
    fn join(self, a: Expr, b: Expr) -> Expr {
        let (a, b) = (Box::new(a), Box::new(b));
        match self {
            Logic::And => Expr::And(a, b),
            Logic::Or => Expr::Or(a, b),
        }
    }

    /// The operands joined as a balanced tree, in order. `operands` must not be empty.
    pub fn balanced(self, mut operands: Vec<Expr>) -> Expr {
        assert!(!operands.is_empty(), "a chain has at least one operand");
        if operands.len() == 1 {
            return operands.pop().unwrap();
        }
        let right = operands.split_off(operands.len() / 2);
        self.join(self.balanced(operands), self.balanced(right))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{eval, truth, Ctx};
    use onelog_types::Value;

    fn depth(e: &Expr) -> usize {
        match e {
            Expr::And(a, b) | Expr::Or(a, b) => 1 + depth(a).max(depth(b)),
            _ => 0,
        }
    }

    fn lits(v: &[Option<bool>]) -> Vec<Expr> {
        v.iter()
            .map(|b| Expr::Lit(b.map_or(Value::Null, |b| Value::Int(b as i64))))
            .collect()
    }

    #[test]
    fn a_long_chain_is_shallow_and_means_the_same() {
        let e = Logic::Or.balanced(lits(&vec![Some(false); 100_000]));
        assert_eq!(depth(&e), 17);
        assert_eq!(truth(&eval(&e, &Ctx::new(&[])).unwrap()), Some(false));
        // Every combination of three values, against the left-deep chain.
        let vals = [Some(true), Some(false), None];
        for logic in [Logic::And, Logic::Or] {
            for a in vals {
                for b in vals {
                    for c in vals {
                        for d in vals {
                            let ops = lits(&[a, b, c, d]);
                            let mut it = ops.clone().into_iter();
                            let first = it.next().unwrap();
                            let deep = it.fold(first, |acc, x| logic.join(acc, x));
                            let bal = logic.balanced(ops);
                            let cx = Ctx::new(&[]);
                            assert_eq!(
                                truth(&eval(&deep, &cx).unwrap()),
                                truth(&eval(&bal, &cx).unwrap()),
                                "{logic:?} {a:?} {b:?} {c:?} {d:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}
