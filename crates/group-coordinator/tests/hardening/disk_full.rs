//! A full disk under the coordinator: commits over sled on a small tmpfs fail
//! with Kafka's error for a broken log directory once the disk is full, the
//! failures are counted (and logged as `write failed`), and once space is freed
//! commits succeed again without a restart, with every acknowledged commit there,
//! then and after a restart.
//!
//! Mounting needs root (or `CAP_SYS_ADMIN`); where it fails, the test says so and
//! runs the same scenario with the sled store's injected flush faults.

#[path = "../../../group-storage-sled/tests/it/tmpfs.rs"]
mod tmpfs;

use std::collections::BTreeMap;
use std::sync::Arc;

use group_coordinator::GroupCoordinator;
use group_offsets::StorageError;
use group_storage_sled::{FlushFaults, SledMetadataStore, SledOptions};
use group_types::{ErrorCode, OffsetCommitRequest, TopicPartition};

use crate::support::{commit, fast_config, fetch};
use tmpfs::{Tmpfs, fill};

fn request(n: i64) -> (OffsetCommitRequest, TopicPartition) {
    let tp = TopicPartition::new("orders", (n % 8) as i32);
    let mut request = commit(&format!("g{}", n % 5), "", None, -1, &[(tp.clone(), n)]);
    for (_, data) in request.offsets.iter_mut().flat_map(|t| t.partitions.iter_mut()) {
        data.metadata = Some(format!("{n:>1000}").into());
    }
    (request, tp)
}

/// Commits offset `n`; returns its per-partition error and records it when acknowledged.
fn commit_one(
    c: &GroupCoordinator,
    n: i64,
    acked: &mut BTreeMap<(String, TopicPartition), i64>,
) -> ErrorCode {
    let (r, tp) = request(n);
    let group = r.group_id.clone();
    let response = c.handle_offset_commit(r).expect("the coordinator answers");
    let code = response.error_for(&tp.topic, tp.partition).expect("the partition is answered");
    if code == ErrorCode::None {
        acked.insert((group.to_string(), tp), n);
    }
    code
}

#[track_caller]
fn assert_acknowledged_present(
    c: &GroupCoordinator,
    acked: &BTreeMap<(String, TopicPartition), i64>,
    when: &str,
) {
    for ((group, tp), n) in acked {
        let fetched = c.handle_offset_fetch(fetch(group, std::slice::from_ref(tp))).expect("fetch answers");
        let offset =
            fetched.offsets.get(tp.topic.as_ref()).and_then(|p| p.get(&tp.partition)).map(|d| d.offset);
        assert_eq!(offset, Some(*n), "{when}: {group} {tp}");
    }
}

#[test]
fn a_full_disk_fails_commits_and_the_coordinator_recovers_once_space_is_freed() {
    let dir = std::env::temp_dir().join(format!("group-coordinator-disk-full-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let mount = Tmpfs::mount(&dir);
    let faults = FlushFaults::new();
    let options = match &mount {
        Ok(_) => SledOptions::new(),
        Err(why) => {
            println!("disk_full: cannot mount a tmpfs ({why}): injected flush faults instead");
            SledOptions::new().flush_faults(faults.clone())
        }
    };
    let store = SledMetadataStore::open_with_options(dir.join("db"), options).expect("sled opens");
    let coordinator =
        GroupCoordinator::new(Arc::new(store.clone()), fast_config(0)).expect("coordinator opens");
    let mut acked = BTreeMap::new();
    for n in 0..100 {
        assert_eq!(
            commit_one(&coordinator, n, &mut acked),
            ErrorCode::None,
            "commit {n} before the disk fills"
        );
    }

    match &mount {
        Ok(_) => fill(&dir.join("filler")).expect("fill the tmpfs"),
        Err(_) => faults.fail_sled(StorageError::io("injected: No space left on device (os error 28)")),
    }
    let mut n = 100;
    let code = loop {
        assert!(n < 100_000, "commits never failed on a full disk");
        let code = commit_one(&coordinator, n, &mut acked);
        n += 1;
        if code != ErrorCode::None {
            break code;
        }
    };
    println!("disk_full: commit {n} failed with {} once the disk was full", code.name());
    // KAFKA_STORAGE_ERROR, as a client sees it (§6.7): it looks the coordinator up again.
    assert_eq!(code, ErrorCode::NotCoordinator);
    for _ in 0..3 {
        assert_eq!(commit_one(&coordinator, n, &mut acked), ErrorCode::NotCoordinator, "still full");
        n += 1;
    }
    assert!(coordinator.failed_appends() >= 4, "every failed append is counted");
    assert!(coordinator.metrics().write_failures >= 4, "and reported as a WriteFailed event");
    assert_acknowledged_present(&coordinator, &acked, "while the disk is full");

    match &mount {
        Ok(_) => std::fs::remove_file(dir.join("filler")).expect("free space"),
        Err(_) => faults.heal(),
    }
    for _ in 0..50 {
        assert_eq!(
            commit_one(&coordinator, n, &mut acked),
            ErrorCode::None,
            "commit {n} after space was freed"
        );
        n += 1;
    }
    assert_acknowledged_present(&coordinator, &acked, "after recovering, without a restart");

    coordinator.stop();
    drop(coordinator);
    drop(store);
    let store = SledMetadataStore::open(dir.join("db")).expect("reopen");
    let coordinator = GroupCoordinator::new(Arc::new(store), fast_config(0)).expect("coordinator reopens");
    assert_acknowledged_present(&coordinator, &acked, "after a restart");
    coordinator.stop();
    drop(coordinator);
    drop(mount);
    let _ = std::fs::remove_dir_all(&dir);
}
