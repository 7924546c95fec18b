//! Transactional offsets (`benchmarks.md` "Coordinator"): a transaction of one
//! partition (TxnOffsetCommit by a member of a Stable group, then the COMMIT
//! marker that makes it visible) next to a plain OffsetCommit of one partition
//! in the same run, on the core alone and through `GroupCoordinator` over
//! memory storage. Per-second figures are the inverse of the medians.

mod common;

/// The allocator group-server ships with (`--features system-allocator` for the system's).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::sync::Arc;

use common::{config, member_id, stored};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use group_coordinator::{CoordinatorCore, Effects, GroupCoordinator, ManualClock, Request, RequestId};
use group_offsets::{MemoryMetadataStore, MetadataStore, OwnerEpoch, Record};
use group_types::{
    OffsetCommitData, OffsetCommitRequest, TransactionResult, TxnOffsetCommitRequest, WriteTxnMarkersRequest,
};

const GROUPS: usize = 100;

fn plain(g: usize) -> OffsetCommitRequest {
    OffsetCommitRequest {
        group_id: format!("group-{g}").into(),
        generation_id: 1,
        member_id: member_id(g, 0).into(),
        ..OffsetCommitRequest::default()
    }
    .with_offset("orders", 0, OffsetCommitData::new(1_000))
}

/// Group `g`'s member 0 commits through producer `g`.
fn txn(g: usize) -> TxnOffsetCommitRequest {
    TxnOffsetCommitRequest {
        transactional_id: format!("tx-{g}"),
        group_id: format!("group-{g}").into(),
        producer_id: g as i64,
        producer_epoch: 0,
        generation_id: 1,
        member_id: member_id(g, 0).into(),
        ..TxnOffsetCommitRequest::default()
    }
    .with_offset("orders", 0, OffsetCommitData::new(1_000))
}

fn marker(core_partition: i32, g: usize) -> WriteTxnMarkersRequest {
    WriteTxnMarkersRequest::one(g as i64, TransactionResult::Commit, &[core_partition])
}

/// Runs `request` in `core`, completing its writes at once.
fn run(
    core: &mut CoordinatorCore,
    rid: &mut u64,
    request: Request,
    out: &mut Effects,
    writes: &mut Vec<group_coordinator::Write>,
) {
    *rid += 1;
    core.handle_into(1, RequestId(*rid), request, out);
    std::mem::swap(&mut out.writes, writes);
    for w in writes.drain(..) {
        core.complete_write_into(1, w.id, Ok(()), out);
    }
    black_box(&*out);
    out.responses.clear();
    out.timers.clear();
    out.writes.clear();
    out.events.clear();
}

fn bench_transactions(c: &mut Criterion) {
    let mut group = c.benchmark_group("txn_offset_commit_1_partition");
    let mut core = CoordinatorCore::new(config());
    let _ = core.load(0, stored(GROUPS, 10));
    let (mut rid, mut i) = (0, 0);
    let mut out = Effects::default();
    let mut writes = Vec::new();
    // What is measured works: a transaction's offset is visible after its marker.
    let probe = TxnOffsetCommitRequest { producer_id: 999, ..txn(0) }.with_offset(
        "orders",
        1,
        OffsetCommitData::new(7),
    );
    run(&mut core, &mut rid, Request::from(probe), &mut out, &mut writes);
    assert!(core.committed_offset("group-0", "orders", 1).is_none(), "pending until the marker");
    run(&mut core, &mut rid, Request::from(marker(0, 999)), &mut out, &mut writes);
    assert_eq!(core.committed_offset("group-0", "orders", 1).map(|o| o.offset), Some(7));
    group.bench_function("core/offset_commit", |b| {
        b.iter_batched(
            || {
                i = (i + 1) % GROUPS;
                Request::from(plain(i))
            },
            |request| run(&mut core, &mut rid, request, &mut out, &mut writes),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("core/txn_offset_commit_then_marker", |b| {
        b.iter_batched(
            || {
                i = (i + 1) % GROUPS;
                (Request::from(txn(i)), Request::from(marker(0, i)))
            },
            |(commit, end)| {
                run(&mut core, &mut rid, commit, &mut out, &mut writes);
                run(&mut core, &mut rid, end, &mut out, &mut writes);
            },
            BatchSize::SmallInput,
        )
    });

    let storage = MemoryMetadataStore::new();
    for record in stored(GROUPS, 10).groups {
        let partition = storage.partition_of(&record.group_id);
        storage
            .append_blocking(partition, OwnerEpoch::default(), vec![Record::Group(Box::new(record))])
            .expect("memory storage");
    }
    let runtime = GroupCoordinator::with_clock(Arc::new(storage), config(), Arc::new(ManualClock::new(0)))
        .expect("coordinator");
    let partitions: Vec<i32> = (0..GROUPS).map(|g| runtime.shard_of(&format!("group-{g}")) as i32).collect();
    let probe = TxnOffsetCommitRequest { producer_id: 999, ..txn(0) }.with_offset(
        "orders",
        1,
        OffsetCommitData::new(7),
    );
    let answer = runtime.handle_txn_offset_commit(probe).expect("running");
    assert!(answer.iter().all(|(_, _, code)| code == group_types::ErrorCode::None), "{answer:?}");
    runtime.handle_write_txn_markers(marker(partitions[0], 999)).expect("running");
    let fetch = group_types::OffsetFetchRequest::all("group-0");
    let fetched = runtime.handle_offset_fetch(fetch).expect("running");
    assert_eq!(fetched.get("orders", 1).map(|d| d.offset), Some(7), "{fetched:?}");
    let mut j = 0;
    group.bench_function("runtime_memory_storage/offset_commit", |b| {
        b.iter_batched(
            || {
                j = (j + 1) % GROUPS;
                plain(j)
            },
            |request| black_box(runtime.handle_offset_commit(request).expect("running")),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("runtime_memory_storage/txn_offset_commit_then_marker", |b| {
        b.iter_batched(
            || {
                j = (j + 1) % GROUPS;
                (txn(j), marker(partitions[j], j))
            },
            |(commit, end)| {
                black_box(runtime.handle_txn_offset_commit(commit).expect("running"));
                black_box(runtime.handle_write_txn_markers(end).expect("running"))
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_transactions);
criterion_main!(benches);
