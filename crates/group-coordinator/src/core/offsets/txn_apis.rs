//! TxnOffsetCommit and the end of a transaction (`OffsetMetadataManager`'s
//! `commitTransactionalOffset` and `replayEndTransactionMarker`), and what the
//! other offset paths do to pending transactional offsets: a plain commit
//! supersedes them, a tombstone (OffsetDelete, DeleteGroups, a deleted topic)
//! drops them.
//!
//! Kafka makes a pending offset visible at COMMIT only if its record is newer
//! than the committed offset's. Its log orders the two; the stores here keep
//! state by key, so the core records the comparison's outcome instead: a
//! pending offset is `superseded` once a newer commit of its partition is
//! committed, and its `sequence` orders it among the partition's pending
//! offsets. Both are written with it, so a load decides as the live core did.

use std::sync::Arc;

use group_offsets::Record;
use group_types::{
    ErrorCode, TopicEntries, TopicPartition, TransactionResult, TxnOffsetCommitRequest,
    TxnOffsetCommitResponse, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};

use super::OffsetChanges;
use super::transactions::{PendingOffset, ProducerOffsets, txn_record};
use crate::core::{CoordinatorCore, Effects, PendingWrite, RequestId, Response, Undo};

impl CoordinatorCore {
    /// TxnOffsetCommit: the offsets are checked as the group's kind checks a
    /// transactional commit and kept pending for the producer until its
    /// transaction's marker; answered once written.
    pub(crate) fn txn_offset_commit(&mut self, rid: RequestId, req: TxnOffsetCommitRequest) {
        let refuse = |core: &mut CoordinatorCore, code| {
            let response = TxnOffsetCommitResponse::uniform(&req, code);
            core.engine.respond(rid, Response::TxnOffsetCommit(response));
        };
        if req.group_id.is_empty() {
            // `TxnOffsetCommitRequest.getErrorResponse`, from the service.
            return refuse(self, ErrorCode::InvalidGroupId);
        }
        if !self.groups.contains_key(req.group_id.as_str()) {
            if req.generation_id >= 0 {
                // Before v6 (KIP-1319) a missing group is a stale generation.
                return refuse(self, ErrorCode::IllegalGeneration);
            }
            // The producer is no member: a simple group is made, in memory only
            // (no record), and reverted with the commit if its write fails.
            self.create_group(&req.group_id);
        }
        let Some((group_id, kind)) = self.groups.get_key_value(req.group_id.as_str()) else { return };
        if let Err(code) = kind.validate_txn_offset_commit(&req, &self.engine) {
            return refuse(self, code);
        }
        let group_id = group_id.clone();
        let producer = req.producer_id;
        let prev = self.transactions.get(&group_id, producer).cloned();
        let mut offsets = prev.clone().unwrap_or_default();
        let now = self.engine.now;
        let max = self.engine.config.offset_metadata_max_bytes;
        let mut records = Vec::with_capacity(req.partition_count());
        let mut errors = Vec::with_capacity(req.offsets.len());
        for TopicEntries { topic, partitions } in req.offsets {
            let name = self.engine.topic(&topic);
            let mut codes = Vec::with_capacity(partitions.len());
            for (partition, data) in partitions {
                let offset = match super::apis::stored_offset(&data, now, None, max) {
                    Ok(offset) => offset,
                    Err(code) => {
                        codes.push((partition, code));
                        continue;
                    }
                };
                codes.push((partition, ErrorCode::None));
                // The newest write of its partition: nothing committed is newer.
                let pending =
                    PendingOffset { offset, sequence: self.transactions.next_sequence(), superseded: false };
                let tp = TopicPartition { topic: name.clone(), partition };
                records.push(txn_record(&group_id, producer, &tp, &pending));
                offsets.insert(tp, pending);
            }
            errors.push(TopicEntries { topic, partitions: codes });
        }
        let response = Response::TxnOffsetCommit(TxnOffsetCommitResponse { errors });
        if records.is_empty() {
            self.engine.respond(rid, response);
            return;
        }
        self.set_txn_offsets(&group_id, producer, Some(offsets), prev);
        self.engine.write(records, PendingWrite::Respond { request: rid, response: Box::new(response) });
    }

    /// WriteTxnMarkers for this coordinator partition: each marker ends its
    /// producer's transaction (`GroupCoordinator.completeTransaction`, then the
    /// shard's `replayEndTransactionMarker`). COMMIT makes the producer's
    /// pending offsets committed where no newer commit of their partition is;
    /// ABORT drops them. The producer epoch is not checked, as Kafka's shard
    /// does not; a marker for a producer with nothing pending changes nothing.
    /// Answered once written, every partition of the part `NONE`.
    pub(crate) fn write_txn_markers(&mut self, rid: RequestId, req: WriteTxnMarkersRequest) {
        let mut records = Vec::new();
        for marker in &req.markers {
            self.end_transaction(marker.producer_id, marker.result, &mut records);
        }
        let response = Response::WriteTxnMarkers(WriteTxnMarkersResponse::uniform(&req, ErrorCode::None));
        if records.is_empty() && self.engine.pending_writes.is_empty() {
            self.engine.respond(rid, response);
            return;
        }
        // A marker with nothing left to change may owe that to a write still in
        // flight (an earlier marker of the producer): Kafka appends its control
        // record after that write, so it is acknowledged only if the write is.
        // An empty write orders this answer the same way.
        self.engine.write(records, PendingWrite::Respond { request: rid, response: Box::new(response) });
    }

    /// Ends `producer`'s transaction in every group it has pending offsets in.
    fn end_transaction(&mut self, producer: i64, result: TransactionResult, records: &mut Vec<Record>) {
        for group in self.transactions.groups_of(producer) {
            let Some(mine) = self.transactions.get(&group, producer).cloned() else { continue };
            self.set_txn_offsets(&group, producer, None, Some(mine.clone()));
            for (tp, pending) in mine {
                records.push(Record::TxnOffsetTombstone {
                    group_id: group.clone(),
                    producer_id: producer,
                    partition: tp.clone(),
                });
                if result == TransactionResult::Commit && !pending.superseded {
                    self.materialize(&group, &tp, &pending, records);
                }
            }
        }
    }

    /// Makes `pending` group `group`'s committed offset of `tp`: the pending
    /// offsets of other producers written before it are now older than the
    /// committed one.
    fn materialize(
        &mut self,
        group: &Arc<str>,
        tp: &TopicPartition,
        pending: &PendingOffset,
        records: &mut Vec<Record>,
    ) {
        let prev = self.offsets.entry(group).insert(tp.clone(), pending.offset.clone());
        let mut changes = OffsetChanges::default();
        changes.push(tp.partition, prev);
        self.engine.offsets_changed(group, &tp.topic, changes);
        records.push(Record::Offset {
            group_id: group.clone(),
            partition: tp.clone(),
            offset: pending.offset.clone(),
        });
        self.supersede(group, tp, |p| p.sequence < pending.sequence, records);
    }

    /// Marks the pending offsets of group `group` for `tp` that `older` selects
    /// as superseded by a committed offset, rewriting their records.
    fn supersede(
        &mut self,
        group: &Arc<str>,
        tp: &TopicPartition,
        older: impl Fn(&PendingOffset) -> bool,
        records: &mut Vec<Record>,
    ) {
        let Some(producers) = self.transactions.of_group(group) else { return };
        let hit: Vec<i64> = producers
            .iter()
            .filter(|(_, o)| o.get(tp).is_some_and(|p| !p.superseded && older(p)))
            .map(|(producer, _)| *producer)
            .collect();
        for producer in hit {
            let Some(prev) = self.transactions.get(group, producer).cloned() else { continue };
            let mut offsets = prev.clone();
            if let Some(p) = offsets.get_mut(tp) {
                p.superseded = true;
                records.push(txn_record(group, producer, tp, p));
            }
            self.set_txn_offsets(group, producer, Some(offsets), Some(prev));
        }
    }

    /// A plain commit of group `group`'s `tp` was just made: every pending offset
    /// of the partition is older (`OffsetMetadataManager.replayEndTransactionMarker`
    /// keeps the newer record).
    pub(crate) fn supersede_by_commit(
        &mut self,
        group: &Arc<str>,
        tp: &TopicPartition,
        records: &mut Vec<Record>,
    ) {
        self.supersede(group, tp, |_| true, records);
    }

    /// Drops every producer's pending offset of group `group` for `tp`, as the
    /// replay of an offset tombstone does, with a tombstone for each.
    pub(crate) fn drop_pending(&mut self, group: &Arc<str>, tp: &TopicPartition, records: &mut Vec<Record>) {
        let Some(producers) = self.transactions.of_group(group) else { return };
        let hit: Vec<i64> =
            producers.iter().filter(|(_, o)| o.contains_key(tp)).map(|(producer, _)| *producer).collect();
        for producer in hit {
            let Some(prev) = self.transactions.get(group, producer).cloned() else { continue };
            let mut offsets = prev.clone();
            offsets.remove(tp);
            records.push(Record::TxnOffsetTombstone {
                group_id: group.clone(),
                producer_id: producer,
                partition: tp.clone(),
            });
            self.set_txn_offsets(group, producer, Some(offsets), Some(prev));
        }
    }

    /// Offsets of deleted topics (`OffsetMetadataManager.onTopicsDeleted`): a
    /// tombstone for each committed partition of the topics and another for
    /// each pending one, as Kafka writes them, in group id order.
    pub fn offsets_topics_deleted(&mut self, now_ms: i64, topics: &[&str]) -> Effects {
        self.begin(now_ms);
        let mut ids: Vec<Arc<str>> = self.groups.keys().cloned().collect();
        ids.sort_unstable();
        let mut records = Vec::new();
        let mut removals = Vec::new();
        for id in ids {
            let committed: Vec<TopicPartition> = self
                .offsets
                .get(&id)
                .into_iter()
                .flat_map(|o| o.keys())
                .filter(|tp| topics.contains(&&*tp.topic))
                .collect();
            let pending: Vec<TopicPartition> = self
                .transactions
                .partitions_of(&id)
                .into_iter()
                .filter(|tp| topics.contains(&&*tp.topic))
                .collect();
            if committed.is_empty() && pending.is_empty() {
                continue;
            }
            for tp in &committed {
                records.push(Record::OffsetTombstone { group_id: id.clone(), partition: tp.clone() });
                self.engine.remove_offset(&mut self.offsets, &id, tp);
            }
            for tp in &pending {
                records.push(Record::OffsetTombstone { group_id: id.clone(), partition: tp.clone() });
                self.drop_pending(&id, tp, &mut records);
            }
            removals.push((id, committed.len(), false));
        }
        if !records.is_empty() {
            self.engine.write(records, PendingWrite::Expiration { removals });
        }
        self.finish()
    }

    /// Sets `producer`'s pending offsets in `group` to `offsets`, remembering
    /// `prev` (what it had) to undo.
    pub(crate) fn set_txn_offsets(
        &mut self,
        group: &Arc<str>,
        producer: i64,
        offsets: Option<ProducerOffsets>,
        prev: Option<ProducerOffsets>,
    ) {
        self.transactions.set(group, producer, offsets);
        self.engine.timeline.push(Undo::TxnOffsets {
            group: group.clone(),
            producer,
            prev: prev.map(Box::new),
        });
    }
}
