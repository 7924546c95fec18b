//! SyncGroup (API key 14): the leader hands out the assignment, followers collect theirs.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::ErrorCode;
use crate::{GroupId, GroupInstanceId, MemberId, ProtocolName, ProtocolType};

/// One member's assignment bytes in the leader's SyncGroup
/// (for consumers, an encoded [`MemberAssignment`](crate::MemberAssignment)).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemberAssignmentData {
    /// The member the bytes are for.
    pub member_id: MemberId,
    /// The opaque assignment bytes.
    pub assignment: Bytes,
}

impl MemberAssignmentData {
    /// An assignment for `member_id`.
    pub fn new(member_id: impl Into<MemberId>, assignment: impl Into<Bytes>) -> MemberAssignmentData {
        MemberAssignmentData { member_id: member_id.into(), assignment: assignment.into() }
    }
}

/// A SyncGroup request, with every field of versions 0 to 5.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SyncGroupRequest {
    /// The group.
    pub group_id: GroupId,
    /// The generation the member joined.
    pub generation_id: i32,
    /// The member's id.
    pub member_id: MemberId,
    /// The static instance id (v3+).
    pub group_instance_id: Option<GroupInstanceId>,
    /// The protocol type (v5+); checked against the group's when present.
    pub protocol_type: Option<ProtocolType>,
    /// The protocol name (v5+); checked against the group's when present.
    pub protocol_name: Option<ProtocolName>,
    /// Every member's assignment; only the leader sends any.
    pub assignments: Vec<MemberAssignmentData>,
}

/// A SyncGroup response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SyncGroupResponse {
    /// The outcome.
    pub error_code: ErrorCode,
    /// The group's protocol type (v5+); `None` on error.
    pub protocol_type: Option<ProtocolType>,
    /// The group's protocol name (v5+); `None` on error.
    pub protocol_name: Option<ProtocolName>,
    /// This member's assignment bytes; empty on error.
    pub assignment: Bytes,
}

impl SyncGroupResponse {
    /// An error answer: no protocol fields, empty assignment.
    pub fn error(error_code: ErrorCode) -> SyncGroupResponse {
        SyncGroupResponse { error_code, ..SyncGroupResponse::default() }
    }
}
