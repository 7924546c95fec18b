//! The share coordinator as the group coordinator reaches it: Kafka's
//! `Persister` (`initializeState`), seen from `GroupCoordinatorService`'s
//! `persisterInitialize`. A share group assigns only partitions the share
//! coordinator holds state for; the runtime hands it each initialization a
//! heartbeat asked for, once that heartbeat is durable, and its answer comes
//! back through [`GroupCoordinator::share_group_state_initialized`].

use std::fmt;
use std::sync::Weak;

use crossbeam_channel::{Receiver, Sender};
use group_types::{
    DeleteShareGroupStateRequest, ErrorCode, InitializeShareGroupStateRequest,
    ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse, TopicId,
};

use super::share_state::SharePartitions;
use super::{GroupCoordinator, Inner};
use crate::core::CoordinatorCore;
use crate::{EndOffsetQuery, PartitionEndOffsets, RequestContext};

/// Where a node's share groups get their share-partition state initialized
/// (a broker's share coordinator, local or reached by InitializeShareGroupState).
pub trait SharePersister: Send + Sync + fmt::Debug {
    /// Initializes the share partitions of `request`, then reports the outcome
    /// with [`GroupCoordinator::share_group_state_initialized`]. Called with a
    /// coordinator partition's lock held: hand the work to another thread or
    /// task and return; never report from within the call.
    fn initialize(&self, request: InitializeShareGroupStateRequest);

    /// Deletes the share state of `request`'s partitions (a DeleteGroups or a
    /// DeleteShareGroupOffsets of an empty share group waits for it), then reports
    /// the outcome with [`GroupCoordinator::share_group_state_deleted_topics`] (or,
    /// with one outcome for all, [`GroupCoordinator::share_group_state_deleted`]);
    /// the same rules as [`initialize`](Self::initialize). Two asks of the same
    /// group and topics (a DeleteGroups and a DeleteShareGroupOffsets) are told
    /// apart only by their order: answer them in the order they were asked.
    fn delete_state(&self, request: DeleteShareGroupStateRequest);

    /// Reads the start offsets and epochs of `request`'s partitions (a
    /// DescribeShareGroupOffsets waits for it), then reports the answer with
    /// [`GroupCoordinator::share_group_state_summary_read`]; the same rules as
    /// [`initialize`](Self::initialize).
    fn read_summary(&self, request: ReadShareGroupStateSummaryRequest);
}

impl GroupCoordinator {
    /// The share coordinator answered a deletion asked through the
    /// [`SharePersister`]: `Ok` when the state went. The DeleteGroups that waits
    /// for it deletes the group then, or answers the error for it.
    pub fn share_group_state_deleted(
        &self,
        request: &DeleteShareGroupStateRequest,
        result: Result<(), ErrorCode>,
    ) {
        self.inner.share_group_state_deleted(request, result);
    }

    /// The share coordinator answered a deletion asked through the
    /// [`SharePersister`], per topic of `request` (`NONE` when its state went), or
    /// with one error for the whole call. A DeleteShareGroupOffsets waiting for it
    /// answers per topic; a DeleteGroups deletes the group or answers the first error.
    pub fn share_group_state_deleted_topics(
        &self,
        request: &DeleteShareGroupStateRequest,
        result: Result<&[(TopicId, ErrorCode)], ErrorCode>,
    ) {
        self.inner.share_group_state_deleted_topics(request, result);
    }

    /// The share coordinator answered a summary read asked through the
    /// [`SharePersister`], or failed it with one error: the
    /// DescribeShareGroupOffsets waiting for it is answered.
    pub fn share_group_state_summary_read(
        &self,
        request: &ReadShareGroupStateSummaryRequest,
        result: Result<&ReadShareGroupStateSummaryResponse, ErrorCode>,
    ) {
        self.inner.share_group_state_summary_read(request, result);
    }

    /// The share coordinator answered an initialization asked through the
    /// [`SharePersister`], per partition of `request` (topic, partition, `NONE`
    /// when it succeeded), or with one error for the whole call. An
    /// AlterShareGroupOffsets waiting for it answers per partition; a heartbeat's
    /// initialization moves the partitions as
    /// [`share_group_state_initialized`](Self::share_group_state_initialized) does.
    pub fn share_group_state_initialized_partitions(
        &self,
        request: &InitializeShareGroupStateRequest,
        result: Result<&[(TopicId, i32, ErrorCode)], ErrorCode>,
    ) {
        self.inner.share_group_state_initialized_partitions(request, result);
    }

    /// The share coordinator answered an initialization asked through the
    /// [`SharePersister`]: `initialized` when it succeeded. The group's state
    /// record moves the partitions to initialized (the next heartbeat assigns
    /// them) or, on failure, drops them from initializing (the next asks again).
    /// Nothing happens when the group's partition is not served here any more.
    pub fn share_group_state_initialized(
        &self,
        request: &InitializeShareGroupStateRequest,
        initialized: bool,
    ) {
        self.inner.share_group_state_initialized(request, initialized);
    }
}

impl Inner {
    /// One outcome for every topic of `request`.
    fn share_group_state_deleted(
        &self,
        request: &DeleteShareGroupStateRequest,
        result: Result<(), ErrorCode>,
    ) {
        let code = result.err().unwrap_or(ErrorCode::None);
        let topics: Vec<_> = request.topics.iter().map(|t| (t.topic_id, code)).collect();
        self.share_group_state_deleted_topics(request, Ok(&topics));
    }

    fn share_group_state_deleted_topics(
        &self,
        request: &DeleteShareGroupStateRequest,
        result: Result<&[(TopicId, ErrorCode)], ErrorCode>,
    ) {
        self.step_group(request.group_id.as_str(), |core, now, scratch| {
            scratch.extend(core.share_group_state_deleted_topics(now, request, result));
        });
    }

    /// The end offsets a summary's lag needs are looked up here, before the
    /// partition's lock is taken, so a slow [`PartitionEndOffsets`] holds up only
    /// this description (Kafka's service likewise asks its
    /// `PartitionMetadataClient` outside the coordinator runtime).
    fn share_group_state_summary_read(
        &self,
        request: &ReadShareGroupStateSummaryRequest,
        result: Result<&ReadShareGroupStateSummaryResponse, ErrorCode>,
    ) {
        let end_offsets = match (result, &self.end_offsets) {
            (Ok(summary), Some(source)) => self.end_offsets_of(source.as_ref(), summary),
            _ => Vec::new(),
        };
        self.step_group(request.group_id.as_str(), |core, now, scratch| {
            scratch.extend(core.share_group_state_summary_read(now, request, result, &end_offsets));
        });
    }

    /// The latest offsets of `summary`'s partitions whose lag can be computed,
    /// named as the metadata image names their topics. A topic the image no
    /// longer holds is not asked: it is `UNKNOWN_TOPIC_OR_PARTITION`, as a
    /// ListOffsets of it would be.
    fn end_offsets_of(
        &self,
        source: &dyn PartitionEndOffsets,
        summary: &ReadShareGroupStateSummaryResponse,
    ) -> Vec<(TopicId, i32, Result<i64, ErrorCode>)> {
        let wanted = CoordinatorCore::lag_partitions(summary);
        if wanted.is_empty() {
            return Vec::new();
        }
        let image = super::lock(&self.image).clone();
        let mut end_offsets = Vec::with_capacity(wanted.len());
        let mut queries = Vec::with_capacity(wanted.len());
        for (topic_id, partition) in wanted {
            match image.topic_by_id(topic_id) {
                Some(t) => queries.push(EndOffsetQuery { topic_id, topic_name: t.name.clone(), partition }),
                None => end_offsets.push((topic_id, partition, Err(ErrorCode::UnknownTopicOrPartition))),
            }
        }
        let mut answers = source.latest_offsets(&queries).into_iter();
        end_offsets.extend(queries.into_iter().map(|q| {
            // A partition the source left unanswered is a failure of the source's.
            let answer = answers.next().unwrap_or(Err(ErrorCode::UnknownServerError));
            (q.topic_id, q.partition, answer)
        }));
        end_offsets
    }

    fn share_group_state_initialized_partitions(
        &self,
        request: &InitializeShareGroupStateRequest,
        result: Result<&[(TopicId, i32, ErrorCode)], ErrorCode>,
    ) {
        self.step_group(request.group_id.as_str(), |core, now, scratch| {
            scratch.extend(core.share_group_state_initialized_partitions(now, request, result));
        });
    }

    /// One outcome for every partition of `request` (a failure without its code
    /// is `UNKNOWN_SERVER_ERROR` for an AlterShareGroupOffsets waiting for it).
    fn share_group_state_initialized(&self, request: &InitializeShareGroupStateRequest, initialized: bool) {
        if !initialized {
            self.share_group_state_initialized_partitions(request, Err(ErrorCode::UnknownServerError));
            return;
        }
        let partitions: Vec<_> = request
            .topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| (t.topic_id, p.partition, ErrorCode::None)))
            .collect();
        self.share_group_state_initialized_partitions(request, Ok(&partitions));
    }
}

/// What the hosted share coordinator is asked to do for the node's share groups.
#[derive(Debug)]
pub(super) enum Ask {
    Initialize(InitializeShareGroupStateRequest),
    Delete(DeleteShareGroupStateRequest),
    ReadSummary(ReadShareGroupStateSummaryRequest),
}

/// The [`SharePersister`] of a node whose share state its own coordinator
/// partitions host (the default when share groups are on and no persister is
/// given): each ask goes, off the caller's lock, to a thread of the runtime
/// (`group-coordinator-share-persister`) that sends it to the coordinator as an
/// InitializeShareGroupState or DeleteShareGroupState, waits for the answer and
/// reports it. A share partition whose key routes to a partition this node does
/// not serve answers NOT_COORDINATOR, so its initialization fails and is asked
/// again after `group.share.initialize.retry.interval.ms`, as Kafka retries.
#[derive(Debug)]
pub(super) struct HostedSharePersister {
    asks: Sender<Ask>,
}

impl HostedSharePersister {
    /// The persister and the receiving end its thread serves ([`serve`]).
    pub(super) fn new() -> (HostedSharePersister, Receiver<Ask>) {
        let (asks, rx) = crossbeam_channel::unbounded();
        (HostedSharePersister { asks }, rx)
    }
}

impl SharePersister for HostedSharePersister {
    fn initialize(&self, request: InitializeShareGroupStateRequest) {
        // The thread is gone only once the coordinator is: nothing waits then.
        let _ = self.asks.send(Ask::Initialize(request));
    }

    fn delete_state(&self, request: DeleteShareGroupStateRequest) {
        let _ = self.asks.send(Ask::Delete(request));
    }

    fn read_summary(&self, request: ReadShareGroupStateSummaryRequest) {
        let _ = self.asks.send(Ask::ReadSummary(request));
    }
}

/// The hosted persister's thread: serves asks until the coordinator is dropped
/// (its sender with it) or stopped.
pub(super) fn serve(inner: Weak<Inner>, asks: Receiver<Ask>) {
    while let Ok(ask) = asks.recv() {
        let Some(inner) = inner.upgrade() else { return };
        if inner.stopped.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        let anonymous = RequestContext::ANONYMOUS;
        match ask {
            Ask::Initialize(request) => {
                let answer = request.clone().answer_as(&inner, &anonymous).wait();
                match answer {
                    Ok(r) => {
                        let partitions: Vec<_> = r
                            .results
                            .iter()
                            .flat_map(|t| {
                                t.partitions.iter().map(|p| (t.topic_id, p.partition, p.error_code))
                            })
                            .collect();
                        inner.share_group_state_initialized_partitions(&request, Ok(&partitions));
                    }
                    Err(_) => inner.share_group_state_initialized_partitions(
                        &request,
                        Err(ErrorCode::CoordinatorNotAvailable),
                    ),
                }
            }
            Ask::ReadSummary(request) => {
                let answer = request.clone().answer_as(&inner, &anonymous).wait();
                match answer {
                    Ok(r) => inner.share_group_state_summary_read(&request, Ok(&r)),
                    Err(_) => inner
                        .share_group_state_summary_read(&request, Err(ErrorCode::CoordinatorNotAvailable)),
                }
            }
            Ask::Delete(request) => {
                let answer = request.clone().answer_as(&inner, &anonymous).wait();
                match answer {
                    Ok(r) => {
                        // Per topic, its first partition error (Kafka's
                        // `handleDeleteShareGroupOffsetStateResult`).
                        let topics: Vec<_> = r
                            .results
                            .iter()
                            .map(|t| {
                                let failed = t.partitions.iter().find(|p| p.error_code != ErrorCode::None);
                                (t.topic_id, failed.map_or(ErrorCode::None, |p| p.error_code))
                            })
                            .collect();
                        inner.share_group_state_deleted_topics(&request, Ok(&topics));
                    }
                    Err(_) => inner
                        .share_group_state_deleted_topics(&request, Err(ErrorCode::CoordinatorNotAvailable)),
                }
            }
        }
    }
}
