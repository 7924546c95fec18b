//! SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), the server side: the
//! message parsers (pure functions over the client's bytes, typed errors), the key
//! derivation shared with the users file and PLAIN, and the two-step exchange.
//!
//! Only channel binding `n` is accepted (the client neither supports nor uses it), as
//! Kafka's `ScramMessages.ClientFirstMessage` does; an authorization id, if given, must
//! be the user name (`ScramSaslServer.evaluateResponse`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use hmac::{KeyInit, Mac};
use sha2::Digest;
use subtle::ConstantTimeEq;

use crate::SaslMechanism;

/// The fewest PBKDF2 iterations a credential may have (Kafka's `ScramMechanism`
/// minimum for both hashes).
pub const MIN_ITERATIONS: u32 = 4096;

/// The iterations `group-server users add` uses unless told otherwise.
pub const DEFAULT_ITERATIONS: u32 = 8192;

/// Why a SCRAM message was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScramError {
    /// Not UTF-8.
    #[error("the message is not UTF-8")]
    NotUtf8,
    /// A channel-binding flag other than `n` (this server offers no `-PLUS` mechanism).
    #[error("channel binding {0:?} is not supported (only \"n\")")]
    ChannelBinding(String),
    /// An attribute missing or out of place.
    #[error("expected the attribute {0:?}")]
    Missing(&'static str),
    /// A mandatory extension (`m=`), which RFC 5802 says to refuse when unknown.
    #[error("mandatory extensions are not supported")]
    MandatoryExtension,
    /// A user name with a bad `=` escape, an empty one, or one with a control character.
    #[error("bad user name")]
    BadName,
    /// A nonce that is empty or holds a character outside printable ASCII (or a comma).
    #[error("bad nonce")]
    BadNonce,
    /// A value that is not base64.
    #[error("attribute {0:?} is not base64")]
    BadBase64(&'static str),
    /// The final message's nonce is not the one the server sent.
    #[error("the nonce does not match the server's")]
    NonceMismatch,
    /// The final message's channel binding is not the first message's GS2 header.
    #[error("the channel binding does not match the first message")]
    BindingMismatch,
    /// The authorization id is another user than the authenticating one.
    #[error("the authorization id is not the user name")]
    AuthzidMismatch,
    /// The proof is wrong: a wrong password.
    #[error("invalid proof")]
    BadProof,
    /// No such user, or no credential of this mechanism for it.
    #[error("unknown user")]
    UnknownUser,
    /// A message after the exchange ended (a replayed final message).
    #[error("the exchange is already over")]
    Over,
    /// The operating system's random source failed: no nonce could be made.
    #[error("no random nonce: {0}")]
    Random(String),
}

/// The hash a SCRAM mechanism is built on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Hash {
    Sha256,
    Sha512,
}

impl Hash {
    /// The hash of a SCRAM mechanism; `None` for PLAIN.
    pub(crate) fn of(mechanism: SaslMechanism) -> Option<Hash> {
        match mechanism {
            SaslMechanism::ScramSha256 => Some(Hash::Sha256),
            SaslMechanism::ScramSha512 => Some(Hash::Sha512),
            _ => None,
        }
    }

    pub(crate) fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        fn run<M: Mac + KeyInit>(key: &[u8], data: &[u8]) -> Vec<u8> {
            // HMAC takes keys of any length: this never fails.
            match <M as KeyInit>::new_from_slice(key) {
                Ok(mut mac) => {
                    mac.update(data);
                    mac.finalize().into_bytes().to_vec()
                }
                Err(_) => Vec::new(),
            }
        }
        match self {
            Hash::Sha256 => run::<hmac::Hmac<sha2::Sha256>>(key, data),
            Hash::Sha512 => run::<hmac::Hmac<sha2::Sha512>>(key, data),
        }
    }

    pub(crate) fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            Hash::Sha256 => sha2::Sha256::digest(data).to_vec(),
            Hash::Sha512 => sha2::Sha512::digest(data).to_vec(),
        }
    }

    /// RFC 5802 `Hi(password, salt, i)`: PBKDF2 with HMAC of this hash.
    pub(crate) fn salted_password(self, password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        match self {
            Hash::Sha256 => {
                let mut out = [0u8; 32];
                pbkdf2::pbkdf2_hmac::<sha2::Sha256>(password, salt, iterations, &mut out);
                out.to_vec()
            }
            Hash::Sha512 => {
                let mut out = [0u8; 64];
                pbkdf2::pbkdf2_hmac::<sha2::Sha512>(password, salt, iterations, &mut out);
                out.to_vec()
            }
        }
    }
}

/// What a users file keeps for one user and mechanism: never the password, only what
/// RFC 5802 section 3 says the server stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramCredential {
    /// The salt, random per credential.
    pub salt: Vec<u8>,
    /// PBKDF2 iterations, at least [`MIN_ITERATIONS`].
    pub iterations: u32,
    /// `H(HMAC(SaltedPassword, "Client Key"))`.
    pub stored_key: Vec<u8>,
    /// `HMAC(SaltedPassword, "Server Key")`.
    pub server_key: Vec<u8>,
}

impl ScramCredential {
    /// The credential of `password` under `salt` and `iterations`.
    pub(crate) fn derive(hash: Hash, password: &[u8], salt: Vec<u8>, iterations: u32) -> ScramCredential {
        let salted = hash.salted_password(password, &salt, iterations);
        let client_key = hash.hmac(&salted, b"Client Key");
        ScramCredential {
            stored_key: hash.digest(&client_key),
            server_key: hash.hmac(&salted, b"Server Key"),
            salt,
            iterations,
        }
    }

    /// Whether `password` is the one this credential was derived from, compared in
    /// constant time (PLAIN is checked this way: `PlainSaslServer` with a SCRAM store).
    pub(crate) fn matches_password(&self, hash: Hash, password: &[u8]) -> bool {
        let salted = hash.salted_password(password, &self.salt, self.iterations);
        let client_key = hash.hmac(&salted, b"Client Key");
        bool::from(hash.digest(&client_key).ct_eq(&self.stored_key))
    }
}

/// A parsed client-first-message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[doc(hidden)]
pub struct ClientFirst {
    /// The GS2 header (`n,,` or `n,a=NAME,`), which the final message repeats in `c=`.
    pub gs2_header: String,
    /// The authorization id, if the header names one (unescaped).
    pub authzid: Option<String>,
    /// The user name, `=2C` and `=3D` unescaped.
    pub user: String,
    /// The client's nonce.
    pub nonce: String,
    /// The message without its GS2 header, part of the AuthMessage.
    pub bare: String,
}

/// A parsed client-final-message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[doc(hidden)]
pub struct ClientFinal {
    /// The decoded `c=` attribute: the GS2 header (no channel-binding data with `n`).
    pub channel_binding: Vec<u8>,
    /// Client nonce and server nonce.
    pub nonce: String,
    /// The message up to `,p=`, part of the AuthMessage.
    pub without_proof: String,
    /// The decoded proof.
    pub proof: Vec<u8>,
}

/// RFC 5802 `saslname`: `,` and `=` arrive as `=2C` and `=3D`; no other `=` is allowed.
fn unescape_name(raw: &str) -> Result<String, ScramError> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find('=') {
        out.push_str(&rest[..at]);
        match rest.get(at..at + 3) {
            Some("=2C") => out.push(','),
            Some("=3D") => out.push('='),
            _ => return Err(ScramError::BadName),
        }
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    if out.is_empty() || out.chars().any(char::is_control) {
        return Err(ScramError::BadName);
    }
    Ok(out)
}

fn check_nonce(nonce: &str) -> Result<(), ScramError> {
    // RFC 5802 `printable`: %x21-2B / %x2D-7E.
    if nonce.is_empty() || !nonce.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b',') {
        return Err(ScramError::BadNonce);
    }
    Ok(())
}

/// The value of `name=value`, or the error naming the attribute.
fn attribute<'a>(part: Option<&'a str>, name: &'static str) -> Result<&'a str, ScramError> {
    part.and_then(|p| p.strip_prefix(name)).ok_or(ScramError::Missing(name))
}

/// Parses a client-first-message: `n,[a=AUTHZID],n=USER,r=NONCE[,extensions]`.
#[doc(hidden)]
pub fn parse_client_first(message: &[u8]) -> Result<ClientFirst, ScramError> {
    let text = std::str::from_utf8(message).map_err(|_| ScramError::NotUtf8)?;
    let (flag, rest) = text.split_once(',').ok_or(ScramError::Missing("n,"))?;
    if flag != "n" {
        return Err(ScramError::ChannelBinding(flag.to_owned()));
    }
    let (authz, bare) = rest.split_once(',').ok_or(ScramError::Missing(","))?;
    let authzid = match authz {
        "" => None,
        a => Some(unescape_name(a.strip_prefix("a=").ok_or(ScramError::Missing("a="))?)?),
    };
    let gs2_header = format!("n,{authz},");
    let mut parts = bare.split(',');
    let mut first = parts.next();
    if first.is_some_and(|p| p.starts_with("m=")) {
        return Err(ScramError::MandatoryExtension);
    }
    let user = unescape_name(attribute(first.take(), "n=")?)?;
    let nonce = attribute(parts.next(), "r=")?;
    check_nonce(nonce)?;
    // Extensions (Kafka's `tokenauth=true`, KIP-48) are not used by this server: a
    // delegation-token login then fails as an unknown user, as it should.
    Ok(ClientFirst { gs2_header, authzid, user, nonce: nonce.to_owned(), bare: bare.to_owned() })
}

/// Parses a client-final-message: `c=BINDING,r=NONCE[,extensions],p=PROOF`.
#[doc(hidden)]
pub fn parse_client_final(message: &[u8]) -> Result<ClientFinal, ScramError> {
    let text = std::str::from_utf8(message).map_err(|_| ScramError::NotUtf8)?;
    let (without_proof, proof) = text.rsplit_once(",p=").ok_or(ScramError::Missing("p="))?;
    let mut parts = without_proof.split(',');
    let binding = attribute(parts.next(), "c=")?;
    let channel_binding = B64.decode(binding).map_err(|_| ScramError::BadBase64("c="))?;
    let nonce = attribute(parts.next(), "r=")?;
    check_nonce(nonce)?;
    let proof = B64.decode(proof).map_err(|_| ScramError::BadBase64("p="))?;
    Ok(ClientFinal {
        channel_binding,
        nonce: nonce.to_owned(),
        without_proof: without_proof.to_owned(),
        proof,
    })
}

/// What the server keeps between its first message and the client's final one.
#[derive(Debug)]
struct Pending {
    first: ClientFirst,
    server_first: String,
    nonce: String,
    credential: ScramCredential,
}

/// Where one server-side SCRAM exchange is.
#[derive(Debug)]
enum Stage {
    /// Waiting for the client-first-message.
    First,
    /// Server-first sent; waiting for the client-final-message.
    Final(Box<Pending>),
    /// Over (success or failure): any further message is refused.
    Over,
}

/// The server side of one SCRAM exchange.
#[derive(Debug)]
pub(crate) struct ScramServer {
    hash: Hash,
    stage: Stage,
}

/// What the server answers a SCRAM message with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScramStep {
    /// The server-first-message; the exchange goes on.
    Challenge(Vec<u8>),
    /// The server-final-message (`v=`): `user` is authenticated.
    Done { user: String, server_final: Vec<u8> },
}

impl ScramServer {
    pub(crate) fn new(hash: Hash) -> ScramServer {
        ScramServer { hash, stage: Stage::First }
    }

    /// The user the exchange is about, once the first message named one (for log lines).
    pub(crate) fn user(&self) -> Option<&str> {
        match &self.stage {
            Stage::Final(pending) => Some(&pending.first.user),
            _ => None,
        }
    }

    /// Answers one client message; `lookup` finds the user's credential, `nonce` makes
    /// the server's part of the nonce (random in the server, fixed in tests).
    pub(crate) fn step(
        &mut self,
        message: &[u8],
        lookup: impl FnOnce(&str) -> Option<ScramCredential>,
        nonce: impl FnOnce() -> Result<String, ScramError>,
    ) -> Result<ScramStep, ScramError> {
        match std::mem::replace(&mut self.stage, Stage::Over) {
            Stage::First => {
                let first = parse_client_first(message)?;
                if first.authzid.as_ref().is_some_and(|a| *a != first.user) {
                    return Err(ScramError::AuthzidMismatch);
                }
                let credential = lookup(&first.user).ok_or(ScramError::UnknownUser)?;
                let nonce = format!("{}{}", first.nonce, nonce()?);
                let server_first =
                    format!("r={nonce},s={},i={}", B64.encode(&credential.salt), credential.iterations);
                let challenge = server_first.clone().into_bytes();
                self.stage = Stage::Final(Box::new(Pending { first, server_first, nonce, credential }));
                Ok(ScramStep::Challenge(challenge))
            }
            Stage::Final(pending) => {
                let Pending { first, server_first, nonce, credential } = *pending;
                let fin = parse_client_final(message)?;
                if fin.channel_binding != first.gs2_header.as_bytes() {
                    return Err(ScramError::BindingMismatch);
                }
                if fin.nonce != nonce {
                    return Err(ScramError::NonceMismatch);
                }
                let auth_message = format!("{},{server_first},{}", first.bare, fin.without_proof);
                let signature = self.hash.hmac(&credential.stored_key, auth_message.as_bytes());
                if fin.proof.len() != signature.len() {
                    return Err(ScramError::BadProof);
                }
                let client_key: Vec<u8> = fin.proof.iter().zip(&signature).map(|(p, s)| p ^ s).collect();
                if !bool::from(self.hash.digest(&client_key).ct_eq(&credential.stored_key)) {
                    return Err(ScramError::BadProof);
                }
                let server_signature = self.hash.hmac(&credential.server_key, auth_message.as_bytes());
                let server_final = format!("v={}", B64.encode(server_signature)).into_bytes();
                Ok(ScramStep::Done { user: first.user, server_final })
            }
            Stage::Over => Err(ScramError::Over),
        }
    }
}

/// A fresh server nonce: 24 random bytes, base64 (printable, no comma).
pub(crate) fn server_nonce() -> Result<String, ScramError> {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).map_err(|e| ScramError::Random(e.to_string()))?;
    Ok(B64.encode(bytes))
}

#[cfg(test)]
#[path = "scram_tests.rs"]
mod tests;
