//! The value formats: log entries (an inline batch of records, a manifest of
//! staged chunks, a void, a revocation), snapshot metadata, and the records
//! themselves (KIP-848 consumer-group records in [`consumer`]), in a compact
//! hand-written binary encoding.
//!
//! Why not sled's codec: sled stores one offset or one group per key (the key
//! carries the group, topic and partition), so it has no encoding of a whole
//! [`Record`], and moving it into `group-offsets` would make that crate name
//! `bincode`. This format is small and owned here: varints for integers
//! (zigzag for signed ones), a varint length before every string and byte
//! string, one tag byte per record. Every length is checked against the bytes
//! left before anything is allocated, so corrupt bytes give a [`DecodeError`],
//! never a panic or a huge allocation.

use std::sync::Arc;

use group_offsets::{GroupMetadataRecord, MemberMetadataRecord, Record};
use group_types::{CommitMetadata, OffsetAndMetadata, TopicPartition};

mod consumer;

/// The format version of every value that holds no consumer-group record.
pub(crate) const FORMAT_V1: u8 = 1;

/// Format 1 plus consumer-group records (record tag 4). Written only for log
/// entries and snapshots whose records include one ([`records_format`]), so a
/// build that knows only format 1 refuses exactly those values, with
/// `UnknownFormatVersion`, and still reads every other.
pub(crate) const FORMAT_V2: u8 = 2;

const ENTRY_BATCH: u8 = 0;
const ENTRY_MANIFEST: u8 = 1;
const ENTRY_VOID: u8 = 2;
const ENTRY_REVOKE: u8 = 3;

const RECORD_GROUP: u8 = 0;
const RECORD_GROUP_TOMBSTONE: u8 = 1;
const RECORD_OFFSET: u8 = 2;
const RECORD_OFFSET_TOMBSTONE: u8 = 3;
const RECORD_CONSUMER: u8 = 4;

/// Why a stored value could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// The version byte names a format this build does not know.
    UnknownVersion(u8),
    /// The bytes are not a valid value of the format.
    Corrupt(String),
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
    if records.iter().any(|r| matches!(r, Record::Consumer(_))) { FORMAT_V2 } else { FORMAT_V1 }
}

/// Checks a value's version byte: the formats this build reads.
fn check_format(version: u8) -> Result<u8, DecodeError> {
    match version {
        FORMAT_V1 | FORMAT_V2 => Ok(version),
        other => Err(DecodeError::UnknownVersion(other)),
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
            let chunks = u32::try_from(r.uvarint()?).map_err(|_| corrupt("chunk count over u32"))?;
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
        other => return Err(corrupt(format!("unknown entry kind {other}"))),
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
    let chunks = u32::try_from(r.uvarint()?).map_err(|_| corrupt("chunk count over u32"))?;
    let len = r.uvarint()?;
    let checksum = r.u64_be()?;
    r.end()?;
    Ok(SnapshotMeta { format, covered, nonce, chunks, len, checksum })
}

/// Encodes a batch of records: a count, then each record. Fails only for a
/// record kind this build does not know (`Record` is non-exhaustive).
pub(crate) fn encode_records(records: &[Record]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(8 + records.len() * 48);
    put_uvarint(&mut out, records.len() as u64);
    for record in records {
        encode_record(&mut out, record)?;
    }
    Ok(out)
}

fn encode_record(out: &mut Vec<u8>, record: &Record) -> Result<(), String> {
    match record {
        Record::Group(g) => {
            out.push(RECORD_GROUP);
            put_str(out, &g.group_id);
            put_opt_str(out, g.protocol_type.as_deref());
            put_ivarint(out, i64::from(g.generation_id));
            put_opt_str(out, g.protocol_name.as_deref());
            put_opt_str(out, g.leader_id.as_deref());
            put_opt_i64(out, g.state_timestamp_ms);
            put_uvarint(out, g.members.len() as u64);
            for m in &g.members {
                put_str(out, &m.member_id);
                put_opt_str(out, m.group_instance_id.as_deref());
                put_str(out, &m.client_id);
                put_str(out, &m.client_host);
                put_ivarint(out, i64::from(m.rebalance_timeout_ms));
                put_ivarint(out, i64::from(m.session_timeout_ms));
                put_bytes(out, &m.subscription);
                put_bytes(out, &m.assignment);
            }
        }
        Record::GroupTombstone { group_id } => {
            out.push(RECORD_GROUP_TOMBSTONE);
            put_str(out, group_id);
        }
        Record::Offset { group_id, partition, offset } => {
            out.push(RECORD_OFFSET);
            put_str(out, group_id);
            put_str(out, &partition.topic);
            put_ivarint(out, i64::from(partition.partition));
            put_ivarint(out, offset.offset);
            put_opt_i64(out, offset.leader_epoch.map(i64::from));
            put_str(out, &offset.metadata);
            put_ivarint(out, offset.commit_time);
            put_opt_i64(out, offset.expire_time);
        }
        Record::OffsetTombstone { group_id, partition } => {
            out.push(RECORD_OFFSET_TOMBSTONE);
            put_str(out, group_id);
            put_str(out, &partition.topic);
            put_ivarint(out, i64::from(partition.partition));
        }
        Record::Consumer(record) => {
            out.push(RECORD_CONSUMER);
            consumer::put_consumer(out, record);
        }
        // `Record` is non-exhaustive: a record kind added upstream must get a
        // tag here before it can be stored.
        #[allow(unreachable_patterns)]
        other => return Err(format!("group-storage-etcd cannot encode this record kind: {other:?}")),
    }
    Ok(())
}

/// Decodes a batch of records.
pub(crate) fn decode_records(bytes: &[u8]) -> Result<Vec<Record>, DecodeError> {
    let mut r = Reader::new(bytes);
    let count = r.uvarint()?;
    // Every record takes at least two bytes: never trust the count further.
    let mut records = Vec::with_capacity((count as usize).min(r.remaining() / 2));
    // Group ids repeat within a batch (a commit of many partitions): share one `Arc`.
    let mut last_group: Option<Arc<str>> = None;
    let mut group_arc = |s: String| -> Arc<str> {
        match &last_group {
            Some(g) if **g == *s => Arc::clone(g),
            _ => {
                let g: Arc<str> = Arc::from(s);
                last_group = Some(Arc::clone(&g));
                g
            }
        }
    };
    for _ in 0..count {
        let record = match r.u8()? {
            RECORD_GROUP => {
                let group_id = r.string()?.into();
                let protocol_type = r.opt_string()?.map(Into::into);
                let generation_id = r.i32()?;
                let protocol_name = r.opt_string()?.map(Into::into);
                let leader_id = r.opt_string()?.map(Into::into);
                let state_timestamp_ms = r.opt_i64()?;
                let n = r.uvarint()?;
                let mut members = Vec::with_capacity((n as usize).min(r.remaining() / 8));
                for _ in 0..n {
                    members.push(MemberMetadataRecord {
                        member_id: r.string()?.into(),
                        group_instance_id: r.opt_string()?.map(Into::into),
                        client_id: r.string()?,
                        client_host: r.string()?,
                        rebalance_timeout_ms: r.i32()?,
                        session_timeout_ms: r.i32()?,
                        subscription: r.bytes()?.to_vec().into(),
                        assignment: r.bytes()?.to_vec().into(),
                    });
                }
                Record::Group(Box::new(GroupMetadataRecord {
                    group_id,
                    protocol_type,
                    generation_id,
                    protocol_name,
                    leader_id,
                    state_timestamp_ms,
                    members,
                }))
            }
            RECORD_GROUP_TOMBSTONE => Record::GroupTombstone { group_id: group_arc(r.string()?) },
            RECORD_OFFSET => {
                let group_id = group_arc(r.string()?);
                let topic = r.string()?;
                let partition = r.i32()?;
                let offset = r.ivarint()?;
                let leader_epoch = match r.opt_i64()? {
                    Some(e) => Some(i32::try_from(e).map_err(|_| corrupt("leader epoch over i32"))?),
                    None => None,
                };
                // The decoded string is taken over, not copied.
                let metadata = CommitMetadata::from(r.string()?);
                let commit_time = r.ivarint()?;
                let expire_time = r.opt_i64()?;
                Record::Offset {
                    group_id,
                    partition: TopicPartition::new(topic, partition),
                    offset: OffsetAndMetadata { offset, leader_epoch, metadata, commit_time, expire_time },
                }
            }
            RECORD_OFFSET_TOMBSTONE => {
                let group_id = group_arc(r.string()?);
                let topic = r.string()?;
                let partition = r.i32()?;
                Record::OffsetTombstone { group_id, partition: TopicPartition::new(topic, partition) }
            }
            RECORD_CONSUMER => Record::Consumer(consumer::take_consumer(&mut r, &mut group_arc)?),
            other => return Err(corrupt(format!("unknown record kind {other}"))),
        };
        records.push(record);
    }
    r.end()?;
    Ok(records)
}

fn corrupt(reason: impl Into<String>) -> DecodeError {
    DecodeError::Corrupt(reason.into())
}

fn put_uvarint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_ivarint(out: &mut Vec<u8>, v: i64) {
    put_uvarint(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_uvarint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_bytes(out, s.as_bytes());
}

fn put_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => {
            out.push(1);
            put_str(out, s);
        }
        None => out.push(0),
    }
}

fn put_opt_i64(out: &mut Vec<u8>, v: Option<i64>) {
    match v {
        Some(v) => {
            out.push(1);
            put_ivarint(out, v);
        }
        None => out.push(0),
    }
}

/// A cursor over a value's bytes; every read is bounds-checked.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, pos: 0 }
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn rest(&mut self) -> &'a [u8] {
        let rest = &self.bytes[self.pos..];
        self.pos = self.bytes.len();
        rest
    }

    fn end(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(corrupt(format!("{n} trailing bytes after the value"))),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(corrupt(format!(
                "truncated: {n} bytes wanted at byte {}, {} left",
                self.pos,
                self.remaining()
            )));
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn u64_be(&mut self) -> Result<u64, DecodeError> {
        let b: [u8; 8] = self.take(8)?.try_into().map_err(|_| corrupt("short u64"))?;
        Ok(u64::from_be_bytes(b))
    }

    fn uvarint(&mut self) -> Result<u64, DecodeError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            if shift == 63 && b > 1 {
                return Err(corrupt("varint overflows u64"));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt("varint longer than 10 bytes"))
    }

    fn ivarint(&mut self) -> Result<i64, DecodeError> {
        let u = self.uvarint()?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    fn i32(&mut self) -> Result<i32, DecodeError> {
        i32::try_from(self.ivarint()?).map_err(|_| corrupt("integer over i32"))
    }

    fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.uvarint()?;
        let len = usize::try_from(len).map_err(|_| corrupt("length over usize"))?;
        self.take(len)
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|e| corrupt(format!("a string is not UTF-8: {e}")))
    }

    fn flag(&mut self) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(corrupt(format!("an option flag is {other}"))),
        }
    }

    fn opt_string(&mut self) -> Result<Option<String>, DecodeError> {
        if self.flag()? { self.string().map(Some) } else { Ok(None) }
    }

    fn opt_i64(&mut self) -> Result<Option<i64>, DecodeError> {
        if self.flag()? { self.ivarint().map(Some) } else { Ok(None) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let bytes = encode_records(&sample()).unwrap();
        assert_eq!(decode_records(&bytes).unwrap(), sample());
        assert_eq!(decode_records(&encode_records(&[]).unwrap()).unwrap(), vec![]);
    }

    #[test]
    fn every_prefix_of_a_batch_is_corrupt() {
        let bytes = encode_records(&sample()).unwrap();
        for len in 0..bytes.len() {
            assert!(matches!(decode_records(&bytes[..len]), Err(DecodeError::Corrupt(_))), "prefix {len}");
        }
        let mut padded = bytes;
        padded.push(0);
        assert!(matches!(decode_records(&padded), Err(DecodeError::Corrupt(_))));
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
        for format in [FORMAT_V1, FORMAT_V2] {
            let meta = SnapshotMeta { format, covered: 9, nonce: 1, chunks: 2, len: 3, checksum: 4 };
            assert_eq!(decode_snapshot_meta(&encode_snapshot_meta(&meta)).unwrap(), meta);
            let entry = Entry { format, nonce: 7, body: EntryBody::Batch(vec![0]) };
            assert_eq!(decode_entry(&encode_entry(&entry)).unwrap(), entry);
        }
        assert_eq!(decode_snapshot_meta(&[3]), Err(DecodeError::UnknownVersion(3)));
        assert_eq!(decode_entry(&[9, 0]), Err(DecodeError::UnknownVersion(9)));
    }

    #[test]
    fn a_huge_count_or_length_is_corrupt_not_an_allocation() {
        let huge = [255, 255, 255, 255, 255, 255, 255, 255, 255, 1];
        assert!(matches!(decode_records(&huge), Err(DecodeError::Corrupt(_))));
        let mut bytes = vec![1, RECORD_GROUP_TOMBSTONE];
        bytes.extend_from_slice(&huge);
        assert!(matches!(decode_records(&bytes), Err(DecodeError::Corrupt(_))));
        assert!(matches!(decode_records(&[255; 11]), Err(DecodeError::Corrupt(_))));
    }
}
