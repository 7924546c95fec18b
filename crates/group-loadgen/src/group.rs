//! Opening connections, forming consumer groups over them as a client would,
//! and one measured rebalance round: every member rejoins at once, the leader
//! syncs an assignment, the followers sync.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsResponse, HeartbeatResponse, JoinGroupResponse, SyncGroupResponse,
};
use kafka_protocol::protocol::StrBytes;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::LoadgenError;
use crate::client::{Connection, PreparedRequest};
use crate::drive::{Stream, code_name};
use crate::requests::{self, MEMBER_ID_REQUIRED, REBALANCE_IN_PROGRESS};

/// Connects in flight at once: enough to open thousands quickly, few enough
/// not to overflow the server's accept backlog.
const CONNECT_CONCURRENCY: usize = 128;

/// A set-up request (JoinGroup, SyncGroup) waits at most this long: longer
/// than the rebalance timeout, after which the coordinator answers anyway.
const SETUP_TIMEOUT: Duration = Duration::from_secs(90);

/// A member of a formed group, on its own connection.
#[derive(Debug)]
pub(crate) struct Member {
    pub(crate) conn: Connection,
    pub(crate) group: String,
    pub(crate) member_id: String,
    pub(crate) generation: i32,
}

impl Member {
    /// The member's connection with its heartbeat, encoded once.
    pub(crate) fn into_heartbeat_stream(self) -> Result<Stream, LoadgenError> {
        let hb = requests::heartbeat(&self.group, self.generation, &self.member_id);
        let request = PreparedRequest::new(ApiKey::Heartbeat, requests::HEARTBEAT_VERSION, &hb)?;
        Ok(Stream { conn: self.conn, request })
    }
}

async fn with_timeout<T>(
    what: &str,
    fut: impl Future<Output = Result<T, LoadgenError>>,
) -> Result<T, LoadgenError> {
    tokio::time::timeout(SETUP_TIMEOUT, fut)
        .await
        .map_err(|_| LoadgenError::Timeout(format!("{SETUP_TIMEOUT:?} ({what})")))?
}

/// After this many failed connections in a row the server is taken to be
/// refusing more (out of descriptors or threads), and the rest are not tried.
const GIVE_UP_AFTER_FAILURES: usize = 2 * CONNECT_CONCURRENCY;

/// How long an ApiVersions right after connecting may take.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens `n` connections, `CONNECT_CONCURRENCY` at a time; with `hello`,
/// each first sends an ApiVersions, as every client does. Failures are kept
/// in place so the caller can count them. Connections not yet started when
/// `deadline` passes, or after `GIVE_UP_AFTER_FAILURES` failures in a row,
/// are not tried (and fail as such): a server that stops accepting would
/// otherwise cost a connect timeout per connection.
pub(crate) async fn open_connections(
    addr: SocketAddr,
    n: usize,
    hello: bool,
    deadline: Option<Instant>,
) -> Vec<Result<Connection, LoadgenError>> {
    let permits = Arc::new(Semaphore::new(CONNECT_CONCURRENCY));
    let failures_in_a_row = Arc::new(AtomicUsize::new(0));
    let mut set = JoinSet::new();
    for i in 0..n {
        let (permits, failures_in_a_row) = (Arc::clone(&permits), Arc::clone(&failures_in_a_row));
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let skip = if failures_in_a_row.load(Ordering::Relaxed) >= GIVE_UP_AFTER_FAILURES {
                Some(format!("not tried after {GIVE_UP_AFTER_FAILURES} failures in a row"))
            } else if deadline.is_some_and(|d| Instant::now() >= d) {
                Some("not tried: the opening deadline passed".to_owned())
            } else {
                None
            };
            if let Some(reason) = skip {
                return (i, Err(LoadgenError::Connect { addr, reason }));
            }
            let result = open_one(addr, hello).await;
            match &result {
                Ok(_) => failures_in_a_row.store(0, Ordering::Relaxed),
                Err(_) => {
                    failures_in_a_row.fetch_add(1, Ordering::Relaxed);
                }
            }
            (i, result)
        });
    }
    let mut out: Vec<Result<Connection, LoadgenError>> =
        (0..n).map(|_| Err(LoadgenError::Runtime("connect task died".to_owned()))).collect();
    while let Some(joined) = set.join_next().await {
        if let Ok((i, result)) = joined {
            out[i] = result;
        }
    }
    out
}

async fn open_one(addr: SocketAddr, hello: bool) -> Result<Connection, LoadgenError> {
    let mut conn = Connection::connect(addr).await?;
    if hello {
        let req = requests::api_versions();
        let call = conn.call(ApiKey::ApiVersions, requests::API_VERSIONS_VERSION, &req);
        let resp: ApiVersionsResponse = tokio::time::timeout(HELLO_TIMEOUT, call)
            .await
            .map_err(|_| LoadgenError::Timeout(format!("{HELLO_TIMEOUT:?} (ApiVersions)")))??;
        if resp.error_code != 0 {
            return Err(LoadgenError::Protocol(format!(
                "ApiVersions answered {}",
                code_name(resp.error_code)
            )));
        }
    }
    Ok(conn)
}

/// Opens `n` connections that must all succeed.
pub(crate) async fn connect_all(addr: SocketAddr, n: usize) -> Result<Vec<Connection>, LoadgenError> {
    open_connections(addr, n, true, None).await.into_iter().collect()
}

/// Forms `groups` groups named `{prefix}-{g}` sharing `members` members as
/// evenly as they divide, all concurrently; returns the members group by group.
pub(crate) async fn form_groups(
    addr: SocketAddr,
    prefix: &str,
    members: usize,
    groups: usize,
) -> Result<Vec<Member>, LoadgenError> {
    let groups = groups.clamp(1, members.max(1));
    let mut conns = connect_all(addr, members).await?.into_iter();
    let mut set = JoinSet::new();
    for g in 0..groups {
        let size = members / groups + usize::from(g < members % groups);
        let group_conns: Vec<Connection> = conns.by_ref().take(size).collect();
        let group = format!("{prefix}-{g}");
        set.spawn(async move { (g, form_group(group, group_conns).await) });
    }
    let mut formed: Vec<Option<Vec<Member>>> = (0..groups).map(|_| None).collect();
    while let Some(joined) = set.join_next().await {
        let (g, result) = joined.map_err(|e| LoadgenError::Runtime(format!("group set-up task: {e}")))?;
        formed[g] = Some(result?);
    }
    Ok(formed.into_iter().flatten().flatten().collect())
}

/// One group of `conns.len()` members. Each member runs a client's loop
/// (join, take the id MEMBER_ID_REQUIRED hands out, join again, sync, then
/// heartbeat and rejoin on REBALANCE_IN_PROGRESS) until every member has
/// synced in one generation whose leader saw all of them: with no initial
/// delay the first generation holds only the members that came first.
pub(crate) async fn form_group(group: String, conns: Vec<Connection>) -> Result<Vec<Member>, LoadgenError> {
    let subscription = requests::subscription()?;
    let n = conns.len();
    let progress = Arc::new(Progress { n, generations: Mutex::new(BTreeMap::new()) });
    let mut set = JoinSet::new();
    for (i, conn) in conns.into_iter().enumerate() {
        let member = Member { conn, group: group.clone(), member_id: String::new(), generation: -1 };
        let (progress, subscription) = (Arc::clone(&progress), subscription.clone());
        set.spawn(async move {
            let formed = tokio::time::timeout(SETUP_TIMEOUT, settle(member, &subscription, &progress)).await;
            (i, formed.unwrap_or_else(|_| Err(LoadgenError::Timeout(format!("{SETUP_TIMEOUT:?} (forming)")))))
        });
    }
    let mut members: Vec<Option<Member>> = (0..n).map(|_| None).collect();
    while let Some(joined) = set.join_next().await {
        let (i, member) = joined.map_err(|e| LoadgenError::Runtime(format!("member task: {e}")))?;
        match member {
            Ok(m) => members[i] = Some(m),
            Err(LoadgenError::Group { reason, .. }) => return Err(LoadgenError::Group { group, reason }),
            Err(e) => return Err(e),
        }
    }
    Ok(members.into_iter().flatten().collect())
}

/// Per generation: members that synced in it, and how many the leader saw.
#[derive(Debug)]
struct Progress {
    n: usize,
    generations: Mutex<BTreeMap<i32, (usize, Option<usize>)>>,
}

impl Progress {
    fn synced(&self, generation: i32, leader_saw: Option<usize>) {
        if let Ok(mut gens) = self.generations.lock() {
            let entry = gens.entry(generation).or_insert((0, None));
            entry.0 += 1;
            entry.1 = entry.1.or(leader_saw);
        }
    }

    fn settled(&self, generation: i32) -> bool {
        self.generations.lock().is_ok_and(|gens| gens.get(&generation) == Some(&(self.n, Some(self.n))))
    }
}

/// How often a member that has synced heartbeats while the rest of its group
/// catches up: the heartbeat is how it learns of the next rebalance.
const SETTLE_POLL: Duration = Duration::from_millis(10);

async fn settle(mut m: Member, subscription: &Bytes, progress: &Progress) -> Result<Member, LoadgenError> {
    let unexpected = |m: &Member, what: &str, code: i16| LoadgenError::Group {
        group: m.group.clone(),
        reason: format!("{what} answered {}", code_name(code)),
    };
    loop {
        let req = requests::join_group(&m.group, &m.member_id, subscription);
        let join: JoinGroupResponse =
            m.conn.call(ApiKey::JoinGroup, requests::JOIN_GROUP_VERSION, &req).await?;
        match join.error_code {
            0 => {}
            MEMBER_ID_REQUIRED => {
                m.member_id = join.member_id.as_str().to_owned();
                continue;
            }
            code => return Err(unexpected(&m, "JoinGroup", code)),
        }
        m.member_id = join.member_id.as_str().to_owned();
        m.generation = join.generation_id;
        let (assignments, leader_saw) = leader_assignments(&join)?;
        let req = requests::sync_group(&m.group, m.generation, &m.member_id, assignments);
        let sync: SyncGroupResponse =
            m.conn.call(ApiKey::SyncGroup, requests::SYNC_GROUP_VERSION, &req).await?;
        match sync.error_code {
            0 => progress.synced(m.generation, leader_saw),
            REBALANCE_IN_PROGRESS => continue,
            code => return Err(unexpected(&m, "SyncGroup", code)),
        }
        let hb = requests::heartbeat(&m.group, m.generation, &m.member_id);
        loop {
            if progress.settled(m.generation) {
                return Ok(m);
            }
            let resp: HeartbeatResponse =
                m.conn.call(ApiKey::Heartbeat, requests::HEARTBEAT_VERSION, &hb).await?;
            match resp.error_code {
                0 => tokio::time::sleep(SETTLE_POLL).await,
                REBALANCE_IN_PROGRESS => break,
                code => return Err(unexpected(&m, "Heartbeat", code)),
            }
        }
    }
}

/// A leader's SyncGroup payload: (member id, ConsumerProtocolAssignment).
type Assignments = Vec<(StrBytes, Bytes)>;

/// The leader's SyncGroup assignments (member `k` of its JoinGroup answer gets
/// partition `k`) and the member count it saw; nothing for a follower.
fn leader_assignments(join: &JoinGroupResponse) -> Result<(Assignments, Option<usize>), LoadgenError> {
    if join.leader != join.member_id {
        return Ok((Vec::new(), None));
    }
    let assignments = join
        .members
        .iter()
        .enumerate()
        .map(|(k, member)| {
            let partition = i32::try_from(k).unwrap_or(i32::MAX);
            Ok((member.member_id.clone(), requests::assignment(vec![partition])?))
        })
        .collect::<Result<Vec<_>, LoadgenError>>()?;
    Ok((assignments, Some(join.members.len())))
}

/// What one rebalance round saw.
#[derive(Debug)]
pub(crate) struct Round {
    /// When the first JoinGroup went out.
    pub(crate) first_sent: Instant,
    /// When the last JoinGroup went out: the server cannot end the join phase
    /// before, so the spread from `first_sent` is the generator's, not the server's.
    pub(crate) last_sent: Instant,
    /// When the last JoinGroup answer came: the join phase's end.
    pub(crate) last_join: Instant,
    /// When the last SyncGroup answer came.
    pub(crate) last_answer: Instant,
    /// The generation each member ended in (the one its JoinGroup answered).
    pub(crate) generations: Vec<i32>,
    /// How many members the leader's JoinGroup answer listed.
    pub(crate) leader_saw: Option<usize>,
    /// Non-zero error codes, one line each.
    pub(crate) problems: Vec<String>,
}

impl Round {
    /// Why this round did not leave `n` members in one generation, if it did not.
    pub(crate) fn problem(&self, n: usize) -> Option<String> {
        if let Some(p) = self.problems.first() {
            return Some(p.clone());
        }
        let first = self.generations.first().copied();
        if self.generations.iter().any(|&g| Some(g) != first) {
            return Some(format!("members ended in generations {:?}", self.generations));
        }
        if self.leader_saw != Some(n) {
            return Some(format!("the leader saw {:?} of {n} members", self.leader_saw));
        }
        None
    }
}

/// Every member rejoins with its id at once, the leader syncs an assignment
/// (a partition of its own to each member), the followers sync.
pub(crate) async fn rebalance_round(
    members: Vec<Member>,
    subscription: &Bytes,
) -> Result<(Vec<Member>, Round), LoadgenError> {
    let n = members.len();
    let mut set = JoinSet::new();
    for (i, member) in members.into_iter().enumerate() {
        let subscription = subscription.clone();
        set.spawn(async move { (i, rejoin(member, subscription).await) });
    }
    let mut back: Vec<Option<Member>> = (0..n).map(|_| None).collect();
    let mut round = Round {
        first_sent: Instant::now() + Duration::from_secs(3600),
        last_sent: Instant::now() - Duration::from_secs(3600),
        last_join: Instant::now(),
        last_answer: Instant::now(),
        generations: vec![-1; n],
        leader_saw: None,
        problems: Vec::new(),
    };
    let mut failure = None;
    while let Some(joined) = set.join_next().await {
        let (i, rejoined) = joined.map_err(|e| LoadgenError::Runtime(format!("rejoin task: {e}")))?;
        match rejoined {
            Ok(r) => {
                round.first_sent = round.first_sent.min(r.sent);
                round.last_sent = round.last_sent.max(r.sent);
                round.last_join = round.last_join.max(r.joined);
                round.last_answer = round.last_answer.max(r.answered);
                round.generations[i] = r.member.generation;
                round.leader_saw = round.leader_saw.or(r.leader_saw);
                round.problems.extend(r.problem);
                back[i] = Some(r.member);
            }
            Err(e) => failure = failure.or(Some(e)),
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok((back.into_iter().flatten().collect(), round)),
    }
}

struct Rejoined {
    member: Member,
    sent: Instant,
    joined: Instant,
    answered: Instant,
    leader_saw: Option<usize>,
    problem: Option<String>,
}

async fn rejoin(mut m: Member, subscription: Bytes) -> Result<Rejoined, LoadgenError> {
    let req = requests::join_group(&m.group, &m.member_id, &subscription);
    let sent = Instant::now();
    let join: JoinGroupResponse =
        with_timeout("JoinGroup", m.conn.call(ApiKey::JoinGroup, requests::JOIN_GROUP_VERSION, &req)).await?;
    let joined = Instant::now();
    if join.error_code != 0 {
        let problem = Some(format!("{}: JoinGroup answered {}", m.member_id, code_name(join.error_code)));
        return Ok(Rejoined { member: m, sent, joined, answered: joined, leader_saw: None, problem });
    }
    m.generation = join.generation_id;
    let (assignments, leader_saw) = leader_assignments(&join)?;
    let req = requests::sync_group(&m.group, m.generation, &m.member_id, assignments);
    let sync: SyncGroupResponse =
        with_timeout("SyncGroup", m.conn.call(ApiKey::SyncGroup, requests::SYNC_GROUP_VERSION, &req)).await?;
    let answered = Instant::now();
    let problem = (sync.error_code != 0)
        .then(|| format!("{}: SyncGroup answered {}", m.member_id, code_name(sync.error_code)));
    Ok(Rejoined { member: m, sent, joined, answered, leader_saw, problem })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dead_addr() -> SocketAddr {
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port")
    }

    fn not_tried(results: &[Result<Connection, LoadgenError>]) -> usize {
        results
            .iter()
            .filter(
                |r| matches!(r, Err(LoadgenError::Connect { reason, .. }) if reason.starts_with("not tried")),
            )
            .count()
    }

    #[tokio::test]
    async fn opening_stops_after_a_run_of_failures() {
        let results = open_connections(dead_addr(), 400, false, None).await;
        assert!(results.iter().all(Result::is_err));
        // Permits are handed out in order: the 385th connect starts only once
        // 256 have failed.
        assert!(not_tried(&results) >= 400 - 384, "{}", not_tried(&results));
        assert!(not_tried(&results) <= 400 - GIVE_UP_AFTER_FAILURES);
    }

    #[tokio::test]
    async fn nothing_is_tried_past_the_deadline() {
        let results = open_connections(dead_addr(), 10, true, Some(Instant::now())).await;
        assert_eq!(not_tried(&results), 10);
    }
}
