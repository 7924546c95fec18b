//! DeleteShareGroupOffsets (key 92, KIP-932) on the wire: an empty share group's
//! share state deleted for the named topics.

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{Arr, Str};
use super::schema::{Message, Struct, always, plain};
use super::{WireApi, id, or_unavailable, osb, s, uuid};
use crate::node::{Ctx, Node, Reply, RequestError};

pub(super) fn delete_share_group_offsets_request(
    req: &kp::DeleteShareGroupOffsetsRequest,
) -> gt::DeleteShareGroupOffsetsRequest {
    gt::DeleteShareGroupOffsetsRequest {
        group_id: id(&req.group_id.0),
        topic_names: req.topics.iter().map(|t| s(&t.topic_name.0)).collect(),
    }
}

pub(super) fn delete_share_group_offsets_response(
    resp: gt::DeleteShareGroupOffsetsResponse,
) -> kp::DeleteShareGroupOffsetsResponse {
    use kp::delete_share_group_offsets_response as r;
    let topics = resp
        .responses
        .into_iter()
        .map(|t| {
            r::DeleteShareGroupOffsetsResponseTopic::default()
                .with_topic_name(super::sb(t.topic_name).into())
                .with_topic_id(uuid(t.topic_id))
                .with_error_code(t.error_code.code())
                .with_error_message(osb(t.error_message))
        })
        .collect();
    kp::DeleteShareGroupOffsetsResponse::default()
        .with_error_code(resp.error_code.code())
        .with_error_message(osb(resp.error_message))
        .with_responses(topics)
}

impl WireApi for gt::DeleteShareGroupOffsetsRequest {
    type Wire = kp::DeleteShareGroupOffsetsRequest;
    const SCHEMA: Message = Message::new(0, 0, 0, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        let req = delete_share_group_offsets_request(&wire);
        Ok(ctx.later(node.submit(ctx, req), move |r, _| {
            let r = or_unavailable(r, |error_code| gt::DeleteShareGroupOffsetsResponse {
                error_code,
                ..Default::default()
            });
            delete_share_group_offsets_response(r)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        use kp::delete_share_group_offsets_request as w;

        let t = |n| w::DeleteShareGroupOffsetsRequestTopic::default().with_topic_name(s(n).into());
        enc(
            &kp::DeleteShareGroupOffsetsRequest::default()
                .with_group_id(s("g").into())
                .with_topics(vec![t("a"), t("bb")]),
            v,
        )
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static TOPIC: Struct = plain(&[always(Str)]);
static BODY: Struct = plain(&[always(Str), always(Arr(&TOPIC))]);
