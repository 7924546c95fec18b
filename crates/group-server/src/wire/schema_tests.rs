//! The schema tables against `kafka-protocol`'s own encoders, every API and version.

use bytes::Bytes;
use kafka_protocol::messages::ApiKey;
use proptest::prelude::*;

use group_types::wire::layout;

use super::{Layout, SchemaError, broker_message};
use crate::node::{SUPPORTED_APIS, visit_group_api};
use crate::test_samples::{crate_decodes, sample};
use crate::wire::{Serve, VisitServe};

/// Any API's layout: the node's own, or a group API's `Serve::SCHEMA`.
fn message(api: ApiKey) -> Option<Layout> {
    struct Schema;
    impl VisitServe for Schema {
        type Output = Layout;
        fn visit<S: Serve>(self) -> Layout {
            S::SCHEMA
        }
    }
    broker_message(api).or_else(|| visit_group_api(api, Schema))
}

fn check_body(api: ApiKey, version: i16, body: &[u8]) -> Result<(), SchemaError> {
    super::check_body(message(api), api, version, body)
}

#[test]
fn every_api_and_version_walks_exactly_what_the_crate_encodes() {
    let mut checked = 0;
    for &(api, min, max) in SUPPORTED_APIS {
        for v in min..=max {
            let body = sample(api, v);
            assert_eq!(layout::walk(message(api), api as i16, v, &body), Ok(body.len()), "{api:?} v{v}");
            assert!(crate_decodes(api, v, &body), "{api:?} v{v} sample does not decode");
            // Every strict prefix is refused (the samples end with a non-empty field).
            for cut in 0..body.len() {
                assert!(
                    layout::walk(message(api), api as i16, v, &body[..cut]).is_err() || cut == body.len(),
                    "{api:?} v{v} cut {cut}"
                );
            }
            checked += 1;
        }
    }
    assert_eq!(
        checked,
        5 + 14
            + 7
            + 10
            + 6
            + 5
            + 6
            + 8
            + 9
            + 10
            + 15
            + 11
            + 6
            + 7
            + 3
            + 1
            + 2
            + 3
            + 6
            + 2
            + 2
            + 1
            + 1
            + 5
            + 2
            // Describe-, Alter- and DeleteShareGroupOffsets v0.
            + 3
            // `share_codec`'s: ShareFetch and ShareAcknowledge v2, WriteShareGroupState,
            // ReadShareGroupStateSummary and DescribeShareGroupOffsets v1.
            + 5
            // WriteTxnMarkers v1-v2 (v2 `share_codec`'s), TxnOffsetCommit v0-v5.
            + 2
            + 6
            // DescribeConfigs v1-v4, IncrementalAlterConfigs v0-v1 and ListConfigResources
            // v0-v1 (`crate::configs`).
            + 4
            + 2
            + 2
            // `offset_codec`'s: OffsetCommit and OffsetFetch v10.
            + 2
    );
}

#[test]
fn a_huge_compact_array_count_is_refused_before_decoding() {
    // The 26-byte JoinGroup v9 body of dependencies.md 2.4: `protocols` claims ~2^31 entries.
    let mut body = vec![2, b'g', 0, 0, 0x75, 0x30, 0, 0, 0x75, 0x30, 1, 1, 9];
    body.extend_from_slice(b"consumer");
    body.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x07]);
    assert!(matches!(check_body(ApiKey::JoinGroup, 9, &body), Err(SchemaError::BadLength { .. })));
}

#[test]
fn a_huge_int32_array_is_refused() {
    // OffsetFetch v1: group "g", one topic "t", partition_indexes claiming 2^30 entries.
    let body = [0, 1, b'g', 0, 0, 0, 1, 0, 1, b't', 0x40, 0, 0, 0, 0, 0, 0, 1];
    assert!(matches!(check_body(ApiKey::OffsetFetch, 1, &body), Err(SchemaError::BadLength { .. })));
}

#[test]
fn unknown_apis_and_versions_have_no_schema() {
    assert!(matches!(check_body(ApiKey::DeleteTopics, 5, &[]), Err(SchemaError::NoSchema { .. })));
    assert!(matches!(check_body(ApiKey::ConsumerGroupHeartbeat, 2, &[]), Err(SchemaError::NoSchema { .. })));
    assert!(matches!(check_body(ApiKey::JoinGroup, 10, &[]), Err(SchemaError::NoSchema { .. })));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Whatever the bytes, a body the walk accepts decodes without the crate over-allocating:
    /// every array it will size was checked against the bytes behind it.
    #[test]
    fn mutated_samples_never_panic(api_index in 0..SUPPORTED_APIS.len(), v_off in 0i16..20,
                                   flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6)) {
        let (api, min, max) = SUPPORTED_APIS[api_index];
        let v = min + v_off % (max - min + 1);
        let mut body = sample(api, v).to_vec();
        // ApiVersions v0-2 has an empty body: grow it so there is something to flip.
        body.extend_from_slice(&[0; 4]);
        for (at, byte) in flips {
            let i = at % body.len();
            body[i] = byte;
        }
        if check_body(api, v, &body).is_ok() {
            let _ = crate_decodes(api, v, &Bytes::from(body));
        }
    }
}
