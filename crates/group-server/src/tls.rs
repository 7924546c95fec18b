//! TLS on the listener (Kafka's SSL and SASL_SSL security protocols), with rustls:
//! the acceptor built from the PEM files of a [`TlsConfig`], TLS 1.2 and 1.3 only,
//! client certificates required when a client CA is configured, and the principal a
//! client certificate stands for.
//!
//! The principal is `User:` and the certificate's subject as Kafka's
//! `DefaultKafkaPrincipalBuilder` forms it without `ssl.principal.mapping.rules`: the
//! distinguished name as Java's `X500Principal.getName()` gives it (RFC 2253: the
//! relative names last-first, no spaces, the RFC 2253 keywords `CN`, `C`, `L`, `ST`,
//! `O`, `OU`, `STREET`, `DC` and `UID`, other attributes as `OID=#hex` of their DER).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio_rustls::TlsAcceptor;
use x509_parser::asn1_rs::ToDer;
use x509_parser::prelude::{FromDer, X509Certificate};

use crate::{ServerError, TlsConfig};

/// Why the TLS acceptor could not be built from its files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A PEM file could not be read or holds a bad block.
    #[error("cannot read {what} from {}: {source}", path.display())]
    Pem {
        /// What was looked for: certificates or a private key.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What the PEM reader said.
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// A certificate file holds no CERTIFICATE block.
    #[error("cannot read certificates from {}: no CERTIFICATE block in the file", path.display())]
    NoCertificate {
        /// The file.
        path: PathBuf,
    },
    /// rustls refused the protocol versions asked for.
    #[error("{0}")]
    Versions(#[source] rustls::Error),
    /// A client CA certificate is not one rustls accepts as a root.
    #[error("bad client CA certificate in {}: {source}", path.display())]
    ClientCa {
        /// The `--ssl-client-ca` file.
        path: PathBuf,
        /// Why rustls refused it.
        #[source]
        source: rustls::Error,
    },
    /// The client certificate verifier could not be built from the client CA.
    #[error("client CA {}: {source}", path.display())]
    Verifier {
        /// The `--ssl-client-ca` file.
        path: PathBuf,
        /// Why.
        #[source]
        source: rustls::server::VerifierBuilderError,
    },
    /// The certificate chain and the key do not make an identity.
    #[error("the certificate {} and key {} do not make a TLS identity: {source}", cert.display(), key.display())]
    Identity {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// Why rustls refused them.
        #[source]
        source: rustls::Error,
    },
}

/// The acceptor the listener's connections handshake with.
pub(crate) fn acceptor(config: &TlsConfig) -> Result<TlsAcceptor, ServerError> {
    build(config).map_err(ServerError::Tls)
}

fn build(config: &TlsConfig) -> Result<TlsAcceptor, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = certificates(&config.cert)?;
    let key = PrivateKeyDer::from_pem_file(&config.key).map_err(|source| TlsError::Pem {
        what: "a private key",
        path: config.key.clone(),
        source,
    })?;
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(TlsError::Versions)?;
    let builder = match &config.client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in certificates(ca)? {
                roots.add(cert).map_err(|source| TlsError::ClientCa { path: ca.clone(), source })?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|source| TlsError::Verifier { path: ca.clone(), source })?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let server = builder.with_single_cert(certs, key).map_err(|source| TlsError::Identity {
        cert: config.cert.clone(),
        key: config.key.clone(),
        source,
    })?;
    Ok(TlsAcceptor::from(Arc::new(server)))
}

/// Every certificate of a PEM file; at least one.
fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bad = |source| TlsError::Pem { what: "certificates", path: path.to_owned(), source };
    let certs =
        CertificateDer::pem_file_iter(path).map_err(bad)?.collect::<Result<Vec<_>, _>>().map_err(bad)?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate { path: path.to_owned() });
    }
    Ok(certs)
}

/// The principal name of a client certificate: its subject, RFC 2253 as Java prints it;
/// `None` when the certificate does not parse (the handshake already verified it).
pub(crate) fn certificate_principal(cert: &[u8]) -> Option<String> {
    let (_, cert) = X509Certificate::from_der(cert).ok()?;
    let rdns: Vec<String> = cert
        .subject()
        .iter_rdn()
        .map(|rdn| rdn.iter().map(attribute).collect::<Vec<_>>().join("+"))
        .collect();
    // X500Principal lists the most specific name first: the reverse of the DER order.
    Some(rdns.into_iter().rev().collect::<Vec<_>>().join(","))
}

fn attribute(attr: &x509_parser::x509::AttributeTypeAndValue<'_>) -> String {
    let oid = attr.attr_type().to_id_string();
    let keyword = match oid.as_str() {
        "2.5.4.3" => Some("CN"),
        "2.5.4.6" => Some("C"),
        "2.5.4.7" => Some("L"),
        "2.5.4.8" => Some("ST"),
        "2.5.4.10" => Some("O"),
        "2.5.4.11" => Some("OU"),
        "2.5.4.9" => Some("STREET"),
        "0.9.2342.19200300.100.1.25" => Some("DC"),
        "0.9.2342.19200300.100.1.1" => Some("UID"),
        _ => None,
    };
    match (keyword, attr.as_str()) {
        (Some(keyword), Ok(value)) => format!("{keyword}={}", escape(value)),
        (keyword, _) => {
            let der = attr.attr_value().to_der_vec().unwrap_or_default();
            let hex: String = der.iter().map(|b| format!("{b:02x}")).collect();
            format!("{}=#{hex}", keyword.map_or(oid.as_str(), |k| k))
        }
    }
}

/// RFC 2253 section 2.4 escaping, as `AVA.toRFC2253String` does it.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let last = value.chars().count().saturating_sub(1);
    for (i, c) in value.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';');
        let edge = (i == 0 && (c == '#' || c == ' ')) || (i == last && c == ' ');
        if special || edge {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
    use rstest::rstest;

    use super::*;

    fn cert_with(subject: &[(DnType, &str)]) -> Vec<u8> {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        let mut dn = DistinguishedName::new();
        for (kind, value) in subject {
            dn.push(kind.clone(), *value);
        }
        params.distinguished_name = dn;
        let key = KeyPair::generate().expect("key");
        params.self_signed(&key).expect("cert").der().to_vec()
    }

    #[rstest]
    #[case::kafka_example(
        &[(DnType::OrganizationName, "Example"), (DnType::OrganizationalUnitName, "eng"), (DnType::CommonName, "client")],
        "CN=client,OU=eng,O=Example"
    )]
    #[case::country_first(&[(DnType::CountryName, "DE"), (DnType::CommonName, "a")], "CN=a,C=DE")]
    #[case::escaped(&[(DnType::CommonName, "Smith, John+1")], "CN=Smith\\, John\\+1")]
    #[case::edges(&[(DnType::CommonName, "#a ")], "CN=\\#a\\ ")]
    fn subjects_read_as_java_prints_them(#[case] subject: &[(DnType, &str)], #[case] expected: &str) {
        assert_eq!(certificate_principal(&cert_with(subject)).as_deref(), Some(expected));
    }

    #[test]
    fn an_attribute_without_a_keyword_is_hex() {
        let der = cert_with(&[(DnType::CustomDnType(vec![2, 5, 4, 12]), "boss"), (DnType::CommonName, "a")]);
        // 2.5.4.12 (title) has no RFC 2253 keyword: its UTF8String DER, 0c 04 "boss".
        assert_eq!(certificate_principal(&der).as_deref(), Some("CN=a,2.5.4.12=#0c04626f7373"));
    }

    #[test]
    fn garbage_is_no_certificate() {
        assert_eq!(certificate_principal(b"not a certificate"), None);
    }
}
