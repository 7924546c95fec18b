//! Server-side assignors of KIP-932's share groups: a sibling of
//! [`ServerAssignor`](super::ServerAssignor), not an implementation of it.
//!
//! Kafka keeps the two apart too (`ShareGroupPartitionAssignor` beside
//! `ConsumerGroupPartitionAssignor`), and for the same reasons:
//!
//! - a share group's target may give one partition to several members, which
//!   a KIP-848 target never does, so a KIP-848 assignor is no share assignor
//!   and the reverse;
//! - a share group assigns only the partitions whose share state is
//!   initialized ([`AssignablePartitions`], Kafka's
//!   `GroupSpec.isPartitionAssignable`), where a KIP-848 group assigns every
//!   partition. Keeping that in [`ShareGroupSpec`] leaves [`GroupSpec`] and
//!   the KIP-848 assignors exactly as they were: they neither carry nor ask
//!   the question.

use std::fmt;

use group_types::TopicId;

use super::{GroupSpec, ServerAssignError, SubscribedTopicDescriber, TargetAssignment};

/// Which partitions a share group may assign: those whose share-partition
/// state is initialized (`GroupSpec.isPartitionAssignable`, backed in Kafka
/// by the group's `ShareGroupStatePartitionMetadata` initialized topics).
pub trait AssignablePartitions {
    /// Whether partition `partition` of `topic` may be assigned.
    fn is_assignable(&self, topic: TopicId, partition: i32) -> bool;
}

impl<F: Fn(TopicId, i32) -> bool> AssignablePartitions for F {
    fn is_assignable(&self, topic: TopicId, partition: i32) -> bool {
        self(topic, partition)
    }
}

/// Every partition is assignable (Kafka's `GroupSpecImpl` without an
/// allowed-partitions map, as its tests build it).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllAssignable;

impl AssignablePartitions for AllAssignable {
    fn is_assignable(&self, _topic: TopicId, _partition: i32) -> bool {
        true
    }
}

/// A share group as a share assignor sees it: the members, as for the KIP-848
/// assignors, and which partitions may be assigned.
#[derive(Clone, Copy)]
pub struct ShareGroupSpec<'g, 'a> {
    /// The members, the subscription type, each member's current target.
    pub group: &'g GroupSpec<'a>,
    /// The partitions the group may assign.
    pub assignable: &'g dyn AssignablePartitions,
}

impl fmt::Debug for ShareGroupSpec<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShareGroupSpec").field("group", self.group).finish_non_exhaustive()
    }
}

/// A share group's server-side assignor (`ShareGroupPartitionAssignor`).
pub trait ShareAssignor: Send + Sync + fmt::Debug {
    /// The name of the assignor (`simple`), as in `group.share.assignors`.
    fn name(&self) -> &str;

    /// Every member's target, indexed like the spec's members. Several
    /// members may get the same partition.
    fn assign(
        &self,
        group: &ShareGroupSpec<'_, '_>,
        topics: &dyn SubscribedTopicDescriber,
    ) -> Result<TargetAssignment, ServerAssignError>;
}
