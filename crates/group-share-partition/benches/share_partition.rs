//! Criterion benchmarks of the fetch path: one share fetch acquiring a 500-record
//! batch and its acknowledgement (ACCEPT) with the write's completion, in a loop
//! that moves the start offset forward by 500 each time, as a consumer keeping up
//! with a partition does. `whole`: the batch is acknowledged in one range (the
//! cache tracks it whole); `per_offset`: the client sends one type per offset (the
//! cache splits the batch into per-offset states first).
//!
//! `cargo bench -p group-share-partition --bench share_partition`

mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use group_share_partition::{
    AcknowledgeType, AcknowledgementBatch, AcquireMode, AcquireRequest, FetchedBatch, IsolationLevel,
    SharePartition, SharePartitionConfig,
};
use group_types::MemberId;

const BATCH: i64 = 500;

/// One round: fetch at the next offset, acquire the 500-record batch, acknowledge it.
fn round(sp: &mut SharePartition, member: &MemberId, now: i64, per_offset: bool) {
    let first = sp.next_fetch_offset();
    let fetched = [FetchedBatch::new(first, first + BATCH - 1)];
    let request = AcquireRequest {
        mode: AcquireMode::BatchOptimized,
        batch_size: BATCH as i32,
        max_fetch_records: BATCH as i32,
        fetch_offset: first,
        batches: &fetched,
        isolation: IsolationLevel::ReadUncommitted,
        aborted_transactions: &[],
    };
    let acquired = sp.acquire(member, request, now).expect("ordered batches");
    debug_assert_eq!(acquired.count, BATCH as i32);
    let ack = if per_offset {
        AcknowledgementBatch::per_offset(
            first,
            first + BATCH - 1,
            vec![AcknowledgeType::Accept.id(); BATCH as usize],
        )
    } else {
        AcknowledgementBatch::new(first, first + BATCH - 1, AcknowledgeType::Accept)
    };
    let write = sp.acknowledge(member, &[ack], now).expect("held by the member").expect("a write");
    let done = sp.complete_write(write.id, Ok(())).expect("issued");
    black_box(done);
}

fn benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("acquire_accept_500");
    group.throughput(Throughput::Elements(BATCH as u64));
    let member = MemberId::from("member-1");
    for (name, per_offset) in [("whole", false), ("per_offset", true)] {
        let mut sp = common::initialized(SharePartitionConfig::default());
        let mut now = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                now += 1;
                round(&mut sp, &member, now, per_offset);
            });
        });
        assert_eq!(sp.in_flight_record_count(), 0, "every round leaves the cache empty");
    }
    group.finish();
}

criterion_group!(share_partition, benches);
criterion_main!(share_partition);
