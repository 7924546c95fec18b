//! Tests of the fold: against a model written as plainly as possible (one
//! map per kind of key, later records replacing earlier ones), resumed from
//! a snapshot, merged, and the cases the memory store relied on.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;
use crate::test_records::records;

/// The old semantics, key by key: what `load` must return after `records`.
fn model(records: &[Record]) -> StoredGroups {
    let mut groups: BTreeMap<String, GroupMetadataRecord> = BTreeMap::new();
    let mut offsets: BTreeMap<(String, String, i32), OffsetAndMetadata> = BTreeMap::new();
    let mut consumer: BTreeMap<(String, i16, String), ModernGroupRecord> = BTreeMap::new();
    let mut txn: BTreeMap<(String, i64, TopicPartition), TxnOffsetRecord> = BTreeMap::new();
    for record in records {
        match record {
            Record::Group(g) => {
                groups.insert(g.group_id.as_str().to_owned(), (**g).clone());
            }
            Record::GroupTombstone { group_id } => {
                groups.remove(&**group_id);
            }
            Record::Offset { group_id, partition, offset } => {
                offsets.insert(
                    (group_id.to_string(), partition.topic.to_string(), partition.partition),
                    offset.clone(),
                );
            }
            Record::OffsetTombstone { group_id, partition } => {
                offsets.remove(&(group_id.to_string(), partition.topic.to_string(), partition.partition));
            }
            Record::Modern(c) => {
                let key = (c.group_id().to_string(), c.record_type(), c.sub_key().to_owned());
                if c.is_tombstone() {
                    consumer.remove(&key);
                } else {
                    consumer.insert(key, c.clone());
                }
            }
            Record::TxnOffset(t) => {
                txn.insert((t.group_id.to_string(), t.producer_id, t.partition.clone()), (**t).clone());
            }
            Record::TxnOffsetTombstone { group_id, producer_id, partition } => {
                txn.remove(&(group_id.to_string(), *producer_id, partition.clone()));
            }
        }
    }
    let mut by_group: BTreeMap<String, GroupOffsets> = BTreeMap::new();
    for ((group, topic, partition), offset) in offsets {
        let entry = by_group.entry(group.clone()).or_insert_with(|| GroupOffsets::new(group));
        entry.offsets.entry(topic).or_default().insert(partition, offset);
    }
    StoredGroups {
        groups: groups.into_values().collect(),
        offsets: by_group.into_values().collect(),
        consumer: consumer.into_values().collect(),
        txn_offsets: txn.into_values().collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn folding_equals_the_model(records in records(40)) {
        prop_assert_eq!(fold(records.clone()), model(&records));
    }

    #[test]
    fn folding_record_by_record_or_in_batches_is_the_same(records in records(40), cut in any::<prop::sample::Index>()) {
        let mut one = Fold::new();
        for record in records.clone() {
            one.push(record);
        }
        let mut batches = Fold::new();
        let (first, second) = records.split_at(cut.index(records.len() + 1));
        batches.apply(first.to_vec());
        batches.apply(second.to_vec());
        prop_assert_eq!(one.stored(), batches.stored());
        prop_assert_eq!(one.into_stored(), fold(records));
    }

    #[test]
    fn resuming_from_a_snapshot_equals_one_pass(records in records(40), cut in any::<prop::sample::Index>()) {
        let (first, rest) = records.split_at(cut.index(records.len() + 1));
        // A snapshot: the live records of the first part's fold, no tombstones.
        let snapshot = fold(first.to_vec()).into_records();
        let tombstone = |r: &Record| matches!(r, Record::GroupTombstone { .. } | Record::OffsetTombstone { .. });
        prop_assert!(!snapshot.iter().any(tombstone), "a snapshot holds no tombstones");
        let mut resumed = Fold::from_stored(fold(snapshot));
        resumed.apply(rest.to_vec());
        prop_assert_eq!(resumed.into_stored(), fold(records.clone()));
    }

    #[test]
    fn applying_offsets_in_bulk_equals_their_records(records in records(40)) {
        let mut bulk = Fold::new();
        let mut one = Fold::new();
        for record in records {
            match record {
                Record::Offset { group_id, partition, offset } => {
                    let mut offsets = PartitionOffsets::default();
                    offsets.insert(partition.partition, offset.clone());
                    bulk.apply_offsets(&group_id, &partition.topic, offsets);
                    one.push(Record::Offset { group_id, partition, offset });
                }
                other => {
                    bulk.push(other.clone());
                    one.push(other);
                }
            }
        }
        prop_assert_eq!(bulk.into_stored(), one.into_stored());
    }

    #[test]
    fn merging_folds_of_disjoint_groups_equals_one_pass(records in records(40)) {
        // Records of group "a" on one side, the others on the other: no key in common.
        let (a, others): (Vec<Record>, Vec<Record>) = records.iter().cloned().partition(|r| r.group_id() == "a");
        let mut merged = Fold::new();
        merged.apply(others);
        let mut later = Fold::new();
        later.apply(a);
        merged.merge(later);
        prop_assert_eq!(merged.into_stored(), fold(records));
    }
}

fn offset(group: &str, topic: &str, partition: i32, n: i64) -> Record {
    Record::Offset {
        group_id: Arc::from(group),
        partition: TopicPartition::new(topic, partition),
        offset: OffsetAndMetadata::new(n, n),
    }
}

#[test]
fn emptied_groups_are_forgotten() {
    let mut data = Fold::new();
    data.apply(vec![
        offset("g", "t", 0, 1),
        Record::OffsetTombstone { group_id: Arc::from("g"), partition: TopicPartition::new("t", 0) },
    ]);
    assert!(data.groups.is_empty(), "{data:?}");
    data.push(Record::Group(Box::new(GroupMetadataRecord { group_id: "g".into(), ..Default::default() })));
    data.push(Record::GroupTombstone { group_id: Arc::from("g") });
    assert!(data.groups.is_empty(), "{data:?}");
}

#[test]
fn runs_of_groups_apply_in_order() {
    let record = |id: &str, generation| {
        Record::Group(Box::new(GroupMetadataRecord {
            group_id: id.into(),
            generation_id: generation,
            ..Default::default()
        }))
    };
    let mut data = Fold::new();
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
    assert_eq!(data.offset("a", "t", 0).map(|o| o.offset), Some(3));
}

#[test]
fn a_batch_applies_in_order() {
    let mut data = Fold::new();
    data.apply(vec![offset("g", "t", 0, 1), offset("g", "t", 0, 2), offset("g", "u", 0, 3)]);
    assert_eq!(data.offset("g", "t", 0).map(|o| o.offset), Some(2));
    assert_eq!(data.offset_count(), 2);
}
