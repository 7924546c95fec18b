//! SyncGroup (`kafka-semantics.md` §2.2): the leader's assignment is persisted, then
//! handed to every member.

use bytes::Bytes;
use group_types::{ErrorCode, GroupState, SyncGroupRequest, SyncGroupResponse};

use crate::core::{
    CoordinatorCore, Engine, Group, PendingWrite, Record, RequestId, Response, validate_member_at,
};

fn inconsistent(given: Option<&str>, current: Option<&str>) -> bool {
    matches!((given, current), (Some(a), Some(b)) if a != b)
}

impl CoordinatorCore {
    pub(crate) fn sync_group(&mut self, rid: RequestId, req: SyncGroupRequest) {
        let eng = &mut self.engine;
        let error = |code| Response::SyncGroup(SyncGroupResponse::error(code));
        if req.group_id.is_empty() {
            eng.respond(rid, error(ErrorCode::InvalidGroupId));
            return;
        }
        if self.consumer_group_ref(&req.group_id).is_some() {
            self.consumer_group_classic_sync(rid, &req);
            return;
        }
        let eng = &mut self.engine;
        let Some(g) = self.groups.get_mut(req.group_id.as_str()).and_then(|g| g.classic_mut()) else {
            eng.respond(rid, error(ErrorCode::UnknownMemberId));
            return;
        };
        if g.is(GroupState::Dead) {
            eng.respond(rid, error(ErrorCode::CoordinatorNotAvailable));
            return;
        }
        // One lookup both validates a dynamic member and locates it.
        let position = g.position(&req.member_id);
        if let Err(code) = validate_member_at(g, &req.member_id, req.group_instance_id.as_deref(), position) {
            eng.respond(rid, error(code));
            return;
        }
        if req.generation_id != g.generation {
            eng.respond(rid, error(ErrorCode::IllegalGeneration));
            return;
        }
        if inconsistent(req.protocol_type.as_deref(), g.protocol_type.as_deref())
            || inconsistent(req.protocol_name.as_deref(), g.protocol_name.as_deref())
        {
            eng.respond(rid, error(ErrorCode::InconsistentGroupProtocol));
            return;
        }
        let Some(i) = position else {
            eng.respond(rid, error(ErrorCode::UnknownMemberId));
            return;
        };
        match g.state {
            GroupState::PreparingRebalance => eng.respond(rid, error(ErrorCode::RebalanceInProgress)),
            GroupState::Empty | GroupState::Dead => eng.respond(rid, error(ErrorCode::UnknownMemberId)),
            GroupState::CompletingRebalance => {
                // A second SyncGroup of the member replaces the first, as Kafka's
                // `setAwaitingSyncFuture` does.
                let _replaced = g.at_mut(i).set_awaiting_sync(rid);
                eng.remove_pending_sync(g, i);
                if g.is_leader(&req.member_id) {
                    // By member position (members the leader left out get an empty
                    // assignment; a later entry for the same member wins). Positions
                    // cannot move before the write completes: any change of membership
                    // starts a rebalance, and `finish_leader_sync` then does nothing.
                    let mut assignments: Vec<Bytes> = vec![Bytes::new(); g.len()];
                    let mut next = 0;
                    for a in req.assignments {
                        if let Some(j) = g.position_from(&a.member_id, next) {
                            assignments[j] = a.assignment;
                            next = j + 1;
                        }
                    }
                    let record = g.record(Some(&assignments));
                    let pending = PendingWrite::LeaderSync {
                        group: g.id.clone(),
                        generation: g.generation,
                        assignments,
                    };
                    eng.write_group(g, vec![Record::Group(Box::new(record))], pending);
                }
            }
            GroupState::Stable => {
                eng.remove_pending_sync(g, i);
                let response = SyncGroupResponse {
                    error_code: ErrorCode::None,
                    protocol_type: g.protocol_type.clone(),
                    protocol_name: g.protocol_name.clone(),
                    assignment: Bytes::copy_from_slice(g.at(i).payload.assignment()),
                };
                eng.respond(rid, Response::SyncGroup(response));
            }
        }
    }
}

impl Engine {
    fn remove_pending_sync(&mut self, g: &mut Group, i: usize) {
        g.set_pending_sync(i, false);
        match g.state {
            GroupState::CompletingRebalance | GroupState::Stable => {
                if g.has_received_all_syncs() {
                    self.cancel_sync_timer(g);
                }
            }
            _ => self.cancel_sync_timer(g),
        }
    }

    /// Completion of the leader's assignment write.
    pub(crate) fn finish_leader_sync(
        &mut self,
        g: &mut Group,
        generation: i32,
        assignments: Vec<Bytes>,
        result: Result<(), ErrorCode>,
    ) {
        if !g.is(GroupState::CompletingRebalance) || g.generation != generation {
            return;
        }
        match result {
            Ok(()) => {
                for i in 0..g.len() {
                    let assignment = assignments.get(i).map_or(&[][..], |a| &a[..]);
                    let payload = g.at(i).payload.with_assignment(assignment);
                    g.at_mut(i).payload = payload;
                }
                self.propagate_assignment(g, ErrorCode::None);
                self.transition(g, GroupState::Stable);
            }
            Err(error) => {
                self.reset_and_propagate_assignment_with_error(g, crate::core::map_append_error(error));
                let reason = crate::core::RebalanceReason::AssignmentWriteFailed {
                    error,
                    member_id: g.leader.clone(),
                };
                self.maybe_prepare_rebalance_or_complete_join(g, reason);
            }
        }
    }
}
