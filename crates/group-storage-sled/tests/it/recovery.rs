//! Recovery from storage failures, driven by injected flush faults
//! (`FlushFaults`): a failed flush fails the appends it covered, the next
//! append recovers (in place, or by reopening the database), what failed is
//! rolled back and what was acknowledged stays. The same path on a real full
//! disk is in `disk_full.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use group_offsets::{MetadataStore, StorageError};
use group_storage_sled::SledMetadataStore;

use crate::common::{ScratchDir, commit, completion, epoch, offset, outcome, partition, store_with_faults};

fn injected() -> StorageError {
    StorageError::io("injected: No space left on device")
}

/// What partition 4 holds for group `g`, topic `t`: partitions to offsets.
fn held(store: &SledMetadataStore) -> (u64, BTreeMap<i32, i64>) {
    let loaded = store.load(partition(4)).unwrap();
    let offsets = loaded
        .groups
        .offsets
        .iter()
        .filter(|g| g.group_id == "g")
        .flat_map(|g| g.offsets.get("t").into_iter().flatten().map(|(p, o)| (*p, o.offset)))
        .collect();
    (loaded.epoch.0, offsets)
}

#[rstest::rstest]
#[case::fsync_fails_and_sled_recovers_in_place(false)]
#[case::sled_fails_and_the_database_is_reopened(true)]
fn a_failed_flush_fails_its_appends_and_the_next_append_recovers(#[case] sled_fails: bool) {
    let dir = ScratchDir::new("recover");
    let (store, faults) = store_with_faults(&dir);
    let observer = store.clone();
    let p = partition(4);
    store.append_blocking(p, epoch(1), vec![commit("g", "t", 0, offset(1))]).unwrap();

    if sled_fails {
        faults.fail_sled(injected())
    } else {
        faults.fail_fsync(injected())
    }
    let failed = store.append_blocking(
        p,
        epoch(2),
        vec![commit("g", "t", 0, offset(2)), commit("g", "t", 1, offset(2))],
    );
    assert_eq!(failed, Err(injected()));
    assert!(store.is_failed());
    assert_eq!(store.failed_appends(), 1);

    faults.heal();
    // Another partition's append recovers the store for everyone.
    store.append_blocking(partition(9), epoch(1), vec![commit("h", "t", 0, offset(3))]).unwrap();
    assert!(!store.is_failed());
    assert_eq!(store.recoveries(), 1);
    assert_eq!(store.reopen_count(), u64::from(sled_fails));

    // The failed append is gone, epoch included; the acknowledged one stays.
    assert_eq!(held(&store), (1, BTreeMap::from([(0, 1)])));
    assert_eq!(held(&observer), (1, BTreeMap::from([(0, 1)])), "clones see the same database");
    store.append_blocking(p, epoch(1), vec![commit("g", "t", 1, offset(4))]).unwrap();
    drop((store, observer));
    let store = SledMetadataStore::open(dir.db()).unwrap();
    assert_eq!(held(&store), (1, BTreeMap::from([(0, 1), (1, 4)])));
    assert_eq!(store.fetch_group_offset("h", "t", 0).unwrap(), None, "h went to partition 9");
    assert_eq!(store.load(partition(9)).unwrap().groups.offsets[0].get("t", 0), Some(&offset(3)));
}

#[test]
fn recovery_is_retried_by_every_append_until_it_succeeds() {
    let dir = ScratchDir::new("recover-retry");
    let (store, faults) = store_with_faults(&dir);
    let p = partition(4);
    store.append_blocking(p, epoch(1), vec![commit("g", "t", 0, offset(1))]).unwrap();
    faults.fail_sled(injected());
    assert_eq!(store.append_blocking(p, epoch(1), vec![commit("g", "t", 0, offset(2))]), Err(injected()));
    for attempt in 0..3 {
        let err = store.append_blocking(p, epoch(1), vec![commit("g", "t", 0, offset(3))]).unwrap_err();
        assert!(
            matches!(&err, StorageError::Io { message, .. } if message.contains("not recovered")),
            "attempt {attempt}: {err:?}"
        );
        assert!(store.is_failed());
    }
    assert_eq!(store.recoveries(), 0);
    assert_eq!(store.failed_appends(), 4);
    faults.heal();
    store.append_blocking(p, epoch(1), vec![commit("g", "t", 1, offset(5))]).unwrap();
    assert_eq!(store.recoveries(), 1);
    assert_eq!(held(&store), (1, BTreeMap::from([(0, 1), (1, 5)])));
}

#[test]
fn appends_applied_before_a_failure_fail_with_it_and_are_rolled_back() {
    let dir = ScratchDir::new("recover-queued");
    let (store, faults) = store_with_faults(&dir);
    let p = partition(4);
    store.append_blocking(p, epoch(1), vec![commit("g", "t", 0, offset(1))]).unwrap();
    faults.pause();
    let receivers: Vec<_> = (2..6)
        .map(|n| {
            let (done, rx) = completion();
            store.append(
                p,
                epoch(n as u64),
                vec![commit("g", "t", 0, offset(n)), commit("g", "t", n as i32, offset(n))],
                done,
            );
            rx
        })
        .collect();
    while faults.paused_flushes() == 0 {
        std::thread::yield_now();
    }
    faults.fail_fsync(injected());
    faults.resume();
    for rx in &receivers {
        assert_eq!(outcome(rx), Err(injected()));
    }
    faults.heal();
    store.append_blocking(partition(0), epoch(1), vec![]).unwrap();
    assert_eq!(held(&store), (1, BTreeMap::from([(0, 1)])));
}

#[test]
fn acknowledged_appends_survive_repeated_failures_under_load() {
    const THREADS: usize = 8;
    const FAILURES: u64 = 5;
    let dir = ScratchDir::new("recover-load");
    let (store, faults) = store_with_faults(&dir);
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (store, stop) = (store.clone(), stop.clone());
            std::thread::spawn(move || {
                // Each thread overwrites one offset with 1, 2, 3, ...: what
                // survives must be exactly its last acknowledged value.
                let mut acked = 0;
                for n in 1.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let records = vec![commit(&format!("g{t}"), "t", 0, offset(n))];
                    match store.append_blocking(partition(t as u32), epoch(1), records) {
                        Ok(()) => acked = n,
                        Err(StorageError::Io { .. }) => {}
                        Err(e) => panic!("thread {t}: unexpected {e:?}"),
                    }
                }
                acked
            })
        })
        .collect();
    for round in 1..=FAILURES {
        // Waiting for a failed append would race with the previous round: appends
        // it failed may be counted after its recovery. Wait for this fault itself.
        let fired = faults.injected_failures();
        faults.fail_fsync(injected());
        while faults.injected_failures() == fired {
            std::thread::yield_now();
        }
        faults.heal();
        // One failure, one recovery: the writers' next appends recover.
        while store.recoveries() < round {
            std::thread::yield_now();
        }
    }
    stop.store(true, Ordering::Relaxed);
    let acked: Vec<i64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    // The last appends may have failed with nothing after them to recover.
    store.append_blocking(partition(49), epoch(1), vec![]).unwrap();
    assert!(!store.is_failed());
    drop(store);
    let store = SledMetadataStore::open(dir.db()).unwrap();
    for (t, acked) in acked.iter().enumerate() {
        let loaded = store.load(partition(t as u32)).unwrap();
        let stored = loaded.groups.offsets.first().and_then(|g| g.get("t", 0)).map(|o| o.offset);
        assert_eq!(stored, (*acked > 0).then_some(*acked), "thread {t}");
    }
}
