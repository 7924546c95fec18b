//! The node's metrics: what the front end counts on its request path
//! ([`ServerMetrics`]), and the Prometheus text exposition of those counts with
//! the coordinator's ([`Exporter`], served by `metrics_http` on
//! `--metrics-listen`).
//!
//! The request path is benchmarked, so what it pays is fixed: per request two
//! relaxed atomic additions when it is read (the API's request count and the
//! bytes) and two when its reply is written (the API's latency bucket and sum),
//! plus one clock reading each way; every series exists from the start, in an
//! array indexed by API, so no label is looked up, formatted or allocated per
//! request. Everything else (the coordinator's groups per state, its counters)
//! is read when a scraper asks, never on the request path.
//!
//! Latency is measured from the moment a request's frame is whole in the read
//! buffer to the moment the write that carried its reply returned: it includes
//! a JoinGroup's wait at the rebalance barrier and a Fetch's long poll.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use group_coordinator::{CoordinatorMetrics, LatencyHistogram, LatencySnapshot};
use group_types::GroupState;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::CoordinatorService;
use crate::connection::Budgets;
use crate::node::SUPPORTED_APIS;

/// API keys with a slot of their own are below this (ReadShareGroupStateSummary is 87).
const KEY_TABLE: usize = 96;

/// The slot of requests with an API key this node does not serve.
const UNKNOWN: usize = SUPPORTED_APIS.len();

/// One slot per served API, and one for the others.
const SLOTS: usize = SUPPORTED_APIS.len() + 1;

/// API key → slot, built at compile time from [`SUPPORTED_APIS`].
const SLOT_OF_KEY: [u8; KEY_TABLE] = {
    assert!(SLOTS <= u8::MAX as usize);
    let mut table = [UNKNOWN as u8; KEY_TABLE];
    let mut i = 0;
    while i < SUPPORTED_APIS.len() {
        let key = SUPPORTED_APIS[i].0 as i16;
        assert!(key >= 0 && (key as usize) < KEY_TABLE);
        table[key as usize] = i as u8;
        i += 1;
    }
    table
};

/// The slot of a request frame (length prefix stripped), from its API key.
fn slot_of(frame: &[u8]) -> usize {
    match frame {
        [hi, lo, ..] => {
            let key = i16::from_be_bytes([*hi, *lo]);
            usize::try_from(key).ok().and_then(|k| SLOT_OF_KEY.get(k)).map_or(UNKNOWN, |&s| usize::from(s))
        }
        _ => UNKNOWN,
    }
}

/// The `api` label of a slot: Kafka's name of the API (`JoinGroup`), `unknown`.
fn api_label(slot: usize) -> String {
    SUPPORTED_APIS.get(slot).map_or_else(|| "unknown".to_owned(), |(key, _, _)| format!("{key:?}"))
}

/// One API's series.
#[derive(Debug, Default)]
struct ApiSeries {
    requests: AtomicU64,
    latency: LatencyHistogram,
}

/// What the front end counts: requests and latency per API, connections, bytes.
/// Shared by every connection of one server; every update is a relaxed atomic
/// addition.
#[derive(Debug)]
pub(crate) struct ServerMetrics {
    apis: [ApiSeries; SLOTS],
    connections_open: AtomicU64,
    connections_accepted: AtomicU64,
    connections_refused: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
}

/// What [`ServerMetrics::request_read`] hands to
/// [`ServerMetrics::replies_written`]: the request's API and when it was read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestStart {
    slot: u8,
    at: Instant,
}

impl Default for ServerMetrics {
    fn default() -> ServerMetrics {
        ServerMetrics {
            apis: std::array::from_fn(|_| ApiSeries::default()),
            connections_open: AtomicU64::new(0),
            connections_accepted: AtomicU64::new(0),
            connections_refused: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
        }
    }
}

impl ServerMetrics {
    /// A request frame (length prefix stripped) was read whole: counts it and
    /// its bytes, prefix included.
    #[inline]
    pub(crate) fn request_read(&self, frame: &[u8]) -> RequestStart {
        let slot = slot_of(frame);
        self.apis[slot].requests.fetch_add(1, Ordering::Relaxed);
        self.bytes_in.fetch_add(4 + frame.len() as u64, Ordering::Relaxed);
        // `slot` < SLOTS, which the table's construction keeps within a u8.
        RequestStart { slot: slot as u8, at: Instant::now() }
    }

    /// One write of `bytes` carried the replies to `requests`: counts the bytes
    /// and each request's latency (one clock reading for the whole batch).
    #[inline]
    pub(crate) fn replies_written<'a>(
        &self,
        requests: impl IntoIterator<Item = &'a RequestStart>,
        bytes: usize,
    ) {
        self.bytes_out.fetch_add(bytes as u64, Ordering::Relaxed);
        let now = Instant::now();
        for request in requests {
            let series = &self.apis[usize::from(request.slot) % SLOTS];
            series.latency.record(now.saturating_duration_since(request.at));
        }
    }

    /// A connection was admitted: it counts as open until the guard is dropped.
    pub(crate) fn connection_opened(self: &Arc<Self>) -> OpenConnection {
        self.connections_accepted.fetch_add(1, Ordering::Relaxed);
        self.connections_open.fetch_add(1, Ordering::Relaxed);
        OpenConnection(Arc::clone(self))
    }

    /// A connection was refused by a limit (`max.connections`, per IP).
    pub(crate) fn connection_refused(&self) {
        self.connections_refused.fetch_add(1, Ordering::Relaxed);
    }
}

/// An open connection, as counted by [`ServerMetrics::connection_opened`].
#[derive(Debug)]
pub(crate) struct OpenConnection(Arc<ServerMetrics>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.connections_open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Renders the node's metrics in the Prometheus text format (version 0.0.4).
pub(crate) struct Exporter {
    registry: Registry,
    scrapes: Arc<crate::metrics_http::ScrapeLimits>,
}

impl fmt::Debug for Exporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exporter").finish_non_exhaustive()
    }
}

/// The `Content-Type` of what [`Exporter::render`] returns.
pub(crate) const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

impl Exporter {
    /// An exporter of `server`'s counts and of what `service` reports
    /// ([`CoordinatorService::metrics`]).
    pub(crate) fn new(
        server: Arc<ServerMetrics>,
        budgets: Arc<Budgets>,
        service: Arc<CoordinatorService>,
    ) -> Exporter {
        let mut registry = Registry::default();
        let scrapes = Arc::new(crate::metrics_http::ScrapeLimits::default());
        let collector = NodeCollector { server, budgets, service, scrapes: Arc::clone(&scrapes) };
        registry.register_collector(Box::new(collector));
        Exporter { registry, scrapes }
    }

    /// What the endpoint counts of the scrape connections it evicted or refused.
    pub(crate) fn scrape_limits(&self) -> &crate::metrics_http::ScrapeLimits {
        &self.scrapes
    }

    /// The exposition, read now.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail; an encoder error would be a bug in
        // the collector, and leaves what was rendered before it.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry);
        out
    }
}

/// Reads every count at scrape time.
struct NodeCollector {
    server: Arc<ServerMetrics>,
    budgets: Arc<Budgets>,
    service: Arc<CoordinatorService>,
    scrapes: Arc<crate::metrics_http::ScrapeLimits>,
}

impl fmt::Debug for NodeCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeCollector").finish_non_exhaustive()
    }
}

fn counter(enc: &mut DescriptorEncoder<'_>, name: &str, help: &str, value: u64) -> fmt::Result {
    let metric = ConstCounter::new(value);
    metric.encode(enc.encode_descriptor(name, help, None, metric.metric_type())?)
}

fn gauge(enc: &mut DescriptorEncoder<'_>, name: &str, help: &str, value: u64) -> fmt::Result {
    let metric = ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX));
    metric.encode(enc.encode_descriptor(name, help, None, metric.metric_type())?)
}

/// A counter family with one label.
fn counters<'l>(
    enc: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    label: &str,
    series: impl IntoIterator<Item = (&'l str, u64)>,
) -> fmt::Result {
    let mut family = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (value, n) in series {
        ConstCounter::new(n).encode(family.encode_family(&[(label, value)])?)?;
    }
    Ok(())
}

/// A histogram's buckets as the encoder wants them: upper bounds in seconds
/// (the last one infinite), counts not cumulative.
fn histogram_buckets(snapshot: &LatencySnapshot) -> Vec<(f64, u64)> {
    snapshot.buckets().map(|(bound, n)| (bound.map_or(f64::INFINITY, |b| b.as_secs_f64()), n)).collect()
}

impl Collector for NodeCollector {
    fn encode(&self, mut enc: DescriptorEncoder<'_>) -> fmt::Result {
        let s = &*self.server;
        let labels: Vec<String> = (0..SLOTS).map(api_label).collect();
        let per_api = || labels.iter().map(String::as_str).zip(&s.apis);
        counters(
            &mut enc,
            "group_server_requests",
            "Kafka requests read, by API (api=\"unknown\": an API key this node does not serve).",
            "api",
            per_api().map(|(api, series)| (api, series.requests.load(Ordering::Relaxed))),
        )?;
        let mut family = enc.encode_descriptor(
            "group_server_request_duration_seconds",
            "Time from a request read whole to the write of its reply, by API (JoinGroup and SyncGroup include the rebalance barrier, Fetch its long poll).",
            None,
            MetricType::Histogram,
        )?;
        // A request of an unknown API closes its connection unanswered: no latency.
        for (api, series) in per_api().take(UNKNOWN) {
            let snapshot = series.latency.snapshot();
            family.encode_family(&[("api", api)])?.encode_histogram::<NoLabelSet>(
                snapshot.sum.as_secs_f64(),
                snapshot.count(),
                &histogram_buckets(&snapshot),
                None,
            )?;
        }
        gauge(
            &mut enc,
            "group_server_connections_open",
            "Client connections open now.",
            s.connections_open.load(Ordering::Relaxed),
        )?;
        counter(
            &mut enc,
            "group_server_connections_accepted",
            "Client connections admitted.",
            s.connections_accepted.load(Ordering::Relaxed),
        )?;
        counter(
            &mut enc,
            "group_server_connections_refused",
            "Client connections refused by max.connections or max.connections.per.ip.",
            s.connections_refused.load(Ordering::Relaxed),
        )?;
        let b = &*self.budgets;
        gauge(
            &mut enc,
            "group_server_request_bytes_reserved",
            "Bytes of queued.max.request.bytes reserved by requests longer than a read chunk, read or arriving.",
            b.request_bytes_reserved() as u64,
        )?;
        gauge(
            &mut enc,
            "group_server_response_bytes_queued",
            "Bytes of replies encoded and not yet written, all connections together.",
            b.response_bytes_queued() as u64,
        )?;
        let (request_waits, reply_waits) = b.waits();
        counters(
            &mut enc,
            "group_server_reads_paused",
            "Times a connection was not read, by reason (request_budget: queued.max.request.bytes spent; responses: its replies were not taken).",
            "reason",
            [("request_budget", request_waits), ("responses", reply_waits)],
        )?;
        let (evicted, refused) = self.scrapes.counts();
        counters(
            &mut enc,
            "group_server_metrics_connections_dropped",
            "Connections to this endpoint closed because every scraper slot was taken, by outcome (evicted: a silent one made room; refused: closed unanswered).",
            "outcome",
            [("evicted", evicted), ("refused", refused)],
        )?;
        counter(
            &mut enc,
            "group_server_received_bytes",
            "Bytes of the request frames read, length prefixes included.",
            s.bytes_in.load(Ordering::Relaxed),
        )?;
        counter(
            &mut enc,
            "group_server_sent_bytes",
            "Bytes of the response frames written, length prefixes included.",
            s.bytes_out.load(Ordering::Relaxed),
        )?;
        if let Some((transactions, appends)) = self.service.etcd_append_transactions() {
            counter(
                &mut enc,
                "group_server_etcd_append_transactions",
                "etcd transactions of log appends sent (a cluster node): every partition's appends waiting at one moment go in one (group commit).",
                transactions,
            )?;
            counter(
                &mut enc,
                "group_server_etcd_appends",
                "Log appends those transactions carried, retries counted again; appends / transactions is how well group commit gathers.",
                appends,
            )?;
        }
        encode_coordinator(&mut enc, &self.service.metrics())
    }
}

/// The coordinator's gauges and counters (`kafka_group_*`).
fn encode_coordinator(enc: &mut DescriptorEncoder<'_>, m: &CoordinatorMetrics) -> fmt::Result {
    // Every kind of group, as Kafka's `GroupCoordinatorMetrics` counts them (per
    // kind, per that kind's states); a new kind adds its rows here.
    let mut family = enc.encode_descriptor(
        "kafka_group_groups",
        "Groups held by the coordinator, by type (classic, consumer) and by that type's state.",
        None,
        MetricType::Gauge,
    )?;
    let classic = [
        GroupState::Empty,
        GroupState::PreparingRebalance,
        GroupState::CompletingRebalance,
        GroupState::Stable,
    ]
    .map(|state| (state.as_str(), "classic", m.groups_in(state)));
    let consumer = CoordinatorMetrics::CONSUMER_GROUP_STATES
        .map(|state| (state.as_str(), "consumer", m.consumer_groups_in(state)));
    let share = ["Empty", "Stable"].map(|state| (state, "share", m.share_groups_in(state)));
    for (state, kind, n) in classic.into_iter().chain(consumer).chain(share) {
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        ConstGauge::new(n).encode(family.encode_family(&[("state", state), ("type", kind)])?)?;
    }
    let mut family = enc.encode_descriptor(
        "kafka_group_members",
        "Members of the groups, by group type (pending member ids excluded).",
        None,
        MetricType::Gauge,
    )?;
    for (kind, n) in [("classic", m.members), ("consumer", m.consumer_members), ("share", m.share_members)] {
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        ConstGauge::new(n).encode(family.encode_family(&[("type", kind)])?)?;
    }
    counter(
        enc,
        "kafka_group_rebalances_started",
        "Join phases begun (a group entering PreparingRebalance).",
        m.rebalances_started,
    )?;
    counter(
        enc,
        "kafka_group_rebalances_completed",
        "Join phases completed with members (a new generation elected).",
        m.rebalances_completed,
    )?;
    let e = &m.member_expirations;
    counters(
        enc,
        "kafka_group_member_expirations",
        "Members removed by a deadline, by reason (session: no heartbeat within the session timeout).",
        "reason",
        [
            ("session", e.session),
            ("new_member_join", e.new_member_join),
            ("join", e.join),
            ("sync", e.sync),
            ("pending_member", e.pending_member),
        ],
    )?;
    counter(enc, "kafka_group_members_left", "Members that left through LeaveGroup.", m.members_left)?;
    counter(
        enc,
        "kafka_group_groups_refused",
        "Requests answered GROUP_MAX_SIZE_REACHED because they would have created a group over group.max.groups.",
        m.groups_refused,
    )?;
    counter(
        enc,
        "kafka_group_consumer_members_joined",
        "Consumer-protocol members that joined consumer groups (KIP-848).",
        m.consumer_members_joined,
    )?;
    counter(
        enc,
        "kafka_group_consumer_members_removed",
        "Members removed from consumer groups: left, session expired, revocation timeout.",
        m.consumer_members_removed,
    )?;
    counter(
        enc,
        "kafka_group_consumer_rebalances",
        "Consumer group epochs bumped, each a new target assignment (the consumer protocol's rebalances).",
        m.consumer_epoch_bumps,
    )?;
    counter(
        enc,
        "kafka_group_static_members_fenced",
        "Static members fenced by a new instance with the same group.instance.id.",
        m.static_members_fenced,
    )?;
    counter(
        enc,
        "kafka_group_offsets_expired",
        "Committed partition offsets removed by the retention job.",
        m.offsets_expired,
    )?;
    counters(
        enc,
        "kafka_group_groups_removed",
        "Groups removed, by reason (expired: by the retention job with their last offsets; deleted: by DeleteGroups).",
        "reason",
        [("expired", m.groups_expired), ("deleted", m.groups_deleted)],
    )?;
    counter(
        enc,
        "kafka_group_offset_commits",
        "OffsetCommit requests answered, whatever their outcome.",
        m.offset_commits,
    )?;
    counter(
        enc,
        "kafka_group_offset_commit_partitions",
        "Partition offsets committed without error.",
        m.offset_commit_partitions,
    )?;
    counter(
        enc,
        "kafka_group_authorization_failures",
        "Requests, or parts of requests, the authorizer refused.",
        m.authorization_failures,
    )?;
    counter(
        enc,
        "kafka_group_unknown_topic_partitions",
        "OffsetCommit and OffsetDelete partitions refused as UNKNOWN_TOPIC_OR_PARTITION.",
        m.unknown_topic_partitions,
    )?;
    counter(
        enc,
        "kafka_group_storage_write_failures",
        "Storage appends that failed (each reverted its partition to the last committed write).",
        m.write_failures,
    )?;
    let snapshot = &m.append_latency;
    enc.encode_descriptor(
        "kafka_group_storage_append_duration_seconds",
        "Time from a batch of writes handed to storage to its completion (durable, or failed).",
        None,
        MetricType::Histogram,
    )?
    .encode_histogram::<NoLabelSet>(
        snapshot.sum.as_secs_f64(),
        snapshot.count(),
        &histogram_buckets(snapshot),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_served_api_has_its_own_slot() {
        for (i, (key, _, _)) in SUPPORTED_APIS.iter().enumerate() {
            let frame = (*key as i16).to_be_bytes();
            assert_eq!(slot_of(&frame), i, "{key:?}");
        }
    }

    #[test]
    fn other_keys_and_short_frames_count_as_unknown() {
        for key in [-1i16, 1000, 63, i16::MAX, i16::MIN] {
            assert_eq!(slot_of(&key.to_be_bytes()), UNKNOWN, "{key}");
        }
        assert_eq!(slot_of(&[]), UNKNOWN);
        assert_eq!(slot_of(&[0]), UNKNOWN);
        assert_eq!(api_label(UNKNOWN), "unknown");
        assert_eq!(api_label(slot_of(&12i16.to_be_bytes())), "Heartbeat");
    }

    #[test]
    fn counts_and_latency_land_in_the_request_api() {
        let m = Arc::new(ServerMetrics::default());
        let heartbeat = [0, 12, 0, 4, 0, 0, 0, 1];
        let started = [m.request_read(&heartbeat), m.request_read(&heartbeat)];
        m.replies_written(&started, 30);
        let slot = slot_of(&heartbeat);
        assert_eq!(m.apis[slot].requests.load(Ordering::Relaxed), 2);
        assert_eq!(m.apis[slot].latency.snapshot().count(), 2);
        assert_eq!(m.bytes_in.load(Ordering::Relaxed), 24);
        assert_eq!(m.bytes_out.load(Ordering::Relaxed), 30);
        let open = m.connection_opened();
        assert_eq!(m.connections_open.load(Ordering::Relaxed), 1);
        drop(open);
        assert_eq!(m.connections_open.load(Ordering::Relaxed), 0);
        assert_eq!(m.connections_accepted.load(Ordering::Relaxed), 1);
    }
}
