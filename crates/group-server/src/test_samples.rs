//! Test-only sample requests: every supported API at every version, with non-empty arrays,
//! strings and (where the version has them) tagged fields, encoded by `kafka-protocol`.
//! The node's own APIs' are here; a group API's is its `WireRequest::sample` in group-types, or its `WireApi::sample` in `wire/`.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

use crate::node::visit_group_api;
use crate::wire::share_codec::{self, Pinned};
use crate::wire::{Serve, VisitServe};

/// A node over `service` with topic `t1` (3 partitions), checking its own APIs with
/// `authorizer`, holding at most `max_share_sessions` share sessions.
pub(crate) fn test_node(
    service: crate::CoordinatorService,
    authorizer: std::sync::Arc<dyn group_coordinator::Authorizer>,
    max_share_sessions: usize,
) -> crate::node::Node {
    use std::sync::{Arc, Mutex};
    crate::node::Node {
        topics: Arc::new(crate::topics::SharedTopics::new(&[crate::TopicSpec {
            name: "t1".into(),
            partitions: 3,
        }])),
        topic_creation_refused: None,
        creating: Mutex::new(()),
        topic_creators: None,
        service: Arc::new(service),
        log: None,
        authorizer,
        metrics: Arc::default(),
        budgets: Arc::new(crate::connection::Budgets::new(&crate::ConnectionLimits::default())),
        brokers: crate::brokers::single_node(0, "127.0.0.1", 9092),
        share_sessions: Mutex::new(crate::share_session::ShareSessionCache::new(max_share_sessions)),
    }
}

/// A string for a sample.
pub(crate) fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

/// A topic id for a sample.
pub(crate) fn tid(n: u128) -> uuid::Uuid {
    uuid::Uuid::from_u128(n)
}

/// `msg` encoded at `v`.
pub(crate) fn enc<T: Encodable>(msg: &T, v: i16) -> Bytes {
    let mut out = BytesMut::new();
    msg.encode(&mut out, v).unwrap_or_else(|e| panic!("sample does not encode at v{v}: {e}"));
    out.freeze()
}

/// A request with non-empty arrays, strings and (where the version has them) tagged fields.
pub(crate) fn sample(api: ApiKey, v: i16) -> Bytes {
    struct Sample(i16);
    impl VisitServe for Sample {
        type Output = Bytes;
        fn visit<S: Serve>(self) -> Bytes {
            S::sample(self.0)
        }
    }
    if let Some(sample) = visit_group_api(api, Sample(v)) {
        return sample;
    }
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
                if v >= 10 { t.with_topic_id(tid(i)) } else { t }
            };
            enc(&MetadataRequest::default().with_topics(Some(vec![topic("t1", 1), topic("t2", 2)])), v)
        }
        ApiKey::FindCoordinator => {
            let r = FindCoordinatorRequest::default();
            let r =
                if v >= 4 { r.with_coordinator_keys(vec![s("g1"), s("g2")]) } else { r.with_key(s("g1")) };
            enc(&r, v)
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
                let p = if v >= 17 { p.with_replica_directory_id(tid(9)) } else { p };
                if v >= 18 { p.with_high_watermark(5) } else { p.with_high_watermark(i64::MAX) }
            };
            let t = FetchTopic::default().with_partitions(vec![p(0), p(1)]);
            let t = if v >= 13 { t.with_topic_id(tid(1)) } else { t.with_topic(s("t1").into()) };
            let r = FetchRequest::default().with_max_wait_ms(500).with_topics(vec![t.clone(), t]);
            let r = if v >= 7 {
                let f = ForgottenTopic::default().with_partitions(vec![1, 2]);
                let f = if v >= 13 { f.with_topic_id(tid(2)) } else { f.with_topic(s("t2").into()) };
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
            let t = if v >= 13 { t.with_topic_id(tid(1)) } else { t.with_name(s("t1").into()) };
            enc(&ProduceRequest::default().with_acks(-1).with_timeout_ms(1000).with_topic_data(vec![t]), v)
        }
        ApiKey::SaslHandshake => enc(&SaslHandshakeRequest::default().with_mechanism(s("SCRAM-SHA-512")), v),
        ApiKey::SaslAuthenticate => {
            enc(&SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from_static(b"n,,n=u,r=x")), v)
        }
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
        ApiKey::ShareFetch => {
            use share_fetch_request::*;
            let b = AcknowledgementBatch::default()
                .with_first_offset(0)
                .with_last_offset(1)
                .with_acknowledge_types(vec![1, 2]);
            let p = |i| {
                FetchPartition::default()
                    .with_partition_index(i)
                    .with_acknowledgement_batches(vec![b.clone()])
            };
            let t = FetchTopic::default().with_topic_id(tid(1)).with_partitions(vec![p(0), p(1)]);
            let f = ForgottenTopic::default().with_topic_id(tid(2)).with_partitions(vec![0, 1]);
            let r = share_codec::ShareFetchRequest {
                group_id: Some(s("g")),
                member_id: Some(s("m")),
                share_session_epoch: 1,
                max_wait_ms: 500,
                min_bytes: 1,
                max_bytes: 1 << 20,
                max_records: 500,
                batch_size: 500,
                share_acquire_mode: 1,
                is_renew_ack: true,
                topics: vec![Pinned(t)],
                forgotten_topics_data: vec![Pinned(f)],
            };
            enc(&r, v)
        }
        ApiKey::ShareAcknowledge => {
            use share_acknowledge_request::*;
            let b = AcknowledgementBatch::default()
                .with_first_offset(0)
                .with_last_offset(1)
                .with_acknowledge_types(vec![1, 3]);
            let p = |i| {
                AcknowledgePartition::default()
                    .with_partition_index(i)
                    .with_acknowledgement_batches(vec![b.clone()])
            };
            let t = AcknowledgeTopic::default().with_topic_id(tid(1)).with_partitions(vec![p(0), p(1)]);
            let r = share_codec::ShareAcknowledgeRequest {
                group_id: Some(s("g")),
                member_id: Some(s("m")),
                share_session_epoch: 1,
                is_renew_ack: true,
                topics: vec![Pinned(t)],
            };
            enc(&r, v)
        }
        ApiKey::DescribeConfigs => {
            use describe_configs_request::DescribeConfigsResource;
            let r = |t: i8, n: &str| {
                DescribeConfigsResource::default()
                    .with_resource_type(t)
                    .with_resource_name(s(n))
                    .with_configuration_keys(Some(vec![s("consumer.session.timeout.ms"), s("x")]))
            };
            let req = DescribeConfigsRequest::default()
                .with_resources(vec![r(32, "g"), r(2, "t1")])
                .with_include_synonyms(true);
            let req = if v >= 3 { req.with_include_documentation(true) } else { req };
            enc(&req, v)
        }
        ApiKey::IncrementalAlterConfigs => {
            use incremental_alter_configs_request::{AlterConfigsResource, AlterableConfig};
            let c = |n: &str, op: i8, value: Option<&str>| {
                AlterableConfig::default().with_name(s(n)).with_config_operation(op).with_value(value.map(s))
            };
            let r = AlterConfigsResource::default()
                .with_resource_type(32)
                .with_resource_name(s("g"))
                .with_configs(vec![
                    c("consumer.heartbeat.interval.ms", 0, Some("6000")),
                    c("consumer.session.timeout.ms", 1, None),
                ]);
            enc(
                &IncrementalAlterConfigsRequest::default().with_resources(vec![r]).with_validate_only(true),
                v,
            )
        }
        ApiKey::ListConfigResources => {
            let req = ListConfigResourcesRequest::default();
            enc(&if v >= 1 { req.with_resource_types(vec![32, 2]) } else { req }, v)
        }
        other => panic!("no sample for {other:?}"),
    }
}

/// Whether `kafka-protocol` decodes `body` as `api`'s request at `v`.
pub(crate) fn crate_decodes(api: ApiKey, v: i16, body: &Bytes) -> bool {
    struct Decodes<'a>(i16, &'a Bytes);
    impl VisitServe for Decodes<'_> {
        type Output = bool;
        fn visit<S: Serve>(self) -> bool {
            S::Wire::decode(&mut self.1.clone(), self.0).is_ok()
        }
    }
    if let Some(decodes) = visit_group_api(api, Decodes(v, body)) {
        return decodes;
    }
    let mut b = body.clone();
    match api {
        ApiKey::ApiVersions => ApiVersionsRequest::decode(&mut b, v).is_ok(),
        ApiKey::Metadata => MetadataRequest::decode(&mut b, v).is_ok(),
        ApiKey::FindCoordinator => FindCoordinatorRequest::decode(&mut b, v).is_ok(),
        ApiKey::ListOffsets => ListOffsetsRequest::decode(&mut b, v).is_ok(),
        ApiKey::Fetch => FetchRequest::decode(&mut b, v).is_ok(),
        ApiKey::Produce => ProduceRequest::decode(&mut b, v).is_ok(),
        ApiKey::SaslHandshake => SaslHandshakeRequest::decode(&mut b, v).is_ok(),
        ApiKey::SaslAuthenticate => SaslAuthenticateRequest::decode(&mut b, v).is_ok(),
        ApiKey::CreateTopics => CreateTopicsRequest::decode(&mut b, v).is_ok(),
        ApiKey::ShareFetch => share_codec::ShareFetchRequest::decode(&mut b, v).is_ok(),
        ApiKey::ShareAcknowledge => share_codec::ShareAcknowledgeRequest::decode(&mut b, v).is_ok(),
        ApiKey::DescribeConfigs => DescribeConfigsRequest::decode(&mut b, v).is_ok(),
        ApiKey::IncrementalAlterConfigs => IncrementalAlterConfigsRequest::decode(&mut b, v).is_ok(),
        ApiKey::ListConfigResources => ListConfigResourcesRequest::decode(&mut b, v).is_ok(),
        _ => false,
    }
}
