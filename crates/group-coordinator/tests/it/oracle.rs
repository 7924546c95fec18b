//! Oracle replay: every script of `tests/data/oracle/scenarios` runs through the core
//! with simulated time, and its answers are compared with what Kafka's Java
//! coordinator answered (`tests/data/oracle/expected`), as the oracle README's
//! "How to compare" says. The replay itself is shared with the runtime's
//! (`tests/common/oracle_replay.rs`); here the core is driven directly: effects
//! applied, writes completed, timers fired from a queue.

#[path = "../common/oracle_replay.rs"]
pub(crate) mod oracle_replay;

use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, GroupMetadata, Record, Request, RequestId, TimerQueue,
};
use group_types::ErrorCode;

use oracle_replay::{Answer, Driver, Sent, load, oracle_dir, replay, script_names, variants};

/// Deliberate differences from Kafka's recorded answers: (scenario, reason).
///
/// Empty: every published script matches. Deliberate differences from Kafka that no
/// published script exercises:
/// - README finding 3 (a Kafka bug): unparsable consumer metadata makes Kafka's join
///   completion throw, leaving parked joins unanswered; here the subscribed topics are
///   simply unknown and the join completes.
/// - A leaving member's parked SyncGroup is answered UNKNOWN_MEMBER_ID (Kafka drops it
///   unanswered, so a caller would wait forever).
const DEVIATIONS: &[(&str, &str)] = &[];

/// The sans-IO core with simulated time: request ids are script steps.
struct CoreDriver {
    core: CoordinatorCore,
    timers: TimerQueue,
}

impl CoreDriver {
    /// Applies effects: timers into the queue, writes executed (failing with
    /// `append_error` when given) and their records kept, responses collected.
    fn process(
        &mut self,
        now: i64,
        fx: Effects,
        append_error: Option<ErrorCode>,
        records: &mut Vec<Record>,
        answers: &mut Vec<Answer>,
    ) {
        self.timers.apply(fx.timers);
        for (RequestId(step), response) in fx.responses {
            answers.push(Answer { step: step as usize, at_ms: now, response });
        }
        for write in fx.writes {
            records.extend(write.records.iter().cloned());
            let result = match append_error {
                Some(e) => Err(e),
                None => Ok(()),
            };
            let more = self.core.complete_write(now, write.id, result);
            self.process(now, more, append_error, records, answers);
        }
    }
}

impl Driver for CoreDriver {
    const COMPARES_DEADLINES: bool = true;

    fn start(config: CoordinatorConfig) -> Self {
        let mut core = CoordinatorCore::new(config);
        let mut timers = TimerQueue::new();
        timers.apply(core.start(0).timers);
        CoreDriver { core, timers }
    }

    fn advance_to(&mut self, at_ms: i64) -> Vec<Answer> {
        let (mut records, mut answers) = (Vec::new(), Vec::new());
        while let Some((deadline, key)) = self.timers.pop_due(at_ms) {
            let fx = self.core.fire_timer(deadline, &key);
            self.process(deadline, fx, None, &mut records, &mut answers);
        }
        answers
    }

    fn send(&mut self, at_ms: i64, step: usize, request: Request, append_error: Option<ErrorCode>) -> Sent {
        let (mut records, mut answers) = (Vec::new(), Vec::new());
        let fx = self.core.handle(at_ms, RequestId(step as u64), request);
        self.process(at_ms, fx, append_error, &mut records, &mut answers);
        Sent { records, answers }
    }

    fn group(&self, group_id: &str) -> Option<GroupMetadata> {
        self.core.group(group_id)
    }
}

#[test]
fn every_oracle_script_replays_with_kafkas_answers() {
    let dir = oracle_dir();
    let names = script_names(&dir, 45);
    let mut report = Vec::new();
    let mut matched = 0;
    for name in &names {
        let scenario = load(&dir, "scenarios", name);
        let expected = load(&dir, "expected", name);
        let results: Vec<Vec<String>> =
            variants(&expected).iter().map(|v| replay::<CoreDriver>(&scenario, v)).collect();
        if results.iter().any(Vec::is_empty) {
            matched += 1;
        } else if !DEVIATIONS.iter().any(|(n, _)| name.starts_with(n)) {
            let best = results.iter().min_by_key(|r| r.len()).unwrap();
            report.push(format!("=== {name}\n{}", best.join("\n")));
        }
    }
    assert!(
        report.is_empty(),
        "{matched}/{} oracle scripts match; mismatches:\n{}",
        names.len(),
        report.join("\n")
    );
}

#[test]
fn the_replay_detects_a_wrong_answer() {
    oracle_replay::assert_the_replay_detects_a_wrong_answer::<CoreDriver>();
}
