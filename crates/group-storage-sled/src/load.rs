//! Loading everything at start-up, the offsets tree split into key ranges
//! read in parallel (sled's iterator costs about a microsecond per entry, so
//! one thread alone would spend over a second on 1,000,000 offsets).

use std::collections::BTreeMap;
use std::ops::Bound;

use group_offsets::{StorageError, StoredGroups};
use group_types::{GroupOffsets, OffsetAndMetadata};

use crate::keys::{self, GROUPS_TREE, OFFSETS_TREE};
use crate::store::{decode_group, decode_offset, from_sled};

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

/// Everything in both trees, with what was skipped (always empty for
/// [`Unreadable::Fail`]). Offsets come back in group id order.
pub(crate) fn load_all(
    groups: &sled::Tree,
    offsets: &sled::Tree,
    mode: Unreadable,
) -> Result<(StoredGroups, Vec<StorageError>), StorageError> {
    let parts = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let mut bounds = vec![None];
    bounds.extend(split_points(offsets, parts)?.into_iter().map(Some));
    bounds.push(None);
    let ranges: Vec<KeyRange<'_>> = bounds.windows(2).map(|w| (w[0].as_deref(), w[1].as_deref())).collect();

    let (records, loaded) = std::thread::scope(|s| {
        let handles: Vec<_> =
            ranges[1..].iter().map(|&(lo, hi)| s.spawn(move || load_range(offsets, lo, hi, mode))).collect();
        let records = load_records(groups, mode);
        let mut loaded = vec![load_range(offsets, ranges[0].0, ranges[0].1, mode)];
        for handle in handles {
            loaded.push(handle.join().unwrap_or_else(|_| Err(StorageError::io("an offset loader panicked"))));
        }
        (records, loaded)
    });

    let (groups, mut problems) = records?;
    let mut all: Vec<GroupOffsets> = Vec::new();
    for part in loaded {
        let (part, part_problems) = part?;
        problems.extend(part_problems);
        for group in part {
            match all.last_mut() {
                // A group cut in two by a range boundary.
                Some(last) if last.group_id == group.group_id => {
                    for (topic, partitions) in group.offsets {
                        last.offsets.entry(topic).or_default().extend(partitions);
                    }
                }
                _ => all.push(group),
            }
        }
    }
    // The key layout orders groups by id length first; callers get id order.
    all.sort_unstable_by(|a, b| a.group_id.cmp(&b.group_id));
    Ok((StoredGroups { groups, offsets: all }, problems))
}

fn load_records(
    groups: &sled::Tree,
    mode: Unreadable,
) -> Result<(Vec<group_offsets::GroupMetadataRecord>, Vec<StorageError>), StorageError> {
    let mut records = Vec::new();
    let mut problems = Vec::new();
    for entry in groups.iter() {
        let (key, value) = entry.map_err(from_sled)?;
        let record = std::str::from_utf8(&key)
            .map_err(|e| StorageError::Corrupt {
                group_id: String::from_utf8_lossy(&key).into_owned(),
                key: keys::display_raw_key(GROUPS_TREE, &key),
                reason: format!("group id is not UTF-8: {e}"),
            })
            .and_then(|group_id| decode_group(group_id, &value));
        match (record, mode) {
            (Ok(record), _) => records.push(record),
            (Err(e), Unreadable::Fail) => return Err(e),
            (Err(e), Unreadable::Skip) => problems.push(e),
        }
    }
    Ok((records, problems))
}

/// The offsets with keys in `[lo, hi)`, grouped, in key order.
fn load_range(
    offsets: &sled::Tree,
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
    mode: Unreadable,
) -> Result<(Vec<GroupOffsets>, Vec<StorageError>), StorageError> {
    let range = (lo.map_or(Bound::Unbounded, Bound::Included), hi.map_or(Bound::Unbounded, Bound::Excluded));
    let mut out = Vec::new();
    let mut problems = Vec::new();
    // Keys of one group are contiguous, and within it those of one topic:
    // gather a topic's partitions and hand them over when the topic changes.
    let mut current: Option<GroupOffsets> = None;
    let mut topic = String::new();
    let mut partitions = BTreeMap::new();
    for entry in offsets.range::<&[u8], _>(range) {
        let (key, value) = entry.map_err(from_sled)?;
        let decoded = keys::parse_offset_key(&key)
            .map_err(|reason| StorageError::Corrupt {
                group_id: String::new(),
                key: keys::display_raw_key(OFFSETS_TREE, &key),
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
        if current.as_ref().is_none_or(|g| g.group_id != parsed.group_id) {
            finish_topic(&mut current, &mut topic, &mut partitions);
            out.extend(current.take());
            current = Some(GroupOffsets::new(parsed.group_id));
        }
        if topic != parsed.topic {
            finish_topic(&mut current, &mut topic, &mut partitions);
            parsed.topic.clone_into(&mut topic);
        }
        partitions.insert(parsed.partition, offset);
    }
    finish_topic(&mut current, &mut topic, &mut partitions);
    out.extend(current.take());
    Ok((out, problems))
}

/// Moves the partitions gathered for `topic` into the current group.
fn finish_topic(
    current: &mut Option<GroupOffsets>,
    topic: &mut String,
    partitions: &mut BTreeMap<i32, OffsetAndMetadata>,
) {
    if partitions.is_empty() {
        return;
    }
    let partitions = std::mem::take(partitions);
    if let Some(group) = current.as_mut() {
        group.offsets.entry(std::mem::take(topic)).or_default().extend(partitions);
    }
}

/// Up to `parts - 1` increasing keys cutting the tree's key range into
/// roughly even slices: the 8 bytes after the first and last keys' common
/// prefix are read as numbers and the interval between them cut evenly. Any
/// increasing points are correct (ranges cover every key); good ones only
/// balance the work.
fn split_points(tree: &sled::Tree, parts: usize) -> Result<Vec<Vec<u8>>, StorageError> {
    if parts < 2 {
        return Ok(Vec::new());
    }
    let (Some((first, _)), Some((last, _))) =
        (tree.first().map_err(from_sled)?, tree.last().map_err(from_sled)?)
    else {
        return Ok(Vec::new());
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
        if point.as_slice() > first.as_ref() && points.last().is_none_or(|p| *p < point) {
            points.push(point);
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_points_are_increasing_and_inside_the_key_range() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let tree = db.open_tree("t").unwrap();
        assert!(split_points(&tree, 4).unwrap().is_empty(), "an empty tree is not split");
        for g in 0..100 {
            tree.insert(keys::offset_key(&format!("group-{g:03}"), "t", 0).unwrap(), &[1u8][..]).unwrap();
        }
        let points = split_points(&tree, 4).unwrap();
        assert_eq!(points.len(), 3);
        assert!(points.windows(2).all(|w| w[0] < w[1]));
        // Roughly even: every slice holds some keys.
        let mut bounds = vec![None];
        bounds.extend(points.iter().map(|p| Some(p.as_slice())));
        bounds.push(None);
        for w in bounds.windows(2) {
            let range = (
                w[0].map_or(Bound::Unbounded, Bound::Included),
                w[1].map_or(Bound::Unbounded, Bound::Excluded),
            );
            let count = tree.range::<&[u8], _>(range).count();
            assert!((10..=50).contains(&count), "slice {w:?} holds {count} keys");
        }
        assert!(split_points(&tree, 1).unwrap().is_empty());
    }

    #[test]
    fn a_group_cut_by_a_boundary_is_merged() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let (groups, offsets) = (db.open_tree("g").unwrap(), db.open_tree("o").unwrap());
        let value = crate::codec::encode_offset(&OffsetAndMetadata::new(5, 1)).unwrap();
        for topic in ["a", "b"] {
            for partition in 0..50 {
                offsets
                    .insert(keys::offset_key("only", topic, partition).unwrap(), value.as_slice())
                    .unwrap();
            }
        }
        let cut = keys::offset_key("only", "a", 30).unwrap();
        let (first, _) = load_range(&offsets, None, Some(&cut), Unreadable::Fail).unwrap();
        let (second, _) = load_range(&offsets, Some(&cut), None, Unreadable::Fail).unwrap();
        assert_eq!((first[0].len(), second[0].len()), (30, 70));
        let (stored, problems) = load_all(&groups, &offsets, Unreadable::Fail).unwrap();
        assert!(problems.is_empty());
        assert_eq!(stored.offsets.len(), 1);
        assert_eq!(stored.offsets[0].len(), 100);
    }
}
