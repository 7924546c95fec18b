//! `MemoryMetadataStore` beyond the contract: held appends, fault injection,
//! partition counts and the counters tests observe.

use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};

use group_offsets::{
    AppendCompletion, CoordinatorPartition, MemoryMetadataStore, MetadataStore, OwnerEpoch, Record,
    StorageError,
};
use group_types::{OffsetAndMetadata, TopicPartition};
use rstest::rstest;

const P1: CoordinatorPartition = CoordinatorPartition(1);
const P2: CoordinatorPartition = CoordinatorPartition(2);

fn offset(group: &str, n: i64) -> Record {
    Record::Offset {
        group_id: Arc::from(group),
        partition: TopicPartition::new("t", 0),
        offset: OffsetAndMetadata::new(n, n),
    }
}

/// Completions of appends, by the id each was issued with, in arrival order.
struct Log {
    tx: mpsc::Sender<(u32, Result<(), StorageError>)>,
    rx: Receiver<(u32, Result<(), StorageError>)>,
}

impl Log {
    fn new() -> Log {
        let (tx, rx) = mpsc::channel();
        Log { tx, rx }
    }

    fn completion(&self, id: u32) -> AppendCompletion {
        let tx = self.tx.clone();
        AppendCompletion::new(move |result| tx.send((id, result)).unwrap())
    }

    /// Everything completed so far.
    fn drain(&self) -> Vec<(u32, Result<(), StorageError>)> {
        self.rx.try_iter().collect()
    }
}

fn loaded_offset(store: &MemoryMetadataStore, p: CoordinatorPartition, group: &str) -> Option<i64> {
    let loaded = store.load(p).unwrap();
    loaded.groups.offsets.iter().find(|g| g.group_id == group).and_then(|g| g.get("t", 0)).map(|o| o.offset)
}

#[test]
fn held_appends_are_neither_applied_nor_completed_until_released() {
    let store = MemoryMetadataStore::new();
    let log = Log::new();
    store.hold_appends(true);
    store.append(P1, OwnerEpoch(1), vec![offset("a", 1)], log.completion(1));
    store.append(P2, OwnerEpoch(1), vec![offset("b", 2)], log.completion(2));
    store.append(P1, OwnerEpoch(1), vec![offset("a", 3)], log.completion(3));
    assert_eq!(store.held_appends(), 3);
    assert_eq!(store.held_partitions(), [P1, P2, P1]);
    assert!(log.drain().is_empty(), "a held append completed");
    assert_eq!(loaded_offset(&store, P1, "a"), None, "a held append was applied");
    assert_eq!(store.owner_epoch(P1).unwrap(), OwnerEpoch(0), "a held append raised the epoch");

    // The oldest of a partition, then the oldest of all.
    assert!(store.release_held(Some(P2), None));
    assert_eq!(log.drain(), [(2, Ok(()))]);
    assert_eq!(loaded_offset(&store, P2, "b"), Some(2));
    assert_eq!(store.held_partitions(), [P1, P1]);
    assert!(store.release_held(None, None));
    assert_eq!(log.drain(), [(1, Ok(()))]);
    assert_eq!(loaded_offset(&store, P1, "a"), Some(1));
    assert_eq!(store.owner_epoch(P1).unwrap(), OwnerEpoch(1));
    assert!(store.release_held(Some(P1), None));
    assert_eq!(log.drain(), [(3, Ok(()))]);
    assert_eq!(loaded_offset(&store, P1, "a"), Some(3));
    assert!(!store.release_held(None, None), "nothing is held any more");
    assert!(!store.release_held(Some(P1), None));
    assert_eq!(store.held_appends(), 0);
}

#[test]
fn releasing_with_a_failure_applies_nothing() {
    let store = MemoryMetadataStore::new();
    let log = Log::new();
    store.hold_appends(true);
    store.append(P1, OwnerEpoch(4), vec![offset("a", 1)], log.completion(1));
    let error = StorageError::io("replica lost");
    assert!(store.release_held(Some(P1), Some(error.clone())));
    assert_eq!(log.drain(), [(1, Err(error))]);
    assert_eq!(loaded_offset(&store, P1, "a"), None);
    assert_eq!(store.owner_epoch(P1).unwrap(), OwnerEpoch(0), "a failed append must not raise the epoch");
}

#[test]
fn the_epoch_is_checked_when_a_held_append_is_applied() {
    let store = MemoryMetadataStore::new();
    let log = Log::new();
    store.hold_appends(true);
    store.append(P1, OwnerEpoch(5), vec![offset("a", 1)], log.completion(1));
    store.append(P1, OwnerEpoch(1), vec![offset("a", 2)], log.completion(2));
    assert!(store.release_held(None, None));
    assert!(store.release_held(None, None));
    assert_eq!(
        log.drain(),
        [(1, Ok(())), (2, Err(StorageError::Fenced { partition: 1, epoch: 1, current: 5 }))]
    );
    assert_eq!(loaded_offset(&store, P1, "a"), Some(1));
}

#[test]
fn injected_write_faults_apply_when_a_held_append_is_released() {
    let store = MemoryMetadataStore::new();
    let log = Log::new();
    store.hold_appends(true);
    store.append(P1, OwnerEpoch(1), vec![offset("a", 1)], log.completion(1));
    store.fail_writes(Some(StorageError::io("disk full")));
    assert!(store.release_held(None, None));
    assert_eq!(log.drain(), [(1, Err(StorageError::io("disk full")))]);
    assert_eq!(loaded_offset(&store, P1, "a"), None);
}

/// Order within a partition survives turning holding off: a later append to
/// a partition with held appends waits behind them and follows the release.
#[test]
fn turning_holding_off_releases_nothing_and_keeps_order() {
    let store = MemoryMetadataStore::new();
    let log = Log::new();
    store.hold_appends(true);
    store.append(P1, OwnerEpoch(1), vec![offset("a", 1)], log.completion(1));
    store.hold_appends(false);
    assert_eq!(store.held_appends(), 1, "turning holding off released an append");
    store.append(P1, OwnerEpoch(1), vec![offset("a", 2)], log.completion(2));
    store.append(P2, OwnerEpoch(1), vec![offset("b", 3)], log.completion(3));
    assert_eq!(log.drain(), [(3, Ok(()))], "only the append to a partition without held appends completes");
    assert_eq!(store.held_appends(), 1, "an append waiting for order is not a held one");
    assert_eq!(loaded_offset(&store, P1, "a"), None);

    // Held again: the next append of P1 is held, behind the waiting one.
    store.hold_appends(true);
    store.append(P1, OwnerEpoch(1), vec![offset("a", 4)], log.completion(4));
    store.hold_appends(false);
    assert_eq!(store.held_partitions(), [P1, P1]);
    assert!(store.release_held(Some(P1), None));
    assert_eq!(log.drain(), [(1, Ok(())), (2, Ok(()))], "the waiting append follows the released one");
    assert_eq!(loaded_offset(&store, P1, "a"), Some(2));
    assert!(store.release_held(Some(P1), None));
    assert_eq!(log.drain(), [(4, Ok(()))]);
    assert_eq!(loaded_offset(&store, P1, "a"), Some(4));
    store.append(P1, OwnerEpoch(1), vec![offset("a", 5)], log.completion(5));
    assert_eq!(log.drain(), [(5, Ok(()))], "with nothing held, appends complete at once");
}

#[test]
fn an_append_waiting_behind_a_failed_one_still_applies() {
    let store = MemoryMetadataStore::new();
    let log = Log::new();
    store.hold_appends(true);
    store.append(P1, OwnerEpoch(1), vec![offset("a", 1)], log.completion(1));
    store.hold_appends(false);
    store.append(P1, OwnerEpoch(1), vec![offset("a", 2)], log.completion(2));
    assert!(store.release_held(None, Some(StorageError::io("lost"))));
    assert_eq!(log.drain(), [(1, Err(StorageError::io("lost"))), (2, Ok(()))]);
    assert_eq!(loaded_offset(&store, P1, "a"), Some(2));
}

/// A completion may call back into the store (a coordinator answering a
/// commit reads and writes again): the store holds no lock while it runs.
#[rstest]
fn completions_may_call_back_into_the_store(#[values(false, true)] held: bool) {
    let store = MemoryMetadataStore::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    store.hold_appends(held);
    let (s, out) = (store.clone(), Arc::clone(&seen));
    store.append(
        P1,
        OwnerEpoch(1),
        vec![offset("a", 1)],
        AppendCompletion::new(move |result| {
            result.unwrap();
            s.hold_appends(false);
            let loaded = s.load(P1).unwrap();
            s.append_blocking(P1, OwnerEpoch(1), vec![offset("a", 2)]).unwrap();
            s.store_group_offset("g", "t", 0, &OffsetAndMetadata::new(3, 3)).unwrap();
            out.lock().unwrap().push((
                loaded.groups.offsets.len(),
                s.held_appends(),
                s.release_held(None, None),
            ));
        }),
    );
    if held {
        assert!(store.release_held(None, None));
    }
    assert_eq!(*seen.lock().unwrap(), [(1, 0, false)]);
    assert_eq!(loaded_offset(&store, P1, "a"), Some(2));
}

/// `append_blocking` (and every provided write) waits for a held append to be
/// released by another thread.
#[test]
fn blocking_writes_wait_for_the_release() {
    let store = MemoryMetadataStore::new();
    store.hold_appends(true);
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || store.store_group_offset("g", "t", 0, &OffsetAndMetadata::new(7, 7)))
    };
    while store.held_appends() == 0 {
        std::thread::yield_now();
    }
    assert_eq!(store.held_partitions(), [store.partition_of("g")]);
    assert!(!writer.is_finished(), "a blocking write returned before its append was released");
    assert!(store.release_held(None, Some(StorageError::io("first try fails"))));
    assert_eq!(writer.join().unwrap(), Err(StorageError::io("first try fails")));
    assert_eq!(store.fetch_group_offset("g", "t", 0).unwrap(), None);
}

#[test]
fn append_count_counts_every_append_given() {
    let store = MemoryMetadataStore::new();
    let log = Log::new();
    assert_eq!(store.append_count(), 0);
    store.append(P1, OwnerEpoch(3), vec![offset("a", 1), offset("b", 1)], log.completion(1));
    store.append_blocking(P1, OwnerEpoch(3), vec![]).unwrap();
    assert!(store.append_blocking(P1, OwnerEpoch(1), vec![offset("a", 2)]).is_err(), "fenced");
    store.fail_writes(Some(StorageError::io("x")));
    assert!(store.append_blocking(P1, OwnerEpoch(3), vec![offset("a", 2)]).is_err());
    store.fail_writes(None);
    store.hold_appends(true);
    store.append(P2, OwnerEpoch(1), vec![offset("c", 1)], log.completion(2));
    assert_eq!(store.append_count(), 5, "held, failed and fenced appends count");
    store.hold_appends(false);
    store.release_held(None, None);
    assert_eq!(store.append_count(), 5, "releasing is not another append");
    store.store_group_offset("g", "t", 0, &OffsetAndMetadata::new(1, 1)).unwrap();
    store.delete_group_offsets("g").unwrap();
    assert_eq!(store.append_count(), 7, "the provided writes append once each");
    assert_eq!(store.clone().append_count(), 7, "clones share the counter");
}

#[rstest]
#[case::one(1)]
#[case::seven(7)]
#[case::default(50)]
fn partition_counts(#[case] partitions: u32) {
    let store = MemoryMetadataStore::with_partitions(partitions);
    assert_eq!(store.partition_count(), partitions);
    for group in ["", "g", "group", "🦀"] {
        assert_eq!(store.partition_of(group), CoordinatorPartition::of(group, partitions));
    }
    let beyond = CoordinatorPartition(partitions);
    assert!(matches!(store.load(beyond), Err(StorageError::InvalidInput { .. })));
    assert!(matches!(store.owner_epoch(beyond), Err(StorageError::InvalidInput { .. })));
    assert!(matches!(
        store.append_blocking(beyond, OwnerEpoch(0), vec![offset("g", 1)]),
        Err(StorageError::InvalidInput { .. })
    ));
    store.hold_appends(true);
    let log = Log::new();
    store.append(beyond, OwnerEpoch(0), vec![], log.completion(1));
    assert!(store.release_held(None, None));
    assert!(matches!(log.drain()[..], [(1, Err(StorageError::InvalidInput { .. }))]));
    assert_eq!(store.load_all().unwrap(), Default::default());
}

#[test]
fn zero_partitions_means_one() {
    assert_eq!(MemoryMetadataStore::with_partitions(0).partition_count(), 1);
    assert_eq!(MemoryMetadataStore::new().partition_count(), 50);
}

#[test]
fn clones_share_data_epochs_faults_and_holds() {
    let store = MemoryMetadataStore::new();
    let clone = store.clone();
    clone.append_blocking(P1, OwnerEpoch(9), vec![offset("a", 1)]).unwrap();
    assert_eq!(store.owner_epoch(P1).unwrap(), OwnerEpoch(9));
    assert_eq!(loaded_offset(&store, P1, "a"), Some(1));
    assert_eq!(store.offset_count(), 1);
    clone.fail_reads(Some(StorageError::io("read")));
    assert!(store.load(P1).is_err());
    assert_eq!(store.owner_epoch(P1).unwrap(), OwnerEpoch(9), "owner_epoch keeps answering");
    store.store_group_offset("g", "t", 0, &OffsetAndMetadata::new(1, 1)).unwrap();
    clone.fail_reads(None);
    clone.hold_appends(true);
    let log = Log::new();
    store.append(P2, OwnerEpoch(0), vec![], log.completion(1));
    assert_eq!(clone.held_appends(), 1);
    assert!(clone.release_held(None, None));
    assert_eq!(log.drain(), [(1, Ok(()))]);
}

#[test]
fn an_empty_append_raises_the_epoch() {
    let store = MemoryMetadataStore::new();
    store.append_blocking(P1, OwnerEpoch(4), vec![]).unwrap();
    assert_eq!(store.owner_epoch(P1).unwrap(), OwnerEpoch(4));
    assert_eq!(
        store.append_blocking(P1, OwnerEpoch(3), vec![offset("a", 1)]),
        Err(StorageError::Fenced { partition: 1, epoch: 3, current: 4 })
    );
}

#[test]
fn offset_count_follows_records_and_tombstones() {
    let store = MemoryMetadataStore::with_partitions(3);
    store.store_group_offset("a", "t", 0, &OffsetAndMetadata::new(1, 1)).unwrap();
    store.store_group_offset("a", "t", 1, &OffsetAndMetadata::new(1, 1)).unwrap();
    store.store_group_offset("b", "t", 0, &OffsetAndMetadata::new(1, 1)).unwrap();
    store.store_group_offset("b", "t", 0, &OffsetAndMetadata::new(2, 2)).unwrap();
    assert_eq!(store.offset_count(), 3);
    store.delete_group_offsets("a").unwrap();
    assert_eq!(store.offset_count(), 1);
}

#[test]
fn debug_summarises_instead_of_dumping() {
    let store = MemoryMetadataStore::with_partitions(2);
    store.store_group_offset("g", "t", 0, &OffsetAndMetadata::new(1, 1)).unwrap();
    let text = format!("{store:?}");
    assert!(text.contains("partitions: 2") && text.contains("offsets: 1"), "{text}");
}
