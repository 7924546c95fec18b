//! Criterion benchmarks of every assignor on scenarios S1-S6 of
//! `benchmarks.md`. Inputs are built outside the timed section; the timed
//! section is one `assign` call including building its output (dropping the
//! output is not timed). Each output is dropped right after its call, as a
//! coordinator drops an assignment once it is sent, so the next call reuses
//! warm memory; criterion's `iter_with_large_drop` would instead keep a whole
//! batch of outputs alive (about 24 MB each in S3) and time the kernel zeroing fresh
//! pages for every call. Results land in `target/criterion/<scenario>/<assignor>`;
//! `cargo run --release -p group-assignors --example bench_report` turns them
//! into one table and an SVG plot.

mod scenarios;
mod timing;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use group_assignors::{GroupAssignment, get_assignor};
use group_types::{MemberSubscription, TopicPartition};

use crate::scenarios::{ASSIGNORS, moved, s4, s5, uniform};

/// Whether the command line's filter (criterion's positional argument) can
/// select scenario `id`; inputs of other scenarios are not even built, so a
/// filtered run's peak memory is that scenario's alone.
fn wanted(id: &str) -> bool {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| a.starts_with('S')).collect();
    filters.is_empty() || filters.iter().any(|f| f.contains(id) || f.contains(['[', '.', '|']))
}

fn scenario(
    c: &mut Criterion,
    id: &str,
    input: (Vec<MemberSubscription>, Vec<TopicPartition>),
    samples: usize,
    previous: Option<&GroupAssignment>,
) {
    let (ms, parts) = input;
    let mut group = c.benchmark_group(id);
    group.sample_size(samples);
    if samples <= 10 {
        group.warm_up_time(Duration::from_secs(1));
    }
    for name in ASSIGNORS {
        let a = get_assignor(name).expect("built in");
        let out = a.assign(&ms, &parts).expect("valid input");
        if let Some(previous) = previous.filter(|_| name.contains("sticky")) {
            // Cooperative round 1 withholds nothing here: only the departed member's partitions move.
            eprintln!("{id} {name}: {} partitions moved", moved(previous, &out));
        }
        drop(out);
        group.bench_function(name, |b| timing::each_call(b, || a.assign(black_box(&ms), black_box(&parts))));
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    if wanted("S1") {
        scenario(c, "S1", uniform(1, 1000, 10), 100, None);
    }
    if wanted("S2") {
        scenario(c, "S2", uniform(100, 100, 100), 50, None);
    }
    if wanted("S3") {
        scenario(c, "S3", uniform(1000, 1000, 2000), 10, None);
    }
    if wanted("S4") {
        let (ms, parts, first) = s4();
        scenario(c, "S4", (ms, parts), 50, Some(&first));
    }
    if wanted("S5") {
        scenario(c, "S5", s5(), 30, None);
    }
    if wanted("S6") {
        scenario(c, "S6", uniform(10_000, 10, 1000), 20, None);
    }
}

criterion_group!(assignors, benches);
criterion_main!(assignors);
