//! Oracle replay: every script of `tests/data/oracle-sharestate/scenarios` runs
//! through a [`ShareCoordinatorShard`] with simulated time, and each step is
//! compared with what Kafka 4.2.1's `ShareCoordinatorShard` answered and wrote
//! (`tests/data/oracle-sharestate/expected`, README "How to compare").
//!
//! Compared at every step, as JSON values in the recording's form:
//! - `request`: the request the script step makes (this checks that the script's
//!   defaults are read as the recording's harness read them);
//! - `response`: error codes, error messages, every field (the read's batches in
//!   order);
//! - `records`: type, key, value (tagged `deliveryCompleteCount` left out at -1, as
//!   Kafka's JSON form does), tombstone, and offset. Records are replayed into the
//!   shard at the next offset of the partition, as the recording's runtime did;
//! - `state`: every live share partition with its merged state, both epoch maps and
//!   the update counter;
//! - `last_redundant_offset`.
//!
//! Not compared: nothing of a step is left out. Where Kafka's order is a `HashSet`'s
//! (`topic_deleted` steps, flagged `records_sorted`), records are compared as a set
//! with the set of offsets they take, since the recording itself re-sorted them.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use group_share_coordinator::{
    PartitionReply, ShareCoordinatorConfig, ShareCoordinatorShard, ShareRecord, TopicsImage,
};
use group_types::{
    GroupId, InitializeStatePartition, ReadStatePartition, ReadStatePartitionResult,
    ReadStateSummaryPartition, ReadStateSummaryPartitionResult, ShareStatePartitionResult, StateBatch,
    TopicId, WriteStatePartition,
};
use serde_json::{Value, json};

fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oracle-sharestate")
}

/// The names of every script in the folder.
fn script_names() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(oracle_dir().join("scenarios"))
        .expect("scenarios folder")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

fn load(path: PathBuf) -> Value {
    serde_json::from_str(&fs::read_to_string(&path).expect("readable")).expect("JSON")
}

/// The replay of one script.
struct Replay {
    shard: ShareCoordinatorShard,
    next_offset: i64,
    default_group: String,
    /// Topic name to id, and back.
    ids: HashMap<String, TopicId>,
    names: HashMap<TopicId, String>,
    image: Vec<(TopicId, i32)>,
}

impl Replay {
    fn new(script: &Value) -> Replay {
        let mut config = ShareCoordinatorConfig::default();
        if let Some(settings) = script["config"].as_object() {
            for (name, value) in settings {
                config.set(name, value.as_i64().expect("integer setting")).expect("valid setting");
            }
        }
        let mut ids = HashMap::new();
        let mut names = HashMap::new();
        let mut image = Vec::new();
        for topic in script["topics"].as_array().expect("topics") {
            let name = topic["name"].as_str().expect("name").to_owned();
            let id: TopicId = topic["id"].as_str().expect("id").parse().expect("topic id");
            let partitions = topic["partitions"].as_i64().expect("count") as i32;
            ids.insert(name.clone(), id);
            names.insert(id, name);
            image.push((id, partitions));
        }
        let mut shard = ShareCoordinatorShard::new(config);
        shard.on_loaded(TopicsImage::new(image.iter().copied()));
        Replay {
            shard,
            next_offset: 0,
            default_group: script["group"].as_str().unwrap_or("g").to_owned(),
            ids,
            names,
            image,
        }
    }

    fn topic_json(&self, id: Option<TopicId>) -> Value {
        match id {
            None => Value::Null,
            Some(id) => match self.names.get(&id) {
                Some(name) => json!(name),
                None => json!(id.to_string()),
            },
        }
    }

    /// The step's topic id: `topic_id` (a Uuid or null) or a topic name (`foo`).
    fn topic_of(&self, step: &Value) -> Option<TopicId> {
        match step.get("topic_id") {
            Some(Value::Null) => None,
            Some(id) => Some(id.as_str().expect("uuid").parse().expect("topic id")),
            None => Some(self.ids[step["topic"].as_str().unwrap_or("foo")]),
        }
    }

    /// Runs one step: (request, records written, response) as JSON.
    fn step(&mut self, step: &Value) -> (Option<Value>, Vec<Value>, Option<Value>, bool) {
        let now = step["at_ms"].as_i64().expect("at_ms");
        let group = GroupId::from(step["group"].as_str().unwrap_or(&self.default_group));
        let int = |name: &str, default: i64| step.get(name).and_then(Value::as_i64).unwrap_or(default);
        let partition = int("partition", 0) as i32;
        let op = step["op"].as_str().expect("op");
        let (request, records, response, sorted) = match op {
            "init" | "write" | "read" | "summary" | "delete" => {
                let topic_id = self.topic_of(step);
                let topic = self.topic_json(topic_id);
                let (partition_request, records, response) = match op {
                    "init" => {
                        let data = InitializeStatePartition {
                            partition,
                            state_epoch: int("state_epoch", 0) as i32,
                            start_offset: int("start_offset", -1),
                        };
                        let out = self.shard.initialize_state(now, &group, topic_id, &data);
                        let req = json!({"partition": partition, "stateEpoch": data.state_epoch, "startOffset": data.start_offset});
                        (req, out.records, self.plain_json(&out.response))
                    }
                    "write" => {
                        let batches: Vec<StateBatch> = step
                            .get("batches")
                            .and_then(Value::as_array)
                            .map(|bs| bs.iter().map(batch_of).collect())
                            .unwrap_or_default();
                        let data = WriteStatePartition {
                            partition,
                            state_epoch: int("state_epoch", 0) as i32,
                            leader_epoch: int("leader_epoch", 0) as i32,
                            start_offset: int("start_offset", -1),
                            delivery_complete_count: int("delivery_complete_count", -1) as i32,
                            state_batches: batches,
                        };
                        let out = self.shard.write_state(now, &group, topic_id, &data);
                        let req = json!({
                            "partition": partition, "stateEpoch": data.state_epoch, "leaderEpoch": data.leader_epoch,
                            "startOffset": data.start_offset, "deliveryCompleteCount": data.delivery_complete_count,
                            "stateBatches": batches_json(&data.state_batches),
                        });
                        (req, out.records, self.plain_json(&out.response))
                    }
                    "read" => {
                        let data =
                            ReadStatePartition { partition, leader_epoch: int("leader_epoch", 0) as i32 };
                        let out = self.shard.read_state(now, &group, topic_id, &data);
                        let req = json!({"partition": partition, "leaderEpoch": data.leader_epoch});
                        (req, out.records, self.read_json(&out.response))
                    }
                    "summary" => {
                        let data = ReadStateSummaryPartition {
                            partition,
                            leader_epoch: int("leader_epoch", 0) as i32,
                        };
                        let out = self.shard.read_state_summary(&group, topic_id, &data);
                        let req = json!({"partition": partition, "leaderEpoch": data.leader_epoch});
                        (req, out.records, self.summary_json(&out.response))
                    }
                    _ => {
                        let out = self.shard.delete_state(&group, topic_id, partition);
                        (json!({"partition": partition}), out.records, self.plain_json(&out.response))
                    }
                };
                let request = json!({"groupId": group.as_str(), "topics": [{"topic": topic, "partitions": [partition_request]}]});
                (Some(request), records, Some(response), false)
            }
            "cold_snapshot" => (None, self.shard.snapshot_cold_partitions(now), None, false),
            "topic_deleted" => {
                let deleted: HashSet<TopicId> = step["topics"]
                    .as_array()
                    .expect("topics")
                    .iter()
                    .map(|n| self.ids[n.as_str().expect("name")])
                    .collect();
                let records = self.shard.maybe_cleanup_share_state(&deleted);
                self.image.retain(|(id, _)| !deleted.contains(id));
                (None, records, None, true)
            }
            "advance" => (None, Vec::new(), None, false),
            other => panic!("unknown op {other}"),
        };
        let mut written = Vec::new();
        for record in &records {
            written.push(self.record_json(record, self.next_offset));
            self.shard.replay(self.next_offset, record);
            self.next_offset += 1;
        }
        if op == "topic_deleted" {
            self.shard.on_new_metadata_image(TopicsImage::new(self.image.iter().copied()));
        }
        (request, written, response, sorted)
    }

    fn plain_json(&self, reply: &PartitionReply<ShareStatePartitionResult>) -> Value {
        let r = &reply.result;
        json!({"results": [{"topic": self.topic_json(reply.topic_id), "partitions": [{
            "partition": r.partition, "error": r.error_code.name(), "errorMessage": r.error_message,
        }]}]})
    }

    fn read_json(&self, reply: &PartitionReply<ReadStatePartitionResult>) -> Value {
        let r = &reply.result;
        json!({"results": [{"topic": self.topic_json(reply.topic_id), "partitions": [{
            "partition": r.partition, "error": r.error_code.name(), "errorMessage": r.error_message,
            "stateEpoch": r.state_epoch, "startOffset": r.start_offset, "stateBatches": batches_json(&r.state_batches),
        }]}]})
    }

    fn summary_json(&self, reply: &PartitionReply<ReadStateSummaryPartitionResult>) -> Value {
        let r = &reply.result;
        json!({"results": [{"topic": self.topic_json(reply.topic_id), "partitions": [{
            "partition": r.partition, "error": r.error_code.name(), "errorMessage": r.error_message,
            "stateEpoch": r.state_epoch, "leaderEpoch": r.leader_epoch, "startOffset": r.start_offset,
            "deliveryCompleteCount": r.delivery_complete_count,
        }]}]})
    }

    fn record_json(&self, record: &ShareRecord, offset: i64) -> Value {
        let key = record.key();
        let key_json = json!({"groupId": key.group_id.as_str(), "topic": self.topic_json(Some(key.topic_id)), "partition": key.partition});
        let (kind, mut value) = match record {
            ShareRecord::Snapshot { value: None, .. } => ("ShareSnapshot", Value::Null),
            ShareRecord::Snapshot { value: Some(v), .. } => (
                "ShareSnapshot",
                json!({
                    "snapshotEpoch": v.snapshot_epoch, "stateEpoch": v.state_epoch, "leaderEpoch": v.leader_epoch,
                    "startOffset": v.start_offset, "deliveryCompleteCount": v.delivery_complete_count,
                    "createTimestamp": v.create_timestamp, "writeTimestamp": v.write_timestamp,
                    "stateBatches": batches_json(&v.state_batches),
                }),
            ),
            ShareRecord::Update { value: v, .. } => (
                "ShareUpdate",
                json!({
                    "snapshotEpoch": v.snapshot_epoch, "leaderEpoch": v.leader_epoch, "startOffset": v.start_offset,
                    "deliveryCompleteCount": v.delivery_complete_count, "stateBatches": batches_json(&v.state_batches),
                }),
            ),
        };
        // Kafka's JSON form leaves a tagged field at its default (-1) out.
        if let Some(map) = value.as_object_mut()
            && map.get("deliveryCompleteCount") == Some(&json!(-1))
        {
            map.remove("deliveryCompleteCount");
        }
        json!({"type": kind, "key": key_json, "value": value, "offset": offset})
    }

    fn state_json(&self) -> Value {
        let mut entries: Vec<(String, String, i32, Value)> = self
            .shard
            .share_partitions()
            .map(|(key, s)| {
                let topic = self.topic_json(Some(key.topic_id));
                let o = &s.offset;
                let entry = json!({
                    "group": key.group_id.as_str(), "topic": topic, "partition": key.partition,
                    "snapshot_epoch": o.snapshot_epoch, "state_epoch": o.state_epoch, "leader_epoch": o.leader_epoch,
                    "start_offset": o.start_offset, "delivery_complete_count": o.delivery_complete_count,
                    "batches": o.state_batches.iter().map(|b| json!([b.first_offset, b.last_offset, b.delivery_state, b.delivery_count])).collect::<Vec<_>>(),
                    "create_ms": o.create_timestamp, "write_ms": o.write_timestamp,
                    "max_leader_epoch": s.max_leader_epoch, "max_state_epoch": s.max_state_epoch,
                    "updates_since_snapshot": s.updates_since_snapshot,
                });
                (key.group_id.as_str().to_owned(), topic.as_str().unwrap_or_default().to_owned(), key.partition, entry)
            })
            .collect();
        entries.sort_by(|a, b| (&a.0, &a.1, a.2).cmp(&(&b.0, &b.1, b.2)));
        Value::Array(entries.into_iter().map(|e| e.3).collect())
    }
}

fn batch_of(b: &Value) -> StateBatch {
    let n = |i: usize| b[i].as_i64().expect("batch field");
    StateBatch::new(n(0), n(1), n(2) as i8, n(3) as i16)
}

fn batches_json(batches: &[StateBatch]) -> Value {
    batches
        .iter()
        .map(|b| {
            json!({"firstOffset": b.first_offset, "lastOffset": b.last_offset,
                   "deliveryState": b.delivery_state, "deliveryCount": b.delivery_count})
        })
        .collect()
}

/// Records as a set: sorted by their JSON text, offsets compared as a set.
fn unordered(records: &[Value]) -> (Vec<String>, Vec<i64>) {
    let mut offsets: Vec<i64> = records.iter().map(|r| r["offset"].as_i64().expect("offset")).collect();
    let mut bodies: Vec<String> = records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().expect("record").remove("offset");
            r.to_string()
        })
        .collect();
    offsets.sort_unstable();
    bodies.sort();
    (bodies, offsets)
}

/// Replays `name` and returns the first difference, if any.
fn replay(name: &str) -> Result<usize, String> {
    let script = load(oracle_dir().join("scenarios").join(name));
    let expected = load(oracle_dir().join("expected").join(name));
    let mut replay = Replay::new(&script);
    let steps = script["steps"].as_array().expect("steps");
    let recorded = expected["steps"].as_array().expect("recorded steps");
    if steps.len() != recorded.len() {
        return Err(format!("{name}: {} steps scripted, {} recorded", steps.len(), recorded.len()));
    }
    for (i, (step, want)) in steps.iter().zip(recorded).enumerate() {
        let (request, records, response, sorted) = replay.step(step);
        let at = |what: &str| format!("{name} step {i} ({}): {what}", step["op"]);
        if want.get("request").cloned() != request {
            return Err(format!("{}\n want {}\n got  {:?}", at("request"), want["request"], request));
        }
        if want.get("response").cloned() != response {
            return Err(format!("{}\n want {}\n got  {:?}", at("response"), want["response"], response));
        }
        let want_records: Vec<Value> =
            want.get("records").and_then(Value::as_array).cloned().unwrap_or_default();
        let same_records = match sorted {
            true => unordered(&want_records) == unordered(&records),
            false => want_records == records,
        };
        if !same_records {
            return Err(format!("{}\n want {:?}\n got  {:?}", at("records"), want_records, records));
        }
        let state = replay.state_json();
        if want["state"] != state {
            return Err(format!("{}\n want {}\n got  {}", at("state"), want["state"], state));
        }
        let redundant = json!(replay.shard.last_redundant_offset());
        if want["last_redundant_offset"] != redundant {
            return Err(format!(
                "{}\n want {}\n got  {}",
                at("last_redundant_offset"),
                want["last_redundant_offset"],
                redundant
            ));
        }
    }
    Ok(steps.len())
}

#[test]
fn every_script_matches_kafka() {
    let names = script_names();
    assert!(names.len() >= 12, "the oracle folder holds {} scripts", names.len());
    let failures: Vec<String> = names.iter().filter_map(|name| replay(name).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} scripts differ:\n{}",
        failures.len(),
        names.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_script_has_a_recording() {
    for name in script_names() {
        assert!(oracle_dir().join("expected").join(&name).exists(), "{name} has no recording");
    }
}
