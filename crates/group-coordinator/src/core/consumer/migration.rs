//! Online migration between classic and consumer groups (§8).

use group_types::ErrorCode;

use super::Work;
use crate::core::CoordinatorCore;

impl CoordinatorCore {
    /// A ConsumerGroupHeartbeat join to a non-empty classic group (§8.2).
    pub(crate) fn upgrade_classic_group(
        &mut self,
        group_id: &str,
    ) -> Result<Work, (ErrorCode, Option<String>)> {
        let refused = |why: &str| {
            Err((
                ErrorCode::GroupIdNotFound,
                Some(format!("Cannot upgrade classic group {group_id} to consumer group because {why}")),
            ))
        };
        if !self.engine.config.consumer.migration_policy.allows_upgrade() {
            return refused("online upgrade is disabled.");
        }
        Err((ErrorCode::GroupIdNotFound, Some(format!("Group {group_id} is not a consumer group."))))
    }
}

impl CoordinatorCore {
    /// Fences `ids` (§2.5), or, when only classic-protocol members would remain
    /// and the policy allows it, turns the group back into a classic one (§8.4).
    pub(crate) fn fence_or_downgrade(&mut self, work: &mut Work, ids: &[std::sync::Arc<str>]) {
        self.fence_members(work, ids);
    }
}
