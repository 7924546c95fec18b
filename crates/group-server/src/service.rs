//! `GroupService`: what the front end needs from a group coordinator.

use std::fmt;

use group_types::{
    DeleteGroupsRequest, DeleteGroupsResponse, DescribeGroupsRequest, DescribeGroupsResponse,
    HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest,
    LeaveGroupResponse, ListGroupsRequest, ListGroupsResponse, OffsetCommitRequest, OffsetCommitResponse,
    OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchRequest, OffsetFetchResponse, SyncGroupRequest,
    SyncGroupResponse,
};

/// A failure of the coordinator itself (stopped, storage down): the front end answers
/// `COORDINATOR_NOT_AVAILABLE`, which sends clients back to FindCoordinator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("group coordinator failed: {0}")]
pub struct ServiceError(pub String);

/// An answer that is not ready yet (a JoinGroup or SyncGroup parked at its barrier).
///
/// The connection's writer calls [`Deferred::wait`] in request order; the reader keeps
/// submitting the requests that follow.
pub struct Deferred<T> {
    wait: Box<dyn FnOnce() -> Result<T, ServiceError> + Send>,
}

impl<T> Deferred<T> {
    /// An answer `wait` produces, blocking until it is ready.
    pub fn new(wait: impl FnOnce() -> Result<T, ServiceError> + Send + 'static) -> Deferred<T> {
        Deferred { wait: Box::new(wait) }
    }

    /// An answer that is ready now.
    pub fn ready(value: Result<T, ServiceError>) -> Deferred<T>
    where
        T: Send + 'static,
    {
        Deferred::new(move || value)
    }

    /// Blocks until the answer is ready.
    pub fn wait(self) -> Result<T, ServiceError> {
        (self.wait)()
    }
}

impl<T> fmt::Debug for Deferred<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Deferred")
    }
}

/// The group coordinator as the wire front end drives it.
///
/// Every method is called from connection threads, many at once. Each must submit the
/// request before returning (so that requests after it on the same connection see its
/// effect) and return the answer as a [`Deferred`], which the connection's writer waits
/// for in request order: JoinGroup and SyncGroup park there until their barrier closes.
pub trait GroupService: Send + Sync + 'static {
    /// JoinGroup: registers the member and parks it at the join barrier.
    fn join_group(&self, request: JoinGroupRequest) -> Deferred<JoinGroupResponse>;
    /// SyncGroup: stores the leader's assignment or parks a follower until it arrives.
    fn sync_group(&self, request: SyncGroupRequest) -> Deferred<SyncGroupResponse>;
    /// Heartbeat.
    fn heartbeat(&self, request: HeartbeatRequest) -> Deferred<HeartbeatResponse>;
    /// LeaveGroup.
    fn leave_group(&self, request: LeaveGroupRequest) -> Deferred<LeaveGroupResponse>;
    /// OffsetCommit.
    fn offset_commit(&self, request: OffsetCommitRequest) -> Deferred<OffsetCommitResponse>;
    /// OffsetFetch for one group.
    fn offset_fetch(&self, request: OffsetFetchRequest) -> Deferred<OffsetFetchResponse>;
    /// DescribeGroups.
    fn describe_groups(&self, request: DescribeGroupsRequest) -> Deferred<DescribeGroupsResponse>;
    /// ListGroups.
    fn list_groups(&self, request: ListGroupsRequest) -> Deferred<ListGroupsResponse>;
    /// DeleteGroups.
    fn delete_groups(&self, request: DeleteGroupsRequest) -> Deferred<DeleteGroupsResponse>;
    /// OffsetDelete.
    fn offset_delete(&self, request: OffsetDeleteRequest) -> Deferred<OffsetDeleteResponse>;
    /// Stops the coordinator: parked requests complete (with an error) and timers stop.
    fn stop(&self);
}
