//! The key layout: how coordinator partitions, groups, topics, partitions and
//! consumer-group record keys become sled keys (layout v3: v2 plus
//! consumer-group records), and how the old layout v1 keys read.
//!
//! Keys are hand-encoded (never through bincode) so that sled's byte order is
//! the order we want: numbers are big-endian, so every coordinator partition
//! is one contiguous key range and, inside it, every group's offsets share one
//! prefix.
//!
//! | kind | key | value |
//! | --- | --- | --- |
//! | owner epoch | `u32 BE partition` · `0x00` | an epoch record |
//! | group record | `u32 BE partition` · `0x01` · group (UTF-8 bytes, to the end) | a group metadata record |
//! | offset | `u32 BE partition` · `0x02` · `u16 BE len(group)` · group · `u16 BE len(topic)` · topic · `u32 BE (partition XOR 0x8000_0000)` | an offset record |
//! | consumer-group record | `u32 BE partition` · `0x03` · `u16 BE len(group)` · group · `i16 BE record type` · sub-key (UTF-8 bytes, to the end) | a consumer-group record value |
//! | pending transactional offset | `u32 BE partition` · `0x04` · `u16 BE len(group)` · group · `u64 BE (producer XOR 1<<63)` · `u16 BE len(topic)` · topic · `u32 BE (partition XOR 0x8000_0000)` | a pending offset's value |
//!
//! The length in front of an offset key's group id makes the group prefix
//! unambiguous: no group's prefix is a prefix of another group's keys. A group
//! record's key needs no length: it is looked up whole, and scanned only as
//! part of its partition. The topic partition's sign bit is flipped so that
//! negative numbers, should any ever be stored, sort before positive ones.
//!
//! A consumer-group record key (KIP-848) names the record's key as Kafka
//! does: record type, group, and the member id or regex (`""` for the
//! group-level kinds). The group is length-prefixed for the same reason as in
//! offset keys (a group's consumer records are one prefix scan, shared with
//! no other group); the record type is fixed-width, so the sub-key can run to
//! the end without a length: two keys are equal only if all three parts are,
//! and member ids and regexes need no limit of their own.

use group_offsets::{CoordinatorPartition, StorageError};

/// The sled tree holding every coordinator partition (layouts v2 and v3).
pub const PARTITIONS_TREE: &str = "coordinator_partitions";

/// The kind byte of a partition's owner epoch key.
const KIND_EPOCH: u8 = 0;
/// The kind byte of group record keys.
pub(crate) const KIND_GROUP: u8 = 1;
/// The kind byte of offset keys.
const KIND_OFFSET: u8 = 2;
/// The kind byte of consumer-group record keys.
const KIND_CONSUMER: u8 = 3;
/// The kind byte of pending transactional offset keys (a kind added within
/// layout v3: older stores have none, so they read as before).
const KIND_TXN_OFFSET: u8 = 4;

/// Why bytes are not a key of the layout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum KeyError {
    /// Fewer than the four bytes of a partition.
    #[error("shorter than a partition prefix")]
    NoPartition,
    /// Nothing after the partition.
    #[error("no kind byte")]
    NoKind,
    /// The kind byte of another kind of key.
    #[error("kind byte {found} is not {expected}")]
    OtherKind {
        /// The kind byte found.
        found: u8,
        /// The kind of key expected.
        expected: &'static str,
    },
    /// The key ends before a field.
    #[error("truncated before the {0}")]
    TruncatedBefore(&'static str),
    /// A string's length runs past the key.
    #[error("{what} claims {len} bytes but {left} remain")]
    ShortString {
        /// The field.
        what: &'static str,
        /// The length it claims.
        len: usize,
        /// The bytes left.
        left: usize,
    },
    /// A string is not UTF-8.
    #[error("{what} is not UTF-8")]
    NotUtf8 {
        /// The field.
        what: &'static str,
        /// Where the bytes stop being UTF-8.
        #[source]
        source: std::str::Utf8Error,
    },
    /// An offset key's partition is not 4 bytes.
    #[error("expected a 4-byte partition, found {0} bytes")]
    PartitionLength(usize),
}

/// Flipping the sign bit turns two's complement order into unsigned byte order.
const SIGN_FLIP: u32 = 0x8000_0000;

/// Every key of `partition` starts with these bytes.
pub(crate) fn partition_prefix(partition: CoordinatorPartition) -> [u8; 4] {
    partition.0.to_be_bytes()
}

/// The key of a partition's owner epoch.
pub(crate) fn epoch_key(partition: CoordinatorPartition) -> [u8; 5] {
    let [a, b, c, d] = partition_prefix(partition);
    [a, b, c, d, KIND_EPOCH]
}

/// Every group record key of `partition` starts with these bytes.
pub(crate) fn groups_prefix(partition: CoordinatorPartition) -> [u8; 5] {
    let [a, b, c, d] = partition_prefix(partition);
    [a, b, c, d, KIND_GROUP]
}

/// Every offset key of `partition` starts with these bytes.
pub(crate) fn offsets_prefix(partition: CoordinatorPartition) -> [u8; 5] {
    let [a, b, c, d] = partition_prefix(partition);
    [a, b, c, d, KIND_OFFSET]
}

/// The first key after every offset key of `partition`.
pub(crate) fn offsets_end(partition: CoordinatorPartition) -> [u8; 5] {
    let [a, b, c, d] = partition_prefix(partition);
    [a, b, c, d, KIND_OFFSET + 1]
}

/// True for a key that layout v2 does not have: a consumer-group record's or
/// a pending transactional offset's (of any partition).
pub(crate) fn is_v3_key(key: &[u8]) -> bool {
    matches!(key.get(4), Some(&(KIND_CONSUMER | KIND_TXN_OFFSET)))
}

/// Every consumer-group record key of `partition` starts with these bytes.
pub(crate) fn consumer_prefix(partition: CoordinatorPartition) -> [u8; 5] {
    let [a, b, c, d] = partition_prefix(partition);
    [a, b, c, d, KIND_CONSUMER]
}

/// A group's consumer-record key prefix: every consumer-group record key of
/// `group_id` starts with it, and no other key does.
pub(crate) fn group_consumer_prefix(
    partition: CoordinatorPartition,
    group_id: &str,
) -> Result<Vec<u8>, StorageError> {
    let mut key = Vec::with_capacity(5 + 2 + group_id.len());
    key.extend_from_slice(&consumer_prefix(partition));
    push_string(&mut key, "group id", group_id)?;
    Ok(key)
}

/// The key of one consumer-group record: (record type, group, sub-key).
pub(crate) fn consumer_key(
    partition: CoordinatorPartition,
    group_id: &str,
    record_type: i16,
    sub_key: &str,
) -> Result<Vec<u8>, StorageError> {
    let mut key = group_consumer_prefix(partition, group_id)?;
    key.reserve(2 + sub_key.len());
    key.extend_from_slice(&record_type.to_be_bytes());
    key.extend_from_slice(sub_key.as_bytes());
    Ok(key)
}

/// The parts of a consumer-group record key, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConsumerKey<'a> {
    /// The coordinator partition.
    pub(crate) coordinator: CoordinatorPartition,
    /// The group.
    pub(crate) group_id: &'a str,
    /// Kafka's record type (`group_offsets::record_type`).
    pub(crate) record_type: i16,
    /// The member id or regex, `""` for the group-level kinds.
    pub(crate) sub_key: &'a str,
}

impl ConsumerKey<'_> {
    /// The key in the form errors show it.
    pub(crate) fn display(&self) -> String {
        format!(
            "{PARTITIONS_TREE}/{}/consumer/{}/{}/{}",
            self.coordinator.0, self.group_id, self.record_type, self.sub_key
        )
    }
}

/// Splits a consumer-group record key (of any partition) into its parts;
/// `Err` says why it is malformed. The record type is not checked here: the
/// value's decoder knows which types exist.
pub(crate) fn parse_consumer_key(key: &[u8]) -> Result<ConsumerKey<'_>, KeyError> {
    let (prefix, rest) = key.split_first_chunk::<4>().ok_or(KeyError::NoPartition)?;
    let coordinator = CoordinatorPartition(u32::from_be_bytes(*prefix));
    let rest = match rest.split_first() {
        Some((&KIND_CONSUMER, rest)) => rest,
        Some((&found, _)) => return Err(KeyError::OtherKind { found, expected: "a consumer record's" }),
        None => return Err(KeyError::NoKind),
    };
    let (group_id, rest) = take_string(rest, "group id")?;
    let (record_type, sub_key) =
        rest.split_first_chunk::<2>().ok_or(KeyError::TruncatedBefore("record type"))?;
    let sub_key = utf8(sub_key, "sub-key")?;
    Ok(ConsumerKey { coordinator, group_id, record_type: i16::from_be_bytes(*record_type), sub_key })
}

/// Every pending transactional offset key of `partition` starts with these bytes.
pub(crate) fn txn_offsets_prefix(partition: CoordinatorPartition) -> [u8; 5] {
    let [a, b, c, d] = partition_prefix(partition);
    [a, b, c, d, KIND_TXN_OFFSET]
}

/// The key of one pending transactional offset: (group, producer, topic partition).
pub(crate) fn txn_offset_key(
    partition: CoordinatorPartition,
    group_id: &str,
    producer_id: i64,
    topic: &str,
    topic_partition: i32,
) -> Result<Vec<u8>, StorageError> {
    let mut key = Vec::with_capacity(5 + 2 + group_id.len() + 8 + 2 + topic.len() + 4);
    key.extend_from_slice(&txn_offsets_prefix(partition));
    push_string(&mut key, "group id", group_id)?;
    key.extend_from_slice(&((producer_id as u64) ^ (1 << 63)).to_be_bytes());
    push_string(&mut key, "topic", topic)?;
    key.extend_from_slice(&((topic_partition as u32) ^ SIGN_FLIP).to_be_bytes());
    Ok(key)
}

/// The parts of a pending transactional offset key, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TxnOffsetKey<'a> {
    /// The group.
    pub(crate) group_id: &'a str,
    /// The transactional producer.
    pub(crate) producer_id: i64,
    /// The topic.
    pub(crate) topic: &'a str,
    /// The topic partition.
    pub(crate) partition: i32,
}

/// Splits a pending transactional offset key (of any partition) into its parts.
pub(crate) fn parse_txn_offset_key(key: &[u8]) -> Result<TxnOffsetKey<'_>, KeyError> {
    let (_, rest) = key.split_first_chunk::<4>().ok_or(KeyError::NoPartition)?;
    let rest = match rest.split_first() {
        Some((&KIND_TXN_OFFSET, rest)) => rest,
        Some((&found, _)) => return Err(KeyError::OtherKind { found, expected: "a pending offset's" }),
        None => return Err(KeyError::NoKind),
    };
    let (group_id, rest) = take_string(rest, "group id")?;
    let (producer, rest) = rest.split_first_chunk::<8>().ok_or(KeyError::TruncatedBefore("producer id"))?;
    let producer_id = (u64::from_be_bytes(*producer) ^ (1 << 63)) as i64;
    let (topic, rest) = take_string(rest, "topic")?;
    let partition: [u8; 4] = rest.try_into().map_err(|_| KeyError::PartitionLength(rest.len()))?;
    Ok(TxnOffsetKey {
        group_id,
        producer_id,
        topic,
        partition: (u32::from_be_bytes(partition) ^ SIGN_FLIP) as i32,
    })
}

/// The key of a group's record.
pub(crate) fn group_key(partition: CoordinatorPartition, group_id: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(5 + group_id.len());
    key.extend_from_slice(&groups_prefix(partition));
    key.extend_from_slice(group_id.as_bytes());
    key
}

/// A group's offset key prefix: every offset key of `group_id` starts with it.
pub(crate) fn group_offsets_prefix(
    partition: CoordinatorPartition,
    group_id: &str,
) -> Result<Vec<u8>, StorageError> {
    let mut key = Vec::with_capacity(5 + 2 + group_id.len());
    key.extend_from_slice(&offsets_prefix(partition));
    push_string(&mut key, "group id", group_id)?;
    Ok(key)
}

/// The key of one topic partition's offset.
pub(crate) fn offset_key(
    partition: CoordinatorPartition,
    group_id: &str,
    topic: &str,
    topic_partition: i32,
) -> Result<Vec<u8>, StorageError> {
    let mut key = Vec::with_capacity(5 + 2 + group_id.len() + 2 + topic.len() + 4);
    key.extend_from_slice(&offsets_prefix(partition));
    push_string(&mut key, "group id", group_id)?;
    push_string(&mut key, "topic", topic)?;
    key.extend_from_slice(&((topic_partition as u32) ^ SIGN_FLIP).to_be_bytes());
    Ok(key)
}

/// The parts of an offset key, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OffsetKey<'a> {
    /// The coordinator partition.
    pub(crate) coordinator: CoordinatorPartition,
    /// The group.
    pub(crate) group_id: &'a str,
    /// The topic.
    pub(crate) topic: &'a str,
    /// The topic partition.
    pub(crate) partition: i32,
}

impl OffsetKey<'_> {
    /// The key in the form errors show it.
    pub(crate) fn display(&self) -> String {
        display_offset_key(self.coordinator, self.group_id, self.topic, self.partition)
    }
}

/// An offset key in the form errors show it.
pub(crate) fn display_offset_key(
    partition: CoordinatorPartition,
    group_id: &str,
    topic: &str,
    topic_partition: i32,
) -> String {
    format!("{PARTITIONS_TREE}/{}/offsets/{group_id}/{topic}/{topic_partition}", partition.0)
}

/// A group record key in the form errors show it.
pub(crate) fn display_group_key(partition: CoordinatorPartition, group_id: &str) -> String {
    format!("{PARTITIONS_TREE}/{}/groups/{group_id}", partition.0)
}

/// An epoch key in the form errors show it.
pub(crate) fn display_epoch_key(partition: CoordinatorPartition) -> String {
    format!("{PARTITIONS_TREE}/{}/epoch", partition.0)
}

/// A best-effort readable form of a key that failed to parse.
pub(crate) fn display_raw_key(tree: &str, key: &[u8]) -> String {
    format!("{tree}/{}", String::from_utf8_lossy(key).escape_debug())
}

/// Splits an offset key (of any partition) into its parts; `Err` says why it
/// is malformed.
pub(crate) fn parse_offset_key(key: &[u8]) -> Result<OffsetKey<'_>, KeyError> {
    let (prefix, rest) = key.split_first_chunk::<4>().ok_or(KeyError::NoPartition)?;
    let coordinator = CoordinatorPartition(u32::from_be_bytes(*prefix));
    match rest.split_first() {
        Some((&KIND_OFFSET, rest)) => {
            let (group_id, topic, partition) = parse_offset_suffix(rest)?;
            Ok(OffsetKey { coordinator, group_id, topic, partition })
        }
        Some((&found, _)) => Err(KeyError::OtherKind { found, expected: "an offset's" }),
        None => Err(KeyError::NoKind),
    }
}

/// The group id of a group record key whose 5-byte prefix was already matched.
pub(crate) fn parse_group_key(key: &[u8]) -> Result<&str, KeyError> {
    let group = key.get(5..).ok_or(KeyError::TruncatedBefore("group id"))?;
    utf8(group, "group id")
}

/// `u16 BE len(group)` · group · `u16 BE len(topic)` · topic · `u32 BE partition'`.
fn parse_offset_suffix(bytes: &[u8]) -> Result<(&str, &str, i32), KeyError> {
    let (group_id, rest) = take_string(bytes, "group id")?;
    let (topic, rest) = take_string(rest, "topic")?;
    let partition: [u8; 4] = rest.try_into().map_err(|_| KeyError::PartitionLength(rest.len()))?;
    Ok((group_id, topic, (u32::from_be_bytes(partition) ^ SIGN_FLIP) as i32))
}

fn utf8<'a>(bytes: &'a [u8], what: &'static str) -> Result<&'a str, KeyError> {
    std::str::from_utf8(bytes).map_err(|source| KeyError::NotUtf8 { what, source })
}

fn push_string(key: &mut Vec<u8>, what: &str, s: &str) -> Result<(), StorageError> {
    let len = u16::try_from(s.len()).map_err(|_| StorageError::InvalidInput {
        message: format!("{what} is {} bytes long, more than the {} a key can hold", s.len(), u16::MAX),
    })?;
    key.extend_from_slice(&len.to_be_bytes());
    key.extend_from_slice(s.as_bytes());
    Ok(())
}

fn take_string<'a>(bytes: &'a [u8], what: &'static str) -> Result<(&'a str, &'a [u8]), KeyError> {
    let (len, rest) = bytes.split_first_chunk::<2>().ok_or(KeyError::TruncatedBefore(what))?;
    let len = usize::from(u16::from_be_bytes(*len));
    if rest.len() < len {
        return Err(KeyError::ShortString { what, len, left: rest.len() });
    }
    let (s, rest) = rest.split_at(len);
    Ok((utf8(s, what)?, rest))
}

/// Layout v1, read only by the migration to v2: two trees, no partitions.
///
/// | tree | key | value |
/// | --- | --- | --- |
/// | `group_offsets` | `u16 BE len(group)` · group · `u16 BE len(topic)` · topic · `u32 BE (partition XOR 0x8000_0000)` | an offset record |
/// | `group_metadata` | group (UTF-8 bytes) | a group metadata record |
pub(crate) mod v1 {
    /// The v1 tree of committed offsets.
    pub(crate) const OFFSETS_TREE: &str = "group_offsets";

    /// The v1 tree of group metadata records.
    pub(crate) const GROUPS_TREE: &str = "group_metadata";

    /// A v1 offset key's group, topic and partition.
    pub(crate) fn parse_offset_key(key: &[u8]) -> Result<(&str, &str, i32), super::KeyError> {
        super::parse_offset_suffix(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P7: CoordinatorPartition = CoordinatorPartition(7);

    #[test]
    fn key_bytes_are_pinned() {
        assert_eq!(epoch_key(P7), [0, 0, 0, 7, 0]);
        assert_eq!(group_key(CoordinatorPartition(0x0102_0304), "g"), [1, 2, 3, 4, 1, b'g']);
        let key = offset_key(P7, "g", "t1", 5).unwrap();
        assert_eq!(key, [0, 0, 0, 7, 2, 0, 1, b'g', 0, 2, b't', b'1', 0x80, 0, 0, 5]);
        let key = offset_key(CoordinatorPartition(0), "", "", -1).unwrap();
        assert_eq!(key, [0, 0, 0, 0, 2, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff]);
    }

    #[test]
    fn txn_offset_key_bytes_are_pinned_and_parse_back() {
        let key = txn_offset_key(P7, "g", 1, "t", -1).unwrap();
        assert_eq!(
            key,
            [0, 0, 0, 7, 4, 0, 1, b'g', 0x80, 0, 0, 0, 0, 0, 0, 1, 0, 1, b't', 0x7f, 0xff, 0xff, 0xff]
        );
        for (group, producer, topic, partition) in
            [("g", 1, "t", -1), ("", i64::MIN, "", i32::MAX), ("é", -1, "t.0", 0)]
        {
            let key = txn_offset_key(P7, group, producer, topic, partition).unwrap();
            let parsed = parse_txn_offset_key(&key).unwrap();
            assert_eq!(
                (parsed.group_id, parsed.producer_id, parsed.topic, parsed.partition),
                (group, producer, topic, partition)
            );
        }
        // Producers sort as numbers: a negative id before a positive one.
        assert!(txn_offset_key(P7, "g", -1, "t", 0).unwrap() < txn_offset_key(P7, "g", 0, "t", 0).unwrap());
        let key = txn_offset_key(P7, "g", 1, "t", 0).unwrap();
        assert_eq!(parse_txn_offset_key(&key[..key.len() - 1]), Err(KeyError::PartitionLength(3)));
        assert_eq!(parse_txn_offset_key(&key[..10]), Err(KeyError::TruncatedBefore("producer id")));
        assert!(matches!(
            parse_txn_offset_key(&offset_key(P7, "g", "t", 0).unwrap()),
            Err(KeyError::OtherKind { .. })
        ));
    }

    #[test]
    fn consumer_key_bytes_are_pinned() {
        let key = consumer_key(P7, "g", 5, "m1").unwrap();
        assert_eq!(key, [0, 0, 0, 7, 3, 0, 1, b'g', 0, 5, b'm', b'1']);
        let key = consumer_key(CoordinatorPartition(0x0102_0304), "", 3, "").unwrap();
        assert_eq!(key, [1, 2, 3, 4, 3, 0, 0, 0, 3]);
        let key = consumer_key(P7, "a\0", 16, "^t.*").unwrap();
        assert_eq!(key, [0, 0, 0, 7, 3, 0, 2, b'a', 0, 0, 16, b'^', b't', b'.', b'*']);
        assert_eq!(group_consumer_prefix(P7, "g").unwrap(), [0, 0, 0, 7, 3, 0, 1, b'g']);
    }

    #[test]
    fn consumer_keys_of_prefix_sharing_names_differ() {
        // Group "a" member "bm" and group "ab" member "m" concatenate alike;
        // so do "a\0" + "b" and "a" + "\0b", and the same member under two kinds.
        let keys = [
            consumer_key(P7, "a", 5, "bm").unwrap(),
            consumer_key(P7, "ab", 5, "m").unwrap(),
            consumer_key(P7, "a\0", 5, "b").unwrap(),
            consumer_key(P7, "a", 5, "\0b").unwrap(),
            consumer_key(P7, "ab", 7, "m").unwrap(),
            consumer_key(P7, "ab", 16, "m").unwrap(),
            consumer_key(P7, "ab", 3, "").unwrap(),
            consumer_key(CoordinatorPartition(8), "ab", 5, "m").unwrap(),
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        let prefix = group_consumer_prefix(P7, "a").unwrap();
        assert!(keys[0].starts_with(&prefix) && keys[3].starts_with(&prefix));
        for key in &keys[1..3] {
            assert!(!key.starts_with(&prefix), "{key:?} is not group \"a\"'s");
        }
    }

    #[test]
    fn parse_inverts_consumer_key() {
        for (group, record_type, sub) in
            [("g", 5, "m"), ("", 3, ""), ("a\0b", 16, "^(x|y)\0$"), ("🦀", 8, "🦀")]
        {
            let key = consumer_key(P7, group, record_type, sub).unwrap();
            let parsed = parse_consumer_key(&key).unwrap();
            assert_eq!(parsed, ConsumerKey { coordinator: P7, group_id: group, record_type, sub_key: sub });
        }
        let key = consumer_key(P7, "g", 5, "m1").unwrap();
        assert_eq!(parse_consumer_key(&key).unwrap().display(), "coordinator_partitions/7/consumer/g/5/m1");
    }

    #[test]
    fn malformed_consumer_keys_are_rejected() {
        assert!(parse_consumer_key(&[]).is_err());
        assert!(parse_consumer_key(&[0, 0, 0, 1]).is_err());
        assert!(
            matches!(
                parse_consumer_key(&[0, 0, 0, 1, 2, 0, 0, 0, 5]),
                Err(KeyError::OtherKind { found: 2, .. })
            ),
            "an offset key's kind"
        );
        assert!(parse_consumer_key(&[0, 0, 0, 1, 3, 0, 5, b'a']).is_err(), "a group cut short");
        assert!(parse_consumer_key(&[0, 0, 0, 1, 3, 0, 1, b'g', 0]).is_err(), "a record type cut short");
        assert!(
            matches!(
                parse_consumer_key(&[0, 0, 0, 1, 3, 0, 1, 0xff, 0, 5]),
                Err(KeyError::NotUtf8 { what: "group id", .. })
            ),
            "a group not UTF-8"
        );
        assert!(parse_consumer_key(&[0, 0, 0, 1, 3, 0, 1, b'g', 0, 5, 0xff]).is_err(), "a sub-key not UTF-8");
        let long = "x".repeat(usize::from(u16::MAX) + 1);
        assert!(matches!(consumer_key(P7, &long, 5, "m"), Err(StorageError::InvalidInput { .. })));
        // Sub-keys have no length of their own, so no limit either.
        assert!(consumer_key(P7, "g", 16, &long).is_ok());
    }

    #[test]
    fn a_partition_is_one_contiguous_range_in_kind_order() {
        let p = P7;
        let next = CoordinatorPartition(8);
        let epoch = epoch_key(p).to_vec();
        let group = group_key(p, "\u{10ffff}");
        let offset = offset_key(p, "g", "t", i32::MAX).unwrap();
        let consumer = consumer_key(p, "", i16::MIN, "").unwrap();
        let last_consumer = consumer_key(p, "\u{10ffff}", i16::MAX, "\u{10ffff}").unwrap();
        assert!(epoch < group && group < offset);
        assert!(offset.as_slice() < offsets_end(p).as_slice());
        // Consumer records sit after the offsets' range: an offset scan never meets them.
        assert!(offsets_end(p).as_slice() <= consumer.as_slice());
        assert!(last_consumer.as_slice() < epoch_key(next).as_slice());
        for key in [&epoch, &group, &offset, &consumer, &last_consumer] {
            assert!(key.starts_with(&partition_prefix(p)));
        }
        assert!(consumer.starts_with(&consumer_prefix(p)));
    }

    #[test]
    fn group_prefix_is_a_prefix_of_its_offset_keys_only() {
        let prefix = group_offsets_prefix(P7, "ab").unwrap();
        assert_eq!(prefix, [0, 0, 0, 7, 2, 0, 2, b'a', b'b']);
        assert!(offset_key(P7, "ab", "t", 0).unwrap().starts_with(&prefix));
        assert!(!offset_key(P7, "abc", "t", 0).unwrap().starts_with(&prefix));
        assert!(!offset_key(P7, "a", "bt", 0).unwrap().starts_with(&prefix));
        assert!(!offset_key(CoordinatorPartition(8), "ab", "t", 0).unwrap().starts_with(&prefix));
    }

    #[test]
    fn partitions_sort_numerically() {
        let keys: Vec<_> = [-5, -1, 0, 1, 255, 256, i32::MAX]
            .into_iter()
            .map(|p| offset_key(P7, "g", "t", p).unwrap())
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn parse_inverts_offset_key() {
        let key = offset_key(P7, "group-α", "orders", 17).unwrap();
        let parsed = parse_offset_key(&key).unwrap();
        assert_eq!(
            parsed,
            OffsetKey { coordinator: P7, group_id: "group-α", topic: "orders", partition: 17 }
        );
        assert_eq!(parsed.display(), "coordinator_partitions/7/offsets/group-α/orders/17");
        assert_eq!(parse_group_key(&group_key(P7, "g\0h")).unwrap(), "g\0h");
    }

    #[test]
    fn malformed_keys_are_rejected() {
        assert_eq!(parse_offset_key(&[]), Err(KeyError::NoPartition));
        assert_eq!(parse_offset_key(&[0, 0, 0, 1]), Err(KeyError::NoKind));
        assert!(parse_offset_key(&[0, 0, 0, 1, 1, 0, 0]).is_err());
        assert_eq!(
            parse_offset_key(&[0, 0, 0, 1, 2, 0, 5, b'a']),
            Err(KeyError::ShortString { what: "group id", len: 5, left: 1 })
        );
        assert_eq!(
            parse_offset_key(&[0, 0, 0, 1, 2, 0, 1, b'g', 0, 1, b't', 0, 0]),
            Err(KeyError::PartitionLength(2))
        );
        assert!(parse_offset_key(&[0, 0, 0, 1, 2, 0, 1, 0xff, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(parse_group_key(&[0, 0, 0, 1, 1, 0xff]).is_err());
    }

    #[test]
    fn v1_offset_keys_parse() {
        let key = [0, 1, b'g', 0, 2, b't', b'1', 0x80, 0, 0, 5];
        assert_eq!(v1::parse_offset_key(&key).unwrap(), ("g", "t1", 5));
        assert!(v1::parse_offset_key(&key[..9]).is_err());
    }

    #[test]
    fn over_long_names_are_invalid_input() {
        let long = "x".repeat(usize::from(u16::MAX) + 1);
        assert!(matches!(offset_key(P7, &long, "t", 0), Err(StorageError::InvalidInput { .. })));
        assert!(matches!(offset_key(P7, "g", &long, 0), Err(StorageError::InvalidInput { .. })));
        assert!(matches!(group_offsets_prefix(P7, &long), Err(StorageError::InvalidInput { .. })));
    }
}
