//! What can go wrong joining a cluster.

use std::time::Duration;

/// Why a node could not join or keep up with the cluster.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// etcd refused a request (or the connection to it failed).
    #[error("{what}: etcd refused: {source}")]
    Etcd {
        /// What the node was doing.
        what: &'static str,
        /// The client's error.
        #[source]
        source: etcd_client::Error,
    },
    /// etcd did not answer a request within [`ClusterConfig::request_timeout`](crate::ClusterConfig::request_timeout).
    #[error("{what}: no answer from etcd within {timeout:?}")]
    Timeout {
        /// What the node was doing.
        what: &'static str,
        /// The deadline it waited.
        timeout: Duration,
    },
    /// etcd answered a transaction without the ranges it was asked to read.
    #[error("{what}: etcd answered without the ranges asked for")]
    UnexpectedAnswer {
        /// What the node was doing.
        what: &'static str,
    },
    /// The node id is registered under another live lease: another process
    /// runs with this node id, or this node's previous run has not expired yet.
    #[error(
        "node id {node_id} is registered under another live lease: another process runs with this \
         --node-id, or this node's previous run has not expired yet (at most {lease_ttl_secs} s); retrying"
    )]
    NodeIdTaken {
        /// The node id.
        node_id: i32,
        /// The lease TTL, the longest a previous run's registration outlives it.
        lease_ttl_secs: i64,
    },
    /// [`ClusterConfig::lease_ttl_secs`](crate::ClusterConfig::lease_ttl_secs) is below one second.
    #[error("cluster configuration: lease TTL {lease_ttl_secs} s is below 1 s")]
    LeaseTtlTooShort {
        /// The TTL asked for.
        lease_ttl_secs: i64,
    },
}
