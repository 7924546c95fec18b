//! TxnOffsetCommit (key 28) on the wire: a transactional producer's offsets,
//! answered per partition in request order.

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{Arr, I16, I32, I64, Str};
use super::schema::{ALL, Layout, Struct, always, f, plain};
use super::{WireApi, id, opt_id, s, sb, unavailable};
use crate::node::{Ctx, Node, Reply, RequestError};

fn request(req: &kp::TxnOffsetCommitRequest, version: i16) -> gt::TxnOffsetCommitRequest {
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
                        leader_epoch: (p.committed_leader_epoch >= 0).then_some(p.committed_leader_epoch),
                        metadata: opt_id(&p.committed_metadata),
                        commit_timestamp: None,
                    };
                    (p.partition_index, data)
                })
                .collect(),
        })
        .collect();
    gt::TxnOffsetCommitRequest {
        transactional_id: s(&req.transactional_id.0),
        group_id: id(&req.group_id.0),
        producer_id: req.producer_id.0,
        producer_epoch: req.producer_epoch,
        generation_id: req.generation_id,
        member_id: id(&req.member_id),
        group_instance_id: opt_id(&req.group_instance_id),
        offsets,
        api_version: version,
    }
}

fn response(errors: Vec<gt::TopicEntries<gt::ErrorCode>>) -> kp::TxnOffsetCommitResponse {
    use kp::txn_offset_commit_response as r;
    let topics = errors
        .into_iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .into_iter()
                .map(|(partition, code)| {
                    r::TxnOffsetCommitResponsePartition::default()
                        .with_partition_index(partition)
                        .with_error_code(code.code())
                })
                .collect();
            r::TxnOffsetCommitResponseTopic::default()
                .with_name(kp::TopicName(sb(topic.topic)))
                .with_partitions(partitions)
        })
        .collect();
    kp::TxnOffsetCommitResponse::default().with_topics(topics)
}

impl WireApi for gt::TxnOffsetCommitRequest {
    type Wire = kp::TxnOffsetCommitRequest;
    const SCHEMA: Layout = Layout::new(0, 5, 3, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = request(&wire, ctx.version);
        node.record(|| {
            ctx.line(&format!(
                ",\"group\":{:?},\"producer\":{},\"generation\":{},\"member\":{:?},\"partitions\":{}",
                req.group_id,
                req.producer_id,
                req.generation_id,
                req.member_id,
                req.partition_count()
            ))
        });
        let failed =
            move |code| response(gt::TxnOffsetCommitResponse::uniform(&request(&wire, 0), code).errors);
        Ok(ctx.later(node.submit(ctx, req), move |r, _| match r {
            Ok(resp) => response(resp.errors),
            Err(e) => failed(unavailable(&e)),
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        use kp::txn_offset_commit_request::*;
        let p = |i| {
            let p = TxnOffsetCommitRequestPartition::default()
                .with_partition_index(i)
                .with_committed_offset(42)
                .with_committed_metadata(Some(s("md")));
            if v >= 2 { p.with_committed_leader_epoch(3) } else { p }
        };
        let t = |n: &str| {
            TxnOffsetCommitRequestTopic::default().with_name(s(n).into()).with_partitions(vec![p(0), p(1)])
        };
        let r = kp::TxnOffsetCommitRequest::default()
            .with_transactional_id(s("tx").into())
            .with_group_id(s("g").into())
            .with_producer_id(kp::ProducerId(7))
            .with_producer_epoch(1)
            .with_topics(vec![t("t1"), t("t2")]);
        let r = if v >= 3 {
            r.with_member_id(s("m")).with_generation_id(2).with_group_instance_id(Some(s("i")))
        } else {
            r
        };
        enc(&r, v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static PARTITION: Struct = plain(&[always(I32), always(I64), f(I32, 2, ALL), always(Str)]);
static TOPIC: Struct = plain(&[always(Str), always(Arr(&PARTITION))]);
static BODY: Struct = plain(&[
    always(Str),
    always(Str),
    always(I64),
    always(I16),
    f(I32, 3, ALL),
    f(Str, 3, ALL),
    f(Str, 3, ALL),
    always(Arr(&TOPIC)),
]);
