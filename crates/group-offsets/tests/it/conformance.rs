//! The conformance suite, run against every storage this crate ships, and
//! against deliberately broken engines to prove it catches each kind of bug.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use group_offsets::conformance;
use group_offsets::{
    AppendCompletion, CoordinatorPartition, LoadedPartition, MemoryMetadataStore, MemoryOffsetStorage,
    MetadataStore, OffsetStorage, OwnerEpoch, PersistentOffsetStorage, Record, StorageError,
};
use group_types::{OffsetAndMetadata, TopicPartition};
use rstest::rstest;

use crate::consumer_bugs::{Concatenated, tombstone_of};

#[test]
fn memory_metadata_store_conforms() {
    conformance::metadata_store_suite(MemoryMetadataStore::new);
}

#[rstest]
#[case::one(1)]
#[case::three(3)]
#[case::twelve(12)]
fn memory_metadata_store_conforms_with_any_partition_count(#[case] partitions: u32) {
    conformance::metadata_store_suite(|| MemoryMetadataStore::with_partitions(partitions));
}

#[test]
fn memory_metadata_store_survives_a_restart() {
    conformance::metadata_store_restart_suite(MemoryMetadataStore::new, |store| store.clone());
}

#[test]
fn memory_offset_storage_conforms() {
    conformance::offset_storage_suite(MemoryOffsetStorage::new);
}

#[rstest]
fn persistent_storage_conforms(#[values(false, true)] cached: bool) {
    conformance::offset_storage_suite(|| {
        if cached {
            PersistentOffsetStorage::with_read_cache(MemoryMetadataStore::new())
        } else {
            PersistentOffsetStorage::new(MemoryMetadataStore::new())
        }
    });
}

#[test]
fn shared_storage_conforms_through_arc_and_box() {
    conformance::offset_storage_suite(|| Arc::new(MemoryOffsetStorage::new()) as Arc<dyn OffsetStorage>);
    conformance::metadata_store_suite(|| Box::new(MemoryMetadataStore::new()) as Box<dyn MetadataStore>);
}

/// An engine of `append` and `load` only, with the bug under test: every
/// provided method runs its default, so the faithful one (`Bug::None`) also
/// proves the provided methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bug {
    None,
    /// Metadata cut at the first NUL, as a C-string-minded engine would.
    TruncatesAtNul,
    /// The records of one append applied in reverse: the first of a key wins.
    BatchKeepsFirst,
    /// Offset tombstones are dropped.
    IgnoresOffsetTombstones,
    /// A group tombstone removes the group's offsets too.
    GroupTombstoneRemovesOffsets,
    /// Keys built by bare concatenation: group "a" + topic "bt" == group "ab" + topic "t".
    ConcatenatedKeys,
    /// A stale append is applied (at the current epoch) and then reported fenced.
    AppliesBeforeFencing,
    /// Epochs are never checked.
    IgnoresEpochs,
    /// Appends of a partition issued without waiting are applied in swapped pairs.
    SwapsAppendPairs,
    /// Every partition's records land in one place.
    MixesPartitions,
    /// Consumer records are dropped.
    DropsConsumerRecords,
    /// Consumer tombstones are dropped.
    IgnoresConsumerTombstones,
    /// A group tombstone removes the group's consumer records too.
    GroupTombstoneRemovesConsumerRecords,
    /// Consumer keys built by bare concatenation: group "a" + member "bm" == group "ab" + member "m".
    ConcatenatedConsumerKeys,
}

/// A concatenated key's last writer: its group and topic.
type Owner = (Arc<str>, Arc<str>);

/// An append waiting for its successor.
type Waiting = (OwnerEpoch, Vec<Record>, AppendCompletion);

#[derive(Debug)]
struct Broken {
    inner: MemoryMetadataStore,
    bug: Bug,
    /// `ConcatenatedKeys`: who last wrote each concatenated key.
    owners: Mutex<HashMap<String, Owner>>,
    /// `SwapsAppendPairs`: an append waiting for its successor, per partition.
    waiting: Mutex<HashMap<u32, Waiting>>,
    /// `ConcatenatedConsumerKeys`: who last wrote each concatenated key.
    consumer_owners: Mutex<Concatenated>,
}

impl Broken {
    fn new(bug: Bug) -> Broken {
        Broken {
            inner: MemoryMetadataStore::new(),
            bug,
            owners: Mutex::default(),
            waiting: Mutex::default(),
            consumer_owners: Mutex::default(),
        }
    }

    fn transform(&self, records: Vec<Record>) -> Vec<Record> {
        let mut out: Vec<Record> = records
            .into_iter()
            .filter_map(|record| match (self.bug, record) {
                (Bug::TruncatesAtNul, Record::Offset { group_id, partition, offset }) => {
                    Some(Record::Offset {
                        group_id,
                        partition,
                        offset: OffsetAndMetadata {
                            metadata: offset.metadata.split('\0').next().unwrap_or("").into(),
                            ..offset
                        },
                    })
                }
                (Bug::IgnoresOffsetTombstones, Record::OffsetTombstone { .. }) => None,
                (Bug::ConcatenatedKeys, Record::Offset { group_id, partition, offset }) => {
                    Some(Record::Offset {
                        group_id: Arc::from(""),
                        partition: self.concat(&group_id, &partition),
                        offset,
                    })
                }
                (Bug::ConcatenatedKeys, Record::OffsetTombstone { group_id, partition }) => {
                    Some(Record::OffsetTombstone {
                        group_id: Arc::from(""),
                        partition: self.concat(&group_id, &partition),
                    })
                }
                (Bug::DropsConsumerRecords, Record::Modern(_)) => None,
                (Bug::IgnoresConsumerTombstones, Record::Modern(r)) if r.is_tombstone() => None,
                (Bug::ConcatenatedConsumerKeys, Record::Modern(r)) => {
                    Some(Record::Modern(self.consumer_owners.lock().unwrap().join(r)))
                }
                (_, record) => Some(record),
            })
            .collect();
        if self.bug == Bug::BatchKeepsFirst {
            out.reverse();
        }
        out
    }

    fn concat(&self, group: &Arc<str>, partition: &TopicPartition) -> TopicPartition {
        let key = format!("{group}{}", partition.topic());
        self.owners.lock().unwrap().insert(key.clone(), (Arc::clone(group), Arc::clone(&partition.topic)));
        TopicPartition::new(key, partition.partition)
    }

    fn apply(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
        completion: AppendCompletion,
    ) {
        let partition = if self.bug == Bug::MixesPartitions { CoordinatorPartition(0) } else { partition };
        let current = self.inner.owner_epoch(partition).unwrap_or_default();
        let records = match self.bug {
            Bug::GroupTombstoneRemovesOffsets => self.with_offset_tombstones(partition, records),
            Bug::GroupTombstoneRemovesConsumerRecords => self.with_consumer_tombstones(partition, records),
            _ => records,
        };
        let stale = epoch < current;
        match self.bug {
            Bug::AppliesBeforeFencing if stale => {
                let _ = self.inner.append_blocking(partition, current, self.transform(records));
                completion.complete(Err(StorageError::Fenced {
                    partition: partition.0,
                    epoch: epoch.0,
                    current: current.0,
                }));
            }
            Bug::IgnoresEpochs => {
                self.inner.append(partition, epoch.max(current), self.transform(records), completion)
            }
            _ => self.inner.append(partition, epoch, self.transform(records), completion),
        }
    }

    /// `GroupTombstoneRemovesOffsets`: a tombstone for every offset of each removed group.
    fn with_offset_tombstones(&self, partition: CoordinatorPartition, records: Vec<Record>) -> Vec<Record> {
        let loaded = self.inner.load(partition).unwrap_or_default();
        let mut out = Vec::new();
        for record in records {
            if let Record::GroupTombstone { group_id } = &record {
                for group in loaded.groups.offsets.iter().filter(|g| *g.group_id == **group_id) {
                    for (topic, partitions) in &group.offsets {
                        out.extend(partitions.keys().map(|p| Record::OffsetTombstone {
                            group_id: Arc::clone(group_id),
                            partition: TopicPartition::new(topic.as_str(), *p),
                        }));
                    }
                }
            }
            out.push(record);
        }
        out
    }

    /// `GroupTombstoneRemovesConsumerRecords`: a tombstone for every consumer
    /// record of each removed group.
    fn with_consumer_tombstones(&self, partition: CoordinatorPartition, records: Vec<Record>) -> Vec<Record> {
        let loaded = self.inner.load(partition).unwrap_or_default();
        let mut out = Vec::new();
        for record in records {
            if let Record::GroupTombstone { group_id } = &record {
                let of_group = loaded.groups.consumer.iter().filter(|r| r.group_id() == group_id);
                out.extend(of_group.map(|r| Record::Modern(tombstone_of(r))));
            }
            out.push(record);
        }
        out
    }

    /// `SwapsAppendPairs`: applies what waits, in order, before anything else looks.
    fn flush(&self, partition: Option<CoordinatorPartition>) {
        let waiting: Vec<_> = {
            let mut waiting = self.waiting.lock().unwrap();
            let keys: Vec<u32> =
                waiting.keys().copied().filter(|p| partition.is_none_or(|q| q.0 == *p)).collect();
            keys.into_iter().filter_map(|p| waiting.remove(&p).map(|w| (p, w))).collect()
        };
        for (p, (epoch, records, completion)) in waiting {
            self.apply(CoordinatorPartition(p), epoch, records, completion);
        }
    }
}

impl MetadataStore for Broken {
    fn append(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
        completion: AppendCompletion,
    ) {
        if self.bug != Bug::SwapsAppendPairs {
            return self.apply(partition, epoch, records, completion);
        }
        let earlier = {
            let mut waiting = self.waiting.lock().unwrap();
            match waiting.remove(&partition.0) {
                Some(earlier) => earlier,
                None => {
                    waiting.insert(partition.0, (epoch, records, completion));
                    return;
                }
            }
        };
        self.apply(partition, epoch, records, completion);
        self.apply(partition, earlier.0, earlier.1, earlier.2);
    }

    fn append_blocking(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
    ) -> Result<(), StorageError> {
        self.flush(Some(partition));
        let (completion, rx) = AppendCompletion::channel();
        self.apply(partition, epoch, records, completion);
        rx.recv().unwrap()
    }

    fn load(&self, partition: CoordinatorPartition) -> Result<LoadedPartition, StorageError> {
        self.flush(None);
        let partition = if self.bug == Bug::MixesPartitions { CoordinatorPartition(0) } else { partition };
        let mut loaded = self.inner.load(partition)?;
        if self.bug == Bug::ConcatenatedConsumerKeys {
            self.consumer_owners.lock().unwrap().split(&mut loaded.groups);
        }
        if self.bug == Bug::ConcatenatedKeys {
            let owners = self.owners.lock().unwrap();
            let mut split = Vec::new();
            loaded.groups.offsets.retain(|g| {
                if !g.group_id.is_empty() {
                    return true;
                }
                for (key, partitions) in &g.offsets {
                    let (group, topic) = &owners[key];
                    for (p, o) in partitions {
                        split.push((group.to_string(), topic.to_string(), *p, o.clone()));
                    }
                }
                false
            });
            for (group, topic, p, o) in split {
                let index = match loaded.groups.offsets.iter().position(|g| g.group_id == group) {
                    Some(i) => i,
                    None => {
                        loaded.groups.offsets.push(group_types::GroupOffsets::new(group));
                        loaded.groups.offsets.len() - 1
                    }
                };
                loaded.groups.offsets[index].offsets.entry(topic).or_default().insert(p, o);
            }
        }
        Ok(loaded)
    }
}

fn suite_failure(bug: Bug) -> String {
    let outcome = std::panic::catch_unwind(|| conformance::metadata_store_suite(|| Broken::new(bug)));
    match outcome {
        Ok(()) => String::new(),
        Err(panic) => panic.downcast_ref::<String>().cloned().unwrap_or_default(),
    }
}

#[test]
fn an_engine_of_append_and_load_alone_conforms() {
    let message = suite_failure(Bug::None);
    assert_eq!(message, "", "the faithful engine failed the suite");
}

#[rstest]
#[case::truncates_at_nul(Bug::TruncatesAtNul, "[append_and_load_round_trip_exactly]")]
#[case::batch_keeps_first(Bug::BatchKeepsFirst, "[later_records_replace_earlier]")]
#[case::ignores_offset_tombstones(Bug::IgnoresOffsetTombstones, "[tombstones_remove]")]
#[case::group_tombstone_removes_offsets(
    Bug::GroupTombstoneRemovesOffsets,
    "[group_records_and_offsets_are_independent]"
)]
#[case::concatenated_keys(Bug::ConcatenatedKeys, "[keys_that_prefix_each_other_stay_apart]")]
#[case::applies_before_fencing(Bug::AppliesBeforeFencing, "[a_refused_append_applies_nothing]")]
#[case::ignores_epochs(Bug::IgnoresEpochs, "[epochs_fence_and_rise]")]
#[case::swaps_append_pairs(Bug::SwapsAppendPairs, "[appends_of_a_partition_apply_in_call_order]")]
#[case::mixes_partitions(Bug::MixesPartitions, "[loads_are_scoped_to_their_partition]")]
#[case::drops_modern_records(Bug::DropsConsumerRecords, "[modern_records_round_trip_exactly]")]
#[case::ignores_consumer_tombstones(Bug::IgnoresConsumerTombstones, "[consumer_tombstones_remove]")]
#[case::group_tombstone_removes_modern_records(
    Bug::GroupTombstoneRemovesConsumerRecords,
    "[modern_records_leave_offsets_and_group_records_alone]"
)]
#[case::concatenated_consumer_keys(Bug::ConcatenatedConsumerKeys, "[consumer_keys_stay_apart]")]
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

/// Reopening copies every record but starts every epoch at 0 again.
#[test]
fn the_restart_suite_catches_a_store_that_forgets_epochs() {
    let outcome = std::panic::catch_unwind(|| {
        conformance::metadata_store_restart_suite(MemoryMetadataStore::new, |old| {
            let new = MemoryMetadataStore::new();
            for p in 0..old.partition_count() {
                let p = CoordinatorPartition(p);
                let loaded = old.load(p).unwrap();
                let mut records: Vec<Record> =
                    loaded.groups.groups.into_iter().map(|g| Record::Group(Box::new(g))).collect();
                records.extend(loaded.groups.consumer.into_iter().map(Record::Modern));
                for group in loaded.groups.offsets {
                    let id: Arc<str> = Arc::from(group.group_id.as_str());
                    for (topic, partitions) in group.offsets {
                        for (partition, offset) in partitions {
                            let partition = TopicPartition::new(topic.as_str(), partition);
                            records.push(Record::Offset { group_id: Arc::clone(&id), partition, offset });
                        }
                    }
                }
                new.append_blocking(p, OwnerEpoch(0), records).unwrap();
            }
            new
        });
    });
    let message = outcome.err().and_then(|p| p.downcast_ref::<String>().cloned()).unwrap_or_default();
    assert!(
        message.contains("epoch") && message.contains("after reopening"),
        "a store that forgets epochs passed: {message:?}"
    );
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
