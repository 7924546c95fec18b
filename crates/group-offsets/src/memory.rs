//! `MemoryOffsetStorage`: offsets and group records in process memory.

use std::sync::Arc;

use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};

use crate::shards::MemoryGroups;
use crate::{GroupMetadataRecord, OffsetStorage, StorageError, StoredGroups};

/// [`OffsetStorage`] in process memory, for tests and single-process use.
///
/// Groups are spread over 64 locks by a hash of their id, so commits to
/// different groups from different threads rarely wait for each other; a
/// multi-partition store takes its group's lock once, so readers see all of it
/// or none of it. Nothing survives the process. Cloning gives another handle on
/// the same data.
///
/// ```
/// use group_offsets::{MemoryOffsetStorage, OffsetStorage};
/// use group_types::{OffsetAndMetadata, TopicPartition};
///
/// let storage = MemoryOffsetStorage::new();
/// let tp = TopicPartition::new("orders", 0);
/// storage.store_offset("billing", &tp, OffsetAndMetadata::new(42, 1_700_000_000_000))?;
/// assert_eq!(storage.fetch_offset("billing", &tp)?.map(|o| o.offset), Some(42));
/// # Ok::<(), group_offsets::StorageError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemoryOffsetStorage {
    groups: Arc<MemoryGroups>,
}

impl MemoryOffsetStorage {
    /// Empty storage.
    pub fn new() -> MemoryOffsetStorage {
        MemoryOffsetStorage::default()
    }

    /// How many partition offsets are stored, over every group.
    pub fn offset_count(&self) -> usize {
        self.groups.offset_count()
    }
}

impl OffsetStorage for MemoryOffsetStorage {
    fn store_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
        offset: OffsetAndMetadata,
    ) -> Result<(), StorageError> {
        self.groups.store_one(group_id, &partition.topic, partition.partition, offset);
        Ok(())
    }

    fn store_offsets(
        &self,
        group_id: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> Result<(), StorageError> {
        self.groups.store_many(group_id, offsets);
        Ok(())
    }

    fn fetch_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
    ) -> Result<Option<OffsetAndMetadata>, StorageError> {
        Ok(self.groups.fetch(group_id, partition.topic(), partition.partition))
    }

    fn fetch_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
        Ok(self.groups.fetch_all(group_id))
    }

    fn delete_offsets(&self, group_id: &str) -> Result<(), StorageError> {
        self.groups.delete_all(group_id);
        Ok(())
    }

    fn delete_partitions(&self, group_id: &str, partitions: &[TopicPartition]) -> Result<(), StorageError> {
        self.groups.delete_partitions(group_id, partitions);
        Ok(())
    }

    fn store_group(&self, record: GroupMetadataRecord) -> Result<(), StorageError> {
        self.groups.store_owned_record(record);
        Ok(())
    }

    fn delete_group(&self, group_id: &str) -> Result<(), StorageError> {
        self.groups.delete_record(group_id);
        Ok(())
    }

    fn load(&self) -> Result<StoredGroups, StorageError> {
        Ok(self.groups.load_all())
    }
}
