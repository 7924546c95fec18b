//! Shared helpers: reading vector JSON and checking assignment invariants.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use group_assignors::GroupAssignment;
use group_types::{MemberSubscription, TopicPartition};
use serde_json::Value;

/// Reads a vector file copied into `tests/data`.
pub(crate) fn load(name: &str) -> Value {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A `{"topic", "partition"}` object.
pub(crate) fn tp(v: &Value) -> TopicPartition {
    TopicPartition::new(
        v["topic"].as_str().expect("topic"),
        v["partition"].as_i64().expect("partition") as i32,
    )
}

/// A list of `{"topic", "partition"}` objects.
pub(crate) fn tps(v: &Value) -> Vec<TopicPartition> {
    v.as_array().map(|a| a.iter().map(tp).collect()).unwrap_or_default()
}

/// A `"topic:partition"` key.
pub(crate) fn tp_key(k: &str) -> TopicPartition {
    let (t, p) = k.rsplit_once(':').expect("topic:partition");
    TopicPartition::new(t, p.parse().expect("partition number"))
}

/// The members of a case, without ownership.
pub(crate) fn members(v: &Value) -> Vec<MemberSubscription> {
    v.as_array()
        .expect("members")
        .iter()
        .map(|m| {
            let topics: Vec<Arc<str>> = m["topics"]
                .as_array()
                .expect("topics")
                .iter()
                .map(|t| Arc::from(t.as_str().expect("topic")))
                .collect();
            let mut s = MemberSubscription::new(m["member_id"].as_str().expect("member_id"), topics);
            if let Some(i) = m.get("group_instance_id").and_then(Value::as_str) {
                s = s.with_instance_id(i);
            }
            if let Some(r) = m.get("rack").and_then(Value::as_str) {
                s = s.with_rack(r);
            }
            s
        })
        .collect()
}

/// An `expected` map.
pub(crate) fn expected(v: &Value) -> BTreeMap<String, BTreeSet<TopicPartition>> {
    v.as_object().expect("expected").iter().map(|(k, l)| (k.clone(), tps(l).into_iter().collect())).collect()
}

/// An output as sets per member.
pub(crate) fn as_sets(a: &GroupAssignment) -> BTreeMap<String, BTreeSet<TopicPartition>> {
    a.iter().map(|(k, l)| (k.clone(), l.iter().cloned().collect())).collect()
}

/// The existing topics each member subscribes to.
fn subscribed(
    members: &[MemberSubscription],
    partitions: &[TopicPartition],
) -> BTreeMap<String, BTreeSet<Arc<str>>> {
    let existing: HashSet<&str> = partitions.iter().map(|p| &*p.topic).collect();
    members
        .iter()
        .map(|m| {
            (m.member_id.clone(), m.topics.iter().filter(|t| existing.contains(&***t)).cloned().collect())
        })
        .collect()
}

/// Validity: exactly the input members, each partition subscribed and existing, none twice.
pub(crate) fn check_valid(
    members: &[MemberSubscription],
    partitions: &[TopicPartition],
    a: &GroupAssignment,
) -> Result<(), String> {
    let keys: BTreeSet<&String> = a.keys().collect();
    let ids: BTreeSet<&String> = members.iter().map(|m| &m.member_id).collect();
    if keys != ids {
        return Err(format!("members {keys:?} != {ids:?}"));
    }
    let subs = subscribed(members, partitions);
    let exist: HashSet<&TopicPartition> = partitions.iter().collect();
    let mut seen = HashSet::new();
    for (m, list) in a {
        for p in list {
            if !subs[m].contains(&p.topic) {
                return Err(format!("{m} got {p} without subscribing"));
            }
            if !exist.contains(p) {
                return Err(format!("{m} got {p}, which does not exist"));
            }
            if !seen.insert(p) {
                return Err(format!("{p} assigned twice"));
            }
        }
    }
    Ok(())
}

/// Every partition of a subscribed topic is assigned.
pub(crate) fn check_all_assigned(
    members: &[MemberSubscription],
    partitions: &[TopicPartition],
    a: &GroupAssignment,
) -> Result<(), String> {
    let wanted: HashSet<&str> = members.iter().flat_map(|m| m.topics.iter().map(|t| &**t)).collect();
    let got: HashSet<&TopicPartition> = a.values().flatten().collect();
    for p in partitions {
        if wanted.contains(&*p.topic) != got.contains(p) {
            return Err(format!(
                "{p}: subscribed={} assigned={}",
                wanted.contains(&*p.topic),
                got.contains(p)
            ));
        }
    }
    Ok(())
}

/// Strong balance (assignors.md 4.2): no partition can move to a subscriber of
/// its topic holding two or more fewer partitions.
pub(crate) fn check_balanced(
    members: &[MemberSubscription],
    partitions: &[TopicPartition],
    a: &GroupAssignment,
) -> Result<(), String> {
    let subs = subscribed(members, partitions);
    for (ma, la) in a {
        for (mb, lb) in a {
            if la.len() >= lb.len() + 2
                && let Some(p) = la.iter().find(|p| subs[mb].contains(&p.topic))
            {
                return Err(format!("{ma} ({}) holds {p}, {mb} ({}) subscribes", la.len(), lb.len()));
            }
        }
    }
    Ok(())
}

/// Number of `previous` ownerships whose partition ended with another member.
pub(crate) fn moved(previous: &BTreeMap<TopicPartition, String>, a: &GroupAssignment) -> usize {
    let now: BTreeMap<&TopicPartition, &String> =
        a.iter().flat_map(|(m, l)| l.iter().map(move |p| (p, m))).collect();
    previous.iter().filter(|(p, m)| now.get(p) != Some(m)).count()
}
