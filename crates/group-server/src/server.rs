//! `GroupServer`: the listening socket, its connections, and a clean stop.

use std::collections::HashMap;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use crate::connection;
use crate::log::log;
use crate::node::Node;
use crate::request_log::RequestLog;
use crate::service::GroupService;
use crate::topics::Topics;
use crate::{ServerConfig, ServerError};

type Connections = Arc<Mutex<HashMap<u64, TcpStream>>>;

/// A running coordinator node: accepts connections until [`GroupServer::stop`].
///
/// Each connection gets a reader and a writer thread; the group coordinator behind it is
/// shared by all of them.
pub struct GroupServer {
    local_addr: SocketAddr,
    stopping: Arc<AtomicBool>,
    connections: Connections,
    service: Arc<dyn GroupService>,
    acceptor: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for GroupServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupServer").field("local_addr", &self.local_addr).finish_non_exhaustive()
    }
}

impl GroupServer {
    /// Binds `config.listen` and serves the group APIs from `service`.
    pub fn with_service(
        config: &ServerConfig,
        service: Arc<dyn GroupService>,
    ) -> Result<GroupServer, ServerError> {
        let listener =
            TcpListener::bind(config.listen).map_err(|e| ServerError::Bind(config.listen, e.to_string()))?;
        let local_addr =
            listener.local_addr().map_err(|e| ServerError::Bind(config.listen, e.to_string()))?;
        let log_file = match &config.request_log {
            Some(path) => {
                Some(Arc::new(RequestLog::create(path).map_err(|e| ServerError::RequestLog(e.to_string()))?))
            }
            None => None,
        };
        let node = Arc::new(Node {
            node_id: config.node_id,
            host: local_addr.ip().to_string(),
            port: i32::from(local_addr.port()),
            topics: Topics::new(&config.topics),
            service: Arc::clone(&service),
            log: log_file,
        });
        let stopping = Arc::new(AtomicBool::new(false));
        let connections: Connections = Arc::default();
        let acceptor = {
            let (stopping, connections) = (Arc::clone(&stopping), Arc::clone(&connections));
            let (max_frame, verbose) = (config.limits.max_frame_bytes, config.verbose);
            thread::Builder::new()
                .name("group-server-accept".into())
                .spawn(move || accept_loop(&listener, &node, &stopping, &connections, max_frame, verbose))
                .map_err(|e| ServerError::Thread(e.to_string()))?
        };
        Ok(GroupServer { local_addr, stopping, connections, service, acceptor: Some(acceptor) })
    }

    /// The address the server listens on (with the real port when `listen` used port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, closes every connection and stops the coordinator.
    pub fn stop(&mut self) {
        if self.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        // Wakes the acceptor blocked in accept().
        let _ = TcpStream::connect(self.local_addr);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        if let Ok(connections) = self.connections.lock() {
            for stream in connections.values() {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
        self.service.stop();
    }

    /// Blocks until the server stops (the binary runs until it is killed).
    pub fn wait(mut self) {
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

impl Drop for GroupServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(
    listener: &TcpListener,
    node: &Arc<Node>,
    stopping: &Arc<AtomicBool>,
    connections: &Connections,
    max_frame_bytes: usize,
    verbose: bool,
) {
    let next_id = AtomicU64::new(0);
    for stream in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        let stream = match stream {
            Ok(s) => s,
            Err(e) => {
                log(&format!("accept failed: {e}"));
                continue;
            }
        };
        let Ok(peer) = stream.peer_addr() else { continue };
        let id = next_id.fetch_add(1, Ordering::Relaxed);
        if let (Ok(clone), Ok(mut map)) = (stream.try_clone(), connections.lock()) {
            map.insert(id, clone);
        }
        let (node, connections) = (Arc::clone(node), Arc::clone(connections));
        let spawned = thread::Builder::new().name(format!("conn-r-{peer}")).spawn(move || {
            connection::serve(node, stream, peer, max_frame_bytes, verbose);
            if let Ok(mut map) = connections.lock() {
                map.remove(&id);
            }
        });
        if let Err(e) = spawned {
            log(&format!("{peer}: cannot start connection thread: {e}"));
        }
    }
}
