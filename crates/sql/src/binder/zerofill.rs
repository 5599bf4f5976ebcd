//! ZEROFILL columns in string contexts: CONCAT(a), CAST(a AS CHAR), a LIKE '0%', ... see
//! the column's padded text, as MariaDB's field-to-string conversion gives it; numeric
//! contexts (a + 0, comparisons with numbers, aggregates) see the number.

use super::*;

/// Scalar functions whose arguments are read as strings.
fn reads_strings(f: Func) -> bool {
    matches!(
        f,
        Func::Concat
            | Func::ConcatWs
            | Func::Length
            | Func::CharLength
            | Func::Substring
            | Func::Upper
            | Func::Lower
            | Func::Md5
            | Func::Sha1
            | Func::Left
            | Func::Right
            | Func::Trim
            | Func::LTrim
            | Func::RTrim
            | Func::Replace
            | Func::Reverse
            | Func::Lpad
            | Func::Rpad
            | Func::Instr
            | Func::Locate
            | Func::Repeat
            | Func::Crc32
    )
}

impl Binder<'_> {
    /// `e` as its padded text if it is a ZEROFILL column reference, as its text with
    /// FLOAT's precision if it is a FLOAT value; else `e`.
    pub(super) fn zerofill_text(&self, e: Expr) -> Expr {
        let Expr::Col(p) = e else {
            return self.float_text(e);
        };
        let Some(sc) = self.scope.iter().find(|s| s.pos == p) else {
            return self.float_text(e);
        };
        let (ty, _) = self.type_of(&e);
        if sc.flags & cf::ZEROFILL == 0 {
            return self.float_text(e);
        }
        if !matches!(
            ty,
            ColumnType::Int { .. }
                | ColumnType::Decimal { .. }
                | ColumnType::Float
                | ColumnType::Double
        ) {
            return e;
        }
        let mut w = onelog_protocol::wire_type(&ty);
        w.length = crate::num_attrs::zerofill_width(&ty, sc.display_width, sc.digits);
        if let Some((_, d)) = sc.digits {
            w.decimals = d;
        }
        w.flags |= cf::ZEROFILL;
        Expr::Func(Func::ZeroFill(w), vec![e])
    }

    /// `e` as the text MariaDB converts a FLOAT value to (FLT_DIG significant digits,
    /// the text protocol's form) if it is of type FLOAT, or of a FLOAT(M,D) / DOUBLE(M,D)
    /// column (D decimals); else `e`.
    fn float_text(&self, e: Expr) -> Expr {
        let ty = self.type_of(&e).0;
        let digits = match &e {
            Expr::Col(p) if matches!(ty, ColumnType::Float | ColumnType::Double) => self
                .scope
                .iter()
                .find(|s| s.pos == *p)
                .and_then(|s| s.digits),
            _ => None,
        };
        if ty != ColumnType::Float && digits.is_none() {
            return e;
        }
        let mut w = onelog_protocol::wire_type(&ty);
        if let Some((m, d)) = digits {
            w.length = m.into();
            w.decimals = d;
        }
        Expr::Func(Func::ZeroFill(w), vec![e])
    }

    /// The arguments of a call to `f`, string-read ones padded.
    pub(super) fn zerofill_args(&self, f: Func, args: Vec<Expr>) -> Vec<Expr> {
        if !reads_strings(f) {
            return args;
        }
        args.into_iter().map(|a| self.zerofill_text(a)).collect()
    }
}

impl Binder<'_> {
    /// The operand of `CAST(expr AS t)`: padded text for a cast to a string type.
    pub(super) fn cast_operand(
        &mut self,
        expr: &sq::Expr,
        t: CastType,
        clause: Clause,
    ) -> Result<Box<Expr>, SqlError> {
        let x = self.sub(expr, clause)?;
        Ok(match t {
            CastType::Char(_) | CastType::Binary => Box::new(self.zerofill_text(*x)),
            _ => x,
        })
    }
}
