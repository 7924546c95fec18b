//! `EtcdStore`: the `MetadataStore` handle, one task per coordinator
//! partition on the caller's runtime, and [`connect`], the etcd client the
//! store (and the cluster layer beside it) runs on.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use etcd_client::{Client, ConnectOptions, GetOptions, KvClient};
use group_offsets::{
    AppendCompletion, CoordinatorPartition, LoadedPartition, MetadataStore, OwnerEpoch, Record, StorageError,
};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::EtcdConfig;
use crate::group_commit::{AppendTransactions, GroupCommit, Limits};
use crate::partition::{Unfolded, Worker};

/// gRPC answers up to this size are accepted (etcd-client's default is 4 MiB);
/// range reads are paged to stay well under it.
pub(crate) const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// Connects an etcd client to `config.endpoints` the way the store wants it
/// (request and connect timeouts from `config`, keep-alive pings), and checks
/// that the cluster answers a linearizable read (so a quorum is up), retrying
/// until [`EtcdConfig::connect_timeout`] has passed.
///
/// The client does not ask etcd to "require a leader": a request to a member
/// that lost its leader waits for the next one instead of failing at once. The
/// store bounds every attempt itself (a quarter of the request timeout, then
/// another member), and a cluster member's lease renewal, on the same client,
/// then completes the moment an election ends rather than racing it.
///
/// The client is the caller's: hand it (or a clone, which shares the
/// connection) to [`EtcdStore::new`] and to anything else of the process
/// that talks to the same etcd, such as `group-cluster`'s `ClusterMember`.
/// Await it on the runtime the store will run on: the client's connection
/// tasks live there.
///
/// Fails with [`StorageError::InvalidInput`] when `config` names no endpoint
/// and with [`StorageError::Unavailable`] when the cluster does not answer.
pub async fn connect(config: &EtcdConfig) -> Result<Client, StorageError> {
    if config.endpoints.is_empty() {
        return Err(StorageError::InvalidInput { message: "no etcd endpoints given".into() });
    }
    let options = ConnectOptions::new()
        .with_timeout(config.request_timeout)
        .with_connect_timeout(config.connect_timeout)
        .with_keep_alive(Duration::from_secs(1), config.request_timeout);
    let context = |what: &str| {
        format!("etcd at {:?} {what} (connect timeout {:?})", config.endpoints, config.connect_timeout)
    };
    let client =
        tokio::time::timeout(config.connect_timeout, Client::connect(&config.endpoints, Some(options)))
            .await
            .map_err(|_| StorageError::unavailable(context("did not accept a connection")))?
            .map_err(|e| StorageError::unavailable_from(context("refused the connection"), e))?;
    let mut kv = client.kv_client();
    // Retried until the deadline: the cluster may be electing a leader.
    let deadline = Instant::now() + config.connect_timeout;
    loop {
        let probe = kv.get(format!("{}/", config.prefix), Some(GetOptions::new().with_count_only()));
        match tokio::time::timeout(config.request_timeout, probe).await {
            Ok(Ok(_)) => return Ok(client),
            Ok(Err(e)) if Instant::now() >= deadline => {
                return Err(StorageError::unavailable_from(context("did not answer a read"), e));
            }
            Err(_) if Instant::now() >= deadline => {
                return Err(StorageError::unavailable(context("did not answer a read")));
            }
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// A [`MetadataStore`] over an etcd v3 cluster, shared by every coordinator
/// node: each append is one etcd transaction fenced by the partition's epoch
/// (and, with [`EtcdConfig::fence_with_owner_keys`], by its owner key).
///
/// Cheap to clone (clones share one client and the per-partition queues);
/// every method may be called from many threads. The store starts no runtime
/// and no thread of its own: its tasks run on the tokio runtime whose
/// [`Handle`] [`EtcdStore::new`] is given, over the caller's etcd
/// [`Client`] (see [`connect`]), so a program that already runs tokio embeds
/// it without a second runtime or a second connection.
///
/// # Threads
///
/// [`append`](MetadataStore::append) never blocks: it queues the append for
/// the partition's task and returns, from any thread, runtime or not. The
/// completion then runs on a worker thread of the runtime, in the partition's
/// task: it must not block (a send on a channel, as the coordinator does)
/// and must not wait for another call to this store. [`load`](MetadataStore::load),
/// [`owner_epoch`](MetadataStore::owner_epoch) and
/// [`append_blocking`](MetadataStore::append_blocking) wait for their answer:
/// call them from a thread that is not the runtime's (a coordinator's
/// storage stage, a `spawn_blocking` task); on a worker of a multi-thread
/// runtime they step out of the worker (`block_in_place`) first, and on a
/// current-thread runtime's own thread they would wait forever.
///
/// # Appends
///
/// Each partition has a queue served by one task, so appends of a partition
/// are applied and completed in call order, and partitions proceed
/// concurrently. An append is one transaction: compare the stored epoch (at
/// most the append's), the owner key when configured, that the entry's
/// sequence number is free and that no snapshot was taken meanwhile; then
/// raise the epoch and put the log entry. The appends of every partition
/// waiting at one moment go to etcd together (group commit), each as a
/// nested transaction with its own compares, so a fenced partition fails
/// alone; up to [`EtcdConfig::transactions_in_flight`] such transactions are
/// in flight, and what arrives meanwhile gathers for the next one
/// ([`EtcdStore::append_transactions`] counts them). A batch over
/// [`EtcdConfig::max_request_bytes`] is staged in chunks first and committed
/// by a manifest entry, so it is atomic too.
///
/// # Failures
///
/// When etcd does not answer, the transaction is retried (the same sequence
/// number and nonce, which is safe: at most one attempt can commit) until
/// [`EtcdConfig::request_timeout`] has passed, then the append completes with
/// [`StorageError::Unavailable`]. Its outcome may then be unknown (a timed
/// out transaction can still commit), so before its next append or read of
/// the partition, the store *voids* that sequence number: a transaction that
/// puts a void entry there if it is still free, after which the lost append
/// can never commit. If it finds the lost append committed after all, it
/// appends a revocation of it, which loads honour. Between such a late commit
/// and the revocation, a load by *another* store can see the records of an
/// append reported failed; once a new owner has raised the epoch the lost
/// append cannot commit at all.
///
/// # Compaction
///
/// After [`EtcdConfig::compact_after_entries`] entries (or
/// [`EtcdConfig::compact_after_bytes`]) the partition's task writes a
/// snapshot of its live records in chunks and switches to it in one fenced
/// transaction that also deletes the log entries and staged chunks it
/// covers. A crash before the switch leaves unused chunks, which a later
/// switch deletes. Every [`EtcdConfig::mvcc_compaction_interval`] the store
/// compacts etcd's history.
///
/// # Shutdown
///
/// Dropping the last clone cancels the store's tasks: appends still queued
/// or in flight complete with [`StorageError::Unavailable`]
/// ([`AppendCompletion`]'s own drop), as they do when the runtime shuts down.
pub struct EtcdStore {
    inner: Arc<Inner>,
}

impl Clone for EtcdStore {
    fn clone(&self) -> EtcdStore {
        EtcdStore { inner: Arc::clone(&self.inner) }
    }
}

struct Inner {
    config: EtcdConfig,
    shared: Arc<Shared>,
    queues: Box<[mpsc::UnboundedSender<Command>]>,
    /// The partition tasks and the history compaction, cancelled on drop:
    /// they run on the caller's runtime, which outlives the store.
    tasks: Vec<AbortHandle>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// What a partition's task is asked to do.
pub(crate) enum Command {
    Append {
        epoch: OwnerEpoch,
        records: Vec<Record>,
        completion: AppendCompletion,
    },
    /// Read the partition; the caller folds what was read on its own thread.
    Load {
        reply: std::sync::mpsc::SyncSender<Result<(OwnerEpoch, Unfolded), StorageError>>,
    },
    Epoch {
        reply: std::sync::mpsc::SyncSender<Result<OwnerEpoch, StorageError>>,
    },
}

/// What every partition task shares.
pub(crate) struct Shared {
    pub(crate) config: EtcdConfig,
    pub(crate) kv: KvClient,
    /// Where the partitions' log appends go, to be sent together.
    pub(crate) group_commit: GroupCommit,
    /// What the partitions' snapshots count.
    pub(crate) snapshots: SnapshotCounts,
    nonce_base: u64,
    nonce_counter: AtomicU64,
}

/// Snapshots switched in by a store's partitions (see [`EtcdStore::snapshots`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Snapshots {
    /// Snapshots switched in.
    pub taken: u64,
    /// Of those, the ones whose log entries came from memory.
    pub folded_from_memory: u64,
}

#[derive(Debug, Default)]
pub(crate) struct SnapshotCounts {
    taken: AtomicU64,
    folded_from_memory: AtomicU64,
}

impl SnapshotCounts {
    pub(crate) fn switched(&self, from_memory: bool) {
        self.taken.fetch_add(1, Ordering::Relaxed);
        if from_memory {
            self.folded_from_memory.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn read(&self) -> Snapshots {
        Snapshots {
            taken: self.taken.load(Ordering::Relaxed),
            folded_from_memory: self.folded_from_memory.load(Ordering::Relaxed),
        }
    }
}

impl Shared {
    /// A nonce no other append attempt (of any store, in any process) uses:
    /// a random base per store plus a counter.
    pub(crate) fn nonce(&self) -> u64 {
        self.nonce_base.wrapping_add(self.nonce_counter.fetch_add(1, Ordering::Relaxed))
    }
}

impl EtcdStore {
    /// A store over `client` (see [`connect`]) whose tasks run on `runtime`.
    /// Returns at once: it does no I/O and blocks nowhere, so it may be
    /// called from async code too.
    ///
    /// Fails with [`StorageError::InvalidInput`] for a bad configuration
    /// (zero partitions, a tiny `max_request_bytes`).
    pub fn new(config: EtcdConfig, client: Client, runtime: &Handle) -> Result<EtcdStore, StorageError> {
        if config.partitions == 0 {
            return Err(StorageError::InvalidInput { message: "partitions must be at least 1".into() });
        }
        if config.transactions_in_flight == 0 {
            return Err(StorageError::InvalidInput {
                message: "transactions_in_flight must be at least 1".into(),
            });
        }
        if config.max_request_bytes < 4096 {
            return Err(StorageError::InvalidInput {
                message: format!("max_request_bytes {} is below the 4096 minimum", config.max_request_bytes),
            });
        }
        let kv = client
            .kv_client()
            .max_decoding_message_size(MAX_RESPONSE_BYTES)
            .max_encoding_message_size(MAX_RESPONSE_BYTES);
        let seed = std::collections::hash_map::RandomState::new();
        let mut hasher = seed.build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos(),
        );
        hasher.write_u32(std::process::id());
        let limits = Limits {
            in_flight: config.transactions_in_flight,
            max_request_bytes: config.max_request_bytes,
            attempt: config.attempt_timeout(),
        };
        let (group_commit, sender) = GroupCommit::new(kv.clone(), limits);
        let shared = Arc::new(Shared {
            config: config.clone(),
            kv,
            group_commit,
            snapshots: SnapshotCounts::default(),
            nonce_base: hasher.finish(),
            nonce_counter: AtomicU64::new(0),
        });
        let mut tasks = Vec::with_capacity(config.partitions as usize + 2);
        tasks.push(runtime.spawn(sender).abort_handle());
        let queues = (0..config.partitions)
            .map(|p| {
                let (tx, rx) = mpsc::unbounded_channel();
                let worker = Worker::new(Arc::clone(&shared), CoordinatorPartition(p));
                tasks.push(runtime.spawn(worker.run(rx)).abort_handle());
                tx
            })
            .collect();
        if let Some(interval) = config.mvcc_compaction_interval {
            tasks.push(runtime.spawn(compact_history(Arc::clone(&shared), interval)).abort_handle());
        }
        Ok(EtcdStore { inner: Arc::new(Inner { config, shared, queues, tasks }) })
    }

    /// The configuration the store was made with.
    pub fn config(&self) -> &EtcdConfig {
        &self.inner.config
    }

    /// How many transactions of log appends the store has sent and how many
    /// appends they carried: their ratio is how many partitions' appends
    /// group commit gathered per transaction.
    pub fn append_transactions(&self) -> AppendTransactions {
        self.inner.shared.group_commit.sent()
    }

    /// How many snapshots the store's partitions switched in, and how many of
    /// them folded the log entries they cover from memory instead of reading
    /// them back from etcd.
    pub fn snapshots(&self) -> Snapshots {
        self.inner.shared.snapshots.read()
    }

    fn queue(
        &self,
        partition: CoordinatorPartition,
    ) -> Result<&mpsc::UnboundedSender<Command>, StorageError> {
        self.inner.queues.get(partition.0 as usize).ok_or_else(|| StorageError::InvalidInput {
            message: format!(
                "{partition} does not exist: the store has {} partitions",
                self.inner.queues.len()
            ),
        })
    }

    fn ask<T>(
        &self,
        partition: CoordinatorPartition,
        command: impl FnOnce(std::sync::mpsc::SyncSender<Result<T, StorageError>>) -> Command,
    ) -> Result<T, StorageError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.queue(partition)?.send(command(tx)).map_err(|_| closed())?;
        wait(|| rx.recv()).unwrap_or_else(|_| Err(closed()))
    }
}

/// Runs `f`, which waits for one of the store's tasks, on this thread. On a
/// worker of a multi-thread runtime the wait first hands the worker's other
/// tasks (the store's own among them) to another thread, so that it cannot
/// starve what it waits for.
fn wait<R>(f: impl FnOnce() -> R) -> R {
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

fn closed() -> StorageError {
    StorageError::unavailable("the etcd store is shutting down")
}

impl fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.inner.config;
        f.debug_struct("EtcdStore")
            .field("endpoints", &c.endpoints)
            .field("prefix", &c.prefix)
            .field("partitions", &c.partitions)
            .field("fence_with_owner_keys", &c.fence_with_owner_keys)
            .finish_non_exhaustive()
    }
}

impl MetadataStore for EtcdStore {
    fn partition_count(&self) -> u32 {
        self.inner.config.partitions
    }

    fn append(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
        completion: AppendCompletion,
    ) {
        match self.queue(partition) {
            Ok(queue) => {
                // A failed send hands the command back; dropping it answers `Unavailable`.
                let _ = queue.send(Command::Append { epoch, records, completion });
            }
            Err(e) => completion.complete(Err(e)),
        }
    }

    fn load(&self, partition: CoordinatorPartition) -> Result<LoadedPartition, StorageError> {
        // Folded here, on the caller's thread (a coordinator's loading thread;
        // out of a runtime worker, as the wait is), not in the partition's task.
        let (reply, rx) = std::sync::mpsc::sync_channel(1);
        self.queue(partition)?.send(Command::Load { reply }).map_err(|_| closed())?;
        wait(|| {
            let (epoch, unfolded) = rx.recv().unwrap_or_else(|_| Err(closed()))?;
            Ok(LoadedPartition { epoch, groups: unfolded.fold()? })
        })
    }

    fn owner_epoch(&self, partition: CoordinatorPartition) -> Result<OwnerEpoch, StorageError> {
        self.ask(partition, |reply| Command::Epoch { reply })
    }

    fn append_blocking(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
    ) -> Result<(), StorageError> {
        let (completion, rx) = AppendCompletion::channel();
        self.append(partition, epoch, records, completion);
        wait(|| rx.recv()).unwrap_or_else(|_| Err(closed()))
    }
}

/// Compacts etcd's MVCC history every `interval`, to the revision that was
/// current one interval before, so superseded values (old log entries and
/// snapshots) are freed while readers keep at least `interval` of history.
async fn compact_history(shared: Arc<Shared>, interval: Duration) {
    let mut previous: Option<i64> = None;
    loop {
        tokio::time::sleep(interval).await;
        let mut kv = shared.kv.clone();
        let probe = kv.get(format!("{}/", shared.config.prefix), Some(GetOptions::new().with_count_only()));
        let current = match tokio::time::timeout(shared.config.request_timeout, probe).await {
            Ok(Ok(resp)) => resp.header().map(|h| h.revision()),
            _ => None,
        };
        if let Some(revision) = previous {
            match tokio::time::timeout(shared.config.request_timeout, kv.compact(revision, None)).await {
                Ok(Ok(_)) => tracing::debug!(revision, "compacted etcd history"),
                // Someone compacted further already, or etcd is away: next time.
                Ok(Err(e)) => tracing::debug!(revision, error = %e, "etcd history compaction skipped"),
                Err(_) => tracing::debug!(revision, "etcd history compaction timed out"),
            }
        }
        previous = current.or(previous);
    }
}
