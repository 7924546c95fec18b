//! `ServerError`: why the server could not start.

use std::net::SocketAddr;

/// Why a [`GroupServer`](crate::GroupServer) could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The listening socket could not be bound.
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, String),
    /// The storage could not be opened.
    #[error("cannot open storage: {0}")]
    Storage(String),
    /// The coordinator could not start.
    #[error("cannot start the group coordinator: {0}")]
    Coordinator(#[source] group_coordinator::CoordinatorError),
    /// The request log could not be opened.
    #[error("cannot open the request log: {0}")]
    RequestLog(String),
    /// The ACL file could not be read or parsed.
    #[error("cannot load the ACLs: {0}")]
    Acl(#[from] crate::AclError),
    /// The TLS certificate, key or client CA file is missing or bad.
    #[error("cannot set up TLS: {0}")]
    Tls(String),
    /// The SASL users file is missing or bad.
    #[error("cannot load the SASL users: {0}")]
    Users(String),
    /// A thread could not be spawned.
    #[error("cannot start a thread: {0}")]
    Thread(String),
    /// `--cluster`: etcd did not answer at start (or refused the store's
    /// settings).
    #[error("cannot open storage: etcd at {endpoints:?}: {source}")]
    Etcd {
        /// The `--etcd` endpoints.
        endpoints: Vec<String>,
        /// What the etcd store reported.
        #[source]
        source: group_offsets::StorageError,
    },
    /// The node could not join its cluster (a bad setting).
    #[cfg(feature = "cluster")]
    #[error("cannot join the cluster: {0}")]
    Cluster(#[source] group_cluster::ClusterError),
    /// A `--cluster` node was opened without the server's runtime
    /// (`CoordinatorService::open`): its etcd store and membership run there.
    #[error("a --cluster node runs on the server's runtime: start it with GroupServer::start")]
    NoRuntime,
    /// `--cluster` was given to a binary built without the `cluster` feature.
    #[error(
        "cannot join the cluster: this group-server was built without the `cluster` feature \
         (cargo build --release -p group-server --features cluster)"
    )]
    ClusterNotBuilt,
}
