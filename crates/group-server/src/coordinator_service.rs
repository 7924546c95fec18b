//! `CoordinatorService`: the [`GroupService`] over `group_coordinator::GroupCoordinator`,
//! with its storage (sled or memory) chosen by the [`ServerConfig`].

use std::sync::Arc;

use group_coordinator::{
    Authorizer, CoordinatorError, GroupCoordinator, Pending, RequestContext, ResponseKind, TopicMetadata,
};
use group_offsets::{MemoryMetadataStore, MetadataStore};
use group_storage_sled::{SledMetadataStore, SledOptions};
use group_types::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse, DeleteGroupsRequest, DeleteGroupsResponse, DescribeGroupsRequest,
    DescribeGroupsResponse, HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
    LeaveGroupRequest, LeaveGroupResponse, ListGroupsRequest, ListGroupsResponse, OffsetCommitRequest,
    OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchRequest, OffsetFetchResponse,
    SyncGroupRequest, SyncGroupResponse,
};

use crate::service::{Deferred, GroupService, ServiceError};
use crate::topics::{SharedTopics, Topics};
use crate::{AclAuthorizer, GroupServer, ServerConfig, ServerError, StorageMode, TopicSpec};

/// The group coordinator of this workspace behind the wire front end.
#[derive(Debug)]
pub struct CoordinatorService {
    coordinator: Arc<GroupCoordinator>,
    /// The ACLs the coordinator checks, when `--acl-file` is given.
    acl: Option<Arc<AclAuthorizer>>,
    /// The topics OffsetCommit and OffsetDelete may name (the coordinator's
    /// `TopicMetadata`), replaced by [`GroupService::topics_changed`].
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
                let store = SledMetadataStore::open_with_options(dir, options).map_err(|e| {
                    let held = e.to_string().contains("in use by another process");
                    if held {
                        ServerError::Storage(format!(
                            "{} is in use by another group-server (or another program holds its lock)",
                            dir.display()
                        ))
                    } else {
                        ServerError::Storage(format!("{}: {e}", dir.display()))
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
        let mut builder = GroupCoordinator::builder(storage, config.coordinator.clone())
            .topic_metadata(Arc::clone(&topics) as Arc<dyn TopicMetadata>)
            .metadata_image(image);
        if let Some(acl) = &acl {
            builder = builder.authorizer(Arc::clone(acl) as Arc<dyn Authorizer>);
        }
        let clustered = matches!(config.storage, StorageMode::Cluster(_));
        #[cfg(feature = "cluster")]
        if clustered {
            // Partitions are loaded as this node comes to own them, not at open.
            builder = builder
                .managed_ownership()
                .on_partition_lost(wakeup.listener())
                .serving_lease(serving.clone());
        }
        let coordinator = Arc::new(builder.open().map_err(|e| ServerError::Coordinator(e.to_string()))?);
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
}

fn failed(e: CoordinatorError) -> ServiceError {
    ServiceError(e.to_string())
}

fn deferred<T: ResponseKind + Send + 'static>(mut pending: Pending<T>) -> Deferred<T> {
    // Most answers (a heartbeat, a fetch) are ready at once: no allocation for them.
    match pending.try_get() {
        Some(answer) => Deferred::ready(answer.map_err(failed)),
        None => Deferred::new(async move { pending.await.map_err(failed) }),
    }
}

impl GroupService for CoordinatorService {
    fn join_group(&self, caller: &RequestContext, request: JoinGroupRequest) -> Deferred<JoinGroupResponse> {
        deferred(self.coordinator.caller(caller).join_group(request))
    }

    fn sync_group(&self, caller: &RequestContext, request: SyncGroupRequest) -> Deferred<SyncGroupResponse> {
        deferred(self.coordinator.caller(caller).sync_group(request))
    }

    fn heartbeat(&self, caller: &RequestContext, request: HeartbeatRequest) -> Deferred<HeartbeatResponse> {
        deferred(self.coordinator.caller(caller).heartbeat(request))
    }

    fn leave_group(
        &self,
        caller: &RequestContext,
        request: LeaveGroupRequest,
    ) -> Deferred<LeaveGroupResponse> {
        deferred(self.coordinator.caller(caller).leave_group(request))
    }

    fn offset_commit(
        &self,
        caller: &RequestContext,
        request: OffsetCommitRequest,
    ) -> Deferred<OffsetCommitResponse> {
        deferred(self.coordinator.caller(caller).offset_commit(request))
    }

    fn offset_fetch(
        &self,
        caller: &RequestContext,
        request: OffsetFetchRequest,
    ) -> Deferred<OffsetFetchResponse> {
        deferred(self.coordinator.caller(caller).offset_fetch(request))
    }

    fn describe_groups(
        &self,
        caller: &RequestContext,
        request: DescribeGroupsRequest,
    ) -> Deferred<DescribeGroupsResponse> {
        deferred(self.coordinator.caller(caller).describe_groups(request))
    }

    fn list_groups(
        &self,
        caller: &RequestContext,
        request: ListGroupsRequest,
    ) -> Deferred<ListGroupsResponse> {
        deferred(self.coordinator.caller(caller).list_groups_matching(request))
    }

    fn delete_groups(
        &self,
        caller: &RequestContext,
        request: DeleteGroupsRequest,
    ) -> Deferred<DeleteGroupsResponse> {
        deferred(self.coordinator.caller(caller).delete_groups(request))
    }

    fn offset_delete(
        &self,
        caller: &RequestContext,
        request: OffsetDeleteRequest,
    ) -> Deferred<OffsetDeleteResponse> {
        deferred(self.coordinator.caller(caller).offset_delete(request))
    }

    fn consumer_group_heartbeat(
        &self,
        caller: &RequestContext,
        request: ConsumerGroupHeartbeatRequest,
    ) -> Deferred<ConsumerGroupHeartbeatResponse> {
        deferred(self.coordinator.caller(caller).consumer_group_heartbeat(request))
    }

    fn consumer_group_describe(
        &self,
        caller: &RequestContext,
        request: ConsumerGroupDescribeRequest,
    ) -> Deferred<ConsumerGroupDescribeResponse> {
        deferred(self.coordinator.caller(caller).consumer_group_describe(request))
    }

    fn topics_changed(&self, topics: &[TopicSpec]) {
        // The node makes one change at a time (see `Node::create_topics`), so each
        // image is newer than the last and holds every topic.
        let version = self.image_version.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        self.topics.set(topics);
        self.coordinator.update_metadata_image(Topics::new(topics).image(version));
    }

    fn stop(&self) {
        // A cluster node first gives its partitions back (unloaded, lease revoked), so
        // that the other nodes take them over at once rather than after the lease.
        #[cfg(feature = "cluster")]
        if let Some(cluster) = &self.cluster {
            cluster.leave();
        }
        self.coordinator.stop();
    }

    fn metrics(&self) -> Option<group_coordinator::CoordinatorMetrics> {
        Some(self.coordinator.metrics())
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
        let opened = (|| {
            let listeners = crate::server::bind(config)?;
            // Before storage is opened: a bad certificate or users file leaves nothing behind.
            let security = crate::authenticate::Security::from_config(&config.security)?;
            let local =
                listeners.kafka.local_addr().map_err(|e| ServerError::Bind(config.listen, e.to_string()))?;
            let advertised =
                config.advertise.clone().unwrap_or_else(|| (local.ip().to_string(), local.port()));
            let service = CoordinatorService::open_advertised(config, &advertised, Some(runtime.handle()))?;
            Ok((listeners, security, service))
        })();
        let (listeners, security, service) = match opened {
            Ok(opened) => opened,
            Err(e) => {
                // Without blocking: the caller may be async code.
                runtime.shutdown_background();
                return Err(e);
            }
        };
        let acl = service.acl_authorizer().cloned();
        let brokers = service.brokers();
        GroupServer::serve(config, runtime, listeners, Arc::new(service), acl, security, brokers)
    }
}
