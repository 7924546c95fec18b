//! Shared helpers for the server assignors' tests: owned groups that lend
//! themselves as a `GroupSpec`, a compact notation for targets, and the
//! invariant checks.

use std::collections::{BTreeMap, BTreeSet};

use group_assignors::server::{
    GroupSpec, MemberSpec, MemberTarget, ServerAssignor, SubscriptionType, TargetAssignment,
};
use group_types::TopicId;

/// Topic `a`, `b`, ... as ids 1, 2, ...
pub(crate) fn tid(name: char) -> TopicId {
    TopicId::from_u128(u128::from(name as u32 - 'a' as u32 + 1))
}

/// A member the tests own.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub(crate) id: String,
    pub(crate) instance: Option<String>,
    pub(crate) topics: Vec<TopicId>,
    pub(crate) current: MemberTarget,
}

impl Member {
    /// Member `id` subscribed to the topics named by the letters of `topics`.
    pub(crate) fn new(id: &str, topics: &str) -> Member {
        let mut ids: Vec<TopicId> = topics.chars().map(tid).collect();
        ids.sort();
        ids.dedup();
        Member { id: id.to_owned(), instance: None, topics: ids, current: MemberTarget::default() }
    }

    /// With static instance id `instance`.
    pub(crate) fn with_instance(mut self, instance: &str) -> Member {
        self.instance = Some(instance.to_owned());
        self
    }

    /// With current target `current` (see [`target`]).
    pub(crate) fn owning(mut self, current: &str) -> Member {
        self.current = target(current);
        self
    }
}

/// A group the tests own.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) members: Vec<Member>,
    pub(crate) kind: SubscriptionType,
}

impl Group {
    /// The members, with the subscription type §5.3 would compute.
    pub(crate) fn new(members: Vec<Member>) -> Group {
        let kind = if members.windows(2).all(|w| w[0].topics == w[1].topics) {
            SubscriptionType::Homogeneous
        } else {
            SubscriptionType::Heterogeneous
        };
        Group { members, kind }
    }

    /// The spec an assignor reads.
    pub(crate) fn spec(&self) -> GroupSpec<'_> {
        GroupSpec {
            members: self
                .members
                .iter()
                .map(|m| MemberSpec {
                    member_id: &m.id,
                    instance_id: m.instance.as_deref(),
                    rack_id: None,
                    subscribed_topics: &m.topics,
                    current: &m.current,
                })
                .collect(),
            subscription_type: self.kind,
        }
    }

    /// Every member's current target replaced by `out`'s.
    pub(crate) fn with_current(mut self, out: &TargetAssignment) -> Group {
        for (m, t) in self.members.iter_mut().zip(&out.members) {
            m.current = t.clone();
        }
        self
    }

    /// Runs `assignor` over topics of the given partition counts (`None` =
    /// unknown to the describer).
    pub(crate) fn assign(&self, assignor: &dyn ServerAssignor, counts: &Counts) -> TargetAssignment {
        let counts = counts.clone();
        let describer = move |t: TopicId| counts.0.get(&t).copied().flatten();
        assignor.assign(&self.spec(), &describer).expect("assigns")
    }
}

/// Partition counts per topic; `None` = the describer does not know it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts(pub(crate) BTreeMap<TopicId, Option<u32>>);

impl Counts {
    /// From `"a6 b3"`.
    pub(crate) fn of(text: &str) -> Counts {
        Counts(
            text.split_whitespace()
                .map(|w| {
                    let mut chars = w.chars();
                    let t = chars.next().expect("topic letter");
                    (tid(t), Some(chars.as_str().parse().expect("count")))
                })
                .collect(),
        )
    }

    /// The known topics' counts.
    pub(crate) fn known(&self) -> impl Iterator<Item = (TopicId, u32)> + '_ {
        self.0.iter().filter_map(|(&t, &c)| c.map(|c| (t, c)))
    }
}

/// A target from `"a:0,1,2 b:0-3"` (`""` = nothing).
pub(crate) fn target(text: &str) -> MemberTarget {
    let mut topics: Vec<(TopicId, Vec<i32>)> = text
        .split_whitespace()
        .map(|w| {
            let (t, ps) = w.split_once(':').expect("topic:partitions");
            let mut parts = Vec::new();
            for p in ps.split(',') {
                // `a-b` is a range; a leading `-` is a (bad) negative partition.
                match p.get(1..).and_then(|rest| rest.find('-')).map(|at| p.split_at(at + 1)) {
                    Some((a, b)) => parts.extend(a.parse::<i32>().unwrap()..=b[1..].parse().unwrap()),
                    None => parts.push(p.parse().unwrap()),
                }
            }
            (tid(t.chars().next().expect("topic letter")), parts)
        })
        .collect();
    topics.sort();
    MemberTarget { topics }
}

/// Every member's target, by member id, in [`target`] notation for readable failures.
pub(crate) fn by_member(group: &Group, out: &TargetAssignment) -> BTreeMap<String, String> {
    group.members.iter().zip(&out.members).map(|(m, t)| (m.id.clone(), show(t))).collect()
}

/// `t` in [`target`] notation (ranges folded).
pub(crate) fn show(t: &MemberTarget) -> String {
    let mut words = Vec::new();
    for (topic, parts) in &t.topics {
        let letter = char::from_u32('a' as u32 + topic.as_u128() as u32 - 1).unwrap_or('?');
        let mut runs: Vec<String> = Vec::new();
        let mut i = 0;
        while i < parts.len() {
            let mut j = i;
            while j + 1 < parts.len() && parts[j + 1] == parts[j] + 1 {
                j += 1;
            }
            runs.push(if j > i + 1 {
                format!("{}-{}", parts[i], parts[j])
            } else {
                (i..=j).map(|k| parts[k].to_string()).collect::<Vec<_>>().join(",")
            });
            i = j + 1;
        }
        words.push(format!("{letter}:{}", runs.join(",")));
    }
    words.join(" ")
}

/// Checks the shape every assignor's output must have and returns each
/// member's partitions: one target per member; topics ascending, partitions
/// ascending, no empty lists; only existing partitions of covered topics the
/// member subscribes to; each partition at most once; and every partition of
/// a covered topic with a subscriber assigned.
pub(crate) fn check_valid(
    group: &Group,
    counts: &Counts,
    out: &TargetAssignment,
) -> Vec<BTreeSet<(TopicId, i32)>> {
    assert_eq!(out.members.len(), group.members.len(), "one target per member");
    let mut seen = BTreeSet::new();
    let mut owned = Vec::new();
    for (m, t) in group.members.iter().zip(&out.members) {
        assert!(t.topics.windows(2).all(|w| w[0].0 < w[1].0), "{}: topics ascending: {t:?}", m.id);
        let mut mine = BTreeSet::new();
        for (topic, parts) in &t.topics {
            assert!(!parts.is_empty(), "{}: empty list for {topic}", m.id);
            assert!(parts.windows(2).all(|w| w[0] < w[1]), "{}: partitions ascending: {parts:?}", m.id);
            assert!(m.topics.contains(topic), "{}: not subscribed to {topic}", m.id);
            let count = counts.0.get(topic).copied().flatten().expect("only known topics");
            for &p in parts {
                assert!((0..count as i32).contains(&p), "{}: {topic}:{p} does not exist", m.id);
                assert!(seen.insert((*topic, p)), "{topic}:{p} assigned twice");
                mine.insert((*topic, p));
            }
        }
        owned.push(mine);
    }
    for (topic, count) in counts.known() {
        if group.members.iter().any(|m| m.topics.contains(&topic)) {
            for p in 0..count as i32 {
                assert!(seen.contains(&(topic, p)), "{topic}:{p} left unassigned");
            }
        }
    }
    owned
}

/// Checks that member counts differ by at most one.
pub(crate) fn check_balanced(out: &TargetAssignment) {
    let counts: Vec<usize> = out.members.iter().map(MemberTarget::len).collect();
    let (lo, hi) = (counts.iter().min().copied().unwrap_or(0), counts.iter().max().copied().unwrap_or(0));
    assert!(hi - lo <= 1, "unbalanced: {counts:?}");
}
