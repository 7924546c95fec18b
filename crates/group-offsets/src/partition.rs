//! `PartitionData`: what the memory store holds for one coordinator
//! partition: its highest accepted epoch and the [`Fold`] of its records.

use group_types::{GroupOffsets, OffsetAndMetadata};

use crate::{Fold, OwnerEpoch, Record, StoredGroups};

/// One coordinator partition in memory.
#[derive(Debug, Default)]
pub(crate) struct PartitionData {
    pub(crate) epoch: OwnerEpoch,
    fold: Fold,
}

impl PartitionData {
    /// Folds `records` in order. Nothing here can fail, which is what makes
    /// an append atomic: the caller checks faults and epochs first.
    ///
    /// Offsets are kept with their metadata detached: whoever appended the
    /// record may have cut the metadata from a request frame, which the store
    /// must not keep alive.
    pub(crate) fn apply(&mut self, mut records: Vec<Record>) {
        for record in &mut records {
            if let Record::Offset { offset, .. } = record {
                offset.metadata = offset.metadata.detach();
            }
        }
        self.fold.apply(records);
    }

    pub(crate) fn fetch(&self, group_id: &str, topic: &str, partition: i32) -> Option<OffsetAndMetadata> {
        self.fold.offset(group_id, topic, partition).cloned()
    }

    pub(crate) fn fetch_all(&self, group_id: &str) -> GroupOffsets {
        self.fold.group_offsets(group_id)
    }

    /// Every group record and every group's offsets, sorted by group id so
    /// that loads are deterministic.
    pub(crate) fn stored(&self) -> StoredGroups {
        self.fold.stored()
    }

    pub(crate) fn offset_count(&self) -> usize {
        self.fold.offset_count()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use group_types::{CommitMetadata, TopicPartition};

    use super::*;

    #[test]
    fn kept_metadata_does_not_pin_the_frame_it_was_cut_from() {
        let frame = bytes::Bytes::from(b"\x00\x0bcheckpoint-7\x00".to_vec());
        let wire = frame.slice(2..14);
        let metadata = CommitMetadata::from_utf8(wire.clone()).unwrap();
        assert_eq!(metadata.as_bytes().as_ptr(), wire.as_ptr());
        let mut data = PartitionData::default();
        data.apply(vec![Record::Offset {
            group_id: Arc::from("g"),
            partition: TopicPartition::new("t", 0),
            offset: OffsetAndMetadata { metadata, ..OffsetAndMetadata::new(1, 1) },
        }]);
        let kept = data.fetch("g", "t", 0).unwrap().metadata;
        assert_eq!(kept, "checkpoint-7");
        assert_ne!(kept.as_bytes().as_ptr(), wire.as_ptr());
        drop(wire);
        assert!(frame.is_unique(), "the store still holds the frame");
    }
}
