//! What the coordinator persists about a KIP-848 consumer group
//! (`kip848-semantics.md` §9.1): one record per key, the latest replacing the
//! earlier, `value: None` a tombstone.

use std::sync::Arc;

use group_types::{ConsumerMemberState, ProtocolMetadata, TopicIdPartitions};
use serde::{Deserialize, Serialize};

/// Kafka's record type numbers, which name each kind's key space.
pub mod record_type {
    /// `ConsumerGroupMetadata`.
    pub const GROUP_METADATA: i16 = 3;
    /// `ConsumerGroupMemberMetadata`.
    pub const MEMBER_METADATA: i16 = 5;
    /// `ConsumerGroupTargetAssignmentMetadata`.
    pub const TARGET_ASSIGNMENT_METADATA: i16 = 6;
    /// `ConsumerGroupTargetAssignmentMember`.
    pub const TARGET_ASSIGNMENT_MEMBER: i16 = 7;
    /// `ConsumerGroupCurrentMemberAssignment`.
    pub const CURRENT_MEMBER_ASSIGNMENT: i16 = 8;
    /// `ConsumerGroupRegularExpression`.
    pub const REGULAR_EXPRESSION: i16 = 16;
}

/// `ConsumerGroupMetadata`: the group epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ConsumerGroupMetadataValue {
    /// The group epoch.
    pub epoch: i32,
    /// The hash of the subscribed topics' metadata when the epoch was set (0: none).
    pub metadata_hash: u64,
}

/// The JoinGroup data of a classic-protocol member inside a consumer group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ClassicMemberMetadata {
    /// Its JoinGroup session timeout.
    pub session_timeout_ms: i32,
    /// Its JoinGroup protocols (name and consumer-protocol subscription bytes).
    pub supported_protocols: Vec<ProtocolMetadata>,
}

/// `ConsumerGroupMemberMetadata`: what a member sent about itself.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ConsumerMemberMetadataValue {
    /// The static instance id.
    pub instance_id: Option<String>,
    /// The rack.
    pub rack_id: Option<String>,
    /// The client id.
    pub client_id: String,
    /// The client host.
    pub client_host: String,
    /// Topics subscribed by name, sorted.
    pub subscribed_topic_names: Vec<String>,
    /// The regex; `None` when the member has none.
    pub subscribed_topic_regex: Option<String>,
    /// The revocation deadline.
    pub rebalance_timeout_ms: i32,
    /// The server assignor the member prefers.
    pub server_assignor: Option<String>,
    /// Present for members that use the classic protocol.
    pub classic: Option<ClassicMemberMetadata>,
}

/// `ConsumerGroupCurrentMemberAssignment`: where a member is in its reconciliation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CurrentMemberAssignmentValue {
    /// The member epoch.
    pub member_epoch: i32,
    /// The epoch before the last change.
    pub previous_member_epoch: i32,
    /// The reconciliation state.
    pub state: ConsumerMemberState,
    /// The partitions it owns, by topic id, partitions ascending.
    pub assigned: Vec<TopicIdPartitions>,
    /// The partitions it must give back.
    pub pending_revocation: Vec<TopicIdPartitions>,
}

/// `ConsumerGroupRegularExpression`: a regex's resolution.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RegularExpressionValue {
    /// The matching topic names, sorted.
    pub topics: Vec<String>,
    /// The metadata image version it was resolved against.
    pub version: i64,
    /// When it was resolved (the coordinator's milliseconds).
    pub timestamp_ms: i64,
}

/// One record of a consumer group. `value: None` is the key's tombstone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConsumerGroupRecord {
    /// `ConsumerGroupMetadata` (type 3).
    GroupMetadata {
        /// The group.
        group_id: Arc<str>,
        /// The value.
        value: Option<ConsumerGroupMetadataValue>,
    },
    /// `ConsumerGroupMemberMetadata` (type 5).
    MemberMetadata {
        /// The group.
        group_id: Arc<str>,
        /// The member.
        member_id: Arc<str>,
        /// The value.
        value: Option<Box<ConsumerMemberMetadataValue>>,
    },
    /// `ConsumerGroupTargetAssignmentMetadata` (type 6): the assignment epoch.
    TargetAssignmentMetadata {
        /// The group.
        group_id: Arc<str>,
        /// The assignment epoch.
        value: Option<i32>,
    },
    /// `ConsumerGroupTargetAssignmentMember` (type 7): one member's target.
    TargetAssignmentMember {
        /// The group.
        group_id: Arc<str>,
        /// The member.
        member_id: Arc<str>,
        /// Its target partitions, by topic id.
        value: Option<Vec<TopicIdPartitions>>,
    },
    /// `ConsumerGroupCurrentMemberAssignment` (type 8).
    CurrentMemberAssignment {
        /// The group.
        group_id: Arc<str>,
        /// The member.
        member_id: Arc<str>,
        /// The value.
        value: Option<CurrentMemberAssignmentValue>,
    },
    /// `ConsumerGroupRegularExpression` (type 16).
    RegularExpression {
        /// The group.
        group_id: Arc<str>,
        /// The regex.
        regex: Arc<str>,
        /// The value.
        value: Option<RegularExpressionValue>,
    },
}

impl ConsumerGroupRecord {
    /// The group the record belongs to.
    pub fn group_id(&self) -> &Arc<str> {
        match self {
            ConsumerGroupRecord::GroupMetadata { group_id, .. }
            | ConsumerGroupRecord::MemberMetadata { group_id, .. }
            | ConsumerGroupRecord::TargetAssignmentMetadata { group_id, .. }
            | ConsumerGroupRecord::TargetAssignmentMember { group_id, .. }
            | ConsumerGroupRecord::CurrentMemberAssignment { group_id, .. }
            | ConsumerGroupRecord::RegularExpression { group_id, .. } => group_id,
        }
    }

    /// Kafka's record type number (one of [`record_type`]).
    pub fn record_type(&self) -> i16 {
        match self {
            ConsumerGroupRecord::GroupMetadata { .. } => record_type::GROUP_METADATA,
            ConsumerGroupRecord::MemberMetadata { .. } => record_type::MEMBER_METADATA,
            ConsumerGroupRecord::TargetAssignmentMetadata { .. } => record_type::TARGET_ASSIGNMENT_METADATA,
            ConsumerGroupRecord::TargetAssignmentMember { .. } => record_type::TARGET_ASSIGNMENT_MEMBER,
            ConsumerGroupRecord::CurrentMemberAssignment { .. } => record_type::CURRENT_MEMBER_ASSIGNMENT,
            ConsumerGroupRecord::RegularExpression { .. } => record_type::REGULAR_EXPRESSION,
        }
    }

    /// The part of the key after the group: the member id, the regex, or `""`
    /// for the group-level kinds. (record type, group, this) identifies the key.
    pub fn sub_key(&self) -> &str {
        match self {
            ConsumerGroupRecord::GroupMetadata { .. }
            | ConsumerGroupRecord::TargetAssignmentMetadata { .. } => "",
            ConsumerGroupRecord::MemberMetadata { member_id, .. }
            | ConsumerGroupRecord::TargetAssignmentMember { member_id, .. }
            | ConsumerGroupRecord::CurrentMemberAssignment { member_id, .. } => member_id,
            ConsumerGroupRecord::RegularExpression { regex, .. } => regex,
        }
    }

    /// True for a tombstone (the key's removal).
    pub fn is_tombstone(&self) -> bool {
        match self {
            ConsumerGroupRecord::GroupMetadata { value, .. } => value.is_none(),
            ConsumerGroupRecord::MemberMetadata { value, .. } => value.is_none(),
            ConsumerGroupRecord::TargetAssignmentMetadata { value, .. } => value.is_none(),
            ConsumerGroupRecord::TargetAssignmentMember { value, .. } => value.is_none(),
            ConsumerGroupRecord::CurrentMemberAssignment { value, .. } => value.is_none(),
            ConsumerGroupRecord::RegularExpression { value, .. } => value.is_none(),
        }
    }
}
