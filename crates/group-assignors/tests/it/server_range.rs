//! The server-side range assignor's exact results (§5.6), after Kafka's
//! `RangeAssignorTest` and the recorded oracle scenario
//! `62-range-co-partitioning-and-member-order`.

use std::collections::BTreeMap;

use group_assignors::server::{ServerRangeAssignor, SubscriptionType, server_assignor};
use rstest::rstest;

use crate::server_check::{Counts, Group, Member, by_member, check_valid};

/// `(member, instance, topics)`; `""` = no instance id.
type Spec = (&'static str, &'static str, &'static str);

fn group(specs: &[Spec]) -> Group {
    Group::new(
        specs
            .iter()
            .map(|&(id, instance, topics)| {
                let m = Member::new(id, topics);
                if instance.is_empty() { m } else { m.with_instance(instance) }
            })
            .collect(),
    )
}

fn expect(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|&(m, t)| (m.to_owned(), t.to_owned())).collect()
}

#[rstest]
#[case::one_member_no_topic(&[("m1", "", "")], "a3", &[("m1", "")])]
#[case::unknown_topic_is_skipped(&[("m1", "", "z")], "a3", &[("m1", "")])]
#[case::one_member_everything(&[("m1", "", "ab")], "a3 b2", &[("m1", "a:0-2 b:0,1")])]
#[case::co_partitioned(
    &[("m2", "", "ab"), ("m1", "", "ab")],
    "a3 b3",
    &[("m1", "a:0,1 b:0,1"), ("m2", "a:2 b:2")],
)]
#[case::different_partition_counts(
    &[("m1", "", "ab"), ("m2", "", "ab")],
    "a3 b2",
    &[("m1", "a:0,1 b:0"), ("m2", "a:2 b:1")],
)]
#[case::per_topic_among_subscribers(
    &[("m1", "", "ab"), ("m2", "", "bc"), ("m3", "", "c")],
    "a3 b3 c2",
    &[("m1", "a:0-2 b:0,1"), ("m2", "b:2 c:0"), ("m3", "c:1")],
)]
#[case::more_members_than_partitions(
    &[("m1", "", "a"), ("m2", "", "a"), ("m3", "", "a")],
    "a2",
    &[("m1", "a:0"), ("m2", "a:1"), ("m3", "")],
)]
#[case::static_members_by_instance_id(
    &[("m1", "i3", "a"), ("m2", "i1", "a"), ("m3", "i2", "a")],
    "a6",
    &[("m1", "a:4,5"), ("m2", "a:0,1"), ("m3", "a:2,3")],
)]
#[case::static_before_dynamic(
    &[("a-dynamic", "", "a"), ("z-static", "inst", "a"), ("b-dynamic", "", "a")],
    "a4",
    &[("a-dynamic", "a:2"), ("b-dynamic", "a:3"), ("z-static", "a:0,1")],
)]
#[case::member_without_subscription(
    &[("m1", "", "a"), ("m2", "", "")],
    "a2",
    &[("m1", "a:0,1"), ("m2", "")],
)]
fn range_assigns_exactly(#[case] specs: &[Spec], #[case] counts: &str, #[case] expected: &[(&str, &str)]) {
    let g = group(specs);
    let counts = Counts::of(counts);
    let out = g.assign(&ServerRangeAssignor, &counts);
    check_valid(&g, &counts, &out);
    assert_eq!(by_member(&g, &out), expect(expected));
}

/// The oracle scenario: foo and baz with 6 partitions each, members joining
/// as d-2, d-1, s-a (instance b-inst), s-b (instance a-inst), then d-2
/// leaving. Instance ids order the static members (s-b before s-a), dynamic
/// members follow by member id, and every member gets the same partition
/// numbers of both topics, whatever the join order.
#[rstest]
#[case::first_member(&[("d-2", "", "ab")], &[("d-2", "a:0-5 b:0-5")])]
#[case::second_member(
    &[("d-2", "", "ab"), ("d-1", "", "ab")],
    &[("d-1", "a:0-2 b:0-2"), ("d-2", "a:3-5 b:3-5")],
)]
#[case::first_static_member(
    &[("d-2", "", "ab"), ("d-1", "", "ab"), ("s-a", "b-inst", "ab")],
    &[("d-1", "a:2,3 b:2,3"), ("d-2", "a:4,5 b:4,5"), ("s-a", "a:0,1 b:0,1")],
)]
#[case::second_static_member(
    &[("d-2", "", "ab"), ("d-1", "", "ab"), ("s-a", "b-inst", "ab"), ("s-b", "a-inst", "ab")],
    &[("d-1", "a:4 b:4"), ("d-2", "a:5 b:5"), ("s-a", "a:2,3 b:2,3"), ("s-b", "a:0,1 b:0,1")],
)]
#[case::d2_left(
    &[("d-1", "", "ab"), ("s-a", "b-inst", "ab"), ("s-b", "a-inst", "ab")],
    &[("d-1", "a:4,5 b:4,5"), ("s-a", "a:2,3 b:2,3"), ("s-b", "a:0,1 b:0,1")],
)]
fn oracle_co_partitioning_and_member_order(#[case] specs: &[Spec], #[case] expected: &[(&str, &str)]) {
    let g = group(specs);
    let counts = Counts::of("a6 b6");
    let out = g.assign(server_assignor("range").expect("built in"), &counts);
    assert_eq!(by_member(&g, &out), expect(expected));
}

/// Range ignores the current target and the subscription type: a previous
/// assignment of another shape changes nothing.
#[test]
fn range_is_not_sticky() {
    let g = group(&[("m1", "", "a"), ("m2", "", "a")]);
    let counts = Counts::of("a4");
    let fresh = g.assign(&ServerRangeAssignor, &counts);
    let mut moved = g.clone();
    moved.members[0] = moved.members[0].clone().owning("a:2,3");
    moved.members[1] = moved.members[1].clone().owning("a:0,1");
    moved.kind = SubscriptionType::Heterogeneous;
    assert_eq!(moved.assign(&ServerRangeAssignor, &counts), fresh);
    assert_eq!(by_member(&g, &fresh), expect(&[("m1", "a:0,1"), ("m2", "a:2,3")]));
}

/// Growing a topic shifts the ranges (`testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics`).
#[test]
fn range_shifts_when_a_topic_grows() {
    let g = group(&[("m1", "", "ab"), ("m2", "", "ab")]);
    let out = g.assign(&ServerRangeAssignor, &Counts::of("a4 b3"));
    assert_eq!(by_member(&g, &out), expect(&[("m1", "a:0,1 b:0,1"), ("m2", "a:2,3 b:2")]));
    let out = g.assign(&ServerRangeAssignor, &Counts::of("a5 b3"));
    assert_eq!(by_member(&g, &out), expect(&[("m1", "a:0-2 b:0,1"), ("m2", "a:3,4 b:2")]));
}
