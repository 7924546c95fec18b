//! KIP-848 consumer groups through the core: keep-alive heartbeats of 10,000
//! Stable members in 100 groups (the classic heartbeat benchmark's shape), and
//! one member joining then leaving a Stable group of 100 (the bump, the target
//! assignment over every member, and the writes).

mod heartbeats;

use std::collections::HashMap;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, MetadataImage, Request, RequestId, Response, TopicImage,
};
use group_types::{ConsumerGroupHeartbeatRequest, ConsumerGroupState, TopicId, TopicIdPartitions};
use heartbeats::{GROUPS, MEMBERS, group_id, member_id};

/// The allocator group-server ships with (`--features system-allocator` for the system's).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// A driver that completes every write at once.
struct Driver {
    core: CoordinatorCore,
    next: u64,
    out: Effects,
}

impl Driver {
    fn send(&mut self, r: ConsumerGroupHeartbeatRequest) -> Option<(i32, Option<Vec<TopicIdPartitions>>)> {
        self.next += 1;
        let rid = RequestId(self.next);
        self.core.handle_into(1, rid, Request::from(r), &mut self.out);
        while let Some(w) = self.out.writes.pop() {
            let id = w.id;
            self.core.complete_write_into(1, id, Ok(()), &mut self.out);
        }
        let answer = self.out.responses.iter().find(|(r, _)| *r == rid).map(|(_, r)| r.clone());
        self.out.responses.clear();
        self.out.timers.clear();
        self.out.events.clear();
        match answer? {
            Response::ConsumerGroupHeartbeat(r) => Some((r.member_epoch, r.assignment)),
            _ => None,
        }
    }
}

/// `GROUPS` Stable groups of `MEMBERS` members, each on its own 100-partition topic.
fn stable_groups() -> (Driver, Vec<(usize, String, i32)>) {
    let topics =
        (0..GROUPS).map(|g| TopicImage::new(TopicId::from_u128(g as u128 + 1), format!("topic-{g:04}"), 100));
    let mut core = CoordinatorCore::new(CoordinatorConfig::default());
    core.update_metadata_image(Arc::new(MetadataImage::new(1, topics)));
    let mut d = Driver { core, next: 0, out: Effects::default() };
    let mut members = Vec::new();
    for g in 0..GROUPS {
        let mut owned: HashMap<String, (i32, Vec<TopicIdPartitions>)> = HashMap::new();
        for m in 0..MEMBERS {
            let id = member_id(g, m);
            let (epoch, assignment) = d.send(join(g, &id)).expect("joined");
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
                let (e, a) = d.send(r).expect("answered");
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
    heartbeats::bench(c, "consumer", &members, |r| d.send(r), request, join);
}

criterion_group!(benches, bench_consumer);
criterion_main!(benches);
