//! DescribeGroups, ListGroups and DeleteGroups (`kafka-semantics.md` §2.7-§2.9), and
//! the dispatch of write completions.

use group_types::{
    DeleteGroupsRequest, DeleteGroupsResponse, DeletedGroup, DescribeGroupsRequest, DescribeGroupsResponse,
    DescribedGroup, DescribedMember, ErrorCode, GroupId, GroupInstanceId, GroupState, ListGroupsRequest,
    ListGroupsResponse, ListedGroup, MemberId,
};

use crate::core::undo::Committed;
use crate::core::{
    CoordinatorCore, Engine, Group, GroupKind, PendingWrite, Record, RequestId, Response, TimerKey, consumer,
    share,
};

impl CoordinatorCore {
    /// Describes one group as DescribeGroups does (J: assignments shown in every state).
    /// From committed state: a group whose creation is not yet persisted is not
    /// there, one whose removal is not yet persisted still is.
    pub fn describe_group(&self, group_id: &str) -> DescribedGroup {
        self.describe_group_at(&GroupId::from(group_id), 0)
    }

    /// As [`describe_group`](Self::describe_group), answering as DescribeGroups
    /// version `api_version` does (a consumer group is an error from v6).
    ///
    /// The answer shares the request's `group_id` (no copy): it lives no longer
    /// than the request.
    fn describe_group_at(&self, group_id: &GroupId, api_version: i16) -> DescribedGroup {
        let g = match self.committed_view(group_id) {
            None => {
                return DescribedGroup {
                    error_code: ErrorCode::None,
                    group_id: group_id.clone(),
                    group_state: GroupState::Dead.as_str().to_owned(),
                    ..DescribedGroup::default()
                };
            }
            Some(Committed::Consumer(_) | Committed::Share(_)) => {
                return consumer::described_as_classic(group_id, api_version);
            }
            Some(Committed::Classic(g)) => g,
        };
        let stable = g.is(GroupState::Stable);
        let protocol = g.protocol_name.as_deref().unwrap_or("");
        DescribedGroup {
            error_code: ErrorCode::None,
            error_message: None,
            group_id: group_id.clone(),
            group_state: g.state.as_str().to_owned(),
            protocol_type: g.protocol_type.as_deref().unwrap_or_default().to_owned(),
            protocol_data: if stable { protocol.to_owned() } else { String::new() },
            members: g
                .members()
                .iter()
                .map(|m| DescribedMember {
                    member_id: MemberId::from(&*m.id),
                    group_instance_id: m.instance().map(GroupInstanceId::from),
                    client_id: m.client_id().to_owned(),
                    client_host: m.client_host().to_owned(),
                    member_metadata: if stable { m.metadata(protocol).to_vec() } else { Vec::new() },
                    member_assignment: m.payload.assignment().to_vec(),
                })
                .collect(),
            ..DescribedGroup::default()
        }
    }

    pub(crate) fn describe_groups(&mut self, rid: RequestId, req: DescribeGroupsRequest) {
        let groups = req.group_ids.iter().map(|id| self.describe_group_at(id, req.api_version)).collect();
        self.engine.respond(rid, Response::DescribeGroups(DescribeGroupsResponse { groups }));
    }

    /// The groups ListGroups would return for these filters, ordered by group id,
    /// from committed state.
    pub fn listed_groups(&self, req: &ListGroupsRequest) -> Vec<ListedGroup> {
        let type_ok = |group_type: &str| {
            req.types_filter.is_empty() || req.types_filter.iter().any(|t| t.eq_ignore_ascii_case(group_type))
        };
        // Committed state: the live groups, as they were before any uncommitted
        // change, and the ones an uncommitted change removed.
        let mut ids: Vec<&str> = self.groups.keys().map(|k| &**k).collect();
        ids.extend(
            self.engine
                .timeline
                .dirty_groups()
                .into_iter()
                .map(|k| &**k)
                .filter(|k| !self.groups.contains_key(*k)),
        );
        let mut listed: Vec<ListedGroup> = ids
            .into_iter()
            .filter_map(|id| self.committed_view(id).map(|g| (id, g)))
            .filter_map(|(id, g)| match g {
                Committed::Consumer(cg) => Some(consumer::listed(id, &cg)),
                Committed::Share(g) => Some(share::listed(id, &g)),
                Committed::Classic(g) if g.is(GroupState::Dead) => None,
                Committed::Classic(g) => Some(ListedGroup {
                    group_id: GroupId::from(&*g.id),
                    protocol_type: g.protocol_type.as_deref().unwrap_or_default().to_owned(),
                    group_state: g.state.as_str().to_owned(),
                    group_type: "classic".to_owned(),
                }),
            })
            .filter(|l| type_ok(&l.group_type))
            .filter(|l| {
                req.states_filter.is_empty()
                    || req.states_filter.iter().any(|s| s.eq_ignore_ascii_case(&l.group_state))
            })
            .collect();
        listed.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        listed
    }

    pub(crate) fn list_groups(&mut self, rid: RequestId, req: ListGroupsRequest) {
        let groups = self.listed_groups(&req);
        self.engine
            .respond(rid, Response::ListGroups(ListGroupsResponse { error_code: ErrorCode::None, groups }));
    }

    /// DeleteGroups. Share groups with share state go first through
    /// Kafka's share pre-step (`GroupCoordinatorService.deleteGroups`): their
    /// partitions are written as deleting and their state is asked deleted of the
    /// share coordinator; the request waits for those answers
    /// ([`share_group_state_deleted`](CoordinatorCore::share_group_state_deleted)),
    /// and a group whose state could not be deleted is answered with the error and
    /// kept.
    pub(crate) fn delete_groups(&mut self, rid: RequestId, req: DeleteGroupsRequest) {
        let waiting = self.share_delete_pre_step(&req);
        if waiting.is_empty() {
            self.delete_groups_now(rid, &req.group_ids, Vec::new());
        } else {
            self.engine.share_deletes.push(share::ParkedDelete {
                request: rid,
                groups: req.group_ids,
                waiting,
                failed: Vec::new(),
            });
        }
    }

    /// Deletes `group_ids` but those in `failed`, which are answered with their error.
    pub(crate) fn delete_groups_now(
        &mut self,
        rid: RequestId,
        group_ids: &[GroupId],
        failed: Vec<(GroupId, ErrorCode)>,
    ) {
        let mut response = DeleteGroupsResponse::default();
        let mut records = Vec::new();
        let mut deleted = Vec::new();
        for id in group_ids {
            if response.results.iter().any(|r| r.group_id == *id) {
                continue;
            }
            if let Some((_, code)) = failed.iter().find(|(g, _)| g == id) {
                response.results.push(DeletedGroup { group_id: id.clone(), error_code: *code });
                continue;
            }
            let code = match self.groups.get_key_value(id.as_str()) {
                None => ErrorCode::GroupIdNotFound,
                Some((_, GroupKind::Classic(g))) if g.is(GroupState::Dead) => ErrorCode::GroupIdNotFound,
                Some((_, GroupKind::Classic(g))) if !g.is(GroupState::Empty) => ErrorCode::NonEmptyGroup,
                Some((_, kind @ (GroupKind::Consumer(_) | GroupKind::Share(_)))) if kind.has_members() => {
                    ErrorCode::NonEmptyGroup
                }
                Some((gid, kind)) => {
                    let gid = gid.clone();
                    let offsets = self.offsets.get(&gid);
                    for tp in offsets.iter().flat_map(|o| o.keys()) {
                        records.push(Record::OffsetTombstone { group_id: gid.clone(), partition: tp });
                    }
                    // A partition with only pending transactional offsets gets one
                    // tombstone too (`OffsetMetadataManager.deleteAllOffsets`).
                    let pending = self.transactions.partitions_of(&gid);
                    for tp in pending.iter().filter(|tp| !offsets.is_some_and(|o| o.contains_key(tp))) {
                        records
                            .push(Record::OffsetTombstone { group_id: gid.clone(), partition: tp.clone() });
                    }
                    records.extend(kind.deletion_records(&gid));
                    deleted.push((gid.clone(), offsets.map_or(0, |o| o.len())));
                    self.remove_group(&gid);
                    self.remove_offsets(&gid);
                    for tp in &pending {
                        self.drop_pending(&gid, tp, &mut records);
                    }
                    ErrorCode::None
                }
            };
            response.results.push(DeletedGroup { group_id: id.clone(), error_code: code });
        }
        if records.is_empty() {
            self.engine.respond(rid, Response::DeleteGroups(response));
            return;
        }
        self.engine.write(records, PendingWrite::DeleteGroups { request: rid, response, deleted });
    }

    /// What a write's completion does besides committing or reverting the
    /// timeline: answer its requester, and Kafka's own reactions to a failure.
    pub(crate) fn on_write_completed(&mut self, pending: PendingWrite, result: Result<(), ErrorCode>) {
        match pending {
            PendingWrite::NewGroup { request, answered } => {
                // J answers what the join built even when the group's record failed;
                // a join that parked instead was answered by the group it parked in
                // (when a revert removed that group) or will be by its barrier.
                if let Some(response) = answered {
                    self.engine.respond(request, *response);
                }
            }
            PendingWrite::LeaderSync { group, generation, assignments } => {
                if let Some(g) = self.groups.get_mut(&group).and_then(GroupKind::classic_mut) {
                    self.engine.finish_leader_sync(g, generation, assignments, result);
                }
            }
            PendingWrite::StaticReplace(p) => {
                // A group a revert removed answered the parked join itself.
                if let Some(g) = self.groups.get_mut(&p.group).and_then(GroupKind::classic_mut) {
                    self.engine.finish_static_replace(g, *p, result);
                }
            }
            PendingWrite::Commit { request, mut response } => {
                if let Err(error) = result {
                    response.set_all(crate::core::map_operation_error(error));
                }
                self.engine.respond(request, Response::OffsetCommit(response));
            }
            PendingWrite::DeleteGroups { request, mut response, deleted } => {
                if result.is_ok() {
                    for (id, offsets) in &deleted {
                        self.engine.group_deleted(id, *offsets);
                    }
                }
                if let Err(error) = result {
                    let mapped = crate::core::map_operation_error(error);
                    for r in &mut response.results {
                        if r.error_code == ErrorCode::None {
                            r.error_code = mapped;
                        }
                    }
                }
                self.engine.respond(request, Response::DeleteGroups(response));
            }
            PendingWrite::OffsetDelete { request, response } => {
                let response = match result {
                    Ok(()) => response,
                    Err(error) => group_types::OffsetDeleteResponse {
                        error_code: crate::core::map_operation_error(error),
                        partitions: std::collections::BTreeMap::new(),
                    },
                };
                self.engine.respond(request, Response::OffsetDelete(response));
            }
            PendingWrite::Expiration { removals } => {
                if result.is_ok() {
                    for (id, count, group_removed) in removals {
                        self.engine.offsets_expired(&id, count, group_removed);
                    }
                }
            }
            PendingWrite::Logged => {}
            PendingWrite::ShareHeartbeat { answer, initialize } => {
                if let Some((request, response)) = answer {
                    let response = match result {
                        Ok(()) => *response,
                        Err(error) => response.with_error(crate::core::map_operation_error(error)),
                    };
                    self.engine.respond(request, response);
                }
                if let (Ok(()), Some(initialize)) = (result, initialize) {
                    self.engine.share_state_initializations.push(*initialize);
                }
            }
            PendingWrite::ShareOffsetsAlter(parked) => self.share_offsets_alter_written(*parked, result),
            PendingWrite::ShareOffsetsDelete { parked, ask } => {
                self.share_offsets_delete_written(*parked, ask, result);
            }
            PendingWrite::RegexResolution { group, resolved } => {
                if result.is_err() {
                    self.regex_resolution_voided(&group, resolved);
                }
            }
            PendingWrite::RetryTimer { key } => {
                if result.is_err() {
                    let at = self.engine.now + crate::core::consumer::TIMER_RETRY_BACKOFF_MS;
                    self.engine.arm(key, at);
                }
            }
            PendingWrite::Respond { request, response } => {
                let response = *response;
                let response = match (result, &response) {
                    (Ok(()), _) => response,
                    // Only a classic member's JoinGroup into a consumer group answers
                    // this way; when its write fails, Kafka's service answers without
                    // the member id (the shard's response was never completed).
                    (Err(error), Response::JoinGroup(_)) => Response::JoinGroup(crate::core::join_error(
                        crate::core::map_operation_error(error),
                        String::new(),
                    )),
                    (Err(error), _) => response.with_error(crate::core::map_operation_error(error)),
                };
                self.engine.respond(request, response);
            }
        }
    }
}

impl Engine {
    /// A write failed: reported for logs and metrics.
    pub(crate) fn write_failed(&mut self, error: ErrorCode, voided: usize) {
        self.fx.events.push(crate::core::GroupEvent::WriteFailed { error, writes: voided });
    }

    /// Cancels every deadline of a group leaving the core (deleted, or reverted).
    pub(crate) fn cancel_group_timers(&mut self, g: &Group) {
        for m in g.members() {
            self.cancel_session(g, &m.id);
        }
        for id in g.pending_join.keys() {
            self.cancel(TimerKey::Session(g.id.clone(), id.clone()));
        }
        if g.join_timer.is_some() {
            self.cancel(TimerKey::Join(g.id.clone()));
        }
        if g.sync_timer.is_some() {
            self.cancel(TimerKey::Sync(g.id.clone()));
        }
    }

    /// Arms again every deadline of a group a revert brings back.
    pub(crate) fn rearm_group(&mut self, g: &Group) {
        for m in g.members() {
            if let Some(deadline) = m.session_deadline.get() {
                self.arm(TimerKey::Session(g.id.clone(), m.id.clone()), deadline);
            }
        }
        for (id, deadline) in &g.pending_join {
            self.arm(TimerKey::Session(g.id.clone(), id.clone()), *deadline);
        }
        if let Some((deadline, _)) = g.join_timer {
            self.arm(TimerKey::Join(g.id.clone()), deadline);
        }
        if let Some((deadline, _)) = g.sync_timer {
            self.arm(TimerKey::Sync(g.id.clone()), deadline);
        }
    }

    /// A group a revert removes: every request it parked is answered `error`.
    pub(crate) fn drop_group(&mut self, g: Group, error: ErrorCode) {
        self.cancel_group_timers(&g);
        for m in g.members() {
            if let Some(parked) = m.awaiting_join() {
                let response = crate::core::join_error(error, str::to_owned(&m.id));
                self.respond(parked, Response::JoinGroup(response));
            }
            if let Some(parked) = m.awaiting_sync() {
                self.respond(parked, Response::SyncGroup(group_types::SyncGroupResponse::error(error)));
            }
        }
    }
}
