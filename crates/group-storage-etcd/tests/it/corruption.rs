//! Bad bytes in etcd (a log entry, the epoch, the snapshot metadata) give a
//! typed `StorageError` naming the key, never a panic, and the store keeps
//! working once the value is repaired.

use group_offsets::{CoordinatorPartition, MetadataStore, OwnerEpoch, StorageError};
use rstest::rstest;

use crate::common::{Raw, config, connect, etcd, offset};

const P: CoordinatorPartition = CoordinatorPartition(1);

#[rstest]
#[case::empty_entry("log/00000000000000000009", b"".as_slice())]
#[case::unknown_version("log/00000000000000000009", b"\x09\x00".as_slice())]
#[case::unknown_kind("log/00000000000000000009", b"\x01\x07\x00\x00\x00\x00\x00\x00\x00\x00".as_slice())]
#[case::truncated_batch("log/00000000000000000009", b"\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05\x02".as_slice())]
#[case::manifest_without_chunks("log/00000000000000000009", b"\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x02\x10\x00\x00\x00\x00\x00\x00\x00\x00".as_slice())]
#[case::consumer_record_cut_short("log/00000000000000000009", b"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x04\x0a\x01g\x01m\x01".as_slice())]
#[case::epoch("epoch", b"not a number".as_slice())]
#[case::snapshot_meta("snapshot", b"\x01\xff".as_slice())]
fn bad_bytes_are_a_typed_error(#[case] key: &str, #[case] value: &[u8]) {
    let cluster = etcd();
    let config = config(&cluster, "corrupt");
    let full = format!("{}/p/{:05}/{key}", config.prefix, P.0);
    let store = connect(config.clone());
    store.append_blocking(P, OwnerEpoch(1), vec![offset("g", "t", 0, 1, "")]).unwrap();
    let raw = Raw::connect(&cluster);
    raw.put(&full, value);

    // A fresh store, so nothing of the partition is cached.
    let fresh = connect(config);
    let error = fresh.load(P).expect_err("a load over bad bytes");
    match &error {
        StorageError::Corrupt { key, reason, .. } => {
            assert!(key.starts_with(&full), "{key} names {full}");
            assert!(!reason.is_empty());
        }
        StorageError::UnknownFormatVersion { key, version, .. } => {
            assert_eq!((key.as_str(), *version), (full.as_str(), 9));
        }
        other => panic!("not a typed decoding error: {other:?}"),
    }
}
