//! The command line, parsed by clap into raw values; `value` and `validate` check them, so
//! that a value is judged the same way whether it came from a flag or from a file.

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, Command};

use super::ConfigError;
use super::layer::{Layer, Origin, Raw};
use super::settings::{Key, SETTINGS};
use super::value::Shape;

const ABOUT: &str =
    "group-server: a Kafka consumer group coordinator node (not a broker: it stores no records)";

const AFTER_HELP: &str = "\
Every setting can also be given in a --config file of Java properties, under the name in
brackets (Kafka's broker property where Kafka has one); flags override the file, whatever
their order. -v and --exit-on-stdin-close are flags only. For example:

  listeners=PLAINTEXT://0.0.0.0:9092
  advertised.listeners=PLAINTEXT://node1.example.com:9092
  node.id=1
  topics=orders:3,payments:1
  data.dir=/var/lib/group-server
  group.initial.rebalance.delay.ms=0

SASL users are kept in the --sasl-users file, salted: `group-server users add --file PATH
--user NAME` reads the password from standard input (see `group-server users --help`).";

/// The command line: `--config`, a flag per setting (as `settings` declares it), and the
/// process-only switches. Values stay strings here: `value` parses them, with errors that
/// say what is expected, for a file's values as for these.
#[derive(Debug)]
pub(super) struct Args {
    /// `--config FILE`.
    pub(super) config: Option<String>,
    /// The settings the flags give; those not given are absent, so that a file's value
    /// for them stands.
    pub(super) layer: Layer,
    pub(super) exit_on_stdin_close: bool,
    pub(super) verbose: bool,
}

impl Args {
    /// Parses arguments without the program name.
    pub(super) fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Args, ConfigError> {
        let argv = std::iter::once(OsString::from("group-server")).chain(args);
        let matches = command().try_get_matches_from(argv).map_err(from_clap)?;
        let mut layer = Layer::default();
        for (&key, setting) in Key::ALL.iter().zip(SETTINGS) {
            let raw =
                |value: &str, origin| Raw { value: value.to_owned(), name: setting.flag.to_owned(), origin };
            if setting.value.shape() == Shape::Switch {
                if matches.get_flag(setting.long()) {
                    layer.set(key, raw("true", Origin::Switch));
                }
                continue;
            }
            for value in matches.get_many::<String>(setting.long()).into_iter().flatten() {
                layer.push(key, raw(value, Origin::Flag));
            }
        }
        Ok(Args {
            config: matches.get_one::<String>("config").cloned(),
            layer,
            exit_on_stdin_close: matches.get_flag("exit-on-stdin-close"),
            verbose: matches.get_flag("verbose"),
        })
    }
}

/// The binary's flags: `--config`, then one per setting in the order they are declared,
/// then the process-only switches.
fn command() -> Command {
    let config = Arg::new("config")
        .long("config")
        .value_name("FILE")
        .help("Read settings from this Java-properties file (Kafka's property names); flags override it");
    let settings = SETTINGS.iter().map(|setting| {
        let arg = Arg::new(setting.long()).long(setting.long()).help(setting.help());
        match setting.value.shape() {
            Shape::Switch => arg.action(ArgAction::SetTrue),
            Shape::One(name) => arg.value_name(name).allow_negative_numbers(setting.value.bounds().is_some()),
            Shape::Repeated(name) => arg.value_name(name).action(ArgAction::Append),
        }
    });
    let exit_on_stdin_close = Arg::new("exit-on-stdin-close").long("exit-on-stdin-close").help(
        "Exit when standard input closes, so that a test harness that dies cannot leave the server running",
    );
    let verbose =
        Arg::new("verbose").short('v').long("verbose").help("Log one line per connection to stderr");
    Command::new("group-server")
        .version(env!("CARGO_PKG_VERSION"))
        .about(ABOUT)
        .after_help(AFTER_HELP)
        .arg(config)
        .args(settings)
        .args([exit_on_stdin_close, verbose].map(|switch| switch.action(ArgAction::SetTrue)))
}

/// Turns clap's outcome into a `ConfigError`: help and version become texts to print,
/// usage errors keep clap's wording on one line.
fn from_clap(error: clap::Error) -> ConfigError {
    let context = |kind| match error.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            ConfigError::Help(with_newline(error.render().to_string()))
        }
        ErrorKind::DisplayVersion => ConfigError::Version(with_newline(error.render().to_string())),
        ErrorKind::UnknownArgument => match context(ContextKind::InvalidArg) {
            Some(argument) => {
                ConfigError::UnknownArgument { argument, suggestion: context(ContextKind::SuggestedArg) }
            }
            None => ConfigError::Usage(one_line(&error.render().to_string())),
        },
        // clap reports a value that is missing as an empty invalid one.
        ErrorKind::InvalidValue if context(ContextKind::InvalidValue).as_deref() == Some("") => {
            match context(ContextKind::InvalidArg) {
                Some(arg) => ConfigError::MissingValue(flag_name(&arg)),
                None => ConfigError::Usage(one_line(&error.render().to_string())),
            }
        }
        _ => ConfigError::Usage(one_line(&error.render().to_string())),
    }
}

fn with_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// `--listen <HOST:PORT>` → `--listen`.
fn flag_name(arg: &str) -> String {
    arg.split_once(' ').map_or(arg, |(flag, _)| flag).to_owned()
}

/// clap's message without its `error: ` prefix and usage block, tips kept.
fn one_line(rendered: &str) -> String {
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("bad command line");
    let mut message = first.strip_prefix("error: ").unwrap_or(first).to_owned();
    for tip in lines.filter(|l| l.starts_with("tip:")) {
        message.push_str("; ");
        message.push_str(tip);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_has_its_flag() {
        let command = command();
        for setting in SETTINGS {
            assert!(
                command.get_arguments().any(|a| a.get_long() == Some(setting.long())),
                "no flag {} for {setting:?}",
                setting.flag,
            );
        }
        command.debug_assert();
    }

    #[test]
    fn usage_errors_fit_on_one_line_with_their_tip() {
        let rendered = "error: unexpected argument '--lisen' found\n\n  tip: a similar argument exists: \
                        '--listen'\n\nUsage: group-server [OPTIONS]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(rendered),
            "unexpected argument '--lisen' found; tip: a similar argument exists: '--listen'"
        );
        assert_eq!(flag_name("--listen <HOST:PORT>"), "--listen");
    }

    #[test]
    fn unset_flags_are_absent_from_the_layer() {
        let args = Args::parse(["--memory", "--topic", "a:1"].map(OsString::from)).expect("parses");
        let layer = args.layer;
        assert_eq!(layer.get(Key::Listen), None);
        assert_eq!(layer.get(Key::Memory).map(|r| r.origin.clone()), Some(Origin::Switch));
        assert_eq!(layer.all(Key::Topics).len(), 1);
    }
}
