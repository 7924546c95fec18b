//! The value formats: log entries (an inline batch of records, a manifest of
//! staged chunks, a void, a revocation) and snapshot metadata. The records
//! themselves are `group_offsets::codec`'s, the record codec every engine
//! shares; this module frames them.
//!
//! A log entry or a snapshot starts with its format version, the oldest
//! that holds its records: [`FORMAT_V1`] for offsets and classic groups
//! only, else the shared codec's ([`FORMAT_V2`] with pending transactional
//! offsets, [`FORMAT_V3`] with a consumer-group record), so a build that
//! knows only an older format refuses exactly the values it cannot read.
//! Formats 1 and 2 share one body; format 3 is the shared codec's.
//! Every length is checked against the bytes left before anything is
//! allocated, so corrupt bytes give a [`DecodeError`], never a panic.

use group_offsets::Record;
use group_offsets::codec::{self as records_codec, Reader, put_uvarint};

#[cfg(test)]
mod fixture;

/// The format version of every value that holds no consumer-group record.
pub(crate) const FORMAT_V1: u8 = 1;

/// Format 1 plus consumer-group records before Kafka 4.3's fields and
/// pending transactional offsets: the shared codec's format 2.
pub(crate) const FORMAT_V2: u8 = records_codec::FORMAT_V2;

/// The shared codec's format 3: consumer-group records with Kafka 4.3's fields.
pub(crate) const FORMAT_V3: u8 = records_codec::FORMAT_V3;

const ENTRY_BATCH: u8 = 0;
const ENTRY_MANIFEST: u8 = 1;
const ENTRY_VOID: u8 = 2;
const ENTRY_REVOKE: u8 = 3;

/// Why a stored value could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DecodeError {
    /// The bytes are not a value of the record codec (or its framing).
    #[error(transparent)]
    Codec(#[from] records_codec::DecodeError),
    /// A log entry of a kind this build does not know.
    #[error("unknown entry kind {0}")]
    UnknownEntryKind(u8),
    /// A chunk count over `u32`.
    #[error("chunk count {0} over u32")]
    ChunkCount(u64),
    /// An epoch value that is not 20 decimal digits of a `u64`.
    #[error(transparent)]
    Epoch(#[from] crate::keys::EpochError),
    /// A key under the log prefix that names no sequence number.
    #[error("not a log key")]
    NotLogKey,
    /// Chunks that do not match their manifest.
    #[error("chunks under {dir}: {problem}")]
    Chunks {
        /// The chunks' directory.
        dir: String,
        /// What does not match.
        problem: ChunkProblem,
    },
}

/// How chunks fail to match their manifest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ChunkProblem {
    /// Chunks missing or extra.
    #[error("{found} chunks found, {expected} expected")]
    Count { found: usize, expected: u32 },
    /// Their length.
    #[error("the chunks hold {found} bytes, {expected} expected")]
    Length { found: usize, expected: u64 },
    /// Their checksum.
    #[error("the chunks' checksum does not match")]
    Checksum,
}

impl DecodeError {
    /// The version byte found, when the value names a format this build does not know.
    pub(crate) fn unknown_version(&self) -> Option<u8> {
        match self {
            DecodeError::Codec(records_codec::DecodeError::UnknownVersion(v)) => Some(*v),
            _ => None,
        }
    }
}

/// One log entry, as stored under `log/{seq}`. Every entry carries the nonce
/// of the append that wrote it, so a writer whose transaction timed out can
/// tell its own entry from another writer's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The format version: [`records_format`] of the records it carries
    /// (inline or staged), [`FORMAT_V1`] for voids and revocations.
    pub(crate) format: u8,
    /// Unique per append attempt of a store instance.
    pub(crate) nonce: u64,
    /// What the entry holds.
    pub(crate) body: EntryBody,
}

/// What a log entry holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EntryBody {
    /// The encoded records of the batch ([`encode_records`]).
    Batch(Vec<u8>),
    /// The batch was too large for one request: its encoded records are
    /// `chunks` staged keys under `stage/{seq}/{nonce}/`, `len` bytes in all,
    /// with this FNV-1a checksum.
    Manifest { chunks: u32, len: u64, checksum: u64 },
    /// A sequence number claimed by a writer that could not find out whether
    /// its own append there committed: it holds nothing, and it guarantees the
    /// lost append can never commit later.
    Void,
    /// Cancels the entry at this sequence number: an append that committed
    /// after its writer had reported it failed.
    Revoke(u64),
}

/// The snapshot metadata under `snapshot`: which chunks hold the partition's
/// live records, and the last log sequence number they include.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SnapshotMeta {
    /// The format version: [`records_format`] of the snapshot's records.
    pub(crate) format: u8,
    /// The last sequence number the snapshot covers.
    pub(crate) covered: u64,
    /// The nonce naming its chunk keys, `snap/{covered}/{nonce}/{i}`.
    pub(crate) nonce: u64,
    /// How many chunks.
    pub(crate) chunks: u32,
    /// The length of the chunks' concatenation.
    pub(crate) len: u64,
    /// FNV-1a 64 of that concatenation.
    pub(crate) checksum: u64,
}

/// FNV-1a, 64 bits: detects chunks that do not belong together (a partial
/// cleanup, a stray write), not an attacker.
pub(crate) fn checksum(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The format version a value holding `records` is written in: the oldest
/// that can hold them.
pub(crate) fn records_format(records: &[Record]) -> u8 {
    // Format 1 knows tags 0 to 3 only: pending transactional offsets need
    // format 2, consumer records the shared codec's own choice (format 3).
    let v1 = |r: &Record| {
        matches!(
            r,
            Record::Group(_)
                | Record::GroupTombstone { .. }
                | Record::Offset { .. }
                | Record::OffsetTombstone { .. }
        )
    };
    if records.iter().all(v1) { FORMAT_V1 } else { records_codec::format_of(records) }
}

/// Checks a value's version byte: the formats this build reads.
fn check_format(version: u8) -> Result<u8, DecodeError> {
    match version {
        FORMAT_V1 | FORMAT_V2 | FORMAT_V3 => Ok(version),
        other => Err(records_codec::DecodeError::UnknownVersion(other).into()),
    }
}

/// Encodes a log entry.
pub(crate) fn encode_entry(entry: &Entry) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    out.push(entry.format);
    let (tag, body_len) = match &entry.body {
        EntryBody::Batch(bytes) => (ENTRY_BATCH, bytes.len()),
        EntryBody::Manifest { .. } => (ENTRY_MANIFEST, 0),
        EntryBody::Void => (ENTRY_VOID, 0),
        EntryBody::Revoke(_) => (ENTRY_REVOKE, 0),
    };
    out.reserve(body_len);
    out.push(tag);
    out.extend_from_slice(&entry.nonce.to_be_bytes());
    match &entry.body {
        EntryBody::Batch(bytes) => out.extend_from_slice(bytes),
        EntryBody::Manifest { chunks, len, checksum } => {
            put_uvarint(&mut out, u64::from(*chunks));
            put_uvarint(&mut out, *len);
            out.extend_from_slice(&checksum.to_be_bytes());
        }
        EntryBody::Void => {}
        EntryBody::Revoke(seq) => put_uvarint(&mut out, *seq),
    }
    out
}

/// Decodes a log entry (the records of a batch stay encoded).
pub(crate) fn decode_entry(bytes: &[u8]) -> Result<Entry, DecodeError> {
    let mut r = Reader::new(bytes);
    let format = check_format(r.u8()?)?;
    let tag = r.u8()?;
    let nonce = r.u64_be()?;
    let body = match tag {
        ENTRY_BATCH => EntryBody::Batch(r.rest().to_vec()),
        ENTRY_MANIFEST => {
            let chunks = chunk_count_of(r.uvarint()?)?;
            let len = r.uvarint()?;
            let checksum = r.u64_be()?;
            r.end()?;
            EntryBody::Manifest { chunks, len, checksum }
        }
        ENTRY_VOID => {
            r.end()?;
            EntryBody::Void
        }
        ENTRY_REVOKE => {
            let seq = r.uvarint()?;
            r.end()?;
            EntryBody::Revoke(seq)
        }
        other => return Err(DecodeError::UnknownEntryKind(other)),
    };
    Ok(Entry { format, nonce, body })
}

/// Encodes the snapshot metadata.
pub(crate) fn encode_snapshot_meta(meta: &SnapshotMeta) -> Vec<u8> {
    let mut out = vec![meta.format];
    put_uvarint(&mut out, meta.covered);
    out.extend_from_slice(&meta.nonce.to_be_bytes());
    put_uvarint(&mut out, u64::from(meta.chunks));
    put_uvarint(&mut out, meta.len);
    out.extend_from_slice(&meta.checksum.to_be_bytes());
    out
}

/// Decodes the snapshot metadata.
pub(crate) fn decode_snapshot_meta(bytes: &[u8]) -> Result<SnapshotMeta, DecodeError> {
    let mut r = Reader::new(bytes);
    let format = check_format(r.u8()?)?;
    let covered = r.uvarint()?;
    let nonce = r.u64_be()?;
    let chunks = chunk_count_of(r.uvarint()?)?;
    let len = r.uvarint()?;
    let checksum = r.u64_be()?;
    r.end()?;
    Ok(SnapshotMeta { format, covered, nonce, chunks, len, checksum })
}

/// Encodes a batch of records (the shared codec's body: a count, then each record).
pub(crate) fn encode_records(records: &[Record]) -> Vec<u8> {
    let mut out = Vec::new();
    records_codec::write_records(&mut out, records);
    out
}

/// Decodes a batch of records written in `format`.
pub(crate) fn decode_records(bytes: &[u8], format: u8) -> Result<Vec<Record>, DecodeError> {
    Ok(records_codec::read_records(bytes, format)?)
}

fn chunk_count_of(n: u64) -> Result<u32, DecodeError> {
    u32::try_from(n).map_err(|_| DecodeError::ChunkCount(n))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use group_offsets::{GroupMetadataRecord, MemberMetadataRecord};
    use group_types::{OffsetAndMetadata, TopicPartition};

    use super::*;

    /// A fixture file of `tests/fixtures`, written by the build before the
    /// shared record codec (`fixture` has the records it holds).
    fn fixture_file(name: &str) -> Vec<u8> {
        let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn legacy_fixture_entries_read_as_written() {
        let classic = fixture::classic_batch();
        let consumer = fixture::consumer_batch();
        let entry = decode_entry(&fixture_file("entry-batch-v1.bin")).unwrap();
        assert_eq!((entry.format, entry.nonce), (FORMAT_V1, 0x0102_0304_0506_0708));
        let EntryBody::Batch(bytes) = entry.body else { panic!("{:?}", entry.body) };
        assert_eq!(decode_records(&bytes, entry.format).unwrap(), classic);
        let entry = decode_entry(&fixture_file("entry-batch-v2.bin")).unwrap();
        assert_eq!((entry.format, entry.nonce), (FORMAT_V2, 9));
        let EntryBody::Batch(bytes) = entry.body else { panic!("{:?}", entry.body) };
        assert_eq!(decode_records(&bytes, entry.format).unwrap(), consumer);

        let records = fixture_file("records-v2.bin");
        assert_eq!(decode_records(&records, FORMAT_V2).unwrap(), consumer);
        assert_eq!(decode_records(&fixture_file("records-v1.bin"), FORMAT_V1).unwrap(), classic);
        let manifest =
            EntryBody::Manifest { chunks: 3, len: records.len() as u64, checksum: checksum(&records) };
        assert_eq!(
            decode_entry(&fixture_file("entry-manifest-v2.bin")),
            Ok(Entry { format: FORMAT_V2, nonce: 10, body: manifest })
        );
        assert_eq!(
            decode_entry(&fixture_file("entry-void-v1.bin")),
            Ok(Entry { format: FORMAT_V1, nonce: 11, body: EntryBody::Void })
        );
        assert_eq!(
            decode_entry(&fixture_file("entry-revoke-v1.bin")),
            Ok(Entry { format: FORMAT_V1, nonce: 12, body: EntryBody::Revoke(300) })
        );
        let meta = SnapshotMeta {
            format: FORMAT_V2,
            covered: 77,
            nonce: 13,
            chunks: 1,
            len: records.len() as u64,
            checksum: checksum(&records),
        };
        assert_eq!(decode_snapshot_meta(&fixture_file("snapshot-meta-v2.bin")), Ok(meta));
    }

    #[test]
    fn new_writes_are_the_bytes_the_landed_build_wrote_unless_they_hold_kafka_4_3_fields() {
        // Without consumer-group records the body did not change: the landed
        // build reads what this one writes.
        assert_eq!(encode_records(&fixture::classic_batch()), fixture_file("records-v1.bin"));
        // With them it is format 3, which the landed build refuses by its
        // version; this build reads both.
        let consumer = fixture::consumer_batch();
        assert_eq!(records_format(&consumer), FORMAT_V3);
        let bytes = encode_records(&consumer);
        assert_ne!(bytes, fixture_file("records-v2.bin"));
        assert_eq!(decode_records(&bytes, FORMAT_V3).unwrap(), consumer);
        assert!(decode_records(&bytes, FORMAT_V2).is_err(), "format 3 bodies are not format 2's");
    }

    #[test]
    fn legacy_fixture_snapshot_folds_to_its_records() {
        // A snapshot's records fold to what a load returns.
        let records = decode_records(&fixture_file("records-v2.bin"), FORMAT_V2).unwrap();
        let stored = group_offsets::fold(records);
        assert_eq!(stored.consumer.len(), 6, "the tombstone removed nothing live");
        assert_eq!(stored.offsets.len(), 1);
        assert_eq!(group_offsets::fold(stored.clone().into_records()), stored);
    }

    #[test]
    fn each_value_takes_the_oldest_format_that_holds_its_records() {
        let tombstone = Record::GroupTombstone { group_id: Arc::from("g") };
        assert_eq!(records_format(&[]), FORMAT_V1);
        assert_eq!(records_format(std::slice::from_ref(&tombstone)), FORMAT_V1);
        assert_eq!(records_format(&fixture::classic_batch()), FORMAT_V1);
        assert_eq!(records_format(&fixture::consumer_batch()), FORMAT_V3);
        let pending = Record::TxnOffsetTombstone {
            group_id: Arc::from("g"),
            producer_id: 1,
            partition: TopicPartition::new("t", 0),
        };
        assert_eq!(records_format(&[tombstone.clone(), pending]), FORMAT_V2, "pending offsets need format 2");
        let mut both = fixture::consumer_batch();
        both.push(tombstone);
        assert_eq!(records_format(&both), FORMAT_V3, "consumer-group records need format 3");
    }

    fn sample() -> Vec<Record> {
        let g: Arc<str> = Arc::from("g\0\u{1F600}");
        vec![
            Record::Group(Box::new(GroupMetadataRecord {
                group_id: "g\0\u{1F600}".into(),
                protocol_type: Some("consumer".into()),
                generation_id: -3,
                protocol_name: None,
                leader_id: Some("".into()),
                state_timestamp_ms: Some(i64::MIN),
                members: vec![MemberMetadataRecord {
                    member_id: "m".into(),
                    group_instance_id: Some("i".into()),
                    client_id: "c".into(),
                    client_host: "/h".into(),
                    rebalance_timeout_ms: i32::MAX,
                    session_timeout_ms: i32::MIN,
                    subscription: vec![0, 255].into(),
                    assignment: Vec::new().into(),
                }],
            })),
            Record::Offset {
                group_id: Arc::clone(&g),
                partition: TopicPartition::new("t", -1),
                offset: OffsetAndMetadata {
                    offset: i64::MAX,
                    leader_epoch: Some(i32::MIN),
                    metadata: "m".into(),
                    commit_time: -1,
                    expire_time: Some(0),
                },
            },
            Record::OffsetTombstone { group_id: Arc::clone(&g), partition: TopicPartition::new("", 0) },
            Record::GroupTombstone { group_id: g },
        ]
    }

    #[test]
    fn records_round_trip() {
        let bytes = encode_records(&sample());
        assert_eq!(decode_records(&bytes, records_format(&sample())).unwrap(), sample());
        assert_eq!(decode_records(&encode_records(&[]), FORMAT_V1).unwrap(), vec![]);
    }

    #[test]
    fn every_prefix_of_a_batch_is_corrupt() {
        let bytes = encode_records(&sample());
        let format = records_format(&sample());
        for len in 0..bytes.len() {
            assert!(
                matches!(decode_records(&bytes[..len], format), Err(DecodeError::Codec(_))),
                "prefix {len}"
            );
        }
        let mut padded = bytes;
        padded.push(0);
        assert_eq!(decode_records(&padded, format), Err(records_codec::DecodeError::Trailing(1).into()));
    }

    #[test]
    fn entries_and_meta_round_trip() {
        for body in [
            EntryBody::Batch(vec![1, 2, 3]),
            EntryBody::Manifest { chunks: 3, len: 1 << 40, checksum: 7 },
            EntryBody::Void,
            EntryBody::Revoke(u64::MAX),
        ] {
            let entry = Entry { format: FORMAT_V1, nonce: 0xdead_beef, body };
            assert_eq!(decode_entry(&encode_entry(&entry)).unwrap(), entry);
        }
        for format in [FORMAT_V1, FORMAT_V2, FORMAT_V3] {
            let meta = SnapshotMeta { format, covered: 9, nonce: 1, chunks: 2, len: 3, checksum: 4 };
            assert_eq!(decode_snapshot_meta(&encode_snapshot_meta(&meta)).unwrap(), meta);
            let entry = Entry { format, nonce: 7, body: EntryBody::Batch(vec![0]) };
            assert_eq!(decode_entry(&encode_entry(&entry)).unwrap(), entry);
        }
        assert_eq!(decode_snapshot_meta(&[4]).unwrap_err().unknown_version(), Some(4));
        assert_eq!(decode_entry(&[9, 0]).unwrap_err().unknown_version(), Some(9));
        assert_eq!(decode_entry(&[1, 7, 0, 0, 0, 0, 0, 0, 0, 0]), Err(DecodeError::UnknownEntryKind(7)));
    }

    #[test]
    fn a_huge_count_or_length_is_corrupt_not_an_allocation() {
        let huge = [255, 255, 255, 255, 255, 255, 255, 255, 255, 1];
        assert!(matches!(decode_records(&huge, FORMAT_V2), Err(DecodeError::Codec(_))));
        let mut bytes = vec![1, 1]; // One group tombstone.
        bytes.extend_from_slice(&huge);
        assert!(matches!(decode_records(&bytes, FORMAT_V1), Err(DecodeError::Codec(_))));
        assert!(matches!(decode_records(&[255; 11], FORMAT_V3), Err(DecodeError::Codec(_))));
        let mut manifest = vec![1, ENTRY_MANIFEST, 0, 0, 0, 0, 0, 0, 0, 0];
        put_uvarint(&mut manifest, u64::from(u32::MAX) + 1);
        assert_eq!(decode_entry(&manifest), Err(DecodeError::ChunkCount(u64::from(u32::MAX) + 1)));
    }
}
