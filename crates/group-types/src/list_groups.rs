//! ListGroups (API key 16): the groups this coordinator owns.

use serde::{Deserialize, Serialize};

use crate::{ErrorCode, GroupId};

/// A ListGroups request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ListGroupsRequest {
    /// v4+: keep only groups in these states (case-insensitive); empty means all.
    pub states_filter: Vec<String>,
    /// v5+: keep only groups of these types (`classic`); empty means all.
    pub types_filter: Vec<String>,
}

/// One listed group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ListedGroup {
    /// The group id.
    pub group_id: GroupId,
    /// The protocol type, `""` if none.
    pub protocol_type: String,
    /// The state name (v4+).
    pub group_state: String,
    /// The group type (v5+): always `classic` here.
    pub group_type: String,
}

/// A ListGroups response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ListGroupsResponse {
    /// The top-level outcome.
    pub error_code: ErrorCode,
    /// The groups.
    pub groups: Vec<ListedGroup>,
}

#[cfg(feature = "kafka-protocol")]
mod wire {
    //! ListGroups (key 16) on the wire: every group of every partition this node serves.

    use kafka_protocol::messages as kp;
    use kafka_protocol::protocol::StrBytes;

    use crate as gt;
    use crate::wire::layout::Ty::ArrStr;
    use crate::wire::layout::{ALL, Layout, Struct, f, plain};
    use crate::wire::{Header, WireRequest, s, sb, wire_id};

    impl WireRequest for gt::ListGroupsRequest {
        type Wire = kp::ListGroupsRequest;
        type Response = gt::ListGroupsResponse;
        type WireResponse = kp::ListGroupsResponse;
        const LAYOUT: Layout = Layout::new(0, 5, 3, &BODY);

        #[inline]
        fn from_wire(req: &kp::ListGroupsRequest, _: &Header<'_>) -> Self {
            gt::ListGroupsRequest {
                states_filter: req.states_filter.iter().map(s).collect(),
                types_filter: req.types_filter.iter().map(s).collect(),
            }
        }

        #[inline]
        fn to_wire(resp: gt::ListGroupsResponse, version: i16) -> kp::ListGroupsResponse {
            kp::ListGroupsResponse::default().with_error_code(resp.error_code.code()).with_groups(
                resp.groups
                    .into_iter()
                    .map(|g| {
                        kp::list_groups_response::ListedGroup::default()
                            .with_group_id(wire_id(g.group_id).into())
                            .with_protocol_type(sb(g.protocol_type))
                            .with_group_state(if version >= 4 {
                                sb(g.group_state)
                            } else {
                                StrBytes::default()
                            })
                            .with_group_type(if version >= 5 {
                                sb(g.group_type)
                            } else {
                                StrBytes::default()
                            })
                    })
                    .collect(),
            )
        }

        fn sample(v: i16) -> kp::ListGroupsRequest {
            let r = kp::ListGroupsRequest::default();
            let r = if v >= 4 { r.with_states_filter(vec![sb("Stable"), sb("Empty")]) } else { r };
            if v >= 5 { r.with_types_filter(vec![sb("classic")]) } else { r }
        }
    }

    // The request field by field as `kafka-protocol` decodes it, for the walk (`crate::wire::layout`).
    static BODY: Struct = plain(&[f(ArrStr, 4, ALL), f(ArrStr, 5, ALL)]);
}
