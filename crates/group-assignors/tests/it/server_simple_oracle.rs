//! Kafka's recorded answers for `simple`: every target assignment Kafka
//! 4.2.1's coordinator computed in the shared share-group oracle scenarios
//! (`oracle-share`, the files not divisible by 3; the number and step of each
//! case name its scenario and step), replayed through the assignor alone.
//!
//! Each case is what the coordinator gave the assignor at that step: the
//! topics of the metadata image (name = id / partition count), the
//! initialized partitions (the share state before the step), and per member
//! its subscribed topic names, its target before the step and, after `->`,
//! the target Kafka computed. Names of topics that do not exist are dropped,
//! as Kafka's topic resolver drops them; members are given in id order and
//! numbered by the emulated Java order, as Kafka numbers them.

use std::collections::{BTreeMap, BTreeSet};

use group_assignors::server::{
    GroupSpec, MemberSpec, MemberTarget, ShareAssignor, ShareGroupSpec, SimpleAssignor, SubscriptionType,
};
use group_types::TopicId;
use rstest::rstest;

struct Case {
    topics: BTreeMap<String, (TopicId, u32)>,
    initialized: BTreeSet<(TopicId, i32)>,
    members: Vec<(String, Vec<TopicId>, MemberTarget, MemberTarget)>,
}

/// `"foo:0,1 bar:2"` against the topics (unknown names dropped).
fn target(text: &str, topics: &BTreeMap<String, (TopicId, u32)>) -> MemberTarget {
    let mut out: Vec<(TopicId, Vec<i32>)> = text
        .split_whitespace()
        .filter_map(|w| {
            let (name, ps) = w.split_once(':').expect("topic:partitions");
            let id = topics.get(name)?.0;
            Some((id, ps.split(',').map(|p| p.parse().expect("partition")).collect()))
        })
        .collect();
    out.sort();
    MemberTarget { topics: out }
}

fn parse(topics: &str, initialized: &str, members: &str) -> Case {
    let topics: BTreeMap<String, (TopicId, u32)> = topics
        .split_whitespace()
        .map(|w| {
            let (name, rest) = w.split_once('=').expect("name=id/count");
            let (id, count) = rest.split_once('/').expect("id/count");
            (name.to_owned(), (id.parse().expect("topic id"), count.parse().expect("count")))
        })
        .collect();
    let initialized = target(initialized, &topics)
        .topics
        .into_iter()
        .flat_map(|(t, ps)| ps.into_iter().map(move |p| (t, p)))
        .collect();
    let members = members
        .split(" | ")
        .map(|m| {
            let (id, rest) = m.split_once(" [").expect("id [topics]");
            let (names, rest) = rest.split_once("] {").expect("topics] {current}");
            let (current, rest) = rest.split_once("} -> {").expect("{current} -> {expected}");
            let expected = rest.strip_suffix('}').expect("{expected}");
            let mut subscribed: Vec<TopicId> =
                names.split(',').filter_map(|n| topics.get(n).map(|t| t.0)).collect();
            subscribed.sort();
            (id.to_owned(), subscribed, target(current, &topics), target(expected, &topics))
        })
        .collect();
    Case { topics, initialized, members }
}

#[rstest]
#[case::s01_0("Homogeneous", "foo=LCa0a2j_xo_5m0U8HTBBNA/6", "", "m1 [foo] {} -> {}")]
#[case::s01_1(
    "Homogeneous",
    "foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "foo:0,1,2,3,4,5",
    "m1 [foo] {} -> {foo:0,1,2,3,4,5}"
)]
#[case::s05_5(
    "Homogeneous",
    "foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "foo:0,1,2,3,4,5",
    "m1 [foo] {foo:0,1,2,3,4,5} -> {foo:1,2,3} | m2 [foo] {} -> {foo:0,4,5}"
)]
#[case::s07_0("Homogeneous", "foo=LCa0a2j_xo_5m0U8HTBBNA/2", "", "m1 [foo] {} -> {}")]
#[case::s07_1("Homogeneous", "foo=LCa0a2j_xo_5m0U8HTBBNA/2", "foo:0,1", "m1 [foo] {} -> {foo:0,1}")]
#[case::s07_2(
    "Homogeneous",
    "foo=LCa0a2j_xo_5m0U8HTBBNA/2",
    "foo:0,1",
    "m1 [foo] {foo:0,1} -> {foo:1} | m2 [foo] {} -> {foo:0}"
)]
#[case::s07_3(
    "Homogeneous",
    "foo=LCa0a2j_xo_5m0U8HTBBNA/2",
    "foo:0,1",
    "m1 [foo] {foo:1} -> {foo:0,1} | m2 [foo] {foo:0} -> {foo:0} | m3 [foo] {} -> {foo:1}"
)]
#[case::s10_5(
    "Homogeneous",
    "foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "foo:0,1,2,3,4,5",
    "m2 [foo] {} -> {foo:0,1,2,3,4,5}"
)]
#[case::s11_7(
    "Homogeneous",
    "foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "foo:0,1,2,3,4,5",
    "m2 [foo] {foo:0,4,5} -> {foo:0,1,2,3,4,5}"
)]
#[case::s13_0("Homogeneous", "foo=LCa0a2j_xo_5m0U8HTBBNA/6", "", "m1 [bar,foo] {} -> {}")]
#[case::s13_1(
    "Homogeneous",
    "foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "foo:0,1,2,3,4,5",
    "m1 [bar,foo] {} -> {foo:0,1,2,3,4,5}"
)]
#[case::s13_3(
    "Homogeneous",
    "bar=ZS4pM5bhR_6Ml6VB3NoZrQ/3 foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "foo:0,1,2,3,4,5",
    "m1 [bar,foo] {foo:0,1,2,3,4,5} -> {foo:0,1,2,3,4,5}"
)]
#[case::s13_4(
    "Homogeneous",
    "bar=ZS4pM5bhR_6Ml6VB3NoZrQ/3 foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "bar:0,1,2 foo:0,1,2,3,4,5",
    "m1 [bar,foo] {foo:0,1,2,3,4,5} -> {bar:0,1,2 foo:0,1,2,3,4,5}"
)]
#[case::s14_0("Homogeneous", "foo=LCa0a2j_xo_5m0U8HTBBNA/3", "", "m1 [foo] {} -> {}")]
#[case::s14_1("Homogeneous", "foo=LCa0a2j_xo_5m0U8HTBBNA/3", "foo:0,1,2", "m1 [foo] {} -> {foo:0,1,2}")]
#[case::s14_3(
    "Homogeneous",
    "foo=LCa0a2j_xo_5m0U8HTBBNA/5",
    "foo:0,1,2",
    "m1 [foo] {foo:0,1,2} -> {foo:0,1,2}"
)]
#[case::s14_4(
    "Homogeneous",
    "foo=LCa0a2j_xo_5m0U8HTBBNA/5",
    "foo:0,1,2,3,4",
    "m1 [foo] {foo:0,1,2} -> {foo:0,1,2,3,4}"
)]
#[case::s16_1(
    "Homogeneous",
    "foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "foo:0,1,2,3,4,5",
    "m1 [foo] {} -> {foo:0,2,4} | m2 [foo] {} -> {foo:1,3,5}"
)]
#[case::s16_5(
    "Homogeneous",
    "foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "foo:0,1,2,3,4,5",
    "m1 [foo] {foo:0,2,4} -> {foo:0,2,4} | m3 [foo] {} -> {foo:1,3,5}"
)]
#[case::s23_0(
    "Homogeneous",
    "bar=ZS4pM5bhR_6Ml6VB3NoZrQ/3 foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "",
    "m1 [foo] {} -> {}"
)]
#[case::s23_1(
    "Heterogeneous",
    "bar=ZS4pM5bhR_6Ml6VB3NoZrQ/3 foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "foo:0,1,2,3,4,5",
    "m1 [foo] {} -> {foo:0,2,4} | m2 [bar,foo] {} -> {foo:1,3,5}"
)]
#[case::s23_2(
    "Heterogeneous",
    "bar=ZS4pM5bhR_6Ml6VB3NoZrQ/3 foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "bar:0,1,2 foo:0,1,2,3,4,5",
    "m1 [foo] {foo:0,2,4} -> {foo:0,2,4} | m2 [bar,foo] {foo:1,3,5} -> {bar:0,2 foo:1,3,5} | m3 [bar] {} -> {bar:1}"
)]
#[case::s23_8(
    "Heterogeneous",
    "bar=ZS4pM5bhR_6Ml6VB3NoZrQ/3 foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "bar:0,1,2 foo:0,1,2,3,4,5",
    "m1 [foo] {foo:0,2,4} -> {foo:0,2,4} | m2 [bar,foo] {bar:0,2 foo:1,3,5} -> {bar:0,1,2 foo:1,3,5}"
)]
#[case::s28_1(
    "Homogeneous",
    "bar=ZS4pM5bhR_6Ml6VB3NoZrQ/3 foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "foo:0,1,2,3,4,5",
    "m1 [foo] {} -> {foo:0,1,2,3,4,5}"
)]
#[case::s28_6(
    "Homogeneous",
    "bar=ZS4pM5bhR_6Ml6VB3NoZrQ/3 foo=LCa0a2j_xo_5m0U8HTBBNA/6",
    "",
    "m2 [foo] {} -> {}"
)]
fn replays_kafkas_targets(
    #[case] kind: &str,
    #[case] topics: &str,
    #[case] initialized: &str,
    #[case] members: &str,
) {
    let case = parse(topics, initialized, members);
    let spec = GroupSpec {
        members: case
            .members
            .iter()
            .map(|(id, subscribed, current, _)| MemberSpec {
                member_id: id,
                instance_id: None,
                rack_id: None,
                subscribed_topics: subscribed,
                current,
            })
            .collect(),
        subscription_type: match kind {
            "Homogeneous" => SubscriptionType::Homogeneous,
            _ => SubscriptionType::Heterogeneous,
        },
    };
    let counts: BTreeMap<TopicId, u32> = case.topics.values().copied().collect();
    let describer = |t: TopicId| counts.get(&t).copied();
    let assignable = |t: TopicId, p: i32| case.initialized.contains(&(t, p));
    let out = SimpleAssignor
        .assign(&ShareGroupSpec { group: &spec, assignable: &assignable }, &describer)
        .expect("assigns");
    for ((id, _, _, expected), got) in case.members.iter().zip(&out.members) {
        assert_eq!(got, expected, "member {id}");
    }
}
