//! A 3-member cluster: with one member killed appends still succeed; with two
//! killed they fail `Unavailable` within the request timeout (no hang, no
//! panic); once the members are back, appends succeed again without a new
//! store, and the load holds exactly the appends that succeeded.

use std::time::{Duration, Instant};

use group_offsets::{CoordinatorPartition, MetadataStore, OwnerEpoch, StorageError};
use group_storage_etcd::EtcdStore;
use group_storage_etcd::testing::EtcdCluster;

use crate::common::{config, connect, offset};

const P: CoordinatorPartition = CoordinatorPartition(9);

fn commit(store: &EtcdStore, value: i64) -> Result<(), StorageError> {
    store.append_blocking(P, OwnerEpoch(1), vec![offset("g", "t", value as i32, value, "")])
}

#[test]
fn appends_survive_one_lost_member_and_recover_from_a_lost_quorum() {
    let mut cluster = EtcdCluster::start(3).unwrap_or_else(|e| panic!("cannot start etcd: {e}"));
    let config = config(&cluster, "quorum");
    let timeout = config.request_timeout;
    let store = connect(config.clone());
    let mut acknowledged = Vec::new();
    commit(&store, 0).expect("a healthy cluster");
    acknowledged.push(0);

    cluster.kill(0);
    for value in 1..=5 {
        commit(&store, value).unwrap_or_else(|e| panic!("append {value} with one member down: {e}"));
        acknowledged.push(value);
    }

    cluster.kill(1);
    for value in 6..=7 {
        let started = Instant::now();
        let result = commit(&store, value);
        let took = started.elapsed();
        assert!(matches!(result, Err(StorageError::Unavailable { .. })), "without a quorum: {result:?}");
        assert!(took < timeout * 2, "the failure took {took:?}, over twice the {timeout:?} request timeout");
    }
    assert!(matches!(store.load(P), Err(StorageError::Unavailable { .. })), "loads fail too, and return");

    cluster.restart(0).expect("restart member 0");
    cluster.restart(1).expect("restart member 1");
    // The same store, by itself: its connections come back within moments.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut value = 8;
    loop {
        match commit(&store, value) {
            Ok(()) => {
                acknowledged.push(value);
                break;
            }
            Err(e) if Instant::now() < deadline => {
                assert!(matches!(e, StorageError::Unavailable { .. }), "{e}");
                value += 1;
            }
            Err(e) => panic!("appends did not recover within 20 s: {e}"),
        }
    }
    commit(&store, 100).expect("and keep succeeding");
    acknowledged.push(100);

    let loaded = connect(config).load(P).expect("load");
    let mut visible: Vec<i64> = loaded
        .groups
        .offsets
        .iter()
        .flat_map(|g| g.offsets.values())
        .flat_map(|ps| ps.values())
        .map(|o| o.offset)
        .collect();
    visible.sort();
    assert_eq!(visible, acknowledged, "exactly the acknowledged appends are visible");
}
