//! The service side of the share coordinator (Kafka's `ShareCoordinatorService`):
//! a request naming many share partitions becomes one shard call per share
//! partition, routed to its partition of `__share_group_state`, and the shards'
//! answers merge back into one response.
//!
//! [`split_initialize`] and its siblings do the split with the service's own
//! checks (empty topic or partition lists, empty group id, coordinator not
//! active, in Kafka's order per API); [`merge_answers`] does the merge.
//! [`ShareCoordinatorService`] drives shards with them for callers without a
//! runtime (tests, benches, a single process): it appends every record at once.

use std::collections::{BTreeMap, HashSet};

use group_types::{
    DeleteShareGroupStateRequest, DeleteShareGroupStateResponse, DeleteStatePartition, ErrorCode,
    InitializeShareGroupStateRequest, InitializeShareGroupStateResponse, InitializeStatePartition,
    ReadShareGroupStateRequest, ReadShareGroupStateResponse, ReadShareGroupStateSummaryRequest,
    ReadShareGroupStateSummaryResponse, ReadStatePartition, ReadStatePartitionResult,
    ReadStateSummaryPartition, ReadStateSummaryPartitionResult, ShareStatePartitionResult, ShareStateRequest,
    ShareStateResponse, ShareStateTopic, TopicId, WriteShareGroupStateRequest, WriteShareGroupStateResponse,
    WriteStatePartition,
};

use crate::shard::default_error_message;
use crate::{
    PartitionReply, ShardResult, ShareCoordinatorConfig, ShareCoordinatorShard, SharePartitionKey,
    ShareRecord, TopicsImage,
};

/// The message Kafka's service answers every partition with when it is not active.
pub const NOT_AVAILABLE_MESSAGE: &str = "Share coordinator is not available.";

/// One shard call of a split request: a share partition, the partition of
/// `__share_group_state` that holds it, and the request's data for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardCall<P> {
    /// The partition of `__share_group_state` to run the call on.
    pub coordinator_partition: i32,
    /// The share partition.
    pub key: SharePartitionKey,
    /// The request's data for it.
    pub data: P,
}

/// What the service makes of a request: shard calls, or an answer at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Split<P, R> {
    /// One call per share partition, in request order.
    Calls(Vec<ShardCall<P>>),
    /// The service answered without calling a shard (Kafka answers an empty
    /// response to an empty group id or topic list, and errors for every
    /// partition when it is not active).
    Answered(R),
}

/// A request's or an answer's per-partition data, which names its partition.
pub trait PartitionIndexed {
    /// The partition index.
    fn partition(&self) -> i32;
}

/// A per-partition answer the service can make itself (a refusal).
pub trait PartitionAnswer: PartitionIndexed {
    /// `partition` refused with `code` and `message`, other fields at their defaults.
    fn refusal(partition: i32, code: ErrorCode, message: String) -> Self;
}

macro_rules! partition_indexed {
    ($($ty:ty),*) => {$(
        impl PartitionIndexed for $ty {
            fn partition(&self) -> i32 {
                self.partition
            }
        }
    )*};
}

partition_indexed!(
    InitializeStatePartition,
    ReadStatePartition,
    ReadStateSummaryPartition,
    WriteStatePartition,
    DeleteStatePartition,
    ShareStatePartitionResult,
    ReadStatePartitionResult,
    ReadStateSummaryPartitionResult
);

impl PartitionAnswer for ShareStatePartitionResult {
    fn refusal(partition: i32, code: ErrorCode, message: String) -> Self {
        ShareStatePartitionResult::error(partition, code, message)
    }
}

impl PartitionAnswer for ReadStatePartitionResult {
    fn refusal(partition: i32, code: ErrorCode, message: String) -> Self {
        ReadStatePartitionResult::error(partition, code, message)
    }
}

impl PartitionAnswer for ReadStateSummaryPartitionResult {
    fn refusal(partition: i32, code: ErrorCode, message: String) -> Self {
        ReadStateSummaryPartitionResult::error(partition, code, message)
    }
}

/// Merges per-partition answers into per-topic results, as Kafka's service does
/// with its map of futures: one entry per topic, an answer for a partition already
/// answered replaces the earlier one. Topics and partitions keep their order of
/// first appearance (Kafka's come in `HashMap` order; nothing orders them).
pub fn merge_answers<P: PartitionIndexed>(
    answers: impl IntoIterator<Item = (TopicId, P)>,
) -> Vec<ShareStateTopic<P>> {
    let mut topics: Vec<ShareStateTopic<P>> = Vec::new();
    for (topic_id, answer) in answers {
        let index = match topics.iter().position(|t| t.topic_id == topic_id) {
            Some(index) => index,
            None => {
                topics.push(ShareStateTopic::new(topic_id, []));
                topics.len() - 1
            }
        };
        let partitions = &mut topics[index].partitions;
        match partitions.iter_mut().find(|p| p.partition() == answer.partition()) {
            Some(slot) => *slot = answer,
            None => partitions.push(answer),
        }
    }
    topics
}

/// The order in which an API's service method makes its own checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checks {
    /// Write and Read: the topic and partition lists, the group id, then whether
    /// the coordinator is active.
    ListsFirst,
    /// Summary and Delete: active, the group id, the topic and partition lists.
    ActiveFirst,
    /// Initialize: active, the group id, the topic list (a topic without
    /// partitions simply makes no call).
    ActiveFirstTopicsOnly,
}

/// The service's split of `request` with its checks in `order`.
fn split<P: PartitionIndexed + Clone, R: PartitionAnswer>(
    request: &ShareStateRequest<P>,
    active: bool,
    num_partitions: i32,
    order: Checks,
) -> Split<P, ShareStateResponse<R, P>> {
    let no_partitions =
        request.topics.iter().any(|t| t.partitions.is_empty()) && order != Checks::ActiveFirstTopicsOnly;
    let malformed = request.topics.is_empty() || no_partitions || request.group_id.is_empty();
    let not_active = || {
        let results = request
            .topics
            .iter()
            .map(|t| {
                let answers = t.partitions.iter().map(|p| {
                    R::refusal(
                        p.partition(),
                        ErrorCode::CoordinatorNotAvailable,
                        NOT_AVAILABLE_MESSAGE.to_owned(),
                    )
                });
                ShareStateTopic::new(t.topic_id, answers)
            })
            .collect();
        Split::Answered(ShareStateResponse::new(results))
    };
    match order {
        Checks::ListsFirst if malformed => Split::Answered(ShareStateResponse::default()),
        _ if !active => not_active(),
        _ if malformed => Split::Answered(ShareStateResponse::default()),
        _ => {
            let mut calls = Vec::new();
            for topic in &request.topics {
                for data in &topic.partitions {
                    let key =
                        SharePartitionKey::new(request.group_id.clone(), topic.topic_id, data.partition());
                    let coordinator_partition = key.coordinator_partition(num_partitions);
                    calls.push(ShardCall { coordinator_partition, key, data: data.clone() });
                }
            }
            Split::Calls(calls)
        }
    }
}

/// Kafka's `ShareCoordinatorService.writeState` up to the shard calls: an empty
/// topic list, a topic without partitions or an empty group id answer an empty
/// response; then an inactive coordinator answers COORDINATOR_NOT_AVAILABLE per
/// partition.
pub fn split_write(
    request: &WriteShareGroupStateRequest,
    active: bool,
    num_partitions: i32,
) -> Split<WriteStatePartition, WriteShareGroupStateResponse> {
    split(request, active, num_partitions, Checks::ListsFirst)
}

/// Kafka's `ShareCoordinatorService.readState` up to the shard calls (the same
/// checks in the same order as [`split_write`]).
pub fn split_read(
    request: &ReadShareGroupStateRequest,
    active: bool,
    num_partitions: i32,
) -> Split<ReadStatePartition, ReadShareGroupStateResponse> {
    split(request, active, num_partitions, Checks::ListsFirst)
}

/// Kafka's `ShareCoordinatorService.readStateSummary` up to the shard calls: here
/// an inactive coordinator is checked first, then the group id, then the lists.
pub fn split_read_summary(
    request: &ReadShareGroupStateSummaryRequest,
    active: bool,
    num_partitions: i32,
) -> Split<ReadStateSummaryPartition, ReadShareGroupStateSummaryResponse> {
    split(request, active, num_partitions, Checks::ActiveFirst)
}

/// Kafka's `ShareCoordinatorService.deleteState` up to the shard calls (inactive,
/// group id, then the lists).
pub fn split_delete(
    request: &DeleteShareGroupStateRequest,
    active: bool,
    num_partitions: i32,
) -> Split<DeleteStatePartition, DeleteShareGroupStateResponse> {
    split(request, active, num_partitions, Checks::ActiveFirst)
}

/// Kafka's `ShareCoordinatorService.initializeState` up to the shard calls
/// (inactive, group id, an empty topic list; a topic without partitions is not
/// checked and simply makes no call).
pub fn split_initialize(
    request: &InitializeShareGroupStateRequest,
    active: bool,
    num_partitions: i32,
) -> Split<InitializeStatePartition, InitializeShareGroupStateResponse> {
    split(request, active, num_partitions, Checks::ActiveFirstTopicsOnly)
}

/// A record the service appended: where, at which offset, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendedRecord {
    /// The partition of `__share_group_state`.
    pub coordinator_partition: i32,
    /// The record's offset in it.
    pub offset: i64,
    /// The record.
    pub record: ShareRecord,
}

/// A response and the records its request appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceResult<R> {
    /// The answer.
    pub response: R,
    /// The records appended, in order.
    pub records: Vec<AppendedRecord>,
}

/// A shard and the next offset of its partition of `__share_group_state`.
#[derive(Debug, Clone)]
struct Hosted {
    shard: ShareCoordinatorShard,
    next_offset: i64,
}

/// The share coordinator over the partitions of `__share_group_state` this process
/// hosts, with every record appended and replayed at once (no runtime, no I/O). A
/// request for a share partition routed to a partition not hosted answers
/// NOT_COORDINATOR for it.
///
/// ```
/// use group_share_coordinator::{ShareCoordinatorConfig, ShareCoordinatorService, TopicsImage};
/// use group_types::{
///     ErrorCode, InitializeShareGroupStateRequest, InitializeStatePartition, ShareStateTopic, TopicId,
/// };
///
/// let topic = TopicId::from_u128(7);
/// let mut service = ShareCoordinatorService::new(ShareCoordinatorConfig::default());
/// service.startup(TopicsImage::new([(topic, 1)]));
/// let request = InitializeShareGroupStateRequest {
///     api_version: 0,
///     group_id: "g".into(),
///     topics: vec![ShareStateTopic::new(topic, [InitializeStatePartition { partition: 0, state_epoch: 0, start_offset: 10 }])],
/// };
/// let answer = service.initialize_state(0, &request);
/// assert_eq!(answer.response.results[0].partitions[0].error_code, ErrorCode::None);
/// assert_eq!(answer.records.len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct ShareCoordinatorService {
    config: ShareCoordinatorConfig,
    active: bool,
    image: TopicsImage,
    hosted: BTreeMap<i32, Hosted>,
}

impl ShareCoordinatorService {
    /// A service that is not started: it answers COORDINATOR_NOT_AVAILABLE.
    pub fn new(config: ShareCoordinatorConfig) -> ShareCoordinatorService {
        ShareCoordinatorService {
            config,
            active: false,
            image: TopicsImage::default(),
            hosted: BTreeMap::new(),
        }
    }

    /// Starts the service hosting every partition of `__share_group_state`, each
    /// loaded empty with `image`.
    pub fn startup(&mut self, image: TopicsImage) {
        self.active = true;
        self.image = image;
        for partition in 0..self.config.state_topic_num_partitions {
            self.load(partition);
        }
    }

    /// Stops the service; it answers COORDINATOR_NOT_AVAILABLE until started again.
    pub fn shutdown(&mut self) {
        self.active = false;
    }

    /// Kafka's `onElection`: hosts `partition` from now on, loaded empty.
    pub fn load(&mut self, partition: i32) {
        let mut shard = ShareCoordinatorShard::new(self.config.clone());
        shard.on_loaded(self.image.clone());
        self.hosted.insert(partition, Hosted { shard, next_offset: 0 });
    }

    /// Kafka's `onResignation`: no longer hosts `partition`.
    pub fn unload(&mut self, partition: i32) {
        self.hosted.remove(&partition);
    }

    /// The shard of `partition`, if hosted.
    pub fn shard(&self, partition: i32) -> Option<&ShareCoordinatorShard> {
        self.hosted.get(&partition).map(|h| &h.shard)
    }

    /// Kafka's `partitionFor`: the partition of `__share_group_state` of `key`.
    pub fn partition_for(&self, key: &SharePartitionKey) -> i32 {
        key.coordinator_partition(self.config.state_topic_num_partitions)
    }

    /// InitializeShareGroupState.
    pub fn initialize_state(
        &mut self,
        now_ms: i64,
        request: &InitializeShareGroupStateRequest,
    ) -> ServiceResult<InitializeShareGroupStateResponse> {
        let split = split_initialize(request, self.active, self.config.state_topic_num_partitions);
        self.serve(split, "initialize share group state", |s, c| {
            s.initialize_state(now_ms, &c.key.group_id, Some(c.key.topic_id), &c.data)
        })
    }

    /// WriteShareGroupState.
    pub fn write_state(
        &mut self,
        now_ms: i64,
        request: &WriteShareGroupStateRequest,
    ) -> ServiceResult<WriteShareGroupStateResponse> {
        let split = split_write(request, self.active, self.config.state_topic_num_partitions);
        self.serve(split, "write share group state", |s, c| {
            s.write_state(now_ms, &c.key.group_id, Some(c.key.topic_id), &c.data)
        })
    }

    /// ReadShareGroupState.
    pub fn read_state(
        &mut self,
        now_ms: i64,
        request: &ReadShareGroupStateRequest,
    ) -> ServiceResult<ReadShareGroupStateResponse> {
        let split = split_read(request, self.active, self.config.state_topic_num_partitions);
        self.serve(split, "read share group state", |s, c| {
            s.read_state(now_ms, &c.key.group_id, Some(c.key.topic_id), &c.data)
        })
    }

    /// ReadShareGroupStateSummary.
    pub fn read_state_summary(
        &mut self,
        request: &ReadShareGroupStateSummaryRequest,
    ) -> ServiceResult<ReadShareGroupStateSummaryResponse> {
        let split = split_read_summary(request, self.active, self.config.state_topic_num_partitions);
        self.serve(split, "read share group state summary", |s, c| {
            s.read_state_summary(&c.key.group_id, Some(c.key.topic_id), &c.data)
        })
    }

    /// DeleteShareGroupState.
    pub fn delete_state(
        &mut self,
        request: &DeleteShareGroupStateRequest,
    ) -> ServiceResult<DeleteShareGroupStateResponse> {
        let split = split_delete(request, self.active, self.config.state_topic_num_partitions);
        self.serve(split, "delete share group state", |s, c| {
            s.delete_state(&c.key.group_id, Some(c.key.topic_id), c.data.partition)
        })
    }

    /// Kafka's `onTopicsDeleted` then `onNewMetadataImage`: every hosted shard
    /// tombstones the deleted topics' share partitions and forgets the topics.
    pub fn on_topics_deleted(&mut self, topic_ids: &HashSet<TopicId>) -> Vec<AppendedRecord> {
        self.image = self.image.without(topic_ids);
        let image = self.image.clone();
        self.for_each_shard(|shard| shard.maybe_cleanup_share_state(topic_ids), Some(image))
    }

    /// The periodic cold-partition snapshot task on every hosted shard.
    pub fn snapshot_cold_partitions(&mut self, now_ms: i64) -> Vec<AppendedRecord> {
        self.for_each_shard(|shard| shard.snapshot_cold_partitions(now_ms), None)
    }

    fn for_each_shard(
        &mut self,
        records_of: impl Fn(&ShareCoordinatorShard) -> Vec<ShareRecord>,
        image: Option<TopicsImage>,
    ) -> Vec<AppendedRecord> {
        let mut appended = Vec::new();
        for (&partition, hosted) in &mut self.hosted {
            for record in records_of(&hosted.shard) {
                appended.push(hosted.append(partition, record));
            }
            if let Some(image) = &image {
                hosted.shard.on_new_metadata_image(image.clone());
            }
        }
        appended
    }

    /// Runs each call of `split` on its shard, appending and replaying its records
    /// at once, and merges the answers.
    fn serve<P, R: PartitionAnswer>(
        &mut self,
        split: Split<P, ShareStateResponse<R, P>>,
        operation: &str,
        op: impl Fn(&ShareCoordinatorShard, &ShardCall<P>) -> ShardResult<PartitionReply<R>>,
    ) -> ServiceResult<ShareStateResponse<R, P>> {
        let calls = match split {
            Split::Answered(response) => return ServiceResult { response, records: Vec::new() },
            Split::Calls(calls) => calls,
        };
        let mut answers = Vec::with_capacity(calls.len());
        let mut appended = Vec::new();
        for call in &calls {
            let Some(hosted) = self.hosted.get_mut(&call.coordinator_partition) else {
                // Kafka's `handleOperationException` message for a runtime failure.
                let message =
                    format!("Unable to {operation}: {}", default_error_message(ErrorCode::NotCoordinator));
                answers.push((
                    call.key.topic_id,
                    R::refusal(call.key.partition, ErrorCode::NotCoordinator, message),
                ));
                continue;
            };
            let result = op(&hosted.shard, call);
            for record in result.records {
                appended.push(hosted.append(call.coordinator_partition, record));
            }
            answers.push((call.key.topic_id, result.response.result));
        }
        ServiceResult { response: ShareStateResponse::new(merge_answers(answers)), records: appended }
    }
}

impl Hosted {
    fn append(&mut self, partition: i32, record: ShareRecord) -> AppendedRecord {
        let offset = self.next_offset;
        self.next_offset += 1;
        self.shard.replay(offset, &record);
        AppendedRecord { coordinator_partition: partition, offset, record }
    }
}
