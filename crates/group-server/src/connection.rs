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
//! Memory follows what arrives and what clients take, never what a header announces
//! ([`Budgets`]): a request's buffer grows with the bytes read, a request longer than a
//! read chunk first reserves its announced length from the node's
//! `queued.max.request.bytes` (its connection is not read until it fits, as Kafka's
//! `Selector` mutes a channel its `MemoryPool` cannot serve), and a connection whose
//! encoded replies are not taken is not read further (per connection and per node).
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
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::time::Instant;

use group_coordinator::Principal;

use crate::ConnectionLimits;
use crate::authenticate::{self, Security};
use crate::log::{log, warning};
use crate::metrics::{RequestStart, ServerMetrics};
use crate::node::{Node, Reply, RequestError, correlation_id};
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
    /// A reply. Boxed, so that an item is a pointer: the channel allocates its
    /// first block of 32 items when the connection opens, and ten thousand idle
    /// connections each keep theirs (2.8 KiB each unboxed, 0.3 KiB boxed).
    Reply(Box<Queued>),
    /// Write what came before, then close (after a malformed request).
    Close,
}

/// A reply, with the permit its request took from the connection's in-flight
/// allowance (given back once the reply is written) and, for the latency metric,
/// when its request was read.
struct Queued {
    reply: Reply,
    permit: OwnedSemaphorePermit,
    started: RequestStart,
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

/// What every connection of a node draws from: the request budget
/// (`queued.max.request.bytes`) and the reply bytes encoded but not yet written.
#[derive(Debug)]
pub(crate) struct Budgets {
    /// One permit per byte of `queued.max.request.bytes`, taken by requests longer
    /// than a read chunk for their announced length until they are handled.
    requests: Arc<Semaphore>,
    request_total: usize,
    /// Reply bytes encoded and not yet written, all connections together.
    replies_queued: AtomicUsize,
    reply_limit: usize,
    connection_reply_limit: usize,
    /// Times a connection was not read because the request budget was spent.
    request_waits: AtomicU64,
    /// Times a connection was not read because its replies were not taken.
    reply_waits: AtomicU64,
}

impl Budgets {
    /// The budgets `limits` set, none of them in use.
    pub(crate) fn new(limits: &ConnectionLimits) -> Budgets {
        let request_total = limits.queued_max_request_bytes.clamp(1, Semaphore::MAX_PERMITS);
        Budgets {
            requests: Arc::new(Semaphore::new(request_total)),
            request_total,
            replies_queued: AtomicUsize::new(0),
            reply_limit: limits.queued_max_response_bytes.max(1),
            connection_reply_limit: limits.queued_max_response_bytes_per_connection.max(1),
            request_waits: AtomicU64::new(0),
            reply_waits: AtomicU64::new(0),
        }
    }

    /// Request bytes reserved now (of `queued.max.request.bytes`).
    pub(crate) fn request_bytes_reserved(&self) -> usize {
        self.request_total - self.requests.available_permits()
    }

    /// Reply bytes encoded and not yet written, all connections together.
    pub(crate) fn response_bytes_queued(&self) -> usize {
        self.replies_queued.load(Ordering::Relaxed)
    }

    /// Times connections waited for the request budget, and for their replies to be taken.
    pub(crate) fn waits(&self) -> (u64, u64) {
        (self.request_waits.load(Ordering::Relaxed), self.reply_waits.load(Ordering::Relaxed))
    }

    /// Reserves room for a request body of `len` bytes, waiting (the connection
    /// unread) until the budget has it.
    async fn reserve(&self, len: usize) -> OwnedSemaphorePermit {
        // A budget smaller than the request (an embedder's limits, unchecked) would
        // never have room: such a request takes the whole budget.
        let n = u32::try_from(len.min(self.request_total)).unwrap_or(u32::MAX);
        if let Ok(permit) = Arc::clone(&self.requests).try_acquire_many_owned(n) {
            return permit;
        }
        self.request_waits.fetch_add(1, Ordering::Relaxed);
        loop {
            // The semaphore is never closed.
            if let Ok(permit) = Arc::clone(&self.requests).acquire_many_owned(n).await {
                return permit;
            }
        }
    }
}

/// What the reader and writer of one connection share.
struct Activity {
    /// Replies read but not written yet.
    in_flight: AtomicUsize,
    /// Bytes of this connection's encoded replies not written yet (also counted in
    /// [`Budgets::replies_queued`]).
    queued: AtomicUsize,
    /// Signalled by the writer after each write, for a reader waiting for its
    /// replies to be taken.
    written: Notify,
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

    /// Counts `bytes` of reply encoded for this connection and not yet written.
    #[inline]
    fn queue(&self, bytes: usize, budgets: &Budgets) {
        self.queued.fetch_add(bytes, Ordering::Relaxed);
        budgets.replies_queued.fetch_add(bytes, Ordering::Relaxed);
    }

    /// `bytes` of reply were written: no longer counted.
    #[inline]
    fn wrote(&self, bytes: usize, budgets: &Budgets) {
        self.queued.fetch_sub(bytes, Ordering::Relaxed);
        budgets.replies_queued.fetch_sub(bytes, Ordering::Relaxed);
        self.written.notify_one();
    }

    /// Whether the connection must not be read until its client takes replies: it
    /// holds more than its share, or some while the node is over its budget.
    #[inline]
    fn replies_over_budget(&self, budgets: &Budgets) -> bool {
        let own = self.queued.load(Ordering::Relaxed);
        own >= budgets.connection_reply_limit
            || (own > 0 && budgets.replies_queued.load(Ordering::Relaxed) >= budgets.reply_limit)
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
    let activity = Activity {
        in_flight: AtomicUsize::new(0),
        queued: AtomicUsize::new(0),
        written: Notify::new(),
        last_ms: AtomicU64::new(0),
        epoch: Instant::now(),
    };
    let reader = read_loop(node, input, session, leftover, limits, &activity, tx, shutdown);
    let writer = write_loop(output, rx, peer, &activity, node);
    let (stop, ()) = tokio::join!(reader, writer);
    // Kafka's `ShareSessionCache` drops the share session a connection opened when it closes.
    node.share_sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner).connection_closed(peer);
    // Replies never written (the connection failed or closed) leave the node's count.
    let unwritten = activity.queued.load(Ordering::Relaxed);
    node.budgets.replies_queued.fetch_sub(unwritten, Ordering::Relaxed);
    stop
}

/// Where a connection's request bytes come from: a plain socket or a TLS stream.
pub(crate) trait Input: Send {
    /// Reads what has arrived into `buf` (growing it as needed towards `want`
    /// bytes, the whole request when its length is known); 0 at end of stream.
    /// Cancel-safe: dropped before it completes, it has read nothing.
    fn read_into<'a>(
        &'a mut self,
        buf: &'a mut BytesMut,
        want: usize,
    ) -> impl Future<Output = io::Result<usize>> + Send + 'a;
}

/// Room for a read. The buffer grows with what has arrived (at most doubling, one
/// chunk at least), never straight to what a header announces: a header alone
/// costs a chunk, however long the request it announces.
fn make_room(buf: &mut BytesMut, want: usize) {
    let (len, spare) = (buf.len(), buf.capacity() - buf.len());
    let missing = want.saturating_sub(len);
    if spare < 64 || (missing > spare && spare < READ_CHUNK) {
        let more = if missing > 0 { missing.min(len.max(READ_CHUNK)) } else { READ_CHUNK };
        buf.reserve(more.max(64));
    }
}

impl Input for OwnedReadHalf {
    /// Waits for readiness before it takes a buffer: an idle plain connection whose
    /// buffer was given back holds none while it waits.
    async fn read_into(&mut self, buf: &mut BytesMut, want: usize) -> io::Result<usize> {
        loop {
            self.readable().await?;
            make_room(buf, want);
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
    async fn read_into(&mut self, buf: &mut BytesMut, want: usize) -> io::Result<usize> {
        make_room(buf, want);
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
    let budgets = &*node.budgets;
    loop {
        if *stopping.borrow() {
            return Stop::Done;
        }
        // Replies encoded and not taken: the connection is not read until its client
        // reads (Kafka mutes a channel while its response is in flight).
        if activity.replies_over_budget(budgets) {
            budgets.reply_waits.fetch_add(1, Ordering::Relaxed);
            loop {
                let written = activity.written.notified();
                tokio::pin!(written);
                written.as_mut().enable();
                if !activity.replies_over_budget(budgets) {
                    break;
                }
                tokio::select! {
                    biased;
                    () = &mut stop => return Stop::Done,
                    () = written => {}
                }
            }
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
            frame = frames.next(activity, budgets) => frame,
            () = &mut stop => return Stop::Done,
        };
        // `_reserved`: the request's share of the budget, given back once handled.
        let (frame, _reserved) = match frame {
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
            Ok(reply) => {
                activity.queue(reply.encoded_len(), budgets);
                Item::Reply(Box::new(Queued { reply, permit, started }))
            }
            Err(e) => {
                let cid = cid.map_or_else(|| "?".to_owned(), |c| c.to_string());
                let _ = tx.send(Item::Close);
                let what = match e {
                    RequestError::UnsupportedApi(_) | RequestError::UnsupportedVersion { .. } => {
                        "unsupported request"
                    }
                    _ => "malformed request",
                };
                // Decoders' messages may end with a newline: one line per event.
                return Stop::Refused(format!("{what} (correlation id {cid}): {}", e.to_string().trim_end()));
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

/// A request frame, with its reservation of the request budget if it took one.
type Frame = (Bytes, Option<OwnedSemaphorePermit>);

impl<R: Input> FrameReader<R> {
    /// The next frame; `Ok(None)` at a clean end of stream.
    async fn next(&mut self, activity: &Activity, budgets: &Budgets) -> Result<Option<Frame>, Stop> {
        if self.buf.is_empty() && !self.wait_for_bytes(activity).await? {
            return Ok(None);
        }
        // A request has begun: the whole of it must arrive by the deadline.
        let mut deadline = Instant::now() + self.limits.request_read_timeout;
        let mut reserved = None;
        loop {
            let want = match self.announced()? {
                Some(len) if self.buf.len() >= 4 + len => {
                    self.buf.advance(4);
                    let frame = self.buf.split_to(len).freeze();
                    activity.touch();
                    return Ok(Some((frame, reserved)));
                }
                Some(len) => {
                    if 4 + len > READ_CHUNK && reserved.is_none() {
                        reserved = Some(budgets.reserve(len).await);
                        // Time spent waiting for the budget is the server's, not the client's.
                        deadline = Instant::now() + self.limits.request_read_timeout;
                    }
                    4 + len
                }
                None => 4,
            };
            let read = tokio::time::timeout_at(deadline, self.input.read_into(&mut self.buf, want)).await;
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
                read = self.input.read_into(&mut self.buf, 0) => match read {
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

    /// The body length the next frame's prefix announces, once the prefix is in;
    /// nothing is allocated for it (a header costs what arrived, not what it claims).
    fn announced(&self) -> Result<Option<usize>, Stop> {
        let Some(prefix) = self.buf.get(..4) else { return Ok(None) };
        let len = i32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
        let max = self.limits.max_frame_bytes;
        let len = usize::try_from(len).ok().filter(|&l| l <= max).ok_or_else(|| {
            Stop::Refused(format!("frame length {len} out of range (max {max}, socket.request.max.bytes)"))
        })?;
        Ok(Some(len))
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
    node: &Node,
) {
    let metrics: &ServerMetrics = &node.metrics;
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
                Item::Reply(queued) => match resolve(queued.reply, activity, &node.budgets).await {
                    Ok(Some(body)) => {
                        append_frame(&mut out, body);
                        permits.push((queued.permit, queued.started));
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
                Ok(Item::Reply(queued)) if matches!(queued.reply, Reply::Now(_)) => {
                    item = Some(Item::Reply(queued));
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
            activity.wrote(out.len(), &node.budgets);
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

/// The body of a reply once it may be sent; `None` for no response at all. A body
/// encoded only now (a parked answer) is counted as queued from now on; the reader
/// counted the others.
async fn resolve(
    reply: Reply,
    activity: &Activity,
    budgets: &Budgets,
) -> Result<Option<BytesMut>, crate::RequestError> {
    match reply {
        Reply::Now(body) => Ok(Some(body)),
        Reply::NotBefore(at, body) => {
            tokio::time::sleep_until(Instant::from_std(at)).await;
            Ok(Some(body))
        }
        Reply::Later(answer) => {
            let body = answer.await?;
            activity.queue(body.len(), budgets);
            Ok(Some(body))
        }
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
