//! The values one source gives (the command line, or the file) before they are checked,
//! each with where it was given, so that an error can point there.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::ConfigError;
use super::settings::Key;

/// Where a value was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Origin {
    /// A flag with a value.
    Flag,
    /// A flag without a value, such as `--memory` (its value is `true`).
    Switch,
    /// A line of a configuration file.
    File { path: PathBuf, line: usize },
}

/// A value as given, before it is parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Raw {
    pub(super) value: String,
    /// The flag or property as the user wrote it (`broker.id` when the alias was used), so
    /// that an error names what the user can find in what they wrote.
    pub(super) name: String,
    pub(super) origin: Origin,
}

impl Raw {
    /// How an error message names this value, location included.
    pub(super) fn label(&self) -> String {
        match &self.origin {
            Origin::Flag => format!("{} {}", self.name, self.value),
            Origin::Switch => self.name.clone(),
            Origin::File { path, line } => {
                format!("{}={} ({}:{line})", self.name, self.value, path.display())
            }
        }
    }

    /// Places an error about this value where the user gave it.
    pub(super) fn locate(&self, error: ConfigError) -> ConfigError {
        match &self.origin {
            Origin::Flag | Origin::Switch => error,
            Origin::File { path, line } => {
                ConfigError::InFile { path: path.clone(), line: *line, error: Box::new(error) }
            }
        }
    }

    /// A [`ConfigError::BadValue`] for this value, placed where the user gave it.
    pub(super) fn bad(&self, expected: impl Into<String>) -> ConfigError {
        self.locate(ConfigError::BadValue {
            setting: self.name.clone(),
            value: self.value.clone(),
            expected: expected.into(),
        })
    }
}

/// The values one source gives, by setting; a repeatable setting (`--topic`) may have
/// several.
#[derive(Debug, Default)]
pub(super) struct Layer {
    values: BTreeMap<Key, Vec<Raw>>,
}

impl Layer {
    /// The value given for `key` (the first, for a repeatable setting).
    pub(super) fn get(&self, key: Key) -> Option<&Raw> {
        self.all(key).first()
    }

    /// Every value given for `key`.
    pub(super) fn all(&self, key: Key) -> &[Raw] {
        self.values.get(&key).map_or(&[], Vec::as_slice)
    }

    /// Gives `raw` for `key`, in place of what was given before.
    pub(super) fn set(&mut self, key: Key, raw: Raw) {
        self.values.insert(key, vec![raw]);
    }

    /// Gives one more value for the repeatable `key`.
    pub(super) fn push(&mut self, key: Key, raw: Raw) {
        self.values.entry(key).or_default().push(raw);
    }

    /// The settings given, in the order of [`Key`], with their values.
    pub(super) fn iter(&self) -> impl Iterator<Item = (Key, &Raw)> {
        self.values.iter().flat_map(|(key, raws)| raws.iter().map(|raw| (*key, raw)))
    }

    /// These values with `over`'s in place of their own, whatever order they came in.
    ///
    /// A repeatable setting is replaced as a whole list, not merged, so that the command
    /// line can say exactly which topics there are; likewise `--memory` and `--data-dir`
    /// replace both of the file's storage settings, since together they are one choice.
    pub(super) fn overridden_by(mut self, over: Layer) -> Layer {
        if over.values.contains_key(&Key::Memory) || over.values.contains_key(&Key::DataDir) {
            self.values.remove(&Key::Memory);
            self.values.remove(&Key::DataDir);
        }
        self.values.extend(over.values);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(value: &str, origin: Origin) -> Raw {
        Raw { value: value.into(), name: "x.y".into(), origin }
    }

    #[test]
    fn labels_and_errors_say_where_a_value_came_from() {
        let file = Origin::File { path: PathBuf::from("a.properties"), line: 3 };
        assert_eq!(raw("5", file.clone()).label(), "x.y=5 (a.properties:3)");
        assert_eq!(raw("5", Origin::Flag).label(), "x.y 5");
        assert_eq!(raw("true", Origin::Switch).label(), "x.y");
        let bad = ConfigError::BadValue { setting: "x.y".into(), value: "5".into(), expected: "6".into() };
        assert_eq!(raw("5", Origin::Flag).bad("6"), bad);
        assert_eq!(
            raw("5", file).bad("6"),
            ConfigError::InFile { path: PathBuf::from("a.properties"), line: 3, error: Box::new(bad) }
        );
    }

    #[test]
    fn the_command_line_overrides_the_file_whole_lists_and_storage_included() {
        let mut file = Layer::default();
        file.set(Key::NodeId, raw("1", Origin::Flag));
        file.set(Key::DataDir, raw("d", Origin::Flag));
        file.set(Key::GroupMaxSize, raw("9", Origin::Flag));
        file.push(Key::Topics, raw("a:1", Origin::Flag));
        file.push(Key::Topics, raw("b:1", Origin::Flag));
        let mut cli = Layer::default();
        cli.set(Key::NodeId, raw("2", Origin::Flag));
        cli.set(Key::Memory, raw("true", Origin::Switch));
        cli.push(Key::Topics, raw("c:1", Origin::Flag));
        let merged = file.overridden_by(cli);
        assert_eq!(merged.get(Key::NodeId).map(|r| r.value.as_str()), Some("2"));
        assert_eq!(merged.get(Key::GroupMaxSize).map(|r| r.value.as_str()), Some("9"));
        assert_eq!(merged.get(Key::DataDir), None);
        assert!(merged.get(Key::Memory).is_some());
        assert_eq!(merged.all(Key::Topics).iter().map(|r| r.value.as_str()).collect::<Vec<_>>(), ["c:1"]);
    }

    #[test]
    fn settings_come_out_in_declaration_order() {
        let mut layer = Layer::default();
        layer.set(Key::MaxFrameBytes, raw("1", Origin::Flag));
        layer.push(Key::Topics, raw("a:1", Origin::Flag));
        layer.push(Key::Topics, raw("b:1", Origin::Flag));
        layer.set(Key::Listen, raw("h:1", Origin::Flag));
        let order: Vec<_> = layer.iter().map(|(key, raw)| (key, raw.value.as_str())).collect();
        assert_eq!(
            order,
            [(Key::Listen, "h:1"), (Key::Topics, "a:1"), (Key::Topics, "b:1"), (Key::MaxFrameBytes, "1")]
        );
    }
}
