//! ConsumerGroupDescribe (`ConsumerGroup.asDescribedGroup`, §1.5) and snapshots.

use group_types::{
    AUTHORIZED_OPERATIONS_OMITTED, ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
    DescribedConsumerGroup, DescribedConsumerMember, DescribedTopicPartitions, ErrorCode, GroupId,
    GroupInstanceId, MemberId,
};

use super::group::ConsumerGroup;
use super::topics;
use crate::core::modern::assignment::{self, Assignment};
use crate::core::{CoordinatorCore, RequestId, Response};
use crate::snapshot::{ConsumerGroupSnapshot, ConsumerMemberSnapshot};
use crate::{MetadataImage, TopicImage};

/// Partitions with their topic names; topics no longer in the image are dropped
/// (`ConsumerGroupMember.topicPartitionsFromMap`).
fn described(a: &Assignment, image: &MetadataImage) -> Vec<DescribedTopicPartitions> {
    let mut out: Vec<DescribedTopicPartitions> = a
        .topics
        .iter()
        .filter_map(|(id, ps)| {
            image.topic_by_id(*id).map(|t: &std::sync::Arc<TopicImage>| DescribedTopicPartitions {
                topic_id: *id,
                topic_name: t.name.to_string(),
                partitions: ps.clone(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.topic_name.cmp(&b.topic_name));
    out
}

impl CoordinatorCore {
    /// ConsumerGroupDescribe, from committed state.
    pub(crate) fn consumer_group_describe(&mut self, rid: RequestId, r: ConsumerGroupDescribeRequest) {
        let enabled = self.engine.config.consumer.enabled;
        let groups = r
            .group_ids
            .iter()
            .map(|id| {
                if !enabled {
                    return DescribedConsumerGroup::error(id.clone(), ErrorCode::UnsupportedVersion, None);
                }
                if id.is_empty() {
                    return DescribedConsumerGroup::error("", ErrorCode::InvalidGroupId, None);
                }
                match self.committed_consumer_group(id) {
                    None => DescribedConsumerGroup::error(
                        id.clone(),
                        ErrorCode::GroupIdNotFound,
                        Some(format!("Group {id} not found.")),
                    ),
                    Some(None) => DescribedConsumerGroup::error(
                        id.clone(),
                        ErrorCode::GroupIdNotFound,
                        Some(format!("Group {id} is not a consumer group.")),
                    ),
                    Some(Some(cg)) => self.describe_one(id, &cg),
                }
            })
            .collect();
        self.engine.respond(rid, Response::ConsumerGroupDescribe(ConsumerGroupDescribeResponse { groups }));
    }

    fn describe_one(&self, id: &GroupId, cg: &ConsumerGroup) -> DescribedConsumerGroup {
        let image = &self.engine.image;
        let configured = &self.engine.config.consumer.assignors;
        let assignor = topics::preferred_assignor(cg.modern.members.values_any_order(), configured)
            .unwrap_or_else(|| configured[0].clone());
        DescribedConsumerGroup {
            error_code: ErrorCode::None,
            error_message: None,
            group_id: id.clone(),
            group_state: cg.state().as_str().to_owned(),
            group_epoch: cg.modern.group_epoch,
            assignment_epoch: cg.modern.assignment_epoch,
            assignor_name: assignor,
            members: cg
                .modern
                .members
                .values()
                .map(|m| DescribedConsumerMember {
                    member_id: MemberId::from(&*m.id),
                    instance_id: m.meta.instance_id().map(GroupInstanceId::from),
                    rack_id: m.meta.rack_id().map(str::to_owned),
                    member_epoch: m.member_epoch,
                    client_id: m.meta.client_id.to_string(),
                    client_host: m.meta.client_host.to_string(),
                    subscribed_topic_names: m.meta.subscribed_topic_names.to_vec(),
                    subscribed_topic_regex: m.regex().unwrap_or("").to_owned(),
                    assignment: described(&m.assigned, image),
                    target_assignment: described(cg.target(&m.id), image),
                    member_type: if m.is_classic() { 0 } else { 1 },
                })
                .collect(),
            authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
        }
    }

    /// A snapshot of consumer group `group_id` as it is now (committed or not).
    pub fn consumer_group(&self, group_id: &str) -> Option<ConsumerGroupSnapshot> {
        let cg = self.consumer_group_ref(group_id)?;
        Some(ConsumerGroupSnapshot {
            group_id: group_id.to_owned(),
            state: cg.state(),
            group_epoch: cg.modern.group_epoch,
            assignment_epoch: cg.modern.assignment_epoch,
            metadata_hash: cg.modern.metadata_hash,
            preferred_assignor: topics::preferred_assignor(
                cg.modern.members.values(),
                &self.engine.config.consumer.assignors,
            ),
            subscription_type: cg.subscription_type(),
            members: cg
                .modern
                .members
                .values()
                .map(|m| ConsumerMemberSnapshot {
                    member_id: m.id.to_string(),
                    member_epoch: m.member_epoch,
                    previous_member_epoch: m.previous_member_epoch,
                    state: m.state,
                    metadata: m.meta.to_value(),
                    assigned: assignment::to_wire(&m.assigned),
                    pending_revocation: assignment::to_wire(&m.pending_revocation),
                    assigned_epochs: m.assigned_epochs.clone(),
                    pending_revocation_epochs: m.pending_revocation_epochs.clone(),
                    target: cg.modern.targets.get(&m.id).map(|t| assignment::to_wire(t)),
                    session_deadline_ms: m.session_deadline,
                })
                .collect(),
            static_members: cg
                .modern
                .static_members
                .iter()
                .map(|(i, m)| (i.clone(), m.to_string()))
                .collect(),
            regexes: cg.regexes.iter().map(|(r, v)| (r.to_string(), v.topics.clone())).collect(),
        })
    }
}
