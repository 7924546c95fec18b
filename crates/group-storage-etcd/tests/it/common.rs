//! Helpers shared by the tests: one etcd per test, stores on fresh prefixes.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use group_offsets::{LoadedPartition, ModernGroupRecord, Record};
use group_storage_etcd::testing::{EtcdCluster, unique_prefix};
use group_storage_etcd::{EtcdConfig, EtcdStore};
use group_types::{OffsetAndMetadata, TopicPartition};

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

/// The tests' tokio runtime, as a program embedding the store would have
/// one: every store and raw client of the test binary runs on it.
pub(crate) static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("etcd-tests")
        .enable_all()
        .build()
        .expect("the tests' runtime starts")
});

/// A store over its own client on [`RUNTIME`].
pub(crate) fn connect(config: EtcdConfig) -> EtcdStore {
    let client = RUNTIME
        .block_on(group_storage_etcd::connect(&config))
        .unwrap_or_else(|e| panic!("cannot connect: {e}"));
    EtcdStore::new(config, client, RUNTIME.handle()).unwrap_or_else(|e| panic!("cannot open the store: {e}"))
}

/// A loaded partition in a canonical order (loads list groups, and
/// consumer-group records, in no particular order), for comparing two stores.
pub(crate) fn normalise(mut loaded: LoadedPartition) -> LoadedPartition {
    loaded.groups.groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    loaded.groups.offsets.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    let key = |r: &ModernGroupRecord| (r.group_id().to_string(), r.record_type(), r.sub_key().to_owned());
    loaded.groups.consumer.sort_by_key(key);
    loaded
}

/// A plain etcd client for what the store does not do itself (owner keys,
/// leases, looking at raw keys), on [`RUNTIME`].
pub(crate) struct Raw {
    pub(crate) runtime: &'static tokio::runtime::Runtime,
    pub(crate) client: etcd_client::Client,
}

impl Raw {
    pub(crate) fn connect(cluster: &EtcdCluster) -> Raw {
        let runtime = &*RUNTIME;
        let client = runtime
            .block_on(etcd_client::Client::connect(cluster.endpoints(), None))
            .expect("connect to etcd");
        Raw { runtime, client }
    }

    /// How many keys start with `prefix`.
    pub(crate) fn count(&self, prefix: &str) -> i64 {
        let mut client = self.client.clone();
        let options = etcd_client::GetOptions::new().with_prefix().with_count_only();
        self.runtime.block_on(client.get(prefix, Some(options))).expect("count keys").count()
    }

    /// The value at `key`, if any.
    pub(crate) fn get(&self, key: &str) -> Option<Vec<u8>> {
        let mut client = self.client.clone();
        let resp = self.runtime.block_on(client.get(key, None)).expect("get");
        resp.kvs().first().map(|kv| kv.value().to_vec())
    }

    /// The values of every key starting with `prefix`, in key order.
    pub(crate) fn values(&self, prefix: &str) -> Vec<Vec<u8>> {
        let mut client = self.client.clone();
        let options = etcd_client::GetOptions::new().with_prefix();
        let resp = self.runtime.block_on(client.get(prefix, Some(options))).expect("get a prefix");
        resp.kvs().iter().map(|kv| kv.value().to_vec()).collect()
    }

    pub(crate) fn put(&self, key: &str, value: &[u8]) {
        let mut client = self.client.clone();
        self.runtime.block_on(client.put(key, value, None)).expect("put");
    }
}

/// An offset record.
pub(crate) fn offset(group: &str, topic: &str, partition: i32, value: i64, metadata: &str) -> Record {
    Record::Offset {
        group_id: Arc::from(group),
        partition: TopicPartition::new(topic, partition),
        offset: OffsetAndMetadata {
            metadata: metadata.into(),
            ..OffsetAndMetadata::new(value, 1_700_000_000_000)
        },
    }
}
