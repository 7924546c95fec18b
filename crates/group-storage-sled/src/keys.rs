//! The key layout: how coordinator partitions, groups, topics and partitions
//! become sled keys (layout v2), and how the old layout v1 keys read.
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
//!
//! The length in front of an offset key's group id makes the group prefix
//! unambiguous: no group's prefix is a prefix of another group's keys. A group
//! record's key needs no length: it is looked up whole, and scanned only as
//! part of its partition. The topic partition's sign bit is flipped so that
//! negative numbers, should any ever be stored, sort before positive ones.

use group_offsets::{CoordinatorPartition, StorageError};

/// The sled tree holding every coordinator partition (layout v2).
pub const PARTITIONS_TREE: &str = "coordinator_partitions";

/// The kind byte of a partition's owner epoch key.
const KIND_EPOCH: u8 = 0;
/// The kind byte of group record keys.
pub(crate) const KIND_GROUP: u8 = 1;
/// The kind byte of offset keys.
const KIND_OFFSET: u8 = 2;

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
pub(crate) fn parse_offset_key(key: &[u8]) -> Result<OffsetKey<'_>, String> {
    let (prefix, rest) = key.split_first_chunk::<4>().ok_or("shorter than a partition prefix")?;
    let coordinator = CoordinatorPartition(u32::from_be_bytes(*prefix));
    match rest.split_first() {
        Some((&KIND_OFFSET, rest)) => {
            let (group_id, topic, partition) = parse_offset_suffix(rest)?;
            Ok(OffsetKey { coordinator, group_id, topic, partition })
        }
        Some((kind, _)) => Err(format!("kind byte {kind} is not an offset's")),
        None => Err("no kind byte".to_owned()),
    }
}

/// The group id of a group record key whose 5-byte prefix was already matched.
pub(crate) fn parse_group_key(key: &[u8]) -> Result<&str, String> {
    let group = key.get(5..).ok_or("shorter than a group key prefix")?;
    std::str::from_utf8(group).map_err(|e| format!("group id is not UTF-8: {e}"))
}

/// `u16 BE len(group)` · group · `u16 BE len(topic)` · topic · `u32 BE partition'`.
fn parse_offset_suffix(bytes: &[u8]) -> Result<(&str, &str, i32), String> {
    let (group_id, rest) = take_string(bytes, "group id")?;
    let (topic, rest) = take_string(rest, "topic")?;
    let partition: [u8; 4] =
        rest.try_into().map_err(|_| format!("expected a 4-byte partition, found {} bytes", rest.len()))?;
    Ok((group_id, topic, (u32::from_be_bytes(partition) ^ SIGN_FLIP) as i32))
}

fn push_string(key: &mut Vec<u8>, what: &str, s: &str) -> Result<(), StorageError> {
    let len = u16::try_from(s.len()).map_err(|_| StorageError::InvalidInput {
        message: format!("{what} is {} bytes long, more than the {} a key can hold", s.len(), u16::MAX),
    })?;
    key.extend_from_slice(&len.to_be_bytes());
    key.extend_from_slice(s.as_bytes());
    Ok(())
}

fn take_string<'a>(bytes: &'a [u8], what: &str) -> Result<(&'a str, &'a [u8]), String> {
    let (len, rest) = bytes.split_first_chunk::<2>().ok_or_else(|| format!("truncated before the {what}"))?;
    let len = usize::from(u16::from_be_bytes(*len));
    if rest.len() < len {
        return Err(format!("{what} claims {len} bytes but {} remain", rest.len()));
    }
    let (s, rest) = rest.split_at(len);
    let s = std::str::from_utf8(s).map_err(|e| format!("{what} is not UTF-8: {e}"))?;
    Ok((s, rest))
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
    pub(crate) fn parse_offset_key(key: &[u8]) -> Result<(&str, &str, i32), String> {
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
    fn a_partition_is_one_contiguous_range_in_kind_order() {
        let p = P7;
        let next = CoordinatorPartition(8);
        let epoch = epoch_key(p).to_vec();
        let group = group_key(p, "\u{10ffff}");
        let offset = offset_key(p, "g", "t", i32::MAX).unwrap();
        assert!(epoch < group && group < offset);
        assert!(offset.as_slice() < offsets_end(p).as_slice());
        assert!(offsets_end(p).as_slice() < epoch_key(next).as_slice());
        for key in [&epoch, &group, &offset] {
            assert!(key.starts_with(&partition_prefix(p)));
        }
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
        assert!(parse_offset_key(&[]).is_err());
        assert!(parse_offset_key(&[0, 0, 0, 1]).is_err());
        assert!(parse_offset_key(&[0, 0, 0, 1, 1, 0, 0]).is_err());
        assert!(parse_offset_key(&[0, 0, 0, 1, 2, 0, 5, b'a']).is_err());
        assert!(parse_offset_key(&[0, 0, 0, 1, 2, 0, 1, b'g', 0, 1, b't', 0, 0]).is_err());
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
