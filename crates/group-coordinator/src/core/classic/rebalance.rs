//! The rebalance machinery: `prepare_rebalance`, join completion, assignment
//! propagation, member removal and the group timers (`kafka-semantics.md` §1.2, §3).

use crate::core::types::Deadline;
use std::sync::Arc;

use bytes::Bytes;
use group_types::{ErrorCode, GroupState, JoinGroupResponse, MemberId, SyncGroupResponse};

use crate::core::{
    CoordinatorCore, Engine, ExpirationReason, Group, JoinTimer, PendingWrite, RebalanceReason, Record,
    Response, TimerKey, join_error,
};

impl Engine {
    /// §1.2 `prepare_rebalance`.
    pub(crate) fn prepare_rebalance(&mut self, g: &mut Group, reason: RebalanceReason) {
        if g.is(GroupState::CompletingRebalance) {
            self.reset_and_propagate_assignment_with_error(g, ErrorCode::RebalanceInProgress);
        }
        g.clear_pending_sync();
        self.cancel_sync_timer(g);
        let initial = g.is(GroupState::Empty);
        if initial {
            let delay = self.config.initial_rebalance_delay_ms;
            let remaining = (g.rebalance_timeout_ms() - delay).max(0);
            self.arm_join_timer(g, delay, JoinTimer::Initial { delay_ms: delay, remaining_ms: remaining });
        }
        self.transition_to_preparing(g, reason);
        if !initial {
            self.maybe_complete_join_else_schedule(g);
        }
    }

    pub(crate) fn arm_join_timer(&mut self, g: &mut Group, after_ms: i32, kind: JoinTimer) {
        let deadline = self.now + i64::from(after_ms);
        g.join_timer = Some((deadline, kind));
        self.arm(TimerKey::Join(g.id.clone()), deadline);
    }

    fn cancel_join_timer(&mut self, g: &mut Group) {
        if g.join_timer.take().is_some() {
            self.cancel(TimerKey::Join(g.id.clone()));
        }
    }

    pub(crate) fn cancel_sync_timer(&mut self, g: &mut Group) {
        if g.sync_timer.take().is_some() {
            self.cancel(TimerKey::Sync(g.id.clone()));
        }
    }

    /// `maybePrepareRebalanceOrCompleteJoin`.
    pub(crate) fn maybe_prepare_rebalance_or_complete_join(
        &mut self,
        g: &mut Group,
        reason: RebalanceReason,
    ) {
        if matches!(g.state, GroupState::Stable | GroupState::CompletingRebalance | GroupState::Empty) {
            self.prepare_rebalance(g, reason);
        } else {
            self.maybe_complete_join_phase(g);
        }
    }

    /// Completes the join if everyone is in, except during the initial delay.
    pub(crate) fn maybe_complete_join_phase(&mut self, g: &mut Group) {
        if g.is(GroupState::PreparingRebalance)
            && g.all_members_joined()
            && g.previous_state != GroupState::Empty
        {
            self.complete_join(g);
        }
    }

    fn maybe_complete_join_else_schedule(&mut self, g: &mut Group) {
        if g.is(GroupState::PreparingRebalance) && g.all_members_joined() {
            self.complete_join(g);
        } else {
            let timeout = g.rebalance_timeout_ms();
            self.arm_join_timer(g, timeout, JoinTimer::Rebalance);
        }
    }

    /// §3.5 join completion.
    pub(crate) fn complete_join(&mut self, g: &mut Group) {
        self.cancel_join_timer(g);
        let dropped: Vec<Arc<str>> = g
            .members()
            .iter()
            .filter(|m| m.awaiting_join().is_none() && m.instance().is_none())
            .map(|m| m.id.clone())
            .collect();
        for id in &dropped {
            self.member_expired(g, id, ExpirationReason::Join);
            g.remove(id);
            self.cancel_session(g, id);
        }
        if g.is(GroupState::Dead) {
            return;
        }
        if !g.maybe_elect_joined_leader() && g.len() > 0 {
            let timeout = g.rebalance_timeout_ms();
            self.arm_join_timer(g, timeout, JoinTimer::Rebalance);
            return;
        }
        g.generation += 1;
        if g.len() > 0 {
            g.protocol_name = g.select_protocol();
            g.subscribed_topics = g.compute_subscribed_topics();
            self.transition(g, GroupState::CompletingRebalance);
        } else {
            g.protocol_name = None;
            g.subscribed_topics = g.compute_subscribed_topics();
            self.transition(g, GroupState::Empty);
        }
        g.clear_pending_sync();
        if g.is(GroupState::Empty) {
            let record = g.record(None);
            self.write_group(g, vec![Record::Group(Box::new(record))], PendingWrite::Logged);
            return;
        }
        let mut leader_members = Some(g.join_members());
        // One copy of the leader's id, shared by every member's answer.
        let leader_id = MemberId::from(g.leader.as_deref().unwrap_or(""));
        for i in 0..g.len() {
            let member_id = g.at(i).id.clone();
            let is_leader = g.is_leader(&member_id);
            if let Some(request) = g.set_awaiting_join(i, None) {
                let response = JoinGroupResponse {
                    error_code: ErrorCode::None,
                    generation_id: g.generation,
                    protocol_type: g.protocol_type.clone(),
                    protocol_name: g.protocol_name.clone(),
                    leader_id: leader_id.clone(),
                    skip_assignment: false,
                    member_id: MemberId::from(&*member_id),
                    members: if is_leader { leader_members.take().unwrap_or_default() } else { Vec::new() },
                };
                self.respond(request, Response::JoinGroup(response));
            }
            let timeout = g.at(i).session_timeout_ms;
            self.arm_session(g, i, timeout);
            g.at_mut(i).is_new = false;
            g.set_pending_sync(i, true);
        }
        let deadline = self.now + i64::from(g.rebalance_timeout_ms());
        g.sync_timer = Some((deadline, g.generation));
        self.arm(TimerKey::Sync(g.id.clone()), deadline);
    }

    pub(crate) fn reset_and_propagate_assignment_with_error(&mut self, g: &mut Group, error: ErrorCode) {
        for i in 0..g.len() {
            // Rebuilt only when there is an assignment to drop.
            if !g.at(i).payload.assignment().is_empty() {
                let payload = g.at(i).payload.with_assignment(&[]);
                g.at_mut(i).payload = payload;
            }
        }
        self.propagate_assignment(g, error);
    }

    /// Answers every parked SyncGroup and re-arms those members' sessions.
    pub(crate) fn propagate_assignment(&mut self, g: &mut Group, error: ErrorCode) {
        let ok = error == ErrorCode::None;
        for i in 0..g.len() {
            if let Some(request) = g.at_mut(i).take_awaiting_sync() {
                let response = SyncGroupResponse {
                    error_code: error,
                    protocol_type: if ok { g.protocol_type.clone() } else { None },
                    protocol_name: if ok { g.protocol_name.clone() } else { None },
                    assignment: Bytes::copy_from_slice(g.at(i).payload.assignment()),
                };
                self.respond(request, Response::SyncGroup(response));
                let timeout = g.at(i).session_timeout_ms;
                self.arm_session(g, i, timeout);
            }
        }
    }

    /// Removes a member on the leave path: its parked JoinGroup gets UNKNOWN_MEMBER_ID.
    /// Deliberate difference: Kafka drops a leaving member's parked SyncGroup without
    /// an answer; here it gets UNKNOWN_MEMBER_ID, so no caller waits forever.
    pub(crate) fn remove_current_member(&mut self, g: &mut Group, id: &Arc<str>) {
        self.cancel_session(g, id);
        if let Some(i) = g.position(id) {
            if let Some(request) = g.set_awaiting_join(i, None) {
                self.respond(request, Response::JoinGroup(join_error(ErrorCode::UnknownMemberId, "")));
            }
            if let Some(request) = g.at_mut(i).take_awaiting_sync() {
                self.respond(
                    request,
                    Response::SyncGroup(SyncGroupResponse::error(ErrorCode::UnknownMemberId)),
                );
            }
        }
        g.remove(id);
    }

    /// Removes a member whose session expired, then rebalances or completes the join.
    fn remove_member_and_update(&mut self, g: &mut Group, id: &Arc<str>) {
        if let Some(i) = g.position(id)
            && let Some(request) = g.set_awaiting_join(i, None)
        {
            self.respond(request, Response::JoinGroup(join_error(ErrorCode::UnknownMemberId, "")));
        }
        g.remove(id);
        if matches!(g.state, GroupState::Stable | GroupState::CompletingRebalance) {
            self.maybe_prepare_rebalance_or_complete_join(
                g,
                RebalanceReason::HeartbeatExpired { member_id: id.clone() },
            );
        } else if g.is(GroupState::PreparingRebalance) && g.all_members_joined() {
            self.complete_join(g);
        }
    }

    fn try_complete_initial_rebalance(&mut self, g: &mut Group, delay_ms: i32, remaining_ms: i32) {
        if g.new_member_added && remaining_ms != 0 {
            g.new_member_added = false;
            let new_delay = self.config.initial_rebalance_delay_ms.min(remaining_ms);
            let new_remaining = (remaining_ms - delay_ms).max(0);
            self.arm_join_timer(
                g,
                new_delay,
                JoinTimer::Initial { delay_ms: new_delay, remaining_ms: new_remaining },
            );
        } else {
            self.complete_join(g);
        }
    }
}

impl CoordinatorCore {
    pub(crate) fn fire_join(&mut self, group: &str) {
        let Some(g) = self.groups.get_mut(group).and_then(|g| g.classic_mut()) else { return };
        let now = self.engine.now;
        let Some((deadline, kind)) = g.join_timer else { return };
        if deadline > now {
            return;
        }
        g.join_timer = None;
        if !g.is(GroupState::PreparingRebalance) {
            return;
        }
        match kind {
            JoinTimer::Initial { delay_ms, remaining_ms } => {
                self.engine.try_complete_initial_rebalance(g, delay_ms, remaining_ms)
            }
            JoinTimer::Rebalance => self.engine.complete_join(g),
        }
    }

    pub(crate) fn fire_sync(&mut self, group: &str) {
        let Some(g) = self.groups.get_mut(group).and_then(|g| g.classic_mut()) else { return };
        let Some((deadline, generation)) = g.sync_timer else { return };
        if deadline > self.engine.now {
            return;
        }
        g.sync_timer = None;
        if generation != g.generation
            || !matches!(g.state, GroupState::CompletingRebalance | GroupState::Stable)
            || g.has_received_all_syncs()
        {
            return;
        }
        let missing: Vec<Arc<str>> =
            g.members().iter().filter(|m| m.pending_sync).map(|m| m.id.clone()).collect();
        for id in &missing {
            self.engine.member_expired(g, id, ExpirationReason::Sync);
            g.remove(id);
            self.engine.cancel_session(g, id);
        }
        self.engine.prepare_rebalance(g, RebalanceReason::PendingSyncExpired { members: missing });
    }

    pub(crate) fn fire_session(&mut self, group: &str, member: &str) {
        let Some(g) = self.groups.get_mut(group).and_then(|g| g.classic_mut()) else { return };
        let now = self.engine.now;
        if let Some((id, &deadline)) = g.pending_join.get_key_value(member) {
            if deadline <= now {
                let id = id.clone();
                self.engine.member_expired(g, &id, ExpirationReason::PendingMember);
                g.pending_join.remove(member);
                if g.is(GroupState::PreparingRebalance) && g.all_members_joined() {
                    self.engine.complete_join(g);
                }
            }
            return;
        }
        let Some(i) = g.position(member) else { return };
        // The entry queued for this member is the one firing now.
        g.at_mut(i).session_armed = Deadline::NONE;
        match g.at(i).session_deadline.get() {
            None => return,
            Some(later) if later > now => {
                // Heartbeats moved the deadline since the entry was queued.
                self.engine.queue_session(g, i, later);
                return;
            }
            Some(_) => {}
        }
        let m = g.at(i);
        let satisfied = !m.is_new && (m.awaiting_join().is_some() || m.awaiting_sync().is_some());
        g.at_mut(i).session_deadline = Deadline::NONE;
        if !satisfied {
            let id = g.at(i).id.clone();
            let reason =
                if g.at(i).is_new { ExpirationReason::NewMemberJoin } else { ExpirationReason::Session };
            self.engine.member_expired(g, &id, reason);
            self.engine.remove_member_and_update(g, &id);
        }
    }
}
