//! A bounds-checking walk over request bodies, run before `kafka-protocol` decodes them.
//!
//! `kafka-protocol` 0.18 sizes every array with `Vec::with_capacity(count)` before reading
//! a single element, so a 26-byte frame claiming 2^31 elements aborts the process
//! (dependencies.md 2.4). A [`Layout`] mirrors the crate's generated decoder of one request
//! field by field, and the walk checks each array count against the bytes that remain: a
//! body it accepts makes the crate allocate at most a small multiple of the frame size.
//! Each group API's layout is its [`WireRequest::LAYOUT`](super::WireRequest::LAYOUT), in
//! its message's file; a front end writes its other APIs' with the same constructors.

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
    /// No layout for this API or version: nothing is decoded.
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
pub enum Ty {
    /// int8.
    I8,
    /// int16.
    I16,
    /// int32.
    I32,
    /// int64.
    I64,
    /// A 16-byte uuid.
    Uuid,
    /// A boolean.
    Bool,
    /// A (nullable) string.
    Str,
    /// (Nullable) bytes, or a record batch.
    Bytes,
    /// An array of int32.
    ArrI32,
    /// An array of strings.
    ArrStr,
    /// An array of structs.
    Arr(&'static Struct),
    /// A struct in place (a tagged field's value).
    Inline(&'static Struct),
}

/// A field and the versions that have it.
#[derive(Debug)]
pub struct Field {
    ty: Ty,
    min: i16,
    max: i16,
}

/// A tagged field and the first version that knows its tag.
#[derive(Debug)]
pub struct Tagged {
    tag: u32,
    ty: Ty,
    min: i16,
}

/// A struct: its fields in order, then (in flexible versions) its known tags.
#[derive(Debug)]
pub struct Struct {
    fields: &'static [Field],
    tagged: &'static [Tagged],
}

/// One request type: its decodable versions, the first flexible one, and its body.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// The lowest version decoded.
    pub min: i16,
    /// The highest version decoded.
    pub max: i16,
    flexible: i16,
    body: &'static Struct,
}

impl Layout {
    /// A request decodable at `min..=max`, flexible from `flexible` (`ALL`: never).
    pub const fn new(min: i16, max: i16, flexible: i16, body: &'static Struct) -> Layout {
        Layout { min, max, flexible, body }
    }
}

/// The last version there is: a field `f(ty, 3, ALL)` exists from version 3 on.
pub const ALL: i16 = i16::MAX;

/// A field that exists in versions `min..=max`.
pub const fn f(ty: Ty, min: i16, max: i16) -> Field {
    Field { ty, min, max }
}

/// A field that exists in every version.
pub const fn always(ty: Ty) -> Field {
    Field { ty, min: 0, max: ALL }
}

/// A struct without tagged fields.
pub const fn plain(fields: &'static [Field]) -> Struct {
    Struct { fields, tagged: &[] }
}

/// A struct with tagged fields (flexible versions), known from the versions each says.
pub const fn tagged(fields: &'static [Field], tagged: &'static [Tagged]) -> Struct {
    Struct { fields, tagged }
}

/// A tagged field: its tag, its type, and the first version that knows it.
pub const fn tag(tag: u32, ty: Ty, min: i16) -> Tagged {
    Tagged { tag, ty, min }
}

/// Checks that `body` (the request after its header) is safe to hand to
/// `kafka-protocol`'s decoder for `api_key` at `version`, by `message`'s layout
/// (`None`: the API has none, and nothing is decoded).
pub fn check_body(
    message: Option<Layout>,
    api_key: i16,
    version: i16,
    body: &[u8],
) -> Result<(), SchemaError> {
    walk(message, api_key, version, body).map(|_| ())
}

/// Walks a body and returns how many bytes the request occupies.
pub fn walk(message: Option<Layout>, api_key: i16, version: i16, body: &[u8]) -> Result<usize, SchemaError> {
    let no_schema = || SchemaError::NoSchema { api_key, version };
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
        use Ty::*;
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
