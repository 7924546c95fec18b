//! What `/proc` says about a process: CPU time, resident memory, threads and
//! open file descriptors, and a [`Meter`] that takes the CPU used over a
//! measurement window by the server, the etcd members it stores in (a cluster
//! node), and the generator itself.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::LoadgenError;

/// Memory, threads and descriptors of one process at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessStats {
    /// Resident set size (`VmRSS`), in bytes.
    pub rss_bytes: u64,
    /// Threads (`Threads`).
    pub threads: u64,
    /// Entries of `/proc/PID/fd`.
    pub fds: u64,
}

impl ProcessStats {
    /// Reads `/proc/PID/status` and counts `/proc/PID/fd`.
    pub fn read(pid: u32) -> Result<ProcessStats, LoadgenError> {
        let path = format!("/proc/{pid}/status");
        let status = std::fs::read_to_string(&path).map_err(|e| LoadgenError::io(&path, &e))?;
        let field = |name: &str| -> Result<u64, LoadgenError> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| LoadgenError::Io { what: path.clone(), reason: format!("no {name} line") })
        };
        let fd_dir = format!("/proc/{pid}/fd");
        let fds = std::fs::read_dir(&fd_dir).map_err(|e| LoadgenError::io(&fd_dir, &e))?.count();
        Ok(ProcessStats {
            rss_bytes: field("VmRSS:")? * 1024,
            threads: field("Threads:")?,
            fds: u64::try_from(fds).unwrap_or(u64::MAX),
        })
    }
}

/// The kernel's clock tick (`getconf CLK_TCK`), in which `/proc/PID/stat`
/// counts CPU time; 100 when `getconf` is not there.
pub fn clock_ticks_per_second() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|&t| t > 0.0)
            .unwrap_or(100.0)
    })
}

/// User plus system CPU seconds process `pid` has used so far.
pub fn cpu_seconds(pid: u32) -> Result<f64, LoadgenError> {
    let path = format!("/proc/{pid}/stat");
    let stat = std::fs::read_to_string(&path).map_err(|e| LoadgenError::io(&path, &e))?;
    parse_cpu_ticks(&stat)
        .map(|ticks| ticks as f64 / clock_ticks_per_second())
        .ok_or_else(|| LoadgenError::Io { what: path, reason: "no utime/stime fields".to_owned() })
}

/// `utime + stime` of a `/proc/PID/stat` line, in clock ticks.
fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    // The command name (field 2) may hold spaces and parentheses: count the
    // fields after its last ')', where field 3 (state) comes first.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// CPU used over one measurement window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuUsage {
    /// Wall-clock length of the window.
    pub elapsed: Duration,
    /// Server CPU seconds; `None` without a server pid or if it could not be read.
    pub server_s: Option<f64>,
    /// The etcd members' CPU seconds, summed; `None` without etcd pids or if
    /// one could not be read.
    pub etcd_s: Option<f64>,
    /// The generator's own CPU seconds.
    pub generator_s: f64,
}

/// Started at the beginning of a measurement window, read at its end.
#[derive(Debug, Clone)]
pub struct Meter {
    server_pid: Option<u32>,
    server_start: Option<f64>,
    etcd_pids: Vec<u32>,
    etcd_start: Option<f64>,
    generator_start: f64,
    started: Instant,
}

impl Meter {
    /// Takes the starting readings of the server (if its pid is known), of
    /// the etcd members `etcd_pids` (none for a server on memory or sled) and
    /// of this process.
    pub fn start(server_pid: Option<u32>, etcd_pids: &[u32]) -> Meter {
        Meter {
            server_pid,
            server_start: server_pid.and_then(|pid| cpu_seconds(pid).ok()),
            etcd_pids: etcd_pids.to_vec(),
            etcd_start: summed_cpu_seconds(etcd_pids),
            generator_start: cpu_seconds(std::process::id()).unwrap_or(0.0),
            started: Instant::now(),
        }
    }

    /// The CPU used since [`Meter::start`].
    pub fn read(&self) -> CpuUsage {
        let server_now = self.server_pid.and_then(|pid| cpu_seconds(pid).ok());
        let since = |start: Option<f64>, now: Option<f64>| start.zip(now).map(|(a, b)| (b - a).max(0.0));
        CpuUsage {
            elapsed: self.started.elapsed(),
            server_s: since(self.server_start, server_now),
            etcd_s: since(self.etcd_start, summed_cpu_seconds(&self.etcd_pids)),
            generator_s: (cpu_seconds(std::process::id()).unwrap_or(0.0) - self.generator_start).max(0.0),
        }
    }
}

/// The CPU seconds of every process of `pids` together; `None` if there are
/// none or one cannot be read (a member that died would make the sum a lie).
fn summed_cpu_seconds(pids: &[u32]) -> Option<f64> {
    if pids.is_empty() {
        return None;
    }
    pids.iter().map(|&pid| cpu_seconds(pid).ok()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_utime_and_stime_after_a_tricky_command_name() {
        let stat = "4242 (a (weird) name) S 1 2 3 4 5 6 7 8 9 10 250 31 0 0 20 0 9 0 100 0 0";
        assert_eq!(parse_cpu_ticks(stat), Some(281));
        assert_eq!(parse_cpu_ticks("garbage"), None);
        assert_eq!(parse_cpu_ticks("1 (x) S 1 2"), None);
    }

    #[test]
    fn reads_this_process() {
        let stats = ProcessStats::read(std::process::id()).expect("own /proc entry");
        assert!(stats.rss_bytes > 0 && stats.threads >= 1 && stats.fds >= 1);
        assert!(cpu_seconds(std::process::id()).expect("own stat") >= 0.0);
        assert!(ProcessStats::read(u32::MAX).is_err());
    }

    #[test]
    fn etcd_cpu_is_summed_over_every_pid_and_absent_without_one() {
        let me = std::process::id();
        assert_eq!(summed_cpu_seconds(&[]), None);
        assert_eq!(summed_cpu_seconds(&[me, u32::MAX]), None, "an unreadable pid spoils the sum");
        let one = summed_cpu_seconds(&[me]).expect("own stat");
        let two = summed_cpu_seconds(&[me, me]).expect("own stat");
        assert!(two >= 2.0 * one, "{two} for twice {one}");
        let usage = Meter::start(Some(me), &[]).read();
        assert!(usage.server_s.is_some() && usage.etcd_s.is_none(), "{usage:?}");
        assert!(Meter::start(None, &[me]).read().etcd_s.is_some());
    }
}
