//! Checks of pending transactional offsets ([`Record::TxnOffset`]): keyed by
//! group, producer and partition, the last record of a key wins, a tombstone
//! removes only its key, and no other kind of key is touched.

use std::sync::Arc;

use super::{
    Model, awkward_values, expect_ok, group_tombstone, offset, offset_tombstone, om, record, some_partitions,
    tp,
};
use crate::{MetadataStore, OwnerEpoch, Record, TxnOffsetRecord};

const E0: OwnerEpoch = OwnerEpoch(0);

/// A pending offset of `group`, `producer` and `tp` (shared with the restart fixture).
pub(super) fn txn(group: &str, producer: i64, tp: group_types::TopicPartition, sequence: u64) -> Record {
    let offset = om(i64::try_from(sequence).unwrap_or(i64::MAX), 1_000 + producer);
    Record::TxnOffset(Box::new(TxnOffsetRecord {
        group_id: Arc::from(group),
        producer_id: producer,
        partition: tp,
        offset,
        sequence,
        superseded: sequence % 2 == 1,
    }))
}

pub(super) fn txn_tombstone(group: &str, producer: i64, tp: group_types::TopicPartition) -> Record {
    Record::TxnOffsetTombstone { group_id: Arc::from(group), producer_id: producer, partition: tp }
}

pub(super) fn txn_offsets_round_trip_replace_and_remove(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let partitions = some_partitions(store);
    let (first, last) = (partitions[0], partitions[partitions.len() - 1]);
    // Every awkward value, pending for two producers (one with the extreme ids).
    let awkward: Vec<Record> = awkward_values()
        .into_iter()
        .enumerate()
        .flat_map(|(i, (tp, offset))| {
            [i64::MIN, 0, i64::MAX].map(|producer| {
                Record::TxnOffset(Box::new(TxnOffsetRecord {
                    group_id: Arc::from("awkward"),
                    producer_id: producer,
                    partition: tp.clone(),
                    offset: offset.clone(),
                    sequence: if i % 2 == 0 { u64::MAX - i as u64 } else { i as u64 },
                    superseded: i % 3 == 0,
                }))
            })
        })
        .collect();
    model.append(store, first, E0, awkward, "pending offsets of awkward values");
    model.check(store, first, "after awkward pending offsets");
    model.append(store, last, E0, vec![txn("g", 1, tp("t", 0), 1), txn("g", 1, tp("t", 1), 2)], "pending");
    model.append(store, last, E0, vec![txn("g", 1, tp("t", 0), 3)], "a later pending offset of one key");
    model.append(store, last, E0, vec![txn("g", 2, tp("t", 0), 4)], "another producer's");
    model.check(store, last, "after replacing one key");
    model.append(store, last, E0, vec![txn_tombstone("g", 1, tp("t", 0))], "a pending tombstone");
    model.append(store, last, E0, vec![txn_tombstone("g", 9, tp("t", 0))], "a tombstone of nothing");
    model.check(store, last, "after removing one key");
    // A group with only pending offsets, all removed, leaves nothing behind.
    model.append(
        store,
        last,
        E0,
        vec![txn("only", 5, tp("t", 0), 5), txn_tombstone("only", 5, tp("t", 0))],
        "pending then removed in one append",
    );
    model.check(store, last, "after a group's only pending offset is removed");
    model.check_all(store, "at the end");
}

pub(super) fn txn_offsets_stay_apart_from_other_keys(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let p = some_partitions(store)[0];
    let g = Arc::from("g");
    // Groups and topics whose names prefix each other, and the same partition as
    // a committed offset, a group record and a consumer record.
    model.append(
        store,
        p,
        E0,
        vec![
            offset(&g, tp("t", 0), om(1, 1)),
            Record::Group(Box::new(record("g", 1))),
            txn("g", 1, tp("t", 0), 2),
            txn("g", 1, tp("t0", 0), 3),
            txn("g1", 1, tp("t", 0), 4),
            txn("g", 11, tp("t", 0), 5),
            txn("g", -1, tp("t", 0), 6),
        ],
        "pending and committed offsets of the same partitions",
    );
    model.check(store, p, "after the append");
    model.append(store, p, E0, vec![offset_tombstone(&g, tp("t", 0))], "the committed offset's tombstone");
    model.check(store, p, "a committed offset's tombstone leaves the pending ones");
    model.append(store, p, E0, vec![group_tombstone("g")], "the group record's tombstone");
    model.check(store, p, "a group tombstone leaves the pending ones");
    model.append(store, p, E0, vec![txn_tombstone("g", 1, tp("t", 0))], "one pending tombstone");
    model.check(store, p, "a pending tombstone removes only its key");
    let loaded = expect_ok(store.load(p), "load");
    assert_eq!(loaded.groups.txn_offsets.len(), 4, "four pending offsets are left: {loaded:?}");
}
