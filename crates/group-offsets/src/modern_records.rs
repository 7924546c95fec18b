//! What the coordinator persists about the modern kinds of group, KIP-848
//! consumer groups (`kip848-semantics.md` §9.1) and KIP-932 share groups: one
//! record per key, the latest replacing the earlier, `value: None` a
//! tombstone. A key is Kafka's: (record type, group, member id or regex), so a
//! kind's records never meet another kind's.

use std::sync::Arc;

use group_share_coordinator::{SharePartitionKey, SharePartitionState};
use group_types::{ConsumerMemberState, ProtocolMetadata, TopicId, TopicIdPartitions};
use serde::{Deserialize, Serialize};

use crate::AssignmentEpochs;

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
    /// `ShareGroupMemberMetadata`.
    pub const SHARE_MEMBER_METADATA: i16 = 10;
    /// `ShareGroupMetadata`.
    pub const SHARE_GROUP_METADATA: i16 = 11;
    /// `ShareGroupTargetAssignmentMetadata`.
    pub const SHARE_TARGET_ASSIGNMENT_METADATA: i16 = 12;
    /// `ShareGroupTargetAssignmentMember`.
    pub const SHARE_TARGET_ASSIGNMENT_MEMBER: i16 = 13;
    /// `ShareGroupCurrentMemberAssignment`.
    pub const SHARE_CURRENT_MEMBER_ASSIGNMENT: i16 = 14;
    /// `ShareGroupStatePartitionMetadata`.
    pub const SHARE_STATE_PARTITION_METADATA: i16 = 15;
    /// The share coordinator's state of one share partition: this project's
    /// own record, not Kafka's. Kafka keeps share state in another topic,
    /// `__share_group_state`, as ShareSnapshot (type 0) and ShareUpdate (type 1)
    /// records that a reader folds; here it lives in the coordinator partition
    /// of its share partition key, stored folded (one record per key, the last
    /// replacing the earlier), under a type `__consumer_offsets` never uses.
    pub const SHARE_STATE: i16 = 1000;

    /// True for the kinds keyed by the group alone (no member id or regex).
    pub const fn is_group_level(record_type: i16) -> bool {
        matches!(
            record_type,
            GROUP_METADATA
                | TARGET_ASSIGNMENT_METADATA
                | SHARE_GROUP_METADATA
                | SHARE_TARGET_ASSIGNMENT_METADATA
                | SHARE_STATE_PARTITION_METADATA
        )
    }
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
    /// When each of `assigned` was assigned to the member (KIP-1251).
    #[serde(default)]
    pub assigned_epochs: AssignmentEpochs,
    /// When each of `pending_revocation` was assigned to the member (KIP-1251).
    #[serde(default)]
    pub pending_revocation_epochs: AssignmentEpochs,
}

/// `ConsumerGroupTargetAssignmentMetadata` and `ShareGroupTargetAssignmentMetadata`:
/// the target assignment's epoch and when it was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TargetAssignmentMetadataValue {
    /// The assignment epoch.
    pub assignment_epoch: i32,
    /// When the assignment's computation finished (the coordinator's
    /// milliseconds; KIP-1263); 0 when unknown (a record written before it).
    #[serde(default)]
    pub assignment_timestamp_ms: i64,
}

impl TargetAssignmentMetadataValue {
    /// An assignment epoch computed at `timestamp_ms`.
    pub fn new(assignment_epoch: i32, assignment_timestamp_ms: i64) -> TargetAssignmentMetadataValue {
        TargetAssignmentMetadataValue { assignment_epoch, assignment_timestamp_ms }
    }
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

/// `ShareGroupMemberMetadata`: what a share member sent about itself.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareMemberMetadataValue {
    /// The rack.
    pub rack_id: Option<String>,
    /// The client id.
    pub client_id: String,
    /// The client host.
    pub client_host: String,
    /// Topics subscribed by name, sorted.
    pub subscribed_topic_names: Vec<String>,
}

/// `ShareGroupCurrentMemberAssignment`: a share member's epoch and partitions
/// (a share member has nothing to revoke: it moves to its target at once).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareMemberAssignmentValue {
    /// The member epoch.
    pub member_epoch: i32,
    /// The epoch before the last change.
    pub previous_member_epoch: i32,
    /// The member's state (always Stable for share members in Kafka 4.2).
    pub state: ConsumerMemberState,
    /// The partitions it holds, by topic id, partitions ascending.
    pub assigned: Vec<TopicIdPartitions>,
}

/// One topic's share partitions in a [`ShareStatePartitionMetadataValue`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareTopicPartitions {
    /// The topic id.
    pub topic_id: TopicId,
    /// The topic's name when the entry was written.
    pub topic_name: String,
    /// Partitions, ascending.
    pub partitions: Vec<i32>,
}

/// `ShareGroupStatePartitionMetadata`: which of a share group's partitions
/// have share state at the share coordinator. Only initialized partitions are
/// assigned (`GroupMetadataManager.shareGroupHeartbeat`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareStatePartitionMetadataValue {
    /// Asked of the share coordinator, not yet confirmed.
    pub initializing: Vec<ShareTopicPartitions>,
    /// Confirmed: these may be assigned.
    pub initialized: Vec<ShareTopicPartitions>,
    /// Topics whose share state is being deleted (id and name).
    pub deleting: Vec<(TopicId, String)>,
}

/// One record of a modern group. `value: None` is the key's tombstone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ModernGroupRecord {
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
        /// The assignment epoch and when it was computed.
        value: Option<TargetAssignmentMetadataValue>,
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
    /// `ShareGroupMemberMetadata` (type 10).
    ShareMemberMetadata {
        /// The group.
        group_id: Arc<str>,
        /// The member.
        member_id: Arc<str>,
        /// The value.
        value: Option<Box<ShareMemberMetadataValue>>,
    },
    /// `ShareGroupMetadata` (type 11): the group epoch, as a consumer group's.
    ShareGroupMetadata {
        /// The group.
        group_id: Arc<str>,
        /// The value.
        value: Option<ConsumerGroupMetadataValue>,
    },
    /// `ShareGroupTargetAssignmentMetadata` (type 12): the assignment epoch.
    ShareTargetAssignmentMetadata {
        /// The group.
        group_id: Arc<str>,
        /// The assignment epoch and when it was computed.
        value: Option<TargetAssignmentMetadataValue>,
    },
    /// `ShareGroupTargetAssignmentMember` (type 13): one member's target.
    ShareTargetAssignmentMember {
        /// The group.
        group_id: Arc<str>,
        /// The member.
        member_id: Arc<str>,
        /// Its target partitions, by topic id.
        value: Option<Vec<TopicIdPartitions>>,
    },
    /// `ShareGroupCurrentMemberAssignment` (type 14).
    ShareCurrentMemberAssignment {
        /// The group.
        group_id: Arc<str>,
        /// The member.
        member_id: Arc<str>,
        /// The value.
        value: Option<ShareMemberAssignmentValue>,
    },
    /// `ShareGroupStatePartitionMetadata` (type 15).
    ShareStatePartitionMetadata {
        /// The group.
        group_id: Arc<str>,
        /// The value.
        value: Option<Box<ShareStatePartitionMetadataValue>>,
    },
    /// The share coordinator's state of one share partition ([`record_type::SHARE_STATE`]).
    ShareState {
        /// The share group.
        group_id: Arc<str>,
        /// `topicId:partition`, the share partition key after the group (Kafka's
        /// coordinator key `group:topicId:partition` without the group); see
        /// [`ModernGroupRecord::share_state`].
        share_partition: Arc<str>,
        /// The state, as the share coordinator holds it.
        value: Option<Box<SharePartitionState>>,
    },
}

impl ModernGroupRecord {
    /// The group the record belongs to.
    pub fn group_id(&self) -> &Arc<str> {
        match self {
            ModernGroupRecord::GroupMetadata { group_id, .. }
            | ModernGroupRecord::MemberMetadata { group_id, .. }
            | ModernGroupRecord::TargetAssignmentMetadata { group_id, .. }
            | ModernGroupRecord::TargetAssignmentMember { group_id, .. }
            | ModernGroupRecord::CurrentMemberAssignment { group_id, .. }
            | ModernGroupRecord::RegularExpression { group_id, .. }
            | ModernGroupRecord::ShareMemberMetadata { group_id, .. }
            | ModernGroupRecord::ShareGroupMetadata { group_id, .. }
            | ModernGroupRecord::ShareTargetAssignmentMetadata { group_id, .. }
            | ModernGroupRecord::ShareTargetAssignmentMember { group_id, .. }
            | ModernGroupRecord::ShareCurrentMemberAssignment { group_id, .. }
            | ModernGroupRecord::ShareStatePartitionMetadata { group_id, .. }
            | ModernGroupRecord::ShareState { group_id, .. } => group_id,
        }
    }

    /// The record of share partition `key`'s state (`None`: its tombstone).
    ///
    /// ```
    /// use group_offsets::ModernGroupRecord;
    /// use group_share_coordinator::SharePartitionKey;
    /// use group_types::TopicId;
    ///
    /// let key = SharePartitionKey::new("g:1", TopicId::from_u128(5), 3);
    /// let record = ModernGroupRecord::share_state(&key, None);
    /// assert_eq!(&**record.group_id(), "g:1");
    /// assert_eq!(record.share_partition_key(), Some(key));
    /// ```
    pub fn share_state(key: &SharePartitionKey, value: Option<SharePartitionState>) -> ModernGroupRecord {
        ModernGroupRecord::ShareState {
            group_id: Arc::from(key.group_id.as_str()),
            share_partition: Arc::from(format!("{}:{}", key.topic_id, key.partition)),
            value: value.map(Box::new),
        }
    }

    /// The share partition a [`ShareState`](ModernGroupRecord::ShareState) record is
    /// about (`None` for other records, or a sub-key that names none).
    pub fn share_partition_key(&self) -> Option<SharePartitionKey> {
        let ModernGroupRecord::ShareState { group_id, share_partition, .. } = self else { return None };
        let (topic, partition) = share_partition.split_once(':')?;
        Some(SharePartitionKey::new(&**group_id, topic.parse().ok()?, partition.parse().ok()?))
    }

    /// Kafka's record type number (one of [`record_type`]).
    pub fn record_type(&self) -> i16 {
        match self {
            ModernGroupRecord::GroupMetadata { .. } => record_type::GROUP_METADATA,
            ModernGroupRecord::MemberMetadata { .. } => record_type::MEMBER_METADATA,
            ModernGroupRecord::TargetAssignmentMetadata { .. } => record_type::TARGET_ASSIGNMENT_METADATA,
            ModernGroupRecord::TargetAssignmentMember { .. } => record_type::TARGET_ASSIGNMENT_MEMBER,
            ModernGroupRecord::CurrentMemberAssignment { .. } => record_type::CURRENT_MEMBER_ASSIGNMENT,
            ModernGroupRecord::RegularExpression { .. } => record_type::REGULAR_EXPRESSION,
            ModernGroupRecord::ShareMemberMetadata { .. } => record_type::SHARE_MEMBER_METADATA,
            ModernGroupRecord::ShareGroupMetadata { .. } => record_type::SHARE_GROUP_METADATA,
            ModernGroupRecord::ShareTargetAssignmentMetadata { .. } => {
                record_type::SHARE_TARGET_ASSIGNMENT_METADATA
            }
            ModernGroupRecord::ShareTargetAssignmentMember { .. } => {
                record_type::SHARE_TARGET_ASSIGNMENT_MEMBER
            }
            ModernGroupRecord::ShareCurrentMemberAssignment { .. } => {
                record_type::SHARE_CURRENT_MEMBER_ASSIGNMENT
            }
            ModernGroupRecord::ShareStatePartitionMetadata { .. } => {
                record_type::SHARE_STATE_PARTITION_METADATA
            }
            ModernGroupRecord::ShareState { .. } => record_type::SHARE_STATE,
        }
    }

    /// Kafka's name of the record's type (`ConsumerGroupMetadata`,
    /// `ShareGroupMemberMetadata`, ...), as its record type table spells it.
    pub fn type_name(&self) -> &'static str {
        match self {
            ModernGroupRecord::GroupMetadata { .. } => "ConsumerGroupMetadata",
            ModernGroupRecord::MemberMetadata { .. } => "ConsumerGroupMemberMetadata",
            ModernGroupRecord::TargetAssignmentMetadata { .. } => "ConsumerGroupTargetAssignmentMetadata",
            ModernGroupRecord::TargetAssignmentMember { .. } => "ConsumerGroupTargetAssignmentMember",
            ModernGroupRecord::CurrentMemberAssignment { .. } => "ConsumerGroupCurrentMemberAssignment",
            ModernGroupRecord::RegularExpression { .. } => "ConsumerGroupRegularExpression",
            ModernGroupRecord::ShareMemberMetadata { .. } => "ShareGroupMemberMetadata",
            ModernGroupRecord::ShareGroupMetadata { .. } => "ShareGroupMetadata",
            ModernGroupRecord::ShareTargetAssignmentMetadata { .. } => "ShareGroupTargetAssignmentMetadata",
            ModernGroupRecord::ShareTargetAssignmentMember { .. } => "ShareGroupTargetAssignmentMember",
            ModernGroupRecord::ShareCurrentMemberAssignment { .. } => "ShareGroupCurrentMemberAssignment",
            ModernGroupRecord::ShareStatePartitionMetadata { .. } => "ShareGroupStatePartitionMetadata",
            ModernGroupRecord::ShareState { .. } => "ShareState",
        }
    }

    /// The part of the key after the group: the member id, the regex, or `""`
    /// for the group-level kinds. (record type, group, this) identifies the key.
    pub fn sub_key(&self) -> &str {
        match self {
            ModernGroupRecord::GroupMetadata { .. }
            | ModernGroupRecord::TargetAssignmentMetadata { .. }
            | ModernGroupRecord::ShareGroupMetadata { .. }
            | ModernGroupRecord::ShareTargetAssignmentMetadata { .. }
            | ModernGroupRecord::ShareStatePartitionMetadata { .. } => "",
            ModernGroupRecord::MemberMetadata { member_id, .. }
            | ModernGroupRecord::TargetAssignmentMember { member_id, .. }
            | ModernGroupRecord::CurrentMemberAssignment { member_id, .. }
            | ModernGroupRecord::ShareMemberMetadata { member_id, .. }
            | ModernGroupRecord::ShareTargetAssignmentMember { member_id, .. }
            | ModernGroupRecord::ShareCurrentMemberAssignment { member_id, .. } => member_id,
            ModernGroupRecord::RegularExpression { regex, .. } => regex,
            ModernGroupRecord::ShareState { share_partition, .. } => share_partition,
        }
    }

    /// True for a tombstone (the key's removal).
    pub fn is_tombstone(&self) -> bool {
        match self {
            ModernGroupRecord::GroupMetadata { value, .. } => value.is_none(),
            ModernGroupRecord::MemberMetadata { value, .. } => value.is_none(),
            ModernGroupRecord::TargetAssignmentMetadata { value, .. } => value.is_none(),
            ModernGroupRecord::TargetAssignmentMember { value, .. } => value.is_none(),
            ModernGroupRecord::CurrentMemberAssignment { value, .. } => value.is_none(),
            ModernGroupRecord::RegularExpression { value, .. } => value.is_none(),
            ModernGroupRecord::ShareMemberMetadata { value, .. } => value.is_none(),
            ModernGroupRecord::ShareGroupMetadata { value, .. } => value.is_none(),
            ModernGroupRecord::ShareTargetAssignmentMetadata { value, .. } => value.is_none(),
            ModernGroupRecord::ShareTargetAssignmentMember { value, .. } => value.is_none(),
            ModernGroupRecord::ShareCurrentMemberAssignment { value, .. } => value.is_none(),
            ModernGroupRecord::ShareStatePartitionMetadata { value, .. } => value.is_none(),
            ModernGroupRecord::ShareState { value, .. } => value.is_none(),
        }
    }
}
