//! What happened to groups during one step, reported as data in [`Effects::events`]
//! so that the core stays free of logging and clocks: the runtime turns each event
//! into a `tracing` event and a metrics count.
//!
//! [`Effects::events`]: crate::Effects::events

use std::fmt;
use std::sync::Arc;

use group_types::{ErrorCode, GroupState};

use crate::core::{Engine, Group};

/// Why a member was removed without asking to leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExpirationReason {
    /// Its session deadline passed without a heartbeat.
    Session,
    /// A new member's first join did not complete within `new_member_join_timeout_ms`.
    NewMemberJoin,
    /// It did not rejoin before the rebalance timeout closed the join phase.
    Join,
    /// It did not send its SyncGroup before the pending-sync deadline (KAFKA-12890).
    Sync,
    /// A member id handed out by a `MEMBER_ID_REQUIRED` answer was never used to join.
    PendingMember,
}

impl ExpirationReason {
    /// A short lowercase name, as the runtime's `tracing` events report it.
    pub const fn as_str(self) -> &'static str {
        match self {
            ExpirationReason::Session => "session",
            ExpirationReason::NewMemberJoin => "new-member-join",
            ExpirationReason::Join => "join",
            ExpirationReason::Sync => "sync",
            ExpirationReason::PendingMember => "pending-member",
        }
    }
}

/// Why a join phase begins: the reasons Kafka's `GroupMetadataManager` passes to
/// `prepareRebalance`, kept as data and formatted only when a rebalance does begin
/// (most calls that could start one find it started already).
#[derive(Debug)]
pub(crate) enum RebalanceReason {
    /// `addMemberThenRebalanceOrCompleteJoin`.
    NewMember { member_id: Arc<str>, instance: Option<String>, client: Option<String> },
    /// `classicGroupJoinExistingMember`: a member rejoins in `state`.
    Rejoin { member_id: Arc<str>, state: GroupState, leader: bool, client: Option<String> },
    /// `updateStaticMemberThenRebalanceOrCompleteJoin` in Stable, the protocol changing.
    StaticProtocolChange { member_id: Arc<str>, instance: String, client: Option<String> },
    /// `updateStaticMemberThenRebalanceOrCompleteJoin` in CompletingRebalance.
    StaticRejoinDuringSync { member_id: Arc<str>, instance: String, client: Option<String> },
    /// `classicGroupLeave`.
    Left { members: Vec<Arc<str>> },
    /// `convertToClassicGroup`: a consumer group became classic when these members
    /// (its last consumer-protocol ones) went.
    Downgraded { members: Vec<Arc<str>> },
    /// `expireClassicGroupMemberHeartbeat`.
    HeartbeatExpired { member_id: Arc<str> },
    /// `expirePendingSync`.
    PendingSyncExpired { members: Vec<Arc<str>> },
    /// The leader's assignment could not be written (`classicGroupSyncToLeader`).
    AssignmentWriteFailed { error: ErrorCode, member_id: Option<Arc<str>> },
    /// Loaded with more members than `group.max.size` (`onLoaded`).
    LoadedOverCapacity { group_id: Arc<str>, members: usize, max: i32 },
}

/// `JoinGroupRequest.joinReason`: what the client said, `not provided` otherwise.
fn client_reason(reason: Option<&str>) -> &str {
    reason.filter(|r| !r.is_empty()).unwrap_or("not provided")
}

fn comma_list(ids: &[Arc<str>]) -> String {
    ids.iter().map(|id| &**id).collect::<Vec<&str>>().join(", ")
}

impl fmt::Display for RebalanceReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RebalanceReason::NewMember { member_id, instance, client } => write!(
                f,
                "Adding new member {member_id} with group instance id {}; client reason: {}",
                instance.as_deref().unwrap_or("null"),
                client_reason(client.as_deref())
            ),
            RebalanceReason::Rejoin { member_id, state, leader, client } => {
                let client = client_reason(client.as_deref());
                match state {
                    GroupState::PreparingRebalance => {
                        write!(
                            f,
                            "Member {member_id} is joining group during {state}; client reason: {client}"
                        )
                    }
                    GroupState::Stable if *leader => {
                        write!(
                            f,
                            "Leader {member_id} re-joining group during {state}; client reason: {client}"
                        )
                    }
                    _ => write!(
                        f,
                        "Updating metadata for member {member_id} during {state}; client reason: {client}"
                    ),
                }
            }
            RebalanceReason::StaticProtocolChange { member_id, instance, client } => write!(
                f,
                "Group's selectedProtocol will change because static member {member_id} with instance id \
                 {instance} joined with change of protocol; client reason: {}",
                client_reason(client.as_deref())
            ),
            RebalanceReason::StaticRejoinDuringSync { member_id, instance, client } => write!(
                f,
                "Updating metadata for static member {member_id} with instance id {instance}; client reason: {}",
                client_reason(client.as_deref())
            ),
            RebalanceReason::Left { members } => {
                write!(f, "explicit `LeaveGroup` request for ({}) members.", comma_list(members))
            }
            RebalanceReason::Downgraded { members } => write!(
                f,
                "the consumer group was converted to a classic group when ({}) members left.",
                comma_list(members)
            ),
            RebalanceReason::HeartbeatExpired { member_id } => {
                write!(f, "removing member {member_id} on heartbeat expiration.")
            }
            RebalanceReason::PendingSyncExpired { members } => {
                write!(f, "Removing [{}] on pending sync request expiration", comma_list(members))
            }
            RebalanceReason::AssignmentWriteFailed { error, member_id } => write!(
                f,
                "Error {} when storing group assignment during SyncGroup (member: {}).",
                error.name(),
                member_id.as_deref().unwrap_or("")
            ),
            RebalanceReason::LoadedOverCapacity { group_id, members, max } => write!(
                f,
                "Freshly-loaded group {group_id} (size {members}) is over capacity {max}. Rebalancing in \
                 order to give a chance for consumers to commit offsets"
            ),
        }
    }
}

/// Something that happened to a group during one step of the core.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GroupEvent {
    /// The group moved from one state to another.
    StateChanged {
        /// The group.
        group_id: Arc<str>,
        /// The state it left.
        from: GroupState,
        /// The state it entered.
        to: GroupState,
        /// Its generation after the move.
        generation_id: i32,
    },
    /// A join phase began (the group entered PreparingRebalance).
    RebalanceStarted {
        /// The group.
        group_id: Arc<str>,
        /// The generation being replaced.
        generation_id: i32,
        /// Members at the start of the join phase.
        members: usize,
        /// Why, in the words of Kafka's `GroupMetadataManager.prepareRebalance`
        /// reasons ("Adding new member ... ; client reason: ...", "removing member
        /// ... on heartbeat expiration.", ...).
        reason: String,
    },
    /// A join phase completed with members: a new generation, its leader elected, every
    /// parked JoinGroup answered (Kafka's "Stabilized group"). The group now waits for
    /// the leader's SyncGroup.
    RebalanceCompleted {
        /// The group.
        group_id: Arc<str>,
        /// The new generation.
        generation_id: i32,
        /// Members of the new generation.
        members: usize,
        /// The new generation's leader.
        leader_id: Option<Arc<str>>,
        /// The protocol the members agreed on.
        protocol_name: Option<String>,
    },
    /// The leader's assignment is durable and handed out: the generation is
    /// complete and the group Stable.
    GenerationStable {
        /// The group.
        group_id: Arc<str>,
        /// The generation now in force.
        generation_id: i32,
        /// Its members.
        members: usize,
        /// Its leader.
        leader_id: Option<Arc<str>>,
        /// The protocol its members use.
        protocol_name: Option<String>,
    },
    /// A member (or a pending member id) left through LeaveGroup.
    MemberLeft {
        /// The group.
        group_id: Arc<str>,
        /// The member id.
        member_id: Arc<str>,
        /// Its static instance id, if it had one.
        group_instance_id: Option<String>,
        /// The reason the client gave, `not provided` without one (as Kafka logs it).
        reason: String,
    },
    /// A member was removed by a deadline.
    MemberExpired {
        /// The group.
        group_id: Arc<str>,
        /// The member (or pending member) id.
        member_id: Arc<str>,
        /// Which deadline passed.
        reason: ExpirationReason,
    },
    /// A static member was replaced by a new instance joining with the same
    /// `group.instance.id`: the old member id is fenced (`FENCED_INSTANCE_ID`).
    StaticMemberFenced {
        /// The group.
        group_id: Arc<str>,
        /// The static instance id.
        group_instance_id: String,
        /// The fenced member id.
        old_member_id: Arc<str>,
        /// The id the new instance was given.
        new_member_id: Arc<str>,
    },
    /// DeleteGroups removed a group (reported once its tombstones are durable).
    GroupDeleted {
        /// The group.
        group_id: Arc<str>,
        /// Committed offsets removed with it.
        offsets: usize,
    },
    /// The retention job removed committed offsets (and possibly the group with them).
    OffsetsExpired {
        /// The group.
        group_id: Arc<str>,
        /// Partitions whose offsets were removed.
        partitions: usize,
        /// True when the group, empty and without offsets, was removed too.
        group_removed: bool,
    },
    /// A consumer-protocol member joined a consumer group (KIP-848).
    ConsumerMemberJoined {
        /// The group.
        group_id: Arc<str>,
        /// The member id.
        member_id: Arc<str>,
    },
    /// A member was removed from a consumer group.
    ConsumerMemberRemoved {
        /// The group.
        group_id: Arc<str>,
        /// The member id.
        member_id: Arc<str>,
        /// Why: `left`, `session expired`, `revocation timeout`, `removed`.
        reason: &'static str,
    },
    /// A consumer group's epoch moved (a member came or went, a subscription or
    /// a subscribed topic changed): a new target assignment follows.
    ConsumerGroupEpochBumped {
        /// The group.
        group_id: Arc<str>,
        /// The new group epoch.
        epoch: i32,
    },
    /// A consumer group's target assignment was computed for an epoch.
    ConsumerTargetAssignment {
        /// The group.
        group_id: Arc<str>,
        /// The assignment epoch.
        epoch: i32,
    },
    /// A consumer group member's current assignment changed (Kafka's "new
    /// assignment state" line): its epoch, state and partitions.
    ConsumerMemberAssignment {
        /// The group.
        group_id: Arc<str>,
        /// The member id.
        member_id: Arc<str>,
        /// Its member epoch.
        member_epoch: i32,
        /// Its epoch before.
        previous_member_epoch: i32,
        /// Its reconciliation state.
        state: group_types::ConsumerMemberState,
        /// Partitions it owns.
        assigned: usize,
        /// Partitions it must give back.
        pending_revocation: usize,
    },
    /// A write failed: the core went back to the state before it, and every
    /// request that depended on it (or on a later write, voided with it) was
    /// answered with the error.
    WriteFailed {
        /// The append error storage reported (before the mapping clients see).
        error: ErrorCode,
        /// Writes voided: the failed one and every later one of the partition.
        writes: usize,
    },
}

impl Engine {
    /// Moves `g` to `to` and reports it, with the generation it completes.
    /// PreparingRebalance is entered through [`transition_to_preparing`](Self::transition_to_preparing).
    pub(crate) fn transition(&mut self, g: &mut Group, to: GroupState) {
        self.transition_because(g, to, None);
    }

    /// Moves `g` to PreparingRebalance and reports the rebalance it starts, and why.
    pub(crate) fn transition_to_preparing(&mut self, g: &mut Group, reason: RebalanceReason) {
        self.transition_because(g, GroupState::PreparingRebalance, Some(reason));
    }

    fn transition_because(&mut self, g: &mut Group, to: GroupState, reason: Option<RebalanceReason>) {
        let from = g.state;
        g.transition(to, self.now);
        let group_id = g.id.clone();
        if to == GroupState::PreparingRebalance && from != GroupState::PreparingRebalance {
            self.fx.events.push(GroupEvent::RebalanceStarted {
                group_id: group_id.clone(),
                generation_id: g.generation,
                members: g.len(),
                reason: reason.map(|r| r.to_string()).unwrap_or_default(),
            });
        }
        if to == GroupState::CompletingRebalance {
            self.fx.events.push(GroupEvent::RebalanceCompleted {
                group_id: group_id.clone(),
                generation_id: g.generation,
                members: g.len(),
                leader_id: g.leader.clone(),
                protocol_name: g.protocol_name.as_deref().map(str::to_owned),
            });
        }
        if to == GroupState::Stable && from != GroupState::Stable {
            self.fx.events.push(GroupEvent::GenerationStable {
                group_id: group_id.clone(),
                generation_id: g.generation,
                members: g.len(),
                leader_id: g.leader.clone(),
                protocol_name: g.protocol_name.as_deref().map(str::to_owned),
            });
        }
        if from != to {
            self.fx.events.push(GroupEvent::StateChanged { group_id, from, to, generation_id: g.generation });
        }
    }

    /// Reports a member that left through LeaveGroup.
    pub(crate) fn member_left(
        &mut self,
        g: &Group,
        member_id: &Arc<str>,
        group_instance_id: Option<String>,
        reason: Option<&str>,
    ) {
        self.fx.events.push(GroupEvent::MemberLeft {
            group_id: g.id.clone(),
            member_id: member_id.clone(),
            group_instance_id,
            // Kafka's `classicGroupLeave` default, unlike JoinGroup's: an empty
            // reason is kept as given.
            reason: reason.unwrap_or("not provided").to_owned(),
        });
    }

    /// Reports a member removed by a deadline.
    pub(crate) fn member_expired(&mut self, g: &Group, member_id: &Arc<str>, reason: ExpirationReason) {
        self.fx.events.push(GroupEvent::MemberExpired {
            group_id: g.id.clone(),
            member_id: member_id.clone(),
            reason,
        });
    }

    /// Reports a static member fenced by its replacement.
    pub(crate) fn static_member_fenced(
        &mut self,
        g: &Group,
        group_instance_id: &str,
        old_member_id: &Arc<str>,
        new_member_id: &Arc<str>,
    ) {
        self.fx.events.push(GroupEvent::StaticMemberFenced {
            group_id: g.id.clone(),
            group_instance_id: group_instance_id.to_owned(),
            old_member_id: old_member_id.clone(),
            new_member_id: new_member_id.clone(),
        });
    }

    /// Reports a group DeleteGroups removed, once durable.
    pub(crate) fn group_deleted(&mut self, group_id: &Arc<str>, offsets: usize) {
        self.fx.events.push(GroupEvent::GroupDeleted { group_id: group_id.clone(), offsets });
    }

    /// Reports offsets removed by the retention job.
    pub(crate) fn offsets_expired(&mut self, group_id: &Arc<str>, partitions: usize, group_removed: bool) {
        self.fx.events.push(GroupEvent::OffsetsExpired {
            group_id: group_id.clone(),
            partitions,
            group_removed,
        });
    }
}

impl crate::CoordinatorCore {
    /// Whether this core holds group `id`, of any kind.
    pub(crate) fn has_group(&self, id: &str) -> bool {
        self.groups.contains_key(id)
    }

    /// Adds this core's groups (per state) and members to `metrics`.
    pub(crate) fn count_groups(&self, metrics: &mut crate::CoordinatorMetrics) {
        for g in self.groups.values() {
            match g {
                crate::core::GroupKind::Classic(g) => metrics.count_group(g.state, g.len()),
                crate::core::GroupKind::Consumer(g) => {
                    metrics.count_consumer_group(g.state(), g.modern.members.len())
                }
                crate::core::GroupKind::Share(g) => metrics.count_share_group(g.modern.members.len()),
            }
        }
    }
}
