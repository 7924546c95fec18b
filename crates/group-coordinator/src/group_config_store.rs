//! Where per-group configs are kept across restarts: the [`GroupConfigStore`] hook.
//!
//! Kafka keeps them as `ConfigRecord`s in its KRaft metadata log. Here a node hands the
//! coordinator a store ([`GroupCoordinatorBuilder::group_config_store`]); without one
//! they live in memory ([`MemoryGroupConfigStore`]) and are lost on exit.
//!
//! [`GroupCoordinatorBuilder::group_config_store`]: crate::GroupCoordinatorBuilder::group_config_store

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

use group_offsets::IoCause;

use crate::GroupConfigProps;

/// Why a [`GroupConfigStore`] could not read or write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GroupConfigStoreError {
    /// Reading or writing failed.
    #[error("group config store i/o failed: {0}")]
    Io(#[source] IoCause),
    /// What was read is not what the store writes.
    #[error("group config store is corrupt: {0}")]
    Corrupt(String),
}

impl From<std::io::Error> for GroupConfigStoreError {
    fn from(error: std::io::Error) -> GroupConfigStoreError {
        GroupConfigStoreError::Io(error.into())
    }
}

/// Keeps every group's configs (Kafka's `ConfigRecord`s of GROUP resources) durably.
///
/// Called rarely: [`load`](Self::load) once when the coordinator opens,
/// [`store`](Self::store) once per IncrementalAlterConfigs that changes a group.
/// `store` returns once the configs are durable: the alter is answered after it.
pub trait GroupConfigStore: Send + Sync + fmt::Debug {
    /// Every group's configs, as last stored.
    fn load(&self) -> Result<BTreeMap<String, GroupConfigProps>, GroupConfigStoreError>;

    /// Replaces `group_id`'s configs with `configs` (empty: the group has none left).
    fn store(&self, group_id: &str, configs: &GroupConfigProps) -> Result<(), GroupConfigStoreError>;

    /// True when other coordinators write to the same store (the nodes of a cluster):
    /// DescribeConfigs and IncrementalAlterConfigs then read a group's configs from it
    /// ([`get`](Self::get)) rather than from what this coordinator last saw, and the
    /// node tells the coordinator of others' changes
    /// ([`GroupCoordinator::group_configs_changed`](crate::GroupCoordinator::group_configs_changed)).
    fn is_shared(&self) -> bool {
        false
    }

    /// One group's configs as last stored (empty when none). A shared store answers
    /// what any coordinator stored last.
    fn get(&self, group_id: &str) -> Result<GroupConfigProps, GroupConfigStoreError> {
        Ok(self.load()?.remove(group_id).unwrap_or_default())
    }
}

/// Configs kept in memory only: what a coordinator without a store uses.
#[derive(Debug, Default)]
pub struct MemoryGroupConfigStore {
    groups: Mutex<BTreeMap<String, GroupConfigProps>>,
}

impl MemoryGroupConfigStore {
    /// An empty store.
    pub fn new() -> MemoryGroupConfigStore {
        MemoryGroupConfigStore::default()
    }
}

impl GroupConfigStore for MemoryGroupConfigStore {
    fn load(&self) -> Result<BTreeMap<String, GroupConfigProps>, GroupConfigStoreError> {
        Ok(self.groups.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone())
    }

    fn store(&self, group_id: &str, configs: &GroupConfigProps) -> Result<(), GroupConfigStoreError> {
        let mut groups = self.groups.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if configs.is_empty() {
            groups.remove(group_id);
        } else {
            groups.insert(group_id.to_owned(), configs.clone());
        }
        Ok(())
    }
}
