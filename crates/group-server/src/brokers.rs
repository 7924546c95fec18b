//! Who the brokers are and which one coordinates a group, for Metadata and
//! FindCoordinator: this node alone, or the live nodes of a cluster.

use std::sync::Arc;

/// A broker as clients reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Broker {
    pub(crate) node_id: i32,
    pub(crate) host: String,
    pub(crate) port: i32,
}

/// The brokers of the cluster this node is part of.
pub(crate) trait BrokerMap: Send + Sync + std::fmt::Debug {
    /// Every live broker, by id (never empty: this node is one).
    fn brokers(&self) -> Vec<Broker>;
    /// The broker coordinating `group_id`, `None` while no live node owns its
    /// coordinator partition (the client asks again: COORDINATOR_NOT_AVAILABLE).
    fn coordinator(&self, group_id: &str) -> Option<Broker>;
    /// The broker that owns coordinator `partition` (where a share partition's
    /// state lives: `GroupCoordinator::share_partition_of`), `None` while no live
    /// node does.
    fn owner(&self, partition: group_offsets::CoordinatorPartition) -> Option<Broker>;
}

/// A node on its own: it is every broker and coordinates every group.
#[derive(Debug)]
pub(crate) struct SingleNode(pub(crate) Broker);

impl BrokerMap for SingleNode {
    fn brokers(&self) -> Vec<Broker> {
        vec![self.0.clone()]
    }

    fn coordinator(&self, _group_id: &str) -> Option<Broker> {
        Some(self.0.clone())
    }

    fn owner(&self, _partition: group_offsets::CoordinatorPartition) -> Option<Broker> {
        Some(self.0.clone())
    }
}

/// A cluster node: the live nodes and partition owners etcd last showed.
#[cfg(feature = "cluster")]
#[derive(Debug)]
pub(crate) struct ClusterBrokers {
    pub(crate) view: group_cluster::ClusterView,
    pub(crate) partitions: u32,
    /// This node, listed even before etcd shows its registration.
    pub(crate) me: Broker,
}

#[cfg(feature = "cluster")]
fn broker(node: group_cluster::NodeAddress) -> Broker {
    Broker { node_id: node.node_id, host: node.host, port: node.port }
}

#[cfg(feature = "cluster")]
impl BrokerMap for ClusterBrokers {
    fn brokers(&self) -> Vec<Broker> {
        let mut brokers: Vec<Broker> = self.view.nodes().into_iter().map(broker).collect();
        if !brokers.iter().any(|b| b.node_id == self.me.node_id) {
            brokers.push(self.me.clone());
            brokers.sort_by_key(|b| b.node_id);
        }
        brokers
    }

    fn coordinator(&self, group_id: &str) -> Option<Broker> {
        let partition = group_offsets::CoordinatorPartition::of(group_id, self.partitions);
        self.view.owner_of(partition).map(broker)
    }

    fn owner(&self, partition: group_offsets::CoordinatorPartition) -> Option<Broker> {
        self.view.owner_of(partition).map(broker)
    }
}

/// What a node answers from.
pub(crate) type Brokers = Arc<dyn BrokerMap>;

/// The map of a node on its own.
pub(crate) fn single_node(node_id: i32, host: &str, port: i32) -> Brokers {
    Arc::new(SingleNode(Broker { node_id, host: host.to_owned(), port }))
}
