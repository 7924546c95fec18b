//! The timed section both benchmarks use: one call, its output dropped untimed
//! right after it (see `assignors.rs` for why not `iter_with_large_drop`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Bencher;

/// Times each call of `call` alone, dropping its output outside the timing.
pub(crate) fn each_call<T>(b: &mut Bencher<'_>, mut call: impl FnMut() -> T) {
    b.iter_custom(|iters| {
        let mut timed = Duration::ZERO;
        for _ in 0..iters {
            let start = Instant::now();
            let out = call();
            timed += start.elapsed();
            drop(black_box(out));
        }
        timed
    })
}
