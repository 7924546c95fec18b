//! The users file: the SASL credentials this node accepts, salted, never a password.
//!
//! A text file, one line per user and SCRAM mechanism, fields separated by one space;
//! blank lines and lines starting with `#` are ignored:
//!
//! ```text
//! # USER MECHANISM ITERATIONS SALT STORED_KEY SERVER_KEY (the last three base64)
//! alice SCRAM-SHA-512 8192 c2FsdHNhbHRzYWx0 <base64 StoredKey> <base64 ServerKey>
//! alice SCRAM-SHA-256 8192 b3RoZXJzYWx0 <base64 StoredKey> <base64 ServerKey>
//! ```
//!
//! These are the values RFC 5802 section 3 has a server keep (Kafka keeps the same in
//! its `ScramCredential`): the salt, the PBKDF2 iteration count (at least 4096), and
//! `StoredKey = H(HMAC(SaltedPassword, "Client Key"))` and
//! `ServerKey = HMAC(SaltedPassword, "Server Key")`. PLAIN logins are checked against
//! the SCRAM-SHA-512 credential (SCRAM-SHA-256 when the user has only that): the given
//! password is salted and hashed the same way and the keys compared in constant time.
//!
//! `group-server users add|remove|list` writes and reads it; the server loads it once
//! at startup.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

use super::scram::{DEFAULT_ITERATIONS, Hash, MIN_ITERATIONS, ScramCredential};
use crate::SaslMechanism;

/// Bytes of random salt per credential.
const SALT_BYTES: usize = 24;

/// The header `users add` writes at the top of a new file.
const HEADER: &str = "# group-server SASL users (written by `group-server users add`): one line per user and\n\
                      # mechanism: USER MECHANISM ITERATIONS SALT STORED_KEY SERVER_KEY (base64).\n";

/// A users file that cannot be read, parsed or written, or a bad `users` command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UsersError {
    /// The file cannot be read.
    #[error("cannot read the users file {}: {reason}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A line of the file is not a credential.
    #[error("{}:{line}: {reason}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// The line, counted from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The file cannot be written.
    #[error("cannot write the users file {}: {reason}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A user name that is empty or holds white space or a control character.
    #[error("bad user name {0:?}: expected a non-empty name without spaces or control characters")]
    BadName(String),
    /// A mechanism that is not SCRAM-SHA-256 or SCRAM-SHA-512.
    #[error(
        "bad mechanism {0:?}: expected SCRAM-SHA-256 or SCRAM-SHA-512 (PLAIN logins are checked \
         against these credentials)"
    )]
    BadMechanism(String),
    /// Fewer PBKDF2 iterations than SCRAM allows.
    #[error("{0} iterations is too few: expected at least 4096")]
    Iterations(u32),
    /// No password on standard input.
    #[error("no password: expected it as one line on standard input")]
    NoPassword,
    /// No random salt could be made.
    #[error("no random salt: {0}")]
    Random(String),
    /// A bad `group-server users` command line, in clap's words.
    #[error("{0}")]
    Usage(String),
    /// `--help`: not a failure; the text to print.
    #[error("{0}")]
    Help(String),
}

/// The credentials of every user, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Users {
    by_name: BTreeMap<String, Vec<(SaslMechanism, ScramCredential)>>,
}

fn check_name(name: &str) -> Result<(), UsersError> {
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(UsersError::BadName(name.to_owned()));
    }
    Ok(())
}

impl Users {
    /// Reads a users file.
    pub fn load(path: &Path) -> Result<Users, UsersError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| UsersError::Read { path: path.to_owned(), reason: e.to_string() })?;
        Users::parse(&text, path)
    }

    /// Parses the text of a users file; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Users, UsersError> {
        let mut users = Users::default();
        for (index, line) in text.lines().enumerate() {
            let bad = |reason: String| UsersError::Line { path: path.to_owned(), line: index + 1, reason };
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split(' ').collect();
            let [user, mechanism, iterations, salt, stored, server] = fields[..] else {
                return Err(bad(format!(
                    "expected 6 fields (USER MECHANISM ITERATIONS SALT STORED_KEY SERVER_KEY), found {}",
                    fields.len()
                )));
            };
            check_name(user).map_err(|e| bad(e.to_string()))?;
            let mechanism: SaslMechanism =
                mechanism.parse().map_err(|()| bad(format!("unknown mechanism {mechanism:?}")))?;
            let hash = Hash::of(mechanism)
                .ok_or_else(|| bad(format!("{} is not a SCRAM mechanism", mechanism.name())))?;
            let iterations: u32 =
                iterations.parse().ok().filter(|&n| n >= MIN_ITERATIONS).ok_or_else(|| {
                    bad(format!("bad iterations {iterations:?}: expected an integer of at least 4096"))
                })?;
            let b64 = |what: &str, value: &str| {
                B64.decode(value).map_err(|_| bad(format!("the {what} {value:?} is not base64")))
            };
            let salt = b64("salt", salt)?;
            let key_len = hash.digest(b"").len();
            let (stored_key, server_key) = (b64("stored key", stored)?, b64("server key", server)?);
            if salt.is_empty() || stored_key.len() != key_len || server_key.len() != key_len {
                return Err(bad(format!(
                    "expected a salt and two {key_len}-byte keys for {}",
                    mechanism.name()
                )));
            }
            let credential = ScramCredential { salt, iterations, stored_key, server_key };
            let entry = users.by_name.entry(user.to_owned()).or_default();
            if entry.iter().any(|(m, _)| *m == mechanism) {
                return Err(bad(format!("{user} has a {} credential already", mechanism.name())));
            }
            entry.push((mechanism, credential));
        }
        Ok(users)
    }

    /// The file's text: a header, then one line per user and mechanism, by name.
    pub fn to_text(&self) -> String {
        let mut text = HEADER.to_owned();
        for (name, credentials) in &self.by_name {
            for (mechanism, c) in credentials {
                text.push_str(&format!(
                    "{name} {} {} {} {} {}\n",
                    mechanism.name(),
                    c.iterations,
                    B64.encode(&c.salt),
                    B64.encode(&c.stored_key),
                    B64.encode(&c.server_key)
                ));
            }
        }
        text
    }

    /// Writes the file: a new file beside it renamed over it, readable by its owner only.
    pub fn save(&self, path: &Path) -> Result<(), UsersError> {
        let failed = |e: std::io::Error| UsersError::Write { path: path.to_owned(), reason: e.to_string() };
        let mut temp = path.as_os_str().to_owned();
        temp.push(".tmp");
        let temp = PathBuf::from(temp);
        let mut options = std::fs::File::options();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temp).map_err(failed)?;
        std::io::Write::write_all(&mut file, self.to_text().as_bytes()).map_err(failed)?;
        file.sync_all().map_err(failed)?;
        std::fs::rename(&temp, path).map_err(failed)
    }

    /// Adds `user` with `password`, or replaces its credentials: one per mechanism, each
    /// with a fresh random salt.
    pub fn add(
        &mut self,
        user: &str,
        password: &str,
        mechanisms: &[SaslMechanism],
        iterations: u32,
    ) -> Result<(), UsersError> {
        check_name(user)?;
        if password.is_empty() {
            return Err(UsersError::NoPassword);
        }
        if iterations < MIN_ITERATIONS {
            return Err(UsersError::Iterations(iterations));
        }
        let mut credentials = Vec::new();
        for &mechanism in mechanisms {
            let hash =
                Hash::of(mechanism).ok_or_else(|| UsersError::BadMechanism(mechanism.name().to_owned()))?;
            let mut salt = vec![0u8; SALT_BYTES];
            getrandom::fill(&mut salt).map_err(|e| UsersError::Random(e.to_string()))?;
            credentials
                .push((mechanism, ScramCredential::derive(hash, password.as_bytes(), salt, iterations)));
        }
        self.by_name.insert(user.to_owned(), credentials);
        Ok(())
    }

    /// Removes `user`; false when there was none.
    pub fn remove(&mut self, user: &str) -> bool {
        self.by_name.remove(user).is_some()
    }

    /// Every user with the mechanisms it has credentials for, by name.
    pub fn list(&self) -> impl Iterator<Item = (&str, Vec<SaslMechanism>)> + '_ {
        self.by_name.iter().map(|(name, c)| (name.as_str(), c.iter().map(|(m, _)| *m).collect()))
    }

    /// The number of users.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// True without users.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The SCRAM credential of `user` for `mechanism`.
    pub(crate) fn scram(&self, user: &str, mechanism: SaslMechanism) -> Option<&ScramCredential> {
        self.by_name.get(user)?.iter().find(|(m, _)| *m == mechanism).map(|(_, c)| c)
    }

    /// Whether `password` is `user`'s, checked against the strongest credential it has.
    pub(crate) fn verify_plain(&self, user: &str, password: &str) -> bool {
        let strongest = [SaslMechanism::ScramSha512, SaslMechanism::ScramSha256]
            .into_iter()
            .find_map(|m| Some((Hash::of(m)?, self.scram(user, m)?)));
        match strongest {
            Some((hash, credential)) => credential.matches_password(hash, password.as_bytes()),
            None => false,
        }
    }
}

/// The mechanisms `users add` writes when `--mechanism` is not given.
pub const DEFAULT_MECHANISMS: [SaslMechanism; 2] = [SaslMechanism::ScramSha512, SaslMechanism::ScramSha256];

/// The iterations `users add` uses when `--iterations` is not given.
pub const DEFAULT_USER_ITERATIONS: u32 = DEFAULT_ITERATIONS;

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    fn path() -> &'static Path {
        Path::new("users.txt")
    }

    #[test]
    fn users_round_trip_through_the_text() {
        let mut users = Users::default();
        users.add("alice", "secret", &DEFAULT_MECHANISMS, 4096).expect("adds");
        users.add("bob", "hunter2", &[SaslMechanism::ScramSha256], 5000).expect("adds");
        let text = users.to_text();
        assert!(!text.contains("secret") && !text.contains("hunter2"), "{text}");
        let back = Users::parse(&text, path()).expect("parses");
        assert_eq!(back, users);
        assert!(back.verify_plain("alice", "secret"));
        assert!(!back.verify_plain("alice", "hunter2"));
        assert!(back.verify_plain("bob", "hunter2"));
        assert!(!back.verify_plain("carol", "secret"));
        let listed: Vec<_> = back.list().collect();
        assert_eq!(
            listed,
            vec![("alice", DEFAULT_MECHANISMS.to_vec()), ("bob", vec![SaslMechanism::ScramSha256])]
        );
        assert_eq!(back.scram("bob", SaslMechanism::ScramSha256).map(|c| c.iterations), Some(5000));
    }

    #[test]
    fn each_credential_has_its_own_salt() {
        let mut users = Users::default();
        users.add("alice", "secret", &DEFAULT_MECHANISMS, 4096).expect("adds");
        users.add("bob", "secret", &DEFAULT_MECHANISMS, 4096).expect("adds");
        let a = users.scram("alice", SaslMechanism::ScramSha512).expect("alice");
        let b = users.scram("bob", SaslMechanism::ScramSha512).expect("bob");
        assert_ne!(a.salt, b.salt);
        assert_ne!(a.stored_key, b.stored_key);
    }

    #[test]
    fn adding_again_replaces_and_removing_forgets() {
        let mut users = Users::default();
        users.add("alice", "old", &DEFAULT_MECHANISMS, 4096).expect("adds");
        users.add("alice", "new", &[SaslMechanism::ScramSha512], 4096).expect("replaces");
        assert!(users.verify_plain("alice", "new") && !users.verify_plain("alice", "old"));
        assert_eq!(users.scram("alice", SaslMechanism::ScramSha256), None);
        assert!(users.remove("alice"));
        assert!(!users.remove("alice"));
        assert!(users.is_empty());
    }

    #[rstest]
    #[case::empty_name("", "pw", 4096, UsersError::BadName(String::new()))]
    #[case::space_in_name("a b", "pw", 4096, UsersError::BadName("a b".into()))]
    #[case::no_password("alice", "", 4096, UsersError::NoPassword)]
    #[case::few_iterations("alice", "pw", 4095, UsersError::Iterations(4095))]
    fn bad_additions_are_refused(
        #[case] user: &str,
        #[case] password: &str,
        #[case] iterations: u32,
        #[case] expected: UsersError,
    ) {
        assert_eq!(Users::default().add(user, password, &DEFAULT_MECHANISMS, iterations), Err(expected));
    }

    #[test]
    fn plain_is_no_storage_mechanism() {
        let err = Users::default().add("alice", "pw", &[SaslMechanism::Plain], 4096).expect_err("plain");
        assert_eq!(err, UsersError::BadMechanism("PLAIN".into()));
    }

    #[test]
    fn comments_and_blank_lines_are_skipped() {
        assert_eq!(Users::parse("# nothing\n\n   \n", path()), Ok(Users::default()));
    }

    const KEY32: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

    #[rstest]
    #[case::few_fields("alice SCRAM-SHA-256 4096 c2FsdA==", "expected 6 fields")]
    #[case::unknown_mechanism("alice SCRAM-MD5 4096 c2FsdA== K K", "unknown mechanism")]
    #[case::plain_mechanism("alice PLAIN 4096 c2FsdA== K K", "PLAIN is not a SCRAM mechanism")]
    #[case::few_iterations("alice SCRAM-SHA-256 100 c2FsdA== K K", "bad iterations")]
    #[case::bad_salt("alice SCRAM-SHA-256 4096 *** K K", "the salt \"***\" is not base64")]
    #[case::short_key("alice SCRAM-SHA-256 4096 c2FsdA== AAAA AAAA", "two 32-byte keys")]
    fn bad_lines_name_the_file_and_line(#[case] line: &str, #[case] reason: &str) {
        let text = format!("# header\n{line}\n");
        let err = Users::parse(&text, path()).expect_err("bad line");
        let UsersError::Line { line: 2, .. } = &err else { panic!("{err:?}") };
        let message = err.to_string();
        assert!(message.starts_with("users.txt:2: "), "{message}");
        assert!(message.contains(reason), "{message}");
    }

    #[test]
    fn a_second_line_for_the_same_mechanism_is_refused() {
        let line = format!("alice SCRAM-SHA-256 4096 c2FsdA== {KEY32} {KEY32}\n");
        let err = Users::parse(&format!("{line}{line}"), path()).expect_err("duplicate");
        assert!(matches!(err, UsersError::Line { line: 2, .. }), "{err:?}");
    }
}
