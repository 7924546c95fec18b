//! Memory per Stable member (`benchmarks.md` "Coordinator"): 1,000 groups of 100
//! members, each with a 50-byte subscription and a 20-byte assignment, loaded into
//! one core. Measured by dhat's counting allocator, so the figure is what the
//! core keeps (bytes it asked for, and the number of allocations, each of which
//! costs the system allocator about 16 bytes more), whatever else the process did
//! before.
//!
//! The same for a settled KIP-848 member: 100 consumer groups of 100 members,
//! each group on its own topic of 100 partitions, every member at the target
//! assignment (one partition each), the metadata image excluded.
//!
//! And what committed offsets cost: simple groups (offsets and nothing else) of 1
//! and of 100 offsets, which separates what a group costs from what an offset
//! costs (`docs/SCALING.md` sizes a node with them).
//!
//! `cargo bench -p group-coordinator --bench memory`

mod common;

use std::hint::black_box;

use std::sync::Arc;

use common::{config, stored};
use group_coordinator::{CoordinatorCore, MetadataImage, Request, RequestId, Response, TopicImage};
use group_offsets::{Fold, Record};
use group_types::{
    ConsumerGroupHeartbeatRequest, OffsetAndMetadata, TopicId, TopicIdPartitions, TopicPartition,
};

#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

fn live() -> (i64, i64) {
    let stats = dhat::HeapStats::get();
    (stats.curr_bytes as i64, stats.curr_blocks as i64)
}

fn main() {
    const GROUPS: usize = 1_000;
    const MEMBERS: usize = 100;
    // Testing mode: statistics only, no profile file written.
    let _profiler = dhat::Profiler::builder().testing().trim_backtraces(Some(4)).build();
    let mut core = CoordinatorCore::new(config());
    let (bytes_before, allocations_before) = live();
    for g in 0..GROUPS {
        // One group at a time: the input is freed before the next, so what stays
        // live is what the core keeps.
        let mut one = stored(1, MEMBERS);
        for record in &mut one.groups {
            record.group_id = format!("group-{g}").into();
        }
        let _ = core.load(0, one);
    }
    let (bytes_after, allocations_after) = live();
    let members = (GROUPS * MEMBERS) as f64;
    let bytes = (bytes_after - bytes_before) as f64 / members;
    let allocations = (allocations_after - allocations_before) as f64 / members;
    println!(
        "memory per Stable member (core, 50-byte subscription, 20-byte assignment, {GROUPS} groups of \
         {MEMBERS}): {bytes:.0} bytes requested in {allocations:.2} allocations \
         (about {:.0} bytes with the allocator's own 16 per allocation)",
        bytes + 16.0 * allocations
    );
    black_box(core.group_count());
    consumer_members();
    let (one, per_one) = offsets(10_000, 1);
    let (hundred, per_hundred) = offsets(1_000, 100);
    // Bytes for g groups of n offsets: g * (group + n * offset).
    let offset = (hundred - one) / 99.0;
    let group = one - offset;
    println!(
        "memory per simple group with committed offsets (core): {one:.0} bytes for 1 offset \
         ({per_one:.2} allocations), {hundred:.0} bytes for 100 ({per_hundred:.2} allocations): \
         about {group:.0} bytes per group and {offset:.0} bytes per offset"
    );
}

/// Bytes and allocations per group of `groups` simple groups of `partitions`
/// committed offsets each (one topic, no metadata), loaded into one core.
fn offsets(groups: usize, partitions: i32) -> (f64, f64) {
    let mut core = CoordinatorCore::new(config());
    let topic: Arc<str> = Arc::from("orders-topic");
    let (bytes_before, allocations_before) = live();
    for g in 0..groups {
        let group_id: Arc<str> = Arc::from(format!("simple-group-{g:06}"));
        let mut fold = Fold::new();
        fold.apply((0..partitions).map(|p| Record::Offset {
            group_id: Arc::clone(&group_id),
            partition: TopicPartition::new(Arc::clone(&topic), p),
            offset: OffsetAndMetadata::new(1_000_000 + i64::from(p), 1_700_000_000_000),
        }));
        let _ = core.load(0, fold.into_stored());
    }
    let (bytes_after, allocations_after) = live();
    black_box(core.group_count());
    let n = groups as f64;
    ((bytes_after - bytes_before) as f64 / n, (allocations_after - allocations_before) as f64 / n)
}

/// Memory per settled consumer-protocol member.
fn consumer_members() {
    const GROUPS: usize = 100;
    const MEMBERS: usize = 100;
    let topics =
        (0..GROUPS).map(|g| TopicImage::new(TopicId::from_u128(g as u128 + 1), format!("topic-{g}"), 100));
    let mut core = CoordinatorCore::new(config());
    core.update_metadata_image(Arc::new(MetadataImage::new(1, topics)));
    let mut next = 0;
    let mut send = |core: &mut CoordinatorCore, r: ConsumerGroupHeartbeatRequest| {
        next += 1;
        let mut fx = core.handle(0, RequestId(next), Request::from(r));
        while let Some(w) = fx.writes.pop() {
            let more = core.complete_write(0, w.id, Ok(()));
            fx.responses.extend(more.responses);
            fx.writes.extend(more.writes);
        }
        fx.responses.into_iter().find_map(|(id, r)| match r {
            Response::ConsumerGroupHeartbeat(r) if id == RequestId(next) => Some(r),
            _ => None,
        })
    };
    let (bytes_before, allocations_before) = live();
    for g in 0..GROUPS {
        let mut held: Vec<(String, i32, Vec<TopicIdPartitions>)> = Vec::new();
        for m in 0..MEMBERS {
            let id = format!("member-{g:04}-{m:05}-Zm9vYmFyYmF6cXV4");
            let r = ConsumerGroupHeartbeatRequest {
                group_id: format!("group-{g}").into(),
                member_id: id.as_str().into(),
                member_epoch: 0,
                rebalance_timeout_ms: 300_000,
                subscribed_topic_names: Some(vec![format!("topic-{g}")]),
                topic_partitions: Some(Vec::new()),
                client_id: "consumer".into(),
                client_host: "/127.0.0.1".into(),
                ..ConsumerGroupHeartbeatRequest::default()
            };
            let answer = send(&mut core, r).expect("joined");
            held.push((id, answer.member_epoch, answer.assignment.unwrap_or_default()));
        }
        // Everyone acknowledges what it holds until nothing changes.
        for _ in 0..20 {
            let mut changed = false;
            for (id, epoch, assignment) in &mut held {
                let r = ConsumerGroupHeartbeatRequest {
                    group_id: format!("group-{g}").into(),
                    member_id: id.as_str().into(),
                    member_epoch: *epoch,
                    topic_partitions: Some(assignment.clone()),
                    client_id: "consumer".into(),
                    client_host: "/127.0.0.1".into(),
                    ..ConsumerGroupHeartbeatRequest::default()
                };
                let answer = send(&mut core, r).expect("answered");
                changed |= answer.member_epoch != *epoch || answer.assignment.is_some();
                *epoch = answer.member_epoch;
                if let Some(a) = answer.assignment {
                    *assignment = a;
                }
            }
            if !changed {
                break;
            }
        }
    }
    let (bytes_after, allocations_after) = live();
    let members = (GROUPS * MEMBERS) as f64;
    let bytes = (bytes_after - bytes_before) as f64 / members;
    let allocations = (allocations_after - allocations_before) as f64 / members;
    println!(
        "memory per settled consumer-protocol member (core, one partition each, {GROUPS} groups of \
         {MEMBERS}): {bytes:.0} bytes requested in {allocations:.2} allocations \
         (about {:.0} bytes with the allocator's own 16 per allocation)",
        bytes + 16.0 * allocations
    );
    black_box(core.group_count());
}
