//! Authorization: the hook an embedding broker implements, and who is asking.
//!
//! The runtime consults the [`Authorizer`] before a request reaches a group, with
//! the ACL operations Kafka's `KafkaApis` checks for the classic group protocol:
//!
//! | request | group | topics |
//! | --- | --- | --- |
//! | JoinGroup, SyncGroup, Heartbeat, LeaveGroup | READ | |
//! | OffsetCommit | READ | READ on each topic |
//! | OffsetFetch | DESCRIBE | DESCRIBE on each topic |
//! | DescribeGroups | DESCRIBE (each group) | |
//! | ListGroups | DESCRIBE on the cluster, else DESCRIBE on each group listed | |
//! | DeleteGroups | DELETE (each group) | |
//! | OffsetDelete | DELETE | READ on each topic |
//! | DescribeConfigs (GROUP) | DESCRIBE_CONFIGS | |
//! | IncrementalAlterConfigs (GROUP) | ALTER_CONFIGS | |

use std::borrow::Cow;
use std::fmt;

/// Who sends a request: Kafka's `KafkaPrincipal`, a type and a name (`User:alice`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    principal_type: Cow<'static, str>,
    name: Cow<'static, str>,
}

impl Principal {
    /// Kafka's principal for unauthenticated connections, `User:ANONYMOUS`. The
    /// coordinator's methods that take no [`RequestContext`] act as this principal.
    pub const ANONYMOUS: Principal =
        Principal { principal_type: Cow::Borrowed("User"), name: Cow::Borrowed("ANONYMOUS") };

    /// A principal of any type.
    pub fn new(
        principal_type: impl Into<Cow<'static, str>>,
        name: impl Into<Cow<'static, str>>,
    ) -> Principal {
        Principal { principal_type: principal_type.into(), name: name.into() }
    }

    /// A `User` principal, the type Kafka's authenticators produce.
    pub fn user(name: impl Into<Cow<'static, str>>) -> Principal {
        Principal::new("User", name)
    }

    /// The type, such as `User`.
    pub fn principal_type(&self) -> &str {
        &self.principal_type
    }

    /// The name within the type.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.principal_type, self.name)
    }
}

/// What the coordinator knows about the connection a request came on, as Kafka's
/// `RequestContext` gives it to an authorizer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestContext {
    /// The authenticated principal.
    pub principal: Principal,
    /// The client id from the request header.
    pub client_id: String,
    /// The client's address, for host-based ACLs (empty when unknown).
    pub client_host: String,
}

impl RequestContext {
    /// An unauthenticated caller with no known client id or host.
    pub const ANONYMOUS: RequestContext = RequestContext {
        principal: Principal::ANONYMOUS,
        client_id: String::new(),
        client_host: String::new(),
    };

    /// A caller authenticated as `principal`, with no known client id or host.
    pub fn new(principal: Principal) -> RequestContext {
        RequestContext { principal, client_id: String::new(), client_host: String::new() }
    }
}

impl Default for RequestContext {
    fn default() -> RequestContext {
        RequestContext::ANONYMOUS
    }
}

/// The context of the coordinator's principal-less methods.
pub(crate) static ANONYMOUS_CONTEXT: RequestContext = RequestContext::ANONYMOUS;

/// An ACL operation: the subset of Kafka's `AclOperation` the group protocol and the
/// broker APIs of a coordinator node check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AclOperation {
    /// Consume as a group member, commit offsets; read a topic's offsets to commit them.
    Read,
    /// See a group (DescribeGroups, ListGroups, OffsetFetch) or a topic's offsets.
    Describe,
    /// Delete a group or its offsets.
    Delete,
    /// Produce to a topic (a front end's Produce; the coordinator never asks it).
    Write,
    /// Replicate: a follower's Fetch needs it on the cluster (the coordinator never
    /// asks it).
    ClusterAction,
    /// Read a group's configs (DescribeConfigs on a GROUP resource).
    DescribeConfigs,
    /// Change a group's configs (IncrementalAlterConfigs on a GROUP resource).
    AlterConfigs,
    /// Create a topic (the coordinator never asks it; a Metadata answer's
    /// authorized operations name it).
    Create,
    /// Alter a topic or the cluster (never asked here; named as `Create` is).
    Alter,
    /// Produce idempotently (never asked here; named as `Create` is).
    IdempotentWrite,
}

impl AclOperation {
    /// What a group supports (Kafka's `AclEntry.supportedOperations(GROUP)`): the
    /// operations a KIP-430 `authorized_operations` field is made of.
    pub const GROUP_OPERATIONS: [AclOperation; 5] = [
        AclOperation::Read,
        AclOperation::Describe,
        AclOperation::Delete,
        AclOperation::DescribeConfigs,
        AclOperation::AlterConfigs,
    ];

    /// What a topic supports (`AclEntry.supportedOperations(TOPIC)`).
    pub const TOPIC_OPERATIONS: [AclOperation; 8] = [
        AclOperation::Read,
        AclOperation::Write,
        AclOperation::Create,
        AclOperation::Describe,
        AclOperation::Delete,
        AclOperation::Alter,
        AclOperation::DescribeConfigs,
        AclOperation::AlterConfigs,
    ];

    /// What the cluster supports (`AclEntry.supportedOperations(CLUSTER)`).
    pub const CLUSTER_OPERATIONS: [AclOperation; 7] = [
        AclOperation::Create,
        AclOperation::ClusterAction,
        AclOperation::DescribeConfigs,
        AclOperation::AlterConfigs,
        AclOperation::IdempotentWrite,
        AclOperation::Alter,
        AclOperation::Describe,
    ];

    /// Kafka's code for the operation (`AclOperation.code`): its bit in an
    /// `authorized_operations` field.
    pub const fn code(self) -> i8 {
        match self {
            AclOperation::Read => 3,
            AclOperation::Write => 4,
            AclOperation::Create => 5,
            AclOperation::Delete => 6,
            AclOperation::Alter => 7,
            AclOperation::Describe => 8,
            AclOperation::ClusterAction => 9,
            AclOperation::DescribeConfigs => 10,
            AclOperation::AlterConfigs => 11,
            AclOperation::IdempotentWrite => 12,
        }
    }

    /// Kafka's name for the operation (`READ`, `DESCRIBE_CONFIGS`).
    pub const fn name(self) -> &'static str {
        match self {
            AclOperation::Read => "READ",
            AclOperation::Write => "WRITE",
            AclOperation::Delete => "DELETE",
            AclOperation::Describe => "DESCRIBE",
            AclOperation::ClusterAction => "CLUSTER_ACTION",
            AclOperation::DescribeConfigs => "DESCRIBE_CONFIGS",
            AclOperation::AlterConfigs => "ALTER_CONFIGS",
            AclOperation::Create => "CREATE",
            AclOperation::Alter => "ALTER",
            AclOperation::IdempotentWrite => "IDEMPOTENT_WRITE",
        }
    }
}

/// The bit field of `authorized_operations` (KIP-430) for `resource` and the caller
/// `context`: a bit per operation the resource supports
/// ([`AclOperation::GROUP_OPERATIONS`], [`TOPIC_OPERATIONS`](AclOperation::TOPIC_OPERATIONS),
/// [`CLUSTER_OPERATIONS`](AclOperation::CLUSTER_OPERATIONS)) that `authorizer` allows,
/// as Kafka's `AuthHelper.authorizedOperations` makes it.
///
/// ```
/// use group_coordinator::{AllowAll, RequestContext, Resource, authorized_operations};
///
/// // READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS and ALTER_CONFIGS: bits 3, 6, 8, 10 and 11.
/// let bits = authorized_operations(&AllowAll, &RequestContext::ANONYMOUS, Resource::Group("g"));
/// assert_eq!(bits, (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11));
/// ```
pub fn authorized_operations(
    authorizer: &dyn Authorizer,
    context: &RequestContext,
    resource: Resource<'_>,
) -> i32 {
    let supported: &[AclOperation] = match resource {
        Resource::Group(_) => &AclOperation::GROUP_OPERATIONS,
        Resource::Topic(_) => &AclOperation::TOPIC_OPERATIONS,
        Resource::Cluster => &AclOperation::CLUSTER_OPERATIONS,
        // A kind of resource no answer lists the operations of.
        #[allow(unreachable_patterns)]
        _ => &[],
    };
    supported
        .iter()
        .filter(|&&op| authorizer.authorize(context, op, resource))
        .fold(0, |bits, op| bits | 1 << op.code())
}

/// What an operation applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Resource<'a> {
    /// A consumer group, by id.
    Group(&'a str),
    /// A topic, by name.
    Topic(&'a str),
    /// The cluster (ListGroups lists every group for DESCRIBE on it).
    Cluster,
    /// A transactional id (TxnOffsetCommit asks WRITE on it).
    TransactionalId(&'a str),
}

/// Decides whether a caller may perform an operation on a resource: the hook through
/// which an embedding broker applies its ACLs. Consulted by [`GroupCoordinator`]
/// before a request reaches a group; a denied request changes nothing.
///
/// Implementations are called on the request path (once per request, once per topic
/// of an offset request) and should answer from memory.
///
/// [`GroupCoordinator`]: crate::GroupCoordinator
pub trait Authorizer: Send + Sync + fmt::Debug {
    /// True when `context`'s principal may perform `operation` on `resource`.
    fn authorize(&self, context: &RequestContext, operation: AclOperation, resource: Resource<'_>) -> bool;
}

/// Allows everything: the default, as a Kafka broker without an authorizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Authorizer for AllowAll {
    fn authorize(&self, _: &RequestContext, _: AclOperation, _: Resource<'_>) -> bool {
        true
    }
}
