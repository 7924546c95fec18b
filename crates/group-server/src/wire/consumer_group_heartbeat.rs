//! ConsumerGroupHeartbeat (key 68, KIP-848) on the wire: a member's heartbeat, with its
//! subscription and the partitions it owns, answered with its epoch and assignment.

use group_types::{self as gt, ErrorCode};
use kafka_protocol::messages as kp;

use super::schema::Ty::{Arr, ArrI32, ArrStr, I32, Str, Uuid};
use super::schema::{ALL, Layout, Struct, always, f, plain};
use super::{WireApi, id, opt, opt_id, osb, s, unavailable, uuid, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};

fn topic_id(id: &uuid::Uuid) -> gt::TopicId {
    gt::TopicId(id.into_bytes())
}

/// ConsumerGroupHeartbeat, from the wire: every nullable field stays null ("unchanged")
/// or empty as sent (`kip848-semantics.md` §1.2); the regex exists from v1 on. The client
/// id comes from the request header and the host from the connection (`/127.0.0.1`).
pub(super) fn consumer_group_heartbeat_request(
    req: &kp::ConsumerGroupHeartbeatRequest,
    version: i16,
    client_id: &str,
    client_host: &str,
) -> gt::ConsumerGroupHeartbeatRequest {
    gt::ConsumerGroupHeartbeatRequest {
        api_version: version,
        group_id: id(&req.group_id.0),
        member_id: id(&req.member_id),
        member_epoch: req.member_epoch,
        instance_id: opt_id(&req.instance_id),
        rack_id: opt(&req.rack_id),
        rebalance_timeout_ms: req.rebalance_timeout_ms,
        subscribed_topic_names: req
            .subscribed_topic_names
            .as_ref()
            .map(|t| t.iter().map(|n| s(&n.0)).collect()),
        subscribed_topic_regex: if version >= 1 { opt(&req.subscribed_topic_regex) } else { None },
        server_assignor: opt(&req.server_assignor),
        topic_partitions: req.topic_partitions.as_ref().map(|t| {
            t.iter()
                .map(|tp| gt::TopicIdPartitions::new(topic_id(&tp.topic_id), tp.partitions.clone()))
                .collect()
        }),
        client_id: client_id.to_owned(),
        client_host: client_host.to_owned(),
    }
}

/// ConsumerGroupHeartbeat's answer: the assignment is a nullable struct (null = "no
/// change", §1.3), the same at both versions.
pub(super) fn consumer_group_heartbeat_response(
    resp: gt::ConsumerGroupHeartbeatResponse,
) -> kp::ConsumerGroupHeartbeatResponse {
    use kp::consumer_group_heartbeat_response as r;
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
    kp::ConsumerGroupHeartbeatResponse::default()
        .with_error_code(resp.error_code.code())
        .with_error_message(osb(resp.error_message))
        .with_member_id(resp.member_id.map(wire_id))
        .with_member_epoch(resp.member_epoch)
        .with_heartbeat_interval_ms(resp.heartbeat_interval_ms)
        .with_assignment(assignment)
}

/// A ConsumerGroupHeartbeat answered with an error, as a log line: at info what a member
/// or operator acts on (fenced, unknown, refused), at debug what a client retries by
/// itself (the coordinator moving or loading).
fn heartbeat_rejected(group: &str, member: &str, epoch: i32, r: &gt::ConsumerGroupHeartbeatResponse) {
    let error = r.error_code;
    let message = r.error_message.as_deref().unwrap_or("");
    if matches!(
        error,
        ErrorCode::NotCoordinator | ErrorCode::CoordinatorNotAvailable | ErrorCode::CoordinatorLoadInProgress
    ) {
        tracing::debug!(
            target: "group_server",
            group, member, epoch, error = error.name(),
            "ConsumerGroupHeartbeat rejected: {message}"
        );
    } else {
        tracing::info!(
            target: "group_server",
            group, member, epoch, error = error.name(),
            "ConsumerGroupHeartbeat rejected: {message}"
        );
    }
}

impl WireApi for gt::ConsumerGroupHeartbeatRequest {
    type Wire = kp::ConsumerGroupHeartbeatRequest;
    const SCHEMA: Layout = Layout::new(0, 1, 0, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = consumer_group_heartbeat_request(
            &wire,
            ctx.version,
            &ctx.caller.client_id,
            &ctx.caller.client_host,
        );
        let (group, member, epoch) = (req.group_id.clone(), req.member_id.clone(), req.member_epoch);
        let log = node.log.clone().map(|log| {
            let line = ctx.line(&format!(",\"group\":{group:?},\"member\":{member:?},\"epoch\":{epoch}"));
            (log, line)
        });
        Ok(ctx.later(node.submit(ctx, req), move |r, _| {
            let r = r.unwrap_or_else(|e| {
                gt::ConsumerGroupHeartbeatResponse::error(unavailable(&e), Some(e.to_string()))
            });
            if let Some((log, line)) = log {
                log.write(&format!(
                    "{line},\"response\":true,\"error\":{},\"member_epoch\":{},\"assignment\":{}",
                    r.error_code.code(),
                    r.member_epoch,
                    r.assignment.as_ref().map_or(-1, |a| a.iter().map(|t| t.partitions.len() as i64).sum())
                ));
            }
            if !r.error_code.is_ok() {
                heartbeat_rejected(&group, &member, epoch, &r);
            }
            consumer_group_heartbeat_response(r)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s, tid};
        use kp::consumer_group_heartbeat_request::TopicPartitions;
        let tp = |n| TopicPartitions::default().with_topic_id(tid(n)).with_partitions(vec![0, 2]);
        let r = kp::ConsumerGroupHeartbeatRequest::default()
            .with_group_id(s("g").into())
            .with_member_id(s("m"))
            .with_member_epoch(3)
            .with_instance_id(Some(s("i")))
            .with_rack_id(Some(s("r")))
            .with_rebalance_timeout_ms(5000)
            .with_subscribed_topic_names(Some(vec![s("t1").into(), s("t2").into()]))
            .with_server_assignor(Some(s("uniform")))
            .with_topic_partitions(Some(vec![tp(1), tp(2)]));
        let r = if v >= 1 { r.with_subscribed_topic_regex(Some(s("^t.*"))) } else { r };
        enc(&r, v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static TOPIC: Struct = plain(&[always(Uuid), always(ArrI32)]);
static BODY: Struct = plain(&[
    always(Str),
    always(Str),
    always(I32),
    always(Str),
    always(Str),
    always(I32),
    always(ArrStr),
    f(Str, 1, ALL),
    always(Str),
    always(Arr(&TOPIC)),
]);
