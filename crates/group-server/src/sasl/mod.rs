//! SASL authentication of a connection, without I/O: the mechanisms this node offers
//! (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), their message parsers and the server side of
//! each exchange, and the users file their credentials come from.
//!
//! The connection code (`authenticate`) frames the tokens (SaslAuthenticate requests or,
//! after a v0 SaslHandshake, raw length-prefixed tokens) and hands each one to an
//! `Authenticator`; everything here works on `&[u8]` and returns typed errors, so a
//! fuzzer can drive it directly (see [`fuzz_sasl`]).

mod plain;
mod scram;
mod users;

use std::sync::{Arc, OnceLock};

pub use self::plain::{PlainError, PlainMessage, parse_plain};
pub use self::scram::{
    ClientFinal, ClientFirst, DEFAULT_ITERATIONS, MIN_ITERATIONS, ScramCredential, ScramError,
    parse_client_final, parse_client_first,
};
use self::scram::{Hash, ScramServer, ScramStep};
pub use self::users::{DEFAULT_MECHANISMS, DEFAULT_USER_ITERATIONS, Users, UsersError};
use crate::SaslMechanism;

/// Kafka's answer to a failed PLAIN login (`PlainSaslServer.evaluateResponse`).
pub(crate) const PLAIN_FAILED: &str = "Authentication failed: Invalid username or password";

/// What the server knows to authenticate clients with; shared by every connection.
#[derive(Debug)]
pub(crate) struct SaslSettings {
    /// Offered in this order.
    pub(crate) mechanisms: Vec<SaslMechanism>,
    /// The credentials.
    pub(crate) users: Users,
}

/// One step of an exchange that went wrong: what the client is told, and what the log
/// line says (never a password).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    /// The SASL_AUTHENTICATION_FAILED error message, as Kafka words it.
    pub(crate) message: String,
    /// The user the client claimed to be, if it got that far.
    pub(crate) user: Option<String>,
    /// Why, for the log.
    pub(crate) reason: String,
}

/// What an exchange answers one client token with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// A challenge; the client sends another token.
    Continue(Vec<u8>),
    /// `user` is authenticated; `token` is the last server message (empty for PLAIN).
    Done {
        /// The authenticated user name (the principal is `User:<name>`).
        user: String,
        /// Sent to the client with the success.
        token: Vec<u8>,
    },
}

#[derive(Debug)]
enum Exchange {
    Plain { over: bool },
    Scram(ScramServer),
}

/// The server side of one connection's exchange, for the mechanism its SaslHandshake
/// chose.
#[derive(Debug)]
pub(crate) struct Authenticator {
    settings: Arc<SaslSettings>,
    mechanism: SaslMechanism,
    exchange: Exchange,
}

impl Authenticator {
    /// An exchange of `mechanism`; `Err` with the enabled names when it is not offered
    /// (`SaslServerAuthenticator.handleHandshakeRequest`: UNSUPPORTED_SASL_MECHANISM).
    pub(crate) fn new(
        settings: &Arc<SaslSettings>,
        mechanism: &str,
    ) -> Result<Authenticator, Vec<&'static str>> {
        let offered = || settings.mechanisms.iter().map(|m| m.name()).collect();
        let mechanism: SaslMechanism = mechanism.parse().map_err(|()| offered())?;
        if !settings.mechanisms.contains(&mechanism) {
            return Err(offered());
        }
        let exchange = match Hash::of(mechanism) {
            Some(hash) => Exchange::Scram(ScramServer::new(hash)),
            None => Exchange::Plain { over: false },
        };
        Ok(Authenticator { settings: Arc::clone(settings), mechanism, exchange })
    }

    /// The mechanism of this exchange.
    pub(crate) fn mechanism(&self) -> SaslMechanism {
        self.mechanism
    }

    /// Answers one client token.
    pub(crate) fn step(&mut self, token: &[u8]) -> Result<Step, Failure> {
        let users = &self.settings.users;
        match &mut self.exchange {
            Exchange::Plain { over } => {
                if std::mem::replace(over, true) {
                    return Err(Failure {
                        message: PLAIN_FAILED.into(),
                        user: None,
                        reason: "a second PLAIN message".into(),
                    });
                }
                let message = parse_plain(token).map_err(|e| Failure {
                    // PlainSaslServer words each parse failure "Authentication failed: ...".
                    message: format!("Authentication failed: {e}"),
                    user: None,
                    reason: format!("bad PLAIN message: {e}"),
                })?;
                if users.verify_plain(message.user, message.password) {
                    Ok(Step::Done { user: message.user.to_owned(), token: Vec::new() })
                } else {
                    let known = users.list().any(|(name, _)| name == message.user);
                    Err(Failure {
                        message: PLAIN_FAILED.into(),
                        user: Some(message.user.to_owned()),
                        reason: if known { "wrong password".into() } else { "unknown user".into() },
                    })
                }
            }
            Exchange::Scram(server) => {
                let mechanism = self.mechanism;
                let user = server
                    .user()
                    .map(str::to_owned)
                    .or_else(|| scram::parse_client_first(token).ok().map(|first| first.user));
                let step =
                    server.step(token, |name| users.scram(name, mechanism).cloned(), scram::server_nonce);
                match step {
                    Ok(ScramStep::Challenge(challenge)) => Ok(Step::Continue(challenge)),
                    Ok(ScramStep::Done { user, server_final }) => {
                        Ok(Step::Done { user, token: server_final })
                    }
                    Err(e) => Err(Failure {
                        // SaslServerAuthenticator.handleSaslToken's words for a SaslException.
                        message: format!(
                            "Authentication failed during authentication due to invalid credentials with \
                             SASL mechanism {}",
                            mechanism.name()
                        ),
                        user,
                        reason: e.to_string(),
                    }),
                }
            }
        }
    }
}

/// Drives one server-side exchange from arbitrary client bytes, for fuzzing: the first
/// byte picks the mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 by its value mod 3),
/// the rest is a sequence of tokens, each a big-endian `u16` length and that many bytes.
/// The users are `alice` (password `secret`, all mechanisms, 4096 iterations).
#[doc(hidden)]
pub fn fuzz_sasl(bytes: &[u8]) {
    static SETTINGS: OnceLock<Arc<SaslSettings>> = OnceLock::new();
    let settings = SETTINGS.get_or_init(|| {
        let mut users = Users::default();
        // A fixed, valid user: this cannot fail.
        let _ = users.add("alice", "secret", &DEFAULT_MECHANISMS, MIN_ITERATIONS);
        Arc::new(SaslSettings { mechanisms: SaslMechanism::ALL.to_vec(), users })
    });
    let Some((&pick, mut rest)) = bytes.split_first() else { return };
    let mechanism = SaslMechanism::ALL[usize::from(pick) % SaslMechanism::ALL.len()];
    let Ok(mut auth) = Authenticator::new(settings, mechanism.name()) else { return };
    while let [hi, lo, tail @ ..] = rest {
        let len = usize::from(u16::from_be_bytes([*hi, *lo])).min(tail.len());
        let (token, next) = tail.split_at(len);
        rest = next;
        match auth.step(token) {
            Ok(Step::Continue(_)) => {}
            Ok(Step::Done { .. }) | Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(mechanisms: &[SaslMechanism]) -> Arc<SaslSettings> {
        let mut users = Users::default();
        users.add("alice", "secret", &DEFAULT_MECHANISMS, MIN_ITERATIONS).expect("adds");
        Arc::new(SaslSettings { mechanisms: mechanisms.to_vec(), users })
    }

    #[test]
    fn an_unoffered_mechanism_gets_the_offered_list() {
        let settings = settings(&[SaslMechanism::ScramSha512, SaslMechanism::Plain]);
        assert_eq!(Authenticator::new(&settings, "GSSAPI").err(), Some(vec!["SCRAM-SHA-512", "PLAIN"]));
        assert_eq!(
            Authenticator::new(&settings, "SCRAM-SHA-256").err(),
            Some(vec!["SCRAM-SHA-512", "PLAIN"])
        );
        assert!(Authenticator::new(&settings, "PLAIN").is_ok());
    }

    #[test]
    fn plain_logs_in_once() {
        let settings = settings(&[SaslMechanism::Plain]);
        let mut auth = Authenticator::new(&settings, "PLAIN").expect("offered");
        assert_eq!(auth.step(b"\0alice\0secret"), Ok(Step::Done { user: "alice".into(), token: Vec::new() }));
        assert!(auth.step(b"\0alice\0secret").is_err());
    }

    #[test]
    fn plain_failures_use_kafkas_message_and_never_the_password() {
        let settings = settings(&[SaslMechanism::Plain]);
        for (token, reason) in
            [(&b"\0alice\0Xyzzy42"[..], "wrong password"), (b"\0mallory\0Xyzzy42", "unknown user")]
        {
            let failure =
                Authenticator::new(&settings, "PLAIN").expect("offered").step(token).expect_err("fails");
            assert_eq!(failure.message, PLAIN_FAILED);
            assert_eq!(failure.reason, reason);
            assert!(!format!("{failure:?}").contains("Xyzzy42"), "{failure:?}");
        }
    }

    #[test]
    fn a_scram_failure_names_the_user_and_mechanism() {
        let settings = settings(&[SaslMechanism::ScramSha512]);
        let mut auth = Authenticator::new(&settings, "SCRAM-SHA-512").expect("offered");
        let failure = auth.step(b"n,,n=mallory,r=abc").expect_err("unknown user");
        assert_eq!(failure.user.as_deref(), Some("mallory"));
        assert_eq!(
            failure.message,
            "Authentication failed during authentication due to invalid credentials with SASL mechanism \
             SCRAM-SHA-512"
        );
    }

    #[test]
    fn fuzz_entry_survives_odd_input() {
        for bytes in
            [&b""[..], b"\x00", b"\x01\xff\xff", b"\x02\x00\x05n,,n=", b"\x00\x00\x0d\x00alice\x00secret"]
        {
            fuzz_sasl(bytes);
        }
        // The last input is a valid PLAIN login: the entry must reach the success path.
        let settings = settings(&[SaslMechanism::Plain]);
        let mut auth = Authenticator::new(&settings, "PLAIN").expect("offered");
        assert!(matches!(auth.step(b"\x00alice\x00secret"), Ok(Step::Done { .. })));
    }
}
