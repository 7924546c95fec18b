//! The consumer-protocol codec as a fuzz target: [`consumer_protocol`] decodes any bytes
//! as a subscription and as an assignment and checks the round trip the codec promises.
//!
//! Not an API, and compiled only with the `fuzzing` feature or for tests: it exists for `fuzz/fuzz_targets/consumer_protocol.rs` and for the stable
//! test that replays the kept crash inputs and seeds (`fuzzing::tests`, below), so that both
//! run exactly the same checks. A panic here is either a decoder bug (it must return a
//! [`CodecError`](crate::CodecError)) or a broken round trip.

use crate::{MemberAssignment, Subscription};

/// Decodes `bytes` both ways and asserts, for whatever decodes:
///
/// - it re-encodes (a decoded value always fits its wire lengths);
/// - decoding the encoding gives the same value (decode ∘ encode ∘ decode = decode);
/// - the encoding after the version is a prefix of the input after its version (every
///   version reads exactly the fields it writes, and trailing bytes are ignored), and
///   is the input's own prefix when the input's version is one the codec writes;
/// - `Subscription::decode_topics` agrees with the full decode.
///
/// Panics when a property does not hold: that is the finding.
pub fn consumer_protocol(bytes: &[u8]) {
    let topics = Subscription::decode_topics(bytes);
    match Subscription::decode(bytes) {
        Ok(sub) => {
            assert_eq!(topics.as_ref(), Ok(&sub.topics), "decode_topics disagrees with decode");
            let encoded = sub.encode().expect("a decoded subscription encodes");
            assert_prefix(bytes, &encoded);
            assert_eq!(Subscription::decode(&encoded), Ok(sub), "subscription round trip");
        }
        // The full decode reads the topics first, so it may fail on a later field where
        // they decode; that it never succeeds where they do not, the arm above checks.
        Err(_) => drop(topics),
    }
    if let Ok(assignment) = MemberAssignment::decode(bytes) {
        let encoded = assignment.encode().expect("a decoded assignment encodes");
        assert_prefix(bytes, &encoded);
        assert_eq!(MemberAssignment::decode(&encoded), Ok(assignment), "assignment round trip");
    }
}

/// `encoded` (written at the decoded version, at most 3) against the `input` it came from.
fn assert_prefix(input: &[u8], encoded: &[u8]) {
    assert!(
        input.len() >= 2 && encoded.len() >= 2 && input[2..].starts_with(&encoded[2..]),
        "the encoding is not the input's prefix:\n input   {input:02x?}\n encoded {encoded:02x?}"
    );
    let version = i16::from_be_bytes([input[0], input[1]]);
    if version <= crate::CONSUMER_PROTOCOL_LATEST_VERSION {
        assert!(input.starts_with(encoded), "the encoding changed the version");
    }
}

// The kept inputs as files, shared with the other crates' replay tests.
#[cfg(test)]
#[path = "../../../fuzz/replay.rs"]
mod replay;

/// The kept crash inputs and the seeds, replayed on stable through the fuzz target's
/// own function; the seeds are written by [`tests::seeds_are_current`].
#[cfg(test)]
mod tests {
    use super::consumer_protocol;
    use super::replay::Target;
    use crate::{MemberAssignment, Subscription, TopicPartitions};

    const TARGET: &str = "consumer_protocol";

    fn target() -> Target {
        Target::new(env!("CARGO_MANIFEST_DIR"), TARGET)
    }

    /// Valid messages of every version, with every optional field set, plus a
    /// version-4 subscription with a field this codec does not know.
    fn seeds() -> Vec<(String, Vec<u8>)> {
        let owned = vec![TopicPartitions::new("t1", [0, 2]), TopicPartitions::new("t2", [1])];
        let mut out = Vec::new();
        for version in 0..=3 {
            let sub = Subscription {
                version,
                topics: vec!["t1".into(), "t2".into()],
                user_data: Some(vec![0, 1, 2]),
                owned_partitions: owned.clone(),
                generation_id: 7,
                rack_id: Some("rack-a".into()),
            };
            out.push((format!("subscription-v{version}"), sub.encode().expect("encodes")));
            let assignment =
                MemberAssignment { version, partitions: owned.clone(), user_data: Some(vec![9]) };
            out.push((format!("assignment-v{version}"), assignment.encode().expect("encodes")));
        }
        let mut v4 = out[6].1.clone();
        v4[1] = 4;
        v4.extend_from_slice(&[0, 0, 0, 1]);
        out.push(("subscription-v4-extra-field".into(), v4));
        let empty = Subscription { topics: Vec::new(), ..Subscription::default() };
        out.push(("subscription-v0-empty".into(), empty.encode().expect("encodes")));
        out
    }

    #[test]
    fn kept_crash_inputs_and_seeds_pass() {
        target().replay(seeds().len(), true, consumer_protocol);
    }

    /// The committed seeds are what [`seeds`] makes; `GROUP_FUZZ_WRITE_SEEDS=1` rewrites them.
    #[test]
    fn seeds_are_current() {
        target().check_seeds(seeds());
    }
}
