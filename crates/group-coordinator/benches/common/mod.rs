//! What the coordinator benches share: the configuration and the stored groups
//! they start from.

use group_coordinator::CoordinatorConfig;
use group_offsets::{GroupMetadataRecord, MemberMetadataRecord, StoredGroups};

/// A member's subscription as benchmarks.md sizes it.
pub(crate) const SUBSCRIPTION: [u8; 50] = [7; 50];
/// A member's assignment as benchmarks.md sizes it.
pub(crate) const ASSIGNMENT: [u8; 20] = [9; 20];

/// Session timeouts wide enough for every bench.
pub(crate) fn config() -> CoordinatorConfig {
    CoordinatorConfig {
        min_session_timeout_ms: 10,
        max_session_timeout_ms: 600_000,
        ..CoordinatorConfig::default()
    }
}

/// Member `m` of group `g`, as long as a Java client's generated id.
pub(crate) fn member_id(g: usize, m: usize) -> String {
    format!("consumer-{g:04}-{m:05}-2f9a6c1e-4b1d-9e7f0a3c5d21")
}

/// `groups` Stable groups of `members` each, generation 1, as storage would hold them.
pub(crate) fn stored(groups: usize, members: usize) -> StoredGroups {
    let groups = (0..groups)
        .map(|g| GroupMetadataRecord {
            group_id: format!("group-{g}").into(),
            protocol_type: Some("consumer".into()),
            generation_id: 1,
            protocol_name: Some("range".into()),
            leader_id: Some(member_id(g, 0).into()),
            state_timestamp_ms: Some(0),
            members: (0..members)
                .map(|m| MemberMetadataRecord {
                    member_id: member_id(g, m).into(),
                    group_instance_id: None,
                    client_id: "consumer".into(),
                    client_host: "/127.0.0.1".into(),
                    rebalance_timeout_ms: 300_000,
                    session_timeout_ms: 45_000,
                    subscription: SUBSCRIPTION.to_vec().into(),
                    assignment: ASSIGNMENT.to_vec().into(),
                })
                .collect(),
        })
        .collect();
    StoredGroups { groups, ..StoredGroups::default() }
}
