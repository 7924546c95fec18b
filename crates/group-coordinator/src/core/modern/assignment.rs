//! Set operations on assignments: per topic id (ascending), partitions (ascending).
//!
//! The coordinator keeps every member's assigned, pending and target partitions
//! as a [`MemberTarget`] (the assignors' output type), so a target goes from the
//! assignor into the group without conversion. A group holds them as [`Held`]:
//! a settled member's assignment is its target, and the two share one copy.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use group_assignors::server::MemberTarget;
use group_types::{TopicId, TopicIdPartitions};

/// A member's partitions.
pub(crate) type Assignment = MemberTarget;

/// An assignment as a group holds it: shared, so that a member's current
/// assignment and its target, equal once it has reconciled, are one
/// allocation (`Arc`) rather than two copies; nothing at all when empty.
/// Compared, printed and read as the [`Assignment`] it holds.
#[derive(Clone, Default)]
pub(crate) struct Held(Option<Arc<Assignment>>);

/// What an empty [`Held`] reads as.
static EMPTY: Assignment = Assignment { topics: Vec::new() };

impl Held {
    /// No partitions.
    pub(crate) const NONE: Held = Held(None);

    /// `a`, or `like` when it holds the same partitions (shared, not copied).
    pub(crate) fn like(a: Assignment, like: Option<&Held>) -> Held {
        match like {
            Some(held) if **held == a => held.clone(),
            _ => Held::from(a),
        }
    }

    /// True when `a` and `b` are one copy (or both empty).
    #[cfg(test)]
    pub(crate) fn shares(a: &Held, b: &Held) -> bool {
        match (&a.0, &b.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

impl From<Assignment> for Held {
    fn from(a: Assignment) -> Held {
        Held((!a.topics.is_empty()).then(|| Arc::new(a)))
    }
}

impl Deref for Held {
    type Target = Assignment;

    fn deref(&self) -> &Assignment {
        self.0.as_deref().unwrap_or(&EMPTY)
    }
}

impl PartialEq for Held {
    fn eq(&self, other: &Held) -> bool {
        **self == **other
    }
}

impl Eq for Held {}

impl fmt::Debug for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn assignment() -> impl Strategy<Value = Assignment> {
        proptest::collection::vec((1..3u8, 0..3i32), 0..4).prop_map(|ps| {
            from_wire(
                &ps.iter()
                    .map(|(t, p)| TopicIdPartitions { topic_id: TopicId([*t; 16]), partitions: vec![*p] })
                    .collect::<Vec<_>>(),
            )
        })
    }

    proptest! {
        /// A held assignment reads, compares and prints as the assignment it
        /// holds, and is one copy with the one it was made like when equal.
        #[test]
        fn reads_as_the_assignment_it_holds(a in assignment(), b in assignment()) {
            let like = Held::from(b.clone());
            let held = Held::like(a.clone(), Some(&like));
            prop_assert_eq!(&*held, &a);
            prop_assert_eq!(held == like, a == b);
            prop_assert_eq!(format!("{held:?}"), format!("{a:?}"));
            prop_assert_eq!(Held::shares(&held, &like), a == b);
            prop_assert_eq!(Held::from(a.clone()), Held::like(a, None));
        }
    }
}
