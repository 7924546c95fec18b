//! A durable embedded [`MetadataStore`](group_offsets::MetadataStore) on
//! [sled](https://docs.rs/sled/0.34.7) 0.34.7 for a Kafka-compatible group
//! coordinator: committed offsets and group metadata records survive a crash,
//! and nothing acknowledged is lost.
//!
//! # Brief overview
//!
//! - [`SledMetadataStore`] implements the `MetadataStore` contract of
//!   `group-offsets`. [`SledMetadataStore::open`] opens (or creates) a
//!   directory; [`SledMetadataStore::open_with`] picks the [`Durability`];
//!   [`SledMetadataStore::from_db`] wraps a `sled::Db` you opened yourself.
//!   Wrap it in `group_offsets::PersistentOffsetStorage` to give it to a
//!   coordinator: `PersistentOffsetStorage::new(SledMetadataStore::open(dir)?)`.
//! - Every write returns only after an explicit flush made it durable
//!   (sled's own background flush runs every 500 ms, too late for an
//!   acknowledgement). [`Durability`] says what that flush is: by default
//!   sled's `flush()` plus an `fsync` of its data file, because sled 0.34's
//!   `flush()` alone uses `sync_file_range`, which survives a process crash but
//!   not necessarily a power cut. Concurrent writers share flushes: one writer
//!   flushes for every write that landed while the previous flush ran (group
//!   commit), so throughput grows with the number of committers.
//! - A multi-partition commit is one sled batch: after a crash either all of
//!   its partitions are there or none is.
//!
//! # Who should depend on this crate
//!
//! Whoever runs a coordinator on one machine and wants its state to survive
//! restarts: a server binary, an embedding application. Libraries generic
//! over storage should depend on `group-offsets` only. sled 0.34 calls itself
//! beta; a store for a replicated or more conservative engine can be added
//! beside this one without touching the coordinator.
//!
//! # Key layout
//!
//! Two sled trees; keys are hand-encoded, numbers big-endian, so sled's byte
//! order is numeric order and one group's offsets are one prefix scan.
//!
//! | tree | key | value |
//! | --- | --- | --- |
//! | [`OFFSETS_TREE`] (`group_offsets`) | `u16 BE len(group)` · group · `u16 BE len(topic)` · topic · `u32 BE (partition XOR 0x8000_0000)` | offset |
//! | [`GROUPS_TREE`] (`group_metadata`) | group (UTF-8 bytes) | group record |
//!
//! A group's offsets share the prefix `u16 BE len(group)` · group, which no
//! other group's keys start with. Group ids and topics are Kafka strings, so
//! the 65,535-byte limit of a `u16` length never bites; longer ones are
//! rejected with `InvalidInput`.
//!
//! sled's default tree holds one more key, `group-storage-sled/layout`, whose
//! value `[1]` names this layout; a store refuses a database naming another.
//! [`SledMetadataStore::open`] also leaves a file `group-storage-sled.marker`
//! in the directory once that record is durable, so a database whose contents
//! sled lost (it silently starts empty from a zeroed log) is refused too.
//!
//! # Value format
//!
//! Every value is one format-version byte (today `1` for both trees) followed
//! by bincode 2.0.1 (serde path) with one fixed configuration: little-endian,
//! varint integers, at most 64 MiB. Fields are in this order:
//!
//! - offset v1: `offset: i64`, `leader_epoch: Option<i32>`, `metadata: String`,
//!   `commit_time: i64`, `expire_time: Option<i64>`;
//! - group v1: `group_id`, `protocol_type: Option<String>`, `generation_id: i32`,
//!   `protocol_name: Option<String>`, `leader_id: Option<String>`,
//!   `state_timestamp_ms: Option<i64>`, `members`, each `member_id`,
//!   `group_instance_id: Option<String>`, `client_id`, `client_host`,
//!   `rebalance_timeout_ms: i32`, `session_timeout_ms: i32`, `subscription: bytes`,
//!   `assignment: bytes`.
//!
//! Golden-bytes tests pin both; a change needs a new version byte.
//!
//! # Errors
//!
//! | what happened | `StorageError` |
//! | --- | --- |
//! | the directory cannot be opened, or sled finds it damaged | `Unavailable` (never a panic) |
//! | sled reports an I/O failure or corruption while running | `Io` |
//! | a stored value (or key) does not decode | `Corrupt { group_id, key, reason }` |
//! | a value carries an unknown version byte | `UnknownFormatVersion { group_id, key, version }` |
//! | a group id or topic too long for a key | `InvalidInput` |
//!
//! A bad value only fails the calls that read it: other groups are served as
//! before. [`load_all`](group_offsets::MetadataStore::load_all) fails on the
//! first unreadable value (a coordinator should not silently start without a
//! group's offsets); [`SledMetadataStore::load_all_skipping_unreadable`]
//! loads everything readable and lists what it skipped. A damaged database is
//! recovered by restoring the directory from a backup, or by moving it aside
//! and starting empty (consumers then fall back to their offset reset policy).
//!
//! # Example
//!
//! Commit, "restart", and read the commit back through the coordinator's
//! storage contract:
//!
//! ```
//! use group_offsets::{MetadataStore, OffsetStorage, PersistentOffsetStorage};
//! use group_storage_sled::SledMetadataStore;
//! use group_types::{OffsetAndMetadata, TopicPartition};
//!
//! let dir = std::env::temp_dir().join(format!("group-storage-sled-doc-{}", std::process::id()));
//! {
//!     let store = SledMetadataStore::open(&dir)?;
//!     store.store_group_offset("billing", "orders", 0, &OffsetAndMetadata::new(42, 1_700_000_000_000))?;
//! } // durable as soon as the call returned; dropping the store is not needed for that
//!
//! let storage = PersistentOffsetStorage::new(SledMetadataStore::open(&dir)?);
//! let committed = storage.fetch_offset("billing", &TopicPartition::new("orders", 0))?;
//! assert_eq!(committed.map(|o| o.offset), Some(42));
//! assert_eq!(storage.load()?.offsets[0].group_id, "billing");
//! # drop(storage);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod codec;
mod durability;
mod group_commit;
mod keys;
mod load;
mod store;

pub use crate::durability::Durability;
pub use crate::keys::{GROUPS_TREE, OFFSETS_TREE};
pub use crate::store::SledMetadataStore;
