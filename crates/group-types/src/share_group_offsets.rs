//! The share-group offset admin APIs of KIP-932: DescribeShareGroupOffsets
//! (API key 90, versions 0-1; v1 adds lag, KIP-1226), AlterShareGroupOffsets
//! (91) and DeleteShareGroupOffsets (92). A share group's "offset" per
//! partition is its share-partition start offset, kept by the share
//! coordinator.

use serde::{Deserialize, Serialize};

use crate::{ErrorCode, GroupId, TopicId};

/// The topics and partitions asked of one group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareOffsetsTopicRequest {
    /// The topic.
    pub topic_name: String,
    /// Its partitions.
    pub partitions: Vec<i32>,
}

/// One group of a DescribeShareGroupOffsets request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribeShareGroupOffsetsGroupRequest {
    /// The group.
    pub group_id: GroupId,
    /// The topics; `None` asks for every topic the group has state for.
    pub topics: Option<Vec<ShareOffsetsTopicRequest>>,
}

/// A DescribeShareGroupOffsets request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribeShareGroupOffsetsRequest {
    /// The request's version (v1 answers lag).
    pub api_version: i16,
    /// The groups.
    pub groups: Vec<DescribeShareGroupOffsetsGroupRequest>,
}

/// One partition's share-partition start offset.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedShareOffset {
    /// The partition.
    pub partition_index: i32,
    /// The share-partition start offset; -1 when it has none.
    pub start_offset: i64,
    /// The leader epoch of the state.
    pub leader_epoch: i32,
    /// v1: the records not yet delivered and acknowledged (KIP-1226); -1 when unknown.
    pub lag: i64,
    /// The outcome for this partition.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
}

/// One topic of a DescribeShareGroupOffsets answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedShareOffsetsTopic {
    /// The topic.
    pub topic_name: String,
    /// Its id.
    pub topic_id: TopicId,
    /// Its partitions.
    pub partitions: Vec<DescribedShareOffset>,
}

/// One group of a DescribeShareGroupOffsets answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedShareOffsetsGroup {
    /// The group.
    pub group_id: GroupId,
    /// Its topics.
    pub topics: Vec<DescribedShareOffsetsTopic>,
    /// The outcome for the whole group.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
}

/// A DescribeShareGroupOffsets response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribeShareGroupOffsetsResponse {
    /// One entry per requested group.
    pub groups: Vec<DescribedShareOffsetsGroup>,
}

/// One partition's new start offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareStartOffset {
    /// The partition.
    pub partition_index: i32,
    /// The new share-partition start offset.
    pub start_offset: i64,
}

/// One topic of an AlterShareGroupOffsets request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AlterShareOffsetsTopic {
    /// The topic.
    pub topic_name: String,
    /// Its partitions and their new start offsets.
    pub partitions: Vec<ShareStartOffset>,
}

/// An AlterShareGroupOffsets request (the group must be empty).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AlterShareGroupOffsetsRequest {
    /// The group.
    pub group_id: GroupId,
    /// The topics.
    pub topics: Vec<AlterShareOffsetsTopic>,
}

/// One partition's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SharePartitionOutcome {
    /// The partition.
    pub partition_index: i32,
    /// The outcome.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
}

/// One topic of an AlterShareGroupOffsets answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AlteredShareOffsetsTopic {
    /// The topic.
    pub topic_name: String,
    /// Its id (the zero id for a topic that does not exist).
    pub topic_id: TopicId,
    /// Its partitions.
    pub partitions: Vec<SharePartitionOutcome>,
}

/// An AlterShareGroupOffsets response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AlterShareGroupOffsetsResponse {
    /// The outcome for the whole group.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
    /// Per topic, when the group-level outcome is NONE.
    pub responses: Vec<AlteredShareOffsetsTopic>,
}

/// A DeleteShareGroupOffsets request (the group must be empty).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeleteShareGroupOffsetsRequest {
    /// The group.
    pub group_id: GroupId,
    /// The topics whose share state is deleted.
    pub topic_names: Vec<String>,
}

/// One topic of a DeleteShareGroupOffsets answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeletedShareOffsetsTopic {
    /// The topic.
    pub topic_name: String,
    /// Its id (the zero id for a topic that does not exist).
    pub topic_id: TopicId,
    /// The outcome.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
}

/// A DeleteShareGroupOffsets response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeleteShareGroupOffsetsResponse {
    /// The outcome for the whole group.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
    /// Per topic, when the group-level outcome is NONE.
    pub responses: Vec<DeletedShareOffsetsTopic>,
}

#[cfg(feature = "kafka-protocol")]
mod alter_wire {
    //! AlterShareGroupOffsets (key 91, KIP-932) on the wire: an empty share group's
    //! share partitions started again at the given offsets.

    use kafka_protocol::messages as kp;

    use crate as gt;
    use crate::wire::layout::Ty::{Arr, I32, I64, Str};
    use crate::wire::layout::{Layout, Struct, always, plain};
    use crate::wire::{Header, WireRequest, id, osb, s, sb, uuid};

    impl WireRequest for gt::AlterShareGroupOffsetsRequest {
        type Wire = kp::AlterShareGroupOffsetsRequest;
        type Response = gt::AlterShareGroupOffsetsResponse;
        type WireResponse = kp::AlterShareGroupOffsetsResponse;
        const LAYOUT: Layout = Layout::new(0, 0, 0, &BODY);

        #[inline]
        fn from_wire(req: &kp::AlterShareGroupOffsetsRequest, _: &Header<'_>) -> Self {
            gt::AlterShareGroupOffsetsRequest {
                group_id: id(&req.group_id.0),
                topics: req
                    .topics
                    .iter()
                    .map(|t| gt::AlterShareOffsetsTopic {
                        topic_name: s(&t.topic_name.0),
                        partitions: t
                            .partitions
                            .iter()
                            .map(|p| gt::ShareStartOffset {
                                partition_index: p.partition_index,
                                start_offset: p.start_offset,
                            })
                            .collect(),
                    })
                    .collect(),
            }
        }

        #[inline]
        fn to_wire(resp: gt::AlterShareGroupOffsetsResponse, _: i16) -> kp::AlterShareGroupOffsetsResponse {
            use kp::alter_share_group_offsets_response as r;
            let topics = resp
                .responses
                .into_iter()
                .map(|t| {
                    let partitions = t
                        .partitions
                        .into_iter()
                        .map(|p| {
                            r::AlterShareGroupOffsetsResponsePartition::default()
                                .with_partition_index(p.partition_index)
                                .with_error_code(p.error_code.code())
                                .with_error_message(osb(p.error_message))
                        })
                        .collect();
                    r::AlterShareGroupOffsetsResponseTopic::default()
                        .with_topic_name(sb(t.topic_name).into())
                        .with_topic_id(uuid(t.topic_id))
                        .with_partitions(partitions)
                })
                .collect();
            kp::AlterShareGroupOffsetsResponse::default()
                .with_error_code(resp.error_code.code())
                .with_error_message(osb(resp.error_message))
                .with_responses(topics)
        }

        fn sample(_: i16) -> kp::AlterShareGroupOffsetsRequest {
            use kp::alter_share_group_offsets_request as w;

            let p = |i| {
                w::AlterShareGroupOffsetsRequestPartition::default()
                    .with_partition_index(i)
                    .with_start_offset(7)
            };
            let t = w::AlterShareGroupOffsetsRequestTopic::default()
                .with_topic_name(sb("t1").into())
                .with_partitions(vec![p(0), p(1)]);
            kp::AlterShareGroupOffsetsRequest::default().with_group_id(sb("g").into()).with_topics(vec![t])
        }
    }

    // The request field by field as `kafka-protocol` decodes it, for the walk (`crate::wire::layout`).
    static PARTITION: Struct = plain(&[always(I32), always(I64)]);
    static TOPIC: Struct = plain(&[always(Str), always(Arr(&PARTITION))]);
    static BODY: Struct = plain(&[always(Str), always(Arr(&TOPIC))]);
}

#[cfg(feature = "kafka-protocol")]
mod delete_wire {
    //! DeleteShareGroupOffsets (key 92, KIP-932) on the wire: an empty share group's
    //! share state deleted for the named topics.

    use kafka_protocol::messages as kp;

    use crate as gt;
    use crate::wire::layout::Ty::{Arr, Str};
    use crate::wire::layout::{Layout, Struct, always, plain};
    use crate::wire::{Header, WireRequest, id, osb, s, sb, uuid};

    impl WireRequest for gt::DeleteShareGroupOffsetsRequest {
        type Wire = kp::DeleteShareGroupOffsetsRequest;
        type Response = gt::DeleteShareGroupOffsetsResponse;
        type WireResponse = kp::DeleteShareGroupOffsetsResponse;
        const LAYOUT: Layout = Layout::new(0, 0, 0, &BODY);

        #[inline]
        fn from_wire(req: &kp::DeleteShareGroupOffsetsRequest, _: &Header<'_>) -> Self {
            gt::DeleteShareGroupOffsetsRequest {
                group_id: id(&req.group_id.0),
                topic_names: req.topics.iter().map(|t| s(&t.topic_name.0)).collect(),
            }
        }

        #[inline]
        fn to_wire(resp: gt::DeleteShareGroupOffsetsResponse, _: i16) -> kp::DeleteShareGroupOffsetsResponse {
            use kp::delete_share_group_offsets_response as r;
            let topics = resp
                .responses
                .into_iter()
                .map(|t| {
                    r::DeleteShareGroupOffsetsResponseTopic::default()
                        .with_topic_name(sb(t.topic_name).into())
                        .with_topic_id(uuid(t.topic_id))
                        .with_error_code(t.error_code.code())
                        .with_error_message(osb(t.error_message))
                })
                .collect();
            kp::DeleteShareGroupOffsetsResponse::default()
                .with_error_code(resp.error_code.code())
                .with_error_message(osb(resp.error_message))
                .with_responses(topics)
        }

        fn sample(_: i16) -> kp::DeleteShareGroupOffsetsRequest {
            use kp::delete_share_group_offsets_request as w;

            let t = |n| w::DeleteShareGroupOffsetsRequestTopic::default().with_topic_name(sb(n).into());
            kp::DeleteShareGroupOffsetsRequest::default()
                .with_group_id(sb("g").into())
                .with_topics(vec![t("a"), t("bb")])
        }
    }

    // The request field by field as `kafka-protocol` decodes it, for the walk (`crate::wire::layout`).
    static TOPIC: Struct = plain(&[always(Str)]);
    static BODY: Struct = plain(&[always(Str), always(Arr(&TOPIC))]);
}
