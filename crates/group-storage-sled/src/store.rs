//! `SledMetadataStore`: the `MetadataStore` contract on a sled database.

use std::fs::File;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use group_offsets::{GroupMetadataRecord, MetadataStore, StorageError, StoredGroups};
use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};

use crate::Durability;
use crate::codec::{self, DecodeError};
use crate::group_commit::GroupCommit;
use crate::keys::{self, GROUPS_TREE, OFFSETS_TREE};
use crate::load::{self, Unreadable};

/// The key, in sled's default tree, of the record naming the store's layout.
const LAYOUT_KEY: &[u8] = b"group-storage-sled/layout";

/// The layout described in the crate docs.
const LAYOUT_V1: u8 = 1;

/// The file `open` writes beside sled's once the layout record is durable.
const MARKER_FILE: &str = "group-storage-sled.marker";

const MARKER_TEXT: &str =
    "A group-storage-sled store lives here; its layout record must be in the database.\n";

/// A durable [`MetadataStore`] on an embedded sled database.
///
/// Every write returns only after an explicit flush (by default sled's flush
/// plus an `fsync`, see [`Durability`]) has made it durable; concurrent
/// writers share those flushes (group commit). A multi-partition
/// commit is one sled batch, so it is atomic across a crash. Cloning is cheap
/// and clones share the database and its flushes.
///
/// The key layout and value format are described in the [crate docs](crate).
#[derive(Debug, Clone)]
pub struct SledMetadataStore {
    db: sled::Db,
    offsets: sled::Tree,
    groups: sled::Tree,
    commits: Arc<GroupCommit>,
    /// sled's data file, to `fsync` after each flush ([`Durability::Fsync`]).
    fsync: Option<Arc<File>>,
}

impl SledMetadataStore {
    /// How long [`open`](SledMetadataStore::open) waits for a directory
    /// another handle still holds.
    pub const LOCK_WAIT: Duration = Duration::from_secs(2);

    /// Opens (creating if needed) the store in the directory `path`.
    ///
    /// A damaged database gives [`StorageError::Unavailable`], never a panic.
    /// Beside sled's own files the directory holds a small marker file,
    /// written once the store's layout record is durable: if the marker is
    /// there but sled recovers a database without the record (sled silently
    /// starts empty from a zeroed or garbage log), opening fails instead of
    /// serving an empty store. A log cut short that still holds the record
    /// recovers to an earlier consistent state and cannot be told apart.
    ///
    /// Recovery is an operator's decision: restore the directory from a
    /// backup, or move it aside and start empty (committed offsets are lost
    /// and consumers fall back to their reset policy).
    ///
    /// sled holds an exclusive lock on its files, and its background writes
    /// may keep them open for a moment after the last handle is dropped, so
    /// `open` waits up to [`LOCK_WAIT`](SledMetadataStore::LOCK_WAIT) for the lock
    /// before reporting the directory as in use.
    pub fn open(path: impl AsRef<Path>) -> Result<SledMetadataStore, StorageError> {
        SledMetadataStore::open_with(path, Durability::default())
    }

    /// Like [`open`](SledMetadataStore::open), with the given durability.
    pub fn open_with(
        path: impl AsRef<Path>,
        durability: Durability,
    ) -> Result<SledMetadataStore, StorageError> {
        let path = path.as_ref();
        let unavailable = |e: StorageError| StorageError::Unavailable {
            message: format!("cannot open the sled database at {}: {e}", path.display()),
        };
        let marker = path.join(MARKER_FILE);
        let existed = marker.exists();
        let db = open_db(path).map_err(unavailable)?;
        let mut store = SledMetadataStore::with_layout(db, existed).map_err(unavailable)?;
        if durability == Durability::Fsync {
            // sled keeps its log in the file `db` of its directory; an fsync
            // through any descriptor of that file syncs all of it.
            let data_file = path.join("db");
            let file = File::open(&data_file).map_err(|e| {
                unavailable(StorageError::io(format!("cannot open {} to fsync it: {e}", data_file.display())))
            })?;
            store.fsync = Some(Arc::new(file));
        }
        if !existed {
            store.flush_now().map_err(unavailable)?;
            std::fs::write(&marker, MARKER_TEXT).map_err(|e| {
                unavailable(StorageError::io(format!("cannot write {}: {e}", marker.display())))
            })?;
        }
        Ok(store)
    }

    /// A store over an already open database (for custom sled settings, or
    /// to share a database with other trees). It uses the trees
    /// [`OFFSETS_TREE`] and [`GROUPS_TREE`], and one layout record in the
    /// default tree. Unlike [`open`](SledMetadataStore::open) it cannot tell
    /// a database sled silently emptied from a new one, and, not knowing
    /// sled's file, it acknowledges writes after sled's flush alone
    /// ([`Durability::SledFlush`]).
    pub fn from_db(db: sled::Db) -> Result<SledMetadataStore, StorageError> {
        SledMetadataStore::with_layout(db, false)
    }

    /// Checks (or, in a new database, writes) the layout record.
    fn with_layout(db: sled::Db, must_exist: bool) -> Result<SledMetadataStore, StorageError> {
        guarded(|| {
            match db.get(LAYOUT_KEY).map_err(from_sled)? {
                Some(v) if v.as_ref() == [LAYOUT_V1] => {}
                Some(v) => {
                    return Err(StorageError::Unavailable {
                        message: format!(
                            "unknown store layout {:?}; written by a newer version?",
                            v.as_ref()
                        ),
                    });
                }
                None if must_exist => {
                    return Err(StorageError::Unavailable {
                        message: "the store's layout record is missing: sled lost the database's contents \
                                  (damaged log); restore it from a backup or move it aside"
                            .to_owned(),
                    });
                }
                None => {
                    db.insert(LAYOUT_KEY, &[LAYOUT_V1]).map_err(from_sled)?;
                }
            }
            let offsets = db.open_tree(OFFSETS_TREE).map_err(from_sled)?;
            let groups = db.open_tree(GROUPS_TREE).map_err(from_sled)?;
            Ok(SledMetadataStore { db, offsets, groups, commits: Arc::default(), fsync: None })
        })
    }

    /// What writes wait for before they are acknowledged.
    pub fn durability(&self) -> Durability {
        match self.fsync {
            Some(_) => Durability::Fsync,
            None => Durability::SledFlush,
        }
    }

    /// The underlying database.
    pub fn db(&self) -> &sled::Db {
        &self.db
    }

    /// How many flushes this store (and its clones) have run: with
    /// concurrent committers this grows slower than the number of writes.
    pub fn flush_count(&self) -> u64 {
        self.commits.flushes()
    }

    /// Like [`MetadataStore::load_all`], but a value or key that cannot be
    /// read is skipped and reported instead of failing the whole load, so an
    /// operator can start with every readable group and see what was lost.
    pub fn load_all_skipping_unreadable(&self) -> Result<(StoredGroups, Vec<StorageError>), StorageError> {
        guarded(|| load::load_all(&self.groups, &self.offsets, Unreadable::Skip))
    }

    /// Returns once every write made before the call is durable.
    fn durable(&self) -> Result<(), StorageError> {
        self.commits.wait_durable(|| self.flush_now())
    }

    /// One flush, run by whichever writer leads it.
    fn flush_now(&self) -> Result<(), StorageError> {
        guarded(|| self.db.flush().map(drop).map_err(from_sled))?;
        match &self.fsync {
            Some(file) => {
                file.sync_data().map_err(|e| StorageError::io(format!("fsync of sled's data file: {e}")))
            }
            None => Ok(()),
        }
    }
}

impl MetadataStore for SledMetadataStore {
    fn store_group_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
        offset: &OffsetAndMetadata,
    ) -> Result<(), StorageError> {
        let key = keys::offset_key(group_id, topic, partition)?;
        let value = encode_offset(group_id, topic, partition, offset)?;
        guarded(|| self.offsets.insert(key, value).map_err(from_sled))?;
        self.durable()
    }

    fn store_group_offsets(
        &self,
        group_id: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> Result<(), StorageError> {
        match offsets {
            [] => Ok(()),
            // A plain insert is atomic on its own and avoids sled's batch lock.
            [(tp, offset)] => self.store_group_offset(group_id, &tp.topic, tp.partition, offset),
            _ => {
                // Encode everything before writing anything: bad input writes nothing.
                let mut batch = sled::Batch::default();
                for (tp, offset) in offsets {
                    let key = keys::offset_key(group_id, &tp.topic, tp.partition)?;
                    batch.insert(key, encode_offset(group_id, &tp.topic, tp.partition, offset)?);
                }
                guarded(|| self.offsets.apply_batch(batch).map_err(from_sled))?;
                self.durable()
            }
        }
    }

    fn fetch_group_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
    ) -> Result<Option<OffsetAndMetadata>, StorageError> {
        let key = keys::offset_key(group_id, topic, partition)?;
        guarded(|| {
            let Some(value) = self.offsets.get(key).map_err(from_sled)? else { return Ok(None) };
            let parsed = keys::OffsetKey { group_id, topic, partition };
            decode_offset(&parsed, &value).map(Some)
        })
    }

    fn fetch_group_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
        let prefix = keys::group_prefix(group_id)?;
        guarded(|| {
            let mut group = GroupOffsets::new(group_id);
            for entry in self.offsets.scan_prefix(prefix) {
                let (key, value) = entry.map_err(from_sled)?;
                let parsed = keys::parse_offset_key(&key).map_err(|reason| StorageError::Corrupt {
                    group_id: group_id.to_owned(),
                    key: keys::display_raw_key(OFFSETS_TREE, &key),
                    reason: format!("malformed key: {reason}"),
                })?;
                let offset = decode_offset(&parsed, &value)?;
                group.offsets.entry(parsed.topic.to_owned()).or_default().insert(parsed.partition, offset);
            }
            Ok(group)
        })
    }

    fn delete_group_offsets(&self, group_id: &str) -> Result<(), StorageError> {
        let prefix = keys::group_prefix(group_id)?;
        guarded(|| {
            let mut batch = sled::Batch::default();
            let mut count = 0usize;
            for key in self.offsets.scan_prefix(prefix).keys() {
                batch.remove(key.map_err(from_sled)?);
                count += 1;
            }
            match count {
                0 => Ok(()),
                _ => self.offsets.apply_batch(batch).map_err(from_sled),
            }
        })?;
        self.durable()
    }

    fn delete_group_partitions(
        &self,
        group_id: &str,
        partitions: &[TopicPartition],
    ) -> Result<(), StorageError> {
        match partitions {
            [] => return Ok(()),
            // A plain remove is atomic on its own and avoids sled's batch lock.
            [tp] => {
                let key = keys::offset_key(group_id, &tp.topic, tp.partition)?;
                guarded(|| self.offsets.remove(key).map_err(from_sled))?;
                return self.durable();
            }
            _ => {}
        }
        let mut batch = sled::Batch::default();
        for tp in partitions {
            batch.remove(keys::offset_key(group_id, &tp.topic, tp.partition)?);
        }
        guarded(|| self.offsets.apply_batch(batch).map_err(from_sled))?;
        self.durable()
    }

    fn store_group_metadata(&self, record: &GroupMetadataRecord) -> Result<(), StorageError> {
        let value = codec::encode_group(record).map_err(|reason| StorageError::InvalidInput {
            message: format!("group {:?} cannot be encoded: {reason}", record.group_id),
        })?;
        guarded(|| self.groups.insert(record.group_id.as_bytes(), value).map_err(from_sled))?;
        self.durable()
    }

    fn fetch_group_metadata(&self, group_id: &str) -> Result<Option<GroupMetadataRecord>, StorageError> {
        guarded(|| {
            let Some(value) = self.groups.get(group_id.as_bytes()).map_err(from_sled)? else {
                return Ok(None);
            };
            decode_group(group_id, &value).map(Some)
        })
    }

    fn delete_group_metadata(&self, group_id: &str) -> Result<(), StorageError> {
        guarded(|| self.groups.remove(group_id.as_bytes()).map_err(from_sled))?;
        self.durable()
    }

    fn load_all(&self) -> Result<StoredGroups, StorageError> {
        guarded(|| load::load_all(&self.groups, &self.offsets, Unreadable::Fail).map(|(stored, _)| stored))
    }
}

fn encode_offset(
    group_id: &str,
    topic: &str,
    partition: i32,
    offset: &OffsetAndMetadata,
) -> Result<Vec<u8>, StorageError> {
    codec::encode_offset(offset).map_err(|reason| StorageError::InvalidInput {
        message: format!(
            "offset {} cannot be encoded: {reason}",
            keys::display_offset_key(group_id, topic, partition)
        ),
    })
}

pub(crate) fn decode_offset(
    key: &keys::OffsetKey<'_>,
    value: &[u8],
) -> Result<OffsetAndMetadata, StorageError> {
    codec::decode_offset(value).map_err(|e| decode_error(e, key.group_id, key.display()))
}

pub(crate) fn decode_group(group_id: &str, value: &[u8]) -> Result<GroupMetadataRecord, StorageError> {
    let key = || keys::display_group_key(group_id);
    let record = codec::decode_group(value).map_err(|e| decode_error(e, group_id, key()))?;
    if record.group_id != group_id {
        return Err(StorageError::Corrupt {
            group_id: group_id.to_owned(),
            key: key(),
            reason: format!("the record names group {:?}", record.group_id),
        });
    }
    Ok(record)
}

fn decode_error(e: DecodeError, group_id: &str, key: String) -> StorageError {
    match e {
        DecodeError::UnknownVersion(version) => {
            StorageError::UnknownFormatVersion { group_id: group_id.to_owned(), key, version }
        }
        DecodeError::Corrupt(reason) => StorageError::Corrupt { group_id: group_id.to_owned(), key, reason },
    }
}

/// Opens sled's database, waiting (bounded) for a lock a closing handle holds.
fn open_db(path: &Path) -> Result<sled::Db, StorageError> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match guarded(|| Ok(sled::open(path))) {
            Ok(Ok(db)) => return Ok(db),
            Ok(Err(sled::Error::Io(e)))
                if e.to_string().contains("could not acquire lock")
                    && start.elapsed() < SledMetadataStore::LOCK_WAIT =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Ok(Err(e)) => return Err(from_sled(e)),
            Err(e) => return Err(e),
        }
    }
}

/// Maps sled's errors onto the contract's.
pub(crate) fn from_sled(e: sled::Error) -> StorageError {
    match e {
        sled::Error::Io(e) => StorageError::io(format!("sled I/O error: {e}")),
        sled::Error::Corruption { at, .. } => match at {
            Some(at) => StorageError::io(format!("sled found corrupt data at {at}")),
            None => StorageError::io("sled found corrupt data"),
        },
        sled::Error::CollectionNotFound(name) => StorageError::Unavailable {
            message: format!("sled tree {:?} was dropped", String::from_utf8_lossy(&name)),
        },
        other => StorageError::io(format!("sled failed: {other}")),
    }
}

/// Runs a sled call, turning a panic inside sled (it has a few on damaged
/// data) into an error so one bad page cannot take the coordinator down.
fn guarded<T>(f: impl FnOnce() -> Result<T, StorageError>) -> Result<T, StorageError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        Err(StorageError::io(format!("sled panicked: {what}")))
    })
}
