//! A load generator and benchmark that measures `group-server` as a whole,
//! over the wire: its own Kafka client connections (tokio, frames built with
//! `kafka-protocol`'s client side) drive heartbeats, commits, rebalances and
//! idle connections over loopback, and report rates, latency percentiles,
//! errors, and the CPU the server and the generator used.
//!
//! The generator is built not to be the bottleneck: every connection encodes
//! its request once and re-sends the same bytes with only the correlation id
//! patched; answers are read into one buffer per connection.
//!
//! # Brief overview
//!
//! - [`scenarios`]: one async function per scenario, each taking a [`Target`]
//!   (the server's address and pid) and the sizes in [`Settings`], returning a
//!   [`ScenarioReport`]: `idle`, `heartbeat`, `pipelined`, `paced`, `sweep`,
//!   `commit-distinct`, `commit-one-group`, `heartbeat-under-commits`,
//!   `rebalance` (see [`Scenario`]).
//! - [`run`]: what the `group-loadgen` binary does with its [`Options`]: each
//!   scenario against a fresh spawned server ([`ServerProcess`]; memory
//!   storage, or a new sled directory for the commit scenarios) or all against
//!   a running one; then [`render_table`], [`render_json`] and [`report_svg`]
//!   (via [`write_outputs`]).
//! - With `--etcd` ([`ClusterSpec`]), each durable scenario runs a second time
//!   on a `group-server --cluster` node over a fresh [`EtcdCluster`], once
//!   [`wait_serving`] saw it own every coordinator partition; its row says
//!   `cluster`, reports the etcd members' CPU ([`ETCD_CPU_S`]) and database
//!   size ([`ETCD_DB_BYTES`]), and sits under the sled row with its share of
//!   sled's rate.
//! - [`Connection`] and [`PreparedRequest`]: the client side.
//! - [`Meter`], [`ProcessStats`]: CPU, RSS, threads and fds from `/proc`.
//! - [`percentile`], [`Percentiles`]: nearest-rank percentiles over every sample.
//!
//! Closed loops keep a fixed number of requests in flight per connection.
//! Open loops send on a schedule whatever the answers do and measure latency
//! from the *scheduled* send time, so a stalled server shows up in the
//! percentiles instead of slowing the generator down (coordinated omission);
//! only a send its timer woke late for, with nothing holding it back, counts
//! from when it went out (tokio's timer rounds up to the millisecond).
//!
//! # Who should depend on this crate
//!
//! Nobody: it is a benchmark (`cargo xtask bench wire`), not published. It
//! speaks only the wire protocol, so it measures whatever `group-server`
//! binary it is given.
//!
//! # Example
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use group_loadgen::{Settings, Target, render_table, scenarios};
//!
//! # async fn example() -> Result<(), group_loadgen::LoadgenError> {
//! // A group-server already listening on 127.0.0.1:9092 with pid 4242.
//! let target = Target::new("127.0.0.1:9092".parse().expect("address"), Some(4242));
//! let settings = Settings { duration: Duration::from_secs(2), members: 100, groups: 10, ..Settings::default() };
//! let report = scenarios::heartbeat(&target, &settings).await?;
//! print!("{}", render_table(&[report]));
//! # Ok(())
//! # }
//! ```

mod client;
mod config;
mod drive;
mod error;
mod etcd;
mod group;
mod latency;
mod proc_stats;
mod report;
mod requests;
mod runner;
pub mod scenarios;
mod server;
mod svg;

pub use crate::client::{Answer, CONNECT_TIMEOUT, Connection, FrameReader, FrameWriter, PreparedRequest};
pub use crate::config::{
    ClusterSpec, DEFAULT_ETCD_MEMBERS, MAX_ETCD_MEMBERS, Options, Scenario, ServerSpec, Settings, USAGE,
};
pub use crate::error::LoadgenError;
pub use crate::etcd::{
    ETCD_START_TIMEOUT, EtcdCluster, SERVING_TIMEOUT, coordinator_partition, wait_serving,
};
pub use crate::latency::{Percentiles, percentile};
pub use crate::proc_stats::{CpuUsage, Meter, ProcessStats, clock_ticks_per_second, cpu_seconds};
pub use crate::report::{
    ETCD_CPU_S, ETCD_DB_BYTES, ScenarioReport, format_latency, render_json, render_table,
};
pub use crate::requests::TOPIC;
pub use crate::runner::{run, write_outputs};
pub use crate::server::{
    COORDINATOR_PARTITIONS, ServerProcess, Storage, Target, nofile_hard_limit, raise_nofile_limit,
};
pub use crate::svg::{StorageBar, SweepPoint, report_svg, sweep_svg};
