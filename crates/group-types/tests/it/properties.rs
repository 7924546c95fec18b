//! Properties of the codec: encode-then-decode is the identity for every
//! version, and decoding arbitrary bytes never panics.

use group_types::{MemberAssignment, Subscription, TopicPartitions, flatten, group_by_topic};
use proptest::prelude::*;

fn topic() -> impl Strategy<Value = String> {
    // Short names from a small alphabet, so lists share topics, plus some non-ASCII.
    prop_oneof![4 => "[a-c]{0,3}", 1 => "\\PC{0,4}"]
}

fn topic_partitions() -> impl Strategy<Value = Vec<TopicPartitions>> {
    prop::collection::vec(
        (topic(), prop::collection::vec(any::<i32>(), 0..5)).prop_map(|(t, p)| TopicPartitions::new(t, p)),
        0..4,
    )
}

fn user_data() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::of(prop::collection::vec(any::<u8>(), 0..16))
}

fn subscription() -> impl Strategy<Value = Subscription> {
    (
        0i16..=3,
        prop::collection::vec(topic(), 0..5),
        user_data(),
        topic_partitions(),
        any::<i32>(),
        prop::option::of(topic()),
    )
        .prop_map(|(version, topics, user_data, owned, generation_id, rack_id)| Subscription {
            version,
            topics,
            user_data,
            // Fields a version lacks decode as their defaults, so only set the ones it has.
            owned_partitions: if version >= 1 { owned } else { Vec::new() },
            generation_id: if version >= 2 { generation_id } else { -1 },
            rack_id: if version >= 3 { rack_id } else { None },
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn subscription_round_trips(sub in subscription()) {
        let bytes = sub.encode().unwrap();
        prop_assert_eq!(Subscription::decode(&bytes).unwrap(), sub.clone());
        prop_assert_eq!(Subscription::decode_topics(&bytes).unwrap(), sub.topics);
    }

    #[test]
    fn assignment_round_trips(version in 0i16..=3, partitions in topic_partitions(), user_data in user_data()) {
        let assignment = MemberAssignment { version, partitions, user_data };
        let bytes = assignment.encode().unwrap();
        prop_assert_eq!(MemberAssignment::decode(&bytes).unwrap(), assignment);
    }

    #[test]
    fn grouping_keeps_every_partition_under_one_entry_per_topic(groups in topic_partitions()) {
        let flat = flatten(&groups);
        let grouped = group_by_topic(&flat);
        let topics: std::collections::HashSet<&str> = grouped.iter().map(|g| g.topic.as_str()).collect();
        prop_assert_eq!(topics.len(), grouped.len(), "one entry per topic");
        let (mut before, mut after) = (flat.clone(), flatten(&grouped));
        before.sort();
        after.sort();
        prop_assert_eq!(before, after);
        prop_assert_eq!(group_by_topic(&flatten(&grouped)), grouped, "grouping is idempotent");
    }

    #[test]
    fn a_prefix_of_valid_bytes_is_an_error_not_a_panic(sub in subscription(), cut in any::<prop::sample::Index>()) {
        let bytes = sub.encode().unwrap();
        let cut = cut.index(bytes.len());
        prop_assert!(Subscription::decode(&bytes[..cut]).is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = Subscription::decode(&bytes);
        let _ = Subscription::decode_topics(&bytes);
        let _ = MemberAssignment::decode(&bytes);
    }

    #[test]
    fn decoding_mutated_valid_bytes_never_panics(
        sub in subscription(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = sub.encode().unwrap();
        for (at, value) in flips {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        // Either a typed error or a value that encodes again: never a panic.
        if let Ok(decoded) = Subscription::decode(&bytes) {
            prop_assert!(decoded.encode().is_ok());
        }
        let _ = MemberAssignment::decode(&bytes);
    }
}
