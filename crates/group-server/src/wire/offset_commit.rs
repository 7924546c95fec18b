//! OffsetCommit (key 8) on the wire: answered per partition, in request order.

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{Arr, I32, I64, Str};
use super::schema::{ALL, Message, Struct, always, f, plain};
use super::{WireApi, id, opt_id, s, sb, unavailable};
use crate::node::{Ctx, Node, Reply, RequestError};

/// The epoch on the wire: -1 means unknown.
fn epoch(value: i32) -> Option<i32> {
    (value >= 0).then_some(value)
}

pub(super) fn offset_commit_request(req: &kp::OffsetCommitRequest, version: i16) -> gt::OffsetCommitRequest {
    let offsets = req
        .topics
        .iter()
        .map(|topic| gt::TopicEntries {
            topic: s(&topic.name.0),
            partitions: topic
                .partitions
                .iter()
                .map(|p| {
                    let data = gt::OffsetCommitData {
                        offset: p.committed_offset,
                        leader_epoch: epoch(p.committed_leader_epoch),
                        metadata: opt_id(&p.committed_metadata),
                        commit_timestamp: None,
                    };
                    (p.partition_index, data)
                })
                .collect(),
        })
        .collect();
    gt::OffsetCommitRequest {
        group_id: id(&req.group_id.0),
        generation_id: req.generation_id_or_member_epoch,
        member_id: id(&req.member_id),
        group_instance_id: opt_id(&req.group_instance_id),
        retention_time_ms: req.retention_time_ms,
        offsets,
        api_version: version,
    }
}

/// OffsetCommit's answer as the coordinator gives it: every partition of the
/// request in request order, duplicates included, with those refused before the
/// coordinator (authorization, unknown partitions) in their topic's entry.
pub(super) fn offset_commit_response(resp: gt::OffsetCommitResponse) -> kp::OffsetCommitResponse {
    use kp::offset_commit_response as r;
    let topics = resp
        .errors
        .into_iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .into_iter()
                .map(|(partition, code)| {
                    r::OffsetCommitResponsePartition::default()
                        .with_partition_index(partition)
                        .with_error_code(code.code())
                })
                .collect();
            r::OffsetCommitResponseTopic::default()
                .with_name(kp::TopicName(sb(topic.topic)))
                .with_partitions(partitions)
        })
        .collect();
    kp::OffsetCommitResponse::default().with_topics(topics)
}

/// OffsetCommit's answer when the coordinator could not be asked: every
/// partition of the request, in request order, with `error`.
pub(super) fn offset_commit_failed(
    req: &kp::OffsetCommitRequest,
    error: gt::ErrorCode,
) -> kp::OffsetCommitResponse {
    use kp::offset_commit_response as r;
    let topics = req
        .topics
        .iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    r::OffsetCommitResponsePartition::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(error.code())
                })
                .collect();
            r::OffsetCommitResponseTopic::default().with_name(topic.name.clone()).with_partitions(partitions)
        })
        .collect();
    kp::OffsetCommitResponse::default().with_topics(topics)
}

impl WireApi for gt::OffsetCommitRequest {
    type Wire = kp::OffsetCommitRequest;
    const SCHEMA: Message = Message::new(2, 9, 8, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = offset_commit_request(&wire, ctx.version);
        node.record(|| {
            ctx.line(&format!(
                ",\"group\":{:?},\"generation\":{},\"member\":{:?},\"partitions\":{}",
                req.group_id,
                req.generation_id,
                req.member_id,
                req.partition_count()
            ))
        });
        Ok(ctx.later(node.submit(ctx, req), move |r, _| match r {
            Ok(resp) => offset_commit_response(resp),
            Err(e) => offset_commit_failed(&wire, unavailable(&e)),
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        use kp::offset_commit_request::*;
        let p = |i| {
            let p = OffsetCommitRequestPartition::default()
                .with_partition_index(i)
                .with_committed_offset(42)
                .with_committed_metadata(Some(s("md")));
            if v >= 6 { p.with_committed_leader_epoch(3) } else { p }
        };
        let t = |n: &str| {
            OffsetCommitRequestTopic::default().with_name(s(n).into()).with_partitions(vec![p(0), p(1)])
        };
        let r = kp::OffsetCommitRequest::default()
            .with_group_id(s("g").into())
            .with_member_id(s("m"))
            .with_topics(vec![t("t1"), t("t2")]);
        let r = if v >= 7 { r.with_group_instance_id(Some(s("i"))) } else { r };
        let r = if v <= 4 { r.with_retention_time_ms(1000) } else { r };
        enc(&r, v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static PARTITION: Struct = plain(&[always(I32), always(I64), f(I32, 6, ALL), always(Str)]);
static TOPIC: Struct = plain(&[always(Str), always(Arr(&PARTITION))]);
static BODY: Struct =
    plain(&[always(Str), always(I32), always(Str), f(Str, 7, ALL), f(I64, 0, 4), always(Arr(&TOPIC))]);
