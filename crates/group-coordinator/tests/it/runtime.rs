//! The threaded runtime: barriers completed by many threads, stop, manual-clock timers,
//! storage before responses, restart.

use std::sync::Arc;

use group_coordinator::{CoordinatorConfig, CoordinatorError, GroupCoordinator, ManualClock, MemberMetadata};
use group_offsets::{MemoryMetadataStore, MetadataStore, StorageError};
use group_types::{ErrorCode, GroupState, OffsetFetchRequest};

use crate::support::{commit, heartbeat, join, leave, sync, test_config};

/// A coordinator on a manual clock over a memory store; the store returned is a
/// clone sharing the coordinator's data (what a restart reopens).
fn manual(config: CoordinatorConfig) -> (GroupCoordinator, Arc<ManualClock>, MemoryMetadataStore) {
    let storage = MemoryMetadataStore::new();
    let clock = Arc::new(ManualClock::new(1_000));
    let coordinator = GroupCoordinator::with_clock(Arc::new(storage.clone()), config, clock.clone()).unwrap();
    (coordinator, clock, storage)
}

/// How many members of group "g" satisfy `what` (awaiting a join or a sync).
fn parked(c: &GroupCoordinator, what: impl Fn(&MemberMetadata) -> bool) -> usize {
    c.get_group("g").map_or(0, |g| g.members.iter().filter(|m| what(m)).count())
}

/// The one member of a new group "g", joined in generation 1 once the initial
/// delay passed on `clock`; its id.
fn joined_alone(c: &GroupCoordinator, clock: &ManualClock) -> group_types::MemberId {
    let first = c.handle_join_group(join("g", "")).unwrap();
    let parked = c.join_group(join("g", &first.member_id));
    clock.advance(50);
    parked.wait().unwrap().member_id
}

fn wait_until(mut condition: impl FnMut() -> bool) {
    while !condition() {
        std::thread::yield_now();
    }
}

/// Joins `n` members from `n` threads; returns (member id, generation, is leader, member count) per thread.
fn join_from_threads(
    c: &Arc<GroupCoordinator>,
    clock: &ManualClock,
    n: usize,
) -> Vec<(String, i32, bool, usize)> {
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let c = Arc::clone(c);
            std::thread::spawn(move || {
                let first = c.handle_join_group(join("g", "")).unwrap();
                assert_eq!(first.error_code, ErrorCode::MemberIdRequired);
                let second = c.handle_join_group(join("g", &first.member_id)).unwrap();
                assert_eq!(second.error_code, ErrorCode::None);
                (second.member_id.to_string(), second.generation_id, second.is_leader(), second.members.len())
            })
        })
        .collect();
    // Parked in the join barrier: a request waiting for a write (the group's
    // creation) is waiting too, but not yet joined.
    wait_until(|| parked(c, |m| m.awaiting_join) == n);
    // Members arriving inside the initial-delay window extend it by one window (§3.4).
    clock.advance(100);
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn joins_from_many_threads_complete_one_barrier() {
    let (c, clock, _) = manual(test_config());
    let c = Arc::new(c);
    let results = join_from_threads(&c, &clock, 12);
    assert!(results.iter().all(|r| r.1 == 1), "one generation for all: {results:?}");
    let leaders: Vec<_> = results.iter().filter(|r| r.2).collect();
    assert_eq!(leaders.len(), 1);
    assert_eq!(leaders[0].3, 12, "the leader sees every member");
    assert!(results.iter().filter(|r| !r.2).all(|r| r.3 == 0), "followers see no member list");
    let group = c.get_group("g").unwrap();
    assert_eq!(group.state, GroupState::CompletingRebalance);
    assert_eq!(group.members.len(), 12);
}

#[test]
fn followers_syncing_from_threads_get_the_leaders_assignment() {
    let (c, clock, storage) = manual(test_config());
    let c = Arc::new(c);
    let results = join_from_threads(&c, &clock, 4);
    let leader = results.iter().find(|r| r.2).unwrap().0.clone();
    let followers: Vec<_> = results
        .iter()
        .filter(|r| !r.2)
        .map(|r| {
            let c = Arc::clone(&c);
            let id = r.0.clone();
            std::thread::spawn(move || (id.clone(), c.handle_sync_group(sync("g", &id, 1, &[])).unwrap()))
        })
        .collect();
    wait_until(|| parked(&c, |m| m.awaiting_sync) == 3);
    let assignments: Vec<(String, String)> =
        results.iter().map(|r| (r.0.clone(), format!("for-{}", r.0))).collect();
    let refs: Vec<(&str, &str)> = assignments.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let mine = c.handle_sync_group(sync("g", &leader, 1, &refs)).unwrap();
    assert_eq!(mine.assignment, format!("for-{leader}").into_bytes());
    for handle in followers {
        let (id, response) = handle.join().unwrap();
        assert_eq!(response.error_code, ErrorCode::None);
        assert_eq!(response.assignment, format!("for-{id}").into_bytes());
    }
    let stored = storage.load_all().unwrap();
    assert_eq!(stored.groups.len(), 1, "the assignment was persisted");
    assert_eq!(stored.groups[0].members.len(), 4);
    assert_eq!(c.get_group("g").unwrap().state, GroupState::Stable);
}

#[test]
fn stop_answers_waiting_requests_and_later_ones() {
    let (c, _clock, _) = manual(test_config());
    let first = c.handle_join_group(join("g", "")).unwrap();
    let mut parked = c.join_group(join("g", &first.member_id));
    assert!(parked.try_get().is_none(), "parked until the barrier closes");
    c.stop();
    assert_eq!(parked.wait(), Err(CoordinatorError::Stopped));
    assert_eq!(c.handle_heartbeat(heartbeat("g", "x", 1)), Err(CoordinatorError::Stopped));
    assert_eq!(c.get_committed_offset("g", "t", 0), Err(CoordinatorError::Stopped));
    c.stop();
    assert!(c.is_stopped());
}

#[test]
fn stop_joins_the_timer_thread_and_answers_waiters() {
    let storage = Arc::new(MemoryMetadataStore::new());
    let c = Arc::new(GroupCoordinator::new(storage, CoordinatorConfig { ..test_config() }).unwrap());
    let first = c.handle_join_group(join("g", "")).unwrap();
    let mut long = join("g", &first.member_id);
    long.rebalance_timeout_ms = 600_000;
    // A second group keeps a far deadline so the timer thread sleeps.
    let parked = c.join_group(long);
    let c2 = Arc::clone(&c);
    let stopper = std::thread::spawn(move || c2.stop());
    stopper.join().unwrap();
    match parked.wait() {
        Err(CoordinatorError::Stopped) | Ok(_) => {}
        Err(other) => panic!("unexpected {other}"),
    }
    assert!(c.is_stopped());
}

#[test]
fn the_timer_thread_closes_the_initial_delay_on_the_system_clock() {
    let storage = Arc::new(MemoryMetadataStore::new());
    let config = CoordinatorConfig { initial_rebalance_delay_ms: 5, ..test_config() };
    let c = GroupCoordinator::new(storage, config).unwrap();
    let first = c.handle_join_group(join("g", "")).unwrap();
    // Blocks until the timer thread fires the initial-delay deadline.
    let second = c.handle_join_group(join("g", &first.member_id)).unwrap();
    assert_eq!(second.error_code, ErrorCode::None);
    assert_eq!(second.generation_id, 1);
    c.stop();
}

#[test]
fn manual_clock_expires_sessions_without_sleeping() {
    let (c, clock, _) = manual(test_config());
    let id = joined_alone(&c, &clock);
    c.handle_sync_group(sync("g", &id, 1, &[(&id, "a")])).unwrap();
    clock.advance(400);
    assert_eq!(c.handle_heartbeat(heartbeat("g", &id, 1)).unwrap().error_code, ErrorCode::None);
    clock.advance(499);
    assert_eq!(c.get_group("g").unwrap().state, GroupState::Stable);
    clock.advance(1);
    let group = c.get_group("g").unwrap();
    assert_eq!(group.state, GroupState::Empty, "session expired at exactly 500 ms after the heartbeat");
    assert_eq!(group.generation_id, 2);
}

#[test]
fn commits_reach_storage_before_the_answer_and_read_back() {
    let (c, clock, storage) = manual(test_config());
    let id = joined_alone(&c, &clock);
    c.handle_sync_group(sync("g", &id, 1, &[])).unwrap();
    let response = c.handle_offset_commit(commit("g", &id, 1, 42)).unwrap();
    assert_eq!(response.error_for("t", 0), Some(ErrorCode::None));
    assert_eq!(storage.fetch_group_offset("g", "t", 0).unwrap().unwrap().offset, 42);
    assert_eq!(c.get_committed_offset("g", "t", 0), Ok(42));
    assert_eq!(c.get_committed_offset("g", "t", 1), Ok(-1));
    let fetched = c.handle_offset_fetch(OffsetFetchRequest::all("g")).unwrap();
    assert_eq!(fetched.get("t", 0).unwrap().offset, 42);
    let stale = c.handle_offset_commit(commit("g", &id, 7, 43)).unwrap();
    assert_eq!(stale.error_for("t", 0), Some(ErrorCode::IllegalGeneration));
}

#[test]
fn a_storage_failure_is_answered_like_a_failed_append() {
    let storage = MemoryMetadataStore::new();
    let clock = Arc::new(ManualClock::new(0));
    let c = GroupCoordinator::with_clock(Arc::new(storage.clone()), test_config(), clock.clone()).unwrap();
    c.handle_offset_commit(commit("simple", "", -1, 1)).unwrap();
    storage.fail_writes(Some(StorageError::io("disk on fire")));
    let failed = c.handle_offset_commit(commit("simple", "", -1, 2)).unwrap();
    assert_eq!(
        failed.error_for("t", 0),
        Some(ErrorCode::NotCoordinator),
        "KAFKA_STORAGE_ERROR maps to NOT_COORDINATOR"
    );
    assert_eq!(c.get_committed_offset("simple", "t", 0), Ok(1), "the cache keeps the last durable offset");
    assert_eq!(storage.fetch_group_offset("simple", "t", 0).unwrap().map(|o| o.offset), Some(1));
    assert_eq!(c.failed_appends(), 1);
    storage.fail_writes(None);
    // A failed leader sync sends the group back to rebalancing.
    let id = joined_alone(&c, &clock);
    storage.fail_writes(Some(StorageError::io("disk on fire")));
    let sync = c.handle_sync_group(sync("g", &id, 1, &[(&id, "x")])).unwrap();
    assert_eq!(sync.error_code, ErrorCode::NotCoordinator);
    assert_eq!(c.get_group("g").unwrap().state, GroupState::PreparingRebalance);
    assert_eq!(c.failed_appends(), 2);
    assert_eq!(c.metrics().write_failures, 2);
}

#[test]
fn a_restarted_coordinator_resumes_stable_groups_and_their_sessions() {
    let (c, clock, storage) = manual(test_config());
    let id = joined_alone(&c, &clock);
    c.handle_sync_group(sync("g", &id, 1, &[(&id, "mine")])).unwrap();
    c.handle_offset_commit(commit("g", &id, 1, 9)).unwrap();
    c.stop();
    drop(c);
    let clock2 = Arc::new(ManualClock::new(5_000));
    let c2 = GroupCoordinator::with_clock(Arc::new(storage), test_config(), clock2.clone()).unwrap();
    let group = c2.get_group("g").unwrap();
    assert_eq!(group.state, GroupState::Stable);
    assert_eq!(group.generation_id, 1);
    assert_eq!(group.member(&id).unwrap().assignment, b"mine");
    assert_eq!(c2.get_committed_offset("g", "t", 0), Ok(9));
    assert_eq!(c2.handle_heartbeat(heartbeat("g", &id, 1)).unwrap().error_code, ErrorCode::None);
    clock2.advance(500);
    assert_eq!(c2.get_group("g").unwrap().state, GroupState::Empty, "loaded sessions are armed");
}

#[test]
fn snapshots_share_nothing_with_the_live_group() {
    let (c, clock, _) = manual(test_config());
    let first = c.handle_join_group(join("g", "")).unwrap();
    let parked = c.join_group(join("g", &first.member_id));
    let before = c.get_group("g").unwrap();
    clock.advance(50);
    parked.wait().unwrap();
    let leave = c.handle_leave_group(leave("g", &first.member_id)).unwrap();
    assert_eq!(leave.collapsed_error(), ErrorCode::None);
    assert_eq!(before.state, GroupState::PreparingRebalance);
    assert_eq!(before.members.len(), 1);
    assert_eq!(c.get_group("g").unwrap().members.len(), 0);
    assert_eq!(c.list_groups().len(), 1);
}

#[test]
fn different_groups_proceed_in_parallel() {
    let (c, clock, _) = manual(test_config());
    let c = Arc::new(c);
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                let group = format!("group-{i}");
                let first = c.handle_join_group(join(&group, "")).unwrap();
                c.join_group(join(&group, &first.member_id))
            })
        })
        .collect();
    let pendings: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    clock.advance(50);
    for p in pendings {
        assert_eq!(p.wait().unwrap().generation_id, 1);
    }
    assert_eq!(c.list_groups().len(), 8);
}
