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
//! - the group after each step: kind and state (a classic group's generation,
//!   protocol type and member count; a consumer group's epochs and its members'),
//!   its committed offsets (offset, leader epoch, metadata) and every producer's
//!   pending ones.
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
//! - a plain commit: Kafka's OffsetCommit records are our `Offset` records;
//! - group records (GroupMetadata, the modern kinds' records): kinds and member
//!   keys, in order.
//!
//! Not compared, deliberately (`txn_apis.rs` explains the layout): Kafka writes
//! nothing for a marker, where ours writes a `TxnOffsetTombstone` per pending
//! offset it ends, an `Offset` record per offset it commits (checked: those are
//! the recorded committed offsets the marker changed), and rewrites the
//! `TxnOffset` records a commit supersedes; a tombstone of pending offsets also
//! writes a `TxnOffsetTombstone` per producer. `commit_ms`, `record_offset` and
//! `marker_offset` describe Kafka's log offsets, which our stores do not have.
//!
//! A script whose replay stops at an op not replayed here is listed in
//! [`NOT_REPLAYED`], so the list only shrinks; a script replaying fewer steps
//! than its recording, or whose steps and recording differ in number, fails.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use group_coordinator::{CoordinatorConfig, Record, Request, RequestId, Response};
use group_types::{
    CommitMetadata, ErrorCode, GroupId, GroupInstanceId, JoinGroupRequest, MemberAssignmentData, MemberId,
    OffsetCommitData, OffsetDeleteRequest, OffsetFetchRequest, ProtocolMetadata, ShareGroupHeartbeatRequest,
    Subscription, SyncGroupRequest, TopicId, TransactionResult, TxnOffsetCommitRequest,
    WriteTxnMarkersRequest,
};
use serde_json::{Value, json};

use super::oracle_common::{self, Driver, Failure, Outcome, Step, StepOut, image};

fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oracle-txn")
}

/// The first producer id a script names; the next ones follow.
const FIRST_PRODUCER_ID: i64 = 1000;

struct Replay {
    d: Driver,
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
}

impl Replay {
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

    /// The group summary as the oracle writes it, for the fields compared (not
    /// the log offsets `commit_ms` and `record_offset`, nor deadlines).
    fn group(&self, id: &str) -> Value {
        let kind = if let Some(g) = self.d.core.share_group(id) {
            json!({"type": "share", "state": g.state})
        } else if let Some(cg) = self.d.core.consumer_group(id) {
            let members: BTreeMap<&str, i32> =
                cg.members.iter().map(|m| (m.member_id.as_str(), m.member_epoch)).collect();
            json!({
                "type": "consumer", "state": cg.state.as_str(), "group_epoch": cg.group_epoch,
                "assignment_epoch": cg.assignment_epoch, "members": members,
            })
        } else if let Some(g) = self.d.core.group(id) {
            json!({
                "type": "classic", "state": g.state.as_str(), "generation": g.generation_id,
                "protocol_type": g.protocol_type, "num_members": g.members.len(),
            })
        } else {
            // Nothing of a missing group may linger: its pending offsets are still listed.
            json!({"exists": false})
        };
        let mut committed: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
        for (tp, o) in self.d.core.group(id).map(|g| g.offsets).unwrap_or_default() {
            committed.entry(tp.topic.to_string()).or_default().insert(tp.partition.to_string(), offset(&o));
        }
        let mut pending: BTreeMap<String, BTreeMap<String, BTreeMap<String, Value>>> = BTreeMap::new();
        for (producer, tp, o) in self.d.core.pending_transactional_offsets(id) {
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
        _ => json!({"exists": false}),
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
        self.groups = oracle_common::runs_sorted(std::mem::take(&mut self.groups));
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
                    keys.groups.push(group_key(m.type_name(), m.sub_key(), m.is_tombstone()));
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
    let mut topics = BTreeMap::new();
    for t in scenario["topics"].as_array().unwrap() {
        let id: TopicId = t["id"].as_str().unwrap().parse().unwrap();
        topics.insert(t["name"].as_str().unwrap().to_owned(), (id, t["partitions"].as_u64().unwrap() as u32));
    }
    let mut r = Replay {
        d: Driver::new(config_of(scenario), image(1, &topics)),
        topics,
        version: 1,
        members: HashMap::new(),
        instances: HashMap::new(),
        producers: HashMap::new(),
        parked_joins: HashMap::new(),
    };
    let default_group = scenario["group"].as_str().unwrap().to_owned();
    let mut outcome = Outcome::default();
    // Group -> its recorded committed offsets after the last step that showed it.
    let mut last_committed: HashMap<String, Value> = HashMap::new();
    for (i, (step, exp)) in oracle_common::steps(scenario, expected).enumerate() {
        let mut failures = Vec::new();
        let mut fail = |what: String| failures.push(what);
        let at = step["at_ms"].as_i64().unwrap();
        let mut out = StepOut::default();
        r.d.fire_due(at, &mut out);
        let group = step["group"].as_str().unwrap_or(&default_group).to_owned();
        let op = step["op"].as_str().unwrap();
        let here = Step { at, step, group: &group, exp };
        match op {
            "txn_commit" => {
                let req = txn_commit_request(&mut r, step, &group);
                let echo = txn_commit_echo(&r, &req);
                if echo != exp["request"] {
                    fail(format!("request: sent {echo}, recorded {}", exp["request"]));
                }
                let Response::TxnOffsetCommit(resp) =
                    r.d.request(at, Request::TxnOffsetCommit(req), &mut out)
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
                let Response::WriteTxnMarkers(resp) = r.d.request(at, Request::from(req), &mut out) else {
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
                let Response::OffsetFetch(resp) = r.d.request(at, Request::OffsetFetch(req), &mut out) else {
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
                let member_id = r.member_id(step["member_id"].as_str().unwrap_or(""));
                if let Err(e) = oracle_common::plain_commit(&mut r.d, &here, &member_id, &mut out) {
                    fail(e);
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
                let Response::OffsetDelete(resp) = r.d.request(at, Request::OffsetDelete(req), &mut out)
                else {
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
                if let Err(e) = oracle_common::delete_groups(&mut r.d, &here, &mut out) {
                    fail(e);
                }
            }
            "list" => {
                if let Err(e) = oracle_common::list(&mut r.d, &here, &mut out) {
                    fail(e);
                }
            }
            "describe" => {
                if let Err(e) = oracle_common::describe(&mut r.d, &here, &mut out) {
                    fail(e);
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
                match r.d.send(at, Request::JoinGroup(req), &mut out) {
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
                };
                let Response::SyncGroup(resp) = r.d.request(at, Request::SyncGroup(req), &mut out) else {
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
                if let Err(e) = oracle_common::consumer_heartbeat(&mut r.d, &here, &mut out) {
                    fail(e);
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
                    r.d.request(at, Request::ShareGroupHeartbeat(req), &mut out)
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
                    r.d.share_state_initialized(at, &init, true, &mut out);
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
                let fx = r.d.core.offsets_topics_deleted(at, &names);
                r.d.process(at, fx, &mut out);
                let fx = r.d.core.share_topics_deleted(at, &ids);
                r.d.process(at, fx, &mut out);
                r.version += 1;
                r.d.core.update_metadata_image(Arc::new(image(r.version, &r.topics)));
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
    oracle_common::replay_all(&oracle_dir(), NOT_REPLAYED, 14, 100, replay);
}
