//! `GroupCoordinatorBuilder`: a coordinator with a chosen clock, authorizer and
//! topic metadata, and the coordinator's metrics snapshot.

use std::sync::Arc;

use group_offsets::{CoordinatorPartition, MetadataStore, OwnerEpoch};

use super::ownership::Options;
use super::{GroupCoordinator, lock};
use crate::metrics::CoordinatorMetrics;
use crate::{
    AllTopicsExist, AllowAll, Authorizer, Clock, CoordinatorConfig, CoordinatorError, SystemClock,
    TopicMetadata,
};

/// Options for opening a [`GroupCoordinator`], from [`GroupCoordinator::builder`]:
/// the system clock, [`AllowAll`] and [`AllTopicsExist`] unless told otherwise.
pub struct GroupCoordinatorBuilder {
    storage: Arc<dyn MetadataStore>,
    config: CoordinatorConfig,
    clock: Arc<dyn Clock>,
    authorizer: Arc<dyn Authorizer>,
    topics: Arc<dyn TopicMetadata>,
    ownership: Options,
}

impl std::fmt::Debug for GroupCoordinatorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCoordinatorBuilder")
            .field("clock", &self.clock)
            .field("authorizer", &self.authorizer)
            .field("topic_metadata", &self.topics)
            .field("managed_ownership", &self.ownership.managed)
            .finish_non_exhaustive()
    }
}

impl GroupCoordinatorBuilder {
    /// Reads time from `clock` (a [`ManualClock`](crate::ManualClock) in tests).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> GroupCoordinatorBuilder {
        self.clock = clock;
        self
    }

    /// Consults `authorizer` for every request.
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> GroupCoordinatorBuilder {
        self.authorizer = authorizer;
        self
    }

    /// Asks `topics` which partitions exist: an OffsetCommit or OffsetDelete of a
    /// partition it does not know is answered `UNKNOWN_TOPIC_OR_PARTITION` for that
    /// partition, after the [`authorizer`](Self::authorizer)'s topic check, and
    /// nothing of it is stored (Kafka's `KafkaApis` checks its metadata cache the
    /// same way). OffsetFetch is not checked.
    pub fn topic_metadata(mut self, topics: Arc<dyn TopicMetadata>) -> GroupCoordinatorBuilder {
        self.topics = topics;
        self
    }

    /// Leaves the coordinator partitions to an ownership manager: [`open`](Self::open)
    /// loads none, every partition starts [`Unowned`](crate::PartitionState::Unowned)
    /// (its groups' requests answered `NOT_COORDINATOR`), and the manager calls
    /// [`GroupCoordinator::load_partition`] for each partition this node gains and
    /// [`GroupCoordinator::unload_partition`] for each it loses, as Kafka's
    /// `GroupCoordinatorService.onElection` and `onResignation` drive its
    /// `CoordinatorRuntime`. Without it every partition is loaded at open and owned
    /// for good, at one epoch above what storage had.
    pub fn managed_ownership(mut self) -> GroupCoordinatorBuilder {
        self.ownership.managed = true;
        self
    }

    /// Calls `listener` with a partition and the epoch this node owned it at when
    /// an append of it was fenced ([`StorageError::Fenced`](group_offsets::StorageError::Fenced):
    /// a node with a higher epoch took it over). The partition is unloaded first,
    /// as by [`GroupCoordinator::unload_partition`]; the listener runs afterwards,
    /// with no lock held, on the storage stage's thread, before the requests that
    /// waited in the partition get their `NOT_COORDINATOR`, so it must not block
    /// for long (an ownership manager would typically report the loss and return).
    pub fn on_partition_lost(
        mut self,
        listener: Arc<dyn Fn(CoordinatorPartition, OwnerEpoch) + Send + Sync>,
    ) -> GroupCoordinatorBuilder {
        self.ownership.on_lost = Some(listener);
        self
    }

    /// Refuses every request `NOT_COORDINATOR` while `lease` does not hold (see
    /// [`ServingLease`](crate::ServingLease)): an ownership manager extends it as
    /// it renews the node's lease, so that a node that was paused past it answers
    /// nothing from memory before the manager has unloaded its partitions.
    pub fn serving_lease(mut self, lease: Arc<crate::ServingLease>) -> GroupCoordinatorBuilder {
        self.ownership.lease = Some(lease);
        self
    }

    /// Starts consumer groups with `image` as the cluster's topics (later images
    /// come through [`GroupCoordinator::update_metadata_image`]).
    pub fn metadata_image(mut self, image: crate::MetadataImage) -> GroupCoordinatorBuilder {
        self.ownership.image = Arc::new(image);
        self
    }

    /// Offers `assignor` to consumer groups under its name, besides `uniform` and
    /// `range` (members may ask for it once `ConsumerGroupConfig::assignors` lists it).
    pub fn server_assignor(
        mut self,
        assignor: Arc<dyn group_assignors::server::ServerAssignor>,
    ) -> GroupCoordinatorBuilder {
        self.ownership.assignors.push(assignor);
        self
    }

    /// Serves share groups' share-partition initialization through `persister`
    /// (a share coordinator): share groups (`ShareGroupConfig::enabled`) need one.
    pub fn share_persister(mut self, persister: Arc<dyn crate::SharePersister>) -> GroupCoordinatorBuilder {
        self.ownership.share_persister = Some(persister);
        self
    }

    /// Answers DescribeShareGroupOffsets' lag (KIP-1226) with the partitions' end
    /// offsets from `end_offsets` (Kafka's `PartitionMetadataClient`), asked once
    /// per summary the share coordinator answers, off the partition's lock (see
    /// [`PartitionEndOffsets`](crate::PartitionEndOffsets)). Without it every
    /// partition's lag is -1, as Kafka answers where it cannot compute it.
    pub fn partition_end_offsets(
        mut self,
        end_offsets: Arc<dyn crate::PartitionEndOffsets>,
    ) -> GroupCoordinatorBuilder {
        self.ownership.end_offsets = Some(end_offsets);
        self
    }

    /// Which coordinator partition hosts a share partition's state: Kafka's routing
    /// by key (the default), or the group's own partition
    /// ([`ShareStateRouting::WithGroup`](crate::ShareStateRouting::WithGroup), for nodes that cannot reach each other's
    /// share state). Every node of a cluster must choose the same.
    pub fn share_state_routing(mut self, routing: crate::ShareStateRouting) -> GroupCoordinatorBuilder {
        self.ownership.share_routing = routing;
        self
    }

    /// Keeps per-group configs (IncrementalAlterConfigs of GROUP resources) in `store`,
    /// read once at open; without it they are kept in memory and lost on exit.
    pub fn group_config_store(mut self, store: Arc<dyn crate::GroupConfigStore>) -> GroupCoordinatorBuilder {
        self.ownership.group_config_store = Some(store);
        self
    }

    /// Opens the coordinator, resuming what the storage holds (nothing with
    /// [`managed_ownership`](Self::managed_ownership)).
    pub fn open(self) -> Result<GroupCoordinator, CoordinatorError> {
        GroupCoordinator::open(
            self.storage,
            self.config,
            self.clock,
            self.authorizer,
            self.topics,
            self.ownership,
        )
    }
}

impl GroupCoordinator {
    /// A builder for a coordinator over `storage`, to choose its clock, authorizer
    /// and topic metadata.
    pub fn builder(storage: Arc<dyn MetadataStore>, config: CoordinatorConfig) -> GroupCoordinatorBuilder {
        GroupCoordinatorBuilder {
            storage,
            config,
            clock: Arc::new(SystemClock),
            authorizer: Arc::new(AllowAll),
            topics: Arc::new(AllTopicsExist),
            ownership: Options::default(),
        }
    }

    /// A snapshot of the gauges (groups per state, members) and counters (rebalances,
    /// expirations, commits, authorization failures, failed writes) and the storage
    /// appends' latency histogram. Locks each shard in turn, so the
    /// gauges of different shards may be read at slightly different moments.
    pub fn metrics(&self) -> CoordinatorMetrics {
        let mut m = CoordinatorMetrics::default();
        for shard in &self.inner.shards {
            let shard = lock(shard);
            shard.counters.add_to(&mut m);
            shard.core.count_groups(&mut m);
        }
        self.inner.runtime_counters.add_to(&mut m);
        m.append_latency = self.inner.append_latency.snapshot();
        m
    }
}
