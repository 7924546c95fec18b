//! Criterion benchmarks of the share-group assignor `simple` (KIP-932):
//! topic `j` has id `j + 1`, members are `member-%05d`, every partition is
//! assignable (initialized), members with the same subscription share one
//! topic list. Inputs are built outside the timed section; the timed section
//! is one `assign` call including building its output, dropped untimed.
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

mod timing;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use group_assignors::server::{
    AllAssignable, GroupSpec, MemberSpec, MemberTarget, ShareAssignor, ShareGroupSpec, SimpleAssignor,
    SubscriptionType, TargetAssignment,
};
use group_types::TopicId;

/// Whether the command line's filter can select scenario `id`.
fn wanted(id: &str) -> bool {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| a.starts_with("share")).collect();
    filters.is_empty() || filters.iter().any(|f| id.contains(f.as_str()))
}

/// An owned group the specs borrow from.
struct Input {
    ids: Vec<String>,
    lists: Vec<Vec<TopicId>>,
    list_of: Vec<usize>,
    current: Vec<MemberTarget>,
    kind: SubscriptionType,
    counts: Vec<u32>,
}

impl Input {
    fn spec(&self) -> GroupSpec<'_> {
        GroupSpec {
            members: (0..self.ids.len())
                .map(|m| MemberSpec {
                    member_id: &self.ids[m],
                    instance_id: None,
                    rack_id: None,
                    subscribed_topics: &self.lists[self.list_of[m]],
                    current: &self.current[m],
                })
                .collect(),
            subscription_type: self.kind,
        }
    }

    fn describer(&self) -> impl Fn(TopicId) -> Option<u32> + '_ {
        |id: TopicId| self.counts.get(id.as_u128().checked_sub(1)? as usize).copied()
    }

    fn assign(&self) -> TargetAssignment {
        let spec = self.spec();
        SimpleAssignor
            .assign(&ShareGroupSpec { group: &spec, assignable: &AllAssignable }, &self.describer())
            .expect("assigns")
    }
}

fn topic(j: usize) -> TopicId {
    TopicId::from_u128(j as u128 + 1)
}

fn homogeneous(topics: usize, per_topic: u32, members: usize) -> Input {
    Input {
        ids: (0..members).map(|i| format!("member-{i:05}")).collect(),
        lists: vec![(0..topics).map(topic).collect()],
        list_of: vec![0; members],
        current: vec![MemberTarget::default(); members],
        kind: SubscriptionType::Homogeneous,
        counts: vec![per_topic; topics],
    }
}

fn heterogeneous() -> Input {
    let lists = (0..3).map(|i| (0..10).filter(|j| (i + j) % 3 != 0).map(topic).collect()).collect();
    Input {
        ids: (0..1000).map(|i| format!("member-{i:05}")).collect(),
        lists,
        list_of: (0..1000).map(|i| i % 3).collect(),
        current: vec![MemberTarget::default(); 1000],
        kind: SubscriptionType::Heterogeneous,
        counts: vec![1000; 10],
    }
}

fn joined() -> Input {
    let mut input = homogeneous(10, 1000, 1000);
    input.current = input.assign().members;
    input.ids.push("member-01000".to_owned());
    input.list_of.push(0);
    input.current.push(MemberTarget::default());
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
        scenario(c, "share-homogeneous", &homogeneous(10, 1000, 1000), 20);
    }
    if wanted("share-homogeneous-join") {
        scenario(c, "share-homogeneous-join", &joined(), 20);
    }
    if wanted("share-heterogeneous") {
        scenario(c, "share-heterogeneous", &heterogeneous(), 20);
    }
    if wanted("share-more-members") {
        scenario(c, "share-more-members", &homogeneous(1, 10, 100), 100);
    }
}

criterion_group!(share, benches);
criterion_main!(share);
