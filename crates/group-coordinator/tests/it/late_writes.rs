//! The runtime with writes that complete late: a memory store holds every append
//! until the test releases it. Requests keep being answered meanwhile (no request
//! waits for another's I/O), commits are answered only once durable, the writes
//! queued behind an append in flight go out as one batch, and a failure after later
//! requests fails exactly what depended on it.

use std::sync::Arc;
use std::time::Duration;

use group_coordinator::{GroupCoordinator, ManualClock, Pending};
use group_offsets::{MemoryMetadataStore, StorageError};
use group_types::{ErrorCode, OffsetCommitResponse, OffsetFetchRequest};

use crate::support::{commit, heartbeat, join, sync, test_config, until_held};

const SOON: Duration = Duration::from_secs(10);

fn held() -> (GroupCoordinator, MemoryMetadataStore) {
    let (c, store, _) = held_with_clock();
    (c, store)
}

fn held_with_clock() -> (GroupCoordinator, MemoryMetadataStore, Arc<ManualClock>) {
    let store = MemoryMetadataStore::new();
    let clock = Arc::new(ManualClock::new(1_000));
    let c = GroupCoordinator::with_clock(Arc::new(store.clone()), test_config(), clock.clone()).unwrap();
    (c, store, clock)
}

fn fetched(c: &GroupCoordinator, group: &str) -> i64 {
    let request = OffsetFetchRequest {
        group_id: group.into(),
        topics: Some([("t".to_owned(), vec![0])].into_iter().collect()),
        require_stable: false,
        member_id: None,
        member_epoch: None,
    };
    let r = c.handle_offset_fetch(request).unwrap();
    r.offsets.get("t").and_then(|p| p.get(&0)).map_or(-1, |d| d.offset)
}

fn code(r: &OffsetCommitResponse) -> Option<ErrorCode> {
    r.error_for("t", 0)
}

#[test]
fn requests_are_answered_while_a_commit_is_in_flight_and_the_commit_once_durable() {
    let (c, store, clock) = held_with_clock();
    // A Stable group, every write completing at once.
    let first = c.handle_join_group(join("g", "")).unwrap();
    let parked = c.join_group(join("g", &first.member_id));
    // The initial rebalance delay passes.
    clock.advance(100);
    let joined = parked.wait().unwrap();
    let member = joined.member_id.clone();
    c.handle_sync_group(sync("g", &member, joined.generation_id, &[(member.as_str(), "a")])).unwrap();

    assert_eq!(c.get_group("g").map(|g| g.state), Some(group_types::GroupState::Stable));
    store.hold_appends(true);
    let mut pending: Pending<OffsetCommitResponse> =
        c.offset_commit(commit("g", &member, joined.generation_id, 42));
    assert!(!pending.is_ready(), "the commit waits for its write: {pending:?}");
    until_held(&store, 1);
    // The append is in flight: the partition is not locked by it.
    let beat = c.handle_heartbeat(heartbeat("g", &member, joined.generation_id)).unwrap();
    assert_eq!(beat.error_code, ErrorCode::None);
    assert_eq!(fetched(&c, "g"), -1, "reads answer from committed state");
    assert!(pending.wait_timeout(Duration::from_millis(20)).is_none(), "not answered before it is durable");

    assert!(store.release_held(None, None));
    let answer = pending.wait_timeout(SOON).expect("answered once durable").unwrap();
    assert_eq!(code(&answer), Some(ErrorCode::None));
    assert_eq!(fetched(&c, "g"), 42);
}

#[test]
fn commits_queued_behind_an_append_in_flight_go_out_as_one_batch() {
    let (c, store) = held();
    store.hold_appends(true);
    let first = c.offset_commit(commit("g", "", -1, 1));
    until_held(&store, 1);
    let later: Vec<Pending<OffsetCommitResponse>> =
        (2..=20).map(|n| c.offset_commit(commit("g", "", -1, n))).collect();
    let appends_before = store.append_count();
    assert!(store.release_held(None, None));
    assert_eq!(code(&first.wait().unwrap()), Some(ErrorCode::None));
    until_held(&store, 1);
    assert_eq!(store.append_count(), appends_before + 1, "19 queued commits, one append");
    assert!(store.release_held(None, None));
    for p in later {
        assert_eq!(code(&p.wait().unwrap()), Some(ErrorCode::None));
    }
    assert_eq!(fetched(&c, "g"), 20);
}

#[test]
fn a_failure_after_later_requests_fails_what_depended_on_it_and_the_next_write_succeeds() {
    let (c, store) = held();
    store.hold_appends(true);
    let committed = c.offset_commit(commit("g", "", -1, 5));
    until_held(&store, 1);
    assert!(store.release_held(None, None));
    assert_eq!(code(&committed.wait().unwrap()), Some(ErrorCode::None));

    let failing = c.offset_commit(commit("g", "", -1, 6));
    until_held(&store, 1);
    // Issued while the failing append is in flight: queued, and voided with it.
    let queued = c.offset_commit(commit("g", "", -1, 7));
    assert!(store.release_held(None, Some(StorageError::io("disk full"))));
    assert_eq!(code(&failing.wait().unwrap()), Some(ErrorCode::NotCoordinator));
    assert_eq!(code(&queued.wait().unwrap()), Some(ErrorCode::NotCoordinator));
    assert_eq!(fetched(&c, "g"), 5, "nothing of the failed writes is visible");
    assert!(c.wait_for_writes(SOON));
    assert_eq!(store.held_appends(), 0, "a voided write is never appended");
    assert_eq!(c.metrics().write_failures, 1);

    store.hold_appends(false);
    let healed = c.handle_offset_commit(commit("g", "", -1, 8)).unwrap();
    assert_eq!(code(&healed), Some(ErrorCode::None));
    assert_eq!(fetched(&c, "g"), 8);
}

#[test]
fn a_pending_answer_can_be_awaited() {
    let (c, store) = held();
    store.hold_appends(true);
    let pending = c.offset_commit(commit("g", "", -1, 3));
    until_held(&store, 1);
    let releaser = {
        let store = store.clone();
        std::thread::spawn(move || {
            until_held(&store, 1);
            store.release_held(None, None)
        })
    };
    let answer = block_on(pending).unwrap();
    assert!(releaser.join().unwrap());
    assert_eq!(code(&answer), Some(ErrorCode::None));
}

/// A minimal executor: polls `future`, parking the thread until its waker runs.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(out) => return out,
            Poll::Pending => std::thread::park_timeout(SOON),
        }
    }
}

/// A memory store that records the thread of every append, and says whether it
/// completes inline as it is told to.
struct ThreadRecording {
    store: MemoryMetadataStore,
    inline: bool,
    threads: std::sync::Mutex<Vec<Option<String>>>,
}

impl group_offsets::MetadataStore for ThreadRecording {
    fn partition_count(&self) -> u32 {
        self.store.partition_count()
    }

    fn append(
        &self,
        partition: group_offsets::CoordinatorPartition,
        epoch: group_offsets::OwnerEpoch,
        records: Vec<group_offsets::Record>,
        completion: group_offsets::AppendCompletion,
    ) {
        let name = std::thread::current().name().map(str::to_owned);
        self.threads.lock().unwrap().push(name);
        self.store.append(partition, epoch, records, completion);
    }

    fn load(
        &self,
        partition: group_offsets::CoordinatorPartition,
    ) -> Result<group_offsets::LoadedPartition, StorageError> {
        self.store.load(partition)
    }

    fn completes_inline(&self) -> bool {
        self.inline
    }
}

/// An engine that completes inline is appended on the thread that issued the
/// write, and the commit is answered before the call returns; any other engine
/// is appended by a storage stage thread.
#[rstest::rstest]
#[case::inline(true)]
#[case::handed_to_the_stage(false)]
fn where_a_commit_is_appended_follows_the_engine(#[case] inline: bool) {
    let store = Arc::new(ThreadRecording {
        store: MemoryMetadataStore::new(),
        inline,
        threads: std::sync::Mutex::new(Vec::new()),
    });
    let clock = Arc::new(ManualClock::new(1_000));
    let c = GroupCoordinator::with_clock(store.clone(), test_config(), clock).unwrap();
    let before = store.threads.lock().unwrap().len();
    let mut pending = c.offset_commit(commit("g", "", -1, 7));
    if inline {
        assert!(pending.is_ready(), "answered before the call returned");
    }
    let response = pending.wait_timeout(SOON).expect("answered").unwrap();
    assert_eq!(code(&response), Some(ErrorCode::None));
    assert_eq!(fetched(&c, "g"), 7);
    let threads = store.threads.lock().unwrap()[before..].to_vec();
    assert!(!threads.is_empty(), "the commit was appended");
    let here = std::thread::current().name().map(str::to_owned);
    for thread in threads {
        let on_stage = thread.as_deref().is_some_and(|t| t.starts_with("group-coordinator-storage-"));
        if inline {
            assert_eq!(thread, here, "appended on the issuing thread");
        } else {
            assert!(on_stage, "appended on {thread:?}, not a storage stage thread");
        }
    }
}

/// A transaction's marker while an earlier marker of the same producer is in
/// flight: nothing is left for it to change, but it is answered only once the
/// earlier one is durable, and fails with it (an empty append orders it, as
/// Kafka's control record comes after the earlier one); the transaction stays
/// open, and the retried marker commits it.
#[test]
fn a_marker_behind_a_failing_marker_fails_with_it() {
    use group_types::{
        GROUP_METADATA_TOPIC_NAME, OffsetCommitData, TransactionResult, TxnOffsetCommitRequest,
        WriteTxnMarkersRequest,
    };
    let (c, store) = held();
    let shard = i32::try_from(c.shard_of("g")).unwrap();
    let marker = || WriteTxnMarkersRequest::one(7, TransactionResult::Commit, &[shard]);
    let txn = TxnOffsetCommitRequest { group_id: "g".into(), producer_id: 7, ..Default::default() }
        .with_offset("t", 0, OffsetCommitData::new(9));
    let r = c.handle_txn_offset_commit(txn).unwrap();
    assert_eq!(r.error_for("t", 0), Some(ErrorCode::None));
    assert_eq!(fetched(&c, "g"), -1, "pending until its marker");

    store.hold_appends(true);
    let first = c.write_txn_markers(marker());
    until_held(&store, 1);
    let second = c.write_txn_markers(marker());
    assert!(!second.is_ready(), "a marker is not answered before the writes before it");
    assert!(store.release_held(None, Some(StorageError::io("disk full"))));
    for answer in [first.wait().unwrap(), second.wait().unwrap()] {
        let codes: Vec<ErrorCode> = answer.iter().map(|(_, _, _, code)| code).collect();
        assert_eq!(codes, [ErrorCode::NotCoordinator], "{answer:?}");
        assert_eq!(answer.markers[0].topics[0].topic, GROUP_METADATA_TOPIC_NAME);
    }
    assert_eq!(fetched(&c, "g"), -1);
    store.hold_appends(false);
    let retried = c.handle_write_txn_markers(marker()).unwrap();
    assert!(retried.iter().all(|(_, _, _, code)| code == ErrorCode::None), "{retried:?}");
    assert_eq!(fetched(&c, "g"), 9);
}
