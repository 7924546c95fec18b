//! Reconciliation: how a member moves from what it owns to its target, one
//! heartbeat at a time (`CurrentAssignmentBuilder`, `kip848-semantics.md` §3).
//!
//! A partition goes to a member only once nobody else owns it, and a member gives
//! back what it must revoke before it receives anything new, so no partition is
//! ever owned by two members at once. Each partition carries the epoch at which
//! it was assigned (KIP-1251, `epochs.rs`): kept and revoked partitions keep
//! theirs, added ones take the target assignment's.

use group_offsets::AssignmentEpochs;

use group_types::{ConsumerMemberState, ErrorCode, TopicId};

use super::epochs;
use super::group::{ConsumerGroup, ConsumerMember};
use crate::core::modern::assignment::{self, Assignment};

/// Where a member's reconciliation stands after a heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reconciled {
    pub(crate) member_epoch: i32,
    pub(crate) previous_member_epoch: i32,
    pub(crate) state: ConsumerMemberState,
    pub(crate) assigned: Assignment,
    pub(crate) pending_revocation: Assignment,
    pub(crate) assigned_epochs: AssignmentEpochs,
    pub(crate) pending_revocation_epochs: AssignmentEpochs,
}

impl Reconciled {
    fn of(member: &ConsumerMember) -> Reconciled {
        Reconciled {
            member_epoch: member.member_epoch,
            previous_member_epoch: member.previous_member_epoch,
            state: member.state,
            assigned: (*member.assigned).clone(),
            pending_revocation: (*member.pending_revocation).clone(),
            assigned_epochs: member.assigned_epochs.clone(),
            pending_revocation_epochs: member.pending_revocation_epochs.clone(),
        }
    }

    /// The record value of this state.
    pub(crate) fn value(&self) -> group_offsets::CurrentMemberAssignmentValue {
        super::group::assignment_value(
            (self.member_epoch, self.previous_member_epoch, self.state),
            (&self.assigned, &self.assigned_epochs),
            (&self.pending_revocation, &self.pending_revocation_epochs),
        )
    }

    /// True when nothing differs from `member` (no record to write).
    pub(crate) fn same_as(&self, member: &ConsumerMember) -> bool {
        self.member_epoch == member.member_epoch
            && self.previous_member_epoch == member.previous_member_epoch
            && self.state == member.state
            && self.assigned == *member.assigned
            && self.pending_revocation == *member.pending_revocation
            && self.assigned_epochs == member.assigned_epochs
            && self.pending_revocation_epochs == member.pending_revocation_epochs
    }
}

/// What reconciliation needs besides the member.
pub(crate) struct Inputs<'a> {
    pub(crate) group: &'a ConsumerGroup,
    pub(crate) target_epoch: i32,
    pub(crate) target: &'a Assignment,
    /// The request's TopicPartitions; `None` = "no news" (still owns everything).
    pub(crate) owned: Option<&'a Assignment>,
    /// The member's subscription changed in this request (4.2, KAFKA-19431).
    pub(crate) subscription_changed: bool,
    /// Whether the member still subscribes to a topic (names and resolved regexes).
    pub(crate) subscribed: &'a dyn Fn(TopicId) -> bool,
}

/// `CurrentAssignmentBuilder.build`: the member's next state, or
/// `FENCED_MEMBER_EPOCH` for a member in a state this version does not know.
pub(crate) fn reconcile(member: &ConsumerMember, inputs: &Inputs<'_>) -> Result<Reconciled, ErrorCode> {
    match member.state {
        ConsumerMemberState::Stable => {
            if member.member_epoch != inputs.target_epoch {
                Ok(next_assignment(member, inputs, member.member_epoch))
            } else if inputs.subscription_changed {
                Ok(drop_unsubscribed(member, inputs))
            } else {
                Ok(Reconciled::of(member))
            }
        }
        ConsumerMemberState::UnrevokedPartitions => {
            if owns_any(inputs.owned, &member.pending_revocation) {
                if inputs.subscription_changed {
                    Ok(drop_unsubscribed(member, inputs))
                } else {
                    Ok(Reconciled::of(member))
                }
            } else {
                // 4.2 (KAFKA-19974): a second revocation round keeps the epoch.
                Ok(next_assignment(member, inputs, member.member_epoch))
            }
        }
        ConsumerMemberState::UnreleasedPartitions => Ok(next_assignment(member, inputs, member.member_epoch)),
        ConsumerMemberState::Unknown => match inputs.owned {
            Some(owned) if owned.is_empty() => Ok(next_assignment(member, inputs, inputs.target_epoch)),
            _ => Err(ErrorCode::FencedMemberEpoch),
        },
    }
}

/// True when the client may still own one of `partitions`: it said nothing
/// (`None`), or listed one of them (`ownsRevokedPartitions`).
fn owns_any(owned: Option<&Assignment>, partitions: &Assignment) -> bool {
    match owned {
        None => true,
        Some(owned) => assignment::intersects(partitions, owned),
    }
}

/// Every call records the old epoch as the previous one
/// (`ConsumerGroupMember.Builder.updateMemberEpoch`), even when it does not change.
fn with_epoch(member: &ConsumerMember, epoch: i32) -> (i32, i32) {
    (epoch, member.member_epoch)
}

/// `computeNextAssignment`: keep what stays, revoke what goes (first, if the
/// client may still own it), then add what is free.
fn next_assignment(member: &ConsumerMember, inputs: &Inputs<'_>, revoking_epoch: i32) -> Reconciled {
    let mut keep = Vec::new();
    let mut revoke = Vec::new();
    let mut add = Vec::new();
    let mut has_unreleased = false;
    for topic in assignment::topics_of(inputs.target, &member.assigned) {
        let target: &[i32] = if (inputs.subscribed)(topic) { inputs.target.partitions(topic) } else { &[] };
        let assigned = member.assigned.partitions(topic);
        let kept: Vec<i32> = assigned.iter().copied().filter(|p| target.binary_search(p).is_ok()).collect();
        let revoked: Vec<i32> =
            assigned.iter().copied().filter(|p| target.binary_search(p).is_err()).collect();
        let mut added = Vec::new();
        for &p in target {
            if kept.binary_search(&p).is_ok() {
                continue;
            }
            if inputs.group.is_free_for(topic, p, member) {
                added.push(p);
            } else {
                has_unreleased = true;
            }
        }
        keep.push((topic, kept));
        revoke.push((topic, revoked));
        add.push((topic, added));
    }
    let keep = assignment::from_sorted(keep);
    let revoke = assignment::from_sorted(revoke);
    let add = assignment::from_sorted(add);
    // Kept and revoked partitions were all in `assigned`: they keep its epochs.
    let held_since = |t, p| assigned_epoch(member, t, p);
    if !revoke.is_empty() && owns_any(inputs.owned, &revoke) {
        let (member_epoch, previous_member_epoch) = with_epoch(member, revoking_epoch);
        return Reconciled {
            member_epoch,
            previous_member_epoch,
            state: ConsumerMemberState::UnrevokedPartitions,
            assigned_epochs: epochs::epochs_of(&keep, held_since),
            pending_revocation_epochs: epochs::epochs_of(&revoke, held_since),
            assigned: keep,
            pending_revocation: revoke,
        };
    }
    let (member_epoch, previous_member_epoch) = with_epoch(member, inputs.target_epoch);
    let state =
        if has_unreleased { ConsumerMemberState::UnreleasedPartitions } else { ConsumerMemberState::Stable };
    let assigned = if add.is_empty() { keep } else { assignment::union(&keep, &add) };
    let assigned_epochs = epochs::epochs_of(&assigned, |t, p| {
        if assignment::contains(&add, t, p) { inputs.target_epoch } else { held_since(t, p) }
    });
    Reconciled {
        member_epoch,
        previous_member_epoch,
        state,
        assigned,
        pending_revocation: Assignment::default(),
        assigned_epochs,
        pending_revocation_epochs: AssignmentEpochs::default(),
    }
}

/// The epoch at which `member` got partition `p` of `topic`, which it holds
/// as assigned (0 if not, which reconciliation never asks).
fn assigned_epoch(member: &ConsumerMember, topic: TopicId, p: i32) -> i32 {
    epochs::epoch_of(&member.assigned, &member.assigned_epochs, topic, p).unwrap_or(0)
}

/// `updateCurrentAssignment` (4.2): partitions of topics the member no longer
/// subscribes to become pending revocation at once, without waiting for a new target.
fn drop_unsubscribed(member: &ConsumerMember, inputs: &Inputs<'_>) -> Reconciled {
    let mut keep = Vec::new();
    let mut revoke = Vec::new();
    for (topic, ps) in &member.assigned.topics {
        if (inputs.subscribed)(*topic) {
            keep.push((*topic, ps.clone()));
        } else {
            revoke.push((*topic, ps.clone()));
        }
    }
    let revoke = assignment::from_sorted(revoke);
    if revoke.is_empty() {
        return Reconciled::of(member);
    }
    let keep = assignment::from_sorted(keep);
    let pending = assignment::union(&member.pending_revocation, &revoke);
    let held_since = |t, p| assigned_epoch(member, t, p);
    let assigned_epochs = epochs::epochs_of(&keep, held_since);
    if owns_any(inputs.owned, &pending) {
        // A newly revoked partition's epoch wins over an older pending one's
        // (`updateCurrentAssignment` merges them with `putAll`).
        let pending_revocation_epochs = epochs::epochs_of(&pending, |t, p| {
            if assignment::contains(&revoke, t, p) {
                held_since(t, p)
            } else {
                epochs::epoch_of(&member.pending_revocation, &member.pending_revocation_epochs, t, p)
                    .unwrap_or(0)
            }
        });
        // The member epochs stay as they are: this is not an epoch transition.
        Reconciled {
            member_epoch: member.member_epoch,
            previous_member_epoch: member.previous_member_epoch,
            state: ConsumerMemberState::UnrevokedPartitions,
            assigned: keep,
            pending_revocation: pending,
            assigned_epochs,
            pending_revocation_epochs,
        }
    } else {
        Reconciled { assigned: keep, assigned_epochs, ..Reconciled::of(member) }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use group_offsets::{CurrentMemberAssignmentValue, ModernGroupRecord};
    use group_types::TopicIdPartitions;
    use rstest::rstest;

    use super::*;

    const T1: TopicId = TopicId::from_u128(1);
    const T2: TopicId = TopicId::from_u128(2);

    /// `(topic, epoch, partitions)` runs, as Kafka's `mkTopicAssignmentWithEpochs`.
    type Runs<'a> = &'a [(TopicId, i32, &'a [i32])];

    /// Partitions by topic, without epochs.
    type Parts<'a> = &'a [(TopicId, &'a [i32])];

    /// A member's state, epoch, assigned and pending partitions with epochs.
    type Member<'a> = (ConsumerMemberState, i32, Runs<'a>, Runs<'a>);

    /// An assignment and its epochs from runs (partitions of a topic may be split over runs).
    fn with_epochs(runs: Runs<'_>) -> (Assignment, AssignmentEpochs) {
        let wire: Vec<TopicIdPartitions> =
            runs.iter().map(|(t, _, ps)| TopicIdPartitions::new(*t, ps.iter().copied())).collect();
        let epochs =
            AssignmentEpochs::from_epochs(runs.iter().flat_map(|(_, e, ps)| ps.iter().map(move |_| *e)));
        epochs::from_record(&wire, &epochs)
    }

    /// A group holding `member` in `state` at `epoch` with `assigned` and `pending`.
    fn group(state: ConsumerMemberState, epoch: i32, assigned: Runs<'_>, pending: Runs<'_>) -> ConsumerGroup {
        let (a, ae) = with_epochs(assigned);
        let (p, pe) = with_epochs(pending);
        let value = CurrentMemberAssignmentValue {
            member_epoch: epoch,
            previous_member_epoch: epoch,
            state,
            assigned: assignment::to_wire(&a),
            pending_revocation: assignment::to_wire(&p),
            assigned_epochs: ae,
            pending_revocation_epochs: pe,
        };
        let mut cg = ConsumerGroup::new(Arc::from("g"), 0);
        let record = ModernGroupRecord::CurrentMemberAssignment {
            group_id: Arc::from("g"),
            member_id: Arc::from("member"),
            value: Some(value),
        };
        cg.replay(&record, None);
        cg
    }

    /// `CurrentAssignmentBuilderTest`'s cases whose epochs differ within one
    /// member: what is kept keeps its epoch, what is added (also a partition
    /// back from pending revocation) takes the target's, what is revoked takes
    /// its own to the pending revocation.
    #[rstest]
    #[case::stable_to_stable_with_new_partitions(
        (ConsumerMemberState::Stable, 10, &[(T1, 10, &[1, 2, 3][..]), (T2, 10, &[4, 5, 6][..])][..], &[][..]),
        (11, &[(T1, &[1, 2, 3, 4][..]), (T2, &[4, 5, 6, 7][..])][..], None),
        (
            ConsumerMemberState::Stable,
            11,
            &[(T1, 10, &[1, 2, 3][..]), (T1, 11, &[4][..]), (T2, 10, &[4, 5, 6][..]), (T2, 11, &[7][..])][..],
            &[][..],
        )
    )]
    #[case::unrevoked_to_stable_with_returned_partitions_pending_revocation(
        (
            ConsumerMemberState::UnrevokedPartitions,
            10,
            &[(T1, 10, &[2, 3][..]), (T2, 10, &[5, 6][..])][..],
            &[(T1, 10, &[4][..])][..],
        ),
        (12, &[(T1, &[2, 3, 4][..]), (T2, &[5, 6, 7][..])][..], Some(&[(T1, &[2, 3][..]), (T2, &[5, 6][..])][..])),
        (
            ConsumerMemberState::Stable,
            12,
            &[(T1, 10, &[2, 3][..]), (T1, 12, &[4][..]), (T2, 10, &[5, 6][..]), (T2, 12, &[7][..])][..],
            &[][..],
        )
    )]
    #[case::stable_to_unrevoked_keeps_mixed_epochs(
        (
            ConsumerMemberState::Stable,
            10,
            &[(T1, 4, &[1][..]), (T1, 9, &[2, 3][..]), (T2, 10, &[4, 5, 6][..])][..],
            &[][..],
        ),
        (11, &[(T1, &[2, 3, 4][..]), (T2, &[5, 6, 7][..])][..], None),
        (
            ConsumerMemberState::UnrevokedPartitions,
            10,
            &[(T1, 9, &[2, 3][..]), (T2, 10, &[5, 6][..])][..],
            &[(T1, 4, &[1][..]), (T2, 10, &[4][..])][..],
        )
    )]
    fn reconciliation_carries_assignment_epochs(
        #[case] before: Member<'_>,
        #[case] target: (i32, Parts<'_>, Option<Parts<'_>>),
        #[case] after: Member<'_>,
    ) {
        let (state, epoch, assigned, pending) = before;
        let (target_epoch, target, owned) = target;
        let (next_state, next_epoch, next_assigned, next_pending) = after;
        let cg = group(state, epoch, assigned, pending);
        let member = cg.modern.members.get("member").expect("replayed");
        let wire = |ps: &[(TopicId, &[i32])]| {
            ps.iter().map(|(t, ps)| TopicIdPartitions::new(*t, ps.iter().copied())).collect::<Vec<_>>()
        };
        let target = assignment::from_wire(&wire(target));
        let owned = owned.map(|o| assignment::from_wire(&wire(o)));
        let inputs = Inputs {
            group: &cg,
            target_epoch,
            target: &target,
            owned: owned.as_ref(),
            subscription_changed: false,
            subscribed: &|_| true,
        };
        let next = reconcile(member, &inputs).expect("reconciles");
        let (assigned, assigned_epochs) = with_epochs(next_assigned);
        let (pending, pending_epochs) = with_epochs(next_pending);
        assert_eq!((next.state, next.member_epoch), (next_state, next_epoch));
        assert_eq!((&next.assigned, &next.assigned_epochs), (&assigned, &assigned_epochs));
        assert_eq!((&next.pending_revocation, &next.pending_revocation_epochs), (&pending, &pending_epochs));
    }
}
