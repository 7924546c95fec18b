//! Pending transactional offsets (KIP-98, KIP-447): what a TxnOffsetCommit
//! wrote and its transaction's marker has not yet committed or aborted, per
//! group and producer (Kafka's `OffsetMetadataManager.pendingTransactionalOffsets`
//! and `openTransactions`). Nothing here is visible to a plain OffsetFetch;
//! a `require_stable` fetch answers UNSTABLE_OFFSET_COMMIT where any is open.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use group_offsets::TxnOffsetRecord;
use group_types::{OffsetAndMetadata, TopicPartition};

/// One pending offset: the offset its COMMIT makes visible, and what decides
/// whether it does (see [`TxnOffsetRecord`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PendingOffset {
    pub(crate) offset: OffsetAndMetadata,
    /// Order of writing among the partition's pending offsets (Kafka compares
    /// record offsets).
    pub(crate) sequence: u64,
    /// A newer commit of the partition is committed: COMMIT leaves it.
    pub(crate) superseded: bool,
}

/// One producer's pending offsets in one group, by partition.
pub(crate) type ProducerOffsets = BTreeMap<TopicPartition, PendingOffset>;

/// Every group's pending transactional offsets in one coordinator partition.
#[derive(Debug, Default)]
pub(crate) struct TxnOffsets {
    /// Group, then producer.
    groups: HashMap<Arc<str>, BTreeMap<i64, ProducerOffsets>>,
    /// The groups each producer has pending offsets in: what its marker visits.
    producers: HashMap<i64, BTreeSet<Arc<str>>>,
    /// The sequence of the next pending offset written.
    next_sequence: u64,
}

impl TxnOffsets {
    /// True when no group has a pending offset: the plain offset paths then
    /// skip every check of this store.
    pub(crate) fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The sequence for the next pending offset.
    pub(crate) fn next_sequence(&mut self) -> u64 {
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        sequence
    }

    /// `producer`'s pending offsets in `group`.
    pub(crate) fn get(&self, group: &str, producer: i64) -> Option<&ProducerOffsets> {
        self.groups.get(group)?.get(&producer)
    }

    /// Every producer's pending offsets in `group`.
    pub(crate) fn of_group(&self, group: &str) -> Option<&BTreeMap<i64, ProducerOffsets>> {
        self.groups.get(group)
    }

    /// True when `group` has any pending offset.
    pub(crate) fn group_has_pending(&self, group: &str) -> bool {
        self.groups.contains_key(group)
    }

    /// True when any producer has a pending offset of `group` for `topic`-`partition`.
    pub(crate) fn has_pending(&self, group: &str, topic: &str, partition: i32) -> bool {
        self.groups.get(group).is_some_and(|producers| {
            producers
                .values()
                .any(|offsets| offsets.keys().any(|tp| tp.partition == partition && &*tp.topic == topic))
        })
    }

    /// The partitions of `group` with a pending offset of any producer.
    pub(crate) fn partitions_of(&self, group: &str) -> BTreeSet<TopicPartition> {
        self.groups.get(group).into_iter().flat_map(|p| p.values()).flat_map(|o| o.keys().cloned()).collect()
    }

    /// The groups `producer` has pending offsets in, in id order.
    pub(crate) fn groups_of(&self, producer: i64) -> Vec<Arc<str>> {
        self.producers.get(&producer).map(|g| g.iter().cloned().collect()).unwrap_or_default()
    }

    /// Replaces `producer`'s pending offsets in `group` (`None` or empty: it has
    /// none), returning what it had.
    pub(crate) fn set(
        &mut self,
        group: &Arc<str>,
        producer: i64,
        offsets: Option<ProducerOffsets>,
    ) -> Option<ProducerOffsets> {
        let offsets = offsets.filter(|o| !o.is_empty());
        match offsets {
            Some(offsets) => {
                self.producers.entry(producer).or_default().insert(group.clone());
                self.groups.entry(group.clone()).or_default().insert(producer, offsets)
            }
            None => {
                let producers = self.groups.get_mut(&**group)?;
                let prev = producers.remove(&producer);
                if producers.is_empty() {
                    self.groups.remove(&**group);
                }
                if let Some(groups) = self.producers.get_mut(&producer) {
                    groups.remove(&**group);
                    if groups.is_empty() {
                        self.producers.remove(&producer);
                    }
                }
                prev
            }
        }
    }

    /// A pending offset loaded from storage; the next sequence stays above it.
    pub(crate) fn load(&mut self, record: TxnOffsetRecord) {
        let TxnOffsetRecord { group_id, producer_id, partition, offset, sequence, superseded } = record;
        self.next_sequence = self.next_sequence.max(sequence.saturating_add(1));
        let mut offsets = self.get(&group_id, producer_id).cloned().unwrap_or_default();
        offsets.insert(partition, PendingOffset { offset, sequence, superseded });
        self.set(&group_id, producer_id, Some(offsets));
    }
}

/// The record of one pending offset.
pub(crate) fn txn_record(
    group: &Arc<str>,
    producer: i64,
    tp: &TopicPartition,
    p: &PendingOffset,
) -> group_offsets::Record {
    group_offsets::Record::TxnOffset(Box::new(TxnOffsetRecord {
        group_id: group.clone(),
        producer_id: producer,
        partition: tp.clone(),
        offset: p.offset.clone(),
        sequence: p.sequence,
        superseded: p.superseded,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(offset: i64, sequence: u64) -> PendingOffset {
        PendingOffset { offset: OffsetAndMetadata::new(offset, 0), sequence, superseded: false }
    }

    #[test]
    fn the_indexes_follow_every_change() {
        let mut t = TxnOffsets::default();
        let (g, h): (Arc<str>, Arc<str>) = (Arc::from("g"), Arc::from("h"));
        let foo0 = TopicPartition::new("foo", 0);
        assert!(t.is_empty());
        t.set(&g, 1, Some(BTreeMap::from([(foo0.clone(), pending(10, 0))])));
        t.set(&h, 1, Some(BTreeMap::from([(foo0.clone(), pending(11, 1))])));
        t.set(&g, 2, Some(BTreeMap::from([(TopicPartition::new("bar", 1), pending(12, 2))])));
        assert_eq!(t.groups_of(1), vec![g.clone(), h.clone()]);
        assert!(
            t.has_pending("g", "foo", 0) && t.has_pending("g", "bar", 1) && !t.has_pending("g", "foo", 1)
        );
        assert_eq!(t.partitions_of("g").len(), 2);
        assert_eq!(t.partitions_of("h").len(), 1);
        let prev = t.set(&g, 1, None).expect("it had some");
        assert_eq!(prev[&foo0].offset.offset, 10);
        assert_eq!(t.groups_of(1), vec![h.clone()]);
        assert!(!t.has_pending("g", "foo", 0));
        t.set(&g, 2, Some(BTreeMap::new()));
        assert!(!t.group_has_pending("g"), "an empty set is no pending offset");
        t.set(&h, 1, None);
        assert!(t.is_empty() && t.groups_of(1).is_empty());
    }

    #[test]
    fn a_load_keeps_the_next_sequence_above_every_loaded_one() {
        let mut t = TxnOffsets::default();
        for sequence in [7, 3] {
            t.load(TxnOffsetRecord {
                group_id: Arc::from("g"),
                producer_id: 1,
                partition: TopicPartition::new("t", i32::try_from(sequence).unwrap()),
                offset: OffsetAndMetadata::new(1, 0),
                sequence,
                superseded: false,
            });
        }
        assert_eq!(t.get("g", 1).map(BTreeMap::len), Some(2));
        assert_eq!(t.next_sequence(), 8);
        assert_eq!(t.next_sequence(), 9);
    }
}
