//! Heartbeat (API key 12): a member proves it is alive and learns of rebalances.

use serde::{Deserialize, Serialize};

use crate::ErrorCode;
use crate::{GroupId, GroupInstanceId, MemberId};

/// A Heartbeat request, with every field of versions 0 to 4.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HeartbeatRequest {
    /// The group.
    pub group_id: GroupId,
    /// The generation the member holds.
    pub generation_id: i32,
    /// The member's id.
    pub member_id: MemberId,
    /// The static instance id (v3+).
    pub group_instance_id: Option<GroupInstanceId>,
}

/// A Heartbeat response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HeartbeatResponse {
    /// The outcome; `REBALANCE_IN_PROGRESS` tells the member to rejoin.
    pub error_code: ErrorCode,
}

#[cfg(feature = "kafka-protocol")]
mod wire {
    //! Heartbeat (key 12) on the wire: a classic member's liveness, answered with the group's state.

    use kafka_protocol::messages as kp;

    use crate as gt;
    use crate::wire::layout::Ty::{I32, Str};
    use crate::wire::layout::{ALL, Layout, Struct, always, f, plain};
    use crate::wire::{Header, WireRequest, id, opt_id, sb};

    impl WireRequest for gt::HeartbeatRequest {
        type Wire = kp::HeartbeatRequest;
        type Response = gt::HeartbeatResponse;
        type WireResponse = kp::HeartbeatResponse;
        const LAYOUT: Layout = Layout::new(0, 4, 4, &BODY);

        #[inline]
        fn from_wire(req: &kp::HeartbeatRequest, _: &Header<'_>) -> Self {
            gt::HeartbeatRequest {
                group_id: id(&req.group_id.0),
                generation_id: req.generation_id,
                member_id: id(&req.member_id),
                group_instance_id: opt_id(&req.group_instance_id),
            }
        }

        #[inline]
        fn to_wire(resp: gt::HeartbeatResponse, _: i16) -> kp::HeartbeatResponse {
            kp::HeartbeatResponse::default().with_error_code(resp.error_code.code())
        }

        fn sample(v: i16) -> kp::HeartbeatRequest {
            let r = kp::HeartbeatRequest::default().with_group_id(sb("g").into()).with_member_id(sb("m"));
            if v >= 3 { r.with_group_instance_id(Some(sb("i"))) } else { r }
        }
    }

    // The request field by field as `kafka-protocol` decodes it, for the walk (`crate::wire::layout`).
    static BODY: Struct = plain(&[always(Str), always(I32), always(Str), f(Str, 3, ALL)]);
}
