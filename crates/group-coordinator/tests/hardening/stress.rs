//! Stress: many client threads over many groups through `GroupCoordinator` while the
//! manual clock moves with their work (timers fire concurrently with requests). Every
//! call must return (a bounded wait detects deadlock), no partition has two owners in
//! one generation, and no partition's committed offset goes backwards. Bounded by
//! iteration counts, not wall time.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use group_coordinator::{GroupCoordinator, ManualClock, Pending};
use group_offsets::MemoryMetadataStore;
use group_types::{ErrorCode, JoinGroupResponse, OffsetFetchRequest, SyncGroupResponse, TopicPartition};

use crate::support::{
    DEADLOCK, Rng, commit, decode_assignment, encode_plan, fast_config, heartbeat, join, leave, must,
    round_robin, sync, topic_set,
};

const GROUPS: usize = 6;
const MEMBERS_PER_GROUP: usize = 4;
const THREADS: usize = 6;
/// Actions per member.
const ITERATIONS: usize = 12_000;
/// The clock moves 5 ms each time the members made this many actions (about one action
/// per member per tick), so that simulated time keeps pace with the work whatever the
/// machine's speed and scheduling.
const ACTIONS_PER_TICK: u64 = (GROUPS * MEMBERS_PER_GROUP) as u64;

/// Everything the threads report, checked as it arrives.
#[derive(Default)]
struct Checks {
    owners: Mutex<HashMap<(String, i32, TopicPartition), String>>,
    leaders: Mutex<HashMap<(String, i32), String>>,
    violations: Mutex<Vec<String>>,
    assignments: AtomicU64,
    commits: AtomicU64,
}

impl Checks {
    fn violation(&self, message: String) {
        self.violations.lock().unwrap_or_else(PoisonError::into_inner).push(message);
    }

    fn leader(&self, group: &str, generation: i32, leader: &str) {
        let mut leaders = self.leaders.lock().unwrap_or_else(PoisonError::into_inner);
        let known = leaders.entry((group.to_owned(), generation)).or_insert_with(|| leader.to_owned());
        if known != leader {
            let message = format!("{group} generation {generation}: leaders {known} and {leader}");
            drop(leaders);
            self.violation(message);
        }
    }

    fn assigned(&self, group: &str, generation: i32, member: &str, bytes: &[u8]) {
        self.assignments.fetch_add(1, Ordering::Relaxed);
        let partitions = match decode_assignment(bytes) {
            Ok(p) => p,
            Err(e) => return self.violation(format!("{group} generation {generation}: {e}")),
        };
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        for tp in partitions {
            let owner =
                owners.entry((group.to_owned(), generation, tp.clone())).or_insert_with(|| member.to_owned());
            if owner != member {
                let message = format!("{group} generation {generation}: {tp} owned by {owner} and {member}");
                drop(owners);
                return self.violation(message);
            }
        }
    }
}

/// The last acknowledged offset of every (group, partition). Commits of one partition
/// are serialised by its lock, so the coordinator must show exactly the last one.
type Committed = HashMap<(String, TopicPartition), Mutex<i64>>;

enum InFlight {
    Join(Pending<JoinGroupResponse>),
    Sync(Pending<SyncGroupResponse>, i32),
}

impl InFlight {
    fn is_ready(&self) -> bool {
        match self {
            InFlight::Join(p) => p.is_ready(),
            InFlight::Sync(p, _) => p.is_ready(),
        }
    }
}

/// Hands `m`'s answer in flight, if it comes within `wait`, to the member.
fn resolve(shared: &Shared, m: &mut Member, wait: Duration) {
    match m.in_flight.take() {
        Some(InFlight::Join(mut p)) => match p.wait_timeout(wait) {
            Some(r) => on_join(shared, m, r.expect("a join is answered, not failed")),
            None => m.in_flight = Some(InFlight::Join(p)),
        },
        Some(InFlight::Sync(mut p, generation)) => match p.wait_timeout(wait) {
            Some(r) => on_sync(shared, m, generation, r.expect("a sync is answered, not failed")),
            None => m.in_flight = Some(InFlight::Sync(p, generation)),
        },
        None => {}
    }
}

/// On the system clock, a thread whose members all wait on parked requests waits (a
/// little) for one of them instead of spinning.
fn wait_for_any(shared: &Shared, members: &mut [Member]) {
    if members.iter().any(|m| m.in_flight.as_ref().is_none_or(InFlight::is_ready)) {
        return;
    }
    if let Some(m) = members.first_mut() {
        resolve(shared, m, Duration::from_millis(50));
    }
}

struct Member {
    group: String,
    id: String,
    generation: i32,
    leads: Option<Vec<String>>,
    needs_sync: bool,
    stable: bool,
    in_flight: Option<InFlight>,
}

impl Member {
    fn new(group: String) -> Member {
        Member {
            group,
            id: String::new(),
            generation: -1,
            leads: None,
            needs_sync: false,
            stable: false,
            in_flight: None,
        }
    }

    fn reset(&mut self, keep_id: bool) {
        if !keep_id {
            self.id.clear();
        }
        self.needs_sync = false;
        self.stable = false;
        self.leads = None;
    }
}

struct Shared {
    coordinator: GroupCoordinator,
    checks: Checks,
    committed: Committed,
    next_offset: AtomicI64,
    actions: AtomicU64,
    session_ms: i32,
    rebalance_ms: i32,
}

fn on_join(shared: &Shared, m: &mut Member, r: JoinGroupResponse) {
    match r.error_code {
        ErrorCode::MemberIdRequired => m.id = r.member_id.to_string(),
        ErrorCode::None => {
            shared.checks.leader(&m.group, r.generation_id, &r.leader_id);
            m.id = r.member_id.to_string();
            m.generation = r.generation_id;
            m.leads = (r.leader_id == r.member_id)
                .then(|| r.members.iter().map(|x| x.member_id.to_string()).collect());
            m.needs_sync = true;
        }
        ErrorCode::RebalanceInProgress => m.reset(true),
        _ => m.reset(false),
    }
}

fn on_sync(shared: &Shared, m: &mut Member, generation: i32, r: SyncGroupResponse) {
    match r.error_code {
        ErrorCode::None => {
            shared.checks.assigned(&m.group, generation, &m.id, &r.assignment);
            m.stable = true;
        }
        ErrorCode::UnknownMemberId => m.reset(false),
        _ => m.reset(true),
    }
}

fn commit_and_check(shared: &Shared, m: &Member, tp: &TopicPartition) {
    let lock = &shared.committed[&(m.group.clone(), tp.clone())];
    let mut last = lock.lock().unwrap_or_else(PoisonError::into_inner);
    let offset = shared.next_offset.fetch_add(1, Ordering::Relaxed);
    let request = commit(&m.group, &m.id, None, m.generation, &[(tp.clone(), offset)]);
    let response = must(shared.coordinator.offset_commit(request), "commit");
    if response.error_for(&tp.topic, tp.partition) == Some(ErrorCode::None) {
        *last = offset;
        shared.checks.commits.fetch_add(1, Ordering::Relaxed);
    }
    let fetched = must(shared.coordinator.offset_fetch(OffsetFetchRequest::all(m.group.as_str())), "fetch");
    let seen =
        fetched.offsets.get(tp.topic.as_ref()).and_then(|p| p.get(&tp.partition)).map_or(-1, |d| d.offset);
    if seen != *last {
        shared.checks.violation(format!("{} {tp}: fetched {seen}, last acknowledged {}", m.group, *last));
    }
}

/// One action for one member; never blocks on a parked request.
fn act(shared: &Shared, m: &mut Member, rng: &mut Rng) {
    let c = &shared.coordinator;
    if m.in_flight.is_some() {
        return resolve(shared, m, Duration::ZERO);
    }
    if m.needs_sync {
        m.needs_sync = false;
        let plan = m.leads.as_ref().map(|ids| encode_plan(&round_robin(ids))).unwrap_or_default();
        let p = c.sync_group(sync(&m.group, &m.id, None, m.generation, plan));
        m.in_flight = Some(InFlight::Sync(p, m.generation));
    } else if !m.stable {
        m.in_flight = Some(InFlight::Join(c.join_group(join(
            &m.group,
            &m.id,
            None,
            shared.session_ms,
            shared.rebalance_ms,
        ))));
    } else {
        let roll = rng.below(100);
        if roll < 2 {
            // The member may have expired meanwhile: any answer will do, but one must come.
            must(c.leave_group(leave(&m.group, &m.id, None)), "leave");
            m.reset(false);
        } else if roll < 25 {
            let all = topic_set();
            let tp = all[rng.below(all.len() as u64) as usize].clone();
            commit_and_check(shared, m, &tp);
        } else {
            let r = must(c.heartbeat(heartbeat(&m.group, &m.id, None, m.generation)), "heartbeat");
            match r.error_code {
                ErrorCode::None => {}
                ErrorCode::UnknownMemberId => m.reset(false),
                _ => m.reset(true),
            }
        }
    }
}

#[test]
fn many_threads_many_groups_no_deadlock_and_invariants_hold() {
    let clock = Arc::new(ManualClock::new(0));
    let coordinator =
        GroupCoordinator::with_clock(Arc::new(MemoryMetadataStore::new()), fast_config(20), clock.clone())
            .unwrap();
    run(coordinator, Some(clock), ITERATIONS, 2_000, 3_000);
}

/// The same on the system clock, so that the runtime's own timer thread fires the
/// deadlines. Timeouts are long enough that nobody expires on a slow machine; nothing
/// about timing is asserted, only that every call returns and the invariants hold.
#[test]
fn the_timer_thread_under_load_no_deadlock_and_invariants_hold() {
    let coordinator = GroupCoordinator::new(Arc::new(MemoryMetadataStore::new()), fast_config(20)).unwrap();
    run(coordinator, None, ITERATIONS / 4, 60_000, 30_000);
}

fn run(
    coordinator: GroupCoordinator,
    clock: Option<Arc<ManualClock>>,
    iterations: usize,
    session_ms: i32,
    rebalance_ms: i32,
) {
    let groups: Vec<String> = (0..GROUPS).map(|g| format!("stress-{g}")).collect();
    let mut committed = Committed::new();
    for g in &groups {
        for tp in topic_set() {
            committed.insert((g.clone(), tp), Mutex::new(-1));
        }
    }
    let shared = Arc::new(Shared {
        coordinator,
        checks: Checks::default(),
        committed,
        next_offset: AtomicI64::new(1),
        actions: AtomicU64::new(0),
        session_ms,
        rebalance_ms,
    });
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let shared = shared.clone();
            let groups = groups.clone();
            let clock = clock.clone();
            std::thread::spawn(move || {
                let mut rng = Rng::new(t as u64);
                let mut members: Vec<Member> = (0..GROUPS * MEMBERS_PER_GROUP)
                    .filter(|k| k % THREADS == t)
                    .map(|k| Member::new(groups[k / MEMBERS_PER_GROUP].clone()))
                    .collect();
                for _ in 0..iterations {
                    for m in members.iter_mut() {
                        act(&shared, m, &mut rng);
                        // Whichever thread completes a tick moves the clock, firing due
                        // timers on this thread while the others keep sending requests.
                        let actions = shared.actions.fetch_add(1, Ordering::Relaxed) + 1;
                        if let Some(clock) =
                            clock.as_ref().filter(|_| actions.is_multiple_of(ACTIONS_PER_TICK))
                        {
                            clock.advance(5);
                        }
                    }
                    if clock.is_none() {
                        wait_for_any(&shared, &mut members);
                    }
                }
                // Leave; whatever is still in flight must be answered later.
                let mut in_flight = Vec::new();
                for m in members.iter_mut() {
                    if !m.id.is_empty() {
                        must(shared.coordinator.leave_group(leave(&m.group, &m.id, None)), "final leave");
                    }
                    in_flight.extend(m.in_flight.take());
                }
                in_flight
            })
        })
        .collect();
    let mut in_flight = Vec::new();
    for w in workers {
        in_flight.extend(w.join().expect("a client thread panicked"));
    }
    // Far enough for every join, sync and new-member timer to fire. On the system
    // clock nothing is left to wait for: every member has left.
    if let Some(clock) = &clock {
        clock.advance(2 * 300_000);
    }
    for p in in_flight {
        let answered = match p {
            InFlight::Join(mut p) => p.wait_timeout(DEADLOCK).map(|r| r.map(|_| ())),
            InFlight::Sync(mut p, _) => p.wait_timeout(DEADLOCK).map(|r| r.map(|_| ())),
        };
        assert!(matches!(answered, Some(Ok(()))), "a parked request was never answered: {answered:?}");
    }
    assert_eq!(shared.coordinator.waiting_requests(), 0, "requests left waiting in the coordinator");
    let violations = shared.checks.violations.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert!(violations.is_empty(), "{violations:#?}");
    let assignments = shared.checks.assignments.load(Ordering::Relaxed);
    let commits = shared.checks.commits.load(Ordering::Relaxed);
    println!("stress: {assignments} assignments, {commits} acknowledged commits");
    assert!(assignments >= (GROUPS * MEMBERS_PER_GROUP) as u64, "too few assignments: {assignments}");
    assert!(commits >= 50, "too few acknowledged commits: {commits}");
    for g in &groups {
        let group = shared.coordinator.get_group(g);
        assert!(group.as_ref().is_none_or(|g| g.members.is_empty()), "{g} still has members: {group:?}");
    }
    shared.coordinator.stop();
}
