//! `--cluster`: the node's storage is etcd, its partitions are those the cluster
//! gives it (`group-cluster`), and Metadata and FindCoordinator answer from the live
//! nodes etcd shows.

pub(crate) mod group_configs;

use std::sync::{Arc, Mutex, PoisonError};

use group_cluster::{ClusterConfig, ClusterMember, ClusterView, Wakeup};
use group_coordinator::{GroupCoordinator, ServingLease};
use group_offsets::MetadataStore;
use group_storage_etcd::etcd_client::Client;
use group_storage_etcd::{EtcdConfig, EtcdStore};
use tokio::runtime::{Handle, RuntimeFlavor};

use crate::brokers::{Broker, Brokers, ClusterBrokers};
use crate::{ClusterSettings, ServerConfig, ServerError};

/// The node's one etcd client, on the server's runtime: the store runs on it,
/// and the membership is handed it when it joins.
pub(crate) struct Etcd {
    client: Client,
    runtime: Handle,
    store: EtcdStore,
}

impl Etcd {
    /// The cluster's group configs, in etcd beside its partitions.
    pub(crate) fn group_config_store(
        &self,
        settings: &ClusterSettings,
    ) -> group_configs::EtcdGroupConfigStore {
        group_configs::EtcdGroupConfigStore::new(self.client.clone(), self.runtime.clone(), &settings.prefix)
    }
}

/// Connects to etcd (waiting until it answers, at most the store's connect
/// timeout) and opens the etcd store over that client, fenced by the owner keys
/// the cluster members write. Called from the thread that starts the server.
pub(crate) fn open_store(
    settings: &ClusterSettings,
    partitions: u32,
    runtime: &Handle,
) -> Result<(Arc<dyn MetadataStore>, Etcd), ServerError> {
    let mut config = EtcdConfig::new(settings.endpoints.clone());
    config.prefix = settings.prefix.clone();
    config.partitions = partitions;
    config.fence_with_owner_keys = true;
    if let Some(n) = settings.transactions_in_flight {
        config.transactions_in_flight = n;
    }
    let failed = |source| ServerError::Etcd { endpoints: settings.endpoints.clone(), source };
    let connecting = config.clone();
    let client = wait_on(runtime, async move { group_storage_etcd::connect(&connecting).await })
        .ok_or_else(|| failed(group_offsets::StorageError::unavailable("the runtime stopped")))?
        .map_err(failed)?;
    let store = EtcdStore::new(config, client.clone(), runtime).map_err(failed)?;
    Ok((Arc::new(store.clone()), Etcd { client, runtime: runtime.clone(), store }))
}

/// Runs `work` on `runtime` and waits for it on this thread (`None` when the
/// runtime stopped first). The wait is never a `block_on` on a worker: on a
/// multi-thread runtime's worker (a server started from async code) it steps out
/// of the worker first.
pub(crate) fn wait_on<T: Send + 'static>(
    runtime: &Handle,
    work: impl Future<Output = T> + Send + 'static,
) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime.spawn(async move {
        let _ = tx.send(work.await);
    });
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(|| rx.recv()).ok(),
        _ => rx.recv().ok(),
    }
}

/// This node's membership, and what it tells the front end.
#[derive(Debug)]
pub(crate) struct Membership {
    member: Mutex<Option<ClusterMember>>,
    /// The watch that tells the coordinator of group configs altered on other nodes.
    group_configs: tokio::task::AbortHandle,
    view: ClusterView,
    partitions: u32,
    me: Broker,
    /// The store, for what it counts of group commit.
    store: EtcdStore,
}

impl Membership {
    /// Registers the node and starts taking its share of partitions, over the
    /// store's etcd client, in a task on the server's runtime.
    pub(crate) fn join(
        settings: &ClusterSettings,
        config: &ServerConfig,
        advertised: &(String, u16),
        coordinator: &Arc<GroupCoordinator>,
        wakeup: Wakeup,
        serving: Arc<ServingLease>,
        etcd: Etcd,
    ) -> Result<Membership, ServerError> {
        let address = if advertised.0.contains(':') {
            format!("[{}]:{}", advertised.0, advertised.1)
        } else {
            format!("{}:{}", advertised.0, advertised.1)
        };
        let mut cluster = ClusterConfig::new(settings.prefix.clone(), config.node_id, address);
        cluster.lease_ttl_secs = settings.lease_ttl_secs;
        let group_configs = group_configs::watch(
            etcd.client.clone(),
            &etcd.runtime,
            &settings.prefix,
            Arc::downgrade(coordinator),
        );
        let host: Arc<dyn group_cluster::PartitionHost> = coordinator.clone();
        let member = ClusterMember::start(cluster, etcd.client, &etcd.runtime, host, wakeup, serving)
            .map_err(ServerError::Cluster)?;
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
            group_configs,
            partitions: config.partitions,
            me: Broker { node_id: config.node_id, host: advertised.0.clone(), port: i32::from(advertised.1) },
            store: etcd.store,
        })
    }

    /// What Metadata and FindCoordinator answer from.
    pub(crate) fn brokers(&self) -> Brokers {
        Arc::new(ClusterBrokers { view: self.view.clone(), partitions: self.partitions, me: self.me.clone() })
    }

    /// The transactions of log appends the store has sent to etcd, and the
    /// appends they carried: their ratio is how well group commit gathers.
    pub(crate) fn append_transactions(&self) -> group_storage_etcd::AppendTransactions {
        self.store.append_transactions()
    }

    /// Leaves the cluster (once): partitions unloaded, lease revoked. Blocks until
    /// done; the server calls it while stopping, off the runtime's workers.
    pub(crate) fn leave(&self) {
        self.group_configs.abort();
        let member = self.member.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(member) = member {
            member.shutdown();
        }
    }
}
