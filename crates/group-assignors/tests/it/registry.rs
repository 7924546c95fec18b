//! The process-wide assignor registry.

use std::sync::Arc;

use group_assignors::{AssignError, GroupAssignment, PartitionAssignor, get_assignor, register_assignor};
use group_types::{MemberSubscription, TopicPartition};

/// A user assignor that gives everything to the first member by id.
#[derive(Debug)]
struct FirstTakesAll(&'static str);

impl PartitionAssignor for FirstTakesAll {
    fn name(&self) -> &str {
        self.0
    }

    fn assign(
        &self,
        members: &[MemberSubscription],
        partitions: &[TopicPartition],
    ) -> Result<GroupAssignment, AssignError> {
        let mut out: GroupAssignment = members.iter().map(|m| (m.member_id.clone(), Vec::new())).collect();
        if let Some(mut first) = out.first_entry() {
            first.get_mut().extend(partitions.iter().cloned());
        }
        Ok(out)
    }
}

#[test]
fn built_ins_are_found_by_name() {
    for name in ["range", "roundrobin", "sticky", "cooperative-sticky"] {
        assert_eq!(get_assignor(name).map(|a| a.name().to_owned()).as_deref(), Some(name));
    }
    assert!(get_assignor("Range").is_none());
}

#[test]
fn user_assignors_register_once() {
    register_assignor(Arc::new(FirstTakesAll("first-takes-all"))).expect("new name");
    let a = get_assignor("first-takes-all").expect("registered");
    let out = a
        .assign(
            &[MemberSubscription::new("b", ["t"]), MemberSubscription::new("a", ["t"])],
            &[TopicPartition::new("t", 0)],
        )
        .expect("assigns");
    assert_eq!(out["a"], [TopicPartition::new("t", 0)]);
    assert_eq!(
        register_assignor(Arc::new(FirstTakesAll("first-takes-all"))),
        Err(AssignError::AssignorAlreadyRegistered { name: "first-takes-all".into() })
    );
}

#[test]
fn built_in_and_empty_names_are_refused() {
    assert_eq!(
        register_assignor(Arc::new(FirstTakesAll("sticky"))),
        Err(AssignError::AssignorAlreadyRegistered { name: "sticky".into() })
    );
    assert_eq!(register_assignor(Arc::new(FirstTakesAll(""))), Err(AssignError::InvalidAssignorName));
    assert_eq!(get_assignor("sticky").map(|a| format!("{a:?}")).as_deref(), Some("StickyAssignor"));
}
