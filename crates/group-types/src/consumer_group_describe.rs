//! ConsumerGroupDescribe (API key 69): consumer groups as the coordinator holds
//! them (`kip848-semantics.md` §1.5).

use serde::{Deserialize, Serialize};

use crate::{ErrorCode, GroupId, GroupInstanceId, MemberId, TopicId};

/// Kafka's "authorized operations not requested" marker (`Integer.MIN_VALUE`).
pub const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;

/// A ConsumerGroupDescribe request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ConsumerGroupDescribeRequest {
    /// The request's version (v1 adds the member type).
    pub api_version: i16,
    /// The groups.
    pub group_ids: Vec<GroupId>,
    /// Whether to report the caller's authorized operations.
    pub include_authorized_operations: bool,
}

/// Partitions of one topic, with its id and name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedTopicPartitions {
    /// The topic id.
    pub topic_id: TopicId,
    /// Its name.
    pub topic_name: String,
    /// Partition indices, ascending.
    pub partitions: Vec<i32>,
}

/// One member of a described consumer group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedConsumerMember {
    /// The member id.
    pub member_id: MemberId,
    /// The static instance id.
    pub instance_id: Option<GroupInstanceId>,
    /// The rack.
    pub rack_id: Option<String>,
    /// The member epoch.
    pub member_epoch: i32,
    /// The client id.
    pub client_id: String,
    /// The client host.
    pub client_host: String,
    /// Topics subscribed by name.
    pub subscribed_topic_names: Vec<String>,
    /// The regex, `""` when none.
    pub subscribed_topic_regex: String,
    /// The partitions the member owns now.
    pub assignment: Vec<DescribedTopicPartitions>,
    /// Its target assignment.
    pub target_assignment: Vec<DescribedTopicPartitions>,
    /// v1+: 0 classic-protocol member, 1 consumer-protocol member, -1 unknown.
    pub member_type: i8,
}

/// One described group (or the error for it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedConsumerGroup {
    /// The outcome for this group.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: GroupId,
    /// `Empty`, `Assigning`, `Reconciling` or `Stable`; `""` on errors.
    pub group_state: String,
    /// The group epoch.
    pub group_epoch: i32,
    /// The target assignment's epoch.
    pub assignment_epoch: i32,
    /// The group's preferred server assignor.
    pub assignor_name: String,
    /// The members.
    pub members: Vec<DescribedConsumerMember>,
    /// The caller's authorized operations, or [`AUTHORIZED_OPERATIONS_OMITTED`].
    pub authorized_operations: i32,
}

impl DescribedConsumerGroup {
    /// The answer for a group that cannot be described.
    pub fn error(group_id: impl Into<GroupId>, error_code: ErrorCode, message: Option<String>) -> Self {
        DescribedConsumerGroup {
            error_code,
            error_message: message,
            group_id: group_id.into(),
            authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
            ..DescribedConsumerGroup::default()
        }
    }
}

/// A ConsumerGroupDescribe response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ConsumerGroupDescribeResponse {
    /// One entry per requested group, in request order (an empty id first, as Kafka
    /// answers it before looking groups up).
    pub groups: Vec<DescribedConsumerGroup>,
}
