//! Group commit: `append` returns before its flush, one flush serves the
//! appends of many partitions, appends of one partition complete in call
//! order, and dropping the store completes whatever is pending.

use std::sync::{Arc, Mutex};

use group_offsets::{AppendCompletion, MetadataStore, StorageError};
use group_storage_sled::{FlushFaults, SledMetadataStore};

use crate::common::{ScratchDir, commit, completion, epoch, offset, outcome, partition, store_with_faults};

/// Waits until the flusher is held in a paused flush.
fn wait_until_paused(faults: &FlushFaults) {
    while faults.paused_flushes() == 0 {
        std::thread::yield_now();
    }
}

#[test]
fn append_returns_before_its_flush_and_completes_after_it() {
    let dir = ScratchDir::new("pipeline-return");
    let (store, faults) = store_with_faults(&dir);
    faults.pause();
    let (done, rx) = completion();
    store.append(partition(0), epoch(1), vec![commit("g", "t", 0, offset(1))], done);
    // We are here while the flush is held: append did not wait for it.
    wait_until_paused(&faults);
    assert!(rx.try_recv().is_err(), "completed before its flush ran");
    faults.resume();
    assert_eq!(outcome(&rx), Ok(()));
}

#[test]
fn one_flush_serves_the_appends_of_many_partitions() {
    let dir = ScratchDir::new("pipeline-share");
    let (store, faults) = store_with_faults(&dir);
    let before = store.flush_count();
    faults.pause();
    let (first, first_rx) = completion();
    store.append(partition(0), epoch(1), vec![commit("g0", "t", 0, offset(0))], first);
    wait_until_paused(&faults);
    // Everything appended while the first flush is held waits for one more.
    let receivers: Vec<_> = (1..40)
        .map(|i| {
            let (done, rx) = completion();
            store.append(
                partition(i % 50),
                epoch(1),
                vec![commit(&format!("g{i}"), "t", 0, offset(i.into()))],
                done,
            );
            rx
        })
        .collect();
    faults.resume();
    assert_eq!(outcome(&first_rx), Ok(()));
    for rx in &receivers {
        assert_eq!(outcome(rx), Ok(()));
    }
    assert_eq!(store.flush_count() - before, 2, "40 appends, two flushes");
    assert_eq!(store.load_all().unwrap().offsets.len(), 40);
}

#[test]
fn appends_of_one_partition_complete_in_call_order() {
    let dir = ScratchDir::new("pipeline-order");
    let (store, faults) = store_with_faults(&dir);
    let order = Arc::new(Mutex::new(Vec::new()));
    let (last, last_rx) = completion();
    faults.pause();
    let p = partition(5);
    for i in 0..30u64 {
        let order = order.clone();
        // Epoch 2 from the tenth on; the twentieth is fenced, and must still
        // complete in its place.
        let e = match i {
            0..10 => epoch(1),
            20 => epoch(1),
            _ => epoch(2),
        };
        let done = AppendCompletion::new(move |result: Result<(), StorageError>| {
            order.lock().unwrap().push((i, result.is_ok()));
        });
        store.append(p, e, vec![commit("g", "t", 0, offset(i as i64))], done);
        // Another partition's appends interleave.
        store.append(
            partition(6),
            epoch(1),
            vec![commit("h", "t", 0, offset(i as i64))],
            AppendCompletion::new(drop),
        );
    }
    store.append(p, epoch(2), vec![], last);
    faults.resume();
    assert_eq!(outcome(&last_rx), Ok(()));
    let order = order.lock().unwrap().clone();
    let expected: Vec<_> = (0..30).map(|i| (i, i != 20)).collect();
    assert_eq!(order, expected);
    assert_eq!(store.load(p).unwrap().groups.offsets[0].get("t", 0).map(|o| o.offset), Some(29));
}

#[test]
fn dropping_the_store_completes_what_is_pending() {
    let dir = ScratchDir::new("pipeline-drop");
    let (store, faults) = store_with_faults(&dir);
    faults.pause();
    let receivers: Vec<_> = (0..5)
        .map(|i| {
            let (done, rx) = completion();
            store.append(partition(i), epoch(1), vec![commit("g", "t", i as i32, offset(1))], done);
            rx
        })
        .collect();
    wait_until_paused(&faults);
    let closing = std::thread::spawn(move || drop(store));
    faults.resume();
    closing.join().unwrap();
    for rx in &receivers {
        assert_eq!(outcome(rx), Ok(()));
    }
    let store = SledMetadataStore::open(dir.db()).unwrap();
    assert_eq!(store.load_all().unwrap().offsets.iter().map(|g| g.len()).sum::<usize>(), 5);
}

#[test]
fn a_completion_may_append_again_and_hold_the_last_clone() {
    let dir = ScratchDir::new("pipeline-reentrant");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    let (done, rx) = completion();
    let clone = store.clone();
    // Runs on the flusher thread: appends again (without waiting) and then
    // drops what may be the last handle of the store.
    let chained = AppendCompletion::new(move |result| {
        result.unwrap();
        clone.append(partition(1), epoch(1), vec![commit("g", "t", 1, offset(2))], done);
    });
    store.append(partition(1), epoch(1), vec![commit("g", "t", 0, offset(1))], chained);
    drop(store);
    assert_eq!(outcome(&rx), Ok(()));
}

#[test]
fn a_panicking_completion_does_not_stop_the_flusher() {
    let dir = ScratchDir::new("pipeline-panic");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    let panicking = AppendCompletion::new(|_| panic!("a caller's bug"));
    store.append(partition(2), epoch(1), vec![commit("g", "t", 0, offset(1))], panicking);
    let (done, rx) = completion();
    store.append(partition(2), epoch(1), vec![commit("g", "t", 0, offset(2))], done);
    assert_eq!(outcome(&rx), Ok(()));
}
