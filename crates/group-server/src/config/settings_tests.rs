//! Tests that walk the declaration table: names unique, defaults within bounds, every
//! setting round-tripping through the flag parser and the file reader, bounds enforced.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use crate::ConfigError;
use crate::config::args::Args;
use crate::config::file;
use crate::config::validate::fill;

/// A value for each setting that is not an integer (integers are drawn from their bounds),
/// none of them the default, so that a value that does not land shows.
fn example(key: Key) -> Option<&'static [&'static str]> {
    Some(match key {
        Key::Listen => &["127.0.0.1:1234"],
        Key::Advertise => &["node1.example.com:19092"],
        Key::Topics => &["orders:3", "payments.v1:12"],
        Key::DataDir => &["/var/lib/group-server"],
        Key::Memory | Key::Cluster => &["true"],
        Key::RequestLog => &["requests.jsonl"],
        Key::RebalanceProtocols => &["classic"],
        Key::ConsumerMigrationPolicy => &["upgrade"],
        Key::ConsumerAssignors => &["range"],
        Key::TlsCert => &["cert.pem"],
        Key::TlsKeyFile => &["key.pem"],
        Key::TlsClientCa => &["ca.pem"],
        Key::SaslMechanisms => &["SCRAM-SHA-512,PLAIN"],
        Key::SaslUsers => &["users.txt"],
        Key::AclFile => &["acls.txt"],
        Key::SuperUsers => &["User:admin;User:ops"],
        Key::MetricsListen => &["127.0.0.1:9100"],
        Key::LogFormat => &["json"],
        Key::Etcd => &["http://a:2379,http://b:2379"],
        Key::ClusterPrefix => &["/prod/groups"],
        _ => return None,
    })
}

/// The configuration the flags give `key` the `values` fill (before the checks that relate
/// settings to each other), as it shows in full.
fn through_flags(key: Key, values: &[&str]) -> Result<String, ConfigError> {
    let setting = key.setting();
    let args: Vec<OsString> = match setting.value.shape() {
        Shape::Switch => vec![setting.flag.into()],
        Shape::One(_) | Shape::Repeated(_) => {
            values.iter().flat_map(|value| [setting.flag.into(), (*value).into()]).collect()
        }
    };
    Ok(format!("{:?}", fill(&Args::parse(args)?.layer)?))
}

/// The configuration a file giving `key` the `values` fills, as it shows in full.
fn through_file(key: Key, values: &[&str]) -> Result<String, ConfigError> {
    let setting = key.setting();
    let text = format!("{}={}\n", setting.property.name(), values.join(","));
    let parsed = file::parse(Path::new("server.properties"), &text)?;
    Ok(format!("{:?}", fill(&parsed.layer)?))
}

/// The configuration no setting fills.
fn defaults() -> String {
    format!("{:?}", Draft::default())
}

#[test]
fn keys_index_the_table_and_names_are_distinct() {
    assert_eq!(Key::ALL.len(), SETTINGS.len());
    for (i, key) in Key::ALL.iter().enumerate() {
        assert_eq!(*key as usize, i, "{key:?} out of order");
        assert!(key.setting().flag.starts_with("--"), "{key:?}");
    }
    let flags: Vec<&str> = SETTINGS.iter().map(|s| s.flag).collect();
    let mut names: Vec<&str> = SETTINGS.iter().map(|s| s.property.name()).collect();
    names.extend(ALIASES.iter().map(|(alias, _)| *alias));
    names.extend(file::IGNORED.iter().map(|(ignored, _)| *ignored));
    for (what, list) in [("flag", &flags), ("property", &names)] {
        for (i, a) in list.iter().enumerate() {
            assert!(!list[i + 1..].contains(a), "the {what} {a} is declared twice");
        }
    }
    for process_only in ["--config", "--verbose", "--exit-on-stdin-close", "--help", "--version"] {
        assert!(!flags.contains(&process_only), "{process_only} is not a setting");
    }
}

#[test]
fn every_integer_default_lies_within_its_bounds_and_reads_back() {
    let mut integers = 0;
    for key in Key::ALL {
        let setting = key.setting();
        let Some((min, max)) = setting.value.bounds() else { continue };
        integers += 1;
        // Only an optional integer shows none: unset, the layer below chooses.
        let Some(default) = setting.default_text() else {
            assert_eq!(*key, Key::EtcdTransactionsInFlight, "{key:?} shows no default");
            continue;
        };
        let n: i64 = default.parse().unwrap_or_else(|e| panic!("{key:?} default {default:?}: {e}"));
        assert!((min..=max).contains(&n), "{key:?}: default {n} outside {min}..={max}");
        assert_eq!(through_flags(*key, &[&default]), Ok(defaults()), "{key:?}");
    }
    assert!(integers >= 25, "only {integers} integer settings");
}

#[test]
fn every_other_setting_round_trips_through_flags_and_file() {
    for key in Key::ALL {
        if key.setting().value.bounds().is_some() {
            continue;
        }
        let values = example(*key).unwrap_or_else(|| panic!("no example for {key:?}: add one"));
        let from_flags = through_flags(*key, values);
        assert_eq!(from_flags, through_file(*key, values), "{key:?}");
        assert_ne!(from_flags, Ok(defaults()), "{key:?} {values:?} changed nothing");
    }
}

#[test]
fn a_help_line_names_the_property_and_the_default() {
    assert_eq!(
        Key::GroupMaxSize.setting().help(),
        "Most members a classic group accepts [Kafka: group.max.size] [default: 2147483647]"
    );
    assert!(Key::DataDir.setting().help().ends_with("[property: data.dir] [default: ./data]"));
    assert!(Key::Memory.setting().help().ends_with("[property: memory]"));
    assert!(Key::OffsetsRetentionMinutes.setting().help().ends_with("[default: 10080]"));
}

#[test]
fn the_reference_lists_every_setting_once() {
    let reference = reference();
    let rows: Vec<&str> = reference.lines().filter(|l| l.starts_with("| `--")).collect();
    assert_eq!(rows.len(), SETTINGS.len(), "{reference}");
    for (row, setting) in rows.iter().zip(SETTINGS) {
        assert!(row.starts_with(&format!("| `{}", setting.flag)), "{row}");
        assert!(row.contains(&format!("`{}`", setting.property.name())), "{row}");
        if let Some((min, max)) = setting.value.bounds() {
            assert!(row.contains(&format!("| {min} to {max} |")), "{row}");
        }
    }
    assert!(reference.contains("`broker.id` is read as `node.id`"));
}

/// An integer setting, with its bounds.
fn integer_setting() -> impl Strategy<Value = (Key, i64, i64)> {
    let integers: Vec<(Key, i64, i64)> = Key::ALL
        .iter()
        .filter_map(|key| key.setting().value.bounds().map(|(min, max)| (*key, min, max)))
        .collect();
    proptest::sample::select(integers)
}

/// An integer setting and a value within its bounds: a bound itself half of the time,
/// where off-by-one errors live.
fn integer_value() -> impl Strategy<Value = (Key, i64)> {
    integer_setting()
        .prop_flat_map(|(key, min, max)| (Just(key), prop_oneof![Just(min), Just(max), min..=max]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// An integer in bounds fills the configuration the same through a flag and through the
    /// file, and reads back from its field as given.
    #[test]
    fn integers_round_trip((key, n) in integer_value()) {
        let text = n.to_string();
        let from_flags = through_flags(key, &[&text]);
        prop_assert_eq!(&from_flags, &through_file(key, &[&text]));
        let mut draft = fill(&Args::parse([key.setting().flag, text.as_str()].map(OsString::from))
            .expect("parses")
            .layer)
        .expect("in bounds");
        prop_assert_eq!(key.setting().value.int(&mut draft), Some(n));
    }

    /// One step outside the bounds is a typed error naming the setting as it was given,
    /// on the command line and in the file (with its line).
    #[test]
    fn integers_out_of_bounds_are_refused((key, min, max) in integer_setting(), below in any::<bool>()) {
        let setting = key.setting();
        let outside = if below { min - 1 } else { max + 1 };
        let text = outside.to_string();
        let err = through_flags(key, &[&text]).expect_err("out of bounds");
        let range = format!("an integer from {min} to {max}");
        let is_bad = matches!(
            &err,
            ConfigError::BadValue { setting: name, value, expected }
                if name == setting.flag && *value == text && expected.starts_with(&range)
        );
        prop_assert!(is_bad, "{:?}", err);
        let err = through_file(key, &[&text]).expect_err("out of bounds");
        let ConfigError::InFile { path, line: 1, error } = err else { panic!("{err:?}") };
        prop_assert_eq!(path, PathBuf::from("server.properties"));
        let is_bad = matches!(
            &*error,
            ConfigError::BadValue { setting: name, .. } if name == setting.property.name()
        );
        prop_assert!(is_bad, "{:?}", error);
    }
}
