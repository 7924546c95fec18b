//! `GroupCoordinatorBuilder`: a coordinator with a chosen clock and authorizer, and
//! the coordinator's metrics snapshot.

use std::sync::Arc;

use group_offsets::MetadataStore;

use super::{GroupCoordinator, lock};
use crate::metrics::CoordinatorMetrics;
use crate::{AllowAll, Authorizer, Clock, CoordinatorConfig, CoordinatorError, SystemClock};

/// Options for opening a [`GroupCoordinator`], from [`GroupCoordinator::builder`]:
/// the system clock and [`AllowAll`] unless told otherwise.
pub struct GroupCoordinatorBuilder {
    storage: Arc<dyn MetadataStore>,
    config: CoordinatorConfig,
    clock: Arc<dyn Clock>,
    authorizer: Arc<dyn Authorizer>,
}

impl std::fmt::Debug for GroupCoordinatorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCoordinatorBuilder")
            .field("clock", &self.clock)
            .field("authorizer", &self.authorizer)
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

    /// Opens the coordinator, resuming what the storage holds.
    pub fn open(self) -> Result<GroupCoordinator, CoordinatorError> {
        GroupCoordinator::open(self.storage, self.config, self.clock, self.authorizer)
    }
}

impl GroupCoordinator {
    /// A builder for a coordinator over `storage`, to choose its clock and authorizer.
    pub fn builder(storage: Arc<dyn MetadataStore>, config: CoordinatorConfig) -> GroupCoordinatorBuilder {
        GroupCoordinatorBuilder {
            storage,
            config,
            clock: Arc::new(SystemClock),
            authorizer: Arc::new(AllowAll),
        }
    }

    /// A snapshot of the gauges (groups per state, members) and counters (rebalances,
    /// expirations, commits, authorization failures). Locks each shard in turn, so the
    /// gauges of different shards may be read at slightly different moments.
    pub fn metrics(&self) -> CoordinatorMetrics {
        let mut m = CoordinatorMetrics::default();
        for shard in &self.inner.shards {
            let shard = lock(shard);
            shard.counters.add_to(&mut m);
            shard.core.count_groups(&mut m);
        }
        self.inner.runtime_counters.add_to(&mut m);
        m
    }
}
