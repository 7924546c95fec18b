//! The [`MetadataStore`] checks: the record contract, partition by partition,
//! each against the [`Model`] of what the contract requires.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use group_types::{GroupOffsets, OffsetAndMetadata};

use super::consumer_samples::{every_kind, every_tombstone};
use super::{
    Completions, Model, Outcome, awkward_values, big_record, expect_ok, full, group_tombstone, offset,
    offset_tombstone, om, record, replaced_record, some_partitions, tp,
};
use crate::{
    CoordinatorPartition, GroupMetadataRecord, LoadedPartition, MemberMetadataRecord, MetadataStore,
    OwnerEpoch, Record,
};

const E0: OwnerEpoch = OwnerEpoch(0);

fn id(group: &str) -> Arc<str> {
    Arc::from(group)
}

#[track_caller]
fn load(store: &dyn MetadataStore, p: CoordinatorPartition) -> LoadedPartition {
    expect_ok(store.load(p), "load")
}

/// One offset as `load(p)` reports it.
#[track_caller]
fn loaded_offset(
    store: &dyn MetadataStore,
    p: CoordinatorPartition,
    group: &str,
    topic: &str,
    partition: i32,
) -> Option<OffsetAndMetadata> {
    let loaded = load(store, p);
    loaded.groups.offsets.iter().find(|g| g.group_id == group).and_then(|g| g.get(topic, partition).cloned())
}

/// One group record as `load(p)` reports it.
#[track_caller]
fn loaded_record(
    store: &dyn MetadataStore,
    p: CoordinatorPartition,
    group: &str,
) -> Option<GroupMetadataRecord> {
    load(store, p).groups.groups.into_iter().find(|r| r.group_id == group)
}

pub(super) fn fresh_store_is_empty(store: &dyn MetadataStore) {
    let mut model = Model::default();
    model.check_all(store, "on a fresh store");
    for p in 0..store.partition_count() {
        let p = CoordinatorPartition(p);
        assert_eq!(expect_ok(store.owner_epoch(p), "owner_epoch"), E0, "owner_epoch({p}) on a fresh store");
    }
    assert_eq!(
        expect_ok(store.fetch_group_offset("g", "t", 0), "fetch_group_offset"),
        None,
        "on a fresh store"
    );
    assert_eq!(
        expect_ok(store.fetch_group_offsets("g"), "fetch_group_offsets"),
        GroupOffsets::new("g"),
        "fetch_group_offsets on a fresh store (group_id set, no offsets)"
    );
    expect_ok(store.delete_group_offsets("g"), "delete_group_offsets of an unknown group");
    // An empty append is a valid append, and creates nothing.
    model.append(store, CoordinatorPartition(0), E0, Vec::new(), "an empty append");
    model.check_all(store, "after an empty append");
}

pub(super) fn append_and_load_round_trip_exactly(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let partitions = some_partitions(store);
    let (first, last) = (partitions[0], partitions[partitions.len() - 1]);
    let single = id("single");
    for (tp, o) in awkward_values() {
        model.append(store, first, E0, vec![offset(&single, tp, o)], "an append of one awkward offset");
    }
    let batch = id("batch");
    let all = awkward_values().into_iter().map(|(tp, o)| offset(&batch, tp, o)).collect();
    model.append(store, first, E0, all, "an append of every awkward offset at once");

    let long = "x".repeat(1000);
    let odd = ["", "\0", "a\0b", "🦀 ünïcödé 日本語", "\u{10FFFF}\u{FEFF}", long.as_str()];
    let mut records = Vec::new();
    for (i, group) in odd.iter().enumerate() {
        records.push(Record::Group(Box::new(GroupMetadataRecord {
            protocol_type: Some("".into()),
            protocol_name: Some("\0".into()),
            leader_id: Some((*group).into()),
            members: vec![
                MemberMetadataRecord {
                    member_id: format!("{group}\0member").into(),
                    group_instance_id: Some("".into()),
                    subscription: (0..=255).collect(),
                    assignment: vec![0; 3].into(),
                    ..MemberMetadataRecord::default()
                },
                MemberMetadataRecord::default(),
            ],
            ..record(group, i as i32)
        })));
        records.push(offset(&id(group), tp(group, i as i32), full(i as i64, None, group, 1, None)));
    }
    model.append(store, last, E0, records, "an append of records of awkward groups");
    let big = big_record();
    model.append(
        store,
        last,
        E0,
        vec![Record::Group(Box::new(big))],
        "an append of a record with 100 members",
    );
    model.check_all(store, "after appending awkward values (they must round-trip byte for byte)");
}

pub(super) fn later_records_replace_earlier(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let p = CoordinatorPartition(0);
    let g = id("g");
    let first = full(100, Some(3), "first", 10, Some(99));
    let second = full(5, None, "", 20, None);
    model.append(store, p, E0, vec![offset(&g, tp("t", 0), first)], "append");
    model.append(store, p, E0, vec![offset(&g, tp("t", 0), second.clone())], "append over it");
    // Offsets may move backwards (a reset): the last record wins, every field of it.
    assert_eq!(
        loaded_offset(store, p, "g", "t", 0),
        Some(second),
        "after a lower offset replaced a higher one"
    );

    // Within one append, too, a later record of a key wins.
    let batch = vec![
        offset(&g, tp("t", 1), om(1, 1)),
        offset(&g, tp("t", 1), om(2, 1)),
        offset(&g, tp("t", 0), om(7, 1)),
    ];
    model.append(store, p, E0, batch, "an append naming a partition twice");
    assert_eq!(loaded_offset(store, p, "g", "t", 1), Some(om(2, 1)), "when one append named it twice");
    assert_eq!(loaded_offset(store, p, "g", "t", 0), Some(om(7, 1)), "after a batch replaced it");

    model.append(store, p, E0, vec![Record::Group(Box::new(record("g", 1)))], "append a group record");
    let replaced = replaced_record();
    model.append(store, p, E0, vec![Record::Group(Box::new(replaced.clone()))], "replace the group record");
    assert_eq!(loaded_record(store, p, "g"), Some(replaced), "the group record after replacing it");
    let batch = vec![Record::Group(Box::new(record("g", 3))), Record::Group(Box::new(record("g", 4)))];
    model.append(store, p, E0, batch, "an append of two records of one group");
    assert_eq!(loaded_record(store, p, "g"), Some(record("g", 4)), "when one append held two records of it");
    model.check_all(store, "after records replaced earlier ones");
}

pub(super) fn tombstones_remove(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let p = CoordinatorPartition(0);
    let (g, other) = (id("g"), id("other"));
    let setup = vec![
        offset(&g, tp("t", 0), om(1, 1)),
        offset(&g, tp("t", 1), om(2, 1)),
        offset(&g, tp("u", 0), om(3, 1)),
        offset(&other, tp("t", 0), om(4, 1)),
        Record::Group(Box::new(record("g", 1))),
    ];
    model.append(store, p, E0, setup, "append");
    model.append(store, p, E0, vec![offset_tombstone(&g, tp("t", 0))], "append an offset tombstone");
    assert_eq!(loaded_offset(store, p, "g", "t", 0), None, "an offset after its tombstone");
    assert_eq!(
        loaded_offset(store, p, "other", "t", 0),
        Some(om(4, 1)),
        "another group's offset of the partition"
    );

    let absent = vec![
        offset_tombstone(&g, tp("t", 99)),
        offset_tombstone(&id("nobody"), tp("t", 0)),
        group_tombstone("nobody"),
    ];
    model.append(store, p, E0, absent, "tombstones of things that do not exist");
    model.check(store, p, "after tombstones of things that do not exist (they change nothing)");

    let rest = vec![offset_tombstone(&g, tp("t", 1)), offset_tombstone(&g, tp("u", 0))];
    model.append(store, p, E0, rest, "tombstones of the group's remaining offsets");
    let loaded = load(store, p);
    assert!(
        !loaded.groups.offsets.iter().any(|o| o.group_id == "g"),
        "a group whose offsets were all removed must not be listed among the offsets: {:?}",
        loaded.groups.offsets
    );
    model.append(store, p, E0, vec![group_tombstone("g")], "a group tombstone");
    assert_eq!(loaded_record(store, p, "g"), None, "a group record after its tombstone");

    // Within one append the order decides.
    let h = id("h");
    let batch = vec![
        offset(&h, tp("t", 5), om(1, 1)),
        offset_tombstone(&h, tp("t", 5)),
        offset_tombstone(&h, tp("t", 6)),
        offset(&h, tp("t", 6), om(2, 1)),
        Record::Group(Box::new(record("h", 1))),
        group_tombstone("h"),
        group_tombstone("i"),
        Record::Group(Box::new(record("i", 1))),
    ];
    model.append(store, p, E0, batch, "an append of records and tombstones of the same keys");
    assert_eq!(loaded_offset(store, p, "h", "t", 5), None, "an offset stored then removed in one append");
    assert_eq!(
        loaded_offset(store, p, "h", "t", 6),
        Some(om(2, 1)),
        "an offset removed then stored in one append"
    );
    assert_eq!(loaded_record(store, p, "h"), None, "a record stored then removed in one append");
    assert_eq!(
        loaded_record(store, p, "i"),
        Some(record("i", 1)),
        "a record removed then stored in one append"
    );
    model.check_all(store, "after tombstones");
}

pub(super) fn group_records_and_offsets_are_independent(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let p = CoordinatorPartition(0);
    let g = id("g");
    let setup = vec![
        offset(&g, tp("t", 0), om(1, 1)),
        offset(&g, tp("t", 1), om(2, 1)),
        Record::Group(Box::new(record("g", 1))),
    ];
    model.append(store, p, E0, setup, "append");
    model.append(store, p, E0, vec![group_tombstone("g")], "a group tombstone");
    assert_eq!(
        loaded_offset(store, p, "g", "t", 0),
        Some(om(1, 1)),
        "an offset after its group's tombstone (offsets stay)"
    );
    model.append(store, p, E0, vec![Record::Group(Box::new(record("g", 2)))], "a group record");
    let tombstones = vec![offset_tombstone(&g, tp("t", 0)), offset_tombstone(&g, tp("t", 1))];
    model.append(store, p, E0, tombstones, "tombstones of every offset of the group");
    assert_eq!(
        loaded_record(store, p, "g"),
        Some(record("g", 2)),
        "the group record after every offset of the group was removed (the record stays)"
    );
    model.check_all(store, "after removing records and offsets independently");
}

pub(super) fn keys_that_prefix_each_other_stay_apart(store: &dyn MetadataStore) {
    // Engines that concatenate partition, group, topic and partition into one
    // key must keep these apart (length prefixes or escaping, not bare
    // separators): "a" + "bt" and "ab" + "t", "" + "at" and "a" + "t", or
    // "a\0" + "bt" and "a\0b" + "t" concatenate alike.
    let mut model = Model::default();
    let p = CoordinatorPartition(0);
    let groups = ["", "a", "ab", "a\0", "a\0b", "a/b", "a-b", "a b", "🦀"];
    let topics = ["t", "t1", "t\0", "t\u{1}", "t-1", "x", "bt", "at", "\0t", "b\0t"];
    let mut n = 0;
    for group in groups {
        let g = id(group);
        let mut batch = vec![Record::Group(Box::new(record(group, 1)))];
        for topic in topics {
            for partition in [0, 1, 256, i32::MAX] {
                n += 1;
                batch.push(offset(&g, tp(topic, partition), om(n, n)));
            }
        }
        model.append(store, p, E0, batch, "append");
    }
    model.check(store, p, "with groups and topics that prefix each other");
    let a = id("a");
    let tombstones = topics
        .iter()
        .flat_map(|topic| [0, 1, 256, i32::MAX].map(|partition| offset_tombstone(&a, tp(topic, partition))))
        .chain([group_tombstone("a")])
        .collect();
    model.append(store, p, E0, tombstones, "remove everything of group \"a\"");
    model.check(store, p, "after removing everything of group \"a\" (its prefixes and extensions stay)");
    let ab = id("ab");
    model.append(store, p, E0, vec![offset_tombstone(&ab, tp("t", 0))], "remove t-0 of group \"ab\"");
    model.check(store, p, "after removing t-0 of group \"ab\" (t1-0, t\\0-0 stay)");
    // Partition numbers too: partition 1 with group "1g" against partition 11 with group "g".
    if store.partition_count() > 11 {
        let (p1, p11) = (CoordinatorPartition(1), CoordinatorPartition(11));
        model.append(store, p1, E0, vec![offset(&id("1g"), tp("t", 0), om(1, 1))], "append");
        model.append(store, p11, E0, vec![offset(&id("g"), tp("t", 0), om(2, 1))], "append");
        model.check_all(store, "with partition numbers and group ids that prefix each other");
    }
}

pub(super) fn a_refused_append_applies_nothing(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let partitions = some_partitions(store);
    let p = partitions[0];
    let (g, h) = (id("g"), id("h"));
    let mut setup: Vec<_> = (0..4).map(|i| offset(&g, tp("t", i), om(i64::from(i), 1))).collect();
    setup.extend([
        Record::Group(Box::new(record("g", 1))),
        offset(&h, tp("t", 0), om(5, 1)),
        Record::Group(Box::new(record("h", 1))),
    ]);
    setup.extend(every_kind("g", "m", 1));
    setup.extend(every_kind("h", "m", 1));
    model.append(store, p, OwnerEpoch(5), setup, "append at epoch 5");
    for other in &partitions[1..] {
        model.append(store, *other, OwnerEpoch(2), vec![offset(&g, tp("t", 0), om(9, 9))], "append");
    }
    let fresh = id("fresh");
    let mut refused = vec![
        offset(&g, tp("t", 0), om(999, 2)),
        offset_tombstone(&g, tp("t", 1)),
        Record::Group(Box::new(record("g", 2))),
        group_tombstone("h"),
        offset_tombstone(&h, tp("t", 0)),
        Record::Group(Box::new(record("fresh", 1))),
    ];
    refused.extend((0..200).map(|i| offset(&fresh, tp("many", i), om(i64::from(i), 2))));
    refused.extend(every_kind("g", "m", 2));
    refused.extend(every_tombstone("h", "m"));
    refused.extend(every_kind("fresh", "m", 2));
    // A batch the engine must refuse as a whole: its epoch is below the accepted one.
    model.append(store, p, OwnerEpoch(4), refused.clone(), "a fenced append");
    model.check_all(store, "after a fenced append (nothing of it may be visible)");
    model.append(store, p, E0, refused, "a fenced append at epoch 0");
    model.check_all(store, "after a fenced append at epoch 0 (nothing of it may be visible)");
    model.append(
        store,
        p,
        OwnerEpoch(5),
        vec![offset(&g, tp("t", 0), om(10, 3))],
        "an append at the accepted epoch",
    );
    model.check_all(store, "after an append at the accepted epoch");
}

pub(super) fn appends_of_a_partition_apply_in_call_order(store: &dyn MetadataStore) {
    const APPENDS: usize = 64;
    let mut model = Model::default();
    let partitions = some_partitions(store);
    let (p, other) = (partitions[0], partitions[partitions.len() - 1]);
    let g = id("g");
    let completions = Completions::new();
    let mut expected = Vec::new();
    let mut others = 0;
    for i in 0..APPENDS {
        // The epoch rises at append 32; append 40 is stale after that, and only
        // fails if the appends before it were applied first.
        let epoch = OwnerEpoch(if i < 32 || i == 40 { 1 } else { 2 });
        let mut records = vec![offset(&g, tp("seq", i as i32), om(i as i64, 1))];
        if i % 5 == 0 {
            records.push(offset_tombstone(&g, tp("t", 0)));
        } else {
            records.push(offset(&g, tp("t", 0), om(i as i64, 1)));
        }
        if i % 7 == 0 {
            records.push(Record::Group(Box::new(record("g", i as i32))));
        }
        expected.push(model.partition(p).apply(epoch, &records));
        store.append(p, epoch, records, completions.completion(i));
        if other != p && i % 4 == 0 {
            let records = vec![offset(&g, tp("other", i as i32), om(i as i64, 1))];
            model.partition(other).apply(OwnerEpoch(0), &records);
            store.append(other, OwnerEpoch(0), records, completions.completion(APPENDS + i));
            others += 1;
        }
    }
    let done = completions.wait(APPENDS + others, "appends issued without waiting");
    let order: Vec<usize> = done.iter().map(|(i, _)| *i).filter(|i| *i < APPENDS).collect();
    assert_eq!(
        order,
        (0..APPENDS).collect::<Vec<_>>(),
        "appends of one partition must complete in call order"
    );
    for (i, result) in &done {
        if *i < APPENDS {
            let epoch = OwnerEpoch(if *i < 32 || *i == 40 { 1 } else { 2 });
            expected[*i].check(p, epoch, result, &format!("append {i} of {APPENDS} issued without waiting"));
        } else {
            Outcome::Ok.check(other, E0, result, "an append to another partition");
        }
    }
    model.check_all(
        store,
        "after appends issued without waiting (applied in call order: the last write wins)",
    );
}

pub(super) fn loads_are_scoped_to_their_partition(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let partitions = some_partitions(store);
    let (a, b) = (partitions[0], partitions[partitions.len() - 1]);
    if a == b {
        // A single-partition store has nothing to keep apart.
        model.append(store, a, E0, vec![offset(&id("g"), tp("t", 0), om(1, 1))], "append");
        model.check_all(store, "with one partition");
        return;
    }
    let (shared, only_a, only_b) = (id("shared"), id("only-a"), id("only-b"));
    let mut to_a = vec![
        offset(&shared, tp("t", 0), om(1, 1)),
        Record::Group(Box::new(record("shared", 1))),
        offset(&only_a, tp("t", 0), om(2, 1)),
    ];
    to_a.extend(every_kind("shared", "m", 1));
    model.append(store, a, E0, to_a, "append to the first partition");
    let mut to_b = vec![
        offset(&shared, tp("t", 0), om(10, 1)),
        offset(&shared, tp("t", 1), om(11, 1)),
        Record::Group(Box::new(record("shared", 2))),
        offset(&only_b, tp("t", 0), om(12, 1)),
        Record::Group(Box::new(record("only-b", 1))),
    ];
    to_b.extend(every_kind("shared", "m", 2));
    to_b.extend(every_kind("only-b", "m", 2));
    model.append(store, b, E0, to_b, "append to the last partition");
    let loaded = load(store, a);
    let ids: Vec<&str> = loaded.groups.groups.iter().map(|r| r.group_id.as_str()).collect();
    let with_offsets: Vec<&str> = loaded.groups.offsets.iter().map(|o| o.group_id.as_str()).collect();
    let consumer: Vec<&str> = loaded.groups.consumer.iter().map(|r| &**r.group_id()).collect();
    assert!(
        !ids.contains(&"only-b") && !with_offsets.contains(&"only-b") && !consumer.contains(&"only-b"),
        "load({a}) lists a group appended only to {b}: records of {ids:?}, offsets of {with_offsets:?}, \
         consumer records of {consumer:?}"
    );
    model.check_all(store, "with the same group in two partitions");
    let mut tombstones = vec![offset_tombstone(&shared, tp("t", 0)), group_tombstone("shared")];
    tombstones.extend(every_tombstone("shared", "m"));
    model.append(store, b, OwnerEpoch(4), tombstones, "tombstones in the last partition, at a higher epoch");
    assert_eq!(
        loaded_offset(store, a, "shared", "t", 0),
        Some(om(1, 1)),
        "a tombstone in another partition removed it"
    );
    model.check_all(store, "after tombstones and an epoch raise in another partition");
}

pub(super) fn epochs_fence_and_rise(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let partitions = some_partitions(store);
    let (p, q) = (partitions[0], partitions[partitions.len() - 1]);
    let g = id("g");
    let epoch_of = |p| expect_ok(store.owner_epoch(p), "owner_epoch");
    model.append(store, p, E0, vec![offset(&g, tp("t", 0), om(0, 1))], "an append at epoch 0");
    model.append(store, p, OwnerEpoch(3), vec![offset(&g, tp("t", 1), om(3, 1))], "an append at epoch 3");
    assert_eq!(epoch_of(p), OwnerEpoch(3), "owner_epoch after an append at epoch 3");
    assert_eq!(load(store, p).epoch, OwnerEpoch(3), "load's epoch after an append at epoch 3");
    model.append(store, p, OwnerEpoch(2), vec![offset(&g, tp("t", 2), om(2, 1))], "an append at epoch 2");
    assert_eq!(epoch_of(p), OwnerEpoch(3), "owner_epoch after a fenced append");
    model.append(
        store,
        p,
        OwnerEpoch(3),
        vec![offset(&g, tp("t", 0), om(33, 1))],
        "a second append at epoch 3",
    );
    model.append(store, p, OwnerEpoch(10), vec![], "an empty append at epoch 10");
    model.append(store, p, OwnerEpoch(9), vec![], "an empty append at epoch 9");
    model.append(
        store,
        p,
        OwnerEpoch(u64::MAX),
        vec![offset(&g, tp("t", 0), om(1, 1))],
        "an append at the largest epoch",
    );
    model.append(
        store,
        p,
        OwnerEpoch(u64::MAX - 1),
        vec![offset(&g, tp("t", 0), om(2, 1))],
        "an append just below it",
    );
    assert_eq!(epoch_of(p), OwnerEpoch(u64::MAX), "owner_epoch after an append at the largest epoch");
    if q != p {
        assert_eq!(epoch_of(q), E0, "another partition's epoch (epochs are per partition)");
        model.append(
            store,
            q,
            OwnerEpoch(1),
            vec![offset(&g, tp("t", 0), om(1, 1))],
            "an append to another partition at epoch 1",
        );
    }
    model.check_all(store, "after epochs rose and stale appends were fenced");
}

pub(super) fn concurrent_appends_lose_nothing(store: &dyn MetadataStore) {
    const WRITERS: u32 = 4;
    const COMMITS: i64 = 20;
    let count = store.partition_count();
    let partitions_of =
        |w: u32| [CoordinatorPartition(w % count), CoordinatorPartition((w + WRITERS) % count)];
    let group = |w: u32, p: CoordinatorPartition, g: u32| id(&format!("w{w}-{}-g{g}", p.0));
    let batch =
        |group: &Arc<str>, n: i64| (0..3).map(|i| offset(group, tp("t", i), om(n, n))).collect::<Vec<_>>();
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                scope.spawn(move || {
                    let completions = Completions::new();
                    for n in 1..=COMMITS {
                        for p in partitions_of(w) {
                            let (g0, g1) = (group(w, p, 0), group(w, p, 1));
                            if n % 2 == 0 {
                                let mut records = batch(&g0, n);
                                records.extend(batch(&g1, n));
                                expect_ok(
                                    store.append_blocking(p, E0, records),
                                    "concurrent append_blocking",
                                );
                            } else {
                                store.append(p, E0, batch(&g0, n), completions.completion(0));
                                store.append(p, E0, batch(&g1, n), completions.completion(1));
                                for (_, result) in completions.wait(2, "concurrent appends") {
                                    expect_ok(result, "concurrent append");
                                }
                            }
                        }
                    }
                })
            })
            .collect();
        // A reader watching while the writers run: every append is seen whole,
        // and offsets never go backwards.
        let reader = scope.spawn(|| {
            let mut seen: BTreeMap<String, i64> = BTreeMap::new();
            loop {
                let finished = done.load(Ordering::Acquire);
                for w in 0..WRITERS {
                    for p in partitions_of(w) {
                        for offsets in expect_ok(store.load(p), "concurrent load").groups.offsets {
                            let values: Vec<i64> = offsets
                                .offsets
                                .values()
                                .flat_map(|ps| ps.values().map(|o| o.offset))
                                .collect();
                            assert!(
                                values.len() == 3 && values.windows(2).all(|v| v[0] == v[1]),
                                "{} shows part of an append: {values:?}",
                                offsets.group_id
                            );
                            let last = seen.entry(offsets.group_id.clone()).or_insert(0);
                            assert!(
                                values[0] >= *last,
                                "{} went backwards: {last}, then {}",
                                offsets.group_id,
                                values[0]
                            );
                            *last = values[0];
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
    let mut model = Model::default();
    for w in 0..WRITERS {
        for p in partitions_of(w) {
            for g in 0..2 {
                model.partition(p).apply(E0, &batch(&group(w, p, g), COMMITS));
            }
        }
    }
    model.check_all(store, "after concurrent writers finished (every group at its last commit)");
}

pub(super) fn seed_methods_agree_with_records(store: &dyn MetadataStore) {
    let count = store.partition_count();
    for group in ["", "group", "🦀", "a\0b", "consumer-group-17"] {
        assert_eq!(
            store.partition_of(group),
            CoordinatorPartition::of(group, count),
            "partition_of({group:?})"
        );
    }
    let mut model = Model::default();
    let g = id("seed");
    let p = store.partition_of(&g);
    let first = full(1, Some(1), "seed\0meta", 1, None);
    expect_ok(store.store_group_offset(&g, "t", 0, &first), "store_group_offset");
    model.partition(p).apply(E0, &[offset(&g, tp("t", 0), first.clone())]);
    model.check_all(store, "after store_group_offset (one offset record in the group's partition)");
    assert_eq!(
        expect_ok(store.fetch_group_offset(&g, "t", 0), "fetch_group_offset"),
        Some(first),
        "fetch_group_offset"
    );

    let records = vec![
        offset(&g, tp("t", 1), om(2, 2)),
        offset(&g, tp("u", 0), om(3, 3)),
        Record::Group(Box::new(record("seed", 1))),
    ];
    model.append(store, p, OwnerEpoch(7), records, "an append to the group's partition at epoch 7");
    let expected = model.partition(p).loaded().groups.offsets.into_iter().find(|o| o.group_id == "seed");
    assert_eq!(
        Some(expect_ok(store.fetch_group_offsets(&g), "fetch_group_offsets")),
        expected,
        "fetch_group_offsets after appending offset records"
    );
    assert_eq!(
        expect_ok(store.fetch_group_offset(&g, "u", 0), "fetch_group_offset"),
        Some(om(3, 3)),
        "an appended offset"
    );
    assert_eq!(
        expect_ok(store.fetch_group_offset(&g, "u", 1), "fetch_group_offset"),
        None,
        "an offset never stored"
    );

    // The seed's writes go at the partition's current epoch, so they are not fenced.
    expect_ok(store.store_group_offset(&g, "t", 0, &om(4, 4)), "store_group_offset after the epoch rose");
    model.partition(p).apply(OwnerEpoch(7), &[offset(&g, tp("t", 0), om(4, 4))]);
    assert_eq!(
        expect_ok(store.owner_epoch(p), "owner_epoch"),
        OwnerEpoch(7),
        "a seed write must not change the epoch"
    );

    expect_ok(store.delete_group_offsets(&g), "delete_group_offsets");
    let tombstones: Vec<_> =
        [tp("t", 0), tp("t", 1), tp("u", 0)].into_iter().map(|tp| offset_tombstone(&g, tp)).collect();
    model.partition(p).apply(OwnerEpoch(7), &tombstones);
    assert_eq!(
        expect_ok(store.fetch_group_offsets(&g), "fetch_group_offsets"),
        GroupOffsets::new("seed"),
        "fetch_group_offsets after delete_group_offsets"
    );
    expect_ok(store.delete_group_offsets("unknown"), "delete_group_offsets of an unknown group");
    let unknown = expect_ok(store.fetch_group_offsets("unknown"), "fetch_group_offsets");
    assert_eq!(unknown, GroupOffsets::new("unknown"), "fetch_group_offsets of an unknown group");
    model.check_all(store, "after delete_group_offsets (offsets gone, the group record stays)");
}

pub(super) fn many_groups(store: &dyn MetadataStore) {
    let mut model = Model::default();
    for n in 0..300 {
        let name = format!("group-{n:03}");
        let g = id(&name);
        let p = store.partition_of(&name);
        let mut records: Vec<_> = (0..3)
            .map(|i| offset(&g, tp(&format!("topic-{}", n % 7), i), om(n * 10 + i64::from(i), n)))
            .collect();
        if n % 10 == 0 {
            records.push(Record::Group(Box::new(record(&name, n as i32))));
        }
        model.append(store, p, E0, records, "append");
    }
    model.check_all(store, "with 300 groups over the partitions");
    let all = expect_ok(store.load_all(), "load_all");
    assert_eq!(all.offsets.len(), 300, "load_all of 300 groups with offsets returned {}", all.offsets.len());
    assert_eq!(all.groups.len(), 30, "load_all of 30 group records returned {}", all.groups.len());
}

pub(super) fn load_all_is_every_partition(store: &dyn MetadataStore) {
    let mut model = Model::default();
    for (i, p) in some_partitions(store).into_iter().enumerate() {
        let (kept, gone) = (id(&format!("kept-{i}")), id(&format!("gone-{i}")));
        let records = vec![
            offset(&kept, tp("t", 0), om(1, 1)),
            Record::Group(Box::new(record(&kept, 1))),
            Record::Group(Box::new(record(&format!("record-only-{i}"), 1))),
            offset(&gone, tp("t", 0), om(1, 1)),
            Record::Group(Box::new(record(&gone, 1))),
        ];
        model.append(store, p, OwnerEpoch(i as u64), records, "append");
        let removal = vec![offset_tombstone(&gone, tp("t", 0)), group_tombstone(&gone)];
        model.append(store, p, OwnerEpoch(i as u64), removal, "remove a group entirely");
    }
    model.check_all(store, "(load_all must be every partition's load, and nothing removed)");
}

// ---------------------------------------------------------------------------
// The restart suite

pub(super) fn write_restart_fixture(store: &dyn MetadataStore) -> Model {
    let mut model = Model::default();
    let partitions = some_partitions(store);
    let (first, last) = (partitions[0], partitions[partitions.len() - 1]);
    let e3 = OwnerEpoch(3);
    let awkward = id("awkward");
    let values = awkward_values().into_iter().map(|(tp, o)| offset(&awkward, tp, o)).collect();
    model.append(store, first, e3, values, "append awkward values");
    let kept = id("kept");
    model.append(store, first, e3, vec![offset(&kept, tp("t", 0), om(1, 1))], "append");
    model.append(
        store,
        first,
        e3,
        vec![offset(&kept, tp("t", 0), om(5, 5)), offset(&kept, tp("t", 1), om(6, 6))],
        "append over it",
    );
    model.append(store, first, e3, vec![offset(&kept, tp("t", 2), om(7, 7))], "append");
    model.append(store, first, e3, vec![offset_tombstone(&kept, tp("t", 2))], "an offset tombstone");
    let deleted = id("deleted");
    model.append(
        store,
        first,
        e3,
        vec![offset(&deleted, tp("t", 0), om(1, 1)), Record::Group(Box::new(record("deleted", 1)))],
        "append",
    );
    model.append(
        store,
        first,
        e3,
        vec![offset_tombstone(&deleted, tp("t", 0)), group_tombstone("deleted")],
        "remove a group",
    );
    model.append(store, first, e3, vec![Record::Group(Box::new(record("kept", 3)))], "a group record");
    let consumers = super::consumer_samples::awkward_records().into_iter().map(Record::Modern).collect();
    model.append(store, first, e3, consumers, "awkward consumer records");
    model.append(store, first, e3, every_kind("kept", "m1", 1), "consumer records");
    model.append(store, first, e3, every_kind("kept", "m1", 2), "consumer records over them");
    model.append(store, first, e3, every_kind("kept", "m2", 1), "consumer records");
    model.append(store, first, e3, every_tombstone("kept", "m2"), "consumer tombstones");
    model.append(store, first, e3, vec![Record::Group(Box::new(record("replaced", 1)))], "a group record");
    model.append(store, first, e3, vec![Record::Group(Box::new(record("replaced", 2)))], "replace it");
    if last != first {
        let raised = id("raised");
        model.append(
            store,
            last,
            OwnerEpoch(7),
            vec![offset(&raised, tp("t", 0), om(7, 7)), Record::Group(Box::new(record("raised", 7)))],
            "append at epoch 7",
        );
        model.append(
            store,
            last,
            OwnerEpoch(5),
            vec![offset(&raised, tp("t", 0), om(5, 5))],
            "a fenced append",
        );
    }
    for p in &partitions[1..partitions.len().saturating_sub(1)] {
        model.append(store, *p, E0, vec![offset(&id("middle"), tp("t", 0), om(1, 1))], "append at epoch 0");
    }
    let seeded = "seeded";
    let p = store.partition_of(seeded);
    let epoch = expect_ok(store.owner_epoch(p), "owner_epoch");
    expect_ok(store.store_group_offset(seeded, "t", 0, &om(8, 8)), "store_group_offset");
    model.partition(p).apply(epoch, &[offset(&id(seeded), tp("t", 0), om(8, 8))]);
    model
}

pub(super) fn check_after_reopening(store: &dyn MetadataStore, mut model: Model) {
    model.check_all(store, "after reopening");
    for p in 0..store.partition_count() {
        let p = CoordinatorPartition(p);
        let expected = model.partition(p).loaded().epoch;
        assert_eq!(
            expect_ok(store.owner_epoch(p), "owner_epoch after reopening"),
            expected,
            "owner_epoch({p}) after reopening"
        );
    }
    assert_eq!(
        expect_ok(store.fetch_group_offset("seeded", "t", 0), "fetch_group_offset after reopening"),
        Some(om(8, 8)),
        "fetch_group_offset after reopening"
    );
    let partitions = some_partitions(store);
    let last = partitions[partitions.len() - 1];
    let current = model.partition(last).loaded().epoch;
    if current.0 > 0 {
        let stale = OwnerEpoch(current.0 - 1);
        model.append(
            store,
            last,
            stale,
            vec![offset(&id("raised"), tp("t", 0), om(6, 6))],
            "a stale append after reopening",
        );
    }
    model.append(
        store,
        last,
        current,
        vec![offset(&id("raised"), tp("t", 1), om(9, 9))],
        "an append at the epoch after reopening",
    );
    model.check_all(store, "after appending after reopening");
    expect_ok(
        store.store_group_offset("after-restart", "t", 0, &om(1, 1)),
        "store_group_offset after reopening",
    );
    let fetched = expect_ok(store.fetch_group_offset("after-restart", "t", 0), "fetch after reopening");
    assert_eq!(fetched, Some(om(1, 1)), "a write after reopening must be readable");
}
