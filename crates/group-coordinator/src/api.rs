//! Every group API, declared once: [`group_api_table!`](crate::group_api_table)
//! below is the one place that names, per API, its Kafka key and the versions
//! served, its request and response, how it is routed to coordinator partitions,
//! the ACL operation asked on its group, what its answer may wait for, the
//! runtime methods that serve it, and the few lines of code that differ per API
//! (which core handler runs it, its answer when the whole of it fails).
//!
//! From the table come the core's [`Request`] and [`Response`], the metadata
//! enum [`Api`], the [`GroupApi`] trait on every request type, the runtime's
//! methods on [`Caller`] and [`GroupCoordinator`] (each with its blocking
//! `handle_*` twin), the answers of a partition that is not served here, and,
//! in `group-server`, the wire dispatch and ApiVersions (the server expands the
//! same table with its own macro).
//!
//! Adding an API that names one group: its messages in `group-types`, its core
//! handler, one row here, its tests (and its wire translation in
//! `group-server`'s `translate.rs`).

use group_types::{
    AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse, ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
    DeleteGroupsRequest, DeleteGroupsResponse, DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsResponse, DeletedGroup, DescribeGroupsRequest, DescribeGroupsResponse,
    DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse, DescribedConsumerGroup,
    DescribedGroup, DescribedShareGroup, ErrorCode, GroupId, HeartbeatRequest, HeartbeatResponse,
    JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, ListGroupsRequest,
    ListGroupsResponse, MemberId, OffsetCommitRequest, OffsetCommitResponse, OffsetDeleteRequest,
    OffsetDeleteResponse, OffsetFetchRequest, OffsetFetchResponse, ProtocolName, ShareGroupDescribeRequest,
    ShareGroupDescribeResponse, ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse, SyncGroupRequest,
    SyncGroupResponse, TxnOffsetCommitRequest, TxnOffsetCommitResponse, WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
};
// The share coordinator's RPCs, used by name in the table.
#[allow(unused_imports)]
use group_types::{
    DeleteShareGroupStateRequest, DeleteShareGroupStateResponse, InitializeShareGroupStateRequest,
    InitializeShareGroupStateResponse, ReadShareGroupStateRequest, ReadShareGroupStateResponse,
    ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse, WriteShareGroupStateRequest,
    WriteShareGroupStateResponse,
};

use crate::core::RequestId;
use crate::runtime::{Caller, EachGroup, Pending, ResponseKind};
use crate::{AclOperation, CoordinatorConfig, CoordinatorCore, CoordinatorError, GroupCoordinator};

/// How a request reaches the coordinator partitions (Kafka's `GroupCoordinatorService`
/// routes the same way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    /// To its group's partition.
    OneGroup,
    /// Split per group, each part to its group's partition, the answers merged.
    EachGroup,
    /// Every partition this node serves.
    AllPartitions,
    /// Split per share partition, each part to the partition its key
    /// `group:topicId:partition` routes to (`ShareCoordinatorService.partitionFor`),
    /// the answers merged: the share-state RPCs of the hosted share coordinator.
    SharePartitions,
    /// Split per partition of `__consumer_offsets` the request names, each part
    /// to that partition, the answers merged: WriteTxnMarkers.
    CoordinatorPartitions,
}

/// What an answer may wait for before it is released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waits {
    /// Its group's outstanding metadata write (and whatever its handler parks it
    /// for: a join barrier, the leader's assignment, its own write).
    Barrier,
    /// Only its own write.
    Write,
    /// Nothing: answered from committed state.
    Never,
}

/// A group API, implemented by its request type: what the table says of it, and
/// how the runtime serves it.
pub trait GroupApi: Into<Request> + Sized {
    /// The answer's type.
    type Response: ResponseKind;
    /// The API.
    const API: Api;
    /// Hands the request to the coordinator as `caller`.
    fn submit(self, caller: &Caller<'_>) -> Pending<Self::Response>;
    /// The answer when the whole request fails with `code` before any group is
    /// looked at, in its API's shape: the table row's `refused`, which a front end
    /// also gives when the coordinator gives no answer (stopped, storage down).
    fn refused(&self, code: ErrorCode) -> Self::Response;
}

/// Calls a table row's core handler (the closure gets its types from here).
#[inline(always)]
fn run<P>(
    handler: impl FnOnce(&mut CoordinatorCore, RequestId, P, &dyn Fn(&str) -> bool),
    core: &mut CoordinatorCore,
    id: RequestId,
    request: P,
    visible: &dyn Fn(&str) -> bool,
) {
    handler(core, id, request, visible);
}

/// Calls a table row's code that makes an answer from a request or another answer.
#[inline(always)]
fn shape<T, R>(make: impl FnOnce(&T, ErrorCode) -> R, from: &T, code: ErrorCode) -> R {
    make(from, code)
}

/// Calls a table row's `core_first` test.
#[inline(always)]
fn first<T>(
    test: impl FnOnce(&T, &CoordinatorConfig) -> bool,
    request: &T,
    config: &CoordinatorConfig,
) -> bool {
    test(request, config)
}

/// The type a request is kept as in [`Request`]: boxed when the row says so.
macro_rules! payload {
    ($req:ident) => { $req };
    ($req:ident boxed) => { Box<$req> };
}

/// A request as [`Request`] keeps it (see `payload!`).
macro_rules! wrap {
    ($r:ident) => {
        $r
    };
    ($r:ident boxed) => {
        Box::new($r)
    };
}

/// A double reference to the request kept in [`Request`] (through its box, if
/// boxed), which the caller's `&**` turns into a reference to the API's request.
macro_rules! unbox {
    ($r:ident) => {
        &$r
    };
    ($r:ident boxed) => {
        $r
    };
}

/// What a row's `route` means: its [`Routing`], the group its ACL is asked on,
/// and how the runtime submits it.
macro_rules! route {
    (@kind one_group) => {
        Routing::OneGroup
    };
    (@kind each_group) => {
        Routing::EachGroup
    };
    (@kind each_share_group) => {
        Routing::EachGroup
    };
    (@kind all_partitions) => {
        Routing::AllPartitions
    };
    (@kind share_partitions) => {
        Routing::SharePartitions
    };
    (@kind coordinator_partitions) => {
        Routing::CoordinatorPartitions
    };
    (@group one_group $r:ident) => {
        Some($r.group_id.as_str())
    };
    (@group each_group $r:ident) => {
        Some($r.group_ids.first().map_or("", GroupId::as_str))
    };
    (@group each_share_group $r:ident) => {
        Some($r.groups.first().map_or("", |g| g.group_id.as_str()))
    };
    (@group all_partitions $r:ident) => {{
        let _ = $r;
        None::<&str>
    }};
    // CLUSTER_ACTION on the cluster, asked by the split (`SharePartitions`).
    (@group share_partitions $r:ident) => {{
        let _ = $r;
        None::<&str>
    }};
    // CLUSTER_ACTION on the cluster, asked by the split.
    (@group coordinator_partitions $r:ident) => {{
        let _ = $r;
        None::<&str>
    }};
    (@submit one_group $caller:ident $request:ident) => {{
        // The partition is found before the request moves: its group id is not copied.
        let shard = $caller.shard_of(&$request.group_id);
        $caller.submit_to(shard, Request::from($request))
    }};
    (@submit each_group $caller:ident $request:ident) => {
        EachGroup::answer($request, $caller)
    };
    (@submit each_share_group $caller:ident $request:ident) => {
        EachGroup::answer($request, $caller)
    };
    (@submit all_partitions $caller:ident $request:ident) => {
        $caller.list_all(&$request)
    };
    (@submit share_partitions $caller:ident $request:ident) => {
        $crate::runtime::SharePartitions::answer($request, $caller)
    };
    (@submit coordinator_partitions $caller:ident $request:ident) => {
        $caller.markers_by_partition($request)
    };
}

/// What a row's `waits` means: its [`Waits`], the group whose barrier the core
/// holds its answer behind, and the sentence of its methods' docs.
macro_rules! waits {
    (@kind barrier) => {
        Waits::Barrier
    };
    (@kind write) => {
        Waits::Write
    };
    (@kind never) => {
        Waits::Never
    };
    (@group barrier $r:ident) => {
        Some($r.group_id.as_str())
    };
    (@group $other:ident $r:ident) => {{
        let _ = $r;
        None::<&str>
    }};
    (@doc barrier) => {
        "the answer waits for its group's outstanding write and, per API, for a barrier or its own write"
    };
    (@doc write) => {
        "the answer comes once its write is in storage"
    };
    (@doc never) => {
        "answered at once, from committed state"
    };
}

/// A row's `failed_write`, or its `refused` where the row names none.
macro_rules! failed_or_refused {
    (, $refused:expr) => {
        $refused
    };
    ($failed:expr, $refused:expr) => {
        $failed
    };
}

/// Expands the table for the coordinator.
macro_rules! coordinator_apis {
    ($(
        $(#[doc = $doc:literal])*
        $api:ident {
            key: $key:literal, versions: $min:literal ..= $max:literal, $(wire: $wire:ident,)?
            request: $req:ident $(($boxed:ident))?, response: $resp:ident,
            route: $route:ident, acl: $acl:ident, waits: $waits:ident,
            methods: $pending:ident, $blocking:ident,
            core: $core:expr,
            refused: $refused:expr,
            $(failed_write: $failed:expr,)?
            core_first: $core_first:expr $(,)?
        }
    )*) => {
        /// One group API (see [`group_api_table!`](crate::group_api_table)).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Api {$(
            $(#[doc = $doc])*
            $api,
        )*}

        impl Api {
            /// Every group API, in the table's order (by Kafka key).
            pub const ALL: &'static [Api] = &[$(Api::$api),*];

            /// Kafka's API key.
            pub const fn key(self) -> i16 {
                match self {$(Api::$api => $key,)*}
            }

            /// The lowest and highest version served.
            pub const fn versions(self) -> (i16, i16) {
                match self {$(Api::$api => ($min, $max),)*}
            }

            /// Kafka's name of the API.
            pub const fn name(self) -> &'static str {
                match self {$(Api::$api => stringify!($api),)*}
            }

            /// How its requests reach the coordinator partitions.
            pub const fn routing(self) -> Routing {
                match self {$(Api::$api => route!(@kind $route),)*}
            }

            /// The ACL operation asked on its group (on each group, for a request
            /// of several; topics are checked besides, per API).
            pub const fn acl(self) -> AclOperation {
                match self {$(Api::$api => AclOperation::$acl,)*}
            }

            /// What its answer may wait for.
            pub const fn waits(self) -> Waits {
                match self {$(Api::$api => waits!(@kind $waits),)*}
            }
        }

        /// One request of the group protocols (classic and KIP-848's consumer
        /// protocol); `Request::from` takes any API's request.
        #[derive(Debug, Clone, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum Request {$(
            $(#[doc = $doc])*
            $api(payload!($req $($boxed)?)),
        )*}

        /// The answer to one [`Request`].
        #[derive(Debug, Clone, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum Response {$(
            $(#[doc = $doc])*
            $api($resp),
        )*}

        $(
            impl From<$req> for Request {
                fn from(request: $req) -> Request {
                    Request::$api(wrap!(request $($boxed)?))
                }
            }

            impl ResponseKind for $resp {
                fn from_response(response: Response) -> Option<Self> {
                    match response {
                        Response::$api(r) => Some(r),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }

                fn into_response(self) -> Response {
                    Response::$api(self)
                }
            }

            impl GroupApi for $req {
                type Response = $resp;
                const API: Api = Api::$api;

                fn submit(self, caller: &Caller<'_>) -> Pending<$resp> {
                    caller.$pending(self)
                }

                fn refused(&self, code: ErrorCode) -> $resp {
                    shape($refused, self, code)
                }
            }
        )*

        impl Request {
            /// The API this request belongs to.
            pub fn api(&self) -> Api {
                match self {$(Request::$api(_) => Api::$api,)*}
            }

            /// Runs the request's handler in `core`. Inlined into the core's one
            /// caller, as the dispatch it replaced was: a call here cost the classic
            /// heartbeat a move of the request and 50 instructions (callgrind).
            #[inline(always)]
            pub(crate) fn run(self, core: &mut CoordinatorCore, id: RequestId, visible: &dyn Fn(&str) -> bool) {
                match self {$(Request::$api(r) => run($core, core, id, r, visible),)*}
            }

            /// Whether the request creates its group when the group does not exist
            /// (a classic JoinGroup, a simple consumer's OffsetCommit, a consumer or
            /// share group's first heartbeat, an AlterShareGroupOffsets): what
            /// `max_groups` refuses.
            pub(crate) fn may_create_group(&self) -> bool {
                match self {
                    Request::JoinGroup(_) => true,
                    Request::OffsetCommit(r) => r.generation_id < 0,
                    Request::ConsumerGroupHeartbeat(r) => r.member_epoch == 0,
                    Request::ShareGroupHeartbeat(r) => r.member_epoch == 0,
                    // `getOrMaybeCreateShareGroup(groupId, true)`.
                    Request::AlterShareGroupOffsets(_) => true,
                    _ => false,
                }
            }

            /// The group whose outstanding metadata write the answer waits for
            /// (`Waits::Barrier`), if any.
            pub(crate) fn barrier_group(&self) -> Option<&str> {
                match self {$(Request::$api(r) => waits!(@group $waits r),)*}
            }

            /// The ACL operation on the request's group and that group (a request
            /// that names several reaches this split, one group each); `None` for
            /// a request that names none.
            pub(crate) fn group_acl(&self) -> Option<(AclOperation, &str)> {
                match self {$(Request::$api(r) => route!(@group $route r).map(|g| (AclOperation::$acl, g)),)*}
            }

            /// The answer when the whole request fails with `code` before its core
            /// (a denied group ACL, a partition not served here), in its API's shape.
            pub(crate) fn refused(&self, code: ErrorCode) -> Response {
                match self {$(Request::$api(r) => Response::$api(shape($refused, &**unbox!(r $($boxed)?), code)),)*}
            }

            /// True when the core answers the request even on a partition this node
            /// does not serve: Kafka's `GroupCoordinatorService` validates it first
            /// (an empty group id is `INVALID_GROUP_ID` wherever the group lives).
            pub(crate) fn core_first(&self, config: &CoordinatorConfig) -> bool {
                match self {$(Request::$api(r) => first($core_first, &**unbox!(r $($boxed)?), config),)*}
            }
        }

        impl Response {
            /// The API this answer belongs to.
            pub fn api(&self) -> Api {
                match self {$(Response::$api(_) => Api::$api,)*}
            }

            /// The same kind of answer carrying only `error` (an answer held for a
            /// write that then failed).
            pub fn with_error(&self, error: ErrorCode) -> Response {
                match self {$(Response::$api(r) => Response::$api(shape(failed_or_refused!($($failed)?, $refused), r, error)),)*}
            }
        }

        impl Caller<'_> {$(
            $(#[doc = $doc])*
            #[doc = ""]
            #[doc = concat!("Authorized as ", stringify!($acl), " on the group; ", waits!(@doc $waits), ".")]
            pub fn $pending(&self, request: $req) -> Pending<$resp> {
                route!(@submit $route self request)
            }

            #[doc = concat!("[`", stringify!($pending), "`](Self::", stringify!($pending), "), blocking until answered.")]
            pub fn $blocking(&self, request: $req) -> Result<$resp, CoordinatorError> {
                self.$pending(request).wait()
            }
        )*}

        impl GroupCoordinator {$(
            $(#[doc = $doc])*
            #[doc = ""]
            #[doc = concat!("As the anonymous caller (see [`Caller::", stringify!($pending), "`]); ", waits!(@doc $waits), ".")]
            pub fn $pending(&self, request: $req) -> Pending<$resp> {
                self.anonymous().$pending(request)
            }

            #[doc = concat!("[`", stringify!($pending), "`](Self::", stringify!($pending), "), blocking until answered.")]
            pub fn $blocking(&self, request: $req) -> Result<$resp, CoordinatorError> {
                self.anonymous().$pending(request).wait()
            }
        )*}
    };
}

/// The table of the group APIs, handed to `$then!` (a macro of the caller's:
/// the coordinator expands it into its types and methods, `group-server` into
/// its wire dispatch and ApiVersions).
///
/// Each row: the Kafka API name (a variant of [`Request`] and [`Response`] and
/// of `kafka_protocol`'s `ApiKey`), then
/// - `key`, `versions`: Kafka's API key and the versions served (the server
///   checks them against its codec at compile time);
/// - `wire: plain` (optional): a front end serves the request with no code of its
///   own, from its `group_types::wire::WireRequest` and `refused` below (the
///   coordinator itself ignores it);
/// - `request`, `response`: the `group-types` messages, named as Kafka's (the
///   server finds its codec's under the same names); `(boxed)` keeps a large
///   request boxed inside [`Request`];
/// - `route`: `one_group` (the request's `group_id`), `each_group` (split
///   per `group_ids`, see the runtime's `EachGroup`), `each_share_group` (split
///   per `groups`, each with its own topics), `all_partitions`, `share_partitions`,
///   `coordinator_partitions` (split per `__consumer_offsets` partition named);
/// - `acl`: the [`AclOperation`] asked on the group (topic checks are per API,
///   in the runtime's `authorization`);
/// - `waits`: `barrier`, `write` or `never` (see [`Waits`]);
/// - `methods`: the runtime's method returning a [`Pending`] and its blocking twin;
/// - `core`: the core's handler;
/// - `refused`: the answer when the whole request fails before the core;
/// - `failed_write`: an answer held for a write that failed, given the error
///   (left out where it is `refused`'s);
/// - `core_first`: true when the core answers even where the partition is not
///   served here (Kafka's request validation comes before the partition).
#[macro_export]
macro_rules! group_api_table {
    ($then:ident) => {
        $then! {
            /// OffsetCommit: a missing group with a generation >= 0 is
            /// `GROUP_ID_NOT_FOUND` from v9 and `ILLEGAL_GENERATION` before, as the
            /// request's version says. READ on each topic too; partitions of topics the
            /// caller may not read, or that do not exist, are answered before the core.
            OffsetCommit {
                key: 8, versions: 2..=10,
                request: OffsetCommitRequest, response: OffsetCommitResponse,
                route: one_group, acl: Read, waits: barrier,
                methods: offset_commit, handle_offset_commit,
                core: |core, id, r, _| core.offset_commit(id, r),
                refused: |r, code| OffsetCommitResponse::uniform(r, code),
                failed_write: |r, code| { let mut r = r.clone(); r.set_all(code); r },
                core_first: |_, _| false,
            }
            /// OffsetFetch of one group. Topics the caller may not describe are
            /// answered `TOPIC_AUTHORIZATION_FAILED` (or left out of a fetch of all).
            OffsetFetch {
                key: 9, versions: 1..=10,
                request: OffsetFetchRequest, response: OffsetFetchResponse,
                route: one_group, acl: Describe, waits: never,
                methods: offset_fetch, handle_offset_fetch,
                core: |core, id, r, _| core.offset_fetch(id, r),
                refused: |_, code| OffsetFetchResponse { error_code: code, offsets: Default::default() },
                failed_write: |_, code| OffsetFetchResponse { error_code: code, ..Default::default() },
                core_first: |_, _| false,
            }
            /// JoinGroup; the answer comes when the join barrier closes. Refused as
            /// Kafka answers: a denial comes from `KafkaApis` through
            /// `JoinGroupRequest.getErrorResponse` (member id `""`), any other error
            /// from `GroupCoordinatorService.joinGroup`'s `handleOperationException`,
            /// which echoes the member id; the protocol name is null from v7, `""`
            /// before.
            JoinGroup {
                key: 11, versions: 0..=9,
                request: JoinGroupRequest, response: JoinGroupResponse,
                route: one_group, acl: Read, waits: barrier,
                methods: join_group, handle_join_group,
                core: |core, id, r, visible| core.join_group(id, r, visible),
                refused: |r, code| JoinGroupResponse {
                    protocol_name: (r.api_version < 7).then(ProtocolName::empty),
                    // Shared, not copied: every JoinGroup that may wait builds this
                    // answer in advance (the runtime's `ownership::Lost`).
                    ..JoinGroupResponse::error(code, if code == ErrorCode::GroupAuthorizationFailed {
                        MemberId::empty()
                    } else {
                        r.member_id.clone()
                    })
                },
                failed_write: |r, code| $crate::core::join_error(code, r.member_id.clone()),
                core_first: |r, _| r.group_id.is_empty(),
            }
            /// Heartbeat.
            Heartbeat {
                key: 12, versions: 0..=4,
                request: HeartbeatRequest, response: HeartbeatResponse,
                route: one_group, acl: Read, waits: barrier,
                methods: heartbeat, handle_heartbeat,
                core: |core, id, r, _| core.heartbeat(id, r),
                refused: |_, code| HeartbeatResponse { error_code: code },
                core_first: |r, _| r.group_id.is_empty(),
            }
            /// LeaveGroup.
            LeaveGroup {
                key: 13, versions: 0..=5,
                request: LeaveGroupRequest, response: LeaveGroupResponse,
                route: one_group, acl: Read, waits: barrier,
                methods: leave_group, handle_leave_group,
                core: |core, id, r, _| core.leave_group(id, r),
                refused: |_, code| LeaveGroupResponse { error_code: code, members: Vec::new() },
                failed_write: |_, code| LeaveGroupResponse { error_code: code, ..Default::default() },
                core_first: |r, _| r.group_id.is_empty(),
            }
            /// SyncGroup; a follower's answer comes with the leader's assignment.
            SyncGroup {
                key: 14, versions: 0..=5,
                request: SyncGroupRequest, response: SyncGroupResponse,
                route: one_group, acl: Read, waits: barrier,
                methods: sync_group, handle_sync_group,
                core: |core, id, r, _| core.sync_group(id, r),
                refused: |_, code| SyncGroupResponse::error(code),
                core_first: |r, _| r.group_id.is_empty(),
            }
            /// DescribeGroups, in request order; a group that fails is described with
            /// state `""` and nothing else (`kafka-semantics.md` §2.8).
            DescribeGroups {
                key: 15, versions: 0..=6, wire: plain,
                request: DescribeGroupsRequest, response: DescribeGroupsResponse,
                route: each_group, acl: Describe, waits: never,
                methods: describe_groups, handle_describe_groups,
                core: |core, id, r, _| core.describe_groups(id, r),
                refused: |r, code| DescribeGroupsResponse {
                    groups: r.group_ids.iter().map(|id| DescribedGroup {
                        error_code: code,
                        group_id: id.clone(),
                        ..DescribedGroup::default()
                    }).collect(),
                },
                failed_write: |r, _| r.clone(),
                core_first: |_, _| false,
            }
            /// ListGroups: the groups matching the request's state and type filters,
            /// ordered by group id; with DESCRIBE on the cluster every such group,
            /// else only those the caller may describe. A partition still loading
            /// makes the answer `COORDINATOR_LOAD_IN_PROGRESS`, with the loaded groups
            /// still listed (`kafka-semantics.md` §2.7). Not named `list_groups`:
            /// [`GroupCoordinator::list_groups`] returns snapshots.
            ListGroups {
                key: 16, versions: 0..=5, wire: plain,
                request: ListGroupsRequest, response: ListGroupsResponse,
                route: all_partitions, acl: Describe, waits: never,
                methods: list_groups_matching, handle_list_groups,
                core: |core, id, r, _| core.list_groups(id, r),
                refused: |_, code| ListGroupsResponse { error_code: code, groups: Vec::new() },
                core_first: |_, _| false,
            }
            /// WriteTxnMarkers (KIP-98): a transaction coordinator ends producers'
            /// transactions on partitions of `__consumer_offsets`; each partition's
            /// pending transactional offsets of the producer commit or abort, and its
            /// answer comes once that is durable. CLUSTER_ACTION on the cluster. The
            /// library entry of a broker's own transaction coordinator.
            WriteTxnMarkers {
                key: 27, versions: 1..=2,
                request: WriteTxnMarkersRequest, response: WriteTxnMarkersResponse,
                route: coordinator_partitions, acl: ClusterAction, waits: write,
                methods: write_txn_markers, handle_write_txn_markers,
                core: |core, id, r, _| core.write_txn_markers(id, r),
                refused: |r, code| WriteTxnMarkersResponse::uniform(r, code),
                failed_write: |r, code| { let mut r = r.clone(); r.set_all(code); r },
                core_first: |_, _| false,
            }
            /// TxnOffsetCommit (KIP-98, KIP-447): a transactional producer's offsets,
            /// pending until its transaction's marker; answered once written. READ on
            /// each topic too, as for OffsetCommit. An empty group id is
            /// `INVALID_GROUP_ID` wherever the group would live.
            TxnOffsetCommit {
                key: 28, versions: 0..=5,
                request: TxnOffsetCommitRequest, response: TxnOffsetCommitResponse,
                route: one_group, acl: Read, waits: barrier,
                methods: txn_offset_commit, handle_txn_offset_commit,
                core: |core, id, r, _| core.txn_offset_commit(id, r),
                refused: |r, code| TxnOffsetCommitResponse::uniform(r, code),
                failed_write: |r, code| { let mut r = r.clone(); r.set_all(code); r },
                core_first: |r, _| r.group_id.is_empty(),
            }
            /// DeleteGroups: one result per distinct group, in request order, once
            /// every deletion is durable.
            DeleteGroups {
                key: 42, versions: 0..=2, wire: plain,
                request: DeleteGroupsRequest, response: DeleteGroupsResponse,
                route: each_group, acl: Delete, waits: write,
                methods: delete_groups, handle_delete_groups,
                core: |core, id, r, _| core.delete_groups(id, r),
                refused: |r, code| DeleteGroupsResponse {
                    results: r.group_ids.iter()
                        .map(|id| DeletedGroup { group_id: id.clone(), error_code: code })
                        .collect(),
                },
                failed_write: |r, code| {
                    let mut r = r.clone();
                    for d in &mut r.results {
                        d.error_code = code;
                    }
                    r
                },
                core_first: |_, _| false,
            }
            /// OffsetDelete. READ on each topic too; partitions of topics the caller
            /// may not read, or that do not exist, are answered before the core.
            OffsetDelete {
                key: 47, versions: 0..=0,
                request: OffsetDeleteRequest, response: OffsetDeleteResponse,
                route: one_group, acl: Delete, waits: write,
                methods: offset_delete, handle_offset_delete,
                core: |core, id, r, _| core.offset_delete(id, r),
                refused: |_, code| OffsetDeleteResponse { error_code: code, partitions: Default::default() },
                core_first: |r, _| r.group_id.is_empty(),
            }
            /// ConsumerGroupHeartbeat (KIP-848); the answer comes once its records are
            /// durable. DESCRIBE on each subscribed topic name too (KAFKA-18813).
            /// Boxed: at 280 bytes it is the largest request, and every request
            /// moves through the layers at the size of the largest.
            ConsumerGroupHeartbeat {
                key: 68, versions: 0..=1,
                request: ConsumerGroupHeartbeatRequest (boxed), response: ConsumerGroupHeartbeatResponse,
                route: one_group, acl: Read, waits: barrier,
                methods: consumer_group_heartbeat, handle_consumer_group_heartbeat,
                core: |core, id, r, visible| core.consumer_group_heartbeat(id, &r, visible),
                refused: |_, code| ConsumerGroupHeartbeatResponse::error(code, None),
                // Kafka's service validates a heartbeat before it looks for the
                // partition (`kip848-semantics.md` §2.2).
                core_first: |r, config| {
                    !config.consumer.enabled
                        || $crate::core::consumer::validate_heartbeat(r, &config.consumer.assignors).is_err()
                },
            }
            /// ConsumerGroupDescribe (KIP-848), each group asked in its own partition,
            /// an empty group id first; then, as `KafkaApis`, a group whose members
            /// hold a topic the caller may not describe is `TOPIC_AUTHORIZATION_FAILED`.
            ConsumerGroupDescribe {
                key: 69, versions: 0..=1, wire: plain,
                request: ConsumerGroupDescribeRequest, response: ConsumerGroupDescribeResponse,
                route: each_group, acl: Describe, waits: never,
                methods: consumer_group_describe, handle_consumer_group_describe,
                core: |core, id, r, _| core.consumer_group_describe(id, r),
                refused: |r, code| ConsumerGroupDescribeResponse {
                    groups: r.group_ids.iter()
                        .map(|id| DescribedConsumerGroup::error(id.clone(), code, None))
                        .collect(),
                },
                failed_write: |r, code| {
                    let mut r = r.clone();
                    for g in &mut r.groups {
                        *g = DescribedConsumerGroup::error(g.group_id.clone(), code, None);
                    }
                    r
                },
                core_first: |_, _| false,
            }
            /// ShareGroupHeartbeat (KIP-932); the answer comes once its records are
            /// durable, with the share partitions it asks to initialize. Refused
            /// `UNSUPPORTED_VERSION` while share groups are off (`group.share.enable`).
            ShareGroupHeartbeat {
                key: 76, versions: 1..=1,
                request: ShareGroupHeartbeatRequest, response: ShareGroupHeartbeatResponse,
                route: one_group, acl: Read, waits: barrier,
                methods: share_group_heartbeat, handle_share_group_heartbeat,
                core: |core, id, r, _| core.share_group_heartbeat(id, &r),
                refused: |_, code| ShareGroupHeartbeatResponse::error(code, None),
                // Kafka's service validates a heartbeat before it looks for the partition.
                core_first: |r, config| {
                    !config.share.enabled || $crate::core::share::validate_share_heartbeat(r).is_err()
                },
            }
            /// ShareGroupDescribe (KIP-932), each group asked in its own partition, an
            /// empty group id first.
            ShareGroupDescribe {
                key: 77, versions: 1..=1, wire: plain,
                request: ShareGroupDescribeRequest, response: ShareGroupDescribeResponse,
                route: each_group, acl: Describe, waits: never,
                methods: share_group_describe, handle_share_group_describe,
                core: |core, id, r, _| core.share_group_describe(id, r),
                refused: |r, code| ShareGroupDescribeResponse {
                    groups: r.group_ids.iter()
                        .map(|id| DescribedShareGroup::error(id.clone(), code, None))
                        .collect(),
                },
                failed_write: |r, code| {
                    let mut r = r.clone();
                    for g in &mut r.groups {
                        *g = DescribedShareGroup::error(g.group_id.clone(), code, None);
                    }
                    r
                },
                core_first: |_, config| !config.share.enabled,
            }
            /// InitializeShareGroupState (KIP-932): the group coordinator asks for share partitions'
            /// state to be created (or reset) at a start offset; answered once durable.
            /// CLUSTER_ACTION on the cluster, as `KafkaApis` asks of these inter-broker RPCs.
            InitializeShareGroupState {
                key: 83, versions: 0..=0,
                request: InitializeShareGroupStateRequest, response: InitializeShareGroupStateResponse,
                route: share_partitions, acl: ClusterAction, waits: write,
                methods: initialize_share_group_state, handle_initialize_share_group_state,
                core: |core, id, r, _| core.share_state(id, r),
                refused: |r, code| $crate::core::share_coordinator::refused(r, code),
                failed_write: |r, code| $crate::core::share_coordinator::failed(r, code),
                core_first: |_, _| false,
            }
            /// ReadShareGroupState (KIP-932): a share partition's leader reads its state (a higher
            /// leader epoch is written first).
            /// CLUSTER_ACTION on the cluster, as `KafkaApis` asks of these inter-broker RPCs.
            ReadShareGroupState {
                key: 84, versions: 0..=0,
                request: ReadShareGroupStateRequest, response: ReadShareGroupStateResponse,
                route: share_partitions, acl: ClusterAction, waits: write,
                methods: read_share_group_state, handle_read_share_group_state,
                core: |core, id, r, _| core.share_state(id, r),
                refused: |r, code| $crate::core::share_coordinator::refused(r, code),
                failed_write: |r, code| $crate::core::share_coordinator::failed(r, code),
                core_first: |_, _| false,
            }
            /// WriteShareGroupState (KIP-932): a share partition's leader writes its start offset
            /// and changed state batches; answered once durable.
            /// CLUSTER_ACTION on the cluster, as `KafkaApis` asks of these inter-broker RPCs.
            WriteShareGroupState {
                key: 85, versions: 0..=1,
                request: WriteShareGroupStateRequest, response: WriteShareGroupStateResponse,
                route: share_partitions, acl: ClusterAction, waits: write,
                methods: write_share_group_state, handle_write_share_group_state,
                core: |core, id, r, _| core.share_state(id, r),
                refused: |r, code| $crate::core::share_coordinator::refused(r, code),
                failed_write: |r, code| $crate::core::share_coordinator::failed(r, code),
                core_first: |_, _| false,
            }
            /// DeleteShareGroupState (KIP-932): the group coordinator deletes share partitions'
            /// state; answered once durable.
            /// CLUSTER_ACTION on the cluster, as `KafkaApis` asks of these inter-broker RPCs.
            DeleteShareGroupState {
                key: 86, versions: 0..=0,
                request: DeleteShareGroupStateRequest, response: DeleteShareGroupStateResponse,
                route: share_partitions, acl: ClusterAction, waits: write,
                methods: delete_share_group_state, handle_delete_share_group_state,
                core: |core, id, r, _| core.share_state(id, r),
                refused: |r, code| $crate::core::share_coordinator::refused(r, code),
                failed_write: |r, code| $crate::core::share_coordinator::failed(r, code),
                core_first: |_, _| false,
            }
            /// ReadShareGroupStateSummary (KIP-932): share partitions' start offsets and epochs,
            /// for DescribeShareGroupOffsets.
            /// CLUSTER_ACTION on the cluster, as `KafkaApis` asks of these inter-broker RPCs.
            ReadShareGroupStateSummary {
                key: 87, versions: 0..=1,
                request: ReadShareGroupStateSummaryRequest, response: ReadShareGroupStateSummaryResponse,
                route: share_partitions, acl: ClusterAction, waits: write,
                methods: read_share_group_state_summary, handle_read_share_group_state_summary,
                core: |core, id, r, _| core.share_state(id, r),
                refused: |r, code| $crate::core::share_coordinator::refused(r, code),
                failed_write: |r, code| $crate::core::share_coordinator::failed(r, code),
                core_first: |_, _| false,
            }
            /// DescribeShareGroupOffsets (KIP-932), each group asked in its own partition: its
            /// share partitions' start offsets, read from the share coordinator (the answer
            /// waits for it); v1 adds the lag (KIP-1226). DESCRIBE on each topic too
            /// (`KafkaApis.handleDescribeShareGroupOffsetsRequest`): named topics the caller
            /// may not describe are answered `TOPIC_AUTHORIZATION_FAILED`, and left out of a
            /// description of every topic.
            DescribeShareGroupOffsets {
                key: 90, versions: 0..=1,
                request: DescribeShareGroupOffsetsRequest, response: DescribeShareGroupOffsetsResponse,
                route: each_share_group, acl: Describe, waits: never,
                methods: describe_share_group_offsets, handle_describe_share_group_offsets,
                core: |core, id, r, _| core.describe_share_group_offsets(id, r),
                refused: |r, code| $crate::core::share::describe_offsets_error(
                    r.groups.iter().map(|g| &g.group_id), code,
                    $crate::core::share::describe_refusal_message(code),
                ),
                failed_write: |r, code| $crate::core::share::describe_offsets_error(
                    r.groups.iter().map(|g| &g.group_id), code,
                    $crate::core::share::describe_refusal_message(code),
                ),
                core_first: |_, config| !config.share.enabled,
            }
            /// AlterShareGroupOffsets (KIP-932): an empty (or new) share group's share partitions
            /// are initialized again at the given start offsets; the answer comes once the
            /// persister has answered. READ on each topic too, and the topic in the metadata
            /// (`KafkaApis.handleAlterShareGroupOffsetsRequest`): other topics' partitions are
            /// answered `TOPIC_AUTHORIZATION_FAILED` or `UNKNOWN_TOPIC_OR_PARTITION` before the core.
            AlterShareGroupOffsets {
                key: 91, versions: 0..=0, wire: plain,
                request: AlterShareGroupOffsetsRequest, response: AlterShareGroupOffsetsResponse,
                route: one_group, acl: Read, waits: write,
                methods: alter_share_group_offsets, handle_alter_share_group_offsets,
                core: |core, id, r, _| core.alter_share_group_offsets(id, r),
                refused: |_, code| $crate::core::share::alter_offsets_error(code, None),
                // Kafka's service refuses these before it looks for the partition.
                core_first: |r, config| !config.share.enabled || r.group_id.is_empty(),
            }
            /// DeleteShareGroupOffsets (KIP-932): an empty share group's share state for the
            /// named topics is deleted at the share coordinator; the answer comes once the
            /// persister has answered and the group's state record is durable. READ on each
            /// topic too (`KafkaApis.handleDeleteShareGroupOffsetsRequest`): denied topics are
            /// answered `TOPIC_AUTHORIZATION_FAILED` before the core.
            DeleteShareGroupOffsets {
                key: 92, versions: 0..=0, wire: plain,
                request: DeleteShareGroupOffsetsRequest, response: DeleteShareGroupOffsetsResponse,
                route: one_group, acl: Delete, waits: write,
                methods: delete_share_group_offsets, handle_delete_share_group_offsets,
                core: |core, id, r, _| core.delete_share_group_offsets(id, r),
                refused: |_, code| $crate::core::share::delete_offsets_error(code, None),
                // Kafka's service refuses these before it looks for the partition.
                core_first: |r, config| !config.share.enabled || r.group_id.is_empty(),
            }
        }
    };
}

group_api_table!(coordinator_apis);

#[cfg(test)]
mod tests {
    use group_types::{ErrorCode, GroupId, MemberId};
    use rstest::rstest;

    use super::*;

    /// A request of `api` naming group `group` (among its groups, for one that names several).
    fn request(api: Api, group: &str) -> Request {
        let id = GroupId::from(group);
        let ids = vec![id.clone()];
        match api {
            Api::OffsetCommit => OffsetCommitRequest { group_id: id, ..Default::default() }
                .with_offset("t", 0, group_types::OffsetCommitData::new(1))
                .into(),
            Api::OffsetFetch => OffsetFetchRequest { group_id: id, ..Default::default() }.into(),
            Api::JoinGroup => {
                JoinGroupRequest { group_id: id, member_id: MemberId::from("m"), ..Default::default() }.into()
            }
            Api::Heartbeat => HeartbeatRequest { group_id: id, ..Default::default() }.into(),
            Api::LeaveGroup => LeaveGroupRequest { group_id: id, ..Default::default() }.into(),
            Api::SyncGroup => SyncGroupRequest { group_id: id, ..Default::default() }.into(),
            Api::DescribeGroups => DescribeGroupsRequest { group_ids: ids, ..Default::default() }.into(),
            Api::ListGroups => ListGroupsRequest::default().into(),
            Api::WriteTxnMarkers => {
                WriteTxnMarkersRequest::one(1, group_types::TransactionResult::Commit, &[0]).into()
            }
            Api::TxnOffsetCommit => TxnOffsetCommitRequest { group_id: id, ..Default::default() }
                .with_offset("t", 0, group_types::OffsetCommitData::new(1))
                .into(),
            Api::DeleteGroups => DeleteGroupsRequest { group_ids: ids }.into(),
            Api::OffsetDelete => OffsetDeleteRequest { group_id: group.into(), ..Default::default() }.into(),
            Api::ConsumerGroupHeartbeat => {
                ConsumerGroupHeartbeatRequest { group_id: id, ..Default::default() }.into()
            }
            Api::ConsumerGroupDescribe => {
                ConsumerGroupDescribeRequest { group_ids: ids, ..Default::default() }.into()
            }
            Api::ShareGroupHeartbeat => group_types::ShareGroupHeartbeatRequest {
                group_id: id,
                member_id: MemberId::from("m"),
                member_epoch: 1,
                ..Default::default()
            }
            .into(),
            Api::ShareGroupDescribe => {
                ShareGroupDescribeRequest { group_ids: ids, ..Default::default() }.into()
            }
            Api::InitializeShareGroupState => {
                state_request(id, group_types::InitializeStatePartition::default())
            }
            Api::ReadShareGroupState => state_request(id, group_types::ReadStatePartition::default()),
            Api::WriteShareGroupState => state_request(id, group_types::WriteStatePartition::default()),
            Api::DeleteShareGroupState => state_request(id, group_types::DeleteStatePartition::default()),
            Api::ReadShareGroupStateSummary => {
                state_request(id, group_types::ReadStateSummaryPartition::default())
            }
            Api::DescribeShareGroupOffsets => DescribeShareGroupOffsetsRequest {
                api_version: 0,
                groups: vec![group_types::DescribeShareGroupOffsetsGroupRequest {
                    group_id: id,
                    topics: None,
                }],
            }
            .into(),
            Api::AlterShareGroupOffsets => AlterShareGroupOffsetsRequest {
                group_id: id,
                topics: vec![group_types::AlterShareOffsetsTopic {
                    topic_name: "t".to_owned(),
                    partitions: vec![group_types::ShareStartOffset { partition_index: 0, start_offset: 5 }],
                }],
            }
            .into(),
            Api::DeleteShareGroupOffsets => {
                DeleteShareGroupOffsetsRequest { group_id: id, topic_names: vec!["t".to_owned()] }.into()
            }
        }
    }

    /// A share-state request of group `id` naming partition 0 of one topic.
    fn state_request<P>(id: GroupId, data: P) -> Request
    where
        group_types::ShareStateRequest<P>: Into<Request>,
    {
        let topic = group_types::ShareStateTopic::new(group_types::TopicId::from_u128(1), [data]);
        group_types::ShareStateRequest { api_version: 0, group_id: id, topics: vec![topic] }.into()
    }

    /// Every partition's error code of a share-state answer.
    fn state_codes<R: group_share_coordinator::PartitionAnswer + HasCode, P>(
        r: &group_types::ShareStateResponse<R, P>,
    ) -> Vec<ErrorCode> {
        r.results.iter().flat_map(|t| t.partitions.iter().map(HasCode::code)).collect()
    }

    trait HasCode {
        fn code(&self) -> ErrorCode;
    }

    impl HasCode for group_types::ShareStatePartitionResult {
        fn code(&self) -> ErrorCode {
            self.error_code
        }
    }

    impl HasCode for group_types::ReadStatePartitionResult {
        fn code(&self) -> ErrorCode {
            self.error_code
        }
    }

    impl HasCode for group_types::ReadStateSummaryPartitionResult {
        fn code(&self) -> ErrorCode {
            self.error_code
        }
    }

    /// Every error code an answer carries, wherever its API puts them.
    fn codes(response: &Response) -> Vec<ErrorCode> {
        match response {
            Response::OffsetCommit(r) => r.iter().map(|(_, _, code)| code).collect(),
            Response::OffsetFetch(r) => vec![r.error_code],
            Response::JoinGroup(r) => vec![r.error_code],
            Response::Heartbeat(r) => vec![r.error_code],
            Response::LeaveGroup(r) => vec![r.error_code],
            Response::SyncGroup(r) => vec![r.error_code],
            Response::DescribeGroups(r) => r.groups.iter().map(|g| g.error_code).collect(),
            Response::ListGroups(r) => vec![r.error_code],
            Response::DeleteGroups(r) => r.results.iter().map(|g| g.error_code).collect(),
            Response::WriteTxnMarkers(r) => r.iter().map(|(_, _, _, code)| code).collect(),
            Response::TxnOffsetCommit(r) => r.iter().map(|(_, _, code)| code).collect(),
            Response::OffsetDelete(r) => vec![r.error_code],
            Response::ConsumerGroupHeartbeat(r) => vec![r.error_code],
            Response::ConsumerGroupDescribe(r) => r.groups.iter().map(|g| g.error_code).collect(),
            Response::ShareGroupHeartbeat(r) => vec![r.error_code],
            Response::ShareGroupDescribe(r) => r.groups.iter().map(|g| g.error_code).collect(),
            Response::InitializeShareGroupState(r) => state_codes(r),
            Response::ReadShareGroupState(r) => state_codes(r),
            Response::WriteShareGroupState(r) => state_codes(r),
            Response::DeleteShareGroupState(r) => state_codes(r),
            Response::ReadShareGroupStateSummary(r) => state_codes(r),
            Response::DescribeShareGroupOffsets(r) => r.groups.iter().map(|g| g.error_code).collect(),
            Response::AlterShareGroupOffsets(r) => vec![r.error_code],
            Response::DeleteShareGroupOffsets(r) => vec![r.error_code],
        }
    }

    #[test]
    fn the_table_is_in_key_order_with_one_row_per_key() {
        let keys: Vec<i16> = Api::ALL.iter().map(|a| a.key()).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "keys out of order or repeated: {keys:?}");
        for api in Api::ALL {
            let (min, max) = api.versions();
            assert!(0 <= min && min <= max, "{}: versions {min}..={max}", api.name());
        }
    }

    #[rstest]
    fn a_request_and_its_answers_name_their_api(
        #[values(ErrorCode::NotCoordinator, ErrorCode::GroupAuthorizationFailed)] code: ErrorCode,
    ) {
        for &api in Api::ALL {
            let request = request(api, "g");
            assert_eq!(request.api(), api);
            let refused = request.refused(code);
            assert_eq!(refused.api(), api);
            assert_eq!(refused.with_error(ErrorCode::NotCoordinator).api(), api);
        }
    }

    /// The refusal carries the code in every place the API has one (DescribeGroups
    /// and the multi-group APIs: per group).
    #[rstest]
    fn a_refusal_carries_its_code(
        #[values(
            ErrorCode::NotCoordinator,
            ErrorCode::CoordinatorLoadInProgress,
            ErrorCode::GroupAuthorizationFailed
        )]
        code: ErrorCode,
    ) {
        for &api in Api::ALL {
            let refused = request(api, "g").refused(code);
            let found = codes(&refused);
            assert!(!found.is_empty() && found.iter().all(|c| *c == code), "{}: {found:?}", api.name());
        }
    }

    /// A held answer whose write failed carries the write's error, except a
    /// description (DescribeGroups answers from committed state, whatever came after).
    #[test]
    fn a_failed_write_carries_its_error_except_in_a_description() {
        for &api in Api::ALL {
            let held = request(api, "g").refused(ErrorCode::None);
            let failed = held.with_error(ErrorCode::NotCoordinator);
            let found = codes(&failed);
            if api == Api::DescribeGroups {
                assert_eq!(failed, held);
            } else {
                assert!(found.iter().all(|c| *c == ErrorCode::NotCoordinator), "{}: {found:?}", api.name());
            }
        }
    }

    #[test]
    fn only_barrier_rows_wait_for_their_group() {
        for &api in Api::ALL {
            let request = request(api, "g");
            let expected = (api.waits() == Waits::Barrier).then_some("g");
            assert_eq!(request.barrier_group(), expected, "{}", api.name());
        }
    }

    #[test]
    fn the_acl_is_asked_on_the_group_unless_the_request_names_none() {
        for &api in Api::ALL {
            let request = request(api, "g");
            // ListGroups names no group; the share-state RPCs ask CLUSTER_ACTION of the cluster.
            let named = !matches!(
                api.routing(),
                Routing::AllPartitions | Routing::SharePartitions | Routing::CoordinatorPartitions
            );
            let expected = named.then_some((api.acl(), "g"));
            assert_eq!(request.group_acl(), expected, "{}", api.name());
        }
    }

    /// Kafka's service refuses an empty group id before it looks for the partition,
    /// for the APIs that check it (`isGroupIdNotEmpty`); an id is never checked first.
    #[test]
    fn an_empty_group_id_goes_to_the_core_first_where_kafka_checks_it() {
        let config = CoordinatorConfig::default();
        let checked = [Api::JoinGroup, Api::Heartbeat, Api::LeaveGroup, Api::SyncGroup, Api::OffsetDelete];
        for &api in Api::ALL {
            assert_eq!(
                request(api, "").core_first(&config),
                // The share APIs too, refused before routing while share groups are off.
                checked.contains(&api)
                    || api == Api::ConsumerGroupHeartbeat
                    || api == Api::ShareGroupHeartbeat
                    || api == Api::ShareGroupDescribe
                    || api == Api::TxnOffsetCommit
                    || api == Api::DescribeShareGroupOffsets
                    || api == Api::AlterShareGroupOffsets
                    || api == Api::DeleteShareGroupOffsets,
                "{} with an empty id",
                api.name()
            );
        }
        for api in checked {
            assert!(!request(api, "g").core_first(&config), "{} with an id", api.name());
        }
    }
}
