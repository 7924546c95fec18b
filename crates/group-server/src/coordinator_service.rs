//! `CoordinatorService`: the node's `group_coordinator::GroupCoordinator`, with its
//! storage (sled or memory) chosen by the [`ServerConfig`], its ACLs, its topics and
//! (`--cluster`) its membership. The node hands group requests to the coordinator
//! and awaits its `Pending` answers directly (`crate::node::WireApi`).

use std::sync::Arc;

use group_coordinator::{Authorizer, GroupCoordinator, PartitionEndOffsets, TopicMetadata};
use group_offsets::{MemoryMetadataStore, MetadataStore, StorageError};
use group_storage_sled::{SledMetadataStore, SledOptions};

use crate::topics::{SharedTopics, Topics};
use crate::{AclAuthorizer, GroupServer, ServerConfig, ServerError, StorageMode, TopicSpec};

/// The group coordinator behind the wire front end, with what it was opened with.
#[derive(Debug)]
pub struct CoordinatorService {
    coordinator: Arc<GroupCoordinator>,
    /// The ACLs the coordinator checks, when `--acl-file` is given.
    acl: Option<Arc<AclAuthorizer>>,
    /// The topics OffsetCommit and OffsetDelete may name (the coordinator's
    /// `TopicMetadata`, and its `PartitionEndOffsets` for share lag), replaced by
    /// [`CoordinatorService::topics_changed`].
    topics: Arc<SharedTopics>,
    /// The version of the last metadata image handed to the coordinator.
    image_version: std::sync::atomic::AtomicI64,
    /// This node's membership of its cluster (`--cluster`), left on stop.
    #[cfg(feature = "cluster")]
    cluster: Option<crate::cluster::Membership>,
}

impl CoordinatorService {
    /// Wraps a running coordinator.
    pub fn new(coordinator: GroupCoordinator) -> CoordinatorService {
        CoordinatorService {
            coordinator: Arc::new(coordinator),
            acl: None,
            topics: Arc::default(),
            image_version: std::sync::atomic::AtomicI64::new(0),
            #[cfg(feature = "cluster")]
            cluster: None,
        }
    }

    /// Opens the configured storage and starts a coordinator on it, resuming what it
    /// holds; with an ACL file, the coordinator authorizes every request against it.
    /// A cluster node (`--cluster`) runs its etcd store and membership on the
    /// server's runtime: start it with [`GroupServer::start`] (here it is refused
    /// with [`ServerError::NoRuntime`]).
    pub fn open(config: &ServerConfig) -> Result<CoordinatorService, ServerError> {
        let advertised = config
            .advertise
            .clone()
            .unwrap_or_else(|| (config.listen.ip().to_string(), config.listen.port()));
        CoordinatorService::open_advertised(config, &advertised, None)
    }

    fn open_advertised(
        config: &ServerConfig,
        advertised: &(String, u16),
        runtime: Option<&tokio::runtime::Handle>,
    ) -> Result<CoordinatorService, ServerError> {
        // Read before the storage opens: a bad file fails fast and touches nothing.
        let acl = AclAuthorizer::from_config(&config.security)?;
        #[cfg(feature = "cluster")]
        let (wakeup, serving) =
            (group_cluster::Wakeup::new(), Arc::new(group_coordinator::ServingLease::new()));
        #[cfg(feature = "cluster")]
        let mut etcd = None;
        let storage: Arc<dyn MetadataStore> = match &config.storage {
            #[cfg(feature = "cluster")]
            StorageMode::Cluster(settings) => {
                let runtime = runtime.ok_or(ServerError::NoRuntime)?;
                let (store, client) = crate::cluster::open_store(settings, config.partitions, runtime)?;
                etcd = Some(client);
                store
            }
            #[cfg(not(feature = "cluster"))]
            StorageMode::Cluster(_) => return Err(ServerError::ClusterNotBuilt),
            StorageMode::Memory => Arc::new(MemoryMetadataStore::with_partitions(config.partitions)),
            StorageMode::Sled(dir) => {
                // This process owns its directory: a lock held is another process's,
                // reported at once rather than after the store's wait for a closing handle.
                let options =
                    SledOptions::new().partitions(config.partitions).lock_wait(std::time::Duration::ZERO);
                let store = SledMetadataStore::open_with_options(dir, options).map_err(|source| {
                    let dir = dir.clone();
                    if matches!(source, StorageError::Locked { .. }) {
                        ServerError::DataDirLocked { dir, source }
                    } else {
                        ServerError::Storage { dir, source }
                    }
                })?;
                Arc::new(store)
            }
        };
        let started = std::time::Instant::now();
        // The node serves exactly its `--topic`s (and those CreateTopics adds): a commit
        // or offset delete naming anything else is refused per partition, as Kafka's
        // request layer does. KIP-848 groups see the same topics as a metadata image.
        let topics = Arc::new(SharedTopics::new(&config.topics));
        let image = Topics::new(&config.topics).image(1);
        // The same topics answer DescribeShareGroupOffsets' end offsets (KIP-1226 lag).
        let mut builder = GroupCoordinator::builder(storage, config.coordinator.clone())
            .topic_metadata(Arc::clone(&topics) as Arc<dyn TopicMetadata>)
            .partition_end_offsets(Arc::clone(&topics) as Arc<dyn PartitionEndOffsets>)
            .metadata_image(image);
        if let Some(acl) = &acl {
            builder = builder.authorizer(Arc::clone(acl) as Arc<dyn Authorizer>);
        }
        // A durable node keeps its groups' configs beside its store (`group_config_file`).
        if let StorageMode::Sled(dir) = &config.storage {
            let store = crate::FileGroupConfigStore::open(dir.join("group-configs.json"))
                .map_err(|e| ServerError::Coordinator(e.into()))?;
            builder = builder.group_config_store(Arc::new(store));
        }
        // A cluster's nodes share their groups' configs in etcd (`cluster::group_configs`).
        #[cfg(feature = "cluster")]
        if let (StorageMode::Cluster(settings), Some(etcd)) = (&config.storage, &etcd) {
            builder = builder.group_config_store(Arc::new(etcd.group_config_store(settings)));
        }
        let clustered = matches!(config.storage, StorageMode::Cluster(_));
        #[cfg(feature = "cluster")]
        if clustered {
            // Partitions are loaded as this node comes to own them, not at open.
            // A share group's share state lives with the group: a node reaches the
            // share state of its own groups without calling another node
            // (DECISIONS.md, "Share state lives in the coordinator partitions").
            builder = builder
                .managed_ownership()
                .on_partition_lost(wakeup.listener())
                .serving_lease(serving.clone())
                .share_state_routing(group_coordinator::ShareStateRouting::WithGroup);
        }
        let coordinator = Arc::new(builder.open().map_err(ServerError::Coordinator)?);
        if !clustered {
            let groups = coordinator.list_groups().len();
            tracing::info!(
                target: "group_server",
                groups,
                partitions = coordinator.shard_count(),
                "loaded {groups} group(s) in {:?}",
                started.elapsed()
            );
        }
        #[cfg(feature = "cluster")]
        let cluster = match (&config.storage, etcd) {
            (StorageMode::Cluster(settings), Some(etcd)) => Some(crate::cluster::Membership::join(
                settings,
                config,
                advertised,
                &coordinator,
                wakeup,
                serving,
                etcd,
            )?),
            _ => None,
        };
        #[cfg(not(feature = "cluster"))]
        let _ = (advertised, runtime);
        Ok(CoordinatorService {
            coordinator,
            acl,
            topics,
            image_version: std::sync::atomic::AtomicI64::new(1),
            #[cfg(feature = "cluster")]
            cluster,
        })
    }

    /// The coordinator.
    pub fn coordinator(&self) -> &GroupCoordinator {
        &self.coordinator
    }

    /// The brokers a cluster node answers Metadata and FindCoordinator from (`None`:
    /// a node on its own).
    pub(crate) fn brokers(&self) -> Option<crate::brokers::Brokers> {
        #[cfg(feature = "cluster")]
        if let Some(cluster) = &self.cluster {
            return Some(cluster.brokers());
        }
        None
    }

    /// The ACLs the coordinator checks (`None` without `--acl-file`).
    pub fn acl_authorizer(&self) -> Option<&Arc<AclAuthorizer>> {
        self.acl.as_ref()
    }

    /// The node's topics changed (CreateTopics added one): `topics` is all of them
    /// now. KIP-848 groups see them as the coordinator's new metadata image.
    pub fn topics_changed(&self, topics: &[TopicSpec]) {
        // The node makes one change at a time (see `Node::create_topics`), so each
        // image is newer than the last and holds every topic.
        let version = self.image_version.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        self.topics.set(topics);
        self.coordinator.update_metadata_image(Topics::new(topics).image(version));
    }

    /// Stops the coordinator: parked requests complete (with an error) and timers stop.
    pub fn stop(&self) {
        // A cluster node first gives its partitions back (unloaded, lease revoked), so
        // that the other nodes take them over at once rather than after the lease.
        #[cfg(feature = "cluster")]
        if let Some(cluster) = &self.cluster {
            cluster.leave();
        }
        self.coordinator.stop();
    }

    /// The coordinator's gauges and counters (the `kafka_group_*` metrics).
    pub fn metrics(&self) -> group_coordinator::CoordinatorMetrics {
        self.coordinator.metrics()
    }

    /// A cluster node's etcd transactions of log appends so far and the appends
    /// they carried (`None`: not a cluster node).
    pub(crate) fn etcd_append_transactions(&self) -> Option<(u64, u64)> {
        #[cfg(feature = "cluster")]
        if let Some(cluster) = &self.cluster {
            let sent = cluster.append_transactions();
            return Some((sent.transactions, sent.appends));
        }
        None
    }
}

impl GroupServer {
    /// Binds the listening socket, opens storage, starts the coordinator and serves,
    /// on a runtime of its own ([`GroupServer::runtime`]).
    pub fn start(config: &ServerConfig) -> Result<GroupServer, ServerError> {
        GroupServer::start_on(config, GroupServer::runtime(config)?)
    }

    /// [`start`](Self::start) on `runtime` (built by [`GroupServer::runtime`]), the
    /// process's one runtime: what the `group-server` binary runs, after it put its
    /// signal handlers on it. The socket comes first, so that a port in use fails
    /// before a data directory is created.
    pub fn start_on(
        config: &ServerConfig,
        runtime: tokio::runtime::Runtime,
    ) -> Result<GroupServer, ServerError> {
        let served = (|| {
            let listeners = crate::server::bind(config)?;
            // Before storage is opened: a bad certificate or users file leaves nothing behind.
            let security = crate::authenticate::Security::from_config(&config.security)?;
            let local = listeners.kafka.local_addr().map_err(|e| crate::server::bind_error(config, e))?;
            let advertised =
                config.advertise.clone().unwrap_or_else(|| (local.ip().to_string(), local.port()));
            let service = CoordinatorService::open_advertised(config, &advertised, Some(runtime.handle()))?;
            let acl = service.acl_authorizer().cloned();
            let brokers = service.brokers();
            GroupServer::serve(config, &runtime, listeners, Arc::new(service), acl, security, brokers)
        })();
        match served {
            Ok(mut server) => {
                server.runtime = Some(runtime);
                Ok(server)
            }
            Err(e) => {
                // Without blocking: the caller may be async code.
                runtime.shutdown_background();
                Err(e)
            }
        }
    }
}
