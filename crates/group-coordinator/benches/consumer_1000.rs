//! KIP-848 consumer groups in the workloads Kafka's own shard was measured on
//! (`benchmarks.md`): one settled group of 1,000 members subscribed to 10
//! topics of 1,000 partitions, the uniform server assignor.
//!
//! - `consumer_keepalive_1000_member_group`: a settled member's heartbeat with
//!   nothing to change (group id, member id and epoch only, as a client's
//!   keep-alive sends).
//! - `consumer_join_1000_member_group`: a new member joins, through to the
//!   records it writes (their write completes at once).
//! - `consumer_leave_1000_member_group`: a member leaves (epoch -1).
//! - `consumer_rebalance_1000_member_group`: one topic's partitions double,
//!   then every member heartbeats (acknowledging what it holds) until the
//!   group is settled again: every member's reconciliation.
//!
//! Each on the core alone (`core`) and through `GroupCoordinator` (`runtime`).
//! Join and leave are timed alone, each of a newcomer that joins and leaves;
//! the doubling is timed and its undoing is not.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, GroupCoordinator, ManualClock, MetadataImage, Request,
    RequestId, Response, TopicImage,
};
use group_offsets::MemoryMetadataStore;
use group_types::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, GroupId, MemberId, TopicId,
    TopicIdPartitions,
};

/// The allocator group-server ships with (`--features system-allocator` for the system's).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const GROUP: &str = "kafka-shaped-group";
const MEMBERS: usize = 1_000;
const TOPICS: usize = 10;
const PARTITIONS: u32 = 1_000;

fn topic(t: usize) -> String {
    format!("topic-{t:02}")
}

/// The 10 topics, the first with `first` partitions.
fn image(version: i64, first: u32) -> MetadataImage {
    MetadataImage::new(
        version,
        (0..TOPICS).map(|t| {
            let partitions = if t == 0 { first } else { PARTITIONS };
            TopicImage::new(TopicId::from_u128(t as u128 + 1), topic(t), partitions)
        }),
    )
}

/// A member's id, shared as the front end shares the ids it decodes from a
/// request frame: each request takes a reference, not a copy.
fn member_id(m: usize) -> MemberId {
    shared(MemberId::from(format!("member-{m:05}-Zm9vYmFyYmF6cXV4")))
}

/// `id` with its bytes already reference-counted (`Bytes` makes an owned buffer
/// shared at its first clone), so that the timed requests clone it as a decoded
/// frame's slice is cloned.
fn shared(id: MemberId) -> MemberId {
    drop(id.clone());
    id
}

fn keepalive(member: &MemberId, epoch: i32) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        group_id: GroupId::from_static(GROUP),
        member_id: member.clone(),
        member_epoch: epoch,
        ..ConsumerGroupHeartbeatRequest::default()
    }
}

fn join(member: &MemberId) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        client_id: "bench".into(),
        client_host: "/127.0.0.1".into(),
        rebalance_timeout_ms: 300_000,
        subscribed_topic_names: Some((0..TOPICS).map(topic).collect()),
        topic_partitions: Some(Vec::new()),
        ..keepalive(member, 0)
    }
}

/// Where to send a heartbeat: the core alone, or the runtime around it.
trait Target {
    fn send(&mut self, r: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse;
    fn set_image(&mut self, image: MetadataImage);
}

/// The core, with every write completed at once.
struct Core {
    core: CoordinatorCore,
    next: u64,
    out: Effects,
}

impl Target for Core {
    fn send(&mut self, r: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse {
        self.next += 1;
        let rid = RequestId(self.next);
        self.core.handle_into(1, rid, Request::from(r), &mut self.out);
        while let Some(w) = self.out.writes.pop() {
            self.core.complete_write_into(1, w.id, Ok(()), &mut self.out);
        }
        let answer =
            self.out.responses.iter().position(|(r, _)| *r == rid).map(|i| self.out.responses.swap_remove(i));
        self.out.responses.clear();
        self.out.timers.clear();
        self.out.events.clear();
        match answer {
            Some((_, Response::ConsumerGroupHeartbeat(r))) => r,
            other => panic!("not a heartbeat answer: {other:?}"),
        }
    }

    fn set_image(&mut self, image: MetadataImage) {
        self.core.update_metadata_image(Arc::new(image));
    }
}

/// The runtime over a memory store.
struct Runtime(GroupCoordinator);

impl Target for Runtime {
    fn send(&mut self, r: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse {
        self.0.handle_consumer_group_heartbeat(r).expect("the runtime answers")
    }

    fn set_image(&mut self, image: MetadataImage) {
        self.0.update_metadata_image(image);
    }
}

/// Each member's epoch and what it holds, as its client knows them.
type Members = HashMap<MemberId, (i32, Vec<TopicIdPartitions>)>;

/// Every member heartbeats, acknowledging what it holds, until a round changes
/// nothing and every member is at one epoch: the group is settled (KIP-848's
/// Stable: every member at the target assignment of the group's epoch).
fn settle(target: &mut impl Target, members: &mut Members) {
    for _ in 0..20 {
        let mut changed = false;
        for (id, (epoch, held)) in members.iter_mut() {
            let r = ConsumerGroupHeartbeatRequest {
                topic_partitions: Some(held.clone()),
                ..keepalive(id, *epoch)
            };
            let answer = target.send(r);
            assert_eq!(answer.error_code, group_types::ErrorCode::None, "member {id}");
            changed |= answer.member_epoch != *epoch;
            *epoch = answer.member_epoch;
            if let Some(assignment) = answer.assignment {
                changed |= assignment != *held;
                *held = assignment;
            }
        }
        let first = members.values().next().map(|(e, _)| *e);
        if !changed && members.values().all(|(e, _)| Some(*e) == first) {
            return;
        }
    }
    panic!("the group did not settle in 20 rounds");
}

/// A settled group of `MEMBERS`.
fn settled(target: &mut impl Target) -> Members {
    let mut members = Members::new();
    for m in 0..MEMBERS {
        let id = member_id(m);
        let answer = target.send(join(&id));
        members.insert(id, (answer.member_epoch, answer.assignment.unwrap_or_default()));
    }
    settle(target, &mut members);
    members
}

/// One keep-alive: a function of its own so that a profile can collect it alone
/// (`valgrind --tool=callgrind --toggle-collect='*beat*'`).
#[inline(never)]
fn beat(target: &mut impl Target, id: &MemberId, epoch: i32) -> ConsumerGroupHeartbeatResponse {
    target.send(keepalive(id, epoch))
}

/// One join, for the same reason as [`beat`] (`--toggle-collect='*newcomer*'`).
#[inline(never)]
fn newcomer(target: &mut impl Target, id: &MemberId) -> ConsumerGroupHeartbeatResponse {
    target.send(join(id))
}

/// Which step of [`join_then_leave`] is timed.
#[derive(Clone, Copy)]
enum Step {
    Join,
    Leave,
}

/// A newcomer joins the group, then leaves it: how long the `timed` step took.
fn join_then_leave(target: &mut impl Target, id: &MemberId, timed: Step) -> Duration {
    let started = Instant::now();
    black_box(newcomer(target, id));
    let joined = started.elapsed();
    let started = Instant::now();
    black_box(target.send(keepalive(id, -1)));
    let left = started.elapsed();
    match timed {
        Step::Join => joined,
        Step::Leave => left,
    }
}

fn core() -> Core {
    let mut core = CoordinatorCore::new(CoordinatorConfig::default());
    core.update_metadata_image(Arc::new(image(1, PARTITIONS)));
    Core { core, next: 0, out: Effects::default() }
}

fn runtime() -> Runtime {
    let c = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), CoordinatorConfig::default())
        .clock(Arc::new(ManualClock::new(0)))
        .metadata_image(image(1, PARTITIONS))
        .open()
        .expect("coordinator");
    Runtime(c)
}

fn bench_target(c: &mut Criterion, name: &str, target: &mut impl Target) {
    let mut members = settled(target);
    let ids: Vec<(MemberId, i32)> = members.iter().map(|(id, (e, _))| (id.clone(), *e)).collect();

    let mut group = c.benchmark_group("consumer_keepalive_1000_member_group");
    group.throughput(Throughput::Elements(1));
    let mut i = 0;
    group.bench_function(name, |b| {
        b.iter(|| {
            i = (i + 1) % ids.len();
            let (id, epoch) = &ids[i];
            black_box(beat(target, id, *epoch))
        })
    });
    group.finish();

    let mut n = 0;
    for (bench, timed) in
        [("consumer_join_1000_member_group", Step::Join), ("consumer_leave_1000_member_group", Step::Leave)]
    {
        let mut group = c.benchmark_group(bench);
        group.sample_size(20);
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        n += 1;
                        join_then_leave(target, &shared(format!("newcomer-{n}").into()), timed)
                    })
                    .sum()
            })
        });
        group.finish();
    }

    // The joins and leaves above moved nobody for good, but bumped epochs:
    // everyone catches up before the rebalances.
    settle(target, &mut members);
    let mut version = 1;
    let mut group = c.benchmark_group("consumer_rebalance_1000_member_group");
    group.sample_size(10);
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                version += 1;
                let started = Instant::now();
                target.set_image(image(version, 2 * PARTITIONS));
                settle(target, &mut members);
                timed += started.elapsed();
                version += 1;
                target.set_image(image(version, PARTITIONS));
                settle(target, &mut members);
            }
            timed
        })
    });
    group.finish();
}

fn bench_consumer_1000(c: &mut Criterion) {
    bench_target(c, "core", &mut core());
    bench_target(c, "runtime", &mut runtime());
}

criterion_group!(benches, bench_consumer_1000);
criterion_main!(benches);
