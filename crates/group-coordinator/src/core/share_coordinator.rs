//! The share coordinator (KIP-932's `share-coordinator`, `group-share-coordinator`'s
//! [`ShareCoordinatorShard`]) hosted in a coordinator partition: the
//! share-state RPCs (InitializeShareGroupState, ReadShareGroupState,
//! WriteShareGroupState, DeleteShareGroupState, ReadShareGroupStateSummary) for the
//! share partitions whose key routes to this partition.
//!
//! Kafka keeps share state in a topic of its own, `__share_group_state`, as
//! ShareSnapshot and ShareUpdate records. Here a share partition's state lives in
//! the coordinator partition its key `group:topicId:partition` routes to
//! (`ShareCoordinatorService.partitionFor`, over this coordinator's partition
//! count), so that one owner, one epoch and one store serve both, and moving a
//! partition moves its share state with its groups. What is stored is the state
//! itself, one record per share partition (`ModernGroupRecord::ShareState`),
//! because a store keeps the last record of each key: the shard still makes
//! Kafka's snapshots and updates, and replays them, so its answers are Kafka's.
//!
//! Changes follow the core's rule: applied at once, with an undo entry
//! (`Undo::ShareState`, the share partition's state before), and answered once
//! their write is durable. An operation that writes nothing (a read, a refusal)
//! is answered once the writes already in flight are, as Kafka's runtime answers a
//! write operation without records.

use std::sync::Arc;

use group_offsets::ModernGroupRecord;
use group_offsets::Record;
use group_share_coordinator::{
    PartitionAnswer, PartitionIndexed, PartitionReply, ShardResult, ShareCoordinatorShard, SharePartitionKey,
    SharePartitionState, ShareRecord, Split, TopicsImage, default_error_message, merge_answers, split_delete,
    split_initialize, split_read, split_read_summary, split_write,
};
use group_types::{
    DeleteStatePartition, ErrorCode, GroupId, InitializeStatePartition, ReadStatePartition,
    ReadStatePartitionResult, ReadStateSummaryPartition, ReadStateSummaryPartitionResult,
    ShareStatePartitionResult, ShareStateRequest, ShareStateResponse, TopicId, WriteStatePartition,
};

use crate::MetadataImage;
use crate::core::undo::Undo;
use crate::core::{CoordinatorCore, Effects, PendingWrite, RequestId, Response};

/// The data of one share partition in one of the five share-state requests: how
/// the shard answers it, and the API's [`Response`].
pub(crate) trait StatePartition: PartitionIndexed + Clone + Sized {
    /// One partition's answer.
    type Answer: PartitionAnswer + Clone;

    /// The shard's operation on one share partition of `group` (topic `topic`).
    fn run(
        &self,
        shard: &ShareCoordinatorShard,
        now_ms: i64,
        group: &GroupId,
        topic: TopicId,
    ) -> ShardResult<PartitionReply<Self::Answer>>;

    /// The API's answer.
    fn respond(response: ShareStateResponse<Self::Answer, Self>) -> Response;

    /// `ShareCoordinatorService`'s checks and split of a request into one call
    /// per share partition (over `partitions` coordinator partitions).
    fn split(
        request: &ShareStateRequest<Self>,
        partitions: i32,
    ) -> Split<Self, ShareStateResponse<Self::Answer, Self>>;
}

/// Implements [`StatePartition`] for one API's partition data: its answer's type,
/// the shard's operation, the API's [`Response`] variant and the service's split.
macro_rules! state_partition {
    ($($data:ty => $answer:ty, $response:ident, $split:ident, |$d:ident, $s:ident, $now:ident, $g:ident, $t:ident| $run:expr;)*) => {$(
        impl StatePartition for $data {
            type Answer = $answer;

            fn run(
                &self,
                $s: &ShareCoordinatorShard,
                $now: i64,
                $g: &GroupId,
                $t: TopicId,
            ) -> ShardResult<PartitionReply<Self::Answer>> {
                let $d = self;
                $run
            }

            fn respond(response: ShareStateResponse<Self::Answer, Self>) -> Response {
                Response::$response(response)
            }

            fn split(
                request: &ShareStateRequest<Self>,
                partitions: i32,
            ) -> Split<Self, ShareStateResponse<Self::Answer, Self>> {
                $split(request, true, partitions)
            }
        }
    )*};
}

state_partition! {
    InitializeStatePartition => ShareStatePartitionResult, InitializeShareGroupState, split_initialize,
        |d, s, now, g, t| s.initialize_state(now, g, Some(t), d);
    ReadStatePartition => ReadStatePartitionResult, ReadShareGroupState, split_read,
        |d, s, now, g, t| s.read_state(now, g, Some(t), d);
    WriteStatePartition => ShareStatePartitionResult, WriteShareGroupState, split_write,
        |d, s, now, g, t| s.write_state(now, g, Some(t), d);
    DeleteStatePartition => ShareStatePartitionResult, DeleteShareGroupState, split_delete,
        |d, s, _now, g, t| s.delete_state(g, Some(t), d.partition);
    ReadStateSummaryPartition => ReadStateSummaryPartitionResult, ReadShareGroupStateSummary, split_read_summary,
        |d, s, _now, g, t| s.read_state_summary(g, Some(t), d);
}

/// `request` answered `code` for every partition it names, with Kafka's message
/// for the code: a request refused before the shard (a partition not served
/// here, a denied CLUSTER_ACTION).
pub(crate) fn refused<P: StatePartition>(
    request: &ShareStateRequest<P>,
    code: ErrorCode,
) -> ShareStateResponse<P::Answer, P> {
    let answers = request.topics.iter().flat_map(|t| {
        t.partitions.iter().map(move |p| {
            (t.topic_id, P::Answer::refusal(p.partition(), code, default_error_message(code).to_owned()))
        })
    });
    ShareStateResponse::new(merge_answers(answers))
}

/// `response` with every partition's answer replaced by `code` (a held answer
/// whose write failed).
pub(crate) fn failed<P: StatePartition>(
    response: &ShareStateResponse<P::Answer, P>,
    code: ErrorCode,
) -> ShareStateResponse<P::Answer, P> {
    let answers = response.results.iter().flat_map(|t| {
        t.partitions.iter().map(move |p| {
            (t.topic_id, P::Answer::refusal(p.partition(), code, default_error_message(code).to_owned()))
        })
    });
    ShareStateResponse::new(merge_answers(answers))
}

/// The topics the shard checks requests against, from the coordinator's image.
pub(crate) fn topics_image(image: &MetadataImage) -> TopicsImage {
    TopicsImage::new(image.topics().map(|t| (t.id, i32::try_from(t.partitions).unwrap_or(i32::MAX))))
}

impl CoordinatorCore {
    /// One of the five share-state requests, for the share partitions of this
    /// coordinator partition (the runtime splits a request by key): each
    /// partition run through the shard in request order, its records replayed
    /// at once (the next partition sees them), written together, and the answer
    /// released once they are durable.
    pub(crate) fn share_state<P: StatePartition>(&mut self, id: RequestId, request: ShareStateRequest<P>) {
        let now = self.engine.now;
        let mut answers = Vec::new();
        let mut records = Vec::new();
        for topic in &request.topics {
            for data in &topic.partitions {
                let out = data.run(&self.share_coordinator, now, &request.group_id, topic.topic_id);
                answers.push((topic.topic_id, out.response.result));
                for record in out.records {
                    records.push(self.apply_share_record(&record));
                }
            }
        }
        let response = P::respond(ShareStateResponse::new(merge_answers(answers)));
        if !records.is_empty() {
            self.engine.write(records, PendingWrite::Respond { request: id, response: Box::new(response) });
            return;
        }
        match self.engine.timeline.last_outstanding() {
            Some(write) => self.engine.deferred.push((write, id, response)),
            None => self.engine.respond(id, response),
        }
    }

    /// Topics were deleted: the share state of their share partitions goes
    /// (`ShareCoordinatorShard.maybeCleanupShareState`, run by Kafka's service on a
    /// metadata image that deletes topics), written as tombstones whose failure is
    /// only logged, as Kafka's is.
    pub fn share_state_topics_deleted(&mut self, now_ms: i64, deleted: &[TopicId]) -> Effects {
        let mut out = Effects::default();
        let deleted: std::collections::HashSet<TopicId> = deleted.iter().copied().collect();
        let tombstones = self.share_coordinator.maybe_cleanup_share_state(&deleted);
        if tombstones.is_empty() {
            return out;
        }
        std::mem::swap(&mut self.engine.fx, &mut out);
        self.begin(now_ms);
        let records = tombstones.iter().map(|r| self.apply_share_record(r)).collect();
        self.engine.write(records, PendingWrite::Logged);
        self.end();
        std::mem::swap(&mut self.engine.fx, &mut out);
        out
    }

    /// Replays one of the shard's records with an undo entry, and gives the
    /// stored record it makes: the share partition's state after it.
    fn apply_share_record(&mut self, record: &ShareRecord) -> Record {
        let key = record.key().clone();
        let prev = self.share_coordinator.share_partition(&key).cloned().map(Box::new);
        self.engine.timeline.push(Undo::ShareState {
            group: Arc::from(key.group_id.as_str()),
            key: Box::new(key.clone()),
            prev,
        });
        self.share_log_offset += 1;
        self.share_coordinator.replay(self.share_log_offset, record);
        let state = self.share_coordinator.share_partition(&key).cloned();
        Record::Modern(ModernGroupRecord::share_state(&key, state))
    }

    /// Puts back a share partition's state as a failed write found it.
    pub(crate) fn undo_share_state(&mut self, key: SharePartitionKey, prev: Option<SharePartitionState>) {
        self.share_coordinator.restore(key, prev);
    }

    /// A stored share-state record, at load. A sub-key that names no share
    /// partition is skipped with an error logged: no version writes one.
    pub(crate) fn load_share_state(&mut self, record: &ModernGroupRecord) {
        let ModernGroupRecord::ShareState { value, .. } = record else { return };
        match record.share_partition_key() {
            Some(key) => self.share_coordinator.restore(key, value.as_deref().cloned()),
            None => tracing::error!(
                target: "group_coordinator",
                group = %record.group_id(),
                sub_key = record.sub_key(),
                "a stored share state record names no share partition; skipped"
            ),
        }
    }

    /// The share coordinator hosted here (read only: its state changes through requests).
    pub fn share_coordinator(&self) -> &ShareCoordinatorShard {
        &self.share_coordinator
    }
}
