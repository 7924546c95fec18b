//! Topic ids: the 128-bit `Uuid`s by which KIP-848 names topics in assignments.

use std::fmt;
use std::str::FromStr;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

/// A topic's id (Kafka's `Uuid`): 16 bytes, shown as 22 characters of URL-safe
/// base64 without padding, as Kafka's `Uuid.toString` prints it.
///
/// ```
/// use group_types::TopicId;
/// let id: TopicId = "LCa0a2j_xo_5m0U8HTBBNA".parse()?;
/// assert_eq!(id.to_string(), "LCa0a2j_xo_5m0U8HTBBNA");
/// assert!(!id.is_zero());
/// # Ok::<(), group_types::BadTopicId>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct TopicId(pub [u8; 16]);

impl TopicId {
    /// Kafka's `Uuid.ZERO_UUID`: "no id".
    pub const ZERO: TopicId = TopicId([0; 16]);

    /// The id whose big-endian bytes are `value`.
    pub const fn from_u128(value: u128) -> TopicId {
        TopicId(value.to_be_bytes())
    }

    /// The id as one big-endian number.
    pub const fn as_u128(self) -> u128 {
        u128::from_be_bytes(self.0)
    }

    /// True for [`TopicId::ZERO`].
    pub const fn is_zero(self) -> bool {
        self.as_u128() == 0
    }
}

impl fmt::Display for TopicId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&URL_SAFE_NO_PAD.encode(self.0))
    }
}

impl fmt::Debug for TopicId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TopicId({self})")
    }
}

/// A string that is not 22 characters of URL-safe base64 encoding 16 bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a topic id (22 characters of URL-safe base64)")]
pub struct BadTopicId(pub String);

impl FromStr for TopicId {
    type Err = BadTopicId;

    fn from_str(s: &str) -> Result<TopicId, BadTopicId> {
        let bytes = URL_SAFE_NO_PAD.decode(s).map_err(|_| BadTopicId(s.to_owned()))?;
        let bytes: [u8; 16] = bytes.try_into().map_err(|_| BadTopicId(s.to_owned()))?;
        Ok(TopicId(bytes))
    }
}
