//! A [`MetadataStore`](group_offsets::MetadataStore) over an etcd v3 cluster,
//! so several coordinator nodes share one replicated store: a node appends
//! to the coordinator partitions it owns, and a deposed owner's appends are
//! refused ([`StorageError::Fenced`](group_offsets::StorageError::Fenced)).
//!
//! # Brief overview
//!
//! - [`EtcdStore`] implements `MetadataStore`: each append is one etcd
//!   transaction fenced by the partition's stored epoch (and, with
//!   [`EtcdConfig::fence_with_owner_keys`], by the partition's owner key);
//!   appends of a partition complete in call order, partitions proceed
//!   concurrently, and the appends of every partition waiting at one moment
//!   share one etcd transaction (group commit; each keeps its own fences);
//!   oversized batches are staged in chunks and stay atomic;
//!   the log is folded into chunked snapshots. The store starts no runtime
//!   and keeps no client of its own: its tasks run on the caller's tokio
//!   runtime ([`EtcdStore::new`] takes a `Handle`) over the caller's etcd
//!   client, which [`connect`] makes and which the cluster layer shares.
//!   `append` never blocks; `load` waits, from a thread that is not a
//!   runtime worker.
//! - [`EtcdConfig`] says where etcd is and how the keys are laid out.
//! - [`owner_key`] is the one definition of a partition's owner key, shared
//!   with the cluster layer that creates those keys.
//! - With the `testing` feature, [`testing`](crate#feature-flags) spawns real
//!   etcd clusters for tests.
//!
//! # Key layout
//!
//! Per partition, under `{prefix}/p/{partition:05}/`: `epoch` (the highest
//! accepted epoch, 20 decimal digits), `log/{seq:020}` (one entry per
//! append), `snapshot` plus `snap/...` chunks, and `stage/...` chunks of
//! oversized batches; owner keys are `{prefix}/owners/{partition:05}`.
//!
//! Values carry a format version: 2 for log entries and snapshots that hold
//! KIP-848 consumer-group records, 1 for everything else, so a build that
//! knows only format 1 refuses exactly the values it could not read (with
//! `StorageError::UnknownFormatVersion`). The records inside are encoded by
//! `group_offsets::codec`, the record codec every engine shares (its body is
//! what this crate wrote before, byte for byte), and a load folds the
//! snapshot and then the log with `group_offsets::Fold`. A snapshot keeps one
//! record per live key (`StoredGroups::into_records`): the last group record,
//! offset and consumer-group record of each, no tombstones.
//!
//! # Who should depend on this crate
//!
//! A coordinator deployment of several nodes (through `group-cluster`), or
//! one node that wants its offsets in etcd. It depends on `group-offsets`
//! (the trait) and `group-types`, never on the coordinator.
//!
//! # Feature flags
//!
//! - `testing`: the public `testing` module, [`EtcdCluster`] of local
//!   etcd processes (binary from `GROUP_ETCD_BIN`, else
//!   `target/tools/bin/etcd`, else `PATH`) and `unique_prefix`, for the tests of
//!   this crate and of crates above it.
//!
//! [`EtcdCluster`]: crate#feature-flags
//!
//! # Example
//!
//! ```no_run
//! use group_offsets::{CoordinatorPartition, MetadataStore, OwnerEpoch, Record};
//! use group_storage_etcd::{EtcdConfig, EtcdStore};
//! use group_types::{OffsetAndMetadata, TopicPartition};
//!
//! /// A broker's offsets over etcd, on the broker's own tokio runtime (the
//! /// store only spawns its tasks on it), called from a thread of the broker's
//! /// that is not one of the runtime's workers.
//! fn open_offsets(runtime: &tokio::runtime::Handle) -> Result<EtcdStore, Box<dyn std::error::Error>> {
//!     let config = EtcdConfig::new(["http://127.0.0.1:2379"]);
//!     let client = runtime.block_on(group_storage_etcd::connect(&config))?;
//!     let store = EtcdStore::new(config, client, runtime)?;
//!     let p = CoordinatorPartition(7);
//!     // A new owner first fences older ones with an empty append, then loads.
//!     store.append_blocking(p, OwnerEpoch(3), vec![])?;
//!     let loaded = store.load(p)?;
//!     assert_eq!(loaded.epoch, OwnerEpoch(3));
//!     store.append_blocking(
//!         p,
//!         OwnerEpoch(3),
//!         vec![Record::Offset {
//!             group_id: "g".into(),
//!             partition: TopicPartition::new("orders", 0),
//!             offset: OffsetAndMetadata::new(42, 1_700_000_000_000),
//!         }],
//!     )?;
//!     // An older owner is refused.
//!     assert!(store.append_blocking(p, OwnerEpoch(2), vec![]).is_err());
//!     Ok(store)
//! }
//! # fn main() {}
//! ```

mod codec;
mod config;
mod group_commit;
mod keys;
mod partition;
mod store;
mod tail;

#[cfg(feature = "testing")]
pub mod testing;

pub use crate::config::{DEFAULT_MAX_REQUEST_BYTES, DEFAULT_TRANSACTIONS_IN_FLIGHT, EtcdConfig};
pub use crate::group_commit::AppendTransactions;
pub use crate::keys::{owner_key, owners_prefix};
pub use crate::store::{EtcdStore, Snapshots, connect};
/// The etcd client crate the store's API names ([`connect`] returns its
/// `Client`), so that callers use the very version the store was built with.
pub use etcd_client;
