//! The legacy value format of KIP-848 consumer-group records: the version
//! byte, then the kind's stored shape in bincode (the configuration of the
//! parent module).
//!
//! The key already names the record type, the group and the member id or
//! regex (`keys::consumer_key`), so a value holds only the record's value,
//! its shape chosen by the key's record type; a tombstone is no value at all
//! (the key is removed). As for offsets and group records, the stored shapes
//! are this module's own structs, so a field added to a public type cannot
//! change the bytes without a new format version; the golden tests pin them.

use std::sync::Arc;

use group_offsets::{
    AssignmentEpochs, ClassicMemberMetadata, ConsumerGroupMetadataValue, ConsumerMemberMetadataValue,
    CurrentMemberAssignmentValue, ModernGroupRecord, RegularExpressionValue, TargetAssignmentMetadataValue,
    record_type,
};
use group_types::{ConsumerMemberState, ProtocolMetadata, TopicId, TopicIdPartitions};
use serde::{Deserialize, Serialize};

use super::{DecodeError, EncodeError, decode, encode, split_version};

/// The format version of legacy consumer-group record values (every kind).
pub(crate) const CONSUMER_FORMAT_V1: u8 = 1;

/// `ConsumerGroupMetadata`, format version 1.
#[derive(Serialize, Deserialize)]
struct GroupMetadataV1 {
    epoch: i32,
    metadata_hash: u64,
}

/// `ConsumerGroupMemberMetadata`, format version 1.
#[derive(Serialize, Deserialize)]
struct MemberMetadataV1 {
    instance_id: Option<String>,
    rack_id: Option<String>,
    client_id: String,
    client_host: String,
    subscribed_topic_names: Vec<String>,
    subscribed_topic_regex: Option<String>,
    rebalance_timeout_ms: i32,
    server_assignor: Option<String>,
    classic: Option<ClassicV1>,
}

/// A classic-protocol member's JoinGroup data, format version 1.
#[derive(Serialize, Deserialize)]
struct ClassicV1 {
    session_timeout_ms: i32,
    supported_protocols: Vec<ProtocolV1>,
}

/// One JoinGroup protocol, format version 1.
#[derive(Serialize, Deserialize)]
struct ProtocolV1 {
    name: String,
    metadata: Vec<u8>,
}

/// `ConsumerGroupTargetAssignmentMetadata`, format version 1.
#[derive(Serialize, Deserialize)]
struct TargetAssignmentMetadataV1 {
    assignment_epoch: i32,
}

/// `ConsumerGroupTargetAssignmentMember`, format version 1.
#[derive(Serialize, Deserialize)]
struct TargetAssignmentMemberV1 {
    topic_partitions: Vec<TopicPartitionsV1>,
}

/// `ConsumerGroupCurrentMemberAssignment`, format version 1.
#[derive(Serialize, Deserialize)]
struct CurrentMemberAssignmentV1 {
    member_epoch: i32,
    previous_member_epoch: i32,
    /// `ConsumerMemberState::value`.
    state: i8,
    assigned: Vec<TopicPartitionsV1>,
    pending_revocation: Vec<TopicPartitionsV1>,
}

/// `ConsumerGroupRegularExpression`, format version 1.
#[derive(Serialize, Deserialize)]
struct RegularExpressionV1 {
    topics: Vec<String>,
    version: i64,
    timestamp_ms: i64,
}

/// One topic's partitions, format version 1: the topic id as its 16 bytes.
#[derive(Serialize, Deserialize)]
struct TopicPartitionsV1 {
    topic_id: [u8; 16],
    partitions: Vec<i32>,
}

/// Encodes a consumer-group record's value; `None` for a tombstone.
pub(crate) fn encode_consumer(record: &ModernGroupRecord) -> Result<Option<Vec<u8>>, EncodeError> {
    let v = CONSUMER_FORMAT_V1;
    match record {
        ModernGroupRecord::GroupMetadata { value, .. } => value
            .map(|m| encode(v, &GroupMetadataV1 { epoch: m.epoch, metadata_hash: m.metadata_hash }))
            .transpose(),
        ModernGroupRecord::MemberMetadata { value, .. } => {
            value.as_deref().map(|m| encode(v, &member_metadata_v1(m))).transpose()
        }
        ModernGroupRecord::TargetAssignmentMetadata { value, .. } => value
            .map(|m| encode(v, &TargetAssignmentMetadataV1 { assignment_epoch: m.assignment_epoch }))
            .transpose(),
        ModernGroupRecord::TargetAssignmentMember { value, .. } => value
            .as_deref()
            .map(|t| encode(v, &TargetAssignmentMemberV1 { topic_partitions: partitions_v1(t) }))
            .transpose(),
        ModernGroupRecord::CurrentMemberAssignment { value, .. } => value
            .as_ref()
            .map(|a| {
                encode(
                    v,
                    &CurrentMemberAssignmentV1 {
                        member_epoch: a.member_epoch,
                        previous_member_epoch: a.previous_member_epoch,
                        state: a.state.value(),
                        assigned: partitions_v1(&a.assigned),
                        pending_revocation: partitions_v1(&a.pending_revocation),
                    },
                )
            })
            .transpose(),
        ModernGroupRecord::RegularExpression { value, .. } => value
            .as_ref()
            .map(|r| {
                encode(
                    v,
                    &RegularExpressionV1 {
                        topics: r.topics.clone(),
                        version: r.version,
                        timestamp_ms: r.timestamp_ms,
                    },
                )
            })
            .transpose(),
        ModernGroupRecord::ShareMemberMetadata { .. }
        | ModernGroupRecord::ShareGroupMetadata { .. }
        | ModernGroupRecord::ShareTargetAssignmentMetadata { .. }
        | ModernGroupRecord::ShareTargetAssignmentMember { .. }
        | ModernGroupRecord::ShareCurrentMemberAssignment { .. }
        | ModernGroupRecord::ShareStatePartitionMetadata { .. }
        | ModernGroupRecord::ShareState { .. } => Err(EncodeError::NoLegacyForm(record.record_type())),
    }
}

/// Decodes the value stored under a consumer-group record key of
/// `record_type`, `group_id` and `sub_key` into the record. A record type
/// this build does not know, or a group-level type with a sub-key, is
/// an error: no version of this crate writes such a key.
pub(crate) fn decode_consumer(
    record_type: i16,
    group_id: Arc<str>,
    sub_key: &str,
    bytes: &[u8],
) -> Result<ModernGroupRecord, DecodeError> {
    let group_level =
        matches!(record_type, record_type::GROUP_METADATA | record_type::TARGET_ASSIGNMENT_METADATA);
    if group_level && !sub_key.is_empty() {
        return Err(DecodeError::SubKeyOnGroupRecord { record_type, sub_key: sub_key.to_owned() });
    }
    // Before the version: a key no build writes is the finding, whatever its value.
    if !group_level && !is_member_level(record_type) {
        return Err(unknown_type(record_type));
    }
    let (version, body) = split_version(bytes)?;
    if version != CONSUMER_FORMAT_V1 {
        return Err(DecodeError::UnknownVersion(version));
    }
    let sub = || Arc::from(sub_key);
    Ok(match record_type {
        record_type::GROUP_METADATA => {
            let stored: GroupMetadataV1 = decode(body)?;
            let value =
                ConsumerGroupMetadataValue { epoch: stored.epoch, metadata_hash: stored.metadata_hash };
            ModernGroupRecord::GroupMetadata { group_id, value: Some(value) }
        }
        record_type::MEMBER_METADATA => {
            let stored: MemberMetadataV1 = decode(body)?;
            let value = Some(Box::new(member_metadata(stored)));
            ModernGroupRecord::MemberMetadata { group_id, member_id: sub(), value }
        }
        record_type::TARGET_ASSIGNMENT_METADATA => {
            let stored: TargetAssignmentMetadataV1 = decode(body)?;
            // Written before Kafka 4.3's timestamp: unknown (0).
            let value = Some(TargetAssignmentMetadataValue::new(stored.assignment_epoch, 0));
            ModernGroupRecord::TargetAssignmentMetadata { group_id, value }
        }
        record_type::TARGET_ASSIGNMENT_MEMBER => {
            let stored: TargetAssignmentMemberV1 = decode(body)?;
            let value = Some(partitions(stored.topic_partitions));
            ModernGroupRecord::TargetAssignmentMember { group_id, member_id: sub(), value }
        }
        record_type::CURRENT_MEMBER_ASSIGNMENT => {
            let stored: CurrentMemberAssignmentV1 = decode(body)?;
            // Written before KIP-1251: every partition at the member epoch.
            let epochs = |count: usize| AssignmentEpochs::same_over(stored.member_epoch.max(0), count);
            let value = CurrentMemberAssignmentValue {
                member_epoch: stored.member_epoch,
                previous_member_epoch: stored.previous_member_epoch,
                state: ConsumerMemberState::from_value(stored.state),
                assigned_epochs: epochs(stored.assigned.iter().map(|t| t.partitions.len()).sum()),
                pending_revocation_epochs: epochs(
                    stored.pending_revocation.iter().map(|t| t.partitions.len()).sum(),
                ),
                assigned: partitions(stored.assigned),
                pending_revocation: partitions(stored.pending_revocation),
            };
            ModernGroupRecord::CurrentMemberAssignment { group_id, member_id: sub(), value: Some(value) }
        }
        record_type::REGULAR_EXPRESSION => {
            let stored: RegularExpressionV1 = decode(body)?;
            let value = RegularExpressionValue {
                topics: stored.topics,
                version: stored.version,
                timestamp_ms: stored.timestamp_ms,
            };
            ModernGroupRecord::RegularExpression { group_id, regex: sub(), value: Some(value) }
        }
        other => return Err(unknown_type(other)),
    })
}

fn unknown_type(record_type: i16) -> DecodeError {
    DecodeError::UnknownRecordType(record_type)
}

/// The record types keyed by group and member id or regex.
fn is_member_level(t: i16) -> bool {
    matches!(
        t,
        record_type::MEMBER_METADATA
            | record_type::TARGET_ASSIGNMENT_MEMBER
            | record_type::CURRENT_MEMBER_ASSIGNMENT
            | record_type::REGULAR_EXPRESSION
    )
}

fn member_metadata_v1(m: &ConsumerMemberMetadataValue) -> MemberMetadataV1 {
    MemberMetadataV1 {
        instance_id: m.instance_id.clone(),
        rack_id: m.rack_id.clone(),
        client_id: m.client_id.clone(),
        client_host: m.client_host.clone(),
        subscribed_topic_names: m.subscribed_topic_names.clone(),
        subscribed_topic_regex: m.subscribed_topic_regex.clone(),
        rebalance_timeout_ms: m.rebalance_timeout_ms,
        server_assignor: m.server_assignor.clone(),
        classic: m.classic.as_ref().map(|c| ClassicV1 {
            session_timeout_ms: c.session_timeout_ms,
            supported_protocols: c
                .supported_protocols
                .iter()
                .map(|p| ProtocolV1 { name: p.name.to_string(), metadata: p.metadata.to_vec() })
                .collect(),
        }),
    }
}

fn member_metadata(m: MemberMetadataV1) -> ConsumerMemberMetadataValue {
    ConsumerMemberMetadataValue {
        instance_id: m.instance_id,
        rack_id: m.rack_id,
        client_id: m.client_id,
        client_host: m.client_host,
        subscribed_topic_names: m.subscribed_topic_names,
        subscribed_topic_regex: m.subscribed_topic_regex,
        rebalance_timeout_ms: m.rebalance_timeout_ms,
        server_assignor: m.server_assignor,
        classic: m.classic.map(|c| ClassicMemberMetadata {
            session_timeout_ms: c.session_timeout_ms,
            supported_protocols: c
                .supported_protocols
                .into_iter()
                .map(|p| ProtocolMetadata { name: p.name.into(), metadata: p.metadata.into() })
                .collect(),
        }),
    }
}

fn partitions_v1(topics: &[TopicIdPartitions]) -> Vec<TopicPartitionsV1> {
    topics
        .iter()
        .map(|t| TopicPartitionsV1 { topic_id: t.topic_id.0, partitions: t.partitions.clone() })
        .collect()
}

fn partitions(topics: Vec<TopicPartitionsV1>) -> Vec<TopicIdPartitions> {
    topics
        .into_iter()
        .map(|t| TopicIdPartitions { topic_id: TopicId(t.topic_id), partitions: t.partitions })
        .collect()
}

#[cfg(test)]
#[path = "consumer_tests.rs"]
mod tests;
