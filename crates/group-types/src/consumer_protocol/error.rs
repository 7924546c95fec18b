//! Why consumer-protocol bytes could not be decoded or encoded.

/// A malformed or unencodable consumer-protocol message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The input ended inside a field.
    #[error("truncated {field}: needs {needed} bytes, {remaining} remain")]
    Truncated {
        /// The field being read.
        field: &'static str,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the input.
        remaining: usize,
    },
    /// A length or count below -1, or -1 where null is not allowed.
    #[error("invalid length {length} for {field}")]
    InvalidLength {
        /// The field being read.
        field: &'static str,
        /// The length on the wire.
        length: i32,
    },
    /// An array count larger than the remaining bytes could hold.
    #[error("{field} claims {count} elements but only {remaining} bytes remain")]
    CountTooLarge {
        /// The field being read.
        field: &'static str,
        /// The count on the wire.
        count: i32,
        /// Bytes left in the input.
        remaining: usize,
    },
    /// A string that is not UTF-8.
    #[error("{field} is not valid UTF-8")]
    InvalidUtf8 {
        /// The field being read.
        field: &'static str,
    },
    /// A version this codec cannot read (negative) or write (outside 0 to 3).
    #[error("unsupported consumer protocol version {version}")]
    UnsupportedVersion {
        /// The version.
        version: i16,
    },
    /// A value too long for its wire length prefix.
    #[error("{field} is {length} bytes long, more than its length prefix can express")]
    TooLong {
        /// The field being written.
        field: &'static str,
        /// Its length.
        length: usize,
    },
}
