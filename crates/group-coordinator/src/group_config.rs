//! Per-group configs as Kafka 4.3 keeps them (`GroupConfig`, `GroupConfigManager`): the
//! names a GROUP config resource takes, their checks against the broker's bounds
//! (`GroupConfig.validate`, what IncrementalAlterConfigs runs), their clamping into those
//! bounds when read back (`GroupConfig.evaluate`, what a restart runs) and their
//! description (`ConfigHelper.createGroupConfigEntry`, what DescribeConfigs answers).
//!
//! A group's configs are kept as Kafka's controller keeps them: name to value, as text,
//! exactly as set ([`GroupConfigProps`]). Every name Kafka defines is accepted, checked
//! and kept, also for kinds of group this coordinator has no rule for (`streams.*`,
//! the dead-letter queue); the ones it applies are those of
//! [`GroupConfigOverrides`](crate::GroupConfigOverrides), from a group's next heartbeat
//! (the consumer and share assignment intervals among them). Kafka 4.3's
//! `<kind>.assignor.offload.enable` are not names: 4.3 removed them before release
//! (KAFKA-20339), and so unknown here as there.

use std::collections::BTreeMap;

use group_types::ErrorCode;

use crate::{CoordinatorConfig, GroupConfigOverrides, ShareAutoOffsetReset, ShareIsolationLevel};

/// One group's configs, name to value as set (Kafka's `ConfigRecord`s of a GROUP
/// resource). Empty: the group has none.
pub type GroupConfigProps = BTreeMap<String, String>;

/// A broker setting with its bounds: a group's config must lie within `min..=max`,
/// and is `default` when the group sets none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntBounds {
    /// The broker's value (`group.<kind>.<name>`).
    pub default: i32,
    /// `group.<kind>.min.<name>`.
    pub min: i32,
    /// `group.<kind>.max.<name>`.
    pub max: i32,
}

/// The default of `group.consumer.assignment.interval.ms` and
/// `group.share.assignment.interval.ms` (KIP-1263), written once here through a macro
/// so that the number and the text DescribeConfigs shows cannot part.
macro_rules! default_assignment_interval_ms {
    () => {
        0
    };
}

/// The assignment interval of consumer and share groups that neither the group nor
/// the node sets: 0, target assignments computed at once (Kafka 4.2's behaviour).
/// Kafka 4.3's is 1000; ours stays 0 because the oracles replay Kafka 4.2.1's
/// answers and clients here expect no delay (`docs/KAFKA-DIFFERENCES.md`, K10).
pub const DEFAULT_ASSIGNMENT_INTERVAL_MS: i32 = default_assignment_interval_ms!();

/// The broker settings behind the group configs this coordinator has no group kind or
/// other setting for: the assignment intervals of Kafka 4.3 and the streams group
/// settings. [`Default`] gives Kafka's broker defaults (`GroupCoordinatorConfig`), but for
/// the consumer and share assignment intervals ([`DEFAULT_ASSIGNMENT_INTERVAL_MS`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupConfigBounds {
    /// `group.consumer.assignment.interval.ms` and its bounds.
    pub consumer_assignment_interval_ms: IntBounds,
    /// `group.share.assignment.interval.ms` and its bounds.
    pub share_assignment_interval_ms: IntBounds,
    /// `group.streams.assignment.interval.ms` and its bounds.
    pub streams_assignment_interval_ms: IntBounds,
    /// `group.streams.session.timeout.ms` and its bounds.
    pub streams_session_timeout_ms: IntBounds,
    /// `group.streams.heartbeat.interval.ms` and its bounds.
    pub streams_heartbeat_interval_ms: IntBounds,
    /// `group.streams.num.standby.replicas` (`min` unused) and its max.
    pub streams_num_standby_replicas: IntBounds,
    /// `group.streams.num.warmup.replicas` (`min` unused) and its max.
    pub streams_num_warmup_replicas: IntBounds,
    /// `group.streams.task.offset.interval.ms` and its min (`max` unused).
    pub streams_task_offset_interval_ms: IntBounds,
    /// `group.streams.initial.rebalance.delay.ms`.
    pub streams_initial_rebalance_delay_ms: i32,
    /// `group.streams.acceptable.recovery.lag`.
    pub streams_acceptable_recovery_lag: i64,
    /// `group.streams.assignors`: the names `streams.assignor.name` may take.
    pub streams_assignors: Vec<String>,
}

impl Default for GroupConfigBounds {
    fn default() -> GroupConfigBounds {
        let interval = IntBounds { default: DEFAULT_ASSIGNMENT_INTERVAL_MS, min: 0, max: 15_000 };
        GroupConfigBounds {
            consumer_assignment_interval_ms: interval,
            share_assignment_interval_ms: interval,
            streams_assignment_interval_ms: IntBounds { default: 1_000, ..interval },
            streams_session_timeout_ms: IntBounds { default: 45_000, min: 45_000, max: 60_000 },
            streams_heartbeat_interval_ms: IntBounds { default: 5_000, min: 5_000, max: 15_000 },
            streams_num_standby_replicas: IntBounds { default: 0, min: 0, max: 2 },
            streams_num_warmup_replicas: IntBounds { default: 2, min: 0, max: 20 },
            streams_task_offset_interval_ms: IntBounds { default: 60_000, min: 15_000, max: i32::MAX },
            streams_initial_rebalance_delay_ms: 3_000,
            streams_acceptable_recovery_lag: 10_000,
            streams_assignors: vec!["sticky".to_owned()],
        }
    }
}

/// A config's type, with DescribeConfigs' `config_type` code (`ConfigType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GroupConfigType {
    /// `true` or `false`.
    Boolean,
    /// Any text (some names check it further).
    String,
    /// A 32-bit integer.
    Int,
    /// A 64-bit integer.
    Long,
    /// Comma-separated text.
    List,
}

impl GroupConfigType {
    /// Kafka's code for it in DescribeConfigs (`DescribeConfigsResponse.ConfigType`).
    pub const fn code(self) -> i8 {
        match self {
            GroupConfigType::Boolean => 1,
            GroupConfigType::String => 2,
            GroupConfigType::Int => 3,
            GroupConfigType::Long => 5,
            GroupConfigType::List => 7,
        }
    }
}

/// Where a described value comes from (`DescribeConfigsResponse.ConfigSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigSource {
    /// The broker's configuration (a setting given at start).
    StaticBroker,
    /// Kafka's default.
    Default,
    /// The group's own config (Kafka's `GROUP_CONFIG`).
    Group,
}

impl ConfigSource {
    /// Kafka's code for it.
    pub const fn code(self) -> i8 {
        match self {
            ConfigSource::StaticBroker => 4,
            ConfigSource::Default => 5,
            ConfigSource::Group => 8,
        }
    }
}

/// One synonym of a described config: where else its value could come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSynonym {
    /// The group config's name, or its broker setting's.
    pub name: String,
    /// The value there.
    pub value: String,
    /// Which it is.
    pub source: ConfigSource,
}

/// One config of a group as DescribeConfigs shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribedGroupConfig {
    /// The name.
    pub name: String,
    /// The value in force (the group's, else the broker's), as Kafka prints it.
    pub value: String,
    /// Where the value comes from.
    pub source: ConfigSource,
    /// Its type.
    pub config_type: GroupConfigType,
    /// Where it could come from, most specific first (empty unless asked).
    pub synonyms: Vec<ConfigSynonym>,
    /// What it does (`None` unless asked).
    pub documentation: Option<String>,
}

/// Why a group's configs were refused: Kafka's `InvalidConfigurationException` or
/// `ConfigException` (both `INVALID_CONFIG`) and `InvalidRequestException`
/// (`INVALID_REQUEST`), with Kafka's messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GroupConfigError {
    /// A name Kafka does not define for groups.
    #[error("Unknown group config name: {0}")]
    UnknownName(String),
    /// A value its type or Kafka's own check refuses (`ConfigException`).
    #[error("Invalid value {value} for configuration {name}: {reason}")]
    BadValue {
        /// The config.
        name: String,
        /// The value as given.
        value: String,
        /// Kafka's reason.
        reason: String,
    },
    /// A value outside the broker's bounds, or settings that contradict each other
    /// (`InvalidConfigurationException`): Kafka's message.
    #[error("{0}")]
    Invalid(String),
    /// The resource is malformed: an empty group name, a key given twice, an
    /// operation Kafka does not know (`InvalidRequestException`).
    #[error("{0}")]
    InvalidRequest(String),
    /// The caller may not describe (DESCRIBE_CONFIGS) or alter (ALTER_CONFIGS) the
    /// group's configs.
    #[error("Group authorization failed.")]
    AuthorizationFailed,
    /// The configs could not be stored: nothing changed.
    #[error(transparent)]
    Storage(crate::GroupConfigStoreError),
}

impl GroupConfigError {
    /// The error code Kafka answers it with.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            GroupConfigError::InvalidRequest(_) => ErrorCode::InvalidRequest,
            GroupConfigError::AuthorizationFailed => ErrorCode::GroupAuthorizationFailed,
            GroupConfigError::Storage(_) => ErrorCode::UnknownServerError,
            _ => ErrorCode::InvalidConfig,
        }
    }
}

/// Kafka's `ConfigDef` check of one value, besides its type.
#[derive(Debug, Clone, Copy)]
enum Check {
    None,
    AtLeast(i64),
    /// `share.auto.offset.reset`'s validator.
    AutoOffsetReset,
    /// `share.isolation.level`: `in(read_committed, read_uncommitted)`.
    IsolationLevel,
    /// A list without empty items (`ValidList.anyNonDuplicateValues(true, false)`).
    NonEmptyItems,
}

/// The broker's bounds of a config, checked by `GroupConfig.validate` and clamped to
/// by `GroupConfig.evaluate`.
#[derive(Debug, Clone, Copy)]
enum Bounds {
    None,
    Range(i32, i32),
    Max(i32),
    Min(i32),
}

/// One group config: Kafka's `GroupConfig.CONFIG_DEF` entry and its broker synonym.
struct Def {
    name: &'static str,
    ty: GroupConfigType,
    check: Check,
    /// The broker setting behind it, if any (`GroupConfig.ALL_GROUP_CONFIG_SYNONYMS`).
    synonym: Option<&'static str>,
    /// The broker's bounds for it.
    bounds: fn(&CoordinatorConfig) -> Bounds,
    /// The value when the group sets none: the broker's.
    value: fn(&CoordinatorConfig) -> String,
    /// The default, when the broker has no setting of its own or keeps it: Kafka's,
    /// but this build's for the consumer and share assignment intervals.
    kafka_default: &'static str,
    doc: &'static str,
}

fn none(_: &CoordinatorConfig) -> Bounds {
    Bounds::None
}

fn range(b: IntBounds) -> Bounds {
    Bounds::Range(b.min, b.max)
}

/// Every group config, in Kafka's `GroupConfig.CONFIG_DEF` order.
static DEFS: &[Def] = &[
    Def {
        name: "consumer.session.timeout.ms",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(1),
        synonym: Some("group.consumer.session.timeout.ms"),
        bounds: |c| Bounds::Range(c.consumer.min_session_timeout_ms, c.consumer.max_session_timeout_ms),
        value: |c| c.consumer.session_timeout_ms.to_string(),
        kafka_default: "45000",
        doc: "The session timeout of the group's consumer protocol members.",
    },
    Def {
        name: "consumer.heartbeat.interval.ms",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(1),
        synonym: Some("group.consumer.heartbeat.interval.ms"),
        bounds: |c| Bounds::Range(c.consumer.min_heartbeat_interval_ms, c.consumer.max_heartbeat_interval_ms),
        value: |c| c.consumer.heartbeat_interval_ms.to_string(),
        kafka_default: "5000",
        doc: "The heartbeat interval given to the group's consumer protocol members.",
    },
    Def {
        name: "consumer.assignment.interval.ms",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(0),
        synonym: Some("group.consumer.assignment.interval.ms"),
        bounds: |c| range(c.group_config_bounds.consumer_assignment_interval_ms),
        value: |c| c.group_config_bounds.consumer_assignment_interval_ms.default.to_string(),
        kafka_default: concat!(default_assignment_interval_ms!()),
        doc: "The least time between two target assignment updates of the group.",
    },
    Def {
        name: "share.session.timeout.ms",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(1),
        synonym: Some("group.share.session.timeout.ms"),
        bounds: |c| Bounds::Range(c.share.min_session_timeout_ms, c.share.max_session_timeout_ms),
        value: |c| c.share.session_timeout_ms.to_string(),
        kafka_default: "45000",
        doc: "The session timeout of the share group's members.",
    },
    Def {
        name: "share.heartbeat.interval.ms",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(1),
        synonym: Some("group.share.heartbeat.interval.ms"),
        bounds: |c| Bounds::Range(c.share.min_heartbeat_interval_ms, c.share.max_heartbeat_interval_ms),
        value: |c| c.share.heartbeat_interval_ms.to_string(),
        kafka_default: "5000",
        doc: "The heartbeat interval given to the share group's members.",
    },
    Def {
        name: "share.record.lock.duration.ms",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(1000),
        synonym: Some("group.share.record.lock.duration.ms"),
        bounds: |c| Bounds::Range(c.share.min_record_lock_duration_ms, c.share.max_record_lock_duration_ms),
        value: |c| c.share.record_lock_duration_ms.to_string(),
        kafka_default: "30000",
        doc: "How long a share group's consumer holds a record's acquisition lock.",
    },
    Def {
        name: "share.delivery.count.limit",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(2),
        synonym: Some("group.share.delivery.count.limit"),
        bounds: |c| Bounds::Range(c.share.min_delivery_count_limit, c.share.max_delivery_count_limit),
        value: |c| c.share.delivery_count_limit.to_string(),
        kafka_default: "5",
        doc: "How many times a record is delivered before it is archived.",
    },
    Def {
        name: "share.partition.max.record.locks",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(100),
        synonym: Some("group.share.partition.max.record.locks"),
        bounds: |c| {
            Bounds::Range(c.share.min_partition_max_record_locks, c.share.max_partition_max_record_locks)
        },
        value: |c| c.share.partition_max_record_locks.to_string(),
        kafka_default: "2000",
        doc: "The most records a share partition holds acquired at once.",
    },
    Def {
        name: "share.auto.offset.reset",
        ty: GroupConfigType::String,
        check: Check::AutoOffsetReset,
        synonym: None,
        bounds: none,
        value: |_| "latest".to_owned(),
        kafka_default: "latest",
        doc: "Where a share partition starts: earliest, latest or by_duration:<ISO-8601 duration>.",
    },
    Def {
        name: "share.isolation.level",
        ty: GroupConfigType::String,
        check: Check::IsolationLevel,
        synonym: None,
        bounds: none,
        value: |_| "read_uncommitted".to_owned(),
        kafka_default: "read_uncommitted",
        doc: "Whether the share group reads aborted transactions' records (read_uncommitted) or not.",
    },
    Def {
        name: "share.renew.acknowledge.enable",
        ty: GroupConfigType::Boolean,
        check: Check::None,
        synonym: None,
        bounds: none,
        value: |_| "true".to_owned(),
        kafka_default: "true",
        doc: "Whether the share group's consumers may renew acquisition locks.",
    },
    Def {
        name: "share.assignment.interval.ms",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(0),
        synonym: Some("group.share.assignment.interval.ms"),
        bounds: |c| range(c.group_config_bounds.share_assignment_interval_ms),
        value: |c| c.group_config_bounds.share_assignment_interval_ms.default.to_string(),
        kafka_default: concat!(default_assignment_interval_ms!()),
        doc: "The least time between two target assignment updates of the share group.",
    },
    Def {
        name: "streams.session.timeout.ms",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(1),
        synonym: Some("group.streams.session.timeout.ms"),
        bounds: |c| range(c.group_config_bounds.streams_session_timeout_ms),
        value: |c| c.group_config_bounds.streams_session_timeout_ms.default.to_string(),
        kafka_default: "45000",
        doc: "The session timeout of the streams group's members.",
    },
    Def {
        name: "streams.heartbeat.interval.ms",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(1),
        synonym: Some("group.streams.heartbeat.interval.ms"),
        bounds: |c| range(c.group_config_bounds.streams_heartbeat_interval_ms),
        value: |c| c.group_config_bounds.streams_heartbeat_interval_ms.default.to_string(),
        kafka_default: "5000",
        doc: "The heartbeat interval given to the streams group's members.",
    },
    Def {
        name: "streams.num.standby.replicas",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(0),
        synonym: Some("group.streams.num.standby.replicas"),
        bounds: |c| Bounds::Max(c.group_config_bounds.streams_num_standby_replicas.max),
        value: |c| c.group_config_bounds.streams_num_standby_replicas.default.to_string(),
        kafka_default: "0",
        doc: "The number of standby replicas of each task.",
    },
    Def {
        name: "streams.initial.rebalance.delay.ms",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(0),
        synonym: Some("group.streams.initial.rebalance.delay.ms"),
        bounds: none,
        value: |c| c.group_config_bounds.streams_initial_rebalance_delay_ms.to_string(),
        kafka_default: "3000",
        doc: "How long the streams group's first rebalance waits for more members.",
    },
    Def {
        name: "streams.assignment.interval.ms",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(0),
        synonym: Some("group.streams.assignment.interval.ms"),
        bounds: |c| range(c.group_config_bounds.streams_assignment_interval_ms),
        value: |c| c.group_config_bounds.streams_assignment_interval_ms.default.to_string(),
        kafka_default: "1000",
        doc: "The least time between two target assignment updates of the streams group.",
    },
    Def {
        name: "streams.task.offset.interval.ms",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(1),
        synonym: Some("group.streams.task.offset.interval.ms"),
        bounds: |c| Bounds::Min(c.group_config_bounds.streams_task_offset_interval_ms.min),
        value: |c| c.group_config_bounds.streams_task_offset_interval_ms.default.to_string(),
        kafka_default: "60000",
        doc: "How often the streams group's members report their tasks' offsets.",
    },
    Def {
        name: "streams.num.warmup.replicas",
        ty: GroupConfigType::Int,
        check: Check::AtLeast(0),
        synonym: Some("group.streams.num.warmup.replicas"),
        bounds: |c| Bounds::Max(c.group_config_bounds.streams_num_warmup_replicas.max),
        value: |c| c.group_config_bounds.streams_num_warmup_replicas.default.to_string(),
        kafka_default: "2",
        doc: "The number of warm-up replicas of the streams group.",
    },
    Def {
        name: "streams.rack.aware.assignment.tags",
        ty: GroupConfigType::List,
        check: Check::NonEmptyItems,
        synonym: Some("group.streams.rack.aware.assignment.tags"),
        bounds: none,
        value: |_| String::new(),
        kafka_default: "",
        doc: "The client tag keys standby tasks are spread over.",
    },
    Def {
        name: "streams.acceptable.recovery.lag",
        ty: GroupConfigType::Long,
        check: Check::AtLeast(0),
        synonym: Some("group.streams.acceptable.recovery.lag"),
        bounds: none,
        value: |c| c.group_config_bounds.streams_acceptable_recovery_lag.to_string(),
        kafka_default: "10000",
        doc: "How far behind a task may be and still count as caught up.",
    },
    Def {
        name: "streams.assignor.name",
        ty: GroupConfigType::String,
        check: Check::None,
        synonym: Some("group.streams.assignors"),
        bounds: none,
        value: |c| c.group_config_bounds.streams_assignors.first().cloned().unwrap_or_default(),
        kafka_default: "sticky",
        doc: "The task assignor of the streams group, by name among the broker's group.streams.assignors.",
    },
    Def {
        name: "errors.deadletterqueue.topic.name",
        ty: GroupConfigType::String,
        check: Check::None,
        synonym: None,
        bounds: none,
        value: |_| String::new(),
        kafka_default: "",
        doc: "The share group's dead-letter queue topic (none when blank).",
    },
    Def {
        name: "errors.deadletterqueue.copy.record.enable",
        ty: GroupConfigType::Boolean,
        check: Check::None,
        synonym: None,
        bounds: none,
        value: |_| "false".to_owned(),
        kafka_default: "false",
        doc: "Whether a dead-lettered record is copied whole, or only its context headers.",
    },
];

/// Every group config name Kafka defines (`GroupConfig.configNames`), in its order.
pub fn group_config_names() -> impl Iterator<Item = &'static str> {
    DEFS.iter().map(|d| d.name)
}

fn def(name: &str) -> Option<&'static Def> {
    DEFS.iter().find(|d| d.name == name)
}

/// A value parsed by its type (`ConfigDef.parseType`).
#[derive(Debug, Clone, PartialEq)]
enum Parsed {
    Int(i32),
    Long(i64),
    Bool(bool),
    Text(String),
    List(Vec<String>),
}

impl Parsed {
    /// As Kafka prints it (`ConfigDef.convertToString`).
    fn print(&self) -> String {
        match self {
            Parsed::Int(v) => v.to_string(),
            Parsed::Long(v) => v.to_string(),
            Parsed::Bool(v) => v.to_string(),
            Parsed::Text(v) => v.clone(),
            Parsed::List(v) => v.join(","),
        }
    }
}

/// `ConfigDef.parseType` and the entry's validator.
fn parse(def: &Def, raw: &str) -> Result<Parsed, GroupConfigError> {
    let bad = |reason: String| GroupConfigError::BadValue {
        name: def.name.to_owned(),
        value: raw.to_owned(),
        reason,
    };
    let trimmed = raw.trim();
    let parsed = match def.ty {
        GroupConfigType::Int => {
            Parsed::Int(trimmed.parse().map_err(|_| bad("Not a number of type INT".into()))?)
        }
        GroupConfigType::Long => {
            Parsed::Long(trimmed.parse().map_err(|_| bad("Not a number of type LONG".into()))?)
        }
        GroupConfigType::Boolean => match trimmed.to_ascii_lowercase().as_str() {
            "true" => Parsed::Bool(true),
            "false" => Parsed::Bool(false),
            _ => return Err(bad("Expected value to be either true or false".into())),
        },
        GroupConfigType::String => Parsed::Text(trimmed.to_owned()),
        GroupConfigType::List => {
            let items: Vec<String> = match trimmed {
                "" => Vec::new(),
                _ => trimmed.split(',').map(|item| item.trim().to_owned()).collect(),
            };
            Parsed::List(items)
        }
    };
    match (def.check, &parsed) {
        (Check::AtLeast(min), Parsed::Int(v)) if i64::from(*v) < min => {
            Err(bad(format!("Value must be at least {min}")))
        }
        (Check::AtLeast(min), Parsed::Long(v)) if *v < min => {
            Err(bad(format!("Value must be at least {min}")))
        }
        (Check::AutoOffsetReset, Parsed::Text(v)) => match v.parse::<ShareAutoOffsetReset>() {
            Ok(_) => Ok(parsed),
            Err(_) => Err(bad("Invalid value for share.auto.offset.reset".into())),
        },
        (Check::IsolationLevel, Parsed::Text(v)) => match v.parse::<ShareIsolationLevel>() {
            Ok(_) => Ok(parsed),
            Err(_) => Err(bad("String must be one of: read_committed, read_uncommitted".into())),
        },
        (Check::NonEmptyItems, Parsed::List(items)) if items.iter().any(String::is_empty) => {
            Err(bad("Configured value contains an empty list item".into()))
        }
        _ => Ok(parsed),
    }
}

/// Kafka's `GroupConfig.validate`, run on the configs a group would have after an
/// IncrementalAlterConfigs: every name known, every value of its type and within
/// Kafka's own checks, then within the broker's bounds (`config`), a session longer
/// than its heartbeat interval, a registered streams assignor, a dead-letter topic
/// not named like an internal one. The first failure, in Kafka's order.
///
/// ```
/// use group_coordinator::{CoordinatorConfig, GroupConfigProps, validate_group_config};
///
/// let broker = CoordinatorConfig::default();
/// let mut props = GroupConfigProps::new();
/// props.insert("consumer.heartbeat.interval.ms".into(), "6000".into());
/// assert!(validate_group_config(&props, &broker).is_ok());
/// props.insert("consumer.heartbeat.interval.ms".into(), "1".into());
/// let error = validate_group_config(&props, &broker).unwrap_err();
/// assert_eq!(error.to_string(), "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.");
/// ```
pub fn validate_group_config(
    props: &GroupConfigProps,
    config: &CoordinatorConfig,
) -> Result<(), GroupConfigError> {
    if let Some(unknown) = props.keys().find(|name| def(name).is_none()) {
        return Err(GroupConfigError::UnknownName(unknown.clone()));
    }
    // `ConfigDef` drops duplicate list items when parsing, so they are looked for in the text.
    if let Some(raw) = props.get("streams.rack.aware.assignment.tags") {
        let tags: Vec<&str> = match raw.trim() {
            "" => Vec::new(),
            t => t.split(',').map(str::trim).collect(),
        };
        if (1..tags.len()).any(|i| tags[..i].contains(&tags[i])) {
            return Err(GroupConfigError::Invalid(
                "streams.rack.aware.assignment.tags must not contain duplicate tag keys.".into(),
            ));
        }
    }
    let mut parsed = BTreeMap::new();
    for d in DEFS {
        if let Some(raw) = props.get(d.name) {
            parsed.insert(d.name, parse(d, raw)?);
        }
    }
    for d in DEFS {
        let Some(Parsed::Int(v)) = parsed.get(d.name) else { continue };
        let v = *v;
        match (d.bounds)(config) {
            Bounds::Range(min, max) if v < min || v > max => {
                return Err(GroupConfigError::Invalid(format!(
                    "{} must be in the range {min} to {max} inclusive.",
                    d.name
                )));
            }
            Bounds::Max(max) if v > max => {
                return Err(GroupConfigError::Invalid(format!(
                    "{} must be less than or equal to {max}",
                    d.name
                )));
            }
            Bounds::Min(min) if v < min => {
                return Err(GroupConfigError::Invalid(format!(
                    "{} must be greater than or equal to {min}",
                    d.name
                )));
            }
            _ => {}
        }
    }
    if let Some(Parsed::Text(name)) = parsed.get("streams.assignor.name") {
        let registered = &config.group_config_bounds.streams_assignors;
        if !registered.contains(name) {
            return Err(GroupConfigError::Invalid(format!(
                "streams.assignor.name '{name}' is not a registered task assignor. Registered assignors are: [{}].",
                registered.join(", ")
            )));
        }
    }
    let int = |name: &str, default: i32| match parsed.get(name) {
        Some(Parsed::Int(v)) => *v,
        _ => default,
    };
    let streams = &config.group_config_bounds;
    for (kind, session, interval) in [
        ("consumer", config.consumer.session_timeout_ms, config.consumer.heartbeat_interval_ms),
        ("share", config.share.session_timeout_ms, config.share.heartbeat_interval_ms),
        (
            "streams",
            streams.streams_session_timeout_ms.default,
            streams.streams_heartbeat_interval_ms.default,
        ),
    ] {
        let (session_key, interval_key) =
            (format!("{kind}.session.timeout.ms"), format!("{kind}.heartbeat.interval.ms"));
        if !parsed.contains_key(session_key.as_str()) && !parsed.contains_key(interval_key.as_str()) {
            continue;
        }
        if int(&session_key, session) <= int(&interval_key, interval) {
            return Err(GroupConfigError::Invalid(format!(
                "{session_key} must be greater than {interval_key}"
            )));
        }
    }
    if let Some(Parsed::Text(topic)) = parsed.get("errors.deadletterqueue.topic.name")
        && topic.starts_with("__")
    {
        return Err(GroupConfigError::Invalid(
            "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'".into(),
        ));
    }
    Ok(())
}

/// Kafka's `GroupConfig.evaluate` and `GroupConfigManager.updateGroupConfig`: the
/// overrides a group runs with, its integer configs clamped into the broker's bounds
/// (bounds may have narrowed since they were set; a restart reads them back so).
/// Values that are not numbers are left out, as if unset; Kafka's own lower limits
/// (`atLeast`) are not checked here, as the broker's bounds are tighter.
pub fn evaluate_group_config(props: &GroupConfigProps, config: &CoordinatorConfig) -> GroupConfigOverrides {
    let int = |name: &str| {
        let d = def(name)?;
        let v: i32 = props.get(name)?.trim().parse().ok()?;
        Some(match (d.bounds)(config) {
            Bounds::Range(min, max) => v.clamp(min, max.max(min)),
            Bounds::Max(max) => v.min(max),
            Bounds::Min(min) => v.max(min),
            Bounds::None => v,
        })
    };
    let text = |name: &str| props.get(name).map(|v| v.trim().to_owned());
    GroupConfigOverrides {
        session_timeout_ms: int("consumer.session.timeout.ms"),
        heartbeat_interval_ms: int("consumer.heartbeat.interval.ms"),
        share_session_timeout_ms: int("share.session.timeout.ms"),
        share_heartbeat_interval_ms: int("share.heartbeat.interval.ms"),
        share_record_lock_duration_ms: int("share.record.lock.duration.ms"),
        share_delivery_count_limit: int("share.delivery.count.limit"),
        share_partition_max_record_locks: int("share.partition.max.record.locks"),
        share_auto_offset_reset: text("share.auto.offset.reset").and_then(|v| v.parse().ok()),
        share_isolation_level: text("share.isolation.level").and_then(|v| v.parse().ok()),
        consumer_assignment_interval_ms: int("consumer.assignment.interval.ms"),
        share_assignment_interval_ms: int("share.assignment.interval.ms"),
    }
}

/// `overrides` as the configs that set them (the inverse of [`evaluate_group_config`]
/// for what it covers).
pub fn group_config_props(overrides: &GroupConfigOverrides) -> GroupConfigProps {
    let mut props = GroupConfigProps::new();
    let mut put = |name: &str, value: Option<String>| {
        if let Some(value) = value {
            props.insert(name.to_owned(), value);
        }
    };
    let o = overrides;
    put("consumer.session.timeout.ms", o.session_timeout_ms.map(|v| v.to_string()));
    put("consumer.heartbeat.interval.ms", o.heartbeat_interval_ms.map(|v| v.to_string()));
    put("share.session.timeout.ms", o.share_session_timeout_ms.map(|v| v.to_string()));
    put("share.heartbeat.interval.ms", o.share_heartbeat_interval_ms.map(|v| v.to_string()));
    put("share.record.lock.duration.ms", o.share_record_lock_duration_ms.map(|v| v.to_string()));
    put("share.delivery.count.limit", o.share_delivery_count_limit.map(|v| v.to_string()));
    put("share.partition.max.record.locks", o.share_partition_max_record_locks.map(|v| v.to_string()));
    put("consumer.assignment.interval.ms", o.consumer_assignment_interval_ms.map(|v| v.to_string()));
    put("share.assignment.interval.ms", o.share_assignment_interval_ms.map(|v| v.to_string()));
    put(
        "share.auto.offset.reset",
        o.share_auto_offset_reset.map(|r| match r {
            ShareAutoOffsetReset::Earliest => "earliest".to_owned(),
            ShareAutoOffsetReset::ByDuration(ms) => format!("by_duration:PT{}S", ms as f64 / 1000.0),
            _ => "latest".to_owned(),
        }),
    );
    put(
        "share.isolation.level",
        o.share_isolation_level.map(|l| match l {
            ShareIsolationLevel::ReadCommitted => "read_committed".to_owned(),
            _ => "read_uncommitted".to_owned(),
        }),
    );
    props
}

/// Kafka's `ConfigHelper.describeConfigs` of a GROUP resource: every group config (or
/// those `keys` names, in Kafka's order; unknown names are left out), the group's
/// value where it set one, else the broker's. Synonyms list the group's value, then the
/// broker setting's (a static setting where the broker's value is not Kafka's
/// default: this coordinator cannot tell a setting given at start that equals the
/// default from none), then Kafka's default.
pub fn describe_group_config(
    props: &GroupConfigProps,
    config: &CoordinatorConfig,
    keys: Option<&[String]>,
    include_synonyms: bool,
    include_documentation: bool,
) -> Vec<DescribedGroupConfig> {
    DEFS.iter()
        .filter(|d| keys.is_none_or(|keys| keys.iter().any(|k| k == d.name)))
        .map(|d| {
            let broker = (d.value)(config);
            let mut synonyms = Vec::new();
            if let Some(raw) = props.get(d.name) {
                let value = parse(d, raw).map_or_else(|_| raw.clone(), |p| p.print());
                synonyms.push(ConfigSynonym { name: d.name.to_owned(), value, source: ConfigSource::Group });
            }
            let synonym_name = d.synonym.unwrap_or(d.name);
            if d.synonym.is_some() && broker != d.kafka_default {
                let source = ConfigSource::StaticBroker;
                synonyms.push(ConfigSynonym { name: synonym_name.to_owned(), value: broker.clone(), source });
            }
            let value = d.kafka_default.to_owned();
            synonyms.push(ConfigSynonym {
                name: synonym_name.to_owned(),
                value,
                source: ConfigSource::Default,
            });
            let (value, source) = match synonyms.first() {
                Some(first) if first.source == ConfigSource::Group => {
                    (first.value.clone(), ConfigSource::Group)
                }
                Some(first) if first.source == ConfigSource::StaticBroker => {
                    (broker, ConfigSource::StaticBroker)
                }
                _ => (broker, ConfigSource::Default),
            };
            DescribedGroupConfig {
                name: d.name.to_owned(),
                value,
                source,
                config_type: d.ty,
                synonyms: if include_synonyms { synonyms } else { Vec::new() },
                documentation: include_documentation.then(|| d.doc.to_owned()),
            }
        })
        .collect()
}

/// An IncrementalAlterConfigs operation on one config (`AlterConfigOp.OpType`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AlterConfigOp {
    /// Set the value (code 0).
    Set(String),
    /// Remove the group's value (code 1).
    Delete,
    /// Add items to a list (code 2).
    Append(String),
    /// Remove items from a list (code 3).
    Subtract(String),
}

impl AlterConfigOp {
    /// The operation for its wire code and value; `None` for a code Kafka does not define.
    pub fn from_code(code: i8, value: Option<String>) -> Option<AlterConfigOp> {
        let value = value.unwrap_or_default();
        match code {
            0 => Some(AlterConfigOp::Set(value)),
            1 => Some(AlterConfigOp::Delete),
            2 => Some(AlterConfigOp::Append(value)),
            3 => Some(AlterConfigOp::Subtract(value)),
            _ => None,
        }
    }
}

/// Kafka's `ConfigurationControlManager.incrementalAlterConfigResource` on a group's
/// configs: each operation applied to `current` in turn (APPEND and SUBTRACT only on
/// list configs, items split at commas), the result checked whole by
/// [`validate_group_config`]. Duplicate names are refused before (as the broker's
/// request handling does).
pub fn alter_group_config(
    current: &GroupConfigProps,
    ops: &[(String, AlterConfigOp)],
    config: &CoordinatorConfig,
) -> Result<GroupConfigProps, GroupConfigError> {
    if (1..ops.len()).any(|i| ops[..i].iter().any(|(name, _)| *name == ops[i].0)) {
        return Err(GroupConfigError::InvalidRequest("Error due to duplicate config keys".to_owned()));
    }
    let mut next = current.clone();
    for (name, op) in ops {
        match op {
            AlterConfigOp::Set(value) => {
                next.insert(name.clone(), value.clone());
            }
            AlterConfigOp::Delete => {
                next.remove(name);
            }
            AlterConfigOp::Append(items) | AlterConfigOp::Subtract(items) => {
                if def(name).is_none_or(|d| d.ty != GroupConfigType::List) {
                    let verb = if matches!(op, AlterConfigOp::Append(_)) { "APPEND" } else { "SUBTRACT" };
                    return Err(GroupConfigError::Invalid(format!(
                        "Can't {verb} to key {name} because its type is not LIST."
                    )));
                }
                let mut list: Vec<String> = match next.get(name).map(|v| v.trim()) {
                    None | Some("") => Vec::new(),
                    Some(v) => v.split(',').map(|s| s.trim().to_owned()).collect(),
                };
                for item in items.split(',') {
                    if matches!(op, AlterConfigOp::Append(_)) {
                        if !list.iter().any(|i| i == item) {
                            list.push(item.to_owned());
                        }
                    } else {
                        list.retain(|i| i != item);
                    }
                }
                next.insert(name.clone(), list.join(","));
            }
        }
    }
    validate_group_config(&next, config)?;
    Ok(next)
}
