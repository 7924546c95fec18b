//! The share coordinator as the group coordinator reaches it: Kafka's
//! `Persister` (`initializeState`), seen from `GroupCoordinatorService`'s
//! `persisterInitialize`. A share group assigns only partitions the share
//! coordinator holds state for; the runtime hands it each initialization a
//! heartbeat asked for, once that heartbeat is durable, and its answer comes
//! back through [`GroupCoordinator::share_group_state_initialized`].

use std::fmt;

use group_types::{DeleteShareGroupStateRequest, ErrorCode, InitializeShareGroupStateRequest};

use super::GroupCoordinator;

/// Where a node's share groups get their share-partition state initialized
/// (a broker's share coordinator, local or reached by InitializeShareGroupState).
pub trait SharePersister: Send + Sync + fmt::Debug {
    /// Initializes the share partitions of `request`, then reports the outcome
    /// with [`GroupCoordinator::share_group_state_initialized`]. Called with a
    /// coordinator partition's lock held: hand the work to another thread or
    /// task and return; never report from within the call.
    fn initialize(&self, request: InitializeShareGroupStateRequest);

    /// Deletes the share state of `request`'s partitions (a DeleteGroups of an
    /// empty share group waits for it), then reports the outcome with
    /// [`GroupCoordinator::share_group_state_deleted`]; the same rules as
    /// [`initialize`](Self::initialize).
    fn delete_state(&self, request: DeleteShareGroupStateRequest);
}

impl GroupCoordinator {
    /// The share coordinator answered a deletion asked through the
    /// [`SharePersister`]: `Ok` when the state went. The DeleteGroups that waits
    /// for it deletes the group then, or answers the error for it.
    pub fn share_group_state_deleted(
        &self,
        request: &DeleteShareGroupStateRequest,
        result: Result<(), ErrorCode>,
    ) {
        let group = request.group_id.as_str();
        self.inner.step_group(group, |core, now, scratch| {
            scratch.extend(core.share_group_state_deleted(now, group, result));
        });
    }

    /// The share coordinator answered an initialization asked through the
    /// [`SharePersister`]: `initialized` when it succeeded. The group's state
    /// record moves the partitions to initialized (the next heartbeat assigns
    /// them) or, on failure, drops them from initializing (the next asks again).
    /// Nothing happens when the group's partition is not served here any more.
    pub fn share_group_state_initialized(
        &self,
        request: &InitializeShareGroupStateRequest,
        initialized: bool,
    ) {
        let partitions: Vec<_> = request
            .topics
            .iter()
            .map(|t| (t.topic_id, t.partitions.iter().map(|p| p.partition).collect()))
            .collect();
        self.inner.step_group(request.group_id.as_str(), |core, now, scratch| {
            let fx =
                core.share_group_state_initialized(now, request.group_id.as_str(), &partitions, initialized);
            scratch.extend(fx);
        });
    }
}
