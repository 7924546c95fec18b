//! DeleteGroups (API key 42) and OffsetDelete (API key 47): removing groups and offsets.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{ErrorCode, GroupId, PartitionMap};

/// A DeleteGroups request; duplicate ids collapse into one result.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeleteGroupsRequest {
    /// The groups to delete.
    pub group_ids: Vec<GroupId>,
}

/// The outcome for one group of a DeleteGroups request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeletedGroup {
    /// The group id.
    pub group_id: GroupId,
    /// The outcome.
    pub error_code: ErrorCode,
}

/// A DeleteGroups response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeleteGroupsResponse {
    /// One entry per distinct requested group.
    pub results: Vec<DeletedGroup>,
}

/// An OffsetDelete request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetDeleteRequest {
    /// The group; must not be empty.
    pub group_id: String,
    /// The partitions whose offsets to delete, per topic.
    pub topics: BTreeMap<String, Vec<i32>>,
}

/// An OffsetDelete response: a top-level error, or per-partition errors.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetDeleteResponse {
    /// The top-level outcome.
    pub error_code: ErrorCode,
    /// Per partition, when the top-level outcome is `NONE`.
    pub partitions: PartitionMap<ErrorCode>,
}

#[cfg(feature = "kafka-protocol")]
mod wire {
    //! DeleteGroups (key 42) on the wire: empty groups and their offsets removed.

    use kafka_protocol::messages as kp;

    use crate as gt;
    use crate::wire::layout::Ty::ArrStr;
    use crate::wire::layout::{Layout, Struct, always, plain};
    use crate::wire::{Header, WireRequest, id, sb, wire_id};

    impl WireRequest for gt::DeleteGroupsRequest {
        type Wire = kp::DeleteGroupsRequest;
        type Response = gt::DeleteGroupsResponse;
        type WireResponse = kp::DeleteGroupsResponse;
        const LAYOUT: Layout = Layout::new(0, 2, 2, &BODY);

        #[inline]
        fn from_wire(req: &kp::DeleteGroupsRequest, _: &Header<'_>) -> Self {
            gt::DeleteGroupsRequest { group_ids: req.groups_names.iter().map(|g| id(&g.0)).collect() }
        }

        #[inline]
        fn to_wire(resp: gt::DeleteGroupsResponse, _: i16) -> kp::DeleteGroupsResponse {
            kp::DeleteGroupsResponse::default().with_results(
                resp.results
                    .into_iter()
                    .map(|g| {
                        kp::delete_groups_response::DeletableGroupResult::default()
                            .with_group_id(wire_id(g.group_id).into())
                            .with_error_code(g.error_code.code())
                    })
                    .collect(),
            )
        }

        fn sample(_: i16) -> kp::DeleteGroupsRequest {
            kp::DeleteGroupsRequest::default().with_groups_names(vec![sb("a").into(), sb("bb").into()])
        }
    }

    // The request field by field as `kafka-protocol` decodes it, for the walk (`crate::wire::layout`).
    static BODY: Struct = plain(&[always(ArrStr)]);
}
