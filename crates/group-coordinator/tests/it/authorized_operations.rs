//! KIP-430's `authorized_operations` in every describe API the coordinator answers
//! (DescribeGroups v3+, ConsumerGroupDescribe, ShareGroupDescribe): a bit per
//! operation of `AclEntry.supportedOperations(GROUP)` the ACLs allow, as Kafka's
//! `AuthHelper.authorizedOperations` makes it; `i32::MIN` when not asked.

use std::sync::Arc;

use group_coordinator::{
    AclOperation, Authorizer, CoordinatorConfig, GroupCoordinator, ManualClock, MetadataImage, Principal,
    RequestContext, Resource, TopicImage,
};
use group_offsets::MemoryMetadataStore;
use group_types::{
    AUTHORIZED_OPERATIONS_OMITTED, ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest,
    DescribeGroupsRequest, ErrorCode, GroupId, MemberId, ShareGroupDescribeRequest,
    ShareGroupHeartbeatRequest, TopicId,
};
use rstest::rstest;

use AclOperation::{AlterConfigs, Delete, Describe, DescribeConfigs, Read};

/// Allows `User:alice` the listed operations on groups, and everything else (to
/// her and to the anonymous caller that makes the group).
#[derive(Debug)]
pub(crate) struct GroupAcls(pub(crate) Vec<AclOperation>);

impl GroupAcls {
    /// Every group operation but `denied`.
    pub(crate) fn all_but(denied: &[AclOperation]) -> GroupAcls {
        GroupAcls(AclOperation::GROUP_OPERATIONS.into_iter().filter(|op| !denied.contains(op)).collect())
    }
}

impl Authorizer for GroupAcls {
    fn authorize(&self, context: &RequestContext, operation: AclOperation, resource: Resource<'_>) -> bool {
        context.principal.name() != "alice"
            || !matches!(resource, Resource::Group(_))
            || self.0.contains(&operation)
    }
}

/// The describe APIs that carry the field.
#[derive(Debug, Clone, Copy)]
enum Api {
    DescribeGroups,
    ConsumerGroupDescribe,
    ShareGroupDescribe,
}

/// A coordinator holding group `g` of the API's kind (a classic group needs none:
/// DescribeGroups of a missing group answers NONE, state Dead), with `acls`.
fn coordinator(api: Api, acls: Vec<AclOperation>) -> GroupCoordinator {
    let mut config = CoordinatorConfig::default();
    config.share.enabled = true;
    let c = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), config)
        .clock(Arc::new(ManualClock::new(1_000)))
        .metadata_image(MetadataImage::new(1, [TopicImage::new(TopicId([3; 16]), "t", 2)]))
        .authorizer(Arc::new(GroupAcls(acls)))
        .open()
        .expect("opens");
    match api {
        Api::DescribeGroups => {}
        Api::ConsumerGroupDescribe => {
            let join = ConsumerGroupHeartbeatRequest {
                group_id: "g".into(),
                member_id: "m".into(),
                rebalance_timeout_ms: 1_000,
                subscribed_topic_names: Some(vec!["t".into()]),
                topic_partitions: Some(Vec::new()),
                ..ConsumerGroupHeartbeatRequest::default()
            };
            let _ = c.handle_consumer_group_heartbeat(join).expect("answered");
        }
        Api::ShareGroupDescribe => {
            let join = ShareGroupHeartbeatRequest {
                group_id: GroupId::from("g"),
                member_id: MemberId::from("m"),
                member_epoch: 0,
                subscribed_topic_names: Some(vec!["t".into()]),
                ..ShareGroupHeartbeatRequest::default()
            };
            let _ = c.handle_share_group_heartbeat(join).expect("answered");
        }
    }
    c
}

/// Group `g` described through `api` (at `version` for DescribeGroups): its error
/// and authorized operations.
fn described(c: &GroupCoordinator, api: Api, version: i16, include: bool) -> (ErrorCode, i32) {
    let caller = RequestContext::new(Principal::user("alice"));
    let caller = c.caller(&caller);
    match api {
        Api::DescribeGroups => {
            let request = DescribeGroupsRequest {
                group_ids: vec!["g".into()],
                api_version: version,
                include_authorized_operations: include,
            };
            let g = caller.handle_describe_groups(request).expect("answered").groups.remove(0);
            (g.error_code, g.authorized_operations)
        }
        Api::ConsumerGroupDescribe => {
            let request = ConsumerGroupDescribeRequest {
                group_ids: vec!["g".into()],
                include_authorized_operations: include,
                ..Default::default()
            };
            let g = caller.handle_consumer_group_describe(request).expect("answered").groups.remove(0);
            (g.error_code, g.authorized_operations)
        }
        Api::ShareGroupDescribe => {
            let request = ShareGroupDescribeRequest {
                group_ids: vec!["g".into()],
                include_authorized_operations: include,
            };
            let g = caller.handle_share_group_describe(request).expect("answered").groups.remove(0);
            (g.error_code, g.authorized_operations)
        }
    }
}

fn bits(ops: &[AclOperation]) -> i32 {
    ops.iter().fold(0, |b, op| b | 1 << op.code())
}

/// ACL sets on the group and the bits each describe API answers: Kafka's
/// `DescribeAuthorizedOperationsTest.testConsumerGroupAuthorizedOperations` (ALL:
/// every supported operation; DESCRIBE alone: only it), and each supported
/// operation with DESCRIBE (which every describe needs first).
#[rstest]
#[case::all(vec![Read, Describe, Delete, DescribeConfigs, AlterConfigs], 3400)]
#[case::describe_only(vec![Describe], 1 << 8)]
#[case::describe_read(vec![Describe, Read], (1 << 8) | (1 << 3))]
#[case::describe_delete(vec![Describe, Delete], (1 << 8) | (1 << 6))]
#[case::describe_configs(vec![Describe, DescribeConfigs], (1 << 8) | (1 << 10))]
#[case::alter_configs(vec![Describe, AlterConfigs], (1 << 8) | (1 << 11))]
fn the_acls_decide_the_bits(
    #[case] acls: Vec<AclOperation>,
    #[case] expected: i32,
    #[values(Api::DescribeGroups, Api::ConsumerGroupDescribe, Api::ShareGroupDescribe)] api: Api,
) {
    assert_eq!(expected, bits(&acls), "the table's own arithmetic");
    let c = coordinator(api, acls);
    assert_eq!(described(&c, api, 5, true), (ErrorCode::None, expected), "{api:?}");
    assert_eq!(described(&c, api, 5, false), (ErrorCode::None, AUTHORIZED_OPERATIONS_OMITTED), "{api:?}");
    c.stop();
}

/// DescribeGroups: the field exists from v3; a group the caller may not describe is
/// GROUP_AUTHORIZATION_FAILED without it (`KafkaApis.handleDescribeGroupsRequest`).
#[rstest]
#[case::v2_has_no_field(2, vec![Describe], (ErrorCode::None, AUTHORIZED_OPERATIONS_OMITTED))]
#[case::v3_has_it(3, vec![Describe], (ErrorCode::None, 1 << 8))]
#[case::denied(5, vec![Read], (ErrorCode::GroupAuthorizationFailed, AUTHORIZED_OPERATIONS_OMITTED))]
fn describe_groups_by_version_and_denial(
    #[case] version: i16,
    #[case] acls: Vec<AclOperation>,
    #[case] expected: (ErrorCode, i32),
) {
    let c = coordinator(Api::DescribeGroups, acls);
    assert_eq!(described(&c, Api::DescribeGroups, version, true), expected);
    c.stop();
}
