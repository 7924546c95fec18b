//! Answers of Kafka 4.2's own `SimpleAssignor` classes (compiled from the
//! 4.2 branch and run on these inputs, members put into their `HashMap` in
//! id order, current targets built as `Assignment.fromRecord` builds them
//! from ascending lists), for the cases where Java's hash-table order
//! decides: `computeIfAbsent` putting new keys first and growing the table
//! on a hit, Kafka's filling step failing (`NoSuchElementException`), and
//! red-black tree bins in the sets of members that hold every 64th or 128th
//! partition. The large answers are kept as a 64-bit FNV-1a digest of
//! Kafka's output (one line per member in id order: the id, then
//! ` t:p,p,...` per topic index), with a few members spelled out.

use std::collections::BTreeMap;

use group_assignors::server::{
    GroupSpec, MemberSpec, MemberTarget, ShareAssignor, ShareGroupSpec, SimpleAssignor, SubscriptionType,
};
use group_types::TopicId;
use rstest::rstest;

/// A member: id, subscribed topic indices, current target (topic index, partitions).
type Input = (String, Vec<usize>, Vec<(usize, Vec<i32>)>);

/// A group over topics `ids` (with partition counts), every partition
/// assignable unless `assignable` says otherwise.
struct Case {
    kind: SubscriptionType,
    topics: Vec<(TopicId, u32)>,
    members: Vec<Input>,
    assignable: Option<Vec<(usize, Vec<i32>)>>,
}

impl Case {
    /// Kafka's answer in the digest's text form, or `ERROR <message>`.
    fn run(&self) -> String {
        let ids: Vec<TopicId> = self.topics.iter().map(|t| t.0).collect();
        let subs: Vec<Vec<TopicId>> = self
            .members
            .iter()
            .map(|(_, s, _)| {
                let mut v: Vec<TopicId> = s.iter().map(|&i| ids[i]).collect();
                v.sort();
                v
            })
            .collect();
        let current: Vec<MemberTarget> = self
            .members
            .iter()
            .map(|(_, _, c)| {
                let mut v: Vec<(TopicId, Vec<i32>)> = c.iter().map(|(t, ps)| (ids[*t], ps.clone())).collect();
                v.sort();
                MemberTarget { topics: v }
            })
            .collect();
        let spec = GroupSpec {
            members: self
                .members
                .iter()
                .enumerate()
                .map(|(m, (id, _, _))| MemberSpec {
                    member_id: id,
                    instance_id: None,
                    rack_id: None,
                    subscribed_topics: &subs[m],
                    current: &current[m],
                })
                .collect(),
            subscription_type: self.kind,
        };
        let counts: BTreeMap<TopicId, u32> = self.topics.iter().copied().collect();
        let describer = |t: TopicId| counts.get(&t).copied();
        let allowed: Option<BTreeMap<TopicId, Vec<i32>>> =
            self.assignable.as_ref().map(|a| a.iter().map(|(t, ps)| (ids[*t], ps.clone())).collect());
        let assignable =
            |t: TopicId, p: i32| allowed.as_ref().is_none_or(|a| a.get(&t).is_some_and(|ps| ps.contains(&p)));
        let out = match SimpleAssignor
            .assign(&ShareGroupSpec { group: &spec, assignable: &assignable }, &describer)
        {
            Ok(out) => out,
            Err(e) => return format!("ERROR {}", e.message),
        };
        let mut lines: Vec<String> = self
            .members
            .iter()
            .zip(&out.members)
            .map(|((id, _, _), t)| {
                let mut line = id.clone();
                for (i, topic) in ids.iter().enumerate() {
                    let ps = t.partitions(*topic);
                    if !ps.is_empty() {
                        let ps: Vec<String> = ps.iter().map(|p| p.to_string()).collect();
                        line.push_str(&format!(" {i}:{}", ps.join(",")));
                    }
                }
                line
            })
            .collect();
        lines.sort();
        lines.iter().map(|l| format!("{l}\n")).collect()
    }
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn topic(id: u128, count: u32) -> (TopicId, u32) {
    (TopicId::from_u128(id), count)
}

fn parts(text: &str) -> Vec<i32> {
    text.split(',').map(|p| p.parse().expect("partition")).collect()
}

fn member(id: &str, subs: &[usize], current: &[(usize, &str)]) -> Input {
    (id.to_owned(), subs.to_vec(), current.iter().map(|&(t, ps)| (t, parts(ps))).collect())
}

/// Fresh members over two topics: `computeIfAbsent` puts each new partition
/// at the head of its bucket, so in a shared bucket the second topic's
/// partition comes first.
#[test]
fn compute_if_absent_puts_new_keys_first() {
    let case = Case {
        kind: SubscriptionType::Homogeneous,
        topics: vec![
            topic(0x6dd8ee91f9089033e5c1c63b09355ce6, 10),
            topic(0xe1878d97e6617bcece117d479e40dee4, 3),
        ],
        members: vec![member("m111", &[0, 1], &[]), member("m94", &[0, 1], &[])],
        assignable: None,
    };
    assert_eq!(case.run(), "m111 0:0,4,6,7,9 1:0,1\nm94 0:1,2,3,5,8 1:2\n");
}

/// Stale partitions (beyond the count of 4) held by two members: the
/// partition map grows on a `computeIfAbsent` hit after its seventh key, and
/// is walked at 16 buckets.
#[test]
fn compute_if_absent_grows_on_a_hit() {
    let case = Case {
        kind: SubscriptionType::Homogeneous,
        topics: vec![topic(0x49af2de244fed97c412d354f4e6ea370, 4)],
        members: vec![
            member("c33cbd69-1af1-cd84-b9df-d7155326c056", &[0], &[(0, "3")]),
            member("m192", &[0], &[(0, "1,4,5,6")]),
            member("member-11353", &[0], &[]),
            member("m18", &[0], &[(0, "3")]),
            member("526b47dd", &[0], &[]),
            member("member-26257", &[0], &[(0, "0,1,2,5,6")]),
            member("m72", &[0], &[]),
            member("34504a6e", &[0], &[]),
        ],
        assignable: None,
    };
    assert_eq!(
        case.run(),
        "34504a6e 0:0\n526b47dd 0:0\nc33cbd69-1af1-cd84-b9df-d7155326c056 0:3\nm18 0:3\nm192 0:5\n\
         m72 0:2\nmember-11353 0:2\nmember-26257 0:5\n"
    );
}

/// A member holding partitions that are not assignable keeps them, so the
/// partitions want more members than there is room for: Kafka's filling step
/// asks its emptied iterator for one more.
#[test]
fn filling_fails_as_kafka_does() {
    let case = Case {
        kind: SubscriptionType::Homogeneous,
        topics: vec![topic(0x6df22d091e40bba1d892f81d8d7b2f5c, 1)],
        members: vec![
            member("m95", &[0], &[(0, "-1,1,2")]),
            member("member-54445", &[0], &[]),
            member("1573e7d4-f912-75bc-254d-9fa9b8336ad1", &[0], &[]),
        ],
        assignable: Some(vec![(0, vec![0])]),
    };
    assert!(case.run().contains("NoSuchElementException"), "{}", case.run());
}

const A: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
const B: u128 = 0x1111_1111_1111_1111_2222_2222_2222_2222;

fn every(from: usize, count: usize, step: usize) -> String {
    (from..count).step_by(step).map(|p| p.to_string()).collect::<Vec<_>>().join(",")
}

/// 64 members that hold every 64th of 2,048 partitions, and a 65th joining:
/// each holder's `HashSet<TopicIdPartition>` keeps its 32 partitions in one
/// bucket, a red-black tree bin, whose order decides what it gives up.
fn tree_bins_homogeneous() -> Case {
    let members = (0..65)
        .map(|k| {
            let current = if k < 64 { vec![(0, every(k, 2048, 64))] } else { Vec::new() };
            (format!("member-{k:05}"), vec![0], current.into_iter().map(|(t, ps)| (t, parts(&ps))).collect())
        })
        .collect();
    Case { kind: SubscriptionType::Homogeneous, topics: vec![topic(A, 2048)], members, assignable: None }
}

/// The same shape per topic in a heterogeneous group of 129: every member on
/// topic 0 (every 128th of 2,048), even members also on topic 1 (every 64th
/// of 1,000).
fn tree_bins_heterogeneous() -> Case {
    let members = (0..129usize)
        .map(|k| {
            let mut current = Vec::new();
            if k < 128 {
                current.push((0, parts(&every(k, 2048, 128))));
                if k % 2 == 0 {
                    current.push((1, parts(&every(k / 2, 1000, 64))));
                }
            }
            let subs = if k % 2 == 0 { vec![0, 1] } else { vec![0] };
            (format!("member-{k:05}"), subs, current)
        })
        .collect();
    Case {
        kind: SubscriptionType::Heterogeneous,
        topics: vec![topic(A, 2048), topic(B, 1000)],
        members,
        assignable: None,
    }
}

#[rstest]
#[case::homogeneous(
    tree_bins_homogeneous(),
    0x5a6b_2584_c1d3_911a,
    "member-00000 0:0,64,128,192,256,320,384,448,512,640,704,768,832,896,960,1024,1088,1152,1216,1280,\
     1344,1408,1472,1536,1600,1664,1728,1792,1856,1920,1984"
)]
#[case::heterogeneous(
    tree_bins_heterogeneous(),
    0x8e40_eb55_eebc_52e2,
    "member-00000 0:0,128,256,512,640,768,896,1024,1152,1280,1408,1536,1664,1792,1920 \
     1:0,64,128,256,320,384,448,512,576,640,704,768,832,896,960"
)]
fn tree_bins_order_as_in_kafka(#[case] case: Case, #[case] digest: u64, #[case] first: &str) {
    let out = case.run();
    assert_eq!(out.lines().next(), Some(first));
    assert_eq!(fnv1a(&out), digest, "Kafka's answer differs:\n{out}");
}
