//! How a node joins the cluster.

use std::time::Duration;

/// The settings of one cluster node ([`ClusterMember::start`](crate::ClusterMember::start)).
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// The key prefix every key of this cluster lives under; the same as the
    /// etcd store's, so that the store's owner-key fence sees the keys made here.
    pub prefix: String,
    /// This node's id: unique in the cluster, what Metadata and FindCoordinator name.
    pub node_id: i32,
    /// The `host:port` clients reach this node at.
    pub advertise: String,
    /// The lease's time to live in seconds: a node that stops renewing it (killed,
    /// paused, cut off from etcd) loses its partitions this long after its last
    /// renewal, and another node takes them over. etcd refuses TTLs below its own
    /// minimum (about 1.5 election timeouts) by raising them.
    pub lease_ttl_secs: i64,
    /// How often the node checks its lease (the watchdog) and, while partitions
    /// are moving, reads the cluster's keys and acts on them.
    pub tick: Duration,
    /// How often a settled node reads the cluster's keys without being told to:
    /// otherwise it reads them when its watch of the node and owner keys sees a
    /// change, when the coordinator loses a partition, and every tick while it
    /// still has something to do.
    pub settled_read_interval: Duration,
    /// The deadline of each etcd request.
    pub request_timeout: Duration,
}

impl ClusterConfig {
    /// A node with the default timings: a 3 s lease, a 200 ms tick, a read of the
    /// keys every 2 s when nothing changes, 2 s requests.
    /// Which etcd it joins is the client's ([`ClusterMember::start`](crate::ClusterMember::start)).
    pub fn new(prefix: impl Into<String>, node_id: i32, advertise: impl Into<String>) -> Self {
        ClusterConfig {
            prefix: prefix.into(),
            node_id,
            advertise: advertise.into(),
            lease_ttl_secs: 3,
            tick: Duration::from_millis(200),
            settled_read_interval: Duration::from_secs(2),
            request_timeout: Duration::from_secs(2),
        }
    }

    /// The key this node registers under (attached to its lease).
    pub fn node_key(&self, node_id: i32) -> String {
        format!("{}/nodes/{node_id:010}", self.prefix)
    }

    /// The prefix of every node key.
    pub fn nodes_prefix(&self) -> String {
        format!("{}/nodes/", self.prefix)
    }
}
