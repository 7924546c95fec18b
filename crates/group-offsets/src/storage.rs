//! The storage contracts: [`MetadataStore`], the one trait a storage engine
//! implements (atomic record appends and loads per coordinator partition), and
//! [`OffsetStorage`], offsets and group records for users who need nothing else.

use std::fmt;
use std::sync::{Arc, mpsc};

use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};

use crate::{GroupMetadataRecord, ModernGroupRecord, StorageError, TxnOffsetRecord};

/// Kafka's default number of coordinator partitions (`offsets.topic.num.partitions`).
pub const DEFAULT_COORDINATOR_PARTITIONS: u32 = 50;

/// One coordinator partition: the unit a node owns, loads and appends to, as a
/// partition of Kafka's `__consumer_offsets` topic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CoordinatorPartition(pub u32);

impl CoordinatorPartition {
    /// The partition that holds `group_id` among `partitions` (at least 1), as
    /// Kafka's `GroupCoordinatorService.partitionFor` computes it:
    /// `Utils.abs(groupId.hashCode()) % partitions`, with Java's `String.hashCode`
    /// over UTF-16 code units and `Utils.abs` mapping `i32::MIN` to 0.
    ///
    /// ```
    /// use group_offsets::CoordinatorPartition;
    ///
    /// // "group".hashCode() == 98629247 in Java.
    /// assert_eq!(CoordinatorPartition::of("group", 50), CoordinatorPartition(98629247 % 50));
    /// assert_eq!(CoordinatorPartition::of("", 50), CoordinatorPartition(0));
    /// ```
    pub fn of(group_id: &str, partitions: u32) -> CoordinatorPartition {
        // Java hashes UTF-16 code units; an ASCII id's units are its bytes, and
        // folding the bytes is several times cheaper than decoding (every
        // request of the runtime routes by this).
        let fold = |h: i32, unit: i32| h.wrapping_mul(31).wrapping_add(unit);
        let hash = match group_id.is_ascii() {
            true => group_id.bytes().map(i32::from).fold(0, fold),
            false => group_id.encode_utf16().map(i32::from).fold(0, fold),
        };
        // Kafka's `Utils.abs`: `i & 0x7fffffff`, not `Math.abs`.
        let abs = (hash & 0x7fff_ffff) as u32;
        CoordinatorPartition(abs % partitions.max(1))
    }
}

impl fmt::Display for CoordinatorPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "coordinator partition {}", self.0)
    }
}

/// The epoch of the node that owns a partition. An engine remembers the highest
/// epoch it accepted per partition and refuses an append with a lower one
/// ([`StorageError::Fenced`]), so a deposed owner cannot write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct OwnerEpoch(pub u64);

impl OwnerEpoch {
    /// The epoch after this one: what a new owner appends with.
    pub fn next(self) -> OwnerEpoch {
        OwnerEpoch(self.0.saturating_add(1))
    }
}

/// One record of a coordinator partition's log. A later record of the same key
/// replaces an earlier one; a tombstone removes it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Record {
    /// A group's metadata (generation, protocol, leader, members, assignments),
    /// replacing the previous one. Boxed: inline, it would make every record (an
    /// offset commit writes one per partition) 176 bytes to move instead of 112.
    Group(Box<GroupMetadataRecord>),
    /// Removal of a group's metadata. The group's offsets have tombstones of their own.
    GroupTombstone {
        /// The group.
        group_id: Arc<str>,
    },
    /// A committed offset, replacing the partition's previous one. (Group ids are
    /// shared `Arc<str>`s: a commit of many partitions copies no id.)
    Offset {
        /// The group.
        group_id: Arc<str>,
        /// The partition.
        partition: TopicPartition,
        /// The commit.
        offset: OffsetAndMetadata,
    },
    /// Removal of a committed offset.
    OffsetTombstone {
        /// The group.
        group_id: Arc<str>,
        /// The partition.
        partition: TopicPartition,
    },
    /// One record of a KIP-848 consumer group (or its tombstone), keyed by
    /// ([`ModernGroupRecord::record_type`], group, [`ModernGroupRecord::sub_key`]).
    Modern(ModernGroupRecord),
    /// A transactional offset commit, pending until its transaction's marker
    /// (keyed by group, producer and partition). Boxed: it is rare, and inline
    /// it would make every record larger.
    TxnOffset(Box<TxnOffsetRecord>),
    /// Removal of a pending transactional offset: its marker came, or its
    /// partition's offsets or its group were deleted.
    TxnOffsetTombstone {
        /// The group.
        group_id: Arc<str>,
        /// The transactional producer.
        producer_id: i64,
        /// The partition.
        partition: TopicPartition,
    },
}

impl Record {
    /// The group the record belongs to.
    pub fn group_id(&self) -> &str {
        match self {
            Record::Group(record) => &record.group_id,
            Record::GroupTombstone { group_id }
            | Record::Offset { group_id, .. }
            | Record::OffsetTombstone { group_id, .. }
            | Record::TxnOffsetTombstone { group_id, .. } => group_id,
            Record::Modern(record) => record.group_id(),
            Record::TxnOffset(record) => &record.group_id,
        }
    }
}

/// Everything storage holds for some groups, as loaded at start-up.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoredGroups {
    /// Every persisted group record, one per group, in no particular order.
    pub groups: Vec<GroupMetadataRecord>,
    /// The offsets of every group holding at least one, one entry per group, in
    /// no particular order (groups with offsets but no record are simple groups).
    /// A group whose offsets were all deleted is not listed.
    pub offsets: Vec<GroupOffsets>,
    /// The live records of consumer groups: per key the last one written, none
    /// whose last record is a tombstone, in no particular order.
    pub consumer: Vec<ModernGroupRecord>,
    /// The pending transactional offsets (a group with only these is a simple
    /// group), in no particular order.
    pub txn_offsets: Vec<TxnOffsetRecord>,
}

impl StoredGroups {
    /// Adds another set of groups (of other partitions) to this one.
    pub fn extend(&mut self, other: StoredGroups) {
        self.groups.extend(other.groups);
        self.offsets.extend(other.offsets);
        self.consumer.extend(other.consumer);
        self.txn_offsets.extend(other.txn_offsets);
    }
}

/// What one coordinator partition holds, as [`MetadataStore::load`] returns it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadedPartition {
    /// The highest owner epoch the partition accepted (`OwnerEpoch(0)` when none).
    pub epoch: OwnerEpoch,
    /// Its groups' records and offsets.
    pub groups: StoredGroups,
}

type CompletionFn = Box<dyn FnOnce(Result<(), StorageError>) + Send>;

/// Receives the outcome of one [`MetadataStore::append`], exactly once, on any
/// thread, possibly before `append` returns. An engine that drops it without
/// calling [`complete`](Self::complete) completes it with
/// [`StorageError::Unavailable`], so no caller is left waiting.
pub struct AppendCompletion {
    f: Option<CompletionFn>,
}

impl AppendCompletion {
    /// A completion that calls `f` with the outcome.
    pub fn new(f: impl FnOnce(Result<(), StorageError>) + Send + 'static) -> AppendCompletion {
        AppendCompletion { f: Some(Box::new(f)) }
    }

    /// A completion and the receiver its outcome arrives on, for a caller that waits
    /// for the append. The outcome always arrives: a completion dropped unanswered
    /// reports `Unavailable`.
    pub fn channel() -> (AppendCompletion, mpsc::Receiver<Result<(), StorageError>>) {
        let (tx, rx) = mpsc::sync_channel(1);
        let completion = AppendCompletion::new(move |result| {
            let _ = tx.send(result);
        });
        (completion, rx)
    }

    /// Reports the outcome: `Ok` once every record of the append is durable,
    /// `Err` when none of them is visible.
    pub fn complete(mut self, result: Result<(), StorageError>) {
        if let Some(f) = self.f.take() {
            f(result);
        }
    }
}

impl Drop for AppendCompletion {
    fn drop(&mut self) {
        if let Some(f) = self.f.take() {
            f(Err(StorageError::unavailable("the engine dropped an append unanswered")));
        }
    }
}

impl fmt::Debug for AppendCompletion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppendCompletion").field("pending", &self.f.is_some()).finish()
    }
}

/// The one trait a storage engine implements: an ordered log of [`Record`]s per
/// coordinator partition.
///
/// # Contract
///
/// - [`append`](Self::append) is atomic: its records become visible all
///   together, or (on `Err`) none of them. `Ok` means durable: after a crash of
///   the process (`kill -9`), reopening the store shows every record of every
///   append completed `Ok`.
/// - Appends of one partition are applied, and completed, in the order of the
///   `append` calls. Appends of different partitions are independent and may
///   complete in any order. An engine may complete an append later, on another
///   thread (a replicated engine needs milliseconds per append): callers keep
///   appends of many partitions in flight at once.
/// - Each append carries the caller's [`OwnerEpoch`]. The engine keeps, per
///   partition, the highest epoch it accepted; an append with a lower one is
///   refused with [`StorageError::Fenced`] and changes nothing, one with a
///   higher one raises it (durably, with the records).
/// - [`load`](Self::load) returns one partition's state: the last group record
///   of every group not removed by a later tombstone, the last offset of every
///   partition likewise, and the partition's epoch. Partitions never mix.
/// - Group ids, topics and metadata are arbitrary strings (`""`, NUL bytes, any
///   Unicode) and round-trip byte for byte; names that prefix each other never mix.
/// - Every method may be called from many threads at once.
///
/// The seed's per-offset methods are provided on top of the record operations,
/// so an engine writes only `append` and `load` (and overrides the provided ones
/// where it can do better). `group_offsets::conformance` (feature
/// `conformance`) checks all of this against an implementation.
///
/// Implemented by [`MemoryMetadataStore`](crate::MemoryMetadataStore), by
/// `group-storage-sled`, and by `Arc`, `Box` and `&` of any implementation.
pub trait MetadataStore: Send + Sync {
    /// How many coordinator partitions the store's data is laid out in. Groups
    /// map to partitions by [`CoordinatorPartition::of`].
    fn partition_count(&self) -> u32 {
        DEFAULT_COORDINATOR_PARTITIONS
    }

    /// Appends `records` to `partition` as one atomic batch and reports the
    /// outcome to `completion` (see the [contract](MetadataStore#contract)).
    fn append(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
        completion: AppendCompletion,
    );

    /// Everything `partition` holds, and its highest accepted epoch.
    fn load(&self, partition: CoordinatorPartition) -> Result<LoadedPartition, StorageError>;

    /// True when [`append`](Self::append) does no I/O and normally completes
    /// before it returns (an in-memory engine). A caller may then append on the
    /// thread that issued the write, even while holding its own locks, instead
    /// of handing the append to a thread of its own: nothing blocks, and no
    /// thread has to be woken. Such an `append` waits for nothing but the
    /// engine's own short locks. An append that completes later all the same
    /// must still be handled. `false` by default.
    fn completes_inline(&self) -> bool {
        false
    }

    /// The highest epoch `partition` accepted.
    fn owner_epoch(&self, partition: CoordinatorPartition) -> Result<OwnerEpoch, StorageError> {
        Ok(self.load(partition)?.epoch)
    }

    /// [`append`](Self::append), waiting for its outcome.
    fn append_blocking(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
    ) -> Result<(), StorageError> {
        let (completion, rx) = AppendCompletion::channel();
        self.append(partition, epoch, records, completion);
        rx.recv()
            .unwrap_or_else(|_| Err(StorageError::unavailable("the engine dropped an append unanswered")))
    }

    /// The partition of `group_id` in this store.
    fn partition_of(&self, group_id: &str) -> CoordinatorPartition {
        CoordinatorPartition::of(group_id, self.partition_count())
    }

    /// Stores one partition's offset, at the partition's current epoch.
    fn store_group_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
        offset: &OffsetAndMetadata,
    ) -> Result<(), StorageError> {
        let p = self.partition_of(group_id);
        let record = Record::Offset {
            group_id: Arc::from(group_id),
            partition: TopicPartition::new(topic, partition),
            offset: offset.clone(),
        };
        self.append_blocking(p, self.owner_epoch(p)?, vec![record])
    }

    /// One partition's offset, `None` when nothing is committed.
    fn fetch_group_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
    ) -> Result<Option<OffsetAndMetadata>, StorageError> {
        Ok(self.fetch_group_offsets(group_id)?.get(topic, partition).cloned())
    }

    /// Every offset of a group, with `group_id` set (empty for an unknown group).
    fn fetch_group_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
        let loaded = self.load(self.partition_of(group_id))?;
        Ok(loaded
            .groups
            .offsets
            .into_iter()
            .find(|g| g.group_id == group_id)
            .unwrap_or_else(|| GroupOffsets { group_id: group_id.to_owned(), ..GroupOffsets::default() }))
    }

    /// Deletes every offset of a group (`Ok` for an unknown group), as one append
    /// of tombstones.
    fn delete_group_offsets(&self, group_id: &str) -> Result<(), StorageError> {
        let p = self.partition_of(group_id);
        let offsets = self.fetch_group_offsets(group_id)?;
        let id: Arc<str> = Arc::from(group_id);
        let records: Vec<Record> = offsets
            .offsets
            .iter()
            .flat_map(|(topic, partitions)| {
                let id = id.clone();
                partitions.keys().map(move |&partition| Record::OffsetTombstone {
                    group_id: id.clone(),
                    partition: TopicPartition::new(topic.as_str(), partition),
                })
            })
            .collect();
        if records.is_empty() {
            return Ok(());
        }
        self.append_blocking(p, self.owner_epoch(p)?, records)
    }

    /// Everything stored, over every partition.
    fn load_all(&self) -> Result<StoredGroups, StorageError> {
        let mut all = StoredGroups::default();
        for p in 0..self.partition_count() {
            all.extend(self.load(CoordinatorPartition(p))?.groups);
        }
        Ok(all)
    }
}

/// Offset and group storage for users who only store offsets (an
/// [`OffsetManager`](crate::OffsetManager), a tool): one call, one answer.
/// `Send + Sync`, shared behind an `Arc`; every method may be called from many
/// threads at once.
///
/// Implemented once, by [`PersistentOffsetStorage`](crate::PersistentOffsetStorage)
/// over any [`MetadataStore`] ([`MemoryOffsetStorage`](crate::MemoryOffsetStorage)
/// is that over memory), and by `Arc`, `Box` and `&` of an implementation.
///
/// A call that returns `Ok` has made its write visible to every later read and,
/// over a durable store, durable. A call that returns `Err` changed nothing.
/// Writes overwrite: the last acknowledged store of a partition wins, even with a
/// lower offset (an offset reset). Offsets and group records are independent:
/// deleting one never deletes the other.
pub trait OffsetStorage: Send + Sync {
    /// Stores one partition's offset.
    fn store_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
        offset: OffsetAndMetadata,
    ) -> Result<(), StorageError>;

    /// Stores several partitions' offsets all-or-nothing: after an error none of them is visible.
    fn store_offsets(
        &self,
        group_id: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> Result<(), StorageError>;

    /// One partition's offset, `None` when nothing is committed.
    fn fetch_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
    ) -> Result<Option<OffsetAndMetadata>, StorageError>;

    /// Every offset of a group, with `group_id` set (empty for an unknown group).
    fn fetch_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError>;

    /// Deletes every offset of a group (`Ok` for an unknown group).
    fn delete_offsets(&self, group_id: &str) -> Result<(), StorageError>;

    /// Deletes the given partitions' offsets (OffsetDelete, retention); absent ones are ignored.
    fn delete_partitions(&self, group_id: &str, partitions: &[TopicPartition]) -> Result<(), StorageError>;

    /// Persists a group's record, replacing the previous one.
    fn store_group(&self, record: GroupMetadataRecord) -> Result<(), StorageError>;

    /// Removes a group's record (its offsets are deleted separately; `Ok` when
    /// there is no record).
    fn delete_group(&self, group_id: &str) -> Result<(), StorageError>;

    /// Everything stored.
    fn load(&self) -> Result<StoredGroups, StorageError>;
}

macro_rules! forward_offset_storage {
    // Every method, to `$($deref)* self $($field)*`.
    (@to [$($bounds:tt)*] $ty:ty, [$($deref:tt)*] [$($field:tt)*]) => {
        impl<$($bounds)*> OffsetStorage for $ty {
            fn store_offset(
                &self,
                group_id: &str,
                partition: &TopicPartition,
                offset: OffsetAndMetadata,
            ) -> Result<(), StorageError> {
                ($($deref)* self $($field)*).store_offset(group_id, partition, offset)
            }
            fn store_offsets(
                &self,
                group_id: &str,
                offsets: &[(TopicPartition, OffsetAndMetadata)],
            ) -> Result<(), StorageError> {
                ($($deref)* self $($field)*).store_offsets(group_id, offsets)
            }
            fn fetch_offset(
                &self,
                group_id: &str,
                partition: &TopicPartition,
            ) -> Result<Option<OffsetAndMetadata>, StorageError> {
                ($($deref)* self $($field)*).fetch_offset(group_id, partition)
            }
            fn fetch_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
                ($($deref)* self $($field)*).fetch_offsets(group_id)
            }
            fn delete_offsets(&self, group_id: &str) -> Result<(), StorageError> {
                ($($deref)* self $($field)*).delete_offsets(group_id)
            }
            fn delete_partitions(
                &self,
                group_id: &str,
                partitions: &[TopicPartition],
            ) -> Result<(), StorageError> {
                ($($deref)* self $($field)*).delete_partitions(group_id, partitions)
            }
            fn store_group(&self, record: GroupMetadataRecord) -> Result<(), StorageError> {
                ($($deref)* self $($field)*).store_group(record)
            }
            fn delete_group(&self, group_id: &str) -> Result<(), StorageError> {
                ($($deref)* self $($field)*).delete_group(group_id)
            }
            fn load(&self) -> Result<StoredGroups, StorageError> {
                ($($deref)* self $($field)*).load()
            }
        }
    };
    // A wrapper, to its field.
    ($ty:ty => $field:ident) => {
        forward_offset_storage!(@to [] $ty, [] [.$field]);
    };
    // Pointers, to what they point at.
    ($($ptr:ty),*) => {$(
        forward_offset_storage!(@to [T: OffsetStorage + ?Sized] $ptr, [**] []);
    )*};
}

macro_rules! forward_metadata_store {
    ($($ptr:ty),*) => {$(
        impl<T: MetadataStore + ?Sized> MetadataStore for $ptr {
            fn partition_count(&self) -> u32 {
                (**self).partition_count()
            }
            fn append(
                &self,
                partition: CoordinatorPartition,
                epoch: OwnerEpoch,
                records: Vec<Record>,
                completion: AppendCompletion,
            ) {
                (**self).append(partition, epoch, records, completion)
            }
            fn load(&self, partition: CoordinatorPartition) -> Result<LoadedPartition, StorageError> {
                (**self).load(partition)
            }
            fn completes_inline(&self) -> bool {
                (**self).completes_inline()
            }
            fn owner_epoch(&self, partition: CoordinatorPartition) -> Result<OwnerEpoch, StorageError> {
                (**self).owner_epoch(partition)
            }
            fn append_blocking(
                &self,
                partition: CoordinatorPartition,
                epoch: OwnerEpoch,
                records: Vec<Record>,
            ) -> Result<(), StorageError> {
                (**self).append_blocking(partition, epoch, records)
            }
            fn partition_of(&self, group_id: &str) -> CoordinatorPartition {
                (**self).partition_of(group_id)
            }
            fn store_group_offset(
                &self,
                group_id: &str,
                topic: &str,
                partition: i32,
                offset: &OffsetAndMetadata,
            ) -> Result<(), StorageError> {
                (**self).store_group_offset(group_id, topic, partition, offset)
            }
            fn fetch_group_offset(
                &self,
                group_id: &str,
                topic: &str,
                partition: i32,
            ) -> Result<Option<OffsetAndMetadata>, StorageError> {
                (**self).fetch_group_offset(group_id, topic, partition)
            }
            fn fetch_group_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
                (**self).fetch_group_offsets(group_id)
            }
            fn delete_group_offsets(&self, group_id: &str) -> Result<(), StorageError> {
                (**self).delete_group_offsets(group_id)
            }
            fn load_all(&self) -> Result<StoredGroups, StorageError> {
                (**self).load_all()
            }
        }
    )*};
}

// So `Arc<dyn MetadataStore>` (or a shared concrete store) can go wherever one is
// expected, e.g. `PersistentOffsetStorage::new(Arc::clone(&store))`. Every
// provided method is forwarded too, so an engine's overrides (faster fetches,
// an `append_blocking` without a channel) are used through the pointer.
forward_offset_storage!(std::sync::Arc<T>, Box<T>, &T);
forward_offset_storage!(crate::MemoryOffsetStorage => inner);
forward_metadata_store!(std::sync::Arc<T>, Box<T>, &T);

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Whatever the id (ASCII, accented, beyond the BMP), the partition is
        /// Java's `hashCode` over its UTF-16 units.
        #[test]
        fn the_partition_is_javas_hash_of_the_utf16_units(id in "\\PC{0,40}", partitions in 1..200u32) {
            let java = id.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
            let expected = CoordinatorPartition((java & 0x7fff_ffff) as u32 % partitions);
            prop_assert_eq!(CoordinatorPartition::of(&id, partitions), expected);
        }
    }

    #[test]
    fn known_java_hashes() {
        // "group".hashCode() and "é".hashCode() (U+00E9 = 233) in Java; "😀" is
        // two UTF-16 units, 0xD83D and 0xDE00: 55357 * 31 + 56832.
        assert_eq!(CoordinatorPartition::of("group", i32::MAX as u32), CoordinatorPartition(98_629_247));
        assert_eq!(CoordinatorPartition::of("é", 1_000), CoordinatorPartition(233));
        assert_eq!(CoordinatorPartition::of("😀", u32::MAX), CoordinatorPartition(55_357 * 31 + 56_832));
    }
}
