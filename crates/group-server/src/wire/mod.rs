//! Each group API on the wire that needs the node's own code, one file per API: topic
//! ACLs and topic ids (OffsetCommit, OffsetFetch), its own request-log fields, or a
//! codec for versions `kafka-protocol` lacks (`share_codec`, `offset_codec`). A file
//! holds the API's [`WireApi`] (how the node serves it), its conversions and its
//! request's layout for the bounds-checking walk ([`schema`], which also holds the
//! layouts of the APIs the node answers itself).
//!
//! Every other group API is served by [`Plain`], from its `group_types::wire::WireRequest`
//! (the conversions and layout beside its message) and its table row's `refused` answer:
//! its row in `group_coordinator::group_api_table!` says `wire: plain`, and nothing here
//! names it. `node.rs` reaches both kinds through that table.
//!
//! Decoding is lossless for every field the coordinator reads; encoding leaves out (or
//! fills with the wire default) what a version cannot carry, because the crate refuses to
//! encode a set field its version lacks.

mod consumer_group_heartbeat;
mod describe_share_group_offsets;
mod heartbeat;
mod join_group;
mod leave_group;
pub(crate) mod offset_codec;
mod offset_commit;
mod offset_delete;
mod offset_fetch;
pub(crate) mod schema;
pub(crate) mod share_codec;
mod share_group_heartbeat;
mod share_state;
mod sync_group;
mod txn_offset_commit;
mod write_txn_markers;

use std::marker::PhantomData;

use group_coordinator::{CoordinatorError, GroupApi, ResponseKind};
use group_types::ErrorCode;
use group_types::wire::WireRequest;
use kafka_protocol::protocol::Decodable;

pub(crate) use group_types::wire::{id, opt_id, osb, s, sb, uuid, wire_id};

use crate::node::{Ctx, Node, Reply, RequestError};
use schema::Layout;

/// How the node serves one group API: [`Plain`] or [`Own`], as its table row says.
pub(crate) trait Serve {
    /// The request as `kafka-protocol` (or a codec here) decodes it.
    type Wire: Decodable;

    /// The request's layout: the walk checks a body against it before `Wire` decodes it.
    const SCHEMA: Layout;

    /// Serves the decoded request: translated, handed to the coordinator as the
    /// caller ([`Node::submit`]), its answer translated back (see [`Ctx::later`]).
    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError>;

    /// The request encoded at `version` with non-empty arrays and strings.
    #[cfg(test)]
    fn sample(version: i16) -> bytes::Bytes;
}

/// A group API served with no code of the node's own: the request's
/// [`WireRequest`] converts it both ways, and a coordinator that gives no answer is
/// answered as the table row refuses a request, with COORDINATOR_NOT_AVAILABLE.
#[derive(Debug)]
pub(crate) struct Plain<A>(PhantomData<A>);

impl<A> Serve for Plain<A>
where
    A: WireRequest + GroupApi<Response = <A as WireRequest>::Response>,
    <A as WireRequest>::Response: ResponseKind + Send + 'static,
    A::WireResponse: 'static,
    A::Wire: EncodedInTests,
{
    type Wire = A::Wire;
    const SCHEMA: Layout = A::LAYOUT;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: A::Wire) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        let request = A::from_wire(&wire, &ctx.header());
        // Built before the request is handed over, which it then no longer is: the
        // plain APIs are the admin ones, off the hot path.
        let failed = request.refused(ErrorCode::CoordinatorNotAvailable);
        Ok(ctx.later(node.submit(ctx, request), move |answer, version| {
            A::to_wire(or_unavailable(answer, |_| failed), version)
        }))
    }

    #[cfg(test)]
    fn sample(version: i16) -> bytes::Bytes {
        crate::test_samples::enc(&A::sample(version), version)
    }
}

/// `Encodable` in the tests, which encode sample requests (kafka-protocol's `client`
/// half is a dev-dependency); nothing otherwise: the node only decodes requests.
#[cfg(test)]
pub(crate) trait EncodedInTests: kafka_protocol::protocol::Encodable {}
#[cfg(test)]
impl<T: kafka_protocol::protocol::Encodable> EncodedInTests for T {}
/// `Encodable` in the tests; nothing otherwise.
#[cfg(not(test))]
pub(crate) trait EncodedInTests {}
#[cfg(not(test))]
impl<T> EncodedInTests for T {}

/// A group API served by its own file here ([`WireApi`]).
#[derive(Debug)]
pub(crate) struct Own<A>(PhantomData<A>);

impl<A: WireApi> Serve for Own<A> {
    type Wire = A::Wire;
    const SCHEMA: Layout = A::SCHEMA;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: A::Wire) -> Result<Reply, RequestError> {
        A::serve(node, ctx, wire)
    }

    #[cfg(test)]
    fn sample(version: i16) -> bytes::Bytes {
        A::sample(version)
    }
}

/// How the node serves a group API with code of its own: implemented, in the API's
/// file here, for the request type of each row of `group_coordinator::group_api_table!`
/// that does not say `wire: plain`.
pub(crate) trait WireApi: GroupApi {
    /// The request as `kafka-protocol` decodes it.
    type Wire: Decodable;

    /// The request's layout: the walk checks a body against it before `Wire` decodes it.
    const SCHEMA: Layout;

    /// Serves the decoded request (see [`Serve::serve`]).
    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError>;

    /// A request encoded at `version` with non-empty arrays and strings and (where the
    /// version has them) tagged fields: what the walk's tests check `SCHEMA` against.
    #[cfg(test)]
    fn sample(version: i16) -> bytes::Bytes;
}

/// Something done with one group API's [`Serve`], whichever it is (the tests
/// reach every group API's schema and sample so, through `node::visit_group_api`).
#[cfg(test)]
pub(crate) trait VisitServe {
    /// What the visit gives.
    type Output;

    /// The visit, with how the API is served.
    fn visit<S: Serve>(self) -> Self::Output;
}

/// COORDINATOR_NOT_AVAILABLE for a failed coordinator (stopped, storage down): clients
/// look it up again and retry.
fn unavailable(error: &CoordinatorError) -> ErrorCode {
    crate::log::log!("answering COORDINATOR_NOT_AVAILABLE: {error}");
    ErrorCode::CoordinatorNotAvailable
}

/// The coordinator's answer, or `failed`'s with COORDINATOR_NOT_AVAILABLE when
/// the coordinator gave none: a coordinator that failed (stopped, storage down) is
/// answered in the API's own shape.
fn or_unavailable<R>(answer: Result<R, CoordinatorError>, failed: impl FnOnce(ErrorCode) -> R) -> R {
    answer.unwrap_or_else(|e| failed(unavailable(&e)))
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod offset_by_id_tests;
