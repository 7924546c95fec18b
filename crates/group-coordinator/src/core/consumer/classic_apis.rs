//! The classic APIs against consumer groups (§7): offset commits and fetches
//! checked against member epochs, DescribeGroups, ListGroups, DeleteGroups,
//! OffsetDelete and the classic LeaveGroup.

use std::sync::Arc;

use group_offsets::{ModernGroupRecord, Record};
use group_types::{
    DescribedGroup, ErrorCode, GroupId, GroupState, LeaveGroupRequest, LeaveGroupResponse,
    LeaveMemberResponse, ListedGroup, OffsetCommitData, OffsetFetchRequest, TopicEntries,
};

use super::group::ConsumerMember;
use super::{ConsumerGroup, epochs, subscribed_topic_names};
use crate::MetadataImage;
use crate::core::offsets::Committer;
use crate::core::{CoordinatorCore, RequestId, Response};

/// `ConsumerGroup.validateOffsetCommit` (§7.1) as Kafka 4.3 has it, for a
/// plain or a transactional commit: the member's epoch, or an older one that
/// every committed partition was assigned at or before (KIP-1251,
/// `epochs::check_commit`; `metadata_too_large` tells the partitions Kafka
/// answers before it checks them). A transactional commit's stale or newer
/// epoch is `ILLEGAL_GENERATION`, as Kafka maps it for TxnOffsetCommit before v6.
pub(crate) fn validate_offset_commit(
    cg: &ConsumerGroup,
    c: &Committer<'_>,
    image: &MetadataImage,
    metadata_too_large: impl Fn(&OffsetCommitData) -> bool,
) -> Result<(), ErrorCode> {
    if c.generation < 0 && cg.modern.members.is_empty() {
        return Ok(());
    }
    // TxnOffsetCommit does not require the member fields: they are checked
    // only when one is given.
    if c.transactional && c.generation == -1 && c.member_id.is_empty() && c.instance_id.is_none() {
        return Ok(());
    }
    let member = cg.modern.members.get(c.member_id).ok_or(ErrorCode::UnknownMemberId)?;
    if !c.transactional && !member.is_classic() && c.api_version < 9 {
        return Err(ErrorCode::UnsupportedVersion);
    }
    let stale = if member.is_classic() || c.transactional {
        ErrorCode::IllegalGeneration
    } else {
        ErrorCode::StaleMemberEpoch
    };
    if c.generation > member.member_epoch {
        return Err(stale);
    }
    if c.generation < member.member_epoch {
        return check_commit(member, c.generation, c.offsets, metadata_too_large, image).map_err(|_| stale);
    }
    Ok(())
}

/// `createAssignmentEpochValidator`: a commit with `epoch`, older than
/// `member`'s, must name only partitions the member holds (assigned or
/// pending revocation) since `epoch` or before. Every partition is checked
/// but those whose metadata is too large (answered on their own, as Kafka
/// checks them first); a topic unknown to `image` is held by no one. One
/// failing partition fails the commit, as Kafka's validator throws.
fn check_commit(
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
                epochs::epoch_of(&member.assigned, &member.assigned_epochs, id, *p).or_else(|| {
                    epochs::epoch_of(&member.pending_revocation, &member.pending_revocation_epochs, id, *p)
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

/// `ConsumerGroup.validateOffsetFetch` (§7.2): an admin or classic fetch (no
/// member id, no epoch) reads; a member's must carry its current epoch.
pub(crate) fn validate_offset_fetch(cg: &ConsumerGroup, req: &OffsetFetchRequest) -> Result<(), ErrorCode> {
    let epoch = req.member_epoch.unwrap_or(-1);
    let Some(member_id) = req.member_id.as_deref() else {
        return if epoch < 0 { Ok(()) } else { Err(ErrorCode::UnknownMemberId) };
    };
    if epoch < 0 && member_id.is_empty() {
        return Ok(());
    }
    let member = cg.modern.members.get(member_id).ok_or(ErrorCode::UnknownMemberId)?;
    if epoch != member.member_epoch {
        return Err(if member.is_classic() {
            ErrorCode::IllegalGeneration
        } else {
            ErrorCode::StaleMemberEpoch
        });
    }
    Ok(())
}

/// DescribeGroups on a consumer group (`GroupMetadataManager.describeGroups`): v6+
/// `GROUP_ID_NOT_FOUND` "not a classic group", older versions no error; state Dead.
pub(crate) fn described_as_classic(group_id: &GroupId, api_version: i16) -> DescribedGroup {
    let (error_code, error_message) = if api_version >= 6 {
        (ErrorCode::GroupIdNotFound, Some(format!("Group {group_id} is not a classic group.")))
    } else {
        (ErrorCode::None, None)
    };
    DescribedGroup {
        error_code,
        error_message,
        group_id: group_id.clone(),
        group_state: GroupState::Dead.as_str().to_owned(),
        ..DescribedGroup::default()
    }
}

/// The ListGroups entry of a consumer group (§7.4).
pub(crate) fn listed(group_id: &str, cg: &ConsumerGroup) -> ListedGroup {
    ListedGroup {
        group_id: GroupId::from(group_id),
        protocol_type: "consumer".to_owned(),
        group_state: cg.state().as_str().to_owned(),
        group_type: "consumer".to_owned(),
    }
}

/// True when the consumer group subscribes to `topic` (by name or through a
/// resolved regex): OffsetDelete answers `GROUP_SUBSCRIBED_TO_TOPIC` for it.
pub(crate) fn subscribes_to(cg: &ConsumerGroup, topic: &str) -> bool {
    subscribed_topic_names(cg).contains(topic)
}

/// The records deleting consumer group `group_id` (`createGroupTombstoneRecords`).
pub(crate) fn deletion_records(group_id: &Arc<str>, cg: &ConsumerGroup) -> Vec<Record> {
    let mut out = Vec::new();
    let id = || group_id.clone();
    for m in cg.modern.members.keys() {
        out.push(ModernGroupRecord::CurrentMemberAssignment {
            group_id: id(),
            member_id: m.clone(),
            value: None,
        });
    }
    for m in cg.modern.targets.keys() {
        out.push(ModernGroupRecord::TargetAssignmentMember {
            group_id: id(),
            member_id: m.clone(),
            value: None,
        });
    }
    out.push(ModernGroupRecord::TargetAssignmentMetadata { group_id: id(), value: None });
    for m in cg.modern.members.keys() {
        out.push(ModernGroupRecord::MemberMetadata { group_id: id(), member_id: m.clone(), value: None });
    }
    for r in cg.regexes.keys() {
        out.push(ModernGroupRecord::RegularExpression { group_id: id(), regex: r.clone(), value: None });
    }
    out.push(ModernGroupRecord::GroupMetadata { group_id: id(), value: None });
    out.into_iter().map(Record::Modern).collect()
}

impl CoordinatorCore {
    /// The classic LeaveGroup against a consumer group
    /// (`classicGroupLeaveToConsumerGroup`, §7.3): every valid identity is fenced
    /// together, with one bump.
    pub(crate) fn consumer_group_classic_leave(&mut self, rid: RequestId, req: &LeaveGroupRequest) {
        let Some(mut work) = self.take_consumer(&req.group_id) else { return };
        let mut members = Vec::with_capacity(req.members.len());
        let mut fenced: Vec<Arc<str>> = Vec::new();
        for identity in &req.members {
            let found = match identity.group_instance_id.as_deref() {
                None => work
                    .cg
                    .modern
                    .members
                    .get(identity.member_id.as_str())
                    .map(|m| m.id.clone())
                    .ok_or(ErrorCode::UnknownMemberId),
                Some(instance) => match work.cg.modern.static_members.get(instance) {
                    None => Err(ErrorCode::UnknownMemberId),
                    Some(holder) if !identity.member_id.is_empty() && **holder != *identity.member_id => {
                        Err(ErrorCode::FencedInstanceId)
                    }
                    Some(holder) => Ok(holder.clone()),
                },
            };
            let error_code = match found {
                Ok(id) => {
                    if !fenced.contains(&id) {
                        fenced.push(id);
                    }
                    ErrorCode::None
                }
                Err(code) => code,
            };
            members.push(LeaveMemberResponse {
                member_id: identity.member_id.clone(),
                group_instance_id: identity.group_instance_id.clone(),
                error_code,
            });
        }
        let response = Response::LeaveGroup(LeaveGroupResponse { error_code: ErrorCode::None, members });
        if fenced.is_empty() {
            self.abandon(work);
            self.engine.respond(rid, response);
            return;
        }
        work.removal = "left";
        self.fence_or_downgrade(&mut work, &fenced);
        self.commit_work(work, Some((rid, response)));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use group_offsets::{ClassicMemberMetadata, ConsumerMemberMetadataValue, CurrentMemberAssignmentValue};
    use group_types::ConsumerMemberState;
    use rstest::rstest;

    use super::*;
    use crate::TopicImage;
    use crate::core::offsets::Committer;
    use group_offsets::{AssignmentEpochs, ModernGroupRecord};
    use group_types::{OffsetCommitData, TopicEntries, TopicId, TopicIdPartitions};

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
}
