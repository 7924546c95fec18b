//! Owner epochs: a lower epoch is fenced and changes nothing, a higher one is
//! stored with the records it came with, per partition, across reopening.

use group_offsets::{MetadataStore, Record, StorageError};
use group_storage_sled::SledMetadataStore;
use rstest::rstest;

use crate::common::{ScratchDir, commit, epoch, offset, partition, record};

#[test]
fn a_fresh_partition_has_epoch_zero() {
    let dir = ScratchDir::new("epoch-zero");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    assert_eq!(store.owner_epoch(partition(0)).unwrap(), epoch(0));
    assert_eq!(store.load(partition(0)).unwrap().epoch, epoch(0));
}

#[rstest]
#[case::lower(2, Err(()))]
#[case::equal(3, Ok(3))]
#[case::higher(4, Ok(4))]
fn an_append_is_checked_against_the_partition_epoch(#[case] next: u64, #[case] expected: Result<u64, ()>) {
    let dir = ScratchDir::new("epoch-check");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    let p = partition(9);
    store.append_blocking(p, epoch(3), vec![commit("g", "t", 0, offset(1))]).unwrap();

    let result = store.append_blocking(
        p,
        epoch(next),
        vec![commit("g", "t", 0, offset(2)), Record::Group(Box::new(record("g", 1)))],
    );
    let loaded = store.load(p).unwrap();
    match expected {
        Err(()) => {
            assert_eq!(result, Err(StorageError::Fenced { partition: 9, epoch: next, current: 3 }));
            assert_eq!(loaded.epoch, epoch(3));
            assert_eq!(
                loaded.groups.offsets[0].get("t", 0),
                Some(&offset(1)),
                "a fenced append changes nothing"
            );
            assert!(loaded.groups.groups.is_empty());
        }
        Ok(current) => {
            result.unwrap();
            assert_eq!(loaded.epoch, epoch(current));
            assert_eq!(loaded.groups.offsets[0].get("t", 0), Some(&offset(2)));
            assert_eq!(loaded.groups.groups, vec![record("g", 1)]);
        }
    }
    assert_eq!(store.owner_epoch(p).unwrap(), loaded.epoch);
    assert_eq!(store.failed_appends(), 0, "fencing is not a storage failure");
}

#[test]
fn an_empty_append_can_raise_the_epoch_and_is_fenced_like_any_other() {
    let dir = ScratchDir::new("epoch-empty");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    let p = partition(1);
    store.append_blocking(p, epoch(7), vec![]).unwrap();
    assert_eq!(store.owner_epoch(p).unwrap(), epoch(7));
    store.append_blocking(p, epoch(7), vec![]).unwrap();
    assert!(matches!(store.append_blocking(p, epoch(6), vec![]), Err(StorageError::Fenced { .. })));
}

#[test]
fn epochs_are_per_partition_and_survive_reopening() {
    let dir = ScratchDir::new("epoch-reopen");
    {
        let store = SledMetadataStore::open(dir.db()).unwrap();
        store.append_blocking(partition(0), epoch(5), vec![commit("a", "t", 0, offset(1))]).unwrap();
        store.append_blocking(partition(1), epoch(2), vec![]).unwrap();
        store.append_blocking(partition(49), epoch(u64::MAX), vec![]).unwrap();
        // Another partition's epoch is no fence here.
        store.append_blocking(partition(2), epoch(1), vec![]).unwrap();
    }
    let store = SledMetadataStore::open(dir.db()).unwrap();
    for (p, e) in [(0, 5), (1, 2), (2, 1), (3, 0), (49, u64::MAX)] {
        assert_eq!(store.owner_epoch(partition(p)).unwrap(), epoch(e), "partition {p}");
        assert_eq!(store.load(partition(p)).unwrap().epoch, epoch(e), "partition {p}");
    }
    let err =
        store.append_blocking(partition(0), epoch(4), vec![commit("a", "t", 0, offset(2))]).unwrap_err();
    assert_eq!(err, StorageError::Fenced { partition: 0, epoch: 4, current: 5 });
    assert_eq!(
        store.fetch_group_offset("a", "t", 0).unwrap(),
        None,
        "the record went to partition 0, not a's"
    );
    assert_eq!(store.load(partition(0)).unwrap().groups.offsets[0].get("t", 0), Some(&offset(1)));
}

#[test]
fn the_seed_methods_write_at_the_current_epoch() {
    let dir = ScratchDir::new("epoch-seed");
    let store = SledMetadataStore::open(dir.db()).unwrap();
    let p = store.partition_of("g");
    store.append_blocking(p, epoch(11), vec![]).unwrap();
    store.store_group_offset("g", "t", 0, &offset(1)).unwrap();
    store.delete_group_offsets("g").unwrap();
    assert_eq!(store.owner_epoch(p).unwrap(), epoch(11));
}
