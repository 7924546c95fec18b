//! Bad input gets a typed error from every assignor; edge cases that are not
//! errors give the documented results.

use std::sync::Arc;

use group_assignors::{AssignError, PartitionAssignor, StickyAssignor, StickyAssignorUserData, get_assignor};
use group_types::{MemberSubscription, TopicPartition};
use rstest::rstest;

fn assignor(name: &str) -> Arc<dyn PartitionAssignor> {
    get_assignor(name).expect("built in")
}

fn t(p: i32) -> TopicPartition {
    TopicPartition::new("t", p)
}

const ALL: [&str; 4] = ["range", "roundrobin", "sticky", "cooperative-sticky"];

#[rstest]
fn duplicate_member_is_refused(#[values("range", "roundrobin", "sticky", "cooperative-sticky")] name: &str) {
    let ms = [
        MemberSubscription::new("a", ["t"]),
        MemberSubscription::new("b", ["t"]),
        MemberSubscription::new("a", ["u"]),
    ];
    assert_eq!(
        assignor(name).assign(&ms, &[t(0)]),
        Err(AssignError::DuplicateMember { member_id: "a".into() })
    );
}

#[rstest]
fn duplicate_partition_is_refused(
    #[values("range", "roundrobin", "sticky", "cooperative-sticky")] name: &str,
) {
    let ms = [MemberSubscription::new("a", ["t"])];
    let parts = [t(0), t(1), TopicPartition::new("u", 0), t(1)];
    assert_eq!(assignor(name).assign(&ms, &parts), Err(AssignError::DuplicatePartition { partition: t(1) }));
}

#[rstest]
fn negative_partition_is_refused(
    #[values("range", "roundrobin", "sticky", "cooperative-sticky")] name: &str,
) {
    let ms = [MemberSubscription::new("a", ["t"])];
    assert_eq!(
        assignor(name).assign(&ms, &[t(0), t(-1)]),
        Err(AssignError::NegativePartition { partition: t(-1) })
    );
}

#[rstest]
fn rack_list_of_wrong_length_is_refused(
    #[values("range", "roundrobin", "sticky", "cooperative-sticky")] name: &str,
) {
    let ms = [MemberSubscription::new("a", ["t"]).with_rack("r1")];
    let racks = vec![vec![Arc::<str>::from("r1")]];
    assert_eq!(
        assignor(name).assign_with_racks(&ms, &[t(0), t(1)], &racks),
        Err(AssignError::RackListLengthMismatch { partitions: 2, racks: 1 })
    );
}

#[test]
fn zero_members_give_an_empty_map() {
    for name in ALL {
        assert_eq!(assignor(name).assign(&[], &[t(0), t(1)]), Ok(Default::default()), "{name}");
    }
}

#[test]
fn gaps_in_partition_numbers_are_assigned_as_given() {
    let ms = [MemberSubscription::new("a", ["t"]), MemberSubscription::new("b", ["t"])];
    let parts = [t(7), t(3), t(5)];
    for name in ALL {
        let out = assignor(name).assign(&ms, &parts).expect("valid input");
        let mut all: Vec<i32> = out.values().flatten().map(|p| p.partition).collect();
        all.sort_unstable();
        assert_eq!(all, [3, 5, 7], "{name}");
    }
    let range = assignor("range").assign(&ms, &parts).expect("valid input");
    assert_eq!(range["a"], [t(3), t(5)]);
}

#[test]
fn member_without_existing_topics_gets_nothing_but_is_listed() {
    let ms = [
        MemberSubscription::new("a", ["t"]),
        MemberSubscription::new("b", ["gone"]),
        MemberSubscription::new("c", Vec::<String>::new()),
    ];
    for name in ALL {
        let out = assignor(name).assign(&ms, &[t(0), t(1)]).expect("valid input");
        assert_eq!(out["a"].len(), 2, "{name}");
        assert!(out["b"].is_empty() && out["c"].is_empty(), "{name}");
    }
}

#[test]
fn user_data_round_trips_and_rejects_garbage() {
    let v0 = StickyAssignorUserData {
        previous_assignment: vec![t(1), TopicPartition::new("u", 2), t(3)],
        generation: None,
    };
    let back = StickyAssignorUserData::decode(&v0.encode()).expect("valid");
    assert_eq!(back.generation, None);
    assert_eq!(back.previous_assignment, [t(1), t(3), TopicPartition::new("u", 2)]);
    for bad in [&[0u8, 0, 0][..], &[0, 0, 0, 1, 0, 5, b'a'], &[255, 255, 255, 255], &[0, 0, 0, 0, 1, 2]] {
        assert!(
            matches!(StickyAssignorUserData::decode(bad), Err(AssignError::InvalidUserData { .. })),
            "{bad:?}"
        );
    }
    assert!(matches!(
        StickyAssignorUserData::decode(&[0x7f, 0xff, 0xff, 0xff]),
        Err(AssignError::InvalidUserData { .. })
    ));
}

#[test]
fn unparsable_user_data_means_owning_nothing() {
    let ms = [
        MemberSubscription { user_data: Some(vec![1, 2, 3]), ..MemberSubscription::new("a", ["t"]) },
        MemberSubscription::new("b", ["t"]).with_owned_partitions([t(0), t(1)], 5),
    ];
    let out = StickyAssignor.assign(&ms, &[t(0), t(1)]).expect("valid input");
    assert_eq!(out["a"].len(), 1);
    assert_eq!(out["b"].len(), 1);
}

#[test]
fn assign_with_previous_keeps_and_invalidates_duplicates() {
    let ms = [
        MemberSubscription::new("a", ["t"]),
        MemberSubscription::new("b", ["t"]),
        MemberSubscription::new("c", ["t"]),
    ];
    let parts: Vec<_> = (0..6).map(t).collect();
    let previous = [
        ("a".to_owned(), vec![t(0), t(1), t(2)]),
        ("b".to_owned(), vec![t(3), t(4), t(5)]),
        ("gone".to_owned(), vec![t(0)]),
    ]
    .into_iter()
    .collect();
    let out = StickyAssignor.assign_with_previous(&ms, &parts, &previous).expect("valid input");
    assert_eq!(out["a"].len(), 2);
    assert_eq!(out["b"].len(), 2);
    assert_eq!(out["c"].len(), 2);
    assert!(out["a"].iter().all(|p| p.partition < 3));
    assert!(out["b"].iter().all(|p| p.partition >= 3));
}
