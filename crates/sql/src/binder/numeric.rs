//! ENUM and SET in numeric context: arithmetic, bit operators, comparisons with numbers and
//! ORDER BY read an ENUM as its index and a SET as its bitmap (MariaDB sorts ENUMs by
//! index); everywhere else their values are text.

use super::*;

impl Binder<'_> {
    /// `e` read as a number when it is an ENUM or SET value.
    pub(super) fn as_number(&self, e: Expr) -> Expr {
        match self.type_of(&e).0 {
            t if t.is_enum_or_set() => Expr::Cast(Box::new(e), CastType::Number(t)),
            _ => e,
        }
    }

    fn is_enum_or_set(&self, e: &Expr) -> bool {
        self.type_of(e).0.is_enum_or_set()
    }

    /// Whether `e` is a number (not text, not temporal).
    fn is_number(&self, e: &Expr) -> bool {
        let t = self.type_of(e).0;
        is_numeric_ty(&t) || matches!(t, ColumnType::Bit { .. } | ColumnType::Year)
    }

    /// The operands of `op`: arithmetic and bit operators read ENUM/SET as numbers, and so
    /// does a comparison with a number.
    pub(super) fn numeric_operands(
        &self,
        op: BinOp,
        l: Box<Expr>,
        r: Box<Expr>,
    ) -> (Box<Expr>, Box<Expr>) {
        let cmp = matches!(
            op,
            BinOp::Eq
                | BinOp::Ne
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::NullSafeEq
        );
        let (le, re) = (self.is_enum_or_set(&l), self.is_enum_or_set(&r));
        if !le && !re {
            return (l, r);
        }
        let wrap_l = le && (!cmp || self.is_number(&r));
        let wrap_r = re && (!cmp || self.is_number(&l));
        (
            if wrap_l {
                Box::new(self.as_number(*l))
            } else {
                l
            },
            if wrap_r {
                Box::new(self.as_number(*r))
            } else {
                r
            },
        )
    }

    /// `a [NOT] IN (...)` / `a BETWEEN x AND y` over an ENUM/SET `a`: numbers when every
    /// other operand is a number.
    pub(super) fn numeric_subject(&self, a: Box<Expr>, others: &[&Expr]) -> Box<Expr> {
        if self.is_enum_or_set(&a) && !others.is_empty() && others.iter().all(|o| self.is_number(o))
        {
            Box::new(self.as_number(*a))
        } else {
            a
        }
    }
}
