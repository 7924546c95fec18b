//! OffsetCommit v10 and OffsetFetch v10 (KIP-848: "adds support for topic ids and
//! removes support for topic names"), which `kafka-protocol` 0.18 stops short of (v9).
//!
//! The messages are declared with [`share_codec`](super::share_codec)'s `message!`
//! from Kafka's JSON schemas, from their first flexible version on (OffsetCommit v8,
//! OffsetFetch v8: the first with `Groups`), so that the tests can hold v8 and v9 to the
//! crate's bytes. The node still reads and writes v9 and below with the crate's types:
//! [`ByTopicId`] picks one codec or the other by version.

use anyhow::Result;
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::buf::{ByteBuf, ByteBufMut};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

pub(crate) use super::share_codec::Pinned;
use super::share_codec::{Get, Put, check_version, message, put_no_tags, skip_tags};

/// The first version of both APIs that names topics by id.
pub(crate) const TOPIC_ID_VERSION: i16 = 10;

/// A message as `kafka-protocol` reads and writes it (`ByName`) below
/// [`TOPIC_ID_VERSION`], and as declared here (`ById`) from it on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ByTopicId<Name, Id> {
    /// v9 and below, topics by name.
    ByName(Name),
    /// v10 on, topics by id.
    ById(Id),
}

impl<Name: Encodable, Id: Encodable> Encodable for ByTopicId<Name, Id> {
    fn encode<B: ByteBufMut>(&self, buf: &mut B, version: i16) -> Result<()> {
        match self {
            // A message written at a version that does not fit it would be misread.
            ByTopicId::ByName(m) if version < TOPIC_ID_VERSION => m.encode(buf, version),
            ByTopicId::ById(m) if version >= TOPIC_ID_VERSION => m.encode(buf, version),
            _ => anyhow::bail!("a message by topic {} written at v{version}", self.kind()),
        }
    }

    fn compute_size(&self, version: i16) -> Result<usize> {
        match self {
            ByTopicId::ByName(m) if version < TOPIC_ID_VERSION => m.compute_size(version),
            ByTopicId::ById(m) if version >= TOPIC_ID_VERSION => m.compute_size(version),
            _ => anyhow::bail!("a message by topic {} sized at v{version}", self.kind()),
        }
    }
}

impl<Name: Decodable, Id: Decodable> Decodable for ByTopicId<Name, Id> {
    fn decode<B: ByteBuf>(buf: &mut B, version: i16) -> Result<Self> {
        if version >= TOPIC_ID_VERSION {
            Id::decode(buf, version).map(ByTopicId::ById)
        } else {
            Name::decode(buf, version).map(ByTopicId::ByName)
        }
    }
}

impl<Name, Id> ByTopicId<Name, Id> {
    fn kind(&self) -> &'static str {
        match self {
            ByTopicId::ByName(_) => "name",
            ByTopicId::ById(_) => "id",
        }
    }
}

message! {
    /// OffsetCommit's request (key 8), v8-v10.
    pub(crate) struct OffsetCommitRequest: 8..=10 as request {
        group_id: StrBytes = 0,
        generation_id_or_member_epoch: i32 = 1,
        member_id: StrBytes = 1,
        group_instance_id: Option<StrBytes> = 7,
        topics: Vec<OffsetCommitRequestTopic> = 0,
    }

    /// One topic of an OffsetCommit: by name to v9, by id from v10.
    pub(crate) struct OffsetCommitRequestTopic: 8..=10 as request {
        name: StrBytes = 0..=9,
        topic_id: uuid::Uuid = 10,
        partitions: Vec<Pinned<kp::offset_commit_request::OffsetCommitRequestPartition, 9>> = 0,
    }

    /// OffsetCommit's response (key 8), v8-v10.
    pub(crate) struct OffsetCommitResponse: 8..=10 as response {
        throttle_time_ms: i32 = 3,
        topics: Vec<OffsetCommitResponseTopic> = 0,
    }

    /// One topic of an OffsetCommit answer: by name to v9, by id from v10.
    pub(crate) struct OffsetCommitResponseTopic: 8..=10 as response {
        name: StrBytes = 0..=9,
        topic_id: uuid::Uuid = 10,
        partitions: Vec<Pinned<kp::offset_commit_response::OffsetCommitResponsePartition, 9>> = 0,
    }

    /// OffsetFetch's request (key 9), v8-v10 (v0-v7's one-group fields are not declared).
    pub(crate) struct OffsetFetchRequest: 8..=10 as request {
        groups: Vec<OffsetFetchRequestGroup> = 8,
        require_stable: bool = 7,
    }

    /// One group of an OffsetFetch.
    pub(crate) struct OffsetFetchRequestGroup: 8..=10 as request {
        group_id: StrBytes = 8,
        member_id: Option<StrBytes> = 9,
        member_epoch: i32 = 9 or -1,
        /// `None`: every committed offset of the group.
        topics: Option<Vec<OffsetFetchRequestTopics>> = 8,
    }

    /// One topic of an OffsetFetch group: by name to v9, by id from v10.
    pub(crate) struct OffsetFetchRequestTopics: 8..=10 as request {
        name: StrBytes = 8..=9,
        topic_id: uuid::Uuid = 10,
        partition_indexes: Vec<i32> = 8,
    }

    /// OffsetFetch's response (key 9), v8-v10 (v0-v7's one-group fields are not declared).
    pub(crate) struct OffsetFetchResponse: 8..=10 as response {
        throttle_time_ms: i32 = 3,
        groups: Vec<OffsetFetchResponseGroup> = 8,
    }

    /// One group of an OffsetFetch answer.
    pub(crate) struct OffsetFetchResponseGroup: 8..=10 as response {
        group_id: StrBytes = 8,
        topics: Vec<OffsetFetchResponseTopics> = 8,
        error_code: i16 = 8,
    }

    /// One topic of an OffsetFetch group's answer: by name to v9, by id from v10.
    pub(crate) struct OffsetFetchResponseTopics: 8..=10 as response {
        name: StrBytes = 8..=9,
        topic_id: uuid::Uuid = 10,
        partitions: Vec<Pinned<kp::offset_fetch_response::OffsetFetchResponsePartitions, 9>> = 8,
    }
}

#[cfg(test)]
#[path = "offset_codec_tests.rs"]
mod tests;
