//! Inputs of scenarios S1-S6 of `benchmarks.md`, shared by the criterion
//! benchmark and the `bench_min` example.

use std::collections::BTreeMap;
use std::sync::Arc;

use group_assignors::{GroupAssignment, PartitionAssignor, StickyAssignor};
use group_types::{MemberSubscription, TopicPartition};

/// The assignors measured, by registered name.
pub(crate) const ASSIGNORS: [&str; 4] = ["range", "roundrobin", "sticky", "cooperative-sticky"];

fn topics(n: usize) -> Vec<Arc<str>> {
    (0..n).map(|t| Arc::from(format!("topic-{t:05}"))).collect()
}

fn partitions(topics: &[Arc<str>], per_topic: i32) -> Vec<TopicPartition> {
    topics.iter().flat_map(|t| (0..per_topic).map(move |p| TopicPartition::new(Arc::clone(t), p))).collect()
}

/// Every member subscribes to every topic. Members share one topic list, as a
/// server holds them after interning the decoded subscriptions.
pub(crate) fn uniform(
    topic_count: usize,
    per_topic: i32,
    members: usize,
) -> (Vec<MemberSubscription>, Vec<TopicPartition>) {
    let ts = topics(topic_count);
    let shared: Arc<[Arc<str>]> = ts.iter().cloned().collect();
    let ms = (0..members)
        .map(|i| {
            MemberSubscription::new(format!("member-{i:05}"), None::<Arc<str>>)
                .with_shared_topics(Arc::clone(&shared))
        })
        .collect();
    (ms, partitions(&ts, per_topic))
}

/// [`uniform`] with a separately built topic list per member (as a client-side
/// leader decodes them): the same assignment, found by comparing contents.
#[allow(dead_code, reason = "only bench_min measures the unshared input")]
pub(crate) fn uniform_unshared(
    topic_count: usize,
    per_topic: i32,
    members: usize,
) -> (Vec<MemberSubscription>, Vec<TopicPartition>) {
    let ts = topics(topic_count);
    let ms =
        (0..members).map(|i| MemberSubscription::new(format!("member-{i:05}"), ts.iter().cloned())).collect();
    (ms, partitions(&ts, per_topic))
}

/// S4: the sticky assignment of S2 as everybody's owned partitions
/// (generation 1), then `member-00099` leaves. Also returns the S2 owners.
pub(crate) fn s4() -> (Vec<MemberSubscription>, Vec<TopicPartition>, GroupAssignment) {
    let (ms, parts) = uniform(100, 100, 100);
    let first = StickyAssignor.assign(&ms, &parts).expect("valid input");
    let ms = ms
        .into_iter()
        .filter(|m| m.member_id != "member-00099")
        .map(|m| {
            let owned = first[&m.member_id].clone();
            m.with_owned_partitions(owned, 1)
        })
        .collect();
    (ms, parts, first)
}

/// S5: member i subscribes to topic j iff (i + j) % 3 != 0: three distinct
/// subscriptions (by i % 3), each one shared list.
pub(crate) fn s5() -> (Vec<MemberSubscription>, Vec<TopicPartition>) {
    let ts = topics(500);
    let patterns: Vec<Arc<[Arc<str>]>> = (0..3)
        .map(|i| {
            ts.iter().enumerate().filter(|(j, _)| (i + j) % 3 != 0).map(|(_, t)| Arc::clone(t)).collect()
        })
        .collect();
    let ms = (0..200)
        .map(|i| {
            MemberSubscription::new(format!("member-{i:05}"), None::<Arc<str>>)
                .with_shared_topics(Arc::clone(&patterns[i % 3]))
        })
        .collect();
    (ms, partitions(&ts, 20))
}

/// Partitions whose owner differs between two assignments.
pub(crate) fn moved(before: &GroupAssignment, after: &GroupAssignment) -> usize {
    let owner: BTreeMap<&TopicPartition, &str> =
        after.iter().flat_map(|(m, l)| l.iter().map(move |p| (p, m.as_str()))).collect();
    before
        .iter()
        .flat_map(|(m, l)| l.iter().map(move |p| (p, m)))
        .filter(|(p, m)| owner.get(p) != Some(&m.as_str()))
        .count()
}
