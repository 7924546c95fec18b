//! DescribeShareGroupOffsets (key 90, KIP-932) on the wire: share groups' share
//! partition start offsets, and from v1 their lag (KIP-1226). `kafka-protocol` 0.18
//! knows v0 only: the answer is written by [`super::share_codec`].

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{Arr, ArrI32, Str};
use super::schema::{Layout, Struct, always, plain};
use super::share_codec as codec;
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
) -> codec::DescribeShareGroupOffsetsResponse {
    let partition = |p: gt::DescribedShareOffset| codec::DescribeShareGroupOffsetsPartition {
        partition_index: p.partition_index,
        start_offset: p.start_offset,
        leader_epoch: p.leader_epoch,
        lag: p.lag,
        error_code: p.error_code.code(),
        error_message: osb(p.error_message),
    };
    let topic = |t: gt::DescribedShareOffsetsTopic| codec::DescribeShareGroupOffsetsTopic {
        topic_name: sb(t.topic_name),
        topic_id: uuid(t.topic_id),
        partitions: t.partitions.into_iter().map(partition).collect(),
    };
    let groups = resp
        .groups
        .into_iter()
        .map(|g| codec::DescribeShareGroupOffsetsGroup {
            group_id: wire_id(g.group_id),
            topics: g.topics.into_iter().map(topic).collect(),
            error_code: g.error_code.code(),
            error_message: osb(g.error_message),
        })
        .collect();
    codec::DescribeShareGroupOffsetsResponse { throttle_time_ms: 0, groups }
}

impl WireApi for gt::DescribeShareGroupOffsetsRequest {
    type Wire = codec::DescribeShareGroupOffsetsRequest;
    const SCHEMA: Layout = Layout::new(0, 1, 0, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        let req = describe_share_group_offsets_request(&wire.0, ctx.version);
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
        enc(
            &codec::SameAfter::<_, 0>(kp::DescribeShareGroupOffsetsRequest::default().with_groups(vec![g])),
            v,
        )
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static TOPIC: Struct = plain(&[always(Str), always(ArrI32)]);
static GROUP: Struct = plain(&[always(Str), always(Arr(&TOPIC))]);
static BODY: Struct = plain(&[always(Arr(&GROUP))]);
