//! Regex subscriptions through the core: RE2/J's syntax on the wire (a pattern
//! Kafka refuses is answered INVALID_REGULAR_EXPRESSION with Kafka's message, one
//! it accepts resolves to the topics it matches whole; the full syntax table is
//! `core/consumer/re2j_tests.rs`), and the refresh a heartbeat asks for at its
//! step 8, which happens whatever becomes of the heartbeat afterwards: Kafka's `maybeUpdateRegularExpressions` schedules
//! the executor task then, and neither a later refusal (an assignor failure) nor
//! a failed write of the heartbeat cancels it; the task's result is applied by a
//! write of its own (`handleRegularExpressionsResult`). A regex refused at step 8
//! (`throwIfRegularExpressionIsInvalid`) schedules nothing.

use std::sync::Arc;

use group_coordinator::{CoordinatorConfig, MetadataImage, Request, Response, TopicImage};
use group_types::{ConsumerGroupHeartbeatRequest, ErrorCode, TopicId};
use rstest::rstest;

use super::support::Sim;

const FOO: TopicId = TopicId::from_u128(0xf00);
const FOO2: TopicId = TopicId::from_u128(0xf02);

fn join(member: &str) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: member.into(),
        member_epoch: 0,
        rebalance_timeout_ms: 5_000,
        topic_partitions: Some(Vec::new()),
        client_id: "consumer".into(),
        client_host: "/127.0.0.1".into(),
        ..ConsumerGroupHeartbeatRequest::default()
    }
}

fn hb(sim: &mut Sim, r: ConsumerGroupHeartbeatRequest) -> (ErrorCode, Option<String>) {
    let rid = sim.send(Request::from(r));
    match sim.answer(rid) {
        Some(Response::ConsumerGroupHeartbeat(r)) => (r.error_code, r.error_message.clone()),
        other => panic!("heartbeat answered {other:?}"),
    }
}

/// How m2's join goes.
#[derive(Debug, Clone, Copy)]
enum M2 {
    /// Written: the refresh follows it.
    Joins,
    /// Its server assignor fails after step 8 (UNKNOWN_SERVER_ERROR).
    AssignorFails,
    /// Its write fails (NOT_LEADER_OR_FOLLOWER, answered NOT_COORDINATOR).
    WriteFails,
    /// Its new regex does not compile: refused at step 8.
    InvalidRegex,
}

/// m1 subscribes to `foo.*` at 0 (resolved to foo); topic foo2 is created at
/// 20 s; m2 joins then, and its step 8 finds the group due for a refresh (a new
/// topic, the last refresh over 10 s ago).
#[rstest]
#[case::written(M2::Joins, ErrorCode::None, &["foo", "foo2"], 2)]
#[case::refused_after_step_8(M2::AssignorFails, ErrorCode::UnknownServerError, &["foo", "foo2"], 1)]
#[case::write_failed(M2::WriteFails, ErrorCode::NotCoordinator, &["foo", "foo2"], 1)]
#[case::refused_at_step_8(M2::InvalidRegex, ErrorCode::InvalidRegularExpression, &["foo"], 0)]
fn a_heartbeat_that_fails_after_step_8_still_refreshes_the_regexes(
    #[case] m2: M2,
    #[case] answered: ErrorCode,
    #[case] resolved: &[&str],
    #[case] bumps: i32,
) {
    let mut config = CoordinatorConfig::default();
    config.consumer.assignors = vec!["uniform".into(), "failing".into()];
    let mut sim = Sim::new(config);
    sim.core.register_server_assignor(Arc::new(super::support::FailingAssignor));
    sim.core.update_metadata_image(Arc::new(MetadataImage::new(1, [TopicImage::new(FOO, "foo", 3)])));
    let m1 = ConsumerGroupHeartbeatRequest { subscribed_topic_regex: Some("foo.*".into()), ..join("m1") };
    assert_eq!(hb(&mut sim, m1).0, ErrorCode::None);
    let g = sim.core.consumer_group("g").unwrap();
    assert_eq!(g.regexes, vec![("foo.*".to_owned(), vec!["foo".to_owned()])]);
    sim.advance_to(20_000);
    let topics = [TopicImage::new(FOO, "foo", 3), TopicImage::new(FOO2, "foo2", 3)];
    sim.core.update_metadata_image(Arc::new(MetadataImage::new(2, topics)));
    let epoch = sim.core.consumer_group("g").unwrap().group_epoch;
    let mut request =
        ConsumerGroupHeartbeatRequest { subscribed_topic_names: Some(vec!["foo".into()]), ..join("m2") };
    match m2 {
        M2::Joins => {}
        M2::AssignorFails => request.server_assignor = Some("failing".into()),
        M2::WriteFails => sim.fail_next_write = Some(ErrorCode::NotLeaderOrFollower),
        M2::InvalidRegex => request.subscribed_topic_regex = Some("[".into()),
    }
    let (code, message) = hb(&mut sim, request);
    assert_eq!(code, answered, "{message:?}");
    let g = sim.core.consumer_group("g").unwrap();
    let expected: Vec<String> = resolved.iter().map(|t| (*t).to_owned()).collect();
    assert_eq!(g.regexes, vec![("foo.*".to_owned(), expected)]);
    assert_eq!(g.group_epoch, epoch + bumps);
    let joined = g.members.iter().any(|m| m.member_id == "m2");
    assert_eq!(joined, matches!(m2, M2::Joins));
}

/// A member's first heartbeat with `regex`, against topics `topics`: refused with
/// Kafka's message (`throwIfRegularExpressionIsInvalid`, RE2/J's description), or
/// resolved to the topics it matches whole.
#[rstest]
#[case("[", Err("missing closing ]"))]
#[case("a**", Err("invalid nested repetition operator"))]
#[case("(?=foo)", Err("invalid or unsupported Perl syntax"))]
#[case("\\p{Alphabetic}", Err("invalid character class range"))]
#[case("foo\\1", Err("invalid escape sequence"))]
#[case("(?<n>a)(?<n>b)", Err("duplicate capture group name"))]
#[case("\\Qfoo.\\E.*", Ok(&["foo.1"][..]))]
#[case("[[:alpha:]]+", Ok(&["foo"][..]))]
#[case("(?i)FOO", Ok(&["foo"][..]))]
#[case("\\d+|\\<\\w+\\>", Ok(&["123", "<a_1>"][..]))]
#[case("fo{2}(?P<n>1)?", Ok(&["foo", "foo1"][..]))]
fn regexes_are_read_as_re2j_reads_them(#[case] regex: &str, #[case] expected: Result<&[&str], &str>) {
    let mut sim = Sim::new(CoordinatorConfig::default());
    let names = ["foo", "foo1", "foo.1", "123", "<a_1>"];
    let topics =
        names.iter().enumerate().map(|(i, n)| TopicImage::new(TopicId::from_u128(i as u128 + 1), *n, 1));
    sim.core.update_metadata_image(Arc::new(MetadataImage::new(1, topics)));
    let request = ConsumerGroupHeartbeatRequest { subscribed_topic_regex: Some(regex.into()), ..join("m1") };
    let (code, message) = hb(&mut sim, request);
    match expected {
        Err(description) => {
            assert_eq!(code, ErrorCode::InvalidRegularExpression);
            let kafka =
                format!("SubscribedTopicRegex `{regex}` is not a valid regular expression: {description}.");
            assert_eq!(message.as_deref(), Some(kafka.as_str()));
        }
        Ok(matched) => {
            assert_eq!(code, ErrorCode::None, "{message:?}");
            let g = sim.core.consumer_group("g").unwrap();
            let matched: Vec<String> = matched.iter().map(|t| (*t).to_owned()).collect();
            assert_eq!(g.regexes, vec![(regex.to_owned(), matched)]);
        }
    }
}
