//! Group ids the node could not store or answer in every version it serves are
//! refused with INVALID_GROUP_ID before anything is written, the same way whatever
//! the store: never a storage failure, and never an id that ListGroups v0 cannot
//! list afterwards.

use kafka_protocol::messages::*;
use rstest::rstest;

use crate::client::{Conn, join, simple_commit};
use crate::memory::Process;

/// A temporary data directory, removed when dropped.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[rstest]
#[case::memory(false)]
#[case::sled(true)]
fn ids_no_answer_could_carry_are_refused_before_any_write(#[case] sled: bool) {
    let dir =
        TempDir(std::env::temp_dir().join(format!("group-server-it-long-ids-{sled}-{}", std::process::id())));
    let dir_arg = dir.0.to_str().expect("a UTF-8 path").to_owned();
    let args: Vec<&str> = if sled { vec!["--data-dir", &dir_arg] } else { Vec::new() };
    let server = Process::start(&[&args[..], &["--initial-rebalance-delay-ms", "0"]].concat());
    let mut c = Conn::open(server.kafka);
    let longest = "g".repeat(group_coordinator::MAX_GROUP_ID_BYTES);
    // 32,768 bytes: storable, but no longer listable by ListGroups v0-v2; 70,000: not storable.
    for id in ["h".repeat(group_coordinator::MAX_GROUP_ID_BYTES + 1), "i".repeat(70_000)] {
        // The flexible versions carry ids of any length.
        let joined: JoinGroupResponse = c.call(ApiKey::JoinGroup, 9, &join(&id, ""));
        assert_eq!(joined.error_code, 24, "JoinGroup of a {}-byte id", id.len());
        let committed: OffsetCommitResponse = c.call(ApiKey::OffsetCommit, 8, &simple_commit(&id, 5));
        assert_eq!(
            committed.topics[0].partitions[0].error_code,
            24,
            "OffsetCommit of a {}-byte id",
            id.len()
        );
    }
    // The longest accepted id is stored, and listed by every version.
    let committed: OffsetCommitResponse = c.call(ApiKey::OffsetCommit, 8, &simple_commit(&longest, 5));
    assert_eq!(committed.topics[0].partitions[0].error_code, 0);
    for version in [0, 2, 4] {
        let listed: ListGroupsResponse = c.call(ApiKey::ListGroups, version, &ListGroupsRequest::default());
        assert_eq!(listed.error_code, 0);
        let ids: Vec<&str> = listed.groups.iter().map(|g| g.group_id.as_str()).collect();
        assert_eq!(ids, [longest.as_str()], "ListGroups v{version}");
    }
    assert_eq!(server.metric("kafka_group_storage_write_failures_total", &[]), 0.0);
}
