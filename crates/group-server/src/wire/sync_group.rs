//! SyncGroup (key 14) on the wire: the leader hands in the assignment, every member gets its own.

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{Arr, Bytes, I32, Str};
use super::schema::{ALL, Layout, Struct, always, f, plain};
use super::{WireApi, id, opt_id, or_unavailable, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};

pub(super) fn sync_group_request(req: &kp::SyncGroupRequest) -> gt::SyncGroupRequest {
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
            .map(|a| gt::MemberAssignmentData::new(id::<gt::MemberId>(&a.member_id), a.assignment.clone()))
            .collect(),
    }
}

pub(super) fn sync_group_response(resp: gt::SyncGroupResponse, version: i16) -> kp::SyncGroupResponse {
    let v5 = version >= 5;
    kp::SyncGroupResponse::default()
        .with_error_code(resp.error_code.code())
        .with_protocol_type(if v5 { resp.protocol_type.map(wire_id) } else { None })
        .with_protocol_name(if v5 { resp.protocol_name.map(wire_id) } else { None })
        .with_assignment(resp.assignment)
}

impl WireApi for gt::SyncGroupRequest {
    type Wire = kp::SyncGroupRequest;
    const SCHEMA: Layout = Layout::new(0, 5, 4, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = sync_group_request(&wire);
        node.record(|| {
            ctx.line(&format!(
                ",\"group\":{:?},\"member\":{:?},\"generation\":{},\"assignments\":{}",
                req.group_id,
                req.member_id,
                req.generation_id,
                req.assignments.len()
            ))
        });
        Ok(ctx.later(node.submit(ctx, req), |r, v| {
            sync_group_response(or_unavailable(r, gt::SyncGroupResponse::error), v)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};

        let a = |m: &str| {
            kp::sync_group_request::SyncGroupRequestAssignment::default()
                .with_member_id(s(m))
                .with_assignment(bytes::Bytes::from_static(&[9, 9]))
        };
        let r = kp::SyncGroupRequest::default()
            .with_group_id(s("g").into())
            .with_member_id(s("m"))
            .with_assignments(vec![a("m"), a("n")]);
        let r = if v >= 3 { r.with_group_instance_id(Some(s("i"))) } else { r };
        let r = if v >= 5 {
            r.with_protocol_type(Some(s("consumer"))).with_protocol_name(Some(s("range")))
        } else {
            r
        };
        enc(&r, v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
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
