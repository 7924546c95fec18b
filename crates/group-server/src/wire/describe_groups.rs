//! DescribeGroups (key 15) on the wire: classic groups' members and protocol.

use bytes::Bytes;
use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{ArrStr, Bool};
use super::schema::{ALL, Message, Struct, always, f, plain};
use super::{WireApi, id, osb, sb, unavailable, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};

/// DescribeGroups, from the wire: from v6 a consumer group is GROUP_ID_NOT_FOUND, with a
/// message (the core decides from the version).
pub(super) fn describe_groups_request(
    req: &kp::DescribeGroupsRequest,
    version: i16,
) -> gt::DescribeGroupsRequest {
    gt::DescribeGroupsRequest {
        group_ids: req.groups.iter().map(|g| id(&g.0)).collect(),
        api_version: version,
        include_authorized_operations: version >= 3 && req.include_authorized_operations,
    }
}

pub(super) fn describe_groups_response(
    resp: gt::DescribeGroupsResponse,
    version: i16,
) -> kp::DescribeGroupsResponse {
    use kp::describe_groups_response as r;
    kp::DescribeGroupsResponse::default().with_groups(
        resp.groups
            .into_iter()
            .map(|g| {
                r::DescribedGroup::default()
                    .with_error_code(g.error_code.code())
                    .with_error_message(if version >= 6 { osb(g.error_message) } else { None })
                    .with_group_id(wire_id(g.group_id).into())
                    .with_group_state(sb(g.group_state))
                    .with_authorized_operations(if version >= 3 {
                        g.authorized_operations
                    } else {
                        gt::AUTHORIZED_OPERATIONS_OMITTED
                    })
                    .with_protocol_type(sb(g.protocol_type))
                    .with_protocol_data(sb(g.protocol_data))
                    .with_members(
                        g.members
                            .into_iter()
                            .map(|m| {
                                r::DescribedGroupMember::default()
                                    .with_member_id(wire_id(m.member_id))
                                    .with_group_instance_id(if version >= 4 {
                                        m.group_instance_id.map(wire_id)
                                    } else {
                                        None
                                    })
                                    .with_client_id(sb(m.client_id))
                                    .with_client_host(sb(m.client_host))
                                    .with_member_metadata(Bytes::from(m.member_metadata))
                                    .with_member_assignment(Bytes::from(m.member_assignment))
                            })
                            .collect(),
                    )
            })
            .collect(),
    )
}

impl WireApi for gt::DescribeGroupsRequest {
    type Wire = kp::DescribeGroupsRequest;
    const SCHEMA: Message = Message::new(0, 6, 5, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        let req = describe_groups_request(&wire, ctx.version);
        let ids = req.group_ids.clone();
        Ok(ctx.later(node.submit(ctx, req), move |r, v| {
            let r = r.unwrap_or_else(|e| {
                let groups = ids
                    .into_iter()
                    .map(|group_id| gt::DescribedGroup {
                        error_code: unavailable(&e),
                        group_id,
                        ..Default::default()
                    })
                    .collect();
                gt::DescribeGroupsResponse { groups }
            });
            describe_groups_response(r, v)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};

        enc(&kp::DescribeGroupsRequest::default().with_groups(vec![s("a").into(), s("bb").into()]), v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static BODY: Struct = plain(&[always(ArrStr), f(Bool, 3, ALL)]);
