//! Memory per in-flight record, measured by dhat's counting allocator (bytes the
//! partition asked for, and the number of allocations, each of which costs the
//! system allocator about 16 bytes more):
//!
//! - `whole`: 200 acquired batches of 500 records, each tracked as one state;
//! - `per_offset`: the same after one offset of each batch is released, so every
//!   batch is tracked offset by offset (the worst case: a client acknowledging
//!   record by record).
//!
//! `cargo bench -p group-share-partition --bench memory`

mod common;

use std::hint::black_box;

use group_share_partition::{
    AcknowledgeType, AcknowledgementBatch, AcquireMode, AcquireRequest, FetchedBatch, IsolationLevel,
    SharePartitionConfig,
};
use group_types::MemberId;

#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

const BATCHES: i64 = 200;
const BATCH: i64 = 500;

fn live() -> (i64, i64) {
    let stats = dhat::HeapStats::get();
    (stats.curr_bytes as i64, stats.curr_blocks as i64)
}

fn main() {
    // Testing mode: statistics only, no profile file written.
    let _profiler = dhat::Profiler::builder().testing().trim_backtraces(Some(4)).build();
    let config = SharePartitionConfig {
        max_in_flight_records: (BATCHES * BATCH) as i32,
        max_delivery_count: 5,
        record_lock_duration_ms: 30_000,
    };
    let mut sp = common::initialized(config);
    let member = MemberId::from("member-1");
    let fetched: Vec<FetchedBatch> =
        (0..BATCHES).map(|b| FetchedBatch::new(b * BATCH, b * BATCH + BATCH - 1)).collect();

    let (bytes_before, allocations_before) = live();
    for b in &fetched {
        let request = AcquireRequest {
            mode: AcquireMode::BatchOptimized,
            batch_size: BATCH as i32,
            max_fetch_records: BATCH as i32,
            fetch_offset: b.base_offset,
            batches: std::slice::from_ref(b),
            isolation: IsolationLevel::ReadUncommitted,
            aborted_transactions: &[],
        };
        let acquired = sp.acquire(&member, request, 0).expect("ordered batches");
        assert_eq!(acquired.count, BATCH as i32);
    }
    report("whole batches", bytes_before, allocations_before);

    for b in &fetched {
        let release = AcknowledgementBatch::new(b.base_offset, b.base_offset, AcknowledgeType::Release);
        let write = sp.acknowledge(&member, &[release], 0).expect("held").expect("a write");
        sp.complete_write(write.id, Ok(())).expect("issued");
    }
    report("per-offset states", bytes_before, allocations_before);
    black_box(sp.in_flight_record_count());
}

fn report(what: &str, bytes_before: i64, allocations_before: i64) {
    let (bytes, allocations) = live();
    let records = (BATCHES * BATCH) as f64;
    let per_record = (bytes - bytes_before) as f64 / records;
    let allocations_per_record = (allocations - allocations_before) as f64 / records;
    println!(
        "memory per in-flight record ({what}, {BATCHES} batches of {BATCH}): {per_record:.1} bytes requested in \
         {allocations_per_record:.4} allocations (about {:.1} bytes with the allocator's own 16 per allocation)",
        per_record + 16.0 * allocations_per_record
    );
}
