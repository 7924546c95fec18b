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

#[cfg(feature = "kafka-protocol")]
mod wire {
    //! LeaveGroup (key 13) on the wire: one member before v3, a batch of members from v3.

    use kafka_protocol::messages as kp;

    use crate as gt;
    use crate::wire::layout::Ty::{Arr, Str};
    use crate::wire::layout::{ALL, Layout, Struct, always, f, plain};
    use crate::wire::{Header, WireRequest, id, opt, opt_id, s, sb, wire_id};

    impl WireRequest for gt::LeaveGroupRequest {
        type Wire = kp::LeaveGroupRequest;
        type Response = gt::LeaveGroupResponse;
        type WireResponse = kp::LeaveGroupResponse;
        const LAYOUT: Layout = Layout::new(0, 5, 4, &BODY);

        #[inline]
        fn from_wire(req: &kp::LeaveGroupRequest, header: &Header<'_>) -> Self {
            let version = header.version;
            if version <= 2 {
                return gt::LeaveGroupRequest::single(s(&req.group_id.0), s(&req.member_id));
            }
            gt::LeaveGroupRequest {
                group_id: id(&req.group_id.0),
                members: req
                    .members
                    .iter()
                    .map(|m| gt::MemberIdentity {
                        member_id: id(&m.member_id),
                        group_instance_id: opt_id(&m.group_instance_id),
                        reason: opt(&m.reason),
                    })
                    .collect(),
            }
        }

        #[inline]
        fn to_wire(resp: gt::LeaveGroupResponse, version: i16) -> kp::LeaveGroupResponse {
            if version <= 2 {
                return kp::LeaveGroupResponse::default().with_error_code(resp.collapsed_error().code());
            }
            kp::LeaveGroupResponse::default().with_error_code(resp.error_code.code()).with_members(
                resp.members
                    .into_iter()
                    .map(|m| {
                        kp::leave_group_response::MemberResponse::default()
                            .with_member_id(wire_id(m.member_id))
                            .with_group_instance_id(m.group_instance_id.map(wire_id))
                            .with_error_code(m.error_code.code())
                    })
                    .collect(),
            )
        }

        fn sample(v: i16) -> kp::LeaveGroupRequest {
            let r = kp::LeaveGroupRequest::default().with_group_id(sb("g").into());
            if v <= 2 {
                r.with_member_id(sb("m"))
            } else {
                let m = |id: &str| {
                    let m = kp::leave_group_request::MemberIdentity::default()
                        .with_member_id(sb(id))
                        .with_group_instance_id(Some(sb("i")));
                    if v >= 5 { m.with_reason(Some(sb("bye"))) } else { m }
                };
                r.with_members(vec![m("a"), m("b")])
            }
        }
    }

    // The request field by field as `kafka-protocol` decodes it, for the walk (`crate::wire::layout`).
    static MEMBER: Struct = plain(&[f(Str, 3, ALL), f(Str, 3, ALL), f(Str, 5, ALL)]);
    static BODY: Struct = plain(&[always(Str), f(Str, 0, 2), f(Arr(&MEMBER), 3, ALL)]);
}
