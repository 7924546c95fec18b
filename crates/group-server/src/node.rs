//! `Node`: one request frame in, one reply out. Header versions, ApiVersions, the broker
//! APIs this node answers for its topics, and the group APIs it forwards.

use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use group_coordinator::{
    AclOperation, Authorizer, CoordinatorError, GroupApi, Pending, RequestContext, Resource, ResponseKind,
};
use group_share_coordinator::SharePartitionKey;
use group_types::{self as gt, ErrorCode};
use kafka_protocol::messages::{self as kp, ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, Message, StrBytes, decode_request_header_from_buffer};

use crate::brokers::Broker;
use crate::request_log::RequestLog;
use crate::session::Session;
use crate::topics::{SharedTopics, Topics};
use crate::wire::schema::{self, SchemaError};
use crate::wire::{Serve, share_codec};

/// Why a request frame could not be served: the connection is closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// Shorter than a request header.
    #[error("frame of {0} bytes is shorter than a request header")]
    Short(usize),
    /// An API key this node does not serve (it is not advertised).
    #[error("api key {0} ({name}) is not served by this coordinator node", name = api_name(*.0))]
    UnsupportedApi(i16),
    /// A version outside the advertised range.
    #[error("{api:?} version {version} is not supported (advertised {min}-{max})")]
    UnsupportedVersion {
        /// The API.
        api: ApiKey,
        /// The requested version.
        version: i16,
        /// The lowest advertised version.
        min: i16,
        /// The highest advertised version.
        max: i16,
    },
    /// The body failed the bounds check before decoding.
    #[error("{api:?} v{version}: {source}")]
    Schema {
        /// The API.
        api: ApiKey,
        /// The version.
        version: i16,
        /// What was wrong.
        source: SchemaError,
    },
    /// The header or body did not decode.
    #[error("{0}")]
    Decode(String),
    /// A response could not be encoded (a bug: logged, the connection is closed).
    #[error("could not encode the response: {0}")]
    Encode(String),
}

/// What the connection writes back for one request, in request order.
pub(crate) enum Reply {
    /// A response frame, length prefix included (see [`encode_frame`]), ready now.
    Now(BytesMut),
    /// Ready, but not to be sent before the instant (Fetch long-polls over empty partitions).
    NotBefore(Instant, BytesMut),
    /// Not ready yet (parked at a barrier, waiting for a write): the connection
    /// awaits it in order.
    Later(Pin<Box<dyn Future<Output = Result<BytesMut, RequestError>> + Send>>),
    /// No response at all (Produce with acks=0).
    Nothing,
}

impl Reply {
    /// The bytes of the reply already encoded (0 for one encoded only once ready).
    #[inline]
    pub(crate) fn encoded_len(&self) -> usize {
        match self {
            Reply::Now(body) | Reply::NotBefore(_, body) => body.len(),
            Reply::Later(_) | Reply::Nothing => 0,
        }
    }
}

/// The APIs this node answers itself, with the versions `kafka-protocol` decodes.
const BROKER_APIS: [(ApiKey, i16, i16); 14] = [
    (ApiKey::Produce, kp::ProduceRequest::VERSIONS.min, kp::ProduceRequest::VERSIONS.max),
    (ApiKey::Fetch, kp::FetchRequest::VERSIONS.min, kp::FetchRequest::VERSIONS.max),
    (ApiKey::ListOffsets, kp::ListOffsetsRequest::VERSIONS.min, kp::ListOffsetsRequest::VERSIONS.max),
    (ApiKey::Metadata, kp::MetadataRequest::VERSIONS.min, kp::MetadataRequest::VERSIONS.max),
    (
        ApiKey::FindCoordinator,
        kp::FindCoordinatorRequest::VERSIONS.min,
        kp::FindCoordinatorRequest::VERSIONS.max,
    ),
    (ApiKey::ApiVersions, kp::ApiVersionsRequest::VERSIONS.min, kp::ApiVersionsRequest::VERSIONS.max),
    // What a test creates topics with (a regex subscription picking one up); kept in
    // memory only, and refused by a cluster node.
    (ApiKey::CreateTopics, kp::CreateTopicsRequest::VERSIONS.min, kp::CreateTopicsRequest::VERSIONS.max),
    // Advertised on every listener, as Kafka does; answered here only where no SASL
    // exchange is due (`authenticate` serves them before authentication).
    (ApiKey::SaslHandshake, kp::SaslHandshakeRequest::VERSIONS.min, kp::SaslHandshakeRequest::VERSIONS.max),
    (
        ApiKey::SaslAuthenticate,
        kp::SaslAuthenticateRequest::VERSIONS.min,
        kp::SaslAuthenticateRequest::VERSIONS.max,
    ),
    // KIP-932's fetch path over the empty partitions (`crate::share_fetch`), at Kafka
    // 4.2's versions (`wire::share_codec`: the crate knows v1 only).
    (ApiKey::ShareFetch, 1, 2),
    (ApiKey::ShareAcknowledge, 1, 2),
    // The configs of GROUP resources (`crate::configs`); other resources are refused.
    (
        ApiKey::DescribeConfigs,
        kp::DescribeConfigsRequest::VERSIONS.min,
        kp::DescribeConfigsRequest::VERSIONS.max,
    ),
    (
        ApiKey::IncrementalAlterConfigs,
        kp::IncrementalAlterConfigsRequest::VERSIONS.min,
        kp::IncrementalAlterConfigsRequest::VERSIONS.max,
    ),
    (
        ApiKey::ListConfigResources,
        kp::ListConfigResourcesRequest::VERSIONS.min,
        kp::ListConfigResourcesRequest::VERSIONS.max,
    ),
];

/// How the node serves a table row's request: `wire: plain` rows by the request's
/// `WireRequest` alone, the others by their file in `wire/`.
macro_rules! served {
    (plain $req:ident) => { crate::wire::Plain<gt::$req> };
    ($req:ident) => { crate::wire::Own<gt::$req> };
}

/// Expands the coordinator's table of group APIs into the node's dispatch and the
/// group APIs' part of ApiVersions.
macro_rules! serve_group_apis {
    ($(
        $(#[doc = $doc:literal])*
        $api:ident {
            key: $key:literal, versions: $min:literal ..= $max:literal, $(wire: $wire:ident,)?
            request: $req:ident $(($boxed:ident))?,
            $($rest:tt)*
        }
    )*) => {
        /// The group APIs, with the versions the coordinator's table serves.
        const GROUP_APIS: [(ApiKey, i16, i16); [$($key),*].len()] = [$((ApiKey::$api, $min, $max)),*];

        // The table's keys are `kafka-protocol`'s, and its versions the codec's ranges
        // (real-clients.md section 4: what ApiVersions advertises is exactly those):
        // the crate's, up to the newer ones `wire::share_codec` and `wire::offset_codec`
        // declare (the tests decode every version's sample). So is the walk's layout of
        // each request (`Serve::SCHEMA`: in group-types, or in `wire/`).
        $(const _: () = assert!(
            ApiKey::$api as i16 == $key
                && kp::$req::VERSIONS.min == $min
                && kp::$req::VERSIONS.max <= $max
                && <served!($($wire)? $req) as Serve>::SCHEMA.min == $min
                && <served!($($wire)? $req) as Serve>::SCHEMA.max == $max
        );)*

        impl Node {
            /// Serves a group API (any other key is refused).
            fn dispatch_group(&self, ctx: &Ctx<'_>, body: &mut Bytes) -> Result<Reply, RequestError> {
                match ctx.api {
                    $(ApiKey::$api => self.serve_group::<served!($($wire)? $req)>(ctx, body),)*
                    other => Err(RequestError::UnsupportedApi(other as i16)),
                }
            }
        }

        /// `visit` with the group API `api`'s request type, or `None` for any other key.
        #[cfg(test)]
        pub(crate) fn visit_group_api<V: crate::wire::VisitServe>(
            api: ApiKey,
            visit: V,
        ) -> Option<V::Output> {
            match api {
                $(ApiKey::$api => Some(visit.visit::<served!($($wire)? $req)>()),)*
                _ => None,
            }
        }
    };
}

group_coordinator::group_api_table!(serve_group_apis);

/// Both lists, in key order, as Kafka lists them.
const fn supported_apis<const N: usize>() -> [(ApiKey, i16, i16); N] {
    let mut all = [(ApiKey::Produce, 0, 0); N];
    let mut n = 0;
    while n < BROKER_APIS.len() {
        all[n] = BROKER_APIS[n];
        n += 1;
    }
    while n < N {
        all[n] = GROUP_APIS[n - BROKER_APIS.len()];
        n += 1;
    }
    // Insertion sort: a const fn has no `sort`.
    let mut i = 1;
    while i < N {
        let mut j = i;
        while j > 0 && (all[j - 1].0 as i16) > (all[j].0 as i16) {
            let swap = all[j - 1];
            all[j - 1] = all[j];
            all[j] = swap;
            j -= 1;
        }
        i += 1;
    }
    all
}

/// The APIs this node serves, with the versions `kafka-protocol` decodes: what ApiVersions
/// advertises (real-clients.md section 4: exactly the crate's ranges, Produce included,
/// nothing that is not implemented). The group APIs come from the coordinator's table
/// (`group_coordinator::group_api_table!`); KIP-848's are answered UNSUPPORTED_VERSION
/// without `consumer` in `--rebalance-protocols`, as Kafka does.
pub const SUPPORTED_APIS: &[(ApiKey, i16, i16)] =
    &supported_apis::<{ BROKER_APIS.len() + GROUP_APIS.len() }>();

/// ILLEGAL_SASL_STATE (not a group error code, so spelled here).
const ILLEGAL_SASL_STATE: i16 = 34;

/// UNKNOWN_TOPIC_ID (not a group error code either).
const UNKNOWN_TOPIC_ID: i16 = 100;

/// The longest a Fetch over empty partitions is held (clients ask for 500 ms).
const MAX_FETCH_WAIT: Duration = Duration::from_secs(30);

fn api_name(key: i16) -> String {
    ApiKey::try_from(key).map_or_else(|()| "unknown".to_owned(), |k| format!("{k:?}"))
}

/// Everything a connection needs to answer requests; shared by all connections.
pub(crate) struct Node {
    /// The topics, shared with CreateTopics.
    pub(crate) topics: Arc<SharedTopics>,
    /// Why CreateTopics is refused (a cluster node: its topics are its configuration,
    /// the same on every node), or `None` when it may create topics.
    pub(crate) topic_creation_refused: Option<&'static str>,
    /// One CreateTopics at a time: the coordinator sees each change whole, in order.
    pub(crate) creating: std::sync::Mutex<()>,
    /// With an ACL file, who may create topics: its super users only (the ACL
    /// operations have no CREATE).
    pub(crate) topic_creators: Option<Arc<crate::AclAuthorizer>>,
    /// The coordinator the group APIs go to.
    pub(crate) service: Arc<crate::CoordinatorService>,
    pub(crate) log: Option<Arc<RequestLog>>,
    /// Checks the APIs this node answers itself, as the coordinator checks the group
    /// APIs (the same ACLs; `AllowAll` without an ACL file).
    pub(crate) authorizer: Arc<dyn Authorizer>,
    /// Counted by the connections (see `crate::metrics`).
    pub(crate) metrics: Arc<crate::metrics::ServerMetrics>,
    /// The request and reply bytes every connection draws from.
    pub(crate) budgets: Arc<crate::connection::Budgets>,
    /// The brokers Metadata lists and FindCoordinator picks from.
    pub(crate) brokers: crate::brokers::Brokers,
    /// The share sessions of ShareFetch and ShareAcknowledge.
    pub(crate) share_sessions: std::sync::Mutex<crate::share_session::ShareSessionCache>,
}

/// A whole response frame: the length prefix, the header, the response. The
/// prefix is written in place once the length is known, so the connection sends
/// the buffer as it is instead of copying it behind a prefix.
pub(crate) fn encode_frame<R: Encodable>(
    correlation_id: i32,
    api: ApiKey,
    version: i16,
    response: &R,
) -> Result<BytesMut, RequestError> {
    let mut out = BytesMut::new();
    out.extend_from_slice(&[0; 4]);
    let header_version = api.response_header_version(version);
    ResponseHeader::default()
        .with_correlation_id(correlation_id)
        .encode(&mut out, header_version)
        .and_then(|()| response.encode(&mut out, version))
        .map_err(|e| RequestError::Encode(format!("{api:?} v{version}: {e}")))?;
    let len = i32::try_from(out.len() - 4)
        .map_err(|_| RequestError::Encode(format!("{api:?} v{version}: a response over 2 GiB")))?;
    out[..4].copy_from_slice(&len.to_be_bytes());
    Ok(out)
}

/// A request of an API the node answers itself, decoded once the walk passed its body.
pub(crate) fn decode<T: Decodable>(body: &mut Bytes, api: ApiKey, version: i16) -> Result<T, RequestError> {
    decode_as(schema::broker_message(api), body, api, version)
}

/// [`decode`] against `message`, the request's layout (a group API's is its
/// `WireApi::SCHEMA`).
fn decode_as<T: Decodable>(
    message: Option<schema::Layout>,
    body: &mut Bytes,
    api: ApiKey,
    version: i16,
) -> Result<T, RequestError> {
    let walked = schema::check_body(message, api, version, body);
    walked.map_err(|source| RequestError::Schema { api, version, source })?;
    T::decode(body, version).map_err(|e| RequestError::Decode(format!("{api:?} v{version}: {e}")))
}

fn sb(value: impl Into<String>) -> StrBytes {
    StrBytes::from_string(value.into())
}

impl Node {
    /// Serves one frame (length prefix stripped).
    pub(crate) fn handle(&self, mut frame: Bytes, session: &mut Session) -> Result<Reply, RequestError> {
        if frame.len() < 8 {
            return Err(RequestError::Short(frame.len()));
        }
        let api_key = i16::from_be_bytes([frame[0], frame[1]]);
        let version = i16::from_be_bytes([frame[2], frame[3]]);
        let correlation_id = i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
        let &(api, min, max) = SUPPORTED_APIS
            .iter()
            .find(|(k, _, _)| *k as i16 == api_key)
            .ok_or(RequestError::UnsupportedApi(api_key))?;
        if api == ApiKey::ApiVersions && version > max {
            // A newer client: answer UNSUPPORTED_VERSION with a v0 body listing what we
            // serve; it retries with a version it finds there (real-clients.md section 4).
            self.record(|| format!("\"api\":\"ApiVersions\",\"version\":{version},\"fallback\":true"));
            let resp = api_versions(ErrorCode::UnsupportedVersion, self.share_groups());
            return encode_frame(correlation_id, api, 0, &resp).map(Reply::Now);
        }
        if version < min || version > max {
            return Err(RequestError::UnsupportedVersion { api, version, min, max });
        }
        let header: RequestHeader = decode_request_header_from_buffer(&mut frame)
            .map_err(|e| RequestError::Decode(format!("request header: {e}")))?;
        session.set_client_id(header.client_id.as_ref().map_or("", |c| c.as_str()));
        let ctx = Ctx { correlation_id, api, version, caller: &session.context, peer: session.peer };
        self.dispatch(&ctx, &mut frame)
    }

    fn dispatch(&self, ctx: &Ctx<'_>, body: &mut Bytes) -> Result<Reply, RequestError> {
        let (api, v) = (ctx.api, ctx.version);
        let now = |resp: &dyn DynEncode| resp.frame(ctx).map(Reply::Now);
        match api {
            ApiKey::ApiVersions => {
                let _: kp::ApiVersionsRequest = decode(body, api, v)?;
                self.record(|| ctx.line(""));
                now(&api_versions(ErrorCode::None, self.share_groups()))
            }
            ApiKey::Metadata => {
                let req: kp::MetadataRequest = decode(body, api, v)?;
                self.record(|| {
                    // How many topics are asked for by id (librdkafka resolves assigned ids so).
                    let topics = req.topics.as_deref().unwrap_or_default();
                    let by_id = topics.iter().filter(|t| t.name.is_none()).count();
                    ctx.line(&format!(",\"topics\":{},\"by_id\":{by_id}", topics.len()))
                });
                now(&self.metadata(ctx.caller, &req, v))
            }
            ApiKey::FindCoordinator => {
                let req: kp::FindCoordinatorRequest = decode(body, api, v)?;
                self.record(|| ctx.line(""));
                now(&self.find_coordinator(ctx.caller, &req, v))
            }
            ApiKey::ListOffsets => {
                let req: kp::ListOffsetsRequest = decode(body, api, v)?;
                self.record(|| {
                    let mut parts = String::new();
                    for t in &req.topics {
                        for p in &t.partitions {
                            let sep = if parts.is_empty() { "" } else { "," };
                            let _ = write!(parts, "{sep}[\"{}\",{}]", t.name.0.as_str(), p.partition_index);
                        }
                    }
                    ctx.line(&format!(",\"partitions\":[{parts}]"))
                });
                now(&self.list_offsets(ctx.caller, &req, v))
            }
            ApiKey::Fetch => {
                let req: kp::FetchRequest = decode(body, api, v)?;
                let (resp, fetched) = self.fetch(ctx.caller, &req, v);
                self.record(|| ctx.line(&format!(",\"partitions\":[{fetched}]")));
                let wait =
                    Duration::from_millis(u64::try_from(req.max_wait_ms).unwrap_or(0)).min(MAX_FETCH_WAIT);
                Ok(Reply::NotBefore(Instant::now() + wait, resp.frame(ctx)?))
            }
            ApiKey::SaslHandshake => {
                // A listener without SASL, or a connection already authenticated:
                // KafkaApis.handleSaslHandshakeRequest answers ILLEGAL_SASL_STATE.
                let _: kp::SaslHandshakeRequest = decode(body, api, v)?;
                self.record(|| ctx.line(""));
                now(&kp::SaslHandshakeResponse::default().with_error_code(ILLEGAL_SASL_STATE))
            }
            ApiKey::SaslAuthenticate => {
                let _: kp::SaslAuthenticateRequest = decode(body, api, v)?;
                self.record(|| ctx.line(""));
                // KafkaApis.handleSaslAuthenticateRequest's answer and words.
                now(&kp::SaslAuthenticateResponse::default()
                    .with_error_code(ILLEGAL_SASL_STATE)
                    .with_error_message(Some(sb(
                        "SaslAuthenticate request received after successful authentication",
                    ))))
            }
            ApiKey::Produce => {
                let req: kp::ProduceRequest = decode(body, api, v)?;
                self.record(|| ctx.line(""));
                let resp = self.produce(ctx.caller, &req, v);
                if req.acks == 0 { Ok(Reply::Nothing) } else { now(&resp) }
            }
            ApiKey::CreateTopics => {
                let req: kp::CreateTopicsRequest = decode(body, api, v)?;
                let resp = self.create_topics(ctx.caller, &req, v);
                self.record(|| {
                    let topics: Vec<String> = resp
                        .topics
                        .iter()
                        .map(|t| format!("[{:?},{}]", t.name.0.as_str(), t.error_code))
                        .collect();
                    ctx.line(&format!(",\"topics\":[{}]", topics.join(",")))
                });
                now(&resp)
            }
            ApiKey::ShareFetch => {
                let req: share_codec::ShareFetchRequest = decode(body, api, v)?;
                let answer = self.share_fetch(ctx.caller, ctx.peer, &req, v);
                self.record(|| ctx.line(&answer.log));
                let frame = answer.response.frame(ctx)?;
                Ok(match answer.hold_ms {
                    Some(ms) => {
                        let wait = Duration::from_millis(u64::try_from(ms).unwrap_or(0)).min(MAX_FETCH_WAIT);
                        Reply::NotBefore(Instant::now() + wait, frame)
                    }
                    None => Reply::Now(frame),
                })
            }
            ApiKey::ShareAcknowledge => {
                let req: share_codec::ShareAcknowledgeRequest = decode(body, api, v)?;
                let answer = self.share_acknowledge(ctx.caller, &req, v);
                self.record(|| ctx.line(&answer.log));
                now(&answer.response)
            }
            ApiKey::DescribeConfigs => {
                let req: kp::DescribeConfigsRequest = decode(body, api, v)?;
                self.record(|| ctx.line(&format!(",\"resources\":{}", req.resources.len())));
                now(&self.describe_configs(ctx.caller, &req, v))
            }
            ApiKey::IncrementalAlterConfigs => {
                let req: kp::IncrementalAlterConfigsRequest = decode(body, api, v)?;
                self.record(|| ctx.line(&format!(",\"resources\":{}", req.resources.len())));
                now(&self.incremental_alter_configs(ctx.caller, &req))
            }
            ApiKey::ListConfigResources => {
                let req: kp::ListConfigResourcesRequest = decode(body, api, v)?;
                self.record(|| ctx.line(""));
                now(&self.list_config_resources(ctx.caller, &req, v))
            }
            _ => self.dispatch_group(ctx, body),
        }
    }

    /// Serves a group API: `S::serve` with the request decoded.
    fn serve_group<S: Serve>(&self, ctx: &Ctx<'_>, body: &mut Bytes) -> Result<Reply, RequestError> {
        let wire: S::Wire = decode_as(Some(S::SCHEMA), body, ctx.api, ctx.version)?;
        S::serve(self, ctx, wire)
    }

    /// Hands `request` to the coordinator as the request's caller.
    pub(crate) fn submit<R: GroupApi>(&self, ctx: &Ctx<'_>, request: R) -> Pending<R::Response> {
        request.submit(&self.service.coordinator().caller(ctx.caller))
    }

    /// Whether share groups are on (the coordinator's `share.enabled`).
    fn share_groups(&self) -> bool {
        self.service.coordinator().config().share.enabled
    }

    /// Writes a line to the request log, if there is one.
    pub(crate) fn record(&self, line: impl FnOnce() -> String) {
        if let Some(log) = &self.log {
            log.write(&line());
        }
    }

    /// CreateTopics: Kafka's per-topic checks (`ControllerApis`, `ReplicationControlManager`),
    /// then the topic is added to this node's (in-memory) topics and the coordinator's
    /// metadata image. Replication factors and configs are accepted and ignored: no
    /// records are stored. Creating needs CREATE, which an ACL file cannot grant here:
    /// with `--acl-file` only super users create topics.
    fn create_topics(
        &self,
        caller: &RequestContext,
        req: &kp::CreateTopicsRequest,
        version: i16,
    ) -> kp::CreateTopicsResponse {
        use kp::create_topics_response::CreatableTopicResult;
        let _one_at_a_time = self.creating.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let allowed = self.topic_creators.as_ref().is_none_or(|acl| acl.is_super_user(&caller.principal));
        let mut created = false;
        let results = req
            .topics
            .iter()
            .map(|topic| {
                let name = topic.name.0.as_str();
                let fail = |code: i16, message: String| {
                    CreatableTopicResult::default()
                        .with_name(topic.name.clone())
                        .with_error_code(code)
                        .with_error_message(Some(sb(message)))
                        .with_configs(None)
                };
                // Kafka's order: authorization, the topic's own checks, then the policy.
                let checked = if allowed {
                    check_new_topic(req, topic, &self.topics.get()).and_then(|partitions| {
                        match self.topic_creation_refused {
                            Some(why) => Err((POLICY_VIOLATION, why.to_owned())),
                            None => Ok(partitions),
                        }
                    })
                } else {
                    Err((ErrorCode::TopicAuthorizationFailed.code(), "Authorization failed.".to_owned()))
                };
                let partitions = match checked {
                    Ok(partitions) => partitions,
                    Err((code, message)) => return fail(code, message),
                };
                let spec = crate::TopicSpec { name: name.to_owned(), partitions };
                let id = spec.topic_id();
                if !req.validate_only {
                    if self.topics.add(spec).is_none() {
                        let message = format!("Topic '{name}' already exists.");
                        return fail(TOPIC_ALREADY_EXISTS, message);
                    }
                    created = true;
                    crate::log::log!("topic {name} created with {partitions} partition(s)");
                }
                CreatableTopicResult::default()
                    .with_name(topic.name.clone())
                    .with_topic_id(if version >= 7 { id } else { uuid::Uuid::nil() })
                    .with_error_message(None)
                    .with_num_partitions(partitions)
                    .with_replication_factor(if topic.replication_factor == -1 {
                        1
                    } else {
                        topic.replication_factor
                    })
                    .with_configs(Some(Vec::new()))
            })
            .collect();
        if created {
            self.service.topics_changed(&self.topics.get().specs());
        }
        kp::CreateTopicsResponse::default().with_topics(results)
    }

    fn metadata_topic(
        &self,
        topics: &Topics,
        name: &str,
        version: i16,
        brokers: &[Broker],
    ) -> kp::metadata_response::MetadataResponseTopic {
        use kp::metadata_response as r;
        let topic = r::MetadataResponseTopic::default().with_name(Some(sb(name).into()));
        let Some((partitions, id)) = topics.get(name) else {
            return topic.with_error_code(ErrorCode::UnknownTopicOrPartition.code());
        };
        topic.with_topic_id(if version >= 10 { id } else { uuid::Uuid::nil() }).with_partitions(
            (0..partitions)
                .map(|p| {
                    // Every partition is empty and any node serves it; the leaders are
                    // spread over the live brokers so that every node's answer agrees.
                    let node = kp::BrokerId(brokers[p as usize % brokers.len()].node_id);
                    r::MetadataResponsePartition::default()
                        .with_partition_index(p)
                        .with_leader_id(node)
                        .with_leader_epoch(if version >= 7 { 0 } else { -1 })
                        .with_replica_nodes(vec![node])
                        .with_isr_nodes(vec![node])
                })
                .collect(),
        )
    }

    /// Whether `caller` may `operation` on `resource`, for the APIs the node answers.
    fn may(&self, caller: &RequestContext, operation: AclOperation, resource: Resource<'_>) -> bool {
        self.authorizer.authorize(caller, operation, resource)
    }

    /// Kafka's `KafkaApis.handleTopicMetadataRequest`: DESCRIBE on each topic. A
    /// listing of every topic leaves out those the caller may not describe; a topic
    /// asked for by name is answered TOPIC_AUTHORIZATION_FAILED, before whether it
    /// exists, and by id the same with the id and no name (ids are not secret).
    /// From v8, when asked, each topic the caller may describe carries its authorized
    /// operations, and (v8-v10) the cluster its own, 0 without DESCRIBE on it (KIP-430).
    fn metadata(
        &self,
        caller: &RequestContext,
        req: &kp::MetadataRequest,
        version: i16,
    ) -> kp::MetadataResponse {
        use kp::metadata_response::{MetadataResponseBroker, MetadataResponseTopic};
        let brokers = self.brokers.brokers();
        let known = self.topics.get();
        let denied =
            MetadataResponseTopic::default().with_error_code(ErrorCode::TopicAuthorizationFailed.code());
        let with_operations = version >= 8 && req.include_topic_authorized_operations;
        let described = |name: &str| {
            let topic = self.metadata_topic(&known, name, version, &brokers);
            if with_operations {
                let ops = group_coordinator::authorized_operations(
                    &*self.authorizer,
                    caller,
                    Resource::Topic(name),
                );
                topic.with_topic_authorized_operations(ops)
            } else {
                topic
            }
        };
        let topics = match &req.topics {
            // Null (v1+) or empty at v0 means every topic.
            Some(t) if !t.is_empty() || version > 0 => t
                .iter()
                .map(|t| match &t.name {
                    Some(name) if !self.may(caller, AclOperation::Describe, Resource::Topic(name)) => {
                        denied.clone().with_name(Some(name.clone()))
                    }
                    Some(name) => described(name.0.as_str()),
                    None => match known.name_of(&t.topic_id) {
                        Some(name) if !self.may(caller, AclOperation::Describe, Resource::Topic(name)) => {
                            denied.clone().with_name(None).with_topic_id(t.topic_id)
                        }
                        Some(name) => described(name),
                        // Kafka's answer for an id it does not know: no name, the id
                        // echoed (librdkafka resolves assigned topic ids this way).
                        None => MetadataResponseTopic::default()
                            .with_error_code(UNKNOWN_TOPIC_ID)
                            .with_name(None)
                            .with_topic_id(t.topic_id),
                    },
                })
                .collect(),
            _ => known
                .iter()
                .filter(|(n, _, _)| self.may(caller, AclOperation::Describe, Resource::Topic(n)))
                .map(|(n, _, _)| described(n))
                .collect(),
        };
        let cluster_operations = if (8..=10).contains(&version) && req.include_cluster_authorized_operations {
            match self.may(caller, AclOperation::Describe, Resource::Cluster) {
                true => {
                    group_coordinator::authorized_operations(&*self.authorizer, caller, Resource::Cluster)
                }
                false => 0,
            }
        } else {
            i32::MIN
        };
        let wire_brokers = brokers
            .iter()
            .map(|b| {
                MetadataResponseBroker::default()
                    .with_node_id(b.node_id.into())
                    .with_host(sb(b.host.clone()))
                    .with_port(b.port)
            })
            .collect();
        // The controller is nobody's concern here (no topic changes are served): the
        // lowest live id, as stable as the cluster is.
        let controller = brokers.first().map_or(-1, |b| b.node_id);
        kp::MetadataResponse::default()
            .with_brokers(wire_brokers)
            .with_cluster_id(if version >= 2 { Some(sb("group-server")) } else { None })
            .with_controller_id(controller.into())
            .with_topics(topics)
            .with_cluster_authorized_operations(cluster_operations)
    }

    fn find_coordinator(
        &self,
        caller: &RequestContext,
        req: &kp::FindCoordinatorRequest,
        version: i16,
    ) -> kp::FindCoordinatorResponse {
        use kp::find_coordinator_response::Coordinator;
        let answer = |key: &str| {
            // Kafka's `KafkaApis.getCoordinator`, in its order.
            let share_key = (req.key_type == 2).then(|| key.parse::<SharePartitionKey>());
            let error = match (req.key_type, &share_key) {
                // DESCRIBE on the group.
                (0, _) if !self.may(caller, AclOperation::Describe, Resource::Group(key)) => {
                    ErrorCode::GroupAuthorizationFailed
                }
                (0, _) => ErrorCode::None,
                // A share partition's coordinator (KIP-932): v6 on, CLUSTER_ACTION, a
                // well-formed `group:topicId:partition`, share groups on here.
                (2, _) if version < 6 => ErrorCode::InvalidRequest,
                (2, _) if !self.may(caller, AclOperation::ClusterAction, Resource::Cluster) => {
                    ErrorCode::ClusterAuthorizationFailed
                }
                (2, Some(Err(_))) => ErrorCode::InvalidRequest,
                (2, _) if !self.share_groups() => ErrorCode::CoordinatorNotAvailable,
                (2, _) => ErrorCode::None,
                // Transactions (1) are not coordinated here.
                _ => ErrorCode::CoordinatorNotAvailable,
            };
            let owner = || match &share_key {
                Some(Ok(key)) => self.brokers.owner(self.service.coordinator().share_partition_of(key)),
                _ => self.brokers.coordinator(key),
            };
            // A group whose partition no live node owns yet (a failover under way):
            // the client asks again, as it does of Kafka while a partition moves.
            match error.is_ok().then(owner) {
                Some(Some(b)) => (error, b.node_id, sb(b.host), b.port),
                Some(None) => (ErrorCode::CoordinatorNotAvailable, -1, StrBytes::default(), -1),
                None => (error, -1, StrBytes::default(), -1),
            }
        };
        if version >= 4 {
            let coordinators = req
                .coordinator_keys
                .iter()
                .map(|key| {
                    let (error, node_id, host, port) = answer(key.as_str());
                    Coordinator::default()
                        .with_key(key.clone())
                        .with_node_id(node_id.into())
                        .with_host(host)
                        .with_port(port)
                        .with_error_code(error.code())
                })
                .collect();
            return kp::FindCoordinatorResponse::default().with_coordinators(coordinators);
        }
        let (error, node_id, host, port) = answer(req.key.as_str());
        kp::FindCoordinatorResponse::default()
            .with_error_code(error.code())
            .with_node_id(node_id.into())
            .with_host(host)
            .with_port(port)
    }

    /// Every partition is empty: earliest, latest and the LSO are all 0. Kafka's
    /// `KafkaApis.handleListOffsetRequest` needs DESCRIBE on the topic first.
    fn list_offsets(
        &self,
        caller: &RequestContext,
        req: &kp::ListOffsetsRequest,
        version: i16,
    ) -> kp::ListOffsetsResponse {
        use kp::list_offsets_response as r;
        let known = self.topics.get();
        let topics = req
            .topics
            .iter()
            .map(|t| {
                let name = t.name.0.as_str();
                let allowed = self.may(caller, AclOperation::Describe, Resource::Topic(name));
                let partitions = t
                    .partitions
                    .iter()
                    .map(|p| {
                        let part = r::ListOffsetsPartitionResponse::default()
                            .with_partition_index(p.partition_index)
                            .with_timestamp(-1);
                        let error = if !allowed {
                            ErrorCode::TopicAuthorizationFailed
                        } else if !known.has_partition(name, p.partition_index) {
                            ErrorCode::UnknownTopicOrPartition
                        } else {
                            return part.with_offset(0).with_leader_epoch(if version >= 4 { 0 } else { -1 });
                        };
                        part.with_error_code(error.code()).with_offset(-1)
                    })
                    .collect();
                r::ListOffsetsTopicResponse::default().with_name(t.name.clone()).with_partitions(partitions)
            })
            .collect();
        kp::ListOffsetsResponse::default().with_topics(topics)
    }

    /// Fetch over empty partitions. An offset past the (empty) end is answered as the end
    /// rather than OFFSET_OUT_OF_RANGE, so a position restored from a committed offset stays.
    ///
    /// Kafka's `KafkaApis.handleFetchRequest`: a consumer needs READ on each topic, a
    /// follower (a replica id) CLUSTER_ACTION on the cluster instead; either denial is
    /// TOPIC_AUTHORIZATION_FAILED per partition.
    fn fetch(
        &self,
        caller: &RequestContext,
        req: &kp::FetchRequest,
        version: i16,
    ) -> (kp::FetchResponse, String) {
        use kp::fetch_response as r;
        let replica = if version >= 15 { req.replica_state.replica_id } else { req.replica_id };
        let follower_allowed =
            (replica.0 >= 0).then(|| self.may(caller, AclOperation::ClusterAction, Resource::Cluster));
        let mut fetched = String::new();
        let known = self.topics.get();
        let responses = req
            .topics
            .iter()
            .map(|t| {
                let name = if version >= 13 {
                    known.name_of(&t.topic_id).map(str::to_owned)
                } else {
                    Some(t.topic.0.as_str().to_owned())
                };
                let denied = name.as_deref().is_some_and(|name| {
                    !follower_allowed
                        .unwrap_or_else(|| self.may(caller, AclOperation::Read, Resource::Topic(name)))
                });
                let unknown: i16 = if denied {
                    ErrorCode::TopicAuthorizationFailed.code()
                } else if version >= 13 {
                    UNKNOWN_TOPIC_ID
                } else {
                    ErrorCode::UnknownTopicOrPartition.code()
                };
                let partitions = t
                    .partitions
                    .iter()
                    .map(|p| {
                        let part = r::PartitionData::default().with_partition_index(p.partition);
                        match &name {
                            Some(name) if !denied && known.has_partition(name, p.partition) => {
                                let sep = if fetched.is_empty() { "" } else { "," };
                                let _ =
                                    write!(fetched, "{sep}[\"{name}\",{},{}]", p.partition, p.fetch_offset);
                                let end = p.fetch_offset.max(0);
                                part.with_high_watermark(end)
                                    .with_last_stable_offset(end)
                                    .with_log_start_offset(0)
                                    .with_records(Some(Bytes::new()))
                            }
                            _ => part
                                .with_error_code(unknown)
                                .with_high_watermark(-1)
                                .with_last_stable_offset(-1)
                                .with_log_start_offset(-1),
                        }
                    })
                    .collect();
                r::FetchableTopicResponse::default()
                    .with_topic(t.topic.clone())
                    .with_topic_id(t.topic_id)
                    .with_partitions(partitions)
            })
            .collect();
        (kp::FetchResponse::default().with_responses(responses), fetched)
    }

    /// Produce is advertised (librdkafka needs it to pick its fetch versions) but this node
    /// stores no records: every partition is refused with INVALID_REQUEST and a message,
    /// or TOPIC_AUTHORIZATION_FAILED without WRITE on its topic (Kafka's
    /// `KafkaApis.handleProduceRequest` authorizes first).
    fn produce(
        &self,
        caller: &RequestContext,
        req: &kp::ProduceRequest,
        version: i16,
    ) -> kp::ProduceResponse {
        use kp::produce_response as r;
        let message = "group-server is a consumer group coordinator node: it stores no records";
        let known = self.topics.get();
        let responses = req
            .topic_data
            .iter()
            .map(|t| {
                let name = if version >= 13 { known.name_of(&t.topic_id) } else { Some(t.name.0.as_str()) };
                let denied =
                    name.is_some_and(|name| !self.may(caller, AclOperation::Write, Resource::Topic(name)));
                r::TopicProduceResponse::default()
                    .with_name(t.name.clone())
                    .with_topic_id(t.topic_id)
                    .with_partition_responses(
                        t.partition_data
                            .iter()
                            .map(|p| {
                                let part = r::PartitionProduceResponse::default()
                                    .with_index(p.index)
                                    .with_base_offset(-1);
                                if denied {
                                    return part.with_error_code(ErrorCode::TopicAuthorizationFailed.code());
                                }
                                part.with_error_code(ErrorCode::InvalidRequest.code())
                                    .with_error_message(if version >= 8 { Some(sb(message)) } else { None })
                            })
                            .collect(),
                    )
            })
            .collect();
        kp::ProduceResponse::default().with_responses(responses)
    }
}

/// Kafka's error codes for CreateTopics (not group error codes, so spelled here).
const INVALID_TOPIC_EXCEPTION: i16 = 17;
const TOPIC_ALREADY_EXISTS: i16 = 36;
const INVALID_PARTITIONS: i16 = 37;
const INVALID_REPLICATION_FACTOR: i16 = 38;
const INVALID_REPLICA_ASSIGNMENT: i16 = 39;
const POLICY_VIOLATION: i16 = 44;

/// One topic of a CreateTopics: its partition count, or the error and message Kafka
/// gives (`num_partitions` -1 is `num.partitions`, 1).
fn check_new_topic(
    req: &kp::CreateTopicsRequest,
    topic: &kp::create_topics_request::CreatableTopic,
    known: &Topics,
) -> Result<i32, (i16, String)> {
    let name = topic.name.0.as_str();
    if req.topics.iter().filter(|t| t.name == topic.name).count() > 1 {
        return Err((
            ErrorCode::InvalidRequest.code(),
            format!("Duplicate topic name {name} in the request."),
        ));
    }
    if !crate::topics::legal_topic_name(name) {
        return Err((
            INVALID_TOPIC_EXCEPTION,
            format!(
                "Topic name \"{name}\" is illegal: it must be 1 to 249 characters of ASCII \
                 alphanumerics, '.', '_' and '-', and not '.' or '..'."
            ),
        ));
    }
    if known.get(name).is_some() {
        return Err((TOPIC_ALREADY_EXISTS, format!("Topic '{name}' already exists.")));
    }
    let partitions = if topic.assignments.is_empty() {
        if topic.num_partitions == 0 || topic.num_partitions < -1 {
            return Err((
                INVALID_PARTITIONS,
                "Number of partitions was set to an invalid non-positive value.".to_owned(),
            ));
        }
        if topic.replication_factor == 0 || topic.replication_factor < -1 {
            return Err((
                INVALID_REPLICATION_FACTOR,
                "Replication factor must be larger than 0, or -1 to use the default value.".to_owned(),
            ));
        }
        if topic.num_partitions == -1 { 1 } else { topic.num_partitions }
    } else {
        if topic.num_partitions != -1 || topic.replication_factor != -1 {
            return Err((
                ErrorCode::InvalidRequest.code(),
                "Both numPartitions or replicationFactor and replicasAssignments were set. Both \
                 cannot be used at the same time."
                    .to_owned(),
            ));
        }
        let count = topic.assignments.len();
        let mut seen = vec![false; count];
        for a in &topic.assignments {
            match usize::try_from(a.partition_index).ok().filter(|&i| i < count) {
                Some(i) if !seen[i] => seen[i] = true,
                _ => {
                    return Err((
                        INVALID_REPLICA_ASSIGNMENT,
                        "Partitions should be a consecutive 0-based integer sequence.".to_owned(),
                    ));
                }
            }
        }
        i32::try_from(count).unwrap_or(i32::MAX)
    };
    if partitions > crate::topics::MAX_PARTITIONS {
        return Err((
            INVALID_PARTITIONS,
            format!("Number of partitions exceeds {} on this node.", crate::topics::MAX_PARTITIONS),
        ));
    }
    Ok(partitions)
}

/// The share group APIs a client looks for: advertised only while share groups are on
/// (Kafka leaves them out of ApiVersions too while they are off, and the coordinator
/// then answers them `UNSUPPORTED_VERSION`).
pub const SHARE_GROUP_APIS: [ApiKey; 7] = [
    ApiKey::ShareGroupHeartbeat,
    ApiKey::ShareGroupDescribe,
    ApiKey::ShareFetch,
    ApiKey::ShareAcknowledge,
    ApiKey::DescribeShareGroupOffsets,
    ApiKey::AlterShareGroupOffsets,
    ApiKey::DeleteShareGroupOffsets,
];

/// The ApiVersions body: every supported key with the crate's range.
fn api_versions(error: ErrorCode, share_groups: bool) -> kp::ApiVersionsResponse {
    let keys = SUPPORTED_APIS
        .iter()
        .filter(|(k, _, _)| share_groups || !SHARE_GROUP_APIS.contains(k))
        .map(|&(k, min, max)| {
            kp::api_versions_response::ApiVersion::default()
                .with_api_key(k as i16)
                .with_min_version(min)
                .with_max_version(max)
        })
        .collect();
    kp::ApiVersionsResponse::default().with_error_code(error.code()).with_api_keys(keys)
}

/// The request being served.
pub(crate) struct Ctx<'a> {
    correlation_id: i32,
    pub(crate) api: ApiKey,
    pub(crate) version: i16,
    /// Who asks: group requests run as this caller.
    pub(crate) caller: &'a RequestContext,
    /// The connection's peer, which names the connection (share sessions end with it).
    pub(crate) peer: std::net::SocketAddr,
}

impl Ctx<'_> {
    /// What a group request's conversion knows besides its body: the version and
    /// the caller's client id and host.
    pub(crate) fn header(&self) -> group_types::wire::Header<'_> {
        group_types::wire::Header::new(self.version, &self.caller.client_id, &self.caller.client_host)
    }

    /// A request-log line: the request's API, version and caller, then `extra`.
    pub(crate) fn line(&self, extra: &str) -> String {
        format!(
            "\"api\":\"{:?}\",\"version\":{},\"client_id\":{:?},\"principal\":\"{}:{}\"{extra}",
            self.api,
            self.version,
            self.caller.client_id,
            self.caller.principal.principal_type().escape_debug(),
            self.caller.principal.name().escape_debug()
        )
    }

    /// The reply to the coordinator's answer `pending`, `encode`d with the
    /// request's version: at once when the answer is in (a heartbeat, a fetch of
    /// committed offsets: no future is allocated), else awaited in order by the
    /// connection.
    pub(crate) fn later<T: ResponseKind + Send + 'static, R: Encodable + 'static>(
        &self,
        mut pending: Pending<T>,
        encode: impl FnOnce(Result<T, CoordinatorError>, i16) -> R + Send + 'static,
    ) -> Reply {
        let (correlation_id, api, version) = (self.correlation_id, self.api, self.version);
        match pending.try_get() {
            Some(answer) => match encode_frame(correlation_id, api, version, &encode(answer, version)) {
                Ok(frame) => Reply::Now(frame),
                Err(e) => Reply::Later(Box::pin(std::future::ready(Err(e)))),
            },
            None => Reply::Later(Box::pin(async move {
                let resp = encode(pending.await, version);
                encode_frame(correlation_id, api, version, &resp)
            })),
        }
    }

    /// [`later`](Self::later) for the answers of several requests (an OffsetFetch
    /// of many groups), in order.
    pub(crate) fn later_all<T: ResponseKind + Send + 'static, R: Encodable + 'static>(
        &self,
        pending: Vec<Pending<T>>,
        encode: impl FnOnce(Vec<Result<T, CoordinatorError>>, i16) -> R + Send + 'static,
    ) -> Reply {
        let (correlation_id, api, version) = (self.correlation_id, self.api, self.version);
        let mut answers = Vec::with_capacity(pending.len());
        let mut rest = pending.into_iter();
        while let Some(mut next) = rest.next() {
            match next.try_get() {
                Some(answer) => answers.push(answer),
                None => {
                    return Reply::Later(Box::pin(async move {
                        answers.push(next.await);
                        for next in rest {
                            answers.push(next.await);
                        }
                        encode_frame(correlation_id, api, version, &encode(answers, version))
                    }));
                }
            }
        }
        match encode_frame(correlation_id, api, version, &encode(answers, version)) {
            Ok(frame) => Reply::Now(frame),
            Err(e) => Reply::Later(Box::pin(std::future::ready(Err(e)))),
        }
    }
}

/// Object-safe encoding of any response, for the `now` helper.
trait DynEncode {
    fn frame(&self, ctx: &Ctx<'_>) -> Result<BytesMut, RequestError>;
}

impl<R: Encodable> DynEncode for R {
    fn frame(&self, ctx: &Ctx<'_>) -> Result<BytesMut, RequestError> {
        encode_frame(ctx.correlation_id, ctx.api, ctx.version, self)
    }
}

/// The correlation id of a frame, if it is long enough to carry one (for log lines).
pub(crate) fn correlation_id(frame: &[u8]) -> Option<i32> {
    let mut f = frame.get(4..8)?;
    Some(f.get_i32())
}

#[cfg(test)]
#[path = "node_tests.rs"]
mod tests;
