//! Coordinator partition ownership over etcd: each `group-server` node of a cluster
//! registers under an etcd lease, takes an even share of the coordinator partitions
//! (never more than `ceil(partitions / nodes)`), serves them with a
//! [`GroupCoordinator`](group_coordinator::GroupCoordinator) built with managed
//! ownership, and gives them up the moment etcd stops showing them as its own.
//! Another node takes a dead node's partitions once etcd expires its lease.
//!
//! Ownership never overlaps (the rules are in [`plan`]): a partition's owner key is
//! only ever created when missing, its create revision is the owner's epoch, and the
//! etcd store (`group-storage-etcd`, with owner-key fencing) refuses an append whose
//! epoch is not the current owner key's, so a paused node that wakes up after its
//! lease expired cannot acknowledge a write; and the coordinator refuses every
//! request once the node's lease may have run out
//! ([`ServingLease`](group_coordinator::ServingLease)), so it answers no read from
//! memory either before the driver has unloaded its partitions.
//!
//! The crate starts no runtime and keeps no etcd client of its own:
//! [`ClusterMember::start`] spawns its driver on the caller's tokio runtime, over
//! the caller's etcd client, the one the node's
//! [`EtcdStore`](group_storage_etcd::EtcdStore) runs on (see
//! `examples/embed_in_broker.rs` for a broker doing this inside its own runtime).
//!
//! ```no_run
//! use std::sync::Arc;
//! use group_cluster::{ClusterConfig, ClusterMember, Wakeup};
//! use group_coordinator::{CoordinatorConfig, GroupCoordinator, ServingLease};
//! use group_storage_etcd::{EtcdConfig, EtcdStore};
//!
//! /// Joins the cluster on the broker's own tokio runtime, with one etcd client
//! /// for the store and the membership; called from a thread of the broker's
//! /// that is not one of the runtime's workers.
//! fn join(runtime: &tokio::runtime::Handle) -> Result<(), Box<dyn std::error::Error>> {
//!     let mut store = EtcdConfig::new(["http://127.0.0.1:2379"]);
//!     store.fence_with_owner_keys = true;
//!     let client = runtime.block_on(group_storage_etcd::connect(&store))?;
//!     let store = Arc::new(EtcdStore::new(store, client.clone(), runtime)?);
//!     let (wakeup, serving) = (Wakeup::new(), Arc::new(ServingLease::new()));
//!     let coordinator = Arc::new(
//!         GroupCoordinator::builder(store, CoordinatorConfig::default())
//!             .managed_ownership()
//!             .on_partition_lost(wakeup.listener())
//!             .serving_lease(serving.clone())
//!             .open()?,
//!     );
//!     let config = ClusterConfig::new("/group-coordinator", 1, "127.0.0.1:9092");
//!     let member = ClusterMember::start(config, client, runtime, coordinator.clone(), wakeup, serving)?;
//!     println!("live nodes: {:?}", member.view().nodes());
//!     member.shutdown();
//!     Ok(())
//! }
//! # fn main() {}
//! ```

mod config;
mod error;
mod host;
mod member;
pub mod plan;
mod view;

pub use crate::config::ClusterConfig;
pub use crate::error::ClusterError;
pub use crate::host::PartitionHost;
pub use crate::member::{ClusterMember, Wakeup};
pub use crate::view::{ClusterView, NodeAddress};
