//! `PartitionData`: what one coordinator partition holds in memory, with
//! records applied by key (the later record of a key wins, tombstones remove).

use std::iter::Peekable;
use std::sync::Arc;

use group_types::hash::ClientMap;
use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};

use crate::{ConsumerGroupRecord, GroupMetadataRecord, OwnerEpoch, PartitionOffsets, Record, StoredGroups};

/// One topic's offsets by partition.
type Partitions = PartitionOffsets;

/// What memory holds for one group.
#[derive(Debug, Default)]
struct GroupData {
    /// Offsets by topic then partition. Keyed by `Arc<str>` so a lookup by `&str`
    /// needs no allocation and a record's topic is kept without copying it.
    offsets: ClientMap<Arc<str>, Partitions>,
    record: Option<GroupMetadataRecord>,
    /// Consumer-group records by (record type, sub-key), the last one of each.
    consumer: std::collections::BTreeMap<(i16, Arc<str>), ConsumerGroupRecord>,
}

impl GroupData {
    fn is_empty(&self) -> bool {
        self.offsets.is_empty() && self.record.is_none() && self.consumer.is_empty()
    }

    fn apply_consumer(&mut self, record: ConsumerGroupRecord) {
        let key = (record.record_type(), Arc::from(record.sub_key()));
        if record.is_tombstone() {
            self.consumer.remove(&key);
        } else {
            self.consumer.insert(key, record);
        }
    }

    /// Keeps `offset` with its metadata detached: whoever appended the record
    /// may have cut the metadata from a request frame, which the store must
    /// not keep alive.
    fn insert(&mut self, partition: TopicPartition, mut offset: OffsetAndMetadata) {
        offset.metadata = offset.metadata.detach();
        match self.offsets.get_mut(&*partition.topic) {
            Some(partitions) => {
                partitions.insert(partition.partition, offset);
            }
            None => {
                self.offsets.entry(partition.topic).or_default().insert(partition.partition, offset);
            }
        }
    }

    fn remove(&mut self, partition: &TopicPartition) {
        if let Some(by_partition) = self.offsets.get_mut(partition.topic()) {
            by_partition.remove(partition.partition);
            if by_partition.is_empty() {
                self.offsets.remove(partition.topic());
            }
        }
    }

    fn group_offsets(&self, group_id: &str) -> GroupOffsets {
        let mut out = GroupOffsets::new(group_id);
        for (topic, partitions) in &self.offsets {
            let entry = out.offsets.entry(topic.to_string()).or_default();
            entry.extend(partitions.iter().map(|(p, o)| (p, o.clone())));
        }
        out
    }
}

/// One coordinator partition: its highest accepted epoch and its groups.
///
/// Group ids keep the standard (SipHash) hasher: any client can invent them,
/// and a keyed hash stops anyone flooding one map with colliding ids.
#[derive(Debug, Default)]
pub(crate) struct PartitionData {
    pub(crate) epoch: OwnerEpoch,
    groups: ClientMap<Arc<str>, GroupData>,
}

impl PartitionData {
    /// Applies `records` in order. Nothing here can fail, which is what makes
    /// an append atomic: the caller checks faults and epochs first.
    ///
    /// A run of records of one group (a commit of many partitions) looks the
    /// group up once: the group map hashes ids with SipHash, the costliest
    /// step of applying an offset. The lookup key is the record's own
    /// `Arc<str>`, so applying to an existing group copies no id.
    pub(crate) fn apply(&mut self, records: Vec<Record>) {
        let mut records = records.into_iter().peekable();
        while let Some(first) = records.next() {
            let (key, change) = self.split(first);
            let emptied = match self.groups.get_mut(&*key) {
                Some(group) => run(group, change, &key, &mut records),
                None => {
                    let group = self.groups.entry(Arc::clone(&key)).or_default();
                    run(group, change, &key, &mut records)
                }
            };
            // Forgotten once it holds nothing, so deleted groups neither pin
            // memory nor show up in loads.
            if emptied {
                self.groups.remove(&*key);
            }
        }
    }

    /// A record's group id and what it changes. A group record carries its id
    /// as a `String`: the map's key is reused when the group exists.
    fn split(&self, record: Record) -> (Arc<str>, Change) {
        match record {
            Record::Group(record) => {
                let key = match self.groups.get_key_value(record.group_id.as_str()) {
                    Some((key, _)) => Arc::clone(key),
                    None => Arc::from(record.group_id.as_str()),
                };
                (key, Change::Record(*record))
            }
            Record::GroupTombstone { group_id } => (group_id, Change::RemoveRecord),
            Record::Offset { group_id, partition, offset } => (group_id, Change::Offset(partition, offset)),
            Record::OffsetTombstone { group_id, partition } => (group_id, Change::RemoveOffset(partition)),
            Record::Consumer(record) => (Arc::clone(record.group_id()), Change::Consumer(record)),
        }
    }

    pub(crate) fn fetch(&self, group_id: &str, topic: &str, partition: i32) -> Option<OffsetAndMetadata> {
        self.groups.get(group_id)?.offsets.get(topic)?.get(partition).cloned()
    }

    pub(crate) fn fetch_all(&self, group_id: &str) -> GroupOffsets {
        match self.groups.get(group_id) {
            Some(group) => group.group_offsets(group_id),
            None => GroupOffsets::new(group_id),
        }
    }

    /// Every group record and every group's offsets, sorted by group id so
    /// that loads are deterministic.
    pub(crate) fn stored(&self) -> StoredGroups {
        let mut out = StoredGroups::default();
        for (group_id, group) in &self.groups {
            if let Some(record) = &group.record {
                out.groups.push(record.clone());
            }
            if !group.offsets.is_empty() {
                out.offsets.push(group.group_offsets(group_id));
            }
            out.consumer.extend(group.consumer.values().cloned());
        }
        out.groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        out.offsets.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        out
    }

    pub(crate) fn offset_count(&self) -> usize {
        self.groups.values().flat_map(|g| g.offsets.values()).map(Partitions::len).sum()
    }
}

/// A record without its group id.
enum Change {
    Record(GroupMetadataRecord),
    RemoveRecord,
    Offset(TopicPartition, OffsetAndMetadata),
    RemoveOffset(TopicPartition),
    Consumer(ConsumerGroupRecord),
}

impl Change {
    fn of(record: Record) -> Change {
        match record {
            Record::Group(record) => Change::Record(*record),
            Record::GroupTombstone { .. } => Change::RemoveRecord,
            Record::Offset { partition, offset, .. } => Change::Offset(partition, offset),
            Record::OffsetTombstone { partition, .. } => Change::RemoveOffset(partition),
            Record::Consumer(record) => Change::Consumer(record),
        }
    }

    fn apply(self, group: &mut GroupData) {
        match self {
            Change::Record(record) => group.record = Some(record),
            Change::RemoveRecord => group.record = None,
            Change::Offset(partition, offset) => group.insert(partition, offset),
            Change::RemoveOffset(partition) => group.remove(&partition),
            Change::Consumer(record) => group.apply_consumer(record),
        }
    }
}

/// Applies `first`, then every following record of the same group; true when
/// the group ends up empty.
fn run(
    group: &mut GroupData,
    first: Change,
    key: &str,
    records: &mut Peekable<std::vec::IntoIter<Record>>,
) -> bool {
    first.apply(group);
    while let Some(next) = records.next_if(|r| r.group_id() == key) {
        Change::of(next).apply(group);
    }
    group.is_empty()
}

#[cfg(test)]
mod tests {
    use group_types::CommitMetadata;

    use super::*;

    fn offset(group: &str, topic: &str, partition: i32, n: i64) -> Record {
        Record::Offset {
            group_id: Arc::from(group),
            partition: TopicPartition::new(topic, partition),
            offset: OffsetAndMetadata::new(n, n),
        }
    }

    #[test]
    fn emptied_groups_are_forgotten() {
        let mut data = PartitionData::default();
        data.apply(vec![
            offset("g", "t", 0, 1),
            Record::OffsetTombstone { group_id: Arc::from("g"), partition: TopicPartition::new("t", 0) },
        ]);
        assert!(data.groups.is_empty(), "{data:?}");
        data.apply(vec![Record::Group(Box::new(GroupMetadataRecord {
            group_id: "g".into(),
            ..Default::default()
        }))]);
        data.apply(vec![Record::GroupTombstone { group_id: Arc::from("g") }]);
        assert!(data.groups.is_empty(), "{data:?}");
    }

    #[test]
    fn runs_of_groups_apply_in_order() {
        let mut data = PartitionData::default();
        let record = |id: &str, generation| {
            Record::Group(Box::new(GroupMetadataRecord {
                group_id: id.into(),
                generation_id: generation,
                ..Default::default()
            }))
        };
        data.apply(vec![
            offset("a", "t", 0, 1),
            record("a", 1),
            offset("b", "t", 0, 2),
            Record::GroupTombstone { group_id: Arc::from("a") },
            offset("a", "t", 0, 3),
            record("b", 2),
            record("b", 3),
            Record::OffsetTombstone { group_id: Arc::from("b"), partition: TopicPartition::new("t", 0) },
        ]);
        let stored = data.stored();
        assert_eq!(
            stored.groups.iter().map(|r| (r.group_id.as_str(), r.generation_id)).collect::<Vec<_>>(),
            [("b", 3)]
        );
        assert_eq!(stored.offsets.iter().map(|g| g.group_id.as_str()).collect::<Vec<_>>(), ["a"]);
        assert_eq!(data.fetch("a", "t", 0).map(|o| o.offset), Some(3));
    }

    #[test]
    fn a_batch_applies_in_order() {
        let mut data = PartitionData::default();
        data.apply(vec![offset("g", "t", 0, 1), offset("g", "t", 0, 2), offset("g", "u", 0, 3)]);
        assert_eq!(data.fetch("g", "t", 0).map(|o| o.offset), Some(2));
        assert_eq!(data.offset_count(), 2);
    }

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
