//! `EtcdStore`: the `MetadataStore` handle, its internal runtime, one task per
//! coordinator partition, and the thread that runs completions.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use etcd_client::{Client, ConnectOptions, GetOptions, KvClient};
use group_offsets::{
    AppendCompletion, CoordinatorPartition, LoadedPartition, MetadataStore, OwnerEpoch, Record, StorageError,
};
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

use crate::EtcdConfig;
use crate::partition::Worker;

/// gRPC answers up to this size are accepted (etcd-client's default is 4 MiB);
/// range reads are paged to stay well under it.
pub(crate) const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// A [`MetadataStore`] over an etcd v3 cluster, shared by every coordinator
/// node: each append is one etcd transaction fenced by the partition's epoch
/// (and, with [`EtcdConfig::fence_with_owner_keys`], by its owner key).
///
/// Cheap to clone (clones share one connection, runtime and per-partition
/// queues); every method may be called from many threads. The store owns a
/// small tokio runtime (two worker threads) and one thread that runs append
/// completions, so callers need no async runtime, and a completion may call
/// back into the store.
///
/// # Appends
///
/// [`append`](MetadataStore::append) returns at once. Each partition has a
/// queue served by one task, so appends of a partition are applied and
/// completed in call order, and partitions proceed concurrently. An append is
/// one transaction: compare the stored epoch (at most the append's), the
/// owner key when configured, that the entry's sequence number is free and
/// that no snapshot was taken meanwhile; then raise the epoch and put the log
/// entry. A batch over [`EtcdConfig::max_request_bytes`] is staged in chunks
/// first and committed by a manifest entry, so it is atomic too.
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
    queues: Box<[mpsc::UnboundedSender<Command>]>,
    /// Taken in `drop`: a runtime dropped on one of its own threads (the last
    /// clone dropped in a task) must shut down without blocking.
    runtime: Option<Runtime>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Queued appends are dropped with their tasks: their completions
            // answer `Unavailable` (AppendCompletion's own drop).
            runtime.shutdown_background();
        }
    }
}

/// What a partition's task is asked to do.
pub(crate) enum Command {
    Append { epoch: OwnerEpoch, records: Vec<Record>, completion: AppendCompletion },
    Load { reply: std::sync::mpsc::SyncSender<Result<LoadedPartition, StorageError>> },
    Epoch { reply: std::sync::mpsc::SyncSender<Result<OwnerEpoch, StorageError>> },
}

/// What every partition task shares.
pub(crate) struct Shared {
    pub(crate) config: EtcdConfig,
    pub(crate) kv: KvClient,
    /// Completed appends go to the completion thread, in order.
    pub(crate) completions: std::sync::mpsc::Sender<(AppendCompletion, Result<(), StorageError>)>,
    nonce_base: u64,
    nonce_counter: AtomicU64,
}

impl Shared {
    /// A nonce no other append attempt (of any store, in any process) uses:
    /// a random base per store plus a counter.
    pub(crate) fn nonce(&self) -> u64 {
        self.nonce_base.wrapping_add(self.nonce_counter.fetch_add(1, Ordering::Relaxed))
    }
}

impl EtcdStore {
    /// Connects to the cluster of `config.endpoints` and checks that it
    /// answers (a linearizable read, so a quorum must be up), waiting at most
    /// [`EtcdConfig::connect_timeout`]. Blocks; call it from a plain thread,
    /// not from inside an async runtime.
    ///
    /// Fails with [`StorageError::InvalidInput`] for a bad configuration (no
    /// endpoints, zero partitions, a tiny `max_request_bytes`) and with
    /// [`StorageError::Unavailable`] when the cluster does not answer.
    pub fn connect(config: EtcdConfig) -> Result<EtcdStore, StorageError> {
        if config.endpoints.is_empty() {
            return Err(StorageError::InvalidInput { message: "no etcd endpoints given".into() });
        }
        if config.partitions == 0 {
            return Err(StorageError::InvalidInput { message: "partitions must be at least 1".into() });
        }
        if config.max_request_bytes < 4096 {
            return Err(StorageError::InvalidInput {
                message: format!("max_request_bytes {} is below the 4096 minimum", config.max_request_bytes),
            });
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("group-storage-etcd")
            .enable_all()
            .build()
            .map_err(|e| StorageError::io(format!("could not start the etcd store's runtime: {e}")))?;
        let options = ConnectOptions::new()
            .with_timeout(config.request_timeout)
            .with_connect_timeout(config.connect_timeout)
            .with_keep_alive(Duration::from_secs(1), config.request_timeout)
            // A member cut off from its quorum refuses at once ("no leader")
            // instead of holding the request until it times out.
            .with_require_leader(true);
        let endpoints = config.endpoints.clone();
        let unavailable = |what: String| StorageError::Unavailable {
            message: format!("etcd at {endpoints:?} {what} (connect timeout {:?})", config.connect_timeout),
        };
        let kv = runtime.block_on(async {
            let client = tokio::time::timeout(
                config.connect_timeout,
                Client::connect(&config.endpoints, Some(options)),
            )
            .await
            .map_err(|_| unavailable("did not accept a connection".into()))?
            .map_err(|e| unavailable(format!("refused the connection: {e}")))?;
            let mut kv = client
                .kv_client()
                .max_decoding_message_size(MAX_RESPONSE_BYTES)
                .max_encoding_message_size(MAX_RESPONSE_BYTES);
            // Retried until the deadline: the cluster may be electing a leader.
            let deadline = Instant::now() + config.connect_timeout;
            loop {
                let probe = kv.get(format!("{}/", config.prefix), Some(GetOptions::new().with_count_only()));
                match tokio::time::timeout(config.request_timeout, probe).await {
                    Ok(Ok(_)) => break Ok(kv),
                    Ok(Err(e)) if Instant::now() >= deadline => {
                        break Err(unavailable(format!("did not answer a read: {e}")));
                    }
                    Err(_) if Instant::now() >= deadline => {
                        break Err(unavailable("did not answer a read".into()));
                    }
                    _ => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
        })?;

        let (done_tx, done_rx) = std::sync::mpsc::channel::<(AppendCompletion, Result<(), StorageError>)>();
        // Completions run here, not on the runtime: a callback may block or
        // call back into the store (even into the partition that completed
        // it) without stalling a partition task. One thread keeps each
        // partition's completions in order. It ends when the tasks are gone.
        std::thread::Builder::new()
            .name("group-storage-etcd-completions".into())
            .spawn(move || {
                for (completion, result) in done_rx {
                    completion.complete(result);
                }
            })
            .map_err(|e| StorageError::io(format!("could not start the completion thread: {e}")))?;

        let seed = std::collections::hash_map::RandomState::new();
        let mut hasher = seed.build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos(),
        );
        hasher.write_u32(std::process::id());
        let shared = Arc::new(Shared {
            config: config.clone(),
            kv,
            completions: done_tx,
            nonce_base: hasher.finish(),
            nonce_counter: AtomicU64::new(0),
        });
        let queues = (0..config.partitions)
            .map(|p| {
                let (tx, rx) = mpsc::unbounded_channel();
                runtime.spawn(Worker::new(Arc::clone(&shared), CoordinatorPartition(p)).run(rx));
                tx
            })
            .collect();
        if let Some(interval) = config.mvcc_compaction_interval {
            runtime.spawn(compact_history(Arc::clone(&shared), interval));
        }
        drop(shared);
        Ok(EtcdStore { inner: Arc::new(Inner { config, queues, runtime: Some(runtime) }) })
    }

    /// The configuration the store was connected with.
    pub fn config(&self) -> &EtcdConfig {
        &self.inner.config
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
        rx.recv().unwrap_or_else(|_| Err(closed()))
    }
}

fn closed() -> StorageError {
    StorageError::Unavailable { message: "the etcd store is shutting down".into() }
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
        self.ask(partition, |reply| Command::Load { reply })
    }

    fn owner_epoch(&self, partition: CoordinatorPartition) -> Result<OwnerEpoch, StorageError> {
        self.ask(partition, |reply| Command::Epoch { reply })
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
