//! The classic group protocol (`kafka-semantics.md`): one [`Group`] per classic
//! group, its members and their parked requests, and the handlers of JoinGroup,
//! SyncGroup, Heartbeat and LeaveGroup with the rebalance machinery behind them
//! (Kafka's `ClassicGroup` and the classic half of `GroupMetadataManager`).
//!
//! A classic group is one kind of group (`GroupKind::Classic`); its offsets
//! live beside it, in the partition's offsets store (`core/offsets/`).

mod group;
mod join;
mod load;
pub(crate) mod member_index;
pub(crate) mod member_payload;
mod membership;
mod rebalance;
mod sync;

use std::sync::Arc;

use group_types::{ErrorCode, GroupState, OffsetCommitRequest};

pub(crate) use self::group::{Group, JoinTimer, Member};
use crate::core::Engine;
use crate::core::offsets::Committer;
use crate::core::types::{Deadline, TimerKey};

/// `validate_member` (§2.0).
/// [`validate_member`] for a caller that already looked the member up: `position`
/// is where `member_id` sits in the group, if it is a member, so a dynamic member
/// costs no second lookup.
pub(crate) fn validate_member_at(
    g: &Group,
    member_id: &str,
    instance: Option<&str>,
    position: Option<usize>,
) -> Result<(), ErrorCode> {
    match instance {
        None if position.is_none() => Err(ErrorCode::UnknownMemberId),
        None => Ok(()),
        instance => validate_member(g, member_id, instance),
    }
}

pub(crate) fn validate_member(g: &Group, member_id: &str, instance: Option<&str>) -> Result<(), ErrorCode> {
    match instance {
        Some(instance) => match g.static_member_id(instance) {
            None => Err(ErrorCode::UnknownMemberId),
            Some(id) if **id != *member_id => Err(ErrorCode::FencedInstanceId),
            Some(_) => Ok(()),
        },
        None if g.has_member(member_id) => Ok(()),
        None => Err(ErrorCode::UnknownMemberId),
    }
}

impl Engine {
    /// Arms member `i`'s session deadline `timeout_ms` from now.
    ///
    /// Lazily: a heartbeat moves the deadline later on every call, so while an entry for
    /// an earlier (or the same) time is queued, only the member's deadline changes; when
    /// that entry fires, `fire_session` finds the later deadline and queues it then.
    pub(crate) fn arm_session(&mut self, g: &mut Group, i: usize, timeout_ms: i32) {
        let deadline = self.now + i64::from(timeout_ms);
        let member = g.at_mut(i);
        member.session_deadline = Deadline::at(deadline);
        if member.session_armed.get().is_some_and(|armed| armed <= deadline) {
            return;
        }
        self.queue_session(g, i, deadline);
    }

    /// Queues member `i`'s session timer for `deadline`.
    pub(crate) fn queue_session(&mut self, g: &mut Group, i: usize, deadline: i64) {
        let group = g.id.clone();
        let member = g.at_mut(i);
        member.session_armed = Deadline::at(deadline);
        let key = TimerKey::Session(group, member.id.clone());
        self.arm(key, deadline);
    }

    pub(crate) fn cancel_session(&mut self, g: &Group, member_id: &Arc<str>) {
        self.cancel(TimerKey::Session(g.id.clone(), member_id.clone()));
    }
}

/// `ClassicGroup.validateOffsetCommit` (§2.5 step 3-4), for a plain or a
/// transactional commit. `position` is where the committer sits in the
/// group, if it is a member.
#[inline]
pub(crate) fn validate_commit(
    g: &Group,
    c: &Committer<'_>,
    position: Option<usize>,
) -> Result<(), ErrorCode> {
    if g.is(GroupState::Dead) {
        return Err(ErrorCode::CoordinatorNotAvailable);
    }
    if c.generation < 0 && g.is(GroupState::Empty) {
        return Ok(());
    }
    if c.generation >= 0 || !c.member_id.is_empty() || c.instance_id.is_some() {
        validate_member_at(g, c.member_id, c.instance_id, position)?;
        if c.generation != g.generation {
            return Err(ErrorCode::IllegalGeneration);
        }
    } else if !c.transactional && !g.is(GroupState::Empty) {
        // A pre-KIP-447 producer sends no member id and no generation: only
        // plain commits are refused for that on a group with members.
        return Err(ErrorCode::UnknownMemberId);
    }
    // The group's state is not enforced for transactional commits.
    if !c.transactional && g.is(GroupState::CompletingRebalance) {
        return Err(ErrorCode::RebalanceInProgress);
    }
    Ok(())
}

/// An OffsetCommit to classic group `g` (`ClassicGroup.validateOffsetCommit`):
/// a member's commit also keeps its session alive, as Kafka's does.
#[inline]
pub(crate) fn validate_offset_commit(
    g: &mut Group,
    req: &OffsetCommitRequest,
    eng: &mut Engine,
) -> Result<(), ErrorCode> {
    // One lookup locates the member for validation and for its session.
    let position = if req.member_id.is_empty() { None } else { g.position(&req.member_id) };
    validate_commit(g, &Committer::plain(req), position)?;
    if matches!(g.state, GroupState::Stable | GroupState::PreparingRebalance)
        && let Some(i) = position
    {
        let timeout = g.at(i).session_timeout_ms;
        eng.arm_session(g, i, timeout);
    }
    Ok(())
}
