//! Type inference of bound expressions (result types, nullability, collations) and the
//! column-type helpers the result columns use.

use super::*;

impl<'a> Binder<'a> {
    pub fn type_of(&self, e: &Expr) -> (ColumnType, bool) {
        let (ty, nullable) = self.base_type_of(e);
        // String results carry the collation the expression compares with.
        match self.coll_of(e) {
            (c, d) if ty.is_string() && d < Derivation::Numeric => (ty.with_collation(c), nullable),
            _ => (ty, nullable),
        }
    }

    /// The collation of an expression's string value and how strongly it binds
    /// (MariaDB's coercibility): `COLLATE` is explicit, a column implicit, a literal
    /// coercible; a function of strings takes the aggregate of its string arguments.
    pub fn coll_of(&self, e: &Expr) -> (Collation, Derivation) {
        self.type_memo
            .cached(|m| &m.colls, e, || self.coll_of_node(e))
    }

    pub(super) fn coll_of_node(&self, e: &Expr) -> (Collation, Derivation) {
        let numeric = (Collation::DEFAULT, Derivation::Numeric);
        let of_type = |t: &ColumnType| match t.collation() {
            Some(c) => (c, Derivation::Implicit),
            None => numeric,
        };
        match e {
            Expr::Lit(Value::Null) => (Collation::DEFAULT, Derivation::Ignorable),
            Expr::Lit(Value::Bytes(_)) => (Collation::DEFAULT, Derivation::Coercible),
            Expr::Lit(_) => numeric,
            Expr::Col(p) => self.types.get(*p).map_or(numeric, |(t, _)| of_type(t)),
            Expr::Collate(_, c, d) => (*c, *d),
            Expr::Agg(i) if *i >= window::WIN_SLOT => self.windows[*i - window::WIN_SLOT].coll,
            Expr::Agg(i) => self.agg_call_coll(&self.aggs[*i]),
            Expr::Func(f, args) => {
                let ts: Vec<ColumnType> = args.iter().map(|a| self.base_type_of(a).0).collect();
                if !functions::result_type(*f, &ts).is_string() {
                    return numeric;
                }
                let args = match f {
                    Func::If => args.get(1..).unwrap_or(&[]),
                    _ => &args[..],
                };
                self.agg_args(args)
                    .unwrap_or((Collation::DEFAULT, Derivation::Coercible))
            }
            Expr::Case(_, whens, els, _) => whens
                .iter()
                .map(|(_, r)| r)
                .chain(els.as_deref())
                .map(|r| self.coll_of(r))
                .filter(|(_, d)| *d < Derivation::Numeric)
                .reduce(Collation::aggregate)
                .unwrap_or(numeric),
            Expr::Cast(_, CastType::Char(_)) => (Collation::DEFAULT, Derivation::Implicit),
            Expr::Cast(
                _,
                CastType::Binary | CastType::FixedBinKey(_) | CastType::FixedBinMemory(_),
            ) => (Collation::Binary, Derivation::Implicit),
            Expr::Subquery(i) => of_type(&self.subqueries[*i].columns[0].ty),
            _ => numeric,
        }
    }

    /// The collation of an aggregate's value.
    pub(super) fn agg_call_coll(&self, a: &AggCall) -> (Collation, Derivation) {
        let numeric = (Collation::DEFAULT, Derivation::Numeric);
        match a.kind {
            AggKind::Min | AggKind::Max => self.coll_of(&a.arg),
            AggKind::GroupConcat => match self.coll_of(&a.arg) {
                (_, Derivation::Numeric | Derivation::Ignorable) => {
                    (Collation::DEFAULT, Derivation::Coercible)
                }
                c => c,
            },
            _ => numeric,
        }
    }

    /// The type and nullability of an aggregate's value.
    pub(super) fn agg_call_type(&self, a: &AggCall) -> (ColumnType, bool) {
        match a.kind {
            AggKind::Count | AggKind::CountStar => (bigint(), false),
            AggKind::Sum | AggKind::Avg => {
                let t = match a.arg_type {
                    ColumnType::Float | ColumnType::Double => ColumnType::Double,
                    t if !is_numeric_ty(&t) => ColumnType::Double,
                    ColumnType::Decimal { precision, scale } => ColumnType::Decimal {
                        precision: (precision + 22).min(65),
                        scale: if a.kind == AggKind::Avg {
                            (scale + 4).min(Decimal::MAX_SCALE)
                        } else {
                            scale
                        },
                    },
                    _ => ColumnType::Decimal {
                        precision: if a.kind == AggKind::Avg { 14 } else { 32 },
                        scale: if a.kind == AggKind::Avg { 4 } else { 0 },
                    },
                };
                (t, true)
            }
            AggKind::Min | AggKind::Max => (a.arg_type, true),
            AggKind::GroupConcat | AggKind::JsonArrayAgg => {
                (ColumnType::text(2, Collation::DEFAULT), true)
            }
            AggKind::StdPop | AggKind::StdSamp | AggKind::VarPop | AggKind::VarSamp => {
                (stat_type(&a.arg_type), true)
            }
            AggKind::BitAnd | AggKind::BitOr | AggKind::BitXor => (
                ColumnType::Int {
                    bytes: 8,
                    unsigned: true,
                },
                false,
            ),
        }
    }

    /// The aggregated collation of the string-valued expressions among `args` (None: none
    /// is a string).
    pub(super) fn agg_args(&self, args: &[Expr]) -> Option<(Collation, Derivation)> {
        args.iter()
            .map(|a| self.coll_of(a))
            .filter(|(_, d)| *d < Derivation::Numeric)
            .reduce(Collation::aggregate)
    }

    /// [`agg_coll`](Self::agg_coll) for an operation that refuses two different EXPLICIT
    /// collations (comparisons, LIKE, BETWEEN, IN): 1267, 1270 or 1271 as MariaDB.
    pub(super) fn agg_coll_checked(&self, args: &[&Expr], op: &str) -> Result<Collation, SqlError> {
        let colls: Vec<(Collation, Derivation)> = args.iter().map(|a| self.coll_of(a)).collect();
        check_explicit_mix(&colls, op)?;
        Ok(self.agg_coll(args))
    }

    /// The collation a comparison of `args` uses (MariaDB's aggregation rules).
    pub(super) fn agg_coll(&self, args: &[&Expr]) -> Collation {
        args.iter()
            .map(|a| self.coll_of(a))
            .reduce(Collation::aggregate)
            .map_or(Collation::DEFAULT, |c| c.0)
    }

    pub(super) fn base_type_of(&self, e: &Expr) -> (ColumnType, bool) {
        self.type_memo
            .cached(|m| &m.types, e, || self.base_type_of_node(e))
    }

    pub(super) fn base_type_of_node(&self, e: &Expr) -> (ColumnType, bool) {
        match e {
            Expr::Collate(a, c, _) => {
                let (t, n) = self.base_type_of(a);
                (t.with_collation(*c), n)
            }
            Expr::Lit(v) => (value_type(v), v.is_null()),
            Expr::Routine(f, _) => (f.ret, true),
            Expr::Col(p) => self.types.get(*p).copied().unwrap_or((bigint(), true)),
            Expr::Agg(i) if *i >= window::WIN_SLOT => {
                let w = &self.windows[*i - window::WIN_SLOT];
                (w.ty, w.nullable)
            }
            Expr::Agg(i) => self.agg_call_type(&self.aggs[*i]),
            Expr::Neg(a) => {
                let (t, n) = self.base_type_of(a);
                (
                    match t {
                        ColumnType::Int { .. } => bigint(),
                        // MariaDB negates a FLOAT as a DOUBLE.
                        t if is_numeric_ty(&t) && t != ColumnType::Float => t,
                        _ => ColumnType::Double,
                    },
                    n,
                )
            }
            Expr::Bin(op, a, b, _) => {
                let (ta, na) = self.base_type_of(a);
                let (tb, nb) = self.base_type_of(b);
                match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                        (arith_type(ta, tb, *op), na || nb || *op == BinOp::Div)
                    }
                    BinOp::IntDiv => (bigint(), true),
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => (
                        ColumnType::Int {
                            bytes: 8,
                            unsigned: true,
                        },
                        na || nb,
                    ),
                    BinOp::NullSafeEq => (
                        ColumnType::Int {
                            bytes: 1,
                            unsigned: false,
                        },
                        false,
                    ),
                    _ => (
                        ColumnType::Int {
                            bytes: 1,
                            unsigned: false,
                        },
                        na || nb,
                    ),
                }
            }
            Expr::BitNot(_) => (
                ColumnType::Int {
                    bytes: 8,
                    unsigned: true,
                },
                false,
            ),
            Expr::Not(_)
            | Expr::And(..)
            | Expr::Or(..)
            | Expr::Xor(..)
            | Expr::Between(..)
            | Expr::InList(..)
            | Expr::InSet(..)
            | Expr::InSorted(..)
            | Expr::InSubquery(..)
            | Expr::RowInSubquery(..)
            | Expr::RowInSet(..)
            | Expr::Quantified(..)
            | Expr::QuantSet(..)
            | Expr::Like(..)
            | Expr::Regexp(..) => (
                ColumnType::Int {
                    bytes: 1,
                    unsigned: false,
                },
                true,
            ),
            Expr::IsNull(..) | Expr::IsBool(..) | Expr::Exists(..) => (
                ColumnType::Int {
                    bytes: 1,
                    unsigned: false,
                },
                false,
            ),
            Expr::Case(_, whens, els, _) => {
                let ts: Vec<ColumnType> = whens
                    .iter()
                    .map(|(_, r)| r)
                    .chain(els.as_deref())
                    .map(|r| self.type_of(r).0)
                    .collect();
                (functions::result_type_of(&ts).unwrap_or(varchar(0)), true)
            }
            Expr::Func(f, args) => {
                let ts: Vec<ColumnType> = args.iter().map(|a| self.type_of(a).0).collect();
                let mut t = functions::result_type(*f, &ts);
                // ROUND(x[, d]) / TRUNCATE(x, d) of a DECIMAL have d digits (a constant d).
                if let (Func::Round | Func::Truncate, ColumnType::Decimal { precision, scale }) =
                    (f, t)
                {
                    let d = match args.get(1) {
                        None => Some(0),
                        Some(Expr::Lit(v)) if !v.is_null() => Some(expr::to_i64(v)),
                        _ => None,
                    };
                    if let Some(d) = d {
                        let s = d.clamp(0, Decimal::MAX_SCALE as i64) as u8;
                        t = ColumnType::Decimal {
                            precision: (precision.saturating_sub(scale) + s + 1).min(65),
                            scale: s,
                        };
                    }
                }
                if matches!(
                    f,
                    Func::Concat | Func::ConcatWs | Func::Repeat | Func::Upper | Func::Lower
                ) {
                    let len: u32 = ts
                        .iter()
                        .map(|t| match t {
                            ColumnType::Char { len, .. } | ColumnType::Varchar { len, .. } => *len,
                            t => display_len(t),
                        })
                        .fold(0u32, |a, b| a.saturating_add(b));
                    t = varchar(len.clamp(1, 16383));
                }
                (t, true)
            }
            Expr::Cast(_, c) => (
                match c {
                    CastType::Signed => bigint(),
                    CastType::Unsigned => ColumnType::Int {
                        bytes: 8,
                        unsigned: true,
                    },
                    CastType::Char(n) => varchar(n.unwrap_or(255)),
                    CastType::Binary => ColumnType::varchar(255, Collation::Binary),
                    CastType::Double => ColumnType::Double,
                    CastType::Decimal(p, s) => ColumnType::Decimal {
                        precision: *p,
                        scale: *s,
                    },
                    CastType::Date => ColumnType::Date,
                    CastType::DateTime(fsp) => ColumnType::DateTime { fsp: *fsp },
                    CastType::Time(fsp) => ColumnType::Time { fsp: *fsp },
                    CastType::FixedBin(onelog_types::FixedBin::Uuid)
                    | CastType::FixedBinFromKey(onelog_types::FixedBin::Uuid) => ColumnType::Uuid,
                    CastType::FixedBin(onelog_types::FixedBin::Inet6)
                    | CastType::FixedBinFromKey(onelog_types::FixedBin::Inet6) => ColumnType::Inet6,
                    CastType::FixedBinKey(_) | CastType::FixedBinMemory(_) => ColumnType::Char {
                        len: 16,
                        binary: true,
                        collation: Collation::Binary,
                    },
                    CastType::Number(t) => ColumnType::Int {
                        bytes: if matches!(t, ColumnType::Set { .. }) {
                            8
                        } else {
                            2
                        },
                        unsigned: true,
                    },
                },
                true,
            ),
            Expr::Subquery(i) => {
                let c = &self.subqueries[*i].columns[0];
                (c.ty, true)
            }
            Expr::Outer(d, p) => self
                .outer
                .get(d.wrapping_sub(1))
                .and_then(|o| o.types.get(*p))
                .copied()
                .unwrap_or((bigint(), true)),
        }
    }

    /// Whether `e` has MariaDB's NULL type (MYSQL_TYPE_NULL): a NULL literal, and functions
    /// and subqueries that return only NULL-typed values.
    pub(super) fn is_null_type(&self, e: &Expr) -> bool {
        match e {
            Expr::Lit(Value::Null) => true,
            Expr::Subquery(i) => self.subqueries[*i].columns[0].null_type,
            Expr::Func(Func::Coalesce | Func::IfNull | Func::Greatest | Func::Least, args) => {
                args.iter().all(|a| self.is_null_type(a))
            }
            Expr::Func(Func::NullIf, args) => args.first().is_some_and(|a| self.is_null_type(a)),
            Expr::Case(_, whens, els, _) => {
                whens.iter().all(|(_, r)| self.is_null_type(r))
                    && els.as_ref().is_none_or(|e| self.is_null_type(e))
            }
            _ => false,
        }
    }
}

pub(super) fn col_flags(t: &TableDef, c: usize) -> u16 {
    let def = &t.columns[c];
    let mut f = 0;
    if !def.nullable {
        f |= cf::NOT_NULL;
    }
    if def.ty.is_unsigned() || def.num.unsigned {
        f |= cf::UNSIGNED;
    }
    if def.num.zerofill {
        f |= cf::ZEROFILL;
    }
    if def.ty.is_binary() || matches!(def.ty, ColumnType::Blob { binary: true, .. }) {
        f |= cf::BINARY;
    }
    if matches!(def.ty, ColumnType::Blob { .. }) {
        f |= cf::BLOB;
    }
    if def.auto_increment {
        f |= cf::AUTO_INCREMENT;
    }
    if matches!(
        def.ty,
        ColumnType::Int { .. }
            | ColumnType::Decimal { .. }
            | ColumnType::Float
            | ColumnType::Double
    ) {
        f |= cf::NUM;
    }
    if matches!(def.ty, ColumnType::Timestamp { .. }) {
        f |= cf::TIMESTAMP;
    }
    for idx in &t.indexes {
        if idx.columns.first() == Some(&c) {
            if idx.primary {
                f |= cf::PRI_KEY;
            } else if idx.unique && idx.columns.len() == 1 {
                f |= cf::UNIQUE_KEY;
            } else {
                f |= cf::MULTIPLE_KEY;
            }
        } else if idx.primary && idx.columns.contains(&c) {
            f |= cf::PRI_KEY;
        }
    }
    if def.default.is_none() && !def.nullable && !def.auto_increment && !def.default_now {
        f |= cf::NO_DEFAULT_VALUE;
    }
    f
}

/// The declared length MariaDB reports for an expression type (in bytes for strings).
pub fn display_len(ty: &ColumnType) -> u32 {
    match *ty {
        ColumnType::Int { bytes, unsigned } => match (bytes, unsigned) {
            (1, _) => 4,
            (2, _) => 6,
            (3, _) => 9,
            (4, _) => 11,
            (_, true) => 20,
            _ => 20,
        },
        ColumnType::Float => 12,
        ColumnType::Double => 22,
        ColumnType::Decimal { precision, scale } => precision as u32 + (scale > 0) as u32 + 1,
        ColumnType::Char { .. } | ColumnType::Varchar { .. } | ColumnType::Blob { .. } => {
            ty.max_bytes().unwrap_or(0).min(u32::MAX as u64) as u32
        }
        ColumnType::Date => 10,
        ColumnType::Time { fsp } => 10 + if fsp > 0 { fsp as u32 + 1 } else { 0 },
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => {
            19 + if fsp > 0 { fsp as u32 + 1 } else { 0 }
        }
        ColumnType::Enum { .. } | ColumnType::Set { .. } => {
            ty.max_bytes().unwrap_or(0).min(u32::MAX as u64) as u32
        }
        ColumnType::Bit { bits } => bits as u32,
        ColumnType::Year => 4,
        // Characters of the text form, 4 bytes each (utf8mb4), as MariaDB reports them.
        ColumnType::Uuid | ColumnType::Inet6 => {
            ty.fixed_bin().map_or(0, |f| f.char_len()) * onelog_types::UTF8MB4_MAXLEN
        }
    }
}

pub fn decimals_of(ty: &ColumnType) -> u8 {
    match *ty {
        ColumnType::Decimal { scale, .. } => scale,
        ColumnType::Float | ColumnType::Double => 31,
        ColumnType::Time { fsp } | ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => {
            fsp
        }
        ColumnType::Char { .. } | ColumnType::Varchar { .. } | ColumnType::Blob { .. } => 39,
        _ => 0,
    }
}

pub(super) fn bigint() -> ColumnType {
    ColumnType::Int {
        bytes: 8,
        unsigned: false,
    }
}

pub(super) fn varchar(len: u32) -> ColumnType {
    ColumnType::varchar(len, Collation::DEFAULT)
}

/// The type of a literal value.
pub fn value_type(v: &Value) -> ColumnType {
    match v {
        Value::Null => ColumnType::varchar(0, Collation::Binary),
        Value::Int(i) => ColumnType::Int {
            bytes: if i.unsigned_abs() < (1 << 31) { 4 } else { 8 },
            unsigned: false,
        },
        Value::UInt(_) => ColumnType::Int {
            bytes: 8,
            unsigned: true,
        },
        Value::Double(_) => ColumnType::Double,
        Value::Decimal(d) => ColumnType::Decimal {
            precision: (d.int_digits() as u8 + d.scale).clamp(1, 38),
            scale: d.scale,
        },
        Value::Bytes(b) => varchar(String::from_utf8_lossy(b).chars().count() as u32),
        Value::Date(_) => ColumnType::Date,
        Value::DateTime(d) => ColumnType::DateTime {
            fsp: if d.micro != 0 { 6 } else { 0 },
        },
        Value::Time(t) => ColumnType::Time {
            fsp: if t.micro != 0 { 6 } else { 0 },
        },
    }
}

pub(super) fn is_numeric_ty(t: &ColumnType) -> bool {
    matches!(
        t,
        ColumnType::Int { .. }
            | ColumnType::Decimal { .. }
            | ColumnType::Float
            | ColumnType::Double
    )
}

/// Combines two types for arithmetic results.
pub(super) fn arith_type(a: ColumnType, b: ColumnType, op: BinOp) -> ColumnType {
    use ColumnType::*;
    // YEAR and BIT compute as unsigned integers.
    let int_view = |t: ColumnType| match t {
        Year | Bit { .. } => Int {
            bytes: 8,
            unsigned: true,
        },
        t => t,
    };
    let (a, b) = (int_view(a), int_view(b));
    match (a, b) {
        (Float | Double, _) | (_, Float | Double) => Double,
        _ if !is_numeric_ty(&a) || !is_numeric_ty(&b) => Double,
        (Int { unsigned: ua, .. }, Int { unsigned: ub, .. }) if op != BinOp::Div => Int {
            bytes: 8,
            unsigned: ua || ub,
        },
        _ => {
            let (pa, sa) = dec_ps(a);
            let (pb, sb) = dec_ps(b);
            let (p, s) = match op {
                BinOp::Div => (pa + sb + 4, sa + 4),
                BinOp::Mul => (pa + pb, sa + sb),
                _ => ((pa - sa).max(pb - sb) + sa.max(sb) + 1, sa.max(sb)),
            };
            Decimal {
                precision: p.min(onelog_types::Decimal::MAX_PRECISION as u32) as u8,
                scale: s.min(onelog_types::Decimal::MAX_SCALE as u32) as u8,
            }
        }
    }
}

pub(super) fn dec_ps(t: ColumnType) -> (u32, u32) {
    match t {
        ColumnType::Decimal { precision, scale } => (precision as u32, scale as u32),
        ColumnType::Int { bytes, .. } => (crate::num_attrs::unsigned_width(bytes) as u32, 0),
        _ => (20, 0),
    }
}

/// MariaDB's name of a derivation in collation errors.
fn derivation_name(d: Derivation) -> &'static str {
    match d {
        Derivation::Explicit => "EXPLICIT",
        Derivation::Implicit => "IMPLICIT",
        Derivation::SysConst => "SYSCONST",
        Derivation::Coercible => "COERCIBLE",
        Derivation::Numeric => "NUMERIC",
        Derivation::Ignorable => "IGNORABLE",
    }
}

/// Two different EXPLICIT collations cannot be aggregated: 1267 naming both (two
/// arguments), 1270 naming three, 1271 beyond.
pub(crate) fn check_explicit_mix(
    colls: &[(Collation, Derivation)],
    op: &str,
) -> Result<(), SqlError> {
    let mut explicit = colls.iter().filter(|c| c.1 == Derivation::Explicit);
    let Some(first) = explicit.next() else {
        return Ok(());
    };
    if explicit.all(|c| c.0 == first.0) {
        return Ok(());
    }
    let item = |c: &(Collation, Derivation)| format!("({},{})", c.0.name(), derivation_name(c.1));
    Err(match colls {
        [a, b] => err(
            1267,
            format!(
                "Illegal mix of collations {} and {} for operation '{op}'",
                item(a),
                item(b)
            ),
        ),
        [a, b, c] => err(
            1270,
            format!(
                "Illegal mix of collations {}, {}, {} for operation '{op}'",
                item(a),
                item(b),
                item(c)
            ),
        ),
        _ => err(
            1271,
            format!("Illegal mix of collations for operation '{op}'"),
        ),
    })
}
