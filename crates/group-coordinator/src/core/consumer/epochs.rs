//! KIP-1251 (Kafka 4.3): the epoch at which each partition was assigned to
//! a member, and the offset commits it lets through. A member whose epoch was
//! bumped may still commit with the epoch it last heard of, for a partition
//! it held since then: `assignment epoch <= commit epoch <= member epoch`
//! (`ConsumerGroup.validateOffsetCommit`, `createAssignmentEpochValidator`).
//!
//! Reconciliation carries the epochs (`CurrentAssignmentBuilder`): a partition
//! kept keeps its epoch, a partition revoked takes its epoch to the pending
//! revocation, a partition added takes the target assignment's epoch.

use group_offsets::{AssignmentEpochs, ModernGroupRecord};
use group_types::{ErrorCode, OffsetCommitData, TopicEntries, TopicId, TopicIdPartitions};

use super::group::ConsumerMember;
use crate::MetadataImage;
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

/// `createAssignmentEpochValidator`: a commit with `epoch`, older than
/// `member`'s, must name only partitions the member holds (assigned or
/// pending revocation) since `epoch` or before. Every partition is checked
/// but those whose metadata is too large (answered on their own, as Kafka
/// checks them first); a topic unknown to `image` is held by no one. One
/// failing partition fails the commit, as Kafka's validator throws.
pub(crate) fn check_commit(
    member: &ConsumerMember,
    epoch: i32,
    offsets: &[TopicEntries<OffsetCommitData>],
    metadata_too_large: impl Fn(&OffsetCommitData) -> bool,
    image: &MetadataImage,
) -> Result<(), ErrorCode> {
    let stale = if member.is_classic() { ErrorCode::IllegalGeneration } else { ErrorCode::StaleMemberEpoch };
    for TopicEntries { topic, partitions } in offsets {
        let id = image.topic(topic).map(|t| t.id);
        for (p, data) in partitions {
            if metadata_too_large(data) {
                continue;
            }
            let held = id.and_then(|id| {
                epoch_of(&member.assigned, &member.assigned_epochs, id, *p).or_else(|| {
                    epoch_of(&member.pending_revocation, &member.pending_revocation_epochs, id, *p)
                })
            });
            match held {
                Some(assigned_at) if assigned_at <= epoch => {}
                _ => return Err(stale),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use group_offsets::{ClassicMemberMetadata, ConsumerMemberMetadataValue, CurrentMemberAssignmentValue};
    use group_types::ConsumerMemberState;
    use proptest::prelude::*;
    use rstest::rstest;

    use super::super::ConsumerGroup;
    use super::super::classic_apis::validate_offset_commit;
    use super::*;
    use crate::TopicImage;
    use crate::core::offsets::Committer;

    const FOO: TopicId = TopicId::from_u128(0xf00);
    const BAR: TopicId = TopicId::from_u128(0xba4);

    /// A group whose member "m" is at epoch 10 with foo-0 assigned (or pending
    /// revocation) since epoch 7 and foo-1 the other way, as
    /// `ConsumerGroupTest.testValidateOffsetCommitWithEpochValidation` sets it up.
    fn group(classic: bool, pending: bool) -> ConsumerGroup {
        let mut cg = ConsumerGroup::new(Arc::from("g"), 0);
        let meta = ConsumerMemberMetadataValue {
            classic: classic.then(ClassicMemberMetadata::default),
            ..ConsumerMemberMetadataValue::default()
        };
        let (g, m): (Arc<str>, Arc<str>) = (Arc::from("g"), Arc::from("m"));
        cg.replay(
            &ModernGroupRecord::MemberMetadata {
                group_id: g.clone(),
                member_id: m.clone(),
                value: Some(Box::new(meta)),
            },
            None,
        );
        let (first, second) =
            (vec![TopicIdPartitions::new(FOO, [0])], vec![TopicIdPartitions::new(FOO, [1])]);
        let (assigned, revoking) = if pending { (second, first) } else { (first, second) };
        let (assigned_epochs, pending_revocation_epochs) = if pending {
            (AssignmentEpochs::Same(9), AssignmentEpochs::Same(7))
        } else {
            (AssignmentEpochs::Same(7), AssignmentEpochs::Same(9))
        };
        let value = CurrentMemberAssignmentValue {
            member_epoch: 10,
            previous_member_epoch: 9,
            state: ConsumerMemberState::UnrevokedPartitions,
            assigned,
            pending_revocation: revoking,
            assigned_epochs,
            pending_revocation_epochs,
        };
        cg.replay(
            &ModernGroupRecord::CurrentMemberAssignment { group_id: g, member_id: m, value: Some(value) },
            None,
        );
        cg
    }

    fn image() -> MetadataImage {
        MetadataImage::new(1, [TopicImage::new(FOO, "foo", 3), TopicImage::new(BAR, "bar", 1)])
    }

    /// Kafka's `ConsumerGroupTest` KIP-1251 cases: (transactional, version) x
    /// (assigned, pending revocation) x (consumer, classic member) x epochs,
    /// foo-0 held since epoch 7 by a member at epoch 10.
    #[rstest]
    fn commits_are_checked_against_assignment_epochs(
        #[values((false, 9), (false, 10), (false, 8), (true, 3), (true, 5))] request: (bool, i16),
        #[values(false, true)] pending: bool,
        #[values(false, true)] classic: bool,
        #[values(
            (11, "foo", 0, false),
            (10, "foo", 0, true),
            (10, "bar", 0, true),
            (7, "foo", 0, true),
            (6, "foo", 0, false),
            (7, "foo", 2, false),
            (7, "bar", 0, false),
            (7, "gone", 0, false),
            (9, "foo", 1, true),
            (8, "foo", 1, false)
        )]
        commit: (i32, &str, i32, bool),
    ) {
        let (transactional, api_version) = request;
        let (epoch, topic, partition, accepted) = commit;
        let cg = group(classic, pending);
        let offsets = vec![TopicEntries {
            topic: topic.to_owned(),
            partitions: vec![(partition, OffsetCommitData::new(1))],
        }];
        let committer = Committer {
            member_id: "m",
            instance_id: None,
            generation: epoch,
            api_version,
            transactional,
            offsets: &offsets,
        };
        let got = validate_offset_commit(&cg, &committer, &image(), |_| false);
        let expected = if !transactional && !classic && api_version < 9 {
            // `OffsetCommit version 9 or above must be used by members using the consumer group protocol`.
            Err(ErrorCode::UnsupportedVersion)
        } else if accepted {
            Ok(())
        } else if classic || transactional {
            Err(ErrorCode::IllegalGeneration)
        } else {
            Err(ErrorCode::StaleMemberEpoch)
        };
        assert_eq!(got, expected);
    }

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
