//! Window functions (`binder/window.rs`), computed over a SELECT's rows after WHERE,
//! GROUP BY and HAVING and before ORDER BY, DISTINCT and LIMIT.
//!
//! For each call the rows' partition and order keys are evaluated once and row numbers
//! sorted by them (the polled sort of `sort.rs`); each partition is then walked once. The
//! rows keep their order while calls are computed: results are appended to each row's aggregate slots
//! (`Expr::Agg(aggs.len() + i)` is call `i`), and without an ORDER BY come out in the
//! order of the last window sort, as MariaDB's do. Frames are row ranges `[start, end)` of the
//! partition, both ends moving forward as the current row does, found in O(1) (ROWS) or by
//! bisection on the single ORDER BY key (RANGE). Aggregates over them cost O(rows) per
//! partition when the frame starts at the partition's start (a running aggregate) or
//! ends at its end (the same, backwards), and for COUNT, SUM, AVG and BIT_XOR also for
//! frames with two moving ends (values leave as well as enter); the other aggregates
//! over two moving ends are recomputed per row, which costs the frame's width.

use super::*;
use crate::binder::{ntile_error, FrameBound, WinCall, WinFunc};

/// A row on its way through `finish`: its joined values and its aggregate slots.
type Row = (Vec<Value>, Vec<Value>);

/// Units of work (rows read, values aggregated) between two interrupt polls.
const POLL_EVERY: usize = 1 << 14;

/// Counts work and polls the statement's interrupt flag every [`POLL_EVERY`] units, so
/// that KILL QUERY and `max_statement_time` stop a window computation however its time is
/// spent (many rows, or wide frames recomputed per row).
struct Meter<'m, 'h, 'c> {
    h: &'m SubHost<'h, 'c>,
    work: std::cell::Cell<usize>,
}

impl Meter<'_, '_, '_> {
    fn tick(&self, units: usize) -> Result<(), SqlError> {
        let w = self.work.get() + units;
        if w < POLL_EVERY {
            self.work.set(w);
            return Ok(());
        }
        self.work.set(0);
        poll(self.h)
    }
}

/// Computes every window call of `sel` and appends its value to each row's aggregates.
/// Without an ORDER BY the rows then come in the order of the last call with PARTITION BY
/// or ORDER BY keys, as MariaDB returns them from its last window sort.
pub(super) fn compute(h: &SubHost, sel: &Select, rows: &mut Vec<Row>) -> Result<(), SqlError> {
    let m = Meter {
        h,
        work: std::cell::Cell::new(0),
    };
    let mut results = Vec::with_capacity(sel.windows.len());
    let mut last_order = None;
    for w in &sel.windows {
        let (vals, order) = one(&m, w, rows)?;
        results.push(vals);
        if !w.partition.is_empty() || !w.order.is_empty() {
            last_order = Some(order);
        }
    }
    for (i, row) in rows.iter_mut().enumerate() {
        for r in results.iter_mut() {
            row.1.push(std::mem::replace(&mut r[i], Value::Null));
        }
    }
    if let (Some(order), true) = (last_order, sel.order_by.is_empty()) {
        let mut taken: Vec<Option<Row>> = std::mem::take(rows).into_iter().map(Some).collect();
        *rows = order.into_iter().filter_map(|i| taken[i].take()).collect();
    }
    Ok(())
}

fn poll(h: &SubHost) -> Result<(), SqlError> {
    h.with_cx(|cx| cx.check_interrupt())
}

/// The values of one window call, in the rows' order, and the rows' positions in the
/// window's order.
fn one(m: &Meter, w: &WinCall, rows: &[Row]) -> Result<(Vec<Value>, Vec<usize>), SqlError> {
    let h = m.h;
    let np = w.partition.len();
    // (partition ++ order keys, argument values, row number)
    let mut keyed: Vec<(Vec<Value>, Vec<Value>, usize)> = Vec::with_capacity(rows.len());
    for (i, (r, a)) in rows.iter().enumerate() {
        m.tick(1)?;
        let c = Ctx {
            row: r,
            aggs: a,
            subs: Some(h),
        };
        let mut k = Vec::with_capacity(np + w.order.len());
        for e in w.partition.iter().chain(w.order.iter().map(|(e, _)| e)) {
            k.push(eval(e, &c)?);
        }
        let mut args = Vec::with_capacity(w.args.len() + 1);
        for e in w.args.iter().chain(w.agg.iter().map(|a| &a.arg)) {
            args.push(eval(e, &c)?);
        }
        keyed.push((k, args, i));
    }
    let desc: Vec<bool> = std::iter::repeat_n(false, np)
        .chain(w.order.iter().map(|(_, d)| *d))
        .collect();
    let colls: Vec<Collation> = w.part_colls.iter().chain(&w.order_colls).copied().collect();
    sort::sort_polled(
        &mut keyed,
        |x, y| cmp_keys(&x.0, &y.0, &desc, &colls),
        || poll(h),
    )?;
    let mut out = vec![Value::Null; rows.len()];
    let mut start = 0;
    while start < keyed.len() {
        let mut end = start + 1;
        while end < keyed.len()
            && cmp_keys(&keyed[start].0[..np], &keyed[end].0[..np], &[], &colls) == Ordering::Equal
        {
            end += 1;
        }
        let part = &keyed[start..end];
        let vals = partition(m, w, part)?;
        for ((_, _, i), v) in part.iter().zip(vals) {
            out[*i] = v;
        }
        start = end;
    }
    Ok((out, keyed.into_iter().map(|(_, _, i)| i).collect()))
}

type Keyed = (Vec<Value>, Vec<Value>, usize);

/// The values of a window call over one partition (rows in window order).
fn partition(m: &Meter, w: &WinCall, p: &[Keyed]) -> Result<Vec<Value>, SqlError> {
    m.tick(p.len())?;
    let np = w.partition.len();
    let n = p.len();
    let colls = &w.order_colls;
    let peer =
        |a: usize, b: usize| cmp_keys(&p[a].0[np..], &p[b].0[np..], &[], colls) == Ordering::Equal;
    // First and one-past-last row of each row's peer group (rows equal in ORDER BY).
    let mut peer_start = vec![0; n];
    let mut peer_end = vec![n; n];
    for j in 1..n {
        peer_start[j] = if peer(j - 1, j) { peer_start[j - 1] } else { j };
    }
    for j in (0..n.saturating_sub(1)).rev() {
        peer_end[j] = if peer(j, j + 1) {
            peer_end[j + 1]
        } else {
            j + 1
        };
    }
    let arg = |j: usize, k: usize| p[j].1.get(k).cloned().unwrap_or(Value::Null);
    let mut out = Vec::with_capacity(n);
    match w.func {
        WinFunc::RowNumber => out.extend((1..=n as i64).map(Value::Int)),
        WinFunc::Rank => out.extend((0..n).map(|j| Value::Int(peer_start[j] as i64 + 1))),
        WinFunc::DenseRank => {
            let mut d = 0;
            for (j, &first) in peer_start.iter().enumerate() {
                if first == j {
                    d += 1;
                }
                out.push(Value::Int(d));
            }
        }
        WinFunc::PercentRank => out.extend((0..n).map(|j| {
            Value::Double(if n > 1 {
                peer_start[j] as f64 / (n - 1) as f64
            } else {
                0.0
            })
        })),
        WinFunc::CumeDist => {
            out.extend((0..n).map(|j| Value::Double(peer_end[j] as f64 / n as f64)))
        }
        WinFunc::Ntile => {
            for j in 0..n {
                let b = arg(j, 0);
                let b = if b.is_null() { 0 } else { expr::to_i64(&b) };
                if b <= 0 {
                    return Err(ntile_error());
                }
                out.push(Value::Int(ntile(j as u64, n as u64, b as u64) as i64));
            }
        }
        WinFunc::Shift(k) => {
            for j in 0..n {
                let src = j as i128 - k as i128;
                out.push(if (0..n as i128).contains(&src) {
                    arg(src as usize, 0)
                } else {
                    Value::Null
                });
            }
        }
        WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue | WinFunc::Agg(_) => {
            let frames = frames(m, w, p, &peer_start, &peer_end)?;
            if let WinFunc::Agg(kind) = w.func {
                let a = w.agg.as_ref().expect("a windowed aggregate has its call");
                return aggregate(m, a, kind, p, &frames);
            }
            for (j, &(s, e)) in frames.iter().enumerate() {
                let at = match w.func {
                    WinFunc::FirstValue => s,
                    WinFunc::LastValue => e.wrapping_sub(1),
                    _ => {
                        // NTH_VALUE's n is read per row; NULL counts as 1 (as in MariaDB).
                        let k = arg(j, 1);
                        let k = if k.is_null() { 1 } else { expr::to_i64(&k) };
                        if k <= 0 {
                            usize::MAX
                        } else {
                            s.saturating_add(k as usize - 1)
                        }
                    }
                };
                out.push(if s < e && at >= s && at < e {
                    arg(at, 0)
                } else {
                    Value::Null
                });
            }
        }
    }
    Ok(out)
}

/// NTILE(b): the bucket (from 1) of row `j` of `n`, the first `n % b` buckets one row
/// larger than the others.
fn ntile(j: u64, n: u64, b: u64) -> u64 {
    let small = n / b;
    let extra = n % b;
    let big_rows = extra * (small + 1);
    if j < big_rows {
        j / (small + 1) + 1
    } else {
        (j - big_rows) / small.max(1) + extra + 1
    }
}

/// Each row's frame as `[start, end)` within the partition (empty when `start >= end`).
fn frames(
    m: &Meter,
    w: &WinCall,
    p: &[Keyed],
    peer_start: &[usize],
    peer_end: &[usize],
) -> Result<Vec<(usize, usize)>, SqlError> {
    let n = p.len();
    let np = w.partition.len();
    let fr = &w.frame;
    let mut out = Vec::with_capacity(n);
    if fr.rows {
        let at = |j: usize, b: &FrameBound, is_end: bool| -> i128 {
            let off = |v: &Value| expr::to_i128(v);
            let x = match b {
                FrameBound::UnboundedPreceding => 0,
                FrameBound::UnboundedFollowing => n as i128 - 1,
                FrameBound::CurrentRow => j as i128,
                FrameBound::Preceding(v) => j as i128 - off(v),
                FrameBound::Following(v) => j as i128 + off(v),
            };
            if is_end {
                x + 1
            } else {
                x
            }
        };
        for j in 0..n {
            let s = at(j, &fr.start, false).clamp(0, n as i128) as usize;
            let e = at(j, &fr.end, true).clamp(0, n as i128) as usize;
            out.push((s, e.max(s)));
        }
        return Ok(out);
    }
    // RANGE: distances on the one ORDER BY key, in its direction.
    let desc = w.order.first().is_some_and(|(_, d)| *d);
    let coll = w.order_colls.first().copied().unwrap_or(Collation::DEFAULT);
    let key = |j: usize| &p[j].0[np];
    let dir_cmp = |a: &Value, b: &Value| {
        let o = sort_cmp(a, b, coll);
        if desc {
            o.reverse()
        } else {
            o
        }
    };
    // The key `d` further along the order (`ahead`) or back from `x`.
    let shifted = |x: &Value, d: &Value, ahead: bool| -> Value {
        let op = if ahead != desc {
            expr::BinOp::Add
        } else {
            expr::BinOp::Sub
        };
        expr::binary(op, x.clone(), d.clone()).unwrap_or_else(|_| {
            let (a, b) = (expr::to_f64(x), expr::to_f64(d));
            Value::Double(if op == expr::BinOp::Add { a + b } else { a - b })
        })
    };
    // First row whose key is at or after `t`; one past the last row at or before `t`.
    let first_from = |t: &Value| bisect(n, |k| dir_cmp(key(k), t) == Ordering::Less);
    let end_after = |t: &Value| bisect(n, |k| dir_cmp(key(k), t) != Ordering::Greater);
    let needs_key =
        |b: &FrameBound| matches!(b, FrameBound::Preceding(_) | FrameBound::Following(_));
    let keyed = needs_key(&fr.start) || needs_key(&fr.end);
    for j in 0..n {
        m.tick(1)?;
        let null_key = keyed && key(j).is_null();
        let s = match &fr.start {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::UnboundedFollowing => n,
            FrameBound::CurrentRow => peer_start[j],
            _ if null_key => peer_start[j],
            FrameBound::Preceding(d) => first_from(&shifted(key(j), d, false)),
            FrameBound::Following(d) => first_from(&shifted(key(j), d, true)),
        };
        let e = match &fr.end {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::UnboundedFollowing => n,
            FrameBound::CurrentRow => peer_end[j],
            _ if null_key => peer_end[j],
            FrameBound::Preceding(d) => end_after(&shifted(key(j), d, false)),
            FrameBound::Following(d) => end_after(&shifted(key(j), d, true)),
        };
        out.push((s, e.max(s)));
    }
    Ok(out)
}

/// The first of `0..n` where `before` is false (`before` holds on a prefix).
fn bisect(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// An aggregate over each row's frame.
fn aggregate(
    m: &Meter,
    a: &crate::binder::AggCall,
    kind: AggKind,
    p: &[Keyed],
    frames: &[(usize, usize)],
) -> Result<Vec<Value>, SqlError> {
    let n = p.len();
    let coll = a.arg_type.collation().unwrap_or(Collation::DEFAULT);
    let value = |j: usize| p[j].1.first().cloned().unwrap_or(Value::Null);
    let add = |st: &mut AggState, j: usize| {
        m.tick(1)?;
        agg_add(st, kind, value(j), coll, Vec::new())
    };
    let mut out = vec![Value::Null; n];
    let from_start = frames.iter().all(|&(s, _)| s == 0);
    let to_end = frames.iter().all(|&(s, e)| e == n || s >= e);
    if from_start || !to_end && !removable(kind) {
        // Running from the partition's start (or, for two moving ends of an aggregate that
        // cannot take values out, recomputed per row over the frame).
        let mut st = agg_init(kind);
        let mut upto = 0;
        for (j, &(s, e)) in frames.iter().enumerate() {
            if !from_start {
                st = agg_init(kind);
                upto = s;
            }
            while upto < e {
                add(&mut st, upto)?;
                upto += 1;
            }
            out[j] = agg_final(&st, a);
        }
        return Ok(out);
    }
    if to_end && !removable(kind) {
        // Running backwards from the partition's end. Of equal MIN/MAX values the first in
        // the window's order is kept, as a forward pass keeps it.
        let add_back = |st: &mut AggState, j: usize| -> Result<(), SqlError> {
            let AggState::MinMax(best) = st else {
                return add(st, j);
            };
            m.tick(1)?;
            let v = value(j);
            if v.is_null() {
                return Ok(());
            }
            let worse = if kind == AggKind::Min {
                Ordering::Greater
            } else {
                Ordering::Less
            };
            if best
                .as_ref()
                .is_none_or(|cur| sort_cmp(&v, cur, coll) != worse)
            {
                *best = Some(v);
            }
            Ok(())
        };
        let mut st = agg_init(kind);
        let mut from = n;
        for (j, &(s, e)) in frames.iter().enumerate().rev() {
            if s >= e {
                out[j] = agg_final(&agg_init(kind), a);
                continue;
            }
            while from > s {
                from -= 1;
                add_back(&mut st, from)?;
            }
            out[j] = agg_final(&st, a);
        }
        return Ok(out);
    }
    // Sliding: values enter at the end and leave at the start.
    let mut sl = Slide::default();
    let (mut lo, mut hi) = (0, 0);
    for (j, &(s, e)) in frames.iter().enumerate() {
        m.tick(1)?;
        let (s, e) = (s.max(lo), e.max(s));
        if s >= hi {
            sl = Slide::default();
            lo = s;
            hi = s;
        }
        while hi < e {
            sl.enter(kind, &value(hi))?;
            hi += 1;
        }
        while lo < s {
            sl.leave(kind, &value(lo))?;
            lo += 1;
        }
        out[j] = sl.value(kind, a);
    }
    Ok(out)
}

/// Aggregates whose values can leave a frame.
fn removable(kind: AggKind) -> bool {
    matches!(
        kind,
        AggKind::Count | AggKind::CountStar | AggKind::Sum | AggKind::Avg | AggKind::BitXor
    )
}

/// COUNT, SUM, AVG or BIT_XOR over a frame with two moving ends.
#[derive(Default)]
struct Slide {
    rows: i64,
    /// Non-NULL values and their sum.
    n: i64,
    sum: Option<Value>,
    bits: u64,
}

impl Slide {
    fn enter(&mut self, kind: AggKind, v: &Value) -> Result<(), SqlError> {
        self.change(kind, v, true)
    }

    fn leave(&mut self, kind: AggKind, v: &Value) -> Result<(), SqlError> {
        self.change(kind, v, false)
    }

    fn change(&mut self, kind: AggKind, v: &Value, enter: bool) -> Result<(), SqlError> {
        let sign = if enter { 1 } else { -1 };
        self.rows += sign;
        if v.is_null() {
            return Ok(());
        }
        self.n += sign;
        match kind {
            AggKind::Sum | AggKind::Avg => {
                let x = sum_value(v);
                let op = if enter {
                    expr::BinOp::Add
                } else {
                    expr::BinOp::Sub
                };
                self.sum = Some(match self.sum.take() {
                    None if enter => x,
                    None => expr::binary(op, Value::Int(0), x)?,
                    Some(acc) => expr::binary(op, acc, x)?,
                });
            }
            AggKind::BitXor => {
                self.bits ^= match v {
                    Value::UInt(u) => *u,
                    o => expr::to_i128(o) as u64,
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn value(&self, kind: AggKind, a: &crate::binder::AggCall) -> Value {
        let st = match kind {
            AggKind::CountStar => AggState::Count(self.rows),
            AggKind::Count => AggState::Count(self.n),
            AggKind::BitXor => AggState::Bits(self.bits),
            AggKind::Avg if self.n > 0 => AggState::Avg(self.sum.clone(), self.n),
            AggKind::Sum if self.n > 0 => AggState::Sum(self.sum.clone()),
            _ => AggState::Sum(None),
        };
        agg_final(&st, a)
    }
}

#[cfg(test)]
mod tests {
    use super::ntile;

    #[test]
    fn ntile_buckets_take_the_extra_rows_first() {
        let b: Vec<u64> = (0..8).map(|j| ntile(j, 8, 3)).collect();
        assert_eq!(b, [1, 1, 1, 2, 2, 2, 3, 3]);
        let b: Vec<u64> = (0..3).map(|j| ntile(j, 3, 5)).collect();
        assert_eq!(b, [1, 2, 3]);
        let b: Vec<u64> = (0..4).map(|j| ntile(j, 4, 1)).collect();
        assert_eq!(b, [1, 1, 1, 1]);
    }
}
