//! The group APIs in `kafka-protocol`'s types (feature `kafka-protocol`): for a front
//! end that decodes Kafka's wire with that crate, as `group-server` does.
//!
//! A request that implements [`WireRequest`] carries, in its message's own file, its
//! conversions from `kafka-protocol`'s request and to its response, version by version,
//! and its request's [`Layout`](layout::Layout): a body must pass [`layout::check_body`]
//! before `kafka-protocol` decodes it, because the crate sizes arrays from untrusted
//! counts (dependencies.md 2.4).
//!
//! Decoding is lossless for every field the coordinator reads; encoding leaves out (or
//! fills with the wire default) what a version cannot carry, because the crate refuses to
//! encode a set field its version lacks.
//!
//! ```
//! # #[cfg(feature = "kafka-protocol")] {
//! use bytes::{Bytes, BytesMut};
//! use group_types::wire::{Header, WireRequest, layout};
//! use group_types::ListGroupsRequest;
//! use kafka_protocol::messages::{ApiKey, ListGroupsRequest as Wire};
//! use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
//!
//! // What a client sends: ListGroups v5, Stable classic groups only.
//! let sent = Wire::default()
//!     .with_states_filter(vec![StrBytes::from_static_str("Stable")])
//!     .with_types_filter(vec![StrBytes::from_static_str("classic")]);
//! let mut body = BytesMut::new();
//! sent.encode(&mut body, 5)?;
//! let mut body = body.freeze();
//!
//! // Walked first, then decoded, then converted.
//! layout::check_body(Some(ListGroupsRequest::LAYOUT), ApiKey::ListGroups as i16, 5, &body)?;
//! let wire = Wire::decode(&mut body, 5)?;
//! let request = ListGroupsRequest::from_wire(&wire, &Header::new(5, "client", "/10.0.0.1"));
//! assert_eq!(request.states_filter, ["Stable"]);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod layout;

use bytes::Bytes;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

/// A group API's request as Kafka's wire carries it.
pub trait WireRequest: Sized {
    /// The request as `kafka-protocol` decodes it.
    type Wire: Decodable;
    /// The coordinator's answer.
    type Response;
    /// The answer as `kafka-protocol` encodes it.
    type WireResponse: Encodable;

    /// The request's layout: [`layout::check_body`] checks a body against it before
    /// `Wire` decodes it.
    const LAYOUT: layout::Layout;

    /// The request, from what the client sent.
    fn from_wire(wire: &Self::Wire, header: &Header<'_>) -> Self;

    /// The answer, for the wire at `version`.
    fn to_wire(response: Self::Response, version: i16) -> Self::WireResponse;

    /// A request for `version` with non-empty arrays and strings and (where the version
    /// has them) tagged fields: what a test encodes with `kafka-protocol` to check
    /// [`LAYOUT`](Self::LAYOUT) against, field by field.
    fn sample(version: i16) -> Self::Wire;
}

/// What a request's conversion knows besides its body: the version and the
/// connection's client.
#[derive(Debug, Clone, Copy)]
pub struct Header<'a> {
    /// The request's version.
    pub version: i16,
    /// The client id of the request header.
    pub client_id: &'a str,
    /// The client's address as Kafka reports it (`/host`).
    pub client_host: &'a str,
}

impl<'a> Header<'a> {
    /// A header of `version` from `client_id` at `client_host`.
    pub fn new(version: i16, client_id: &'a str, client_host: &'a str) -> Header<'a> {
        Header { version, client_id, client_host }
    }
}

/// A string from the wire.
pub fn s(value: &StrBytes) -> String {
    value.as_str().to_owned()
}

/// An optional string from the wire.
pub fn opt(value: &Option<StrBytes>) -> Option<String> {
    value.as_ref().map(s)
}

/// An id (or commit metadata, a type of the same kind) from the wire, sharing
/// the request frame's bytes instead of copying them. The coordinator copies
/// what it keeps, so no frame outlives its request.
pub fn id<T: TryFrom<Bytes> + for<'a> From<&'a str>>(value: &StrBytes) -> T {
    // `StrBytes` is UTF-8 already: the copy is never taken.
    T::try_from(Bytes::from(value.clone())).unwrap_or_else(|_| T::from(value.as_str()))
}

/// An optional id from the wire (see [`id`]).
pub fn opt_id<T: TryFrom<Bytes> + for<'a> From<&'a str>>(value: &Option<StrBytes>) -> Option<T> {
    value.as_ref().map(id)
}

/// An id (or commit metadata) for the wire: its bytes, not a copy.
pub fn wire_id(value: impl Into<Bytes>) -> StrBytes {
    let bytes = value.into();
    // Every id is UTF-8 (`crate::ids`): the empty answer is never given.
    StrBytes::from_utf8(bytes).unwrap_or_default()
}

/// A string for the wire.
pub fn sb(value: impl Into<String>) -> StrBytes {
    StrBytes::from_string(value.into())
}

/// An optional string for the wire.
pub fn osb(value: Option<String>) -> Option<StrBytes> {
    value.map(sb)
}

/// A topic id for the wire.
pub fn uuid(id: crate::TopicId) -> uuid::Uuid {
    uuid::Uuid::from_bytes(id.0)
}
