//! What members subscribe to, resolved against the metadata image: subscribed
//! topic ids, the subscription type, the metadata hash and the preferred assignor
//! (`ModernGroup.updateSubscriptionMetadata`, `ConsumerGroup.subscriptionType`,
//! `ConsumerGroup.computePreferredServerAssignor`).

use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hasher;

use group_assignors::server::SubscriptionType;
use group_types::TopicId;

use super::group::{ConsumerGroup, ConsumerMember};
use crate::MetadataImage;

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
    let mut ids: Vec<TopicId> =
        subscribed_names(member, group).into_iter().filter_map(|n| image.topic(n).map(|t| t.id)).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Every topic name some member subscribes to.
pub(crate) fn group_names<'a>(
    members: impl Iterator<Item = &'a ConsumerMember>,
    group: &'a ConsumerGroup,
) -> BTreeSet<&'a str> {
    let mut all = BTreeSet::new();
    for m in members {
        all.extend(subscribed_names(m, group));
    }
    all
}

/// The group hash over the existing subscribed topics, ordered by name; 0 when
/// none exists (`Utils.computeGroupHash`; only equality matters, §9.4).
pub(crate) fn metadata_hash(names: &BTreeSet<&str>, image: &MetadataImage) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    let mut any = false;
    for name in names {
        if let Some(topic) = image.topic(name) {
            any = true;
            h.write_u64(topic.hash());
        }
    }
    if any { h.finish().max(1) } else { 0 }
}

/// `ConsumerGroup.subscriptionType` (§5.3).
pub(crate) fn subscription_type<'a>(
    members: impl Iterator<Item = &'a ConsumerMember> + Clone,
    group: &ConsumerGroup,
) -> SubscriptionType {
    let count = members.clone().count();
    if count == 0 {
        return SubscriptionType::Homogeneous;
    }
    let regexes: BTreeSet<&str> = members.clone().filter_map(ConsumerMember::regex).collect();
    if regexes.is_empty() {
        let mut by_name: BTreeMap<&str, usize> = BTreeMap::new();
        for m in members {
            for n in m.meta.subscribed_topic_names.iter().collect::<BTreeSet<_>>() {
                *by_name.entry(n.as_str()).or_default() += 1;
            }
        }
        return if by_name.values().all(|&n| n == count) {
            SubscriptionType::Homogeneous
        } else {
            SubscriptionType::Heterogeneous
        };
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
        if let Some(name) = &m.meta.server_assignor {
            *counts.entry(name.as_str()).or_default() += 1;
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
