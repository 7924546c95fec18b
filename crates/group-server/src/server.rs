//! `GroupServer`: the listening socket, the runtime its connections run on, the
//! connection limits, and a graceful stop.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener as StdListener};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use group_coordinator::{AllowAll, Authorizer};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

use crate::authenticate::Security;
use crate::connection;
use crate::log::warning;
use crate::node::Node;
use crate::request_log::RequestLog;
use crate::topics::SharedTopics;
use crate::{AclAuthorizer, AclError, ConnectionLimits, CoordinatorService, ServerConfig, ServerError};

/// How long a stop waits for replies to requests already read before it stops the
/// coordinator (which answers parked JoinGroup and SyncGroup requests with an error).
const DRAIN: Duration = Duration::from_secs(2);

/// How long a stop then waits for the connections to write those answers and close.
const CLOSE: Duration = Duration::from_secs(3);

/// A pause after a failed accept (out of file descriptors): the listener would
/// report the same error at once, and spinning on it takes a core.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Connections the kernel may hold before they are accepted: after a coordinator
/// restart every consumer reconnects at once, and std's 128 drops the rest for a
/// second (a SYN retry). Kafka's `socket.listen.backlog.size` defaults to 50; the
/// kernel caps the value at `net.core.somaxconn`.
const LISTEN_BACKLOG: i32 = 4096;

/// A running coordinator node: accepts connections until [`GroupServer::stop`].
///
/// Connections are tasks on a multi-threaded tokio runtime with one thread per core
/// (threads `group-server-io`, see [`GroupServer::runtime`]), whatever their number;
/// the group coordinator behind them is shared by all. It is the process's one
/// runtime: a `--cluster` node's etcd store and cluster membership run on it too,
/// over one etcd client, and the binary's signal handlers. With an ACL file, a
/// SIGHUP to the process rereads it (see [`GroupServer::reload_acls`]); without one a
/// SIGHUP is logged and ignored, never fatal.
pub struct GroupServer {
    local_addr: SocketAddr,
    advertised: (String, u16),
    pub(crate) runtime: Option<Runtime>,
    stopping: watch::Sender<bool>,
    connections: Arc<Connections>,
    service: Arc<CoordinatorService>,
    /// The ACLs in force, reloaded on SIGHUP and by [`GroupServer::reload_acls`].
    acl: Option<Arc<AclAuthorizer>>,
    stopped: Arc<(Mutex<bool>, Condvar)>,
    /// Where `--metrics-listen` serves (see `crate::metrics_http`).
    metrics_addr: Option<SocketAddr>,
}

impl std::fmt::Debug for GroupServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupServer")
            .field("local_addr", &self.local_addr)
            .field("advertised", &self.advertised)
            .finish_non_exhaustive()
    }
}

impl GroupServer {
    /// The tokio runtime a server for `config` runs on: one worker per core (at
    /// most 16), threads named `group-server-io`. [`GroupServer::start`] builds it;
    /// a program that wants its own tasks on it (the binary's signal handlers) builds
    /// it first and hands it to [`GroupServer::start_on`].
    pub fn runtime(config: &ServerConfig) -> Result<Runtime, ServerError> {
        let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get).clamp(1, 16);
        // A cluster node loads the partitions it comes to own all at once, each on
        // a blocking thread (they exit when idle); otherwise blocking work is rare
        // (an ACL reload).
        let blocking = match config.storage {
            crate::StorageMode::Cluster(_) => (config.partitions as usize).clamp(2, 64),
            _ => 2,
        };
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .max_blocking_threads(blocking)
            .thread_name("group-server-io")
            .enable_io()
            .enable_time()
            .build()
            .map_err(ServerError::Runtime)
    }

    /// Serves on sockets already bound (see [`GroupServer::start`], which binds before
    /// it opens storage, so that a port in use leaves no data directory behind), on
    /// `runtime`; the server it returns has no runtime yet: the caller hands it over,
    /// or shuts it down without blocking if serving cannot start.
    pub(crate) fn serve(
        config: &ServerConfig,
        runtime: &Runtime,
        listeners: Listeners,
        service: Arc<CoordinatorService>,
        acl: Option<Arc<AclAuthorizer>>,
        security: Security,
        brokers: Option<crate::brokers::Brokers>,
    ) -> Result<GroupServer, ServerError> {
        let Listeners { kafka: listener, metrics: metrics_listener } = listeners;
        let local_addr = listener.local_addr().map_err(|e| bind_error(config, e))?;
        let log_file = match &config.request_log {
            Some(path) => Some(Arc::new(
                RequestLog::create(path)
                    .map_err(|source| ServerError::RequestLog { path: path.clone(), source })?,
            )),
            None => None,
        };
        let advertised =
            config.advertise.clone().unwrap_or_else(|| (local_addr.ip().to_string(), local_addr.port()));
        let metrics = Arc::new(crate::metrics::ServerMetrics::default());
        let budgets = Arc::new(connection::Budgets::new(&config.limits));
        let brokers = brokers.unwrap_or_else(|| {
            crate::brokers::single_node(config.node_id, &advertised.0, i32::from(advertised.1))
        });
        let node = Arc::new(Node {
            brokers,
            share_sessions: std::sync::Mutex::new(crate::share_session::ShareSessionCache::new(
                config.max_share_sessions,
            )),
            topics: Arc::new(SharedTopics::new(&config.topics)),
            topic_creation_refused: matches!(config.storage, crate::StorageMode::Cluster(_)).then_some(
                "a cluster node cannot create topics: every node serves the --topic list it was \
                 started with",
            ),
            creating: std::sync::Mutex::new(()),
            topic_creators: acl.clone(),
            service: Arc::clone(&service),
            log: log_file,
            authorizer: match &acl {
                Some(acl) => Arc::clone(acl) as Arc<dyn Authorizer>,
                None => Arc::new(AllowAll),
            },
            metrics: Arc::clone(&metrics),
            budgets: Arc::clone(&budgets),
        });
        listener.set_nonblocking(true).map_err(|e| bind_error(config, e))?;
        let listener = {
            let _entered = runtime.enter();
            TcpListener::from_std(listener).map_err(|e| bind_error(config, e))?
        };
        let (stopping, stop_rx) = watch::channel(false);
        let connections = Arc::new(Connections::new(config.limits));
        let acceptor = Acceptor {
            listener,
            node,
            connections: Arc::clone(&connections),
            limits: config.limits,
            verbose: config.verbose,
            stopping: stop_rx,
            security: Arc::new(security),
        };
        runtime.spawn(acceptor.run());
        {
            let _entered = runtime.enter();
            runtime.spawn(reload_on_hangup(acl.clone(), stopping.subscribe())?);
        }
        let metrics_addr = match metrics_listener {
            Some(listener) => {
                let exporter = crate::metrics::Exporter::new(metrics, budgets, Arc::clone(&service));
                Some(crate::metrics_http::spawn(runtime, listener, exporter, stopping.subscribe())?)
            }
            None => None,
        };
        Ok(GroupServer {
            local_addr,
            advertised,
            runtime: None,
            stopping,
            connections,
            service,
            acl,
            stopped: Arc::default(),
            metrics_addr,
        })
    }

    /// Rereads the ACL file (what SIGHUP does) and returns how many rules are in
    /// force. A file that no longer parses keeps the previous rules: the error is
    /// logged and returned.
    pub fn reload_acls(&self) -> Result<usize, AclError> {
        self.acl.as_ref().ok_or(AclError::NotConfigured)?.reload()
    }

    /// The address the server listens on (with the real port when `listen` used port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The `host:port` Metadata and FindCoordinator tell clients.
    pub fn advertised(&self) -> (&str, u16) {
        (&self.advertised.0, self.advertised.1)
    }

    /// The address `--metrics-listen` serves `GET /metrics` on (with the real port
    /// when it used port 0); `None` without it.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// Connections open now.
    pub fn connection_count(&self) -> usize {
        self.connections.open()
    }

    /// Stops gracefully: stops accepting and reading, lets the replies to requests
    /// already read go out, stops the coordinator (parked requests are answered with
    /// an error, writes in flight complete), closes every connection. Idempotent.
    pub fn stop(&mut self) {
        let Some(runtime) = self.runtime.take() else { return };
        self.stopping.send_replace(true);
        let drained = self.connections.wait_closed(DRAIN);
        self.service.stop();
        let closed = drained || self.connections.wait_closed(CLOSE);
        if !closed {
            warning!(
                "stopping with {} connection(s) still open after {:?}",
                self.connections.open(),
                DRAIN + CLOSE
            );
        }
        if tokio::runtime::Handle::try_current().is_ok() {
            // Stopped from within another runtime (an async test or an embedding
            // program): that runtime's thread may not block on ours shutting down.
            let _ = std::thread::spawn(move || runtime.shutdown_timeout(Duration::from_secs(1))).join();
        } else {
            runtime.shutdown_timeout(Duration::from_secs(1));
        }
        let (lock, done) = &*self.stopped;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) = true;
        done.notify_all();
    }

    /// A handle that stops this server from another thread (a signal handler).
    pub fn stopper(&self) -> impl FnOnce() + Send + 'static {
        let stopping = self.stopping.clone();
        move || {
            stopping.send_replace(true);
        }
    }

    /// Blocks until [`stop`](GroupServer::stop) has run, or until a
    /// [`stopper`](GroupServer::stopper) fires, then stops.
    pub fn wait(mut self) {
        let mut stopping = self.stopping.subscribe();
        if let Some(runtime) = &self.runtime {
            runtime.block_on(async {
                let _ = stopping.wait_for(|s| *s).await;
            });
        }
        self.stop();
    }
}

impl Drop for GroupServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The task that answers every SIGHUP until the server stops: it rereads the ACL
/// file when there is one, and logs a line either way. The handler is installed
/// whatever the configuration, in the runtime's context, before the server answers
/// anything: SIGHUP's default action ends the process, and a log rotation or a
/// closed terminal must not stop a coordinator.
fn reload_on_hangup(
    acl: Option<Arc<AclAuthorizer>>,
    mut stopping: watch::Receiver<bool>,
) -> Result<impl Future<Output = ()> + Send + 'static, ServerError> {
    let mut hangup = signal(SignalKind::hangup()).map_err(ServerError::Signal)?;
    Ok(async move {
        loop {
            tokio::select! {
                biased;
                _ = stopping.wait_for(|s| *s) => return,
                got = hangup.recv() => if got.is_none() { return },
            }
            match &acl {
                Some(acl) => {
                    // File I/O: off the connection threads. The outcome is logged by `reload`.
                    let acl = Arc::clone(acl);
                    let _ = tokio::task::spawn_blocking(move || acl.reload()).await;
                }
                None => crate::log::log!("SIGHUP: nothing to reload (no --acl-file); still serving"),
            }
        }
    })
}

/// The sockets a node serves on, bound before storage is opened, so that a port
/// in use leaves no data directory behind.
pub(crate) struct Listeners {
    /// The Kafka listener.
    pub(crate) kafka: StdListener,
    /// `--metrics-listen`'s socket and the address it got.
    metrics: Option<(StdListener, SocketAddr)>,
}

/// Binds the Kafka listener and the metrics endpoint, if any.
pub(crate) fn bind(config: &ServerConfig) -> Result<Listeners, ServerError> {
    let kafka = bind_kafka(config)?;
    let metrics = config.metrics_listen.map(crate::metrics_http::bind).transpose()?;
    Ok(Listeners { kafka, metrics })
}

/// Binds the listening socket, saying what to do about the common failures.
fn bind_kafka(config: &ServerConfig) -> Result<StdListener, ServerError> {
    let listener = StdListener::bind(config.listen).map_err(|e| {
        let hint = match e.kind() {
            std::io::ErrorKind::AddrInUse => {
                " (another process listens there: stop it or pick another --listen port)"
            }
            std::io::ErrorKind::AddrNotAvailable => " (not an address of this machine)",
            std::io::ErrorKind::PermissionDenied => " (ports below 1024 need privileges)",
            _ => "",
        };
        ServerError::Bind { addr: config.listen, what: "", hint, source: e }
    })?;
    // Listening again only changes the backlog (Kafka's `socket.listen.backlog.size`).
    socket2::SockRef::from(&listener).listen(LISTEN_BACKLOG).map_err(|e| bind_error(config, e))?;
    Ok(listener)
}

/// The Kafka listener's socket failed to set up.
pub(crate) fn bind_error(config: &ServerConfig, source: std::io::Error) -> ServerError {
    ServerError::Bind { addr: config.listen, what: "", hint: "", source }
}

/// Open connections, in total and per client address.
struct Connections {
    limits: ConnectionLimits,
    state: Mutex<ConnectionState>,
    changed: Condvar,
}

#[derive(Default)]
struct ConnectionState {
    open: usize,
    per_ip: HashMap<IpAddr, usize>,
}

impl Connections {
    fn new(limits: ConnectionLimits) -> Connections {
        Connections { limits, state: Mutex::default(), changed: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, ConnectionState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn open(&self) -> usize {
        self.lock().open
    }

    /// Counts a new connection, or says which limit refuses it.
    fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Admitted, Refused> {
        let mut state = self.lock();
        if state.open >= self.limits.max_connections {
            return Err(Refused::Total { open: state.open });
        }
        let from_ip = state.per_ip.get(&ip).copied().unwrap_or(0);
        if from_ip >= self.limits.max_connections_per_ip {
            return Err(Refused::PerIp { open: from_ip, ip });
        }
        state.open += 1;
        *state.per_ip.entry(ip).or_default() += 1;
        Ok(Admitted { connections: Arc::clone(self), ip })
    }

    /// Waits until no connection is open; false on timeout. Used while stopping, when
    /// readers have stopped and each connection closes once its replies are written.
    fn wait_closed(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.lock();
        while state.open > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state = self.changed.wait_timeout(state, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        true
    }
}

/// Which connection limit refused a connection.
#[derive(Debug, thiserror::Error)]
enum Refused {
    /// Kafka's `max.connections`.
    #[error("{open} connections open (max.connections)")]
    Total { open: usize },
    /// Kafka's `max.connections.per.ip`.
    #[error("{open} connections open from {ip} (max.connections.per.ip)")]
    PerIp { open: usize, ip: IpAddr },
}

/// One admitted connection; counted until dropped.
struct Admitted {
    connections: Arc<Connections>,
    ip: IpAddr,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut state = self.connections.lock();
        state.open -= 1;
        if let Some(n) = state.per_ip.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                state.per_ip.remove(&self.ip);
            }
        }
        drop(state);
        self.connections.changed.notify_all();
    }
}

/// The accept loop's task.
struct Acceptor {
    listener: TcpListener,
    node: Arc<Node>,
    connections: Arc<Connections>,
    limits: ConnectionLimits,
    verbose: bool,
    stopping: watch::Receiver<bool>,
    security: Arc<Security>,
}

impl Acceptor {
    async fn run(mut self) {
        loop {
            let accepted = tokio::select! {
                biased;
                _ = self.stopping.wait_for(|s| *s) => return,
                accepted = self.listener.accept() => accepted,
            };
            match accepted {
                Ok((stream, peer)) => self.start(stream, peer),
                Err(e) => {
                    // EMFILE and friends: the pending connection stays in the backlog.
                    warning!("accept failed: {e}; retrying in {ACCEPT_BACKOFF:?}");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            }
        }
    }

    fn start(&self, stream: TcpStream, peer: SocketAddr) {
        let admitted = match self.connections.admit(peer.ip()) {
            Ok(admitted) => admitted,
            Err(why) => {
                warning!("{peer}: refusing connection: {why}");
                self.node.metrics.connection_refused();
                drop(stream);
                return;
            }
        };
        let (node, limits, verbose) = (Arc::clone(&self.node), self.limits, self.verbose);
        let stopping = self.stopping.clone();
        let counted = self.node.metrics.connection_opened();
        let security = Arc::clone(&self.security);
        tokio::spawn(async move {
            connection::serve(node, stream, peer, limits, verbose, stopping, security).await;
            drop((admitted, counted));
        });
    }
}
