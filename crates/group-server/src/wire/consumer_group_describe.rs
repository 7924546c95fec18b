//! ConsumerGroupDescribe (key 69, KIP-848) on the wire: consumer groups' members and assignments.

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{ArrStr, Bool};
use super::schema::{Message, Struct, always, plain};
use super::{WireApi, id, osb, sb, unavailable, uuid, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};

pub(super) fn consumer_group_describe_request(
    req: &kp::ConsumerGroupDescribeRequest,
    version: i16,
) -> gt::ConsumerGroupDescribeRequest {
    gt::ConsumerGroupDescribeRequest {
        api_version: version,
        group_ids: req.group_ids.iter().map(|g| id(&g.0)).collect(),
        include_authorized_operations: req.include_authorized_operations,
    }
}

/// ConsumerGroupDescribe's answer; v0 has no member type.
pub(super) fn consumer_group_describe_response(
    resp: gt::ConsumerGroupDescribeResponse,
    version: i16,
) -> kp::ConsumerGroupDescribeResponse {
    use kp::consumer_group_describe_response as r;
    let assignment = |topics: Vec<gt::DescribedTopicPartitions>| {
        r::Assignment::default().with_topic_partitions(
            topics
                .into_iter()
                .map(|tp| {
                    r::TopicPartitions::default()
                        .with_topic_id(uuid(tp.topic_id))
                        .with_topic_name(sb(tp.topic_name).into())
                        .with_partitions(tp.partitions)
                })
                .collect(),
        )
    };
    let groups = resp
        .groups
        .into_iter()
        .map(|g| {
            let members = g
                .members
                .into_iter()
                .map(|m| {
                    r::Member::default()
                        .with_member_id(wire_id(m.member_id))
                        .with_instance_id(m.instance_id.map(wire_id))
                        .with_rack_id(osb(m.rack_id))
                        .with_member_epoch(m.member_epoch)
                        .with_client_id(sb(m.client_id))
                        .with_client_host(sb(m.client_host))
                        .with_subscribed_topic_names(
                            m.subscribed_topic_names.into_iter().map(|n| sb(n).into()).collect(),
                        )
                        .with_subscribed_topic_regex(Some(sb(m.subscribed_topic_regex)))
                        .with_assignment(assignment(m.assignment))
                        .with_target_assignment(assignment(m.target_assignment))
                        .with_member_type(if version >= 1 { m.member_type } else { -1 })
                })
                .collect();
            r::DescribedGroup::default()
                .with_error_code(g.error_code.code())
                .with_error_message(osb(g.error_message))
                .with_group_id(wire_id(g.group_id).into())
                .with_group_state(sb(g.group_state))
                .with_group_epoch(g.group_epoch)
                .with_assignment_epoch(g.assignment_epoch)
                .with_assignor_name(sb(g.assignor_name))
                .with_members(members)
                .with_authorized_operations(g.authorized_operations)
        })
        .collect();
    kp::ConsumerGroupDescribeResponse::default().with_groups(groups)
}

impl WireApi for gt::ConsumerGroupDescribeRequest {
    type Wire = kp::ConsumerGroupDescribeRequest;
    const SCHEMA: Message = Message::new(0, 1, 0, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        let req = consumer_group_describe_request(&wire, ctx.version);
        let ids = req.group_ids.clone();
        Ok(ctx.later(node.submit(ctx, req), move |r, v| {
            let r = r.unwrap_or_else(|e| {
                let code = unavailable(&e);
                let groups =
                    ids.into_iter().map(|id| gt::DescribedConsumerGroup::error(id, code, None)).collect();
                gt::ConsumerGroupDescribeResponse { groups }
            });
            consumer_group_describe_response(r, v)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};

        let r = kp::ConsumerGroupDescribeRequest::default()
            .with_group_ids(vec![s("a").into(), s("bb").into()])
            .with_include_authorized_operations(true);
        enc(&r, v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static BODY: Struct = plain(&[always(ArrStr), always(Bool)]);
