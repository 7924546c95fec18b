//! The vocabulary of the core: requests in, effects out.

use std::sync::Arc;

use group_offsets::Record;
use group_types::ErrorCode;

/// Identifies one request handed to the core, so that a response produced later
/// (a closing join barrier, a leader's sync) reaches the right caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

/// Identifies one write the core asked for; passed back to
/// [`CoordinatorCore::complete_write`](crate::CoordinatorCore::complete_write).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriteId(pub u64);

pub use crate::api::{Request, Response};

/// A deadline the core keeps. At most one deadline is armed per key; arming a key
/// again replaces its deadline.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum TimerKey {
    /// A group's join timer: the initial-delay window or the rebalance timeout.
    Join(Arc<str>),
    /// A group's pending-sync timer (KAFKA-12890).
    Sync(Arc<str>),
    /// A member's session deadline (also a pending member id's expiry).
    Session(Arc<str>, Arc<str>),
    /// The periodic offset-retention job over every group.
    OffsetExpiration,
    /// A consumer-protocol member's session deadline (KIP-848).
    ConsumerSession(Arc<str>, Arc<str>),
    /// A share member's session deadline (KIP-932).
    ShareSession(Arc<str>, Arc<str>),
    /// A consumer-protocol member's revocation deadline (KIP-848).
    ConsumerRebalance(Arc<str>, Arc<str>),
    /// A classic member of a consumer group told to rejoin: its JoinGroup deadline.
    ConsumerClassicJoin(Arc<str>, Arc<str>),
    /// A classic member of a consumer group answered a JoinGroup: its SyncGroup deadline.
    ConsumerClassicSync(Arc<str>, Arc<str>),
}

/// What to do with a deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimerOp {
    /// Arm (or re-arm) `key` to fire at `deadline_ms`.
    Arm {
        /// The timer.
        key: TimerKey,
        /// When it is due, in the core's milliseconds.
        deadline_ms: i64,
    },
    /// Disarm `key` if it is armed.
    Cancel {
        /// The timer.
        key: TimerKey,
    },
}

/// Records that must be persisted, all or nothing, before the responses that depend
/// on them are released (by [`CoordinatorCore::complete_write`](crate::CoordinatorCore::complete_write)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// Passed back on completion.
    pub id: WriteId,
    /// The records, in order.
    pub records: Vec<Record>,
}

/// Everything one step of the core produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Effects {
    /// Answers, to this step's request and to earlier parked ones, in completion order.
    pub responses: Vec<(RequestId, Response)>,
    /// Deadlines to arm or cancel, in order.
    pub timers: Vec<TimerOp>,
    /// Writes to perform, each followed by a call to `complete_write`.
    pub writes: Vec<Write>,
    /// What happened to groups (state changes, rebalances, expirations), in order:
    /// for logs and metrics, nothing to act on.
    pub events: Vec<crate::core::GroupEvent>,
}

impl Effects {
    /// True when the step produced nothing.
    pub fn is_empty(&self) -> bool {
        self.responses.is_empty()
            && self.timers.is_empty()
            && self.writes.is_empty()
            && self.events.is_empty()
    }

    /// Appends another step's effects.
    pub fn extend(&mut self, other: Effects) {
        self.responses.extend(other.responses);
        self.timers.extend(other.timers);
        self.writes.extend(other.writes);
        self.events.extend(other.events);
    }
}

/// Kafka's Java coordinator's mapping of a failed group or offset write to the error a
/// client sees (`appendGroupMetadataErrorToResponseError`, `kafka-semantics.md` §6.7, J).
pub fn map_append_error(error: ErrorCode) -> ErrorCode {
    match error {
        ErrorCode::UnknownTopicOrPartition
        | ErrorCode::NotEnoughReplicas
        | ErrorCode::NotEnoughReplicasAfterAppend
        | ErrorCode::RequestTimedOut => ErrorCode::CoordinatorNotAvailable,
        ErrorCode::NotLeaderOrFollower | ErrorCode::KafkaStorageError => ErrorCode::NotCoordinator,
        ErrorCode::MessageTooLarge | ErrorCode::RecordListTooLarge | ErrorCode::InvalidFetchSize => {
            ErrorCode::UnknownServerError
        }
        other => other,
    }
}

/// The mapping of a failed write that the request path applies to operations answered
/// through Kafka's `handleOperationException` (OffsetCommit, OffsetDelete,
/// DeleteGroups): as [`map_append_error`], and `NETWORK_EXCEPTION` becomes
/// `COORDINATOR_LOAD_IN_PROGRESS` so that old clients retry without a new lookup.
pub fn map_operation_error(error: ErrorCode) -> ErrorCode {
    match error {
        ErrorCode::NetworkException => ErrorCode::CoordinatorLoadInProgress,
        other => map_append_error(other),
    }
}

/// A member's deadline in milliseconds, or none: an `Option<i64>` in 8 bytes
/// instead of 16, as every member of a group carries two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline(i64);

impl Deadline {
    /// No deadline. `i64::MIN` is no time a deadline can fall on: they are
    /// `now` plus a timeout.
    pub(crate) const NONE: Deadline = Deadline(i64::MIN);

    /// A deadline at `ms`.
    pub(crate) fn at(ms: i64) -> Deadline {
        debug_assert!(ms != i64::MIN);
        Deadline(ms)
    }

    /// The deadline, if there is one.
    pub(crate) fn get(self) -> Option<i64> {
        (self.0 != i64::MIN).then_some(self.0)
    }
}
