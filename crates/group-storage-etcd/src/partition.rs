//! One coordinator partition's task: fenced appends (staged when large),
//! resolution of appends whose outcome is unknown, loads at one revision,
//! and snapshots.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use etcd_client::{
    Compare, CompareOp, DeleteOptions, GetOptions, KeyValue, SortOrder, SortTarget, Txn, TxnOp,
    TxnOpResponse, TxnResponse,
};
use group_offsets::{
    CoordinatorPartition, EngineCause, Fold, OwnerEpoch, Record, StorageError, StoredGroups,
};
use tokio::sync::mpsc;
use tokio::task::{JoinError, JoinHandle};

use crate::codec::{self, ChunkProblem, DecodeError, Entry, EntryBody, SnapshotMeta};
use crate::group_commit::NoCommitAnswer;
use crate::keys::{self, PartitionKeys};
use crate::store::{Command, MAX_RESPONSE_BYTES, Shared};
use crate::tail::{KnownEntries, Tail};

/// Why an etcd call that may be retried gave no usable answer.
enum NoAnswer {
    /// etcd's own error (kept as the storage error's source).
    Error(etcd_client::Error),
    /// etcd's error for a transaction that carried several partitions' appends.
    Shared(Arc<etcd_client::Error>),
    /// No error to keep: what happened instead (a timeout, a compaction).
    Detail(String),
}

/// How much of the log a read takes beside the snapshot.
#[derive(Debug, Clone, Copy)]
enum LogRead {
    /// None of it: the caller has the entries.
    Skip,
    /// The entries through this one.
    Through(u64),
    /// All of it.
    All,
}

/// What the task knows of its partition in etcd, read when first needed and
/// kept up to date by its own writes. Another writer of the same partition
/// makes it stale; the compares of every transaction notice, and it is read again.
#[derive(Debug, Clone)]
struct State {
    /// The sequence number the next entry takes.
    next_seq: u64,
    /// The stored epoch, as last seen (it only rises).
    epoch: OwnerEpoch,
    /// The `mod_revision` of the snapshot metadata (0: no snapshot yet).
    meta_revision: i64,
    /// Entries and bytes written since the snapshot, which trigger the next one.
    entries_since: u64,
    bytes_since: u64,
}

/// An append that completed `Unavailable` without knowing whether its
/// transaction committed: voided (or revoked) before anything else.
#[derive(Debug, Clone, Copy)]
struct Unresolved {
    seq: u64,
    nonce: u64,
    epoch: OwnerEpoch,
}

/// How one transaction attempt ended.
enum Outcome {
    Committed,
    Fenced(StorageError),
    /// Another writer took the sequence number or switched the snapshot:
    /// read the state again and retry with a new sequence number.
    Conflict,
}

pub(crate) struct Worker {
    shared: Arc<Shared>,
    partition: CoordinatorPartition,
    keys: PartitionKeys,
    state: Option<State>,
    unresolved: Option<Unresolved>,
    /// The epoch of the last append that committed: what a snapshot is fenced with.
    last_epoch: Option<OwnerEpoch>,
    /// When the last snapshot failed: the next try waits a while, so a
    /// snapshot that keeps failing does not cost a full read per append.
    snapshot_failed_at: Option<Instant>,
    /// The snapshot being taken beside the appends, if one is.
    snapshotting: Option<JoinHandle<Result<Option<Snapshotted>, StorageError>>>,
    /// The entries committed since the last snapshot, for the next one.
    tail: Tail,
}

/// A snapshot switched in: what it covers and the revision of its metadata.
struct Snapshotted {
    covered: u64,
    meta_revision: i64,
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(task) = &self.snapshotting {
            task.abort();
        }
    }
}

/// What a load read, at one revision.
struct Read {
    epoch: OwnerEpoch,
    /// What it read, not yet decoded (see [`Unfolded::fold`]).
    unfolded: Unfolded,
    revision: i64,
    meta_revision: i64,
    covered: u64,
    /// The last sequence number present (at least `covered`).
    last_seq: u64,
}

impl Worker {
    pub(crate) fn new(shared: Arc<Shared>, partition: CoordinatorPartition) -> Worker {
        let keys = PartitionKeys::new(&shared.config.prefix, partition);
        Worker {
            shared,
            partition,
            keys,
            state: None,
            unresolved: None,
            last_epoch: None,
            snapshot_failed_at: None,
            snapshotting: None,
            tail: Tail::default(),
        }
    }

    pub(crate) async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Command>) {
        loop {
            let next = match self.snapshotting.as_mut() {
                Some(task) => tokio::select! {
                    done = task => Next::Snapshotted(done),
                    command = rx.recv() => Next::Command(command),
                },
                None => Next::Command(rx.recv().await),
            };
            let command = match next {
                Next::Snapshotted(done) => {
                    self.snapshotting = None;
                    self.snapshotted(done);
                    continue;
                }
                Next::Command(Some(command)) => command,
                Next::Command(None) => return,
            };
            match command {
                Command::Append { epoch, records, completion } => {
                    let result = self.append(epoch, records).await;
                    let committed = result.is_ok();
                    // Here, in order: the partition's completions keep the
                    // order of its appends without a thread of their own.
                    completion.complete(result);
                    // After completing, so the append does not wait for it;
                    // only after a success, so a fenced owner never tries.
                    if committed {
                        self.last_epoch = Some(epoch);
                        self.maybe_snapshot();
                    }
                }
                Command::Load { reply } => {
                    // After a snapshot in progress: a load then reads what it
                    // left, and the first load of a new owner never races it.
                    while let Some(task) = self.snapshotting.take() {
                        let done = task.await;
                        self.snapshotted(done);
                    }
                    let result = self.load().await;
                    let _ = reply.send(result);
                }
                Command::Epoch { reply } => {
                    let result = self.epoch().await;
                    let _ = reply.send(result);
                }
            }
        }
    }

    fn timeout(&self) -> Duration {
        self.shared.config.request_timeout
    }

    /// How long one attempt of a call may take: a quarter of the request
    /// timeout, so a request stuck on a dead member is retried (and balanced
    /// to another one) before the append's deadline; never past the deadline.
    fn attempt(&self, deadline: Instant) -> Duration {
        self.shared
            .config
            .attempt_timeout()
            .min(deadline.saturating_duration_since(Instant::now()))
            .max(Duration::from_millis(10))
    }

    fn unavailable(&self, what: &str, why: NoAnswer) -> StorageError {
        let context =
            format!("etcd at {:?} did not {what} for {}", self.shared.config.endpoints, self.partition);
        let error = match why {
            NoAnswer::Error(e) => StorageError::unavailable_from(context, e),
            NoAnswer::Shared(e) => StorageError::unavailable_from(context, e),
            NoAnswer::Detail(detail) => StorageError::unavailable(format!("{context}: {detail}")),
        };
        tracing::warn!(partition = self.partition.0, "{error}");
        error
    }

    fn corrupt(&self, key: &[u8], error: DecodeError) -> StorageError {
        corrupt(key, error)
    }

    /// Runs one etcd call with the request timeout, retrying failures that
    /// may be transient until `deadline`. Only for idempotent calls.
    async fn retry<T, F, Fut>(&self, what: &str, deadline: Instant, mut call: F) -> Result<T, StorageError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        loop {
            let attempt = self.attempt(deadline);
            let error = match tokio::time::timeout(attempt, call()).await {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(e)) if is_definite(&e) => {
                    return Err(StorageError::io_from(
                        format_args!("etcd refused to {what} for {}", self.partition),
                        e,
                    ));
                }
                Ok(Err(e)) => NoAnswer::Error(e),
                Err(_) => NoAnswer::Detail(format!("no answer within {attempt:?}")),
            };
            if Instant::now() >= deadline {
                return Err(self.unavailable(what, error));
            }
            tokio::time::sleep(backoff(deadline)).await;
        }
    }

    // ---- State -------------------------------------------------------------

    /// Reads the partition's state, creating the epoch key (at 0) when absent:
    /// the epoch compare of an append needs a value to compare.
    async fn state(&mut self, deadline: Instant) -> Result<State, StorageError> {
        if let Some(state) = &self.state {
            return Ok(state.clone());
        }
        let k = &self.keys;
        let reads = || {
            vec![
                TxnOp::get(k.snapshot_meta(), None),
                TxnOp::get(
                    k.log_start(),
                    Some(
                        GetOptions::new()
                            .with_range(k.log_end())
                            .with_keys_only()
                            .with_sort(SortTarget::Key, SortOrder::Descend)
                            .with_limit(1),
                    ),
                ),
            ]
        };
        let mut init = vec![TxnOp::put(k.epoch(), keys::encode_epoch(OwnerEpoch(0)), None)];
        init.extend(reads());
        let mut existing = vec![TxnOp::get(k.epoch(), None)];
        existing.extend(reads());
        let txn = Txn::new()
            .when([Compare::create_revision(k.epoch(), CompareOp::Equal, 0)])
            .and_then(init)
            .or_else(existing);
        let kv = self.shared.kv.clone();
        // Idempotent: the put happens only while the key is absent.
        let resp = self
            .retry("read the partition state", deadline, || {
                let (mut kv, txn) = (kv.clone(), txn.clone());
                async move { kv.txn(txn).await }
            })
            .await?;
        let ops = resp.op_responses();
        let epoch = if resp.succeeded() {
            OwnerEpoch(0)
        } else {
            match first_kv(&ops, 0) {
                Some(kv) => self.parse_epoch(kv)?,
                None => OwnerEpoch(0),
            }
        };
        let (meta_revision, covered) = match first_kv(&ops, 1) {
            Some(kv) => {
                let meta = codec::decode_snapshot_meta(kv.value()).map_err(|e| self.corrupt(kv.key(), e))?;
                (kv.mod_revision(), meta.covered)
            }
            None => (0, 0),
        };
        let (last_seq, count) = match ops.get(2) {
            Some(TxnOpResponse::Get(get)) => {
                let last = match get.kvs().first() {
                    Some(kv) => self
                        .keys
                        .log_seq(kv.key())
                        .ok_or_else(|| self.corrupt(kv.key(), DecodeError::NotLogKey))?,
                    None => 0,
                };
                (last, get.count().max(0) as u64)
            }
            _ => (0, 0),
        };
        let state = State {
            next_seq: last_seq.max(covered) + 1,
            epoch,
            meta_revision,
            entries_since: count,
            bytes_since: 0,
        };
        self.state = Some(state.clone());
        Ok(state)
    }

    fn parse_epoch(&self, kv: &KeyValue) -> Result<OwnerEpoch, StorageError> {
        keys::decode_epoch(kv.value()).map_err(|e| self.corrupt(kv.key(), e.into()))
    }

    /// The compares every write of the partition makes: the stored epoch is
    /// at most `epoch`, the owner key (when configured) was created at
    /// `epoch`, the snapshot is the one we know, and (for log writes) `seq`
    /// is free.
    fn fences(&self, epoch: OwnerEpoch, state: &State, seq: Option<u64>) -> Vec<Compare> {
        let mut compares = Vec::with_capacity(4);
        // etcd has no `<=`: `< epoch + 1`, in fixed-width decimal. At
        // u64::MAX every stored epoch qualifies.
        if let Some(above) = epoch.0.checked_add(1) {
            compares.push(Compare::value(
                self.keys.epoch(),
                CompareOp::Less,
                keys::encode_epoch(OwnerEpoch(above)),
            ));
        }
        if self.shared.config.fence_with_owner_keys {
            // An epoch over i64::MAX is no revision: -1 never matches.
            let revision = i64::try_from(epoch.0).unwrap_or(-1);
            compares.push(Compare::create_revision(self.keys.owner.clone(), CompareOp::Equal, revision));
        }
        compares.push(Compare::mod_revision(
            self.keys.snapshot_meta(),
            CompareOp::Equal,
            state.meta_revision,
        ));
        if let Some(seq) = seq {
            compares.push(Compare::create_revision(self.keys.log(seq), CompareOp::Equal, 0));
        }
        compares
    }

    /// The reads a failed write returns, to tell why it failed.
    fn why_reads(&self, seq: Option<u64>) -> Vec<TxnOp> {
        let mut ops = vec![TxnOp::get(self.keys.epoch(), None), TxnOp::get(self.keys.owner.clone(), None)];
        if let Some(seq) = seq {
            ops.push(TxnOp::get(self.keys.log(seq), None));
        }
        ops
    }

    /// Why a fenced write failed: `Fenced`, or `Conflict` when neither the
    /// epoch nor the owner key refused it.
    fn why(&self, epoch: OwnerEpoch, ops: &[TxnOpResponse]) -> Result<Outcome, StorageError> {
        let stored = match first_kv(ops, 0) {
            Some(kv) => self.parse_epoch(kv)?,
            None => OwnerEpoch(0),
        };
        if stored > epoch {
            return Ok(Outcome::Fenced(self.fenced(epoch, stored.0)));
        }
        if self.shared.config.fence_with_owner_keys {
            let created = first_kv(ops, 1).map_or(0, |kv| kv.create_revision());
            if i64::try_from(epoch.0) != Ok(created) {
                let current = u64::try_from(created).unwrap_or(0).max(stored.0);
                return Ok(Outcome::Fenced(self.fenced(epoch, current)));
            }
        }
        Ok(Outcome::Conflict)
    }

    fn fenced(&self, epoch: OwnerEpoch, current: u64) -> StorageError {
        StorageError::Fenced { partition: self.partition.0, epoch: epoch.0, current }
    }

    // ---- Appends -----------------------------------------------------------

    async fn append(&mut self, epoch: OwnerEpoch, records: Vec<Record>) -> Result<(), StorageError> {
        let deadline = Instant::now() + self.timeout();
        self.resolve(deadline).await?;
        let batch = codec::encode_records(&records);
        let format = codec::records_format(&records);
        drop(records);
        let nonce = self.shared.nonce();
        let inline = batch.len() + 16 <= self.shared.config.max_request_bytes;
        let mut staged_at = None;
        // A conflict means another writer of the partition moved it on:
        // a few retries, then give up rather than fight it forever.
        for _ in 0..8 {
            let state = self.state(deadline).await?;
            let seq = state.next_seq;
            let body = if inline {
                EntryBody::Batch(batch.clone())
            } else {
                // Staged under the sequence number it commits at, so the
                // snapshot that covers it deletes the chunks with the entry.
                if staged_at != Some(seq) {
                    let dir = self.keys.stage_dir(seq, nonce);
                    self.put_chunks("stage a large batch", &dir, &batch, deadline).await?;
                    staged_at = Some(seq);
                }
                EntryBody::Manifest {
                    chunks: chunk_count(batch.len(), self.chunk_size()),
                    len: batch.len() as u64,
                    checksum: codec::checksum(&batch),
                }
            };
            let value = codec::encode_entry(&Entry { format, nonce, body });
            match self.commit(epoch, &state, seq, nonce, value, deadline).await? {
                Outcome::Committed => {
                    self.tail.committed(seq, format, batch);
                    return Ok(());
                }
                Outcome::Fenced(e) => return Err(e),
                Outcome::Conflict => self.state = None,
            }
        }
        Err(StorageError::io(format!(
            "{}: other writers kept taking the next log entry; is another node appending with the same epoch?",
            self.partition
        )))
    }

    fn chunk_size(&self) -> usize {
        // Room for the key and the request's framing.
        self.shared.config.max_request_bytes - 1024
    }

    /// Writes `bytes` in chunks under `dir` (an oversized batch's or a
    /// snapshot's): plain puts, invisible to loads until a manifest entry or the
    /// snapshot's meta names them.
    async fn put_chunks(
        &self,
        what: &str,
        dir: &str,
        bytes: &[u8],
        deadline: Instant,
    ) -> Result<(), StorageError> {
        for (i, piece) in bytes.chunks(self.chunk_size()).enumerate() {
            let key = keys::chunk(dir, i as u32);
            let kv = self.shared.kv.clone();
            self.retry(what, deadline, || {
                let (mut kv, key, piece) = (kv.clone(), key.clone(), piece.to_vec());
                async move { kv.put(key, piece, None).await }
            })
            .await?;
        }
        Ok(())
    }

    /// Puts `value` at `log/{seq}` in one fenced transaction, retrying the
    /// same transaction while etcd does not answer. Retrying is safe: every
    /// attempt requires `log/{seq}` to be free, so at most one commits, and
    /// the nonce tells a commit of an earlier attempt from another writer's.
    async fn commit(
        &mut self,
        epoch: OwnerEpoch,
        state: &State,
        seq: u64,
        nonce: u64,
        value: Vec<u8>,
        deadline: Instant,
    ) -> Result<Outcome, StorageError> {
        let len = value.len() as u64;
        let mut puts = Vec::with_capacity(2);
        if epoch > state.epoch {
            puts.push(TxnOp::put(self.keys.epoch(), keys::encode_epoch(epoch), None));
        }
        puts.push(TxnOp::put(self.keys.log(seq), value, None));
        let txn = Txn::new()
            .when(self.fences(epoch, state, Some(seq)))
            .and_then(puts)
            .or_else(self.why_reads(Some(seq)));
        loop {
            // The attempt's time covers the wait for a place in a transaction.
            let submitted = self.shared.group_commit.commit(self.partition.0, txn.clone(), len as usize);
            let error = match tokio::time::timeout(self.attempt(deadline), submitted).await {
                Ok(Ok(resp)) => {
                    let outcome = self.settle(epoch, nonce, &resp)?;
                    if let Outcome::Committed = outcome {
                        let state = self.state.get_or_insert_with(|| state.clone());
                        state.next_seq = seq + 1;
                        state.epoch = state.epoch.max(epoch);
                        state.entries_since += 1;
                        state.bytes_since += len;
                    }
                    return Ok(outcome);
                }
                Ok(Err(NoCommitAnswer::Etcd(e))) if is_definite(&e) => {
                    return Err(StorageError::io_from(
                        format_args!("etcd refused an append to {}", self.partition),
                        e,
                    ));
                }
                Ok(Err(NoCommitAnswer::Etcd(e))) => NoAnswer::Shared(e),
                Ok(Err(NoCommitAnswer::TimedOut(after))) => {
                    NoAnswer::Detail(format!("no answer within {after:?}"))
                }
                Ok(Err(NoCommitAnswer::Malformed)) => {
                    NoAnswer::Detail("an answer without this append's".to_owned())
                }
                Ok(Err(NoCommitAnswer::Closed)) => NoAnswer::Detail("the store is shutting down".to_owned()),
                Err(_) => NoAnswer::Detail("no answer in time".to_owned()),
            };
            if Instant::now() >= deadline {
                // The last attempt may still commit: void it before anything else.
                self.unresolved = Some(Unresolved { seq, nonce, epoch });
                return Err(self.unavailable("commit an append", error));
            }
            tokio::time::sleep(backoff(deadline)).await;
        }
    }

    /// The outcome of an answered write at `seq` made with `nonce`.
    fn settle(&self, epoch: OwnerEpoch, nonce: u64, resp: &TxnResponse) -> Result<Outcome, StorageError> {
        if resp.succeeded() {
            return Ok(Outcome::Committed);
        }
        let ops = resp.op_responses();
        if let Some(kv) = first_kv(&ops, 2) {
            let entry = codec::decode_entry(kv.value()).map_err(|e| self.corrupt(kv.key(), e))?;
            if entry.nonce == nonce {
                // An earlier attempt of this very write committed.
                return Ok(Outcome::Committed);
            }
        }
        self.why(epoch, &ops)
    }

    /// Settles an append left [`Unresolved`]: puts a void entry at its
    /// sequence number if that is still free (the lost transaction can then
    /// never commit), or, if the lost append did commit, appends a
    /// revocation of it. Fenced or conflicting answers settle it too: the
    /// lost transaction made the same compares and can no longer pass them.
    async fn resolve(&mut self, deadline: Instant) -> Result<(), StorageError> {
        let Some(lost) = self.unresolved else { return Ok(()) };
        let state = self.state(deadline).await?;
        let void = codec::encode_entry(&Entry {
            format: codec::FORMAT_V1,
            nonce: self.shared.nonce(),
            body: EntryBody::Void,
        });
        let txn = Txn::new()
            .when(self.fences(lost.epoch, &state, Some(lost.seq)))
            .and_then([TxnOp::put(self.keys.log(lost.seq), void, None)])
            .or_else(self.why_reads(Some(lost.seq)));
        let kv = self.shared.kv.clone();
        // Idempotent: it writes only while `log/{seq}` is free.
        let resp = self
            .retry("settle an earlier append", deadline, || {
                let (mut kv, txn) = (kv.clone(), txn.clone());
                async move { kv.txn(txn).await }
            })
            .await?;
        self.unresolved = None;
        if resp.succeeded() {
            if let Some(state) = &mut self.state {
                state.next_seq = state.next_seq.max(lost.seq + 1);
            }
            tracing::debug!(
                partition = self.partition.0,
                seq = lost.seq,
                "voided an append of unknown outcome"
            );
            return Ok(());
        }
        self.state = None;
        if let Ok(Outcome::Committed) = self.settle(lost.epoch, lost.nonce, &resp) {
            tracing::warn!(
                partition = self.partition.0,
                seq = lost.seq,
                "an append reported failed committed late; revoking it"
            );
            let state = self.state(deadline).await?;
            let nonce = self.shared.nonce();
            let value = codec::encode_entry(&Entry {
                format: codec::FORMAT_V1,
                nonce,
                body: EntryBody::Revoke(lost.seq),
            });
            let seq = state.next_seq;
            match self.commit(lost.epoch, &state, seq, nonce, value, deadline).await {
                Ok(Outcome::Committed) => {}
                Ok(_) | Err(_) => {
                    tracing::warn!(
                        partition = self.partition.0,
                        seq = lost.seq,
                        "could not revoke an append reported failed: its records stay visible"
                    );
                }
            }
        }
        Ok(())
    }

    // ---- Reads -------------------------------------------------------------

    async fn epoch(&mut self) -> Result<OwnerEpoch, StorageError> {
        let deadline = Instant::now() + self.timeout();
        self.resolve(deadline).await?;
        let kv = self.shared.kv.clone();
        let key = self.keys.epoch();
        let resp = self
            .retry("read the epoch", deadline, || {
                let (mut kv, key) = (kv.clone(), key.clone());
                async move { kv.get(key, None).await }
            })
            .await?;
        match resp.kvs().first() {
            Some(kv) => self.parse_epoch(kv),
            None => Ok(OwnerEpoch(0)),
        }
    }

    /// The partition as read, for the caller to fold on its own thread.
    async fn load(&mut self) -> Result<(OwnerEpoch, Unfolded), StorageError> {
        let deadline = Instant::now() + self.timeout();
        self.resolve(deadline).await?;
        let read = self.read(deadline).await?;
        Ok((read.epoch, read.unfolded))
    }

    /// Everything the partition holds, read at one revision. Retried when
    /// etcd's history was compacted past that revision mid-read.
    async fn read(&self, deadline: Instant) -> Result<Read, StorageError> {
        self.read_through(None, deadline).await
    }

    /// What the partition holds through log entry `through` (all of it for
    /// `None`), read at one revision.
    async fn read_through(&self, through: Option<u64>, deadline: Instant) -> Result<Read, StorageError> {
        self.read_retried(through.map_or(LogRead::All, LogRead::Through), deadline).await
    }

    /// [`read_once`](Self::read_once), again while etcd's history was
    /// compacted past the revision mid-read.
    async fn read_retried(&self, log: LogRead, deadline: Instant) -> Result<Read, StorageError> {
        let mut attempts = 0;
        loop {
            match self.read_once(log, deadline).await {
                Err(ReadError::Compacted) if attempts < 3 => attempts += 1,
                Err(ReadError::Compacted) => {
                    return Err(self.unavailable(
                        "hold a revision long enough to load",
                        NoAnswer::Detail("compacted".to_owned()),
                    ));
                }
                Err(ReadError::Storage(e)) => return Err(e),
                Ok(read) => return Ok(read),
            }
        }
    }

    /// The epoch, the snapshot and what `log` asks of the log after it, read
    /// at one revision.
    async fn read_once(&self, log: LogRead, deadline: Instant) -> Result<Read, ReadError> {
        let kv = self.shared.kv.clone();
        let txn = Txn::new()
            .and_then([TxnOp::get(self.keys.epoch(), None), TxnOp::get(self.keys.snapshot_meta(), None)]);
        let resp = self
            .retry("read the partition", deadline, || {
                let (mut kv, txn) = (kv.clone(), txn.clone());
                async move { kv.txn(txn).await }
            })
            .await?;
        let revision = resp.header().map_or(0, |h| h.revision());
        let ops = resp.op_responses();
        let epoch = match first_kv(&ops, 0) {
            Some(kv) => self.parse_epoch(kv)?,
            None => OwnerEpoch(0),
        };
        // What is read here is decoded and folded by whoever asked (see
        // `Unfolded::fold`), not in this task: a partition of a million offsets
        // takes a CPU for a good part of a second.
        let mut batches = Vec::new();
        let (meta_revision, covered) = match first_kv(&ops, 1) {
            Some(kv) => {
                let meta = codec::decode_snapshot_meta(kv.value()).map_err(|e| self.corrupt(kv.key(), e))?;
                let dir = self.keys.snap_dir(meta.covered, meta.nonce);
                let bytes = self
                    .read_chunks(kv.key(), &dir, (meta.chunks, meta.len, meta.checksum), revision, deadline)
                    .await?;
                batches.push(Undecoded { seq: None, named_by: dir.into_bytes(), format: meta.format, bytes });
                (kv.mod_revision(), meta.covered)
            }
            None => (0, 0),
        };
        let end = match log {
            LogRead::Skip => None,
            LogRead::Through(seq) => Some(self.keys.log(seq.saturating_add(1)).into_bytes()),
            LogRead::All => Some(self.keys.log_end().into_bytes()),
        };
        let entries = match end {
            Some(end) => {
                self.range(self.keys.log(covered.saturating_add(1)).into_bytes(), end, revision, deadline)
                    .await?
            }
            None => Vec::new(),
        };
        let mut last_seq = covered;
        batches.reserve(entries.len());
        let mut revoked = HashSet::new();
        for kv in &entries {
            let seq =
                self.keys.log_seq(kv.key()).ok_or_else(|| self.corrupt(kv.key(), DecodeError::NotLogKey))?;
            last_seq = last_seq.max(seq);
            let entry = codec::decode_entry(kv.value()).map_err(|e| self.corrupt(kv.key(), e))?;
            let bytes = match entry.body {
                EntryBody::Batch(bytes) => bytes,
                EntryBody::Manifest { chunks, len, checksum } => {
                    let dir = self.keys.stage_dir(seq, entry.nonce);
                    self.read_chunks(kv.key(), &dir, (chunks, len, checksum), revision, deadline).await?
                }
                EntryBody::Void => continue,
                EntryBody::Revoke(target) => {
                    revoked.insert(target);
                    continue;
                }
            };
            batches.push(Undecoded {
                seq: Some(seq),
                named_by: kv.key().to_vec(),
                format: entry.format,
                bytes,
            });
        }
        let unfolded = Unfolded { batches, revoked };
        Ok(Read { epoch, unfolded, revision, meta_revision, covered, last_seq })
    }

    /// The concatenated chunks of `dir`, checked against their manifest,
    /// the value at `named_by` (which errors name, with the directory).
    async fn read_chunks(
        &self,
        named_by: &[u8],
        dir: &str,
        (chunks, len, checksum): (u32, u64, u64),
        revision: i64,
        deadline: Instant,
    ) -> Result<Vec<u8>, ReadError> {
        let kvs = self.range(dir.as_bytes().to_vec(), keys::prefix_end(dir), revision, deadline).await?;
        let bad = |problem: ChunkProblem| {
            ReadError::Storage(self.corrupt(named_by, DecodeError::Chunks { dir: dir.to_owned(), problem }))
        };
        if kvs.len() != chunks as usize {
            return Err(bad(ChunkProblem::Count { found: kvs.len(), expected: chunks }));
        }
        let total: usize = kvs.iter().map(|kv| kv.value().len()).sum();
        if total as u64 != len {
            return Err(bad(ChunkProblem::Length { found: total, expected: len }));
        }
        let mut bytes = Vec::with_capacity(total);
        for kv in &kvs {
            bytes.extend_from_slice(kv.value());
        }
        if codec::checksum(&bytes) != checksum {
            return Err(bad(ChunkProblem::Checksum));
        }
        Ok(bytes)
    }

    /// Every key in `[start, end)` at `revision`, in key order, in pages that
    /// stay under the client's response limit whatever the values' sizes.
    async fn range(
        &self,
        mut start: Vec<u8>,
        end: Vec<u8>,
        revision: i64,
        deadline: Instant,
    ) -> Result<Vec<KeyValue>, ReadError> {
        let page = (MAX_RESPONSE_BYTES / 2 / self.shared.config.max_request_bytes).clamp(1, 1000) as i64;
        let mut out = Vec::new();
        loop {
            let kv = self.shared.kv.clone();
            let options = GetOptions::new().with_range(end.clone()).with_revision(revision).with_limit(page);
            let result = self
                .retry("read a range", deadline, || {
                    let (mut kv, start, options) = (kv.clone(), start.clone(), options.clone());
                    async move { kv.get(start, Some(options)).await }
                })
                .await;
            let mut resp = match result {
                Ok(resp) => resp,
                Err(e) if is_compacted(&e) => return Err(ReadError::Compacted),
                Err(e) => return Err(ReadError::Storage(e)),
            };
            let more = resp.more();
            let kvs = resp.take_kvs();
            if let Some(last) = kvs.last() {
                start = last.key().to_vec();
                start.push(0);
            }
            let empty = kvs.is_empty();
            out.extend(kvs);
            if !more || empty {
                return Ok(out);
            }
        }
    }

    // ---- Snapshots ---------------------------------------------------------

    /// Starts a snapshot beside the appends once the log has grown enough.
    /// It covers only entries known committed: none while an append's outcome
    /// is unknown, and none appended after it starts. An append whose outcome
    /// turns out unknown later may have committed; were it folded into the
    /// snapshot and its log entry deleted, the void that settles it would find
    /// the entry free and succeed, and records reported failed would stay.
    fn maybe_snapshot(&mut self) {
        let config = &self.shared.config;
        let Some(state) = &self.state else { return };
        if state.entries_since < config.compact_after_entries.max(1)
            && state.bytes_since < config.compact_after_bytes
        {
            return;
        }
        if self.snapshotting.is_some() || self.unresolved.is_some() {
            return;
        }
        let Some(epoch) = self.last_epoch else { return };
        if self.snapshot_failed_at.is_some_and(|at| at.elapsed() < self.timeout() * 10) {
            return;
        }
        let through = state.next_seq - 1;
        let deadline = Instant::now() + self.timeout() * 4;
        // Its own worker: the snapshot reads, writes and switches with the same
        // keys and client, and keeps no state of this one's.
        let taker = Worker::new(Arc::clone(&self.shared), self.partition);
        let known = self.tail.through(through);
        self.snapshotting =
            Some(tokio::spawn(async move { taker.snapshot(epoch, through, known, deadline).await }));
    }

    /// What a finished snapshot means for the state: the log before it is gone.
    fn snapshotted(&mut self, done: Result<Result<Option<Snapshotted>, StorageError>, JoinError>) {
        let result = done.unwrap_or_else(|e| {
            Err(StorageError::unavailable(format!("the snapshot of {} stopped: {e}", self.partition)))
        });
        match result {
            Ok(Some(snapshot)) => {
                self.snapshot_failed_at = None;
                self.tail.snapshotted(snapshot.covered);
                if let Some(state) = &mut self.state {
                    // Appends sent before the switch failed its compare and read
                    // the state again: it may be newer already.
                    state.meta_revision = state.meta_revision.max(snapshot.meta_revision);
                    state.entries_since = state.next_seq.saturating_sub(1 + snapshot.covered);
                    state.bytes_since = 0;
                }
                // What was appended meanwhile may be due already.
                self.maybe_snapshot();
            }
            Ok(None) => self.snapshot_failed_at = None,
            Err(e) => {
                // The log stays as it is and loads stay correct; try again later.
                tracing::warn!(partition = self.partition.0, error = %e, "snapshot failed");
                self.state = None;
                self.snapshot_failed_at = Some(Instant::now());
            }
        }
    }

    /// What the partition holds through entry `through`: the snapshot read
    /// from etcd and the entries after it from `known`, when it holds them
    /// all (and then says so); else read from etcd too.
    async fn read_with(
        &self,
        known: KnownEntries,
        through: u64,
        deadline: Instant,
    ) -> Result<(Read, bool), StorageError> {
        let mut read = self.read_retried(LogRead::Skip, deadline).await?;
        let Some(entries) = known.after(read.covered) else {
            return Ok((self.read_through(Some(through), deadline).await?, false));
        };
        for entry in entries {
            read.last_seq = read.last_seq.max(entry.seq);
            read.unfolded.batches.push(Undecoded {
                seq: Some(entry.seq),
                named_by: self.keys.log(entry.seq).into_bytes(),
                format: entry.format,
                bytes: entry.bytes,
            });
        }
        Ok((read, true))
    }

    /// Folds the log, through entry `through`, into a new snapshot: chunks
    /// first (unused until the switch), then one fenced transaction switches
    /// the metadata and deletes the covered log entries, their staged chunks
    /// and older snapshots. Entries after `through` stay in the log.
    async fn snapshot(
        &self,
        epoch: OwnerEpoch,
        through: u64,
        known: Option<KnownEntries>,
        deadline: Instant,
    ) -> Result<Option<Snapshotted>, StorageError> {
        let (read, from_memory) = match known {
            Some(known) => self.read_with(known, through, deadline).await?,
            None => (self.read_through(Some(through), deadline).await?, false),
        };
        if read.last_seq <= read.covered {
            return Ok(None);
        }
        let covered = read.last_seq;
        // Folded and encoded in this task, which is the snapshot's own: the
        // partition's appends go on meanwhile. Not on the blocking pool: the
        // loads of a cluster node can hold all of it while they wait for
        // their partitions' tasks.
        let records = read.unfolded.fold()?.into_records();
        let bytes = codec::encode_records(&records);
        let format = codec::records_format(&records);
        drop(records);
        let nonce = self.shared.nonce();
        let dir = self.keys.snap_dir(covered, nonce);
        self.put_chunks("write a snapshot chunk", &dir, &bytes, deadline).await?;
        let meta = SnapshotMeta {
            format,
            covered,
            nonce,
            chunks: chunk_count(bytes.len(), self.chunk_size()),
            len: bytes.len() as u64,
            checksum: codec::checksum(&bytes),
        };
        let state = State {
            next_seq: covered + 1,
            epoch: read.epoch,
            meta_revision: read.meta_revision,
            entries_since: 0,
            bytes_since: 0,
        };
        let mut compares = self.fences(epoch, &state, None);
        // Nothing in the covered log range changed since it was read (a
        // writer with a stale view could fill a gap in it).
        compares.push(
            Compare::mod_revision(self.keys.log_start(), CompareOp::Less, read.revision + 1)
                .with_range(self.keys.log(covered + 1)),
        );
        let range =
            |start: String, end: Vec<u8>| TxnOp::delete(start, Some(DeleteOptions::new().with_range(end)));
        let txn = Txn::new().when(compares).and_then([
            TxnOp::put(self.keys.snapshot_meta(), codec::encode_snapshot_meta(&meta), None),
            range(self.keys.log_start(), self.keys.log(covered + 1).into_bytes()),
            range(self.keys.stage_start(), self.keys.stage_through(covered).into_bytes()),
            range(self.keys.snap_start(), dir.clone().into_bytes()),
        ]);
        let resp = match tokio::time::timeout(self.timeout(), self.shared.kv.clone().txn(txn)).await {
            Ok(Ok(resp)) => resp,
            // Either way the store stays loadable; the state is read again.
            Ok(Err(e)) => return Err(self.unavailable("switch to a new snapshot", NoAnswer::Error(e))),
            Err(_) => {
                return Err(
                    self.unavailable("switch to a new snapshot", NoAnswer::Detail("timed out".to_owned()))
                );
            }
        };
        if !resp.succeeded() {
            return Err(StorageError::io("the snapshot switch lost a race with another writer"));
        }
        let meta_revision = resp.header().map_or(0, |h| h.revision());
        self.shared.snapshots.switched(from_memory);
        tracing::debug!(
            partition = self.partition.0,
            covered,
            bytes = meta.len,
            from_memory,
            "snapshot written"
        );
        Ok(Some(Snapshotted { covered, meta_revision }))
    }
}

/// What the partition's task waits for next.
enum Next {
    Command(Option<Command>),
    Snapshotted(Result<Result<Option<Snapshotted>, StorageError>, JoinError>),
}

/// A partition as read from etcd, its records not yet decoded: the snapshot's
/// bytes and the log entries', and which entries a revocation cancels.
pub(crate) struct Unfolded {
    batches: Vec<Undecoded>,
    revoked: HashSet<u64>,
}

impl Unfolded {
    /// Decodes and folds the records: what the partition holds.
    pub(crate) fn fold(self) -> Result<StoredGroups, StorageError> {
        let mut replay = Fold::new();
        for batch in self.batches {
            if batch.seq.is_some_and(|seq| self.revoked.contains(&seq)) {
                continue;
            }
            let records =
                codec::decode_records(&batch.bytes, batch.format).map_err(|e| corrupt(&batch.named_by, e))?;
            replay.apply(records);
        }
        Ok(replay.into_stored())
    }
}

/// A snapshot's or log entry's records as read.
struct Undecoded {
    /// The log entry's sequence number (`None`: the snapshot), for revocations.
    seq: Option<u64>,
    /// The key or directory errors name.
    named_by: Vec<u8>,
    format: u8,
    bytes: Vec<u8>,
}

/// The error for bytes at `key` that do not decode.
fn corrupt(key: &[u8], error: DecodeError) -> StorageError {
    let key = String::from_utf8_lossy(key).into_owned();
    match error.unknown_version() {
        Some(version) => StorageError::UnknownFormatVersion { group_id: String::new(), key, version },
        None => StorageError::Corrupt { group_id: String::new(), key, reason: error.to_string() },
    }
}

enum ReadError {
    Compacted,
    Storage(StorageError),
}

impl From<StorageError> for ReadError {
    fn from(e: StorageError) -> ReadError {
        ReadError::Storage(e)
    }
}

fn chunk_count(len: usize, chunk: usize) -> u32 {
    len.div_ceil(chunk) as u32
}

fn first_kv(ops: &[TxnOpResponse], i: usize) -> Option<&KeyValue> {
    match ops.get(i) {
        Some(TxnOpResponse::Get(get)) => get.kvs().first(),
        _ => None,
    }
}

/// A pause between retries: short, and never past the deadline.
fn backoff(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now()).min(Duration::from_millis(100))
}

/// Errors that say the request was refused as it stands (bad argument, too
/// large, not permitted): retrying the same request cannot help. Everything
/// else (no leader, timeouts, lost connections) may be transient, and for a
/// write its outcome is unknown.
/// True when etcd refused a read because its revision was compacted away: the
/// gRPC code OutOfRange (etcd's `ErrCompacted`; its only other use,
/// `ErrFutureRev`, cannot answer a revision etcd itself gave), kept as the
/// storage error's source by [`Worker::retry`].
fn is_compacted(e: &StorageError) -> bool {
    std::error::Error::source(e)
        .and_then(|cause| cause.downcast_ref::<EngineCause>())
        .and_then(|cause| cause.get_ref().downcast_ref::<etcd_client::Error>())
        .is_some_and(|e| matches!(e, etcd_client::Error::GRpcStatus(status) if status.code() as i32 == 11))
}

fn is_definite(e: &etcd_client::Error) -> bool {
    match e {
        // A status the client made from a failed connection (an HTTP/2 GOAWAY, such
        // as etcd's `too_many_pings`, is ResourceExhausted) says nothing of the
        // request: etcd never answered it.
        etcd_client::Error::GRpcStatus(status) if std::error::Error::source(status).is_some() => false,
        etcd_client::Error::GRpcStatus(status) => {
            // gRPC codes: InvalidArgument, NotFound, AlreadyExists,
            // PermissionDenied, ResourceExhausted, FailedPrecondition,
            // OutOfRange, Unimplemented, Unauthenticated.
            matches!(status.code() as i32, 3 | 5 | 6 | 7 | 8 | 9 | 11 | 12 | 16)
        }
        etcd_client::Error::InvalidArgs(_) | etcd_client::Error::InvalidUri(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    fn refused(status: tonic::Status) -> StorageError {
        StorageError::io_from("etcd refused to read a range for 3", etcd_client::Error::GRpcStatus(status))
    }

    /// A compacted revision is told by etcd's gRPC code, whatever its message says.
    #[rstest]
    #[case::etcds_own_words(
        refused(tonic::Status::out_of_range("etcdserver: mvcc: required revision has been compacted")),
        true
    )]
    #[case::reworded(refused(tonic::Status::out_of_range("revision gone")), true)]
    #[case::another_code_saying_compacted(refused(tonic::Status::not_found("compacted")), false)]
    #[case::no_etcd_error_behind_it(StorageError::io("compacted"), false)]
    fn a_compacted_read_is_told_by_its_code(#[case] error: StorageError, #[case] compacted: bool) {
        assert_eq!(is_compacted(&error), compacted, "{error:?}");
    }

    /// etcd's own refusal is final; the same code made by the client from a lost
    /// connection (a GOAWAY `too_many_pings`, seen in the quorum test) is retried.
    #[test]
    fn a_refusal_is_final_only_when_etcd_answered_it() {
        let answered =
            etcd_client::Error::GRpcStatus(tonic::Status::resource_exhausted("request is too large"));
        assert!(is_definite(&answered));
        let mut lost = tonic::Status::resource_exhausted("h2 protocol error: http2 error");
        lost.set_source(std::sync::Arc::new(std::io::Error::other("GoAway too_many_pings")));
        assert!(!is_definite(&etcd_client::Error::GRpcStatus(lost)));
    }
}
