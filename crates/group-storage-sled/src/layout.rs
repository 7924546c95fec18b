//! The layout record, and the migration of a layout v1 database to v2.
//!
//! The record lives in sled's default tree under [`LAYOUT_KEY`]: `[1]` for
//! layout v1 (two trees, no coordinator partitions), `[2]` · `u32 BE
//! partition count` for layout v2 (one tree, every key led by its partition),
//! `[3]` · `u32 BE partition count` for layout v3 (v2 plus consumer-group
//! record keys).
//!
//! The record names the oldest layout that reads everything stored: a store
//! stays v2 until its first consumer-group record is written, and
//! [`require_v3`] flips it, durably, before that record is. Every v2 key is a
//! v3 key, so the flip moves no data; it exists so that a build that knows
//! only v2 refuses the store instead of loading it without its consumer
//! groups (it never scans their keys), while a store that never held one
//! can still be opened by such a build.
//!
//! The migration is crash-safe without being one sled batch (a sled batch
//! covers one tree, and v1 spans two): it rebuilds the v2 tree from scratch
//! out of the untouched v1 trees, makes it durable, then flips the layout
//! record, one atomic insert, and only then drops the v1 trees. A crash
//! before the flip leaves a v1 database and a half-built v2 tree, which the
//! next open clears and rebuilds; a crash after it leaves a v2 database with
//! leftover v1 trees, which the next open drops.

use group_offsets::{CoordinatorPartition, StorageError};

use crate::intent;
use crate::keys::{self, v1};
use crate::store::{Handles, from_sled};

/// The key, in sled's default tree, of the record naming the store's layout.
pub(crate) const LAYOUT_KEY: &[u8] = b"group-storage-sled/layout";

/// The first layout: two trees, no coordinator partitions.
const LAYOUT_V1: u8 = 1;

/// Layout v2: one tree, every key led by its partition.
const LAYOUT_V2: u8 = 2;

/// The layout described in the crate docs: v2 plus consumer-group record keys.
const LAYOUT_V3: u8 = 3;

/// How many entries the migration writes per sled batch: the v2 tree is not
/// live until the layout record flips, so the copy need not be one batch, and
/// bounded batches keep its memory bounded.
const MIGRATION_BATCH: usize = 10_000;

/// What [`prepare`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prepared {
    /// A new store: the v2 record was just written (not yet flushed).
    Created,
    /// A v2 or v3 store with the expected partition count.
    Existing,
    /// A v1 store, migrated to v2 (durably).
    Migrated { groups: usize, offsets: usize, skipped: usize },
}

/// The layout record of v2 with `partitions` partitions.
fn v2_record(partitions: u32) -> [u8; 5] {
    let [a, b, c, d] = partitions.to_be_bytes();
    [LAYOUT_V2, a, b, c, d]
}

/// The layout record of v3 with `partitions` partitions.
fn v3_record(partitions: u32) -> [u8; 5] {
    let [a, b, c, d] = partitions.to_be_bytes();
    [LAYOUT_V3, a, b, c, d]
}

/// Makes the layout record name v3, durably (through `flush`), unless it
/// already does: called before the first consumer-group record is written,
/// so no v3 key is ever on disk under a v2 record. The store was opened, so
/// its record names v2 or v3 with its partition count.
pub(crate) fn require_v3(
    handles: &Handles,
    partitions: u32,
    flush: impl Fn(&Handles) -> Result<(), StorageError>,
) -> Result<(), StorageError> {
    let db = &handles.db;
    match db.get(LAYOUT_KEY).map_err(from_sled)?.as_deref() {
        Some([LAYOUT_V3, ..]) => Ok(()),
        Some([LAYOUT_V2, ..]) => {
            db.insert(LAYOUT_KEY, &v3_record(partitions)).map_err(from_sled)?;
            flush(handles)?;
            tracing::info!(
                partitions,
                "group-storage-sled: layout v2 to v3 (the first consumer-group record)"
            );
            Ok(())
        }
        other => Err(StorageError::unavailable(format!("unexpected store layout record {other:?}"))),
    }
}

/// Checks the layout record, writing it in a new database and migrating a v1
/// one. `must_exist` says the store existed before (its marker file is
/// there), so a missing record means sled lost the database's contents.
/// `flush` makes what was written durable.
pub(crate) fn prepare(
    handles: &Handles,
    partitions: u32,
    must_exist: bool,
    flush: impl Fn(&Handles) -> Result<(), StorageError>,
) -> Result<Prepared, StorageError> {
    let db = &handles.db;
    let record = db.get(LAYOUT_KEY).map_err(from_sled)?;
    match record.as_deref() {
        Some([LAYOUT_V2 | LAYOUT_V3, count @ ..]) => {
            let stored = <[u8; 4]>::try_from(count).map(u32::from_be_bytes).map_err(|_| {
                StorageError::unavailable(format!("malformed layout record {:?}", record.as_deref()))
            })?;
            if stored != partitions {
                return Err(StorageError::InvalidInput {
                    message: format!(
                        "the store is laid out in {stored} coordinator partitions, not the {partitions} asked for; \
                         a store's partition count cannot change (open it with {stored})"
                    ),
                });
            }
            // A migration that crashed after the flip left the v1 trees behind.
            let mut changed = drop_v1_trees(db)?;
            let rolled = intent::roll_forward(handles)?;
            if rolled > 0 {
                tracing::info!(appends = rolled, "group-storage-sled: finished appends a crash interrupted");
                changed = true;
            }
            if changed {
                flush(handles)?;
            }
            Ok(Prepared::Existing)
        }
        Some([LAYOUT_V1]) => migrate(handles, partitions, flush),
        Some(other) => Err(StorageError::unavailable(format!(
            "unknown store layout {other:?}; written by a newer version?"
        ))),
        None if must_exist => Err(StorageError::unavailable(
            "the store's layout record is missing: sled lost the database's contents \
                      (damaged log); restore it from a backup or move it aside"
                .to_owned(),
        )),
        None => {
            db.insert(LAYOUT_KEY, &v2_record(partitions)).map_err(from_sled)?;
            Ok(Prepared::Created)
        }
    }
}

/// Rebuilds the v2 tree from the v1 trees, then flips the record (see the
/// module docs). Values are copied byte for byte: a value v1 could not read
/// stays unreadable, reported by the loads that meet it, as before. Keys that
/// name no group (malformed, or not UTF-8) cannot be given a partition; they
/// were unreadable under v1 too, and are logged and left behind.
fn migrate(
    handles: &Handles,
    partitions: u32,
    flush: impl Fn(&Handles) -> Result<(), StorageError>,
) -> Result<Prepared, StorageError> {
    let (db, tree) = (&handles.db, &handles.tree);
    // Whatever an interrupted migration left.
    tree.clear().map_err(from_sled)?;
    let v1_groups = db.open_tree(v1::GROUPS_TREE).map_err(from_sled)?;
    let v1_offsets = db.open_tree(v1::OFFSETS_TREE).map_err(from_sled)?;
    let partition_of = |group_id: &str| CoordinatorPartition::of(group_id, partitions);

    let mut batch = Writer::new(tree);
    let (mut groups, mut offsets, mut skipped) = (0, 0, 0);
    for entry in v1_groups.iter() {
        let (key, value) = entry.map_err(from_sled)?;
        match std::str::from_utf8(&key) {
            Ok(group_id) => {
                batch.insert(keys::group_key(partition_of(group_id), group_id), value)?;
                groups += 1;
            }
            Err(e) => {
                tracing::warn!(key = %keys::display_raw_key(v1::GROUPS_TREE, &key), "layout v1 to v2: skipping a group record whose key is not UTF-8: {e}");
                skipped += 1;
            }
        }
    }
    for entry in v1_offsets.iter() {
        let (key, value) = entry.map_err(from_sled)?;
        match v1::parse_offset_key(&key) {
            Ok((group_id, topic, partition)) => {
                batch.insert(keys::offset_key(partition_of(group_id), group_id, topic, partition)?, value)?;
                offsets += 1;
            }
            Err(reason) => {
                tracing::warn!(key = %keys::display_raw_key(v1::OFFSETS_TREE, &key), "layout v1 to v2: skipping an offset with a malformed key: {reason}");
                skipped += 1;
            }
        }
    }
    batch.finish()?;
    drop((v1_groups, v1_offsets));
    flush(handles)?;
    db.insert(LAYOUT_KEY, &v2_record(partitions)).map_err(from_sled)?;
    flush(handles)?;
    drop_v1_trees(db)?;
    flush(handles)?;
    tracing::info!(
        groups,
        offsets,
        skipped,
        partitions,
        "migrated a group-storage-sled store from layout v1 to v2"
    );
    Ok(Prepared::Migrated { groups, offsets, skipped })
}

/// Drops the v1 trees if they exist; true when there was one.
fn drop_v1_trees(db: &sled::Db) -> Result<bool, StorageError> {
    let names = db.tree_names();
    let mut dropped = false;
    for name in [v1::GROUPS_TREE, v1::OFFSETS_TREE] {
        if names.iter().any(|n| n.as_ref() == name.as_bytes()) {
            dropped |= db.drop_tree(name).map_err(from_sled)?;
        }
    }
    Ok(dropped)
}

/// Writes entries in sled batches of [`MIGRATION_BATCH`].
struct Writer<'a> {
    tree: &'a sled::Tree,
    batch: sled::Batch,
    len: usize,
}

impl<'a> Writer<'a> {
    fn new(tree: &'a sled::Tree) -> Writer<'a> {
        Writer { tree, batch: sled::Batch::default(), len: 0 }
    }

    fn insert(&mut self, key: Vec<u8>, value: sled::IVec) -> Result<(), StorageError> {
        self.batch.insert(key, value);
        self.len += 1;
        if self.len == MIGRATION_BATCH {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn flush_batch(&mut self) -> Result<(), StorageError> {
        self.len = 0;
        self.tree.apply_batch(std::mem::take(&mut self.batch)).map_err(from_sled)
    }

    fn finish(mut self) -> Result<(), StorageError> {
        if self.len > 0 { self.flush_batch() } else { Ok(()) }
    }
}
