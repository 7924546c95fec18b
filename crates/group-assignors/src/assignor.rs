//! The `PartitionAssignor` trait every assignor implements, and its output type.

use std::collections::BTreeMap;
use std::sync::Arc;

use group_types::{MemberSubscription, TopicPartition};

use crate::AssignError;

/// Every member's partitions, keyed by member id; members that get nothing are
/// present with an empty `Vec`. Each list is sorted by `(topic, partition)`.
pub type GroupAssignment = BTreeMap<String, Vec<TopicPartition>>;

/// The racks holding a replica of one partition (KIP-881), in any order. An
/// empty list means "unknown". Used by
/// [`PartitionAssignor::assign_with_racks`], one entry per partition.
pub type ReplicaRacks = Vec<Arc<str>>;

/// A strategy that divides a group's subscribed partitions among its members,
/// as the group leader does between JoinGroup and SyncGroup.
///
/// `partitions` is the cluster metadata: every partition that exists, in any
/// order, including topics nobody subscribes to (those stay unassigned). A
/// subscribed topic absent from `partitions` does not exist and is skipped.
/// Zero members give an empty map.
pub trait PartitionAssignor: Send + Sync + std::fmt::Debug {
    /// The protocol name the assignor is registered under (`"range"`, ...).
    fn name(&self) -> &str;

    /// Assigns `partitions` to `members` without rack information.
    fn assign(
        &self,
        members: &[MemberSubscription],
        partitions: &[TopicPartition],
    ) -> Result<GroupAssignment, AssignError>;

    /// Assigns with KIP-881 rack information: `replica_racks[i]` lists the racks
    /// holding a replica of `partitions[i]`. `replica_racks` must be empty (no
    /// rack information, same as [`assign`](Self::assign)) or exactly as long as
    /// `partitions`. Members give their own rack in
    /// [`MemberSubscription::rack_id`] (an empty string counts as no rack).
    ///
    /// The default ignores racks, which is right for assignors without rack
    /// awareness (RoundRobin, most user assignors).
    fn assign_with_racks(
        &self,
        members: &[MemberSubscription],
        partitions: &[TopicPartition],
        replica_racks: &[ReplicaRacks],
    ) -> Result<GroupAssignment, AssignError> {
        check_rack_len(partitions, replica_racks)?;
        self.assign(members, partitions)
    }
}

/// Implements [`PartitionAssignor`] for a rack-aware assignor registered as `$name`,
/// whose work is the function `$assign(members, partitions, replica_racks)`: `assign`
/// gives it no racks.
macro_rules! rack_aware_assignor {
    ($ty:ty, $name:literal, $assign:path) => {
        impl $crate::PartitionAssignor for $ty {
            fn name(&self) -> &str {
                $name
            }

            fn assign(
                &self,
                members: &[group_types::MemberSubscription],
                partitions: &[group_types::TopicPartition],
            ) -> Result<$crate::GroupAssignment, $crate::AssignError> {
                $assign(members, partitions, &[])
            }

            fn assign_with_racks(
                &self,
                members: &[group_types::MemberSubscription],
                partitions: &[group_types::TopicPartition],
                racks: &[$crate::ReplicaRacks],
            ) -> Result<$crate::GroupAssignment, $crate::AssignError> {
                $assign(members, partitions, racks)
            }
        }
    };
}
pub(crate) use rack_aware_assignor;

/// Rejects a rack list that is neither empty nor parallel to `partitions`.
pub(crate) fn check_rack_len(
    partitions: &[TopicPartition],
    replica_racks: &[ReplicaRacks],
) -> Result<(), AssignError> {
    if replica_racks.is_empty() || replica_racks.len() == partitions.len() {
        Ok(())
    } else {
        Err(AssignError::RackListLengthMismatch { partitions: partitions.len(), racks: replica_racks.len() })
    }
}
