//! Shared helpers: scratch directories under cargo's per-target temp dir, and
//! shorthands for building and appending records.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use group_offsets::{
    AppendCompletion, CoordinatorPartition, GroupMetadataRecord, MetadataStore, OwnerEpoch, Record,
    StorageError,
};
use group_storage_sled::{FlushFaults, SledMetadataStore, SledOptions};
use group_types::{OffsetAndMetadata, TopicPartition};

/// How long a test waits for a completion before it fails (bounds a hang; no
/// test sleeps).
pub(crate) const COMPLETION_LIMIT: Duration = Duration::from_secs(30);

/// A fresh directory, removed when dropped.
#[derive(Debug)]
pub(crate) struct ScratchDir(PathBuf);

impl ScratchDir {
    /// A new empty directory whose name starts with `name`.
    pub(crate) fn new(name: &str) -> ScratchDir {
        ScratchDir::under(Path::new(env!("CARGO_TARGET_TMPDIR")), name)
    }

    /// A new empty directory named after `name`, inside `parent`.
    pub(crate) fn under(parent: &Path, name: &str) -> ScratchDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("group-storage-sled-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        ScratchDir(dir)
    }

    /// The path of the database inside it.
    pub(crate) fn db(&self) -> PathBuf {
        self.0.join("db")
    }

    /// The directory itself.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A topic-partition.
pub(crate) fn tp(topic: &str, partition: i32) -> TopicPartition {
    TopicPartition { topic: topic.into(), partition }
}

/// An offset with recognisable metadata.
pub(crate) fn offset(offset: i64) -> OffsetAndMetadata {
    OffsetAndMetadata {
        offset,
        leader_epoch: Some(3),
        metadata: format!("meta-{offset}").into(),
        commit_time: 1_700_000_000_000 + offset,
        expire_time: (offset % 2 == 0).then_some(1_800_000_000_000),
    }
}

/// A group record with one member.
pub(crate) fn record(group_id: &str, generation_id: i32) -> GroupMetadataRecord {
    group_offsets::conformance::one_member_group_record(group_id, generation_id, 40)
}

/// An offset record.
pub(crate) fn commit(group: &str, topic: &str, partition: i32, value: OffsetAndMetadata) -> Record {
    Record::Offset { group_id: Arc::from(group), partition: tp(topic, partition), offset: value }
}

/// An offset tombstone.
pub(crate) fn uncommit(group: &str, topic: &str, partition: i32) -> Record {
    Record::OffsetTombstone { group_id: Arc::from(group), partition: tp(topic, partition) }
}

/// Appends `records` to `group`'s partition at that partition's current epoch.
pub(crate) fn append_to_group(
    store: &impl MetadataStore,
    group: &str,
    records: Vec<Record>,
) -> Result<(), StorageError> {
    let p = store.partition_of(group);
    store.append_blocking(p, store.owner_epoch(p)?, records)
}

/// `group`'s record, read through its partition.
pub(crate) fn group_record(store: &impl MetadataStore, group: &str) -> Option<GroupMetadataRecord> {
    let loaded = store.load(store.partition_of(group)).expect("load");
    loaded.groups.groups.into_iter().find(|r| r.group_id == group)
}

/// A completion that reports on a channel, and its receiving end.
pub(crate) fn completion() -> (AppendCompletion, mpsc::Receiver<Result<(), StorageError>>) {
    AppendCompletion::channel()
}

/// Waits (bounded) for a completion's outcome.
#[track_caller]
pub(crate) fn outcome(rx: &mpsc::Receiver<Result<(), StorageError>>) -> Result<(), StorageError> {
    rx.recv_timeout(COMPLETION_LIMIT).expect("the append completed")
}

/// Coordinator partition shorthand.
pub(crate) fn partition(n: u32) -> CoordinatorPartition {
    CoordinatorPartition(n)
}

/// Epoch shorthand.
pub(crate) fn epoch(n: u64) -> OwnerEpoch {
    OwnerEpoch(n)
}

/// A store in `dir` whose flushes the returned faults control (pause, fail).
pub(crate) fn store_with_faults(dir: &ScratchDir) -> (SledMetadataStore, FlushFaults) {
    let faults = FlushFaults::new();
    let options = SledOptions::new().flush_faults(faults.clone());
    (SledMetadataStore::open_with_options(dir.db(), options).expect("open"), faults)
}

/// Opens a closed store's database with sled directly, waiting (bounded) for
/// the lock sled's background threads may still hold for a moment.
pub(crate) fn open_raw(path: &Path) -> sled::Db {
    let start = Instant::now();
    loop {
        match sled::open(path) {
            Ok(db) => return db,
            Err(_) if start.elapsed() < Duration::from_secs(10) => std::thread::yield_now(),
            Err(e) => panic!("open {}: {e}", path.display()),
        }
    }
}
