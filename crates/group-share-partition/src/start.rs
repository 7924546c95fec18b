//! Start-offset movement: the log start offset moving under the cache (Kafka's
//! `updateCacheAndOffsets`), archiving, and dropping fully acknowledged batches at the
//! front of the cache (`maybeUpdateCachedStateAndOffsets`).

use crate::in_flight::Tracking;
use crate::partition::SharePartition;
use crate::types::RecordState;

impl SharePartition {
    /// The log start offset moved to `log_start_offset` (retention or deletion):
    /// available records before it are archived, the start offset follows. Nothing
    /// is written: Kafka persists the new start offset with the next write.
    /// Acquired records stay until their lock expires.
    pub fn update_cache_and_offsets(&mut self, log_start_offset: i64) {
        if log_start_offset <= self.start_offset {
            return;
        }
        if self.cache.is_empty() {
            self.start_offset = log_start_offset;
            self.end_offset = log_start_offset;
            return;
        }
        let keys: Vec<i64> = self.cache.keys().copied().collect();
        let from = self.start_offset;
        if self.archive_records(from, log_start_offset, &keys, RecordState::Available) {
            self.find_next_fetch_offset = true;
        }
        self.start_offset = log_start_offset;
        if self.end_offset < self.start_offset {
            self.end_offset = self.start_offset;
        }
    }

    /// Kafka's `archiveRecords`: records in `initial` state within `from..end`
    /// (exclusive) of the batches at `keys` become archived, terminally.
    pub(crate) fn archive_records(
        &mut self,
        from: i64,
        end: i64,
        keys: &[i64],
        initial: RecordState,
    ) -> bool {
        let mut any = false;
        for key in keys {
            if *key >= end {
                break;
            }
            let Some(batch) = self.cache.get_mut(key) else { continue };
            let full_match = batch.first >= from && batch.last < end;
            if !full_match || batch.whole().is_none() {
                if let Some(s) = batch.whole() {
                    if s.state != initial {
                        continue;
                    }
                    batch.split();
                }
                for (_, s) in batch.offsets_mut(from, end - 1) {
                    if s.state == initial {
                        s.archive();
                        any = true;
                    }
                }
                continue;
            }
            if let Some(s) = batch.whole_mut()
                && s.state == initial
            {
                s.archive();
                any = true;
            }
        }
        any
    }

    /// Kafka's `canMoveStartOffset`: the record at the start offset is terminal and
    /// not waiting for a write.
    fn can_move_start_offset(&self) -> bool {
        let Some((_, batch)) = self.cache.range(..=self.start_offset).next_back() else {
            // An acquirable gap at the start (read with gaps).
            return false;
        };
        // A start offset past the floor batch (in a gap) reads that batch's last record.
        let Some(s) = batch.state_at(self.start_offset.min(batch.last)) else { return false };
        !s.in_transition() && s.state.is_terminal()
    }

    /// Kafka's `findLastOffsetAcknowledgedAndMetadata`: the last offset of the run of
    /// terminal records at the front of the cache, -1 if none.
    fn last_offset_acknowledged(&self) -> i64 {
        let mut last = -1;
        let gap = if self.gap_window_active() { self.gap_window.map(|g| g.gap_start) } else { None };
        for batch in self.cache.values() {
            if gap.is_some_and(|g| batch.last >= g) {
                return last;
            }
            match &batch.tracking {
                Tracking::Whole(s) => {
                    if s.in_transition() || !s.state.is_terminal() {
                        return last;
                    }
                    last = batch.last;
                }
                Tracking::PerOffset(v) => {
                    for (i, s) in v.iter().enumerate() {
                        if s.in_transition() || !s.state.is_terminal() {
                            return last;
                        }
                        last = batch.first + i as i64;
                    }
                }
            }
        }
        last
    }

    /// Kafka's `maybeUpdateCachedStateAndOffsets`: moves the start offset past the
    /// terminal records at the front and drops the batches it passed whole.
    pub(crate) fn maybe_update_cached_state_and_offsets(&mut self) -> bool {
        if !self.can_move_start_offset() {
            return false;
        }
        let last_acked = self.last_offset_acknowledged();
        if last_acked == -1 {
            return false;
        }
        let Some(last_cached) = self.cache.last_key_value().map(|(_, b)| b.last) else { return false };
        if last_acked == last_cached {
            // Kafka sets both to `last_cached + 1`, which moves the start offset back
            // when the log start offset had passed the whole cache; here it never
            // moves back.
            let next = (last_cached + 1).max(self.start_offset);
            self.start_offset = next;
            self.end_offset = next;
            self.cache.clear();
            return true;
        }
        let Some((&floor_key, floor_last)) =
            self.cache.range(..=last_acked).next_back().map(|(k, b)| (k, b.last))
        else {
            return false;
        };
        let last_key_to_remove;
        if last_acked == floor_last {
            if let Some((&higher, _)) = self.cache.range(last_acked + 1..).next()
                && higher > self.start_offset
            {
                self.start_offset = higher;
            }
            if self.gap_window_active()
                && let Some(g) = self.gap_window
            {
                self.start_offset = self.start_offset.min(g.gap_start);
            }
            last_key_to_remove = Some(floor_key);
        } else {
            if last_acked + 1 > self.start_offset {
                self.start_offset = last_acked + 1;
            }
            last_key_to_remove = self.cache.range(..floor_key).next_back().map(|(k, _)| *k);
        }
        if let Some(last_key) = last_key_to_remove {
            // Everything up to and including `last_key` goes.
            let kept = self.cache.split_off(&(last_key + 1));
            self.cache = kept;
        }
        true
    }
}
