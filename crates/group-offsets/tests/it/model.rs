//! Random operation sequences against plain `BTreeMap` models: every
//! storage answers every fetch as the model does, whatever the order of
//! writes, deletions and injected failures; and the memory store applies and
//! completes appends as the contract (and its hold hooks) say, whatever the
//! order of appends, holds, releases and epochs.

use std::collections::BTreeMap;
use std::sync::{Arc, mpsc};

use group_offsets::{
    AppendCompletion, CoordinatorPartition, GroupMetadataRecord, LoadedPartition, MemoryMetadataStore,
    MemoryOffsetStorage, MetadataStore, OffsetStorage, OwnerEpoch, PersistentOffsetStorage, Record,
    StorageError, StoredGroups,
};
use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Store(usize, usize, i64),
    StoreMany(usize, Vec<(usize, i64)>),
    DeleteAll(usize),
    DeletePartitions(usize, Vec<usize>),
    Fetch(usize, usize),
    FetchAll(usize),
    /// Makes the store fail (persistent storages only) until `Heal`.
    Break,
    Heal,
}

const GROUPS: [&str; 3] = ["a", "ab", ""];

fn partition(i: usize) -> TopicPartition {
    TopicPartition::new(["t", "t1", "u"][i % 3], (i / 3) as i32)
}

fn op() -> impl Strategy<Value = Op> {
    let group = 0..GROUPS.len();
    let part = 0usize..9;
    prop_oneof![
        4 => (group.clone(), part.clone(), any::<i64>()).prop_map(|(g, p, o)| Op::Store(g, p, o)),
        3 => (group.clone(), prop::collection::vec((part.clone(), any::<i64>()), 0..5))
            .prop_map(|(g, b)| Op::StoreMany(g, b)),
        1 => group.clone().prop_map(Op::DeleteAll),
        2 => (group.clone(), prop::collection::vec(part.clone(), 0..4)).prop_map(|(g, p)| Op::DeletePartitions(g, p)),
        3 => (group.clone(), part).prop_map(|(g, p)| Op::Fetch(g, p)),
        3 => group.prop_map(Op::FetchAll),
        1 => Just(Op::Break),
        1 => Just(Op::Heal),
    ]
}

type Model = BTreeMap<(usize, TopicPartition), OffsetAndMetadata>;

fn run(
    storage: &dyn OffsetStorage,
    faults: Option<&MemoryMetadataStore>,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let mut model = Model::new();
    let mut broken = false;
    for op in ops {
        let failing = broken && faults.is_some();
        match op {
            Op::Store(g, p, o) => {
                let result = storage.store_offset(GROUPS[*g], &partition(*p), OffsetAndMetadata::new(*o, 1));
                prop_assert_eq!(result.is_err(), failing);
                if !failing {
                    model.insert((*g, partition(*p)), OffsetAndMetadata::new(*o, 1));
                }
            }
            Op::StoreMany(g, batch) => {
                let batch: Vec<_> =
                    batch.iter().map(|(p, o)| (partition(*p), OffsetAndMetadata::new(*o, 2))).collect();
                let result = storage.store_offsets(GROUPS[*g], &batch);
                prop_assert_eq!(result.is_err(), failing && !batch.is_empty());
                if !failing {
                    for (tp, o) in batch {
                        model.insert((*g, tp), o);
                    }
                }
            }
            Op::DeleteAll(g) => {
                let result = storage.delete_offsets(GROUPS[*g]);
                // Deleting nothing appends nothing, so a failing store is not asked.
                let has_offsets = model.keys().any(|(mg, _)| mg == g);
                prop_assert_eq!(result.is_err(), failing && has_offsets);
                if !failing {
                    model.retain(|(mg, _), _| mg != g);
                }
            }
            Op::DeletePartitions(g, parts) => {
                let parts: Vec<_> = parts.iter().map(|p| partition(*p)).collect();
                let result = storage.delete_partitions(GROUPS[*g], &parts);
                prop_assert_eq!(result.is_err(), failing && !parts.is_empty());
                if !failing {
                    for tp in parts {
                        model.remove(&(*g, tp));
                    }
                }
            }
            Op::Fetch(g, p) => {
                let got = storage.fetch_offset(GROUPS[*g], &partition(*p)).unwrap();
                prop_assert_eq!(got.as_ref(), model.get(&(*g, partition(*p))), "{:?}", op);
            }
            Op::FetchAll(g) => {
                let got = storage.fetch_offsets(GROUPS[*g]).unwrap();
                let want: Vec<_> = model
                    .iter()
                    .filter(|((mg, _), _)| mg == g)
                    .map(|((_, tp), o)| (tp.clone(), o.clone()))
                    .collect();
                let got: Vec<_> = got
                    .offsets
                    .iter()
                    .flat_map(|(t, ps)| {
                        ps.iter().map(move |(p, o)| (TopicPartition::new(t.as_str(), *p), o.clone()))
                    })
                    .collect();
                prop_assert_eq!(got, want, "{:?}", op);
            }
            Op::Break => {
                broken = true;
                if let Some(store) = faults {
                    store.fail_writes(Some(StorageError::io("injected")));
                }
            }
            Op::Heal => {
                broken = false;
                if let Some(store) = faults {
                    store.fail_writes(None);
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn memory_storage_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        let storage = MemoryOffsetStorage::new();
        run(&storage, Some(storage.store()), &ops)?;
    }

    #[test]
    fn persistent_storage_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        let store = MemoryMetadataStore::new();
        run(&PersistentOffsetStorage::new(store.clone()), Some(&store), &ops)?;
    }

    #[test]
    fn cached_persistent_storage_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        let store = MemoryMetadataStore::new();
        run(&PersistentOffsetStorage::with_read_cache(store.clone()), Some(&store), &ops)?;
    }
}

// ---------------------------------------------------------------------------
// Appends, holds and releases against a model of the memory store.

const PARTITIONS: u32 = 3;

#[derive(Debug, Clone)]
enum Rec {
    Offset(usize, usize, i64),
    OffsetTombstone(usize, usize),
    Group(usize, i32),
    GroupTombstone(usize),
}

#[derive(Debug, Clone)]
enum StoreOp {
    Append(u32, u64, Vec<Rec>),
    Hold(bool),
    /// Releases the oldest held append (of a partition when given), failing it when `true`.
    Release(Option<u32>, bool),
    Load(u32),
    Break,
    Heal,
}

fn rec() -> impl Strategy<Value = Rec> {
    prop_oneof![
        4 => (0..GROUPS.len(), 0usize..4, 0i64..100).prop_map(|(g, p, o)| Rec::Offset(g, p, o)),
        2 => (0..GROUPS.len(), 0usize..4).prop_map(|(g, p)| Rec::OffsetTombstone(g, p)),
        1 => (0..GROUPS.len(), 0i32..5).prop_map(|(g, n)| Rec::Group(g, n)),
        1 => (0..GROUPS.len()).prop_map(Rec::GroupTombstone),
    ]
}

fn store_op() -> impl Strategy<Value = StoreOp> {
    prop_oneof![
        6 => (0..PARTITIONS, 0u64..4, prop::collection::vec(rec(), 0..4))
            .prop_map(|(p, e, r)| StoreOp::Append(p, e, r)),
        2 => any::<bool>().prop_map(StoreOp::Hold),
        3 => (prop::option::of(0..PARTITIONS), prop::bool::weighted(0.2))
            .prop_map(|(p, f)| StoreOp::Release(p, f)),
        2 => (0..PARTITIONS).prop_map(StoreOp::Load),
        1 => Just(StoreOp::Break),
        1 => Just(StoreOp::Heal),
    ]
}

fn record(r: &Rec) -> Record {
    let id = |g: usize| Arc::from(GROUPS[g]);
    match r {
        Rec::Offset(g, p, o) => Record::Offset {
            group_id: id(*g),
            partition: partition(*p),
            offset: OffsetAndMetadata::new(*o, 1),
        },
        Rec::OffsetTombstone(g, p) => Record::OffsetTombstone { group_id: id(*g), partition: partition(*p) },
        Rec::Group(g, n) => Record::Group(Box::new(GroupMetadataRecord {
            group_id: GROUPS[*g].into(),
            generation_id: *n,
            ..GroupMetadataRecord::default()
        })),
        Rec::GroupTombstone(g) => Record::GroupTombstone { group_id: id(*g) },
    }
}

#[derive(Debug, Default, Clone)]
struct PartitionModel {
    epoch: u64,
    groups: BTreeMap<usize, i32>,
    offsets: BTreeMap<(usize, usize), i64>,
}

impl PartitionModel {
    fn loaded(&self) -> LoadedPartition {
        let mut offsets: BTreeMap<&str, GroupOffsets> = BTreeMap::new();
        for ((g, p), o) in &self.offsets {
            let tp = partition(*p);
            offsets
                .entry(GROUPS[*g])
                .or_insert_with(|| GroupOffsets::new(GROUPS[*g]))
                .offsets
                .entry(tp.topic().to_owned())
                .or_default()
                .insert(tp.partition, OffsetAndMetadata::new(*o, 1));
        }
        let mut groups: Vec<_> = self
            .groups
            .iter()
            .map(|(g, n)| GroupMetadataRecord {
                group_id: GROUPS[*g].into(),
                generation_id: *n,
                ..GroupMetadataRecord::default()
            })
            .collect();
        groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        LoadedPartition {
            epoch: OwnerEpoch(self.epoch),
            groups: StoredGroups {
                groups,
                offsets: offsets.into_values().collect(),
                ..StoredGroups::default()
            },
        }
    }
}

struct Pending {
    id: usize,
    partition: u32,
    epoch: u64,
    records: Vec<Rec>,
    held: bool,
}

/// The memory store as its docs describe it, in plain data.
#[derive(Default)]
struct StoreModel {
    partitions: BTreeMap<u32, PartitionModel>,
    queue: Vec<Pending>,
    holding: bool,
    broken: bool,
    completions: Vec<(usize, Result<(), StorageError>)>,
}

impl StoreModel {
    fn apply(&mut self, pending: Pending) {
        let result = if self.broken {
            Err(StorageError::io("injected"))
        } else {
            let data = self.partitions.entry(pending.partition).or_default();
            if pending.epoch < data.epoch {
                Err(StorageError::Fenced {
                    partition: pending.partition,
                    epoch: pending.epoch,
                    current: data.epoch,
                })
            } else {
                data.epoch = pending.epoch;
                for r in &pending.records {
                    match r {
                        Rec::Offset(g, p, o) => {
                            data.offsets.insert((*g, *p), *o);
                        }
                        Rec::OffsetTombstone(g, p) => {
                            data.offsets.remove(&(*g, *p));
                        }
                        Rec::Group(g, n) => {
                            data.groups.insert(*g, *n);
                        }
                        Rec::GroupTombstone(g) => {
                            data.groups.remove(g);
                        }
                    }
                }
                Ok(())
            }
        };
        self.completions.push((pending.id, result));
    }

    fn append(&mut self, pending: Pending) {
        if self.holding {
            self.queue.push(Pending { held: true, ..pending });
        } else if self.queue.iter().any(|q| q.partition == pending.partition) {
            self.queue.push(Pending { held: false, ..pending });
        } else {
            self.apply(pending);
        }
    }

    fn release(&mut self, partition: Option<u32>, fail: bool) -> bool {
        let Some(index) = self.queue.iter().position(|q| partition.is_none_or(|p| q.partition == p)) else {
            return false;
        };
        let first = self.queue.remove(index);
        let p = first.partition;
        if fail {
            self.completions.push((first.id, Err(StorageError::io("released with a failure"))));
        } else {
            self.apply(first);
        }
        while let Some(next) = self.queue[index..].iter().position(|q| q.partition == p) {
            if self.queue[index + next].held {
                break;
            }
            let follower = self.queue.remove(index + next);
            self.apply(follower);
        }
        true
    }

    fn held_partitions(&self) -> Vec<CoordinatorPartition> {
        self.queue.iter().filter(|q| q.held).map(|q| CoordinatorPartition(q.partition)).collect()
    }
}

fn run_store(ops: &[StoreOp]) -> Result<(), TestCaseError> {
    let store = MemoryMetadataStore::with_partitions(PARTITIONS);
    let mut model = StoreModel::default();
    let (tx, rx) = mpsc::channel();
    let mut completed = Vec::new();
    for (id, op) in ops.iter().enumerate() {
        match op {
            StoreOp::Append(p, e, records) => {
                let tx = tx.clone();
                store.append(
                    CoordinatorPartition(*p),
                    OwnerEpoch(*e),
                    records.iter().map(record).collect(),
                    AppendCompletion::new(move |result| tx.send((id, result)).unwrap()),
                );
                model.append(Pending { id, partition: *p, epoch: *e, records: records.clone(), held: false });
            }
            StoreOp::Hold(on) => {
                store.hold_appends(*on);
                model.holding = *on;
            }
            StoreOp::Release(p, fail) => {
                let failure = fail.then(|| StorageError::io("released with a failure"));
                let released = store.release_held(p.map(CoordinatorPartition), failure);
                prop_assert_eq!(released, model.release(*p, *fail), "{:?}", op);
            }
            StoreOp::Load(p) => {
                let expected = model.partitions.get(p).cloned().unwrap_or_default().loaded();
                prop_assert_eq!(store.load(CoordinatorPartition(*p)).unwrap(), expected, "{:?}", op);
            }
            StoreOp::Break => {
                store.fail_writes(Some(StorageError::io("injected")));
                model.broken = true;
            }
            StoreOp::Heal => {
                store.fail_writes(None);
                model.broken = false;
            }
        }
        completed.extend(rx.try_iter());
        prop_assert_eq!(&completed, &model.completions, "completions after {:?}", op);
        prop_assert_eq!(store.held_partitions(), model.held_partitions(), "held after {:?}", op);
        prop_assert_eq!(store.held_appends(), model.held_partitions().len());
    }
    // Everything still held, released in order, lands as the model says.
    store.fail_writes(None);
    model.broken = false;
    while store.release_held(None, None) {
        prop_assert!(model.release(None, false));
    }
    prop_assert!(model.queue.is_empty(), "the store released less than the model holds");
    completed.extend(rx.try_iter());
    prop_assert_eq!(&completed, &model.completions);
    prop_assert_eq!(
        store.append_count(),
        ops.iter().filter(|op| matches!(op, StoreOp::Append(..))).count() as u64
    );
    for p in 0..PARTITIONS {
        let expected = model.partitions.get(&p).cloned().unwrap_or_default().loaded();
        prop_assert_eq!(store.load(CoordinatorPartition(p)).unwrap(), expected, "partition {} at the end", p);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_memory_store_applies_and_completes_as_the_model(ops in prop::collection::vec(store_op(), 1..80)) {
        run_store(&ops)?;
    }
}
