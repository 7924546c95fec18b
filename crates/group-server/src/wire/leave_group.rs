//! LeaveGroup (key 13) on the wire: one member before v3, a batch of members from v3.

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{Arr, Str};
use super::schema::{ALL, Layout, Struct, always, f, plain};
use super::{WireApi, id, opt, opt_id, or_unavailable, s, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};

pub(super) fn leave_group_request(req: &kp::LeaveGroupRequest, version: i16) -> gt::LeaveGroupRequest {
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

pub(super) fn leave_group_response(resp: gt::LeaveGroupResponse, version: i16) -> kp::LeaveGroupResponse {
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

impl WireApi for gt::LeaveGroupRequest {
    type Wire = kp::LeaveGroupRequest;
    const SCHEMA: Layout = Layout::new(0, 5, 4, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = leave_group_request(&wire, ctx.version);
        node.record(|| ctx.line(&format!(",\"group\":{:?},\"members\":{}", req.group_id, req.members.len())));
        Ok(ctx.later(node.submit(ctx, req), |r, v| {
            let r =
                or_unavailable(r, |error_code| gt::LeaveGroupResponse { error_code, ..Default::default() });
            leave_group_response(r, v)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};

        let r = kp::LeaveGroupRequest::default().with_group_id(s("g").into());
        let r = if v <= 2 {
            r.with_member_id(s("m"))
        } else {
            let m = |id: &str| {
                let m = kp::leave_group_request::MemberIdentity::default()
                    .with_member_id(s(id))
                    .with_group_instance_id(Some(s("i")));
                if v >= 5 { m.with_reason(Some(s("bye"))) } else { m }
            };
            r.with_members(vec![m("a"), m("b")])
        };
        enc(&r, v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static MEMBER: Struct = plain(&[f(Str, 3, ALL), f(Str, 3, ALL), f(Str, 5, ALL)]);
static BODY: Struct = plain(&[always(Str), f(Str, 0, 2), f(Arr(&MEMBER), 3, ALL)]);
