//! Invariants of the share assignor `simple` over random histories: a group
//! whose members join, leave and change subscriptions while topics grow and
//! partitions become initialized (the only ways Kafka changes them), each
//! step's targets being the next step's current targets.
//!
//! What Kafka's algorithm guarantees, and these check at every step:
//!
//! - **Coverage**: every assignable partition of a topic somebody subscribes
//!   to is in at least one subscriber's target.
//! - **Validity**: a member gets only partitions of topics it subscribes to
//!   and only assignable ones; what it held before may stay (a heterogeneous
//!   group keeps partitions of topics nobody subscribes to any more, and
//!   nothing is taken away for being non-assignable).
//! - **Balance**, per topic for a heterogeneous group and over all partitions
//!   for a homogeneous one, with `M` members (subscribers) and `P`
//!   assignable partitions: when `M <= P` every partition has exactly one
//!   holder and the members' counts differ by at most one; when `M > P`
//!   every member holds at least one partition and no partition more than
//!   `ceil(M / P)` holders.
//! - **Determinism**: the same input gives the same output, whatever the
//!   order of the members in the spec.
//! - **Stickiness**: assigning a group its own output again changes nothing,
//!   and in a homogeneous group with `M <= P` whose current targets share no
//!   partition, a member keeps every partition of the subscribed topics it
//!   held, up to `floor(P / M)` of them. (Where partitions were shared, as
//!   after more members than partitions, balance takes them away first.)

use std::collections::{BTreeMap, BTreeSet};

use group_assignors::server::{SubscriptionType, TargetAssignment};
use group_types::TopicId;
use proptest::prelude::*;

use crate::server_check::{Counts, Group, Member, tid};
use crate::server_simple::{Allowed, share};

const TOPICS: [char; 4] = ['a', 'b', 'c', 'd'];

/// One change to the group.
#[derive(Debug, Clone)]
enum Change {
    Join(u16, u8),
    Leave(usize),
    Resubscribe(usize, u8),
    Grow(usize, u32),
    Initialize(usize, u32),
}

fn change(homogeneous: bool) -> impl Strategy<Value = Change> {
    prop_oneof![
        3 => (any::<u16>(), 1u8..16).prop_map(|(id, mask)| Change::Join(id, mask)),
        2 => any::<usize>().prop_map(Change::Leave),
        1 => (any::<usize>(), 1u8..16).prop_map(move |(m, mask)| if homogeneous {
            Change::Grow(m, 1)
        } else {
            Change::Resubscribe(m, mask)
        }),
        1 => (0usize..TOPICS.len(), 1u32..4).prop_map(|(t, by)| Change::Grow(t, by)),
        2 => (0usize..TOPICS.len(), 1u32..4).prop_map(|(t, by)| Change::Initialize(t, by)),
    ]
}

/// The state a history walks through.
#[derive(Debug, Clone)]
struct State {
    group: Group,
    counts: BTreeMap<TopicId, u32>,
    /// Per topic, partitions `0..initialized` are assignable.
    initialized: BTreeMap<TopicId, u32>,
    homogeneous_mask: Option<u8>,
}

fn topics_of(mask: u8) -> String {
    TOPICS.iter().enumerate().filter(|(b, _)| mask & (1 << b) != 0).map(|(_, &t)| t).collect()
}

impl State {
    fn counts(&self) -> Counts {
        Counts(self.counts.iter().map(|(&t, &c)| (t, Some(c))).collect())
    }

    fn allowed(&self) -> Allowed {
        Allowed { only: Some(self.initialized.iter().map(|(&t, &n)| (t, (0..n as i32).collect())).collect()) }
    }

    fn assignable(&self, t: TopicId, p: i32) -> bool {
        self.initialized.get(&t).is_some_and(|&n| p < n as i32)
    }

    fn apply(&mut self, change: &Change) {
        let mut members = std::mem::take(&mut self.group.members);
        match *change {
            Change::Join(id, mask) => {
                let id = format!("member-{id}");
                if members.iter().all(|m| m.id != id) {
                    members.push(Member::new(&id, &topics_of(self.homogeneous_mask.unwrap_or(mask))));
                }
            }
            Change::Leave(at) if members.len() > 1 => {
                members.remove(at % members.len());
            }
            Change::Resubscribe(at, mask) if !members.is_empty() => {
                let at = at % members.len();
                let current = members[at].current.clone();
                members[at] = Member::new(&members[at].id.clone(), &topics_of(mask));
                members[at].current = current;
            }
            Change::Grow(t, by) => *self.counts.entry(tid(TOPICS[t % TOPICS.len()])).or_default() += by,
            Change::Initialize(t, by) => {
                let t = tid(TOPICS[t]);
                let count = self.counts[&t];
                let n = self.initialized.entry(t).or_default();
                *n = (*n + by).min(count);
            }
            _ => {}
        }
        self.group = Group::new(members);
    }

    fn assign(&self) -> TargetAssignment {
        share(&self.group, &self.counts(), &self.allowed()).expect("assigns")
    }
}

fn history() -> impl Strategy<Value = (State, Vec<Change>)> {
    (any::<bool>(), 1u8..16, prop::collection::vec(1u32..9, TOPICS.len()), 1usize..6).prop_flat_map(
        |(homogeneous, mask, counts, members)| {
            let counts: BTreeMap<TopicId, u32> = TOPICS.iter().map(|&t| tid(t)).zip(counts).collect();
            let initialized = counts.iter().map(|(&t, &c)| (t, c.saturating_sub(1))).collect();
            let group = Group::new(
                (0..members)
                    .map(|i| {
                        let m = if homogeneous { mask } else { (mask.rotate_left(i as u32) % 15) + 1 };
                        Member::new(&format!("m{i}"), &topics_of(m))
                    })
                    .collect(),
            );
            let state = State { group, counts, initialized, homogeneous_mask: homogeneous.then_some(mask) };
            (Just(state), prop::collection::vec(change(homogeneous), 1..12))
        },
    )
}

/// Checks one step's output against its input; `prev` is what each member held.
fn check(state: &State, out: &TargetAssignment) -> Result<(), TestCaseError> {
    let g = &state.group;
    prop_assert_eq!(out.members.len(), g.members.len());
    let subscribed: BTreeSet<TopicId> = g.members.iter().flat_map(|m| m.topics.iter().copied()).collect();
    let mut holders: BTreeMap<(TopicId, i32), usize> = BTreeMap::new();
    for (m, t) in g.members.iter().zip(&out.members) {
        for (topic, parts) in &t.topics {
            prop_assert!(!parts.is_empty() && parts.windows(2).all(|w| w[0] < w[1]));
            for &p in parts {
                let held_before = m.current.partitions(*topic).contains(&p);
                if !m.topics.contains(topic) {
                    // Kafka's heterogeneous quirk: unsubscribed by all, kept.
                    prop_assert!(
                        held_before
                            && !subscribed.contains(topic)
                            && g.kind == SubscriptionType::Heterogeneous,
                        "{} holds {:?}:{} without subscribing",
                        m.id,
                        topic,
                        p
                    );
                    continue;
                }
                prop_assert!(state.assignable(*topic, p) || held_before, "{} got non-assignable {}", m.id, p);
                *holders.entry((*topic, p)).or_default() += 1;
            }
        }
    }
    // Coverage and balance, per topic or over the group.
    let groups: Vec<Vec<TopicId>> = if g.kind == SubscriptionType::Homogeneous {
        vec![subscribed.iter().copied().collect()]
    } else {
        subscribed.iter().map(|&t| vec![t]).collect()
    };
    for topics in groups {
        let parts: Vec<(TopicId, i32)> = topics
            .iter()
            .flat_map(|&t| (0..state.counts[&t] as i32).map(move |p| (t, p)))
            .filter(|&(t, p)| state.assignable(t, p))
            .collect();
        for tp in &parts {
            prop_assert!(holders.contains_key(tp), "{:?} unassigned", tp);
        }
        let members: Vec<usize> = (0..g.members.len())
            .filter(|&k| topics.iter().all(|t| g.members[k].topics.contains(t)))
            .collect();
        let (m, p) = (members.len(), parts.len());
        if m == 0 || p == 0 {
            continue;
        }
        let loads: Vec<usize> = members
            .iter()
            .map(|&k| topics.iter().map(|&t| out.members[k].partitions(t).len()).sum())
            .collect();
        if m <= p {
            prop_assert!(parts.iter().all(|tp| holders[tp] == 1), "shared with M <= P: {:?}", holders);
            let (lo, hi) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
            prop_assert!(hi - lo <= 1, "unbalanced {:?}", loads);
        } else {
            prop_assert!(loads.iter().all(|&l| l >= 1), "a member got nothing: {:?}", loads);
            prop_assert!(parts.iter().all(|tp| holders[tp] <= m.div_ceil(p)), "over-shared {:?}", holders);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn histories_keep_kafkas_guarantees((start, changes) in history()) {
        let mut state = start;
        for change in std::iter::once(None).chain(changes.iter().map(Some)) {
            if let Some(change) = change {
                state.apply(change);
            }
            let out = state.assign();
            check(&state, &out)?;
            prop_assert_eq!(&state.assign(), &out, "deterministic");
            let mut reversed = state.clone();
            reversed.group.members.reverse();
            let mut back = reversed.assign().members;
            back.reverse();
            prop_assert_eq!(&back, &out.members, "the spec's member order makes no difference");
            let again = state.clone();
            let again = State { group: again.group.with_current(&out), ..again };
            prop_assert_eq!(&again.assign(), &out, "a fixed point");
            if state.group.kind == SubscriptionType::Homogeneous {
                let topics = &state.group.members[0].topics;
                let p = topics
                    .iter()
                    .map(|&t| (0..state.counts[&t] as i32).filter(|&q| state.assignable(t, q)).count())
                    .sum::<usize>();
                let m = state.group.members.len();
                let mut before: BTreeMap<(TopicId, i32), usize> = BTreeMap::new();
                for member in &state.group.members {
                    for (topic, ps) in &member.current.topics {
                        for &q in ps {
                            *before.entry((*topic, q)).or_default() += 1;
                        }
                    }
                }
                // Partitions shared before must lose holders: that is balance, not stickiness.
                if m <= p && before.values().all(|&n| n == 1) {
                    for (member, t) in state.group.members.iter().zip(&out.members) {
                        let held: Vec<(TopicId, i32)> = member.current.topics.iter()
                            .filter(|(topic, _)| topics.contains(topic))
                            .flat_map(|(topic, ps)| ps.iter().map(move |&q| (*topic, q)))
                            .collect();
                        let kept = held.iter().filter(|(topic, q)| t.partitions(*topic).contains(q)).count();
                        prop_assert!(kept >= held.len().min(p / m), "{} kept {} of {:?}", member.id, kept, held);
                    }
                }
            }
            state.group = state.group.with_current(&out);
        }
    }
}
