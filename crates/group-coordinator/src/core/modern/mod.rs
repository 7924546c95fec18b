//! What the modern kinds of group (KIP-848 consumer groups today; share and
//! streams groups later) have in common, as Kafka's `ModernGroup`: member
//! epochs, target assignments and the assignment epoch, kept in records.
//! A kind's folder builds on this one; this folder imports no kind.

pub(crate) mod assignment;
mod members;
mod targets;

use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hasher;
use std::sync::Arc;

use self::assignment::Held;
pub(crate) use self::members::{Keyed, Members};
pub(crate) use self::targets::Targets;

/// What a member of any modern group has (Kafka's `ModernGroupMember`): an
/// epoch, and whether it has reconciled its assignment.
pub(crate) trait ModernMember: Keyed {
    /// The member's epoch.
    fn member_epoch(&self) -> i32;
    /// True when the member is Stable (nothing to revoke or to wait for).
    fn is_stable(&self) -> bool;
}

/// The state of a modern group, from its epochs and members
/// (`ConsumerGroup.maybeUpdateGroupState`, the same rule for every modern kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ModernState {
    /// No member.
    Empty,
    /// The group epoch is ahead of the target assignment's.
    Assigning,
    /// Some member has not reached the target assignment yet.
    Reconciling,
    /// Every member is at the target assignment.
    Stable,
}

/// What every modern kind of group holds (Kafka's `ModernGroup`), as its
/// records describe it: the group epoch with the metadata hash it was bumped
/// for, the members, their targets and the target assignment's epoch.
#[derive(Debug, Clone)]
pub(crate) struct ModernGroup<M> {
    pub(crate) group_epoch: i32,
    pub(crate) metadata_hash: u64,
    pub(crate) assignment_epoch: i32,
    /// When the target assignment at `assignment_epoch` was computed (the core's
    /// `now` once the assignor returned), 0 when unknown: KIP-1263's
    /// `AssignmentTimestamp`, which [`can_compute_next_target_assignment`] reads.
    pub(crate) assignment_timestamp_ms: i64,
    /// By member id, listed in id order: the order the assignors see members in.
    pub(crate) members: Members<M>,
    /// Target assignments by member id (entries of ids that left may linger until
    /// their tombstone).
    pub(crate) targets: Targets,
    /// Instance id to member id.
    pub(crate) static_members: BTreeMap<String, Arc<str>>,
}

impl<M> Default for ModernGroup<M> {
    fn default() -> Self {
        ModernGroup {
            group_epoch: 0,
            metadata_hash: 0,
            assignment_epoch: 0,
            assignment_timestamp_ms: 0,
            members: Members::default(),
            targets: Targets::default(),
            static_members: BTreeMap::new(),
        }
    }
}

/// How to undo one change to a [`ModernGroup`]'s group-level records.
#[derive(Debug, Clone)]
pub(crate) enum ModernChange {
    /// The group epoch and metadata hash were these.
    GroupEpoch { epoch: i32, metadata_hash: u64 },
    /// The target assignment's epoch and timestamp were these.
    AssignmentEpoch { epoch: i32, timestamp_ms: i64 },
    /// Member `member`'s target was `prev` (`None`: it had none).
    Target { member: Arc<str>, prev: Option<Held> },
}

impl<M: ModernMember> ModernGroup<M> {
    /// The group's state.
    pub(crate) fn state(&self) -> ModernState {
        if self.members.is_empty() {
            ModernState::Empty
        } else if self.group_epoch > self.assignment_epoch {
            ModernState::Assigning
        } else if self
            .members
            .values_any_order()
            .any(|m| !m.is_stable() || m.member_epoch() != self.assignment_epoch)
        {
            ModernState::Reconciling
        } else {
            ModernState::Stable
        }
    }
}

impl<M> ModernGroup<M> {
    /// The member's target, empty when none is recorded.
    pub(crate) fn target(&self, member: &str) -> &Held {
        static EMPTY: Held = Held::NONE;
        self.targets.get(member).unwrap_or(&EMPTY)
    }

    /// Replays a group epoch record (`GroupMetadata` of any modern kind),
    /// returning how to undo it.
    pub(crate) fn replay_group_epoch(&mut self, epoch: i32, metadata_hash: u64) -> ModernChange {
        let undo = ModernChange::GroupEpoch { epoch: self.group_epoch, metadata_hash: self.metadata_hash };
        self.group_epoch = epoch;
        self.metadata_hash = metadata_hash;
        undo
    }

    /// Replays a target assignment metadata record: its epoch and when it was
    /// computed (`-1` and 0 for its tombstone, as `setTargetAssignmentMetadata`).
    pub(crate) fn replay_assignment_metadata(&mut self, epoch: i32, timestamp_ms: i64) -> ModernChange {
        let undo = ModernChange::AssignmentEpoch {
            epoch: self.assignment_epoch,
            timestamp_ms: self.assignment_timestamp_ms,
        };
        self.assignment_epoch = epoch;
        self.assignment_timestamp_ms = timestamp_ms;
        undo
    }

    /// Replays one member's target assignment record (`None`: its tombstone).
    pub(crate) fn replay_target(&mut self, member: &Arc<str>, target: Option<Held>) -> ModernChange {
        let prev = match target {
            Some(target) => self.targets.insert(member.clone(), target),
            None => self.targets.remove(member),
        };
        ModernChange::Target { member: member.clone(), prev }
    }

    /// Undoes one change.
    pub(crate) fn undo(&mut self, change: ModernChange) {
        match change {
            ModernChange::GroupEpoch { epoch, metadata_hash } => {
                self.group_epoch = epoch;
                self.metadata_hash = metadata_hash;
            }
            ModernChange::AssignmentEpoch { epoch, timestamp_ms } => {
                self.assignment_epoch = epoch;
                self.assignment_timestamp_ms = timestamp_ms;
            }
            ModernChange::Target { member, prev } => match prev {
                Some(target) => {
                    self.targets.insert(member, target);
                }
                None => {
                    self.targets.remove(&member);
                }
            },
        }
    }
}

/// KIP-1263's batching rule (`GroupMetadataManager.canComputeNextTargetAssignment`):
/// whether a group whose target assignment was computed at `assignment_timestamp_ms`
/// may compute the next one at `now_ms`, with `interval_ms` between two. A
/// timestamp of 0 (no target yet, or one written before timestamps were kept)
/// and an interval of 0 (batching off; also the way out of a clock moved far
/// back) always may.
pub(crate) fn can_compute_next_target_assignment(
    assignment_timestamp_ms: i64,
    interval_ms: i32,
    now_ms: i64,
) -> bool {
    assignment_timestamp_ms == 0
        || interval_ms == 0
        || now_ms >= assignment_timestamp_ms.saturating_add(i64::from(interval_ms))
}

/// Empty after Java's `String.trim()`, which strips every char up to U+0020 (the
/// control characters and the space) and nothing else: `"\u{1}"` is blank to
/// Kafka and a no-break space is not, unlike Rust's Unicode `trim`. Bytewise is
/// exact, since every byte of a multi-byte UTF-8 char is at least 0x80; and a
/// real id is decided by its first byte.
pub(crate) fn java_blank(value: &str) -> bool {
    value.bytes().all(|b| b <= b' ')
}

/// The group hash over the existing subscribed topics, ordered by name; 0 when
/// none exists (`Utils.computeGroupHash`; only equality matters, §9.4).
pub(crate) fn metadata_hash(names: &BTreeSet<&str>, image: &crate::MetadataImage) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    let mut any = false;
    for name in names {
        if let Some(hash) = image.topic_hash(name) {
            any = true;
            h.write_u64(hash);
        }
    }
    if any { h.finish().max(1) } else { 0 }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::can_compute_next_target_assignment;

    /// `GroupMetadataManagerTest.testCanComputeNextTargetAssignment*` (KIP-1263):
    /// (timestamp of the last target, interval, now) and whether the next may be computed.
    #[rstest]
    #[case::no_previous_timestamp(0, 1_000, 0, true)]
    #[case::zero_interval_before_the_timestamp(1_000_000, 0, 0, true)]
    #[case::zero_interval_just_before_the_timestamp(1_000_000, 0, 999_999, true)]
    #[case::zero_interval_at_the_timestamp(1_000_000, 0, 1_000_000, true)]
    #[case::before_the_timestamp(1_000_000, 5_000, 0, false)]
    #[case::just_before_the_timestamp(1_000_000, 5_000, 999_999, false)]
    #[case::at_the_timestamp(1_000_000, 5_000, 1_000_000, false)]
    #[case::just_before_the_interval_elapses(1_000_000, 5_000, 1_004_999, false)]
    #[case::when_the_interval_elapses(1_000_000, 5_000, 1_005_000, true)]
    #[case::after_the_interval_elapsed(1_000_000, 5_000, 1_007_500, true)]
    #[case::no_overflow_near_the_end_of_time(i64::MAX - 10, 5_000, i64::MAX - 1, false)]
    fn the_next_target_waits_for_the_interval(
        #[case] timestamp_ms: i64,
        #[case] interval_ms: i32,
        #[case] now_ms: i64,
        #[case] can: bool,
    ) {
        assert_eq!(can_compute_next_target_assignment(timestamp_ms, interval_ms, now_ms), can);
    }
}
