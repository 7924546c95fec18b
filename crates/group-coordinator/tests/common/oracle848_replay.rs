//! The KIP-848 oracle replay (`tests/it/oracle_kip848.rs`): it reads a script of
//! `tests/data/oracle-kip848/scenarios`, gives its members symbolic ids, drives a
//! [`CoordinatorCore`] with simulated time (timers from its effects in a queue, every
//! write completed at once), renders the answers in the JSON form of Kafka's
//! generated converters, and compares them and each group with what Kafka 4.2.1's
//! Java coordinator answered (`tests/data/oracle-kip848/expected`), as the oracle
//! README's "How to compare" says:
//!
//! - responses exactly, except that under the `uniform` assignor with more than one
//!   member the partitions themselves are not compared (Java's hash-map order picks
//!   them) but the properties are: every partition of a subscribed topic in exactly
//!   one target, only subscribed topics, the same target sizes, as many partitions
//!   moved as Kafka moved, nothing owned twice;
//! - the group after each step: state, epochs, members, each member's epoch, state,
//!   assigned, pending and target partitions (and what it sent about itself);
//! - the metadata hash only as zero / non-zero and changed / unchanged;
//! - records, timers and deadlines only in a soft report that fails nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use group_assignors::server::{
    GroupSpec, ServerAssignError, ServerAssignor, SubscribedTopicDescriber, TargetAssignment,
};
use group_coordinator::{
    ConsumerGroupSnapshot, CoordinatorConfig, CoordinatorCore, Effects, GroupConfigOverrides, MetadataImage,
    MigrationPolicy, Record, Request, RequestId, Response, TimerKey, TimerQueue, TopicImage,
};
use group_types::{
    ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest, DeleteGroupsRequest, DescribeGroupsRequest,
    ErrorCode, GroupId, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, ListGroupsRequest,
    MemberAssignment, MemberAssignmentData, MemberIdentity, OffsetCommitData, OffsetCommitRequest,
    OffsetFetchRequest, ProtocolMetadata, Subscription, SyncGroupRequest, TopicId, TopicIdPartitions,
    TopicPartitions,
};
use serde_json::{Map, Value, json};

use crate::oracle::oracle_replay::{Answer, error_by_name, fetch_topics};
pub(crate) use crate::oracle::oracle_replay::{load, script_names, variants};

/// One difference between the replay and Kafka's recording: at script step `step`
/// (`None`: after the last step).
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub(crate) step: Option<usize>,
    pub(crate) what: String,
}

/// What replaying one script against one recorded variant found.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Differences that count.
    pub(crate) failures: Vec<Failure>,
    /// Differences in Kafka's internals (records, deadlines) that fail nothing.
    pub(crate) soft: Vec<String>,
}

/// A test assignor named `failing` whose assign always errs (Kafka's harness throws
/// a `PartitionAssignorException` from it).
#[derive(Debug)]
pub(crate) struct FailingAssignor;

impl ServerAssignor for FailingAssignor {
    fn name(&self) -> &str {
        "failing"
    }

    fn assign(
        &self,
        _group: &GroupSpec<'_>,
        _topics: &dyn SubscribedTopicDescriber,
    ) -> Result<TargetAssignment, ServerAssignError> {
        Err(ServerAssignError {
            assignor: "failing".into(),
            message: "the test assignor always fails".into(),
        })
    }
}

// ---------------------------------------------------------------------------------
// ConsumerProtocol bytes, as the README writes them.

fn hex(bytes: &[u8]) -> String {
    format!("hex:{}", bytes.iter().map(|c| format!("{c:02x}")).collect::<String>())
}

fn raw_bytes(s: &str) -> Vec<u8> {
    match s.strip_prefix("hex:") {
        Some(h) => (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()).collect(),
        None => s.as_bytes().to_vec(),
    }
}

fn topic_partitions_of(v: &Value) -> Vec<TopicPartitions> {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(t, ps)| {
                    TopicPartitions::new(
                        t.clone(),
                        ps.as_array().unwrap().iter().map(|p| p.as_i64().unwrap() as i32).collect::<Vec<_>>(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A subscription object (or a plain / `hex:` string) to bytes.
fn subscription_bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::String(s) => raw_bytes(s),
        Value::Null => Vec::new(),
        Value::Object(o) => Subscription {
            version: o.get("version").and_then(Value::as_i64).unwrap_or(0) as i16,
            topics: o["topics"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect(),
            user_data: o.get("user_data").and_then(Value::as_str).map(raw_bytes),
            owned_partitions: o.get("owned").map(topic_partitions_of).unwrap_or_default(),
            generation_id: o.get("generation").and_then(Value::as_i64).unwrap_or(-1) as i32,
            rack_id: o.get("rack").and_then(Value::as_str).map(str::to_owned),
        }
        .encode()
        .unwrap(),
        other => panic!("bad subscription {other}"),
    }
}

/// An assignment object (or a plain / `hex:` string) to bytes.
fn assignment_bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::String(s) => raw_bytes(s),
        Value::Null => Vec::new(),
        Value::Object(o) => MemberAssignment {
            version: o.get("version").and_then(Value::as_i64).unwrap_or(0) as i16,
            partitions: o.get("partitions").map(topic_partitions_of).unwrap_or_default(),
            user_data: o.get("user_data").and_then(Value::as_str).map(raw_bytes),
        }
        .encode()
        .unwrap(),
        other => panic!("bad assignment {other}"),
    }
}

fn opaque(b: &[u8]) -> Value {
    if b.iter().all(|c| (0x20..=0x7e).contains(c)) {
        json!(String::from_utf8_lossy(b))
    } else {
        json!(hex(b))
    }
}

fn partitions_object(tps: &[TopicPartitions]) -> Value {
    let mut m: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for tp in tps {
        m.entry(tp.topic.clone()).or_default().extend(&tp.partitions);
    }
    for ps in m.values_mut() {
        ps.sort_unstable();
    }
    json!(m)
}

fn render_subscription(b: &[u8]) -> Value {
    let Ok(s) = Subscription::decode(b) else { return opaque(b) };
    let mut o = Map::new();
    o.insert("version".into(), json!(s.version));
    o.insert("topics".into(), json!(s.topics));
    if !s.owned_partitions.is_empty() {
        o.insert("owned".into(), partitions_object(&s.owned_partitions));
    }
    if s.version >= 2 {
        o.insert("generation".into(), json!(s.generation_id));
    }
    if let Some(rack) = &s.rack_id {
        o.insert("rack".into(), json!(rack));
    }
    if let Some(u) = s.user_data.as_deref().filter(|u| !u.is_empty()) {
        o.insert("user_data".into(), json!(hex(u)));
    }
    Value::Object(o)
}

fn render_assignment_bytes(b: &[u8]) -> Value {
    if b.is_empty() {
        return json!("");
    }
    let Ok(a) = MemberAssignment::decode(b) else { return opaque(b) };
    let mut o = Map::new();
    o.insert("version".into(), json!(a.version));
    o.insert("partitions".into(), partitions_object(&a.partitions));
    if let Some(u) = a.user_data.as_deref().filter(|u| !u.is_empty()) {
        o.insert("user_data".into(), json!(hex(u)));
    }
    Value::Object(o)
}

// ---------------------------------------------------------------------------------
// The script's configuration and metadata image.

/// The core's configuration for the script's broker settings, whether the
/// `failing` assignor is configured, and the settings the harness cannot map.
fn config_of(scenario: &Value) -> (CoordinatorConfig, bool, Vec<String>) {
    let mut config = CoordinatorConfig::default();
    let mut failing = false;
    let mut unmapped = Vec::new();
    let Some(c) = scenario.get("config").and_then(Value::as_object) else {
        return (config, failing, unmapped);
    };
    for (key, v) in c {
        let int = || v.as_i64().or_else(|| v.as_str().and_then(|s| s.parse().ok())).unwrap();
        match key.as_str() {
            "group.consumer.session.timeout.ms" => config.consumer.session_timeout_ms = int() as i32,
            "group.consumer.min.session.timeout.ms" => config.consumer.min_session_timeout_ms = int() as i32,
            "group.consumer.max.session.timeout.ms" => config.consumer.max_session_timeout_ms = int() as i32,
            "group.consumer.heartbeat.interval.ms" => config.consumer.heartbeat_interval_ms = int() as i32,
            "group.consumer.min.heartbeat.interval.ms" => {
                config.consumer.min_heartbeat_interval_ms = int() as i32;
            }
            "group.consumer.max.heartbeat.interval.ms" => {
                config.consumer.max_heartbeat_interval_ms = int() as i32;
            }
            "group.consumer.max.size" => config.consumer.max_size = int() as i32,
            "group.consumer.assignors" => {
                let names: Vec<String> = match v {
                    Value::Array(a) => a.iter().map(|s| s.as_str().unwrap().trim().to_owned()).collect(),
                    Value::String(s) => s.split(',').map(|s| s.trim().to_owned()).collect(),
                    other => panic!("bad assignors {other}"),
                };
                failing = names.iter().any(|n| n == "failing");
                config.consumer.assignors = names;
            }
            "group.consumer.migration.policy" => {
                config.consumer.migration_policy = v.as_str().unwrap().parse::<MigrationPolicy>().unwrap();
            }
            "group.consumer.regex.refresh.interval.ms" => config.consumer.regex_refresh_interval_ms = int(),
            "group.coordinator.rebalance.protocols" => {
                config.consumer.enabled = v.as_str().unwrap().split(',').any(|p| p.trim() == "consumer");
            }
            "group.max.size" => config.group_max_size = int() as i32,
            "group.min.session.timeout.ms" => config.min_session_timeout_ms = int() as i32,
            "group.max.session.timeout.ms" => config.max_session_timeout_ms = int() as i32,
            "group.initial.rebalance.delay.ms" => config.initial_rebalance_delay_ms = int() as i32,
            "offsets.retention.check.interval.ms" => config.offsets_retention_check_interval_ms = int(),
            "offsets.retention.minutes" => config.offset_retention_ms = int() * 60_000,
            "offset.metadata.max.bytes" => config.offset_metadata_max_bytes = int() as usize,
            other => unmapped.push(format!("broker setting {other} is not mapped")),
        }
    }
    (config, failing, unmapped)
}

/// The scripted cluster: topics and broker racks, versioned from 1.
#[derive(Debug, Clone, Default)]
struct Cluster {
    version: i64,
    /// By name: (id, partition count).
    topics: BTreeMap<String, (TopicId, u32)>,
    /// Broker id to rack (`None`: registered without one).
    brokers: BTreeMap<i32, Option<String>>,
}

impl Cluster {
    fn image(&self) -> MetadataImage {
        let topics = self.topics.iter().map(|(name, (id, partitions))| {
            let mut topic = TopicImage::new(*id, name.as_str(), *partitions);
            if self.brokers.values().any(Option::is_some) {
                topic.racks = (0..*partitions as i32)
                    .map(|p| {
                        let mut racks: Vec<Arc<str>> = [p % 4, (p + 1) % 4]
                            .iter()
                            .filter_map(|b| self.brokers.get(b).cloned().flatten())
                            .map(Arc::from)
                            .collect();
                        racks.sort();
                        racks.dedup();
                        racks
                    })
                    .collect();
            }
            topic
        });
        MetadataImage::new(self.version, topics)
    }

    fn add_topic(&mut self, t: &Value, names: &mut HashMap<TopicId, String>) {
        let name = t["name"].as_str().unwrap().to_owned();
        let id: TopicId = t["id"].as_str().unwrap().parse().unwrap();
        let partitions = t["partitions"].as_u64().unwrap() as u32;
        names.insert(id, name.clone());
        self.topics.insert(name, (id, partitions));
    }

    fn set_brokers(&mut self, b: &Value) {
        for (id, rack) in b.as_object().unwrap() {
            self.brokers.insert(id.parse().unwrap(), rack.as_str().map(str::to_owned));
        }
    }
}

// ---------------------------------------------------------------------------------
// Driving the core.

/// The core with simulated time: request ids are script steps.
struct CoreDriver {
    core: CoordinatorCore,
    timers: TimerQueue,
}

impl CoreDriver {
    /// Applies effects: timers into the queue, writes completed (failing with
    /// `append_error` when given), records kept, responses collected.
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
            if !self.core.is_write_outstanding(write.id) {
                continue;
            }
            let result = match append_error {
                Some(e) => Err(e),
                None => Ok(()),
            };
            if result.is_ok() {
                records.extend(write.records.iter().cloned());
            }
            let more = self.core.complete_write(now, write.id, result);
            self.process(now, more, append_error, records, answers);
        }
    }
}

// ---------------------------------------------------------------------------------
// The replay.

#[derive(Debug, Default, Clone)]
struct Sym {
    /// The id the member sends (v1: its name; generated ids once bound).
    current: Option<String>,
    /// Ids bound to it, first shown as its name, later as `name.2`, ...
    bound: Vec<String>,
    /// Its epoch from its last successful ConsumerGroupHeartbeat (or generation from
    /// its last successful JoinGroup).
    epoch: i32,
    /// The assignment it last received in a heartbeat response.
    last_assignment: Vec<TopicIdPartitions>,
    /// Its last successful JoinGroup: generation, protocol type, protocol name.
    last_join: Option<(i32, Option<String>, Option<String>)>,
}

struct Replay<'a> {
    scenario: &'a Value,
    driver: CoreDriver,
    cluster: Cluster,
    /// Every topic id ever in the image, with its name.
    names: HashMap<TopicId, String>,
    members: BTreeMap<String, Sym>,
    real_to_sym: HashMap<String, String>,
    sym_to_real: HashMap<String, String>,
    /// Per step sent: (op, member, rendering context).
    requests: HashMap<usize, (String, String, Ctx)>,
    answered: HashMap<usize, Value>,
    /// Answers to earlier steps that came during the current one: (at, step, response).
    delayed: Vec<(i64, usize, Value)>,
    group_configs: HashMap<String, GroupConfigOverrides>,
    current_step: usize,
    current_at: i64,
}

/// How to render an answer: the request's version.
#[derive(Debug, Clone, Copy, Default)]
struct Ctx {
    version: i16,
}

impl Replay<'_> {
    fn bind(&mut self, member: &str, id: &str) {
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
        self.members.entry(member.to_owned()).or_default().current = Some(id.to_owned());
    }

    fn sym(&self, id: &str) -> String {
        self.real_to_sym.get(id).cloned().unwrap_or_else(|| id.to_owned())
    }

    fn sym_opt(&self, id: Option<&str>) -> Value {
        id.map_or(Value::Null, |id| json!(self.sym(id)))
    }

    /// The member id a step sends: its `member_id` (`""`, a bound symbolic id, or a
    /// literal), else the member's current id, else (v1 heartbeats) its name.
    fn member_id(&self, member: Option<&str>, step: &Value, name_if_unbound: bool) -> String {
        match step.get("member_id") {
            Some(Value::String(s)) if s.is_empty() => String::new(),
            Some(Value::String(s)) => self.sym_to_real.get(s).cloned().unwrap_or_else(|| s.clone()),
            _ => match member.and_then(|m| self.members.get(m)).and_then(|s| s.current.clone()) {
                Some(id) => id,
                None if name_if_unbound => member.unwrap_or("").to_owned(),
                None => String::new(),
            },
        }
    }

    fn topic_name(&self, id: TopicId) -> String {
        self.names.get(&id).cloned().unwrap_or_else(|| id.to_string())
    }

    fn topic_id(&self, name: &str) -> TopicId {
        if let Some((id, _)) = self.cluster.topics.get(name) {
            return *id;
        }
        self.names
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(id, _)| *id)
            .unwrap_or_else(|| panic!("no topic {name}"))
    }

    /// `{"foo": [0, 1]}` as partitions by topic id.
    fn owned_of(&self, v: &Value) -> Vec<TopicIdPartitions> {
        match v {
            Value::Array(a) if a.is_empty() => Vec::new(),
            Value::Object(m) => m
                .iter()
                .map(|(t, ps)| TopicIdPartitions {
                    topic_id: self.topic_id(t),
                    partitions: ps.as_array().unwrap().iter().map(|p| p.as_i64().unwrap() as i32).collect(),
                })
                .collect(),
            other => panic!("bad owned {other}"),
        }
    }

    /// Partitions by topic id, rendered `{"topicPartitions": [{"topic": name, ...}]}`.
    fn render_tps(&self, tps: &[TopicIdPartitions]) -> Value {
        let mut list: Vec<(String, Vec<i32>)> =
            tps.iter().map(|t| (self.topic_name(t.topic_id), sorted(&t.partitions))).collect();
        list.sort();
        json!({"topicPartitions": list.into_iter().map(|(t, ps)| json!({"topic": t, "partitions": ps})).collect::<Vec<_>>()})
    }

    /// Partitions by topic id as `{"foo": [0, 1]}`.
    fn tps_map(&self, tps: &[TopicIdPartitions]) -> BTreeMap<String, Vec<i32>> {
        let mut m: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for t in tps {
            if !t.partitions.is_empty() {
                m.entry(self.topic_name(t.topic_id)).or_default().extend(&t.partitions);
            }
        }
        for ps in m.values_mut() {
            ps.sort_unstable();
        }
        m
    }

    // -- requests --------------------------------------------------------------------

    fn hb_request(
        &mut self,
        step: &Value,
        group: &str,
        member: &str,
    ) -> (ConsumerGroupHeartbeatRequest, Value) {
        let defaults = self.scenario.get("defaults").cloned().unwrap_or(json!({}));
        let version =
            step.get("version").or_else(|| defaults.get("version")).and_then(Value::as_i64).unwrap_or(1)
                as i16;
        let member_id = self.member_id(Some(member), step, version >= 1);
        let epoch = match step.get("epoch") {
            Some(v) => v.as_i64().unwrap() as i32,
            None => self.members.get(member).map_or(0, |s| s.epoch),
        };
        let text = |key: &str| step.get(key).and_then(Value::as_str).map(str::to_owned);
        let rebalance_timeout_ms = match step.get("rebalance_timeout_ms") {
            Some(Value::Null) => -1,
            Some(v) => v.as_i64().unwrap() as i32,
            None if epoch == 0 => {
                defaults.get("rebalance_timeout_ms").and_then(Value::as_i64).unwrap_or(5000) as i32
            }
            None => -1,
        };
        let names = match step.get("topics") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) => {
                Some(a.iter().map(|t| t.as_str().unwrap().to_owned()).collect::<Vec<_>>())
            }
            Some(other) => panic!("bad topics {other}"),
        };
        let owned = match step.get("owned") {
            None if epoch == 0 => Some(Vec::new()),
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s == "assignment" => {
                Some(self.members.get(member).map(|s| s.last_assignment.clone()).unwrap_or_default())
            }
            Some(v) => Some(self.owned_of(v)),
        };
        let regex = if version >= 1 { text("regex") } else { None };
        let client_id = step
            .get("client_id")
            .or_else(|| defaults.get("client_id"))
            .and_then(Value::as_str)
            .unwrap_or("consumer")
            .to_owned();
        let request = ConsumerGroupHeartbeatRequest {
            api_version: version,
            group_id: group.into(),
            member_id: member_id.into(),
            member_epoch: epoch,
            instance_id: text("instance").map(Into::into),
            rack_id: text("rack"),
            rebalance_timeout_ms,
            subscribed_topic_names: names,
            subscribed_topic_regex: regex,
            server_assignor: text("assignor"),
            topic_partitions: owned,
            client_id,
            client_host: "/127.0.0.1".to_owned(),
        };
        let echo = json!({
            "groupId": request.group_id,
            "memberId": self.sym(&request.member_id),
            "memberEpoch": request.member_epoch,
            "instanceId": request.instance_id,
            "rackId": request.rack_id,
            "rebalanceTimeoutMs": request.rebalance_timeout_ms,
            "subscribedTopicNames": request.subscribed_topic_names,
            "subscribedTopicRegex": request.subscribed_topic_regex,
            "serverAssignor": request.server_assignor,
            "topicPartitions": request.topic_partitions.as_ref().map(|t| self.render_tps(t)["topicPartitions"].clone()),
            "version": version,
        });
        (request, echo)
    }

    fn strings(step: &Value, key: &str) -> Vec<String> {
        step.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default()
    }

    fn groups_of(step: &Value, group: &str) -> Vec<GroupId> {
        match step.get("groups") {
            Some(Value::Array(list)) => list.iter().map(|g| g.as_str().unwrap().into()).collect(),
            _ => vec![group.into()],
        }
    }

    fn generation(&self, member: &str, step: &Value) -> i32 {
        match step.get("generation") {
            Some(v) => v.as_i64().unwrap() as i32,
            None => self.members.get(member).and_then(|s| s.last_join.as_ref()).map_or(-1, |j| j.0),
        }
    }

    /// The request of a step, the member it is for, how to render its answer and
    /// (heartbeats and ListGroups) its echo.
    fn build(&mut self, step: &Value, group: &str) -> Option<(Request, String, Ctx, Option<Value>)> {
        let op = step["op"].as_str().unwrap();
        let member = step.get("member").and_then(Value::as_str).unwrap_or("").to_owned();
        let defaults = self.scenario.get("defaults").cloned().unwrap_or(json!({}));
        let int = |key: &str, default: i64| {
            step.get(key).or_else(|| defaults.get(key)).and_then(Value::as_i64).unwrap_or(default)
        };
        let version = |default: i64| step.get("version").and_then(Value::as_i64).unwrap_or(default) as i16;
        let text = |key: &str| step.get(key).and_then(Value::as_str).map(str::to_owned);
        let (request, ctx, echo) = match op {
            "hb" => {
                let (r, echo) = self.hb_request(step, group, &member);
                let ctx = Ctx { version: r.api_version };
                (Request::from(r), ctx, Some(echo))
            }
            "cg_describe" => {
                let v = version(1);
                (
                    Request::ConsumerGroupDescribe(ConsumerGroupDescribeRequest {
                        api_version: v,
                        group_ids: Self::groups_of(step, group),
                        include_authorized_operations: false,
                    }),
                    Ctx { version: v },
                    None,
                )
            }
            "list" => {
                let r = ListGroupsRequest {
                    states_filter: Self::strings(step, "states"),
                    types_filter: Self::strings(step, "types"),
                };
                let echo = json!({"statesFilter": r.states_filter, "typesFilter": r.types_filter});
                (Request::ListGroups(r), Ctx { version: version(5) }, Some(echo))
            }
            "describe" => (
                Request::DescribeGroups(DescribeGroupsRequest {
                    group_ids: Self::groups_of(step, group),
                    api_version: version(6),
                    ..Default::default()
                }),
                Ctx { version: version(6) },
                None,
            ),
            "delete" => (
                Request::DeleteGroups(DeleteGroupsRequest { group_ids: Self::groups_of(step, group) }),
                Ctx::default(),
                None,
            ),
            "join" => {
                let protocols_value = step
                    .get("protocols")
                    .or_else(|| defaults.get("protocols"))
                    .cloned()
                    .unwrap_or_else(|| json!([["range", {"topics": ["foo"]}]]));
                let protocols = protocols_value
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| match p {
                        Value::Array(a) => {
                            ProtocolMetadata::new(a[0].as_str().unwrap(), subscription_bytes(&a[1]))
                        }
                        other => panic!("bad protocol {other}"),
                    })
                    .collect();
                let text_default = |key: &str, default: &str| {
                    step.get(key)
                        .or_else(|| defaults.get(key))
                        .and_then(Value::as_str)
                        .unwrap_or(default)
                        .to_owned()
                };
                (
                    Request::JoinGroup(JoinGroupRequest {
                        group_id: group.into(),
                        member_id: (self.member_id(Some(&member), step, false)).into(),
                        group_instance_id: text("instance").map(Into::into),
                        client_id: text_default("client_id", "consumer"),
                        client_host: "/127.0.0.1".to_owned(),
                        protocol_type: text_default("protocol_type", "consumer").into(),
                        protocols,
                        session_timeout_ms: int("session_timeout_ms", 45_000) as i32,
                        rebalance_timeout_ms: int("rebalance_timeout_ms", 300_000) as i32,
                        reason: text("reason"),
                        api_version: version(9),
                    }),
                    Ctx { version: version(9) },
                    None,
                )
            }
            "sync" => {
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
                        assignments.push(MemberAssignmentData::new(id, assignment_bytes(bytes)));
                    }
                }
                (
                    Request::SyncGroup(SyncGroupRequest {
                        group_id: group.into(),
                        generation_id: self.generation(&member, step),
                        member_id: (self.member_id(Some(&member), step, false)).into(),
                        group_instance_id: text("instance").map(Into::into),
                        protocol_type: protocol_type.map(Into::into),
                        protocol_name: protocol_name.map(Into::into),
                        assignments,
                    }),
                    Ctx { version: version(5) },
                    None,
                )
            }
            "heartbeat" => (
                Request::Heartbeat(HeartbeatRequest {
                    group_id: group.into(),
                    generation_id: self.generation(&member, step),
                    member_id: (self.member_id(Some(&member), step, false)).into(),
                    group_instance_id: text("instance").map(Into::into),
                }),
                Ctx { version: version(4) },
                None,
            ),
            "leave" => {
                let entries: Vec<Value> = match step.get("members") {
                    Some(Value::Array(list)) => list.clone(),
                    _ => vec![step.clone()],
                };
                let members = entries
                    .iter()
                    .map(|e| {
                        let who = e.get("member").and_then(Value::as_str);
                        MemberIdentity {
                            member_id: (self.member_id(who, e, true)).into(),
                            group_instance_id: e.get("instance").and_then(Value::as_str).map(Into::into),
                            reason: e.get("reason").and_then(Value::as_str).map(str::to_owned),
                        }
                    })
                    .collect();
                (
                    Request::LeaveGroup(LeaveGroupRequest { group_id: group.into(), members }),
                    Ctx { version: version(5) },
                    None,
                )
            }
            "commit" => {
                let v = version(9);
                let (member_id, epoch) = if member.is_empty() {
                    (self.member_id(None, step, false), -1)
                } else {
                    let current = self.members.get(&member).map_or(-1, |s| s.epoch);
                    (self.member_id(Some(&member), step, true), current)
                };
                let epoch = step
                    .get("epoch")
                    .or_else(|| step.get("generation"))
                    .and_then(Value::as_i64)
                    .map_or(epoch, |e| e as i32);
                let mut req = OffsetCommitRequest {
                    group_id: group.into(),
                    generation_id: epoch,
                    member_id: member_id.into(),
                    group_instance_id: text("instance").map(Into::into),
                    retention_time_ms: step.get("retention_ms").and_then(Value::as_i64).unwrap_or(-1),
                    api_version: v,
                    ..OffsetCommitRequest::default()
                };
                for entry in step["offsets"].as_array().unwrap() {
                    let a = entry.as_array().unwrap();
                    let mut data = OffsetCommitData::new(a[2].as_i64().unwrap());
                    data.metadata = Some(a.get(3).and_then(Value::as_str).unwrap_or("").into());
                    req = req.with_offset(a[0].as_str().unwrap(), a[1].as_i64().unwrap() as i32, data);
                }
                (Request::OffsetCommit(req), Ctx { version: v }, None)
            }
            "fetch" => {
                let topics = fetch_topics(step);
                let (member_id, epoch) = if member.is_empty() {
                    let id = match step.get("member_id") {
                        Some(Value::String(_)) => Some(self.member_id(None, step, false)),
                        _ => None,
                    };
                    (id, -1)
                } else {
                    let current = self.members.get(&member).map_or(-1, |s| s.epoch);
                    let id = match step.get("member_id") {
                        Some(Value::Null) => None,
                        _ => Some(self.member_id(Some(&member), step, true)),
                    };
                    (id, current)
                };
                let epoch = step.get("epoch").and_then(Value::as_i64).map_or(epoch, |e| e as i32);
                (
                    Request::OffsetFetch(OffsetFetchRequest {
                        group_id: group.into(),
                        topics,
                        require_stable: step.get("require_stable").and_then(Value::as_bool).unwrap_or(false),
                        member_id: member_id.map(Into::into),
                        member_epoch: Some(epoch),
                    }),
                    Ctx { version: version(9) },
                    None,
                )
            }
            _ => return None,
        };
        Some((request, member, ctx, echo))
    }

    // -- answers ---------------------------------------------------------------------

    fn render(&self, response: &Response, ctx: Ctx) -> Value {
        match response {
            Response::ConsumerGroupHeartbeat(r) => json!({
                "error": r.error_code.name(),
                "errorMessage": r.error_message,
                "memberId": self.sym_opt(r.member_id.as_deref()),
                "memberEpoch": r.member_epoch,
                "heartbeatIntervalMs": r.heartbeat_interval_ms,
                "assignment": r.assignment.as_ref().map(|a| self.render_tps(a)),
            }),
            Response::ConsumerGroupDescribe(r) => {
                let groups: Vec<Value> = r
                    .groups
                    .iter()
                    .map(|g| {
                        let described = |tps: &[group_types::DescribedTopicPartitions]| {
                            let mut list: Vec<(String, String, Vec<i32>)> = tps
                                .iter()
                                .map(|t| {
                                    (self.topic_name(t.topic_id), t.topic_name.clone(), sorted(&t.partitions))
                                })
                                .collect();
                            list.sort();
                            json!({"topicPartitions": list.into_iter().map(|(t, n, ps)|
                                json!({"topic": t, "topicName": n, "partitions": ps})).collect::<Vec<_>>()})
                        };
                        let mut members: Vec<Value> = g
                            .members
                            .iter()
                            .map(|m| {
                                let mut names = m.subscribed_topic_names.clone();
                                names.sort();
                                let mut o = json!({
                                    "memberId": self.sym(&m.member_id),
                                    "instanceId": m.instance_id,
                                    "rackId": m.rack_id,
                                    "memberEpoch": m.member_epoch,
                                    "clientId": m.client_id,
                                    "clientHost": m.client_host,
                                    "subscribedTopicNames": names,
                                    "subscribedTopicRegex": m.subscribed_topic_regex,
                                    "assignment": described(&m.assignment),
                                    "targetAssignment": described(&m.target_assignment),
                                });
                                if ctx.version >= 1 {
                                    o["memberType"] = json!(m.member_type);
                                }
                                o
                            })
                            .collect();
                        members.sort_by_key(|m| m["memberId"].to_string());
                        json!({
                            "error": g.error_code.name(),
                            "errorMessage": g.error_message,
                            "groupId": g.group_id,
                            "groupState": g.group_state,
                            "groupEpoch": g.group_epoch,
                            "assignmentEpoch": g.assignment_epoch,
                            "assignorName": g.assignor_name,
                            "members": members,
                            "authorizedOperations": g.authorized_operations,
                        })
                    })
                    .collect();
                json!({"groups": groups})
            }
            Response::ListGroups(r) => {
                let mut groups: Vec<Value> = r
                    .groups
                    .iter()
                    .map(|g| {
                        let mut o = json!({"groupId": g.group_id, "protocolType": g.protocol_type});
                        if ctx.version >= 4 {
                            o["groupState"] = json!(g.group_state);
                        }
                        if ctx.version >= 5 {
                            o["groupType"] = json!(g.group_type);
                        }
                        o
                    })
                    .collect();
                groups.sort_by_key(|g| g["groupId"].to_string());
                json!({"error": r.error_code.name(), "groups": groups})
            }
            Response::DescribeGroups(r) => {
                let groups: Vec<Value> = r
                    .groups
                    .iter()
                    .map(|g| {
                        let mut members: Vec<Value> = g
                            .members
                            .iter()
                            .map(|m| {
                                let mut o = json!({"memberId": self.sym(&m.member_id)});
                                if ctx.version >= 4 {
                                    o["groupInstanceId"] = json!(m.group_instance_id);
                                }
                                o["clientId"] = json!(m.client_id);
                                o["clientHost"] = json!(m.client_host);
                                o["memberMetadata"] = if m.member_metadata.is_empty() {
                                    json!("")
                                } else {
                                    render_subscription(&m.member_metadata)
                                };
                                o["memberAssignment"] = render_assignment_bytes(&m.member_assignment);
                                o
                            })
                            .collect();
                        members.sort_by_key(|m| m["memberId"].to_string());
                        let mut o = json!({"error": g.error_code.name()});
                        if ctx.version >= 6 {
                            o["errorMessage"] = json!(g.error_message);
                        }
                        o["groupId"] = json!(g.group_id);
                        o["groupState"] = json!(g.group_state);
                        o["protocolType"] = json!(g.protocol_type);
                        o["protocolData"] = json!(g.protocol_data);
                        o["members"] = json!(members);
                        o["authorizedOperations"] = json!(i32::MIN);
                        o
                    })
                    .collect();
                json!({"groups": groups})
            }
            Response::DeleteGroups(r) => json!({"results": r.results.iter().map(|g|
                json!({"groupId": g.group_id, "error": g.error_code.name()})).collect::<Vec<_>>()}),
            Response::OffsetCommit(r) => json!({"topics": r.errors.iter().map(|t| json!({
                "name": t.topic,
                "partitions": t.partitions.iter().map(|(p, e)| json!({"partitionIndex": p, "error": e.name()})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>()}),
            Response::OffsetFetch(r) => {
                let topics: Vec<Value> = r
                    .offsets
                    .iter()
                    .map(|(topic, ps)| {
                        json!({"name": topic, "partitions": ps.iter().map(|(p, d)| json!({
                            "partitionIndex": p,
                            "committedOffset": d.offset,
                            "committedLeaderEpoch": d.leader_epoch.unwrap_or(-1),
                            "metadata": d.metadata,
                            "error": d.error_code.name(),
                        })).collect::<Vec<_>>()})
                    })
                    .collect();
                json!({"groups": [{"groupId": self.fetch_group(), "topics": topics, "error": r.error_code.name()}]})
            }
            Response::JoinGroup(r) => {
                let mut members: Vec<Value> = r
                    .members
                    .iter()
                    .map(|m| {
                        json!({"memberId": self.sym(&m.member_id), "groupInstanceId": m.group_instance_id,
                           "metadata": render_subscription(&m.metadata)})
                    })
                    .collect();
                members.sort_by_key(|m| m["memberId"].to_string());
                json!({"error": r.error_code.name(), "generationId": r.generation_id, "protocolType": r.protocol_type,
                   "protocolName": r.protocol_name, "leader": self.sym(&r.leader_id),
                   "skipAssignment": r.skip_assignment, "memberId": self.sym(&r.member_id), "members": members})
            }
            Response::SyncGroup(r) => json!({"error": r.error_code.name(), "protocolType": r.protocol_type,
                "protocolName": r.protocol_name, "assignment": render_assignment_bytes(&r.assignment)}),
            Response::Heartbeat(r) => json!({"error": r.error_code.name()}),
            Response::LeaveGroup(r) => {
                json!({"error": r.error_code.name(), "members": r.members.iter().map(|m|
                json!({"memberId": self.sym(&m.member_id), "groupInstanceId": m.group_instance_id,
                       "error": m.error_code.name()})).collect::<Vec<_>>()})
            }
            other => json!(format!("{other:?}")),
        }
    }

    /// The group of the step being rendered (OffsetFetch answers carry none).
    fn fetch_group(&self) -> String {
        let step = &self.scenario["steps"][self.current_step];
        step.get("group")
            .and_then(Value::as_str)
            .unwrap_or(self.scenario["group"].as_str().unwrap())
            .to_owned()
    }

    fn on_answers(&mut self, answers: Vec<Answer>) {
        for a in answers {
            self.on_response(a.at_ms, a.step, a.response);
        }
    }

    fn on_response(&mut self, now: i64, step: usize, response: Response) {
        let Some((op, member, ctx)) = self.requests.get(&step).cloned() else { return };
        match &response {
            Response::ConsumerGroupHeartbeat(r) if r.error_code == ErrorCode::None => {
                if let Some(id) = &r.member_id
                    && !member.is_empty()
                    && *id != member
                {
                    self.bind(&member, id);
                }
                let sym = self.members.entry(member.clone()).or_default();
                sym.epoch = r.member_epoch;
                if let Some(a) = &r.assignment {
                    sym.last_assignment = a.clone();
                }
            }
            Response::JoinGroup(r) => {
                if r.error_code == ErrorCode::MemberIdRequired
                    || (r.error_code == ErrorCode::None && !r.member_id.is_empty())
                {
                    self.bind(&member, &r.member_id);
                }
                if r.error_code == ErrorCode::None {
                    let sym = self.members.entry(member.clone()).or_default();
                    sym.last_join = Some((
                        r.generation_id,
                        r.protocol_type.as_deref().map(str::to_owned),
                        r.protocol_name.as_deref().map(str::to_owned),
                    ));
                    sym.epoch = r.generation_id;
                }
            }
            _ => {}
        }
        let rendered = self.render(&response, ctx);
        assert!(
            self.answered.insert(step, rendered.clone()).is_none(),
            "request of step {step} answered twice"
        );
        if step != self.current_step || now != self.current_at {
            self.delayed.push((now, step, rendered));
        }
        let _ = op;
    }
}

fn sorted(ps: &[i32]) -> Vec<i32> {
    let mut ps = ps.to_vec();
    ps.sort_unstable();
    ps
}

// ---------------------------------------------------------------------------------
// Group summaries.

/// The group after a step, in the expected file's shape (the compared fields only).
fn consumer_view(r: &Replay<'_>, cg: &ConsumerGroupSnapshot) -> Value {
    let mut members = Map::new();
    for m in &cg.members {
        let meta = &m.metadata;
        let mut names = meta.subscribed_topic_names.clone();
        names.sort();
        members.insert(
            r.sym(&m.member_id),
            json!({
                "member_epoch": m.member_epoch,
                "previous_member_epoch": m.previous_member_epoch,
                "state": m.state.as_str(),
                "instance_id": meta.instance_id,
                "rack_id": meta.rack_id,
                "client_id": meta.client_id,
                "client_host": meta.client_host,
                "rebalance_timeout_ms": meta.rebalance_timeout_ms,
                "server_assignor": meta.server_assignor,
                "subscribed_topic_names": names,
                "subscribed_topic_regex": meta.subscribed_topic_regex.clone().unwrap_or_default(),
                "assigned": r.tps_map(&m.assigned),
                "pending_revocation": r.tps_map(&m.pending_revocation),
                "target": m.target.as_ref().map(|t| r.tps_map(t)),
            }),
        );
    }
    let statics: BTreeMap<String, String> =
        cg.static_members.iter().map(|(i, m)| (i.clone(), r.sym(m))).collect();
    let regexes: BTreeMap<String, Vec<String>> = cg.regexes.iter().cloned().collect();
    json!({
        "type": "consumer",
        "state": cg.state.as_str(),
        "group_epoch": cg.group_epoch,
        "assignment_epoch": cg.assignment_epoch,
        "metadata_hash": cg.metadata_hash,
        "preferred_assignor": cg.preferred_assignor,
        "subscription_type": cg.subscription_type.as_str(),
        "members": members,
        "static_members": statics,
        "regexes": regexes,
    })
}

fn group_view(r: &Replay<'_>, group: &str) -> Value {
    let core = &r.driver.core;
    if let Some(cg) = core.consumer_group(group) {
        return consumer_view(r, &cg);
    }
    let Some(g) = core.group(group) else { return json!({"exists": false}) };
    let members: BTreeSet<String> = g.members.iter().map(|m| r.sym(&m.member_id)).collect();
    let pending: BTreeSet<String> = g.pending_members.iter().map(|m| r.sym(m)).collect();
    json!({"type": "classic", "state": g.state.as_str(), "generation": g.generation_id,
           "protocol_type": g.protocol_type, "protocol": g.protocol_name,
           "leader": g.leader_id.as_deref().map(|l| r.sym(l)), "members": members, "pending": pending})
}

/// Expected regexes, resolved ones only: regex to topics.
fn expected_regexes(exp: &Value) -> Value {
    let mut out: BTreeMap<String, Value> = BTreeMap::new();
    if let Some(m) = exp.get("regexes").and_then(Value::as_object) {
        for (k, v) in m {
            if let Some(t) = v.get("topics") {
                out.insert(k.clone(), t.clone());
            }
        }
    }
    json!(out)
}

const MEMBER_FIELDS: &[&str] = &["member_epoch", "state", "assigned", "pending_revocation", "target"];
const MEMBER_METADATA_FIELDS: &[&str] = &[
    "previous_member_epoch",
    "instance_id",
    "rack_id",
    "client_id",
    "client_host",
    "rebalance_timeout_ms",
    "server_assignor",
    "subscribed_topic_names",
    "subscribed_topic_regex",
];

fn canon_names(v: &Value) -> Value {
    match v {
        Value::Array(a) => {
            let mut a = a.clone();
            a.sort_by_key(Value::to_string);
            Value::Array(a)
        }
        other => other.clone(),
    }
}

/// What a partition map of the expected file or of ours holds: `{"foo": [0, 1]}`.
fn partitions(v: &Value) -> BTreeSet<(String, i64)> {
    let mut out = BTreeSet::new();
    if let Some(m) = v.as_object() {
        for (t, ps) in m {
            for p in ps.as_array().unwrap() {
                out.insert((t.clone(), p.as_i64().unwrap()));
            }
        }
    }
    out
}

/// Per partition, the member whose target holds it.
fn target_owners(group: &Value) -> BTreeMap<(String, i64), String> {
    let mut out = BTreeMap::new();
    if let Some(m) = group.get("members").and_then(Value::as_object) {
        for (id, member) in m {
            for tp in partitions(&member["target"]) {
                out.insert(tp, id.clone());
            }
        }
    }
    out
}

fn moved(before: &BTreeMap<(String, i64), String>, after: &BTreeMap<(String, i64), String>) -> usize {
    after.iter().filter(|(tp, owner)| before.get(*tp) != Some(*owner)).count()
}

/// Compares a consumer group with Kafka's. `relaxed`: uniform targets may differ,
/// their properties may not. Returns the differences.
fn compare_consumer_group(
    r: &Replay<'_>,
    exp: &Value,
    mine: &Value,
    relaxed: bool,
    prev: (&Value, &Value),
) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["type", "state", "group_epoch", "assignment_epoch", "subscription_type"] {
        if exp.get(key) != mine.get(key) {
            out.push(format!("group {key}: expected {}, actual {}", exp[key], mine[key]));
        }
    }
    // The assignor most members name; a tie is broken by Java's hash-map order.
    let mut named: BTreeMap<String, usize> = BTreeMap::new();
    for m in mine["members"].as_object().into_iter().flat_map(Map::values) {
        if let Some(a) = m["server_assignor"].as_str() {
            *named.entry(a.to_owned()).or_default() += 1;
        }
    }
    let top = named.values().copied().max().unwrap_or(0);
    let tie = named.values().filter(|n| **n == top).count() > 1;
    if !tie && exp.get("preferred_assignor") != mine.get("preferred_assignor") {
        out.push(format!(
            "group preferred_assignor: expected {}, actual {}",
            exp["preferred_assignor"], mine["preferred_assignor"]
        ));
    }
    let statics_exp = exp.get("static_members").cloned().unwrap_or(json!({}));
    if statics_exp != mine["static_members"] {
        out.push(format!("static members: expected {statics_exp}, actual {}", mine["static_members"]));
    }
    let regexes_exp = expected_regexes(exp);
    if regexes_exp != mine["regexes"] {
        out.push(format!("resolved regexes: expected {regexes_exp}, actual {}", mine["regexes"]));
    }
    // The metadata hash: only zero / non-zero, and changed / unchanged.
    let hash = |g: &Value| {
        g.get("metadata_hash")
            .and_then(Value::as_i64)
            .or_else(|| g.get("metadata_hash").and_then(Value::as_u64).map(|h| h as i64))
    };
    let (e, m) = (hash(exp), hash(mine));
    if e.map(|h| h == 0) != m.map(|h| h == 0) {
        out.push(format!(
            "metadata hash zero: expected {:?}, actual {:?}",
            e.map(|h| h == 0),
            m.map(|h| h == 0)
        ));
    }
    let (pe, pm) = (hash(prev.0), hash(prev.1));
    if pe.is_some() && pm.is_some() && (pe != e) != (pm != m) {
        out.push(format!("metadata hash changed: expected {}, actual {}", pe != e, pm != m));
    }
    let empty = Map::new();
    let em = exp["members"].as_object().unwrap_or(&empty);
    let mm = mine["members"].as_object().unwrap_or(&empty);
    let ek: BTreeSet<&String> = em.keys().collect();
    let mk: BTreeSet<&String> = mm.keys().collect();
    if ek != mk {
        out.push(format!("members: expected {ek:?}, actual {mk:?}"));
        return out;
    }
    for (id, e) in em {
        let m = &mm[id];
        for key in MEMBER_FIELDS.iter().chain(MEMBER_METADATA_FIELDS) {
            let (ev, mv) = (canon_names(&e[*key]), canon_names(&m[*key]));
            let partition_field = matches!(*key, "assigned" | "pending_revocation" | "target");
            if ev == mv {
                continue;
            }
            if relaxed && partition_field {
                // Which partitions is Java's hash order; whether there are any is not.
                let empty_e = ev.is_null() || ev.as_object().is_some_and(Map::is_empty);
                let empty_m = mv.is_null() || mv.as_object().is_some_and(Map::is_empty);
                if empty_e == empty_m && ev.is_null() == mv.is_null() {
                    continue;
                }
            }
            out.push(format!("member {id} {key}: expected {ev}, actual {mv}"));
        }
    }
    if relaxed {
        out.extend(uniform_properties(r, exp, mine, prev));
    }
    out
}

/// The properties of uniform targets that do not depend on Java's iteration order.
fn uniform_properties(r: &Replay<'_>, exp: &Value, mine: &Value, prev: (&Value, &Value)) -> Vec<String> {
    let mut out = Vec::new();
    let members = mine["members"].as_object().unwrap();
    // Only subscribed topics, and nothing owned twice.
    let mut owned: BTreeMap<(String, i64), String> = BTreeMap::new();
    for (id, m) in members {
        let subscribed = r.subscribed_topics(mine, m);
        for (t, _) in partitions(&m["target"]) {
            if !subscribed.contains(&t) {
                out.push(format!("member {id}: target holds {t}, which it does not subscribe to"));
            }
        }
        for tp in partitions(&m["assigned"]).into_iter().chain(partitions(&m["pending_revocation"])) {
            if let Some(other) = owned.insert(tp.clone(), id.clone()) {
                out.push(format!("{tp:?} owned by {other} and {id}"));
            }
        }
    }
    // While the group is Assigning its targets are those of the last computation
    // less the members gone since, whose sizes may differ: nothing more to compare.
    let fresh = |g: &Value| g["state"] != "Assigning" && g["state"] != "Empty";
    if !fresh(exp) {
        return out;
    }
    // Every partition of a subscribed topic in exactly one target (Kafka's
    // finding 3 aside: compare with what Kafka's targets cover).
    let cover = |g: &Value| -> (usize, BTreeSet<(String, i64)>) {
        let mut all = BTreeSet::new();
        let mut n = 0;
        for m in g["members"].as_object().unwrap().values() {
            let ps = partitions(&m["target"]);
            n += ps.len();
            all.extend(ps);
        }
        (n, all)
    };
    let (ne, ce) = cover(exp);
    let (nm, cm) = cover(mine);
    if nm != cm.len() {
        out.push(format!("a partition is in two targets: {nm} entries, {} partitions", cm.len()));
    }
    if ne != nm || ce != cm {
        out.push(format!("targets cover {:?}, Kafka's {:?}", cm, ce));
    }
    // The same target sizes, overall and per topic.
    let sizes = |g: &Value| -> (Vec<usize>, BTreeMap<String, Vec<usize>>) {
        let mut total = Vec::new();
        let mut per_topic: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for m in g["members"].as_object().unwrap().values() {
            let ps = partitions(&m["target"]);
            total.push(ps.len());
            let mut count: BTreeMap<String, usize> = BTreeMap::new();
            for (t, _) in ps {
                *count.entry(t).or_default() += 1;
            }
            for (t, c) in count {
                per_topic.entry(t).or_default().push(c);
            }
        }
        total.sort_unstable();
        for v in per_topic.values_mut() {
            v.sort_unstable();
        }
        (total, per_topic)
    };
    let (se, sm) = (sizes(exp), sizes(mine));
    if se.0 != sm.0 {
        out.push(format!("target sizes: expected {:?}, actual {:?}", se.0, sm.0));
    }
    // Stickiness: as many partitions changed owner as in Kafka's.
    let (me, mm) = (
        moved(&target_owners(prev.0), &target_owners(exp)),
        moved(&target_owners(prev.1), &target_owners(mine)),
    );
    if fresh(prev.0) && me != mm {
        out.push(format!("partitions moved between targets: expected {me}, actual {mm}"));
    }
    out
}

impl Replay<'_> {
    /// The topic names a member (of our group view) subscribes to: names and
    /// resolved regex topics.
    fn subscribed_topics(&self, group: &Value, member: &Value) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = member["subscribed_topic_names"]
            .as_array()
            .map(|a| a.iter().map(|t| t.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default();
        if let Some(regex) = member["subscribed_topic_regex"].as_str().filter(|r| !r.is_empty())
            && let Some(topics) = group["regexes"].get(regex).and_then(Value::as_array)
        {
            out.extend(topics.iter().map(|t| t.as_str().unwrap().to_owned()));
        }
        out
    }
}

fn compare_classic_group(exp: &Value, mine: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["type", "state", "generation", "protocol_type", "protocol", "leader"] {
        if exp.get(key) != mine.get(key) {
            out.push(format!("group {key}: expected {}, actual {}", exp[key], mine[key]));
        }
    }
    let keys = |v: &Value| -> BTreeSet<String> {
        match v {
            Value::Object(m) => m.keys().cloned().collect(),
            Value::Array(a) => a.iter().map(|x| x.as_str().unwrap().to_owned()).collect(),
            _ => BTreeSet::new(),
        }
    };
    for key in ["members", "pending"] {
        let (e, m) = (keys(&exp[key]), keys(&mine[key]));
        if e != m {
            out.push(format!("group {key}: expected {e:?}, actual {m:?}"));
        }
    }
    out
}

/// Responses whose assignments depend on uniform's choices: the partitions masked.
fn mask_partitions(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut o = Map::new();
            for (k, x) in m {
                let masked = match k.as_str() {
                    "assignment" | "targetAssignment" if x.is_object() => json!("<partitions>"),
                    _ => mask_partitions(x),
                };
                o.insert(k.clone(), masked);
            }
            Value::Object(o)
        }
        Value::Array(a) => Value::Array(a.iter().map(mask_partitions).collect()),
        other => other.clone(),
    }
}

/// Lists compared as sets (the README sorts them; a LeaveGroup's members stay in
/// request order): sorted by id, then whole.
fn normalize(v: &Value, op: &str) -> Value {
    match v {
        Value::Object(m) => {
            let mut o = Map::new();
            for (k, x) in m {
                let mut x = normalize(x, op);
                let set = match k.as_str() {
                    "members" => op != "leave",
                    "groups" | "subscribedTopicNames" | "results" => true,
                    // Offsets by topic name and partition (Kafka answers in request
                    // or hash-map order, the core by name).
                    "topics" | "partitions" => matches!(op, "commit" | "fetch"),
                    _ => false,
                };
                if set && let Value::Array(a) = &mut x {
                    let id = |v: &Value| {
                        let id = ["memberId", "groupId", "name", "partitionIndex"]
                            .iter()
                            .find_map(|k| v.get(*k))
                            .map(|v| v.as_i64().map_or_else(|| v.to_string(), |n| format!("{n:012}")));
                        (id.unwrap_or_default(), v.to_string())
                    };
                    a.sort_by_key(id);
                }
                o.insert(k.clone(), x);
            }
            Value::Object(o)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| normalize(x, op)).collect()),
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------------
// Records, for the soft report.

fn record_kind(record: &Record) -> &'static str {
    match record {
        Record::Modern(c) => c.type_name(),
        Record::Group(_) | Record::GroupTombstone { .. } => "GroupMetadata",
        Record::Offset { .. } | Record::OffsetTombstone { .. } => "OffsetCommit",
        #[allow(unreachable_patterns)]
        _ => "other",
    }
}

fn kinds(list: impl Iterator<Item = String>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for k in list {
        *m.entry(k).or_default() += 1;
    }
    m
}

// ---------------------------------------------------------------------------------

/// Replays one scenario against one expected variant.
pub(crate) fn replay(scenario: &Value, expected: &Value) -> Outcome {
    let (config, failing, unmapped) = config_of(scenario);
    let mut core = CoordinatorCore::new(config);
    if failing {
        core.register_server_assignor(Arc::new(FailingAssignor));
    }
    let mut cluster = Cluster { version: 1, ..Cluster::default() };
    let mut names = HashMap::new();
    for t in scenario["topics"].as_array().unwrap() {
        cluster.add_topic(t, &mut names);
    }
    if let Some(b) = scenario.get("brokers") {
        cluster.set_brokers(b);
    }
    core.update_metadata_image(Arc::new(cluster.image()));
    let mut timers = TimerQueue::new();
    timers.apply(core.start(0).timers);
    let mut r = Replay {
        scenario,
        driver: CoreDriver { core, timers },
        cluster,
        names,
        members: BTreeMap::new(),
        real_to_sym: HashMap::new(),
        sym_to_real: HashMap::new(),
        requests: HashMap::new(),
        answered: HashMap::new(),
        delayed: Vec::new(),
        group_configs: HashMap::new(),
        current_step: 0,
        current_at: 0,
    };
    let default_group = scenario["group"].as_str().unwrap().to_owned();
    let steps = scenario["steps"].as_array().unwrap();
    let expected_steps = expected["steps"].as_array().unwrap();
    assert_eq!(steps.len(), expected_steps.len(), "steps of {}", scenario["name"]);
    let mut out = Outcome::default();
    out.failures.extend(unmapped.into_iter().map(|what| Failure { step: None, what }));
    let mut uniform_seen = false;
    // ORACLE848_TRACE=<part of a script name>: print what the replay saw.
    let trace = std::env::var("ORACLE848_TRACE")
        .is_ok_and(|t| scenario["name"].as_str().is_some_and(|n| n.contains(t.as_str())));
    // The previous step's group (expected, ours), per group id.
    let mut previous: HashMap<String, (Value, Value)> = HashMap::new();
    for (i, step) in steps.iter().enumerate() {
        let exp = &expected_steps[i];
        let at = step["at_ms"].as_i64().unwrap();
        let op = step["op"].as_str().unwrap().to_owned();
        let ctx = format!("step {i} ({op} at {at})");
        let fail = |out: &mut Outcome, what: String| {
            out.failures.push(Failure { step: Some(i), what: format!("{ctx}: {what}") })
        };
        r.current_step = i;
        r.current_at = -1;
        r.delayed.clear();
        // Timers due on the way, in deadline order.
        let (mut timer_records, mut answers) = (Vec::new(), Vec::new());
        while let Some((deadline, key)) = r.driver.timers.pop_due(at) {
            let fx = r.driver.core.fire_timer(deadline, &key);
            r.driver.process(deadline, fx, None, &mut timer_records, &mut answers);
        }
        r.on_answers(answers);
        r.current_at = at;
        let group = step.get("group").and_then(Value::as_str).unwrap_or(&default_group).to_owned();
        let append_error = step.get("append_error").and_then(Value::as_str).map(error_by_name);
        let mut step_records = Vec::new();
        match op.as_str() {
            "metadata" => {
                r.cluster.version += 1;
                if let Some(Value::Array(list)) = step.get("create") {
                    for t in list {
                        r.cluster.add_topic(t, &mut r.names);
                    }
                }
                if let Some(Value::Array(list)) = step.get("delete") {
                    for t in list {
                        r.cluster.topics.remove(t.as_str().unwrap());
                    }
                }
                if let Some(Value::Object(m)) = step.get("partitions") {
                    for (t, n) in m {
                        r.cluster.topics.get_mut(t).unwrap().1 = n.as_u64().unwrap() as u32;
                    }
                }
                if let Some(b) = step.get("brokers") {
                    r.cluster.set_brokers(b);
                }
                if let Some(v) = exp.get("image_version").and_then(Value::as_i64)
                    && v != r.cluster.version
                {
                    fail(&mut out, format!("image version {} (the oracle's {v})", r.cluster.version));
                }
                let image = Arc::new(r.cluster.image());
                r.driver.core.update_metadata_image(image);
            }
            "group_config" => {
                let entry = r.group_configs.entry(group.clone()).or_default();
                for (k, v) in step["config"].as_object().unwrap() {
                    let v = v.as_i64().unwrap() as i32;
                    match k.as_str() {
                        "consumer.session.timeout.ms" => entry.session_timeout_ms = Some(v),
                        "consumer.heartbeat.interval.ms" => entry.heartbeat_interval_ms = Some(v),
                        other => fail(&mut out, format!("group setting {other} is not mapped")),
                    }
                }
                let overrides = *entry;
                if let Err(e) = r.driver.core.set_group_config(&group, overrides) {
                    fail(&mut out, format!("group config refused: {e}"));
                }
            }
            "advance" => {}
            _ => {
                let Some((request, member, rctx, echo)) = r.build(step, &group) else {
                    panic!("unknown op {op}");
                };
                let masked = |v: &Value| {
                    let mut v = v.clone();
                    if uniform_seen && v["topicPartitions"].is_array() {
                        v["topicPartitions"] = json!("<partitions>");
                    }
                    v
                };
                if let (Some(mine), Some(theirs)) = (&echo, exp.get("request"))
                    && masked(mine) != masked(theirs)
                {
                    fail(
                        &mut out,
                        format!("the harness sent another request\n  oracle  {theirs}\n  harness {mine}"),
                    );
                }
                r.requests.insert(i, (op.clone(), member, rctx));
                let fx = r.driver.core.handle(at, RequestId(i as u64), request);
                let mut answers = Vec::new();
                r.driver.process(at, fx, append_error, &mut step_records, &mut answers);
                r.on_answers(answers);
            }
        }
        // The group after the step, and whether uniform's choices are in play.
        let exp_group = exp["group"].clone();
        let my_group = group_view(&r, &group);
        let default_assignor = r.driver.core.config().consumer.assignors[0].clone();
        if exp_group["type"] == "consumer" {
            let assignor =
                exp_group["preferred_assignor"].as_str().map_or(default_assignor.clone(), str::to_owned);
            let n = exp_group["members"].as_object().map_or(0, Map::len);
            if assignor == "uniform" && n > 1 {
                uniform_seen = true;
            }
        }
        // The step's own response.
        let mine = r.answered.get(&i).filter(|_| !r.delayed.iter().any(|d| d.1 == i)).cloned();
        let pending = exp.get("pending").and_then(Value::as_bool).unwrap_or(false);
        match (exp.get("response"), mine) {
            (Some(e), Some(m)) => {
                let (e, m) = (normalize(e, &op), normalize(&m, &op));
                if e != m && !(uniform_seen && mask_partitions(&e) == mask_partitions(&m)) {
                    fail(&mut out, format!("response\n  expected {e}\n  actual   {m}"));
                }
            }
            (Some(e), None) => fail(&mut out, format!("expected response {e}, got none (parked)")),
            (None, Some(m)) if pending => fail(&mut out, format!("expected pending, got response {m}")),
            (None, Some(m)) => fail(&mut out, format!("expected no response, got {m}")),
            (None, None) => {}
        }
        // Earlier requests answered during this step.
        let mut exp_delayed: Vec<(i64, i64, Value)> = exp
            .get("delayed")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|d| {
                        let op = d["op"].as_str().unwrap_or("");
                        (
                            d["at_ms"].as_i64().unwrap(),
                            d["step"].as_i64().unwrap(),
                            normalize(&d["response"], op),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut my_delayed: Vec<(i64, i64, Value)> = r
            .delayed
            .iter()
            .filter(|d| d.1 != i)
            .map(|d| (d.0, d.1 as i64, normalize(&d.2, steps[d.1]["op"].as_str().unwrap())))
            .collect();
        exp_delayed.sort_by_key(|d| (d.0, d.1));
        my_delayed.sort_by_key(|d| (d.0, d.1));
        let masked =
            |l: &[(i64, i64, Value)]| l.iter().map(|d| (d.0, d.1, mask_partitions(&d.2))).collect::<Vec<_>>();
        if exp_delayed != my_delayed && !(uniform_seen && masked(&exp_delayed) == masked(&my_delayed)) {
            fail(
                &mut out,
                format!(
                    "delayed answers\n  expected {}\n  actual   {}",
                    json!(exp_delayed.iter().map(|d| json!([d.0, d.1, d.2])).collect::<Vec<_>>()),
                    json!(my_delayed.iter().map(|d| json!([d.0, d.1, d.2])).collect::<Vec<_>>())
                ),
            );
        }
        // The group.
        let (prev_exp, prev_mine) = previous.get(&group).cloned().unwrap_or((json!({}), json!({})));
        let diffs = if exp_group.get("exists").is_some() || my_group.get("exists").is_some() {
            if exp_group.get("exists").is_some() != my_group.get("exists").is_some() {
                vec![format!("expected {exp_group}, actual {my_group}")]
            } else {
                Vec::new()
            }
        } else if exp_group["type"] == "consumer" && my_group["type"] == "consumer" {
            let exact = compare_consumer_group(&r, &exp_group, &my_group, false, (&prev_exp, &prev_mine));
            if exact.is_empty() || !uniform_seen {
                exact
            } else {
                compare_consumer_group(&r, &exp_group, &my_group, true, (&prev_exp, &prev_mine))
            }
        } else if exp_group["type"] == "classic" && my_group["type"] == "classic" {
            compare_classic_group(&exp_group, &my_group)
        } else {
            vec![format!("group type: expected {}, actual {}", exp_group["type"], my_group["type"])]
        };
        for d in diffs {
            fail(&mut out, format!("group: {d}"));
        }
        // Soft: the session, revocation and classic join and sync deadlines of the
        // members of both.
        if let (Some(deadlines), Some(members)) =
            (exp["group"].get("deadlines").and_then(Value::as_object), my_group["members"].as_object())
        {
            let mut diffs = Vec::new();
            for sym in members.keys().filter(|m| exp["group"]["members"].get(m.as_str()).is_some()) {
                let real: Arc<str> = Arc::from(r.sym_to_real.get(sym).map_or(sym.as_str(), String::as_str));
                let g: Arc<str> = Arc::from(group.as_str());
                for (name, key) in [
                    ("session", TimerKey::ConsumerSession(g.clone(), real.clone())),
                    ("rebalance", TimerKey::ConsumerRebalance(g.clone(), real.clone())),
                    ("join", TimerKey::ConsumerClassicJoin(g.clone(), real.clone())),
                    ("sync", TimerKey::ConsumerClassicSync(g.clone(), real.clone())),
                ] {
                    let theirs = deadlines.get(&format!("{name}:{sym}")).and_then(Value::as_i64);
                    let mine = r.driver.timers.deadline(&key);
                    if theirs != mine {
                        diffs.push(format!("{name}:{sym} {mine:?}, Kafka's {theirs:?}"));
                    }
                }
            }
            if !diffs.is_empty() {
                out.soft.push(format!("{ctx}: deadlines {}", diffs.join(", ")));
            }
        }
        if trace {
            let mine = r.answered.get(&i).cloned().unwrap_or(Value::Null);
            eprintln!("{ctx}: {step}\n  response {mine}\n  group    {my_group}");
            for d in r.delayed.iter().filter(|d| d.1 != i) {
                eprintln!("  delayed  {} {} {}", d.0, d.1, d.2);
            }
        }
        previous.insert(group.clone(), (exp_group, my_group));
        // Soft: the kinds and counts of records written, by the request (and the
        // regex resolution after it) and by timers.
        let mut exp_kinds: Vec<String> = exp
            .get("records")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|r| r["type"].as_str().unwrap().to_owned())
            .collect();
        if exp.get("append_failed").is_some() {
            exp_kinds.clear();
        }
        for t in exp.get("tasks").and_then(Value::as_array).into_iter().flatten() {
            exp_kinds.extend(
                t.get("records")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|r| r["type"].as_str().unwrap().to_owned()),
            );
        }
        let exp_kinds = kinds(exp_kinds.into_iter().filter(|k| k != "ConsumerGroupPartitionMetadata"));
        let my_kinds = kinds(step_records.iter().map(|r| record_kind(r).to_owned()));
        if exp_kinds != my_kinds {
            out.soft.push(format!("{ctx}: records {my_kinds:?}, Kafka's {exp_kinds:?}"));
        }
        let exp_timer_kinds = kinds(
            exp.get("timers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|t| t.get("error").is_none())
                .flat_map(|t| t.get("records").and_then(Value::as_array).cloned().unwrap_or_default())
                .map(|r| r["type"].as_str().unwrap().to_owned())
                .filter(|k| k != "ConsumerGroupPartitionMetadata"),
        );
        let my_timer_kinds = kinds(timer_records.iter().map(|r| record_kind(r).to_owned()));
        if exp_timer_kinds != my_timer_kinds {
            out.soft.push(format!("{ctx}: timer records {my_timer_kinds:?}, Kafka's {exp_timer_kinds:?}"));
        }
    }
    let exp_unanswered: BTreeSet<i64> = expected["unanswered"]
        .as_array()
        .map(|a| {
            a.iter().map(|u| u.get("step").and_then(Value::as_i64).or_else(|| u.as_i64()).unwrap()).collect()
        })
        .unwrap_or_default();
    let my_unanswered: BTreeSet<i64> =
        r.requests.keys().filter(|i| !r.answered.contains_key(i)).map(|i| *i as i64).collect();
    for step in exp_unanswered.symmetric_difference(&my_unanswered) {
        let what = if my_unanswered.contains(step) { "never answered" } else { "answered, Kafka never did" };
        out.failures.push(Failure { step: Some(*step as usize), what: format!("step {step}: {what}") });
    }
    out
}

/// Where the scripts and Kafka's answers are.
pub(crate) fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oracle-kip848")
}
