//! What happened to groups during one step, reported as data in [`Effects::events`]
//! so that the core stays free of logging and clocks: the runtime turns each event
//! into a `tracing` event and a metrics count.
//!
//! [`Effects::events`]: crate::Effects::events

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
    /// The retention job removed committed offsets (and possibly the group with them).
    OffsetsExpired {
        /// The group.
        group_id: Arc<str>,
        /// Partitions whose offsets were removed.
        partitions: usize,
        /// True when the group, empty and without offsets, was removed too.
        group_removed: bool,
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
    /// Moves `g` to `to` and reports it, with the rebalance it starts or completes.
    pub(crate) fn transition(&mut self, g: &mut Group, to: GroupState) {
        let from = g.state;
        g.transition(to, self.now);
        let group_id = g.id.clone();
        if to == GroupState::PreparingRebalance && from != GroupState::PreparingRebalance {
            self.fx.events.push(GroupEvent::RebalanceStarted {
                group_id: group_id.clone(),
                generation_id: g.generation,
                members: g.len(),
            });
        }
        if to == GroupState::CompletingRebalance {
            self.fx.events.push(GroupEvent::RebalanceCompleted {
                group_id: group_id.clone(),
                generation_id: g.generation,
                members: g.len(),
                leader_id: g.leader.clone(),
                protocol_name: g.protocol_name.clone(),
            });
        }
        if from != to {
            self.fx.events.push(GroupEvent::StateChanged { group_id, from, to, generation_id: g.generation });
        }
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
    /// Adds this core's groups (per state) and members to `metrics`.
    pub(crate) fn count_groups(&self, metrics: &mut crate::CoordinatorMetrics) {
        for g in self.groups.values() {
            metrics.count_group(g.state, g.len());
        }
    }
}
