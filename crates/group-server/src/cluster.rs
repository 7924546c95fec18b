//! `--cluster`: the node's storage is etcd, its partitions are those the cluster
//! gives it (`group-cluster`), and Metadata and FindCoordinator answer from the live
//! nodes etcd shows.

use std::sync::{Arc, Mutex, PoisonError};

use group_cluster::{ClusterConfig, ClusterMember, ClusterView, Wakeup};
use group_coordinator::{GroupCoordinator, ServingLease};
use group_offsets::MetadataStore;
use group_storage_etcd::{EtcdConfig, EtcdStore};

use crate::brokers::{Broker, Brokers, ClusterBrokers};
use crate::{ClusterSettings, ServerConfig, ServerError};

/// The etcd store, fenced by the owner keys the cluster members write.
pub(crate) fn open_store(
    settings: &ClusterSettings,
    partitions: u32,
) -> Result<Arc<dyn MetadataStore>, ServerError> {
    let mut config = EtcdConfig::new(settings.endpoints.clone());
    config.prefix = settings.prefix.clone();
    config.partitions = partitions;
    config.fence_with_owner_keys = true;
    let store = EtcdStore::connect(config)
        .map_err(|e| ServerError::Storage(format!("etcd {:?}: {e}", settings.endpoints)))?;
    Ok(Arc::new(store))
}

/// This node's membership, and what it tells the front end.
#[derive(Debug)]
pub(crate) struct Membership {
    member: Mutex<Option<ClusterMember>>,
    view: ClusterView,
    partitions: u32,
    me: Broker,
}

impl Membership {
    /// Registers the node and starts taking its share of partitions.
    pub(crate) fn join(
        settings: &ClusterSettings,
        config: &ServerConfig,
        advertised: &(String, u16),
        coordinator: &Arc<GroupCoordinator>,
        wakeup: Wakeup,
        serving: Arc<ServingLease>,
    ) -> Result<Membership, ServerError> {
        let address = if advertised.0.contains(':') {
            format!("[{}]:{}", advertised.0, advertised.1)
        } else {
            format!("{}:{}", advertised.0, advertised.1)
        };
        let mut cluster =
            ClusterConfig::new(settings.endpoints.clone(), settings.prefix.clone(), config.node_id, address);
        cluster.lease_ttl_secs = settings.lease_ttl_secs;
        let host: Arc<dyn group_cluster::PartitionHost> = coordinator.clone();
        let member = ClusterMember::start(cluster, host, wakeup, serving)
            .map_err(|e| ServerError::Cluster(e.to_string()))?;
        tracing::info!(
            target: "group_server",
            node_id = config.node_id,
            etcd = ?settings.endpoints,
            prefix = %settings.prefix,
            lease_ttl_secs = settings.lease_ttl_secs,
            "joined the cluster; partitions are loaded as this node comes to own them"
        );
        Ok(Membership {
            view: member.view(),
            member: Mutex::new(Some(member)),
            partitions: config.partitions,
            me: Broker { node_id: config.node_id, host: advertised.0.clone(), port: i32::from(advertised.1) },
        })
    }

    /// What Metadata and FindCoordinator answer from.
    pub(crate) fn brokers(&self) -> Brokers {
        Arc::new(ClusterBrokers { view: self.view.clone(), partitions: self.partitions, me: self.me.clone() })
    }

    /// Leaves the cluster (once): partitions unloaded, lease revoked.
    pub(crate) fn leave(&self) {
        let member = self.member.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(member) = member {
            member.shutdown();
        }
    }
}
