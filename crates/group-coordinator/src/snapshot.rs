//! Read-only snapshots of a group: `GroupMetadata` and `MemberMetadata`.

use group_types::{GroupState, OffsetAndMetadata, ProtocolMetadata, TopicPartition};

/// A copy of one group's state at one moment. It shares nothing with the live group:
/// changing the group later does not change a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMetadata {
    /// The group id.
    pub group_id: String,
    /// The state.
    pub state: GroupState,
    /// The generation (0 for a new group).
    pub generation_id: i32,
    /// The protocol type the group was formed with (`consumer`).
    pub protocol_type: Option<String>,
    /// The selected protocol of the current generation.
    pub protocol_name: Option<String>,
    /// The leader's member id.
    pub leader_id: Option<String>,
    /// When the group last changed state.
    pub state_timestamp_ms: i64,
    /// The members, in the order they joined.
    pub members: Vec<MemberMetadata>,
    /// Member ids handed out with `MEMBER_ID_REQUIRED` that have not joined yet.
    pub pending_members: Vec<String>,
    /// When the join timer (initial delay or rebalance timeout) fires, if armed.
    pub join_deadline_ms: Option<i64>,
    /// When the pending-sync timer fires, if armed.
    pub sync_deadline_ms: Option<i64>,
    /// The committed offsets, by partition.
    pub offsets: Vec<(TopicPartition, OffsetAndMetadata)>,
}

impl GroupMetadata {
    /// The member with this id.
    pub fn member(&self, member_id: &str) -> Option<&MemberMetadata> {
        self.members.iter().find(|m| m.member_id == member_id)
    }

    /// True when `member_id` leads the group.
    pub fn is_leader(&self, member_id: &str) -> bool {
        self.leader_id.as_deref() == Some(member_id)
    }
}

/// A copy of one member's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberMetadata {
    /// The member id.
    pub member_id: String,
    /// The static instance id.
    pub group_instance_id: Option<String>,
    /// The client id.
    pub client_id: String,
    /// The client host.
    pub client_host: String,
    /// The session timeout.
    pub session_timeout_ms: i32,
    /// The rebalance timeout.
    pub rebalance_timeout_ms: i32,
    /// The protocol type it joined with.
    pub protocol_type: String,
    /// Its protocols, in its order of preference.
    pub protocols: Vec<ProtocolMetadata>,
    /// Its metadata for the group's selected protocol (empty if none is selected).
    pub subscription: Vec<u8>,
    /// Its current assignment bytes.
    pub assignment: Vec<u8>,
    /// True while a JoinGroup of it is parked.
    pub awaiting_join: bool,
    /// True while a SyncGroup of it is parked.
    pub awaiting_sync: bool,
    /// True until its first join phase completes.
    pub is_new: bool,
    /// Its session deadline, if armed.
    pub session_deadline_ms: Option<i64>,
}

/// A read-only snapshot of a KIP-848 consumer group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerGroupSnapshot {
    /// The group id.
    pub group_id: String,
    /// Empty, Assigning, Reconciling or Stable.
    pub state: group_types::ConsumerGroupState,
    /// The group epoch.
    pub group_epoch: i32,
    /// The target assignment's epoch.
    pub assignment_epoch: i32,
    /// The metadata hash of the subscribed topics (0: none exists).
    pub metadata_hash: u64,
    /// The server assignor most members name, `None` when none does.
    pub preferred_assignor: Option<String>,
    /// The subscription type of the last metadata refresh.
    pub subscription_type: group_assignors::server::SubscriptionType,
    /// The members, by member id.
    pub members: Vec<ConsumerMemberSnapshot>,
    /// Instance id to member id, by instance id.
    pub static_members: Vec<(String, String)>,
    /// Resolved regexes and their topics, by regex.
    pub regexes: Vec<(String, Vec<String>)>,
}

/// One member of a [`ConsumerGroupSnapshot`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerMemberSnapshot {
    /// The member id.
    pub member_id: String,
    /// The member epoch.
    pub member_epoch: i32,
    /// The epoch before the last change.
    pub previous_member_epoch: i32,
    /// Its reconciliation state.
    pub state: group_types::ConsumerMemberState,
    /// What it sent about itself.
    pub metadata: group_offsets::ConsumerMemberMetadataValue,
    /// The partitions it owns.
    pub assigned: Vec<group_types::TopicIdPartitions>,
    /// The partitions it must give back.
    pub pending_revocation: Vec<group_types::TopicIdPartitions>,
    /// When each of `assigned` was assigned to it, in `assigned`'s order (KIP-1251).
    pub assigned_epochs: group_offsets::AssignmentEpochs,
    /// When each of `pending_revocation` was assigned to it.
    pub pending_revocation_epochs: group_offsets::AssignmentEpochs,
    /// Its target, `None` when none is recorded.
    pub target: Option<Vec<group_types::TopicIdPartitions>>,
    /// Its session deadline, if armed.
    pub session_deadline_ms: Option<i64>,
}

/// A share group as the core holds it (KIP-932): a read-only copy, for tests,
/// tools and operators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareGroupSnapshot {
    /// The group id.
    pub group_id: String,
    /// `Empty` or `Stable`.
    pub state: &'static str,
    /// The group epoch.
    pub group_epoch: i32,
    /// The target assignment's epoch.
    pub assignment_epoch: i32,
    /// The hash of the subscribed topics' metadata (0: none exists).
    pub metadata_hash: u64,
    /// Members in id order.
    pub members: Vec<ShareMemberSnapshot>,
    /// Which share partitions the share coordinator holds state for, as the
    /// group's `ShareGroupStatePartitionMetadata` says; `None` before its first.
    pub share_state: Option<group_offsets::ShareStatePartitionMetadataValue>,
}

/// One member of a [`ShareGroupSnapshot`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareMemberSnapshot {
    /// The member id.
    pub member_id: String,
    /// The member epoch.
    pub member_epoch: i32,
    /// The epoch before the last change.
    pub previous_member_epoch: i32,
    /// Its rack.
    pub rack_id: Option<String>,
    /// Its client id.
    pub client_id: String,
    /// Its client host.
    pub client_host: String,
    /// Topics subscribed by name, sorted.
    pub subscribed_topic_names: Vec<String>,
    /// The partitions it holds.
    pub assigned: Vec<group_types::TopicIdPartitions>,
    /// Its target, `None` when none is recorded.
    pub target: Option<Vec<group_types::TopicIdPartitions>>,
}
