//! ShareGroupDescribe (`GroupMetadataManager.shareGroupDescribe`,
//! `ShareGroup.asDescribedGroup`) and the share group's snapshot.

use group_types::{
    AUTHORIZED_OPERATIONS_OMITTED, DescribedShareGroup, DescribedShareMember, DescribedTopicPartitions,
    ErrorCode, GroupId, ShareGroupDescribeRequest, ShareGroupDescribeResponse,
};

use super::group::ShareGroup;
use crate::core::modern::assignment;
use crate::core::undo::Committed;
use crate::core::{CoordinatorCore, GroupKind, RequestId, Response};
use crate::{MetadataImage, ShareGroupSnapshot, ShareMemberSnapshot};

impl CoordinatorCore {
    /// ShareGroupDescribe of this partition's groups among the request's, from
    /// committed state: an empty id first (`INVALID_GROUP_ID`), then the rest in
    /// request order.
    pub(crate) fn share_group_describe(&mut self, rid: RequestId, req: ShareGroupDescribeRequest) {
        let mut groups = Vec::with_capacity(req.group_ids.len());
        if !self.engine.config.share.enabled {
            let refused = req
                .group_ids
                .iter()
                .map(|id| DescribedShareGroup::error(id.clone(), ErrorCode::UnsupportedVersion, None));
            groups.extend(refused);
            self.engine.respond(rid, Response::ShareGroupDescribe(ShareGroupDescribeResponse { groups }));
            return;
        }
        for id in req.group_ids.iter().filter(|id| id.is_empty()) {
            groups.push(DescribedShareGroup::error(id.clone(), ErrorCode::InvalidGroupId, None));
        }
        for id in req.group_ids.iter().filter(|id| !id.is_empty()) {
            groups.push(self.described_share_group(id));
        }
        self.engine.respond(rid, Response::ShareGroupDescribe(ShareGroupDescribeResponse { groups }));
    }

    fn described_share_group(&self, id: &GroupId) -> DescribedShareGroup {
        let not_found = |message: String| {
            DescribedShareGroup::error(id.clone(), ErrorCode::GroupIdNotFound, Some(message))
        };
        match self.committed_view(id.as_str()) {
            None => not_found(format!("Group {id} not found.")),
            Some(Committed::Share(g)) => {
                described(id, &g, &self.engine.image, &self.engine.config.share.assignor)
            }
            Some(_) => not_found(format!("Group {id} is not a share group.")),
        }
    }

    /// A read-only copy of share group `group_id`, `None` when it is not one.
    pub fn share_group(&self, group_id: &str) -> Option<ShareGroupSnapshot> {
        let g = self.groups.get(group_id).and_then(GroupKind::share)?;
        Some(ShareGroupSnapshot {
            group_id: group_id.to_owned(),
            state: g.state_name(),
            group_epoch: g.modern.group_epoch,
            assignment_epoch: g.modern.assignment_epoch,
            metadata_hash: g.modern.metadata_hash,
            members: g
                .modern
                .members
                .values()
                .map(|m| ShareMemberSnapshot {
                    member_id: m.id.to_string(),
                    member_epoch: m.member_epoch,
                    previous_member_epoch: m.previous_member_epoch,
                    rack_id: m.rack_id.clone(),
                    client_id: m.client_id.clone(),
                    client_host: m.client_host.clone(),
                    subscribed_topic_names: m.subscribed_topic_names.clone(),
                    assigned: assignment::to_wire(&m.assigned),
                    target: g.modern.targets.get(&m.id).map(|t| assignment::to_wire(t)),
                })
                .collect(),
            share_state: g.share_state.as_deref().map(|s| s.value()),
        })
    }
}

/// `ShareGroup.asDescribedGroup`: members in id order, each with what it holds.
fn described(id: &GroupId, g: &ShareGroup, image: &MetadataImage, assignor: &str) -> DescribedShareGroup {
    let members = g
        .modern
        .members
        .values()
        .map(|m| DescribedShareMember {
            member_id: m.id.as_ref().into(),
            rack_id: m.rack_id.clone(),
            member_epoch: m.member_epoch,
            client_id: m.client_id.clone(),
            client_host: m.client_host.clone(),
            subscribed_topic_names: m.subscribed_topic_names.clone(),
            assignment: m
                .assigned
                .topics
                .iter()
                .map(|(topic, partitions)| DescribedTopicPartitions {
                    topic_id: *topic,
                    topic_name: image.topic_by_id(*topic).map_or_else(String::new, |t| t.name.to_string()),
                    partitions: partitions.clone(),
                })
                .collect(),
        })
        .collect();
    DescribedShareGroup {
        error_code: ErrorCode::None,
        error_message: None,
        group_id: id.clone(),
        group_state: g.state_name().to_owned(),
        group_epoch: g.modern.group_epoch,
        assignment_epoch: g.modern.assignment_epoch,
        assignor_name: assignor.to_owned(),
        members,
        authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
    }
}
