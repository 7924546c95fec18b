//! `RoundRobinAssignor` ("roundrobin"): one circular turn order over all
//! partitions of all topics, Kafka-exact.

use group_types::{MemberSubscription, TopicPartition};

use crate::cluster::{Cluster, Group, Holdings};
use crate::{AssignError, GroupAssignment, PartitionAssignor};

/// Kafka's `RoundRobinAssignor`: members in member order (static first by
/// instance id, then member id) sit on a circular cursor; partitions of all
/// subscribed topics, topics by name and partitions by number, are dealt one
/// by one, the cursor skipping members not subscribed to the partition's
/// topic. The cursor carries across topics. No rack awareness.
///
/// ```
/// use group_assignors::{PartitionAssignor, RoundRobinAssignor};
/// use group_types::{MemberSubscription, TopicPartition};
///
/// let members = [MemberSubscription::new("c1", ["a", "b"]), MemberSubscription::new("c2", ["a", "b"])];
/// let partitions = [TopicPartition::new("a", 0), TopicPartition::new("b", 0)];
/// let out = RoundRobinAssignor.assign(&members, &partitions)?;
/// assert_eq!(out["c1"], [TopicPartition::new("a", 0)]);
/// assert_eq!(out["c2"], [TopicPartition::new("b", 0)]);
/// # Ok::<(), group_assignors::AssignError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct RoundRobinAssignor;

impl PartitionAssignor for RoundRobinAssignor {
    fn name(&self) -> &str {
        "roundrobin"
    }

    fn assign(
        &self,
        members: &[MemberSubscription],
        partitions: &[TopicPartition],
    ) -> Result<GroupAssignment, AssignError> {
        let cluster = Cluster::new(partitions)?;
        let group = Group::new(members, &cluster)?;
        let order = group.kafka_order();
        let n = order.len();
        let mut rank = vec![0u32; n];
        for (r, &m) in order.iter().enumerate() {
            rank[m as usize] = r as u32;
        }
        let (of_topic, lists) = group.subscriber_lists(&order, cluster.topics.len());
        // The subscribers of a topic take its partitions in cyclic order starting
        // with the first subscriber at or after the cursor, so each topic costs
        // O(partitions + log subscribers) however many members it skips.
        let mut plan: Vec<(usize, usize)> = Vec::with_capacity(cluster.topics.len());
        let mut counts = vec![0u32; n];
        let mut cursor = 0u32;
        for (t, topic) in cluster.topics.iter().enumerate() {
            let subs = &lists[of_topic[t] as usize];
            if subs.is_empty() || topic.len == 0 {
                plan.push((0, 0));
                continue;
            }
            let s = subs.len();
            // A topic everybody subscribes to has `subs == order`: no search.
            let first = if s == n {
                cursor as usize
            } else {
                subs.partition_point(|&m| rank[m as usize] < cursor) % s
            };
            let len = topic.len as usize;
            let (base, extra) = ((len / s) as u32, len % s);
            for k in 0..s.min(len) {
                let m = subs[(first + k) % s];
                counts[m as usize] += base + u32::from(k < extra);
            }
            let last = subs[(first + len - 1) % s];
            cursor = (rank[last as usize] + 1) % n as u32;
            plan.push((first, s));
        }
        let mut holdings = Holdings::new(&counts);
        for (t, topic) in cluster.topics.iter().enumerate() {
            let (first, s) = plan[t];
            if s == 0 {
                continue;
            }
            let subs = &lists[of_topic[t] as usize];
            let mut k = first;
            for o in 0..topic.len {
                holdings.push(subs[k], t as u32, o);
                k += 1;
                if k == s {
                    k = 0;
                }
            }
        }
        Ok(holdings.into_assignment(&cluster, &group))
    }
}
