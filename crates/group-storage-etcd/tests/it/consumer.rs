//! KIP-848 consumer-group records in etcd: appended with tombstones, folded
//! into a snapshot that keeps the live record of every key (and no
//! tombstone), loaded back, by a fresh store too, as the memory store loads
//! them; values holding them are written in format 3, the rest in format 1.

use std::sync::Arc;

use group_offsets::{
    AssignmentEpochs, ConsumerGroupMetadataValue, CoordinatorPartition, CurrentMemberAssignmentValue,
    MemoryMetadataStore, MetadataStore, ModernGroupRecord, OwnerEpoch, Record, RegularExpressionValue,
    TargetAssignmentMetadataValue,
};
use group_storage_etcd::EtcdConfig;
use group_types::{ConsumerMemberState, TopicId, TopicIdPartitions};

use crate::common::{Raw, config, connect, etcd, normalise, offset};

const P: CoordinatorPartition = CoordinatorPartition(2);

fn id(s: &str) -> Arc<str> {
    Arc::from(s)
}

/// The records of a member joining `group` at `epoch`: metadata, the group
/// and target epochs, its target and its current assignment.
fn join(group: &str, member: &str, epoch: i32) -> Vec<Record> {
    let topics = vec![TopicIdPartitions::new(TopicId::from_u128(epoch as u128), [0, 1])];
    [
        ModernGroupRecord::MemberMetadata {
            group_id: id(group),
            member_id: id(member),
            value: Some(Box::default()),
        },
        ModernGroupRecord::GroupMetadata {
            group_id: id(group),
            value: Some(ConsumerGroupMetadataValue { epoch, metadata_hash: 7 }),
        },
        ModernGroupRecord::TargetAssignmentMember {
            group_id: id(group),
            member_id: id(member),
            value: Some(topics.clone()),
        },
        ModernGroupRecord::TargetAssignmentMetadata {
            group_id: id(group),
            value: Some(TargetAssignmentMetadataValue::new(epoch, 1_000 + i64::from(epoch))),
        },
        ModernGroupRecord::CurrentMemberAssignment {
            group_id: id(group),
            member_id: id(member),
            value: Some(CurrentMemberAssignmentValue {
                member_epoch: epoch,
                previous_member_epoch: epoch - 1,
                state: ConsumerMemberState::Stable,
                assigned: topics,
                pending_revocation: Vec::new(),
                // Partition 0 assigned an epoch before partition 1 (KIP-1251).
                assigned_epochs: AssignmentEpochs::from_epochs([epoch - 1, epoch]),
                pending_revocation_epochs: AssignmentEpochs::default(),
            }),
        },
        ModernGroupRecord::RegularExpression {
            group_id: id(group),
            regex: id(member),
            value: Some(RegularExpressionValue { topics: vec!["t".into()], version: 1, timestamp_ms: 2 }),
        },
    ]
    .into_iter()
    .map(Record::Modern)
    .collect()
}

/// The tombstones of a member leaving: assignment, target, metadata, regex.
fn leave(group: &str, member: &str) -> Vec<Record> {
    [
        ModernGroupRecord::CurrentMemberAssignment {
            group_id: id(group),
            member_id: id(member),
            value: None,
        },
        ModernGroupRecord::TargetAssignmentMember { group_id: id(group), member_id: id(member), value: None },
        ModernGroupRecord::MemberMetadata { group_id: id(group), member_id: id(member), value: None },
        ModernGroupRecord::RegularExpression { group_id: id(group), regex: id(member), value: None },
    ]
    .into_iter()
    .map(Record::Modern)
    .collect()
}

/// The tombstones of the group-level records.
fn delete(group: &str) -> Vec<Record> {
    vec![
        Record::Modern(ModernGroupRecord::TargetAssignmentMetadata { group_id: id(group), value: None }),
        Record::Modern(ModernGroupRecord::GroupMetadata { group_id: id(group), value: None }),
    ]
}

#[test]
fn modern_records_survive_a_snapshot_and_load_back() {
    let cluster = etcd();
    let no_snapshots = EtcdConfig { compact_after_entries: u64::MAX, ..config(&cluster, "consumer") };
    let base = format!("{}/p/{:05}/", no_snapshots.prefix, P.0);
    let raw = Raw::connect(&cluster);
    let store = connect(no_snapshots.clone());
    let model = MemoryMetadataStore::with_partitions(1);
    let model_p = CoordinatorPartition(0);
    let append = |records: Vec<Record>| {
        store.append_blocking(P, OwnerEpoch(1), records.clone()).expect("append");
        model.append_blocking(model_p, OwnerEpoch(1), records).unwrap();
    };
    let expected = || normalise(model.load(model_p).unwrap());

    append(vec![offset("g", "t", 0, 1, "")]);
    append(join("g", "m1", 1));
    append(join("g", "m2", 2));
    // Later records of the same keys replace earlier ones.
    append(join("g", "m1", 3));
    append(leave("g", "m2"));
    // Names that prefix each other, NUL bytes, and a group deleted entirely.
    append([join("g\0", "m", 4), join("gm", "1", 5), join("gone", "m", 6)].concat());
    append([leave("gone", "m"), delete("gone")].concat());
    // Tombstones of keys never written change nothing.
    append(leave("never", "m"));
    let before = normalise(store.load(P).unwrap());
    assert_eq!(before, expected());
    assert_eq!(before.groups.consumer.len(), 3 * 6, "six keys each for g (member m1), g\\0 and gm");
    assert_eq!(before.groups.offsets.len(), 1, "consumer records leave offsets alone");

    let formats: Vec<u8> = raw.values(&format!("{base}log/")).iter().map(|v| v[0]).collect();
    assert_eq!(formats, [1, 3, 3, 3, 3, 3, 3, 3], "format 3 exactly for entries with consumer records");

    // Another store of the partition snapshots after its first append.
    let eager = connect(EtcdConfig { compact_after_entries: 1, ..no_snapshots.clone() });
    eager.append_blocking(P, OwnerEpoch(1), vec![]).expect("append");
    assert_eq!(
        normalise(eager.load(P).unwrap()),
        before,
        "a load after the snapshot equals the load before it"
    );
    assert_eq!(raw.count(&format!("{base}log/")), 0, "the covered log is deleted");
    assert_eq!(
        raw.get(&format!("{base}snapshot")).map(|v| v[0]),
        Some(3),
        "the snapshot holds consumer records"
    );
    assert_eq!(normalise(connect(no_snapshots.clone()).load(P).unwrap()), before, "a fresh store loads it");

    // After the snapshot: more changes on top of it, then another snapshot
    // of a partition whose consumer records are all gone.
    let after = |records: Vec<Record>| {
        eager.append_blocking(P, OwnerEpoch(1), records.clone()).expect("append");
        model.append_blocking(model_p, OwnerEpoch(1), records).unwrap();
    };
    after(join("g", "m3", 7));
    assert_eq!(normalise(connect(no_snapshots.clone()).load(P).unwrap()), expected(), "snapshot plus log");
    let mut removal = [leave("g", "m1"), leave("g", "m3"), delete("g")].concat();
    removal.extend([leave("g\0", "m"), delete("g\0"), leave("gm", "1"), delete("gm")].concat());
    after(removal);
    // Its load queues behind the snapshot that append triggered.
    assert_eq!(normalise(eager.load(P).unwrap()), expected());
    let emptied = normalise(connect(no_snapshots).load(P).unwrap());
    assert_eq!(emptied, expected());
    assert!(emptied.groups.consumer.is_empty(), "{:?}", emptied.groups.consumer);
    assert_eq!(emptied.groups.offsets.len(), 1);
    assert_eq!(
        raw.get(&format!("{base}snapshot")).map(|v| v[0]),
        Some(1),
        "a snapshot without consumer records is format 1 again"
    );
}
