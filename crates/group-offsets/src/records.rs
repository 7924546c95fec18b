//! What the coordinator persists about a group (`kafka-semantics.md` §6.8).

use std::sync::Arc;

use bytes::Bytes;
use group_types::{
    GroupId, GroupInstanceId, MemberId, OffsetAndMetadata, ProtocolName, ProtocolType, TopicPartition,
};
use serde::{Deserialize, Serialize};

/// The persisted form of one group: what a restarted coordinator needs to
/// resume it (generation, protocol, leader, members and their assignments).
///
/// Ids and payloads are the types the requests carried them in, so a record
/// shares what it can with them (a leader's assignments are not copied to be
/// stored) and an engine encodes them without converting.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupMetadataRecord {
    /// The group.
    pub group_id: GroupId,
    /// The protocol type (`consumer`), `None` for a group that never had members.
    pub protocol_type: Option<ProtocolType>,
    /// The generation.
    pub generation_id: i32,
    /// The selected protocol, `None` when the generation ended Empty.
    pub protocol_name: Option<ProtocolName>,
    /// The leader's member id.
    pub leader_id: Option<MemberId>,
    /// When the group last changed state, in milliseconds since the Unix epoch
    /// (drives KIP-211 retention of an Empty group's offsets).
    pub state_timestamp_ms: Option<i64>,
    /// The members, in the coordinator's order.
    pub members: Vec<MemberMetadataRecord>,
}

/// The persisted form of one member.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemberMetadataRecord {
    /// The member id.
    pub member_id: MemberId,
    /// The static instance id.
    pub group_instance_id: Option<GroupInstanceId>,
    /// The client id.
    pub client_id: String,
    /// The client host.
    pub client_host: String,
    /// The rebalance timeout.
    pub rebalance_timeout_ms: i32,
    /// The session timeout.
    pub session_timeout_ms: i32,
    /// Its metadata for the selected protocol only.
    pub subscription: Bytes,
    /// Its assignment bytes.
    pub assignment: Bytes,
}

/// One transactional offset commit waiting for its transaction's marker
/// (KIP-98, KIP-447): Kafka keeps it in `OffsetMetadataManager`'s
/// `pendingTransactionalOffsets`, invisible to the read path, until a COMMIT
/// marker makes it the committed offset or an ABORT drops it.
///
/// Kafka decides at COMMIT whether a pending offset replaces the committed one
/// by comparing the log offsets of the two records. Stores here are keyed, not
/// logs, so each pending offset carries what that comparison needs:
/// `sequence` orders it among the partition's pending offsets, and
/// `superseded` says a newer commit of the partition is already committed (a
/// plain commit written after it, or another producer's later pending offset
/// committed first), so its COMMIT leaves the committed offset alone. Keyed by
/// group, producer and partition; the last record of a key wins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnOffsetRecord {
    /// The group.
    pub group_id: Arc<str>,
    /// The transactional producer.
    pub producer_id: i64,
    /// The partition.
    pub partition: TopicPartition,
    /// The offset its COMMIT makes visible.
    pub offset: OffsetAndMetadata,
    /// Order of writing among the coordinator partition's pending offsets
    /// (stands for Kafka's record offset).
    pub sequence: u64,
    /// A newer commit of the partition is committed: COMMIT leaves it.
    pub superseded: bool,
}
