//! Invariants of the server assignors over random groups: random
//! subscriptions, topics the describer does not know, random (stale,
//! overlapping, out-of-range) current targets, static members.

use std::collections::BTreeSet;

use group_assignors::server::{
    MemberTarget, ServerAssignor, ServerRangeAssignor, SubscriptionType, TargetAssignment, UniformAssignor,
};
use group_types::TopicId;
use proptest::prelude::*;

use crate::server_check::{Counts, Group, Member, check_balanced, check_valid, tid};

const TOPICS: [char; 5] = ['a', 'b', 'c', 'd', 'e'];

/// One random member: subscription mask, instance id, an id key that decides
/// the member-id order, and a current target of random (topic, partition) pairs.
type MemberInput = (u8, Option<u8>, u16, Vec<(usize, i32)>);

#[derive(Debug, Clone)]
struct Input {
    /// Per topic a..e: partition count, `None` = unknown to the describer.
    counts: Vec<Option<u32>>,
    members: Vec<MemberInput>,
}

fn input() -> impl Strategy<Value = Input> {
    (
        prop::collection::vec(prop::option::weighted(0.85, 0u32..9), TOPICS.len()),
        prop::collection::vec(
            (
                0u8..32,
                prop::option::weighted(0.3, 0u8..4),
                any::<u16>(),
                prop::collection::vec((0usize..TOPICS.len(), -1i32..10), 0..10),
            ),
            1..9,
        ),
    )
        .prop_map(|(counts, members)| Input { counts, members })
}

fn counts(i: &Input) -> Counts {
    Counts(TOPICS.iter().zip(&i.counts).map(|(&t, &c)| (tid(t), c)).collect())
}

fn topics_of(mask: u8) -> String {
    TOPICS.iter().enumerate().filter(|(b, _)| mask & (1 << b) != 0).map(|(_, &t)| t).collect()
}

fn current(pairs: &[(usize, i32)]) -> MemberTarget {
    let mut by_topic: std::collections::BTreeMap<TopicId, BTreeSet<i32>> = Default::default();
    for &(t, p) in pairs {
        by_topic.entry(tid(TOPICS[t])).or_default().insert(p);
    }
    MemberTarget { topics: by_topic.into_iter().map(|(t, ps)| (t, ps.into_iter().collect())).collect() }
}

/// The input's group; with `same`, everybody subscribes to the first member's topics.
fn group(i: &Input, same: bool, with_current: bool) -> Group {
    let members = i
        .members
        .iter()
        .enumerate()
        .map(|(k, (mask, instance, key, cur))| {
            let mask = if same { i.members[0].0 } else { *mask };
            let mut m = Member::new(&format!("m{key}-{k}"), &topics_of(mask));
            if let Some(instance) = instance {
                m = m.with_instance(&format!("i{instance}-{k}"));
            }
            if with_current {
                m.current = current(cur);
            }
            m
        })
        .collect();
    Group::new(members)
}

fn assignors() -> [&'static dyn ServerAssignor; 2] {
    [&UniformAssignor, &ServerRangeAssignor]
}

/// Member `m`'s partitions as a set.
fn owned(t: &MemberTarget) -> BTreeSet<(TopicId, i32)> {
    t.topics.iter().flat_map(|(topic, ps)| ps.iter().map(move |&p| (*topic, p))).collect()
}

/// Each member's total partition count.
fn loads(out: &TargetAssignment) -> Vec<usize> {
    out.members.iter().map(MemberTarget::len).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every partition of a known, subscribed topic is assigned exactly once,
    /// only to subscribers, in the output's shape; by both assignors, under
    /// both subscription types (a homogeneous label on different lists included).
    #[test]
    fn assignments_are_valid(i in input(), same in any::<bool>(), label in any::<bool>()) {
        let mut g = group(&i, same, true);
        if label {
            g.kind = SubscriptionType::Homogeneous;
        }
        let counts = counts(&i);
        for a in assignors() {
            let out = g.assign(a, &counts);
            check_valid(&g, &counts, &out);
        }
    }

    /// The same input gives the same output.
    #[test]
    fn assignments_are_deterministic(i in input(), same in any::<bool>()) {
        let g = group(&i, same, true);
        let counts = counts(&i);
        for a in assignors() {
            prop_assert_eq!(g.assign(a, &counts), g.clone().assign(a, &counts));
        }
    }

    /// Homogeneous uniform: counts within one, whatever the current targets.
    #[test]
    fn homogeneous_uniform_is_balanced(i in input()) {
        let g = group(&i, true, true);
        prop_assert_eq!(g.kind, SubscriptionType::Homogeneous);
        let out = g.assign(&UniformAssignor, &counts(&i));
        check_balanced(&out);
    }

    /// Homogeneous uniform stickiness: from a valid previous target (the
    /// uniform or the range result of a group without the last member, or
    /// with one more), each remaining member keeps min(previous count, new
    /// quota) of its previous partitions, and new counts are within one.
    #[test]
    fn homogeneous_uniform_is_sticky(i in input(), join in any::<bool>(), from_range in any::<bool>(), gone in any::<prop::sample::Index>()) {
        let counts = counts(&i);
        let full = group(&i, true, false);
        // Joining: the last member is new. Leaving: member `gone` goes afterwards.
        let before = if join { Group::new(full.members[..full.members.len() - 1].to_vec()) } else { full.clone() };
        let previous = if from_range {
            before.assign(&ServerRangeAssignor, &counts)
        } else {
            before.assign(&UniformAssignor, &counts)
        };
        let mut after = before.clone().with_current(&previous);
        let mut kept_prev: Vec<MemberTarget> = previous.members.clone();
        if join {
            after.members.push(full.members[full.members.len() - 1].clone());
            kept_prev.push(MemberTarget::default());
        } else if after.members.len() > 1 {
            let k = gone.index(after.members.len());
            after.members.remove(k);
            kept_prev.remove(k);
        }
        let out = after.assign(&UniformAssignor, &counts);
        check_valid(&after, &counts, &out);
        check_balanced(&out);
        for (m, (prev, new)) in kept_prev.iter().zip(&out.members).enumerate() {
            let (prev, new) = (owned(prev), owned(new));
            let kept = prev.intersection(&new).count();
            prop_assert_eq!(kept, prev.len().min(new.len()), "member {}", m);
        }
    }

    /// KAFKA-18688: any balanced homogeneous target (here a uniform result
    /// with the targets shuffled among the members, so the members holding
    /// an extra partition sit anywhere in the walk) is kept as it is.
    #[test]
    fn balanced_homogeneous_target_never_moves(i in input(), keys in prop::collection::vec(any::<u32>(), 9)) {
        let g = group(&i, true, false);
        let counts = counts(&i);
        let first = g.assign(&UniformAssignor, &counts);
        let mut shuffled: Vec<(u32, MemberTarget)> =
            first.members.iter().cloned().enumerate().map(|(k, t)| (keys[k], t)).collect();
        shuffled.sort_by_key(|(key, _)| *key);
        let balanced = TargetAssignment { members: shuffled.into_iter().map(|(_, t)| t).collect() };
        let out = g.clone().with_current(&balanced).assign(&UniformAssignor, &counts);
        prop_assert_eq!(out, balanced);
    }

    /// Uniform, both types: a target the assignor computed stays put when
    /// nothing changed (homogeneous always; heterogeneous once balanced).
    #[test]
    fn uniform_is_stable(i in input(), same in any::<bool>()) {
        let g = group(&i, same, true);
        let counts = counts(&i);
        let first = g.assign(&UniformAssignor, &counts);
        let again = g.clone().with_current(&first).assign(&UniformAssignor, &counts);
        prop_assert_eq!(again, first);
    }

    /// Heterogeneous uniform: for every topic with two or more subscribers, no
    /// member holding one of its partitions has more than one partition more
    /// than any subscriber of it (Kafka's per-topic balance), and identical
    /// subscriptions come out balanced within one.
    #[test]
    fn heterogeneous_uniform_balances_each_topic(i in input(), same in any::<bool>()) {
        let mut g = group(&i, same, true);
        g.kind = SubscriptionType::Heterogeneous;
        let counts = counts(&i);
        let out = g.assign(&UniformAssignor, &counts);
        let load = loads(&out);
        for (topic, _) in counts.known() {
            let subs: Vec<usize> = (0..g.members.len()).filter(|&m| g.members[m].topics.contains(&topic)).collect();
            if subs.len() < 2 {
                continue;
            }
            let least = subs.iter().map(|&m| load[m]).min().unwrap_or(0);
            for &m in &subs {
                if !out.members[m].partitions(topic).is_empty() {
                    prop_assert!(load[m] <= least + 1, "topic {}: member {} has {} vs {}", topic, m, load[m], least);
                }
            }
        }
        if same {
            check_balanced(&out);
        }
    }

    /// Range: per topic, the subscribers in (instance id, member id) order
    /// get P / N partitions each, the first P mod N one more, in contiguous
    /// ranges from 0; and the spec's member order does not matter.
    #[test]
    fn range_matches_its_definition(i in input(), same in any::<bool>(), rotate in any::<prop::sample::Index>()) {
        let g = group(&i, same, true);
        let counts = counts(&i);
        let out = g.assign(&ServerRangeAssignor, &counts);
        let mut order: Vec<usize> = (0..g.members.len()).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&g.members[a], &g.members[b]);
            match (&a.instance, &b.instance) {
                (Some(x), Some(y)) => x.cmp(y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => a.id.cmp(&b.id),
            }
        });
        for (topic, count) in counts.known() {
            let subs: Vec<usize> = order.iter().copied().filter(|&m| g.members[m].topics.contains(&topic)).collect();
            let mut next = 0;
            for (k, &m) in subs.iter().enumerate() {
                let take = count as usize / subs.len() + usize::from(k < count as usize % subs.len());
                let expected: Vec<i32> = (next..next + take).map(|p| p as i32).collect();
                prop_assert_eq!(out.members[m].partitions(topic), &expected[..]);
                next += take;
            }
        }
        let mut rotated = g.clone();
        rotated.members.rotate_left(rotate.index(g.members.len()));
        let shift = rotate.index(g.members.len());
        let out2 = rotated.assign(&ServerRangeAssignor, &counts);
        for (k, t) in out2.members.iter().enumerate() {
            prop_assert_eq!(t, &out.members[(k + shift) % g.members.len()]);
        }
    }
}
