//! What the timeline's entries hold, how the core applies them when a write
//! fails, and how reads see committed state through them (Kafka's
//! `SnapshotRegistry` over the `TimelineHashMap`s of `GroupMetadataManager` and
//! `OffsetMetadataManager`).
//!
//! An entry undoes one change: a group created, removed or replaced (its kind
//! whole, as Kafka's `groups` map keeps one value per id), what one request's
//! records changed in a consumer group (field by field, never a copy of the
//! group), one topic's offsets changed, or a group's offsets removed together
//! (a deletion).

use std::borrow::Cow;
use std::sync::Arc;

use group_types::{ErrorCode, OffsetAndMetadata, TopicPartition};

use crate::core::classic::Group;
use crate::core::consumer::{Change, ConsumerGroup};
use crate::core::offsets::transactions::ProducerOffsets;
use crate::core::offsets::{OffsetCache, OffsetChanges};
use crate::core::share::{ShareChange, ShareGroup};
use crate::core::timeline::{Entry, Timeline};
use crate::core::{CoordinatorCore, GroupKind, TimerKey, map_operation_error};

/// Committed values of offsets changed since: `None` where none was committed.
pub(crate) type OffsetOverrides = Vec<(TopicPartition, Option<OffsetAndMetadata>)>;

/// How to undo one change.
#[derive(Debug)]
pub(crate) enum Undo {
    /// The group `id` was `prev` before the change (`None`: it did not exist).
    Group { id: Arc<str>, prev: Option<Box<GroupKind>> },
    /// Offsets of one topic of group `group` changed: each `(partition, prev)`
    /// is a partition's offset before its change, in the order of the changes.
    /// One entry per topic of a commit, not per partition: a 100-partition
    /// commit logs one entry and shares the group's and topic's names once.
    Offsets { group: Arc<str>, topic: Arc<str>, prev: OffsetChanges },
    /// Every offset of group `group` was removed at once; `prev` held them.
    GroupOffsets { group: Arc<str>, prev: Option<Box<OffsetCache>> },
    /// What one request's records changed in consumer group `group`, oldest
    /// first: undone newest first.
    Consumer { group: Arc<str>, changes: Vec<Change> },
    /// What one request's records changed in share group `group`, oldest first.
    Share { group: Arc<str>, changes: Vec<ShareChange> },
    /// The hosted share coordinator's state of share partition `key` (of share
    /// group `group`) was `prev` before the change (`None`: it had none).
    ShareState {
        group: Arc<str>,
        key: Box<group_share_coordinator::SharePartitionKey>,
        prev: Option<Box<group_share_coordinator::SharePartitionState>>,
    },
    /// `producer`'s pending transactional offsets in group `group` were `prev`
    /// before the change (`None`: it had none).
    TxnOffsets { group: Arc<str>, producer: i64, prev: Option<Box<ProducerOffsets>> },
}

impl Entry for Undo {
    fn group_id(&self) -> &Arc<str> {
        match self {
            Undo::Group { id, .. } => id,
            Undo::Offsets { group, .. }
            | Undo::GroupOffsets { group, .. }
            | Undo::Consumer { group, .. }
            | Undo::Share { group, .. }
            | Undo::ShareState { group, .. }
            | Undo::TxnOffsets { group, .. } => group,
        }
    }
}

/// A group as committed state holds it.
#[derive(Debug)]
pub(crate) enum Committed<'a> {
    /// A classic group.
    Classic(&'a Group),
    /// A consumer group: the live one, or, when it changed since, a copy with
    /// those changes undone (only a read of a group with a write in flight
    /// pays for the copy).
    Consumer(Cow<'a, Box<ConsumerGroup>>),
    /// A share group: the live one, or, when it changed since, a copy with
    /// those changes undone.
    Share(Cow<'a, Box<ShareGroup>>),
}

impl<'a> Committed<'a> {
    /// True when the group is gone (a classic group marked Dead).
    pub(crate) fn is_dead(&self) -> bool {
        matches!(self, Committed::Classic(g) if g.is(group_types::GroupState::Dead))
    }

    /// OffsetFetch's check of the group (a consumer group checks the member).
    pub(crate) fn validate_offset_fetch(
        &self,
        req: &group_types::OffsetFetchRequest,
    ) -> Result<(), ErrorCode> {
        match self {
            Committed::Classic(_) => Ok(()),
            Committed::Consumer(cg) => crate::core::consumer::validate_offset_fetch(cg, req),
            // `ShareGroup.validateOffsetFetch`: a share group keeps no offsets.
            Committed::Share(_) => Err(ErrorCode::GroupIdNotFound),
        }
    }

    fn of(kind: &'a GroupKind) -> Committed<'a> {
        match kind {
            GroupKind::Classic(g) => Committed::Classic(g),
            GroupKind::Consumer(cg) => Committed::Consumer(Cow::Borrowed(cg)),
            GroupKind::Share(g) => Committed::Share(Cow::Borrowed(g)),
        }
    }
}

/// The committed version of group `id`, given its live version: `None` when the
/// group does not exist in committed state.
pub(crate) fn committed_group<'a>(
    timeline: &'a Timeline<Undo>,
    id: &str,
    live: Option<&'a GroupKind>,
) -> Option<Committed<'a>> {
    if !timeline.is_dirty(id) {
        return live.map(Committed::of);
    }
    // The state just before the group's first uncommitted creation, removal or
    // replacement (or the live state when there is none), with the consumer
    // changes made before it undone.
    let mut base = live;
    let mut changed: Vec<&Vec<Change>> = Vec::new();
    let mut share_changed: Vec<&Vec<ShareChange>> = Vec::new();
    for undo in timeline.uncommitted() {
        match undo {
            Undo::Group { id: group, prev } if **group == *id => {
                base = prev.as_deref();
                break;
            }
            Undo::Consumer { group, changes } if **group == *id => changed.push(changes),
            Undo::Share { group, changes } if **group == *id => share_changed.push(changes),
            _ => {}
        }
    }
    match base {
        Some(GroupKind::Share(g)) if !share_changed.is_empty() => {
            let mut committed = ShareGroup::clone(g);
            for changes in share_changed.into_iter().rev() {
                committed.undo(changes.clone());
            }
            Some(Committed::Share(Cow::Owned(Box::new(committed))))
        }
        Some(GroupKind::Consumer(cg)) if !changed.is_empty() => {
            let mut committed = ConsumerGroup::clone(cg);
            for changes in changed.into_iter().rev() {
                committed.undo(changes.clone());
            }
            Some(Committed::Consumer(Cow::Owned(Box::new(committed))))
        }
        base => base.map(Committed::of),
    }
}

/// The committed offsets of group `id` as a base and the values that differ
/// from it: the base is the live offsets unless the group's offsets were
/// removed together since (then what they were), and each override is a
/// partition's value before its first uncommitted change after that.
pub(crate) fn committed_offsets<'a>(
    timeline: &'a Timeline<Undo>,
    id: &str,
    live: Option<&'a OffsetCache>,
) -> (Option<&'a OffsetCache>, OffsetOverrides) {
    let mut overrides: OffsetOverrides = Vec::new();
    if !timeline.is_dirty(id) {
        return (live, overrides);
    }
    for undo in timeline.uncommitted() {
        match undo {
            Undo::GroupOffsets { group, prev } if **group == *id => return (prev.as_deref(), overrides),
            Undo::Offsets { group, topic, prev } if **group == *id => {
                for (partition, prev) in prev.iter() {
                    let seen =
                        overrides.iter().any(|(tp, _)| tp.partition == *partition && tp.topic == *topic);
                    if !seen {
                        overrides.push((
                            TopicPartition { topic: topic.clone(), partition: *partition },
                            prev.clone(),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    (live, overrides)
}

/// The partitions of group `id` with a pending transactional offset of any
/// producer in committed state, given the live pending offsets: each
/// producer's as it was before its first uncommitted change.
pub(crate) fn committed_txn_partitions(
    timeline: &Timeline<Undo>,
    id: &str,
    live: Option<&std::collections::BTreeMap<i64, ProducerOffsets>>,
) -> std::collections::BTreeSet<TopicPartition> {
    let mut by_producer: std::collections::BTreeMap<i64, Option<&ProducerOffsets>> =
        live.into_iter().flatten().map(|(p, o)| (*p, Some(o))).collect();
    if timeline.is_dirty(id) {
        let mut seen = std::collections::BTreeSet::new();
        for undo in timeline.uncommitted() {
            if let Undo::TxnOffsets { group, producer, prev } = undo
                && **group == *id
                && seen.insert(*producer)
            {
                by_producer.insert(*producer, prev.as_deref());
            }
        }
    }
    by_producer.into_values().flatten().flat_map(|o| o.keys().cloned()).collect()
}

/// Partitions of `group` with a change not yet committed (Kafka's
/// `pendingOffsetCommits`): the retention job leaves them alone.
pub(crate) fn pending_partitions(timeline: &Timeline<Undo>, id: &str) -> Vec<TopicPartition> {
    let mut pending = Vec::new();
    if !timeline.is_dirty(id) {
        return pending;
    }
    for undo in timeline.uncommitted() {
        if let Undo::Offsets { group, topic, prev } = undo
            && **group == *id
        {
            for (partition, _) in prev.iter() {
                let tp = TopicPartition { topic: topic.clone(), partition: *partition };
                if !pending.contains(&tp) {
                    pending.push(tp);
                }
            }
        }
    }
    pending
}

impl CoordinatorCore {
    /// Applies one undo entry. A group that disappears answers every request it
    /// parked: nothing parked is ever left unanswered.
    pub(crate) fn undo(&mut self, undo: Undo, error: ErrorCode) {
        match undo {
            Undo::Group { id, prev } => {
                if let Some(GroupKind::Classic(g)) = self.groups.remove(&id) {
                    self.engine.drop_group(g, map_operation_error(error));
                }
                if let Some(kind) = prev {
                    match &*kind {
                        GroupKind::Classic(g) => self.engine.rearm_group(g),
                        GroupKind::Consumer(cg) => self.engine.rearm_consumer_group(&id, cg),
                        GroupKind::Share(_) => {}
                    }
                    self.groups.insert(id, *kind);
                }
            }
            Undo::Consumer { group, changes } => {
                if let Some(GroupKind::Consumer(cg)) = self.groups.get_mut(&group) {
                    cg.undo(changes);
                    self.engine.rearm_consumer_group(&group, cg);
                }
            }
            // A member the failed request removed (a leave, an expired session)
            // is back: its session timer, which the request cancelled, is armed
            // again a full session out (Kafka leaves it unarmed until the
            // member's next heartbeat, which a member that left never sends).
            Undo::Share { group, changes } => {
                if let Some(GroupKind::Share(g)) = self.groups.get_mut(&group) {
                    let touched: Vec<Arc<str>> = changes
                        .iter()
                        .filter_map(|c| match c {
                            ShareChange::Member { id, .. } => Some(id.clone()),
                            _ => None,
                        })
                        .collect();
                    g.undo(changes);
                    let deadline = self.engine.now + i64::from(self.engine.config.share.session_timeout_ms);
                    for id in touched.iter().filter(|id| g.modern.members.contains_key(id)) {
                        self.engine.arm(TimerKey::ShareSession(group.clone(), id.clone()), deadline);
                    }
                }
            }
            Undo::Offsets { group, topic, prev } => {
                // Newest change first, as the whole log is undone.
                for (partition, prev) in prev.into_newest_first() {
                    let tp = TopicPartition { topic: topic.clone(), partition };
                    self.offsets.set(&group, tp, prev);
                }
            }
            Undo::GroupOffsets { group, prev } => self.offsets.restore(group, prev.map(|o| *o)),
            Undo::ShareState { key, prev, .. } => self.undo_share_state(*key, prev.map(|p| *p)),
            Undo::TxnOffsets { group, producer, prev } => {
                self.transactions.set(&group, producer, prev.map(|p| *p));
            }
        }
    }

    /// Creates classic group `id`, remembering that it did not exist.
    pub(crate) fn create_group(&mut self, id: &str) {
        let id: Arc<str> = Arc::from(id);
        let g = Group::new(id.clone(), self.engine.now);
        self.put_group(id, GroupKind::Classic(g));
    }

    /// Puts group `id` in as `kind`, remembering what it replaces.
    pub(crate) fn put_group(&mut self, id: Arc<str>, kind: GroupKind) {
        let prev = self.groups.insert(id.clone(), kind).map(Box::new);
        self.engine.timeline.push(Undo::Group { id, prev });
    }

    /// Removes group `id` (not its offsets), remembering it whole.
    pub(crate) fn remove_group(&mut self, id: &str) {
        if let Some((key, kind)) = self.groups.remove_entry(id) {
            if let GroupKind::Classic(g) = &kind {
                self.engine.cancel_group_timers(g);
            }
            self.engine.timeline.push(Undo::Group { id: key, prev: Some(Box::new(kind)) });
        }
    }

    /// Removes every offset of group `id`, remembering them.
    pub(crate) fn remove_offsets(&mut self, id: &Arc<str>) {
        if let Some(prev) = self.offsets.remove(id) {
            self.engine.timeline.push(Undo::GroupOffsets { group: id.clone(), prev: Some(Box::new(prev)) });
        }
    }

    /// The committed version of a group (what reads answer from), `None` when
    /// the group does not exist in committed state.
    pub(crate) fn committed_view(&self, id: &str) -> Option<Committed<'_>> {
        committed_group(&self.engine.timeline, id, self.groups.get(id))
    }

    /// Consumer group `id` as committed state holds it: `None` when no group
    /// has the id, `Some(None)` when the group is of another kind.
    pub(crate) fn committed_consumer_group(&self, id: &str) -> Option<Option<Cow<'_, Box<ConsumerGroup>>>> {
        match self.committed_view(id)? {
            Committed::Consumer(cg) => Some(Some(cg)),
            Committed::Classic(_) | Committed::Share(_) => Some(None),
        }
    }

    /// What one request's records changed in consumer group `group`, to undo
    /// if its write fails.
    pub(crate) fn consumer_changed(&mut self, group: &Arc<str>, changes: Vec<Change>) {
        if !changes.is_empty() {
            self.engine.timeline.push(Undo::Consumer { group: group.clone(), changes });
        }
    }

    /// Partitions of group `id` with a change not yet committed.
    pub(crate) fn pending_partitions(&self, id: &str) -> Vec<TopicPartition> {
        pending_partitions(&self.engine.timeline, id)
    }

    /// The partitions of group `id` with a pending transactional offset, in
    /// committed state.
    pub(crate) fn committed_txn_partitions(&self, id: &str) -> std::collections::BTreeSet<TopicPartition> {
        committed_txn_partitions(&self.engine.timeline, id, self.transactions.of_group(id))
    }

    /// The committed offsets of group `id`: a base and the partitions whose
    /// committed value differs from it.
    pub(crate) fn committed_offsets(&self, id: &str) -> (Option<&OffsetCache>, OffsetOverrides) {
        committed_offsets(&self.engine.timeline, id, self.offsets.get(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::types::WriteId;

    fn changes(partition: i32, prev: Option<OffsetAndMetadata>) -> OffsetChanges {
        let mut changes = OffsetChanges::default();
        changes.push(partition, prev);
        changes
    }

    fn offset(group: &str, p: i32, prev: Option<i64>) -> Undo {
        Undo::Offsets {
            group: Arc::from(group),
            topic: Arc::from("t"),
            prev: changes(p, prev.map(|o| OffsetAndMetadata::new(o, 0))),
        }
    }

    #[test]
    fn a_failed_write_voids_later_ones_and_returns_their_undo_newest_first() {
        let mut t = Timeline::default();
        t.begin_step();
        t.push(offset("g", 0, None));
        t.issued(WriteId(1));
        t.end_step();
        t.begin_step();
        t.push(offset("g", 0, Some(1)));
        t.issued(WriteId(2));
        t.end_step();
        let (voided, undone) = t.fail(WriteId(1)).expect("outstanding");
        assert_eq!(voided, vec![WriteId(1), WriteId(2)]);
        let prevs: Vec<Option<i64>> = undone
            .iter()
            .map(|u| match u {
                Undo::Offsets { prev, .. } => {
                    prev.iter().next().and_then(|(_, o)| o.as_ref()).map(|o| o.offset)
                }
                Undo::Group { .. }
                | Undo::GroupOffsets { .. }
                | Undo::Consumer { .. }
                | Undo::Share { .. }
                | Undo::ShareState { .. }
                | Undo::TxnOffsets { .. } => None,
            })
            .collect();
        assert_eq!(prevs, vec![Some(1), None]);
        assert!(!t.is_dirty("g"));
        assert!(t.fail(WriteId(2)).is_none(), "a voided write is no longer outstanding");
    }

    #[test]
    fn committing_in_order_makes_changes_final_and_reads_see_the_committed_value() {
        let mut t = Timeline::default();
        t.begin_step();
        t.push(offset("g", 0, Some(5)));
        t.issued(WriteId(1));
        t.begin_step();
        t.push(offset("g", 0, Some(6)));
        t.issued(WriteId(2));
        let first = committed_offsets(&t, "g", None).1;
        assert_eq!(first[0].1.as_ref().map(|o| o.offset), Some(5));
        t.committed(WriteId(1));
        let second = committed_offsets(&t, "g", None).1;
        assert_eq!(second[0].1.as_ref().map(|o| o.offset), Some(6));
        t.committed(WriteId(2));
        assert!(committed_offsets(&t, "g", None).1.is_empty());
        assert!(!t.is_dirty("g"));
    }

    #[test]
    fn offsets_removed_together_read_as_they_were_until_the_removal_commits() {
        let mut t = Timeline::default();
        let mut before = OffsetCache::default();
        before.insert(TopicPartition::new("t", 0), OffsetAndMetadata::new(7, 0));
        t.begin_step();
        t.push(Undo::GroupOffsets { group: Arc::from("g"), prev: Some(Box::new(before)) });
        t.issued(WriteId(1));
        let (base, overrides) = committed_offsets(&t, "g", None);
        assert!(overrides.is_empty());
        assert_eq!(base.and_then(|o| o.get_partition("t", 0)).map(|o| o.offset), Some(7));
        t.committed(WriteId(1));
        assert!(committed_offsets(&t, "g", None).0.is_none());
    }
}
