//! Random operation sequences against a plain `BTreeMap` model: every storage
//! answers every fetch as the model does, whatever the order of writes,
//! deletions and injected failures.

use std::collections::BTreeMap;

use group_offsets::{
    MemoryMetadataStore, MemoryOffsetStorage, OffsetStorage, PersistentOffsetStorage, StorageError,
};
use group_types::{OffsetAndMetadata, TopicPartition};
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
                prop_assert_eq!(result.is_err(), failing);
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
        run(&MemoryOffsetStorage::new(), None, &ops)?;
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
