//! SyncGroup (key 14) on the wire: the leader hands in the assignment, every member gets its own.

use group_types as gt;
use group_types::wire::WireRequest;
use kafka_protocol::messages as kp;

use super::schema::Layout;
use super::{WireApi, or_unavailable};
use crate::node::{Ctx, Node, Reply, RequestError};

impl WireApi for gt::SyncGroupRequest {
    type Wire = kp::SyncGroupRequest;
    const SCHEMA: Layout = <Self as WireRequest>::LAYOUT;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = Self::from_wire(&wire, &ctx.header());
        node.record(|| {
            ctx.line(&format!(
                ",\"group\":{:?},\"member\":{:?},\"generation\":{},\"assignments\":{}",
                req.group_id,
                req.member_id,
                req.generation_id,
                req.assignments.len()
            ))
        });
        Ok(ctx.later(node.submit(ctx, req), |r, v| {
            Self::to_wire(or_unavailable(r, gt::SyncGroupResponse::error), v)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        crate::test_samples::enc(&<Self as WireRequest>::sample(v), v)
    }
}
