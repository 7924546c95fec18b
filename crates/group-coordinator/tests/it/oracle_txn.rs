//! Transactional-offset oracle replay: every script of
//! `tests/data/oracle-txn/scenarios` runs through the core with simulated time
//! (timers due by a step fire first, in deadline order; writes complete at once),
//! and its answers are compared with what Kafka 4.2.1's Java coordinator answered
//! (`tests/data/oracle-txn/expected`), as that README's "How to compare" says:
//!
//! - every answer, exactly: TxnOffsetCommit at its version, OffsetFetch (v9, one
//!   group), OffsetDelete, DeleteGroups, ListGroups, DescribeGroups, and the
//!   set-up APIs' outcomes (JoinGroup, SyncGroup, the heartbeats);
//! - the TxnOffsetCommit request as the script's version parses it (the
//!   recording echoes it), which checks that this replay drops what a version
//!   lacks as Kafka's converter does;
//! - the group after each step: kind and state, its committed offsets (offset,
//!   leader epoch, metadata) and every producer's pending ones.
//!
//! Records are compared only where our stores can match Kafka's log:
//!
//! - the OffsetCommit tombstones (OffsetDelete, DeleteGroups, expiration, topic
//!   deletion) and GroupMetadata tombstones Kafka writes are exactly ours, by key
//!   and count (a deleted topic's partition that is committed and pending gets two);
//! - a transactional batch: Kafka writes ordinary OffsetCommit records that its
//!   replay makes pending because of the batch's producer id; ours are
//!   `TxnOffset` records keyed by producer (storage keeps state by key, with no
//!   batch to carry the producer), compared by partition;
//! - a plain commit: Kafka's OffsetCommit records are our `Offset` records.
//!
//! Not compared, deliberately (`txn_apis.rs` explains the layout): Kafka writes
//! nothing for a marker, where ours writes a `TxnOffsetTombstone` per pending
//! offset it ends, an `Offset` record per offset it commits, and rewrites the
//! `TxnOffset` records a commit supersedes; a tombstone of pending offsets also
//! writes a `TxnOffsetTombstone` per producer. `commit_ms`, `record_offset` and
//! `marker_offset` describe Kafka's log offsets, which our stores do not have.
//!
//! A script whose replay stops at an op not replayed here is listed in
//! [`NOT_REPLAYED`], so the list only shrinks; a script replaying fewer steps
//! than its recording fails.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, MetadataImage, Record, Request, RequestId, Response,
    TimerQueue, TopicImage,
};
use group_types::{
    CommitMetadata, ConsumerGroupHeartbeatRequest, DeleteGroupsRequest, DescribeGroupsRequest, ErrorCode,
    GroupId, GroupInstanceId, InitializeShareGroupStateRequest, JoinGroupRequest, ListGroupsRequest,
    MemberAssignmentData, MemberId, OffsetCommitData, OffsetCommitRequest, OffsetDeleteRequest,
    OffsetFetchRequest, ProtocolMetadata, ShareGroupHeartbeatRequest, Subscription, SyncGroupRequest,
    TopicId, TransactionResult, TxnOffsetCommitRequest, WriteTxnMarkersRequest,
};
use serde_json::{Value, json};

fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oracle-txn")
}

fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The first producer id a script names; the next ones follow.
const FIRST_PRODUCER_ID: i64 = 1000;

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
    /// The step (and op) the replay stopped at, when an op is not replayed here.
    stopped: Option<(usize, String)>,
    /// Steps replayed.
    steps: usize,
}

struct Replay {
    core: CoordinatorCore,
    timers: TimerQueue,
    topics: BTreeMap<String, (TopicId, u32)>,
    version: i64,
    /// Classic member name -> the id its JoinGroup answer carried.
    members: HashMap<String, String>,
    /// Classic member name -> the static instance id it joined with.
    instances: HashMap<String, String>,
    /// Producer name -> producer id.
    producers: HashMap<String, i64>,
    /// JoinGroups answered later (by a timer): request -> member name.
    parked_joins: HashMap<RequestId, String>,
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
    /// records and share-state initializations kept.
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

    /// Sends `request`, returning its answer if the step gave one.
    fn send(&mut self, now: i64, request: Request, out: &mut StepOut) -> (RequestId, Option<Response>) {
        self.next_request += 1;
        let rid = RequestId(self.next_request);
        let fx = self.core.handle(now, rid, request);
        self.process(now, fx, out);
        let answer = out.answers.iter().position(|(id, _)| *id == rid).map(|at| out.answers.remove(at).1);
        (rid, answer)
    }

    fn request(&mut self, now: i64, request: Request, out: &mut StepOut) -> Response {
        self.send(now, request, out).1.expect("an answer in the step")
    }

    /// The id a script's member name stands for: a bound classic member's real
    /// id, any other string literally.
    fn member_id(&self, name: &str) -> String {
        self.members.get(name).cloned().unwrap_or_else(|| name.to_owned())
    }

    /// The name a member id is shown as (the inverse of [`Replay::member_id`]).
    fn member_name(&self, id: &str) -> String {
        let bound = self.members.iter().find(|(_, real)| real.as_str() == id);
        bound.map_or_else(|| id.to_owned(), |(name, _)| name.clone())
    }

    fn producer_id(&mut self, step: &Value) -> i64 {
        if let Some(id) = step["producer_id"].as_i64() {
            return id;
        }
        let name = step["producer"].as_str().unwrap().to_owned();
        let next = FIRST_PRODUCER_ID + self.producers.len() as i64;
        *self.producers.entry(name).or_insert(next)
    }

    /// The group summary as the oracle writes it, without the log offsets
    /// (`commit_ms`, `record_offset`) and the classic set-up fields.
    fn group(&self, id: &str) -> Value {
        let kind = if let Some(g) = self.core.share_group(id) {
            json!({"type": "share", "state": g.state})
        } else if let Some(cg) = self.core.consumer_group(id) {
            let members: BTreeMap<&str, i32> =
                cg.members.iter().map(|m| (m.member_id.as_str(), m.member_epoch)).collect();
            json!({
                "type": "consumer", "state": cg.state.as_str(), "group_epoch": cg.group_epoch,
                "assignment_epoch": cg.assignment_epoch, "members": members,
            })
        } else if let Some(g) = self.core.group(id) {
            json!({
                "type": "classic", "state": g.state.as_str(), "generation": g.generation_id,
                "protocol_type": g.protocol_type, "num_members": g.members.len(),
            })
        } else {
            return json!({"exists": false});
        };
        let mut committed: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
        for (tp, o) in self.core.group(id).map(|g| g.offsets).unwrap_or_default() {
            committed.entry(tp.topic.to_string()).or_default().insert(tp.partition.to_string(), offset(&o));
        }
        let mut pending: BTreeMap<String, BTreeMap<String, BTreeMap<String, Value>>> = BTreeMap::new();
        for (producer, tp, o) in self.core.pending_transactional_offsets(id) {
            pending
                .entry(producer.to_string())
                .or_default()
                .entry(tp.topic.to_string())
                .or_default()
                .insert(tp.partition.to_string(), offset(&o));
        }
        json!({"kind": kind, "committed": committed, "pending": pending})
    }
}

fn offset(o: &group_types::OffsetAndMetadata) -> Value {
    json!({"offset": o.offset, "leader_epoch": o.leader_epoch.unwrap_or(-1), "metadata": o.metadata.as_str()})
}

/// The recorded group summary, reduced to the fields [`Replay::group`] gives.
fn expected_group(g: &Value) -> Value {
    let kind = match g["type"].as_str() {
        Some("share") => json!({"type": "share", "state": g["state"]}),
        Some("consumer") => {
            let members: BTreeMap<&String, &Value> =
                g["members"].as_object().unwrap().iter().map(|(id, m)| (id, &m["member_epoch"])).collect();
            json!({
                "type": "consumer", "state": g["state"], "group_epoch": g["group_epoch"],
                "assignment_epoch": g["assignment_epoch"], "members": members,
            })
        }
        Some("classic") => json!({
            "type": "classic", "state": g["state"], "generation": g["generation"],
            "protocol_type": g["protocol_type"], "num_members": g["num_members"],
        }),
        _ => return json!({"exists": false}),
    };
    let offsets = |v: &Value| -> BTreeMap<String, BTreeMap<String, Value>> {
        v.as_object()
            .into_iter()
            .flatten()
            .map(|(topic, parts)| {
                let parts = parts
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(p, o)| {
                        let v = json!({"offset": o["offset"], "leader_epoch": o["leader_epoch"], "metadata": o["metadata"]});
                        (p.clone(), v)
                    })
                    .collect();
                (topic.clone(), parts)
            })
            .collect()
    };
    let o = &g["offsets"];
    let pending: BTreeMap<String, Value> = o["pending"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(producer, topics)| (producer.clone(), json!(offsets(topics))))
        .collect();
    json!({"kind": kind, "committed": offsets(&o["committed"]), "pending": pending})
}

/// A partition key of an offset record: `group topic-partition`.
fn key(group: &str, topic: &str, partition: i64) -> String {
    format!("{group} {topic}-{partition}")
}

/// Our records of the kinds compared, by what they stand for in Kafka's log.
#[derive(Debug, Default, PartialEq)]
struct RecordKeys {
    /// OffsetCommit tombstones, sorted (a key may repeat).
    offset_tombstones: Vec<String>,
    /// GroupMetadata tombstones, sorted.
    group_tombstones: Vec<String>,
    /// OffsetCommit records with a value: a plain commit's.
    offsets: Vec<String>,
    /// A transactional batch's records (ours: `TxnOffset`).
    txn_offsets: Vec<String>,
    /// The group records (classic metadata and the modern kinds' records) with
    /// their sub-keys, in order, runs of one kind sorted as the recording sorts them.
    groups: Vec<String>,
}

impl RecordKeys {
    fn sorted(mut self) -> RecordKeys {
        for v in [
            &mut self.offset_tombstones,
            &mut self.group_tombstones,
            &mut self.offsets,
            &mut self.txn_offsets,
        ] {
            v.sort();
        }
        let mut i = 0;
        while i < self.groups.len() {
            let kind = |k: &String| k.split(' ').next().map(str::to_owned);
            let j = i + self.groups[i..].iter().take_while(|k| kind(k) == kind(&self.groups[i])).count();
            self.groups[i..j].sort();
            i = j;
        }
        self
    }

    fn ours(records: &[Record]) -> RecordKeys {
        let mut keys = RecordKeys::default();
        for r in records {
            match r {
                Record::OffsetTombstone { group_id, partition } => {
                    keys.offset_tombstones.push(key(group_id, &partition.topic, partition.partition.into()));
                }
                Record::GroupTombstone { group_id } => {
                    keys.group_tombstones.push(group_id.to_string());
                    keys.groups.push(group_key("GroupMetadata", "", true));
                }
                Record::Group(_) => keys.groups.push(group_key("GroupMetadata", "", false)),
                Record::Modern(m) => {
                    keys.groups.push(group_key(m.type_name(), &m.sub_key(), m.is_tombstone()));
                }
                Record::Offset { group_id, partition, .. } => {
                    keys.offsets.push(key(group_id, &partition.topic, partition.partition.into()));
                }
                Record::TxnOffset(t) if !t.superseded => {
                    keys.txn_offsets.push(key(&t.group_id, &t.partition.topic, t.partition.partition.into()));
                }
                _ => {}
            }
        }
        keys.sorted()
    }

    /// Kafka's records of a step: those of a transactional batch when `txn`.
    fn kafka(records: &[&Value], txn: bool) -> RecordKeys {
        let mut keys = RecordKeys::default();
        for r in records {
            let k = &r["key"];
            let tombstone = r["value"].is_null();
            match (r["type"].as_str().unwrap(), tombstone) {
                ("OffsetCommit", true) => keys.offset_tombstones.push(offset_key(k)),
                ("OffsetCommit", false) if txn => keys.txn_offsets.push(offset_key(k)),
                ("OffsetCommit", false) => keys.offsets.push(offset_key(k)),
                ("GroupMetadata", true) => {
                    keys.group_tombstones.push(k["group"].as_str().unwrap().to_owned());
                    keys.groups.push(group_key("GroupMetadata", "", true));
                }
                (kind, _) => {
                    let sub = k.get("memberId").and_then(Value::as_str).unwrap_or("");
                    keys.groups.push(group_key(kind, sub, tombstone));
                }
            }
        }
        keys.sorted()
    }
}

/// A group record as compared: its kind, its member (if keyed by one), and
/// whether it is a tombstone.
fn group_key(kind: &str, member: &str, tombstone: bool) -> String {
    let mut out = kind.to_owned();
    if !member.is_empty() {
        out = format!("{out} {member}");
    }
    if tombstone {
        out.push_str(" (tombstone)");
    }
    out
}

fn offset_key(k: &Value) -> String {
    key(k["group"].as_str().unwrap(), k["topic"].as_str().unwrap(), k["partition"].as_i64().unwrap())
}

/// The partitions of `group` whose recorded committed offset is new or another
/// in `after` than in `before` (summaries' `committed`), as record keys.
fn changed_offsets(group: &str, before: &Value, after: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (topic, parts) in after.as_object().into_iter().flatten() {
        for (p, o) in parts.as_object().into_iter().flatten() {
            if before[topic][p] != *o {
                out.push(key(group, topic, p.parse().unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Every record Kafka wrote in a step: its timers', its own, its writes'.
fn expected_records(exp: &Value) -> Vec<&Value> {
    let timers = exp["timers"].as_array().into_iter().flatten().flat_map(|t| t["records"].as_array());
    let writes = exp["writes"].as_array().into_iter().flatten().flat_map(|w| w["records"].as_array());
    let own = exp["records"].as_array();
    timers.chain(own).chain(writes).flatten().collect()
}

/// A response's `topics` list (`name`, `partitions` with `partitionIndex`),
/// topics by name and partitions by index, as the recording sorts fetches.
fn sorted_topics(v: &Value) -> Value {
    let mut topics: Vec<Value> = v.as_array().cloned().unwrap_or_default();
    for t in &mut topics {
        if let Some(p) = t["partitions"].as_array_mut() {
            p.sort_by_key(|p| p["partitionIndex"].as_i64());
        }
    }
    topics.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    json!(topics)
}

fn config_of(scenario: &Value) -> CoordinatorConfig {
    let mut config = CoordinatorConfig::default();
    config.share.enabled = true;
    for (k, v) in scenario["config"].as_object().into_iter().flatten() {
        let n = v.as_i64().unwrap();
        match k.as_str() {
            "offsets.retention.minutes" => config.offset_retention_ms = n * 60_000,
            "offsets.retention.check.interval.ms" => config.offsets_retention_check_interval_ms = n,
            other => panic!("broker setting {other} is not mapped"),
        }
    }
    config
}

/// The TxnOffsetCommit a step sends, as its version parses it.
fn txn_commit_request(r: &mut Replay, step: &Value, group: &str) -> TxnOffsetCommitRequest {
    let version = step["version"].as_i64().unwrap_or(5) as i16;
    let producer_id = r.producer_id(step);
    let producer = step["producer"].as_str().unwrap_or_default();
    let mut req = TxnOffsetCommitRequest {
        transactional_id: format!("txn-{producer}"),
        group_id: GroupId::from(group),
        producer_id,
        producer_epoch: step["producer_epoch"].as_i64().unwrap_or(0) as i16,
        api_version: version,
        ..TxnOffsetCommitRequest::default()
    };
    if version >= 3 {
        let member = step["member"].as_str().or(step["member_id"].as_str()).unwrap_or("");
        req.member_id = MemberId::from(r.member_id(member).as_str());
        req.generation_id = step["generation"].as_i64().unwrap_or(-1) as i32;
        req.group_instance_id = step["instance"].as_str().map(GroupInstanceId::from);
    }
    for o in step["offsets"].as_array().unwrap() {
        let o = o.as_array().unwrap();
        let metadata = match o.get(3) {
            None => Some(CommitMetadata::empty()),
            Some(Value::Null) => None,
            Some(m) => Some(CommitMetadata::from(m.as_str().unwrap())),
        };
        let epoch = o.get(4).and_then(Value::as_i64).unwrap_or(-1) as i32;
        let data = OffsetCommitData {
            offset: o[2].as_i64().unwrap(),
            leader_epoch: (version >= 2 && epoch >= 0).then_some(epoch),
            metadata,
            commit_timestamp: None,
        };
        req = req.with_offset(o[0].as_str().unwrap(), o[1].as_i64().unwrap() as i32, data);
    }
    req
}

/// The request's JSON at its version, as the recording echoes it.
fn txn_commit_echo(r: &Replay, req: &TxnOffsetCommitRequest) -> Value {
    let v = req.api_version;
    let topics: Vec<Value> = req
        .offsets
        .iter()
        .map(|t| {
            let partitions: Vec<Value> = t
                .partitions
                .iter()
                .map(|(p, d)| {
                    let mut e = json!({"partitionIndex": p, "committedOffset": d.offset, "committedMetadata": d.metadata.as_ref().map(CommitMetadata::as_str)});
                    if v >= 2 {
                        e["committedLeaderEpoch"] = json!(d.leader_epoch.unwrap_or(-1));
                    }
                    e
                })
                .collect();
            json!({"name": t.topic, "partitions": partitions})
        })
        .collect();
    let mut echo = json!({
        "transactionalId": req.transactional_id, "groupId": req.group_id.as_str(),
        "producerId": req.producer_id, "producerEpoch": req.producer_epoch, "topics": topics, "version": v,
    });
    if v >= 3 {
        echo["generationId"] = json!(req.generation_id);
        echo["memberId"] = json!(r.member_name(req.member_id.as_str()));
        echo["groupInstanceId"] = json!(req.group_instance_id.as_ref().map(|i| i.as_str()));
    }
    echo
}

/// A JoinGroup answer as the recording shows it (ids by member name, no metadata).
fn join_answer(r: &Replay, resp: &group_types::JoinGroupResponse) -> Value {
    let members: Vec<Value> = resp
        .members
        .iter()
        .map(|m| json!({"memberId": r.member_name(m.member_id.as_str()), "groupInstanceId": m.group_instance_id.as_ref().map(|i| i.as_str())}))
        .collect();
    json!({
        "error": resp.error_code.name(), "generationId": resp.generation_id,
        "protocolType": resp.protocol_type.as_ref().map(|p| p.as_str()),
        "protocolName": resp.protocol_name.as_ref().map_or("", |p| p.as_str()),
        "leader": r.member_name(resp.leader_id.as_str()), "skipAssignment": resp.skip_assignment,
        "memberId": r.member_name(resp.member_id.as_str()), "members": members,
    })
}

fn replay(scenario: &Value, expected: &Value) -> Outcome {
    let mut r = Replay {
        core: CoordinatorCore::new(config_of(scenario)),
        timers: TimerQueue::new(),
        topics: BTreeMap::new(),
        version: 1,
        members: HashMap::new(),
        instances: HashMap::new(),
        producers: HashMap::new(),
        parked_joins: HashMap::new(),
        next_request: 1_000,
    };
    for t in scenario["topics"].as_array().unwrap() {
        let id: TopicId = t["id"].as_str().unwrap().parse().unwrap();
        r.topics
            .insert(t["name"].as_str().unwrap().to_owned(), (id, t["partitions"].as_u64().unwrap() as u32));
    }
    r.core.update_metadata_image(Arc::new(r.image()));
    let start = r.core.start(0);
    r.timers.apply(start.timers);
    let default_group = scenario["group"].as_str().unwrap().to_owned();
    let steps = scenario["steps"].as_array().unwrap();
    let expected_steps = expected["steps"].as_array().unwrap();
    let mut outcome = Outcome::default();
    // Group -> its recorded committed offsets after the last step that showed it.
    let mut last_committed: HashMap<String, Value> = HashMap::new();
    if steps.len() != expected_steps.len() {
        outcome.failures.push(Failure {
            step: 0,
            what: format!("{} steps scripted, {} recorded", steps.len(), expected_steps.len()),
        });
    }
    for (i, (step, exp)) in steps.iter().zip(expected_steps).enumerate() {
        let mut failures = Vec::new();
        let mut fail = |what: String| failures.push(what);
        let at = step["at_ms"].as_i64().unwrap();
        let mut out = StepOut::default();
        while let Some((deadline, key)) = r.timers.pop_due(at) {
            let fx = r.core.fire_timer(deadline, &key);
            r.process(deadline, fx, &mut out);
        }
        let group = step["group"].as_str().unwrap_or(&default_group).to_owned();
        let op = step["op"].as_str().unwrap();
        match op {
            "txn_commit" => {
                let req = txn_commit_request(&mut r, step, &group);
                let echo = txn_commit_echo(&r, &req);
                if echo != exp["request"] {
                    fail(format!("request: sent {echo}, recorded {}", exp["request"]));
                }
                let Response::TxnOffsetCommit(resp) = r.request(at, Request::TxnOffsetCommit(req), &mut out)
                else {
                    panic!("another answer")
                };
                let topics: Vec<Value> = resp
                    .errors
                    .iter()
                    .map(|t| {
                        let p: Vec<Value> = t
                            .partitions
                            .iter()
                            .map(|(p, code)| json!({"partitionIndex": p, "error": code.name()}))
                            .collect();
                        json!({"name": t.topic, "partitions": p})
                    })
                    .collect();
                let got = json!({ "topics": topics });
                if got != exp["response"] {
                    fail(format!("txn_commit: got {got}, want {}", exp["response"]));
                }
            }
            "end_txn" => {
                let result = match step["result"].as_str() {
                    Some("COMMIT") => TransactionResult::Commit,
                    Some("ABORT") => TransactionResult::Abort,
                    other => panic!("result {other:?}"),
                };
                let mut req = WriteTxnMarkersRequest::one(r.producer_id(step), result, &[0]);
                req.markers[0].producer_epoch = step["producer_epoch"].as_i64().unwrap_or(0) as i16;
                let Response::WriteTxnMarkers(resp) = r.request(at, Request::from(req), &mut out) else {
                    panic!("another answer")
                };
                if let Some(bad) = resp.iter().find(|(_, _, _, code)| !code.is_ok()) {
                    fail(format!("end_txn: {bad:?}"));
                }
            }
            "fetch" => {
                let topics = step["topics"].as_object().map(|t| {
                    t.iter()
                        .map(|(name, p)| {
                            let parts = p.as_array().unwrap().iter().map(|p| p.as_i64().unwrap() as i32);
                            (name.clone(), parts.collect())
                        })
                        .collect()
                });
                let member_id = step["member_id"].as_str().map(|m| MemberId::from(r.member_id(m).as_str()));
                let req = OffsetFetchRequest {
                    group_id: GroupId::from(group.as_str()),
                    topics,
                    require_stable: step["require_stable"].as_bool().unwrap_or(false),
                    member_epoch: member_id.as_ref().map(|_| step["epoch"].as_i64().unwrap_or(-1) as i32),
                    member_id,
                };
                let Response::OffsetFetch(resp) = r.request(at, Request::OffsetFetch(req), &mut out) else {
                    panic!("another answer")
                };
                let topics: Vec<Value> = resp
                    .offsets
                    .iter()
                    .map(|(name, parts)| {
                        let p: Vec<Value> = parts
                            .iter()
                            .map(|(p, d)| {
                                json!({
                                    "partitionIndex": p, "committedOffset": d.offset,
                                    "committedLeaderEpoch": d.leader_epoch.unwrap_or(-1),
                                    "metadata": d.metadata.as_str(), "error": d.error_code.name(),
                                })
                            })
                            .collect();
                        json!({"name": name, "partitions": p})
                    })
                    .collect();
                let got = json!({"groupId": group, "topics": sorted_topics(&json!(topics)), "error": resp.error_code.name()});
                let e = &exp["response"]["groups"][0];
                let want = json!({"groupId": e["groupId"], "topics": sorted_topics(&e["topics"]), "error": e["error"]});
                if got != want || exp["response"]["groups"].as_array().map(Vec::len) != Some(1) {
                    fail(format!("fetch: got {got}, want {want}"));
                }
            }
            "commit" => {
                let mut req = OffsetCommitRequest {
                    group_id: GroupId::from(group.as_str()),
                    member_id: MemberId::from(r.member_id(step["member_id"].as_str().unwrap_or("")).as_str()),
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
                let Response::OffsetCommit(resp) = r.request(at, Request::OffsetCommit(req), &mut out) else {
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
                    fail(format!("commit: got {}, want {}", json!(got), json!(want)));
                }
            }
            "offset_delete" => {
                let topics = step["topics"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(name, p)| {
                        (
                            name.clone(),
                            p.as_array().unwrap().iter().map(|p| p.as_i64().unwrap() as i32).collect(),
                        )
                    })
                    .collect();
                let req = OffsetDeleteRequest { group_id: group.clone(), topics };
                let Response::OffsetDelete(resp) = r.request(at, Request::OffsetDelete(req), &mut out) else {
                    panic!("another answer")
                };
                let topics: Vec<Value> = resp
                    .partitions
                    .iter()
                    .map(|(name, parts)| {
                        let p: Vec<Value> = parts
                            .iter()
                            .map(|(p, code)| json!({"partitionIndex": p, "error": code.name()}))
                            .collect();
                        json!({"name": name, "partitions": p})
                    })
                    .collect();
                let got = json!({"error": resp.error_code.name(), "topics": sorted_topics(&json!(topics))});
                let e = &exp["response"];
                let want = json!({"error": e["error"], "topics": sorted_topics(&e["topics"])});
                if got != want {
                    fail(format!("offset_delete: got {got}, want {want}"));
                }
            }
            "delete" => {
                let ids: Vec<GroupId> = step["groups"].as_array().map_or_else(
                    || vec![GroupId::from(group.as_str())],
                    |g| g.iter().map(|g| GroupId::from(g.as_str().unwrap())).collect(),
                );
                let (rid, answer) =
                    r.send(at, Request::DeleteGroups(DeleteGroupsRequest { group_ids: ids }), &mut out);
                // The persister deletes what it is asked at once (the oracle's default).
                for ask in r.core.take_share_state_deletions() {
                    let fx = r.core.share_group_state_deleted(at, ask.group_id.as_str(), Ok(()));
                    r.process(at, fx, &mut out);
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
                    fail(format!("delete: got {}, want {want}", json!(got)));
                }
            }
            "list" => {
                let strs = |k: &str| -> Vec<String> {
                    step[k].as_array().into_iter().flatten().map(|s| s.as_str().unwrap().to_owned()).collect()
                };
                let req = ListGroupsRequest { states_filter: strs("states"), types_filter: strs("types") };
                let Response::ListGroups(resp) = r.request(at, Request::ListGroups(req), &mut out) else {
                    panic!("another answer")
                };
                let mut groups: Vec<Value> = resp
                    .groups
                    .iter()
                    .map(|g| json!({"groupId": g.group_id.as_str(), "protocolType": g.protocol_type, "groupState": g.group_state, "groupType": g.group_type}))
                    .collect();
                groups.sort_by(|a, b| a["groupId"].as_str().cmp(&b["groupId"].as_str()));
                let got = json!({"error": resp.error_code.name(), "groups": groups});
                if got != exp["response"] {
                    fail(format!("list: got {got}, want {}", exp["response"]));
                }
            }
            "describe" => {
                let ids = step["groups"].as_array().map_or_else(
                    || vec![GroupId::from(group.as_str())],
                    |g| g.iter().map(|g| GroupId::from(g.as_str().unwrap())).collect(),
                );
                let version = step["version"].as_i64().unwrap_or(6) as i16;
                let req = DescribeGroupsRequest { group_ids: ids, api_version: version };
                let Response::DescribeGroups(resp) = r.request(at, Request::DescribeGroups(req), &mut out)
                else {
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
                    fail(format!("describe: got {}, want {}", json!(got), json!(want)));
                }
            }
            "join" => {
                let name = step["member"].as_str().unwrap().to_owned();
                let topics: Vec<String> = step["topics"].as_array().map_or_else(
                    || vec!["foo".to_owned()],
                    |t| t.iter().map(|n| n.as_str().unwrap().to_owned()).collect(),
                );
                let subscription = Subscription { topics, ..Subscription::default() }.encode().unwrap();
                if let Some(instance) = step["instance"].as_str() {
                    r.instances.insert(name.clone(), instance.to_owned());
                }
                let req = JoinGroupRequest {
                    group_id: GroupId::from(group.as_str()),
                    member_id: MemberId::from(r.member_id(step["member_id"].as_str().unwrap_or("")).as_str()),
                    group_instance_id: r.instances.get(&name).map(|i| GroupInstanceId::from(i.as_str())),
                    client_id: "consumer".to_owned(),
                    client_host: "/127.0.0.1".to_owned(),
                    protocol_type: step["protocol_type"].as_str().unwrap_or("consumer").into(),
                    protocols: vec![ProtocolMetadata::new("range", subscription.to_vec())],
                    session_timeout_ms: 45_000,
                    rebalance_timeout_ms: 300_000,
                    ..JoinGroupRequest::default()
                };
                match r.send(at, Request::JoinGroup(req), &mut out) {
                    (_, Some(Response::JoinGroup(resp))) => {
                        if resp.error_code.is_ok() || resp.error_code == ErrorCode::MemberIdRequired {
                            r.members.insert(name, resp.member_id.to_string());
                        }
                        let got = join_answer(&r, &resp);
                        if got != exp["response"] {
                            fail(format!("join: got {got}, want {}", exp["response"]));
                        }
                    }
                    (rid, None) => {
                        r.parked_joins.insert(rid, name);
                        if exp["pending"] != json!(true) {
                            fail(format!("join: parked, want {}", exp["response"]));
                        }
                    }
                    (_, Some(other)) => panic!("another answer: {other:?}"),
                }
            }
            "sync" => {
                let name = step["member"].as_str().unwrap();
                let id = r.member_id(name);
                let req = SyncGroupRequest {
                    group_id: GroupId::from(group.as_str()),
                    group_instance_id: r.instances.get(name).map(|i| GroupInstanceId::from(i.as_str())),
                    generation_id: step["generation"].as_i64().unwrap_or(1) as i32,
                    member_id: MemberId::from(id.as_str()),
                    protocol_type: Some("consumer".into()),
                    protocol_name: Some("range".into()),
                    // Assignment bytes are left out of the recorded answer.
                    assignments: vec![MemberAssignmentData::new(id.as_str(), Vec::new())],
                    ..SyncGroupRequest::default()
                };
                let Response::SyncGroup(resp) = r.request(at, Request::SyncGroup(req), &mut out) else {
                    panic!("another answer")
                };
                let got = json!({
                    "error": resp.error_code.name(),
                    "protocolType": resp.protocol_type.as_ref().map(|p| p.as_str()),
                    "protocolName": resp.protocol_name.as_ref().map(|p| p.as_str()),
                });
                if got != exp["response"] {
                    fail(format!("sync: got {got}, want {}", exp["response"]));
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
                let Response::ConsumerGroupHeartbeat(resp) =
                    r.request(at, Request::ConsumerGroupHeartbeat(Box::new(req)), &mut out)
                else {
                    panic!("another answer")
                };
                let got = json!([resp.error_code.name(), resp.error_message, resp.member_epoch]);
                let e = &exp["response"];
                let want = json!([e["error"], e["errorMessage"], e["memberEpoch"]]);
                if got != want {
                    fail(format!("cg_hb: got {got}, want {want}"));
                }
            }
            "sg_hb" => {
                let name = step["member"].as_str().unwrap().to_owned();
                let req = ShareGroupHeartbeatRequest {
                    group_id: GroupId::from(group.as_str()),
                    member_id: MemberId::from(name.as_str()),
                    member_epoch: step["epoch"].as_i64().unwrap_or(0) as i32,
                    rack_id: None,
                    subscribed_topic_names: step["topics"]
                        .as_array()
                        .map(|t| t.iter().map(|n| n.as_str().unwrap().to_owned()).collect()),
                    client_id: "consumer".to_owned(),
                    client_host: "/127.0.0.1".to_owned(),
                };
                let Response::ShareGroupHeartbeat(resp) =
                    r.request(at, Request::ShareGroupHeartbeat(req), &mut out)
                else {
                    panic!("another answer")
                };
                let got = json!([resp.error_code.name(), resp.member_epoch]);
                let want = json!([exp["response"]["error"], exp["response"]["memberEpoch"]]);
                if got != want {
                    fail(format!("sg_hb: got {got}, want {want}"));
                }
                // The persister initializes what it is asked at once.
                for init in std::mem::take(&mut out.initializations) {
                    let partitions: Vec<(TopicId, Vec<i32>)> = init
                        .topics
                        .iter()
                        .map(|t| (t.topic_id, t.partitions.iter().map(|p| p.partition).collect()))
                        .collect();
                    let fx =
                        r.core.share_group_state_initialized(at, init.group_id.as_str(), &partitions, true);
                    r.process(at, fx, &mut out);
                }
            }
            "metadata" => {
                // `onPartitionsDeleted`, then `maybeCleanupShareGroupState`, then the new image.
                let mut names = Vec::new();
                let mut ids = Vec::new();
                for name in step["delete"].as_array().into_iter().flatten() {
                    let name = name.as_str().unwrap().to_owned();
                    if let Some((id, _)) = r.topics.remove(&name) {
                        ids.push(id);
                        names.push(name);
                    }
                }
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                let fx = r.core.offsets_topics_deleted(at, &names);
                r.process(at, fx, &mut out);
                let fx = r.core.share_topics_deleted(at, &ids);
                r.process(at, fx, &mut out);
                r.version += 1;
                let image = Arc::new(r.image());
                r.core.update_metadata_image(image);
            }
            "advance" => {}
            other => {
                outcome.stopped = Some((i, other.to_owned()));
                break;
            }
        }
        outcome.steps = i + 1;
        // Answers of earlier requests this step completed (a parked JoinGroup).
        let mut completed = Vec::new();
        for (rid, response) in std::mem::take(&mut out.answers) {
            let Some(name) = r.parked_joins.remove(&rid) else { continue };
            let Response::JoinGroup(resp) = response else { panic!("another answer") };
            if resp.error_code.is_ok() {
                r.members.entry(name.clone()).or_insert_with(|| resp.member_id.to_string());
            }
            completed.push(json!({"member": name, "response": join_answer(&r, &resp)}));
        }
        let want_completed = exp["completed"].as_array().cloned().unwrap_or_default();
        if completed != want_completed {
            fail(format!("completed: got {}, want {}", json!(completed), json!(want_completed)));
        }
        let got = RecordKeys::ours(&out.records);
        let mut want = RecordKeys::kafka(&expected_records(exp), op == "txn_commit");
        let committed = &exp["group"]["offsets"]["committed"];
        if op == "end_txn" {
            // Kafka writes nothing for a marker; ours writes each offset it commits:
            // the recorded committed offsets that changed (their record offset did).
            let before = last_committed.get(&group).cloned().unwrap_or(Value::Null);
            want.offsets = changed_offsets(&group, &before, committed);
        }
        if !committed.is_null() {
            last_committed.insert(group.clone(), committed.clone());
        }
        if got != want {
            fail(format!("records: got {got:?}, want {want:?}"));
        }
        if !exp["group"].is_null() {
            let got = r.group(&group);
            let want = expected_group(&exp["group"]);
            if got != want {
                fail(format!("group: got {got}, want {want}"));
            }
        }
        outcome.failures.extend(failures.into_iter().map(|what| Failure { step: i, what }));
    }
    outcome
}

/// Scripts whose replay stops at an op not replayed here, with that op. A
/// script stopping elsewhere, or one listed that no longer stops, fails.
const NOT_REPLAYED: &[(&str, &str)] = &[];

#[test]
fn every_txn_script_replays_as_kafka_answered() {
    let dir = oracle_dir();
    let mut names: Vec<String> = std::fs::read_dir(dir.join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 14, "the oracle scripts are there");
    let mut report = Vec::new();
    let mut compared = 0;
    for name in &names {
        let scenario = load(&dir.join("scenarios").join(name));
        let expected = load(&dir.join("expected").join(name));
        let outcome = replay(&scenario, &expected);
        let listed = NOT_REPLAYED.iter().find(|(n, _)| name.starts_with(n));
        match (&outcome.stopped, listed) {
            (None, None) => {
                let recorded = expected["steps"].as_array().map_or(0, Vec::len);
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
    assert!(compared >= 100, "steps compared: {compared}");
    assert!(report.is_empty(), "{} differences from Kafka:\n{}", report.len(), report.join("\n"));
}
