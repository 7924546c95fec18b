//! AlterShareGroupOffsets (key 91, KIP-932) on the wire: an empty share group's
//! share partitions started again at the given offsets.

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{Arr, I32, I64, Str};
use super::schema::{Message, Struct, always, plain};
use super::{WireApi, id, or_unavailable, osb, s, sb, uuid};
use crate::node::{Ctx, Node, Reply, RequestError};

pub(super) fn alter_share_group_offsets_request(
    req: &kp::AlterShareGroupOffsetsRequest,
) -> gt::AlterShareGroupOffsetsRequest {
    gt::AlterShareGroupOffsetsRequest {
        group_id: id(&req.group_id.0),
        topics: req
            .topics
            .iter()
            .map(|t| gt::AlterShareOffsetsTopic {
                topic_name: s(&t.topic_name.0),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| gt::ShareStartOffset {
                        partition_index: p.partition_index,
                        start_offset: p.start_offset,
                    })
                    .collect(),
            })
            .collect(),
    }
}

pub(super) fn alter_share_group_offsets_response(
    resp: gt::AlterShareGroupOffsetsResponse,
) -> kp::AlterShareGroupOffsetsResponse {
    use kp::alter_share_group_offsets_response as r;
    let topics = resp
        .responses
        .into_iter()
        .map(|t| {
            let partitions = t
                .partitions
                .into_iter()
                .map(|p| {
                    r::AlterShareGroupOffsetsResponsePartition::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(p.error_code.code())
                        .with_error_message(osb(p.error_message))
                })
                .collect();
            r::AlterShareGroupOffsetsResponseTopic::default()
                .with_topic_name(sb(t.topic_name).into())
                .with_topic_id(uuid(t.topic_id))
                .with_partitions(partitions)
        })
        .collect();
    kp::AlterShareGroupOffsetsResponse::default()
        .with_error_code(resp.error_code.code())
        .with_error_message(osb(resp.error_message))
        .with_responses(topics)
}

impl WireApi for gt::AlterShareGroupOffsetsRequest {
    type Wire = kp::AlterShareGroupOffsetsRequest;
    const SCHEMA: Message = Message::new(0, 0, 0, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        let req = alter_share_group_offsets_request(&wire);
        Ok(ctx.later(node.submit(ctx, req), move |r, _| {
            let r = or_unavailable(r, |error_code| gt::AlterShareGroupOffsetsResponse {
                error_code,
                ..Default::default()
            });
            alter_share_group_offsets_response(r)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        use kp::alter_share_group_offsets_request as w;

        let p = |i| {
            w::AlterShareGroupOffsetsRequestPartition::default().with_partition_index(i).with_start_offset(7)
        };
        let t = w::AlterShareGroupOffsetsRequestTopic::default()
            .with_topic_name(s("t1").into())
            .with_partitions(vec![p(0), p(1)]);
        enc(
            &kp::AlterShareGroupOffsetsRequest::default().with_group_id(s("g").into()).with_topics(vec![t]),
            v,
        )
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static PARTITION: Struct = plain(&[always(I32), always(I64)]);
static TOPIC: Struct = plain(&[always(Str), always(Arr(&PARTITION))]);
static BODY: Struct = plain(&[always(Str), always(Arr(&TOPIC))]);
