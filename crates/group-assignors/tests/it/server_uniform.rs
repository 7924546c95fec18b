//! The uniform assignor's cases (§5.4, §5.5), after Kafka's
//! `OptimizedUniformAssignmentBuilderTest` and
//! `UniformHeterogeneousAssignmentBuilderTest`, and the recorded oracle
//! scenario `61-uniform-heterogeneous-subscriptions`.

use std::collections::BTreeMap;

use group_assignors::server::{SubscriptionType, TargetAssignment, UniformAssignor, server_assignor};
use rstest::rstest;

use crate::server_check::{Counts, Group, Member, by_member, check_balanced, check_valid, target};

fn expect(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|&(m, t)| (m.to_owned(), t.to_owned())).collect()
}

/// How many of `before`'s partitions member `m` still has in `after`.
fn kept(before: &Group, after: &TargetAssignment, m: usize) -> usize {
    let old = &before.members[m].current;
    let new = &after.members[m];
    old.topics.iter().map(|(t, ps)| ps.iter().filter(|p| new.partitions(*t).contains(p)).count()).sum()
}

#[rstest]
#[case::one_member(1, "a3 b2")]
#[case::two_members_two_topics(2, "a3 b3")]
#[case::three_members_uneven(3, "a4 b3")]
#[case::more_members_than_partitions(5, "a2 b1")]
#[case::many(49, "a99 b7 c13 d1")]
fn homogeneous_first_assignment_is_balanced(#[case] members: usize, #[case] counts: &str) {
    let g = Group::new((0..members).map(|i| Member::new(&format!("m{i}"), "abcd")).collect());
    let counts = Counts::of(counts);
    let out = g.assign(&UniformAssignor, &counts);
    check_valid(&g, &counts, &out);
    check_balanced(&out);
}

#[test]
fn homogeneous_without_topics_assigns_nothing() {
    let g = Group::new(vec![Member::new("m1", ""), Member::new("m2", "")]);
    let out = g.assign(&UniformAssignor, &Counts::of("a3"));
    assert_eq!(by_member(&g, &out), expect(&[("m1", ""), ("m2", "")]));
    // A topic the describer does not know counts as absent.
    let g = Group::new(vec![Member::new("m1", "z")]);
    let out = g.assign(&UniformAssignor, &Counts::of("a3"));
    assert_eq!(by_member(&g, &out), expect(&[("m1", "")]));
}

/// KAFKA-18688 (`testReassignmentStickinessWhenAlreadyBalanced`): with 7
/// partitions over 3 members the one extra partition stays with whoever holds
/// it, wherever it sits in the walk; the earlier members do not claim it.
#[rstest]
#[case::extra_in_the_middle("a:0,1", "a:2-4", "b:0,1")]
#[case::extra_last("a:0,1", "b:0,1", "a:2-4")]
#[case::extra_first("a:2-4", "a:0,1", "b:0,1")]
fn already_balanced_never_moves(#[case] m1: &str, #[case] m2: &str, #[case] m3: &str) {
    let g = Group::new(vec![
        Member::new("m1", "ab").owning(m1),
        Member::new("m2", "ab").owning(m2),
        Member::new("m3", "ab").owning(m3),
    ]);
    let out = g.assign(&UniformAssignor, &Counts::of("a5 b2"));
    assert_eq!(by_member(&g, &out), expect(&[("m1", m1), ("m2", m2), ("m3", m3)]));
}

/// A joining member takes only its quota, from the members above theirs.
#[test]
fn member_join_moves_only_what_is_needed() {
    let g = Group::new(vec![
        Member::new("m1", "a").owning("a:0,1"),
        Member::new("m2", "a").owning("a:2,3"),
        Member::new("m3", "a").owning("a:4,5"),
        Member::new("m4", "a"),
    ]);
    let out = g.assign(&UniformAssignor, &Counts::of("a6"));
    check_balanced(&out);
    // 6 over 4: quotas 2, 2, 1, 1; m1 and m2 fill the two extra slots themselves.
    assert_eq!(kept(&g, &out, 0) + kept(&g, &out, 1) + kept(&g, &out, 2), 5);
    assert_eq!(
        by_member(&g, &out),
        expect(&[("m1", "a:0,1"), ("m2", "a:2,3"), ("m3", "a:4"), ("m4", "a:5")])
    );
}

/// A leaving member's partitions are the only ones that move.
#[test]
fn member_leave_moves_only_its_partitions() {
    let g = Group::new(vec![
        Member::new("m2", "ab").owning("a:2,3"),
        Member::new("m3", "ab").owning("a:4 b:0"),
        Member::new("m4", "ab").owning("b:1,2"),
    ]);
    // m1 held a:0,1 and left: 8 partitions over 3 members.
    let out = g.assign(&UniformAssignor, &Counts::of("a5 b3"));
    check_balanced(&out);
    for m in 0..3 {
        assert_eq!(kept(&g, &out, m), 2, "{m} keeps everything");
    }
    let moved: usize = out.members.iter().map(|t| t.len()).sum::<usize>() - 6;
    assert_eq!(moved, 2);
}

/// Partitions of topics no longer subscribed, gone or beyond the partition
/// count are dropped (`testReassignmentWhenOneSubscriptionRemoved...`).
#[rstest]
#[case::homogeneous(SubscriptionType::Homogeneous)]
#[case::heterogeneous(SubscriptionType::Heterogeneous)]
fn stale_partitions_are_dropped(#[case] kind: SubscriptionType) {
    let mut g = Group::new(vec![
        Member::new("m1", "ac").owning("a:0,7 b:0,1 c:0"),
        Member::new("m2", "ac").owning("a:-1,1 c:1"),
    ]);
    g.kind = kind;
    // b is no longer subscribed, c no longer exists, a shrank to 2 partitions.
    let counts = Counts::of("a2 b2");
    let out = g.assign(&UniformAssignor, &counts);
    check_valid(&g, &counts, &out);
    assert_eq!(by_member(&g, &out), expect(&[("m1", "a:0"), ("m2", "a:1")]));
}

/// New partitions of a subscribed topic go to the members below quota.
#[test]
fn added_partitions_are_spread() {
    let g = Group::new(vec![Member::new("m1", "a").owning("a:0,1"), Member::new("m2", "a").owning("a:2,3")]);
    let out = g.assign(&UniformAssignor, &Counts::of("a6"));
    assert_eq!(by_member(&g, &out), expect(&[("m1", "a:0,1,4"), ("m2", "a:2,3,5")]));
}

/// The oracle scenario: m1 [foo], m2 [foo, bar], m3 [bar] join one after the
/// other, each taking the previous target as current; then m3 leaves. foo
/// (6 partitions) is `a`, bar (3) is `b`. Kafka's recorded targets.
#[test]
fn oracle_heterogeneous_subscriptions() {
    let uniform = server_assignor("uniform").expect("built in");
    let counts = Counts::of("a6 b3");
    let step = |members: Vec<Member>, expected: &[(&str, &str)]| {
        let g = Group::new(members);
        let out = g.assign(uniform, &counts);
        check_valid(&g, &counts, &out);
        assert_eq!(by_member(&g, &out), expect(expected), "{:?}", g.kind);
        out
    };
    let m1 = Member::new("m1", "a");
    let m2 = Member::new("m2", "ab");
    let m3 = Member::new("m3", "b");
    step(vec![m1.clone()], &[("m1", "a:0-5")]);
    step(vec![m1.clone().owning("a:0-5"), m2.clone()], &[("m1", "a:0-4"), ("m2", "a:5 b:0-2")]);
    step(
        vec![m1.clone().owning("a:0-4"), m2.clone().owning("a:5 b:0-2"), m3.clone()],
        &[("m1", "a:0-3"), ("m2", "a:4,5 b:0"), ("m3", "b:1,2")],
    );
    // Stable once reached.
    step(
        vec![m1.clone().owning("a:0-3"), m2.clone().owning("a:4,5 b:0"), m3.owning("b:1,2")],
        &[("m1", "a:0-3"), ("m2", "a:4,5 b:0"), ("m3", "b:1,2")],
    );
    step(vec![m1.owning("a:0-3"), m2.owning("a:4,5 b:0")], &[("m1", "a:0-3"), ("m2", "a:4,5 b:0-2")]);
}

/// `testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions`.
#[test]
fn heterogeneous_member_without_subscriptions_gets_nothing() {
    let g = Group::new(vec![Member::new("m1", "a"), Member::new("m2", "")]);
    assert_eq!(g.kind, SubscriptionType::Heterogeneous);
    let counts = Counts::of("a3");
    let out = g.assign(&UniformAssignor, &counts);
    check_valid(&g, &counts, &out);
    assert_eq!(by_member(&g, &out), expect(&[("m1", "a:0-2"), ("m2", "")]));
}

/// `testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions`:
/// balancing stops when the loaded member has nothing of the topic to give.
#[test]
fn balancing_stops_when_nothing_can_move() {
    let g = Group::new(vec![Member::new("m1", "ab"), Member::new("m2", "a"), Member::new("m3", "a")]);
    let counts = Counts::of("a2 b4");
    let out = g.assign(&UniformAssignor, &counts);
    check_valid(&g, &counts, &out);
    assert_eq!(by_member(&g, &out), expect(&[("m1", "b:0-3"), ("m2", "a:0"), ("m3", "a:1")]));
}

/// A heterogeneous first assignment spreads each topic over its subscribers
/// (`testFirstAssignmentTwoMembersTwoTopics`): totals 4 and 4.
#[test]
fn heterogeneous_first_assignment() {
    let g = Group::new(vec![Member::new("m1", "a"), Member::new("m2", "ab")]);
    let counts = Counts::of("a6 b2");
    let out = g.assign(&UniformAssignor, &counts);
    check_valid(&g, &counts, &out);
    check_balanced(&out);
    assert_eq!(out.members[1].partitions(crate::server_check::tid('b')), &[0, 1]);
}

/// Identical subscriptions labelled heterogeneous still balance within one.
#[test]
fn heterogeneous_with_identical_subscriptions_is_balanced() {
    let mut g = Group::new((0..7).map(|i| Member::new(&format!("m{i}"), "abc")).collect());
    g.kind = SubscriptionType::Heterogeneous;
    g.members[0].current = target("a:0-9 b:0-9");
    let counts = Counts::of("a10 b10 c3");
    let out = g.assign(&UniformAssignor, &counts);
    check_valid(&g, &counts, &out);
    check_balanced(&out);
}

/// A group labelled homogeneous whose lists differ is assigned as
/// heterogeneous rather than to non-subscribers.
#[test]
fn mislabelled_homogeneous_group_only_assigns_subscribers() {
    let mut g = Group::new(vec![Member::new("m1", "a"), Member::new("m2", "b")]);
    g.kind = SubscriptionType::Homogeneous;
    let counts = Counts::of("a2 b2");
    let out = g.assign(&UniformAssignor, &counts);
    check_valid(&g, &counts, &out);
    assert_eq!(by_member(&g, &out), expect(&[("m1", "a:0,1"), ("m2", "b:0,1")]));
}

#[test]
fn no_members_no_targets() {
    let g = Group::new(Vec::new());
    assert_eq!(g.assign(&UniformAssignor, &Counts::of("a2")), TargetAssignment::default());
}
