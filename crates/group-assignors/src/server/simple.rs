//! Kafka's share-group assignor, `SimpleAssignor` (`"simple"`, KIP-932), and
//! what its two builders share: Kafka's member numbering, each member's
//! current target in the order Kafka reads it, the quotas, and the last step
//! that hands out what is still missing (`assignRemainingPartitions`).

use group_types::TopicId;

use super::index;
use super::java_order::{self, DEFAULT, Table, int_ord, spread, string_hash, uuid_hash, uuid_ord};
use super::share::{ShareAssignor, ShareGroupSpec};
use super::{
    MemberSpec, MemberTarget, ServerAssignError, SubscribedTopicDescriber, SubscriptionType,
    TargetAssignment, simple_heterogeneous, simple_homogeneous,
};

/// Kafka's share assignor (`"simple"`, `SimpleAssignor`): balance first,
/// then stickiness, and partitions shared when members outnumber them.
///
/// - **Sharing.** With `M` members and `P` assignable partitions, each
///   partition goes to `ceil(M / P)` members (one when `M <= P`), and the
///   members' quotas add up to that: member `i` (in Kafka's numbering, below)
///   may hold `ceil(s * (i + 1)) - ceil(s * i)` partitions, where
///   `s = ceil(M / P) * P / M`. With `M <= P` the counts differ by at most
///   one; with more members than partitions every member gets at least one.
/// - **Stickiness.** A member keeps its current partitions of topics it
///   still subscribes to, unless it holds more than its quota (it gives up the
///   first ones in Kafka's iteration order) or a partition is shared by more
///   members than wanted (the first holders in Kafka's order give it up).
/// - **Filling.** The partitions that want more members are walked once in
///   Kafka's order, handing each to the next member below its quota in a
///   round that starts over when it runs out, as Kafka's iterator does.
/// - **Homogeneous** groups (every member subscribes alike) do this over all
///   their partitions at once (`SimpleHomogeneousAssignmentBuilder`);
///   **heterogeneous** groups do it topic by topic over each topic's
///   subscribers (`SimpleHeterogeneousAssignmentBuilder`), so balance holds
///   per topic, not across topics.
/// - **Assignable partitions.** Only partitions the spec's
///   [`AssignablePartitions`](super::AssignablePartitions) allows become
///   targets. A member's current partition that is not assignable (or beyond
///   the partition count) is not taken away for it, as in Kafka: it still
///   counts towards the member's quota.
///
/// **Kafka's order, reproduced.** Kafka's builders walk hash maps and hash
/// sets, so which member gives up which partition, and who gets which, depend
/// on Java's iteration order. This port emulates `java.util.HashMap`
/// (`java_order.rs`: capacities, `put` and `computeIfAbsent`, resizes and
/// red-black tree bins): members are numbered in the order a
/// `new HashMap<String, _>()` of their ids iterates, and the partition maps
/// and member sets are walked in Java's order for `TopicIdPartition`,
/// `Integer` and `Uuid` keys. Checked against Kafka 4.2's own classes on
/// thousands of random and large groups, the targets and errors are the same
/// given two stand-ins for what the spec does not say: member ids whose
/// hashes meet in one bucket are taken in id order (Kafka: the order its
/// member map yielded them), and a member's current target is read as Kafka
/// rebuilds it from its record, with topics and partitions in ascending
/// order. Both matter only for keys that collide in a bucket.
///
/// **Kafka's quirks, kept.** In a heterogeneous group a member's partitions
/// of topics that no member subscribes to any more stay in its target
/// (Kafka's heterogeneous builder never looks at them; the coordinator
/// filters a member's assignment by its subscription). A member that gives
/// up every partition of a topic has no entry for it (Kafka keeps an empty
/// set; a record holds the same partitions either way).
///
/// **Errors** (Kafka's `PartitionAssignorException`): a subscribed topic the
/// describer does not know ("Members are subscribed to topic ... which
/// doesn't exist in the topic metadata."); a partition count beyond an
/// `i32`; a member id given twice; and the state in which Kafka's filling
/// step asks an emptied iterator for a member (`NoSuchElementException`,
/// which the coordinator answers `UNKNOWN_SERVER_ERROR` like the others).
/// A group labelled homogeneous whose members' topic lists differ is
/// assigned as heterogeneous (Kafka's coordinator never labels it so).
///
/// # Example
///
/// Three members on a topic of two partitions, of which only partition 0 is
/// initialized yet: all three share it.
///
/// ```
/// use group_assignors::server::{GroupSpec, MemberSpec, MemberTarget, SubscriptionType};
/// use group_assignors::{ShareAssignor, ShareGroupSpec, share_assignor};
/// use group_types::TopicId;
///
/// let orders = TopicId::from_u128(7);
/// let topics = [orders];
/// let none = MemberTarget::default();
/// let member = |id| MemberSpec {
///     member_id: id,
///     instance_id: None,
///     rack_id: None,
///     subscribed_topics: &topics,
///     current: &none,
/// };
/// let group = GroupSpec {
///     members: vec![member("a"), member("b"), member("c")],
///     subscription_type: SubscriptionType::Homogeneous,
/// };
/// let initialized = |_topic: TopicId, partition: i32| partition == 0;
/// let counts = |t: TopicId| (t == orders).then_some(2);
/// let simple = share_assignor("simple").expect("built in");
/// let out = simple.assign(&ShareGroupSpec { group: &group, assignable: &initialized }, &counts)?;
/// assert!(out.members.iter().all(|m| m.partitions(orders) == [0]));
/// # Ok::<(), group_assignors::server::ServerAssignError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SimpleAssignor;

pub(super) const NAME: &str = "simple";

impl ShareAssignor for SimpleAssignor {
    fn name(&self) -> &str {
        NAME
    }

    fn assign(
        &self,
        group: &ShareGroupSpec<'_, '_>,
        topics: &dyn SubscribedTopicDescriber,
    ) -> Result<TargetAssignment, ServerAssignError> {
        let members = &group.group.members[..];
        if members.is_empty() {
            return Ok(TargetAssignment::default());
        }
        let order = kafka_order(members)?;
        let olds: Vec<Old> = order.iter().map(|&m| Old::of(members[m].current)).collect();
        let homogeneous = group.group.subscription_type == SubscriptionType::Homogeneous
            && index::same_subscriptions(members);
        let targets = if homogeneous {
            simple_homogeneous::assign(members, &order, &olds, group.assignable, topics)?
        } else {
            simple_heterogeneous::assign(members, &order, &olds, group.assignable, topics)?
        };
        // Kafka numbers members its own way; the output follows the spec.
        let mut out = vec![MemberTarget::default(); members.len()];
        for (k, target) in targets.into_iter().enumerate() {
            out[order[k]] = target;
        }
        Ok(TargetAssignment { members: out })
    }
}

/// Spec indices in Kafka's member order: the order `new HashMap<String, _>()`
/// holding the member ids iterates, ties (one bucket) in id order, so that
/// the spec's order makes no difference.
fn kafka_order(members: &[MemberSpec<'_>]) -> Result<Vec<usize>, ServerAssignError> {
    let mut order: Vec<usize> = (0..members.len()).collect();
    // Java's `String.compareTo` (UTF-16) orders ids of equal hash in a tree bin.
    order.sort_unstable_by(|&a, &b| java_order::string_cmp(members[a].member_id, members[b].member_id));
    if let Some(w) = order.windows(2).find(|w| members[w[0]].member_id == members[w[1]].member_id) {
        return Err(index::error(
            NAME,
            format!("member {} appears twice in the group", members[w[0]].member_id),
        ));
    }
    let hashes: Vec<u32> = order.iter().map(|&m| spread(string_hash(members[m].member_id))).collect();
    let walk = Table::put_all(DEFAULT, &hashes, |rank| Some((i64::from(rank), 0)));
    Ok(walk.into_iter().map(|i| order[i as usize]).collect())
}

/// A member's current target as Kafka's builders read it
/// (`Assignment.fromRecord`: a `HashMap` of topics, each a `HashSet` copied
/// from the record's list), in Java's iteration order.
#[derive(Debug, Default)]
pub(super) struct Old {
    /// Topics in Java's order, each with its partitions in Java's order.
    pub(super) topics: Vec<(TopicId, Vec<i32>)>,
}

impl Old {
    fn of(current: &MemberTarget) -> Old {
        let mut topics: Vec<(TopicId, Vec<i32>)> = Vec::with_capacity(current.topics.len());
        let mut sorted = current.topics.iter().collect::<Vec<_>>();
        // A well-formed target is sorted already; a malformed one is read as the set it means.
        if !sorted.windows(2).all(|w| w[0].0 < w[1].0) {
            sorted.sort_by_key(|(t, _)| *t);
        }
        for (topic, parts) in sorted {
            let mut parts = parts.clone();
            if !parts.windows(2).all(|w| w[0] < w[1]) {
                parts.sort_unstable();
                parts.dedup();
            }
            match topics.last_mut() {
                Some((t, existing)) if t == topic => {
                    existing.extend(parts);
                    existing.sort_unstable();
                    existing.dedup();
                }
                _ => topics.push((*topic, parts)),
            }
        }
        for (_, parts) in &mut topics {
            let hashes: Vec<u32> = parts.iter().map(|&p| spread(p)).collect();
            let walk =
                Table::put_all(java_order::copied(parts.len()), &hashes, |i| int_ord(parts[i as usize]));
            *parts = walk.into_iter().map(|i| parts[i as usize]).collect();
        }
        let hashes: Vec<u32> = topics.iter().map(|(t, _)| spread(uuid_hash(*t))).collect();
        let walk = Table::put_all(DEFAULT, &hashes, |i| uuid_ord(topics[i as usize].0));
        let mut slots: Vec<Option<(TopicId, Vec<i32>)>> = topics.into_iter().map(Some).collect();
        Old { topics: walk.into_iter().filter_map(|i| slots[i as usize].take()).collect() }
    }

    /// The partitions of `topic`, in Java's order.
    pub(super) fn get(&self, topic: TopicId) -> Option<&[i32]> {
        self.topics.iter().find(|(t, _)| *t == topic).map(|(_, p)| &p[..])
    }
}

/// The partitions of `topic` that may be targets: below the describer's
/// count and assignable (`computeTargetPartitions`).
pub(super) fn target_partitions(
    topic: TopicId,
    describer: &dyn SubscribedTopicDescriber,
    assignable: &dyn super::AssignablePartitions,
) -> Result<Vec<i32>, ServerAssignError> {
    let Some(count) = describer.partition_count(topic) else {
        return Err(index::error(
            NAME,
            format!("Members are subscribed to topic {topic} which doesn't exist in the topic metadata."),
        ));
    };
    let Ok(count) = i32::try_from(count) else {
        return Err(index::error(
            NAME,
            format!("topic {topic} has {count} partitions, more than an i32 partition index can number"),
        ));
    };
    Ok((0..count).filter(|&p| assignable.is_assignable(topic, p)).collect())
}

/// How many members each partition should have, and each member's quota, by
/// Kafka's formulas (`desiredSharing`, `desiredAssignmentCount`): the quota of
/// the `i`-th of `members` is `ceil(s * (i + 1)) - ceil(s * i)` with
/// `s = sharing * partitions / members`, in doubles as Java computes it.
pub(super) fn quotas(members: usize, partitions: usize) -> (usize, Vec<u32>) {
    if members == 0 {
        return (0, Vec::new());
    }
    let sharing = if partitions == 0 { 0 } else { members.div_ceil(partitions) };
    // Java multiplies two ints (wrapping), then divides as a double.
    let product = (sharing as i32).wrapping_mul(partitions as i32);
    let precise = f64::from(product) / members as f64;
    let quota = (0..members)
        .map(|i| {
            let hi = (precise * (i + 1) as f64).ceil() as i32;
            let lo = (precise * i as f64).ceil() as i32;
            hi.wrapping_sub(lo).max(0) as u32
        })
        .collect();
    (sharing, quota)
}

/// Kafka's `assignRemainingPartitions`: walks `order` (partitions, as entry
/// indices, in Kafka's iteration order) once; each that has fewer than
/// `sharing` holders goes to the next members of `unfilled` (ascending, as
/// Kafka's presized `HashSet<Integer>` iterates) that do not hold it, in a
/// round that starts over while the last pass gave something. A member
/// leaves `unfilled` once it holds its quota. As in Kafka, a member given the
/// partition earlier in the same walk still counts when the round comes back
/// to it, and a walk that finds `unfilled` empty while a partition still wants
/// a member fails (Kafka: `NoSuchElementException`).
#[allow(clippy::too_many_arguments)]
pub(super) fn fill(
    order: &[u32],
    holders: &[Vec<u32>],
    sharing: usize,
    mut unfilled: Vec<u32>,
    held: &mut [u32],
    quota: &[u32],
    mut give: impl FnMut(u32, u32),
) -> Result<(), ServerAssignError> {
    if unfilled.is_empty() {
        return Ok(());
    }
    let mut at = 0;
    let mut gave_this_round = false;
    let mut given: Vec<u32> = Vec::new();
    for &e in order {
        let have = &holders[e as usize];
        if have.len() < sharing {
            let mut wanted = sharing - have.len();
            given.clear();
            while wanted > 0 {
                if at >= unfilled.len() {
                    if !gave_this_round {
                        break;
                    }
                    at = 0;
                    gave_this_round = false;
                    if unfilled.is_empty() {
                        return Err(index::error(
                            NAME,
                            "partitions still want members but none is below its quota \
                             (Kafka's SimpleAssignor fails here with NoSuchElementException)",
                        ));
                    }
                }
                let m = unfilled[at];
                at += 1;
                if have.contains(&m) {
                    continue;
                }
                if !given.contains(&m) {
                    given.push(m);
                    give(e, m);
                    held[m as usize] += 1;
                }
                wanted -= 1;
                gave_this_round = true;
                if held[m as usize] >= quota[m as usize] {
                    at -= 1;
                    unfilled.remove(at);
                }
            }
        }
        if unfilled.is_empty() {
            break;
        }
    }
    Ok(())
}

/// Adds `m` to the ascending list `list` unless it is there.
pub(super) fn insert_sorted(list: &mut Vec<u32>, m: u32) {
    if let Err(at) = list.binary_search(&m) {
        list.insert(at, m);
    }
}

/// Removes the first `count` of `holders` (ascending member indices, as
/// inserted) in the order Java iterates a `new HashSet<Integer>()` that grew
/// to hold `peak` (the members it held before any was removed); returns them.
pub(super) fn first_in_set_order(holders: &[u32], peak: &[u32], count: usize) -> Vec<u32> {
    let hashes: Vec<u32> = peak.iter().map(|&m| spread(m as i32)).collect();
    let walk = Table::put_all(DEFAULT, &hashes, |i| int_ord(peak[i as usize] as i32));
    // `holders` ascends: the members still there are found by search.
    walk.into_iter()
        .map(|i| peak[i as usize])
        .filter(|m| holders.binary_search(m).is_ok())
        .take(count)
        .collect()
}

/// Sorted, non-empty per-topic lists from (topic, partition) pairs.
pub(super) fn member_target(mut pairs: Vec<(TopicId, i32)>) -> MemberTarget {
    pairs.sort_unstable();
    pairs.dedup();
    let mut topics: Vec<(TopicId, Vec<i32>)> = Vec::new();
    for (t, p) in pairs {
        match topics.last_mut() {
            Some((last, parts)) if *last == t => parts.push(p),
            _ => topics.push((t, vec![p])),
        }
    }
    MemberTarget { topics }
}
