//! A share group as its records describe it (Kafka's `ShareGroup` and
//! `ShareGroupMember`), and [`ShareGroup::replay`].

use std::sync::Arc;

use group_offsets::{ModernGroupRecord, ShareStatePartitionMetadataValue};
use group_types::ConsumerMemberState;

use crate::core::modern::assignment::{self, Held};
use crate::core::modern::{Keyed, ModernGroup, ModernMember, ModernState};
use crate::core::types::WriteId;

/// One member of a share group (`ShareGroupMember`).
#[derive(Debug, Clone)]
pub(crate) struct ShareMember {
    pub(crate) id: Arc<str>,
    pub(crate) member_epoch: i32,
    pub(crate) previous_member_epoch: i32,
    pub(crate) state: ConsumerMemberState,
    pub(crate) rack_id: Option<String>,
    pub(crate) client_id: String,
    pub(crate) client_host: String,
    /// Sorted.
    pub(crate) subscribed_topic_names: Vec<String>,
    /// What it holds: a share member moves to its target at once.
    pub(crate) assigned: Held,
}

impl ShareMember {
    fn new(id: Arc<str>) -> ShareMember {
        ShareMember {
            id,
            member_epoch: 0,
            previous_member_epoch: 0,
            state: ConsumerMemberState::Stable,
            rack_id: None,
            client_id: String::new(),
            client_host: String::new(),
            subscribed_topic_names: Vec::new(),
            assigned: Held::NONE,
        }
    }
}

impl Keyed for ShareMember {
    fn id(&self) -> &Arc<str> {
        &self.id
    }
}

impl ModernMember for ShareMember {
    fn member_epoch(&self) -> i32 {
        self.member_epoch
    }

    fn is_stable(&self) -> bool {
        self.state == ConsumerMemberState::Stable
    }
}

/// A share group.
#[derive(Debug, Clone, Default)]
pub(crate) struct ShareGroup {
    pub(crate) modern: ModernGroup<ShareMember>,
    /// Which share partitions the share coordinator holds state for
    /// (`ShareGroupStatePartitionMetadata`); `None` before the first record.
    pub(crate) share_state: Option<Box<ShareStatePartitionMetadataValue>>,
    /// The outstanding write of this group's records, if any.
    pub(crate) barrier: Option<WriteId>,
}

impl ShareGroup {
    /// `Empty` or `Stable`: a share group has no assigning or reconciling
    /// state to show (`ShareGroup.ShareGroupState`).
    pub(crate) fn state_name(&self) -> &'static str {
        match self.modern.state() {
            ModernState::Empty => "Empty",
            _ => "Stable",
        }
    }

    /// Applies one record (`GroupMetadataManager.replay` for the share
    /// records). Group-level deletion (the group epoch's tombstone) is the
    /// caller's: it removes the group. Records of another kind change nothing.
    pub(crate) fn replay(&mut self, record: &ModernGroupRecord) {
        match record {
            ModernGroupRecord::ShareGroupMetadata { value: Some(v), .. } => {
                self.modern.replay_group_epoch(v.epoch, v.metadata_hash);
            }
            ModernGroupRecord::ShareMemberMetadata { member_id, value, .. } => match value {
                Some(v) => {
                    let member = self
                        .modern
                        .members
                        .get_or_insert_with(member_id, || ShareMember::new(member_id.clone()));
                    member.rack_id = v.rack_id.clone();
                    member.client_id = v.client_id.clone();
                    member.client_host = v.client_host.clone();
                    member.subscribed_topic_names = v.subscribed_topic_names.clone();
                }
                None => {
                    self.modern.members.remove(member_id);
                }
            },
            ModernGroupRecord::ShareTargetAssignmentMetadata { value, .. } => {
                self.modern.replay_assignment_epoch(value.unwrap_or(-1));
            }
            ModernGroupRecord::ShareTargetAssignmentMember { member_id, value, .. } => {
                let assigned = self.modern.members.get(member_id).map(|m| &m.assigned);
                let target = value.as_deref().map(|v| Held::like(assignment::from_wire(v), assigned));
                self.modern.replay_target(member_id, target);
            }
            ModernGroupRecord::ShareCurrentMemberAssignment { member_id, value, .. } => {
                let target = self.modern.targets.get(member_id).cloned();
                let member =
                    self.modern.members.get_or_insert_with(member_id, || ShareMember::new(member_id.clone()));
                match value {
                    Some(v) => {
                        member.member_epoch = v.member_epoch;
                        member.previous_member_epoch = v.previous_member_epoch;
                        member.state = v.state;
                        member.assigned = Held::like(assignment::from_wire(&v.assigned), target.as_ref());
                    }
                    None => {
                        member.member_epoch = -1;
                        member.previous_member_epoch = -1;
                        member.state = ConsumerMemberState::Stable;
                        member.assigned = Held::NONE;
                    }
                }
            }
            ModernGroupRecord::ShareStatePartitionMetadata { value, .. } => {
                self.share_state = value.clone();
            }
            _ => {}
        }
    }
}
