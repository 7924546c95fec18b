//! The vocabulary of the core: requests in, effects out.

use std::sync::Arc;

use group_offsets::Record;
use group_types::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse, DeleteGroupsRequest, DeleteGroupsResponse, DescribeGroupsRequest,
    DescribeGroupsResponse, ErrorCode, HeartbeatRequest, HeartbeatResponse, JoinGroupRequest,
    JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, ListGroupsRequest, ListGroupsResponse,
    OffsetCommitRequest, OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchRequest,
    OffsetFetchResponse, SyncGroupRequest, SyncGroupResponse,
};

/// Identifies one request handed to the core, so that a response produced later
/// (a closing join barrier, a leader's sync) reaches the right caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

/// Identifies one write the core asked for; passed back to
/// [`CoordinatorCore::complete_write`](crate::CoordinatorCore::complete_write).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriteId(pub u64);

/// One request of the group protocols (classic and KIP-848's consumer protocol).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Request {
    /// JoinGroup.
    JoinGroup(JoinGroupRequest),
    /// SyncGroup.
    SyncGroup(SyncGroupRequest),
    /// Heartbeat.
    Heartbeat(HeartbeatRequest),
    /// LeaveGroup.
    LeaveGroup(LeaveGroupRequest),
    /// OffsetCommit (answered as version 9+: a missing group with a generation >= 0 is
    /// `GROUP_ID_NOT_FOUND`; a front end serving v0-v8 maps that to `ILLEGAL_GENERATION`).
    OffsetCommit(OffsetCommitRequest),
    /// OffsetFetch.
    OffsetFetch(OffsetFetchRequest),
    /// DescribeGroups.
    DescribeGroups(DescribeGroupsRequest),
    /// ListGroups.
    ListGroups(ListGroupsRequest),
    /// DeleteGroups.
    DeleteGroups(DeleteGroupsRequest),
    /// OffsetDelete.
    OffsetDelete(OffsetDeleteRequest),
    /// ConsumerGroupHeartbeat (KIP-848). Boxed: at 280 bytes it was the largest
    /// request, and every request (a classic heartbeat too) moves through the
    /// layers at the size of the largest.
    ConsumerGroupHeartbeat(Box<ConsumerGroupHeartbeatRequest>),
    /// ConsumerGroupDescribe (KIP-848).
    ConsumerGroupDescribe(ConsumerGroupDescribeRequest),
}

/// `Request::from(request)` for each API's request type.
macro_rules! request_from {
    ($($variant:ident($ty:ty) $(=> $wrap:path)?;)*) => {$(
        impl From<$ty> for Request {
            fn from(request: $ty) -> Request {
                Request::$variant($($wrap)?(request))
            }
        }
    )*};
}

request_from! {
    JoinGroup(JoinGroupRequest);
    SyncGroup(SyncGroupRequest);
    Heartbeat(HeartbeatRequest);
    LeaveGroup(LeaveGroupRequest);
    OffsetCommit(OffsetCommitRequest);
    OffsetFetch(OffsetFetchRequest);
    DescribeGroups(DescribeGroupsRequest);
    ListGroups(ListGroupsRequest);
    DeleteGroups(DeleteGroupsRequest);
    OffsetDelete(OffsetDeleteRequest);
    ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest) => Box::new;
    ConsumerGroupDescribe(ConsumerGroupDescribeRequest);
}

/// The answer to one [`Request`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Response {
    /// JoinGroup.
    JoinGroup(JoinGroupResponse),
    /// SyncGroup.
    SyncGroup(SyncGroupResponse),
    /// Heartbeat.
    Heartbeat(HeartbeatResponse),
    /// LeaveGroup.
    LeaveGroup(LeaveGroupResponse),
    /// OffsetCommit.
    OffsetCommit(OffsetCommitResponse),
    /// OffsetFetch.
    OffsetFetch(OffsetFetchResponse),
    /// DescribeGroups.
    DescribeGroups(DescribeGroupsResponse),
    /// ListGroups.
    ListGroups(ListGroupsResponse),
    /// DeleteGroups.
    DeleteGroups(DeleteGroupsResponse),
    /// OffsetDelete.
    OffsetDelete(OffsetDeleteResponse),
    /// ConsumerGroupHeartbeat.
    ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse),
    /// ConsumerGroupDescribe.
    ConsumerGroupDescribe(ConsumerGroupDescribeResponse),
}

impl Response {
    /// The same kind of answer carrying only `error` (an answer held for a write
    /// that then failed).
    pub fn with_error(&self, error: ErrorCode) -> Response {
        match self {
            Response::JoinGroup(r) => {
                Response::JoinGroup(crate::core::join_error(error, r.member_id.clone()))
            }
            Response::SyncGroup(_) => Response::SyncGroup(SyncGroupResponse::error(error)),
            Response::Heartbeat(_) => Response::Heartbeat(HeartbeatResponse { error_code: error }),
            Response::LeaveGroup(_) => Response::LeaveGroup(LeaveGroupResponse {
                error_code: error,
                ..LeaveGroupResponse::default()
            }),
            Response::OffsetCommit(r) => {
                let mut r = r.clone();
                r.set_all(error);
                Response::OffsetCommit(r)
            }
            Response::OffsetFetch(_) => Response::OffsetFetch(OffsetFetchResponse {
                error_code: error,
                ..OffsetFetchResponse::default()
            }),
            Response::DescribeGroups(r) => Response::DescribeGroups(r.clone()),
            Response::ListGroups(_) => {
                Response::ListGroups(ListGroupsResponse { error_code: error, groups: Vec::new() })
            }
            Response::DeleteGroups(r) => {
                let mut r = r.clone();
                for d in &mut r.results {
                    d.error_code = error;
                }
                Response::DeleteGroups(r)
            }
            Response::OffsetDelete(_) => Response::OffsetDelete(OffsetDeleteResponse {
                error_code: error,
                partitions: std::collections::BTreeMap::new(),
            }),
            Response::ConsumerGroupHeartbeat(_) => {
                Response::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse::error(error, None))
            }
            Response::ConsumerGroupDescribe(r) => {
                let mut r = r.clone();
                for g in &mut r.groups {
                    *g = group_types::DescribedConsumerGroup::error(g.group_id.clone(), error, None);
                }
                Response::ConsumerGroupDescribe(r)
            }
        }
    }
}

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
