//! The driver: one node's membership of the cluster over etcd. It holds the node's
//! lease, checks it every tick, reads the cluster's keys when its watch of them
//! sees a change (and every tick while partitions are moving, and now and then
//! when nothing moves), and carries out what [`reconcile`](crate::plan::reconcile)
//! decides.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use etcd_client::{
    Client, Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp, TxnOpResponse, WatchOptions, WatchStream,
};
use group_coordinator::ServingLease;
use group_offsets::{CoordinatorPartition, OwnerEpoch};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::Notify;

use crate::host::PartitionHost;
use crate::plan::{Action, Hosting, LeaseId, Local, Observation, OwnerRecord, reconcile};
use crate::{ClusterConfig, ClusterError, ClusterView};

/// Wakes the driver before its next tick: when the coordinator loses a partition
/// to a fenced append, the node should look at etcd at once.
#[derive(Debug, Clone, Default)]
pub struct Wakeup(Arc<Notify>);

impl Wakeup {
    /// A wakeup not yet tied to a driver.
    pub fn new() -> Self {
        Wakeup::default()
    }

    /// A listener for `GroupCoordinatorBuilder::on_partition_lost`.
    pub fn listener(&self) -> Arc<dyn Fn(CoordinatorPartition, OwnerEpoch) + Send + Sync> {
        let notify = self.0.clone();
        Arc::new(move |_, _| notify.notify_one())
    }
}

/// This node's place in the cluster; stops (releasing its partitions) when
/// [`leave`](Self::leave) or [`shutdown`](Self::shutdown) is called, or it is
/// dropped.
///
/// It starts no runtime and keeps no etcd client of its own: its driver is a
/// task on the caller's runtime, over the caller's client (the one the
/// etcd store runs on, so one process keeps one connection to etcd).
#[derive(Debug)]
pub struct ClusterMember {
    view: ClusterView,
    stop: Arc<Notify>,
    stopping: Arc<AtomicBool>,
    driver: Option<tokio::task::JoinHandle<()>>,
    /// Told when the driver has left the cluster (dropped unsent when its task
    /// is dropped with the runtime): what a blocking stop waits for.
    left: Option<std::sync::mpsc::Receiver<()>>,
}

/// The watches of the node keys and the owner keys: a change to either is a
/// reason to read the keys at once.
struct KeysWatch {
    nodes: WatchStream,
    owners: WatchStream,
}

/// Waits for a change to the watched keys: true when one came, false when a watch
/// failed or ended (the caller drops it and watches again). Never resolves
/// without a watch: the tick goes on reading the keys.
async fn next_change(watch: &mut Option<KeysWatch>) -> bool {
    let Some(w) = watch else { return std::future::pending().await };
    let message = tokio::select! {
        m = w.nodes.message() => m,
        m = w.owners.message() => m,
    };
    match message {
        Ok(Some(r)) => !r.canceled(),
        Ok(None) | Err(_) => false,
    }
}

struct Lease {
    id: LeaseId,
    keeper: tokio::task::JoinHandle<()>,
}

struct Driver {
    config: ClusterConfig,
    client: Client,
    host: Arc<dyn PartitionHost>,
    view: ClusterView,
    lease: Option<Lease>,
    /// Until when the current lease is known to hold; the coordinator refuses
    /// every request once it has run out.
    serving: Arc<ServingLease>,
    owners_prefix: String,
}

impl ClusterMember {
    /// Registers the node under a lease and starts taking its share of
    /// partitions from `host` (a coordinator built with managed ownership,
    /// `on_partition_lost(wakeup.listener())` and `serving_lease(serving)`), in a
    /// task on `runtime` over `client` (`group_storage_etcd::connect` makes one;
    /// share it with the node's `EtcdStore`).
    ///
    /// Returns at once, blocking nowhere (it may be called from async code);
    /// registering and claiming happen in the task, which retries each tick
    /// until etcd answers. Fails only for an unusable `config`.
    pub fn start(
        config: ClusterConfig,
        client: Client,
        runtime: &Handle,
        host: Arc<dyn PartitionHost>,
        wakeup: Wakeup,
        serving: Arc<ServingLease>,
    ) -> Result<ClusterMember, ClusterError> {
        if config.lease_ttl_secs < 1 {
            return Err(ClusterError::LeaseTtlTooShort { lease_ttl_secs: config.lease_ttl_secs });
        }
        let view = ClusterView::default();
        let stop = Arc::new(Notify::new());
        let stopping = Arc::new(AtomicBool::new(false));
        let owners_prefix = group_storage_etcd::owners_prefix(&config.prefix);
        let mut driver =
            Driver { config, client, host, view: view.clone(), lease: None, serving, owners_prefix };
        let (stop2, stopping2) = (stop.clone(), stopping.clone());
        let (left_tx, left) = std::sync::mpsc::sync_channel(1);
        let task = runtime.spawn(async move {
            let tick = driver.config.tick;
            let mut watch: Option<KeysWatch> = None;
            // Read the keys at the first step, and whenever told to.
            let mut read = true;
            let mut last_read = Instant::now();
            loop {
                let settled = if read || last_read.elapsed() >= driver.config.settled_read_interval {
                    last_read = Instant::now();
                    driver.step().await
                } else {
                    driver.watchdog()
                };
                if stopping2.load(Ordering::Acquire) {
                    break;
                }
                // Only once etcd answered this step: the watchdog must not wait on
                // an etcd that is away.
                if watch.is_none() && settled {
                    watch = driver.watch_keys().await;
                }
                read = !settled;
                tokio::select! {
                    () = stop2.notified() => break,
                    () = wakeup.0.notified() => read = true,
                    () = tokio::time::sleep(tick) => {}
                    alive = next_change(&mut watch) => {
                        read = true;
                        if !alive {
                            watch = None;
                        }
                    }
                }
            }
            driver.leave().await;
            let _ = left_tx.send(());
        });
        Ok(ClusterMember { view, stop, stopping, driver: Some(task), left: Some(left) })
    }

    /// What the node knows of the cluster.
    pub fn view(&self) -> ClusterView {
        self.view.clone()
    }

    /// Leaves the cluster: unloads every partition and revokes the lease, so that
    /// the other nodes take the partitions over at once instead of after the TTL.
    /// What async code calls; completes once the node has left.
    pub async fn leave(mut self) {
        self.signal_stop();
        self.left = None;
        if let Some(driver) = self.driver.take() {
            // A driver that panicked or was cancelled has nothing left to do.
            let _ = driver.await;
        }
    }

    /// [`leave`](Self::leave), blocking until the node has left: for a thread
    /// that is not running async code. On a worker of a multi-thread runtime it
    /// steps out of the worker to wait; on a current-thread runtime's own thread
    /// it cannot wait (the driver runs there), so it returns once the leave is
    /// asked for and the driver leaves in the background.
    pub fn shutdown(mut self) {
        self.stop_and_wait();
    }

    fn signal_stop(&self) {
        self.stopping.store(true, Ordering::Release);
        self.stop.notify_one();
    }

    fn stop_and_wait(&mut self) {
        self.signal_stop();
        self.driver = None;
        let Some(left) = self.left.take() else { return };
        match Handle::try_current().map(|h| h.runtime_flavor()) {
            Ok(RuntimeFlavor::MultiThread) => {
                let _ = tokio::task::block_in_place(|| left.recv());
            }
            Ok(_) => {
                tracing::debug!(target: "group_cluster", "stopped from a current-thread runtime: leaving in the background");
            }
            Err(_) => {
                let _ = left.recv();
            }
        }
    }
}

impl Drop for ClusterMember {
    fn drop(&mut self) {
        self.stop_and_wait();
    }
}

impl Driver {
    async fn timed<T>(
        &self,
        what: &'static str,
        f: impl std::future::Future<Output = Result<T, etcd_client::Error>>,
    ) -> Result<T, ClusterError> {
        match tokio::time::timeout(self.config.request_timeout, f).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(source)) => Err(ClusterError::Etcd { what, source }),
            Err(_) => Err(ClusterError::Timeout { what, timeout: self.config.request_timeout }),
        }
    }

    /// The watchdog: a lease not known to be alive for at least another tick may
    /// already have expired in etcd (a paused process, a partition from etcd), and
    /// another node may own our partitions: stop serving them before anything else.
    /// True when nothing changed (the node holds a live lease).
    fn watchdog(&mut self) -> bool {
        let expired = self.lease.is_some() && !self.serving.holds_for(self.config.tick);
        if expired {
            tracing::warn!(
                target: "group_cluster",
                node_id = self.config.node_id,
                "lease not renewed in time; unloading every partition and joining again"
            );
            self.drop_lease();
        }
        self.lease.is_some()
    }

    /// Watches the node and owner keys; `None` when etcd does not answer (the next
    /// loop tries again after the next step).
    async fn watch_keys(&self) -> Option<KeysWatch> {
        let mut client = self.client.clone();
        let nodes = self.config.nodes_prefix();
        let owners = self.owners_prefix.clone();
        let watched = self
            .timed("watching the cluster's keys", async move {
                let nodes = client.watch(nodes, Some(WatchOptions::new().with_prefix())).await?;
                let owners = client.watch(owners, Some(WatchOptions::new().with_prefix())).await?;
                Ok((nodes, owners))
            })
            .await;
        match watched {
            Ok((nodes, owners)) => Some(KeysWatch { nodes, owners }),
            Err(e) => {
                tracing::debug!(target: "group_cluster", node_id = self.config.node_id, error = %e, "cannot watch the cluster's keys");
                None
            }
        }
    }

    /// One step: keep a live lease, read the keys, act. True when the node is
    /// settled: registered, the keys read, and nothing left to do.
    async fn step(&mut self) -> bool {
        self.watchdog();
        if self.lease.is_none()
            && let Err(e) = self.register().await
        {
            tracing::warn!(target: "group_cluster", node_id = self.config.node_id, error = %e, "cannot register with etcd");
        }
        let observed = match self.observe().await {
            Ok(o) => o,
            Err(e) => {
                tracing::warn!(target: "group_cluster", node_id = self.config.node_id, error = %e, "cannot read the cluster's keys");
                return false;
            }
        };
        self.view.update(observed.clone());
        let partitions = self.host.partition_count();
        let hosting: Vec<Hosting> =
            (0..partitions).map(|p| self.host.hosting(CoordinatorPartition(p))).collect();
        let local = Local {
            node_id: self.config.node_id,
            lease: self.lease.as_ref().map(|l| l.id),
            hosting: &hosting,
        };
        let actions = reconcile(&local, &observed);
        let settled = actions.is_empty() && self.lease.is_some();
        let mut loads = Vec::new();
        for action in actions {
            match action {
                Action::Unload(p) => {
                    tracing::info!(target: "group_cluster", partition = p.0, "unloading: etcd no longer shows it as ours");
                    self.host.unload(p);
                }
                Action::Release(p, epoch) => self.release(p, epoch).await,
                Action::Claim(p) => {
                    if let Some(epoch) = self.claim(p).await {
                        loads.push((p, epoch));
                    }
                }
                Action::Load(p, epoch) => loads.push((p, epoch)),
            }
        }
        self.load_all(loads).await;
        settled
    }

    fn drop_lease(&mut self) {
        for p in 0..self.host.partition_count() {
            let p = CoordinatorPartition(p);
            if self.host.hosting(p) != Hosting::Unowned {
                self.host.unload(p);
            }
        }
        self.serving.revoke();
        if let Some(lease) = self.lease.take() {
            lease.keeper.abort();
        }
    }

    /// Grants a lease, registers the node under it and starts renewing it.
    async fn register(&mut self) -> Result<(), ClusterError> {
        let ttl = self.config.lease_ttl_secs;
        let asked = Instant::now();
        let mut client = self.client.clone();
        let granted = self.timed("lease grant", client.lease_grant(ttl, None)).await?;
        let id = granted.id();
        let key = self.config.node_key(self.config.node_id);
        // Only if no live lease holds the id: two processes with one --node-id would
        // each take the other's address out of Metadata.
        let txn = Txn::new().when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)]).and_then([
            TxnOp::put(key, self.config.advertise.clone(), Some(PutOptions::new().with_lease(id))),
        ]);
        let registered = self.timed("node registration", client.txn(txn)).await?;
        if !registered.succeeded() {
            let _ = self.timed("lease revoke", client.lease_revoke(id)).await;
            return Err(ClusterError::NodeIdTaken { node_id: self.config.node_id, lease_ttl_secs: ttl });
        }
        // Counted from before the grant: etcd started the TTL no earlier.
        self.serving.extend(asked, Duration::from_secs(granted.ttl().max(0) as u64));
        let keeper =
            tokio::spawn(keep_alive(client, id, ttl, self.serving.clone(), self.config.request_timeout));
        tracing::info!(target: "group_cluster", node_id = self.config.node_id, lease = id, ttl, "registered");
        self.lease = Some(Lease { id, keeper });
        Ok(())
    }

    /// Every node and owner key, read at one revision.
    async fn observe(&self) -> Result<Observation, ClusterError> {
        let mut client = self.client.clone();
        let txn = Txn::new().and_then([
            TxnOp::get(self.config.nodes_prefix(), Some(GetOptions::new().with_prefix())),
            TxnOp::get(self.owners_prefix.clone(), Some(GetOptions::new().with_prefix())),
        ]);
        const WHAT: &str = "reading the cluster";
        let response = self.timed(WHAT, client.txn(txn)).await?;
        let mut gets = response.op_responses().into_iter().filter_map(|r| match r {
            TxnOpResponse::Get(g) => Some(g),
            _ => None,
        });
        let (Some(nodes), Some(owners)) = (gets.next(), gets.next()) else {
            return Err(ClusterError::UnexpectedAnswer { what: WHAT });
        };
        let mut observed = Observation::default();
        let nodes_prefix = self.config.nodes_prefix();
        for kv in nodes.kvs() {
            let id =
                kv.key_str().ok().and_then(|k| k.strip_prefix(&nodes_prefix)).and_then(|s| s.parse().ok());
            match (id, kv.value_str()) {
                (Some(id), Ok(advertised)) => {
                    observed.nodes.insert(id, advertised.to_owned());
                }
                _ => {
                    tracing::warn!(target: "group_cluster", key = ?kv.key(), "ignoring a malformed node key")
                }
            }
        }
        for kv in owners.kvs() {
            let partition = kv
                .key_str()
                .ok()
                .and_then(|k| k.strip_prefix(&self.owners_prefix))
                .and_then(|s| s.parse().ok());
            let node_id = kv.value_str().ok().and_then(|v| v.parse().ok());
            match (partition, node_id) {
                (Some(p), Some(node_id)) => {
                    let epoch = OwnerEpoch(kv.create_revision().max(0) as u64);
                    observed.owners.insert(p, OwnerRecord { node_id, lease: kv.lease(), epoch });
                }
                _ => {
                    tracing::warn!(target: "group_cluster", key = ?kv.key(), "ignoring a malformed owner key")
                }
            }
        }
        Ok(observed)
    }

    /// Creates the partition's owner key if it is missing; its create revision is
    /// the new epoch.
    async fn claim(&self, p: CoordinatorPartition) -> Option<OwnerEpoch> {
        let lease = self.lease.as_ref()?.id;
        let key = group_storage_etcd::owner_key(&self.config.prefix, p);
        let txn = Txn::new().when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)]).and_then([
            TxnOp::put(key, self.config.node_id.to_string(), Some(PutOptions::new().with_lease(lease))),
        ]);
        let mut client = self.client.clone();
        match self.timed("claiming a partition", client.txn(txn)).await {
            Ok(r) if r.succeeded() => {
                let revision = r.header().map(|h| h.revision()).unwrap_or(0);
                tracing::info!(target: "group_cluster", partition = p.0, epoch = revision, "claimed");
                (revision > 0).then_some(OwnerEpoch(revision as u64))
            }
            // Another node was quicker: the next tick sees its key.
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(target: "group_cluster", partition = p.0, error = %e, "claim failed");
                None
            }
        }
    }

    /// Unloads first (so nothing is acknowledged after the key is gone), then
    /// deletes the key if it is still the one we hold.
    async fn release(&self, p: CoordinatorPartition, epoch: OwnerEpoch) {
        self.host.unload(p);
        let key = group_storage_etcd::owner_key(&self.config.prefix, p);
        let txn = Txn::new()
            .when([Compare::create_revision(key.clone(), CompareOp::Equal, epoch.0 as i64)])
            .and_then([TxnOp::delete(key, None)]);
        let mut client = self.client.clone();
        match self.timed("releasing a partition", client.txn(txn)).await {
            Ok(_) => tracing::info!(target: "group_cluster", partition = p.0, epoch = epoch.0, "released"),
            Err(e) => {
                tracing::warn!(target: "group_cluster", partition = p.0, error = %e, "release failed; the key goes with the lease")
            }
        }
    }

    /// Loads the partitions all at once, each on a blocking thread (a load reads
    /// etcd and replays the partition; the lease is renewed meanwhile).
    async fn load_all(&self, loads: Vec<(CoordinatorPartition, OwnerEpoch)>) {
        let tasks: Vec<_> = loads
            .into_iter()
            .map(|(p, epoch)| {
                let host = self.host.clone();
                let task = tokio::task::spawn_blocking(move || {
                    let started = Instant::now();
                    (host.load(p, epoch), started.elapsed())
                });
                (p, epoch, task)
            })
            .collect();
        for (p, epoch, task) in tasks {
            match task.await {
                Ok((Ok(()), took)) => {
                    tracing::info!(target: "group_cluster", partition = p.0, epoch = epoch.0, took_ms = took.as_millis() as u64, "loaded")
                }
                Ok((Err(e), _)) => {
                    tracing::warn!(target: "group_cluster", partition = p.0, epoch = epoch.0, error = %e, "load failed; retried next tick")
                }
                Err(e) => {
                    tracing::warn!(target: "group_cluster", partition = p.0, error = %e, "load task failed")
                }
            }
        }
    }

    /// Leaves: unload everything, then revoke the lease (which deletes the node's
    /// keys, so the others claim its partitions at their next tick).
    async fn leave(&mut self) {
        let lease = self.lease.as_ref().map(|l| l.id);
        self.drop_lease();
        if let Some(id) = lease {
            let mut client = self.client.clone();
            match self.timed("lease revoke", client.lease_revoke(id)).await {
                Ok(_) => {
                    tracing::info!(target: "group_cluster", node_id = self.config.node_id, "left the cluster")
                }
                Err(e) => {
                    tracing::warn!(target: "group_cluster", error = %e, "could not revoke the lease; it expires by itself")
                }
            }
        }
    }
}

/// Renews the lease every third of its TTL and records until when it is known to
/// be alive; stops when etcd reports it gone (the driver's watchdog notices).
async fn keep_alive(
    mut client: Client,
    id: LeaseId,
    ttl: i64,
    serving: Arc<ServingLease>,
    timeout: Duration,
) {
    let every = Duration::from_millis((ttl.max(1) as u64 * 1000) / 3);
    loop {
        let stream = tokio::time::timeout(timeout, client.lease_keep_alive(id)).await;
        let Ok(Ok((mut keeper, mut responses))) = stream else {
            tokio::time::sleep(every / 4).await;
            continue;
        };
        loop {
            let asked = Instant::now();
            if keeper.keep_alive().await.is_err() {
                break;
            }
            match tokio::time::timeout(timeout, responses.message()).await {
                Ok(Ok(Some(r))) if r.ttl() > 0 => serving.extend(asked, Duration::from_secs(r.ttl() as u64)),
                Ok(Ok(Some(_))) => {
                    tracing::warn!(target: "group_cluster", lease = id, "etcd reports the lease expired");
                    serving.revoke();
                    return;
                }
                _ => break,
            }
            tokio::time::sleep(every).await;
        }
        tokio::time::sleep(every / 4).await;
    }
}
