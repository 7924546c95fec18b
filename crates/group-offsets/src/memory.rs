//! `MemoryOffsetStorage`: `PersistentOffsetStorage` over a `MemoryMetadataStore`,
//! under the name and constructor users of plain memory storage know.

use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};

use crate::{
    GroupMetadataRecord, MemoryMetadataStore, OffsetStorage, PersistentOffsetStorage, StorageError,
    StoredGroups,
};

/// [`OffsetStorage`] in process memory, for tests and single-process use.
///
/// It is [`PersistentOffsetStorage`] over a [`MemoryMetadataStore`] (no read
/// cache: the store's own fetches are as fast as a cache), so it follows the
/// same record-append rules as every other storage, and there is one
/// implementation of the offset logic to trust. Groups are spread over the
/// store's coordinator partitions, each with its own lock, so commits to
/// different groups from different threads rarely wait for each other; a
/// multi-partition store is one append, which readers see all of or none of.
/// Nothing survives the process. Cloning gives another handle on the same data.
///
/// ```
/// use group_offsets::{MemoryOffsetStorage, OffsetStorage};
/// use group_types::{OffsetAndMetadata, TopicPartition};
///
/// let storage = MemoryOffsetStorage::new();
/// let tp = TopicPartition::new("orders", 0);
/// storage.store_offset("billing", &tp, OffsetAndMetadata::new(42, 1_700_000_000_000))?;
/// assert_eq!(storage.fetch_offset("billing", &tp)?.map(|o| o.offset), Some(42));
/// assert_eq!(storage.offset_count(), 1);
/// # Ok::<(), group_offsets::StorageError>(())
/// ```
#[derive(Debug, Clone)]
pub struct MemoryOffsetStorage {
    inner: PersistentOffsetStorage<MemoryMetadataStore>,
}

impl Default for MemoryOffsetStorage {
    fn default() -> MemoryOffsetStorage {
        MemoryOffsetStorage::new()
    }
}

impl MemoryOffsetStorage {
    /// Empty storage.
    pub fn new() -> MemoryOffsetStorage {
        MemoryOffsetStorage::over(MemoryMetadataStore::new())
    }

    /// Storage over an existing memory store (a clone of which the caller may
    /// keep, to inject faults or hold appends back).
    pub fn over(store: MemoryMetadataStore) -> MemoryOffsetStorage {
        MemoryOffsetStorage { inner: PersistentOffsetStorage::new(store) }
    }

    /// The store underneath.
    pub fn store(&self) -> &MemoryMetadataStore {
        self.inner.store()
    }

    /// How many partition offsets are stored, over every group.
    pub fn offset_count(&self) -> usize {
        self.inner.store().offset_count()
    }
}

impl OffsetStorage for MemoryOffsetStorage {
    fn store_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
        offset: OffsetAndMetadata,
    ) -> Result<(), StorageError> {
        self.inner.store_offset(group_id, partition, offset)
    }

    fn store_offsets(
        &self,
        group_id: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> Result<(), StorageError> {
        self.inner.store_offsets(group_id, offsets)
    }

    fn fetch_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
    ) -> Result<Option<OffsetAndMetadata>, StorageError> {
        self.inner.fetch_offset(group_id, partition)
    }

    fn fetch_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
        self.inner.fetch_offsets(group_id)
    }

    fn delete_offsets(&self, group_id: &str) -> Result<(), StorageError> {
        self.inner.delete_offsets(group_id)
    }

    fn delete_partitions(&self, group_id: &str, partitions: &[TopicPartition]) -> Result<(), StorageError> {
        self.inner.delete_partitions(group_id, partitions)
    }

    fn store_group(&self, record: GroupMetadataRecord) -> Result<(), StorageError> {
        self.inner.store_group(record)
    }

    fn delete_group(&self, group_id: &str) -> Result<(), StorageError> {
        self.inner.delete_group(group_id)
    }

    fn load(&self) -> Result<StoredGroups, StorageError> {
        self.inner.load()
    }
}
