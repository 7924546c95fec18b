//! The `MetadataStore` contract, checked directly on `SledMetadataStore`
//! beside the conformance suite: records round-trip through `append` and
//! `load`, names never mix, tombstones remove exactly what they name, bad
//! input writes nothing, and a model check before and after reopening.

use std::collections::BTreeMap;
use std::sync::Arc;

use group_offsets::{MetadataStore, Record, StorageError};
use group_storage_sled::{Durability, SledMetadataStore};
use proptest::prelude::*;
use rstest::rstest;

use crate::common::{
    ScratchDir, append_to_group, commit, epoch, group_record, offset, partition, record, uncommit,
};

#[test]
fn offsets_round_trip_and_replace() {
    let dir = ScratchDir::new("round-trip");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    assert_eq!(store.fetch_group_offset("g", "t", 0).unwrap(), None);
    append_to_group(&store, "g", vec![commit("g", "t", 0, offset(5))]).unwrap();
    assert_eq!(store.fetch_group_offset("g", "t", 0).unwrap(), Some(offset(5)));
    store.store_group_offset("g", "t", 0, &offset(9)).unwrap();
    assert_eq!(store.fetch_group_offset("g", "t", 0).unwrap(), Some(offset(9)));
    assert_eq!(store.fetch_group_offset("g", "t", 1).unwrap(), None);
    assert_eq!(store.fetch_group_offset("other", "t", 0).unwrap(), None);
    let loaded = store.load(store.partition_of("g")).unwrap();
    assert_eq!(loaded.groups.offsets.len(), 1);
    assert_eq!(loaded.groups.offsets[0].get("t", 0), Some(&offset(9)));
}

#[test]
fn one_append_holds_records_and_offsets_of_several_groups() {
    let dir = ScratchDir::new("mixed");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    let p = partition(7);
    let records = vec![
        Record::Group(Box::new(record("a", 1))),
        commit("a", "t", 0, offset(1)),
        commit("b", "t", 0, offset(2)),
        commit("a", "t", 0, offset(3)),
        Record::Group(Box::new(record("a", 2))),
    ];
    store.append_blocking(p, epoch(0), records).unwrap();
    let loaded = store.load(p).unwrap();
    assert_eq!(loaded.groups.groups, vec![record("a", 2)], "the later record of a key wins");
    let ids: Vec<_> = loaded.groups.offsets.iter().map(|g| (g.group_id.as_str(), g.len())).collect();
    assert_eq!(ids, [("a", 1), ("b", 1)]);
    assert_eq!(loaded.groups.offsets[0].get("t", 0), Some(&offset(3)));
    for other in [partition(6), partition(8)] {
        assert_eq!(store.load(other).unwrap(), Default::default(), "partitions never mix");
    }
}

#[rstest]
#[case::longer_group_id("g", "g1")]
#[case::group_id_prefix_of_topic("a", "ab")]
#[case::empty_group_id("", "g")]
fn a_group_scan_never_sees_another_group(#[case] one: &str, #[case] two: &str) {
    let dir = ScratchDir::new("prefix");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    append_to_group(&store, one, vec![commit(one, "bt", 0, offset(1)), commit(one, "t", 1, offset(2))])
        .unwrap();
    append_to_group(&store, two, vec![commit(two, "t", 0, offset(3))]).unwrap();
    let first = store.fetch_group_offsets(one).unwrap();
    assert_eq!(first.group_id, one);
    assert_eq!(first.len(), 2);
    assert_eq!(first.get("bt", 0), Some(&offset(1)));
    let second = store.fetch_group_offsets(two).unwrap();
    assert_eq!(second.len(), 1);
    assert_eq!(second.get("t", 0), Some(&offset(3)));
    // The same two groups in a third partition: a partition scan keeps them apart too.
    let p = (0..50)
        .map(partition)
        .find(|p| *p != store.partition_of(one) && *p != store.partition_of(two))
        .unwrap();
    store
        .append_blocking(p, epoch(0), vec![commit(one, "t", 9, offset(4)), commit(two, "t", 9, offset(5))])
        .unwrap();
    let loaded = store.load(p).unwrap();
    let lens: BTreeMap<_, _> = loaded.groups.offsets.iter().map(|g| (g.group_id.clone(), g.len())).collect();
    assert_eq!(lens, BTreeMap::from([(one.to_owned(), 1), (two.to_owned(), 1)]));
}

#[test]
fn tombstones_remove_exactly_what_they_name() {
    let dir = ScratchDir::new("deletes");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    for g in ["g", "h"] {
        let all =
            vec![commit(g, "a", 0, offset(1)), commit(g, "a", 1, offset(2)), commit(g, "b", 0, offset(3))];
        append_to_group(&store, g, all).unwrap();
    }
    append_to_group(&store, "g", vec![uncommit("g", "a", 1), uncommit("g", "zzz", 4)]).unwrap();
    let g = store.fetch_group_offsets("g").unwrap();
    assert_eq!((g.len(), g.get("a", 1)), (2, None));

    store.delete_group_offsets("g").unwrap();
    assert!(store.fetch_group_offsets("g").unwrap().is_empty());
    assert_eq!(store.fetch_group_offsets("h").unwrap().len(), 3);
    store.delete_group_offsets("never-existed").unwrap();
    let loaded = store.load(store.partition_of("g")).unwrap();
    assert!(loaded.groups.offsets.iter().all(|o| o.group_id != "g"), "a group without offsets is not listed");
}

#[test]
fn group_records_round_trip_replace_and_delete() {
    let dir = ScratchDir::new("groups");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    assert_eq!(group_record(&store, "g"), None);
    for (g, generation) in [("g", 1), ("g", 2), ("h", 7), ("", 8), ("nul\0byte", 9)] {
        append_to_group(&store, g, vec![Record::Group(Box::new(record(g, generation)))]).unwrap();
    }
    assert_eq!(group_record(&store, ""), Some(record("", 8)));
    assert_eq!(group_record(&store, "nul\0byte"), Some(record("nul\0byte", 9)));
    assert_eq!(group_record(&store, "g"), Some(record("g", 2)));
    append_to_group(&store, "g", vec![Record::GroupTombstone { group_id: Arc::from("g") }]).unwrap();
    assert_eq!(group_record(&store, "g"), None);
    assert_eq!(group_record(&store, "h"), Some(record("h", 7)));
}

#[test]
fn everything_comes_back_after_reopening() {
    let dir = ScratchDir::new("reopen");
    {
        let store = SledMetadataStore::open(dir.db()).unwrap();
        append_to_group(
            &store,
            "stable",
            vec![
                Record::Group(Box::new(record("stable", 4))),
                commit("stable", "orders", 0, offset(10)),
                commit("stable", "orders", 1, offset(11)),
            ],
        )
        .unwrap();
        store.store_group_offset("simple", "payments", 3, &offset(99)).unwrap();
        store.store_group_offset("a-longer-group-id", "payments", 0, &offset(1)).unwrap();
    }
    let store = SledMetadataStore::open(dir.db()).unwrap();
    let loaded = store.load_all().unwrap();
    assert_eq!(loaded.groups, vec![record("stable", 4)]);
    let mut ids: Vec<_> = loaded.offsets.iter().map(|g| g.group_id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["a-longer-group-id", "simple", "stable"]);
    let stable = loaded.offsets.iter().find(|g| g.group_id == "stable").unwrap();
    assert_eq!(stable.get("orders", 1), Some(&offset(11)));
    assert_eq!(stable, &store.fetch_group_offsets("stable").unwrap());
    assert_eq!(store.fetch_group_offset("simple", "payments", 3).unwrap(), Some(offset(99)));
}

#[test]
fn an_unstorable_record_fails_the_whole_append() {
    let dir = ScratchDir::new("atomic-input");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    let long_topic = "t".repeat(70_000);
    let err = append_to_group(
        &store,
        "g",
        vec![commit("g", "ok", 0, offset(1)), commit("g", &long_topic, 0, offset(2))],
    )
    .unwrap_err();
    assert!(matches!(err, StorageError::InvalidInput { .. }), "{err:?}");
    assert!(store.fetch_group_offsets("g").unwrap().is_empty());
    // Nor does a refused append raise the epoch.
    let p = store.partition_of("g");
    let err = store.append_blocking(p, epoch(5), vec![commit("g", &long_topic, 0, offset(2))]).unwrap_err();
    assert!(matches!(err, StorageError::InvalidInput { .. }), "{err:?}");
    assert_eq!(store.owner_epoch(p).unwrap(), epoch(0));
    let err = store.store_group_offset(&"g".repeat(70_000), "t", 0, &offset(1)).unwrap_err();
    assert!(matches!(err, StorageError::InvalidInput { .. }), "{err:?}");
    assert_eq!(store.failed_appends(), 0, "bad input is not a storage failure");
}

#[test]
fn a_partition_the_store_does_not_have_is_invalid_input() {
    let dir = ScratchDir::new("out-of-range");
    let store = SledMetadataStore::open_with_partitions(dir.db(), 4).unwrap();
    assert_eq!(store.partition_count(), 4);
    let err =
        store.append_blocking(partition(4), epoch(1), vec![commit("g", "t", 0, offset(1))]).unwrap_err();
    assert!(matches!(err, StorageError::InvalidInput { .. }), "{err:?}");
    assert!(matches!(store.load(partition(4)), Err(StorageError::InvalidInput { .. })));
    assert!(matches!(store.owner_epoch(partition(99)), Err(StorageError::InvalidInput { .. })));
    store.append_blocking(partition(3), epoch(1), vec![commit("g", "t", 0, offset(1))]).unwrap();
}

#[test]
fn from_db_uses_a_database_opened_by_the_caller() {
    let dir = ScratchDir::new("from-db");
    let db = sled::Config::new().path(dir.db()).flush_every_ms(None).open().unwrap();
    db.insert(b"someone else's key", b"untouched".as_slice()).unwrap();
    let store = SledMetadataStore::from_db(db.clone()).unwrap();
    let flushes = store.flush_count();
    store.store_group_offset("g", "t", 0, &offset(1)).unwrap();
    assert!(store.flush_count() > flushes);
    assert_eq!(store.load_all().unwrap().offsets.len(), 1);
    assert_eq!(db.get(b"someone else's key").unwrap().as_deref(), Some(b"untouched".as_slice()));
}

/// A second opener gets an error, not a panic: `Locked`, which a front end tells
/// apart (another server on the same data directory) without reading the message.
#[test]
fn a_locked_directory_is_refused_as_locked() {
    let dir = ScratchDir::new("locked");
    let _first = SledMetadataStore::open(dir.db()).unwrap();
    let err = SledMetadataStore::open(dir.db()).unwrap_err();
    assert!(matches!(err, StorageError::Locked { .. }), "{err:?}");
}

#[derive(Debug, Clone)]
enum Op {
    Store(u8, u8, i32, i64),
    StoreMany(u8, Vec<(u8, i32, i64)>),
    DeleteGroup(u8),
    DeletePartitions(u8, Vec<(u8, i32)>),
}

fn op() -> impl Strategy<Value = Op> {
    let group = 0u8..3;
    let topic = 0u8..3;
    let partition = -1i32..4;
    prop_oneof![
        (group.clone(), topic.clone(), partition.clone(), any::<i64>())
            .prop_map(|(g, t, p, o)| Op::Store(g, t, p, o)),
        (group.clone(), proptest::collection::vec((topic.clone(), partition.clone(), any::<i64>()), 0..5))
            .prop_map(|(g, v)| Op::StoreMany(g, v)),
        group.clone().prop_map(Op::DeleteGroup),
        (group, proptest::collection::vec((topic, partition), 0..4))
            .prop_map(|(g, v)| Op::DeletePartitions(g, v)),
    ]
}

type Model = BTreeMap<(String, String, i32), i64>;

fn apply(store: &SledMetadataStore, model: &mut Model, op: &Op) {
    let name = |prefix: &str, n: u8| format!("{prefix}{n}");
    match op {
        Op::Store(g, t, p, o) => {
            store.store_group_offset(&name("g", *g), &name("t", *t), *p, &offset(*o)).unwrap();
            model.insert((name("g", *g), name("t", *t), *p), *o);
        }
        Op::StoreMany(g, v) => {
            let group = name("g", *g);
            let batch = v.iter().map(|(t, p, o)| commit(&group, &name("t", *t), *p, offset(*o))).collect();
            append_to_group(store, &group, batch).unwrap();
            for (t, p, o) in v {
                model.insert((group.clone(), name("t", *t), *p), *o);
            }
        }
        Op::DeleteGroup(g) => {
            store.delete_group_offsets(&name("g", *g)).unwrap();
            model.retain(|(group, _, _), _| *group != name("g", *g));
        }
        Op::DeletePartitions(g, v) => {
            let group = name("g", *g);
            let tombstones = v.iter().map(|(t, p)| uncommit(&group, &name("t", *t), *p)).collect();
            append_to_group(store, &group, tombstones).unwrap();
            for (t, p) in v {
                model.remove(&(group.clone(), name("t", *t), *p));
            }
        }
    }
}

fn flatten(store: &SledMetadataStore) -> Model {
    let mut out = Model::new();
    for group in store.load_all().unwrap().offsets {
        assert!(!group.is_empty(), "load_all lists a group without offsets");
        for (topic, partitions) in &group.offsets {
            for (partition, value) in partitions {
                assert_eq!(value, &offset(value.offset));
                out.insert((group.group_id.clone(), topic.clone(), *partition), value.offset);
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn the_store_behaves_like_a_map_before_and_after_reopening(ops in proptest::collection::vec(op(), 1..25)) {
        let dir = ScratchDir::new("model");
        let mut model = Model::new();
        {
            let store = SledMetadataStore::open(dir.db()).unwrap();
            for op in &ops {
                apply(&store, &mut model, op);
            }
            prop_assert_eq!(flatten(&store), model.clone());
            for g in 0..3u8 {
                let fetched = store.fetch_group_offsets(&format!("g{g}")).unwrap();
                let expected = model.iter().filter(|((group, _, _), _)| *group == format!("g{g}")).count();
                prop_assert_eq!(fetched.len(), expected);
            }
        }
        let store = SledMetadataStore::open(dir.db()).unwrap();
        prop_assert_eq!(flatten(&store), model);
    }
}

#[test]
fn durability_is_fsync_unless_asked_otherwise() {
    let dir = ScratchDir::new("durability");
    {
        let store = SledMetadataStore::open(dir.db()).unwrap();
        assert_eq!(store.durability(), Durability::Fsync);
        store.store_group_offset("g", "t", 0, &offset(1)).unwrap();
    }
    {
        let store = SledMetadataStore::open_with(dir.db(), Durability::SledFlush).unwrap();
        assert_eq!(store.durability(), Durability::SledFlush);
        store.store_group_offset("g", "t", 1, &offset(2)).unwrap();
    }
    let store = SledMetadataStore::open(dir.db()).unwrap();
    assert_eq!(store.fetch_group_offsets("g").unwrap().len(), 2);

    // sled::open does not wait for a closing handle's lock: use a fresh directory.
    let other = ScratchDir::new("durability-from-db");
    let store = SledMetadataStore::from_db(sled::open(other.db()).unwrap()).unwrap();
    assert_eq!(store.durability(), Durability::SledFlush);
}
