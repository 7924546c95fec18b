//! The conformance suite, run against every storage this crate ships.

use std::sync::Arc;

use group_offsets::conformance;
use group_offsets::{
    GroupMetadataRecord, MemoryMetadataStore, MemoryOffsetStorage, MetadataStore, OffsetStorage,
    PersistentOffsetStorage, StorageError, StoredGroups,
};
use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};
use rstest::rstest;

#[test]
fn memory_metadata_store_conforms() {
    conformance::metadata_store_suite(MemoryMetadataStore::new);
}

#[test]
fn memory_metadata_store_survives_a_restart() {
    conformance::metadata_store_restart_suite(MemoryMetadataStore::new, |store| store.clone());
}

#[test]
fn memory_offset_storage_conforms() {
    conformance::offset_storage_suite(MemoryOffsetStorage::new);
}

#[test]
fn persistent_storage_without_cache_conforms() {
    conformance::offset_storage_suite(|| PersistentOffsetStorage::new(MemoryMetadataStore::new()));
}

#[test]
fn persistent_storage_with_cache_conforms() {
    conformance::offset_storage_suite(
        || PersistentOffsetStorage::with_read_cache(MemoryMetadataStore::new()),
    );
}

#[test]
fn shared_storage_conforms_through_arc_and_box() {
    conformance::offset_storage_suite(|| Arc::new(MemoryOffsetStorage::new()) as Arc<dyn OffsetStorage>);
    conformance::metadata_store_suite(|| Box::new(MemoryMetadataStore::new()) as Box<dyn MetadataStore>);
}

/// A deliberately broken store, to prove the suite catches each kind of bug.
#[derive(Debug, Clone, Copy)]
enum Bug {
    /// Metadata cut at the first NUL, as a C-string-minded engine would.
    TruncatesAtNul,
    /// A batch naming a partition twice keeps the first entry.
    BatchKeepsFirst,
    /// Deleting partitions does nothing.
    IgnoresPartitionDeletes,
    /// `load_all` forgets group records.
    LoadSkipsRecords,
    /// Keys built by bare concatenation: group "a" + topic "bt" == group "ab" + topic "t".
    ConcatenatedKeys,
}

#[derive(Debug)]
struct Broken {
    inner: MemoryMetadataStore,
    bug: Bug,
}

impl Broken {
    fn offset(&self, offset: &OffsetAndMetadata) -> OffsetAndMetadata {
        match self.bug {
            Bug::TruncatesAtNul => OffsetAndMetadata {
                metadata: offset.metadata.split('\0').next().unwrap_or("").to_owned(),
                ..offset.clone()
            },
            _ => offset.clone(),
        }
    }

    /// Under `ConcatenatedKeys`, every group shares one namespace keyed by `group + topic`.
    fn key(&self, group_id: &str, topic: &str) -> (String, String) {
        match self.bug {
            Bug::ConcatenatedKeys => (String::new(), format!("{group_id}{topic}")),
            _ => (group_id.to_owned(), topic.to_owned()),
        }
    }
}

impl MetadataStore for Broken {
    fn store_group_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
        offset: &OffsetAndMetadata,
    ) -> Result<(), StorageError> {
        let (g, t) = self.key(group_id, topic);
        self.inner.store_group_offset(&g, &t, partition, &self.offset(offset))
    }

    fn store_group_offsets(
        &self,
        group_id: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> Result<(), StorageError> {
        let mut batch: Vec<_> = offsets
            .iter()
            .map(|(tp, o)| {
                let (_, t) = self.key(group_id, tp.topic());
                (TopicPartition::new(t, tp.partition), self.offset(o))
            })
            .collect();
        if let Bug::BatchKeepsFirst = self.bug {
            batch.reverse();
        }
        self.inner.store_group_offsets(&self.key(group_id, "").0, &batch)
    }

    fn fetch_group_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
    ) -> Result<Option<OffsetAndMetadata>, StorageError> {
        let (g, t) = self.key(group_id, topic);
        self.inner.fetch_group_offset(&g, &t, partition)
    }

    fn fetch_group_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
        let mut all = self.inner.fetch_group_offsets(&self.key(group_id, "").0)?;
        if let Bug::ConcatenatedKeys = self.bug {
            all.offsets = all
                .offsets
                .into_iter()
                .filter_map(|(k, v)| k.strip_prefix(group_id).map(|t| (t.to_owned(), v)))
                .collect();
        }
        all.group_id = group_id.to_owned();
        Ok(all)
    }

    fn delete_group_offsets(&self, group_id: &str) -> Result<(), StorageError> {
        self.inner.delete_group_offsets(group_id)
    }

    fn delete_group_partitions(
        &self,
        group_id: &str,
        partitions: &[TopicPartition],
    ) -> Result<(), StorageError> {
        match self.bug {
            Bug::IgnoresPartitionDeletes => Ok(()),
            _ => self.inner.delete_group_partitions(group_id, partitions),
        }
    }

    fn store_group_metadata(&self, record: &GroupMetadataRecord) -> Result<(), StorageError> {
        self.inner.store_group_metadata(record)
    }

    fn fetch_group_metadata(&self, group_id: &str) -> Result<Option<GroupMetadataRecord>, StorageError> {
        self.inner.fetch_group_metadata(group_id)
    }

    fn delete_group_metadata(&self, group_id: &str) -> Result<(), StorageError> {
        self.inner.delete_group_metadata(group_id)
    }

    fn load_all(&self) -> Result<StoredGroups, StorageError> {
        let mut all = self.inner.load_all()?;
        if let Bug::LoadSkipsRecords = self.bug {
            all.groups.clear();
        }
        Ok(all)
    }
}

fn suite_failure(bug: Bug) -> String {
    let outcome = std::panic::catch_unwind(|| {
        conformance::metadata_store_suite(|| Broken { inner: MemoryMetadataStore::new(), bug });
    });
    match outcome {
        Ok(()) => String::new(),
        Err(panic) => panic.downcast_ref::<String>().cloned().unwrap_or_default(),
    }
}

#[rstest]
#[case::truncates_at_nul(Bug::TruncatesAtNul, "[values_round_trip_exactly]")]
#[case::batch_keeps_first(Bug::BatchKeepsFirst, "[multi_partition_store]")]
#[case::ignores_partition_deletes(Bug::IgnoresPartitionDeletes, "[delete_partitions]")]
#[case::load_skips_records(Bug::LoadSkipsRecords, "[load_all_returns_everything]")]
#[case::concatenated_keys(Bug::ConcatenatedKeys, "[keys_that_prefix_each_other_stay_apart]")]
fn the_suite_names_the_broken_rule(#[case] bug: Bug, #[case] check: &str) {
    let message = suite_failure(bug);
    assert!(
        message.contains("MetadataStore conformance checks failed"),
        "{bug:?} passed the suite: {message:?}"
    );
    assert!(message.contains(check), "{bug:?} should fail {check}, got:\n{message}");
}

#[test]
fn the_restart_suite_catches_a_store_that_forgets() {
    let outcome = std::panic::catch_unwind(|| {
        conformance::metadata_store_restart_suite(MemoryMetadataStore::new, |_forgetful| {
            MemoryMetadataStore::new()
        });
    });
    let message = outcome.err().and_then(|p| p.downcast_ref::<String>().cloned()).unwrap_or_default();
    assert!(message.contains("after reopening"), "a store that forgets everything passed: {message:?}");
}

#[test]
fn checks_can_run_one_by_one() {
    let names: Vec<_> = conformance::METADATA_STORE_CHECKS.iter().map(|(name, _)| *name).collect();
    assert!(names.len() >= 14, "{names:?}");
    for (_, check) in conformance::METADATA_STORE_CHECKS {
        check(&MemoryMetadataStore::new());
    }
    for (_, check) in conformance::OFFSET_STORAGE_CHECKS {
        check(&MemoryOffsetStorage::new());
    }
}
