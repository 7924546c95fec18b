//! Acknowledge and release (Kafka's `SharePartition.acknowledge` and
//! `releaseAcquiredRecords`), and the completion of the writes they issue: a change
//! shows at once, blocks other changes to its records while written, and is committed
//! or rolled back when the caller reports the write.

use group_types::MemberId;

use crate::error::ShareError;
use crate::in_flight::{CountOp, InFlightState, Tracking};
use crate::partition::{SharePartition, state_batch};
use crate::persister::{PendingWrite, PersisterFailure, PersisterStateBatch, WriteCause, WriteId};
use crate::types::{AcknowledgeType, AcknowledgementBatch, RecordState};

/// The state an acknowledge type moves a record to (Kafka's `ACK_TYPE_TO_RECORD_STATE`;
/// 0 is a gap).
fn ack_state(ack: u8) -> Option<RecordState> {
    match ack {
        0 => Some(RecordState::Archived),
        1 => Some(RecordState::Acknowledged),
        2 => Some(RecordState::Available),
        3 => Some(RecordState::Archived),
        _ => None,
    }
}

const RENEW: u8 = AcknowledgeType::Renew.id();

/// How a write completed, for the request that waits on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteCompletion {
    /// Why the write was made.
    pub cause: WriteCause,
    /// What the waiting request answers: `Ok` once the write succeeded.
    pub result: Result<(), ShareError>,
    /// Whether the start offset moved or batches left the cache (a waiting fetch
    /// may now proceed).
    pub cache_updated: bool,
}

impl SharePartition {
    /// Acknowledges records held by `member` (accept, release, reject, renew; 0 for a
    /// gap) at `now_ms`.
    ///
    /// On an error nothing of the request stays changed (renewed locks excepted, as in
    /// Kafka). On success the changes show at once and the write to send comes back;
    /// `None` when nothing needs writing (only renewals, or only offsets before the
    /// start offset).
    pub fn acknowledge(
        &mut self,
        member: &MemberId,
        batches: &[AcknowledgementBatch],
        now_ms: i64,
    ) -> Result<Option<PendingWrite>, ShareError> {
        let write = self.allocate_write();
        let mut changed = Vec::new();
        let mut failure = None;
        for batch in batches {
            if let Err(e) = validate_types(batch) {
                failure = Some(e);
                break;
            }
            if batch.last_offset < self.start_offset {
                continue;
            }
            let keys = match self.sub_map_for_acknowledgement(batch) {
                Ok(keys) => keys,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            };
            if let Err(e) = self.acknowledge_batch(member, batch, &keys, write, &mut changed, now_ms) {
                failure = Some(e);
                break;
            }
        }
        self.finish_request(write, WriteCause::Acknowledge, changed, failure)
    }

    /// Releases every record `member` holds (Kafka's `releaseAcquiredRecords`, when
    /// its share session closes): available again, or archived before the start
    /// offset or at the delivery limit.
    pub fn release_acquired_records(
        &mut self,
        member: &MemberId,
    ) -> Result<Option<PendingWrite>, ShareError> {
        let write = self.allocate_write();
        let mut changed = Vec::new();
        let mut failure = None;
        let max_delivery = self.config.max_delivery_count;
        let start = self.start_offset;
        for batch in self.cache.values_mut() {
            if let Some(s) = batch.whole()
                && s.state == RecordState::Acquired
                && s.member() == member
                && batch.first < start
                && batch.last >= start
            {
                // Part of the batch is before the start offset: that part is archived.
                batch.split();
            }
            let (first, last) = (batch.first, batch.last);
            let completed = batch.visit_runs(first, last, |run_first, run_last, s| {
                if s.member() != member && !s.member().as_str().is_empty() {
                    return true;
                }
                if s.state == RecordState::Acquired {
                    let to = if run_last < start { RecordState::Archived } else { RecordState::Available };
                    if !s.start_transition(to, CountOp::Keep, max_delivery, write) {
                        failure = Some(ShareError::InvalidRecordState("unable to release acquired records"));
                        return false;
                    }
                    changed.push(state_batch(run_first, run_last, s));
                }
                true
            });
            if !completed {
                break;
            }
        }
        self.finish_request(write, WriteCause::Release, changed, failure)
    }

    /// Kafka's `rollbackOrProcessStateUpdates`, up to the write: roll back on an
    /// error, else issue the write if anything changed.
    fn finish_request(
        &mut self,
        write: WriteId,
        cause: WriteCause,
        changed: Vec<PersisterStateBatch>,
        failure: Option<ShareError>,
    ) -> Result<Option<PendingWrite>, ShareError> {
        if let Some(e) = failure {
            let ranges: Vec<(i64, i64)> = changed.iter().map(|b| (b.first_offset, b.last_offset)).collect();
            self.complete_transitions(write, &ranges, false);
            return Err(e);
        }
        if changed.is_empty() {
            return Ok(None);
        }
        Ok(Some(self.issue_write(write, cause, changed)))
    }

    /// Reports how write `id` went. An acknowledgement or release is committed on
    /// success and rolled back on failure (records whose lock expired meanwhile are
    /// released); a lock-timeout write was applied already and stays either way.
    /// On success the start offset moves past the terminal records at the front.
    pub fn complete_write(
        &mut self,
        id: WriteId,
        outcome: Result<(), PersisterFailure>,
    ) -> Result<WriteCompletion, ShareError> {
        let pending = self.outstanding.remove(&id).ok_or(ShareError::UnknownWrite)?;
        let result = outcome.map_err(|f| f.to_error());
        let cache_updated = match pending.cause {
            WriteCause::LockTimeout => self.maybe_update_cached_state_and_offsets(),
            WriteCause::Acknowledge | WriteCause::Release => {
                let commit = result.is_ok();
                self.complete_transitions(id, &pending.ranges, commit);
                commit && self.maybe_update_cached_state_and_offsets()
            }
        };
        Ok(WriteCompletion { cause: pending.cause, result, cache_updated })
    }

    /// Commits or rolls back the transitions write `id` started over `ranges`: one
    /// walk over the batches they span, touching the states the write tagged. A
    /// record split out of its batch meanwhile (archiving) no longer carries the
    /// transition, as in Kafka, and is left alone.
    fn complete_transitions(&mut self, id: WriteId, ranges: &[(i64, i64)], commit: bool) {
        let lo = ranges.iter().map(|r| r.0).min();
        let hi = ranges.iter().map(|r| r.1).max();
        let (Some(lo), Some(hi)) = (lo, hi) else { return };
        let from = self.floor_key(lo).unwrap_or(lo);
        let max_delivery = self.config.max_delivery_count;
        let mut released = false;
        let mut finish = |s: &mut InFlightState| {
            if s.rollback_write() == Some(id) {
                s.complete_transition(commit, max_delivery);
                released |= s.state == RecordState::Available;
            }
        };
        for batch in self.cache.range_mut(from..=hi).map(|(_, b)| b) {
            match &mut batch.tracking {
                Tracking::Whole(s) => finish(s),
                Tracking::PerOffset(states) => states.iter_mut().for_each(&mut finish),
            }
        }
        if released {
            self.find_next_fetch_offset = true;
        }
    }

    /// Kafka's `fetchSubMapForAcknowledgementBatch`: the cached batches the
    /// acknowledgement covers, or why it covers none.
    fn sub_map_for_acknowledgement(&self, batch: &AcknowledgementBatch) -> Result<Vec<i64>, ShareError> {
        let floor = match self.floor_key(batch.first_offset) {
            Some(k) => k,
            None if self.start_within(batch.first_offset, batch.last_offset) => self
                .floor_key(self.start_offset)
                .ok_or(ShareError::InvalidRecordState("batch record not found in the cache"))?,
            None => return Err(ShareError::InvalidRecordState("batch record not found in the cache")),
        };
        let keys = self.keys_in(floor, batch.last_offset);
        let last = keys.last().and_then(|k| self.cache.get(k)).map(|b| b.last);
        let Some(last) = last else {
            return Err(ShareError::InvalidRecordState("batch record not found in the cache"));
        };
        if last < batch.first_offset {
            return Err(ShareError::InvalidRequest("the first offset in request is past acquired records"));
        }
        if batch.last_offset > last {
            return Err(ShareError::InvalidRequest("the last offset in request is past acquired records"));
        }
        Ok(keys)
    }

    /// Kafka's `acknowledgeBatchRecords`.
    fn acknowledge_batch(
        &mut self,
        member: &MemberId,
        batch: &AcknowledgementBatch,
        keys: &[i64],
        write: WriteId,
        changed: &mut Vec<PersisterStateBatch>,
        now_ms: i64,
    ) -> Result<(), ShareError> {
        let start = self.start_offset;
        let step = AckStep {
            deadline: self.lock_deadline(now_ms),
            max_delivery: self.config.max_delivery_count,
            write,
        };
        let per_offset_types = batch.acknowledge_types.len() > 1;
        for key in keys {
            let Some(cached) = self.cache.get_mut(key) else { continue };
            if cached.last < start {
                continue;
            }
            if let Some(s) = cached.whole() {
                if s.member().as_str().is_empty() {
                    return Err(ShareError::InvalidRecordState("the batch is not in the acquired state"));
                }
                if s.member() != member {
                    return Err(ShareError::InvalidRecordState("member is not the owner of batch record"));
                }
                if s.in_transition() {
                    return Err(ShareError::InvalidRecordState("the batch has an ongoing state transition"));
                }
            }
            let full_match = cached.first >= batch.first_offset && cached.last <= batch.last_offset;
            let start_moved = cached.first < start && cached.last >= start;
            let (first, last) = (cached.first, cached.last);
            if !full_match || cached.whole().is_none() || per_offset_types || start_moved {
                if let Some(s) = cached.whole() {
                    if s.state != RecordState::Acquired {
                        return Err(ShareError::InvalidRecordState(
                            "the subset batch is not in the acquired state",
                        ));
                    }
                    cached.split();
                }
                let from = batch.first_offset.max(start);
                for (offset, s) in cached.offsets_mut(from, batch.last_offset) {
                    if s.state != RecordState::Acquired {
                        return Err(ShareError::InvalidRecordState("the offset is not acquired"));
                    }
                    if s.in_transition() {
                        return Err(ShareError::InvalidRecordState(
                            "the offset has an ongoing state transition",
                        ));
                    }
                    if s.member() != member {
                        return Err(ShareError::InvalidRecordState("member is not the owner of offset"));
                    }
                    let ack = if per_offset_types {
                        usize::try_from(offset - batch.first_offset)
                            .ok()
                            .and_then(|i| batch.acknowledge_types.get(i).copied())
                            .ok_or(ShareError::InvalidRequest("an offset has no acknowledge type"))?
                    } else {
                        batch
                            .acknowledge_types
                            .first()
                            .copied()
                            .ok_or(ShareError::InvalidRequest("invalid acknowledgement batch"))?
                    };
                    step.apply(s, ack, (offset, offset), changed)?;
                }
                continue;
            }
            let Some(&ack) = batch.acknowledge_types.first() else {
                return Err(ShareError::InvalidRequest("invalid acknowledgement batch"));
            };
            let Some(s) = cached.whole_mut() else { continue };
            if s.state != RecordState::Acquired {
                return Err(ShareError::InvalidRecordState("the batch is not in the acquired state"));
            }
            step.apply(s, ack, (first, last), changed)?;
        }
        Ok(())
    }
}

/// What applying one acknowledge type to a held run needs.
struct AckStep {
    deadline: i64,
    max_delivery: i32,
    write: WriteId,
}

impl AckStep {
    /// A renewal restarts the run's lock; any other type starts the transition the
    /// write completes, and the run joins the write.
    fn apply(
        &self,
        s: &mut InFlightState,
        ack: u8,
        (first, last): (i64, i64),
        changed: &mut Vec<PersisterStateBatch>,
    ) -> Result<(), ShareError> {
        if ack == RENEW {
            s.lock_deadline = Some(self.deadline);
            s.lock_expired = false;
            return Ok(());
        }
        let to = ack_state(ack).ok_or(ShareError::InvalidRequest("invalid acknowledge type"))?;
        if !s.start_transition(to, CountOp::Keep, self.max_delivery, self.write) {
            return Err(ShareError::InvalidRecordState("unable to acknowledge records for the batch"));
        }
        changed.push(state_batch(first, last, s));
        Ok(())
    }
}

/// Kafka's `fetchAckTypeMapForBatch` plus the request checks KafkaApis makes: one type
/// or one per offset, each a gap or a known type, over a range that is not empty.
fn validate_types(batch: &AcknowledgementBatch) -> Result<(), ShareError> {
    let types = &batch.acknowledge_types;
    if types.is_empty() || batch.last_offset < batch.first_offset {
        return Err(ShareError::InvalidRequest("invalid acknowledgement batch"));
    }
    if types.len() > 1 && i64::try_from(types.len()).ok() != Some(batch.last_offset - batch.first_offset + 1)
    {
        return Err(ShareError::InvalidRequest("acknowledge types do not match the batch"));
    }
    if types.iter().any(|t| *t != 0 && AcknowledgeType::from_id(*t).is_none()) {
        return Err(ShareError::InvalidRequest("invalid acknowledge type"));
    }
    Ok(())
}
