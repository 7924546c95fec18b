//! ShareGroupHeartbeat (key 76, KIP-932) on the wire: a share member's heartbeat, with
//! its subscription, answered with its epoch and assignment.

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{ArrStr, I32, Str};
use super::schema::{Layout, Struct, always, plain};
use super::{WireApi, id, opt, osb, s, unavailable, uuid, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};

/// ShareGroupHeartbeat, from the wire: null stays "unchanged". The client id comes from
/// the request header and the host from the connection.
pub(super) fn share_group_heartbeat_request(
    req: &kp::ShareGroupHeartbeatRequest,
    client_id: &str,
    client_host: &str,
) -> gt::ShareGroupHeartbeatRequest {
    gt::ShareGroupHeartbeatRequest {
        group_id: id(&req.group_id.0),
        member_id: id(&req.member_id),
        member_epoch: req.member_epoch,
        rack_id: opt(&req.rack_id),
        subscribed_topic_names: req
            .subscribed_topic_names
            .as_ref()
            .map(|t| t.iter().map(|n| s(&n.0)).collect()),
        client_id: client_id.to_owned(),
        client_host: client_host.to_owned(),
    }
}

/// ShareGroupHeartbeat's answer: the assignment is a nullable struct (null = "no change").
pub(super) fn share_group_heartbeat_response(
    resp: gt::ShareGroupHeartbeatResponse,
) -> kp::ShareGroupHeartbeatResponse {
    use kp::share_group_heartbeat_response as r;
    let assignment = resp.assignment.map(|topics| {
        r::Assignment::default().with_topic_partitions(
            topics
                .into_iter()
                .map(|tp| {
                    r::TopicPartitions::default()
                        .with_topic_id(uuid(tp.topic_id))
                        .with_partitions(tp.partitions)
                })
                .collect(),
        )
    });
    kp::ShareGroupHeartbeatResponse::default()
        .with_error_code(resp.error_code.code())
        .with_error_message(osb(resp.error_message))
        .with_member_id(resp.member_id.map(wire_id))
        .with_member_epoch(resp.member_epoch)
        .with_heartbeat_interval_ms(resp.heartbeat_interval_ms)
        .with_assignment(assignment)
}

impl WireApi for gt::ShareGroupHeartbeatRequest {
    type Wire = kp::ShareGroupHeartbeatRequest;
    const SCHEMA: Layout = Layout::new(1, 1, 0, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = share_group_heartbeat_request(&wire, &ctx.caller.client_id, &ctx.caller.client_host);
        let (group, member, epoch) = (req.group_id.clone(), req.member_id.clone(), req.member_epoch);
        let log = node.log.clone().map(|log| {
            let line = ctx.line(&format!(",\"group\":{group:?},\"member\":{member:?},\"epoch\":{epoch}"));
            (log, line)
        });
        Ok(ctx.later(node.submit(ctx, req), move |r, _| {
            let r = r.unwrap_or_else(|e| {
                gt::ShareGroupHeartbeatResponse::error(unavailable(&e), Some(e.to_string()))
            });
            // The answer as the consumer heartbeat's line has it: the member's epoch and
            // how many partitions it is assigned (-1: no assignment sent).
            if let Some((log, line)) = log {
                log.write(&format!(
                    "{line},\"response\":true,\"error\":{},\"member_epoch\":{},\"member_id\":{:?},\"assignment\":{}",
                    r.error_code.code(),
                    r.member_epoch,
                    r.member_id.as_ref().map_or("", |m| m.as_str()),
                    r.assignment.as_ref().map_or(-1, |a| a.iter().map(|t| t.partitions.len() as i64).sum())
                ));
            }
            if !r.error_code.is_ok() {
                tracing::debug!(
                    target: "group_server",
                    group = %group, member = %member, epoch, error = r.error_code.name(),
                    "ShareGroupHeartbeat rejected: {}", r.error_message.as_deref().unwrap_or("")
                );
            }
            share_group_heartbeat_response(r)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        let r = kp::ShareGroupHeartbeatRequest::default()
            .with_group_id(s("g").into())
            .with_member_id(s("m"))
            .with_member_epoch(3)
            .with_rack_id(Some(s("r")))
            .with_subscribed_topic_names(Some(vec![s("t1").into(), s("t2").into()]));
        enc(&r, v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static BODY: Struct = plain(&[always(Str), always(Str), always(I32), always(Str), always(ArrStr)]);
