//! Test-only sample requests: every supported API at every version, with non-empty arrays,
//! strings and (where the version has them) tagged fields, encoded by `kafka-protocol`.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

fn id(n: u128) -> uuid::Uuid {
    uuid::Uuid::from_u128(n)
}

fn enc<T: Encodable>(msg: &T, v: i16) -> Bytes {
    let mut out = BytesMut::new();
    msg.encode(&mut out, v).unwrap_or_else(|e| panic!("sample does not encode at v{v}: {e}"));
    out.freeze()
}

/// A request with non-empty arrays, strings and (where the version has them) tagged fields.
pub(crate) fn sample(api: ApiKey, v: i16) -> Bytes {
    match api {
        ApiKey::ApiVersions => {
            let r = ApiVersionsRequest::default();
            let r = if v >= 3 {
                r.with_client_software_name(s("kp")).with_client_software_version(s("1.0"))
            } else {
                r
            };
            enc(&r, v)
        }
        ApiKey::Metadata => {
            let topic = |n: &str, i| {
                let t = metadata_request::MetadataRequestTopic::default().with_name(Some(s(n).into()));
                if v >= 10 { t.with_topic_id(id(i)) } else { t }
            };
            enc(&MetadataRequest::default().with_topics(Some(vec![topic("t1", 1), topic("t2", 2)])), v)
        }
        ApiKey::FindCoordinator => {
            let r = FindCoordinatorRequest::default();
            let r =
                if v >= 4 { r.with_coordinator_keys(vec![s("g1"), s("g2")]) } else { r.with_key(s("g1")) };
            enc(&r, v)
        }
        ApiKey::JoinGroup => {
            let p = |n: &str| {
                join_group_request::JoinGroupRequestProtocol::default()
                    .with_name(s(n))
                    .with_metadata(Bytes::from_static(&[0, 1, 2, 3]))
            };
            let r = JoinGroupRequest::default()
                .with_group_id(s("g").into())
                .with_member_id(s("m"))
                .with_protocol_type(s("consumer"))
                .with_protocols(vec![p("range"), p("roundrobin")]);
            let r = if v >= 5 { r.with_group_instance_id(Some(s("i"))) } else { r };
            let r = if v >= 8 { r.with_reason(Some(s("why"))) } else { r };
            enc(&r, v)
        }
        ApiKey::SyncGroup => {
            let a = |m: &str| {
                sync_group_request::SyncGroupRequestAssignment::default()
                    .with_member_id(s(m))
                    .with_assignment(Bytes::from_static(&[9, 9]))
            };
            let r = SyncGroupRequest::default()
                .with_group_id(s("g").into())
                .with_member_id(s("m"))
                .with_assignments(vec![a("m"), a("n")]);
            let r = if v >= 3 { r.with_group_instance_id(Some(s("i"))) } else { r };
            let r = if v >= 5 {
                r.with_protocol_type(Some(s("consumer"))).with_protocol_name(Some(s("range")))
            } else {
                r
            };
            enc(&r, v)
        }
        ApiKey::Heartbeat => {
            let r = HeartbeatRequest::default().with_group_id(s("g").into()).with_member_id(s("m"));
            let r = if v >= 3 { r.with_group_instance_id(Some(s("i"))) } else { r };
            enc(&r, v)
        }
        ApiKey::LeaveGroup => {
            let r = LeaveGroupRequest::default().with_group_id(s("g").into());
            let r = if v <= 2 {
                r.with_member_id(s("m"))
            } else {
                let m = |id: &str| {
                    let m = leave_group_request::MemberIdentity::default()
                        .with_member_id(s(id))
                        .with_group_instance_id(Some(s("i")));
                    if v >= 5 { m.with_reason(Some(s("bye"))) } else { m }
                };
                r.with_members(vec![m("a"), m("b")])
            };
            enc(&r, v)
        }
        ApiKey::OffsetCommit => {
            use offset_commit_request::*;
            let p = |i| {
                let p = OffsetCommitRequestPartition::default()
                    .with_partition_index(i)
                    .with_committed_offset(42)
                    .with_committed_metadata(Some(s("md")));
                if v >= 6 { p.with_committed_leader_epoch(3) } else { p }
            };
            let t = |n: &str| {
                OffsetCommitRequestTopic::default().with_name(s(n).into()).with_partitions(vec![p(0), p(1)])
            };
            let r = OffsetCommitRequest::default()
                .with_group_id(s("g").into())
                .with_member_id(s("m"))
                .with_topics(vec![t("t1"), t("t2")]);
            let r = if v >= 7 { r.with_group_instance_id(Some(s("i"))) } else { r };
            let r = if v <= 4 { r.with_retention_time_ms(1000) } else { r };
            enc(&r, v)
        }
        ApiKey::OffsetFetch => {
            use offset_fetch_request::*;
            if v >= 8 {
                let t = OffsetFetchRequestTopics::default()
                    .with_name(s("t1").into())
                    .with_partition_indexes(vec![0, 1, 2]);
                let g = OffsetFetchRequestGroup::default()
                    .with_group_id(s("g").into())
                    .with_topics(Some(vec![t]));
                let g = if v >= 9 { g.with_member_id(Some(s("m"))).with_member_epoch(5) } else { g };
                let all = OffsetFetchRequestGroup::default().with_group_id(s("h").into()).with_topics(None);
                enc(&OffsetFetchRequest::default().with_groups(vec![g, all]).with_require_stable(true), v)
            } else {
                let t = OffsetFetchRequestTopic::default()
                    .with_name(s("t1").into())
                    .with_partition_indexes(vec![0, 1, 2]);
                let r = OffsetFetchRequest::default()
                    .with_group_id(s("g").into())
                    .with_topics(Some(vec![t.clone(), t]));
                let r = if v >= 7 { r.with_require_stable(true) } else { r };
                enc(&r, v)
            }
        }
        ApiKey::ListOffsets => {
            use list_offsets_request::*;
            let p = |i| {
                let p = ListOffsetsPartition::default().with_partition_index(i).with_timestamp(-2);
                if v >= 4 { p.with_current_leader_epoch(0) } else { p }
            };
            let t = ListOffsetsTopic::default().with_name(s("t1").into()).with_partitions(vec![p(0), p(1)]);
            let r = ListOffsetsRequest::default().with_topics(vec![t.clone(), t]);
            let r = if v >= 2 { r.with_isolation_level(1) } else { r };
            enc(&r, v)
        }
        ApiKey::Fetch => {
            use fetch_request::*;
            let p = |i| {
                let p = FetchPartition::default()
                    .with_partition(i)
                    .with_fetch_offset(7)
                    .with_partition_max_bytes(1 << 20);
                let p = if v >= 17 { p.with_replica_directory_id(id(9)) } else { p };
                if v >= 18 { p.with_high_watermark(5) } else { p.with_high_watermark(i64::MAX) }
            };
            let t = FetchTopic::default().with_partitions(vec![p(0), p(1)]);
            let t = if v >= 13 { t.with_topic_id(id(1)) } else { t.with_topic(s("t1").into()) };
            let r = FetchRequest::default().with_max_wait_ms(500).with_topics(vec![t.clone(), t]);
            let r = if v >= 7 {
                let f = ForgottenTopic::default().with_partitions(vec![1, 2]);
                let f = if v >= 13 { f.with_topic_id(id(2)) } else { f.with_topic(s("t2").into()) };
                r.with_forgotten_topics_data(vec![f])
            } else {
                r
            };
            let r = if v >= 11 { r.with_rack_id(s("rack")) } else { r };
            let r = if v >= 12 { r.with_cluster_id(Some(s("cluster"))) } else { r };
            enc(&r, v)
        }
        ApiKey::Produce => {
            use produce_request::*;
            let p = PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(Bytes::from_static(&[1; 10])));
            let t = TopicProduceData::default().with_partition_data(vec![p.clone(), p]);
            let t = if v >= 13 { t.with_topic_id(id(1)) } else { t.with_name(s("t1").into()) };
            enc(&ProduceRequest::default().with_acks(-1).with_timeout_ms(1000).with_topic_data(vec![t]), v)
        }
        ApiKey::ListGroups => {
            let r = ListGroupsRequest::default();
            let r = if v >= 4 { r.with_states_filter(vec![s("Stable"), s("Empty")]) } else { r };
            let r = if v >= 5 { r.with_types_filter(vec![s("classic")]) } else { r };
            enc(&r, v)
        }
        ApiKey::DescribeGroups => {
            enc(&DescribeGroupsRequest::default().with_groups(vec![s("a").into(), s("bb").into()]), v)
        }
        ApiKey::DeleteGroups => {
            enc(&DeleteGroupsRequest::default().with_groups_names(vec![s("a").into(), s("bb").into()]), v)
        }
        ApiKey::OffsetDelete => {
            use offset_delete_request::*;
            let p = |i| OffsetDeleteRequestPartition::default().with_partition_index(i);
            let t = OffsetDeleteRequestTopic::default()
                .with_name(s("t1").into())
                .with_partitions(vec![p(0), p(1)]);
            enc(&OffsetDeleteRequest::default().with_group_id(s("g").into()).with_topics(vec![t]), v)
        }
        ApiKey::SaslHandshake => enc(&SaslHandshakeRequest::default().with_mechanism(s("SCRAM-SHA-512")), v),
        ApiKey::SaslAuthenticate => {
            enc(&SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from_static(b"n,,n=u,r=x")), v)
        }
        ApiKey::ConsumerGroupHeartbeat => {
            use consumer_group_heartbeat_request::TopicPartitions;
            let tp = |n| TopicPartitions::default().with_topic_id(id(n)).with_partitions(vec![0, 2]);
            let r = ConsumerGroupHeartbeatRequest::default()
                .with_group_id(s("g").into())
                .with_member_id(s("m"))
                .with_member_epoch(3)
                .with_instance_id(Some(s("i")))
                .with_rack_id(Some(s("r")))
                .with_rebalance_timeout_ms(5000)
                .with_subscribed_topic_names(Some(vec![s("t1").into(), s("t2").into()]))
                .with_server_assignor(Some(s("uniform")))
                .with_topic_partitions(Some(vec![tp(1), tp(2)]));
            let r = if v >= 1 { r.with_subscribed_topic_regex(Some(s("^t.*"))) } else { r };
            enc(&r, v)
        }
        ApiKey::ConsumerGroupDescribe => enc(
            &ConsumerGroupDescribeRequest::default()
                .with_group_ids(vec![s("a").into(), s("bb").into()])
                .with_include_authorized_operations(true),
            v,
        ),
        ApiKey::CreateTopics => {
            use create_topics_request::*;
            let a = |p| {
                CreatableReplicaAssignment::default()
                    .with_partition_index(p)
                    .with_broker_ids(vec![BrokerId(0), BrokerId(1)])
            };
            let c =
                CreatableTopicConfig::default().with_name(s("cleanup.policy")).with_value(Some(s("compact")));
            let t = |n: &str| {
                CreatableTopic::default()
                    .with_name(s(n).into())
                    .with_num_partitions(-1)
                    .with_replication_factor(-1)
                    .with_assignments(vec![a(0), a(1)])
                    .with_configs(vec![c.clone()])
            };
            enc(&CreateTopicsRequest::default().with_topics(vec![t("n1"), t("n2")]).with_timeout_ms(1000), v)
        }
        other => panic!("no sample for {other:?}"),
    }
}

pub(crate) fn crate_decodes(api: ApiKey, v: i16, body: &Bytes) -> bool {
    let mut b = body.clone();
    match api {
        ApiKey::ApiVersions => ApiVersionsRequest::decode(&mut b, v).is_ok(),
        ApiKey::Metadata => MetadataRequest::decode(&mut b, v).is_ok(),
        ApiKey::FindCoordinator => FindCoordinatorRequest::decode(&mut b, v).is_ok(),
        ApiKey::JoinGroup => JoinGroupRequest::decode(&mut b, v).is_ok(),
        ApiKey::SyncGroup => SyncGroupRequest::decode(&mut b, v).is_ok(),
        ApiKey::Heartbeat => HeartbeatRequest::decode(&mut b, v).is_ok(),
        ApiKey::LeaveGroup => LeaveGroupRequest::decode(&mut b, v).is_ok(),
        ApiKey::OffsetCommit => OffsetCommitRequest::decode(&mut b, v).is_ok(),
        ApiKey::OffsetFetch => OffsetFetchRequest::decode(&mut b, v).is_ok(),
        ApiKey::ListOffsets => ListOffsetsRequest::decode(&mut b, v).is_ok(),
        ApiKey::Fetch => FetchRequest::decode(&mut b, v).is_ok(),
        ApiKey::Produce => ProduceRequest::decode(&mut b, v).is_ok(),
        ApiKey::ListGroups => ListGroupsRequest::decode(&mut b, v).is_ok(),
        ApiKey::DescribeGroups => DescribeGroupsRequest::decode(&mut b, v).is_ok(),
        ApiKey::DeleteGroups => DeleteGroupsRequest::decode(&mut b, v).is_ok(),
        ApiKey::OffsetDelete => OffsetDeleteRequest::decode(&mut b, v).is_ok(),
        ApiKey::SaslHandshake => SaslHandshakeRequest::decode(&mut b, v).is_ok(),
        ApiKey::SaslAuthenticate => SaslAuthenticateRequest::decode(&mut b, v).is_ok(),
        ApiKey::ConsumerGroupHeartbeat => ConsumerGroupHeartbeatRequest::decode(&mut b, v).is_ok(),
        ApiKey::ConsumerGroupDescribe => ConsumerGroupDescribeRequest::decode(&mut b, v).is_ok(),
        ApiKey::CreateTopics => CreateTopicsRequest::decode(&mut b, v).is_ok(),
        _ => false,
    }
}
