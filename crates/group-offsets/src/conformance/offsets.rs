//! The [`OffsetStorage`] checks: offsets, batches, deletions and group records
//! through the offsets-only interface.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use group_types::{GroupOffsets, OffsetAndMetadata, PartitionMap, TopicPartition};

use super::{
    awkward_values, big_record, expect_ok, full, group_offsets, normalise, om, record, replaced_record, tp,
};
use crate::{GroupMetadataRecord, MemberMetadataRecord, OffsetStorage, StorageError, StoredGroups};

/// The operations the checks need, in the old checks' words.
pub(super) trait Target: Sync {
    fn store(&self, group: &str, tp: &TopicPartition, offset: &OffsetAndMetadata)
    -> Result<(), StorageError>;
    fn store_many(
        &self,
        group: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> Result<(), StorageError>;
    fn fetch(&self, group: &str, tp: &TopicPartition) -> Result<Option<OffsetAndMetadata>, StorageError>;
    fn fetch_all(&self, group: &str) -> Result<GroupOffsets, StorageError>;
    fn delete_all(&self, group: &str) -> Result<(), StorageError>;
    fn delete_partitions(&self, group: &str, partitions: &[TopicPartition]) -> Result<(), StorageError>;
    fn store_record(&self, record: &GroupMetadataRecord) -> Result<(), StorageError>;
    fn fetch_record(&self, group: &str) -> Result<Option<GroupMetadataRecord>, StorageError>;
    fn delete_record(&self, group: &str) -> Result<(), StorageError>;
    fn load(&self) -> Result<StoredGroups, StorageError>;
}

/// The checks' operations over an [`OffsetStorage`].
pub(super) struct Storage<'a>(pub(super) &'a dyn OffsetStorage);

impl Target for Storage<'_> {
    fn store(
        &self,
        group: &str,
        tp: &TopicPartition,
        offset: &OffsetAndMetadata,
    ) -> Result<(), StorageError> {
        self.0.store_offset(group, tp, offset.clone())
    }
    fn store_many(
        &self,
        group: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> Result<(), StorageError> {
        self.0.store_offsets(group, offsets)
    }
    fn fetch(&self, group: &str, tp: &TopicPartition) -> Result<Option<OffsetAndMetadata>, StorageError> {
        self.0.fetch_offset(group, tp)
    }
    fn fetch_all(&self, group: &str) -> Result<GroupOffsets, StorageError> {
        self.0.fetch_offsets(group)
    }
    fn delete_all(&self, group: &str) -> Result<(), StorageError> {
        self.0.delete_offsets(group)
    }
    fn delete_partitions(&self, group: &str, partitions: &[TopicPartition]) -> Result<(), StorageError> {
        self.0.delete_partitions(group, partitions)
    }
    fn store_record(&self, record: &GroupMetadataRecord) -> Result<(), StorageError> {
        self.0.store_group(record.clone())
    }
    // `OffsetStorage` reads group records only through `load`.
    fn fetch_record(&self, group: &str) -> Result<Option<GroupMetadataRecord>, StorageError> {
        Ok(self.0.load()?.groups.into_iter().find(|r| r.group_id == group))
    }
    fn delete_record(&self, group: &str) -> Result<(), StorageError> {
        self.0.delete_group(group)
    }
    fn load(&self) -> Result<StoredGroups, StorageError> {
        self.0.load()
    }
}

#[track_caller]
fn assert_stored_eq(actual: StoredGroups, expected: StoredGroups, what: &str) {
    super::assert_stored_eq(actual, expected, what);
}

#[track_caller]
fn assert_fetch(
    t: &dyn Target,
    group: &str,
    tp: &TopicPartition,
    expected: Option<&OffsetAndMetadata>,
    when: &str,
) {
    let got = expect_ok(t.fetch(group, tp), "fetch");
    assert_eq!(got.as_ref(), expected, "fetch({group:?}, {tp}) {when}");
}

#[track_caller]
fn assert_fetch_all(t: &dyn Target, group: &str, expected: &GroupOffsets, when: &str) {
    let got = expect_ok(t.fetch_all(group), "fetch all");
    assert_eq!(got.group_id, group, "fetch all of {group:?} {when}: wrong group_id in the answer");
    let strip = |g: &GroupOffsets| {
        g.offsets
            .iter()
            .filter(|(_, p)| !p.is_empty())
            .map(|(t, p)| (t.clone(), p.clone()))
            .collect::<PartitionMap<_>>()
    };
    assert_eq!(strip(&got), strip(expected), "fetch all of {group:?} {when}");
}

pub(super) fn fresh_store_is_empty(t: &dyn Target) {
    assert_fetch(t, "g", &tp("t", 0), None, "on a fresh store");
    assert_fetch_all(t, "g", &GroupOffsets::new("g"), "on a fresh store");
    assert_eq!(expect_ok(t.fetch_record("g"), "fetch record"), None, "group record on a fresh store");
    let loaded = normalise(expect_ok(t.load(), "load"));
    assert_stored_eq(loaded, StoredGroups::default(), "load of a fresh store");
    // Deleting what does not exist is not an error.
    expect_ok(t.delete_all("g"), "deleting the offsets of an unknown group");
    expect_ok(t.delete_partitions("g", &[tp("t", 0)]), "deleting partitions of an unknown group");
    expect_ok(t.delete_record("g"), "deleting the record of an unknown group");
}

pub(super) fn store_and_fetch_one(t: &dyn Target) {
    let offset = full(42, Some(7), "meta", 1_700_000_000_123, None);
    expect_ok(t.store("g", &tp("t", 3), &offset), "store");
    assert_fetch(t, "g", &tp("t", 3), Some(&offset), "after storing it");
    assert_fetch(t, "g", &tp("t", 2), None, "(another partition of the topic)");
    assert_fetch(t, "g", &tp("u", 3), None, "(the same partition of another topic)");
    assert_fetch(t, "h", &tp("t", 3), None, "(the same partition in another group)");
    assert_fetch_all(t, "g", &group_offsets("g", &[(tp("t", 3), offset)]), "after one store");
}

pub(super) fn overwrite(t: &dyn Target) {
    let first = full(100, Some(3), "first", 10, Some(99));
    let second = full(5, None, "", 20, None);
    expect_ok(t.store("g", &tp("t", 0), &first), "store");
    expect_ok(t.store("g", &tp("t", 0), &second), "store over it");
    // Offsets may move backwards (a reset): the last write wins, every field of it.
    assert_fetch(t, "g", &tp("t", 0), Some(&second), "after a lower offset overwrote a higher one");
    let third = full(7, Some(1), "third", 30, Some(1_000));
    expect_ok(t.store_many("g", &[(tp("t", 0), third.clone())]), "multi-partition store over it");
    assert_fetch(t, "g", &tp("t", 0), Some(&third), "after a multi-partition store overwrote it");
    assert_fetch_all(
        t,
        "g",
        &group_offsets("g", &[(tp("t", 0), third)]),
        "after overwrites (one entry, not three)",
    );
}

pub(super) fn fetch_all_by_topic_and_partition(t: &dyn Target) {
    let entries: Vec<_> = ["alpha", "beta", "gamma"]
        .iter()
        .enumerate()
        .flat_map(|(i, topic)| (0..4).map(move |p| (tp(topic, p * 7), om(i as i64 * 1000 + i64::from(p), 5))))
        .collect();
    for (partition, offset) in &entries {
        expect_ok(t.store("g", partition, offset), "store");
    }
    assert_fetch_all(
        t,
        "g",
        &group_offsets("g", &entries),
        "after storing 12 partitions of 3 topics one by one",
    );
    for (partition, offset) in &entries {
        assert_fetch(t, "g", partition, Some(offset), "after storing 12 partitions");
    }
}

pub(super) fn multi_partition_store(t: &dyn Target) {
    let batch: Vec<_> = (0..3)
        .flat_map(|topic| {
            (0..5).map(move |p| (tp(&format!("topic-{topic}"), p), om(i64::from(topic * 10 + p), 1)))
        })
        .collect();
    expect_ok(t.store_many("g", &batch), "multi-partition store of 15 partitions");
    assert_fetch_all(t, "g", &group_offsets("g", &batch), "after one multi-partition store");

    // A partition named twice in one call: the later entry wins, as if stored in order.
    let dup = vec![(tp("d", 0), om(1, 1)), (tp("d", 1), om(2, 1)), (tp("d", 0), om(3, 1))];
    expect_ok(t.store_many("h", &dup), "multi-partition store naming a partition twice");
    assert_fetch(t, "h", &tp("d", 0), Some(&om(3, 1)), "when a batch named it twice (the later entry wins)");

    // An empty batch is fine and creates nothing.
    expect_ok(t.store_many("empty", &[]), "an empty multi-partition store");
    assert_fetch_all(t, "empty", &GroupOffsets::new("empty"), "after an empty multi-partition store");
    let loaded = normalise(expect_ok(t.load(), "load"));
    let ids: Vec<_> = loaded.offsets.iter().map(|g| g.group_id.as_str()).collect();
    assert_eq!(ids, ["g", "h"], "load lists only groups holding offsets (an empty batch creates no group)");
}

pub(super) fn delete_group_offsets(t: &dyn Target) {
    let batch = vec![(tp("t", 0), om(1, 1)), (tp("t", 1), om(2, 1)), (tp("u", 0), om(3, 1))];
    expect_ok(t.store_many("g", &batch), "store");
    expect_ok(t.store_many("other", &batch), "store");
    expect_ok(t.delete_all("g"), "delete a group's offsets");
    assert_fetch_all(t, "g", &GroupOffsets::new("g"), "after deleting its offsets");
    assert_fetch(t, "g", &tp("t", 0), None, "after deleting the group's offsets");
    assert_fetch_all(t, "other", &group_offsets("other", &batch), "after deleting another group's offsets");
    let loaded = normalise(expect_ok(t.load(), "load"));
    assert_eq!(
        loaded.offsets,
        vec![group_offsets("other", &batch)],
        "load after deleting one group's offsets"
    );
    // The group can commit again afterwards.
    expect_ok(t.store("g", &tp("t", 0), &om(9, 2)), "store after deletion");
    assert_fetch(t, "g", &tp("t", 0), Some(&om(9, 2)), "after deleting and committing again");
}

pub(super) fn delete_partitions(t: &dyn Target) {
    let batch =
        vec![(tp("t", 0), om(1, 1)), (tp("t", 1), om(2, 1)), (tp("u", 0), om(3, 1)), (tp("u", 1), om(4, 1))];
    expect_ok(t.store_many("g", &batch), "store");
    expect_ok(t.store_many("other", &batch), "store");
    expect_ok(
        t.delete_partitions("g", &[tp("t", 0), tp("u", 1), tp("absent", 0), tp("t", 99)]),
        "delete partitions (some absent)",
    );
    let left = vec![(tp("t", 1), om(2, 1)), (tp("u", 0), om(3, 1))];
    assert_fetch_all(t, "g", &group_offsets("g", &left), "after deleting two of its partitions");
    assert_fetch(t, "g", &tp("t", 0), None, "after deleting that partition");
    assert_fetch_all(
        t,
        "other",
        &group_offsets("other", &batch),
        "after deleting another group's partitions",
    );
    expect_ok(t.delete_partitions("g", &[]), "delete no partitions");
    assert_fetch_all(t, "g", &group_offsets("g", &left), "after deleting an empty list of partitions");

    expect_ok(t.delete_partitions("g", &[tp("t", 1), tp("u", 0)]), "delete the remaining partitions");
    assert_fetch_all(t, "g", &GroupOffsets::new("g"), "after deleting every partition one list at a time");
    let loaded = normalise(expect_ok(t.load(), "load"));
    let ids: Vec<_> = loaded.offsets.iter().map(|g| g.group_id.as_str()).collect();
    assert_eq!(ids, ["other"], "load after deleting every partition of a group lists only the other group");
}

pub(super) fn keys_that_prefix_each_other_stay_apart(t: &dyn Target) {
    // Engines that concatenate group, topic and partition into one key must
    // keep these apart (length prefixes or escaping, not bare separators).
    let groups = ["", "a", "ab", "a\0", "a\0b", "a/b", "a-b", "a b", "🦀"];
    let topics = ["t", "t1", "t\0", "t\u{1}", "t-1", "x", "bt", "at", "\0t", "b\0t"];
    let mut n = 0;
    let mut expected = BTreeMap::new();
    for group in groups {
        for topic in topics {
            for partition in [0, 1, 256, i32::MAX] {
                n += 1;
                let offset = om(n, n);
                expect_ok(t.store(group, &tp(topic, partition), &offset), "store");
                expected.entry(group).or_insert_with(Vec::new).push((tp(topic, partition), offset));
            }
        }
    }
    for (group, entries) in &expected {
        assert_fetch_all(
            t,
            group,
            &group_offsets(group, entries),
            "with groups and topics that prefix each other",
        );
        for (partition, offset) in entries {
            assert_fetch(t, group, partition, Some(offset), "with groups and topics that prefix each other");
        }
    }
    expect_ok(t.delete_all("a"), "delete group \"a\"");
    assert_fetch_all(t, "a", &GroupOffsets::new("a"), "after deleting it");
    assert_fetch_all(t, "ab", &group_offsets("ab", &expected["ab"]), "after deleting group \"a\"");
    assert_fetch_all(t, "a\0", &group_offsets("a\0", &expected["a\0"]), "after deleting group \"a\"");
    assert_fetch_all(t, "", &group_offsets("", &expected[""]), "after deleting group \"a\"");
    expect_ok(t.delete_partitions("ab", &[tp("t", 0)]), "delete partition t-0 of group \"ab\"");
    assert_fetch(t, "ab", &tp("t1", 0), expected["ab"].iter().find(|e| e.0 == tp("t1", 0)).map(|e| &e.1), "");
    assert_fetch(
        t,
        "ab",
        &tp("t\0", 0),
        expected["ab"].iter().find(|e| e.0 == tp("t\0", 0)).map(|e| &e.1),
        "",
    );
}

pub(super) fn values_round_trip_exactly(t: &dyn Target) {
    let values = awkward_values();
    for (partition, offset) in &values {
        expect_ok(t.store("single", partition, offset), "store");
    }
    expect_ok(t.store_many("batch", &values), "multi-partition store");
    for group in ["single", "batch"] {
        for (partition, offset) in &values {
            assert_fetch(t, group, partition, Some(offset), "(awkward value: must round-trip byte for byte)");
        }
        assert_fetch_all(t, group, &group_offsets(group, &values), "(awkward values)");
    }
    let loaded = normalise(expect_ok(t.load(), "load"));
    assert_eq!(
        loaded.offsets,
        vec![group_offsets("batch", &values), group_offsets("single", &values)],
        "load must return awkward values byte for byte"
    );
}

pub(super) fn group_records(t: &dyn Target) {
    let first = record("g", 1);
    expect_ok(t.store_record(&first), "store a group record");
    assert_eq!(
        expect_ok(t.fetch_record("g"), "fetch record"),
        Some(first.clone()),
        "record after storing it"
    );

    let second = replaced_record();
    expect_ok(t.store_record(&second), "replace a group record");
    assert_eq!(expect_ok(t.fetch_record("g"), "fetch record"), Some(second), "record after replacing it");

    let third = GroupMetadataRecord {
        protocol_type: None,
        members: vec![MemberMetadataRecord::default()],
        ..record("g", 3)
    };
    expect_ok(t.store_record(&third), "replace a group record");
    assert_eq!(expect_ok(t.fetch_record("g"), "fetch record"), Some(third), "record with protocol_type None");

    let other = record("other", 9);
    expect_ok(t.store_record(&other), "store another group's record");
    expect_ok(t.delete_record("g"), "delete a group record");
    assert_eq!(expect_ok(t.fetch_record("g"), "fetch record"), None, "record after deleting it");
    assert_eq!(expect_ok(t.fetch_record("other"), "fetch record"), Some(other), "another group's record");
    expect_ok(t.delete_record("g"), "delete an already deleted record");

    let big = big_record();
    expect_ok(t.store_record(&big), "store a record with 100 members");
    assert_eq!(expect_ok(t.fetch_record("big"), "fetch record"), Some(big), "a record with 100 members");
}

pub(super) fn records_and_offsets_are_independent(t: &dyn Target) {
    let offsets = vec![(tp("t", 0), om(1, 1))];
    expect_ok(t.store_many("g", &offsets), "store");
    expect_ok(t.store_record(&record("g", 1)), "store record");
    expect_ok(t.delete_record("g"), "delete record");
    assert_fetch_all(t, "g", &group_offsets("g", &offsets), "after deleting the group record (offsets stay)");
    expect_ok(t.store_record(&record("g", 2)), "store record");
    expect_ok(t.delete_all("g"), "delete offsets");
    assert_eq!(
        expect_ok(t.fetch_record("g"), "fetch record"),
        Some(record("g", 2)),
        "the group record after deleting the group's offsets (the record stays)"
    );
    expect_ok(t.store_many("g", &offsets), "store");
    expect_ok(t.delete_partitions("g", &[tp("t", 0)]), "delete partitions");
    assert_eq!(
        expect_ok(t.fetch_record("g"), "fetch record"),
        Some(record("g", 2)),
        "the group record after deleting every partition (the record stays)"
    );
}

pub(super) fn load_all_returns_everything(t: &dyn Target) {
    let both = vec![(tp("t", 0), om(10, 1)), (tp("t", 1), om(11, 1))];
    let simple = vec![(tp("s", 0), om(20, 2))];
    expect_ok(t.store_record(&record("both", 4)), "store record");
    expect_ok(t.store_many("both", &both), "store");
    expect_ok(t.store_record(&record("record-only", 1)), "store record");
    expect_ok(t.store("simple", &simple[0].0, &simple[0].1), "store");
    expect_ok(t.store_record(&record("gone", 1)), "store record");
    expect_ok(t.store("gone", &tp("t", 0), &om(1, 1)), "store");
    expect_ok(t.delete_record("gone"), "delete record");
    expect_ok(t.delete_all("gone"), "delete offsets");
    let loaded = normalise(expect_ok(t.load(), "load"));
    let expected = StoredGroups {
        groups: vec![record("both", 4), record("record-only", 1)],
        offsets: vec![group_offsets("both", &both), group_offsets("simple", &simple)],
        ..StoredGroups::default()
    };
    assert_stored_eq(loaded, expected, "load");
}

pub(super) fn many_groups(t: &dyn Target) {
    let groups = 100;
    let mut expected = Vec::new();
    for g in 0..groups {
        let id = format!("group-{g:03}");
        let entries: Vec<_> =
            (0..3).map(|p| (tp(&format!("topic-{}", g % 7), p), om(g * 10 + i64::from(p), g))).collect();
        expect_ok(t.store_many(&id, &entries), "store");
        expected.push(group_offsets(&id, &entries));
    }
    for g in (0..groups).step_by(10) {
        expect_ok(t.store_record(&record(&format!("group-{g:03}"), g as i32)), "store record");
    }
    for group in &expected {
        assert_fetch_all(t, &group.group_id, group, "among 100 groups");
    }
    let loaded = normalise(expect_ok(t.load(), "load"));
    assert_eq!(
        loaded.offsets.len(),
        100,
        "load of 100 groups with offsets returned {} groups",
        loaded.offsets.len()
    );
    assert_eq!(loaded.offsets, expected, "load of 100 groups");
    assert_eq!(loaded.groups.len(), 10, "load of 10 group records");
}

pub(super) fn concurrent_groups_lose_nothing(t: &dyn Target) {
    const WRITERS: usize = 4;
    const GROUPS_PER_WRITER: usize = 2;
    const COMMITS: i64 = 20;
    let done = AtomicBool::new(false);
    let group = |w: usize, g: usize| format!("writer-{w}-group-{g}");
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                scope.spawn(move || {
                    for n in 1..=COMMITS {
                        for g in 0..GROUPS_PER_WRITER {
                            let batch: Vec<_> = (0..3).map(|p| (tp("t", p), om(n, n))).collect();
                            if n % 2 == 0 {
                                expect_ok(
                                    t.store_many(&group(w, g), &batch),
                                    "concurrent multi-partition store",
                                );
                            } else {
                                for (partition, offset) in &batch {
                                    expect_ok(t.store(&group(w, g), partition, offset), "concurrent store");
                                }
                            }
                        }
                    }
                })
            })
            .collect();
        // A reader watching while the writers run: offsets never go backwards.
        let reader = scope.spawn(|| {
            let mut seen: BTreeMap<(String, i32), i64> = BTreeMap::new();
            loop {
                let finished = done.load(Ordering::Acquire);
                for w in 0..WRITERS {
                    for g in 0..GROUPS_PER_WRITER {
                        let id = group(w, g);
                        let all = expect_ok(t.fetch_all(&id), "concurrent fetch all");
                        for (partition, offset) in all.offsets.get("t").into_iter().flatten() {
                            let last = seen.entry((id.clone(), *partition)).or_insert(0);
                            assert!(
                                offset.offset >= *last,
                                "{id} partition {partition} went backwards: {last}, then {}",
                                offset.offset
                            );
                            *last = offset.offset;
                        }
                    }
                }
                if finished {
                    break;
                }
                std::thread::yield_now();
            }
        });
        super::join_writers_then_reader(writers, &done, reader);
    });
    for w in 0..WRITERS {
        for g in 0..GROUPS_PER_WRITER {
            let entries: Vec<_> = (0..3).map(|p| (tp("t", p), om(COMMITS, COMMITS))).collect();
            assert_fetch_all(
                t,
                &group(w, g),
                &group_offsets(&group(w, g), &entries),
                "after concurrent writers finished",
            );
        }
    }
    let loaded = normalise(expect_ok(t.load(), "load"));
    assert_eq!(loaded.offsets.len(), WRITERS * GROUPS_PER_WRITER, "load after concurrent writers");
}
