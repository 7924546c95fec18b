//! `Pending`: the answer to a request that may come later, to wait on with or
//! without a timeout, or to `.await` (a waker-based slot, no async runtime).

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

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

impl ResponseKind for Response {
    fn from_response(response: Response) -> Option<Self> {
        Some(response)
    }
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

/// Where the runtime puts an answer that was not ready when the request was
/// handed in: filled once, by whichever thread produces the answer.
#[derive(Default)]
pub(crate) struct Slot {
    state: Mutex<SlotState>,
    filled: Condvar,
}

#[derive(Default)]
struct SlotState {
    outcome: Option<Outcome>,
    /// Set once filled: a second fill is ignored (exactly one answer).
    done: bool,
    waker: Option<Waker>,
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, SlotState> {
        // Every field is updated before unlocking: a poisoned slot is consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Delivers the answer; wakes a waiting thread and an awaiting task.
    pub(crate) fn fill(&self, outcome: Outcome) {
        let waker = {
            let mut state = self.lock();
            if state.done {
                return;
            }
            state.done = true;
            state.outcome = Some(outcome);
            state.waker.take()
        };
        self.filled.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn take(&self) -> Option<Outcome> {
        self.lock().outcome.take()
    }
}

enum State {
    /// Answered when handed in: no slot was allocated.
    Ready(Option<Outcome>),
    Waiting(Arc<Slot>),
}

/// The answer to one request, once the coordinator gives it (a JoinGroup waits for its
/// join barrier, a SyncGroup for the leader's assignment, a commit for its write).
///
/// Wait for it ([`wait`](Self::wait), [`wait_timeout`](Self::wait_timeout)), poll it
/// ([`try_get`](Self::try_get)), or `.await` it: `Pending` is a
/// [`Future`] woken by the thread that produces the answer, so an async server
/// parks no thread on it. A request answered at once carries its answer inline.
/// Once taken, the answer is gone: a second `try_get` or poll returns
/// [`CoordinatorError::Internal`].
pub struct Pending<T> {
    state: State,
    _kind: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Pending<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ready = match &self.state {
            State::Ready(o) => o.is_some(),
            State::Waiting(slot) => slot.lock().outcome.is_some(),
        };
        f.debug_struct("Pending").field("ready", &ready).finish()
    }
}

fn taken() -> CoordinatorError {
    CoordinatorError::Internal("the answer was already taken".into())
}

impl<T: ResponseKind> Pending<T> {
    pub(crate) fn ready(outcome: Outcome) -> Pending<T> {
        Pending { state: State::Ready(Some(outcome)), _kind: PhantomData }
    }

    pub(crate) fn waiting(slot: Arc<Slot>) -> Pending<T> {
        Pending { state: State::Waiting(slot), _kind: PhantomData }
    }

    /// Turns an outcome into the typed answer.
    pub fn decode(outcome: Outcome) -> Result<T, CoordinatorError> {
        let response = outcome?;
        T::from_response(response)
            .ok_or_else(|| CoordinatorError::Internal("response of another kind".into()))
    }

    /// Blocks until the outcome comes, undecoded.
    pub(crate) fn wait_outcome(self) -> Outcome {
        match self.state {
            State::Ready(o) => o.unwrap_or_else(|| Err(taken())),
            State::Waiting(slot) => {
                let mut state = slot.lock();
                loop {
                    if let Some(outcome) = state.outcome.take() {
                        return outcome;
                    }
                    if state.done {
                        return Err(taken());
                    }
                    state = slot.filled.wait(state).unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }

    /// True once the answer has come (and was not taken yet).
    pub fn is_ready(&self) -> bool {
        match &self.state {
            State::Ready(o) => o.is_some(),
            State::Waiting(slot) => slot.lock().outcome.is_some(),
        }
    }

    /// Blocks until the answer comes. A coordinator stopped meanwhile answers
    /// [`CoordinatorError::Stopped`].
    pub fn wait(self) -> Result<T, CoordinatorError> {
        Pending::decode(self.wait_outcome())
    }

    /// Waits at most `timeout`; `None` if the answer has not come by then.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<Result<T, CoordinatorError>> {
        match &mut self.state {
            State::Ready(o) => Some(o.take().map_or_else(|| Err(taken()), Pending::decode)),
            State::Waiting(slot) => {
                let deadline = Instant::now() + timeout;
                let mut state = slot.lock();
                loop {
                    if let Some(outcome) = state.outcome.take() {
                        return Some(Pending::decode(outcome));
                    }
                    if state.done {
                        return Some(Err(taken()));
                    }
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    state = slot.filled.wait_timeout(state, left).unwrap_or_else(PoisonError::into_inner).0;
                }
            }
        }
    }

    /// The answer if it has come, without blocking.
    pub fn try_get(&mut self) -> Option<Result<T, CoordinatorError>> {
        match &mut self.state {
            State::Ready(o) => Some(o.take().map_or_else(|| Err(taken()), Pending::decode)),
            State::Waiting(slot) => slot.take().map(Pending::decode),
        }
    }
}

impl<T: ResponseKind> Future for Pending<T> {
    type Output = Result<T, CoordinatorError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match &mut this.state {
            State::Ready(o) => Poll::Ready(o.take().map_or_else(|| Err(taken()), Pending::decode)),
            State::Waiting(slot) => {
                let mut state = slot.lock();
                if let Some(outcome) = state.outcome.take() {
                    return Poll::Ready(Pending::decode(outcome));
                }
                if state.done {
                    return Poll::Ready(Err(taken()));
                }
                match &state.waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => state.waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }
}
