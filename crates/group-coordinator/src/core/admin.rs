//! DescribeGroups, ListGroups and DeleteGroups (`kafka-semantics.md` §2.7-§2.9), and
//! the dispatch of write completions.

use std::sync::Arc;

use group_types::{
    DeleteGroupsRequest, DeleteGroupsResponse, DeletedGroup, DescribeGroupsRequest, DescribeGroupsResponse,
    DescribedGroup, DescribedMember, ErrorCode, GroupState, ListGroupsRequest, ListGroupsResponse,
    ListedGroup,
};

use crate::core::{CoordinatorCore, Group, PendingWrite, Record, RequestId, Response, TimerKey};

impl CoordinatorCore {
    /// Describes one group as DescribeGroups does (J: assignments shown in every state).
    pub fn describe_group(&self, group_id: &str) -> DescribedGroup {
        let Some(g) = self.groups.get(group_id) else {
            return DescribedGroup {
                error_code: ErrorCode::None,
                group_id: group_id.to_owned(),
                group_state: GroupState::Dead.as_str().to_owned(),
                ..DescribedGroup::default()
            };
        };
        let stable = g.is(GroupState::Stable);
        let protocol = g.protocol_name.as_deref().unwrap_or("");
        DescribedGroup {
            error_code: ErrorCode::None,
            group_id: group_id.to_owned(),
            group_state: g.state.as_str().to_owned(),
            protocol_type: g.protocol_type.clone().unwrap_or_default(),
            protocol_data: if stable { protocol.to_owned() } else { String::new() },
            members: g
                .members()
                .iter()
                .map(|m| DescribedMember {
                    member_id: str::to_owned(&m.id),
                    group_instance_id: m.instance.clone(),
                    client_id: m.client_id.clone(),
                    client_host: m.client_host.clone(),
                    member_metadata: if stable { m.metadata(protocol).to_vec() } else { Vec::new() },
                    member_assignment: m.assignment.clone(),
                })
                .collect(),
        }
    }

    pub(crate) fn describe_groups(&mut self, rid: RequestId, req: DescribeGroupsRequest) {
        let groups = req.group_ids.iter().map(|id| self.describe_group(id)).collect();
        self.engine.respond(rid, Response::DescribeGroups(DescribeGroupsResponse { groups }));
    }

    /// The groups ListGroups would return for these filters, ordered by group id.
    pub fn listed_groups(&self, req: &ListGroupsRequest) -> Vec<ListedGroup> {
        let type_ok =
            req.types_filter.is_empty() || req.types_filter.iter().any(|t| t.eq_ignore_ascii_case("classic"));
        if !type_ok {
            return Vec::new();
        }
        let mut listed: Vec<ListedGroup> = self
            .groups
            .values()
            .filter(|g| !g.is(GroupState::Dead))
            .filter(|g| {
                req.states_filter.is_empty()
                    || req.states_filter.iter().any(|s| s.eq_ignore_ascii_case(g.state.as_str()))
            })
            .map(|g| ListedGroup {
                group_id: str::to_owned(&g.id),
                protocol_type: g.protocol_type.clone().unwrap_or_default(),
                group_state: g.state.as_str().to_owned(),
                group_type: "classic".to_owned(),
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

    pub(crate) fn delete_groups(&mut self, rid: RequestId, req: DeleteGroupsRequest) {
        let mut response = DeleteGroupsResponse::default();
        let mut removed: Vec<Group> = Vec::new();
        let mut records = Vec::new();
        for id in &req.group_ids {
            if response.results.iter().any(|r| r.group_id == *id) {
                continue;
            }
            let code = match self.groups.get(id.as_str()) {
                None => ErrorCode::GroupIdNotFound,
                Some(g) if g.is(GroupState::Dead) => ErrorCode::GroupIdNotFound,
                Some(g) if !g.is(GroupState::Empty) => ErrorCode::NonEmptyGroup,
                Some(_) => {
                    let Some(mut g) = self.groups.remove(id.as_str()) else { continue };
                    for tp in g.offsets.keys() {
                        records
                            .push(Record::OffsetTombstone { group_id: g.id.clone(), partition: tp.clone() });
                    }
                    records.push(Record::GroupTombstone { group_id: g.id.clone() });
                    let pending: Vec<Arc<str>> = g.pending_join.keys().cloned().collect();
                    for member in pending {
                        self.engine.cancel(TimerKey::Session(g.id.clone(), member));
                    }
                    if g.join_timer.take().is_some() {
                        self.engine.cancel(TimerKey::Join(g.id.clone()));
                    }
                    removed.push(g);
                    ErrorCode::None
                }
            };
            response.results.push(DeletedGroup { group_id: id.clone(), error_code: code });
        }
        if records.is_empty() {
            self.engine.respond(rid, Response::DeleteGroups(response));
            return;
        }
        self.engine.write(records, PendingWrite::DeleteGroups { request: rid, response, removed });
    }

    pub(crate) fn on_write_completed(&mut self, pending: PendingWrite, result: Result<(), ErrorCode>) {
        match pending {
            PendingWrite::NewGroup { group, request, answered } => match result {
                Ok(()) => {
                    if let Some(response) = answered {
                        self.engine.respond(request, response);
                    }
                }
                Err(error) => {
                    // The group never existed: Kafka reverts to the snapshot before it.
                    if let Some(g) = self.groups.remove(&group) {
                        for m in g.members() {
                            self.engine.cancel_session(&g, &m.id);
                        }
                        for id in g.pending_join.keys() {
                            self.engine.cancel_session(&g, id);
                        }
                        if g.join_timer.is_some() {
                            self.engine.cancel(TimerKey::Join(group.clone()));
                        }
                    }
                    let response = answered.unwrap_or_else(|| {
                        Response::JoinGroup(crate::core::join_error(
                            crate::core::map_operation_error(error),
                            "",
                        ))
                    });
                    self.engine.respond(request, response);
                }
            },
            PendingWrite::LeaderSync { group, generation, assignments } => {
                if let Some(g) = self.groups.get_mut(&group) {
                    self.engine.finish_leader_sync(g, generation, assignments, result);
                }
            }
            PendingWrite::StaticReplace(p) => {
                if let Some(g) = self.groups.get_mut(&p.group) {
                    self.engine.finish_static_replace(g, *p, result);
                }
            }
            PendingWrite::Commit { group, request, created_group, offsets, response } => {
                self.finish_commit(group, request, created_group, offsets, response, result)
            }
            PendingWrite::DeleteGroups { request, mut response, removed } => {
                if let Err(error) = result {
                    let mapped = crate::core::map_operation_error(error);
                    for g in removed {
                        if let Some(r) = response.results.iter_mut().find(|r| *r.group_id == *g.id) {
                            r.error_code = mapped;
                        }
                        self.groups.insert(g.id.clone(), g);
                    }
                }
                self.engine.respond(request, Response::DeleteGroups(response));
            }
            PendingWrite::OffsetDelete { group, request, partitions, response } => {
                self.finish_offset_delete(group, request, partitions, response, result)
            }
            PendingWrite::Expiration { removals } => self.finish_expiration(removals, result),
            PendingWrite::Logged => {}
        }
    }
}
