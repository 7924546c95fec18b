//! A consumer group's state as its records describe it (`ConsumerGroup`,
//! `ConsumerGroupMember`), changed only by [`ConsumerGroup::replay`], as Kafka's
//! `GroupMetadataManager.replay` overloads do: the handlers produce records, the
//! records change the group, and loading a partition is replaying what storage holds.

use std::collections::BTreeMap;
use std::sync::Arc;

use group_offsets::{ConsumerGroupRecord, ConsumerMemberMetadataValue, CurrentMemberAssignmentValue};
use group_types::hash::FastMap;
use group_types::{ConsumerGroupState, ConsumerMemberState, TopicId};

use super::assignment::{self, Assignment};

/// One member of a consumer group.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConsumerMember {
    pub(crate) id: Arc<str>,
    /// What the member sent about itself (its MemberMetadata record's value).
    pub(crate) meta: ConsumerMemberMetadataValue,
    pub(crate) member_epoch: i32,
    pub(crate) previous_member_epoch: i32,
    pub(crate) state: ConsumerMemberState,
    pub(crate) assigned: Assignment,
    pub(crate) pending_revocation: Assignment,
    /// Not in records: the epoch the revocation timer was armed for, if armed,
    /// and when it fires.
    pub(crate) rebalance_timer_epoch: Option<i32>,
    pub(crate) rebalance_deadline: Option<i64>,
    /// Not in records: the session deadline armed, for snapshots.
    pub(crate) session_deadline: Option<i64>,
}

impl ConsumerMember {
    pub(crate) fn new(id: Arc<str>) -> ConsumerMember {
        ConsumerMember { id, ..ConsumerMember::default() }
    }

    /// The regex, `None` when none (`""` is none).
    pub(crate) fn regex(&self) -> Option<&str> {
        self.meta.subscribed_topic_regex.as_deref().filter(|r| !r.is_empty())
    }

    /// True for a member that speaks the classic protocol inside the group.
    pub(crate) fn is_classic(&self) -> bool {
        self.meta.classic.is_some()
    }

    /// The record value of its current assignment.
    pub(crate) fn assignment_value(&self) -> CurrentMemberAssignmentValue {
        CurrentMemberAssignmentValue {
            member_epoch: self.member_epoch,
            previous_member_epoch: self.previous_member_epoch,
            state: self.state,
            assigned: assignment::to_wire(&self.assigned),
            pending_revocation: assignment::to_wire(&self.pending_revocation),
        }
    }
}

/// A regex's resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResolvedRegex {
    pub(crate) topics: Vec<String>,
    pub(crate) version: i64,
    pub(crate) timestamp_ms: i64,
}

/// A KIP-848 consumer group.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConsumerGroup {
    pub(crate) group_epoch: i32,
    pub(crate) metadata_hash: u64,
    pub(crate) assignment_epoch: i32,
    /// By member id: the order the assignors see members in.
    pub(crate) members: BTreeMap<Arc<str>, ConsumerMember>,
    /// Target assignments by member id (entries of ids that left may linger until
    /// their tombstone).
    pub(crate) targets: BTreeMap<Arc<str>, Assignment>,
    /// Instance id to member id.
    pub(crate) static_members: BTreeMap<String, Arc<str>>,
    /// Per partition, the epoch of the member that owns it (assigned or pending
    /// revocation); absent = free (`ConsumerGroup.currentPartitionEpoch`).
    pub(crate) partition_epochs: FastMap<(TopicId, i32), i32>,
    pub(crate) regexes: BTreeMap<Arc<str>, ResolvedRegex>,
    /// How many members subscribe with a regex (kept by `replay`).
    pub(crate) regex_subscribers: usize,
    /// Not in records: the metadata hash must be recomputed at the next heartbeat
    /// (after a load, or a change of a subscribed topic).
    pub(crate) refresh_needed: bool,
    /// Not in records: the last heartbeat asked for the regexes to be resolved
    /// after its write (Kafka's executor task, §6.3).
    pub(crate) regex_refresh_due: bool,
}

impl ConsumerGroup {
    pub(crate) fn new() -> ConsumerGroup {
        ConsumerGroup { refresh_needed: true, ..ConsumerGroup::default() }
    }

    /// `ConsumerGroup.maybeUpdateGroupState`.
    pub(crate) fn state(&self) -> ConsumerGroupState {
        if self.members.is_empty() {
            ConsumerGroupState::Empty
        } else if self.group_epoch > self.assignment_epoch {
            ConsumerGroupState::Assigning
        } else if self
            .members
            .values()
            .any(|m| m.state != ConsumerMemberState::Stable || m.member_epoch != self.assignment_epoch)
        {
            ConsumerGroupState::Reconciling
        } else {
            ConsumerGroupState::Stable
        }
    }

    /// The member's target, empty when none is recorded.
    pub(crate) fn target(&self, member: &str) -> &Assignment {
        static EMPTY: Assignment = Assignment { topics: Vec::new() };
        self.targets.get(member).unwrap_or(&EMPTY)
    }

    /// `ConsumerGroup.subscriptionType`, from the members as they are now.
    pub(crate) fn subscription_type(&self) -> group_assignors::server::SubscriptionType {
        super::topics::subscription_type(self.members.values(), self)
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
        !self.members.values().any(|m| *m.id != *except && m.regex() == Some(regex))
    }

    /// True when partition `p` of `topic` may go to `member`: nobody owns it, or
    /// only `member` itself as a partition it is revoking (KAFKA-19449).
    pub(crate) fn is_free_for(&self, topic: TopicId, p: i32, member: &ConsumerMember) -> bool {
        !self.partition_epochs.contains_key(&(topic, p))
            || assignment::contains(&member.pending_revocation, topic, p)
    }

    /// Applies one record (`GroupMetadataManager.replay`). Group-level deletion
    /// (the metadata tombstone) is the caller's: it removes the group.
    pub(crate) fn replay(&mut self, record: &ConsumerGroupRecord) {
        match record {
            ConsumerGroupRecord::GroupMetadata { value, .. } => {
                if let Some(v) = value {
                    self.group_epoch = v.epoch;
                    self.metadata_hash = v.metadata_hash;
                }
            }
            ConsumerGroupRecord::MemberMetadata { member_id, value, .. } => match value {
                Some(v) => {
                    let member = self
                        .members
                        .entry(member_id.clone())
                        .or_insert_with(|| ConsumerMember::new(member_id.clone()));
                    if let Some(old) = member.meta.instance_id.take()
                        && self.static_members.get(&old) == Some(member_id)
                    {
                        self.static_members.remove(&old);
                    }
                    let had_regex = usize::from(member.regex().is_some());
                    member.meta = (**v).clone();
                    let has_regex = usize::from(member.regex().is_some());
                    self.regex_subscribers = self.regex_subscribers + has_regex - had_regex;
                    if let Some(instance) = &v.instance_id {
                        self.static_members.insert(instance.clone(), member_id.clone());
                    }
                }
                None => {
                    if let Some(member) = self.members.remove(member_id) {
                        self.release(&member);
                        self.regex_subscribers -= usize::from(member.regex().is_some());
                        if let Some(instance) = &member.meta.instance_id
                            && self.static_members.get(instance) == Some(member_id)
                        {
                            self.static_members.remove(instance);
                        }
                    }
                }
            },
            ConsumerGroupRecord::TargetAssignmentMetadata { value, .. } => {
                self.assignment_epoch = value.unwrap_or(-1);
            }
            ConsumerGroupRecord::TargetAssignmentMember { member_id, value, .. } => match value {
                Some(parts) => {
                    self.targets.insert(member_id.clone(), assignment::from_wire(parts));
                }
                None => {
                    self.targets.remove(member_id);
                }
            },
            ConsumerGroupRecord::CurrentMemberAssignment { member_id, value, .. } => {
                let mut member =
                    self.members.remove(member_id).unwrap_or_else(|| ConsumerMember::new(member_id.clone()));
                self.release(&member);
                match value {
                    Some(v) => {
                        member.member_epoch = v.member_epoch;
                        member.previous_member_epoch = v.previous_member_epoch;
                        member.state = v.state;
                        member.assigned = assignment::from_wire(&v.assigned);
                        member.pending_revocation = assignment::from_wire(&v.pending_revocation);
                    }
                    None => {
                        member.member_epoch = -1;
                        member.previous_member_epoch = -1;
                        member.state = ConsumerMemberState::Stable;
                        member.assigned = Assignment::default();
                        member.pending_revocation = Assignment::default();
                    }
                }
                self.claim(&member);
                self.members.insert(member_id.clone(), member);
            }
            ConsumerGroupRecord::RegularExpression { regex, value, .. } => match value {
                Some(v) => {
                    self.regexes.insert(
                        regex.clone(),
                        ResolvedRegex {
                            topics: v.topics.clone(),
                            version: v.version,
                            timestamp_ms: v.timestamp_ms,
                        },
                    );
                }
                None => {
                    self.regexes.remove(regex);
                }
            },
        }
    }

    /// Frees the partitions `member` owns, where it is still their recorded owner
    /// (KAFKA-19862: a mismatch is tolerated; a later owner keeps its claim).
    fn release(&mut self, member: &ConsumerMember) {
        for (t, p) in assignment::iter(&member.assigned).chain(assignment::iter(&member.pending_revocation)) {
            if self.partition_epochs.get(&(t, p)) == Some(&member.member_epoch) {
                self.partition_epochs.remove(&(t, p));
            }
        }
    }

    /// Records `member` as the owner of what it holds; a higher epoch overwrites.
    fn claim(&mut self, member: &ConsumerMember) {
        if member.member_epoch < 0 && member.member_epoch != -2 {
            return;
        }
        for (t, p) in assignment::iter(&member.assigned).chain(assignment::iter(&member.pending_revocation)) {
            self.partition_epochs.insert((t, p), member.member_epoch);
        }
    }
}
