//! `GroupService`: what the front end needs from a group coordinator.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use group_coordinator::RequestContext;
use group_types::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse, DeleteGroupsRequest, DeleteGroupsResponse, DescribeGroupsRequest,
    DescribeGroupsResponse, HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
    LeaveGroupRequest, LeaveGroupResponse, ListGroupsRequest, ListGroupsResponse, OffsetCommitRequest,
    OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchRequest, OffsetFetchResponse,
    SyncGroupRequest, SyncGroupResponse,
};
use group_types::{DescribedConsumerGroup, ErrorCode};

/// A failure of the coordinator itself (stopped, storage down): the front end answers
/// `COORDINATOR_NOT_AVAILABLE`, which sends clients back to FindCoordinator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("group coordinator failed: {0}")]
pub struct ServiceError(pub String);

/// An answer that may not be ready yet (a JoinGroup or SyncGroup parked at its
/// barrier, a commit waiting for its write): a [`Future`].
///
/// The connection awaits each answer in request order while it keeps reading the
/// requests that follow; an answer that is ready at once costs no allocation.
#[must_use = "an answer does nothing unless awaited"]
pub struct Deferred<T> {
    state: DeferredState<T>,
}

enum DeferredState<T> {
    Ready(Option<Result<T, ServiceError>>),
    Later(Pin<Box<dyn Future<Output = Result<T, ServiceError>> + Send>>),
}

impl<T> Deferred<T> {
    /// An answer `future` produces.
    pub fn new(future: impl Future<Output = Result<T, ServiceError>> + Send + 'static) -> Deferred<T> {
        Deferred { state: DeferredState::Later(Box::pin(future)) }
    }

    /// An answer that is ready now.
    pub fn ready(value: Result<T, ServiceError>) -> Deferred<T> {
        Deferred { state: DeferredState::Ready(Some(value)) }
    }

    /// The answer, if it is known without waiting: a [`ready`](Deferred::ready) one.
    pub fn into_ready(self) -> Result<Result<T, ServiceError>, Deferred<T>> {
        match self.state {
            DeferredState::Ready(Some(value)) => Ok(value),
            state => Err(Deferred { state }),
        }
    }

    /// Blocks the calling thread until the answer is ready (for callers outside an
    /// async runtime, such as tests); never call it on a runtime's worker thread.
    pub fn wait(self) -> Result<T, ServiceError> {
        let mut future = std::pin::pin!(self);
        let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
        let mut cx = Context::from_waker(&waker);
        loop {
            if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
                return value;
            }
            std::thread::park();
        }
    }
}

// The answer is only moved out, never pinned; the future it may hold is boxed.
impl<T> Unpin for Deferred<T> {}

impl<T> Future for Deferred<T> {
    type Output = Result<T, ServiceError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.get_mut().state {
            DeferredState::Ready(value) => Poll::Ready(
                value.take().unwrap_or_else(|| Err(ServiceError("the answer was already taken".into()))),
            ),
            DeferredState::Later(future) => future.as_mut().poll(cx),
        }
    }
}

/// Unparks the thread blocked in [`Deferred::wait`].
struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

impl<T> fmt::Debug for Deferred<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ready = matches!(self.state, DeferredState::Ready(Some(_)));
        f.debug_struct("Deferred").field("ready", &ready).finish()
    }
}

/// The group coordinator as the wire front end drives it.
///
/// Each request comes with the [`RequestContext`] of its connection (principal,
/// client id and host): the service authorizes it for that caller.
///
/// Every method is called from the front end's runtime threads, many at once, and must
/// not block: each submits the request before returning (so that requests after it on
/// the same connection see its effect) and returns the answer as a [`Deferred`], which
/// the connection awaits in request order: JoinGroup and SyncGroup park there until
/// their barrier closes, a commit until its write is durable.
pub trait GroupService: Send + Sync + 'static {
    /// JoinGroup: registers the member and parks it at the join barrier.
    fn join_group(&self, caller: &RequestContext, request: JoinGroupRequest) -> Deferred<JoinGroupResponse>;
    /// SyncGroup: stores the leader's assignment or parks a follower until it arrives.
    fn sync_group(&self, caller: &RequestContext, request: SyncGroupRequest) -> Deferred<SyncGroupResponse>;
    /// Heartbeat.
    fn heartbeat(&self, caller: &RequestContext, request: HeartbeatRequest) -> Deferred<HeartbeatResponse>;
    /// LeaveGroup.
    fn leave_group(
        &self,
        caller: &RequestContext,
        request: LeaveGroupRequest,
    ) -> Deferred<LeaveGroupResponse>;
    /// OffsetCommit.
    fn offset_commit(
        &self,
        caller: &RequestContext,
        request: OffsetCommitRequest,
    ) -> Deferred<OffsetCommitResponse>;
    /// OffsetFetch for one group.
    fn offset_fetch(
        &self,
        caller: &RequestContext,
        request: OffsetFetchRequest,
    ) -> Deferred<OffsetFetchResponse>;
    /// DescribeGroups.
    fn describe_groups(
        &self,
        caller: &RequestContext,
        request: DescribeGroupsRequest,
    ) -> Deferred<DescribeGroupsResponse>;
    /// ListGroups.
    fn list_groups(
        &self,
        caller: &RequestContext,
        request: ListGroupsRequest,
    ) -> Deferred<ListGroupsResponse>;
    /// DeleteGroups.
    fn delete_groups(
        &self,
        caller: &RequestContext,
        request: DeleteGroupsRequest,
    ) -> Deferred<DeleteGroupsResponse>;
    /// OffsetDelete.
    fn offset_delete(
        &self,
        caller: &RequestContext,
        request: OffsetDeleteRequest,
    ) -> Deferred<OffsetDeleteResponse>;
    /// ConsumerGroupHeartbeat (KIP-848). The default answers `UNSUPPORTED_VERSION`, as
    /// Kafka does without the consumer protocol (librdkafka then fails the consumer).
    fn consumer_group_heartbeat(
        &self,
        caller: &RequestContext,
        request: ConsumerGroupHeartbeatRequest,
    ) -> Deferred<ConsumerGroupHeartbeatResponse> {
        let _ = (caller, request);
        Deferred::ready(Ok(ConsumerGroupHeartbeatResponse::error(ErrorCode::UnsupportedVersion, None)))
    }
    /// ConsumerGroupDescribe (KIP-848). The default answers `UNSUPPORTED_VERSION` for
    /// every group, which makes librdkafka's admin client fall back to DescribeGroups.
    fn consumer_group_describe(
        &self,
        caller: &RequestContext,
        request: ConsumerGroupDescribeRequest,
    ) -> Deferred<ConsumerGroupDescribeResponse> {
        let _ = caller;
        let groups = request
            .group_ids
            .into_iter()
            .map(|id| DescribedConsumerGroup::error(id, ErrorCode::UnsupportedVersion, None))
            .collect();
        Deferred::ready(Ok(ConsumerGroupDescribeResponse { groups }))
    }
    /// The node's topics changed (CreateTopics added one): `topics` is all of them now.
    /// A coordinator of KIP-848 groups takes them as its new metadata image; the default
    /// does nothing.
    fn topics_changed(&self, topics: &[crate::TopicSpec]) {
        let _ = topics;
    }
    /// Stops the coordinator: parked requests complete (with an error) and timers stop.
    fn stop(&self);
    /// The coordinator's gauges and counters, read when `--metrics-listen` is
    /// scraped (so it may lock what it counts, briefly); `None`, the default, leaves
    /// the `kafka_group_*` metrics out.
    fn metrics(&self) -> Option<group_coordinator::CoordinatorMetrics> {
        None
    }
}
