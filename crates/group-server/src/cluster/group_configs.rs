//! A cluster's group configs in etcd, where every node reads and writes them (Kafka
//! keeps them in its metadata log, which every broker sees): one key per group,
//! `{prefix}/group-configs/{group id}`, its value the configs as JSON (name to value).
//!
//! DescribeConfigs and IncrementalAlterConfigs read a group's key on the node that
//! serves them ([`GroupConfigStore::is_shared`]), so an alter on one node is described
//! by any other at once. The node that serves the group learns of a change made
//! elsewhere from a watch of the keys ([`watch`]), and the group's members get it from
//! their next heartbeat. Two alters of one group on two nodes at once: the last one
//! stored wins, each built on what it read (Kafka's controller orders them).

use std::collections::BTreeMap;
use std::sync::Weak;
use std::time::Duration;

use group_coordinator::{GroupConfigProps, GroupConfigStore, GroupConfigStoreError, GroupCoordinator};
use group_storage_etcd::etcd_client::{Client, EventType, GetOptions, KeyValue, WatchOptions};
use tokio::runtime::Handle;
use tokio::task::AbortHandle;

use super::wait_on;

/// The key prefix of every group's configs under the cluster's `prefix`.
fn keys_prefix(prefix: &str) -> String {
    format!("{prefix}/group-configs/")
}

fn unavailable(what: impl std::fmt::Display) -> GroupConfigStoreError {
    GroupConfigStoreError::Io(std::io::Error::other(what.to_string()).into())
}

/// The group and configs of one key, or why it is not one of ours.
fn parse(prefix: &str, kv: &KeyValue) -> Result<(String, GroupConfigProps), GroupConfigStoreError> {
    let key = std::str::from_utf8(kv.key())
        .map_err(|_| GroupConfigStoreError::Corrupt("a key is not UTF-8".into()))?;
    let group =
        key.strip_prefix(prefix).ok_or_else(|| GroupConfigStoreError::Corrupt(format!("key {key:?}")))?;
    let props = serde_json::from_slice(kv.value())
        .map_err(|e| GroupConfigStoreError::Corrupt(format!("group {group:?}'s configs: {e}")))?;
    Ok((group.to_owned(), props))
}

/// Every node's group configs, in etcd.
pub(crate) struct EtcdGroupConfigStore {
    client: Client,
    runtime: Handle,
    prefix: String,
}

impl std::fmt::Debug for EtcdGroupConfigStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdGroupConfigStore").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl EtcdGroupConfigStore {
    /// The configs under the cluster's `prefix`, over the node's etcd client.
    pub(crate) fn new(client: Client, runtime: Handle, prefix: &str) -> EtcdGroupConfigStore {
        EtcdGroupConfigStore { client, runtime, prefix: keys_prefix(prefix) }
    }
}

impl GroupConfigStore for EtcdGroupConfigStore {
    fn load(&self) -> Result<BTreeMap<String, GroupConfigProps>, GroupConfigStoreError> {
        let (mut client, prefix) = (self.client.clone(), self.prefix.clone());
        let resp = wait_on(&self.runtime, async move {
            client.get(prefix.as_bytes(), Some(GetOptions::new().with_prefix())).await
        })
        .ok_or_else(|| unavailable("the runtime stopped"))?
        .map_err(unavailable)?;
        resp.kvs().iter().map(|kv| parse(&self.prefix, kv)).collect()
    }

    fn store(&self, group_id: &str, configs: &GroupConfigProps) -> Result<(), GroupConfigStoreError> {
        let key = format!("{}{group_id}", self.prefix);
        let value = (!configs.is_empty())
            .then(|| serde_json::to_vec(configs))
            .transpose()
            .map_err(|e| GroupConfigStoreError::Corrupt(e.to_string()))?;
        let mut client = self.client.clone();
        wait_on(&self.runtime, async move {
            match value {
                Some(value) => client.put(key, value, None).await.map(drop),
                None => client.delete(key, None).await.map(drop),
            }
        })
        .ok_or_else(|| unavailable("the runtime stopped"))?
        .map_err(unavailable)
    }

    fn is_shared(&self) -> bool {
        true
    }

    fn get(&self, group_id: &str) -> Result<GroupConfigProps, GroupConfigStoreError> {
        let (mut client, key) = (self.client.clone(), format!("{}{group_id}", self.prefix));
        let resp = wait_on(&self.runtime, async move { client.get(key, None).await })
            .ok_or_else(|| unavailable("the runtime stopped"))?
            .map_err(unavailable)?;
        match resp.kvs().first() {
            Some(kv) => parse(&self.prefix, kv).map(|(_, props)| props),
            None => Ok(GroupConfigProps::new()),
        }
    }
}

/// Tells `coordinator` of every change to the cluster's group configs, until it is
/// gone or the task aborted: the keys as they are, then each change after them; after
/// a failure (etcd away, the watch cancelled or compacted past) the same again, a
/// second later.
pub(crate) fn watch(
    client: Client,
    runtime: &Handle,
    prefix: &str,
    coordinator: Weak<GroupCoordinator>,
) -> AbortHandle {
    let prefix = keys_prefix(prefix);
    runtime
        .spawn(async move {
            loop {
                match follow(client.clone(), &prefix, &coordinator).await {
                    Ok(()) => return,
                    Err(e) => tracing::warn!(
                        target: "group_server",
                        error = %e,
                        "watching the group configs failed; listing them again in 1s"
                    ),
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        })
        .abort_handle()
}

/// Lists the configs, then follows the watch from the list's revision on. `Ok` when
/// the coordinator is gone.
async fn follow(
    mut client: Client,
    prefix: &str,
    coordinator: &Weak<GroupCoordinator>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let listed = client.get(prefix.as_bytes(), Some(GetOptions::new().with_prefix())).await?;
    let revision = listed.header().map_or(0, |h| h.revision());
    let mut stored = BTreeMap::new();
    for kv in listed.kvs() {
        match parse(prefix, kv) {
            Ok((group, props)) => {
                stored.insert(group, props);
            }
            Err(e) => tracing::warn!(target: "group_server", error = %e, "a group's configs are unreadable"),
        }
    }
    {
        let Some(c) = coordinator.upgrade() else { return Ok(()) };
        for group in c.groups_with_configs() {
            if !stored.contains_key(&group) {
                c.group_configs_changed(&group, GroupConfigProps::new());
            }
        }
        for (group, props) in stored {
            c.group_configs_changed(&group, props);
        }
    }
    let options = WatchOptions::new().with_prefix().with_start_revision(revision + 1);
    let mut stream = client.watch(prefix.as_bytes(), Some(options)).await?;
    while let Some(resp) = stream.message().await? {
        if resp.canceled() {
            return Err(format!("the watch was cancelled: {}", resp.cancel_reason()).into());
        }
        let Some(c) = coordinator.upgrade() else { return Ok(()) };
        for event in resp.events() {
            let Some(kv) = event.kv() else { continue };
            match event.event_type() {
                EventType::Put => match parse(prefix, kv) {
                    Ok((group, props)) => c.group_configs_changed(&group, props),
                    Err(e) => {
                        tracing::warn!(target: "group_server", error = %e, "a group's configs are unreadable")
                    }
                },
                EventType::Delete => {
                    if let Some(group) =
                        std::str::from_utf8(kv.key()).ok().and_then(|k| k.strip_prefix(prefix))
                    {
                        c.group_configs_changed(group, GroupConfigProps::new());
                    }
                }
            }
        }
    }
    Err("the watch ended".into())
}
