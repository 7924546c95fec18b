//! The consumer-record bugs of the broken engines in `conformance.rs`: how a
//! record is re-keyed or turned into its tombstone, and the concatenated keys
//! of an engine that joins group and sub-key without a length or separator.

use std::collections::HashMap;
use std::sync::Arc;

use group_offsets::{ModernGroupRecord, StoredGroups};

/// `record` with another group and sub-key (the sub-key is ignored by the
/// group-level kinds, which have none).
pub(crate) fn rekey(record: ModernGroupRecord, group_id: Arc<str>, sub: Arc<str>) -> ModernGroupRecord {
    use ModernGroupRecord as C;
    match record {
        C::GroupMetadata { value, .. } => C::GroupMetadata { group_id, value },
        C::MemberMetadata { value, .. } => C::MemberMetadata { group_id, member_id: sub, value },
        C::TargetAssignmentMetadata { value, .. } => C::TargetAssignmentMetadata { group_id, value },
        C::TargetAssignmentMember { value, .. } => {
            C::TargetAssignmentMember { group_id, member_id: sub, value }
        }
        C::CurrentMemberAssignment { value, .. } => {
            C::CurrentMemberAssignment { group_id, member_id: sub, value }
        }
        C::RegularExpression { value, .. } => C::RegularExpression { group_id, regex: sub, value },
        C::ShareMemberMetadata { value, .. } => C::ShareMemberMetadata { group_id, member_id: sub, value },
        C::ShareGroupMetadata { value, .. } => C::ShareGroupMetadata { group_id, value },
        C::ShareTargetAssignmentMetadata { value, .. } => {
            C::ShareTargetAssignmentMetadata { group_id, value }
        }
        C::ShareTargetAssignmentMember { value, .. } => {
            C::ShareTargetAssignmentMember { group_id, member_id: sub, value }
        }
        C::ShareCurrentMemberAssignment { value, .. } => {
            C::ShareCurrentMemberAssignment { group_id, member_id: sub, value }
        }
        C::ShareStatePartitionMetadata { value, .. } => C::ShareStatePartitionMetadata { group_id, value },
        C::ShareState { value, .. } => C::ShareState { group_id, share_partition: sub, value },
    }
}

/// The tombstone of `record`'s key.
pub(crate) fn tombstone_of(record: &ModernGroupRecord) -> ModernGroupRecord {
    use ModernGroupRecord as C;
    let (group_id, sub) = (Arc::clone(record.group_id()), Arc::from(record.sub_key()));
    match record {
        C::GroupMetadata { .. } => C::GroupMetadata { group_id, value: None },
        C::MemberMetadata { .. } => C::MemberMetadata { group_id, member_id: sub, value: None },
        C::TargetAssignmentMetadata { .. } => C::TargetAssignmentMetadata { group_id, value: None },
        C::TargetAssignmentMember { .. } => {
            C::TargetAssignmentMember { group_id, member_id: sub, value: None }
        }
        C::CurrentMemberAssignment { .. } => {
            C::CurrentMemberAssignment { group_id, member_id: sub, value: None }
        }
        C::RegularExpression { .. } => C::RegularExpression { group_id, regex: sub, value: None },
        C::ShareMemberMetadata { .. } => C::ShareMemberMetadata { group_id, member_id: sub, value: None },
        C::ShareGroupMetadata { .. } => C::ShareGroupMetadata { group_id, value: None },
        C::ShareTargetAssignmentMetadata { .. } => C::ShareTargetAssignmentMetadata { group_id, value: None },
        C::ShareTargetAssignmentMember { .. } => {
            C::ShareTargetAssignmentMember { group_id, member_id: sub, value: None }
        }
        C::ShareCurrentMemberAssignment { .. } => {
            C::ShareCurrentMemberAssignment { group_id, member_id: sub, value: None }
        }
        C::ShareStatePartitionMetadata { .. } => C::ShareStatePartitionMetadata { group_id, value: None },
        C::ShareState { .. } => C::ShareState { group_id, share_partition: sub, value: None },
    }
}

/// Who last wrote each concatenated key: (record type, group ++ sub-key) to
/// the real group and sub-key.
#[derive(Debug, Default)]
pub(crate) struct Concatenated(HashMap<(i16, String), (Arc<str>, Arc<str>)>);

impl Concatenated {
    /// `record` stored under group `group ++ sub-key` and sub-key `""`, as an
    /// engine keying by `type ++ group ++ sub-key` would (so group "a" member
    /// "bm" and group "ab" member "m" share a key).
    pub(crate) fn join(&mut self, record: ModernGroupRecord) -> ModernGroupRecord {
        if !has_sub_key(&record) {
            return record;
        }
        let joined = format!("{}{}", record.group_id(), record.sub_key());
        let owner = (Arc::clone(record.group_id()), Arc::from(record.sub_key()));
        self.0.insert((record.record_type(), joined.clone()), owner);
        rekey(record, Arc::from(joined), Arc::from(""))
    }

    /// The loaded records with their real keys back (the last writer's).
    pub(crate) fn split(&self, stored: &mut StoredGroups) {
        for record in &mut stored.consumer {
            let key = (record.record_type(), record.group_id().to_string());
            if let Some((group, sub)) = self.0.get(&key) {
                *record = rekey(record.clone(), Arc::clone(group), Arc::clone(sub));
            }
        }
    }
}

/// False for the group-level kinds, keyed by the group alone.
fn has_sub_key(record: &ModernGroupRecord) -> bool {
    !matches!(
        record,
        ModernGroupRecord::GroupMetadata { .. } | ModernGroupRecord::TargetAssignmentMetadata { .. }
    )
}
