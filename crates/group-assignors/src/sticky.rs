//! `StickyAssignor` ("sticky"): the eager sticky assignor, balanced first,
//! sticky second.

use std::borrow::Cow;

use group_types::{MemberSubscription, TopicPartition};

use crate::assignor::rack_aware_assignor;
use crate::sticky_engine::{self, MemberClaim};
use crate::{AssignError, GroupAssignment, ReplicaRacks, StickyAssignorUserData};

/// Kafka's eager `StickyAssignor`.
///
/// Goals, in order (assignors.md 4.1): the assignment is **balanced** in the
/// strong sense (no partition could move to a subscriber of its topic holding
/// two or more fewer partitions; with identical subscriptions, counts differ by
/// at most one), then **sticky** (as many valid previous ownerships kept as
/// balance allows; with identical subscriptions the number moved is the proven
/// minimum).
///
/// A member's previous assignment is read, as Java's eager assignor does, from
/// its [`StickyAssignorUserData`] in `user_data`; when a member has no user
/// data, `owned_partitions` and `generation_id` are used instead (convenient
/// for callers that track ownership themselves). Conflicting claims are
/// resolved by generation: the highest wins, a tie at the highest invalidates
/// the claim; lower claims are remembered as hints. Unlike Java, a member with
/// an empty subscription never receives a partition (quirk Q1).
///
/// ```
/// use group_assignors::{PartitionAssignor, StickyAssignor};
/// use group_types::{MemberSubscription, TopicPartition};
///
/// let tp = |p| TopicPartition::new("t", p);
/// let members = [
///     MemberSubscription::new("a", ["t"]).with_owned_partitions([tp(0), tp(1), tp(2)], 1),
///     MemberSubscription::new("b", ["t"]),
/// ];
/// let out = StickyAssignor.assign(&members, &[tp(0), tp(1), tp(2), tp(3)])?;
/// assert_eq!(out["a"].len(), 2);
/// assert!(out["a"].iter().all(|p| p.partition < 3)); // "a" keeps two of its own
/// assert_eq!(out["b"].len(), 2);
/// # Ok::<(), group_assignors::AssignError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct StickyAssignor;

impl StickyAssignor {
    /// Assigns with `previous` as every member's previous assignment (all at
    /// the same generation, so a partition listed for two members counts as
    /// owned by neither), ignoring the members' own user data and owned
    /// partitions. Members absent from `previous` owned nothing; entries of
    /// members no longer in the group are ignored.
    pub fn assign_with_previous(
        &self,
        members: &[MemberSubscription],
        partitions: &[TopicPartition],
        previous: &GroupAssignment,
    ) -> Result<GroupAssignment, AssignError> {
        let claims: Vec<MemberClaim<'_>> = members
            .iter()
            .map(|m| MemberClaim {
                generation: 0,
                owned: previous
                    .get(&m.member_id)
                    .map_or(Cow::Borrowed(&[][..]), |v| Cow::Borrowed(v.as_slice())),
            })
            .collect();
        sticky_engine::assign(members, partitions, &[], &claims, false)
    }
}

/// The eager claim of a member: user data first, else the subscription fields.
fn eager_claim(m: &MemberSubscription) -> MemberClaim<'_> {
    match m.user_data.as_deref() {
        Some(bytes) if !bytes.is_empty() => match StickyAssignorUserData::decode(bytes) {
            Ok(data) => MemberClaim {
                generation: data.generation.unwrap_or(-1),
                owned: Cow::Owned(data.previous_assignment),
            },
            // Java treats unparsable user data as "owns nothing, generation -1".
            Err(_) => MemberClaim { generation: -1, owned: Cow::Borrowed(&[]) },
        },
        _ => MemberClaim {
            generation: m.generation_id.unwrap_or(-1),
            owned: Cow::Borrowed(m.owned_partitions.as_slice()),
        },
    }
}

rack_aware_assignor!(StickyAssignor, "sticky", assign);

fn assign(
    members: &[MemberSubscription],
    partitions: &[TopicPartition],
    replica_racks: &[ReplicaRacks],
) -> Result<GroupAssignment, AssignError> {
    let claims: Vec<MemberClaim<'_>> = members.iter().map(eager_claim).collect();
    sticky_engine::assign(members, partitions, replica_racks, &claims, false)
}
