//! `PersistentOffsetStorage`: acknowledged writes, failures, epochs, held
//! appends, the read cache and restarts.

use group_offsets::{
    GroupMetadataRecord, MemoryMetadataStore, MemoryOffsetStorage, MetadataStore, OffsetStorage, OwnerEpoch,
    PersistentOffsetStorage, StorageError,
};
use group_types::{CommitMetadata, OffsetAndMetadata, TopicPartition};
use rstest::rstest;

fn tp(topic: &str, partition: i32) -> TopicPartition {
    TopicPartition::new(topic, partition)
}

fn storage(cached: bool, store: &MemoryMetadataStore) -> PersistentOffsetStorage<MemoryMetadataStore> {
    if cached {
        PersistentOffsetStorage::with_read_cache(store.clone())
    } else {
        PersistentOffsetStorage::new(store.clone())
    }
}

fn disk_full() -> StorageError {
    StorageError::io("disk full")
}

/// Writes the cache (when there is one) has already seen, then a failing write.
#[rstest]
fn a_failed_write_changes_nothing_a_reader_sees(
    #[values(false, true)] cached: bool,
    #[values("store_offset", "store_offsets", "delete_offsets", "delete_partitions")] write: &str,
) {
    let store = MemoryMetadataStore::new();
    let s = storage(cached, &store);
    let before =
        vec![(tp("t", 0), OffsetAndMetadata::new(10, 1)), (tp("t", 1), OffsetAndMetadata::new(11, 1))];
    s.store_offsets("g", &before).unwrap();
    let seen = s.fetch_offsets("g").unwrap();

    store.fail_writes(Some(disk_full()));
    let result = match write {
        "store_offset" => s.store_offset("g", &tp("t", 0), OffsetAndMetadata::new(99, 2)),
        "store_offsets" => s.store_offsets(
            "g",
            &[(tp("t", 0), OffsetAndMetadata::new(99, 2)), (tp("u", 0), OffsetAndMetadata::new(99, 2))],
        ),
        "delete_offsets" => s.delete_offsets("g"),
        _ => s.delete_partitions("g", &[tp("t", 0)]),
    };
    assert_eq!(result, Err(disk_full()), "{write} must report the store's failure");
    assert_eq!(s.fetch_offsets("g").unwrap(), seen, "{write} failed, yet fetch_offsets changed");
    assert_eq!(s.fetch_offset("g", &tp("t", 0)).unwrap(), Some(OffsetAndMetadata::new(10, 1)));
    assert_eq!(s.fetch_offset("g", &tp("u", 0)).unwrap(), None);

    // Healed, the same write goes through and is seen.
    store.fail_writes(None);
    s.store_offset("g", &tp("t", 0), OffsetAndMetadata::new(12, 3)).unwrap();
    assert_eq!(s.fetch_offset("g", &tp("t", 0)).unwrap(), Some(OffsetAndMetadata::new(12, 3)));
    assert_eq!(store.fetch_group_offset("g", "t", 0).unwrap(), Some(OffsetAndMetadata::new(12, 3)));
}

#[rstest]
fn a_failed_read_is_reported_and_not_cached(#[values(false, true)] cached: bool) {
    let store = MemoryMetadataStore::new();
    store.store_group_offset("g", "t", 0, &OffsetAndMetadata::new(5, 1)).unwrap();
    let s = storage(cached, &store);
    store.fail_reads(Some(StorageError::unavailable("closed")));
    assert!(matches!(s.fetch_offset("g", &tp("t", 0)), Err(StorageError::Unavailable { .. })));
    assert!(s.fetch_offsets("g").is_err());
    store.fail_reads(None);
    assert_eq!(s.fetch_offset("g", &tp("t", 0)).unwrap(), Some(OffsetAndMetadata::new(5, 1)));
}

#[rstest]
fn every_acknowledged_write_is_in_the_store(#[values(false, true)] cached: bool) {
    let store = MemoryMetadataStore::new();
    let s = storage(cached, &store);
    s.store_offset("g", &tp("t", 0), OffsetAndMetadata::new(1, 1)).unwrap();
    assert_eq!(s.fetch_offset("g", &tp("t", 0)).unwrap().map(|o| o.offset), Some(1));
    s.store_offsets(
        "g",
        &[(tp("t", 0), OffsetAndMetadata::new(2, 2)), (tp("t", 1), OffsetAndMetadata::new(3, 2))],
    )
    .unwrap();
    s.delete_partitions("g", &[tp("t", 1)]).unwrap();
    assert_eq!(store.fetch_group_offsets("g").unwrap(), s.fetch_offsets("g").unwrap());
    assert_eq!(store.fetch_group_offset("g", "t", 0).unwrap().map(|o| o.offset), Some(2));
    assert_eq!(store.fetch_group_offset("g", "t", 1).unwrap(), None);
    s.delete_offsets("g").unwrap();
    assert!(store.fetch_group_offsets("g").unwrap().is_empty());
    assert!(s.fetch_offsets("g").unwrap().is_empty());
}

/// A restart: the old storage is dropped, a new one over the same store
/// (here a clone of the memory store) loads everything acknowledged.
#[rstest]
fn a_restarted_storage_loads_everything(#[values(false, true)] cached: bool) {
    let store = MemoryMetadataStore::new();
    let record = GroupMetadataRecord {
        group_id: "g".into(),
        protocol_type: Some("consumer".into()),
        generation_id: 3,
        state_timestamp_ms: Some(77),
        ..GroupMetadataRecord::default()
    };
    {
        let s = storage(cached, &store);
        s.store_offset("g", &tp("t", 0), OffsetAndMetadata::new(9, 1)).unwrap();
        s.store_offset("simple", &tp("t", 0), OffsetAndMetadata::new(4, 1)).unwrap();
        s.store_group(record.clone()).unwrap();
        s.store_group(GroupMetadataRecord { group_id: "gone".into(), ..GroupMetadataRecord::default() })
            .unwrap();
        s.delete_group("gone").unwrap();
    }
    let restarted = storage(cached, &store);
    let loaded = restarted.load().unwrap();
    assert_eq!(loaded.groups, vec![record]);
    let ids: Vec<_> = loaded.offsets.iter().map(|g| g.group_id.as_str()).collect();
    assert_eq!(ids, ["g", "simple"]);
    assert_eq!(restarted.fetch_offset("g", &tp("t", 0)).unwrap().map(|o| o.offset), Some(9));
}

#[test]
fn a_failed_group_write_is_reported() {
    let store = MemoryMetadataStore::new();
    let s = PersistentOffsetStorage::with_read_cache(store.clone());
    store.fail_writes(Some(disk_full()));
    let record = GroupMetadataRecord { group_id: "g".into(), ..GroupMetadataRecord::default() };
    assert_eq!(s.store_group(record.clone()), Err(disk_full()));
    assert_eq!(s.delete_group("g"), Err(disk_full()));
    store.fail_writes(None);
    assert!(s.load().unwrap().groups.is_empty());
    assert!(s.has_read_cache());
    assert!(!PersistentOffsetStorage::new(store).has_read_cache());
}

/// Every write is one append to the group's partition, at its current epoch:
/// a new owner raising the epoch does not lock this storage out.
#[rstest]
fn writes_are_single_appends_at_the_current_epoch(#[values(false, true)] cached: bool) {
    let store = MemoryMetadataStore::new();
    let s = storage(cached, &store);
    let p = store.partition_of("g");
    store.append_blocking(p, OwnerEpoch(9), vec![]).unwrap();
    let before = store.append_count();
    let batch: Vec<_> = (0..50).map(|i| (tp("t", i), OffsetAndMetadata::new(i64::from(i), 1))).collect();
    s.store_offsets("g", &batch).unwrap();
    assert_eq!(store.append_count(), before + 1, "a multi-partition store is one append");
    s.delete_partitions("g", &[tp("t", 0), tp("t", 1)]).unwrap();
    s.store_group(GroupMetadataRecord { group_id: "g".into(), ..GroupMetadataRecord::default() }).unwrap();
    s.delete_group("g").unwrap();
    s.delete_offsets("g").unwrap();
    assert_eq!(store.append_count(), before + 5, "one append per write");
    assert_eq!(store.owner_epoch(p).unwrap(), OwnerEpoch(9), "writes keep the partition's epoch");
    s.store_offsets("g", &[]).unwrap();
    s.delete_partitions("g", &[]).unwrap();
    assert_eq!(store.append_count(), before + 5, "empty writes append nothing");
    let loaded = store.load(p).unwrap();
    assert_eq!(loaded.epoch, OwnerEpoch(9));
    assert!(loaded.groups.groups.is_empty() && loaded.groups.offsets.is_empty(), "{loaded:?}");
}

/// A write that lands while its append is held waits for the release and
/// reports its outcome; a failed release leaves the cache and store unchanged.
#[rstest]
fn a_held_write_waits_and_a_failed_one_changes_nothing(#[values(false, true)] cached: bool) {
    let store = MemoryMetadataStore::new();
    let s = std::sync::Arc::new(storage(cached, &store));
    s.store_offset("g", &tp("t", 0), OffsetAndMetadata::new(1, 1)).unwrap();
    assert_eq!(s.fetch_offset("g", &tp("t", 0)).unwrap().map(|o| o.offset), Some(1));
    store.hold_appends(true);
    let writer = {
        let s = std::sync::Arc::clone(&s);
        std::thread::spawn(move || s.store_offset("g", &tp("t", 0), OffsetAndMetadata::new(2, 2)))
    };
    while store.held_appends() == 0 {
        std::thread::yield_now();
    }
    store.hold_appends(false);
    assert!(store.release_held(None, Some(StorageError::io("replica lost"))));
    assert_eq!(writer.join().unwrap(), Err(StorageError::io("replica lost")));
    assert_eq!(s.fetch_offset("g", &tp("t", 0)).unwrap().map(|o| o.offset), Some(1));
    s.store_offset("g", &tp("t", 0), OffsetAndMetadata::new(3, 3)).unwrap();
    assert_eq!(s.fetch_offset("g", &tp("t", 0)).unwrap().map(|o| o.offset), Some(3));
}

#[test]
fn clones_share_the_read_cache() {
    let store = MemoryMetadataStore::new();
    let s = PersistentOffsetStorage::with_read_cache(store.clone());
    let clone = s.clone();
    assert_eq!(s.fetch_offset("g", &tp("t", 0)).unwrap(), None);
    clone.store_offset("g", &tp("t", 0), OffsetAndMetadata::new(5, 5)).unwrap();
    assert_eq!(
        s.fetch_offset("g", &tp("t", 0)).unwrap().map(|o| o.offset),
        Some(5),
        "a clone's cache went stale"
    );
}

#[test]
fn memory_offset_storage_is_persistent_storage_over_memory() {
    let storage = MemoryOffsetStorage::new();
    storage.store_offset("g", &tp("t", 0), OffsetAndMetadata::new(5, 5)).unwrap();
    let clone = storage.clone();
    assert_eq!(clone.store().fetch_group_offset("g", "t", 0).unwrap().map(|o| o.offset), Some(5));
    assert_eq!(clone.offset_count(), 1);
    clone.store().fail_writes(Some(disk_full()));
    assert_eq!(storage.store_offset("g", &tp("t", 0), OffsetAndMetadata::new(6, 6)), Err(disk_full()));
    let over = MemoryOffsetStorage::over(storage.store().clone());
    assert_eq!(over.fetch_offset("g", &tp("t", 0)).unwrap().map(|o| o.offset), Some(5));
    assert_eq!(MemoryOffsetStorage::default().offset_count(), 0);
}

#[rstest]
fn kept_offsets_do_not_pin_the_frame_their_metadata_was_cut_from(#[values(false, true)] cached: bool) {
    let store = MemoryMetadataStore::new();
    let storage = storage(cached, &store);
    // Read first, so that a cached storage has the group in its cache when the writes land.
    assert_eq!(storage.fetch_offsets("g").unwrap().len(), 0);
    let frame = bytes::Bytes::from(b"\x00\x0ccheckpoint-7".to_vec());
    let offset = |n| OffsetAndMetadata {
        metadata: CommitMetadata::from_utf8(frame.slice(2..)).unwrap(),
        ..OffsetAndMetadata::new(n, 0)
    };
    storage.store_offset("g", &tp("t", 0), offset(1)).unwrap();
    storage.store_offsets("g", &[(tp("t", 1), offset(2)), (tp("u", 0), offset(3))]).unwrap();
    assert!(frame.is_unique(), "a kept offset holds the frame");
    let kept = storage.fetch_offsets("g").unwrap();
    assert_eq!(kept.len(), 3);
    assert!(kept.offsets.values().flat_map(|p| p.values()).all(|o| o.metadata == "checkpoint-7"));
}
