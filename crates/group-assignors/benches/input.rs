//! The groups the server-side benchmarks (`server.rs`, `share.rs`) assign: topic `j`
//! has id `j + 1` (id 0 means "no id"), members are `member-%05d`, members with the
//! same subscription share one topic list (as a coordinator holds interned
//! subscriptions).

use group_assignors::server::{GroupSpec, MemberSpec, MemberTarget, SubscriptionType};
use group_types::TopicId;

/// An owned group the specs borrow from.
pub(crate) struct Input {
    pub(crate) ids: Vec<String>,
    /// The distinct subscription lists.
    pub(crate) lists: Vec<Vec<TopicId>>,
    /// Each member's list.
    pub(crate) list_of: Vec<usize>,
    pub(crate) current: Vec<MemberTarget>,
    pub(crate) kind: SubscriptionType,
    /// Partition count per topic index.
    pub(crate) counts: Vec<u32>,
}

impl Input {
    /// `members` members with nothing assigned, member `i` on `lists[list_of(i)]` (topic
    /// indices), over `topics` topics of `per_topic` partitions.
    pub(crate) fn new(
        topics: usize,
        per_topic: u32,
        members: usize,
        lists: Vec<Vec<usize>>,
        list_of: impl Fn(usize) -> usize,
        kind: SubscriptionType,
    ) -> Input {
        Input {
            ids: (0..members).map(member).collect(),
            lists: lists.into_iter().map(|l| l.into_iter().map(topic).collect()).collect(),
            list_of: (0..members).map(list_of).collect(),
            current: vec![MemberTarget::default(); members],
            kind,
            counts: vec![per_topic; topics],
        }
    }

    /// Every member subscribes to every topic; one shared list, or one each.
    pub(crate) fn homogeneous(topics: usize, per_topic: u32, members: usize, shared: bool) -> Input {
        let all: Vec<usize> = (0..topics).collect();
        let lists = if shared { vec![all] } else { vec![all; members] };
        let list_of = |m| if shared { 0 } else { m };
        Input::new(topics, per_topic, members, lists, list_of, SubscriptionType::Homogeneous)
    }

    /// Member `i` subscribes to topic `j` iff `(i + j) % 3 != 0`.
    pub(crate) fn heterogeneous(topics: usize, per_topic: u32, members: usize) -> Input {
        let lists = (0..3).map(|i| (0..topics).filter(|j| (i + j) % 3 != 0).collect()).collect();
        Input::new(topics, per_topic, members, lists, |i| i % 3, SubscriptionType::Heterogeneous)
    }

    /// The next `member-%05d` joins, on the first topic list, with nothing assigned.
    pub(crate) fn join(&mut self) {
        self.ids.push(member(self.ids.len()));
        self.list_of.push(0);
        self.current.push(MemberTarget::default());
    }

    pub(crate) fn spec(&self) -> GroupSpec<'_> {
        GroupSpec {
            members: (0..self.ids.len())
                .map(|m| MemberSpec {
                    member_id: &self.ids[m],
                    instance_id: None,
                    rack_id: None,
                    subscribed_topics: &self.lists[self.list_of[m]],
                    current: &self.current[m],
                })
                .collect(),
            subscription_type: self.kind,
        }
    }

    pub(crate) fn describer(&self) -> impl Fn(TopicId) -> Option<u32> + '_ {
        |id: TopicId| self.counts.get(id.as_u128().checked_sub(1)? as usize).copied()
    }
}

fn topic(j: usize) -> TopicId {
    TopicId::from_u128(j as u128 + 1)
}

fn member(i: usize) -> String {
    format!("member-{i:05}")
}
