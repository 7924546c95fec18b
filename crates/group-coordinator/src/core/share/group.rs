//! A share group as its records describe it (Kafka's `ShareGroup` and
//! `ShareGroupMember`, and the group's `ShareGroupStatePartitionMetadataInfo`),
//! and [`ShareGroup::replay`], which logs how to undo each change it makes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use group_offsets::{ModernGroupRecord, ShareStatePartitionMetadataValue, ShareTopicPartitions};
use group_types::{ConsumerMemberState, TopicId};

use crate::core::modern::assignment::{self, Held};
use crate::core::modern::{Keyed, ModernChange, ModernGroup, ModernMember, ModernState};
use crate::core::types::WriteId;

/// One member of a share group (`ShareGroupMember`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ShareMember {
    pub(crate) id: Arc<str>,
    pub(crate) member_epoch: i32,
    pub(crate) previous_member_epoch: i32,
    pub(crate) state: ConsumerMemberState,
    pub(crate) rack_id: Option<String>,
    pub(crate) client_id: String,
    pub(crate) client_host: String,
    /// Sorted, no duplicates.
    pub(crate) subscribed_topic_names: Vec<String>,
    /// What it holds: a share member moves to its target at once.
    pub(crate) assigned: Held,
    /// When its session ends (not in its records): a keep-alive moves it
    /// without arming a timer, and the timer that fires early queues itself
    /// again at the moved deadline.
    pub(crate) session_deadline: Option<i64>,
}

impl ShareMember {
    pub(crate) fn new(id: Arc<str>) -> ShareMember {
        ShareMember {
            id,
            member_epoch: 0,
            previous_member_epoch: 0,
            state: ConsumerMemberState::Stable,
            rack_id: None,
            client_id: String::new(),
            client_host: String::new(),
            subscribed_topic_names: Vec::new(),
            assigned: Held::NONE,
            session_deadline: None,
        }
    }

    /// True when it is Stable at `epoch` (`isReconciledTo`).
    pub(crate) fn is_stable_at(&self, epoch: i32) -> bool {
        self.state == ConsumerMemberState::Stable && self.member_epoch == epoch
    }
}

impl Keyed for ShareMember {
    fn id(&self) -> &Arc<str> {
        &self.id
    }
}

impl ModernMember for ShareMember {
    fn member_epoch(&self) -> i32 {
        self.member_epoch
    }

    fn is_stable(&self) -> bool {
        self.state == ConsumerMemberState::Stable
    }
}

/// One topic's share partitions in [`ShareState`] (`InitMapValue`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InitTopic {
    pub(crate) name: String,
    pub(crate) partitions: BTreeSet<i32>,
    /// When the entry was written (its record replayed): an initializing entry
    /// older than `group.share.initialize.retry.interval.ms` is asked again.
    pub(crate) timestamp_ms: i64,
}

/// Which share partitions the share coordinator holds state for
/// (`ShareGroupStatePartitionMetadataInfo`): only initialized ones are assigned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ShareState {
    pub(crate) initializing: BTreeMap<TopicId, InitTopic>,
    pub(crate) initialized: BTreeMap<TopicId, InitTopic>,
    /// Topics whose share state is being deleted, with their names.
    pub(crate) deleting: BTreeMap<TopicId, String>,
}

impl ShareState {
    /// The state a record holds, every entry stamped `now_ms`, as Kafka's replay stamps it.
    fn of(value: &ShareStatePartitionMetadataValue, now_ms: i64) -> ShareState {
        let map = |topics: &[ShareTopicPartitions]| {
            topics
                .iter()
                .map(|t| {
                    let partitions = t.partitions.iter().copied().collect();
                    (t.topic_id, InitTopic { name: t.topic_name.clone(), partitions, timestamp_ms: now_ms })
                })
                .collect()
        };
        ShareState {
            initializing: map(&value.initializing),
            initialized: map(&value.initialized),
            deleting: value.deleting.iter().cloned().collect(),
        }
    }

    /// The record value of this state.
    pub(crate) fn value(&self) -> ShareStatePartitionMetadataValue {
        let list = |m: &BTreeMap<TopicId, InitTopic>| {
            m.iter()
                .map(|(id, t)| ShareTopicPartitions {
                    topic_id: *id,
                    topic_name: t.name.clone(),
                    partitions: t.partitions.iter().copied().collect(),
                })
                .collect()
        };
        ShareStatePartitionMetadataValue {
            initializing: list(&self.initializing),
            initialized: list(&self.initialized),
            deleting: self.deleting.iter().map(|(id, name)| (*id, name.clone())).collect(),
        }
    }

    /// True when partition `p` of `topic` is initialized (assignable).
    pub(crate) fn is_initialized(&self, topic: TopicId, p: i32) -> bool {
        self.initialized.get(&topic).is_some_and(|t| t.partitions.contains(&p))
    }
}

/// How to undo one change a record made to a [`ShareGroup`].
#[derive(Debug, Clone)]
pub(crate) enum ShareChange {
    Modern(ModernChange),
    /// Member `id` was `prev` (`None`: it was not a member).
    Member {
        id: Arc<str>,
        prev: Option<Box<ShareMember>>,
    },
    /// The share state was this.
    State(Option<Box<ShareState>>),
    /// Whether the group's metadata was due to be hashed again.
    Refresh(bool),
}

/// A share group.
#[derive(Debug, Clone, Default)]
pub(crate) struct ShareGroup {
    pub(crate) modern: ModernGroup<ShareMember>,
    /// `None` before the group's first state record.
    pub(crate) share_state: Option<Box<ShareState>>,
    /// The outstanding write of this group's records, if any.
    pub(crate) barrier: Option<WriteId>,
    /// True when the subscribed topics' metadata must be hashed again at the
    /// next heartbeat (a loaded group, a changed image: `requestMetadataRefresh`).
    pub(crate) refresh_needed: bool,
    /// Subscribed topic names with their subscriber counts, kept by replay and
    /// undo (`ShareGroup.subscribedTopicNames`): a heartbeat reads them without
    /// walking the members.
    subscribed: BTreeMap<String, usize>,
    /// Whether some subscribed topic's initialized partitions differ from what
    /// the targets hold (`initializedAssignmentPending`), once asked; forgotten
    /// by every record that could change the answer.
    pending: std::cell::Cell<Option<bool>>,
    /// The metadata image version at which every existing subscribed topic was
    /// found wholly initialized: until a record or the image changes, a
    /// heartbeat has nothing to initialize and need not look.
    initialized_at: std::cell::Cell<Option<i64>>,
}

impl ShareGroup {
    /// A new, empty share group.
    pub(crate) fn new() -> ShareGroup {
        ShareGroup { refresh_needed: true, ..ShareGroup::default() }
    }

    /// `Empty` or `Stable`: a share group has no assigning or reconciling
    /// state to show (`ShareGroup.ShareGroupState`).
    pub(crate) fn state_name(&self) -> &'static str {
        match self.modern.state() {
            ModernState::Empty => "Empty",
            _ => "Stable",
        }
    }

    /// Subscribed topic names with their subscriber counts.
    pub(crate) fn subscribed(&self) -> &BTreeMap<String, usize> {
        &self.subscribed
    }

    /// Subscribed topic names with their subscriber counts, `member` replaced
    /// by `updated` (`computeSubscribedTopicNames`).
    pub(crate) fn subscribed_names(
        &self,
        member: Option<&str>,
        updated: Option<&ShareMember>,
    ) -> BTreeMap<String, usize> {
        let mut names = self.subscribed.clone();
        if let Some(old) = member.and_then(|id| self.modern.members.get(id)) {
            uncount(&mut names, &old.subscribed_topic_names);
        }
        if let Some(m) = updated {
            count(&mut names, &m.subscribed_topic_names);
        }
        names
    }

    /// `initializedAssignmentPending`, remembered until a record changes what it reads.
    pub(crate) fn initialized_assignment_pending(&self, compute: impl FnOnce(&ShareGroup) -> bool) -> bool {
        if let Some(known) = self.pending.get() {
            return known;
        }
        let answer = compute(self);
        self.pending.set(Some(answer));
        answer
    }

    /// True when, at image version `version`, every existing subscribed topic is
    /// known to be wholly initialized.
    pub(crate) fn initialized_at(&self, version: i64) -> bool {
        self.initialized_at.get() == Some(version)
    }

    /// Remembers that at image version `version` every existing subscribed topic
    /// is wholly initialized.
    pub(crate) fn set_initialized_at(&self, version: i64) {
        self.initialized_at.set(Some(version));
    }

    /// Member `id` becomes `next` (`None`: it goes), its subscriptions counted.
    fn set_member(&mut self, id: &Arc<str>, next: Option<ShareMember>) {
        let old = match next {
            Some(m) => {
                count(&mut self.subscribed, &m.subscribed_topic_names);
                self.modern.members.insert(id.clone(), m)
            }
            None => self.modern.members.remove(id),
        };
        if let Some(old) = old {
            uncount(&mut self.subscribed, &old.subscribed_topic_names);
        }
    }

    /// Applies one record (`GroupMetadataManager.replay` for the share records),
    /// at `now_ms` (a state record's entries are stamped with it). Group-level
    /// deletion (the group epoch's tombstone) is the caller's: it removes the
    /// group. With `undo`, every change is logged there, oldest first. Records
    /// of another kind change nothing.
    pub(crate) fn replay(
        &mut self,
        record: &ModernGroupRecord,
        now_ms: i64,
        mut undo: Option<&mut Vec<ShareChange>>,
    ) {
        let mut log = |change: ShareChange| {
            if let Some(undo) = undo.as_deref_mut() {
                undo.push(change);
            }
        };
        match record {
            ModernGroupRecord::ShareGroupMetadata { value: Some(v), .. } => {
                log(ShareChange::Modern(self.modern.replay_group_epoch(v.epoch, v.metadata_hash)));
            }
            ModernGroupRecord::ShareMemberMetadata { member_id, value, .. } => {
                let prev = self.modern.members.get(member_id).cloned().map(Box::new);
                log(ShareChange::Member { id: member_id.clone(), prev });
                let next = value.as_deref().map(|v| {
                    let mut m = self
                        .modern
                        .members
                        .get(member_id)
                        .cloned()
                        .unwrap_or_else(|| ShareMember::new(member_id.clone()));
                    m.rack_id = v.rack_id.clone();
                    m.client_id = v.client_id.clone();
                    m.client_host = v.client_host.clone();
                    m.subscribed_topic_names = v.subscribed_topic_names.clone();
                    m
                });
                self.set_member(member_id, next);
                self.pending.set(None);
                self.initialized_at.set(None);
            }
            ModernGroupRecord::ShareTargetAssignmentMetadata { value, .. } => {
                let (epoch, at) = value.map_or((-1, 0), |m| (m.assignment_epoch, m.assignment_timestamp_ms));
                log(ShareChange::Modern(self.modern.replay_assignment_metadata(epoch, at)));
            }
            ModernGroupRecord::ShareTargetAssignmentMember { member_id, value, .. } => {
                let assigned = self.modern.members.get(member_id).map(|m| &m.assigned);
                let target = value.as_deref().map(|v| Held::like(assignment::from_wire(v), assigned));
                log(ShareChange::Modern(self.modern.replay_target(member_id, target)));
                self.pending.set(None);
            }
            ModernGroupRecord::ShareCurrentMemberAssignment { member_id, value, .. } => {
                let prev = self.modern.members.get(member_id).cloned().map(Box::new);
                log(ShareChange::Member { id: member_id.clone(), prev });
                let target = self.modern.targets.get(member_id).cloned();
                if !self.modern.members.contains_key(member_id) {
                    self.set_member(member_id, Some(ShareMember::new(member_id.clone())));
                }
                let member = self
                    .modern
                    .members
                    .get_mut(member_id)
                    .expect("the member was just made if it was not there");
                match value {
                    Some(v) => {
                        member.member_epoch = v.member_epoch;
                        member.previous_member_epoch = v.previous_member_epoch;
                        member.state = v.state;
                        member.assigned = Held::like(assignment::from_wire(&v.assigned), target.as_ref());
                    }
                    None => {
                        member.member_epoch = -1;
                        member.previous_member_epoch = -1;
                        member.state = ConsumerMemberState::Stable;
                        member.assigned = Held::NONE;
                    }
                }
            }
            ModernGroupRecord::ShareStatePartitionMetadata { value, .. } => {
                let next = value.as_deref().map(|v| Box::new(ShareState::of(v, now_ms)));
                log(ShareChange::State(std::mem::replace(&mut self.share_state, next)));
                self.pending.set(None);
                self.initialized_at.set(None);
            }
            _ => {}
        }
    }

    /// Undoes `changes`, newest first.
    pub(crate) fn undo(&mut self, changes: Vec<ShareChange>) {
        self.pending.set(None);
        self.initialized_at.set(None);
        for change in changes.into_iter().rev() {
            match change {
                ShareChange::Modern(c) => self.modern.undo(c),
                ShareChange::Member { id, prev } => self.set_member(&id, prev.map(|m| *m)),
                ShareChange::State(prev) => self.share_state = prev,
                ShareChange::Refresh(prev) => self.refresh_needed = prev,
            }
        }
    }
}

fn count(names: &mut BTreeMap<String, usize>, topics: &[String]) {
    for t in topics {
        *names.entry(t.clone()).or_default() += 1;
    }
}

fn uncount(names: &mut BTreeMap<String, usize>, topics: &[String]) {
    for t in topics {
        if let Some(n) = names.get_mut(t) {
            *n -= 1;
            if *n == 0 {
                names.remove(t);
            }
        }
    }
}
