//! The storage conformance suite of `group-offsets`, run against
//! `SledMetadataStore` (each check on a fresh directory), directly and under
//! `PersistentOffsetStorage`, plus the suite's reopen check.

use std::sync::Mutex;

use group_offsets::{PersistentOffsetStorage, conformance};
use group_storage_sled::SledMetadataStore;

use crate::common::ScratchDir;

/// Opens stores on fresh directories, keeping the directories until dropped.
#[derive(Debug, Default)]
struct Stores(Mutex<Vec<ScratchDir>>);

impl Stores {
    fn open(&self, name: &str) -> SledMetadataStore {
        let dir = ScratchDir::new(name);
        let store = SledMetadataStore::open(dir.db()).expect("open a fresh store");
        self.0.lock().expect("scratch list").push(dir);
        store
    }
}

#[test]
fn sled_metadata_store_passes_the_metadata_store_suite() {
    let stores = Stores::default();
    conformance::metadata_store_suite(|| stores.open("conformance"));
}

#[test]
fn persistent_offset_storage_over_sled_passes_the_offset_storage_suite() {
    let stores = Stores::default();
    conformance::offset_storage_suite(|| PersistentOffsetStorage::new(stores.open("conformance-storage")));
}

#[test]
fn sled_metadata_store_passes_the_restart_suite() {
    let dir = ScratchDir::new("conformance-restart");
    conformance::metadata_store_restart_suite(
        || SledMetadataStore::open(dir.db()).expect("open"),
        |store| {
            drop(store);
            SledMetadataStore::open(dir.db()).expect("reopen")
        },
    );
}
