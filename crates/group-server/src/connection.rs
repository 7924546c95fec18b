//! One TCP connection, as one task on the front end's runtime: a reader that frames
//! requests and hands them to the node, and a writer that sends the replies strictly
//! in request order (Kafka clients pipeline and match replies by order).
//!
//! A JoinGroup parked at its barrier holds only the writer; the reader keeps submitting
//! what follows (a Heartbeat on the same connection is registered at once and answered
//! after the JoinGroup, as Kafka clients expect: real-clients.md section 5.4), up to
//! [`ConnectionLimits::max_in_flight_per_connection`] replies not yet written, after
//! which the connection is not read until one is.
//!
//! The same code serves a plain socket and a TLS stream ([`Input`] is how frames are
//! read from either; the plain socket keeps its readiness-then-`try_read` path, so an
//! idle connection holds no read buffer). TLS handshakes and SASL authentication run
//! here too, in the connection's task, never in the accept loop.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedReadHalf;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::time::Instant;

use group_coordinator::Principal;

use crate::ConnectionLimits;
use crate::authenticate::{self, Security};
use crate::log::{log, warning};
use crate::metrics::{RequestStart, ServerMetrics};
use crate::node::{Node, Reply, correlation_id};
use crate::session::Session;

/// How long an idle connection keeps its read buffer before giving it back: a busy
/// connection reuses one buffer, ten thousand idle ones hold none.
const KEEP_BUFFER: Duration = Duration::from_secs(1);

/// The first read buffer of a connection; one request of a consumer fits.
const READ_CHUNK: usize = 4096;

/// Replies batched into one write when they are ready together.
const WRITE_BATCH: usize = 64 * 1024;

/// What the reader hands the writer.
enum Item {
    /// A reply, with the permit its request took from the connection's in-flight
    /// allowance: given back once the reply is written; and, for the latency
    /// metric, when its request was read.
    Reply(Reply, OwnedSemaphorePermit, RequestStart),
    /// Write what came before, then close (after a malformed request).
    Close,
}

/// Why a connection stopped being read.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The client closed its end, or the server is stopping.
    Done,
    /// Logged and closed.
    Refused(String),
    /// The socket failed (a reset): closed without a line unless verbose.
    Io(io::Error),
}

/// What the reader and writer of one connection share.
struct Activity {
    /// Replies read but not written yet.
    in_flight: AtomicUsize,
    /// When the connection last read or wrote, in ms since `epoch`.
    last_ms: AtomicU64,
    epoch: Instant,
}

impl Activity {
    fn touch(&self) {
        let ms = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.epoch + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }
}

/// Serves one connection until it closes: the TLS handshake and SASL authentication
/// first when the listener has them, then requests.
pub(crate) async fn serve(
    node: Arc<Node>,
    stream: TcpStream,
    peer: SocketAddr,
    limits: ConnectionLimits,
    verbose: bool,
    shutdown: watch::Receiver<bool>,
    security: Arc<Security>,
) {
    let _ = stream.set_nodelay(true);
    if verbose {
        log!("{peer}: connected");
    }
    let stop = match &security.tls {
        None if security.sasl.is_none() => {
            let (read_half, write_half) = stream.into_split();
            let session = Session::new(peer, Principal::ANONYMOUS);
            requests(&node, read_half, write_half, session, BytesMut::new(), &limits, shutdown).await
        }
        // Boxed: a plaintext connection's task stays as small as it was without TLS
        // and SASL (ten thousand idle consumers hold one each).
        None => Box::pin(serve_sasl(&node, stream, peer, &limits, &security, shutdown, verbose)).await,
        Some(acceptor) => {
            Box::pin(serve_tls(&node, acceptor, stream, peer, &limits, &security, shutdown, verbose)).await
        }
    };
    match stop {
        Stop::Done => {}
        Stop::Refused(why) => warning!("{peer}: closing connection: {why}"),
        Stop::Io(e) if verbose => log!("{peer}: connection failed: {e}"),
        Stop::Io(_) => {}
    }
    if verbose {
        log!("{peer}: closed");
    }
}

/// SASL_PLAINTEXT: the SASL exchange, then requests.
async fn serve_sasl(
    node: &Node,
    mut stream: TcpStream,
    peer: SocketAddr,
    limits: &ConnectionLimits,
    security: &Security,
    shutdown: watch::Receiver<bool>,
    verbose: bool,
) -> Stop {
    match authenticate::sasl(node, &mut stream, peer, limits, security, shutdown.clone(), verbose).await {
        Ok((session, leftover)) => {
            let (read_half, write_half) = stream.into_split();
            requests(node, read_half, write_half, session, leftover, limits, shutdown).await
        }
        Err(stop) => stop,
    }
}

/// SSL and SASL_SSL: the TLS handshake, the SASL exchange if the listener has SASL
/// (its principal wins over the certificate's, as in Kafka's SASL_SSL), then requests.
#[allow(clippy::too_many_arguments)]
async fn serve_tls(
    node: &Node,
    acceptor: &tokio_rustls::TlsAcceptor,
    stream: TcpStream,
    peer: SocketAddr,
    limits: &ConnectionLimits,
    security: &Security,
    shutdown: watch::Receiver<bool>,
    verbose: bool,
) -> Stop {
    let (mut stream, principal) =
        match authenticate::tls(acceptor, stream, peer, limits, security, shutdown.clone(), verbose).await {
            Ok(done) => done,
            Err(stop) => return stop,
        };
    let authenticated = if security.sasl.is_some() {
        authenticate::sasl(node, &mut stream, peer, limits, security, shutdown.clone(), verbose).await
    } else {
        Ok((Session::new(peer, principal), BytesMut::new()))
    };
    match authenticated {
        Ok((session, leftover)) => {
            let (read_half, write_half) = tokio::io::split(stream);
            requests(node, TlsInput(read_half), write_half, session, leftover, limits, shutdown).await
        }
        Err(stop) => stop,
    }
}

/// Serves requests on an authenticated connection until it closes; `leftover` holds
/// bytes read past the authentication's last frame.
async fn requests<R: Input, W: AsyncWrite + Unpin + Send>(
    node: &Node,
    input: R,
    output: W,
    session: Session,
    leftover: BytesMut,
    limits: &ConnectionLimits,
    shutdown: watch::Receiver<bool>,
) -> Stop {
    let peer = session.peer;
    // The semaphore bounds what is in flight; the channel needs no bound of its own.
    let (tx, rx) = mpsc::unbounded_channel();
    let activity =
        Activity { in_flight: AtomicUsize::new(0), last_ms: AtomicU64::new(0), epoch: Instant::now() };
    let reader = read_loop(node, input, session, leftover, limits, &activity, tx, shutdown);
    let writer = write_loop(output, rx, peer, &activity, &node.metrics);
    let (stop, ()) = tokio::join!(reader, writer);
    stop
}

/// Where a connection's request bytes come from: a plain socket or a TLS stream.
pub(crate) trait Input: Send {
    /// Reads what has arrived into `buf` (growing it as needed); 0 at end of stream.
    /// Cancel-safe: dropped before it completes, it has read nothing.
    fn read_into<'a>(
        &'a mut self,
        buf: &'a mut BytesMut,
    ) -> impl Future<Output = io::Result<usize>> + Send + 'a;
}

/// Room for a read: a chunk when the buffer is (nearly) full.
fn make_room(buf: &mut BytesMut) {
    if buf.capacity() - buf.len() < 64 {
        buf.reserve(READ_CHUNK);
    }
}

impl Input for OwnedReadHalf {
    /// Waits for readiness before it takes a buffer: an idle plain connection whose
    /// buffer was given back holds none while it waits.
    async fn read_into(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        loop {
            self.readable().await?;
            make_room(buf);
            match self.try_read_buf(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                other => return other,
            }
        }
    }
}

/// The read half of a TLS stream (rustls decrypts into its own buffers; the plain
/// readiness path does not apply).
pub(crate) struct TlsInput<S>(ReadHalf<S>);

impl<S: AsyncRead + Send> Input for TlsInput<S> {
    async fn read_into(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        make_room(buf);
        self.0.read_buf(buf).await
    }
}

#[allow(clippy::too_many_arguments)]
async fn read_loop<R: Input>(
    node: &Node,
    input: R,
    session: Session,
    leftover: BytesMut,
    limits: &ConnectionLimits,
    activity: &Activity,
    tx: mpsc::UnboundedSender<Item>,
    shutdown: watch::Receiver<bool>,
) -> Stop {
    // Checked before each request, so that a client that never pauses still stops
    // being read when the server stops.
    let stopping = shutdown.clone();
    let mut shutdown = shutdown;
    let mut session = session;
    let first_check = Instant::now() + KEEP_BUFFER.min(limits.connections_max_idle);
    let mut frames = FrameReader {
        input,
        buf: leftover,
        limits: *limits,
        timer: Box::pin(tokio::time::sleep_until(first_check)),
    };
    let allowance = Arc::new(Semaphore::new(limits.max_in_flight_per_connection.max(1)));
    // One future for "stop reading", made once and polled only when the reader would
    // wait anyway: per-request futures on the watch and the channel cost more than
    // the heartbeat they accompany.
    let stop = async {
        tokio::select! {
            _ = shutdown.wait_for(|stopping| *stopping) => {}
            // The writer gave up (the peer stopped reading or reset): stop reading too.
            () = tx.closed() => {}
        }
    };
    tokio::pin!(stop);
    loop {
        if *stopping.borrow() {
            return Stop::Done;
        }
        // With `max_in_flight_per_connection` replies unwritten the connection is not
        // read (Kafka mutes a channel the same way); no other connection is affected.
        let permit = match Arc::clone(&allowance).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => tokio::select! {
                biased;
                () = &mut stop => return Stop::Done,
                permit = Arc::clone(&allowance).acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => return Stop::Done,
                },
            },
        };
        let frame = tokio::select! {
            biased;
            frame = frames.next(activity) => frame,
            () = &mut stop => return Stop::Done,
        };
        let frame = match frame {
            Ok(Some(frame)) => frame,
            Ok(None) => return Stop::Done,
            Err(stop) => {
                if matches!(stop, Stop::Refused(_)) {
                    let _ = tx.send(Item::Close);
                }
                return stop;
            }
        };
        let cid = correlation_id(&frame);
        let started = node.metrics.request_read(&frame);
        let item = match node.handle(frame, &mut session) {
            Ok(reply) => Item::Reply(reply, permit, started),
            Err(e) => {
                let cid = cid.map_or_else(|| "?".to_owned(), |c| c.to_string());
                let _ = tx.send(Item::Close);
                return Stop::Refused(format!("malformed request (correlation id {cid}): {e}"));
            }
        };
        activity.in_flight.fetch_add(1, Ordering::Relaxed);
        if tx.send(item).is_err() {
            return Stop::Done;
        }
    }
}

/// Length-prefixed frames off the read half, with the idle and trickle limits.
struct FrameReader<R> {
    input: R,
    buf: BytesMut,
    limits: ConnectionLimits,
    /// When to look at the connection's idleness next.
    timer: std::pin::Pin<Box<tokio::time::Sleep>>,
}

impl<R: Input> FrameReader<R> {
    /// The next frame; `Ok(None)` at a clean end of stream.
    async fn next(&mut self, activity: &Activity) -> Result<Option<Bytes>, Stop> {
        if self.buf.is_empty() && !self.wait_for_bytes(activity).await? {
            return Ok(None);
        }
        // A request has begun: the whole of it must arrive by the deadline.
        let deadline = Instant::now() + self.limits.request_read_timeout;
        loop {
            if let Some(frame) = self.split_frame()? {
                activity.touch();
                return Ok(Some(frame));
            }
            let read = tokio::time::timeout_at(deadline, self.input.read_into(&mut self.buf)).await;
            partial_read(read, self.buf.len(), &self.limits)?;
        }
    }

    /// Waits for the first byte of a request; false at end of stream. Gives the
    /// read buffer back after [`KEEP_BUFFER`] of quiet, and closes a connection idle
    /// past `connections.max.idle.ms` with nothing in flight.
    ///
    /// The timer is lazy: it is not re-armed per request (a busy connection would
    /// pay a timer-wheel update per heartbeat), only checked when it fires, against
    /// the connection's last activity.
    async fn wait_for_bytes(&mut self, activity: &Activity) -> Result<bool, Stop> {
        let idle = self.limits.connections_max_idle;
        loop {
            tokio::select! {
                biased;
                read = self.input.read_into(&mut self.buf) => match read {
                    Ok(0) => return Ok(false),
                    Ok(_) => return Ok(true),
                    Err(e) => return Err(Stop::Io(e)),
                },
                () = self.timer.as_mut() => {
                    let now = Instant::now();
                    let last = activity.last();
                    if self.buf.capacity() > 0 && now >= last + KEEP_BUFFER {
                        self.buf = BytesMut::new();
                    }
                    let quiet_for = now.saturating_duration_since(last);
                    if activity.in_flight.load(Ordering::Relaxed) == 0 && quiet_for >= idle {
                        return Err(Stop::Refused(format!(
                            "idle for {} ms (connections.max.idle.ms)",
                            quiet_for.as_millis()
                        )));
                    }
                    let mut next = if self.buf.capacity() > 0 { last + KEEP_BUFFER.min(idle) } else { last + idle };
                    if next <= now {
                        // Quiet but with a reply still owed: look again later.
                        next = now + KEEP_BUFFER.min(idle);
                    }
                    self.timer.as_mut().reset(next);
                }
            }
        }
    }

    /// Takes one whole frame off the buffer, without copying its bytes.
    fn split_frame(&mut self) -> Result<Option<Bytes>, Stop> {
        let Some(prefix) = self.buf.get(..4) else { return Ok(None) };
        let len = i32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
        let max = self.limits.max_frame_bytes;
        let len = usize::try_from(len).ok().filter(|&l| l <= max).ok_or_else(|| {
            Stop::Refused(format!("frame length {len} out of range (max {max}, socket.request.max.bytes)"))
        })?;
        if self.buf.len() < 4 + len {
            // One allocation for the rest of a large frame, not one per chunk.
            self.buf.reserve(4 + len - self.buf.len());
            return Ok(None);
        }
        self.buf.advance(4);
        Ok(Some(self.buf.split_to(len).freeze()))
    }
}

/// What one read of a request that has begun means: more bytes, or why the
/// connection stops (closed mid-request, or too slow: `request_read_timeout`).
pub(crate) fn partial_read(
    read: Result<io::Result<usize>, tokio::time::error::Elapsed>,
    read_so_far: usize,
    limits: &ConnectionLimits,
) -> Result<(), Stop> {
    match read {
        Ok(Ok(0)) => Err(Stop::Refused(format!(
            "the connection closed in the middle of a request ({read_so_far} bytes of it read)"
        ))),
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(Stop::Io(e)),
        Err(_) => Err(Stop::Refused(format!(
            "a request did not arrive whole within {} ms ({read_so_far} bytes read)",
            limits.request_read_timeout.as_millis()
        ))),
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut half: W,
    mut rx: mpsc::UnboundedReceiver<Item>,
    peer: SocketAddr,
    activity: &Activity,
    metrics: &ServerMetrics,
) {
    let mut out = BytesMut::new();
    let mut permits = Vec::new();
    let mut next = rx.recv().await;
    while let Some(item) = next.take() {
        let mut written = 0;
        let mut close = false;
        let mut item = Some(item);
        // Replies ready together go out in one write.
        while let Some(current) = item.take() {
            match current {
                Item::Close => {
                    close = true;
                    break;
                }
                Item::Reply(reply, permit, started) => match resolve(reply).await {
                    Ok(Some(body)) => {
                        append_frame(&mut out, body);
                        permits.push((permit, started));
                    }
                    Ok(None) => {}
                    Err(e) => {
                        warning!("{peer}: closing connection: {e}");
                        close = true;
                        break;
                    }
                },
            }
            written += 1;
            if out.len() >= WRITE_BATCH {
                break;
            }
            match rx.try_recv() {
                Ok(Item::Reply(reply @ Reply::Now(_), permit, started)) => {
                    item = Some(Item::Reply(reply, permit, started));
                }
                Ok(other) => next = Some(other),
                Err(_) => {}
            }
        }
        if !out.is_empty() {
            // A no-op on a plain socket; TLS may hold the last record until flushed.
            if half.write_all(&out).await.is_err() || half.flush().await.is_err() {
                break;
            }
            metrics.replies_written(permits.iter().map(|(_, started)| started), out.len());
            out.clear();
            activity.touch();
        }
        permits.clear();
        activity.in_flight.fetch_sub(written, Ordering::Relaxed);
        if close {
            break;
        }
        if next.is_none() {
            next = rx.recv().await;
        }
    }
    // The reader sees the channel closed and stops; the client sees the end of stream.
    drop(rx);
    let _ = half.shutdown().await;
}

/// The body of a reply once it may be sent; `None` for no response at all.
async fn resolve(reply: Reply) -> Result<Option<BytesMut>, crate::RequestError> {
    match reply {
        Reply::Now(body) => Ok(Some(body)),
        Reply::NotBefore(at, body) => {
            tokio::time::sleep_until(Instant::from_std(at)).await;
            Ok(Some(body))
        }
        Reply::Later(answer) => answer.await.map(Some),
        Reply::Nothing => Ok(None),
    }
}

/// Queues a frame (prefix included) for the next write: the frame itself when it
/// is the only one, else a copy behind the others.
fn append_frame(out: &mut BytesMut, frame: BytesMut) {
    if out.is_empty() {
        *out = frame;
    } else {
        out.extend_from_slice(&frame);
    }
}
