//! The [`MetadataStore`] checks of KIP-848 consumer-group records: each kind
//! round-trips, the last record of a key (record type, group, sub-key) wins,
//! tombstones remove, keys never mix, and the records live beside a group's
//! offsets and classic record without touching them.

use std::sync::Arc;

use super::consumer_samples::{
    Kind, awkward_records, bare_member_metadata, consumer, every_kind, every_tombstone,
};
use super::{Model, expect_ok, group_tombstone, offset, offset_tombstone, om, record, some_partitions, tp};
use crate::{CoordinatorPartition, MetadataStore, ModernGroupRecord, OwnerEpoch, Record};

const E0: OwnerEpoch = OwnerEpoch(0);

/// The live consumer records of `group` as `load(p)` reports them, by key.
#[track_caller]
fn loaded_consumer(
    store: &dyn MetadataStore,
    p: CoordinatorPartition,
    group: &str,
) -> Vec<ModernGroupRecord> {
    let mut records: Vec<_> = expect_ok(store.load(p), "load")
        .groups
        .consumer
        .into_iter()
        .filter(|r| &**r.group_id() == group)
        .collect();
    records.sort_by_key(super::consumer_key);
    records
}

/// The one live record of a kind's key, as `load(p)` reports it.
#[track_caller]
fn loaded_one(
    store: &dyn MetadataStore,
    p: CoordinatorPartition,
    kind: Kind,
    group: &str,
    sub: &str,
) -> Option<ModernGroupRecord> {
    let key = super::consumer_key(&kind.tombstone(group, sub));
    let mut found = loaded_consumer(store, p, group).into_iter().filter(|r| super::consumer_key(r) == key);
    let first = found.next();
    assert!(found.next().is_none(), "load({p}) lists the key {key:?} twice");
    first
}

pub(super) fn modern_records_round_trip_exactly(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let partitions = some_partitions(store);
    let (first, last) = (partitions[0], partitions[partitions.len() - 1]);
    // One append per record, then all of them at once to another partition.
    for r in awkward_records() {
        model.append(store, first, E0, vec![consumer(r)], "an append of one awkward consumer record");
    }
    let all = awkward_records().into_iter().map(consumer).collect();
    model.append(store, last, E0, all, "an append of every awkward consumer record at once");
    // Every kind, with the builders' typical values, for awkward group ids.
    for (i, group) in ["", "\0", "g\0h", "🦀 ünïcödé", "x".repeat(1000).as_str()].into_iter().enumerate()
    {
        model.append(store, last, E0, every_kind(group, group, i as i32), "an append of every kind");
    }
    model.check_all(store, "after appending consumer records (they must round-trip field for field)");
}

pub(super) fn later_modern_records_replace_earlier(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let p = CoordinatorPartition(0);
    for kind in Kind::ALL {
        model.append(store, p, E0, vec![consumer(kind.record("g", "m", 1))], "append");
        model.append(store, p, E0, vec![consumer(kind.record("g", "m", 2))], "append over it");
        assert_eq!(
            loaded_one(store, p, kind, "g", "m"),
            Some(kind.record("g", "m", 2)),
            "a {kind:?} record after a later one of its key"
        );
    }
    // Every optional field goes from set to unset, lists from full to empty.
    let bare = ModernGroupRecord::MemberMetadata {
        group_id: Arc::from("g"),
        member_id: Arc::from("m"),
        value: Some(Box::new(bare_member_metadata())),
    };
    model.append(store, p, E0, vec![consumer(bare.clone())], "replace member metadata by a bare one");
    assert_eq!(loaded_one(store, p, Kind::MemberMetadata, "g", "m"), Some(bare), "bare member metadata");
    let empty_target = ModernGroupRecord::TargetAssignmentMember {
        group_id: Arc::from("g"),
        member_id: Arc::from("m"),
        value: Some(Vec::new()),
    };
    model.append(store, p, E0, vec![consumer(empty_target.clone())], "replace a target by an empty one");
    assert_eq!(
        loaded_one(store, p, Kind::TargetAssignmentMember, "g", "m"),
        Some(empty_target),
        "an empty target (not a tombstone)"
    );
    // Within one append, the later record of a key wins, for every kind.
    let mut batch = Vec::new();
    for n in [10, 11, 12] {
        batch.extend(every_kind("h", "m", n));
    }
    model.append(store, p, E0, batch, "an append naming every key three times");
    for kind in Kind::ALL {
        assert_eq!(
            loaded_one(store, p, kind, "h", "m"),
            Some(kind.record("h", "m", 12)),
            "a {kind:?} record when one append held three of its key"
        );
    }
    model.check_all(store, "after consumer records replaced earlier ones");
}

pub(super) fn consumer_tombstones_remove(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let p = CoordinatorPartition(0);
    let mut setup = every_kind("g", "m1", 1);
    setup.extend(every_kind("g", "m2", 2));
    setup.extend(every_kind("other", "m1", 3));
    model.append(store, p, E0, setup, "append");
    for kind in Kind::ALL.into_iter().filter(|k| !k.group_level()) {
        model.append(store, p, E0, vec![consumer(kind.tombstone("g", "m1"))], "a tombstone");
        assert_eq!(loaded_one(store, p, kind, "g", "m1"), None, "a {kind:?} record after its tombstone");
        assert_eq!(
            loaded_one(store, p, kind, "g", "m2"),
            Some(kind.record("g", "m2", 2)),
            "another member's {kind:?} record after a tombstone of the group's m1"
        );
    }
    model.check(store, p, "after tombstones of one member's records");

    // Tombstones of keys never written (and of a group never seen) change nothing.
    let mut absent = every_tombstone("g", "nobody");
    absent.extend(every_tombstone("nobody", "m1"));
    model.append(store, p, E0, absent, "tombstones of consumer keys that do not exist");
    model.check(store, p, "after tombstones of consumer keys that do not exist (they change nothing)");

    // A group whose every record is removed leaves nothing behind.
    let mut removal = every_tombstone("g", "m1");
    removal.extend(every_tombstone("g", "m2"));
    model.append(store, p, E0, removal, "tombstones of every key of the group");
    assert_eq!(
        loaded_consumer(store, p, "g"),
        Vec::new(),
        "the records of a group whose keys were all removed"
    );
    assert_eq!(
        loaded_consumer(store, p, "other").len(),
        Kind::ALL.len(),
        "another group's records after the group was removed"
    );

    // Within one append the order decides.
    let mut batch = every_kind("h", "m", 1);
    batch.extend(every_tombstone("h", "m"));
    batch.extend(every_tombstone("i", "m"));
    batch.extend(every_kind("i", "m", 2));
    model.append(store, p, E0, batch, "an append of consumer records and tombstones of the same keys");
    assert_eq!(loaded_consumer(store, p, "h"), Vec::new(), "records stored then removed in one append");
    assert_eq!(
        loaded_consumer(store, p, "i").len(),
        Kind::ALL.len(),
        "records removed then stored in one append"
    );
    // A key written again after its tombstone is back.
    model.append(store, p, E0, every_kind("g", "m1", 9), "records of removed keys");
    model.check_all(store, "after consumer tombstones");
}

pub(super) fn consumer_keys_stay_apart(store: &dyn MetadataStore) {
    // Engines that concatenate record type, group and sub-key into one key
    // must keep these apart: group "a" member "bm" and group "ab" member "m"
    // concatenate alike, as do "a\0" + "b" and "a" + "\0b".
    let mut model = Model::default();
    let p = CoordinatorPartition(0);
    let groups = ["", "a", "ab", "a\0", "a\0b", "\0", "a/b", "🦀"];
    let subs = ["", "b", "bm", "m", "m\0", "\0m", "b\0m", "a", "🦀"];
    let mut n = 0;
    for group in groups {
        let mut batch = Vec::new();
        for sub in subs {
            n += 1;
            batch.extend(every_kind(group, sub, n));
        }
        model.append(store, p, E0, batch, "append");
    }
    model.check(store, p, "with consumer groups, members and regexes that prefix each other");
    // The same name as a member of every kind and as a regex: a key each, not one.
    assert_eq!(
        loaded_consumer(store, p, "ab").iter().filter(|r| r.sub_key() == "m").count(),
        Kind::ALL.iter().filter(|k| !k.group_level()).count(),
        "member \"m\" of group \"ab\" has a record of each of the member kinds and a regex \"m\""
    );

    let mut removal: Vec<Record> = subs.iter().flat_map(|sub| every_tombstone("a", sub)).collect();
    removal.push(group_tombstone("a"));
    model.append(store, p, E0, removal, "remove every consumer record of group \"a\"");
    model.check(store, p, "after removing group \"a\" (its prefixes and extensions stay)");
    let member_kinds = Kind::ALL.into_iter().filter(|k| !k.group_level());
    let tombstones = member_kinds.map(|k| consumer(k.tombstone("a\0", "b"))).collect();
    model.append(store, p, E0, tombstones, "remove member \"b\" of group \"a\\0\"");
    model.check(store, p, "after removing member \"b\" of group \"a\\0\" (\"bm\", \"b\\0m\" stay)");
    let one = vec![consumer(Kind::RegularExpression.tombstone("ab", "m"))];
    model.append(store, p, E0, one, "remove regex \"m\" of group \"ab\"");
    model.check_all(store, "after removing one regex (the members named like it stay)");
}

pub(super) fn modern_records_leave_offsets_and_group_records_alone(store: &dyn MetadataStore) {
    let mut model = Model::default();
    let p = CoordinatorPartition(0);
    let g = Arc::from("g");
    let mut setup = vec![
        offset(&g, tp("t", 0), om(1, 1)),
        offset(&g, tp("t", 1), om(2, 1)),
        Record::Group(Box::new(record("g", 1))),
    ];
    setup.extend(every_kind("g", "m", 1));
    // Named like the group's members and topics, in another group.
    setup.extend(every_kind("t", "g", 2));
    model.append(store, p, E0, setup, "append offsets, a classic record and consumer records");
    model.check(store, p, "with offsets, a classic record and consumer records of one group");

    model.append(store, p, E0, every_tombstone("g", "m"), "tombstones of every consumer record");
    model.check(store, p, "after removing the consumer records (offsets and the classic record stay)");

    model.append(store, p, E0, every_kind("g", "m", 3), "consumer records again");
    let removal =
        vec![offset_tombstone(&g, tp("t", 0)), offset_tombstone(&g, tp("t", 1)), group_tombstone("g")];
    model.append(store, p, E0, removal, "tombstones of the offsets and the classic record");
    assert_eq!(
        loaded_consumer(store, p, "g").len(),
        Kind::ALL.len(),
        "the consumer records after the group's offsets and classic record were removed"
    );
    // Offsets committed while the group's consumer records change.
    let mut mixed = vec![offset(&g, tp("t", 0), om(5, 5))];
    mixed.extend(every_kind("g", "m", 4));
    mixed.push(offset(&g, tp("t", 0), om(6, 6)));
    mixed.push(Record::Group(Box::new(record("g", 2))));
    model.append(store, p, E0, mixed, "an append mixing every record kind of one group");
    let fetched = expect_ok(store.fetch_group_offset("g", "t", 0), "fetch_group_offset");
    if store.partition_of("g") == p {
        assert_eq!(fetched, Some(om(6, 6)), "fetch_group_offset beside consumer records");
    }
    model.check_all(store, "after mixing consumer records, offsets and classic records");
}
