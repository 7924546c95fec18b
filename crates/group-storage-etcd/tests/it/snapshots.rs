//! Oversized batches (staged in chunks, committed by a manifest: atomic) and
//! snapshots (a load after compaction equals the load before it, garbage of
//! an interrupted snapshot or staging is ignored and later deleted), checked
//! against the memory store as the model, including random record sequences
//! (consumer-group records among them).

use std::sync::Arc;
use std::time::{Duration, Instant};

use group_offsets::{
    ConsumerGroupMetadataValue, CoordinatorPartition, GroupMetadataRecord, MemberMetadataRecord,
    MemoryMetadataStore, MetadataStore, ModernGroupRecord, OwnerEpoch, Record, RegularExpressionValue,
    StorageError,
};
use group_storage_etcd::EtcdConfig;
use group_types::{TopicId, TopicIdPartitions, TopicPartition};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

use crate::common::{Raw, config, connect, etcd, normalise, offset};

const P: CoordinatorPartition = CoordinatorPartition(0);

/// Offsets enough to make several MiB: `count` partitions with 64 bytes of metadata each.
fn many_offsets(group: &str, count: usize, value: i64) -> Vec<Record> {
    (0..count)
        .map(|i| offset(group, &format!("topic-{}", i % 97), i as i32, value, &"m".repeat(64)))
        .collect()
}

fn base(config: &EtcdConfig) -> String {
    format!("{}/p/{:05}/", config.prefix, P.0)
}

#[test]
fn an_oversized_batch_is_atomic_and_loads_back() {
    let cluster = etcd();
    let config = config(&cluster, "oversized");
    let raw = Raw::connect(&cluster);
    let store = connect(config.clone());
    let model = MemoryMetadataStore::with_partitions(1);

    let batch = many_offsets("g", 60_000, 7);
    let encoded: usize = 60_000 * 80;
    assert!(encoded > 3 * config.max_request_bytes, "the batch must need several chunks");
    store.append_blocking(P, OwnerEpoch(2), batch.clone()).expect("the oversized append");
    model.append_blocking(P, OwnerEpoch(2), batch).unwrap();
    assert!(raw.count(&format!("{}stage/", base(&config))) >= 3, "the batch was staged in chunks");
    assert_eq!(normalise(store.load(P).unwrap()), normalise(model.load(P).unwrap()));

    // A fenced oversized batch stages its chunks, but nothing of it is visible.
    let fenced = store.append_blocking(P, OwnerEpoch(1), many_offsets("g", 60_000, 8));
    assert!(matches!(fenced, Err(StorageError::Fenced { .. })), "{fenced:?}");
    assert_eq!(normalise(store.load(P).unwrap()), normalise(model.load(P).unwrap()));
    let reopened = connect(config);
    assert_eq!(normalise(reopened.load(P).unwrap()), normalise(model.load(P).unwrap()), "from a fresh store");
}

#[test]
fn a_snapshot_keeps_the_state_and_deletes_what_it_covers() {
    let cluster = etcd();
    let no_snapshots = EtcdConfig { compact_after_entries: u64::MAX, ..config(&cluster, "snapshot") };
    let raw = Raw::connect(&cluster);
    let base = base(&no_snapshots);
    let store = connect(no_snapshots.clone());
    let model = MemoryMetadataStore::with_partitions(1);
    let append = |epoch, records: Vec<Record>| {
        store.append_blocking(P, OwnerEpoch(epoch), records.clone()).expect("append");
        model.append_blocking(P, OwnerEpoch(epoch), records).unwrap();
    };
    append(1, many_offsets("a", 30_000, 1));
    append(1, many_offsets("a", 20_000, 2));
    append(2, vec![offset("b", "t", 0, 5, ""), offset("b", "t", 1, 6, "")]);
    append(
        2,
        vec![Record::OffsetTombstone { group_id: Arc::from("b"), partition: TopicPartition::new("t", 0) }],
    );
    append(2, vec![]);
    let before = normalise(store.load(P).unwrap());
    assert_eq!(before, normalise(model.load(P).unwrap()));
    assert_eq!(raw.count(&format!("{base}log/")), 5);

    // Garbage a crash would leave: chunks of a snapshot never switched to,
    // staged chunks of a batch never committed.
    raw.put(&format!("{base}snap/00000000000000000003/00000000000000ff/000000"), b"junk");
    raw.put(&format!("{base}stage/00000000000000000004/00000000000000ff/000000"), b"junk");
    assert_eq!(normalise(store.load(P).unwrap()), before, "garbage is invisible");

    // Another store of the same partition snapshots after its first append.
    let eager = connect(EtcdConfig { compact_after_entries: 1, ..no_snapshots.clone() });
    eager.append_blocking(P, OwnerEpoch(2), vec![]).expect("append");
    // Its load queues behind the snapshot, so it sees the switch.
    let after = normalise(eager.load(P).unwrap());
    assert_eq!(after, before, "a load after the snapshot equals the load before it");
    assert_eq!(raw.count(&format!("{base}snapshot")), 1, "the snapshot was switched to");
    assert_eq!(raw.count(&format!("{base}log/")), 0, "the covered log is deleted");
    assert_eq!(raw.count(&format!("{base}stage/")), 0, "staged chunks and garbage are deleted");
    assert!(raw.count(&format!("{base}snap/")) >= 2, "the snapshot is chunked (several MiB)");
    assert_eq!(
        raw.count(&format!("{base}snap/00000000000000000003/")),
        0,
        "the stale snapshot chunk is deleted"
    );

    // The first store's view is stale now (its snapshot revision changed):
    // its next append notices, reads again, and lands after the snapshot.
    store
        .append_blocking(P, OwnerEpoch(2), vec![offset("b", "t", 2, 9, "")])
        .expect("append after the switch");
    model.append_blocking(P, OwnerEpoch(2), vec![offset("b", "t", 2, 9, "")]).unwrap();
    assert_eq!(normalise(connect(no_snapshots).load(P).unwrap()), normalise(model.load(P).unwrap()));
}

/// Snapshots are taken beside the appends: appends sent without waiting, a
/// snapshot due after every few, and nothing is lost or reordered; the log
/// keeps only what the last snapshot does not cover.
#[test]
fn snapshots_taken_beside_a_stream_of_appends_lose_nothing() {
    let cluster = etcd();
    let eager = EtcdConfig { compact_after_entries: 5, ..config(&cluster, "beside") };
    let raw = Raw::connect(&cluster);
    let base = base(&eager);
    let store = connect(eager.clone());
    let model = MemoryMetadataStore::with_partitions(1);
    let mut waits = Vec::new();
    for n in 0..300i64 {
        let records =
            vec![offset("g", "t", (n % 7) as i32, n, ""), offset(&format!("g{}", n % 11), "u", 0, n, "")];
        let (completion, rx) = group_offsets::AppendCompletion::channel();
        store.append(P, OwnerEpoch(1), records.clone(), completion);
        model.append_blocking(P, OwnerEpoch(1), records).unwrap();
        waits.push(rx);
    }
    for rx in waits {
        rx.recv().expect("completed").expect("appended");
    }
    // A load waits for the snapshot in progress, if any.
    let loaded = normalise(store.load(P).unwrap());
    assert_eq!(loaded, normalise(model.load(P).unwrap()));
    assert_eq!(raw.count(&format!("{base}snapshot")), 1, "snapshots were taken");
    let left = raw.count(&format!("{base}log/"));
    assert!(left < 300, "the snapshots deleted what they cover: {left} log entries left");
    // The store wrote every entry itself: its snapshots fold them from memory.
    let snapshots = store.snapshots();
    assert!(snapshots.taken > 0 && snapshots.folded_from_memory == snapshots.taken, "{snapshots:?}");
    // A fresh store reads the same from the snapshot and what follows it.
    assert_eq!(normalise(connect(eager).load(P).unwrap()), loaded);
}

/// Entries another writer appended between a store's own are not in the store's
/// memory: its next snapshot must not fold its own entries alone. Two stores of
/// one partition and epoch take turns (each turn makes the other's view stale),
/// snapshotting every 4 entries; a fresh store loads what the memory store holds.
#[test]
fn a_snapshot_after_another_writers_entries_keeps_them() {
    let cluster = etcd();
    let eager = EtcdConfig { compact_after_entries: 4, ..config(&cluster, "turns") };
    let (first, second) = (connect(eager.clone()), connect(eager.clone()));
    let model = MemoryMetadataStore::with_partitions(1);
    let mut n = 0;
    for turn in 0..12 {
        let store = if turn % 2 == 0 { &first } else { &second };
        for _ in 0..3 {
            n += 1;
            let records = vec![offset(&format!("g{}", n % 5), "t", (n % 3) as i32, n, "")];
            store.append_blocking(P, OwnerEpoch(1), records.clone()).expect("append");
            model.append_blocking(P, OwnerEpoch(1), records).unwrap();
        }
    }
    let want = normalise(model.load(P).unwrap());
    assert_eq!(normalise(first.load(P).unwrap()), want);
    assert_eq!(normalise(second.load(P).unwrap()), want);
    assert_eq!(normalise(connect(eager).load(P).unwrap()), want, "from a fresh store");
    let taken = first.snapshots().taken + second.snapshots().taken;
    assert!(taken > 0, "snapshots were taken");
}

#[test]
fn etcd_history_is_compacted_periodically() {
    let cluster = etcd();
    let config =
        EtcdConfig { mvcc_compaction_interval: Some(Duration::from_millis(200)), ..config(&cluster, "mvcc") };
    let store = connect(config);
    store.append_blocking(P, OwnerEpoch(1), vec![offset("g", "t", 0, 1, "")]).unwrap();
    let raw = Raw::connect(&cluster);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut client = raw.client.clone();
        let old =
            raw.runtime.block_on(client.get("x", Some(etcd_client::GetOptions::new().with_revision(1))));
        match old {
            Err(e) if e.to_string().contains("compacted") => break,
            _ if Instant::now() > deadline => panic!("revision 1 is still readable: {old:?}"),
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// One step of a random history.
#[derive(Debug, Clone)]
enum Op {
    Offset {
        group: u8,
        topic: u8,
        partition: i32,
        value: i64,
        metadata_len: usize,
    },
    OffsetTombstone {
        group: u8,
        topic: u8,
        partition: i32,
    },
    Group {
        group: u8,
        generation: i32,
    },
    GroupTombstone {
        group: u8,
    },
    /// A consumer-group record of kind `kind % 3` (group epoch, a member's
    /// target, a regex), its value `Some(n)` or a tombstone.
    Consumer {
        group: u8,
        kind: u8,
        member: u8,
        n: Option<i32>,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3u8, 0..2u8, 0..4i32, any::<i64>(), prop_oneof![3 => 0..8usize, 1 => 500..2_000usize])
            .prop_map(|(group, topic, partition, value, metadata_len)| Op::Offset { group, topic, partition, value, metadata_len }),
        1 => (0..3u8, 0..2u8, 0..4i32).prop_map(|(group, topic, partition)| Op::OffsetTombstone { group, topic, partition }),
        1 => (0..3u8, any::<i32>()).prop_map(|(group, generation)| Op::Group { group, generation }),
        1 => (0..3u8).prop_map(|group| Op::GroupTombstone { group }),
        2 => (0..3u8, 0..3u8, 0..2u8, proptest::option::of(any::<i32>()))
            .prop_map(|(group, kind, member, n)| Op::Consumer { group, kind, member, n }),
    ]
}

fn record(op: &Op) -> Record {
    let group = |g: u8| format!("group-{g}");
    match *op {
        Op::Offset { group: g, topic, partition, value, metadata_len } => {
            offset(&group(g), &format!("t{topic}"), partition, value, &"x".repeat(metadata_len))
        }
        Op::OffsetTombstone { group: g, topic, partition } => Record::OffsetTombstone {
            group_id: Arc::from(group(g)),
            partition: TopicPartition::new(format!("t{topic}"), partition),
        },
        Op::Group { group: g, generation } => Record::Group(Box::new(GroupMetadataRecord {
            group_id: group(g).into(),
            protocol_type: Some("consumer".into()),
            generation_id: generation,
            protocol_name: Some("range".into()),
            leader_id: Some("m".into()),
            state_timestamp_ms: Some(1),
            members: vec![MemberMetadataRecord {
                member_id: "m".into(),
                subscription: vec![1, 2].into(),
                ..Default::default()
            }],
        })),
        Op::GroupTombstone { group: g } => Record::GroupTombstone { group_id: Arc::from(group(g)) },
        Op::Consumer { group: g, kind, member, n } => {
            let (group_id, member_id): (Arc<str>, Arc<str>) =
                (Arc::from(group(g)), Arc::from(format!("m{member}")));
            Record::Modern(match kind % 3 {
                0 => ModernGroupRecord::GroupMetadata {
                    group_id,
                    value: n.map(|epoch| ConsumerGroupMetadataValue { epoch, metadata_hash: 1 }),
                },
                1 => ModernGroupRecord::TargetAssignmentMember {
                    group_id,
                    member_id,
                    value: n.map(|n| vec![TopicIdPartitions::new(TopicId::from_u128(n as u128), [n])]),
                },
                _ => ModernGroupRecord::RegularExpression {
                    group_id,
                    regex: member_id,
                    value: n.map(|n| RegularExpressionValue {
                        topics: vec!["t".into()],
                        version: n.into(),
                        timestamp_ms: 0,
                    }),
                },
            })
        }
    }
}

/// Random histories, with a snapshot every 3 entries and requests of at most
/// 4 KiB (so batches with long metadata are staged and snapshots chunked),
/// load exactly as the memory store's after every few appends and from a
/// fresh store at the end. (A `TestRunner` rather than `proptest!`, so the
/// one etcd of every case is owned, and killed, by the test.)
#[test]
fn random_histories_load_as_the_memory_store() {
    let cluster = etcd();
    let mut runner = TestRunner::new(ProptestConfig { cases: 12, ..ProptestConfig::default() });
    let histories = proptest::collection::vec(proptest::collection::vec(op(), 0..6), 1..14);
    let result = runner.run(&histories, |appends| {
        let config =
            EtcdConfig { compact_after_entries: 3, max_request_bytes: 4096, ..config(&cluster, "prop") };
        let store = connect(config.clone());
        let model = MemoryMetadataStore::with_partitions(1);
        for (i, ops) in appends.iter().enumerate() {
            let records: Vec<Record> = ops.iter().map(record).collect();
            prop_assert_eq!(store.append_blocking(P, OwnerEpoch(1), records.clone()), Ok(()));
            model.append_blocking(P, OwnerEpoch(1), records).unwrap();
            if i % 4 == 3 {
                prop_assert_eq!(
                    normalise(store.load(P).unwrap()),
                    normalise(model.load(P).unwrap()),
                    "after append {}",
                    i
                );
            }
        }
        prop_assert_eq!(normalise(store.load(P).unwrap()), normalise(model.load(P).unwrap()));
        drop(store);
        prop_assert_eq!(
            normalise(connect(config).load(P).unwrap()),
            normalise(model.load(P).unwrap()),
            "reopened"
        );
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
