//! What members subscribe to, resolved against the metadata image: subscribed
//! topic ids, the subscription type, the metadata hash and the preferred assignor
//! (`ModernGroup.updateSubscriptionMetadata`, `ConsumerGroup.subscriptionType`,
//! `ConsumerGroup.computePreferredServerAssignor`).

use std::collections::{BTreeMap, BTreeSet};

use group_assignors::server::SubscriptionType;
use group_types::TopicId;
use group_types::hash::ClientMap;

use super::group::{ConsumerGroup, ConsumerMember};
use crate::MetadataImage;
pub(crate) use crate::core::modern::metadata_hash;

/// The topic names `member` subscribes to: its names and the topics its regex
/// resolved to (an unresolved regex gives none).
pub(crate) fn subscribed_names<'a>(
    member: &'a ConsumerMember,
    group: &'a ConsumerGroup,
) -> BTreeSet<&'a str> {
    let mut names: BTreeSet<&str> = member.meta.subscribed_topic_names.iter().map(String::as_str).collect();
    if let Some(regex) = member.regex()
        && let Some(resolved) = group.regexes.get(regex)
    {
        names.extend(resolved.topics.iter().map(String::as_str));
    }
    names
}

/// The ids of the existing topics `member` subscribes to, ascending.
pub(crate) fn subscribed_ids(
    member: &ConsumerMember,
    group: &ConsumerGroup,
    image: &MetadataImage,
) -> Vec<TopicId> {
    // Straight from the names to the ids, without the ordered set of names
    // `subscribed_names` builds: every reconciling heartbeat asks this.
    let resolved = member.regex().and_then(|regex| group.regexes.get(regex));
    let names = member.meta.subscribed_topic_names.iter().chain(resolved.into_iter().flat_map(|r| &r.topics));
    let mut ids: Vec<TopicId> = names.filter_map(|n| image.topic(n).map(|t| t.id)).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// How many members subscribe to each topic by name: the by-name counts of
/// `ModernGroup.subscribedTopicNames`, kept by the group's replay as members
/// come, change and go, so that a group without regexes knows its topic names
/// and its subscription type without a scan of its members (a join or a leave
/// in a 1,000-member group otherwise compares 1,000 lists, most of its time).
/// Topic names are the clients' to choose: the map has the client-safe hasher.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NameCounts(ClientMap<String, u32>);

impl NameCounts {
    /// A member subscribing to `names` came.
    pub(crate) fn add(&mut self, names: &[String]) {
        for_each_distinct(names, |name| match self.0.get_mut(name) {
            Some(count) => *count += 1,
            None => {
                self.0.insert(name.to_owned(), 1);
            }
        });
    }

    /// A member subscribing to `names` went.
    pub(crate) fn remove(&mut self, names: &[String]) {
        for_each_distinct(names, |name| {
            if let Some(count) = self.0.get_mut(name) {
                *count -= 1;
                if *count == 0 {
                    self.0.remove(name);
                }
            }
        });
    }

    /// A member's subscription went from `old` to `new`.
    pub(crate) fn replace(&mut self, old: &[String], new: &[String]) {
        if old != new {
            self.remove(old);
            self.add(new);
        }
    }

    /// Every name some member subscribes to.
    fn names(&self) -> BTreeSet<&str> {
        self.0.keys().map(String::as_str).collect()
    }

    /// True when each of `members` subscribes to every name.
    fn all_subscribed_by(&self, members: usize) -> bool {
        self.0.values().all(|&count| count as usize == members)
    }
}

/// Calls `f` once per distinct name of `names`: lists are stored sorted and
/// deduplicated (`normalized`), but a record is the writer's to get right.
fn for_each_distinct(names: &[String], mut f: impl FnMut(&str)) {
    if names.is_sorted() {
        for (i, name) in names.iter().enumerate() {
            if i == 0 || names[i - 1] != *name {
                f(name);
            }
        }
    } else {
        names.iter().map(String::as_str).collect::<BTreeSet<_>>().into_iter().for_each(f);
    }
}

/// Every topic name some member of `group` subscribes to (by name or through
/// a resolved regex).
pub(crate) fn group_names(group: &ConsumerGroup) -> BTreeSet<&str> {
    match group.regex_subscribers {
        0 => group.subscribed_names.names(),
        _ => names_of(group.modern.members.values_any_order(), group),
    }
}

/// Every topic name some of `members` subscribes to: the definition.
fn names_of<'a>(
    members: impl Iterator<Item = &'a ConsumerMember>,
    group: &'a ConsumerGroup,
) -> BTreeSet<&'a str> {
    let mut all = BTreeSet::new();
    // Members mostly share one subscription: one that equals the member's
    // before adds nothing (a join into 1,000 members otherwise builds 1,000
    // sets, most of its time).
    let mut last: Option<(&[String], Option<&str>)> = None;
    for m in members {
        let key = (&*m.meta.subscribed_topic_names, m.regex());
        if last == Some(key) {
            continue;
        }
        last = Some(key);
        all.extend(subscribed_names(m, group));
    }
    all
}

/// `ConsumerGroup.subscriptionType` (§5.3) of `group`.
pub(crate) fn subscription_type(group: &ConsumerGroup) -> SubscriptionType {
    match group.regex_subscribers {
        0 if group.subscribed_names.all_subscribed_by(group.modern.members.len()) => {
            SubscriptionType::Homogeneous
        }
        0 => SubscriptionType::Heterogeneous,
        _ => subscription_type_of(group.modern.members.values_any_order(), group),
    }
}

/// The subscription type of `members`: the definition.
fn subscription_type_of<'a>(
    members: impl Iterator<Item = &'a ConsumerMember> + Clone,
    group: &ConsumerGroup,
) -> SubscriptionType {
    let count = members.clone().count();
    if count == 0 {
        return SubscriptionType::Homogeneous;
    }
    let regexes: BTreeSet<&str> = members.clone().filter_map(ConsumerMember::regex).collect();
    if regexes.is_empty() {
        // Homogeneous when every topic is subscribed by every member: when all
        // members subscribe to one set of names. A member whose list equals
        // the first member's, as nearly all do, is compared without a set.
        let mut first: Option<(&[String], BTreeSet<&str>)> = None;
        for m in members {
            let names = &*m.meta.subscribed_topic_names;
            match &first {
                None => first = Some((names, names.iter().map(String::as_str).collect())),
                Some((list, _)) if *list == names => {}
                Some((_, set)) => {
                    if names.iter().map(String::as_str).collect::<BTreeSet<_>>() != *set {
                        return SubscriptionType::Heterogeneous;
                    }
                }
            }
        }
        return SubscriptionType::Homogeneous;
    }
    let one_regex = regexes.len() == 1;
    let all_use_it = members.clone().all(|m| m.regex().is_some());
    let no_names = members.clone().all(|m| m.meta.subscribed_topic_names.is_empty());
    if one_regex
        && all_use_it
        && no_names
        && let Some(regex) = regexes.first()
    {
        // Each topic comes from exactly that regex, which every member shares.
        let _ = group.regexes.get(*regex);
        return SubscriptionType::Homogeneous;
    }
    SubscriptionType::Heterogeneous
}

/// The server assignor most members name, else `None` (the default applies).
/// Ties go to the name configured first, then the smallest name.
pub(crate) fn preferred_assignor<'a>(
    members: impl Iterator<Item = &'a ConsumerMember>,
    configured: &[String],
) -> Option<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for m in members {
        if let Some(name) = m.meta.server_assignor() {
            *counts.entry(name).or_default() += 1;
        }
    }
    let best = counts.values().copied().max()?;
    let rank = |name: &str| configured.iter().position(|c| c == name).unwrap_or(usize::MAX);
    counts
        .into_iter()
        .filter(|(_, n)| *n == best)
        .min_by(|a, b| rank(a.0).cmp(&rank(b.0)).then(a.0.cmp(b.0)))
        .map(|(name, _)| name.to_owned())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;

    fn member(id: usize, names: &[&str]) -> ConsumerMember {
        let mut m = ConsumerMember::new(Arc::from(format!("m{id}")));
        m.meta.subscribed_topic_names = names.iter().map(|n| (*n).to_owned()).collect();
        m
    }

    /// A member that prefers server assignor `name` (`None`: no preference).
    fn preferring(id: usize, name: Option<&str>) -> ConsumerMember {
        let mut m = ConsumerMember::new(Arc::from(format!("m{id}")));
        let value = group_offsets::ConsumerMemberMetadataValue {
            server_assignor: name.map(str::to_owned),
            ..Default::default()
        };
        m.meta = super::super::meta::MemberMeta::new(&value, &m.meta, &m.meta);
        m
    }

    /// `ConsumerGroup.computePreferredServerAssignor`: the assignor most members
    /// name; Kafka breaks a tie by its `HashMap`'s order, we by the configured
    /// order, then the smallest name (docs/KAFKA-DIFFERENCES.md K7).
    #[rstest::rstest]
    #[case::most_named(&[Some("range"), Some("range"), Some("uniform")], &["uniform", "range"], Some("range"))]
    #[case::tie_goes_to_the_first_configured(&[Some("range"), Some("uniform")], &["uniform", "range"], Some("uniform"))]
    #[case::tie_in_the_other_order(&[Some("uniform"), Some("range")], &["range", "uniform"], Some("range"))]
    #[case::unconfigured_tie_goes_to_the_smallest_name(&[Some("zeta"), Some("alpha")], &["uniform"], Some("alpha"))]
    #[case::configured_beats_unconfigured_in_a_tie(&[Some("alpha"), Some("uniform")], &["uniform"], Some("uniform"))]
    #[case::no_preference(&[None, None], &["uniform"], None)]
    #[case::members_without_one_do_not_vote(&[None, None, Some("range")], &["uniform"], Some("range"))]
    fn the_preferred_assignor_is_the_most_named_and_ties_are_deterministic(
        #[case] prefs: &[Option<&str>],
        #[case] configured: &[&str],
        #[case] expected: Option<&str>,
    ) {
        let members: Vec<ConsumerMember> = prefs.iter().enumerate().map(|(i, p)| preferring(i, *p)).collect();
        let configured: Vec<String> = configured.iter().map(|c| (*c).to_owned()).collect();
        assert_eq!(preferred_assignor(members.iter(), &configured).as_deref(), expected);
    }

    fn lists() -> impl Strategy<Value = Vec<Vec<&'static str>>> {
        let names = proptest::collection::vec(prop_oneof![Just("a"), Just("b"), Just("c")], 0..4);
        proptest::collection::vec(names, 0..6)
    }

    proptest! {
        /// The shortcuts for members that share a list change nothing: the
        /// type is homogeneous exactly when every name is subscribed by every
        /// member (`ConsumerGroup.subscriptionType`), the names are the
        /// union of every member's, and a member's topic ids are those its
        /// names resolve to, ascending and once each.
        #[test]
        fn shortcuts_agree_with_the_definitions(lists in lists()) {
            let group = ConsumerGroup::new(Arc::from("g"), 0);
            let members: Vec<ConsumerMember> = lists.iter().enumerate().map(|(i, l)| member(i, l)).collect();
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for l in &lists {
                for n in l.iter().collect::<BTreeSet<_>>() {
                    *counts.entry(*n).or_default() += 1;
                }
            }
            let homogeneous = counts.values().all(|&n| n == lists.len());
            let expected = if homogeneous { SubscriptionType::Homogeneous } else { SubscriptionType::Heterogeneous };
            prop_assert_eq!(subscription_type_of(members.iter(), &group), expected);
            let union: BTreeSet<&str> = lists.iter().flatten().copied().collect();
            prop_assert_eq!(names_of(members.iter(), &group), union);
            // "c" does not exist: its name subscribes to nothing.
            let image = MetadataImage::new(1, [
                crate::TopicImage::new(TopicId::from_u128(2), "a".to_owned(), 1),
                crate::TopicImage::new(TopicId::from_u128(1), "b".to_owned(), 1),
            ]);
            for m in &members {
                let by_name: BTreeSet<TopicId> =
                    subscribed_names(m, &group).into_iter().filter_map(|n| image.topic(n).map(|t| t.id)).collect();
                prop_assert_eq!(subscribed_ids(m, &group, &image), by_name.into_iter().collect::<Vec<_>>());
            }
        }

        /// However members come, change their subscription and go, and
        /// whatever of it is undone, the counts the group keeps give the names
        /// and the type its members give: the fast paths are the definitions.
        #[test]
        fn kept_counts_agree_with_the_members(
            committed in proptest::collection::vec((0..5usize, proptest::option::of(list())), 0..20),
            undone in proptest::collection::vec((0..5usize, proptest::option::of(list())), 0..10),
        ) {
            let mut group = ConsumerGroup::new(Arc::from("g"), 0);
            for (m, names) in &committed {
                group.replay(&metadata(*m, names.as_deref()), None);
                agree(&group)?;
            }
            let before = group.subscribed_names.clone();
            let mut changes = Vec::new();
            for (m, names) in &undone {
                group.replay(&metadata(*m, names.as_deref()), Some(&mut changes));
                agree(&group)?;
            }
            group.undo(changes);
            agree(&group)?;
            prop_assert_eq!(&group.subscribed_names, &before);
        }
    }

    /// Unsorted, with repeats: what a record could hold.
    fn list() -> impl Strategy<Value = Vec<&'static str>> {
        proptest::collection::vec(prop_oneof![Just("a"), Just("b"), Just("c")], 0..4)
    }

    fn metadata(m: usize, names: Option<&[&str]>) -> group_offsets::ModernGroupRecord {
        group_offsets::ModernGroupRecord::MemberMetadata {
            group_id: Arc::from("g"),
            member_id: Arc::from(format!("m{m}")),
            value: names.map(|names| {
                Box::new(group_offsets::ConsumerMemberMetadataValue {
                    subscribed_topic_names: names.iter().map(|n| (*n).to_owned()).collect(),
                    ..Default::default()
                })
            }),
        }
    }

    fn agree(group: &ConsumerGroup) -> Result<(), TestCaseError> {
        let members = group.modern.members.values_any_order();
        prop_assert_eq!(group_names(group), names_of(members.clone(), group));
        prop_assert_eq!(subscription_type(group), subscription_type_of(members, group));
        Ok(())
    }
}
