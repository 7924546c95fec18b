//! [`Fold`]: the one fold of a coordinator partition's records into what the
//! partition holds (Kafka's `GroupCoordinatorShard.replay`, reduced to the
//! stored state): per key the last record written, a tombstone removing its
//! key. The memory store keeps one per partition, `group-storage-sled` folds
//! the records it reads back, `group-storage-etcd` folds its snapshot and log.
//!
//! A record's key is: for a group record, the group; for an offset, the
//! group, topic and partition; for a consumer-group record, the group, its
//! [`record_type`](ModernGroupRecord::record_type) and its
//! [`sub_key`](ModernGroupRecord::sub_key); for a pending transactional
//! offset, the group, producer and partition. Keys of different kinds never
//! replace each other: a group tombstone leaves the group's offsets.

use std::collections::BTreeMap;
use std::iter::Peekable;
use std::sync::Arc;

use group_types::hash::ClientMap;
use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};

use crate::{
    GroupMetadataRecord, ModernGroupRecord, PartitionOffsets, Record, StoredGroups, TxnOffsetRecord,
};

/// Folds records, fed in log order, into [`StoredGroups`].
///
/// Nothing here can fail or panic, so a caller that checks an append first
/// (its epoch, injected faults) and then folds it has made it atomic.
/// Folding a log in one pass, or folding the [live records](StoredGroups::into_records)
/// of a fold of its first part and then the rest, gives the same state: what
/// a snapshot relies on.
///
/// Group ids keep the standard (SipHash) hasher: any client can invent them,
/// and a keyed hash stops anyone flooding one map with colliding ids.
///
/// ```
/// use std::sync::Arc;
///
/// use group_offsets::{Fold, Record};
/// use group_types::{OffsetAndMetadata, TopicPartition};
///
/// let commit = |offset| Record::Offset {
///     group_id: Arc::from("g"),
///     partition: TopicPartition::new("t", 0),
///     offset: OffsetAndMetadata::new(offset, 0),
/// };
/// let mut fold = Fold::new();
/// fold.apply(vec![commit(1), commit(2)]);
/// assert_eq!(fold.offset("g", "t", 0).map(|o| o.offset), Some(2));
/// fold.push(Record::OffsetTombstone { group_id: Arc::from("g"), partition: TopicPartition::new("t", 0) });
/// assert_eq!(fold.into_stored(), Default::default());
/// ```
#[derive(Debug, Default, Clone)]
pub struct Fold {
    groups: ClientMap<Arc<str>, GroupData>,
}

/// What one group holds.
#[derive(Debug, Default, Clone)]
struct GroupData {
    /// Offsets by topic then partition. Keyed by `Arc<str>` so a lookup by `&str`
    /// needs no allocation and a record's topic is kept without copying it.
    offsets: ClientMap<Arc<str>, PartitionOffsets>,
    record: Option<GroupMetadataRecord>,
    /// Consumer-group records by (record type, sub-key), the last one of each.
    consumer: BTreeMap<(i16, Arc<str>), ModernGroupRecord>,
    /// Pending transactional offsets by (producer, partition), the last one of each.
    txn: BTreeMap<(i64, TopicPartition), TxnOffsetRecord>,
}

/// Folds `records`, in order, from nothing.
///
/// ```
/// use std::sync::Arc;
///
/// use group_offsets::{GroupMetadataRecord, Record, fold};
///
/// let record = Record::Group(Box::new(GroupMetadataRecord { group_id: "g".into(), ..Default::default() }));
/// let stored = fold([record, Record::GroupTombstone { group_id: Arc::from("g") }]);
/// assert!(stored.groups.is_empty());
/// ```
pub fn fold(records: impl IntoIterator<Item = Record>) -> StoredGroups {
    let mut fold = Fold::new();
    fold.apply(records);
    fold.into_stored()
}

impl Fold {
    /// Nothing folded yet.
    pub fn new() -> Fold {
        Fold::default()
    }

    /// The fold of `stored`'s live records: resumes from a snapshot.
    pub fn from_stored(stored: StoredGroups) -> Fold {
        let mut fold = Fold::new();
        fold.apply(stored.into_records());
        fold
    }

    /// Folds one record.
    pub fn push(&mut self, record: Record) {
        self.apply(std::iter::once(record));
    }

    /// Folds `records` in order.
    ///
    /// A run of records of one group (a commit of many partitions) looks the
    /// group up once: the group map hashes ids with SipHash, the costliest
    /// step of applying an offset. The lookup key is the record's own
    /// `Arc<str>`, so applying to an existing group copies no id.
    pub fn apply(&mut self, records: impl IntoIterator<Item = Record>) {
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

    /// Folds an offset record for each of `offsets`, all of `group_id` and
    /// `topic`: what [`apply`](Self::apply) would make of them, without a
    /// record per offset (an engine loading a million offsets key by key).
    pub fn apply_offsets(&mut self, group_id: &Arc<str>, topic: &Arc<str>, offsets: PartitionOffsets) {
        if offsets.is_empty() {
            return;
        }
        let group = match self.groups.get_mut(&**group_id) {
            Some(group) => group,
            None => self.groups.entry(Arc::clone(group_id)).or_default(),
        };
        match group.offsets.get_mut(&**topic) {
            Some(partitions) => {
                for (p, offset) in offsets {
                    partitions.insert(p, offset);
                }
            }
            None => {
                group.offsets.insert(Arc::clone(topic), offsets);
            }
        }
    }

    /// Folds the live records of `later` after this fold's: exact when the
    /// two were folded from logs with no key in common (disjoint key ranges),
    /// and otherwise what folding `later`'s live records would give.
    pub fn merge(&mut self, later: Fold) {
        if self.groups.is_empty() {
            *self = later;
            return;
        }
        for (id, group) in later.groups {
            match self.groups.get_mut(&*id) {
                None => {
                    self.groups.insert(id, group);
                }
                Some(into) => {
                    if group.record.is_some() {
                        into.record = group.record;
                    }
                    for (topic, partitions) in group.offsets {
                        let slot = into.offsets.entry(topic).or_default();
                        for (p, offset) in partitions {
                            slot.insert(p, offset);
                        }
                    }
                    into.consumer.extend(group.consumer);
                    into.txn.extend(group.txn);
                }
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
            Record::Modern(record) => (Arc::clone(record.group_id()), Change::Consumer(record)),
            Record::TxnOffset(record) => (Arc::clone(&record.group_id), Change::Txn(record)),
            Record::TxnOffsetTombstone { group_id, producer_id, partition } => {
                (group_id, Change::RemoveTxn(producer_id, partition))
            }
        }
    }

    /// One partition's offset.
    pub fn offset(&self, group_id: &str, topic: &str, partition: i32) -> Option<&OffsetAndMetadata> {
        self.groups.get(group_id)?.offsets.get(topic)?.get(partition)
    }

    /// Every offset of `group_id` (none for an unknown group).
    pub fn group_offsets(&self, group_id: &str) -> GroupOffsets {
        match self.groups.get(group_id) {
            Some(group) => group.group_offsets(group_id),
            None => GroupOffsets::new(group_id),
        }
    }

    /// How many partition offsets are held, over every group.
    pub fn offset_count(&self) -> usize {
        self.groups.values().flat_map(|g| g.offsets.values()).map(PartitionOffsets::len).sum()
    }

    /// What the records folded so far leave, copied (see [`into_stored`](Self::into_stored)).
    pub fn stored(&self) -> StoredGroups {
        let mut out = StoredGroups::default();
        for (group_id, group) in &self.groups {
            if let Some(record) = &group.record {
                out.groups.push(record.clone());
            }
            if !group.offsets.is_empty() {
                out.offsets.push(group.group_offsets(group_id));
            }
            out.consumer.extend(group.consumer.values().cloned());
            out.txn_offsets.extend(group.txn.values().cloned());
        }
        sorted(out)
    }

    /// What the records folded leave: groups and offsets sorted by group id,
    /// consumer-group records by group, then record type and sub-key, so that
    /// loads are deterministic.
    pub fn into_stored(self) -> StoredGroups {
        let mut out = StoredGroups::default();
        for (group_id, group) in self.groups {
            if let Some(record) = group.record {
                out.groups.push(record);
            }
            if !group.offsets.is_empty() {
                let mut offsets = GroupOffsets::new(&*group_id);
                for (topic, partitions) in group.offsets {
                    offsets.offsets.insert(topic.to_string(), partitions.into_iter().collect());
                }
                out.offsets.push(offsets);
            }
            out.consumer.extend(group.consumer.into_values());
            out.txn_offsets.extend(group.txn.into_values());
        }
        sorted(out)
    }
}

fn sorted(mut out: StoredGroups) -> StoredGroups {
    out.groups.sort_unstable_by(|a, b| a.group_id.cmp(&b.group_id));
    out.offsets.sort_unstable_by(|a, b| a.group_id.cmp(&b.group_id));
    // Stable: a group's records are already in key order.
    out.consumer.sort_by(|a, b| a.group_id().cmp(b.group_id()));
    out.txn_offsets.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    out
}

impl StoredGroups {
    /// The records whose fold is this state: one group record per group, one
    /// offset record per committed offset, one consumer-group record per live
    /// key, one record per pending transactional offset, and no tombstones.
    /// What a snapshot of a partition holds.
    pub fn into_records(self) -> Vec<Record> {
        let offsets: usize = self.offsets.iter().map(GroupOffsets::len).sum();
        let mut records =
            Vec::with_capacity(self.groups.len() + self.consumer.len() + offsets + self.txn_offsets.len());
        records.extend(self.groups.into_iter().map(|g| Record::Group(Box::new(g))));
        records.extend(self.consumer.into_iter().map(Record::Modern));
        records.extend(self.txn_offsets.into_iter().map(|t| Record::TxnOffset(Box::new(t))));
        for group in self.offsets {
            let id: Arc<str> = Arc::from(group.group_id);
            for (topic, partitions) in group.offsets {
                let topic: Arc<str> = Arc::from(topic);
                for (partition, offset) in partitions {
                    records.push(Record::Offset {
                        group_id: Arc::clone(&id),
                        partition: TopicPartition::new(Arc::clone(&topic), partition),
                        offset,
                    });
                }
            }
        }
        records
    }
}

impl GroupData {
    fn is_empty(&self) -> bool {
        self.offsets.is_empty() && self.record.is_none() && self.consumer.is_empty() && self.txn.is_empty()
    }

    fn apply_consumer(&mut self, record: ModernGroupRecord) {
        let key = (record.record_type(), Arc::from(record.sub_key()));
        if record.is_tombstone() {
            self.consumer.remove(&key);
        } else {
            self.consumer.insert(key, record);
        }
    }

    fn insert(&mut self, partition: TopicPartition, offset: OffsetAndMetadata) {
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

/// A record without its group id.
enum Change {
    Record(GroupMetadataRecord),
    RemoveRecord,
    Offset(TopicPartition, OffsetAndMetadata),
    RemoveOffset(TopicPartition),
    Consumer(ModernGroupRecord),
    Txn(Box<TxnOffsetRecord>),
    RemoveTxn(i64, TopicPartition),
}

impl Change {
    fn of(record: Record) -> Change {
        match record {
            Record::Group(record) => Change::Record(*record),
            Record::GroupTombstone { .. } => Change::RemoveRecord,
            Record::Offset { partition, offset, .. } => Change::Offset(partition, offset),
            Record::OffsetTombstone { partition, .. } => Change::RemoveOffset(partition),
            Record::Modern(record) => Change::Consumer(record),
            Record::TxnOffset(record) => Change::Txn(record),
            Record::TxnOffsetTombstone { producer_id, partition, .. } => {
                Change::RemoveTxn(producer_id, partition)
            }
        }
    }

    fn apply(self, group: &mut GroupData) {
        match self {
            Change::Record(record) => group.record = Some(record),
            Change::RemoveRecord => group.record = None,
            Change::Offset(partition, offset) => group.insert(partition, offset),
            Change::RemoveOffset(partition) => group.remove(&partition),
            Change::Consumer(record) => group.apply_consumer(record),
            Change::Txn(record) => {
                group.txn.insert((record.producer_id, record.partition.clone()), *record);
            }
            Change::RemoveTxn(producer_id, partition) => {
                group.txn.remove(&(producer_id, partition));
            }
        }
    }
}

/// Applies `first`, then every following record of the same group; true when
/// the group ends up empty.
fn run<I: Iterator<Item = Record>>(
    group: &mut GroupData,
    first: Change,
    key: &str,
    records: &mut Peekable<I>,
) -> bool {
    first.apply(group);
    while let Some(next) = records.next_if(|r| r.group_id() == key) {
        Change::of(next).apply(group);
    }
    group.is_empty()
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
