//! KIP-932 share groups through the core, beside the KIP-848 consumer benchmark's
//! shapes (`benches/consumer.rs`): keep-alive heartbeats of 10,000 settled members
//! in 100 groups, and one member joining then leaving a settled group of 100.

mod heartbeats;

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, MetadataImage, Request, RequestId, Response, TopicImage,
};
use group_types::{ShareGroupHeartbeatRequest, TopicId};
use heartbeats::{GROUPS, MEMBERS, group_id, member_id};

/// The allocator group-server ships with (`--features system-allocator` for the system's).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn request(g: usize, member: &str, epoch: i32) -> ShareGroupHeartbeatRequest {
    ShareGroupHeartbeatRequest {
        group_id: group_id(g).into(),
        member_id: member.into(),
        member_epoch: epoch,
        client_id: "bench".into(),
        client_host: "/127.0.0.1".into(),
        ..ShareGroupHeartbeatRequest::default()
    }
}

fn join(g: usize, member: &str) -> ShareGroupHeartbeatRequest {
    ShareGroupHeartbeatRequest {
        subscribed_topic_names: Some(vec![format!("topic-{g:04}")]),
        ..request(g, member, 0)
    }
}

/// A driver that completes every write at once, and every share-partition
/// initialization the heartbeats ask for.
struct Driver {
    core: CoordinatorCore,
    next: u64,
    out: Effects,
}

impl Driver {
    fn send(&mut self, r: ShareGroupHeartbeatRequest) -> Option<i32> {
        self.next += 1;
        let rid = RequestId(self.next);
        self.core.handle_into(1, rid, Request::from(r), &mut self.out);
        while let Some(w) = self.out.writes.pop() {
            self.core.complete_write_into(1, w.id, Ok(()), &mut self.out);
        }
        for init in self.core.take_share_state_initializations() {
            let parts: Vec<(TopicId, Vec<i32>)> = init
                .topics
                .iter()
                .map(|t| (t.topic_id, t.partitions.iter().map(|p| p.partition).collect()))
                .collect();
            let mut fx = self.core.share_group_state_initialized(1, init.group_id.as_str(), &parts, true);
            while let Some(w) = fx.writes.pop() {
                self.core.complete_write_into(1, w.id, Ok(()), &mut fx);
            }
        }
        let answer = self.out.responses.iter().find(|(r, _)| *r == rid).map(|(_, r)| r.clone());
        self.out.responses.clear();
        self.out.timers.clear();
        self.out.events.clear();
        match answer? {
            Response::ShareGroupHeartbeat(r) if r.error_code.is_ok() => Some(r.member_epoch),
            _ => None,
        }
    }
}

/// `GROUPS` settled share groups of `MEMBERS` members, each on its own 100-partition topic.
fn settled_groups() -> (Driver, Vec<(usize, String, i32)>) {
    let topics =
        (0..GROUPS).map(|g| TopicImage::new(TopicId::from_u128(g as u128 + 1), format!("topic-{g:04}"), 100));
    let mut config = CoordinatorConfig::default();
    config.share.enabled = true;
    config.share.max_size = 1000;
    let mut core = CoordinatorCore::new(config);
    core.update_metadata_image(Arc::new(MetadataImage::new(1, topics)));
    let mut d = Driver { core, next: 0, out: Effects::default() };
    let mut members = Vec::new();
    for g in 0..GROUPS {
        let mut epochs = Vec::new();
        for m in 0..MEMBERS {
            let id = member_id(g, m);
            let epoch = d.send(join(g, &id)).expect("joined");
            epochs.push((id, epoch));
        }
        // Every member heartbeats until all are at the group's epoch.
        for _ in 0..4 {
            for (id, epoch) in epochs.iter_mut() {
                *epoch = d.send(request(g, id, *epoch)).expect("answered");
            }
        }
        let snapshot = d.core.share_group(&group_id(g)).expect("a share group");
        assert!(
            snapshot.members.iter().all(|m| m.member_epoch == snapshot.assignment_epoch),
            "group {g} settles"
        );
        assert!(snapshot.members.iter().all(|m| !m.assigned.is_empty()), "group {g} assigns");
        members.extend(epochs.into_iter().map(|(id, epoch)| (g, id, epoch)));
    }
    (d, members)
}

fn bench_share(c: &mut Criterion) {
    let (mut d, members) = settled_groups();
    heartbeats::bench(c, "share", &members, |r| d.send(r), request, join);
}

criterion_group!(benches, bench_share);
criterion_main!(benches);
