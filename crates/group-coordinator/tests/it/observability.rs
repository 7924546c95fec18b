//! Observability: the core's events as data, the runtime's metrics after a scripted
//! sequence on the manual clock, and its `tracing` events caught by a test subscriber.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, ExpirationReason, GroupCoordinator, GroupEvent, ManualClock, Request,
    RequestId, TimerKey,
};
use group_offsets::MemoryMetadataStore;
use group_types::{ErrorCode, GroupState, JoinGroupRequest, OffsetCommitData, OffsetCommitRequest};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber, span};

use crate::support::{commit, heartbeat, join, sync, test_config};

fn join_v3(group: &str, member_id: &str) -> JoinGroupRequest {
    JoinGroupRequest { api_version: 3, ..join(group, member_id) }
}

fn manual(config: CoordinatorConfig) -> (GroupCoordinator, Arc<ManualClock>) {
    let storage = Arc::new(MemoryMetadataStore::new());
    let clock = Arc::new(ManualClock::new(1_000));
    (GroupCoordinator::with_clock(storage, config, clock.clone()).unwrap(), clock)
}

/// One `tracing` event: its level, message and fields, as text.
#[derive(Debug, Clone)]
struct Captured {
    level: Level,
    message: String,
    fields: BTreeMap<String, String>,
}

impl Captured {
    fn field(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }
}

/// The groups whose events [`Capture`] keeps: each test names its groups with
/// this prefix, so that the tests running beside it add nothing to its events.
const TRACED: &str = "traced-";

/// The smallest subscriber that keeps every event of the coordinator's target
/// about a [`TRACED`] group.
#[derive(Debug, Clone, Default)]
struct Capture {
    events: Arc<Mutex<Vec<Captured>>>,
}

impl Capture {
    /// The events with `message` about `group`, in the order they were emitted.
    fn with(&self, message: &str, group: &str) -> Vec<Captured> {
        let events = self.events.lock().unwrap();
        events.iter().filter(|e| e.message == message && e.field("group_id") == group).cloned().collect()
    }

    /// As [`with`](Self::with), checking that each is an info event: what
    /// operators follow without debug logging.
    fn info(&self, message: &str, group: &str) -> Vec<Captured> {
        let events = self.with(message, group);
        for e in &events {
            assert_eq!(e.level, Level::INFO, "{e:?}");
        }
        events
    }
}

/// The process's global subscriber, installed once. Not a thread's default
/// (`with_default`): what a write's completion releases (a group turning Stable
/// after the leader's assignment is durable, the retention job's expirations) is
/// emitted by the runtime's storage thread, which a thread-local default misses.
fn capture() -> &'static Capture {
    static CAPTURE: OnceLock<Capture> = OnceLock::new();
    CAPTURE.get_or_init(|| {
        let capture = Capture::default();
        tracing::subscriber::set_global_default(capture.clone()).expect("the only global subscriber");
        capture
    })
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }

    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}

    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        if event.metadata().target() != "group_coordinator" {
            return;
        }
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let message = fields.remove("message").unwrap_or_default();
        let captured = Captured { level: *event.metadata().level(), message, fields };
        if captured.field("group_id").starts_with(TRACED) {
            self.events.lock().unwrap().push(captured);
        }
    }

    fn enter(&self, _: &span::Id) {}

    fn exit(&self, _: &span::Id) {}
}

/// Two members form generation 1 and commit; a third asks for a member id and never
/// returns; the follower stops heartbeating and expires; the leader rejoins alone
/// (generation 2), all in `group`. Returns (leader, follower).
fn scripted(c: &GroupCoordinator, clock: &ManualClock, group: &str) -> (String, String) {
    let first = c.join_group(join_v3(group, ""));
    let second = c.join_group(join_v3(group, ""));
    clock.advance(200);
    let (first, second) = (first.wait().unwrap(), second.wait().unwrap());
    assert_eq!((first.generation_id, second.generation_id), (1, 1));
    let (leader, follower) = if first.is_leader() {
        (first.member_id, second.member_id)
    } else {
        (second.member_id, first.member_id)
    };
    let assignment = [(leader.as_str(), "a"), (follower.as_str(), "b")];
    assert_eq!(
        c.handle_sync_group(sync(group, &leader, 1, &assignment)).unwrap().error_code,
        ErrorCode::None
    );
    assert_eq!(c.handle_sync_group(sync(group, &follower, 1, &[])).unwrap().error_code, ErrorCode::None);
    let two = commit(group, &leader, 1, 10).with_offset("t", 1, OffsetCommitData::new(11));
    assert_eq!(c.handle_offset_commit(two).unwrap().error_for("t", 1), Some(ErrorCode::None));
    let pending = c.handle_join_group(join(group, "")).unwrap();
    assert_eq!(pending.error_code, ErrorCode::MemberIdRequired);
    clock.advance(200);
    assert_eq!(c.handle_heartbeat(heartbeat(group, &leader, 1)).unwrap().error_code, ErrorCode::None);
    // The follower's session (and the pending member id) run out on the way.
    clock.advance(400);
    let beat = c.handle_heartbeat(heartbeat(group, &leader, 1)).unwrap();
    assert_eq!(beat.error_code, ErrorCode::RebalanceInProgress);
    let rejoined = c.handle_join_group(join_v3(group, &leader)).unwrap();
    assert_eq!((rejoined.error_code, rejoined.generation_id), (ErrorCode::None, 2));
    assert_eq!(c.handle_sync_group(sync(group, &leader, 2, &[])).unwrap().error_code, ErrorCode::None);
    (leader.to_string(), follower.to_string())
}

#[test]
fn the_core_reports_rebalances_as_data() {
    let mut core = CoordinatorCore::new(test_config());
    let fx = core.handle(0, RequestId(1), Request::JoinGroup(join_v3("g", "")));
    let g: Arc<str> = Arc::from("g");
    let member = core.group("g").unwrap().members[0].member_id.clone();
    let reason =
        format!("Adding new member {member} with group instance id null; client reason: not provided");
    assert_eq!(
        fx.events,
        vec![
            GroupEvent::RebalanceStarted { group_id: g.clone(), generation_id: 0, members: 1, reason },
            GroupEvent::StateChanged {
                group_id: g.clone(),
                from: GroupState::Empty,
                to: GroupState::PreparingRebalance,
                generation_id: 0,
            },
        ]
    );
    let fx = core.complete_write(0, fx.writes[0].id, Ok(()));
    assert!(fx.events.is_empty());
    let fx = core.fire_timer(50, &TimerKey::Join(g.clone()));
    let leader = core.group("g").unwrap().leader_id.unwrap();
    assert_eq!(
        fx.events,
        vec![
            GroupEvent::RebalanceCompleted {
                group_id: g.clone(),
                generation_id: 1,
                members: 1,
                leader_id: Some(Arc::from(leader.as_str())),
                protocol_name: Some("range".into()),
            },
            GroupEvent::StateChanged {
                group_id: g.clone(),
                from: GroupState::PreparingRebalance,
                to: GroupState::CompletingRebalance,
                generation_id: 1,
            },
        ]
    );
    // The session deadline passes without a heartbeat (nor a SyncGroup).
    let fx = core.fire_timer(550, &TimerKey::Session(g.clone(), Arc::from(leader.as_str())));
    assert!(fx.events.contains(&GroupEvent::MemberExpired {
        group_id: g.clone(),
        member_id: Arc::from(leader.as_str()),
        reason: ExpirationReason::Session,
    }));
}

#[test]
fn metrics_count_a_scripted_sequence() {
    let (c, clock) = manual(test_config());
    assert_eq!(c.metrics().groups(), 0);
    scripted(&c, &clock, "g");
    let m = c.metrics();
    assert_eq!((m.groups_stable, m.groups(), m.members), (1, 1, 1));
    assert_eq!(m.groups_in(GroupState::Stable), 1);
    assert_eq!((m.rebalances_started, m.rebalances_completed), (2, 2));
    let e = m.member_expirations;
    assert_eq!((e.session, e.pending_member, e.new_member_join, e.join, e.sync), (1, 1, 0, 0, 0));
    assert_eq!(m.member_expirations.total(), 2);
    assert_eq!((m.offset_commits, m.offset_commit_partitions), (1, 2));
    assert_eq!((m.static_members_fenced, m.offsets_expired, m.authorization_failures), (0, 0, 0));
}

#[test]
fn metrics_count_groups_per_state() {
    let (c, clock) = manual(test_config());
    let simple = OffsetCommitRequest { group_id: "simple".into(), ..OffsetCommitRequest::default() }
        .with_offset("t", 0, OffsetCommitData::new(1));
    c.handle_offset_commit(simple).unwrap();
    let _parked = c.join_group(join_v3("joining", ""));
    let m = c.metrics();
    assert_eq!((m.groups_empty, m.groups_preparing_rebalance, m.members), (1, 1, 1));
    clock.advance(100);
    let m = c.metrics();
    assert_eq!((m.groups_empty, m.groups_completing_rebalance, m.groups()), (1, 1, 2));
}

#[test]
fn a_follower_that_never_syncs_is_counted_as_a_sync_expiration() {
    let (c, clock) = manual(test_config());
    // A rebalance timeout shorter than the session: the pending-sync deadline comes first.
    let short = |id: &str| JoinGroupRequest { rebalance_timeout_ms: 300, ..join_v3("g", id) };
    let first = c.join_group(short(""));
    let second = c.join_group(short(""));
    clock.advance(200);
    let (first, second) = (first.wait().unwrap(), second.wait().unwrap());
    let leader = if first.is_leader() { first.member_id } else { second.member_id };
    c.handle_sync_group(sync("g", &leader, 1, &[])).unwrap();
    clock.advance(300);
    let m = c.metrics();
    let e = m.member_expirations;
    assert_eq!((e.sync, e.total()), (1, 1));
    assert_eq!(m.rebalances_started, 2);
}

#[test]
fn tracing_events_describe_rebalances_and_expirations() {
    let capture = capture();
    let (c, clock) = manual(test_config());
    let group = "traced-rebalances";
    let (leader, follower) = scripted(&c, &clock, group);
    // Every write the sequence issued has completed (each answer waited for its
    // own), and `metrics` takes every partition's lock, so what the storage thread
    // emitted while completing them is in.
    assert!(c.wait_for_writes(Duration::from_secs(10)));
    let _ = c.metrics();

    let started = capture.info("rebalance started", group);
    assert_eq!(started.len(), 2);
    assert_eq!((started[0].field("group_id"), started[0].field("generation_id")), (group, "0"));
    assert!(started[0].field("reason").starts_with("Adding new member consumer-"), "{started:?}");
    assert!(started[0].field("reason").ends_with("with group instance id null; client reason: not provided"));
    assert_eq!((started[1].field("generation_id"), started[1].field("members")), ("1", "1"));
    assert_eq!(started[1].field("reason"), format!("removing member {follower} on heartbeat expiration."));
    let completed = capture.info("rebalance completed", group);
    assert_eq!(completed.len(), 2);
    assert_eq!(completed[0].field("generation_id"), "1");
    assert_eq!(completed[0].field("members"), "2");
    assert_eq!(completed[0].field("leader_id"), leader);
    assert_eq!(completed[0].field("protocol_name"), "range");
    assert_eq!(completed[1].field("generation_id"), "2");
    let stable = capture.info("generation stable", group);
    let generations: Vec<_> = stable
        .iter()
        .map(|e| {
            (e.field("generation_id"), e.field("members"), e.field("leader_id"), e.field("protocol_name"))
        })
        .collect();
    assert_eq!(generations, vec![("1", "2", leader.as_str(), "range"), ("2", "1", leader.as_str(), "range")]);

    let expired = capture.info("member expired", group);
    let reasons: Vec<_> = expired.iter().map(|e| (e.field("reason"), e.field("member_id"))).collect();
    assert!(reasons.contains(&("session", follower.as_str())), "{reasons:?}");
    assert!(reasons.iter().any(|(r, _)| *r == "pending-member"), "{reasons:?}");

    let changes = capture.with("group state changed", group);
    assert!(changes.iter().all(|e| e.level == Level::DEBUG), "per-step noise stays at debug");
    let states: Vec<(String, String)> =
        changes.iter().map(|e| (e.field("from").to_owned(), e.field("to").to_owned())).collect();
    let expected = [
        ("Empty", "PreparingRebalance"),
        ("PreparingRebalance", "CompletingRebalance"),
        ("CompletingRebalance", "Stable"),
        ("Stable", "PreparingRebalance"),
        ("PreparingRebalance", "CompletingRebalance"),
        ("CompletingRebalance", "Stable"),
    ];
    let expected: Vec<(String, String)> = expected.iter().map(|(a, b)| ((*a).into(), (*b).into())).collect();
    assert_eq!(states, expected);
}

#[test]
fn tracing_reports_fenced_static_members_and_expired_offsets() {
    let config = CoordinatorConfig {
        offset_retention_ms: 1_000,
        offsets_retention_check_interval_ms: 500,
        ..test_config()
    };
    let (c, clock) = manual(config);
    let capture = capture();
    let (group, simple_group) = ("traced-static", "traced-simple");
    let static_join = || JoinGroupRequest { group_instance_id: Some("i1".into()), ..join(group, "") };
    let first = c.join_group(static_join());
    clock.advance(100);
    let first = first.wait().unwrap();
    c.handle_sync_group(sync(group, &first.member_id, 1, &[])).unwrap();
    let second = c.handle_join_group(static_join()).unwrap();
    assert_eq!(second.error_code, ErrorCode::None);
    assert_ne!(second.member_id, first.member_id);
    let fenced = capture.info("static member fenced", group);
    assert_eq!(fenced.len(), 1);
    assert_eq!(fenced[0].field("group_instance_id"), "i1");
    assert_eq!(fenced[0].field("old_member_id"), first.member_id);
    assert_eq!(fenced[0].field("new_member_id"), second.member_id);

    let simple = OffsetCommitRequest { group_id: simple_group.into(), ..OffsetCommitRequest::default() }
        .with_offset("t", 0, OffsetCommitData::new(1))
        .with_offset("t", 1, OffsetCommitData::new(1));
    c.handle_offset_commit(simple).unwrap();
    // Keep the static member alive while the retention job runs.
    for _ in 0..8 {
        clock.advance(250);
        c.handle_heartbeat(heartbeat(group, &second.member_id, 1)).unwrap();
    }
    // The expiration is reported once its tombstones are durable, by the storage
    // thread: wait for the writes the timer issued (`metrics` then takes every
    // partition's lock, behind which the completion is handled).
    assert!(c.wait_for_writes(Duration::from_secs(10)));
    let m = c.metrics();
    let expired = capture.info("offsets expired", simple_group);
    assert_eq!(expired.len(), 1, "{expired:?}");
    assert_eq!(expired[0].field("group_id"), simple_group);
    assert_eq!(expired[0].field("partitions"), "2");
    assert_eq!(expired[0].field("group_removed"), "true");
    assert_eq!(capture.info("group expired", simple_group).len(), 1);
    assert!(capture.with("group expired", group).is_empty(), "the static member's group lives on");
    assert_eq!((m.static_members_fenced, m.offsets_expired, m.groups_expired), (1, 2, 1));
    assert!(c.get_group(simple_group).is_none());
}

#[test]
fn tracing_reports_leaves_emptied_and_deleted_groups() {
    let (c, clock) = manual(test_config());
    let capture = capture();
    let group = "traced-leave";
    let parked = c.join_group(join_v3(group, ""));
    clock.advance(100);
    let id = parked.wait().unwrap().member_id;
    assert_eq!(
        c.handle_sync_group(sync(group, &id, 1, &[(id.as_str(), "a")])).unwrap().error_code,
        ErrorCode::None
    );
    let committed = c.handle_offset_commit(commit(group, &id, 1, 10)).unwrap();
    assert_eq!(committed.error_for("t", 0), Some(ErrorCode::None));
    let leave = group_types::LeaveGroupRequest {
        group_id: group.into(),
        members: vec![group_types::MemberIdentity {
            reason: Some("shutting down".into()),
            ..group_types::MemberIdentity::new(id.as_str())
        }],
    };
    assert_eq!(c.handle_leave_group(leave).unwrap().members[0].error_code, ErrorCode::None);

    let left = capture.info("member left", group);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!((left[0].field("member_id"), left[0].field("reason")), (id.as_str(), "shutting down"));
    let started = capture.info("rebalance started", group);
    assert_eq!(started.len(), 2);
    assert_eq!(started[1].field("reason"), format!("explicit `LeaveGroup` request for ({id}) members."));
    assert_eq!((started[1].field("generation_id"), started[1].field("members")), ("1", "0"));
    // The join phase the leave began ends at once, without members.
    let emptied = capture.info("group emptied", group);
    assert_eq!(emptied.len(), 1, "{emptied:?}");
    assert_eq!(emptied[0].field("generation_id"), "2");

    let deleted =
        c.handle_delete_groups(group_types::DeleteGroupsRequest { group_ids: vec![group.into()] }).unwrap();
    assert_eq!(deleted.results[0].error_code, ErrorCode::None);
    let deleted = capture.info("group deleted", group);
    assert_eq!(deleted.len(), 1, "{deleted:?}");
    assert_eq!(deleted[0].field("offsets"), "1");
    let m = c.metrics();
    assert_eq!((m.members_left, m.groups_deleted, m.groups_expired), (1, 1, 0));
}

#[test]
fn append_latency_measures_each_batch_from_append_to_completion() {
    let storage = Arc::new(MemoryMetadataStore::new());
    let clock = Arc::new(ManualClock::new(1_000));
    let c = GroupCoordinator::with_clock(storage.clone(), test_config(), clock).unwrap();
    assert_eq!(c.metrics().append_latency.count(), 0);
    storage.hold_appends(true);
    let started = std::time::Instant::now();
    let request = OffsetCommitRequest { group_id: "held".into(), ..OffsetCommitRequest::default() }
        .with_offset("t", 0, OffsetCommitData::new(1));
    let pending = c.offset_commit(request);
    let deadline = started + Duration::from_secs(10);
    while storage.held_appends() == 0 {
        assert!(std::time::Instant::now() < deadline, "the commit's append never reached the store");
        std::thread::yield_now();
    }
    // The append is held: whatever time passes now is storage latency.
    let held_for = Duration::from_millis(20);
    std::thread::sleep(held_for);
    storage.hold_appends(false);
    assert!(storage.release_held(None, None));
    pending.wait().unwrap();
    assert!(c.wait_for_writes(Duration::from_secs(10)));
    let total = started.elapsed();
    let latency = c.metrics().append_latency;
    assert_eq!(latency.count(), storage.append_count());
    assert!(latency.sum >= held_for && latency.sum <= total, "{latency:?} outside {held_for:?}..{total:?}");
    // 20 ms lands above the 10 ms bound.
    assert!(latency.buckets().any(|(bound, n)| n > 0 && bound > Some(Duration::from_millis(10))));
}
