//! `Pending`: the answer to a request that may come later.

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};
use group_types::{
    DeleteGroupsResponse, DescribeGroupsResponse, HeartbeatResponse, JoinGroupResponse, LeaveGroupResponse,
    ListGroupsResponse, OffsetCommitResponse, OffsetDeleteResponse, OffsetFetchResponse, SyncGroupResponse,
};

use crate::{CoordinatorError, Response};

/// What a pending request resolves to: the core's response, or a coordinator failure.
pub type Outcome = Result<Response, CoordinatorError>;

/// A response type that can be taken out of a [`Response`].
pub trait ResponseKind: Sized {
    /// The typed response, if `response` is of this kind.
    fn from_response(response: Response) -> Option<Self>;
}

macro_rules! kinds {
    ($($ty:ident => $variant:ident,)*) => {$(
        impl ResponseKind for $ty {
            fn from_response(response: Response) -> Option<Self> {
                match response {
                    Response::$variant(r) => Some(r),
                    _ => None,
                }
            }
        }
    )*};
}

kinds! {
    JoinGroupResponse => JoinGroup,
    SyncGroupResponse => SyncGroup,
    HeartbeatResponse => Heartbeat,
    LeaveGroupResponse => LeaveGroup,
    OffsetCommitResponse => OffsetCommit,
    OffsetFetchResponse => OffsetFetch,
    DescribeGroupsResponse => DescribeGroups,
    ListGroupsResponse => ListGroups,
    DeleteGroupsResponse => DeleteGroups,
    OffsetDeleteResponse => OffsetDelete,
}

/// The answer to one request, once the coordinator gives it (a JoinGroup waits for its
/// join barrier, a SyncGroup for the leader's assignment). A network server can
/// `select` over many [`receiver`](Pending::receiver)s and [`decode`](Pending::decode)
/// what arrives.
pub struct Pending<T> {
    rx: Receiver<Outcome>,
    _kind: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Pending<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending").field("ready", &!self.rx.is_empty()).finish()
    }
}

impl<T: ResponseKind> Pending<T> {
    pub(crate) fn new(rx: Receiver<Outcome>) -> Pending<T> {
        Pending { rx, _kind: PhantomData }
    }

    /// Turns what the receiver delivered into the typed answer.
    pub fn decode(outcome: Outcome) -> Result<T, CoordinatorError> {
        let response = outcome?;
        T::from_response(response)
            .ok_or_else(|| CoordinatorError::Internal("response of another kind".into()))
    }

    /// Blocks until the answer comes. A coordinator stopped meanwhile answers
    /// [`CoordinatorError::Stopped`].
    pub fn wait(self) -> Result<T, CoordinatorError> {
        Pending::decode(self.rx.recv().unwrap_or(Err(CoordinatorError::Stopped)))
    }

    /// Waits at most `timeout`; `None` if the answer has not come by then.
    pub fn wait_timeout(&self, timeout: Duration) -> Option<Result<T, CoordinatorError>> {
        match self.rx.recv_timeout(timeout) {
            Ok(outcome) => Some(Pending::decode(outcome)),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Err(CoordinatorError::Stopped)),
        }
    }

    /// The answer if it has come, without blocking.
    pub fn try_get(&self) -> Option<Result<T, CoordinatorError>> {
        match self.rx.try_recv() {
            Ok(outcome) => Some(Pending::decode(outcome)),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(CoordinatorError::Stopped)),
        }
    }

    /// The channel the answer arrives on (one message), for `crossbeam_channel::select!`.
    pub fn receiver(&self) -> &Receiver<Outcome> {
        &self.rx
    }
}
