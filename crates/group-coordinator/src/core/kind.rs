//! The value of the core's one map of groups: a group of one kind (Kafka's
//! `Group` interface, implemented by `ClassicGroup` and, under `ModernGroup`,
//! `ConsumerGroup`; KIP-1043's one id namespace: an id names one group of one
//! kind). Streams groups come as a sibling of these variants.

use std::sync::Arc;

use group_offsets::Record;
use group_types::{ErrorCode, GroupState, OffsetCommitRequest, TxnOffsetCommitRequest};

use crate::core::classic::{Group, validate_offset_commit};
use crate::core::consumer::{self, ConsumerGroup};
use crate::core::offsets::{Committer, metadata_too_large};
use crate::core::share::{self, ShareGroup};
use crate::core::types::WriteId;
use crate::core::{CoordinatorCore, Engine, PendingWrite};

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
    /// A KIP-932 share group (ShareGroupHeartbeat protocol).
    Share(Box<ShareGroup>),
}

impl GroupKind {
    /// The classic group, if this is one.
    pub(crate) fn classic(&self) -> Option<&Group> {
        match self {
            GroupKind::Classic(g) => Some(g),
            GroupKind::Consumer(_) | GroupKind::Share(_) => None,
        }
    }

    /// The classic group, if this is one.
    pub(crate) fn classic_mut(&mut self) -> Option<&mut Group> {
        match self {
            GroupKind::Classic(g) => Some(g),
            GroupKind::Consumer(_) | GroupKind::Share(_) => None,
        }
    }

    /// The consumer group, if this is one.
    pub(crate) fn consumer(&self) -> Option<&ConsumerGroup> {
        match self {
            GroupKind::Consumer(cg) => Some(cg),
            GroupKind::Classic(_) | GroupKind::Share(_) => None,
        }
    }

    /// The consumer group, if this is one.
    pub(crate) fn consumer_mut(&mut self) -> Option<&mut ConsumerGroup> {
        match self {
            GroupKind::Consumer(cg) => Some(cg),
            GroupKind::Classic(_) | GroupKind::Share(_) => None,
        }
    }

    /// The share group, if this is one.
    pub(crate) fn share(&self) -> Option<&ShareGroup> {
        match self {
            GroupKind::Share(g) => Some(g),
            GroupKind::Classic(_) | GroupKind::Consumer(_) => None,
        }
    }

    /// The share group, if this is one.
    pub(crate) fn share_mut(&mut self) -> Option<&mut ShareGroup> {
        match self {
            GroupKind::Share(g) => Some(g),
            GroupKind::Classic(_) | GroupKind::Consumer(_) => None,
        }
    }

    /// The outstanding write of this group's metadata, if any: answers about
    /// the group are held until it commits (they could reveal what it wrote).
    pub(crate) fn barrier(&self) -> Option<WriteId> {
        match self {
            GroupKind::Classic(g) => g.barrier,
            GroupKind::Consumer(cg) => cg.barrier,
            GroupKind::Share(g) => g.barrier,
        }
    }

    /// Where [`barrier`](Self::barrier) is kept.
    pub(crate) fn barrier_mut(&mut self) -> &mut Option<WriteId> {
        match self {
            GroupKind::Classic(g) => &mut g.barrier,
            GroupKind::Consumer(cg) => &mut cg.barrier,
            GroupKind::Share(g) => &mut g.barrier,
        }
    }

    /// True while the group has members (of any protocol).
    pub(crate) fn has_members(&self) -> bool {
        match self {
            GroupKind::Classic(g) => g.len() > 0,
            GroupKind::Consumer(cg) => !cg.modern.members.is_empty(),
            GroupKind::Share(g) => !g.modern.members.is_empty(),
        }
    }
}

/// What the offsets store asks of a group, whatever its kind (Kafka's `Group`
/// interface: `validateOffsetCommit`, `isSubscribedToTopic`, ...).
impl GroupKind {
    /// Validates an OffsetCommit for this group; a classic member's commit
    /// also keeps its session alive. Inlined: it is on every commit's path.
    #[inline]
    pub(crate) fn validate_offset_commit(
        &mut self,
        req: &OffsetCommitRequest,
        eng: &mut Engine,
    ) -> Result<(), ErrorCode> {
        match self {
            GroupKind::Classic(g) => validate_offset_commit(g, req, eng),
            GroupKind::Consumer(cg) => {
                let max = eng.config.offset_metadata_max_bytes;
                consumer::validate_offset_commit(cg, &Committer::plain(req), &eng.image, |d| {
                    metadata_too_large(d, max)
                })
            }
            // `ShareGroup.validateOffsetCommit`: a share group keeps no offsets.
            GroupKind::Share(_) => Err(ErrorCode::GroupIdNotFound),
        }
    }

    /// Checks a TxnOffsetCommit (`Group.validateOffsetCommit` with
    /// `isTransactional`): it keeps no session alive.
    pub(crate) fn validate_txn_offset_commit(
        &self,
        req: &TxnOffsetCommitRequest,
        eng: &Engine,
    ) -> Result<(), ErrorCode> {
        let committer = Committer::transactional(req);
        match self {
            GroupKind::Classic(g) => {
                let position = if req.member_id.is_empty() { None } else { g.position(&req.member_id) };
                crate::core::classic::validate_commit(g, &committer, position)
            }
            GroupKind::Consumer(cg) => {
                let max = eng.config.offset_metadata_max_bytes;
                consumer::validate_offset_commit(cg, &committer, &eng.image, |d| metadata_too_large(d, max))
            }
            GroupKind::Share(_) => Err(ErrorCode::GroupIdNotFound),
        }
    }

    /// The group's id, where the kind keeps it (a classic group does).
    pub(crate) fn id(&self) -> Option<&Arc<str>> {
        self.classic().map(|g| &g.id)
    }

    /// True when the group is gone (a classic group marked Dead).
    pub(crate) fn is_dead(&self) -> bool {
        self.classic().is_some_and(|g| g.is(GroupState::Dead))
    }

    /// True when the group has no member (of any protocol).
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            GroupKind::Classic(g) => g.is(GroupState::Empty),
            GroupKind::Consumer(cg) => cg.modern.members.is_empty(),
            GroupKind::Share(g) => g.modern.members.is_empty(),
        }
    }

    /// OffsetDelete's refusal of a group that is not empty: only a classic
    /// group that is not a consumer-protocol one refuses.
    pub(crate) fn refuses_offset_delete(&self) -> bool {
        !self.is_empty()
            && self
                .classic()
                .is_some_and(|g| g.protocol_type.as_deref() != Some(group_offsets::CONSUMER_PROTOCOL_TYPE))
    }

    /// True when a member subscribes to `topic`: its offsets may not be deleted.
    pub(crate) fn subscribes_to(&self, topic: &str) -> bool {
        match self {
            GroupKind::Consumer(cg) => consumer::subscribes_to(cg, topic),
            GroupKind::Share(_) => false,
            GroupKind::Classic(g) => {
                !g.is(GroupState::Empty) && g.subscribed_topics.as_ref().is_none_or(|t| t.contains(topic))
            }
        }
    }

    /// The group as the retention job sees it (`offsetExpirationCondition`):
    /// a consumer group's offsets expire from their commit time once the group
    /// no longer subscribes to their topic. `None` for a share group, which the
    /// job never expires (`ShareGroup.shouldExpire` is false, and
    /// `GroupCoordinatorShard.cleanupGroupMetadata` skips it): it keeps no
    /// offsets, and deleting it empty would orphan its share state, whose state
    /// epochs would then fence the initializations of a group of the same id.
    pub(crate) fn retention<'a>(
        &'a self,
        pending: &'a [group_types::TopicPartition],
        consumer_topics: Option<&'a std::collections::BTreeSet<String>>,
    ) -> Option<group_offsets::RetentionGroup<'a>> {
        use group_offsets::RetentionGroup;
        Some(match self {
            GroupKind::Classic(g) => {
                let mut group = RetentionGroup::new(g.state, Some(g.state_ts)).with_pending(pending);
                if let Some(protocol_type) = g.protocol_type.as_deref() {
                    group = group.with_protocol_type(protocol_type);
                }
                if let Some(topics) = g.subscribed_topics.as_ref() {
                    group = group.with_subscribed_topics(topics);
                }
                group
            }
            GroupKind::Share(_) => return None,
            GroupKind::Consumer(cg) => {
                let state = if cg.modern.members.is_empty() { GroupState::Empty } else { GroupState::Stable };
                let mut group = RetentionGroup::new(state, Some(cg.created_ms))
                    .with_pending(pending)
                    .with_protocol_type(group_offsets::CONSUMER_PROTOCOL_TYPE);
                if let Some(topics) = consumer_topics {
                    group = group.with_subscribed_topics(topics);
                }
                group
            }
        })
    }

    /// The topics a consumer group subscribes to (`None` for other kinds).
    pub(crate) fn consumer_topics(&self) -> Option<std::collections::BTreeSet<String>> {
        self.consumer().map(consumer::subscribed_topic_names)
    }

    /// The records that delete the group (its offsets' tombstones are the
    /// offsets store's).
    pub(crate) fn deletion_records(&self, id: &Arc<str>) -> Vec<Record> {
        match self {
            GroupKind::Consumer(cg) => consumer::deletion_records(id, cg),
            GroupKind::Share(g) => share::deletion_records(id, g),
            GroupKind::Classic(_) => vec![Record::GroupTombstone { group_id: id.clone() }],
        }
    }
}

/// The map of groups, as the kinds' handlers reach it: each kind asks for its
/// own, and never names the others.
impl CoordinatorCore {
    /// Consumer group `id`, if it is one.
    pub(crate) fn consumer_group_ref(&self, id: &str) -> Option<&ConsumerGroup> {
        self.groups.get(id).and_then(GroupKind::consumer)
    }

    /// Consumer group `id`, if it is one.
    pub(crate) fn consumer_group_mut(&mut self, id: &str) -> Option<&mut ConsumerGroup> {
        self.groups.get_mut(id).and_then(GroupKind::consumer_mut)
    }

    /// Takes consumer group `id` out for a request to work on
    /// ([`put_consumer_group`](Self::put_consumer_group) puts it back); `None`
    /// when `id` is not a consumer group. Its slot keeps an empty group
    /// meanwhile: the map's entry stays, as removing and inserting it again on
    /// every heartbeat would wear the table (deleted slots pile up until it
    /// rehashes every group).
    pub(crate) fn take_consumer_group(&mut self, id: &str) -> Option<Box<ConsumerGroup>> {
        let GroupKind::Consumer(slot) = self.groups.get_mut(id)? else { return None };
        let empty = self.spare_consumer.take().unwrap_or_default();
        Some(std::mem::replace(slot, empty))
    }

    /// Puts back a consumer group a request took out (not a change: nothing to undo).
    pub(crate) fn put_consumer_group(&mut self, id: Arc<str>, cg: Box<ConsumerGroup>) {
        match self.groups.get_mut(&*id) {
            Some(GroupKind::Consumer(slot)) => self.spare_consumer = Some(std::mem::replace(slot, cg)),
            _ => {
                self.groups.insert(id, GroupKind::Consumer(cg));
            }
        }
    }

    /// Creates consumer group `id`, remembering what the id held before.
    pub(crate) fn create_consumer_group(&mut self, id: Arc<str>, cg: Box<ConsumerGroup>) {
        self.put_group(id, GroupKind::Consumer(cg));
    }

    /// Writes `records` of group `id`: while the write is outstanding, answers
    /// about the group wait for it (its barrier). A group that no longer exists
    /// holds no barrier.
    pub(crate) fn write_group_records(&mut self, id: &Arc<str>, records: Vec<Record>, pending: PendingWrite) {
        match self.groups.get_mut(&**id) {
            Some(g) => {
                self.engine.write_group_barrier(id.clone(), g.barrier_mut(), records, pending);
            }
            None => {
                self.engine.write(records, pending);
            }
        }
    }
}
