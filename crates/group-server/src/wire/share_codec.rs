//! The share API versions Kafka 4.2 serves that `kafka-protocol` 0.18 can neither read nor
//! write: ShareFetch v2 and ShareAcknowledge v2 (KIP-1206's acquire mode, KIP-1222's renew
//! acknowledgements), WriteShareGroupState v1, ReadShareGroupStateSummary v1 and
//! DescribeShareGroupOffsets v1 (KIP-1226's delivery complete count and lag); and
//! WriteTxnMarkers v2 (KIP-1228's transaction version), which is not a share API but
//! the same kind of gap.
//!
//! Each message is declared once, field by field as Kafka's JSON schema has it, with the
//! first version that carries each field; [`message!`] makes its encoder and decoder for
//! every version. What did not change keeps the crate's own types, read and written at the
//! last version the crate knows ([`Pinned`] parts, [`SameAfter`] messages). All of these
//! are flexible in every version: each struct ends in tagged fields, none of them known,
//! so unknown ones are skipped as Kafka skips them and none is written. Drop a declaration
//! once the crate reads its version. `super::offset_codec` declares OffsetCommit and
//! OffsetFetch v10 with the same macro.

use anyhow::{Result, bail, ensure};
use bytes::Bytes;
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::buf::{ByteBuf, ByteBufMut};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

/// A value written in its wire form at a message's `version` (flexible versions only:
/// compact strings and arrays).
pub(crate) trait Put {
    /// Writes the value.
    fn put<B: ByteBufMut>(&self, buf: &mut B, version: i16) -> Result<()>;
}

/// A value read from its wire form at a message's `version`. Apart from [`Put`]
/// because `kafka-protocol` decodes a request's parts only with its `broker` feature
/// and encodes them only with `client` (and a response's the other way round).
pub(crate) trait Get: Sized {
    /// Reads a value, refusing a body that ends too soon or lies about a length.
    fn get<B: ByteBuf>(buf: &mut B, version: i16) -> Result<Self>;
}

fn need<B: ByteBuf>(buf: &B, bytes: usize) -> Result<()> {
    ensure!(
        buf.remaining() >= bytes,
        "body truncated: {bytes} more bytes expected, {} left",
        buf.remaining()
    );
    Ok(())
}

macro_rules! fixed {
    ($($ty:ty: $put:ident, $get:ident;)*) => {$(
        impl Put for $ty {
            fn put<B: ByteBufMut>(&self, buf: &mut B, _: i16) -> Result<()> {
                buf.$put(*self);
                Ok(())
            }
        }
        impl Get for $ty {
            fn get<B: ByteBuf>(buf: &mut B, _: i16) -> Result<Self> {
                need(buf, std::mem::size_of::<$ty>())?;
                Ok(buf.$get())
            }
        }
    )*};
}

fixed! {
    i8: put_i8, get_i8;
    i16: put_i16, get_i16;
    i32: put_i32, get_i32;
    i64: put_i64, get_i64;
}

impl Put for bool {
    fn put<B: ByteBufMut>(&self, buf: &mut B, _: i16) -> Result<()> {
        buf.put_u8(u8::from(*self));
        Ok(())
    }
}

impl Get for bool {
    fn get<B: ByteBuf>(buf: &mut B, _: i16) -> Result<Self> {
        need(buf, 1)?;
        Ok(buf.get_u8() != 0)
    }
}

impl Put for uuid::Uuid {
    fn put<B: ByteBufMut>(&self, buf: &mut B, _: i16) -> Result<()> {
        buf.put_slice(self.as_bytes());
        Ok(())
    }
}

impl Get for uuid::Uuid {
    fn get<B: ByteBuf>(buf: &mut B, _: i16) -> Result<Self> {
        need(buf, 16)?;
        let mut id = [0; 16];
        buf.copy_to_slice(&mut id);
        Ok(uuid::Uuid::from_bytes(id))
    }
}

fn put_varint<B: ByteBufMut>(buf: &mut B, mut value: u32) {
    while value >= 0x80 {
        buf.put_u8((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    buf.put_u8(value as u8);
}

fn get_varint<B: ByteBuf>(buf: &mut B) -> Result<u32> {
    let mut value = 0u32;
    for shift in (0..35).step_by(7) {
        need(buf, 1)?;
        let byte = buf.get_u8();
        value |= u32::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    bail!("unsigned varint longer than 5 bytes")
}

/// A compact length (or count) `n` is written `n + 1`; 0 is null.
fn put_length<B: ByteBufMut>(buf: &mut B, length: Option<usize>) -> Result<()> {
    let encoded = match length {
        None => 0,
        Some(n) => u32::try_from(n)
            .ok()
            .and_then(|n| n.checked_add(1))
            .ok_or_else(|| anyhow::anyhow!("length {n} does not fit a compact length"))?,
    };
    put_varint(buf, encoded);
    Ok(())
}

/// A compact length, checked against what is left (every element takes a byte at least).
fn get_length<B: ByteBuf>(buf: &mut B) -> Result<Option<usize>> {
    match get_varint(buf)? {
        0 => Ok(None),
        n => {
            let n = (n - 1) as usize;
            need(buf, n)?;
            Ok(Some(n))
        }
    }
}

impl Put for Option<StrBytes> {
    fn put<B: ByteBufMut>(&self, buf: &mut B, _: i16) -> Result<()> {
        put_length(buf, self.as_ref().map(|s| s.len()))?;
        if let Some(s) = self {
            buf.put_slice(s.as_bytes());
        }
        Ok(())
    }
}

impl Get for Option<StrBytes> {
    fn get<B: ByteBuf>(buf: &mut B, _: i16) -> Result<Self> {
        let Some(length) = get_length(buf)? else { return Ok(None) };
        let bytes: Bytes = buf.try_get_bytes(length)?;
        Ok(Some(StrBytes::from_utf8(bytes)?))
    }
}

impl Put for StrBytes {
    fn put<B: ByteBufMut>(&self, buf: &mut B, version: i16) -> Result<()> {
        Some(self.clone()).put(buf, version)
    }
}

impl Get for StrBytes {
    fn get<B: ByteBuf>(buf: &mut B, version: i16) -> Result<Self> {
        <Option<StrBytes> as Get>::get(buf, version)?
            .ok_or_else(|| anyhow::anyhow!("null string where one is required"))
    }
}

impl<T: Put> Put for Vec<T> {
    fn put<B: ByteBufMut>(&self, buf: &mut B, version: i16) -> Result<()> {
        put_length(buf, Some(self.len()))?;
        self.iter().try_for_each(|item| item.put(buf, version))
    }
}

impl<T: Get> Get for Vec<T> {
    fn get<B: ByteBuf>(buf: &mut B, version: i16) -> Result<Self> {
        let length = get_length(buf)?.ok_or_else(|| anyhow::anyhow!("null array where one is required"))?;
        (0..length).map(|_| T::get(buf, version)).collect()
    }
}

impl<T: Put> Put for Option<Vec<T>> {
    fn put<B: ByteBufMut>(&self, buf: &mut B, version: i16) -> Result<()> {
        put_length(buf, self.as_ref().map(Vec::len))?;
        self.iter().flatten().try_for_each(|item| item.put(buf, version))
    }
}

impl<T: Get> Get for Option<Vec<T>> {
    fn get<B: ByteBuf>(buf: &mut B, version: i16) -> Result<Self> {
        let Some(length) = get_length(buf)? else { return Ok(None) };
        (0..length).map(|_| T::get(buf, version)).collect::<Result<_>>().map(Some)
    }
}

/// Writes no tagged fields.
pub(super) fn put_no_tags<B: ByteBufMut>(buf: &mut B) {
    put_varint(buf, 0);
}

/// Skips a struct's tagged fields: none of these messages has a known one.
pub(super) fn skip_tags<B: ByteBuf>(buf: &mut B) -> Result<()> {
    for _ in 0..get_varint(buf)? {
        let _tag = get_varint(buf)?;
        let size = get_varint(buf)? as usize;
        buf.try_get_bytes(size)?;
    }
    Ok(())
}

/// An unchanged part of a message, as `kafka-protocol` reads and writes it at version
/// `V` whatever the message's version.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Pinned<T, const V: i16>(pub(crate) T);

impl<T: Encodable, const V: i16> Put for Pinned<T, V> {
    fn put<B: ByteBufMut>(&self, buf: &mut B, _: i16) -> Result<()> {
        self.0.encode(buf, V)
    }
}

impl<T: Decodable, const V: i16> Get for Pinned<T, V> {
    fn get<B: ByteBuf>(buf: &mut B, _: i16) -> Result<Self> {
        T::decode(buf, V).map(Pinned)
    }
}

/// A message whose layout did not change after version `LAST`: `kafka-protocol` reads
/// and writes it at `min(version, LAST)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SameAfter<T, const LAST: i16>(pub(crate) T);

impl<T: Encodable, const LAST: i16> Encodable for SameAfter<T, LAST> {
    fn encode<B: ByteBufMut>(&self, buf: &mut B, version: i16) -> Result<()> {
        self.0.encode(buf, version.min(LAST))
    }
    fn compute_size(&self, version: i16) -> Result<usize> {
        self.0.compute_size(version.min(LAST))
    }
}

impl<T: Decodable, const LAST: i16> Decodable for SameAfter<T, LAST> {
    fn decode<B: ByteBuf>(buf: &mut B, version: i16) -> Result<Self> {
        T::decode(buf, version.min(LAST)).map(SameAfter)
    }
}

/// A version `message!` reads or writes must be one it declares.
pub(super) fn check_version(name: &str, version: i16, versions: std::ops::RangeInclusive<i16>) -> Result<()> {
    ensure!(versions.contains(&version), "{name} v{version} is not one of v{versions:?}");
    Ok(())
}

/// Declares messages (or their parts) field by field: `name: Type = first_version`, or
/// `= first ..= last` for a field a later version dropped, with `or default` for what a
/// version without the field reads as (else `Default`). A
/// request (or a part of one) is decoded, and encoded only by the tests; a response
/// the other way round: `kafka-protocol` gives its parts' codecs so, by feature.
macro_rules! message {
    ($(
        $(#[$meta:meta])*
        pub(crate) struct $name:ident: $min:literal ..= $max:literal as $kind:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident: $ty:ty = $since:literal $(..= $until:literal)? $(or $default:expr)?,
            )*
        }
    )*) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub(crate) struct $name {
            $($(#[$fmeta])* pub(crate) $field: $ty,)*
        }

        message!(@$kind $name: $min..=$max { $($field: $since $(..= $until)? $(or $default)?,)* });
    )*};
    // A field's last version: the one it names, else every one.
    (@last) => { i16::MAX };
    (@last $until:literal) => { $until };
    (@request $name:ident: $min:literal ..= $max:literal { $($rest:tt)* }) => {
        message!(@get [] $name: $min..=$max { $($rest)* });
        message!(@put [#[cfg(test)]] $name: $min..=$max { $($rest)* });
    };
    (@response $name:ident: $min:literal ..= $max:literal { $($rest:tt)* }) => {
        message!(@get [#[cfg(test)]] $name: $min..=$max { $($rest)* });
        message!(@put [] $name: $min..=$max { $($rest)* });
    };
    (@put [$($cfg:tt)*] $name:ident: $min:literal ..= $max:literal {
        $($field:ident: $since:literal $(..= $until:literal)? $(or $default:expr)?,)*
    }) => {
        $($cfg)*
        impl Put for $name {
            fn put<B: ByteBufMut>(&self, buf: &mut B, version: i16) -> Result<()> {
                check_version(stringify!($name), version, $min..=$max)?;
                $(if ($since..=message!(@last $($until)?)).contains(&version) {
                    self.$field.put(buf, version)?;
                })*
                put_no_tags(buf);
                Ok(())
            }
        }

        $($cfg)*
        impl Encodable for $name {
            fn encode<B: ByteBufMut>(&self, buf: &mut B, version: i16) -> Result<()> {
                self.put(buf, version)
            }

            fn compute_size(&self, version: i16) -> Result<usize> {
                // Only responses of admin APIs and test requests are sized: writing
                // them once to count is simpler than a second walk that must agree.
                let mut counted = Vec::new();
                self.put(&mut counted, version)?;
                Ok(counted.len())
            }
        }
    };
    (@get [$($cfg:tt)*] $name:ident: $min:literal ..= $max:literal {
        $($field:ident: $since:literal $(..= $until:literal)? $(or $default:expr)?,)*
    }) => {
        $($cfg)*
        impl Get for $name {
            fn get<B: ByteBuf>(buf: &mut B, version: i16) -> Result<Self> {
                check_version(stringify!($name), version, $min..=$max)?;
                let mut out = $name::default();
                $(if ($since..=message!(@last $($until)?)).contains(&version) {
                    out.$field = Get::get(buf, version)?;
                } $(else {
                    out.$field = $default;
                })?)*
                skip_tags(buf)?;
                Ok(out)
            }
        }

        $($cfg)*
        impl Decodable for $name {
            fn decode<B: ByteBuf>(buf: &mut B, version: i16) -> Result<Self> {
                Self::get(buf, version)
            }
        }
    };
}

/// For the other hand-written messages (`super::offset_codec`).
pub(super) use message;

message! {
    /// ShareFetch's request (key 78), v1-v2.
    pub(crate) struct ShareFetchRequest: 1..=2 as request {
        group_id: Option<StrBytes> = 0,
        member_id: Option<StrBytes> = 0,
        share_session_epoch: i32 = 0,
        max_wait_ms: i32 = 0,
        min_bytes: i32 = 0,
        max_bytes: i32 = 0,
        max_records: i32 = 1,
        batch_size: i32 = 1,
        /// 0 batch-optimized, 1 record-limit (KIP-1206).
        share_acquire_mode: i8 = 2,
        /// Whether the acknowledgements hold renew types (KIP-1222).
        is_renew_ack: bool = 2,
        topics: Vec<Pinned<kp::share_fetch_request::FetchTopic, 1>> = 0,
        forgotten_topics_data: Vec<Pinned<kp::share_fetch_request::ForgottenTopic, 1>> = 0,
    }

    /// ShareAcknowledge's request (key 79), v1-v2.
    pub(crate) struct ShareAcknowledgeRequest: 1..=2 as request {
        group_id: Option<StrBytes> = 0,
        member_id: Option<StrBytes> = 0,
        share_session_epoch: i32 = 0,
        /// Whether the acknowledgements hold renew types (KIP-1222).
        is_renew_ack: bool = 2,
        topics: Vec<Pinned<kp::share_acknowledge_request::AcknowledgeTopic, 1>> = 0,
    }

    /// ShareAcknowledge's response (key 79), v1-v2.
    pub(crate) struct ShareAcknowledgeResponse: 1..=2 as response {
        throttle_time_ms: i32 = 0,
        error_code: i16 = 0,
        error_message: Option<StrBytes> = 0,
        /// How long acquired records stay locked (v2).
        acquisition_lock_timeout_ms: i32 = 2,
        responses: Vec<Pinned<kp::share_acknowledge_response::ShareAcknowledgeTopicResponse, 1>> = 0,
        node_endpoints: Vec<Pinned<kp::share_acknowledge_response::NodeEndpoint, 1>> = 0,
    }

    /// WriteShareGroupState's request (key 85), v0-v1.
    pub(crate) struct WriteShareGroupStateRequest: 0..=1 as request {
        group_id: StrBytes = 0,
        topics: Vec<WriteStateData> = 0,
    }

    /// One topic of a WriteShareGroupState.
    pub(crate) struct WriteStateData: 0..=1 as request {
        topic_id: uuid::Uuid = 0,
        partitions: Vec<WriteStatePartition> = 0,
    }

    /// One share partition of a WriteShareGroupState.
    pub(crate) struct WriteStatePartition: 0..=1 as request {
        partition: i32 = 0,
        state_epoch: i32 = 0,
        leader_epoch: i32 = 0,
        start_offset: i64 = 0,
        /// Offsets at or above the start offset whose delivery completed; -1 unknown
        /// (KIP-1226, v1).
        delivery_complete_count: i32 = 1 or -1,
        state_batches: Vec<Pinned<kp::write_share_group_state_request::StateBatch, 0>> = 0,
    }

    /// ReadShareGroupStateSummary's response (key 87), v0-v1.
    pub(crate) struct ReadShareGroupStateSummaryResponse: 0..=1 as response {
        results: Vec<ReadStateSummaryResult> = 0,
    }

    /// One topic of a ReadShareGroupStateSummary answer.
    pub(crate) struct ReadStateSummaryResult: 0..=1 as response {
        topic_id: uuid::Uuid = 0,
        partitions: Vec<ReadStateSummaryPartition> = 0,
    }

    /// One share partition of a ReadShareGroupStateSummary answer.
    pub(crate) struct ReadStateSummaryPartition: 0..=1 as response {
        partition: i32 = 0,
        error_code: i16 = 0,
        error_message: Option<StrBytes> = 0,
        state_epoch: i32 = 0,
        leader_epoch: i32 = 0,
        start_offset: i64 = 0,
        /// Offsets at or above the start offset whose delivery completed; -1 unknown
        /// (KIP-1226, v1).
        delivery_complete_count: i32 = 1 or -1,
    }

    /// DescribeShareGroupOffsets' response (key 90), v0-v1.
    pub(crate) struct DescribeShareGroupOffsetsResponse: 0..=1 as response {
        throttle_time_ms: i32 = 0,
        groups: Vec<DescribeShareGroupOffsetsGroup> = 0,
    }

    /// One group of a DescribeShareGroupOffsets answer.
    pub(crate) struct DescribeShareGroupOffsetsGroup: 0..=1 as response {
        group_id: StrBytes = 0,
        topics: Vec<DescribeShareGroupOffsetsTopic> = 0,
        error_code: i16 = 0,
        error_message: Option<StrBytes> = 0,
    }

    /// One topic of a DescribeShareGroupOffsets answer.
    pub(crate) struct DescribeShareGroupOffsetsTopic: 0..=1 as response {
        topic_name: StrBytes = 0,
        topic_id: uuid::Uuid = 0,
        partitions: Vec<DescribeShareGroupOffsetsPartition> = 0,
    }

    /// One share partition of a DescribeShareGroupOffsets answer.
    pub(crate) struct DescribeShareGroupOffsetsPartition: 0..=1 as response {
        partition_index: i32 = 0,
        start_offset: i64 = 0,
        leader_epoch: i32 = 0,
        /// Records not yet delivered and acknowledged; -1 unknown (KIP-1226, v1).
        lag: i64 = 1 or -1,
        error_code: i16 = 0,
        error_message: Option<StrBytes> = 0,
    }
}

message! {
    /// WriteTxnMarkers' request (key 27), v1-v2: Kafka 4.3 serves v2 (KIP-1228).
    pub(crate) struct WriteTxnMarkersRequest: 1..=2 as request {
        markers: Vec<WritableTxnMarker> = 1,
    }

    /// One marker of a WriteTxnMarkers.
    pub(crate) struct WritableTxnMarker: 1..=2 as request {
        producer_id: i64 = 1,
        producer_epoch: i16 = 1,
        /// `true` COMMIT, `false` ABORT.
        transaction_result: bool = 1,
        topics: Vec<Pinned<kp::write_txn_markers_request::WritableTxnMarkerTopic, 1>> = 1,
        coordinator_epoch: i32 = 1,
        /// The transaction version of the marker (0 and 1 legacy, 2 TV2; KIP-1228, v2).
        transaction_version: i8 = 2,
    }
}

/// WriteTxnMarkers' response: v2 has v1's layout.
pub(crate) type WriteTxnMarkersResponse = SameAfter<kp::WriteTxnMarkersResponse, 1>;

/// ShareFetch's response: v2 has v1's layout.
pub(crate) type ShareFetchResponse = SameAfter<kp::ShareFetchResponse, 1>;

/// ReadShareGroupStateSummary's request: v1 has v0's layout.
pub(crate) type ReadShareGroupStateSummaryRequest = SameAfter<kp::ReadShareGroupStateSummaryRequest, 0>;

/// DescribeShareGroupOffsets' request: v1 has v0's layout.
pub(crate) type DescribeShareGroupOffsetsRequest = SameAfter<kp::DescribeShareGroupOffsetsRequest, 0>;

#[cfg(test)]
#[path = "share_codec_tests.rs"]
pub(super) mod tests;
