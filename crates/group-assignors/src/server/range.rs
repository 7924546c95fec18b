//! Kafka's server-side `RangeAssignor` (§5.6): deterministic, not sticky.

use super::{
    GroupSpec, MemberTarget, ServerAssignError, ServerAssignor, SubscribedTopicDescriber, TargetAssignment,
};

/// Contiguous ranges per topic; static members first by instance id, then the
/// others by member id.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerRangeAssignor;

impl ServerAssignor for ServerRangeAssignor {
    fn name(&self) -> &str {
        "range"
    }

    fn assign(
        &self,
        group: &GroupSpec<'_>,
        topics: &dyn SubscribedTopicDescriber,
    ) -> Result<TargetAssignment, ServerAssignError> {
        let mut order: Vec<usize> = (0..group.members.len()).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&group.members[a], &group.members[b]);
            match (a.instance_id, b.instance_id) {
                (Some(x), Some(y)) => x.cmp(y).then(a.member_id.cmp(b.member_id)),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => a.member_id.cmp(b.member_id),
            }
        });
        let mut all: Vec<_> =
            group.members.iter().flat_map(|m| m.subscribed_topics.iter().copied()).collect();
        all.sort_unstable();
        all.dedup();
        let mut out = TargetAssignment { members: vec![MemberTarget::default(); group.members.len()] };
        for topic in all {
            let Some(count) = topics.partition_count(topic) else { continue };
            let subscribers: Vec<usize> = order
                .iter()
                .copied()
                .filter(|&i| group.members[i].subscribed_topics.binary_search(&topic).is_ok())
                .collect();
            let n = subscribers.len() as u32;
            let (quota, extra) = (count / n, count % n);
            let mut next = 0u32;
            for (k, &i) in subscribers.iter().enumerate() {
                let take = quota + u32::from((k as u32) < extra);
                if take > 0 {
                    let range = (next..next + take).map(|p| p as i32).collect();
                    out.members[i].topics.push((topic, range));
                }
                next += take;
            }
        }
        Ok(out)
    }
}
