//! JoinGroup (key 11) on the wire: a classic member joins and waits for the rebalance.

use group_types as gt;
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::StrBytes;

use super::schema::Ty::{Arr, Bytes, I32, Str};
use super::schema::{ALL, Layout, Struct, always, f, plain};
use super::{WireApi, id, opt, opt_id, unavailable, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};

/// JoinGroup, from the wire; `client_id` and `client_host` come from the connection.
pub(super) fn join_group_request(
    req: &kp::JoinGroupRequest,
    version: i16,
    client_id: &str,
    client_host: &str,
) -> gt::JoinGroupRequest {
    gt::JoinGroupRequest {
        group_id: id(&req.group_id.0),
        member_id: id(&req.member_id),
        group_instance_id: opt_id(&req.group_instance_id),
        client_id: client_id.to_owned(),
        client_host: client_host.to_owned(),
        protocol_type: id(&req.protocol_type),
        protocols: req
            .protocols
            .iter()
            .map(|p| gt::ProtocolMetadata::new(id::<gt::ProtocolName>(&p.name), p.metadata.clone()))
            .collect(),
        session_timeout_ms: req.session_timeout_ms,
        // v0 has none; the coordinator applies `effective_rebalance_timeout_ms`.
        rebalance_timeout_ms: req.rebalance_timeout_ms,
        reason: opt(&req.reason),
        api_version: version,
    }
}

pub(super) fn join_group_response(resp: gt::JoinGroupResponse, version: i16) -> kp::JoinGroupResponse {
    // Before v7 the protocol name is not nullable: Kafka writes "" on errors.
    let protocol_name = match resp.protocol_name {
        None if version < 7 => Some(StrBytes::default()),
        other => other.map(wire_id),
    };
    kp::JoinGroupResponse::default()
        .with_error_code(resp.error_code.code())
        .with_generation_id(resp.generation_id)
        .with_protocol_type(if version >= 7 { resp.protocol_type.map(wire_id) } else { None })
        .with_protocol_name(protocol_name)
        .with_leader(wire_id(resp.leader_id))
        .with_skip_assignment(version >= 9 && resp.skip_assignment)
        .with_member_id(wire_id(resp.member_id))
        .with_members(
            resp.members
                .into_iter()
                .map(|m| {
                    kp::join_group_response::JoinGroupResponseMember::default()
                        .with_member_id(wire_id(m.member_id))
                        .with_group_instance_id(if version >= 5 {
                            m.group_instance_id.map(wire_id)
                        } else {
                            None
                        })
                        .with_metadata(m.metadata)
                })
                .collect(),
        )
}

impl WireApi for gt::JoinGroupRequest {
    type Wire = kp::JoinGroupRequest;
    const SCHEMA: Layout = Layout::new(0, 9, 6, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = join_group_request(&wire, ctx.version, &ctx.caller.client_id, &ctx.caller.client_host);
        node.record(|| ctx.line(&format!(",\"group\":{:?},\"member\":{:?}", req.group_id, req.member_id)));
        // The response line's prefix is formatted only when there is a log to write.
        let log = node.log.clone().map(|log| (log, ctx.line("")));
        Ok(ctx.later(node.submit(ctx, req), move |r, v| {
            let r = r.unwrap_or_else(|e| gt::JoinGroupResponse::error(unavailable(&e), ""));
            if let Some((log, line)) = log {
                log.write(&format!(
                    "{line},\"response\":true,\"error\":{},\"generation\":{},\"member\":{:?},\"leader\":{:?}",
                    r.error_code.code(),
                    r.generation_id,
                    r.member_id,
                    r.leader_id
                ));
            }
            join_group_response(r, v)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};

        let p = |n: &str| {
            kp::join_group_request::JoinGroupRequestProtocol::default()
                .with_name(s(n))
                .with_metadata(bytes::Bytes::from_static(&[0, 1, 2, 3]))
        };
        let r = kp::JoinGroupRequest::default()
            .with_group_id(s("g").into())
            .with_member_id(s("m"))
            .with_protocol_type(s("consumer"))
            .with_protocols(vec![p("range"), p("roundrobin")]);
        let r = if v >= 5 { r.with_group_instance_id(Some(s("i"))) } else { r };
        let r = if v >= 8 { r.with_reason(Some(s("why"))) } else { r };
        enc(&r, v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static PROTOCOL: Struct = plain(&[always(Str), always(Bytes)]);
static BODY: Struct = plain(&[
    always(Str),
    always(I32),
    f(I32, 1, ALL),
    always(Str),
    f(Str, 5, ALL),
    always(Str),
    always(Arr(&PROTOCOL)),
    f(Str, 8, ALL),
]);
