//! Damaged data: corrupt values and keys become typed errors naming the group
//! and key, never stop other groups being served, and a damaged database
//! directory gives an error on open instead of a panic.

use group_offsets::{GroupMetadataRecord, MetadataStore, StorageError};
use group_storage_sled::{GROUPS_TREE, OFFSETS_TREE, SledMetadataStore};
use rstest::rstest;

use crate::common::{ScratchDir, offset};

/// The documented offset key layout, built independently of the crate.
fn offset_key(group: &str, topic: &str, partition: i32) -> Vec<u8> {
    let mut key = Vec::new();
    key.extend_from_slice(&(group.len() as u16).to_be_bytes());
    key.extend_from_slice(group.as_bytes());
    key.extend_from_slice(&(topic.len() as u16).to_be_bytes());
    key.extend_from_slice(topic.as_bytes());
    key.extend_from_slice(&((partition as u32) ^ 0x8000_0000).to_be_bytes());
    key
}

/// A store whose `bad` group holds `value` at `orders/3`, beside a good group.
fn store_with_bad_offset(dir: &ScratchDir, value: &[u8]) -> SledMetadataStore {
    let db = sled::open(dir.db()).unwrap();
    let store = SledMetadataStore::from_db(db.clone()).unwrap();
    store.store_group_offset("good", "orders", 0, &offset(7)).unwrap();
    store.store_group_offset("bad", "orders", 2, &offset(8)).unwrap();
    db.open_tree(OFFSETS_TREE).unwrap().insert(offset_key("bad", "orders", 3), value).unwrap();
    store
}

#[rstest]
#[case::garbage(&[1, 0xff, 0xff], None)]
#[case::empty(&[], None)]
#[case::future_version(&[9, 0, 0, 0, 0, 0], Some(9))]
fn a_bad_offset_value_is_a_typed_error_for_its_group_only(#[case] value: &[u8], #[case] version: Option<u8>) {
    let dir = ScratchDir::new("bad-offset");
    let store = store_with_bad_offset(&dir, value);
    let expected_key = "group_offsets/bad/orders/3".to_owned();

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
    assert_eq!(store.load_all().unwrap_err(), err);

    // Everything else is still served.
    assert_eq!(store.fetch_group_offset("bad", "orders", 2).unwrap(), Some(offset(8)));
    assert_eq!(store.fetch_group_offsets("good").unwrap().get("orders", 0), Some(&offset(7)));
    store.store_group_offset("good", "orders", 1, &offset(9)).unwrap();

    let (stored, problems) = store.load_all_skipping_unreadable().unwrap();
    assert_eq!(problems, vec![err]);
    let ids: Vec<_> = stored.offsets.iter().map(|g| (g.group_id.as_str(), g.len())).collect();
    assert_eq!(ids, [("bad", 1), ("good", 2)]);

    // Overwriting the bad value repairs the group.
    store.store_group_offset("bad", "orders", 3, &offset(10)).unwrap();
    assert_eq!(store.fetch_group_offsets("bad").unwrap().len(), 2);
}

#[test]
fn a_malformed_offset_key_fails_load_all_but_not_the_groups() {
    let dir = ScratchDir::new("bad-key");
    let db = sled::open(dir.db()).unwrap();
    let store = SledMetadataStore::from_db(db.clone()).unwrap();
    store.store_group_offset("good", "orders", 0, &offset(7)).unwrap();
    db.open_tree(OFFSETS_TREE).unwrap().insert([0u8, 9, b'x'], &[1u8][..]).unwrap();

    let err = store.load_all().unwrap_err();
    assert!(
        matches!(&err, StorageError::Corrupt { reason, .. } if reason.contains("malformed key")),
        "{err:?}"
    );
    assert_eq!(store.fetch_group_offsets("good").unwrap().len(), 1);
    let (stored, problems) = store.load_all_skipping_unreadable().unwrap();
    assert_eq!((stored.offsets.len(), problems.len()), (1, 1));
}

#[test]
fn a_bad_group_record_is_a_typed_error_for_its_group_only() {
    let dir = ScratchDir::new("bad-group");
    let db = sled::open(dir.db()).unwrap();
    let store = SledMetadataStore::from_db(db.clone()).unwrap();
    let good = GroupMetadataRecord { group_id: "good".to_owned(), generation_id: 2, ..Default::default() };
    store.store_group_metadata(&good).unwrap();
    let groups = db.open_tree(GROUPS_TREE).unwrap();
    groups.insert("bad", &[1u8, 200][..]).unwrap();
    groups.insert("future", &[2u8, 0][..]).unwrap();
    // A valid record stored under another group's key.
    groups.insert("moved", groups.get("good").unwrap().unwrap()).unwrap();

    let err = store.fetch_group_metadata("bad").unwrap_err();
    assert!(
        matches!(&err, StorageError::Corrupt { group_id, key, .. } if group_id == "bad" && key == "group_metadata/bad"),
        "{err:?}"
    );
    let err = store.fetch_group_metadata("future").unwrap_err();
    assert_eq!(
        err,
        StorageError::UnknownFormatVersion {
            group_id: "future".to_owned(),
            key: "group_metadata/future".to_owned(),
            version: 2
        }
    );
    let err = store.fetch_group_metadata("moved").unwrap_err();
    assert!(matches!(&err, StorageError::Corrupt { reason, .. } if reason.contains("\"good\"")), "{err:?}");

    assert_eq!(store.fetch_group_metadata("good").unwrap(), Some(good.clone()));
    assert!(store.load_all().is_err());
    let (stored, problems) = store.load_all_skipping_unreadable().unwrap();
    assert_eq!((stored.groups, problems.len()), (vec![good], 3));
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

#[test]
fn a_database_with_an_unknown_layout_is_refused() {
    let dir = ScratchDir::new("layout");
    let db = sled::open(dir.db()).unwrap();
    db.insert(b"group-storage-sled/layout", &[2u8][..]).unwrap();
    let err = SledMetadataStore::from_db(db).unwrap_err();
    assert!(matches!(&err, StorageError::Unavailable { message } if message.contains("layout")), "{err:?}");
}
