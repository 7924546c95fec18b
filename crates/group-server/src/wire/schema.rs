//! A bounds-checking walk over request bodies, run before `kafka-protocol` sees them.
//!
//! `kafka-protocol` 0.18 sizes every array with `Vec::with_capacity(count)` before reading
//! a single element, so a 26-byte frame claiming 2^31 elements aborts the process
//! (dependencies.md 2.4). A [`Message`] mirrors the crate's generated decoder of one request
//! field by field, and the walk checks each array count against the bytes that remain: a
//! body it accepts makes the crate allocate at most a small multiple of the frame size.
//! The layouts of the APIs the node answers itself are here; each group API's is its
//! `WireApi::SCHEMA`, in its own file beside its translation. All are checked against the
//! crate's own encoders in the tests.

use kafka_protocol::messages::ApiKey;

/// Why a request body was refused before decoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The body ended in the middle of a field.
    #[error("request body truncated at byte {0}")]
    Truncated(usize),
    /// A length or count was negative (other than the null marker) or larger than the body.
    #[error("bad length or count {count} at byte {at}")]
    BadLength {
        /// The offending value.
        count: i64,
        /// Where it was read.
        at: usize,
    },
    /// A tagged field that is not valid for this version.
    #[error("tag {0} is not valid for this version")]
    BadTag(u32),
    /// The server does not decode this API or version.
    #[error("no schema for api {api_key} version {version}")]
    NoSchema {
        /// The API key.
        api_key: i16,
        /// The version.
        version: i16,
    },
}

/// A field's wire type.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ty {
    I8,
    I16,
    I32,
    I64,
    Uuid,
    Bool,
    Str,
    Bytes,
    ArrI32,
    ArrStr,
    Arr(&'static Struct),
    Inline(&'static Struct),
}

/// A field and the versions that have it.
#[derive(Debug)]
pub(super) struct Field {
    ty: Ty,
    min: i16,
    max: i16,
}

/// A tagged field and the first version that knows its tag.
#[derive(Debug)]
struct Tagged {
    tag: u32,
    ty: Ty,
    min: i16,
}

/// A struct: its fields in order, then (in flexible versions) its known tags.
#[derive(Debug)]
pub(super) struct Struct {
    fields: &'static [Field],
    tagged: &'static [Tagged],
}

/// One request type: its decodable versions, the first flexible one, and its body.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Message {
    pub(crate) min: i16,
    pub(crate) max: i16,
    flexible: i16,
    body: &'static Struct,
}

impl Message {
    /// A request decodable at `min..=max`, flexible from `flexible` (`ALL`: never).
    pub(super) const fn new(min: i16, max: i16, flexible: i16, body: &'static Struct) -> Message {
        Message { min, max, flexible, body }
    }
}

/// The last version there is: a field `f(ty, 3, ALL)` exists from version 3 on.
pub(super) const ALL: i16 = i16::MAX;

/// A field that exists in versions `min..=max`.
pub(super) const fn f(ty: Ty, min: i16, max: i16) -> Field {
    Field { ty, min, max }
}

/// A field that exists in every version.
pub(super) const fn always(ty: Ty) -> Field {
    Field { ty, min: 0, max: ALL }
}

/// A struct without tagged fields.
pub(super) const fn plain(fields: &'static [Field]) -> Struct {
    Struct { fields, tagged: &[] }
}

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

static FETCH_PARTITION: Struct = Struct {
    fields: &[always(I32), f(I32, 9, ALL), always(I64), f(I32, 12, ALL), f(I64, 5, ALL), always(I32)],
    tagged: &[Tagged { tag: 0, ty: Uuid, min: 17 }, Tagged { tag: 1, ty: I64, min: 18 }],
};
static FETCH_TOPIC: Struct = plain(&[f(Str, 0, 12), f(Uuid, 13, ALL), always(Arr(&FETCH_PARTITION))]);
static FORGOTTEN_TOPIC: Struct = plain(&[f(Str, 7, 12), f(Uuid, 13, ALL), f(ArrI32, 7, ALL)]);
static REPLICA_STATE: Struct = plain(&[f(I32, 15, ALL), f(I64, 15, ALL)]);
static FETCH: Struct = Struct {
    fields: &[
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
    tagged: &[Tagged { tag: 0, ty: Str, min: 0 }, Tagged { tag: 1, ty: Inline(&REPLICA_STATE), min: 15 }],
};

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
pub(crate) fn broker_message(api_key: ApiKey) -> Option<Message> {
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
    Some(Message { min, max, flexible, body })
}

/// Checks that `body` (the request after its header) is safe to hand to
/// `kafka-protocol`'s decoder for `api_key` at `version`, by `message`'s layout
/// (`None`: the API has none, and nothing is decoded).
pub(crate) fn check_body(
    message: Option<Message>,
    api_key: ApiKey,
    version: i16,
    body: &[u8],
) -> Result<(), SchemaError> {
    walk(message, api_key, version, body).map(|_| ())
}

/// Walks a body and returns how many bytes the request occupies.
fn walk(message: Option<Message>, api_key: ApiKey, version: i16, body: &[u8]) -> Result<usize, SchemaError> {
    let no_schema = || SchemaError::NoSchema { api_key: api_key as i16, version };
    let message = message.ok_or_else(no_schema)?;
    if version < message.min || version > message.max {
        return Err(no_schema());
    }
    let mut walker = Walker { buf: body, pos: 0, version, flexible: version >= message.flexible };
    walker.walk_struct(message.body)?;
    Ok(walker.pos)
}

struct Walker<'a> {
    buf: &'a [u8],
    pos: usize,
    version: i16,
    flexible: bool,
}

impl Walker<'_> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn skip(&mut self, n: usize) -> Result<(), SchemaError> {
        if n > self.remaining() {
            return Err(SchemaError::Truncated(self.pos));
        }
        self.pos += n;
        Ok(())
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], SchemaError> {
        let start = self.pos;
        self.skip(N)?;
        let mut out = [0; N];
        out.copy_from_slice(&self.buf[start..start + N]);
        Ok(out)
    }

    /// Exactly `kafka-protocol`'s reading: at most five bytes, high bits dropped.
    fn varint(&mut self) -> Result<u32, SchemaError> {
        let mut value: u32 = 0;
        for i in 0..5 {
            let [b] = self.take::<1>()?;
            value |= (u32::from(b) & 0x7f) << (i * 7);
            if b < 0x80 {
                break;
            }
        }
        Ok(value)
    }

    /// Reads a length or count and checks `count * min_size <= remaining`; `None` is null.
    fn length(&mut self, min_size: usize) -> Result<Option<usize>, SchemaError> {
        let at = self.pos;
        let count: i64 = if self.flexible {
            i64::from(self.varint()?) - 1
        } else if min_size == 0 {
            // Non-flexible strings carry an i16 length; bytes and arrays an i32.
            i64::from(i16::from_be_bytes(self.take::<2>()?))
        } else {
            i64::from(i32::from_be_bytes(self.take::<4>()?))
        };
        if count == -1 {
            return Ok(None);
        }
        let fits =
            usize::try_from(count).ok().filter(|&c| c.saturating_mul(min_size.max(1)) <= self.remaining());
        match fits {
            Some(c) => Ok(Some(c)),
            None => Err(SchemaError::BadLength { count, at }),
        }
    }

    fn walk_ty(&mut self, ty: Ty) -> Result<(), SchemaError> {
        match ty {
            I8 | Bool => self.skip(1),
            I16 => self.skip(2),
            I32 => self.skip(4),
            I64 => self.skip(8),
            Uuid => self.skip(16),
            // A string's length is an i16 when not flexible (min_size 0 selects it).
            Str => {
                let n = self.length(0)?;
                self.skip(n.unwrap_or(0))
            }
            Bytes => {
                let n = self.length(1)?;
                self.skip(n.unwrap_or(0))
            }
            ArrI32 => {
                let n = self.length(4)?;
                self.skip(n.unwrap_or(0) * 4)
            }
            ArrStr => {
                for _ in 0..self.length(1)?.unwrap_or(0) {
                    self.walk_ty(Str)?;
                }
                Ok(())
            }
            Arr(element) => {
                for _ in 0..self.length(1)?.unwrap_or(0) {
                    self.walk_struct(element)?;
                }
                Ok(())
            }
            Inline(element) => self.walk_struct(element),
        }
    }

    fn walk_struct(&mut self, s: &Struct) -> Result<(), SchemaError> {
        for field in s.fields {
            if self.version >= field.min && self.version <= field.max {
                self.walk_ty(field.ty)?;
            }
        }
        if !self.flexible {
            return Ok(());
        }
        let tags = self.varint()?;
        for _ in 0..tags {
            let tag = self.varint()?;
            let size = self.varint()? as usize;
            match s.tagged.iter().find(|t| t.tag == tag) {
                // Like the crate, a known tag is read as its type, not as `size` bytes.
                Some(known) if self.version >= known.min => self.walk_ty(known.ty)?,
                Some(_) => return Err(SchemaError::BadTag(tag)),
                None => self.skip(size)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
