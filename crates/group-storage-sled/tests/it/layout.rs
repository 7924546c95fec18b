//! The on-disk layout: v2 keys and values as documented (built here
//! independently of the crate, values in the shared record codec, and
//! legacy values beside them), the partition count a store keeps, and the
//! migration of a layout v1 database, written by a minimal v1 writer below,
//! including migrations a crash interrupted.

use std::path::Path;

use group_offsets::{CoordinatorPartition, MetadataStore, StorageError};
use group_storage_sled::{INTENTS_TREE, PARTITIONS_TREE, SledMetadataStore, SledOptions};
use group_types::OffsetAndMetadata;
use rstest::rstest;

use crate::common::{ScratchDir, commit, epoch, open_raw, partition};

const LAYOUT_KEY: &[u8] = b"group-storage-sled/layout";

/// bincode 2's varint of an unsigned number, as the crate docs specify it.
fn varint(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => out.push(v as u8),
        251..=0xffff => {
            out.push(251);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(252);
            out.extend_from_slice(&(v as u32).to_le_bytes());
        }
        _ => {
            out.push(253);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

fn zigzag(out: &mut Vec<u8>, v: i64) {
    varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn string(out: &mut Vec<u8>, s: &str) {
    varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A format-v1 offset value, by hand from the documented field order.
fn v1_offset_value(o: &OffsetAndMetadata) -> Vec<u8> {
    let mut out = vec![1];
    zigzag(&mut out, o.offset);
    match o.leader_epoch {
        Some(e) => {
            out.push(1);
            zigzag(&mut out, e.into());
        }
        None => out.push(0),
    }
    string(&mut out, &o.metadata);
    zigzag(&mut out, o.commit_time);
    match o.expire_time {
        Some(t) => {
            out.push(1);
            zigzag(&mut out, t);
        }
        None => out.push(0),
    }
    out
}

/// A format-v1 group value with no protocol, leader or members.
fn v1_group_value(group_id: &str, generation: i32) -> Vec<u8> {
    let mut out = vec![1];
    string(&mut out, group_id);
    out.push(0); // protocol_type
    zigzag(&mut out, generation.into());
    out.extend_from_slice(&[0, 0, 0, 0]); // protocol_name, leader_id, state_timestamp_ms, no members
    out
}

fn v1_offset_key(group: &str, topic: &str, partition: i32) -> Vec<u8> {
    let mut key = Vec::new();
    key.extend_from_slice(&(group.len() as u16).to_be_bytes());
    key.extend_from_slice(group.as_bytes());
    key.extend_from_slice(&(topic.len() as u16).to_be_bytes());
    key.extend_from_slice(topic.as_bytes());
    key.extend_from_slice(&((partition as u32) ^ 0x8000_0000).to_be_bytes());
    key
}

/// The documented v2 offset key.
fn v2_offset_key(p: u32, group: &str, topic: &str, partition: i32) -> Vec<u8> {
    let mut key = p.to_be_bytes().to_vec();
    key.push(2);
    key.extend_from_slice(&v1_offset_key(group, topic, partition));
    key
}

fn value(n: i64) -> OffsetAndMetadata {
    OffsetAndMetadata {
        offset: n,
        leader_epoch: Some(2),
        metadata: format!("m{n}").into(),
        commit_time: 1_700_000_000_000 + n,
        expire_time: None,
    }
}

/// The offsets a v1 store holds in [`write_v1`].
const V1_OFFSETS: [(&str, &str, i32, i64); 6] = [
    ("alpha", "orders", 0, 10),
    ("alpha", "orders", 1, 11),
    ("alpha", "payments", -1, 12),
    ("beta", "orders", 0, 20),
    ("", "t", 0, 30),
    ("nul\0group-α", "t", 7, 40),
];

/// A minimal layout v1 writer: what `SledMetadataStore::open` made before v2
/// (two trees, the layout record `[1]`, the marker file), durably closed.
fn write_v1(dir: &Path, extra: impl FnOnce(&sled::Db)) {
    let db = sled::open(dir).unwrap();
    db.insert(LAYOUT_KEY, &[1u8][..]).unwrap();
    let offsets = db.open_tree("group_offsets").unwrap();
    for (group, topic, partition, n) in V1_OFFSETS {
        offsets.insert(v1_offset_key(group, topic, partition), v1_offset_value(&value(n))).unwrap();
    }
    let groups = db.open_tree("group_metadata").unwrap();
    groups.insert("alpha", v1_group_value("alpha", 3)).unwrap();
    groups.insert("gamma", v1_group_value("gamma", 9)).unwrap();
    extra(&db);
    db.flush().unwrap();
    std::fs::write(dir.join("group-storage-sled.marker"), "v1\n").unwrap();
}

/// Checks that `store` holds exactly what [`write_v1`] wrote, each group in
/// its partition under `partitions`.
#[track_caller]
fn assert_v1_contents(store: &SledMetadataStore, partitions: u32) {
    assert_eq!(store.partition_count(), partitions);
    let of = |g: &str| CoordinatorPartition::of(g, partitions);
    for (group, topic, tp, n) in V1_OFFSETS {
        let loaded = store.load(of(group)).unwrap();
        assert_eq!(loaded.epoch, epoch(0));
        let found = loaded.groups.offsets.iter().find(|g| g.group_id == group).and_then(|g| g.get(topic, tp));
        assert_eq!(found, Some(&value(n)), "{group:?}/{topic}/{tp}");
        assert_eq!(store.fetch_group_offset(group, topic, tp).unwrap(), Some(value(n)));
    }
    for (group, generation) in [("alpha", 3), ("gamma", 9)] {
        let loaded = store.load(of(group)).unwrap();
        let record = loaded.groups.groups.iter().find(|r| r.group_id == group).expect("migrated record");
        assert_eq!(record.generation_id, generation);
    }
    let all = store.load_all().unwrap();
    assert_eq!((all.groups.len(), all.offsets.iter().map(|g| g.len()).sum::<usize>()), (2, V1_OFFSETS.len()));
}

/// The layout record and the trees of a closed store.
fn inspect(dir: &Path) -> (Vec<u8>, Vec<String>) {
    let db = open_raw(dir);
    let record = db.get(LAYOUT_KEY).unwrap().expect("layout record").to_vec();
    let mut trees: Vec<_> = db.tree_names().iter().map(|n| String::from_utf8_lossy(n).into_owned()).collect();
    trees.sort();
    (record, trees)
}

#[rstest]
#[case::default_partitions(None)]
#[case::eight_partitions(Some(8))]
fn a_v1_database_is_migrated_in_place(#[case] partitions: Option<u32>) {
    let dir = ScratchDir::new("migrate");
    write_v1(&dir.db(), |_| {});
    let count = partitions.unwrap_or(50);
    {
        let store = match partitions {
            None => SledMetadataStore::open(dir.db()).unwrap(),
            Some(n) => SledMetadataStore::open_with_partitions(dir.db(), n).unwrap(),
        };
        assert_v1_contents(&store, count);
        // A migrated store takes appends, with epochs.
        let p = store.partition_of("alpha");
        store.append_blocking(p, epoch(1), vec![commit("alpha", "orders", 0, value(13))]).unwrap();
    }
    let (record, trees) = inspect(&dir.db());
    let mut expected = vec![2];
    expected.extend_from_slice(&count.to_be_bytes());
    assert_eq!(record, expected, "layout v2 with the partition count");
    assert_eq!(trees, ["__sled__default", INTENTS_TREE, PARTITIONS_TREE], "the v1 trees are gone");

    let store = SledMetadataStore::open_with_partitions(dir.db(), count).unwrap();
    assert_eq!(store.fetch_group_offset("alpha", "orders", 0).unwrap(), Some(value(13)));
    assert_eq!(store.owner_epoch(store.partition_of("alpha")).unwrap(), epoch(1));
    drop(store);
    // The count is now part of the store.
    let other = if count == 50 { 8 } else { 50 };
    let err = SledMetadataStore::open_with_partitions(dir.db(), other).unwrap_err();
    assert!(
        matches!(&err, StorageError::InvalidInput { message } if message.contains(&count.to_string())),
        "{err:?}"
    );
}

#[test]
fn a_migration_interrupted_before_the_flip_is_redone() {
    let dir = ScratchDir::new("migrate-crash-before");
    // A half-built v2 tree, with a key that must not survive.
    write_v1(&dir.db(), |db| {
        let tree = db.open_tree(PARTITIONS_TREE).unwrap();
        tree.insert(v2_offset_key(0, "ghost", "t", 0), v1_offset_value(&value(99))).unwrap();
    });
    let store = SledMetadataStore::open(dir.db()).unwrap();
    assert_v1_contents(&store, 50);
    assert_eq!(store.load(partition(0)).unwrap().groups.offsets.iter().find(|g| g.group_id == "ghost"), None);
}

#[test]
fn v1_trees_left_by_a_crash_after_the_flip_are_dropped() {
    let dir = ScratchDir::new("migrate-crash-after");
    write_v1(&dir.db(), |_| {});
    drop(SledMetadataStore::open(dir.db()).unwrap());
    {
        let db = open_raw(&dir.db());
        db.open_tree("group_offsets").unwrap().insert(v1_offset_key("stale", "t", 0), &[1u8][..]).unwrap();
        db.flush().unwrap();
    }
    let store = SledMetadataStore::open(dir.db()).unwrap();
    assert_v1_contents(&store, 50);
    drop(store);
    assert_eq!(inspect(&dir.db()).1, ["__sled__default", INTENTS_TREE, PARTITIONS_TREE]);
}

#[test]
fn unreadable_v1_entries_stay_typed_errors_or_are_dropped_when_they_name_no_group() {
    let dir = ScratchDir::new("migrate-unreadable");
    write_v1(&dir.db(), |db| {
        let offsets = db.open_tree("group_offsets").unwrap();
        offsets.insert(v1_offset_key("bad", "t", 3), &[1u8, 0xff, 0xff][..]).unwrap();
        offsets.insert([0u8, 9, b'x'], &[1u8][..]).unwrap();
        db.open_tree("group_metadata").unwrap().insert([0xffu8, 0xfe], v1_group_value("?", 1)).unwrap();
    });
    let store = SledMetadataStore::open(dir.db()).unwrap();
    let p = store.partition_of("bad");
    let err = store.load(p).unwrap_err();
    let key = format!("{PARTITIONS_TREE}/{}/offsets/bad/t/3", p.0);
    assert!(
        matches!(&err, StorageError::Corrupt { group_id, key: k, .. } if group_id == "bad" && *k == key),
        "{err:?}"
    );
    let (all, problems) = store.load_all_skipping_unreadable().unwrap();
    assert_eq!(problems, vec![err]);
    assert_eq!(all.offsets.iter().map(|g| g.len()).sum::<usize>(), V1_OFFSETS.len());
}

#[test]
fn v2_keys_and_values_are_as_documented() {
    let dir = ScratchDir::new("layout-v2");
    {
        let store = SledMetadataStore::open_with_partitions(dir.db(), 300).unwrap();
        let records = vec![
            commit("g", "orders", 5, value(7)),
            group_offsets::Record::Group(Box::new(group_offsets::GroupMetadataRecord {
                group_id: "g".into(),
                generation_id: 4,
                ..Default::default()
            })),
        ];
        store.append_blocking(partition(0x0102), epoch(0x0a0b), records).unwrap();
    }
    let db = open_raw(&dir.db());
    assert_eq!(db.get(LAYOUT_KEY).unwrap().as_deref(), Some(&[2u8, 0, 0, 1, 44][..]));
    let tree = db.open_tree(PARTITIONS_TREE).unwrap();
    let entries: Vec<(Vec<u8>, Vec<u8>)> =
        tree.iter().map(|e| e.unwrap()).map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
    let expected = vec![
        (vec![0, 0, 1, 2, 0], vec![1, 0, 0, 0, 0, 0, 0, 0x0a, 0x0b]),
        ([&[0u8, 0, 1, 2, 1][..], b"g"].concat(), shared_group_value("g", 4)),
        (v2_offset_key(0x0102, "g", "orders", 5), shared_offset_value(&value(7))),
    ];
    assert_eq!(entries, expected);
    // Values the landed build wrote (format 1) still read, beside them.
    tree.insert(v2_offset_key(0x0102, "g", "orders", 6), v1_offset_value(&value(8))).unwrap();
    tree.insert([&[0u8, 0, 1, 2, 1][..], b"h"].concat(), v1_group_value("h", 2)).unwrap();
    drop((tree, db));
    let store = SledMetadataStore::open_with_partitions(dir.db(), 300).unwrap();
    let loaded = store.load(partition(0x0102)).unwrap().groups;
    let generations: Vec<(&str, i32)> =
        loaded.groups.iter().map(|g| (g.group_id.as_str(), g.generation_id)).collect();
    assert_eq!(generations, [("g", 4), ("h", 2)]);
    assert_eq!(loaded.offsets[0].get("orders", 6), Some(&value(8)));
    assert_eq!(loaded.offsets[0].get("orders", 5), Some(&value(7)));
}

/// The shared record codec's varint (LEB128), as `group_offsets::codec` documents it.
fn leb128(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn shared_zigzag(out: &mut Vec<u8>, v: i64) {
    leb128(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn shared_string(out: &mut Vec<u8>, s: &str) {
    leb128(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// The value of a group record with no protocol, leader or members in the
/// shared codec (its group id, then its fields), by hand.
fn shared_group_value(group_id: &str, generation: i32) -> Vec<u8> {
    let mut out = vec![2]; // version
    shared_string(&mut out, group_id);
    out.push(0); // protocol_type
    shared_zigzag(&mut out, generation.into());
    out.extend_from_slice(&[0, 0, 0, 0]); // protocol_name, leader_id, state_timestamp_ms, no members
    out
}

/// The value of an offset record in the shared codec (the fields after
/// group, topic and partition), by hand.
fn shared_offset_value(o: &OffsetAndMetadata) -> Vec<u8> {
    let mut out = vec![2]; // version
    shared_zigzag(&mut out, o.offset);
    match o.leader_epoch {
        Some(e) => {
            out.push(1);
            shared_zigzag(&mut out, e.into());
        }
        None => out.push(0),
    }
    shared_string(&mut out, &o.metadata);
    shared_zigzag(&mut out, o.commit_time);
    match o.expire_time {
        Some(t) => {
            out.push(1);
            shared_zigzag(&mut out, t);
        }
        None => out.push(0),
    }
    out
}

#[rstest]
#[case::zero(0)]
#[case::too_many(SledOptions::MAX_PARTITIONS + 1)]
fn an_impossible_partition_count_is_invalid_input(#[case] partitions: u32) {
    let dir = ScratchDir::new("layout-count");
    let err = SledMetadataStore::open_with_partitions(dir.db(), partitions).unwrap_err();
    assert!(matches!(err, StorageError::InvalidInput { .. }), "{err:?}");
    let err =
        SledMetadataStore::from_db_with_partitions(sled::open(dir.db()).unwrap(), partitions).unwrap_err();
    assert!(matches!(err, StorageError::InvalidInput { .. }), "{err:?}");
}

#[test]
fn a_new_store_with_another_count_is_refused_on_reopening() {
    let dir = ScratchDir::new("layout-refuse");
    drop(SledMetadataStore::open(dir.db()).unwrap());
    let err = SledMetadataStore::open_with_partitions(dir.db(), 64).unwrap_err();
    assert!(
        matches!(&err, StorageError::InvalidInput { message } if message.contains("50") && message.contains("64")),
        "{err:?}"
    );
    SledMetadataStore::open(dir.db()).unwrap();
}

#[rstest]
#[case::future_layout(&[4])]
#[case::future_layout_with_count(&[4, 0, 0, 0, 50])]
#[case::truncated_v2(&[2, 0, 50])]
#[case::truncated_v3(&[3, 0, 50])]
fn a_database_with_an_unknown_layout_is_refused(#[case] record: &[u8]) {
    let dir = ScratchDir::new("layout-unknown");
    let db = sled::open(dir.db()).unwrap();
    db.insert(LAYOUT_KEY, record).unwrap();
    let err = SledMetadataStore::from_db(db).unwrap_err();
    assert!(
        matches!(&err, StorageError::Unavailable { message, .. } if message.contains("layout")),
        "{err:?}"
    );
}
