//! The benchmark scenarios' quality targets (not their speed): S4 moves only
//! the departed member's partitions, S5 is strongly balanced, shared and
//! private subscription lists assign alike; plus rack-aware sticky behaviour.

use std::collections::BTreeMap;
use std::sync::Arc;

use group_assignors::{
    CooperativeStickyAssignor, GroupAssignment, PartitionAssignor, RangeAssignor, ReplicaRacks,
    RoundRobinAssignor, StickyAssignor,
};
use group_types::{MemberSubscription, TopicPartition};

fn topics(n: usize) -> Vec<Arc<str>> {
    (0..n).map(|t| Arc::from(format!("topic-{t:05}"))).collect()
}

fn partitions(ts: &[Arc<str>], per_topic: i32) -> Vec<TopicPartition> {
    ts.iter().flat_map(|t| (0..per_topic).map(move |p| TopicPartition::new(Arc::clone(t), p))).collect()
}

fn owners(a: &GroupAssignment) -> BTreeMap<&TopicPartition, &str> {
    a.iter().flat_map(|(m, l)| l.iter().map(move |p| (p, m.as_str()))).collect()
}

#[test]
fn s4_moves_exactly_the_departed_members_partitions() {
    let ts = topics(100);
    let parts = partitions(&ts, 100);
    let ms: Vec<_> =
        (0..100).map(|i| MemberSubscription::new(format!("member-{i:05}"), ts.iter().cloned())).collect();
    let first = StickyAssignor.assign(&ms, &parts).expect("valid input");
    assert!(first.values().all(|l| l.len() == 100));
    let next: Vec<_> = ms
        .into_iter()
        .filter(|m| m.member_id != "member-00099")
        .map(|m| {
            let owned = first[&m.member_id].clone();
            m.with_owned_partitions(owned, 1)
        })
        .collect();
    let assignors: [&dyn PartitionAssignor; 2] = [&StickyAssignor, &CooperativeStickyAssignor];
    for a in assignors {
        let second = a.assign(&next, &parts).expect("valid input");
        let (before, after) = (owners(&first), owners(&second));
        let moved = before.iter().filter(|(p, m)| after.get(*p) != Some(*m)).count();
        assert_eq!(moved, 100, "{}", a.name());
        assert_eq!(after.len(), 10_000, "{}", a.name());
        let mut counts: Vec<usize> = second.values().map(Vec::len).collect();
        counts.sort_unstable();
        assert_eq!((counts[0], counts[98]), (101, 102), "{}", a.name());
    }
}

/// S5's shape (three distinct subscriptions) held three ways: one shared list
/// per subscription, a list per member with the metadata's own name `Arc`s,
/// and a list per member of fresh names in reverse order, with the metadata
/// listing the topics in reverse and each topic in two pieces. Every assignor
/// must give the same assignment.
#[test]
fn shared_and_private_subscription_lists_assign_identically() {
    let ts = topics(60);
    let parts = partitions(&ts, 7);
    let subscribed =
        |i: usize| ts.iter().enumerate().filter(move |(j, _)| !(i + j).is_multiple_of(3)).map(|(_, t)| t);
    let patterns: Vec<Arc<[Arc<str>]>> = (0..3).map(|i| subscribed(i).cloned().collect()).collect();
    let shared: Vec<_> = (0..40)
        .map(|i| {
            MemberSubscription::new(format!("member-{i:05}"), None::<Arc<str>>)
                .with_shared_topics(Arc::clone(&patterns[i % 3]))
        })
        .collect();
    let private: Vec<_> =
        (0..40).map(|i| MemberSubscription::new(format!("member-{i:05}"), subscribed(i).cloned())).collect();
    let fresh: Vec<_> = (0..40)
        .map(|i| {
            let names: Vec<String> = subscribed(i).rev().map(|t| t.to_string()).collect();
            MemberSubscription::new(format!("member-{i:05}"), names)
        })
        .collect();
    assert!(Arc::ptr_eq(&shared[0].topics, &shared[3].topics));
    let (evens, odds): (Vec<_>, Vec<_>) = parts.iter().rev().cloned().partition(|p| p.partition % 2 == 0);
    let pieces: Vec<_> = evens.into_iter().chain(odds).collect();
    let assignors: [&dyn PartitionAssignor; 4] =
        [&RangeAssignor, &RoundRobinAssignor, &StickyAssignor, &CooperativeStickyAssignor];
    for a in assignors {
        let base = a.assign(&shared, &parts).expect("valid input");
        assert_eq!(base.values().map(Vec::len).sum::<usize>(), parts.len(), "{}", a.name());
        assert_eq!(a.assign(&private, &parts).expect("valid input"), base, "{} private", a.name());
        assert_eq!(a.assign(&fresh, &parts).expect("valid input"), base, "{} fresh", a.name());
        assert_eq!(a.assign(&shared, &pieces).expect("valid input"), base, "{} pieces", a.name());
    }
}

#[test]
fn s5_is_strongly_balanced() {
    let ts = topics(500);
    let parts = partitions(&ts, 20);
    let ms: Vec<_> = (0..200)
        .map(|i| {
            let sub = ts.iter().enumerate().filter(|(j, _)| (i + j) % 3 != 0).map(|(_, t)| Arc::clone(t));
            MemberSubscription::new(format!("member-{i:05}"), sub)
        })
        .collect();
    let assignors: [&dyn PartitionAssignor; 2] = [&StickyAssignor, &CooperativeStickyAssignor];
    for a in assignors {
        let out = a.assign(&ms, &parts).expect("valid input");
        assert_eq!(out.values().map(Vec::len).sum::<usize>(), 10_000);
        // Per topic, the least loaded subscriber; nobody may hold a partition of
        // a topic whose least loaded subscriber has two or more fewer.
        let count: BTreeMap<&str, usize> = out.iter().map(|(m, l)| (m.as_str(), l.len())).collect();
        let mut min_of_topic: BTreeMap<&str, usize> = BTreeMap::new();
        for m in &ms {
            for t in m.topics.iter() {
                let c = count[m.member_id.as_str()];
                min_of_topic.entry(&**t).and_modify(|x| *x = (*x).min(c)).or_insert(c);
            }
        }
        for (m, l) in &out {
            for p in l {
                assert!(count[m.as_str()] <= min_of_topic[&*p.topic] + 1, "{}: {m} holds {p}", a.name());
            }
        }
    }
}

fn rack(r: &str) -> ReplicaRacks {
    vec![Arc::from(r)]
}

#[test]
fn rack_aware_sticky_aligns_fresh_and_misaligned_owned_partitions() {
    let racks = ["a", "b", "c"];
    let parts: Vec<_> = (0..9).map(|p| TopicPartition::new("t", p)).collect();
    let replica: Vec<ReplicaRacks> = (0..9).map(|p| rack(racks[p % 3])).collect();
    let fresh: Vec<_> =
        (0..3).map(|i| MemberSubscription::new(format!("c{i}"), ["t"]).with_rack(racks[i])).collect();
    for a in [&StickyAssignor as &dyn PartitionAssignor, &CooperativeStickyAssignor] {
        let out = a.assign_with_racks(&fresh, &parts, &replica).expect("valid input");
        for (i, m) in fresh.iter().enumerate() {
            let got = &out[&m.member_id];
            assert_eq!(got.len(), 3, "{}", a.name());
            assert!(
                got.iter().all(|p| p.partition as usize % 3 == i),
                "{}: {} got {got:?}",
                a.name(),
                m.member_id
            );
        }
    }
    // Every member owns the partitions of the next rack: balance is already
    // perfect, yet the eager assignor moves them all home.
    let owned: Vec<_> = fresh
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mine = parts.iter().filter(|p| p.partition as usize % 3 == (i + 1) % 3).cloned();
            m.clone().with_owned_partitions(mine, 3)
        })
        .collect();
    let out = StickyAssignor.assign_with_racks(&owned, &parts, &replica).expect("valid input");
    for (i, m) in owned.iter().enumerate() {
        assert!(out[&m.member_id].iter().all(|p| p.partition as usize % 3 == i), "{:?}", out);
    }
    // Without racks nothing moves.
    let out = StickyAssignor.assign(&owned, &parts).expect("valid input");
    for m in &owned {
        assert_eq!(out[&m.member_id], m.owned_partitions);
    }
}

#[test]
fn rack_aware_sticky_keeps_balance_over_alignment() {
    // All replicas on rack "a": the rack-"b" member still gets its share.
    let parts: Vec<_> = (0..6).map(|p| TopicPartition::new("t", p)).collect();
    let replica: Vec<ReplicaRacks> = (0..6).map(|p| if p == 0 { rack("b") } else { rack("a") }).collect();
    let ms = [
        MemberSubscription::new("x", ["t"]).with_rack("a"),
        MemberSubscription::new("y", ["t"]).with_rack("b"),
    ];
    let out = StickyAssignor.assign_with_racks(&ms, &parts, &replica).expect("valid input");
    assert_eq!(out["x"].len(), 3);
    assert_eq!(out["y"].len(), 3);
    assert!(out["y"].contains(&TopicPartition::new("t", 0)));
}

#[test]
fn rack_aware_sticky_aligns_heterogeneous_subscriptions() {
    let mut parts: Vec<_> = (0..4).map(|p| TopicPartition::new("t", p)).collect();
    parts.extend((0..2).map(|p| TopicPartition::new("u", p)));
    let replica: Vec<ReplicaRacks> = ["a", "b", "a", "b", "a", "a"].into_iter().map(rack).collect();
    let ms = [
        MemberSubscription::new("x", ["t", "u"]).with_rack("a"),
        MemberSubscription::new("y", ["t"]).with_rack("b"),
        MemberSubscription::new("z", ["u"]).with_rack("a"),
    ];
    for a in [&StickyAssignor as &dyn PartitionAssignor, &CooperativeStickyAssignor] {
        let out = a.assign_with_racks(&ms, &parts, &replica).expect("valid input");
        assert_eq!(out["x"], [TopicPartition::new("t", 0), TopicPartition::new("t", 2)], "{}", a.name());
        assert_eq!(out["y"], [TopicPartition::new("t", 1), TopicPartition::new("t", 3)], "{}", a.name());
        assert_eq!(out["z"].len(), 2, "{}", a.name());
    }
}

#[test]
fn cooperative_reads_the_generation_from_user_data_without_a_subscription_generation() {
    let tp = |p| TopicPartition::new("t", p);
    let parts: Vec<_> = (0..4).map(tp).collect();
    // "old" claims everything at generation 3; "new" claims t-0 and t-1 at
    // generation 5, carried in its user data (subscription v1, KIP-792 fallback).
    let old = MemberSubscription::new("old", ["t"]).with_owned_partitions(parts.clone(), 3);
    let new = MemberSubscription {
        owned_partitions: vec![tp(0), tp(1)],
        generation_id: None,
        user_data: Some(5i32.to_be_bytes().to_vec()),
        ..MemberSubscription::new("new", ["t"])
    };
    let out = CooperativeStickyAssignor.assign(&[old, new], &parts).expect("valid input");
    assert_eq!(out["new"], [tp(0), tp(1)]);
    assert_eq!(out["old"], [tp(2), tp(3)]);
}

#[test]
fn fresh_identical_subscriptions_deal_round_robin_by_member_id() {
    let ts = topics(3);
    let parts = partitions(&ts, 5);
    let ms: Vec<_> =
        ["c", "a", "b"].iter().map(|id| MemberSubscription::new(*id, ts.iter().cloned())).collect();
    let out = StickyAssignor.assign(&ms, &parts).expect("valid input");
    for (k, id) in ["a", "b", "c"].iter().enumerate() {
        let want: Vec<_> = parts.iter().skip(k).step_by(3).cloned().collect();
        assert_eq!(out[*id], want, "{id}");
    }
}
