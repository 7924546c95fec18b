//! Multi-key appends are atomic across a crash: a crash between an append's
//! writes leaves its intent (format documented in the crate's `intent`
//! module, built here by hand), and the next open makes every write of it.

use group_offsets::{MetadataStore, Record};
use group_storage_sled::{INTENTS_TREE, PARTITIONS_TREE, SledMetadataStore};
use group_types::OffsetAndMetadata;

use crate::common::{ScratchDir, append_to_group, commit, offset, open_raw, uncommit};

const GROUP: &str = "payments";

/// The writes a store makes for `records`, read back from its tree: every
/// key and value of the group's partition, after appending them to a fresh store.
fn writes_of(records: Vec<Record>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let dir = ScratchDir::new("intent-writes");
    {
        let store = SledMetadataStore::open(dir.path()).expect("open");
        append_to_group(&store, GROUP, records).expect("append");
    }
    let db = open_raw(dir.path());
    let tree = db.open_tree(PARTITIONS_TREE).expect("tree");
    tree.iter()
        .map(|kv| kv.expect("read"))
        // Not the partition's owner epoch (kind byte 0).
        .filter(|(k, _)| k.get(4) != Some(&0))
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

/// An intent value: version 1, the count, then each write.
fn intent(writes: &[(Vec<u8>, Option<Vec<u8>>)]) -> Vec<u8> {
    let mut out = vec![1];
    out.extend_from_slice(&(writes.len() as u32).to_be_bytes());
    for (key, value) in writes {
        out.extend_from_slice(&(key.len() as u32).to_be_bytes());
        out.extend_from_slice(key);
        match value {
            Some(value) => {
                out.push(0);
                out.extend_from_slice(&(value.len() as u32).to_be_bytes());
                out.extend_from_slice(value);
            }
            None => out.push(0xFF),
        }
    }
    out
}

fn fetch(store: &SledMetadataStore, topic: &str, partition: i32) -> Option<OffsetAndMetadata> {
    store.fetch_group_offset(GROUP, topic, partition).expect("fetch")
}

#[test]
fn a_crash_between_an_appends_writes_is_rolled_forward_at_open() {
    // The interrupted append: two new offsets and the removal of a third.
    let new = writes_of(vec![commit(GROUP, "orders", 0, offset(10)), commit(GROUP, "orders", 1, offset(11))]);
    assert_eq!(new.len(), 2, "two offset keys");
    let removed_key = {
        let old = writes_of(vec![commit(GROUP, "audit", 0, offset(1))]);
        old[0].0.clone()
    };

    let dir = ScratchDir::new("intent-crash");
    let partition = {
        let store = SledMetadataStore::open(dir.path()).expect("open");
        append_to_group(
            &store,
            GROUP,
            vec![
                commit(GROUP, "orders", 0, offset(1)),
                commit(GROUP, "orders", 1, offset(2)),
                commit(GROUP, "audit", 0, offset(3)),
            ],
        )
        .expect("append");
        store.partition_of(GROUP)
    };
    {
        // What a crash after the intent and the first write leaves.
        let db = open_raw(dir.path());
        let tree = db.open_tree(PARTITIONS_TREE).expect("tree");
        let intents = db.open_tree(INTENTS_TREE).expect("intents");
        let mut writes: Vec<_> = new.iter().map(|(k, v)| (k.clone(), Some(v.clone()))).collect();
        writes.push((removed_key.clone(), None));
        intents.insert(partition.0.to_be_bytes(), intent(&writes)).expect("intent");
        tree.insert(&new[0].0, new[0].1.clone()).expect("first write");
        db.flush().expect("flush");
    }

    let store = SledMetadataStore::open(dir.path()).expect("reopen");
    assert_eq!(fetch(&store, "orders", 0), Some(offset(10)));
    assert_eq!(fetch(&store, "orders", 1), Some(offset(11)), "the write the crash cut off was made");
    assert_eq!(fetch(&store, "audit", 0), None, "the removal was made");
    let loaded = store.load(partition).expect("load");
    let group = loaded.groups.offsets.iter().find(|g| g.group_id == GROUP).expect("the group's offsets");
    let loaded: Vec<(&str, i32)> =
        group.offsets.iter().flat_map(|(t, ps)| ps.keys().map(move |&p| (t.as_str(), p))).collect();
    assert_eq!(loaded, [("orders", 0), ("orders", 1)], "the load sees the same");
    drop((loaded, store));

    let db = open_raw(dir.path());
    assert!(db.open_tree(INTENTS_TREE).expect("intents").is_empty(), "the intent is gone");
}

#[test]
fn finished_appends_leave_no_intent_and_a_later_write_is_never_overwritten() {
    let dir = ScratchDir::new("intent-finished");
    {
        let store = SledMetadataStore::open(dir.path()).expect("open");
        append_to_group(
            &store,
            GROUP,
            vec![commit(GROUP, "orders", 0, offset(1)), commit(GROUP, "orders", 1, offset(2))],
        )
        .expect("two keys");
        // A one-key append after it changes a key the first one wrote.
        append_to_group(&store, GROUP, vec![commit(GROUP, "orders", 0, offset(5))]).expect("one key");
        append_to_group(
            &store,
            GROUP,
            vec![uncommit(GROUP, "orders", 1), commit(GROUP, "audit", 0, offset(7))],
        )
        .expect("a removal and a write");
    }
    {
        let db = open_raw(dir.path());
        assert!(db.open_tree(INTENTS_TREE).expect("intents").is_empty());
    }
    let store = SledMetadataStore::open(dir.path()).expect("reopen");
    assert_eq!(fetch(&store, "orders", 0), Some(offset(5)));
    assert_eq!(fetch(&store, "orders", 1), None);
    assert_eq!(fetch(&store, "audit", 0), Some(offset(7)));
}

#[test]
fn an_unreadable_intent_refuses_the_open_with_the_partition() {
    let dir = ScratchDir::new("intent-unreadable");
    drop(SledMetadataStore::open(dir.path()).expect("open"));
    {
        let db = open_raw(dir.path());
        let intents = db.open_tree(INTENTS_TREE).expect("intents");
        intents.insert(7u32.to_be_bytes(), vec![1, 0, 0, 0, 3]).expect("a cut intent");
        db.flush().expect("flush");
    }
    let error = SledMetadataStore::open(dir.path()).expect_err("refused");
    let message = error.to_string();
    assert!(message.contains("coordinator partition 7 ") && message.contains("truncated"), "{message}");
}
