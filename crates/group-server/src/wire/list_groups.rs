//! ListGroups (key 16) on the wire: every group of every partition this node serves.

use group_types as gt;
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::StrBytes;

use super::schema::Ty::ArrStr;
use super::schema::{ALL, Message, Struct, f, plain};
use super::{WireApi, or_unavailable, s, sb, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};

pub(super) fn list_groups_request(req: &kp::ListGroupsRequest) -> gt::ListGroupsRequest {
    gt::ListGroupsRequest {
        states_filter: req.states_filter.iter().map(s).collect(),
        types_filter: req.types_filter.iter().map(s).collect(),
    }
}

pub(super) fn list_groups_response(resp: gt::ListGroupsResponse, version: i16) -> kp::ListGroupsResponse {
    kp::ListGroupsResponse::default().with_error_code(resp.error_code.code()).with_groups(
        resp.groups
            .into_iter()
            .map(|g| {
                kp::list_groups_response::ListedGroup::default()
                    .with_group_id(wire_id(g.group_id).into())
                    .with_protocol_type(sb(g.protocol_type))
                    .with_group_state(if version >= 4 { sb(g.group_state) } else { StrBytes::default() })
                    .with_group_type(if version >= 5 { sb(g.group_type) } else { StrBytes::default() })
            })
            .collect(),
    )
}

impl WireApi for gt::ListGroupsRequest {
    type Wire = kp::ListGroupsRequest;
    const SCHEMA: Message = Message::new(0, 5, 3, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        Ok(ctx.later(node.submit(ctx, list_groups_request(&wire)), |r, v| {
            let r =
                or_unavailable(r, |error_code| gt::ListGroupsResponse { error_code, ..Default::default() });
            list_groups_response(r, v)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};

        let r = kp::ListGroupsRequest::default();
        let r = if v >= 4 { r.with_states_filter(vec![s("Stable"), s("Empty")]) } else { r };
        let r = if v >= 5 { r.with_types_filter(vec![s("classic")]) } else { r };
        enc(&r, v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static BODY: Struct = plain(&[f(ArrStr, 4, ALL), f(ArrStr, 5, ALL)]);
