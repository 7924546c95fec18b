//! The oracle through the runtime: every script of `tests/data/oracle/scenarios` runs
//! through `GroupCoordinator` (pending handles, storage, timers fired by a manual
//! clock), and its answers are compared with what Kafka's Java coordinator answered
//! (`tests/data/oracle/expected`) by the replay the core test `tests/it/oracle.rs`
//! uses (`tests/common/oracle_replay.rs`). What differs is how requests reach the
//! coordinator and how time moves: the [`RuntimeDriver`] here.

#[path = "../common/oracle_replay.rs"]
mod oracle_replay;

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use group_coordinator::{
    Clock, CoordinatorConfig, CoordinatorError, GroupCoordinator, GroupMetadata, ManualClock, Record,
    Request, Response, TimerDriver,
};
use group_offsets::{
    AppendCompletion, CoordinatorPartition, LoadedPartition, MemoryMetadataStore, MetadataStore, OwnerEpoch,
    StorageError,
};
use group_types::ErrorCode;

use oracle_replay::{Answer, Driver, Sent, load, oracle_dir, replay, script_names, variants};

use crate::support::settle;

/// Deliberate differences of the core replay (`tests/it/oracle.rs`), which this replay
/// shares: (scenario, reason).
const DEVIATIONS: &[(&str, &str)] = &[];

/// A manual clock that also lets the replay see the runtime's earliest deadline, so that
/// time can be moved deadline by deadline and every answer stamped with its time.
#[derive(Debug)]
struct SteppedClock {
    manual: ManualClock,
    driver: Mutex<Option<Weak<dyn TimerDriver>>>,
}

impl SteppedClock {
    fn next_deadline(&self) -> Option<i64> {
        let driver = self.driver.lock().unwrap_or_else(PoisonError::into_inner).as_ref()?.upgrade()?;
        driver.next_deadline()
    }

    /// Moves to `t`, firing what falls due on the way (through the runtime).
    fn advance_to(&self, t: i64) {
        self.manual.advance(t - self.manual.now_ms());
    }
}

impl Clock for SteppedClock {
    fn now_ms(&self) -> i64 {
        self.manual.now_ms()
    }

    fn drives_timers(&self) -> bool {
        true
    }

    fn register(&self, driver: Weak<dyn TimerDriver>) {
        *self.driver.lock().unwrap_or_else(PoisonError::into_inner) = Some(driver.clone());
        self.manual.register(driver);
    }
}

/// Storage that records every append it is asked for and, while armed, fails them
/// all with a chosen error (the step's `append_error`) without applying them.
#[derive(Debug, Default)]
struct ScriptedStorage {
    inner: MemoryMetadataStore,
    fail: Mutex<Option<StorageError>>,
    written: Mutex<Vec<Record>>,
}

impl ScriptedStorage {
    fn arm(&self, error: Option<StorageError>) {
        *self.fail.lock().unwrap_or_else(PoisonError::into_inner) = error;
    }

    fn take_written(&self) -> Vec<Record> {
        std::mem::take(&mut *self.written.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl MetadataStore for ScriptedStorage {
    fn partition_count(&self) -> u32 {
        self.inner.partition_count()
    }

    fn append(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
        completion: AppendCompletion,
    ) {
        self.written.lock().unwrap_or_else(PoisonError::into_inner).extend(records.iter().cloned());
        let failure = self.fail.lock().unwrap_or_else(PoisonError::into_inner).clone();
        match failure {
            Some(error) => completion.complete(Err(error)),
            None => self.inner.append(partition, epoch, records, completion),
        }
    }

    fn load(&self, partition: CoordinatorPartition) -> Result<LoadedPartition, StorageError> {
        self.inner.load(partition)
    }
}

/// A typed [`Pending`](group_coordinator::Pending) polled as an untyped response.
type Poll = Box<dyn FnMut() -> Option<Result<Response, CoordinatorError>>>;

/// A request sent to the runtime whose answer has not come yet.
struct Outstanding {
    step: usize,
    poll: Poll,
}

/// Polls `pending` without blocking, as a [`Response`].
macro_rules! poller {
    ($pending:expr, $variant:ident) => {{
        let mut pending = $pending;
        Box::new(move || pending.try_get().map(|r| r.map(Response::$variant))) as Poll
    }};
}

/// The threaded runtime over [`ScriptedStorage`], its time moved by a [`SteppedClock`].
struct RuntimeDriver {
    coordinator: GroupCoordinator,
    clock: Arc<SteppedClock>,
    storage: Arc<ScriptedStorage>,
    outstanding: Vec<Outstanding>,
}

impl RuntimeDriver {
    /// Waits until the coordinator's writes completed and what they released
    /// was handed out (see [`settle`]).
    fn settle(&self) {
        settle(&self.coordinator);
    }

    /// Collects every answer that has arrived, stamped `now`.
    fn poll(&mut self, now: i64, answers: &mut Vec<Answer>) {
        let mut i = 0;
        while i < self.outstanding.len() {
            match (self.outstanding[i].poll)() {
                Some(outcome) => {
                    let o = self.outstanding.remove(i);
                    let response =
                        outcome.unwrap_or_else(|e| panic!("step {}: coordinator error {e}", o.step));
                    answers.push(Answer { step: o.step, at_ms: now, response });
                }
                None => i += 1,
            }
        }
    }

    /// Sends a request through the runtime's public API.
    fn submit(&mut self, step: usize, request: Request, answers: &mut Vec<Answer>) {
        let c = &self.coordinator;
        let poll = match request {
            Request::JoinGroup(r) => poller!(c.join_group(r), JoinGroup),
            Request::SyncGroup(r) => poller!(c.sync_group(r), SyncGroup),
            Request::Heartbeat(r) => poller!(c.heartbeat(r), Heartbeat),
            Request::LeaveGroup(r) => poller!(c.leave_group(r), LeaveGroup),
            Request::OffsetCommit(r) => poller!(c.offset_commit(r), OffsetCommit),
            Request::OffsetFetch(r) => poller!(c.offset_fetch(r), OffsetFetch),
            Request::OffsetDelete(r) => poller!(c.offset_delete(r), OffsetDelete),
            blocking => {
                // Describe, list and delete have blocking entry points only.
                let response = match blocking {
                    Request::DescribeGroups(r) => c.handle_describe_groups(r).map(Response::DescribeGroups),
                    Request::ListGroups(r) => c.handle_list_groups(r).map(Response::ListGroups),
                    Request::DeleteGroups(r) => c.handle_delete_groups(r).map(Response::DeleteGroups),
                    other => panic!("unexpected request {other:?}"),
                };
                let response = response.unwrap_or_else(|e| panic!("step {step}: coordinator error {e}"));
                answers.push(Answer { step, at_ms: self.clock.now_ms(), response });
                return;
            }
        };
        self.outstanding.push(Outstanding { step, poll });
    }
}

impl Driver for RuntimeDriver {
    /// The runtime's snapshot deadlines are not compared (as before the replay was shared).
    const COMPARES_DEADLINES: bool = false;

    fn start(config: CoordinatorConfig) -> Self {
        let clock = Arc::new(SteppedClock { manual: ManualClock::new(0), driver: Mutex::new(None) });
        let storage = Arc::new(ScriptedStorage::default());
        let coordinator = GroupCoordinator::with_clock(storage.clone(), config, clock.clone())
            .expect("the coordinator starts");
        let driver = RuntimeDriver { coordinator, clock, storage, outstanding: Vec::new() };
        driver.settle();
        driver.storage.take_written();
        driver
    }

    fn advance_to(&mut self, at_ms: i64) -> Vec<Answer> {
        let mut answers = Vec::new();
        // Deadline by deadline, so that each answer is stamped with the time it came.
        // Each deadline's writes complete before time moves on, as the answers they
        // release came at that deadline.
        while let Some(deadline) = self.clock.next_deadline().filter(|d| *d <= at_ms) {
            self.clock.advance_to(deadline.max(self.clock.now_ms()));
            self.settle();
            self.poll(deadline, &mut answers);
        }
        self.clock.advance_to(at_ms);
        self.settle();
        self.poll(at_ms, &mut answers);
        self.storage.take_written();
        answers
    }

    fn send(&mut self, at_ms: i64, step: usize, request: Request, append_error: Option<ErrorCode>) -> Sent {
        let mut answers = Vec::new();
        self.storage.arm(append_error.map(runtime_append_error));
        self.submit(step, request, &mut answers);
        // The step's writes (and what their completions wrote) are appended, under
        // the step's error, before the next step: each step's writes are their own
        // appends, never batched with another step's.
        self.settle();
        self.storage.arm(None);
        let records = self.storage.take_written();
        self.poll(at_ms, &mut answers);
        Sent { records, answers }
    }

    fn group(&self, group_id: &str) -> Option<GroupMetadata> {
        self.coordinator.get_group(group_id)
    }

    fn stop(&mut self) {
        self.coordinator.stop();
    }
}

/// The storage failure standing for Kafka's append error `error`: an engine refusing
/// the write with that Kafka code, which the runtime hands to the core to map (§6.7).
fn runtime_append_error(error: ErrorCode) -> StorageError {
    StorageError::Append { code: error, message: format!("scripted append error {}", error.name()) }
}

/// How one script fared through the runtime.
#[derive(Debug, PartialEq, Eq)]
enum Outcome3 {
    /// Kafka's answers exactly.
    Exact,
    /// Anything else: the mismatches of the closest variant.
    Mismatch(Vec<String>),
}

fn replay_script(dir: &Path, name: &str) -> Outcome3 {
    let scenario = load(dir, "scenarios", name);
    let expected = load(dir, "expected", name);
    let mut best: Option<Vec<String>> = None;
    for variant in &variants(&expected) {
        let failures = replay::<RuntimeDriver>(&scenario, variant);
        if failures.is_empty() {
            return Outcome3::Exact;
        }
        if best.as_ref().is_none_or(|b| failures.len() < b.len()) {
            best = Some(failures);
        }
    }
    Outcome3::Mismatch(best.unwrap_or_default())
}

#[test]
fn every_oracle_script_replays_through_the_runtime() {
    let dir = oracle_dir();
    let names = script_names(&dir, 45);
    let (mut exact, mut report) = (0, Vec::new());
    for name in &names {
        match replay_script(&dir, name) {
            Outcome3::Exact => exact += 1,
            Outcome3::Mismatch(_) if DEVIATIONS.iter().any(|(n, _)| name.starts_with(n)) => {}
            Outcome3::Mismatch(failures) => report.push(format!("=== {name}\n{}", failures.join("\n"))),
        }
    }
    println!("through the runtime: {exact}/{} scripts match exactly", names.len());
    assert!(
        report.is_empty(),
        "{exact}/{} oracle scripts match through the runtime; mismatches:\n{}",
        names.len(),
        report.join("\n")
    );
}

/// Every published append error (NOT_LEADER_OR_FOLLOWER, MESSAGE_TOO_LARGE,
/// NOT_ENOUGH_REPLICAS) reaches the client as Kafka maps it, through the runtime too.
#[test]
fn append_errors_through_the_runtime() {
    let dir = oracle_dir();
    for name in [
        "19-sync-append-failure.json",
        "50-static-replace-persist-failure.json",
        "52-offset-commit-append-failure.json",
    ] {
        assert_eq!(replay_script(&dir, name), Outcome3::Exact, "{name}");
    }
}

#[test]
fn the_replay_detects_a_wrong_answer() {
    oracle_replay::assert_the_replay_detects_a_wrong_answer::<RuntimeDriver>();
}
