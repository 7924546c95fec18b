//! A consumer group's state as its records describe it (`ConsumerGroup`,
//! `ConsumerGroupMember`), changed only by [`ConsumerGroup::replay`], as Kafka's
//! `GroupMetadataManager.replay` overloads do: the handlers produce records, the
//! records change the group, and loading a partition is replaying what storage holds.
//!
//! What every modern kind shares (epochs, members, targets) is its
//! [`ModernGroup`]; what only a consumer group has (regexes, partition owners,
//! classic-protocol members) is here. A replay can say how to undo exactly what
//! it changed ([`Change`]): a failed write reverts those changes, newest first,
//! instead of restoring a copy of the whole group (Kafka's `SnapshotRegistry`).

use std::collections::BTreeMap;
use std::sync::Arc;

use group_offsets::{AssignmentEpochs, CurrentMemberAssignmentValue, ModernGroupRecord};
use group_types::hash::FastMap;
use group_types::{ConsumerGroupState, ConsumerMemberState, TopicId};

use super::epochs;
use super::meta::MemberMeta;
use super::topics::NameCounts;
use crate::core::modern::assignment::{self, Held};
use crate::core::modern::{Keyed, ModernChange, ModernGroup, ModernMember, ModernState};

/// One member of a consumer group.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConsumerMember {
    pub(crate) id: Arc<str>,
    /// What the member sent about itself (its MemberMetadata record's value).
    pub(crate) meta: MemberMeta,
    pub(crate) member_epoch: i32,
    pub(crate) previous_member_epoch: i32,
    pub(crate) state: ConsumerMemberState,
    pub(crate) assigned: Held,
    pub(crate) pending_revocation: Held,
    /// When each partition of `assigned` was assigned to it (KIP-1251), in
    /// `assigned`'s order: commits of an older member epoch are checked
    /// against it (`consumer/epochs.rs`).
    pub(crate) assigned_epochs: AssignmentEpochs,
    /// The same for `pending_revocation`.
    pub(crate) pending_revocation_epochs: AssignmentEpochs,
    /// Not in records: the epoch the revocation timer was armed for, if armed,
    /// and when it fires. Boxed: only a member revoking partitions has one,
    /// and inline it would take three words of every member.
    pub(crate) rebalance_timer: Option<Box<(i32, i64)>>,
    /// Not in records: the session deadline armed, for snapshots.
    pub(crate) session_deadline: Option<i64>,
    /// Not in records: a classic member's JoinGroup and SyncGroup deadlines
    /// while either is armed. Boxed: only a classic member between a rebalance
    /// and its SyncGroup has one, and inline they would take every member's room.
    pub(crate) classic_deadlines: Option<Box<ClassicDeadlines>>,
}

/// The deadlines of a classic member inside a consumer group (Kafka's
/// `consumerGroupJoinKey` and `consumerGroupSyncKey` timers), `None` when not
/// armed. Kept beside the timers so that a deadline fires only while it is the
/// member's, a rejoin deadline is armed only if absent
/// (`scheduleConsumerGroupJoinTimeoutIfAbsent`), and a reverted write brings
/// back the deadlines it replaced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ClassicDeadlines {
    /// The JoinGroup deadline of a member told to rejoin.
    pub(crate) join: Option<i64>,
    /// The SyncGroup deadline of a member whose JoinGroup was answered.
    pub(crate) sync: Option<i64>,
}

/// Which deadline of a classic member inside a consumer group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClassicDeadline {
    /// Told to rejoin: its JoinGroup is due.
    Join,
    /// Its JoinGroup answered: its SyncGroup is due.
    Sync,
}

impl ConsumerMember {
    pub(crate) fn new(id: Arc<str>) -> ConsumerMember {
        ConsumerMember { id, ..ConsumerMember::default() }
    }

    /// The regex, `None` when none (`""` is none).
    pub(crate) fn regex(&self) -> Option<&str> {
        self.meta.subscribed_topic_regex().filter(|r| !r.is_empty())
    }

    /// True for a member that speaks the classic protocol inside the group.
    pub(crate) fn is_classic(&self) -> bool {
        self.meta.classic().is_some()
    }

    /// Its classic `which` deadline, if armed.
    pub(crate) fn classic_deadline(&self, which: ClassicDeadline) -> Option<i64> {
        let d = self.classic_deadlines.as_deref()?;
        match which {
            ClassicDeadline::Join => d.join,
            ClassicDeadline::Sync => d.sync,
        }
    }

    /// Sets (or clears, with `None`) its classic `which` deadline.
    pub(crate) fn set_classic_deadline(&mut self, which: ClassicDeadline, at: Option<i64>) {
        let mut d = self.classic_deadlines.as_deref().copied().unwrap_or_default();
        match which {
            ClassicDeadline::Join => d.join = at,
            ClassicDeadline::Sync => d.sync = at,
        }
        self.classic_deadlines = (d != ClassicDeadlines::default()).then(|| Box::new(d));
    }

    /// The record value of its current assignment.
    pub(crate) fn assignment_value(&self) -> CurrentMemberAssignmentValue {
        assignment_value(
            (self.member_epoch, self.previous_member_epoch, self.state),
            (&self.assigned, &self.assigned_epochs),
            (&self.pending_revocation, &self.pending_revocation_epochs),
        )
    }
}

/// The record value of a member at `(member epoch, previous epoch, state)` holding
/// `assigned` and `pending` revocation, each with its epochs.
pub(crate) fn assignment_value(
    (member_epoch, previous_member_epoch, state): (i32, i32, ConsumerMemberState),
    (assigned, assigned_epochs): (&assignment::Assignment, &AssignmentEpochs),
    (pending, pending_epochs): (&assignment::Assignment, &AssignmentEpochs),
) -> CurrentMemberAssignmentValue {
    CurrentMemberAssignmentValue {
        member_epoch,
        previous_member_epoch,
        state,
        assigned: assignment::to_wire(assigned),
        pending_revocation: assignment::to_wire(pending),
        assigned_epochs: assigned_epochs.clone(),
        pending_revocation_epochs: pending_epochs.clone(),
    }
}

/// A regex's resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResolvedRegex {
    pub(crate) topics: Vec<String>,
    pub(crate) version: i64,
    pub(crate) timestamp_ms: i64,
}

/// How to undo one change to a consumer group: the value a field, a member or
/// an index entry had before it.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// A change to what every modern group holds.
    Modern(ModernChange),
    /// Member `id` was `prev` (`None`: it was not a member).
    Member { id: Arc<str>, prev: Option<Box<ConsumerMember>> },
    /// Instance id `instance` named member `prev` (`None`: no member).
    Static { instance: String, prev: Option<Arc<str>> },
    /// Partition `partition`'s owner epoch was `prev` (`None`: free).
    PartitionEpoch { partition: (TopicId, i32), prev: Option<i32> },
    /// The regex subscriber count was this.
    RegexSubscribers(usize),
    /// Regex `regex` was resolved as `prev` (`None`: it was not).
    Regex { regex: Arc<str>, prev: Option<ResolvedRegex> },
    /// The refresh flags (not in records) were these.
    Flags { refresh_needed: bool, regex_refresh_due: bool },
}

/// Per partition, the epoch of the member that owns it, by topic and then by
/// partition, as Kafka's `ConsumerGroup.currentPartitionEpoch` (a map of
/// maps): each topic id is kept once, not once per partition (8 bytes an
/// owned partition rather than 24).
#[derive(Debug, Clone, Default)]
pub(crate) struct PartitionEpochs(FastMap<TopicId, FastMap<i32, i32>>);

impl PartitionEpochs {
    /// The owner's epoch of partition `p` of `topic`.
    pub(crate) fn get(&self, topic: TopicId, p: i32) -> Option<i32> {
        self.0.get(&topic)?.get(&p).copied()
    }

    /// True when partition `p` of `topic` has an owner.
    pub(crate) fn contains(&self, topic: TopicId, p: i32) -> bool {
        self.0.get(&topic).is_some_and(|ps| ps.contains_key(&p))
    }

    /// Sets the owner's epoch of a partition, returning the one before.
    pub(crate) fn insert(&mut self, (topic, p): (TopicId, i32), epoch: i32) -> Option<i32> {
        self.0.entry(topic).or_default().insert(p, epoch)
    }

    /// Frees a partition, returning its owner's epoch; a topic with no owned
    /// partition left is forgotten.
    pub(crate) fn remove(&mut self, (topic, p): (TopicId, i32)) -> Option<i32> {
        let partitions = self.0.get_mut(&topic)?;
        let prev = partitions.remove(&p);
        if partitions.is_empty() {
            self.0.remove(&topic);
        }
        prev
    }

    /// Every owned partition with its owner's epoch, in no order.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = ((TopicId, i32), i32)> + '_ {
        self.0.iter().flat_map(|(t, ps)| ps.iter().map(move |(p, e)| ((*t, *p), *e)))
    }
}

/// A KIP-848 consumer group.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConsumerGroup {
    /// The group's id.
    pub(crate) id: Arc<str>,
    /// What every modern kind of group holds.
    pub(crate) modern: ModernGroup<ConsumerMember>,
    /// Per partition, the epoch of the member that owns it (assigned or pending
    /// revocation); absent = free (`ConsumerGroup.currentPartitionEpoch`).
    pub(crate) partition_epochs: PartitionEpochs,
    pub(crate) regexes: BTreeMap<Arc<str>, ResolvedRegex>,
    /// How many members subscribe with a regex (kept by `replay`).
    pub(crate) regex_subscribers: usize,
    /// How many members subscribe to each topic by name (kept by `replay`).
    pub(crate) subscribed_names: NameCounts,
    /// Not in records: the metadata hash must be recomputed at the next heartbeat
    /// (after a load, or a change of a subscribed topic).
    pub(crate) refresh_needed: bool,
    /// Not in records: the last heartbeat asked for the regexes to be resolved
    /// after its write (Kafka's executor task, §6.3).
    pub(crate) regex_refresh_due: bool,
    /// Not in records: the outstanding write of this group's records, if any;
    /// answers about the group wait for it.
    pub(crate) barrier: Option<crate::core::WriteId>,
    /// Not in records: when the group came into this core (created, or
    /// loaded). The retention job counts an empty group's offsets from it.
    pub(crate) created_ms: i64,
    /// Not in records: the metadata replayed last, whose common fields the
    /// next member shares when equal.
    pub(crate) last_meta: MemberMeta,
}

impl Keyed for ConsumerMember {
    fn id(&self) -> &Arc<str> {
        &self.id
    }
}

impl ModernMember for ConsumerMember {
    fn member_epoch(&self) -> i32 {
        self.member_epoch
    }

    fn is_stable(&self) -> bool {
        self.state == ConsumerMemberState::Stable
    }
}

impl ConsumerGroup {
    pub(crate) fn new(id: Arc<str>, now_ms: i64) -> ConsumerGroup {
        ConsumerGroup { id, refresh_needed: true, created_ms: now_ms, ..ConsumerGroup::default() }
    }

    /// `ConsumerGroup.maybeUpdateGroupState`.
    pub(crate) fn state(&self) -> ConsumerGroupState {
        match self.modern.state() {
            ModernState::Empty => ConsumerGroupState::Empty,
            ModernState::Assigning => ConsumerGroupState::Assigning,
            ModernState::Reconciling => ConsumerGroupState::Reconciling,
            ModernState::Stable => ConsumerGroupState::Stable,
        }
    }

    /// The member's target, empty when none is recorded.
    pub(crate) fn target(&self, member: &str) -> &Held {
        self.modern.target(member)
    }

    /// `ConsumerGroup.subscriptionType`, from the members as they are now.
    pub(crate) fn subscription_type(&self) -> group_assignors::server::SubscriptionType {
        super::topics::subscription_type(self)
    }

    /// When the group's regexes were last resolved (they are resolved together),
    /// `None` when none is (`lastResolvedRegularExpressionRefreshTimeMs`).
    pub(crate) fn regexes_resolved_at(&self) -> Option<i64> {
        self.regexes.values().map(|r| r.timestamp_ms).max()
    }

    /// The image version of the last resolution, 0 when none is
    /// (`lastResolvedRegularExpressionVersion`).
    pub(crate) fn regexes_image_version(&self) -> i64 {
        self.regexes.values().map(|r| r.version).max().unwrap_or(0)
    }

    /// True when no member other than `except` uses `regex`.
    pub(crate) fn regex_unused_by_others(&self, regex: &str, except: &str) -> bool {
        !self.modern.members.values_any_order().any(|m| *m.id != *except && m.regex() == Some(regex))
    }

    /// True when partition `p` of `topic` may go to `member`: nobody owns it, or
    /// only `member` itself as a partition it is revoking (KAFKA-19449).
    pub(crate) fn is_free_for(&self, topic: TopicId, p: i32, member: &ConsumerMember) -> bool {
        !self.partition_epochs.contains(topic, p)
            || assignment::contains(&member.pending_revocation, topic, p)
    }

    /// Applies one record (`GroupMetadataManager.replay`). Group-level deletion
    /// (the metadata tombstone) is the caller's: it removes the group. With
    /// `undo`, every change it makes is logged there, oldest first.
    pub(crate) fn replay(&mut self, record: &ModernGroupRecord, mut undo: Option<&mut Vec<Change>>) {
        match record {
            ModernGroupRecord::GroupMetadata { value, .. } => {
                if let Some(v) = value {
                    let change = self.modern.replay_group_epoch(v.epoch, v.metadata_hash);
                    log(&mut undo, || Change::Modern(change));
                }
            }
            ModernGroupRecord::MemberMetadata { member_id, value, .. } => {
                self.log_member(&mut undo, member_id);
                match value {
                    Some(v) => {
                        let member = self
                            .modern
                            .members
                            .get_or_insert_with(member_id, || ConsumerMember::new(member_id.clone()));
                        let old = member.meta.instance_id().map(str::to_owned);
                        let had_regex = usize::from(member.regex().is_some());
                        self.subscribed_names
                            .replace(&member.meta.subscribed_topic_names, &v.subscribed_topic_names);
                        member.meta = MemberMeta::new(v, &member.meta, &self.last_meta);
                        self.last_meta = member.meta.common();
                        let has_regex = usize::from(member.regex().is_some());
                        if let Some(old) = old
                            && self.modern.static_members.get(&old) == Some(member_id)
                        {
                            self.set_static(&mut undo, old, None);
                        }
                        if has_regex != had_regex {
                            self.set_regex_subscribers(
                                &mut undo,
                                self.regex_subscribers + has_regex - had_regex,
                            );
                        }
                        if let Some(instance) = &v.instance_id {
                            self.set_static(&mut undo, instance.clone(), Some(member_id.clone()));
                        }
                    }
                    None => {
                        if let Some(member) = self.modern.members.remove(member_id) {
                            self.subscribed_names.remove(&member.meta.subscribed_topic_names);
                            self.release(&mut undo, &member);
                            if member.regex().is_some() {
                                self.set_regex_subscribers(&mut undo, self.regex_subscribers - 1);
                            }
                            if let Some(instance) = member.meta.instance_id()
                                && self.modern.static_members.get(instance) == Some(member_id)
                            {
                                self.set_static(&mut undo, instance.to_owned(), None);
                            }
                        }
                    }
                }
            }
            ModernGroupRecord::TargetAssignmentMetadata { value, .. } => {
                let (epoch, at) = value.map_or((-1, 0), |m| (m.assignment_epoch, m.assignment_timestamp_ms));
                let change = self.modern.replay_assignment_metadata(epoch, at);
                log(&mut undo, || Change::Modern(change));
            }
            ModernGroupRecord::TargetAssignmentMember { member_id, value, .. } => {
                let assigned = self.modern.members.get(member_id).map(|m| &m.assigned);
                let target = value.as_deref().map(|v| Held::like(assignment::from_wire(v), assigned));
                let change = self.modern.replay_target(member_id, target);
                log(&mut undo, || Change::Modern(change));
            }
            ModernGroupRecord::CurrentMemberAssignment { member_id, value, .. } => {
                self.log_member(&mut undo, member_id);
                let mut member = self
                    .modern
                    .members
                    .remove(member_id)
                    .unwrap_or_else(|| ConsumerMember::new(member_id.clone()));
                self.release(&mut undo, &member);
                match value {
                    Some(v) => {
                        member.member_epoch = v.member_epoch;
                        member.previous_member_epoch = v.previous_member_epoch;
                        member.state = v.state;
                        let target = self.modern.targets.get(member_id);
                        let (assigned, assigned_epochs) =
                            epochs::from_record(&v.assigned, &v.assigned_epochs);
                        let (pending, pending_epochs) =
                            epochs::from_record(&v.pending_revocation, &v.pending_revocation_epochs);
                        member.assigned = Held::like(assigned, target);
                        member.pending_revocation = Held::from(pending);
                        member.assigned_epochs = assigned_epochs;
                        member.pending_revocation_epochs = pending_epochs;
                    }
                    None => {
                        member.member_epoch = -1;
                        member.previous_member_epoch = -1;
                        member.state = ConsumerMemberState::Stable;
                        member.assigned = Held::NONE;
                        member.pending_revocation = Held::NONE;
                        member.assigned_epochs = AssignmentEpochs::default();
                        member.pending_revocation_epochs = AssignmentEpochs::default();
                    }
                }
                self.claim(&mut undo, &member);
                self.modern.members.insert(member_id.clone(), member);
            }
            ModernGroupRecord::RegularExpression { regex, value, .. } => {
                let prev = match value {
                    Some(v) => self.regexes.insert(
                        regex.clone(),
                        ResolvedRegex {
                            topics: v.topics.clone(),
                            version: v.version,
                            timestamp_ms: v.timestamp_ms,
                        },
                    ),
                    None => self.regexes.remove(regex),
                };
                log(&mut undo, || Change::Regex { regex: regex.clone(), prev });
            }
            // Another kind's records (the core routes them to their own kind).
            ModernGroupRecord::ShareMemberMetadata { .. }
            | ModernGroupRecord::ShareGroupMetadata { .. }
            | ModernGroupRecord::ShareTargetAssignmentMetadata { .. }
            | ModernGroupRecord::ShareTargetAssignmentMember { .. }
            | ModernGroupRecord::ShareCurrentMemberAssignment { .. }
            | ModernGroupRecord::ShareStatePartitionMetadata { .. }
            | ModernGroupRecord::ShareState { .. } => {}
        }
    }

    /// Logs member `id` as it is, before a change to it.
    fn log_member(&self, undo: &mut Option<&mut Vec<Change>>, id: &Arc<str>) {
        log(undo, || Change::Member {
            id: id.clone(),
            prev: self.modern.members.get(id).map(|m| Box::new(m.clone())),
        });
    }

    /// Logs member `id` as it is, then lends it to change fields records do
    /// not carry (its deadlines).
    pub(crate) fn member_mut(
        &mut self,
        undo: Option<&mut Vec<Change>>,
        id: &Arc<str>,
    ) -> Option<&mut ConsumerMember> {
        // Looked up twice only when the change is logged: a heartbeat that
        // writes nothing (the common one) pays one lookup.
        if let Some(undo) = undo
            && let Some(member) = self.modern.members.get(id)
        {
            undo.push(Change::Member { id: id.clone(), prev: Some(Box::new(member.clone())) });
        }
        self.modern.members.get_mut(id)
    }

    /// Sets the refresh flags (not in records), logging what they were.
    pub(crate) fn set_flags(
        &mut self,
        undo: Option<&mut Vec<Change>>,
        refresh_needed: bool,
        regex_refresh_due: bool,
    ) {
        if let Some(undo) = undo {
            undo.push(Change::Flags {
                refresh_needed: self.refresh_needed,
                regex_refresh_due: self.regex_refresh_due,
            });
        }
        self.refresh_needed = refresh_needed;
        self.regex_refresh_due = regex_refresh_due;
    }

    fn set_static(
        &mut self,
        undo: &mut Option<&mut Vec<Change>>,
        instance: String,
        member: Option<Arc<str>>,
    ) {
        let prev = match member {
            Some(member) => self.modern.static_members.insert(instance.clone(), member),
            None => self.modern.static_members.remove(&instance),
        };
        log(undo, || Change::Static { instance, prev });
    }

    fn set_regex_subscribers(&mut self, undo: &mut Option<&mut Vec<Change>>, count: usize) {
        log(undo, || Change::RegexSubscribers(self.regex_subscribers));
        self.regex_subscribers = count;
    }

    /// Undoes `changes` (logged oldest first), newest first: the group is then
    /// exactly as it was before the first of them.
    pub(crate) fn undo(&mut self, changes: Vec<Change>) {
        for change in changes.into_iter().rev() {
            match change {
                Change::Modern(change) => self.modern.undo(change),
                Change::Member { id, prev } => {
                    // The counts follow the members: the subscription the
                    // member has now goes, the one it had comes back.
                    let now = self.modern.members.remove(&id);
                    self.subscribed_names.replace(subscription(now.as_ref()), subscription(prev.as_deref()));
                    if let Some(member) = prev {
                        self.modern.members.insert(id, *member);
                    }
                }
                Change::Static { instance, prev } => match prev {
                    Some(member) => {
                        self.modern.static_members.insert(instance, member);
                    }
                    None => {
                        self.modern.static_members.remove(&instance);
                    }
                },
                Change::PartitionEpoch { partition, prev } => match prev {
                    Some(epoch) => {
                        self.partition_epochs.insert(partition, epoch);
                    }
                    None => {
                        self.partition_epochs.remove(partition);
                    }
                },
                Change::RegexSubscribers(count) => self.regex_subscribers = count,
                Change::Regex { regex, prev } => match prev {
                    Some(resolved) => {
                        self.regexes.insert(regex, resolved);
                    }
                    None => {
                        self.regexes.remove(&regex);
                    }
                },
                Change::Flags { refresh_needed, regex_refresh_due } => {
                    self.refresh_needed = refresh_needed;
                    self.regex_refresh_due = regex_refresh_due;
                }
            }
        }
    }

    /// Frees the partitions `member` owns, where it is still their recorded owner
    /// (KAFKA-19862: a mismatch is tolerated; a later owner keeps its claim).
    fn release(&mut self, undo: &mut Option<&mut Vec<Change>>, member: &ConsumerMember) {
        for (t, p) in assignment::iter(&member.assigned).chain(assignment::iter(&member.pending_revocation)) {
            if self.partition_epochs.get(t, p) == Some(member.member_epoch) {
                let prev = self.partition_epochs.remove((t, p));
                log(undo, || Change::PartitionEpoch { partition: (t, p), prev });
            }
        }
    }

    /// Records `member` as the owner of what it holds; a higher epoch overwrites.
    fn claim(&mut self, undo: &mut Option<&mut Vec<Change>>, member: &ConsumerMember) {
        if member.member_epoch < 0 && member.member_epoch != -2 {
            return;
        }
        for (t, p) in assignment::iter(&member.assigned).chain(assignment::iter(&member.pending_revocation)) {
            let prev = self.partition_epochs.insert((t, p), member.member_epoch);
            log(undo, || Change::PartitionEpoch { partition: (t, p), prev });
        }
    }
}

/// The names `member` subscribes to; none for no member.
fn subscription(member: Option<&ConsumerMember>) -> &[String] {
    member.map_or(&[], |m| &m.meta.subscribed_topic_names)
}

/// Logs the change `make` builds, when changes are logged.
fn log(undo: &mut Option<&mut Vec<Change>>, make: impl FnOnce() -> Change) {
    if let Some(undo) = undo.as_deref_mut() {
        undo.push(make());
    }
}

#[cfg(test)]
mod tests {
    use group_offsets::{ConsumerGroupMetadataValue, ConsumerMemberMetadataValue, RegularExpressionValue};
    use group_types::TopicIdPartitions;
    use proptest::prelude::*;

    use super::*;

    /// Everything a replay can change, in an order that does not depend on
    /// hashing (the partition owners are a hash map).
    fn fingerprint(cg: &ConsumerGroup) -> String {
        let mut owners: Vec<_> = cg.partition_epochs.iter().map(|((t, p), v)| (t.0, p, v)).collect();
        owners.sort_unstable();
        format!(
            "{:?} {:?} {} {:?} {} {} {:?}",
            cg.modern,
            cg.regexes,
            cg.regex_subscribers,
            owners,
            cg.refresh_needed,
            cg.regex_refresh_due,
            cg.barrier
        )
    }

    fn parts(spec: &[(u8, i32)]) -> Vec<TopicIdPartitions> {
        spec.iter()
            .map(|(t, p)| TopicIdPartitions { topic_id: TopicId([*t; 16]), partitions: vec![*p] })
            .collect()
    }

    /// One record over a small world: 3 members, 2 instance ids, 2 regexes,
    /// 2 topics of 2 partitions; tombstones included.
    fn record() -> impl Strategy<Value = ModernGroupRecord> {
        let g: Arc<str> = Arc::from("g");
        let member = (0..3u8).prop_map(|m| Arc::<str>::from(format!("m{m}")));
        let partition = (1..3u8, 0..2i32);
        let g1 = g.clone();
        let g2 = g.clone();
        let g3 = g.clone();
        let g4 = g.clone();
        let g5 = g.clone();
        prop_oneof![
            (0..5i32, any::<u64>()).prop_map(move |(epoch, metadata_hash)| {
                ModernGroupRecord::GroupMetadata {
                    group_id: g.clone(),
                    value: Some(ConsumerGroupMetadataValue { epoch, metadata_hash }),
                }
            }),
            (
                member.clone(),
                proptest::option::of((proptest::option::of(0..2u8), proptest::option::of(0..2u8)))
            )
                .prop_map(move |(member_id, value)| ModernGroupRecord::MemberMetadata {
                    group_id: g1.clone(),
                    member_id,
                    value: value.map(|(instance, regex)| {
                        Box::new(ConsumerMemberMetadataValue {
                            instance_id: instance.map(|i| format!("i{i}")),
                            subscribed_topic_regex: regex.map(|r| format!("r{r}")),
                            ..ConsumerMemberMetadataValue::default()
                        })
                    }),
                }),
            proptest::option::of(0..5i32).prop_map(move |value| {
                let value = value.map(|e| group_offsets::TargetAssignmentMetadataValue::new(e, 0));
                ModernGroupRecord::TargetAssignmentMetadata { group_id: g2.clone(), value }
            }),
            (member.clone(), proptest::option::of(proptest::collection::vec(partition.clone(), 0..3)))
                .prop_map(move |(member_id, value)| ModernGroupRecord::TargetAssignmentMember {
                    group_id: g3.clone(),
                    member_id,
                    value: value.map(|v| parts(&v)),
                }),
            (
                member,
                proptest::option::of((
                    -2..5i32,
                    proptest::collection::vec(partition.clone(), 0..3),
                    proptest::collection::vec(partition, 0..2),
                    0..3i32,
                ))
            )
                .prop_map(move |(member_id, value)| {
                    ModernGroupRecord::CurrentMemberAssignment {
                        group_id: g4.clone(),
                        member_id,
                        value: value.map(|(epoch, assigned, pending, older)| CurrentMemberAssignmentValue {
                            member_epoch: epoch,
                            previous_member_epoch: epoch - 1,
                            state: ConsumerMemberState::Stable,
                            // The first partition listed was assigned `older` epochs before.
                            assigned_epochs: AssignmentEpochs::from_epochs(
                                (0..assigned.len()).map(|i| if i == 0 { epoch - older } else { epoch }),
                            ),
                            pending_revocation_epochs: AssignmentEpochs::from_epochs(
                                pending.iter().map(|_| epoch - 1),
                            ),
                            assigned: parts(&assigned),
                            pending_revocation: parts(&pending),
                        }),
                    }
                }),
            ((0..2u8), proptest::option::of(0..3i64)).prop_map(move |(r, value)| {
                ModernGroupRecord::RegularExpression {
                    group_id: g5.clone(),
                    regex: Arc::from(format!("r{r}")),
                    value: value.map(|v| RegularExpressionValue {
                        topics: vec![format!("t{v}")],
                        version: v,
                        timestamp_ms: v,
                    }),
                }
            }),
        ]
    }

    /// A member at its target holds one copy of its partitions, whichever of
    /// the two records comes first.
    #[test]
    fn a_settled_member_shares_its_target() {
        let id: Arc<str> = Arc::from("m");
        let target = ModernGroupRecord::TargetAssignmentMember {
            group_id: Arc::from("g"),
            member_id: id.clone(),
            value: Some(parts(&[(1, 0), (1, 1)])),
        };
        let current = ModernGroupRecord::CurrentMemberAssignment {
            group_id: Arc::from("g"),
            member_id: id.clone(),
            value: Some(CurrentMemberAssignmentValue {
                member_epoch: 1,
                previous_member_epoch: 0,
                state: ConsumerMemberState::Stable,
                assigned: parts(&[(1, 1), (1, 0)]),
                pending_revocation: Vec::new(),
                assigned_epochs: AssignmentEpochs::Same(1),
                pending_revocation_epochs: AssignmentEpochs::default(),
            }),
        };
        for order in [[&target, &current], [&current, &target]] {
            let mut cg = ConsumerGroup::new(Arc::from("g"), 0);
            for r in order {
                cg.replay(r, None);
            }
            let member = cg.modern.members.get(&id).expect("a member");
            assert!(Held::shares(&member.assigned, cg.target(&id)), "{order:?}");
        }
    }

    proptest! {
        /// Partition owners are set, read and freed as one flat map of
        /// (topic, partition) would; no emptied topic lingers.
        #[test]
        fn partition_epochs_act_as_a_flat_map(ops in proptest::collection::vec((any::<bool>(), 1..4u8, 0..4i32, 0..5i32), 0..60)) {
            let mut epochs = PartitionEpochs::default();
            let mut model: std::collections::BTreeMap<(TopicId, i32), i32> = std::collections::BTreeMap::new();
            for (set, t, p, epoch) in ops {
                let key = (TopicId([t; 16]), p);
                if set {
                    prop_assert_eq!(epochs.insert(key, epoch), model.insert(key, epoch));
                } else {
                    prop_assert_eq!(epochs.remove(key), model.remove(&key));
                }
                for t in 1..4u8 {
                    for p in 0..4 {
                        let key = (TopicId([t; 16]), p);
                        prop_assert_eq!(epochs.get(key.0, p), model.get(&key).copied());
                        prop_assert_eq!(epochs.contains(key.0, p), model.contains_key(&key));
                    }
                }
                let mut listed: Vec<_> = epochs.iter().collect();
                listed.sort_unstable();
                prop_assert_eq!(listed, model.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>());
                prop_assert!(epochs.0.values().all(|ps| !ps.is_empty()), "no empty topic is kept");
            }
        }

        /// Whatever a group went through, undoing what a run of records logged
        /// gives back exactly the group before that run: no copy of the group
        /// is needed to revert a failed write.
        #[test]
        fn undoing_the_logged_changes_restores_the_group_exactly(
            history in proptest::collection::vec(record(), 0..25),
            change in proptest::collection::vec(record(), 1..25),
            flags in (any::<bool>(), any::<bool>()),
        ) {
            let mut cg = ConsumerGroup::new(Arc::from("g"), 0);
            for r in &history {
                cg.replay(r, None);
            }
            let before = fingerprint(&cg);
            let mut undo = Vec::new();
            for r in &change {
                cg.replay(r, Some(&mut undo));
            }
            cg.set_flags(Some(&mut undo), flags.0, flags.1);
            let first = cg.modern.members.keys().next().cloned();
            if let Some(id) = first
                && let Some(m) = cg.member_mut(Some(&mut undo), &id)
            {
                m.session_deadline = Some(42);
            }
            cg.undo(undo);
            prop_assert_eq!(fingerprint(&cg), before);
        }

        /// Replaying with or without a log changes the group the same way.
        #[test]
        fn logging_changes_nothing_but_the_log(records in proptest::collection::vec(record(), 0..30)) {
            let mut plain = ConsumerGroup::new(Arc::from("g"), 0);
            let mut logged = ConsumerGroup::new(Arc::from("g"), 0);
            let mut undo = Vec::new();
            for r in &records {
                plain.replay(r, None);
                logged.replay(r, Some(&mut undo));
            }
            prop_assert_eq!(fingerprint(&plain), fingerprint(&logged));
            prop_assert_eq!(undo.is_empty(), records.is_empty() || records.iter().all(|r| matches!(
                r, ModernGroupRecord::GroupMetadata { value: None, .. }
            )));
        }
    }
}
