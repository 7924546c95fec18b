//! The legacy value format, version 1: what builds before the shared record
//! codec wrote for offsets, group records and (in [`consumer`]) KIP-848
//! consumer-group records. One version byte, then bincode 2.0.1 (serde path)
//! with the one configuration in [`CONFIG`]. Read for stores those builds
//! wrote; only tests and the fuzz seeds still write it.
//!
//! The stored shapes are this module's own structs, not the public types, so
//! a field added to `OffsetAndMetadata` or `GroupMetadataRecord` cannot change
//! how old values read; the golden-bytes tests below pin them.

use std::borrow::Cow;

use bincode::config::{Configuration, Limit, LittleEndian, Varint};
use bytes::Bytes;
use group_offsets::{GroupMetadataRecord, MemberMetadataRecord};
use group_types::{CommitMetadata, OffsetAndMetadata};
use serde::{Deserialize, Serialize};

pub(crate) mod consumer;

pub(crate) use self::consumer::{decode_consumer, encode_consumer};

/// The format version of legacy offset values.
pub(crate) const OFFSET_FORMAT_V1: u8 = 1;

/// The format version of legacy group metadata values.
pub(crate) const GROUP_FORMAT_V1: u8 = 1;

/// Bounds what a (possibly corrupt) length prefix may make the decoder read.
const MAX_VALUE_BYTES: usize = 64 * 1024 * 1024;

/// The one bincode configuration: little-endian, varint integers, bounded.
/// Changing it changes the format of every stored value.
const CONFIG: Configuration<LittleEndian, Varint, Limit<MAX_VALUE_BYTES>> =
    bincode::config::standard().with_limit::<MAX_VALUE_BYTES>();

/// Why a legacy value could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DecodeError {
    /// The version byte is not the legacy format's.
    #[error("unknown format version {0}")]
    UnknownVersion(u8),
    /// The value has no version byte.
    #[error("empty value")]
    Empty,
    /// The body is not a bincode value of its kind.
    #[error("not a bincode value of its kind: {0}")]
    Bincode(#[source] bincode::error::DecodeError),
    /// Bytes follow the value.
    #[error("{0} trailing bytes after the value")]
    Trailing(usize),
    /// A group-level consumer-group record type under a key with a sub-key (no build writes one).
    #[error("record type {record_type} is keyed by the group alone, but the key has the sub-key {sub_key:?}")]
    SubKeyOnGroupRecord {
        /// The key's record type.
        record_type: i16,
        /// The key's sub-key.
        sub_key: String,
    },
    /// A consumer-group record type no build writes.
    #[error("unknown consumer-group record type {0}")]
    UnknownRecordType(i16),
}

/// Why a value could not be written in the legacy format.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EncodeError {
    /// bincode refused it.
    #[error("bincode cannot encode it: {0}")]
    Bincode(#[source] bincode::error::EncodeError),
    /// Longer than a legacy value may be.
    #[error("the value is {0} bytes, more than the {MAX_VALUE_BYTES} a value may hold")]
    TooLarge(usize),
    /// A record type that came after the legacy format (share groups).
    #[error("record type {0} has no legacy form")]
    NoLegacyForm(i16),
}

/// The stored shape of an offset, format version 1.
#[derive(Serialize, Deserialize)]
struct OffsetV1<'a> {
    offset: i64,
    leader_epoch: Option<i32>,
    metadata: Cow<'a, str>,
    commit_time: i64,
    expire_time: Option<i64>,
}

/// The stored shape of a group record, format version 1. Borrowed to encode
/// (the record's ids and payloads are written where they are), owned once decoded.
#[derive(Serialize, Deserialize)]
struct GroupV1<'a> {
    group_id: Cow<'a, str>,
    protocol_type: Option<Cow<'a, str>>,
    generation_id: i32,
    protocol_name: Option<Cow<'a, str>>,
    leader_id: Option<Cow<'a, str>>,
    state_timestamp_ms: Option<i64>,
    members: Vec<MemberV1<'a>>,
}

/// The stored shape of a member, format version 1.
#[derive(Serialize, Deserialize)]
struct MemberV1<'a> {
    member_id: Cow<'a, str>,
    group_instance_id: Option<Cow<'a, str>>,
    client_id: Cow<'a, str>,
    client_host: Cow<'a, str>,
    rebalance_timeout_ms: i32,
    session_timeout_ms: i32,
    subscription: Cow<'a, [u8]>,
    assignment: Cow<'a, [u8]>,
}

/// Encodes an offset value.
pub(crate) fn encode_offset(offset: &OffsetAndMetadata) -> Result<Vec<u8>, EncodeError> {
    let stored = OffsetV1 {
        offset: offset.offset,
        leader_epoch: offset.leader_epoch,
        metadata: Cow::Borrowed(&offset.metadata),
        commit_time: offset.commit_time,
        expire_time: offset.expire_time,
    };
    encode(OFFSET_FORMAT_V1, &stored)
}

/// Decodes an offset value.
pub(crate) fn decode_offset(bytes: &[u8]) -> Result<OffsetAndMetadata, DecodeError> {
    let (version, body) = split_version(bytes)?;
    match version {
        OFFSET_FORMAT_V1 => {
            let stored: OffsetV1<'_> = decode(body)?;
            Ok(OffsetAndMetadata {
                offset: stored.offset,
                leader_epoch: stored.leader_epoch,
                // The decoded string is taken over, not copied.
                metadata: CommitMetadata::from(stored.metadata.into_owned()),
                commit_time: stored.commit_time,
                expire_time: stored.expire_time,
            })
        }
        other => Err(DecodeError::UnknownVersion(other)),
    }
}

/// Encodes a group metadata value.
pub(crate) fn encode_group(record: &GroupMetadataRecord) -> Result<Vec<u8>, EncodeError> {
    let stored = GroupV1 {
        group_id: Cow::Borrowed(&record.group_id),
        protocol_type: record.protocol_type.as_deref().map(Cow::Borrowed),
        generation_id: record.generation_id,
        protocol_name: record.protocol_name.as_deref().map(Cow::Borrowed),
        leader_id: record.leader_id.as_deref().map(Cow::Borrowed),
        state_timestamp_ms: record.state_timestamp_ms,
        members: record
            .members
            .iter()
            .map(|m| MemberV1 {
                member_id: Cow::Borrowed(&m.member_id),
                group_instance_id: m.group_instance_id.as_deref().map(Cow::Borrowed),
                client_id: Cow::Borrowed(&m.client_id),
                client_host: Cow::Borrowed(&m.client_host),
                rebalance_timeout_ms: m.rebalance_timeout_ms,
                session_timeout_ms: m.session_timeout_ms,
                subscription: Cow::Borrowed(&m.subscription),
                assignment: Cow::Borrowed(&m.assignment),
            })
            .collect(),
    };
    encode(GROUP_FORMAT_V1, &stored)
}

/// Decodes a group metadata value. The decoder's strings and byte vectors
/// become the record's ids and payloads without another copy.
pub(crate) fn decode_group(bytes: &[u8]) -> Result<GroupMetadataRecord, DecodeError> {
    fn owned<T: From<String>>(s: Cow<'_, str>) -> T {
        T::from(s.into_owned())
    }
    let (version, body) = split_version(bytes)?;
    match version {
        GROUP_FORMAT_V1 => {
            let stored: GroupV1<'_> = decode(body)?;
            Ok(GroupMetadataRecord {
                group_id: owned(stored.group_id),
                protocol_type: stored.protocol_type.map(owned),
                generation_id: stored.generation_id,
                protocol_name: stored.protocol_name.map(owned),
                leader_id: stored.leader_id.map(owned),
                state_timestamp_ms: stored.state_timestamp_ms,
                members: stored
                    .members
                    .into_iter()
                    .map(|m| MemberMetadataRecord {
                        member_id: owned(m.member_id),
                        group_instance_id: m.group_instance_id.map(owned),
                        client_id: m.client_id.into_owned(),
                        client_host: m.client_host.into_owned(),
                        rebalance_timeout_ms: m.rebalance_timeout_ms,
                        session_timeout_ms: m.session_timeout_ms,
                        subscription: Bytes::from(m.subscription.into_owned()),
                        assignment: Bytes::from(m.assignment.into_owned()),
                    })
                    .collect(),
            })
        }
        other => Err(DecodeError::UnknownVersion(other)),
    }
}

fn encode<T: Serialize>(version: u8, value: &T) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::with_capacity(32);
    out.push(version);
    bincode::serde::encode_into_std_write(value, &mut out, CONFIG).map_err(EncodeError::Bincode)?;
    // The limit in CONFIG only guards decoding: refuse what could not be read back.
    if out.len() - 1 > MAX_VALUE_BYTES {
        return Err(EncodeError::TooLarge(out.len()));
    }
    Ok(out)
}

fn split_version(bytes: &[u8]) -> Result<(u8, &[u8]), DecodeError> {
    bytes.split_first().map(|(v, body)| (*v, body)).ok_or(DecodeError::Empty)
}

fn decode<'de, T: Deserialize<'de>>(body: &'de [u8]) -> Result<T, DecodeError> {
    let (value, read) =
        bincode::serde::borrow_decode_from_slice(body, CONFIG).map_err(DecodeError::Bincode)?;
    if read != body.len() {
        return Err(DecodeError::Trailing(body.len() - read));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample_offset() -> OffsetAndMetadata {
        OffsetAndMetadata {
            offset: 42,
            leader_epoch: Some(7),
            metadata: "m".into(),
            commit_time: 1_700_000_000_000,
            expire_time: None,
        }
    }

    fn sample_group() -> GroupMetadataRecord {
        GroupMetadataRecord {
            group_id: "g".into(),
            protocol_type: Some("consumer".into()),
            generation_id: 3,
            protocol_name: Some("range".into()),
            leader_id: Some("m1".into()),
            state_timestamp_ms: Some(-1),
            members: vec![MemberMetadataRecord {
                member_id: "m1".into(),
                group_instance_id: None,
                client_id: "c".to_owned(),
                client_host: "/h".to_owned(),
                rebalance_timeout_ms: 300_000,
                session_timeout_ms: 45_000,
                subscription: vec![0, 1].into(),
                assignment: Bytes::new(),
            }],
        }
    }

    // Golden bytes: if either of these fails, the on-disk format changed.
    // Add a new format version instead of editing the expected bytes.
    const OFFSET_V1_GOLDEN: &[u8] = &[
        1,  // format version
        84, // offset 42, zigzag varint
        1, 14, // Some(7), zigzag varint
        1, b'm', // metadata: length 1, "m"
        253, 0, 208, 202, 159, 23, 3, 0, 0, // commit_time 1.7e12, zigzag 3.4e12: u64 marker, then LE
        0, // expire_time None
    ];

    const GROUP_V1_GOLDEN: &[u8] = &[
        1, // format version
        1, b'g', // group_id
        1, 8, b'c', b'o', b'n', b's', b'u', b'm', b'e', b'r', // protocol_type Some("consumer")
        6,    // generation_id 3
        1, 5, b'r', b'a', b'n', b'g', b'e', // protocol_name Some("range")
        1, 2, b'm', b'1', // leader_id Some("m1")
        1, 1, // state_timestamp_ms Some(-1)
        1, // one member
        2, b'm', b'1', // member_id
        0,    // group_instance_id None
        1, b'c', // client_id
        2, b'/', b'h', // client_host
        252, 192, 39, 9, 0, // rebalance_timeout_ms 300_000, zigzag 600_000: u32 marker, then LE
        252, 144, 95, 1, 0, // session_timeout_ms 45_000, zigzag 90_000
        2, 0, 1, // subscription: length 2, bytes
        0, // assignment: empty
    ];

    #[test]
    fn offset_v1_bytes_are_pinned() {
        assert_eq!(encode_offset(&sample_offset()).unwrap(), OFFSET_V1_GOLDEN);
        assert_eq!(decode_offset(OFFSET_V1_GOLDEN).unwrap(), sample_offset());
    }

    #[test]
    fn group_v1_bytes_are_pinned() {
        assert_eq!(encode_group(&sample_group()).unwrap(), GROUP_V1_GOLDEN);
        assert_eq!(decode_group(GROUP_V1_GOLDEN).unwrap(), sample_group());
    }

    #[test]
    fn unknown_versions_are_reported() {
        let mut bytes = OFFSET_V1_GOLDEN.to_vec();
        bytes[0] = 2;
        assert!(matches!(decode_offset(&bytes), Err(DecodeError::UnknownVersion(2))));
        let mut bytes = GROUP_V1_GOLDEN.to_vec();
        bytes[0] = 0;
        assert!(matches!(decode_group(&bytes), Err(DecodeError::UnknownVersion(0))));
    }

    #[test]
    fn truncated_and_padded_values_are_corrupt() {
        assert!(matches!(decode_offset(&[]), Err(DecodeError::Empty)));
        for len in 1..OFFSET_V1_GOLDEN.len() {
            assert!(
                matches!(decode_offset(&OFFSET_V1_GOLDEN[..len]), Err(DecodeError::Bincode(_))),
                "prefix of {len} bytes decoded"
            );
        }
        let mut padded = OFFSET_V1_GOLDEN.to_vec();
        padded.push(0);
        assert!(matches!(decode_offset(&padded), Err(DecodeError::Trailing(1))));
    }

    #[test]
    fn a_value_too_big_to_read_back_is_refused() {
        let value = OffsetAndMetadata { metadata: "x".repeat(MAX_VALUE_BYTES).into(), ..sample_offset() };
        assert!(matches!(encode_offset(&value), Err(EncodeError::TooLarge(_))));
    }

    #[test]
    fn a_huge_length_prefix_is_corrupt_not_an_allocation() {
        // Version, offset 0, no epoch, then a metadata length of u64::MAX.
        let bytes = [1, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255, 255];
        let error = decode_offset(&bytes).unwrap_err();
        assert!(matches!(error, DecodeError::Bincode(_)), "{error:?}");
        assert!(std::error::Error::source(&error).is_some(), "bincode's error is kept");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn offsets_round_trip(
            offset in any::<i64>(),
            leader_epoch in any::<Option<i32>>(),
            metadata in ".{0,40}",
            commit_time in any::<i64>(),
            expire_time in any::<Option<i64>>(),
        ) {
            let value = OffsetAndMetadata { offset, leader_epoch, metadata: metadata.into(), commit_time, expire_time };
            let bytes = encode_offset(&value).unwrap();
            prop_assert_eq!(bytes[0], OFFSET_FORMAT_V1);
            prop_assert_eq!(decode_offset(&bytes).ok(), Some(value));
        }

        #[test]
        fn arbitrary_bytes_give_a_value_or_a_typed_error(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            for result in [decode_offset(&bytes).map(|_| ()), decode_group(&bytes).map(|_| ())] {
                match result {
                    Ok(()) => prop_assert_eq!(bytes[0], 1),
                    Err(DecodeError::UnknownVersion(v)) => prop_assert!(v != 1 && v == bytes[0]),
                    Err(e) => prop_assert!(!e.to_string().is_empty()),
                }
            }
        }
    }
}
