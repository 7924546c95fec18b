//! The exact-output vectors produced by Kafka's Java `RangeAssignor` and
//! `RoundRobinAssignor`, including KIP-881 rack-aware range.

use std::sync::Arc;

use group_assignors::{ReplicaRacks, get_assignor};
use rstest::rstest;
use serde_json::Value;

use crate::check::{as_sets, expected, load, members, tp};

#[rstest]
#[case::range("range.json", "range", 26)]
#[case::roundrobin("roundrobin.json", "roundrobin", 26)]
#[case::range_rack("range-rack.json", "range", 11)]
fn every_case_matches_kafka(#[case] file: &str, #[case] assignor: &str, #[case] cases: usize) {
    let data = load(file);
    let assignor = get_assignor(assignor).expect("built in");
    let all = data["cases"].as_array().expect("cases");
    assert_eq!(all.len(), cases, "{file} lost cases");
    let mut failures = Vec::new();
    for case in all {
        let name = case["name"].as_str().expect("name");
        let ms = members(&case["members"]);
        let parts: Vec<_> = case["partitions"].as_array().expect("partitions").iter().map(tp).collect();
        let racks: Vec<ReplicaRacks> = case["partitions"]
            .as_array()
            .expect("partitions")
            .iter()
            .map(|p| {
                p.get("replica_racks")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().map(|x| Arc::from(x.as_str().expect("rack"))).collect())
                    .unwrap_or_default()
            })
            .collect();
        let got = assignor.assign_with_racks(&ms, &parts, &racks).expect("valid input");
        for list in got.values() {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{file}/{name}: output not sorted: {list:?}");
        }
        if as_sets(&got) != expected(&case["expected"]) {
            failures.push(format!("{name}: got {:?}", as_sets(&got)));
        }
    }
    assert!(failures.is_empty(), "{file}: {} failing case(s):\n{}", failures.len(), failures.join("\n"));
}

/// Without rack information the rack vectors' inputs still give valid range
/// output equal to what plain range computes (racks only reorder matches).
#[test]
fn rack_vectors_without_racks_equal_plain_range() {
    let data = load("range-rack.json");
    let range = get_assignor("range").expect("built in");
    for case in data["cases"].as_array().expect("cases") {
        let ms = members(&case["members"]);
        let parts: Vec<_> = case["partitions"].as_array().expect("partitions").iter().map(tp).collect();
        let plain = range.assign(&ms, &parts).expect("valid input");
        let no_racks = range.assign_with_racks(&ms, &parts, &[]).expect("valid input");
        assert_eq!(plain, no_racks, "{}", case["name"]);
        let total: usize = plain.values().map(Vec::len).sum();
        assert_eq!(total, parts.len(), "{}", case["name"]);
    }
}
