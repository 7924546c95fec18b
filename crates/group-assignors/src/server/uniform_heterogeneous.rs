//! The uniform assignor for a group whose members subscribe differently:
//! Kafka's `UniformHeterogeneousAssignmentBuilder` as reworked for 4.0
//! (KAFKA-17710, §5.5).
//!
//! 1. Every member keeps its current partitions of topics it still subscribes to.
//! 2. The free partitions are dealt out topic by topic (most partitions per
//!    subscriber first), each to the subscriber with the fewest partitions in
//!    total, ties to the lowest member index.
//! 3. Balancing passes: per topic, while the most loaded subscriber holding one
//!    of its partitions has two more than the least loaded subscriber, the
//!    former's highest-numbered partition of the topic moves to the latter.
//!    The passes stop after a whole round of topics without a move, or after
//!    16 rounds (`MAX_ITERATION_COUNT`).
//!
//! Loads are one array over members; heaps hold `(load, member)` packed into a
//! `u64`, so every choice is a few integer comparisons.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::index::{self, Csr, NONE, Subscriptions};
use super::{MemberSpec, TargetAssignment};

/// Kafka's `MAX_ITERATION_COUNT`: rounds over the topics in the balancing phase.
const MAX_ROUNDS: usize = 16;

/// A heap key: by load, then by member index.
fn key(load: u32, member: u32) -> u64 {
    (u64::from(load) << 32) | u64::from(member)
}

fn member_of(key: u64) -> usize {
    key as u32 as usize
}

fn load_of(key: u64) -> u32 {
    (key >> 32) as u32
}

/// The targets of `members` under their resolved subscriptions `subs`.
pub(super) fn assign(members: &[MemberSpec<'_>], subs: &Subscriptions) -> TargetAssignment {
    let n = members.len();
    let topics = &subs.topics;
    if n == 0 || topics.total() == 0 {
        return index::empty_targets(n);
    }
    let mut owner = vec![NONE; topics.total() as usize];
    let mut load = vec![0u32; n];

    for (m, member) in members.iter().enumerate() {
        let mine = subs.of_member(m);
        for (topic, partitions) in &member.current.topics {
            let Some(t) = topics.find(*topic) else { continue };
            if mine.binary_search(&(t as u32)).is_err() {
                continue;
            }
            for &p in partitions {
                if let Some(g) = topics.global(t, p)
                    && owner[g as usize] == NONE
                {
                    owner[g as usize] = m as u32;
                    load[m] += 1;
                }
            }
        }
    }

    let subscribers = subs.subscribers(0..n);
    let mut order: Vec<usize> = (0..topics.len()).filter(|&t| !subscribers.of(t).is_empty()).collect();
    order.sort_unstable_by(|&a, &b| {
        let (ca, sa) = (u64::from(topics.count(a)), subscribers.of(a).len() as u64);
        let (cb, sb) = (u64::from(topics.count(b)), subscribers.of(b).len() as u64);
        // Partitions per subscriber descending (compared as fractions), then
        // fewer subscribers first, then topic id (the index follows id order).
        (cb * sa).cmp(&(ca * sb)).then(sa.cmp(&sb)).then(a.cmp(&b))
    });

    let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    for &t in &order {
        let range = topics.bases[t] as usize..topics.bases[t + 1] as usize;
        if !owner[range.clone()].contains(&NONE) {
            continue;
        }
        heap.clear();
        heap.extend(subscribers.of(t).iter().map(|&m| Reverse(key(load[m as usize], m))));
        for slot in &mut owner[range] {
            if *slot != NONE {
                continue;
            }
            let Some(mut top) = heap.peek_mut() else { break };
            let m = member_of(top.0);
            *slot = m as u32;
            load[m] += 1;
            *top = Reverse(key(load[m], m as u32));
        }
    }

    let movable: Vec<usize> = order.into_iter().filter(|&t| subscribers.of(t).len() >= 2).collect();
    if !movable.is_empty() {
        Balancer::new(n).run(&movable, &subscribers, subs, &mut owner, &mut load);
    }
    index::targets_from_owners(&owner, n, topics)
}

/// Scratch space of the balancing phase, reused across topics.
struct Balancer {
    /// The topic's partitions as `(owner, partition)` keys, grouped by owner.
    held: Vec<u64>,
    /// `held[start[m]..end[m]]`: what member `m` can still give up of the topic.
    start: Vec<u32>,
    end: Vec<u32>,
    /// Subscribers by `(load, index)`, least first; entries whose load is
    /// stale are skipped when they surface.
    receivers: BinaryHeap<Reverse<u64>>,
    /// Subscribers with something to give, by `(load, index)`, most first.
    donors: BinaryHeap<u64>,
}

impl Balancer {
    fn new(members: usize) -> Balancer {
        Balancer {
            held: Vec::new(),
            start: vec![0; members],
            end: vec![0; members],
            receivers: BinaryHeap::new(),
            donors: BinaryHeap::new(),
        }
    }

    fn run(
        &mut self,
        movable: &[usize],
        subscribers: &Csr,
        subs: &Subscriptions,
        owner: &mut [u32],
        load: &mut [u32],
    ) {
        // The round ends early, as in Kafka's `balanceTopics`, when it comes back
        // to the last topic that moved (or to the first topic) with nothing moved since.
        let mut last: Option<usize> = None;
        for _ in 0..MAX_ROUNDS {
            for (i, &t) in movable.iter().enumerate() {
                if last == Some(i) {
                    return;
                }
                let moved = self.topic(t, subscribers.of(t), subs, owner, load);
                if moved > 0 || last.is_none() {
                    last = Some(i);
                }
            }
        }
    }

    /// Balances topic `t` over its subscribers `subs_t`; returns how many partitions moved.
    fn topic(
        &mut self,
        t: usize,
        subs_t: &[u32],
        subs: &Subscriptions,
        owner: &mut [u32],
        load: &mut [u32],
    ) -> usize {
        let (mut lo, mut hi) = (u32::MAX, 0);
        for &m in subs_t {
            lo = lo.min(load[m as usize]);
            hi = hi.max(load[m as usize]);
        }
        if hi - lo <= 1 {
            return 0;
        }

        let base = subs.topics.bases[t];
        let owned = &mut owner[base as usize..subs.topics.bases[t + 1] as usize];
        self.held.clear();
        self.held.extend(
            owned
                .iter()
                .enumerate()
                .filter(|&(_, &m)| m != NONE)
                .map(|(p, &m)| (u64::from(m) << 32) | p as u64),
        );
        self.held.sort_unstable();
        for (i, &h) in self.held.iter().enumerate() {
            let m = (h >> 32) as usize;
            if i == 0 || (self.held[i - 1] >> 32) as usize != m {
                self.start[m] = i as u32;
            }
            self.end[m] = i as u32 + 1;
        }

        self.receivers.clear();
        self.receivers.extend(subs_t.iter().map(|&m| Reverse(key(load[m as usize], m))));
        self.donors.clear();
        let (start, end) = (&self.start, &self.end);
        self.donors.extend(
            subs_t
                .iter()
                .filter(|&&m| end[m as usize] > start[m as usize])
                .map(|&m| key(load[m as usize], m)),
        );

        let mut moved = 0;
        while let Some(d) = self.pop_donor(load) {
            let Some(r) = self.peek_receiver(load) else { break };
            // Moving between loads one apart only swaps them: balanced enough.
            if load[d] <= load[r] + 1 {
                break;
            }
            self.end[d] -= 1;
            let p = self.held[self.end[d] as usize] as u32 as usize;
            owned[p] = r as u32;
            load[d] -= 1;
            load[r] += 1;
            moved += 1;
            self.receivers.pop();
            self.receivers.push(Reverse(key(load[r], r as u32)));
            self.receivers.push(Reverse(key(load[d], d as u32)));
            if self.has(d) {
                self.donors.push(key(load[d], d as u32));
            }
            if self.has(r) {
                // Only the partitions `r` held before this topic's round can go;
                // its load changed, so its donor entry is renewed.
                self.donors.push(key(load[r], r as u32));
            }
        }

        for &m in subs_t {
            self.start[m as usize] = 0;
            self.end[m as usize] = 0;
        }
        moved
    }

    fn has(&self, m: usize) -> bool {
        self.end[m] > self.start[m]
    }

    /// Pops the most loaded member that can give a partition up.
    fn pop_donor(&mut self, load: &[u32]) -> Option<usize> {
        while let Some(k) = self.donors.pop() {
            let m = member_of(k);
            if load_of(k) == load[m] && self.has(m) {
                return Some(m);
            }
        }
        None
    }

    /// The least loaded subscriber, left on the heap.
    fn peek_receiver(&mut self, load: &[u32]) -> Option<usize> {
        while let Some(&Reverse(k)) = self.receivers.peek() {
            let m = member_of(k);
            if load_of(k) == load[m] {
                return Some(m);
            }
            self.receivers.pop();
        }
        None
    }
}
