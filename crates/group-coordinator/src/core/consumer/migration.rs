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
