//! UUID and INET6 in expressions: a comparison with a UUID/INET6 operand compares both
//! sides as that type (strings are converted, a bad one is NULL with warning 1292) in its
//! sort order (`onelog_types::FixedBin`), as does ORDER BY; numbers, temporals and the
//! other fixed type are refused (4078), as in MariaDB.

use onelog_types::FixedBin;

use super::*;

impl Binder<'_> {
    /// The UUID/INET6 type of `e`, if it is one.
    pub(super) fn fixed_bin_of(&self, e: &Expr) -> Option<FixedBin> {
        self.type_of(e).0.fixed_bin()
    }

    /// The first of `xs` that is UUID/INET6: its position and type.
    fn first_fixed_bin<'e>(&self, xs: impl Iterator<Item = &'e Expr>) -> Option<(usize, FixedBin)> {
        xs.enumerate()
            .find_map(|(i, x)| self.fixed_bin_of(x).map(|f| (i, f)))
    }

    /// `e` as the sort key of a UUID/INET6 value (for ORDER BY); other expressions as given.
    pub(super) fn fixed_bin_order(&self, e: Expr) -> Expr {
        match self.fixed_bin_of(&e) {
            Some(f) => Expr::Cast(Box::new(e), CastType::FixedBinKey(f)),
            None => e,
        }
    }

    /// The operands of a comparison (`op` names it in errors) of which one or more is a
    /// UUID/INET6 value: every operand as the sort key of that type. Unchanged when none
    /// is; error 4078 when another operand cannot be converted.
    pub(super) fn fixed_bin_operands(
        &self,
        op: &str,
        xs: &mut [&mut Box<Expr>],
    ) -> Result<(), SqlError> {
        let Some((at, f)) = self.first_fixed_bin(xs.iter().map(|x| &***x)) else {
            return Ok(());
        };
        for (i, x) in xs.iter().enumerate() {
            if self.is_null_type(x) {
                continue;
            }
            let t = self.type_of(x).0;
            if t.fixed_bin() == Some(f) || t.is_string() && !t.is_enum_or_set() {
                continue;
            }
            return Err(mismatch(op, (i, &t), (at, f)));
        }
        for x in xs.iter_mut() {
            let inner = std::mem::replace(&mut ***x, Expr::Lit(Value::Null));
            // A constant string is converted once, here (a bad one stays, to warn per use).
            let inner = match inner {
                Expr::Lit(Value::Bytes(b)) => match f.canonical(&b) {
                    Some(text) => Expr::Lit(Value::Bytes(text.into_bytes())),
                    None => Expr::Lit(Value::Bytes(b)),
                },
                other => other,
            };
            ***x = Expr::Cast(Box::new(inner), CastType::FixedBinKey(f));
        }
        Ok(())
    }
}

impl Binder<'_> {
    /// `a IN (list)` with a UUID/INET6 operand: every item compared as that type.
    pub(super) fn fixed_bin_in_list(
        &self,
        a: &mut Box<Expr>,
        list: &mut Vec<Expr>,
    ) -> Result<(), SqlError> {
        if self.fixed_bin_of(a).is_none() && list.iter().all(|x| self.fixed_bin_of(x).is_none()) {
            return Ok(());
        }
        let mut boxed: Vec<Box<Expr>> = list.drain(..).map(Box::new).collect();
        let mut refs: Vec<&mut Box<Expr>> = std::iter::once(a).chain(boxed.iter_mut()).collect();
        let r = self.fixed_bin_operands("in", &mut refs);
        list.extend(boxed.into_iter().map(|b| *b));
        r
    }
}

impl Binder<'_> {
    /// `x` as the argument of `CAST(x AS t)`: a UUID/INET6 value cast to a binary string
    /// gives its 16-byte memory form, as in MariaDB.
    pub(super) fn fixed_bin_memory_for(&self, x: Box<Expr>, t: CastType) -> Box<Expr> {
        match self.fixed_bin_of(&x) {
            Some(f) if t == CastType::Binary => {
                Box::new(Expr::Cast(x, CastType::FixedBinMemory(f)))
            }
            _ => x,
        }
    }

    /// The result branches of CASE / COALESCE / IFNULL / IF (`op` names it in errors)
    /// when one is UUID/INET6: the others (strings) converted to that type, error 4078 for
    /// any other type.
    pub(super) fn fixed_bin_branches(
        &self,
        op: &str,
        xs: &mut [&mut Expr],
    ) -> Result<(), SqlError> {
        let Some((at, f)) = self.first_fixed_bin(xs.iter().map(|x| &**x)) else {
            return Ok(());
        };
        for (i, x) in xs.iter_mut().enumerate() {
            if self.is_null_type(x) {
                continue;
            }
            let t = self.type_of(x).0;
            if t.fixed_bin() == Some(f) {
                continue;
            }
            if !t.is_string() || t.is_enum_or_set() {
                return Err(mismatch(op, (i, &t), (at, f)));
            }
            let inner = std::mem::replace(&mut **x, Expr::Lit(Value::Null));
            **x = Expr::Cast(Box::new(inner), CastType::FixedBin(f));
        }
        Ok(())
    }

    /// The arguments of a call of `f`: HEX() of a UUID/INET6 value reads its memory form;
    /// INET6_NTOA() takes binary strings only (anything else is NULL, as in MariaDB);
    /// COALESCE / IFNULL / IF over a UUID/INET6 value give that type.
    pub(super) fn fixed_bin_args(
        &self,
        f: Func,
        mut args: Vec<Expr>,
    ) -> Result<Vec<Expr>, SqlError> {
        let branches = match f {
            Func::Coalesce => Some(("coalesce", 0)),
            Func::IfNull => Some(("ifnull", 0)),
            Func::If => Some(("if", 1)),
            _ => None,
        };
        if let Some((op, from)) = branches {
            let mut xs: Vec<&mut Expr> = args.iter_mut().skip(from).collect();
            self.fixed_bin_branches(op, &mut xs)?;
        }
        if f == Func::Text(functions::TextFn::Inet6Ntoa) {
            if let Some(x) = args.first_mut() {
                let binary = self.base_type_of(x).0.is_binary()
                    || self.coll_of(x).0 == onelog_types::Collation::Binary;
                if !binary {
                    *x = Expr::Lit(Value::Null);
                }
            }
        }
        if f == Func::Hex {
            if let Some(x) = args.first_mut() {
                if let Some(fb) = self.fixed_bin_of(x) {
                    let inner = std::mem::replace(x, Expr::Lit(Value::Null));
                    *x = Expr::Cast(Box::new(inner), CastType::FixedBinMemory(fb));
                }
            }
        }
        Ok(args)
    }
}

impl Binder<'_> {
    /// The call of `f` over `args`: GREATEST / LEAST of a UUID/INET6 value compare every
    /// argument (strings converted, a bad one NULL with warning 1292; other types 4078) in
    /// the type's sort order and give a value of the type, as in MariaDB.
    pub(super) fn fixed_bin_call(&self, f: Func, args: Vec<Expr>) -> Result<Expr, SqlError> {
        let (op, greatest) = match f {
            Func::Greatest => ("greatest", true),
            Func::Least => ("least", false),
            _ => return Ok(Expr::Func(f, self.fixed_bin_args(f, args)?)),
        };
        let Some((_, fb)) = self.first_fixed_bin(args.iter()) else {
            return Ok(Expr::Func(f, args));
        };
        let mut boxed: Vec<Box<Expr>> = args.into_iter().map(Box::new).collect();
        let mut refs: Vec<&mut Box<Expr>> = boxed.iter_mut().collect();
        self.fixed_bin_operands(op, &mut refs)?;
        let keys = boxed.into_iter().map(|b| *b).collect();
        Ok(Expr::Cast(
            Box::new(Expr::Func(Func::KeyExtreme(greatest), keys)),
            CastType::FixedBinFromKey(fb),
        ))
    }
}

impl Binder<'_> {
    /// CASE over UUID/INET6 values: a simple CASE's operand and WHEN values compare as the
    /// type; the results are of the type (see [`Binder::fixed_bin_branches`]).
    pub(super) fn fixed_bin_case(
        &self,
        op: &mut Option<Box<Expr>>,
        whens: &mut [(Expr, Expr)],
        els: &mut Option<Box<Expr>>,
    ) -> Result<(), SqlError> {
        if let Some(o) = op {
            let mut ws: Vec<Box<Expr>> = whens
                .iter_mut()
                .map(|(w, _)| Box::new(std::mem::replace(w, Expr::Lit(Value::Null))))
                .collect();
            let mut refs: Vec<&mut Box<Expr>> = std::iter::once(o).chain(ws.iter_mut()).collect();
            let r = self.fixed_bin_operands("case", &mut refs);
            for ((w, _), x) in whens.iter_mut().zip(ws) {
                *w = *x;
            }
            r?;
        }
        let mut rs: Vec<&mut Expr> = whens.iter_mut().map(|(_, r)| r).collect();
        if let Some(e) = els {
            rs.push(&mut **e);
        }
        self.fixed_bin_branches("case", &mut rs)
    }
}

/// Error 4078 for operands of types named `a` and `b`.
pub(super) fn illegal_types(a: &str, b: &str, op: &str) -> SqlError {
    err(
        code::ER_ILLEGAL_PARAMETER_DATA_TYPES2_FOR_OPERATION,
        format!("Illegal parameter data types {a} and {b} for operation '{op}'"),
    )
}

/// An arithmetic or bit operator over a UUID/INET6 operand: error 4078.
pub(super) fn check_no_arith(
    b: &Binder<'_>,
    op: BinOp,
    l: &Expr,
    r: &Expr,
) -> Result<(), SqlError> {
    let (lt, rt) = (b.type_of(l).0, b.type_of(r).0);
    if lt.fixed_bin().is_none() && rt.fixed_bin().is_none() {
        return Ok(());
    }
    let sym = match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Mod => "MOD",
        BinOp::IntDiv => "DIV",
        BinOp::BitAnd => "&",
        BinOp::BitOr => "|",
        BinOp::BitXor => "^",
        BinOp::Shl => "<<",
        _ => ">>",
    };
    Err(illegal_types(type_name(&lt), type_name(&rt), sym))
}

pub(super) use crate::expr::sql_type_name as type_name;

/// Whether a comparison operator is one `fixed_bin_operands` applies to.
pub(super) fn is_comparison(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::NullSafeEq
    )
}

/// The UNION type of a UUID/INET6 column with another (None: neither is one): the fixed
/// type with a string or itself, error 4078 with anything else.
pub(super) fn union_fixed_bin(
    a: ColumnType,
    b: ColumnType,
) -> Result<Option<ColumnType>, SqlError> {
    let (fa, fb) = (a.fixed_bin(), b.fixed_bin());
    if fa.is_none() && fb.is_none() {
        return Ok(None);
    }
    let textual = |t: &ColumnType| t.is_string() && !t.is_enum_or_set();
    match (fa, fb) {
        (Some(x), Some(y)) if x == y => Ok(Some(a)),
        (Some(_), None) if textual(&b) => Ok(Some(a)),
        (None, Some(_)) if textual(&a) => Ok(Some(b)),
        _ => Err(illegal_types(type_name(&a), type_name(&b), "UNION")),
    }
}

/// Error 4078 for operand `i` of type `t` of `op` against the UUID/INET6 operand at `at`
/// (the types named in the operands' order).
fn mismatch(op: &str, (i, t): (usize, &ColumnType), (at, f): (usize, FixedBin)) -> SqlError {
    let (a, b) = if i < at {
        (type_name(t), f.name())
    } else {
        (f.name(), type_name(t))
    };
    illegal_types(a, b, op)
}
