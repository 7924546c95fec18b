//! JoinGroup (key 11) on the wire: a classic member joins and waits for the rebalance.

use group_types as gt;
use group_types::wire::WireRequest;
use kafka_protocol::messages as kp;

use super::schema::Layout;
use super::{WireApi, unavailable};
use crate::node::{Ctx, Node, Reply, RequestError};

impl WireApi for gt::JoinGroupRequest {
    type Wire = kp::JoinGroupRequest;
    const SCHEMA: Layout = <Self as WireRequest>::LAYOUT;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = Self::from_wire(&wire, &ctx.header());
        node.record(|| ctx.line(&format!(",\"group\":{:?},\"member\":{:?}", req.group_id, req.member_id)));
        // The response line's prefix is formatted only when there is a log to write.
        let log = node.log.clone().map(|log| (log, ctx.line("")));
        Ok(ctx.later(node.submit(ctx, req), move |r, v| {
            let r = r.unwrap_or_else(|e| gt::JoinGroupResponse::error(unavailable(&e), ""));
            if let Some((log, line)) = log {
                log.write(&format!(
                    "{line},\"response\":true,\"error\":{},\"generation\":{},\"member\":{:?},\"leader\":{:?}",
                    r.error_code.code(),
                    r.generation_id,
                    r.member_id,
                    r.leader_id
                ));
            }
            Self::to_wire(r, v)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        crate::test_samples::enc(&<Self as WireRequest>::sample(v), v)
    }
}
