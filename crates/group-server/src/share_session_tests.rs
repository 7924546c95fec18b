//! The share session rules on the cache alone, as Kafka's `SharePartitionManagerTest`
//! (`testNewContext*`, `testAcknowledgeSessionUpdate*`, `testSubsequentShareSession`,
//! `testZeroSizeShareSession`, `testToForgetPartitions`) and `ShareSessionCacheTest`
//! (`testShareSessionCache`, `testRemoveConnection`) check them.

use std::net::SocketAddr;

use group_types::ErrorCode;
use rstest::rstest;
use uuid::Uuid;

use super::{FetchContext, SessionFetch, ShareSessionCache, ShareSessionError, TopicIdPartition, next_epoch};

/// Partition `n` of topic `foo` (ids 1) or, from 10 on, partition `n - 10` of `bar` (id 2).
fn tp(n: u8) -> TopicIdPartition {
    let (topic, partition) = if n < 10 { (1, n) } else { (2, n - 10) };
    TopicIdPartition { topic_id: Uuid::from_u128(topic), partition: i32::from(partition) }
}

fn named(parts: &[u8]) -> Vec<(TopicIdPartition, Option<String>)> {
    parts.iter().map(|&n| (tp(n), Some(if n < 10 { "foo" } else { "bar" }.to_owned()))).collect()
}

fn conn(n: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 40_000 + n))
}

/// One request against the cache, by member `m1`..`m9` of group `grp`.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// A ShareFetch: member, epoch, partitions to fetch, partitions to forget, whether it
    /// acknowledges, its connection.
    Fetch(&'static str, i32, &'static [u8], &'static [u8], bool, u16),
    /// A ShareAcknowledge: member, epoch.
    Ack(&'static str, i32),
    /// The final request of the member was answered: its session closes.
    Release(&'static str),
    /// A connection closed.
    Close(u16),
}

/// What a step answers: the kind of context, or the error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Full,
    Subsequent,
    Final,
    Done,
    Gone(bool),
    Refused(ErrorCode),
}
use Outcome::*;
use Step::*;

fn run(cache: &mut ShareSessionCache, step: Step) -> Outcome {
    let forget = |parts: &[u8]| parts.iter().map(|&n| tp(n)).collect::<Vec<_>>();
    match step {
        Fetch(member, epoch, fetch, forgotten, acks, c) => {
            let forget = forget(forgotten);
            let request = SessionFetch {
                epoch,
                fetch: named(fetch),
                forget: &forget,
                acknowledges: acks,
                connection: conn(c),
            };
            match cache.new_context("grp", member, request) {
                Ok(FetchContext::Full(_)) => Full,
                Ok(FetchContext::Subsequent(_)) => Subsequent,
                Ok(FetchContext::Final) => Final,
                Err(e) => Refused(e.code()),
            }
        }
        Ack(member, epoch) => match cache.acknowledge("grp", member, epoch) {
            Ok(()) => Done,
            Err(e) => Refused(e.code()),
        },
        Release(member) => Gone(cache.release("grp", member)),
        Close(c) => {
            cache.connection_closed(conn(c));
            Done
        }
    }
}

const NOT_FOUND: Outcome = Refused(ErrorCode::ShareSessionNotFound);
const BAD_EPOCH: Outcome = Refused(ErrorCode::InvalidShareSessionEpoch);
const LIMIT: Outcome = Refused(ErrorCode::ShareSessionLimitReached);
const INVALID: Outcome = Refused(ErrorCode::InvalidRequest);

/// Each step's outcome, then the sessions left and `m1`'s partitions and next epoch.
#[rstest]
// testNewContext: open, continue at 1, a wrong epoch, then final and release.
#[case::open_continue_final(
    10,
    &[
        (Fetch("m1", 0, &[0, 1], &[], false, 1), Full),
        (Fetch("m1", 5, &[0, 1], &[], true, 2), BAD_EPOCH),
        (Fetch("m2", 1, &[0, 1], &[], true, 3), NOT_FOUND),
        (Fetch("m1", 1, &[], &[], true, 1), Subsequent),
        (Fetch("m1", 5, &[0, 1], &[], true, 1), BAD_EPOCH),
        (Fetch("m1", 2, &[], &[], true, 1), Subsequent),
        (Fetch("m1", -1, &[], &[], true, 1), Final),
        (Release("m1"), Gone(true)),
    ],
    0, &[], None,
)]
// A failed step changes nothing: the next epoch is still the expected one.
#[case::a_wrong_epoch_does_not_advance(
    10,
    &[
        (Fetch("m1", 0, &[0], &[], false, 1), Full),
        (Fetch("m1", 2, &[], &[], false, 1), BAD_EPOCH),
        (Fetch("m1", 1, &[], &[], false, 1), Subsequent),
    ],
    1, &[0], Some(2),
)]
// testNewContextReturnsFinalContext*: final with or without partitions, the session
// stays until released.
#[case::final_keeps_the_session_until_released(
    10,
    &[
        (Fetch("m1", 0, &[0, 1], &[], false, 1), Full),
        (Fetch("m1", -1, &[10], &[], true, 1), Final),
    ],
    1, &[0, 1], Some(1),
)]
// testNewContextThrowsErrorWhenShareSessionNotFoundOnFinalEpoch
#[case::final_without_a_session(10, &[(Fetch("m1", -1, &[], &[], false, 1), NOT_FOUND)], 0, &[], None)]
// testNewContextThrowsErrorWhenAcknowledgeDataPresentOnInitialEpoch
#[case::acknowledging_on_open(10, &[(Fetch("m1", 0, &[0], &[], true, 1), INVALID)], 0, &[], None)]
// testNewContextThrowsErrorWhenShareSessionCacheIsFullOnInitialEpoch
#[case::limit(
    1,
    &[
        (Fetch("m1", 0, &[0, 1], &[], false, 1), Full),
        (Fetch("m2", 0, &[0, 1], &[], false, 2), LIMIT),
    ],
    1, &[0, 1], Some(1),
)]
// testNewContextExistingSessionNewRequestWithInitialEpoch: a second open replaces the
// first, even with the cache full.
#[case::reopen_replaces(
    1,
    &[
        (Fetch("m1", 0, &[0, 1], &[], false, 1), Full),
        (Fetch("m1", 1, &[], &[], false, 1), Subsequent),
        (Fetch("m1", 0, &[10], &[], false, 1), Full),
    ],
    1, &[10], Some(1),
)]
// testSubsequentShareSession and testToForgetPartitions: new partitions join, forgotten
// ones leave.
#[case::forgotten_topics(
    10,
    &[
        (Fetch("m1", 0, &[0, 10], &[], false, 1), Full),
        (Fetch("m1", 1, &[11], &[0], false, 1), Subsequent),
        (Fetch("m1", 2, &[], &[10], false, 1), Subsequent),
    ],
    1, &[11], Some(3),
)]
// testZeroSizeShareSession: forgetting everything keeps an empty session.
#[case::zero_size_session(
    10,
    &[
        (Fetch("m1", 0, &[0, 1], &[], false, 1), Full),
        (Fetch("m1", 1, &[], &[0, 1], false, 1), Subsequent),
    ],
    1, &[], Some(2),
)]
// testAcknowledgeSessionUpdate*: 0 is never valid, no session, a wrong epoch, the next
// epoch advances, final leaves the epoch as it is.
#[case::acknowledge_rules(
    10,
    &[
        (Ack("m1", 1), NOT_FOUND),
        (Fetch("m1", 0, &[0], &[], false, 1), Full),
        (Ack("m1", 0), BAD_EPOCH),
        (Ack("m1", 2), BAD_EPOCH),
        (Ack("m1", 1), Done),
        (Fetch("m1", 2, &[], &[], true, 1), Subsequent),
        (Ack("m1", -1), Done),
    ],
    1, &[0], Some(3),
)]
#[case::acknowledge_on_open_epoch_without_a_session(10, &[(Ack("m1", 0), BAD_EPOCH)], 0, &[], None)]
// testRemoveConnection: a closed connection's session goes, and frees a place.
#[case::connection_closes(
    2,
    &[
        (Fetch("m1", 0, &[0], &[], false, 1), Full),
        (Fetch("m2", 0, &[0], &[], false, 2), Full),
        (Fetch("m3", 0, &[0], &[], false, 3), LIMIT),
        (Close(2), Done),
        (Fetch("m3", 0, &[0], &[], false, 3), Full),
    ],
    2, &[0], Some(1),
)]
// `SessionKeyAndState`: a session opened again on another connection is not removed when
// the first connection closes.
#[case::a_reopened_session_outlives_its_old_connection(
    10,
    &[
        (Fetch("m1", 0, &[0], &[], false, 1), Full),
        (Fetch("m1", 0, &[1], &[], false, 2), Full),
        (Close(1), Done),
    ],
    1, &[1], Some(1),
)]
#[case::a_released_session_is_not_found_again(
    10,
    &[
        (Fetch("m1", 0, &[0], &[], false, 1), Full),
        (Release("m1"), Gone(true)),
        (Release("m1"), Gone(false)),
        (Fetch("m1", 1, &[], &[], false, 1), NOT_FOUND),
        (Close(1), Done),
    ],
    0, &[], None,
)]
fn share_session_rules(
    #[case] max_sessions: usize,
    #[case] steps: &[(Step, Outcome)],
    #[case] sessions: usize,
    #[case] m1_partitions: &[u8],
    #[case] m1_epoch: Option<i32>,
) {
    let mut cache = ShareSessionCache::new(max_sessions);
    for (i, &(step, expected)) in steps.iter().enumerate() {
        assert_eq!(run(&mut cache, step), expected, "step {i}: {step:?}");
    }
    assert_eq!(cache.len(), sessions, "sessions left");
    let want: Vec<TopicIdPartition> = m1_partitions.iter().map(|&n| tp(n)).collect();
    assert_eq!(cache.partitions("grp", "m1"), want);
    assert_eq!(cache.epoch("grp", "m1"), m1_epoch);
}

/// `ShareRequestMetadata.nextEpoch`.
#[rstest]
#[case(0, 1)]
#[case(1, 2)]
#[case(i32::MAX, 1)]
#[case(-1, -1)]
#[case(-7, -1)]
fn next_epochs(#[case] prev: i32, #[case] next: i32) {
    assert_eq!(next_epoch(prev), next);
}

/// `CachedSharePartition.maybeUpdateResponseData` through `testSubsequentShareSession`
/// and `testNewContext`: a subsequent response carries new partitions once, errors
/// always, and a partition once more after its error cleared.
#[test]
fn subsequent_responses_carry_what_changed() {
    let mut cache = ShareSessionCache::new(10);
    let ok = ErrorCode::None;
    let err = ErrorCode::UnknownTopicOrPartition;
    let open = SessionFetch {
        epoch: 0,
        fetch: named(&[0, 1]),
        forget: &[],
        acknowledges: false,
        connection: conn(1),
    };
    cache.new_context("grp", "m1", open).expect("opens");
    let next = SessionFetch {
        epoch: 1,
        fetch: named(&[10]),
        forget: &[tp(0)],
        acknowledges: false,
        connection: conn(1),
    };
    cache.new_context("grp", "m1", next).expect("continues");
    // foo-1 was answered when the session opened; bar-0 is new.
    assert_eq!(cache.select("grp", "m1", &[(tp(1), ok), (tp(10), ok)]), [false, true]);
    assert_eq!(cache.select("grp", "m1", &[(tp(1), ok), (tp(10), ok)]), [false, false]);
    assert_eq!(cache.select("grp", "m1", &[(tp(1), err), (tp(10), ok)]), [true, false]);
    assert_eq!(cache.select("grp", "m1", &[(tp(1), ok), (tp(10), ok)]), [true, false]);
    assert_eq!(cache.select("grp", "m1", &[(tp(1), ok), (tp(10), ok)]), [false, false]);
}

#[test]
fn errors_are_kafkas_codes() {
    assert_eq!(ShareSessionError::NotFound.code().code(), 122);
    assert_eq!(ShareSessionError::InvalidEpoch { expected: 1, got: 2 }.code().code(), 123);
    assert_eq!(ShareSessionError::LimitReached.code().code(), 133);
    assert_eq!(ShareSessionError::AcknowledgeOnInitialEpoch.code().code(), 42);
}

/// The group's share partitions stay while any of its sessions does, and go with the
/// last one (released, or its connection closed).
#[test]
fn share_partitions_go_with_the_groups_last_session() {
    let mut cache = ShareSessionCache::new(10);
    let open = |member: &'static str, c| {
        move |cache: &mut ShareSessionCache| {
            let request = SessionFetch {
                epoch: 0,
                fetch: named(&[0]),
                forget: &[],
                acknowledges: false,
                connection: conn(c),
            };
            cache.new_context("grp", member, request).expect("opens");
        }
    };
    open("m1", 1)(&mut cache);
    open("m2", 2)(&mut cache);
    cache.fetched("grp", [tp(0)]);
    assert!(cache.has_share_partition("grp", &tp(0)));
    assert!(!cache.has_share_partition("grp", &tp(1)) && !cache.has_share_partition("other", &tp(0)));
    cache.release("grp", "m1");
    assert!(cache.has_share_partition("grp", &tp(0)), "m2 still has a session");
    cache.connection_closed(conn(2));
    assert!(!cache.has_share_partition("grp", &tp(0)));

    open("m1", 1)(&mut cache);
    cache.fetched("grp", [tp(0)]);
    cache.release("grp", "m1");
    assert!(!cache.has_share_partition("grp", &tp(0)));
}
