//! JoinGroup (`kafka-semantics.md` §2.1): the KIP-394 two-step join, static
//! membership, capacity, protocol checks and the parked join barrier.

use crate::core::classic::member_payload::MemberPayload;
use std::sync::Arc;

use group_types::{ErrorCode, GroupState, JoinGroupRequest, JoinGroupResponse, MemberId};

use crate::core::{
    CoordinatorCore, Engine, Group, Member, PendingWrite, RebalanceReason, Record, Response, StaticReplace,
    TimerKey, join_error, join_validation_error, validate_member_at,
};

impl CoordinatorCore {
    pub(crate) fn join_group(
        &mut self,
        rid: crate::core::RequestId,
        req: JoinGroupRequest,
        visible: &dyn Fn(&str) -> bool,
    ) {
        let eng = &mut self.engine;
        if req.group_id.is_empty() {
            let response = join_error(ErrorCode::InvalidGroupId, req.member_id);
            eng.respond(rid, Response::JoinGroup(response));
            return;
        }
        if req.session_timeout_ms < eng.config.min_session_timeout_ms
            || req.session_timeout_ms > eng.config.max_session_timeout_ms
        {
            let response = join_error(ErrorCode::InvalidSessionTimeout, req.member_id);
            eng.respond(rid, Response::JoinGroup(response));
            return;
        }
        // One look at the group decides the kind of join; a rejoin, the common
        // case, then finds it once more to change it.
        let exists = match self.groups.get(req.group_id.as_str()) {
            None => false,
            // A share group is no classic group to join (`GroupMetadataManager.classicGroupJoin`).
            Some(g) if g.share().is_some() => {
                let response = join_error(ErrorCode::InconsistentGroupProtocol, "");
                self.engine.respond(rid, Response::JoinGroup(response));
                return;
            }
            Some(_) => match self.consumer_group_ref(&req.group_id) {
                None => true,
                Some(cg) if !cg.modern.members.is_empty() => {
                    self.consumer_group_classic_join(rid, req, visible);
                    return;
                }
                Some(_) => {
                    // Offline migration: an empty consumer group becomes a classic one (§8.1).
                    self.replace_empty_consumer_group(&req.group_id);
                    self.groups.contains_key(req.group_id.as_str())
                }
            },
        };
        let eng = &mut self.engine;
        let unknown_member = req.member_id.is_empty();
        let mut new_group = false;
        if !exists {
            if !unknown_member {
                let response = join_error(ErrorCode::UnknownMemberId, req.member_id);
                eng.respond(rid, Response::JoinGroup(response));
                return;
            }
            new_group = true;
            self.create_group(&req.group_id);
        }
        let eng = &mut self.engine;
        let Some(g) = self.groups.get_mut(req.group_id.as_str()).and_then(|g| g.classic_mut()) else {
            return;
        };
        let writes_before = eng.fx.writes.len();
        if !accept_joining_member(g, &req.member_id, eng.config.group_max_size) {
            if g.has_member(&req.member_id) {
                let id = g.member(&req.member_id).map(|m| m.id.clone());
                g.remove(&req.member_id);
                if let Some(id) = id {
                    eng.cancel_session(g, &id);
                }
            }
            eng.respond(rid, Response::JoinGroup(join_error(ErrorCode::GroupMaxSizeReached, "")));
        } else if unknown_member {
            eng.join_new_member(g, rid, req);
        } else {
            eng.join_existing_member(g, rid, req);
        }
        if new_group && eng.fx.writes.len() == writes_before {
            // Kafka's Java coordinator commits a newly created group with an empty record;
            // the answer already built waits for that write.
            let answered = eng
                .fx
                .responses
                .iter()
                .position(|(r, _)| *r == rid)
                .map(|i| Box::new(eng.fx.responses.remove(i).1));
            let record = g.empty_record();
            eng.write_group(
                g,
                vec![Record::Group(Box::new(record))],
                PendingWrite::NewGroup { request: rid, answered },
            );
        }
    }
}

fn accept_joining_member(g: &Group, member_id: &str, max_size: i32) -> bool {
    let max = usize::try_from(max_size).unwrap_or(0);
    match g.state {
        GroupState::Empty | GroupState::Dead => true,
        // The cheap count first: a group below its cap needs no member lookup.
        GroupState::PreparingRebalance => {
            g.num_awaiting_join() < max || g.member(member_id).is_some_and(|m| m.awaiting_join().is_some())
        }
        GroupState::CompletingRebalance | GroupState::Stable => g.len() < max || g.has_member(member_id),
    }
}

fn rebalance_timeout(req: &JoinGroupRequest) -> i32 {
    req.effective_rebalance_timeout_ms()
}

impl Engine {
    fn join_new_member(&mut self, g: &mut Group, rid: crate::core::RequestId, req: JoinGroupRequest) {
        if g.is(GroupState::Dead) {
            self.respond(rid, Response::JoinGroup(join_error(ErrorCode::CoordinatorNotAvailable, "")));
            return;
        }
        if !g.supports_protocols(&req.protocol_type, &req.protocols) {
            self.respond(rid, Response::JoinGroup(join_error(ErrorCode::InconsistentGroupProtocol, "")));
            return;
        }
        let prefix = req.group_instance_id.as_deref().unwrap_or(&req.client_id).to_owned();
        // A generated id must never name someone already in the group: after a
        // restart the generator may be seeded as before, and two clients sharing
        // an id would each be taken for the other.
        let mut new_id = self.generate_member_id(&prefix);
        while g.position(&new_id).is_some() || g.pending_join.contains_key(&new_id) {
            new_id = self.generate_member_id(&prefix);
        }
        if let Some(instance) = req.group_instance_id.clone() {
            match g.static_member_id(&instance).cloned() {
                Some(old_id) => self.replace_static_member(g, rid, req, old_id, new_id),
                None => self.add_member_then_rebalance(g, rid, req, new_id),
            }
        } else if req.api_version >= 4 {
            let deadline = self.now + i64::from(req.session_timeout_ms);
            g.pending_join.insert(new_id.clone(), deadline);
            self.arm(TimerKey::Session(g.id.clone(), new_id.clone()), deadline);
            let response = join_error(ErrorCode::MemberIdRequired, str::to_owned(&new_id));
            self.respond(rid, Response::JoinGroup(response));
        } else {
            self.add_member_then_rebalance(g, rid, req, new_id);
        }
    }

    fn join_existing_member(
        &mut self,
        g: &mut Group,
        rid: crate::core::RequestId,
        mut req: JoinGroupRequest,
    ) {
        // Nothing below reads the request's member id again: moved, not copied.
        let member_id = std::mem::take(&mut req.member_id);
        if g.is(GroupState::Dead) {
            self.respond(rid, Response::JoinGroup(join_error(ErrorCode::CoordinatorNotAvailable, member_id)));
            return;
        }
        if !g.supports_protocols(&req.protocol_type, &req.protocols) {
            let response = join_error(ErrorCode::InconsistentGroupProtocol, member_id);
            self.respond(rid, Response::JoinGroup(response));
            return;
        }
        if let Some((id, _)) = g.pending_join.get_key_value(member_id.as_str()) {
            let id = id.clone();
            self.add_member_then_rebalance(g, rid, req, id);
            return;
        }
        // One lookup both validates a dynamic member and locates it.
        let position = g.position(&member_id);
        if let Err(error) = validate_member_at(g, &member_id, req.group_instance_id.as_deref(), position) {
            self.respond(rid, Response::JoinGroup(join_validation_error(error, member_id)));
            return;
        }
        let Some(i) = position else {
            self.respond(
                rid,
                Response::JoinGroup(join_validation_error(ErrorCode::UnknownMemberId, member_id)),
            );
            return;
        };
        match g.state {
            GroupState::PreparingRebalance => self.update_member_then_rebalance(g, i, rid, req),
            GroupState::CompletingRebalance => {
                if g.at(i).matches(&req.protocols) {
                    let members = if g.is_leader(&member_id) { g.join_members() } else { Vec::new() };
                    let response = current_generation(g, member_id, members);
                    self.respond(rid, Response::JoinGroup(response));
                } else {
                    self.update_member_then_rebalance(g, i, rid, req);
                }
            }
            GroupState::Stable => {
                if g.is_leader(&member_id) || !g.at(i).matches(&req.protocols) {
                    self.update_member_then_rebalance(g, i, rid, req);
                } else {
                    let response = current_generation(g, member_id, Vec::new());
                    self.respond(rid, Response::JoinGroup(response));
                }
            }
            GroupState::Empty | GroupState::Dead => {
                let response = join_validation_error(ErrorCode::UnknownMemberId, member_id);
                self.respond(rid, Response::JoinGroup(response));
            }
        }
    }

    fn update_member_then_rebalance(
        &mut self,
        g: &mut Group,
        i: usize,
        rid: crate::core::RequestId,
        req: JoinGroupRequest,
    ) {
        let member_id = g.at(i).id.clone();
        let reason = RebalanceReason::Rejoin {
            leader: g.is_leader(&member_id),
            member_id,
            state: g.state,
            client: req.reason.clone(),
        };
        let rebalance = rebalance_timeout(&req);
        g.rejoin_protocols(i, &req.protocols);
        let m = g.at_mut(i);
        m.rebalance_timeout_ms = rebalance;
        m.session_timeout_ms = req.session_timeout_ms;
        // A JoinGroup parked before is replaced and never answered, as in Kafka.
        g.set_awaiting_join(i, Some(rid));
        self.maybe_prepare_rebalance_or_complete_join(g, reason);
    }

    fn add_member_then_rebalance(
        &mut self,
        g: &mut Group,
        rid: crate::core::RequestId,
        req: JoinGroupRequest,
        id: Arc<str>,
    ) {
        let rebalance_timeout_ms = rebalance_timeout(&req);
        let reason = RebalanceReason::NewMember {
            member_id: id.clone(),
            instance: req.group_instance_id.as_deref().map(str::to_owned),
            client: req.reason,
        };
        let mut member = Member::new(
            id,
            req.group_instance_id.as_deref(),
            &req.client_id,
            &req.client_host,
            rebalance_timeout_ms,
            req.session_timeout_ms,
            MemberPayload::joining(&req.protocols),
        );
        member.is_new = true;
        if g.is(GroupState::PreparingRebalance) && g.previous_state == GroupState::Empty {
            g.new_member_added = true;
        }
        if g.len() == 0 {
            g.protocol_type = Some(req.protocol_type.detach());
        }
        g.add(member, Some(rid));
        let i = g.len() - 1;
        let timeout = self.config.new_member_join_timeout_ms;
        self.arm_session(g, i, timeout);
        self.maybe_prepare_rebalance_or_complete_join(g, reason);
    }

    /// §2.1.2 static member replacement.
    fn replace_static_member(
        &mut self,
        g: &mut Group,
        rid: crate::core::RequestId,
        req: JoinGroupRequest,
        old_id: Arc<str>,
        new_id: Arc<str>,
    ) {
        let current_leader = g.leader.clone();
        let Some(i) = g.position(&old_id) else { return };
        if let Some(instance) = req.group_instance_id.as_deref() {
            self.static_member_fenced(g, instance, &old_id, &new_id);
        }
        if let Some(parked) = g.set_awaiting_join(i, None) {
            let response = join_validation_error(ErrorCode::FencedInstanceId, str::to_owned(&old_id));
            self.respond(parked, Response::JoinGroup(response));
        }
        if let Some(parked) = g.at_mut(i).take_awaiting_sync() {
            self.respond(
                parked,
                Response::SyncGroup(group_types::SyncGroupResponse::error(ErrorCode::FencedInstanceId)),
            );
        }
        self.cancel_session(g, &old_id);
        g.rename(&old_id, new_id.clone());
        g.at_mut(i).is_new = false;
        let timeout = g.at(i).session_timeout_ms;
        self.arm_session(g, i, timeout);
        let old_protocols = g.at(i).payload.clone();
        let old_rebalance_timeout_ms = g.at(i).rebalance_timeout_ms;
        let old_session_timeout_ms = g.at(i).session_timeout_ms;
        let rebalance = rebalance_timeout(&req);
        g.rejoin_protocols(i, &req.protocols);
        g.at_mut(i).rebalance_timeout_ms = rebalance;
        g.at_mut(i).session_timeout_ms = req.session_timeout_ms;
        g.set_awaiting_join(i, Some(rid));
        match g.state {
            GroupState::Stable => {
                let selected = g.select_protocol();
                if g.protocol_name.as_deref().unwrap_or("") == selected.as_deref().unwrap_or("") {
                    let record = g.record(None);
                    let pending = StaticReplace {
                        group: g.id.clone(),
                        request: rid,
                        api_version: req.api_version,
                        generation: g.generation,
                        old_id,
                        new_id,
                        old_protocols,
                        old_rebalance_timeout_ms,
                        old_session_timeout_ms,
                        current_leader,
                    };
                    self.write_group(
                        g,
                        vec![Record::Group(Box::new(record))],
                        PendingWrite::StaticReplace(Box::new(pending)),
                    );
                } else {
                    let reason = RebalanceReason::StaticProtocolChange {
                        member_id: new_id,
                        instance: req.group_instance_id.map(String::from).unwrap_or_default(),
                        client: req.reason,
                    };
                    self.maybe_prepare_rebalance_or_complete_join(g, reason);
                }
            }
            GroupState::CompletingRebalance => {
                let reason = RebalanceReason::StaticRejoinDuringSync {
                    member_id: new_id,
                    instance: req.group_instance_id.map(String::from).unwrap_or_default(),
                    client: req.reason,
                };
                self.prepare_rebalance(g, reason);
            }
            _ => {}
        }
    }

    /// Completion of a Stable static replacement's write.
    pub(crate) fn finish_static_replace(
        &mut self,
        g: &mut Group,
        p: StaticReplace,
        result: Result<(), ErrorCode>,
    ) {
        let Some(i) = g.position(&p.new_id) else { return };
        // The replacement's JoinGroup may have been answered meanwhile (a rebalance
        // took it in, or another instance fenced it): then the member has moved on
        // with its new id, and neither answer nor undo is left to give.
        if g.at(i).awaiting_join() != Some(p.request) {
            return;
        }
        match result {
            // A rebalance began while the record was written: the parked join now
            // belongs to that join phase, which answers it with the next generation.
            Ok(()) if !g.is(GroupState::Stable) || g.generation != p.generation => {}
            Ok(()) => {
                // From version 9 the replacement learns whether it leads (and then
                // gets the members, skipping the assignment); before, it is told the
                // leader the group had when it rejoined.
                let (leader, is_leader) = if p.api_version >= 9 {
                    (g.leader.as_deref(), g.is_leader(&p.new_id))
                } else {
                    (p.current_leader.as_deref(), false)
                };
                let members = if is_leader { g.join_members() } else { Vec::new() };
                let new_id = MemberId::from(&*p.new_id);
                let response = generation_response(g, ErrorCode::None, leader, new_id, is_leader, members);
                g.set_awaiting_join(i, None);
                self.respond(p.request, Response::JoinGroup(response));
            }
            Err(error) => {
                g.restore_protocols(i, &p.old_protocols);
                g.at_mut(i).rebalance_timeout_ms = p.old_rebalance_timeout_ms;
                g.at_mut(i).session_timeout_ms = p.old_session_timeout_ms;
                g.set_awaiting_join(i, None);
                self.cancel_session(g, &p.new_id);
                g.rename(&p.new_id, p.old_id.clone());
                self.arm_session(g, i, p.old_session_timeout_ms);
                let error = crate::core::map_append_error(error);
                let leader = p.current_leader.as_deref();
                let response = generation_response(g, error, leader, MemberId::empty(), false, Vec::new());
                self.respond(p.request, Response::JoinGroup(response));
            }
        }
    }
}

/// The JoinGroup answer of the group's current generation, with its leader.
fn current_generation(
    g: &Group,
    member_id: MemberId,
    members: Vec<group_types::JoinGroupMember>,
) -> JoinGroupResponse {
    generation_response(g, ErrorCode::None, g.leader.as_deref(), member_id, false, members)
}

/// A JoinGroup answer of the group's current generation and protocol.
fn generation_response(
    g: &Group,
    error_code: ErrorCode,
    leader: Option<&str>,
    member_id: MemberId,
    skip_assignment: bool,
    members: Vec<group_types::JoinGroupMember>,
) -> JoinGroupResponse {
    JoinGroupResponse {
        error_code,
        generation_id: g.generation,
        protocol_type: g.protocol_type.clone(),
        protocol_name: g.protocol_name.clone(),
        leader_id: leader.unwrap_or("").into(),
        skip_assignment,
        member_id,
        members,
    }
}
