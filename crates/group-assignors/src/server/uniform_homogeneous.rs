//! The uniform assignor for a group whose members all subscribe alike: Kafka's
//! `UniformHomogeneousAssignmentBuilder` (§5.4), with the KAFKA-18688 rule.
//!
//! With `P` partitions and `N` members every member gets `q = P / N`, and
//! `P mod N` of them one more. Members are walked in spec order; each keeps
//! its current partitions up to its quota and the rest of the partitions are
//! dealt out, in partition order, to the members still below quota.

use super::index::{self, NONE, Topics};
use super::{MemberSpec, ServerAssignError, TargetAssignment};

/// The targets of `members`, all subscribed to `topics`.
pub(super) fn assign(
    members: &[MemberSpec<'_>],
    topics: &Topics,
    assignor: &str,
) -> Result<TargetAssignment, ServerAssignError> {
    let n = members.len();
    let total = topics.total();
    if n == 0 || total == 0 {
        return Ok(index::empty_targets(n));
    }
    let quota = total / n as u32;
    let mut extra_left = total % n as u32;

    let mut owner = vec![NONE; total as usize];
    // Members below quota after keeping what they may, with what they lack, in walk order.
    let mut unfilled: Vec<(u32, u32)> = Vec::new();
    let mut claimed: Vec<u32> = Vec::new();
    for (k, member) in members.iter().enumerate() {
        claimed.clear();
        for (topic, partitions) in &member.current.topics {
            let Some(t) = topics.find(*topic) else { continue };
            for &p in partitions {
                // A partition listed twice, or already kept by an earlier member
                // (targets should be disjoint, but need not be), counts once.
                if let Some(g) = topics.global(t, p)
                    && owner[g as usize] == NONE
                {
                    owner[g as usize] = k as u32;
                    claimed.push(g);
                }
            }
        }
        let held = claimed.len() as u32;
        // KAFKA-18688: an extra slot goes to a member that can fill it from its
        // own partitions; one that cannot leaves it to later members, unless
        // every remaining member must take one. So a balanced assignment
        // keeps every partition where it is.
        let members_left = (n - k) as u32;
        let mut mine = quota;
        if extra_left > 0 && (held > quota || members_left <= extra_left) {
            mine += 1;
            extra_left -= 1;
        }
        if held > mine {
            // Give back the excess: the last claimed, the highest-numbered
            // partitions of the member's last topics.
            for &g in &claimed[mine as usize..] {
                owner[g as usize] = NONE;
            }
        } else if held < mine {
            unfilled.push((k as u32, mine - held));
        }
    }

    // Deal the free partitions out in partition order, so fresh members get
    // contiguous ranges.
    let mut next = 0;
    for (k, lack) in unfilled {
        for _ in 0..lack {
            while next < owner.len() && owner[next] != NONE {
                next += 1;
            }
            let Some(slot) = owner.get_mut(next) else {
                return Err(index::error(assignor, "the quotas exceed the partitions (internal error)"));
            };
            *slot = k;
            next += 1;
        }
    }
    if owner[next..].contains(&NONE) {
        // Kafka's "Partitions were left unassigned": the quotas add up to P, so
        // this cannot happen.
        return Err(index::error(assignor, "partitions were left unassigned (internal error)"));
    }
    Ok(index::targets_from_owners(&owner, n, topics))
}
