//! The key layout: how groups, topics and partitions become sled keys.
//!
//! Keys are hand-encoded (never through bincode) so that sled's byte order is
//! the order we want: numbers are big-endian, and every group's offsets share
//! one prefix so they are a single range scan.
//!
//! | tree | key | value |
//! | --- | --- | --- |
//! | [`OFFSETS_TREE`] | `u16 BE len(group)` · group · `u16 BE len(topic)` · topic · `u32 BE (partition XOR 0x8000_0000)` | an offset record |
//! | [`GROUPS_TREE`] | group (its UTF-8 bytes, nothing else) | a group metadata record |
//!
//! The length in front of the group id makes the group prefix unambiguous:
//! no group's prefix is a prefix of another group's keys. The partition's sign
//! bit is flipped so that negative numbers, should any ever be stored, sort
//! before positive ones.

use group_offsets::StorageError;

/// The sled tree holding committed offsets.
pub const OFFSETS_TREE: &str = "group_offsets";

/// The sled tree holding group metadata records.
pub const GROUPS_TREE: &str = "group_metadata";

/// Flipping the sign bit turns two's complement order into unsigned byte order.
const SIGN_FLIP: u32 = 0x8000_0000;

/// A group's offset key prefix: every offset key of `group_id` starts with it.
pub(crate) fn group_prefix(group_id: &str) -> Result<Vec<u8>, StorageError> {
    let mut key = Vec::with_capacity(2 + group_id.len());
    push_string(&mut key, "group id", group_id)?;
    Ok(key)
}

/// The key of one partition's offset.
pub(crate) fn offset_key(group_id: &str, topic: &str, partition: i32) -> Result<Vec<u8>, StorageError> {
    let mut key = Vec::with_capacity(2 + group_id.len() + 2 + topic.len() + 4);
    push_string(&mut key, "group id", group_id)?;
    push_string(&mut key, "topic", topic)?;
    key.extend_from_slice(&((partition as u32) ^ SIGN_FLIP).to_be_bytes());
    Ok(key)
}

/// The parts of an offset key, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OffsetKey<'a> {
    /// The group.
    pub(crate) group_id: &'a str,
    /// The topic.
    pub(crate) topic: &'a str,
    /// The partition.
    pub(crate) partition: i32,
}

impl OffsetKey<'_> {
    /// The key in the form errors show it.
    pub(crate) fn display(&self) -> String {
        display_offset_key(self.group_id, self.topic, self.partition)
    }
}

/// An offset key in the form errors show it.
pub(crate) fn display_offset_key(group_id: &str, topic: &str, partition: i32) -> String {
    format!("{OFFSETS_TREE}/{group_id}/{topic}/{partition}")
}

/// A group key in the form errors show it.
pub(crate) fn display_group_key(group_id: &str) -> String {
    format!("{GROUPS_TREE}/{group_id}")
}

/// Splits an offset key into its parts; `Err` says why it is malformed.
pub(crate) fn parse_offset_key(key: &[u8]) -> Result<OffsetKey<'_>, String> {
    let (group_id, rest) = take_string(key, "group id")?;
    let (topic, rest) = take_string(rest, "topic")?;
    let partition: [u8; 4] =
        rest.try_into().map_err(|_| format!("expected a 4-byte partition, found {} bytes", rest.len()))?;
    let partition = (u32::from_be_bytes(partition) ^ SIGN_FLIP) as i32;
    Ok(OffsetKey { group_id, topic, partition })
}

/// A best-effort readable form of a key that failed to parse.
pub(crate) fn display_raw_key(tree: &str, key: &[u8]) -> String {
    format!("{tree}/{}", String::from_utf8_lossy(key).escape_debug())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_key_bytes_are_pinned() {
        let key = offset_key("g", "t1", 5).unwrap();
        assert_eq!(key, [0, 1, b'g', 0, 2, b't', b'1', 0x80, 0, 0, 5]);
        let key = offset_key("", "", -1).unwrap();
        assert_eq!(key, [0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff]);
    }

    #[test]
    fn group_prefix_is_a_prefix_of_its_offset_keys_only() {
        let prefix = group_prefix("ab").unwrap();
        assert_eq!(prefix, [0, 2, b'a', b'b']);
        assert!(offset_key("ab", "t", 0).unwrap().starts_with(&prefix));
        assert!(!offset_key("abc", "t", 0).unwrap().starts_with(&prefix));
        assert!(!offset_key("a", "bt", 0).unwrap().starts_with(&prefix));
    }

    #[test]
    fn partitions_sort_numerically() {
        let keys: Vec<_> = [-5, -1, 0, 1, 255, 256, i32::MAX]
            .into_iter()
            .map(|p| offset_key("g", "t", p).unwrap())
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn parse_inverts_offset_key() {
        let key = offset_key("group-α", "orders", 17).unwrap();
        let parsed = parse_offset_key(&key).unwrap();
        assert_eq!(parsed, OffsetKey { group_id: "group-α", topic: "orders", partition: 17 });
        assert_eq!(parsed.display(), "group_offsets/group-α/orders/17");
    }

    #[test]
    fn malformed_keys_are_rejected() {
        assert!(parse_offset_key(&[]).is_err());
        assert!(parse_offset_key(&[0, 5, b'a']).is_err());
        assert!(parse_offset_key(&[0, 1, b'g', 0, 1, b't', 0, 0]).is_err());
        assert!(parse_offset_key(&[0, 1, 0xff, 0, 0, 0, 0, 0, 0]).is_err());
    }

    #[test]
    fn over_long_names_are_invalid_input() {
        let long = "x".repeat(usize::from(u16::MAX) + 1);
        assert!(matches!(offset_key(&long, "t", 0), Err(StorageError::InvalidInput { .. })));
        assert!(matches!(offset_key("g", &long, 0), Err(StorageError::InvalidInput { .. })));
    }
}
