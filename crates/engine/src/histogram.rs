//! Histograms of the commit path: how long each log sync takes and how many commits each
//! group carries, counted in power-of-two buckets without locks (the group commit leader
//! records one sample per sync and per group).
//!
//! Bucket `i` holds the samples `v` with `2^(i-1) <= v < 2^i` (bucket 0: `v == 0`), so
//! its upper bound is `2^i - 1`; the last bucket takes everything larger.

use std::sync::atomic::{AtomicU64, Ordering};

const BUCKETS: usize = 40;

/// A histogram being recorded.
pub(crate) struct Histogram {
    buckets: [AtomicU64; BUCKETS],
    sum: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum: AtomicU64::new(0),
        }
    }
}

fn bucket_of(v: u64) -> usize {
    ((u64::BITS - v.leading_zeros()) as usize).min(BUCKETS - 1)
}

impl Histogram {
    pub(crate) fn record(&self, v: u64) {
        self.buckets[bucket_of(v)].fetch_add(1, Ordering::Relaxed);
        self.sum.fetch_add(v, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> HistogramSnapshot {
        HistogramSnapshot {
            counts: self
                .buckets
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .collect(),
            sum: self.sum.load(Ordering::Relaxed),
        }
    }
}

/// A histogram as read at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistogramSnapshot {
    /// Samples per bucket (see the module docs).
    counts: Vec<u64>,
    /// The sum of every sample.
    pub sum: u64,
}

/// One bucket: the samples from `low` to `high` (inclusive) and how many there were.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    pub low: u64,
    pub high: u64,
    pub count: u64,
}

impl HistogramSnapshot {
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The mean sample (0 without samples).
    pub fn mean(&self) -> u64 {
        self.sum.checked_div(self.count()).unwrap_or(0)
    }

    /// The buckets that have samples, smallest first.
    pub fn buckets(&self) -> Vec<Bucket> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &count)| {
                let low = if i == 0 { 0 } else { 1u64 << (i - 1) };
                let high = if i == BUCKETS - 1 {
                    u64::MAX
                } else {
                    (1u64 << i) - 1
                };
                Bucket { low, high, count }
            })
            .collect()
    }

    /// The upper bound of the bucket holding the `per_mille`/1000 quantile (0 without
    /// samples): the value at most that share of the samples exceed, to within a factor
    /// of two.
    pub fn quantile_bound(&self, per_mille: u64) -> u64 {
        let n = self.count();
        if n == 0 {
            return 0;
        }
        let rank = (n * per_mille).div_ceil(1000).max(1);
        let mut seen = 0;
        for b in self.buckets() {
            seen += b.count;
            if seen >= rank {
                return b.high;
            }
        }
        u64::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_powers_of_two() {
        let h = Histogram::default();
        for v in [0, 1, 2, 3, 4, 7, 8, 1000, u64::MAX] {
            h.record(v);
        }
        let s = h.snapshot();
        assert_eq!(s.count(), 9);
        let got: Vec<(u64, u64, u64)> = s
            .buckets()
            .iter()
            .map(|b| (b.low, b.high, b.count))
            .collect();
        assert_eq!(
            got,
            [
                (0, 0, 1),
                (1, 1, 1),
                (2, 3, 2),
                (4, 7, 2),
                (8, 15, 1),
                (512, 1023, 1),
                (1 << 38, u64::MAX, 1)
            ]
        );
        // The 5th of the 9 samples is at most 7, the 8th at most 1023.
        assert_eq!(s.quantile_bound(500), 7);
        assert_eq!(s.quantile_bound(800), 1023);
        assert_eq!(s.quantile_bound(1000), u64::MAX);
        assert_eq!(HistogramSnapshot::default().quantile_bound(990), 0);
        assert_eq!(HistogramSnapshot::default().mean(), 0);
    }

    #[test]
    fn mean_of_samples() {
        let h = Histogram::default();
        for v in [10, 20, 30] {
            h.record(v);
        }
        assert_eq!(h.snapshot().mean(), 20);
    }
}
