//! The offsets manager (Kafka's `ShareCoordinatorOffsetsManager`): which prefix
//! of a `__share_group_state` partition no live share partition needs any more.

use group_types::hash::ClientMap;

use crate::SharePartitionKey;

/// Per share partition, the offset of its latest ShareSnapshot; the minimum over
/// them is the last redundant offset (every record below it is superseded).
#[derive(Debug, Clone)]
pub(crate) struct OffsetsManager {
    offsets: ClientMap<SharePartitionKey, i64>,
    last_redundant: i64,
}

impl Default for OffsetsManager {
    fn default() -> OffsetsManager {
        // `i64::MAX` stands for "none yet", so that the first offset is the minimum.
        OffsetsManager { offsets: ClientMap::default(), last_redundant: i64::MAX }
    }
}

impl OffsetsManager {
    /// Kafka's `updateState`: `key`'s latest snapshot is at `offset`. A tombstone
    /// takes part in the minimum once, then its key leaves the calculation.
    pub(crate) fn update(&mut self, key: &SharePartitionKey, offset: i64, is_delete: bool) {
        self.last_redundant = self.last_redundant.min(offset);
        self.offsets.insert(key.clone(), offset);
        // Every stored offset is at least the previous minimum, so Kafka's early
        // exit in `findRedundantOffset` gives the plain minimum.
        if let Some(&min) = self.offsets.values().min() {
            self.last_redundant = min;
        }
        if is_delete {
            self.offsets.remove(key);
        }
    }

    /// Kafka's `lastRedundantOffset`: `None` for none yet and for 0.
    pub(crate) fn last_redundant_offset(&self) -> Option<i64> {
        (self.last_redundant > 0 && self.last_redundant != i64::MAX).then_some(self.last_redundant)
    }
}
