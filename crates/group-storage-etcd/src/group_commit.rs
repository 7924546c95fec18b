//! Group commit across coordinator partitions: the log appends of every
//! partition that are waiting at one moment go to etcd as one transaction,
//! with several such transactions in flight.
//!
//! Each partition's append stays its own transaction, nested in the one sent
//! (etcd runs a nested transaction's compares and branches on their own), so
//! each keeps its own fences: a failed epoch or owner-key compare fails only
//! its own partition's append. A partition's task submits its next append
//! only once the last one answered, so per-partition order is the task's, and
//! a partition appears at most once in a transaction (etcd refuses a
//! transaction that writes one key twice).
//!
//! Why: etcd pays per request (a gRPC call, a raft entry, an apply on every
//! member), not per key. With one transaction per append, a node of 50
//! partitions under load sent 50 small transactions where a handful carry the
//! same appends. The in-flight limit is what makes appends gather: while it is
//! reached, what arrives waits for the next transaction.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use etcd_client::{KvClient, Txn, TxnOp, TxnOpResponse, TxnResponse};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

/// The most appends one transaction carries. etcd refuses a transaction with
/// more than `--max-txn-ops` (128 by default) operations in a branch, and a
/// nested transaction may have only what its parent leaves of that budget;
/// a partition's append has at most 4 compares and 3 reads.
pub(crate) const MAX_APPENDS_PER_TRANSACTION: usize = 64;

/// Room in a request for an append beyond its value: its keys, compares and
/// framing.
const APPEND_OVERHEAD_BYTES: usize = 512;

/// Why a submitted append got no transaction answer.
#[derive(Debug)]
pub(crate) enum NoCommitAnswer {
    /// etcd's error for the transaction that carried it, shared by every
    /// append in that transaction.
    Etcd(Arc<etcd_client::Error>),
    /// The transaction did not answer within the attempt's time.
    TimedOut(Duration),
    /// etcd's answer had no nested answer for this append.
    Malformed,
    /// The store is shutting down.
    Closed,
}

/// An append's transaction, waiting to be sent.
struct Submission {
    partition: u32,
    txn: Txn,
    bytes: usize,
    reply: oneshot::Sender<Result<TxnResponse, NoCommitAnswer>>,
}

/// The handle partition tasks submit their appends to.
pub(crate) struct GroupCommit {
    queue: mpsc::UnboundedSender<Submission>,
    counts: Arc<Counts>,
}

/// What has been sent so far: appends per transaction is how well group
/// commit works under the load at hand.
#[derive(Debug, Default)]
struct Counts {
    transactions: AtomicU64,
    appends: AtomicU64,
}

/// How many transactions of log appends a store has sent, and how many
/// appends they carried (each attempt counted; a retried append counts again).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppendTransactions {
    /// Transactions sent.
    pub transactions: u64,
    /// Appends they carried.
    pub appends: u64,
}

/// How the sending task gathers and sends transactions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Transactions in flight at once.
    pub(crate) in_flight: usize,
    /// The largest request sent (appends are packed under it).
    pub(crate) max_request_bytes: usize,
    /// How long one transaction may take before its appends are told it
    /// timed out (they retry it, possibly through another etcd member).
    pub(crate) attempt: Duration,
}

impl GroupCommit {
    /// A handle and the task that sends what it is given, to spawn on the
    /// store's runtime.
    pub(crate) fn new(
        kv: KvClient,
        limits: Limits,
    ) -> (GroupCommit, impl std::future::Future<Output = ()> + Send + 'static) {
        let (queue, rx) = mpsc::unbounded_channel();
        let counts = Arc::new(Counts::default());
        (GroupCommit { queue, counts: Arc::clone(&counts) }, run(kv, limits, rx, counts))
    }

    /// What has been sent so far.
    pub(crate) fn sent(&self) -> AppendTransactions {
        AppendTransactions {
            transactions: self.counts.transactions.load(Ordering::Relaxed),
            appends: self.counts.appends.load(Ordering::Relaxed),
        }
    }

    /// Sends `txn`, partition `partition`'s append of about `bytes` bytes, in
    /// the next transaction, and returns its own (nested) answer. Dropping the
    /// future before it answers withdraws the append if it was not sent yet.
    pub(crate) async fn commit(
        &self,
        partition: u32,
        txn: Txn,
        bytes: usize,
    ) -> Result<TxnResponse, NoCommitAnswer> {
        let (reply, answer) = oneshot::channel();
        let submission = Submission { partition, txn, bytes: bytes + APPEND_OVERHEAD_BYTES, reply };
        self.queue.send(submission).map_err(|_| NoCommitAnswer::Closed)?;
        answer.await.unwrap_or(Err(NoCommitAnswer::Closed))
    }
}

/// Gathers what waits into transactions while fewer than `limits.in_flight`
/// are in flight; ends when every handle is gone.
async fn run(
    kv: KvClient,
    limits: Limits,
    mut queue: mpsc::UnboundedReceiver<Submission>,
    counts: Arc<Counts>,
) {
    let mut flights = JoinSet::new();
    let mut carried: Option<Submission> = None;
    loop {
        while flights.try_join_next().is_some() {}
        if flights.len() >= limits.in_flight.max(1) {
            flights.join_next().await;
            continue;
        }
        let first = match carried.take() {
            Some(first) => first,
            None => match queue.recv().await {
                Some(first) => first,
                None => return,
            },
        };
        // The tasks woken by the transaction that just answered submit their
        // next appends at about the same moment: let them run first, so that
        // the first to arrive does not leave alone with the rest right behind.
        tokio::task::yield_now().await;
        let (batch, left) = gather(first, &mut queue, limits.max_request_bytes);
        carried = left;
        if !batch.is_empty() {
            counts.transactions.fetch_add(1, Ordering::Relaxed);
            counts.appends.fetch_add(batch.len() as u64, Ordering::Relaxed);
            flights.spawn(send(kv.clone(), batch, limits.attempt));
        }
    }
}

/// `first` and what else waits, up to the limits of one transaction; the
/// first submission that did not fit is handed back.
fn gather(
    first: Submission,
    queue: &mut mpsc::UnboundedReceiver<Submission>,
    max_bytes: usize,
) -> (Vec<Submission>, Option<Submission>) {
    let mut batch: Vec<Submission> = Vec::new();
    let mut bytes = 0;
    let mut next = Some(first);
    while let Some(submission) = next.take().or_else(|| queue.try_recv().ok()) {
        // Its partition's task gave up waiting and will submit it again.
        if submission.reply.is_closed() {
            continue;
        }
        let full = batch.len() == MAX_APPENDS_PER_TRANSACTION || bytes + submission.bytes > max_bytes;
        let again = batch.iter().any(|s| s.partition == submission.partition);
        if !batch.is_empty() && (full || again) {
            return (batch, Some(submission));
        }
        bytes += submission.bytes;
        batch.push(submission);
    }
    (batch, None)
}

/// Sends `batch` as one transaction (a lone append as itself, without
/// nesting) and hands each append its answer.
async fn send(mut kv: KvClient, mut batch: Vec<Submission>, attempt: Duration) {
    if batch.len() == 1
        && let Some(only) = batch.pop()
    {
        let answer = match tokio::time::timeout(attempt, kv.txn(only.txn)).await {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err(e)) => Err(NoCommitAnswer::Etcd(Arc::new(e))),
            Err(_) => Err(NoCommitAnswer::TimedOut(attempt)),
        };
        let _ = only.reply.send(answer);
        return;
    }
    let mut replies = Vec::with_capacity(batch.len());
    let mut nested = Vec::with_capacity(batch.len());
    for Submission { txn, reply, .. } in batch {
        nested.push(TxnOp::txn(txn));
        replies.push(reply);
    }
    match tokio::time::timeout(attempt, kv.txn(Txn::new().and_then(nested))).await {
        Ok(Ok(resp)) => {
            let mut answers = resp.op_responses().into_iter();
            for reply in replies {
                let answer = match answers.next() {
                    Some(TxnOpResponse::Txn(answer)) => Ok(answer),
                    _ => Err(NoCommitAnswer::Malformed),
                };
                let _ = reply.send(answer);
            }
        }
        Ok(Err(e)) => {
            let e = Arc::new(e);
            for reply in replies {
                let _ = reply.send(Err(NoCommitAnswer::Etcd(Arc::clone(&e))));
            }
        }
        Err(_) => {
            for reply in replies {
                let _ = reply.send(Err(NoCommitAnswer::TimedOut(attempt)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn submission(
        partition: u32,
        bytes: usize,
    ) -> (Submission, oneshot::Receiver<Result<TxnResponse, NoCommitAnswer>>) {
        let (reply, rx) = oneshot::channel();
        (Submission { partition, txn: Txn::new(), bytes, reply }, rx)
    }

    /// What waits is gathered up to the count and size limits; a second
    /// append of a partition, or one whose task gave up, is not sent with
    /// the first.
    #[test]
    fn gathering_keeps_to_the_limits_of_one_transaction() {
        let (tx, mut queue) = mpsc::unbounded_channel();
        let mut keep = Vec::new();
        for p in 1..100 {
            let (s, rx) = submission(p, 10);
            tx.send(s).expect("send");
            keep.push(rx);
        }
        let (first, rx0) = submission(0, 10);
        let (batch, left) = gather(first, &mut queue, usize::MAX);
        assert_eq!(batch.len(), MAX_APPENDS_PER_TRANSACTION);
        assert_eq!(left.map(|s| s.partition), Some(MAX_APPENDS_PER_TRANSACTION as u32));
        drop((batch, rx0));

        // Size: three of 10 bytes fit in 30.
        let (first, _rx) = submission(200, 10);
        let (batch, left) = gather(first, &mut queue, 30);
        assert_eq!(batch.iter().map(|s| s.partition).collect::<Vec<_>>(), [200, 65, 66]);
        assert_eq!(left.map(|s| s.partition), Some(67));

        // The same partition twice: the second waits for the next transaction.
        let (tx, mut queue) = mpsc::unbounded_channel();
        let (again, _rx1) = submission(7, 10);
        let (other, _rx2) = submission(8, 10);
        tx.send(again).expect("send");
        tx.send(other).expect("send");
        let (first, _rx3) = submission(7, 10);
        let (batch, left) = gather(first, &mut queue, usize::MAX);
        assert_eq!(batch.iter().map(|s| s.partition).collect::<Vec<_>>(), [7]);
        assert_eq!(left.map(|s| s.partition), Some(7));

        // Withdrawn: its receiver is gone.
        let (tx, mut queue) = mpsc::unbounded_channel();
        let (gone, rx) = submission(9, 10);
        drop(rx);
        tx.send(gone).expect("send");
        let (first, _rx4) = submission(1, 10);
        let (batch, left) = gather(first, &mut queue, usize::MAX);
        assert_eq!(batch.iter().map(|s| s.partition).collect::<Vec<_>>(), [1]);
        assert!(left.is_none());
    }
}
