//! The oracle replay shared by the core test (`tests/it/oracle.rs`) and the runtime test
//! (`tests/hardening/oracle_runtime.rs`): it reads a script of
//! `tests/data/oracle/scenarios`, gives its members symbolic ids, builds the requests,
//! renders the answers and the records written, and compares them with what Kafka's
//! Java coordinator answered (`tests/data/oracle/expected`), as the oracle README's
//! "How to compare" says. How requests reach the coordinator and how time moves is a
//! [`Driver`]'s business: each test binary brings its own.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use group_coordinator::{CoordinatorConfig, GroupMetadata, Record, Request, Response};
use group_types::{
    CommitMetadata, DeleteGroupsRequest, DescribeGroupsRequest, ErrorCode, HeartbeatRequest,
    JoinGroupRequest, LeaveGroupRequest, ListGroupsRequest, MemberAssignmentData, MemberIdentity,
    OffsetCommitData, OffsetCommitRequest, OffsetFetchRequest, ProtocolMetadata, Subscription,
    SyncGroupRequest,
};
use serde_json::{Value, json};

/// An answer of the coordinator: to the request of script step `step`, at `at_ms`.
pub(crate) struct Answer {
    pub(crate) step: usize,
    pub(crate) at_ms: i64,
    pub(crate) response: Response,
}

/// What sending a request did: the records it wrote and the answers that came.
pub(crate) struct Sent {
    pub(crate) records: Vec<Record>,
    pub(crate) answers: Vec<Answer>,
}

/// How the replay reaches a coordinator: sends requests, moves time, completes or fails
/// writes, and reads group snapshots. Answers are returned in the order they came (new
/// members get their symbolic ids in that order), each stamped with the time it came.
pub(crate) trait Driver: Sized {
    /// Whether the snapshot's armed deadlines (join, sync, sessions) are compared with
    /// the script's.
    const COMPARES_DEADLINES: bool;

    /// A coordinator with `config`, started at time 0.
    fn start(config: CoordinatorConfig) -> Self;

    /// Moves time to `at_ms`, firing every timer falling due on the way; what they wrote
    /// is not the next step's.
    fn advance_to(&mut self, at_ms: i64) -> Vec<Answer>;

    /// Sends the request of step `step` at `at_ms` (where time already is); every write
    /// it causes fails with `append_error` when given, else succeeds.
    fn send(&mut self, at_ms: i64, step: usize, request: Request, append_error: Option<ErrorCode>) -> Sent;

    /// A snapshot of `group_id`, if it exists.
    fn group(&self, group_id: &str) -> Option<GroupMetadata>;

    /// Called when the script is over.
    fn stop(&mut self) {}
}

pub(crate) fn error_by_name(name: &str) -> ErrorCode {
    ErrorCode::ALL
        .iter()
        .copied()
        .find(|c| c.name() == name)
        .unwrap_or_else(|| panic!("unknown error {name}"))
}

/// An OffsetFetch step's topics (name to partitions); `None` (all) when absent or null.
pub(crate) fn fetch_topics(step: &Value) -> Option<BTreeMap<String, Vec<i32>>> {
    match step.get("topics") {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(
            map.iter()
                .map(|(t, ps)| {
                    (t.clone(), ps.as_array().unwrap().iter().map(|p| p.as_i64().unwrap() as i32).collect())
                })
                .collect(),
        ),
        Some(other) => panic!("bad topics {other}"),
    }
}

fn parse_bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::String(s) => match s.strip_prefix("hex:") {
            Some(hex) => {
                (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
            }
            None => s.as_bytes().to_vec(),
        },
        Value::Object(o) => {
            let topics: Vec<String> =
                o["topics"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect();
            Subscription { version: 0, topics, ..Subscription::default() }.encode().unwrap()
        }
        Value::Null => Vec::new(),
        other => panic!("bad bytes {other}"),
    }
}

fn render_bytes(b: &[u8]) -> Value {
    if b.is_empty() {
        return json!("");
    }
    if let Ok(sub) = Subscription::decode(b)
        && sub.version == 0
        && sub.user_data.is_none()
    {
        let again = Subscription { version: 0, topics: sub.topics.clone(), ..Subscription::default() };
        if again.encode().ok().as_deref() == Some(b) {
            return json!({"topics": sub.topics});
        }
    }
    if b.iter().all(|c| (0x20..=0x7e).contains(c)) {
        return json!(String::from_utf8_lossy(b));
    }
    json!(format!("hex:{}", b.iter().map(|c| format!("{c:02x}")).collect::<String>()))
}

#[derive(Default)]
struct Sym {
    current: Option<String>,
    bound: Vec<String>,
    instance: Option<String>,
    last_join: Option<(i32, Option<String>, Option<String>)>,
}

struct Replay<'a, D> {
    scenario: &'a Value,
    driver: D,
    members: BTreeMap<String, Sym>,
    real_to_sym: HashMap<String, String>,
    sym_to_real: HashMap<String, String>,
    /// Step of each request sent: (op, member).
    requests: HashMap<usize, (String, String)>,
    answered: HashMap<usize, Value>,
    step_delayed: Vec<Value>,
    step_records: Vec<Record>,
    current_step: usize,
    current_at: i64,
}

impl<D: Driver> Replay<'_, D> {
    fn bind(&mut self, member: &str, id: &str, make_current: bool) {
        if id.is_empty() {
            return;
        }
        if !self.real_to_sym.contains_key(id) {
            let sym = self.members.entry(member.to_owned()).or_default();
            let name = if sym.bound.is_empty() {
                member.to_owned()
            } else {
                format!("{member}.{}", sym.bound.len() + 1)
            };
            sym.bound.push(id.to_owned());
            self.real_to_sym.insert(id.to_owned(), name.clone());
            self.sym_to_real.insert(name, id.to_owned());
        }
        if make_current {
            self.members.entry(member.to_owned()).or_default().current = Some(id.to_owned());
        }
    }

    fn sym(&self, id: &str) -> Value {
        json!(self.real_to_sym.get(id).cloned().unwrap_or_else(|| id.to_owned()))
    }

    fn resolve_member_id(&self, member: Option<&str>, step: &Value) -> String {
        match step.get("member_id") {
            Some(Value::String(s)) if s.is_empty() => String::new(),
            Some(Value::String(s)) => self.sym_to_real.get(s).cloned().unwrap_or_else(|| s.clone()),
            _ => member.and_then(|m| self.members.get(m)).and_then(|s| s.current.clone()).unwrap_or_default(),
        }
    }

    fn instance(&mut self, member: &str, step: &Value, remember: bool) -> Option<String> {
        match step.get("instance") {
            Some(v) => {
                let value = v.as_str().map(str::to_owned);
                if remember {
                    self.members.entry(member.to_owned()).or_default().instance = value.clone();
                }
                value
            }
            None => self.members.get(member).and_then(|s| s.instance.clone()),
        }
    }

    fn generation(&self, member: &str, step: &Value) -> i32 {
        match step.get("generation") {
            Some(v) => v.as_i64().unwrap() as i32,
            None => self.members.get(member).and_then(|s| s.last_join.as_ref()).map_or(-1, |j| j.0),
        }
    }

    fn render(&self, response: &Response) -> Value {
        match response {
            Response::JoinGroup(r) => {
                let mut members: Vec<Value> = r
                    .members
                    .iter()
                    .map(|m| json!({"member_id": self.sym(&m.member_id), "instance": m.group_instance_id, "metadata": render_bytes(&m.metadata)}))
                    .collect();
                members.sort_by_key(|m| m["member_id"].to_string());
                json!({"error": r.error_code.name(), "member_id": self.sym(&r.member_id), "generation": r.generation_id,
                       "protocol_type": r.protocol_type, "protocol": r.protocol_name, "leader": self.sym(&r.leader_id),
                       "skip_assignment": r.skip_assignment, "members": members})
            }
            Response::SyncGroup(r) => json!({"error": r.error_code.name(), "protocol_type": r.protocol_type,
                "protocol": r.protocol_name, "assignment": render_bytes(&r.assignment)}),
            Response::Heartbeat(r) => json!({"error": r.error_code.name()}),
            Response::LeaveGroup(r) => {
                json!({"error": r.error_code.name(), "members": r.members.iter().map(|m|
                json!({"member_id": self.sym(&m.member_id), "instance": m.group_instance_id, "error": m.error_code.name()})).collect::<Vec<_>>()})
            }
            Response::OffsetCommit(r) => {
                let mut partitions = Vec::new();
                for (topic, p, e) in r.iter() {
                    partitions.push(json!({"topic": topic, "partition": p, "error": e.name()}));
                }
                json!({"partitions": partitions})
            }
            Response::OffsetFetch(r) => {
                let mut partitions = Vec::new();
                for (topic, ps) in &r.offsets {
                    for (p, d) in ps {
                        partitions.push(json!({"topic": topic, "partition": p, "offset": d.offset,
                            "leader_epoch": d.leader_epoch.unwrap_or(-1), "metadata": d.metadata, "error": d.error_code.name()}));
                    }
                }
                json!({"error": r.error_code.name(), "partitions": partitions})
            }
            Response::DescribeGroups(r) => json!({"groups": r.groups.iter().map(|g| {
                let mut members: Vec<Value> = g.members.iter().map(|m| json!({"member_id": self.sym(&m.member_id),
                    "instance": m.group_instance_id, "client_id": m.client_id, "client_host": m.client_host,
                    "metadata": render_bytes(&m.member_metadata), "assignment": render_bytes(&m.member_assignment)})).collect();
                members.sort_by_key(|m| m["member_id"].to_string());
                json!({"group_id": g.group_id, "error": g.error_code.name(), "state": g.group_state,
                       "protocol_type": g.protocol_type, "protocol": g.protocol_data, "members": members})
            }).collect::<Vec<_>>()}),
            Response::ListGroups(r) => json!({"error": r.error_code.name(), "groups": r.groups.iter().map(|g|
                json!({"group_id": g.group_id, "protocol_type": g.protocol_type, "state": g.group_state, "type": g.group_type})).collect::<Vec<_>>()}),
            Response::DeleteGroups(r) => json!({"groups": r.results.iter().map(|g|
                json!({"group_id": g.group_id, "error": g.error_code.name()})).collect::<Vec<_>>()}),
            other => json!(format!("{other:?}")),
        }
    }

    fn on_answers(&mut self, answers: Vec<Answer>) {
        for answer in answers {
            self.on_response(answer.at_ms, answer.step, answer.response);
        }
    }

    fn on_response(&mut self, now: i64, step: usize, response: Response) {
        let Some((op, member)) = self.requests.get(&step).cloned() else { return };
        if let Response::JoinGroup(r) = &response {
            let bindable = r.error_code == ErrorCode::MemberIdRequired
                || (r.error_code == ErrorCode::None && !r.member_id.is_empty());
            if bindable {
                self.bind(&member, &r.member_id, true);
            }
            if r.error_code == ErrorCode::None {
                self.members.entry(member.clone()).or_default().last_join = Some((
                    r.generation_id,
                    r.protocol_type.as_deref().map(str::to_owned),
                    r.protocol_name.as_deref().map(str::to_owned),
                ));
            }
        }
        let rendered = self.render(&response);
        if self.answered.insert(step, rendered.clone()).is_some() {
            panic!("request of step {step} answered twice");
        }
        if step != self.current_step || now != self.current_at {
            self.step_delayed
                .push(json!({"at_ms": now, "step": step, "op": op, "member": member, "response": rendered}));
        } else if step == self.current_step {
            // answered during its own step: reported as the step's response
        }
    }

    fn render_record(&self, record: &Record) -> Value {
        match record {
            Record::Group(g) => {
                let mut members: Vec<Value> = g
                    .members
                    .iter()
                    .map(|m| {
                        json!({"member_id": self.sym(&m.member_id), "instance": m.group_instance_id,
                        "session_timeout_ms": m.session_timeout_ms, "rebalance_timeout_ms": m.rebalance_timeout_ms,
                        "subscription": render_bytes(&m.subscription), "assignment": render_bytes(&m.assignment)})
                    })
                    .collect();
                members.sort_by_key(|m| m["member_id"].to_string());
                json!({"type": "group", "group": g.group_id, "generation": g.generation_id,
                    "protocol_type": g.protocol_type.clone().unwrap_or_default(), "protocol": g.protocol_name,
                    "leader": g.leader_id.as_deref().map(|l| self.sym(l)), "state_ts": g.state_timestamp_ms,
                    "members": members})
            }
            Record::GroupTombstone { group_id } => {
                json!({"type": "group", "group": group_id, "tombstone": true})
            }
            Record::Offset { group_id, partition, offset } => json!({"type": "offset", "group": group_id,
                "topic": &*partition.topic, "partition": partition.partition, "offset": offset.offset,
                "leader_epoch": offset.leader_epoch.unwrap_or(-1), "metadata": offset.metadata,
                "commit_ts": offset.commit_time, "expire_ts": offset.expire_time.unwrap_or(-1)}),
            Record::OffsetTombstone { group_id, partition } => json!({"type": "offset", "group": group_id,
                "topic": &*partition.topic, "partition": partition.partition, "tombstone": true}),
            other => json!(format!("{other:?}")),
        }
    }

    fn group_view(&self, group: &str) -> Value {
        let Some(g) = self.driver.group(group) else { return json!({"exists": false}) };
        let mut members: Vec<String> =
            g.members.iter().map(|m| self.sym(&m.member_id).as_str().unwrap().to_owned()).collect();
        members.sort();
        let mut pending: Vec<String> =
            g.pending_members.iter().map(|m| self.sym(m).as_str().unwrap().to_owned()).collect();
        pending.sort();
        json!({"state": g.state.as_str(), "generation": g.generation_id, "protocol_type": g.protocol_type,
               "protocol": g.protocol_name, "leader": g.leader_id.as_deref().map(|l| self.sym(l)),
               "members": members, "pending": pending})
    }

    fn build_request(&mut self, step: &Value, group: &str) -> Option<(Request, String)> {
        let op = step["op"].as_str().unwrap();
        let member = step.get("member").and_then(Value::as_str).unwrap_or("").to_owned();
        let defaults = &self.scenario["defaults"];
        let int = |key: &str, default: i64| {
            step.get(key).or_else(|| defaults.get(key)).and_then(Value::as_i64).unwrap_or(default)
        };
        let request = match op {
            "join" => {
                let member_id = self.resolve_member_id(Some(&member), step);
                let instance = self.instance(&member, step, true);
                let protocols_value = step
                    .get("protocols")
                    .or_else(|| defaults.get("protocols"))
                    .cloned()
                    .unwrap_or_else(|| json!([["range", {"topics": ["t"]}]]));
                let protocols = protocols_value
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| match p {
                        Value::Array(a) => ProtocolMetadata::new(a[0].as_str().unwrap(), parse_bytes(&a[1])),
                        Value::Object(o) => {
                            ProtocolMetadata::new(o["name"].as_str().unwrap(), parse_bytes(&o["metadata"]))
                        }
                        Value::String(s) => ProtocolMetadata::new(s.as_str(), Vec::new()),
                        other => panic!("bad protocol {other}"),
                    })
                    .collect();
                let text = |key: &str, default: &str| {
                    step.get(key)
                        .or_else(|| defaults.get(key))
                        .and_then(Value::as_str)
                        .unwrap_or(default)
                        .to_owned()
                };
                Request::JoinGroup(JoinGroupRequest {
                    group_id: group.into(),
                    member_id: member_id.into(),
                    group_instance_id: instance.map(Into::into),
                    client_id: text("client_id", "consumer"),
                    client_host: "/127.0.0.1".to_owned(),
                    protocol_type: text("protocol_type", "consumer").into(),
                    protocols,
                    session_timeout_ms: int("session_timeout_ms", 10_000) as i32,
                    rebalance_timeout_ms: int("rebalance_timeout_ms", 10_000) as i32,
                    reason: step.get("reason").and_then(Value::as_str).map(str::to_owned),
                    api_version: step.get("version").and_then(Value::as_i64).unwrap_or(9) as i16,
                })
            }
            "sync" => {
                let member_id = self.resolve_member_id(Some(&member), step);
                let instance = self.instance(&member, step, false);
                let last = self.members.get(&member).and_then(|s| s.last_join.clone());
                let pick = |key: &str, from_last: Option<String>| match step.get(key) {
                    Some(v) => v.as_str().map(str::to_owned),
                    None => from_last,
                };
                let protocol_type = pick("protocol_type", last.as_ref().and_then(|l| l.1.clone()));
                let protocol_name = pick("protocol", last.as_ref().and_then(|l| l.2.clone()));
                let mut assignments = Vec::new();
                if let Some(Value::Object(map)) = step.get("assignments") {
                    for (who, bytes) in map {
                        let id = match self.members.get(who).and_then(|s| s.current.clone()) {
                            Some(id) => id,
                            None => self.sym_to_real.get(who).cloned().unwrap_or_else(|| who.clone()),
                        };
                        assignments.push(MemberAssignmentData::new(id, parse_bytes(bytes)));
                    }
                }
                Request::SyncGroup(SyncGroupRequest {
                    group_id: group.into(),
                    generation_id: self.generation(&member, step),
                    member_id: member_id.into(),
                    group_instance_id: instance.map(Into::into),
                    protocol_type: protocol_type.map(Into::into),
                    protocol_name: protocol_name.map(Into::into),
                    assignments,
                })
            }
            "heartbeat" => Request::Heartbeat(HeartbeatRequest {
                group_id: group.into(),
                generation_id: self.generation(&member, step),
                member_id: (self.resolve_member_id(Some(&member), step)).into(),
                group_instance_id: (self.instance(&member, step, false)).map(Into::into),
            }),
            "leave" => {
                let entries: Vec<Value> = match step.get("members") {
                    Some(Value::Array(list)) => list.clone(),
                    _ => vec![step.clone()],
                };
                let members = entries
                    .iter()
                    .map(|e| {
                        let who = e.get("member").and_then(Value::as_str).unwrap_or("").to_owned();
                        MemberIdentity {
                            member_id: (self.resolve_member_id(Some(&who), e)).into(),
                            group_instance_id: (self.instance(&who, e, false)).map(Into::into),
                            reason: e.get("reason").and_then(Value::as_str).map(str::to_owned),
                        }
                    })
                    .collect();
                Request::LeaveGroup(LeaveGroupRequest { group_id: group.into(), members })
            }
            "commit" => {
                let (member_id, generation, instance) = if member.is_empty() {
                    let generation = step.get("generation").and_then(Value::as_i64).unwrap_or(-1) as i32;
                    let member_id = self.resolve_member_id(None, step);
                    let instance = step.get("instance").and_then(Value::as_str).map(str::to_owned);
                    (member_id, generation, instance)
                } else {
                    (
                        self.resolve_member_id(Some(&member), step),
                        self.generation(&member, step),
                        self.instance(&member, step, false),
                    )
                };
                let mut req = OffsetCommitRequest {
                    group_id: group.into(),
                    generation_id: generation,
                    member_id: member_id.into(),
                    group_instance_id: instance.map(Into::into),
                    retention_time_ms: step.get("retention_ms").and_then(Value::as_i64).unwrap_or(-1),
                    api_version: step.get("version").and_then(Value::as_i64).unwrap_or(9) as i16,
                    ..OffsetCommitRequest::default()
                };
                for entry in step["offsets"].as_array().unwrap() {
                    let (topic, partition, data) = match entry {
                        Value::Array(a) => {
                            let mut data = OffsetCommitData::new(a[2].as_i64().unwrap());
                            data.metadata = Some(a.get(3).and_then(Value::as_str).unwrap_or("").into());
                            (a[0].as_str().unwrap().to_owned(), a[1].as_i64().unwrap() as i32, data)
                        }
                        Value::Object(o) => {
                            let mut data = OffsetCommitData::new(o["offset"].as_i64().unwrap());
                            data.leader_epoch =
                                o.get("leader_epoch").and_then(Value::as_i64).map(|e| e as i32);
                            data.metadata = match o.get("metadata") {
                                None => Some(CommitMetadata::empty()),
                                Some(Value::Null) => None,
                                Some(v) => Some(v.as_str().unwrap().into()),
                            };
                            (
                                o["topic"].as_str().unwrap().to_owned(),
                                o["partition"].as_i64().unwrap() as i32,
                                data,
                            )
                        }
                        other => panic!("bad offset {other}"),
                    };
                    req = req.with_offset(topic, partition, data);
                }
                Request::OffsetCommit(req)
            }
            "fetch" => {
                let topics = fetch_topics(step);
                Request::OffsetFetch(OffsetFetchRequest {
                    group_id: group.into(),
                    topics,
                    require_stable: step.get("require_stable").and_then(Value::as_bool).unwrap_or(false),
                    member_id: None,
                    member_epoch: None,
                })
            }
            "describe" | "delete" => {
                let group_ids = match step.get("groups") {
                    Some(Value::Array(list)) => list.iter().map(|g| g.as_str().unwrap().into()).collect(),
                    _ => vec![group.into()],
                };
                if op == "describe" {
                    Request::DescribeGroups(DescribeGroupsRequest { group_ids, ..Default::default() })
                } else {
                    Request::DeleteGroups(DeleteGroupsRequest { group_ids })
                }
            }
            "list" => {
                let strings = |key: &str| -> Vec<String> {
                    step.get(key)
                        .and_then(Value::as_array)
                        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
                        .unwrap_or_default()
                };
                Request::ListGroups(ListGroupsRequest {
                    states_filter: strings("states"),
                    types_filter: strings("types"),
                })
            }
            "advance" => return None,
            other => panic!("unknown op {other}"),
        };
        Some((request, member))
    }
}

fn config_of(scenario: &Value) -> CoordinatorConfig {
    let c = &scenario["config"];
    let get = |k: &str| c.get(k).and_then(Value::as_i64);
    let mut config = CoordinatorConfig::default();
    if let Some(v) = get("group_min_session_timeout_ms") {
        config.min_session_timeout_ms = v as i32;
    }
    if let Some(v) = get("group_max_session_timeout_ms") {
        config.max_session_timeout_ms = v as i32;
    }
    if let Some(v) = get("group_initial_rebalance_delay_ms") {
        config.initial_rebalance_delay_ms = v as i32;
    }
    if let Some(v) = get("group_max_size") {
        config.group_max_size = v as i32;
    }
    if let Some(v) = get("offset_metadata_max_bytes") {
        config.offset_metadata_max_bytes = v as usize;
    }
    if let Some(v) = get("offsets_retention_minutes") {
        config.offset_retention_ms = v * 60_000;
    }
    if let Some(v) = get("offsets_retention_check_interval_ms") {
        config.offsets_retention_check_interval_ms = v;
    }
    config
}

fn sort_list(v: &mut Value, key: &str) {
    if let Some(Value::Array(list)) = v.get_mut(key) {
        list.sort_by_key(|x| x.to_string());
    }
}

fn normalize_response(mut v: Value) -> Value {
    for key in ["partitions", "groups"] {
        sort_list(&mut v, key);
    }
    v
}

/// Replays one scenario against one expected variant; returns the mismatches.
pub(crate) fn replay<D: Driver>(scenario: &Value, expected: &Value) -> Vec<String> {
    let mut r = Replay {
        scenario,
        driver: D::start(config_of(scenario)),
        members: BTreeMap::new(),
        real_to_sym: HashMap::new(),
        sym_to_real: HashMap::new(),
        requests: HashMap::new(),
        answered: HashMap::new(),
        step_delayed: Vec::new(),
        step_records: Vec::new(),
        current_step: 0,
        current_at: 0,
    };
    let default_group = scenario["group"].as_str().unwrap().to_owned();
    let mut failures = Vec::new();
    let steps = scenario["steps"].as_array().unwrap();
    let expected_steps = expected["steps"].as_array().unwrap();
    for (i, step) in steps.iter().enumerate() {
        let at = step["at_ms"].as_i64().unwrap();
        r.current_step = i;
        r.current_at = -1;
        r.step_delayed.clear();
        let answers = r.driver.advance_to(at);
        r.on_answers(answers);
        r.current_at = at;
        r.step_records.clear();
        let group = step.get("group").and_then(Value::as_str).unwrap_or(&default_group).to_owned();
        let op = step["op"].as_str().unwrap().to_owned();
        let append_error = step.get("append_error").and_then(Value::as_str).map(error_by_name);
        if let Some((request, member)) = r.build_request(step, &group) {
            let join_with_empty_id = matches!(&request, Request::JoinGroup(j) if j.member_id.is_empty());
            let instance = match &request {
                Request::JoinGroup(j) => j.group_instance_id.clone(),
                _ => None,
            };
            let known_before: Vec<String> = r
                .driver
                .group(&group)
                .map(|g| g.members.iter().map(|m| m.member_id.clone()).collect())
                .unwrap_or_default();
            r.requests.insert(i, (op.clone(), member.clone()));
            let Sent { records, answers } = r.driver.send(at, i, request, append_error);
            r.step_records = records;
            r.on_answers(answers);
            if join_with_empty_id {
                if let Some(instance) = &instance {
                    let records = r.step_records.clone();
                    for record in &records {
                        if let Record::Group(g) = record {
                            for m in &g.members {
                                if m.group_instance_id.as_deref() == Some(instance) {
                                    r.bind(&member, &m.member_id, false);
                                }
                            }
                        }
                    }
                }
                if let Some(g) = r.driver.group(&group) {
                    for m in &g.members {
                        if !known_before.contains(&m.member_id) && !r.real_to_sym.contains_key(&m.member_id) {
                            r.bind(&member, &m.member_id, true);
                        } else if !known_before.contains(&m.member_id) {
                            r.members.entry(member.clone()).or_default().current = Some(m.member_id.clone());
                        }
                    }
                }
            }
        }
        let exp = &expected_steps[i];
        let ctx = format!("step {i} ({op} at {at})");
        // The step's own response.
        let mine = r.answered.get(&i).filter(|_| !r.step_delayed.iter().any(|d| d["step"] == json!(i)));
        match (exp.get("response"), mine) {
            (Some(e), Some(m)) if normalize_response(e.clone()) != normalize_response(m.clone()) => {
                failures.push(format!("{ctx}: response\n  expected {e}\n  actual   {m}"));
            }
            (Some(_), Some(_)) => {}
            (Some(e), None) => failures.push(format!("{ctx}: expected response {e}, got none (parked)")),
            (None, Some(m)) if op != "advance" => {
                failures.push(format!("{ctx}: expected pending, got response {m}"))
            }
            _ => {}
        }
        // What the step's request wrote.
        let exp_records = exp.get("records").cloned().unwrap_or_else(|| json!([]));
        let my_records = json!(r.step_records.iter().map(|rec| r.render_record(rec)).collect::<Vec<_>>());
        if exp_records != my_records {
            failures.push(format!("{ctx}: records\n  expected {exp_records}\n  actual   {my_records}"));
        }
        // Earlier requests answered during this step.
        let key = |d: &Value| (d["at_ms"].as_i64().unwrap(), d["step"].as_i64().unwrap());
        let mut exp_delayed: Vec<(i64, i64, Value)> = exp
            .get("delayed")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter().map(|d| (key(d).0, key(d).1, normalize_response(d["response"].clone()))).collect()
            })
            .unwrap_or_default();
        let mut my_delayed: Vec<(i64, i64, Value)> = r
            .step_delayed
            .iter()
            .filter(|d| d["step"] != json!(i))
            .map(|d| (key(d).0, key(d).1, normalize_response(d["response"].clone())))
            .collect();
        exp_delayed.sort_by_key(|d| (d.0, d.1));
        my_delayed.sort_by_key(|d| (d.0, d.1));
        if exp_delayed != my_delayed {
            failures.push(format!(
                "{ctx}: delayed answers\n  expected {}\n  actual   {}",
                json!(exp_delayed.iter().map(|d| json!([d.0, d.1, d.2])).collect::<Vec<_>>()),
                json!(my_delayed.iter().map(|d| json!([d.0, d.1, d.2])).collect::<Vec<_>>())
            ));
        }
        // The group after the step.
        let mut exp_group = exp["group"].clone();
        if exp_group.get("exists").is_none() {
            let mut members: Vec<String> =
                exp_group["members"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
            members.sort();
            let mut pending: Vec<String> = exp_group["pending"]
                .as_array()
                .map(|a| a.iter().map(|p| p.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default();
            pending.sort();
            exp_group = json!({"state": exp_group["state"], "generation": exp_group["generation"],
                "protocol_type": exp_group["protocol_type"], "protocol": exp_group["protocol"],
                "leader": exp_group["leader"], "members": members, "pending": pending});
        }
        let my_group = r.group_view(&group);
        if exp_group != my_group {
            failures.push(format!("{ctx}: group\n  expected {exp_group}\n  actual   {my_group}"));
        }
        // Armed deadlines, when the driver compares them: join and sync timers, and
        // members' sessions (pending ids' expiries are not part of the snapshot).
        if let (true, Some(Value::Object(deadlines)), Some(g)) =
            (D::COMPARES_DEADLINES, exp["group"].get("deadlines"), r.driver.group(&group))
        {
            let mut expected_deadlines: BTreeMap<String, i64> = BTreeMap::new();
            let member_syms: Vec<String> =
                g.members.iter().map(|m| r.sym(&m.member_id).as_str().unwrap().to_owned()).collect();
            for (k, v) in deadlines {
                let keep = k == "join"
                    || k == "sync"
                    || k.strip_prefix("session:").is_some_and(|m| member_syms.iter().any(|s| s == m));
                if keep {
                    expected_deadlines.insert(k.clone(), v.as_i64().unwrap());
                }
            }
            let mut mine: BTreeMap<String, i64> = BTreeMap::new();
            if let Some(d) = g.join_deadline_ms {
                mine.insert("join".into(), d);
            }
            if let Some(d) = g.sync_deadline_ms {
                mine.insert("sync".into(), d);
            }
            for m in &g.members {
                if let Some(d) = m.session_deadline_ms {
                    mine.insert(format!("session:{}", r.sym(&m.member_id).as_str().unwrap()), d);
                }
            }
            if expected_deadlines != mine {
                failures.push(format!(
                    "{ctx}: deadlines\n  expected {expected_deadlines:?}\n  actual   {mine:?}"
                ));
            }
        }
    }
    let mut exp_unanswered: Vec<i64> = expected["unanswered"]
        .as_array()
        .map(|a| a.iter().map(|u| u["step"].as_i64().unwrap()).collect())
        .unwrap_or_default();
    let mut my_unanswered: Vec<i64> = steps
        .iter()
        .enumerate()
        .filter(|(i, s)| s["op"] != "advance" && !r.answered.contains_key(i))
        .map(|(i, _)| i as i64)
        .collect();
    exp_unanswered.sort();
    my_unanswered.sort();
    if exp_unanswered != my_unanswered {
        failures.push(format!("unanswered: expected {exp_unanswered:?}, actual {my_unanswered:?}"));
    }
    r.driver.stop();
    failures
}

/// Where the oracle's scripts (`scenarios`) and Kafka's answers (`expected`) are.
pub(crate) fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oracle")
}

/// The names of every published script in `dir`, sorted; fewer than `at_least` means
/// scripts went missing.
pub(crate) fn script_names(dir: &Path, at_least: usize) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= at_least, "oracle scripts missing: {}", names.len());
    names
}

/// The JSON file `name` of `kind` (`scenarios` or `expected`).
pub(crate) fn load(dir: &Path, kind: &str, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(kind).join(name)).unwrap()).unwrap()
}

/// The answers Kafka may have given: one per variant when the script's outcome is racy.
pub(crate) fn variants(expected: &Value) -> Vec<Value> {
    match expected.get("variants") {
        Some(Value::Array(v)) => v.clone(),
        _ => vec![expected.clone()],
    }
}

/// A replay must be able to fail: a script passes, then a wrong response and a wrong
/// group in Kafka's answers are reported as exactly two mismatches.
pub(crate) fn assert_the_replay_detects_a_wrong_answer<D: Driver>() {
    let dir = oracle_dir();
    let name = "01-join-two-step-single.json";
    let scenario = load(&dir, "scenarios", name);
    let mut expected = load(&dir, "expected", name);
    assert!(replay::<D>(&scenario, &expected).is_empty());
    let steps = expected["steps"].as_array_mut().unwrap();
    let with_response = steps.iter_mut().find(|s| s.get("response").is_some()).unwrap();
    with_response["response"]["error"] = json!("REBALANCE_IN_PROGRESS");
    let last = steps.last_mut().unwrap();
    last["group"] = json!({"exists": false});
    let failures = replay::<D>(&scenario, &expected);
    assert_eq!(failures.len(), 2, "{failures:#?}");
}
