//! `group-server`: run a Kafka consumer group coordinator node (see `--help`), or
//! manage its SASL users file (`group-server users --help`).

use std::process::ExitCode;
use std::sync::mpsc;

use group_server::{ConfigError, GroupServer, LogFormat, ServerConfig, StorageMode, UsersError};

/// A coordinator allocates a few small blocks per request (ids and payloads it
/// keeps or answers with); mimalloc serves them in a fraction of the system
/// allocator's instructions (DECISIONS.md "The server allocates with mimalloc").
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Why the server stops.
enum StopReason {
    Signal(&'static str),
    StdinClosed,
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "users") {
        args.next();
        return users(args);
    }
    // args_os: an argument that is not UTF-8 is a usage error, not a panic.
    let config = match ServerConfig::from_args(args) {
        Ok(config) => config,
        Err(ConfigError::Help(text) | ConfigError::Version(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("group-server: {e}");
            return ExitCode::from(2);
        }
    };
    init_logging(config.verbose, config.log_format);
    for warning in &config.warnings {
        say(config.log_format, Severity::Warning, warning);
    }
    raise_open_file_limit();
    // The process's one runtime: the server's connections, a cluster node's etcd
    // store and membership, and the signal handlers all run on it.
    let runtime = match GroupServer::runtime(&config) {
        Ok(runtime) => runtime,
        Err(e) => {
            say(config.log_format, Severity::Fatal, &e.to_string());
            return ExitCode::FAILURE;
        }
    };
    let (stop_tx, stop_rx) = mpsc::channel();
    // Signals are watched before anything starts, so that a Ctrl-C during a long
    // load is not lost.
    if let Err(e) = watch_signals(runtime.handle(), stop_tx.clone(), config.log_format) {
        say(config.log_format, Severity::Fatal, &format!("cannot watch for signals: {e}"));
        return ExitCode::FAILURE;
    }
    let server = match GroupServer::start_on(&config, runtime) {
        Ok(server) => server,
        Err(e) => {
            say(config.log_format, Severity::Fatal, &e.to_string());
            return ExitCode::FAILURE;
        }
    };
    // Tests and scripts wait for this line to learn the (possibly ephemeral) port.
    println!("group-server listening on {}", server.local_addr());
    if let Some(addr) = server.metrics_addr() {
        println!("group-server metrics on http://{addr}/metrics");
    }
    log_startup(&server, &config);
    if config.exit_on_stdin_close {
        let stop_tx = stop_tx.clone();
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            let _ = stop_tx.send(StopReason::StdinClosed);
        });
    }
    let stop = server.stopper();
    let waiter = std::thread::spawn(move || server.wait());
    let reason = stop_rx.recv();
    match reason {
        Ok(StopReason::Signal(name)) => tracing::info!("{name}: stopping (a second signal exits at once)"),
        Ok(StopReason::StdinClosed) => tracing::info!("standard input closed: stopping"),
        Err(_) => {}
    }
    stop();
    let _ = waiter.join();
    tracing::info!("stopped");
    ExitCode::SUCCESS
}

/// `group-server users add|remove|list`: the password of `add` comes from stdin.
fn users(args: impl Iterator<Item = std::ffi::OsString>) -> ExitCode {
    match group_server::users_command(args, &mut std::io::stdin().lock()) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(UsersError::Help(text)) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(UsersError::Usage(text)) => {
            eprintln!("group-server users: {text}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("group-server users: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Log lines on stderr: `info` by default (`-v` adds per-connection lines at the same
/// level), `RUST_LOG` overrides (`RUST_LOG=group_coordinator=debug`). With
/// `--log-format json` every line is one JSON object (`timestamp`, `level`, `target`,
/// and the event's `fields`, its text in `fields.message`), for a log shipper.
fn init_logging(verbose: bool, format: LogFormat) {
    let default = if verbose { "debug,sled=info" } else { "info,sled=warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colour only for a terminal: a file or a pipe gets the text without escape codes.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder =
        tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter(filter).with_ansi(ansi);
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        _ => builder.try_init(),
    };
}

/// How bad a line of [`say`] is.
#[derive(Clone, Copy)]
enum Severity {
    /// A setting taken with a caveat.
    Warning,
    /// Why the server does not start.
    Fatal,
}

/// A line about the start itself: plain in the human format, as it always was,
/// and a `tracing` event in the JSON one, so that every line of a JSON log parses.
fn say(format: LogFormat, severity: Severity, message: &str) {
    match (format, severity) {
        (LogFormat::Json, Severity::Warning) => tracing::warn!(target: "group_server", "{message}"),
        (LogFormat::Json, Severity::Fatal) => tracing::error!(target: "group_server", "{message}"),
        (_, Severity::Warning) => eprintln!("group-server: warning: {message}"),
        (_, Severity::Fatal) => eprintln!("group-server: {message}"),
    }
}

/// A socket per connection: ten thousand clients need more descriptors than the
/// usual soft limit of 1024, and the hard limit is usually far higher.
fn raise_open_file_limit() {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) if limit < 10_000 => {
            tracing::warn!("open-file limit is {limit}: at most about that many connections")
        }
        Ok(_) => {}
        Err(e) => tracing::warn!("cannot raise the open-file limit: {e}"),
    }
}

/// SIGTERM and Ctrl-C stop the server gracefully; a second one exits at once. The
/// handlers are installed now, and served by a task on the server's runtime.
fn watch_signals(
    runtime: &tokio::runtime::Handle,
    stop: mpsc::Sender<StopReason>,
    format: LogFormat,
) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let (mut terminate, mut interrupt) = {
        let _entered = runtime.enter();
        // SIGHUP's default action ends the process: registering a handler now, even
        // one nobody reads, keeps a SIGHUP during a long start harmless (tokio keeps
        // a registered handler for the life of the process). The server answers
        // SIGHUP once it runs.
        drop(signal(SignalKind::hangup())?);
        (signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?)
    };
    runtime.spawn(async move {
        let mut first = true;
        loop {
            let name = tokio::select! {
                Some(()) = terminate.recv() => "SIGTERM",
                Some(()) = interrupt.recv() => "SIGINT",
                // The runtime is shutting down: the server has stopped.
                else => return,
            };
            if !first {
                say(format, Severity::Fatal, &format!("{name} again: exiting at once"));
                std::process::exit(1);
            }
            first = false;
            let _ = stop.send(StopReason::Signal(name));
        }
    });
    Ok(())
}

fn log_startup(server: &GroupServer, config: &ServerConfig) {
    let (host, port) = server.advertised();
    tracing::info!("listening on {}, advertised to clients as {host}:{port}", server.local_addr());
    if let Some(addr) = server.metrics_addr() {
        tracing::info!("metrics: http://{addr}/metrics (Prometheus text format)");
    }
    match &config.storage {
        StorageMode::Sled(dir) => {
            // Absolute, so that the line says where the data is whatever the directory
            // the server was started from.
            let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
            tracing::info!("storage: sled in {} (fsync per commit batch)", dir.display())
        }
        StorageMode::Memory => tracing::info!("storage: memory (lost on exit)"),
        other => tracing::info!("storage: {other:?}"),
    }
    if config.topics.is_empty() {
        tracing::info!("topics: none configured");
    } else {
        let list: Vec<String> =
            config.topics.iter().map(|t| format!("{}:{}", t.name, t.partitions)).collect();
        tracing::info!("topics: {}", list.join(", "));
    }
}
