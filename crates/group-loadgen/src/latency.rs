//! Latency percentiles over every recorded sample (no histogram buckets: a
//! run records at most a few million samples, and exact ranks cost nothing).

use std::time::Duration;

/// The nearest-rank percentile of `sorted` (ascending): the smallest sample
/// that at least `q` percent of the samples are less than or equal to.
///
/// `q` is clamped to 0..=100; `None` for no samples.
///
/// ```
/// use group_loadgen::percentile;
///
/// let samples = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
/// assert_eq!(percentile(&samples, 50.0), Some(5));
/// assert_eq!(percentile(&samples, 99.0), Some(10));
/// assert_eq!(percentile(&[], 50.0), None);
/// ```
pub fn percentile(sorted: &[u64], q: f64) -> Option<u64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 100.0) };
    // Multiplying before dividing keeps whole ranks whole (7% of 100 is 7, not
    // 7.000000000000001); the epsilon absorbs what rounding is left.
    let rank = (q * n as f64 / 100.0 - 1e-9).ceil() as usize;
    Some(sorted[rank.clamp(1, n) - 1])
}

/// The three percentiles every scenario reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Percentiles {
    /// The median.
    pub p50: Duration,
    /// The 99th percentile.
    pub p99: Duration,
    /// The 99.9th percentile.
    pub p999: Duration,
    /// How many samples they are taken over.
    pub samples: usize,
}

impl Percentiles {
    /// Sorts `samples_ns` (nanoseconds) and takes the percentiles; `None` for
    /// no samples.
    pub fn from_nanos(samples_ns: &mut [u64]) -> Option<Percentiles> {
        samples_ns.sort_unstable();
        let at = |q| percentile(samples_ns, q).map(Duration::from_nanos);
        Some(Percentiles { p50: at(50.0)?, p99: at(99.0)?, p999: at(99.9)?, samples: samples_ns.len() })
    }
}

/// Nanoseconds in a `Duration`, saturating (no sample is 584 years long).
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn nearest_rank_on_small_inputs() {
        assert_eq!(percentile(&[7], 0.0), Some(7));
        assert_eq!(percentile(&[7], 100.0), Some(7));
        assert_eq!(percentile(&[1, 2], 50.0), Some(1));
        assert_eq!(percentile(&[1, 2], 50.1), Some(2));
        let hundred: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&hundred, 99.0), Some(99));
        assert_eq!(percentile(&hundred, 99.9), Some(100));
        assert_eq!(percentile(&hundred, 150.0), Some(100));
        assert_eq!(percentile(&hundred, -3.0), Some(1));
        assert_eq!(percentile(&hundred, f64::NAN), Some(1));
    }

    #[test]
    fn percentiles_sort_their_input() {
        let mut samples = vec![5_000, 1_000, 3_000, 2_000, 4_000];
        let p = Percentiles::from_nanos(&mut samples).expect("samples");
        assert_eq!(p.p50, Duration::from_micros(3));
        assert_eq!(p.p99, Duration::from_micros(5));
        assert_eq!(p.samples, 5);
        assert_eq!(Percentiles::from_nanos(&mut []), None);
    }

    proptest! {
        #[test]
        fn percentiles_are_monotone_and_taken_from_the_samples(
            mut samples in proptest::collection::vec(0u64..1_000_000, 1..300),
            a in 0.0f64..=100.0,
            b in 0.0f64..=100.0,
        ) {
            samples.sort_unstable();
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let (p_lo, p_hi) = (percentile(&samples, lo).unwrap(), percentile(&samples, hi).unwrap());
            prop_assert!(p_lo <= p_hi);
            prop_assert!(samples.contains(&p_lo));
            prop_assert!(percentile(&samples, 0.0).unwrap() == samples[0]);
            prop_assert!(percentile(&samples, 100.0).unwrap() == samples[samples.len() - 1]);
            // At least q% of the samples are at or below the q-th percentile.
            let at_or_below = samples.iter().filter(|&&s| s <= p_hi).count();
            prop_assert!(at_or_below as f64 >= hi / 100.0 * samples.len() as f64 - 1e-9);
        }
    }
}
