//! OffsetCommit (API key 8): a member or a simple consumer stores its positions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ErrorCode;
use crate::{CommitMetadata, GroupId, GroupInstanceId, MemberId};

/// Per topic, per partition, sorted: the shape of stored offsets and of the
/// offset requests whose order nobody relies on (OffsetFetch, OffsetDelete).
pub type PartitionMap<T> = BTreeMap<String, BTreeMap<i32, T>>;

/// One topic's partitions in an OffsetCommit request or response, in the order
/// the client sent them, as on the wire.
///
/// A commit is consumed once, partition by partition: a list costs one
/// allocation per topic where nested maps cost a node per topic and per
/// partition, and it keeps what Kafka keeps (request order, and a partition
/// named twice answered twice; the later commit wins).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopicEntries<T> {
    /// The topic.
    pub topic: String,
    /// Each partition with its entry, in request order.
    pub partitions: Vec<(i32, T)>,
}

impl<T> TopicEntries<T> {
    /// A topic with no partitions yet.
    pub fn new(topic: impl Into<String>) -> TopicEntries<T> {
        TopicEntries { topic: topic.into(), partitions: Vec::new() }
    }
}

/// Finds `topic`'s entry in `topics`, adding it at the end if it is not there:
/// how builders group partitions by topic without a map.
pub(crate) fn entry_of<'a, T>(topics: &'a mut Vec<TopicEntries<T>>, topic: &str) -> &'a mut TopicEntries<T> {
    let position = match topics.iter().rposition(|t| t.topic == topic) {
        Some(position) => position,
        None => {
            topics.push(TopicEntries::new(topic));
            topics.len() - 1
        }
    };
    &mut topics[position]
}

/// Every partition of `topics` with the same error, in request order: how a
/// commit's group-level errors reach the wire.
pub(crate) fn uniform_errors<T>(
    topics: &[TopicEntries<T>],
    error_code: ErrorCode,
) -> Vec<TopicEntries<ErrorCode>> {
    topics
        .iter()
        .map(|t| TopicEntries {
            topic: t.topic.clone(),
            partitions: t.partitions.iter().map(|&(p, _)| (p, error_code)).collect(),
        })
        .collect()
}

/// The outcome of one partition in per-partition `errors` (the last one, if it was
/// named twice).
pub(crate) fn error_for(
    errors: &[TopicEntries<ErrorCode>],
    topic: &str,
    partition: i32,
) -> Option<ErrorCode> {
    let entries = errors.iter().rev().filter(|t| t.topic == topic);
    entries.flat_map(|t| t.partitions.iter().rev()).find(|(p, _)| *p == partition).map(|&(_, code)| code)
}

/// Every outcome of per-partition `errors` with its topic and partition, in order.
pub(crate) fn iter_errors(
    errors: &[TopicEntries<ErrorCode>],
) -> impl Iterator<Item = (&str, i32, ErrorCode)> {
    errors.iter().flat_map(|t| t.partitions.iter().map(|&(p, code)| (t.topic.as_str(), p, code)))
}

/// Sets every outcome of per-partition `errors` to `error_code`.
pub(crate) fn set_all_errors(errors: &mut [TopicEntries<ErrorCode>], error_code: ErrorCode) {
    for topic in errors {
        topic.partitions.iter_mut().for_each(|(_, code)| *code = error_code);
    }
}

/// One partition's commit.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetCommitData {
    /// The next offset to consume.
    pub offset: i64,
    /// The leader epoch of the record at `offset - 1` (v6+); `None` when unknown (-1 on the wire).
    pub leader_epoch: Option<i32>,
    /// Free-form client metadata, stored exactly as received; `None` is stored as `""`.
    pub metadata: Option<CommitMetadata>,
    /// v1 only: an explicit commit timestamp; `None` means "now".
    pub commit_timestamp: Option<i64>,
}

impl OffsetCommitData {
    /// A commit of `offset` with no epoch and no metadata.
    pub fn new(offset: i64) -> OffsetCommitData {
        OffsetCommitData { offset, ..OffsetCommitData::default() }
    }
}

/// An OffsetCommit request, with every field of versions 0 to 9.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetCommitRequest {
    /// The group.
    pub group_id: GroupId,
    /// The member's generation; -1 for a simple consumer (the default).
    pub generation_id: i32,
    /// The member's id; `""` for a simple consumer.
    pub member_id: MemberId,
    /// The static instance id (v7+).
    pub group_instance_id: Option<GroupInstanceId>,
    /// v2-4: how long to keep these offsets; -1 (the default) means the broker's retention.
    pub retention_time_ms: i64,
    /// The commits, per topic and partition, in request order.
    pub offsets: Vec<TopicEntries<OffsetCommitData>>,
    /// The request's API version: a commit with a generation to a missing group
    /// is `GROUP_ID_NOT_FOUND` from v9 and `ILLEGAL_GENERATION` before.
    pub api_version: i16,
}

impl Default for OffsetCommitRequest {
    fn default() -> OffsetCommitRequest {
        OffsetCommitRequest {
            group_id: GroupId::empty(),
            generation_id: -1,
            member_id: MemberId::empty(),
            group_instance_id: None,
            retention_time_ms: -1,
            offsets: Vec::new(),
            api_version: OffsetCommitRequest::LATEST_VERSION,
        }
    }
}

impl OffsetCommitRequest {
    /// The newest OffsetCommit version, the one [`Default`] uses.
    pub const LATEST_VERSION: i16 = 9;

    /// Adds one partition's commit to its topic's entry (builder style).
    pub fn with_offset(
        mut self,
        topic: impl AsRef<str>,
        partition: i32,
        data: OffsetCommitData,
    ) -> OffsetCommitRequest {
        self.push(topic.as_ref(), partition, data);
        self
    }

    /// Adds one partition's commit to its topic's entry.
    pub fn push(&mut self, topic: &str, partition: i32, data: OffsetCommitData) {
        entry_of(&mut self.offsets, topic).partitions.push((partition, data));
    }

    /// The number of partitions in the request.
    pub fn partition_count(&self) -> usize {
        self.offsets.iter().map(|t| t.partitions.len()).sum()
    }
}

/// An OffsetCommit response: only per-partition errors, as on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetCommitResponse {
    /// The outcome of every requested partition, in request order.
    pub errors: Vec<TopicEntries<ErrorCode>>,
}

impl OffsetCommitResponse {
    /// Every partition of `request` with the same error: how group-level errors reach the wire.
    pub fn uniform(request: &OffsetCommitRequest, error_code: ErrorCode) -> OffsetCommitResponse {
        OffsetCommitResponse { errors: uniform_errors(&request.offsets, error_code) }
    }

    /// Adds one partition's outcome to its topic's entry.
    pub fn push(&mut self, topic: &str, partition: i32, error_code: ErrorCode) {
        entry_of(&mut self.errors, topic).partitions.push((partition, error_code));
    }

    /// The outcome of one partition, if it was in the request (the last one, if
    /// it was named twice).
    pub fn error_for(&self, topic: &str, partition: i32) -> Option<ErrorCode> {
        error_for(&self.errors, topic, partition)
    }

    /// Every outcome with its topic and partition, in response order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i32, ErrorCode)> {
        iter_errors(&self.errors)
    }

    /// Sets every outcome to `error_code`: how a group-level failure after the
    /// fact (a lost write, a lost partition) answers every partition.
    pub fn set_all(&mut self, error_code: ErrorCode) {
        set_all_errors(&mut self.errors, error_code);
    }
}
