//! Heartbeat (key 12) on the wire: a classic member's liveness, answered with the group's state.

use group_types as gt;
use group_types::wire::WireRequest;
use kafka_protocol::messages as kp;

use super::schema::Layout;
use super::{WireApi, or_unavailable};
use crate::node::{Ctx, Node, Reply, RequestError};

impl WireApi for gt::HeartbeatRequest {
    type Wire = kp::HeartbeatRequest;
    const SCHEMA: Layout = <Self as WireRequest>::LAYOUT;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = Self::from_wire(&wire, &ctx.header());
        // Formatted only when there is a log: the line costs more than the
        // coordinator's own work for a heartbeat.
        let log = node.log.clone().map(|log| {
            let line =
                ctx.line(&format!(",\"group\":{:?},\"generation\":{}", req.group_id, req.generation_id));
            (log, line)
        });
        Ok(ctx.later(node.submit(ctx, req), move |r, v| {
            let r = or_unavailable(r, |error_code| gt::HeartbeatResponse { error_code });
            if let Some((log, line)) = log {
                log.write(&format!("{line},\"error\":{}", r.error_code.code()));
            }
            Self::to_wire(r, v)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        crate::test_samples::enc(&<Self as WireRequest>::sample(v), v)
    }
}
