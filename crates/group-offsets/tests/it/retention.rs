//! KIP-211 retention (`kafka-semantics.md` §6.5), one table per rule.

use std::collections::{BTreeSet, HashSet};

use group_offsets::{ExpirationRule, RetentionGroup, TopicSet, expired_offsets, retention_ms_from_minutes};
use group_types::{GroupState, OffsetAndMetadata, PartitionMap, TopicPartition};
use proptest::prelude::*;
use rstest::rstest;

const RETENTION: i64 = 1_000;

fn tp(topic: &str, partition: i32) -> TopicPartition {
    TopicPartition::new(topic, partition)
}

/// `(topic, partition, commit_time, expire_time)` rows as a group's offsets.
fn offsets(rows: &[(&str, i32, i64, Option<i64>)]) -> PartitionMap<OffsetAndMetadata> {
    let mut out = PartitionMap::new();
    for (topic, partition, commit, expire) in rows {
        let offset = OffsetAndMetadata { expire_time: *expire, ..OffsetAndMetadata::new(1, *commit) };
        out.entry(topic.to_string()).or_default().insert(*partition, offset);
    }
    out
}

fn names(expired: Vec<TopicPartition>) -> Vec<String> {
    expired.iter().map(ToString::to_string).collect()
}

/// An Empty group that used group management: everything expires together,
/// `retention` after it became Empty, whatever the commit times.
#[rstest]
#[case::just_before(5_000, 5_999, &[])]
#[case::exactly_at(5_000, 6_000, &["a-0", "a-1", "b-0"])]
#[case::long_after(5_000, 100_000, &["a-0", "a-1", "b-0"])]
// Committed long ago, emptied recently: nothing yet, even though every commit is older than retention.
#[case::old_commits_recent_empty(50_000, 50_500, &[])]
fn empty_group_expires_together(#[case] emptied_at: i64, #[case] now: i64, #[case] expected: &[&str]) {
    let data = offsets(&[("a", 0, 10, None), ("a", 1, 4_000, None), ("b", 0, 4_900, None)]);
    for protocol in ["consumer", "connect", ""] {
        let group = RetentionGroup::new(GroupState::Empty, Some(emptied_at)).with_protocol_type(protocol);
        assert_eq!(group.expiration_rule(), ExpirationRule::AllSinceStateChange);
        assert_eq!(
            names(expired_offsets(&group, &data, now, RETENTION)),
            expected,
            "protocol type {protocol:?}"
        );
    }
}

/// Old records with no state timestamp fall back to each offset's commit time.
#[rstest]
#[case::none_yet(1_009, &[])]
#[case::first(1_010, &["a-0"])]
#[case::two(1_499, &["a-0"])]
#[case::all(2_000, &["a-0", "a-1"])]
fn empty_group_without_state_timestamp_uses_commit_times(#[case] now: i64, #[case] expected: &[&str]) {
    let data = offsets(&[("a", 0, 10, None), ("a", 1, 1_000, None)]);
    let group = RetentionGroup::new(GroupState::Empty, None).with_protocol_type("consumer");
    assert_eq!(names(expired_offsets(&group, &data, now, RETENTION)), expected);
}

/// A Stable consumer group keeps every subscribed topic; unsubscribed ones go
/// by commit time.
#[rstest]
#[case::young(1_099, &[])]
#[case::old_unsubscribed(1_100, &["gone-0"])]
#[case::all_old(10_000, &["gone-0", "gone-1"])]
fn stable_consumer_group_expires_unsubscribed_topics(#[case] now: i64, #[case] expected: &[&str]) {
    let data = offsets(&[
        ("kept", 0, 0, None),
        ("gone", 0, 100, None),
        ("gone", 1, 2_000, None),
        ("kept", 1, 0, Some(0)),
    ]);
    let subscribed: BTreeSet<String> = ["kept".to_owned()].into();
    let group = RetentionGroup::new(GroupState::Stable, Some(0))
        .with_protocol_type("consumer")
        .with_subscribed_topics(&subscribed);
    assert_eq!(group.expiration_rule(), ExpirationRule::UnsubscribedSinceCommit);
    assert_eq!(names(expired_offsets(&group, &data, now, RETENTION)), expected);
}

/// Groups that may never lose offsets, however old or explicitly expired.
#[rstest]
#[case::preparing(GroupState::PreparingRebalance, Some("consumer"), true)]
#[case::completing(GroupState::CompletingRebalance, Some("consumer"), true)]
#[case::dead_with_protocol(GroupState::Dead, Some("consumer"), true)]
#[case::stable_unknown_subscriptions(GroupState::Stable, Some("consumer"), false)]
#[case::stable_non_consumer(GroupState::Stable, Some("connect"), true)]
#[case::preparing_non_consumer(GroupState::PreparingRebalance, Some("connect"), true)]
fn active_groups_never_expire(
    #[case] state: GroupState,
    #[case] protocol: Option<&str>,
    #[case] known: bool,
) {
    let data = offsets(&[("t", 0, 0, None), ("u", 0, 0, Some(1)), ("v", 0, i64::MIN, None)]);
    let subscribed: HashSet<String> = HashSet::new();
    let mut group = RetentionGroup::new(state, Some(0));
    if let Some(protocol) = protocol {
        group = group.with_protocol_type(protocol);
    }
    if known {
        group = group.with_subscribed_topics(&subscribed);
    }
    assert_eq!(group.expiration_rule(), ExpirationRule::Never);
    assert!(expired_offsets(&group, &data, i64::MAX, RETENTION).is_empty());
}

/// A simple group (no protocol type): every offset by its own commit time.
#[rstest]
#[case::none(1_099, &[])]
#[case::first(1_100, &["t-0"])]
#[case::both(5_000, &["t-0", "t-1"])]
fn simple_group_expires_by_commit_time(#[case] now: i64, #[case] expected: &[&str]) {
    let data = offsets(&[("t", 0, 100, None), ("t", 1, 4_000, None)]);
    // The state timestamp is irrelevant for a simple group.
    let group = RetentionGroup::new(GroupState::Empty, Some(1_000_000));
    assert_eq!(group.expiration_rule(), ExpirationRule::AllSinceCommit);
    assert_eq!(names(expired_offsets(&group, &data, now, RETENTION)), expected);
}

/// An explicit expire timestamp (v2-4 commits) replaces the arithmetic, but
/// only where the group's rule allows expiry at all.
#[rstest]
// Empty consumer group emptied at 0: retention passed (now 5_000) but expiry is in the future.
#[case::empty_future_expiry(GroupState::Empty, Some("consumer"), 5_000, 9_000, false)]
// Retention not passed (now 500) but the explicit expiry has.
#[case::empty_past_expiry(GroupState::Empty, Some("consumer"), 500, 400, true)]
#[case::empty_at_expiry(GroupState::Empty, Some("consumer"), 400, 400, true)]
#[case::simple_future_expiry(GroupState::Empty, None, 5_000, 9_000, false)]
#[case::simple_past_expiry(GroupState::Empty, None, 500, 400, true)]
#[case::stable_unsubscribed_past_expiry(GroupState::Stable, Some("consumer"), 500, 400, true)]
#[case::preparing_past_expiry(GroupState::PreparingRebalance, Some("consumer"), 500, 400, false)]
fn explicit_expire_timestamp(
    #[case] state: GroupState,
    #[case] protocol: Option<&str>,
    #[case] now: i64,
    #[case] expire: i64,
    #[case] expired: bool,
) {
    let data = offsets(&[("unsubscribed", 0, 0, Some(expire))]);
    let subscribed = vec!["other".to_owned()];
    let mut group = RetentionGroup::new(state, Some(0)).with_subscribed_topics(&subscribed);
    if let Some(protocol) = protocol {
        group = group.with_protocol_type(protocol);
    }
    assert_eq!(!expired_offsets(&group, &data, now, RETENTION).is_empty(), expired);
}

#[test]
fn a_subscribed_topic_keeps_an_explicitly_expired_offset() {
    let data = offsets(&[("t", 0, 0, Some(1))]);
    let subscribed: BTreeSet<String> = ["t".to_owned()].into();
    let group = RetentionGroup::new(GroupState::Stable, Some(0))
        .with_protocol_type("consumer")
        .with_subscribed_topics(&subscribed);
    assert!(expired_offsets(&group, &data, 1_000_000, RETENTION).is_empty());
}

#[test]
fn pending_commits_are_skipped() {
    let data = offsets(&[("t", 0, 0, None), ("t", 1, 0, None), ("u", 0, 0, None)]);
    let pending = [tp("t", 1)];
    let group =
        RetentionGroup::new(GroupState::Empty, Some(0)).with_protocol_type("consumer").with_pending(&pending);
    assert_eq!(names(expired_offsets(&group, &data, 10_000, RETENTION)), ["t-0", "u-0"]);
}

#[rstest]
// `now - base` saturates instead of wrapping around into "expired" or "not expired".
#[case::huge_span(i64::MIN, i64::MAX, true)]
#[case::future_commit(i64::MAX, i64::MIN, false)]
#[case::commit_in_future(10_000, 0, false)]
fn arithmetic_does_not_overflow(#[case] commit: i64, #[case] now: i64, #[case] expired: bool) {
    let data = offsets(&[("t", 0, commit, None)]);
    let group = RetentionGroup::new(GroupState::Empty, None);
    assert_eq!(!expired_offsets(&group, &data, now, RETENTION).is_empty(), expired);
}

#[rstest]
#[case::one_minute(1, 60_000)]
#[case::default_week(10_080, 604_800_000)]
#[case::max(i32::MAX, 2_147_483_647 * 60_000)]
fn retention_minutes_in_64_bits(#[case] minutes: i32, #[case] ms: i64) {
    assert_eq!(retention_ms_from_minutes(minutes), ms);
}

#[test]
fn subscriptions_in_any_set_shape() {
    let sets: Vec<Box<dyn TopicSet>> = vec![
        Box::new(BTreeSet::from(["a".to_owned()])),
        Box::new(HashSet::from(["a".to_owned()])),
        Box::new(BTreeSet::from([std::sync::Arc::<str>::from("a")])),
        Box::new(HashSet::from([std::sync::Arc::<str>::from("a")])),
        Box::new(vec!["a".to_owned()]),
    ];
    for set in &sets {
        assert!(set.contains_topic("a"));
        assert!(!set.contains_topic("b"));
    }
}

/// A state other than Empty and Stable: drawn from those, not filtered, so that any
/// number of cases runs without proptest's reject limit.
fn active_state() -> impl Strategy<Value = GroupState> {
    let active: Vec<GroupState> = GroupState::ALL
        .iter()
        .copied()
        .filter(|s| !matches!(s, GroupState::Empty | GroupState::Stable))
        .collect();
    prop::sample::select(active)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A group with a protocol type outside Empty and Stable never loses an offset.
    #[test]
    fn active_groups_keep_everything(
        state in active_state(),
        commits in prop::collection::vec((0i32..8, any::<i64>(), prop::option::of(any::<i64>())), 0..16),
        now in any::<i64>(),
        retention in 0i64..i64::MAX,
    ) {
        let rows: Vec<_> = commits.iter().map(|(p, c, e)| ("t", *p, *c, *e)).collect();
        let group = RetentionGroup::new(state, Some(0)).with_protocol_type("consumer");
        prop_assert!(expired_offsets(&group, &offsets(&rows), now, retention).is_empty());
    }

    /// An Empty group with a state timestamp and no explicit expiries loses all its offsets or none.
    #[test]
    fn empty_groups_expire_all_or_nothing(
        commits in prop::collection::vec((0i32..8, any::<i64>()), 1..16),
        emptied_at in any::<i64>(),
        now in any::<i64>(),
        retention in 0i64..i64::MAX,
    ) {
        let rows: Vec<_> = commits.iter().map(|(p, c)| ("t", *p, *c, None)).collect();
        let data = offsets(&rows);
        let group = RetentionGroup::new(GroupState::Empty, Some(emptied_at)).with_protocol_type("consumer");
        let expired = expired_offsets(&group, &data, now, retention);
        prop_assert!(expired.is_empty() || expired.len() == data.values().map(|p| p.len()).sum::<usize>());
    }
}
