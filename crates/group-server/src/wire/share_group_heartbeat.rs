//! ShareGroupHeartbeat (key 76, KIP-932) on the wire: a share member's heartbeat, with
//! its subscription, answered with its epoch and assignment.

use group_types as gt;
use group_types::wire::WireRequest;
use kafka_protocol::messages as kp;

use super::schema::Layout;
use super::{WireApi, unavailable};
use crate::node::{Ctx, Node, Reply, RequestError};

impl WireApi for gt::ShareGroupHeartbeatRequest {
    type Wire = kp::ShareGroupHeartbeatRequest;
    const SCHEMA: Layout = <Self as WireRequest>::LAYOUT;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = Self::from_wire(&wire, &ctx.header());
        let (group, member, epoch) = (req.group_id.clone(), req.member_id.clone(), req.member_epoch);
        let log = node.log.clone().map(|log| {
            let line = ctx.line(&format!(",\"group\":{group:?},\"member\":{member:?},\"epoch\":{epoch}"));
            (log, line)
        });
        Ok(ctx.later(node.submit(ctx, req), move |r, v| {
            let r = r.unwrap_or_else(|e| {
                gt::ShareGroupHeartbeatResponse::error(unavailable(&e), Some(e.to_string()))
            });
            // The answer as the consumer heartbeat's line has it: the member's epoch and
            // how many partitions it is assigned (-1: no assignment sent).
            if let Some((log, line)) = log {
                log.write(&format!(
                    "{line},\"response\":true,\"error\":{},\"member_epoch\":{},\"member_id\":{:?},\"assignment\":{}",
                    r.error_code.code(),
                    r.member_epoch,
                    r.member_id.as_ref().map_or("", |m| m.as_str()),
                    r.assignment.as_ref().map_or(-1, |a| a.iter().map(|t| t.partitions.len() as i64).sum())
                ));
            }
            if !r.error_code.is_ok() {
                tracing::debug!(
                    target: "group_server",
                    group = %group, member = %member, epoch, error = r.error_code.name(),
                    "ShareGroupHeartbeat rejected: {}", r.error_message.as_deref().unwrap_or("")
                );
            }
            Self::to_wire(r, v)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        crate::test_samples::enc(&<Self as WireRequest>::sample(v), v)
    }
}
