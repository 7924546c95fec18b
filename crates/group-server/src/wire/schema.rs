//! The layouts of the requests the node answers itself, for the bounds-checking walk
//! (`group_types::wire::layout`) every body passes before `kafka-protocol` decodes it.
//! A group API's layout is its `WireRequest::LAYOUT` beside its message in group-types,
//! or its `WireApi::SCHEMA` where it has a file here. All are checked against the
//! crate's own encoders in the tests.

pub use group_types::wire::layout::SchemaError;
pub(crate) use group_types::wire::layout::{ALL, Layout, Struct, Ty, always, f, plain};
use group_types::wire::layout::{tag, tagged};
use kafka_protocol::messages::ApiKey;

use Ty::*;

static SASL_HANDSHAKE: Struct = plain(&[always(Str)]);
static SASL_AUTHENTICATE: Struct = plain(&[always(Bytes)]);
static API_VERSIONS: Struct = plain(&[f(Str, 3, ALL), f(Str, 3, ALL)]);

static METADATA_TOPIC: Struct = plain(&[f(Uuid, 10, ALL), always(Str)]);
static METADATA: Struct =
    plain(&[always(Arr(&METADATA_TOPIC)), f(Bool, 4, ALL), f(Bool, 8, 10), f(Bool, 8, ALL)]);

static FIND_COORDINATOR: Struct = plain(&[f(Str, 0, 3), f(I8, 1, ALL), f(ArrStr, 4, ALL)]);

static LIST_OFFSETS_PARTITION: Struct = plain(&[always(I32), f(I32, 4, ALL), always(I64)]);
static LIST_OFFSETS_TOPIC: Struct = plain(&[always(Str), always(Arr(&LIST_OFFSETS_PARTITION))]);
static LIST_OFFSETS: Struct =
    plain(&[always(I32), f(I8, 2, ALL), always(Arr(&LIST_OFFSETS_TOPIC)), f(I32, 10, ALL)]);

static FETCH_PARTITION: Struct = tagged(
    &[always(I32), f(I32, 9, ALL), always(I64), f(I32, 12, ALL), f(I64, 5, ALL), always(I32)],
    &[tag(0, Uuid, 17), tag(1, I64, 18)],
);
static FETCH_TOPIC: Struct = plain(&[f(Str, 0, 12), f(Uuid, 13, ALL), always(Arr(&FETCH_PARTITION))]);
static FORGOTTEN_TOPIC: Struct = plain(&[f(Str, 7, 12), f(Uuid, 13, ALL), f(ArrI32, 7, ALL)]);
static REPLICA_STATE: Struct = plain(&[f(I32, 15, ALL), f(I64, 15, ALL)]);
static FETCH: Struct = tagged(
    &[
        f(I32, 0, 14),
        always(I32),
        always(I32),
        always(I32),
        always(I8),
        f(I32, 7, ALL),
        f(I32, 7, ALL),
        always(Arr(&FETCH_TOPIC)),
        f(Arr(&FORGOTTEN_TOPIC), 7, ALL),
        f(Str, 11, ALL),
    ],
    &[tag(0, Str, 0), tag(1, Inline(&REPLICA_STATE), 15)],
);

static PRODUCE_PARTITION: Struct = plain(&[always(I32), always(Bytes)]);
static PRODUCE_TOPIC: Struct = plain(&[f(Str, 0, 12), f(Uuid, 13, ALL), always(Arr(&PRODUCE_PARTITION))]);
static PRODUCE: Struct = plain(&[always(Str), always(I16), always(I32), always(Arr(&PRODUCE_TOPIC))]);

static CREATE_TOPICS_ASSIGNMENT: Struct = plain(&[always(I32), always(ArrI32)]);
static CREATE_TOPICS_CONFIG: Struct = plain(&[always(Str), always(Str)]);
static CREATE_TOPICS_TOPIC: Struct = plain(&[
    always(Str),
    always(I32),
    always(I16),
    always(Arr(&CREATE_TOPICS_ASSIGNMENT)),
    always(Arr(&CREATE_TOPICS_CONFIG)),
]);
static CREATE_TOPICS: Struct = plain(&[always(Arr(&CREATE_TOPICS_TOPIC)), always(I32), always(Bool)]);

// A compact array of int8 (the acknowledge types) is laid out as compact bytes are.
static ACKNOWLEDGEMENT_BATCH: Struct = plain(&[always(I64), always(I64), always(Bytes)]);
static SHARE_FETCH_PARTITION: Struct = plain(&[always(I32), always(Arr(&ACKNOWLEDGEMENT_BATCH))]);
static SHARE_FETCH_TOPIC: Struct = plain(&[always(Uuid), always(Arr(&SHARE_FETCH_PARTITION))]);
static SHARE_FORGOTTEN_TOPIC: Struct = plain(&[always(Uuid), always(ArrI32)]);
static SHARE_FETCH: Struct = plain(&[
    always(Str),
    always(Str),
    always(I32),
    always(I32),
    always(I32),
    always(I32),
    always(I32),
    always(I32),
    f(I8, 2, ALL),
    f(Bool, 2, ALL),
    always(Arr(&SHARE_FETCH_TOPIC)),
    always(Arr(&SHARE_FORGOTTEN_TOPIC)),
]);
static SHARE_ACKNOWLEDGE_TOPIC: Struct = plain(&[always(Uuid), always(Arr(&SHARE_FETCH_PARTITION))]);
static SHARE_ACKNOWLEDGE: Struct =
    plain(&[always(Str), always(Str), always(I32), f(Bool, 2, ALL), always(Arr(&SHARE_ACKNOWLEDGE_TOPIC))]);

static DESCRIBE_CONFIGS_RESOURCE: Struct = plain(&[always(I8), always(Str), always(ArrStr)]);
static DESCRIBE_CONFIGS: Struct =
    plain(&[always(Arr(&DESCRIBE_CONFIGS_RESOURCE)), f(Bool, 1, ALL), f(Bool, 3, ALL)]);
static ALTERABLE_CONFIG: Struct = plain(&[always(Str), always(I8), always(Str)]);
static ALTER_CONFIGS_RESOURCE: Struct = plain(&[always(I8), always(Str), always(Arr(&ALTERABLE_CONFIG))]);
static INCREMENTAL_ALTER_CONFIGS: Struct = plain(&[always(Arr(&ALTER_CONFIGS_RESOURCE)), always(Bool)]);
// A compact array of int8 (the resource types) is laid out as compact bytes are.
static LIST_CONFIG_RESOURCES: Struct = plain(&[f(Bytes, 1, ALL)]);

/// The request of an API the node answers itself; a group API's is its `WireApi::SCHEMA`.
pub(crate) fn broker_message(api_key: ApiKey) -> Option<Layout> {
    let (min, max, flexible, body) = match api_key {
        ApiKey::ApiVersions => (0, 4, 3, &API_VERSIONS),
        ApiKey::Metadata => (0, 13, 9, &METADATA),
        ApiKey::FindCoordinator => (0, 6, 3, &FIND_COORDINATOR),
        ApiKey::ListOffsets => (1, 10, 6, &LIST_OFFSETS),
        ApiKey::Fetch => (4, 18, 12, &FETCH),
        ApiKey::Produce => (3, 13, 9, &PRODUCE),
        ApiKey::SaslHandshake => (0, 1, ALL, &SASL_HANDSHAKE),
        ApiKey::SaslAuthenticate => (0, 2, 2, &SASL_AUTHENTICATE),
        ApiKey::CreateTopics => (2, 7, 5, &CREATE_TOPICS),
        ApiKey::ShareFetch => (1, 2, 0, &SHARE_FETCH),
        ApiKey::ShareAcknowledge => (1, 2, 0, &SHARE_ACKNOWLEDGE),
        ApiKey::DescribeConfigs => (1, 4, 4, &DESCRIBE_CONFIGS),
        ApiKey::IncrementalAlterConfigs => (0, 1, 1, &INCREMENTAL_ALTER_CONFIGS),
        ApiKey::ListConfigResources => (0, 1, 0, &LIST_CONFIG_RESOURCES),
        _ => return None,
    };
    Some(Layout::new(min, max, flexible, body))
}

/// Checks that `body` (the request after its header) is safe to hand to
/// `kafka-protocol`'s decoder for `api_key` at `version`, by `layout`
/// (`None`: the API has none, and nothing is decoded).
pub(crate) fn check_body(
    layout: Option<Layout>,
    api_key: ApiKey,
    version: i16,
    body: &[u8],
) -> Result<(), SchemaError> {
    group_types::wire::layout::check_body(layout, api_key as i16, version, body)
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
