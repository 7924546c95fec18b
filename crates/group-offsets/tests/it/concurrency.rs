//! Many threads committing to many groups: nothing is lost, no offset goes backwards.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use group_offsets::{MemoryMetadataStore, MemoryOffsetStorage, OffsetStorage, PersistentOffsetStorage};
use group_types::{OffsetAndMetadata, TopicPartition};
use rstest::rstest;

const WRITERS: usize = 8;
const GROUPS_PER_WRITER: usize = 8;
const PARTITIONS: i32 = 4;
const COMMITS: i64 = 100;

fn group(writer: usize, g: usize) -> String {
    format!("w{writer}-g{g}")
}

/// Each writer owns its groups (the coordinator serialises one group's
/// commits) and commits increasing offsets, alternating single-partition and
/// multi-partition stores; two readers watch every group meanwhile. A reader
/// seeing an offset lower than one it saw before, or a batch half-applied,
/// fails the test; so does any final offset other than the last commit.
fn hammer(storage: &dyn OffsetStorage) {
    let done = AtomicBool::new(false);
    let topics: Vec<_> =
        (0..PARTITIONS).map(|p| TopicPartition::new(format!("topic-{}", p % 2), p)).collect();
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let topics = &topics;
                scope.spawn(move || {
                    for n in 1..=COMMITS {
                        for g in 0..GROUPS_PER_WRITER {
                            let id = group(w, g);
                            if n % 3 == 0 {
                                for tp in topics {
                                    storage.store_offset(&id, tp, OffsetAndMetadata::new(n, n)).unwrap();
                                }
                            } else {
                                let batch: Vec<_> = topics
                                    .iter()
                                    .map(|tp| (tp.clone(), OffsetAndMetadata::new(n, n)))
                                    .collect();
                                storage.store_offsets(&id, &batch).unwrap();
                            }
                        }
                    }
                })
            })
            .collect();
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let done = &done;
                scope.spawn(move || {
                    let mut seen: HashMap<(String, String, i32), i64> = HashMap::new();
                    let mut rounds = 0;
                    loop {
                        let finished = done.load(Ordering::Acquire);
                        for w in 0..WRITERS {
                            for g in 0..GROUPS_PER_WRITER {
                                let id = group(w, g);
                                let all = storage.fetch_offsets(&id).unwrap();
                                for (topic, partitions) in &all.offsets {
                                    for (p, o) in partitions {
                                        let last = seen.entry((id.clone(), topic.clone(), *p)).or_insert(0);
                                        assert!(
                                            o.offset >= *last,
                                            "{id} {topic}-{p}: {} after {}",
                                            o.offset,
                                            last
                                        );
                                        *last = o.offset;
                                    }
                                }
                            }
                        }
                        rounds += 1;
                        if finished {
                            return rounds;
                        }
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        done.store(true, Ordering::Release);
        for reader in readers {
            assert!(reader.join().unwrap() >= 1);
        }
    });
    for w in 0..WRITERS {
        for g in 0..GROUPS_PER_WRITER {
            let all = storage.fetch_offsets(&group(w, g)).unwrap();
            assert_eq!(all.len(), PARTITIONS as usize, "{}", group(w, g));
            for tp in &topics {
                assert_eq!(
                    all.get(tp.topic(), tp.partition).map(|o| o.offset),
                    Some(COMMITS),
                    "{} {tp}",
                    group(w, g)
                );
            }
        }
    }
    assert_eq!(storage.load().unwrap().offsets.len(), WRITERS * GROUPS_PER_WRITER);
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Memory,
    Persistent,
    PersistentCached,
}

#[rstest]
#[case::memory(Kind::Memory)]
#[case::persistent(Kind::Persistent)]
#[case::persistent_cached(Kind::PersistentCached)]
fn many_threads_many_groups(#[case] kind: Kind) {
    match kind {
        Kind::Memory => hammer(&MemoryOffsetStorage::new()),
        Kind::Persistent => hammer(&PersistentOffsetStorage::new(MemoryMetadataStore::new())),
        Kind::PersistentCached => {
            hammer(&PersistentOffsetStorage::with_read_cache(MemoryMetadataStore::new()))
        }
    }
}

/// A multi-partition store is all-or-nothing for readers too: a reader never
/// sees some partitions of a batch at the new offset and others at the old.
#[rstest]
#[case::memory(Kind::Memory)]
#[case::persistent_cached(Kind::PersistentCached)]
fn readers_never_see_half_a_batch(#[case] kind: Kind) {
    let memory;
    let cached;
    let storage: &dyn OffsetStorage = match kind {
        Kind::PersistentCached => {
            cached = PersistentOffsetStorage::with_read_cache(MemoryMetadataStore::new());
            &cached
        }
        _ => {
            memory = MemoryOffsetStorage::new();
            &memory
        }
    };
    let batch = |n: i64| {
        (0..16).map(|p| (TopicPartition::new("t", p), OffsetAndMetadata::new(n, n))).collect::<Vec<_>>()
    };
    storage.store_offsets("g", &batch(0)).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut checked = 0;
            while !done.load(Ordering::Acquire) || checked == 0 {
                let all = storage.fetch_offsets("g").unwrap();
                let values: Vec<i64> = all.offsets["t"].values().map(|o| o.offset).collect();
                assert!(values.windows(2).all(|w| w[0] == w[1]), "half a batch visible: {values:?}");
                checked += 1;
            }
        });
        for n in 1..=500 {
            storage.store_offsets("g", &batch(n)).unwrap();
        }
        done.store(true, Ordering::Release);
        reader.join().unwrap();
    });
}
