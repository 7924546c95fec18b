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

use crossbeam_channel::Receiver;
use group_coordinator::{
    Clock, CoordinatorConfig, GroupCoordinator, GroupMetadata, ManualClock, Outcome, Pending, Record,
    Request, Response, ResponseKind, TimerDriver,
};
use group_offsets::{GroupMetadataRecord, MemoryOffsetStorage, OffsetStorage, StorageError, StoredGroups};
use group_types::{ErrorCode, GroupOffsets, OffsetAndMetadata, TopicPartition};

use oracle_replay::{Answer, Driver, Sent, load, oracle_dir, replay, script_names, variants};

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

/// Storage that records every write it is asked for and, while armed, fails them all
/// with a chosen error (the step's `append_error`).
#[derive(Debug, Default)]
struct ScriptedStorage {
    inner: MemoryOffsetStorage,
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

    fn write(&self, records: Vec<Record>) -> Result<(), StorageError> {
        self.written.lock().unwrap_or_else(PoisonError::into_inner).extend(records);
        match self.fail.lock().unwrap_or_else(PoisonError::into_inner).clone() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

impl OffsetStorage for ScriptedStorage {
    fn store_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
        offset: OffsetAndMetadata,
    ) -> Result<(), StorageError> {
        let record = Record::Offset {
            group_id: group_id.into(),
            partition: partition.clone(),
            offset: offset.clone(),
        };
        self.write(vec![record])?;
        self.inner.store_offset(group_id, partition, offset)
    }

    fn store_offsets(
        &self,
        group_id: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> Result<(), StorageError> {
        let records = offsets
            .iter()
            .map(|(partition, offset)| Record::Offset {
                group_id: group_id.into(),
                partition: partition.clone(),
                offset: offset.clone(),
            })
            .collect();
        self.write(records)?;
        self.inner.store_offsets(group_id, offsets)
    }

    fn fetch_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
    ) -> Result<Option<OffsetAndMetadata>, StorageError> {
        self.inner.fetch_offset(group_id, partition)
    }

    fn fetch_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
        self.inner.fetch_offsets(group_id)
    }

    fn delete_offsets(&self, group_id: &str) -> Result<(), StorageError> {
        self.write(Vec::new())?;
        self.inner.delete_offsets(group_id)
    }

    fn delete_partitions(&self, group_id: &str, partitions: &[TopicPartition]) -> Result<(), StorageError> {
        let records = partitions
            .iter()
            .map(|partition| Record::OffsetTombstone {
                group_id: group_id.into(),
                partition: partition.clone(),
            })
            .collect();
        self.write(records)?;
        self.inner.delete_partitions(group_id, partitions)
    }

    fn store_group(&self, record: GroupMetadataRecord) -> Result<(), StorageError> {
        self.write(vec![Record::Group(record.clone())])?;
        self.inner.store_group(record)
    }

    fn delete_group(&self, group_id: &str) -> Result<(), StorageError> {
        self.write(vec![Record::GroupTombstone { group_id: group_id.into() }])?;
        self.inner.delete_group(group_id)
    }

    fn load(&self) -> Result<StoredGroups, StorageError> {
        self.inner.load()
    }
}

/// A request sent to the runtime whose answer has not come yet.
struct Outstanding {
    step: usize,
    rx: Receiver<Outcome>,
}

fn receiver<T: ResponseKind>(pending: Pending<T>) -> Receiver<Outcome> {
    pending.receiver().clone()
}

/// The threaded runtime over [`ScriptedStorage`], its time moved by a [`SteppedClock`].
struct RuntimeDriver {
    coordinator: GroupCoordinator,
    clock: Arc<SteppedClock>,
    storage: Arc<ScriptedStorage>,
    outstanding: Vec<Outstanding>,
}

impl RuntimeDriver {
    /// Collects every answer that has arrived, stamped `now`.
    fn poll(&mut self, now: i64, answers: &mut Vec<Answer>) {
        let mut i = 0;
        while i < self.outstanding.len() {
            match self.outstanding[i].rx.try_recv() {
                Ok(outcome) => {
                    let o = self.outstanding.remove(i);
                    let response =
                        outcome.unwrap_or_else(|e| panic!("step {}: coordinator error {e}", o.step));
                    answers.push(Answer { step: o.step, at_ms: now, response });
                }
                Err(_) => i += 1,
            }
        }
    }

    /// Sends a request through the runtime's public API.
    fn submit(&mut self, step: usize, request: Request, answers: &mut Vec<Answer>) {
        let c = &self.coordinator;
        let rx = match request {
            Request::JoinGroup(r) => receiver(c.join_group(r)),
            Request::SyncGroup(r) => receiver(c.sync_group(r)),
            Request::Heartbeat(r) => receiver(c.heartbeat(r)),
            Request::LeaveGroup(r) => receiver(c.leave_group(r)),
            Request::OffsetCommit(r) => receiver(c.offset_commit(r)),
            Request::OffsetFetch(r) => receiver(c.offset_fetch(r)),
            Request::OffsetDelete(r) => receiver(c.offset_delete(r)),
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
        self.outstanding.push(Outstanding { step, rx });
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
        storage.take_written();
        RuntimeDriver { coordinator, clock, storage, outstanding: Vec::new() }
    }

    fn advance_to(&mut self, at_ms: i64) -> Vec<Answer> {
        let mut answers = Vec::new();
        // Deadline by deadline, so that each answer is stamped with the time it came.
        while let Some(deadline) = self.clock.next_deadline().filter(|d| *d <= at_ms) {
            self.clock.advance_to(deadline.max(self.clock.now_ms()));
            self.poll(deadline, &mut answers);
        }
        self.clock.advance_to(at_ms);
        self.poll(at_ms, &mut answers);
        self.storage.take_written();
        answers
    }

    fn send(&mut self, at_ms: i64, step: usize, request: Request, append_error: Option<ErrorCode>) -> Sent {
        let mut answers = Vec::new();
        self.storage.arm(append_error.map(runtime_append_error));
        self.submit(step, request, &mut answers);
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
    let names = script_names(&dir);
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
