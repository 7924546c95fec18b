//! Damaged data: corrupt values, keys and epochs become typed errors naming
//! the group and key, never stop other partitions (or, for point reads,
//! other groups) being served, and a damaged database directory gives an
//! error on open instead of a panic.

use group_offsets::{
    CoordinatorPartition, GroupMetadataRecord, MetadataStore, OwnerEpoch, Record, StorageError,
};
use group_storage_sled::{PARTITIONS_TREE, SledMetadataStore};
use rstest::rstest;

use crate::common::{ScratchDir, commit, epoch, offset, partition};

/// The documented v2 offset key, built independently of the crate.
fn offset_key(p: CoordinatorPartition, group: &str, topic: &str, partition: i32) -> Vec<u8> {
    let mut key = p.0.to_be_bytes().to_vec();
    key.push(2);
    key.extend_from_slice(&(group.len() as u16).to_be_bytes());
    key.extend_from_slice(group.as_bytes());
    key.extend_from_slice(&(topic.len() as u16).to_be_bytes());
    key.extend_from_slice(topic.as_bytes());
    key.extend_from_slice(&((partition as u32) ^ 0x8000_0000).to_be_bytes());
    key
}

/// The documented v2 group record key.
fn group_key(p: CoordinatorPartition, group: &str) -> Vec<u8> {
    [&p.0.to_be_bytes()[..], &[1], group.as_bytes()].concat()
}

/// A store whose `bad` group holds `value` at `orders/3`, beside a readable group.
fn store_with_bad_offset(dir: &ScratchDir, value: &[u8]) -> (SledMetadataStore, CoordinatorPartition) {
    let db = sled::open(dir.db()).unwrap();
    let store = SledMetadataStore::from_db(db.clone()).unwrap();
    store.store_group_offset("fine", "orders", 0, &offset(7)).unwrap();
    store.store_group_offset("bad", "orders", 2, &offset(8)).unwrap();
    let p = store.partition_of("bad");
    assert_ne!(p, store.partition_of("fine"), "the test needs the groups in two partitions");
    db.open_tree(PARTITIONS_TREE).unwrap().insert(offset_key(p, "bad", "orders", 3), value).unwrap();
    (store, p)
}

#[rstest]
#[case::garbage(&[1, 0xff, 0xff], None)]
#[case::empty(&[], None)]
#[case::future_version(&[9, 0, 0, 0, 0, 0], Some(9))]
fn a_bad_offset_value_is_a_typed_error_for_its_group_only(#[case] value: &[u8], #[case] version: Option<u8>) {
    let dir = ScratchDir::new("bad-offset");
    let (store, p) = store_with_bad_offset(&dir, value);
    let expected_key = format!("coordinator_partitions/{}/offsets/bad/orders/3", p.0);

    let err = store.fetch_group_offsets("bad").unwrap_err();
    match (version, &err) {
        (None, StorageError::Corrupt { group_id, key, reason }) => {
            assert_eq!((group_id.as_str(), key), ("bad", &expected_key));
            assert!(!reason.is_empty());
        }
        (Some(v), StorageError::UnknownFormatVersion { group_id, key, version }) => {
            assert_eq!((group_id.as_str(), key, *version), ("bad", &expected_key, v));
        }
        _ => panic!("unexpected error {err:?}"),
    }
    assert_eq!(store.fetch_group_offset("bad", "orders", 3).unwrap_err(), err);
    assert_eq!(store.load(p).unwrap_err(), err);
    assert_eq!(store.load_all().unwrap_err(), err);

    // Everything else is still served.
    assert_eq!(store.fetch_group_offset("bad", "orders", 2).unwrap(), Some(offset(8)));
    assert_eq!(store.fetch_group_offsets("fine").unwrap().get("orders", 0), Some(&offset(7)));
    assert_eq!(store.load(store.partition_of("fine")).unwrap().groups.offsets.len(), 1);
    store.store_group_offset("fine", "orders", 1, &offset(9)).unwrap();

    let (stored, problems) = store.load_all_skipping_unreadable().unwrap();
    assert_eq!(problems, vec![err.clone()]);
    let mut ids: Vec<_> = stored.offsets.iter().map(|g| (g.group_id.as_str(), g.len())).collect();
    ids.sort_unstable();
    assert_eq!(ids, [("bad", 1), ("fine", 2)]);
    let (loaded, problems) = store.load_skipping_unreadable(p).unwrap();
    assert_eq!((loaded.groups.offsets[0].len(), problems), (1, vec![err]));

    // Overwriting the bad value repairs the group.
    store.store_group_offset("bad", "orders", 3, &offset(10)).unwrap();
    assert_eq!(store.fetch_group_offsets("bad").unwrap().len(), 2);
    assert_eq!(store.failed_appends(), 0);
}

#[test]
fn a_malformed_offset_key_fails_its_partition_but_not_the_groups() {
    let dir = ScratchDir::new("bad-key");
    let db = sled::open(dir.db()).unwrap();
    let store = SledMetadataStore::from_db(db.clone()).unwrap();
    store.store_group_offset("good", "orders", 0, &offset(7)).unwrap();
    let p = store.partition_of("good");
    let key = [&p.0.to_be_bytes()[..], &[2, 0, 9, b'x']].concat();
    db.open_tree(PARTITIONS_TREE).unwrap().insert(key, &[1u8][..]).unwrap();

    for err in [store.load_all().unwrap_err(), store.load(p).unwrap_err()] {
        assert!(
            matches!(&err, StorageError::Corrupt { reason, .. } if reason.contains("malformed key")),
            "{err:?}"
        );
    }
    assert_eq!(store.fetch_group_offsets("good").unwrap().len(), 1);
    let (stored, problems) = store.load_all_skipping_unreadable().unwrap();
    assert_eq!((stored.offsets.len(), problems.len()), (1, 1));
}

#[test]
fn a_bad_group_record_is_a_typed_error_for_its_partition_only() {
    let dir = ScratchDir::new("bad-group");
    let db = sled::open(dir.db()).unwrap();
    let store = SledMetadataStore::from_db(db.clone()).unwrap();
    let (bad_p, good_p) = (partition(3), partition(4));
    let good = GroupMetadataRecord { group_id: "good".into(), generation_id: 2, ..Default::default() };
    store.append_blocking(good_p, epoch(0), vec![Record::Group(Box::new(good.clone()))]).unwrap();
    store.append_blocking(bad_p, epoch(0), vec![Record::Group(Box::new(good.clone()))]).unwrap();
    let tree = db.open_tree(PARTITIONS_TREE).unwrap();
    tree.insert(group_key(bad_p, "bad"), &[1u8, 200][..]).unwrap();
    tree.insert(group_key(bad_p, "future"), &[9u8, 0][..]).unwrap();
    // A valid record stored under another group's key.
    tree.insert(group_key(bad_p, "moved"), tree.get(group_key(good_p, "good")).unwrap().unwrap()).unwrap();

    let err = store.load(bad_p).unwrap_err();
    assert!(
        matches!(&err, StorageError::Corrupt { group_id, key, .. } if group_id == "bad" && key == "coordinator_partitions/3/groups/bad"),
        "{err:?}"
    );
    let (loaded, problems) = store.load_skipping_unreadable(bad_p).unwrap();
    assert_eq!(loaded.groups.groups, vec![good.clone()]);
    assert_eq!(problems.len(), 3);
    assert_eq!(problems[0], err);
    assert!(problems.contains(&StorageError::UnknownFormatVersion {
        group_id: "future".to_owned(),
        key: "coordinator_partitions/3/groups/future".to_owned(),
        version: 9
    }));
    assert!(
        problems
            .iter()
            .any(|e| matches!(e, StorageError::Corrupt { reason, .. } if reason.contains("\"good\""))),
        "{problems:?}"
    );

    assert_eq!(store.load(good_p).unwrap().groups.groups, vec![good.clone()]);
    assert!(store.load_all().is_err());
    let (stored, problems) = store.load_all_skipping_unreadable().unwrap();
    assert_eq!((stored.groups, problems.len()), (vec![good.clone(), good], 3));
}

#[test]
fn a_bad_epoch_refuses_appends_to_its_partition_only() {
    let dir = ScratchDir::new("bad-epoch");
    let db = sled::open(dir.db()).unwrap();
    let store = SledMetadataStore::from_db(db.clone()).unwrap();
    store.append_blocking(partition(5), epoch(3), vec![commit("g", "t", 0, offset(1))]).unwrap();
    drop(store);
    db.open_tree(PARTITIONS_TREE).unwrap().insert([0u8, 0, 0, 5, 0], &[1u8, 0, 0][..]).unwrap();
    let store = SledMetadataStore::from_db(db).unwrap();

    let err = store.owner_epoch(partition(5)).unwrap_err();
    assert!(
        matches!(&err, StorageError::Corrupt { key, .. } if key == "coordinator_partitions/5/epoch"),
        "{err:?}"
    );
    assert_eq!(store.append_blocking(partition(5), epoch(9), vec![]).unwrap_err(), err);
    assert_eq!(store.load(partition(5)).unwrap_err(), err);
    let (loaded, problems) = store.load_skipping_unreadable(partition(5)).unwrap();
    assert_eq!((loaded.epoch, loaded.groups.offsets.len(), problems), (OwnerEpoch(0), 1, vec![err]));
    // Not a storage failure: the store is healthy, and other partitions take appends.
    assert!(!store.is_failed());
    assert_eq!(store.failed_appends(), 0);
    store.append_blocking(partition(6), epoch(1), vec![]).unwrap();
}

/// How a test damages a closed database directory.
#[derive(Debug, Clone, Copy)]
enum Damage {
    GarbageConf,
    GarbageLog,
    ZeroedLog,
    TruncatedLog,
}

#[rstest]
#[case::garbage_conf(Damage::GarbageConf, true)]
#[case::garbage_log(Damage::GarbageLog, true)]
#[case::zeroed_log(Damage::ZeroedLog, true)]
#[case::truncated_log(Damage::TruncatedLog, false)]
fn opening_a_damaged_database_is_an_error_not_a_panic(#[case] damage: Damage, #[case] must_fail: bool) {
    let dir = ScratchDir::new("damaged");
    {
        let store = SledMetadataStore::open(dir.db()).unwrap();
        for i in 0..50 {
            store.store_group_offset("g", "t", i, &offset(i.into())).unwrap();
        }
    }
    let conf = dir.db().join("conf");
    let log = dir.db().join("db");
    let log_len = std::fs::metadata(&log).unwrap().len() as usize;
    match damage {
        Damage::GarbageConf => std::fs::write(&conf, b"this is not a sled config file").unwrap(),
        Damage::GarbageLog => std::fs::write(&log, vec![0xa5; log_len]).unwrap(),
        Damage::ZeroedLog => std::fs::write(&log, vec![0; log_len]).unwrap(),
        Damage::TruncatedLog => std::fs::write(&log, &std::fs::read(&log).unwrap()[..log_len / 3]).unwrap(),
    }
    match SledMetadataStore::open(dir.db()) {
        Err(err) => assert!(matches!(err, StorageError::Unavailable { .. }), "{damage:?}: {err:?}"),
        // A log cut short may recover an earlier consistent state; whatever
        // is served must then decode.
        Ok(store) => {
            assert!(!must_fail, "{damage:?}: a damaged database opened");
            let (stored, problems) = store.load_all_skipping_unreadable().unwrap();
            assert!(problems.is_empty(), "{damage:?}: {problems:?}");
            assert!(
                stored.offsets.iter().all(|g| g
                    .offsets
                    .values()
                    .flatten()
                    .all(|(p, o)| *o == offset((*p).into())))
            );
        }
    }
}
