//! The simple assignor for a share group whose members subscribe
//! differently: Kafka's `SimpleHeterogeneousAssignmentBuilder`, which runs
//! the homogeneous steps once per subscribed topic
//! (`TopicAssignmentPartialBuilder`), over that topic's subscribers only.
//!
//! Per topic: every member keeps its current partitions of it, subscribed or
//! not; members holding more than their quota for the topic (zero for
//! non-subscribers) give up the first ones in Java's order; partitions held
//! by too many members lose their first holders; then `fill` hands out what
//! is missing to the topic's subscribers below their quota. The topics do not
//! interact (each step touches only its topic), so they run in id order.
//! Topics that no member subscribes to are not looked at: a member's current
//! partitions of them stay in its target, as in Kafka.

use std::collections::HashMap;

use group_types::TopicId;

use super::index::NONE;
use super::java_order::{self, DEFAULT, Table, int_ord, spread, uuid_hash, uuid_ord};
use super::share::AssignablePartitions;
use super::simple::{self, Old};
use super::{MemberSpec, MemberTarget, ServerAssignError, SubscribedTopicDescriber};

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
    let subs: Vec<Vec<TopicId>> = order
        .iter()
        .map(|&m| {
            let mut list = members[m].subscribed_topics.to_vec();
            list.sort_unstable();
            list.dedup();
            list
        })
        .collect();

    // The union, walked in the order Java iterates the `HashSet<Uuid>` built
    // member by member, so that the first unknown topic is Kafka's.
    let mut union: Vec<TopicId> = Vec::new();
    let mut seen: std::collections::HashSet<TopicId> = std::collections::HashSet::new();
    for list in &subs {
        union.extend(list.iter().copied().filter(|t| seen.insert(*t)));
    }
    let hashes: Vec<u32> = union.iter().map(|t| spread(uuid_hash(*t))).collect();
    let union: Vec<TopicId> = Table::put_all(DEFAULT, &hashes, |i| uuid_ord(union[i as usize]))
        .into_iter()
        .map(|i| union[i as usize])
        .collect();
    let mut targets: Vec<(TopicId, Vec<i32>)> = Vec::with_capacity(union.len());
    for &topic in &union {
        targets.push((topic, simple::target_partitions(topic, describer, assignable)?));
    }
    targets.sort_unstable_by_key(|(t, _)| *t);

    let mut out: Vec<Vec<(TopicId, i32)>> = vec![Vec::new(); n];
    if union.is_empty() {
        return Ok(vec![MemberTarget::default(); n]);
    }
    let mut scratch = Scratch::new(n);
    for (topic, parts) in &targets {
        let subscribers: Vec<u32> =
            (0..n as u32).filter(|&k| subs[k as usize].binary_search(topic).is_ok()).collect();
        scratch.topic(*topic, parts, &subscribers, olds, &mut out)?;
    }
    // What nobody subscribes to stays where it was.
    for (k, old) in olds.iter().enumerate() {
        for (topic, parts) in &old.topics {
            if targets.binary_search_by_key(topic, |(t, _)| *t).is_err() {
                out[k].extend(parts.iter().map(|&p| (*topic, p)));
            }
        }
    }
    Ok(out.into_iter().map(simple::member_target).collect())
}

/// Per-topic state, reused across topics.
struct Scratch {
    /// Per member (Kafka index), its slot in `mine`, or [`NONE`].
    slot: Vec<u32>,
    /// Each member's quota for the current topic (zero unless subscribed).
    quota: Vec<u32>,
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        Scratch { slot: vec![NONE; n], quota: vec![0; n] }
    }

    fn topic(
        &mut self,
        topic: TopicId,
        parts: &[i32],
        subscribers: &[u32],
        olds: &[Old],
        out: &mut [Vec<(TopicId, i32)>],
    ) -> Result<(), ServerAssignError> {
        let (sharing, quotas) = simple::quotas(subscribers.len(), parts.len());
        for (&k, &q) in subscribers.iter().zip(&quotas) {
            self.quota[k as usize] = q;
        }

        // Partition entries in map insertion order, who holds them, and
        // Kafka's `finalAssignmentByPartition` as a Java table of them.
        let mut keys: Vec<i32> = Vec::new();
        let mut index: HashMap<i32, u32> = HashMap::new();
        let mut holders: Vec<Vec<u32>> = Vec::new();
        let mut by_partition = Table::new(java_order::presized(parts.len()));
        // Members holding something of the topic, in insertion (ascending)
        // order, and Kafka's `finalAssignmentByMember` as a Java table of them.
        let mut owners: Vec<u32> = Vec::new();
        let mut mine: Vec<Vec<u32>> = Vec::new();
        let mut by_member = Table::new(java_order::presized(subscribers.len()));
        let mut entry =
            |p: i32, keys: &mut Vec<i32>, holders: &mut Vec<Vec<u32>>, table: &mut Table| -> u32 {
                if let Some(&e) = index.get(&p) {
                    table.compute(e, spread(p), int_ord(p), false);
                    return e;
                }
                let e = keys.len() as u32;
                table.compute(e, spread(p), int_ord(p), true);
                index.insert(p, e);
                keys.push(p);
                holders.push(Vec::new());
                e
            };

        // Keep what is held.
        for (k, old) in olds.iter().enumerate() {
            let Some(held) = old.get(topic) else { continue };
            for &p in held {
                let e = entry(p, &mut keys, &mut holders, &mut by_partition);
                holders[e as usize].push(k as u32);
                let fresh = self.slot[k] == NONE;
                by_member.compute(k as u32, spread(k as i32), int_ord(k as i32), fresh);
                if fresh {
                    self.slot[k] = mine.len() as u32;
                    owners.push(k as u32);
                    mine.push(Vec::new());
                }
                mine[self.slot[k] as usize].push(e);
            }
        }
        let kept = keys.len();
        let kept_order = by_partition.keys();
        let peaks: HashMap<u32, Vec<u32>> = (0..kept as u32)
            .filter(|&e| holders[e as usize].len() > sharing)
            .map(|e| (e, holders[e as usize].clone()))
            .collect();

        // Members above their quota give up partitions, in the orders of
        // `finalAssignmentByMember` and of each member's `HashSet<Integer>`.
        for k in by_member.keys() {
            let list = &mut mine[self.slot[k as usize] as usize];
            let q = self.quota[k as usize] as usize;
            if list.len() <= q {
                continue;
            }
            let hashes: Vec<u32> = list.iter().map(|&e| spread(keys[e as usize])).collect();
            let walk = Table::put_all(DEFAULT, &hashes, |i| int_ord(keys[list[i as usize] as usize]));
            let mut gone: Vec<u32> = walk[..list.len() - q].iter().map(|&i| list[i as usize]).collect();
            for &e in &gone {
                holders[e as usize].retain(|&m| m != k);
            }
            gone.sort_unstable();
            list.retain(|e| gone.binary_search(e).is_err());
        }

        // Over-shared partitions lose holders.
        for e in kept_order {
            let have = &holders[e as usize];
            if have.len() <= sharing {
                continue;
            }
            let peak = peaks.get(&e).map_or(&have[..], |p| &p[..]);
            for m in simple::first_in_set_order(have, peak, have.len() - sharing) {
                holders[e as usize].retain(|&x| x != m);
                mine[self.slot[m as usize] as usize].retain(|&x| x != e);
            }
        }

        // The assignable partitions join the map; the rest is handed out.
        for &p in parts {
            entry(p, &mut keys, &mut holders, &mut by_partition);
        }
        let walk = by_partition.keys();
        let mut held: Vec<u32> = (0..self.slot.len())
            .map(|k| match self.slot[k] {
                NONE => 0,
                s => mine[s as usize].len() as u32,
            })
            .collect();
        let unfilled: Vec<u32> =
            subscribers.iter().copied().filter(|&k| held[k as usize] < self.quota[k as usize]).collect();
        simple::fill(&walk, &holders, sharing, unfilled, &mut held, &self.quota, |e, m| {
            if self.slot[m as usize] == NONE {
                self.slot[m as usize] = mine.len() as u32;
                owners.push(m);
                mine.push(Vec::new());
            }
            mine[self.slot[m as usize] as usize].push(e);
        })?;

        for (&k, list) in owners.iter().zip(&mine) {
            out[k as usize].extend(list.iter().map(|&e| (topic, keys[e as usize])));
            self.slot[k as usize] = NONE;
        }
        for &k in subscribers {
            self.quota[k as usize] = 0;
        }
        Ok(())
    }
}
