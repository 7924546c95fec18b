//! The key layout. Every number in a key is zero-padded decimal, so etcd's
//! byte order of keys is the numeric order and a range of keys is a range of
//! numbers.
//!
//! ```text
//! {prefix}/owners/{partition:05}                 owner key (written by the cluster crate)
//! {prefix}/p/{partition:05}/epoch                highest accepted OwnerEpoch, 20 digits
//! {prefix}/p/{partition:05}/log/{seq:020}        one log entry per append
//! {prefix}/p/{partition:05}/snapshot             snapshot metadata (chunks, covered seq)
//! {prefix}/p/{partition:05}/snap/{seq:020}/{nonce:016x}/{i:06}   snapshot chunks
//! {prefix}/p/{partition:05}/stage/{seq:020}/{nonce:016x}/{i:06}  chunks of an oversized batch
//! ```

use group_offsets::{CoordinatorPartition, OwnerEpoch};

/// The key whose `create_revision` is the owner epoch of `partition` when
/// stores fence with owner keys ([`EtcdConfig::fence_with_owner_keys`]): the
/// owning node creates `{prefix}/owners/{partition:05}`, value its node id,
/// attached to its lease, and appends with the key's `create_revision` as its
/// [`OwnerEpoch`]. A key deleted (lease expired or revoked) and created again
/// by another node has a new, higher `create_revision`, so appends carrying
/// the old one are fenced.
///
/// This is the one definition of the owner key: the cluster layer that
/// creates the keys calls it too.
///
/// ```
/// use group_offsets::CoordinatorPartition;
/// use group_storage_etcd::owner_key;
///
/// assert_eq!(owner_key("/gc", CoordinatorPartition(7)), "/gc/owners/00007");
/// ```
///
/// [`EtcdConfig::fence_with_owner_keys`]: crate::EtcdConfig::fence_with_owner_keys
pub fn owner_key(prefix: &str, partition: CoordinatorPartition) -> String {
    format!("{}{:05}", owners_prefix(prefix), partition.0)
}

/// The prefix of every owner key: a range read of it lists who owns what.
///
/// ```
/// use group_offsets::CoordinatorPartition;
/// use group_storage_etcd::{owner_key, owners_prefix};
///
/// assert!(owner_key("/gc", CoordinatorPartition(7)).starts_with(&owners_prefix("/gc")));
/// ```
pub fn owners_prefix(prefix: &str) -> String {
    format!("{prefix}/owners/")
}

/// The 20-digit decimal form of an epoch: every `u64` fits, and byte order is
/// numeric order, which the epoch compare of every append relies on.
pub(crate) fn encode_epoch(epoch: OwnerEpoch) -> String {
    format!("{:020}", epoch.0)
}

/// Why a stored epoch value does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EpochError {
    /// Not 20 ASCII digits.
    #[error("an epoch is 20 decimal digits, found {found:?}")]
    NotTwentyDigits {
        /// The value, lossily as text.
        found: String,
    },
    /// 20 digits, but above `u64::MAX`.
    #[error("epoch {found:?} is over u64")]
    Overflow {
        /// The value.
        found: String,
    },
}

/// Parses an epoch value written by [`encode_epoch`].
pub(crate) fn decode_epoch(bytes: &[u8]) -> Result<OwnerEpoch, EpochError> {
    let found = || String::from_utf8_lossy(bytes).into_owned();
    if bytes.len() != 20 || !bytes.iter().all(u8::is_ascii_digit) {
        return Err(EpochError::NotTwentyDigits { found: found() });
    }
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(OwnerEpoch)
        .ok_or_else(|| EpochError::Overflow { found: found() })
}

/// The keys of one partition.
#[derive(Debug, Clone)]
pub(crate) struct PartitionKeys {
    /// `{prefix}/p/{partition:05}/`.
    base: String,
    /// The owner key.
    pub(crate) owner: String,
}

impl PartitionKeys {
    pub(crate) fn new(prefix: &str, partition: CoordinatorPartition) -> PartitionKeys {
        PartitionKeys { base: format!("{prefix}/p/{:05}/", partition.0), owner: owner_key(prefix, partition) }
    }

    pub(crate) fn epoch(&self) -> String {
        format!("{}epoch", self.base)
    }

    pub(crate) fn snapshot_meta(&self) -> String {
        format!("{}snapshot", self.base)
    }

    pub(crate) fn log(&self, seq: u64) -> String {
        format!("{}log/{seq:020}", self.base)
    }

    /// The start of the log: every entry key is at or above it.
    pub(crate) fn log_start(&self) -> String {
        format!("{}log/", self.base)
    }

    /// Just past every log key (`/` + 1 is `0`).
    pub(crate) fn log_end(&self) -> String {
        format!("{}log0", self.base)
    }

    /// The sequence number of a log key.
    pub(crate) fn log_seq(&self, key: &[u8]) -> Option<u64> {
        let rest = key.strip_prefix(self.log_start().as_bytes())?;
        std::str::from_utf8(rest).ok()?.parse().ok()
    }

    /// The directory of one staged batch.
    pub(crate) fn stage_dir(&self, seq: u64, nonce: u64) -> String {
        format!("{}stage/{seq:020}/{nonce:016x}/", self.base)
    }

    /// The start of the staging area.
    pub(crate) fn stage_start(&self) -> String {
        format!("{}stage/", self.base)
    }

    /// Just past the staged chunks of every sequence number up to `seq`.
    pub(crate) fn stage_through(&self, seq: u64) -> String {
        format!("{}stage/{:020}/", self.base, seq.saturating_add(1))
    }

    /// The directory of one snapshot's chunks.
    pub(crate) fn snap_dir(&self, covered: u64, nonce: u64) -> String {
        format!("{}snap/{covered:020}/{nonce:016x}/", self.base)
    }

    /// The start of the snapshot chunk area.
    pub(crate) fn snap_start(&self) -> String {
        format!("{}snap/", self.base)
    }
}

/// Chunk `i` of a directory.
pub(crate) fn chunk(dir: &str, i: u32) -> String {
    format!("{dir}{i:06}")
}

/// The key just past every key starting with `dir`.
pub(crate) fn prefix_end(dir: &str) -> Vec<u8> {
    let mut end = dir.as_bytes().to_vec();
    // Directories end in `/`, which is never 0xff: bumping the last byte works.
    if let Some(last) = end.last_mut() {
        *last += 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_sort_as_numbers_and_round_trip() {
        let epochs = [0, 1, 9, 10, 99, 1_000_000, u64::MAX - 1, u64::MAX];
        for w in epochs.windows(2) {
            assert!(encode_epoch(OwnerEpoch(w[0])) < encode_epoch(OwnerEpoch(w[1])));
        }
        for e in epochs {
            assert_eq!(decode_epoch(encode_epoch(OwnerEpoch(e)).as_bytes()), Ok(OwnerEpoch(e)));
        }
        assert!(matches!(decode_epoch(b"1"), Err(EpochError::NotTwentyDigits { .. })));
        assert!(matches!(decode_epoch(b"99999999999999999999"), Err(EpochError::Overflow { .. })));
        assert!(matches!(decode_epoch(b"0000000000000000000x"), Err(EpochError::NotTwentyDigits { .. })));
    }

    #[test]
    fn ranges_hold_what_they_should() {
        let k = PartitionKeys::new("/x", CoordinatorPartition(3));
        assert_eq!(k.log(5), "/x/p/00003/log/00000000000000000005");
        assert_eq!(k.log_seq(k.log(5).as_bytes()), Some(5));
        assert!(k.log_start() < k.log(0) && k.log(u64::MAX) < k.log_end());
        assert!(k.snapshot_meta() > k.snap_dir(u64::MAX, u64::MAX), "the meta is outside the chunk range");
        assert!(k.stage_dir(4, 1) < k.stage_through(4) && k.stage_through(4) <= k.stage_dir(5, 0));
        assert_eq!(prefix_end("a/"), b"a0");
    }
}
