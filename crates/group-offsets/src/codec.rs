//! The one record codec: how a [`Record`] is stored, by every engine
//! (`group-storage-etcd` batches of records in its log and snapshots,
//! `group-storage-sled` one record's value per key). A value is one byte of
//! format version, then the body; the body is hand-written and compact:
//! varints for integers (zigzag for signed ones), a varint length before
//! every string and byte string, one tag byte per record, KIP-848
//! consumer-group records as the `consumer` module describes.
//!
//! A record is its key's fields, then its value's: an engine whose own keys
//! name the group and topic partition, or the record type and sub-key,
//! stores only the value ([`encode_value`], [`decode_offset_value`],
//! [`decode_group_value`], [`decode_modern_value`]): the version byte, then
//! the fields after the key in the table below (after `present` for tag 4).
//! A group record's value keeps its `group_id` (one value per group, so it
//! costs little), and decoding checks it against the key's: a value copied
//! under another group's key is an error, not that group's record.
//!
//! Decoding is bounds-checked: every length is checked against the bytes left
//! before anything is allocated, so corrupt bytes give a [`DecodeError`],
//! never a panic or a huge allocation.
//!
//! | tag | record | fields |
//! | --- | --- | --- |
//! | 0 | [`Record::Group`] | `group_id: str`, `protocol_type: opt str`, `generation_id: ivarint`, `protocol_name: opt str`, `leader_id: opt str`, `state_timestamp_ms: opt ivarint`, `members: [member_id: str, group_instance_id: opt str, client_id: str, client_host: str, rebalance_timeout_ms: ivarint, session_timeout_ms: ivarint, subscription: bytes, assignment: bytes]` |
//! | 1 | [`Record::GroupTombstone`] | `group_id: str` |
//! | 2 | [`Record::Offset`] | `group_id: str`, `topic: str`, `partition: ivarint`, `offset: ivarint`, `leader_epoch: opt ivarint`, `metadata: str`, `commit_time: ivarint`, `expire_time: opt ivarint` |
//! | 3 | [`Record::OffsetTombstone`] | `group_id: str`, `topic: str`, `partition: ivarint` |
//! | 4 | [`Record::Modern`] | `record_type: ivarint`, `group_id: str`, `sub_key: str`, `present: flag`, then the kind's value (module `codec::consumer`) |
//! | 5 | [`Record::TxnOffset`] | `group_id: str`, `producer_id: ivarint`, `topic: str`, `partition: ivarint`, `sequence: uvarint`, `superseded: flag`, then an offset's fields as in tag 2 |
//! | 6 | [`Record::TxnOffsetTombstone`] | `group_id: str`, `producer_id: ivarint`, `topic: str`, `partition: ivarint` |
//!
//! An option is a flag byte (0 or 1) then the value; a list is a `uvarint`
//! count then the items.
//!
//! # Versions
//!
//! A value holding a consumer-group record (tag 4) is written in
//! [`FORMAT_V3`], any other in [`FORMAT_V2`] ([`format_of`]); both are read.
//! Format 3 is format 2 with Kafka 4.3's fields in three consumer-group
//! bodies (module `codec::consumer`): the assignment epochs of
//! `ConsumerGroupCurrentMemberAssignment` (KIP-1251) and the assignment
//! timestamp of the two target-assignment metadata records (KIP-1263). A
//! format-2 body of those reads as Kafka reads a record without the tagged
//! fields: every partition assigned at the member epoch, timestamp 0. Tags 5
//! and 6 (transactional offsets) came later within format 2: they add kinds
//! of record, and change no body an older build wrote. The numbering
//! continues `group-storage-etcd`'s, whose format 1 is this body without
//! consumer-group records and which still frames its log entries with its
//! own version byte ([`write_records`], [`read_records`]);
//! `group-storage-sled`'s legacy values (bincode, before this codec) carry 1.
//! A change of the body is a new version, read beside the old ones, and
//! written only where needed, so that a build that does not know it refuses
//! exactly the values it cannot read.

use std::sync::Arc;

use group_types::{CommitMetadata, GroupId, OffsetAndMetadata, TopicPartition};

use crate::{GroupMetadataRecord, MemberMetadataRecord, ModernGroupRecord, Record, TxnOffsetRecord};

mod consumer;

/// The format version of a value that holds no consumer-group record.
pub const FORMAT_V2: u8 = 2;

/// The format version of a value that holds a consumer-group record: format
/// 2 with Kafka 4.3's assignment epochs and assignment timestamps.
pub const FORMAT_V3: u8 = 3;

/// The format a value holding `records` is written in: the oldest that holds them.
pub fn format_of<'a>(records: impl IntoIterator<Item = &'a Record>) -> u8 {
    if records.into_iter().any(|r| matches!(r, Record::Modern(_))) { FORMAT_V3 } else { FORMAT_V2 }
}

const RECORD_GROUP: u8 = 0;
const RECORD_GROUP_TOMBSTONE: u8 = 1;
const RECORD_OFFSET: u8 = 2;
const RECORD_OFFSET_TOMBSTONE: u8 = 3;
const RECORD_CONSUMER: u8 = 4;
const RECORD_TXN_OFFSET: u8 = 5;
const RECORD_TXN_OFFSET_TOMBSTONE: u8 = 6;

/// Why bytes are not a value of the codec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The version byte names a format this build does not know.
    #[error("unknown format version {0}")]
    UnknownVersion(u8),
    /// The value has no version byte.
    #[error("empty value")]
    Empty,
    /// The bytes end inside a field.
    #[error("truncated: {wanted} bytes wanted at byte {at}, {left} left")]
    Truncated {
        /// How many bytes the field needs.
        wanted: u64,
        /// Where it starts.
        at: usize,
        /// How many are left.
        left: usize,
    },
    /// Bytes follow the value.
    #[error("{0} trailing bytes after the value")]
    Trailing(usize),
    /// A varint runs over 10 bytes or 64 bits.
    #[error("a varint overflows u64")]
    Varint,
    /// An integer does not fit its field.
    #[error("{what} {value} is out of range")]
    OutOfRange {
        /// The field.
        what: &'static str,
        /// The value read.
        value: i128,
    },
    /// A string is not UTF-8.
    #[error("a string is not UTF-8")]
    NotUtf8(#[source] std::string::FromUtf8Error),
    /// An option's flag byte is neither 0 nor 1.
    #[error("an option flag is {0}")]
    Flag(u8),
    /// A record tag this build does not know.
    #[error("unknown record kind {0}")]
    UnknownKind(u8),
    /// A consumer-group record type this build does not know (no build writes one).
    #[error("unknown consumer-group record type {0}")]
    UnknownRecordType(i16),
    /// A group-level consumer-group record type with a sub-key (no build writes one).
    #[error("record type {0} is keyed by the group alone, but has a sub-key")]
    SubKeyOnGroupRecord(i16),
    /// A group record's value names another group than its key.
    #[error("the record names group {found:?}, not {expected:?}")]
    OtherGroup {
        /// The key's group.
        expected: String,
        /// The value's.
        found: String,
    },
    /// Assignment epochs that do not cover their assignment's partitions.
    #[error("epoch runs cover {epochs} partitions of {partitions}")]
    EpochsMismatch {
        /// The assignment's partitions.
        partitions: usize,
        /// What the runs cover.
        epochs: u64,
    },
    /// A consumer-group record's value is bad: names its key.
    #[error("consumer record (type {record_type}, group {group_id:?}, sub-key {sub_key:?}): {source}")]
    InModernRecord {
        /// Its record type.
        record_type: i16,
        /// Its group.
        group_id: String,
        /// Its member id or regex.
        sub_key: String,
        /// What is wrong with its value.
        #[source]
        source: Box<DecodeError>,
    },
}

/// One record as a value: its format ([`format_of`]), then the record.
pub fn encode_record(record: &Record) -> Vec<u8> {
    let mut out = Vec::with_capacity(48);
    let format = format_of([record]);
    out.push(format);
    encode_record_body(&mut out, record, format);
    out
}

/// The record of a value written by [`encode_record`].
pub fn decode_record(bytes: &[u8]) -> Result<Record, DecodeError> {
    let mut r = Reader::new(bytes);
    r.format = check_version(r.u8().map_err(|_| DecodeError::Empty)?)?;
    let record = take_record(&mut r, &mut |s: String| Arc::from(s))?;
    r.end()?;
    Ok(record)
}

/// A live record's value without its key, for an engine whose keys already
/// name the group and topic partition, or the record type and sub-key:
/// its format ([`format_of`]), then the record's fields after its key. `None`
/// for a tombstone, which has no value.
pub fn encode_value(record: &Record) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(32);
    let format = format_of([record]);
    out.push(format);
    match record {
        Record::Group(g) => {
            put_str(&mut out, &g.group_id);
            put_group_value(&mut out, g);
        }
        Record::Offset { offset, .. } => put_offset_value(&mut out, offset),
        Record::Modern(c) if !c.is_tombstone() => consumer::put_consumer_value(&mut out, c, format),
        Record::TxnOffset(t) => put_txn_offset_value(&mut out, t),
        Record::GroupTombstone { .. }
        | Record::OffsetTombstone { .. }
        | Record::Modern(_)
        | Record::TxnOffsetTombstone { .. } => return None,
    }
    Some(out)
}

/// The offset of a value written by [`encode_value`] for an offset record.
pub fn decode_offset_value(bytes: &[u8]) -> Result<OffsetAndMetadata, DecodeError> {
    decode_value(bytes, take_offset_value)
}

/// The pending transactional offset of `group_id`, `producer_id` and
/// `partition` from a value written by [`encode_value`].
pub fn decode_txn_offset_value(
    group_id: Arc<str>,
    producer_id: i64,
    partition: TopicPartition,
    bytes: &[u8],
) -> Result<TxnOffsetRecord, DecodeError> {
    decode_value(bytes, |r| take_txn_offset_value(r, group_id, producer_id, partition))
}

/// The group record of `group_id` from a value written by [`encode_value`],
/// which must name that group.
pub fn decode_group_value(group_id: &str, bytes: &[u8]) -> Result<GroupMetadataRecord, DecodeError> {
    decode_value(bytes, |r| {
        let found = r.string()?;
        if found != group_id {
            return Err(DecodeError::OtherGroup { expected: group_id.to_owned(), found });
        }
        take_group_value(r, GroupId::from(found))
    })
}

/// The consumer-group record keyed by `record_type`, `group_id` and `sub_key`
/// from a value written by [`encode_value`].
pub fn decode_modern_value(
    record_type: i16,
    group_id: Arc<str>,
    sub_key: &str,
    bytes: &[u8],
) -> Result<ModernGroupRecord, DecodeError> {
    decode_value(bytes, |r| consumer::take_named_value(r, record_type, group_id, sub_key, true))
}

fn decode_value<T>(
    bytes: &[u8],
    take: impl FnOnce(&mut Reader<'_>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let mut r = Reader::new(bytes);
    r.format = check_version(r.u8().map_err(|_| DecodeError::Empty)?)?;
    let value = take(&mut r)?;
    r.end()?;
    Ok(value)
}

/// A batch of records as a value: its format ([`format_of`]), a count, then
/// each record.
pub fn encode_records(records: &[Record]) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + records.len() * 48);
    out.push(format_of(records));
    write_records(&mut out, records);
    out
}

/// The records of a value written by [`encode_records`].
pub fn decode_records(bytes: &[u8]) -> Result<Vec<Record>, DecodeError> {
    let (&version, body) = bytes.split_first().ok_or(DecodeError::Empty)?;
    read_records(body, check_version(version)?)
}

fn check_version(version: u8) -> Result<u8, DecodeError> {
    match version {
        FORMAT_V2 | FORMAT_V3 => Ok(version),
        other => Err(DecodeError::UnknownVersion(other)),
    }
}

/// Appends a batch's body (a count, then each record) without a version
/// byte, in [`format_of`]`(records)`: for a container that carries the
/// version itself.
pub fn write_records(out: &mut Vec<u8>, records: &[Record]) {
    out.reserve(8 + records.len() * 48);
    let format = format_of(records);
    put_uvarint(out, records.len() as u64);
    for record in records {
        encode_record_body(out, record, format);
    }
}

/// The records of a body written by [`write_records`] in `format` (which the
/// caller read and checked; a format before 2 reads as 2, whose body it is
/// without consumer-group records).
pub fn read_records(bytes: &[u8], format: u8) -> Result<Vec<Record>, DecodeError> {
    let mut r = Reader::new(bytes);
    r.format = format.max(FORMAT_V2);
    let count = r.uvarint()?;
    // Every record takes at least two bytes: never trust the count further.
    let mut records = Vec::with_capacity(usize::try_from(count).unwrap_or(usize::MAX).min(r.remaining() / 2));
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
        records.push(take_record(&mut r, &mut group_arc)?);
    }
    r.end()?;
    Ok(records)
}

fn encode_record_body(out: &mut Vec<u8>, record: &Record, format: u8) {
    match record {
        Record::Group(g) => {
            out.push(RECORD_GROUP);
            put_str(out, &g.group_id);
            put_group_value(out, g);
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
            put_offset_value(out, offset);
        }
        Record::OffsetTombstone { group_id, partition } => {
            out.push(RECORD_OFFSET_TOMBSTONE);
            put_str(out, group_id);
            put_str(out, &partition.topic);
            put_ivarint(out, i64::from(partition.partition));
        }
        Record::Modern(record) => {
            out.push(RECORD_CONSUMER);
            consumer::put_consumer(out, record, format);
        }
        Record::TxnOffset(t) => {
            out.push(RECORD_TXN_OFFSET);
            put_txn_offset_key(out, &t.group_id, t.producer_id, &t.partition);
            put_txn_offset_value(out, t);
        }
        Record::TxnOffsetTombstone { group_id, producer_id, partition } => {
            out.push(RECORD_TXN_OFFSET_TOMBSTONE);
            put_txn_offset_key(out, group_id, *producer_id, partition);
        }
    }
}

fn put_txn_offset_key(out: &mut Vec<u8>, group_id: &str, producer_id: i64, partition: &TopicPartition) {
    put_str(out, group_id);
    put_ivarint(out, producer_id);
    put_str(out, &partition.topic);
    put_ivarint(out, i64::from(partition.partition));
}

/// A pending transactional offset's fields after its key.
fn put_txn_offset_value(out: &mut Vec<u8>, t: &TxnOffsetRecord) {
    put_uvarint(out, t.sequence);
    out.push(u8::from(t.superseded));
    put_offset_value(out, &t.offset);
}

/// A group record's fields after its group id.
fn put_group_value(out: &mut Vec<u8>, g: &GroupMetadataRecord) {
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

/// An offset record's fields after its group, topic and partition.
fn put_offset_value(out: &mut Vec<u8>, offset: &OffsetAndMetadata) {
    put_ivarint(out, offset.offset);
    put_opt_i64(out, offset.leader_epoch.map(i64::from));
    put_str(out, &offset.metadata);
    put_ivarint(out, offset.commit_time);
    put_opt_i64(out, offset.expire_time);
}

/// One record (its tag, then its fields), its group id through `group`.
fn take_record(
    r: &mut Reader<'_>,
    group_arc: &mut impl FnMut(String) -> Arc<str>,
) -> Result<Record, DecodeError> {
    Ok(match r.u8()? {
        RECORD_GROUP => {
            let group_id = r.string()?.into();
            Record::Group(Box::new(take_group_value(r, group_id)?))
        }
        RECORD_GROUP_TOMBSTONE => Record::GroupTombstone { group_id: group_arc(r.string()?) },
        RECORD_OFFSET => {
            let group_id = group_arc(r.string()?);
            let topic = r.string()?;
            let partition = r.i32()?;
            let offset = take_offset_value(r)?;
            Record::Offset { group_id, partition: TopicPartition::new(topic, partition), offset }
        }
        RECORD_OFFSET_TOMBSTONE => {
            let group_id = group_arc(r.string()?);
            let topic = r.string()?;
            let partition = r.i32()?;
            Record::OffsetTombstone { group_id, partition: TopicPartition::new(topic, partition) }
        }
        RECORD_CONSUMER => Record::Modern(consumer::take_consumer(r, group_arc)?),
        RECORD_TXN_OFFSET => {
            let (group_id, producer_id, partition) = take_txn_offset_key(r, group_arc)?;
            Record::TxnOffset(Box::new(take_txn_offset_value(r, group_id, producer_id, partition)?))
        }
        RECORD_TXN_OFFSET_TOMBSTONE => {
            let (group_id, producer_id, partition) = take_txn_offset_key(r, group_arc)?;
            Record::TxnOffsetTombstone { group_id, producer_id, partition }
        }
        other => return Err(DecodeError::UnknownKind(other)),
    })
}

fn take_txn_offset_key(
    r: &mut Reader<'_>,
    group_arc: &mut impl FnMut(String) -> Arc<str>,
) -> Result<(Arc<str>, i64, TopicPartition), DecodeError> {
    let group_id = group_arc(r.string()?);
    let producer_id = r.ivarint()?;
    let topic = r.string()?;
    let partition = r.i32()?;
    Ok((group_id, producer_id, TopicPartition::new(topic, partition)))
}

/// A pending transactional offset's fields after its key.
fn take_txn_offset_value(
    r: &mut Reader<'_>,
    group_id: Arc<str>,
    producer_id: i64,
    partition: TopicPartition,
) -> Result<TxnOffsetRecord, DecodeError> {
    let sequence = r.uvarint()?;
    let superseded = match r.u8()? {
        0 => false,
        1 => true,
        flag => return Err(DecodeError::Flag(flag)),
    };
    let offset = take_offset_value(r)?;
    Ok(TxnOffsetRecord { group_id, producer_id, partition, offset, sequence, superseded })
}

/// A group record's fields after its group id.
fn take_group_value(r: &mut Reader<'_>, group_id: GroupId) -> Result<GroupMetadataRecord, DecodeError> {
    let protocol_type = r.opt_string()?.map(Into::into);
    let generation_id = r.i32()?;
    let protocol_name = r.opt_string()?.map(Into::into);
    let leader_id = r.opt_string()?.map(Into::into);
    let state_timestamp_ms = r.opt_i64()?;
    let n = r.uvarint()?;
    let mut members = Vec::with_capacity(usize::try_from(n).unwrap_or(usize::MAX).min(r.remaining() / 8));
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
    Ok(GroupMetadataRecord {
        group_id,
        protocol_type,
        generation_id,
        protocol_name,
        leader_id,
        state_timestamp_ms,
        members,
    })
}

/// An offset record's fields after its group, topic and partition.
fn take_offset_value(r: &mut Reader<'_>) -> Result<OffsetAndMetadata, DecodeError> {
    let offset = r.ivarint()?;
    let leader_epoch = match r.opt_i64()? {
        Some(e) => Some(i32::try_from(e).map_err(|_| out_of_range("leader epoch", e))?),
        None => None,
    };
    // The decoded string is taken over, not copied.
    let metadata = CommitMetadata::from(r.string()?);
    let commit_time = r.ivarint()?;
    let expire_time = r.opt_i64()?;
    Ok(OffsetAndMetadata { offset, leader_epoch, metadata, commit_time, expire_time })
}

fn out_of_range(what: &'static str, value: impl Into<i128>) -> DecodeError {
    DecodeError::OutOfRange { what, value: value.into() }
}

/// Appends `v` as a varint (7 bits a byte, least significant first).
pub fn put_uvarint(out: &mut Vec<u8>, mut v: u64) {
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

/// A cursor over a value's bytes; every read is bounds-checked. Public for
/// engines that frame records with fields of their own (a log entry's kind
/// and nonce).
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The format the bytes are in, for the bodies that differ between formats.
    format: u8,
}

impl<'a> Reader<'a> {
    /// A cursor at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, pos: 0, format: FORMAT_V2 }
    }

    /// How many bytes are left.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Every byte left.
    pub fn rest(&mut self) -> &'a [u8] {
        let rest = &self.bytes[self.pos..];
        self.pos = self.bytes.len();
        rest
    }

    /// `Ok` when every byte was read.
    pub fn end(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(DecodeError::Trailing(n)),
        }
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let truncated = || DecodeError::Truncated { wanted: n as u64, at: self.pos, left: self.remaining() };
        let end = self.pos.checked_add(n).filter(|&end| end <= self.bytes.len()).ok_or_else(truncated)?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    /// A big-endian `u64`.
    pub fn u64_be(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    /// The next `N` bytes, as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let (at, left) = (self.pos, self.remaining());
        self.take(N)?.try_into().map_err(|_| DecodeError::Truncated { wanted: N as u64, at, left })
    }

    /// A varint ([`put_uvarint`]).
    pub fn uvarint(&mut self) -> Result<u64, DecodeError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            if shift == 63 && b > 1 {
                return Err(DecodeError::Varint);
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError::Varint)
    }

    fn ivarint(&mut self) -> Result<i64, DecodeError> {
        let u = self.uvarint()?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    fn i32(&mut self) -> Result<i32, DecodeError> {
        let v = self.ivarint()?;
        i32::try_from(v).map_err(|_| out_of_range("an i32", v))
    }

    fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.uvarint()?;
        let len = usize::try_from(len).map_err(|_| DecodeError::Truncated {
            wanted: len,
            at: self.pos,
            left: self.remaining(),
        })?;
        self.take(len)
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(DecodeError::NotUtf8)
    }

    fn flag(&mut self) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(DecodeError::Flag(other)),
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
mod tests;
