//! The integer-indexed view every assignor works on: topics interned and
//! sorted, partitions numbered globally, members grouped by subscription.
//!
//! Assignors never hash or compare strings in their inner loops: topic `t`
//! (rank in name order) owns the global partition indices
//! `start(t)..start(t) + len(t)`, members are input indices, and members with
//! the same set of existing subscribed topics share a subscription class.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;

use group_types::hash::{ClientMap, FastMap};
use group_types::{MemberSubscription, TopicPartition};

use crate::{AssignError, GroupAssignment, ReplicaRacks};

/// "No member" / "no partition" in index arrays.
pub(crate) const NONE: u32 = u32::MAX;

/// One topic of the metadata.
#[derive(Debug)]
pub(crate) struct Topic<'a> {
    /// The name, shared with every output entry (cloning an `Arc`, never a `String`).
    pub(crate) name: &'a Arc<str>,
    /// First global partition index.
    pub(crate) start: u32,
    /// Number of partitions.
    pub(crate) len: u32,
    /// Sorted partition numbers when they are not exactly `0..len`.
    numbers: Option<Vec<i32>>,
}

impl Topic<'_> {
    /// The partition number at `offset` within the topic.
    #[inline]
    pub(crate) fn number(&self, offset: u32) -> i32 {
        match &self.numbers {
            None => offset as i32,
            Some(n) => n[offset as usize],
        }
    }

    /// The offset of partition number `p`, if the topic has it.
    #[inline]
    fn offset_of(&self, p: i32) -> Option<u32> {
        match &self.numbers {
            None => (p >= 0 && (p as u32) < self.len).then_some(p as u32),
            Some(n) => n.binary_search(&p).ok().map(|i| i as u32),
        }
    }

    /// The output entry for offset `offset`.
    #[inline]
    pub(crate) fn partition(&self, offset: u32) -> TopicPartition {
        TopicPartition { topic: Arc::clone(self.name), partition: self.number(offset) }
    }
}

/// The cluster metadata, validated and indexed.
#[derive(Debug)]
pub(crate) struct Cluster<'a> {
    /// Topics sorted by name (byte-wise, which equals Java's order for BMP text).
    pub(crate) topics: Vec<Topic<'a>>,
    /// Name to topic id, built on first use: subscriptions listing topics in
    /// name order (the usual case) resolve without it, see [`Cluster::subscribed_ids`].
    index: OnceCell<ClientMap<&'a str, u32>>,
    /// Total partitions.
    pub(crate) total: u32,
}

/// One run of consecutive metadata entries of one topic.
struct Scan<'a> {
    name: &'a Arc<str>,
    len: u32,
    /// The run's partition numbers when they are not exactly `0..len`.
    numbers: Option<Vec<i32>>,
}

impl Scan<'_> {
    /// Appends `other` (a later run of the same topic).
    fn absorb(&mut self, other: Scan<'_>) {
        let n = self.numbers.get_or_insert_with(|| (0..self.len as i32).collect());
        match other.numbers {
            Some(o) => n.extend(o),
            None => n.extend(0..other.len as i32),
        }
        self.len += other.len;
    }
}

impl<'a> Cluster<'a> {
    /// Indexes `partitions`, rejecting negative numbers and duplicates.
    ///
    /// Metadata lists a topic's partitions together, usually with topics in
    /// name order: one pass cuts it into runs (comparing each entry's name with
    /// the previous one, by address first). Runs already in strictly ascending
    /// name order (one comparison each) are the topics; otherwise sorting the
    /// runs by name orders the topics and brings together the runs of a topic
    /// listed in pieces. No name is hashed here; the name index is built only
    /// if a lookup needs it.
    pub(crate) fn new(partitions: &'a [TopicPartition]) -> Result<Cluster<'a>, AssignError> {
        if partitions.len() >= NONE as usize {
            return Err(AssignError::TooManyPartitions { count: partitions.len() });
        }
        let mut scans: Vec<Scan<'a>> = Vec::new();
        let mut rest = partitions;
        while let Some(first) = rest.first() {
            let name = &first.topic;
            // The run is built in locals; the common entry (the next number of
            // a topic listed in order) costs two compares.
            let (mut len, mut numbers) = (0u32, None::<Vec<i32>>);
            let mut taken = 0;
            for tp in rest {
                if !(Arc::ptr_eq(name, &tp.topic) || **name == *tp.topic) {
                    break;
                }
                if tp.partition < 0 {
                    return Err(AssignError::NegativePartition { partition: tp.clone() });
                }
                match &mut numbers {
                    None if tp.partition as u32 == len => {}
                    None => {
                        let mut n: Vec<i32> = (0..len as i32).collect();
                        n.push(tp.partition);
                        numbers = Some(n);
                    }
                    Some(n) => n.push(tp.partition),
                }
                len += 1;
                taken += 1;
            }
            scans.push(Scan { name, len, numbers });
            rest = &rest[taken..];
        }
        // Strictly ascending runs are distinct topics already in order.
        let merged = if scans.windows(2).all(|w| w[0].name < w[1].name) {
            scans
        } else {
            scans.sort_unstable_by(|a, b| a.name.cmp(b.name));
            let mut merged: Vec<Scan<'a>> = Vec::with_capacity(scans.len());
            for s in scans {
                match merged.last_mut() {
                    Some(prev) if *prev.name == *s.name => prev.absorb(s),
                    _ => merged.push(s),
                }
            }
            merged
        };
        let mut topics = Vec::with_capacity(merged.len());
        let mut start = 0u32;
        for mut s in merged {
            if let Some(n) = &mut s.numbers {
                n.sort_unstable();
                if let Some(w) = n.windows(2).find(|w| w[0] == w[1]) {
                    return Err(AssignError::DuplicatePartition {
                        partition: TopicPartition::new(Arc::clone(s.name), w[0]),
                    });
                }
                if n.iter().enumerate().all(|(i, &p)| p == i as i32) {
                    s.numbers = None;
                }
            }
            topics.push(Topic { name: s.name, start, len: s.len, numbers: s.numbers });
            start += s.len;
        }
        Ok(Cluster { topics, index: OnceCell::new(), total: start })
    }

    /// The topic id of `name`, if it exists.
    #[inline]
    pub(crate) fn topic_id(&self, name: &str) -> Option<u32> {
        self.index
            .get_or_init(|| {
                let mut index = ClientMap::with_capacity_and_hasher(self.topics.len(), Default::default());
                for (t, topic) in self.topics.iter().enumerate() {
                    let name: &'a Arc<str> = topic.name;
                    index.insert(&**name, t as u32);
                }
                index
            })
            .get(name)
            .copied()
    }

    /// The sorted, deduplicated ids of the existing topics among `names`.
    /// Each name is first compared with the topic after the previous match (by
    /// address, then by content), so a list in name order, such as every
    /// topic of the cluster, resolves in one merge-like pass without hashing.
    pub(crate) fn subscribed_ids(&self, names: &[Arc<str>]) -> Vec<u32> {
        let mut ids = Vec::with_capacity(names.len().min(self.topics.len()));
        let mut next = 0usize;
        let mut sorted = true;
        for name in names {
            if let Some(topic) = self.topics.get(next)
                && (Arc::ptr_eq(topic.name, name) || **topic.name == **name)
            {
                ids.push(next as u32);
                next += 1;
            } else if let Some(t) = self.topic_id(name) {
                sorted &= ids.last().is_none_or(|&l| l < t);
                ids.push(t);
                next = t as usize + 1;
            }
        }
        if !sorted {
            ids.sort_unstable();
            ids.dedup();
        }
        ids
    }

    /// Resolves a list of partitions to global indices, dropping unknown ones.
    /// Names are looked up by address first: claims usually share the `Arc`s of
    /// an earlier assignment, and equal addresses mean equal names.
    pub(crate) fn resolve<'p>(
        &self,
        cache: &mut AddressCache,
        partitions: impl IntoIterator<Item = (&'p str, i32)>,
        mut f: impl FnMut(u32),
    ) {
        for (name, p) in partitions {
            let key = (name.as_ptr() as usize, name.len());
            let slot = (key.0 >> 4 ^ key.0 >> 14) & (ADDRESS_CACHE - 1);
            let t = match cache.slots[slot] {
                (addr, len, t) if (addr, len) == key => t,
                _ => {
                    let t = self.topic_id(name).unwrap_or(NONE);
                    cache.slots[slot] = (key.0, key.1, t);
                    t
                }
            };
            if t != NONE {
                let topic = &self.topics[t as usize];
                if let Some(o) = topic.offset_of(p) {
                    f(topic.start + o);
                }
            }
        }
    }
}

/// Slots of an [`AddressCache`] (a power of two).
const ADDRESS_CACHE: usize = 1024;

/// A direct-mapped cache from a name's address and length to its topic id,
/// valid while the names it saw are borrowed (one assignment call).
#[derive(Debug)]
pub(crate) struct AddressCache {
    slots: Vec<(usize, usize, u32)>,
}

impl AddressCache {
    /// An empty cache.
    pub(crate) fn new() -> AddressCache {
        AddressCache { slots: vec![(0, usize::MAX, NONE); ADDRESS_CACHE] }
    }
}

/// The members, validated and grouped by subscription class.
#[derive(Debug)]
pub(crate) struct Group<'a> {
    pub(crate) members: &'a [MemberSubscription],
    /// Member indices sorted by member id.
    pub(crate) by_id: Vec<u32>,
    /// Subscription class of each member.
    pub(crate) class_of: Vec<u32>,
    /// Sorted existing topic ids of each class.
    pub(crate) class_topics: Vec<Vec<u32>>,
    /// Members of each class, in member-id order.
    pub(crate) class_members: Vec<Vec<u32>>,
    /// Bitset of each class's topics, `words` u64 per class.
    bits: Vec<u64>,
    words: usize,
    /// CSR of the classes subscribing to each topic.
    topic_class_start: Vec<u32>,
    topic_class_list: Vec<u32>,
}

/// Whether two subscriptions list the same topics in the same order. Lists
/// cloned from one source share their `Arc`s, so a branch-free pass over the
/// pointers, chunk by chunk, settles the common case; names are compared only
/// where pointers differ.
fn same_topics(a: &[Arc<str>], b: &[Arc<str>]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    for (ca, cb) in a.chunks(64).zip(b.chunks(64)) {
        let same_ptr = ca
            .iter()
            .zip(cb)
            .fold(true, |acc, (x, y)| acc & std::ptr::addr_eq(Arc::as_ptr(x), Arc::as_ptr(y)));
        if !same_ptr && !ca.iter().zip(cb).all(|(x, y)| **x == **y) {
            return false;
        }
    }
    true
}

/// Subscriptions recently interned, compared by content before hashing.
const RECENT: usize = 8;

impl<'a> Group<'a> {
    /// Validates member ids and interns subscriptions against `cluster`.
    pub(crate) fn new(
        members: &'a [MemberSubscription],
        cluster: &Cluster<'_>,
    ) -> Result<Group<'a>, AssignError> {
        let mut by_id: Vec<u32> = (0..members.len() as u32).collect();
        by_id.sort_unstable_by(|&a, &b| members[a as usize].member_id.cmp(&members[b as usize].member_id));
        if let Some(w) =
            by_id.windows(2).find(|w| members[w[0] as usize].member_id == members[w[1] as usize].member_id)
        {
            return Err(AssignError::DuplicateMember { member_id: members[w[0] as usize].member_id.clone() });
        }
        let mut class_of = vec![0u32; members.len()];
        let mut class_topics: Vec<Vec<u32>> = Vec::new();
        let mut lookup: FastMap<Vec<u32>, u32> = FastMap::default();
        // Members sharing one topic list (`MemberSubscription::with_shared_topics`,
        // as a server interning subscriptions builds them) are grouped by the
        // list's address: O(1) per member however many topics it names.
        let mut shared: FastMap<(usize, usize), u32> = FastMap::default();
        // Members with identical but separately built lists (the usual case for
        // a client-side leader, and cyclic patterns of a few lists) reuse a
        // recent member's class without hashing any name.
        let mut recent: Vec<usize> = Vec::with_capacity(RECENT);
        for (i, m) in members.iter().enumerate() {
            let key = (m.topics.as_ptr() as usize, m.topics.len());
            if let Some(&c) = shared.get(&key) {
                class_of[i] = c;
                continue;
            }
            if let Some(k) = recent.iter().position(|&p| same_topics(&members[p].topics, &m.topics)) {
                let p = recent[k];
                class_of[i] = class_of[p];
                shared.insert(key, class_of[p]);
                recent[..=k].rotate_right(1);
                continue;
            }
            let ids = cluster.subscribed_ids(&m.topics);
            let next = class_topics.len() as u32;
            let c = *lookup.entry(ids).or_insert_with_key(|ids| {
                class_topics.push(ids.clone());
                next
            });
            class_of[i] = c;
            shared.insert(key, c);
            if recent.len() == RECENT {
                recent.pop();
            }
            recent.insert(0, i);
        }
        let mut class_members = vec![Vec::new(); class_topics.len()];
        for &m in &by_id {
            class_members[class_of[m as usize] as usize].push(m);
        }
        let nt = cluster.topics.len();
        let words = nt.div_ceil(64).max(1);
        let mut bits = vec![0u64; words * class_topics.len()];
        let mut topic_class_start = vec![0u32; nt + 1];
        for (c, ts) in class_topics.iter().enumerate() {
            for &t in ts {
                bits[c * words + (t as usize >> 6)] |= 1 << (t & 63);
                topic_class_start[t as usize + 1] += 1;
            }
        }
        for t in 0..nt {
            topic_class_start[t + 1] += topic_class_start[t];
        }
        let mut fill = topic_class_start.clone();
        let mut topic_class_list = vec![0u32; topic_class_start[nt] as usize];
        for (c, ts) in class_topics.iter().enumerate() {
            for &t in ts {
                topic_class_list[fill[t as usize] as usize] = c as u32;
                fill[t as usize] += 1;
            }
        }
        Ok(Group {
            members,
            by_id,
            class_of,
            class_topics,
            class_members,
            bits,
            words,
            topic_class_start,
            topic_class_list,
        })
    }

    /// Whether member `m` subscribes to (existing) topic `t`.
    #[inline]
    pub(crate) fn subscribes(&self, m: u32, t: u32) -> bool {
        let c = self.class_of[m as usize] as usize;
        self.bits[c * self.words + (t as usize >> 6)] & (1 << (t & 63)) != 0
    }

    /// The classes subscribing to topic `t`, ascending.
    #[inline]
    pub(crate) fn topic_classes(&self, t: u32) -> &[u32] {
        &self.topic_class_list
            [self.topic_class_start[t as usize] as usize..self.topic_class_start[t as usize + 1] as usize]
    }

    /// Number of members subscribing to topic `t`.
    pub(crate) fn subscriber_count(&self, t: u32) -> usize {
        self.topic_classes(t).iter().map(|&c| self.class_members[c as usize].len()).sum()
    }

    /// Member indices in Kafka's `MemberInfo` order: static members first by
    /// instance id, then dynamic members by member id.
    pub(crate) fn kafka_order(&self) -> Vec<u32> {
        let ms = self.members;
        let mut order = self.by_id.clone();
        order.sort_by(|&a, &b| {
            let (a, b) = (&ms[a as usize], &ms[b as usize]);
            match (&a.group_instance_id, &b.group_instance_id) {
                (Some(x), Some(y)) => x.cmp(y).then_with(|| a.member_id.cmp(&b.member_id)),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => a.member_id.cmp(&b.member_id),
            }
        });
        order
    }

    /// For every topic, the index of its subscriber list in the returned
    /// lists; each list holds the subscribers in `order`. Topics with the same
    /// subscribing classes share one list, so this is cheap for large groups.
    pub(crate) fn subscriber_lists(&self, order: &[u32], nt: usize) -> (Vec<u32>, Vec<Vec<u32>>) {
        let mut lists: Vec<Vec<u32>> = Vec::new();
        let mut seen: FastMap<&[u32], u32> = FastMap::default();
        let mut of_topic = Vec::with_capacity(nt);
        let mut in_set = vec![false; self.class_topics.len()];
        let mut prev: Option<(&[u32], u32)> = None;
        for t in 0..nt as u32 {
            let cs = self.topic_classes(t);
            // Neighbouring topics usually have the same subscribers: skip the hash.
            if let Some((p, id)) = prev
                && p == cs
            {
                of_topic.push(id);
                continue;
            }
            let id = *seen.entry(cs).or_insert_with(|| {
                for &c in cs {
                    in_set[c as usize] = true;
                }
                let list: Vec<u32> =
                    order.iter().copied().filter(|&m| in_set[self.class_of[m as usize] as usize]).collect();
                for &c in cs {
                    in_set[c as usize] = false;
                }
                lists.push(list);
                (lists.len() - 1) as u32
            });
            prev = Some((cs, id));
            of_topic.push(id);
        }
        (of_topic, lists)
    }
}

/// Turns per-member lists (indexed like `members`) into the output map.
pub(crate) fn into_assignment(
    members: &[MemberSubscription],
    lists: Vec<Vec<TopicPartition>>,
) -> GroupAssignment {
    members.iter().map(|m| m.member_id.clone()).zip(lists).collect()
}

/// Every member's partitions as `(topic, offset)` pairs, one contiguous slice
/// per member (sized up front from the counts), filled in partition order.
///
/// The output is then written member by member: its 24-byte entries go out
/// sequentially instead of being scattered over every member's list, which
/// with a thousand members costs a cache miss per entry.
#[derive(Debug)]
pub(crate) struct Holdings {
    start: Vec<u32>,
    fill: Vec<u32>,
    held: Vec<(u32, u32)>,
}

impl Holdings {
    /// Room for `counts[m]` partitions for each member `m`.
    pub(crate) fn new(counts: &[u32]) -> Holdings {
        let mut start = Vec::with_capacity(counts.len() + 1);
        let mut sum = 0u32;
        start.push(0);
        for &c in counts {
            sum += c;
            start.push(sum);
        }
        let fill = start[..counts.len()].to_vec();
        Holdings { start, fill, held: vec![(0, 0); sum as usize] }
    }

    /// Gives member `m` the partition at `offset` of topic `t`; each member's
    /// pushes must come in `(topic, offset)` order, at most its count.
    #[inline]
    pub(crate) fn push(&mut self, m: u32, t: u32, offset: u32) {
        let f = &mut self.fill[m as usize];
        self.held[*f as usize] = (t, offset);
        *f += 1;
    }

    /// The output map.
    pub(crate) fn into_assignment(self, cluster: &Cluster<'_>, group: &Group<'_>) -> GroupAssignment {
        let lists = self
            .start
            .windows(2)
            .map(|w| {
                self.held[w[0] as usize..w[1] as usize]
                    .iter()
                    .map(|&(t, o)| cluster.topics[t as usize].partition(o))
                    .collect()
            })
            .collect();
        into_assignment(group.members, lists)
    }
}

/// Builds the output from a per-partition owner array (`NONE` = unassigned).
pub(crate) fn assignment_from_owners(
    cluster: &Cluster<'_>,
    group: &Group<'_>,
    owner: &[u32],
) -> GroupAssignment {
    let mut counts = vec![0u32; group.members.len()];
    for &o in owner {
        if o != NONE {
            counts[o as usize] += 1;
        }
    }
    let mut holdings = Holdings::new(&counts);
    for (t, topic) in cluster.topics.iter().enumerate() {
        let base = topic.start as usize;
        for (o, &m) in owner[base..base + topic.len as usize].iter().enumerate() {
            if m != NONE {
                holdings.push(m, t as u32, o as u32);
            }
        }
    }
    holdings.into_assignment(cluster, group)
}

/// Rack information interned to integers.
#[derive(Debug)]
pub(crate) struct Racks {
    /// Rack of each member (`NONE` = no rack).
    pub(crate) member: Vec<u32>,
    /// CSR of the sorted rack ids of each global partition.
    part_start: Vec<u32>,
    part_list: Vec<u32>,
    /// Number of distinct racks.
    pub(crate) count: usize,
}

impl Racks {
    /// Interns member racks and, if given, partition replica racks.
    pub(crate) fn new(
        cluster: &Cluster<'_>,
        members: &[MemberSubscription],
        partitions: &[TopicPartition],
        replica_racks: &[ReplicaRacks],
    ) -> Racks {
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut intern = |r: &str| {
            let next = ids.len() as u32;
            *ids.entry(r.to_owned()).or_insert(next)
        };
        let member: Vec<u32> = members
            .iter()
            .map(|m| match m.rack_id.as_deref() {
                Some(r) if !r.is_empty() => intern(r),
                _ => NONE,
            })
            .collect();
        let total = cluster.total as usize;
        let mut per: Vec<Vec<u32>> = vec![Vec::new(); if replica_racks.is_empty() { 0 } else { total }];
        if !replica_racks.is_empty() {
            let mut cache = AddressCache::new();
            for (tp, racks) in partitions.iter().zip(replica_racks) {
                let mut g = NONE;
                cluster.resolve(&mut cache, [(&*tp.topic, tp.partition)], |x| g = x);
                let mut v: Vec<u32> = racks.iter().filter(|r| !r.is_empty()).map(|r| intern(r)).collect();
                v.sort_unstable();
                v.dedup();
                per[g as usize] = v;
            }
        }
        let count = ids.len();
        let mut part_start = Vec::with_capacity(per.len() + 1);
        let mut part_list = Vec::new();
        part_start.push(0);
        for v in per {
            part_list.extend(v);
            part_start.push(part_list.len() as u32);
        }
        Racks { member, part_start, part_list, count }
    }

    /// Racks of global partition `g` (empty when unknown).
    #[inline]
    pub(crate) fn of_partition(&self, g: u32) -> &[u32] {
        if self.part_start.len() <= 1 {
            return &[];
        }
        &self.part_list[self.part_start[g as usize] as usize..self.part_start[g as usize + 1] as usize]
    }

    /// KIP-881 match: a member without a rack matches everything.
    #[inline]
    pub(crate) fn matches(&self, m: u32, g: u32) -> bool {
        let r = self.member[m as usize];
        r == NONE || self.of_partition(g).binary_search(&r).is_ok()
    }

    /// `AbstractPartitionAssignor.useRackAwareAssignment` over `members` and the
    /// partitions `parts`: some member has a rack, member racks meet replica
    /// racks, and not every partition has the same rack set.
    pub(crate) fn use_rack_aware(
        &self,
        members: impl Iterator<Item = u32>,
        parts: impl Iterator<Item = u32> + Clone,
    ) -> bool {
        let mut consumer = vec![false; self.count];
        let mut any = false;
        for m in members {
            let r = self.member[m as usize];
            if r != NONE {
                consumer[r as usize] = true;
                any = true;
            }
        }
        if !any {
            return false;
        }
        let mut union = vec![false; self.count];
        for g in parts.clone() {
            for &r in self.of_partition(g) {
                union[r as usize] = true;
            }
        }
        if !consumer.iter().zip(&union).any(|(c, u)| *c && *u) {
            return false;
        }
        let union_len = union.iter().filter(|u| **u).count();
        parts.into_iter().any(|g| self.of_partition(g).len() != union_len)
    }
}
