//! The two ways load is offered: a closed loop (a fixed number of requests in
//! flight per connection, the next sent when an answer comes) and an open loop
//! (requests sent on a fixed schedule whatever the answers do, with latency
//! taken from the scheduled send time so a slow server cannot hide its stalls
//! by slowing the generator down: no coordinated omission). Only the
//! generator's own timer lateness is left out (see `latency_start`).

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use kafka_protocol::ResponseError;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until, timeout_at};

use crate::client::{Connection, PreparedRequest};
use crate::latency::nanos;
use crate::{LoadgenError, Meter};

/// A connection and the request it sends over and over.
#[derive(Debug)]
pub(crate) struct Stream {
    pub(crate) conn: Connection,
    pub(crate) request: PreparedRequest,
}

/// The measurement window: requests are sent in `[start, end)`, answers are
/// counted towards the rate if they arrive by `end`, and outstanding answers
/// are awaited until `end + drain`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    pub(crate) start: Instant,
    pub(crate) end: Instant,
    pub(crate) drain: Duration,
}

/// Time for every task to be spawned and waiting before the window opens.
const LEAD_IN: Duration = Duration::from_millis(50);

/// How long answers still outstanding at the end of a window are waited for.
pub(crate) const DRAIN: Duration = Duration::from_secs(10);

impl Window {
    /// A window of `duration` that opens shortly.
    pub(crate) fn starting_soon(duration: Duration) -> Window {
        let start = Instant::now() + LEAD_IN;
        Window { start, end: start + duration, drain: DRAIN }
    }

    /// Waits for the window to open and starts a [`Meter`]; waits for it to
    /// close and reads the meter. Runs beside the drivers.
    pub(crate) async fn meter(self, server_pid: Option<u32>, etcd_pids: Vec<u32>) -> crate::CpuUsage {
        sleep_until(self.start).await;
        let meter = Meter::start(server_pid, &etcd_pids);
        sleep_until(self.end).await;
        meter.read()
    }

    fn deadline(&self) -> Instant {
        self.end + self.drain
    }
}

/// Error counts by kind: Kafka error codes by name, failures by
/// [`LoadgenError::kind`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Errors(pub(crate) BTreeMap<String, u64>);

impl Errors {
    pub(crate) fn add(&mut self, kind: String, n: u64) {
        if n > 0 {
            *self.0.entry(kind).or_insert(0) += n;
        }
    }

    pub(crate) fn code(&mut self, code: i16) {
        self.add(code_name(code), 1);
    }

    pub(crate) fn total(&self) -> u64 {
        self.0.values().sum()
    }

    pub(crate) fn merge(&mut self, other: Errors) {
        for (kind, n) in other.0 {
            self.add(kind, n);
        }
    }
}

/// `REBALANCE_IN_PROGRESS (27)`.
pub(crate) fn code_name(code: i16) -> String {
    match ResponseError::try_from_code(code) {
        Some(e) => format!("{e} ({code})"),
        None => "NONE (0)".to_owned(),
    }
}

/// What a driver measured.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Answers that arrived inside the window.
    pub(crate) answered_in_window: u64,
    /// Every answer's latency, in nanoseconds (drained ones included).
    pub(crate) latencies_ns: Vec<u64>,
    /// Error codes and failures.
    pub(crate) errors: Errors,
    /// Open loop only: how late each send went out, in nanoseconds.
    pub(crate) send_lag_ns: Vec<u64>,
}

impl Tally {
    fn merge(&mut self, other: Tally) {
        self.answered_in_window += other.answered_in_window;
        self.latencies_ns.extend(other.latencies_ns);
        self.errors.merge(other.errors);
        self.send_lag_ns.extend(other.send_lag_ns);
    }
}

/// Collects the tasks' outcomes: the streams that are still usable, and one tally.
async fn gather(mut set: JoinSet<(Option<Stream>, Tally)>) -> (Vec<Stream>, Tally) {
    let mut streams = Vec::new();
    let mut tally = Tally::default();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((stream, t)) => {
                streams.extend(stream);
                tally.merge(t);
            }
            Err(e) => tally.errors.add(format!("driver task failed: {e}"), 1),
        }
    }
    (streams, tally)
}

/// Every stream keeps `depth` requests in flight until the window closes.
///
/// A stream whose connection fails or falls out of step is dropped (its
/// outstanding requests count as errors); the others come back for reuse.
pub(crate) async fn closed_loop(streams: Vec<Stream>, depth: usize, window: Window) -> (Vec<Stream>, Tally) {
    let mut set = JoinSet::new();
    for stream in streams {
        set.spawn(closed_stream(stream, depth.max(1), window));
    }
    gather(set).await
}

async fn closed_stream(mut s: Stream, depth: usize, w: Window) -> (Option<Stream>, Tally) {
    let mut tally = Tally::default();
    let mut in_flight: VecDeque<(i32, Instant)> = VecDeque::with_capacity(depth);
    sleep_until(w.start).await;
    for _ in 0..depth {
        match s.conn.send(&mut s.request).await {
            Ok(id) => in_flight.push_back((id, Instant::now())),
            Err(e) => {
                tally.errors.add(e.kind(), 1 + in_flight.len() as u64);
                return (None, tally);
            }
        }
    }
    while let Some(&(expected, sent)) = in_flight.front() {
        let answer = match timeout_at(w.deadline(), s.conn.recv(&s.request)).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => {
                tally.errors.add(e.kind(), in_flight.len() as u64);
                return (None, tally);
            }
            Err(_) => {
                tally.errors.add(LoadgenError::Timeout(String::new()).kind(), in_flight.len() as u64);
                return (None, tally);
            }
        };
        let now = Instant::now();
        in_flight.pop_front();
        if answer.correlation_id != expected {
            tally.errors.add(LoadgenError::Protocol(String::new()).kind(), 1 + in_flight.len() as u64);
            return (None, tally);
        }
        tally.latencies_ns.push(nanos(now - sent));
        if answer.error_code != 0 {
            tally.errors.code(answer.error_code);
        }
        if now <= w.end {
            tally.answered_in_window += 1;
        }
        if now < w.end {
            match s.conn.send(&mut s.request).await {
                Ok(id) => in_flight.push_back((id, Instant::now())),
                Err(e) => {
                    tally.errors.add(e.kind(), 1 + in_flight.len() as u64);
                    return (None, tally);
                }
            }
        }
    }
    (Some(s), tally)
}

/// Every stream sends one request each `interval`, stream `i` of `n` shifted
/// by `i * interval / n` so the offered load is smooth, whatever the answers do.
pub(crate) async fn open_loop(
    streams: Vec<Stream>,
    interval: Duration,
    window: Window,
) -> (Vec<Stream>, Tally) {
    let n = streams.len().max(1) as u32;
    let mut set = JoinSet::new();
    for (i, stream) in streams.into_iter().enumerate() {
        let phase = interval * u32::try_from(i).unwrap_or(u32::MAX) / n;
        set.spawn(open_stream(stream, interval, phase, window));
    }
    gather(set).await
}

/// When the latency of a send due at `due` starts, its writer having woken at
/// `woke` and finished its previous write at `ready`.
///
/// Late because the previous write was still going (the server not reading,
/// or answers not keeping up): the server's doing, so from `due`, as a real
/// client waiting to send would see it. Late only because the timer woke late
/// (tokio's rounds up to the next millisecond): the generator's doing, so from
/// when it woke, or every paced latency would carry up to a millisecond that
/// no server could remove.
fn latency_start(due: Instant, woke: Instant, ready: Instant) -> Instant {
    if ready > due { due } else { woke.max(due) }
}

/// How many sends of a stream fall inside the window.
fn scheduled_sends(window: Window, interval: Duration, phase: Duration) -> u64 {
    let span = window.end - window.start;
    if span <= phase || interval.is_zero() {
        return 0;
    }
    let n = (span - phase).as_nanos().div_ceil(interval.as_nanos());
    u64::try_from(n).unwrap_or(u64::MAX)
}

async fn open_stream(s: Stream, interval: Duration, phase: Duration, w: Window) -> (Option<Stream>, Tally) {
    let count = scheduled_sends(w, interval, phase);
    let schedule =
        move |k: u64| w.start + phase + interval.saturating_mul(u32::try_from(k).unwrap_or(u32::MAX));
    let Stream { conn, request } = s;
    let (mut reader, mut writer) = conn.into_parts();
    let first_id = writer.next_correlation_id();
    let mut writer_request = request.clone();
    // The writer tells the reader when each request's latency starts.
    let (starts_tx, mut starts) = tokio::sync::mpsc::unbounded_channel();
    let writer_task = tokio::spawn(async move {
        let mut lags = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        let mut ready = w.start;
        for k in 0..count {
            let due = schedule(k);
            sleep_until(due).await;
            let _ = starts_tx.send(latency_start(due, Instant::now(), ready));
            match timeout_at(w.deadline(), writer.send(&mut writer_request)).await {
                Ok(Ok(_)) => {
                    ready = Instant::now();
                    lags.push(nanos(ready - due));
                }
                Ok(Err(_)) | Err(_) => return (None, lags),
            }
        }
        (Some(writer), lags)
    });
    let mut tally = Tally::default();
    let mut healthy = true;
    for k in 0..count {
        let answer = match timeout_at(w.deadline(), reader.recv(&request)).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => {
                tally.errors.add(e.kind(), count - k);
                healthy = false;
                break;
            }
            Err(_) => {
                tally.errors.add(LoadgenError::Timeout(String::new()).kind(), count - k);
                healthy = false;
                break;
            }
        };
        let now = Instant::now();
        let expected = first_id.wrapping_add(i32::try_from(k).unwrap_or(i32::MAX));
        if answer.correlation_id != expected {
            tally.errors.add(LoadgenError::Protocol(String::new()).kind(), count - k);
            healthy = false;
            break;
        }
        let start = starts.recv().await.unwrap_or_else(|| schedule(k));
        tally.latencies_ns.push(nanos(now.saturating_duration_since(start)));
        if answer.error_code != 0 {
            tally.errors.code(answer.error_code);
        }
        if now <= w.end {
            tally.answered_in_window += 1;
        }
    }
    if !healthy {
        // The writer may be stuck behind a server that stopped reading.
        writer_task.abort();
    }
    match writer_task.await {
        Ok((writer, lags)) => {
            tally.send_lag_ns = lags;
            let stream = writer
                .filter(|_| healthy)
                .map(|writer| Stream { conn: Connection::from_parts(reader, writer), request });
            (stream, tally)
        }
        Err(_) => (None, tally),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_covers_the_window_and_nothing_past_it() {
        let start = Instant::now();
        let w = Window { start, end: start + Duration::from_millis(1000), drain: DRAIN };
        let ms = Duration::from_millis;
        assert_eq!(scheduled_sends(w, ms(100), ms(0)), 10);
        assert_eq!(scheduled_sends(w, ms(100), ms(50)), 10);
        assert_eq!(scheduled_sends(w, ms(300), ms(0)), 4);
        assert_eq!(scheduled_sends(w, ms(300), ms(100)), 3);
        assert_eq!(scheduled_sends(w, ms(100), ms(1000)), 0);
        assert_eq!(scheduled_sends(w, Duration::ZERO, ms(0)), 0);
    }

    #[test]
    fn only_back_pressure_counts_against_the_server() {
        let due = Instant::now();
        let ms = Duration::from_millis;
        // The timer woke a millisecond late, the previous write long done.
        assert_eq!(latency_start(due, due + ms(1), due - ms(4)), due + ms(1));
        // The previous write ended after the send was due.
        assert_eq!(latency_start(due, due + ms(3), due + ms(2)), due);
        // On time.
        assert_eq!(latency_start(due, due, due - ms(1)), due);
    }

    #[test]
    fn errors_add_up_by_kind() {
        let mut e = Errors::default();
        e.code(27);
        e.code(27);
        e.add("connection closed by the server".to_owned(), 3);
        e.add("nothing".to_owned(), 0);
        assert_eq!(e.total(), 5);
        assert_eq!(e.0.len(), 2);
        assert!(e.0.keys().any(|k| k.ends_with("(27)")), "{e:?}");
    }
}
