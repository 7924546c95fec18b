//! TxnOffsetCommit (key 28) on the wire: a transactional producer's offsets,
//! answered per partition in request order.

use group_types as gt;
use group_types::wire::{Header, WireRequest};
use kafka_protocol::messages as kp;

use super::schema::Layout;
use super::{WireApi, unavailable};
use crate::node::{Ctx, Node, Reply, RequestError};

impl WireApi for gt::TxnOffsetCommitRequest {
    type Wire = kp::TxnOffsetCommitRequest;
    const SCHEMA: Layout = <Self as WireRequest>::LAYOUT;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = Self::from_wire(&wire, &ctx.header());
        node.record(|| {
            ctx.line(&format!(
                ",\"group\":{:?},\"producer\":{},\"generation\":{},\"member\":{:?},\"partitions\":{}",
                req.group_id,
                req.producer_id,
                req.generation_id,
                req.member_id,
                req.partition_count()
            ))
        });
        // Converted again only when the coordinator gives no answer: the failure names
        // every partition of the request, which the request handed over no longer holds.
        let version = ctx.version;
        let failed = move |code| {
            let request = Self::from_wire(&wire, &Header::new(version, "", ""));
            Self::to_wire(gt::TxnOffsetCommitResponse::uniform(&request, code), version)
        };
        Ok(ctx.later(node.submit(ctx, req), move |r, v| match r {
            Ok(resp) => Self::to_wire(resp, v),
            Err(e) => failed(unavailable(&e)),
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        crate::test_samples::enc(&<Self as WireRequest>::sample(v), v)
    }
}
