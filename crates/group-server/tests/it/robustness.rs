//! Hostile frames close only their own connection; the server stays up.

use group_server::{GroupServer, ServerConfig};
use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, ApiVersionsResponse};
use proptest::prelude::*;

use crate::client::{Conn, server};

fn still_serves(server: &GroupServer) {
    let mut c = Conn::open(server.local_addr());
    let resp: ApiVersionsResponse = c.call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
    assert_eq!(resp.error_code, 0);
}

#[rstest::rstest]
#[case::shorter_than_a_header(vec![0, 18, 0])]
#[case::unknown_api_key(vec![0x03, 0xe7, 0, 0, 0, 0, 0, 1, 0xff, 0xff])]
#[case::unadvertised_api(vec![0, 19, 0, 5, 0, 0, 0, 1, 0xff, 0xff, 0])]
#[case::version_too_new(vec![0, 11, 0, 10, 0, 0, 0, 1, 0xff, 0xff, 0])]
// dependencies.md 2.4: a JoinGroup v9 whose `protocols` count is ~2^31 aborts an unguarded decoder.
#[case::huge_compact_array(vec![
    0, 11, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0,
    2, b'g', 0, 0, 0x75, 0x30, 0, 0, 0x75, 0x30, 1, 1, 9, b'c', b'o', b'n', b's', b'u', b'm', b'e', b'r',
    0xff, 0xff, 0xff, 0xff, 0x07,
])]
#[case::huge_string(vec![0, 12, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0x7f, 0xff, b'g'])]
fn a_malformed_request_closes_its_connection_only(#[case] frame: Vec<u8>) {
    let server = server();
    let mut bystander = Conn::open(server.local_addr());
    let mut c = Conn::open(server.local_addr());
    c.send_raw(&frame);
    assert!(c.is_closed());
    let resp: ApiVersionsResponse = bystander.call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
    assert_eq!(resp.error_code, 0);
    still_serves(&server);
}

#[rstest::rstest]
#[case::larger_than_the_limit(0x7fff_ffff)]
#[case::negative(-1)]
fn a_bad_length_prefix_closes_the_connection(#[case] len: i32) {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let mut prefix = len.to_be_bytes().to_vec();
    prefix.extend_from_slice(&[0; 16]);
    c.write_raw(&prefix);
    assert!(c.is_closed());
    still_serves(&server);
}

#[test]
fn the_frame_limit_is_configurable() {
    let config = ServerConfig::from_args(["--listen", "127.0.0.1:0", "--memory", "--max-frame-bytes", "64"])
        .expect("config");
    let server = GroupServer::start(&config).expect("starts");
    let mut c = Conn::open(server.local_addr());
    let mut frame = vec![0, 18, 0, 0, 0, 0, 0, 1, 0, 0];
    frame.resize(65, 0);
    c.send_raw(&frame);
    assert!(c.is_closed());
    still_serves(&server);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random frames with a plausible header for every API key the server knows, over TCP.
    #[test]
    fn random_frames_never_take_the_server_down(
        api in prop::sample::select(vec![0i16, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 42, 47, 19, 999]),
        version in -1i16..20,
        body in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let server = server();
        let mut c = Conn::open(server.local_addr());
        let mut frame = api.to_be_bytes().to_vec();
        frame.extend_from_slice(&version.to_be_bytes());
        frame.extend_from_slice(&[0, 0, 0, 1, 0, 2, b'i', b't']);
        frame.extend_from_slice(&body);
        c.send_raw(&frame);
        still_serves(&server);
    }
}
