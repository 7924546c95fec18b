//! KIP-848 consumer-group records on disk: their documented keys and values,
//! the flip of the layout record to v3 before the first one is written (and
//! recovery when that flip fails),
//! tombstones that leave no key behind, and damaged records as typed errors
//! naming their group and key.

use std::sync::Arc;

use group_offsets::{
    ConsumerGroupMetadataValue, CoordinatorPartition, MetadataStore, ModernGroupRecord, Record, StorageError,
};
use group_storage_sled::{FlushFaults, PARTITIONS_TREE, SledMetadataStore, SledOptions};

use crate::common::{ScratchDir, commit, epoch, offset, open_raw, partition};

const LAYOUT_KEY: &[u8] = b"group-storage-sled/layout";

/// The documented consumer-group record key, built independently of the crate.
fn consumer_key(p: CoordinatorPartition, group: &str, record_type: i16, sub: &str) -> Vec<u8> {
    let mut key = p.0.to_be_bytes().to_vec();
    key.push(3);
    key.extend_from_slice(&(group.len() as u16).to_be_bytes());
    key.extend_from_slice(group.as_bytes());
    key.extend_from_slice(&record_type.to_be_bytes());
    key.extend_from_slice(sub.as_bytes());
    key
}

fn group_metadata(group: &str, epoch: Option<i32>) -> Record {
    Record::Modern(ModernGroupRecord::GroupMetadata {
        group_id: Arc::from(group),
        value: epoch.map(|epoch| ConsumerGroupMetadataValue { epoch, metadata_hash: 258 }),
    })
}

/// A member's target assignment (empty), or its tombstone.
fn target(group: &str, member: &str, present: bool) -> Record {
    Record::Modern(ModernGroupRecord::TargetAssignmentMember {
        group_id: Arc::from(group),
        member_id: Arc::from(member),
        value: present.then(Vec::new),
    })
}

fn layout_record(dir: &ScratchDir) -> Vec<u8> {
    open_raw(&dir.db()).get(LAYOUT_KEY).unwrap().expect("a layout record").to_vec()
}

#[test]
fn the_first_consumer_record_flips_the_layout_to_v3() {
    let dir = ScratchDir::new("consumer-layout");
    let p = partition(9);
    {
        let store = SledMetadataStore::open_with_partitions(dir.db(), 300).unwrap();
        store.append_blocking(p, epoch(1), vec![commit("g", "t", 0, offset(1))]).unwrap();
        // A tombstone has nothing to remove in a v2 store: no flip.
        store.append_blocking(p, epoch(1), vec![group_metadata("g", None)]).unwrap();
    }
    assert_eq!(layout_record(&dir), [2, 0, 0, 1, 44], "a store without consumer records stays v2");
    {
        let store = SledMetadataStore::open_with_partitions(dir.db(), 300).unwrap();
        store.append_blocking(p, epoch(1), vec![group_metadata("g", Some(5))]).unwrap();
        store.append_blocking(p, epoch(1), vec![group_metadata("h", Some(6))]).unwrap();
    }
    assert_eq!(layout_record(&dir), [3, 0, 0, 1, 44], "v3 once a consumer record was written");
    {
        let db = open_raw(&dir.db());
        let tree = db.open_tree(PARTITIONS_TREE).unwrap();
        let value = tree.get(consumer_key(p, "g", 3, "")).unwrap().expect("the documented key");
        // The shared record codec's version (3 for a consumer-group record),
        // then the value: epoch 5 zigzag, hash 258 as a varint.
        assert_eq!(value.as_ref(), [3, 10, 0x82, 0x02]);
    }
    let store = SledMetadataStore::open_with_partitions(dir.db(), 300).unwrap();
    let loaded = store.load(p).unwrap();
    assert_eq!(loaded.groups.consumer.len(), 2, "{:?}", loaded.groups.consumer);
    drop(store);
    let err = SledMetadataStore::open_with_partitions(dir.db(), 50).unwrap_err();
    assert!(matches!(err, StorageError::InvalidInput { .. }), "a v3 store keeps its count: {err:?}");
}

#[test]
fn a_removed_group_leaves_no_consumer_key_behind() {
    let dir = ScratchDir::new("consumer-garbage");
    let db = sled::open(dir.db()).unwrap();
    let store = SledMetadataStore::from_db(db.clone()).unwrap();
    let p = partition(0);
    let records = vec![
        group_metadata("g", Some(1)),
        target("g", "m1", true),
        target("g", "m2", true),
        group_metadata("g\0", Some(1)),
        target("gx", "m1", true),
    ];
    store.append_blocking(p, epoch(0), records).unwrap();
    let removal = vec![group_metadata("g", None), target("g", "m1", false), target("g", "m2", false)];
    store.append_blocking(p, epoch(0), removal).unwrap();
    let tree = db.open_tree(PARTITIONS_TREE).unwrap();
    let prefix = [&p.0.to_be_bytes()[..], &[3, 0, 1, b'g']].concat();
    assert_eq!(tree.scan_prefix(&prefix).count(), 0, "keys of group \"g\" are left");
    let left: Vec<String> =
        store.load(p).unwrap().groups.consumer.iter().map(|r| r.group_id().to_string()).collect();
    assert_eq!(left, ["g\0", "gx"], "groups sharing a prefix with the removed one stay (in key order)");
}

#[test]
fn bad_modern_records_are_typed_errors_naming_their_key() {
    let dir = ScratchDir::new("consumer-corrupt");
    let db = sled::open(dir.db()).unwrap();
    let store = SledMetadataStore::from_db(db.clone()).unwrap();
    let (bad_p, good_p) = (partition(3), partition(4));
    store.append_blocking(good_p, epoch(0), vec![group_metadata("good", Some(1))]).unwrap();
    store.append_blocking(bad_p, epoch(0), vec![group_metadata("good", Some(1))]).unwrap();
    let tree = db.open_tree(PARTITIONS_TREE).unwrap();
    tree.insert(consumer_key(bad_p, "bad", 5, "m1"), &[1u8, 200][..]).unwrap();
    tree.insert(consumer_key(bad_p, "future", 3, ""), &[9u8, 0][..]).unwrap();
    tree.insert(consumer_key(bad_p, "odd", 4, "x"), &[1u8, 0][..]).unwrap();
    tree.insert([&bad_p.0.to_be_bytes()[..], &[3, 0, 9, b'x']].concat(), &[1u8][..]).unwrap();

    let err = store.load(bad_p).unwrap_err();
    assert_eq!(
        err,
        StorageError::Corrupt {
            group_id: "bad".to_owned(),
            key: "coordinator_partitions/3/consumer/bad/5/m1".to_owned(),
            reason: match &err {
                StorageError::Corrupt { reason, .. } => reason.clone(),
                _ => String::new(),
            },
        }
    );
    let (loaded, problems) = store.load_skipping_unreadable(bad_p).unwrap();
    assert_eq!(loaded.groups.consumer.len(), 1, "the readable record is loaded");
    assert_eq!(problems.len(), 4, "{problems:?}");
    assert!(problems.contains(&StorageError::UnknownFormatVersion {
        group_id: "future".to_owned(),
        key: "coordinator_partitions/3/consumer/future/3/".to_owned(),
        version: 9,
    }));
    let has = |needle: &str| {
        problems.iter().any(|e| matches!(e, StorageError::Corrupt { reason, .. } if reason.contains(needle)))
    };
    assert!(has("record type 4") && has("malformed key"), "{problems:?}");

    assert_eq!(store.load(good_p).unwrap().groups.consumer.len(), 1, "another partition is served");
    assert!(store.load_all().is_err());
    assert_eq!(store.load_all_skipping_unreadable().unwrap().1.len(), 4);
}

#[rstest::rstest]
#[case::fsync_fails(false)]
#[case::sled_fails_and_the_database_is_reopened(true)]
fn a_failed_layout_flip_fails_its_append_and_the_next_one_recovers(#[case] sled_fails: bool) {
    let dir = ScratchDir::new("consumer-flip-fails");
    let faults = FlushFaults::new();
    let options = SledOptions::new().partitions(300).flush_faults(faults.clone());
    let p = partition(9);
    {
        let store = SledMetadataStore::open_with_options(dir.db(), options.clone()).unwrap();
        store.append_blocking(p, epoch(1), vec![commit("g", "t", 0, offset(1))]).unwrap();
        let injected = StorageError::io("injected: No space left on device");
        if sled_fails {
            faults.fail_sled(injected)
        } else {
            faults.fail_fsync(injected)
        }
        let failed = store.append_blocking(p, epoch(1), vec![group_metadata("g", Some(1))]);
        assert!(matches!(failed, Err(StorageError::Io { .. })), "{failed:?}");
        faults.heal();
        store.append_blocking(p, epoch(1), vec![group_metadata("g", Some(2))]).expect("the next append");
        let loaded = store.load(p).unwrap();
        assert_eq!(loaded.groups.consumer.len(), 1);
        assert_eq!(loaded.groups.offsets.len(), 1, "what was acknowledged stays");
    }
    assert_eq!(layout_record(&dir), [3, 0, 0, 1, 44]);
    let store = SledMetadataStore::open_with_options(dir.db(), SledOptions::new().partitions(300)).unwrap();
    let expected = ModernGroupRecord::GroupMetadata {
        group_id: Arc::from("g"),
        value: Some(ConsumerGroupMetadataValue { epoch: 2, metadata_hash: 258 }),
    };
    assert_eq!(store.load(p).unwrap().groups.consumer, vec![expected]);
}
