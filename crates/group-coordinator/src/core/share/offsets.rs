//! The share-group offset admin APIs (KIP-932) in the core: a share group's
//! "offsets" are its share partitions' start offsets, kept by the share
//! coordinator, so each of these APIs writes the group's share-state record and
//! asks the share coordinator through the persister, and its answer waits for
//! the persister's.
//!
//! DeleteShareGroupOffsets is `GroupCoordinatorShard.initiateDeleteShareGroupOffsets`
//! (`GroupMetadataManager.sharePartitionsEligibleForOffsetDeletion`), then, once
//! the record is durable, the persister's `deleteState`, then
//! `GroupCoordinatorShard.completeDeleteShareGroupOffsets` for the topics whose
//! state went (`GroupCoordinatorService.deleteShareGroupOffsets` chains them).
//!
//! AlterShareGroupOffsets is `GroupMetadataManager.alterShareGroupOffsets` (the
//! group created if need be, its epoch bumped, the partitions written as
//! initializing), then, once durable, the persister's `initializeState` with the
//! given start offsets at the new epoch, and `GroupCoordinatorService.persisterInitialize`'s
//! handling of its answer.
//!
//! DescribeShareGroupOffsets is `GroupCoordinatorService.describeShareGroupOffsets`
//! (the named topics) and `describeShareGroupAllOffsets` (every initialized
//! partition of the group, from committed state): the persister's
//! `readSummary`, answered per partition with its lag (KIP-1226,
//! `computeShareGroupLagAndBuildResponse`): the end offsets of the partitions
//! that qualify are an input (the runtime asks the embedder's
//! `PartitionEndOffsets` for them, outside the partition's lock), so the core
//! stays deterministic; without them the lag is -1
//! (`PartitionFactory.UNINITIALIZED_LAG`), as Kafka answers where it cannot
//! compute it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use group_offsets::ConsumerGroupMetadataValue;
use group_offsets::{ModernGroupRecord, Record};
use group_share_coordinator::default_error_message;
use group_types::{
    AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse, AlteredShareOffsetsTopic,
    DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse, DeleteShareGroupStateRequest,
    DeleteStatePartition, DeletedShareOffsetsTopic, DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse, DescribedShareOffset, DescribedShareOffsetsGroup,
    DescribedShareOffsetsTopic, ErrorCode, GroupId, InitializeShareGroupStateRequest,
    InitializeStatePartition, ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse,
    ReadStateSummaryPartition, ReadStateSummaryPartitionResult, SharePartitionOutcome, ShareStateTopic,
    TopicId,
};

use super::group::{InitTopic, ShareGroup, ShareState};
use crate::core::undo::Committed;
use crate::core::{CoordinatorCore, Effects, GroupKind, PendingWrite, RequestId, Response, Undo};

/// `PartitionFactory.UNINITIALIZED_START_OFFSET`, `UNINITIALIZED_LAG`,
/// `UNINITIALIZED_DELIVERY_COMPLETE_COUNT`.
const UNINITIALIZED: i64 = -1;

/// `Errors.NON_EMPTY_GROUP`'s message, as `ShareGroup.validateDeleteGroup` throws it.
const NON_EMPTY_GROUP: &str = "The group is not empty.";
/// `sharePartitionsEligibleForOffsetDeletion`'s answer for a topic with no share state.
const NOTHING_TO_DELETE: &str = "There is no offset information to delete.";

/// A DeleteShareGroupOffsets whose share-state deletion the persister has not
/// answered yet (Kafka's `DeleteShareGroupOffsetsResultHolder`, in flight).
#[derive(Debug)]
pub(crate) struct ParkedOffsetsDelete {
    pub(crate) request: RequestId,
    pub(crate) group: Arc<str>,
    /// The topics asked deleted of the share coordinator.
    pub(crate) topics: BTreeSet<TopicId>,
    /// The topics answered before the share coordinator (Kafka's `errorTopicResponseList`).
    pub(crate) errors: Vec<DeletedShareOffsetsTopic>,
    /// When its deletion was asked (`Engine::share_deletion_seq`).
    pub(crate) seq: u64,
}

/// An AlterShareGroupOffsets whose initialization the persister has not
/// answered yet: its answer so far, and what it asked.
#[derive(Debug)]
pub(crate) struct ParkedOffsetsAlter {
    pub(crate) request: RequestId,
    pub(crate) response: AlterShareGroupOffsetsResponse,
    pub(crate) ask: InitializeShareGroupStateRequest,
}

/// A DescribeShareGroupOffsets of one group whose summary read the persister
/// has not answered yet.
#[derive(Debug)]
pub(crate) struct ParkedOffsetsDescribe {
    pub(crate) request: RequestId,
    pub(crate) group: GroupId,
    /// The names of the topics asked, by id.
    pub(crate) names: BTreeMap<TopicId, String>,
    /// Topics not in the metadata, answered after the persister's (start offset -1).
    pub(crate) unknown: Vec<DescribedShareOffsetsTopic>,
    pub(crate) ask: ReadShareGroupStateSummaryRequest,
}

/// A DescribeShareGroupOffsets answer of `groups`, each carrying only `code`
/// and `message`.
pub(crate) fn describe_offsets_error<'a>(
    groups: impl IntoIterator<Item = &'a GroupId>,
    code: ErrorCode,
    message: Option<&str>,
) -> DescribeShareGroupOffsetsResponse {
    let groups = groups
        .into_iter()
        .map(|g| DescribedShareOffsetsGroup {
            group_id: g.clone(),
            error_code: code,
            error_message: message.map(str::to_owned),
            topics: Vec::new(),
        })
        .collect();
    DescribeShareGroupOffsetsResponse { groups }
}

/// The message of a DescribeShareGroupOffsets refused before the core: none
/// for `UNSUPPORTED_VERSION` and `GROUP_AUTHORIZATION_FAILED`, which
/// `KafkaApis.handleDescribeShareGroupOffsetsRequest` answers with the code
/// alone; the error's default message otherwise, as the service's refusals
/// (`DescribeShareGroupOffsetsRequest.getErrorDescribedGroup`) and a failed
/// coordinator operation (`Errors.forException(exception).message`) carry it.
pub(crate) fn describe_refusal_message(code: ErrorCode) -> Option<&'static str> {
    match code {
        ErrorCode::UnsupportedVersion | ErrorCode::GroupAuthorizationFailed => None,
        _ => Some(default_error_message(code)),
    }
}

/// A partition without share state to describe: start offset -1.
fn undescribed(partition_index: i32) -> DescribedShareOffset {
    DescribedShareOffset {
        partition_index,
        start_offset: UNINITIALIZED,
        leader_epoch: 0,
        lag: UNINITIALIZED,
        error_code: ErrorCode::None,
        error_message: None,
    }
}

/// `shouldComputeSharePartitionLag`: the summary answered the partition, its
/// start offset is initialized and so is its delivery complete count (-1 until
/// the share partition's first write, or an AlterShareGroupOffsets, sets it).
fn computes_lag(p: &ReadStateSummaryPartitionResult) -> bool {
    p.error_code == ErrorCode::None
        && p.start_offset != UNINITIALIZED
        && i64::from(p.delivery_complete_count) != UNINITIALIZED
}

/// A share partition's lag: the offsets from its start up to `end` that have not
/// completed delivery. The end offset is the next offset to be written, so no +1
/// (Kafka's comment). In Java's `long` arithmetic, which wraps: stored start offsets
/// come from the share coordinator's writers, and a fuzzed one near `i64::MIN` must
/// give Kafka's answer, not a panic (fuzz target `frame`).
fn lag(end: i64, start_offset: i64, delivery_complete_count: i32) -> i64 {
    end.wrapping_sub(start_offset).wrapping_sub(i64::from(delivery_complete_count))
}

/// One partition of `computeShareGroupLagAndBuildResponse`: its start offset and
/// leader epoch (-1 and 0 where the summary answered an error) with the lag where
/// it is computed and the end offset known, or the end-offset lookup's error.
fn described(
    topic_id: TopicId,
    p: &ReadStateSummaryPartitionResult,
    end_offsets: &[(TopicId, i32, Result<i64, ErrorCode>)],
) -> DescribedShareOffset {
    let read = || DescribedShareOffset {
        start_offset: p.start_offset,
        leader_epoch: p.leader_epoch,
        ..undescribed(p.partition)
    };
    if p.error_code != ErrorCode::None {
        return undescribed(p.partition);
    }
    if !computes_lag(p) {
        return read();
    }
    let end = end_offsets.iter().find(|(t, i, _)| *t == topic_id && *i == p.partition);
    match end.map(|(_, _, end)| *end) {
        // No end-offset source: the lag is unknown, as Kafka answers where it cannot compute it.
        None => read(),
        Some(Ok(end)) => {
            DescribedShareOffset { lag: lag(end, p.start_offset, p.delivery_complete_count), ..read() }
        }
        // Kafka sets only the error on such a partition: start offset and epoch keep
        // their defaults (0), the lag its -1.
        Some(Err(code)) => DescribedShareOffset {
            partition_index: p.partition,
            start_offset: 0,
            leader_epoch: 0,
            lag: UNINITIALIZED,
            error_code: code,
            error_message: Some(default_error_message(code).to_owned()),
        },
    }
}

/// An AlterShareGroupOffsets answer carrying only `code` and `message`, or the
/// error's default message without one (`AlterShareGroupOffsetsRequest.getErrorResponseData`;
/// `KafkaApis`' own refusals, `getErrorResponse(Errors)`, send it too).
pub(crate) fn alter_offsets_error(
    code: ErrorCode,
    message: Option<String>,
) -> AlterShareGroupOffsetsResponse {
    let error_message = Some(message.unwrap_or_else(|| default_error_message(code).to_owned()));
    AlterShareGroupOffsetsResponse { error_code: code, error_message, responses: Vec::new() }
}

/// A DeleteShareGroupOffsets answer carrying only `code` and `message`, or the
/// error's default message without one (`DeleteShareGroupOffsetsRequest.getErrorDeleteResponseData`;
/// `KafkaApis`' own refusals, `getErrorResponse(Errors)`, send it too).
pub(crate) fn delete_offsets_error(
    code: ErrorCode,
    message: Option<String>,
) -> DeleteShareGroupOffsetsResponse {
    let error_message = Some(message.unwrap_or_else(|| default_error_message(code).to_owned()));
    DeleteShareGroupOffsetsResponse { error_code: code, error_message, responses: Vec::new() }
}

/// One topic's DeleteShareGroupOffsets outcome.
fn deleted_topic(
    name: &str,
    id: TopicId,
    code: ErrorCode,
    message: Option<&str>,
) -> DeletedShareOffsetsTopic {
    DeletedShareOffsetsTopic {
        topic_name: name.to_owned(),
        topic_id: id,
        error_code: code,
        error_message: message.map(str::to_owned),
    }
}

impl CoordinatorCore {
    /// The share group `id` names, for the offset admin APIs: `GROUP_ID_NOT_FOUND`
    /// when there is none or the group is of another kind
    /// (`GroupMetadataManager.shareGroup`), `NON_EMPTY_GROUP` when it has members.
    fn empty_share_group(&self, id: &str) -> Result<(&Arc<str>, &ShareGroup), (ErrorCode, String)> {
        match self.groups.get_key_value(id) {
            None => Err((ErrorCode::GroupIdNotFound, format!("Group {id} not found."))),
            Some((key, GroupKind::Share(g))) if g.modern.members.is_empty() => Ok((key, g)),
            Some((_, GroupKind::Share(_))) => Err((ErrorCode::NonEmptyGroup, NON_EMPTY_GROUP.to_owned())),
            Some(_) => Err((ErrorCode::GroupIdNotFound, format!("Group {id} is not a share group."))),
        }
    }

    /// DeleteShareGroupOffsets: the group's initialized topics among the request's
    /// move to deleting (one state record), and their share state is asked deleted
    /// once the record is durable; the answer waits for the persister
    /// ([`share_group_state_deleted_topics`](Self::share_group_state_deleted_topics)).
    /// A topic the group has no state for is `UNKNOWN_TOPIC_OR_PARTITION` ("There
    /// is no offset information to delete."), one not in the metadata
    /// `UNKNOWN_TOPIC_OR_PARTITION` with its default message; a topic already
    /// deleting is asked again, every partition of it.
    pub(crate) fn delete_share_group_offsets(&mut self, rid: RequestId, req: DeleteShareGroupOffsetsRequest) {
        let refuse = |code, message| Response::DeleteShareGroupOffsets(delete_offsets_error(code, message));
        if !self.engine.config.share.enabled {
            self.engine.respond(rid, refuse(ErrorCode::UnsupportedVersion, None));
            return;
        }
        if req.group_id.is_empty() {
            self.engine.respond(rid, refuse(ErrorCode::InvalidGroupId, None));
            return;
        }
        let (key, g) = match self.empty_share_group(req.group_id.as_str()) {
            Ok(found) => found,
            Err((code, message)) => {
                self.engine.respond(rid, refuse(code, Some(message)));
                return;
            }
        };
        let key = key.clone();
        // A group without a state record has nothing to delete: Kafka answers no topics.
        let Some(mut next) = g.share_state.as_deref().cloned() else {
            self.engine
                .respond(rid, Response::DeleteShareGroupOffsets(DeleteShareGroupOffsetsResponse::default()));
            return;
        };
        let image = self.engine.image.clone();
        let mut asked: BTreeMap<TopicId, Vec<i32>> = BTreeMap::new();
        let mut errors = Vec::new();
        for name in &req.topic_names {
            let Some(topic) = image.topic(name) else {
                let message = default_error_message(ErrorCode::UnknownTopicOrPartition);
                errors.push(deleted_topic(
                    name,
                    TopicId::ZERO,
                    ErrorCode::UnknownTopicOrPartition,
                    Some(message),
                ));
                continue;
            };
            if let Some(init) = next.initialized.remove(&topic.id) {
                asked.entry(topic.id).or_insert_with(|| init.partitions.iter().copied().collect());
                next.deleting.insert(topic.id, topic.name.to_string());
            } else if next.deleting.contains_key(&topic.id) {
                asked.entry(topic.id).or_insert_with(|| (0..topic.partitions as i32).collect());
            } else {
                let code = ErrorCode::UnknownTopicOrPartition;
                errors.push(deleted_topic(name, TopicId::ZERO, code, Some(NOTHING_TO_DELETE)));
            }
        }
        // `attachTopicName`: the deleting topics carry their names from the metadata.
        for (id, name) in &mut next.deleting {
            if let Some(t) = image.topic_by_id(*id) {
                *name = t.name.to_string();
            }
        }
        let parked = ParkedOffsetsDelete {
            request: rid,
            group: key.clone(),
            topics: asked.keys().copied().collect(),
            errors,
            seq: 0,
        };
        let ask = (!asked.is_empty()).then(|| {
            let topics = asked
                .into_iter()
                .map(|(t, partitions)| {
                    ShareStateTopic::new(
                        t,
                        partitions.into_iter().map(|partition| DeleteStatePartition { partition }),
                    )
                })
                .collect();
            Box::new(DeleteShareGroupStateRequest {
                group_id: key.as_ref().into(),
                topics,
                ..Default::default()
            })
        });
        // Kafka writes the record even when nothing moved.
        self.write_share_state(
            &key,
            next,
            PendingWrite::ShareOffsetsDelete { parked: Box::new(parked), ask },
        );
    }

    /// Writes share group `key`'s state record `next`, replayed now (undone if
    /// the write fails), with `pending` for its completion.
    pub(crate) fn write_share_state(&mut self, key: &Arc<str>, next: ShareState, pending: PendingWrite) {
        let now = self.engine.now;
        let record = ModernGroupRecord::ShareStatePartitionMetadata {
            group_id: key.clone(),
            value: Some(Box::new(next.value())),
        };
        if let Some(g) = self.groups.get_mut(&**key).and_then(GroupKind::share_mut) {
            let mut changes = Vec::new();
            g.replay(&record, now, Some(&mut changes));
            self.engine.timeline.push(Undo::Share { group: key.clone(), changes });
        }
        self.write_group_records(key, vec![Record::Modern(record)], pending);
    }

    /// The state record of a DeleteShareGroupOffsets is durable (or failed):
    /// the share-state deletion is asked and the request parks for it, or, with
    /// nothing to ask, it is answered.
    pub(crate) fn share_offsets_delete_written(
        &mut self,
        parked: ParkedOffsetsDelete,
        ask: Option<Box<DeleteShareGroupStateRequest>>,
        result: Result<(), ErrorCode>,
    ) {
        let response = match (result, ask) {
            (Err(error), _) => delete_offsets_error(crate::core::map_operation_error(error), None),
            (Ok(()), None) => {
                DeleteShareGroupOffsetsResponse { responses: parked.errors, ..Default::default() }
            }
            (Ok(()), Some(ask)) => {
                let mut parked = parked;
                parked.seq = self.engine.next_share_deletion();
                self.engine.share_state_deletions.push(*ask);
                self.engine.share_offset_deletes.push(parked);
                return;
            }
        };
        self.engine.respond(parked.request, Response::DeleteShareGroupOffsets(response));
    }

    /// The share coordinator answered `request`, a share-state deletion: per
    /// topic (`NONE` when the topic's state went), or one error for the whole
    /// call. The DeleteShareGroupOffsets that asked it completes
    /// (`completeDeleteShareGroupOffsets`): the topics whose state went leave
    /// deleting and are answered `NONE` once that record is durable, the others
    /// with the persister's error, and a failed call answers its error for the
    /// group. A deletion no such request asked is a DeleteGroups': it gets the
    /// first error ([`share_group_state_deleted`](Self::share_group_state_deleted)).
    /// When both wait on the same deletion (same group and topics), the one that
    /// asked first gets the answer, as the persister answers in order.
    pub fn share_group_state_deleted_topics(
        &mut self,
        now_ms: i64,
        request: &DeleteShareGroupStateRequest,
        result: Result<&[(TopicId, ErrorCode)], ErrorCode>,
    ) -> Effects {
        let group_id = request.group_id.as_str();
        let asked: BTreeSet<TopicId> = request.topics.iter().map(|t| t.topic_id).collect();
        let at =
            self.engine.share_offset_deletes.iter().position(|p| &*p.group == group_id && p.topics == asked);
        // A DeleteGroups that asked the same deletion earlier takes this answer
        // first: a persister answers in the order it was asked (the hosted one
        // does), and identical asks are told apart by nothing else.
        let earlier_delete_groups = self
            .engine
            .share_group_deletion_asks
            .iter()
            .filter(|(g, topics, _)| &**g == group_id && *topics == asked)
            .map(|(_, _, seq)| *seq)
            .min();
        let at = at.filter(|at| {
            earlier_delete_groups.is_none_or(|seq| seq > self.engine.share_offset_deletes[*at].seq)
        });
        let Some(at) = at else {
            let first = match result {
                Ok(topics) => {
                    topics.iter().map(|(_, c)| *c).find(|c| *c != ErrorCode::None).map_or(Ok(()), Err)
                }
                Err(code) => Err(code),
            };
            return self.share_group_state_deleted(now_ms, group_id, first);
        };
        let parked = self.engine.share_offset_deletes.remove(at);
        self.share_step(now_ms, |core| {
            match result {
                Ok(topics) => core.complete_share_offsets_delete(parked, topics),
                // `deleteShareGroupOffsetsState`'s `exceptionally`: the error for the group.
                Err(code) => core.engine.respond(
                    parked.request,
                    Response::DeleteShareGroupOffsets(delete_offsets_error(code, None)),
                ),
            }
        })
    }

    /// `GroupCoordinatorService.handleDeleteShareGroupOffsetStateResult` and
    /// `GroupCoordinatorShard.completeDeleteShareGroupOffsets`.
    fn complete_share_offsets_delete(
        &mut self,
        parked: ParkedOffsetsDelete,
        topics: &[(TopicId, ErrorCode)],
    ) {
        let image = self.engine.image.clone();
        let name_of = |id: TopicId| image.topic_by_id(id).map_or_else(String::new, |t| t.name.to_string());
        let mut errors = parked.errors;
        let mut went = Vec::new();
        for (id, code) in topics {
            if *code == ErrorCode::None {
                went.push(*id);
            } else {
                errors.push(deleted_topic(&name_of(*id), *id, *code, Some(default_error_message(*code))));
            }
        }
        let state =
            self.groups.get(&*parked.group).and_then(GroupKind::share).and_then(|g| g.share_state.as_deref());
        let (Some(state), false) = (state, went.is_empty()) else {
            // Nothing went, or the group is gone: answered without a record, as
            // Kafka answers when it finds no state to update.
            let response = DeleteShareGroupOffsetsResponse { responses: errors, ..Default::default() };
            self.engine.respond(parked.request, Response::DeleteShareGroupOffsets(response));
            return;
        };
        let mut next = state.clone();
        for id in &went {
            next.deleting.remove(id);
        }
        let mut responses: Vec<_> =
            went.iter().map(|id| deleted_topic(&name_of(*id), *id, ErrorCode::None, None)).collect();
        responses.extend(errors);
        let response = Box::new(Response::DeleteShareGroupOffsets(DeleteShareGroupOffsetsResponse {
            responses,
            ..Default::default()
        }));
        let key = parked.group.clone();
        self.write_share_state(&key, next, PendingWrite::Respond { request: parked.request, response });
    }
}

impl CoordinatorCore {
    /// AlterShareGroupOffsets: the share group (created when there is none) must be
    /// empty; its epoch is bumped and the named partitions that exist are written
    /// as initializing (`addInitializingTopicsRecords`), and once that is durable
    /// their state is asked initialized at the given start offsets and the new
    /// epoch. The answer waits for the persister
    /// ([`share_group_state_initialized_partitions`](Self::share_group_state_initialized_partitions));
    /// a partition beyond its topic's count, or of a topic not in the metadata, is
    /// `UNKNOWN_TOPIC_OR_PARTITION`.
    pub(crate) fn alter_share_group_offsets(&mut self, rid: RequestId, req: AlterShareGroupOffsetsRequest) {
        let refuse = |code, message| Response::AlterShareGroupOffsets(alter_offsets_error(code, message));
        if !self.engine.config.share.enabled {
            self.engine.respond(rid, refuse(ErrorCode::UnsupportedVersion, None));
            return;
        }
        if req.group_id.is_empty() {
            self.engine.respond(rid, refuse(ErrorCode::InvalidGroupId, None));
            return;
        }
        let gid = req.group_id.as_str();
        let (key, epoch, hash, current) = match self.empty_share_group(gid) {
            Ok((key, g)) => {
                (key.clone(), g.modern.group_epoch, g.modern.metadata_hash, g.share_state.as_deref())
            }
            // `getOrMaybeCreateShareGroup(groupId, true)`: a new group is empty.
            Err((ErrorCode::GroupIdNotFound, _)) if !self.groups.contains_key(gid) => {
                (Arc::from(gid), 0, 0, None)
            }
            Err((code, message)) => {
                self.engine.respond(rid, refuse(code, Some(message)));
                return;
            }
        };
        let current = current.cloned();
        let now = self.engine.now;
        let epoch = epoch + 1;
        let image = self.engine.image.clone();
        let unknown = |partition_index| SharePartitionOutcome {
            partition_index,
            error_code: ErrorCode::UnknownTopicOrPartition,
            error_message: Some(default_error_message(ErrorCode::UnknownTopicOrPartition).to_owned()),
        };
        let mut responses = Vec::new();
        let mut initializing: BTreeMap<TopicId, InitTopic> = BTreeMap::new();
        let mut asked: BTreeMap<TopicId, BTreeMap<i32, i64>> = BTreeMap::new();
        for t in &req.topics {
            let Some(topic) = image.topic(&t.topic_name) else {
                responses.push(AlteredShareOffsetsTopic {
                    topic_name: t.topic_name.clone(),
                    topic_id: TopicId::ZERO,
                    partitions: t.partitions.iter().map(|p| unknown(p.partition_index)).collect(),
                });
                continue;
            };
            let count = topic.partitions as i32;
            let mut partitions = Vec::with_capacity(t.partitions.len());
            for p in &t.partitions {
                if p.partition_index < count {
                    partitions.push(SharePartitionOutcome {
                        partition_index: p.partition_index,
                        ..Default::default()
                    });
                    asked.entry(topic.id).or_default().insert(p.partition_index, p.start_offset);
                } else {
                    partitions.push(unknown(p.partition_index));
                }
            }
            // Kafka keeps an entry even when none of its partitions exist.
            let entry = initializing.entry(topic.id).or_insert_with(|| InitTopic {
                name: t.topic_name.clone(),
                partitions: Default::default(),
                timestamp_ms: now,
            });
            entry.partitions.extend(t.partitions.iter().map(|p| p.partition_index).filter(|p| *p < count));
            responses.push(AlteredShareOffsetsTopic {
                topic_name: t.topic_name.clone(),
                topic_id: topic.id,
                partitions,
            });
        }
        let mut records = vec![ModernGroupRecord::ShareGroupMetadata {
            group_id: key.clone(),
            value: Some(ConsumerGroupMetadataValue { epoch, metadata_hash: hash }),
        }];
        if !initializing.is_empty() {
            let next = match current {
                None => ShareState { initializing, ..ShareState::default() },
                Some(mut next) => {
                    // `combineInitMaps`: the partitions joined, the new name and time kept.
                    for (id, t) in initializing {
                        next.deleting.remove(&id);
                        let entry = next.initializing.entry(id).or_insert_with(|| t.clone());
                        entry.partitions.extend(&t.partitions);
                        entry.name = t.name;
                        entry.timestamp_ms = t.timestamp_ms;
                    }
                    next
                }
            };
            records.push(ModernGroupRecord::ShareStatePartitionMetadata {
                group_id: key.clone(),
                value: Some(Box::new(next.value())),
            });
        }
        let ask = InitializeShareGroupStateRequest {
            group_id: key.as_ref().into(),
            topics: asked
                .into_iter()
                .map(|(t, offsets)| {
                    let partitions = offsets.into_iter().map(|(partition, start_offset)| {
                        InitializeStatePartition { partition, state_epoch: epoch, start_offset }
                    });
                    ShareStateTopic::new(t, partitions)
                })
                .collect(),
            ..Default::default()
        };
        let response = AlterShareGroupOffsetsResponse { responses, ..Default::default() };
        let parked = ParkedOffsetsAlter { request: rid, response, ask };
        self.replay_share_records(&key, &records);
        let records = records.into_iter().map(Record::Modern).collect();
        self.write_group_records(&key, records, PendingWrite::ShareOffsetsAlter(Box::new(parked)));
    }

    /// Replays `records` into share group `key`, creating it when there is none
    /// (both undone if their write fails).
    fn replay_share_records(&mut self, key: &Arc<str>, records: &[ModernGroupRecord]) {
        let now = self.engine.now;
        match self.groups.get_mut(&**key).and_then(GroupKind::share_mut) {
            Some(g) => {
                let mut changes = Vec::new();
                for r in records {
                    g.replay(r, now, Some(&mut changes));
                }
                self.engine.timeline.push(Undo::Share { group: key.clone(), changes });
            }
            None => {
                let mut g = ShareGroup::new();
                g.refresh_needed = false;
                for r in records {
                    g.replay(r, now, None);
                }
                self.put_group(key.clone(), GroupKind::Share(Box::new(g)));
            }
        }
    }

    /// The records of an AlterShareGroupOffsets are durable (or failed): the
    /// initialization is asked and the request parks for it, or, with no
    /// partition to ask, it is answered.
    pub(crate) fn share_offsets_alter_written(
        &mut self,
        parked: ParkedOffsetsAlter,
        result: Result<(), ErrorCode>,
    ) {
        let response = match result {
            Err(error) => alter_offsets_error(crate::core::map_operation_error(error), None),
            Ok(()) if parked.ask.topics.is_empty() => parked.response,
            Ok(()) => {
                self.engine.share_state_initializations.push(parked.ask.clone());
                self.engine.share_offset_alters.push(parked);
                return;
            }
        };
        self.engine.respond(parked.request, Response::AlterShareGroupOffsets(response));
    }

    /// The share coordinator answered `request`, an initialization: per
    /// partition (`NONE` where it succeeded), or one error for the whole call.
    /// The AlterShareGroupOffsets that asked it is answered
    /// (`GroupCoordinatorService.persisterInitialize`): on success the partitions
    /// move to initialized; a partition's error is answered for it and nothing
    /// moves; a failed call answers its error for the group. An initialization
    /// no such request asked is a heartbeat's
    /// ([`share_group_state_initialized`](Self::share_group_state_initialized)).
    pub fn share_group_state_initialized_partitions(
        &mut self,
        now_ms: i64,
        request: &InitializeShareGroupStateRequest,
        result: Result<&[(TopicId, i32, ErrorCode)], ErrorCode>,
    ) -> Effects {
        let group_id = request.group_id.as_str();
        let partitions: Vec<(TopicId, Vec<i32>)> = request
            .topics
            .iter()
            .map(|t| (t.topic_id, t.partitions.iter().map(|p| p.partition).collect()))
            .collect();
        let ok = result.is_ok_and(|r| r.iter().all(|(_, _, c)| *c == ErrorCode::None));
        let Some(at) = self.engine.share_offset_alters.iter().position(|p| p.ask == *request) else {
            return self.share_group_state_initialized(now_ms, group_id, &partitions, ok);
        };
        let parked = self.engine.share_offset_alters.remove(at);
        self.share_step(now_ms, |core| {
            let response = match result {
                Ok(_) if ok => {
                    core.apply_share_initialization(group_id, &partitions, true);
                    parked.response
                }
                // `buildErrorResponse(response, result)`: each partition the persister failed.
                Ok(codes) => {
                    let mut response = parked.response;
                    for t in &mut response.responses {
                        for p in t.partitions.iter_mut().filter(|p| p.error_code == ErrorCode::None) {
                            let failed = codes.iter().find(|(id, i, c)| {
                                *id == t.topic_id && *i == p.partition_index && *c != ErrorCode::None
                            });
                            if let Some((_, _, code)) = failed {
                                p.error_code = *code;
                                p.error_message = Some(default_error_message(*code).to_owned());
                            }
                        }
                    }
                    response
                }
                // A failed call is answered for the group (`KafkaApis` sends only that).
                Err(code) => alter_offsets_error(code, None),
            };
            core.engine.respond(parked.request, Response::AlterShareGroupOffsets(response));
        })
    }
}

impl CoordinatorCore {
    /// DescribeShareGroupOffsets of one group (the runtime splits a request per
    /// group). Named topics are read whether or not the group exists, as Kafka
    /// reads them; a topic not in the metadata is answered with start offset -1
    /// for each partition asked. With no topics named, every initialized partition
    /// of the group in committed state is read. The answer waits for the
    /// persister's summary ([`share_group_state_summary_read`](Self::share_group_state_summary_read)).
    pub(crate) fn describe_share_group_offsets(
        &mut self,
        rid: RequestId,
        req: DescribeShareGroupOffsetsRequest,
    ) {
        let ids: Vec<GroupId> = req.groups.iter().map(|g| g.group_id.clone()).collect();
        if !self.engine.config.share.enabled {
            let response = describe_offsets_error(&ids, ErrorCode::UnsupportedVersion, None);
            self.engine.respond(rid, Response::DescribeShareGroupOffsets(response));
            return;
        }
        let Some(group) = req.groups.into_iter().next() else {
            self.engine.respond(
                rid,
                Response::DescribeShareGroupOffsets(DescribeShareGroupOffsetsResponse::default()),
            );
            return;
        };
        let image = self.engine.image.clone();
        let mut names = BTreeMap::new();
        let mut unknown = Vec::new();
        let mut topics: Vec<ShareStateTopic<ReadStateSummaryPartition>> = Vec::new();
        let read = |partitions: &mut dyn Iterator<Item = i32>| -> Vec<ReadStateSummaryPartition> {
            partitions.map(|partition| ReadStateSummaryPartition { partition, leader_epoch: 0 }).collect()
        };
        match &group.topics {
            Some(asked) => {
                for t in asked {
                    match image.topic(&t.topic_name) {
                        Some(topic) => {
                            names.insert(topic.id, t.topic_name.clone());
                            topics.push(ShareStateTopic::new(
                                topic.id,
                                read(&mut t.partitions.iter().copied()),
                            ));
                        }
                        None => unknown.push(DescribedShareOffsetsTopic {
                            topic_name: t.topic_name.clone(),
                            topic_id: TopicId::ZERO,
                            partitions: t.partitions.iter().map(|p| undescribed(*p)).collect(),
                        }),
                    }
                }
            }
            // `initializedShareGroupPartitions`, a read of committed state.
            None => {
                if let Some(Committed::Share(g)) = self.committed_view(group.group_id.as_str())
                    && let Some(state) = g.share_state.as_deref()
                {
                    for (id, init) in &state.initialized {
                        if let Some(topic) = image.topic_by_id(*id) {
                            names.insert(*id, topic.name.to_string());
                            topics
                                .push(ShareStateTopic::new(*id, read(&mut init.partitions.iter().copied())));
                        }
                    }
                }
            }
        }
        if topics.is_empty() {
            let answered = DescribedShareOffsetsGroup {
                group_id: group.group_id,
                topics: unknown,
                ..Default::default()
            };
            let response = DescribeShareGroupOffsetsResponse { groups: vec![answered] };
            self.engine.respond(rid, Response::DescribeShareGroupOffsets(response));
            return;
        }
        let ask =
            ReadShareGroupStateSummaryRequest { api_version: 0, group_id: group.group_id.clone(), topics };
        self.engine.share_state_summaries.push(ask.clone());
        self.engine.share_offset_describes.push(ParkedOffsetsDescribe {
            request: rid,
            group: group.group_id,
            names,
            unknown,
            ask,
        });
    }

    /// The summary reads DescribeShareGroupOffsets needs, to ask of the share
    /// coordinator (`persister.readSummary`), handed out once.
    pub fn take_share_state_summaries(&mut self) -> Vec<ReadShareGroupStateSummaryRequest> {
        std::mem::take(&mut self.engine.share_state_summaries)
    }

    /// The partitions of `summary` whose lag can be computed
    /// (`GroupCoordinatorService.shouldComputeSharePartitionLag`: no error, a start
    /// offset and a delivery complete count other than -1), in the summary's
    /// order: those whose end offsets
    /// [`share_group_state_summary_read`](Self::share_group_state_summary_read) needs.
    pub fn lag_partitions(summary: &ReadShareGroupStateSummaryResponse) -> Vec<(TopicId, i32)> {
        summary
            .results
            .iter()
            .flat_map(|t| t.partitions.iter().filter(|p| computes_lag(p)).map(|p| (t.topic_id, p.partition)))
            .collect()
    }

    /// True when summary reads wait to be taken.
    pub fn has_share_state_summaries(&self) -> bool {
        !self.engine.share_state_summaries.is_empty()
    }

    /// The share coordinator answered `request`, a summary read, or failed it
    /// with one error. The DescribeShareGroupOffsets that asked it is answered
    /// (`GroupCoordinatorService.computeShareGroupLagAndBuildResponse`): each
    /// partition's start offset and leader epoch, or -1 and 0 where the persister
    /// answered an error (absence of data, not an error), then the topics not in
    /// the metadata; a failed call is the group's error.
    ///
    /// `end_offsets` are the partitions' latest offsets (topic, partition, the
    /// offset or the lookup's error), looked up for the partitions
    /// [`lag_partitions`](Self::lag_partitions) names: such a partition's lag is
    /// `end offset - start offset - delivery complete count`, and a lookup error
    /// is answered for it with its default message. A partition without an end
    /// offset keeps lag -1 (Kafka's `UNINITIALIZED_LAG`). Nothing happens when no
    /// such request waits (it was answered when its partition moved).
    pub fn share_group_state_summary_read(
        &mut self,
        now_ms: i64,
        request: &ReadShareGroupStateSummaryRequest,
        result: Result<&ReadShareGroupStateSummaryResponse, ErrorCode>,
        end_offsets: &[(TopicId, i32, Result<i64, ErrorCode>)],
    ) -> Effects {
        let Some(at) = self.engine.share_offset_describes.iter().position(|p| p.ask == *request) else {
            return Effects::default();
        };
        let parked = self.engine.share_offset_describes.remove(at);
        self.share_step(now_ms, |core| {
            let group = match result {
                Err(code) => DescribedShareOffsetsGroup {
                    group_id: parked.group,
                    error_code: code,
                    error_message: Some(default_error_message(code).to_owned()),
                    topics: Vec::new(),
                },
                Ok(summary) => {
                    let mut topics: Vec<DescribedShareOffsetsTopic> = summary
                        .results
                        .iter()
                        .map(|t| DescribedShareOffsetsTopic {
                            topic_name: parked.names.get(&t.topic_id).cloned().unwrap_or_default(),
                            topic_id: t.topic_id,
                            partitions: t
                                .partitions
                                .iter()
                                .map(|p| described(t.topic_id, p, end_offsets))
                                .collect(),
                        })
                        .collect();
                    topics.extend(parked.unknown);
                    DescribedShareOffsetsGroup { group_id: parked.group, topics, ..Default::default() }
                }
            };
            let response = DescribeShareGroupOffsetsResponse { groups: vec![group] };
            core.engine.respond(parked.request, Response::DescribeShareGroupOffsets(response));
        })
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    #[rstest]
    #[case::caught_up(100, 100, 0, 0)]
    #[case::behind(100, 40, 10, 50)]
    #[case::start_past_end(10, 20, 0, -10)]
    // Java's `long` wraps where the values are extreme.
    #[case::start_at_min(0, i64::MIN, 0, i64::MIN)]
    #[case::end_at_max(i64::MAX, -1, 0, i64::MIN)]
    #[case::count_past_min(i64::MIN, 0, 1, i64::MAX)]
    fn lag_is_javas_long_arithmetic(
        #[case] end: i64,
        #[case] start: i64,
        #[case] complete: i32,
        #[case] lag: i64,
    ) {
        assert_eq!(super::lag(end, start, complete), lag);
    }
}
