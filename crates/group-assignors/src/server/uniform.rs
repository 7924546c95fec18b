//! Kafka's `UniformAssignor` (§5.4, §5.5): balance first, then stickiness.
//!
//! - Homogeneous groups (every member subscribes to the same topics): every
//!   member keeps what its current target holds up to its quota (the partition
//!   count divided by the member count; the remainder gives some members one
//!   more), and the rest goes round to the members below their quota.
//! - Heterogeneous groups: every member keeps what it still subscribes to, the
//!   unowned partitions go topic by topic to the least loaded subscribers, and
//!   then topics with two or more subscribers move partitions from their most to
//!   their least loaded subscribers (by total size) until they differ by one.
//!
//! Kafka walks members and topics in hash-map order; here members come in the
//! spec's order and topics by id, so exact choices may differ from Kafka's while
//! sizes and movements do not.

use std::cmp::Ordering;

use group_types::TopicId;

use super::{
    GroupSpec, MemberTarget, ServerAssignError, ServerAssignor, SubscribedTopicDescriber, SubscriptionType,
    TargetAssignment,
};

/// Kafka's `MAX_ITERATION_COUNT`: passes of the heterogeneous balancing phase.
const MAX_BALANCING_PASSES: usize = 16;

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
        if group.members.is_empty() {
            return Ok(TargetAssignment::default());
        }
        match group.subscription_type {
            SubscriptionType::Homogeneous => homogeneous(group, topics),
            SubscriptionType::Heterogeneous => heterogeneous(group, topics),
        }
    }
}

fn missing(topic: TopicId) -> ServerAssignError {
    ServerAssignError {
        assignor: "uniform".into(),
        message: format!(
            "Members are subscribed to topic {topic} which doesn't exist in the topic metadata."
        ),
    }
}

/// Per topic (ascending ids), the owner of each partition: a member index, or
/// `None`.
struct Owners {
    topics: Vec<(TopicId, Vec<Option<usize>>)>,
}

impl Owners {
    fn of(&mut self, topic: TopicId) -> Option<&mut Vec<Option<usize>>> {
        self.topics.binary_search_by(|(t, _)| t.cmp(&topic)).ok().map(|i| &mut self.topics[i].1)
    }

    /// The targets these owners describe, one per member.
    fn targets(&self, members: usize) -> TargetAssignment {
        let mut out = vec![MemberTarget::default(); members];
        for (topic, owners) in &self.topics {
            for (p, owner) in owners.iter().enumerate() {
                if let Some(m) = *owner {
                    let target = &mut out[m];
                    match target.topics.last_mut() {
                        Some((t, ps)) if t == topic => ps.push(p as i32),
                        _ => target.topics.push((*topic, vec![p as i32])),
                    }
                }
            }
        }
        TargetAssignment { members: out }
    }
}

/// `UniformHomogeneousAssignmentBuilder` (with KAFKA-18688's stability fix).
fn homogeneous(
    group: &GroupSpec<'_>,
    describer: &dyn SubscribedTopicDescriber,
) -> Result<TargetAssignment, ServerAssignError> {
    let n = group.members.len();
    // The topics are the first member's (every member's, by definition).
    let subscribed = group.members[0].subscribed_topics;
    if subscribed.is_empty() {
        return Ok(TargetAssignment { members: vec![MemberTarget::default(); n] });
    }
    let mut owners = Owners { topics: Vec::with_capacity(subscribed.len()) };
    let mut total = 0usize;
    for &topic in subscribed {
        let count = describer.partition_count(topic).ok_or_else(|| missing(topic))? as usize;
        owners.topics.push((topic, vec![None; count]));
        total += count;
    }
    owners.topics.sort_by_key(|a| a.0);
    let quota = total / n;
    let mut extra = total % n;
    // The partitions no current target holds come first in the pool, then what
    // members give up, in the walk's order.
    let mut held = Owners { topics: owners.topics.iter().map(|(t, o)| (*t, vec![None; o.len()])).collect() };
    for (m, member) in group.members.iter().enumerate() {
        for (topic, ps) in &member.current.topics {
            if let Some(slots) = held.of(*topic) {
                for &p in ps {
                    if let Some(slot) = slots.get_mut(p as usize)
                        && slot.is_none()
                    {
                        *slot = Some(m);
                    }
                }
            }
        }
    }
    let mut pool: Vec<(TopicId, usize)> = Vec::new();
    for (topic, slots) in &held.topics {
        pool.extend(slots.iter().enumerate().filter(|(_, o)| o.is_none()).map(|(p, _)| (*topic, p)));
    }
    let mut unfilled: Vec<(usize, usize)> = Vec::new();
    for (m, member) in group.members.iter().enumerate() {
        // What the member holds of the subscribed topics, ascending (a partition
        // two current targets claim stays with the first).
        let mut mine: Vec<(TopicId, usize)> = Vec::new();
        for (topic, ps) in &member.current.topics {
            if let Some(slots) = held.of(*topic) {
                mine.extend(
                    ps.iter()
                        .map(|&p| p as usize)
                        .filter(|&p| slots.get(p) == Some(&Some(m)))
                        .map(|p| (*topic, p)),
                );
            }
        }
        // An extra slot goes to a member that already fills it, or to every
        // remaining member once only as many remain as there are extra slots: an
        // assignment that is already balanced never moves.
        let remaining = n - m;
        let mut member_quota = quota;
        if extra > 0 && (mine.len() > quota || remaining <= extra) {
            member_quota += 1;
            extra -= 1;
        }
        let keep = mine.len().min(member_quota);
        for &(topic, p) in &mine[..keep] {
            owners.of(topic).unwrap()[p] = Some(m);
        }
        pool.extend_from_slice(&mine[keep..]);
        if keep < member_quota {
            unfilled.push((m, member_quota - keep));
        }
    }
    let mut next = pool.into_iter();
    for (m, room) in unfilled {
        for (topic, p) in next.by_ref().take(room) {
            owners.of(topic).unwrap()[p] = Some(m);
        }
    }
    if next.next().is_some() {
        return Err(ServerAssignError {
            assignor: "uniform".into(),
            message: "Partitions were left unassigned".into(),
        });
    }
    Ok(owners.targets(n))
}

/// The heterogeneous builder's state: targets as partition owners, and every
/// member's total size.
struct Heterogeneous {
    owners: Owners,
    sizes: Vec<usize>,
    /// Per topic (as in `owners`), its subscribers by member index, ascending.
    subscribers: Vec<Vec<usize>>,
}

impl Heterogeneous {
    fn count(&self, t: usize) -> usize {
        self.owners.topics[t].1.len()
    }

    /// Partitions per subscriber descending, then subscribers ascending, then id.
    fn topic_order(&self, a: usize, b: usize) -> Ordering {
        let (pa, sa) = (self.count(a), self.subscribers[a].len());
        let (pb, sb) = (self.count(b), self.subscribers[b].len());
        (pb * sa)
            .cmp(&(pa * sb))
            .then(sa.cmp(&sb))
            .then(self.owners.topics[a].0.cmp(&self.owners.topics[b].0))
    }

    fn sorted_topics(&self, topics: impl Iterator<Item = usize>) -> Vec<usize> {
        let mut v: Vec<usize> = topics.collect();
        v.sort_by(|&a, &b| self.topic_order(a, b));
        v
    }

    fn give(&mut self, t: usize, p: usize, m: usize) {
        if let Some(old) = self.owners.topics[t].1[p] {
            self.sizes[old] -= 1;
        }
        self.owners.topics[t].1[p] = Some(m);
        self.sizes[m] += 1;
    }

    /// Moves partitions of topic `t` from its most to its least loaded
    /// subscribers until they differ by one or less. Returns how many moved.
    fn balance_topic(&mut self, t: usize) -> usize {
        let mut balancer = Balancer::new(&self.subscribers[t], &self.sizes);
        if balancer.imbalance(&self.sizes) <= 1 {
            return 0;
        }
        // The topic's partitions grouped by owner, each group ascending: a member
        // gives up its highest partition first.
        let mut by_owner: Vec<Vec<usize>> = vec![Vec::new(); self.sizes.len()];
        for (p, owner) in self.owners.topics[t].1.iter().enumerate() {
            if let Some(m) = owner {
                by_owner[*m].push(p);
            }
        }
        let mut moved = 0;
        loop {
            let from = loop {
                match balancer.next_most_loaded(&self.sizes) {
                    None => break None,
                    Some(m) if by_owner[m].is_empty() => balancer.exclude_most_loaded(),
                    Some(m) => break Some(m),
                }
            };
            let Some(from) = from else { break };
            let p = by_owner[from].pop().unwrap();
            let to = balancer.next_least_loaded(&self.sizes);
            if balancer.is_balanced() {
                break;
            }
            self.give(t, p, to);
            moved += 1;
        }
        moved
    }
}

/// Kafka's `MemberAssignmentBalancer`: the subscribers of one topic sorted by
/// size (then index), with a least loaded range growing from the left and a most
/// loaded range growing from the right.
struct Balancer {
    sorted: Vec<usize>,
    least_end: usize,
    least_level: isize,
    next_least: usize,
    most_start: usize,
    most_end: usize,
    most_level: isize,
    next_most: isize,
}

impl Balancer {
    fn new(members: &[usize], sizes: &[usize]) -> Balancer {
        let mut sorted = members.to_vec();
        sorted.sort_by(|&a, &b| sizes[a].cmp(&sizes[b]).then(a.cmp(&b)));
        let n = sorted.len();
        Balancer {
            least_end: 0,
            least_level: sizes[sorted[0]] as isize - 1,
            next_least: 0,
            most_start: n,
            most_end: n,
            most_level: sizes[sorted[n - 1]] as isize + 1,
            next_most: n as isize - 1,
            sorted,
        }
    }

    fn size(&self, sizes: &[usize], i: usize) -> isize {
        sizes[self.sorted[i]] as isize
    }

    fn imbalance(&self, sizes: &[usize]) -> usize {
        sizes[*self.sorted.last().unwrap()] - sizes[self.sorted[0]]
    }

    /// The member to give the next partition to; assumes it gets one.
    fn next_least_loaded(&mut self, sizes: &[usize]) -> usize {
        if self.next_least >= self.least_end {
            self.least_level += 1;
            while self.least_end < self.sorted.len() && self.size(sizes, self.least_end) == self.least_level {
                self.least_end += 1;
            }
            self.next_least = 0;
        }
        let m = self.sorted[self.next_least];
        self.next_least += 1;
        m
    }

    /// The member to take the next partition from, `None` when none is left;
    /// assumes it gives one up.
    fn next_most_loaded(&mut self, sizes: &[usize]) -> Option<usize> {
        if self.next_most < self.most_start as isize {
            if self.most_end <= self.most_start && self.most_start > 0 {
                // The range emptied by exclusions: restart from the member below it.
                self.most_level = self.size(sizes, self.most_start - 1);
            } else {
                self.most_level -= 1;
            }
            while self.most_start > 0 && self.size(sizes, self.most_start - 1) == self.most_level {
                self.most_start -= 1;
            }
            self.next_most = self.most_end as isize - 1;
        }
        if self.next_most < 0 {
            return None;
        }
        let m = self.sorted[self.next_most as usize];
        self.next_most -= 1;
        Some(m)
    }

    /// Drops the member `next_most_loaded` just returned from the most loaded range.
    fn exclude_most_loaded(&mut self) {
        let i = (self.next_most + 1) as usize;
        self.sorted.swap(i, self.most_end - 1);
        self.most_end -= 1;
    }

    fn is_balanced(&self) -> bool {
        self.most_level - self.least_level <= 1
    }
}

/// `UniformHeterogeneousAssignmentBuilder` (Kafka 4's rework, KAFKA-17710).
fn heterogeneous(
    group: &GroupSpec<'_>,
    describer: &dyn SubscribedTopicDescriber,
) -> Result<TargetAssignment, ServerAssignError> {
    let n = group.members.len();
    let mut all: Vec<TopicId> =
        group.members.iter().flat_map(|m| m.subscribed_topics.iter().copied()).collect();
    all.sort_unstable();
    all.dedup();
    let mut owners = Owners { topics: Vec::with_capacity(all.len()) };
    let mut subscribers = Vec::with_capacity(all.len());
    for &topic in &all {
        let count = describer.partition_count(topic).ok_or_else(|| missing(topic))? as usize;
        owners.topics.push((topic, vec![None; count]));
        subscribers.push(
            (0..n)
                .filter(|&m| group.members[m].subscribed_topics.binary_search(&topic).is_ok())
                .collect::<Vec<_>>(),
        );
    }
    let mut b = Heterogeneous { owners, sizes: vec![0; n], subscribers };
    // Keep what members still subscribe to.
    for (m, member) in group.members.iter().enumerate() {
        for (topic, ps) in &member.current.topics {
            if member.subscribed_topics.binary_search(topic).is_err() {
                continue;
            }
            let Some(t) = all.binary_search(topic).ok() else { continue };
            for &p in ps {
                let p = p as usize;
                if p < b.count(t) && b.owners.topics[t].1[p].is_none() {
                    b.owners.topics[t].1[p] = Some(m);
                    b.sizes[m] += 1;
                }
            }
        }
    }
    // The unowned partitions, topic by topic, to the least loaded subscribers.
    let with_unowned = (0..all.len()).filter(|&t| b.owners.topics[t].1.iter().any(Option::is_none));
    for t in b.sorted_topics(with_unowned) {
        let mut balancer = Balancer::new(&b.subscribers[t], &b.sizes);
        for p in 0..b.count(t) {
            if b.owners.topics[t].1[p].is_none() {
                let m = balancer.next_least_loaded(&b.sizes);
                b.give(t, p, m);
            }
        }
    }
    // Balance the topics that can move, until a whole pass moves nothing.
    let movable = b.sorted_topics((0..all.len()).filter(|&t| b.subscribers[t].len() >= 2));
    let mut last_moved: Option<usize> = None;
    'passes: for _ in 0..MAX_BALANCING_PASSES {
        for (i, &t) in movable.iter().enumerate() {
            if last_moved == Some(i) {
                break 'passes;
            }
            let moved = b.balance_topic(t);
            if moved > 0 || last_moved.is_none() {
                last_moved = Some(i);
            }
        }
    }
    Ok(b.owners.targets(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::MemberSpec;

    fn t(n: u128) -> TopicId {
        TopicId::from_u128(n)
    }

    fn target(topics: &[(TopicId, &[i32])]) -> MemberTarget {
        MemberTarget { topics: topics.iter().map(|(t, ps)| (*t, ps.to_vec())).collect() }
    }

    fn run(
        members: &[(&str, &[TopicId], MemberTarget)],
        kind: SubscriptionType,
        counts: &[(TopicId, u32)],
    ) -> Vec<MemberTarget> {
        let spec = GroupSpec {
            members: members
                .iter()
                .map(|(id, subscribed, current)| MemberSpec {
                    member_id: id,
                    instance_id: None,
                    rack_id: None,
                    subscribed_topics: subscribed,
                    current,
                })
                .collect(),
            subscription_type: kind,
        };
        let describe = |topic: TopicId| counts.iter().find(|(t, _)| *t == topic).map(|(_, c)| *c);
        UniformAssignor.assign(&spec, &describe).unwrap().members
    }

    #[test]
    fn homogeneous_keeps_what_fits_and_hands_out_the_rest() {
        let foo = t(1);
        let out = run(
            &[("m1", &[foo], target(&[(foo, &[0, 1, 2, 3, 4, 5])])), ("m2", &[foo], MemberTarget::default())],
            SubscriptionType::Homogeneous,
            &[(foo, 6)],
        );
        assert_eq!(out, vec![target(&[(foo, &[0, 1, 2])]), target(&[(foo, &[3, 4, 5])])]);
    }

    #[test]
    fn homogeneous_balanced_assignment_never_moves() {
        // 7 partitions over 3 members: m2 already holds the extra partition.
        let foo = t(1);
        let out = run(
            &[
                ("m1", &[foo], target(&[(foo, &[0, 1])])),
                ("m2", &[foo], target(&[(foo, &[2, 3, 4])])),
                ("m3", &[foo], target(&[(foo, &[5, 6])])),
            ],
            SubscriptionType::Homogeneous,
            &[(foo, 7)],
        );
        assert_eq!(
            out,
            vec![target(&[(foo, &[0, 1])]), target(&[(foo, &[2, 3, 4])]), target(&[(foo, &[5, 6])])]
        );
    }

    #[test]
    fn heterogeneous_balances_by_total_size() {
        // m1 [foo], m2 [foo, bar]: foo 6, bar 2. m1 held all of foo.
        let (foo, bar) = (t(1), t(2));
        let out = run(
            &[
                ("m1", &[foo], target(&[(foo, &[0, 1, 2, 3, 4, 5])])),
                ("m2", &[foo, bar], MemberTarget::default()),
            ],
            SubscriptionType::Heterogeneous,
            &[(foo, 6), (bar, 2)],
        );
        assert_eq!(out, vec![target(&[(foo, &[0, 1, 2, 3])]), target(&[(foo, &[4, 5]), (bar, &[0, 1])])]);
    }

    #[test]
    fn heterogeneous_member_without_topics_gets_nothing() {
        let foo = t(1);
        let out = run(
            &[("m1", &[foo], MemberTarget::default()), ("m2", &[], MemberTarget::default())],
            SubscriptionType::Heterogeneous,
            &[(foo, 4)],
        );
        assert_eq!(out, vec![target(&[(foo, &[0, 1, 2, 3])]), MemberTarget::default()]);
    }
}
