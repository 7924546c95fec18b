//! Kafka's server-side `RangeAssignor` (§5.6): deterministic, not sticky.

use std::cmp::Ordering;

use super::index::Subscriptions;
use super::{
    GroupSpec, MemberSpec, MemberTarget, ServerAssignError, ServerAssignor, SubscribedTopicDescriber,
    TargetAssignment,
};

/// Contiguous ranges per topic (`"range"`, Kafka's `assignor.RangeAssignor`).
///
/// Members are ordered static first, by instance id, then the others by
/// member id (byte order). For each topic with `P` partitions and `N`
/// subscribers, taken in that order, each gets `P / N` partitions and the
/// first `P mod N` one more, as ranges starting from partition 0. When every
/// member subscribes to the same topics and the topics have equal partition
/// counts, member `k` gets the same partition numbers of every topic
/// (co-partitioning).
///
/// The current target is ignored: since KAFKA-16944 (3.9) the assignment
/// depends only on the order, so it is stable across rebalances only as long
/// as membership, subscriptions and partition counts are (instance ids keep
/// the order across restarts). The subscription type makes no difference:
/// the homogeneous case is the heterogeneous one with everybody subscribed.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerRangeAssignor;

const NAME: &str = "range";

/// Kafka's `sortMemberIds`: static members first by instance id, then dynamic
/// members by member id.
fn member_order(a: &MemberSpec<'_>, b: &MemberSpec<'_>) -> Ordering {
    match (a.instance_id, b.instance_id) {
        // Instance ids are unique in a group; the member id only keeps a
        // malformed spec deterministic.
        (Some(x), Some(y)) => x.cmp(y).then_with(|| a.member_id.cmp(b.member_id)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.member_id.cmp(b.member_id),
    }
}

/// Calls `each(member, from, to)` for the subscribers of a topic of `count`
/// partitions that get a range. Only the first min(N, P) get one, so a topic
/// costs at most its partition count, however many subscribe.
fn ranges(subscribers: &[u32], count: u32, mut each: impl FnMut(u32, u32, u32)) {
    let n = subscribers.len().max(1) as u32;
    let (quota, extra) = (count / n, count % n);
    let mut next = 0;
    for (k, &m) in subscribers.iter().enumerate() {
        let take = quota + u32::from((k as u32) < extra);
        if take == 0 {
            break;
        }
        each(m, next, next + take);
        next += take;
    }
}

impl ServerAssignor for ServerRangeAssignor {
    fn name(&self) -> &str {
        NAME
    }

    fn assign(
        &self,
        group: &GroupSpec<'_>,
        topics: &dyn SubscribedTopicDescriber,
    ) -> Result<TargetAssignment, ServerAssignError> {
        let members = &group.members[..];
        let n = members.len();
        if n == 0 {
            return Ok(TargetAssignment::default());
        }
        let subs = Subscriptions::new(members, topics, NAME)?;
        let covered = &subs.topics;
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| member_order(&members[a], &members[b]));

        // With one subscription list every topic's subscribers are `order`
        // itself; otherwise each topic's are listed once, in that order.
        let csr = (subs.classes() > 1).then(|| subs.subscribers(order.iter().copied()));
        let order32: Vec<u32> = order.iter().map(|&m| m as u32).collect();
        let subscribers = |t: usize| -> &[u32] {
            match &csr {
                Some(csr) => csr.of(t),
                None => &order32,
            }
        };

        let mut entries = vec![0u32; n];
        for t in 0..covered.len() {
            ranges(subscribers(t), covered.count(t), |m, _, _| entries[m as usize] += 1);
        }
        let mut out: Vec<Vec<_>> = entries.iter().map(|&e| Vec::with_capacity(e as usize)).collect();
        for t in 0..covered.len() {
            let id = covered.ids[t];
            ranges(subscribers(t), covered.count(t), |m, from, to| {
                out[m as usize].push((id, (from as i32..to as i32).collect()));
            });
        }
        Ok(TargetAssignment { members: out.into_iter().map(|topics| MemberTarget { topics }).collect() })
    }
}
