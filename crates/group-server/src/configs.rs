//! DescribeConfigs (key 32) and IncrementalAlterConfigs (key 44) of GROUP resources
//! (resource type 32): a group's configs (Kafka's `GroupConfig`) as the coordinator
//! keeps them (`group_coordinator::Caller::describe_group_configs` and
//! `alter_group_configs`, which ask DESCRIBE_CONFIGS and ALTER_CONFIGS on the group).
//!
//! This node is a group coordinator, not a broker: it has no topic, broker, logger or
//! client-metrics configs. Every resource of another type is answered
//! `INVALID_REQUEST`, with a message that says so, resource by resource, so that the
//! group resources of the same request are still served. (Kafka answers a resource
//! type it does not serve `INVALID_REQUEST` too, `ConfigHelper.describeConfigs`'s
//! "Unsupported resource type".) The legacy AlterConfigs (key 33), which replaces a
//! resource's configs whole, is not served.
//!
//! ListConfigResources (key 74, KIP-1142) lists the groups that have configs; it lists
//! no resource of the other types, whose configs this node does not serve (Kafka lists
//! its topics, brokers and client-metrics subscriptions there too).
//!
//! A node keeps its groups' configs in its own store (`--data-dir`), not in the
//! coordinator partitions' logs: in a cluster (`--cluster`) each node has its own.

use group_coordinator::{AclOperation, AlterConfigOp, GroupConfigError, RequestContext, Resource};
use group_types::ErrorCode;
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::StrBytes;

use crate::node::Node;

/// `ConfigResource.Type.GROUP`.
const GROUP: i8 = 32;

/// Why a resource of another type is refused.
pub(crate) const NOT_A_GROUP: &str =
    "This node is a group coordinator: it serves the configs of GROUP resources (type 32) only.";

fn sb(value: impl Into<String>) -> StrBytes {
    StrBytes::from_string(value.into())
}

/// A resource's outcome on the wire: its code and message.
fn refusal(error: &GroupConfigError) -> (i16, Option<StrBytes>) {
    (error.error_code().code(), Some(sb(error.to_string())))
}

impl Node {
    /// DescribeConfigs, as `ConfigHelper.handleDescribeConfigsRequest`: the resources
    /// described (or refused for what they are) in request order, then those the caller
    /// may not describe, GROUP_AUTHORIZATION_FAILED with no configs.
    pub(crate) fn describe_configs(
        &self,
        caller: &RequestContext,
        req: &kp::DescribeConfigsRequest,
        version: i16,
    ) -> kp::DescribeConfigsResponse {
        use kp::describe_configs_response::{
            DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
        };
        let coordinator = self.service.coordinator().caller(caller);
        let mut described = Vec::new();
        let mut denied = Vec::new();
        for resource in &req.resources {
            let result = DescribeConfigsResult::default()
                .with_resource_type(resource.resource_type)
                .with_resource_name(resource.resource_name.clone());
            if resource.resource_type != GROUP {
                let code = ErrorCode::InvalidRequest.code();
                described.push(result.with_error_code(code).with_error_message(Some(sb(NOT_A_GROUP))));
                continue;
            }
            let keys: Option<Vec<String>> =
                resource.configuration_keys.as_ref().map(|keys| keys.iter().map(|k| k.to_string()).collect());
            let answer = coordinator.describe_group_configs(
                resource.resource_name.as_str(),
                keys.as_deref(),
                req.include_synonyms,
                version >= 3 && req.include_documentation,
            );
            match answer {
                Ok(configs) => {
                    let configs = configs
                        .into_iter()
                        .map(|c| {
                            let synonyms = c
                                .synonyms
                                .into_iter()
                                .map(|s| {
                                    DescribeConfigsSynonym::default()
                                        .with_name(sb(s.name))
                                        .with_value(Some(sb(s.value)))
                                        .with_source(s.source.code())
                                })
                                .collect();
                            let entry = DescribeConfigsResourceResult::default()
                                .with_name(sb(c.name))
                                .with_value(Some(sb(c.value)))
                                .with_read_only(false)
                                .with_is_sensitive(false)
                                .with_config_source(c.source.code())
                                .with_synonyms(synonyms);
                            if version >= 3 {
                                entry
                                    .with_config_type(c.config_type.code())
                                    .with_documentation(c.documentation.map(sb))
                            } else {
                                entry
                            }
                        })
                        .collect();
                    described.push(result.with_error_message(None).with_configs(configs));
                }
                Err(e @ GroupConfigError::AuthorizationFailed) => {
                    let (code, message) = refusal(&e);
                    denied.push(result.with_error_code(code).with_error_message(message));
                }
                Err(e) => {
                    let (code, message) = refusal(&e);
                    described.push(result.with_error_code(code).with_error_message(message));
                }
            }
        }
        described.append(&mut denied);
        kp::DescribeConfigsResponse::default().with_results(described)
    }

    /// IncrementalAlterConfigs, as `ConfigAdminManager.preprocess` and the controller:
    /// a resource named twice, a config named twice or a value missing for an operation
    /// other than DELETE is INVALID_REQUEST; then the coordinator checks ALTER_CONFIGS
    /// and the configs. One answer per resource, in request order.
    pub(crate) fn incremental_alter_configs(
        &self,
        caller: &RequestContext,
        req: &kp::IncrementalAlterConfigsRequest,
    ) -> kp::IncrementalAlterConfigsResponse {
        use kp::incremental_alter_configs_response::AlterConfigsResourceResponse;
        let coordinator = self.service.coordinator().caller(caller);
        let same = |a: &kp::incremental_alter_configs_request::AlterConfigsResource,
                    b: &kp::incremental_alter_configs_request::AlterConfigsResource| {
            a.resource_type == b.resource_type && a.resource_name == b.resource_name
        };
        let responses = req
            .resources
            .iter()
            .map(|resource| {
                let answer = AlterConfigsResourceResponse::default()
                    .with_resource_type(resource.resource_type)
                    .with_resource_name(resource.resource_name.clone());
                let invalid = |message: String| Err::<(), _>(GroupConfigError::InvalidRequest(message));
                let names: Vec<&str> = resource.configs.iter().map(|c| c.name.as_str()).collect();
                let outcome = if req.resources.iter().filter(|r| same(r, resource)).count() > 1 {
                    invalid("Each resource must appear at most once.".to_owned())
                } else if (1..names.len()).any(|i| names[..i].contains(&names[i])) {
                    invalid("Error due to duplicate config keys".to_owned())
                } else if let Some(nulls) = Some(
                    resource
                        .configs
                        .iter()
                        .filter(|c| c.config_operation != 1 && c.value.is_none())
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>(),
                )
                .filter(|nulls| !nulls.is_empty())
                {
                    invalid(format!("Null value not supported for : {}", nulls.join(", ")))
                } else if resource.resource_type != GROUP {
                    invalid(NOT_A_GROUP.to_owned())
                } else {
                    let ops: Option<Vec<(String, AlterConfigOp)>> = resource
                        .configs
                        .iter()
                        .map(|c| {
                            let value = c.value.as_ref().map(|v| v.to_string());
                            AlterConfigOp::from_code(c.config_operation, value)
                                .map(|op| (c.name.to_string(), op))
                        })
                        .collect();
                    match ops {
                        None => invalid("Unknown config operation.".to_owned()),
                        Some(ops) => coordinator.alter_group_configs(
                            resource.resource_name.as_str(),
                            &ops,
                            req.validate_only,
                        ),
                    }
                };
                match outcome {
                    Ok(()) => answer.with_error_message(None),
                    Err(e) => {
                        let (code, message) = refusal(&e);
                        answer.with_error_code(code).with_error_message(message)
                    }
                }
            })
            .collect();
        kp::IncrementalAlterConfigsResponse::default().with_responses(responses)
    }

    /// ListConfigResources, as `KafkaApis.handleListConfigResources`: DESCRIBE_CONFIGS on
    /// the cluster, else CLUSTER_AUTHORIZATION_FAILED; a type outside the version's
    /// (v0: CLIENT_METRICS only, Kafka's old ListClientMetricsResources; v1: TOPIC,
    /// BROKER, BROKER_LOGGER, CLIENT_METRICS and GROUP) is UNSUPPORTED_VERSION; no type
    /// asked is every type of the version. Of them, the groups with configs are listed.
    pub(crate) fn list_config_resources(
        &self,
        caller: &RequestContext,
        req: &kp::ListConfigResourcesRequest,
        version: i16,
    ) -> kp::ListConfigResourcesResponse {
        use kp::list_config_resources_response::ConfigResource;
        let response = kp::ListConfigResourcesResponse::default();
        if !self.authorizer.authorize(caller, AclOperation::DescribeConfigs, Resource::Cluster) {
            return response.with_error_code(ErrorCode::ClusterAuthorizationFailed.code());
        }
        let supported: &[i8] = if version == 0 { &[16] } else { &[2, 4, 8, 16, GROUP] };
        let asked: &[i8] = if req.resource_types.is_empty() { supported } else { &req.resource_types };
        if asked.iter().any(|t| !supported.contains(t)) {
            return response.with_error_code(ErrorCode::UnsupportedVersion.code());
        }
        let resources = if asked.contains(&GROUP) {
            let groups = self.service.coordinator().groups_with_configs();
            groups
                .into_iter()
                .map(|g| ConfigResource::default().with_resource_name(sb(g)).with_resource_type(GROUP))
                .collect()
        } else {
            Vec::new()
        };
        response.with_config_resources(resources)
    }
}
