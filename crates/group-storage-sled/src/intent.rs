//! Atomic multi-key appends without sled batches: an append that writes more
//! than one key first records all its writes as one value (its *intent*), then
//! makes them one key at a time, then removes the intent; opening the store
//! rolls forward any intent a crash left behind.
//!
//! # Why not `sled::Batch`
//!
//! sled 0.34 makes a batch atomic by rolling its log buffer before and after
//! the batch (`PageCache::pin_log`), so every multi-key batch writes a log
//! buffer of its own (a `pwrite` and a waiting `sync_file_range`), whatever the
//! group commit around it. Under the coordinator's batching (several commits of
//! one partition per append) that was about 2 KB written and three system
//! calls per commit, and 256 concurrent committers ran at 32 k commits/s where
//! single-key appends ran at 108 k. An intent is one ordinary insert.
//!
//! # Why it is atomic
//!
//! sled recovers a prefix of its log: an update is recovered only with every
//! update logged before it. The intent is logged before the writes it names and
//! removed after them, all under the partition's lock, so after a crash a
//! partition holds either none of the writes (no intent), the intent and any
//! part of them (rolled forward at open: each write sets a key to a value, so
//! making them again is harmless), or all of them. The next append of the
//! partition is logged after the removal, so a rolled-forward intent never
//! overwrites a later write.
//!
//! A failed append is undone by the store's recovery, which also removes the
//! intents left by failed appends (see `Shared::recover`).
//!
//! # Format
//!
//! The intents live in their own tree, [`INTENTS_TREE`], keyed by the
//! partition (`u32` big-endian), so no scan of a partition's keys meets them.
//! A value is [`INTENT_FORMAT_V1`], the number of writes (`u32 BE`), then per
//! write: `u32 BE` key length, the key, then `0xFF` for a removal or `0x00`,
//! `u32 BE` value length and the value. The count makes any cut value an error.

use group_offsets::{CoordinatorPartition, StorageError};

use crate::engine::{Handles, Writes};
use crate::store::from_sled;

/// The sled tree holding the intents of multi-key appends in progress.
pub const INTENTS_TREE: &str = "coordinator_partition_intents";

/// The format version of intent values written today.
pub(crate) const INTENT_FORMAT_V1: u8 = 1;

const SET: u8 = 0x00;
const REMOVE: u8 = 0xFF;

/// Why an intent value cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum IntentError {
    /// No version byte.
    #[error("empty intent")]
    Empty,
    /// A format this build does not know.
    #[error("unknown intent format {0}")]
    UnknownFormat(u8),
    /// The value ends inside a field.
    #[error("truncated intent: {left} bytes left, {needed} needed")]
    Truncated {
        /// The bytes left.
        left: usize,
        /// The bytes the field needs.
        needed: usize,
    },
    /// A write that is neither a set nor a removal.
    #[error("unknown write kind {0}")]
    UnknownWriteKind(u8),
    /// Bytes after the last write.
    #[error("{0} bytes after the last write")]
    Trailing(usize),
}

/// The intent key of `partition`.
fn intent_key(partition: CoordinatorPartition) -> [u8; 4] {
    partition.0.to_be_bytes()
}

/// Makes `writes` in `partition`: one insert or removal for a single write,
/// else through an intent (module docs).
pub(crate) fn write(h: &Handles, partition: CoordinatorPartition, writes: Writes) -> sled::Result<()> {
    let several = writes.len() > 1;
    if several {
        h.intents.insert(intent_key(partition), encode(&writes))?;
    }
    for (key, value) in writes {
        match value {
            Some(value) => h.tree.insert(key, value)?,
            None => h.tree.remove(key)?,
        };
    }
    if several {
        h.intents.remove(intent_key(partition))?;
    }
    Ok(())
}

/// Makes the writes of every intent a crash left and removes it; returns how
/// many there were. Run at open, before anything reads the partitions.
pub(crate) fn roll_forward(h: &Handles) -> Result<usize, StorageError> {
    let mut rolled = 0;
    for entry in h.intents.iter() {
        let (key, value) = entry.map_err(from_sled)?;
        let writes = decode(&value).map_err(|reason| {
            let partition = <[u8; 4]>::try_from(&*key)
                .map_or_else(|_| format!("{:?}", &*key), |p| u32::from_be_bytes(p).to_string());
            StorageError::unavailable(format!(
                "the unfinished append of coordinator partition {partition} cannot be read ({reason}); \
                     the store cannot tell which of its writes were made"
            ))
        })?;
        for (k, v) in writes {
            match v {
                Some(v) => h.tree.insert(k, v).map_err(from_sled)?,
                None => h.tree.remove(k).map_err(from_sled)?,
            };
        }
        h.intents.remove(key).map_err(from_sled)?;
        rolled += 1;
    }
    Ok(rolled)
}

/// Removes every intent (those of failed appends, during recovery).
pub(crate) fn clear(h: &Handles) -> Result<(), StorageError> {
    h.intents.clear().map_err(from_sled)
}

/// The intent value of `writes`.
pub(crate) fn encode(writes: &Writes) -> Vec<u8> {
    let size = writes.iter().map(|(k, v)| 9 + k.len() + v.as_ref().map_or(0, Vec::len)).sum::<usize>();
    let mut out = Vec::with_capacity(5 + size);
    out.push(INTENT_FORMAT_V1);
    out.extend_from_slice(&u32::try_from(writes.len()).unwrap_or(u32::MAX).to_be_bytes());
    for (key, value) in writes {
        push_bytes(&mut out, key);
        match value {
            Some(value) => {
                out.push(SET);
                push_bytes(&mut out, value);
            }
            None => out.push(REMOVE),
        }
    }
    out
}

/// The writes of an intent value.
pub(crate) fn decode(bytes: &[u8]) -> Result<Writes, IntentError> {
    let Some((&version, mut rest)) = bytes.split_first() else { return Err(IntentError::Empty) };
    if version != INTENT_FORMAT_V1 {
        return Err(IntentError::UnknownFormat(version));
    }
    let count = take(&mut rest, 4)?;
    let count = u32::from_be_bytes([count[0], count[1], count[2], count[3]]);
    let mut writes = Writes::new();
    for _ in 0..count {
        let key = take_bytes(&mut rest)?;
        let value = match take(&mut rest, 1)?[0] {
            SET => Some(take_bytes(&mut rest)?),
            REMOVE => None,
            other => return Err(IntentError::UnknownWriteKind(other)),
        };
        writes.insert(key, value);
    }
    if !rest.is_empty() {
        return Err(IntentError::Trailing(rest.len()));
    }
    Ok(writes)
}

fn push_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    // Keys and values come from the store's own encoders, which bound them far
    // below 4 GiB; a longer one could not have been inserted into sled either.
    out.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn take<'a>(rest: &mut &'a [u8], n: usize) -> Result<&'a [u8], IntentError> {
    if rest.len() < n {
        return Err(IntentError::Truncated { left: rest.len(), needed: n });
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Ok(head)
}

fn take_bytes(rest: &mut &[u8]) -> Result<Vec<u8>, IntentError> {
    let len = take(rest, 4)?;
    let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
    Ok(take(rest, len)?.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn an_intent_decodes_to_its_writes(
            writes in proptest::collection::btree_map(
                proptest::collection::vec(any::<u8>(), 0..40),
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..80)),
                0..12,
            )
        ) {
            prop_assert_eq!(decode(&encode(&writes)), Ok(writes));
        }

        #[test]
        fn a_cut_intent_is_an_error_not_a_panic(
            writes in proptest::collection::btree_map(
                proptest::collection::vec(any::<u8>(), 1..20),
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..20)),
                1..6,
            ),
            cut in any::<prop::sample::Index>(),
        ) {
            let bytes = encode(&writes);
            prop_assert!(decode(&bytes[..cut.index(bytes.len())]).is_err());
            let mut longer = bytes.clone();
            longer.push(0);
            prop_assert!(decode(&longer).is_err());
        }
    }

    #[test]
    fn unknown_versions_and_kinds_are_refused() {
        assert_eq!(decode(&[]), Err(IntentError::Empty));
        assert_eq!(decode(&[2]), Err(IntentError::UnknownFormat(2)));
        assert_eq!(
            decode(&[INTENT_FORMAT_V1, 0, 0, 0, 1, 0, 0, 0, 1, b'k', 7]),
            Err(IntentError::UnknownWriteKind(7))
        );
        assert_eq!(decode(&[INTENT_FORMAT_V1, 0, 0]), Err(IntentError::Truncated { left: 2, needed: 4 }));
    }
}
