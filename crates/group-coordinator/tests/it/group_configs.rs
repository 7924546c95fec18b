//! Per-group configs: Kafka's `GroupConfigTest` and `GroupConfigManagerTest` as tables
//! (validation, clamping, description), and through the runtime: ACLs, a change in
//! force from the next heartbeat, removal, and configs that outlive a restart.

use std::collections::BTreeMap;
use std::sync::Arc;

use group_coordinator::{
    AclOperation, AlterConfigOp, ConfigSource, CoordinatorConfig, GroupConfigError, GroupConfigProps,
    GroupConfigStore, GroupCoordinator, ManualClock, MemoryGroupConfigStore, MetadataImage, Principal,
    RequestContext, TopicImage, evaluate_group_config, validate_group_config,
};
use group_offsets::MemoryMetadataStore;
use group_types::{ConsumerGroupHeartbeatRequest, ErrorCode, TopicId};
use rstest::rstest;

fn props(pairs: &[(&str, &str)]) -> GroupConfigProps {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// `GroupConfigTest.createGroupCoordinatorConfig` and `createShareGroupConfig`: Kafka's
/// defaults but session and heartbeat minimums of 45 and 5 ms, minimum assignment
/// intervals of 1000 ms, and the share bounds the test names.
fn kafka_test_config() -> CoordinatorConfig {
    let mut c = CoordinatorConfig::default();
    c.consumer.min_session_timeout_ms = 45;
    c.consumer.min_heartbeat_interval_ms = 5;
    c.share.min_session_timeout_ms = 45;
    c.share.min_heartbeat_interval_ms = 5;
    c.share.partition_max_record_locks = 200;
    c.share.min_partition_max_record_locks = 100;
    c.share.max_partition_max_record_locks = 10_000;
    c.share.delivery_count_limit = 5;
    c.share.min_delivery_count_limit = 2;
    c.share.max_delivery_count_limit = 10;
    c.share.record_lock_duration_ms = 30_000;
    c.share.min_record_lock_duration_ms = 15_000;
    c.share.max_record_lock_duration_ms = 60_000;
    let b = &mut c.group_config_bounds;
    b.consumer_assignment_interval_ms.min = 1_000;
    b.share_assignment_interval_ms.min = 1_000;
    b.streams_assignment_interval_ms.min = 1_000;
    c
}

/// `GroupConfigTest.createValidGroupConfig`.
fn valid() -> GroupConfigProps {
    props(&[
        ("consumer.session.timeout.ms", "45000"),
        ("consumer.heartbeat.interval.ms", "5000"),
        ("share.session.timeout.ms", "45000"),
        ("share.heartbeat.interval.ms", "5000"),
        ("share.delivery.count.limit", "5"),
        ("share.record.lock.duration.ms", "30000"),
        ("share.partition.max.record.locks", "2000"),
        ("share.auto.offset.reset", "latest"),
        ("share.isolation.level", "read_uncommitted"),
        ("streams.session.timeout.ms", "50000"),
        ("streams.heartbeat.interval.ms", "6000"),
        ("streams.num.standby.replicas", "1"),
        ("streams.initial.rebalance.delay.ms", "3000"),
        ("streams.task.offset.interval.ms", "45000"),
        ("streams.num.warmup.replicas", "3"),
        ("share.renew.acknowledge.enable", "true"),
    ])
}

fn valid_with(name: &str, value: &str) -> GroupConfigProps {
    let mut p = valid();
    p.insert(name.to_owned(), value.to_owned());
    p
}

/// `GroupConfigTest.testFromPropsInvalid`: values their type (or Kafka's own check)
/// refuses, whatever the broker's bounds.
#[rstest]
#[case("consumer.session.timeout.ms", &["not_a_number", "-0.1", "1.2"])]
#[case("consumer.heartbeat.interval.ms", &["not_a_number", "-0.1", "1.2"])]
#[case("consumer.assignment.interval.ms", &["not_a_number", "-1", "1.2"])]
#[case("share.session.timeout.ms", &["not_a_number", "-0.1", "1.2"])]
#[case("share.heartbeat.interval.ms", &["not_a_number", "-0.1", "1.2"])]
#[case("share.record.lock.duration.ms", &["not_a_number", "-0.1", "1.2"])]
#[case("share.delivery.count.limit", &["not_a_number", "-0.1", "1.2"])]
#[case("share.partition.max.record.locks", &["not_a_number", "-0.1", "1.2"])]
#[case("share.auto.offset.reset", &["hello", "1.0"])]
#[case("share.isolation.level", &["hello", "1.0"])]
#[case("share.renew.acknowledge.enable", &["not_a_boolean", "1"])]
#[case("share.assignment.interval.ms", &["not_a_number", "-1", "1.2"])]
#[case("streams.heartbeat.interval.ms", &["not_a_number", "1.0"])]
#[case("streams.num.standby.replicas", &["not_a_number", "1.0"])]
#[case("streams.session.timeout.ms", &["not_a_number", "1.0"])]
#[case("streams.initial.rebalance.delay.ms", &["not_a_number", "-1", "1.0"])]
#[case("streams.assignment.interval.ms", &["not_a_number", "-1", "1.2"])]
#[case("streams.task.offset.interval.ms", &["not_a_number", "1.0"])]
#[case("streams.num.warmup.replicas", &["not_a_number", "1.0"])]
#[case("errors.deadletterqueue.copy.record.enable", &["not_a_boolean"])]
#[case("streams.rack.aware.assignment.tags", &["tag1,,tag2"])]
#[case("streams.acceptable.recovery.lag", &["not_a_number", "-0.1"])]
fn values_of_the_wrong_type_are_refused(#[case] name: &str, #[case] values: &[&str]) {
    for value in values {
        let got = validate_group_config(&props(&[(name, value)]), &kafka_test_config());
        assert!(matches!(got, Err(GroupConfigError::BadValue { .. })), "{name}={value}: {got:?}");
        assert_eq!(got.unwrap_err().error_code(), ErrorCode::InvalidConfig);
    }
}

/// KAFKA-20339: Kafka 4.3 removed `<kind>.assignor.offload.enable` before release;
/// they are unknown names here as there, whatever their value.
#[rstest]
#[case("consumer.assignor.offload.enable")]
#[case("share.assignor.offload.enable")]
#[case("streams.assignor.offload.enable")]
fn offload_configs_are_unknown_as_in_kafka_4_3(#[case] name: &str) {
    for value in ["true", "false"] {
        let got = validate_group_config(&props(&[(name, value)]), &kafka_test_config());
        assert_eq!(got, Err(GroupConfigError::UnknownName(name.to_owned())));
    }
    assert!(group_coordinator::group_config_names().all(|n| n != name));
}

/// `GroupConfigTest.testValidShareAutoOffsetResetValues`,
/// `testValidShareIsolationLevelValues`, `testStreamsRackAwareAssignmentTagsValidation`'s
/// accepted lists, `testStreamsAssignorNameValidation`'s registered name and
/// `testDLQBlankTopicNameIsValid`; `testNotValidatedWhenNotConfigured`: nothing set.
#[rstest]
#[case("share.auto.offset.reset", "latest")]
#[case("share.auto.offset.reset", "earliest")]
#[case("share.auto.offset.reset", "by_duration:PT10S")]
#[case("share.isolation.level", "read_committed")]
#[case("share.isolation.level", "read_uncommitted")]
#[case("streams.rack.aware.assignment.tags", "zone,cluster")]
#[case("streams.rack.aware.assignment.tags", " zone , cluster ")]
#[case("streams.assignor.name", "sticky")]
#[case("errors.deadletterqueue.topic.name", "")]
#[case("errors.deadletterqueue.topic.name", "my-dlq-topic")]
fn valid_values_are_accepted(#[case] name: &str, #[case] value: &str) {
    assert_eq!(validate_group_config(&valid_with(name, value), &kafka_test_config()), Ok(()));
    assert_eq!(validate_group_config(&valid(), &kafka_test_config()), Ok(()));
    assert_eq!(validate_group_config(&GroupConfigProps::new(), &kafka_test_config()), Ok(()));
}

/// `GroupConfigTest.testInvalidProps`: each value over a valid group config, refused
/// (a type or Kafka check: `BadValue`, Kafka's `ConfigException`; the broker's bounds:
/// `Invalid`, its `InvalidConfigurationException`).
#[rstest]
#[case("consumer.session.timeout.ms", "1", false)]
#[case("consumer.session.timeout.ms", "70000", false)]
#[case("consumer.heartbeat.interval.ms", "1", false)]
#[case("consumer.heartbeat.interval.ms", "70000", false)]
#[case("consumer.assignment.interval.ms", "500", false)]
#[case("consumer.assignment.interval.ms", "20000", false)]
#[case("share.session.timeout.ms", "1", false)]
#[case("share.session.timeout.ms", "70000", false)]
#[case("share.heartbeat.interval.ms", "1", false)]
#[case("share.heartbeat.interval.ms", "70000", false)]
#[case("share.record.lock.duration.ms", "10000", false)]
#[case("share.record.lock.duration.ms", "70000", false)]
#[case("share.delivery.count.limit", "1", true)]
#[case("share.delivery.count.limit", "11", false)]
#[case("share.partition.max.record.locks", "50", true)]
#[case("share.partition.max.record.locks", "11000", false)]
#[case("share.auto.offset.reset", "hello", true)]
#[case("share.auto.offset.reset", "by_duration", true)]
#[case("share.auto.offset.reset", "by_duration:-PT10S", true)]
#[case("share.auto.offset.reset", "by_duration:invalid", true)]
#[case("share.assignment.interval.ms", "500", false)]
#[case("share.assignment.interval.ms", "20000", false)]
#[case("streams.session.timeout.ms", "1", false)]
#[case("streams.session.timeout.ms", "70000", false)]
#[case("streams.heartbeat.interval.ms", "1000", false)]
#[case("streams.heartbeat.interval.ms", "70000", false)]
#[case("streams.assignment.interval.ms", "500", false)]
#[case("streams.assignment.interval.ms", "20000", false)]
#[case("streams.task.offset.interval.ms", "1000", false)]
#[case("streams.num.warmup.replicas", "50", false)]
#[case("share.isolation.level", "read_commit", true)]
#[case("share.isolation.level", "read_uncommit", true)]
#[case("share.renew.acknowledge.enable", "1", true)]
#[case("streams.assignor.name", "does-not-exist", false)]
fn invalid_values_are_refused(#[case] name: &str, #[case] value: &str, #[case] type_error: bool) {
    let got = validate_group_config(&valid_with(name, value), &kafka_test_config());
    match got {
        Err(GroupConfigError::BadValue { .. }) => assert!(type_error, "{name}={value}: a type error"),
        Err(GroupConfigError::Invalid(_)) => assert!(!type_error, "{name}={value}: a bounds error"),
        other => panic!("{name}={value}: {other:?}"),
    }
}

/// `GroupConfigTest.testValidationErrorMessageIncludesBound` (and the duplicate tags
/// and DLQ name cases of `testStreamsRackAwareAssignmentTagsValidation` and
/// `testDLQTopicNameCannotStartWithDoubleUnderscore`): one value alone, Kafka's message.
#[rstest]
#[case(
    "consumer.heartbeat.interval.ms",
    "1",
    "consumer.heartbeat.interval.ms must be in the range 5 to 15000 inclusive."
)]
#[case(
    "consumer.heartbeat.interval.ms",
    "20000",
    "consumer.heartbeat.interval.ms must be in the range 5 to 15000 inclusive."
)]
#[case(
    "consumer.session.timeout.ms",
    "1",
    "consumer.session.timeout.ms must be in the range 45 to 60000 inclusive."
)]
#[case(
    "consumer.session.timeout.ms",
    "70000",
    "consumer.session.timeout.ms must be in the range 45 to 60000 inclusive."
)]
#[case(
    "consumer.assignment.interval.ms",
    "500",
    "consumer.assignment.interval.ms must be in the range 1000 to 15000 inclusive."
)]
#[case(
    "consumer.assignment.interval.ms",
    "20000",
    "consumer.assignment.interval.ms must be in the range 1000 to 15000 inclusive."
)]
#[case(
    "share.heartbeat.interval.ms",
    "1",
    "share.heartbeat.interval.ms must be in the range 5 to 15000 inclusive."
)]
#[case(
    "share.heartbeat.interval.ms",
    "20000",
    "share.heartbeat.interval.ms must be in the range 5 to 15000 inclusive."
)]
#[case(
    "share.session.timeout.ms",
    "1",
    "share.session.timeout.ms must be in the range 45 to 60000 inclusive."
)]
#[case(
    "share.session.timeout.ms",
    "70000",
    "share.session.timeout.ms must be in the range 45 to 60000 inclusive."
)]
#[case(
    "share.record.lock.duration.ms",
    "10000",
    "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive."
)]
#[case(
    "share.record.lock.duration.ms",
    "70000",
    "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive."
)]
#[case(
    "share.delivery.count.limit",
    "11",
    "share.delivery.count.limit must be in the range 2 to 10 inclusive."
)]
#[case(
    "share.partition.max.record.locks",
    "11000",
    "share.partition.max.record.locks must be in the range 100 to 10000 inclusive."
)]
#[case(
    "share.assignment.interval.ms",
    "500",
    "share.assignment.interval.ms must be in the range 1000 to 15000 inclusive."
)]
#[case(
    "share.assignment.interval.ms",
    "20000",
    "share.assignment.interval.ms must be in the range 1000 to 15000 inclusive."
)]
#[case(
    "streams.heartbeat.interval.ms",
    "1000",
    "streams.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."
)]
#[case(
    "streams.heartbeat.interval.ms",
    "20000",
    "streams.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."
)]
#[case(
    "streams.session.timeout.ms",
    "1",
    "streams.session.timeout.ms must be in the range 45000 to 60000 inclusive."
)]
#[case(
    "streams.session.timeout.ms",
    "70000",
    "streams.session.timeout.ms must be in the range 45000 to 60000 inclusive."
)]
#[case("streams.num.standby.replicas", "5", "streams.num.standby.replicas must be less than or equal to 2")]
#[case(
    "streams.assignment.interval.ms",
    "500",
    "streams.assignment.interval.ms must be in the range 1000 to 15000 inclusive."
)]
#[case(
    "streams.assignment.interval.ms",
    "20000",
    "streams.assignment.interval.ms must be in the range 1000 to 15000 inclusive."
)]
#[case(
    "streams.task.offset.interval.ms",
    "1000",
    "streams.task.offset.interval.ms must be greater than or equal to 15000"
)]
#[case("streams.num.warmup.replicas", "50", "streams.num.warmup.replicas must be less than or equal to 20")]
#[case(
    "streams.rack.aware.assignment.tags",
    "zone,zone",
    "streams.rack.aware.assignment.tags must not contain duplicate tag keys."
)]
#[case(
    "streams.rack.aware.assignment.tags",
    " zone , zone ",
    "streams.rack.aware.assignment.tags must not contain duplicate tag keys."
)]
#[case(
    "errors.deadletterqueue.topic.name",
    "__my-dlq",
    "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'"
)]
fn bounds_errors_carry_kafkas_message(#[case] name: &str, #[case] value: &str, #[case] message: &str) {
    let got = validate_group_config(&props(&[(name, value)]), &kafka_test_config());
    assert_eq!(got, Err(GroupConfigError::Invalid(message.to_owned())));
}

/// `GroupConfig.validate`'s other checks: an unknown name (`testInvalidConfigName`),
/// a session not above its heartbeat interval, with the broker's value for the one
/// not set; `testValidateWithAllGroupTypeConfigs`: nothing set is valid whatever
/// the broker's minimums.
#[rstest]
#[case::unknown_name(&[("consumer.session.timeout.ms", "10"), ("invalid.config.name", "10")], Some(ErrorCode::InvalidConfig))]
#[case::session_not_above_interval(&[("consumer.session.timeout.ms", "45000"), ("consumer.heartbeat.interval.ms", "45000")], Some(ErrorCode::InvalidConfig))]
#[case::interval_above_broker_session(&[("share.heartbeat.interval.ms", "15000"), ("share.session.timeout.ms", "15000")], Some(ErrorCode::InvalidConfig))]
#[case::session_above_interval(&[("consumer.session.timeout.ms", "50000")], None)]
#[case::nothing(&[], None)]
fn other_checks(#[case] set: &[(&str, &str)], #[case] refused: Option<ErrorCode>) {
    let mut config = kafka_test_config();
    config.consumer.min_session_timeout_ms = 46_000;
    config.consumer.session_timeout_ms = 46_000;
    let got = validate_group_config(&props(set), &config);
    assert_eq!(got.err().map(|e| e.error_code()), refused);
}

/// `GroupConfigTest.testEvaluateValueAboveMaxIsCapped` / `BelowMinIsCapped` and
/// `GroupConfigManagerTest.testClampWithCustomBrokerBounds`: read back, a value out of
/// the broker's (default) bounds is clamped into them; one within them is kept.
#[rstest]
#[case("consumer.session.timeout.ms", "40000", 45_000)]
#[case("consumer.session.timeout.ms", "70000", 60_000)]
#[case("consumer.heartbeat.interval.ms", "3000", 5_000)]
#[case("consumer.heartbeat.interval.ms", "20000", 15_000)]
#[case("share.session.timeout.ms", "40000", 45_000)]
#[case("share.session.timeout.ms", "70000", 60_000)]
#[case("share.heartbeat.interval.ms", "3000", 5_000)]
#[case("share.heartbeat.interval.ms", "20000", 15_000)]
#[case("share.record.lock.duration.ms", "10000", 15_000)]
#[case("share.record.lock.duration.ms", "70000", 60_000)]
#[case("share.delivery.count.limit", "1", 2)]
#[case("share.delivery.count.limit", "15", 10)]
#[case("share.partition.max.record.locks", "50", 100)]
#[case("share.partition.max.record.locks", "1500", 1_500)]
#[case("consumer.assignment.interval.ms", "20000", 15_000)]
#[case("consumer.assignment.interval.ms", "2500", 2_500)]
#[case("share.assignment.interval.ms", "20000", 15_000)]
#[case("share.assignment.interval.ms", "0", 0)]
fn read_back_values_are_clamped(#[case] name: &str, #[case] value: &str, #[case] expected: i32) {
    let o = evaluate_group_config(&props(&[(name, value)]), &CoordinatorConfig::default());
    let got = [
        o.session_timeout_ms,
        o.heartbeat_interval_ms,
        o.share_session_timeout_ms,
        o.share_heartbeat_interval_ms,
        o.share_record_lock_duration_ms,
        o.share_delivery_count_limit,
        o.share_partition_max_record_locks,
        o.consumer_assignment_interval_ms,
        o.share_assignment_interval_ms,
    ];
    assert_eq!(got.iter().flatten().copied().collect::<Vec<_>>(), [expected], "{name}={value}");
}

/// `GroupConfigManagerTest.testClampWithCustomBrokerBounds`: max 50000, min 46000.
#[rstest]
#[case("55000", 50_000)]
#[case("44000", 46_000)]
#[case("49000", 49_000)]
fn read_back_values_are_clamped_to_custom_bounds(#[case] value: &str, #[case] expected: i32) {
    let mut config = CoordinatorConfig::default();
    config.consumer.max_session_timeout_ms = 50_000;
    config.consumer.min_session_timeout_ms = 46_000;
    config.consumer.session_timeout_ms = 48_000;
    let o = evaluate_group_config(&props(&[("consumer.session.timeout.ms", value)]), &config);
    assert_eq!(o.session_timeout_ms, Some(expected));
}

fn open(store: Arc<dyn GroupConfigStore>, denied: Vec<AclOperation>) -> GroupCoordinator {
    GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), CoordinatorConfig::default())
        .clock(Arc::new(ManualClock::new(1_000)))
        .metadata_image(MetadataImage::new(1, [TopicImage::new(TopicId([3; 16]), "t", 2)]))
        .authorizer(Arc::new(crate::authorized_operations::GroupAcls::all_but(&denied)))
        .group_config_store(store)
        .open()
        .expect("opens")
}

fn alice() -> RequestContext {
    RequestContext::new(Principal::user("alice"))
}

fn set(name: &str, value: &str) -> (String, AlterConfigOp) {
    (name.to_owned(), AlterConfigOp::Set(value.to_owned()))
}

/// A consumer member's heartbeat (joining at epoch 0): the interval it is given.
fn heartbeat_interval(c: &GroupCoordinator, epoch: i32) -> (i32, i32) {
    heartbeat(c, "m", epoch)
}

/// Consumer member `member`'s heartbeat to group g (joining t at epoch 0): its
/// epoch and the interval it is given.
fn heartbeat(c: &GroupCoordinator, member: &str, epoch: i32) -> (i32, i32) {
    let r = c
        .handle_consumer_group_heartbeat(ConsumerGroupHeartbeatRequest {
            group_id: "g".into(),
            member_id: member.into(),
            member_epoch: epoch,
            rebalance_timeout_ms: 1_000,
            subscribed_topic_names: (epoch == 0).then(|| vec!["t".into()]),
            topic_partitions: (epoch == 0).then(Vec::new),
            ..ConsumerGroupHeartbeatRequest::default()
        })
        .expect("answered");
    assert_eq!(r.error_code, ErrorCode::None);
    (r.member_epoch, r.heartbeat_interval_ms)
}

/// DESCRIBE_CONFIGS to describe, ALTER_CONFIGS to alter (`ConfigHelper`,
/// `ControllerApis`): GROUP_AUTHORIZATION_FAILED otherwise, and nothing changes.
#[rstest]
#[case::describe_denied(vec![AclOperation::DescribeConfigs], Some(ErrorCode::GroupAuthorizationFailed), None)]
#[case::alter_denied(vec![AclOperation::AlterConfigs], None, Some(ErrorCode::GroupAuthorizationFailed))]
#[case::both_allowed(vec![AclOperation::Read], None, None)]
fn configs_need_their_acls(
    #[case] denied: Vec<AclOperation>,
    #[case] describe: Option<ErrorCode>,
    #[case] alter: Option<ErrorCode>,
) {
    let c = open(Arc::new(MemoryGroupConfigStore::new()), denied);
    let context = alice();
    let caller = c.caller(&context);
    let altered = caller.alter_group_configs("g", &[set("consumer.heartbeat.interval.ms", "6000")], false);
    assert_eq!(altered.err().map(|e| e.error_code()), alter);
    let expected: GroupConfigProps = match alter {
        None => props(&[("consumer.heartbeat.interval.ms", "6000")]),
        Some(_) => GroupConfigProps::new(),
    };
    assert_eq!(c.group_configs("g"), expected);
    let described = caller.describe_group_configs("g", None, false, false);
    assert_eq!(described.as_ref().err().map(|e| e.error_code()), describe);
    c.stop();
}

/// Describing: every config, the group's value (source GROUP) where it set one, the
/// broker's elsewhere; `keys` picks names; synonyms and documentation when asked.
#[test]
fn describe_shows_the_groups_values_over_the_brokers() {
    let c = open(Arc::new(MemoryGroupConfigStore::new()), Vec::new());
    let context = alice();
    let caller = c.caller(&context);
    caller
        .alter_group_configs("g", &[set("consumer.session.timeout.ms", " 50000 ")], false)
        .expect("altered");
    let all = caller.describe_group_configs("g", None, false, false).expect("described");
    assert_eq!(all.len(), group_coordinator::group_config_names().count());
    let session = all.iter().find(|e| e.name == "consumer.session.timeout.ms").expect("listed");
    assert_eq!((session.value.as_str(), session.source), ("50000", ConfigSource::Group));
    let keys = ["consumer.heartbeat.interval.ms".to_owned(), "no.such.config".to_owned()];
    let some = caller.describe_group_configs("g", Some(&keys), true, true).expect("described");
    assert_eq!(some.len(), 1);
    assert_eq!((some[0].value.as_str(), some[0].source), ("5000", ConfigSource::Default));
    assert_eq!(some[0].synonyms.len(), 1);
    assert!(some[0].documentation.is_some());
    let empty = caller.describe_group_configs("", None, false, false);
    assert_eq!(empty.err().map(|e| e.error_code()), Some(ErrorCode::InvalidRequest));
    c.stop();
}

/// The assignment intervals are described as they are applied: this build's default
/// of 0 (not Kafka 4.3's 1000, `docs/KAFKA-DIFFERENCES.md` K10) as the DEFAULT source
/// with its one synonym, a node's own value as STATIC_BROKER_CONFIG, a group's as GROUP.
#[rstest]
#[case::this_builds_default(None, None, "0", ConfigSource::Default, 1)]
#[case::the_nodes_value(Some(1_000), None, "1000", ConfigSource::StaticBroker, 2)]
#[case::the_groups_value(Some(1_000), Some("2500"), "2500", ConfigSource::Group, 3)]
fn assignment_intervals_are_described_as_applied(
    #[case] node: Option<i32>,
    #[case] group: Option<&str>,
    #[case] value: &str,
    #[case] source: ConfigSource,
    #[case] synonyms: usize,
) {
    assert_eq!(group_coordinator::DEFAULT_ASSIGNMENT_INTERVAL_MS, 0);
    let mut config = CoordinatorConfig::default();
    if let Some(node) = node {
        config.group_config_bounds.consumer_assignment_interval_ms.default = node;
        config.group_config_bounds.share_assignment_interval_ms.default = node;
    }
    let mut set = GroupConfigProps::new();
    for name in ["consumer.assignment.interval.ms", "share.assignment.interval.ms"] {
        if let Some(v) = group {
            set.insert(name.to_owned(), v.to_owned());
        }
    }
    let applied = evaluate_group_config(&set, &config);
    for name in ["consumer.assignment.interval.ms", "share.assignment.interval.ms"] {
        let keys = [name.to_owned()];
        let d = group_coordinator::describe_group_config(&set, &config, Some(&keys), true, false);
        assert_eq!(
            (d[0].value.as_str(), d[0].source, d[0].synonyms.len()),
            (value, source, synonyms),
            "{name}"
        );
        let last = d[0].synonyms.last().expect("the default synonym");
        assert_eq!((last.value.as_str(), last.source), ("0", ConfigSource::Default));
    }
    let bounds = &config.group_config_bounds;
    let running = [
        applied.consumer_assignment_interval_ms.unwrap_or(bounds.consumer_assignment_interval_ms.default),
        applied.share_assignment_interval_ms.unwrap_or(bounds.share_assignment_interval_ms.default),
    ];
    assert_eq!(running.map(|v| v.to_string()), [value, value]);
}

/// `GroupConfigManagerTest.testUpdateGroupConfig`, `testGetNonExistentGroupConfig`,
/// `testUpdateConfigWithInvalidGroupId` and `testGroupIsRemovedWhenDynamicConfigsAreRemoved`,
/// through IncrementalAlterConfigs: a change is in force from the member's next
/// heartbeat; deleting every config removes the group's entry; an empty group name,
/// a bad value, a repeated name or validate-only change nothing.
#[test]
fn alters_apply_from_the_next_heartbeat() {
    let store = Arc::new(MemoryGroupConfigStore::new());
    let c = open(store.clone(), Vec::new());
    let context = alice();
    let caller = c.caller(&context);
    assert!(c.group_configs("foo").is_empty());
    let (epoch, interval) = heartbeat_interval(&c, 0);
    assert_eq!(interval, 5_000);

    let ops = [set("consumer.session.timeout.ms", "50000"), set("consumer.heartbeat.interval.ms", "6000")];
    assert_eq!(caller.alter_group_configs("g", &ops, true), Ok(()));
    assert!(c.group_configs("g").is_empty(), "validate only");
    caller.alter_group_configs("g", &ops, false).expect("altered");
    caller.alter_group_configs("bar", &ops[..1], false).expect("altered");
    assert_eq!(heartbeat_interval(&c, epoch).1, 6_000);
    // A share group's settings, which a broker's fetch path reads, change as soon.
    assert_eq!(c.share_group_settings("s").record_lock_duration_ms, 30_000);
    caller
        .alter_group_configs("s", &[set("share.record.lock.duration.ms", "20000")], false)
        .expect("altered");
    assert_eq!(c.share_group_settings("s").record_lock_duration_ms, 20_000);

    let refused = [
        ("", vec![set("consumer.session.timeout.ms", "50000")], ErrorCode::InvalidRequest),
        ("g", vec![set("consumer.heartbeat.interval.ms", "1")], ErrorCode::InvalidConfig),
        ("g", vec![set("a", "1"), set("a", "2")], ErrorCode::InvalidRequest),
        (
            "g",
            vec![("share.isolation.level".to_owned(), AlterConfigOp::Append("x".into()))],
            ErrorCode::InvalidConfig,
        ),
    ];
    for (group, ops, code) in refused {
        assert_eq!(caller.alter_group_configs(group, &ops, false).map_err(|e| e.error_code()), Err(code));
    }
    assert_eq!(c.group_configs("g").len(), 2);

    let delete = |name: &str| (name.to_owned(), AlterConfigOp::Delete);
    let ops = [delete("consumer.session.timeout.ms"), delete("consumer.heartbeat.interval.ms")];
    caller.alter_group_configs("g", &ops, false).expect("altered");
    assert!(c.group_configs("g").is_empty());
    assert_eq!(heartbeat_interval(&c, epoch).1, 5_000);
    let stored: BTreeMap<_, _> = store.load().expect("loads");
    assert_eq!(stored.keys().collect::<Vec<_>>(), ["bar", "s"]);
    c.stop();
}

/// `consumer.assignment.interval.ms` set by IncrementalAlterConfigs batches the
/// group's target assignments from its next heartbeat (KIP-1263): a member joining
/// within the interval waits at the last target's epoch, and gets the new target
/// once the interval is over; deleted, targets are computed at once again (this
/// build's default of 0). A value out of the node's bounds is refused.
#[test]
fn an_assignment_interval_set_by_alter_configs_batches_from_the_next_heartbeat() {
    let clock = Arc::new(ManualClock::new(1_000));
    let c = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), CoordinatorConfig::default())
        .clock(clock.clone())
        .metadata_image(MetadataImage::new(1, [TopicImage::new(TopicId([3; 16]), "t", 2)]))
        .open()
        .expect("opens");
    let context = alice();
    let caller = c.caller(&context);
    let beat = |member: &str, epoch: i32| heartbeat(&c, member, epoch).0;
    assert_eq!(beat("m1", 0), 1);
    let refused = caller.alter_group_configs("g", &[set("consumer.assignment.interval.ms", "20000")], false);
    assert_eq!(refused.map_err(|e| e.error_code()), Err(ErrorCode::InvalidConfig));
    caller
        .alter_group_configs("g", &[set("consumer.assignment.interval.ms", "5000")], false)
        .expect("altered");
    clock.advance(100);
    assert_eq!(beat("m2", 0), 1, "the new target waits for the interval");
    clock.advance(4_899);
    assert_eq!(beat("m2", 1), 1, "1 ms to go");
    clock.advance(1);
    assert_eq!(beat("m2", 1), 2, "computed once the interval is over");

    let delete = ("consumer.assignment.interval.ms".to_owned(), AlterConfigOp::Delete);
    caller.alter_group_configs("g", &[delete], false).expect("altered");
    clock.advance(10);
    assert_eq!(beat("m3", 0), 3, "at once without the group's interval");
    for (consumer, share) in [(Some(15_001), None), (None, Some(-1))] {
        let overrides = group_coordinator::GroupConfigOverrides {
            consumer_assignment_interval_ms: consumer,
            share_assignment_interval_ms: share,
            ..Default::default()
        };
        assert!(c.set_group_config("g", overrides).is_err(), "{overrides:?} is out of the node's bounds");
    }
    c.stop();
}

/// Configs outlive the coordinator: a new one over the same store describes and
/// applies them (clamped into its bounds, as Kafka reads them back at start).
#[test]
fn configs_survive_a_restart() {
    let store = Arc::new(MemoryGroupConfigStore::new());
    let c = open(store.clone(), Vec::new());
    let context = alice();
    let ops = [set("consumer.heartbeat.interval.ms", "7000"), set("consumer.assignment.interval.ms", "2000")];
    c.caller(&context).alter_group_configs("g", &ops, false).expect("altered");
    c.stop();
    drop(c);

    let c = open(store.clone(), Vec::new());
    assert_eq!(c.group_configs("g").len(), 2);
    assert_eq!(heartbeat_interval(&c, 0).1, 7_000);
    let keys = ["consumer.assignment.interval.ms".to_owned()];
    let described =
        c.caller(&context).describe_group_configs("g", Some(&keys), false, false).expect("described");
    assert_eq!((described[0].value.as_str(), described[0].source), ("2000", ConfigSource::Group));
    c.stop();
    drop(c);

    // A value now over the broker's bound (written behind its back, or under wider
    // bounds before the restart) runs as the bound.
    store.store("g", &props(&[("consumer.heartbeat.interval.ms", "20000")])).expect("stored");
    let c = open(store, Vec::new());
    assert_eq!(heartbeat_interval(&c, 0).1, 15_000);
    c.stop();
}

proptest::proptest! {
    /// `GroupConfigManager.updateGroupConfig`'s note: on the admin path values are
    /// validated first, so reading them back clamps nothing. Whatever integers are set,
    /// configs that pass validation run exactly as set.
    #[test]
    fn validated_configs_run_as_set(
        session in proptest::option::of(40_000i32..70_000),
        interval in proptest::option::of(3_000i32..20_000),
        lock in proptest::option::of(10_000i32..70_000),
        count in proptest::option::of(1i32..15),
    ) {
        let mut p = GroupConfigProps::new();
        for (name, value) in [
            ("consumer.session.timeout.ms", session),
            ("consumer.heartbeat.interval.ms", interval),
            ("share.record.lock.duration.ms", lock),
            ("share.delivery.count.limit", count),
        ] {
            if let Some(v) = value {
                p.insert(name.to_owned(), v.to_string());
            }
        }
        let config = CoordinatorConfig::default();
        if validate_group_config(&p, &config).is_ok() {
            let o = evaluate_group_config(&p, &config);
            proptest::prop_assert_eq!(o.session_timeout_ms, session);
            proptest::prop_assert_eq!(o.heartbeat_interval_ms, interval);
            proptest::prop_assert_eq!(o.share_record_lock_duration_ms, lock);
            proptest::prop_assert_eq!(o.share_delivery_count_limit, count);
        }
    }

    /// SET then DELETE of the same config leaves a group's configs as they were.
    #[test]
    fn set_then_delete_is_a_no_op(value in 5_000i32..15_000, start in proptest::option::of(46_000i32..60_000)) {
        let config = CoordinatorConfig::default();
        let mut current = GroupConfigProps::new();
        if let Some(s) = start {
            current.insert("consumer.session.timeout.ms".to_owned(), s.to_string());
        }
        let name = "consumer.heartbeat.interval.ms".to_owned();
        let set = group_coordinator::alter_group_config(
            &current,
            &[(name.clone(), AlterConfigOp::Set(value.to_string()))],
            &config,
        );
        let set = set.expect("in bounds");
        let back = group_coordinator::alter_group_config(&set, &[(name, AlterConfigOp::Delete)], &config);
        proptest::prop_assert_eq!(back, Ok(current));
    }
}

/// A store two coordinators share, as the nodes of a cluster share etcd.
#[derive(Debug, Default)]
struct Shared(MemoryGroupConfigStore);

impl GroupConfigStore for Shared {
    fn load(&self) -> Result<BTreeMap<String, GroupConfigProps>, group_coordinator::GroupConfigStoreError> {
        self.0.load()
    }

    fn store(
        &self,
        group_id: &str,
        configs: &GroupConfigProps,
    ) -> Result<(), group_coordinator::GroupConfigStoreError> {
        self.0.store(group_id, configs)
    }

    fn is_shared(&self) -> bool {
        true
    }
}

/// The nodes of a cluster: an alter on one is described by another at once (read
/// from the store), builds on what another altered, and is in force on the node
/// serving the group once that node is told of the change.
#[test]
fn coordinators_sharing_a_store_see_each_others_configs() {
    let store = Arc::new(Shared::default());
    let (a, b) = (open(store.clone(), Vec::new()), open(store.clone(), Vec::new()));
    let context = alice();
    a.caller(&context)
        .alter_group_configs("g", &[set("consumer.heartbeat.interval.ms", "7000")], false)
        .expect("altered");
    let keys = ["consumer.heartbeat.interval.ms".to_owned()];
    let described =
        b.caller(&context).describe_group_configs("g", Some(&keys), false, false).expect("described");
    assert_eq!((described[0].value.as_str(), described[0].source), ("7000", ConfigSource::Group));
    // b alters another config of g: a's stays.
    b.caller(&context)
        .alter_group_configs("g", &[set("consumer.session.timeout.ms", "50000")], false)
        .expect("altered");
    assert_eq!(store.get("g").expect("read").len(), 2, "{:?}", store.load());
    // b's alter put both in force on b, which serves g.
    assert_eq!(heartbeat_interval(&b, 0).1, 7_000);
    // a alters again: b's members see it once b is told of it.
    a.caller(&context)
        .alter_group_configs("g", &[set("consumer.heartbeat.interval.ms", "8000")], false)
        .expect("altered");
    assert_eq!(heartbeat_interval(&b, 1).1, 7_000, "not yet told of a's alter");
    b.group_configs_changed("g", store.get("g").expect("read"));
    assert_eq!(heartbeat_interval(&b, 1).1, 8_000);
    // Removed elsewhere: the broker's value again.
    b.group_configs_changed("g", GroupConfigProps::new());
    assert_eq!(heartbeat_interval(&b, 1).1, 5_000);
    a.stop();
    b.stop();
}
