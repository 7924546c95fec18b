//! A broker that already runs tokio embeds a group coordinator node: the
//! `GroupCoordinator`, its `EtcdStore` and its `ClusterMember` all run on the
//! broker's own runtime, over one etcd client, and the broker's request tasks
//! await the coordinator's answers there. No second runtime, no second client.
//!
//! It needs a running etcd (`etcd` with no arguments listens on
//! `http://127.0.0.1:2379`):
//!
//! ```text
//! cargo run -p group-cluster --example embed_in_broker [-- http://host:2379 ...]
//! ```
//!
//! Without one it says so and exits successfully, doing nothing.

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use group_cluster::{ClusterConfig, ClusterMember, Wakeup};
use group_coordinator::{CoordinatorConfig, GroupCoordinator, ServingLease};
use group_storage_etcd::etcd_client::Client;
use group_storage_etcd::{EtcdConfig, EtcdStore};
use group_types::{ErrorCode, OffsetCommitData, OffsetCommitRequest, OffsetFetchRequest};

/// Coordinator partitions: few, so that one node claims them in a moment.
pub(crate) const PARTITIONS: u32 = 4;
/// The groups the broker's clients commit for, one task each.
pub(crate) const GROUPS: usize = 8;
/// Partitions of the topic each group commits.
pub(crate) const TOPIC_PARTITIONS: i32 = 3;
/// How long the node may take to own every partition.
const CLAIM_DEADLINE: Duration = Duration::from_secs(30);

/// Failures of the embedding, whatever their source.
pub(crate) type BoxError = Box<dyn Error + Send + Sync>;

/// What the broker saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    /// Coordinator partitions this node owned once it had claimed its share.
    pub(crate) owned: usize,
    /// Live nodes the cluster view listed.
    pub(crate) nodes: usize,
    /// Partition commits acknowledged (durable in etcd).
    pub(crate) committed: usize,
    /// Offsets fetched back that equal what was committed.
    pub(crate) fetched: usize,
}

/// The etcd store's settings for this node (owner-key fencing, as a cluster needs).
pub(crate) fn store_config(endpoints: Vec<String>, prefix: &str) -> EtcdConfig {
    EtcdConfig {
        prefix: prefix.to_owned(),
        partitions: PARTITIONS,
        fence_with_owner_keys: true,
        connect_timeout: Duration::from_secs(3),
        ..EtcdConfig::new(endpoints)
    }
}

/// The broker's part, on the runtime it runs on: builds the store, the
/// coordinator and the membership over `client`, waits until the node owns the
/// partitions, sends commits and fetches from concurrent tasks, then leaves.
pub(crate) async fn embed(config: EtcdConfig, client: Client) -> Result<Summary, BoxError> {
    // The broker's runtime: everything below spawns its tasks here.
    let runtime = tokio::runtime::Handle::current();
    let prefix = config.prefix.clone();
    let store = Arc::new(EtcdStore::new(config, client.clone(), &runtime)?);
    let (wakeup, serving) = (Wakeup::new(), Arc::new(ServingLease::new()));
    let coordinator = Arc::new(
        GroupCoordinator::builder(store, CoordinatorConfig::default())
            .managed_ownership()
            .on_partition_lost(wakeup.listener())
            .serving_lease(serving.clone())
            .open()?,
    );
    let member = ClusterMember::start(
        ClusterConfig::new(prefix, 1, "127.0.0.1:9092"),
        client,
        &runtime,
        coordinator.clone(),
        wakeup,
        serving,
    )?;

    let started = Instant::now();
    while coordinator.owned_partitions().len() < PARTITIONS as usize {
        if started.elapsed() > CLAIM_DEADLINE {
            return Err(format!("the node did not own its partitions within {CLAIM_DEADLINE:?}").into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let owned = coordinator.owned_partitions().len();
    println!("owns {owned} coordinator partitions after {:?}", started.elapsed());
    print_threads();

    // The broker's request handlers: each awaits the coordinator on this runtime.
    let handlers: Vec<_> = (0..GROUPS)
        .map(|g| {
            let coordinator = Arc::clone(&coordinator);
            tokio::spawn(async move { commit_and_fetch(&coordinator, g).await })
        })
        .collect();
    let (mut committed, mut fetched) = (0, 0);
    for handler in handlers {
        let (c, f) = handler.await??;
        committed += c;
        fetched += f;
    }
    println!("{committed} partition commits acknowledged, {fetched} read back");

    let nodes = member.view().nodes().len();
    // Unloads the partitions and revokes the lease; awaited, not blocked on.
    member.leave().await;
    // The coordinator's stop joins its threads: off the runtime's workers.
    tokio::task::spawn_blocking(move || coordinator.stop()).await?;
    Ok(Summary { owned, nodes, committed, fetched })
}

/// One client's work: commit every partition of `orders` for group `g`, then
/// fetch the group's offsets back. Returns (acknowledged, read back equal).
async fn commit_and_fetch(coordinator: &GroupCoordinator, g: usize) -> Result<(usize, usize), BoxError> {
    let group = format!("broker-group-{g}");
    let offset = |p: i32| 1_000 * g as i64 + i64::from(p);
    let mut request =
        OffsetCommitRequest { group_id: group.as_str().into(), ..OffsetCommitRequest::default() };
    for p in 0..TOPIC_PARTITIONS {
        request.push("orders", p, OffsetCommitData::new(offset(p)));
    }
    let response = coordinator.offset_commit(request).await?;
    let committed = response.iter().filter(|&(_, _, code)| code == ErrorCode::None).count();
    let fetch = coordinator.offset_fetch(OffsetFetchRequest::all(group.as_str())).await?;
    let fetched = (0..TOPIC_PARTITIONS)
        .filter(|&p| fetch.get("orders", p).is_some_and(|d| d.offset == offset(p)))
        .count();
    Ok((committed, fetched))
}

/// The process's threads by name (Linux): one runtime's workers, the
/// coordinator's own threads, and nothing from the store or the membership.
fn print_threads() {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return };
    let mut names = std::collections::BTreeMap::<String, usize>::new();
    for task in tasks.flatten() {
        if let Ok(name) = std::fs::read_to_string(task.path().join("comm")) {
            *names.entry(name.trim().to_owned()).or_default() += 1;
        }
    }
    let total: usize = names.values().sum();
    println!("{total} threads: {names:?}");
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let mut endpoints: Vec<String> = std::env::args().skip(1).collect();
    if endpoints.is_empty() {
        endpoints.push("http://127.0.0.1:2379".to_owned());
    }
    let prefix = format!("/embed-in-broker/{}", std::process::id());
    let config = store_config(endpoints.clone(), &prefix);
    // The broker's one etcd client: the store and the membership share it.
    let client = match group_storage_etcd::connect(&config).await {
        Ok(client) => client,
        Err(e) => {
            eprintln!(
                "embed_in_broker needs a running etcd, and none answers at {endpoints:?} ({e}).\n\
                 Start one (`etcd` listens on http://127.0.0.1:2379) or pass its endpoints:\n  \
                 cargo run -p group-cluster --example embed_in_broker -- http://host:2379"
            );
            return ExitCode::SUCCESS;
        }
    };
    match embed(config, client).await {
        Ok(summary) => {
            println!("{summary:?}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("embed_in_broker: {e}");
            ExitCode::FAILURE
        }
    }
}
