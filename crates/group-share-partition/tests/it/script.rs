//! A small script language for Kafka's `SharePartitionTest` cases: each case is one
//! table row, a list of steps and expectations run against one share partition with
//! a persister that answers as the script says (by default every write succeeds at
//! once, like Kafka's `NoOpStatePersister`).
//!
//! Steps, one per line (`#` starts a comment):
//!
//! ```text
//! config inflight=200 delivery=5 lock=30000     before init
//! init start=5 epoch=3 batches=5-10/0/2,11-15/4/3 [reset=15] [error=69] [=> err=-1]
//! active                                        init from an empty read at 0
//! acquire [member=m] [limit] [batch=500] [max=N] [fetch=O] 0-9,10-19 => 0-9/1,10-19/1 count=20
//! acquire committed aborted=2@10 0-8:t1,9:c1,10-18:t2,19:a2 => ...   read_committed; batch
//!         kinds :tP data of transactional producer P, :aP/:cP its abort/commit marker,
//!         :xP another control batch, :pP non-transactional with producer id P
//! ack [member=m] 0-9/1 12-14/[1,0,2] => ok | err=121
//! release [member=m] => ok | err=121
//! persister ok | fail=69 | hold                 how writes complete (timeout writes too)
//! complete [at=1] ok | fail=69                 a held write (the oldest, or the at-th)
//! advance 100                                   the clock moves; due locks expire
//! lso 7                                         the log start offset moved
//! setlock 500                                   the group's record lock duration changed
//! expect start=5 end=15 next=5 epoch=3 dcc=5 inflight=11 find=true state=active can=true
//! expect deadline=100 | deadline=none gap=10-30 | gap=none
//! batches 5-10,11-15:o                          the cache layout (`:o` per offset)
//! rec 5-10=avail/2 0-4=acq/1/m/lock 6=arch/1/-/nolock   record states (holder, lock)
//! writes 1 [last=0-9/2/1,10-10/0/1 start=10]    writes issued so far, the last one's runs
//! ```

use group_share_partition::{
    AbortedTransaction, AcknowledgementBatch, AcquireMode, AcquireRequest, ControlRecordType, FetchedBatch,
    IsolationLevel, PartitionState, PendingWrite, PersisterFailure, PersisterStateBatch,
    ReadShareGroupStateResult, RecordState, SharePartition, SharePartitionConfig,
};
use group_types::{GroupId, MemberId, TopicId};

const TOPIC: TopicId = TopicId::from_u128(0x5eed);
/// Kafka's test constants: `MEMBER_ID`, `BATCH_SIZE`, `MAX_FETCH_RECORDS`.
const MEMBER: &str = "member-1";
const BATCH_SIZE: i32 = 500;

/// How the scripted persister answers writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Persister {
    Ok,
    Fail(i16),
    Hold,
}

struct Run {
    config: SharePartitionConfig,
    sp: Option<SharePartition>,
    now: i64,
    persister: Persister,
    held: Vec<PendingWrite>,
    writes: Vec<PendingWrite>,
}

/// Runs `script`, panicking with the line that failed.
pub(crate) fn run(script: &str) {
    let mut r = Run {
        // Kafka's `SharePartitionBuilder` defaults.
        config: SharePartitionConfig {
            max_in_flight_records: 200,
            max_delivery_count: 5,
            record_lock_duration_ms: 30_000,
        },
        sp: None,
        now: 0,
        persister: Persister::Ok,
        held: Vec::new(),
        writes: Vec::new(),
    };
    for (n, line) in script.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Err(e) = r.step(line) {
            panic!("line {} `{line}`: {e}", n + 1);
        }
    }
}

fn range(s: &str) -> (i64, i64) {
    match s.split_once('-') {
        Some((a, b)) if !a.is_empty() => (a.parse().expect("first offset"), b.parse().expect("last offset")),
        _ => {
            let o = s.parse().expect("offset");
            (o, o)
        }
    }
}

/// A fetched batch: `0-9` plain, `0-9:t1` transactional data of producer 1, `10:a1` /
/// `10:c1` producer 1's abort / commit marker, `10:x1` another control batch, `0-9:p1`
/// non-transactional with producer id 1.
fn fetched_batch(w: &str) -> FetchedBatch {
    let (r, kind) = match w.split_once(':') {
        Some((r, k)) => (r, Some(k)),
        None => (w, None),
    };
    let (f, l) = range(r);
    let Some(kind) = kind else { return FetchedBatch::new(f, l) };
    let producer: i64 = kind[1..].parse().expect("producer id");
    match &kind[..1] {
        "t" => FetchedBatch::transactional(f, l, producer),
        "a" => FetchedBatch::control(f, l, producer, ControlRecordType::Abort),
        "c" => FetchedBatch::control(f, l, producer, ControlRecordType::Commit),
        "x" => FetchedBatch::control(f, l, producer, ControlRecordType::Other),
        "p" => FetchedBatch { producer_id: producer, ..FetchedBatch::new(f, l) },
        other => panic!("unknown batch kind {other}"),
    }
}

fn record_state(s: &str) -> RecordState {
    match s {
        "avail" => RecordState::Available,
        "acq" => RecordState::Acquired,
        "acked" => RecordState::Acknowledged,
        "arch" => RecordState::Archived,
        other => panic!("unknown state {other}"),
    }
}

fn options<'a>(words: &[&'a str]) -> (Vec<(&'a str, &'a str)>, Vec<&'a str>) {
    let mut opts = Vec::new();
    let mut rest = Vec::new();
    for w in words {
        match w.split_once('=') {
            Some((k, v)) if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphabetic()) => opts.push((k, v)),
            _ => rest.push(*w),
        }
    }
    (opts, rest)
}

fn opt<'a>(opts: &[(&'a str, &'a str)], key: &str) -> Option<&'a str> {
    opts.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

impl Run {
    fn sp(&mut self) -> &mut SharePartition {
        self.sp.as_mut().expect("init or active first")
    }

    fn write_outcome(&mut self, w: Option<PendingWrite>) -> Result<(), group_share_partition::ShareError> {
        let Some(w) = w else { return Ok(()) };
        self.writes.push(w.clone());
        match self.persister {
            Persister::Hold => {
                self.held.push(w);
                Ok(())
            }
            Persister::Ok => self.sp().complete_write(w.id, Ok(())).expect("issued").result,
            Persister::Fail(code) => {
                self.sp().complete_write(w.id, Err(PersisterFailure::ErrorCode(code))).expect("issued").result
            }
        }
    }

    fn step(&mut self, line: &str) -> Result<(), String> {
        let (head, expected) = match line.split_once("=>") {
            Some((h, e)) => (h.trim(), Some(e.trim())),
            None => (line, None),
        };
        let words: Vec<&str> = head.split_whitespace().collect();
        let (opts, rest) = options(&words[1..]);
        let member = MemberId::from(opt(&opts, "member").unwrap_or(MEMBER).to_owned());
        match words[0] {
            "config" => {
                if let Some(v) = opt(&opts, "inflight") {
                    self.config.max_in_flight_records = v.parse().expect("inflight");
                }
                if let Some(v) = opt(&opts, "delivery") {
                    self.config.max_delivery_count = v.parse().expect("delivery");
                }
                if let Some(v) = opt(&opts, "lock") {
                    self.config.record_lock_duration_ms = v.parse().expect("lock");
                }
            }
            "active" | "init" => {
                let mut sp =
                    SharePartition::new(GroupId::from_static("test-group"), TOPIC, 0, 0, self.config)
                        .map_err(|e| e.to_string())?;
                sp.begin_initialize().map_err(|e| e.to_string())?;
                let batches = opt(&opts, "batches")
                    .map(|b| {
                        b.split(',')
                            .map(|one| {
                                let mut p = one.split('/');
                                let (f, l) = range(p.next().expect("range"));
                                let state: u8 = p.next().expect("state").parse().expect("state id");
                                let count: i16 = p.next().expect("count").parse().expect("count");
                                PersisterStateBatch::new(f, l, state, count)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let read = ReadShareGroupStateResult {
                    topic_id: TOPIC,
                    partition: 0,
                    error_code: opt(&opts, "error").map_or(0, |e| e.parse().expect("error")),
                    state_epoch: opt(&opts, "epoch").map_or(0, |e| e.parse().expect("epoch")),
                    start_offset: opt(&opts, "start").map_or(0, |e| e.parse().expect("start")),
                    state_batches: batches,
                };
                let read =
                    if opt(&opts, "noanswer").is_some() { Err(PersisterFailure::NoAnswer) } else { Ok(read) };
                let reset = opt(&opts, "reset").map(|r| r.parse().expect("reset"));
                let outcome = sp.complete_initialize(read, reset);
                self.sp = Some(sp);
                check_outcome(outcome.map(|_| ()), expected)?;
            }
            "acquire" => {
                let batches: Vec<FetchedBatch> = rest
                    .iter()
                    .flat_map(|w| w.split(','))
                    .filter(|w| !w.is_empty() && *w != "limit" && *w != "committed")
                    .map(fetched_batch)
                    .collect();
                let aborted: Vec<AbortedTransaction> = opt(&opts, "aborted")
                    .map(|a| {
                        a.split(',')
                            .map(|t| {
                                let (p, f) = t.split_once('@').expect("producer@first");
                                AbortedTransaction::new(
                                    p.parse().expect("producer"),
                                    f.parse().expect("first"),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let fetch = opt(&opts, "fetch")
                    .map(|f| f.parse().expect("fetch"))
                    .or_else(|| batches.first().map(|b| b.base_offset))
                    .unwrap_or(0);
                let request = AcquireRequest {
                    mode: if rest.contains(&"limit") || opt(&opts, "mode") == Some("limit") {
                        AcquireMode::RecordLimit
                    } else {
                        AcquireMode::BatchOptimized
                    },
                    batch_size: opt(&opts, "batch").map_or(BATCH_SIZE, |b| b.parse().expect("batch")),
                    max_fetch_records: opt(&opts, "max").map_or(i32::MAX, |m| m.parse().expect("max")),
                    fetch_offset: fetch,
                    batches: &batches,
                    isolation: if rest.contains(&"committed") {
                        IsolationLevel::ReadCommitted
                    } else {
                        IsolationLevel::ReadUncommitted
                    },
                    aborted_transactions: &aborted,
                };
                let now = self.now;
                let got = self.sp().acquire(&member, request, now).map_err(|e| e.to_string())?;
                if let Some(expected) = expected {
                    let (eopts, erest) = options(&expected.split_whitespace().collect::<Vec<_>>());
                    let want: Vec<(i64, i64, i16)> = erest
                        .iter()
                        .flat_map(|w| w.split(','))
                        .filter(|w| !w.is_empty() && *w != "none")
                        .map(|w| {
                            let (r, c) = w.split_once('/').expect("range/count");
                            let (f, l) = range(r);
                            (f, l, c.parse().expect("count"))
                        })
                        .collect();
                    let have: Vec<(i64, i64, i16)> = got
                        .records
                        .iter()
                        .map(|a| (a.first_offset, a.last_offset, a.delivery_count))
                        .collect();
                    if !erest.is_empty() && have != want {
                        return Err(format!("acquired {have:?}, expected {want:?}"));
                    }
                    if let Some(c) = opt(&eopts, "count") {
                        let c: i32 = c.parse().expect("count");
                        if got.count != c {
                            return Err(format!("count {}, expected {c}", got.count));
                        }
                    }
                }
            }
            "ack" => {
                let batches: Vec<AcknowledgementBatch> = rest
                    .iter()
                    .map(|w| {
                        let (r, t) = w.split_once('/').expect("range/type");
                        let (f, l) = range(r);
                        let types = if let Some(list) = t.strip_prefix('[') {
                            list.trim_end_matches(']').split(',').map(|x| x.parse().expect("type")).collect()
                        } else {
                            vec![t.parse().expect("type")]
                        };
                        AcknowledgementBatch::per_offset(f, l, types)
                    })
                    .collect();
                let now = self.now;
                let outcome = self.sp().acknowledge(&member, &batches, now);
                let outcome = match outcome {
                    Ok(w) => self.write_outcome(w),
                    Err(e) => Err(e),
                };
                check_outcome(outcome, expected)?;
            }
            "release" => {
                let outcome = self.sp().release_acquired_records(&member);
                let outcome = match outcome {
                    Ok(w) => self.write_outcome(w),
                    Err(e) => Err(e),
                };
                check_outcome(outcome, expected)?;
            }
            "persister" => {
                self.persister = match rest.first().copied().or(opts.first().map(|(k, _)| *k)) {
                    Some("ok") => Persister::Ok,
                    Some("hold") => Persister::Hold,
                    Some("fail") => Persister::Fail(opt(&opts, "fail").expect("code").parse().expect("code")),
                    other => return Err(format!("persister {other:?}")),
                };
            }
            "complete" => {
                if self.held.is_empty() {
                    return Err("no held write".into());
                }
                let at = opt(&opts, "at").map_or(0, |a| a.parse().expect("index"));
                if at >= self.held.len() {
                    return Err(format!("no held write at {at}"));
                }
                let w = self.held.remove(at);
                let outcome = match opt(&opts, "fail") {
                    Some(code) => Err(PersisterFailure::ErrorCode(code.parse().expect("code"))),
                    None => Ok(()),
                };
                let done = self.sp().complete_write(w.id, outcome).map_err(|e| e.to_string())?;
                check_outcome(done.result, expected)?;
            }
            "advance" => {
                self.now += rest[0].parse::<i64>().expect("ms");
                let now = self.now;
                let writes = self.sp().expire_locks(now);
                for w in writes {
                    // Kafka keeps a timeout's changes whatever its write answers.
                    let _ = self.write_outcome(Some(w));
                }
            }
            "setlock" => {
                let ms = rest[0].parse().expect("ms");
                self.sp().set_record_lock_duration_ms(ms).map_err(|e| e.to_string())?;
            }
            "lso" => {
                let o = rest[0].parse().expect("offset");
                self.sp().update_cache_and_offsets(o);
            }
            "expect" => self.expect(&opts)?,
            "batches" => {
                let want: Vec<(i64, i64, bool)> = rest
                    .iter()
                    .flat_map(|w| w.split(','))
                    .filter(|w| !w.is_empty() && *w != "none")
                    .map(|w| {
                        let (r, per) = match w.strip_suffix(":o") {
                            Some(r) => (r, true),
                            None => (w, false),
                        };
                        let (f, l) = range(r);
                        (f, l, per)
                    })
                    .collect();
                let have: Vec<(i64, i64, bool)> = self
                    .sp()
                    .cached_batches()
                    .map(|b| (b.first_offset, b.last_offset, b.per_offset))
                    .collect();
                if have != want {
                    return Err(format!("cache {have:?}, expected {want:?}"));
                }
            }
            "rec" => {
                for w in &rest {
                    let (r, s) = w.split_once('=').expect("range=state");
                    let (f, l) = range(r);
                    let mut parts = s.split('/');
                    let state = record_state(parts.next().expect("state"));
                    let count: Option<i32> = parts.next().map(|c| c.parse().expect("count"));
                    let holder = parts.next();
                    let locked = match parts.next() {
                        Some("lock") => Some(true),
                        Some("nolock") => Some(false),
                        None => None,
                        Some(other) => return Err(format!("bad lock word {other}")),
                    };
                    for o in f..=l {
                        let v = self.sp().record(o).ok_or(format!("offset {o} not cached"))?;
                        let holder_ok = match holder {
                            Some("-") => v.member_id.as_str().is_empty(),
                            Some(m) => v.member_id.as_str() == m,
                            None => true,
                        };
                        let lock_ok = locked.is_none_or(|l| l == v.lock_deadline_ms.is_some());
                        if v.state != state
                            || count.is_some_and(|c| c != v.delivery_count)
                            || !holder_ok
                            || !lock_ok
                        {
                            return Err(format!("offset {o}: {v:?}, expected {s}"));
                        }
                    }
                }
                if let Some((k, _)) = opts.first() {
                    return Err(format!("bad rec word {k}"));
                }
            }
            "writes" => {
                let n: usize = rest[0].parse().expect("count");
                if self.writes.len() != n {
                    return Err(format!("{} writes, expected {n}", self.writes.len()));
                }
                if let Some(last) = opt(&opts, "last") {
                    let w = self.writes.last().ok_or("no write")?;
                    let want: Vec<PersisterStateBatch> = last
                        .split(',')
                        .map(|b| {
                            let mut p = b.split('/');
                            let (f, l) = range(p.next().expect("range"));
                            PersisterStateBatch::new(
                                f,
                                l,
                                p.next().expect("state").parse().expect("state"),
                                p.next().expect("count").parse().expect("count"),
                            )
                        })
                        .collect();
                    if w.parameters.state_batches != want {
                        return Err(format!(
                            "last write {:?}, expected {want:?}",
                            w.parameters.state_batches
                        ));
                    }
                }
                if let Some(start) = opt(&opts, "start") {
                    let w = self.writes.last().ok_or("no write")?;
                    if w.parameters.start_offset.to_string() != start {
                        return Err(format!(
                            "last write start {}, expected {start}",
                            w.parameters.start_offset
                        ));
                    }
                }
            }
            other => return Err(format!("unknown step {other}")),
        }
        Ok(())
    }

    fn expect(&mut self, opts: &[(&str, &str)]) -> Result<(), String> {
        for (k, v) in opts {
            let sp = self.sp();
            let have = match *k {
                "start" => sp.start_offset().to_string(),
                "end" => sp.end_offset().to_string(),
                "next" => sp.next_fetch_offset().to_string(),
                "epoch" => sp.state_epoch().to_string(),
                "dcc" => sp.delivery_complete_count().to_string(),
                "inflight" => sp.in_flight_record_count().to_string(),
                "find" => sp.find_next_fetch_offset().to_string(),
                "can" => sp.can_acquire_records().to_string(),
                "gap" => sp.read_gap_window().map_or("none".to_owned(), |(g, e)| format!("{g}-{e}")),
                "deadline" => sp.next_lock_deadline().map_or("none".to_owned(), |d| d.to_string()),
                "state" => match sp.partition_state() {
                    PartitionState::Empty => "empty",
                    PartitionState::Initializing => "initializing",
                    PartitionState::Active => "active",
                    PartitionState::Failed => "failed",
                    PartitionState::Fenced => "fenced",
                    _ => "other",
                }
                .to_owned(),
                other => return Err(format!("unknown expectation {other}")),
            };
            if have != *v {
                return Err(format!("{k} is {have}, expected {v}"));
            }
        }
        Ok(())
    }
}

fn check_outcome(
    outcome: Result<(), group_share_partition::ShareError>,
    expected: Option<&str>,
) -> Result<(), String> {
    match (outcome, expected) {
        (Ok(()), None | Some("ok")) => Ok(()),
        (Err(e), Some(want)) if want.strip_prefix("err=") == Some(&e.error_code().to_string()) => Ok(()),
        (Err(e), Some(want)) if want.strip_prefix("err=") == Some(&format!("{e:?}")) => Ok(()),
        (outcome, expected) => Err(format!("got {outcome:?}, expected {expected:?}")),
    }
}
