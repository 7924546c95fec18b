//! DeleteGroups (key 42) on the wire: empty groups and their offsets removed.

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::ArrStr;
use super::schema::{Message, Struct, always, plain};
use super::{WireApi, id, unavailable, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};

pub(super) fn delete_groups_request(req: &kp::DeleteGroupsRequest) -> gt::DeleteGroupsRequest {
    gt::DeleteGroupsRequest { group_ids: req.groups_names.iter().map(|g| id(&g.0)).collect() }
}

pub(super) fn delete_groups_response(resp: gt::DeleteGroupsResponse) -> kp::DeleteGroupsResponse {
    kp::DeleteGroupsResponse::default().with_results(
        resp.results
            .into_iter()
            .map(|g| {
                kp::delete_groups_response::DeletableGroupResult::default()
                    .with_group_id(wire_id(g.group_id).into())
                    .with_error_code(g.error_code.code())
            })
            .collect(),
    )
}

impl WireApi for gt::DeleteGroupsRequest {
    type Wire = kp::DeleteGroupsRequest;
    const SCHEMA: Message = Message::new(0, 2, 2, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        let req = delete_groups_request(&wire);
        let ids = req.group_ids.clone();
        Ok(ctx.later(node.submit(ctx, req), move |r, _| {
            let r = r.unwrap_or_else(|e| {
                let results = ids
                    .into_iter()
                    .map(|group_id| gt::DeletedGroup { group_id, error_code: unavailable(&e) })
                    .collect();
                gt::DeleteGroupsResponse { results }
            });
            delete_groups_response(r)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};

        enc(&kp::DeleteGroupsRequest::default().with_groups_names(vec![s("a").into(), s("bb").into()]), v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static BODY: Struct = plain(&[always(ArrStr)]);
