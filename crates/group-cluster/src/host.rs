//! The coordinator side of ownership: what the driver asks of the node that serves
//! the partitions ([`GroupCoordinator`] in production, a model in the simulation).

use group_coordinator::{CoordinatorError, GroupCoordinator, PartitionState};
use group_offsets::{CoordinatorPartition, OwnerEpoch};

use crate::plan::Hosting;

/// Loads and unloads coordinator partitions on request.
pub trait PartitionHost: Send + Sync {
    /// How many coordinator partitions there are.
    fn partition_count(&self) -> u32;
    /// Starts serving `partition` as its owner at `epoch` (fencing older owners
    /// first); blocking. `Err` leaves it unloaded.
    fn load(&self, partition: CoordinatorPartition, epoch: OwnerEpoch) -> Result<(), CoordinatorError>;
    /// Stops serving `partition` at once.
    fn unload(&self, partition: CoordinatorPartition);
    /// Where `partition` stands.
    fn hosting(&self, partition: CoordinatorPartition) -> Hosting;
}

impl PartitionHost for GroupCoordinator {
    fn partition_count(&self) -> u32 {
        GroupCoordinator::partition_count(self)
    }

    fn load(&self, partition: CoordinatorPartition, epoch: OwnerEpoch) -> Result<(), CoordinatorError> {
        self.load_partition(partition, epoch)
    }

    fn unload(&self, partition: CoordinatorPartition) {
        self.unload_partition(partition);
    }

    fn hosting(&self, partition: CoordinatorPartition) -> Hosting {
        match self.partition_state(partition) {
            PartitionState::Unowned => Hosting::Unowned,
            PartitionState::Loading => Hosting::Loading,
            PartitionState::Owned(epoch) => Hosting::Owned(epoch),
        }
    }
}
