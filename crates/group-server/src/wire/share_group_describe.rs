//! ShareGroupDescribe (key 77, KIP-932) on the wire: share groups' members and assignments.

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{ArrStr, Bool};
use super::schema::{Message, Struct, always, plain};
use super::{WireApi, id, osb, sb, unavailable, uuid, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};

pub(super) fn share_group_describe_request(
    req: &kp::ShareGroupDescribeRequest,
) -> gt::ShareGroupDescribeRequest {
    gt::ShareGroupDescribeRequest {
        group_ids: req.group_ids.iter().map(|g| id(&g.0)).collect(),
        include_authorized_operations: req.include_authorized_operations,
    }
}

pub(super) fn share_group_describe_response(
    resp: gt::ShareGroupDescribeResponse,
) -> kp::ShareGroupDescribeResponse {
    use kp::share_group_describe_response as r;
    let groups = resp
        .groups
        .into_iter()
        .map(|g| {
            let members = g
                .members
                .into_iter()
                .map(|m| {
                    let topics = m
                        .assignment
                        .into_iter()
                        .map(|tp| {
                            r::TopicPartitions::default()
                                .with_topic_id(uuid(tp.topic_id))
                                .with_topic_name(sb(tp.topic_name).into())
                                .with_partitions(tp.partitions)
                        })
                        .collect();
                    r::Member::default()
                        .with_member_id(wire_id(m.member_id))
                        .with_rack_id(osb(m.rack_id))
                        .with_member_epoch(m.member_epoch)
                        .with_client_id(sb(m.client_id))
                        .with_client_host(sb(m.client_host))
                        .with_subscribed_topic_names(
                            m.subscribed_topic_names.into_iter().map(|n| sb(n).into()).collect(),
                        )
                        .with_assignment(r::Assignment::default().with_topic_partitions(topics))
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
    kp::ShareGroupDescribeResponse::default().with_groups(groups)
}

impl WireApi for gt::ShareGroupDescribeRequest {
    type Wire = kp::ShareGroupDescribeRequest;
    const SCHEMA: Message = Message::new(1, 1, 0, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        let req = share_group_describe_request(&wire);
        let ids = req.group_ids.clone();
        Ok(ctx.later(node.submit(ctx, req), move |r, _| {
            let r = r.unwrap_or_else(|e| {
                let code = unavailable(&e);
                let groups =
                    ids.into_iter().map(|id| gt::DescribedShareGroup::error(id, code, None)).collect();
                gt::ShareGroupDescribeResponse { groups }
            });
            share_group_describe_response(r)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};

        let r = kp::ShareGroupDescribeRequest::default()
            .with_group_ids(vec![s("a").into(), s("bb").into()])
            .with_include_authorized_operations(true);
        enc(&r, v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static BODY: Struct = plain(&[always(ArrStr), always(Bool)]);
