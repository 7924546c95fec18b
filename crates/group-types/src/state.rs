//! Group and member states of the classic protocol.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The state of a classic group (`kafka-semantics.md` §1).
///
/// Exhaustive on purpose, as are the other state enums here: the coordinator's
/// state machine matches them without a wildcard, so that a state added by a
/// later protocol is a compile error at every transition instead of a silent
/// fall-through. The classic protocol's states are frozen in Kafka; a new
/// protocol brings enums of its own (as KIP-848 did).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GroupState {
    /// No members: new, abandoned, or used only to store offsets.
    Empty,
    /// Join phase: JoinGroups are parked until every member has rejoined.
    PreparingRebalance,
    /// A generation exists; waiting for the leader's SyncGroup.
    CompletingRebalance,
    /// The assignment is persisted and handed out.
    Stable,
    /// Terminal: the group is being removed.
    Dead,
}

impl GroupState {
    /// Every state, in the order Kafka declares them.
    pub const ALL: [GroupState; 5] = [
        GroupState::Empty,
        GroupState::PreparingRebalance,
        GroupState::CompletingRebalance,
        GroupState::Stable,
        GroupState::Dead,
    ];

    /// The name Kafka reports in ListGroups and DescribeGroups.
    pub const fn as_str(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
            GroupState::Dead => "Dead",
        }
    }
}

impl fmt::Display for GroupState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A state name that is not one of Kafka's five.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown group state {0:?}")]
pub struct UnknownGroupState(pub String);

impl FromStr for GroupState {
    type Err = UnknownGroupState;

    /// Case-insensitive, as ListGroups' `states_filter` matches.
    fn from_str(s: &str) -> Result<GroupState, UnknownGroupState> {
        GroupState::ALL
            .into_iter()
            .find(|state| state.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownGroupState(s.to_owned()))
    }
}

/// Where one member stands in the current rebalance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MemberState {
    /// Its JoinGroup is parked at the join barrier.
    Joining,
    /// It has its JoinGroup answer and owes a SyncGroup.
    AwaitingSync,
    /// It holds the current generation's assignment.
    Stable,
    /// It is being removed from the group.
    Leaving,
}

impl fmt::Display for MemberState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemberState::Joining => "Joining",
            MemberState::AwaitingSync => "AwaitingSync",
            MemberState::Stable => "Stable",
            MemberState::Leaving => "Leaving",
        })
    }
}

/// The state of a consumer-protocol group (KIP-848, `kip848-semantics.md` §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConsumerGroupState {
    /// No members.
    Empty,
    /// The group epoch is ahead of the target assignment's.
    Assigning,
    /// Some member is not yet stable at the assignment epoch.
    Reconciling,
    /// Every member owns its target.
    Stable,
}

impl ConsumerGroupState {
    /// The name Kafka reports (`ConsumerGroup.ConsumerGroupState.toString`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ConsumerGroupState::Empty => "Empty",
            ConsumerGroupState::Assigning => "Assigning",
            ConsumerGroupState::Reconciling => "Reconciling",
            ConsumerGroupState::Stable => "Stable",
        }
    }
}

impl fmt::Display for ConsumerGroupState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A consumer-protocol member's reconciliation state, persisted as an `i8`
/// (`modern.MemberState`, §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum ConsumerMemberState {
    /// Owns what it was given for its epoch.
    #[default]
    Stable,
    /// Must give back its pending partitions before moving to a new epoch.
    UnrevokedPartitions,
    /// At the target epoch, waiting for partitions others still own.
    UnreleasedPartitions,
    /// A stored value this version does not know.
    Unknown,
}

impl ConsumerMemberState {
    /// The persisted value.
    pub const fn value(self) -> i8 {
        match self {
            ConsumerMemberState::Stable => 0,
            ConsumerMemberState::UnrevokedPartitions => 1,
            ConsumerMemberState::UnreleasedPartitions => 2,
            ConsumerMemberState::Unknown => 127,
        }
    }

    /// The state for a persisted value; unknown values are [`ConsumerMemberState::Unknown`].
    pub const fn from_value(value: i8) -> ConsumerMemberState {
        match value {
            0 => ConsumerMemberState::Stable,
            1 => ConsumerMemberState::UnrevokedPartitions,
            2 => ConsumerMemberState::UnreleasedPartitions,
            _ => ConsumerMemberState::Unknown,
        }
    }

    /// Kafka's name (`STABLE`, `UNREVOKED_PARTITIONS`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            ConsumerMemberState::Stable => "STABLE",
            ConsumerMemberState::UnrevokedPartitions => "UNREVOKED_PARTITIONS",
            ConsumerMemberState::UnreleasedPartitions => "UNRELEASED_PARTITIONS",
            ConsumerMemberState::Unknown => "UNKNOWN",
        }
    }
}
