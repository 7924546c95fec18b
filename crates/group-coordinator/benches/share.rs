//! KIP-932 share groups through the core, beside the KIP-848 consumer benchmark's
//! shapes (`benches/consumer.rs`): keep-alive heartbeats of 10,000 settled members
//! in 100 groups, and one member joining then leaving a settled group of 100.

mod heartbeats;

use criterion::{Criterion, criterion_group, criterion_main};
use group_coordinator::{CoordinatorConfig, CoordinatorCore, Response};
use group_types::{ShareGroupHeartbeatRequest, TopicId};
use heartbeats::{Driver, GROUPS, MEMBERS, group_id, member_id};

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

/// A heartbeat's answer, the member's epoch, once every share-partition initialization
/// it asked is done.
fn heartbeat(d: &mut Driver, r: ShareGroupHeartbeatRequest) -> Option<i32> {
    let initialize = |core: &mut CoordinatorCore| {
        for init in core.take_share_state_initializations() {
            let parts: Vec<(TopicId, Vec<i32>)> = init
                .topics
                .iter()
                .map(|t| (t.topic_id, t.partitions.iter().map(|p| p.partition).collect()))
                .collect();
            let mut fx = core.share_group_state_initialized(1, init.group_id.as_str(), &parts, true);
            while let Some(w) = fx.writes.pop() {
                core.complete_write_into(1, w.id, Ok(()), &mut fx);
            }
        }
    };
    match d.send(r.into(), initialize)? {
        Response::ShareGroupHeartbeat(r) if r.error_code.is_ok() => Some(r.member_epoch),
        _ => None,
    }
}

/// `GROUPS` settled share groups of `MEMBERS` members, each on its own 100-partition topic.
fn settled_groups() -> (Driver, Vec<(usize, String, i32)>) {
    let mut config = CoordinatorConfig::default();
    config.share.enabled = true;
    config.share.max_size = 1000;
    let mut d = Driver::new(config);
    let mut members = Vec::new();
    for g in 0..GROUPS {
        let mut epochs = Vec::new();
        for m in 0..MEMBERS {
            let id = member_id(g, m);
            let epoch = heartbeat(&mut d, join(g, &id)).expect("joined");
            epochs.push((id, epoch));
        }
        // Every member heartbeats until all are at the group's epoch.
        for _ in 0..4 {
            for (id, epoch) in epochs.iter_mut() {
                *epoch = heartbeat(&mut d, request(g, id, *epoch)).expect("answered");
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
    heartbeats::bench(c, "share", &members, |r| heartbeat(&mut d, r), request, join);
}

criterion_group!(benches, bench_share);
criterion_main!(benches);
