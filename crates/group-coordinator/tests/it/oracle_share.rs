//! Share-group oracle replay: every script of `tests/data/oracle-share/scenarios`
//! runs through the core with simulated time, and its answers and groups are
//! compared with what Kafka 4.2.1's Java coordinator answered
//! (`tests/data/oracle-share/expected`), as that README's "How to compare" says:
//!
//! - every answer of the APIs served here, exactly (ShareGroupHeartbeat,
//!   ShareGroupDescribe, ListGroups, DescribeGroups, ConsumerGroupHeartbeat's error,
//!   JoinGroup's error, OffsetCommit);
//! - the share partitions a heartbeat asks to initialize, exactly;
//! - the kinds and keys of the records each step writes, in order;
//! - the group after each step: state, epochs, members with their epochs, assignment
//!   and target, the share state's partition sets, and the metadata hash as zero or
//!   not (the hash itself is Kafka's XXH3, not reproduced).
//!
//! The persister (the share coordinator) is simulated as the oracle's is: in `auto`
//! mode every initialization succeeds right after the heartbeat that asked; in
//! `manual` mode they wait for a `persister_init` step.
//!
//! Steps whose API is not served yet end their script's replay there; the test
//! lists those scripts, so the list only shrinks.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, GroupConfigOverrides, MetadataImage, Record, Request,
    RequestId, Response, TimerQueue, TopicImage,
};
use group_types::{
    ConsumerGroupHeartbeatRequest, DeleteGroupsRequest, DeleteShareGroupOffsetsRequest,
    DescribeGroupsRequest, ErrorCode, GroupId, InitializeShareGroupStateRequest, JoinGroupRequest,
    ListGroupsRequest, MemberId, OffsetCommitData, OffsetCommitRequest, ProtocolMetadata,
    ShareGroupDescribeRequest, ShareGroupHeartbeatRequest, Subscription, TopicId, TopicIdPartitions,
};
use serde_json::{Value, json};

fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oracle-share")
}

fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// One difference from Kafka's answer.
#[derive(Debug)]
struct Failure {
    step: usize,
    what: String,
}

/// The outcome of one script.
#[derive(Debug, Default)]
struct Outcome {
    failures: Vec<Failure>,
    /// The step (and op) the replay stopped at, when an op is not served yet.
    stopped: Option<(usize, String)>,
    steps: usize,
}

struct Replay {
    core: CoordinatorCore,
    timers: TimerQueue,
    topics: BTreeMap<String, (TopicId, u32)>,
    names: HashMap<TopicId, String>,
    version: i64,
    /// Member name -> its epoch from its last successful heartbeat.
    epochs: HashMap<String, i32>,
    manual: bool,
    parked: Vec<InitializeShareGroupStateRequest>,
    group_configs: HashMap<String, GroupConfigOverrides>,
    next_request: u64,
}

/// What one step produced.
#[derive(Default)]
struct StepOut {
    answers: Vec<(RequestId, Response)>,
    records: Vec<Record>,
    initializations: Vec<InitializeShareGroupStateRequest>,
}

impl Replay {
    fn image(&self) -> MetadataImage {
        MetadataImage::new(
            self.version,
            self.topics
                .iter()
                .map(|(name, (id, partitions))| TopicImage::new(*id, name.as_str(), *partitions)),
        )
    }

    /// Applies effects: timers queued, writes completed at once, answers,
    /// records and initializations kept.
    fn process(&mut self, now: i64, fx: Effects, out: &mut StepOut) {
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

    fn request(&mut self, now: i64, request: Request) -> (Response, StepOut) {
        self.next_request += 1;
        let rid = RequestId(self.next_request);
        let fx = self.core.handle(now, rid, request);
        let mut out = StepOut::default();
        self.process(now, fx, &mut out);
        let at = out.answers.iter().position(|(id, _)| *id == rid).expect("an answer in the step");
        let (_, response) = out.answers.remove(at);
        (response, out)
    }

    /// The persister's answer to `init` (`initializeShareGroupState` or, failed,
    /// `uninitializeShareGroupState`).
    fn persister(&mut self, now: i64, init: &InitializeShareGroupStateRequest, ok: bool, out: &mut StepOut) {
        let partitions: Vec<(TopicId, Vec<i32>)> = init
            .topics
            .iter()
            .map(|t| (t.topic_id, t.partitions.iter().map(|p| p.partition).collect()))
            .collect();
        let fx = self.core.share_group_state_initialized(now, init.group_id.as_str(), &partitions, ok);
        self.process(now, fx, out);
    }

    fn topic(&self, id: TopicId) -> Value {
        match self.names.get(&id) {
            Some(name) => json!(name),
            None => json!(id.to_string()),
        }
    }

    fn assignment(&self, topics: &[TopicIdPartitions]) -> Value {
        let mut out: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for t in topics.iter().filter(|t| !t.partitions.is_empty()) {
            let name = self.topic(t.topic_id).as_str().unwrap_or_default().to_owned();
            let mut p = t.partitions.clone();
            p.sort_unstable();
            out.insert(name, p);
        }
        json!(out)
    }

    fn initialize(&self, init: &InitializeShareGroupStateRequest) -> Value {
        let mut topics = serde_json::Map::new();
        for t in &init.topics {
            let mut parts = serde_json::Map::new();
            for p in &t.partitions {
                parts.insert(
                    p.partition.to_string(),
                    json!({"state_epoch": p.state_epoch, "start_offset": p.start_offset}),
                );
            }
            topics
                .insert(self.topic(t.topic_id).as_str().unwrap_or_default().to_owned(), Value::Object(parts));
        }
        json!({"group": init.group_id.as_str(), "topics": topics})
    }

    /// The group summary as the oracle writes it, for the fields compared.
    fn group(&self, id: &str) -> Value {
        if let Some(g) = self.core.share_group(id) {
            let parts = |topics: &[group_offsets::ShareTopicPartitions]| {
                let mut out = BTreeMap::new();
                for t in topics {
                    let mut p = t.partitions.clone();
                    p.sort_unstable();
                    out.insert(t.topic_name.clone(), json!({"partitions": p}));
                }
                json!(out)
            };
            let members: BTreeMap<String, Value> = g
                .members
                .iter()
                .map(|m| {
                    let v = json!({
                        "member_epoch": m.member_epoch,
                        "previous_member_epoch": m.previous_member_epoch,
                        "assigned": self.assignment(&m.assigned),
                        "target": m.target.as_ref().map(|t| self.assignment(t)),
                    });
                    (m.member_id.clone(), v)
                })
                .collect();
            let share_state = g.share_state.as_ref().map(|s| {
                let mut deleting: Vec<&str> = s.deleting.iter().map(|(_, n)| n.as_str()).collect();
                deleting.sort_unstable();
                json!({"initializing": parts(&s.initializing), "initialized": parts(&s.initialized), "deleting": deleting})
            });
            return json!({
                "type": "share",
                "state": g.state,
                "group_epoch": g.group_epoch,
                "assignment_epoch": g.assignment_epoch,
                "metadata_hash": g.metadata_hash != 0,
                "members": members,
                "share_state": share_state,
            });
        }
        if let Some(cg) = self.core.consumer_group(id) {
            return json!({"type": "consumer", "state": cg.state.as_str(), "group_epoch": cg.group_epoch});
        }
        if let Some(g) = self.core.group(id) {
            return json!({"type": "classic", "state": g.state.as_str()});
        }
        json!({"exists": false})
    }
}

/// The expected group summary, reduced to the fields [`Replay::group`] gives.
fn expected_group(g: &Value) -> Value {
    match g["type"].as_str() {
        Some("share") => {
            let members: BTreeMap<String, Value> = g["members"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(id, m)| {
                    let v = json!({
                        "member_epoch": m["member_epoch"],
                        "previous_member_epoch": m["previous_member_epoch"],
                        "assigned": drop_empty(&m["assigned"]),
                        "target": if m["target"].is_null() { Value::Null } else { drop_empty(&m["target"]) },
                    });
                    (id.clone(), v)
                })
                .collect();
            let share_state = match &g["share_state"] {
                Value::Null => Value::Null,
                s => {
                    let parts = |v: &Value| {
                        let out: BTreeMap<String, Value> = v
                            .as_object()
                            .unwrap()
                            .iter()
                            .map(|(t, e)| (t.clone(), json!({"partitions": e["partitions"]})))
                            .collect();
                        json!(out)
                    };
                    let mut deleting: Vec<String> = s["deleting"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|d| d.as_str().unwrap().to_owned())
                        .collect();
                    deleting.sort();
                    json!({"initializing": parts(&s["initializing"]), "initialized": parts(&s["initialized"]), "deleting": deleting})
                }
            };
            json!({
                "type": "share",
                "state": g["state"],
                "group_epoch": g["group_epoch"],
                "assignment_epoch": g["assignment_epoch"],
                "metadata_hash": g["metadata_hash"].as_i64() != Some(0),
                "members": members,
                "share_state": share_state,
            })
        }
        Some("consumer") => json!({"type": "consumer", "state": g["state"], "group_epoch": g["group_epoch"]}),
        Some("classic") => json!({"type": "classic", "state": g["state"]}),
        _ => json!({"exists": false}),
    }
}

fn drop_empty(v: &Value) -> Value {
    let out: BTreeMap<String, Value> = v
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, p)| p.as_array().is_some_and(|a| !a.is_empty()))
        .map(|(k, p)| (k.clone(), p.clone()))
        .collect();
    json!(out)
}

/// A response's topic list (`{"topic", "partitions"}` entries) as name -> partitions.
fn topic_partitions(v: &Value) -> Value {
    let mut out: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for t in v.as_array().into_iter().flatten() {
        let mut p: Vec<i64> =
            t["partitions"].as_array().unwrap().iter().map(|p| p.as_i64().unwrap()).collect();
        p.sort_unstable();
        if !p.is_empty() {
            out.insert(t["topic"].as_str().unwrap().to_owned(), p);
        }
    }
    json!(out)
}

/// The record kinds and keys, as the oracle's `records` lists them.
fn record_keys(records: &[Record]) -> Vec<String> {
    records
        .iter()
        .map(|r| match r {
            Record::Modern(m) => {
                let sub = m.sub_key();
                let tomb = if m.is_tombstone() { " (tombstone)" } else { "" };
                if sub.is_empty() {
                    format!("{}{tomb}", m.type_name())
                } else {
                    format!("{} {sub}{tomb}", m.type_name())
                }
            }
            Record::Group(_) | Record::GroupTombstone { .. } => "GroupMetadata".to_owned(),
            Record::Offset { .. } | Record::OffsetTombstone { .. } => "OffsetCommit".to_owned(),
            _ => "other".to_owned(),
        })
        .collect()
}

fn expected_record_keys(records: &Value) -> Vec<String> {
    records
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let t = r["type"].as_str().unwrap();
            let tomb = if r["value"].is_null() { " (tombstone)" } else { "" };
            match r["key"].get("memberId").and_then(Value::as_str) {
                Some(m) => format!("{t} {m}{tomb}"),
                None => format!("{t}{tomb}"),
            }
        })
        .collect()
}

/// Runs of one record type sorted by key, as the oracle sorts them.
fn runs_sorted(mut keys: Vec<String>) -> Vec<String> {
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

fn config_of(scenario: &Value) -> CoordinatorConfig {
    let mut config = CoordinatorConfig::default();
    config.share.enabled = true;
    for (k, v) in scenario["config"].as_object().into_iter().flatten() {
        let n = v.as_i64().unwrap();
        match k.as_str() {
            "group.share.max.size" => config.share.max_size = n as i32,
            "group.share.session.timeout.ms" => config.share.session_timeout_ms = n as i32,
            "group.share.heartbeat.interval.ms" => config.share.heartbeat_interval_ms = n as i32,
            other => panic!("broker setting {other} is not mapped"),
        }
    }
    config
}

fn replay(scenario: &Value, expected: &Value) -> Outcome {
    let mut r = Replay {
        core: CoordinatorCore::new(config_of(scenario)),
        timers: TimerQueue::new(),
        topics: BTreeMap::new(),
        names: HashMap::new(),
        version: 1,
        epochs: HashMap::new(),
        manual: scenario["persister"].as_str() == Some("manual"),
        parked: Vec::new(),
        group_configs: HashMap::new(),
        next_request: 1_000,
    };
    for t in scenario["topics"].as_array().unwrap() {
        add_topic(&mut r, t);
    }
    r.core.update_metadata_image(Arc::new(r.image()));
    let start = r.core.start(0);
    r.timers.apply(start.timers);
    let default_group = scenario["group"].as_str().unwrap().to_owned();
    let steps = scenario["steps"].as_array().unwrap();
    let expected_steps = expected["steps"].as_array().unwrap();
    let mut outcome = Outcome { steps: steps.len(), ..Outcome::default() };
    for (i, (step, exp)) in steps.iter().zip(expected_steps).enumerate() {
        let mut fail = |what: String| outcome.failures.push(Failure { step: i, what });
        let at = step["at_ms"].as_i64().unwrap();
        while let Some((deadline, key)) = r.timers.pop_due(at) {
            let fx = r.core.fire_timer(deadline, &key);
            let mut out = StepOut::default();
            r.process(deadline, fx, &mut out);
        }
        let group = step["group"].as_str().unwrap_or(&default_group).to_owned();
        let op = step["op"].as_str().unwrap();
        let mut out = StepOut::default();
        match op {
            "sg_hb" => {
                let name = step["member"].as_str().unwrap().to_owned();
                let member_id = step["member_id"].as_str().unwrap_or(&name).to_owned();
                let epoch =
                    step["epoch"].as_i64().map_or_else(|| *r.epochs.get(&name).unwrap_or(&0), |e| e as i32);
                let req = ShareGroupHeartbeatRequest {
                    group_id: GroupId::from(group.as_str()),
                    member_id: MemberId::from(member_id.as_str()),
                    member_epoch: epoch,
                    rack_id: step["rack"].as_str().map(str::to_owned),
                    subscribed_topic_names: step["topics"]
                        .as_array()
                        .map(|t| t.iter().map(|n| n.as_str().unwrap().to_owned()).collect()),
                    client_id: step["client_id"].as_str().unwrap_or("consumer").to_owned(),
                    client_host: "/127.0.0.1".to_owned(),
                };
                let (response, o) = r.request(at, Request::ShareGroupHeartbeat(req));
                out = o;
                let Response::ShareGroupHeartbeat(resp) = response else { panic!("another answer") };
                if resp.error_code.is_ok() {
                    r.epochs.insert(name, resp.member_epoch);
                }
                let got = json!({
                    "error": resp.error_code.name(),
                    "errorMessage": resp.error_message,
                    "memberId": resp.member_id.as_ref().map(|m| m.as_str()),
                    "memberEpoch": resp.member_epoch,
                    "heartbeatIntervalMs": resp.heartbeat_interval_ms,
                    "assignment": resp.assignment.as_ref().map(|a| r.assignment(a)),
                });
                let e = &exp["response"];
                let want = json!({
                    "error": e["error"],
                    "errorMessage": e["errorMessage"],
                    "memberId": e["memberId"],
                    "memberEpoch": e["memberEpoch"],
                    "heartbeatIntervalMs": e["heartbeatIntervalMs"],
                    "assignment": if e["assignment"].is_null() { Value::Null } else { topic_partitions(&e["assignment"]["topicPartitions"]) },
                });
                if got != want {
                    fail(format!("response: got {got}, want {want}"));
                }
                let asked = out.initializations.first().map(|i| r.initialize(i));
                if asked.as_ref().unwrap_or(&Value::Null) != &exp["initialize"] {
                    fail(format!("initialize: got {asked:?}, want {}", exp["initialize"]));
                }
                let inits = std::mem::take(&mut out.initializations);
                for init in inits {
                    if r.manual {
                        r.parked.push(init);
                    } else {
                        r.persister(at, &init, true, &mut out);
                    }
                }
            }
            "persister_init" => {
                let ok = step["error"].is_null();
                for init in std::mem::take(&mut r.parked) {
                    r.persister(at, &init, ok, &mut out);
                }
            }
            "sg_describe" => {
                let ids = step["groups"].as_array().map_or_else(
                    || vec![GroupId::from(group.as_str())],
                    |g| g.iter().map(|g| GroupId::from(g.as_str().unwrap())).collect(),
                );
                let mut groups = Vec::new();
                // The runtime splits it per group, an empty id first (`EachGroup`).
                let mut ids = ids;
                ids.sort_by_key(|id| !id.is_empty());
                for id in ids {
                    let req = ShareGroupDescribeRequest {
                        group_ids: vec![id],
                        include_authorized_operations: false,
                    };
                    let (response, _) = r.request(at, Request::ShareGroupDescribe(req));
                    let Response::ShareGroupDescribe(resp) = response else { panic!("another answer") };
                    groups.extend(resp.groups);
                }
                let got: Vec<Value> = groups
                    .iter()
                    .map(|g| {
                        let mut members: Vec<Value> = g
                            .members
                            .iter()
                            .map(|m| {
                                let assignment: Vec<Value> = m
                                    .assignment
                                    .iter()
                                    .map(|t| json!({"topic": t.topic_name, "partitions": t.partitions}))
                                    .collect();
                                json!({
                                    "memberId": m.member_id.as_str(),
                                    "rackId": m.rack_id,
                                    "memberEpoch": m.member_epoch,
                                    "clientId": m.client_id,
                                    "clientHost": m.client_host,
                                    "subscribedTopicNames": m.subscribed_topic_names,
                                    "assignment": topic_partitions(&json!(assignment)),
                                })
                            })
                            .collect();
                        members.sort_by(|a, b| a["memberId"].as_str().cmp(&b["memberId"].as_str()));
                        json!({
                            "error": g.error_code.name(), "errorMessage": g.error_message, "groupId": g.group_id.as_str(),
                            "groupState": g.group_state, "groupEpoch": g.group_epoch, "assignmentEpoch": g.assignment_epoch,
                            "assignorName": g.assignor_name, "members": members,
                        })
                    })
                    .collect();
                let want: Vec<Value> = exp["response"]["groups"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|g| {
                        let mut members: Vec<Value> = g["members"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|m| {
                                let mut names: Vec<&str> = m["subscribedTopicNames"]
                                    .as_array()
                                    .unwrap()
                                    .iter()
                                    .map(|n| n.as_str().unwrap())
                                    .collect();
                                names.sort_unstable();
                                json!({
                                    "memberId": m["memberId"], "rackId": m["rackId"], "memberEpoch": m["memberEpoch"],
                                    "clientId": m["clientId"], "clientHost": m["clientHost"],
                                    "subscribedTopicNames": names,
                                    "assignment": topic_partitions(&m["assignment"]["topicPartitions"]),
                                })
                            })
                            .collect();
                        members.sort_by(|a, b| a["memberId"].as_str().cmp(&b["memberId"].as_str()));
                        json!({
                            "error": g["error"], "errorMessage": g["errorMessage"], "groupId": g["groupId"],
                            "groupState": g["groupState"], "groupEpoch": g["groupEpoch"],
                            "assignmentEpoch": g["assignmentEpoch"], "assignorName": g["assignorName"],
                            "members": members,
                        })
                    })
                    .collect();
                if got != want {
                    fail(format!("sg_describe: got {}, want {}", json!(got), json!(want)));
                }
            }
            "list" => {
                let strs = |k: &str| -> Vec<String> {
                    step[k].as_array().into_iter().flatten().map(|s| s.as_str().unwrap().to_owned()).collect()
                };
                let req = ListGroupsRequest { states_filter: strs("states"), types_filter: strs("types") };
                let (response, _) = r.request(at, Request::ListGroups(req));
                let Response::ListGroups(resp) = response else { panic!("another answer") };
                let mut got: Vec<Value> = resp
                    .groups
                    .iter()
                    .map(|g| json!({"groupId": g.group_id.as_str(), "protocolType": g.protocol_type, "groupState": g.group_state, "groupType": g.group_type}))
                    .collect();
                got.sort_by(|a, b| a["groupId"].as_str().cmp(&b["groupId"].as_str()));
                let want = &exp["response"]["groups"];
                if json!(got) != *want {
                    fail(format!("list: got {}, want {want}", json!(got)));
                }
            }
            "describe" => {
                let ids = step["groups"].as_array().map_or_else(
                    || vec![GroupId::from(group.as_str())],
                    |g| g.iter().map(|g| GroupId::from(g.as_str().unwrap())).collect(),
                );
                let version = step["version"].as_i64().unwrap_or(6) as i16;
                let req =
                    DescribeGroupsRequest { group_ids: ids, api_version: version, ..Default::default() };
                let (response, _) = r.request(at, Request::DescribeGroups(req));
                let Response::DescribeGroups(resp) = response else { panic!("another answer") };
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
                    fail(format!("describe: got {}, want {}", json!(got), json!(want)));
                }
            }
            "cg_hb" => {
                let name = step["member"].as_str().unwrap().to_owned();
                let epoch = step["epoch"].as_i64().unwrap_or(0) as i32;
                let join = epoch == 0;
                let req = ConsumerGroupHeartbeatRequest {
                    group_id: GroupId::from(group.as_str()),
                    member_id: MemberId::from(name.as_str()),
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
                let (response, o) = r.request(at, Request::ConsumerGroupHeartbeat(Box::new(req)));
                out = o;
                let Response::ConsumerGroupHeartbeat(resp) = response else { panic!("another answer") };
                let got = json!([resp.error_code.name(), resp.error_message, resp.member_epoch]);
                let e = &exp["response"];
                let want = json!([e["error"], e["errorMessage"], e["memberEpoch"]]);
                if got != want {
                    fail(format!("cg_hb: got {got}, want {want}"));
                }
            }
            "join" => {
                let topics: Vec<String> = step["topics"].as_array().map_or_else(
                    || vec!["foo".to_owned()],
                    |t| t.iter().map(|n| n.as_str().unwrap().to_owned()).collect(),
                );
                let subscription = Subscription { topics, ..Subscription::default() }.encode().unwrap();
                let req = JoinGroupRequest {
                    group_id: GroupId::from(group.as_str()),
                    member_id: MemberId::from(step["member_id"].as_str().unwrap_or("")),
                    client_id: "consumer".to_owned(),
                    client_host: "/127.0.0.1".to_owned(),
                    protocol_type: "consumer".into(),
                    protocols: vec![ProtocolMetadata::new("range", subscription.to_vec())],
                    session_timeout_ms: 45_000,
                    rebalance_timeout_ms: 300_000,
                    ..JoinGroupRequest::default()
                };
                let (response, o) = r.request(at, Request::JoinGroup(req));
                out = o;
                let Response::JoinGroup(resp) = response else { panic!("another answer") };
                if json!(resp.error_code.name()) != exp["response"]["error"] {
                    fail(format!("join: got {}, want {}", resp.error_code.name(), exp["response"]["error"]));
                }
            }
            "commit" => {
                let mut req = OffsetCommitRequest {
                    group_id: GroupId::from(group.as_str()),
                    member_id: MemberId::from(step["member_id"].as_str().unwrap_or("")),
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
                let (response, o) = r.request(at, Request::OffsetCommit(req));
                out = o;
                let Response::OffsetCommit(resp) = response else { panic!("another answer") };
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
                    fail(format!("commit: got {}, want {}", json!(got), json!(want)));
                }
            }
            "metadata" => {
                // Deleted topics first drop out of the share state
                // (`maybeCleanupShareGroupState`), then the new image.
                let mut deleted = Vec::new();
                for name in step["delete"].as_array().into_iter().flatten() {
                    if let Some((id, _)) = r.topics.remove(name.as_str().unwrap()) {
                        deleted.push(id);
                    }
                }
                if !deleted.is_empty() {
                    let fx = r.core.share_topics_deleted(at, &deleted);
                    r.process(at, fx, &mut out);
                }
                for t in step["create"].as_array().into_iter().flatten() {
                    add_topic(&mut r, t);
                }
                for (name, n) in step["partitions"].as_object().into_iter().flatten() {
                    if let Some(t) = r.topics.get_mut(name) {
                        t.1 = n.as_u64().unwrap() as u32;
                    }
                }
                r.version += 1;
                let image = Arc::new(r.image());
                r.core.update_metadata_image(image);
            }
            "delete" => {
                let ids: Vec<GroupId> = step["groups"].as_array().map_or_else(
                    || vec![GroupId::from(group.as_str())],
                    |g| g.iter().map(|g| GroupId::from(g.as_str().unwrap())).collect(),
                );
                r.next_request += 1;
                let rid = RequestId(r.next_request);
                let fx =
                    r.core.handle(at, rid, Request::DeleteGroups(DeleteGroupsRequest { group_ids: ids }));
                r.process(at, fx, &mut out);
                // The persister deletes what it is asked at once (the oracle's default).
                for ask in r.core.take_share_state_deletions() {
                    let fx = r.core.share_group_state_deleted(at, ask.group_id.as_str(), Ok(()));
                    r.process(at, fx, &mut out);
                }
                let at_answer = out.answers.iter().position(|(id, _)| *id == rid).expect("answered");
                let Response::DeleteGroups(resp) = out.answers.remove(at_answer).1 else {
                    panic!("another answer")
                };
                let mut got: Vec<Value> = resp
                    .results
                    .iter()
                    .map(|g| json!({"groupId": g.group_id.as_str(), "error": g.error_code.name()}))
                    .collect();
                got.sort_by(|a, b| a["groupId"].as_str().cmp(&b["groupId"].as_str()));
                let want = &exp["response"]["results"];
                if json!(got) != *want {
                    fail(format!("delete: got {}, want {want}", json!(got)));
                }
            }
            "delete_offsets" => {
                let names = step["topics"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_owned());
                let req = DeleteShareGroupOffsetsRequest {
                    group_id: GroupId::from(group.as_str()),
                    topic_names: names.collect(),
                };
                r.next_request += 1;
                let rid = RequestId(r.next_request);
                let fx = r.core.handle(at, rid, Request::DeleteShareGroupOffsets(req));
                r.process(at, fx, &mut out);
                // The persister deletes what it is asked at once; what it was asked is compared.
                let mut asked = Vec::new();
                for ask in r.core.take_share_state_deletions() {
                    let topics: BTreeMap<String, Vec<i32>> = ask
                        .topics
                        .iter()
                        .map(|t| {
                            let name = r.topic(t.topic_id).as_str().unwrap_or_default().to_owned();
                            let mut p: Vec<i32> = t.partitions.iter().map(|p| p.partition).collect();
                            p.sort_unstable();
                            (name, p)
                        })
                        .collect();
                    asked.push(json!({"call": "deleteState", "params": {"group": ask.group_id.as_str(), "topics": topics}}));
                    let done: Vec<(TopicId, ErrorCode)> =
                        ask.topics.iter().map(|t| (t.topic_id, ErrorCode::None)).collect();
                    let fx = r.core.share_group_state_deleted_topics(at, &ask, Ok(&done));
                    r.process(at, fx, &mut out);
                }
                let want_asked = exp["persister"].as_array().cloned().unwrap_or_default();
                if asked != want_asked {
                    fail(format!("persister: got {}, want {}", json!(asked), json!(want_asked)));
                }
                let at_answer = out.answers.iter().position(|(id, _)| *id == rid).expect("answered");
                let Response::DeleteShareGroupOffsets(resp) = out.answers.remove(at_answer).1 else {
                    panic!("another answer")
                };
                let zero = json!("AAAAAAAAAAAAAAAAAAAAAA");
                let mut topics: Vec<Value> = resp
                    .responses
                    .iter()
                    .map(|t| {
                        let id = if t.topic_id == TopicId::ZERO { zero.clone() } else { r.topic(t.topic_id) };
                        json!({"topicName": t.topic_name, "topic": id, "error": t.error_code.name(), "errorMessage": t.error_message})
                    })
                    .collect();
                topics.sort_by(|a, b| a["topicName"].as_str().cmp(&b["topicName"].as_str()));
                let got = json!({"error": resp.error_code.name(), "errorMessage": resp.error_message, "responses": topics});
                let e = &exp["response"];
                let mut want_topics = e["responses"].as_array().cloned().unwrap_or_default();
                want_topics.sort_by(|a, b| a["topicName"].as_str().cmp(&b["topicName"].as_str()));
                let want =
                    json!({"error": e["error"], "errorMessage": e["errorMessage"], "responses": want_topics});
                if got != want {
                    fail(format!("delete_offsets: got {got}, want {want}"));
                }
            }
            "group_config" => {
                let entry = r.group_configs.entry(group.clone()).or_default();
                for (k, v) in step["config"].as_object().unwrap() {
                    let n = Some(v.as_i64().unwrap() as i32);
                    match k.as_str() {
                        "share.session.timeout.ms" => entry.share_session_timeout_ms = n,
                        "share.heartbeat.interval.ms" => entry.share_heartbeat_interval_ms = n,
                        other => panic!("group setting {other} is not mapped"),
                    }
                }
                let overrides = *entry;
                r.core.set_group_config(&group, overrides).expect("within bounds");
            }
            "advance" => {}
            other => {
                outcome.stopped = Some((i, other.to_owned()));
                break;
            }
        }
        // The records the step's operations wrote, heartbeat and persister together.
        let mut want = expected_record_keys(&exp["records"]);
        for w in exp["writes"].as_array().into_iter().flatten() {
            want.extend(expected_record_keys(&w["records"]));
        }
        let got = record_keys(&out.records);
        if runs_sorted(got.clone()) != runs_sorted(want.clone()) && op != "commit" {
            fail(format!("records: got {got:?}, want {want:?}"));
        }
        if !exp["group"].is_null() {
            let got = r.group(&group);
            let want = expected_group(&exp["group"]);
            if got != want {
                fail(format!("group: got {got}, want {want}"));
            }
        }
    }
    outcome
}

fn add_topic(r: &mut Replay, t: &Value) {
    let name = t["name"].as_str().unwrap().to_owned();
    let id: TopicId = t["id"].as_str().unwrap().parse().unwrap();
    r.names.insert(id, name.clone());
    r.topics.insert(name, (id, t["partitions"].as_u64().unwrap() as u32));
}

/// Scripts whose replay stops at an API not served yet, with that op. Served
/// APIs remove their scripts from here; a script stopping elsewhere fails.
const NOT_SERVED_YET: &[(&str, &str)] = &[];

#[test]
fn every_share_script_replays_as_kafka_answered() {
    let dir = oracle_dir();
    let mut names: Vec<String> = std::fs::read_dir(dir.join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 20, "the oracle scripts are there");
    let mut report = Vec::new();
    let mut compared = 0;
    for name in &names {
        let scenario = load(&dir.join("scenarios").join(name));
        let expected = load(&dir.join("expected").join(name));
        let outcome = replay(&scenario, &expected);
        let stop = NOT_SERVED_YET.iter().find(|(n, _)| name.starts_with(n));
        match (&outcome.stopped, stop) {
            (None, None) => {}
            (Some((_, op)), Some((_, allowed))) if op == allowed => {}
            (stopped, _) => report.push(format!("{name}: stopped at {stopped:?}, listed {stop:?}")),
        }
        compared += outcome.stopped.map_or(outcome.steps, |(i, _)| i);
        for f in outcome.failures {
            report.push(format!("{name} step {}: {}", f.step, f.what));
        }
    }
    assert!(compared > 100, "steps compared: {compared}");
    assert!(report.is_empty(), "{} differences from Kafka:\n{}", report.len(), report.join("\n"));
}
