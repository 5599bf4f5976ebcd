//! Sorting that a KILL QUERY or `max_statement_time` can stop: long inputs are sorted in
//! runs of [`RUN`] rows and merged, with the interrupt polled between runs and every
//! [`RUN`] rows of each merge, so no stretch of the sort runs longer than one run takes
//! (a few milliseconds). The order is stable, as `sort_by`'s.

use std::cmp::Ordering;

use onelog_types::SqlError;

/// Rows sorted between two polls.
const RUN: usize = 1 << 15;

/// Sorts `v` by `cmp` (stable), calling `poll` between stretches of work; stops with its
/// error.
pub fn sort_polled<T>(
    v: &mut Vec<T>,
    cmp: impl Fn(&T, &T) -> Ordering,
    poll: impl Fn() -> Result<(), SqlError>,
) -> Result<(), SqlError> {
    if v.len() <= RUN {
        v.sort_by(&cmp);
        return Ok(());
    }
    // Runs, in order.
    let mut runs: Vec<Vec<T>> = Vec::with_capacity(v.len() / RUN + 1);
    let mut rest = std::mem::take(v);
    while !rest.is_empty() {
        let tail = rest.split_off(rest.len().min(RUN));
        let mut run = std::mem::replace(&mut rest, tail);
        poll()?;
        run.sort_by(&cmp);
        runs.push(run);
    }
    // Merge neighbours until one run is left; ties take the left run's row first.
    while runs.len() > 1 {
        let mut merged = Vec::with_capacity(runs.len().div_ceil(2));
        let mut it = runs.into_iter();
        while let Some(a) = it.next() {
            match it.next() {
                Some(b) => merged.push(merge(a, b, &cmp, &poll)?),
                None => merged.push(a),
            }
        }
        runs = merged;
    }
    *v = runs.pop().unwrap_or_default();
    Ok(())
}

fn merge<T>(
    a: Vec<T>,
    b: Vec<T>,
    cmp: &impl Fn(&T, &T) -> Ordering,
    poll: &impl Fn() -> Result<(), SqlError>,
) -> Result<Vec<T>, SqlError> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut a = a.into_iter().peekable();
    let mut b = b.into_iter().peekable();
    loop {
        if out.len() % RUN == 0 {
            poll()?;
        }
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => cmp(y, x) != Ordering::Less,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        out.push(if take_a { a.next() } else { b.next() }.expect("peeked"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn sorts_stably_like_sort_by() {
        let mut seed = 7u64;
        let mut v: Vec<(u32, usize)> = (0..RUN * 5 + 123)
            .map(|i| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((seed >> 40) as u32 % 1000, i)
            })
            .collect();
        let mut want = v.clone();
        want.sort_by_key(|x| x.0);
        sort_polled(&mut v, |x, y| x.0.cmp(&y.0), || Ok(())).unwrap();
        assert_eq!(v, want);
    }

    #[test]
    fn stops_at_the_poll() {
        let mut v: Vec<u32> = (0..RUN as u32 * 4).rev().collect();
        let polls = Cell::new(0);
        let r = sort_polled(
            &mut v,
            |x, y| x.cmp(y),
            || {
                polls.set(polls.get() + 1);
                if polls.get() > 2 {
                    Err(SqlError::from_code(1317, "Query execution was interrupted"))
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r.unwrap_err().code, 1317);
    }
}
