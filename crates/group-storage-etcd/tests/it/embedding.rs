//! The store on the caller's runtime: its blocking methods answer when called
//! from that runtime's own workers (they step out of the worker, they do not
//! starve the task they wait for), and dropping the store leaves no append
//! unanswered and loses none it acknowledged.

use std::sync::mpsc;
use std::time::Duration;

use group_offsets::{AppendCompletion, CoordinatorPartition, MetadataStore, OwnerEpoch, StorageError};

use crate::common::{RUNTIME, config, connect, etcd, offset};

const P: CoordinatorPartition = CoordinatorPartition(5);
const APPENDS: i64 = 20;

#[test]
fn blocking_calls_from_the_runtimes_own_workers_answer() {
    let cluster = etcd();
    let store = connect(config(&cluster, "from-a-worker"));
    // Every call below runs in a task of the runtime the store's tasks run on.
    let loaded = RUNTIME
        .block_on(RUNTIME.spawn(async move {
            store.append_blocking(P, OwnerEpoch(2), vec![offset("g", "t", 0, 42, "")])?;
            let epoch = store.owner_epoch(P)?;
            store.load(P).map(|loaded| (epoch, loaded))
        }))
        .expect("the task ran")
        .expect("the store answered");
    let (epoch, loaded) = loaded;
    assert_eq!((epoch, loaded.epoch), (OwnerEpoch(2), OwnerEpoch(2)));
    assert_eq!(loaded.groups.offsets[0].get("t", 0).map(|o| o.offset), Some(42));
}

#[test]
fn a_dropped_store_answers_every_append_and_keeps_what_it_acknowledged() {
    let cluster = etcd();
    let config = config(&cluster, "drop");
    let store = connect(config.clone());
    let (tx, rx) = mpsc::channel();
    for value in 0..APPENDS {
        let tx = tx.clone();
        let completion = AppendCompletion::new(move |result| {
            let _ = tx.send((value, result));
        });
        store.append(P, OwnerEpoch(1), vec![offset("g", "t", 0, value, "")], completion);
    }
    // Dropped with appends queued and in flight: each is still answered,
    // committed ones `Ok`, the others `Unavailable`.
    drop(store);
    let mut outcomes: Vec<(i64, Result<(), StorageError>)> = (0..APPENDS)
        .map(|i| rx.recv_timeout(Duration::from_secs(10)).unwrap_or_else(|_| panic!("append {i} unanswered")))
        .collect();
    outcomes.sort_by_key(|(value, _)| *value);
    let answered: Vec<i64> = outcomes.iter().map(|(value, _)| *value).collect();
    assert_eq!(answered, (0..APPENDS).collect::<Vec<_>>(), "each append answered once");
    for (value, result) in &outcomes {
        assert!(
            matches!(result, Ok(()) | Err(StorageError::Unavailable { .. })),
            "append {value}: {result:?}"
        );
    }
    // What a fresh store loads is the last append acknowledged, or a later one
    // whose outcome was unknown; never an earlier one.
    let last_ok = outcomes.iter().filter(|(_, r)| r.is_ok()).map(|(v, _)| *v).max();
    let loaded = connect(config).load(P).expect("load");
    let visible = loaded.groups.offsets.first().and_then(|g| g.get("t", 0)).map(|o| o.offset);
    assert!(visible >= last_ok, "acknowledged {last_ok:?}, loaded {visible:?}");
}

/// A cluster node loads the partitions it comes to own all at once, each on a
/// thread of its runtime's blocking pool, and may size the pool to just that.
/// The loads must still answer: the store needs no blocking thread of its own.
#[test]
fn loads_that_fill_the_blocking_pool_still_answer() {
    const PARTITIONS: u32 = 4;
    let cluster = etcd();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(PARTITIONS as usize)
        .enable_all()
        .build()
        .expect("a runtime");
    let config = group_storage_etcd::EtcdConfig { partitions: PARTITIONS, ..config(&cluster, "pool") };
    let client = runtime.block_on(group_storage_etcd::connect(&config)).expect("connect");
    let store = group_storage_etcd::EtcdStore::new(config, client, runtime.handle()).expect("open");
    for p in 0..PARTITIONS {
        store
            .append_blocking(CoordinatorPartition(p), OwnerEpoch(1), vec![offset("g", "t", p as i32, 7, "")])
            .expect("append");
    }
    let loads: Vec<_> = (0..PARTITIONS)
        .map(|p| {
            let store = store.clone();
            runtime.spawn_blocking(move || store.load(CoordinatorPartition(p)))
        })
        .collect();
    runtime.block_on(async {
        for (p, load) in loads.into_iter().enumerate() {
            // A hang guard, not a speed target: a deadlock never answers.
            let loaded = tokio::time::timeout(Duration::from_secs(30), load)
                .await
                .unwrap_or_else(|_| panic!("the load of partition {p} never answered"))
                .expect("the load task ran")
                .expect("loaded");
            let value = loaded.groups.offsets[0].get("t", p as i32).map(|o| o.offset);
            assert_eq!(value, Some(7), "partition {p}");
        }
    });
}
