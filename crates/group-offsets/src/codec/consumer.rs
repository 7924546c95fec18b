//! Modern-group records, KIP-848 consumer groups and KIP-932 share groups (record tag 4): the key as Kafka's (record type, group, member id or regex),
//! then a presence flag (0 for a tombstone) and the kind's fields, in the
//! parent module's primitives (zigzag varints, length-prefixed strings).
//!
//! | record type | value fields |
//! | --- | --- |
//! | 3 `ConsumerGroupMetadata` | `epoch: ivarint`, `metadata_hash: uvarint` |
//! | 5 `ConsumerGroupMemberMetadata` | `instance_id: opt str`, `rack_id: opt str`, `client_id: str`, `client_host: str`, `subscribed_topic_names: [str]`, `subscribed_topic_regex: opt str`, `rebalance_timeout_ms: ivarint`, `server_assignor: opt str`, `classic: opt (session_timeout_ms: ivarint, supported_protocols: [(name: str, metadata: bytes)])` |
//! | 6 `ConsumerGroupTargetAssignmentMetadata` | `assignment_epoch: ivarint`, format 3: `assignment_timestamp_ms: ivarint` |
//! | 7 `ConsumerGroupTargetAssignmentMember` | `[topic partitions]` |
//! | 8 `ConsumerGroupCurrentMemberAssignment` | `member_epoch: ivarint`, `previous_member_epoch: ivarint`, `state: i8 byte`, `assigned: [topic partitions]`, `pending_revocation: [topic partitions]`, format 3: `assigned_epochs: [epoch run]`, `pending_revocation_epochs: [epoch run]` |
//! | 16 `ConsumerGroupRegularExpression` | `topics: [str]`, `version: ivarint`, `timestamp_ms: ivarint` |
//! | 10 `ShareGroupMemberMetadata` | `rack_id: opt str`, `client_id: str`, `client_host: str`, `subscribed_topic_names: [str]` |
//! | 11 `ShareGroupMetadata` | as type 3 |
//! | 12 `ShareGroupTargetAssignmentMetadata` | as type 6 |
//! | 13 `ShareGroupTargetAssignmentMember` | as type 7 |
//! | 14 `ShareGroupCurrentMemberAssignment` | `member_epoch: ivarint`, `previous_member_epoch: ivarint`, `state: i8 byte`, `assigned: [topic partitions]` |
//! | 15 `ShareGroupStatePartitionMetadata` | `initializing: [share topic]`, `initialized: [share topic]`, `deleting: [(topic id, name: str)]`; a share topic is its id's 16 bytes, its name, then its partitions as in topic partitions |
//! | 1000 `ShareState` (sub-key `topicId:partition`) | `snapshot_epoch`, `state_epoch`, `leader_epoch`, `start_offset`, `delivery_complete_count`, `create_timestamp`, `write_timestamp` (each `ivarint`), `state_batches: [(first_offset: ivarint, last_offset: ivarint, delivery_state: i8 byte, delivery_count: ivarint)]`, `max_leader_epoch: ivarint`, `max_state_epoch: opt ivarint`, `updates_since_snapshot: opt ivarint` |
//!
//! Lists are a `uvarint` count, then the items; topic partitions are the
//! topic id's 16 bytes, then a list of `ivarint` partitions. An epoch run is
//! `len: uvarint`, `epoch: ivarint`: `len` partitions in the list's order
//! (topics, then partitions) assigned at `epoch`; the runs of a list add up
//! to its partition count. Format 2 has no epochs and no timestamp: they read
//! as the member epoch (never below 0) and 0 (`Utils.assignmentFromTopicPartitions`).

use std::sync::Arc;

use crate::{
    AssignmentEpochs, ClassicMemberMetadata, ConsumerGroupMetadataValue, ConsumerMemberMetadataValue,
    CurrentMemberAssignmentValue, EpochRun, ModernGroupRecord, RegularExpressionValue,
    ShareMemberAssignmentValue, ShareMemberMetadataValue, ShareStatePartitionMetadataValue,
    ShareTopicPartitions, TargetAssignmentMetadataValue, record_type,
};
use group_share_coordinator::{SharePartitionState, ShareSnapshotValue};
use group_types::{ConsumerMemberState, ProtocolMetadata, StateBatch, TopicId, TopicIdPartitions};

use super::{
    DecodeError, FORMAT_V3, Reader, out_of_range, put_bytes, put_ivarint, put_opt_str, put_str, put_uvarint,
};

/// Writes `record` (after its tag byte): its key, a presence flag, its value.
pub(crate) fn put_consumer(out: &mut Vec<u8>, record: &ModernGroupRecord, format: u8) {
    put_ivarint(out, i64::from(record.record_type()));
    put_str(out, record.group_id());
    put_str(out, record.sub_key());
    out.push(u8::from(!record.is_tombstone()));
    put_consumer_value(out, record, format);
}

/// Writes the value of `record` (nothing for a tombstone) in `format`.
pub(crate) fn put_consumer_value(out: &mut Vec<u8>, record: &ModernGroupRecord, format: u8) {
    let v3 = format >= FORMAT_V3;
    match record {
        ModernGroupRecord::GroupMetadata { value: Some(m), .. }
        | ModernGroupRecord::ShareGroupMetadata { value: Some(m), .. } => {
            put_ivarint(out, i64::from(m.epoch));
            put_uvarint(out, m.metadata_hash);
        }
        ModernGroupRecord::MemberMetadata { value: Some(m), .. } => put_member(out, m),
        ModernGroupRecord::TargetAssignmentMetadata { value: Some(m), .. }
        | ModernGroupRecord::ShareTargetAssignmentMetadata { value: Some(m), .. } => {
            put_ivarint(out, i64::from(m.assignment_epoch));
            if v3 {
                put_ivarint(out, m.assignment_timestamp_ms);
            }
        }
        ModernGroupRecord::TargetAssignmentMember { value: Some(topics), .. }
        | ModernGroupRecord::ShareTargetAssignmentMember { value: Some(topics), .. } => {
            put_topics(out, topics)
        }
        ModernGroupRecord::ShareMemberMetadata { value: Some(m), .. } => {
            put_opt_str(out, m.rack_id.as_deref());
            put_str(out, &m.client_id);
            put_str(out, &m.client_host);
            put_strs(out, &m.subscribed_topic_names);
        }
        ModernGroupRecord::ShareCurrentMemberAssignment { value: Some(a), .. } => {
            put_ivarint(out, i64::from(a.member_epoch));
            put_ivarint(out, i64::from(a.previous_member_epoch));
            out.push(a.state.value() as u8);
            put_topics(out, &a.assigned);
        }
        ModernGroupRecord::ShareStatePartitionMetadata { value: Some(m), .. } => {
            put_share_topics(out, &m.initializing);
            put_share_topics(out, &m.initialized);
            put_uvarint(out, m.deleting.len() as u64);
            for (id, name) in &m.deleting {
                out.extend_from_slice(&id.0);
                put_str(out, name);
            }
        }
        ModernGroupRecord::ShareState { value: Some(state), .. } => put_share_state(out, state),
        ModernGroupRecord::CurrentMemberAssignment { value: Some(a), .. } => {
            put_ivarint(out, i64::from(a.member_epoch));
            put_ivarint(out, i64::from(a.previous_member_epoch));
            out.push(a.state.value() as u8);
            put_topics(out, &a.assigned);
            put_topics(out, &a.pending_revocation);
            if v3 {
                put_epochs(out, &a.assigned_epochs, &a.assigned);
                put_epochs(out, &a.pending_revocation_epochs, &a.pending_revocation);
            }
        }
        ModernGroupRecord::RegularExpression { value: Some(r), .. } => {
            put_strs(out, &r.topics);
            put_ivarint(out, r.version);
            put_ivarint(out, r.timestamp_ms);
        }
        // Tombstones: the flag said it all.
        _ => {}
    }
}

fn put_share_state(out: &mut Vec<u8>, state: &SharePartitionState) {
    let o = &state.offset;
    for v in [o.snapshot_epoch, o.state_epoch, o.leader_epoch] {
        put_ivarint(out, i64::from(v));
    }
    put_ivarint(out, o.start_offset);
    put_ivarint(out, i64::from(o.delivery_complete_count));
    put_ivarint(out, o.create_timestamp);
    put_ivarint(out, o.write_timestamp);
    put_uvarint(out, o.state_batches.len() as u64);
    for b in &o.state_batches {
        put_ivarint(out, b.first_offset);
        put_ivarint(out, b.last_offset);
        out.push(b.delivery_state as u8);
        put_ivarint(out, i64::from(b.delivery_count));
    }
    put_ivarint(out, i64::from(state.max_leader_epoch));
    for v in [state.max_state_epoch, state.updates_since_snapshot] {
        match v {
            Some(v) => {
                out.push(1);
                put_ivarint(out, i64::from(v));
            }
            None => out.push(0),
        }
    }
}

fn take_share_state(r: &mut Reader<'_>) -> Result<SharePartitionState, DecodeError> {
    let (snapshot_epoch, state_epoch, leader_epoch) = (r.i32()?, r.i32()?, r.i32()?);
    let start_offset = r.ivarint()?;
    let delivery_complete_count = r.i32()?;
    let (create_timestamp, write_timestamp) = (r.ivarint()?, r.ivarint()?);
    let n = r.uvarint()?;
    // A batch takes at least four bytes: never trust the count further.
    let mut state_batches =
        Vec::with_capacity(usize::try_from(n).unwrap_or(usize::MAX).min(r.remaining() / 4));
    for _ in 0..n {
        let (first_offset, last_offset) = (r.ivarint()?, r.ivarint()?);
        let delivery_state = r.u8()? as i8;
        let count = r.ivarint()?;
        let delivery_count = i16::try_from(count).map_err(|_| out_of_range("an i16", count))?;
        state_batches.push(StateBatch { first_offset, last_offset, delivery_state, delivery_count });
    }
    let offset = ShareSnapshotValue {
        snapshot_epoch,
        state_epoch,
        leader_epoch,
        start_offset,
        delivery_complete_count,
        create_timestamp,
        write_timestamp,
        state_batches,
    };
    let max_leader_epoch = r.i32()?;
    let max_state_epoch = if r.flag()? { Some(r.i32()?) } else { None };
    let updates_since_snapshot = if r.flag()? { Some(r.i32()?) } else { None };
    Ok(SharePartitionState { offset, max_leader_epoch, max_state_epoch, updates_since_snapshot })
}

fn put_member(out: &mut Vec<u8>, m: &ConsumerMemberMetadataValue) {
    put_opt_str(out, m.instance_id.as_deref());
    put_opt_str(out, m.rack_id.as_deref());
    put_str(out, &m.client_id);
    put_str(out, &m.client_host);
    put_strs(out, &m.subscribed_topic_names);
    put_opt_str(out, m.subscribed_topic_regex.as_deref());
    put_ivarint(out, i64::from(m.rebalance_timeout_ms));
    put_opt_str(out, m.server_assignor.as_deref());
    match &m.classic {
        Some(c) => {
            out.push(1);
            put_ivarint(out, i64::from(c.session_timeout_ms));
            put_uvarint(out, c.supported_protocols.len() as u64);
            for p in &c.supported_protocols {
                put_str(out, &p.name);
                put_bytes(out, &p.metadata);
            }
        }
        None => out.push(0),
    }
}

fn put_strs(out: &mut Vec<u8>, strings: &[String]) {
    put_uvarint(out, strings.len() as u64);
    for s in strings {
        put_str(out, s);
    }
}

fn put_share_topics(out: &mut Vec<u8>, topics: &[ShareTopicPartitions]) {
    put_uvarint(out, topics.len() as u64);
    for t in topics {
        out.extend_from_slice(&t.topic_id.0);
        put_str(out, &t.topic_name);
        put_partitions(out, &t.partitions);
    }
}

fn put_partitions(out: &mut Vec<u8>, partitions: &[i32]) {
    put_uvarint(out, partitions.len() as u64);
    for &p in partitions {
        put_ivarint(out, i64::from(p));
    }
}

fn put_topics(out: &mut Vec<u8>, topics: &[TopicIdPartitions]) {
    put_uvarint(out, topics.len() as u64);
    for t in topics {
        out.extend_from_slice(&t.topic_id.0);
        put_partitions(out, &t.partitions);
    }
}

/// Reads a record (after its tag byte), its group id through `group` (which
/// shares one `Arc` among a batch's records of one group). A failure after
/// the key names the key in its reason.
pub(crate) fn take_consumer(
    r: &mut Reader<'_>,
    group: impl FnOnce(String) -> Arc<str>,
) -> Result<ModernGroupRecord, DecodeError> {
    let t = r.ivarint()?;
    let t = i16::try_from(t).map_err(|_| out_of_range("a consumer record type", t))?;
    let group_id = group(r.string()?);
    let sub = r.string()?;
    let present = r.flag()?;
    take_named_value(r, t, group_id, &sub, present)
}

/// Reads the value of the record keyed by `t`, `group_id` and `sub` (a
/// tombstone unless `present`); a failure names the key.
pub(crate) fn take_named_value(
    r: &mut Reader<'_>,
    t: i16,
    group_id: Arc<str>,
    sub: &str,
    present: bool,
) -> Result<ModernGroupRecord, DecodeError> {
    let named = |e: DecodeError| match e {
        DecodeError::SubKeyOnGroupRecord(_) | DecodeError::UnknownRecordType(_) => e,
        other => DecodeError::InModernRecord {
            record_type: t,
            group_id: group_id.to_string(),
            sub_key: sub.to_owned(),
            source: Box::new(other),
        },
    };
    take_value(r, t, &group_id, sub, present).map_err(named)
}

/// [`take_named_value`] but for the naming: the key's group id is borrowed
/// so that the error can still name it.
fn take_value(
    r: &mut Reader<'_>,
    t: i16,
    group_id: &Arc<str>,
    sub: &str,
    present: bool,
) -> Result<ModernGroupRecord, DecodeError> {
    if record_type::is_group_level(t) && !sub.is_empty() {
        return Err(DecodeError::SubKeyOnGroupRecord(t));
    }
    let group_id = Arc::clone(group_id);
    let sub = || Arc::from(sub);
    Ok(match t {
        record_type::GROUP_METADATA => {
            let value = present.then(|| take_epoch(r)).transpose()?;
            ModernGroupRecord::GroupMetadata { group_id, value }
        }
        record_type::MEMBER_METADATA => {
            let value = present.then(|| take_member(r).map(Box::new)).transpose()?;
            ModernGroupRecord::MemberMetadata { group_id, member_id: sub(), value }
        }
        record_type::TARGET_ASSIGNMENT_METADATA => {
            let value = present.then(|| take_target_metadata(r)).transpose()?;
            ModernGroupRecord::TargetAssignmentMetadata { group_id, value }
        }
        record_type::TARGET_ASSIGNMENT_MEMBER => {
            let value = present.then(|| take_topics(r)).transpose()?;
            ModernGroupRecord::TargetAssignmentMember { group_id, member_id: sub(), value }
        }
        record_type::CURRENT_MEMBER_ASSIGNMENT => {
            let value = present
                .then(|| {
                    let member_epoch = r.i32()?;
                    let previous_member_epoch = r.i32()?;
                    let state = ConsumerMemberState::from_value(r.u8()? as i8);
                    let assigned = take_topics(r)?;
                    let pending_revocation = take_topics(r)?;
                    let (assigned_epochs, pending_revocation_epochs) = if r.format >= FORMAT_V3 {
                        (take_epochs(r, &assigned)?, take_epochs(r, &pending_revocation)?)
                    } else {
                        let defaulted = |topics: &[TopicIdPartitions]| {
                            AssignmentEpochs::same_over(member_epoch.max(0), partition_count(topics))
                        };
                        (defaulted(&assigned), defaulted(&pending_revocation))
                    };
                    Ok::<_, DecodeError>(CurrentMemberAssignmentValue {
                        member_epoch,
                        previous_member_epoch,
                        state,
                        assigned,
                        pending_revocation,
                        assigned_epochs,
                        pending_revocation_epochs,
                    })
                })
                .transpose()?;
            ModernGroupRecord::CurrentMemberAssignment { group_id, member_id: sub(), value }
        }
        record_type::REGULAR_EXPRESSION => {
            let value = present
                .then(|| {
                    Ok::<_, DecodeError>(RegularExpressionValue {
                        topics: take_strs(r)?,
                        version: r.ivarint()?,
                        timestamp_ms: r.ivarint()?,
                    })
                })
                .transpose()?;
            ModernGroupRecord::RegularExpression { group_id, regex: sub(), value }
        }
        record_type::SHARE_MEMBER_METADATA => {
            let value = present
                .then(|| {
                    Ok::<_, DecodeError>(Box::new(ShareMemberMetadataValue {
                        rack_id: r.opt_string()?,
                        client_id: r.string()?,
                        client_host: r.string()?,
                        subscribed_topic_names: take_strs(r)?,
                    }))
                })
                .transpose()?;
            ModernGroupRecord::ShareMemberMetadata { group_id, member_id: sub(), value }
        }
        record_type::SHARE_GROUP_METADATA => {
            let value = present.then(|| take_epoch(r)).transpose()?;
            ModernGroupRecord::ShareGroupMetadata { group_id, value }
        }
        record_type::SHARE_TARGET_ASSIGNMENT_METADATA => {
            let value = present.then(|| take_target_metadata(r)).transpose()?;
            ModernGroupRecord::ShareTargetAssignmentMetadata { group_id, value }
        }
        record_type::SHARE_TARGET_ASSIGNMENT_MEMBER => {
            let value = present.then(|| take_topics(r)).transpose()?;
            ModernGroupRecord::ShareTargetAssignmentMember { group_id, member_id: sub(), value }
        }
        record_type::SHARE_CURRENT_MEMBER_ASSIGNMENT => {
            let value = present
                .then(|| {
                    Ok::<_, DecodeError>(ShareMemberAssignmentValue {
                        member_epoch: r.i32()?,
                        previous_member_epoch: r.i32()?,
                        state: ConsumerMemberState::from_value(r.u8()? as i8),
                        assigned: take_topics(r)?,
                    })
                })
                .transpose()?;
            ModernGroupRecord::ShareCurrentMemberAssignment { group_id, member_id: sub(), value }
        }
        record_type::SHARE_STATE_PARTITION_METADATA => {
            let value = present
                .then(|| {
                    let initializing = take_share_topics(r)?;
                    let initialized = take_share_topics(r)?;
                    let n = r.uvarint()?;
                    // A deleting topic takes at least 17 bytes.
                    let mut deleting =
                        Vec::with_capacity(usize::try_from(n).unwrap_or(usize::MAX).min(r.remaining() / 17));
                    for _ in 0..n {
                        let id: [u8; 16] = r.array()?;
                        deleting.push((TopicId(id), r.string()?));
                    }
                    Ok::<_, DecodeError>(Box::new(ShareStatePartitionMetadataValue {
                        initializing,
                        initialized,
                        deleting,
                    }))
                })
                .transpose()?;
            ModernGroupRecord::ShareStatePartitionMetadata { group_id, value }
        }
        record_type::SHARE_STATE => {
            let value = present.then(|| take_share_state(r).map(Box::new)).transpose()?;
            ModernGroupRecord::ShareState { group_id, share_partition: sub(), value }
        }
        other => return Err(DecodeError::UnknownRecordType(other)),
    })
}

fn take_epoch(r: &mut Reader<'_>) -> Result<ConsumerGroupMetadataValue, DecodeError> {
    Ok(ConsumerGroupMetadataValue { epoch: r.i32()?, metadata_hash: r.uvarint()? })
}

fn take_partitions(r: &mut Reader<'_>) -> Result<Vec<i32>, DecodeError> {
    let count = r.uvarint()?;
    // A partition takes at least one byte: never trust the count further.
    let mut partitions = Vec::with_capacity(usize::try_from(count).unwrap_or(usize::MAX).min(r.remaining()));
    for _ in 0..count {
        partitions.push(r.i32()?);
    }
    Ok(partitions)
}

fn take_share_topics(r: &mut Reader<'_>) -> Result<Vec<ShareTopicPartitions>, DecodeError> {
    let n = r.uvarint()?;
    // A topic takes at least 18 bytes: its id, an empty name, no partitions.
    let mut topics = Vec::with_capacity(usize::try_from(n).unwrap_or(usize::MAX).min(r.remaining() / 18));
    for _ in 0..n {
        let id: [u8; 16] = r.array()?;
        let topic_name = r.string()?;
        topics.push(ShareTopicPartitions {
            topic_id: TopicId(id),
            topic_name,
            partitions: take_partitions(r)?,
        });
    }
    Ok(topics)
}

fn take_member(r: &mut Reader<'_>) -> Result<ConsumerMemberMetadataValue, DecodeError> {
    Ok(ConsumerMemberMetadataValue {
        instance_id: r.opt_string()?,
        rack_id: r.opt_string()?,
        client_id: r.string()?,
        client_host: r.string()?,
        subscribed_topic_names: take_strs(r)?,
        subscribed_topic_regex: r.opt_string()?,
        rebalance_timeout_ms: r.i32()?,
        server_assignor: r.opt_string()?,
        classic: if r.flag()? {
            let session_timeout_ms = r.i32()?;
            let n = r.uvarint()?;
            // Every protocol takes at least two bytes: never trust the count further.
            let mut supported_protocols =
                Vec::with_capacity(usize::try_from(n).unwrap_or(usize::MAX).min(r.remaining() / 2));
            for _ in 0..n {
                supported_protocols.push(ProtocolMetadata {
                    name: r.string()?.into(),
                    metadata: r.bytes()?.to_vec().into(),
                });
            }
            Some(ClassicMemberMetadata { session_timeout_ms, supported_protocols })
        } else {
            None
        },
    })
}

fn take_strs(r: &mut Reader<'_>) -> Result<Vec<String>, DecodeError> {
    let n = r.uvarint()?;
    let mut out = Vec::with_capacity(usize::try_from(n).unwrap_or(usize::MAX).min(r.remaining()));
    for _ in 0..n {
        out.push(r.string()?);
    }
    Ok(out)
}

/// A target-assignment metadata value: its epoch, and in format 3 its timestamp.
fn take_target_metadata(r: &mut Reader<'_>) -> Result<TargetAssignmentMetadataValue, DecodeError> {
    let assignment_epoch = r.i32()?;
    let assignment_timestamp_ms = if r.format >= FORMAT_V3 { r.ivarint()? } else { 0 };
    Ok(TargetAssignmentMetadataValue { assignment_epoch, assignment_timestamp_ms })
}

fn partition_count(topics: &[TopicIdPartitions]) -> usize {
    topics.iter().map(|t| t.partitions.len()).sum()
}

/// The epochs of `topics`' partitions as runs.
fn put_epochs(out: &mut Vec<u8>, epochs: &AssignmentEpochs, topics: &[TopicIdPartitions]) {
    let runs = epochs.runs(partition_count(topics));
    put_uvarint(out, runs.len() as u64);
    for run in runs {
        put_uvarint(out, u64::from(run.len));
        put_ivarint(out, i64::from(run.epoch));
    }
}

/// Epoch runs that must cover exactly `topics`' partitions.
fn take_epochs(r: &mut Reader<'_>, topics: &[TopicIdPartitions]) -> Result<AssignmentEpochs, DecodeError> {
    let n = r.uvarint()?;
    // A run takes at least two bytes: never trust the count further.
    let mut runs = Vec::with_capacity(usize::try_from(n).unwrap_or(usize::MAX).min(r.remaining() / 2));
    let mut covered: u64 = 0;
    for _ in 0..n {
        let len = r.uvarint()?;
        covered = covered.saturating_add(len);
        let len = u32::try_from(len).map_err(|_| out_of_range("an epoch run's length", len))?;
        runs.push(EpochRun { len, epoch: r.i32()? });
    }
    let partitions = partition_count(topics);
    if covered != partitions as u64 {
        return Err(DecodeError::EpochsMismatch { partitions, epochs: covered });
    }
    Ok(AssignmentEpochs::from_runs(runs))
}

fn take_topics(r: &mut Reader<'_>) -> Result<Vec<TopicIdPartitions>, DecodeError> {
    let n = r.uvarint()?;
    // A topic takes at least 17 bytes, a partition at least one.
    let mut topics = Vec::with_capacity(usize::try_from(n).unwrap_or(usize::MAX).min(r.remaining() / 17));
    for _ in 0..n {
        let id: [u8; 16] = r.array()?;
        topics.push(TopicIdPartitions { topic_id: TopicId(id), partitions: take_partitions(r)? });
    }
    Ok(topics)
}

#[cfg(test)]
#[path = "consumer_tests.rs"]
mod tests;
