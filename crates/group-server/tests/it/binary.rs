//! The `group-server` binary as a child process, for the tests that need the real
//! process (signals, exit codes, logs, memory): one way to start it on an ephemeral
//! port, read the addresses it prints and keep what it logs.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The binary under test, with no arguments yet.
pub(crate) fn group_server() -> Command {
    Command::new(env!("CARGO_BIN_EXE_group-server"))
}

/// A fresh (removed) directory under the system's temporary one, named for the test.
pub(crate) fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("group-server-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// What becomes of a started node's standard error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stderr {
    /// Thrown away.
    Null,
    /// The test's own (shown when the test fails).
    Inherit,
    /// Kept: line by line for [`Node::log_line`], whole for [`Node::exit`].
    Keep,
}

/// A started `group-server`, killed when dropped. Its standard input stays open, so a
/// node started with `--exit-on-stdin-close` stops when it is closed.
pub(crate) struct Node {
    child: Child,
    /// The Kafka listener's address, from the first line the node prints.
    pub(crate) kafka: SocketAddr,
    stdout: BufReader<ChildStdout>,
    lines: Option<mpsc::Receiver<String>>,
    log: Option<JoinHandle<String>>,
}

impl Node {
    /// Spawns `command` (the binary and its flags, `--listen 127.0.0.1:0` among them) and
    /// waits for the line that says where it listens.
    pub(crate) fn spawn(command: &mut Command, stderr: Stderr) -> Node {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match stderr {
                Stderr::Null => Stdio::null(),
                Stderr::Inherit => Stdio::inherit(),
                Stderr::Keep => Stdio::piped(),
            })
            .spawn()
            .expect("group-server starts");
        let (mut lines, mut log) = (None, None);
        if let Some(err) = child.stderr.take() {
            let (tx, rx) = mpsc::channel();
            lines = Some(rx);
            log = Some(std::thread::spawn(move || {
                let mut all = String::new();
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    all.push_str(&line);
                    all.push('\n');
                    let _ = tx.send(line);
                }
                all
            }));
        }
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut node = Node { child, kafka: ([0, 0, 0, 0], 0).into(), stdout, lines, log };
        node.kafka = node.address("group-server listening on ");
        node
    }

    /// The address on the next line the node prints, which must start with `prefix`
    /// (`http://` and `/metrics` around it are dropped).
    pub(crate) fn address(&mut self, prefix: &str) -> SocketAddr {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("a startup line");
        line.trim()
            .strip_prefix(prefix)
            .and_then(|a| a.trim_start_matches("http://").trim_end_matches("/metrics").parse().ok())
            .unwrap_or_else(|| panic!("unexpected line from the server: {line:?}"))
    }

    /// The process id.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Sends the process a signal (`kill -NAME`).
    pub(crate) fn signal(&self, name: &str) {
        let sent = Command::new("kill").arg(format!("-{name}")).arg(self.id().to_string()).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -{name}");
    }

    /// Whether the process is still running.
    pub(crate) fn running(&mut self) -> bool {
        self.child.try_wait().expect("wait").is_none()
    }

    /// The next stderr line that contains every one of `words` (started with
    /// [`Stderr::Keep`]); the lines before it are passed over.
    pub(crate) fn log_line(&self, words: &[&str]) -> String {
        let lines = self.lines.as_ref().expect("stderr kept");
        loop {
            // A guard against a hung server, not a timing assertion.
            let line = lines.recv_timeout(Duration::from_secs(30)).expect("a log line");
            if words.iter().all(|w| line.contains(w)) {
                return line;
            }
        }
    }

    /// Closes the node's standard input.
    pub(crate) fn close_stdin(&mut self) {
        drop(self.child.stdin.take());
    }

    /// Waits for the process to exit, at most 30 s (a hung server fails the test), and
    /// returns its status and, if kept, everything it logged.
    pub(crate) fn exit(mut self) -> (ExitStatus, String) {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = self.child.kill();
                panic!("group-server did not exit within 30 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let log = self.log.take().map(|l| l.join().unwrap_or_default()).unwrap_or_default();
        (status, log)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
