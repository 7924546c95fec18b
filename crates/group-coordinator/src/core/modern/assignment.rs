//! Set operations on assignments: per topic id (ascending), partitions (ascending).
//!
//! The coordinator keeps every member's assigned, pending and target partitions
//! as a [`MemberTarget`] (the assignors' output type), so a target goes from the
//! assignor into the group without conversion.

use group_assignors::server::MemberTarget;
use group_types::{TopicId, TopicIdPartitions};

/// A member's partitions.
pub(crate) type Assignment = MemberTarget;

/// Partitions from the wire (any order, duplicates allowed), normalised.
pub(crate) fn from_wire(parts: &[TopicIdPartitions]) -> Assignment {
    let mut topics: Vec<(TopicId, Vec<i32>)> = parts
        .iter()
        .filter(|t| !t.partitions.is_empty())
        .map(|t| (t.topic_id, t.partitions.clone()))
        .collect();
    topics.sort_by_key(|t| t.0);
    let mut out: Vec<(TopicId, Vec<i32>)> = Vec::with_capacity(topics.len());
    for (topic, partitions) in topics {
        match out.last_mut() {
            Some((last, ps)) if *last == topic => ps.extend(partitions),
            _ => out.push((topic, partitions)),
        }
    }
    for (_, ps) in &mut out {
        ps.sort_unstable();
        ps.dedup();
    }
    MemberTarget { topics: out }
}

/// The wire form, topics by id.
pub(crate) fn to_wire(a: &Assignment) -> Vec<TopicIdPartitions> {
    a.topics.iter().map(|(t, ps)| TopicIdPartitions { topic_id: *t, partitions: ps.clone() }).collect()
}

/// True when `a` holds partition `p` of `topic`.
pub(crate) fn contains(a: &Assignment, topic: TopicId, p: i32) -> bool {
    a.partitions(topic).binary_search(&p).is_ok()
}

/// Every (topic, partition) of `a`.
pub(crate) fn iter(a: &Assignment) -> impl Iterator<Item = (TopicId, i32)> + '_ {
    a.topics.iter().flat_map(|(t, ps)| ps.iter().map(move |p| (*t, *p)))
}

/// Builds an assignment from per-topic lists already in order, dropping empty ones.
pub(crate) fn from_sorted(topics: Vec<(TopicId, Vec<i32>)>) -> Assignment {
    MemberTarget { topics: topics.into_iter().filter(|(_, ps)| !ps.is_empty()).collect() }
}

/// `a ∪ b`.
pub(crate) fn union(a: &Assignment, b: &Assignment) -> Assignment {
    let mut out = Vec::with_capacity(a.topics.len().max(b.topics.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.topics.len() || j < b.topics.len() {
        match (a.topics.get(i), b.topics.get(j)) {
            (Some((ta, pa)), Some((tb, _))) if ta < tb => {
                out.push((*ta, pa.clone()));
                i += 1;
            }
            (Some((ta, _)), Some((tb, pb))) if tb < ta => {
                out.push((*tb, pb.clone()));
                j += 1;
            }
            (Some((ta, pa)), Some((_, pb))) => {
                let mut ps: Vec<i32> = pa.iter().chain(pb).copied().collect();
                ps.sort_unstable();
                ps.dedup();
                out.push((*ta, ps));
                i += 1;
                j += 1;
            }
            (Some((ta, pa)), None) => {
                out.push((*ta, pa.clone()));
                i += 1;
            }
            (None, Some((tb, pb))) => {
                out.push((*tb, pb.clone()));
                j += 1;
            }
            (None, None) => break,
        }
    }
    MemberTarget { topics: out }
}

/// The topic ids of `a` and `b` together, ascending.
pub(crate) fn topics_of(a: &Assignment, b: &Assignment) -> Vec<TopicId> {
    let mut topics: Vec<TopicId> = a.topics.iter().chain(&b.topics).map(|(t, _)| *t).collect();
    topics.sort_unstable();
    topics.dedup();
    topics
}

/// True when some partition of `a` is in `b`.
pub(crate) fn intersects(a: &Assignment, b: &Assignment) -> bool {
    iter(a).any(|(t, p)| contains(b, t, p))
}
