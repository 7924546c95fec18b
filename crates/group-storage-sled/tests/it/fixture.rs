//! Stores written by earlier builds still open and load as they did: the
//! fixture under `tests/fixtures/store-v3` was written by the build before
//! the shared record codec (`examples/write_fixture.rs`), with the appends of
//! `fixture_records`, and `expected.txt` / `epochs.txt` hold what that build
//! loaded from it.

use std::path::Path;

use group_offsets::{CoordinatorPartition, MetadataStore, OwnerEpoch, fold};
use group_storage_sled::{SledMetadataStore, SledOptions};

use crate::common::ScratchDir;
use crate::fixture_records::{FIXTURE_PARTITIONS, canonical, fixture_appends};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// A copy of the fixture store (opening a store writes to it).
fn copy_of_fixture(dir: &ScratchDir) -> std::path::PathBuf {
    let to = dir.db();
    std::fs::create_dir_all(to.join("blobs")).unwrap();
    for entry in std::fs::read_dir(fixture("store-v3")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    to
}

fn open(path: &Path) -> SledMetadataStore {
    SledMetadataStore::open_with_options(path, SledOptions::new().partitions(FIXTURE_PARTITIONS)).unwrap()
}

#[test]
fn a_store_of_the_landed_build_loads_as_it_did() {
    let dir = ScratchDir::new("fixture");
    let store = open(&copy_of_fixture(&dir));
    let expected = std::fs::read_to_string(fixture("expected.txt")).unwrap();
    assert_eq!(canonical(store.load_all().unwrap()), expected);
    let epochs: Vec<String> = (0..FIXTURE_PARTITIONS)
        .map(|p| store.owner_epoch(CoordinatorPartition(p)).unwrap().0.to_string())
        .collect();
    assert_eq!(epochs.join(" ") + "\n", std::fs::read_to_string(fixture("epochs.txt")).unwrap());
}

#[test]
fn the_fixture_holds_the_fold_of_its_appends() {
    // What the landed build loaded is what the shared fold makes of the appends.
    let records = fixture_appends().into_iter().flat_map(|(_, _, records)| records);
    let expected = std::fs::read_to_string(fixture("expected.txt")).unwrap();
    assert_eq!(canonical(fold(records)), expected);
}

#[test]
fn a_store_of_the_landed_build_takes_new_writes_beside_its_old_values() {
    let dir = ScratchDir::new("fixture-writes");
    let path = copy_of_fixture(&dir);
    let mut appends = fixture_appends();
    // Rewrite every record with this build's codec, then reopen: the same state.
    {
        let store = open(&path);
        for (group, _, records) in appends.drain(..) {
            let p = store.partition_of(group);
            store.append_blocking(p, store.owner_epoch(p).unwrap(), records).unwrap();
        }
    }
    let store = open(&path);
    let expected = std::fs::read_to_string(fixture("expected.txt")).unwrap();
    assert_eq!(canonical(store.load_all().unwrap()), expected);
    assert!(store.owner_epoch(CoordinatorPartition(0)).unwrap() >= OwnerEpoch(1));
}
