//! A full disk: a store on a small tmpfs appends until the disk is full and
//! appends fail with an I/O error; everything acknowledged stays loadable;
//! once space is freed the store recovers by itself (the test never reopens
//! it) and every acknowledged record is there, then and after a restart.
//!
//! Mounting needs root (or `CAP_SYS_ADMIN`). Where mounting fails, the test
//! says so and runs the same scenario with injected flush faults instead.

use std::collections::BTreeMap;

use group_offsets::{CoordinatorPartition, MetadataStore, StorageError};
use group_storage_sled::{FlushFaults, SledMetadataStore, SledOptions};
use group_types::OffsetAndMetadata;

use crate::common::{ScratchDir, commit, epoch};
use crate::tmpfs::{Tmpfs, fill};

/// Appends before the disk is filled.
const BEFORE: i64 = 200;
/// The most appends the test makes while waiting for the disk to be full.
const FILL_LIMIT: i64 = 100_000;

/// (partition, group, topic partition) -> acknowledged offset.
type Acked = BTreeMap<(u32, String, i32), i64>;

/// A record big enough to fill the disk in a few thousand appends.
fn value(n: i64) -> OffsetAndMetadata {
    OffsetAndMetadata {
        offset: n,
        leader_epoch: Some(1),
        metadata: format!("{n:>1024}").into(),
        commit_time: n,
        expire_time: None,
    }
}

/// What the test appended: every acknowledged offset, and the appends that
/// failed since the store last recovered.
#[derive(Debug, Default)]
struct Appended {
    acked: Acked,
    failed: BTreeMap<(u32, String, i32), Vec<i64>>,
}

/// Appends offset `n` of group `g{n % 16}` to its partition, and records the outcome.
fn append(store: &SledMetadataStore, n: i64, appended: &mut Appended) -> Result<(), StorageError> {
    let group = format!("g{}", n % 16);
    let p = store.partition_of(&group);
    let topic_partition = (n % 7) as i32;
    let key = (p.0, group.clone(), topic_partition);
    match store.append_blocking(p, epoch(1), vec![commit(&group, "t", topic_partition, value(n))]) {
        Ok(()) => {
            appended.acked.insert(key, n);
            Ok(())
        }
        Err(e) => {
            appended.failed.entry(key).or_default().push(n);
            Err(e)
        }
    }
}

/// Every acknowledged offset is what the store holds now; or, while the
/// store has not recovered, possibly what a later failed append wrote (see
/// the crate docs: failed appends are rolled back by the recovery).
#[track_caller]
fn assert_all_present(store: &SledMetadataStore, appended: &Appended, when: &str) {
    let (acked, failed) = (&appended.acked, &appended.failed);
    let mut by_partition: BTreeMap<u32, Vec<_>> = BTreeMap::new();
    for ((p, group, tp), n) in acked {
        by_partition.entry(*p).or_default().push((group, *tp, *n));
    }
    for (p, expected) in by_partition {
        let loaded = store.load(CoordinatorPartition(p)).unwrap_or_else(|e| panic!("{when}: load({p}): {e}"));
        for (group, tp, n) in expected {
            let stored =
                loaded.groups.offsets.iter().find(|g| &g.group_id == group).and_then(|g| g.get("t", tp));
            let failed_since = failed.get(&(p, group.clone(), tp)).into_iter().flatten();
            let allowed: Vec<_> =
                [n].into_iter().chain(failed_since.copied().filter(|f| *f > n)).map(value).collect();
            assert!(
                stored.is_some_and(|s| allowed.contains(s)),
                "{when}: {group}/t/{tp} in partition {p}: acknowledged {n}, found {:?}",
                stored.map(|s| s.offset)
            );
        }
    }
}

#[test]
fn a_full_disk_fails_appends_and_the_store_recovers_once_space_is_freed() {
    let scratch = ScratchDir::new("disk-full");
    let mount = Tmpfs::mount(scratch.path());
    let faults = FlushFaults::new();
    let options = match &mount {
        Ok(_) => SledOptions::new(),
        Err(why) => {
            println!("disk_full: cannot mount a tmpfs ({why}): falling back to injected flush faults");
            SledOptions::new().flush_faults(faults.clone())
        }
    };
    let filler = scratch.path().join("filler");
    let store =
        SledMetadataStore::open_with_options(scratch.path().join("db"), options).expect("open on tmpfs");
    let mut appended = Appended::default();
    for n in 0..BEFORE {
        append(&store, n, &mut appended).expect("appends before the disk is full");
    }

    match &mount {
        Ok(_) => fill(&filler).expect("fill the tmpfs"),
        Err(_) => faults.fail_sled(StorageError::io("injected: No space left on device (os error 28)")),
    }
    let mut n = BEFORE;
    let err = loop {
        assert!(n < BEFORE + FILL_LIMIT, "appends never failed on a full disk");
        if let Err(e) = append(&store, n, &mut appended) {
            break e;
        }
        n += 1;
    };
    println!("disk_full: append {} failed after {} appends on a full disk: {err}", n, n - BEFORE);
    assert!(
        matches!(&err, StorageError::Io { message, .. } if message.contains("No space left on device")),
        "a full disk is an I/O error: {err:?}"
    );
    // The operating system's own error is kept, not only its text.
    let os_error = std::error::Error::source(&err)
        .and_then(|cause| cause.downcast_ref::<group_offsets::EngineCause>())
        .and_then(|cause| cause.get_ref().downcast_ref::<std::io::Error>());
    assert_eq!(os_error.map(std::io::Error::kind), Some(std::io::ErrorKind::StorageFull), "{err:?}");
    assert!(store.is_failed());
    assert!(store.failed_appends() >= 1);
    assert_all_present(&store, &appended, "while the disk is full");

    // Still full: the next appends try to recover, fail, and change nothing.
    for _ in 0..3 {
        n += 1;
        assert!(matches!(append(&store, n, &mut appended), Err(StorageError::Io { .. })));
    }

    match &mount {
        Ok(_) => std::fs::remove_file(&filler).expect("free space"),
        Err(_) => faults.heal(),
    }
    for _ in 0..BEFORE {
        n += 1;
        append(&store, n, &mut appended).expect("appends after space was freed");
    }
    assert!(!store.is_failed());
    assert!(store.recoveries() >= 1);
    println!(
        "disk_full: recovered: {} failed appends, {} recoveries, {} reopens",
        store.failed_appends(),
        store.recoveries(),
        store.reopen_count()
    );
    if mount.is_ok() {
        assert!(store.reopen_count() >= 1, "sled stays failed after an I/O error: recovery reopens it");
    }
    // Recovery rolled back what failed: exactly the acknowledged values remain.
    appended.failed.clear();
    assert_all_present(&store, &appended, "after recovering");

    drop(store);
    let store = SledMetadataStore::open(scratch.path().join("db")).expect("reopen after recovering");
    assert_all_present(&store, &appended, "after a restart");
    drop(store);
    drop(mount);
}
