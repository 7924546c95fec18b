//! The frame path as a fuzz target: [`FrameTarget`] runs one request frame through
//! the node (header, schema bounds check, `kafka-protocol` decode, dispatch) against an
//! in-memory coordinator, and drops whatever it answers.
//!
//! Not an API: it exists for `fuzz/fuzz_targets/frame.rs` and for the stable test that
//! replays the kept crash inputs and seeds (`fuzzing::tests`, below), so that both run
//! exactly the same code. Any panic it lets through is a bug of the frame path.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Waker};
use std::time::Duration;

use bytes::Bytes;
use group_coordinator::Principal;

use crate::node::{Node, Reply};
use crate::session::Session;
use crate::topics::SharedTopics;
use crate::{CoordinatorService, ServerConfig, StorageMode, TopicSpec};

/// Frames served by one coordinator before it is replaced by a fresh one: fuzzed group
/// ids and offsets would otherwise accumulate in memory until libFuzzer's RSS limit.
const FRAMES_PER_COORDINATOR: u64 = 20_000;

/// How long a frame waits for the coordinator's writes (an offset commit, a group
/// record) before its answer is dropped unread; the memory store completes at once, so
/// this only bounds a stall.
const WRITE_WAIT: Duration = Duration::from_secs(1);

/// A node over a memory-backed coordinator, serving one fuzzed frame at a time.
#[derive(Debug)]
pub struct FrameTarget {
    current: Mutex<Option<Built>>,
    frames: AtomicU64,
}

/// The node and the coordinator behind it (kept to wait for its writes).
struct Built {
    node: Node,
    service: Arc<CoordinatorService>,
}

impl std::fmt::Debug for Built {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Built").finish_non_exhaustive()
    }
}

impl Default for FrameTarget {
    fn default() -> FrameTarget {
        FrameTarget::new()
    }
}

impl FrameTarget {
    /// A node named `127.0.0.1:9092` serving topics `t1` (3 partitions) and `t2` (1), as
    /// the seed frames name them; the coordinator starts with the first frame.
    pub fn new() -> FrameTarget {
        FrameTarget { current: Mutex::new(None), frames: AtomicU64::new(0) }
    }

    /// Serves one frame (the length prefix stripped, as the connection hands it to the
    /// node) and drops the reply. A reply still waiting for the coordinator's writes is
    /// awaited briefly, so that its encoding runs too; one parked at a rebalance barrier
    /// is dropped, as when a client disconnects.
    pub fn handle(&self, bytes: &[u8]) {
        let n = self.frames.fetch_add(1, Ordering::Relaxed);
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if n.is_multiple_of(FRAMES_PER_COORDINATOR) {
            // Dropping the old coordinator stops and joins its threads first.
            *current = None;
        }
        let built = current.get_or_insert_with(build);
        let mut session = Session::new(([127, 0, 0, 1], 50_000).into(), Principal::ANONYMOUS);
        match built.node.handle(Bytes::copy_from_slice(bytes), &mut session) {
            Ok(Reply::Later(mut answer)) => {
                let mut cx = Context::from_waker(Waker::noop());
                if answer.as_mut().poll(&mut cx).is_pending() {
                    built.service.coordinator().wait_for_writes(WRITE_WAIT);
                    let _ = answer.as_mut().poll(&mut cx);
                }
            }
            Ok(Reply::Now(_) | Reply::NotBefore(..) | Reply::Nothing) => {}
            // The message is what the connection logs: formatting it is part of the path.
            Err(e) => drop(e.to_string()),
        }
    }
}

fn build() -> Built {
    let mut config = ServerConfig { storage: StorageMode::Memory, ..ServerConfig::default() };
    config.topics =
        vec![TopicSpec { name: "t1".into(), partitions: 3 }, TopicSpec { name: "t2".into(), partitions: 1 }];
    // Joins complete as soon as every known member is in, not after a 3 s delay.
    config.coordinator.initial_rebalance_delay_ms = 0;
    // A memory store and a valid configuration cannot fail to open: a failure here is
    // a broken build, not an input the fuzzer found.
    let service = Arc::new(CoordinatorService::open(&config).expect("a memory-backed coordinator opens"));
    let node = Node {
        topics: Arc::new(SharedTopics::new(&config.topics)),
        // Checked, never created: a long run would pile up topics.
        topic_creation_refused: Some("not while fuzzing"),
        creating: std::sync::Mutex::new(()),
        topic_creators: None,
        service: service.clone(),
        log: None,
        authorizer: Arc::new(group_coordinator::AllowAll),
        metrics: Arc::default(),
        budgets: Arc::new(crate::connection::Budgets::new(&crate::ConnectionLimits::default())),
        brokers: crate::brokers::single_node(0, "127.0.0.1", 9092),
        share_sessions: std::sync::Mutex::new(crate::share_session::ShareSessionCache::new(
            crate::share_session::DEFAULT_MAX_SHARE_SESSIONS,
        )),
    };
    Built { node, service }
}

// The kept inputs as files, shared with the other crates' replay tests.
#[cfg(test)]
#[path = "../../../fuzz/replay.rs"]
mod replay;

/// The kept crash inputs and the seeds, replayed on stable through [`FrameTarget`]; the
/// seeds (the test samples at each API's oldest and newest version) are written by
/// [`tests::seeds_are_current`].
#[cfg(test)]
mod tests {
    use bytes::BytesMut;
    use kafka_protocol::messages::{ApiKey, RequestHeader};
    use kafka_protocol::protocol::{Encodable, StrBytes};

    use super::replay::Target;

    use super::FrameTarget;
    use crate::SUPPORTED_APIS;
    use crate::test_samples::sample;

    const TARGET: &str = "frame";

    fn target() -> Target {
        Target::new(env!("CARGO_MANIFEST_DIR"), TARGET)
    }

    /// A whole frame (length prefix stripped): header then body.
    fn frame(api: ApiKey, version: i16, body: &[u8]) -> Vec<u8> {
        let mut out = BytesMut::new();
        RequestHeader::default()
            .with_request_api_key(api as i16)
            .with_request_api_version(version)
            .with_correlation_id(1)
            .with_client_id(Some(StrBytes::from_static_str("fuzz")))
            .encode(&mut out, api.request_header_version(version))
            .expect("header encodes");
        out.extend_from_slice(body);
        out.to_vec()
    }

    fn seeds() -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for &(api, min, max) in SUPPORTED_APIS {
            for v in [min, max] {
                out.push((format!("{api:?}-v{v}"), frame(api, v, &sample(api, v))));
            }
        }
        // An API with a single version (OffsetDelete) has one seed, not two.
        out.dedup_by(|a, b| a.0 == b.0);
        out
    }

    #[test]
    fn kept_crash_inputs_and_seeds_pass() {
        let frames = FrameTarget::new();
        target().replay(seeds().len(), false, |bytes| frames.handle(bytes));
    }

    /// Every sample of every version, cut at every length: the stable stand-in for the
    /// fuzzer's commonest mutation.
    #[test]
    fn every_sample_and_its_prefixes_are_handled() {
        let target = FrameTarget::new();
        for &(api, min, max) in SUPPORTED_APIS {
            for v in min..=max {
                let bytes = frame(api, v, &sample(api, v));
                for n in 0..=bytes.len() {
                    target.handle(&bytes[..n]);
                }
            }
        }
    }

    /// The committed seeds are what [`seeds`] makes; `GROUP_FUZZ_WRITE_SEEDS=1` rewrites them.
    #[test]
    fn seeds_are_current() {
        target().check_seeds(seeds());
    }
}

/// The `sasl` target's kept crash inputs and seeds, replayed on stable through
/// [`crate::sasl::fuzz_sasl`]: a mechanism byte (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
/// by its value mod 3), then client tokens, each a big-endian `u16` length and its bytes.
#[cfg(test)]
mod sasl_tests {
    use super::replay::Target;
    use crate::sasl::fuzz_sasl;

    const TARGET: &str = "sasl";

    fn target() -> Target {
        Target::new(env!("CARGO_MANIFEST_DIR"), TARGET)
    }

    fn input(mechanism: u8, tokens: &[&[u8]]) -> Vec<u8> {
        let mut out = vec![mechanism];
        for token in tokens {
            let len = u16::try_from(token.len()).expect("a short token");
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(token);
        }
        out
    }

    /// A good and a bad PLAIN login, SCRAM exchanges for both hashes that fail at each
    /// step, and a token cut short.
    fn seeds() -> Vec<(&'static str, Vec<u8>)> {
        let first = b"n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL";
        let final_msg =
            b"c=biws,r=fyko+d2lbbFgONRv9qkxdawLserver,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
        vec![
            ("plain-good", input(0, &[b"\0alice\0secret"])),
            ("plain-wrong", input(0, &[b"alice\0alice\0wrong"])),
            ("scram-sha-256-exchange", input(1, &[first, final_msg])),
            ("scram-sha-512-exchange", input(2, &[first, final_msg])),
            ("scram-unknown-user", input(2, &[b"n,,n=mallory,r=abc"])),
            ("scram-channel-binding", input(1, &[b"p=tls-unique,,n=alice,r=abc"])),
            ("truncated", vec![2, 0, 40, b'n', b',']),
        ]
    }

    #[test]
    fn kept_crash_inputs_and_seeds_pass() {
        target().replay(seeds().len(), true, fuzz_sasl);
    }

    /// The committed seeds are what [`seeds`] makes; `GROUP_FUZZ_WRITE_SEEDS=1` rewrites them.
    #[test]
    fn seeds_are_current() {
        let seeds = seeds().into_iter().map(|(name, bytes)| (name.to_owned(), bytes)).collect();
        target().check_seeds(seeds);
    }
}
