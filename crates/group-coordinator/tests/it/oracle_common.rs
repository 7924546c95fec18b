//! What the replays of the share-group and transactional-offset oracles share:
//! the core driven with simulated time (timers due by a step fire first, in
//! deadline order; writes complete at once), the set-up APIs both compare the
//! same way, and the test that runs every script of a recording.

use std::collections::BTreeMap;
use std::path::Path;

use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, MetadataImage, Record, Request, RequestId, Response,
    TimerQueue, TopicImage,
};
use group_types::{
    ConsumerGroupHeartbeatRequest, DeleteGroupsRequest, DescribeGroupsRequest, GroupId,
    InitializeShareGroupStateRequest, ListGroupsRequest, MemberId, OffsetCommitData, OffsetCommitRequest,
    TopicId,
};
use serde_json::{Value, json};

pub(crate) fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// One difference from Kafka's answer.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) step: usize,
    pub(crate) what: String,
}

/// The outcome of one script.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) failures: Vec<Failure>,
    /// The step (and op) the replay stopped at, when an op is not replayed.
    pub(crate) stopped: Option<(usize, String)>,
    /// Steps replayed.
    pub(crate) steps: usize,
}

/// What one step produced.
#[derive(Default)]
pub(crate) struct StepOut {
    pub(crate) answers: Vec<(RequestId, Response)>,
    pub(crate) records: Vec<Record>,
    pub(crate) initializations: Vec<InitializeShareGroupStateRequest>,
}

/// One step being replayed: when, what the script says, its group, and what
/// Kafka recorded for it.
pub(crate) struct Step<'a> {
    pub(crate) at: i64,
    pub(crate) step: &'a Value,
    pub(crate) group: &'a str,
    pub(crate) exp: &'a Value,
}

/// A script's steps, each with what Kafka recorded for it.
pub(crate) fn steps<'a>(
    scenario: &'a Value,
    expected: &'a Value,
) -> impl Iterator<Item = (&'a Value, &'a Value)> {
    let steps = scenario["steps"].as_array().unwrap();
    steps.iter().zip(expected["steps"].as_array().unwrap())
}

/// The image of `topics` (name -> id, partition count) at `version`.
pub(crate) fn image(version: i64, topics: &BTreeMap<String, (TopicId, u32)>) -> MetadataImage {
    MetadataImage::new(
        version,
        topics.iter().map(|(name, (id, partitions))| TopicImage::new(*id, name.as_str(), *partitions)),
    )
}

/// The core with simulated time.
pub(crate) struct Driver {
    pub(crate) core: CoordinatorCore,
    pub(crate) timers: TimerQueue,
    next_request: u64,
}

impl Driver {
    /// A core with `config` and `image`, loaded at 0 (its periodic timers armed).
    pub(crate) fn new(config: CoordinatorConfig, image: MetadataImage) -> Driver {
        let mut d =
            Driver { core: CoordinatorCore::new(config), timers: TimerQueue::new(), next_request: 1_000 };
        d.core.update_metadata_image(std::sync::Arc::new(image));
        let start = d.core.start(0);
        d.timers.apply(start.timers);
        d
    }

    /// Applies effects: timers queued, writes completed at once, answers,
    /// records and share-state initializations kept.
    pub(crate) fn process(&mut self, now: i64, fx: Effects, out: &mut StepOut) {
        self.timers.apply(fx.timers);
        out.answers.extend(fx.responses);
        for write in fx.writes {
            if !self.core.is_write_outstanding(write.id) {
                continue;
            }
            out.records.extend(write.records.iter().cloned());
            let more = self.core.complete_write(now, write.id, Ok(()));
            self.process(now, more, out);
        }
        out.initializations.extend(self.core.take_share_state_initializations());
    }

    /// Fires every timer due at or before `at`, each at its deadline.
    pub(crate) fn fire_due(&mut self, at: i64, out: &mut StepOut) {
        while let Some((deadline, key)) = self.timers.pop_due(at) {
            let fx = self.core.fire_timer(deadline, &key);
            self.process(deadline, fx, out);
        }
    }

    /// Sends `request`, returning its id and its answer if the step gave one.
    pub(crate) fn send(
        &mut self,
        now: i64,
        request: Request,
        out: &mut StepOut,
    ) -> (RequestId, Option<Response>) {
        self.next_request += 1;
        let rid = RequestId(self.next_request);
        let fx = self.core.handle(now, rid, request);
        self.process(now, fx, out);
        let answer = out.answers.iter().position(|(id, _)| *id == rid).map(|at| out.answers.remove(at).1);
        (rid, answer)
    }

    /// The persister's answer to `init` (`initializeShareGroupState` or, failed,
    /// `uninitializeShareGroupState`).
    pub(crate) fn share_state_initialized(
        &mut self,
        now: i64,
        init: &InitializeShareGroupStateRequest,
        ok: bool,
        out: &mut StepOut,
    ) {
        let partitions: Vec<(TopicId, Vec<i32>)> = init
            .topics
            .iter()
            .map(|t| (t.topic_id, t.partitions.iter().map(|p| p.partition).collect()))
            .collect();
        let fx = self.core.share_group_state_initialized(now, init.group_id.as_str(), &partitions, ok);
        self.process(now, fx, out);
    }

    /// Sends `request`, which the step answers.
    pub(crate) fn request(&mut self, now: i64, request: Request, out: &mut StepOut) -> Response {
        self.send(now, request, out).1.expect("an answer in the step")
    }
}

/// ListGroups (v5) with the step's filters, groups by id.
pub(crate) fn list(d: &mut Driver, s: &Step<'_>, out: &mut StepOut) -> Result<(), String> {
    let Step { at, step, exp, .. } = *s;
    let strs = |k: &str| -> Vec<String> {
        step[k].as_array().into_iter().flatten().map(|s| s.as_str().unwrap().to_owned()).collect()
    };
    let req = ListGroupsRequest { states_filter: strs("states"), types_filter: strs("types") };
    let Response::ListGroups(resp) = d.request(at, Request::ListGroups(req), out) else {
        panic!("another answer")
    };
    let mut groups: Vec<Value> = resp
        .groups
        .iter()
        .map(|g| json!({"groupId": g.group_id.as_str(), "protocolType": g.protocol_type, "groupState": g.group_state, "groupType": g.group_type}))
        .collect();
    groups.sort_by(|a, b| a["groupId"].as_str().cmp(&b["groupId"].as_str()));
    let got = json!({"error": resp.error_code.name(), "groups": groups});
    let want = json!({"error": exp["response"]["error"], "groups": exp["response"]["groups"]});
    if got != want {
        return Err(format!("list: got {got}, want {want}"));
    }
    Ok(())
}

/// The group ids a step names (`groups`), or its group.
fn group_ids(step: &Value, group: &str) -> Vec<GroupId> {
    step["groups"].as_array().map_or_else(
        || vec![GroupId::from(group)],
        |g| g.iter().map(|g| GroupId::from(g.as_str().unwrap())).collect(),
    )
}

/// DescribeGroups (v6 unless the step says): each group's error, message and state.
pub(crate) fn describe(d: &mut Driver, s: &Step<'_>, out: &mut StepOut) -> Result<(), String> {
    let Step { at, step, group, exp } = *s;
    let version = step["version"].as_i64().unwrap_or(6) as i16;
    let req = DescribeGroupsRequest {
        group_ids: group_ids(step, group),
        api_version: version,
        ..Default::default()
    };
    let Response::DescribeGroups(resp) = d.request(at, Request::DescribeGroups(req), out) else {
        panic!("another answer")
    };
    let got: Vec<Value> = resp
        .groups
        .iter()
        .map(|g| json!({"error": g.error_code.name(), "errorMessage": g.error_message, "groupId": g.group_id.as_str(), "groupState": g.group_state}))
        .collect();
    let want: Vec<Value> = exp["response"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| json!({"error": g["error"], "errorMessage": g["errorMessage"], "groupId": g["groupId"], "groupState": g["groupState"]}))
        .collect();
    if got != want {
        return Err(format!("describe: got {}, want {}", json!(got), json!(want)));
    }
    Ok(())
}

/// ConsumerGroupHeartbeat (v1) of the step's member (its name is its id):
/// epoch 0 joins with the step's topics, -1 leaves.
pub(crate) fn consumer_heartbeat(d: &mut Driver, s: &Step<'_>, out: &mut StepOut) -> Result<(), String> {
    let Step { at, step, group, exp } = *s;
    let name = step["member"].as_str().unwrap();
    let epoch = step["epoch"].as_i64().unwrap_or(0) as i32;
    let join = epoch == 0;
    let req = ConsumerGroupHeartbeatRequest {
        group_id: GroupId::from(group),
        member_id: MemberId::from(name),
        member_epoch: epoch,
        rebalance_timeout_ms: if join { 5_000 } else { -1 },
        subscribed_topic_names: step["topics"]
            .as_array()
            .map(|t| t.iter().map(|n| n.as_str().unwrap().to_owned()).collect()),
        topic_partitions: join.then(Vec::new),
        client_id: "consumer".to_owned(),
        client_host: "/127.0.0.1".to_owned(),
        ..ConsumerGroupHeartbeatRequest::default()
    };
    let Response::ConsumerGroupHeartbeat(resp) =
        d.request(at, Request::ConsumerGroupHeartbeat(Box::new(req)), out)
    else {
        panic!("another answer")
    };
    let got = json!([resp.error_code.name(), resp.error_message, resp.member_epoch]);
    let e = &exp["response"];
    let want = json!([e["error"], e["errorMessage"], e["memberEpoch"]]);
    if got != want {
        return Err(format!("cg_hb: got {got}, want {want}"));
    }
    Ok(())
}

/// A plain OffsetCommit (v9) of the step's offsets by `member_id` at the step's epoch.
pub(crate) fn plain_commit(
    d: &mut Driver,
    s: &Step<'_>,
    member_id: &str,
    out: &mut StepOut,
) -> Result<(), String> {
    let Step { at, step, group, exp } = *s;
    let mut req = OffsetCommitRequest {
        group_id: GroupId::from(group),
        member_id: MemberId::from(member_id),
        generation_id: step["epoch"].as_i64().unwrap_or(-1) as i32,
        ..OffsetCommitRequest::default()
    };
    for o in step["offsets"].as_array().unwrap() {
        let o = o.as_array().unwrap();
        req.push(
            o[0].as_str().unwrap(),
            o[1].as_i64().unwrap() as i32,
            OffsetCommitData::new(o[2].as_i64().unwrap()),
        );
    }
    let Response::OffsetCommit(resp) = d.request(at, Request::OffsetCommit(req), out) else {
        panic!("another answer")
    };
    let got: Vec<Value> = resp.iter().map(|(t, p, c)| json!([t, p, c.name()])).collect();
    let want: Vec<Value> = exp["response"]["topics"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| {
            t["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |p| json!([t["name"], p["partitionIndex"], p["error"]]))
        })
        .collect();
    if got != want {
        return Err(format!("commit: got {}, want {}", json!(got), json!(want)));
    }
    Ok(())
}

/// DeleteGroups of the step's groups; the persister deletes what it is asked
/// at once (the oracles' default). Results by group id.
pub(crate) fn delete_groups(d: &mut Driver, s: &Step<'_>, out: &mut StepOut) -> Result<(), String> {
    let Step { at, step, group, exp } = *s;
    let req = DeleteGroupsRequest { group_ids: group_ids(step, group) };
    let (rid, answer) = d.send(at, Request::DeleteGroups(req), out);
    for ask in d.core.take_share_state_deletions() {
        let fx = d.core.share_group_state_deleted(at, ask.group_id.as_str(), Ok(()));
        d.process(at, fx, out);
    }
    let answer = answer.or_else(|| {
        let at_answer = out.answers.iter().position(|(id, _)| *id == rid)?;
        Some(out.answers.remove(at_answer).1)
    });
    let Some(Response::DeleteGroups(resp)) = answer else { panic!("another answer") };
    let mut got: Vec<Value> = resp
        .results
        .iter()
        .map(|g| json!({"groupId": g.group_id.as_str(), "error": g.error_code.name()}))
        .collect();
    got.sort_by(|a, b| a["groupId"].as_str().cmp(&b["groupId"].as_str()));
    let want = &exp["response"]["results"];
    if json!(got) != *want {
        return Err(format!("delete: got {}, want {want}", json!(got)));
    }
    Ok(())
}

/// Runs of one record type sorted by key, as the oracle sorts them.
pub(crate) fn runs_sorted(mut keys: Vec<String>) -> Vec<String> {
    let mut i = 0;
    while i < keys.len() {
        let kind = keys[i].split(' ').next().unwrap().to_owned();
        let mut j = i;
        while j < keys.len() && keys[j].split(' ').next().unwrap() == kind {
            j += 1;
        }
        keys[i..j].sort();
        i = j;
    }
    keys
}

/// Replays every script of the recording in `dir` (`scenarios/`, `expected/`)
/// with `replay`, and fails on any difference, on a script whose steps and
/// recorded steps differ in number, on a script that stops at an op
/// other than the one `not_replayed` lists for it (or stops when not listed),
/// on a script replaying fewer steps than recorded, and when fewer than
/// `min_scripts` scripts or `min_steps` steps were compared.
pub(crate) fn replay_all(
    dir: &Path,
    not_replayed: &[(&str, &str)],
    min_scripts: usize,
    min_steps: usize,
    replay: impl Fn(&Value, &Value) -> Outcome,
) {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= min_scripts, "the oracle scripts are there");
    let mut report = Vec::new();
    let mut compared = 0;
    for name in &names {
        let scenario = load(&dir.join("scenarios").join(name));
        let expected = load(&dir.join("expected").join(name));
        let outcome = replay(&scenario, &expected);
        let listed = not_replayed.iter().find(|(n, _)| name.starts_with(n));
        let recorded = expected["steps"].as_array().map_or(0, Vec::len);
        let scripted = scenario["steps"].as_array().map_or(0, Vec::len);
        if scripted != recorded {
            report.push(format!("{name}: {scripted} steps scripted, {recorded} recorded"));
        }
        match (&outcome.stopped, listed) {
            (None, None) => {
                if outcome.steps < recorded {
                    report.push(format!("{name}: {} of {recorded} steps replayed", outcome.steps));
                }
            }
            (Some((_, op)), Some((_, allowed))) if op == allowed => {}
            (stopped, _) => report.push(format!("{name}: stopped at {stopped:?}, listed {listed:?}")),
        }
        compared += outcome.steps;
        for f in outcome.failures {
            report.push(format!("{name} step {}: {}", f.step, f.what));
        }
    }
    assert!(compared >= min_steps, "steps compared: {compared}");
    assert!(report.is_empty(), "{} differences from Kafka:\n{}", report.len(), report.join("\n"));
}
