//! `ServerError`: why the server could not start, each variant with the error
//! that caused it as its source.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Why a [`GroupServer`](crate::GroupServer) could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// A listening socket could not be bound or set up.
    #[error("cannot listen on {addr}: {what}{source}{hint}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Which listener, when it is not the Kafka one (`"--metrics-listen: "`).
        what: &'static str,
        /// What to do about it, when the error says (a port in use).
        hint: &'static str,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The data directory is held by another process (sled's lock on it).
    #[error("cannot open storage: {} is in use by another group-server (or another program holds its lock)", dir.display())]
    DataDirLocked {
        /// The `--data-dir`.
        dir: PathBuf,
        /// The store's refusal.
        #[source]
        source: group_offsets::StorageError,
    },
    /// The storage could not be opened.
    #[error("cannot open storage: {}: {source}", dir.display())]
    Storage {
        /// The `--data-dir`.
        dir: PathBuf,
        /// Why the store could not open.
        #[source]
        source: group_offsets::StorageError,
    },
    /// The coordinator could not start.
    #[error("cannot start the group coordinator: {0}")]
    Coordinator(#[source] group_coordinator::CoordinatorError),
    /// The request log could not be opened.
    #[error("cannot open the request log {}: {source}", path.display())]
    RequestLog {
        /// The `--request-log` file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The ACL file could not be read or parsed.
    #[error("cannot load the ACLs: {0}")]
    Acl(#[from] crate::AclError),
    /// The TLS certificate, key or client CA file is missing or bad.
    #[error("cannot set up TLS: {0}")]
    Tls(#[source] crate::tls::TlsError),
    /// The SASL users file is missing or bad.
    #[error("cannot load the SASL users: {0}")]
    Users(#[source] crate::sasl::UsersError),
    /// The runtime's threads could not be started.
    #[error("cannot start the server's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The SIGHUP handler could not be installed.
    #[error("cannot watch for SIGHUP: {0}")]
    Signal(#[source] std::io::Error),
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
