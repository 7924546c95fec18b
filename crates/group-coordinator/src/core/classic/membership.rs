//! Heartbeat and LeaveGroup (`kafka-semantics.md` §2.3, §2.4).

use std::sync::Arc;

use group_types::{
    ErrorCode, GroupState, HeartbeatRequest, HeartbeatResponse, LeaveGroupRequest, LeaveGroupResponse,
    LeaveMemberResponse,
};

use crate::core::{CoordinatorCore, RebalanceReason, RequestId, Response, validate_member};

impl CoordinatorCore {
    pub(crate) fn heartbeat(&mut self, rid: RequestId, req: HeartbeatRequest) {
        if self.consumer_group_ref(&req.group_id).is_some() {
            self.consumer_group_classic_heartbeat(rid, &req);
            return;
        }
        let code = self.heartbeat_code(&req);
        self.engine.respond(rid, Response::Heartbeat(HeartbeatResponse { error_code: code }));
    }

    fn heartbeat_code(&mut self, req: &HeartbeatRequest) -> ErrorCode {
        if req.group_id.is_empty() {
            return ErrorCode::InvalidGroupId;
        }
        let Some(g) = self.groups.get_mut(req.group_id.as_str()).and_then(|g| g.classic_mut()) else {
            return ErrorCode::UnknownMemberId;
        };
        if g.is(GroupState::Dead) {
            return ErrorCode::CoordinatorNotAvailable;
        }
        let i = match req.group_instance_id.as_deref() {
            // Dynamic members (the common case): one lookup validates and locates.
            None => match g.position(&req.member_id) {
                Some(i) => i,
                None => return ErrorCode::UnknownMemberId,
            },
            Some(instance) => {
                if let Err(code) = validate_member(g, &req.member_id, Some(instance)) {
                    return code;
                }
                let Some(i) = g.position(&req.member_id) else { return ErrorCode::UnknownMemberId };
                i
            }
        };
        if req.generation_id != g.generation {
            return ErrorCode::IllegalGeneration;
        }
        let code = match g.state {
            GroupState::Empty | GroupState::Dead => return ErrorCode::UnknownMemberId,
            GroupState::PreparingRebalance => ErrorCode::RebalanceInProgress,
            GroupState::CompletingRebalance | GroupState::Stable => ErrorCode::None,
        };
        let timeout = g.at(i).session_timeout_ms;
        self.engine.arm_session(g, i, timeout);
        code
    }

    pub(crate) fn leave_group(&mut self, rid: RequestId, req: LeaveGroupRequest) {
        let eng = &mut self.engine;
        if req.group_id.is_empty() {
            let response = LeaveGroupResponse { error_code: ErrorCode::InvalidGroupId, members: Vec::new() };
            eng.respond(rid, Response::LeaveGroup(response));
            return;
        }
        let echo = |m: &group_types::MemberIdentity, error_code| LeaveMemberResponse {
            member_id: m.member_id.clone(),
            group_instance_id: m.group_instance_id.clone(),
            error_code,
        };
        if self.consumer_group_ref(&req.group_id).is_some() {
            self.consumer_group_classic_leave(rid, &req);
            return;
        }
        let eng = &mut self.engine;
        let Some(g) = self.groups.get_mut(req.group_id.as_str()).and_then(|g| g.classic_mut()) else {
            let members = req.members.iter().map(|m| echo(m, ErrorCode::UnknownMemberId)).collect();
            eng.respond(
                rid,
                Response::LeaveGroup(LeaveGroupResponse { error_code: ErrorCode::None, members }),
            );
            return;
        };
        if g.is(GroupState::Dead) {
            let response =
                LeaveGroupResponse { error_code: ErrorCode::CoordinatorNotAvailable, members: Vec::new() };
            eng.respond(rid, Response::LeaveGroup(response));
            return;
        }
        let mut members = Vec::with_capacity(req.members.len());
        let mut left: Vec<Arc<str>> = Vec::new();
        for identity in &req.members {
            let reason = identity.reason.as_deref();
            let code = if identity.member_id.is_empty() {
                match identity.group_instance_id.as_deref().and_then(|i| g.static_member_id(i)).cloned() {
                    Some(id) => {
                        eng.member_left(
                            g,
                            &id,
                            identity.group_instance_id.as_deref().map(str::to_owned),
                            reason,
                        );
                        eng.remove_current_member(g, &id);
                        left.push(id);
                        ErrorCode::None
                    }
                    None => ErrorCode::UnknownMemberId,
                }
            } else if let Some((id, _)) = g.pending_join.get_key_value(identity.member_id.as_str()) {
                let id: Arc<str> = id.clone();
                g.pending_join.remove(&id);
                eng.cancel_session(g, &id);
                eng.member_left(g, &id, None, reason);
                left.push(id);
                ErrorCode::None
            } else {
                match validate_member(g, &identity.member_id, identity.group_instance_id.as_deref()) {
                    Ok(()) => match g
                        .member(&identity.member_id)
                        .map(|m| (m.id.clone(), m.instance().map(str::to_owned)))
                    {
                        Some((id, instance)) => {
                            eng.member_left(g, &id, instance, reason);
                            eng.remove_current_member(g, &id);
                            left.push(id);
                            ErrorCode::None
                        }
                        None => ErrorCode::UnknownMemberId,
                    },
                    Err(code) => code,
                }
            };
            members.push(echo(identity, code));
        }
        if !left.is_empty() {
            match g.state {
                GroupState::Stable | GroupState::CompletingRebalance => {
                    eng.maybe_prepare_rebalance_or_complete_join(g, RebalanceReason::Left { members: left })
                }
                GroupState::PreparingRebalance => eng.maybe_complete_join_phase(g),
                _ => {}
            }
        }
        eng.respond(rid, Response::LeaveGroup(LeaveGroupResponse { error_code: ErrorCode::None, members }));
    }
}
