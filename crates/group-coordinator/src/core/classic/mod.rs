//! The classic group protocol (`kafka-semantics.md`): one [`Group`] per classic
//! group, its members and their parked requests, and the handlers of JoinGroup,
//! SyncGroup, Heartbeat and LeaveGroup with the rebalance machinery behind them
//! (Kafka's `ClassicGroup` and the classic half of `GroupMetadataManager`).
//!
//! A classic group is one kind of [`GroupKind`](crate::core::GroupKind); its
//! offsets live beside it in the partition's [`OffsetStore`](crate::core::OffsetStore).

mod group;
mod join;
pub(crate) mod member_index;
pub(crate) mod member_payload;
mod membership;
mod rebalance;
mod sync;

use std::sync::Arc;

use group_types::ErrorCode;

pub(crate) use self::group::{Group, JoinTimer, Member};
use crate::core::Engine;
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
