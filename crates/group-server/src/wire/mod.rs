//! Each group API on the wire, one file per API: what the node knows of it and nothing
//! else does. A file holds the API's `kafka-protocol` <-> `group_types` conversions,
//! version by version, its [`WireApi`] (how the node serves it) and its request's layout
//! for the bounds-checking walk ([`schema`], which also holds the layouts of the APIs the
//! node answers itself). `node.rs` reaches every file through the coordinator's table
//! (`group_coordinator::group_api_table!`): besides the `mod` lines below, nothing in
//! the server lists the group APIs.
//!
//! Decoding is lossless for every field the coordinator reads; encoding leaves out (or
//! fills with the wire default) what a version cannot carry, because the crate refuses to
//! encode a set field its version lacks.

mod alter_share_group_offsets;
mod consumer_group_describe;
mod consumer_group_heartbeat;
mod delete_groups;
mod delete_share_group_offsets;
mod describe_groups;
mod describe_share_group_offsets;
mod heartbeat;
mod join_group;
mod leave_group;
mod list_groups;
pub(crate) mod offset_codec;
mod offset_commit;
mod offset_delete;
mod offset_fetch;
pub(crate) mod schema;
pub(crate) mod share_codec;
mod share_group_describe;
mod share_group_heartbeat;
mod share_state;
mod sync_group;
mod txn_offset_commit;
mod write_txn_markers;

use bytes::Bytes;
use group_coordinator::{CoordinatorError, GroupApi};
use group_types::{self as gt, ErrorCode};
use kafka_protocol::protocol::{Decodable, StrBytes};

use crate::node::{Ctx, Node, Reply, RequestError};
use schema::Message;

/// How the node serves one group API from the wire: implemented, in the API's file
/// here, for the request type of each row of `group_coordinator::group_api_table!`.
pub(crate) trait WireApi: GroupApi {
    /// The request as `kafka-protocol` decodes it.
    type Wire: Decodable;

    /// The request's layout: the walk checks a body against it before `Wire` decodes it.
    const SCHEMA: Message;

    /// Serves the decoded request: translated, handed to the coordinator as the
    /// caller ([`Node::submit`]), its answer translated back (see [`Ctx::later`]).
    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError>;

    /// A request encoded at `version` with non-empty arrays and strings and (where the
    /// version has them) tagged fields: what the walk's tests check `SCHEMA` against.
    #[cfg(test)]
    fn sample(version: i16) -> Bytes;
}

/// Something done with one group API's [`WireApi`], whichever it is (the tests
/// reach every group API's schema and sample so, through `node::visit_group_api`).
#[cfg(test)]
pub(crate) trait VisitWireApi {
    /// What the visit gives.
    type Output;

    /// The visit, with the API's request type.
    fn visit<A: WireApi>(self) -> Self::Output;
}

fn s(value: &StrBytes) -> String {
    value.as_str().to_owned()
}

fn opt(value: &Option<StrBytes>) -> Option<String> {
    value.as_ref().map(s)
}

/// An id (or commit metadata, a type of the same kind) from the wire, sharing
/// the request frame's bytes instead of copying them. The coordinator copies
/// what it keeps, so no frame outlives its request.
fn id<T: TryFrom<Bytes> + for<'a> From<&'a str>>(value: &StrBytes) -> T {
    // `StrBytes` is UTF-8 already: the copy is never taken.
    T::try_from(Bytes::from(value.clone())).unwrap_or_else(|_| T::from(value.as_str()))
}

fn opt_id<T: TryFrom<Bytes> + for<'a> From<&'a str>>(value: &Option<StrBytes>) -> Option<T> {
    value.as_ref().map(id)
}

/// An id (or commit metadata) for the wire: its bytes, not a copy.
fn wire_id(value: impl Into<Bytes>) -> StrBytes {
    let bytes = value.into();
    // Every id is UTF-8 (`group_types::ids`): the empty answer is never given.
    StrBytes::from_utf8(bytes).unwrap_or_default()
}

fn sb(value: impl Into<String>) -> StrBytes {
    StrBytes::from_string(value.into())
}

fn osb(value: Option<String>) -> Option<StrBytes> {
    value.map(sb)
}

fn uuid(id: gt::TopicId) -> uuid::Uuid {
    uuid::Uuid::from_bytes(id.0)
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
