//! LeaveGroup (API key 13): one member (v0-2) or a batch of identities (v3+) leave.

use serde::{Deserialize, Serialize};

use crate::ErrorCode;
use crate::{GroupId, GroupInstanceId, MemberId};

/// One member to remove: by member id, or (admin removal) by instance id with an empty member id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemberIdentity {
    /// The member id; `""` to look the member up by instance id.
    pub member_id: MemberId,
    /// The static instance id.
    pub group_instance_id: Option<GroupInstanceId>,
    /// Why the member leaves (v5+, for logs).
    pub reason: Option<String>,
}

impl MemberIdentity {
    /// A dynamic member, by id.
    pub fn new(member_id: impl Into<MemberId>) -> MemberIdentity {
        MemberIdentity { member_id: member_id.into(), ..MemberIdentity::default() }
    }
}

/// A LeaveGroup request. Versions 0-2 carry one member id: build those with
/// [`LeaveGroupRequest::single`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LeaveGroupRequest {
    /// The group.
    pub group_id: GroupId,
    /// The members leaving, answered in this order.
    pub members: Vec<MemberIdentity>,
}

impl LeaveGroupRequest {
    /// The v0-2 form: one dynamic member leaves.
    pub fn single(group_id: impl Into<GroupId>, member_id: impl Into<MemberId>) -> LeaveGroupRequest {
        LeaveGroupRequest { group_id: group_id.into(), members: vec![MemberIdentity::new(member_id)] }
    }
}

/// The outcome for one identity of a LeaveGroup batch.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LeaveMemberResponse {
    /// The member id, echoed from the request.
    pub member_id: MemberId,
    /// The instance id, echoed from the request.
    pub group_instance_id: Option<GroupInstanceId>,
    /// The outcome for this identity.
    pub error_code: ErrorCode,
}

/// A LeaveGroup response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LeaveGroupResponse {
    /// The group-level outcome.
    pub error_code: ErrorCode,
    /// One entry per requested identity (v3+), in request order.
    pub members: Vec<LeaveMemberResponse>,
}

impl LeaveGroupResponse {
    /// The single error a v0-2 client sees: the top-level error if set, else the
    /// first member's.
    pub fn collapsed_error(&self) -> ErrorCode {
        if !self.error_code.is_ok() {
            return self.error_code;
        }
        self.members.first().map_or(ErrorCode::None, |m| m.error_code)
    }
}
