//! Cluster members over a real etcd (`group_storage_etcd::testing`), each with a real
//! `GroupCoordinator` over the etcd store: partitions spread evenly without overlap,
//! move when a member leaves or loses its lease, and what was committed on one node
//! is served by the next.
//!
//! These wait on real processes, so each wait polls with a deadline (a hang guard,
//! not a speed assertion).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use group_cluster::{ClusterConfig, ClusterMember, Wakeup};
use group_coordinator::{CoordinatorConfig, GroupCoordinator, ServingLease};
use group_offsets::{CoordinatorPartition, OwnerEpoch};
use group_storage_etcd::testing::{EtcdCluster, unique_prefix};
use group_storage_etcd::{EtcdConfig, EtcdStore};
use group_types::{ErrorCode, OffsetCommitData, OffsetCommitRequest};

const PARTITIONS: u32 = 12;
const DEADLINE: Duration = Duration::from_secs(30);

/// One node, as one process would run it: its own runtime, one etcd client shared
/// by its store and its membership.
struct Node {
    coordinator: Arc<GroupCoordinator>,
    member: Option<ClusterMember>,
    /// Dropped last: the store's and the member's tasks run on it.
    _runtime: tokio::runtime::Runtime,
}

impl Node {
    fn start(endpoints: &[String], prefix: &str, node_id: i32) -> Node {
        Node::start_with(endpoints, prefix, node_id, |_| {})
    }

    fn start_with(
        endpoints: &[String],
        prefix: &str,
        node_id: i32,
        tune: impl FnOnce(&mut ClusterConfig),
    ) -> Node {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("the node's runtime starts");
        let mut store = EtcdConfig::new(endpoints.to_vec());
        store.prefix = prefix.to_owned();
        store.partitions = PARTITIONS;
        store.fence_with_owner_keys = true;
        let client = runtime.block_on(group_storage_etcd::connect(&store)).expect("etcd answers");
        let store =
            Arc::new(EtcdStore::new(store, client.clone(), runtime.handle()).expect("the store opens"));
        let (wakeup, serving) = (Wakeup::new(), Arc::new(ServingLease::new()));
        let coordinator = Arc::new(
            GroupCoordinator::builder(store, CoordinatorConfig::default())
                .managed_ownership()
                .on_partition_lost(wakeup.listener())
                .serving_lease(serving.clone())
                .open()
                .expect("the coordinator opens"),
        );
        let mut config = ClusterConfig::new(prefix, node_id, format!("127.0.0.1:{}", 9000 + node_id));
        config.lease_ttl_secs = 2;
        config.tick = Duration::from_millis(100);
        tune(&mut config);
        let host: Arc<dyn group_cluster::PartitionHost> = coordinator.clone();
        let member = ClusterMember::start(config, client, runtime.handle(), host, wakeup, serving)
            .expect("the member starts");
        Node { coordinator, member: Some(member), _runtime: runtime }
    }

    fn owned(&self) -> BTreeSet<u32> {
        self.coordinator.owned_partitions().into_iter().map(|(p, _)| p.0).collect()
    }

    fn leave(&mut self) {
        if let Some(member) = self.member.take() {
            member.shutdown();
        }
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < DEADLINE, "not within {DEADLINE:?}: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every partition owned by exactly one of `nodes`, each owning `want[i]`.
fn spread(nodes: &[&Node], want: &[usize]) -> bool {
    let owned: Vec<BTreeSet<u32>> = nodes.iter().map(|n| n.owned()).collect();
    let all: BTreeSet<u32> = owned.iter().flatten().copied().collect();
    let total: usize = owned.iter().map(BTreeSet::len).sum();
    let counts: Vec<usize> = owned.iter().map(BTreeSet::len).collect();
    all.len() == PARTITIONS as usize && total == PARTITIONS as usize && counts == want
}

fn commit(node: &Node, group: &str, offset: i64) -> ErrorCode {
    let mut request = OffsetCommitRequest { group_id: group.into(), ..OffsetCommitRequest::default() };
    request.push("t", 0, OffsetCommitData::new(offset));
    let response = node.coordinator.handle_offset_commit(request).expect("answered");
    response.error_for("t", 0).expect("answered")
}

#[test]
fn members_spread_the_partitions_evenly_and_hand_them_over_when_one_leaves() {
    let etcd = EtcdCluster::start(1).expect("etcd starts");
    let prefix = unique_prefix("cluster-spread");
    let endpoints = etcd.endpoints();
    let mut nodes: Vec<Node> = (1..=3).map(|id| Node::start(&endpoints, &prefix, id)).collect();
    wait_until("12 partitions spread 4/4/4", || spread(&[&nodes[0], &nodes[1], &nodes[2]], &[4, 4, 4]));
    let view = nodes[0].member.as_ref().expect("member").view();
    // The view is read at the start of a tick, so it may trail a claim by one.
    wait_until("the view names the node serving each partition", || {
        view.nodes().len() == 3
            && (0..PARTITIONS).all(|p| {
                let owner = view.owner_of(CoordinatorPartition(p)).map(|n| n.node_id);
                let serving: Vec<i32> =
                    (0..3).filter(|&i| nodes[i].owned().contains(&p)).map(|i| i as i32 + 1).collect();
                owner.map(|o| vec![o]) == Some(serving)
            })
    });
    nodes[2].leave();
    wait_until("the two left take 6/6", || spread(&[&nodes[0], &nodes[1]], &[6, 6]));
    assert!(nodes[2].owned().is_empty(), "a node that left serves nothing");
}

/// A settled node reads the keys when its watch sees them change, not on a timer:
/// with the timer at ten minutes, a node that joins still gets its share at once,
/// and takes over the partitions of one that leaves.
#[test]
fn a_settled_node_acts_on_what_its_watch_sees() {
    let etcd = EtcdCluster::start(1).expect("etcd starts");
    let prefix = unique_prefix("cluster-watch");
    let endpoints = etcd.endpoints();
    let slow = |c: &mut ClusterConfig| c.settled_read_interval = Duration::from_secs(600);
    let first = Node::start_with(&endpoints, &prefix, 1, slow);
    wait_until("the lone node owns everything", || first.owned().len() == PARTITIONS as usize);
    // Settled: nothing left to do, so the timer alone would not read again for ten minutes.
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    let mut second = Node::start_with(&endpoints, &prefix, 2, slow);
    wait_until("the first hands half over to the second", || spread(&[&first, &second], &[6, 6]));
    let handed_over = started.elapsed();
    second.leave();
    wait_until("the first takes everything back", || first.owned().len() == PARTITIONS as usize);
    assert!(handed_over < Duration::from_secs(30), "{handed_over:?}");
}

#[test]
fn a_commit_acknowledged_by_one_owner_is_served_by_the_next_and_the_old_one_is_fenced() {
    let etcd = EtcdCluster::start(1).expect("etcd starts");
    let prefix = unique_prefix("cluster-move");
    let endpoints = etcd.endpoints();
    let mut first = Node::start(&endpoints, &prefix, 1);
    wait_until("the lone node owns everything", || first.owned().len() == PARTITIONS as usize);
    let group = "orders-app";
    let p = CoordinatorPartition::of(group, PARTITIONS);
    assert_eq!(commit(&first, group, 42), ErrorCode::None);
    // Keep the first node's coordinator but stop its membership without revoking
    // anything in a way the coordinator sees: it still believes it owns `p` until
    // etcd shows otherwise. Its lease is revoked by its shutdown, the second node
    // claims the partitions at a higher epoch.
    let old_epoch = first.coordinator.owned_partitions().into_iter().find(|(q, _)| *q == p).map(|(_, e)| e);
    first.leave();
    let second = Node::start(&endpoints, &prefix, 2);
    wait_until("the second node owns everything", || second.owned().len() == PARTITIONS as usize);
    let new_epoch = second.coordinator.owned_partitions().into_iter().find(|(q, _)| *q == p).map(|(_, e)| e);
    assert!(new_epoch > old_epoch, "a new owner has a higher epoch: {new_epoch:?} vs {old_epoch:?}");
    assert_eq!(second.coordinator.get_committed_offset(group, "t", 0).expect("served"), 42);
    // The first node, made to believe it owns the partition again at its old epoch,
    // cannot write: the store fences it and the coordinator unloads the partition.
    let stale = old_epoch.unwrap_or(OwnerEpoch(1));
    assert!(first.coordinator.load_partition(p, stale).is_err(), "a stale epoch is fenced at load");
    assert_eq!(commit(&first, group, 7), ErrorCode::NotCoordinator);
    assert_eq!(second.coordinator.get_committed_offset(group, "t", 0).expect("served"), 42);
}

#[test]
fn a_member_whose_lease_is_revoked_stops_serving_and_rejoins_by_itself() {
    let etcd = EtcdCluster::start(1).expect("etcd starts");
    let prefix = unique_prefix("cluster-revoke");
    let endpoints = etcd.endpoints();
    let nodes: Vec<Node> = (1..=2).map(|id| Node::start(&endpoints, &prefix, id)).collect();
    wait_until("6/6", || spread(&[&nodes[0], &nodes[1]], &[6, 6]));
    let before: BTreeSet<(CoordinatorPartition, OwnerEpoch)> =
        nodes[0].coordinator.owned_partitions().into_iter().collect();
    // Revoke node 1's lease from outside, as etcd does when it expires: its keys go.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let mut client = etcd_client::Client::connect(endpoints.clone(), None).await.expect("client");
        let key = format!("{prefix}/nodes/{:010}", 1);
        let got = client.get(key, None).await.expect("get");
        let lease = got.kvs().first().expect("node 1 is registered").lease();
        client.lease_revoke(lease).await.expect("revoke");
    });
    // Node 1 unloads what etcd no longer shows as its own, registers under a new
    // lease, and the cluster settles to an even split again.
    wait_until("6/6 again, node 1 at new epochs", || {
        let now: BTreeSet<_> = nodes[0].coordinator.owned_partitions().into_iter().collect();
        spread(&[&nodes[0], &nodes[1]], &[6, 6]) && now.is_disjoint(&before)
    });
}

#[test]
fn a_second_process_with_a_live_node_id_waits_until_the_first_is_gone() {
    let etcd = EtcdCluster::start(1).expect("etcd starts");
    let prefix = unique_prefix("cluster-same-id");
    let endpoints = etcd.endpoints();
    let mut first = Node::start(&endpoints, &prefix, 1);
    wait_until("the first owns everything", || first.owned().len() == PARTITIONS as usize);
    let second = Node::start(&endpoints, &prefix, 1);
    // Ten ticks of the second one: it must not register, so it claims nothing and
    // the first keeps every partition.
    std::thread::sleep(Duration::from_secs(1));
    assert!(second.owned().is_empty(), "a duplicate node id took {:?}", second.owned());
    assert_eq!(first.owned().len(), PARTITIONS as usize);
    first.leave();
    wait_until("the second takes over once the id is free", || second.owned().len() == PARTITIONS as usize);
}

/// The example's broker, run as a test: its `main` is not used here.
#[allow(dead_code)]
#[path = "../examples/embed_in_broker.rs"]
mod embed_in_broker;

#[test]
fn a_broker_embeds_the_store_and_the_membership_in_its_own_runtime() {
    let etcd = EtcdCluster::start(1).expect("etcd starts");
    let prefix = unique_prefix("embed-in-broker");
    // The broker's runtime, with its own name: the embedding adds no runtime of its own.
    let broker = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("broker")
        .enable_all()
        .build()
        .expect("the broker's runtime starts");
    let config = embed_in_broker::store_config(etcd.endpoints(), &prefix);
    let summary = broker
        .block_on(async {
            let client = group_storage_etcd::connect(&config).await?;
            embed_in_broker::embed(config.clone(), client).await
        })
        .unwrap_or_else(|e| panic!("the broker's embedding failed: {e}"));
    let partitions = embed_in_broker::TOPIC_PARTITIONS as usize * embed_in_broker::GROUPS;
    assert_eq!(
        summary,
        embed_in_broker::Summary {
            owned: embed_in_broker::PARTITIONS as usize,
            nodes: 1,
            committed: partitions,
            fetched: partitions,
        }
    );
    // Durable in etcd: a store opened afresh (on the same runtime) loads every commit.
    let store = broker
        .block_on(group_storage_etcd::connect(&config))
        .map(|client| EtcdStore::new(config.clone(), client, broker.handle()).expect("the store opens"))
        .expect("etcd answers");
    let offsets: usize = (0..embed_in_broker::PARTITIONS)
        .map(|p| {
            let loaded = group_offsets::MetadataStore::load(&store, CoordinatorPartition(p)).expect("loads");
            loaded
                .groups
                .offsets
                .iter()
                .map(|g| g.offsets.values().map(|o| o.len()).sum::<usize>())
                .sum::<usize>()
        })
        .sum();
    assert_eq!(offsets, partitions, "every acknowledged commit is in etcd");
}
