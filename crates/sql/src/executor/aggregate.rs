//! Aggregate functions: their running states per group, how each row adds to them, and
//! their final values.

use std::cmp::Ordering;
use std::collections::HashSet;

use onelog_types::{Collation, ColumnType, Decimal, SqlError, Value};

use crate::binder::AggKind;
use crate::expr::{self, sort_cmp};

#[derive(Clone)]
pub(super) enum AggState {
    Count(i64),
    Sum(Option<Value>),
    MinMax(Option<Value>),
    Avg(Option<Value>, i64),
    /// GROUP_CONCAT: per value, its ORDER BY keys.
    Concat(Vec<(Vec<Value>, Vec<u8>)>),
    Bits(u64),
    /// Count, mean and sum of squared deviations (Welford's running variance).
    Var(i64, f64, f64),
}

pub(super) fn agg_init(k: AggKind) -> AggState {
    match k {
        AggKind::Count | AggKind::CountStar => AggState::Count(0),
        AggKind::Sum => AggState::Sum(None),
        AggKind::Min | AggKind::Max => AggState::MinMax(None),
        AggKind::Avg => AggState::Avg(None, 0),
        AggKind::GroupConcat | AggKind::JsonArrayAgg => AggState::Concat(Vec::new()),
        AggKind::BitAnd => AggState::Bits(u64::MAX),
        AggKind::BitOr | AggKind::BitXor => AggState::Bits(0),
        AggKind::StdPop | AggKind::StdSamp | AggKind::VarPop | AggKind::VarSamp => {
            AggState::Var(0, 0.0, 0.0)
        }
    }
}

pub(super) fn sum_value(v: &Value) -> Value {
    match v {
        Value::Int(_) | Value::UInt(_) => Value::Decimal(expr::to_decimal(v).unwrap()),
        Value::Decimal(_) | Value::Double(_) => v.clone(),
        other => Value::Double(expr::to_f64(other)),
    }
}

/// Adds a row's value to an aggregate (MIN/MAX compare strings under `coll`; `keys`:
/// GROUP_CONCAT's ORDER BY values for the row).
pub(super) fn agg_add(
    st: &mut AggState,
    kind: AggKind,
    v: Value,
    coll: Collation,
    keys: Vec<Value>,
) -> Result<(), SqlError> {
    if kind == AggKind::CountStar {
        if let AggState::Count(n) = st {
            *n += 1;
        }
        return Ok(());
    }
    if v.is_null() {
        return Ok(());
    }
    match st {
        AggState::Count(n) => *n += 1,
        AggState::Sum(s) | AggState::Avg(s, _) => {
            let v = sum_value(&v);
            *s = Some(match s.take() {
                None => v,
                Some(acc) => expr::binary(expr::BinOp::Add, acc, v)?,
            });
            if let AggState::Avg(_, n) = st {
                *n += 1;
            }
        }
        AggState::MinMax(m) => {
            let better = match m {
                None => true,
                Some(cur) => {
                    let o = sort_cmp(&v, cur, coll);
                    if kind == AggKind::Min {
                        o == Ordering::Less
                    } else {
                        o == Ordering::Greater
                    }
                }
            };
            if better {
                *m = Some(v);
            }
        }
        AggState::Concat(parts) => parts.push((keys, expr::to_bytes(&v))),
        AggState::Bits(b) => {
            let x = match &v {
                Value::UInt(u) => *u,
                o => expr::to_i128(o) as u64,
            };
            match kind {
                AggKind::BitAnd => *b &= x,
                AggKind::BitXor => *b ^= x,
                _ => *b |= x,
            }
        }
        AggState::Var(n, mean, m2) => {
            let x = expr::to_f64(&v);
            *n += 1;
            let d = x - *mean;
            *mean += d / *n as f64;
            *m2 += d * (x - *mean);
        }
    }
    Ok(())
}

pub(super) fn agg_final(st: &AggState, a: &crate::binder::AggCall) -> Value {
    match st {
        AggState::Count(n) => Value::Int(*n),
        AggState::Sum(s) => s.clone().unwrap_or(Value::Null),
        AggState::MinMax(m) => m.clone().unwrap_or(Value::Null),
        AggState::Avg(s, n) => match s {
            None => Value::Null,
            Some(Value::Double(d)) => Value::Double(d / *n as f64),
            Some(v) => {
                let d = expr::to_decimal(v).unwrap_or(Decimal::new(0, 0));
                match expr::binary(expr::BinOp::Div, Value::Decimal(d), Value::Int(*n)) {
                    Ok(r) => r,
                    Err(_) => Value::Double(d.to_f64() / *n as f64),
                }
            }
        },
        AggState::Concat(parts) => {
            if parts.is_empty() {
                return Value::Null;
            }
            let mut order: Vec<&(Vec<Value>, Vec<u8>)> = parts.iter().collect();
            if !a.order.is_empty() {
                // Stable: equal keys keep the rows' order.
                order.sort_by(|x, y| {
                    for (i, (_, desc, coll)) in a.order.iter().enumerate() {
                        let o = sort_cmp(&x.0[i], &y.0[i], *coll);
                        if o != Ordering::Equal {
                            return if *desc { o.reverse() } else { o };
                        }
                    }
                    Ordering::Equal
                });
            }
            let vals: Vec<&[u8]> = order.iter().map(|(_, b)| &b[..]).collect();
            let joined = vals.join(&a.separator[..]);
            if a.kind == AggKind::JsonArrayAgg {
                Value::Bytes([&b"["[..], &joined, b"]"].concat())
            } else {
                Value::Bytes(joined)
            }
        }
        AggState::Bits(b) => Value::UInt(*b),
        AggState::Var(n, _, m2) => {
            let samp = matches!(a.kind, AggKind::StdSamp | AggKind::VarSamp);
            let d = if samp { *n - 1 } else { *n };
            if d <= 0 {
                return Value::Null;
            }
            let var = m2 / d as f64;
            let x = if matches!(a.kind, AggKind::StdPop | AggKind::StdSamp) {
                var.sqrt()
            } else {
                var
            };
            match crate::binder::stat_type(&a.arg_type) {
                ColumnType::Decimal { scale, .. } => format!("{x:.p$}", p = scale as usize)
                    .parse()
                    .map(Value::Decimal)
                    .unwrap_or(Value::Double(x)),
                _ => Value::Double(x),
            }
        }
    }
}

pub(super) struct Group {
    pub(super) row: Vec<Value>,
    pub(super) states: Vec<AggState>,
    pub(super) seen: Vec<HashSet<Vec<u8>>>,
}
