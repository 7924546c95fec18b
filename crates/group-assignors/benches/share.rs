//! Criterion benchmarks of the share-group assignor `simple` (KIP-932) on the
//! groups of `input.rs`, every partition assignable (initialized). Inputs are
//! built outside the timed section; the timed section is one `assign` call
//! including building its output, dropped untimed.
//!
//! - `share-homogeneous`: 1,000 members over 10 topics of 1,000 partitions,
//!   a first assignment.
//! - `share-homogeneous-join`: the same group's targets as current targets,
//!   then `member-01000` joins.
//! - `share-heterogeneous`: the same topics and members, member `i`
//!   subscribed to topic `j` iff `(i + j) % 3 != 0`.
//! - `share-more-members`: 100 members on one topic of 10 partitions (each
//!   partition shared by 10 members).
//!
//! `cargo bench -p group-assignors --bench share`; a scenario name as filter
//! (`-- share-more`) builds only that scenario's input.

mod input;
mod timing;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use group_assignors::server::{AllAssignable, MemberTarget, ShareAssignor, ShareGroupSpec, SimpleAssignor};
use input::Input;

/// Whether the command line's filter can select scenario `id`.
fn wanted(id: &str) -> bool {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| a.starts_with("share")).collect();
    filters.is_empty() || filters.iter().any(|f| id.contains(f.as_str()))
}

/// The same group's targets as current targets, then `member-01000` joins.
fn joined() -> Input {
    let mut input = Input::homogeneous(10, 1000, 1000, true);
    let targets = {
        let spec = input.spec();
        let group = ShareGroupSpec { group: &spec, assignable: &AllAssignable };
        SimpleAssignor.assign(&group, &input.describer()).expect("assigns")
    };
    input.current = targets.members;
    input.join();
    input
}

fn scenario(c: &mut Criterion, id: &str, input: &Input, samples: usize) {
    let spec = input.spec();
    let describer = input.describer();
    let group = ShareGroupSpec { group: &spec, assignable: &AllAssignable };
    let out = SimpleAssignor.assign(&group, &describer).expect("assigns");
    let loads: Vec<usize> = out.members.iter().map(MemberTarget::len).collect();
    eprintln!(
        "{id}: {} members, counts {}..{}",
        loads.len(),
        loads.iter().min().unwrap_or(&0),
        loads.iter().max().unwrap_or(&0)
    );
    drop(out);
    let mut g = c.benchmark_group(id);
    g.sample_size(samples);
    g.bench_function("simple", |b| {
        timing::each_call(b, || SimpleAssignor.assign(black_box(&group), black_box(&describer)))
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    if wanted("share-homogeneous") {
        scenario(c, "share-homogeneous", &Input::homogeneous(10, 1000, 1000, true), 20);
    }
    if wanted("share-homogeneous-join") {
        scenario(c, "share-homogeneous-join", &joined(), 20);
    }
    if wanted("share-heterogeneous") {
        scenario(c, "share-heterogeneous", &Input::heterogeneous(10, 1000, 1000), 20);
    }
    if wanted("share-more-members") {
        scenario(c, "share-more-members", &Input::homogeneous(1, 10, 100, true), 100);
    }
}

criterion_group!(share, benches);
criterion_main!(share);
