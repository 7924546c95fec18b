//! The `--metrics-listen` endpoint: a deliberately small HTTP/1.1 responder on
//! the server's runtime that answers `GET /metrics` (and `HEAD`) with the
//! [`Exporter`]'s text, 404 for other paths, 405 for other methods, 400 for
//! what does not parse.
//!
//! A scraper is untrusted: one request per connection (`Connection: close`), a
//! request head of at most [`MAX_HEAD`] bytes that must arrive within
//! [`READ_TIMEOUT`], a response that must be taken within [`WRITE_TIMEOUT`], and
//! at most [`MAX_SCRAPERS`] connections at once. When every slot is taken, a new
//! connection evicts the oldest one still waiting for its request head (a real
//! scraper sends its head at once, so silent connections cannot keep it out); only
//! when every slot is answering is it closed unanswered. Evictions and refusals are
//! counted and logged at most once per [`LOG_EVERY`]. So a slow or hostile scraper
//! holds a bounded amount of memory, no thread, and nothing the Kafka listener or a
//! real scraper needs.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio::sync::{Notify, Semaphore, watch};

use crate::ServerError;
use crate::log::warning;
use crate::metrics::{CONTENT_TYPE, Exporter};

/// The largest request head (request line and headers) read.
const MAX_HEAD: usize = 8 * 1024;

/// How long a scraper has to send its request head, from its connection: a
/// scraper sends it at once, so a second is ample.
const READ_TIMEOUT: Duration = Duration::from_secs(1);

/// At most one log line about evicted or refused scrape connections per period.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// How long a new connection waits for the slot it evicted someone from.
const EVICTION_WAIT: Duration = Duration::from_millis(200);

/// How long a scraper has to take the response.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Scrape connections served at once; Prometheus uses one per target.
const MAX_SCRAPERS: usize = 16;

/// A pause after a failed accept (out of file descriptors), as for the Kafka listener.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Binds `addr` (before the runtime starts, so that a port in use fails the
/// start cleanly).
/// Returns the listener with its address (the real port for port 0).
pub(crate) fn bind(addr: SocketAddr) -> Result<(StdListener, SocketAddr), ServerError> {
    let listener = StdListener::bind(addr).map_err(|e| bind_error(addr, e))?;
    listener.set_nonblocking(true).map_err(|e| bind_error(addr, e))?;
    let local = listener.local_addr().map_err(|e| bind_error(addr, e))?;
    Ok((listener, local))
}

fn bind_error(addr: SocketAddr, source: io::Error) -> ServerError {
    ServerError::Bind { addr, what: "--metrics-listen: ", hint: "", source }
}

/// Serves scrapes on `listener` (from [`bind`]) on `runtime` until `stopping`
/// turns true; returns its address.
pub(crate) fn spawn(
    runtime: &Runtime,
    (listener, local): (StdListener, SocketAddr),
    exporter: Exporter,
    stopping: watch::Receiver<bool>,
) -> Result<SocketAddr, ServerError> {
    let listener = {
        let _entered = runtime.enter();
        TcpListener::from_std(listener).map_err(|e| bind_error(local, e))?
    };
    runtime.spawn(accept_loop(listener, Arc::new(exporter), stopping));
    Ok(local)
}

/// The scrape connections still waiting for their request head, oldest first:
/// the ones a new connection may evict when every slot is taken.
#[derive(Debug, Default)]
struct Waiting {
    queue: Mutex<VecDeque<(u64, Arc<Notify>)>>,
}

impl Waiting {
    fn push(&self, id: u64, evict: Arc<Notify>) {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner).push_back((id, evict));
    }

    fn remove(&self, id: u64) {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner).retain(|(i, _)| *i != id);
    }

    /// Tells the oldest waiting connection to close; false when none waits.
    fn evict_oldest(&self) -> bool {
        let oldest = self.queue.lock().unwrap_or_else(PoisonError::into_inner).pop_front();
        oldest.map(|(_, evict)| evict.notify_one()).is_some()
    }
}

/// Scrape connections evicted and refused, counted for `/metrics` and logged at a
/// limited rate.
#[derive(Debug, Default)]
pub(crate) struct ScrapeLimits {
    evicted: AtomicU64,
    refused: AtomicU64,
    last_line: Mutex<Option<(Instant, u64, u64)>>,
}

impl ScrapeLimits {
    /// (evicted, refused) since the start.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (self.evicted.load(Ordering::Relaxed), self.refused.load(Ordering::Relaxed))
    }

    /// One line per [`LOG_EVERY`] at most, with what happened since the last one.
    fn log(&self) {
        let (evicted, refused) = self.counts();
        let mut last = self.last_line.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let (then, evicted_before, refused_before) = last.unwrap_or((now - LOG_EVERY, 0, 0));
        if now.duration_since(then) >= LOG_EVERY {
            *last = Some((now, evicted, refused));
            drop(last);
            warning!(
                "metrics endpoint: all {MAX_SCRAPERS} scraper slots taken: {} silent connection(s) \
                 evicted, {} connection(s) refused unanswered (at most one such line per {}s)",
                evicted - evicted_before,
                refused - refused_before,
                LOG_EVERY.as_secs()
            );
        }
    }
}

async fn accept_loop(listener: TcpListener, exporter: Arc<Exporter>, mut stopping: watch::Receiver<bool>) {
    let scrapers = Arc::new(Semaphore::new(MAX_SCRAPERS));
    let waiting = Arc::new(Waiting::default());
    let mut next_id = 0u64;
    loop {
        let accepted = tokio::select! {
            biased;
            _ = stopping.wait_for(|s| *s) => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                let permit = match Arc::clone(&scrapers).try_acquire_owned() {
                    Ok(permit) => Some(permit),
                    Err(_) => {
                        let limits = exporter.scrape_limits();
                        let permit = if waiting.evict_oldest() {
                            limits.evicted.fetch_add(1, Ordering::Relaxed);
                            tokio::time::timeout(EVICTION_WAIT, Arc::clone(&scrapers).acquire_owned())
                                .await
                                .ok()
                                .and_then(Result::ok)
                        } else {
                            None
                        };
                        if permit.is_none() {
                            limits.refused.fetch_add(1, Ordering::Relaxed);
                        }
                        limits.log();
                        permit
                    }
                };
                // Refused, the connection is closed at once: it costs a file
                // descriptor for a moment and nothing else.
                let Some(permit) = permit else { continue };
                let exporter = Arc::clone(&exporter);
                let (id, evict) = (next_id, Arc::new(Notify::new()));
                next_id += 1;
                waiting.push(id, Arc::clone(&evict));
                let waiting = Arc::clone(&waiting);
                tokio::spawn(async move {
                    if let Err(e) = answer(stream, &exporter, || waiting.remove(id), &evict).await {
                        // Expected of port scanners and impatient scrapers: not worth a warning each.
                        tracing::debug!(target: "group_server", %peer, "metrics connection: {e}");
                    }
                    waiting.remove(id);
                    drop(permit);
                });
            }
            Err(e) => {
                warning!("metrics listener: accept failed: {e}; retrying in {ACCEPT_BACKOFF:?}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
            }
        }
    }
}

/// Reads one request head and writes one response; `head_read` is called once the
/// head is in (the connection can no longer be evicted), and `evict` closes it
/// before that.
async fn answer(
    mut stream: TcpStream,
    exporter: &Exporter,
    head_read: impl FnOnce(),
    evict: &Notify,
) -> io::Result<()> {
    let mut buf = vec![0u8; MAX_HEAD];
    let head = tokio::select! {
        head = tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream, &mut buf)) => head,
        () = evict.notified() => {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "evicted before sending a request: every slot was taken"));
        }
    };
    head_read();
    let response = match head {
        Err(_) => response(Status::RequestTimeout, ""),
        Ok(Err(e)) => return Err(e),
        Ok(Ok(Head::Closed)) => return Ok(()),
        Ok(Ok(Head::TooLarge)) => response(Status::HeadTooLarge, ""),
        Ok(Ok(Head::Complete(len))) => match route(&buf[..len]) {
            Route::Metrics { head_only } => {
                let body = exporter.render();
                let mut out = response(Status::Ok, &body);
                if head_only {
                    out.truncate(out.len() - body.len());
                }
                out
            }
            Route::NotFound => response(Status::NotFound, "not found: the metrics are at /metrics\n"),
            Route::MethodNotAllowed => response(Status::MethodNotAllowed, "use GET /metrics\n"),
            Route::BadRequest => response(Status::BadRequest, "bad request\n"),
        },
    };
    tokio::time::timeout(WRITE_TIMEOUT, async {
        stream.write_all(&response).await?;
        stream.shutdown().await
    })
    .await
    .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "the scraper did not take the response in time"))?
}

/// What [`read_head`] found.
#[derive(Debug, PartialEq, Eq)]
enum Head {
    /// The head is the first `.0` bytes of the buffer (its blank line included).
    Complete(usize),
    /// The buffer filled up before the blank line.
    TooLarge,
    /// The peer closed before a whole head (with nothing, or a fragment).
    Closed,
}

async fn read_head(stream: &mut TcpStream, buf: &mut [u8]) -> io::Result<Head> {
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            return Ok(Head::TooLarge);
        }
        let n = stream.read(&mut buf[filled..]).await?;
        if n == 0 {
            return Ok(Head::Closed);
        }
        // The blank line may straddle two reads: look a little before the new bytes.
        let from = filled.saturating_sub(3);
        filled += n;
        if let Some(end) = head_end(&buf[from..filled]) {
            return Ok(Head::Complete(from + end));
        }
    }
}

/// The length of the head in `bytes` up to and including its blank line
/// (`\r\n\r\n`, or a bare `\n\n` from a lenient client), if it is there.
fn head_end(bytes: &[u8]) -> Option<usize> {
    let crlf = bytes.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
    let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// What a request head asks for.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    /// The exposition; without its body for HEAD.
    Metrics { head_only: bool },
    /// A path other than `/metrics`.
    NotFound,
    /// `/metrics` with a method other than GET or HEAD.
    MethodNotAllowed,
    /// Not an HTTP/1.x request line.
    BadRequest,
}

/// Reads the request line; the headers are not needed.
fn route(head: &[u8]) -> Route {
    let line_end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
    let Ok(line) = std::str::from_utf8(&head[..line_end]) else { return Route::BadRequest };
    let mut parts = line.trim_end_matches('\r').split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Route::BadRequest;
    };
    let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphabetic());
    if !token(method) || !target.starts_with('/') || !matches!(version, "HTTP/1.0" | "HTTP/1.1") {
        return Route::BadRequest;
    }
    let path = target.split_once('?').map_or(target, |(path, _query)| path);
    match (path, method) {
        ("/metrics", "GET") => Route::Metrics { head_only: false },
        ("/metrics", "HEAD") => Route::Metrics { head_only: true },
        ("/metrics", _) => Route::MethodNotAllowed,
        _ => Route::NotFound,
    }
}

#[derive(Debug, Clone, Copy)]
enum Status {
    Ok,
    BadRequest,
    NotFound,
    MethodNotAllowed,
    RequestTimeout,
    HeadTooLarge,
}

impl Status {
    fn line(self) -> &'static str {
        match self {
            Status::Ok => "200 OK",
            Status::BadRequest => "400 Bad Request",
            Status::NotFound => "404 Not Found",
            Status::MethodNotAllowed => "405 Method Not Allowed",
            Status::RequestTimeout => "408 Request Timeout",
            Status::HeadTooLarge => "431 Request Header Fields Too Large",
        }
    }
}

/// A whole response, body included.
fn response(status: Status, body: &str) -> Vec<u8> {
    let content_type = if matches!(status, Status::Ok) { CONTENT_TYPE } else { "text/plain; charset=utf-8" };
    let allow = if matches!(status, Status::MethodNotAllowed) { "Allow: GET, HEAD\r\n" } else { "" };
    let mut out = format!(
        "HTTP/1.1 {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n",
        status.line(),
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_path_then_method() {
        let r = |s: &str| route(s.as_bytes());
        assert_eq!(r("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), Route::Metrics { head_only: false });
        assert_eq!(r("GET /metrics?name[]=x HTTP/1.0\r\n\r\n"), Route::Metrics { head_only: false });
        assert_eq!(r("HEAD /metrics HTTP/1.1\r\n\r\n"), Route::Metrics { head_only: true });
        assert_eq!(r("POST /metrics HTTP/1.1\r\n\r\n"), Route::MethodNotAllowed);
        assert_eq!(r("GET /other HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(r("GET /metrics/ HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(r("DELETE / HTTP/1.1\n\n"), Route::NotFound);
    }

    #[test]
    fn anything_else_is_a_bad_request() {
        for head in [
            &b""[..],
            b"\r\n\r\n",
            b"GET\r\n\r\n",
            b"GET /metrics\r\n\r\n",
            b"GET /metrics HTTP/2.0\r\n\r\n",
            b"GET  /metrics HTTP/1.1\r\n\r\n",
            b"GET /metrics HTTP/1.1 extra\r\n\r\n",
            b"GET metrics HTTP/1.1\r\n\r\n",
            b"G3T /metrics HTTP/1.1\r\n\r\n",
            b"\xff\xfe /metrics HTTP/1.1\r\n\r\n",
            b"\x00\x00\x00\x10\x00\x12\x00\x00",
        ] {
            assert_eq!(route(head), Route::BadRequest, "{head:?}");
        }
    }

    #[test]
    fn the_head_ends_at_the_first_blank_line() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nbody"), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.1\n\n"), Some(16));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n"), None);
    }

    #[test]
    fn responses_carry_length_type_and_close() {
        let text = String::from_utf8(response(Status::MethodNotAllowed, "no\n")).unwrap();
        assert!(text.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"), "{text}");
        assert!(text.contains("\r\nContent-Length: 3\r\n"), "{text}");
        assert!(text.contains("\r\nAllow: GET, HEAD\r\n"), "{text}");
        assert!(text.contains("\r\nConnection: close\r\n\r\nno\n"), "{text}");
        let ok = String::from_utf8(response(Status::Ok, "")).unwrap();
        assert!(ok.contains(&format!("Content-Type: {CONTENT_TYPE}\r\n")), "{ok}");
    }

    #[tokio::test]
    async fn a_head_split_across_reads_is_found() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::spawn(async move {
            let mut c = TcpStream::connect(addr).await.unwrap();
            c.write_all(b"GET /metrics HTTP/1.1\r\n\r").await.unwrap();
            c.flush().await.unwrap();
            tokio::task::yield_now().await;
            c.write_all(b"\n").await.unwrap();
            c
        });
        let (mut server, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; MAX_HEAD];
        assert_eq!(read_head(&mut server, &mut buf).await.unwrap(), Head::Complete(25));
        drop(client.await.unwrap());
        let mut small = [0u8; 4];
        let (mut server, _) = {
            let c = tokio::spawn(async move {
                let mut c = TcpStream::connect(addr).await.unwrap();
                c.write_all(b"GET /metrics HTTP/1.1\r\n").await.unwrap();
                c
            });
            let accepted = listener.accept().await.unwrap();
            drop(c.await.unwrap());
            accepted
        };
        assert_eq!(read_head(&mut server, &mut small).await.unwrap(), Head::TooLarge);
    }
}
