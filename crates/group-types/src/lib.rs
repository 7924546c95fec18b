//! The data of Kafka's consumer group protocols: the classic one and KIP-848's.
//!
//! `group-types` is the vocabulary every other crate of the workspace speaks: the
//! requests and responses of the group APIs, Kafka's error codes, the states of
//! groups and members, committed offsets as storage keeps them, and the codec for
//! the consumer protocol (the bytes real clients send as subscriptions and receive
//! as assignments).
//!
//! # Brief overview
//!
//! - [`ErrorCode`] carries Kafka's numeric codes; protocol outcomes are data in
//!   responses, [`GroupError`] is for `Result`-returning APIs.
//! - [`JoinGroupRequest`], [`SyncGroupRequest`], [`HeartbeatRequest`],
//!   [`LeaveGroupRequest`], [`OffsetCommitRequest`], [`OffsetFetchRequest`],
//!   [`DescribeGroupsRequest`], [`ListGroupsRequest`], [`DeleteGroupsRequest`] and
//!   [`OffsetDeleteRequest`], each with its response, hold every field of the
//!   classic protocol that real clients send.
//! - [`ConsumerGroupHeartbeatRequest`] and [`ConsumerGroupDescribeRequest`] are
//!   KIP-848's consumer protocol; assignments there name topics by [`TopicId`].
//! - [`GroupId`], [`MemberId`] and [`GroupInstanceId`] are the protocol's
//!   identifiers: UTF-8 over `bytes::Bytes`, so a front end hands over what it
//!   decoded from the wire without a copy, and a clone is a reference-count bump.
//!   [`CommitMetadata`], the string a client commits with an offset, is one of
//!   the same kind. JoinGroup's protocol metadata and SyncGroup's assignments are
//!   `Bytes`.
//! - OffsetCommit's partitions are [`TopicEntries`] lists in request order, as
//!   on the wire; stored offsets and the other offset APIs use [`PartitionMap`].
//! - [`TopicPartition`] is cheap to clone; [`MemberSubscription`] is what an
//!   assignor knows of a member.
//! - [`Subscription`] and [`MemberAssignment`] encode and decode the consumer
//!   protocol, versions 0 to 3, byte for byte as Kafka's clients do.
//! - [`OffsetAndMetadata`], [`GroupOffsets`] and [`OffsetCommitLog`] are the
//!   stored shape of commits; they and the messages implement serde's traits.
//!
//! - With the feature `kafka-protocol`, [`wire`] converts the group APIs to and from
//!   that crate's types, beside each message, and walks a request body's bounds
//!   before that crate decodes it.
//!
//! # Who should depend on this crate
//!
//! Anything that speaks the group protocol: assignors, storage engines, front
//! ends. It depends on no other crate of the workspace, does no I/O, spawns no
//! thread and reads no clock.
//!
//! # Example
//!
//! Decode what a librdkafka consumer sends, then build the assignment its leader
//! would send back:
//!
//! ```
//! use group_types::{MemberAssignment, Subscription, TopicPartitions};
//!
//! let sub = Subscription {
//!     version: 3,
//!     topics: vec!["orders".into()],
//!     rack_id: Some(String::new()),
//!     ..Subscription::default()
//! };
//! let bytes = sub.encode()?;
//! let decoded = Subscription::decode(&bytes)?;
//! assert_eq!(decoded.topics, ["orders"]);
//! assert_eq!(decoded.generation_id, -1);
//!
//! let assignment = MemberAssignment::new(vec![TopicPartitions::new("orders", [0, 1])]);
//! let back = MemberAssignment::decode(&assignment.encode()?)?;
//! assert_eq!(back.topic_partitions().len(), 2);
//! # Ok::<(), group_types::CodecError>(())
//! ```

mod consumer_group_describe;
mod consumer_group_heartbeat;
mod consumer_protocol;
mod delete_groups;
mod describe_groups;
mod error_code;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod hash;
mod heartbeat;
mod ids;
mod join_group;
mod leave_group;
mod list_groups;
mod member_subscription;
mod offset_commit;
mod offset_fetch;
mod offsets;
mod share_group_describe;
mod share_group_heartbeat;
mod share_group_offsets;
mod share_state;
mod state;
mod sync_group;
mod topic_id;
mod topic_partition;
mod txn_offset_commit;
#[cfg(feature = "kafka-protocol")]
pub mod wire;
mod write_txn_markers;

pub use crate::consumer_group_describe::{
    AUTHORIZED_OPERATIONS_OMITTED, ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
    DescribedConsumerGroup, DescribedConsumerMember, DescribedTopicPartitions,
};
pub use crate::consumer_group_heartbeat::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH, TopicIdPartitions,
};
pub use crate::consumer_protocol::{
    CONSUMER_PROTOCOL_LATEST_VERSION, CodecError, MemberAssignment, Subscription, TopicPartitions, flatten,
    group_by_topic,
};
pub use crate::delete_groups::{
    DeleteGroupsRequest, DeleteGroupsResponse, DeletedGroup, OffsetDeleteRequest, OffsetDeleteResponse,
};
pub use crate::describe_groups::{
    DescribeGroupsRequest, DescribeGroupsResponse, DescribedGroup, DescribedMember,
};
pub use crate::error_code::{ErrorCode, GroupError};
pub use crate::heartbeat::{HeartbeatRequest, HeartbeatResponse};
pub use crate::ids::{
    BadUtf8Id, CommitMetadata, GroupId, GroupInstanceId, MemberId, ProtocolName, ProtocolType,
};
pub use crate::join_group::{JoinGroupMember, JoinGroupRequest, JoinGroupResponse, ProtocolMetadata};
pub use crate::leave_group::{LeaveGroupRequest, LeaveGroupResponse, LeaveMemberResponse, MemberIdentity};
pub use crate::list_groups::{ListGroupsRequest, ListGroupsResponse, ListedGroup};
pub use crate::member_subscription::MemberSubscription;
pub use crate::offset_commit::{
    OffsetCommitData, OffsetCommitRequest, OffsetCommitResponse, PartitionMap, TopicEntries,
};
pub use crate::offset_fetch::{OffsetFetchData, OffsetFetchRequest, OffsetFetchResponse};
pub use crate::offsets::{GroupOffsets, OffsetAndMetadata, OffsetCommitLog};
pub use crate::share_group_describe::{
    DescribedShareGroup, DescribedShareMember, ShareGroupDescribeRequest, ShareGroupDescribeResponse,
};
pub use crate::share_group_heartbeat::{ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse};
pub use crate::share_group_offsets::{
    AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse, AlterShareOffsetsTopic,
    AlteredShareOffsetsTopic, DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse,
    DeletedShareOffsetsTopic, DescribeShareGroupOffsetsGroupRequest, DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse, DescribedShareOffset, DescribedShareOffsetsGroup,
    DescribedShareOffsetsTopic, ShareOffsetsTopicRequest, SharePartitionOutcome, ShareStartOffset,
};
pub use crate::share_state::{
    DELIVERY_STATE_ACKNOWLEDGED, DELIVERY_STATE_ACQUIRED, DELIVERY_STATE_ARCHIVED, DELIVERY_STATE_AVAILABLE,
    DeleteShareGroupStateRequest, DeleteShareGroupStateResponse, DeleteStatePartition,
    InitializeShareGroupStateRequest, InitializeShareGroupStateResponse, InitializeStatePartition,
    ReadShareGroupStateRequest, ReadShareGroupStateResponse, ReadShareGroupStateSummaryRequest,
    ReadShareGroupStateSummaryResponse, ReadStatePartition, ReadStatePartitionResult,
    ReadStateSummaryPartition, ReadStateSummaryPartitionResult, ShareStatePartitionResult, ShareStateRequest,
    ShareStateResponse, ShareStateTopic, StateBatch, WriteShareGroupStateRequest,
    WriteShareGroupStateResponse, WriteStatePartition,
};
pub use crate::state::{ConsumerGroupState, ConsumerMemberState, GroupState, MemberState, UnknownGroupState};
pub use crate::sync_group::{MemberAssignmentData, SyncGroupRequest, SyncGroupResponse};
pub use crate::topic_id::{BadTopicId, TopicId};
pub use crate::topic_partition::TopicPartition;
pub use crate::txn_offset_commit::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};
pub use crate::write_txn_markers::{
    GROUP_METADATA_TOPIC_NAME, TransactionResult, TxnMarker, TxnMarkerResult, WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
};
