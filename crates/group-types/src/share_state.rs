//! The share-state RPCs of KIP-932, by which a broker's share partitions persist
//! their state in the share coordinator: InitializeShareGroupState (API key 83),
//! ReadShareGroupState (84), WriteShareGroupState (85), DeleteShareGroupState (86)
//! and ReadShareGroupStateSummary (87), at the versions Kafka 4.2 serves (v0 for
//! 83, 84 and 86, v1 for 85 and 87).
//!
//! Every request names share partitions as a group id and, per topic id, a list of
//! partitions; every response answers per topic and partition. The topic and
//! partition containers are generic: [`ShareStateRequest`], [`ShareStateResponse`]
//! and [`ShareStateTopic`] over each API's per-partition data.

use std::marker::PhantomData;

use serde::{Deserialize, Serialize};

use crate::{ErrorCode, GroupId, TopicId};

/// A share partition's delivery state that is still to be delivered (`0`).
pub const DELIVERY_STATE_AVAILABLE: i8 = 0;
/// A share partition's delivery state of records acquired by a consumer (`1`).
pub const DELIVERY_STATE_ACQUIRED: i8 = 1;
/// A share partition's delivery state of acknowledged records (`2`).
pub const DELIVERY_STATE_ACKNOWLEDGED: i8 = 2;
/// A share partition's delivery state of archived records (`4`): delivered too
/// often, or rejected.
pub const DELIVERY_STATE_ARCHIVED: i8 = 4;

/// The partitions of one topic in a share-state request or response: `P` is the
/// message's per-partition data.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareStateTopic<P> {
    /// The topic.
    pub topic_id: TopicId,
    /// Per partition, in request order.
    pub partitions: Vec<P>,
}

impl<P> ShareStateTopic<P> {
    /// The partitions `partitions` of topic `topic_id`.
    pub fn new(topic_id: TopicId, partitions: impl IntoIterator<Item = P>) -> ShareStateTopic<P> {
        ShareStateTopic { topic_id, partitions: partitions.into_iter().collect() }
    }
}

/// A run of offsets of a share partition with one delivery state and count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct StateBatch {
    /// The first offset of the run.
    pub first_offset: i64,
    /// The last offset of the run (inclusive).
    pub last_offset: i64,
    /// The delivery state: 0 available, 2 acknowledged, 4 archived (1 acquired
    /// is not meant to be persisted).
    pub delivery_state: i8,
    /// How many times the records were delivered.
    pub delivery_count: i16,
}

impl StateBatch {
    /// The offsets `first_offset..=last_offset` in state `delivery_state`, delivered
    /// `delivery_count` times.
    pub const fn new(
        first_offset: i64,
        last_offset: i64,
        delivery_state: i8,
        delivery_count: i16,
    ) -> StateBatch {
        StateBatch { first_offset, last_offset, delivery_state, delivery_count }
    }
}

/// One partition's answer where only the outcome is returned (Initialize, Write
/// and Delete).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareStatePartitionResult {
    /// The partition index.
    pub partition: i32,
    /// The outcome.
    pub error_code: ErrorCode,
    /// Detail for an error; `None` on success.
    pub error_message: Option<String>,
}

impl ShareStatePartitionResult {
    /// A success for `partition`.
    pub fn ok(partition: i32) -> ShareStatePartitionResult {
        ShareStatePartitionResult { partition, error_code: ErrorCode::None, error_message: None }
    }

    /// A failure for `partition`.
    pub fn error(
        partition: i32,
        error_code: ErrorCode,
        message: impl Into<String>,
    ) -> ShareStatePartitionResult {
        ShareStatePartitionResult { partition, error_code, error_message: Some(message.into()) }
    }
}

/// A share-state request: a group and, per topic, the share partitions it names
/// with the API's data for each (`P`). The five APIs' requests are this type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareStateRequest<P> {
    /// The request's version (0; 1 for WriteShareGroupState, which then carries
    /// the delivery complete count, and for ReadShareGroupStateSummary, which then
    /// answers it: KIP-1226).
    pub api_version: i16,
    /// The share group.
    pub group_id: GroupId,
    /// The share partitions, per topic.
    pub topics: Vec<ShareStateTopic<P>>,
}

impl<P> Default for ShareStateRequest<P> {
    fn default() -> ShareStateRequest<P> {
        ShareStateRequest { api_version: 0, group_id: GroupId::default(), topics: Vec::new() }
    }
}

/// A share-state response: per topic, each named partition's answer (`R`), to a
/// request whose partitions carry `P`. The five APIs' responses are this type;
/// `P` only tells apart the three whose answers are alike (Initialize, Write,
/// Delete), so that each API's response is a type of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound(serialize = "R: Serialize", deserialize = "R: Deserialize<'de>"))]
pub struct ShareStateResponse<R, P = ()> {
    /// Per topic and partition.
    pub results: Vec<ShareStateTopic<R>>,
    #[serde(skip)]
    request: PhantomData<fn() -> P>,
}

impl<R, P> ShareStateResponse<R, P> {
    /// The response of `results`.
    pub fn new(results: Vec<ShareStateTopic<R>>) -> ShareStateResponse<R, P> {
        ShareStateResponse { results, request: PhantomData }
    }
}

impl<R, P> Default for ShareStateResponse<R, P> {
    fn default() -> ShareStateResponse<R, P> {
        ShareStateResponse::new(Vec::new())
    }
}

/// An InitializeShareGroupState request (v0): the group coordinator asks for share
/// partitions' state to be created, or reset, at a start offset.
pub type InitializeShareGroupStateRequest = ShareStateRequest<InitializeStatePartition>;
/// An InitializeShareGroupState response (v0).
pub type InitializeShareGroupStateResponse =
    ShareStateResponse<ShareStatePartitionResult, InitializeStatePartition>;
/// A ReadShareGroupState request (v0): a share partition's leader reads its state,
/// announcing its leader epoch.
pub type ReadShareGroupStateRequest = ShareStateRequest<ReadStatePartition>;
/// A ReadShareGroupState response (v0).
pub type ReadShareGroupStateResponse = ShareStateResponse<ReadStatePartitionResult, ReadStatePartition>;
/// A WriteShareGroupState request (v0 and v1): a share partition's leader writes
/// its start offset and the state batches that changed.
pub type WriteShareGroupStateRequest = ShareStateRequest<WriteStatePartition>;
/// A WriteShareGroupState response (v0 and v1).
pub type WriteShareGroupStateResponse = ShareStateResponse<ShareStatePartitionResult, WriteStatePartition>;
/// A DeleteShareGroupState request (v0): the group coordinator deletes share
/// partitions' state.
pub type DeleteShareGroupStateRequest = ShareStateRequest<DeleteStatePartition>;
/// A DeleteShareGroupState response (v0).
pub type DeleteShareGroupStateResponse = ShareStateResponse<ShareStatePartitionResult, DeleteStatePartition>;
/// A ReadShareGroupStateSummary request (v0 and v1): the group coordinator reads
/// share partitions' start offsets (for DescribeShareGroupOffsets).
pub type ReadShareGroupStateSummaryRequest = ShareStateRequest<ReadStateSummaryPartition>;
/// A ReadShareGroupStateSummary response (v0 and v1).
pub type ReadShareGroupStateSummaryResponse =
    ShareStateResponse<ReadStateSummaryPartitionResult, ReadStateSummaryPartition>;

/// One partition of an InitializeShareGroupState request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct InitializeStatePartition {
    /// The partition index.
    pub partition: i32,
    /// The state epoch the share partition starts at.
    pub state_epoch: i32,
    /// The start offset, or -1 when it is not being initialized.
    pub start_offset: i64,
}

/// One partition of a ReadShareGroupState request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReadStatePartition {
    /// The partition index.
    pub partition: i32,
    /// The leader epoch of the share partition's leader.
    pub leader_epoch: i32,
}

/// One partition of a ReadShareGroupStateSummary request: the fields of a
/// [`ReadStatePartition`], a type of its own so that the two requests are two
/// types (each API's request names its API).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReadStateSummaryPartition {
    /// The partition index.
    pub partition: i32,
    /// The leader epoch of the share partition's leader.
    pub leader_epoch: i32,
}

/// One partition's answer to ReadShareGroupState.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReadStatePartitionResult {
    /// The partition index.
    pub partition: i32,
    /// The outcome.
    pub error_code: ErrorCode,
    /// Detail for an error; `None` on success.
    pub error_message: Option<String>,
    /// The state epoch (0 on errors).
    pub state_epoch: i32,
    /// The start offset, -1 if not initialized (0 on errors).
    pub start_offset: i64,
    /// The state batches, sorted by first offset (empty on errors).
    pub state_batches: Vec<StateBatch>,
}

impl ReadStatePartitionResult {
    /// A failure for `partition`, with the other fields at their defaults.
    pub fn error(
        partition: i32,
        error_code: ErrorCode,
        message: impl Into<String>,
    ) -> ReadStatePartitionResult {
        ReadStatePartitionResult {
            partition,
            error_code,
            error_message: Some(message.into()),
            ..ReadStatePartitionResult::default()
        }
    }
}

/// One partition of a WriteShareGroupState request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteStatePartition {
    /// The partition index.
    pub partition: i32,
    /// The state epoch of the share partition (-1: not checked).
    pub state_epoch: i32,
    /// The leader epoch of the writer (-1: not checked).
    pub leader_epoch: i32,
    /// The start offset, or -1 when it is not being written.
    pub start_offset: i64,
    /// How many offsets at or above the start offset completed delivery (v1+;
    /// -1 = unknown, the v0 default).
    pub delivery_complete_count: i32,
    /// The state batches that changed.
    pub state_batches: Vec<StateBatch>,
}

impl Default for WriteStatePartition {
    fn default() -> WriteStatePartition {
        WriteStatePartition {
            partition: 0,
            state_epoch: 0,
            leader_epoch: 0,
            start_offset: 0,
            delivery_complete_count: -1,
            state_batches: Vec::new(),
        }
    }
}

/// One partition of a DeleteShareGroupState request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeleteStatePartition {
    /// The partition index.
    pub partition: i32,
}

/// One partition's answer to ReadShareGroupStateSummary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadStateSummaryPartitionResult {
    /// The partition index.
    pub partition: i32,
    /// The outcome.
    pub error_code: ErrorCode,
    /// Detail for an error; `None` on success.
    pub error_message: Option<String>,
    /// The state epoch (0 on errors and for a partition with no state).
    pub state_epoch: i32,
    /// The leader epoch (0 on errors and for a partition with no state).
    pub leader_epoch: i32,
    /// The start offset (-1 for a partition with no state, 0 on errors).
    pub start_offset: i64,
    /// How many offsets at or above the start offset completed delivery (v1+;
    /// -1 = unknown).
    pub delivery_complete_count: i32,
}

impl Default for ReadStateSummaryPartitionResult {
    fn default() -> ReadStateSummaryPartitionResult {
        ReadStateSummaryPartitionResult {
            partition: 0,
            error_code: ErrorCode::None,
            error_message: None,
            state_epoch: 0,
            leader_epoch: 0,
            start_offset: 0,
            delivery_complete_count: -1,
        }
    }
}

impl ReadStateSummaryPartitionResult {
    /// A failure for `partition`, with the other fields at their defaults.
    pub fn error(
        partition: i32,
        error_code: ErrorCode,
        message: impl Into<String>,
    ) -> ReadStateSummaryPartitionResult {
        ReadStateSummaryPartitionResult {
            partition,
            error_code,
            error_message: Some(message.into()),
            ..ReadStateSummaryPartitionResult::default()
        }
    }
}
