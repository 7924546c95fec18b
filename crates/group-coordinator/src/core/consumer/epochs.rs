//! KIP-1251 (Kafka 4.3): the epoch at which each partition was assigned to
//! a member, and the offset commits it lets through. A member whose epoch was
//! bumped may still commit with the epoch it last heard of, for a partition
//! it held since then: `assignment epoch <= commit epoch <= member epoch`
//! (`ConsumerGroup.validateOffsetCommit`, `createAssignmentEpochValidator`).
//!
//! Reconciliation carries the epochs (`CurrentAssignmentBuilder`, `reconcile.rs`):
//! a partition kept keeps its epoch, a partition revoked takes its epoch to the
//! pending revocation, a partition added takes the target assignment's epoch;
//! offset commits are checked against them in `classic_apis.rs`.

use group_offsets::{AssignmentEpochs, ModernGroupRecord};
use group_types::{TopicId, TopicIdPartitions};

use crate::core::modern::assignment::{self, Assignment};

/// The position of partition `p` of `topic` in `a`'s order (topics, then partitions).
fn index_of(a: &Assignment, topic: TopicId, p: i32) -> Option<usize> {
    let mut before = 0;
    for (t, ps) in &a.topics {
        if *t == topic {
            return ps.binary_search(&p).ok().map(|i| before + i);
        }
        before += ps.len();
    }
    None
}

/// The epoch at which `a` (with `epochs`) got partition `p` of `topic`; `None`
/// when `a` does not hold it.
pub(crate) fn epoch_of(a: &Assignment, epochs: &AssignmentEpochs, topic: TopicId, p: i32) -> Option<i32> {
    match epochs {
        // Nearly always: no position to find.
        AssignmentEpochs::Same(epoch) => assignment::contains(a, topic, p).then_some(*epoch),
        AssignmentEpochs::Runs(_) => index_of(a, topic, p).and_then(|i| epochs.get(i)),
    }
}

/// The epochs of `a`'s partitions, each given by `epoch`.
pub(crate) fn epochs_of(a: &Assignment, mut epoch: impl FnMut(TopicId, i32) -> i32) -> AssignmentEpochs {
    AssignmentEpochs::from_epochs(assignment::iter(a).map(|(t, p)| epoch(t, p)))
}

/// A record's partitions and their epochs, as the group keeps them: in order
/// and without duplicates, each partition with the epoch the record gave it
/// (the last, for a duplicate). The core writes records in that order already;
/// another writer's need not be.
pub(crate) fn from_record(
    wire: &[TopicIdPartitions],
    epochs: &AssignmentEpochs,
) -> (Assignment, AssignmentEpochs) {
    let a = assignment::from_wire(wire);
    let in_order = wire.iter().flat_map(|t| t.partitions.iter().map(move |p| (t.topic_id, *p)));
    if in_order.clone().eq(assignment::iter(&a)) {
        return (a, epochs.clone());
    }
    let count = a.len();
    let mut given: Vec<(TopicId, i32, i32)> =
        in_order.enumerate().map(|(i, (t, p))| (t, p, epochs.get(i).unwrap_or(0))).collect();
    // Stable: the last of a duplicate stays last.
    given.sort_by_key(|(t, p, _)| (*t, *p));
    given.reverse();
    given.dedup_by_key(|(t, p, _)| (*t, *p));
    given.reverse();
    debug_assert_eq!(given.len(), count);
    (a, AssignmentEpochs::from_epochs(given.into_iter().map(|(_, _, e)| e)))
}

/// Sets `record`'s epochs of the partitions it assigns to 0 and drops its
/// pending revocation: a static member leaving temporarily
/// (`ConsumerGroupMember.Builder.resetAssignedPartitionsEpochsToZero`), so that
/// its replacement holds them from epoch 0 and the old member id's commits
/// are fenced.
pub(crate) fn reset_for_static_leave(record: &mut ModernGroupRecord) {
    if let ModernGroupRecord::CurrentMemberAssignment { value: Some(v), .. } = record {
        let count = v.assigned.iter().map(|t| t.partitions.len()).sum();
        v.assigned_epochs = AssignmentEpochs::same_over(0, count);
        v.pending_revocation = Vec::new();
        v.pending_revocation_epochs = AssignmentEpochs::default();
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn topic(n: u8) -> TopicId {
        TopicId([n; 16])
    }

    proptest! {
        /// Whatever order a record lists its partitions in, each keeps the
        /// epoch the record gave it.
        #[test]
        fn a_record_in_any_order_keeps_each_partitions_epoch(
            given in proptest::collection::vec((1..3u8, 0..4i32, 0..5i32), 0..8),
        ) {
            let wire: Vec<TopicIdPartitions> =
                given.iter().map(|(t, p, _)| TopicIdPartitions { topic_id: topic(*t), partitions: vec![*p] }).collect();
            let epochs = AssignmentEpochs::from_epochs(given.iter().map(|(_, _, e)| *e));
            let (a, kept) = from_record(&wire, &epochs);
            prop_assert!(kept.fits(a.len()));
            for (t, p) in assignment::iter(&a) {
                let last = given.iter().rev().find(|(gt, gp, _)| topic(*gt) == t && *gp == p).map(|g| g.2);
                prop_assert_eq!(epoch_of(&a, &kept, t, p), last);
            }
            prop_assert_eq!(epoch_of(&a, &kept, topic(9), 0), None);
        }
    }
}
