//! UNION / INTERSECT / EXCEPT: binding of the parts, the result column types (MariaDB's
//! type aggregation for results: NULL adopts the other type, integers widen, numbers and
//! strings mix into VARCHAR, DATE and TIME into DATETIME, ...), and the conversion of the
//! parts' values to those types.
//!
//! A query with set operations binds as a SELECT over one source, the materialised set
//! operation, so ORDER BY / LIMIT of the whole query, derived tables, subqueries and
//! INSERT ... SELECT work as for any SELECT.

use onelog_engine::LockMode;
use onelog_types::{Collation, ColumnType, Derivation, SqlError, Value};
use sqlparser::ast as sq;

use super::{display_len, err, unsupported, Binder, Clause, IndexHints, Select, SourceKind};
use crate::expr::{self, Expr};
use crate::ResultColumn;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOpKind {
    Union,
    Intersect,
    Except,
}

/// A set-operation tree (left-associative as written; INTERSECT binds tighter).
#[derive(Clone, Debug)]
pub enum SetNode {
    Leaf(Box<Select>),
    Op {
        kind: SetOpKind,
        /// ALL (keep duplicates) rather than DISTINCT.
        all: bool,
        left: Box<SetNode>,
        right: Box<SetNode>,
    },
}

impl SetNode {
    /// The parts, left to right.
    pub fn leaves(&self) -> Vec<&Select> {
        match self {
            SetNode::Leaf(s) => vec![s],
            SetNode::Op { left, right, .. } => {
                let mut v = left.leaves();
                v.extend(right.leaves());
                v
            }
        }
    }

    pub fn leaves_mut(&mut self) -> Vec<&mut Select> {
        match self {
            SetNode::Leaf(s) => vec![s],
            SetNode::Op { left, right, .. } => {
                let mut v = left.leaves_mut();
                v.extend(right.leaves_mut());
                v
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct SetOp {
    pub root: SetNode,
    /// Result column types; every part's values are converted to them.
    pub types: Vec<ColumnType>,
}

/// The type NULL literals carry in expressions (reported as MYSQL_TYPE_NULL).
pub const NULL_TYPE: ColumnType = ColumnType::Varchar {
    len: 0,
    binary: true,
    collation: Collation::Binary,
};

/// What a NULL-typed column becomes when stored (a union of NULLs, a derived table).
pub const NULL_STORED: ColumnType = ColumnType::Char {
    len: 0,
    binary: true,
    collation: Collation::Binary,
};

/// Integer digits of an exact numeric type.
fn int_digits(t: ColumnType) -> u32 {
    match t {
        ColumnType::Int { bytes, unsigned } => match bytes {
            1 => 3,
            2 => 5,
            3 => 8 - unsigned as u32,
            4 => 10,
            _ => 20 - (!unsigned) as u32,
        },
        ColumnType::Decimal { precision, scale } => (precision - scale) as u32,
        _ => 0,
    }
}

/// Characters needed to show a value of `t` as a string.
fn char_len(t: ColumnType) -> u32 {
    match t {
        ColumnType::Char { len, .. } | ColumnType::Varchar { len, .. } => len,
        ColumnType::Blob { .. } => 65535,
        ColumnType::Float => 12,
        ColumnType::Double => 22,
        t => display_len(&t),
    }
}

fn is_exact(t: ColumnType) -> bool {
    matches!(t, ColumnType::Int { .. } | ColumnType::Decimal { .. })
}

fn is_temporal(t: ColumnType) -> bool {
    matches!(
        t,
        ColumnType::Date
            | ColumnType::Time { .. }
            | ColumnType::DateTime { .. }
            | ColumnType::Timestamp { .. }
    )
}

fn fsp(t: ColumnType) -> u8 {
    match t {
        ColumnType::Time { fsp } | ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => {
            fsp
        }
        _ => 0,
    }
}

/// The type of a result column holding values of types `a` and `b`.
pub fn union_type(a: ColumnType, b: ColumnType) -> ColumnType {
    use ColumnType::*;
    if a == b {
        return a;
    }
    match (a, b) {
        (
            Int {
                bytes: x,
                unsigned: ux,
            },
            Int {
                bytes: y,
                unsigned: uy,
            },
        ) => {
            if ux == uy {
                return Int {
                    bytes: x.max(y),
                    unsigned: ux,
                };
            }
            // Signed and unsigned: a signed type wide enough for both.
            let (sb, ub) = if ux { (y, x) } else { (x, y) };
            let widened = match ub {
                1 => 2,
                2 => 3,
                3 => 4,
                4 => 8,
                _ => 9,
            };
            let need = sb.max(widened);
            if need > 8 {
                Decimal {
                    precision: 20,
                    scale: 0,
                }
            } else {
                Int {
                    bytes: need,
                    unsigned: false,
                }
            }
        }
        _ if is_exact(a) && is_exact(b) => {
            let scale = |t: ColumnType| match t {
                Decimal { scale, .. } => scale as u32,
                _ => 0,
            };
            let s = scale(a).max(scale(b));
            let i = int_digits(a).max(int_digits(b));
            Decimal {
                precision: (i + s).clamp(1, 65) as u8,
                scale: s.min(30) as u8,
            }
        }
        (Float, Float) => Float,
        (Float | Double, Int { .. } | Decimal { .. } | Float | Double)
        | (Int { .. } | Decimal { .. }, Float | Double) => Double,
        _ if is_temporal(a) && is_temporal(b) => match (a, b) {
            (Date, Date) => Date,
            (Time { .. }, Time { .. }) => Time {
                fsp: fsp(a).max(fsp(b)),
            },
            (Timestamp { .. }, Timestamp { .. }) => Timestamp {
                fsp: fsp(a).max(fsp(b)),
            },
            _ => DateTime {
                fsp: fsp(a).max(fsp(b)),
            },
        },
        _ => {
            let binary = a.is_binary() && b.is_binary();
            // A text part's collation (the first one's when they differ; the binder then
            // sets the parts' aggregated collation).
            let collation = if binary {
                Collation::Binary
            } else {
                [a, b]
                    .iter()
                    .filter(|t| !t.is_binary())
                    .find_map(|t| t.collation())
                    .unwrap_or(Collation::DEFAULT)
            };
            match (a, b) {
                (Blob { len_bytes: x, .. }, Blob { len_bytes: y, .. }) => Blob {
                    len_bytes: x.max(y),
                    binary,
                    collation,
                },
                (Blob { len_bytes, .. }, _) | (_, Blob { len_bytes, .. }) => Blob {
                    len_bytes,
                    binary,
                    collation,
                },
                (Char { len: x, .. }, Char { len: y, .. }) => Char {
                    len: x.max(y),
                    binary,
                    collation,
                },
                _ => Varchar {
                    len: char_len(a).max(char_len(b)),
                    binary,
                    collation,
                },
            }
        }
    }
}

/// Converts a part's value to the result column type `ty`.
pub fn coerce(v: Value, ty: &ColumnType) -> Value {
    if v.is_null() {
        return v;
    }
    match ty {
        ColumnType::Char { .. } | ColumnType::Varchar { .. } | ColumnType::Blob { .. } => match v {
            Value::Bytes(_) => v,
            other => Value::Bytes(expr::to_string(&other).into_bytes()),
        },
        ColumnType::Int { .. } if matches!(v, Value::Int(_) | Value::UInt(_)) => {
            match expr::convert_for_column(&v, ty) {
                Ok(x) | Err((_, x)) => x,
            }
        }
        ColumnType::Int { .. }
        | ColumnType::Decimal { .. }
        | ColumnType::Float
        | ColumnType::Double
        | ColumnType::Uuid
        | ColumnType::Inet6 => match expr::convert_for_column(&v, ty) {
            Ok(x) | Err((_, x)) => x,
        },
        ColumnType::Date => expr::cast(v, expr::CastType::Date).unwrap_or(Value::Null),
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => match v {
            Value::DateTime(_) => v,
            other => expr::cast(other, expr::CastType::DateTime(6)).unwrap_or(Value::Null),
        },
        ColumnType::Time { .. } => expr::cast(v, expr::CastType::Time(6)).unwrap_or(Value::Null),
        ColumnType::Enum { .. } | ColumnType::Set { .. } => match v {
            Value::Bytes(_) => v,
            other => Value::Bytes(expr::to_string(&other).into_bytes()),
        },
        ColumnType::Bit { .. } | ColumnType::Year => match v {
            Value::UInt(_) => v,
            other => Value::UInt(expr::to_i64(&other) as u64),
        },
    }
}

/// Whether `e` is a plain `tbl.col` reference (not allowed in a set operation's ORDER BY).
fn qualified_table(e: &sq::Expr) -> Option<String> {
    match e {
        sq::Expr::CompoundIdentifier(ids) if ids.len() >= 2 && !ids[0].value.starts_with('@') => {
            Some(ids[ids.len() - 2].value.clone())
        }
        _ => None,
    }
}

impl Binder<'_> {
    fn bind_set_node(&self, body: &sq::SetExpr) -> Result<SetNode, SqlError> {
        onelog_types::stack::check()?;
        Ok(match body {
            sq::SetExpr::Select(s) => SetNode::Leaf(Box::new(self.sibling().bind_select(s, &[])?)),
            sq::SetExpr::Query(q) => SetNode::Leaf(Box::new(self.sibling().bind_query(q)?)),
            sq::SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                let kind = match op {
                    sq::SetOperator::Union => SetOpKind::Union,
                    sq::SetOperator::Intersect => SetOpKind::Intersect,
                    sq::SetOperator::Except | sq::SetOperator::Minus => SetOpKind::Except,
                };
                let all = match set_quantifier {
                    sq::SetQuantifier::All => true,
                    sq::SetQuantifier::Distinct | sq::SetQuantifier::None => false,
                    other => return Err(unsupported(&format!("{op} {other}"))),
                };
                SetNode::Op {
                    kind,
                    all,
                    left: Box::new(self.bind_set_node(left)?),
                    right: Box::new(self.bind_set_node(right)?),
                }
            }
            sq::SetExpr::Values(_) => return Err(unsupported("VALUES as a query")),
            _ => return Err(unsupported("this query form")),
        })
    }

    /// A query whose body has set operations (or a parenthesised query with its own ORDER
    /// BY / LIMIT): a SELECT over the materialised result.
    pub(super) fn bind_set_query(
        &mut self,
        body: &sq::SetExpr,
        order_by: &[sq::OrderByExpr],
        limit: Option<u64>,
        offset: u64,
    ) -> Result<Select, SqlError> {
        let root = self.bind_set_node(body)?;
        let leaves = root.leaves();
        let n = leaves[0].columns.len();
        if leaves.iter().any(|l| l.columns.len() != n) {
            return Err(err(
                crate::codes::ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT,
                "The used SELECT statements have a different number of columns",
            ));
        }
        let mut columns = Vec::with_capacity(n);
        let mut types = Vec::with_capacity(n);
        let mut derivs = Vec::with_capacity(n);
        for i in 0..n {
            let mut ty: Option<ColumnType> = None;
            let mut nullable = false;
            for l in &leaves {
                let c = &l.columns[i];
                nullable |= c.nullable;
                if !c.null_type {
                    ty = Some(match ty {
                        None => c.ty,
                        Some(t) => match super::fixedbin::union_fixed_bin(t, c.ty)? {
                            Some(f) => f,
                            None => union_type(t, c.ty),
                        },
                    });
                }
            }
            let mut ty = ty.unwrap_or(NULL_STORED);
            // A text result compares under the parts' aggregated collation (MariaDB: a
            // column beats a literal; at equal derivation `_bin` beats `_ci`).
            let mut deriv = Derivation::Implicit;
            if ty.is_string() && !ty.is_binary() {
                let colls: Vec<(Collation, Derivation)> = leaves
                    .iter()
                    .filter(|l| !l.columns[i].null_type && !l.columns[i].ty.is_binary())
                    .filter_map(|l| {
                        let c = l.columns[i].ty.collation()?;
                        Some((c, l.derivs.get(i).copied().unwrap_or(Derivation::Implicit)))
                    })
                    .collect();
                super::types::check_explicit_mix(&colls, "UNION")?;
                let agg = colls.into_iter().reduce(Collation::aggregate);
                if let Some((c, d)) = agg {
                    ty = ty.with_collation(c);
                    deriv = d;
                }
            }
            derivs.push(deriv);
            let name = leaves[0].columns[i].name.clone();
            let mut rc = ResultColumn::expr(name.clone(), ty, nullable);
            rc.org_name = name;
            columns.push(rc);
            types.push(ty);
        }
        let cols = columns
            .iter()
            .map(|c| (c.name.clone(), c.ty, c.nullable, 0u16))
            .collect();
        let mut sources = Vec::new();
        self.add_source(
            &mut sources,
            String::new(),
            String::new(),
            SourceKind::SetOp(Box::new(SetOp { root, types })),
            cols,
            n,
            IndexHints::default(),
        )?;
        let items: Vec<Expr> = (0..n).map(Expr::Col).collect();
        for (i, c) in columns.iter().enumerate() {
            self.aliases.push((c.name.clone(), Expr::Col(i)));
        }
        let mut order = Vec::new();
        for o in order_by {
            if let Some(t) = qualified_table(&o.expr) {
                return Err(err(
                    crate::codes::ER_TABLENAME_NOT_ALLOWED_HERE,
                    format!("Table '{t}' from one of the SELECTs cannot be used in ORDER BY"),
                ));
            }
            let desc = matches!(o.options.sort, Some(sq::OrderBySort::Desc));
            order.push((self.bind_order_item(&o.expr, &items, Clause::Order)?, desc));
        }
        let aggregate = !self.aggs.is_empty();
        let order_colls = order.iter().map(|(e, _)| self.coll_of(e).0).collect();
        Ok(Select {
            sources,
            filter: Vec::new(),
            group_by: Vec::new(),
            aggs: std::mem::take(&mut self.aggs),
            having: None,
            items,
            columns,
            distinct: false,
            order_by: order,
            limit,
            offset,
            lock: LockMode::None,
            aggregate,
            subqueries: std::mem::take(&mut self.subqueries),
            width: n,
            ordered: false,
            params: Vec::new(),
            windows: Vec::new(),
            order_colls,
            group_colls: Vec::new(),
            derivs,
        })
    }
}
