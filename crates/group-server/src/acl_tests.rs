//! The ACL file's syntax, line by line, and the decisions of `AclAuthorizer`.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use group_coordinator::{AclOperation, Authorizer, Principal, RequestContext, Resource};
use proptest::prelude::*;
use rstest::rstest;

use super::{AclAuthorizer, AclError, Entry, Kind, Operations, Rule, Rules, Who, parse_rule};

/// An authorizer over `text`, with `User:admin` a super user.
fn acls(text: &str) -> AclAuthorizer {
    let rules = Rules::parse(text).unwrap_or_else(|(line, message)| panic!("line {line}: {message}"));
    AclAuthorizer {
        path: PathBuf::new(),
        super_users: vec![("User".to_owned(), "admin".to_owned())],
        rules: RwLock::new(Arc::new(rules)),
    }
}

/// `principal` (`User:alice`) from `host` (`/10.0.0.1`, or "" when unknown).
fn caller(principal: &str, host: &str) -> RequestContext {
    let (kind, name) = principal.split_once(':').expect("Type:name");
    let mut context = RequestContext::new(Principal::new(kind.to_owned(), name.to_owned()));
    context.client_host = host.to_owned();
    context
}

fn rule(allow: bool, who: Who, operations: u16, kind: Kind, name: &str) -> Rule {
    Rule {
        entry: Entry { allow, who, host: None, operations: Operations(operations) },
        kind,
        name: name.to_owned(),
        prefixed: false,
    }
}

fn alice() -> Who {
    Who::One("User".to_owned(), "alice".to_owned())
}

#[rstest]
#[case::allow(
    "allow User:alice READ Group:orders",
    rule(true, alice(), Operations::READ, Kind::Group, "orders")
)]
#[case::deny_upper_case(
    "DENY User:alice DESCRIBE TOPIC:secret",
    rule(false, alice(), Operations::DESCRIBE, Kind::Topic, "secret")
)]
#[case::wildcard_principal(
    "allow User:* ALL Group:g",
    rule(true, Who::Anyone, Operations::ALL, Kind::Group, "g")
)]
#[case::other_principal_type(
    "allow Service:billing READ Group:g",
    rule(true, Who::One("Service".into(), "billing".into()), Operations::READ, Kind::Group, "g")
)]
#[case::wildcard_resource(
    "allow User:alice read Topic:*",
    rule(true, alice(), Operations::READ, Kind::Topic, "*")
)]
#[case::several_operations(
    "allow User:alice READ,write,Delete,ALTER Topic:t",
    rule(
        true,
        alice(),
        Operations::READ | Operations::WRITE | Operations::DELETE | Operations::ALTER,
        Kind::Topic,
        "t"
    )
)]
#[case::cluster(
    "allow User:alice CLUSTER_ACTION Cluster:kafka-cluster",
    rule(true, alice(), Operations::CLUSTER_ACTION, Kind::Cluster, "kafka-cluster")
)]
#[case::bare_cluster(
    "allow User:alice DESCRIBE Cluster",
    rule(true, alice(), Operations::DESCRIBE, Kind::Cluster, "kafka-cluster")
)]
#[case::name_with_colon_and_star(
    "allow User:alice READ Group:a:b*",
    rule(true, alice(), Operations::READ, Kind::Group, "a:b*")
)]
#[case::blanks(
    "  allow\tUser:alice   READ  Group:g  ",
    rule(true, alice(), Operations::READ, Kind::Group, "g")
)]
#[case::prefixed(
    "allow User:alice READ Group:orders- PREFIXED",
    Rule { prefixed: true, ..rule(true, alice(), Operations::READ, Kind::Group, "orders-") }
)]
#[case::host(
    "allow User:alice READ Group:g from 10.0.0.1",
    Rule {
        entry: Entry { host: Some("10.0.0.1".parse().expect("ip")), ..rule(true, alice(), 1, Kind::Group, "g").entry },
        ..rule(true, alice(), Operations::READ, Kind::Group, "g")
    }
)]
#[case::ipv6_host_after_prefixed(
    "allow User:alice READ Group:g prefixed FROM ::1",
    Rule {
        entry: Entry { host: Some("::1".parse().expect("ip")), ..rule(true, alice(), 1, Kind::Group, "g").entry },
        prefixed: true,
        ..rule(true, alice(), Operations::READ, Kind::Group, "g")
    }
)]
#[case::any_host(
    "allow User:alice READ Group:g from *",
    rule(true, alice(), Operations::READ, Kind::Group, "g")
)]
fn parses(#[case] line: &str, #[case] expected: Rule) {
    assert_eq!(parse_rule(line), Ok(expected));
}

#[rstest]
#[case::permission("permit User:alice READ Group:g", "expected `allow` or `deny`, found `permit`")]
#[case::no_principal("allow", "expected a principal such as User:alice, found the end of the line")]
#[case::principal_without_type("allow alice READ Group:g", "found `alice`")]
#[case::principal_without_name("allow User: READ Group:g", "found `User:`")]
#[case::no_operation("allow User:alice", "expected operations such as READ or READ,DESCRIBE, found the end")]
#[case::operation("allow User:alice PRODUCE Group:g", "found `PRODUCE`")]
#[case::empty_operation("allow User:alice READ, Group:g", "(separated by commas), found ``")]
#[case::no_resource("allow User:alice READ", "expected a resource such as Group:orders, found the end")]
#[case::resource_type("allow User:alice READ Queue:q", "expected a resource Group:<id>, Topic:<name>")]
#[case::resource_name("allow User:alice READ Group:", "expected a name after `Group:`")]
#[case::cluster_name("allow User:alice DESCRIBE Cluster:prod", "found Cluster:prod")]
#[case::prefixed_star("allow User:alice READ Group:* prefixed", "not `*`")]
#[case::prefixed_cluster("allow User:alice READ Cluster prefixed", "not `Cluster`")]
#[case::host_missing("allow User:alice READ Group:g from", "after `from`, found the end of the line")]
#[case::host_name(
    "allow User:alice READ Group:g from broker-1",
    "IP address or `*` after `from`, found `broker-1`"
)]
#[case::trailing(
    "allow User:alice READ Group:g extra",
    "the end of the line after the resource, found `extra`"
)]
#[case::prefixed_after_host("allow User:alice READ Group:g from * prefixed", "found `prefixed`")]
fn refuses(#[case] line: &str, #[case] expected: &str) {
    let error = parse_rule(line).expect_err("a bad line").to_string();
    assert!(error.contains(expected), "{error:?} should contain {expected:?}");
}

#[test]
fn comments_and_blank_lines_are_skipped_and_errors_name_their_line() {
    let text = "# header\n\n   \nallow User:alice READ Group:g # why\nallow User:a#b READ Group:x#y\n";
    let rules = Rules::parse(text).expect("parses");
    assert_eq!(rules.count, 2);
    assert!(rules.literal[Kind::Group.index()].contains_key("x#y"), "a # inside a word is not a comment");
    let bad = "allow User:alice READ Group:g\n# fine\nallow User:alice READ\n";
    let (line, message) = Rules::parse(bad).expect_err("line 3 is bad");
    assert_eq!(line, 3);
    assert!(message.to_string().contains("expected a resource"), "{message}");
}

#[test]
fn a_file_error_names_the_file_and_the_line() {
    let dir = std::env::temp_dir().join(format!("acl-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("acls");
    std::fs::write(&file, "allow User:alice READ Group:g\nallow User:alice SEE Group:g\n").expect("write");
    let error = AclAuthorizer::load(&file, &[]).expect_err("a bad file");
    assert!(matches!(&error, AclError::Syntax { line: 2, .. }), "{error:?}");
    let text = error.to_string();
    assert!(text.starts_with(&format!("{} line 2: expected operations", file.display())), "{text}");
    let missing = dir.join("missing");
    let error = AclAuthorizer::load(&missing, &[]).expect_err("no file");
    assert!(matches!(&error, AclError::Read { path, .. } if path == &missing), "{error:?}");
    assert!(error.to_string().contains("cannot read the ACL file"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_reload_keeps_the_rules_and_a_good_one_replaces_them() {
    let dir = std::env::temp_dir().join(format!("acl-reload-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("acls");
    std::fs::write(&file, "allow User:alice READ Group:g\n").expect("write");
    let acls = AclAuthorizer::load(&file, &[]).expect("loads");
    let alice = caller("User:alice", "");
    assert!(acls.authorize(&alice, AclOperation::Read, Resource::Group("g")));
    std::fs::write(&file, "allow User:alice READ Group:g\ngarbage\n").expect("write");
    assert!(matches!(acls.reload(), Err(AclError::Syntax { line: 2, .. })));
    assert!(acls.authorize(&alice, AclOperation::Read, Resource::Group("g")), "old rules stay");
    std::fs::write(&file, "allow User:alice READ Group:h\nallow User:bob READ Group:h\n").expect("write");
    assert_eq!(acls.reload(), Ok(2));
    assert_eq!(acls.rule_count(), 2);
    assert!(!acls.authorize(&alice, AclOperation::Read, Resource::Group("g")));
    assert!(acls.authorize(&alice, AclOperation::Read, Resource::Group("h")));
    let _ = std::fs::remove_dir_all(&dir);
}

const RULES: &str = "
allow User:alice   READ      Group:orders
allow User:alice   READ      Group:batch-     prefixed
allow User:alice   WRITE     Topic:events
allow User:alice   ALTER     Topic:configs
allow User:alice   DELETE    Group:old
allow User:alice   ALL       Group:mine
allow User:*       READ      Group:shared
allow User:zed     DESCRIBE  Topic:*
deny  User:*       ALL       Topic:secret
allow User:alice   ALL       Topic:secret
allow User:bob     READ      Group:*
deny  User:bob     READ      Group:batch-x    prefixed
deny  User:bob     DESCRIBE  Group:quiet
allow User:carol   READ      Group:local      from 10.0.0.1
allow User:carol   READ      Group:v6         from ::1
allow User:dave    DESCRIBE  Cluster:kafka-cluster
allow User:erin    CLUSTER_ACTION Cluster
allow User:alice   WRITE     TransactionalId:tx-  prefixed
allow User:frank   ALTER_CONFIGS Group:tuned
allow User:frank   describe_configs Group:seen
allow User:frank   CREATE,IDEMPOTENT_WRITE Cluster
";

#[rstest]
// Literal names: that name only.
#[case::literal("User:alice", AclOperation::Read, Resource::Group("orders"), true)]
#[case::literal_is_not_a_prefix("User:alice", AclOperation::Read, Resource::Group("orders-2"), false)]
#[case::literal_other_operation("User:alice", AclOperation::Delete, Resource::Group("orders"), false)]
#[case::literal_other_kind("User:alice", AclOperation::Read, Resource::Topic("orders"), false)]
#[case::transactional_id_is_its_own_kind(
    "User:alice",
    AclOperation::Write,
    Resource::TransactionalId("orders"),
    false
)]
#[case::transactional_id("User:alice", AclOperation::Write, Resource::TransactionalId("tx-1"), true)]
#[case::transactional_id_not_a_topic("User:alice", AclOperation::Write, Resource::Topic("tx-1"), false)]
// Prefixed names: every name starting with the prefix, the prefix itself included.
#[case::prefixed("User:alice", AclOperation::Read, Resource::Group("batch-eu"), true)]
#[case::prefixed_itself("User:alice", AclOperation::Read, Resource::Group("batch-"), true)]
#[case::prefixed_other("User:alice", AclOperation::Read, Resource::Group("batch"), false)]
// DESCRIBE is implied by READ, WRITE, DELETE and ALTER; ALL allows everything.
#[case::describe_from_read("User:alice", AclOperation::Describe, Resource::Group("orders"), true)]
#[case::describe_from_prefixed_read("User:alice", AclOperation::Describe, Resource::Group("batch-1"), true)]
#[case::describe_from_delete("User:alice", AclOperation::Describe, Resource::Group("old"), true)]
#[case::describe_from_alter("User:carol", AclOperation::Describe, Resource::Topic("configs"), true)]
#[case::describe_from_write("User:alice", AclOperation::Describe, Resource::Topic("events"), true)]
#[case::read_not_from_write("User:alice", AclOperation::Read, Resource::Topic("events"), false)]
#[case::all("User:alice", AclOperation::Delete, Resource::Group("mine"), true)]
#[case::all_describe("User:alice", AclOperation::Describe, Resource::Group("mine"), true)]
// Wildcards: `User:*` is everyone, `*` every resource of its kind.
#[case::anyone("User:zed", AclOperation::Read, Resource::Group("shared"), true)]
#[case::anyone_other_type("Service:x", AclOperation::Read, Resource::Group("shared"), true)]
#[case::every_topic("User:zed", AclOperation::Describe, Resource::Topic("anything"), true)]
#[case::every_topic_not_read("User:zed", AclOperation::Read, Resource::Topic("anything"), false)]
#[case::every_group("User:bob", AclOperation::Read, Resource::Group("anything"), true)]
#[case::star_is_not_every_kind("User:bob", AclOperation::Read, Resource::Topic("anything"), false)]
// Deny wins over any allow, and denies only its own operations (or ALL).
#[case::deny_wins("User:alice", AclOperation::Read, Resource::Topic("secret"), false)]
#[case::deny_all_wins_over_wildcard("User:zed", AclOperation::Describe, Resource::Topic("secret"), false)]
#[case::deny_prefixed("User:bob", AclOperation::Read, Resource::Group("batch-x1"), false)]
#[case::deny_read_leaves_describe("User:bob", AclOperation::Describe, Resource::Group("batch-x1"), true)]
#[case::deny_describe_leaves_read("User:bob", AclOperation::Read, Resource::Group("quiet"), true)]
#[case::deny_describe("User:bob", AclOperation::Describe, Resource::Group("quiet"), false)]
// Nothing matching is denied, for a known principal and for an unknown one.
#[case::nothing_matches("User:alice", AclOperation::Read, Resource::Group("billing"), false)]
#[case::unknown_principal("User:mallory", AclOperation::Read, Resource::Group("orders"), false)]
#[case::principal_is_case_sensitive("User:Alice", AclOperation::Read, Resource::Group("orders"), false)]
// The cluster.
#[case::cluster("User:dave", AclOperation::Describe, Resource::Cluster, true)]
#[case::cluster_other_principal("User:alice", AclOperation::Describe, Resource::Cluster, false)]
#[case::cluster_action("User:erin", AclOperation::ClusterAction, Resource::Cluster, true)]
#[case::cluster_action_not_implied("User:dave", AclOperation::ClusterAction, Resource::Cluster, false)]
// Group configs: ALTER_CONFIGS implies DESCRIBE_CONFIGS (`IMPLIES_DESCRIBE_CONFIGS`),
// neither implies DESCRIBE, and ALL allows both.
#[case::alter_configs("User:frank", AclOperation::AlterConfigs, Resource::Group("tuned"), true)]
#[case::describe_configs_from_alter(
    "User:frank",
    AclOperation::DescribeConfigs,
    Resource::Group("tuned"),
    true
)]
#[case::describe_configs("User:frank", AclOperation::DescribeConfigs, Resource::Group("seen"), true)]
#[case::alter_not_from_describe("User:frank", AclOperation::AlterConfigs, Resource::Group("seen"), false)]
#[case::describe_not_from_configs("User:frank", AclOperation::Describe, Resource::Group("tuned"), false)]
#[case::configs_from_all("User:alice", AclOperation::AlterConfigs, Resource::Group("mine"), true)]
#[case::configs_not_from_read("User:alice", AclOperation::DescribeConfigs, Resource::Group("orders"), false)]
// CREATE and IDEMPOTENT_WRITE, which only Metadata's authorized operations ask.
#[case::create("User:frank", AclOperation::Create, Resource::Cluster, true)]
#[case::idempotent_write("User:frank", AclOperation::IdempotentWrite, Resource::Cluster, true)]
#[case::alter_of_the_file("User:carol", AclOperation::Alter, Resource::Topic("configs"), true)]
#[case::create_not_implied("User:carol", AclOperation::Create, Resource::Topic("configs"), false)]
// Super users are allowed everything, with or without rules.
#[case::super_user("User:admin", AclOperation::Delete, Resource::Group("anything"), true)]
#[case::super_user_despite_deny("User:admin", AclOperation::Read, Resource::Topic("secret"), true)]
#[case::super_user_type_matters("Service:admin", AclOperation::Read, Resource::Group("x"), false)]
fn decides(
    #[case] principal: &str,
    #[case] operation: AclOperation,
    #[case] resource: Resource<'_>,
    #[case] expected: bool,
) {
    // Carol has ALTER on `configs` through this extra line: DESCRIBE is implied.
    let acls = acls(&format!("{RULES}allow User:carol ALTER Topic:configs\n"));
    let got = acls.authorize(&caller(principal, "/192.168.1.9"), operation, resource);
    assert_eq!(got, expected, "{principal} {operation:?} {resource:?}");
}

#[rstest]
#[case::that_host("/10.0.0.1", "local", true)]
#[case::without_the_slash("10.0.0.1", "local", true)]
#[case::other_host("/10.0.0.2", "local", false)]
#[case::unknown_host("", "local", false)]
#[case::ipv6("/::1", "v6", true)]
#[case::ipv6_long_form("/0:0:0:0:0:0:0:1", "v6", true)]
#[case::ipv4_is_not_ipv6("/10.0.0.1", "v6", false)]
fn hosts(#[case] host: &str, #[case] group: &str, #[case] expected: bool) {
    let got = acls(RULES).authorize(&caller("User:carol", host), AclOperation::Read, Resource::Group(group));
    assert_eq!(got, expected, "{host} {group}");
}

#[test]
fn an_empty_file_denies_everything_but_super_users() {
    let acls = acls("# nothing yet\n");
    assert_eq!(acls.rule_count(), 0);
    assert!(!acls.authorize(&caller("User:alice", ""), AclOperation::Describe, Resource::Cluster));
    assert!(acls.authorize(&caller("User:admin", ""), AclOperation::Describe, Resource::Cluster));
}

fn operation() -> impl Strategy<Value = AclOperation> {
    prop_oneof![
        Just(AclOperation::Read),
        Just(AclOperation::Write),
        Just(AclOperation::Describe),
        Just(AclOperation::Delete),
        Just(AclOperation::ClusterAction),
        Just(AclOperation::DescribeConfigs),
        Just(AclOperation::AlterConfigs),
        Just(AclOperation::Create),
        Just(AclOperation::Alter),
        Just(AclOperation::IdempotentWrite),
    ]
}

/// A rule line for one of a few principals, operations and (literal, prefixed or
/// wildcard) group names, so that rules overlap often.
fn line() -> impl Strategy<Value = String> {
    let permission = prop_oneof![Just("allow"), Just("deny")];
    let principal = prop_oneof![Just("User:alice"), Just("User:bob"), Just("User:*")];
    let operations = proptest::sample::subsequence(
        vec![
            "READ",
            "WRITE",
            "DESCRIBE",
            "DELETE",
            "ALTER",
            "CLUSTER_ACTION",
            "DESCRIBE_CONFIGS",
            "ALTER_CONFIGS",
            "ALL",
        ],
        1..3,
    );
    let name = prop_oneof![Just("a"), Just("ab"), Just("b"), Just("*")];
    let prefixed = any::<bool>();
    (permission, principal, operations, name, prefixed).prop_map(|(p, who, ops, name, prefixed)| {
        let suffix = if prefixed && name != "*" { " prefixed" } else { "" };
        format!("{p} {who} {} Group:{name}{suffix}", ops.join(","))
    })
}

proptest! {
    /// Deny wins: adding `deny <principal> ALL Group:*` to any file denies that
    /// principal everything on every group, whatever the file allows.
    #[test]
    fn a_deny_all_wins_over_any_file(
        lines in proptest::collection::vec(line(), 0..8),
        operation in operation(),
        group in prop_oneof![Just("a"), Just("ab"), Just("abc"), Just("b")],
    ) {
        let mut text = lines.join("\n");
        text.push_str("\ndeny User:alice ALL Group:*\n");
        let acls = acls(&text);
        prop_assert!(!acls.authorize(&caller("User:alice", ""), operation, Resource::Group(group)));
        prop_assert!(acls.authorize(&caller("User:admin", ""), operation, Resource::Group(group)));
    }

    /// Allowing more never denies: an `allow` line added to a file only turns
    /// denials into allowances (and the DESCRIBE it implies), never the reverse;
    /// the rule count is the number of lines.
    #[test]
    fn an_allow_only_adds(
        lines in proptest::collection::vec(line(), 0..8),
        extra in line().prop_filter("an allow", |l| l.starts_with("allow")),
        operation in operation(),
        group in prop_oneof![Just("a"), Just("ab"), Just("abc"), Just("b")],
    ) {
        let before = acls(&lines.join("\n"));
        prop_assert_eq!(before.rule_count(), lines.len());
        let after = acls(&format!("{}\n{extra}", lines.join("\n")));
        for who in ["User:alice", "User:bob", "User:carol"] {
            let c = caller(who, "");
            if before.authorize(&c, operation, Resource::Group(group)) {
                prop_assert!(after.authorize(&c, operation, Resource::Group(group)), "{} lost {:?}", who, operation);
            }
        }
    }
}
