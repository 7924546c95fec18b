//! Invariants over random groups: heterogeneous subscriptions, topics without
//! metadata, random previous ownership with random (and conflicting)
//! generations, random racks.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use group_assignors::{
    CooperativeStickyAssignor, GroupAssignment, PartitionAssignor, RangeAssignor, ReplicaRacks,
    RoundRobinAssignor, StickyAssignor,
};
use group_types::{MemberSubscription, TopicPartition};
use proptest::prelude::*;

use crate::check::{check_all_assigned, check_balanced, check_valid, moved};

/// A random group and cluster.
#[derive(Debug, Clone)]
struct Input {
    members: Vec<MemberSubscription>,
    partitions: Vec<TopicPartition>,
    racks: Vec<ReplicaRacks>,
    /// Random keys to permute members and partitions with.
    shuffle: Vec<u32>,
}

const TOPICS: [&str; 5] = ["a", "b", "c", "d", "missing"];
const RACKS: [&str; 3] = ["r0", "r1", "r2"];

fn input() -> impl Strategy<Value = Input> {
    (
        prop::collection::vec(0u32..7, 4),
        prop::collection::vec((0u32..32, 0u32..4, prop::option::of(-1i32..4), any::<bool>()), 1..7),
        any::<u64>(),
        prop::collection::vec(any::<u32>(), 64),
    )
        .prop_map(|(counts, specs, seed, shuffle)| {
            let mut rng = seed;
            let mut next = move |n: u64| {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((rng >> 33) % n) as u32
            };
            let mut partitions = Vec::new();
            let mut racks = Vec::new();
            for (t, &n) in counts.iter().enumerate() {
                for p in 0..n as i32 {
                    partitions.push(TopicPartition::new(TOPICS[t], p));
                    let mask = next(8);
                    racks
                        .push((0..3).filter(|r| mask & (1 << r) != 0).map(|r| Arc::from(RACKS[r])).collect());
                }
            }
            let members = specs
                .iter()
                .enumerate()
                .map(|(i, &(mask, rack, generation, static_member))| {
                    let topics: Vec<Arc<str>> =
                        (0..5).filter(|b| mask & (1 << b) != 0).map(|b| Arc::from(TOPICS[b])).collect();
                    let mut m = MemberSubscription::new(format!("m{i}"), topics);
                    if rack < 3 {
                        m = m.with_rack(RACKS[rack as usize]);
                    }
                    if static_member {
                        m = m.with_instance_id(format!("i{}", 9 - i));
                    }
                    // Random claims: about a third of the partitions, any member, so
                    // claims conflict, go stale, and cover unsubscribed topics.
                    m.owned_partitions = partitions.iter().filter(|_| next(3) == 0).cloned().collect();
                    m.generation_id = generation;
                    m
                })
                .collect();
            Input { members, partitions, racks, shuffle }
        })
}

fn permuted<T: Clone>(v: &[T], keys: &[u32]) -> Vec<T> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by_key(|&i| (keys[i % keys.len()], i));
    idx.into_iter().map(|i| v[i].clone()).collect()
}

fn eager_invariants(i: &Input, a: &GroupAssignment) -> Result<(), String> {
    check_valid(&i.members, &i.partitions, a)?;
    check_all_assigned(&i.members, &i.partitions, a)?;
    check_balanced(&i.members, &i.partitions, a)
}

/// The unique highest-generation claimant of `p` that still subscribes to its topic.
fn valid_owner<'m>(ms: &'m [MemberSubscription], p: &TopicPartition) -> Option<&'m str> {
    let claims: Vec<(i32, &MemberSubscription)> = ms
        .iter()
        .filter(|m| m.owned_partitions.contains(p))
        .map(|m| (m.generation_id.unwrap_or(-1), m))
        .collect();
    let top = claims.iter().map(|c| c.0).max()?;
    let winners: Vec<_> = claims.iter().filter(|c| c.0 == top).collect();
    (winners.len() == 1 && winners[0].1.topics.contains(&p.topic)).then(|| winners[0].1.member_id.as_str())
}

/// Round-1 rules, then follow-ups until nobody loses a partition.
fn cooperative(i: &Input, with_racks: bool) -> Result<GroupAssignment, String> {
    let racks: &[ReplicaRacks] = if with_racks { &i.racks } else { &[] };
    let mut ms = i.members.clone();
    let mut current =
        CooperativeStickyAssignor.assign_with_racks(&ms, &i.partitions, racks).map_err(|e| e.to_string())?;
    check_valid(&ms, &i.partitions, &current)?;
    let eager = StickyAssignor.assign_with_racks(&ms, &i.partitions, racks).map_err(|e| e.to_string())?;
    let mut claimants: BTreeMap<&TopicPartition, BTreeSet<&str>> = BTreeMap::new();
    for m in &ms {
        for p in &m.owned_partitions {
            claimants.entry(p).or_default().insert(&m.member_id);
        }
    }
    // Round 1 is the eager target minus what is still held elsewhere.
    for (m, list) in &current {
        let target: BTreeSet<&TopicPartition> = eager[m].iter().collect();
        for p in list {
            if !target.contains(p) {
                return Err(format!("round 1 gives {p} to {m} outside the target"));
            }
            let others = claimants.get(p).is_some_and(|c| c.iter().any(|c| c != m));
            if others && valid_owner(&ms, p) != Some(m.as_str()) {
                return Err(format!("round 1 gives {p} to {m} while another member lists it"));
            }
        }
    }
    let assigned: BTreeSet<&TopicPartition> = current.values().flatten().collect();
    for (m, list) in &eager {
        for p in list {
            if !claimants.contains_key(p) && !assigned.contains(p) {
                return Err(format!("round 1 withholds unclaimed {p} from {m}"));
            }
        }
    }
    let mut generation = ms.iter().filter_map(|m| m.generation_id).max().unwrap_or(0).max(0);
    let mut follow_ups = 0;
    loop {
        if ms.iter().all(|m| m.owned_partitions.iter().all(|p| current[&m.member_id].contains(p))) {
            return Ok(current);
        }
        if follow_ups == 4 {
            break;
        }
        follow_ups += 1;
        generation += 1;
        for m in &mut ms {
            m.owned_partitions = current[&m.member_id].clone();
            m.generation_id = Some(generation);
        }
        current = CooperativeStickyAssignor
            .assign_with_racks(&ms, &i.partitions, racks)
            .map_err(|e| e.to_string())?;
        check_valid(&ms, &i.partitions, &current)?;
    }
    Err("still revoking after 4 follow-ups".into())
}

/// The same members with every distinct subscription held as one shared list,
/// as a server interning subscriptions holds them.
fn shared_lists(ms: &[MemberSubscription]) -> Vec<MemberSubscription> {
    let mut pool: Vec<Arc<[Arc<str>]>> = Vec::new();
    ms.iter()
        .map(|m| {
            let list = match pool.iter().find(|l| ***l == *m.topics) {
                Some(l) => Arc::clone(l),
                None => {
                    let l: Arc<[Arc<str>]> = m.topics.iter().cloned().collect();
                    pool.push(Arc::clone(&l));
                    l
                }
            };
            m.clone().with_shared_topics(list)
        })
        .collect()
}

/// The same members, each with a list of its own: fresh name allocations, in
/// reverse order, the first topic listed twice.
fn private_lists(ms: &[MemberSubscription]) -> Vec<MemberSubscription> {
    ms.iter()
        .map(|m| {
            let mut names: Vec<Arc<str>> = m.topics.iter().rev().map(|t| Arc::from(&**t)).collect();
            if let Some(first) = names.last().cloned() {
                names.push(first);
            }
            m.clone().with_shared_topics(names.into())
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Sharing subscription lists is only an optimisation: shared, private,
    /// reordered and repeated lists of the same topics assign identically.
    #[test]
    fn shared_and_private_subscription_lists_assign_identically(i in input(), with_racks in any::<bool>()) {
        let racks: &[ReplicaRacks] = if with_racks { &i.racks } else { &[] };
        let shared = shared_lists(&i.members);
        let private = private_lists(&i.members);
        let assignors: [&dyn PartitionAssignor; 4] =
            [&RangeAssignor, &RoundRobinAssignor, &StickyAssignor, &CooperativeStickyAssignor];
        for a in assignors {
            let base = a.assign_with_racks(&i.members, &i.partitions, racks).expect("valid input");
            let from_shared = a.assign_with_racks(&shared, &i.partitions, racks).expect("valid input");
            let from_private = a.assign_with_racks(&private, &i.partitions, racks).expect("valid input");
            prop_assert_eq!(&base, &from_shared, "{} differs with shared lists", a.name());
            prop_assert_eq!(&base, &from_private, "{} differs with private lists", a.name());
        }
    }

    #[test]
    fn sticky_is_valid_complete_and_strongly_balanced(i in input(), with_racks in any::<bool>()) {
        let racks: &[ReplicaRacks] = if with_racks { &i.racks } else { &[] };
        let a = StickyAssignor.assign_with_racks(&i.members, &i.partitions, racks).expect("valid input");
        prop_assert!(eager_invariants(&i, &a).is_ok(), "{:?}", eager_invariants(&i, &a));
    }

    #[test]
    fn cooperative_is_safe_and_converges_to_balance(i in input(), with_racks in any::<bool>()) {
        let last = cooperative(&i, with_racks);
        prop_assert!(last.is_ok(), "{:?}", last.as_ref().err());
        let last = last.expect("checked");
        prop_assert!(eager_invariants(&i, &last).is_ok(), "{:?}", eager_invariants(&i, &last));
    }

    #[test]
    fn range_and_roundrobin_ignore_input_order(i in input(), with_racks in any::<bool>()) {
        let racks: &[ReplicaRacks] = if with_racks { &i.racks } else { &[] };
        let assignors: [&dyn PartitionAssignor; 2] = [&RangeAssignor, &RoundRobinAssignor];
        let ms = permuted(&i.members, &i.shuffle);
        let idx: Vec<usize> = permuted(&(0..i.partitions.len()).collect::<Vec<_>>(), &i.shuffle[7..]);
        let parts: Vec<_> = idx.iter().map(|&k| i.partitions[k].clone()).collect();
        let shuffled_racks: Vec<_> = if with_racks { idx.iter().map(|&k| i.racks[k].clone()).collect() } else { Vec::new() };
        for a in assignors {
            let base = a.assign_with_racks(&i.members, &i.partitions, racks).expect("valid input");
            prop_assert!(check_valid(&i.members, &i.partitions, &base).is_ok());
            prop_assert!(check_all_assigned(&i.members, &i.partitions, &base).is_ok());
            let other = a.assign_with_racks(&ms, &parts, &shuffled_racks).expect("valid input");
            prop_assert_eq!(&base, &other, "{} depends on input order", a.name());
        }
    }

    /// With identical subscriptions and uncontested claims, the number of
    /// partitions changing owner is the proven minimum.
    #[test]
    fn uniform_sticky_moves_the_minimum(
        n in 1usize..6,
        parts in 0i32..20,
        claims in prop::collection::vec(0usize..8, 20),
    ) {
        let partitions: Vec<_> = (0..parts).map(|p| TopicPartition::new("t", p)).collect();
        let mut members: Vec<_> = (0..n).map(|i| MemberSubscription::new(format!("m{i}"), ["t"])).collect();
        let mut previous = BTreeMap::new();
        for (p, &c) in partitions.iter().zip(&claims) {
            if c < n {
                members[c].owned_partitions.push(p.clone());
                members[c].generation_id = Some(1);
                previous.insert(p.clone(), format!("m{c}"));
            }
        }
        let a = StickyAssignor.assign(&members, &partitions).expect("valid input");
        prop_assert!(check_balanced(&members, &partitions, &a).is_ok());
        let mut owned: Vec<usize> = members.iter().map(|m| m.owned_partitions.len()).collect();
        owned.sort_unstable_by(|x, y| y.cmp(x));
        let (q, e) = (parts as usize / n, parts as usize % n);
        let minimum: usize = owned.iter().enumerate().map(|(k, &o)| o.saturating_sub(q + usize::from(k < e))).sum();
        prop_assert_eq!(moved(&previous, &a), minimum);
    }
}
