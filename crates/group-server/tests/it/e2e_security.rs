//! Real Kafka clients against secured listeners: the `group-server` binary started with
//! TLS and SASL flags (certificates made by rcgen, the user added with `group-server
//! users add`), and `e2e/security.py` running kafka-python and confluent-kafka against
//! it, in the virtual environment `e2e/venv.sh` keeps (shared with `e2e/run.sh`); one
//! of the servers authorizes against an ACL file.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::binary::{Node, Stderr, group_server};
use crate::certs::{Certs, arg};
use crate::client::IN_MEMORY;

const PASSWORD: &str = "alice-e2e-secret";

/// A `group-server` in memory with `flags`; it stops when dropped.
fn start(flags: &[&str]) -> Node {
    let mut command = group_server();
    command.args(IN_MEMORY);
    command.args(["--failed-authentication-delay-ms", "100", "--exit-on-stdin-close"]);
    Node::spawn(command.args(flags), Stderr::Inherit)
}

/// `group-server users add`, the password on standard input.
fn add_user(users: &Path) {
    let mut child = group_server()
        .args(["users", "add", "--file", arg(users), "--user", "alice", "--iterations", "4096"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("users add runs");
    child.stdin.take().expect("stdin").write_all(format!("{PASSWORD}\n").as_bytes()).expect("password");
    let out = child.wait_with_output().expect("users add ends");
    assert!(out.status.success(), "users add failed: {out:?}");
    let listed = group_server().args(["users", "list", "--file", arg(users)]).output().expect("list");
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "alice SCRAM-SHA-512,SCRAM-SHA-256\n");
}

#[test]
fn real_kafka_clients_authenticate_over_tls_and_sasl() {
    let _turn = crate::e2e::real_clients_turn();
    let target = Path::new(env!("CARGO_BIN_EXE_group-server"))
        .parent()
        .and_then(Path::parent)
        .expect("binary in a target dir")
        .to_path_buf();
    let work = target.join("group-server-e2e");
    let e2e = Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e");
    let venv = Command::new("bash").arg(e2e.join("venv.sh")).arg(&work).output().expect("venv.sh runs");
    assert!(venv.status.success(), "venv.sh failed: {}", String::from_utf8_lossy(&venv.stderr));
    let python = String::from_utf8(venv.stdout).expect("UTF-8").trim().to_owned();

    let certs = Certs::new("e2e-security");
    let users = certs.path("users.txt");
    add_user(&users);
    let tls = ["--tls-cert", arg(&certs.server_cert), "--tls-key", arg(&certs.server_key)];
    let sasl = ["--sasl-mechanisms", "SCRAM-SHA-512,PLAIN", "--sasl-users", arg(&users)];
    let sasl_ssl = start(&[&tls[..], &sasl[..]].concat());
    let ssl = start(&[&tls[..], &["--tls-client-ca", arg(&certs.ca)]].concat());
    let sasl_plaintext = start(&sasl);
    // alice may use the groups `allowed-kp` and `allowed-ck` (one per client) and every
    // group starting `team-` but those starting `team-secret` (deny wins), and read t1;
    // nothing else.
    let acls = certs.path("acls.txt");
    std::fs::write(
        &acls,
        "allow User:alice READ Group:allowed-kp\n\
         allow User:alice READ Group:allowed-ck\n\
         allow User:alice READ Group:team- prefixed\n\
         deny  User:alice READ Group:team-secret prefixed\n\
         allow User:alice READ Topic:t1\n",
    )
    .expect("ACL file");
    let with_acls = start(&[&sasl[..], &["--acl-file", arg(&acls)]].concat());

    let config = serde_json::json!({
        "servers": {
            "sasl_ssl": sasl_ssl.kafka.to_string(),
            "ssl": ssl.kafka.to_string(),
            "sasl_plaintext": sasl_plaintext.kafka.to_string(),
            "acl": with_acls.kafka.to_string(),
        },
        "ca": arg(&certs.ca),
        "client_cert": arg(&certs.client_cert),
        "client_key": arg(&certs.client_key),
        "user": "alice",
        "password": PASSWORD,
    });
    let config_file = certs.path("security.json");
    std::fs::write(&config_file, config.to_string()).expect("config");
    let mut command = Command::new(&python);
    command.arg(e2e.join("security.py")).args(["run", "--config", arg(&config_file)]);
    crate::e2e::run_scenarios(command, "security: 20/20 scenarios passed");
}
