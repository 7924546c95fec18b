//! A lock-free latency histogram with fixed buckets, for hot paths: recording
//! is two relaxed atomic additions, no lock and no allocation, and a reader takes
//! a [`LatencySnapshot`] whenever it likes (a metrics scrape).
//!
//! The coordinator measures its storage appends with it
//! ([`CoordinatorMetrics::append_latency`](crate::CoordinatorMetrics::append_latency));
//! a front end may reuse it for its own request latencies, so that every latency
//! it exports shares one set of bucket bounds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Number of buckets: one per bound of [`LatencyHistogram::BOUNDS`], plus one for
/// what exceeds the last bound.
pub const LATENCY_BUCKETS: usize = 20;

const fn micros(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// Upper bounds in nanoseconds, the same as [`LatencyHistogram::BOUNDS`]: the
/// search on the hot path compares integers.
const BOUNDS_NANOS: [u64; LATENCY_BUCKETS - 1] = {
    let mut out = [0u64; LATENCY_BUCKETS - 1];
    let mut i = 0;
    while i < out.len() {
        out[i] = LatencyHistogram::BOUNDS[i].as_nanos() as u64;
        i += 1;
    }
    out
};

/// Durations counted in fixed buckets, from 50 µs to 60 s, and their sum.
///
/// Each bucket counts the durations at most its bound (Prometheus' `le`) and above
/// the previous bound; the last counts those above 60 s. [`record`](Self::record)
/// costs two relaxed atomic additions, so concurrent recorders never wait for each
/// other or for a reader.
#[derive(Debug)]
pub struct LatencyHistogram {
    buckets: [AtomicU64; LATENCY_BUCKETS],
    sum_nanos: AtomicU64,
}

impl LatencyHistogram {
    /// The buckets' upper bounds: wide enough for a heartbeat answered from memory
    /// (tens of µs) and for a JoinGroup parked for a rebalance (up to a minute).
    pub const BOUNDS: [Duration; LATENCY_BUCKETS - 1] = [
        micros(50),
        micros(100),
        micros(250),
        micros(500),
        micros(1_000),
        micros(2_500),
        micros(5_000),
        micros(10_000),
        micros(25_000),
        micros(50_000),
        micros(100_000),
        micros(250_000),
        micros(500_000),
        micros(1_000_000),
        micros(2_500_000),
        micros(5_000_000),
        micros(10_000_000),
        micros(30_000_000),
        micros(60_000_000),
    ];

    /// An empty histogram.
    pub const fn new() -> LatencyHistogram {
        LatencyHistogram {
            buckets: [const { AtomicU64::new(0) }; LATENCY_BUCKETS],
            sum_nanos: AtomicU64::new(0),
        }
    }

    /// Counts one duration.
    #[inline]
    pub fn record(&self, elapsed: Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let index = BOUNDS_NANOS.partition_point(|&bound| bound < nanos);
        self.buckets[index].fetch_add(1, Ordering::Relaxed);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// What was counted so far. Taken bucket by bucket while recorders go on, so
    /// the sum may lag or lead the counts by the durations recorded meanwhile.
    pub fn snapshot(&self) -> LatencySnapshot {
        LatencySnapshot {
            counts: std::array::from_fn(|i| self.buckets[i].load(Ordering::Relaxed)),
            sum: Duration::from_nanos(self.sum_nanos.load(Ordering::Relaxed)),
        }
    }
}

impl Default for LatencyHistogram {
    fn default() -> LatencyHistogram {
        LatencyHistogram::new()
    }
}

/// A [`LatencyHistogram`]'s counts at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LatencySnapshot {
    /// Durations per bucket (not cumulative): `counts[i]` for bound
    /// [`LatencyHistogram::BOUNDS`]`[i]`, the last for those above every bound.
    pub counts: [u64; LATENCY_BUCKETS],
    /// The sum of every duration counted.
    pub sum: Duration,
}

impl LatencySnapshot {
    /// Durations counted, in every bucket.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Each bucket with its upper bound (`None` for the last, unbounded one) and
    /// its own count (not cumulative).
    pub fn buckets(&self) -> impl Iterator<Item = (Option<Duration>, u64)> + '_ {
        self.counts.iter().enumerate().map(|(i, &n)| (LatencyHistogram::BOUNDS.get(i).copied(), n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket_of(d: Duration) -> usize {
        let h = LatencyHistogram::new();
        h.record(d);
        let s = h.snapshot();
        assert_eq!(s.count(), 1);
        s.counts.iter().position(|&n| n == 1).unwrap_or(usize::MAX)
    }

    #[test]
    fn a_bound_belongs_to_its_own_bucket() {
        assert_eq!(bucket_of(Duration::ZERO), 0);
        assert_eq!(bucket_of(micros(50)), 0);
        assert_eq!(bucket_of(micros(50) + Duration::from_nanos(1)), 1);
        assert_eq!(bucket_of(micros(1_000)), 4);
        assert_eq!(bucket_of(micros(60_000_000)), LATENCY_BUCKETS - 2);
    }

    #[test]
    fn what_exceeds_every_bound_goes_to_the_last_bucket() {
        assert_eq!(bucket_of(Duration::from_secs(61)), LATENCY_BUCKETS - 1);
        assert_eq!(bucket_of(Duration::MAX), LATENCY_BUCKETS - 1);
    }

    #[test]
    fn bounds_increase_and_match_their_nanoseconds() {
        assert!(LatencyHistogram::BOUNDS.windows(2).all(|w| w[0] < w[1]));
        for (d, n) in LatencyHistogram::BOUNDS.iter().zip(BOUNDS_NANOS) {
            assert_eq!(d.as_nanos(), u128::from(n));
        }
    }

    #[test]
    fn snapshot_sums_and_counts() {
        let h = LatencyHistogram::new();
        h.record(micros(10));
        h.record(micros(300));
        h.record(Duration::from_secs(2));
        let s = h.snapshot();
        assert_eq!(s.count(), 3);
        assert_eq!(s.sum, micros(310) + Duration::from_secs(2));
        let buckets: Vec<_> = s.buckets().filter(|(_, n)| *n > 0).collect();
        assert_eq!(buckets, [(Some(micros(50)), 1), (Some(micros(500)), 1), (Some(micros(2_500_000)), 1)]);
        assert_eq!(s.buckets().last(), Some((None, 0)));
    }
}
