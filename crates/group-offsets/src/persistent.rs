//! `PersistentOffsetStorage`: the one `OffsetStorage`, over any `MetadataStore`,
//! writing record appends.

use std::sync::{Arc, LockResult, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};

use group_types::hash::{ClientMap, shard_index};

use crate::shards::Padded;
use crate::{GroupMetadataRecord, MetadataStore, OffsetStorage, Record, StorageError, StoredGroups};

const CACHE_SHARDS: usize = 64;

/// [`OffsetStorage`] over any [`MetadataStore`]: every write is one atomic
/// append of [`Record`]s to the group's coordinator partition
/// ([`MetadataStore::partition_of`]), at the partition's current
/// [`owner_epoch`](MetadataStore::owner_epoch), acknowledged only when the
/// store acknowledges it, so the store's durability promise becomes the
/// caller's.
///
/// | call | append |
/// |---|---|
/// | `store_offset`, `store_offsets` | one [`Record::Offset`] per partition, all in one append |
/// | `delete_partitions` | one [`Record::OffsetTombstone`] per partition |
/// | `delete_offsets` | a tombstone for every stored offset of the group |
/// | `store_group` | [`Record::Group`] |
/// | `delete_group` | [`Record::GroupTombstone`] |
///
/// `load` is [`MetadataStore::load_all`]. Writing at the current epoch means
/// this storage never fences anyone, and a write that races a new owner's
/// first append fails with [`StorageError::Fenced`] and changes nothing.
/// Callers that own partitions (the coordinator) append with their own epoch
/// instead.
///
/// [`new`](Self::new) reads through to the store on every fetch: right even
/// when other processes write the same store. [`with_read_cache`](Self::with_read_cache)
/// keeps each group's offsets in memory once read, for a store this instance
/// (and its clones, which share the cache) alone writes. The cache never
/// disagrees with acknowledged writes: each group's writes and cache updates
/// happen under that group's lock, the cache changes only after the store said
/// `Ok`, and a failed write drops the group from the cache, so the next read
/// asks the store. Groups never wait for each other's I/O.
///
/// ```
/// use group_offsets::{MemoryMetadataStore, OffsetStorage, PersistentOffsetStorage, StorageError};
/// use group_types::{OffsetAndMetadata, TopicPartition};
///
/// let store = MemoryMetadataStore::new();
/// let storage = PersistentOffsetStorage::with_read_cache(store.clone());
/// let tp = TopicPartition::new("orders", 0);
/// storage.store_offset("billing", &tp, OffsetAndMetadata::new(42, 0))?;
///
/// store.fail_writes(Some(StorageError::io("disk full")));
/// assert!(storage.store_offset("billing", &tp, OffsetAndMetadata::new(43, 0)).is_err());
/// store.fail_writes(None);
/// assert_eq!(storage.fetch_offset("billing", &tp)?.map(|o| o.offset), Some(42));
///
/// // A restart: a new storage over the same store sees every acknowledged write.
/// let restarted = PersistentOffsetStorage::new(store);
/// assert_eq!(restarted.load()?.offsets.len(), 1);
/// # Ok::<(), StorageError>(())
/// ```
#[derive(Debug, Clone)]
pub struct PersistentOffsetStorage<M> {
    store: M,
    cache: Option<Arc<Cache>>,
}

impl<M: MetadataStore> PersistentOffsetStorage<M> {
    /// Storage over `store` with no cache: every fetch reads the store.
    pub fn new(store: M) -> PersistentOffsetStorage<M> {
        PersistentOffsetStorage { store, cache: None }
    }

    /// Storage over `store` that keeps each group's offsets in memory after the
    /// first read. Only for a store no other process writes.
    pub fn with_read_cache(store: M) -> PersistentOffsetStorage<M> {
        PersistentOffsetStorage { store, cache: Some(Arc::default()) }
    }

    /// The store underneath.
    pub fn store(&self) -> &M {
        &self.store
    }

    /// True when fetches are served from memory.
    pub fn has_read_cache(&self) -> bool {
        self.cache.is_some()
    }

    /// One append of `records` to the group's partition, at its current epoch.
    fn append(&self, group_id: &str, records: Vec<Record>) -> Result<(), StorageError> {
        let partition = self.store.partition_of(group_id);
        let epoch = self.store.owner_epoch(partition)?;
        self.store.append_blocking(partition, epoch, records)
    }

    /// A write to one group: through the group's cache slot when caching.
    ///
    /// `write` runs against the store; `apply` updates the cached offsets after
    /// it succeeded. On failure the group is dropped from the cache: the store
    /// promises the failed write is not visible, and asking the store again
    /// is right even if an engine broke that promise.
    fn write(
        &self,
        group_id: &str,
        write: impl FnOnce() -> Result<(), StorageError>,
        apply: impl FnOnce(&mut GroupOffsets),
    ) -> Result<(), StorageError> {
        let Some(cache) = &self.cache else { return write() };
        let slot = cache.slot(group_id);
        let mut cached = write_slot(&slot);
        match write() {
            Ok(()) => {
                if let Some(offsets) = cached.as_mut() {
                    apply(offsets);
                }
                Ok(())
            }
            Err(e) => {
                *cached = None;
                Err(e)
            }
        }
    }

    /// Reads one group through the cache, filling it on a miss.
    fn read<R>(
        &self,
        cache: &Cache,
        group_id: &str,
        read: impl Fn(&GroupOffsets) -> R,
    ) -> Result<R, StorageError> {
        let slot = cache.slot(group_id);
        {
            let cached = read_slot(&slot);
            if let Some(offsets) = cached.as_ref() {
                return Ok(read(offsets));
            }
        }
        // Filled under the write lock, so no write to this group can land
        // between reading the store and caching what was read.
        let mut cached = write_slot(&slot);
        if let Some(offsets) = cached.as_ref() {
            return Ok(read(offsets));
        }
        let offsets = self.store.fetch_group_offsets(group_id)?;
        let out = read(&offsets);
        *cached = Some(offsets);
        Ok(out)
    }
}

impl<M: MetadataStore> OffsetStorage for PersistentOffsetStorage<M> {
    fn store_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
        offset: OffsetAndMetadata,
    ) -> Result<(), StorageError> {
        // The cache outlives the caller's request: it keeps a detached copy,
        // which the record shares. Without a cache the record takes the offset
        // as it came (a store that keeps it detaches it itself).
        let kept = self.cache.is_some().then(|| offset.detach());
        let record = Record::Offset {
            group_id: Arc::from(group_id),
            partition: partition.clone(),
            offset: kept.clone().unwrap_or(offset),
        };
        self.write(
            group_id,
            || self.append(group_id, vec![record]),
            |cached| {
                if let Some(kept) = kept {
                    insert(cached, partition, kept);
                }
            },
        )
    }

    fn store_offsets(
        &self,
        group_id: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> Result<(), StorageError> {
        if offsets.is_empty() {
            return Ok(());
        }
        let id: Arc<str> = Arc::from(group_id);
        // With a cache, one detached copy of each commit, shared by its record
        // and the cache; without one, the records share the caller's offsets.
        let kept: Vec<OffsetAndMetadata> = match self.cache {
            Some(_) => offsets.iter().map(|(_, offset)| offset.detach()).collect(),
            None => Vec::new(),
        };
        let records = offsets
            .iter()
            .enumerate()
            .map(|(i, (tp, offset))| Record::Offset {
                group_id: Arc::clone(&id),
                partition: tp.clone(),
                offset: kept.get(i).unwrap_or(offset).clone(),
            })
            .collect();
        self.write(
            group_id,
            || self.append(group_id, records),
            |cached| {
                for ((tp, _), offset) in offsets.iter().zip(kept) {
                    insert(cached, tp, offset);
                }
            },
        )
    }

    fn fetch_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
    ) -> Result<Option<OffsetAndMetadata>, StorageError> {
        match &self.cache {
            None => self.store.fetch_group_offset(group_id, partition.topic(), partition.partition),
            Some(cache) => {
                self.read(cache, group_id, |g| g.get(partition.topic(), partition.partition).cloned())
            }
        }
    }

    fn fetch_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
        match &self.cache {
            None => self.store.fetch_group_offsets(group_id),
            Some(cache) => self.read(cache, group_id, GroupOffsets::clone),
        }
    }

    fn delete_offsets(&self, group_id: &str) -> Result<(), StorageError> {
        let result = self.write(
            group_id,
            || self.store.delete_group_offsets(group_id),
            |cached| cached.offsets.clear(),
        );
        if let Some(cache) = &self.cache {
            cache.evict_if_unused(group_id);
        }
        result
    }

    fn delete_partitions(&self, group_id: &str, partitions: &[TopicPartition]) -> Result<(), StorageError> {
        if partitions.is_empty() {
            return Ok(());
        }
        let id: Arc<str> = Arc::from(group_id);
        let records = partitions
            .iter()
            .map(|tp| Record::OffsetTombstone { group_id: Arc::clone(&id), partition: tp.clone() })
            .collect();
        self.write(
            group_id,
            || self.append(group_id, records),
            |cached| {
                for tp in partitions {
                    if let Some(by_partition) = cached.offsets.get_mut(tp.topic()) {
                        by_partition.remove(&tp.partition);
                        if by_partition.is_empty() {
                            cached.offsets.remove(tp.topic());
                        }
                    }
                }
            },
        )
    }

    fn store_group(&self, record: GroupMetadataRecord) -> Result<(), StorageError> {
        let partition = self.store.partition_of(&record.group_id);
        let epoch = self.store.owner_epoch(partition)?;
        self.store.append_blocking(partition, epoch, vec![Record::Group(Box::new(record))])
    }

    fn delete_group(&self, group_id: &str) -> Result<(), StorageError> {
        self.append(group_id, vec![Record::GroupTombstone { group_id: Arc::from(group_id) }])
    }

    fn load(&self) -> Result<StoredGroups, StorageError> {
        self.store.load_all()
    }
}

fn insert(cached: &mut GroupOffsets, partition: &TopicPartition, offset: OffsetAndMetadata) {
    match cached.offsets.get_mut(partition.topic()) {
        Some(by_partition) => {
            by_partition.insert(partition.partition, offset);
        }
        None => {
            cached
                .offsets
                .entry(partition.topic().to_owned())
                .or_default()
                .insert(partition.partition, offset);
        }
    }
}

/// One group's cached offsets: `None` until read from the store (or after a
/// failed write made them uncertain).
type Slot = Arc<RwLock<Option<GroupOffsets>>>;

/// A lock poisoned by a panic inside the store may guard a half-known state:
/// forget the cached offsets so the next read asks the store.
fn recover<G: std::ops::DerefMut<Target = Option<GroupOffsets>>>(slot: &Slot, result: LockResult<G>) -> G {
    match result {
        Ok(guard) => guard,
        Err(poisoned) => {
            let mut guard = poisoned.into_inner();
            *guard = None;
            slot.clear_poison();
            guard
        }
    }
}

fn write_slot(slot: &Slot) -> RwLockWriteGuard<'_, Option<GroupOffsets>> {
    recover(slot, slot.write())
}

fn read_slot(slot: &Slot) -> RwLockReadGuard<'_, Option<GroupOffsets>> {
    match slot.read() {
        Ok(guard) => guard,
        Err(_) => {
            // Reset under the write lock, then read again.
            drop(write_slot(slot));
            slot.read().unwrap_or_else(PoisonError::into_inner)
        }
    }
}

/// One shard's groups and their slots.
type Slots = ClientMap<String, Slot>;

/// Per-group slots, sharded so that finding a group's slot rarely contends.
#[derive(Debug)]
struct Cache {
    shards: Box<[Padded<Mutex<Slots>>]>,
}

impl Default for Cache {
    fn default() -> Cache {
        Cache { shards: (0..CACHE_SHARDS).map(|_| Padded(Mutex::new(ClientMap::default()))).collect() }
    }
}

impl Cache {
    fn shard(&self, group_id: &str) -> std::sync::MutexGuard<'_, Slots> {
        // The map holds only `Arc`s: nothing a panic could leave half-updated.
        self.shards[shard_index(group_id, CACHE_SHARDS)].0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn slot(&self, group_id: &str) -> Slot {
        let mut shard = self.shard(group_id);
        if let Some(slot) = shard.get(group_id) {
            return Arc::clone(slot);
        }
        Arc::clone(shard.entry(group_id.to_owned()).or_default())
    }

    /// Drops a group's slot when nobody holds it and it caches nothing, so
    /// deleted groups do not pin memory. Safe because a new holder can only get
    /// the slot through the shard lock held here.
    fn evict_if_unused(&self, group_id: &str) {
        let mut shard = self.shard(group_id);
        let unused = shard.get(group_id).is_some_and(|slot| {
            Arc::strong_count(slot) == 1
                && slot.try_read().is_ok_and(|cached| cached.as_ref().is_none_or(GroupOffsets::is_empty))
        });
        if unused {
            shard.remove(group_id);
        }
    }
}
