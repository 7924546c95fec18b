//! `CooperativeStickyAssignor` ("cooperative-sticky"): the sticky target,
//! handed over incrementally (KIP-429).

use std::borrow::Cow;

use group_types::{MemberSubscription, TopicPartition};

use crate::assignor::rack_aware_assignor;
use crate::sticky_engine::{self, MemberClaim};
use crate::{AssignError, GroupAssignment, ReplicaRacks};

/// Kafka's `CooperativeStickyAssignor`: computes the same balanced, sticky
/// target as [`StickyAssignor`](crate::StickyAssignor), reading each member's
/// `owned_partitions` and generation from the subscription (assignors.md 4.3:
/// `generation_id` when `>= 0`, else a 4-byte big-endian generation in
/// `user_data`, else none), then withholds every partition that would change
/// owner while another member still lists it as owned (assignors.md 5).
///
/// Round 1 therefore gives a member a partition only if it is the partition's
/// valid previous owner or nobody else lists it, so no partition ever has two
/// owners, not even with stale (lower-generation) or doubly claimed
/// partitions (Java's quirk Q2 is not copied). Members that lost partitions
/// rejoin; the follow-up rebalance hands the withheld partitions over and
/// reaches the eager invariants. On every published scenario one follow-up
/// suffices (as with Java); with heterogeneous subscriptions and heavily
/// conflicting claims a second or third may be needed, well within the four
/// Kafka's own tests tolerate.
///
/// ```
/// use group_assignors::{CooperativeStickyAssignor, PartitionAssignor};
/// use group_types::{MemberSubscription, TopicPartition};
///
/// let tp = |p| TopicPartition::new("t", p);
/// let mut members = vec![
///     MemberSubscription::new("a", ["t"]).with_owned_partitions([tp(0), tp(1)], 1),
///     MemberSubscription::new("b", ["t"]),
/// ];
/// let round1 = CooperativeStickyAssignor.assign(&members, &[tp(0), tp(1)])?;
/// assert_eq!(round1["a"].len(), 1); // revokes one...
/// assert!(round1["b"].is_empty()); // ...which nobody receives yet
/// members[0] = MemberSubscription::new("a", ["t"]).with_owned_partitions(round1["a"].clone(), 2);
/// let round2 = CooperativeStickyAssignor.assign(&members, &[tp(0), tp(1)])?;
/// assert_eq!(round2["b"].len(), 1);
/// # Ok::<(), group_assignors::AssignError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct CooperativeStickyAssignor;

/// The generation a cooperative member reports (assignors.md 4.3), -1 if none.
fn cooperative_generation(m: &MemberSubscription) -> i32 {
    match m.generation_id {
        Some(g) if g >= 0 => g,
        _ => match m.user_data.as_deref() {
            Some([a, b, c, d]) => i32::from_be_bytes([*a, *b, *c, *d]),
            _ => -1,
        },
    }
}

rack_aware_assignor!(CooperativeStickyAssignor, "cooperative-sticky", assign);

fn assign(
    members: &[MemberSubscription],
    partitions: &[TopicPartition],
    replica_racks: &[ReplicaRacks],
) -> Result<GroupAssignment, AssignError> {
    let claims: Vec<MemberClaim<'_>> = members
        .iter()
        .map(|m| MemberClaim {
            generation: cooperative_generation(m),
            owned: Cow::Borrowed(m.owned_partitions.as_slice()),
        })
        .collect();
    sticky_engine::assign(members, partitions, replica_racks, &claims, true)
}
