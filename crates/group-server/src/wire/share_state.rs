//! The share coordinator's RPCs (keys 83-87, KIP-932) on the wire:
//! InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState,
//! DeleteShareGroupState and ReadShareGroupStateSummary. They share one shape (a
//! group, then per topic id the partitions with the API's data), so each API's
//! part here is its partition's fields, both ways, and its layout.

use group_coordinator::CoordinatorError;
use group_share_coordinator::{PartitionAnswer, PartitionIndexed};
use group_types as gt;
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::StrBytes;

use super::schema::Ty::{Arr, I8, I16, I32, I64, Str, Uuid};
use super::schema::{ALL, Layout, Struct, always, f, plain};
use super::share_codec::{self as codec, Pinned, SameAfter};
use super::{WireApi, id, osb, unavailable, uuid};
use crate::node::{Ctx, Node, Reply, RequestError};

fn topic_id(id: &uuid::Uuid) -> gt::TopicId {
    gt::TopicId(id.into_bytes())
}

/// A request of `group` at `version` with `topics`' partitions, each converted by `data`.
fn request<W, P>(
    version: i16,
    group: &StrBytes,
    topics: impl IntoIterator<Item = (uuid::Uuid, Vec<W>)>,
    data: impl Fn(&W) -> P,
) -> gt::ShareStateRequest<P> {
    gt::ShareStateRequest {
        api_version: version,
        group_id: id(group),
        topics: topics
            .into_iter()
            .map(|(t, partitions)| gt::ShareStateTopic::new(topic_id(&t), partitions.iter().map(&data)))
            .collect(),
    }
}

/// The coordinator's answer, or every partition of `request` answered
/// COORDINATOR_NOT_AVAILABLE (with `refusal`) when the coordinator gave none.
fn answered<P, R>(
    request: &gt::ShareStateRequest<P>,
    answer: Result<gt::ShareStateResponse<R, P>, CoordinatorError>,
    refusal: impl Fn(i32, gt::ErrorCode) -> R,
    partition: impl Fn(&P) -> i32,
) -> gt::ShareStateResponse<R, P> {
    answer.unwrap_or_else(|e| {
        let code = unavailable(&e);
        gt::ShareStateResponse::new(
            request
                .topics
                .iter()
                .map(|t| {
                    gt::ShareStateTopic::new(
                        t.topic_id,
                        t.partitions.iter().map(|p| refusal(partition(p), code)),
                    )
                })
                .collect(),
        )
    })
}

fn wire_batch_in(b: &Pinned<kp::write_share_group_state_request::StateBatch, 0>) -> gt::StateBatch {
    let b = &b.0;
    gt::StateBatch::new(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
}

fn wire_batch_out(b: &gt::StateBatch) -> kp::read_share_group_state_response::StateBatch {
    kp::read_share_group_state_response::StateBatch::default()
        .with_first_offset(b.first_offset)
        .with_last_offset(b.last_offset)
        .with_delivery_state(b.delivery_state)
        .with_delivery_count(b.delivery_count)
}

/// Serves one share-state request: `wire`'s group and `topics`, each partition's data
/// converted by `data`, handed to the coordinator; its answer (or every partition
/// COORDINATOR_NOT_AVAILABLE) encoded by `encode`.
fn serve_state<W, P, R, E>(
    node: &Node,
    ctx: &Ctx<'_>,
    group: &StrBytes,
    topics: impl IntoIterator<Item = (uuid::Uuid, Vec<W>)>,
    data: impl Fn(&W) -> P,
    encode: impl FnOnce(gt::ShareStateResponse<R, P>) -> E + Send + 'static,
) -> Result<Reply, RequestError>
where
    P: PartitionIndexed + Clone + Send + 'static,
    R: PartitionAnswer + Send + 'static,
    gt::ShareStateRequest<P>: group_coordinator::GroupApi<Response = gt::ShareStateResponse<R, P>>,
    gt::ShareStateResponse<R, P>: group_coordinator::ResponseKind + Send + 'static,
    E: kafka_protocol::protocol::Encodable + 'static,
{
    node.record(|| ctx.line(""));
    let req = request(ctx.version, group, topics, data);
    let asked = req.clone();
    Ok(ctx.later(node.submit(ctx, req), move |r, _| encode(answered(&asked, r, refusal, P::partition))))
}

/// Each topic's answers as the wire's `topic` of its id and its partitions' `part`s.
fn results<R, P, T, W>(
    r: gt::ShareStateResponse<R, P>,
    topic: impl Fn(uuid::Uuid, Vec<W>) -> T,
    part: impl Fn(R) -> W,
) -> Vec<T> {
    r.results
        .into_iter()
        .map(|t| topic(uuid(t.topic_id), t.partitions.into_iter().map(&part).collect()))
        .collect()
}

/// A refusal of one partition, with Kafka's message for the code.
fn refusal<R: PartitionAnswer>(partition: i32, code: gt::ErrorCode) -> R {
    R::refusal(partition, code, group_share_coordinator::default_error_message(code).to_owned())
}

impl WireApi for gt::InitializeShareGroupStateRequest {
    type Wire = kp::InitializeShareGroupStateRequest;
    const SCHEMA: Layout = Layout::new(0, 0, 0, &INITIALIZE);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        use kp::initialize_share_group_state_response as w;
        let topics = wire.topics.into_iter().map(|t| (t.topic_id, t.partitions));
        let data =
            |p: &kp::initialize_share_group_state_request::PartitionData| gt::InitializeStatePartition {
                partition: p.partition,
                state_epoch: p.state_epoch,
                start_offset: p.start_offset,
            };
        serve_state(node, ctx, &wire.group_id, topics, data, |r| {
            let topic =
                |id, parts| w::InitializeStateResult::default().with_topic_id(id).with_partitions(parts);
            let part = |p: gt::ShareStatePartitionResult| {
                w::PartitionResult::default()
                    .with_partition(p.partition)
                    .with_error_code(p.error_code.code())
                    .with_error_message(osb(p.error_message))
            };
            kp::InitializeShareGroupStateResponse::default().with_results(results(r, topic, part))
        })
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        use kp::initialize_share_group_state_request as w;
        let p = w::PartitionData::default().with_partition(1).with_state_epoch(2).with_start_offset(3);
        let t = w::InitializeStateData::default()
            .with_topic_id(uuid::Uuid::from_u128(7))
            .with_partitions(vec![p]);
        enc(&kp::InitializeShareGroupStateRequest::default().with_group_id(s("g")).with_topics(vec![t]), v)
    }
}

impl WireApi for gt::ReadShareGroupStateRequest {
    type Wire = kp::ReadShareGroupStateRequest;
    const SCHEMA: Layout = Layout::new(0, 0, 0, &READ);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        use kp::read_share_group_state_response as w;
        let topics = wire.topics.into_iter().map(|t| (t.topic_id, t.partitions));
        let data = |p: &kp::read_share_group_state_request::PartitionData| gt::ReadStatePartition {
            partition: p.partition,
            leader_epoch: p.leader_epoch,
        };
        serve_state(node, ctx, &wire.group_id, topics, data, |r| {
            let topic = |id, parts| w::ReadStateResult::default().with_topic_id(id).with_partitions(parts);
            let part = |p: gt::ReadStatePartitionResult| {
                w::PartitionResult::default()
                    .with_partition(p.partition)
                    .with_error_code(p.error_code.code())
                    .with_error_message(osb(p.error_message))
                    .with_state_epoch(p.state_epoch)
                    .with_start_offset(p.start_offset)
                    .with_state_batches(p.state_batches.iter().map(wire_batch_out).collect())
            };
            kp::ReadShareGroupStateResponse::default().with_results(results(r, topic, part))
        })
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        use kp::read_share_group_state_request as w;
        let p = w::PartitionData::default().with_partition(1).with_leader_epoch(2);
        let t = w::ReadStateData::default().with_topic_id(uuid::Uuid::from_u128(7)).with_partitions(vec![p]);
        enc(&kp::ReadShareGroupStateRequest::default().with_group_id(s("g")).with_topics(vec![t]), v)
    }
}

impl WireApi for gt::WriteShareGroupStateRequest {
    type Wire = codec::WriteShareGroupStateRequest;
    const SCHEMA: Layout = Layout::new(0, 1, 0, &WRITE);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        use kp::write_share_group_state_response as w;
        let topics = wire.topics.into_iter().map(|t| (t.topic_id, t.partitions));
        // v0 carries no delivery complete count: it reads -1, unknown (KIP-1226).
        let data = |p: &codec::WriteStatePartition| gt::WriteStatePartition {
            partition: p.partition,
            state_epoch: p.state_epoch,
            leader_epoch: p.leader_epoch,
            start_offset: p.start_offset,
            delivery_complete_count: p.delivery_complete_count,
            state_batches: p.state_batches.iter().map(wire_batch_in).collect(),
        };
        serve_state(node, ctx, &wire.group_id, topics, data, |r| {
            let topic = |id, parts| w::WriteStateResult::default().with_topic_id(id).with_partitions(parts);
            let part = |p: gt::ShareStatePartitionResult| {
                w::PartitionResult::default()
                    .with_partition(p.partition)
                    .with_error_code(p.error_code.code())
                    .with_error_message(osb(p.error_message))
            };
            // v1 answers as v0 does: it adds to the request only.
            SameAfter::<_, 0>(
                kp::WriteShareGroupStateResponse::default().with_results(results(r, topic, part)),
            )
        })
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        let b = kp::write_share_group_state_request::StateBatch::default()
            .with_first_offset(1)
            .with_last_offset(2)
            .with_delivery_state(2);
        let p = codec::WriteStatePartition {
            partition: 1,
            start_offset: 3,
            delivery_complete_count: 4,
            state_batches: vec![Pinned(b)],
            ..Default::default()
        };
        let t = codec::WriteStateData { topic_id: uuid::Uuid::from_u128(7), partitions: vec![p] };
        enc(&codec::WriteShareGroupStateRequest { group_id: s("g"), topics: vec![t] }, v)
    }
}

impl WireApi for gt::DeleteShareGroupStateRequest {
    type Wire = kp::DeleteShareGroupStateRequest;
    const SCHEMA: Layout = Layout::new(0, 0, 0, &DELETE);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        use kp::delete_share_group_state_response as w;
        let topics = wire.topics.into_iter().map(|t| (t.topic_id, t.partitions));
        let data = |p: &kp::delete_share_group_state_request::PartitionData| gt::DeleteStatePartition {
            partition: p.partition,
        };
        serve_state(node, ctx, &wire.group_id, topics, data, |r| {
            let topic = |id, parts| w::DeleteStateResult::default().with_topic_id(id).with_partitions(parts);
            let part = |p: gt::ShareStatePartitionResult| {
                w::PartitionResult::default()
                    .with_partition(p.partition)
                    .with_error_code(p.error_code.code())
                    .with_error_message(osb(p.error_message))
            };
            kp::DeleteShareGroupStateResponse::default().with_results(results(r, topic, part))
        })
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        use kp::delete_share_group_state_request as w;
        let p = w::PartitionData::default().with_partition(1);
        let t =
            w::DeleteStateData::default().with_topic_id(uuid::Uuid::from_u128(7)).with_partitions(vec![p]);
        enc(&kp::DeleteShareGroupStateRequest::default().with_group_id(s("g")).with_topics(vec![t]), v)
    }
}

impl WireApi for gt::ReadShareGroupStateSummaryRequest {
    type Wire = codec::ReadShareGroupStateSummaryRequest;
    const SCHEMA: Layout = Layout::new(0, 1, 0, &READ);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let SameAfter(wire) = wire;
        let topics = wire.topics.into_iter().map(|t| (t.topic_id, t.partitions));
        let data = |p: &kp::read_share_group_state_summary_request::PartitionData| {
            gt::ReadStateSummaryPartition { partition: p.partition, leader_epoch: p.leader_epoch }
        };
        serve_state(node, ctx, &wire.group_id, topics, data, |r| {
            let topic = |topic_id, partitions| codec::ReadStateSummaryResult { topic_id, partitions };
            let part = |p: gt::ReadStateSummaryPartitionResult| codec::ReadStateSummaryPartition {
                partition: p.partition,
                error_code: p.error_code.code(),
                error_message: osb(p.error_message),
                state_epoch: p.state_epoch,
                leader_epoch: p.leader_epoch,
                start_offset: p.start_offset,
                delivery_complete_count: p.delivery_complete_count,
            };
            codec::ReadShareGroupStateSummaryResponse { results: results(r, topic, part) }
        })
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        use kp::read_share_group_state_summary_request as w;
        let p = w::PartitionData::default().with_partition(1).with_leader_epoch(2);
        let t = w::ReadStateSummaryData::default()
            .with_topic_id(uuid::Uuid::from_u128(7))
            .with_partitions(vec![p]);
        let request =
            kp::ReadShareGroupStateSummaryRequest::default().with_group_id(s("g")).with_topics(vec![t]);
        enc(&SameAfter::<_, 0>(request), v)
    }
}

// Each request field by field as `kafka-protocol` decodes it, for the walk
// (`super::schema`): a group, then topics of an id and the API's partitions.
static INITIALIZE_PARTITION: Struct = plain(&[always(I32), always(I32), always(I64)]);
static INITIALIZE_TOPIC: Struct = plain(&[always(Uuid), always(Arr(&INITIALIZE_PARTITION))]);
static INITIALIZE: Struct = plain(&[always(Str), always(Arr(&INITIALIZE_TOPIC))]);
/// ReadShareGroupState's and ReadShareGroupStateSummary's (partition, leader epoch).
static READ_PARTITION: Struct = plain(&[always(I32), always(I32)]);
static READ_TOPIC: Struct = plain(&[always(Uuid), always(Arr(&READ_PARTITION))]);
static READ: Struct = plain(&[always(Str), always(Arr(&READ_TOPIC))]);
static STATE_BATCH: Struct = plain(&[always(I64), always(I64), always(I8), always(I16)]);
static WRITE_PARTITION: Struct =
    plain(&[always(I32), always(I32), always(I32), always(I64), f(I32, 1, ALL), always(Arr(&STATE_BATCH))]);
static WRITE_TOPIC: Struct = plain(&[always(Uuid), always(Arr(&WRITE_PARTITION))]);
static WRITE: Struct = plain(&[always(Str), always(Arr(&WRITE_TOPIC))]);
static DELETE_PARTITION: Struct = plain(&[always(I32)]);
static DELETE_TOPIC: Struct = plain(&[always(Uuid), always(Arr(&DELETE_PARTITION))]);
static DELETE: Struct = plain(&[always(Str), always(Arr(&DELETE_TOPIC))]);
