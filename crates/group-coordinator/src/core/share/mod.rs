//! KIP-932 share groups: a third kind of group (`GroupKind::Share`), a peer of
//! the classic and consumer kinds, built on what the modern kinds share
//! (`core/modern/`, Kafka's `ModernGroup` under `ShareGroup`).
//!
//! A share group changes, as a consumer group does, only by replaying its
//! records (`GroupMetadataManager.replay` for the `ShareGroup*` records), so
//! loading one is replaying its records. What is here: the group as its records
//! describe it (members, targets, epochs, and which share partitions are
//! initializing, initialized or being deleted at the share coordinator), its
//! replay, and what the other kinds' APIs answer about it (a share group is not
//! a classic or consumer group: `ShareGroup.validateOffsetCommit` and friends).

mod delete;
mod describe;
mod group;
mod heartbeat;
mod offsets;
mod state;

pub(crate) use self::delete::ParkedDelete;
pub(crate) use self::group::{ShareChange, ShareGroup};
pub(crate) use self::heartbeat::validate_share_heartbeat;
pub(crate) use self::offsets::{
    ParkedOffsetsAlter, ParkedOffsetsDelete, ParkedOffsetsDescribe, alter_offsets_error,
    delete_offsets_error, describe_offsets_error, describe_refusal_message,
};

use group_offsets::{ModernGroupRecord, Record};
use group_types::{GroupId, ListedGroup};
use std::sync::Arc;

impl crate::core::CoordinatorCore {
    /// Runs `f` as one step at `now_ms` outside any request (a persister's
    /// answer), returning its effects, and leaving those of the step it may be
    /// called within untouched.
    pub(crate) fn share_step(&mut self, now_ms: i64, f: impl FnOnce(&mut Self)) -> crate::core::Effects {
        let mut out = crate::core::Effects::default();
        std::mem::swap(&mut self.engine.fx, &mut out);
        self.begin(now_ms);
        f(self);
        self.end();
        std::mem::swap(&mut self.engine.fx, &mut out);
        out
    }
}

/// The ListGroups entry of a share group (KIP-1043: type `share`, protocol
/// type `share`, state Empty or Stable).
pub(crate) fn listed(group_id: &str, g: &ShareGroup) -> ListedGroup {
    ListedGroup {
        group_id: GroupId::from(group_id),
        protocol_type: "share".to_owned(),
        group_state: g.state_name().to_owned(),
        group_type: "share".to_owned(),
    }
}

/// The records deleting share group `group_id` (`ShareGroup.createGroupTombstoneRecords`):
/// every member's three records, the assignment epoch, the share-state record
/// and the group epoch last.
pub(crate) fn deletion_records(group_id: &Arc<str>, g: &ShareGroup) -> Vec<Record> {
    let id = || group_id.clone();
    let mut out = Vec::new();
    for m in g.modern.members.keys() {
        out.push(ModernGroupRecord::ShareCurrentMemberAssignment {
            group_id: id(),
            member_id: m.clone(),
            value: None,
        });
    }
    for m in g.modern.targets.keys() {
        out.push(ModernGroupRecord::ShareTargetAssignmentMember {
            group_id: id(),
            member_id: m.clone(),
            value: None,
        });
    }
    out.push(ModernGroupRecord::ShareTargetAssignmentMetadata { group_id: id(), value: None });
    for m in g.modern.members.keys() {
        out.push(ModernGroupRecord::ShareMemberMetadata {
            group_id: id(),
            member_id: m.clone(),
            value: None,
        });
    }
    out.push(ModernGroupRecord::ShareStatePartitionMetadata { group_id: id(), value: None });
    out.push(ModernGroupRecord::ShareGroupMetadata { group_id: id(), value: None });
    out.into_iter().map(Record::Modern).collect()
}

#[cfg(test)]
mod offsets_tests;
#[cfg(test)]
mod tests;
