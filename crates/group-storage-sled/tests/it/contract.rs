//! The `MetadataStore` contract, checked directly on `SledMetadataStore`
//! (until `group-offsets` ships its conformance suite), including reopening.

use std::collections::BTreeMap;

use group_offsets::{GroupMetadataRecord, MemberMetadataRecord, MetadataStore, StorageError};
use group_storage_sled::{Durability, SledMetadataStore};
use proptest::prelude::*;
use rstest::rstest;

use crate::common::{ScratchDir, offset, tp};

fn record(group_id: &str, generation_id: i32) -> GroupMetadataRecord {
    GroupMetadataRecord {
        group_id: group_id.to_owned(),
        protocol_type: Some("consumer".to_owned()),
        generation_id,
        protocol_name: Some("range".to_owned()),
        leader_id: Some("m-1".to_owned()),
        state_timestamp_ms: Some(1_700_000_000_000),
        members: vec![MemberMetadataRecord {
            member_id: "m-1".to_owned(),
            group_instance_id: Some("i-1".to_owned()),
            client_id: "client".to_owned(),
            client_host: "/10.0.0.1".to_owned(),
            rebalance_timeout_ms: 300_000,
            session_timeout_ms: 45_000,
            subscription: vec![0, 3, 1, 2],
            assignment: vec![9; 40],
        }],
    }
}

#[test]
fn offsets_round_trip_and_replace() {
    let dir = ScratchDir::new("round-trip");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    assert_eq!(store.fetch_group_offset("g", "t", 0).unwrap(), None);
    store.store_group_offset("g", "t", 0, &offset(5)).unwrap();
    assert_eq!(store.fetch_group_offset("g", "t", 0).unwrap(), Some(offset(5)));
    store.store_group_offset("g", "t", 0, &offset(9)).unwrap();
    assert_eq!(store.fetch_group_offset("g", "t", 0).unwrap(), Some(offset(9)));
    assert_eq!(store.fetch_group_offset("g", "t", 1).unwrap(), None);
    assert_eq!(store.fetch_group_offset("other", "t", 0).unwrap(), None);
}

#[rstest]
#[case::longer_group_id("g", "g1")]
#[case::group_id_prefix_of_topic("a", "ab")]
#[case::empty_group_id("", "g")]
fn a_group_scan_never_sees_another_group(#[case] one: &str, #[case] two: &str) {
    let dir = ScratchDir::new("prefix");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    store.store_group_offsets(one, &[(tp("bt", 0), offset(1)), (tp("t", 1), offset(2))]).unwrap();
    store.store_group_offset(two, "t", 0, &offset(3)).unwrap();
    let first = store.fetch_group_offsets(one).unwrap();
    assert_eq!(first.group_id, one);
    assert_eq!(first.len(), 2);
    assert_eq!(first.get("bt", 0), Some(&offset(1)));
    let second = store.fetch_group_offsets(two).unwrap();
    assert_eq!(second.len(), 1);
    assert_eq!(second.get("t", 0), Some(&offset(3)));
}

#[test]
fn deletes_remove_exactly_what_they_name() {
    let dir = ScratchDir::new("deletes");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    let all = [(tp("a", 0), offset(1)), (tp("a", 1), offset(2)), (tp("b", 0), offset(3))];
    store.store_group_offsets("g", &all).unwrap();
    store.store_group_offsets("h", &all).unwrap();

    store.delete_group_partitions("g", &[tp("a", 1), tp("zzz", 4)]).unwrap();
    let g = store.fetch_group_offsets("g").unwrap();
    assert_eq!((g.len(), g.get("a", 1)), (2, None));

    store.delete_group_offsets("g").unwrap();
    assert!(store.fetch_group_offsets("g").unwrap().is_empty());
    assert_eq!(store.fetch_group_offsets("h").unwrap().len(), 3);
    store.delete_group_offsets("never-existed").unwrap();
}

#[test]
fn group_records_round_trip_replace_and_delete() {
    let dir = ScratchDir::new("groups");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    assert_eq!(store.fetch_group_metadata("g").unwrap(), None);
    store.store_group_metadata(&record("g", 1)).unwrap();
    store.store_group_metadata(&record("g", 2)).unwrap();
    store.store_group_metadata(&record("h", 7)).unwrap();
    store.store_group_metadata(&record("", 8)).unwrap();
    assert_eq!(store.fetch_group_metadata("").unwrap(), Some(record("", 8)));
    assert_eq!(store.fetch_group_metadata("g").unwrap(), Some(record("g", 2)));
    store.delete_group_metadata("g").unwrap();
    assert_eq!(store.fetch_group_metadata("g").unwrap(), None);
    assert_eq!(store.fetch_group_metadata("h").unwrap(), Some(record("h", 7)));
}

#[test]
fn everything_comes_back_after_reopening() {
    let dir = ScratchDir::new("reopen");
    {
        let store = SledMetadataStore::open(dir.db()).unwrap();
        store.store_group_metadata(&record("stable", 4)).unwrap();
        store
            .store_group_offsets("stable", &[(tp("orders", 0), offset(10)), (tp("orders", 1), offset(11))])
            .unwrap();
        store.store_group_offset("simple", "payments", 3, &offset(99)).unwrap();
        store.store_group_offset("a-longer-group-id", "payments", 0, &offset(1)).unwrap();
    }
    let store = SledMetadataStore::open(dir.db()).unwrap();
    let loaded = store.load_all().unwrap();
    assert_eq!(loaded.groups, vec![record("stable", 4)]);
    let ids: Vec<_> = loaded.offsets.iter().map(|g| g.group_id.as_str()).collect();
    assert_eq!(ids, ["a-longer-group-id", "simple", "stable"], "groups come back in id order");
    assert_eq!(loaded.offsets[1].get("payments", 3), Some(&offset(99)));
    assert_eq!(loaded.offsets[2].get("orders", 1), Some(&offset(11)));
    assert_eq!(loaded.offsets[2], store.fetch_group_offsets("stable").unwrap());
}

#[test]
fn an_unstorable_partition_fails_the_whole_commit() {
    let dir = ScratchDir::new("atomic-input");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    let long_topic = "t".repeat(70_000);
    let err = store
        .store_group_offsets("g", &[(tp("ok", 0), offset(1)), (tp(&long_topic, 0), offset(2))])
        .unwrap_err();
    assert!(matches!(err, StorageError::InvalidInput { .. }), "{err:?}");
    assert!(store.fetch_group_offsets("g").unwrap().is_empty());
    let err = store.store_group_offset(&"g".repeat(70_000), "t", 0, &offset(1)).unwrap_err();
    assert!(matches!(err, StorageError::InvalidInput { .. }), "{err:?}");
}

#[test]
fn from_db_uses_a_database_opened_by_the_caller() {
    let dir = ScratchDir::new("from-db");
    let db = sled::Config::new().path(dir.db()).flush_every_ms(None).open().unwrap();
    db.insert(b"someone else's key", b"untouched".as_slice()).unwrap();
    let store = SledMetadataStore::from_db(db.clone()).unwrap();
    store.store_group_offset("g", "t", 0, &offset(1)).unwrap();
    assert!(store.flush_count() >= 1);
    assert_eq!(store.load_all().unwrap().offsets.len(), 1);
    assert_eq!(db.get(b"someone else's key").unwrap().as_deref(), Some(b"untouched".as_slice()));
}

#[test]
fn a_locked_directory_is_unavailable() {
    let dir = ScratchDir::new("locked");
    let _first = SledMetadataStore::open(dir.db()).unwrap();
    // sled locks its files; a second opener must get an error, not a panic.
    let err = SledMetadataStore::open(dir.db()).unwrap_err();
    assert!(matches!(err, StorageError::Unavailable { .. }), "{err:?}");
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
            let batch: Vec<_> = v.iter().map(|(t, p, o)| (tp(&name("t", *t), *p), offset(*o))).collect();
            store.store_group_offsets(&name("g", *g), &batch).unwrap();
            for (t, p, o) in v {
                model.insert((name("g", *g), name("t", *t), *p), *o);
            }
        }
        Op::DeleteGroup(g) => {
            store.delete_group_offsets(&name("g", *g)).unwrap();
            model.retain(|(group, _, _), _| *group != name("g", *g));
        }
        Op::DeletePartitions(g, v) => {
            let parts: Vec<_> = v.iter().map(|(t, p)| tp(&name("t", *t), *p)).collect();
            store.delete_group_partitions(&name("g", *g), &parts).unwrap();
            for (t, p) in v {
                model.remove(&(name("g", *g), name("t", *t), *p));
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
