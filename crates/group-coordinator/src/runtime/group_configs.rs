//! Per-group configs in the runtime: DescribeConfigs and IncrementalAlterConfigs of
//! GROUP resources as Kafka answers them (`ConfigHelper.handleDescribeConfigsRequest`,
//! the controller's `ConfigurationControlManager` and `ControllerConfigurationValidator`),
//! kept in the node's [`GroupConfigStore`] and installed in the group's core, where
//! its members' next heartbeat reads them (`GroupConfigManager`).
//!
//! Lock order: a partition's lock before the configs' lock, never the other way
//! round (a core is rebuilt under its partition's lock and reads the configs then).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use group_offsets::CoordinatorPartition;

use super::{GroupCoordinator, Inner, lock};
use crate::{
    AclOperation, AlterConfigOp, CoordinatorConfig, CoordinatorCore, DescribedGroupConfig, GroupConfigError,
    GroupConfigProps, GroupConfigStore, GroupConfigStoreError, RequestContext, Resource,
};

/// Every group's configs as set, and where they are kept.
#[derive(Debug)]
pub(super) struct GroupConfigs {
    store: Arc<dyn GroupConfigStore>,
    groups: Mutex<BTreeMap<String, GroupConfigProps>>,
    /// Held through an alter's read, check and store.
    alter: Mutex<()>,
    partitions: u32,
}

impl GroupConfigs {
    /// What `store` holds, for a coordinator of `partitions` partitions.
    pub(super) fn open(
        store: Arc<dyn GroupConfigStore>,
        partitions: u32,
    ) -> Result<GroupConfigs, GroupConfigStoreError> {
        let groups = Mutex::new(store.load()?);
        Ok(GroupConfigs { store, groups, alter: Mutex::new(()), partitions })
    }

    fn groups(&self) -> MutexGuard<'_, BTreeMap<String, GroupConfigProps>> {
        self.groups.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Gives the new core of partition `p` its groups' configs, clamped into the
    /// broker's bounds as Kafka reads them back (`GroupConfig.evaluate`).
    pub(super) fn install(&self, core: &mut CoordinatorCore, p: u32, config: &CoordinatorConfig) {
        for (group, props) in self.groups().iter() {
            if CoordinatorPartition::of(group, self.partitions).0 == p {
                let overrides = crate::evaluate_group_config(props, config);
                core.engine.group_configs.insert(group.clone(), overrides);
            }
        }
    }

    /// A group's configs as set.
    fn get(&self, group_id: &str) -> GroupConfigProps {
        self.groups().get(group_id).cloned().unwrap_or_default()
    }

    /// A group's configs as they are now: the store's when others write to it too
    /// (a change another node made may not have reached this one yet), else as set here.
    fn current(&self, group_id: &str) -> Result<GroupConfigProps, GroupConfigStoreError> {
        if self.store.is_shared() { self.store.get(group_id) } else { Ok(self.get(group_id)) }
    }

    /// Keeps `props` as `group_id`'s configs (none when empty).
    fn set(&self, group_id: &str, props: GroupConfigProps) {
        let mut groups = self.groups();
        if props.is_empty() {
            groups.remove(group_id);
        } else {
            groups.insert(group_id.to_owned(), props);
        }
    }
}

impl Inner {
    /// Replaces `group_id`'s configs with `next`: durable first, then in force from its
    /// members' next heartbeat (Kafka's `GroupConfigManager.updateGroupConfig`).
    fn put_group_config(
        &self,
        group_id: &str,
        next: impl FnOnce(&GroupConfigProps) -> Result<Option<GroupConfigProps>, GroupConfigError>,
    ) -> Result<(), GroupConfigError> {
        {
            // One alter at a time on this node: the store sees them in the order memory does.
            let _one = self.group_configs.alter.lock().unwrap_or_else(PoisonError::into_inner);
            let current = self.group_configs.current(group_id).map_err(GroupConfigError::Storage)?;
            let Some(next) = next(&current)? else { return Ok(()) };
            if next == current {
                return Ok(());
            }
            self.group_configs.store.store(group_id, &next).map_err(GroupConfigError::Storage)?;
            self.group_configs.set(group_id, next);
        }
        self.install_group_config(group_id);
        Ok(())
    }

    /// Puts `group_id`'s configs as kept in force in the core of its partition.
    fn install_group_config(&self, group_id: &str) {
        // The partition's lock first (see the module's lock order), then what is in
        // force now, which a later alter may already have replaced.
        let mut shard = lock(&self.shards[self.shard_of(group_id)]);
        let props = self.group_configs.get(group_id);
        let configs = &mut shard.core.engine.group_configs;
        if props.is_empty() {
            configs.remove(group_id);
        } else {
            configs.insert(group_id.to_owned(), crate::evaluate_group_config(&props, &self.config));
        }
    }

    /// `operation` on group `group_id` for `context`, else GROUP_AUTHORIZATION_FAILED;
    /// then an empty name is INVALID_REQUEST with `empty`, Kafka's words for it.
    fn check_group_resource(
        &self,
        context: &RequestContext,
        operation: AclOperation,
        group_id: &str,
        empty: &str,
    ) -> Result<(), GroupConfigError> {
        if !self.allowed(context, operation, Resource::Group(group_id), true) {
            return Err(GroupConfigError::AuthorizationFailed);
        }
        if group_id.is_empty() {
            return Err(GroupConfigError::InvalidRequest(empty.to_owned()));
        }
        Ok(())
    }
}

impl super::Caller<'_> {
    /// DescribeConfigs of the GROUP resource `group_id` (`ConfigHelper.describeConfigs`):
    /// DESCRIBE_CONFIGS on the group, else
    /// [`AuthorizationFailed`](GroupConfigError::AuthorizationFailed); every group
    /// config (or those `keys` names) with the group's value or the broker's. A group
    /// need not exist to be described.
    pub fn describe_group_configs(
        &self,
        group_id: &str,
        keys: Option<&[String]>,
        include_synonyms: bool,
        include_documentation: bool,
    ) -> Result<Vec<DescribedGroupConfig>, GroupConfigError> {
        let inner = &self.coordinator.inner;
        let empty = "Group name must not be empty";
        inner.check_group_resource(self.context, AclOperation::DescribeConfigs, group_id, empty)?;
        let props = inner.group_configs.current(group_id).map_err(GroupConfigError::Storage)?;
        Ok(crate::describe_group_config(&props, &inner.config, keys, include_synonyms, include_documentation))
    }

    /// IncrementalAlterConfigs of the GROUP resource `group_id`: ALTER_CONFIGS on the
    /// group, else [`AuthorizationFailed`](GroupConfigError::AuthorizationFailed); `ops`
    /// applied and the result checked whole ([`alter_group_config`](crate::alter_group_config));
    /// unless `validate_only`, stored durably and in force from the group's next heartbeat.
    pub fn alter_group_configs(
        &self,
        group_id: &str,
        ops: &[(String, AlterConfigOp)],
        validate_only: bool,
    ) -> Result<(), GroupConfigError> {
        let inner = &self.coordinator.inner;
        let empty = "Default group resources are not allowed.";
        inner.check_group_resource(self.context, AclOperation::AlterConfigs, group_id, empty)?;
        inner.put_group_config(group_id, |current| {
            let next = crate::alter_group_config(current, ops, &inner.config)?;
            Ok((!validate_only).then_some(next))
        })
    }
}

impl GroupCoordinator {
    /// Replaces group `group_id`'s configs with the ones `overrides` sets, checked
    /// against the broker's bounds; stored, and effective from its members' next
    /// heartbeat. The library form of an IncrementalAlterConfigs that sets every
    /// one of them, without its authorization.
    pub fn set_group_config(
        &self,
        group_id: &str,
        overrides: crate::GroupConfigOverrides,
    ) -> Result<(), crate::BadConsumerGroupConfig> {
        overrides.validate(&self.inner.config.consumer)?;
        overrides.validate_share(&self.inner.config.share)?;
        overrides.validate_intervals(&self.inner.config.group_config_bounds)?;
        let props = crate::group_config_props(&overrides);
        self.inner
            .put_group_config(group_id, |_| Ok(Some(props)))
            .map_err(|e| crate::BadConsumerGroupConfig(e.to_string()))
    }

    /// Takes in `configs` as group `group_id`'s (empty: none), as another
    /// coordinator stored them in a store they share ([`GroupConfigStore::is_shared`]):
    /// kept, and in force from the group's next heartbeat where this coordinator
    /// serves it. Not checked again: they were checked where they were altered.
    pub fn group_configs_changed(&self, group_id: &str, configs: GroupConfigProps) {
        if self.inner.group_configs.get(group_id) == configs {
            return;
        }
        self.inner.group_configs.set(group_id, configs);
        self.inner.install_group_config(group_id);
    }

    /// Group `group_id`'s configs as set (empty when it has none).
    pub fn group_configs(&self, group_id: &str) -> GroupConfigProps {
        self.inner.group_configs.get(group_id)
    }

    /// The groups that have configs, in id order (`GroupConfigManager.groupIds`, what
    /// ListConfigResources lists as GROUP resources).
    pub fn groups_with_configs(&self) -> Vec<String> {
        self.inner.group_configs.groups().keys().cloned().collect()
    }
}
