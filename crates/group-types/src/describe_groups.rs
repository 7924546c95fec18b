//! DescribeGroups (API key 15): a group's state, protocol and members, for admin tools.

use serde::{Deserialize, Serialize};

use crate::{AUTHORIZED_OPERATIONS_OMITTED, ErrorCode, GroupId, GroupInstanceId, MemberId};

/// A DescribeGroups request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribeGroupsRequest {
    /// The groups to describe; `""` is allowed.
    pub group_ids: Vec<GroupId>,
    /// The request's version: from v6 a consumer group is `GROUP_ID_NOT_FOUND`
    /// (0, the default, answers as the oldest versions do).
    #[serde(default)]
    pub api_version: i16,
    /// v3+: answer each group's authorized operations (KIP-430).
    #[serde(default)]
    pub include_authorized_operations: bool,
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

/// One group's description. [`Default`] is an empty answer whose authorized
/// operations are [`AUTHORIZED_OPERATIONS_OMITTED`], as Kafka's schema default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// v3+: the operations the caller may perform on the group (a bit per Kafka
    /// `AclOperation` code), or [`AUTHORIZED_OPERATIONS_OMITTED`] when not asked.
    #[serde(default = "omitted")]
    pub authorized_operations: i32,
}

fn omitted() -> i32 {
    AUTHORIZED_OPERATIONS_OMITTED
}

impl Default for DescribedGroup {
    fn default() -> DescribedGroup {
        DescribedGroup {
            error_code: ErrorCode::None,
            error_message: None,
            group_id: GroupId::default(),
            group_state: String::new(),
            protocol_type: String::new(),
            protocol_data: String::new(),
            members: Vec::new(),
            authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
        }
    }
}

/// A DescribeGroups response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribeGroupsResponse {
    /// One entry per requested group, in request order.
    pub groups: Vec<DescribedGroup>,
}
