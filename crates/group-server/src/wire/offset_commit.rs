//! OffsetCommit (key 8) on the wire: answered per partition, in request order. v10
//! names topics by id (`super::offset_codec`): they are named from the node's topics
//! before the coordinator, which keys offsets by name, and the answer is by id again.

use group_coordinator::{AclOperation, Pending, Resource};
use group_types as gt;
use kafka_protocol::messages as kp;

use super::offset_codec::{self as codec, ByTopicId};
use super::schema::Ty::{Arr, I32, I64, Str, Uuid};
use super::schema::{ALL, Layout, Struct, always, f, plain};
use super::{WireApi, id, opt_id, s, sb, unavailable};
use crate::node::{Ctx, Node, Reply, RequestError};
use crate::topics::Topics;

/// OffsetCommit's answer at any version.
type Answer = ByTopicId<kp::OffsetCommitResponse, codec::OffsetCommitResponse>;

/// UNKNOWN_TOPIC_ID (not a group error code).
const UNKNOWN_TOPIC_ID: i16 = 100;

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

/// A v10 commit's topics that this node knows, named, in request order: what the
/// coordinator is asked (`KafkaApis.handleOffsetCommitRequest` names each id from its
/// metadata cache first).
pub(super) fn named_commit(wire: &codec::OffsetCommitRequest, topics: &Topics) -> kp::OffsetCommitRequest {
    use kp::offset_commit_request::OffsetCommitRequestTopic;
    let named = wire
        .topics
        .iter()
        .filter_map(|topic| {
            let name = topics.name_of(&topic.topic_id)?;
            Some(
                OffsetCommitRequestTopic::default()
                    .with_name(sb(name).into())
                    .with_partitions(topic.partitions.iter().map(|p| p.0.clone()).collect()),
            )
        })
        .collect();
    kp::OffsetCommitRequest::default()
        .with_group_id(wire.group_id.clone().into())
        .with_generation_id_or_member_epoch(wire.generation_id_or_member_epoch)
        .with_member_id(wire.member_id.clone())
        .with_group_instance_id(wire.group_instance_id.clone())
        .with_topics(named)
}

/// A v10 commit's answer as Kafka builds it (`KafkaApis.handleOffsetCommitRequest`
/// with `OffsetCommitResponse.TopicIdBuilder`): the topics whose id this node does not
/// know first, in request order, every partition `UNKNOWN_TOPIC_ID` and one entry per
/// id; then the coordinator's answer to the others (`answer`, by name), by id.
pub(super) fn commit_answer_by_id(
    wire: &codec::OffsetCommitRequest,
    topics: &Topics,
    answer: kp::OffsetCommitResponse,
) -> codec::OffsetCommitResponse {
    use kp::offset_commit_response::OffsetCommitResponsePartition;
    let mut out: Vec<codec::OffsetCommitResponseTopic> = Vec::new();
    for topic in wire.topics.iter().filter(|t| topics.name_of(&t.topic_id).is_none()) {
        let partitions = topic.partitions.iter().map(|p| {
            codec::Pinned(
                OffsetCommitResponsePartition::default()
                    .with_partition_index(p.0.partition_index)
                    .with_error_code(UNKNOWN_TOPIC_ID),
            )
        });
        match out.iter_mut().find(|t| t.topic_id == topic.topic_id) {
            Some(entry) => entry.partitions.extend(partitions),
            None => out.push(codec::OffsetCommitResponseTopic {
                topic_id: topic.topic_id,
                partitions: partitions.collect(),
                ..Default::default()
            }),
        }
    }
    out.extend(answer.topics.into_iter().map(|topic| codec::OffsetCommitResponseTopic {
        // The coordinator answers only the names `named_commit` gave it.
        topic_id: topics.get(topic.name.0.as_str()).map(|(_, id)| id).unwrap_or_default(),
        partitions: topic.partitions.into_iter().map(codec::Pinned).collect(),
        ..Default::default()
    }));
    codec::OffsetCommitResponse { throttle_time_ms: 0, topics: out }
}

/// A v10 commit answered `error` on every partition, in request order, unknown ids
/// included (Kafka's `OffsetCommitRequest.getErrorResponse`).
pub(super) fn commit_failed_by_id(
    wire: &codec::OffsetCommitRequest,
    error: gt::ErrorCode,
) -> codec::OffsetCommitResponse {
    use kp::offset_commit_response::OffsetCommitResponsePartition;
    let topics = wire
        .topics
        .iter()
        .map(|topic| codec::OffsetCommitResponseTopic {
            topic_id: topic.topic_id,
            partitions: topic
                .partitions
                .iter()
                .map(|p| {
                    codec::Pinned(
                        OffsetCommitResponsePartition::default()
                            .with_partition_index(p.0.partition_index)
                            .with_error_code(error.code()),
                    )
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    codec::OffsetCommitResponse { throttle_time_ms: 0, topics }
}

/// Writes a commit's request-log line.
fn record(node: &Node, ctx: &Ctx<'_>, req: &gt::OffsetCommitRequest) {
    node.record(|| {
        ctx.line(&format!(
            ",\"group\":{:?},\"generation\":{},\"member\":{:?},\"partitions\":{}",
            req.group_id,
            req.generation_id,
            req.member_id,
            req.partition_count()
        ))
    });
}

/// A v10 commit (`KafkaApis.handleOffsetCommitRequest` with `useTopicIds`): READ on the
/// group first, as Kafka checks it before anything; then unknown ids are answered
/// `UNKNOWN_TOPIC_ID` and the rest asked of the coordinator by name. Kafka does not
/// call its coordinator when nothing is left, nor here. The log line counts the
/// partitions of known topics.
fn commit_by_id(node: &Node, ctx: &Ctx<'_>, wire: codec::OffsetCommitRequest) -> Reply {
    let topics = node.topics.get();
    let named = named_commit(&wire, &topics);
    let unknown = named.topics.len() < wire.topics.len();
    let req = offset_commit_request(&named, ctx.version);
    record(node, ctx, &req);
    let now = |answer: codec::OffsetCommitResponse| {
        // No coordinator answer to wait for: the reply is written at once.
        let none: Vec<Pending<gt::OffsetCommitResponse>> = Vec::new();
        ctx.later_all(none, move |_, _| Answer::ById(answer))
    };
    if unknown {
        // With every id known the coordinator checks the group itself (and counts a denial).
        let group = Resource::Group(wire.group_id.as_str());
        if !node.authorizer.authorize(ctx.caller, AclOperation::Read, group) {
            return now(commit_failed_by_id(&wire, gt::ErrorCode::GroupAuthorizationFailed));
        }
        if named.topics.is_empty() {
            return now(commit_answer_by_id(&wire, &topics, kp::OffsetCommitResponse::default()));
        }
    }
    ctx.later(node.submit(ctx, req), move |r, _| {
        Answer::ById(match r {
            Ok(resp) => commit_answer_by_id(&wire, &topics, offset_commit_response(resp)),
            Err(e) => commit_failed_by_id(&wire, unavailable(&e)),
        })
    })
}

impl WireApi for gt::OffsetCommitRequest {
    type Wire = ByTopicId<kp::OffsetCommitRequest, codec::OffsetCommitRequest>;
    const SCHEMA: Layout = Layout::new(2, 10, 8, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        Ok(match wire {
            ByTopicId::ByName(wire) => {
                let req = offset_commit_request(&wire, ctx.version);
                record(node, ctx, &req);
                ctx.later(node.submit(ctx, req), move |r, _| {
                    Answer::ByName(match r {
                        Ok(resp) => offset_commit_response(resp),
                        Err(e) => offset_commit_failed(&wire, unavailable(&e)),
                    })
                })
            }
            ByTopicId::ById(wire) => commit_by_id(node, ctx, wire),
        })
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
        if v < codec::TOPIC_ID_VERSION {
            return enc(&r, v);
        }
        // v9's topics by id: the test node's t1, and t2, which it does not have.
        let topic = |name| codec::OffsetCommitRequestTopic {
            topic_id: crate::topics::topic_id_for(name),
            partitions: vec![codec::Pinned(p(0)), codec::Pinned(p(1))],
            ..Default::default()
        };
        let r = codec::OffsetCommitRequest {
            group_id: r.group_id.0,
            generation_id_or_member_epoch: r.generation_id_or_member_epoch,
            member_id: r.member_id,
            group_instance_id: r.group_instance_id,
            topics: vec![topic("t1"), topic("t2")],
        };
        enc(&r, v)
    }
}

// The request field by field as `kafka-protocol` (from v10 `offset_codec`) decodes it, for the walk
// (`super::schema`).
static PARTITION: Struct = plain(&[always(I32), always(I64), f(I32, 6, ALL), always(Str)]);
static TOPIC: Struct = plain(&[f(Str, 0, 9), f(Uuid, 10, ALL), always(Arr(&PARTITION))]);
static BODY: Struct =
    plain(&[always(Str), always(I32), always(Str), f(Str, 7, ALL), f(I64, 0, 4), always(Arr(&TOPIC))]);
