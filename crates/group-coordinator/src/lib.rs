//! Kafka's consumer-group protocols, the classic one (JoinGroup, SyncGroup,
//! Heartbeat, LeaveGroup, offsets) and KIP-848's consumer protocol
//! (ConsumerGroupHeartbeat, ConsumerGroupDescribe, server-side assignment), as a
//! deterministic core under a threaded runtime.
//!
//! # Brief overview
//!
//! - [`CoordinatorCore`]: the state machine of every group. No threads, locks, clock
//!   or I/O: each entry point takes `now` and returns [`Effects`] (responses,
//!   deadlines to arm or cancel, records to persist).
//! - [`GroupCoordinator`]: the runtime. One core per coordinator partition behind
//!   its own lock, one timer thread, an injectable [`Clock`] ([`SystemClock`],
//!   [`ManualClock`]), and a storage stage that appends to any
//!   [`group_offsets::MetadataStore`] off every lock, batching per partition.
//!   Every request has a method returning a [`Pending`] handle at once, which can be
//!   waited on or `.await`ed and never blocks the caller's thread (an answer merged
//!   from several parts is merged by whoever takes it), and a blocking `handle_*`
//!   twin. Kafka's ListGroups is [`GroupCoordinator::list_groups_matching`]:
//!   [`GroupCoordinator::list_groups`] returns the groups' snapshots.
//! - [`group_api_table!`]: every group API declared once (Kafka key, versions,
//!   request and response, routing, ACL, what the answer waits for, the runtime's
//!   methods, the answers of a refused request); [`Request`], [`Response`], [`Api`]
//!   and the runtime's per-API methods come from it, and `group-server` expands it
//!   into its wire dispatch and ApiVersions.
//! - The core's call contract (what may arrive while writes are outstanding, the
//!   order completions come back in, what a failed write reverts) is written in
//!   [`CoordinatorCore`]'s docs and summed up in `docs/ARCHITECTURE.md`.
//! - [`CoordinatorConfig`]: broker settings, Kafka's defaults.
//! - [`GroupMetadata`] / [`MemberMetadata`]: read-only snapshots.
//! - [`Authorizer`]: the ACL hook a broker implements ([`AllowAll`] by default, set
//!   with [`GroupCoordinator::builder`]), asked Kafka's READ / DESCRIBE / DELETE
//!   questions about [`Resource`]s for the [`Principal`] of a [`RequestContext`].
//!   [`GroupCoordinator::caller`] gives the same methods on behalf of one caller; the
//!   methods of [`GroupCoordinator`] itself act as [`Principal::ANONYMOUS`].
//!   [`authorized_operations`] is KIP-430's `authorized_operations` of a resource.
//! - Per-group configs (Kafka's `GroupConfig`): [`validate_group_config`],
//!   [`describe_group_config`] and [`alter_group_config`] over a group's
//!   [`GroupConfigProps`]; [`Caller::describe_group_configs`] and
//!   [`Caller::alter_group_configs`] serve DescribeConfigs and IncrementalAlterConfigs
//!   of GROUP resources, kept in a [`GroupConfigStore`] (memory by default, set with
//!   [`GroupCoordinatorBuilder::group_config_store`]).
//! - [`TopicMetadata`]: which topic-partitions exist ([`AllTopicsExist`] by
//!   default, set with [`GroupCoordinatorBuilder::topic_metadata`]); OffsetCommit and
//!   OffsetDelete partitions it does not know are answered
//!   `UNKNOWN_TOPIC_OR_PARTITION` after the topic ACL check and never stored.
//! - [`PartitionEndOffsets`]: where partitions' logs end (none by default, set
//!   with [`GroupCoordinatorBuilder::partition_end_offsets`]), Kafka's
//!   `PartitionMetadataClient`; DescribeShareGroupOffsets answers a share
//!   partition's lag (KIP-1226) from it, and -1 without it.
//! - [`GroupEvent`]s: state changes, rebalances, expirations and fenced members,
//!   reported by the core in [`Effects::events`]; the runtime emits each as a
//!   `tracing` event (target `group_coordinator`, silent without a subscriber; what
//!   operators follow at info, per-step noise at debug) and counts it in
//!   [`GroupCoordinator::metrics`] ([`CoordinatorMetrics`]), which also holds the
//!   storage appends' latencies ([`LatencySnapshot`] of a [`LatencyHistogram`]).
//!
//! - Partition ownership, for several coordinator nodes over one replicated store:
//!   with [`GroupCoordinatorBuilder::managed_ownership`] an ownership manager calls
//!   [`GroupCoordinator::load_partition`] (fence older owners with an empty append
//!   at the new epoch, then load) and [`GroupCoordinator::unload_partition`]; each
//!   partition is a [`PartitionState`], and requests for groups of a partition not
//!   owned are answered `NOT_COORDINATOR` (`COORDINATOR_LOAD_IN_PROGRESS` while it
//!   loads). A fenced append unloads its partition and calls
//!   [`GroupCoordinatorBuilder::on_partition_lost`]'s listener.
//!
//! - KIP-848 consumer groups (`kip848-semantics.md`): `Request::ConsumerGroupHeartbeat`
//!   and `Request::ConsumerGroupDescribe` in the core,
//!   [`GroupCoordinator::consumer_group_heartbeat`] and
//!   [`GroupCoordinator::consumer_group_describe`] in the runtime. The broker's
//!   topics reach consumer groups as a [`MetadataImage`]
//!   ([`GroupCoordinatorBuilder::metadata_image`],
//!   [`GroupCoordinator::update_metadata_image`]); targets come from the
//!   server-side assignors of `group_assignors::server` (`uniform`, `range`, or one
//!   registered with [`GroupCoordinatorBuilder::server_assignor`]); settings are
//!   [`ConsumerGroupConfig`] (with per-group [`GroupConfigOverrides`]) and
//!   [`MigrationPolicy`] decides when classic and consumer groups convert into each
//!   other. Classic members keep working inside a consumer group through JoinGroup,
//!   SyncGroup and Heartbeat. [`ConsumerGroupSnapshot`] is the read-only view.
//!
//! - Transactional offsets (KIP-98, KIP-447): [`GroupCoordinator::txn_offset_commit`]
//!   keeps a producer's offsets pending, durable and invisible (a `require_stable`
//!   OffsetFetch answers `UNSTABLE_OFFSET_COMMIT` where any is open), until a
//!   transaction coordinator ends the transaction with
//!   [`GroupCoordinator::write_txn_markers`] (Kafka's
//!   `GroupCoordinator.completeTransaction`, once per partition of
//!   `__consumer_offsets` the markers name): COMMIT makes each offset committed
//!   unless a newer commit of its partition already is, ABORT drops them. A broker
//!   with its own transaction coordinator calls it for the partitions it hosts:
//!
//!   ```
//!   use std::sync::Arc;
//!
//!   use group_coordinator::{CoordinatorConfig, GroupCoordinator};
//!   use group_offsets::MemoryMetadataStore;
//!   use group_types::{OffsetCommitData, TransactionResult, TxnOffsetCommitRequest, WriteTxnMarkersRequest};
//!
//!   let c = GroupCoordinator::new(Arc::new(MemoryMetadataStore::new()), CoordinatorConfig::default())?;
//!   let commit = TxnOffsetCommitRequest { group_id: "g".into(), producer_id: 7, ..Default::default() }
//!       .with_offset("orders", 0, OffsetCommitData::new(42));
//!   c.handle_txn_offset_commit(commit)?;
//!   assert_eq!(c.get_committed_offset("g", "orders", 0)?, -1, "pending");
//!   // The group's coordinator partition is the `__consumer_offsets` partition a
//!   // transaction coordinator names.
//!   let partition = i32::try_from(c.shard_of("g")).unwrap_or_default();
//!   c.handle_write_txn_markers(WriteTxnMarkersRequest::one(7, TransactionResult::Commit, &[partition]))?;
//!   assert_eq!(c.get_committed_offset("g", "orders", 0)?, 42);
//!   # Ok::<(), Box<dyn std::error::Error>>(())
//!   ```
//!
//! - [`GroupCoordinator::perform_assignment`]: server-side assignment with the
//!   `group-assignors` assignor the group's selected protocol names; for a
//!   consumer group, a view of its server-side target assignment.
//!
//! The behaviour is Kafka's Java coordinator's (`kafka-semantics.md`, "J"), checked
//! request by request and timer by timer against answers recorded from Kafka itself
//! (the oracle replay test). Deliberate differences: a leaving member's parked
//! SyncGroup is answered `UNKNOWN_MEMBER_ID` instead of never; unparsable consumer
//! metadata leaves the subscribed topics unknown instead of failing the join phase (a
//! Kafka bug). `docs/KAFKA-DIFFERENCES.md` lists every difference with its test.
//!
//! Consumer groups are checked the same way against Kafka 4.2.1
//! (`tests/data/oracle-kip848`). Deliberate differences there: a target is
//! computed over the members' subscription type as they are, not the group's
//! stale one (Kafka then leaves partitions without owner); reads after a reverted
//! write list each entry once (Kafka's timeline lists some twice); a group turned
//! back into a classic one gives each classic member what it owns as its
//! assignment, not its target, so that an upgrade before they rejoin cannot hand
//! out partitions they still consume; a revert re-arms the deadlines of the state
//! it restores; regexes are resolved as a write of their own right after the
//! heartbeat that asks for it (Kafka's executor, run at once), with the `regex`
//! crate's RE2 syntax; equal votes for a server assignor go to the one configured
//! first.
//!
//! # Who should depend on this crate
//!
//! A Kafka-compatible broker or front end that serves the group protocols.
//! Simulations and tests can drive [`CoordinatorCore`] alone.
//!
//! # Example
//!
//! ```
//! use group_coordinator::{CoordinatorCore, CoordinatorConfig, Request, RequestId, Response};
//! use group_types::{ErrorCode, JoinGroupRequest, ProtocolMetadata};
//!
//! let mut core = CoordinatorCore::new(CoordinatorConfig::default());
//! let join = JoinGroupRequest {
//!     group_id: "g".into(),
//!     client_id: "consumer".into(),
//!     protocols: vec![ProtocolMetadata::new("range", vec![0, 0, 0, 0, 0, 0, 255, 255, 255, 255])],
//!     ..JoinGroupRequest::default()
//! };
//! let fx = core.handle(0, RequestId(1), Request::JoinGroup(join));
//! // The group's creation is persisted first; its answer waits for that write.
//! let write = fx.writes[0].id;
//! let fx = core.complete_write(0, write, Ok(()));
//! let Response::JoinGroup(response) = &fx.responses[0].1 else { unreachable!() };
//! assert_eq!(response.error_code, ErrorCode::MemberIdRequired);
//! assert!(response.member_id.starts_with("consumer-"));
//! ```
//!
//! A KIP-848 member joins with epoch 0 and gets its partitions from the server:
//!
//! ```
//! use std::sync::Arc;
//! use group_coordinator::{CoordinatorConfig, CoordinatorCore, MetadataImage, Request, RequestId, Response, TopicImage};
//! use group_types::{ConsumerGroupHeartbeatRequest, TopicId};
//!
//! let mut core = CoordinatorCore::new(CoordinatorConfig::default());
//! let orders = TopicId::from_u128(1);
//! core.update_metadata_image(Arc::new(MetadataImage::new(1, [TopicImage::new(orders, "orders", 3)])));
//! let join = ConsumerGroupHeartbeatRequest {
//!     group_id: "g".into(),
//!     member_id: "member-1".into(),
//!     member_epoch: 0,
//!     rebalance_timeout_ms: 30_000,
//!     subscribed_topic_names: Some(vec!["orders".into()]),
//!     topic_partitions: Some(Vec::new()),
//!     ..ConsumerGroupHeartbeatRequest::default()
//! };
//! let fx = core.handle(0, RequestId(1), Request::from(join));
//! // The answer waits for the group's records.
//! let fx = core.complete_write(0, fx.writes[0].id, Ok(()));
//! let Response::ConsumerGroupHeartbeat(answer) = &fx.responses[0].1 else { unreachable!() };
//! assert_eq!(answer.member_epoch, 1);
//! assert_eq!(answer.assignment.as_ref().unwrap()[0].partitions, [0, 1, 2]);
//! ```

mod api;
mod authorizer;
mod config;
mod consumer_config;
mod core;
mod end_offsets;
mod error;
mod group_config;
mod group_config_store;
mod latency;
mod metadata_image;
mod metrics;
mod runtime;
mod share_config;
mod snapshot;
mod topic_metadata;

pub use crate::api::{Api, GroupApi, Routing, Waits};
pub use crate::authorizer::{
    AclOperation, AllowAll, Authorizer, Principal, RequestContext, Resource, authorized_operations,
};
pub use crate::config::{CoordinatorConfig, MAX_GROUP_ID_BYTES};
pub use crate::consumer_config::{
    BadConsumerGroupConfig, BadMigrationPolicy, ConsumerGroupConfig, GroupConfigOverrides, MigrationPolicy,
};
pub use crate::core::{
    CoordinatorCore, Effects, ExpirationReason, GroupEvent, Record, Request, RequestId, Response, TimerKey,
    TimerOp, TimerQueue, Write, WriteId, map_append_error, map_operation_error,
};
pub use crate::end_offsets::{EndOffsetQuery, PartitionEndOffsets};
pub use crate::error::CoordinatorError;
pub use crate::group_config::{
    AlterConfigOp, ConfigSource, ConfigSynonym, DEFAULT_ASSIGNMENT_INTERVAL_MS, DescribedGroupConfig,
    GroupConfigBounds, GroupConfigError, GroupConfigProps, GroupConfigType, IntBounds, alter_group_config,
    describe_group_config, evaluate_group_config, group_config_names, group_config_props,
    validate_group_config,
};
pub use crate::group_config_store::{GroupConfigStore, GroupConfigStoreError, MemoryGroupConfigStore};
pub use crate::latency::{LATENCY_BUCKETS, LatencyHistogram, LatencySnapshot};
pub use crate::metadata_image::{MetadataImage, TopicImage};
pub use crate::metrics::{CoordinatorMetrics, MemberExpirations};
pub use crate::runtime::{
    Caller, Clock, GroupCoordinator, GroupCoordinatorBuilder, ManualClock, Outcome, PartitionState, Pending,
    ResponseKind, ServingLease, SharePersister, ShareStateRouting, SystemClock, TimerDriver,
};
pub use crate::share_config::{
    ShareAutoOffsetReset, ShareGroupConfig, ShareGroupSettings, ShareIsolationLevel,
};
pub use crate::snapshot::{
    ConsumerGroupSnapshot, ConsumerMemberSnapshot, GroupMetadata, MemberMetadata, ShareGroupSnapshot,
    ShareMemberSnapshot,
};
pub use crate::topic_metadata::{AllTopicsExist, TopicMetadata};
/// What [`GroupCoordinator::perform_assignment`] returns: every member's partitions.
pub use group_assignors::GroupAssignment;
