//! A durable embedded [`MetadataStore`](group_offsets::MetadataStore) on
//! [sled](https://docs.rs/sled/0.34.7) 0.34.7 for a Kafka-compatible group
//! coordinator: each coordinator partition's group records, committed offsets,
//! KIP-848 consumer-group records and owner epoch survive a crash, and nothing
//! acknowledged is lost.
//!
//! # Brief overview
//!
//! - [`SledMetadataStore`] implements the `MetadataStore` contract of
//!   `group-offsets`: [`append`](group_offsets::MetadataStore::append)
//!   writes a batch of records to one coordinator partition, atomically and
//!   fenced by the partition's owner epoch, and
//!   [`load`](group_offsets::MetadataStore::load) reads a partition back.
//!   [`SledMetadataStore::open`] opens (or creates) a directory;
//!   [`SledMetadataStore::open_with_partitions`], [`SledMetadataStore::open_with`]
//!   and [`SledMetadataStore::open_with_options`] (with [`SledOptions`]) pick
//!   the partition count and the [`Durability`]; [`SledMetadataStore::from_db`]
//!   wraps a `sled::Db` you opened yourself. Wrap the store in
//!   `group_offsets::PersistentOffsetStorage` to use it through `OffsetStorage`.
//! - `append` never waits for the disk. It applies its records atomically
//!   (see [Durability](#durability)) and hands its completion to the store's flusher thread, which runs
//!   one flush for everything queued meanwhile, across partitions (group
//!   commit), and completes each append once a flush covering it succeeded.
//!   Each partition's appends complete in call order.
//! - After a storage failure (a full disk) the store logs it, fails what was
//!   not yet durable, and recovers by itself on the next append: in place,
//!   or by reopening its directory ([Recovery](#recovery)).
//!   [`FlushFaults`] injects flush failures and pauses for tests.
//!
//! # Who should depend on this crate
//!
//! Whoever runs a coordinator on one machine and wants its state to survive
//! restarts: a server binary, an embedding application. Libraries generic
//! over storage should depend on `group-offsets` only. sled 0.34 calls itself
//! beta; a store for a replicated or more conservative engine can be added
//! beside this one without touching the coordinator.
//!
//! # Durability
//!
//! An append is completed `Ok` only after an explicit flush made it durable
//! (sled's own background flush runs every 500 ms, too late for an
//! acknowledgement). [`Durability`] says what that flush is: by default
//! sled's `flush()` plus an `fsync` of its data file, because sled 0.34's
//! `flush()` alone uses `sync_file_range`, which survives a process crash but
//! not necessarily a power cut. An append's records, and the partition's
//! epoch when the append raises it, are atomic: after a crash either all of
//! them are there or none is. One key is one sled insert. Several are written
//! behind an *intent*: the append's writes are first stored as one value in
//! [`INTENTS_TREE`] (`coordinator_partition_intents`, keyed by partition),
//! then made one key at a time, then the intent is removed; the next open
//! finishes any append whose intent a crash left. sled's own batches are not
//! used for appends: sled 0.34 writes a log buffer of its own for each one
//! (`PageCache::pin_log`), which cost 2 KB and a waiting `sync_file_range`
//! per commit under load (32 k instead of 82 k durable commits/s with 256
//! committers). A build older than the intents ignores an intent left by a
//! crash, so open a store that crashed with this build before going back.
//!
//! An append that is applied is visible to reads (`load`, fetches) before its
//! completion says it is durable, as in any write-ahead design: the caller
//! acts on the completion, not on what it reads. An append refused with
//! `Fenced` or `InvalidInput` changes nothing.
//!
//! # Key layout (v3)
//!
//! One sled tree, [`PARTITIONS_TREE`] (`coordinator_partitions`). Keys are
//! hand-encoded, numbers big-endian, so sled's byte order is numeric order:
//! a coordinator partition is one contiguous key range (`load` is one prefix
//! scan) and, inside it, one group's offsets are one prefix scan. (One tree,
//! not one per kind, dates from appends being sled batches, which cover one
//! tree.) The intents of appends in progress live apart, in [`INTENTS_TREE`].
//!
//! | kind | key | value |
//! | --- | --- | --- |
//! | owner epoch | `u32 BE partition` · `0x00` | epoch |
//! | group record | `u32 BE partition` · `0x01` · group (UTF-8 bytes) | group record |
//! | offset | `u32 BE partition` · `0x02` · `u16 BE len(group)` · group · `u16 BE len(topic)` · topic · `u32 BE (partition XOR 0x8000_0000)` | offset |
//! | consumer-group record | `u32 BE partition` · `0x03` · `u16 BE len(group)` · group · `i16 BE record type` · sub-key (UTF-8 bytes, to the end) | its kind's value |
//!
//! A group's offsets share the prefix `u32 BE partition` · `0x02` ·
//! `u16 BE len(group)` · group, which no other group's keys start with, and
//! its consumer-group records the same prefix with `0x03`. A consumer-group
//! record's key is Kafka's: the record type (3, 5, 6, 7, 8 or 16), the group,
//! and the member id or regex (`""` for the group-level types 3 and 6); a
//! tombstone removes the key, so only live records are stored. Group
//! ids and topics are Kafka strings, so the 65,535-byte limit of a `u16`
//! length never bites; longer ones are rejected with `InvalidInput`. Records
//! are stored under the partition they were appended to; the provided
//! per-group methods (`fetch_group_offsets`, `store_group_offset`) use the
//! group's partition, [`CoordinatorPartition::of`](group_offsets::CoordinatorPartition::of).
//!
//! sled's default tree holds one more key, `group-storage-sled/layout`, whose
//! value `[3]` · `u32 BE partition count` names this layout and the store's
//! partition count: a store refuses a database naming a layout it does not
//! know, and refuses to open with another partition count (`InvalidInput`),
//! since every group's partition depends on it. Layout v2 is v3 without
//! consumer-group records; the record names the oldest layout that reads the
//! store, so it says `[2]` until the first consumer-group record is written
//! and is flipped to `[3]`, durably, just before: a build that knows only v2
//! (and would load the store without its consumer groups) refuses it from
//! then on, and one that never held a consumer group can still go back. [`SledMetadataStore::open`] also
//! leaves a file `group-storage-sled.marker` in the directory once that record
//! is durable, so a database whose contents sled lost (it silently starts
//! empty from a zeroed log) is refused too.
//!
//! # Migration from layout v1
//!
//! Layout v1 (`[1]` in the layout record) had two trees, `group_offsets`
//! (keys as above without the partition and kind) and `group_metadata` (keys:
//! the group id), and no epochs. Opening a v1 database migrates it in place
//! (to v2, since it holds no consumer-group records):
//! every group goes to partition `CoordinatorPartition::of(group, count)`,
//! values are copied byte for byte, epochs start at 0. The migration is
//! crash-safe: it builds the v2 tree from the untouched v1 trees, makes it
//! durable, flips the layout record (one atomic write), then drops the v1
//! trees; an open after a crash either redoes it or finishes the clean-up.
//! Keys v1 could not read (malformed offset keys, group keys that are not
//! UTF-8) name no group, so no partition: they are logged and dropped.
//!
//! # Value format
//!
//! A group record, an offset or a consumer-group record is stored as the
//! record codec every engine shares writes a record's value
//! (`group_offsets::codec::encode_value`): its format version (`2`), then the
//! record's fields after its key (the key holds the group and topic
//! partition, or the record type and sub-key; see that module for the
//! table). A group record's value keeps its group id, and loading refuses
//! one stored under another group's key (`Corrupt`). A tombstone removes its
//! key. An owner epoch is `1`, then the epoch as a
//! `u64` big-endian (9 bytes in all).
//!
//! Values written by builds before the shared codec carry version `1` and are
//! still read (and are rewritten in the shared codec when their key is next
//! written): offsets and group records in bincode 2.0.1 (serde path), one
//! fixed configuration (little-endian, varint integers, at most 64 MiB), in
//! this field order:
//!
//! - offset v1: `offset: i64`, `leader_epoch: Option<i32>`, `metadata: String`,
//!   `commit_time: i64`, `expire_time: Option<i64>`;
//! - group v1: `group_id`, `protocol_type: Option<String>`, `generation_id: i32`,
//!   `protocol_name: Option<String>`, `leader_id: Option<String>`,
//!   `state_timestamp_ms: Option<i64>`, `members`, each `member_id`,
//!   `group_instance_id: Option<String>`, `client_id`, `client_host`,
//!   `rebalance_timeout_ms: i32`, `session_timeout_ms: i32`, `subscription: bytes`,
//!   `assignment: bytes`;
//! - consumer-group records v1, by the key's record type (the key names the
//!   group and member or regex, so values do not repeat them; topic ids are
//!   their 16 bytes, topic partitions `topic_id`, `partitions: [i32]`):
//!   - 3 `ConsumerGroupMetadata`: `epoch: i32`, `metadata_hash: u64`;
//!   - 5 `ConsumerGroupMemberMetadata`: `instance_id: Option<String>`,
//!     `rack_id: Option<String>`, `client_id`, `client_host`,
//!     `subscribed_topic_names: [String]`, `subscribed_topic_regex: Option<String>`,
//!     `rebalance_timeout_ms: i32`, `server_assignor: Option<String>`,
//!     `classic: Option<(session_timeout_ms: i32, supported_protocols: [(name, metadata: bytes)])>`;
//!   - 6 `ConsumerGroupTargetAssignmentMetadata`: `assignment_epoch: i32`;
//!   - 7 `ConsumerGroupTargetAssignmentMember`: `topic_partitions: [topic partitions]`;
//!   - 8 `ConsumerGroupCurrentMemberAssignment`: `member_epoch: i32`,
//!     `previous_member_epoch: i32`, `state: i8`, `assigned: [topic partitions]`,
//!     `pending_revocation: [topic partitions]`;
//!   - 16 `ConsumerGroupRegularExpression`: `topics: [String]`, `version: i64`,
//!     `timestamp_ms: i64`.
//!
//! A build before the shared codec refuses a value of version `2` with
//! `UnknownFormatVersion`. A fixture store written by that build
//! (`tests/fixtures/store-v3`) is loaded by the tests.
//!
//! Golden-bytes tests pin every one (the legacy ones as read-only); a change
//! needs a new version byte.
//!
//! # Recovery
//!
//! sled 0.34 stays failed after an I/O error: once a write to its log fails
//! (say the disk is full), every later call on that database fails. When a
//! flush or an apply fails, the store logs it (`tracing::error!`), fails every
//! append no successful flush covered (none of them was acknowledged), keeps
//! what those appends overwrote, and enters the failed state
//! ([`SledMetadataStore::is_failed`]). The next append is deferred to the
//! flusher, which first recovers:
//!
//! 1. in place, if the database flushes again; otherwise it drops the
//!    database and opens its directory again (a store made by
//!    [`from_db`](SledMetadataStore::from_db) cannot, and stays failed);
//! 2. it restores, in one batch, what every failed append overwrote, and
//!    flushes, so that reopened or not, nothing but acknowledged appends
//!    remains (a failed append may or may not have reached the disk before
//!    the failure);
//! 3. it applies the deferred appends, in order, and flushes them as usual.
//!
//! If any step fails (the disk is still full) the deferred appends fail, a
//! warning is logged, and the next append tries again. Acknowledged appends
//! were flushed before they were acknowledged, and no append is acknowledged
//! from a failure until the store has recovered, so none is lost or rolled
//! back. While the store is failed, reads still see the failed appends'
//! records (or, while a reopen is pending, fail with `Unavailable`). Counters:
//! [`failed_appends`](SledMetadataStore::failed_appends),
//! [`recoveries`](SledMetadataStore::recoveries),
//! [`reopen_count`](SledMetadataStore::reopen_count),
//! [`flush_count`](SledMetadataStore::flush_count).
//!
//! # Errors
//!
//! | what happened | `StorageError` |
//! | --- | --- |
//! | the directory cannot be opened, or sled finds it damaged | `Unavailable` (never a panic) |
//! | the store was created with another partition count, or the count is out of range | `InvalidInput` |
//! | an append's epoch is below the partition's | `Fenced { partition, epoch, current }` |
//! | sled reports an I/O failure or corruption while running | `Io` |
//! | a stored value (or key) does not decode, or a key names a consumer record type this build does not know | `Corrupt { group_id, key, reason }` |
//! | a value carries an unknown version byte | `UnknownFormatVersion { group_id, key, version }` |
//! | a group id or topic too long for a key; a partition the store does not have | `InvalidInput` |
//!
//! A bad value only fails the calls that read it: other groups are served as
//! before. [`load`](group_offsets::MetadataStore::load) and
//! [`load_all`](group_offsets::MetadataStore::load_all) fail on the first
//! unreadable value (a coordinator should not silently start without a
//! group's offsets); [`SledMetadataStore::load_skipping_unreadable`] and
//! [`SledMetadataStore::load_all_skipping_unreadable`] load everything
//! readable and list what they skipped. A damaged database is recovered by
//! restoring the directory from a backup, or by moving it aside and starting
//! empty (consumers then fall back to their offset reset policy).
//!
//! # Example
//!
//! Append to a partition, "restart", and read it back, directly and through
//! the per-group methods:
//!
//! ```
//! use std::sync::Arc;
//!
//! use group_offsets::{MetadataStore, OwnerEpoch, Record, StorageError};
//! use group_storage_sled::SledMetadataStore;
//! use group_types::{OffsetAndMetadata, TopicPartition};
//!
//! let dir = std::env::temp_dir().join(format!("group-storage-sled-doc-{}", std::process::id()));
//! # let _ = std::fs::remove_dir_all(&dir);
//! let group: Arc<str> = Arc::from("billing");
//! {
//!     let store = SledMetadataStore::open(&dir)?;
//!     let partition = store.partition_of(&group);
//!     let commit = Record::Offset {
//!         group_id: group.clone(),
//!         partition: TopicPartition::new("orders", 0),
//!         offset: OffsetAndMetadata::new(42, 1_700_000_000_000),
//!     };
//!     // `append` returns at once; the completion runs once the record is durable.
//!     let (completion, rx) = group_offsets::AppendCompletion::channel();
//!     store.append(partition, OwnerEpoch(1), vec![commit], completion);
//!     rx.recv()??;
//!     // A deposed owner (a lower epoch) is fenced.
//!     let stale = store.append_blocking(partition, OwnerEpoch(0), vec![]);
//!     assert!(matches!(stale, Err(StorageError::Fenced { .. })));
//! } // durable as soon as the completion said Ok; dropping the store is not needed for that
//!
//! let store = SledMetadataStore::open(&dir)?;
//! let loaded = store.load(store.partition_of("billing"))?;
//! assert_eq!(loaded.epoch, OwnerEpoch(1));
//! assert_eq!(loaded.groups.offsets[0].get("orders", 0).map(|o| o.offset), Some(42));
//! assert_eq!(store.fetch_group_offset("billing", "orders", 0)?.map(|o| o.offset), Some(42));
//! # drop(store);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod codec;
mod durability;
mod engine;
mod faults;
#[doc(hidden)]
pub mod fuzzing;
mod group_commit;
mod intent;
mod keys;
mod layout;
mod load;
mod options;
mod store;

pub use crate::durability::Durability;
pub use crate::faults::FlushFaults;
pub use crate::intent::INTENTS_TREE;
pub use crate::keys::PARTITIONS_TREE;
pub use crate::options::SledOptions;
pub use crate::store::SledMetadataStore;
