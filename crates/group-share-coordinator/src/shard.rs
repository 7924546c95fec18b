//! The share coordinator's shard (Kafka's `ShareCoordinatorShard`): the state of
//! the share partitions routed to one partition of `__share_group_state`.
//!
//! # Call contract
//!
//! Every operation takes one share partition and returns a [`ShardResult`]: the
//! answer and the records to append, without changing the shard. The runtime
//! appends the records and hands each back to [`ShareCoordinatorShard::replay`]
//! with its offset once written; replay is the only way state changes, and loading
//! a partition is the same replay from offset 0. An operation sees the state of
//! the records replayed before it, so a runtime that lets operations run ahead of
//! their writes must replay (or undo) in order, as Kafka's runtime does with its
//! snapshots.

use std::collections::{HashMap, HashSet};

use group_types::hash::ClientMap;
use serde::{Deserialize, Serialize};

use group_types::{
    ErrorCode, GroupId, InitializeStatePartition, ReadStatePartition, ReadStatePartitionResult,
    ReadStateSummaryPartition, ReadStateSummaryPartitionResult, ShareStatePartitionResult, TopicId,
    WriteStatePartition,
};

use crate::offsets::OffsetsManager;
use crate::{
    ShareCoordinatorConfig, SharePartitionKey, ShareRecord, ShareSnapshotValue, ShareUpdateValue,
    combine_state_batches,
};

/// `ShareCoordinatorShard.NULL_TOPIC_ID`.
pub const NULL_TOPIC_ID_MESSAGE: &str = "The topic id cannot be null.";
/// `ShareCoordinatorShard.NEGATIVE_PARTITION_ID`.
pub const NEGATIVE_PARTITION_ID_MESSAGE: &str = "The partition id cannot be a negative number.";
/// `ShareCoordinatorShard.WRITE_UNINITIALIZED_SHARE_PARTITION`.
pub const WRITE_UNINITIALIZED_MESSAGE: &str = "Write operation on uninitialized share partition not allowed.";
/// `ShareCoordinatorShard.READ_UNINITIALIZED_SHARE_PARTITION`.
pub const READ_UNINITIALIZED_MESSAGE: &str = "Read operation on uninitialized share partition not allowed.";

/// Kafka's default message for an error code (`Errors.message()`): those the
/// shard answers, and those the group coordinator's share APIs answer with
/// the error's message (refusals, failed persister calls, end-offset lookups);
/// any other code gets `UNKNOWN_SERVER_ERROR`'s.
pub fn default_error_message(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::UnknownTopicOrPartition => "This server does not host this topic-partition.",
        ErrorCode::NotLeaderOrFollower => {
            "For requests intended only for the leader, this error indicates that the broker is not the \
             current leader. For requests intended for any replica, this error indicates that the broker \
             is not a replica of the topic partition."
        }
        ErrorCode::RequestTimedOut => "The request timed out.",
        ErrorCode::TopicAuthorizationFailed => "Topic authorization failed.",
        ErrorCode::GroupAuthorizationFailed => "Group authorization failed.",
        ErrorCode::ClusterAuthorizationFailed => "Cluster authorization failed.",
        ErrorCode::UnsupportedVersion => "The version of API is not supported.",
        ErrorCode::KafkaStorageError => "Disk error when trying to access log file on the disk.",
        ErrorCode::NonEmptyGroup => "The group is not empty.",
        ErrorCode::GroupIdNotFound => "The group id does not exist.",
        ErrorCode::UnknownTopicId => "This server does not host this topic ID.",
        ErrorCode::FencedLeaderEpoch => {
            "The leader epoch in the request is older than the epoch on the broker."
        }
        ErrorCode::FencedStateEpoch => {
            "The share coordinator rejected the request because the share-group state epoch did not match."
        }
        ErrorCode::CoordinatorNotAvailable => "The coordinator is not available.",
        ErrorCode::NotCoordinator => "This is not the correct coordinator.",
        ErrorCode::CoordinatorLoadInProgress => {
            "The coordinator is loading and hence can't process requests."
        }
        ErrorCode::InvalidGroupId => "The group id is invalid.",
        _ => "The server experienced an unexpected error when processing the request.",
    }
}

/// The topics the shard checks requests against (the part of Kafka's metadata
/// image it reads): topic id to partition count.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TopicsImage {
    partitions: HashMap<TopicId, i32>,
}

impl TopicsImage {
    /// An image of `topics`, each a topic id and its partition count.
    pub fn new(topics: impl IntoIterator<Item = (TopicId, i32)>) -> TopicsImage {
        TopicsImage { partitions: topics.into_iter().collect() }
    }

    /// The partition count of `topic_id`, if it exists.
    pub fn partition_count(&self, topic_id: TopicId) -> Option<i32> {
        self.partitions.get(&topic_id).copied()
    }

    /// The image without `topic_ids`.
    pub fn without(&self, topic_ids: &HashSet<TopicId>) -> TopicsImage {
        let mut partitions = self.partitions.clone();
        partitions.retain(|id, _| !topic_ids.contains(id));
        TopicsImage { partitions }
    }

    fn has(&self, topic_id: TopicId, partition: i32) -> bool {
        self.partition_count(topic_id).is_some_and(|count| partition < count)
    }
}

/// What a shard operation returns: its answer and the records to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardResult<R> {
    /// The records to append, in order.
    pub records: Vec<ShareRecord>,
    /// The answer.
    pub response: R,
}

impl<R> ShardResult<R> {
    fn answer(response: R) -> ShardResult<R> {
        ShardResult { records: Vec::new(), response }
    }
}

/// One share partition's answer, with the topic it names (`None`: the request's
/// topic id was null, which Kafka's shard accepts from programmatic callers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionReply<P> {
    /// The topic.
    pub topic_id: Option<TopicId>,
    /// The partition's answer.
    pub result: P,
}

/// What the shard holds per live share partition (Kafka's four timeline maps).
/// It is also what a coordinator that stores state by key stores for a share
/// partition: [`ShareCoordinatorShard::restore`] puts it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharePartitionState {
    /// The merged state (Kafka's `ShareGroupOffset`).
    pub offset: ShareSnapshotValue,
    /// The highest leader epoch replayed (`leaderEpochMap`).
    pub max_leader_epoch: i32,
    /// The highest state epoch of a replayed snapshot (`stateEpochMap`); `None`
    /// while only updates were replayed.
    pub max_state_epoch: Option<i32>,
    /// ShareUpdates replayed since the counter was last reset
    /// (`snapshotUpdateCount`); `None` until the first update.
    pub updates_since_snapshot: Option<i32>,
}

/// The share coordinator's state machine for one partition of
/// `__share_group_state`.
#[derive(Debug, Clone)]
pub struct ShareCoordinatorShard {
    config: ShareCoordinatorConfig,
    // Hashed (keys are client-chosen, so seeded); walks that answer in order sort.
    partitions: ClientMap<SharePartitionKey, SharePartitionState>,
    image: Option<TopicsImage>,
    offsets: OffsetsManager,
}

/// A share partition named by a request: the group, the topic id (`None` for
/// Kafka's null) and the partition index.
#[derive(Debug, Clone, Copy)]
struct Target<'a> {
    group_id: &'a GroupId,
    topic_id: Option<TopicId>,
    partition: i32,
}

impl Target<'_> {
    fn key(&self, topic_id: TopicId) -> SharePartitionKey {
        SharePartitionKey { group_id: self.group_id.clone(), topic_id, partition: self.partition }
    }
}

/// Why a request was refused before it touched any state.
type Refusal = (ErrorCode, &'static str);

impl ShareCoordinatorShard {
    /// An empty shard with `config`, before it is loaded (no metadata image: every
    /// request that checks topics answers UNKNOWN_TOPIC_OR_PARTITION).
    pub fn new(config: ShareCoordinatorConfig) -> ShareCoordinatorShard {
        ShareCoordinatorShard {
            config,
            partitions: ClientMap::default(),
            image: None,
            offsets: OffsetsManager::default(),
        }
    }

    /// Kafka's `onLoaded`: the partition is loaded and `image` is the metadata.
    pub fn on_loaded(&mut self, image: TopicsImage) {
        self.image = Some(image);
    }

    /// Kafka's `onNewMetadataImage`: topics changed.
    pub fn on_new_metadata_image(&mut self, image: TopicsImage) {
        self.image = Some(image);
    }

    /// The settings.
    pub fn config(&self) -> &ShareCoordinatorConfig {
        &self.config
    }

    /// The state of `key`, if it is live.
    pub fn share_partition(&self, key: &SharePartitionKey) -> Option<&SharePartitionState> {
        self.partitions.get(key)
    }

    /// Every live share partition, sorted by group, topic id and partition.
    pub fn share_partitions(&self) -> impl Iterator<Item = (&SharePartitionKey, &SharePartitionState)> {
        let mut all: Vec<_> = self.partitions.iter().collect();
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        all.into_iter()
    }

    /// Kafka's `lastRedundantOffset`: every record of the partition below this
    /// offset is superseded by a later snapshot (`None`: nothing is, or 0).
    pub fn last_redundant_offset(&self) -> Option<i64> {
        self.offsets.last_redundant_offset()
    }

    /// Puts `key`'s state back as it was (`None`: no state): what a store that
    /// keeps the state per key rather than Kafka's log of snapshots and updates
    /// loads, and what undoes a replay whose write failed. The offsets of
    /// `last_redundant_offset` are a log's and are left alone.
    pub fn restore(&mut self, key: SharePartitionKey, state: Option<SharePartitionState>) {
        match state {
            Some(state) => {
                self.partitions.insert(key, state);
            }
            None => {
                self.partitions.remove(&key);
            }
        }
    }

    /// Kafka's `replay`: applies `record`, written at `offset`. A snapshot replaces
    /// the share partition's state, an update is merged into it, a tombstone
    /// forgets it.
    pub fn replay(&mut self, offset: i64, record: &ShareRecord) {
        match record {
            ShareRecord::Snapshot { key, value: None } => {
                self.partitions.remove(key);
                self.offsets.update(key, offset, true);
            }
            ShareRecord::Snapshot { key, value: Some(value) } => {
                let limit = self.config.snapshot_update_records_per_snapshot;
                match self.partitions.get_mut(key) {
                    Some(entry) => {
                        entry.max_leader_epoch = entry.max_leader_epoch.max(value.leader_epoch);
                        entry.max_state_epoch = Some(
                            entry.max_state_epoch.map_or(value.state_epoch, |e| e.max(value.state_epoch)),
                        );
                        entry.offset = value.clone();
                        // The counter restarts only once it reached the limit: a
                        // re-initialization does not reset it.
                        if entry.updates_since_snapshot.is_some_and(|n| n >= limit) {
                            entry.updates_since_snapshot = Some(0);
                        }
                    }
                    None => {
                        let entry = SharePartitionState {
                            offset: value.clone(),
                            max_leader_epoch: value.leader_epoch,
                            max_state_epoch: Some(value.state_epoch),
                            updates_since_snapshot: None,
                        };
                        self.partitions.insert(key.clone(), entry);
                    }
                }
                self.offsets.update(key, offset, false);
            }
            ShareRecord::Update { key, value } => match self.partitions.get_mut(key) {
                Some(entry) => {
                    entry.max_leader_epoch = entry.max_leader_epoch.max(value.leader_epoch);
                    entry.offset = entry.offset.merged(value);
                    entry.updates_since_snapshot = Some(entry.updates_since_snapshot.map_or(1, |n| n + 1));
                }
                None => {
                    let entry = SharePartitionState {
                        offset: ShareSnapshotValue::from_update(value),
                        max_leader_epoch: value.leader_epoch,
                        max_state_epoch: None,
                        updates_since_snapshot: Some(1),
                    };
                    self.partitions.insert(key.clone(), entry);
                }
            },
        }
    }

    /// Kafka's `initializeState`: a ShareSnapshot that starts the share partition
    /// afresh (snapshot epoch 0, or the stored one + 1; leader epoch 0; no
    /// batches; created and written at `now_ms`).
    pub fn initialize_state(
        &self,
        now_ms: i64,
        group_id: &GroupId,
        topic_id: Option<TopicId>,
        data: &InitializeStatePartition,
    ) -> ShardResult<PartitionReply<ShareStatePartitionResult>> {
        let target = Target { group_id, topic_id, partition: data.partition };
        let checked = self.check_ids(target).and_then(|topic_id| {
            let key = target.key(topic_id);
            let stored = self.partitions.get(&key);
            if data.state_epoch != -1
                && stored.and_then(|s| s.max_state_epoch).is_some_and(|e| e > data.state_epoch)
            {
                return Err((
                    ErrorCode::FencedStateEpoch,
                    default_error_message(ErrorCode::FencedStateEpoch),
                ));
            }
            self.check_image(target, topic_id)?;
            Ok((key, stored))
        });
        let (key, stored) = match checked {
            Ok(found) => found,
            Err((code, message)) => return ShardResult::answer(error_reply(target, code, message)),
        };
        let value = ShareSnapshotValue {
            snapshot_epoch: stored.map_or(0, |s| s.offset.snapshot_epoch + 1),
            state_epoch: data.state_epoch,
            leader_epoch: 0,
            start_offset: data.start_offset,
            // Without a start offset there is nothing to count deliveries from.
            delivery_complete_count: if data.start_offset == -1 { -1 } else { 0 },
            create_timestamp: now_ms,
            write_timestamp: now_ms,
            state_batches: Vec::new(),
        };
        ShardResult {
            records: vec![ShareRecord::Snapshot { key, value: Some(value) }],
            response: ok_reply(target),
        }
    }

    /// Kafka's `writeState`: a ShareUpdate of the written batches, or a ShareSnapshot
    /// of the combined state once the share partition has had
    /// `share.coordinator.snapshot.update.records.per.snapshot` updates. Both keep
    /// the stored leader epoch: a write never raises it.
    pub fn write_state(
        &self,
        now_ms: i64,
        group_id: &GroupId,
        topic_id: Option<TopicId>,
        data: &WriteStatePartition,
    ) -> ShardResult<PartitionReply<ShareStatePartitionResult>> {
        let target = Target { group_id, topic_id, partition: data.partition };
        let checked = self.check_ids(target).and_then(|topic_id| {
            let key = target.key(topic_id);
            let Some(stored) = self.partitions.get(&key) else {
                return Err((ErrorCode::InvalidRequest, WRITE_UNINITIALIZED_MESSAGE));
            };
            if data.leader_epoch != -1 && stored.max_leader_epoch > data.leader_epoch {
                return Err((
                    ErrorCode::FencedLeaderEpoch,
                    default_error_message(ErrorCode::FencedLeaderEpoch),
                ));
            }
            if data.state_epoch != -1 && stored.max_state_epoch.is_some_and(|e| e > data.state_epoch) {
                return Err((
                    ErrorCode::FencedStateEpoch,
                    default_error_message(ErrorCode::FencedStateEpoch),
                ));
            }
            self.check_image(target, topic_id)?;
            Ok((key, stored))
        });
        match checked {
            Ok((key, stored)) => ShardResult {
                records: vec![self.state_record(now_ms, key, stored, data, None)],
                response: ok_reply(target),
            },
            Err((code, message)) => ShardResult::answer(error_reply(target, code, message)),
        }
    }

    /// Kafka's `readStateAndMaybeUpdateLeaderEpoch`: the stored state; a read at a
    /// higher leader epoch also writes a record carrying it (a read is fenced below
    /// the stored leader epoch, -1 included).
    pub fn read_state(
        &self,
        now_ms: i64,
        group_id: &GroupId,
        topic_id: Option<TopicId>,
        data: &ReadStatePartition,
    ) -> ShardResult<PartitionReply<ReadStatePartitionResult>> {
        let target = Target { group_id, topic_id, partition: data.partition };
        let checked = self.check_ids(target).and_then(|topic_id| {
            let key = target.key(topic_id);
            let Some(stored) = self.partitions.get(&key) else {
                return Err((ErrorCode::InvalidRequest, READ_UNINITIALIZED_MESSAGE));
            };
            if stored.max_leader_epoch > data.leader_epoch {
                return Err((
                    ErrorCode::FencedLeaderEpoch,
                    default_error_message(ErrorCode::FencedLeaderEpoch),
                ));
            }
            self.check_image(target, topic_id)?;
            Ok((key, stored))
        });
        let (key, stored) = match checked {
            Ok(found) => found,
            Err((code, message)) => {
                return ShardResult::answer(PartitionReply {
                    topic_id,
                    result: ReadStatePartitionResult::error(data.partition, code, message),
                });
            }
        };
        let state = &stored.offset;
        let response = PartitionReply {
            topic_id,
            result: ReadStatePartitionResult {
                partition: data.partition,
                error_code: ErrorCode::None,
                error_message: None,
                state_epoch: state.state_epoch,
                start_offset: state.start_offset,
                state_batches: state.state_batches.clone(),
            },
        };
        if data.leader_epoch == -1 || stored.max_leader_epoch == data.leader_epoch {
            return ShardResult::answer(response);
        }
        let write = WriteStatePartition {
            partition: data.partition,
            state_epoch: state.state_epoch,
            leader_epoch: data.leader_epoch,
            start_offset: state.start_offset,
            delivery_complete_count: state.delivery_complete_count,
            state_batches: Vec::new(),
        };
        let record = self.state_record(now_ms, key, stored, &write, Some(data.leader_epoch));
        ShardResult { records: vec![record], response }
    }

    /// Kafka's `readStateSummary`: start offset, epochs and delivery complete count.
    /// Never fenced, never writes; a share partition with no state answers start
    /// offset -1.
    pub fn read_state_summary(
        &self,
        group_id: &GroupId,
        topic_id: Option<TopicId>,
        data: &ReadStateSummaryPartition,
    ) -> ShardResult<PartitionReply<ReadStateSummaryPartitionResult>> {
        let target = Target { group_id, topic_id, partition: data.partition };
        let checked = self.check_ids(target).and_then(|topic_id| {
            self.check_image(target, topic_id)?;
            Ok(target.key(topic_id))
        });
        let key = match checked {
            Ok(key) => key,
            Err((code, message)) => {
                return ShardResult::answer(PartitionReply {
                    topic_id,
                    result: ReadStateSummaryPartitionResult::error(data.partition, code, message),
                });
            }
        };
        let result = match self.partitions.get(&key) {
            None => ReadStateSummaryPartitionResult {
                partition: data.partition,
                start_offset: -1,
                delivery_complete_count: -1,
                ..ReadStateSummaryPartitionResult::default()
            },
            Some(stored) => ReadStateSummaryPartitionResult {
                partition: data.partition,
                error_code: ErrorCode::None,
                error_message: None,
                state_epoch: stored.offset.state_epoch,
                leader_epoch: stored.offset.leader_epoch,
                start_offset: stored.offset.start_offset,
                delivery_complete_count: stored.offset.delivery_complete_count,
            },
        };
        ShardResult::answer(PartitionReply { topic_id, result })
    }

    /// Kafka's `deleteState`: a tombstone for a live share partition; nothing for
    /// one with no state.
    pub fn delete_state(
        &self,
        group_id: &GroupId,
        topic_id: Option<TopicId>,
        partition: i32,
    ) -> ShardResult<PartitionReply<ShareStatePartitionResult>> {
        let target = Target { group_id, topic_id, partition };
        let checked = self.check_ids(target).and_then(|topic_id| {
            self.check_image(target, topic_id)?;
            Ok(target.key(topic_id))
        });
        match checked {
            Ok(key) if self.partitions.contains_key(&key) => ShardResult {
                records: vec![ShareRecord::Snapshot { key, value: None }],
                response: ok_reply(target),
            },
            Ok(_) => ShardResult::answer(ok_reply(target)),
            Err((code, message)) => ShardResult::answer(error_reply(target, code, message)),
        }
    }

    /// Kafka's `snapshotColdPartitions` (the periodic task): nothing when every
    /// share partition was already snapshotted after its creation; otherwise a
    /// ShareSnapshot of each share partition whose last snapshot is at least
    /// `share.coordinator.cold.partition.snapshot.interval.ms` old. Records come in
    /// key order (Kafka's come in hash order).
    pub fn snapshot_cold_partitions(&self, now_ms: i64) -> Vec<ShareRecord> {
        let all_cold =
            self.partitions.values().all(|s| s.offset.create_timestamp != s.offset.write_timestamp);
        if all_cold {
            return Vec::new();
        }
        let interval = i64::from(self.config.cold_partition_snapshot_interval_ms);
        self.share_partitions()
            .filter(|(_, s)| now_ms - s.offset.write_timestamp >= interval)
            .map(|(key, s)| {
                let value = ShareSnapshotValue {
                    snapshot_epoch: s.offset.snapshot_epoch + 1,
                    write_timestamp: now_ms,
                    ..s.offset.clone()
                };
                ShareRecord::Snapshot { key: key.clone(), value: Some(value) }
            })
            .collect()
    }

    /// Kafka's `maybeCleanupShareState`: tombstones for every share partition, of
    /// every group, of the deleted topics (in key order; Kafka's come in hash order).
    pub fn maybe_cleanup_share_state(&self, deleted_topic_ids: &HashSet<TopicId>) -> Vec<ShareRecord> {
        self.share_partitions()
            .filter(|(key, _)| deleted_topic_ids.contains(&key.topic_id))
            .map(|(key, _)| ShareRecord::Snapshot { key: key.clone(), value: None })
            .collect()
    }

    /// Kafka's `generateShareStateRecord`: the record a write (or a leader-epoch
    /// read, which passes `raise_leader_epoch`) makes of `data`.
    fn state_record(
        &self,
        now_ms: i64,
        key: SharePartitionKey,
        stored: &SharePartitionState,
        data: &WriteStatePartition,
        raise_leader_epoch: Option<i32>,
    ) -> ShareRecord {
        let current = &stored.offset;
        let leader_epoch = match raise_leader_epoch {
            Some(epoch) if epoch != -1 => epoch,
            _ => current.leader_epoch,
        };
        let updates = stored.updates_since_snapshot.unwrap_or(0);
        if updates >= self.config.snapshot_update_records_per_snapshot {
            let start_offset = if data.start_offset == -1 { current.start_offset } else { data.start_offset };
            let value = ShareSnapshotValue {
                snapshot_epoch: current.snapshot_epoch + 1,
                state_epoch: current.state_epoch,
                leader_epoch,
                start_offset,
                delivery_complete_count: data.delivery_complete_count,
                create_timestamp: now_ms,
                write_timestamp: now_ms,
                state_batches: combine_state_batches(
                    &current.state_batches,
                    &data.state_batches,
                    start_offset,
                ),
            };
            ShareRecord::Snapshot { key, value: Some(value) }
        } else {
            let value = ShareUpdateValue {
                snapshot_epoch: current.snapshot_epoch,
                leader_epoch,
                start_offset: data.start_offset,
                delivery_complete_count: data.delivery_complete_count,
                state_batches: combine_state_batches(&[], &data.state_batches, data.start_offset),
            };
            ShareRecord::Update { key, value }
        }
    }

    /// The first two checks of every operation: a null topic id, a negative partition.
    fn check_ids(&self, target: Target<'_>) -> Result<TopicId, Refusal> {
        let Some(topic_id) = target.topic_id else {
            return Err((ErrorCode::InvalidRequest, NULL_TOPIC_ID_MESSAGE));
        };
        if target.partition < 0 {
            return Err((ErrorCode::InvalidRequest, NEGATIVE_PARTITION_ID_MESSAGE));
        }
        Ok(topic_id)
    }

    /// The last check of every operation: the topic and partition exist.
    fn check_image(&self, target: Target<'_>, topic_id: TopicId) -> Result<(), Refusal> {
        match &self.image {
            Some(image) if image.has(topic_id, target.partition) => Ok(()),
            _ => Err((
                ErrorCode::UnknownTopicOrPartition,
                default_error_message(ErrorCode::UnknownTopicOrPartition),
            )),
        }
    }
}

fn ok_reply(target: Target<'_>) -> PartitionReply<ShareStatePartitionResult> {
    PartitionReply { topic_id: target.topic_id, result: ShareStatePartitionResult::ok(target.partition) }
}

fn error_reply(
    target: Target<'_>,
    code: ErrorCode,
    message: &str,
) -> PartitionReply<ShareStatePartitionResult> {
    PartitionReply {
        topic_id: target.topic_id,
        result: ShareStatePartitionResult::error(target.partition, code, message),
    }
}
