//! Shared helpers: scratch directories under cargo's per-target temp dir.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use group_types::{OffsetAndMetadata, TopicPartition};

/// A fresh directory, removed when dropped.
#[derive(Debug)]
pub(crate) struct ScratchDir(PathBuf);

impl ScratchDir {
    /// A new empty directory whose name starts with `name`.
    pub(crate) fn new(name: &str) -> ScratchDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("group-storage-sled-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        ScratchDir(dir)
    }

    /// The path of the database inside it.
    pub(crate) fn db(&self) -> PathBuf {
        self.0.join("db")
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
        metadata: format!("meta-{offset}"),
        commit_time: 1_700_000_000_000 + offset,
        expire_time: (offset % 2 == 0).then_some(1_800_000_000_000),
    }
}
