//! `GroupCoordinatorBuilder`: a coordinator with a chosen clock, authorizer and
//! topic metadata, and the coordinator's metrics snapshot.

use std::sync::Arc;

use group_offsets::MetadataStore;

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
}

impl std::fmt::Debug for GroupCoordinatorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCoordinatorBuilder")
            .field("clock", &self.clock)
            .field("authorizer", &self.authorizer)
            .field("topic_metadata", &self.topics)
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

    /// Opens the coordinator, resuming what the storage holds.
    pub fn open(self) -> Result<GroupCoordinator, CoordinatorError> {
        GroupCoordinator::open(self.storage, self.config, self.clock, self.authorizer, self.topics)
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
