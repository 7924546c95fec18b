//! The simple assignor for a share group whose members all subscribe alike:
//! Kafka's `SimpleHomogeneousAssignmentBuilder`, step by step.
//!
//! 1. Every member keeps its current partitions of the subscribed topics
//!    (`revokeUnassignablePartitions`); members below their quota are
//!    unfilled, members above it overfilled.
//! 2. Each overfilled member (ascending) gives up partitions, first in the
//!    order Java iterates its `HashSet<TopicIdPartition>`, down to its quota
//!    (`revokeOverfilledMembers`).
//! 3. Each partition held by more members than wanted, in the order Java
//!    iterates the partition map, loses its first holders in the order Java
//!    iterates its `HashSet<Integer>`; they become unfilled
//!    (`revokeOversharedPartitions`).
//! 4. The assignable partitions join the map, and `fill` hands out what is
//!    missing (`assignRemainingPartitions`).
//!
//! Partitions are entries numbered in the order they enter Kafka's
//! `finalAssignmentByPartition` map, so the entry order is its insertion order.

use std::collections::HashMap;

use group_types::TopicId;

use super::index::NONE;
use super::java_order::{self, DEFAULT, Table, spread, topic_partition_hash, uuid_hash};
use super::share::AssignablePartitions;
use super::simple::{self, Old};
use super::{MemberSpec, MemberTarget, ServerAssignError, SubscribedTopicDescriber};

/// The partitions met so far, numbered in map insertion order, and Kafka's
/// `finalAssignmentByPartition` as a Java table of them.
struct Entries {
    keys: Vec<(TopicId, i32)>,
    /// Spread `TopicIdPartition` hashes.
    hashes: Vec<u32>,
    /// The subscribed topics (ascending) and, per topic, the entry of each
    /// existing partition ([`NONE`] before it has one).
    topics: Vec<TopicId>,
    dense: Vec<Vec<u32>>,
    /// Entries of partitions beyond the counts (stale current targets).
    extra: HashMap<(TopicId, i32), u32>,
    /// Per entry, its holders (Kafka index), in insertion order (ascending).
    holders: Vec<Vec<u32>>,
    /// The map, filled by `computeIfAbsent` calls.
    table: Table,
}

impl Entries {
    fn get_or_insert(&mut self, topic: TopicId, topic_hash: i32, partition: i32) -> u32 {
        let hash = spread(topic_partition_hash(topic_hash, partition));
        let fresh = self.keys.len() as u32;
        let slot = match self.topics.binary_search(&topic) {
            Ok(t) if (0..self.dense[t].len() as i64).contains(&i64::from(partition)) => {
                &mut self.dense[t][partition as usize]
            }
            _ => self.extra.entry((topic, partition)).or_insert(NONE),
        };
        if *slot != NONE {
            let e = *slot;
            self.table.compute(e, hash, None, false);
            return e;
        }
        *slot = fresh;
        self.table.compute(fresh, hash, None, true);
        self.keys.push((topic, partition));
        self.hashes.push(hash);
        self.holders.push(Vec::new());
        fresh
    }
}

/// The targets of the members in Kafka's order (`order[k]` is member `k`'s
/// spec index, `olds[k]` its current target as Kafka reads it).
pub(super) fn assign(
    members: &[MemberSpec<'_>],
    order: &[usize],
    olds: &[Old],
    assignable: &dyn AssignablePartitions,
    describer: &dyn SubscribedTopicDescriber,
) -> Result<Vec<MemberTarget>, ServerAssignError> {
    let n = order.len();
    let mut subscribed: Vec<TopicId> = members[order[0]].subscribed_topics.to_vec();
    subscribed.sort_unstable();
    subscribed.dedup();
    let mut targets: Vec<(TopicId, i32)> = Vec::new();
    let mut dense: Vec<Vec<u32>> = Vec::with_capacity(subscribed.len());
    for &topic in &subscribed {
        targets
            .extend(simple::target_partitions(topic, describer, assignable)?.into_iter().map(|p| (topic, p)));
        dense.push(vec![NONE; describer.partition_count(topic).unwrap_or(0) as usize]);
    }
    if subscribed.is_empty() {
        return Ok(vec![MemberTarget::default(); n]);
    }
    let p_count = targets.len();
    let (sharing, quota) = simple::quotas(n, p_count);

    // 1. Keep what is subscribed.
    let mut entries = Entries {
        keys: Vec::new(),
        hashes: Vec::new(),
        topics: subscribed.clone(),
        dense,
        extra: HashMap::new(),
        holders: Vec::new(),
        table: Table::new(java_order::presized(p_count)),
    };
    let mut mine: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut unfilled: Vec<u32> = Vec::new();
    let mut overfilled: Vec<u32> = Vec::new();
    for (k, old) in olds.iter().enumerate() {
        for (topic, parts) in &old.topics {
            if subscribed.binary_search(topic).is_err() {
                continue;
            }
            let topic_hash = uuid_hash(*topic);
            for &p in parts {
                let e = entries.get_or_insert(*topic, topic_hash, p);
                entries.holders[e as usize].push(k as u32);
                mine[k].push(e);
            }
        }
        let held = mine[k].len();
        if held < quota[k] as usize {
            unfilled.push(k as u32);
        } else if held > quota[k] as usize {
            overfilled.push(k as u32);
        }
    }
    let kept = entries.keys.len();
    let kept_order = entries.table.keys();
    // The member sets as they were before anything was revoked: Java's
    // iteration order depends on the capacity they grew to.
    let peaks: HashMap<u32, Vec<u32>> = (0..kept as u32)
        .filter(|&e| entries.holders[e as usize].len() > sharing)
        .map(|e| (e, entries.holders[e as usize].clone()))
        .collect();

    // 2. Overfilled members give up partitions.
    for &k in &overfilled {
        let list = &mut mine[k as usize];
        let excess = list.len() - quota[k as usize] as usize;
        let hashes: Vec<u32> = list.iter().map(|&e| entries.hashes[e as usize]).collect();
        let walk = Table::put_all(DEFAULT, &hashes, |_| None);
        let mut gone: Vec<u32> = walk[..excess].iter().map(|&i| list[i as usize]).collect();
        for &e in &gone {
            entries.holders[e as usize].retain(|&m| m != k);
        }
        gone.sort_unstable();
        list.retain(|e| gone.binary_search(e).is_err());
    }

    // 3. Over-shared partitions lose holders.
    for e in kept_order {
        let holders = &entries.holders[e as usize];
        if holders.len() <= sharing {
            continue;
        }
        let peak = peaks.get(&e).map_or(&holders[..], |p| &p[..]);
        for m in simple::first_in_set_order(holders, peak, holders.len() - sharing) {
            entries.holders[e as usize].retain(|&x| x != m);
            mine[m as usize].retain(|&x| x != e);
            simple::insert_sorted(&mut unfilled, m);
        }
    }

    // 4. The assignable partitions join the map; the rest is handed out.
    let mut topic_hash = (TopicId::ZERO, 0);
    for &(topic, p) in &targets {
        if topic_hash.0 != topic {
            topic_hash = (topic, uuid_hash(topic));
        }
        entries.get_or_insert(topic, topic_hash.1, p);
    }
    let walk = entries.table.keys();
    let mut held: Vec<u32> = mine.iter().map(|l| l.len() as u32).collect();
    simple::fill(&walk, &entries.holders, sharing, unfilled, &mut held, &quota, |e, m| {
        mine[m as usize].push(e)
    })?;

    Ok(mine
        .into_iter()
        .map(|list| simple::member_target(list.into_iter().map(|e| entries.keys[e as usize]).collect()))
        .collect())
}
