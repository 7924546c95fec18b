//! ShareGroupDescribe (API key 77, KIP-932): share groups as the coordinator
//! holds them. Only version 1 exists.

use serde::{Deserialize, Serialize};

use crate::{AUTHORIZED_OPERATIONS_OMITTED, DescribedTopicPartitions, ErrorCode, GroupId, MemberId};

/// A ShareGroupDescribe request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareGroupDescribeRequest {
    /// The groups.
    pub group_ids: Vec<GroupId>,
    /// Whether to report the caller's authorized operations.
    pub include_authorized_operations: bool,
}

/// One member of a described share group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedShareMember {
    /// The member id.
    pub member_id: MemberId,
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
    /// The partitions the member holds.
    pub assignment: Vec<DescribedTopicPartitions>,
}

/// One described share group (or the error for it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedShareGroup {
    /// The outcome for this group.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: GroupId,
    /// `Empty` or `Stable` (a share group has no other state); `""` on errors.
    pub group_state: String,
    /// The group epoch.
    pub group_epoch: i32,
    /// The target assignment's epoch.
    pub assignment_epoch: i32,
    /// The share assignor's name.
    pub assignor_name: String,
    /// The members.
    pub members: Vec<DescribedShareMember>,
    /// The caller's authorized operations, or [`AUTHORIZED_OPERATIONS_OMITTED`].
    pub authorized_operations: i32,
}

impl DescribedShareGroup {
    /// The answer for a group that cannot be described.
    pub fn error(group_id: impl Into<GroupId>, error_code: ErrorCode, message: Option<String>) -> Self {
        DescribedShareGroup {
            error_code,
            error_message: message,
            group_id: group_id.into(),
            authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
            ..DescribedShareGroup::default()
        }
    }
}

/// A ShareGroupDescribe response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareGroupDescribeResponse {
    /// One entry per requested group: invalid (empty) ids first, as Kafka answers
    /// them before looking groups up, then the others in request order.
    pub groups: Vec<DescribedShareGroup>,
}
