//! Authorization on the request path: every request is checked against the
//! [`Authorizer`] before it reaches a group's core, as Kafka's `KafkaApis` checks it
//! before calling its group coordinator. A request denied on its group is answered
//! `GROUP_AUTHORIZATION_FAILED` without touching the core; partitions of denied
//! topics are answered `TOPIC_AUTHORIZATION_FAILED` and removed from the request
//! before the core sees it.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use std::sync::Arc;

use group_types::{
    DeleteGroupsRequest, DeleteGroupsResponse, DeletedGroup, DescribeGroupsRequest, DescribeGroupsResponse,
    DescribedGroup, ErrorCode, HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
    LeaveGroupRequest, LeaveGroupResponse, ListGroupsRequest, ListGroupsResponse, OffsetCommitRequest,
    OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchData, OffsetFetchRequest,
    OffsetFetchResponse, SyncGroupRequest, SyncGroupResponse,
};

use super::{GroupCoordinator, Inner, Outcome, Pending, ResponseKind, Slot, lock};
use crate::{AclOperation, CoordinatorError, Request, RequestContext, Resource, Response};

/// Topics and their partitions, as a request names them.
type Partitions = Vec<(String, Vec<i32>)>;

/// What authorization decided for one request.
enum Admission {
    /// Answered without reaching the core.
    Answered(Response),
    /// Goes to the core (possibly trimmed); the answer is completed by the fix-up.
    Admitted(Request, Fixup),
}

/// How to complete the core's answer to an admitted request.
enum Fixup {
    /// Nothing was trimmed.
    Nothing,
    /// OffsetCommit partitions of denied topics.
    Commit(Partitions),
    /// OffsetFetch partitions of denied topics.
    Fetch(Partitions),
    /// OffsetFetch of every offset: topics the caller may not describe are left out.
    FetchAll,
    /// OffsetDelete partitions of denied topics.
    OffsetDelete(Partitions),
    /// DescribeGroups: per requested id, the denial (or `None` for the core's entry).
    Describe(Vec<Option<DescribedGroup>>),
    /// DeleteGroups: per distinct id, the denial (or `None` for the core's result).
    Delete(Vec<Option<DeletedGroup>>),
}

fn operation_name(operation: AclOperation) -> &'static str {
    match operation {
        AclOperation::Read => "READ",
        AclOperation::Describe => "DESCRIBE",
        AclOperation::Delete => "DELETE",
    }
}

fn resource_name(resource: Resource<'_>) -> &str {
    match resource {
        Resource::Group(name) | Resource::Topic(name) => name,
        Resource::Cluster => "kafka-cluster",
    }
}

fn group_denied(request: &Request) -> Response {
    let code = ErrorCode::GroupAuthorizationFailed;
    match request {
        Request::JoinGroup(r) => {
            // Kafka's `JoinGroupRequest.getErrorResponse`: protocol name null from v7, "" before.
            let protocol_name = (r.api_version < 7).then(String::new);
            Response::JoinGroup(JoinGroupResponse { protocol_name, ..JoinGroupResponse::error(code, "") })
        }
        Request::SyncGroup(_) => Response::SyncGroup(SyncGroupResponse::error(code)),
        Request::Heartbeat(_) => Response::Heartbeat(HeartbeatResponse { error_code: code }),
        Request::LeaveGroup(_) => {
            Response::LeaveGroup(LeaveGroupResponse { error_code: code, members: Vec::new() })
        }
        Request::OffsetCommit(r) => Response::OffsetCommit(OffsetCommitResponse::uniform(r, code)),
        Request::OffsetFetch(_) => {
            Response::OffsetFetch(OffsetFetchResponse { error_code: code, offsets: BTreeMap::new() })
        }
        Request::OffsetDelete(_) => {
            Response::OffsetDelete(OffsetDeleteResponse { error_code: code, partitions: BTreeMap::new() })
        }
        Request::DescribeGroups(_) => Response::DescribeGroups(DescribeGroupsResponse::default()),
        Request::ListGroups(_) => {
            Response::ListGroups(ListGroupsResponse { error_code: code, groups: Vec::new() })
        }
        Request::DeleteGroups(_) => Response::DeleteGroups(DeleteGroupsResponse::default()),
    }
}

fn described_error(group_id: &str) -> DescribedGroup {
    DescribedGroup {
        error_code: ErrorCode::GroupAuthorizationFailed,
        group_id: group_id.to_owned(),
        ..DescribedGroup::default()
    }
}

fn deleted_error(group_id: &str) -> DeletedGroup {
    DeletedGroup { group_id: group_id.to_owned(), error_code: ErrorCode::GroupAuthorizationFailed }
}

impl Inner {
    /// Asks the authorizer; a denial is counted and reported when `audited`.
    fn allowed(
        &self,
        context: &RequestContext,
        operation: AclOperation,
        resource: Resource<'_>,
        audited: bool,
    ) -> bool {
        let ok = self.authorizer.authorize(context, operation, resource);
        if !ok && audited {
            self.runtime_counters.authorization_failed(operation_name(operation), resource_name(resource));
        }
        ok
    }

    /// Removes from `topics` those `context` may not `operation`, returning them.
    fn deny_topics<T>(
        &self,
        context: &RequestContext,
        operation: AclOperation,
        topics: &mut BTreeMap<String, T>,
        partitions: impl Fn(&T) -> Vec<i32>,
    ) -> Partitions {
        let mut denied = Vec::new();
        topics.retain(|topic, value| {
            let ok = self.allowed(context, operation, Resource::Topic(topic), true);
            if !ok {
                denied.push((topic.clone(), partitions(value)));
            }
            ok
        });
        denied
    }

    fn admit(&self, context: &RequestContext, mut request: Request) -> Admission {
        let (operation, group) = match &request {
            Request::JoinGroup(r) => (AclOperation::Read, r.group_id.as_str()),
            Request::SyncGroup(r) => (AclOperation::Read, r.group_id.as_str()),
            Request::Heartbeat(r) => (AclOperation::Read, r.group_id.as_str()),
            Request::LeaveGroup(r) => (AclOperation::Read, r.group_id.as_str()),
            Request::OffsetCommit(r) => (AclOperation::Read, r.group_id.as_str()),
            Request::OffsetFetch(r) => (AclOperation::Describe, r.group_id.as_str()),
            Request::OffsetDelete(r) => (AclOperation::Delete, r.group_id.as_str()),
            Request::DescribeGroups(_) | Request::ListGroups(_) | Request::DeleteGroups(_) => {
                return self.admit_admin(context, request);
            }
        };
        if !self.allowed(context, operation, Resource::Group(group), true) {
            return Admission::Answered(group_denied(&request));
        }
        let fixup = match &mut request {
            Request::OffsetCommit(r) => {
                let denied = self.deny_topics(context, AclOperation::Read, &mut r.offsets, |p| {
                    p.keys().copied().collect()
                });
                if denied.is_empty() {
                    Fixup::Nothing
                } else if r.offsets.is_empty() {
                    // Kafka does not call its coordinator when no topic is left.
                    return Admission::Answered(Fixup::Commit(denied).apply_to(
                        self,
                        context,
                        Response::OffsetCommit(OffsetCommitResponse::default()),
                    ));
                } else {
                    Fixup::Commit(denied)
                }
            }
            Request::OffsetFetch(r) => match &mut r.topics {
                None => Fixup::FetchAll,
                Some(topics) => {
                    let denied = self.deny_topics(context, AclOperation::Describe, topics, Vec::clone);
                    if denied.is_empty() { Fixup::Nothing } else { Fixup::Fetch(denied) }
                }
            },
            Request::OffsetDelete(r) => {
                let denied = self.deny_topics(context, AclOperation::Read, &mut r.topics, Vec::clone);
                if denied.is_empty() { Fixup::Nothing } else { Fixup::OffsetDelete(denied) }
            }
            _ => Fixup::Nothing,
        };
        Admission::Admitted(request, fixup)
    }

    fn admit_admin(&self, context: &RequestContext, mut request: Request) -> Admission {
        match &mut request {
            Request::DescribeGroups(r) => {
                let verdicts: Vec<Option<DescribedGroup>> = r
                    .group_ids
                    .iter()
                    .map(|id| {
                        let ok = self.allowed(context, AclOperation::Describe, Resource::Group(id), true);
                        (!ok).then(|| described_error(id))
                    })
                    .collect();
                if verdicts.iter().all(Option::is_none) {
                    return Admission::Admitted(request, Fixup::Nothing);
                }
                let mut allowed = verdicts.iter().map(Option::is_none);
                r.group_ids.retain(|_| allowed.next().unwrap_or(false));
                if r.group_ids.is_empty() {
                    let groups = verdicts.into_iter().flatten().collect();
                    return Admission::Answered(Response::DescribeGroups(DescribeGroupsResponse { groups }));
                }
                Admission::Admitted(request, Fixup::Describe(verdicts))
            }
            Request::DeleteGroups(r) => {
                let mut distinct: Vec<String> = Vec::with_capacity(r.group_ids.len());
                for id in r.group_ids.drain(..) {
                    if !distinct.contains(&id) {
                        distinct.push(id);
                    }
                }
                let verdicts: Vec<Option<DeletedGroup>> = distinct
                    .iter()
                    .map(|id| {
                        let ok = self.allowed(context, AclOperation::Delete, Resource::Group(id), true);
                        (!ok).then(|| deleted_error(id))
                    })
                    .collect();
                let mut allowed = verdicts.iter().map(Option::is_none);
                distinct.retain(|_| allowed.next().unwrap_or(false));
                r.group_ids = distinct;
                if verdicts.iter().all(Option::is_none) {
                    return Admission::Admitted(request, Fixup::Nothing);
                }
                if r.group_ids.is_empty() {
                    let results = verdicts.into_iter().flatten().collect();
                    return Admission::Answered(Response::DeleteGroups(DeleteGroupsResponse { results }));
                }
                Admission::Admitted(request, Fixup::Delete(verdicts))
            }
            // ListGroups through one core: filtered like `Caller::handle_list_groups`.
            _ => Admission::Admitted(request, Fixup::Nothing),
        }
    }

    /// [`Inner::submit`] as `context`: authorized first, the answer completed with the
    /// partitions authorization removed.
    fn submit_as(
        &self,
        context: &RequestContext,
        group_id: &str,
        request: Request,
    ) -> Result<Outcome, Arc<Slot>> {
        if self.stopped.load(Ordering::Acquire) {
            return Ok(Err(CoordinatorError::Stopped));
        }
        let (request, fixup) = match self.admit(context, request) {
            Admission::Answered(response) => return Ok(Ok(response)),
            Admission::Admitted(request, fixup) => (request, fixup),
        };
        match (self.submit(group_id, request), fixup) {
            (answer, Fixup::Nothing) => answer,
            (Ok(outcome), fixup) => Ok(outcome.map(|r| fixup.apply_to(self, context, r))),
            // Only offset and admin requests are trimmed; a trimmed commit waits here for
            // its write, so that the partitions authorization removed are put back into
            // the one answer the caller sees.
            (Err(slot), fixup) => {
                let outcome = Pending::<Response>::waiting(slot).wait_outcome();
                Ok(outcome.map(|r| fixup.apply_to(self, context, r)))
            }
        }
    }

    pub(super) fn pending_as<T: ResponseKind>(
        &self,
        context: &RequestContext,
        group_id: &str,
        request: Request,
    ) -> Pending<T> {
        match self.submit_as(context, group_id, request) {
            Ok(outcome) => Pending::ready(outcome),
            Err(slot) => Pending::waiting(slot),
        }
    }

    pub(super) fn blocking_as<T: ResponseKind>(
        &self,
        context: &RequestContext,
        group_id: &str,
        request: Request,
    ) -> Result<T, CoordinatorError> {
        match self.submit_as(context, group_id, request) {
            Ok(outcome) => Pending::<T>::decode(outcome),
            Err(slot) => Pending::<T>::waiting(slot).wait(),
        }
    }
}

impl Fixup {
    fn apply_to(self, inner: &Inner, context: &RequestContext, response: Response) -> Response {
        match (self, response) {
            (Fixup::Commit(denied), Response::OffsetCommit(mut r)) => {
                for (topic, partitions) in denied {
                    let errors = r.errors.entry(topic).or_default();
                    for p in partitions {
                        errors.insert(p, ErrorCode::TopicAuthorizationFailed);
                    }
                }
                Response::OffsetCommit(r)
            }
            (Fixup::Fetch(denied), Response::OffsetFetch(mut r)) if r.error_code == ErrorCode::None => {
                for (topic, partitions) in denied {
                    let out = r.offsets.entry(topic).or_default();
                    for p in partitions {
                        out.insert(p, OffsetFetchData::error(ErrorCode::TopicAuthorizationFailed));
                    }
                }
                Response::OffsetFetch(r)
            }
            (Fixup::FetchAll, Response::OffsetFetch(mut r)) => {
                // Kafka: clients are not shown offsets of topics they may not describe.
                r.offsets.retain(|topic, _| {
                    inner.allowed(context, AclOperation::Describe, Resource::Topic(topic), false)
                });
                Response::OffsetFetch(r)
            }
            (Fixup::OffsetDelete(denied), Response::OffsetDelete(mut r))
                if r.error_code == ErrorCode::None =>
            {
                for (topic, partitions) in denied {
                    let out = r.partitions.entry(topic).or_default();
                    for p in partitions {
                        out.insert(p, ErrorCode::TopicAuthorizationFailed);
                    }
                }
                Response::OffsetDelete(r)
            }
            (Fixup::Describe(verdicts), Response::DescribeGroups(r)) => {
                let mut answered = r.groups.into_iter();
                let groups = verdicts.into_iter().filter_map(|v| v.or_else(|| answered.next())).collect();
                Response::DescribeGroups(DescribeGroupsResponse { groups })
            }
            (Fixup::Delete(verdicts), Response::DeleteGroups(r)) => {
                let mut answered = r.results.into_iter();
                let results = verdicts.into_iter().filter_map(|v| v.or_else(|| answered.next())).collect();
                Response::DeleteGroups(DeleteGroupsResponse { results })
            }
            (_, response) => response,
        }
    }
}

/// The coordinator as seen by one caller: every request is authorized for its
/// [`RequestContext`] (from [`GroupCoordinator::caller`]). The same methods as
/// [`GroupCoordinator`]'s, which act as [`RequestContext::ANONYMOUS`].
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    coordinator: &'a GroupCoordinator,
    context: &'a RequestContext,
}

impl GroupCoordinator {
    /// The coordinator as seen by the caller `context` describes: its requests are
    /// checked by the [`Authorizer`](crate::Authorizer) for `context.principal`.
    ///
    /// A network front end keeps one [`RequestContext`] per authenticated connection.
    pub fn caller<'a>(&'a self, context: &'a RequestContext) -> Caller<'a> {
        Caller { coordinator: self, context }
    }
}

macro_rules! requests {
    ($($(#[$doc:meta])* $pending:ident, $(#[$bdoc:meta])* $blocking:ident: $req:ident => $variant:ident, $resp:ident;)*) => {$(
        $(#[$doc])*
        pub fn $pending(&self, request: $req) -> Pending<$resp> {
            let group = request.group_id.clone();
            self.coordinator.inner.pending_as(self.context, &group, Request::$variant(request))
        }

        $(#[$bdoc])*
        pub fn $blocking(&self, request: $req) -> Result<$resp, CoordinatorError> {
            let group = request.group_id.clone();
            self.coordinator.inner.blocking_as(self.context, &group, Request::$variant(request))
        }
    )*};
}

impl Caller<'_> {
    /// The caller's context.
    pub fn context(&self) -> &RequestContext {
        self.context
    }

    requests! {
        /// JoinGroup (READ on the group); the answer comes when the join barrier closes.
        join_group,
        /// JoinGroup, blocking until answered.
        handle_join_group: JoinGroupRequest => JoinGroup, JoinGroupResponse;
        /// SyncGroup (READ on the group).
        sync_group,
        /// SyncGroup, blocking until answered.
        handle_sync_group: SyncGroupRequest => SyncGroup, SyncGroupResponse;
        /// Heartbeat (READ on the group).
        heartbeat,
        /// Heartbeat, blocking.
        handle_heartbeat: HeartbeatRequest => Heartbeat, HeartbeatResponse;
        /// LeaveGroup (READ on the group).
        leave_group,
        /// LeaveGroup, blocking.
        handle_leave_group: LeaveGroupRequest => LeaveGroup, LeaveGroupResponse;
        /// OffsetCommit (READ on the group and on each topic).
        offset_commit,
        /// OffsetCommit, blocking until the offsets are in storage.
        handle_offset_commit: OffsetCommitRequest => OffsetCommit, OffsetCommitResponse;
        /// OffsetFetch (DESCRIBE on the group and on each topic).
        offset_fetch,
        /// OffsetFetch, blocking.
        handle_offset_fetch: OffsetFetchRequest => OffsetFetch, OffsetFetchResponse;
        /// OffsetDelete (DELETE on the group, READ on each topic).
        offset_delete,
        /// OffsetDelete, blocking.
        handle_offset_delete: OffsetDeleteRequest => OffsetDelete, OffsetDeleteResponse;
    }

    /// DescribeGroups (DESCRIBE on each group), in request order.
    pub fn handle_describe_groups(
        &self,
        request: DescribeGroupsRequest,
    ) -> Result<DescribeGroupsResponse, CoordinatorError> {
        let mut groups = Vec::with_capacity(request.group_ids.len());
        for id in request.group_ids {
            let req = DescribeGroupsRequest { group_ids: vec![id.clone()] };
            let response: DescribeGroupsResponse =
                self.coordinator.inner.blocking_as(self.context, &id, Request::DescribeGroups(req))?;
            groups.extend(response.groups);
        }
        Ok(DescribeGroupsResponse { groups })
    }

    /// ListGroups: every group with DESCRIBE on the cluster, else only the groups the
    /// caller may describe; ordered by group id.
    pub fn handle_list_groups(
        &self,
        request: ListGroupsRequest,
    ) -> Result<ListGroupsResponse, CoordinatorError> {
        let inner = &self.coordinator.inner;
        if inner.stopped.load(Ordering::Acquire) {
            return Err(CoordinatorError::Stopped);
        }
        let mut groups = Vec::new();
        for shard in &inner.shards {
            groups.extend(lock(shard).core.listed_groups(&request));
        }
        if !inner.allowed(self.context, AclOperation::Describe, Resource::Cluster, false) {
            groups.retain(|g| {
                inner.allowed(self.context, AclOperation::Describe, Resource::Group(&g.group_id), false)
            });
        }
        groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        Ok(ListGroupsResponse { error_code: ErrorCode::None, groups })
    }

    /// DeleteGroups (DELETE on each group), each group in its shard, results in
    /// request order.
    pub fn handle_delete_groups(
        &self,
        request: DeleteGroupsRequest,
    ) -> Result<DeleteGroupsResponse, CoordinatorError> {
        let mut results: Vec<DeletedGroup> = Vec::with_capacity(request.group_ids.len());
        for id in request.group_ids {
            if results.iter().any(|r| r.group_id == id) {
                continue;
            }
            let req = DeleteGroupsRequest { group_ids: vec![id.clone()] };
            let response: DeleteGroupsResponse =
                self.coordinator.inner.blocking_as(self.context, &id, Request::DeleteGroups(req))?;
            results.extend(response.results);
        }
        Ok(DeleteGroupsResponse { results })
    }
}
