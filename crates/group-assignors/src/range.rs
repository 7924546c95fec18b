//! `RangeAssignor` ("range"): contiguous per-topic ranges, Kafka-exact,
//! including KIP-881 rack-aware ranges.

use group_types::{MemberSubscription, TopicPartition};

use crate::assignor::rack_aware_assignor;
use crate::cluster::{Cluster, Group, Holdings, NONE, Racks, into_assignment};
use crate::{AssignError, GroupAssignment, ReplicaRacks, check_rack_len};

/// Kafka's `RangeAssignor`: each topic is split into contiguous ranges among
/// its own subscribers, in member order (static members first by instance id,
/// then member id); the first `n % m` subscribers get one extra partition.
///
/// Topics with the same subscribers and partition count are co-partitioned.
/// With rack information
/// ([`assign_with_racks`](crate::PartitionAssignor::assign_with_racks)) it
/// follows KIP-881 exactly as Kafka's Java class does.
///
/// ```
/// use group_assignors::{PartitionAssignor, RangeAssignor};
/// use group_types::{MemberSubscription, TopicPartition};
///
/// let members = [MemberSubscription::new("c1", ["t"]), MemberSubscription::new("c2", ["t"])];
/// let partitions: Vec<_> = (0..3).map(|p| TopicPartition::new("t", p)).collect();
/// let out = RangeAssignor.assign(&members, &partitions)?;
/// assert_eq!(out["c1"].len(), 2);
/// assert_eq!(out["c2"], [TopicPartition::new("t", 2)]);
/// # Ok::<(), group_assignors::AssignError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct RangeAssignor;

rack_aware_assignor!(RangeAssignor, "range", assign);

fn assign(
    members: &[MemberSubscription],
    partitions: &[TopicPartition],
    replica_racks: &[ReplicaRacks],
) -> Result<GroupAssignment, AssignError> {
    check_rack_len(partitions, replica_racks)?;
    let cluster = Cluster::new(partitions)?;
    let group = Group::new(members, &cluster)?;
    let order = group.kafka_order();
    let nt = cluster.topics.len();
    let (of_topic, lists) = group.subscriber_lists(&order, nt);
    if !replica_racks.is_empty()
        && members.iter().any(|m| m.rack_id.as_deref().is_some_and(|r| !r.is_empty()))
    {
        let racks = Racks::new(&cluster, members, partitions, replica_racks);
        let needs: Vec<bool> = (0..nt)
            .map(|t| {
                let topic = &cluster.topics[t];
                racks.use_rack_aware(
                    lists[of_topic[t] as usize].iter().copied(),
                    topic.start..topic.start + topic.len,
                )
            })
            .collect();
        if needs.iter().any(|&n| n) {
            return Ok(rack_aware(&cluster, &group, &racks, &of_topic, &lists, &needs));
        }
    }
    let mut counts = vec![0u32; members.len()];
    for (t, topic) in cluster.topics.iter().enumerate() {
        let subs = &lists[of_topic[t] as usize];
        if subs.is_empty() {
            continue;
        }
        let (base, extra) = (topic.len / subs.len() as u32, topic.len as usize % subs.len());
        for (k, &m) in subs.iter().enumerate().take(if base == 0 { extra } else { subs.len() }) {
            counts[m as usize] += base + u32::from(k < extra);
        }
    }
    let mut holdings = Holdings::new(&counts);
    for (t, topic) in cluster.topics.iter().enumerate() {
        let subs = &lists[of_topic[t] as usize];
        if subs.is_empty() {
            continue;
        }
        let (base, extra) = (topic.len / subs.len() as u32, topic.len as usize % subs.len());
        let mut next = 0u32;
        for (k, &m) in subs.iter().enumerate() {
            let take = base + u32::from(k < extra);
            if take == 0 {
                break;
            }
            for o in next..next + take {
                holdings.push(m, t as u32, o);
            }
            next += take;
        }
    }
    Ok(holdings.into_assignment(&cluster, &group))
}

/// Per-topic bookkeeping of the rack-aware path (Java's `TopicAssignmentState`).
struct TopicState<'s> {
    topic: u32,
    subs: &'s [u32],
    base: u32,
    remaining_extra: u32,
    /// Partitions taken so far, per position in `subs`.
    taken: Vec<u32>,
    /// Owner of each partition offset (`NONE` = unassigned).
    owner: Vec<u32>,
}

impl TopicState<'_> {
    fn max_assignable(&self, k: usize) -> u32 {
        (self.base + u32::from(self.remaining_extra > 0)).saturating_sub(self.taken[k])
    }

    fn assign(&mut self, k: usize, offset: u32) {
        self.owner[offset as usize] = self.subs[k];
        self.taken[k] += 1;
        if self.taken[k] > self.base {
            self.remaining_extra = self.remaining_extra.saturating_sub(1);
        }
    }

    /// Java's `assignRanges`: members in order take, up to their quota, the
    /// lowest unassigned partitions that `may` allows.
    fn assign_ranges(&mut self, may: impl Fn(u32, u32) -> bool, start: u32) {
        for k in 0..self.subs.len() {
            if self.owner.iter().all(|&o| o != NONE) {
                break;
            }
            let max = self.max_assignable(k);
            let picked: Vec<u32> = (0..self.owner.len() as u32)
                .filter(|&o| self.owner[o as usize] == NONE && may(self.subs[k], start + o))
                .take(max as usize)
                .collect();
            if picked.is_empty() {
                continue;
            }
            for &o in &picked {
                self.owner[o as usize] = self.subs[k];
            }
            // Java's `onAssigned` counts a whole batch once against the extra slots.
            self.taken[k] += picked.len() as u32;
            if self.taken[k] > self.base {
                self.remaining_extra = self.remaining_extra.saturating_sub(1);
            }
        }
    }
}

fn rack_aware(
    cluster: &Cluster<'_>,
    group: &Group<'_>,
    racks: &Racks,
    of_topic: &[u32],
    lists: &[Vec<u32>],
    needs: &[bool],
) -> GroupAssignment {
    let mut states: Vec<TopicState<'_>> = cluster
        .topics
        .iter()
        .enumerate()
        .map(|(t, topic)| {
            let subs = lists[of_topic[t] as usize].as_slice();
            let m = subs.len() as u32;
            TopicState {
                topic: t as u32,
                subs,
                base: topic.len.checked_div(m).unwrap_or(0),
                remaining_extra: topic.len.checked_rem(m).unwrap_or(0),
                taken: vec![0; subs.len()],
                owner: vec![NONE; topic.len as usize],
            }
        })
        .collect();
    // Group topics by (subscriber list, partition count); the order of groups
    // does not matter because every state is per topic.
    let mut groups: Vec<((u32, u32), Vec<usize>)> = Vec::new();
    for (t, topic) in cluster.topics.iter().enumerate() {
        if lists[of_topic[t] as usize].is_empty() {
            continue;
        }
        let key = (of_topic[t], topic.len);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(t),
            None => groups.push((key, vec![t])),
        }
    }
    for (_, ts) in &groups {
        if ts.len() > 1 {
            co_partitioned(cluster, racks, &mut states, ts);
        } else if needs[ts[0]] {
            let start = cluster.topics[ts[0]].start;
            states[ts[0]].assign_ranges(|m, g| racks.matches(m, g), start);
        }
    }
    for state in &mut states {
        let start = cluster.topics[state.topic as usize].start;
        state.assign_ranges(|_, _| true, start);
    }
    let mut out: Vec<Vec<TopicPartition>> = vec![Vec::new(); group.members.len()];
    for state in &states {
        let topic = &cluster.topics[state.topic as usize];
        for (o, &m) in state.owner.iter().enumerate() {
            if m != NONE {
                out[m as usize].push(topic.partition(o as u32));
            }
        }
    }
    into_assignment(group.members, out)
}

/// Java's `assignCoPartitionedWithRackMatching`.
fn co_partitioned(cluster: &Cluster<'_>, racks: &Racks, states: &mut [TopicState<'_>], ts: &[usize]) {
    let subs = states[ts[0]].subs;
    let n = cluster.topics[ts[0]].len;
    let mut remaining: Vec<usize> = (0..subs.len()).collect();
    for p in 0..n {
        let found = remaining.iter().position(|&k| {
            ts.iter().all(|&t| {
                racks.matches(subs[k], cluster.topics[t].start + p) && states[t].max_assignable(k) > 0
            })
        });
        if let Some(i) = found {
            let k = remaining[i];
            for &t in ts {
                states[t].assign(k, p);
            }
            if ts.iter().all(|&t| states[t].max_assignable(k) == 0) {
                remaining.remove(i);
                if remaining.is_empty() {
                    break;
                }
            }
        }
    }
}
