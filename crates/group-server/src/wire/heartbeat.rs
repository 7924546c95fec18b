//! Heartbeat (key 12) on the wire: a classic member's liveness, answered with the group's state.

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{I32, Str};
use super::schema::{ALL, Layout, Struct, always, f, plain};
use super::{WireApi, id, opt_id, or_unavailable};
use crate::node::{Ctx, Node, Reply, RequestError};

pub(super) fn heartbeat_request(req: &kp::HeartbeatRequest) -> gt::HeartbeatRequest {
    gt::HeartbeatRequest {
        group_id: id(&req.group_id.0),
        generation_id: req.generation_id,
        member_id: id(&req.member_id),
        group_instance_id: opt_id(&req.group_instance_id),
    }
}

pub(super) fn heartbeat_response(resp: gt::HeartbeatResponse) -> kp::HeartbeatResponse {
    kp::HeartbeatResponse::default().with_error_code(resp.error_code.code())
}

impl WireApi for gt::HeartbeatRequest {
    type Wire = kp::HeartbeatRequest;
    const SCHEMA: Layout = Layout::new(0, 4, 4, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = heartbeat_request(&wire);
        // Formatted only when there is a log: the line costs more than the
        // coordinator's own work for a heartbeat.
        let log = node.log.clone().map(|log| {
            let line =
                ctx.line(&format!(",\"group\":{:?},\"generation\":{}", req.group_id, req.generation_id));
            (log, line)
        });
        Ok(ctx.later(node.submit(ctx, req), move |r, _| {
            let r = or_unavailable(r, |error_code| gt::HeartbeatResponse { error_code });
            if let Some((log, line)) = log {
                log.write(&format!("{line},\"error\":{}", r.error_code.code()));
            }
            heartbeat_response(r)
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};

        let r = kp::HeartbeatRequest::default().with_group_id(s("g").into()).with_member_id(s("m"));
        let r = if v >= 3 { r.with_group_instance_id(Some(s("i"))) } else { r };
        enc(&r, v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static BODY: Struct = plain(&[always(Str), always(I32), always(Str), f(Str, 3, ALL)]);
