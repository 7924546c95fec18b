//! The value of the core's one map of groups: a group of one kind (Kafka's
//! `Group` interface, implemented by `ClassicGroup` and, under `ModernGroup`,
//! `ConsumerGroup`; KIP-1043's one id namespace: an id names one group of one
//! kind). Share and streams groups come as siblings of these variants.

use crate::core::classic::Group;
use crate::core::consumer::ConsumerGroup;
use crate::core::types::WriteId;

/// One group of some kind. Its committed offsets are not here: they live in the
/// partition's [`OffsetStore`](crate::core::OffsetStore), whatever the kind.
#[derive(Debug, Clone)]
#[non_exhaustive]
#[allow(
    clippy::large_enum_variant,
    reason = "a classic group stays inline: a classic heartbeat finds it with no second indirection; \
              a consumer group is boxed, as its requests take it out of the map and put it back"
)]
pub(crate) enum GroupKind {
    /// A classic group (JoinGroup / SyncGroup protocol).
    Classic(Group),
    /// A KIP-848 consumer group (ConsumerGroupHeartbeat protocol).
    Consumer(Box<ConsumerGroup>),
}

impl GroupKind {
    /// The classic group, if this is one.
    pub(crate) fn classic(&self) -> Option<&Group> {
        match self {
            GroupKind::Classic(g) => Some(g),
            GroupKind::Consumer(_) => None,
        }
    }

    /// The classic group, if this is one.
    pub(crate) fn classic_mut(&mut self) -> Option<&mut Group> {
        match self {
            GroupKind::Classic(g) => Some(g),
            GroupKind::Consumer(_) => None,
        }
    }

    /// The consumer group, if this is one.
    pub(crate) fn consumer(&self) -> Option<&ConsumerGroup> {
        match self {
            GroupKind::Consumer(cg) => Some(cg),
            GroupKind::Classic(_) => None,
        }
    }

    /// The consumer group, if this is one.
    pub(crate) fn consumer_mut(&mut self) -> Option<&mut ConsumerGroup> {
        match self {
            GroupKind::Consumer(cg) => Some(cg),
            GroupKind::Classic(_) => None,
        }
    }

    /// The outstanding write of this group's metadata, if any: answers about
    /// the group are held until it commits (they could reveal what it wrote).
    pub(crate) fn barrier(&self) -> Option<WriteId> {
        match self {
            GroupKind::Classic(g) => g.barrier,
            GroupKind::Consumer(cg) => cg.barrier,
        }
    }

    /// Where [`barrier`](Self::barrier) is kept.
    pub(crate) fn barrier_mut(&mut self) -> &mut Option<WriteId> {
        match self {
            GroupKind::Classic(g) => &mut g.barrier,
            GroupKind::Consumer(cg) => &mut cg.barrier,
        }
    }

    /// True while the group has members (of any protocol).
    pub(crate) fn has_members(&self) -> bool {
        match self {
            GroupKind::Classic(g) => g.len() > 0,
            GroupKind::Consumer(cg) => !cg.modern.members.is_empty(),
        }
    }
}
