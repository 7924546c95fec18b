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
use super::java_order::{self, DEFAULT, Insert, spread, uuid_hash};
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
    java_order::ordered(&mut union, DEFAULT, Insert::Put, |t| spread(uuid_hash(*t)));
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

        // Partition entries in map insertion order, and who holds them.
        let mut keys: Vec<i32> = Vec::new();
        let mut index: HashMap<i32, u32> = HashMap::new();
        let mut holders: Vec<Vec<u32>> = Vec::new();
        // Members holding something of the topic, in insertion (ascending) order.
        let mut owners: Vec<u32> = Vec::new();
        let mut mine: Vec<Vec<u32>> = Vec::new();
        // Whether a `computeIfAbsent` call found its key after the last new
        // one went in, for the partition map and the member map: each call
        // may grow the table.
        let mut entry_hit = false;
        let mut owner_hit = false;
        let mut entry = |p: i32, keys: &mut Vec<i32>, holders: &mut Vec<Vec<u32>>, hit: &mut bool| -> u32 {
            *hit = true;
            *index.entry(p).or_insert_with(|| {
                *hit = false;
                keys.push(p);
                holders.push(Vec::new());
                keys.len() as u32 - 1
            })
        };

        // Keep what is held.
        for (k, old) in olds.iter().enumerate() {
            let Some(held) = old.get(topic) else { continue };
            for &p in held {
                let e = entry(p, &mut keys, &mut holders, &mut entry_hit);
                holders[e as usize].push(k as u32);
                owner_hit = self.slot[k] != NONE;
                if self.slot[k] == NONE {
                    self.slot[k] = mine.len() as u32;
                    owners.push(k as u32);
                    mine.push(Vec::new());
                }
                mine[self.slot[k] as usize].push(e);
            }
        }
        let kept = keys.len();
        let kept_hit = entry_hit;
        let peaks: HashMap<u32, Vec<u32>> = (0..kept as u32)
            .filter(|&e| holders[e as usize].len() > sharing)
            .map(|e| (e, holders[e as usize].clone()))
            .collect();

        // Members above their quota give up partitions, walked in the order
        // of the presized `HashMap<Integer, Set<Integer>>` of holders (filled
        // by `computeIfAbsent`).
        let mut walk = owners.clone();
        let owner_hashes: Vec<u32> = owners.iter().map(|&k| spread(k as i32)).collect();
        let cap =
            java_order::computed_capacity(java_order::presized(subscribers.len()), &owner_hashes, owner_hit);
        java_order::iteration_order(&mut walk, cap, Insert::Compute, |&k| spread(k as i32));
        for k in walk {
            let list = &mut mine[self.slot[k as usize] as usize];
            let q = self.quota[k as usize] as usize;
            if list.len() <= q {
                continue;
            }
            let mut set = list.clone();
            java_order::ordered(&mut set, DEFAULT, Insert::Put, |&e| spread(keys[e as usize]));
            let mut gone = set[..list.len() - q].to_vec();
            for &e in &gone {
                holders[e as usize].retain(|&m| m != k);
            }
            gone.sort_unstable();
            list.retain(|e| gone.binary_search(e).is_err());
        }

        // Over-shared partitions lose holders.
        let presized = java_order::presized(parts.len());
        for e in map_order(&keys[..kept], presized, kept_hit) {
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
            entry(p, &mut keys, &mut holders, &mut entry_hit);
        }
        let walk = map_order(&keys, presized, entry_hit);
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

/// Entries `0..keys.len()` in the order Java iterates a `HashMap<Integer, _>`
/// presized to `presized` buckets that took `keys` in order by `computeIfAbsent`.
fn map_order(keys: &[i32], presized: usize, trailing_hit: bool) -> Vec<u32> {
    let hashes: Vec<u32> = keys.iter().map(|&p| spread(p)).collect();
    let cap = java_order::computed_capacity(presized, &hashes, trailing_hit);
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    java_order::iteration_order(&mut order, cap, Insert::Compute, |&e| hashes[e as usize]);
    order
}
