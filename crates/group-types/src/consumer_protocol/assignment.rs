//! `ConsumerProtocolAssignment`: what a consumer receives in its SyncGroup response.

use serde::{Deserialize, Serialize};

use super::reader::Reader;
use super::subscription::{MIN_TOPIC_PARTITIONS_SIZE, read_topic_partitions, write_topic_partitions_array};
use super::writer::Writer;
use super::{CodecError, TopicPartitions, check_version, decode_version};
use crate::TopicPartition;

/// A consumer's assignment. Versions 0 to 3 share one layout: the assigned
/// partitions by topic, then nullable user data.
///
/// ```
/// use group_types::{MemberAssignment, TopicPartitions};
/// let a = MemberAssignment::new(vec![TopicPartitions::new("t", [0, 2])]);
/// let bytes = a.encode()?;
/// assert_eq!(MemberAssignment::decode(&bytes)?, a);
/// # Ok::<(), group_types::CodecError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemberAssignment {
    /// The schema version (the leading `i16`).
    pub version: i16,
    /// The assigned partitions, by topic, in wire order.
    pub partitions: Vec<TopicPartitions>,
    /// Assignor-specific data; `None` is null on the wire.
    pub user_data: Option<Vec<u8>>,
}

impl MemberAssignment {
    /// A version-0 assignment without user data, as Kafka's leaders send.
    pub fn new(partitions: Vec<TopicPartitions>) -> MemberAssignment {
        MemberAssignment { version: 0, partitions, user_data: None }
    }

    /// A version-0 assignment of `partitions`, grouped by topic in order of first appearance.
    pub fn from_partitions<'a>(partitions: impl IntoIterator<Item = &'a TopicPartition>) -> MemberAssignment {
        MemberAssignment::new(super::group_by_topic(partitions))
    }

    /// The assigned partitions, one [`TopicPartition`] each.
    pub fn topic_partitions(&self) -> Vec<TopicPartition> {
        super::flatten(&self.partitions)
    }

    /// Decodes an assignment, leading version included.
    ///
    /// Zero bytes are truncated input, an error: the coordinator hands empty bytes
    /// to a member the leader assigned nothing, and it is the client's choice to
    /// read those as "no partitions".
    pub fn decode(bytes: &[u8]) -> Result<MemberAssignment, CodecError> {
        let mut r = Reader::new(bytes);
        let version = decode_version(r.i16("version")?)?;
        let partitions = r.array("assigned_partitions", MIN_TOPIC_PARTITIONS_SIZE, read_topic_partitions)?;
        let user_data = r.nullable_bytes("user_data")?;
        Ok(MemberAssignment { version, partitions, user_data })
    }

    /// Encodes the assignment at its `version`, which must be 0 to 3.
    pub fn encode(&self) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::new();
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Appends the encoding to `out`; on error `out` may hold a partial write.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), CodecError> {
        check_version(self.version)?;
        let mut w = Writer::new(out);
        w.i16(self.version);
        write_topic_partitions_array(&mut w, "assigned_partitions", &self.partitions)?;
        w.nullable_bytes("user_data", self.user_data.as_deref())
    }
}
