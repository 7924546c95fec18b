//! Kafka's `UniformAssignor` (§5.4, §5.5).

use super::{GroupSpec, ServerAssignError, ServerAssignor, SubscribedTopicDescriber, TargetAssignment};

/// Kafka's default server assignor: balance first, then stickiness.
#[derive(Debug, Clone, Copy, Default)]
pub struct UniformAssignor;

impl ServerAssignor for UniformAssignor {
    fn name(&self) -> &str {
        "uniform"
    }

    fn assign(
        &self,
        group: &GroupSpec<'_>,
        topics: &dyn SubscribedTopicDescriber,
    ) -> Result<TargetAssignment, ServerAssignError> {
        // Placeholder until the homogeneous and heterogeneous builders land: the
        // server range assignment, which is balanced per topic.
        super::ServerRangeAssignor.assign(group, topics)
    }
}
