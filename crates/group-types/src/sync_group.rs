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

#[cfg(feature = "kafka-protocol")]
mod wire {
    //! SyncGroup (key 14) on the wire: the leader hands in the assignment, every member gets its own.

    use kafka_protocol::messages as kp;

    use crate as gt;
    use crate::wire::layout::Ty::{Arr, Bytes, I32, Str};
    use crate::wire::layout::{ALL, Layout, Struct, always, f, plain};
    use crate::wire::{Header, WireRequest, id, opt_id, sb, wire_id};

    impl WireRequest for gt::SyncGroupRequest {
        type Wire = kp::SyncGroupRequest;
        type Response = gt::SyncGroupResponse;
        type WireResponse = kp::SyncGroupResponse;
        const LAYOUT: Layout = Layout::new(0, 5, 4, &BODY);

        #[inline]
        fn from_wire(req: &kp::SyncGroupRequest, _: &Header<'_>) -> Self {
            gt::SyncGroupRequest {
                group_id: id(&req.group_id.0),
                generation_id: req.generation_id,
                member_id: id(&req.member_id),
                group_instance_id: opt_id(&req.group_instance_id),
                protocol_type: opt_id(&req.protocol_type),
                protocol_name: opt_id(&req.protocol_name),
                assignments: req
                    .assignments
                    .iter()
                    .map(|a| {
                        gt::MemberAssignmentData::new(id::<gt::MemberId>(&a.member_id), a.assignment.clone())
                    })
                    .collect(),
            }
        }

        #[inline]
        fn to_wire(resp: gt::SyncGroupResponse, version: i16) -> kp::SyncGroupResponse {
            let v5 = version >= 5;
            kp::SyncGroupResponse::default()
                .with_error_code(resp.error_code.code())
                .with_protocol_type(if v5 { resp.protocol_type.map(wire_id) } else { None })
                .with_protocol_name(if v5 { resp.protocol_name.map(wire_id) } else { None })
                .with_assignment(resp.assignment)
        }

        fn sample(v: i16) -> kp::SyncGroupRequest {
            let a = |m: &str| {
                kp::sync_group_request::SyncGroupRequestAssignment::default()
                    .with_member_id(sb(m))
                    .with_assignment(bytes::Bytes::from_static(&[9, 9]))
            };
            let r = kp::SyncGroupRequest::default()
                .with_group_id(sb("g").into())
                .with_member_id(sb("m"))
                .with_assignments(vec![a("m"), a("n")]);
            let r = if v >= 3 { r.with_group_instance_id(Some(sb("i"))) } else { r };
            if v >= 5 {
                r.with_protocol_type(Some(sb("consumer"))).with_protocol_name(Some(sb("range")))
            } else {
                r
            }
        }
    }

    // The request field by field as `kafka-protocol` decodes it, for the walk (`crate::wire::layout`).
    static ASSIGNMENT: Struct = plain(&[always(Str), always(Bytes)]);
    static BODY: Struct = plain(&[
        always(Str),
        always(I32),
        always(Str),
        f(Str, 3, ALL),
        f(Str, 5, ALL),
        f(Str, 5, ALL),
        always(Arr(&ASSIGNMENT)),
    ]);
}
