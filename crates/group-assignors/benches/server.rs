//! Criterion benchmarks of the server-side (KIP-848) assignors on the
//! scenarios of `benchmarks.md`, built as server specs (`input.rs`). Inputs are built outside the timed section; the timed
//! section is one `assign` call, including building its output; each output
//! is dropped untimed right after its call.
//!
//! - `S1`..`S3`, `S6`: homogeneous first assignments, uniform and range.
//! - `S5`: heterogeneous (member i subscribes to topic j iff (i + j) % 3 != 0).
//! - `S2-join`, `S2-leave`: the uniform S2 result as every member's current
//!   target, then `member-00100` joins or `member-00099` leaves.
//! - `S5-leave`: the uniform S5 result as current targets, then `member-00199` leaves.
//! - `S3-hetero`: S3's topics and members, even members on every topic, odd
//!   members on the even-numbered topics (heterogeneous uniform at scale).
//! - `S6-unshared`: S6 with a separate topic list per member, which the
//!   uniform assignor compares with the first to confirm the group is
//!   homogeneous.
//!
//! `cargo bench -p group-assignors --bench server -- --quick`; a scenario
//! id as filter (`-- S3`) builds only that scenario's input.

mod input;
mod timing;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use group_assignors::server::{
    MemberTarget, ServerAssignor, SubscriptionType, TargetAssignment, UniformAssignor, server_assignor,
};
use input::Input;

/// Whether the command line's filter can select scenario `id`.
fn wanted(id: &str) -> bool {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| a.starts_with('S')).collect();
    filters.is_empty()
        || filters.iter().any(|f| f.contains(id) || id.contains(f.as_str()) || f.contains(['[', '.', '|']))
}

fn s5() -> Input {
    Input::heterogeneous(500, 20, 200)
}

/// The uniform assignor's targets for `input`, as its members' current ones.
fn settled(mut input: Input) -> Input {
    let targets = UniformAssignor.assign(&input.spec(), &input.describer()).expect("assigns");
    input.current = targets.members;
    input
}

/// The last member leaves.
fn leave(mut input: Input) -> Input {
    input.ids.pop();
    input.list_of.pop();
    input.current.pop();
    input
}

/// S5 with the uniform result as current targets, then `member-00199` leaves.
fn s5_leave() -> Input {
    leave(settled(s5()))
}

/// S3 sized but heterogeneous: even members subscribe to every topic, odd
/// members to the even-numbered topics.
fn s3_hetero() -> Input {
    let lists = vec![(0..1000).collect(), (0..1000).step_by(2).collect()];
    Input::new(1000, 1000, 2000, lists, |i| i % 2, SubscriptionType::Heterogeneous)
}

/// S2 with the uniform result as current targets, then a member joins or
/// `member-00099` leaves.
fn s2_changed(join: bool) -> Input {
    let mut input = settled(Input::homogeneous(100, 100, 100, true));
    if join {
        input.join();
        input
    } else {
        leave(input)
    }
}

/// Partitions of `before` (the inputs' current targets) no longer with their owner.
fn moved(input: &Input, out: &TargetAssignment) -> usize {
    input
        .current
        .iter()
        .zip(&out.members)
        .map(|(old, new)| {
            old.topics
                .iter()
                .map(|(t, ps)| ps.iter().filter(|p| !new.partitions(*t).contains(p)).count())
                .sum::<usize>()
        })
        .sum()
}

fn scenario(c: &mut Criterion, id: &str, input: &Input, assignors: &[&str], samples: usize) {
    let spec = input.spec();
    let describer = input.describer();
    let mut group = c.benchmark_group(id);
    group.sample_size(samples);
    if samples <= 10 {
        group.warm_up_time(Duration::from_secs(1));
    }
    for &name in assignors {
        let a = server_assignor(name).expect("built in");
        let out = a.assign(&spec, &describer).expect("assigns");
        let loads: Vec<usize> = out.members.iter().map(MemberTarget::len).collect();
        eprintln!(
            "{id} {name}: {} members, counts {}..{}, {} moved",
            loads.len(),
            loads.iter().min().unwrap_or(&0),
            loads.iter().max().unwrap_or(&0),
            moved(input, &out)
        );
        drop(out);
        group.bench_function(name, |b| {
            timing::each_call(b, || a.assign(black_box(&spec), black_box(&describer)))
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    let both = ["uniform", "range"];
    if wanted("S1") {
        scenario(c, "S1", &Input::homogeneous(1, 1000, 10, true), &both, 100);
    }
    if wanted("S2") {
        scenario(c, "S2", &Input::homogeneous(100, 100, 100, true), &both, 100);
    }
    if wanted("S2-join") {
        scenario(c, "S2-join", &s2_changed(true), &["uniform"], 100);
    }
    if wanted("S2-leave") {
        scenario(c, "S2-leave", &s2_changed(false), &["uniform"], 100);
    }
    if wanted("S3") {
        scenario(c, "S3", &Input::homogeneous(1000, 1000, 2000, true), &both, 10);
    }
    if wanted("S5") {
        scenario(c, "S5", &s5(), &both, 50);
    }
    if wanted("S5-leave") {
        scenario(c, "S5-leave", &s5_leave(), &["uniform"], 50);
    }
    if wanted("S3-hetero") {
        scenario(c, "S3-hetero", &s3_hetero(), &["uniform"], 10);
    }
    if wanted("S6") {
        scenario(c, "S6", &Input::homogeneous(10_000, 10, 1000, true), &both, 50);
    }
    if wanted("S6-unshared") {
        scenario(c, "S6-unshared", &Input::homogeneous(10_000, 10, 1000, false), &["uniform"], 20);
    }
}

criterion_group!(server, benches);
criterion_main!(server);
