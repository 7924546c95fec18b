//! `EtcdConfig`: where the store's etcd is, how its keys are laid out, and
//! when it compacts.

use std::time::Duration;

use group_offsets::DEFAULT_COORDINATOR_PARTITIONS;

/// How an [`EtcdStore`](crate::EtcdStore) reaches etcd and lays out its data.
///
/// Start from [`EtcdConfig::new`] and set what differs:
///
/// ```
/// use std::time::Duration;
/// use group_storage_etcd::EtcdConfig;
///
/// let config = EtcdConfig {
///     request_timeout: Duration::from_secs(2),
///     fence_with_owner_keys: true,
///     ..EtcdConfig::new(["http://10.0.0.1:2379", "http://10.0.0.2:2379"])
/// };
/// assert_eq!(config.prefix, "/group-coordinator");
/// assert_eq!(config.partitions, 50);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdConfig {
    /// The etcd client URLs (`http://host:2379`); the client balances over them.
    pub endpoints: Vec<String>,
    /// The key prefix every key of the store starts with (no trailing `/`).
    /// Stores with different prefixes share an etcd cluster without mixing.
    pub prefix: String,
    /// How many coordinator partitions the data is laid out in (at least 1);
    /// every node sharing the prefix must agree on it.
    pub partitions: u32,
    /// How long one etcd request may take. An append whose transaction does
    /// not answer within it, with retries, completes with
    /// `StorageError::Unavailable` after about this long.
    pub request_timeout: Duration,
    /// How long [`connect`](crate::connect) waits for a first answer from
    /// the cluster.
    pub connect_timeout: Duration,
    /// The largest request the store sends. etcd refuses requests over its
    /// `--max-request-bytes` (1.5 MiB by default); the default here leaves
    /// headroom for keys and framing. A batch whose encoding is larger is
    /// staged in chunks of about this size and committed by a manifest.
    pub max_request_bytes: usize,
    /// A partition's log is folded into a new snapshot once it holds this many
    /// entries since the last snapshot.
    pub compact_after_entries: u64,
    /// ... or once the entries since the last snapshot hold this many bytes.
    pub compact_after_bytes: u64,
    /// Also fence appends with the partition's owner key
    /// ([`owner_key`](crate::owner_key)): an append succeeds only while the
    /// owner key exists with `create_revision` equal to the append's epoch.
    /// Off, appends are fenced by the stored epoch alone.
    pub fence_with_owner_keys: bool,
    /// How often to compact etcd's MVCC history (to the revision current one
    /// interval earlier, so readers and watchers have at least this long), so
    /// values superseded by snapshots do not pile up. `None` leaves it to the
    /// operator (etcd's `--auto-compaction-*`). Compaction is cluster-wide: it
    /// drops history of every key, not only this store's.
    pub mvcc_compaction_interval: Option<Duration>,
    /// How many transactions of log appends may be in flight at once (at
    /// least 1). The appends of every partition waiting while this many are
    /// in flight go to etcd together, as one transaction, when one answers:
    /// fewer allows more to gather (less work for etcd per append), more
    /// waits less under light load.
    pub transactions_in_flight: usize,
}

/// etcd's default `--max-request-bytes` is 1.5 MiB; keep 64 KiB for the key,
/// the other operations of a transaction and gRPC framing.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 1536 * 1024 - 64 * 1024;

/// Transactions of log appends in flight at once, by default.
pub const DEFAULT_TRANSACTIONS_IN_FLIGHT: usize = 2;

impl EtcdConfig {
    /// The defaults, over `endpoints`: prefix `/group-coordinator`, 50
    /// partitions, 5 s requests, [`DEFAULT_MAX_REQUEST_BYTES`], a snapshot
    /// every 1,000 entries or 16 MiB, no owner keys, MVCC compaction every 5
    /// minutes, [`DEFAULT_TRANSACTIONS_IN_FLIGHT`].
    pub fn new<S: Into<String>>(endpoints: impl IntoIterator<Item = S>) -> EtcdConfig {
        EtcdConfig {
            endpoints: endpoints.into_iter().map(Into::into).collect(),
            prefix: "/group-coordinator".to_owned(),
            partitions: DEFAULT_COORDINATOR_PARTITIONS,
            request_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(5),
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            compact_after_entries: 1_000,
            compact_after_bytes: 16 * 1024 * 1024,
            fence_with_owner_keys: false,
            mvcc_compaction_interval: Some(Duration::from_secs(300)),
            transactions_in_flight: DEFAULT_TRANSACTIONS_IN_FLIGHT,
        }
    }

    /// How long one attempt of an etcd call may take: a quarter of the request
    /// timeout (at least 100 ms), so a request stuck on a dead member is
    /// retried, and balanced to another one, well before the call's deadline.
    pub(crate) fn attempt_timeout(&self) -> Duration {
        (self.request_timeout / 4).max(Duration::from_millis(100))
    }
}
