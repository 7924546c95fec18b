//! ConsumerGroupHeartbeat (key 68, KIP-848) on the wire: a member's heartbeat, with its
//! subscription and the partitions it owns, answered with its epoch and assignment.

use group_types::wire::WireRequest;
use group_types::{self as gt, ErrorCode};
use kafka_protocol::messages as kp;

use super::schema::Layout;
use super::{WireApi, unavailable};
use crate::node::{Ctx, Node, Reply, RequestError};

/// A ConsumerGroupHeartbeat answered with an error, as a log line: at info what a member
/// or operator acts on (fenced, unknown, refused), at debug what a client retries by
/// itself (the coordinator moving or loading).
fn heartbeat_rejected(group: &str, member: &str, epoch: i32, r: &gt::ConsumerGroupHeartbeatResponse) {
    let error = r.error_code;
    let message = r.error_message.as_deref().unwrap_or("");
    if matches!(
        error,
        ErrorCode::NotCoordinator | ErrorCode::CoordinatorNotAvailable | ErrorCode::CoordinatorLoadInProgress
    ) {
        tracing::debug!(
            target: "group_server",
            group, member, epoch, error = error.name(),
            "ConsumerGroupHeartbeat rejected: {message}"
        );
    } else {
        tracing::info!(
            target: "group_server",
            group, member, epoch, error = error.name(),
            "ConsumerGroupHeartbeat rejected: {message}"
        );
    }
}

impl WireApi for gt::ConsumerGroupHeartbeatRequest {
    type Wire = kp::ConsumerGroupHeartbeatRequest;
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
                gt::ConsumerGroupHeartbeatResponse::error(unavailable(&e), Some(e.to_string()))
            });
            if let Some((log, line)) = log {
                log.write(&format!(
                    "{line},\"response\":true,\"error\":{},\"member_epoch\":{},\"assignment\":{}",
                    r.error_code.code(),
                    r.member_epoch,
                    r.assignment.as_ref().map_or(-1, |a| a.iter().map(|t| t.partitions.len() as i64).sum())
                ));
            }
            if !r.error_code.is_ok() {
                heartbeat_rejected(&group, &member, epoch, &r);
            }
            Self::to_wire(r, v)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        crate::test_samples::enc(&<Self as WireRequest>::sample(v), v)
    }
}
