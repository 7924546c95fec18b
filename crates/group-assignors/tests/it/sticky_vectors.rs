//! The sticky scenarios: every invariant for the eager `StickyAssignor` and,
//! with the incremental protocol simulated, for `CooperativeStickyAssignor`.

use std::collections::{BTreeMap, BTreeSet};

use group_assignors::{
    CooperativeStickyAssignor, GroupAssignment, PartitionAssignor, StickyAssignor, StickyAssignorUserData,
};
use group_types::{MemberSubscription, TopicPartition};
use serde_json::Value;

use crate::check::{
    as_sets, check_all_assigned, check_balanced, check_valid, load, members, moved, tp, tp_key, tps,
};

struct Scenario {
    name: String,
    members: Vec<MemberSubscription>,
    owned: Vec<Vec<TopicPartition>>,
    generation: Vec<Option<i32>>,
    partitions: Vec<TopicPartition>,
    inv: Value,
}

fn scenarios() -> Vec<Scenario> {
    let data = load("sticky-scenarios.json");
    let all = data["scenarios"].as_array().expect("scenarios");
    assert_eq!(all.len(), 26);
    all.iter()
        .map(|s| {
            let ms = s["members"].as_array().expect("members");
            Scenario {
                name: s["name"].as_str().expect("name").to_owned(),
                members: members(&s["members"]),
                owned: ms.iter().map(|m| tps(&m["owned"])).collect(),
                generation: ms.iter().map(|m| m["generation"].as_i64().map(|g| g as i32)).collect(),
                partitions: s["partitions"].as_array().expect("partitions").iter().map(tp).collect(),
                inv: s["invariants"].clone(),
            }
        })
        .collect()
}

fn previous_owner(inv: &Value) -> BTreeMap<TopicPartition, String> {
    inv["previous_owner"]
        .as_object()
        .map(|o| o.iter().map(|(k, v)| (tp_key(k), v.as_str().expect("member").to_owned())).collect())
        .unwrap_or_default()
}

/// `must_keep` and `keep_at_least`.
fn check_keeps(inv: &Value, a: &GroupAssignment) -> Result<(), String> {
    let sets = as_sets(a);
    if let Some(mk) = inv.get("must_keep").and_then(Value::as_object) {
        for (m, l) in mk {
            for p in tps(l) {
                if !sets[m].contains(&p) {
                    return Err(format!("must_keep: {m} lost {p}"));
                }
            }
        }
    }
    if let Some(kl) = inv.get("keep_at_least").and_then(Value::as_array) {
        for k in kl {
            let m = k["member"].as_str().expect("member");
            let kept = tps(&k["of"]).iter().filter(|p| sets[m].contains(*p)).count();
            if kept < k["count"].as_u64().expect("count") as usize {
                return Err(format!("keep_at_least: {m} kept {kept} of {}", k["of"]));
            }
        }
    }
    Ok(())
}

/// Every eager invariant of a scenario.
fn check_eager(s: &Scenario, a: &GroupAssignment) -> Result<(), String> {
    check_valid(&s.members, &s.partitions, a)?;
    check_all_assigned(&s.members, &s.partitions, a)?;
    check_balanced(&s.members, &s.partitions, a)?;
    check_keeps(&s.inv, a)?;
    if let Some(cm) = s.inv.get("count_multiset").and_then(Value::as_array) {
        let want: Vec<usize> = cm.iter().map(|c| c.as_u64().expect("count") as usize).collect();
        let mut got: Vec<usize> = a.values().map(Vec::len).collect();
        got.sort_unstable();
        if got != want {
            return Err(format!("count_multiset {got:?} != {want:?}"));
        }
    }
    if let Some(mc) = s.inv.get("member_counts").and_then(Value::as_object) {
        for (m, c) in mc {
            if a[m].len() != c.as_u64().expect("count") as usize {
                return Err(format!("member_counts: {m} has {}, want {c}", a[m].len()));
            }
        }
    }
    if let Some(max) = s.inv.get("max_moved").and_then(Value::as_u64) {
        let n = moved(&previous_owner(&s.inv), a);
        if n > max as usize {
            return Err(format!("moved {n} > max_moved {max}"));
        }
    }
    Ok(())
}

/// Eager members: ownership travels in `StickyAssignorUserData` (v1 with a
/// generation, v0 for `-1`, none for a fresh member), as Java's clients send it.
fn eager_members(s: &Scenario) -> Vec<MemberSubscription> {
    s.members
        .iter()
        .zip(&s.owned)
        .zip(&s.generation)
        .map(|((m, owned), generation)| {
            let mut m = m.clone();
            if let Some(g) = generation {
                let data = StickyAssignorUserData {
                    previous_assignment: owned.clone(),
                    generation: (*g >= 0).then_some(*g),
                };
                m.user_data = Some(data.encode());
            }
            m
        })
        .collect()
}

#[test]
fn eager_sticky_satisfies_every_invariant() {
    let mut failures = Vec::new();
    for s in scenarios() {
        let got = StickyAssignor.assign(&eager_members(&s), &s.partitions).expect("valid input");
        if let Err(e) = check_eager(&s, &got) {
            failures.push(format!("{}: {e}\n  got {:?}", s.name, as_sets(&got)));
        }
    }
    assert!(failures.is_empty(), "{} failing scenario(s):\n{}", failures.len(), failures.join("\n"));
}

/// The same ownership passed in the subscription fields instead of user data.
#[test]
fn eager_sticky_reads_subscription_fields_without_user_data() {
    let mut failures = Vec::new();
    for s in scenarios() {
        let ms: Vec<_> = s
            .members
            .iter()
            .zip(&s.owned)
            .zip(&s.generation)
            .map(|((m, o), g)| MemberSubscription {
                owned_partitions: o.clone(),
                generation_id: *g,
                ..m.clone()
            })
            .collect();
        let got = StickyAssignor.assign(&ms, &s.partitions).expect("valid input");
        if let Err(e) = check_eager(&s, &got) {
            failures.push(format!("{}: {e}", s.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs the cooperative protocol: round 1 checks, then follow-ups until
/// nobody loses a partition; returns the final assignment.
fn cooperative_rounds(s: &Scenario) -> Result<GroupAssignment, String> {
    let mut ms: Vec<MemberSubscription> = s
        .members
        .iter()
        .zip(&s.owned)
        .zip(&s.generation)
        .map(|((m, o), g)| MemberSubscription { owned_partitions: o.clone(), generation_id: *g, ..m.clone() })
        .collect();
    let round1 = CooperativeStickyAssignor.assign(&ms, &s.partitions).map_err(|e| e.to_string())?;
    check_valid(&ms, &s.partitions, &round1)?;
    check_keeps(&s.inv, &round1)?;
    let prev = previous_owner(&s.inv);
    let mut claimants: BTreeMap<&TopicPartition, BTreeSet<&str>> = BTreeMap::new();
    for m in &ms {
        for p in &m.owned_partitions {
            claimants.entry(p).or_default().insert(&m.member_id);
        }
    }
    for (m, list) in &round1 {
        for p in list {
            let others = claimants.get(p).is_some_and(|c| c.iter().any(|c| c != m));
            if others && prev.get(p) != Some(m) {
                return Err(format!("round 1 gives {p} to {m} while another member still owns it"));
            }
        }
    }
    let subscribed: BTreeSet<&str> = ms.iter().flat_map(|m| m.topics.iter().map(|t| &**t)).collect();
    let assigned: BTreeSet<&TopicPartition> = round1.values().flatten().collect();
    for p in &s.partitions {
        if subscribed.contains(&*p.topic) && !claimants.contains_key(p) && !assigned.contains(p) {
            return Err(format!("round 1 leaves unclaimed {p} unassigned"));
        }
    }
    let mut generation = s.generation.iter().flatten().copied().max().unwrap_or(0);
    let mut current = round1;
    let mut follow_ups = 0;
    loop {
        let lost = ms.iter().any(|m| {
            let now: BTreeSet<&TopicPartition> = current[&m.member_id].iter().collect();
            m.owned_partitions.iter().any(|p| !now.contains(p))
        });
        if !lost {
            return Ok(current);
        }
        if follow_ups == 1 {
            break;
        }
        follow_ups += 1;
        generation += 1;
        for m in &mut ms {
            m.owned_partitions = current[&m.member_id].clone();
            m.generation_id = Some(generation);
        }
        current = CooperativeStickyAssignor.assign(&ms, &s.partitions).map_err(|e| e.to_string())?;
        check_valid(&ms, &s.partitions, &current)?;
    }
    Err("still revoking after 1 follow-up rebalance (Java needs at most one on these scenarios)".to_owned())
}

#[test]
fn cooperative_sticky_satisfies_round1_and_final_invariants() {
    let mut failures = Vec::new();
    for s in scenarios() {
        match cooperative_rounds(&s).and_then(|last| check_eager(&s, &last).map(|()| last)) {
            Ok(_) => {}
            Err(e) => failures.push(format!("{}: {e}", s.name)),
        }
    }
    assert!(failures.is_empty(), "{} failing scenario(s):\n{}", failures.len(), failures.join("\n"));
}
