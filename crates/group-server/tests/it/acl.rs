//! ACLs over the wire: a server started with `--acl-file` answers the group APIs
//! and its own broker APIs as the file says for `User:ANONYMOUS` (every plaintext
//! connection), rules for other principals do not apply to it, and the file is
//! reread by `reload_acls` and, in the binary, on SIGHUP.

use std::path::{Path, PathBuf};

use group_server::{AclError, GroupServer, ServerError, TopicSpec, topic_id_for};
use kafka_protocol::messages::*;

use crate::binary::{Node, Stderr, group_server};
use crate::client::{Conn, join, produce_one_record, s, server_with};

/// TOPIC_AUTHORIZATION_FAILED.
const TOPIC_DENIED: i16 = 29;
/// GROUP_AUTHORIZATION_FAILED.
const GROUP_DENIED: i16 = 30;

const RULES: &str = "
# Alice may do everything: none of it applies to ANONYMOUS.
allow User:alice     ALL   Group:*
allow User:alice     ALL   Topic:*
allow User:*         READ  Group:everyone-else from 10.9.9.9

allow User:ANONYMOUS READ  Group:orders
allow User:ANONYMOUS READ  Group:batch-  prefixed
deny  User:ANONYMOUS READ  Group:batch-secret
allow User:ANONYMOUS READ  Topic:t1
";

/// A file in a fresh temporary directory, holding `text`.
struct AclFile(PathBuf);

impl AclFile {
    fn new(name: &str, text: &str) -> AclFile {
        let dir = std::env::temp_dir().join(format!("group-server-it-acl-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = AclFile(dir.join("acls"));
        file.write(text);
        file
    }

    fn write(&self, text: &str) {
        std::fs::write(&self.0, text).expect("write the ACL file");
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for AclFile {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A server over `acls` with topics t1 (3 partitions) and t2 (1).
fn acl_server(acls: &AclFile, super_users: &[&str]) -> GroupServer {
    server_with(|config| {
        config.topics.push(TopicSpec { name: "t2".into(), partitions: 1 });
        config.security.acl_file = Some(acls.path().to_owned());
        config.security.super_users = super_users.iter().map(|&u| u.to_owned()).collect();
    })
}

fn join_error(c: &mut Conn, group: &str) -> i16 {
    let resp: JoinGroupResponse = c.call(ApiKey::JoinGroup, 3, &join(group, ""));
    resp.error_code
}

/// A simple (memberless) commit of `topics`' partition 0 to `group`: each
/// partition's error code, by topic.
fn commit(c: &mut Conn, group: &str, topics: &[&str]) -> Vec<(String, i16)> {
    let part = offset_commit_request::OffsetCommitRequestPartition::default()
        .with_partition_index(0)
        .with_committed_offset(5);
    let topics = topics
        .iter()
        .map(|&t| {
            offset_commit_request::OffsetCommitRequestTopic::default()
                .with_name(s(t).into())
                .with_partitions(vec![part.clone()])
        })
        .collect();
    let req = OffsetCommitRequest::default()
        .with_group_id(s(group).into())
        .with_generation_id_or_member_epoch(-1)
        .with_topics(topics);
    let resp: OffsetCommitResponse = c.call(ApiKey::OffsetCommit, 8, &req);
    resp.topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (t.name.0.to_string(), p.error_code)))
        .collect()
}

/// FindCoordinator v2 for one group and v4 for `groups`: the error codes.
fn find(c: &mut Conn, groups: &[&str]) -> (i16, Vec<i16>) {
    let one: FindCoordinatorResponse =
        c.call(ApiKey::FindCoordinator, 2, &FindCoordinatorRequest::default().with_key(s(groups[0])));
    let req = FindCoordinatorRequest::default().with_coordinator_keys(groups.iter().map(|g| s(g)).collect());
    let batch: FindCoordinatorResponse = c.call(ApiKey::FindCoordinator, 4, &req);
    (one.error_code, batch.coordinators.iter().map(|k| k.error_code).collect())
}

#[test]
fn join_and_commit_need_read_on_the_group_and_deny_wins() {
    let acls = AclFile::new("groups", RULES);
    let server = acl_server(&acls, &[]);
    let mut c = Conn::open(server.local_addr());
    // Alice's rules, and a rule for everyone from another host, do not apply.
    assert_eq!(join_error(&mut c, "billing"), GROUP_DENIED);
    assert_eq!(join_error(&mut c, "everyone-else"), GROUP_DENIED);
    assert_eq!(commit(&mut c, "billing", &["t1"]), vec![("t1".into(), GROUP_DENIED)]);
    // A literal grant, and a prefixed one for a whole family of groups.
    assert_eq!(join_error(&mut c, "orders"), 0);
    assert_eq!(join_error(&mut c, "batch-eu"), 0);
    assert_eq!(commit(&mut c, "batch-us", &["t1"]), vec![("t1".into(), 0)]);
    assert_eq!(commit(&mut c, "batch", &["t1"]), vec![("t1".into(), GROUP_DENIED)]);
    // The deny overrides the prefixed allow.
    assert_eq!(join_error(&mut c, "batch-secret"), GROUP_DENIED);
    assert_eq!(commit(&mut c, "batch-secret", &["t1"]), vec![("t1".into(), GROUP_DENIED)]);
    // READ on the group but not on topic t2: that partition only is refused.
    assert_eq!(
        commit(&mut c, "batch-mixed", &["t1", "t2"]),
        vec![("t1".into(), 0), ("t2".into(), TOPIC_DENIED)]
    );
}

#[test]
fn find_coordinator_needs_describe_on_the_group() {
    let acls = AclFile::new("find", RULES);
    let server = acl_server(&acls, &[]);
    let mut c = Conn::open(server.local_addr());
    // DESCRIBE is implied by READ.
    assert_eq!(
        find(&mut c, &["orders", "billing", "batch-1", "batch-secret"]),
        (0, vec![0, GROUP_DENIED, 0, 0])
    );
    assert_eq!(find(&mut c, &["billing", "orders"]), (GROUP_DENIED, vec![GROUP_DENIED, 0]));
    let denied: FindCoordinatorResponse =
        c.call(ApiKey::FindCoordinator, 2, &FindCoordinatorRequest::default().with_key(s("billing")));
    assert_eq!((denied.node_id.0, denied.port), (-1, -1), "a denied key names no coordinator");
}

#[test]
fn broker_apis_need_describe_read_or_write_on_the_topic() {
    let acls = AclFile::new("topics", RULES);
    let server = acl_server(&acls, &[]);
    let mut c = Conn::open(server.local_addr());
    // Metadata of every topic leaves t2 out; asked by name, it is refused.
    let all: MetadataResponse = c.call(ApiKey::Metadata, 12, &MetadataRequest::default().with_topics(None));
    let names: Vec<_> = all.topics.iter().map(|t| t.name.as_ref().map(|n| n.0.to_string())).collect();
    assert_eq!(names, vec![Some("t1".to_owned())]);
    let topic = |n: &str| metadata_request::MetadataRequestTopic::default().with_name(Some(s(n).into()));
    let req = MetadataRequest::default().with_topics(Some(vec![topic("t1"), topic("t2"), topic("nope")]));
    let some: MetadataResponse = c.call(ApiKey::Metadata, 12, &req);
    let codes: Vec<i16> = some.topics.iter().map(|t| t.error_code).collect();
    assert_eq!(codes, vec![0, TOPIC_DENIED, TOPIC_DENIED], "denied before whether it exists");
    assert!(some.topics[1].partitions.is_empty());
    // By id: refused with the id and no name (Kafka: topic ids are not secret).
    let by_id = |n: &str| {
        metadata_request::MetadataRequestTopic::default().with_name(None).with_topic_id(topic_id_for(n))
    };
    let req = MetadataRequest::default().with_topics(Some(vec![by_id("t1"), by_id("t2")]));
    let ids: MetadataResponse = c.call(ApiKey::Metadata, 12, &req);
    let got: Vec<_> = ids.topics.iter().map(|t| (t.error_code, t.name.is_some(), t.topic_id)).collect();
    assert_eq!(got, vec![(0, true, topic_id_for("t1")), (TOPIC_DENIED, false, topic_id_for("t2"))]);

    // ListOffsets (DESCRIBE, implied by READ on t1).
    let part =
        list_offsets_request::ListOffsetsPartition::default().with_partition_index(0).with_timestamp(-1);
    let lo = |n: &str| {
        list_offsets_request::ListOffsetsTopic::default()
            .with_name(s(n).into())
            .with_partitions(vec![part.clone()])
    };
    let req = ListOffsetsRequest::default().with_topics(vec![lo("t1"), lo("t2")]);
    let resp: ListOffsetsResponse = c.call(ApiKey::ListOffsets, 7, &req);
    let codes: Vec<i16> = resp.topics.iter().map(|t| t.partitions[0].error_code).collect();
    assert_eq!(codes, vec![0, TOPIC_DENIED]);

    // Fetch (READ) by name at v12; a follower needs CLUSTER_ACTION instead.
    let fetch = |n: &str| {
        let p = fetch_request::FetchPartition::default().with_partition(0);
        fetch_request::FetchTopic::default().with_topic(s(n).into()).with_partitions(vec![p])
    };
    let req = FetchRequest::default().with_max_wait_ms(0).with_topics(vec![fetch("t1"), fetch("t2")]);
    let resp: FetchResponse = c.call(ApiKey::Fetch, 12, &req);
    let codes: Vec<i16> = resp.responses.iter().map(|t| t.partitions[0].error_code).collect();
    assert_eq!(codes, vec![0, TOPIC_DENIED]);
    let follower = req.clone().with_replica_id(BrokerId(3));
    let resp: FetchResponse = c.call(ApiKey::Fetch, 12, &follower);
    let codes: Vec<i16> = resp.responses.iter().map(|t| t.partitions[0].error_code).collect();
    assert_eq!(codes, vec![TOPIC_DENIED, TOPIC_DENIED]);
    // By topic id at v16.
    let by_id = |n: &str| {
        let p = fetch_request::FetchPartition::default().with_partition(0);
        fetch_request::FetchTopic::default().with_topic_id(topic_id_for(n)).with_partitions(vec![p])
    };
    let req = FetchRequest::default().with_max_wait_ms(0).with_topics(vec![by_id("t1"), by_id("t2")]);
    let resp: FetchResponse = c.call(ApiKey::Fetch, 16, &req);
    let codes: Vec<i16> = resp.responses.iter().map(|t| t.partitions[0].error_code).collect();
    assert_eq!(codes, vec![0, TOPIC_DENIED]);

    // Produce (WRITE): nobody but alice has it.
    let resp: ProduceResponse = c.call(ApiKey::Produce, 9, &produce_one_record("t1"));
    assert_eq!(resp.responses[0].partition_responses[0].error_code, TOPIC_DENIED);
}

#[test]
fn super_users_may_do_everything_and_an_empty_file_nothing() {
    let acls = AclFile::new("super", "# no rules\n");
    let nobody = acl_server(&acls, &["User:alice"]);
    let mut c = Conn::open(nobody.local_addr());
    assert_eq!(join_error(&mut c, "g"), GROUP_DENIED);
    let admin = acl_server(&acls, &["User:alice", "User:ANONYMOUS"]);
    let mut c = Conn::open(admin.local_addr());
    assert_eq!(join_error(&mut c, "g"), 0);
    assert_eq!(commit(&mut c, "h", &["t2"]), vec![("t2".into(), 0)]);
}

#[test]
fn reloading_changes_the_answers_and_a_bad_file_keeps_the_rules() {
    let acls = AclFile::new("reload", RULES);
    let server = acl_server(&acls, &[]);
    let mut c = Conn::open(server.local_addr());
    assert_eq!(join_error(&mut c, "billing"), GROUP_DENIED);
    acls.write("allow User:ANONYMOUS READ Group:billing\n");
    assert_eq!(server.reload_acls(), Ok(1));
    assert_eq!(join_error(&mut c, "billing"), 0, "the new rule is in force");
    assert_eq!(join_error(&mut c, "orders"), GROUP_DENIED, "the old rules are gone");
    acls.write("allow User:ANONYMOUS READ Group:orders\nallow User:ANONYMOUS READ\n");
    let error = server.reload_acls().expect_err("a bad file");
    assert!(matches!(error, AclError::Syntax { line: 2, .. }), "{error:?}");
    assert_eq!(join_error(&mut c, "orders"), GROUP_DENIED, "the bad file changed nothing");
    assert_eq!(commit(&mut c, "billing", &["t1"]), vec![("t1".into(), TOPIC_DENIED)]);
    let without = server_with(|_| {});
    assert_eq!(without.reload_acls(), Err(AclError::NotConfigured));
}

#[test]
fn a_bad_file_stops_the_start_naming_its_line() {
    let acls = AclFile::new("bad", "allow User:ANONYMOUS READ Group:g\n\ndeny User:x READ Grop:g\n");
    let mut config =
        group_server::ServerConfig::from_args(["--listen", "127.0.0.1:0", "--memory"]).expect("config");
    config.security.acl_file = Some(acls.path().to_owned());
    let error = GroupServer::start(&config).expect_err("a bad ACL file");
    assert!(matches!(&error, ServerError::Acl(AclError::Syntax { line: 3, .. })), "{error:?}");
    let text = error.to_string();
    assert!(text.contains(&format!("{} line 3: expected a resource", acls.path().display())), "{text}");
}

/// The binary with `--acl-file acls`, its log kept.
fn start_binary(acls: &Path) -> Node {
    let mut command = group_server();
    command.args(["--listen", "127.0.0.1:0", "--memory", "--topic", "t1:1", "--acl-file"]);
    Node::spawn(command.arg(acls), Stderr::Keep)
}

/// Sends SIGHUP and waits for the log line saying what came of it.
fn hangup(server: &Node, expect: &str) -> String {
    server.signal("HUP");
    server.log_line(&["ACLs", expect])
}

#[test]
fn the_binary_rereads_the_file_on_sighup() {
    let acls = AclFile::new("sighup", "allow User:ANONYMOUS READ Group:orders\n");
    let server = start_binary(acls.path());
    let mut c = Conn::open(server.kafka);
    assert_eq!(find(&mut c, &["billing"]), (GROUP_DENIED, vec![GROUP_DENIED]));
    acls.write("allow User:ANONYMOUS DESCRIBE Group:billing\nallow User:ANONYMOUS READ Group:orders\n");
    let line = hangup(&server, "reloaded");
    assert!(line.contains("2 rule(s)"), "{line}");
    assert_eq!(find(&mut c, &["billing"]), (0, vec![0]));
    acls.write("allow User:ANONYMOUS DESCRIBE\n");
    let line = hangup(&server, "not reloaded");
    assert!(line.contains("line 1"), "{line}");
    assert_eq!(find(&mut c, &["billing", "orders", "other"]), (0, vec![0, 0, GROUP_DENIED]));
}

/// CreateTopics needs CREATE, which the ACL file cannot grant: with one, only super users
/// create topics; everyone else is TOPIC_AUTHORIZATION_FAILED per topic.
#[test]
fn only_super_users_create_topics_under_acls() {
    let acls = AclFile::new("create-topics", RULES);
    let create = |server: &GroupServer, name: &str| {
        let mut c = Conn::open(server.local_addr());
        let topic = create_topics_request::CreatableTopic::default()
            .with_name(s(name).into())
            .with_num_partitions(1)
            .with_replication_factor(1);
        let req = CreateTopicsRequest::default().with_topics(vec![topic]).with_timeout_ms(1000);
        let resp: CreateTopicsResponse = c.call(ApiKey::CreateTopics, 7, &req);
        resp.topics[0].error_code
    };
    assert_eq!(create(&acl_server(&acls, &[]), "made-by-anyone"), TOPIC_DENIED);
    assert_eq!(create(&acl_server(&acls, &["User:ANONYMOUS"]), "made-by-a-super-user"), 0);
}
