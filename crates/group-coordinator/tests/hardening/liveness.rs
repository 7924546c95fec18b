//! Liveness: every request the coordinator parks is answered, including when the
//! member that sent it goes away (the case the simulation's first runs tripped on).

use std::sync::Arc;

use group_coordinator::{GroupCoordinator, ManualClock, Request, Response};
use group_offsets::MemoryMetadataStore;
use group_types::{ErrorCode, GroupState};

use crate::support::{CoreDriver, fast_config, join, join_answer, leave, must, settle, sync};

/// A follower whose SyncGroup is parked waiting for the leader sends LeaveGroup.
/// Kafka's Java coordinator forgets the member and its sync future, so that request is
/// never answered; this coordinator deliberately answers it (UNKNOWN_MEMBER_ID) so that
/// no caller, and no runtime `Pending`, waits for ever.
#[test]
fn a_leaving_members_parked_sync_is_answered() {
    let mut d = CoreDriver::new(fast_config(0));
    let (r1, out) = d.send(Request::JoinGroup(join("g", "", None, 1_000, 1_000)));
    let a = join_answer(&out, r1).unwrap().member_id;
    let (r2, out) = d.send(Request::JoinGroup(join("g", "", None, 1_000, 1_000)));
    let b = join_answer(&out, r2).unwrap().member_id;
    let (ra, _) = d.send(Request::JoinGroup(join("g", &a, None, 1_000, 1_000)));
    let (rb, _) = d.send(Request::JoinGroup(join("g", &b, None, 1_000, 1_000)));
    let out = d.advance_to(1);
    assert_eq!(join_answer(&out, ra).unwrap().error_code, ErrorCode::None);
    let generation = join_answer(&out, rb).unwrap().generation_id;
    assert_eq!(d.core.group("g").map(|g| g.state), Some(GroupState::CompletingRebalance));
    // B (the follower) syncs first and is parked waiting for the leader.
    let (sync_rid, out) = d.send(Request::SyncGroup(sync("g", &b, None, generation, Vec::new())));
    assert!(out.is_empty(), "the follower's sync should wait for the leader: {out:?}");
    // B leaves while its sync is parked.
    let (leave_rid, mut out) = d.send(Request::LeaveGroup(leave("g", &b, None)));
    assert!(out.iter().any(|(id, _)| *id == leave_rid), "the LeaveGroup is answered: {out:?}");
    out.extend(d.advance_to(60_000));
    let answer = out.iter().find(|(id, _)| *id == sync_rid);
    assert!(
        matches!(answer, Some((_, Response::SyncGroup(r))) if r.error_code != ErrorCode::None),
        "B's parked SyncGroup ({sync_rid:?}) must be answered with an error after B left: {out:?}"
    );
}

/// The same through the runtime: the follower's `Pending` must resolve once it left.
#[test]
fn through_the_runtime_a_leaving_members_parked_sync_resolves() {
    let clock = Arc::new(ManualClock::new(0));
    let coordinator =
        GroupCoordinator::with_clock(Arc::new(MemoryMetadataStore::new()), fast_config(0), clock.clone())
            .unwrap();
    let a = must(coordinator.join_group(join("g", "", None, 1_000, 1_000)), "A's first join").member_id;
    let b = must(coordinator.join_group(join("g", "", None, 1_000, 1_000)), "B's first join").member_id;
    let a_join = coordinator.join_group(join("g", &a, None, 1_000, 1_000));
    let b_join = coordinator.join_group(join("g", &b, None, 1_000, 1_000));
    clock.advance(1);
    let a_joined = must(a_join, "A's join");
    let b_joined = must(b_join, "B's join");
    assert_eq!(a_joined.error_code, ErrorCode::None);
    assert_eq!(b_joined.generation_id, a_joined.generation_id);
    let mut b_sync = coordinator.sync_group(sync("g", &b, None, b_joined.generation_id, Vec::new()));
    assert!(b_sync.try_get().is_none(), "the follower's sync waits for the leader");
    let left = must(coordinator.leave_group(leave("g", &b, None)), "B's leave");
    assert_eq!(left.error_code, ErrorCode::None);
    clock.advance(60_000);
    // An answer released by a write comes from the storage thread, a moment after
    // the step that issued the write: let the writes complete before looking.
    settle(&coordinator);
    assert!(
        matches!(b_sync.try_get(), Some(Ok(r)) if r.error_code != ErrorCode::None),
        "B's SyncGroup is still unanswered after B left ({} request(s) waiting in the coordinator)",
        coordinator.waiting_requests()
    );
}
