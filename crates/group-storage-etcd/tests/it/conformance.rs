//! The storage conformance suite of `group-offsets`, run against `EtcdStore`
//! (each check on a fresh prefix of one etcd), directly and under
//! `PersistentOffsetStorage`, plus the suite's reopen check.

use group_offsets::{PersistentOffsetStorage, conformance};

use crate::common::{config, connect, etcd};

#[test]
fn etcd_store_passes_the_metadata_store_suite() {
    let cluster = etcd();
    conformance::metadata_store_suite(|| connect(config(&cluster, "conformance")));
}

#[test]
fn persistent_offset_storage_over_etcd_passes_the_offset_storage_suite() {
    let cluster = etcd();
    conformance::offset_storage_suite(|| PersistentOffsetStorage::new(connect(config(&cluster, "storage"))));
}

#[test]
fn etcd_store_passes_the_restart_suite() {
    let cluster = etcd();
    let config = config(&cluster, "restart");
    let again = config.clone();
    conformance::metadata_store_restart_suite(
        || connect(config),
        |store| {
            drop(store);
            connect(again)
        },
    );
}
