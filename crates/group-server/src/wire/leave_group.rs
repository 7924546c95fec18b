//! LeaveGroup (key 13) on the wire: one member before v3, a batch of members from v3.

use group_types as gt;
use group_types::wire::WireRequest;
use kafka_protocol::messages as kp;

use super::schema::Layout;
use super::{WireApi, or_unavailable};
use crate::node::{Ctx, Node, Reply, RequestError};

impl WireApi for gt::LeaveGroupRequest {
    type Wire = kp::LeaveGroupRequest;
    const SCHEMA: Layout = <Self as WireRequest>::LAYOUT;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = Self::from_wire(&wire, &ctx.header());
        node.record(|| ctx.line(&format!(",\"group\":{:?},\"members\":{}", req.group_id, req.members.len())));
        Ok(ctx.later(node.submit(ctx, req), |r, v| {
            let r =
                or_unavailable(r, |error_code| gt::LeaveGroupResponse { error_code, ..Default::default() });
            Self::to_wire(r, v)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        crate::test_samples::enc(&<Self as WireRequest>::sample(v), v)
    }
}
