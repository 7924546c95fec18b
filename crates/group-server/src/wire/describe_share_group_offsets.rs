//! DescribeShareGroupOffsets (key 90, KIP-932) on the wire: share groups' share
//! partition start offsets. Served at v0, the one version `kafka-protocol` 0.18
//! decodes (Kafka 4.2 serves v0-v1; v1 adds lag, KIP-1226, which the coordinator
//! keeps in its answer).

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{Arr, ArrI32, Str};
use super::schema::{Message, Struct, always, plain};
use super::{WireApi, id, osb, s, sb, unavailable, uuid, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};

pub(super) fn describe_share_group_offsets_request(
    req: &kp::DescribeShareGroupOffsetsRequest,
    version: i16,
) -> gt::DescribeShareGroupOffsetsRequest {
    gt::DescribeShareGroupOffsetsRequest {
        api_version: version,
        groups: req
            .groups
            .iter()
            .map(|g| gt::DescribeShareGroupOffsetsGroupRequest {
                group_id: id(&g.group_id.0),
                topics: g.topics.as_ref().map(|topics| {
                    topics
                        .iter()
                        .map(|t| gt::ShareOffsetsTopicRequest {
                            topic_name: s(&t.topic_name.0),
                            partitions: t.partitions.clone(),
                        })
                        .collect()
                }),
            })
            .collect(),
    }
}

pub(super) fn describe_share_group_offsets_response(
    resp: gt::DescribeShareGroupOffsetsResponse,
) -> kp::DescribeShareGroupOffsetsResponse {
    use kp::describe_share_group_offsets_response as r;
    let groups = resp
        .groups
        .into_iter()
        .map(|g| {
            let topics = g
                .topics
                .into_iter()
                .map(|t| {
                    let partitions = t
                        .partitions
                        .into_iter()
                        .map(|p| {
                            // v0 has no lag: it is left at the wire default.
                            r::DescribeShareGroupOffsetsResponsePartition::default()
                                .with_partition_index(p.partition_index)
                                .with_start_offset(p.start_offset)
                                .with_leader_epoch(p.leader_epoch)
                                .with_error_code(p.error_code.code())
                                .with_error_message(osb(p.error_message))
                        })
                        .collect();
                    r::DescribeShareGroupOffsetsResponseTopic::default()
                        .with_topic_name(sb(t.topic_name).into())
                        .with_topic_id(uuid(t.topic_id))
                        .with_partitions(partitions)
                })
                .collect();
            r::DescribeShareGroupOffsetsResponseGroup::default()
                .with_group_id(wire_id(g.group_id).into())
                .with_topics(topics)
                .with_error_code(g.error_code.code())
                .with_error_message(osb(g.error_message))
        })
        .collect();
    kp::DescribeShareGroupOffsetsResponse::default().with_groups(groups)
}

impl WireApi for gt::DescribeShareGroupOffsetsRequest {
    type Wire = kp::DescribeShareGroupOffsetsRequest;
    const SCHEMA: Message = Message::new(0, 0, 0, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        let req = describe_share_group_offsets_request(&wire, ctx.version);
        let ids: Vec<gt::GroupId> = req.groups.iter().map(|g| g.group_id.clone()).collect();
        Ok(ctx.later(node.submit(ctx, req), move |r, _| {
            let r = r.unwrap_or_else(|e| {
                let code = unavailable(&e);
                let groups = ids
                    .into_iter()
                    .map(|group_id| gt::DescribedShareOffsetsGroup {
                        group_id,
                        error_code: code,
                        ..Default::default()
                    })
                    .collect();
                gt::DescribeShareGroupOffsetsResponse { groups }
            });
            describe_share_group_offsets_response(r)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        use kp::describe_share_group_offsets_request as w;

        let t = w::DescribeShareGroupOffsetsRequestTopic::default()
            .with_topic_name(s("t1").into())
            .with_partitions(vec![0, 2]);
        let g = w::DescribeShareGroupOffsetsRequestGroup::default()
            .with_group_id(s("g").into())
            .with_topics(Some(vec![t]));
        enc(&kp::DescribeShareGroupOffsetsRequest::default().with_groups(vec![g]), v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static TOPIC: Struct = plain(&[always(Str), always(ArrI32)]);
static GROUP: Struct = plain(&[always(Str), always(Arr(&TOPIC))]);
static BODY: Struct = plain(&[always(Arr(&GROUP))]);
