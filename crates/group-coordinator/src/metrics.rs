//! Observability: the metrics snapshot, and the runtime's translation of the core's
//! [`GroupEvent`]s into counters and `tracing` events.
//!
//! Counters live in each shard and are bumped under the shard's lock, which the
//! runtime already holds while it applies a step's effects, so the hot path pays no
//! atomic operation and no cross-core traffic; [`GroupCoordinator::metrics`] adds
//! them up. Every `tracing` event has the target `group_coordinator` and costs one
//! cached interest check when no subscriber listens.
//!
//! What operators follow is at info level, with the group id and what identifies
//! the step: `rebalance started` (generation, members, Kafka's reason text),
//! `rebalance completed` (the join phase: new generation, members, leader,
//! protocol), `generation stable` (the same once the leader's assignment is
//! durable), `member left` and `member expired` (member id, reason), `static
//! member fenced`, `group emptied` (generation), `group deleted` (offsets removed),
//! `offsets expired` (partitions, and whether the group went too: then also
//! `group expired`); for consumer groups (KIP-848) `consumer member joined`,
//! `consumer member removed` (reason: left, session expired, revocation
//! timeout), `consumer group epoch bumped`, `consumer group target assignment
//! computed` (epoch) and `consumer member assignment` (Kafka's "new assignment
//! state": epochs, state, partitions assigned and pending revocation).
//! `group state changed` and per-request outcomes (an
//! authorization failure, unknown partitions) are debug; failed writes warn.
//!
//! [`GroupCoordinator::metrics`]: crate::GroupCoordinator::metrics

use std::sync::atomic::{AtomicU64, Ordering};

use group_types::{ConsumerGroupState, ErrorCode, GroupState};

use crate::{ExpirationReason, GroupEvent, LatencySnapshot, Response};

/// Members removed by deadlines, by [`ExpirationReason`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemberExpirations {
    /// Session deadlines that passed without a heartbeat.
    pub session: u64,
    /// New members whose first join did not complete in time.
    pub new_member_join: u64,
    /// Members that did not rejoin before the rebalance timeout.
    pub join: u64,
    /// Members that did not sync before the pending-sync deadline.
    pub sync: u64,
    /// Pending member ids (from `MEMBER_ID_REQUIRED`) never used to join.
    pub pending_member: u64,
}

impl MemberExpirations {
    /// Every expiration, whatever its reason.
    pub fn total(&self) -> u64 {
        self.session + self.new_member_join + self.join + self.sync + self.pending_member
    }

    fn add(&mut self, other: &MemberExpirations) {
        self.session += other.session;
        self.new_member_join += other.new_member_join;
        self.join += other.join;
        self.sync += other.sync;
        self.pending_member += other.pending_member;
    }
}

/// A snapshot of a coordinator's gauges and counters, from
/// [`GroupCoordinator::metrics`](crate::GroupCoordinator::metrics). Counters count
/// since the coordinator was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoordinatorMetrics {
    /// Classic groups in state Empty.
    pub groups_empty: usize,
    /// Classic groups in state PreparingRebalance.
    pub groups_preparing_rebalance: usize,
    /// Classic groups in state CompletingRebalance.
    pub groups_completing_rebalance: usize,
    /// Classic groups in state Stable.
    pub groups_stable: usize,
    /// Members of classic groups (pending member ids excluded).
    pub members: usize,
    /// Consumer groups (KIP-848), by state in the order of
    /// [`CONSUMER_GROUP_STATES`](Self::CONSUMER_GROUP_STATES).
    pub consumer_groups: [usize; 4],
    /// Members of consumer groups, whichever protocol each member speaks.
    pub consumer_members: usize,
    /// Share groups (KIP-932): Empty, then Stable.
    pub share_groups: [usize; 2],
    /// Members of share groups.
    pub share_members: usize,
    /// Join phases begun (a group entering PreparingRebalance).
    pub rebalances_started: u64,
    /// Join phases completed with members (a new generation in CompletingRebalance).
    pub rebalances_completed: u64,
    /// Members removed by deadlines.
    pub member_expirations: MemberExpirations,
    /// Consumer-protocol members that joined consumer groups.
    pub consumer_members_joined: u64,
    /// Members removed from consumer groups (left, expired, fenced).
    pub consumer_members_removed: u64,
    /// Consumer group epochs bumped (each starts a new target assignment: the
    /// consumer protocol's rebalances).
    pub consumer_epoch_bumps: u64,
    /// Requests refused because they would have created a group over
    /// [`max_groups`](crate::CoordinatorConfig::max_groups).
    pub groups_refused: u64,
    /// Members (and pending member ids) that left through LeaveGroup.
    pub members_left: u64,
    /// Static members fenced by a new instance with the same `group.instance.id`.
    pub static_members_fenced: u64,
    /// OffsetCommit requests answered (whatever their outcome).
    pub offset_commits: u64,
    /// Partitions whose offset was committed (answered without error).
    pub offset_commit_partitions: u64,
    /// Partitions whose committed offset the retention job removed.
    pub offsets_expired: u64,
    /// Groups DeleteGroups removed.
    pub groups_deleted: u64,
    /// Groups the retention job removed with their last offsets.
    pub groups_expired: u64,
    /// Writes storage failed (each reverted the partition to its last committed
    /// write; see [`GroupEvent::WriteFailed`](crate::GroupEvent::WriteFailed)).
    pub write_failures: u64,
    /// Requests (or parts of requests) refused by the [`Authorizer`](crate::Authorizer).
    pub authorization_failures: u64,
    /// Partitions of OffsetCommit and OffsetDelete requests answered
    /// `UNKNOWN_TOPIC_OR_PARTITION` because the [`TopicMetadata`](crate::TopicMetadata)
    /// does not know them.
    pub unknown_topic_partitions: u64,
    /// How long storage appends took, from the batch handed to
    /// [`MetadataStore::append`](group_offsets::MetadataStore::append) to its
    /// completion (one measurement per batch, failed ones included).
    pub append_latency: LatencySnapshot,
}

impl CoordinatorMetrics {
    /// The states of a consumer group, in the order of
    /// [`consumer_groups`](Self::consumer_groups).
    pub const CONSUMER_GROUP_STATES: [ConsumerGroupState; 4] = [
        ConsumerGroupState::Empty,
        ConsumerGroupState::Assigning,
        ConsumerGroupState::Reconciling,
        ConsumerGroupState::Stable,
    ];

    /// Number of consumer groups in `state`.
    pub fn consumer_groups_in(&self, state: ConsumerGroupState) -> usize {
        Self::CONSUMER_GROUP_STATES.iter().position(|&s| s == state).map_or(0, |i| self.consumer_groups[i])
    }

    /// Number of classic groups in `state` (Dead groups are not kept, so always 0 for Dead).
    pub fn groups_in(&self, state: GroupState) -> usize {
        match state {
            GroupState::Empty => self.groups_empty,
            GroupState::PreparingRebalance => self.groups_preparing_rebalance,
            GroupState::CompletingRebalance => self.groups_completing_rebalance,
            GroupState::Stable => self.groups_stable,
            GroupState::Dead => 0,
        }
    }

    /// Number of groups held, of any kind, in any state.
    pub fn groups(&self) -> usize {
        self.groups_empty
            + self.groups_preparing_rebalance
            + self.groups_completing_rebalance
            + self.groups_stable
            + self.consumer_groups.iter().sum::<usize>()
            + self.share_groups.iter().sum::<usize>()
    }

    /// Share groups in state `state` (`Empty` or `Stable`; 0 for any other).
    pub fn share_groups_in(&self, state: &str) -> usize {
        match state {
            "Empty" => self.share_groups[0],
            "Stable" => self.share_groups[1],
            _ => 0,
        }
    }

    pub(crate) fn count_share_group(&mut self, members: usize) {
        self.share_groups[usize::from(members > 0)] += 1;
        self.share_members += members;
    }

    pub(crate) fn count_consumer_group(&mut self, state: ConsumerGroupState, members: usize) {
        if let Some(i) = Self::CONSUMER_GROUP_STATES.iter().position(|&s| s == state) {
            self.consumer_groups[i] += 1;
        }
        self.consumer_members += members;
    }

    pub(crate) fn count_group(&mut self, state: GroupState, members: usize) {
        match state {
            GroupState::Empty => self.groups_empty += 1,
            GroupState::PreparingRebalance => self.groups_preparing_rebalance += 1,
            GroupState::CompletingRebalance => self.groups_completing_rebalance += 1,
            GroupState::Stable => self.groups_stable += 1,
            GroupState::Dead => {}
        }
        self.members += members;
    }
}

/// One shard's counters, bumped under the shard's lock.
#[derive(Debug, Default)]
pub(crate) struct ShardCounters {
    rebalances_started: u64,
    rebalances_completed: u64,
    member_expirations: MemberExpirations,
    members_left: u64,
    static_members_fenced: u64,
    consumer_members_joined: u64,
    consumer_members_removed: u64,
    consumer_epoch_bumps: u64,
    groups_refused: u64,
    offset_commits: u64,
    offset_commit_partitions: u64,
    offsets_expired: u64,
    groups_deleted: u64,
    groups_expired: u64,
    write_failures: u64,
}

impl ShardCounters {
    /// A request would have created `group` over `max_groups`: counted, and
    /// logged at debug (the count is what an operator watches; a flood of new
    /// ids must not flood the log).
    pub(crate) fn group_refused(&mut self, group: &str, max_groups: usize) {
        self.groups_refused += 1;
        tracing::debug!(
            target: "group_coordinator",
            group_id = group,
            max_groups,
            "group not created: this coordinator holds group.max.groups groups"
        );
    }

    /// Counts an answer the shard released (commits are counted from their answers,
    /// so the core's commit path carries no extra work).
    pub(crate) fn on_response(&mut self, response: &Response) {
        if let Response::OffsetCommit(r) = response {
            self.offset_commits += 1;
            let ok = r.iter().filter(|&(_, _, code)| code == ErrorCode::None).count();
            self.offset_commit_partitions += ok as u64;
        }
    }

    /// Counts an event and emits it as a `tracing` event.
    pub(crate) fn on_event(&mut self, event: &GroupEvent) {
        match event {
            GroupEvent::StateChanged { group_id, from, to, generation_id } => {
                tracing::debug!(
                    target: "group_coordinator",
                    group_id = %group_id,
                    from = from.as_str(),
                    to = to.as_str(),
                    generation_id,
                    "group state changed"
                );
                // A group only becomes Empty by a join phase that ended without
                // members (the last one left or expired).
                if *to == GroupState::Empty {
                    tracing::info!(target: "group_coordinator", group_id = %group_id, generation_id, "group emptied");
                }
            }
            GroupEvent::RebalanceStarted { group_id, generation_id, members, reason } => {
                self.rebalances_started += 1;
                tracing::info!(
                    target: "group_coordinator",
                    group_id = %group_id,
                    generation_id,
                    members,
                    reason = reason.as_str(),
                    "rebalance started"
                );
            }
            GroupEvent::RebalanceCompleted { group_id, generation_id, members, leader_id, protocol_name }
            | GroupEvent::GenerationStable { group_id, generation_id, members, leader_id, protocol_name } => {
                let what = if matches!(event, GroupEvent::RebalanceCompleted { .. }) {
                    self.rebalances_completed += 1;
                    "rebalance completed"
                } else {
                    "generation stable"
                };
                tracing::info!(
                    target: "group_coordinator",
                    group_id = %group_id,
                    generation_id,
                    members,
                    leader_id = leader_id.as_deref().unwrap_or(""),
                    protocol_name = protocol_name.as_deref().unwrap_or(""),
                    "{what}"
                );
            }
            GroupEvent::MemberLeft { group_id, member_id, group_instance_id, reason } => {
                self.members_left += 1;
                tracing::info!(
                    target: "group_coordinator",
                    group_id = %group_id,
                    member_id = %member_id,
                    group_instance_id = group_instance_id.as_deref().unwrap_or(""),
                    reason = reason.as_str(),
                    "member left"
                );
            }
            GroupEvent::GroupDeleted { group_id, offsets } => {
                self.groups_deleted += 1;
                tracing::info!(target: "group_coordinator", group_id = %group_id, offsets, "group deleted");
            }
            GroupEvent::MemberExpired { group_id, member_id, reason } => {
                let counts = &mut self.member_expirations;
                match reason {
                    ExpirationReason::Session => counts.session += 1,
                    ExpirationReason::NewMemberJoin => counts.new_member_join += 1,
                    ExpirationReason::Join => counts.join += 1,
                    ExpirationReason::Sync => counts.sync += 1,
                    ExpirationReason::PendingMember => counts.pending_member += 1,
                }
                tracing::info!(
                    target: "group_coordinator",
                    group_id = %group_id,
                    member_id = %member_id,
                    reason = reason.as_str(),
                    "member expired"
                );
            }
            GroupEvent::StaticMemberFenced { group_id, group_instance_id, old_member_id, new_member_id } => {
                self.static_members_fenced += 1;
                tracing::info!(
                    target: "group_coordinator",
                    group_id = %group_id,
                    group_instance_id = group_instance_id.as_str(),
                    old_member_id = %old_member_id,
                    new_member_id = %new_member_id,
                    "static member fenced"
                );
            }
            GroupEvent::OffsetsExpired { group_id, partitions, group_removed } => {
                self.offsets_expired += *partitions as u64;
                tracing::info!(
                    target: "group_coordinator",
                    group_id = %group_id,
                    partitions,
                    group_removed,
                    "offsets expired"
                );
                if *group_removed {
                    self.groups_expired += 1;
                    tracing::info!(target: "group_coordinator", group_id = %group_id, "group expired");
                }
            }
            GroupEvent::ConsumerMemberJoined { group_id, member_id } => {
                self.consumer_members_joined += 1;
                tracing::info!(target: "group_coordinator", group_id = %group_id, member_id = %member_id, "consumer member joined");
            }
            GroupEvent::ConsumerMemberRemoved { group_id, member_id, reason } => {
                self.consumer_members_removed += 1;
                tracing::info!(
                    target: "group_coordinator",
                    group_id = %group_id,
                    member_id = %member_id,
                    reason = *reason,
                    "consumer member removed"
                );
            }
            GroupEvent::ConsumerGroupEpochBumped { group_id, epoch } => {
                self.consumer_epoch_bumps += 1;
                tracing::info!(target: "group_coordinator", group_id = %group_id, epoch, "consumer group epoch bumped");
            }
            GroupEvent::ConsumerTargetAssignment { group_id, epoch } => {
                tracing::info!(
                    target: "group_coordinator",
                    group_id = %group_id,
                    epoch,
                    "consumer group target assignment computed"
                );
            }
            GroupEvent::ConsumerMemberAssignment {
                group_id,
                member_id,
                member_epoch,
                previous_member_epoch,
                state,
                assigned,
                pending_revocation,
            } => {
                tracing::info!(
                    target: "group_coordinator",
                    group_id = %group_id,
                    member_id = %member_id,
                    member_epoch,
                    previous_member_epoch,
                    state = state.as_str(),
                    assigned,
                    pending_revocation,
                    "consumer member assignment"
                );
            }
            GroupEvent::WriteFailed { error, writes } => {
                self.write_failures += 1;
                tracing::warn!(
                    target: "group_coordinator",
                    error = error.name(),
                    writes,
                    "write failed: state reverted to the last committed write, dependent requests answered with the error"
                );
            }
        }
    }

    pub(crate) fn add_to(&self, m: &mut CoordinatorMetrics) {
        m.rebalances_started += self.rebalances_started;
        m.rebalances_completed += self.rebalances_completed;
        m.member_expirations.add(&self.member_expirations);
        m.members_left += self.members_left;
        m.static_members_fenced += self.static_members_fenced;
        m.consumer_members_joined += self.consumer_members_joined;
        m.consumer_members_removed += self.consumer_members_removed;
        m.consumer_epoch_bumps += self.consumer_epoch_bumps;
        m.groups_refused += self.groups_refused;
        m.offset_commits += self.offset_commits;
        m.offset_commit_partitions += self.offset_commit_partitions;
        m.offsets_expired += self.offsets_expired;
        m.groups_deleted += self.groups_deleted;
        m.groups_expired += self.groups_expired;
        m.write_failures += self.write_failures;
    }
}

/// Counters kept outside the shards (authorization and the topic check happen
/// before a shard is locked).
#[derive(Debug, Default)]
pub(crate) struct RuntimeCounters {
    authorization_failures: AtomicU64,
    unknown_topic_partitions: AtomicU64,
}

impl RuntimeCounters {
    pub(crate) fn authorization_failed(&self, operation: &'static str, resource: &str) {
        self.authorization_failures.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(target: "group_coordinator", operation, resource, "authorization failed");
    }

    /// Counts the partitions of one request that the topic metadata does not know.
    pub(crate) fn unknown_partitions(&self, partitions: u64) {
        self.unknown_topic_partitions.fetch_add(partitions, Ordering::Relaxed);
        tracing::debug!(target: "group_coordinator", partitions, "unknown topic or partition");
    }

    pub(crate) fn add_to(&self, m: &mut CoordinatorMetrics) {
        m.authorization_failures += self.authorization_failures.load(Ordering::Relaxed);
        m.unknown_topic_partitions += self.unknown_topic_partitions.load(Ordering::Relaxed);
    }
}
