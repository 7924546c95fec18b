//! Test certificates, made by rcgen at test time into a temporary directory (no key is
//! ever committed): a CA, a server certificate for localhost and 127.0.0.1, and a
//! client certificate with subject `O=Example, OU=eng, CN=client`.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, ExtendedKeyUsagePurpose,
    IsCa, KeyPair,
};

/// The client certificate's principal, as Kafka forms it.
pub(crate) const CLIENT_PRINCIPAL: &str = "User:CN=client,OU=eng,O=Example";

/// PEM files in a directory removed on drop.
pub(crate) struct Certs {
    pub(crate) dir: PathBuf,
    pub(crate) ca: PathBuf,
    pub(crate) server_cert: PathBuf,
    pub(crate) server_key: PathBuf,
    pub(crate) client_cert: PathBuf,
    pub(crate) client_key: PathBuf,
}

impl Drop for Certs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn name(parts: &[(DnType, &str)]) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    for (kind, value) in parts {
        dn.push(kind.clone(), *value);
    }
    dn
}

impl Certs {
    /// Fresh certificates in a new temporary directory named after `test`.
    pub(crate) fn new(test: &str) -> Certs {
        let dir = std::env::temp_dir().join(format!("group-server-certs-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Certs::generate(dir)
    }

    /// Certificates written into `dir` (which exists).
    pub(crate) fn generate(dir: PathBuf) -> Certs {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.distinguished_name = name(&[(DnType::CommonName, "group-server test CA")]);
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("key")).expect("CA");

        let mut server =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).expect("params");
        server.distinguished_name = name(&[(DnType::CommonName, "localhost")]);
        server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server_key = KeyPair::generate().expect("key");
        let server_cert = server.signed_by(&server_key, &ca).expect("server cert");

        let mut client = CertificateParams::new(Vec::<String>::new()).expect("params");
        client.distinguished_name = name(&[
            (DnType::OrganizationName, "Example"),
            (DnType::OrganizationalUnitName, "eng"),
            (DnType::CommonName, "client"),
        ]);
        client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let client_key = KeyPair::generate().expect("key");
        let client_cert = client.signed_by(&client_key, &ca).expect("client cert");

        let write = |file: &str, text: String| {
            let path = dir.join(file);
            std::fs::write(&path, text).expect("write PEM");
            path
        };
        Certs {
            ca: write("ca.pem", ca.pem()),
            server_cert: write("server.pem", server_cert.pem()),
            server_key: write("server.key", server_key.serialize_pem()),
            client_cert: write("client.pem", client_cert.pem()),
            client_key: write("client.key", client_key.serialize_pem()),
            dir,
        }
    }

    /// A file in the directory.
    pub(crate) fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }
}

/// The path as a string for a command line.
pub(crate) fn arg(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temp path")
}
