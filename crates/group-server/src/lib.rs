//! A Kafka wire-protocol front end for the group coordinator: a **coordinator node** that
//! real Kafka clients (the Java consumer, librdkafka, kafka-python) form consumer groups
//! and commit offsets against.
//!
//! It is not a broker: it stores no records. It serves the group APIs (JoinGroup,
//! SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, ListGroups,
//! DescribeGroups, DeleteGroups, OffsetDelete, KIP-848's ConsumerGroupHeartbeat and
//! ConsumerGroupDescribe, and KIP-932's share group APIs) from `group-coordinator`, plus what a
//! consumer needs around them: ApiVersions, Metadata and FindCoordinator pointing at
//! itself, and ListOffsets and Fetch over the *empty* partitions of the topics it is
//! configured with. Produce is advertised (librdkafka needs to see it) and refused.
//!
//! # Brief overview
//!
//! - [`GroupServer`]: binds a TCP listener and serves every connection as a task on a
//!   tokio runtime with one thread per core, whatever the number of connections; replies
//!   go out strictly in request order, JoinGroup and SyncGroup park on the coordinator's
//!   awaitable answer without holding a thread, and a graceful
//!   [`stop`](GroupServer::stop) answers what is in flight.
//! - [`ConnectionLimits`]: `max.connections`, `max.connections.per.ip`, requests in
//!   flight per connection, `connections.max.idle.ms`, a deadline for a request's bytes,
//!   the frame size limit; each refuses only the offending connection, with a log line.
//!   Memory is bounded by bytes, not counts: `queued.max.request.bytes` for the requests
//!   all connections hold, and the reply bytes a connection (and the node) may hold
//!   unwritten before it is no longer read.
//! - [`ServerConfig`]: address, topics ([`TopicSpec`]), storage ([`StorageMode`]), frame
//!   size limit, coordinator settings; [`ServerConfig::from_args`] parses the command line.
//! - [`CoordinatorService`]: the node's `group_coordinator::GroupCoordinator` with its
//!   storage, ACLs and topics; each group request is handed to it and its `Pending`
//!   answer awaited (the group APIs are `group_coordinator::group_api_table!`'s).
//! - [`AclAuthorizer`]: with `--acl-file`, every request is authorized against a
//!   Kafka-style ACL file (the format is documented on [`AclAuthorizer`]), reread on
//!   SIGHUP or [`GroupServer::reload_acls`].
//! - Metrics: with `--metrics-listen` the server answers `GET /metrics` in the Prometheus
//!   text format ([`GroupServer::metrics_addr`]): requests, latency and bytes per API and
//!   connections (`group_server_*`, a few atomic additions per request), and the
//!   coordinator's groups per type and state, members per type, rebalances, expirations, commits,
//!   authorization failures and storage appends (`kafka_group_*`, read at scrape time).
//! - Security: TLS (rustls, TLS 1.2 and 1.3, client certificates with
//!   `--tls-client-ca`) and SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; KIP-152
//!   SaslAuthenticate framing and raw v0 tokens) on the listener, as Kafka's SSL,
//!   SASL_PLAINTEXT and SASL_SSL protocols; group requests run as the authenticated
//!   principal. [`Users`] is the salted credentials file, written by
//!   [`users_command`] (`group-server users add|remove|list`).
//! - Robustness: every request body is walked against its schema before `kafka-protocol`
//!   decodes it (that crate aborts the process on huge array counts), frames are size
//!   limited, and a malformed request closes only its own connection, with a log line.
//!
//! # What a client sees
//!
//! - ApiVersions advertises exactly the ranges of [`SUPPORTED_APIS`]: `kafka-protocol`
//!   0.18's, and Kafka 4.2's for the share APIs that crate stops short of (which read as a
//!   Kafka 4.x broker to kafka-python and librdkafka). A client asking for
//!   a newer ApiVersions gets `UNSUPPORTED_VERSION` with a v0 body listing them, and retries.
//! - Metadata and FindCoordinator name this node (id 0 unless `--node-id`); every topic has
//!   a non-zero id derived from its name, the same across restarts (Fetch v13+ uses it).
//! - ListOffsets answers 0 for every partition. Fetch holds the request for its
//!   `max_wait_ms` and answers no records; an offset past the empty end reads as the end,
//!   so a position restored from a committed offset is kept rather than reset.
//! - Produce is refused per partition with `INVALID_REQUEST` and a message.
//! - KIP-848 (`group.protocol=consumer` in librdkafka): ConsumerGroupHeartbeat v0-v1 and
//!   ConsumerGroupDescribe v0-v1 are advertised and answered by the coordinator's consumer
//!   groups (`UNSUPPORTED_VERSION` with `--rebalance-protocols classic`). Their topics are
//!   the node's, as a metadata image (topic ids as in Metadata); assignments name topic
//!   ids, which clients resolve with Metadata by id (v12+; an unknown id is answered
//!   `UNKNOWN_TOPIC_ID`). `--consumer-session-timeout-ms` and the other `group.consumer.*`
//!   settings have Kafka's bounds.
//! - KIP-932 share groups (`share` in `--rebalance-protocols`, on by default):
//!   ShareGroupHeartbeat v1, ShareGroupDescribe v1, the offset admin APIs
//!   (DescribeShareGroupOffsets v0-v1 with lag, AlterShareGroupOffsets and
//!   DeleteShareGroupOffsets v0), and ShareFetch / ShareAcknowledge v1-v2 with share
//!   sessions over the empty partitions (nothing is ever acquired; v2 renews locks); the
//!   share coordinator's RPCs (InitializeShareGroupState to ReadShareGroupStateSummary,
//!   v0-v1, CLUSTER_ACTION) and FindCoordinator key type 2
//!   are answered by the share coordinator the node hosts, its state durable like
//!   offsets (on a cluster node it lives with its group and moves with it).
//! - CreateTopics (v2-v7) adds topics to a running node, in memory only (gone after a
//!   restart): Metadata, Fetch and commits know them at once, and consumer groups
//!   subscribed to them (by name or regex) are assigned their partitions. Kafka's checks
//!   and errors apply per topic; replication factors and configs are accepted and
//!   ignored; a cluster node refuses (`POLICY_VIOLATION`: every node serves its
//!   `--topic`s), and with `--acl-file` only super users may create.
//! - OffsetCommit and OffsetDelete for a topic or partition outside the `--topic`s are
//!   refused per partition with `UNKNOWN_TOPIC_OR_PARTITION`, as a Kafka broker refuses
//!   one its metadata does not hold; nothing of them is stored.
//! - With `--acl-file`, requests are authorized as Kafka's `KafkaApis` does: the group
//!   APIs by the coordinator (GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED
//!   per partition), FindCoordinator with DESCRIBE on each group, Metadata and
//!   ListOffsets with DESCRIBE on each topic (a listing of every topic leaves out the
//!   others), Fetch with READ and Produce with WRITE (TOPIC_AUTHORIZATION_FAILED).
//!   No API served here answers CLUSTER_AUTHORIZATION_FAILED in Kafka: ListGroups
//!   without DESCRIBE on the cluster lists only the groups the caller may describe,
//!   and a follower's Fetch without CLUSTER_ACTION is TOPIC_AUTHORIZATION_FAILED.
//! - Any other API closes the connection with a log line, as does a malformed request or a
//!   frame over the size limit (1 MiB by default); other connections are unaffected.
//!
//! # Who should depend on this crate
//!
//! Whoever wants a coordinator on the network: tests of Kafka clients, or a broker that
//! delegates its group APIs to a separate node. Libraries embedding the coordinator in
//! their own broker depend on `group-coordinator` instead.
//!
//! # Example
//!
//! ```
//! use group_server::{GroupServer, ServerConfig};
//!
//! let config = ServerConfig::from_args(["--listen", "127.0.0.1:0", "--memory", "--topic", "orders:3"])?;
//! let mut server = GroupServer::start(&config)?;
//! assert_ne!(server.local_addr().port(), 0);
//! server.stop();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod acl;
mod authenticate;
mod brokers;
#[cfg(feature = "cluster")]
mod cluster;
mod config;
mod configs;
mod connection;
mod coordinator_service;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod group_config_file;
mod limits;
mod log;
mod metrics;
mod metrics_http;
mod node;
mod request_log;
#[doc(hidden)]
pub mod sasl;
mod server;
mod session;
mod share_fetch;
mod share_session;
#[cfg(test)]
mod test_samples;
mod tls;
mod topics;
mod users_command;
mod wire;

pub use crate::acl::{AclAuthorizer, AclError, RuleError};
pub use crate::config::{
    ClusterSettings, ConfigError, IoCause, LogFormat, SaslConfig, SaslMechanism, SecurityConfig,
    ServerConfig, StorageMode, TlsConfig,
};
pub use crate::coordinator_service::CoordinatorService;
pub use crate::error::ServerError;
pub use crate::group_config_file::FileGroupConfigStore;
pub use crate::limits::ConnectionLimits;
pub use crate::node::{RequestError, SHARE_GROUP_APIS, SUPPORTED_APIS};
pub use crate::sasl::{Users, UsersError};
pub use crate::server::GroupServer;
pub use crate::tls::TlsError;
pub use crate::topics::{TopicSpec, topic_id_for};
pub use crate::users_command::users_command;
pub use crate::wire::schema::SchemaError;
