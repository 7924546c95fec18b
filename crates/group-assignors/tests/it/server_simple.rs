//! The share assignor `simple` (KIP-932), after Kafka's `SimpleAssignorTest`
//! (every case of its 4.2 version; Kafka has no separate builder tests), and
//! cases of its own on stickiness, sharing, assignable partitions and
//! membership changes whose answers do not depend on Java's hash order.

use std::collections::{BTreeMap, BTreeSet};

use group_assignors::server::{
    AllAssignable, AssignablePartitions, GroupSpec, ShareAssignor, ShareGroupSpec, SimpleAssignor,
    SubscriptionType, TargetAssignment, server_assignor, share_assignor,
};
use group_types::TopicId;
use rstest::rstest;

use crate::server_check::{Counts, Group, Member, by_member, tid};

/// Initialized partitions per topic; topics absent are wholly assignable
/// unless `only` is set, as Kafka's optional allowed map.
#[derive(Debug, Clone, Default)]
pub(crate) struct Allowed {
    pub(crate) only: Option<BTreeMap<TopicId, BTreeSet<i32>>>,
}

impl Allowed {
    /// From `"a:0,1 b:2"`; `None` = every partition.
    pub(crate) fn of(text: Option<&str>) -> Allowed {
        Allowed {
            only: text.map(|text| {
                text.split_whitespace()
                    .map(|w| {
                        let (t, ps) = w.split_once(':').expect("topic:partitions");
                        let ps =
                            ps.split(',').filter(|p| !p.is_empty()).map(|p| p.parse().expect("partition"));
                        (tid(t.chars().next().expect("letter")), ps.collect())
                    })
                    .collect()
            }),
        }
    }
}

impl AssignablePartitions for Allowed {
    fn is_assignable(&self, topic: TopicId, partition: i32) -> bool {
        self.only.as_ref().is_none_or(|m| m.get(&topic).is_some_and(|ps| ps.contains(&partition)))
    }
}

/// Runs `simple` over `group` with partition counts `counts`.
pub(crate) fn share(
    group: &Group,
    counts: &Counts,
    allowed: &dyn AssignablePartitions,
) -> Result<TargetAssignment, group_assignors::server::ServerAssignError> {
    let counts = counts.clone();
    let describer = move |t: TopicId| counts.0.get(&t).copied().flatten();
    let spec: GroupSpec<'_> = group.spec();
    SimpleAssignor.assign(&ShareGroupSpec { group: &spec, assignable: allowed }, &describer)
}

fn run(group: &Group, counts: &str, allowed: Option<&str>) -> TargetAssignment {
    share(group, &Counts::of(counts), &Allowed::of(allowed)).expect("assigns")
}

/// The distinct (topic, partition) pairs assigned to anybody
/// (`assertEveryPartitionGetsAssignment` counts these).
fn distinct(out: &TargetAssignment) -> usize {
    out.members
        .iter()
        .flat_map(|m| m.topics.iter().flat_map(|(t, ps)| ps.iter().map(move |p| (*t, *p))))
        .collect::<BTreeSet<_>>()
        .len()
}

fn expect(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|&(m, t)| (m.to_owned(), t.to_owned())).collect()
}

#[test]
fn name_and_lookup() {
    assert_eq!(SimpleAssignor.name(), "simple");
    assert_eq!(share_assignor("simple").map(|a| a.name()), Some("simple"));
    assert!(share_assignor("uniform").is_none());
    // A share assignor is no KIP-848 assignor.
    assert!(server_assignor("simple").is_none());
}

/// `testAssignWithEmptyMembers`.
#[rstest]
#[case::homogeneous(SubscriptionType::Homogeneous)]
#[case::heterogeneous(SubscriptionType::Heterogeneous)]
fn no_members_no_targets(#[case] kind: SubscriptionType) {
    let mut g = Group::new(Vec::new());
    g.kind = kind;
    assert_eq!(run(&g, "a3", None), TargetAssignment::default());
}

/// `testAssignWithNoSubscribedTopic`, and its heterogeneous twin.
#[rstest]
#[case::homogeneous(vec![Member::new("A", "")])]
#[case::heterogeneous(vec![Member::new("A", ""), Member::new("B", "").owning("a:0")])]
fn no_subscribed_topic_no_partitions(#[case] members: Vec<Member>) {
    let g = Group::new(members);
    let out = run(&g, "a3", None);
    assert!(out.members.iter().all(|m| m.is_empty()), "{out:?}");
}

/// `testAssignWithSubscribedToNonExistentTopic`: Kafka's
/// `PartitionAssignorException`, in either builder.
#[rstest]
#[case::homogeneous(vec![Member::new("A", "b")])]
#[case::heterogeneous(vec![Member::new("A", "a"), Member::new("B", "b")])]
fn unknown_topic_is_refused(#[case] members: Vec<Member>) {
    let g = Group::new(members);
    let err = share(&g, &Counts::of("a3"), &AllAssignable).expect_err("unknown topic");
    assert_eq!(err.assignor, "simple");
    assert_eq!(
        err.message,
        format!("Members are subscribed to topic {} which doesn't exist in the topic metadata.", tid('b'))
    );
}

#[test]
fn duplicate_member_is_refused() {
    let g = Group::new(vec![Member::new("A", "a"), Member::new("A", "a")]);
    let err = share(&g, &Counts::of("a3"), &AllAssignable).expect_err("duplicate");
    assert!(err.message.contains("appears twice"), "{err}");
}

/// The cases of `SimpleAssignorTest` that count the distinct partitions
/// assigned: members (`id=topics`), counts, the allowed map (`None` = all),
/// and Kafka's expected count.
#[rstest]
#[case::two_members_two_topics_homogeneous("A=ac B=ac", "a3 c2", None, 5)]
#[case::homogeneous_with_allowed_map("A=ac B=ac", "a3 c3", Some("a:0,1,2 c:0,1"), 5)]
#[case::homogeneous_with_non_assignable_topic("A=ac B=ac", "a3 c2", Some("a:0,1,2"), 3)]
#[case::three_members_three_topics_heterogeneous("A=ab B=c C=bc", "a3 b3 c2", None, 8)]
#[case::heterogeneous_with_allowed_map("A=ab B=c C=bc", "a3 b3 c2", Some("a:0,1 b:0,2 c:1"), 5)]
#[case::heterogeneous_with_non_assignable_topic("A=ab B=c C=bc", "a3 b3 c2", Some("a:0,1,2 b:0,1,2"), 6)]
#[case::one_member_no_topic_heterogeneous("A=ab B=", "a3 b2", None, 5)]
fn every_assignable_partition_is_assigned(
    #[case] members: &str,
    #[case] counts: &str,
    #[case] allowed: Option<&str>,
    #[case] expected: usize,
) {
    let g = group(members);
    assert_eq!(distinct(&run(&g, counts, allowed)), expected);
}

/// Members from `"A=ab B=c"`.
fn group(text: &str) -> Group {
    Group::new(
        text.split_whitespace()
            .map(|w| {
                let (id, topics) = w.split_once('=').expect("id=topics");
                Member::new(id, topics)
            })
            .collect(),
    )
}

/// `testAssignWithThreeMembersThreeTopicsHeterogeneousWithNonAssignableTopic`
/// and `testAssignWithOneMemberNoAssignedTopicHeterogeneous`: Kafka's exact
/// answers (topic by topic, subscribers in member order, quotas 2 and 1).
#[rstest]
#[case::non_assignable_topic("A=ab B=c C=bc", "a3 b3 c2", Some("a:0,1,2 b:0,1,2"), &[("A", "a:0-2 b:0,2"), ("B", ""), ("C", "b:1")])]
#[case::member_without_topics("A=ab B=", "a3 b2", None, &[("A", "a:0-2 b:0,1"), ("B", "")])]
fn kafka_exact_heterogeneous(
    #[case] members: &str,
    #[case] counts: &str,
    #[case] allowed: Option<&str>,
    #[case] expected: &[(&str, &str)],
) {
    let g = group(members);
    assert_eq!(by_member(&g, &run(&g, counts, allowed)), expect(expected));
}

/// `testAssignWithCurrentAssignmentHeterogeneous`: from A {a, b}, B {c},
/// C {b, c} to A {a, b, c} owning a:0-2 b:0,2 and B {c, d} owning c:0,1; all
/// nine partitions are assigned.
#[test]
fn current_assignment_heterogeneous() {
    let first = group("A=ab B=c C=bc");
    assert_eq!(distinct(&run(&first, "a3 b3 c2", None)), 8);
    let g = Group::new(vec![
        Member::new("A", "abc").owning("a:0-2 b:0,2"),
        Member::new("B", "cd").owning("c:0,1"),
    ]);
    let out = run(&g, "a3 b3 c2 d1", None);
    assert_eq!(distinct(&out), 9);
    // c is shared by A and B now: A takes one of B's two.
    assert_eq!(out.members[1].partitions(tid('d')), &[0]);
    assert_eq!(out.members[0].partitions(tid('c')).len() + out.members[1].partitions(tid('c')).len(), 2);
}

/// Kafka's four subscriptions of the heterogeneous incremental tests.
const SUBSCRIPTIONS: [&str; 4] = ["abc", "b", "c", "ab"];

fn incremental_member(i: usize, homogeneous: bool) -> Member {
    Member::new(&format!("M{i}"), if homogeneous { "a" } else { SUBSCRIPTIONS[i % 4] })
}

/// `testIncrementalAssignmentIncreasingMembers{Homogeneous,Heterogeneous}`:
/// 24 partitions (one topic, or 12 + 8 + 4), members join one at a time up
/// to 101, each time from the previous targets; every partition stays
/// assigned.
#[rstest]
#[case::homogeneous(true, "a24")]
#[case::heterogeneous(false, "a12 b8 c4")]
fn incremental_increasing_members(#[case] homogeneous: bool, #[case] counts: &str) {
    let mut g = Group::new(Vec::new());
    for i in 0..101 {
        g.members.push(incremental_member(i, homogeneous));
        g = Group::new(g.members);
        let out = run(&g, counts, None);
        assert_eq!(distinct(&out), 24, "{} members", i + 1);
        g = g.with_current(&out);
    }
}

/// `testIncrementalAssignmentDecreasingMembers{Homogeneous,Heterogeneous}`:
/// 101 members, then the last leaves one at a time down to one.
#[rstest]
#[case::homogeneous(true, "a24")]
#[case::heterogeneous(false, "a12 b8 c4")]
fn incremental_decreasing_members(#[case] homogeneous: bool, #[case] counts: &str) {
    let mut g = Group::new((0..101).map(|i| incremental_member(i, homogeneous)).collect());
    let out = run(&g, counts, None);
    assert_eq!(distinct(&out), 24);
    g = g.with_current(&out);
    while g.members.len() > 1 {
        g.members.pop();
        g = Group::new(g.members);
        let out = run(&g, counts, None);
        assert_eq!(distinct(&out), 24, "{} members", g.members.len());
        g = g.with_current(&out);
    }
}

/// Sharing: with `M` members on `P < M` partitions every partition goes to
/// `ceil(M / P)` members and every member gets one or more.
#[rstest]
#[case::three_on_two(3, 2, 2)]
#[case::five_on_two(5, 2, 3)]
#[case::hundred_on_ten(100, 10, 10)]
#[case::seven_on_one(7, 1, 7)]
fn more_members_than_partitions(#[case] members: usize, #[case] partitions: u32, #[case] sharing: usize) {
    let g = Group::new((0..members).map(|i| Member::new(&format!("m{i}"), "a")).collect());
    let out = run(&g, &format!("a{partitions}"), None);
    let mut holders = vec![0usize; partitions as usize];
    for m in &out.members {
        assert!(!m.is_empty(), "every member gets a partition: {out:?}");
        for &p in m.partitions(tid('a')) {
            holders[p as usize] += 1;
        }
    }
    assert!(holders.iter().all(|&h| h == sharing), "holders {holders:?}, want {sharing} each");
}

/// Stickiness: a member joining takes only its share, from the members above
/// their new quota; a member leaving leaves only its own partitions to move.
#[rstest]
#[case::join("m1=a:0-5", "m2=", 3)]
#[case::join_third("m1=a:0-2 m2=a:3-5", "m3=", 4)]
#[case::leave("m1=a:0,1 m2=a:2,3", "", 4)]
fn membership_change_moves_little(#[case] before: &str, #[case] joiner: &str, #[case] kept: usize) {
    let mut members: Vec<Member> = before
        .split_whitespace()
        .map(|w| {
            let (id, owned) = w.split_once('=').expect("id=target");
            Member::new(id, "a").owning(owned)
        })
        .collect();
    if let Some(id) = joiner.strip_suffix('=') {
        members.push(Member::new(id, "a"));
    }
    let g = Group::new(members);
    let out = run(&g, "a6", None);
    let still: usize = g
        .members
        .iter()
        .zip(&out.members)
        .map(|(m, t)| {
            m.current.partitions(tid('a')).iter().filter(|p| t.partitions(tid('a')).contains(p)).count()
        })
        .sum();
    assert_eq!(still, kept, "{:?}", by_member(&g, &out));
    assert_eq!(distinct(&out), 6);
}

/// Topics removed from the subscription leave the target at once; a topic
/// added is assigned once its partitions are initialized.
#[test]
fn topics_added_and_removed() {
    let g = Group::new(vec![Member::new("m1", "ab").owning("a:0-2")]);
    // b not initialized yet: nothing of it.
    assert_eq!(by_member(&g, &run(&g, "a3 b2", Some("a:0,1,2"))), expect(&[("m1", "a:0-2")]));
    assert_eq!(by_member(&g, &run(&g, "a3 b2", None)), expect(&[("m1", "a:0-2 b:0,1")]));
    let g = Group::new(vec![Member::new("m1", "b").owning("a:0-2 b:0,1")]);
    assert_eq!(by_member(&g, &run(&g, "a3 b2", None)), expect(&[("m1", "b:0,1")]));
}

/// Kafka's heterogeneous builder never looks at topics nobody subscribes to:
/// a member's partitions of them stay in its target (the coordinator filters
/// a member's assignment by its subscription). The homogeneous builder drops
/// them.
#[test]
fn heterogeneous_keeps_partitions_of_unsubscribed_topics() {
    let g = Group::new(vec![Member::new("m1", "a").owning("c:0"), Member::new("m2", "b")]);
    assert_eq!(by_member(&g, &run(&g, "a1 b1 c1", None)), expect(&[("m1", "a:0 c:0"), ("m2", "b:0")]));
    let g = Group::new(vec![Member::new("m1", "a").owning("c:0"), Member::new("m2", "a")]);
    let out = run(&g, "a2 c1", None);
    assert!(out.members.iter().all(|m| m.partitions(tid('c')).is_empty()), "{out:?}");
}

/// A partition that stops being assignable is not taken away for that: it
/// still counts towards its holder's quota (Kafka's
/// `revokeUnassignablePartitions` looks at subscriptions only), so here the
/// one member, at its quota of two with a:0 and a:1, leaves a:2 unassigned.
/// Kafka's coordinator never makes an initialized partition uninitialized
/// while members hold it (only an empty group's offsets can be deleted).
#[test]
fn held_partitions_that_are_not_assignable_stay() {
    let g = Group::new(vec![Member::new("m1", "a").owning("a:0,1")]);
    assert_eq!(by_member(&g, &run(&g, "a3", Some("a:1,2"))), expect(&[("m1", "a:0,1")]));
}
