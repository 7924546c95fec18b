//! Dense numbering shared by the server assignors: topics become indices
//! `0..T` in id order, partitions become indices `0..P` (topic by topic), and
//! members keep their index in the spec. The assignors then work on integer
//! arrays (an owner per partition, a load per member) and hash nothing.

use group_types::TopicId;

use super::{MemberSpec, MemberTarget, ServerAssignError, SubscribedTopicDescriber, TargetAssignment};

/// "No member" in an owner array (member indices are below it).
pub(super) const NONE: u32 = u32::MAX;

/// The refusal of assignor `assignor`.
pub(super) fn error(assignor: &str, message: impl Into<String>) -> ServerAssignError {
    ServerAssignError { assignor: assignor.to_owned(), message: message.into() }
}

/// The topics an assignment covers: subscribed, known to the describer and
/// with at least one partition, in ascending id order.
#[derive(Debug, Default)]
pub(super) struct Topics {
    /// The ids, ascending.
    pub(super) ids: Vec<TopicId>,
    /// The same ids as numbers (big-endian, so the order is the same), which
    /// compare in two instructions where the binary searches need them.
    keys: Vec<u128>,
    /// `bases[t]..bases[t + 1]` are topic `t`'s global partition indices.
    pub(super) bases: Vec<u32>,
}

impl Topics {
    /// The topics among `sorted` (strictly ascending keys) that the describer
    /// knows and that have partitions.
    pub(super) fn resolve(
        sorted: &[u128],
        describer: &dyn SubscribedTopicDescriber,
        assignor: &str,
    ) -> Result<Topics, ServerAssignError> {
        let mut topics = Topics {
            ids: Vec::with_capacity(sorted.len()),
            keys: Vec::with_capacity(sorted.len()),
            bases: Vec::with_capacity(sorted.len() + 1),
        };
        topics.bases.push(0);
        let mut total = 0u64;
        for &key in sorted {
            let id = TopicId::from_u128(key);
            let Some(count) = describer.partition_count(id) else { continue };
            if count == 0 {
                continue;
            }
            if count > i32::MAX as u32 {
                return Err(error(
                    assignor,
                    format!("topic {id} has {count} partitions, more than an i32 partition index can number"),
                ));
            }
            total += u64::from(count);
            // NONE must stay free as a sentinel, so global indices end below it.
            if total >= u64::from(NONE) {
                return Err(error(
                    assignor,
                    format!("the subscribed topics have more than {} partitions", NONE - 1),
                ));
            }
            topics.ids.push(id);
            topics.keys.push(key);
            topics.bases.push(total as u32);
        }
        Ok(topics)
    }

    /// How many topics.
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// How many partitions in all.
    pub(super) fn total(&self) -> u32 {
        self.bases[self.bases.len() - 1]
    }

    /// Topic `t`'s partition count.
    pub(super) fn count(&self, t: usize) -> u32 {
        self.bases[t + 1] - self.bases[t]
    }

    /// The index of topic `id`, if covered.
    pub(super) fn find(&self, id: TopicId) -> Option<usize> {
        self.keys.binary_search(&id.as_u128()).ok()
    }

    /// The global index of partition `p` of topic `t`, if `p` exists.
    pub(super) fn global(&self, t: usize, p: i32) -> Option<u32> {
        let p = u32::try_from(p).ok()?;
        (p < self.count(t)).then(|| self.bases[t] + p)
    }

    /// Topic indices (ascending) of the keys in `sorted` (ascending) that are covered.
    fn indices_of(&self, sorted: &[u128], out: &mut Vec<u32>) {
        let mut from = 0;
        for key in sorted {
            // Both lists ascend, so each search starts where the last one ended.
            let rest = &self.keys[from..];
            let at = rest.partition_point(|k| k < key);
            if rest.get(at) == Some(key) {
                out.push((from + at) as u32);
            }
            from += at;
        }
    }
}

/// `list` as strictly ascending keys; sorted here only when the caller did not
/// honour [`MemberSpec::subscribed_topics`]' contract (ascending, no duplicates).
fn sorted_keys(list: &[TopicId]) -> Vec<u128> {
    let mut keys: Vec<u128> = list.iter().map(|t| t.as_u128()).collect();
    if !keys.windows(2).all(|w| w[0] < w[1]) {
        keys.sort_unstable();
        keys.dedup();
    }
    keys
}

/// The covered topics of a single subscription list (a homogeneous group).
pub(super) fn topics_of(
    list: &[TopicId],
    describer: &dyn SubscribedTopicDescriber,
    assignor: &str,
) -> Result<Topics, ServerAssignError> {
    Topics::resolve(&sorted_keys(list), describer, assignor)
}

/// Whether every member subscribes to the first member's topics. Lists at
/// the same address are equal without a look at their contents, so a
/// coordinator that interns subscriptions pays nothing here.
pub(super) fn same_subscriptions(members: &[MemberSpec<'_>]) -> bool {
    let Some(first) = members.first() else { return true };
    let first = first.subscribed_topics;
    members.iter().all(|m| {
        let s = m.subscribed_topics;
        (s.as_ptr() == first.as_ptr() && s.len() == first.len()) || s == first
    })
}

/// Every member's subscribed topics as topic indices. Members whose lists sit
/// at the same address share one class and are resolved once; so do runs of
/// equal lists at neighbouring addresses.
#[derive(Debug)]
pub(super) struct Subscriptions {
    /// The covered topics: the union of all subscriptions.
    pub(super) topics: Topics,
    /// Each member's class.
    class_of: Vec<u32>,
    /// How many members each class has.
    class_size: Vec<u32>,
    /// `class_topics[class_start[c]..class_start[c + 1]]`: class `c`'s topic indices, ascending.
    class_start: Vec<u32>,
    class_topics: Vec<u32>,
}

impl Subscriptions {
    /// Resolves every member's subscription against the describer.
    pub(super) fn new(
        members: &[MemberSpec<'_>],
        describer: &dyn SubscribedTopicDescriber,
        assignor: &str,
    ) -> Result<Subscriptions, ServerAssignError> {
        let addr = |m: usize| {
            let s = members[m].subscribed_topics;
            (s.as_ptr() as usize, s.len())
        };
        let mut by_addr: Vec<usize> = (0..members.len()).collect();
        by_addr.sort_unstable_by_key(|&m| addr(m));
        let mut class_of = vec![0u32; members.len()];
        let mut class_size: Vec<u32> = Vec::new();
        let mut lists: Vec<Vec<u128>> = Vec::new();
        // `run` is the first member of the current run of one address. A list at
        // a new address that equals the previous run's joins its class, so
        // unshared but equal lists are resolved once.
        let mut run: Option<usize> = None;
        for &m in &by_addr {
            if run.is_none_or(|r| addr(r) != addr(m)) {
                let list = members[m].subscribed_topics;
                if run.is_none_or(|r| members[r].subscribed_topics != list) {
                    lists.push(sorted_keys(list));
                    class_size.push(0);
                }
                run = Some(m);
            }
            class_of[m] = (lists.len() - 1) as u32;
            *class_size.last_mut().expect("pushed above") += 1;
        }

        let mut union: Vec<u128> = Vec::new();
        for list in &lists {
            union = union_of(union, list);
        }
        let topics = Topics::resolve(&union, describer, assignor)?;

        let mut class_start = Vec::with_capacity(lists.len() + 1);
        let mut class_topics = Vec::new();
        class_start.push(0);
        for list in &lists {
            topics.indices_of(list, &mut class_topics);
            class_start.push(class_topics.len() as u32);
        }
        Ok(Subscriptions { topics, class_of, class_size, class_start, class_topics })
    }

    /// How many classes (one per distinct subscription list, or more).
    pub(super) fn classes(&self) -> usize {
        self.class_size.len()
    }

    /// Member `m`'s topic indices, ascending.
    pub(super) fn of_member(&self, m: usize) -> &[u32] {
        self.of_class(self.class_of[m] as usize)
    }

    fn of_class(&self, c: usize) -> &[u32] {
        &self.class_topics[self.class_start[c] as usize..self.class_start[c + 1] as usize]
    }

    /// How many members subscribe to each topic.
    pub(super) fn subscriber_counts(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.topics.len()];
        for (c, &size) in self.class_size.iter().enumerate() {
            for &t in self.of_class(c) {
                counts[t as usize] += size;
            }
        }
        counts
    }

    /// Each topic's subscribers, in the order of `members` (member indices).
    pub(super) fn subscribers(&self, members: impl Iterator<Item = usize> + Clone) -> Csr {
        let counts = self.subscriber_counts();
        let mut start = Vec::with_capacity(counts.len() + 1);
        start.push(0u32);
        let mut sum = 0;
        for &c in &counts {
            sum += c;
            start.push(sum);
        }
        let mut fill: Vec<u32> = start[..counts.len()].to_vec();
        let mut items = vec![0u32; sum as usize];
        for m in members {
            for &t in self.of_member(m) {
                let at = &mut fill[t as usize];
                items[*at as usize] = m as u32;
                *at += 1;
            }
        }
        Csr { start, items }
    }
}

/// The union of two ascending key lists.
fn union_of(acc: Vec<u128>, list: &[u128]) -> Vec<u128> {
    if acc.is_empty() {
        return list.to_vec();
    }
    // Most lists add nothing new: check that first, searching instead of merging.
    let mut from = 0;
    let subset = list.iter().all(|key| {
        let at = acc[from..].partition_point(|k| k < key);
        from += at;
        acc.get(from) == Some(key)
    });
    if subset {
        return acc;
    }
    let mut out = Vec::with_capacity(acc.len() + list.len());
    let (mut i, mut j) = (0, 0);
    while i < acc.len() && j < list.len() {
        match acc[i].cmp(&list[j]) {
            std::cmp::Ordering::Less => {
                out.push(acc[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(list[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(acc[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&acc[i..]);
    out.extend_from_slice(&list[j..]);
    out
}

/// Lists of member indices, one per topic, stored back to back.
#[derive(Debug)]
pub(super) struct Csr {
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Csr {
    /// Topic `t`'s list.
    pub(super) fn of(&self, t: usize) -> &[u32] {
        &self.items[self.start[t] as usize..self.start[t + 1] as usize]
    }
}

/// Each member's target from an owner per global partition index ([`NONE`]
/// for unassigned), written once with exact capacities. A run is what one
/// member holds of one topic; the first pass finds the runs in topic order and
/// counts them, the second fills them, and the runs then go to their members,
/// which keeps every member's topics in id order without searching.
pub(super) fn targets_from_owners(owner: &[u32], members: usize, topics: &Topics) -> TargetAssignment {
    // Per member: the topic of its latest run and that run's index.
    let mut seen_in = vec![NONE; members];
    let mut run_of = vec![0usize; members];
    let mut runs_per_member = vec![0u32; members];
    // (member, topic, length), in topic order.
    let mut runs: Vec<(u32, u32, u32)> = Vec::new();
    for t in 0..topics.len() {
        let owned = &owner[topics.bases[t] as usize..topics.bases[t + 1] as usize];
        for (_, m, len) in stretches(owned) {
            let m = m as usize;
            if seen_in[m] != t as u32 {
                seen_in[m] = t as u32;
                run_of[m] = runs.len();
                runs.push((m as u32, t as u32, 0));
                runs_per_member[m] += 1;
            }
            runs[run_of[m]].2 += len as u32;
        }
    }

    let mut lists: Vec<Vec<i32>> = runs.iter().map(|&(_, _, len)| Vec::with_capacity(len as usize)).collect();
    seen_in.fill(NONE);
    let mut next = 0;
    for t in 0..topics.len() {
        let owned = &owner[topics.bases[t] as usize..topics.bases[t + 1] as usize];
        for (p, m, len) in stretches(owned) {
            let m = m as usize;
            // The runs come up in the first pass's order, so they are numbered again.
            if seen_in[m] != t as u32 {
                seen_in[m] = t as u32;
                run_of[m] = next;
                next += 1;
            }
            lists[run_of[m]].extend(p as i32..(p + len) as i32);
        }
    }

    let mut out: Vec<Vec<(TopicId, Vec<i32>)>> =
        runs_per_member.iter().map(|&n| Vec::with_capacity(n as usize)).collect();
    for (&(m, t, _), list) in runs.iter().zip(lists) {
        out[m as usize].push((topics.ids[t as usize], list));
    }
    TargetAssignment { members: out.into_iter().map(|topics| MemberTarget { topics }).collect() }
}

/// The stretches of equal, assigned owners in `owned`: (first partition,
/// owner, length). Fresh and sticky homogeneous targets are long stretches,
/// so the passes above do per-stretch work rather than per-partition work.
fn stretches(owned: &[u32]) -> impl Iterator<Item = (usize, u32, usize)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        while owned.get(at) == Some(&NONE) {
            at += 1;
        }
        let &m = owned.get(at)?;
        let from = at;
        at += owned[at..].iter().position(|&x| x != m).unwrap_or(owned.len() - at);
        Some((from, m, at - from))
    })
}

/// `members` empty targets.
pub(super) fn empty_targets(members: usize) -> TargetAssignment {
    TargetAssignment { members: vec![MemberTarget::default(); members] }
}
