//! OffsetDelete (key 47) on the wire: a group's offsets of the named partitions removed.

use std::collections::BTreeMap;

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{Arr, I32, Str};
use super::schema::{ALL, Layout, Struct, always, plain};
use super::{WireApi, or_unavailable, s};
use crate::node::{Ctx, Node, Reply, RequestError};

pub(super) fn offset_delete_request(req: &kp::OffsetDeleteRequest) -> gt::OffsetDeleteRequest {
    let mut topics: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for t in &req.topics {
        topics.entry(s(&t.name.0)).or_default().extend(t.partitions.iter().map(|p| p.partition_index));
    }
    gt::OffsetDeleteRequest { group_id: s(&req.group_id.0), topics }
}

pub(super) fn offset_delete_response(
    req: &kp::OffsetDeleteRequest,
    resp: &gt::OffsetDeleteResponse,
) -> kp::OffsetDeleteResponse {
    use kp::offset_delete_response as r;
    let topics = if resp.error_code.is_ok() {
        req.topics
            .iter()
            .map(|t| {
                let name = s(&t.name.0);
                r::OffsetDeleteResponseTopic::default().with_name(t.name.clone()).with_partitions(
                    t.partitions
                        .iter()
                        .map(|p| {
                            let code = resp
                                .partitions
                                .get(&name)
                                .and_then(|m| m.get(&p.partition_index))
                                .copied()
                                .unwrap_or(gt::ErrorCode::None);
                            r::OffsetDeleteResponsePartition::default()
                                .with_partition_index(p.partition_index)
                                .with_error_code(code.code())
                        })
                        .collect(),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    kp::OffsetDeleteResponse::default().with_error_code(resp.error_code.code()).with_topics(topics)
}

impl WireApi for gt::OffsetDeleteRequest {
    type Wire = kp::OffsetDeleteRequest;
    const SCHEMA: Layout = Layout::new(0, 0, ALL, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        Ok(ctx.later(node.submit(ctx, offset_delete_request(&wire)), move |r, _| {
            let r =
                or_unavailable(r, |error_code| gt::OffsetDeleteResponse { error_code, ..Default::default() });
            offset_delete_response(&wire, &r)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        use kp::offset_delete_request::*;
        let p = |i| OffsetDeleteRequestPartition::default().with_partition_index(i);
        let t =
            OffsetDeleteRequestTopic::default().with_name(s("t1").into()).with_partitions(vec![p(0), p(1)]);
        enc(&kp::OffsetDeleteRequest::default().with_group_id(s("g").into()).with_topics(vec![t]), v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static PARTITION: Struct = plain(&[always(I32)]);
static TOPIC: Struct = plain(&[always(Str), always(Arr(&PARTITION))]);
static BODY: Struct = plain(&[always(Str), always(Arr(&TOPIC))]);
