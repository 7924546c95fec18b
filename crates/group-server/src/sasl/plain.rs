//! SASL PLAIN (RFC 4616): the message parser, a pure function over the client's bytes.
//!
//! The message is `[authzid] NUL authcid NUL passwd`, UTF-8. As in Kafka's
//! `PlainSaslServer.evaluateResponse`, the user name and password must not be empty
//! and an authorization id, if given, must be the user name.

/// Why a PLAIN message was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlainError {
    /// Not three fields separated by two NUL bytes.
    #[error("expected [authzid] NUL user NUL password")]
    Fields,
    /// A field that is not UTF-8.
    #[error("the message is not UTF-8")]
    NotUtf8,
    /// An empty user name.
    #[error("username not specified")]
    NoUser,
    /// An empty password.
    #[error("password not specified")]
    NoPassword,
    /// An authorization id other than the user name.
    #[error("client requested an authorization id that is different from username")]
    AuthzidMismatch,
}

/// A parsed PLAIN message.
#[derive(Clone, PartialEq, Eq)]
#[doc(hidden)]
pub struct PlainMessage<'a> {
    /// The user name (authentication id).
    pub user: &'a str,
    /// The password.
    pub password: &'a str,
}

impl std::fmt::Debug for PlainMessage<'_> {
    /// Never shows the password (it would end up in a log line).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainMessage").field("user", &self.user).finish_non_exhaustive()
    }
}

/// Parses a PLAIN message.
#[doc(hidden)]
pub fn parse_plain(message: &[u8]) -> Result<PlainMessage<'_>, PlainError> {
    let mut fields = message.splitn(3, |&b| b == 0);
    let (Some(authzid), Some(user), Some(password)) = (fields.next(), fields.next(), fields.next()) else {
        return Err(PlainError::Fields);
    };
    if password.contains(&0) {
        return Err(PlainError::Fields);
    }
    let text = |bytes| std::str::from_utf8(bytes).map_err(|_| PlainError::NotUtf8);
    let (authzid, user, password) = (text(authzid)?, text(user)?, text(password)?);
    if user.is_empty() {
        return Err(PlainError::NoUser);
    }
    if password.is_empty() {
        return Err(PlainError::NoPassword);
    }
    if !authzid.is_empty() && authzid != user {
        return Err(PlainError::AuthzidMismatch);
    }
    Ok(PlainMessage { user, password })
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::no_authzid(b"\0alice\0secret".as_slice(), "alice", "secret")]
    #[case::same_authzid(b"alice\0alice\0secret".as_slice(), "alice", "secret")]
    #[case::utf8(b"\0j\xc3\xb6rg\0p\xc3\xa4ss word".as_slice(), "j\u{f6}rg", "p\u{e4}ss word")]
    fn good_messages_parse(#[case] message: &[u8], #[case] user: &str, #[case] password: &str) {
        assert_eq!(parse_plain(message), Ok(PlainMessage { user, password }));
    }

    #[rstest]
    #[case::empty(b"".as_slice(), PlainError::Fields)]
    #[case::one_nul(b"alice\0secret".as_slice(), PlainError::Fields)]
    #[case::no_nul(b"alicesecret".as_slice(), PlainError::Fields)]
    #[case::three_nuls(b"\0alice\0sec\0ret".as_slice(), PlainError::Fields)]
    #[case::empty_user(b"\0\0secret".as_slice(), PlainError::NoUser)]
    #[case::empty_password(b"\0alice\0".as_slice(), PlainError::NoPassword)]
    #[case::other_authzid(b"admin\0alice\0secret".as_slice(), PlainError::AuthzidMismatch)]
    #[case::bad_utf8_user(b"\0al\xffice\0secret".as_slice(), PlainError::NotUtf8)]
    #[case::bad_utf8_password(b"\0alice\0\xc3".as_slice(), PlainError::NotUtf8)]
    #[case::bad_utf8_authzid(b"\xfe\0alice\0secret".as_slice(), PlainError::NotUtf8)]
    fn bad_messages_are_refused(#[case] message: &[u8], #[case] expected: PlainError) {
        assert_eq!(parse_plain(message), Err(expected));
    }

    #[test]
    fn debug_output_hides_the_password() {
        let message = parse_plain(b"\0alice\0hunter2").expect("parses");
        assert!(!format!("{message:?}").contains("hunter2"));
    }
}
