//! KIP-848 consumer groups through the core: keep-alive heartbeats of 10,000
//! Stable members in 100 groups (the classic heartbeat benchmark's shape), and
//! one member joining then leaving a Stable group of 100 (the bump, the target
//! assignment over every member, and the writes).

mod heartbeats;

use std::collections::HashMap;

use criterion::{Criterion, criterion_group, criterion_main};
use group_coordinator::{CoordinatorConfig, Response};
use group_types::{ConsumerGroupHeartbeatRequest, ConsumerGroupState, TopicIdPartitions};
use heartbeats::{Driver, GROUPS, MEMBERS, group_id, member_id};

fn request(g: usize, member: &str, epoch: i32) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        group_id: group_id(g).into(),
        member_id: member.into(),
        member_epoch: epoch,
        client_id: "bench".into(),
        client_host: "/127.0.0.1".into(),
        ..ConsumerGroupHeartbeatRequest::default()
    }
}

fn join(g: usize, member: &str) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        rebalance_timeout_ms: 300_000,
        subscribed_topic_names: Some(vec![format!("topic-{g:04}")]),
        topic_partitions: Some(Vec::new()),
        ..request(g, member, 0)
    }
}

/// A heartbeat's answer: the member's epoch and assignment.
fn heartbeat(
    d: &mut Driver,
    r: ConsumerGroupHeartbeatRequest,
) -> Option<(i32, Option<Vec<TopicIdPartitions>>)> {
    match d.send(r.into(), |_| {})? {
        Response::ConsumerGroupHeartbeat(r) => Some((r.member_epoch, r.assignment)),
        _ => None,
    }
}

/// `GROUPS` Stable groups of `MEMBERS` members, each on its own 100-partition topic.
fn stable_groups() -> (Driver, Vec<(usize, String, i32)>) {
    let mut d = Driver::new(CoordinatorConfig::default());
    let mut members = Vec::new();
    for g in 0..GROUPS {
        let mut owned: HashMap<String, (i32, Vec<TopicIdPartitions>)> = HashMap::new();
        for m in 0..MEMBERS {
            let id = member_id(g, m);
            let (epoch, assignment) = heartbeat(&mut d, join(g, &id)).expect("joined");
            owned.insert(id, (epoch, assignment.unwrap_or_default()));
        }
        // Everyone acknowledges what it holds until the group is Stable.
        for _ in 0..10 {
            if d.core.consumer_group(&group_id(g)).is_some_and(|s| s.state == ConsumerGroupState::Stable) {
                break;
            }
            for (id, (epoch, assignment)) in owned.iter_mut() {
                let r = ConsumerGroupHeartbeatRequest {
                    topic_partitions: Some(assignment.clone()),
                    ..request(g, id, *epoch)
                };
                let (e, a) = heartbeat(&mut d, r).expect("answered");
                *epoch = e;
                if let Some(a) = a {
                    *assignment = a;
                }
            }
        }
        let state = d.core.consumer_group(&group_id(g)).map(|s| s.state);
        assert_eq!(state, Some(ConsumerGroupState::Stable), "group {g} settles");
        members.extend(owned.into_iter().map(|(id, (epoch, _))| (g, id, epoch)));
    }
    (d, members)
}

fn bench_consumer(c: &mut Criterion) {
    let (mut d, members) = stable_groups();
    heartbeats::bench(c, "consumer", &members, |r| heartbeat(&mut d, r), request, join);
}

criterion_group!(benches, bench_consumer);
criterion_main!(benches);
