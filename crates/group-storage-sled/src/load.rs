//! Reading partitions back: one partition's epoch, group records, offsets and
//! consumer-group records (prefix scans), with the offsets split into key ranges read in parallel
//! (sled's iterator costs about a microsecond per entry, so one thread alone
//! would spend over a second on 1,000,000 offsets), and every partition for
//! `load_all`, partitions spread over a few threads.

use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use group_offsets::{
    CoordinatorPartition, Fold, GroupMetadataRecord, LoadedPartition, ModernGroupRecord, OwnerEpoch,
    PartitionOffsets, Record, StorageError, StoredGroups, TxnOffsetRecord,
};
use group_types::{OffsetAndMetadata, TopicPartition};

use crate::codec::{self, DecodeError};
use crate::keys::{self, ConsumerKey, OffsetKey, PARTITIONS_TREE};
use crate::store::from_sled;

/// Keys from the first bound (included) to the second (excluded); `None` is open.
type KeyRange<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// What loading does with a value or key it cannot read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// Stop and return the error.
    Fail,
    /// Skip it and report it with the result.
    Skip,
}

/// How many threads a load may use.
pub(crate) fn parallelism() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8)
}

/// A partition's owner epoch (`OwnerEpoch(0)` when it never accepted one).
pub(crate) fn read_epoch(
    tree: &sled::Tree,
    partition: CoordinatorPartition,
) -> Result<OwnerEpoch, StorageError> {
    match tree.get(keys::epoch_key(partition)).map_err(from_sled)? {
        None => Ok(OwnerEpoch(0)),
        Some(value) => codec::decode_epoch(&value)
            .map_err(|e| decode_error(&e, String::new(), keys::display_epoch_key(partition))),
    }
}

/// Everything `partition` holds, with what was skipped (always empty for
/// [`Unreadable::Fail`]), its offsets read by up to `parts` threads. An
/// unreadable epoch is reported as `OwnerEpoch(0)` when skipping.
pub(crate) fn load_partition(
    tree: &sled::Tree,
    partition: CoordinatorPartition,
    mode: Unreadable,
    parts: usize,
) -> Result<(LoadedPartition, Vec<StorageError>), StorageError> {
    let mut problems = Vec::new();
    let epoch = match (read_epoch(tree, partition), mode) {
        (Ok(epoch), _) => epoch,
        (Err(e @ StorageError::Io { .. }), _) | (Err(e), Unreadable::Fail) => return Err(e),
        (Err(e), Unreadable::Skip) => {
            problems.push(e);
            OwnerEpoch(0)
        }
    };
    // Every key holds the last record of its key (a tombstone removed it), so
    // folding them in any order gives the partition's state.
    let (mut fold, offset_problems) = load_offsets(tree, partition, mode, parts)?;
    problems.extend(offset_problems);
    let (groups, group_problems) = load_records(tree, partition, mode)?;
    problems.extend(group_problems);
    fold.apply(groups.into_iter().map(|g| Record::Group(Box::new(g))));
    let (consumer, consumer_problems) = load_consumer(tree, partition, mode)?;
    problems.extend(consumer_problems);
    fold.apply(consumer.into_iter().map(Record::Modern));
    let (txn, txn_problems) = load_txn_offsets(tree, partition, mode)?;
    problems.extend(txn_problems);
    fold.apply(txn.into_iter().map(|t| Record::TxnOffset(Box::new(t))));
    Ok((LoadedPartition { epoch, groups: fold.into_stored() }, problems))
}

/// Every partition below `partitions`, each read whole by `load_one` on one
/// of a few threads.
pub(crate) fn load_all(
    partitions: u32,
    load_one: impl Fn(CoordinatorPartition) -> Result<(LoadedPartition, Vec<StorageError>), StorageError> + Sync,
) -> Result<(StoredGroups, Vec<StorageError>), StorageError> {
    let workers = parallelism().min(partitions as usize).max(1);
    let next = AtomicU32::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let p = next.fetch_add(1, Ordering::Relaxed);
            if p >= partitions {
                return done;
            }
            done.push((p, load_one(CoordinatorPartition(p))));
        }
    };
    let mut results = std::thread::scope(|s| {
        let handles: Vec<_> = (1..workers).map(|_| s.spawn(work)).collect();
        let mut results = work();
        for handle in handles {
            match handle.join() {
                Ok(more) => results.extend(more),
                Err(_) => results.push((u32::MAX, Err(StorageError::io("a partition loader panicked")))),
            }
        }
        results
    });
    // By partition, so the error reported is always the same one.
    results.sort_unstable_by_key(|(p, _)| *p);
    let mut all = StoredGroups::default();
    let mut problems = Vec::new();
    for (_, result) in results {
        let (loaded, skipped) = result?;
        all.extend(loaded.groups);
        problems.extend(skipped);
    }
    Ok((all, problems))
}

/// The group records of `partition`, in group id order.
fn load_records(
    tree: &sled::Tree,
    partition: CoordinatorPartition,
    mode: Unreadable,
) -> Result<(Vec<GroupMetadataRecord>, Vec<StorageError>), StorageError> {
    let mut records = Vec::new();
    let mut problems = Vec::new();
    for entry in tree.scan_prefix(keys::groups_prefix(partition)) {
        let (key, value) = entry.map_err(from_sled)?;
        let record = keys::parse_group_key(&key)
            .map_err(|reason| StorageError::Corrupt {
                group_id: String::from_utf8_lossy(key.get(5..).unwrap_or_default()).into_owned(),
                key: keys::display_raw_key(PARTITIONS_TREE, &key),
                reason: format!("malformed key: {reason}"),
            })
            .and_then(|group_id| decode_group(partition, group_id, &value));
        match (record, mode) {
            (Ok(record), _) => records.push(record),
            (Err(e), Unreadable::Fail) => return Err(e),
            (Err(e), Unreadable::Skip) => problems.push(e),
        }
    }
    Ok((records, problems))
}

/// The consumer-group records of `partition`, in key order (a group's
/// records together). Only live records are stored: a tombstone removed its key.
fn load_consumer(
    tree: &sled::Tree,
    partition: CoordinatorPartition,
    mode: Unreadable,
) -> Result<(Vec<ModernGroupRecord>, Vec<StorageError>), StorageError> {
    let mut records = Vec::new();
    let mut problems = Vec::new();
    // A group's records share one `Arc` for its id, as appended records do.
    let mut group: Option<Arc<str>> = None;
    for entry in tree.scan_prefix(keys::consumer_prefix(partition)) {
        let (key, value) = entry.map_err(from_sled)?;
        let record = keys::parse_consumer_key(&key)
            .map_err(|reason| StorageError::Corrupt {
                group_id: String::new(),
                key: keys::display_raw_key(PARTITIONS_TREE, &key),
                reason: format!("malformed key: {reason}"),
            })
            .and_then(|parsed| {
                let id = match &group {
                    Some(id) if **id == *parsed.group_id => Arc::clone(id),
                    _ => Arc::clone(group.insert(Arc::from(parsed.group_id))),
                };
                decode_consumer(&parsed, id, &value)
            });
        match (record, mode) {
            (Ok(record), _) => records.push(record),
            (Err(e), Unreadable::Fail) => return Err(e),
            (Err(e), Unreadable::Skip) => problems.push(e),
        }
    }
    Ok((records, problems))
}

/// The pending transactional offsets of `partition`, in key order.
fn load_txn_offsets(
    tree: &sled::Tree,
    partition: CoordinatorPartition,
    mode: Unreadable,
) -> Result<(Vec<TxnOffsetRecord>, Vec<StorageError>), StorageError> {
    let mut records = Vec::new();
    let mut problems = Vec::new();
    for entry in tree.scan_prefix(keys::txn_offsets_prefix(partition)) {
        let (key, value) = entry.map_err(from_sled)?;
        let shown = || keys::display_raw_key(PARTITIONS_TREE, &key);
        let record = keys::parse_txn_offset_key(&key)
            .map_err(|reason| StorageError::Corrupt {
                group_id: String::new(),
                key: shown(),
                reason: format!("malformed key: {reason}"),
            })
            .and_then(|k| {
                let tp = TopicPartition::new(k.topic, k.partition);
                group_offsets::codec::decode_txn_offset_value(
                    Arc::from(k.group_id),
                    k.producer_id,
                    tp,
                    &value,
                )
                .map_err(|e| decode_error(&DecodeError::from(e), k.group_id.to_owned(), shown()))
            });
        match (record, mode) {
            (Ok(record), _) => records.push(record),
            (Err(e), Unreadable::Fail) => return Err(e),
            (Err(e), Unreadable::Skip) => problems.push(e),
        }
    }
    Ok((records, problems))
}

/// The fold of the offsets of `partition`, read in up to `parts` key ranges at once.
fn load_offsets(
    tree: &sled::Tree,
    partition: CoordinatorPartition,
    mode: Unreadable,
    parts: usize,
) -> Result<(Fold, Vec<StorageError>), StorageError> {
    let (start, end) = (keys::offsets_prefix(partition), keys::offsets_end(partition));
    let mut bounds = vec![Some(start.to_vec())];
    bounds.extend(split_points(tree, &start, &end, parts)?.into_iter().map(Some));
    bounds.push(Some(end.to_vec()));
    let ranges: Vec<KeyRange<'_>> = bounds.windows(2).map(|w| (w[0].as_deref(), w[1].as_deref())).collect();

    let loaded = std::thread::scope(|s| {
        let handles: Vec<_> =
            ranges[1..].iter().map(|&(lo, hi)| s.spawn(move || load_range(tree, lo, hi, mode))).collect();
        let mut loaded = vec![load_range(tree, ranges[0].0, ranges[0].1, mode)];
        for handle in handles {
            loaded.push(handle.join().unwrap_or_else(|_| Err(StorageError::io("an offset loader panicked"))));
        }
        loaded
    });

    let mut problems = Vec::new();
    let mut all = Fold::new();
    for part in loaded {
        let (part, part_problems) = part?;
        problems.extend(part_problems);
        // Ranges share no key (a group cut by a boundary has half its offsets in each).
        all.merge(part);
    }
    Ok((all, problems))
}

/// The fold of the offsets with keys in `[lo, hi)`.
pub(crate) fn load_range(
    tree: &sled::Tree,
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
    mode: Unreadable,
) -> Result<(Fold, Vec<StorageError>), StorageError> {
    let range = (lo.map_or(Bound::Unbounded, Bound::Included), hi.map_or(Bound::Unbounded, Bound::Excluded));
    let mut fold = Fold::new();
    let mut problems = Vec::new();
    // Keys of one group are contiguous, and within it those of one topic:
    // a topic's offsets are gathered and folded together when it ends.
    let mut group: Arc<str> = Arc::from("");
    let mut topic: Arc<str> = Arc::from("");
    let mut partitions = PartitionOffsets::default();
    for entry in tree.range::<&[u8], _>(range) {
        let (key, value) = entry.map_err(from_sled)?;
        let decoded = keys::parse_offset_key(&key)
            .map_err(|reason| StorageError::Corrupt {
                group_id: String::new(),
                key: keys::display_raw_key(PARTITIONS_TREE, &key),
                reason: format!("malformed key: {reason}"),
            })
            .and_then(|parsed| decode_offset(&parsed, &value).map(|offset| (parsed, offset)));
        let (parsed, offset) = match (decoded, mode) {
            (Ok(decoded), _) => decoded,
            (Err(e), Unreadable::Fail) => return Err(e),
            (Err(e), Unreadable::Skip) => {
                problems.push(e);
                continue;
            }
        };
        if *group != *parsed.group_id || *topic != *parsed.topic {
            fold.apply_offsets(&group, &topic, std::mem::take(&mut partitions));
            if *group != *parsed.group_id {
                group = Arc::from(parsed.group_id);
            }
            topic = Arc::from(parsed.topic);
        }
        partitions.insert(parsed.partition, offset);
    }
    fold.apply_offsets(&group, &topic, partitions);
    Ok((fold, problems))
}

/// Up to `parts - 1` increasing keys cutting the keys of `[start, end)` into
/// roughly even slices: the 8 bytes after the first and last keys' common
/// prefix are read as numbers and the interval between them cut evenly. Any
/// increasing points inside the range are correct (ranges cover every key);
/// good ones only balance the work.
fn split_points(
    tree: &sled::Tree,
    start: &[u8],
    end: &[u8],
    parts: usize,
) -> Result<Vec<Vec<u8>>, StorageError> {
    if parts < 2 {
        return Ok(Vec::new());
    }
    let mut range = tree.range::<&[u8], _>(start..end);
    let first = match range.next() {
        Some(entry) => entry.map_err(from_sled)?.0,
        None => return Ok(Vec::new()),
    };
    let last = match range.next_back() {
        Some(entry) => entry.map_err(from_sled)?.0,
        None => return Ok(Vec::new()),
    };
    let common = first.iter().zip(last.iter()).take_while(|(a, b)| a == b).count();
    let window = |key: &[u8]| {
        let mut bytes = [0u8; 8];
        for (slot, byte) in bytes.iter_mut().zip(&key[common..]) {
            *slot = *byte;
        }
        u128::from(u64::from_be_bytes(bytes))
    };
    let (lo, hi) = (window(&first), window(&last));
    let mut points: Vec<Vec<u8>> = Vec::new();
    for i in 1..parts {
        let cut = lo + (hi.saturating_sub(lo)) * i as u128 / parts as u128;
        let mut point = first[..common].to_vec();
        point.extend_from_slice(&(cut as u64).to_be_bytes());
        if point.as_slice() > first.as_ref()
            && point.as_slice() < end
            && points.last().is_none_or(|p| *p < point)
        {
            points.push(point);
        }
    }
    Ok(points)
}

/// Decodes an offset value, naming its key in the error.
pub(crate) fn decode_offset(key: &OffsetKey<'_>, value: &[u8]) -> Result<OffsetAndMetadata, StorageError> {
    codec::decode_offset(value).map_err(|e| decode_error(&e, key.group_id.to_owned(), key.display()))
}

/// Decodes a group record value, checking that it names the group of its key.
pub(crate) fn decode_group(
    partition: CoordinatorPartition,
    group_id: &str,
    value: &[u8],
) -> Result<GroupMetadataRecord, StorageError> {
    codec::decode_group(group_id, value)
        .map_err(|e| decode_error(&e, group_id.to_owned(), keys::display_group_key(partition, group_id)))
}

/// Decodes a consumer-group record value, naming its key in the error.
pub(crate) fn decode_consumer(
    key: &ConsumerKey<'_>,
    group_id: Arc<str>,
    value: &[u8],
) -> Result<ModernGroupRecord, StorageError> {
    codec::decode_consumer(key, group_id, value)
        .map_err(|e| decode_error(&e, key.group_id.to_owned(), key.display()))
}

/// A value's error as a `StorageError` naming its key: the version found when
/// it is one this build does not know, else the error and its causes.
fn decode_error(e: &DecodeError, group_id: String, key: String) -> StorageError {
    match e.unknown_version() {
        Some(version) => StorageError::UnknownFormatVersion { group_id, key, version },
        None => StorageError::Corrupt { group_id, key, reason: codec::describe(e) },
    }
}

#[cfg(test)]
mod tests {
    use group_types::TopicPartition;

    use super::*;

    const P: CoordinatorPartition = CoordinatorPartition(3);

    fn tree() -> sled::Tree {
        let db = sled::Config::new().temporary(true).open().unwrap();
        db.open_tree("t").unwrap()
    }

    #[test]
    fn split_points_are_increasing_and_inside_the_partition() {
        let tree = tree();
        let (start, end) = (keys::offsets_prefix(P), keys::offsets_end(P));
        assert!(split_points(&tree, &start, &end, 4).unwrap().is_empty(), "an empty range is not split");
        // Neighbours that must not count.
        let other = CoordinatorPartition(4);
        tree.insert(keys::offset_key(other, "zzz", "t", 0).unwrap(), &[1u8][..]).unwrap();
        tree.insert(keys::group_key(P, "group"), &[1u8][..]).unwrap();
        for g in 0..100 {
            tree.insert(keys::offset_key(P, &format!("group-{g:03}"), "t", 0).unwrap(), &[1u8][..]).unwrap();
        }
        let points = split_points(&tree, &start, &end, 4).unwrap();
        assert_eq!(points.len(), 3);
        assert!(points.windows(2).all(|w| w[0] < w[1]));
        let mut bounds = vec![start.as_slice()];
        bounds.extend(points.iter().map(Vec::as_slice));
        bounds.push(end.as_slice());
        for w in bounds.windows(2) {
            let count = tree.range::<&[u8], _>(w[0]..w[1]).count();
            assert!((10..=50).contains(&count), "slice {w:?} holds {count} keys");
        }
        assert!(split_points(&tree, &start, &end, 1).unwrap().is_empty());
    }

    #[test]
    fn a_group_cut_by_a_boundary_is_merged() {
        let tree = tree();
        for topic in ["a", "b"] {
            for partition in 0..50 {
                let value = codec::encode_value(&Record::Offset {
                    group_id: Arc::from("only"),
                    partition: TopicPartition::new(topic, partition),
                    offset: OffsetAndMetadata::new(5, 1),
                });
                tree.insert(keys::offset_key(P, "only", topic, partition).unwrap(), value.unwrap()).unwrap();
            }
        }
        let cut = keys::offset_key(P, "only", "a", 30).unwrap();
        let (first, _) = load_range(&tree, None, Some(&cut), Unreadable::Fail).unwrap();
        let (second, _) = load_range(&tree, Some(&cut), None, Unreadable::Fail).unwrap();
        assert_eq!((first.offset_count(), second.offset_count()), (30, 70));
        for parts in [1, 3, 8] {
            let (loaded, problems) = load_partition(&tree, P, Unreadable::Fail, parts).unwrap();
            assert!(problems.is_empty());
            assert_eq!(loaded.groups.offsets.len(), 1);
            assert_eq!(loaded.groups.offsets[0].len(), 100, "{parts} parts");
        }
    }
}
