//! SCRAM against the RFC 7677 vector (SHA-256), a SHA-512 vector computed with
//! Python's hashlib/hmac, and the ways a client can get it wrong.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use rstest::rstest;

use super::*;

/// A SCRAM-SHA-256 exchange: RFC 7677 section 3 (user "user", password "pencil").
const RFC7677: Vector = Vector {
    hash: Hash::Sha256,
    salt: "W22ZaJ0SNY7soEsUEjb6gQ==",
    server_nonce: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
    client_first: "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
    server_first: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
    client_final: "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
                   p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
    server_final: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
};

/// The same exchange with SHA-512, computed once with Python's `hashlib.pbkdf2_hmac`
/// and `hmac` (salt and server nonce chosen for the purpose).
const SHA512: Vector = Vector {
    hash: Hash::Sha512,
    salt: "QSXCR+Q6sek8bf92",
    server_nonce: "3rfcNHYJY1ZVvWVs7j",
    client_first: "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
    server_first: "r=rOprNGfwEbeRWgbNEkqO3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
    client_final: "c=biws,r=rOprNGfwEbeRWgbNEkqO3rfcNHYJY1ZVvWVs7j,\
                   p=zK0GyUU4eiPbsDgyUwFagtyp/zF/V83jraxOLQaH1XgAM2FVITQxBKmhgGpK17k49UtWj5xpeqiVM2Ty3cGCBA==",
    server_final: "v=8VgYFbxiFQ4EiaPBxycccAcyU+NQUbcRg9jwYx3pj5Hy1Yhl044ENC6evNQCgoz/ZU2cnnYVHXqdF4RJHQU2rw==",
};

struct Vector {
    hash: Hash,
    salt: &'static str,
    server_nonce: &'static str,
    client_first: &'static str,
    server_first: &'static str,
    client_final: &'static str,
    server_final: &'static str,
}

impl Vector {
    fn credential(&self, password: &str) -> ScramCredential {
        ScramCredential::derive(self.hash, password.as_bytes(), B64.decode(self.salt).expect("salt"), 4096)
    }

    /// A server past the first message of this vector, for `password`.
    fn after_first(&self, password: &str) -> ScramServer {
        let mut server = ScramServer::new(self.hash);
        let step = server
            .step(
                self.client_first.as_bytes(),
                |_| Some(self.credential(password)),
                || Ok(self.server_nonce.to_owned()),
            )
            .expect("first message");
        assert_eq!(step, ScramStep::Challenge(self.server_first.as_bytes().to_vec()));
        server
    }
}

fn no_nonce() -> Result<String, ScramError> {
    Ok("unused".into())
}

#[rstest]
#[case::rfc7677_sha256(&RFC7677)]
#[case::python_sha512(&SHA512)]
fn the_vector_exchange_succeeds(#[case] vector: &Vector) {
    let mut server = vector.after_first("pencil");
    assert_eq!(server.user(), Some("user"));
    let step = server.step(vector.client_final.as_bytes(), |_| None, no_nonce).expect("final message");
    assert_eq!(
        step,
        ScramStep::Done { user: "user".into(), server_final: vector.server_final.as_bytes().to_vec() }
    );
}

#[test]
fn the_sha512_credential_is_the_one_python_derived() {
    let credential = SHA512.credential("pencil");
    assert_eq!(
        B64.encode(&credential.stored_key),
        "Lm7w6zPGAx+UoahlEm1whIN7PS1KGU+9+V5PyudK6c/mWVVtkXSCpVPmUKQLYDKR7v0uSkxrBzPm7HuSwZ/ytw=="
    );
    assert_eq!(
        B64.encode(&credential.server_key),
        "b/Ph5kGCpfdw2MyLh0C8l10iiFENloZLKPiJIHv57J3BRD9++4RvoYjTKhOehyHgJS/nsxnNB17UKgNU7nRy6g=="
    );
    assert!(credential.matches_password(Hash::Sha512, b"pencil"));
    assert!(!credential.matches_password(Hash::Sha512, b"pencil2"));
}

#[rstest]
#[case::rfc7677_sha256(&RFC7677)]
#[case::python_sha512(&SHA512)]
fn a_wrong_password_fails_the_proof(#[case] vector: &Vector) {
    let mut server = vector.after_first("not pencil");
    let err = server.step(vector.client_final.as_bytes(), |_| None, no_nonce).expect_err("wrong password");
    assert_eq!(err, ScramError::BadProof);
}

#[test]
fn a_replayed_final_message_is_refused() {
    let mut server = RFC7677.after_first("pencil");
    assert!(server.step(RFC7677.client_final.as_bytes(), |_| None, no_nonce).is_ok());
    assert_eq!(server.step(RFC7677.client_final.as_bytes(), |_| None, no_nonce), Err(ScramError::Over));
    // Nor does another exchange accept it: its server nonce differs.
    let mut other = ScramServer::new(Hash::Sha256);
    other
        .step(RFC7677.client_first.as_bytes(), |_| Some(RFC7677.credential("pencil")), || Ok("other".into()))
        .expect("first");
    assert_eq!(
        other.step(RFC7677.client_final.as_bytes(), |_| None, no_nonce),
        Err(ScramError::NonceMismatch)
    );
}

#[test]
fn a_failed_exchange_stays_failed() {
    let mut server = RFC7677.after_first("not pencil");
    assert!(server.step(RFC7677.client_final.as_bytes(), |_| None, no_nonce).is_err());
    assert_eq!(server.step(RFC7677.client_final.as_bytes(), |_| None, no_nonce), Err(ScramError::Over));
}

#[test]
fn an_unknown_user_fails_at_the_first_message() {
    let mut server = ScramServer::new(Hash::Sha256);
    assert_eq!(
        server.step(RFC7677.client_first.as_bytes(), |_| None, no_nonce),
        Err(ScramError::UnknownUser)
    );
}

#[test]
fn a_final_message_with_another_binding_is_refused() {
    let mut server = RFC7677.after_first("pencil");
    // c=eSws is base64 of "y,,".
    let forged = RFC7677.client_final.replacen("c=biws", "c=eSws", 1);
    assert_eq!(server.step(forged.as_bytes(), |_| None, no_nonce), Err(ScramError::BindingMismatch));
}

#[test]
fn an_authzid_other_than_the_user_is_refused() {
    let mut server = ScramServer::new(Hash::Sha256);
    let first = b"n,a=admin,n=user,r=abc";
    let lookup = |_: &str| Some(RFC7677.credential("pencil"));
    assert_eq!(server.step(first, lookup, no_nonce), Err(ScramError::AuthzidMismatch));
    let mut same = ScramServer::new(Hash::Sha256);
    assert!(matches!(same.step(b"n,a=user,n=user,r=abc", lookup, no_nonce), Ok(ScramStep::Challenge(_))));
}

#[rstest]
#[case::plain("n,,n=user,r=abc", "n,,", None, "user", "abc")]
#[case::authzid("n,a=us=3Der,n=user,r=abc", "n,a=us=3Der,", Some("us=er"), "user", "abc")]
#[case::escapes("n,,n=a=2Cb=3Dc,r=x", "n,,", None, "a,b=c", "x")]
#[case::extension("n,,n=user,r=abc,tokenauth=true", "n,,", None, "user", "abc")]
fn client_first_messages_parse(
    #[case] message: &str,
    #[case] gs2: &str,
    #[case] authzid: Option<&str>,
    #[case] user: &str,
    #[case] nonce: &str,
) {
    let first = parse_client_first(message.as_bytes()).expect("parses");
    assert_eq!(first.gs2_header, gs2);
    assert_eq!(first.authzid.as_deref(), authzid);
    assert_eq!(first.user, user);
    assert_eq!(first.nonce, nonce);
    assert_eq!(first.bare, message[gs2.len()..]);
}

#[rstest]
#[case::empty(b"".as_slice(), ScramError::Missing("n,"))]
#[case::binding_p(b"p=tls-unique,,n=user,r=abc".as_slice(), ScramError::ChannelBinding("p=tls-unique".into()))]
#[case::binding_y(b"y,,n=user,r=abc".as_slice(), ScramError::ChannelBinding("y".into()))]
#[case::no_bare(b"n,".as_slice(), ScramError::Missing(","))]
#[case::bad_authzid(b"n,x=a,n=user,r=abc".as_slice(), ScramError::Missing("a="))]
#[case::mandatory(b"n,,m=ext,n=user,r=abc".as_slice(), ScramError::MandatoryExtension)]
#[case::no_user(b"n,,r=abc".as_slice(), ScramError::Missing("n="))]
#[case::empty_user(b"n,,n=,r=abc".as_slice(), ScramError::BadName)]
#[case::bad_escape(b"n,,n=us=er,r=abc".as_slice(), ScramError::BadName)]
#[case::cut_escape(b"n,,n=user=2,r=abc".as_slice(), ScramError::BadName)]
#[case::no_nonce(b"n,,n=user".as_slice(), ScramError::Missing("r="))]
#[case::empty_nonce(b"n,,n=user,r=".as_slice(), ScramError::BadNonce)]
#[case::space_nonce(b"n,,n=user,r=a b".as_slice(), ScramError::BadNonce)]
#[case::not_utf8(b"n,,n=\xff,r=abc".as_slice(), ScramError::NotUtf8)]
fn bad_client_first_messages_are_refused(#[case] message: &[u8], #[case] expected: ScramError) {
    assert_eq!(parse_client_first(message), Err(expected));
}

#[rstest]
#[case::no_proof(b"c=biws,r=abc".as_slice(), ScramError::Missing("p="))]
#[case::no_binding(b"r=abc,p=AAAA".as_slice(), ScramError::Missing("c="))]
#[case::bad_binding(b"c=!!,r=abc,p=AAAA".as_slice(), ScramError::BadBase64("c="))]
#[case::no_nonce(b"c=biws,p=AAAA".as_slice(), ScramError::Missing("r="))]
#[case::bad_proof(b"c=biws,r=abc,p=***".as_slice(), ScramError::BadBase64("p="))]
#[case::not_utf8(b"c=biws,r=\xfe,p=AAAA".as_slice(), ScramError::NotUtf8)]
fn bad_client_final_messages_are_refused(#[case] message: &[u8], #[case] expected: ScramError) {
    assert_eq!(parse_client_final(message), Err(expected));
}

#[test]
fn server_nonces_are_fresh_and_printable() {
    let (a, b) = (server_nonce().expect("random"), server_nonce().expect("random"));
    assert_ne!(a, b);
    assert!(check_nonce(&a).is_ok(), "{a}");
}
