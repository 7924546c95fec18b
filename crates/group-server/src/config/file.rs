//! `--config FILE`: a Java-properties file under Kafka's broker property names.
//!
//! The syntax is `java.util.Properties`' (so a Kafka `server.properties` excerpt reads
//! the same): `#` and `!` comment lines, `=`, `:` or white space between name and value,
//! a backslash ending a line to continue it, and the `\t \n \r \f \uXXXX` escapes.
//! Unlike `Properties`, which keeps the last of two values silently, a property given
//! twice is an error, and so is an unknown one: a misspelt name must not fall back to a
//! default unnoticed.

use std::collections::BTreeMap;
use std::path::Path;

use super::ConfigError;
use super::layer::{Layer, Origin, Raw};
use super::settings::{ALIASES, Key, SETTINGS};
use super::value::Shape;

/// What a file gives: its values, and a warning per property it sets that this node
/// knowingly ignores.
#[derive(Debug, Default)]
pub(super) struct Parsed {
    pub(super) layer: Layer,
    pub(super) warnings: Vec<String>,
}

/// Kafka broker properties accepted with a warning, so that a block copied from a broker's
/// `server.properties` works; any other unknown name is an error.
pub(super) const IGNORED: &[(&str, &str)] = &[
    ("log.dirs", "this node stores no records (its offsets and groups go to data.dir)"),
    ("log.dir", "this node stores no records (its offsets and groups go to data.dir)"),
    ("num.partitions", "this node stores no records"),
    ("default.replication.factor", "this node stores no records"),
    ("log.retention.hours", "this node stores no records"),
    ("log.segment.bytes", "this node stores no records"),
    ("log.retention.check.interval.ms", "this node stores no records"),
    ("num.recovery.threads.per.data.dir", "this node stores no records"),
    ("offsets.topic.replication.factor", "this node replicates nothing"),
    ("transaction.state.log.replication.factor", "this node replicates nothing"),
    ("transaction.state.log.min.isr", "this node replicates nothing"),
    ("offsets.commit.timeout.ms", "a commit here waits for its storage write, without a timeout"),
    ("num.network.threads", "this node sizes its own threads"),
    ("num.io.threads", "this node sizes its own threads"),
    ("socket.send.buffer.bytes", "this node keeps the system's socket buffer sizes"),
    ("socket.receive.buffer.bytes", "this node keeps the system's socket buffer sizes"),
    ("process.roles", "this node is a group coordinator only and joins no cluster"),
    ("controller.quorum.voters", "this node is a group coordinator only and joins no cluster"),
    ("controller.quorum.bootstrap.servers", "this node is a group coordinator only and joins no cluster"),
    ("controller.listener.names", "this node is a group coordinator only and joins no cluster"),
    ("inter.broker.listener.name", "this node is a group coordinator only and joins no cluster"),
    (
        "listener.security.protocol.map",
        "this node's one listener takes its protocol from the TLS and SASL settings",
    ),
];

/// Reads and parses the file at `path`.
pub(super) fn read(path: &Path) -> Result<Parsed, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::ReadFile { path: path.to_owned(), reason: e.into() })?;
    parse(path, &text)
}

/// Parses the text of the file at `path` (named in errors and warnings).
pub(super) fn parse(path: &Path, text: &str) -> Result<Parsed, ConfigError> {
    let mut parsed = Parsed::default();
    let mut seen: BTreeMap<Key, Raw> = BTreeMap::new();
    for (line, logical) in logical_lines(text) {
        let at = |error| ConfigError::InFile { path: path.to_owned(), line, error: Box::new(error) };
        let (name, value) = split(&logical).map_err(|e| {
            at(ConfigError::BadValue {
                setting: "this line".into(),
                value: logical.clone(),
                expected: e.to_string(),
            })
        })?;
        let origin = Origin::File { path: path.to_owned(), line };
        let raw = Raw { value: value.trim_end().to_owned(), name: name.clone(), origin };
        let key = match lookup(&name) {
            Lookup::Known(key) => key,
            Lookup::Ignored(reason) => {
                parsed.warnings.push(format!("{}:{line}: {name} is ignored: {reason}", path.display()));
                continue;
            }
            Lookup::Unknown => {
                return Err(ConfigError::UnknownProperty {
                    path: path.to_owned(),
                    line,
                    property: name.clone(),
                    suggestion: closest(&name),
                });
            }
        };
        if let Some(first) = seen.get(&key) {
            if first.name == raw.name {
                let first_line = match first.origin {
                    Origin::File { line, .. } => line,
                    Origin::Flag | Origin::Switch => 0,
                };
                return Err(at(ConfigError::DuplicateProperty { property: name, first_line }));
            }
            // An alias and its property may agree (a file written for both old and new
            // brokers sets broker.id and node.id alike).
            if first.value.trim() != raw.value.trim() {
                return Err(ConfigError::Conflict {
                    first: first.label(),
                    second: raw.label(),
                    expected: format!(
                        "one of {} and {} (they are one setting), or the same value for both",
                        first.name, raw.name
                    ),
                });
            }
            continue;
        }
        seen.insert(key, raw.clone());
        if let Shape::Repeated(_) = key.setting().value.shape() {
            // Kafka's list values are comma-separated, and empty entries are dropped.
            for entry in raw.value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
                parsed.layer.push(key, Raw { value: entry.to_owned(), ..raw.clone() });
            }
        } else {
            parsed.layer.set(key, raw);
        }
    }
    Ok(parsed)
}

enum Lookup {
    Known(Key),
    Ignored(&'static str),
    Unknown,
}

fn lookup(name: &str) -> Lookup {
    if let Some((key, _)) = Key::ALL.iter().zip(SETTINGS).find(|(_, s)| s.property.name() == name) {
        return Lookup::Known(*key);
    }
    if let Some((_, key)) = ALIASES.iter().find(|(alias, _)| *alias == name) {
        return Lookup::Known(*key);
    }
    match IGNORED.iter().find(|(ignored, _)| *ignored == name) {
        Some((_, reason)) => Lookup::Ignored(reason),
        None => Lookup::Unknown,
    }
}

/// The known property closest to a misspelt one, if it is close enough to be the intent.
fn closest(name: &str) -> Option<String> {
    let known = SETTINGS.iter().map(|s| s.property.name()).chain(ALIASES.iter().map(|(alias, _)| *alias));
    let limit = 1 + name.len() / 8;
    known
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min()
        .map(|(_, candidate)| candidate.to_owned())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// The file's logical lines with the number of the line each starts on: comments and blank
/// lines dropped, continued lines joined.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (index, line) in text.lines().enumerate() {
        let piece = line.trim_start();
        if current.is_none() && (piece.is_empty() || piece.starts_with('#') || piece.starts_with('!')) {
            continue;
        }
        // An odd number of trailing backslashes continues the line; an even number is
        // escaped backslashes.
        let trailing = piece.chars().rev().take_while(|&c| c == '\\').count();
        let continues = trailing % 2 == 1;
        let piece = if continues { &piece[..piece.len() - 1] } else { piece };
        let (_, joined) = current.get_or_insert_with(|| (index + 1, String::new()));
        joined.push_str(piece);
        if !continues {
            lines.extend(current.take());
        }
    }
    lines.extend(current);
    lines
}

/// A `\u` escape not followed by four hexadecimal digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("name=value with \\u followed by 4 hex digits, not \\u{0}")]
struct BadEscape(String);

/// A logical line's name and value, unescaped; the name ends at the first unescaped `=`,
/// `:` or white space, as in `java.util.Properties`.
fn split(line: &str) -> Result<(String, String), BadEscape> {
    let mut escaped = false;
    let mut end = line.len();
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || c.is_whitespace() {
            end = i;
            break;
        }
    }
    let (name, rest) = line.split_at(end);
    let rest = rest.trim_start();
    let rest = rest.strip_prefix(['=', ':']).unwrap_or(rest).trim_start();
    Ok((unescape(name)?, unescape(rest)?))
}

fn unescape(text: &str) -> Result<String, BadEscape> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16).ok().filter(|_| hex.len() == 4);
                match code.and_then(char::from_u32) {
                    Some(c) => out.push(c),
                    None => return Err(BadEscape(hex)),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use std::path::PathBuf;

    use super::*;

    fn test_path() -> PathBuf {
        PathBuf::from("server.properties")
    }

    fn values(text: &str) -> Vec<(String, String, usize)> {
        let parsed = parse(&test_path(), text).expect("parses");
        let mut out: Vec<_> = Key::ALL
            .iter()
            .filter_map(|&key| parsed.layer.get(key))
            .map(|raw| match raw.origin {
                Origin::File { line, .. } => (raw.name.clone(), raw.value.clone(), line),
                Origin::Flag | Origin::Switch => (raw.name.clone(), raw.value.clone(), 0),
            })
            .collect();
        out.sort_by_key(|(_, _, line)| *line);
        out
    }

    fn one(name: &str, value: &str, line: usize) -> (String, String, usize) {
        (name.to_owned(), value.to_owned(), line)
    }

    #[rstest]
    #[case::equals("group.max.size=5", "5")]
    #[case::spaced_equals("  group.max.size = 5  ", "5")]
    #[case::colon("group.max.size:5", "5")]
    #[case::space("group.max.size 5", "5")]
    #[case::tab_then_equals("group.max.size\t=\t5", "5")]
    #[case::empty_value("group.max.size=", "")]
    #[case::no_value("group.max.size", "")]
    #[case::value_with_separators("listeners=PLAINTEXT://h:1", "PLAINTEXT://h:1")]
    #[case::escapes(r"data.dir=a\tb\\c\u0041\=\:", "a\tb\\cA=:")]
    fn name_and_value_are_split_as_java_does(#[case] line: &str, #[case] value: &str) {
        let name = if line.contains("listeners") {
            "listeners"
        } else if line.contains("data.dir") {
            "data.dir"
        } else {
            "group.max.size"
        };
        assert_eq!(values(line), [one(name, value, 1)]);
    }

    #[test]
    fn comments_blank_lines_and_continuations() {
        let text = "# a comment\n! another = one\n\n   \t\ngroup.max.size=5\n\
                    data.dir=/var/\\\n    lib/group\\\\\nrequest.log=a\\\n  #b\nnode.id=3\\\n";
        assert_eq!(
            values(text),
            [
                one("group.max.size", "5", 5),
                one("data.dir", "/var/lib/group\\", 6),
                one("request.log", "a#b", 8),
                one("node.id", "3", 10)
            ]
        );
    }

    #[test]
    fn topics_split_on_commas() {
        let parsed = parse(&test_path(), "topics = orders:3, payments:1,,\n").expect("parses");
        let topics: Vec<_> = parsed.layer.all(Key::Topics).iter().map(|r| r.value.as_str()).collect();
        assert_eq!(topics, ["orders:3", "payments:1"]);
    }

    #[test]
    fn unknown_properties_name_their_line_and_a_close_match() {
        let err = parse(&test_path(), "node.id=1\n\ngrup.max.size=5\n").expect_err("unknown");
        assert_eq!(
            err,
            ConfigError::UnknownProperty {
                path: test_path(),
                line: 3,
                property: "grup.max.size".into(),
                suggestion: Some("group.max.size".into()),
            }
        );
        assert_eq!(
            err.to_string(),
            "server.properties:3: unknown property \"grup.max.size\" (did you mean group.max.size?)"
        );
        let err = parse(&test_path(), "frobnicate=1").expect_err("unknown");
        assert!(matches!(err, ConfigError::UnknownProperty { suggestion: None, line: 1, .. }), "{err:?}");
    }

    #[test]
    fn a_property_given_twice_is_refused() {
        let err = parse(&test_path(), "group.max.size=5\ngroup.max.size=6\n").expect_err("twice");
        assert_eq!(
            err,
            ConfigError::InFile {
                path: test_path(),
                line: 2,
                error: Box::new(ConfigError::DuplicateProperty {
                    property: "group.max.size".into(),
                    first_line: 1
                }),
            }
        );
    }

    #[test]
    fn broker_id_is_node_id_and_must_agree_with_it() {
        assert_eq!(values("broker.id=4"), [one("broker.id", "4", 1)]);
        assert_eq!(values("broker.id=4\nnode.id=4"), [one("broker.id", "4", 1)]);
        let err = parse(&test_path(), "broker.id=4\nnode.id=5").expect_err("disagree");
        let ConfigError::Conflict { first, second, expected } = err else { panic!("{err:?}") };
        assert_eq!(
            (first.as_str(), second.as_str()),
            ("broker.id=4 (server.properties:1)", "node.id=5 (server.properties:2)")
        );
        assert!(expected.contains("one setting"), "{expected}");
    }

    #[test]
    fn listed_kafka_properties_are_ignored_with_a_warning() {
        let parsed = parse(&test_path(), "num.io.threads=8\nlog.dirs=/tmp/kafka\n").expect("accepted");
        assert_eq!(parsed.warnings.len(), 2);
        assert!(
            parsed.warnings[1].starts_with("server.properties:2: log.dirs is ignored"),
            "{:?}",
            parsed.warnings
        );
        assert!(parsed.warnings[1].contains("data.dir"));
        assert!(values("num.io.threads=8").is_empty());
    }

    #[test]
    fn a_malformed_unicode_escape_names_its_line() {
        let err = parse(&test_path(), "\ndata.dir=\\u12g4").expect_err("malformed");
        assert!(matches!(&err, ConfigError::InFile { line: 2, .. }), "{err:?}");
        assert!(err.to_string().contains("4 hex digits"), "{err}");
    }

    #[test]
    fn edit_distance_counts_single_character_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
