//! Group commit across partitions: appends of several partitions waiting at
//! once go to etcd in one transaction, each still fenced on its own, and a
//! partition's appends keep their order with several transactions in flight.

use std::sync::{Arc, Mutex};

use group_offsets::{AppendCompletion, CoordinatorPartition, MetadataStore, OwnerEpoch, StorageError};
use group_storage_etcd::EtcdConfig;

use crate::common::{config, connect, etcd, offset};

const PARTITIONS: u32 = 12;
const FENCED: CoordinatorPartition = CoordinatorPartition(5);

/// Per partition, `(append number, outcome)` in the order appends completed.
type Outcomes = Vec<Vec<(i64, Result<(), StorageError>)>>;

/// Appends `per_partition` commits to every partition without waiting, and
/// returns, per partition, the outcomes in the order they completed.
fn append_everywhere(store: &group_storage_etcd::EtcdStore, per_partition: i64) -> Outcomes {
    let outcomes: Arc<Mutex<Outcomes>> = Arc::new(Mutex::new(vec![Vec::new(); PARTITIONS as usize]));
    let mut waits = Vec::new();
    for n in 1..=per_partition {
        for p in 0..PARTITIONS {
            let (completion, rx) = AppendCompletion::channel();
            let outcomes = Arc::clone(&outcomes);
            store.append(
                CoordinatorPartition(p),
                OwnerEpoch(1),
                vec![offset("g", "t", p as i32, n, "")],
                AppendCompletion::new(move |result| {
                    outcomes.lock().expect("outcomes")[p as usize].push((n, result.clone()));
                    completion.complete(result);
                }),
            );
            waits.push(rx);
        }
    }
    for rx in waits {
        let _ = rx.recv().expect("every append completes");
    }
    // Cloned: a completion's closure may still hold its handle for a moment.
    outcomes.lock().expect("outcomes").clone()
}

#[test]
fn a_fenced_partition_fails_alone_in_a_shared_transaction() {
    let cluster = etcd();
    // One transaction in flight: what the partitions append meanwhile gathers.
    let config =
        EtcdConfig { partitions: PARTITIONS, transactions_in_flight: 1, ..config(&cluster, "group-commit") };
    let store = connect(config.clone());
    for p in 0..PARTITIONS {
        store.append_blocking(CoordinatorPartition(p), OwnerEpoch(1), vec![]).expect("first owner");
    }
    // Another node takes one partition over.
    let other = connect(config);
    other.append_blocking(FENCED, OwnerEpoch(2), vec![]).expect("the new owner fences");
    let before = store.append_transactions();

    let outcomes = append_everywhere(&store, 5);

    let sent = store.append_transactions();
    let (transactions, appends) = (sent.transactions - before.transactions, sent.appends - before.appends);
    assert!(
        transactions < appends,
        "the partitions' appends shared transactions: {transactions} transactions for {appends} appends"
    );
    for p in 0..PARTITIONS {
        let partition = CoordinatorPartition(p);
        let got = &outcomes[p as usize];
        let order: Vec<i64> = got.iter().map(|(n, _)| *n).collect();
        assert_eq!(order, [1, 2, 3, 4, 5], "{partition}'s appends completed in order");
        let loaded = store.load(partition).expect("load");
        let stored = loaded.groups.offsets.first().and_then(|g| g.get("t", p as i32)).map(|o| o.offset);
        if partition == FENCED {
            for (n, result) in got {
                assert_eq!(
                    result,
                    &Err(StorageError::Fenced { partition: p, epoch: 1, current: 2 }),
                    "append {n} to the partition taken over"
                );
            }
            assert_eq!(stored, None, "nothing of the fenced appends is visible");
        } else {
            assert!(got.iter().all(|(_, r)| r.is_ok()), "{partition}: {got:?}");
            assert_eq!(stored, Some(5), "{partition} holds its last append");
        }
    }
}

#[test]
fn a_partitions_appends_keep_their_order_with_transactions_in_flight() {
    let cluster = etcd();
    let config =
        EtcdConfig { partitions: PARTITIONS, transactions_in_flight: 8, ..config(&cluster, "in-flight") };
    let store = connect(config);
    let outcomes = append_everywhere(&store, 20);
    for p in 0..PARTITIONS {
        let got = &outcomes[p as usize];
        assert_eq!(got.iter().map(|(n, _)| *n).collect::<Vec<_>>(), (1..=20).collect::<Vec<_>>());
        assert!(got.iter().all(|(_, r)| r.is_ok()), "{got:?}");
        let loaded = store.load(CoordinatorPartition(p)).expect("load");
        let stored = loaded.groups.offsets.first().and_then(|g| g.get("t", p as i32)).map(|o| o.offset);
        assert_eq!(stored, Some(20), "partition {p} holds its last append");
    }
}
