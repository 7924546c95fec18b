//! `OffsetManager`: commits with Kafka's validation over any `OffsetStorage`.

use group_types::{OffsetAndMetadata, PartitionMap, TopicPartition};

use crate::metadata_limit::{DEFAULT_OFFSET_METADATA_MAX_BYTES, validate_metadata};
use crate::retention::{RetentionGroup, expired_offsets};
use crate::{OffsetError, OffsetStorage, StorageError};

/// What a fetch answers for a partition with no committed offset, everywhere
/// in this workspace (Kafka's OffsetFetch answers the same).
pub const NO_OFFSET: i64 = -1;

/// The outcome of each partition of one [`OffsetManager::commit_offsets`] call,
/// in the order the partitions were given.
pub type CommitResults = Vec<(TopicPartition, Result<(), OffsetError>)>;

/// Offsets as a coordinator handles them: validated, then stored.
///
/// The seed's `OffsetManager` took `(topic, partition, offset, metadata)` and
/// read the clock itself; here the caller passes a whole
/// [`OffsetAndMetadata`] (commit time included), so the manager stays
/// deterministic and carries the leader epoch and expiry Kafka stores.
///
/// ```
/// use group_offsets::{MemoryOffsetStorage, NO_OFFSET, OffsetManager};
/// use group_types::{OffsetAndMetadata, TopicPartition};
///
/// let manager = OffsetManager::new(MemoryOffsetStorage::new());
/// let tp = TopicPartition::new("orders", 0);
/// assert_eq!(manager.get_offset("billing", &tp)?, NO_OFFSET);
/// manager.commit_offset("billing", &tp, OffsetAndMetadata::new(42, 1_700_000_000_000))?;
/// assert_eq!(manager.get_offset("billing", &tp)?, 42);
/// assert_eq!(manager.get_all_offsets("billing")?["orders"][&0], 42);
/// manager.reset_offsets("billing")?;
/// assert_eq!(manager.get_offset("billing", &tp)?, NO_OFFSET);
/// # Ok::<(), group_offsets::OffsetError>(())
/// ```
#[derive(Debug, Clone)]
pub struct OffsetManager<S> {
    storage: S,
    metadata_max_bytes: usize,
}

impl<S: OffsetStorage> OffsetManager<S> {
    /// A manager over `storage`, with Kafka's default metadata limit (4096).
    pub fn new(storage: S) -> OffsetManager<S> {
        OffsetManager { storage, metadata_max_bytes: DEFAULT_OFFSET_METADATA_MAX_BYTES }
    }

    /// The same manager with another `offset.metadata.max.bytes`.
    pub fn with_metadata_max_bytes(self, max: usize) -> OffsetManager<S> {
        OffsetManager { metadata_max_bytes: max, ..self }
    }

    /// The configured `offset.metadata.max.bytes`.
    pub fn metadata_max_bytes(&self) -> usize {
        self.metadata_max_bytes
    }

    /// The storage underneath.
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// Commits one partition's offset, unless its metadata is too long.
    pub fn commit_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
        offset: OffsetAndMetadata,
    ) -> Result<(), OffsetError> {
        validate_metadata(partition, &offset.metadata, self.metadata_max_bytes)?;
        self.storage.store_offset(group_id, partition, offset)?;
        Ok(())
    }

    /// Commits one OffsetCommit request's partitions as Kafka does: partitions
    /// with oversized metadata fail alone with
    /// [`OffsetError::MetadataTooLarge`]; the others are stored together in one
    /// atomic store (nothing is written when none remain), and if that store
    /// fails each of them carries the [`OffsetError::Storage`] error.
    pub fn commit_offsets(
        &self,
        group_id: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> CommitResults {
        let checks: Vec<Result<(), OffsetError>> = offsets
            .iter()
            .map(|(tp, offset)| validate_metadata(tp, &offset.metadata, self.metadata_max_bytes))
            .collect();
        let stored = if checks.iter().all(Result::is_ok) {
            self.storage.store_offsets(group_id, offsets)
        } else {
            let valid: Vec<_> = offsets
                .iter()
                .zip(&checks)
                .filter(|(_, check)| check.is_ok())
                .map(|(entry, _)| entry.clone())
                .collect();
            if valid.is_empty() { Ok(()) } else { self.storage.store_offsets(group_id, &valid) }
        };
        offsets
            .iter()
            .zip(checks)
            .map(|((tp, _), check)| {
                let outcome = match (check, &stored) {
                    (Err(too_large), _) => Err(too_large),
                    (Ok(()), Ok(())) => Ok(()),
                    (Ok(()), Err(e)) => Err(OffsetError::Storage(e.clone())),
                };
                (tp.clone(), outcome)
            })
            .collect()
    }

    /// The committed offset of a partition, [`NO_OFFSET`] (-1) when there is none.
    pub fn get_offset(&self, group_id: &str, partition: &TopicPartition) -> Result<i64, StorageError> {
        Ok(self.storage.fetch_offset(group_id, partition)?.map_or(NO_OFFSET, |o| o.offset))
    }

    /// Every committed offset of a group, by topic and partition (empty for an unknown group).
    pub fn get_all_offsets(&self, group_id: &str) -> Result<PartitionMap<i64>, StorageError> {
        let all = self.storage.fetch_offsets(group_id)?;
        Ok(all
            .offsets
            .into_iter()
            .filter(|(_, partitions)| !partitions.is_empty())
            .map(|(topic, partitions)| (topic, partitions.into_iter().map(|(p, o)| (p, o.offset)).collect()))
            .collect())
    }

    /// Forgets every committed offset of a group: its consumers start again from
    /// their `auto.offset.reset` position.
    pub fn reset_offsets(&self, group_id: &str) -> Result<(), StorageError> {
        self.storage.delete_offsets(group_id)
    }

    /// Checks that `min <= offset <= max`; see [`validate_offset`].
    pub fn validate_offset(&self, offset: i64, min: i64, max: i64) -> Result<(), OffsetError> {
        validate_offset(offset, min, max)
    }

    /// Runs one retention pass over a group (`kafka-semantics.md` §6.5): deletes
    /// the offsets [`expired_offsets`] names and returns them.
    pub fn expire_offsets(
        &self,
        group_id: &str,
        group: &RetentionGroup<'_>,
        now_ms: i64,
        retention_ms: i64,
    ) -> Result<Vec<TopicPartition>, StorageError> {
        let offsets = self.storage.fetch_offsets(group_id)?;
        let expired = expired_offsets(group, &offsets.offsets, now_ms, retention_ms);
        if !expired.is_empty() {
            self.storage.delete_partitions(group_id, &expired)?;
        }
        Ok(expired)
    }
}

/// Checks that `min <= offset <= max` (both ends included), e.g. that a
/// requested position lies between a partition's log start and end offsets.
///
/// ```
/// use group_offsets::{OffsetError, validate_offset};
/// assert!(validate_offset(5, 0, 10).is_ok());
/// assert_eq!(validate_offset(11, 0, 10), Err(OffsetError::OutOfRange { offset: 11, min: 0, max: 10 }));
/// assert_eq!(validate_offset(0, 3, 2), Err(OffsetError::InvalidRange { min: 3, max: 2 }));
/// ```
pub fn validate_offset(offset: i64, min: i64, max: i64) -> Result<(), OffsetError> {
    if min > max {
        return Err(OffsetError::InvalidRange { min, max });
    }
    if offset < min || offset > max {
        return Err(OffsetError::OutOfRange { offset, min, max });
    }
    Ok(())
}
