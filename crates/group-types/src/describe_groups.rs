//! DescribeGroups (API key 15): a group's state, protocol and members, for admin tools.

use serde::{Deserialize, Serialize};

use crate::{ErrorCode, GroupId, GroupInstanceId, MemberId};

/// A DescribeGroups request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribeGroupsRequest {
    /// The groups to describe; `""` is allowed.
    pub group_ids: Vec<GroupId>,
    /// The request's version: from v6 a consumer group is `GROUP_ID_NOT_FOUND`
    /// (0, the default, answers as the oldest versions do).
    #[serde(default)]
    pub api_version: i16,
}

/// One member as DescribeGroups shows it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedMember {
    /// The member id.
    pub member_id: MemberId,
    /// Its static instance id (v4+).
    pub group_instance_id: Option<GroupInstanceId>,
    /// Its client id.
    pub client_id: String,
    /// Its client host.
    pub client_host: String,
    /// Its metadata for the selected protocol, exactly as it was received.
    pub member_metadata: Vec<u8>,
    /// Its assignment, exactly as the leader sent it.
    pub member_assignment: Vec<u8>,
}

/// One group's description.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedGroup {
    /// The outcome for this group.
    pub error_code: ErrorCode,
    /// v6+: detail for an error (a consumer group described as a classic one).
    #[serde(default)]
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: GroupId,
    /// The state name (`Dead` for a missing group, `""` on error).
    pub group_state: String,
    /// The protocol type, `""` if none.
    pub protocol_type: String,
    /// The selected protocol name, `""` outside Stable.
    pub protocol_data: String,
    /// The members.
    pub members: Vec<DescribedMember>,
}

/// A DescribeGroups response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribeGroupsResponse {
    /// One entry per requested group, in request order.
    pub groups: Vec<DescribedGroup>,
}
