//! The balancing core shared by `StickyAssignor` and `CooperativeStickyAssignor`:
//! claim validation by generation, the quota builder for identical
//! subscriptions, the level-based builder for heterogeneous ones, and the
//! cooperative hand-over filter.

use std::borrow::Cow;

use group_types::{MemberSubscription, TopicPartition};

use crate::cluster::{AddressCache, Cluster, Group, Holdings, NONE, Racks, assignment_from_owners};
use crate::{AssignError, GroupAssignment, ReplicaRacks, check_rack_len};

/// What one member says it owned, and in which generation (-1 when absent).
#[derive(Debug)]
pub(crate) struct MemberClaim<'a> {
    pub(crate) generation: i32,
    pub(crate) owned: Cow<'a, [TopicPartition]>,
}

/// Runs the sticky algorithm; `claims[i]` belongs to `members[i]`.
pub(crate) fn assign(
    members: &[MemberSubscription],
    partitions: &[TopicPartition],
    replica_racks: &[ReplicaRacks],
    claims: &[MemberClaim<'_>],
    cooperative: bool,
) -> Result<GroupAssignment, AssignError> {
    check_rack_len(partitions, replica_racks)?;
    let cluster = Cluster::new(partitions)?;
    let group = Group::new(members, &cluster)?;
    let total = cluster.total as usize;
    let subscribed: Vec<bool> =
        (0..cluster.topics.len() as u32).map(|t| !group.topic_classes(t).is_empty()).collect();
    let racks = (!replica_racks.is_empty()
        && members.iter().any(|m| m.rack_id.as_deref().is_some_and(|r| !r.is_empty())))
    .then(|| Racks::new(&cluster, members, partitions, replica_racks))
    .filter(|r| {
        let parts = cluster
            .topics
            .iter()
            .enumerate()
            .filter(|(t, _)| subscribed[*t])
            .flat_map(|(_, topic)| topic.start..topic.start + topic.len);
        r.use_rack_aware(0..members.len() as u32, parts)
    });
    let resolved = Resolved::new(&cluster, &group, claims, cooperative);
    let active: Vec<usize> = (0..group.class_topics.len())
        .filter(|&c| !group.class_topics[c].is_empty() && !group.class_members[c].is_empty())
        .collect();
    if let [c] = active.as_slice()
        && racks.is_none()
        && resolved.unclaimed()
    {
        // Nothing to keep, nothing to withhold, no rack to swap for.
        return Ok(fresh_uniform(&cluster, &group, *c));
    }
    let mut owner = match active.as_slice() {
        [] => vec![NONE; total],
        [c] => uniform(&cluster, &group, *c, &resolved.prev_owner, racks.as_ref()),
        _ => general(&cluster, &group, &resolved, racks.as_ref()),
    };
    if let Some(r) = &racks {
        rack_swaps(&cluster, r, &resolved.prev_owner, &mut owner);
    }
    if cooperative && !resolved.claim_count.is_empty() {
        // A partition moving to a member that is not its valid previous owner is
        // withheld while anybody else still lists it: the holder revokes it
        // first, and the follow-up rebalance hands it over.
        for (g, o) in owner.iter_mut().enumerate() {
            let m = *o;
            if m == NONE || resolved.prev_owner[g] == m {
                continue;
            }
            let n = resolved.claim_count[g];
            if n >= 2 || (n == 1 && resolved.last_claimant[g] != m) {
                *o = NONE;
            }
        }
    }
    Ok(assignment_from_owners(&cluster, &group, &owner))
}

/// Claims after validation (assignors.md 4.4).
struct Resolved {
    /// The valid previous owner of each partition, `NONE` if none (in rack
    /// mode it may sit on the wrong rack; the builders decide whether to keep it).
    prev_owner: Vec<u32>,
    /// A lower-generation claimant still subscribed, `NONE` if none; empty when nobody claims anything.
    hint: Vec<u32>,
    /// Cooperative only: distinct raw claimants per partition (saturating at 2) and the last one.
    claim_count: Vec<u8>,
    last_claimant: Vec<u32>,
}

impl Resolved {
    /// Whether nobody claims any partition (or there are no partitions).
    fn unclaimed(&self) -> bool {
        self.hint.is_empty()
    }

    fn new(
        cluster: &Cluster<'_>,
        group: &Group<'_>,
        claims: &[MemberClaim<'_>],
        cooperative: bool,
    ) -> Resolved {
        let total = cluster.total as usize;
        if claims.iter().all(|c| c.owned.is_empty()) {
            return Resolved {
                prev_owner: vec![NONE; total],
                hint: Vec::new(),
                claim_count: Vec::new(),
                last_claimant: Vec::new(),
            };
        }
        let mut top = vec![NONE; total];
        let mut top_gen = vec![i32::MIN; total];
        let mut tied = vec![false; total];
        let mut hint = vec![NONE; total];
        let mut hint_gen = vec![i32::MIN; total];
        let (mut claim_count, mut last_claimant) =
            if cooperative { (vec![0u8; total], vec![NONE; total]) } else { (Vec::new(), Vec::new()) };
        let mut cache = AddressCache::new();
        for (m, claim) in claims.iter().enumerate() {
            let m = m as u32;
            let gen_ = claim.generation;
            cluster.resolve(&mut cache, claim.owned.iter().map(|tp| (&*tp.topic, tp.partition)), |g| {
                let g = g as usize;
                if cooperative && last_claimant[g] != m {
                    last_claimant[g] = m;
                    claim_count[g] = claim_count[g].saturating_add(1).min(2);
                }
                if top[g] == NONE {
                    top[g] = m;
                    top_gen[g] = gen_;
                } else if top[g] == m {
                    // The member listed the partition twice.
                } else if gen_ > top_gen[g] {
                    if !tied[g] && top_gen[g] > hint_gen[g] {
                        hint[g] = top[g];
                        hint_gen[g] = top_gen[g];
                    }
                    top[g] = m;
                    top_gen[g] = gen_;
                    tied[g] = false;
                } else if gen_ == top_gen[g] {
                    tied[g] = true;
                } else if gen_ > hint_gen[g] {
                    hint[g] = m;
                    hint_gen[g] = gen_;
                }
            });
        }
        let mut prev_owner = top;
        for (t, topic) in cluster.topics.iter().enumerate() {
            let t = t as u32;
            for g in topic.start..topic.start + topic.len {
                let g = g as usize;
                let p = prev_owner[g];
                if p != NONE && (tied[g] || !group.subscribes(p, t)) {
                    prev_owner[g] = NONE;
                }
                let h = hint[g];
                if h != NONE && (!group.subscribes(h, t) || h == prev_owner[g]) {
                    hint[g] = NONE;
                }
            }
        }
        Resolved { prev_owner, hint, claim_count, last_claimant }
    }
}

/// Identical subscriptions (one non-empty class): quotas `floor(P/N)` and
/// `ceil(P/N)`, the ceiling slots going to the members owning most, every
/// member keeping owned partitions up to its quota (the proven minimum number
/// of moves), and the rest dealt round robin in member-id order.
fn uniform(
    cluster: &Cluster<'_>,
    group: &Group<'_>,
    class: usize,
    prev_owner: &[u32],
    racks: Option<&Racks>,
) -> Vec<u32> {
    let members = &group.class_members[class];
    let topics = &group.class_topics[class];
    let n = members.len();
    let mut owner = vec![NONE; cluster.total as usize];
    let p: usize = topics.iter().map(|&t| cluster.topics[t as usize].len as usize).sum();
    let mut owned = vec![0u32; group.members.len()];
    // In rack mode a partition owned on the wrong rack is not kept up front: it
    // may move to a member on a replica's rack, and returns to its owner only
    // if none has room.
    let keepable = |g: u32, o: u32| o != NONE && racks.is_none_or(|r| r.matches(o, g));
    for &t in topics {
        let topic = &cluster.topics[t as usize];
        for g in topic.start..topic.start + topic.len {
            let o = prev_owner[g as usize];
            if keepable(g, o) {
                owned[o as usize] += 1;
            }
        }
    }
    let (min_q, extra) = ((p / n) as u32, p % n);
    let mut by_owned = members.clone();
    by_owned.sort_by_key(|&m| std::cmp::Reverse(owned[m as usize]));
    let mut deficit = vec![0u32; group.members.len()];
    for (k, &m) in by_owned.iter().enumerate() {
        deficit[m as usize] = min_q + u32::from(k < extra);
    }
    let mut pool: Vec<u32> = Vec::with_capacity(p);
    for &t in topics {
        let topic = &cluster.topics[t as usize];
        for g in topic.start..topic.start + topic.len {
            let o = prev_owner[g as usize];
            if keepable(g, o) && deficit[o as usize] > 0 {
                owner[g as usize] = o;
                deficit[o as usize] -= 1;
            } else {
                pool.push(g);
            }
        }
    }
    if let Some(racks) = racks {
        pool = rack_matching_pass(racks, members, &mut deficit, &mut owner, pool);
        pool.retain(|&g| {
            let o = prev_owner[g as usize];
            if o != NONE && deficit[o as usize] > 0 {
                owner[g as usize] = o;
                deficit[o as usize] -= 1;
                false
            } else {
                true
            }
        });
    }
    let mut active: Vec<u32> = members.iter().copied().filter(|&m| deficit[m as usize] > 0).collect();
    let mut next = pool.into_iter();
    'deal: while !active.is_empty() {
        for &m in &active {
            let Some(g) = next.next() else { break 'deal };
            owner[g as usize] = m;
            deficit[m as usize] -= 1;
        }
        active.retain(|&m| deficit[m as usize] > 0);
    }
    owner
}

/// [`uniform`] when nobody claims anything and racks play no part: the deal
/// gives the `i`-th partition of the class's topics to member `i % n` in
/// member-id order (the first `P % n` members take the ceiling quota), which is
/// computed directly instead of through quotas, a pool and an owner array.
fn fresh_uniform(cluster: &Cluster<'_>, group: &Group<'_>, class: usize) -> GroupAssignment {
    let members = &group.class_members[class];
    let topics = &group.class_topics[class];
    let n = members.len();
    let p: usize = topics.iter().map(|&t| cluster.topics[t as usize].len as usize).sum();
    let mut counts = vec![0u32; group.members.len()];
    for (k, &m) in members.iter().enumerate() {
        counts[m as usize] = (p / n + usize::from(k < p % n)) as u32;
    }
    let mut holdings = Holdings::new(&counts);
    let mut k = 0;
    for &t in topics {
        for o in 0..cluster.topics[t as usize].len {
            holdings.push(members[k], t, o);
            k += 1;
            if k == n {
                k = 0;
            }
        }
    }
    holdings.into_assignment(cluster, group)
}

/// Gives pool partitions to members with room on a rack holding a replica,
/// cycling through each rack's members; returns what is left.
fn rack_matching_pass(
    racks: &Racks,
    members: &[u32],
    deficit: &mut [u32],
    owner: &mut [u32],
    pool: Vec<u32>,
) -> Vec<u32> {
    let mut by_rack: Vec<Vec<u32>> = vec![Vec::new(); racks.count];
    for &m in members {
        let r = racks.member[m as usize];
        if r != NONE && deficit[m as usize] > 0 {
            by_rack[r as usize].push(m);
        }
    }
    let mut cursor = vec![0usize; racks.count];
    let mut left = Vec::with_capacity(pool.len());
    'next: for g in pool {
        for &r in racks.of_partition(g) {
            let list = &mut by_rack[r as usize];
            list.retain(|&m| deficit[m as usize] > 0);
            if list.is_empty() {
                continue;
            }
            let k = cursor[r as usize] % list.len();
            let m = list[k];
            owner[g as usize] = m;
            deficit[m as usize] -= 1;
            cursor[r as usize] = k + 1;
            continue 'next;
        }
        left.push(g);
    }
    left
}

/// How many partitions the rack swap pass probes for each misaligned one.
const SWAP_PROBES: usize = 64;

/// Rack mode: swaps two partitions of one topic between their holders when
/// that puts a misaligned one on a replica's rack and the other stays or
/// becomes aligned. Counts and each member's set of held topics do not change,
/// so strong balance is untouched; a partition still with its previous owner
/// on the right rack is never swapped away (alignment only beats stickiness
/// for misaligned partitions). The search per partition is bounded.
fn rack_swaps(cluster: &Cluster<'_>, racks: &Racks, prev_owner: &[u32], owner: &mut [u32]) {
    for topic in &cluster.topics {
        let range = topic.start..topic.start + topic.len;
        let misaligned: Vec<u32> = range
            .clone()
            .filter(|&g| owner[g as usize] != NONE && !racks.matches(owner[g as usize], g))
            .collect();
        for g in misaligned {
            let a = owner[g as usize];
            let mut probes = 0;
            for h in range.clone() {
                let b = owner[h as usize];
                if b == NONE || b == a {
                    continue;
                }
                probes += 1;
                if probes > SWAP_PROBES {
                    break;
                }
                let movable = prev_owner[h as usize] != b || !racks.matches(b, h);
                if movable && racks.matches(b, g) && racks.matches(a, h) {
                    owner[g as usize] = b;
                    owner[h as usize] = a;
                    break;
                }
            }
        }
    }
}

/// Members bucketed by partition count within each subscription class, so the
/// least loaded subscriber of a topic is found in O(classes of the topic).
#[derive(Clone)]
struct Loads {
    count: Vec<u32>,
    pos: Vec<u32>,
    class_of: Vec<u32>,
    buckets: Vec<Vec<Vec<u32>>>,
    min: Vec<usize>,
}

impl Loads {
    fn new(group: &Group<'_>, count: Vec<u32>) -> Loads {
        let classes = group.class_topics.len();
        let mut loads = Loads {
            count,
            pos: vec![0; group.members.len()],
            class_of: group.class_of.clone(),
            buckets: vec![Vec::new(); classes],
            min: vec![usize::MAX; classes],
        };
        for members in &group.class_members {
            for &m in members {
                loads.insert(m);
            }
        }
        loads
    }

    fn insert(&mut self, m: u32) {
        let c = self.class_of[m as usize] as usize;
        let l = self.count[m as usize] as usize;
        let b = &mut self.buckets[c];
        if b.len() <= l {
            b.resize_with(l + 1, Vec::new);
        }
        self.pos[m as usize] = b[l].len() as u32;
        b[l].push(m);
        self.min[c] = self.min[c].min(l);
    }

    fn remove(&mut self, m: u32) {
        let c = self.class_of[m as usize] as usize;
        let bucket = &mut self.buckets[c][self.count[m as usize] as usize];
        let i = self.pos[m as usize] as usize;
        bucket.swap_remove(i);
        if let Some(&moved) = bucket.get(i) {
            self.pos[moved as usize] = i as u32;
        }
    }

    fn add(&mut self, m: u32, delta: i32) {
        self.remove(m);
        self.count[m as usize] = self.count[m as usize].wrapping_add_signed(delta);
        self.insert(m);
    }

    /// The least loaded member of class `c` and its count.
    fn min_of(&mut self, c: u32) -> Option<(u32, u32)> {
        let c = c as usize;
        let b = &self.buckets[c];
        let mut l = self.min[c];
        while l < b.len() && b[l].is_empty() {
            l += 1;
        }
        self.min[c] = l;
        b.get(l).and_then(|x| x.last()).map(|&m| (l as u32, m))
    }

    /// The least loaded subscriber of topic `t`.
    fn min_for(&mut self, group: &Group<'_>, t: u32) -> Option<(u32, u32)> {
        let mut best: Option<(u32, u32)> = None;
        for &c in group.topic_classes(t) {
            if let Some(x) = self.min_of(c)
                && best.is_none_or(|b| x.0 < b.0)
            {
                best = Some(x);
            }
        }
        best
    }
}

/// Heterogeneous subscriptions: keep every valid claim, give each unowned
/// partition (most constrained topics first) to its least loaded subscriber,
/// then move partitions from a member to a subscriber holding two or more
/// fewer until no such move exists, which is the strong balance of
/// assignors.md 4.2. Every move lowers the sum of squared counts, so the loop
/// ends; a pass without a move proves balance. Newly placed partitions move
/// before previously owned ones, and a partition goes back to its stale
/// claimant when that also balances.
///
/// In rack mode a claim on the wrong rack is kept too, unlike Java's general
/// builder (assignors.md 4.8): released, two such partitions of one topic can
/// trade owners on every rebalance, and a cooperative group then revokes and
/// rebalances forever. Racks still choose where unowned partitions go and
/// which member takes a moved one, and the rack swap pass afterwards aligns
/// partitions without changing any count.
fn general(cluster: &Cluster<'_>, group: &Group<'_>, resolved: &Resolved, racks: Option<&Racks>) -> Vec<u32> {
    let total = cluster.total as usize;
    let n = group.members.len();
    let mut owner = resolved.prev_owner.clone();
    let mut count = vec![0u32; n];
    let mut topic_of = vec![0u32; total];
    for (t, topic) in cluster.topics.iter().enumerate() {
        topic_of[topic.start as usize..(topic.start + topic.len) as usize].fill(t as u32);
    }
    for &o in &owner {
        if o != NONE {
            count[o as usize] += 1;
        }
    }
    let mut loads = Loads::new(group, count);
    let mut topics: Vec<(usize, u32)> = (0..cluster.topics.len() as u32)
        .map(|t| (group.subscriber_count(t), t))
        .filter(|&(s, _)| s > 0)
        .collect();
    topics.sort_unstable();
    for &(_, t) in &topics {
        let topic = &cluster.topics[t as usize];
        for g in topic.start..topic.start + topic.len {
            if owner[g as usize] != NONE {
                continue;
            }
            let dest = match racks {
                Some(r) => {
                    rack_preferred(group, r, &loads.count, t, g, None, resolved.prev_owner[g as usize])
                }
                None => loads.min_for(group, t).map(|(_, m)| m),
            };
            if let Some(m) = dest {
                owner[g as usize] = m;
                loads.add(m, 1);
            }
        }
    }
    let ctx = Balancer { group, resolved, racks, topic_of };
    ctx.balance(&mut owner, &mut loads, true);
    // Repair: give a previously owned partition that had to move back to its
    // owner when moving only newly placed partitions then restores balance
    // (a chain the greedy pass cannot see). Bounded, as each try costs a pass.
    let moved: Vec<u32> = (0..total as u32)
        .filter(|&g| {
            let o = resolved.prev_owner[g as usize];
            o != NONE && owner[g as usize] != o
        })
        .take(REPAIR_TRIES)
        .collect();
    for g in moved {
        let (o, x) = (resolved.prev_owner[g as usize], owner[g as usize]);
        if x == o {
            continue;
        }
        let (saved_owner, saved_loads) = (owner.clone(), loads.clone());
        owner[g as usize] = o;
        if x != NONE {
            loads.add(x, -1);
        }
        loads.add(o, 1);
        if !ctx.balance(&mut owner, &mut loads, false) {
            owner = saved_owner;
            loads = saved_loads;
        }
    }
    owner
}

/// At most this many previously owned partitions are tried by the repair step.
const REPAIR_TRIES: usize = 64;

/// What the balance loop reads.
struct Balancer<'x, 'g> {
    group: &'x Group<'g>,
    resolved: &'x Resolved,
    racks: Option<&'x Racks>,
    topic_of: Vec<u32>,
}

impl Balancer<'_, '_> {
    /// Moves partitions from a member to a subscriber of their topic holding
    /// two or more fewer until no such move exists; with `move_sticky` false,
    /// partitions still with their previous owner stay put. Returns whether
    /// the result is balanced (always true with `move_sticky`).
    fn balance(&self, owner: &mut [u32], loads: &mut Loads, move_sticky: bool) -> bool {
        let (group, resolved, racks, topic_of) = (self.group, self.resolved, self.racks, &self.topic_of);
        let n = group.members.len();
        let mut start = vec![0u32; n + 1];
        let mut held = vec![0u32; owner.len()];
        loop {
            // Holdings per member in partition order, so a topic's partitions are adjacent.
            start.fill(0);
            for &o in owner.iter() {
                if o != NONE {
                    start[o as usize + 1] += 1;
                }
            }
            for i in 0..n {
                start[i + 1] += start[i];
            }
            let mut fill = start.clone();
            for (g, &o) in owner.iter().enumerate() {
                if o != NONE {
                    held[fill[o as usize] as usize] = g as u32;
                    fill[o as usize] += 1;
                }
            }
            let mut order: Vec<u32> = (0..n as u32).filter(|&m| loads.count[m as usize] > 1).collect();
            order.sort_by_key(|&m| std::cmp::Reverse(loads.count[m as usize]));
            let (mut moved, mut blocked) = (false, false);
            for &a in &order {
                let hold = &held[start[a as usize] as usize..start[a as usize + 1] as usize];
                for sticky_tier in [false, true] {
                    let mut i = 0;
                    while i < hold.len() {
                        let t = topic_of[hold[i] as usize];
                        let mut end = i + 1;
                        while end < hold.len() && topic_of[hold[end] as usize] == t {
                            end += 1;
                        }
                        for &g in &hold[i..end] {
                            if owner[g as usize] != a || (resolved.prev_owner[g as usize] == a) != sticky_tier
                            {
                                continue;
                            }
                            let ca = loads.count[a as usize];
                            let Some((min, least)) = loads.min_for(group, t) else { break };
                            if ca < min + 2 {
                                break;
                            }
                            if sticky_tier && !move_sticky {
                                blocked = true;
                                break;
                            }
                            let h = resolved.hint.get(g as usize).copied().unwrap_or(NONE);
                            let dest = if h != NONE && h != a && loads.count[h as usize] + 2 <= ca {
                                h
                            } else if let Some(r) = racks {
                                rack_preferred(group, r, &loads.count, t, g, Some(ca - 2), NONE)
                                    .unwrap_or(least)
                            } else {
                                least
                            };
                            owner[g as usize] = dest;
                            loads.add(a, -1);
                            loads.add(dest, 1);
                            moved = true;
                        }
                        i = end;
                    }
                }
            }
            if !moved {
                return !blocked;
            }
        }
    }
}

/// Rack mode: the least loaded subscriber of `t` holding at most `max_count`
/// partitions; among equally loaded ones, one with a replica of `g` on its
/// rack, then `previous` (the owner on the wrong rack), so balance always wins
/// and repeated rebalances do not shuffle partitions no member can align.
fn rack_preferred(
    group: &Group<'_>,
    racks: &Racks,
    count: &[u32],
    t: u32,
    g: u32,
    max_count: Option<u32>,
    previous: u32,
) -> Option<u32> {
    let mut best: Option<(u32, bool, bool, u32)> = None;
    for &c in group.topic_classes(t) {
        for &m in &group.class_members[c as usize] {
            let cm = count[m as usize];
            if max_count.is_some_and(|x| cm > x) {
                continue;
            }
            let miss = !racks.matches(m, g);
            let key = (cm, miss, m != previous, m);
            if best.is_none_or(|b| (key.0, key.1, key.2) < (b.0, b.1, b.2)) {
                best = Some(key);
            }
        }
    }
    best.map(|b| b.3)
}
