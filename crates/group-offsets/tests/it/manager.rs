//! `OffsetManager`: commits, fetches, resets and offset validation.

use group_offsets::{
    MemoryMetadataStore, MemoryOffsetStorage, NO_OFFSET, OffsetError, OffsetManager, PersistentOffsetStorage,
    RetentionGroup, StorageError,
};
use group_types::{ErrorCode, GroupState, OffsetAndMetadata, TopicPartition};
use rstest::rstest;

fn tp(topic: &str, partition: i32) -> TopicPartition {
    TopicPartition::new(topic, partition)
}

fn with_metadata(offset: i64, metadata: &str) -> OffsetAndMetadata {
    OffsetAndMetadata { metadata: metadata.into(), ..OffsetAndMetadata::new(offset, 1_000) }
}

#[test]
fn nothing_committed_reads_minus_one() {
    let m = OffsetManager::new(MemoryOffsetStorage::new());
    assert_eq!(NO_OFFSET, -1);
    assert_eq!(m.get_offset("unknown", &tp("t", 0)).unwrap(), -1);
    m.commit_offset("g", &tp("t", 0), OffsetAndMetadata::new(0, 1)).unwrap();
    assert_eq!(m.get_offset("g", &tp("t", 1)).unwrap(), -1);
    assert_eq!(m.get_offset("g", &tp("u", 0)).unwrap(), -1);
    assert_eq!(m.get_offset("g", &tp("t", 0)).unwrap(), 0);
    assert!(m.get_all_offsets("unknown").unwrap().is_empty());
}

#[test]
fn commit_then_fetch_all_and_reset() {
    let m = OffsetManager::new(PersistentOffsetStorage::new(MemoryMetadataStore::new()));
    m.commit_offset("g", &tp("a", 0), OffsetAndMetadata::new(10, 1)).unwrap();
    m.commit_offset("g", &tp("a", 1), OffsetAndMetadata::new(11, 1)).unwrap();
    m.commit_offset("g", &tp("b", 0), OffsetAndMetadata::new(20, 1)).unwrap();
    m.commit_offset("g", &tp("a", 0), OffsetAndMetadata::new(3, 2)).unwrap();
    m.commit_offset("other", &tp("a", 0), OffsetAndMetadata::new(7, 1)).unwrap();
    let all = m.get_all_offsets("g").unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all["a"].iter().map(|(p, o)| (*p, *o)).collect::<Vec<_>>(), [(0, 3), (1, 11)]);
    assert_eq!(all["b"][&0], 20);
    m.reset_offsets("g").unwrap();
    assert!(m.get_all_offsets("g").unwrap().is_empty());
    assert_eq!(m.get_offset("g", &tp("a", 0)).unwrap(), -1);
    assert_eq!(m.get_offset("other", &tp("a", 0)).unwrap(), 7, "a reset touches one group only");
}

#[rstest]
#[case::inside(5, 0, 10, None)]
#[case::at_min(0, 0, 10, None)]
#[case::at_max(10, 0, 10, None)]
#[case::single_point(7, 7, 7, None)]
#[case::below(-1, 0, 10, Some(OffsetError::OutOfRange { offset: -1, min: 0, max: 10 }))]
#[case::above(11, 0, 10, Some(OffsetError::OutOfRange { offset: 11, min: 0, max: 10 }))]
#[case::extremes_inside(i64::MAX, i64::MIN, i64::MAX, None)]
#[case::empty_range(5, 10, 0, Some(OffsetError::InvalidRange { min: 10, max: 0 }))]
fn validate_offset_table(
    #[case] offset: i64,
    #[case] min: i64,
    #[case] max: i64,
    #[case] error: Option<OffsetError>,
) {
    let m = OffsetManager::new(MemoryOffsetStorage::new());
    assert_eq!(m.validate_offset(offset, min, max).err(), error);
    assert_eq!(group_offsets::validate_offset(offset, min, max).err(), error);
}

#[test]
fn an_oversized_commit_is_refused_with_its_partition() {
    let m = OffsetManager::new(MemoryOffsetStorage::new()).with_metadata_max_bytes(8);
    assert_eq!(m.metadata_max_bytes(), 8);
    let err = m.commit_offset("g", &tp("t", 3), with_metadata(1, "123456789")).unwrap_err();
    assert_eq!(err, OffsetError::MetadataTooLarge { partition: tp("t", 3), length: 9, max: 8 });
    assert_eq!(err.error_code(), ErrorCode::OffsetMetadataTooLarge);
    assert_eq!(m.get_offset("g", &tp("t", 3)).unwrap(), -1, "a refused commit stores nothing");
    m.commit_offset("g", &tp("t", 3), with_metadata(2, "12345678")).unwrap();
    assert_eq!(m.get_offset("g", &tp("t", 3)).unwrap(), 2);
}

#[test]
fn a_request_with_one_oversized_partition_commits_the_others() {
    let m = OffsetManager::new(MemoryOffsetStorage::new()).with_metadata_max_bytes(4);
    let results = m.commit_offsets(
        "g",
        &[
            (tp("t", 0), with_metadata(10, "ok")),
            (tp("t", 1), with_metadata(11, "too long")),
            (tp("u", 0), with_metadata(12, "")),
        ],
    );
    let codes: Vec<_> =
        results.iter().map(|(p, r)| (p.clone(), r.as_ref().err().map(OffsetError::error_code))).collect();
    assert_eq!(
        codes,
        [(tp("t", 0), None), (tp("t", 1), Some(ErrorCode::OffsetMetadataTooLarge)), (tp("u", 0), None)]
    );
    assert_eq!(m.get_offset("g", &tp("t", 0)).unwrap(), 10);
    assert_eq!(m.get_offset("g", &tp("t", 1)).unwrap(), -1);
    assert_eq!(m.get_offset("g", &tp("u", 0)).unwrap(), 12);
}

#[test]
fn a_storage_failure_fails_the_written_partitions_only() {
    let store = MemoryMetadataStore::new();
    let m = OffsetManager::new(PersistentOffsetStorage::new(store.clone())).with_metadata_max_bytes(4);
    store.fail_writes(Some(StorageError::io("disk full")));
    let results = m.commit_offsets(
        "g",
        &[(tp("t", 0), with_metadata(10, "ok")), (tp("t", 1), with_metadata(11, "too long"))],
    );
    assert_eq!(results[0].1, Err(OffsetError::Storage(StorageError::io("disk full"))));
    assert!(matches!(results[1].1, Err(OffsetError::MetadataTooLarge { .. })), "keeps its own error");
    assert!(matches!(m.commit_offset("g", &tp("t", 0), with_metadata(1, "")), Err(OffsetError::Storage(_))));

    // Nothing left to write: the failing store is not even asked.
    let results = m.commit_offsets("g", &[(tp("t", 1), with_metadata(11, "too long"))]);
    assert!(matches!(results[0].1, Err(OffsetError::MetadataTooLarge { .. })));
    store.fail_writes(None);
    assert!(m.get_all_offsets("g").unwrap().is_empty());
}

#[test]
fn expire_offsets_deletes_what_retention_names() {
    let m = OffsetManager::new(MemoryOffsetStorage::new());
    m.commit_offset("g", &tp("old", 0), OffsetAndMetadata::new(1, 100)).unwrap();
    m.commit_offset("g", &tp("new", 0), OffsetAndMetadata::new(2, 900)).unwrap();
    let simple = RetentionGroup::new(GroupState::Empty, None);
    assert_eq!(m.expire_offsets("g", &simple, 1_000, 500).unwrap(), [tp("old", 0)]);
    assert_eq!(m.get_offset("g", &tp("old", 0)).unwrap(), -1);
    assert_eq!(m.get_offset("g", &tp("new", 0)).unwrap(), 2);
    let stable = RetentionGroup::new(GroupState::Stable, Some(0)).with_protocol_type("consumer");
    assert!(
        m.expire_offsets("g", &stable, i64::MAX, 1).unwrap().is_empty(),
        "unknown subscriptions keep everything"
    );
    assert_eq!(m.get_offset("g", &tp("new", 0)).unwrap(), 2);
}

#[test]
fn the_manager_works_over_a_shared_storage() {
    let storage = std::sync::Arc::new(MemoryOffsetStorage::new());
    let a = OffsetManager::new(std::sync::Arc::clone(&storage));
    let b = OffsetManager::new(storage.clone() as std::sync::Arc<dyn group_offsets::OffsetStorage>);
    a.commit_offset("g", &tp("t", 0), OffsetAndMetadata::new(5, 1)).unwrap();
    assert_eq!(b.get_offset("g", &tp("t", 0)).unwrap(), 5);
    assert_eq!(storage.offset_count(), 1);
}
