//! What can go wrong joining a cluster.

/// Why a node could not join or keep up with the cluster.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// etcd could not be reached or refused a request.
    #[error("etcd: {0}")]
    Etcd(String),
    /// A setting is unusable.
    #[error("cluster configuration: {0}")]
    Config(String),
    /// The driver's runtime could not start.
    #[error("cluster runtime: {0}")]
    Runtime(String),
}
