//! What to run: the scenarios, their sizes ([`Settings`]), the server under
//! test ([`ServerSpec`]), the etcd cluster its durable scenarios also run over
//! ([`ClusterSpec`]) and the command line that builds all of it ([`Options`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::LoadgenError;

/// One benchmark scenario (see the crate docs for what each does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scenario {
    /// Thousands of idle connections beside one active group.
    Idle,
    /// Closed-loop heartbeats, one in flight per member.
    Heartbeat,
    /// Closed-loop heartbeats, several in flight per member.
    Pipelined,
    /// Open-loop heartbeats at a fixed interval per member.
    Paced,
    /// Open-loop heartbeats at rising offered rates.
    Sweep,
    /// Simple-consumer commits, each committer on its own group.
    CommitDistinct,
    /// Simple-consumer commits, all committers on one group.
    CommitOneGroup,
    /// Closed-loop heartbeats while committers commit to other groups.
    HeartbeatUnderCommits,
    /// Every member of one group rejoins; time to the last SyncGroup answer.
    Rebalance,
}

impl Scenario {
    /// Every scenario, in the order a full run takes them.
    pub const ALL: [Scenario; 9] = [
        Scenario::Idle,
        Scenario::Heartbeat,
        Scenario::Pipelined,
        Scenario::Paced,
        Scenario::Sweep,
        Scenario::CommitDistinct,
        Scenario::CommitOneGroup,
        Scenario::HeartbeatUnderCommits,
        Scenario::Rebalance,
    ];

    /// Its name on the command line and in the report.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Idle => "idle",
            Scenario::Heartbeat => "heartbeat",
            Scenario::Pipelined => "pipelined",
            Scenario::Paced => "paced",
            Scenario::Sweep => "sweep",
            Scenario::CommitDistinct => "commit-distinct",
            Scenario::CommitOneGroup => "commit-one-group",
            Scenario::HeartbeatUnderCommits => "heartbeat-under-commits",
            Scenario::Rebalance => "rebalance",
        }
    }

    /// The scenario called `name`.
    pub fn from_name(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether it measures durable commits (a spawned server gets a fresh sled
    /// directory for it, and with `--etcd` runs it a second time as a cluster
    /// node; the others run against memory storage).
    pub fn durable(self) -> bool {
        matches!(self, Scenario::CommitDistinct | Scenario::CommitOneGroup | Scenario::HeartbeatUnderCommits)
    }
}

/// The sizes of every scenario. [`Settings::default`] holds the full-size
/// benchmark; tests shrink it.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The measurement window of each scenario (of each rate, for `sweep`).
    pub duration: Duration,
    /// `idle`: idle connections to open (scaled down to the open-file limit).
    pub idle_connections: usize,
    /// `idle`: members of the one active group.
    pub idle_active_members: usize,
    /// `heartbeat`, `pipelined`, `paced`, `sweep`: members in all.
    pub members: usize,
    /// ... spread over this many groups.
    pub groups: usize,
    /// `pipelined`: heartbeats in flight per member.
    pub pipeline_depth: usize,
    /// `paced`: each member heartbeats this often.
    pub paced_interval: Duration,
    /// `sweep`: offered heartbeat rates per second, tried in order until the
    /// achieved rate falls below [`Settings::sweep_stop_ratio`] of the offered one.
    pub sweep_rates: Vec<f64>,
    /// `sweep`: the achieved/offered ratio below which the sweep stops.
    pub sweep_stop_ratio: f64,
    /// `commit-distinct`: committers, each on its own group.
    pub distinct_committers: usize,
    /// `commit-one-group`: committers on the one group (distinct partitions).
    pub one_group_committers: usize,
    /// `heartbeat-under-commits`: heartbeating members...
    pub under_commits_members: usize,
    /// ... in this many groups...
    pub under_commits_groups: usize,
    /// ... while this many committers commit, each to its own group.
    pub under_commits_committers: usize,
    /// `rebalance`: members of the group.
    pub rebalance_members: usize,
    /// `rebalance`: rebalances measured.
    pub rebalances: usize,
    /// Prefix of every group id, so runs against a shared server never meet.
    pub run_id: String,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            duration: Duration::from_secs(10),
            idle_connections: 10_000,
            idle_active_members: 10,
            members: 1_000,
            groups: 100,
            pipeline_depth: 16,
            paced_interval: Duration::from_millis(100),
            sweep_rates: vec![5e3, 1e4, 2e4, 5e4, 1e5, 2e5],
            sweep_stop_ratio: 0.9,
            distinct_committers: 256,
            one_group_committers: 64,
            under_commits_members: 100,
            under_commits_groups: 10,
            under_commits_committers: 64,
            rebalance_members: 100,
            rebalances: 20,
            run_id: default_run_id(),
        }
    }
}

impl Settings {
    /// Partitions the committed topic needs: one per committer of the one
    /// group, and one per member of the largest group (its assignment).
    pub fn topic_partitions(&self) -> usize {
        let per_group = self.members.div_ceil(self.groups.max(1));
        [self.one_group_committers, per_group, self.rebalance_members, self.idle_active_members, 1]
            .into_iter()
            .max()
            .unwrap_or(1)
    }
}

/// Unique enough among runs against one server: the process id and the time.
fn default_run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
        .unwrap_or(0);
    format!("lg{:x}{:x}", std::process::id(), nanos)
}

/// The server under test.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerSpec {
    /// Spawn this `group-server` binary, a fresh one per scenario.
    Spawn(PathBuf),
    /// Drive a server that is already running; its pid (for CPU and memory
    /// figures) if known.
    Connect {
        /// Where it listens.
        addr: SocketAddr,
        /// Its process id.
        pid: Option<u32>,
    },
}

/// The etcd cluster that spawned cluster nodes store in (`--etcd PATH
/// [--etcd-members N]`): the generator starts `members` etcd processes of
/// `binary` for each durable scenario, and a `group-server --cluster` node over them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSpec {
    /// The etcd binary.
    pub etcd: PathBuf,
    /// How many members the etcd cluster has.
    pub members: usize,
}

/// Members of the etcd cluster when `--etcd-members` is not given: the
/// smallest that survives the loss of one.
pub const DEFAULT_ETCD_MEMBERS: usize = 3;

/// The most etcd members `--etcd-members` accepts (etcd advises at most 7).
pub const MAX_ETCD_MEMBERS: usize = 7;

/// A whole run: the command line of the `group-loadgen` binary.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The server under test.
    pub server: ServerSpec,
    /// With `--etcd`: each durable scenario runs a second time on a cluster
    /// node over this etcd cluster (spawned servers only).
    pub cluster: Option<ClusterSpec>,
    /// The scenarios to run, in order.
    pub scenarios: Vec<Scenario>,
    /// Their sizes.
    pub settings: Settings,
    /// Where spawned servers keep their sled directories and logs.
    pub work_dir: PathBuf,
    /// Where the JSON report goes.
    pub json: PathBuf,
    /// Where the SVG plot (the sweep, and sled against cluster) goes.
    pub svg: PathBuf,
    /// Worker threads of the generator's runtime.
    pub threads: usize,
}

/// The `--help` text of the `group-loadgen` binary.
pub const USAGE: &str = "\
group-loadgen: drive group-server over the wire and report rates, latencies and CPU

USAGE: group-loadgen (--server PATH | --connect ADDR [--server-pid PID]) [OPTIONS]

SERVER:
  --server PATH               spawn this group-server binary, a fresh one per scenario
                              (memory storage; a new sled --data-dir for the commit scenarios)
  --connect ADDR              drive a running server instead
  --server-pid PID            its pid, for CPU, RSS, thread and fd figures
  --etcd PATH                 with --server: run each durable scenario (commit-distinct,
                              commit-one-group, heartbeat-under-commits) twice, on sled and
                              as a --cluster node (the server must be built with the cluster
                              feature) over etcd members of this binary, fresh ones each time
  --etcd-members N            how many etcd members [default: 3]

OPTIONS:
  --scenarios LIST            comma-separated, from: idle, heartbeat, pipelined, paced, sweep,
                              commit-distinct, commit-one-group, heartbeat-under-commits,
                              rebalance [default: all]
  --duration SECS             measurement window per scenario (and per sweep rate) [default: 10]
  --idle-connections N        idle: connections [default: 10000]
  --members N                 heartbeat/pipelined/paced/sweep: members [default: 1000]
  --groups N                  ... in this many groups [default: 100]
  --pipeline N                pipelined: heartbeats in flight per member [default: 16]
  --interval-ms MS            paced: heartbeat interval per member [default: 100]
  --sweep-rates LIST          sweep: offered rates per second [default: 5000,10000,20000,50000,100000,200000]
  --committers N              commit-distinct: committers [default: 256]
  --group-committers N        commit-one-group and heartbeat-under-commits: committers [default: 64]
  --rebalance-members N       rebalance: members [default: 100]
  --rebalances N              rebalance: repetitions [default: 20]
  --work-dir PATH             spawned servers' data and logs [default: target/wire-bench]
  --json PATH                 JSON report [default: target/wire-bench.json]
  --svg PATH                  plot: the sweep's latency vs load, and sled vs cluster with --etcd
                              [default: target/wire-bench.svg]
  --threads N                 generator worker threads [default: available cores]
  -h, --help                  print this help
";

impl Options {
    /// Parses command-line arguments (without the program name).
    pub fn from_args<I, S>(args: I) -> Result<Options, LoadgenError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut settings = Settings::default();
        let mut scenarios = Scenario::ALL.to_vec();
        let (mut spawn, mut connect, mut pid) = (None, None, None);
        let (mut etcd, mut etcd_members) = (None, None);
        let mut work_dir = PathBuf::from("target/wire-bench");
        let mut json = PathBuf::from("target/wire-bench.json");
        let mut svg = PathBuf::from("target/wire-bench.svg");
        let mut threads = std::thread::available_parallelism().map_or(2, usize::from);
        let mut args = args.into_iter().map(Into::into);
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
                _ => (arg.clone(), None),
            };
            let mut value = || {
                inline.clone().or_else(|| args.next()).ok_or_else(|| LoadgenError::MissingValue(flag.clone()))
            };
            match flag.as_str() {
                "--server" => spawn = Some(PathBuf::from(value()?)),
                "--connect" => connect = Some(parse(&flag, value()?, "an address such as 127.0.0.1:9092")?),
                "--server-pid" => pid = Some(parse(&flag, value()?, "a process id")?),
                "--etcd" => etcd = Some(PathBuf::from(value()?)),
                "--etcd-members" => etcd_members = Some(parse_members(&flag, value()?)?),
                "--scenarios" => scenarios = parse_scenarios(&flag, &value()?)?,
                "--duration" => settings.duration = parse_duration(&flag, value()?)?,
                "--idle-connections" => settings.idle_connections = positive(&flag, value()?)?,
                "--members" => settings.members = positive(&flag, value()?)?,
                "--groups" => settings.groups = positive(&flag, value()?)?,
                "--pipeline" => settings.pipeline_depth = positive(&flag, value()?)?,
                "--interval-ms" => {
                    settings.paced_interval = Duration::from_millis(positive(&flag, value()?)? as u64)
                }
                "--sweep-rates" => settings.sweep_rates = parse_rates(&flag, &value()?)?,
                "--committers" => settings.distinct_committers = positive(&flag, value()?)?,
                "--group-committers" => {
                    let n = positive(&flag, value()?)?;
                    settings.one_group_committers = n;
                    settings.under_commits_committers = n;
                }
                "--rebalance-members" => settings.rebalance_members = positive(&flag, value()?)?,
                "--rebalances" => settings.rebalances = positive(&flag, value()?)?,
                "--work-dir" => work_dir = PathBuf::from(value()?),
                "--json" => json = PathBuf::from(value()?),
                "--svg" => svg = PathBuf::from(value()?),
                "--threads" => threads = positive(&flag, value()?)?,
                "-h" | "--help" => return Err(LoadgenError::Help),
                _ => return Err(LoadgenError::UnknownArgument(arg)),
            }
        }
        if settings.groups > settings.members {
            return Err(LoadgenError::BadValue {
                flag: "--groups".to_owned(),
                value: settings.groups.to_string(),
                reason: format!("more groups than the {} members", settings.members),
            });
        }
        let server = match (spawn, connect) {
            (Some(path), None) if pid.is_none() => ServerSpec::Spawn(path),
            (None, Some(addr)) => ServerSpec::Connect { addr, pid },
            _ => return Err(LoadgenError::NoServer),
        };
        let cluster = match (etcd, etcd_members) {
            (None, None) => None,
            (None, Some(n)) => return Err(bad("--etcd-members", &n.to_string(), "needs --etcd PATH")),
            (Some(etcd), _) if !matches!(server, ServerSpec::Spawn(_)) => {
                let reason = "needs --server PATH: the generator spawns the cluster node";
                return Err(bad("--etcd", &etcd.display().to_string(), reason));
            }
            (Some(etcd), members) => {
                Some(ClusterSpec { etcd, members: members.unwrap_or(DEFAULT_ETCD_MEMBERS) })
            }
        };
        Ok(Options { server, cluster, scenarios, settings, work_dir, json, svg, threads })
    }
}

fn bad(flag: &str, value: &str, reason: &str) -> LoadgenError {
    LoadgenError::BadValue { flag: flag.to_owned(), value: value.to_owned(), reason: reason.to_owned() }
}

fn parse<T: std::str::FromStr>(flag: &str, value: String, expected: &str) -> Result<T, LoadgenError> {
    value.parse().map_err(|_| bad(flag, &value, &format!("expected {expected}")))
}

fn positive(flag: &str, value: String) -> Result<usize, LoadgenError> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 && n <= 1_000_000 => Ok(n),
        _ => Err(bad(flag, &value, "expected a whole number from 1 to 1000000")),
    }
}

fn parse_members(flag: &str, value: String) -> Result<usize, LoadgenError> {
    match value.parse::<usize>() {
        Ok(n) if (1..=MAX_ETCD_MEMBERS).contains(&n) => Ok(n),
        _ => Err(bad(flag, &value, &format!("expected a whole number from 1 to {MAX_ETCD_MEMBERS}"))),
    }
}

fn parse_duration(flag: &str, value: String) -> Result<Duration, LoadgenError> {
    match value.parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= 86_400.0 => Ok(Duration::from_secs_f64(secs)),
        _ => Err(bad(flag, &value, "expected seconds, more than 0 and at most 86400")),
    }
}

fn parse_rates(flag: &str, value: &str) -> Result<Vec<f64>, LoadgenError> {
    value
        .split(',')
        .map(|r| match r.trim().parse::<f64>() {
            Ok(rate) if rate.is_finite() && rate >= 1.0 => Ok(rate),
            _ => Err(bad(flag, value, "expected comma-separated rates per second, each at least 1")),
        })
        .collect()
}

fn parse_scenarios(flag: &str, value: &str) -> Result<Vec<Scenario>, LoadgenError> {
    let names: Vec<&str> = Scenario::ALL.iter().map(|s| s.name()).collect();
    value
        .split(',')
        .map(|name| {
            Scenario::from_name(name.trim()).ok_or_else(|| {
                bad(flag, value, &format!("unknown scenario {name:?}; known: {}", names.join(", ")))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Result<Options, LoadgenError> {
        Options::from_args(line.split_whitespace())
    }

    #[test]
    fn a_full_command_line() {
        let o =
            args("--server bin/gs --duration 2.5 --scenarios idle,sweep --sweep-rates 100,200 --threads 3")
                .expect("parses");
        assert_eq!(o.server, ServerSpec::Spawn(PathBuf::from("bin/gs")));
        assert_eq!(o.settings.duration, Duration::from_millis(2500));
        assert_eq!(o.scenarios, [Scenario::Idle, Scenario::Sweep]);
        assert_eq!(o.settings.sweep_rates, [100.0, 200.0]);
        assert_eq!(o.threads, 3);
        let o = args("--connect=127.0.0.1:9 --server-pid 42").expect("parses");
        assert_eq!(
            o.server,
            ServerSpec::Connect { addr: "127.0.0.1:9".parse().expect("addr"), pid: Some(42) }
        );
        assert_eq!(o.scenarios.len(), 9);
    }

    #[test]
    fn bad_command_lines_are_typed_errors() {
        assert_eq!(args(""), Err(LoadgenError::NoServer));
        assert_eq!(args("--server a --connect 127.0.0.1:1"), Err(LoadgenError::NoServer));
        assert_eq!(args("--server a --server-pid 3"), Err(LoadgenError::NoServer));
        assert_eq!(args("--server"), Err(LoadgenError::MissingValue("--server".into())));
        assert_eq!(args("--frobnicate"), Err(LoadgenError::UnknownArgument("--frobnicate".into())));
        assert_eq!(args("--help"), Err(LoadgenError::Help));
        for line in [
            "--server a --duration 0",
            "--server a --duration x",
            "--server a --members -3",
            "--server a --scenarios idle,nope",
            "--server a --sweep-rates 10,,20",
            "--server a --members 5 --groups 6",
            "--connect localhost",
        ] {
            assert!(matches!(args(line), Err(LoadgenError::BadValue { .. })), "{line}");
        }
    }

    #[test]
    fn scenario_names_round_trip() {
        for s in Scenario::ALL {
            assert_eq!(Scenario::from_name(s.name()), Some(s));
        }
        assert_eq!(Settings::default().topic_partitions(), 100);
    }
}
