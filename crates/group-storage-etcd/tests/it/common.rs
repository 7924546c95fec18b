//! Helpers shared by the tests: one etcd per test, stores on fresh prefixes.

use std::time::Duration;

use group_storage_etcd::testing::{EtcdCluster, unique_prefix};
use group_storage_etcd::{EtcdConfig, EtcdStore};

/// A single-member cluster, panicking with the harness's message (which says
/// how to get etcd) when it cannot start.
pub(crate) fn etcd() -> EtcdCluster {
    EtcdCluster::start(1).unwrap_or_else(|e| panic!("cannot start etcd: {e}"))
}

/// The test configuration over `cluster`: a fresh prefix, short timeouts, no
/// history compaction (tests share nothing, and a test that wants it asks).
pub(crate) fn config(cluster: &EtcdCluster, tag: &str) -> EtcdConfig {
    EtcdConfig {
        prefix: unique_prefix(tag),
        request_timeout: Duration::from_secs(2),
        mvcc_compaction_interval: None,
        ..EtcdConfig::new(cluster.endpoints())
    }
}

pub(crate) fn connect(config: EtcdConfig) -> EtcdStore {
    EtcdStore::connect(config).unwrap_or_else(|e| panic!("cannot connect: {e}"))
}
