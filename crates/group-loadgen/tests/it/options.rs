//! The command line's cluster flags: `--etcd PATH [--etcd-members N]`.

use std::path::PathBuf;

use group_loadgen::{ClusterSpec, LoadgenError, Options};
use rstest::rstest;

fn parse(line: &str) -> Result<Options, LoadgenError> {
    Options::from_args(line.split_whitespace())
}

#[rstest]
#[case::none_without_etcd("--server gs", None)]
#[case::three_members_by_default("--server gs --etcd /opt/etcd", Some(("/opt/etcd", 3)))]
#[case::one_member("--server gs --etcd e --etcd-members 1", Some(("e", 1)))]
#[case::inline_values("--server gs --etcd=e --etcd-members=5", Some(("e", 5)))]
#[case::members_before_etcd("--etcd-members 7 --server gs --etcd e", Some(("e", 7)))]
fn cluster_flags(#[case] line: &str, #[case] expected: Option<(&str, usize)>) {
    let options = parse(line).expect("parses");
    let expected = expected.map(|(etcd, members)| ClusterSpec { etcd: PathBuf::from(etcd), members });
    assert_eq!(options.cluster, expected);
}

#[rstest]
#[case::members_without_etcd("--server gs --etcd-members 3", "--etcd-members")]
#[case::etcd_against_a_running_server("--connect 127.0.0.1:9 --etcd e", "--etcd")]
#[case::zero_members("--server gs --etcd e --etcd-members 0", "--etcd-members")]
#[case::more_than_seven_members("--server gs --etcd e --etcd-members 8", "--etcd-members")]
#[case::members_not_a_number("--server gs --etcd e --etcd-members three", "--etcd-members")]
fn bad_cluster_flags_are_typed_errors(#[case] line: &str, #[case] flag: &str) {
    match parse(line) {
        Err(LoadgenError::BadValue { flag: got, .. }) => assert_eq!(got, flag, "{line}"),
        other => panic!("{line}: {other:?}"),
    }
}

#[test]
fn etcd_needs_a_value() {
    assert_eq!(parse("--server gs --etcd").map(|_| ()), Err(LoadgenError::MissingValue("--etcd".into())));
}
