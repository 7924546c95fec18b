//! `Pending`: the answer to a request that may come later, to wait on with or
//! without a timeout, or to `.await` (a waker-based slot, no async runtime).

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::{CoordinatorError, Response};

/// What a pending request resolves to: the core's response, or a coordinator failure.
pub type Outcome = Result<Response, CoordinatorError>;

/// A response type that can be taken out of a [`Response`] (each API's, from
/// [`group_api_table!`](crate::group_api_table)).
pub trait ResponseKind: Sized {
    /// The typed response, if `response` is of this kind.
    fn from_response(response: Response) -> Option<Self>;

    /// The response as a [`Response`].
    fn into_response(self) -> Response;
}

impl ResponseKind for Response {
    fn from_response(response: Response) -> Option<Self> {
        Some(response)
    }

    fn into_response(self) -> Response {
        self
    }
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

    fn has_outcome(&self) -> bool {
        self.lock().outcome.is_some()
    }

    /// The answer if it has come; otherwise `waker` (if any) is woken when it does.
    fn poll_take(&self, waker: Option<&Waker>) -> Option<Outcome> {
        let mut state = self.lock();
        if let Some(outcome) = state.outcome.take() {
            return Some(outcome);
        }
        if state.done {
            return Some(Err(taken()));
        }
        if let Some(waker) = waker {
            match &state.waker {
                Some(w) if w.will_wake(waker) => {}
                _ => state.waker = Some(waker.clone()),
            }
        }
        None
    }

    /// Blocks until the answer comes, or `deadline` (then `None`).
    fn wait_take(&self, deadline: Option<Instant>) -> Option<Outcome> {
        let mut state = self.lock();
        loop {
            if let Some(outcome) = state.outcome.take() {
                return Some(outcome);
            }
            if state.done {
                return Some(Err(taken()));
            }
            state = match deadline {
                None => self.filled.wait(state).unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    self.filled.wait_timeout(state, left).unwrap_or_else(PoisonError::into_inner).0
                }
            };
        }
    }
}

/// Turns the outcomes of a [`Combined`]'s parts, in order, into its one outcome.
pub(crate) type Combine = Box<dyn FnOnce(Vec<Outcome>) -> Outcome + Send + Sync>;

/// An answer made of other answers: a request trimmed before the core (the
/// core's answer completed with what was decided without it), or one that spans
/// coordinator partitions (one answer per partition, merged). Nothing runs until
/// the last part is in, and then on the thread that takes the answer: no thread
/// waits for the parts on the caller's behalf.
struct Combined {
    parts: Vec<Part>,
    /// `None` once the answer was taken.
    combine: Option<Combine>,
}

enum Part {
    Waiting(Pending<Response>),
    Done(Outcome),
}

impl Combined {
    fn is_ready(&self) -> bool {
        self.combine.is_some()
            && self.parts.iter().all(|p| match p {
                Part::Waiting(pending) => pending.has_come(),
                Part::Done(_) => true,
            })
    }

    /// Takes the answer once every part has come, without blocking; `waker`
    /// is woken when a missing part comes.
    fn poll_take(&mut self, waker: Option<&Waker>) -> Option<Outcome> {
        if self.combine.is_none() {
            return Some(Err(taken()));
        }
        let mut missing = false;
        for part in &mut self.parts {
            if let Part::Waiting(pending) = part {
                match pending.poll_take(waker) {
                    Some(outcome) => *part = Part::Done(outcome),
                    None => missing = true,
                }
            }
        }
        if missing { None } else { Some(self.finish()) }
    }

    /// Blocks until every part has come (or `deadline`: then `None`).
    fn wait_take(&mut self, deadline: Option<Instant>) -> Option<Outcome> {
        if self.combine.is_none() {
            return Some(Err(taken()));
        }
        for part in &mut self.parts {
            if let Part::Waiting(pending) = part {
                *part = Part::Done(pending.wait_take(deadline)?);
            }
        }
        Some(self.finish())
    }

    fn finish(&mut self) -> Outcome {
        let Some(combine) = self.combine.take() else { return Err(taken()) };
        let outcomes = std::mem::take(&mut self.parts)
            .into_iter()
            .map(|part| match part {
                Part::Done(outcome) => outcome,
                Part::Waiting(_) => Err(CoordinatorError::Internal("a part was not answered")),
            })
            .collect();
        combine(outcomes)
    }
}

enum State {
    /// Answered when handed in: no slot was allocated.
    Ready(Option<Outcome>),
    Waiting(Arc<Slot>),
    Combined(Box<Combined>),
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
///
/// Getting the answer never blocks except in `wait` and `wait_timeout`: an answer
/// assembled from several (a request that authorization or the topic metadata
/// trimmed, a DescribeGroups or DeleteGroups over several coordinator
/// partitions) is merged by whoever takes it, once its last part has come.
pub struct Pending<T> {
    state: State,
    _kind: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Pending<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending").field("ready", &self.has_come()).finish()
    }
}

fn taken() -> CoordinatorError {
    CoordinatorError::Internal("the answer was already taken")
}

impl<T> Pending<T> {
    pub(crate) fn ready(outcome: Outcome) -> Pending<T> {
        Pending { state: State::Ready(Some(outcome)), _kind: PhantomData }
    }

    pub(crate) fn waiting(slot: Arc<Slot>) -> Pending<T> {
        Pending { state: State::Waiting(slot), _kind: PhantomData }
    }

    /// The answer, whatever it is made of, once every part of `parts` has come:
    /// `combine` turns their outcomes (in order) into it. Answered inline when
    /// every part is already.
    pub(crate) fn combined(parts: Vec<Pending<Response>>, combine: Combine) -> Pending<T> {
        let mut combined =
            Combined { parts: parts.into_iter().map(Part::Waiting).collect(), combine: Some(combine) };
        match combined.poll_take(None) {
            Some(outcome) => Pending::ready(outcome),
            None => Pending { state: State::Combined(Box::new(combined)), _kind: PhantomData },
        }
    }

    /// This answer, mapped by `map` when it comes.
    pub(crate) fn map(self, map: impl FnOnce(Outcome) -> Outcome + Send + Sync + 'static) -> Pending<T> {
        let combine: Combine = Box::new(move |mut outcomes: Vec<Outcome>| {
            map(outcomes.pop().unwrap_or_else(|| Err(CoordinatorError::Internal("no answer"))))
        });
        match self.state {
            State::Ready(Some(outcome)) => Pending::ready(combine(vec![outcome])),
            state => Pending::combined(vec![Pending { state, _kind: PhantomData }], combine),
        }
    }

    /// The same answer, typed as another kind of response (the runtime hands
    /// every request to the core as a [`Request`]).
    pub(crate) fn cast<U>(self) -> Pending<U> {
        Pending { state: self.state, _kind: PhantomData }
    }

    fn has_come(&self) -> bool {
        match &self.state {
            State::Ready(o) => o.is_some(),
            State::Waiting(slot) => slot.has_outcome(),
            State::Combined(combined) => combined.is_ready(),
        }
    }

    /// The outcome if it has come, without blocking; otherwise `waker` (if any)
    /// is woken when it may have.
    fn poll_take(&mut self, waker: Option<&Waker>) -> Option<Outcome> {
        match &mut self.state {
            State::Ready(o) => Some(o.take().unwrap_or_else(|| Err(taken()))),
            State::Waiting(slot) => slot.poll_take(waker),
            State::Combined(combined) => combined.poll_take(waker),
        }
    }

    /// Blocks until the outcome comes (or `deadline`: then `None`).
    fn wait_take(&mut self, deadline: Option<Instant>) -> Option<Outcome> {
        match &mut self.state {
            State::Ready(o) => Some(o.take().unwrap_or_else(|| Err(taken()))),
            State::Waiting(slot) => slot.wait_take(deadline),
            State::Combined(combined) => combined.wait_take(deadline),
        }
    }
}

impl<T: ResponseKind> Pending<T> {
    /// Turns an outcome into the typed answer.
    pub fn decode(outcome: Outcome) -> Result<T, CoordinatorError> {
        let response = outcome?;
        T::from_response(response).ok_or(CoordinatorError::Internal("response of another kind"))
    }

    /// True once the answer has come (and was not taken yet).
    pub fn is_ready(&self) -> bool {
        self.has_come()
    }

    /// Blocks until the answer comes. A coordinator stopped meanwhile answers
    /// [`CoordinatorError::Stopped`].
    pub fn wait(mut self) -> Result<T, CoordinatorError> {
        let outcome = self.wait_take(None).unwrap_or_else(|| Err(taken()));
        Pending::decode(outcome)
    }

    /// Waits at most `timeout`; `None` if the answer has not come by then.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<Result<T, CoordinatorError>> {
        self.wait_take(Some(Instant::now() + timeout)).map(Pending::decode)
    }

    /// The answer if it has come, without blocking.
    pub fn try_get(&mut self) -> Option<Result<T, CoordinatorError>> {
        self.poll_take(None).map(Pending::decode)
    }
}

impl<T: ResponseKind> Future for Pending<T> {
    type Output = Result<T, CoordinatorError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut().poll_take(Some(cx.waker())) {
            Some(outcome) => Poll::Ready(Pending::decode(outcome)),
            None => Poll::Pending,
        }
    }
}
